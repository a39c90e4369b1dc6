/// \file mbs_cfs.h
/// The constraint-force system of seed 002 (Sharf & D'Eleuterio 1993), see docs/formulation.md:
/// per-body Newton–Euler equations with the joint constraint wrenches T_i lam_i as unknowns give
/// A lam = b, one block row per joint, A = J^T M J symmetric positive definite.
///
/// The operator is applied matrix-free in three sweeps over a body range (global body indices):
///   up:   wr_i = T_i x_i (+ F_i tau_i);  up_i = X_ip^T wr_i         (child -> parent, 6 reals)
///   mid:  wr_i += (-v_i x* I_i v_i) - sum_children up_c;  acc_i = I_i^{-1} wr_i
///   down: y_i = T_i^T (acc_i - X_ip acc_p)                        (parent -> child, 6 reals)
/// Between the sweeps the parallel layer exchanges the up / acc 6-vectors of cut tree edges.
/// The diagonal blocks D_i = T_i^T (M_i + X_ip M_p X_ip^T) T_i are local (M = I^{-1} is a model
/// constant). Explicit off-diagonal blocks (parent and sibling couplings) are assembled on demand
/// for the direct solver; whole block rows (mbs_cfsRow) for the PETSc backend. The solvers are
/// rows of the solver table (mbs_solvertype.h, docs/code.md).
#ifndef MBS_CFS_H
#define MBS_CFS_H

#include "mbs_dynamics.h"

/// Segments one Chebyshev solve ran (solver_chebyshev.c), for cpa to rebuild its graph: segment j
/// is est[j] CG (Lanczos) steps of a spectrum estimate (0: the cached interval), then sweep[j]
/// Chebyshev iterations that watched the residual every win[j] iterations (0: no watch); every
/// segment but the last ended in a stall. At most MBS_CHEB_SEGS segments (the watch stops after).
/// econf[j]: the estimate's CG met the tolerance by its recursion and b - A x was recomputed:
/// 1 it met it too (the solve ended), 2 it did not (the sweeps followed); 0 no such stop.
#define MBS_CHEB_SEGS 8
typedef struct {
  int nseg;
  int est[MBS_CHEB_SEGS], sweep[MBS_CHEB_SEGS], win[MBS_CHEB_SEGS], econf[MBS_CHEB_SEGS];
} mbsChebTrace;

/// Restarts of one jcg or chebyshev solve, for cpa to rebuild its graph. Both update their residual
/// by recursion (r <- r - alpha A p, r <- r - A d), which drifts from b - A x by rounding
/// (measured: 9.8e-13 against 5.3e-11 on configs/ladder.cfg; docs/formulation.md 3.2.1); a
/// recursion that meets the tolerance is confirmed with b - A x, and where that fails the
/// iteration goes on from the true residual (jcg restarts, p = z; chebyshev replaces r and z).
/// it[k]: the iteration after which restart k began (chebyshev: the sweep within segment seg[k]).
/// At most MBS_CFS_CG_RESTARTS restarts.
#define MBS_CFS_CG_RESTARTS 8
typedef struct {
  int n;
  int it[MBS_CFS_CG_RESTARTS], seg[MBS_CFS_CG_RESTARTS];
} mbsCgTrace;

/// A solver bound to an mbsCfs (private to src/).
typedef struct mbsSolver mbsSolver;

typedef struct mbsCfs {
  int nbody, nlam, nv;
  int b0, b1;   ///< owned body range [b0, b1)
  int l0, l1;   ///< owned constraint-force range [l0, l1)
  int branched; ///< 1 if some body of the whole model has two children (not 2-cyclic): set from
                ///< the model by mbs_cfsCreate, by the engine over all ranks

  // model constants (written by mbs_cfsCreate)
  /// 1: made for a method whose solver-table row has its own forward (schur): every array below
  /// but x is NULL (mbs_cfsCreate; the method keeps what it needs itself)
  int own_forward;
  mbsReal *Minv; ///< (nbody x 36) inverse spatial inertia, body coordinates

  // written by mbs_cfsPosition (per evaluation, owned bodies)
  mbsReal *T;     ///< (nlam x 6) constraint directions, column per component
  mbsReal *G;     ///< (nlam x 6) X_ip^T T_i: constraint directions in parent coordinates
  mbsReal *F;     ///< (nv x 6) force duals of S: S (S^T S)^{-1}
  mbsReal *SSinv; ///< (nbody x 36) (S^T S)^{-1}, dofnum x dofnum packed
  mbsReal *Dfac;  ///< (nbody x 36) Cholesky factor of D_i, lamnum x lamnum packed, lower
  mbsReal *Dinv;  ///< (nbody x 36) D_i^{-1}, lamnum x lamnum packed (the preconditioner)

  // operator sweeps (nbody x 6, global indexing; ghosts written by the halo exchange)
  mbsReal *up;  ///< X_ip^T wr_i of each body (read by the parent)
  mbsReal *wr;  ///< body wrench
  mbsReal *acc; ///< body acceleration of the last sweep (read by the children)

  // explicit blocks (written by mbs_cfsAssemble; owned rows)
  int blocks_ready;
  mbsReal *Pblk;   ///< (nbody x 36) A_{i,parent}: lamnum_i x lamnum_p, row-major
  int *sib_adr;    ///< (nbody) first sibling-pair block of parent p
  int nsib;        ///< number of sibling-pair blocks
  mbsReal *Sblk;   ///< (nsib x 36) A_{ch[a], ch[b]} for a > b, lamnum x lamnum row-major
  int *child_rank; ///< (nbody) position of b among its parent's children

  // solver vectors (nlam, global indexing, owned range used): c->rhs and c->x are the system's
  // right side and solution, the others scratch of the solver that runs
  mbsReal *rhs, *x, *r, *z, *p, *q, *xold, *tmp;
  /// CG (Lanczos) steps the last solve spent estimating the spectrum (Jacobi on branched models,
  /// Chebyshev without solver.rho; 0: none) and whether that CG met its tolerance; read by cpa
  int spec_it, spec_conv;
  mbsChebTrace cheb; ///< the segments of the last Chebyshev solve (nseg 0: another method)
  mbsCgTrace cg;     ///< the restarts of the last jcg or chebyshev solve (n 0: none)

  // closed loops as rows of the system (solver.loops = rows, docs/loops.md 8.4): closure
  // equation i is row nlam + i, held by one rank (lowner: l1 then includes them); its wrench
  // pair D_i x_i acts on its two bodies, its output is D_i^T (a_1, a_2)
  int nlr;                    ///< closure equations in the system (0: none)
  int lowner;                 ///< this rank holds their rows
  const mbsReal *LD;          ///< (nlr x 12) directions on body1, body2 (the loop workspace's)
  const mbsReal *Lkap;        ///< (nlr) closure right sides kappa (the loop workspace's)
  const unsigned char *Lskip; ///< (nlr) zero rows (G_i = 0): out of the system, x_i = 0
  mbsReal *Lfac;              ///< (nloop x 36) Cholesky factor of each loop's kept rows' block
  mbsReal *Lx;                ///< (nlr) the rows' x on every rank (sent by the owner each apply)
  mbsReal *Ldot;              ///< (nlr) D_i^T a of the last apply, summed over the ranks
  mbsReal *Lwr;               ///< (nbody x 6) loop wrenches on the owned loop bodies
  unsigned char *Lbody;       ///< (nbody) 1: a body of a loop
  int *Lcolor;                ///< (nloop) colour of each loop for gs and sor (loops sharing a
                              ///< body differ), after the joints' colours
  int nlcolor;                ///< number of loop colours

  // the solver (mbs_solvertype.h): bound to m->opt by mbs_cfsSolve, with its private state
  void *ctx; ///< the owner's context, handed to the solver's create (mbs_cfsSetContext)
  /// a long solve's progress (NULL: none; mbs_cfsSetProgress): called every
  /// MBS_CFS_PROGRESS_EVERY iterations with the iterations so far (all solves) and the residual
  void (*progress)(void *ctx, long it, double res);
  void *progress_ctx;
  long progress_it;  ///< iterations counted for progress, over every solve since it was set
  mbsSolver *solver; ///< the current solver (NULL until the first solve)
} mbsCfs;

/// Communication hooks of the affine operator; serial code passes NULL (no halos).
typedef struct {
  void *ctx;
  /// send up_c of owned bodies whose parent is remote; receive up_c of remote children.
  mbsErr (*halo_up)(void *ctx, mbsReal *up);
  /// send acc_p of owned bodies with remote children; receive acc of remote parents.
  mbsErr (*halo_down)(void *ctx, mbsReal *acc);
  /// in-place sum of n doubles over all ranks.
  mbsErr (*reduce)(void *ctx, double *v, int n);
} mbsCfsComm;

/// CG (Lanczos) steps of the spectrum estimate, at most: Jacobi on branched models (tol 1e-14)
/// and Chebyshev without solver.rho (fewer if solver.max_iter is smaller).
#define MBS_CFS_SPEC_STEPS 40
#define MBS_CFS_CHEB_STEPS 30

/// Greedy multicolouring of the joints in body order (a joint couples with its parent's joint and
/// its siblings, not across the ground): fills color (nbody) and returns the number of colours.
int mbs_cfsColour(const mbsModel *m, int *color);
/// Greedy colouring of the loops for gs and sor on the closure rows (solver.loops = rows): a loop
/// differs from every earlier loop sharing one of its bodies. Fills color (nloop), returns the
/// number of colours.
int mbs_cfsLoopColour(const mbsModel *m, int *color);

/// Make the closure equations rows of the system (solver.loops = rows, docs/loops.md 8.4): the
/// solver vectors grow to nlam + nlam_loop; \p owner: this rank holds the rows (it must own the
/// last body, so its range stays contiguous). Every rank of the partition calls it.
mbsErr mbs_cfsEnableLoopRows(const mbsModel *m, mbsCfs *c, int owner);
/// z = D^{-1} r on the closure rows of the loops of colour \p colour (-1: all), owner only.
void mbs_cfsPrecondLoops(const mbsModel *m, const mbsCfs *c, int colour, const mbsReal *r,
                         mbsReal *z);

/// Allocate for \p m with owned body range [b0, b1); computes the constant inverse inertias.
mbsErr mbs_cfsCreate(const mbsModel *m, int b0, int b1, mbsCfs **c);
/// Free and NULL (NULL is a no-op); destroys the bound solver.
void mbs_cfsDestroy(mbsCfs **c);
/// Attach the owner's context, which the solver's create receives (the distributed engine
/// attaches itself; serial code attaches nothing). Call before the first solve. Local.
void mbs_cfsSetContext(mbsCfs *c, void *ctx);
/// Iterations between two calls of the progress hook (a power of two).
#define MBS_CFS_PROGRESS_EVERY 256
/// Have the iterative solvers (jcg, chebyshev, jacobi, gs, sor) call \p fn(ctx, it, res) every
/// MBS_CFS_PROGRESS_EVERY iterations (it: iterations so far over every solve; res: the measure of
/// solver.criterion) so a caller can report a long solve; the hook decides whether to print.
/// NULL removes it. Local: a verb sets it on the rank that prints.
void mbs_cfsSetProgress(mbsCfs *c, void (*fn)(void *ctx, long it, double res), void *ctx);
/// Create the solver of m->opt.solver now (otherwise the first solve does): callers that run
/// collectively bind it at setup and agree on the outcome, so an allocation failure on one rank
/// cannot leave the others in the first solve's communication. Collective for the parallel
/// layer's solvers (schur, petsc: they agree inside), local otherwise.
mbsErr mbs_cfsBindSolver(const mbsModel *m, mbsCfs *c);

/// Per-evaluation, position-dependent data of the owned bodies: T, G, F, (S^T S)^{-1}, and the
/// factored diagonal blocks (needs the position stage). Returns MBS_ERR_NUMERIC if a D_i is not
/// positive definite.
mbsErr mbs_cfsPosition(const mbsModel *m, const mbsWork *w, mbsCfs *c);

/// y = A x (\p known = 0) or y = A x + y0 where y0 = T^T (a0_i - X a0_p) is the known part with
/// gravity, applied joint forces and velocity terms (\p known = 1); owned rows. Leaves the body
/// accelerations of the affine map in c->acc. Collective when \p comm is not NULL.
mbsErr mbs_cfsApply(const mbsModel *m, const mbsWork *w, mbsCfs *c, const mbsCfsComm *comm,
                    const mbsReal *x, int known, mbsReal *y);

/// gs and sor: y = A x on the owned rows of colour \p col (joint colours 0 .. ncolor - 1 by
/// \p color, then the closure rows' by c->Lcolor) after the update of colour \p pc changed x,
/// recomputing only what that update changed; the previous application (mbs_cfsApply or this)
/// must have been made with x as it was before that update, known = 0. Equal to the bit to a
/// full application on those rows. Collective when \p comm is not NULL.
mbsErr mbs_cfsApplyColour(const mbsModel *m, const mbsWork *w, mbsCfs *c, const mbsCfsComm *comm,
                          const mbsReal *x, const int *color, int ncolor, int pc, int col,
                          mbsReal *y);

/// z = D^{-1} r on the owned rows (block Cholesky solves).
void mbs_cfsPrecond(const mbsModel *m, const mbsCfs *c, const mbsReal *r, mbsReal *z);

/// Assemble the explicit off-diagonal blocks of the owned rows whose coupled joints are owned
/// too (parent block and sibling blocks). Needs mbs_cfsPosition.
mbsErr mbs_cfsAssemble(const mbsModel *m, const mbsWork *w, mbsCfs *c);

/// Extrapolate the warm-start guess at time t from the history of stage slot s->stage (Lagrange
/// polynomial of order 0..3 by \p mode through the newest solutions, non-uniform times; lower order
/// while the history is short). Writes x[l0..l1).
void mbs_cfsWarmStart(const mbsModel *m, const mbsState *s, int mode, mbsReal t, int l0, int l1,
                      mbsReal *x);
/// Push x[l0..l1) at time t into the state's history (replaces the newest entry if t equals its
/// time, e.g. two Runge–Kutta stages at the same time).
void mbs_cfsPushHistory(const mbsModel *m, mbsState *s, mbsReal t, int l0, int l1,
                        const mbsReal *x);

/// Solve A lam = b with the solver of m->opt.solver (the solver table, mbs_solvertype.h; created
/// on the first call and re-created when m->opt's method or solver options change) and finish
/// the evaluation: w->qdd, w->acc, w->jfrc, w->lam of the owned bodies; statistics in w->stat.
/// Needs the position and velocity stages of the owned bodies and their parents. Collective when
/// \p comm is not NULL.
mbsErr mbs_cfsSolve(const mbsModel *m, mbsState *s, mbsWork *w, mbsCfs *c, const mbsCfsComm *comm);
/// Before the position and velocity stages of an evaluation: the solver's optional begin hook
/// (mbs_solvertype.h; binds the solver first). Collective when the solver is.
mbsErr mbs_cfsBegin(const mbsModel *m, const mbsState *s, mbsCfs *c);

/// The pieces of mbs_cfsSolve around the solver: prepare computes the position-dependent
/// blocks, the right side c->rhs and the warm-start guess c->x (and ||b||); finish turns the
/// solution c->x into accelerations, wrenches, history and statistics. Collective when \p comm
/// is not NULL.
mbsErr mbs_cfsPrepare(const mbsModel *m, mbsState *s, mbsWork *w, mbsCfs *c, const mbsCfsComm *comm,
                      double *bnorm);
mbsErr mbs_cfsFinish(const mbsModel *m, mbsState *s, mbsWork *w, mbsCfs *c, const mbsCfsComm *comm,
                     int method, int iterations, int reason, double residual);

/// Number of columns of body b's block row of A (its joint, parent joint, siblings, children).
int mbs_cfsRowLength(const mbsModel *m, int b);
/// Body b's whole block row of A, explicitly: body_lamnum[b] rows of *ncols values (row-major,
/// leading dimension *ncols) and the global column indices. Position data of remote neighbours is
/// computed from the state on the fly. Local.
void mbs_cfsRow(const mbsModel *m, const mbsState *s, mbsWork *w, mbsCfs *c, int b, int *cols,
                mbsReal *vals, int *ncols);

/// Serial forward dynamics by the constraint-force method (all stages, whole model).
mbsErr mbs_cfsForward(const mbsModel *m, mbsState *s, mbsWork *w, mbsCfs *c);

#endif
