/// \file cfs_cpa.c
/// The critical-path graph of the constraint-force method (cfs.c mbs_cfsSolve): the position
/// blocks, the operator applications in three sweeps, reductions, residuals and the closure rows;
/// the solve itself is the bound method's graph (the row's cpa_solve, beside each solver's
/// kernel in src/solver_*.c).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpa_private.h"

// ---- the constraint-force method with J-CG (cfs.c)

// closure rows of loop k that are not zero rows (skip: the zero rows, NULL: none)
int mbs_cpaLoopKept(const mbsModel *m, const unsigned char *skip, int k) {
  int i0 = m->loop_lamadr[k] - m->nlam, nr = 0;
  for (int r = 0; r < m->loop_lamnum[k]; r++) nr += !(skip && skip[i0 + r]);
  return nr;
}

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

void mbs_cpaApply(mbsCpaB *B, const mbsCpaKin *K, mbsCpaCfs *C, int known, const int *xn) {
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
void mbs_cpaApplyColour(mbsCpaB *B, const mbsCpaKin *K, mbsCpaCfs *C, const int *xn,
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
void mbs_cpaReduce(mbsCpaB *B, mbsCpaCfs *C, int nd, int *const *leaves, int *result) {
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
int mbs_cpaResidRows(mbsCpaB *B, const mbsCpaCfs *C, int b, int prev, int nrow, int ph) {
  int r = mbs_cpaNode(B, MBS_CPA_CG_RESID, b, nrow, ph + 3, ph + 2);
  mbs_cpaDep(B, prev, r);
  mbs_cpaDep(B, C->down[b], r);
  return r;
}
int mbs_cpaResidNode(mbsCpaB *B, const mbsCpaCfs *C, int b, int prev, int ph) {
  return mbs_cpaResidRows(B, C, b, prev, mbs_cpaNl(B, b), ph);
}

// body b: z = D^-1 r (block Cholesky solve)
int mbs_cpaPrecondNode(mbsCpaB *B, const mbsCpaCfs *C, int b, int r, int ph) {
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
int mbs_cpaLeaf(mbsCpaB *B, int b, int src, int src2, int ph) {
  int nl = mbs_cpaNl(B, b);
  if (nl == 0) return -1;
  int v = mbs_cpaNode(B, MBS_CPA_DOT_LEAF, b, mbs_flopDot(nl), ph + 3, ph + 2);
  mbs_cpaDep(B, src, v);
  mbs_cpaDep(B, src2, v);
  return v;
}

// per body: r = b - q (or r -= q: prev = the previous r), z = D^-1 r
void mbs_cpaResidual(mbsCpaB *B, mbsCpaCfs *C, const int *prev, int ph, int *rn, int *zn) {
  for (int b = 0; b < B->m->nbody; b++) {
    rn[b] = mbs_cpaResidNode(B, C, b, prev[b], ph);
    zn[b] = mbs_cpaPrecondNode(B, C, b, rn[b], ph);
  }
}

// solver.check_every: whether iteration it of last tests (every K-th from 0, and the last); the
// solvers' mbs_cfsCheckSweep and Chebyshev's own rule (from 1: it % K == 0 or the last)
int mbs_cpaCheckIt(const mbsCpaOptions *o, int it, int last) {
  return o->check_every <= 1 || it % o->check_every == 0 || it == last;
}

// the divergence guard (1 flop) and the convergence test (2 flops) after a fused reduction of
// three dots; returns the convergence node
int mbs_cpaTest(mbsCpaB *B, const int *red, int bnorm) {
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
int mbs_cpaNormTest(mbsCpaB *B, mbsCpaCfs *C, const int *src0, const int *src1, const int *src2,
                    int ph, int bnorm, int **lv) {
  int red[3];
  for (int b = 0; b < B->m->nbody; b++) {
    lv[0][b] = mbs_cpaLeaf(B, b, src0[b], -1, ph);
    lv[1][b] = mbs_cpaLeaf(B, b, src1[b], -1, ph);
    lv[2][b] = mbs_cpaLeaf(B, b, src2[b], -1, ph);
  }
  mbs_cpaReduce(B, C, 3, lv, red);
  return mbs_cpaTest(B, red, bnorm);
}

// the constraint-force method (cfs.c mbs_cfsSolve) with its iterative solvers or the direct one
mbsErr mbs_cpaCfs(mbsCpaB *B, const mbsCpaKin *K) {
  const mbsModel *m = B->m;
  const mbsCpaOptions *o = B->o;
  int n = m->nbody, R = o->ranks > 1 ? o->ranks : 1;
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
  // the solve: the graph beside the method's kernel (its row's cpa_solve)
  mbsCpaVec V = {rhs, bnorm, xn, xe, rn, pn, zn, lv, lz};
  e = st->cpa_solve ? st->cpa_solve(B, &C, K, &V)
                    : mbs_errSet(MBS_ERR_INTERNAL, "cpa: %s has no solve graph", st->name);
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

mbsErr mbs_cpaCfsGraph(mbsCpaB *B, mbsCpaKin *K) {
  mbs_cpaKinStage(B, K);
  return mbs_cpaCfs(B, K);
}
