/// \file critpath.c
/// The critical-path analyser: data-flow graphs of one forward-dynamics evaluation (ABA, CRBA +
/// LTDL, the constraint-force method with J-CG), their analysis (T1, T∞, critical path) and list
/// schedules. Every node cost is a flop count from src/flops.h, the same expression the
/// instrumented kernels add to mbs_flop_count at the matching call site, so T1 equals the counted
/// flops of a real evaluation (mpi-tests/test_cpa.c). The builders mirror the loops of
/// dynamics.c and cfs.c one call site at a time; docs/cpa.md describes the graph model.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_cfs.h"
#include "mbspar/mbs_critpath.h"
#include "mbspar/mbs_joint.h"
#include "mbspar/mbs_loops.h"
#include "mbspar/mbs_solver.h"
#include "mbspar/mbs_solvertype.h"
#include "flops.h"

unsigned long long mbs_flop_count = 0;
void (*mbs_flop_sink)(void) = NULL;

static const char *const mbs_cpa_kind_names[MBS_CPA_KIND_COUNT] = {
#define MBS_CPA_KIND_NAME(id, name) name,
    MBS_CPA_KIND_LIST(MBS_CPA_KIND_NAME)
#undef MBS_CPA_KIND_NAME
};

static const char *const mbs_cpa_class_names[MBS_CPA_CLASS_COUNT] = {
#define MBS_CPA_CLASS_NAME(id, name) name,
    MBS_CPA_CLASS_LIST(MBS_CPA_CLASS_NAME)
#undef MBS_CPA_CLASS_NAME
};

const char *mbs_cpaClassName(int cls) {
  return cls >= 0 && cls < MBS_CPA_CLASS_COUNT ? mbs_cpa_class_names[cls] : "?";
}

const char *mbs_cpaKindName(int kind) {
  return kind >= 0 && kind < MBS_CPA_KIND_COUNT ? mbs_cpa_kind_names[kind] : "?";
}

static const char *const mbs_cpa_grain_names[] = {"op", "block", "body", "flop"};

const char *mbs_cpaGrainName(int grain) {
  return grain >= 0 && grain <= 3 ? mbs_cpa_grain_names[grain] : "?";
}

int mbs_cpaGrainFromName(const char *name) {
  for (int k = 0; k < 4; k++)
    if (name && !strcmp(name, mbs_cpa_grain_names[k])) return k;
  return -1;
}

void mbs_cpaDefaults(mbsCpaOptions *o) {
  memset(o, 0, sizeof *o);
  o->method = MBS_SOLVER_ABA;
  o->grain = MBS_CPA_GRAIN_OP;
  o->iterations = 10;
  o->criterion = MBS_CRIT_RESIDUAL;
  o->check_every = 1;
  o->flop_time = 1e-9;
  o->latency = 1.5e-6;
  o->bandwidth = 5e9;
  o->loop_rank = o->loop_zero = -1;
}

// ---------------------------------------------------------------- builder

/// Bytes of one halo message (a spatial vector: 6 doubles).
#define MBS_CPA_MSG_BYTES 48

typedef struct {
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
  int phoff;                                  // phase offset of the tree solve being built
  struct mbsCpaSch *sch;                      // schur: the graph's state over its tree solves
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
static int mbs_cpaNl(const mbsCpaB *B, int b) {
  return B->m->body_lamnum[b] + (B->lrows && b == B->m->nbody - 1 ? B->lrows : 0);
}
typedef struct mbsCpaSch mbsCpaSch;

// seconds per flop of kernel class cls
static double mbs_cpaFlopTime(const mbsCpaOptions *o, int cls) {
  return o->class_time[cls] > 0 ? o->class_time[cls] : o->flop_time;
}

static int mbs_cpaGrow(void **p, int *cap, int need, size_t sz) {
  (void)cap;
  void *q = realloc(*p, (size_t)need * sz);
  if (!q) return 0;
  *p = q;
  return 1;
}

// a node; body >= 0 binds it to the body's owner rank in distributed graphs; pblk/pbdy are the
// phase ids used to merge nodes at block and body grain (-1: never merged)
static int mbs_cpaNode(mbsCpaB *B, int kind, int body, long long flops, int pblk, int pbdy) {
  if (B->err) return -1;
  if (B->n == B->cap) {
    int nc = B->cap ? 2 * B->cap : 1024, ok = 1;
    ok = ok && mbs_cpaGrow((void **)&B->flops, &B->cap, nc, sizeof *B->flops);
    ok = ok && mbs_cpaGrow((void **)&B->cost, &B->cap, nc, sizeof *B->cost);
    ok = ok && mbs_cpaGrow((void **)&B->kind, &B->cap, nc, sizeof *B->kind);
    ok = ok && mbs_cpaGrow((void **)&B->body, &B->cap, nc, sizeof *B->body);
    ok = ok && mbs_cpaGrow((void **)&B->proc, &B->cap, nc, sizeof *B->proc);
    ok = ok && mbs_cpaGrow((void **)&B->pblk, &B->cap, nc, sizeof *B->pblk);
    ok = ok && mbs_cpaGrow((void **)&B->pbdy, &B->cap, nc, sizeof *B->pbdy);
    if (!ok) {
      B->err = 1;
      return -1;
    }
    B->cap = nc;
  }
  int v = B->n++;
  B->flops[v] = flops;
  B->cost[v] = (double)flops * mbs_cpaFlopTime(B->o, B->cls);
  B->class_flops[B->cls] += flops;
  B->kind[v] = kind;
  B->body[v] = body;
  B->proc[v] = (B->o->ranks >= 1 && body >= 0) ? B->owner[body] : -1;
  B->pblk[v] = pblk >= 0 ? pblk + B->phoff : pblk;
  B->pbdy[v] = pbdy >= 0 ? pbdy + B->phoff : pbdy;
  return v;
}

// the rank owning body b in distributed graphs (0 in data-flow graphs, one rank)
static int mbs_cpaOwner(const mbsCpaB *B, int b) {
  return B->o->ranks >= 1 ? B->owner[b] : 0;
}

// a data dependency from -> to (ignored if either is absent)
static void mbs_cpaDep(mbsCpaB *B, int from, int to) {
  if (B->err || from < 0 || to < 0 || from == to) return;
  if (B->ne == B->ecap) {
    int nc = B->ecap ? 2 * B->ecap : 4096, ok = 1;
    ok = ok && mbs_cpaGrow((void **)&B->esrc, &B->ecap, nc, sizeof *B->esrc);
    ok = ok && mbs_cpaGrow((void **)&B->edst, &B->ecap, nc, sizeof *B->edst);
    if (!ok) {
      B->err = 1;
      return;
    }
    B->ecap = nc;
  }
  B->esrc[B->ne] = from;
  B->edst[B->ne] = to;
  B->ne++;
}

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
typedef struct {
  int *joint, *pose, *vj, *v, *c, *bias, *force;
} mbsCpaKin;

static void mbs_cpaKinematics(mbsCpaB *B, mbsCpaKin *K) {
  const mbsModel *m = B->m;
  for (int b = 0; b < m->nbody; b++) {
    int t = m->body_jnttype[b], p = m->body_parent[b], nd = m->body_dofnum[b];
    // position: joint transform (X, S), ground pose (a prefix product along the tree)
    K->joint[b] = mbs_cpaNode(B, MBS_CPA_POS_JOINT, b, mbs_flopPosBody(m, b), PH_POS, 0);
    if (p >= 0) {
      K->pose[b] = mbs_cpaNode(B, MBS_CPA_POS_POSE, b, mbs_flopPoseBody(m, b), PH_POS, 0);
      mbs_cpaDep(B, K->joint[b], K->pose[b]);
      mbs_cpaDep(B, K->pose[p], K->pose[b]);
    } else {
      K->pose[b] = K->joint[b];
    }
    // velocity: vJ, v = X v_p + vJ, c, bias force, applied joint forces
    K->vj[b] = mbs_cpaNode(B, MBS_CPA_VEL_JOINT, b, mbs_flopVelJointBody(m, b), PH_VEL, 0);
    mbs_cpaDep(B, K->joint[b], K->vj[b]);
    if (p >= 0) {
      K->v[b] = mbs_cpaNode(B, MBS_CPA_VEL_LINK, b, mbs_flopVelLinkBody(m, b), PH_VEL, 0);
      mbs_cpaDep(B, K->v[p], K->v[b]);
      mbs_cpaDep(B, K->joint[b], K->v[b]);
      mbs_cpaDep(B, K->vj[b], K->v[b]);
    } else {
      K->v[b] = K->vj[b];
    }
    K->c[b] = mbs_cpaNode(B, MBS_CPA_VEL_C, b, mbs_flopVelCBody(m, b), PH_VEL, 0);
    mbs_cpaDep(B, K->v[b], K->c[b]);
    mbs_cpaDep(B, K->vj[b], K->c[b]);
    K->bias[b] = mbs_cpaNode(B, MBS_CPA_VEL_BIAS, b, MBS_FL_VEL_BIAS, PH_VEL, 0);
    mbs_cpaDep(B, K->v[b], K->bias[b]);
    K->force[b] =
        mbs_cpaNode(B, MBS_CPA_VEL_FORCE, b, mbs_flopVelForce(nd, t, B->o->has_tau), PH_VEL, 0);
  }
}

// ---- ABA (aba.c mbs_aba)
// ABA pass 2 of one body (mbs_abaBodyBack; mbs_cpaAba and the schur graph); IAw/pAw: last writers
// of the records; returns the last node of the body's own projection (proj[b] = the record's U)
static int mbs_cpaAbaBody(mbsCpaB *B, const mbsCpaKin *K, int b, int *IAw, int *pAw, int *proj) {
  const mbsModel *m = B->m;
  int k = m->body_dofnum[b], p = m->body_parent[b], ia = -1, pa = -1, last = -1;
  proj[b] = -1;
  if (k >= 1) {
    int u = mbs_cpaNode(B, MBS_CPA_ABA_U, b, mbs_flopAba(m, b, MBS_FLA_U), PH_P2, 1);
    mbs_cpaDep(B, IAw[b], u);
    mbs_cpaDep(B, pAw[b], u);
    mbs_cpaDep(B, K->joint[b], u);
    mbs_cpaDep(B, K->force[b], u);
    proj[b] = last = u;
    if (k > 1) {
      int blk = mbs_cpaNode(B, MBS_CPA_ABA_BLOCK, b, mbs_flopAba(m, b, MBS_FLA_BLOCK), PH_P2, 1);
      mbs_cpaDep(B, u, blk);
      mbs_cpaDep(B, K->c[b], blk);
      mbs_cpaDep(B, IAw[b], blk);
      mbs_cpaDep(B, pAw[b], blk);
      proj[b] = ia = pa = last = blk;
    } else if (p >= 0) {
      ia = mbs_cpaNode(B, MBS_CPA_ABA_IA, b, mbs_flopAba(m, b, MBS_FLA_IA), PH_P2, 1);
      mbs_cpaDep(B, u, ia);
      mbs_cpaDep(B, IAw[b], ia);
      pa = mbs_cpaNode(B, MBS_CPA_ABA_PA, b, mbs_flopAba(m, b, MBS_FLA_PA), PH_P2, 1);
      mbs_cpaDep(B, u, pa);
      mbs_cpaDep(B, K->c[b], pa);
      mbs_cpaDep(B, IAw[b], pa);
      mbs_cpaDep(B, pAw[b], pa);
    }
  } else if (p >= 0) {
    ia = IAw[b];
    pa = mbs_cpaNode(B, MBS_CPA_ABA_PA, b, mbs_flopAba(m, b, MBS_FLA_PA), PH_P2, 1);
    mbs_cpaDep(B, K->c[b], pa);
    mbs_cpaDep(B, IAw[b], pa);
    mbs_cpaDep(B, pAw[b], pa);
  }
  if (p < 0) return last;
  int cf = mbs_cpaNode(B, MBS_CPA_ABA_CONGR, b, mbs_flopAba(m, b, MBS_FLA_CONGR), PH_P2, 1);
  mbs_cpaDep(B, ia, cf);
  mbs_cpaDep(B, K->joint[b], cf);
  int ca = mbs_cpaNode(B, MBS_CPA_ABA_CONGR_ACC, b, mbs_flopAba(m, b, MBS_FLA_CONGR_ACC), PH_P2, 1);
  mbs_cpaDep(B, cf, ca);
  mbs_cpaDep(B, IAw[p], ca);
  IAw[p] = ca;
  int xf = mbs_cpaNode(B, MBS_CPA_ABA_XF, b, mbs_flopAba(m, b, MBS_FLA_XF), PH_P2, 1);
  mbs_cpaDep(B, pa, xf);
  mbs_cpaDep(B, K->joint[b], xf);
  int xa = mbs_cpaNode(B, MBS_CPA_ABA_XF_ACC, b, mbs_flopAba(m, b, MBS_FLA_XF_ACC), PH_P2, 1);
  mbs_cpaDep(B, xf, xa);
  mbs_cpaDep(B, pAw[p], xa);
  pAw[p] = xa;
  return xa;
}

// ABA pass 3 of one body (mbs_abaBodyFwd; spike: mbs_abaBodyFwdSpike); returns the node of qdd
// and the body's acceleration, *fn the joint wrench
static int mbs_cpaAbaFwdBody(mbsCpaB *B, const mbsCpaKin *K, int b, int accp, int spike,
                             const int *IAw, const int *pAw, const int *proj, int homog, int *fn) {
  const mbsModel *m = B->m;
  int a = mbs_cpaNode(B, MBS_CPA_ABA_A, b,
                      mbs_flopAba(m, b, MBS_FLA_A) +
                          (spike >= 0 ? mbs_flopFwdSpikeBody(m, b, !homog) : 0),
                      PH_P3, 2);
  mbs_cpaDep(B, accp, a);
  mbs_cpaDep(B, K->joint[b], a);
  mbs_cpaDep(B, K->c[b], a);
  mbs_cpaDep(B, spike, a);
  int q = mbs_cpaNode(B, MBS_CPA_ABA_QDD, b, mbs_flopAba(m, b, MBS_FLA_QDD), PH_P3, 2);
  mbs_cpaDep(B, a, q);
  mbs_cpaDep(B, proj[b], q);
  *fn = -1;
  if (homog) return q; // a loop layer's unit solve: no joint wrench
  int f = mbs_cpaNode(B, MBS_CPA_ABA_F, b, mbs_flopAba(m, b, MBS_FLA_F), PH_P3, 2);
  mbs_cpaDep(B, q, f);
  mbs_cpaDep(B, IAw[b], f);
  mbs_cpaDep(B, pAw[b], f);
  *fn = f;
  return q;
}

static void mbs_cpaAba(mbsCpaB *B, const mbsCpaKin *K, int *IAw, int *pAw, int *proj, int *acc) {
  const mbsModel *m = B->m;
  int n = m->nbody;
  for (int b = 0; b < n; b++) IAw[b] = -1, pAw[b] = K->bias[b];
  // pass 2, tip to base; IAw/pAw: last writer of IA_b / pA_b (the children's accumulation chain)
  for (int b = n - 1; b >= 0; b--) mbs_cpaAbaBody(B, K, b, IAw, pAw, proj);
  // pass 3, base to tip
  for (int b = 0; b < n; b++) {
    int p = m->body_parent[b], fn;
    acc[b] = mbs_cpaAbaFwdBody(B, K, b, p >= 0 ? acc[p] : -1, -1, IAw, pAw, proj, 0, &fn);
  }
}

// ---- RNEA (dynamics.c mbs_rnea); qddn: per dof the node that produced qdd (NULL: no qdd)
static void mbs_cpaRnea(mbsCpaB *B, const mbsCpaKin *K, const int *qddn, int phf, int phb, int *acc,
                        int *frw, int *tau) {
  const mbsModel *m = B->m;
  int n = m->nbody;
  for (int b = 0; b < n; b++) {
    int k = m->body_dofnum[b], p = m->body_parent[b], d0 = m->body_dofadr[b];
    int a = mbs_cpaNode(B, MBS_CPA_RNEA_A, b, MBS_FL_RNEA_A + (qddn ? 12L * k : 0), phf, phf);
    if (p >= 0) mbs_cpaDep(B, acc[p], a);
    mbs_cpaDep(B, K->joint[b], a);
    mbs_cpaDep(B, K->c[b], a);
    if (qddn)
      for (int j = 0; j < k; j++) mbs_cpaDep(B, qddn[d0 + j], a);
    acc[b] = a;
    frw[b] = mbs_cpaNode(B, MBS_CPA_RNEA_F, b, MBS_FL_RNEA_F, phf, phf);
    mbs_cpaDep(B, a, frw[b]);
    mbs_cpaDep(B, K->bias[b], frw[b]);
  }
  for (int b = n - 1; b >= 0; b--) {
    int k = m->body_dofnum[b], p = m->body_parent[b];
    tau[b] = mbs_cpaNode(B, MBS_CPA_RNEA_QINV, b, (long long)MBS_FL_DOT6 * k, phb, phb);
    mbs_cpaDep(B, frw[b], tau[b]);
    mbs_cpaDep(B, K->joint[b], tau[b]);
    if (p < 0) continue;
    int xf = mbs_cpaNode(B, MBS_CPA_RNEA_XF, b, MBS_FL_XFORCE, phb, phb);
    mbs_cpaDep(B, frw[b], xf);
    mbs_cpaDep(B, K->joint[b], xf);
    int xa = mbs_cpaNode(B, MBS_CPA_RNEA_XF_ACC, b, MBS_FL_RNEA_PF - MBS_FL_XFORCE, phb, phb);
    mbs_cpaDep(B, xf, xa);
    mbs_cpaDep(B, frw[p], xa);
    frw[p] = xa;
  }
}

// ---- CRBA + LTDL (dynamics.c mbs_crba)
static mbsErr mbs_cpaCrba(mbsCpaB *B, const mbsCpaKin *K) {
  const mbsModel *m = B->m;
  int n = m->nbody, nv = m->nv;
  const int *lam = m->dof_parent;
  int *acc = NULL, *frw = NULL, *tau = NULL, *Icw = NULL, *row = NULL, *dbody = NULL, *dd = NULL;
  int *Lstart = NULL, *Lnum = NULL, *rhs = NULL, *back = NULL, *divn = NULL, *fwd = NULL;
  int *cadr = NULL, *clist = NULL;
  mbsErr e = MBS_OK;
  size_t nb = (size_t)n + 1, nd = (size_t)nv + 1;
  acc = malloc(nb * sizeof *acc), frw = malloc(nb * sizeof *frw), tau = malloc(nb * sizeof *tau);
  Icw = malloc(nb * sizeof *Icw), row = malloc(nd * sizeof *row),
  dbody = malloc(nd * sizeof *dbody);
  dd = malloc(nd * sizeof *dd), Lstart = malloc(nd * sizeof *Lstart);
  Lnum = malloc(nd * sizeof *Lnum), rhs = malloc(nd * sizeof *rhs),
  back = malloc(nd * sizeof *back);
  divn = malloc(nd * sizeof *divn), fwd = malloc(nd * sizeof *fwd);
  cadr = calloc(nd + 1, sizeof *cadr), clist = malloc(nd * sizeof *clist);
  if (!acc || !frw || !tau || !Icw || !row || !dbody || !dd || !Lstart || !Lnum || !rhs || !back ||
      !divn || !fwd || !cadr || !clist) {
    e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
    goto done;
  }
  // dof -> body, dof depth (dofs on the path to the ground), dof children lists
  for (int b = 0; b < n; b++)
    for (int j = 0; j < m->body_dofnum[b]; j++) dbody[m->body_dofadr[b] + j] = b;
  for (int i = 0; i < nv; i++) dd[i] = 1 + (lam[i] >= 0 ? dd[lam[i]] : 0);
  for (int i = 0; i < nv; i++)
    if (lam[i] >= 0) cadr[lam[i] + 1]++;
  for (int i = 0; i < nv; i++) cadr[i + 1] += cadr[i];
  {
    int *fill = Lnum; // scratch
    for (int i = 0; i < nv; i++) fill[i] = cadr[i];
    for (int i = 0; i < nv; i++)
      if (lam[i] >= 0) clist[fill[lam[i]]++] = i;
  }

  // bias forces: RNEA with zero acceleration
  mbs_cpaRnea(B, K, NULL, PH_RNEA1F, PH_RNEA1B, acc, frw, tau);
  // composite inertias (congruences formed in parallel, accumulated per parent in a chain)
  for (int b = 0; b < n; b++) Icw[b] = -1;
  for (int b = n - 1; b >= 0; b--) {
    int p = m->body_parent[b];
    if (p < 0) continue;
    int cf = mbs_cpaNode(B, MBS_CPA_CRBA_CONGR, b, MBS_FL_CONGR_FORM, PH_COMP, PH_RNEA1B);
    mbs_cpaDep(B, Icw[b], cf);
    mbs_cpaDep(B, K->joint[b], cf);
    int ca = mbs_cpaNode(B, MBS_CPA_CRBA_CONGR_ACC, b, MBS_FL_CONGR_ACC, PH_COMP, PH_RNEA1B);
    mbs_cpaDep(B, cf, ca);
    mbs_cpaDep(B, Icw[p], ca);
    Icw[p] = ca;
  }
  // joint-space inertia: per dof F = Ic S, then the walk to the ground
  for (int b = 0; b < n; b++) {
    int k = m->body_dofnum[b], d0 = m->body_dofadr[b];
    for (int j = 0; j < k; j++) {
      int last = mbs_cpaNode(B, MBS_CPA_CRBA_F, b, MBS_FL_MUL6 + (long long)MBS_FL_DOT6 * k,
                             PH_HCOL, PH_HCOL);
      mbs_cpaDep(B, Icw[b], last);
      mbs_cpaDep(B, K->joint[b], last);
      for (int a = b; m->body_parent[a] >= 0;) {
        int na = m->body_parent[a];
        int wn = mbs_cpaNode(B, MBS_CPA_CRBA_WALK, b,
                             MBS_FL_XFORCE + (long long)MBS_FL_DOT6 * m->body_dofnum[na], PH_HCOL,
                             PH_HCOL);
        mbs_cpaDep(B, last, wn);
        mbs_cpaDep(B, K->joint[a], wn);
        mbs_cpaDep(B, K->joint[na], wn);
        last = wn;
        a = na;
      }
      row[d0 + j] = last;
    }
  }
  // LTDL: update (k, i) for every ancestor i of k; row[i] is the last writer of row i
  for (int k = nv - 1; k >= 0; k--) {
    int rk = row[k];
    Lstart[k] = B->n;
    Lnum[k] = 0;
    for (int i = lam[k]; i >= 0; i = lam[i]) {
      int L = mbs_cpaNode(B, MBS_CPA_LTDL, dbody[k], 1 + 2LL * dd[i], PH_LTDL, PH_LTDL);
      mbs_cpaDep(B, rk, L);
      mbs_cpaDep(B, row[i], L);
      row[i] = L;
      Lnum[k]++;
    }
  }
  // solve L^T D L x = tau - bias: right side, back substitution, diagonal, forward substitution
  for (int i = 0; i < nv; i++) {
    rhs[i] = mbs_cpaNode(B, MBS_CPA_SOL_RHS, dbody[i], 1, PH_SOLB, PH_SOLB);
    mbs_cpaDep(B, K->force[dbody[i]], rhs[i]);
    mbs_cpaDep(B, tau[dbody[i]], rhs[i]);
  }
  for (int i = nv - 1; i >= 0; i--) {
    back[i] = mbs_cpaNode(B, MBS_CPA_SOL_BACK, dbody[i], 2LL * (dd[i] - 1), PH_SOLB, PH_SOLB);
    mbs_cpaDep(B, rhs[i], back[i]);
    for (int c = cadr[i]; c < cadr[i + 1]; c++) mbs_cpaDep(B, back[clist[c]], back[i]);
    for (int l = 0; l < Lnum[i]; l++) mbs_cpaDep(B, Lstart[i] + l, back[i]);
  }
  for (int i = 0; i < nv; i++) {
    divn[i] = mbs_cpaNode(B, MBS_CPA_SOL_DIV, dbody[i], 1, PH_SOLD, PH_SOLD);
    mbs_cpaDep(B, rhs[i], divn[i]);
    mbs_cpaDep(B, row[i], divn[i]);
    for (int c = cadr[i]; c < cadr[i + 1]; c++) mbs_cpaDep(B, back[clist[c]], divn[i]);
  }
  for (int i = 0; i < nv; i++) {
    fwd[i] = mbs_cpaNode(B, MBS_CPA_SOL_FWD, dbody[i], 2LL * (dd[i] - 1), PH_SOLF, PH_SOLF);
    mbs_cpaDep(B, divn[i], fwd[i]);
    if (lam[i] >= 0) mbs_cpaDep(B, fwd[lam[i]], fwd[i]);
    for (int l = 0; l < Lnum[i]; l++) mbs_cpaDep(B, Lstart[i] + l, fwd[i]);
  }
  // accelerations and joint wrenches: RNEA with qdd
  mbs_cpaRnea(B, K, fwd, PH_RNEA2F, PH_RNEA2B, acc, frw, tau);
done:
  free(acc), free(frw), free(tau), free(Icw), free(row), free(dbody), free(dd), free(Lstart);
  free(Lnum), free(rhs), free(back), free(divn), free(fwd), free(cadr), free(clist);
  return e;
}

// ---- the constraint-force method with J-CG (cfs.c)

// (the loop layer's helpers, defined with it below)
static int mbs_cpaSync(mbsCpaB *B, int n0, int n1);
static int mbs_cpaLoopReduce(mbsCpaB *B, double nd, int bcast, int after);
static long long mbs_cpaLoopRowsFlops(const mbsModel *m, int k, int stab, char *mark);

// closure rows of loop k that are not zero rows (skip: the zero rows, NULL: none)
static int mbs_cpaLoopKept(const mbsModel *m, const unsigned char *skip, int k) {
  int i0 = m->loop_lamadr[k] - m->nlam, nr = 0;
  for (int r = 0; r < m->loop_lamnum[k]; r++) nr += !(skip && skip[i0 + r]);
  return nr;
}

typedef struct {
  int *T, *F, *D;       // per body: cfsPosition nodes
  int *up, *mid, *down; // per body: the last operator application
  int *leaf;            // scratch (nbody)
  int *part;            // scratch (ranks)
  int ctl;              // control dependency of the next application (-1: none)
  int napply;           // operator applications so far (phase ids)
  int *lw;              // closure rows: per body its last rows.wrench node of this application
  int lout;             // closure rows: the summed D^T a of the last application (-1: none)
} mbsCpaCfs;

// closure rows before an application (mbs_cfsLoopWrenches): their x on every rank (an allreduce
// of lrows from the owner of the last body), then per loop and owned side the wrench pairs D x
static void mbs_cpaRowsIn(mbsCpaB *B, mbsCpaCfs *C, const int *xn) {
  const mbsModel *m = B->m;
  int own = m->nbody - 1;
  int src = mbs_cpaNode(B, MBS_CPA_ROWS_X, own, 0, -1, -1);
  if (xn) mbs_cpaDep(B, xn[own], src);
  mbs_cpaDep(B, C->ctl, src);
  mbs_cpaDep(B, B->lsetup, src);
  int lx = mbs_cpaLoopReduce(B, B->lrows, 0, src);
  for (int b = 0; b < m->nbody; b++) C->lw[b] = -1;
  for (int k = 0; k < m->nloop; k++)
    for (int side = 0; side < 2; side++) {
      int b = m->loop_body[2 * k + side];
      if (b < 0) continue;
      int v =
          mbs_cpaNode(B, MBS_CPA_ROWS_WRENCH, b, mbs_flopLoopRowWrench(m->loop_lamnum[k]), -1, -1);
      mbs_cpaDep(B, lx, v);
      mbs_cpaDep(B, C->lw[b], v);
      C->lw[b] = v;
    }
}

// closure rows after an application (mbs_cfsLoopOutputs): D^T a per loop and side (the ground
// side on the rows' owner), summed over the ranks; the last body's outputs then include them
static void mbs_cpaRowsOut(mbsCpaB *B, mbsCpaCfs *C, int ph) {
  const mbsModel *m = B->m;
  int own = m->nbody - 1, n0 = B->n;
  for (int k = 0; k < m->nloop; k++)
    for (int side = 0; side < 2; side++) {
      int b = m->loop_body[2 * k + side];
      int v = mbs_cpaNode(B, MBS_CPA_ROWS_DOT, b >= 0 ? b : own,
                          (long long)MBS_FL_LOOP_DOT * m->loop_lamnum[k], -1, -1);
      if (b >= 0) mbs_cpaDep(B, C->mid[b], v);
    }
  int sum = mbs_cpaSync(B, n0, B->n);
  if (sum >= 0 && B->o->ranks >= 1) B->proc[sum] = B->owner[own];
  C->lout = mbs_cpaLoopReduce(B, B->lrows, 0, sum);
  // (in the phases of the body's down node: merged with it at block and body grain)
  int j = mbs_cpaNode(B, MBS_CPA_LOOP_SYNC, own, 0, ph + 2, ph + 1);
  mbs_cpaDep(B, C->down[own], j);
  mbs_cpaDep(B, C->lout, j);
  C->down[own] = j;
}

// one body's passes of an operator application of phase ph (mbs_cfsUpBody, mbs_cfsMidBody,
// mbs_cfsDownBody): the node, its flops and what it reads; C->up/mid/down[b] receive it
static void mbs_cpaUpNode(mbsCpaB *B, const mbsCpaKin *K, mbsCpaCfs *C, int known, const int *xn,
                          int b, int ph) {
  const mbsModel *m = B->m;
  long long f = mbs_flopCfsUp(m->body_lamnum[b], m->body_dofnum[b], known, m->body_parent[b] >= 0);
  C->up[b] = mbs_cpaNode(B, MBS_CPA_CFS_UP, b, f, ph, ph);
  if (xn) mbs_cpaDep(B, xn[b], C->up[b]);
  mbs_cpaDep(B, C->ctl, C->up[b]);
  mbs_cpaDep(B, C->T[b], C->up[b]);
  mbs_cpaDep(B, K->joint[b], C->up[b]);
  if (known) {
    mbs_cpaDep(B, C->F[b], C->up[b]);
    mbs_cpaDep(B, K->force[b], C->up[b]);
  }
}

static void mbs_cpaMidNode(mbsCpaB *B, const mbsCpaKin *K, mbsCpaCfs *C, int known, int b, int ph) {
  const mbsModel *m = B->m;
  long long fx = known && B->fext ? 6 : 0; // + f_ext (spring-dampers, loop wrenches)
  if (B->lrows && B->lbody[b]) fx += 6;    // + the closure rows' wrench pairs
  C->mid[b] = mbs_cpaNode(B, MBS_CPA_CFS_MID, b, mbs_flopCfsMid(m->body_childnum[b], known) + fx,
                          ph + 1, ph);
  mbs_cpaDep(B, C->up[b], C->mid[b]);
  if (B->lrows) mbs_cpaDep(B, C->lw[b], C->mid[b]);
  const int *ch = m->child_list + m->body_childadr[b];
  for (int k = 0; k < m->body_childnum[b]; k++) mbs_cpaDep(B, C->up[ch[k]], C->mid[b]);
  if (known) mbs_cpaDep(B, K->bias[b], C->mid[b]);
}

static void mbs_cpaDownNode(mbsCpaB *B, const mbsCpaKin *K, mbsCpaCfs *C, int b, int ph) {
  const mbsModel *m = B->m;
  int p = m->body_parent[b];
  C->down[b] =
      mbs_cpaNode(B, MBS_CPA_CFS_DOWN, b, mbs_flopCfsDown(m->body_lamnum[b]), ph + 2, ph + 1);
  if (p >= 0) mbs_cpaDep(B, C->mid[p], C->down[b]);
  mbs_cpaDep(B, C->mid[b], C->down[b]);
  mbs_cpaDep(B, K->joint[b], C->down[b]);
  mbs_cpaDep(B, C->T[b], C->down[b]);
}

static void mbs_cpaApply(mbsCpaB *B, const mbsCpaKin *K, mbsCpaCfs *C, int known, const int *xn) {
  int n = B->m->nbody, ph = PH_ITER + 8 * C->napply++;
  if (B->lrows) mbs_cpaRowsIn(B, C, xn);
  for (int b = 0; b < n; b++) mbs_cpaUpNode(B, K, C, known, xn, b, ph);
  for (int b = 0; b < n; b++) mbs_cpaMidNode(B, K, C, known, b, ph);
  for (int b = 0; b < n; b++) mbs_cpaDownNode(B, K, C, b, ph);
  if (B->lrows) mbs_cpaRowsOut(B, C, ph);
}

// gs and sor's partial application (mbs_cfsApplyColour) after the update of colour pc, for the
// rows of colour col (joint colours by color, then the closure rows' by lcol): nodes for what it
// recomputes only, the other bodies keep the previous application's writers
static void mbs_cpaApplyColour(mbsCpaB *B, const mbsCpaKin *K, mbsCpaCfs *C, const int *xn,
                               const int *color, int ncolor, const int *lcol, int pc, int col) {
  const mbsModel *m = B->m;
  int n = m->nbody, ph = PH_ITER + 8 * C->napply++;
  int *redo = C->leaf; // scratch: bodies whose mid pass runs again
  for (int b = 0; b < n; b++) redo[b] = 0;
  if (pc < ncolor) {
    for (int b = 0; b < n; b++) {
      if (color[b] != pc || !m->body_lamnum[b]) continue;
      mbs_cpaUpNode(B, K, C, 0, xn, b, ph);
      redo[b] = 1;
      if (m->body_parent[b] >= 0) redo[m->body_parent[b]] = 1;
    }
  } else {
    mbs_cpaRowsIn(B, C, xn);
    for (int k = 0; k < m->nloop; k++)
      for (int side = 0; side < 2 && lcol[k] == pc - ncolor; side++)
        if (m->loop_body[2 * k + side] >= 0) redo[m->loop_body[2 * k + side]] = 1;
  }
  for (int b = 0; b < n; b++)
    if (redo[b]) mbs_cpaMidNode(B, K, C, 0, b, ph);
  if (col >= ncolor) {
    mbs_cpaRowsOut(B, C, ph);
    return;
  }
  for (int b = 0; b < n; b++)
    if (color[b] == col && m->body_lamnum[b]) mbs_cpaDownNode(B, K, C, b, ph);
}

// pairwise reduction tree over nodes a[0..n-1] (n >= 1); returns the root
static int mbs_cpaTree(mbsCpaB *B, int *a, int n, int body) {
  while (n > 1) {
    int h = 0;
    for (int i = 0; i + 1 < n; i += 2) {
      int s = mbs_cpaNode(B, MBS_CPA_DOT_ADD, body, 1, -1, -1);
      mbs_cpaDep(B, a[i], s);
      mbs_cpaDep(B, a[i + 1], s);
      a[h++] = s;
    }
    if (n % 2) a[h++] = a[n - 1];
    n = h;
  }
  return n == 1 ? a[0] : -1;
}

// dot-product reductions fused into one global reduction: leaves[d][b] (-1: no entries) for
// d < nd dots; result[d] receives the node every consumer of dot d depends on
static void mbs_cpaReduce(mbsCpaB *B, mbsCpaCfs *C, int nd, int *const *leaves, int *result) {
  const mbsModel *m = B->m;
  int R = B->o->ranks, allred = -1;
  if (R > 1) {
    long long fl = (long long)nd * (R - 1);
    allred = mbs_cpaNode(B, MBS_CPA_MSG_ALLREDUCE, -1, fl, -1, -1);
    if (allred >= 0) {
      B->class_flops[B->cls] -= fl; // a message, not a kernel
      int rounds = 0;
      while ((1 << rounds) < R) rounds++;
      B->cost[allred] = rounds * (B->o->latency + 8.0 * nd / B->o->bandwidth) +
                        (double)rounds * nd * B->o->flop_time;
      B->proc[allred] = -2;
    }
  }
  for (int d = 0; d < nd; d++) {
    if (R <= 1) { // one tree (data flow: any processor; one rank: all on rank 0)
      int nl = 0;
      for (int b = 0; b < m->nbody; b++)
        if (leaves[d][b] >= 0) C->leaf[nl++] = leaves[d][b];
      result[d] = mbs_cpaTree(B, C->leaf, nl, R == 1 ? 0 : -1);
      continue;
    }
    // per rank: a local tree of the owned leaves, then the allreduce
    for (int r = 0, b = 0; r < R; r++) {
      int nl = 0, first = -1;
      for (; b < m->nbody && B->owner[b] == r; b++)
        if (leaves[d][b] >= 0) {
          if (first < 0) first = b;
          C->leaf[nl++] = leaves[d][b];
        }
      int root = mbs_cpaTree(B, C->leaf, nl, first);
      mbs_cpaDep(B, root, allred);
    }
    result[d] = allred;
  }
}

// body b after the operator application of phase ph: r = prev - q (one flop per entry)
// (nrow of them: gs and sor's later colours take only some rows of a body)
static int mbs_cpaResidRows(mbsCpaB *B, const mbsCpaCfs *C, int b, int prev, int nrow, int ph) {
  int r = mbs_cpaNode(B, MBS_CPA_CG_RESID, b, nrow, ph + 3, ph + 2);
  mbs_cpaDep(B, prev, r);
  mbs_cpaDep(B, C->down[b], r);
  return r;
}
static int mbs_cpaResidNode(mbsCpaB *B, const mbsCpaCfs *C, int b, int prev, int ph) {
  return mbs_cpaResidRows(B, C, b, prev, mbs_cpaNl(B, b), ph);
}

// body b: z = D^-1 r (block Cholesky solve)
static int mbs_cpaPrecondNode(mbsCpaB *B, const mbsCpaCfs *C, int b, int r, int ph) {
  int nl = B->m->body_lamnum[b];
  int rows = B->lrows && !B->noloopprec && b == B->m->nbody - 1; // + the loops' blocks
  int z = mbs_cpaNode(B, MBS_CPA_CFS_PRECOND, b, mbs_flopBlockApply(nl) + (rows ? B->lprec : 0),
                      ph + 3, ph + 2);
  mbs_cpaDep(B, r, z);
  mbs_cpaDep(B, C->D[b], z);
  if (rows) mbs_cpaDep(B, B->lsetup, z);
  return z;
}

// body b's leaf of a dot product (its entries, 2 nl - 1 flops) reading src and src2; -1 if the
// body has no entries. Phases (pblk, pbdy) = (ph + 3, ph + 2).
static int mbs_cpaLeaf(mbsCpaB *B, int b, int src, int src2, int ph) {
  int nl = mbs_cpaNl(B, b);
  if (nl == 0) return -1;
  int v = mbs_cpaNode(B, MBS_CPA_DOT_LEAF, b, mbs_flopDot(nl), ph + 3, ph + 2);
  mbs_cpaDep(B, src, v);
  mbs_cpaDep(B, src2, v);
  return v;
}

// per body: r = b - q (or r -= q: prev = the previous r), z = D^-1 r
static void mbs_cpaResidual(mbsCpaB *B, mbsCpaCfs *C, const int *prev, int ph, int *rn, int *zn) {
  for (int b = 0; b < B->m->nbody; b++) {
    rn[b] = mbs_cpaResidNode(B, C, b, prev[b], ph);
    zn[b] = mbs_cpaPrecondNode(B, C, b, rn[b], ph);
  }
}

// solver.check_every: whether iteration it of last tests (every K-th from 0, and the last); the
// solvers' mbs_cfsCheckSweep and Chebyshev's own rule (from 1: it % K == 0 or the last)
static int mbs_cpaCheckIt(const mbsCpaOptions *o, int it, int last) {
  return o->check_every <= 1 || it % o->check_every == 0 || it == last;
}

// the divergence guard (1 flop) and the convergence test (2 flops) after a fused reduction of
// three dots; returns the convergence node
static int mbs_cpaTest(mbsCpaB *B, const int *red, int bnorm) {
  int dtol = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, 1, -1, -1);
  mbs_cpaDep(B, red[0], dtol);
  int conv = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, 2, -1, -1);
  for (int d = 0; d < 3; d++) mbs_cpaDep(B, red[d], conv);
  mbs_cpaDep(B, dtol, conv);
  mbs_cpaDep(B, bnorm, conv);
  return conv;
}

// the three norms of a convergence test from per-body sources (src0.src0, src1.src1, src2.src2;
// leaves in lv[0..2]), their fused reduction and the test; returns the convergence node
static int mbs_cpaNormTest(mbsCpaB *B, mbsCpaCfs *C, const int *src0, const int *src1,
                           const int *src2, int ph, int bnorm, int **lv) {
  int red[3];
  for (int b = 0; b < B->m->nbody; b++) {
    lv[0][b] = mbs_cpaLeaf(B, b, src0[b], -1, ph);
    lv[1][b] = mbs_cpaLeaf(B, b, src1[b], -1, ph);
    lv[2][b] = mbs_cpaLeaf(B, b, src2[b], -1, ph);
  }
  mbs_cpaReduce(B, C, 3, lv, red);
  return mbs_cpaTest(B, red, bnorm);
}

// block Jacobi (solver_jacobi.c): iterations + 1 sweeps x <- x + omega D^-1 (b - A x);
// omega: the node computing the relaxation (-1: omega = 1 on unbranched models); xn receives the
// final writers of x
static void mbs_cpaJacobi(mbsCpaB *B, mbsCpaCfs *C, const mbsCpaKin *K, const int *rhs, int bnorm,
                          int omega, int *xn, int *rn, int *zn, int **lv) {
  const mbsModel *m = B->m;
  const mbsCpaOptions *o = B->o;
  int n = m->nbody, conv = -1;
  for (int b = 0; b < n; b++) xn[b] = -1;
  for (int it = 0; it <= o->iterations; it++) {
    C->ctl = conv; // the next sweep runs only if this one did not converge
    mbs_cpaApply(B, K, C, 0, xn);
    int ph = PH_ITER + 8 * (C->napply - 1);
    mbs_cpaResidual(B, C, rhs, ph, rn, zn);
    for (int b = 0; b < n; b++) {
      int nl = mbs_cpaNl(B, b);
      // z *= omega ; x += z
      int u = mbs_cpaNode(B, MBS_CPA_JAC_UPDATE, b, 2LL * nl, ph + 3, ph + 2);
      mbs_cpaDep(B, zn[b], u);
      mbs_cpaDep(B, xn[b], u);
      mbs_cpaDep(B, omega, u);
      xn[b] = u;
    }
    if (!mbs_cpaCheckIt(o, it, o->iterations)) continue;     // solver.check_every
    conv = mbs_cpaNormTest(B, C, rn, xn, xn, ph, bnorm, lv); // r.r, z.z (z *= omega in u), x.x
  }
  C->ctl = -1;
  // converged under the residual test: the last update is taken back (x -= z)
  if (o->converged && o->criterion != MBS_CRIT_CHANGE)
    for (int b = 0; b < n; b++) {
      int f = mbs_cpaNode(B, MBS_CPA_JAC_FIX, b, mbs_cpaNl(B, b), -1, -1);
      mbs_cpaDep(B, conv, f);
      mbs_cpaDep(B, xn[b], f);
      xn[b] = f;
    }
}

// the true residual (solver_jcg.c mbs_cfsTrueResidual): q = A x, r = b - q, z = D^-1 r, r.z and
// r.r reduced; red[0] receives the r.z node, red[1] the r.r node; rn, zn the writers
static void mbs_cpaCgResidual(mbsCpaB *B, mbsCpaCfs *C, const mbsCpaKin *K, const int *rhs, int *xn,
                              int *rn, int *zn, int **lv, int *red) {
  mbs_cpaApply(B, K, C, 0, xn);
  int ph = PH_ITER + 8 * (C->napply - 1);
  for (int b = 0; b < B->m->nbody; b++) {
    rn[b] = mbs_cpaResidNode(B, C, b, rhs[b], ph);
    zn[b] = mbs_cpaPrecondNode(B, C, b, rn[b], ph);
    lv[0][b] = mbs_cpaLeaf(B, b, zn[b], -1, ph); // r.z
    lv[1][b] = mbs_cpaLeaf(B, b, rn[b], -1, ph); // r.r
  }
  mbs_cpaReduce(B, C, 2, lv, red);
}

// a stop its recursion met, confirmed with b - A x (mbs_cfsTrueResidual, then mbs_cfsConverged:
// 2 flops, 3 where it missed and the solver compared against the last restart): returns the new
// test node (after the old one, prev; -1: none), *rz the r.z node (NULL: not wanted)
static int mbs_cpaConfirm(mbsCpaB *B, mbsCpaCfs *C, const mbsCpaKin *K, const int *rhs, int bnorm,
                          int prev, int missed, int *xn, int *rn, int *zn, int **lv, int *rz) {
  int tr[2];
  mbs_cpaCgResidual(B, C, K, rhs, xn, rn, zn, lv, tr);
  int c2 = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, missed ? 3 : 2, -1, -1);
  mbs_cpaDep(B, tr[1], c2);
  mbs_cpaDep(B, bnorm, c2);
  mbs_cpaDep(B, prev, c2);
  if (rz) *rz = tr[0];
  return c2;
}

// Chebyshev semi-iteration (solver_chebyshev.c), iters iterations from x (writers xn; -1:
// the warm start) on the interval computed by node ival (solver.rho, or the Lanczos estimate)
static void mbs_cpaChebyshev(mbsCpaB *B, mbsCpaCfs *C, const mbsCpaKin *K, const int *rhs,
                             int bnorm, int ival, int iters, int converged, int win, int stalled,
                             const mbsCgTrace *rs, int seg, int *xn, int *rn, int *dn, int **lv) {
  const mbsModel *m = B->m;
  int n = m->nbody, conv = -1, confirm = B->o->criterion != MBS_CRIT_CHANGE;
  int *zn = lv[3];
  // theta, delta, sigma, rho (6 flops) and the watch's rate and window (8)
  int rho = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, 6 + 8, -1, -1);
  mbs_cpaDep(B, ival, rho);
  mbs_cpaApply(B, K, C, 0, xn);
  int ph = PH_ITER + 8 * (C->napply - 1);
  mbs_cpaResidual(B, C, rhs, ph, rn, zn);
  for (int b = 0; b < n; b++) {
    dn[b] = mbs_cpaNode(B, MBS_CPA_CHEB_D, b, mbs_cpaNl(B, b), ph + 3, ph + 2); // d = z/theta
    mbs_cpaDep(B, zn[b], dn[b]);
    mbs_cpaDep(B, rho, dn[b]);
  }
  for (int it = 1; it <= iters; it++) {
    for (int b = 0; b < n; b++) { // x += d
      int x = mbs_cpaNode(B, MBS_CPA_CHEB_X, b, mbs_cpaNl(B, b), -1, -1);
      mbs_cpaDep(B, xn[b], x);
      mbs_cpaDep(B, dn[b], x);
      mbs_cpaDep(B, conv, x);
      xn[b] = x;
    }
    C->ctl = conv;
    mbs_cpaApply(B, K, C, 0, dn);
    ph = PH_ITER + 8 * (C->napply - 1);
    mbs_cpaResidual(B, C, rn, ph, rn, zn); // r -= q
    if (mbs_cpaCheckIt(B->o, it, iters)) { // solver.check_every (win is a multiple of K)
      conv = mbs_cpaNormTest(B, C, rn, dn, xn, ph, bnorm, lv); // r.r, d.d, x.x
      int repl = 0; // a replacement of r and z by the true residual after this sweep
      for (int k = 0; confirm && rs && k < rs->n; k++) repl |= rs->seg[k] == seg && rs->it[k] == it;
      if (confirm && (repl || (it == iters && converged))) { // the recursion's r against b - A x
        conv =
            mbs_cpaConfirm(B, C, K, rhs, bnorm, conv, repl || converged == 2, xn, rn, zn, lv, NULL);
        if (!repl) break;
        ph = PH_ITER + 8 * (C->napply - 1);
      }
      if (it == iters && converged) break;
      if (win > 0 && it % win == 0) { // the stall watch: r.r against 1e-2 of the window's start
        int chk = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, 1, -1, -1);
        mbs_cpaDep(B, conv, chk);
        conv = chk;
      }
      if (it == iters && stalled) break;
    }
    // rho_new = 1/(2 sigma - rho) ; d = rho_new rho d + 2 rho_new / delta z
    int r2 = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, 3, -1, -1);
    mbs_cpaDep(B, conv, r2);
    mbs_cpaDep(B, rho, r2);
    rho = r2;
    for (int b = 0; b < n; b++) {
      int d = mbs_cpaNode(B, MBS_CPA_CHEB_D, b, 6LL * mbs_cpaNl(B, b), ph + 4, ph + 3);
      mbs_cpaDep(B, rho, d);
      mbs_cpaDep(B, dn[b], d);
      mbs_cpaDep(B, zn[b], d);
      dn[b] = d;
    }
  }
  C->ctl = -1;
}

// conjugate gradients preconditioned by D (solver_jcg.c): iters iterations from x (writers
// xn, -1: the warm start or zero), converged: iteration iters met the tolerance (or, iters = 0,
// the start did), 2: it stagnated there; change: the change criterion's two extra dots; lanczos:
// the Lanczos coefficients are recorded (their scalar nodes are returned in lz[0..iters-1]).
// Without lanczos or change, the iterations whose recursion met the tolerance (the restarts rs,
// and a converged or stagnated iters) confirm it with b - A x. bnorm: the node of ||b||. xn and
// rn receive the final writers of x and r.
static void mbs_cpaCg(mbsCpaB *B, mbsCpaCfs *C, const mbsCpaKin *K, const int *rhs, int bnorm,
                      int iters, int converged, int change, const mbsCgTrace *rs, int *lz, int *xn,
                      int *rn, int *pn, int *zn, int **lv) {
  const mbsModel *m = B->m;
  int n = m->nbody, red[4], confirm = !lz && !change, nrs = 0;
  // start: q = A x, r = b - q, z = D^-1 r, r.z and r.r, p = z
  mbs_cpaCgResidual(B, C, K, rhs, xn, rn, zn, lv, red);
  for (int b = 0; b < n; b++) pn[b] = zn[b];
  int rz = red[0], conv = -1, alpha_old = -1, beta_old = -1;
  if (!change) {
    conv = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, 2, -1, -1);
    mbs_cpaDep(B, red[1], conv);
    mbs_cpaDep(B, bnorm, conv);
  }
  for (int it = 1; it <= iters; it++) {
    int ph;
    // q = A p ; alpha = r.z / p.q
    mbs_cpaApply(B, K, C, 0, pn);
    ph = PH_ITER + 8 * (C->napply - 1);
    for (int b = 0; b < n; b++) lv[0][b] = mbs_cpaLeaf(B, b, C->down[b], pn[b], ph - 1); // p.q
    mbs_cpaReduce(B, C, 1, lv, red);
    int alpha = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, 1, -1, -1);
    mbs_cpaDep(B, red[0], alpha);
    mbs_cpaDep(B, rz, alpha);
    mbs_cpaDep(B, conv, alpha);
    // x += alpha p, r -= alpha q, z = D^-1 r, fused dots
    for (int b = 0; b < n; b++) {
      int nl = mbs_cpaNl(B, b);
      int u = mbs_cpaNode(B, MBS_CPA_CG_UPDATE, b, 4LL * nl, ph + 3, ph + 2);
      mbs_cpaDep(B, alpha, u);
      mbs_cpaDep(B, pn[b], u);
      mbs_cpaDep(B, C->down[b], u);
      mbs_cpaDep(B, rn[b], u);
      mbs_cpaDep(B, xn[b], u);
      xn[b] = rn[b] = u;
      zn[b] = mbs_cpaPrecondNode(B, C, b, u, ph);
      lv[0][b] = mbs_cpaLeaf(B, b, zn[b], -1, ph); // r.z, r.r (and p.p, x.x)
      lv[1][b] = mbs_cpaLeaf(B, b, u, -1, ph);
      lv[2][b] = change ? mbs_cpaLeaf(B, b, pn[b], -1, ph) : -1;
      lv[3][b] = change ? mbs_cpaLeaf(B, b, u, -1, ph) : -1;
    }
    mbs_cpaReduce(B, C, change ? 4 : 2, lv, red);
    int chg = -1;
    if (change) { // alpha^2 p.p
      chg = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, 2, -1, -1);
      mbs_cpaDep(B, red[2], chg);
      mbs_cpaDep(B, alpha, chg);
    }
    int beta = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, 1, -1, -1);
    mbs_cpaDep(B, red[0], beta);
    mbs_cpaDep(B, rz, beta);
    if (lz && it <= 64) { // Lanczos coefficients of this step
      lz[it - 1] = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, mbs_flopLanczosStep(it), -1, -1);
      mbs_cpaDep(B, alpha, lz[it - 1]);
      mbs_cpaDep(B, beta, lz[it - 1]);
      mbs_cpaDep(B, alpha_old, lz[it - 1]);
      mbs_cpaDep(B, beta_old, lz[it - 1]);
    }
    alpha_old = alpha, beta_old = beta;
    conv = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, 2, -1, -1);
    mbs_cpaDep(B, red[1], conv);
    mbs_cpaDep(B, bnorm, conv);
    mbs_cpaDep(B, chg, conv);
    if (change) mbs_cpaDep(B, red[3], conv);
    rz = red[0];
    int restart = confirm && rs && nrs < rs->n && rs->it[nrs] == it;
    if (confirm && (restart || (it == iters && converged))) {
      // the recursion met the tolerance: b - A x confirms it, or CG restarts from it (p = z)
      conv =
          mbs_cpaConfirm(B, C, K, rhs, bnorm, conv, restart || converged == 2, xn, rn, zn, lv, &rz);
      if (!restart) break;
      nrs++;
      for (int b = 0; b < n; b++) pn[b] = zn[b];
      continue;
    }
    if (it == iters && converged) break;
    // p = z + beta p
    for (int b = 0; b < n; b++) {
      int pp = mbs_cpaNode(B, MBS_CPA_CG_P, b, 2LL * mbs_cpaNl(B, b), ph + 4, ph + 3);
      mbs_cpaDep(B, beta, pp);
      mbs_cpaDep(B, conv, pp);
      mbs_cpaDep(B, zn[b], pp);
      mbs_cpaDep(B, pn[b], pp);
      pn[b] = pp;
    }
  }
}

// the spectrum of D^-1 A from k >= 2 Lanczos steps (solver_jcg.c mbs_cfsLanczosSpectrum): two
// tridiagonal eigenvalue searches and the 5 % widening; ends[0..1] receive lmin and lmax
static void mbs_cpaSpectrum(mbsCpaB *B, const int *lz, int k, int *ends) {
  for (int e = 0; e < 2; e++) {
    ends[e] = mbs_cpaNode(B, MBS_CPA_EIG, -1, mbs_flopTridiagEig(k), -1, -1);
    for (int i = 0; i < k && i < 64; i++) mbs_cpaDep(B, lz[i], ends[e]);
  }
  int w = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, 1, -1, -1);
  mbs_cpaDep(B, ends[1], w);
  ends[1] = w;
}

// multicolour block Gauss–Seidel / SOR (solver_sor.c): iterations + 1 iterations of ncolor
// colour sweeps; each sweep applies A to the newest x, forms r = b - A x everywhere and updates
// the joints of its colour x += omega D^-1 r; then ||r_0||, ||dx|| and ||x|| in one reduction.
// xn receives the final writers of x.
static mbsErr mbs_cpaSor(mbsCpaB *B, mbsCpaCfs *C, const mbsCpaKin *K, const int *rhs, int bnorm,
                         int *xn, int *rn, int *zn, int **lv) {
  const mbsModel *m = B->m;
  const mbsCpaOptions *o = B->o;
  int n = m->nbody, red[3], conv = -1;
  int *color = malloc((size_t)(n > 0 ? n : 1) * sizeof(int)), *xold = lv[3];
  if (!color) return mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  int ncolor = mbs_cfsColour(m, color), nlcolor = 0, own = n - 1;
  int *lcol = B->lrows ? malloc((size_t)m->nloop * sizeof(int)) : NULL;
  long long *lcf = B->lrows ? calloc((size_t)m->nloop + 1, sizeof(long long)) : NULL;
  int *lrf = B->lrows ? calloc((size_t)m->nloop + 1, sizeof(int)) : NULL; // rows per colour
  if (B->lrows && (!lcol || !lcf || !lrf)) {
    free(color), free(lcol), free(lcf), free(lrf);
    return mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  }
  if (B->lrows) { // the loops' colours after the joints': per colour its blocks' solves, x += w z
    nlcolor = mbs_cfsLoopColour(m, lcol);
    for (int k = 0; k < m->nloop; k++) {
      int nr = mbs_cpaLoopKept(m, B->lskip, k);
      lcf[lcol[k]] += (nr ? mbs_flopCholSolve(nr) : 0) + 2LL * m->loop_lamnum[k];
      lrf[lcol[k]] += m->loop_lamnum[k]; // their residual r = b - q
    }
  }
  B->noloopprec = 1;
  for (int b = 0; b < n; b++) xn[b] = -1;
  for (int it = 0; it <= o->iterations; it++) {
    int chk = mbs_cpaCheckIt(o, it, o->iterations); // solver.check_every
    if (chk)
      for (int b = 0; b < n; b++) xold[b] = xn[b];
    int ph = 0;
    for (int col = 0; col < ncolor + nlcolor; col++) {
      C->ctl = conv; // the next iteration runs only if this one did not converge
      if (col == 0)  // the whole residual (r.r judges the iterate entering the sweep)
        mbs_cpaApply(B, K, C, 0, xn);
      else // the rows of this colour, from what the previous colour's update changed
        mbs_cpaApplyColour(B, K, C, xn, color, ncolor, lcol, col - 1, col);
      ph = PH_ITER + 8 * (C->napply - 1);
      if (col >= ncolor) // the closure rows of this colour, on their owner
        rn[own] = mbs_cpaResidRows(B, C, own, rhs[own], lrf[col - ncolor], ph);
      for (int b = 0; b < n; b++) {
        int nl = m->body_lamnum[b];
        if (col == 0) {
          rn[b] = mbs_cpaResidNode(B, C, b, rhs[b], ph);
          if (chk) lv[0][b] = mbs_cpaLeaf(B, b, rn[b], -1, ph); // r.r entering the sweep
        }
        if (!nl || color[b] != col) continue;
        if (col > 0) rn[b] = mbs_cpaResidRows(B, C, b, rhs[b], nl, ph);
        zn[b] = mbs_cpaPrecondNode(B, C, b, rn[b], ph);
        int u = mbs_cpaNode(B, MBS_CPA_SOR_UPDATE, b, 2LL * nl, ph + 3, ph + 2);
        mbs_cpaDep(B, zn[b], u);
        mbs_cpaDep(B, xn[b], u);
        xn[b] = u;
      }
      if (col >= ncolor) { // a loop colour, on the rows' owner
        int u = mbs_cpaNode(B, MBS_CPA_ROWS_UPDATE, own, lcf[col - ncolor], ph + 3, ph + 2);
        mbs_cpaDep(B, rn[own], u);
        mbs_cpaDep(B, xn[own], u);
        mbs_cpaDep(B, B->lsetup, u);
        xn[own] = u;
      }
    }
    C->ctl = -1;
    if (!chk) continue;
    for (int b = 0; b < n; b++) { // z = x - xold, z.z and x.x
      int nl = mbs_cpaNl(B, b);
      lv[1][b] = lv[2][b] = -1;
      if (nl == 0) continue;
      int d = mbs_cpaNode(B, MBS_CPA_SOR_UPDATE, b, nl, ph + 3, ph + 2);
      mbs_cpaDep(B, xn[b], d);
      mbs_cpaDep(B, xold[b], d);
      lv[1][b] = mbs_cpaLeaf(B, b, d, -1, ph);
      lv[2][b] = mbs_cpaLeaf(B, b, xn[b], -1, ph);
    }
    mbs_cpaReduce(B, C, 3, lv, red);
    conv = mbs_cpaTest(B, red, bnorm);
  }
  // converged under the residual test: the iterate before the last sweep is returned (a copy)
  if (o->converged && o->criterion != MBS_CRIT_CHANGE)
    for (int b = 0; b < n; b++) {
      int f = mbs_cpaNode(B, MBS_CPA_SOR_UNDO, b, 0, -1, -1);
      mbs_cpaDep(B, conv, f);
      mbs_cpaDep(B, xold[b], f);
      xn[b] = f;
    }
  B->noloopprec = 0;
  free(color), free(lcol), free(lcf), free(lrf);
  return MBS_OK;
}

// a node of the direct solver for body i (phase ph at every grain) depending on a, b and c
static int mbs_cpaDirNode(mbsCpaB *B, int kind, int i, long long flops, int ph, int a, int b,
                          int c) {
  int u = mbs_cpaNode(B, kind, i, flops, ph, ph);
  mbs_cpaDep(B, a, u);
  mbs_cpaDep(B, b, u);
  mbs_cpaDep(B, c, u);
  return u;
}

// the exact solve by block Cholesky in leaf-first order (solver_direct.c, one rank): the
// explicit parent and sibling blocks (mbs_cfsAssemble), D rebuilt from its factor, then per joint
// from the last body to the first: the diagonal factor, the triangular solves of its upper
// couplings and the Schur updates of the blocks they touch (every update of one block after the
// previous one, as written); forward and backward substitution in the same order. xn receives
// the writers of x.
static mbsErr mbs_cpaDirect(mbsCpaB *B, mbsCpaCfs *C, const int *rhs, int *xn) {
  const mbsModel *m = B->m;
  int n = m->nbody, nsib = 0, ph = PH_ITER + 8 * C->napply + 4;
  size_t nb = (size_t)(n > 0 ? n : 1);
  for (int b = 0; b < n; b++) nsib += m->body_childnum[b] * (m->body_childnum[b] - 1) / 2;
  int *rank = malloc(nb * sizeof(int)), *sadr = malloc(nb * sizeof(int));
  int *ld = malloc(nb * sizeof(int)), *lp = malloc(nb * sizeof(int)),
      *fac = malloc(nb * sizeof(int));
  int *wp = malloc(nb * sizeof(int)), *y = malloc(nb * sizeof(int));
  int *ls = malloc((size_t)(nsib > 0 ? nsib : 1) * sizeof(int));
  int *ws = malloc((size_t)(nsib > 0 ? nsib : 1) * sizeof(int));
  mbsErr e = MBS_OK;
  if (!rank || !sadr || !ld || !lp || !fac || !wp || !y || !ls || !ws) {
    e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
    goto done;
  }
  for (int b = 0, s = 0; b < n; b++) {
    int nc = m->body_childnum[b];
    sadr[b] = s;
    s += nc * (nc - 1) / 2;
    for (int k = 0; k < nc; k++) rank[m->child_list[m->body_childadr[b] + k]] = k;
  }
#define MBS_SIB(i, k)                                                                              \
  (sadr[m->body_parent[i]] + (rank[i] > rank[k] ? rank[i] * (rank[i] - 1) / 2 + rank[k]            \
                                                : rank[k] * (rank[k] - 1) / 2 + rank[i]))
  for (int s = 0; s < nsib; s++) ls[s] = ws[s] = -1;
  // the loop layer's further solves keep solve 0's factor (solver_direct.c, w->reuse)
  int kept = B->reuse && B->keep;
  int *kfac = B->keep ? B->keep + 3 * nb : NULL, *kwp = kfac ? kfac + nb : NULL;
  int *kws = kwp ? kwp + nb : NULL;
  if (kept) {
    memcpy(fac, kfac, nb * sizeof(int));
    memcpy(wp, kwp, nb * sizeof(int));
    memcpy(ws, kws, (size_t)nsib * sizeof(int));
  }
  // explicit blocks: A_{b,p} = -G^T M_p T_p, A_{b,k} = G_b^T M_p G_k; D = L L^T
  for (int b = 0; b < n && !kept; b++) {
    int p = m->body_parent[b], nl = m->body_lamnum[b];
    lp[b] = -1;
    if (p >= 0 && nl > 0) {
      if (m->body_lamnum[p] > 0) {
        lp[b] =
            mbs_cpaNode(B, MBS_CPA_DIR_BLOCK, b, mbs_flopCongr(nl, m->body_lamnum[p], 0), ph, ph);
        mbs_cpaDep(B, C->T[b], lp[b]);
        mbs_cpaDep(B, C->T[p], lp[b]);
      }
      const int *ch = m->child_list + m->body_childadr[p];
      for (int r = 0; r < rank[b]; r++) {
        int k = ch[r], nk = m->body_lamnum[k];
        if (nk == 0) continue;
        int v = mbs_cpaNode(B, MBS_CPA_DIR_BLOCK, b, mbs_flopCongr(nl, nk, 0), ph, ph);
        mbs_cpaDep(B, C->T[b], v);
        mbs_cpaDep(B, C->T[k], v);
        ls[MBS_SIB(b, k)] = v;
      }
    }
    ld[b] = mbs_cpaNode(B, MBS_CPA_DIR_LLT, b, mbs_flopLLt(nl), ph, ph);
    mbs_cpaDep(B, C->D[b], ld[b]);
  }
  // factor, last joint first
  for (int i = n - 1; i >= 0 && !kept; i--) {
    int ni = m->body_lamnum[i], p = m->body_parent[i];
    fac[i] = wp[i] = -1;
    if (ni == 0) continue;
    fac[i] = mbs_cpaNode(B, MBS_CPA_DIR_FACTOR, i, mbs_flopChol(ni), ph + 1, ph + 1);
    mbs_cpaDep(B, ld[i], fac[i]);
    if (p < 0) continue;
    int np = m->body_lamnum[p], ri = rank[i];
    const int *ch = m->child_list + m->body_childadr[p];
    wp[i] = mbs_cpaNode(B, MBS_CPA_DIR_TRSM, i, (long long)np * ni * ni, ph + 1, ph + 1);
    mbs_cpaDep(B, fac[i], wp[i]);
    mbs_cpaDep(B, lp[i], wp[i]);
    for (int r = 0; r < ri; r++) {
      int k = ch[r], sk = MBS_SIB(i, k);
      ws[sk] = mbs_cpaNode(B, MBS_CPA_DIR_TRSM, i, (long long)m->body_lamnum[k] * ni * ni, ph + 1,
                           ph + 1);
      mbs_cpaDep(B, fac[i], ws[sk]);
      mbs_cpaDep(B, ls[sk], ws[sk]);
    }
    ld[p] = mbs_cpaDirNode(B, MBS_CPA_DIR_SCHUR, i, mbs_flopSchur(np, np, ni), ph + 1, wp[i], ld[p],
                           -1);
    for (int r = 0; r < ri; r++) {
      int k = ch[r], nk = m->body_lamnum[k], sk = MBS_SIB(i, k);
      if (nk == 0) continue;
      lp[k] = mbs_cpaDirNode(B, MBS_CPA_DIR_SCHUR, i, mbs_flopSchur(nk, np, ni), ph + 1, ws[sk],
                             wp[i], lp[k]);
      ld[k] = mbs_cpaDirNode(B, MBS_CPA_DIR_SCHUR, i, mbs_flopSchur(nk, nk, ni), ph + 1, ws[sk],
                             ld[k], -1);
      for (int r2 = 0; r2 < r; r2++) {
        int k2 = ch[r2], nk2 = m->body_lamnum[k2], s2 = MBS_SIB(i, k2), skk = MBS_SIB(k, k2);
        if (nk2 == 0) continue;
        ls[skk] = mbs_cpaDirNode(B, MBS_CPA_DIR_SCHUR, i, mbs_flopSchur(nk, nk2, ni), ph + 1,
                                 ws[sk], ws[s2], ls[skk]);
      }
    }
  }
  if (kfac && !kept) {
    memcpy(kfac, fac, nb * sizeof(int));
    memcpy(kwp, wp, nb * sizeof(int));
    memcpy(kws, ws, (size_t)nsib * sizeof(int));
  }
  // forward substitution L y = b (elimination order), then backward L^T x = y
  for (int b = 0; b < n; b++) y[b] = rhs[b];
  for (int i = n - 1; i >= 0; i--) {
    int ni = m->body_lamnum[i], p = m->body_parent[i];
    if (ni == 0) continue;
    int f = y[i] =
        mbs_cpaDirNode(B, MBS_CPA_DIR_SUBST, i, (long long)ni * ni, ph + 2, y[i], fac[i], -1);
    if (p < 0) continue;
    y[p] = mbs_cpaDirNode(B, MBS_CPA_DIR_SUBST, i, 2LL * ni * m->body_lamnum[p], ph + 2, f, wp[i],
                          y[p]);
    const int *ch = m->child_list + m->body_childadr[p];
    for (int r = 0; r < rank[i]; r++) {
      int k = ch[r];
      y[k] = mbs_cpaDirNode(B, MBS_CPA_DIR_SUBST, i, 2LL * ni * m->body_lamnum[k], ph + 2, f,
                            ws[MBS_SIB(i, k)], y[k]);
    }
  }
  for (int i = 0; i < n; i++) {
    int ni = m->body_lamnum[i], p = m->body_parent[i];
    xn[i] = -1;
    if (ni == 0) continue;
    if (p >= 0) {
      y[i] = mbs_cpaDirNode(B, MBS_CPA_DIR_SUBST, i, 2LL * ni * m->body_lamnum[p], ph + 3, y[i],
                            wp[i], xn[p]);
      const int *ch = m->child_list + m->body_childadr[p];
      for (int r = 0; r < rank[i]; r++) {
        int k = ch[r];
        y[i] = mbs_cpaDirNode(B, MBS_CPA_DIR_SUBST, i, 2LL * ni * m->body_lamnum[k], ph + 3, y[i],
                              ws[MBS_SIB(i, k)], xn[k]);
      }
    }
    xn[i] = mbs_cpaDirNode(B, MBS_CPA_DIR_SUBST, i, (long long)ni * ni, ph + 3, y[i], fac[i], -1);
  }
#undef MBS_SIB
done:
  free(rank), free(sadr), free(ld), free(lp), free(fac), free(wp), free(y), free(ls), free(ws);
  return e;
}

// the constraint-force method (cfs.c mbs_cfsSolve) with its iterative solvers or the direct one
static mbsErr mbs_cpaCfs(mbsCpaB *B, const mbsCpaKin *K) {
  const mbsModel *m = B->m;
  const mbsCpaOptions *o = B->o;
  int n = m->nbody, R = o->ranks > 1 ? o->ranks : 1;
  int change = o->criterion == MBS_CRIT_CHANGE;
  const mbsSolverType *st = mbs_solverFind(o->method);
  int prec = st && st->precond; // D^-1 formed with D (mbs_cfsPosition)
  mbsCpaCfs C;
  memset(&C, 0, sizeof C);
  C.ctl = -1;
  int *rhs, *xn, *rn, *pn, *zn, *xe, *lv[4], lz[64];
  for (int i = 0; i < 64; i++) lz[i] = -1;
  size_t nb = (size_t)n;
  mbsErr e = MBS_OK;
  C.T = malloc(nb * sizeof(int)), C.F = malloc(nb * sizeof(int)), C.D = malloc(nb * sizeof(int));
  C.up = malloc(nb * sizeof(int)), C.mid = malloc(nb * sizeof(int));
  C.down = malloc(nb * sizeof(int)), C.leaf = malloc(nb * sizeof(int));
  C.part = malloc((size_t)R * sizeof(int));
  C.lw = malloc(nb * sizeof(int)), C.lout = -1;
  rhs = malloc(nb * sizeof(int)), xn = malloc(nb * sizeof(int)), rn = malloc(nb * sizeof(int));
  pn = malloc(nb * sizeof(int)), zn = malloc(nb * sizeof(int)), xe = malloc(nb * sizeof(int));
  int *lvbuf = malloc(4 * nb * sizeof(int));
  for (int d = 0; d < 4; d++) lv[d] = lvbuf ? lvbuf + (size_t)d * nb : NULL;
  if (!C.T || !C.F || !C.D || !C.up || !C.mid || !C.down || !C.leaf || !C.part || !C.lw || !rhs ||
      !xn || !rn || !pn || !zn || !xe || !lvbuf) {
    e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
    goto done;
  }
  // position-dependent blocks (mbs_cfsPosition), or solve 0's under reuse
  B->cls = MBS_CPA_CLASS_BLOCKS;
  for (int b = 0; b < n && B->reuse && B->keep; b++)
    C.T[b] = B->keep[b], C.F[b] = B->keep[nb + b], C.D[b] = B->keep[2 * nb + b];
  for (int b = 0; b < n && !(B->reuse && B->keep); b++) {
    int t = m->body_jnttype[b], nl = m->body_lamnum[b], nd = m->body_dofnum[b];
    C.T[b] = mbs_cpaNode(B, MBS_CPA_CFS_T, b, mbs_flopComplement(t) + (long long)MBS_FL_XFORCE * nl,
                         PH_CFSPOS, PH_CFSPOS);
    mbs_cpaDep(B, K->joint[b], C.T[b]);
    C.F[b] = -1, C.D[b] = -1;
    if (nd > 0) {
      C.F[b] = mbs_cpaNode(B, MBS_CPA_CFS_F, b, mbs_flopCfsF(nd), PH_CFSPOS, PH_CFSPOS);
      mbs_cpaDep(B, K->joint[b], C.F[b]);
    }
    if (nl > 0) {
      C.D[b] =
          mbs_cpaNode(B, MBS_CPA_CFS_D, b,
                      mbs_flopCfsD(nl, m->body_parent[b] >= 0) + (prec ? mbs_flopCfsDinv(nl) : 0),
                      PH_CFSPOS, PH_CFSPOS);
      mbs_cpaDep(B, C.T[b], C.D[b]);
    }
    if (B->keep) B->keep[b] = C.T[b], B->keep[nb + b] = C.F[b], B->keep[2 * nb + b] = C.D[b];
  }
  // closure rows (mbs_cfsLoopPrepare): their directions and right sides, the zero-row test (its
  // sums over the ranks), each loop's block over its kept rows, factored on the rows' owner
  int nkept = 0;
  if (B->lrows) {
    B->cls = MBS_CPA_CLASS_SOLVE;
    int stab = m->opt.baumgarte[0] != 0 || m->opt.baumgarte[1] != 0, r0 = B->n;
    char *zmark = calloc(nb, 1);
    if (!zmark) {
      e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
      goto done;
    }
    for (int k = 0; k < m->nloop; k++)
      mbs_cpaNode(B, MBS_CPA_LOOP_ROWS, -1, mbs_cpaLoopRowsFlops(m, k, stab, zmark), -1, -1);
    free(zmark);
    int rows = mbs_cpaLoopReduce(B, 2.0 * B->lrows, 0, mbs_cpaSync(B, r0, B->n));
    int b0 = B->n, own = n - 1;
    for (int k = 0; k < m->nloop; k++) {
      int nr = mbs_cpaLoopKept(m, B->lskip, k), sides = 0;
      nkept += nr;
      if (!nr) continue;
      long long f = mbs_flopChol(nr);
      for (int side = 0; side < 2; side++)
        if (m->loop_body[2 * k + side] >= 0) f += mbs_flopCongr(nr, nr, sides++);
      int v = mbs_cpaNode(B, MBS_CPA_ROWS_BLOCK, own, f, -1, -1);
      mbs_cpaDep(B, rows, v); // (M^-1 of the bodies: constant, computed at creation)
    }
    B->lsetup = B->n > b0 ? mbs_cpaSync(B, b0, B->n) : rows;
    mbs_cpaDep(B, rows, B->lsetup);
  }
  // right side: affine operator at lambda = 0, b = T^T c - q, ||b||
  B->cls = MBS_CPA_CLASS_SOLVE;
  mbs_cpaApply(B, K, &C, 1, NULL);
  for (int b = 0; b < n; b++) {
    int nl = m->body_lamnum[b];
    long long fr = 12LL * nl + (B->lrows && b == n - 1 ? nkept : 0); // rows: kappa - q
    rhs[b] = mbs_cpaNode(B, MBS_CPA_CFS_RHS, b, fr, PH_ITER + 3, PH_ITER + 2);
    mbs_cpaDep(B, C.T[b], rhs[b]);
    mbs_cpaDep(B, K->c[b], rhs[b]);
    mbs_cpaDep(B, C.down[b], rhs[b]);
    lv[0][b] = mbs_cpaLeaf(B, b, rhs[b], -1, PH_ITER); // b.b
  }
  int red[4];
  mbs_cpaReduce(B, &C, 1, lv, red);
  int bnorm = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, 1, -1, -1);
  mbs_cpaDep(B, red[0], bnorm);

  for (int b = 0; b < n; b++) xn[b] = xe[b] = -1; // x: the warm start (no node)
  int branched = mbs_modelBranched(m) || B->lrows, graph = mbs_solverFind(o->method)->cpa_graph;
  if (graph == MBS_CPA_GRAPH_JACOBI) {
    int omega = -1;
    if (branched) { // Lanczos estimate from x = 0 (its x is discarded), omega = 2/(lmin+lmax)
      mbs_cpaCg(B, &C, K, rhs, bnorm, o->spec_iterations, o->spec_converged, 0, NULL, lz, xe, rn,
                pn, zn, lv);
      int ends[2] = {-1, -1};
      if (o->spec_iterations >= 2) mbs_cpaSpectrum(B, lz, o->spec_iterations, ends);
      omega = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, B->lrows ? 2 : 3, -1, -1);
      mbs_cpaDep(B, ends[0], omega);
      mbs_cpaDep(B, ends[1], omega);
    }
    mbs_cpaJacobi(B, &C, K, rhs, bnorm, omega, xn, rn, zn, lv);
  } else if (graph == MBS_CPA_GRAPH_CHEBYSHEV) {
    if (m->opt.rho > 0) {
      int ival = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, 2, -1, -1); // 1 -+ rho
      mbs_cpaChebyshev(B, &C, K, rhs, bnorm, ival, o->iterations, o->converged, 0, 0, o->cg, 0, xn,
                       rn, pn, lv);
    } else { // segments: CG (Lanczos) steps that also improve x, the interval, the sweeps
      mbsChebTrace one = {1, {o->spec_iterations}, {0}, {0}, {0}};
      if (!o->spec_converged) one.sweep[0] = o->iterations - o->spec_iterations;
      const mbsChebTrace *t = o->cheb && o->cheb->nseg > 0 ? o->cheb : &one;
      int ival = -1;
      for (int j = 0; j < t->nseg; j++) {
        int last = j == t->nseg - 1, est_conv = last && o->spec_converged && t->est[j] > 0;
        if (t->est[j] > 0) {
          // a CG whose recursion met the tolerance stopped there (econf), confirmed with b - A x
          mbs_cpaCg(B, &C, K, rhs, bnorm, t->est[j], est_conv || t->econf[j] == 2, change, NULL, lz,
                    xn, rn, pn, zn, lv);
          if (t->econf[j]) mbs_cpaConfirm(B, &C, K, rhs, bnorm, -1, 0, xn, rn, zn, lv, NULL);
          int ends[2] = {-1, -1};
          if (!est_conv && t->est[j] >= 2) mbs_cpaSpectrum(B, lz, t->est[j], ends);
          int nv = ends[1] >= 0 ? ends[1] : lz[0];
          if (ends[0] >= 0) mbs_cpaDep(B, ends[0], nv);
          if (ival >= 0) mbs_cpaDep(B, ival, nv); // widened: the old interval joins the new
          ival = nv;
        }
        if (!est_conv && t->sweep[j] > 0)
          mbs_cpaChebyshev(B, &C, K, rhs, bnorm, ival, t->sweep[j], last ? o->converged : 0,
                           t->win[j], !last, o->cg, j, xn, rn, pn, lv);
      }
    }
  } else if (graph == MBS_CPA_GRAPH_SOR) {
    e = mbs_cpaSor(B, &C, K, rhs, bnorm, xn, rn, zn, lv);
  } else if (graph == MBS_CPA_GRAPH_DIRECT) {
    e = mbs_cpaDirect(B, &C, rhs, xn);
  } else {
    mbs_cpaCg(B, &C, K, rhs, bnorm, o->iterations, o->converged, change, o->cg, NULL, xn, rn, pn,
              zn, lv);
  }
  // accelerations and joint wrenches (mbs_cfsFinish)
  B->cls = MBS_CPA_CLASS_FINISH;
  mbs_cpaApply(B, K, &C, 1, xn);
  int ph = PH_ITER + 8 * (C.napply - 1);
  for (int b = 0; b < n; b++) {
    int p = m->body_parent[b];
    int f = mbs_cpaNode(B, MBS_CPA_CFS_FINISH, b,
                        mbs_flopCfsFinish(m->body_dofnum[b], m->body_lamnum[b]), ph + 3, ph + 2);
    mbs_cpaDep(B, C.mid[b], f);
    if (p >= 0) mbs_cpaDep(B, C.mid[p], f);
    mbs_cpaDep(B, K->c[b], f);
    mbs_cpaDep(B, K->joint[b], f);
    mbs_cpaDep(B, C.F[b], f);
    mbs_cpaDep(B, K->force[b], f);
    mbs_cpaDep(B, xn[b], f);
    mbs_cpaDep(B, C.T[b], f);
  }
  if (B->lrows) { // the closure residual max |D^T a - kappa| on every rank
    int v = mbs_cpaNode(B, MBS_CPA_LOOP_RESID, n - 1, B->lrows, -1, -1);
    mbs_cpaDep(B, C.lout, v);
  }
done:
  free(C.lw);
  free(C.T), free(C.F), free(C.D), free(C.up), free(C.mid), free(C.down), free(C.leaf);
  free(C.part), free(rhs), free(xn), free(rn), free(pn), free(zn), free(xe), free(lvbuf);
  return e;
}

// ---------------------------------------------------------------- the exact solver (schur)

// a node on rank `rank` (distributed graphs; -1: the body's owner), never merged at block or body
// grain unless phases are given
static int mbs_cpaNodeOn(mbsCpaB *B, int kind, int body, long long flops, int pblk, int pbdy,
                         int rank) {
  int v = mbs_cpaNode(B, kind, body, flops, pblk, pbdy);
  if (v >= 0 && B->o->ranks >= 1 && rank >= 0) B->proc[v] = rank;
  return v;
}

// a point-to-point message of `bytes` (time alpha + bytes beta, no processor)
static int mbs_cpaMsg(mbsCpaB *B, double bytes, int from) {
  int v = mbs_cpaNode(B, MBS_CPA_MSG_HALO, -1, 0, -1, -1);
  if (v < 0) return v;
  B->cost[v] = B->o->latency + bytes / B->o->bandwidth;
  B->proc[v] = -2;
  mbs_cpaDep(B, from, v);
  return v;
}

// ceil(log2 P)
static int mbs_cpaLog2(int P) {
  int k = 0;
  while ((1 << k) < P) k++;
  return k;
}

enum { PH_KMAP = 1000000, PH_SLAM };

// mbs_bodyPosition and mbs_bodyVelocity of body b on rank `rank` (-1: its owner); state: the node
// the joint state comes from (-1: input); pp, vp: the parent's pose and velocity nodes (-1: none
// read); own: 1 for the owner's stages (merged at block/body grain), 0 for a ghost copy
static void mbs_cpaBodyPos(mbsCpaB *B, int b, int rank, int state, int pp, int own, int *joint,
                           int *pose) {
  const mbsModel *m = B->m;
  int pb = own ? PH_POS : -1, pd = own ? 0 : -1;
  *joint = mbs_cpaNodeOn(B, MBS_CPA_POS_JOINT, b, mbs_flopPosBody(m, b), pb, pd, rank);
  mbs_cpaDep(B, state, *joint);
  *pose = *joint;
  if (m->body_parent[b] >= 0) {
    *pose = mbs_cpaNodeOn(B, MBS_CPA_POS_POSE, b, mbs_flopPoseBody(m, b), pb, pd, rank);
    mbs_cpaDep(B, *joint, *pose);
    mbs_cpaDep(B, pp, *pose);
  }
}
static void mbs_cpaBodyVel(mbsCpaB *B, int b, int rank, int joint, int vp, int own, int *v, int *c,
                           int *bias, int *force) {
  const mbsModel *m = B->m;
  int pb = own ? PH_VEL : -1, pd = own ? 0 : -1;
  int t = m->body_jnttype[b], nd = m->body_dofnum[b];
  int vj = mbs_cpaNodeOn(B, MBS_CPA_VEL_JOINT, b, mbs_flopVelJointBody(m, b), pb, pd, rank);
  mbs_cpaDep(B, joint, vj);
  *v = vj;
  if (m->body_parent[b] >= 0) {
    *v = mbs_cpaNodeOn(B, MBS_CPA_VEL_LINK, b, mbs_flopVelLinkBody(m, b), pb, pd, rank);
    mbs_cpaDep(B, vp, *v);
    mbs_cpaDep(B, joint, *v);
    mbs_cpaDep(B, vj, *v);
  }
  *c = mbs_cpaNodeOn(B, MBS_CPA_VEL_C, b, mbs_flopVelCBody(m, b), pb, pd, rank);
  mbs_cpaDep(B, *v, *c);
  mbs_cpaDep(B, vj, *c);
  *bias = mbs_cpaNodeOn(B, MBS_CPA_VEL_BIAS, b, MBS_FL_VEL_BIAS, pb, pd, rank);
  mbs_cpaDep(B, *v, *bias);
  *force =
      mbs_cpaNodeOn(B, MBS_CPA_VEL_FORCE, b, mbs_flopVelForce(nd, t, B->o->has_tau), pb, pd, rank);
  mbs_cpaDep(B, joint, *force);
}

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
} mbsCpaRank;

// the joint state message of a remote child and its stages on the parent's rank (ghost copies)
typedef struct {
  int *joint, *pose, *v, *c, *bias, *force; // (nbody) ghost copies (-1: none)
} mbsCpaGhost;

// node of body l's joint transform / joint force as seen from rank r
static int mbs_cpaSeen(const mbsCpaB *B, const int *own, const int *ghost, int l, int r) {
  return (B->o->ranks < 1 || B->owner[l] == r || ghost[l] < 0) ? own[l] : ghost[l];
}

// the schur graph's state over its tree solves (one per evaluation; m + 2 in a loop model's,
// docs/cpa.md "Loop models"): the decomposition, the kinematics' nodes, and per body the nodes of
// the tree solve being built
struct mbsCpaSch {
  int P, use_scan, chain, defer;
  int *start;
  mbsCpaRank *R;
  int *map, *IAw, *pAw, *proj, *done, *stn, *acc, *lam, *spv, *gho, *gbuf, *kmsg, *fwdn;
  mbsCpaGhost G;
};

static void mbs_cpaSchFree(mbsCpaSch *X) {
  for (int r = 0; X->R && r < X->P; r++) {
    mbs_schurRankDestroy(&X->R[r].rk);
    free(X->R[r].vsys), free(X->R[r].vexp);
  }
  free(X->start), free(X->R), free(X->map), free(X->IAw), free(X->pAw), free(X->proj);
  free(X->done), free(X->stn), free(X->acc), free(X->lam), free(X->spv), free(X->gho);
  free(X->gbuf), free(X->kmsg), free(X->fwdn);
  memset(X, 0, sizeof *X);
}

// the remote children's stages on their parent's rank (schur_par.c mbsp_schurSolve, in every tree
// solve): the joint state message, then mbs_bodyPosition and mbs_bodyVelocity
// (a local solve, B->smask: the states of the last full solve, no message, the masked ranks)
static void mbs_cpaSchGhosts(mbsCpaB *B, const mbsCpaKin *K, mbsCpaSch *X) {
  const mbsModel *m = B->m;
  int P = X->P;
  const mbsCpaRank *R = X->R;
  mbsCpaGhost G = X->G;
  for (int r = 0; P > 1 && r < P; r++) {
    const mbsCpaRank *rr = R + r;
    if (B->smask && !B->smask[r]) continue;
    for (int b = rr->b0; b < rr->b1; b++)
      for (int k = 0; k < m->body_childnum[b]; k++) {
        int g = m->child_list[m->body_childadr[b] + k];
        if (g < rr->b1) continue;
        int st = B->smask ? -1 : mbs_cpaMsg(B, 13 * sizeof(double), -1);
        mbs_cpaBodyPos(B, g, r, st, K->pose[b], 0, &G.joint[g], &G.pose[g]);
        mbs_cpaBodyVel(B, g, r, G.joint[g], K->v[b], 0, &G.v[g], &G.c[g], &G.bias[g], &G.force[g]);
      }
  }
}

// the ghost poses (parallel/engine.c mbsp_enginePoses): after the solve without loops and
// spring-dampers (deferred), else in the kinematics
static void mbs_cpaSchPoses(mbsCpaB *B, mbsCpaSch *X) {
  int P = X->P, use_scan = X->use_scan, defer = X->defer;
  const mbsCpaRank *R = X->R;
  const int *map = X->map, *gho = X->gho, *kmsg = X->kmsg, *fwdn = X->fwdn;
  for (int r = 0; P > 1 && r < P; r++) {
    const mbsCpaRank *rr = R + r;
    if (!rr->ghosted) continue;
    for (int b = rr->b0; b < rr->b1; b++) {
      if (gho[b] < 0) continue;
      int pg = B->cls;
      B->cls = MBS_CPA_CLASS_KIN;
      int pn = mbs_cpaNode(B, MBS_CPA_KIN_GHOST, b, MBS_FL_KIN_GHOSTPOSE, -1, -1);
      B->cls = pg;
      mbs_cpaDep(B, map[b], pn);
      mbs_cpaDep(B, use_scan ? rr->kin_in : kmsg[fwdn[b]], pn);
      if (defer) mbs_cpaDep(B, rr->if_end, pn);
    }
  }
}

// setup, kinematics and the first tree solve's ghost stages
static mbsErr mbs_cpaSchBegin(mbsCpaB *B, mbsCpaKin *K, mbsCpaSch *X) {
  const mbsModel *m = B->m;
  const mbsCpaOptions *o = B->o;
  int n = m->nbody, P = o->ranks > 1 ? o->ranks : 1, nseg = o->threads > 1 ? o->threads : 1;
  mbsErr e = MBS_OK;
  size_t nb = (size_t)n + 1;
  memset(X, 0, sizeof *X);
  X->P = P;
  int *start = X->start = malloc(((size_t)P + 1) * sizeof *start);
  mbsCpaRank *R = X->R = calloc((size_t)P, sizeof *R);
  int *map = X->map = malloc(nb * sizeof *map), *IAw = X->IAw = malloc(nb * sizeof *IAw);
  int *pAw = X->pAw = malloc(nb * sizeof *pAw), *proj = X->proj = malloc(nb * sizeof *proj);
  int *done = X->done = malloc(nb * sizeof *done), *stn = X->stn = malloc(nb * sizeof *stn);
  int *acc = X->acc = malloc(nb * sizeof *acc), *lam = X->lam = malloc(nb * sizeof *lam);
  int *spv = X->spv = malloc(nb * sizeof *spv), *gho = X->gho = malloc(nb * sizeof *gho);
  int *gbuf = X->gbuf = malloc(6 * nb * sizeof *gbuf), *kmsg = X->kmsg = malloc(nb * sizeof *kmsg);
  int *fwdn = X->fwdn = malloc(nb * sizeof *fwdn);
  mbsCpaGhost G;
  if (!start || !R || !map || !IAw || !pAw || !proj || !done || !stn || !acc || !lam || !spv ||
      !gho || !gbuf || !kmsg || !fwdn)
    return mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  G.joint = gbuf, G.pose = gbuf + nb, G.v = gbuf + 2 * nb, G.c = gbuf + 3 * nb;
  G.bias = gbuf + 4 * nb, G.force = gbuf + 5 * nb;
  for (size_t i = 0; i < 6 * nb; i++) gbuf[i] = -1;
  for (int b = 0; b < n; b++) {
    map[b] = IAw[b] = proj[b] = done[b] = stn[b] = acc[b] = lam[b] = spv[b] = -1;
    kmsg[b] = fwdn[b] = -1;
  }
  if (P == 1) {
    start[0] = 0, start[1] = n;
  } else if ((e = mbs_partitionModel(m, P, start))) {
    return e;
  }
  for (int r = 0; r < P && !e; r++) {
    mbsCpaRank *rr = R + r;
    rr->b0 = start[r], rr->b1 = start[r + 1];
    rr->fac_end = rr->if_end = rr->kin_in = -1;
    e = mbs_schurRankCreate(m, rr->b0, rr->b1, nseg, &rr->rk);
    if (!e) {
      int nv = rr->rk->view.ncomp + 1;
      rr->vsys = malloc((size_t)nv * sizeof(int)), rr->vexp = malloc((size_t)nv * sizeof(int));
      if (!rr->vsys || !rr->vexp) e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
      for (int c = 0; c < nv && !e; c++) rr->vsys[c] = rr->vexp[c] = -1;
    }
    for (int b = rr->b0; b < rr->b1; b++) {
      int p = m->body_parent[b];
      if (p >= 0 && p < rr->b0) rr->ghosted = 1;
    }
  }
  if (e) return e;
  // the engine's choice: the kinematics prefix by a scan when every rank owns one path segment
  int use_scan = P > 1;
  for (int r = 0; r < P && use_scan; r++) {
    const mbsCpaRank *rr = R + r;
    for (int b = rr->b0; b < rr->b1 && use_scan; b++)
      if (m->body_parent[b] != b - 1 || (b + 1 < rr->b1 && m->body_childnum[b] != 1)) use_scan = 0;
    if (use_scan && rr->b1 < n)
      for (int b = rr->b0; b < rr->b1 && use_scan; b++)
        for (int k = 0; k < m->body_childnum[b]; k++)
          if (m->child_list[m->body_childadr[b] + k] >= rr->b1 && b != rr->b1 - 1) use_scan = 0;
  }
  // ... and schur_par.c's: the cut-joint scan when every rank is one chain element
  int chain = P > 1;
  for (int r = 0; r < P && chain; r++) {
    const mbsSchur *v = &R[r].rk->view;
    if (!(v->ncomp == 1 && v->nport <= 1))
      chain = 0;
    else if (v->comp[0].up && B->owner[m->body_parent[v->comp[0].root]] != r - 1)
      chain = 0;
    else if (v->nport == 1 && B->owner[v->port_body[0]] != r + 1)
      chain = 0;
  }
  // the measurement switches of the engine (MBSPAR_PREFIX=pipeline, MBSPAR_SCHUR_MERGE=tree)
  const char *pm = getenv("MBSPAR_PREFIX"), *sm = getenv("MBSPAR_SCHUR_MERGE");
  if (pm && !strcmp(pm, "pipeline")) use_scan = 0;
  if (sm && !strcmp(sm, "tree")) chain = 0;
  int defer = m->nforce == 0 && m->nloop == 0;
  X->G = G, X->use_scan = use_scan, X->chain = chain, X->defer = defer;

  // ---- kinematics (parallel/engine.c mbsp_engineForward, mbsp_kinematics)
  B->cls = MBS_CPA_CLASS_KIN;
  for (int b = 0; b < n; b++) K->joint[b] = K->pose[b] = K->v[b] = -1;
  for (int r = 0; r < P; r++) {
    const mbsCpaRank *rr = R + r;
    for (int b = rr->b0; b < rr->b1; b++) {
      int p = m->body_parent[b];
      mbs_cpaBodyPos(B, b, -1, -1, p >= rr->b0 ? K->pose[p] : -1, 1, &K->joint[b], &K->pose[b]);
    }
    if (P > 1) // local maps from the ghost parents (ranks without: the velocities alone)
      for (int b = rr->b0; b < rr->b1; b++) {
        int p = m->body_parent[b], lp = p >= rr->b0;
        gho[b] = p < 0 ? -1 : (p < rr->b0 ? p : gho[p]);
        fwdn[b] = p < 0 ? -1 : (p < rr->b0 ? b : fwdn[p]); // the body below the ghost parent
        map[b] = mbs_cpaNode(B, MBS_CPA_KIN_MAP, b, mbs_flopKinMap(m, b, lp, lp && gho[b] >= 0),
                             PH_KMAP, PH_KMAP);
        mbs_cpaDep(B, K->joint[b], map[b]);
        if (lp) mbs_cpaDep(B, map[p], map[b]);
      }
    else
      for (int b = rr->b0; b < rr->b1; b++) gho[b] = -1;
  }
  if (P > 1 && use_scan) {
    // recursive-doubling exclusive scan of the ranks' maps (comm.c mbsp_exscan): round d, rank r
    // receives r - d's inclusive value, combines it into its prefix and its inclusive value
    int *inc = malloc((size_t)P * sizeof(int)), *pre = malloc((size_t)P * sizeof(int));
    int *nxt = malloc((size_t)P * sizeof(int));
    if (!inc || !pre || !nxt) {
      free(inc), free(pre), free(nxt);
      e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
      return e;
    }
    for (int r = 0; r < P; r++) {
      int last = R[r].b1 - 1;
      inc[r] = map[last];  // the record of the rank's segment
      if (!R[r].ghosted) { // rooted at the ground: its last pose and velocity
        inc[r] = mbs_cpaNodeOn(B, MBS_CPA_KIN_SCAN, R[r].b0, 0, -1, -1, -1);
        mbs_cpaDep(B, K->pose[last], inc[r]);
        mbs_cpaDep(B, map[last], inc[r]);
      }
      pre[r] = -1;
    }
    for (int d = 1; d < P; d *= 2) {
      for (int r = 0; r < P; r++) nxt[r] = inc[r];
      for (int r = d; r < P; r++) {
        int msg = mbs_cpaMsg(B, 30 * sizeof(double), inc[r - d]);
        if (pre[r] >= 0) {
          int c2 = mbs_cpaNodeOn(B, MBS_CPA_KIN_SCAN, R[r].b0, MBS_FL_KIN_THEN, -1, -1, -1);
          mbs_cpaDep(B, msg, c2);
          mbs_cpaDep(B, pre[r], c2);
          pre[r] = c2;
        } else {
          pre[r] = msg;
        }
        int c1 = mbs_cpaNodeOn(B, MBS_CPA_KIN_SCAN, R[r].b0, MBS_FL_KIN_THEN, -1, -1, -1);
        mbs_cpaDep(B, msg, c1);
        mbs_cpaDep(B, inc[r], c1);
        nxt[r] = c1;
      }
      for (int r = 0; r < P; r++) inc[r] = nxt[r];
    }
    for (int r = 0; r < P; r++) R[r].kin_in = pre[r];
    free(inc), free(pre), free(nxt);
  } else if (P > 1) {
    // pipeline as a data flow (mbsp_kinematics): per rank, each neighbour's segment goes out as
    // soon as the messages with its bodies' ghost parents are in (halo hvel: one message per pair
    // of ranks, 18 doubles per boundary body and neighbour)
    int *msgq = malloc((size_t)P * sizeof(int)), *nsq = malloc((size_t)P * sizeof(int));
    int *touched = malloc((size_t)P * sizeof(int));
    if (!msgq || !nsq || !touched) {
      free(msgq), free(nsq), free(touched);
      e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
      return e;
    }
    for (int q = 0; q < P; q++) msgq[q] = -1, nsq[q] = 0;
    for (int r = 0; r < P; r++) {
      const mbsCpaRank *rr = R + r;
      int nt = 0;
      for (int b = rr->b0; b < rr->b1; b++) {
        const int *ch = m->child_list + m->body_childadr[b];
        for (int k = 0; k < m->body_childnum[b]; k++) {
          if (ch[k] < rr->b1) continue;
          int q = B->owner[ch[k]], seen = 0;
          for (int k2 = 0; k2 < k; k2++) seen |= ch[k2] >= rr->b1 && B->owner[ch[k2]] == q;
          if (seen) continue;
          int val;
          if (gho[b] >= 0) { // mbsp_fromGhost
            val = mbs_cpaNodeOn(B, MBS_CPA_KIN_GHOST, b, MBS_FL_KIN_GHOSTPOSE + MBS_FL_KIN_GHOSTVEL,
                                -1, -1, -1);
            mbs_cpaDep(B, kmsg[fwdn[b]], val); // the message with its ghost parent
            mbs_cpaDep(B, map[b], val);
          } else {
            val = map[b];
          }
          if (msgq[q] < 0) {
            msgq[q] = mbs_cpaMsg(B, 0, val);
            touched[nt++] = q;
          }
          mbs_cpaDep(B, val, msgq[q]);
          mbs_cpaDep(B, K->pose[b], msgq[q]);
          nsq[q]++;
        }
      }
      for (int i = 0; i < nt; i++) {
        int q = touched[i];
        B->cost[msgq[q]] = o->latency + 18.0 * sizeof(double) * nsq[q] / o->bandwidth;
        for (int b = R[q].b0; b < R[q].b1; b++) {
          int p = m->body_parent[b];
          if (p >= rr->b0 && p < rr->b1) kmsg[b] = msgq[q];
        }
        msgq[q] = -1, nsq[q] = 0;
      }
    }
    free(msgq), free(nsq), free(touched);
  }
  // every rank finishes its own velocities (a ghost parent's from the prefix)
  for (int r = 0; r < P; r++) {
    const mbsCpaRank *rr = R + r;
    for (int b = rr->b0; b < rr->b1; b++) {
      int p = m->body_parent[b], vp = -1;
      if (p >= rr->b0)
        vp = K->v[p];
      else if (p >= 0)
        vp = use_scan ? rr->kin_in : kmsg[b];
      mbs_cpaBodyVel(B, b, -1, K->joint[b], vp, 1, &K->v[b], &K->c[b], &K->bias[b], &K->force[b]);
    }
  }
  if (!defer) mbs_cpaSchPoses(B, X);
  mbs_cpaSchGhosts(B, K, X);
  // on P ranks, each rank runs its kinematics (its pipeline sends, the ghost copies) before its
  // factor, as the engine's program order does: the factor reads the kinematics through one
  // node per rank (without it, a list schedule could hold back a rank's sends behind its own
  // factor and starve the ranks that wait for them)
  if (o->ranks >= 1) {
    int *kend = malloc((size_t)P * sizeof(int));
    if (!kend) {
      e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
      return e;
    }
    int nk = B->n;
    for (int r = 0; r < P; r++)
      kend[r] = mbs_cpaNodeOn(B, MBS_CPA_KIN_GHOST, R[r].b0, 0, -1, -1, -1);
    for (int v = 0; v < nk && !B->err; v++)
      if (B->proc[v] >= 0) mbs_cpaDep(B, v, kend[B->proc[v]]);
    for (int b = 0; b < n; b++) {
      int k = kend[B->owner[b]];
      K->joint[b] = K->c[b] = K->bias[b] = K->force[b] = k;
      if (G.joint[b] >= 0) {
        int kg = kend[B->owner[m->body_parent[b]]];
        G.joint[b] = G.force[b] = kg;
      }
    }
    free(kend);
  }

  return e;
}

// one tree solve: factor, cut-joint system, back-substitution, the accelerations to the remote
// children; later: a solve after the first of the evaluation (the remote children's stages
// again; the bias passes alone where mbs_schurRhsOnly holds); homog: a homogeneous unit solve;
// B->smask: a local solve of the masked ranks (mbsp_schurLocal: factor, the rank's cut-joint
// systems added into the separators' system, back-substitution with the cut joints' lambdas 0)
static mbsErr mbs_cpaSchSolve(mbsCpaB *B, const mbsCpaKin *K, mbsCpaSch *X, int later, int homog) {
  const mbsModel *m = B->m;
  const mbsCpaOptions *o = B->o;
  const unsigned char *mask = B->smask;
  int n = m->nbody, P = X->P, chain = X->chain;
  mbsErr e = MBS_OK;
  size_t nb = (size_t)n + 1;
  mbsCpaRank *R = X->R;
  int *IAw = X->IAw, *pAw = X->pAw, *proj = X->proj, *done = X->done, *stn = X->stn;
  int *acc = X->acc, *lam = X->lam, *spv = X->spv;
  if (later) mbs_cpaSchGhosts(B, K, X);
  mbsCpaGhost G = X->G;
  for (int b = 0; b < n; b++) proj[b] = done[b] = stn[b] = acc[b] = lam[b] = spv[b] = -1;
  for (int r = 0; r < P; r++) {
    int nv = R[r].rk->view.ncomp + 1;
    R[r].fac_end = R[r].if_end = -1;
    for (int c = 0; c < nv; c++) R[r].vsys[c] = R[r].vexp[c] = -1;
  }
  // ---- factor (src/schur.c mbs_schurRankFactor: mbs_schurFactor per segment, then the join)
  B->cls = MBS_CPA_CLASS_DYN;
  for (int b = 0; b < n; b++) IAw[b] = -1, pAw[b] = K->bias[b];
  for (int r = 0; r < P; r++) {
    mbsCpaRank *rr = R + r;
    mbsSchurRank *rk = rr->rk;
    if (mask && !mask[r]) continue;
    int **cs = calloc((size_t)rk->nseg, sizeof *cs);
    if (!cs) {
      e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
      return e;
    }
    for (int t = 0; t < rk->nseg; t++) {
      mbsSchur *s = rk->seg[t];
      cs[t] = malloc(((size_t)s->ncomp + 1) * sizeof(int));
      int *spk = malloc(((size_t)s->ncomp + 1) * sizeof(int));
      if (!cs[t] || !spk) {
        free(spk);
        for (int u = 0; u <= t; u++) free(cs[u]);
        free(cs);
        e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
        return e;
      }
      for (int c = 0; c < s->ncomp; c++) cs[t][c] = spk[c] = -1;
      const int rhs = later && mbs_schurRhsOnly(rk); // mbs_schurFactorRhs
      for (int b = s->s1 - 1; b >= s->s0; b--) {
        int lb = b - s->s0, ci = s->body_comp[lb], p = m->body_parent[b];
        if (rhs && homog && B->spath && !B->spath[b]) { // off the loaded paths: u = 0, no node
          proj[b] = done[b] = -1;
          continue;
        }
        if (rhs) { // the bias passes alone: u, pa, X^T pa into the parent's pA
          int v = mbs_cpaNode(B, MBS_CPA_ABA_RHS, b, mbs_flopAbaRhs(m, b, homog), PH_P2, 1);
          mbs_cpaDep(B, pAw[b], v);
          mbs_cpaDep(B, K->force[b], v);
          mbs_cpaDep(B, K->c[b], v);
          mbs_cpaDep(B, K->joint[b], v);
          proj[b] = done[b] = v;
          if (p >= 0) {
            mbs_cpaDep(B, pAw[p], v);
            pAw[p] = v;
          }
          continue;
        }
        const mbsSchurComp *cp = s->comp + ci;
        const int *ch = m->child_list + m->body_childadr[b];
        int nch = m->body_childnum[b];
        if (s->mode[lb]) { // inertia form: ABA's pass 2 (+ the spike)
          if (s->onpath[lb] && b == cp->last) {
            int l = s->port_body[cp->p0];
            int sn = mbs_cpaNode(
                B, MBS_CPA_SCH_SPATH, b,
                mbs_flopSpathStart(m->body_lamnum[l], mbs_flopSchurT(m, s, l), m->body_dofnum[l]),
                PH_P2, 1);
            mbs_cpaDep(B, mbs_cpaSeen(B, K->joint, G.joint, l, r), sn);
            mbs_cpaDep(B, mbs_cpaSeen(B, K->force, G.force, l, r), sn);
            mbs_cpaDep(B, pAw[b], sn);
            pAw[b] = sn;
          }
          done[b] = mbs_cpaAbaBody(B, K, b, IAw, pAw, proj);
          if (s->onpath[lb]) {
            int sp = mbs_cpaNode(B, MBS_CPA_SCH_SPIKE, b, mbs_flopSpikeBody(m, b), PH_P2, 1);
            mbs_cpaDep(B, proj[b], sp);
            mbs_cpaDep(B, K->c[b], sp);
            mbs_cpaDep(B, K->joint[b], sp);
            mbs_cpaDep(B, spk[ci], sp);
            if (spk[ci] < 0) mbs_cpaDep(B, pAw[b], sp);
            spk[ci] = sp;
            if (b == cp->root) {
              int gn = mbs_cpaNode(B, MBS_CPA_SCH_SPATH, b, mbs_flopSpathGround(cp->n), PH_P2, 1);
              mbs_cpaDep(B, sp, gn);
              cs[t][ci] = gn;
            }
          }
          continue;
        }
        // compliance form: the start (known wrench, a0, (I^A)^-1 with inertia-form children)
        long long f0 = mbs_flopSchurStart(s->phi0_adr[lb] >= 0, m->body_dofnum[b]);
        int st = mbs_cpaNode(B, MBS_CPA_SCH_START, b, 0, PH_P2, 1);
        mbs_cpaDep(B, K->bias[b], st);
        mbs_cpaDep(B, K->force[b], st);
        mbs_cpaDep(B, K->joint[b], st);
        mbs_cpaDep(B, IAw[b], st);
        mbs_cpaDep(B, pAw[b], st);
        for (int k = 0; k < nch; k++) {
          int c = ch[k];
          if (c < s->s1) {
            if (s->mode[c - s->s0]) continue;
            f0 += MBS_FL_SCHUR_KID;
            mbs_cpaDep(B, stn[c], st);
          } else {
            f0 += MBS_FL_SCHUR_KID + mbs_flopSchurKnown(m->body_dofnum[c]);
            mbs_cpaDep(B, mbs_cpaSeen(B, K->force, G.force, c, r), st);
          }
          mbs_cpaDep(B, mbs_cpaSeen(B, K->joint, G.joint, c, r), st);
        }
        B->flops[st] = f0;
        B->cost[st] = (double)f0 * mbs_cpaFlopTime(o, B->cls);
        B->class_flops[B->cls] += f0;
        stn[b] = done[b] = st;
        int prev = st;
        if (cp->spath) {
          int su = mbs_cpaNode(B, MBS_CPA_SCH_SPATH, b, mbs_flopSpathUp(cp->nc), PH_P2, 1);
          mbs_cpaDep(B, prev, su);
          mbs_cpaDep(B, spk[ci], su);
          prev = su;
        }
        int cur = 0;
        for (int k = 0; k < nch; k++) {
          int c = ch[k];
          if (c >= s->s1 || s->mode[c - s->s0]) continue;
          int lc = c - s->s0, ncc = s->body_nc[lc], nl = m->body_lamnum[c];
          long long fa = mbs_flopSchurAbsorb(nl, s->kind[lc] == 1, mbs_flopSchurT(m, s, c), cur,
                                             ncc, s->v_w[lc]);
          cur += ncc;
          int an = mbs_cpaNode(B, MBS_CPA_SCH_ABSORB, b, fa, PH_P2, 1);
          mbs_cpaDep(B, prev, an);
          mbs_cpaDep(B, done[c], an);
          mbs_cpaDep(B, K->joint[c], an);
          mbs_cpaDep(B, K->c[c], an);
          prev = an;
        }
        for (int k = 0; k < nch; k++) {
          int l = ch[k];
          if (!(l >= s->s1 && m->body_lamnum[l] > 0)) continue;
          int at = mbs_cpaNode(B, MBS_CPA_SCH_ATTACH, b,
                               mbs_flopSchurAttach(m->body_lamnum[l], mbs_flopSchurT(m, s, l), cur),
                               PH_P2, 1);
          cur += m->body_lamnum[l];
          mbs_cpaDep(B, prev, at);
          mbs_cpaDep(B, mbs_cpaSeen(B, K->joint, G.joint, l, r), at);
          prev = at;
        }
        if (p < s->s0) {
          int fn = mbs_cpaNode(B, MBS_CPA_SCH_FINISH, b,
                               mbs_flopSchurFinish(m->body_lamnum[b], mbs_flopSchurT(m, s, b),
                                                   s->body_nc[lb], cp->up, p < 0, s->v_w[lb]),
                               PH_P2, 1);
          mbs_cpaDep(B, prev, fn);
          mbs_cpaDep(B, K->c[b], fn);
          prev = fn;
          cs[t][ci] = fn;
        }
        done[b] = prev;
      }
      free(spk);
    }
    // the join of the segments' systems (children first)
    int *jn = malloc(((size_t)rk->nsc + 1) * sizeof(int));
    if (!jn) {
      for (int u = 0; u < rk->nseg; u++) free(cs[u]);
      free(cs);
      e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
      return e;
    }
    int fend = mbs_cpaNodeOn(B, MBS_CPA_SCH_JOIN, rr->b0, 0, -1, -1, -1);
    for (int k = rk->nsc - 1; k >= 0; k--) {
      const mbsSchurSc *sc = rk->sc + k;
      const mbsSchur *s = rk->seg[sc->seg];
      const mbsSchurComp *cp = s->comp + sc->comp;
      long long f = mbs_flopSchurAdd(cp->n) + mbs_flopSchurReduce(sc->nup + sc->nk, sc->ne);
      int j = mbs_cpaNodeOn(B, MBS_CPA_SCH_JOIN, rr->b0, 0, -1, -1, -1);
      mbs_cpaDep(B, cs[sc->seg][sc->comp], j);
      for (int q = 0; q < sc->nep; q++) { // the internal children's reduced systems
        int k2 = k + 1;
        while (k2 < rk->nsc && rk->sc[k2].root != sc->eport[q]) k2++;
        if (k2 < rk->nsc) {
          f += mbs_flopSchurAdd(rk->sc[k2].nup + rk->sc[k2].nk);
          mbs_cpaDep(B, jn[k2], j);
        }
      }
      B->flops[j] = f;
      B->cost[j] = (double)f * mbs_cpaFlopTime(o, B->cls);
      B->class_flops[B->cls] += f;
      jn[k] = j;
      mbs_cpaDep(B, j, fend);
      if (sc->view >= 0) rr->vsys[sc->view] = j;
    }
    rr->fac_end = fend;
    free(jn);
    for (int u = 0; u < rk->nseg; u++) free(cs[u]);
    free(cs);
  }
  // no agreement between the factor and the interface: a failed factor goes through the
  // interface's messages, and the one agreement after them covers both (mbsp_schurSolve), so each
  // rank's interface work waits for its own factor only

  // ---- the cut-joint system (schur_par.c)
  if (mask) { // a local solve: the rank's systems added into the separators' system, no messages
    for (int r = 0; r < P; r++) {
      if (!mask[r]) continue;
      const mbsSchur *v = &R[r].rk->view;
      long long f = 0;
      for (int c = 0; c < v->ncomp; c++) f += mbs_flopSchurAdd(v->comp[c].n);
      int sc = mbs_cpaNodeOn(B, MBS_CPA_SCH_SOLVE, R[r].b0, f, -1, -1, -1);
      mbs_cpaDep(B, R[r].fac_end, sc);
      R[r].if_end = sc;
    }
  } else if (P > 1 && chain) { // recursive-doubling scan of the pair systems (mbsp_schurScan)
    int *an = malloc((size_t)P * sizeof(int)), *xn = malloc((size_t)P * sizeof(int));
    int *sn = malloc((size_t)P * sizeof(int)), *sxn = malloc((size_t)P * sizeof(int));
    int *dims = malloc(8 * (size_t)P * sizeof(int)), *nan_ = malloc(2 * (size_t)P * sizeof(int));
    if (!an || !xn || !sn || !sxn || !dims || !nan_) {
      free(an), free(xn), free(sn), free(sxn), free(dims), free(nan_);
      e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
      return e;
    }
    // per rank: acc (na, nb), excl, sacc, sexcl dims (na < 0: empty)
    for (int r = 0; r < P; r++) {
      const mbsSchurComp *vc = R[r].rk->view.comp;
      int *d = dims + 8 * r;
      d[0] = vc->nup, d[1] = vc->nc, d[2] = -1, d[3] = 0, d[4] = vc->nup, d[5] = vc->nc;
      d[6] = -1, d[7] = 0;
      int x = mbs_cpaNodeOn(B, MBS_CPA_SCH_MERGE, R[r].b0, 0, -1, -1, -1);
      mbs_cpaDep(B, R[r].vsys[0], x);
      mbs_cpaDep(B, R[r].fac_end, x);
      an[r] = sn[r] = x, xn[r] = sxn[r] = -1;
    }
    for (int d = 1; d < P; d *= 2) {
      int *msgd = nan_, *msgu = nan_ + P;
      int *od = malloc(4 * (size_t)P * sizeof(int));
      if (!od) {
        free(an), free(xn), free(sn), free(sxn), free(dims), free(nan_);
        e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
        return e;
      }
      for (int r = 0; r < P; r++) {
        msgd[r] = r + d < P ? mbs_cpaMsg(B, MBS_SCHUR_PAIR_DOUBLES * sizeof(double), an[r]) : -1;
        msgu[r] = r - d >= 0 ? mbs_cpaMsg(B, MBS_SCHUR_PAIR_DOUBLES * sizeof(double), sn[r]) : -1;
        od[4 * r] = dims[8 * r], od[4 * r + 1] = dims[8 * r + 1];         // acc before the round
        od[4 * r + 2] = dims[8 * r + 4], od[4 * r + 3] = dims[8 * r + 5]; // sacc
      }
      for (int r = 0; r < P; r++) {
        int *dm = dims + 8 * r;
        if (r - d >= 0) { // tmp = acc of r - d: excl = tmp . excl, acc = tmp . acc
          int ta = od[4 * (r - d)], tb = od[4 * (r - d) + 1];
          long long fx = dm[2] < 0 ? 0 : mbs_flopPairMerge(ta, tb, dm[3]);
          int x1 = mbs_cpaNodeOn(B, MBS_CPA_SCH_MERGE, R[r].b0, fx, -1, -1, -1);
          mbs_cpaDep(B, msgd[r - d], x1);
          mbs_cpaDep(B, xn[r], x1);
          if (dm[2] < 0)
            dm[2] = ta, dm[3] = tb;
          else
            dm[2] = ta;
          xn[r] = x1;
          int x2 = mbs_cpaNodeOn(B, MBS_CPA_SCH_MERGE, R[r].b0, mbs_flopPairMerge(ta, tb, dm[1]),
                                 -1, -1, -1);
          mbs_cpaDep(B, msgd[r - d], x2);
          mbs_cpaDep(B, an[r], x2);
          dm[0] = ta;
          an[r] = x2;
        }
        if (r + d < P) { // tmp = sacc of r + d: sexcl = sexcl . tmp, sacc = sacc . tmp
          int ta = od[4 * (r + d) + 2], tb = od[4 * (r + d) + 3];
          long long fx = dm[6] < 0 ? 0 : mbs_flopPairMerge(dm[6], ta, tb);
          int x1 = mbs_cpaNodeOn(B, MBS_CPA_SCH_MERGE, R[r].b0, fx, -1, -1, -1);
          mbs_cpaDep(B, msgu[r + d], x1);
          mbs_cpaDep(B, sxn[r], x1);
          if (dm[6] < 0)
            dm[6] = ta, dm[7] = tb;
          else
            dm[7] = tb;
          sxn[r] = x1;
          int x2 = mbs_cpaNodeOn(B, MBS_CPA_SCH_MERGE, R[r].b0, mbs_flopPairMerge(dm[4], ta, tb),
                                 -1, -1, -1);
          mbs_cpaDep(B, msgu[r + d], x2);
          mbs_cpaDep(B, sn[r], x2);
          dm[5] = tb;
          sn[r] = x2;
        }
      }
      free(od);
    }
    for (int r = 0; r < P; r++) { // own system with both sides added, solved
      const mbsSchurComp *vc = R[r].rk->view.comp;
      const int *dm = dims + 8 * r;
      long long f = (dm[2] >= 0 ? mbs_flopSchurAdd(dm[3]) : 0) +
                    (dm[6] >= 0 ? mbs_flopSchurAdd(dm[6]) : 0) +
                    (vc->n > 0 ? mbs_flopSchurReduce(0, vc->n) + mbs_flopSchurExpand(0, vc->n) : 0);
      int sv = mbs_cpaNodeOn(B, MBS_CPA_SCH_SOLVE, R[r].b0, f, -1, -1, -1);
      mbs_cpaDep(B, R[r].vsys[0], sv);
      mbs_cpaDep(B, xn[r], sv);
      mbs_cpaDep(B, sxn[r], sv);
      mbs_cpaDep(B, R[r].fac_end, sv);
      R[r].if_end = sv;
    }
    free(an), free(xn), free(sn), free(sxn), free(dims), free(nan_);
  } else if (P > 1) { // component-tree passes (mbsp_schurTree)
    // leaf to root: ranks from the last (children's components live on higher ranks)
    int *portsys = malloc(nb * sizeof(int)), *portlam = malloc(nb * sizeof(int));
    if (!portsys || !portlam) {
      free(portsys), free(portlam);
      e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
      return e;
    }
    for (int b = 0; b < n; b++) portsys[b] = portlam[b] = -1;
    for (int r = P - 1; r >= 0; r--) {
      const mbsSchur *v = &R[r].rk->view;
      for (int c = v->ncomp - 1; c >= 0; c--) {
        const mbsSchurComp *cp = v->comp + c;
        long long f = mbs_flopSchurReduce(cp->nup, cp->nc);
        int rd = mbs_cpaNodeOn(B, MBS_CPA_SCH_MERGE, R[r].b0, 0, -1, -1, -1);
        mbs_cpaDep(B, R[r].vsys[c], rd);
        mbs_cpaDep(B, R[r].fac_end, rd);
        for (int q = cp->p0; q < cp->p0 + cp->np; q++) {
          f += mbs_flopSchurAdd(m->body_lamnum[v->port_body[q]]);
          mbs_cpaDep(B, portsys[v->port_body[q]], rd);
        }
        B->flops[rd] = f;
        B->cost[rd] = (double)f * mbs_cpaFlopTime(o, B->cls);
        B->class_flops[B->cls] += f;
        R[r].vsys[c] = rd;
        if (cp->up)
          portsys[cp->root] =
              mbs_cpaMsg(B, (double)(cp->nup * cp->nup + cp->nup) * sizeof(double), rd);
      }
    }
    // root to leaf: the upper ports' lambdas, then the lower ports' to the children
    for (int r = 0; r < P; r++) {
      const mbsSchur *v = &R[r].rk->view;
      int end = mbs_cpaNodeOn(B, MBS_CPA_SCH_SOLVE, R[r].b0, 0, -1, -1, -1);
      for (int c = 0; c < v->ncomp; c++) {
        const mbsSchurComp *cp = v->comp + c;
        int ex = mbs_cpaNodeOn(B, MBS_CPA_SCH_SOLVE, R[r].b0, mbs_flopSchurExpand(cp->nup, cp->nc),
                               -1, -1, -1);
        mbs_cpaDep(B, R[r].vsys[c], ex);
        if (cp->up) mbs_cpaDep(B, portlam[cp->root], ex);
        for (int q = cp->p0; q < cp->p0 + cp->np; q++) {
          int l = v->port_body[q];
          portlam[l] = mbs_cpaMsg(B, (double)m->body_lamnum[l] * sizeof(double), ex);
          mbs_cpaDep(B, portlam[l], end); // the sends complete before the solve returns
        }
        mbs_cpaDep(B, ex, end);
      }
      for (int c = 0; c < v->ncomp; c++)
        if (v->comp[c].up) mbs_cpaDep(B, portlam[v->comp[c].root], end);
      R[r].if_end = end;
    }
    free(portsys), free(portlam);
  } else {
    R[0].if_end = R[0].fac_end;
  }
  int agree2 = -1;
  if (P > 1 && !mask) {
    agree2 = mbs_cpaNode(B, MBS_CPA_MSG_ALLREDUCE, -1, 0, -1, -1);
    B->cost[agree2] = mbs_cpaLog2(P) * (o->latency + 8 / o->bandwidth);
    B->proc[agree2] = -2;
    for (int r = 0; r < P; r++) mbs_cpaDep(B, R[r].if_end, agree2);
  }

  // ---- back-substitution (mbs_schurRankBack -> mbs_schurBack), accelerations to remote children
  for (int r = 0; r < P; r++) {
    mbsCpaRank *rr = R + r;
    mbsSchurRank *rk = rr->rk;
    if (mask && !mask[r]) continue;
    int lin = mbs_cpaNodeOn(B, MBS_CPA_SCH_SOLVE, rr->b0, 0, -1, -1, -1);
    mbs_cpaDep(B, rr->if_end, lin);
    mbs_cpaDep(B, agree2, lin);
    for (int k = 0; k < rk->nsc; k++) { // the ports eliminated in the join
      const mbsSchurSc *sc = rk->sc + k;
      if (sc->ne == 0) continue;
      int ex = mbs_cpaNodeOn(B, MBS_CPA_SCH_SOLVE, rr->b0,
                             mbs_flopSchurExpand(sc->nup + sc->nk, sc->ne), -1, -1, -1);
      mbs_cpaDep(B, rr->if_end, ex);
      mbs_cpaDep(B, agree2, ex);
      mbs_cpaDep(B, rr->fac_end, ex);
      mbs_cpaDep(B, ex, lin);
    }
    for (int t = 0; t < rk->nseg; t++) {
      mbsSchur *s = rk->seg[t];
      for (int c = 0; c < s->ncomp; c++) { // the roots' lambdas
        const mbsSchurComp *cp = s->comp + c;
        int rt = cp->root, lr = rt - s->s0, nl = m->body_lamnum[rt];
        if (cp->up) {
          lam[rt] = lin;
        } else if (nl > 0 && m->body_parent[rt] < 0 && !s->mode[lr]) {
          lam[rt] = mbs_cpaNodeOn(B, MBS_CPA_SCH_LAM, rt, mbs_flopSchurLamRoot(nl, s->v_w[lr]), -1,
                                  -1, -1);
          mbs_cpaDep(B, lin, lam[rt]);
        }
      }
      for (int c = 0; c < s->ncomp; c++) { // spath: the spike vectors from the port up
        const mbsSchurComp *cp = s->comp + c;
        if (!cp->spath) continue;
        int l = s->port_body[cp->p0];
        int prev =
            mbs_cpaNodeOn(B, MBS_CPA_SCH_SPIKEVEC, cp->last,
                          mbs_flopSpathVec(m->body_lamnum[l], mbs_flopSchurT(m, s, l)), -1, -1, -1);
        mbs_cpaDep(B, lin, prev);
        mbs_cpaDep(B, mbs_cpaSeen(B, K->joint, G.joint, l, r), prev);
        for (int b = cp->last;; b = m->body_parent[b]) {
          spv[b] = prev;
          if (b == cp->root) break;
          int sv =
              mbs_cpaNodeOn(B, MBS_CPA_SCH_SPIKEVEC, b, mbs_flopSpikeVecBody(m, b), -1, -1, -1);
          mbs_cpaDep(B, prev, sv);
          mbs_cpaDep(B, proj[b], sv);
          prev = sv;
        }
      }
      for (int b = s->s0; b < s->s1; b++) { // top-down
        int lb = b - s->s0, nl = m->body_lamnum[b], p = m->body_parent[b];
        if (B->bfirst && B->bfirst[b] > B->blim) continue; // not needed, nor its subtree
        int accp = p >= s->s0 ? acc[p] : (p < 0 ? -1 : -2);
        if (s->mode[lb]) {
          int fn;
          acc[b] = mbs_cpaAbaFwdBody(B, K, b, accp < -1 ? -1 : accp, s->onpath[lb] ? spv[b] : -1,
                                     IAw, pAw, proj, homog, &fn);
          long long fl = mbs_flopSchurLamInertia(nl, s->kind[lb] == 1, mbs_flopSchurT(m, s, b));
          if (fl > 0 && !homog) {
            int ln = mbs_cpaNode(B, MBS_CPA_SCH_LAM, b, fl, PH_P3, 2);
            mbs_cpaDep(B, fn, ln);
          }
          continue;
        }
        const mbsSchurComp *cp = s->comp + s->body_comp[lb];
        const int *ch = m->child_list + m->body_childadr[b];
        int nch = m->body_childnum[b];
        long long f1 =
            mbs_flopSchurAcc(nl, s->kind[lb] == 1, mbs_flopSchurT(m, s, b)) - (MBS_FL_MUL6 + 6);
        for (int k = 0; k < nch; k++) {
          int l = ch[k];
          if (l >= s->s1 && m->body_lamnum[l] > 0)
            f1 += mbs_flopSchurSubWrench(m->body_lamnum[l], 0, mbs_flopSchurT(m, s, l));
        }
        int n1 = mbs_cpaNode(B, MBS_CPA_SCH_ACC, b, f1, PH_P3, 2);
        mbs_cpaDep(B, lam[b], n1);
        mbs_cpaDep(B, lin, n1);
        mbs_cpaDep(B, stn[b], n1);
        int prev = n1;
        for (int k = nch - 1; k >= 0; k--) {
          int c = ch[k];
          if (c >= s->s1) continue;
          int lc = c - s->s0, ncl = m->body_lamnum[c];
          if (ncl == 0 || s->mode[lc]) continue;
          long long fc =
              mbs_flopSchurSubWrench(ncl, mbs_schurCached(s, c), mbs_flopSchurT(m, s, c));
          fc += mbs_flopSchurLam(ncl, s->v_w[lc]);
          int ln = mbs_cpaNode(B, MBS_CPA_SCH_LAM, b, fc, PH_P3, 2);
          mbs_cpaDep(B, prev, ln);
          mbs_cpaDep(B, done[c], ln);
          lam[c] = ln;
          prev = ln;
        }
        int an = mbs_cpaNode(B, MBS_CPA_SCH_ACC, b,
                             MBS_FL_MUL6 + 6 + (cp->spath && b == cp->root ? 6 : 0), PH_P3, 2);
        mbs_cpaDep(B, prev, an);
        if (cp->spath && b == cp->root) mbs_cpaDep(B, spv[b], an);
        acc[b] = an;
        if (accp != -2 && m->body_dofnum[b] > 0) {
          int qn =
              mbs_cpaNode(B, MBS_CPA_SCH_QDD, b, mbs_flopSchurQdd(m->body_dofnum[b]), PH_P3, 2);
          mbs_cpaDep(B, an, qn);
          mbs_cpaDep(B, accp, qn);
        }
      }
    }
    // roots whose parent is in another segment of this rank
    for (int k = 0; k < rk->nsc; k++) {
      int rt = rk->sc[k].root, p = m->body_parent[rt];
      if (B->bfirst && B->bfirst[rt] > B->blim) continue;
      if (p >= rr->b0 && rk->sc[k].parent_sc >= 0 && m->body_dofnum[rt] > 0) {
        int qn =
            mbs_cpaNode(B, MBS_CPA_SCH_QDD, rt, mbs_flopSchurQdd(m->body_dofnum[rt]), PH_P3, 2);
        mbs_cpaDep(B, acc[rt], qn);
        mbs_cpaDep(B, acc[p], qn);
      }
    }
  }
  // the parents' accelerations to the remote children's ranks, their qdd; deferred ghost poses
  for (int r = 0; P > 1 && !mask && r < P; r++) {
    const mbsSchur *v = &R[r].rk->view;
    for (int c = 0; c < v->ncomp; c++) {
      int rt = v->comp[c].root, p = m->body_parent[rt];
      if (p < 0 || p >= R[r].b0) continue;
      int msg = mbs_cpaMsg(B, 6 * sizeof(double), acc[p]);
      if (m->body_dofnum[rt] > 0) {
        int qn =
            mbs_cpaNode(B, MBS_CPA_SCH_QDD, rt, mbs_flopSchurQdd(m->body_dofnum[rt]), PH_P3, 2);
        mbs_cpaDep(B, acc[rt], qn);
        mbs_cpaDep(B, msg, qn);
      }
    }
  }
  return e;
}

static mbsErr mbs_cpaSchur(mbsCpaB *B, mbsCpaKin *K) {
  mbsCpaSch X;
  mbsErr e = mbs_cpaSchBegin(B, K, &X);
  if (!e) e = mbs_cpaSchSolve(B, K, &X, 0, 0);
  if (!e && X.defer) mbs_cpaSchPoses(B, &X);
  mbs_cpaSchFree(&X);
  return e;
}

static int mbs_cpaGraph(int method);

// ---------------------------------------------------------------- closed loops, spring-dampers

static mbsErr mbs_cpaLoopTree(mbsCpaB *B, const mbsCpaKin *K, int graph, int *scr, int fext,
                              int src, int after, const mbsCpaOptions *os, int solve, int *end);

// schur's separators (docs/loops.md 8.1, src/loops.c mbs_loopLocalColumns): on every rank, after
// `rows`, one local solve for its cut-joint system (if any cut joint), then for each equation j
// with a side on the rank (not a zero row) the unit pair, a local solve and the column's dots
// over the rank's sides, each rank's in sequence; then one sum of [C G L b] and the cut joints'
// elimination on every rank (*red: its node)
static mbsErr mbs_cpaLoopSeparators(mbsCpaB *B, const mbsCpaKin *K, int *scr, const int *eqb,
                                    const unsigned char *skip, const int *ord, const int *first,
                                    int rows, int *red) {
  const mbsModel *m = B->m;
  const mbsCpaOptions *o = B->o;
  const mbsCpaSch *X = B->sch;
  int n = m->nbody, neq = m->nlam_loop, P = X->P, np = 0, n0 = B->n;
  unsigned char *mk = calloc((size_t)P, 1), *pth = calloc((size_t)n + 1, 1);
  int *lastr = malloc((size_t)P * sizeof(int));
  if (!mk || !lastr || !pth) {
    free(mk), free(lastr), free(pth);
    return mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  }
  for (int b = 0; b < n; b++) // the cut joints' lambdas over all ranks
    if (m->body_parent[b] >= 0 && mbs_cpaOwner(B, m->body_parent[b]) != mbs_cpaOwner(B, b))
      np += m->body_lamnum[b];
  mbsErr e = MBS_OK;
  for (int r = 0; !e && r < P; r++) {
    lastr[r] = rows;
    mk[r] = 1;
    B->smask = mk;
    int end = -1;
    if (np > 0) { // the rank's cut-joint system: one local solve (its load does not matter; no
                  // accelerations wanted)
      B->bfirst = first, B->blim = -1;
      e = mbs_cpaLoopTree(B, K, MBS_CPA_GRAPH_SCHUR, scr, 1, rows, rows, o, neq + 2, &end);
      B->bfirst = NULL;
      lastr[r] = end;
    }
    long long cf = 0; // the dots over the rank's sides of the equations at or before t
    for (int t = 0; !e && t < neq; t++) {
      int j = ord[t], b1 = eqb[2 * j], b2 = eqb[2 * j + 1];
      for (int sd = 0; sd < 2; sd++)
        cf += eqb[2 * j + sd] >= 0 && mbs_cpaOwner(B, eqb[2 * j + sd]) == r ? MBS_FL_LOOP_DOT : 0;
      if ((skip && skip[j]) ||
          !((b1 >= 0 && mbs_cpaOwner(B, b1) == r) || (b2 >= 0 && mbs_cpaOwner(B, b2) == r)))
        continue;
      B->cls = MBS_CPA_CLASS_SOLVE;
      int unit = mbs_cpaNodeOn(B, MBS_CPA_LOOP_UNIT, -1, 6LL * ((b1 >= 0) + (b2 >= 0)), -1, -1, r);
      mbs_cpaDep(B, o->loops_concurrent ? rows : lastr[r], unit);
      // the bias passes along the loaded bodies' paths on the rank (mbs_schurRankFactorPath)
      int rb0 = X->R[r].b0, rb1 = X->R[r].b1, ld[2] = {b1, b2};
      if (mbs_schurRhsOnly(X->R[r].rk)) {
        for (int k = 0; k < 2; k++)
          for (int b = ld[k]; b >= rb0 && b < rb1 && !pth[b]; b = m->body_parent[b]) pth[b] = 1;
        B->spath = pth;
      }
      B->bfirst = first, B->blim = t; // the bodies the equations at or before t need
      e = mbs_cpaLoopTree(B, K, MBS_CPA_GRAPH_SCHUR, scr, 1, unit, unit, o, j + 1, &end);
      B->bfirst = NULL;
      if (B->spath) memset(pth, 0, (size_t)n);
      B->spath = NULL;
      B->cls = MBS_CPA_CLASS_SOLVE;
      int col = mbs_cpaNodeOn(B, MBS_CPA_LOOP_COLUMN, -1, cf, -1, -1, r);
      mbs_cpaDep(B, end, col);
      lastr[r] = col;
    }
    mk[r] = 0;
    B->smask = NULL;
  }
  if (!e) {
    int last = mbs_cpaSync(B, n0, B->n);
    *red = mbs_cpaLoopReduce(B, (double)np * np + (double)np * neq + (double)neq * neq + neq + 1, 1,
                             last);
    if (np > 0) { // A -= G^T C^-1 G on every rank (mbs_schurReduce)
      B->cls = MBS_CPA_CLASS_SOLVE;
      int el = mbs_cpaNode(B, MBS_CPA_LOOP_FACTOR, -1, mbs_flopSchurReduce(neq, np), -1, -1);
      mbs_cpaDep(B, *red, el);
      *red = el;
    }
  }
  free(mk), free(lastr), free(pth);
  return e;
}

// phase stride between the tree solves of a loop evaluation (block and body grain merge only
// within one solve)
#define MBS_CPA_LOOP_PHASES 2000000

// a 0-flop node after every node in [n0, n1) (the end of a step every rank finishes before the
// next: the code's order)
static int mbs_cpaSync(mbsCpaB *B, int n0, int n1) {
  int s = mbs_cpaNode(B, MBS_CPA_LOOP_SYNC, -1, 0, -1, -1);
  for (int v = n0; v < n1; v++) mbs_cpaDep(B, v, s);
  return s;
}

// an allreduce (+ broadcast when bcast) of nd doubles over the ranks of a distributed graph after
// node `after`; returns `after` on one rank and in data-flow graphs (no message)
static int mbs_cpaLoopReduce(mbsCpaB *B, double nd, int bcast, int after) {
  int R = B->o->ranks;
  if (R <= 1) return after;
  int v = mbs_cpaNode(B, MBS_CPA_MSG_ALLREDUCE, -1, 0, -1, -1);
  if (v < 0) return v;
  int rounds = mbs_cpaLog2(R);
  B->cost[v] = (bcast ? 2 : 1) * rounds * (B->o->latency + 8.0 * nd / B->o->bandwidth) +
               (double)rounds * nd * B->o->flop_time;
  B->proc[v] = -2;
  mbs_cpaDep(B, after, v);
  return v;
}

// one tree solve of the method (graph ABA or a constraint-force solver) after node `after`, with
// the external wrenches of node `src` when fext; os: its iterations; returns its closing sync
static mbsErr mbs_cpaLoopTree(mbsCpaB *B, const mbsCpaKin *K, int graph, int *scr, int fext,
                              int src, int after, const mbsCpaOptions *os, int solve, int *end) {
  const mbsModel *m = B->m;
  int n = m->nbody, n0 = B->n;
  size_t nb = (size_t)n;
  mbsCpaKin Kx = *K;
  const mbsCpaOptions *keep = B->o;
  mbsErr e = MBS_OK;
  B->phoff = (solve + 1) * MBS_CPA_LOOP_PHASES;
  B->fext = fext;
  B->cls = MBS_CPA_CLASS_DYN;
  if (fext) { // f_ext enters with the bias forces (ABA: pA -= f_ext, 6 flops per body; schur:
              // the same in each owned body's articulated record or compliance-form start)
    Kx.bias = scr + 4 * nb;
    for (int b = 0; b < n; b++) {
      if ((B->smask && !B->smask[mbs_cpaOwner(B, b)]) || (B->spath && !B->spath[b])) {
        Kx.bias[b] = K->bias[b]; // a local solve of other ranks, or off its loaded paths
        continue;
      }
      int f6 = graph == MBS_CPA_GRAPH_ABA || graph == MBS_CPA_GRAPH_SCHUR;
      Kx.bias[b] = mbs_cpaNode(B, MBS_CPA_LOOP_FEXT, b, f6 ? 6 : 0, -1, -1);
      mbs_cpaDep(B, K->bias[b], Kx.bias[b]);
      mbs_cpaDep(B, src, Kx.bias[b]);
    }
  }
  B->o = os;
  B->reuse = solve > 0; // the positions stay: solve 0's blocks (cfs) and factor (direct)
  if (graph == MBS_CPA_GRAPH_ABA)
    mbs_cpaAba(B, &Kx, scr, scr + nb, scr + 2 * nb, scr + 3 * nb);
  else if (graph == MBS_CPA_GRAPH_SCHUR) // solve 0 uses the ghost stages of the kinematics
    e = mbs_cpaSchSolve(B, &Kx, B->sch, solve > 0,
                        B->smask || (solve > 0 && solve <= m->nlam_loop));
  else
    e = mbs_cpaCfs(B, &Kx);
  B->o = keep;
  B->fext = 0;
  B->phoff = 0;
  B->reuse = 0;
  int n1 = B->n;
  for (int v = n0; v < n1; v++) mbs_cpaDep(B, after, v); // the code's order: after the last step
  *end = mbs_cpaSync(B, n0, n1);
  return e;
}

// flops of mbs_loopZeroSums for loop k with every joint on one rank (its rows share the walks);
// mark: nbody bytes of zeros, left zero
static long long mbs_cpaLoopZeroFlops(const mbsModel *m, int k, char *mark) {
  long long f = 0;
  int nk = m->loop_lamnum[k], sides[2] = {m->loop_body[2 * k], m->loop_body[2 * k + 1]};
  for (int s = 0; s < 2; s++) {
    if (sides[s] < 0) continue;
    f += (long long)nk * (MBS_FL_LOOP_ZSIDE + MBS_FL_DOT6 + 2);
    for (int c = sides[s]; c >= 0; c = m->body_parent[c]) {
      int nd = m->body_dofnum[c];
      if (nd == 0) continue;
      f += mbs_flopLoopZeroVisit(nd, nk);
      if (!mark[c]) mark[c] = 1, f += 2LL * nd * nk;
    }
  }
  for (int s = 0; s < 2; s++)
    for (int c = sides[s]; c >= 0; c = m->body_parent[c]) mark[c] = 0;
  return f;
}

// flops of loop k's loop.rows node: mbs_loopRows with velocities (directions, right sides) and
// the zero-row test of its equations (mbs_loopZeroSums, every joint on one rank; the first loop
// also the ground-frame subspaces of every dof); mark as in mbs_cpaLoopZeroFlops
static long long mbs_cpaLoopRowsFlops(const mbsModel *m, int k, int stab, char *mark) {
  int t = m->loop_type[k], nk = m->loop_lamnum[k], npos = 0;
  for (int r = 0; r < nk; r++) npos += mbs_loopEqIsPosition(t, r);
  long long f = mbs_flopLoopRows(npos, nk - npos, m->loop_body[2 * k] >= 0,
                                 m->loop_body[2 * k + 1] >= 0, stab) +
                mbs_cpaLoopZeroFlops(m, k, mark);
  if (k == 0) f += (long long)MBS_FL_LOOP_ZDOF * m->nv; // S^g of every dof
  return f;
}

// one evaluation of a model with closed loops or spring-dampers (docs/loops.md 8.1, docs/cpa.md
// "Loop models"): the engine's loop solve for the constraint-force methods (m + 2 tree solves),
// the serial baseline mbs_loopSolve for aba
static mbsErr mbs_cpaLoops(mbsCpaB *B, const mbsCpaKin *K, int graph) {
  const mbsModel *m = B->m;
  const mbsCpaOptions *o = B->o;
  int n = m->nbody, nkin = B->n, neq = m->nlam_loop, aba = graph == MBS_CPA_GRAPH_ABA;
  size_t nb = (size_t)(n > 0 ? n : 1);
  MBS_CHECK(neq <= 1000, MBS_ERR_UNSUPPORTED,
            "cpa: %d closure equations: the loop graph is limited to 1000", neq);
  int *scr = malloc(5 * nb * sizeof(int)), *eqb = malloc(2 * (size_t)(neq + 1) * sizeof(int));
  size_t nsib = 0;
  for (int b = 0; b < n; b++) nsib += (size_t)m->body_childnum[b] * (m->body_childnum[b] - 1) / 2;
  int cfs = !aba && graph != MBS_CPA_GRAPH_SCHUR;
  B->keep = cfs ? malloc((5 * nb + nsib + 1) * sizeof(int)) : NULL;
  if (!scr || !eqb || (cfs && !B->keep)) {
    free(scr), free(eqb), free(B->keep);
    B->keep = NULL;
    return mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  }
  for (int k = 0, i = 0; k < m->nloop; k++)
    for (int r = 0; r < m->loop_lamnum[k]; r++, i++)
      eqb[2 * i] = m->loop_body[2 * k], eqb[2 * i + 1] = m->loop_body[2 * k + 1];
  int rank = o->loop_rank >= 0 ? o->loop_rank : m->loop_asm.rank;
  // the zero rows the factorization drops: at least those known in advance (their A_ii is 0)
  int nzero = o->loop_zero >= 0 ? o->loop_zero : m->loop_asm.nskip;
  // the zero rows known in advance: no unit solve (aba and the engine; docs/loops.md 8.1)
  const unsigned char *skip = o->loop_skip ? o->loop_skip : m->loop_asm.skip;
  if (rank > neq) rank = neq;
  mbsErr e = MBS_OK;
  int stab = m->opt.baumgarte[0] != 0 || m->opt.baumgarte[1] != 0;
  // the bodies' stages gathered on every rank (engine: one allreduce of 18 per loop or spring
  // body after every rank's kinematics; serial aba: nothing), the spring-dampers' wrenches
  B->cls = MBS_CPA_CLASS_KIN;
  int gath = -1, springs = -1, n0 = B->n;
  if (!aba) {
    int nlb = 0;
    char *mark = calloc(nb, 1);
    for (int k = 0; mark && k < 2 * m->nloop + 2 * m->nforce; k++) {
      int b = k < 2 * m->nloop ? m->loop_body[k] : m->force_body[k - 2 * m->nloop];
      if (b >= 0 && !mark[b]) mark[b] = 1, nlb++;
    }
    free(mark);
    gath = mbs_cpaLoopReduce(B, 18.0 * nlb, 0, mbs_cpaSync(B, 0, nkin));
  }
  for (int j = 0; j < m->nforce; j++) {
    int b1 = m->force_body[2 * j], b2 = m->force_body[2 * j + 1];
    int s = mbs_cpaNode(B, MBS_CPA_LOOP_SPRING, -1, mbs_flopSpring(b1 >= 0, b2 >= 0), -1, -1);
    mbs_cpaDep(B, gath, s);
    if (b1 >= 0) mbs_cpaDep(B, K->pose[b1], s), mbs_cpaDep(B, K->v[b1], s);
    if (b2 >= 0) mbs_cpaDep(B, K->pose[b2], s), mbs_cpaDep(B, K->v[b2], s);
  }
  if (m->nforce) springs = mbs_cpaSync(B, n0, B->n);
  int end = -1, step = springs >= 0 ? springs : gath;
  if (cfs && m->nloop && mbs_loopUseRows(m, o->method)) {
    // the closure rows in the system (docs/loops.md 8.4): one tree solve that holds them
    const unsigned char *sk = o->loop_skip ? o->loop_skip : m->loop_asm.skip;
    B->lbody = calloc(nb, 1);
    if (!B->lbody) e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
    for (int k = 0; !e && k < 2 * m->nloop; k++)
      if (m->loop_body[k] >= 0) B->lbody[m->loop_body[k]] = 1;
    B->lrows = neq, B->lskip = sk, B->lsetup = -1, B->lprec = 0;
    for (int k = 0; k < m->nloop; k++) {
      int nr = mbs_cpaLoopKept(m, sk, k);
      if (nr) B->lprec += mbs_flopCholSolve(nr);
    }
    if (!e) e = mbs_cpaLoopTree(B, K, graph, scr, m->nforce > 0, springs, step, o, 0, &end);
    B->lrows = 0, B->lskip = NULL;
    free(B->lbody), free(scr), free(eqb), free(B->keep);
    B->lbody = NULL, B->keep = NULL;
    return e;
  }
  // tree solve 0 (with the springs)
  e = mbs_cpaLoopTree(B, K, graph, scr, m->nforce > 0, springs, step, o, 0, &end);
  if (e || !m->nloop) { // spring-dampers only: one tree solve
    free(scr), free(eqb), free(B->keep);
    B->keep = NULL;
    return e;
  }
  // the rows of every closure equation and the right side b = kappa' - D^T a0
  B->cls = MBS_CPA_CLASS_SOLVE;
  int r0 = B->n;
  char *zmark = calloc(nb, 1);
  if (!zmark) e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  for (int k = 0; !e && k < m->nloop; k++) {
    int nk = m->loop_lamnum[k];
    int rn = mbs_cpaNode(B, MBS_CPA_LOOP_ROWS, -1, mbs_cpaLoopRowsFlops(m, k, stab, zmark), -1, -1);
    mbs_cpaDep(B, end, rn);
    // the right side: the equation's dots with a0 (a ground side with a_ground) and kappa'
    int rh = mbs_cpaNode(B, MBS_CPA_LOOP_RHS, -1, (2LL * MBS_FL_LOOP_DOT + 1) * nk, -1, -1);
    mbs_cpaDep(B, rn, rh);
  }
  free(zmark);
  int rows = mbs_cpaSync(B, r0, B->n);
  if (!aba) rows = mbs_cpaLoopReduce(B, 2.0 * neq, 1, rows); // the zero-row sums
  // A column by column: the unit wrench pair, a homogeneous tree solve, the column's dots
  int prev = rows, last = rows, cols0 = B->n, sepred = -1;
  int *cols = malloc((size_t)(neq + 1) * sizeof(int));
  // aba: its columns in mbs_loopColumnOrder, each with pass 3 only where equations at or before
  // its position need it and only their dots (A is symmetric); the others in equation order
  int *ord = malloc((size_t)(neq + 1) * sizeof(int)), *first = malloc((size_t)nb * sizeof(int));
  // (schur's separators: the same order and cut, mbs_loopLocalColumns)
  int sep = graph == MBS_CPA_GRAPH_SCHUR && mbs_loopSeparators(m, o->method);
  if (!cols || !ord || !first || ((aba || sep) && mbs_loopColumnOrder(m, ord, first)))
    e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  if (!e && !aba && !sep)
    for (int t = 0; t < neq; t++) ord[t] = t;
  if (!e && sep) e = mbs_cpaLoopSeparators(B, K, scr, eqb, skip, ord, first, rows, &sepred);
  for (int t = 0; !e && !sep && t < neq; t++) {
    int j = ord[t];
    if (skip && skip[j]) continue; // its column is 0
    mbsCpaOptions os = *o;
    if (o->loop_solves) {
      const int *q = o->loop_solves + 4 * j;
      os.iterations = q[0], os.converged = q[1], os.spec_iterations = q[2];
      os.spec_converged = q[3];
    }
    int sides = (eqb[2 * j] >= 0) + (eqb[2 * j + 1] >= 0);
    B->cls = MBS_CPA_CLASS_SOLVE;
    int unit = mbs_cpaNode(B, MBS_CPA_LOOP_UNIT, -1, aba ? 0 : 6LL * sides, -1, -1);
    mbs_cpaDep(B, o->loops_concurrent ? rows : prev, unit);
    if (aba) { // mbs_loopSweep: tip to base on the loaded bodies, base to tip on the moving ones
      long long f = 0;
      char *ld = calloc(nb, 1);
      if (!ld) {
        e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
        break;
      }
      for (int s = 0; s < 2; s++)
        for (int b = eqb[2 * j + s]; b >= 0 && !ld[b]; b = m->body_parent[b]) ld[b] = 1;
      for (int b = 0; b < n; b++) {
        int p = m->body_parent[b], k = m->body_dofnum[b];
        if (ld[b]) f += mbs_flopLoopSweepBack(k, p >= 0);
        if (first[b] > t) continue; // no equation at or before t needs it (nor its subtree)
        if (ld[b] || (p >= 0 && ld[p] == 2)) ld[b] = 2, f += mbs_flopLoopSweepFwd(k, p >= 0);
      }
      free(ld);
      int sw = mbs_cpaNode(B, MBS_CPA_LOOP_SWEEP, -1, f, -1, -1);
      mbs_cpaDep(B, unit, sw);
      mbs_cpaDep(B, prev, sw);
      end = sw;
    } else {
      e = mbs_cpaLoopTree(B, K, graph, scr, 1, unit, unit, &os, j + 1, &end);
    }
    B->cls = MBS_CPA_CLASS_SOLVE;
    long long cf = 0; // A_ij = D_i^T a over the body sides of each equation (aba: i at or
                      // before t and not a zero row)
    for (int s = 0; s < (aba ? t + 1 : neq); s++) {
      int i = ord[s];
      if (!aba || !skip || !skip[i])
        cf += (long long)MBS_FL_LOOP_DOT * ((eqb[2 * i] >= 0) + (eqb[2 * i + 1] >= 0));
    }
    cols[j] = mbs_cpaNode(B, MBS_CPA_LOOP_COLUMN, -1, cf, -1, -1);
    mbs_cpaDep(B, end, cols[j]);
    prev = cols[j];
  }
  if (!e && aba && neq > 0) { // mbs_abaFactor before the sweeps
    long long f = 0;
    for (int b = 0; b < n; b++)
      f += mbs_flopLoopAbaFactor(m->body_dofnum[b], m->body_parent[b] >= 0);
    B->cls = MBS_CPA_CLASS_DYN;
    int af = mbs_cpaNode(B, MBS_CPA_LOOP_ABAFACTOR, -1, f, -1, -1);
    mbs_cpaDep(B, rows, af);
    for (int v = cols0; v < B->n; v++)
      if (B->kind[v] == MBS_CPA_LOOP_SWEEP) mbs_cpaDep(B, af, v);
  }
  if (!e) {
    last = neq ? mbs_cpaSync(B, cols0, B->n) : rows;
    // the partial A and b summed (allreduce + broadcast), the free compliances, the
    // rank-revealing factorization, the minimum-norm lambda, the loop wrenches D lambda
    // (separators: their one sum and the cut joints' elimination came before)
    int red = sep ? sepred : aba ? last : mbs_cpaLoopReduce(B, (double)neq * neq, 1, last);
    red = aba || sep ? red : mbs_cpaLoopReduce(B, neq, 1, red);
    long long ff = mbs_flopLoopFactor(neq, rank, nzero, 1) + mbs_flopLoopMinNorm(neq, rank, nzero),
              fw = 0;
    for (int i = 0; i < neq; i++) {
      int sides = (eqb[2 * i] >= 0) + (eqb[2 * i + 1] >= 0);
      ff += (long long)MBS_FL_LOOP_FREE * sides;
      fw += 12LL * sides;
    }
    B->cls = MBS_CPA_CLASS_SOLVE;
    int fac = mbs_cpaNode(B, MBS_CPA_LOOP_FACTOR, -1, ff, -1, -1);
    mbs_cpaDep(B, red, fac);
    int wr = mbs_cpaNode(B, MBS_CPA_LOOP_WRENCH, -1, fw, -1, -1);
    mbs_cpaDep(B, fac, wr);
    // the final tree solve with the loop wrenches, the closure residual and its sum
    mbsCpaOptions os = *o;
    if (o->loop_solves) {
      const int *q = o->loop_solves + 4 * neq;
      os.iterations = q[0], os.converged = q[1], os.spec_iterations = q[2];
      os.spec_converged = q[3];
    }
    e = mbs_cpaLoopTree(B, K, graph, scr, 1, wr, wr, &os, neq + 1, &end);
    B->cls = MBS_CPA_CLASS_SOLVE;
    int res = mbs_cpaNode(B, MBS_CPA_LOOP_RESID, -1, (2LL * MBS_FL_LOOP_DOT + 1) * neq, -1, -1);
    mbs_cpaDep(B, end, res);
    if (!aba) mbs_cpaLoopReduce(B, neq, 1, res);
  }
  free(cols), free(ord), free(first), free(scr), free(eqb), free(B->keep);
  B->keep = NULL;
  return e;
}

// ---------------------------------------------------------------- finalize

static int mbs_cpaCmpPair(const void *a, const void *b) {
  const long long *x = a, *y = b;
  if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
  if (x[1] != y[1]) return x[1] < y[1] ? -1 : 1;
  return 0;
}

// the engine's decomposition: the one partition module (src/partition.c)
static void mbs_cpaDecompose(const mbsModel *m, int P, int *owner) {
  int n = m->nbody;
  int *start = malloc((size_t)(P + 1) * sizeof *start);
  if (!start || mbs_partitionModel(m, P, start) != MBS_OK) { // fall back to equal counts
    for (int b = 0; b < n; b++) owner[b] = (int)((long long)b * P / n);
    free(start);
    return;
  }
  for (int k = 0; k < P; k++)
    for (int b = start[k]; b < start[k + 1]; b++) owner[b] = k;
  free(start);
}

// every dependency between two ranks becomes a message node (one per source node and target
// rank)
static void mbs_cpaMessages(mbsCpaB *B) {
  int ne = B->ne;
  long long *pr = malloc((size_t)(ne > 0 ? ne : 1) * 3 * sizeof *pr);
  if (!pr) {
    B->err = 1;
    return;
  }
  int nx = 0;
  for (int k = 0; k < ne; k++) {
    int u = B->esrc[k], v = B->edst[k];
    if (B->proc[u] >= 0 && B->proc[v] >= 0 && B->proc[u] != B->proc[v]) {
      pr[3 * nx] = (long long)u * (B->o->ranks + 1) + B->proc[v];
      pr[3 * nx + 1] = k;
      pr[3 * nx + 2] = 0;
      nx++;
    }
  }
  qsort(pr, (size_t)nx, 3 * sizeof *pr, mbs_cpaCmpPair);
  int msg = -1;
  for (int i = 0; i < nx; i++) {
    int k = (int)pr[3 * i + 1], u = B->esrc[k];
    if (i == 0 || pr[3 * i] != pr[3 * (i - 1)]) {
      msg = mbs_cpaNode(B, MBS_CPA_MSG_HALO, -1, 0, -1, -1);
      if (msg < 0) break;
      B->cost[msg] = B->o->latency + MBS_CPA_MSG_BYTES / B->o->bandwidth;
      B->proc[msg] = -2;
      mbs_cpaDep(B, u, msg);
    }
    B->esrc[k] = msg; // the edge now leaves the message
  }
  free(pr);
}

// merge nodes of one (phase, body) at block or body grain; returns the group of every node
static int mbs_cpaGroups(const mbsCpaB *B, int grain, int *grp) {
  long long *key = malloc((size_t)B->n * 2 * sizeof *key);
  if (!key) return -1;
  int nb = B->m->nbody + 1;
  for (int v = 0; v < B->n; v++) {
    int ph = grain == MBS_CPA_GRAIN_BLOCK ? B->pblk[v] : B->pbdy[v];
    key[2 * v] = (ph < 0 || B->body[v] < 0) ? -1 - (long long)v : (long long)ph * nb + B->body[v];
    key[2 * v + 1] = v;
  }
  qsort(key, (size_t)B->n, 2 * sizeof *key, mbs_cpaCmpPair);
  int ng = 0;
  for (int i = 0; i < B->n; i++) {
    if (i > 0 && key[2 * i] != key[2 * (i - 1)]) ng++;
    grp[key[2 * i + 1]] = ng;
  }
  free(key);
  return B->n > 0 ? ng + 1 : 0;
}

static mbsErr mbs_cpaFinalize(mbsCpaB *B, mbsCpaGraph *g) {
  int n = B->n, ng = n;
  int *grp = malloc((size_t)(n > 0 ? n : 1) * sizeof *grp);
  long long *pairs = NULL;
  int *indeg = NULL, *order = NULL, *pos = NULL;
  mbsErr e = MBS_OK;
  if (!grp) return mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  if (B->o->grain == MBS_CPA_GRAIN_OP || B->o->grain == MBS_CPA_GRAIN_FLOP) {
    for (int v = 0; v < n; v++) grp[v] = v;
  } else {
    ng = mbs_cpaGroups(B, B->o->grain, grp);
    if (ng < 0) {
      free(grp);
      return mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
    }
  }
  // merged nodes: sums of flops and cost; kind of the costliest member
  g->nnode = ng;
  size_t sz = (size_t)(ng > 0 ? ng : 1);
  g->flops = calloc(sz, sizeof *g->flops);
  g->cost = calloc(sz, sizeof *g->cost);
  g->span = calloc(sz, sizeof *g->span);
  g->kind = calloc(sz, sizeof *g->kind);
  g->body = calloc(sz, sizeof *g->body);
  g->proc = calloc(sz, sizeof *g->proc);
  double *best = calloc(sz, sizeof *best);
  pairs = malloc((size_t)(B->ne > 0 ? B->ne : 1) * 2 * sizeof *pairs);
  indeg = calloc(sz, sizeof *indeg), order = malloc(sz * sizeof *order);
  pos = malloc(sz * sizeof *pos);
  if (!g->flops || !g->cost || !g->span || !g->kind || !g->body || !g->proc || !best || !pairs ||
      !indeg || !order || !pos) {
    e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
    goto done;
  }
  for (int v = 0; v < ng; v++) best[v] = -1;
  for (int v = 0; v < n; v++) {
    int G = grp[v];
    g->flops[G] += B->flops[v];
    g->cost[G] += B->cost[v];
    if (B->cost[v] > best[G]) {
      best[G] = B->cost[v];
      g->kind[G] = B->kind[v];
      g->body[G] = B->body[v];
      g->proc[G] = B->proc[v];
    }
  }
  // edges between groups, deduplicated
  int ne = 0;
  for (int k = 0; k < B->ne; k++) {
    int a = grp[B->esrc[k]], b = grp[B->edst[k]];
    if (a == b) continue;
    pairs[2 * ne] = a, pairs[2 * ne + 1] = b;
    ne++;
  }
  qsort(pairs, (size_t)ne, 2 * sizeof *pairs, mbs_cpaCmpPair);
  int u = 0;
  for (int k = 0; k < ne; k++)
    if (k == 0 || pairs[2 * k] != pairs[2 * (k - 1)] || pairs[2 * k + 1] != pairs[2 * k - 1])
      pairs[2 * u] = pairs[2 * k], pairs[2 * u + 1] = pairs[2 * k + 1], u++;
  ne = u;
  // topological order (Kahn); a cycle means merged phases that depend on each other
  for (int k = 0; k < ne; k++) indeg[pairs[2 * k + 1]]++;
  int *sadr = calloc(sz + 1, sizeof *sadr);
  if (!sadr) {
    e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
    goto done;
  }
  for (int k = 0; k < ne; k++) sadr[pairs[2 * k] + 1]++;
  for (int v = 0; v < ng; v++) sadr[v + 1] += sadr[v];
  int head = 0, tail = 0;
  for (int v = 0; v < ng; v++)
    if (!indeg[v]) order[tail++] = v;
  while (head < tail) {
    int v = order[head++];
    for (int k = sadr[v]; k < sadr[v + 1]; k++) {
      int w = (int)pairs[2 * k + 1];
      if (--indeg[w] == 0) order[tail++] = w;
    }
  }
  free(sadr);
  if (tail != ng) {
    e = mbs_errSet(MBS_ERR_INTERNAL, "cpa: the %s-grain graph has a cycle",
                   mbs_cpaGrainName(B->o->grain));
    goto done;
  }
  // renumber in topological order
  for (int i = 0; i < ng; i++) pos[order[i]] = i;
  {
    long long *fl = malloc(sz * sizeof *fl);
    double *co = malloc(sz * sizeof *co);
    int *ki = malloc(sz * sizeof *ki), *bo = malloc(sz * sizeof *bo), *pr = malloc(sz * sizeof *pr);
    if (!fl || !co || !ki || !bo || !pr) {
      free(fl), free(co), free(ki), free(bo), free(pr);
      e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
      goto done;
    }
    for (int v = 0; v < ng; v++) {
      int i = pos[v];
      fl[i] = g->flops[v], co[i] = g->cost[v], ki[i] = g->kind[v], bo[i] = g->body[v];
      pr[i] = g->proc[v];
    }
    free(g->flops), free(g->cost), free(g->kind), free(g->body), free(g->proc);
    g->flops = fl, g->cost = co, g->kind = ki, g->body = bo, g->proc = pr;
  }
  // span of a node: its cost; at flop grain a kernel call's W flops as a balanced tree
  g->fine = B->o->grain == MBS_CPA_GRAIN_FLOP;
  for (int v = 0; v < ng; v++) {
    g->span[v] = g->cost[v];
    if (g->fine && g->proc[v] != -2 && g->flops[v] > 0) {
      int d = 1;
      while ((1LL << (d - 1)) < g->flops[v]) d++; // d = 1 + ceil(log2 W)
      if ((double)d < (double)g->flops[v]) g->span[v] = d * (g->cost[v] / (double)g->flops[v]);
    }
  }
  for (int k = 0; k < ne; k++)
    pairs[2 * k] = pos[pairs[2 * k]], pairs[2 * k + 1] = pos[pairs[2 * k + 1]];
  // CSR both ways
  g->nedge = ne;
  g->succ_adr = calloc(sz + 1, sizeof(int)), g->pred_adr = calloc(sz + 1, sizeof(int));
  g->succ = malloc((size_t)(ne > 0 ? ne : 1) * sizeof(int));
  g->pred = malloc((size_t)(ne > 0 ? ne : 1) * sizeof(int));
  if (!g->succ_adr || !g->pred_adr || !g->succ || !g->pred) {
    e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
    goto done;
  }
  for (int k = 0; k < ne; k++) g->succ_adr[pairs[2 * k] + 1]++, g->pred_adr[pairs[2 * k + 1] + 1]++;
  for (int v = 0; v < ng; v++)
    g->succ_adr[v + 1] += g->succ_adr[v], g->pred_adr[v + 1] += g->pred_adr[v];
  for (int v = 0; v < ng; v++) indeg[v] = 0, order[v] = 0;
  for (int k = 0; k < ne; k++) {
    int a = (int)pairs[2 * k], b = (int)pairs[2 * k + 1];
    g->succ[g->succ_adr[a] + indeg[a]++] = b;
    g->pred[g->pred_adr[b] + order[b]++] = a;
  }
done:
  free(grp), free(best), free(pairs), free(indeg), free(order), free(pos);
  return e;
}

// the graph of a method, from the solver table (MBS_CPA_GRAPH_NONE: none)
static int mbs_cpaGraph(int method) {
  const mbsSolverType *t = mbs_solverFind(method);
  return t ? t->cpa_graph : MBS_CPA_GRAPH_NONE;
}

int mbs_cpaConvergedOf(int reason) {
  return reason == MBS_REASON_CONVERGED ? 1 : reason == MBS_REASON_DIVERGED_STAGNATED ? 2 : 0;
}

int mbs_cpaIterative(int method) {
  const mbsSolverType *t = mbs_solverFind(method);
  return t && t->iterative && t->cpa_graph != MBS_CPA_GRAPH_NONE;
}

mbsErr mbs_cpaBuild(const mbsModel *m, const mbsCpaOptions *o, mbsCpaGraph **out) {
  *out = NULL;
  int iterative = mbs_cpaIterative(o->method), graph = mbs_cpaGraph(o->method);
  MBS_CHECK(graph != MBS_CPA_GRAPH_NONE, MBS_ERR_UNSUPPORTED,
            "cpa: no graph for method \"%s\" (available: aba, crba, direct, jcg, jacobi, gs, "
            "sor, chebyshev, schur)",
            mbs_solverName(o->method));
  for (int k = 0; o->cg && k < o->cg->n; k++)
    MBS_CHECK(k < MBS_CFS_CG_RESTARTS && o->cg->it[k] >= 1 && o->cg->it[k] <= o->iterations &&
                  o->cg->seg[k] >= 0 && o->cg->seg[k] < MBS_CHEB_SEGS,
              MBS_ERR_INPUT, "cpa: jcg restart %d after iteration %d out of range", k,
              o->cg->it[k]);
  MBS_CHECK(o->spec_iterations >= 0 &&
                o->spec_iterations <= (mbs_solverCaps(o->method)->segments
                                           ? MBS_CHEB_SEGS * MBS_CFS_CHEB_STEPS
                                           : MBS_CFS_SPEC_STEPS),
            MBS_ERR_INPUT, "cpa: spectrum-estimate iterations %d out of range", o->spec_iterations);
  MBS_CHECK(!mbs_solverCaps(o->method)->segments || m->opt.rho > 0 ||
                o->spec_iterations <= o->iterations,
            MBS_ERR_INPUT, "cpa: chebyshev: %d estimate iterations exceed the %d in total",
            o->spec_iterations, o->iterations);
  MBS_CHECK(o->grain >= 0 && o->grain <= 3, MBS_ERR_INPUT, "cpa: bad grain %d", o->grain);
  MBS_CHECK(o->iterations >= 0, MBS_ERR_INPUT, "cpa: iterations must be >= 0");
  MBS_CHECK(o->ranks >= 0 && o->ranks <= m->nbody, MBS_ERR_INPUT,
            "cpa: cannot distribute %d bodies over %d ranks", m->nbody, o->ranks);
  MBS_CHECK(o->ranks == 0 || iterative || graph == MBS_CPA_GRAPH_SCHUR, MBS_ERR_UNSUPPORTED,
            "cpa: the distributed graph exists for the constraint-force methods only; aba and "
            "crba run on one rank");
  MBS_CHECK(o->flop_time > 0 && o->latency >= 0 && o->bandwidth > 0, MBS_ERR_INPUT,
            "cpa: flop_time and bandwidth must be > 0, latency >= 0");
  MBS_CHECK(!(m->nloop || m->nforce) || graph != MBS_CPA_GRAPH_CRBA, MBS_ERR_UNSUPPORTED,
            "cpa: --method %s: models with %s have graphs for aba and the constraint-force "
            "methods schur, jcg, jacobi, gs, sor, chebyshev and direct; not yet for %s",
            mbs_solverName(o->method), m->nloop ? "closed loops" : "spring-dampers",
            mbs_solverName(o->method));
  mbsCpaB B;
  memset(&B, 0, sizeof B);
  B.m = m, B.o = o;
  int n = m->nbody;
  size_t nb = (size_t)(n > 0 ? n : 1);
  mbsCpaKin K;
  int *buf = malloc(11 * nb * sizeof(int));
  B.owner = calloc(nb, sizeof(int));
  mbsErr e = MBS_OK;
  mbsCpaGraph *g = calloc(1, sizeof *g);
  if (!buf || !B.owner || !g) {
    free(buf), free(B.owner), free(g);
    return mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  }
  if (o->ranks >= 1) mbs_cpaDecompose(m, o->ranks, B.owner);
  K.joint = buf, K.pose = buf + nb, K.vj = buf + 2 * nb, K.v = buf + 3 * nb, K.c = buf + 4 * nb;
  K.bias = buf + 5 * nb, K.force = buf + 6 * nb;
  B.cls = MBS_CPA_CLASS_KIN;
  if (graph != MBS_CPA_GRAPH_SCHUR) mbs_cpaKinematics(&B, &K);
  B.cls = MBS_CPA_CLASS_DYN;
  if (graph == MBS_CPA_GRAPH_SCHUR && (m->nloop || m->nforce)) {
    // schur's own kinematics, then the loop evaluation's m + 2 schur solves
    mbsCpaSch X;
    e = mbs_cpaSchBegin(&B, &K, &X);
    B.sch = &X;
    B.cls = MBS_CPA_CLASS_DYN;
    if (!e) e = mbs_cpaLoops(&B, &K, graph);
    B.sch = NULL;
    mbs_cpaSchFree(&X);
  } else if (m->nloop || m->nforce)
    e = mbs_cpaLoops(&B, &K, graph);
  else if (graph == MBS_CPA_GRAPH_SCHUR)
    e = mbs_cpaSchur(&B, &K);
  else if (graph == MBS_CPA_GRAPH_ABA)
    mbs_cpaAba(&B, &K, buf + 7 * nb, buf + 8 * nb, buf + 9 * nb, buf + 10 * nb);
  else if (graph == MBS_CPA_GRAPH_CRBA)
    e = mbs_cpaCrba(&B, &K);
  else // the constraint-force method
    e = mbs_cpaCfs(&B, &K);
  if (!e && o->ranks >= 1) mbs_cpaMessages(&B);
  if (!e && B.err) e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory building the graph");
  g->nbody = n, g->ranks = o->ranks;
  memcpy(g->class_flops, B.class_flops, sizeof g->class_flops);
  if (!e) e = mbs_cpaFinalize(&B, g);
  free(buf), free(B.owner), free(B.flops), free(B.cost), free(B.kind), free(B.body), free(B.proc);
  free(B.pblk), free(B.pbdy), free(B.esrc), free(B.edst);
  if (e) {
    mbs_cpaDestroy(&g);
    return e;
  }
  *out = g;
  return MBS_OK;
}

void mbs_cpaDestroy(mbsCpaGraph **pg) {
  if (!pg || !*pg) return;
  mbsCpaGraph *g = *pg;
  free(g->flops), free(g->cost), free(g->span), free(g->kind), free(g->body), free(g->proc);
  free(g->pred_adr), free(g->pred), free(g->succ_adr), free(g->succ);
  free(g);
  *pg = NULL;
}

// ---------------------------------------------------------------- analysis

mbsErr mbs_cpaAnalyse(const mbsCpaGraph *g, mbsCpaResult *r) {
  memset(r, 0, sizeof *r);
  int n = g->nnode;
  double *fin = malloc((size_t)(n > 0 ? n : 1) * sizeof *fin);
  int *from = malloc((size_t)(n > 0 ? n : 1) * sizeof *from);
  if (!fin || !from) {
    free(fin), free(from);
    return mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  }
  // earliest finish times in topological order (node ids are topological)
  int last = -1;
  for (int v = 0; v < n; v++) {
    double s = 0;
    from[v] = -1;
    for (int k = g->pred_adr[v]; k < g->pred_adr[v + 1]; k++) {
      int u = g->pred[k];
      if (fin[u] > s || (from[v] < 0 && fin[u] >= s)) s = fin[u], from[v] = u;
    }
    fin[v] = s + g->span[v];
    r->work_flops += g->flops[v];
    if (g->proc[v] != -2) r->work += g->cost[v];
    if (g->proc[v] == -2) r->nmsg++;
    if (last < 0 || fin[v] > fin[last]) last = v;
  }
  r->span = last >= 0 ? fin[last] : 0;
  r->parallelism = r->span > 0 ? r->work / r->span : 1;
  int len = 0;
  for (int v = last; v >= 0; v = from[v]) len++;
  r->path = malloc((size_t)(len > 0 ? len : 1) * sizeof *r->path);
  if (!r->path) {
    free(fin), free(from);
    return mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  }
  r->path_nodes = len;
  int i = len;
  for (int v = last; v >= 0; v = from[v]) {
    r->path[--i] = v;
    r->span_flops += g->flops[v];
    r->kind_nodes[g->kind[v]]++;
    r->kind_flops[g->kind[v]] += g->flops[v];
    r->kind_time[g->kind[v]] += g->span[v];
  }
  free(fin), free(from);
  return MBS_OK;
}

void mbs_cpaResultFree(mbsCpaResult *r) {
  free(r->path);
  r->path = NULL;
}

// ---- list scheduling

typedef struct {
  double key;
  int v;
} mbsCpaHeapItem;
typedef struct {
  mbsCpaHeapItem *a;
  int n, cap;
} mbsCpaHeap;

// max-heap on key, ties to the lower node id
static int mbs_cpaAbove(const mbsCpaHeapItem *x, const mbsCpaHeapItem *y) {
  return x->key > y->key || (x->key == y->key && x->v < y->v);
}
static int mbs_cpaPush(mbsCpaHeap *h, double key, int v) {
  if (h->n == h->cap) {
    int nc = h->cap ? 2 * h->cap : 64;
    mbsCpaHeapItem *a = realloc(h->a, (size_t)nc * sizeof *a);
    if (!a) return 0;
    h->a = a, h->cap = nc;
  }
  int i = h->n++;
  h->a[i].key = key, h->a[i].v = v;
  while (i > 0 && mbs_cpaAbove(&h->a[i], &h->a[(i - 1) / 2])) {
    mbsCpaHeapItem t = h->a[i];
    h->a[i] = h->a[(i - 1) / 2], h->a[(i - 1) / 2] = t;
    i = (i - 1) / 2;
  }
  return 1;
}
static mbsCpaHeapItem mbs_cpaPop(mbsCpaHeap *h) {
  mbsCpaHeapItem top = h->a[0];
  h->a[0] = h->a[--h->n];
  for (int i = 0;;) {
    int l = 2 * i + 1, r = l + 1, b = i;
    if (l < h->n && mbs_cpaAbove(&h->a[l], &h->a[b])) b = l;
    if (r < h->n && mbs_cpaAbove(&h->a[r], &h->a[b])) b = r;
    if (b == i) break;
    mbsCpaHeapItem t = h->a[i];
    h->a[i] = h->a[b], h->a[b] = t;
    i = b;
  }
  return top;
}

mbsErr mbs_cpaSchedule(const mbsCpaGraph *g, int P, double *makespan) {
  int n = g->nnode, fixed = 0;
  *makespan = 0;
  MBS_CHECK(P >= 1, MBS_ERR_INPUT, "cpa: processors must be >= 1");
  MBS_CHECK(!g->fine, MBS_ERR_UNSUPPORTED,
            "cpa: no list schedule at flop grain (kernel calls are not split); use op grain");
  for (int v = 0; v < n; v++)
    if (g->proc[v] >= 0) fixed = 1;
  MBS_CHECK(!fixed || P == g->ranks, MBS_ERR_INPUT,
            "cpa: a graph distributed over %d ranks is scheduled on exactly that many processors",
            g->ranks);
  size_t sz = (size_t)(n > 0 ? n : 1), sp = (size_t)P;
  double *bl = malloc(sz * sizeof *bl);
  int *indeg = malloc(sz * sizeof *indeg), *runp = malloc(sz * sizeof *runp);
  char *idle = malloc(sp), *touched = calloc(sp, 1), *instack = malloc(sp);
  int *idles = malloc(sp * sizeof *idles), *tlist = malloc(sp * sizeof *tlist);
  mbsCpaHeap glob = {NULL, 0, 0}, ev = {NULL, 0, 0};
  mbsCpaHeap *own = fixed ? calloc(sp, sizeof *own) : NULL;
  mbsErr e = MBS_OK;
  if (!bl || !indeg || !runp || !idle || !touched || !instack || !idles || !tlist ||
      (fixed && !own)) {
    e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
    goto done;
  }
  // priority: bottom level (longest path from the node to the end, its own cost included)
  for (int v = n - 1; v >= 0; v--) {
    double s = 0;
    for (int k = g->succ_adr[v]; k < g->succ_adr[v + 1]; k++)
      if (bl[g->succ[k]] > s) s = bl[g->succ[k]];
    bl[v] = s + g->cost[v];
  }
  int nidle = 0, nt = 0, ok = 1;
  for (int r = 0; r < P; r++) idle[r] = 1, instack[r] = 1, idles[nidle++] = r;
  double t = 0;
  // release a node whose predecessors have all finished (at time t)
#define MBS_CPA_RELEASE(v)                                                                         \
  do {                                                                                             \
    int v_ = (v), p_ = g->proc[v_];                                                                \
    if (p_ == -2) {                                                                                \
      runp[v_] = -1;                                                                               \
      ok = ok && mbs_cpaPush(&ev, -(t + g->cost[v_]), v_);                                         \
    } else if (p_ >= 0) {                                                                          \
      ok = ok && mbs_cpaPush(&own[p_], bl[v_], v_);                                                \
      if (idle[p_] && !touched[p_]) touched[p_] = 1, tlist[nt++] = p_;                             \
    } else {                                                                                       \
      ok = ok && mbs_cpaPush(&glob, bl[v_], v_);                                                   \
    }                                                                                              \
  } while (0)
  for (int v = 0; v < n; v++) {
    indeg[v] = g->pred_adr[v + 1] - g->pred_adr[v];
    if (!indeg[v]) MBS_CPA_RELEASE(v);
  }
  int done_n = 0;
  for (;;) {
    // dispatch: processors that became idle or got bound work, then free work on idle ones
    for (int i = 0; i < nt; i++) {
      int r = tlist[i];
      touched[r] = 0;
      if (!idle[r]) continue;
      mbsCpaHeap *h = NULL;
      if (own && own[r].n) h = &own[r];
      if (glob.n && (!h || mbs_cpaAbove(&glob.a[0], &h->a[0]))) h = &glob;
      if (!h) continue;
      mbsCpaHeapItem it = mbs_cpaPop(h);
      idle[r] = 0, runp[it.v] = r;
      ok = ok && mbs_cpaPush(&ev, -(t + g->cost[it.v]), it.v);
    }
    nt = 0;
    while (glob.n && nidle > 0) {
      int r = idles[--nidle];
      instack[r] = 0;
      if (!idle[r]) continue;
      mbsCpaHeapItem it = mbs_cpaPop(&glob);
      idle[r] = 0, runp[it.v] = r;
      ok = ok && mbs_cpaPush(&ev, -(t + g->cost[it.v]), it.v);
    }
    if (!ok) {
      e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory scheduling");
      goto done;
    }
    if (!ev.n) break;
    // advance to the next finish time; complete every node finishing then
    t = -ev.a[0].key;
    while (ev.n && -ev.a[0].key <= t) {
      mbsCpaHeapItem it = mbs_cpaPop(&ev);
      int v = it.v, r = runp[v];
      done_n++;
      if (r >= 0) {
        idle[r] = 1;
        if (!instack[r]) instack[r] = 1, idles[nidle++] = r;
        if (!touched[r]) touched[r] = 1, tlist[nt++] = r;
      }
      for (int k = g->succ_adr[v]; k < g->succ_adr[v + 1]; k++) {
        int w = g->succ[k];
        if (--indeg[w] == 0) MBS_CPA_RELEASE(w);
      }
    }
  }
#undef MBS_CPA_RELEASE
  if (done_n != n) {
    e = mbs_errSet(MBS_ERR_INTERNAL, "cpa: schedule finished %d of %d nodes", done_n, n);
    goto done;
  }
  *makespan = t;
done:
  free(bl), free(indeg), free(runp), free(idle), free(touched), free(instack), free(idles);
  free(tlist);
  free(glob.a), free(ev.a);
  if (own)
    for (int r = 0; r < P; r++) free(own[r].a);
  free(own);
  return e;
}

// ---------------------------------------------------------------- Graphviz

mbsErr mbs_cpaWriteDot(const mbsCpaGraph *g, const mbsCpaResult *r, const char *path,
                       int max_nodes) {
  MBS_CHECK(g->nnode <= max_nodes, MBS_ERR_USAGE,
            "cpa --dot: the graph has %d nodes, more than %d; use a smaller model or a coarser "
            "--grain (block, body)",
            g->nnode, max_nodes);
  FILE *f = fopen(path, "w");
  MBS_CHECK(f, MBS_ERR_IO, "cpa --dot %s: cannot open for writing", path);
  char *on = calloc((size_t)(g->nnode > 0 ? g->nnode : 1), 1);
  if (!on) {
    fclose(f);
    return mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  }
  for (int i = 0; r && i < r->path_nodes; i++) on[r->path[i]] = 1;
  fprintf(f, "digraph cpa {\n  rankdir=TB;\n  node [shape=box, fontsize=9];\n");
  for (int v = 0; v < g->nnode; v++) {
    const char *shape = g->proc[v] == -2 ? ", shape=ellipse" : "";
    fprintf(f, "  n%d [label=\"%s", v, mbs_cpaKindName(g->kind[v]));
    if (g->body[v] >= 0) fprintf(f, " b%d", g->body[v]);
    fprintf(f, "\\n%lld fl\"%s%s];\n", g->flops[v], shape, on[v] ? ", color=red, penwidth=2" : "");
  }
  for (int v = 0; v < g->nnode; v++)
    for (int k = g->succ_adr[v]; k < g->succ_adr[v + 1]; k++) {
      int w = g->succ[k];
      fprintf(f, "  n%d -> n%d%s;\n", v, w, on[v] && on[w] ? " [color=red]" : "");
    }
  fprintf(f, "}\n");
  free(on);
  MBS_CHECK(fclose(f) == 0, MBS_ERR_IO, "cpa --dot %s: write failed", path);
  return MBS_OK;
}
