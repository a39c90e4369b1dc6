/// \file mbs_solvertype.h
/// The solver table: one mbsSolverType per method of solver.method (docs/code.md).
///
/// A constraint-force solver solves A x = b for the owned rows of an mbsCfs: mbs_cfsSolve
/// prepares the system (blocks, right side c->rhs, warm-start guess c->x), calls the solver's
/// solve callback, and turns c->x into accelerations and wrenches. The solver owns its private
/// state (created by create, freed by destroy) and a copy of the options it needs; it may use
/// the shared operator pieces of mbs_cfs.h (mbs_cfsApply, mbs_cfsPrecond, explicit blocks) and
/// the vectors of the mbsCfs as scratch.
///
/// The serial core (src/) registers its solvers statically. The parallel layer registers its own
/// (petsc; later schur) with mbs_solverRegister from mbsp_init, without src/ knowing MPI: their
/// create receives the context the owner of the mbsCfs attached to it (mbs_cfsSetContext; the
/// distributed engine attaches itself, an mbspEngine *, see mbs_engine.h for what it offers:
/// communicator, decomposition, halo hooks). Serial code attaches nothing (NULL).
#ifndef MBS_SOLVERTYPE_H
#define MBS_SOLVERTYPE_H

#include "mbs_cfs.h"

/// The options a solver reads, copied from m->opt when the solver is created (a change of any
/// of them between evaluations re-creates the solver).
typedef struct {
  int method;      ///< MBS_SOLVER_*
  double tol;      ///< solver.tol
  int max_iter;    ///< solver.max_iter
  int check_every; ///< solver.check_every (jacobi, gs, sor, chebyshev)
  int criterion;   ///< mbsSolverCriterion
  double omega;    ///< solver.omega (SOR)
  double rho;      ///< solver.rho (Chebyshev; 0: estimate the spectrum)
  int warm_start;  ///< solver.warm_start (read by solvers with their own history: schur's J-CG)
  int iface;       ///< solver.interface (schur)
} mbsSolverOpt;

/// One solve: ||b|| in, the outcome out.
typedef struct {
  double bnorm;      ///< in: ||b|| (2-norm over all ranks)
  int it;            ///< out: iterations
  int reason;        ///< out: mbsReason
  double res;        ///< out: the residual or change measure the criterion tested
  int spec_it;       ///< out: CG (Lanczos) steps spent estimating the spectrum (0: none)
  int spec_conv;     ///< out: that CG met its tolerance
  mbsChebTrace cheb; ///< out: Chebyshev's segments (nseg 0: other methods)
  mbsCgTrace cg;     ///< out: jcg's or chebyshev's restarts from the true residual (n 0: none)
} mbsSolveInfo;

/// What a solver caches across evaluations and a checkpoint keeps (bitwise restarts).
typedef struct {
  int have_spec;     ///< the spectral bounds below are valid
  double lmin, lmax; ///< spectral bounds of D^{-1} A
  double omega;      ///< Jacobi's relaxation
} mbsSolverCache;

/// Which critical-path graph src/critpath.c builds for a method (mbspar cpa).
typedef enum {
  MBS_CPA_GRAPH_NONE = 0, ///< no graph (e.g. petsc: PETSc's own kernels)
  MBS_CPA_GRAPH_ABA,
  MBS_CPA_GRAPH_CRBA,
  MBS_CPA_GRAPH_CG,        ///< constraint-force method with J-CG
  MBS_CPA_GRAPH_JACOBI,    ///< ... with (relaxed) block Jacobi
  MBS_CPA_GRAPH_CHEBYSHEV, ///< ... with Chebyshev semi-iteration
  MBS_CPA_GRAPH_SOR,       ///< ... with multicolour Gauss–Seidel / SOR
  MBS_CPA_GRAPH_DIRECT,    ///< ... with the exact block Cholesky
  MBS_CPA_GRAPH_SCHUR      ///< ... with the exact distributed elimination
} mbsCpaGraphKind;

struct mbsCpaB; // the critical-path graph builders' state (src/cpa_private.h)
struct mbsCpaKin;
struct mbsCpaCfs;
struct mbsCpaVec;

/// One row of the solver table.
typedef struct mbsSolverType {
  const char *name; ///< the value of solver.method
  int method;       ///< MBS_SOLVER_* (stable id)
  int baseline;     ///< 1: serial whole-model recursion (aba, crba: mbs_forward, rank 0); no
                    ///< callbacks
  int distributed;  ///< 1: runs on any owned body range; 0: needs the whole model (one rank)
  int iterative;    ///< 1: iterations and convergence are meaningful (reported, measured by cpa)
  int precond;      ///< 1: applies the block-diagonal preconditioner D^-1 (c->Dinv, formed by
                    ///< mbs_cfsPosition only for such a method)
  int cpa_graph;    ///< mbsCpaGraphKind

  // capability flags: everything outside the solver files asks these, never the method id
  int check_every;    ///< 1: reads solver.check_every (convergence tested every k sweeps)
  int stationary;     ///< 1: stationary iteration (of the order of N^2 sweeps on long chains)
  int restarts;       ///< 1: restarts from the true residual (reported; cpa --iterations trace)
  int floored;        ///< 1: reports floored pivots (solveStat.floored)
  int segments;       ///< 1: runs in segments of spectrum estimates and sweeps (chebyshev)
  int local_model;    ///< 1: runs on a distributed-memory model (each rank holds its bodies)
  int engine_only;    ///< 1: runs only inside the distributed engine (its create needs it)
  int petsc;          ///< 1: needs PETSc initialised
  int dense_inertia;  ///< 1: needs the dense joint-space inertia (mbs_workEnableCrba)
  int separators;     ///< 1: takes closed loops as separators of its own (docs/loops.md 8.1a)
  int semidef_bodies; ///< 1: runs bodies with a semidefinite inertia (mbsModel.nsemidef_g: a
                      ///< thin rod whose joint's motion meets inertia); 0: factors every body's
                      ///< 6 x 6 inertia and refuses such models (the constraint-force methods)
  /// Bytes per body the method adds to the memory budget, spread over the ranks (mbspar's
  /// memory check, parallel/memcheck.c); 0: none beyond the engine's.
  double mem_per_body;
  /// Optional, for the serial baselines: the tree solve of mbs_forward after the position and
  /// velocity stages and the spring-dampers' wrenches (aba: mbs_aba; crba: mbs_crba).
  mbsErr (*tree)(const mbsModel *m, mbsWork *w);
  /// Optional, for the serial baselines: the workspace beyond mbs_workCreate that tree needs
  /// (kept in w->ext, freed by w->ext_free; natural: its block factors).
  mbsErr (*work)(const mbsModel *m, mbsWork *w);
  /// 1: tree solves the closed loops itself (mbs_forward skips mbs_loopSolve).
  int loops_inside;
  /// 1: a formulation of its own, selected by model.formulation = "natural" (src/config_opts.c)
  int natural;
  /// Optional: the CG (Lanczos) steps of the spectrum estimate cpa assumes when --iterations K
  /// is given (NULL: none).
  int (*cpa_spec)(const mbsModel *m, int iterations);
  /// Optional: stationary methods at max_iter: text appended to the "N^2 sweeps" hint.
  const char *maxit_hint;
  /// cpa: the graph of one evaluation on a tree model (NULL: no graph, e.g. petsc); after the
  /// core's set-up, see mbs_critpath.h for the builders of the core's rows.
  mbsErr (*cpa_build)(struct mbsCpaB *B, struct mbsCpaKin *K);
  /// cpa: ... on a model with closed loops or spring-dampers (NULL: not yet, e.g. crba).
  mbsErr (*cpa_loops)(struct mbsCpaB *B, struct mbsCpaKin *K);
  /// cpa, constraint-force methods (cpa_build = mbs_cpaCfsGraph): the solve's graph inside the
  /// system's, beside the solver's kernel (src/solver_*.c).
  mbsErr (*cpa_solve)(struct mbsCpaB *B, struct mbsCpaCfs *C, const struct mbsCpaKin *K,
                      struct mbsCpaVec *V);

  /// Allocate the private state *self for the model \p m and the system \p c (its owned range is
  /// set; position data is not), with a copy of \p opt. \p ctx is the owner's context
  /// (mbs_cfsSetContext: the engine, or NULL serially). Collective when the solver is.
  mbsErr (*create)(const mbsModel *m, const mbsCfs *c, const mbsSolverOpt *opt, void *ctx,
                   void **self);
  /// Solve A x = c->rhs on the owned rows starting from c->x (the warm-start guess); leave the
  /// solution in c->x and the outcome in \p info. \p comm holds the halo and reduction hooks
  /// (NULL serially). Collective when \p comm is not NULL.
  mbsErr (*solve)(void *self, const mbsModel *m, const mbsState *s, mbsWork *w, mbsCfs *c,
                  const mbsCfsComm *comm, mbsSolveInfo *info);
  /// Optional: the whole constraint stage instead of prepare, solve and finish (solvers that do
  /// not iterate on c->x, e.g. the exact schur): from the position and velocity stages to
  /// w->qdd, acc, jfrc, lam of the owned bodies and w->stat. Collective when \p comm is not NULL.
  mbsErr (*forward)(void *self, const mbsModel *m, mbsState *s, mbsWork *w, mbsCfs *c,
                    const mbsCfsComm *comm);
  /// Optional: start what needs only the state (e.g. post the messages of the remote joints'
  /// states), before the position and velocity stages; forward completes it. Collective when the
  /// solver is.
  mbsErr (*begin)(void *self, const mbsModel *m, const mbsState *s);
  /// Free *self and NULL it (NULL is a no-op).
  void (*destroy)(void **self);
  /// Optional (NULL: nothing cached): copy the cache out of / into the state.
  void (*save)(const void *self, mbsSolverCache *cache);
  void (*restore)(void *self, const mbsSolverCache *cache);
  /// Optional (the loop layer, solvers with separators of their own): the interface size of the
  /// local solves (>= 0), or -1 when there are none.
  int (*loop_ports)(const void *self);
  /// Optional: the local solve of the loop layer (mbsLoopOps.local) with the state \p s and the
  /// engine's workspace \p w. Local.
  mbsErr (*loop_local)(void *self, mbsState *s, mbsWork *w, mbsReal *C, mbsReal *g, const int *load,
                       int nload, const int *first, int lim);
  /// Optional (decomposition report): the solver's segments and whether it merges them by a scan.
  int (*segments_of)(const void *self, int *scan);
  /// Optional (the engine's overlapped factor, docs/formulation.md 4.4): \p what < 0, before the
  /// kinematics prefix of an evaluation (after begin): forget earlier work; returns 1 if the
  /// solver takes work during the prefix's waits. \p what > 0, in each of those waits: a slice
  /// of the factor that reads the joints alone (the state \p s, the position stage in \p w);
  /// returns the bodies done. forward completes the factor. Local (no messages sent).
  int (*prefactor)(void *self, const mbsModel *m, mbsState *s, mbsWork *w, int what);
} mbsSolverType;

/// Add (or replace) the table entry of t->method; \p t must outlive every use (a static
/// constant). Called by the parallel layer at start-up; not thread-safe.
mbsErr mbs_solverRegister(const mbsSolverType *t);
/// The table entry of \p method, or NULL (unknown id or not registered in this program).
const mbsSolverType *mbs_solverFind(int method);
/// The private state of c's bound solver if its type is \p t, else NULL. Local.
void *mbs_cfsSolverSelf(const mbsCfs *c, const mbsSolverType *t);
/// 1 if \p method is a serial baseline (aba, crba).
int mbs_solverIsBaseline(int method);
/// The table entry of the solver bound to \p c and its private state (NULL, NULL: none). Local.
const mbsSolverType *mbs_cfsSolverBound(const mbsCfs *c, void **self);
/// The entry of \p method, or a row of zeros (every flag 0, no callback) for an unknown id: for
/// asking a capability without a NULL test.
const mbsSolverType *mbs_solverCaps(int method);
/// The options of m->opt a solver copies.
void mbs_solverOptions(const mbsModel *m, mbsSolverOpt *opt);

/// The cache of c's solver (checkpoints): {0, 0, 0, 1} when no solver is bound or it caches
/// nothing. Local.
void mbs_cfsCacheSave(const mbsCfs *c, mbsSolverCache *cache);
/// Load \p cache into the solver of m->opt (binding it to \p c first; a no-op for solvers that
/// cache nothing). Local unless the solver's create is collective.
mbsErr mbs_cfsCacheRestore(const mbsModel *m, mbsCfs *c, const mbsSolverCache *cache);

#endif
