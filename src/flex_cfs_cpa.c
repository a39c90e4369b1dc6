/// \file flex_cfs_cpa.c
/// The critical-path graphs of the constraint-force system's methods with flexible bodies
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
/// The iterative methods (flex_cfs_iter.c; --method jcg, gs, sor, jacobi, chebyshev) share the
/// kinematics, prepare, blocks and applications: gs and sor the assembled A, then their sweeps in a
/// chain on every rank; jcg the CG, jacobi and chebyshev the spectrum estimate and the polynomial
/// iteration, each dot a per-rank node with its allreduce of one double and the scalars on every
/// rank; their iteration counts those of a real solve (mbs_flexCfsIterations). Not built: petsc,
/// closure rows (refused).
#include <stdlib.h>
#include <string.h>
#include "cpa_private.h"
#include "flex_cfs.h"
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
  long long *rows;    ///< (R) rows of each rank (jcg's vector operations)
  int *dot;           ///< (R) scratch: each rank's dot node
} mbsFcc;

// a sync node (no cost, no processor) after nodes v[0..n)
static int mbs_fccSync(mbsCpaB *B, const int *v, int n) {
  int s = mbs_cpaNode(B, MBS_CPA_LOOP_SYNC, -1, 0, -1, -1);
  for (int i = 0; i < n; i++)
    if (v[i] >= 0) mbs_cpaDep(B, v[i], s);
  return s;
}

// one application of the operator (known: with the affine part) after node `after` (-1: none),
// body b's wrench after in[b] (its rows of x) and gate[its rank] (NULL: none); returns its
// closing node (the downs' sync)
static int mbs_fccApply(mbsFcc *X, int known, int after, const int *in, const int *gate) {
  mbsCpaB *B = X->B;
  const mbsModel *m = X->m;
  int n = m->nbody;
  for (int b = 0; b < n; b++) {
    int r = X->owner[b];
    X->up[b] = mbs_cpaNodeOn(B, MBS_CPA_FLEX_CFS_UP, b,
                             mbs_flopFcUp(X->nl[b], m->body_dofnum[b], known), -1, -1, r);
    mbs_cpaDep(B, X->prep[r][b], X->up[b]);
    if (after >= 0) mbs_cpaDep(B, after, X->up[b]);
    if (in) mbs_cpaDep(B, in[b], X->up[b]);
    if (gate) mbs_cpaDep(B, gate[r], X->up[b]);
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

// a dot product over every rank's owned rows (2 flops a row) of the vectors body b's entries of
// which nodes s1[b], s2[b] wrote (NULL: none), its sum over the ranks (one double) and sc scalar
// flops on every rank after it (out[r]; after g[r] too, NULL: none), as mbs_fcDot and its caller
static void mbs_fccDot(mbsFcc *X, const int *s1, const int *s2, const int *g, long long sc,
                       int *out) {
  mbsCpaB *B = X->B;
  int n = X->m->nbody;
  for (int r = 0; r < X->R; r++)
    X->dot[r] = mbs_cpaNodeOn(B, MBS_CPA_DOT_LEAF, -1, 2LL * X->rows[r], -1, -1, r);
  for (int b = 0; b < n; b++) {
    if (s1) mbs_cpaDep(B, s1[b], X->dot[X->owner[b]]);
    if (s2) mbs_cpaDep(B, s2[b], X->dot[X->owner[b]]);
  }
  int red = X->dist ? mbs_cpaLoopReduce(B, 1.0, 0, mbs_fccSync(B, X->dot, X->R)) : -1;
  for (int r = 0; r < X->R; r++) {
    int v = mbs_cpaNodeOn(B, MBS_CPA_SCALAR, -1, sc, -1, -1, r);
    mbs_cpaDep(B, red >= 0 ? red : X->dot[r], v);
    if (g) mbs_cpaDep(B, g[r], v);
    out[r] = v;
  }
}

// per body a node of the kind on its rank (sq: the preconditioner's 2 nl^2 flops; + rowfl a row)
// after a[b], c[b] and g[its rank] (NULL: none); written to out[b]
static void mbs_fccBodies(mbsFcc *X, int kind, int sq, int rowfl, const int *a, const int *c,
                          const int *g, int *out) {
  for (int b = 0; b < X->m->nbody; b++) {
    int r = X->owner[b];
    long long nl = X->nl[b];
    int v = mbs_cpaNodeOn(X->B, kind, b, (sq ? 2 * nl * nl : 0) + rowfl * nl, -1, -1, r);
    if (a) mbs_cpaDep(X->B, a[b], v);
    if (c) mbs_cpaDep(X->B, c[b], v);
    if (g) mbs_cpaDep(X->B, g[r], v);
    out[b] = v;
  }
}

// preconditioned CG (flex_cfs_iter.c mbs_fcCG) of B->o->iterations operator applications from
// x = 0 after the right side's application (X->dn: b); leaves x's writers in xn and the last
// convergence test in conv (per rank)
static void mbs_fccCg(mbsFcc *X, int *xn, int *rn, int *zn, int *pn, int *un, int **g) {
  mbsCpaB *B = X->B;
  int n = X->m->nbody, iters = B->o->iterations > 0 ? B->o->iterations : 0;
  int *bn = g[0], *rz = g[1], *conv = g[2], *al = g[3];
  for (int b = 0; b < n; b++) rn[b] = X->dn[b], xn[b] = -1;
  mbs_fccDot(X, rn, NULL, NULL, 1, bn);                          // |b|
  mbs_fccBodies(X, MBS_CPA_CFS_PRECOND, 1, 0, rn, NULL, bn, zn); // z = D^-1 r
  memcpy(pn, zn, sizeof(int) * (size_t)n);                       // p = z
  mbs_fccDot(X, rn, zn, NULL, 0, rz);                            // r.z
  for (int it = 0;; it++) {
    mbs_fccDot(X, rn, NULL, bn, 2, conv); // r.r and the test
    if (it == iters) break;
    mbs_fccApply(X, 0, -1, pn, conv);                             // q = A p
    mbs_fccDot(X, pn, X->dn, rz, 1, al);                          // alpha = rz / p.q
    mbs_fccBodies(X, MBS_CPA_CG_UPDATE, 0, 4, X->dn, xn, al, un); // x += alpha p, r -= alpha q
    for (int b = 0; b < n; b++) mbs_cpaDep(B, pn[b], un[b]), mbs_cpaDep(B, rn[b], un[b]);
    memcpy(xn, un, sizeof(int) * (size_t)n), memcpy(rn, un, sizeof(int) * (size_t)n);
    mbs_fccBodies(X, MBS_CPA_CFS_PRECOND, 1, 0, rn, NULL, NULL, zn); // z = D^-1 r
    mbs_fccDot(X, zn, NULL, rz, 1, rz);                              // beta = r.z / rz
    for (int b = 0; b < n; b++) {                                    // p = z + beta p (2 a row)
      int r = X->owner[b], v = mbs_cpaNodeOn(B, MBS_CPA_CG_P, b, 2LL * X->nl[b], -1, -1, r);
      mbs_cpaDep(B, zn[b], v), mbs_cpaDep(B, pn[b], v), mbs_cpaDep(B, rz[r], v);
      mbs_cpaDep(B, un[b], v); // (the application read p)
      pn[b] = v;
    }
  }
}

// block Jacobi or Chebyshev (flex_cfs_iter.c mbs_fcPoly) after b's application (X->dn): the
// spectrum estimate (mbs_fcBounds: B->o->spec_iterations CG steps from x = 0 without x, their
// tests, the tridiagonal's scalar work on every rank), then B->o->iterations applications of the
// polynomial iteration from x = 0 (x += p, q = A p, r -= q, r.r and its tests; between them z =
// D^-1 r and the new p); leaves x's writers in xn and the last test in g[2]
static void mbs_fccPoly(mbsFcc *X, int cheb, int *xn, int *rn, int *zn, int *pn, int **g) {
  mbsCpaB *B = X->B;
  int n = X->m->nbody, R = X->R, K = B->o->iterations > 0 ? B->o->iterations : 0;
  int k = B->o->spec_iterations > 0 ? B->o->spec_iterations : 0;
  int *bn = g[0], *rz = g[1], *conv = g[2], *al = g[3], *bw = X->ends, *gate = bn;
  for (int b = 0; b < n; b++) rn[b] = bw[b] = X->dn[b];
  mbs_fccDot(X, rn, NULL, NULL, 1, bn);                          // |b|
  mbs_fccBodies(X, MBS_CPA_CFS_PRECOND, 1, 0, rn, NULL, bn, zn); // z = D^-1 r
  memcpy(pn, zn, sizeof(int) * (size_t)n);                       // p = z
  mbs_fccDot(X, rn, zn, NULL, 0, rz);                            // r.z
  for (int j = 0; j < k; j++) {
    mbs_fccApply(X, 0, -1, pn, gate);                                // q = A p
    mbs_fccDot(X, pn, X->dn, rz, 1, al);                             // alpha
    mbs_fccBodies(X, MBS_CPA_CG_UPDATE, 0, 2, X->dn, rn, al, rn);    // r -= alpha q
    mbs_fccBodies(X, MBS_CPA_CFS_PRECOND, 1, 0, rn, NULL, NULL, zn); // z = D^-1 r
    mbs_fccDot(X, zn, NULL, rz, 1, rz);                              // beta
    mbs_fccBodies(X, MBS_CPA_CG_P, 0, 2, zn, pn, rz, pn);            // p = z + beta p
    mbs_fccDot(X, rn, NULL, NULL, 2, conv);                          // r.r, the test
    gate = conv;
  }
  for (int r = 0; k && r < R; r++) { // the tridiagonal, its bound, the bisections
    int v = mbs_cpaNodeOn(B, MBS_CPA_EIG, -1, mbs_flopFcSpectrum(k), -1, -1, r);
    mbs_cpaDep(B, gate[r], v);
    al[r] = v;
  }
  gate = k ? al : gate;
  mbs_fccDot(X, bw, NULL, gate, 7, bn);                          // |b|, the interval's constants
  mbs_fccBodies(X, MBS_CPA_CFS_PRECOND, 1, 1, bw, NULL, bn, pn); // p = D^-1 b / th
  for (int b = 0; b < n; b++) rn[b] = bw[b], xn[b] = -1;
  for (int r = 0; r < R; r++) conv[r] = bn[r];
  gate = bn;
  for (int it = 0; it < K; it++) {
    mbs_fccBodies(X, MBS_CPA_CHEB_X, 0, 1, pn, xn, gate, xn);      // x += p
    mbs_fccApply(X, 0, -1, pn, gate);                              // q = A p
    mbs_fccBodies(X, MBS_CPA_CG_RESID, 0, 1, X->dn, rn, NULL, rn); // r -= q
    mbs_fccDot(X, rn, NULL, NULL, 4, conv);                        // r.r, the tests
    if (it == K - 1) break;
    mbs_fccBodies(X, MBS_CPA_CFS_PRECOND, 1, 0, rn, NULL, conv, zn); // z = D^-1 r
    gate = conv;
    if (cheb) { // r1, its two coefficients
      for (int r = 0; r < R; r++) {
        al[r] = mbs_cpaNodeOn(B, MBS_CPA_SCALAR, -1, 6, -1, -1, r);
        mbs_cpaDep(B, conv[r], al[r]);
        if (it) mbs_cpaDep(B, rz[r], al[r]); // (r0: the previous r1)
        rz[r] = al[r];
      }
      gate = al;
    }
    mbs_fccBodies(X, cheb ? MBS_CPA_CHEB_D : MBS_CPA_JAC_UPDATE, 0, cheb ? 3 : 1, zn, xn, gate,
                  pn); // the new p (after x += p read the old)
  }
}

mbsErr mbs_cpaFlexCfsGraph(mbsCpaB *B, const int *nz, const long long *kin, const long long *body) {
  const mbsModel *m = B->m;
  int n = m->nbody, R = B->o->ranks > 0 ? B->o->ranks : 1, nlt = 0;
  size_t nb = (size_t)n + 1;
  mbsFcc X = {B,    m,    nz,   NULL, B->owner, R,    B->o->ranks > 1,
              NULL, NULL, NULL, NULL, NULL,     NULL, NULL};
  int *nl = malloc(nb * sizeof(int)), *buf = malloc((size_t)(R + 4) * nb * sizeof(int));
  long *gs = calloc(nb, sizeof(long));
  X.prep = malloc((size_t)R * sizeof(int *));
  mbsFlexAba *a = NULL;
  mbsErr e = nl && buf && gs && X.prep ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  const char *mn = mbs_solverName(B->o->method);
  int sor = !strcmp(mn, "gs") || !strcmp(mn, "sor");
  int jcg =
      !strcmp(mn, "jcg") || !strcmp(mn, "jacobi") || !strcmp(mn, "chebyshev"); // (matrix-free)
  long long its = B->o->iterations > 0 ? B->o->iterations : 0;
  for (int b = 0; !e && b < n; b++) nl[b] = 6 - m->body_dofnum[b], nlt += nl[b];
  if (!e && m->nloop)
    e = mbs_errSet(MBS_ERR_UNSUPPORTED,
                   "cpa: the constraint-force graphs of a flexible model have no closure rows "
                   "(flexible.md 15): a model with closed loops is analysed with the recursive "
                   "algorithm's graph only");
  if (!e && !jcg &&
      (long long)(nlt + 2) * 3 * n + (long long)R * (n + (sor ? its + 2 : 0)) > MBS_FCC_MAXNODES)
    e = mbs_errSet(MBS_ERR_UNSUPPORTED,
                   "cpa: the %s graph of a flexible model has O(rows x bodies) nodes (+ the "
                   "sweeps): %d rows x %d bodies is too large (the method is for small models)",
                   mn, nlt, n);
  if (!e && jcg &&
      (its + B->o->spec_iterations + 2) * (8LL * n + 8LL * R) + 3LL * R * n > MBS_FCC_MAXNODES)
    e = mbs_errSet(MBS_ERR_UNSUPPORTED,
                   "cpa: the %s graph of a flexible model: %lld iterations x %d bodies is too "
                   "large",
                   mn, its, n);
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
      X.ends[b] = -1;
      if (B->owner[b] != r || !nl[b]) continue;
      int v = mbs_cpaNodeOn(B, MBS_CPA_FLEX_CFS_BLOCK, b, mbs_flopFcBlock(nl[b], p < 0 ? 0 : nz[p]),
                            -1, -1, r);
      mbs_cpaDep(B, pr[b], v);
      if (p >= 0) mbs_cpaDep(B, pr[p], v); // (the parent's prepare, not its block)
      X.ends[b] = v;
    }
    for (int b = 0; b < n; b++) // the applications wait for the block too (as the code runs it)
      if (X.ends[b] >= 0) pr[b] = X.ends[b];
  }
  int *cols = NULL, *cgb = NULL;
  if (!e) {
    B->cls = MBS_CPA_CLASS_SOLVE;
    cols = malloc(((size_t)nlt + 2) * sizeof(int));
    cgb = malloc((5 * nb + 5 * (size_t)R) * sizeof(int));
    X.rows = calloc((size_t)R, sizeof(long long));
    if (!cols || !cgb || !X.rows) e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  }
  if (!e && jcg) { // b, the CG or the polynomial iteration, the application at the solution
    int *xn = cgb, *rn = xn + nb, *zn = rn + nb, *pn = zn + nb, *un = pn + nb, *g[4];
    for (int d = 0; d < 4; d++) g[d] = un + nb + (size_t)d * R;
    X.dot = g[3] + R;
    for (int b = 0; b < n; b++) X.rows[B->owner[b]] += nl[b];
    mbs_fccApply(&X, 1, -1, NULL, NULL);
    if (!strcmp(mn, "jcg"))
      mbs_fccCg(&X, xn, rn, zn, pn, un, g);
    else
      mbs_fccPoly(&X, !strcmp(mn, "chebyshev"), xn, rn, zn, pn, g);
    B->cls = MBS_CPA_CLASS_FINISH;
    mbs_fccApply(&X, 1, -1, xn, g[2]);
  } else if (!e) {
    cols[0] = mbs_fccApply(&X, 1, -1, NULL, NULL); // b
    for (int j = 0; j < nlt; j++)
      cols[j + 1] = mbs_fccApply(&X, 0, -1, NULL, NULL); // the columns of A
    int all = mbs_fccSync(B, cols, nlt + 1), red = -1;
    if (X.dist) red = mbs_cpaLoopReduce(B, (double)nlt * nlt + nlt, 0, all);
    int done = mbs_cpaNode(B, MBS_CPA_LOOP_SYNC, -1, 0, -1, -1);
    for (int r = 0; r < R; r++) { // the Cholesky and solve, or the sweeps, on every rank
      int s = mbs_cpaNodeOn(B, MBS_CPA_FLEX_CFS_SOLVE, -1,
                            sor ? 2LL * nlt + 1 : mbs_flopChol(nlt) + mbs_flopCholSolve(nlt), -1,
                            -1, r);
      mbs_cpaDep(B, red >= 0 ? red : all, s);
      for (long long k = 0; sor && k <= its; k++) { // K + 1 sweeps (the last meets the test)
        int v = mbs_cpaNodeOn(B, MBS_CPA_SOR_UPDATE, -1, mbs_flopFcSweep(nlt, nl, n, 0), -1, -1, r);
        mbs_cpaDep(B, s, v);
        s = v;
      }
      mbs_cpaDep(B, s, done);
    }
    B->cls = MBS_CPA_CLASS_FINISH;
    mbs_fccApply(&X, 1, done, NULL, NULL); // at the solution
  }
  if (!e) {
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
  free(nl), free(buf), free(gs), free(X.prep), free(cols), free(cgb), free(X.rows);
  return e;
}

mbsErr mbs_flexCfsIterations(const mbsModel *m, int method, double tol, int *it, int *spec) {
  mbsFlexCfs *f = NULL;
  *it = 0;
  mbsErr e = mbs_flexCfsCreate(m, &f);
  int N = e ? 0 : mbs_flexCfsSize(f);
  mbsReal *y = e ? NULL : calloc(3 * ((size_t)N + 1), sizeof(mbsReal));
  if (!e && !y) e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  if (!e) {
    memcpy(y, m->qd0, sizeof(mbsReal) * (size_t)m->nv);
    e = mbs_flexCfsAccel(f, method, tol, m->q0, y, y + N + 1, y + 2 * ((size_t)N + 1), it);
  }
  if (spec) *spec = f ? mbs_flexCfsSpecIterations(f) : 0;
  free(y);
  mbs_flexCfsDestroy(&f);
  return e;
}
