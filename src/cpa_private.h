/// \file cpa_private.h
/// What the critical-path graph builders share (private to src/): the builder state (mbsCpaB),
/// its node and edge primitives (src/critpath.c), the kinematics' nodes (mbsCpaKin), the
/// constraint-force system's graph pieces (src/cfs_cpa.c), and each method's graph, which lives
/// beside its kernel: the tree recursions in src/dynamics_cpa.c, the iterative solvers and the
/// direct one in src/solver_*.c, schur in src/schur/schur_cpa.c, the loop layer in src/loops_cpa.c.
/// The solver table reaches them through its rows (cpa_build, cpa_loops, cpa_solve); the
/// analyser's core names no method. docs/cpa.md describes the graph model.
#ifndef MBS_CPA_PRIVATE_H
#define MBS_CPA_PRIVATE_H

#include "mbspar/mbs_cfs.h"
#include "mbspar/mbs_critpath.h"
#include "mbspar/mbs_joint.h"
#include "mbspar/mbs_loops.h"
#include "mbspar/mbs_schur.h"
#include "mbspar/mbs_solver.h"
#include "mbspar/mbs_solvertype.h"
#include "flops.h"

/// Bytes of one halo message (a spatial vector: 6 doubles).
#define MBS_CPA_MSG_BYTES 48

typedef struct mbsCpaB {
  const mbsModel *m;
  const mbsCpaOptions *o;
  int err; // sticky: out of memory
  // nodes
  int n, cap;
  long long *flops;
  double *cost;
  int *kind, *body, *proc, *pblk, *pbdy;
  // edges
  int ne, ecap;
  int *esrc, *edst;
  int *owner;                                 // (nbody) rank of each body (ranks >= 1)
  int cls;                                    // kernel class of the nodes being built (mbsCpaClass)
  long long class_flops[MBS_CPA_CLASS_COUNT]; // work per class (compute nodes)
  int fext;                                   // the tree solve being built has external wrenches
  int iface_rounds;      // schur: interface rounds of the distributed solve (mbsCpaGraph)
  int phoff;             // phase offset of the tree solve being built
  struct mbsCpaSch *sch; // schur: the graph's state over its tree solves
  // the loop layer's tree solves after the first (w->reuse): the constraint-force blocks and
  // direct's factor are solve 0's, kept in keep: T, F, D (nbody each), direct's fac, wp (nbody
  // each) and ws (one per sibling pair); NULL outside loop graphs
  int reuse, *keep;
  // closed loops as rows of the constraint-force system (solver.loops = rows, docs/loops.md
  // 8.4): lrows rows held with the last body's entries (its rank), lskip the zero rows, lbody
  // the loop bodies, lprec the flops of the rows' preconditioner (a Cholesky solve per loop),
  // lsetup the node after which their directions and blocks exist; noloopprec: the bodies'
  // preconditioner alone (gs/sor sweep the loops in colours of their own)
  int lrows, lsetup, noloopprec;
  long long lprec;
  const unsigned char *lskip;
  unsigned char *lbody;
  // schur's separators (docs/loops.md 8.1, mbsp_schurLocal): the tree solve being built is local
  // to the ranks marked in smask (no interface, no messages, every cut-joint lambda zero)
  const unsigned char *smask;
  // ... and the bodies of its bias passes (mbs_schurRankFactorPath: the loaded bodies' root paths
  // on a rank where mbs_schurRhsOnly holds; NULL: every body)
  const unsigned char *spath;
  // ... and the bodies of its back-substitution: those with bfirst[b] <= blim (the loop layer's
  // column at position blim, mbs_loopColumnOrder; NULL: every body)
  const int *bfirst;
  int blim;
} mbsCpaB;

// entries of body b in the solver vectors: its joint's, and on the last body the closure rows
static inline int mbs_cpaNl(const mbsCpaB *B, int b) {
  return B->m->body_lamnum[b] + (B->lrows && b == B->m->nbody - 1 ? B->lrows : 0);
}
typedef struct mbsCpaSch mbsCpaSch;

// phase ids (block grain, body grain) of the stages
enum {
  PH_POS = 0,
  PH_VEL,
  PH_P2,
  PH_P3,
  PH_RNEA1F,
  PH_RNEA1B,
  PH_COMP,
  PH_HCOL,
  PH_LTDL,
  PH_SOLB,
  PH_SOLD,
  PH_SOLF,
  PH_RNEA2F,
  PH_RNEA2B,
  PH_CFSPOS,
  PH_FIN,
  PH_ITER // J-CG sweeps: PH_ITER + 8 * (apply index) + stage
};

// position and velocity stages of every body
typedef struct mbsCpaKin {
  int *joint, *pose, *vj, *v, *c, *bias, *force;
  int *scr; // 4 nbody of scratch for the method's graph (aba: the records' last writers)
} mbsCpaKin;

typedef struct mbsCpaCfs {
  int *T, *F, *D;       // per body: cfsPosition nodes
  int *up, *mid, *down; // per body: the last operator application
  int *leaf;            // scratch (nbody)
  int *part;            // scratch (ranks)
  int ctl;              // control dependency of the next application (-1: none)
  int napply;           // operator applications so far (phase ids)
  int *lw;              // closure rows: per body its last rows.wrench node of this application
  int lout;             // closure rows: the summed D^T a of the last application (-1: none)
} mbsCpaCfs;

/// The vectors of one constraint-force solve's graph (mbs_cpaCfs hands them to the row's
/// cpa_solve): the writers of b (rhs), ||b|| (bnorm), x (xn, the warm start: -1), scratch for an
/// estimate's discarded x (xe), r, p, z, four reduction leaves per body (lv) and the Lanczos
/// coefficients' nodes (lz, 64).
typedef struct mbsCpaVec {
  const int *rhs;
  int bnorm;
  int *xn, *xe, *rn, *pn, *zn, **lv, *lz;
} mbsCpaVec;

// per-rank state of the schur graph
typedef struct {
  mbsSchurRank *rk;
  int b0, b1, ghosted, chain;
  int fac_end;  // the last node of the rank's factor (all joins)
  int if_end;   // the rank's interface result (lambda of its cut joints known)
  int *vsys;    // (view ncomp) node of each rank-level system
  int *vexp;    // (view ncomp) tree pass: expansion node
  int kin_in;   // scan: the prefix's last node (ghost parent's pose and velocity)
  int *kin_msg; // pipeline: the message carrying the ghost parent's values, per owned body
  int pre_n;    // the overlapped factor (docs/formulation.md 4.4): bodies of its slices (b1 - 1
                // down) whose inertia part runs in the kinematics prefix's waits
  int pre_dep;  // ... after this node (the rank's local maps; -1: its joints alone)
} mbsCpaRank;

// the joint state message of a remote child and its stages on the parent's rank (ghost copies)
typedef struct {
  int *joint, *pose, *v, *c, *bias, *force; // (nbody) ghost copies (-1: none)
} mbsCpaGhost;

// the schur graph's state over its tree solves (one per evaluation; m + 2 in a loop model's,
// docs/cpa.md "Loop models"): the decomposition, the kinematics' nodes, and per body the nodes of
// the tree solve being built
struct mbsCpaSch {
  int P, use_scan, chain, defer;
  int radix; // of the chain's two scans (mbs_scanRadix)
  int *start;
  mbsCpaRank *R;
  int *map, *IAw, *pAw, *proj, *done, *stn, *acc, *lam, *spv, *gho, *gbuf, *kmsg, *fwdn;
  mbsCpaGhost G;
  int *pjoint; // the overlapped factor: the joint nodes of the position stage (own bodies, and
               // the remote children's copies by child), before the ranks' program order
};

// ---- the builders' primitives and shared pieces (defined in the files named)

void mbs_cpaKinematics(mbsCpaB *B, mbsCpaKin *K);
/// the kinematics' nodes as the tree solves of the serial and constraint-force methods see them
/// (class kin), then the class dyn for what follows
void mbs_cpaKinStage(mbsCpaB *B, mbsCpaKin *K);

// src/critpath.c
double mbs_cpaFlopTime(const mbsCpaOptions *o, int cls);
int mbs_cpaNode(mbsCpaB *B, int kind, int body, long long flops, int pblk, int pbdy);
int mbs_cpaOwner(const mbsCpaB *B, int b);
void mbs_cpaDep(mbsCpaB *B, int from, int to);
/// A point-to-point message of \p bytes after node \p from (time alpha + bytes beta, no
/// processor; src/schur/schur_cpa.c): schur's graphs and the flexible distributed elimination's.
int mbs_cpaMsg(mbsCpaB *B, double bytes, int from);

// src/dynamics_cpa.c
int mbs_cpaAbaBody(mbsCpaB *B, const mbsCpaKin *K, int b, int *IAw, int *pAw, int *proj);
int mbs_cpaAbaFwdBody(mbsCpaB *B, const mbsCpaKin *K, int b, int accp, int spike, const int *IAw,
                      const int *pAw, const int *proj, int homog, int *fn);
void mbs_cpaAba(mbsCpaB *B, const mbsCpaKin *K, int *IAw, int *pAw, int *proj, int *acc);
mbsErr mbs_cpaCrba(mbsCpaB *B, const mbsCpaKin *K);

// src/cfs_cpa.c
int mbs_cpaLoopKept(const mbsModel *m, const unsigned char *skip, int k);
void mbs_cpaApply(mbsCpaB *B, const mbsCpaKin *K, mbsCpaCfs *C, int known, const int *xn);
void mbs_cpaApplyColour(mbsCpaB *B, const mbsCpaKin *K, mbsCpaCfs *C, const int *xn,
                        const int *color, int ncolor, const int *lcol, int pc, int col);
void mbs_cpaReduce(mbsCpaB *B, mbsCpaCfs *C, int nd, int *const *leaves, int *result);
int mbs_cpaResidRows(mbsCpaB *B, const mbsCpaCfs *C, int b, int prev, int nrow, int ph);
int mbs_cpaResidNode(mbsCpaB *B, const mbsCpaCfs *C, int b, int prev, int ph);
int mbs_cpaPrecondNode(mbsCpaB *B, const mbsCpaCfs *C, int b, int r, int ph);
int mbs_cpaLeaf(mbsCpaB *B, int b, int src, int src2, int ph);
void mbs_cpaResidual(mbsCpaB *B, mbsCpaCfs *C, const int *prev, int ph, int *rn, int *zn);
int mbs_cpaCheckIt(const mbsCpaOptions *o, int it, int last);
int mbs_cpaTest(mbsCpaB *B, const int *red, int bnorm);
int mbs_cpaNormTest(mbsCpaB *B, mbsCpaCfs *C, const int *src0, const int *src1, const int *src2,
                    int ph, int bnorm, int **lv);
mbsErr mbs_cpaCfs(mbsCpaB *B, const mbsCpaKin *K);

// src/solver_jacobi.c
void mbs_cpaJacobi(mbsCpaB *B, mbsCpaCfs *C, const mbsCpaKin *K, const int *rhs, int bnorm,
                   int omega, int *xn, int *rn, int *zn, int **lv);

// src/solver_jcg.c
int mbs_cpaConfirm(mbsCpaB *B, mbsCpaCfs *C, const mbsCpaKin *K, const int *rhs, int bnorm,
                   int prev, int missed, int *xn, int *rn, int *zn, int **lv, int *rz);
void mbs_cpaCg(mbsCpaB *B, mbsCpaCfs *C, const mbsCpaKin *K, const int *rhs, int bnorm, int iters,
               int converged, int change, const mbsCgTrace *rs, int *lz, int *xn, int *rn, int *pn,
               int *zn, int **lv);
void mbs_cpaSpectrum(mbsCpaB *B, const int *lz, int k, int *ends);

// src/solver_chebyshev.c
void mbs_cpaChebyshev(mbsCpaB *B, mbsCpaCfs *C, const mbsCpaKin *K, const int *rhs, int bnorm,
                      int ival, int iters, int converged, int win, int stalled,
                      const mbsCgTrace *rs, int seg, int *xn, int *rn, int *dn, int **lv);

// src/solver_sor.c
mbsErr mbs_cpaSor(mbsCpaB *B, mbsCpaCfs *C, const mbsCpaKin *K, const int *rhs, int bnorm, int *xn,
                  int *rn, int *zn, int **lv);

// src/solver_direct.c
mbsErr mbs_cpaDirect(mbsCpaB *B, mbsCpaCfs *C, const int *rhs, int *xn);

// src/schur/schur_cpa.c
int mbs_cpaNodeOn(mbsCpaB *B, int kind, int body, long long flops, int pblk, int pbdy, int rank);
int mbs_cpaLog2(int P);
/// ceil(log_k P): the rounds of a radix-k scan (mbsp_exscan, mbsp_schurScan) or of the split
/// error agreement's dissemination (mbsp_agreeErrStart) over P ranks.
int mbs_cpaLogK(int P, int k);
void mbs_cpaSchFree(mbsCpaSch *X);
mbsErr mbs_cpaSchBegin(mbsCpaB *B, mbsCpaKin *K, mbsCpaSch *X);
mbsErr mbs_cpaSchSolve(mbsCpaB *B, const mbsCpaKin *K, mbsCpaSch *X, int later, int homog);

// src/flex_cpa.c, src/flex_part_cpa.c: the recursive flexible algorithm's graphs
/// nz (6 + m), the pass-1 kinematics' flops kin and the body's own M, h flops body, per body.
mbsErr mbs_cpaFlexCosts(const mbsModel *m, int *nz, long long *kin, long long *body);
/// The distributed elimination (src/flex_part.c) over B->o->ranks parts.
mbsErr mbs_cpaFlexPartGraph(mbsCpaB *B, const int *nz, const long long *kin, const long long *body);
/// The constraint-force system's methods with flexible bodies (src/flex_cfs.c: direct, jcg, gs,
/// sor, jacobi, chebyshev by B->o->method) on B->o->ranks ranks (0: data flow).
mbsErr mbs_cpaFlexCfsGraph(mbsCpaB *B, const int *nz, const long long *kin, const long long *body);

// src/loops_cpa.c
int mbs_cpaSync(mbsCpaB *B, int n0, int n1);
int mbs_cpaLoopReduce(mbsCpaB *B, double nd, int bcast, int after);
long long mbs_cpaLoopRowsFlops(const mbsModel *m, int k, int stab, char *mark);
mbsErr mbs_cpaLoops(mbsCpaB *B, const mbsCpaKin *K, int graph);

#endif
