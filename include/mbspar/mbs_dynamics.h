/// \file mbs_dynamics.h
/// The serial dynamics pipeline and its workspace.
///
/// Stages (each reads the model and state, writes the workspace):
///   mbs_fwdPosition -> mbs_fwdVelocity -> (mbs_aba | mbs_crba | constraint-force solve)
/// mbs_rnea is the inverse dynamics. ABA is the reference of every other method: mbs_aba the
/// optimised kernel, itself tested against the plain mbs_abaRef.
/// Gravity enters as a fictitious base acceleration a_ground = [0; -g], so body accelerations in
/// the workspace include that offset while joint forces and wrenches are the true ones.
#ifndef MBS_DYNAMICS_H
#define MBS_DYNAMICS_H

#include "mbs_model.h"
#include "mbs_solver.h"
#include "mbs_state.h"
#include "mbs_timer.h"

/// Solver statistics of the last constraint-force solve.
typedef struct {
  int method;            ///< mbsSolverMethod actually used
  int iterations;        ///< iterations of the last solve
  int reason;            ///< mbsReason
  double residual;       ///< final relative residual (or change) of the last solve
  long evals;            ///< evaluations so far
  long total_iterations; ///< sum of iterations over all evaluations
  long nonconverged;     ///< evaluations that stopped without converging
  int restarts;          ///< jcg, chebyshev: restarts of the last solve from b - A x (mbsCgTrace)
  long total_restarts;   ///< jcg, chebyshev: restarts over all solves (unit solves included)
  long floored;          ///< schur: port-system pivots raised to the rounding floor, all
                         ///< evaluations (this rank; docs/formulation.md 4.7)
  int iface_rounds;      ///< schur: rounds of the last interface solve (scan or contraction
                         ///< rounds, the component-tree pass's depth seen on this rank; 4.4)
} mbsSolveStat;

/// Reals per body in mbsWork.abar.
#define MBS_ABAR 29
/// Offset of the articulated bias pA in a body's abar record (after the 21 packed inertia
/// entries, spatial.h sym6).
#define MBS_ABAR_PA 21

typedef struct mbsWork {
  // written by mbs_fwdPosition
  mbsReal *xpar; ///< (nbody x 12) Plücker transform parent -> body (E, r)
  mbsReal *xmat; ///< (nbody x 9) body orientation in the ground frame (body -> ground)
  mbsReal *xpos; ///< (nbody x 3) body origin in the ground frame
  mbsReal *sdof; ///< (nv x 6) joint motion subspace columns, body coordinates

  // written by mbs_fwdVelocity
  mbsReal *cvel;  ///< (nbody x 6) body spatial velocity, body coordinates
  mbsReal *cacc;  ///< (nbody x 6) velocity-product acceleration c_i = c_J + v_i x v_J
  mbsReal *cbias; ///< (nbody x 6) v_i x* I_i v_i
  mbsReal *qfrc;  ///< (nv) total applied joint force: constant + spring + damper + state tau

  // written by mbs_abaRef (U, Dinv, u also by mbs_aba for joints without a specialised kernel)
  mbsReal *IA;   ///< (nbody x 36) articulated inertias
  mbsReal *pA;   ///< (nbody x 6) articulated bias forces
  mbsReal *U;    ///< (nv x 6) IA S
  mbsReal *Dinv; ///< (nbody x 36) inverse of S^T IA S (dofnum x dofnum, packed)
  mbsReal *u;    ///< (nv) tau - S^T pA

  // written by mbs_aba
  mbsReal *abar; ///< (nbody x MBS_ABAR) per body: articulated inertia (21, packed symmetric as
                 ///< spatial.h sym6), articulated bias force (6), u and 1/D (axis-specialised
                 ///< revolute joints)

  // written by every forward-dynamics method
  mbsReal *qdd;  ///< (nv) joint accelerations
  mbsReal *acc;  ///< (nbody x 6) body accelerations (with the gravity offset)
  mbsReal *jfrc; ///< (nbody x 6) wrench the parent exerts on the body through the joint,
                 ///< body coordinates at the body origin
  mbsReal *lam;  ///< (nlam + nlam_loop) constraint-force components: T^T jfrc of the tree
                 ///< joints, then the loops' closure forces (mbs_loopSolve)

  // external wrenches on the bodies (body coordinates at the body origin): the spring-dampers
  // (mbs_fwdForces), plus the loop constraint wrenches after mbs_loopSolve. mbs_aba and mbs_rnea
  // subtract them from the bias only while fext_on is set (mbs_forward sets it for models with
  // forces or loops), so tree models are untouched.
  mbsReal *fext; ///< (nbody x 6)
  int fext_on;
  /// A serial method's own workspace (the solver table's work hook), freed by ext_free.
  void *ext;
  void (*ext_free)(void **ext);
  /// Homogeneous evaluation (the unit solves of the distributed loop solver, docs/loops.md 8):
  /// while set, the velocity stage writes zero velocity-product terms, bias forces and joint
  /// forces, the solvers leave gravity out, start from zero and keep no warm-start history, so a
  /// solve gives the response to w->fext alone.
  int homog;
  /// The tree solve's matrix is the one of the last solve (same positions: the loop solver's
  /// unit solves and final solve, docs/loops.md 8): schur may redo only the right side's passes
  /// (mbs_schurRhsOnly).
  int reuse;
  struct mbsLoopWork *loop; ///< the loop solver's workspace (models with loops; loops.c)

  // written by mbs_crba (allocated by mbs_workEnableCrba)
  int crba_ready;
  mbsReal *M;     ///< (nv x nv) joint-space inertia, then its LTDL factor
  mbsReal *Ic;    ///< (nbody x 36) composite inertias
  mbsReal *qbias; ///< (nv) bias forces C(q, qd)

  // written by mbs_rnea
  mbsReal *frc;      ///< (nbody x 6) body wrenches of the inverse dynamics
  mbsReal *qfrc_inv; ///< (nv) joint forces of the inverse dynamics

  // diagnostics
  mbsSolveStat stat;
  mbsTimer timer[MBS_TIMER_COUNT];
} mbsWork;

/// Allocate the workspace for \p m (everything the O(n) methods need).
mbsErr mbs_workCreate(const mbsModel *m, mbsWork **w);
/// Allocate the dense joint-space inertia (nv^2 reals) for mbs_crba.
mbsErr mbs_workEnableCrba(const mbsModel *m, mbsWork *w);
/// What m->opt.solver needs in a serial workspace beyond mbs_workCreate (the solver table's
/// dense_inertia: mbs_workEnableCrba; nothing for the others).
mbsErr mbs_workEnableMethod(const mbsModel *m, mbsWork *w);
/// Free and NULL (NULL is a no-op).
void mbs_workDestroy(mbsWork **w);

/// Joint transforms, body poses, motion subspaces. Writes: w->xpar, xmat, xpos, sdof.
void mbs_fwdPosition(const mbsModel *m, const mbsState *s, mbsWork *w);
/// Per-body part of mbs_fwdPosition for body b (parent data must be present).
void mbs_bodyPosition(const mbsModel *m, const mbsReal *q, mbsWork *w, int b);
/// The two halves of mbs_bodyPosition: mbs_bodyJoint writes w->xpar and sdof of body b (its joint
/// alone); mbs_bodyPose its ground pose xmat, xpos from the parent's pose and xpar (parent pose
/// and b's joint present). The parallel engine finishes the poses below a ghost parent this way.
void mbs_bodyJoint(const mbsModel *m, const mbsReal *q, mbsWork *w, int b);
void mbs_bodyPose(const mbsModel *m, mbsWork *w, int b);
/// mbs_bodyPose of the bodies b0 .. b1 - 1 in order.
void mbs_bodyPoses(const mbsModel *m, mbsWork *w, int b0, int b1);
/// Body velocities, velocity-product terms, bias forces, applied joint forces.
/// Writes: w->cvel, cacc, cbias, qfrc.
void mbs_fwdVelocity(const mbsModel *m, const mbsState *s, mbsWork *w);
/// Per-body part of mbs_fwdVelocity for body b (parent velocity must be present).
void mbs_bodyVelocity(const mbsModel *m, const mbsState *s, mbsWork *w, int b);

/// The ground's spatial acceleration that adds gravity to every body: [0; -g] (zero without it).
void mbs_baseAccel(const mbsModel *m, int gravity, mbsReal a0[6]);

/// ABA per body (the kernels of mbs_aba, for callers that run it on part of a model, like the
/// port-free subtrees of solver.method = schur). mbs_abaBodyInit: b's record starts as the rigid
/// body (inertia, bias). mbs_abaBodyBack: pass 2 for b (joint projection; with a parent, its
/// articulated inertia and bias are added to the parent's record); returns 1, or -1 with the
/// error set if b's joint block is singular. mbs_abaBodyFwd: pass 3 for b given its parent's
/// acceleration \p ap (writes w->acc, qdd, jfrc of b).
void mbs_abaBodyInit(const mbsModel *m, mbsWork *w, int b);
int mbs_abaBodyBack(const mbsModel *m, mbsWork *w, int b);
/// The right side's part of pass 1 and 2, with the articulated inertia and 1/D (or U, D^-1 of the
/// generic record) of the last full pass kept (the same positions): pA restarts as
/// the bias (minus f_ext), u = tau - S^T pA, and with a parent pa = pA + Ia c + U u / D goes to
/// the parent's pA (c = 0 when w->homog: Ia c skipped). Flops: mbs_flopAbaRhs.
void mbs_abaBodyInitRhs(const mbsModel *m, mbsWork *w, int b);
void mbs_abaBodyRhs(const mbsModel *m, mbsWork *w, int b);
/// Pass 1 and 2 split in two for a revolute joint about a coordinate axis with a parent (the
/// overlapped factor of schur, docs/formulation.md 4.4): mbs_abaBodyInitInertia starts b's
/// articulated inertia alone (mbs_abaBodyInitRhs its bias); mbs_abaBodyBackInertia, the part that
/// reads positions alone: 1/D, and X^T Ia X added to the parent's articulated inertia (returns 0,
/// nothing handed on, if D is not positive; no error set); it leaves MBS_ABA_STASH reals in
/// \p stash for mbs_abaBodyBackBias, the rest: u, and X^T pa added to the parent's pA. Together
/// the same arithmetic as mbs_abaBodyBack (results bitwise equal) and the same flops.
#define MBS_ABA_STASH 20
void mbs_abaBodyInitInertia(const mbsModel *m, mbsWork *w, int b);
int mbs_abaBodyBackInertia(const mbsModel *m, mbsWork *w, int b, mbsReal *stash);
void mbs_abaBodyBackBias(const mbsModel *m, mbsWork *w, int b, const mbsReal *stash);
/// u = 0 for body b's joint (the value pass 3 reads; a bias pass along a path leaves the others'
/// untouched, docs/loops.md 8.1a). No flops.
void mbs_abaBodyZeroU(const mbsModel *m, mbsWork *w, int b);
void mbs_abaBodyFwd(const mbsModel *m, mbsWork *w, int b, const mbsReal *ap);
/// Spikes (solver.method = schur, docs/formulation.md 4.6): an unknown wrench -G pi (pi: at most
/// MBS_SPIKE_LD values) on a body of a path adds P pi to the articulated bias of every body from
/// there to the path's root; every joint type (axis-specialised kernels for revolute joints about
/// a coordinate axis, ABA's generic record otherwise). mbs_abaSpike, after mbs_abaBodyBack of path
/// body b, on the first nq (1 .. MBS_SPIKE_LD: the port's constraint count) columns only:
/// Th (row-major, leading dimension MBS_SPIKE_LD; its lower triangle, a >= q, alone)
/// += P^T S D^-1 S^T P, gam += P^T e (e: b's acceleration for a zero parent acceleration and
/// pi = 0), and P becomes the parent's, X^T (P - U D^-1 S^T P); P is stored by rows (6 rows of
/// MBS_SPIKE_LD, the columns from nq on untouched). Flops: mbs_flopSpikeBody.
/// mbs_abaSpikeVec: the same for one column p = P pi.
/// mbs_abaBodyFwdSpike: mbs_abaBodyFwd with the spike p = P pi of b; mbs_abaBodyFwdSpikeSp the
/// same with S^T p given in \p sp (dofnum values; NULL: from p), for a light leaf whose S^T p is
/// known more precisely than its rounded dot product (docs/formulation.md 4.9).
#define MBS_SPIKE_LD 6
void mbs_abaSpike(const mbsModel *m, const mbsWork *w, int b, int nq, mbsReal *P, mbsReal *Th,
                  mbsReal *gam);
/// mbs_abaSpike in two parts (axis-specialised revolute joints; the overlapped factor):
/// mbs_abaSpikeInertia (after mbs_abaBodyBackInertia) updates P and Th and keeps P as it was at
/// b (6 rows of MBS_SPIKE_LD) in \p Pold; mbs_abaSpikeBias (after mbs_abaBodyBackBias) adds
/// Pold^T e to gam. Flops: mbs_flopSpikeSpecBias and the rest of mbs_flopSpikeSpec.
void mbs_abaSpikeInertia(const mbsModel *m, const mbsWork *w, int b, int nq, mbsReal *P,
                         mbsReal *Th, mbsReal *Pold);
void mbs_abaSpikeBias(const mbsModel *m, const mbsWork *w, int b, int nq, const mbsReal *Pold,
                      mbsReal *gam);
void mbs_abaSpikeVec(const mbsModel *m, const mbsWork *w, int b, mbsReal *p);
void mbs_abaBodyFwdSpike(const mbsModel *m, mbsWork *w, int b, const mbsReal *ap, const mbsReal *p);
void mbs_abaBodyFwdSpikeSp(const mbsModel *m, mbsWork *w, int b, const mbsReal *ap,
                           const mbsReal *p, const mbsReal *sp);
/// mbs_abaSpike for the spikes of a tree of paths (several ports: nq columns of any number, row
/// x of P at P + x ld, Th (nq x nq) at Th + a ld, gam (nq); work: 12 nq scratch values), on any
/// joint's record. Flops: mbs_flopSpikeCols.
void mbs_abaSpikeCols(const mbsModel *m, const mbsWork *w, int b, int nq, int ld, mbsReal *P,
                      mbsReal *Th, mbsReal *gam, mbsReal *work);

/// Articulated-body algorithm (Featherstone), the optimised kernel of solver.method = aba: joint
/// accelerations from the current position and velocity stages (src/aba.c: packed articulated
/// inertias, kernels specialised for revolute joints about a coordinate axis).
/// Writes: w->abar (and U, Dinv, u for the other joints), qdd, acc, jfrc.
mbsErr mbs_aba(const mbsModel *m, mbsWork *w);
/// The reference articulated-body algorithm: plain 6 x 6 algebra for every joint, the oracle
/// mbs_aba is tested against (same results to rounding). Writes: w->IA, pA, U, Dinv, u, qdd, acc,
/// jfrc.
mbsErr mbs_abaRef(const mbsModel *m, mbsWork *w);
/// Composite-rigid-body mass matrix, bias by RNEA, LTDL solve (nonrecursive forward dynamics).
/// Writes: w->M, Ic, qbias, qdd, acc, jfrc.
mbsErr mbs_crba(const mbsModel *m, mbsWork *w);
/// x <- H^-1 x with the LTDL factor that mbs_crba left in w->M (nv values).
void mbs_crbaSolve(const mbsModel *m, const mbsWork *w, mbsReal *x);
/// Recursive Newton–Euler inverse dynamics: joint forces for accelerations \p qdd (NULL = zero)
/// at the current position and velocity stages, with the external wrenches w->fext when
/// w->fext_on. Writes: w->acc, frc, qfrc_inv.
void mbs_rnea(const mbsModel *m, mbsWork *w, const mbsReal *qdd);

/// Forward dynamics with the serial method m->opt.solver (aba, crba): runs every stage; models
/// with loops get the loop constraint forces by mbs_loopSolve (docs/loops.md), models with
/// spring-dampers their wrenches by mbs_fwdForces. Writes w->qdd and everything the method
/// writes.
mbsErr mbs_forward(const mbsModel *m, mbsState *s, mbsWork *w);

/// Kinetic energy (needs position and velocity stages).
mbsReal mbs_kineticEnergy(const mbsModel *m, const mbsWork *w);
/// Potential energy: gravity (needs the position stage) plus joint springs and spring-dampers.
mbsReal mbs_potentialEnergy(const mbsModel *m, const mbsState *s, const mbsWork *w);

/// q_out = q "+" h*qd on the configuration manifold (quaternions are rotated, not added).
void mbs_integratePos(const mbsModel *m, const mbsReal *q, const mbsReal *qd, mbsReal h,
                      mbsReal *qout);

/// Joint wrenches in the ground frame, [torque about the joint origin, force] per body
/// (nbody x 6), from w->jfrc and w->xmat.
void mbs_jointWrenchWorld(const mbsModel *m, const mbsWork *w, mbsReal *out);

/// Orthonormal basis T of the constraint-force directions of body b's joint: body_lamnum[b]
/// columns of 6 reals, T^T S = 0, a smooth function of q (needs the position stage; \p w may be
/// NULL unless the joint is universal). The directions themselves live in the joint module
/// (the complement of its row of the joint table, mbs_joint.h).
void mbs_bodyComplement(const mbsModel *m, const mbsWork *w, int b, mbsReal *T);

/// Constraint-force components lam = T^T jfrc for every joint. Writes: w->lam.
void mbs_constraintLambda(const mbsModel *m, mbsWork *w);

#endif
