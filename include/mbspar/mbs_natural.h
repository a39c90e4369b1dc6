/// \file mbs_natural.h
/// The natural-coordinate formulation of seed 004 (Kraus, Winckler & Bock 2001; docs/natural.md,
/// ../shared/design.md section 10): every body's state is p = (o, e1, e2, e3), its mass matrix
/// is constant, rigidity and joints are constraints, and the accelerations solve the augmented
/// system [M Gᵀ; G 0] [p̈; λ] = [f; γ].
///
/// This first part is the dense reference: the system of a whole (replicated) tree model is built
/// from the position and velocity stages of the joint formulation, solved by dense LU with
/// partial pivoting (O(n³): small models only, n up to a few hundred bodies), and q̈ is recovered
/// from p̈. It checks the formulation (the mass matrix, the rigid-body constraints and the joint
/// constraints of every joint type with their Jacobians and γ) against ABA; the O(n) block-sparse
/// factorisation, loops, projection and the verbs come next (issue 33).
#ifndef MBSPAR_MBS_NATURAL_H
#define MBSPAR_MBS_NATURAL_H

#include "mbspar/mbs_dynamics.h"
#include "mbspar/mbs_model.h"
#include "mbspar/mbs_state.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Sizes and checks of one natural-coordinate evaluation.
typedef struct {
  int np;              ///< natural coordinates (12 per body)
  int nrigid;          ///< rigid-body constraints (6 per body)
  int njoint;          ///< joint constraints (6 - nv per joint, cut joints included: nlam +
                       ///< nlam_loop of the joint formulation)
  int nredundant;      ///< closure rows dropped as dependent (constraint partitioning)
  double vel_residual; ///< max |G ṗ| / max |ṗ|: the velocities satisfy the constraints (the
                       ///< accelerations of two equivalent constraint sets agree only then)
  double acc_residual; ///< max |G p̈ - γ| / max(|γ|, 1): the constraints at acceleration level
  double qdd_residual; ///< max over bodies of |a_b - X a_p - c_b - S q̈_b| / max(|a|, |g|): p̈
                       ///< is a motion of the tree (docs/natural.md 4)
} mbsNaturalInfo;

/// Joint accelerations of the whole model \p m (loops, spring-dampers and joint forces as in the
/// joint formulation) at the state \p s by the natural-coordinate formulation, dense reference.
/// The tree's system is factored by LU; the cut joints' rows are added in the range space with a
/// pivoted Cholesky that drops dependent closure rows below solver.rank_tol (constraint
/// partitioning). Runs the position and velocity stages into \p w (w->acc: the bodies' true
/// accelerations, without the gravity offset), writes \p qdd (nv) and, when \p info is not
/// NULL, the sizes and residuals. Allocates (not for the step loop).
/// MBS_ERR_UNSUPPORTED for distributed-memory (subset) models; MBS_ERR_NUMERIC when the tree's
/// augmented matrix is singular.
mbsErr mbs_naturalAccelDense(const mbsModel *m, const mbsState *s, mbsWork *w, mbsReal *qdd,
                             mbsNaturalInfo *info);

/// Workspace of the O(n) natural-coordinate solver (src/natural_tree.c): the bodies' blocks and
/// factors, the joints' rows, the cut joints' rows and unit responses. Opaque.
typedef struct mbsNaturalWork mbsNaturalWork;

/// Allocates the workspace of \p m (whole models only: MBS_ERR_UNSUPPORTED for a subset) and
/// computes the constant mass matrices. About 7 kB per body.
mbsErr mbs_naturalWorkCreate(const mbsModel *m, mbsNaturalWork **nw);
/// Frees it; sets *nw = NULL.
void mbs_naturalWorkDestroy(mbsNaturalWork **nw);

/// mbs_naturalAccelDense in O(n) (seed 004 §6): the bodies eliminated from the leaves, each
/// body's 18 x 18 block absorbing its children's joints, the cut joints in the range space with
/// constraint partitioning (O(n) per closure row). No allocation. \p info's acc_residual and
/// vel_residual are NAN (the dense reference computes them).
mbsErr mbs_naturalAccel(const mbsModel *m, const mbsState *s, mbsWork *w, mbsNaturalWork *nw,
                        mbsReal *qdd, mbsNaturalInfo *info);

/// Joint coordinates from natural coordinates (src/natural_coords.c, docs/natural.md 11): q (nq)
/// and q̇ (nv) of every tree joint of \p m from p, ṗ (12 per body, o then e1, e2, e3), the inverse
/// of the joint formulation's forward kinematics for every joint type. Angles are the branch
/// nearest \p qref's, quaternions take its sign (\p qref NULL: angles in (-π, π], w >= 0).
/// Pure, no allocation.
void mbs_naturalJointCoords(const mbsModel *m, const double *p, const double *pd,
                            const mbsReal *qref, mbsReal *q, mbsReal *qd);

/// p and ṗ (12 per body) of the joint state \p s: the position and velocity stages into \p w,
/// then o = xpos, e_k = the columns of xmat, ȯ and ė_k = ω × e_k (docs/natural.md 1).
void mbs_naturalFromJoint(const mbsModel *m, const mbsState *s, mbsWork *w, double *p, double *pd);

/// Motion in natural coordinates (src/natural_run.c, docs/natural.md 7): the state is (p, ṗ),
/// the joint rows are recorded at the assembled initial state, RK4 steps (or adaptive
/// Dormand–Prince 5(4) with a projection tolerance) on the dense system, projection onto
/// g(p) = 0 and G ṗ = 0. Small models; gravity, spring-dampers and joint forces, springs and
/// dampers (functions of q, q̇ recovered from p, ṗ; no state input τ). Opaque.
typedef struct mbsNaturalSim mbsNaturalSim;

/// Counters of a natural-coordinate run (accumulated since mbs_naturalSimCreate).
typedef struct {
  long steps;       ///< accepted steps (mbs_naturalSimAdvance)
  long rejected;    ///< rejected steps
  long evals;       ///< evaluations of p̈ (one factorisation of the augmented system each)
  long projections; ///< projections triggered by the projection tolerance
  long corrections; ///< Gauss–Newton corrections of p (all projections, also the caller's)
  double t;         ///< time integrated by mbs_naturalSimAdvance
  double gmax;      ///< largest max |g(p)| seen after an accepted step, before any projection
  double gvmax;     ///< the same for max |G ṗ|
} mbsNaturalSimStats;

/// The simulation of \p m from the state \p st (assembled: loops closed), using \p w for the
/// initial kinematics. Its evaluations and projections use the O(n) block elimination
/// (docs/natural.md 5, 7, 12).
mbsErr mbs_naturalSimCreate(const mbsModel *m, const mbsState *st, mbsWork *w, mbsNaturalSim **ns);
/// The same with \p dense = 1: the dense system of docs/natural.md 4 instead (O(n³) per
/// evaluation, O(n²) memory: the reference of the O(n) path in tests, small models only).
mbsErr mbs_naturalSimCreateOpt(const mbsModel *m, const mbsState *st, mbsWork *w, int dense,
                               mbsNaturalSim **ns);
/// Frees it; sets *ns = NULL.
void mbs_naturalSimDestroy(mbsNaturalSim **ns);
/// One classical Runge–Kutta step of length \p h on (p, ṗ) (no projection).
mbsErr mbs_naturalSimStep(mbsNaturalSim *ns, double h);
/// Projects p onto g(p) = 0 (Gauss–Newton, at most \p maxit corrections, until max |g| <= \p tol)
/// and ṗ onto G ṗ = 0; returns max |g| before the last correction.
double mbs_naturalSimProject(mbsNaturalSim *ns, double tol, int maxit);
/// Integrates by \p T from the current state with adaptive Dormand–Prince 5(4) on (p, ṗ)
/// (docs/natural.md 7.1): a step is accepted when the RMS of its error estimate over
/// tol (1 + |y|) is at most 1 (absolute for |y| < 1), the next step is h · min(5, max(0.2,
/// 0.9 err^(-1/5))), and the last step ends exactly at T. After each accepted step the
/// residuals max |g(p)| and max |G ṗ| are checked: if either exceeds \p ptol (the projection
/// tolerance) p and ṗ are projected (to max |g| <= 1e-13, at most 8 corrections) and the next
/// step starts with a fresh evaluation (otherwise the last stage is reused). Keeps its step size
/// between calls. MBS_ERR_INPUT for T < 0 or a tolerance <= 0; MBS_ERR_NUMERIC when the step
/// size falls below 1e-14 T, after 10^6 step attempts in one call, or when the augmented matrix
/// is singular.
mbsErr mbs_naturalSimAdvance(mbsNaturalSim *ns, double T, double tol, double ptol);
/// q (nq) and q̇ (nv) of the current (p, ṗ) (mbs_naturalJointCoords, angles continued from the
/// last accepted state's); either may be NULL.
void mbs_naturalSimJoint(mbsNaturalSim *ns, mbsReal *q, mbsReal *qd);
/// q̈ (nv) at the current (p, ṗ): one evaluation of p̈ (joint forces, springs and dampers at the
/// recovered q, q̇), then q̈ from p̈ (docs/natural.md 4).
mbsErr mbs_naturalSimAccel(mbsNaturalSim *ns, mbsReal *qdd);
/// One accepted adaptive step (as mbs_naturalSimAdvance's, with its projection tolerance) of at
/// most \p hmax (the step ends exactly at hmax when the next step would reach it); *hdone gets
/// its length. The next step's size is kept (mbs_naturalSimGetStep).
mbsErr mbs_naturalSimStepAdaptive(mbsNaturalSim *ns, double hmax, double tol, double ptol,
                                  double *hdone);
/// Sets (p, ṗ) from the joint state (q, q̇) by the forward kinematics (mbs_naturalFromJoint); the
/// recorded rows stay those of the creation; angles continue from q; the next adaptive step
/// evaluates its first stage afresh. `mbspar run` sets each step's start so, which makes a
/// checkpoint of (q, q̇) and the step size a complete state of the natural run (docs/natural.md 12).
void mbs_naturalSimSetJoint(mbsNaturalSim *ns, const mbsReal *q, const mbsReal *qd);
/// The size of the next adaptive step (0: not chosen yet), and its setter.
double mbs_naturalSimGetStep(const mbsNaturalSim *ns);
void mbs_naturalSimSetStep(mbsNaturalSim *ns, double h);
/// A solver of the O(n) evaluations in place of the run's own (the distributed one, parallel/
/// natural_par.c): called with the workspace assembled at the stage (p, ṗ, the forces of every
/// body, the recorded rows replayed), it leaves the whole p̈ (12 nb) in its second argument. NULL:
/// the run's own whole-model solve. Every process of a distributed run calls it at the same
/// evaluations (their runs are replicas), so it may be collective.
/// The projection's corrections likewise (cfn, not NULL): called with the K = I workspace replayed
/// at the iterate and the rows' right sides v (the layout of mbs_naturalPartCorrectLocal), it
/// leaves Δx = −Gᵀ (G Gᵀ)⁺ v (12 nb) in its last argument.
typedef mbsErr (*mbsNaturalSolveFn)(void *ctx, mbsNaturalWork *nw, double *pdd);
/// Makes the run's two workspaces (the evaluations' and the projection's) part \p part of
/// mbs_naturalPartSplit's \p nparts parts before the steps (the callbacks then allocate nothing).
mbsErr mbs_naturalSimSetParts(mbsNaturalSim *ns, int nparts, int part);
typedef mbsErr (*mbsNaturalCorrectFn)(void *ctx, mbsNaturalWork *nw, const double *v, double *dx);
void mbs_naturalSimSetSolve(mbsNaturalSim *ns, mbsNaturalSolveFn fn, mbsNaturalCorrectFn cfn,
                            void *ctx);
/// The counters so far.
void mbs_naturalSimGetStats(const mbsNaturalSim *ns, mbsNaturalSimStats *st);
/// Total energy: kinetic ½ ṗᵀ M ṗ, potential of gravity, of the spring-dampers and of the joint
/// springs (at the last accepted q).
double mbs_naturalSimEnergy(const mbsNaturalSim *ns);
/// max |g(p)| over the rigid-body, joint and closure constraints at the current p.
double mbs_naturalSimViolation(mbsNaturalSim *ns);
/// The current p (and ṗ in *pd).
const double *mbs_naturalSimState(const mbsNaturalSim *ns, const double **pd);

/// The O(n) solver's workspace of \p w (the solver table's row for model.formulation =
/// natural: made at the first call, kept in w->ext).
mbsErr mbs_naturalWorkOf(const mbsModel *m, mbsWork *w, mbsNaturalWork **nw);

/// The O(n) solver distributed over parts (src/natural_part.c, docs/natural.md 13). Part r of
/// nparts eliminates the bodies [starts[r], starts[r + 1]) as a forest of its own: a joint whose
/// parent lies on an earlier part (a part-cut joint) leaves the forest, and its rows join the cut
/// joints' rows as interface rows, added in the range space. The interface matrix S = L K⁻¹ Lᵀ
/// and its right side are sums of the parts' contributions (each part only its bodies' unit
/// responses); the caller sums them (MPI: an allreduce), every part factors S alike (pivoted
/// Cholesky, solver.rank_tol: constraint partitioning) and corrects its bodies' p̈.
typedef struct {
  int nparts, part;  ///< the parts and this one
  int b0, b1;        ///< this part's bodies
  int nif;           ///< interface rows: the part-cut joints' and the cut joints' (loops)
  int nif_cut;       ///< of which the part-cut joints'
  int rank;          ///< rank of S at the last evaluation (nif - rank rows dropped as dependent)
  long evals;        ///< evaluations
  long factored;     ///< bodies this part factored, over all evaluations
  long unit_solves;  ///< solves over this part's forest beyond its own (one per interface row
                     ///< touching it that is not on a root, one for the roots' correction)
  long root_solves;  ///< O(1) solves at a forest root (a rank-cut row on a root of this part)
  const int *starts; ///< (nparts + 1) every part's first body (the workspace's)
} mbsNaturalPartInfo;

/// A balanced split of nbody bodies into nparts contiguous ranges: starts (nparts + 1). Pure.
void mbs_naturalPartStarts(int nbody, int nparts, int *starts);
/// The split the solver uses: contiguous ranges weighted by a cost model of each part's work (its
/// factorisation and its solves, counted on the balanced split; docs/natural.md 13). The same
/// on every rank (a function of the model). Allocates scratch.
mbsErr mbs_naturalPartSplit(const mbsModel *m, int nparts, int *starts);
/// Makes \p nw part \p part of the split \p starts (NULL: mbs_naturalPartSplit); allocates the
/// interface rows' arrays (whole models only). Call once, before the evaluations.
mbsErr mbs_naturalPartSet(const mbsModel *m, mbsNaturalWork *nw, int nparts, int part,
                          const int *starts);
/// This part's contributions at the state \p s: the position and velocity stages into \p w,
/// the assembly, the factorisation of its bodies, its forest's solution and the unit responses
/// of the interface rows that touch it. *buf (n = nif² + nif doubles: S row-major, then the right
/// side) receives the contributions, to be summed over the parts in place. No allocation.
mbsErr mbs_naturalPartLocal(const mbsModel *m, const mbsState *s, mbsWork *w, mbsNaturalWork *nw,
                            double **buf, int *n);
/// The same for an assembly already made by the caller (a natural run, src/natural_run.c: p, ṗ
/// and the forces of every body in the workspace's state, the recorded rows replayed into it):
/// the factorisation of this part's bodies, its forest's solution, the interface rows' responses
/// and the contributions into *buf. No allocation.
mbsErr mbs_naturalPartLocalAt(const mbsModel *m, mbsNaturalWork *nw, double **buf, int *n);
/// The projection's correction by parts (a natural run's K = I workspace, the rows replayed at
/// the projected p): the right sides −v on the rows (v: 6 per body rigid, 6 slots per body for its
/// joint, the cut joints'; src/natural_runon.c's layout), zero on p̈; the factorisation, responses
/// and contributions as mbs_naturalPartLocalAt. After the sum and mbs_naturalPartFinish the
/// gathered result is Δx = −Gᵀ (G Gᵀ)⁺ v. No allocation.
mbsErr mbs_naturalPartCorrectLocal(const mbsModel *m, mbsNaturalWork *nw, const double *v,
                                   double **buf, int *n);
/// After the sum of the buffers: factors S (every part alike), μ, and this part's p̈ corrected.
/// *local, *n: this part's p̈ (12 per body of [b0, b1)); *full: a 12 nb array for the gather of
/// every part's p̈ (to be given to mbs_naturalPartGiven). MBS_ERR_NOMEM (the factor's scratch).
mbsErr mbs_naturalPartFinish(const mbsModel *m, mbsNaturalWork *nw, const double **local, int *n,
                             double **full);
/// The whole p̈ (full, as gathered) for the next evaluation of \p nw's model (mbs_forward under
/// natural, or mbs_naturalAccel): it recovers q̈ and the reports from it instead of solving.
void mbs_naturalPartGiven(mbsNaturalWork *nw);
/// The counters (zero for a workspace never distributed).
void mbs_naturalPartGetInfo(const mbsNaturalWork *nw, mbsNaturalPartInfo *info);

#ifdef __cplusplus
}
#endif
#endif
