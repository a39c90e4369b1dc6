/// \file mbs_critpath.h
/// The critical-path analyser (design brief section 4, seed 000 section 5): the data-flow graph
/// of one forward-dynamics evaluation, its total work T1, critical path T∞ (the longest path),
/// the parallelism T1/T∞ (the seed's maximum speedup), list schedules on P processors and the
/// operations on the critical path. Node costs are the flop counts of src/flops.h, the same
/// constants the instrumented build counts in the real kernels (test_cpa checks T1 == counted
/// flops). No MPI: message nodes carry a latency/bandwidth cost model.
///
/// Two graph flavours:
///  - data flow (ranks = 0): every node may run on any processor, messages are free (the seed's
///    PRAM-like view; T1/T∞ is the maximum speedup of the computational scheme);
///  - distributed (ranks = R >= 1, the constraint-force method only): bodies are split into the
///    engine's contiguous weighted ranges, each node runs on its owner rank, every data dependency
///    between ranks becomes a message node (latency + bytes/bandwidth) and every global dot
///    product an allreduce node (ceil(log2 R) rounds).
/// All functions are Local.
#ifndef MBS_CRITPATH_H
#define MBS_CRITPATH_H

#include "mbs_cfs.h"
#include "mbs_error.h"
#include "mbs_model.h"
#include "mbs_report.h"

/// Node kinds: id and dotted name.
#define MBS_CPA_KIND_LIST(X)                                                                       \
  X(MBS_CPA_POS_JOINT, "pos.joint")                                                                \
  X(MBS_CPA_POS_POSE, "pos.pose")                                                                  \
  X(MBS_CPA_VEL_JOINT, "vel.joint")                                                                \
  X(MBS_CPA_VEL_LINK, "vel.link")                                                                  \
  X(MBS_CPA_VEL_C, "vel.c")                                                                        \
  X(MBS_CPA_VEL_BIAS, "vel.bias")                                                                  \
  X(MBS_CPA_VEL_FORCE, "vel.force")                                                                \
  X(MBS_CPA_ABA_U, "aba.U")                                                                        \
  X(MBS_CPA_ABA_BLOCK, "aba.block")                                                                \
  X(MBS_CPA_ABA_IA, "aba.Ia")                                                                      \
  X(MBS_CPA_ABA_PA, "aba.pa")                                                                      \
  X(MBS_CPA_ABA_CONGR, "aba.congruence")                                                           \
  X(MBS_CPA_ABA_CONGR_ACC, "aba.congruence_acc")                                                   \
  X(MBS_CPA_ABA_XF, "aba.xforce")                                                                  \
  X(MBS_CPA_ABA_XF_ACC, "aba.xforce_acc")                                                          \
  X(MBS_CPA_ABA_RHS, "aba.rhs")                                                                    \
  X(MBS_CPA_ABA_A, "aba.a")                                                                        \
  X(MBS_CPA_ABA_QDD, "aba.qdd")                                                                    \
  X(MBS_CPA_ABA_F, "aba.f")                                                                        \
  X(MBS_CPA_RNEA_A, "rnea.a")                                                                      \
  X(MBS_CPA_RNEA_F, "rnea.f")                                                                      \
  X(MBS_CPA_RNEA_QINV, "rnea.tau")                                                                 \
  X(MBS_CPA_RNEA_XF, "rnea.xforce")                                                                \
  X(MBS_CPA_RNEA_XF_ACC, "rnea.xforce_acc")                                                        \
  X(MBS_CPA_CRBA_CONGR, "crba.congruence")                                                         \
  X(MBS_CPA_CRBA_CONGR_ACC, "crba.congruence_acc")                                                 \
  X(MBS_CPA_CRBA_F, "crba.F")                                                                      \
  X(MBS_CPA_CRBA_WALK, "crba.walk")                                                                \
  X(MBS_CPA_LTDL, "ltdl.update")                                                                   \
  X(MBS_CPA_SOL_RHS, "solve.rhs")                                                                  \
  X(MBS_CPA_SOL_BACK, "solve.back")                                                                \
  X(MBS_CPA_SOL_DIV, "solve.div")                                                                  \
  X(MBS_CPA_SOL_FWD, "solve.fwd")                                                                  \
  X(MBS_CPA_CFS_T, "cfs.T")                                                                        \
  X(MBS_CPA_CFS_F, "cfs.F")                                                                        \
  X(MBS_CPA_CFS_D, "cfs.D")                                                                        \
  X(MBS_CPA_CFS_UP, "cfs.up")                                                                      \
  X(MBS_CPA_CFS_MID, "cfs.mid")                                                                    \
  X(MBS_CPA_CFS_DOWN, "cfs.down")                                                                  \
  X(MBS_CPA_CFS_RHS, "cfs.rhs")                                                                    \
  X(MBS_CPA_CFS_PRECOND, "cfs.precond")                                                            \
  X(MBS_CPA_CFS_FINISH, "cfs.finish")                                                              \
  X(MBS_CPA_CG_RESID, "cg.resid")                                                                  \
  X(MBS_CPA_CG_UPDATE, "cg.update")                                                                \
  X(MBS_CPA_CG_P, "cg.p")                                                                          \
  X(MBS_CPA_JAC_UPDATE, "jacobi.update")                                                           \
  X(MBS_CPA_JAC_FIX, "jacobi.undo")                                                                \
  X(MBS_CPA_CHEB_X, "cheb.x")                                                                      \
  X(MBS_CPA_CHEB_D, "cheb.d")                                                                      \
  X(MBS_CPA_SOR_UPDATE, "sor.update")                                                              \
  X(MBS_CPA_SOR_UNDO, "sor.undo")                                                                  \
  X(MBS_CPA_EIG, "lanczos.eig")                                                                    \
  X(MBS_CPA_DIR_BLOCK, "direct.block")                                                             \
  X(MBS_CPA_DIR_LLT, "direct.llt")                                                                 \
  X(MBS_CPA_DIR_FACTOR, "direct.factor")                                                           \
  X(MBS_CPA_DIR_TRSM, "direct.trsm")                                                               \
  X(MBS_CPA_DIR_SCHUR, "direct.schur")                                                             \
  X(MBS_CPA_DIR_SUBST, "direct.subst")                                                             \
  X(MBS_CPA_KIN_MAP, "kin.map")                                                                    \
  X(MBS_CPA_KIN_SCAN, "kin.scan")                                                                  \
  X(MBS_CPA_KIN_GHOST, "kin.ghost")                                                                \
  X(MBS_CPA_SCH_START, "schur.start")                                                              \
  X(MBS_CPA_SCH_ABSORB, "schur.absorb")                                                            \
  X(MBS_CPA_SCH_ATTACH, "schur.attach")                                                            \
  X(MBS_CPA_SCH_FINISH, "schur.finish")                                                            \
  X(MBS_CPA_SCH_SPATH, "schur.spath")                                                              \
  X(MBS_CPA_SCH_SPIKE, "schur.spike")                                                              \
  X(MBS_CPA_SCH_JOIN, "schur.join")                                                                \
  X(MBS_CPA_SCH_MERGE, "schur.merge")                                                              \
  X(MBS_CPA_SCH_SOLVE, "schur.solve")                                                              \
  X(MBS_CPA_SCH_LAM, "schur.lam")                                                                  \
  X(MBS_CPA_SCH_SPIKEVEC, "schur.spikevec")                                                        \
  X(MBS_CPA_SCH_ACC, "schur.acc")                                                                  \
  X(MBS_CPA_SCH_QDD, "schur.qdd")                                                                  \
  X(MBS_CPA_DOT_LEAF, "dot.leaf")                                                                  \
  X(MBS_CPA_DOT_ADD, "dot.add")                                                                    \
  X(MBS_CPA_SCALAR, "scalar")                                                                      \
  X(MBS_CPA_LOOP_SPRING, "loop.spring")                                                            \
  X(MBS_CPA_LOOP_ROWS, "loop.rows")                                                                \
  X(MBS_CPA_LOOP_FEXT, "loop.fext")                                                                \
  X(MBS_CPA_LOOP_RHS, "loop.rhs")                                                                  \
  X(MBS_CPA_LOOP_UNIT, "loop.unit")                                                                \
  X(MBS_CPA_LOOP_COLUMN, "loop.column")                                                            \
  X(MBS_CPA_LOOP_ABAFACTOR, "loop.abafactor")                                                      \
  X(MBS_CPA_LOOP_SWEEP, "loop.sweep")                                                              \
  X(MBS_CPA_LOOP_FACTOR, "loop.factor")                                                            \
  X(MBS_CPA_LOOP_WRENCH, "loop.wrench")                                                            \
  X(MBS_CPA_LOOP_RESID, "loop.resid")                                                              \
  X(MBS_CPA_LOOP_SYNC, "loop.sync")                                                                \
  X(MBS_CPA_ROWS_X, "rows.x")                                                                      \
  X(MBS_CPA_ROWS_WRENCH, "rows.wrench")                                                            \
  X(MBS_CPA_ROWS_DOT, "rows.dot")                                                                  \
  X(MBS_CPA_ROWS_BLOCK, "rows.block")                                                              \
  X(MBS_CPA_ROWS_UPDATE, "rows.update")                                                            \
  X(MBS_CPA_MSG_HALO, "msg.halo")                                                                  \
  X(MBS_CPA_MSG_ALLREDUCE, "msg.allreduce")                                                        \
  X(MBS_CPA_FLEX_KIN, "flex.kin")                                                                  \
  X(MBS_CPA_FLEX_BODY, "flex.body")                                                                \
  X(MBS_CPA_FLEX_CONDENSE, "flex.condense")                                                        \
  X(MBS_CPA_FLEX_TRANSFER, "flex.transfer")                                                        \
  X(MBS_CPA_FLEX_ACC, "flex.acc")                                                                  \
  X(MBS_CPA_FLEX_SPIKE, "flex.spike")                                                              \
  X(MBS_CPA_FLEX_ROWS, "flex.rows")                                                                \
  X(MBS_CPA_FLEX_SOLVE, "flex.solve")                                                              \
  X(MBS_CPA_FLEX_FINISH, "flex.finish")                                                            \
  X(MBS_CPA_FLEX_CFS_PREP, "flex.cfs.prepare")                                                     \
  X(MBS_CPA_FLEX_CFS_BLOCK, "flex.cfs.block")                                                      \
  X(MBS_CPA_FLEX_CFS_UP, "flex.cfs.up")                                                            \
  X(MBS_CPA_FLEX_CFS_MID, "flex.cfs.mid")                                                          \
  X(MBS_CPA_FLEX_CFS_DOWN, "flex.cfs.down")                                                        \
  X(MBS_CPA_FLEX_CFS_SOLVE, "flex.cfs.solve")                                                      \
  X(MBS_CPA_FLEX_CFS_END, "flex.cfs.end")                                                          \
  X(MBS_CPA_NAT_ASM, "natural.assemble")                                                           \
  X(MBS_CPA_NAT_FACTOR, "natural.factor")                                                          \
  X(MBS_CPA_NAT_FWD, "natural.forward")                                                            \
  X(MBS_CPA_NAT_QDD, "natural.qdd")

typedef enum {
#define MBS_CPA_KIND_ENUM(id, name) id,
  MBS_CPA_KIND_LIST(MBS_CPA_KIND_ENUM)
#undef MBS_CPA_KIND_ENUM
      MBS_CPA_KIND_COUNT
} mbsCpaKind;

/// Graph granularity: one node per kernel call (op), per body and stage (block), or per body
/// and sweep (body: stages of one sweep direction merged). flop is an estimate of scalar
/// (single-operation) granularity: the op graph with the span of each kernel call taken as
/// 1 + ceil(log2 W) flop times for W flops (its flops evaluated as a balanced tree), the work
/// unchanged; list schedules are not defined for it (use the Brent bound).
typedef enum {
  MBS_CPA_GRAIN_OP = 0,
  MBS_CPA_GRAIN_BLOCK = 1,
  MBS_CPA_GRAIN_BODY = 2,
  MBS_CPA_GRAIN_FLOP = 3
} mbsCpaGrain;

/// Kernel classes of the cost model: the engine phase a kernel runs in, timed by the phase timers
/// of a real evaluation (`mbspar cpa --calibrate`): kinematics = eval.position + eval.velocity;
/// recursion = the rest of an ABA/CRBA evaluation; constraint.blocks = eval.constraint.assembly
/// (T, F, D and its factor); constraint.solve = eval.constraint.solve (right side, iterations,
/// spectrum estimate); constraint.finish = eval.acceleration (the operator at lambda, qdd,
/// joint wrenches).
#define MBS_CPA_CLASS_LIST(X)                                                                      \
  X(MBS_CPA_CLASS_KIN, "kinematics")                                                               \
  X(MBS_CPA_CLASS_DYN, "recursion")                                                                \
  X(MBS_CPA_CLASS_BLOCKS, "constraint.blocks")                                                     \
  X(MBS_CPA_CLASS_SOLVE, "constraint.solve")                                                       \
  X(MBS_CPA_CLASS_FINISH, "constraint.finish")

typedef enum {
#define MBS_CPA_CLASS_ENUM(id, name) id,
  MBS_CPA_CLASS_LIST(MBS_CPA_CLASS_ENUM)
#undef MBS_CPA_CLASS_ENUM
      MBS_CPA_CLASS_COUNT
} mbsCpaClass;

/// What to build and the cost model.
typedef struct {
  int method;          ///< MBS_SOLVER_ABA, _CRBA, _JCG, _JACOBI, _GS, _SOR, _CHEBYSHEV
  int grain;           ///< mbsCpaGrain
  int iterations;      ///< iterations K as w->stat.iterations reports them (Jacobi, GS, SOR: K + 1
                       ///< sweeps; Chebyshev: including the estimate's CG steps)
  int converged;       ///< 1: iteration K met the tolerance (no direction update after it); jcg,
                       ///< chebyshev: 2: stopped at iteration K stagnated (b - A x missed tol)
  int spec_iterations; ///< CG (Lanczos) steps of the spectrum estimate as mbsCfs.spec_it reports
                       ///< them: Jacobi on branched models, Chebyshev without solver.rho
  int spec_converged;  ///< mbsCfs.spec_conv: that CG met its tolerance
  /// Chebyshev without solver.rho: the segments of the solve (mbsCfs.cheb: estimates, sweeps,
  /// stall watches); NULL: one estimate of spec_iterations steps, then the rest unwatched
  const mbsChebTrace *cheb;
  /// jcg, chebyshev: the iterations after which the measured solve went on from its true
  /// residual (mbsCfs.cg; chebyshev: sweeps within a segment); NULL: none. Every iteration whose
  /// recursive residual met the tolerance (these and a converged or stagnated K >= 1, and a
  /// Chebyshev estimate's stop, mbsChebTrace.econf) is followed by the confirming b - A x.
  const mbsCgTrace *cg;
  int criterion;   ///< m->opt.criterion (the change criterion adds two dots per iteration)
  int check_every; ///< m->opt.check_every: jacobi, gs, sor, chebyshev test every this many (< 2: 1)
  int has_tau;     ///< applied joint torques present (state tau != NULL)
  int ranks;       ///< 0: data-flow graph; R >= 1: distributed graph on R ranks (iterative, schur)
  int threads;     ///< schur: segments per rank (the engine's OpenMP threads; < 1: one)
  double flop_time;                       ///< seconds per flop (default 1e-9)
  double class_time[MBS_CPA_CLASS_COUNT]; ///< seconds per flop of each kernel class (0: flop_time)
  double latency;                         ///< message latency alpha [s] (default 1.5e-6)
  double bandwidth;                       ///< message bandwidth 1/beta [bytes/s] (default 5e9)
  // closed loops and spring-dampers (docs/cpa.md "Loop models"): the evaluation's factorization
  int loop_rank; ///< rank of the closure equations (< 0: the model's rank at q0, loop_asm)
  int loop_zero; ///< zero rows dropped before pivoting (< 0: the zero rows known in advance at
                 ///< q0, loop_asm.nskip, which the factorization always drops)
  /// (nlam_loop) 1: the equation's unit solve is left out (a zero row known in advance, G_i = 0;
  /// mbs_loopSkipped); NULL: those of the model at q0 (loop_asm.skip)
  const unsigned char *loop_skip;
  /// iterative methods: per tree solve after the first (the nlam_loop unit solves, then the final
  /// one) 4 ints: iterations, converged, spectrum-estimate iterations, its convergence (NULL:
  /// every solve as iterations, converged, spec_iterations, spec_converged)
  const int *loop_solves;
  int loops_concurrent; ///< 1: the unit solves independent of each other (not what the code does)
} mbsCpaOptions;

/// A data-flow graph (read-only after mbs_cpaBuild). Node ids follow a topological order.
typedef struct {
  int nnode, nedge;
  int nbody, ranks;
  long long *flops; ///< (nnode) flops of each node (messages: adds done inside an allreduce)
  double *cost;     ///< (nnode) seconds: flops * flop_time, or the message time
  double *span;     ///< (nnode) seconds the node adds to a path (= cost except at flop grain)
  int fine;         ///< 1 at flop grain (span < cost; no list schedule)
  int *kind;        ///< (nnode) mbsCpaKind (of the costliest member for merged nodes)
  int *body;        ///< (nnode) body, -1 for scalars, reductions and messages
  int *proc;        ///< (nnode) owner rank, -1 any processor, -2 no processor (message)
  int *pred_adr;    ///< (nnode+1) CSR predecessors
  int *pred;        ///< (nedge)
  int *succ_adr;    ///< (nnode+1) CSR successors
  int *succ;        ///< (nedge)
  long long class_flops[MBS_CPA_CLASS_COUNT]; ///< work of each kernel class [flops]
  int iface_rounds; ///< schur on ranks > 1: interface rounds (scan or contraction: ceil(log2 P);
                    ///< MBSPAR_SCHUR_MERGE=pass: the component-tree passes' depth)
} mbsCpaGraph;

/// Analysis of a graph.
typedef struct {
  long long work_flops;                     ///< T1 in flops (all nodes)
  double work;                              ///< T1 in seconds (compute nodes only)
  double span;                              ///< T∞ in seconds (messages included)
  long long span_flops;                     ///< flops on the critical path
  double parallelism;                       ///< work / span
  int path_nodes;                           ///< nodes on the critical path
  int nmsg;                                 ///< message nodes in the graph
  long long kind_nodes[MBS_CPA_KIND_COUNT]; ///< critical path: nodes per kind
  long long kind_flops[MBS_CPA_KIND_COUNT]; ///< critical path: flops per kind
  double kind_time[MBS_CPA_KIND_COUNT];     ///< critical path: seconds per kind
  int *path;                                ///< (path_nodes) the critical path, source first
} mbsCpaResult;

/// Defaults: aba, op grain, data flow, flop_time 1e-9 s, latency 1.5e-6 s, bandwidth 5e9 B/s.
void mbs_cpaDefaults(mbsCpaOptions *o);

/// 1 for the iterative constraint-force solvers (the graphs that take iterations and ranks).
int mbs_cpaIterative(int method);
/// 1 if \p method has a graph distributed over ranks (cpa --procs): the constraint-force methods
/// that run on any owned body range, and schur.
int mbs_cpaDistributed(int method);

/// The methods' graphs, named by their solver-table rows (cpa_build, cpa_loops; the builder state
/// is private to src/, src/cpa_private.h): the serial recursions (src/dynamics_cpa.c), the
/// constraint-force method around the row's cpa_solve (src/cfs_cpa.c), schur
/// (src/schur/schur_cpa.c), and the loop layer around a method's tree solves (src/loops_cpa.c).
struct mbsCpaB;
struct mbsCpaKin;
mbsErr mbs_cpaAbaGraph(struct mbsCpaB *B, struct mbsCpaKin *K);
/// The natural formulation's O(n) solve (src/natural_cpa.c; one rank, trees).
mbsErr mbs_cpaNaturalGraph(struct mbsCpaB *B, struct mbsCpaKin *K);
mbsErr mbs_cpaCrbaGraph(struct mbsCpaB *B, struct mbsCpaKin *K);
mbsErr mbs_cpaCfsGraph(struct mbsCpaB *B, struct mbsCpaKin *K);
mbsErr mbs_cpaSchurGraph(struct mbsCpaB *B, struct mbsCpaKin *K);
mbsErr mbs_cpaSchurLoops(struct mbsCpaB *B, struct mbsCpaKin *K);
mbsErr mbs_cpaLoopsGraph(struct mbsCpaB *B, struct mbsCpaKin *K);
/// Models with flexible bodies: the graph of the recursive algorithm (src/flex_cpa.c), whatever
/// the method; data flow only.
mbsErr mbs_cpaFlexGraph(struct mbsCpaB *B, struct mbsCpaKin *K);

/// mbsCpaOptions.converged of a measured solve's mbsReason: 1 converged, 2 stagnated, else 0.
int mbs_cpaConvergedOf(int reason);

/// Build the graph of one evaluation of \p m.
/// \return MBS_OK; MBS_ERR_INPUT (bad options, e.g. ranks > bodies); MBS_ERR_UNSUPPORTED (a
///         method without a graph); MBS_ERR_NOMEM; MBS_ERR_INTERNAL (a cycle).
mbsErr mbs_cpaBuild(const mbsModel *m, const mbsCpaOptions *o, mbsCpaGraph **g);

/// T1, T∞, parallelism and the critical path. Free with mbs_cpaResultFree.
mbsErr mbs_cpaAnalyse(const mbsCpaGraph *g, mbsCpaResult *r);
void mbs_cpaResultFree(mbsCpaResult *r);

/// Makespan [s] of a greedy list schedule on \p nproc processors with critical-path (bottom
/// level) priority. Nodes bound to a rank run on that processor (nproc must equal g->ranks when
/// the graph has bound nodes); message nodes take time but no processor. MBS_ERR_UNSUPPORTED at
/// flop grain.
mbsErr mbs_cpaSchedule(const mbsCpaGraph *g, int nproc, double *makespan);

/// Write Graphviz text (critical path in red). Refuses graphs above \p max_nodes nodes.
mbsErr mbs_cpaWriteDot(const mbsCpaGraph *g, const mbsCpaResult *r, const char *path,
                       int max_nodes);

/// Name of a kernel class ("kinematics", ...).
const char *mbs_cpaClassName(int cls);
/// Dotted name of a kind.
const char *mbs_cpaKindName(int kind);

/// The engine phase a node kind is timed in, for comparing a distributed graph's per-rank work
/// with the engine's per-rank phase timers (docs/cpa.md "Checked against the engine's timers"):
/// kinematics (eval.position + eval.velocity: pos.*, vel.*, kin.*), factor
/// (eval.constraint.factor: the elimination, aba.* and schur.* but the ones below), interface
/// (eval.constraint.solve: schur.merge, schur.solve), acceleration (eval.acceleration: aba.a,
/// aba.qdd, aba.f, schur.lam, schur.spikevec, schur.acc, schur.qdd) and other (messages and the
/// kinds of the other methods).
typedef enum {
  MBS_CPA_PHASE_KINEMATICS,
  MBS_CPA_PHASE_FACTOR,
  MBS_CPA_PHASE_INTERFACE,
  MBS_CPA_PHASE_ACCELERATION,
  MBS_CPA_PHASE_OTHER,
  MBS_CPA_PHASE_COUNT
} mbsCpaPhase;
int mbs_cpaKindPhase(int kind);
/// "kinematics", "factor", "interface", "acceleration", "other".
const char *mbs_cpaPhaseName(int phase);
/// Per-rank sums of a distributed graph (g->ranks >= 1): flops[r * MBS_CPA_PHASE_COUNT + p] and
/// seconds (node costs) of rank r in phase p; message nodes are not counted. Arrays of
/// g->ranks * MBS_CPA_PHASE_COUNT, zeroed here.
void mbs_cpaRankPhases(const mbsCpaGraph *g, long long *flops, double *seconds);
/// Name of a grain ("op", "block", "body", "flop"); mbs_cpaGrainFromName returns -1 if unknown.
const char *mbs_cpaGrainName(int grain);
int mbs_cpaGrainFromName(const char *name);

/// Free and NULL (NULL is a no-op).
void mbs_cpaDestroy(mbsCpaGraph **g);

#endif
