/// \file mbs_loops.h
/// Closed loops and spring-dampers in the serial core (docs/loops.md): the loop-capable serial
/// baseline (the oracle of every loop solver), redundancy detection, assembly of q0, projection
/// of q and qd onto the loop constraints, closure diagnostics, inverse dynamics with actuated
/// joints, and the point-to-point spring-dampers.
///
/// The serial baseline is the range-space (Schur complement) solution of the KKT system
///     H qdd - G^T lambda = tau - C + J^T f_ext,     G qdd = kappa' - sum D^T abar
/// (G = the closure Jacobian in joint coordinates, seed 000's C = D*B): lambda from
///     A lambda = b,   A = G H^-1 G^T,   b = kappa' - D1^T a1(qdd0) - D2^T a2(qdd0)
/// with qdd0 the tree's solution without loop forces. solver.method = aba applies H^-1 by
/// articulated-body sweeps with unit loop wrenches, crba by the LTDL factor of H. A is factored by
/// a pivoted Cholesky with Jacobi scaling; pivots below solver.rank_tol are redundant closure
/// equations; lambda is the minimum of sum_i A_ii lambda_i^2 among all solutions (unique), qdd is
/// unique.
#ifndef MBS_LOOPS_H
#define MBS_LOOPS_H

#include <stddef.h>
#include <stdio.h>
#include "mbs_dynamics.h"
#include "mbs_report.h"

/// Closure equations from which `mbspar` notes, before the verb, that an iterative method runs one
/// tree solve per equation in every evaluation (docs/loops.md 8)
#define MBS_LOOP_NOTE_EQ 20

/// Allocate the loop solver's workspace (called by mbs_workCreate for models with loops).
mbsErr mbs_loopWorkCreate(const mbsModel *m, struct mbsLoopWork **lw);
/// Free and NULL (NULL is a no-op).
void mbs_loopWorkDestroy(struct mbsLoopWork **lw);
/// After the last evaluation: free the loop workspace's dense n x n and n x nv matrices (A with
/// its factor, M, G, Y) before the verb's results are gathered, so that the results are not held
/// on top of them (docs/scaling.md "Memory"). The multipliers, pivots and statistics stay for the
/// reports; a further loop solve fails (MBS_ERR_INTERNAL). No-op without loops. Local.
void mbs_loopWorkRelease(mbsWork *w);

/// Spring-damper wrenches on the bodies into w->fext (body coordinates at the body origin; zero
/// when the model has none) and w->fext_on = (m->nforce > 0). Needs the position and velocity
/// stages. A spring-damper pulls its two points together with the tension
/// k (l - l0) + c dl/dt along the line between them (zero when they coincide).
void mbs_fwdForces(const mbsModel *m, mbsWork *w);
/// Potential energy of the spring-dampers, sum k (l - l0)^2 / 2 (needs the position stage).
mbsReal mbs_forcePotential(const mbsModel *m, const mbsWork *w);
/// Power of the spring-dampers' dampers, -sum c (dl/dt)^2 (needs position and velocity stages).
mbsReal mbs_forcePower(const mbsModel *m, const mbsWork *w);

/// The loop constraint forces after a tree solve (mbs_aba or mbs_crba with w->fext holding the
/// spring-dampers): lambda into w->lam[nlam ..], the loop wrenches added to w->fext, then w->qdd,
/// acc and jfrc of the closed system (aba: a second ABA with the loop wrenches; crba: qdd0 +
/// H^-1 G^T lambda and RNEA). Needs the position and velocity stages. Writes the statistics of
/// mbs_loopStat.
mbsErr mbs_loopSolve(const mbsModel *m, mbsWork *w);

/// What the distributed loop solve needs from its caller (docs/loops.md 8): every caller owns
/// the bodies [b0, b1) of a partition of the tree; one of them (root) adds the ground sides and
/// the right sides once.
typedef struct {
  void *ctx;
  int b0, b1, root;
  /// the tree solve with the external wrenches w->fext (w->fext_on): q̈, acc, λ of the owned
  /// bodies; collective
  mbsErr (*solve)(void *ctx);
  /// enter (on = 1) or leave (on = 0) homogeneous evaluations (mbsWork.homog): the velocity
  /// stage's terms saved and zeroed, then restored; collective
  mbsErr (*homog)(void *ctx, int on);
  /// in-place sum of n reals over the callers; collective
  mbsErr (*sum)(void *ctx, mbsReal *v, int n);
  /// Optional (NULL: every column of A by a tree solve). The tree solver's interface unknowns
  /// (the lambdas of the joints between callers, nport of them over all callers) as separators
  /// (docs/loops.md 8.1): a solve local to this caller with the external wrenches w->fext and
  /// every interface lambda zero, no communication: acc of the owned bodies; this caller's
  /// condensed interface system added into C (nport x nport, row-major; NULL: not wanted) and its
  /// right side into g (nport); load (nload bodies, NULL: unknown): the bodies w->fext loads;
  /// first (NULL: every body): only the accelerations of the owned bodies b with first[b] <=
  /// lim are needed (first grows from parent to child; mbs_loopColumnOrder). Local.
  mbsErr (*local)(void *ctx, mbsReal *C, mbsReal *g, const int *load, int nload, const int *first,
                  int lim);
  int nport;
} mbsLoopOps;
/// The loop constraint forces with any tree solver, on any partition (the engine's constraint-
/// force methods): after ops->solve has given the tree solution with the spring-dampers in
/// w->fext, and with the position and velocity stages of every loop body current on this caller:
/// the rows of every closure equation, A = G H^-1 G^T column by column from one homogeneous solve
/// per equation with its unit wrench pair (partial sums over the owned sides, summed by
/// ops->sum), the factorization and minimum-norm lambda of mbs_loopSolve, then the final tree
/// solve with the loop wrenches added to w->fext. lambda into w->lam[nlam ..] on every caller;
/// the statistics of mbs_loopStat. Costs nlam_loop + 1 tree solves. With ops->local the columns
/// come from solves local to each caller instead (only the equations with a side on its bodies,
/// the interface lambdas zero), one sum of the partial [C G; G^T L] over the callers, and
/// A = L - G^T C^-1 G on every caller: the interface and the closure equations are the
/// separators of one block elimination; costs 2 tree solves and the local ones.
mbsErr mbs_loopSolveOps(const mbsModel *m, mbsWork *w, const mbsLoopOps *ops);
/// Statistics of the last mbs_loopSolve.
typedef struct {
  int rank;          ///< rank of the closure equations (pivots above solver.rank_tol)
  int nredundant;    ///< nlam_loop - rank
  mbsReal min_pivot; ///< smallest accepted relative pivot
  mbsReal residual;  ///< max |D1^T a1 + D2^T a2 - kappa| after the solve (acceleration closure)
  int nzero;         ///< equations dropped as zero rows before pivoting (mbspar cpa's flop count)
  int nskip; ///< zero rows known in advance (G_i = 0): their unit solves were left out (aba and
             ///< the engine's loop solve; crba: 0)
} mbsLoopStat;
/// The statistics of the last mbs_loopSolve of this workspace.
void mbs_loopStat(const mbsWork *w, mbsLoopStat *st);
/// The closure equations whose unit solve the last loop solve left out (G_i = 0, docs/loops.md
/// 8.1): mask[i] = 1 for them (mask: room for nlam_loop, or NULL); returns their number.
int mbs_loopSkipped(const mbsWork *w, unsigned char *mask);
/// Closure equations that the last factorization found redundant: their indices (0 ..
/// nlam_loop - 1) into \p idx (room for nlam_loop); returns their number.
int mbs_loopRedundant(const mbsWork *w, int *idx);

/// solver.loops resolved for this model and solver.method \p method (docs/loops.md 8.4): 1 when
/// the closure equations are rows of the constraint-force system (rows, or auto, with a method
/// the solver table marks iterative and the equations kept at the assembled q0 independent), 0
/// for the unit solves of mbs_loopSolveOps (and for models without loops).
int mbs_loopUseRows(const mbsModel *m, int method);
/// aba's column order for A = G H^-1 G^T (docs/loops.md 9): ord (nlam_loop) the closure
/// equations by the depth of their deeper body, shallowest first (stable); first (nbody) for each
/// body the first position in ord of an equation with a body in its subtree (nlam_loop: none),
/// so column ord[t] needs pass 3 on the bodies with first <= t only. 1 if out of memory.
int mbs_loopColumnOrder(const mbsModel *m, int *ord, int *first);
/// 1 if \p method takes the loop forces with the closure equations and its cut joints as the
/// separators of one block elimination (schur with solver.loops auto, docs/loops.md 8.1:
/// mbsLoopOps.local). Local.
int mbs_loopSeparators(const mbsModel *m, int method);
/// The rows of every closure equation at the current position and velocity stages of the loop
/// bodies: their directions D (nlam_loop x 12: body1 then body2, body coordinates) returned, the
/// right sides kappa (with Baumgarte) in *kappa. Pointers into the loop workspace.
const mbsReal *mbs_loopRowsCompute(const mbsModel *m, mbsWork *w, const mbsReal **kappa);
/// The zero-row test (docs/loops.md 8.1) over the dofs of the bodies [b0, b1): returns the 2 x
/// nlam_loop partial sums for the caller to sum over a partition, then mbs_loopZeroEnd decides
/// and returns the mask (1: G_i = 0).
mbsReal *mbs_loopZeroBegin(const mbsModel *m, mbsWork *w, int b0, int b1);
const unsigned char *mbs_loopZeroEnd(mbsWork *w);
/// Record the loop forces \p lam (nlam_loop) of a solve with the closure rows in the system: into
/// w->lam[nlam ..] and the statistics of mbs_loopStat (rank: the kept equations; the zero rows
/// redundant; min_pivot NaN, no factorization; the closure residual \p resid).
void mbs_loopRowsDone(const mbsModel *m, mbsWork *w, const mbsReal *lam, mbsReal resid);

/// The closure error at the current position stage (and velocity stage when \p vel is not NULL):
/// max |c| over the position rows (m) into *pos, over the rotation rows into *rot, max |dc/dt| into
/// *vel.
void mbs_loopViolation(const mbsModel *m, const mbsWork *w, mbsReal *pos, mbsReal *rot,
                       mbsReal *vel);

/// Loop wrenches in the ground frame (nloop x 6): the wrench body1 exerts on body2 through the cut
/// joint, [torque about the origin of frame 2, force], from the last mbs_loopSolve.
void mbs_loopWrenchWorld(const mbsModel *m, const mbsWork *w, mbsReal *out);

/// Outcome of a projection (mbs_loopProject).
typedef struct {
  int iterations;          ///< Newton-Raphson iterations on the positions
  int converged;           ///< max |c| <= solver.closure_tol reached
  mbsReal c_pos, c_rot;    ///< closure error before (position and rotation rows)
  mbsReal c_pos1, c_rot1;  ///< after
  mbsReal dq_max, dqd_max; ///< largest change of a coordinate (tangent space) and of a rate
} mbsLoopProj;

/// Project s->q onto c(q) = 0 by Newton-Raphson in the mass metric (seed 000 eq. 26 with the
/// minimum-kinetic-energy correction dq = -H^-1 G^T (G H^-1 G^T)^+ c) at most \p maxit
/// iterations, then s->qd onto G qd = 0 (qd -= H^-1 G^T (G H^-1 G^T)^+ G qd, which never raises
/// the kinetic energy). Leaves the position stage of the result in w. Not converging is not an
/// error (see info->converged). Local.
mbsErr mbs_loopProject(const mbsModel *m, mbsState *s, mbsWork *w, int maxit, mbsLoopProj *info);

/// Assemble the model's q0 and qd0 onto the loops (mbs_loopProject with up to 50 iterations) and
/// record the changes and the rank of the closure equations there in m->loop_asm. MBS_ERR_INPUT
/// when the loops cannot be closed (the message names the worst equation).
mbsErr mbs_loopAssemble(mbsModel *m);

/// Dense closure Jacobian in joint coordinates G (nlam_loop x nv, row-major): G qd = dc/dt, from
/// the directions of the current position stage (seed 000's C = D* B).
void mbs_loopJacobian(const mbsModel *m, const mbsWork *w, mbsReal *G);

/// The loop wrenches of the loop forces \p lam (nlam_loop, as w->lam[nlam ..]) added to w->fext
/// (w->fext_on = 1), with the directions of the current position stage: what a solve with the
/// closure rows in the system (docs/loops.md 8.4) leaves out of w->fext, for a check of the
/// result against the equations of motion (mbs_rnea). Nothing for models without loops.
void mbs_loopAddForces(const mbsModel *m, mbsWork *w, const mbsReal *lam);

/// Inverse dynamics of a loop model at one sample: the coordinates and rates of the dofs with
/// act[d] = 1 (actuated) are given in s->q, s->qd and qdd; the others are solved from the loops
/// (positions by Newton-Raphson from s->q, rates and accelerations from the velocity and
/// acceleration closure); then tau (nv: the actuator forces on the actuated dofs on top of the
/// model's joint forces, 0 elsewhere) and the loop forces lam (nlam_loop, minimum norm) from
/// RNEA(q, qd, qdd) - joint forces = tau + G^T lam. *resid: the part of the inverse dynamics
/// the actuators and loops cannot produce, relative. Writes s->q, s->qd, qdd. MBS_ERR_INPUT
/// when the actuated dofs do not determine the motion or the loops cannot be closed.
mbsErr mbs_loopInverse(const mbsModel *m, mbsState *s, mbsWork *w, const int *act, mbsReal *qdd,
                       mbsReal *tau, mbsReal *lam, mbsReal *resid);

/// "LOOP.EQ" (e.g. "C.rx") for closure equation \p i (0 .. nlam_loop - 1) into buf.
char *mbs_loopEqLabel(const mbsModel *m, int i, char *buf, size_t n);

/// The loops and forces of the model as members of the open JSON object (the report's model
/// section): counts, closure equations, their rank and the redundant ones at the assembled q0,
/// the mobility (nv - rank) and what the assembly changed. Nothing for models without them.
void mbs_loopJsonModel(mbsJson *j, const mbsModel *m);
/// The loop results of the last evaluation (w after mbs_forward) as members of the open JSON
/// object: loop_lambda, loop_wrench (mbs_loopWrenchWorld) and "loops" {rank, redundant,
/// closure residual and violation}.
void mbs_loopJsonResult(mbsJson *j, const mbsModel *m, const mbsWork *w);
/// The loop results of an evaluation kept apart from its workspace (a distributed loop model's
/// accel frees the engine before rank 0 writes the report): the same members as
/// mbs_loopJsonResult.
typedef struct {
  mbsReal *lam, *wr; ///< (nlam_loop), (nloop x 6) loop_lambda, loop_wrench
  int *red, nred;    ///< the redundant equations, ascending
  mbsLoopStat st;    ///< mbs_loopStat
  mbsReal viol[3];   ///< mbs_loopViolation: position, rotation, velocity
} mbsLoopSnap;
/// Take the snapshot of w's last evaluation (allocates; an empty one without loops). Local.
mbsErr mbs_loopSnapTake(const mbsModel *m, const mbsWork *w, mbsLoopSnap *s);
/// Write it as mbs_loopJsonResult writes w's (nothing for an empty one).
void mbs_loopSnapJson(mbsJson *j, const mbsModel *m, const mbsLoopSnap *s);
void mbs_loopSnapFree(mbsLoopSnap *s);
/// The summary lines of `mbspar check` for the loops and forces.
void mbs_loopPrint(FILE *f, const mbsModel *m);

#endif
