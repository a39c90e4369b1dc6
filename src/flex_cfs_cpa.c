/// \file flex_cfs_cpa.c
/// The critical-path graph of the constraint-force system's direct method with flexible bodies
/// (src/flex_cfs.c, docs/flexible.md 13; `mbspar cpa --method direct` on a flexible model,
/// docs/cpa.md "Flexible models"). Bodies on equal-count ranges as parallel/flex_cfs_par.c
/// splits them (ranks = 0: data flow). Per rank: flex.kin of every body (each rank computes the
/// whole model's kinematics), flex.cfs.prepare of the bodies whose M^-1 it needs (its own and
/// their parents: M_b, h_b, the Cholesky and inverse, T, F, the applied forces), flex.cfs.block
/// of its joints' diagonal blocks; then the operator applications, each three sweeps
/// (flex.cfs.up, .mid, .down per owned body; at several ranks an allreduce of the wrenches, 6
/// nbody doubles, and of the accelerations, the bodies' z entries, between them): one for b, one
/// per column of A (the columns are independent), the allreduce of A and b, the Cholesky and solve
/// on every rank (flex.cfs.solve), one application at the solution and the accelerations
/// (flex.cfs.end, then their allreduce). Costs: flex_flops.h, the counts of flex_cfs.c's MBS_FLOPS
/// call sites, with the complement's Gram-Schmidt counted at q0 (which unit vectors it rejects
/// depends on the joint axes); T1 equals the counted flops of mbs_flexCfsAccel at one process
/// (test_flex_cpa). O(rows x bodies) nodes: small models only (the method is).
#include <stdlib.h>
#include <string.h>
#include "cpa_private.h"
#include "flex_cfs_private.h"
#include "flex_flops.h"
#include "flex_private.h"

#define MBS_FCC_MAXNODES 4000000LL

typedef struct {
  mbsCpaB *B;
  const mbsModel *m;
  const int *nz, *nl, *owner;
  int R;              ///< ranks in the graph (1 in data flow)
  int dist;           ///< several ranks: allreduces between the sweeps
  int **prep;         ///< (R x nbody) prepare nodes per rank (-1: not needed there)
  int *up, *mid, *dn; ///< (nbody) the current application's nodes
  int *ends;          ///< (nl + 2) scratch: the applications' closing nodes
} mbsFcc;

// a sync node (no cost, no processor) after nodes v[0..n)
static int mbs_fccSync(mbsCpaB *B, const int *v, int n) {
  int s = mbs_cpaNode(B, MBS_CPA_LOOP_SYNC, -1, 0, -1, -1);
  for (int i = 0; i < n; i++)
    if (v[i] >= 0) mbs_cpaDep(B, v[i], s);
  return s;
}

// one application of the operator (known: with the affine part) after node `after` (-1: none);
// returns its closing node (the downs' sync)
static int mbs_fccApply(mbsFcc *X, int known, int after) {
  mbsCpaB *B = X->B;
  const mbsModel *m = X->m;
  int n = m->nbody;
  for (int b = 0; b < n; b++) {
    int r = X->owner[b];
    X->up[b] = mbs_cpaNodeOn(B, MBS_CPA_FLEX_CFS_UP, b,
                             mbs_flopFcUp(X->nl[b], m->body_dofnum[b], known), -1, -1, r);
    mbs_cpaDep(B, X->prep[r][b], X->up[b]);
    if (after >= 0) mbs_cpaDep(B, after, X->up[b]);
  }
  int red = X->dist ? mbs_cpaLoopReduce(B, 6.0 * n, 0, mbs_fccSync(B, X->up, n)) : -1;
  for (int b = 0; b < n; b++) {
    int r = X->owner[b];
    X->mid[b] = mbs_cpaNodeOn(B, MBS_CPA_FLEX_CFS_MID, b,
                              mbs_flopFcMid(X->nz[b], m->body_childnum[b], known), -1, -1, r);
    mbs_cpaDep(B, X->prep[r][b], X->mid[b]);
    mbs_cpaDep(B, X->up[b], X->mid[b]);
    const int *ch = m->child_list + m->body_childadr[b];
    for (int k = 0; k < m->body_childnum[b]; k++)
      mbs_cpaDep(B, red >= 0 ? red : X->up[ch[k]], X->mid[b]);
  }
  long long sv = 0;
  for (int b = 0; b < n; b++) sv += X->nz[b];
  red = X->dist ? mbs_cpaLoopReduce(B, (double)sv, 0, mbs_fccSync(B, X->mid, n)) : -1;
  for (int b = 0; b < n; b++) {
    int r = X->owner[b], p = m->body_parent[b];
    X->dn[b] = mbs_cpaNodeOn(B, MBS_CPA_FLEX_CFS_DOWN, b,
                             mbs_flopFcDown(p < 0 ? 0 : X->nz[p], X->nl[b]), -1, -1, r);
    mbs_cpaDep(B, X->mid[b], X->dn[b]);
    if (p >= 0) mbs_cpaDep(B, red >= 0 ? red : X->mid[p], X->dn[b]);
  }
  return mbs_fccSync(B, X->dn, n);
}

mbsErr mbs_cpaFlexCfsGraph(mbsCpaB *B, const int *nz, const long long *kin, const long long *body) {
  const mbsModel *m = B->m;
  int n = m->nbody, R = B->o->ranks > 0 ? B->o->ranks : 1, nlt = 0;
  size_t nb = (size_t)n + 1;
  mbsFcc X = {B, m, nz, NULL, B->owner, R, B->o->ranks > 1, NULL, NULL, NULL, NULL, NULL};
  int *nl = malloc(nb * sizeof(int)), *buf = malloc((size_t)(R + 4) * nb * sizeof(int));
  long *gs = calloc(nb, sizeof(long));
  X.prep = malloc((size_t)R * sizeof(int *));
  mbsFlexAba *a = NULL;
  mbsErr e = nl && buf && gs && X.prep ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  for (int b = 0; !e && b < n; b++) nl[b] = 6 - m->body_dofnum[b], nlt += nl[b];
  if (!e && (long long)(nlt + 2) * 3 * n + (long long)R * n > MBS_FCC_MAXNODES)
    e = mbs_errSet(MBS_ERR_UNSUPPORTED,
                   "cpa: the direct method's graph of a flexible model has O(rows x bodies) "
                   "nodes: %d rows x %d bodies is too large (the method is for small models)",
                   nlt, n);
  if (!e) e = mbs_flexAbaCreate(m, &a);
  if (!e) { // the complement's Gram-Schmidt at q0 (which unit vectors it rejects)
    mbsReal *y = calloc((size_t)a->N + 1, sizeof(mbsReal));
    mbsReal *eta = calloc((size_t)a->N + 1, sizeof(mbsReal));
    if (!y || !eta) e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
    for (int b = 0; !e && b < n; b++) {
      mbsReal T[36];
      mbs_faKin(a, b, m->q0, y, eta);
      gs[b] = mbs_fcComplement(a->S + 36 * b, m->body_dofnum[b], T);
    }
    free(y), free(eta);
  }
  int N = a ? a->N : 0;
  mbs_flexAbaDestroy(&a);
  X.nl = nl;
  for (int r = 0; !e && r < R; r++) X.prep[r] = buf + (size_t)r * nb;
  if (!e) X.up = buf + (size_t)R * nb, X.mid = X.up + nb, X.dn = X.mid + nb, X.ends = X.dn + nb;
  for (int r = 0; !e && r < R; r++) // flex_cfs_par.c's equal-count ranges
    for (int b = (int)((long long)n * r / R); b < (int)((long long)n * (r + 1) / R); b++)
      B->owner[b] = B->o->ranks >= 1 ? r : 0;
  for (int r = 0; !e && r < R; r++) { // kinematics, prepare, blocks
    int *kn = X.up, *pr = X.prep[r];
    B->cls = MBS_CPA_CLASS_KIN;
    for (int b = 0; b < n; b++) {
      kn[b] = mbs_cpaNodeOn(B, MBS_CPA_FLEX_KIN, b, kin[b], -1, -1, r);
      if (m->body_parent[b] >= 0) mbs_cpaDep(B, kn[m->body_parent[b]], kn[b]);
      pr[b] = -1;
    }
    B->cls = MBS_CPA_CLASS_BLOCKS;
    for (int b = 0; b < n; b++) {
      int need = B->owner[b] == r, nd = m->body_dofnum[b];
      for (int k = 0; !need && k < m->body_childnum[b]; k++)
        need = B->owner[m->child_list[m->body_childadr[b] + k]] == r;
      if (!need) continue;
      int scalar = mbs_jntQuatAdr(m->body_jnttype[b]) < 0;
      pr[b] = mbs_cpaNodeOn(B, MBS_CPA_FLEX_CFS_PREP, b,
                            body[b] + gs[b] + mbs_flopFcPrepare(nz[b], nd, scalar), -1, -1, r);
      mbs_cpaDep(B, kn[b], pr[b]);
    }
    for (int b = 0; b < n; b++) {
      int p = m->body_parent[b];
      if (B->owner[b] != r || !nl[b]) continue;
      int v = mbs_cpaNodeOn(B, MBS_CPA_FLEX_CFS_BLOCK, b, mbs_flopFcBlock(nl[b], p < 0 ? 0 : nz[p]),
                            -1, -1, r);
      mbs_cpaDep(B, pr[b], v);
      if (p >= 0) mbs_cpaDep(B, pr[p], v);
      pr[b] = v; // the applications wait for the whole prepare (as the code runs it)
    }
  }
  int *cols = NULL;
  if (!e) {
    B->cls = MBS_CPA_CLASS_SOLVE;
    cols = malloc(((size_t)nlt + 2) * sizeof(int));
    if (!cols) e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  }
  if (!e) {
    cols[0] = mbs_fccApply(&X, 1, -1);                                   // b
    for (int j = 0; j < nlt; j++) cols[j + 1] = mbs_fccApply(&X, 0, -1); // the columns of A
    int all = mbs_fccSync(B, cols, nlt + 1), red = -1;
    if (X.dist) red = mbs_cpaLoopReduce(B, (double)nlt * nlt + nlt, 0, all);
    int done = mbs_cpaNode(B, MBS_CPA_LOOP_SYNC, -1, 0, -1, -1);
    for (int r = 0; r < R; r++) { // the Cholesky and solve on every rank
      int s = mbs_cpaNodeOn(B, MBS_CPA_FLEX_CFS_SOLVE, -1,
                            mbs_flopChol(nlt) + mbs_flopCholSolve(nlt), -1, -1, r);
      mbs_cpaDep(B, red >= 0 ? red : all, s);
      mbs_cpaDep(B, s, done);
    }
    B->cls = MBS_CPA_CLASS_FINISH;
    mbs_fccApply(&X, 1, done); // at the solution
    for (int b = 0; b < n; b++) {
      int p = m->body_parent[b];
      int v =
          mbs_cpaNodeOn(B, MBS_CPA_FLEX_CFS_END, b,
                        mbs_flopFcEnd(p < 0 ? 0 : nz[p], m->body_dofnum[b]), -1, -1, B->owner[b]);
      mbs_cpaDep(B, X.dn[b], v); // (zdot of b and its parent: the application's)
      X.ends[b] = v;
    }
    int fin = mbs_fccSync(B, X.ends, n);
    if (X.dist) mbs_cpaLoopReduce(B, (double)N, 0, fin); // the accelerations' sum
  }
  B->cls = MBS_CPA_CLASS_DYN;
  free(nl), free(buf), free(gs), free(X.prep), free(cols);
  return e;
}
