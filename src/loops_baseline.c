/// \file loops_baseline.c
/// The loop-capable serial baseline behind mbs_forward (mbs_loopSolve, docs/loops.md 3): the
/// articulated unit sweeps, aba's column order, A = G H^-1 G^T by sweeps (aba) or the LTDL factor
/// (crba), the rank-revealing factorization of A and the minimum-norm solves.
#include "loops_private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "flops.h"
#include "mbspar/mbs_solvertype.h"
#include "spatial.h"
#include "body.h"

// the most bodies mbs_abaFactor has begun and not yet done (tip to base: a body is begun by its
// first child, or by itself if a leaf, and done right after; its slot is free again then)
int mbs_loopIaSlots(const mbsModel *m) {
  int n = m->nbody, cur = 0, most = 0;
  unsigned char *begun = calloc((size_t)(n > 0 ? n : 1), 1);
  if (!begun) return n; // (the bound: every body)
  for (int b = n - 1; b >= 0; b--) {
    int p = m->body_parent[b];
    if (!begun[b]) begun[b] = 1, cur++;
    most = cur > most ? cur : most;
    cur--;
    if (p >= 0 && !begun[p]) begun[p] = 1, cur++;
    most = cur > most ? cur : most;
  }
  free(begun);
  return most;
}

// the slot of body b's articulated inertia, begun with its rigid inertia if it has none
static mbsReal *mbs_loopIaBegin(const mbsModel *m, struct mbsLoopWork *lw, int *nfree, int b) {
  if (lw->ia_slot[b] < 0) {
    lw->ia_slot[b] = lw->ia_free[--*nfree];
    mbs_bodyInertiaFull(m, b, lw->ia + 36 * lw->ia_slot[b]);
  }
  return lw->ia + 36 * lw->ia_slot[b];
}

// articulated inertias and the joint factors U = IA S (w->U), Dinv = (S^T U)^-1 (lw->dinv) from
// the position stage alone (what mbs_aba computes besides the bias); returns 0 if singular. Each
// articulated inertia lives in a slot from its first contribution until its body is done (the
// same sums in the same order as a whole-model array: the rigid inertia, then the children's
// congruences in decreasing body order), so the memory is that of the pending bodies.
int mbs_abaFactor(const mbsModel *m, mbsWork *w) {
  struct mbsLoopWork *lw = w->loop;
  int n = m->nbody, nfree = lw->ia_cap;
  for (int b = 0; b < n; b++) lw->ia_slot[b] = -1;
  for (int s = 0; s < nfree; s++) lw->ia_free[s] = nfree - 1 - s;
  for (int b = n - 1; b >= 0; b--) {
    int k = m->body_dofnum[b], d0 = m->body_dofadr[b], p = m->body_parent[b];
    const mbsReal *IA = mbs_loopIaBegin(m, lw, &nfree, b), *S = w->sdof + 6 * d0;
    mbsReal *U = w->U + 6 * d0, *Dinv = lw->dinv + 6 * d0, Ia[36], Dm[36];
    memcpy(Ia, IA, sizeof Ia);
    if (k > 0) {
      for (int j = 0; j < k; j++) mbsu_mul6(IA, S + 6 * j, U + 6 * j);
      for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++) Dm[k * i + j] = mbsu_dot6(S + 6 * i, U + 6 * j);
      if (!mbsu_cholFactor(Dm, k)) return 0;
      mbsu_cholInverse(Dm, k, Dinv);
      for (int r = 0; r < 6; r++)
        for (int c = 0; c < 6; c++) {
          mbsReal sum = 0;
          for (int i = 0; i < k; i++)
            for (int j = 0; j < k; j++) sum += U[6 * i + r] * Dinv[k * i + j] * U[6 * j + c];
          Ia[6 * r + c] -= sum;
        }
    }
    lw->ia_free[nfree++] = lw->ia_slot[b], lw->ia_slot[b] = -1; // done: Ia is a copy
    if (p >= 0) mbsu_inertiaCongruenceAdd(w->xpar + 12 * b, Ia, mbs_loopIaBegin(m, lw, &nfree, p));
    MBS_FLOPS(mbs_flopLoopAbaFactor(k, p >= 0));
  }
  return 1;
}

// response of the tree at rest without gravity to the external wrenches lw->fz: accelerations
// lw->az (nbody x 6, body coordinates) and joint accelerations lw->dz (H^-1 J^T fz), with the
// factors U, Dinv of the current position (mbs_aba or mbs_abaFactor). lim >= 0: pass 3 only on
// the bodies with first[b] <= lim (aba's column lim, mbs_loopMatrixAba); the others keep stale
// values. lim < 0: every body.
void mbs_loopSweep(const mbsModel *m, const mbsWork *w, struct mbsLoopWork *lw, int lim) {
  int n = m->nbody;
  for (int b = 0; b < n; b++) {
    const mbsReal *f = lw->fz + 6 * b;
    int nz = f[0] != 0 || f[1] != 0 || f[2] != 0 || f[3] != 0 || f[4] != 0 || f[5] != 0;
    lw->nz[b] = (unsigned char)nz;
    for (int i = 0; i < 6; i++) lw->pz[6 * b + i] = -f[i];
  }
  // tip to base: u = -S^T p, p_parent += X^T (p + U Dinv u)
  for (int b = n - 1; b >= 0; b--) {
    int k = m->body_dofnum[b], d0 = m->body_dofadr[b], p = m->body_parent[b];
    mbsReal *u = lw->uz + d0;
    if (!lw->nz[b]) {
      for (int j = 0; j < k; j++) u[j] = 0;
      continue;
    }
    const mbsReal *S = w->sdof + 6 * d0, *U = w->U + 6 * d0, *Dinv = lw->dinv + 6 * d0;
    mbsReal *pb = lw->pz + 6 * b, pa[6], du[6], t6[6];
    for (int j = 0; j < k; j++) u[j] = -mbsu_dot6(S + 6 * j, pb);
    MBS_FLOPS(mbs_flopLoopSweepBack(k, p >= 0));
    if (p < 0) continue;
    memcpy(pa, pb, sizeof pa);
    for (int i = 0; i < k; i++) {
      du[i] = 0;
      for (int j = 0; j < k; j++) du[i] += Dinv[k * i + j] * u[j];
      for (int r = 0; r < 6; r++) pa[r] += U[6 * i + r] * du[i];
    }
    mbsu_xTForce(w->xpar + 12 * b, pa, t6);
    for (int r = 0; r < 6; r++) lw->pz[6 * p + r] += t6[r];
    lw->nz[p] = 1;
  }
  // base to tip: a = X a_parent ; qdd = Dinv (u - U^T a) ; a += S qdd
  for (int b = 0; b < n; b++) {
    int k = m->body_dofnum[b], d0 = m->body_dofadr[b], p = m->body_parent[b];
    mbsReal *a = lw->az + 6 * b, *qdd = lw->dz + d0;
    if (lim >= 0 && lw->first[b] > lim) continue; // nor any of its descendants (first grows)
    int moving = lw->nz[b] || (p >= 0 && lw->nz[p] == 2);
    if (!moving) {
      for (int i = 0; i < 6; i++) a[i] = 0;
      for (int j = 0; j < k; j++) qdd[j] = 0;
      continue;
    }
    const mbsReal *S = w->sdof + 6 * d0, *U = w->U + 6 * d0, *Dinv = lw->dinv + 6 * d0;
    if (p >= 0)
      mbsu_xMotion(w->xpar + 12 * b, lw->az + 6 * p, a);
    else
      for (int i = 0; i < 6; i++) a[i] = 0;
    mbsReal r[6];
    for (int j = 0; j < k; j++) r[j] = lw->uz[d0 + j] - mbsu_dot6(U + 6 * j, a);
    for (int i = 0; i < k; i++) {
      qdd[i] = 0;
      for (int j = 0; j < k; j++) qdd[i] += Dinv[k * i + j] * r[j];
    }
    for (int j = 0; j < k; j++)
      for (int i = 0; i < 6; i++) a[i] += S[6 * j + i] * qdd[j];
    lw->nz[b] = 2; // moving: its children move too
    MBS_FLOPS(mbs_flopLoopSweepFwd(k, p >= 0));
  }
}

// (key, index) pairs in lexicographic order (mbs_loopColumnOrder)
static int mbs_loopCmpPair(const void *a, const void *b) {
  const int *x = a, *y = b;
  if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
  return (x[1] > y[1]) - (x[1] < y[1]);
}

int mbs_loopColumnOrder(const mbsModel *m, int *ord, int *first) {
  int n = m->nlam_loop, nb = m->nbody;
  int *key = malloc(2 * (size_t)(n > 0 ? n : 1) * sizeof(int));
  if (!key) return 1;
  // each equation keyed by the depth of its loop's deeper body (only the loop bodies' depths
  // are read; ground sides -1): sorted with its index, the shallowest first and ties in
  // equation order
  for (int k = 0, i = 0; k < m->nloop; k++) {
    int d = -1;
    for (int side = 0; side < 2; side++) {
      int b = m->loop_body[2 * k + side];
      // a local model's held loop body may have no parent here: the builder's depth
      int db = m->local ? m->loop_depth[2 * k + side] : b >= 0 ? m->body_depth[b] - 1 : -1;
      if (b >= 0 && db > d) d = db; // a root: 0
    }
    for (int r = 0; r < m->loop_lamnum[k]; r++, i++) key[2 * i] = d, key[2 * i + 1] = i;
  }
  if (n > 0) qsort(key, (size_t)n, 2 * sizeof(int), mbs_loopCmpPair);
  for (int t = 0; t < n; t++) ord[t] = key[2 * t + 1];
  for (int t = 0; t < n; t++) key[2 * ord[t]] = t; // key[2 i]: the position of equation i
  for (int b = 0; b < nb; b++) first[b] = n;
  // a local model: seeded at the side's nearest owned ancestor (loop_anc) and carried up over the
  // owned range only (the same values on owned bodies; the others are not read)
  const int *seed = m->local ? m->loop_anc : m->loop_body;
  for (int k = 0, i = 0; k < m->nloop; k++)
    for (int r = 0; r < m->loop_lamnum[k]; r++, i++)
      for (int side = 0; side < 2; side++) {
        int b = seed[2 * k + side];
        if (b >= 0 && first[b] > key[2 * i]) first[b] = key[2 * i];
      }
  int lo = m->local ? m->own0 : 0, hi = m->local ? m->own1 : nb;
  for (int b = hi - 1; b >= lo; b--) { // up the tree: the smallest position in the subtree
    int p = m->body_parent[b];
    if (p >= lo && first[p] > first[b]) first[p] = first[b];
  }
  free(key);
  return 0;
}

// A = G H^-1 G^T by one sweep per closure equation (articulated factors in w). A is symmetric:
// column j (at position t of mbs_loopColumnOrder) gives the entries of the equations at positions
// <= t, and the rest of its column comes from their columns, so pass 3 of column t stops at the
// bodies no equation at a position <= t needs (docs/loops.md 9: about half of it on the ladder)
void mbs_loopMatrixAba(const mbsModel *m, const mbsWork *w, struct mbsLoopWork *lw) {
  int n = lw->n;
  mbs_loopZeroSums(m, w, lw, 0, m->nbody);
  mbs_loopZeroDecide(lw);
  for (int t = 0; t < n; t++) {
    int j = lw->ord[t];
    if (lw->skip[j]) { // a zero row: its column (and row) are left 0
      for (int i = 0; i < n; i++) lw->A[(size_t)i * n + j] = lw->A[(size_t)j * n + i] = 0;
      continue;
    }
    int k = lw->eq_loop[j], b1 = m->loop_body[2 * k], b2 = m->loop_body[2 * k + 1];
    const mbsReal *D = lw->D + 12 * j;
    if (b1 >= 0) memcpy(lw->fz + 6 * b1, D, 6 * sizeof(mbsReal));
    if (b2 >= 0) memcpy(lw->fz + 6 * b2, D + 6, 6 * sizeof(mbsReal));
    mbs_loopSweep(m, w, lw, t);
    for (int s = 0; s <= t; s++) {
      int i = lw->ord[s];
      mbsReal v = lw->skip[i] ? 0 : mbs_loopDotAcc(m, lw, i, lw->az, NULL);
      lw->A[(size_t)i * n + j] = lw->A[(size_t)j * n + i] = v;
    }
    if (b1 >= 0) memset(lw->fz + 6 * b1, 0, 6 * sizeof(mbsReal));
    if (b2 >= 0) memset(lw->fz + 6 * b2, 0, 6 * sizeof(mbsReal));
  }
}

// A = G H^-1 G^T with the LTDL factor of mbs_crba (also G and Y = rows of H^-1 G^T)
static void mbs_loopMatrixCrba(const mbsModel *m, const mbsWork *w, struct mbsLoopWork *lw) {
  int n = lw->n, nv = m->nv;
  mbs_loopJacobian(m, w, lw->G);
  memcpy(lw->Y, lw->G, (size_t)n * (size_t)nv * sizeof(mbsReal));
  for (int i = 0; i < n; i++) mbs_crbaSolve(m, w, lw->Y + (size_t)i * nv);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      mbsReal s = 0;
      const mbsReal *g = lw->G + (size_t)i * nv, *y = lw->Y + (size_t)j * nv;
      for (int d = 0; d < nv; d++) s += g[d] * y[d];
      lw->A[(size_t)i * n + j] = s;
    }
}

// ---------------------------------------------------------------- rank-revealing factorization

// the compliance each closure equation would have between free bodies, D1^T M1^-1 D1 +
// D2^T M2^-1 D2 (rigid-body inertias; the ground side adds nothing): an upper bound of A_ii (the
// tree only stiffens the bodies), the scale below which A_ii is roundoff of the tree solves
static void mbs_loopFreeCompliance(const struct mbsLoopWork *lw, mbsReal *out) {
  for (int i = 0; i < lw->n; i++) {
    int k = lw->eq_loop[i];
    out[i] = 0;
    for (int side = 0; side < 2; side++) {
      if (!lw->mok[2 * k + side]) continue; // the ground or massless: no bound from this side
      mbsReal y[6];
      const mbsReal *D = lw->D + 12 * i + 6 * side;
      mbsu_mul6(lw->minv + 72 * k + 36 * side, D, y);
      out[i] += mbsu_dot6(D, y);
      MBS_FLOPS(MBS_FL_LOOP_FREE);
    }
  }
}

// pivoted Cholesky of the Jacobi-scaled S A S (S = diag(1/sqrt(A_ii))): L (n x rank, permuted
// order piv), pivots below tol are redundant; then the Cholesky factor of L^T L for the
// minimum-norm solves. ref: A_ii at or below tol * ref_i is a zero row (NULL: only exact zeros
// and 1e-20 of the largest diagonal)
void mbs_loopFactor(struct mbsLoopWork *lw, mbsReal tol, const mbsReal *ref) {
  int n = lw->n;
  mbsReal *A = lw->A, *L = lw->L, dmax = 0;
  int nzero = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++) { // symmetrize (roundoff of the sweeps)
      mbsReal a = 0.5 * (A[(size_t)i * n + j] + A[(size_t)j * n + i]);
      A[(size_t)i * n + j] = A[(size_t)j * n + i] = a;
    }
  for (int i = 0; i < n; i++) dmax = fmax(dmax, A[(size_t)i * n + i]);
  for (int i = 0; i < n; i++) {
    mbsReal d = A[(size_t)i * n + i], lim = ref ? tol * ref[i] : 0;
    int zero = !(d > 1e-20 * dmax && d > 0) || (ref && !(d > lim));
    nzero += zero;
    lw->sc[i] = zero ? 0 : 1 / sqrt(d); // a zero row: redundant outright
  }
  // the zero rows go last, out of the elimination (their scaled rows are 0: never a pivot, no
  // update); the others keep their order, so the pivots are those of the whole matrix
  int nn = n - nzero;
  for (int i = 0, a = 0, z = nn; i < n; i++) lw->piv[lw->sc[i] > 0 ? a++ : z++] = i;
  // L is A's storage, overwritten in place: piv[i] >= i (a stable partition), so entry (i, j)
  // reads (piv[i], piv[j]), at or after it in row order, which no earlier write has touched
  for (int i = 0; i < n; i++) {
    mbsReal *Li = L + (size_t)i * n;
    if (i >= nn) {
      memset(Li, 0, (size_t)n * sizeof(mbsReal));
      continue;
    }
    const mbsReal *Ai = A + (size_t)lw->piv[i] * n;
    mbsReal si = lw->sc[lw->piv[i]];
    for (int j = 0; j < nn; j++) Li[j] = si * Ai[lw->piv[j]] * lw->sc[lw->piv[j]];
    for (int j = nn; j < n; j++) Li[j] = 0;
  }
  int r = 0;
  lw->min_pivot = n ? INFINITY : 0;
  for (int k = 0; k < nn; k++) {
    int p = k;
    for (int i = k + 1; i < nn; i++)
      if (L[(size_t)i * n + i] > L[(size_t)p * n + p]) p = i;
    mbsReal d = L[(size_t)p * n + p];
    if (!(d > tol)) break;
    if (p != k) { // symmetric swap of rows and columns k, p
      for (int j = 0; j < nn; j++) {
        mbsReal t = L[(size_t)k * n + j];
        L[(size_t)k * n + j] = L[(size_t)p * n + j];
        L[(size_t)p * n + j] = t;
      }
      for (int i = 0; i < nn; i++) {
        mbsReal t = L[(size_t)i * n + k];
        L[(size_t)i * n + k] = L[(size_t)i * n + p];
        L[(size_t)i * n + p] = t;
      }
      int t = lw->piv[k];
      lw->piv[k] = lw->piv[p];
      lw->piv[p] = t;
    }
    lw->min_pivot = fmin(lw->min_pivot, d);
    d = sqrt(d);
    L[(size_t)k * n + k] = d;
    mbsReal *col = lw->col; // column k below the pivot, contiguous: the update reads rows
    for (int i = k + 1; i < nn; i++) col[i] = L[(size_t)i * n + k] /= d;
    for (int i = k + 1; i < nn; i++) {
      mbsReal li = col[i], *Li = L + (size_t)i * n;
      for (int j = k + 1; j < nn; j++) Li[j] -= li * col[j];
    }
    for (int j = k + 1; j < nn; j++) L[(size_t)k * n + j] = 0;
    r = k + 1;
  }
  // columns beyond the rank: the remainder (redundant) is dropped
  for (int i = r; i < nn; i++)
    for (int j = r; j < nn; j++) L[(size_t)i * n + j] = 0;
  lw->rank = r;
  lw->nzero = nzero;
  MBS_FLOPS(mbs_flopLoopFactor(n, r, nzero, ref != NULL));
  // the non-zero rows independent (r == nn): the solution is unique, no minimum-norm factor M
  if (r == nn) return;
  // M = chol(L^T L), r x r (L lower trapezoidal: L_ik = 0 for i < k), accumulated row by row of
  // L (each M_ab sums its terms in increasing i, as a column dot product would)
  mbsReal *M = lw->M;
  for (size_t q = 0; q < (size_t)r * r; q++) M[q] = 0;
  for (int i = 0; i < nn; i++) { // the zero rows add nothing
    const mbsReal *Li = L + (size_t)i * n;
    for (int a = 0; a < r && a <= i; a++) {
      mbsReal la = Li[a], *Ma = M + (size_t)a * r;
      for (int b = 0; b <= a; b++) Ma[b] += la * Li[b];
    }
  }
  for (int j = 0; j < r; j++) {
    mbsReal d = M[(size_t)j * r + j];
    for (int l = 0; l < j; l++) d -= M[(size_t)j * r + l] * M[(size_t)j * r + l];
    d = sqrt(d > 0 ? d : 0);
    M[(size_t)j * r + j] = d;
    for (int i = j + 1; i < r; i++) {
      mbsReal s = M[(size_t)i * r + j];
      for (int l = 0; l < j; l++) s -= M[(size_t)i * r + l] * M[(size_t)j * r + l];
      M[(size_t)i * r + j] = d > 0 ? s / d : 0;
    }
  }
}

// A = G H^-1 G^T factored, its zero rows judged against the free-body compliance
void mbs_loopFactorA(const mbsModel *m, struct mbsLoopWork *lw) {
  mbs_loopFreeCompliance(lw, lw->tmp);
  mbs_loopFactor(lw, m->opt.rank_tol, lw->tmp);
}

// x = the solution of A x = b with the least sum A_ii x_i^2 (minimum norm of the scaled
// unknowns): Jacobi-scaled, permuted S A S = L L^T; nu = L w with L11 (L^T L) w = (P S b)_1
void mbs_loopMinNorm(struct mbsLoopWork *lw, const mbsReal *b, mbsReal *x) {
  int n = lw->n, r = lw->rank;
  const mbsReal *L = lw->L, *M = lw->M;
  mbsReal *z = lw->tmp;
  MBS_FLOPS(mbs_flopLoopMinNorm(n, r, lw->nzero));
  for (int i = 0; i < r; i++) { // forward: L11 z = (P S b)_1
    mbsReal s = lw->sc[lw->piv[i]] * b[lw->piv[i]];
    for (int l = 0; l < i; l++) s -= L[(size_t)i * n + l] * z[l];
    z[i] = s / L[(size_t)i * n + i];
  }
  if (r == n - lw->nzero) { // independent non-zero rows: the unique solution L11^T y = z
    for (int i = r - 1; i >= 0; i--) {
      mbsReal s = z[i];
      for (int l = i + 1; l < r; l++) s -= L[(size_t)l * n + i] * z[l];
      z[i] = s / L[(size_t)i * n + i];
    }
    for (int i = 0; i < n; i++) x[lw->piv[i]] = i < r ? lw->sc[lw->piv[i]] * z[i] : 0;
    return;
  }
  for (int i = 0; i < r; i++) { // (L^T L) w = z with M M^T = L^T L
    mbsReal s = z[i];
    for (int l = 0; l < i; l++) s -= M[(size_t)i * r + l] * z[l];
    z[i] = M[(size_t)i * r + i] > 0 ? s / M[(size_t)i * r + i] : 0;
  }
  for (int i = r - 1; i >= 0; i--) {
    mbsReal s = z[i];
    for (int l = i + 1; l < r; l++) s -= M[(size_t)l * r + i] * z[l];
    z[i] = M[(size_t)i * r + i] > 0 ? s / M[(size_t)i * r + i] : 0;
  }
  for (int i = 0; i < n; i++) { // nu = L w, back to the original order and scale
    mbsReal s = 0;
    int lim = i < r ? i + 1 : r;
    for (int l = 0; l < lim; l++) s += L[(size_t)i * n + l] * z[l];
    x[lw->piv[i]] = lw->sc[lw->piv[i]] * s;
  }
}

// ---------------------------------------------------------------- the serial baseline

mbsErr mbs_loopSolve(const mbsModel *m, mbsWork *w) {
  struct mbsLoopWork *lw = w->loop;
  MBS_CHECK(
      lw && lw->G, MBS_ERR_INTERNAL,
      "mbs_loopSolve: the workspace has no whole-model loop solver (a distributed loop model)");
  int n = lw->n, nv = m->nv, crba = mbs_solverCaps(m->opt.solver)->dense_inertia;
  mbsReal ag[6];
  mbs_baseAccel(m, 1, ag);
  // eval.loops: everything here but the final tree solve
  MBS_TIC(w->timer, MBS_TIMER_LOOPS);
  // directions and right side: b = kappa' - D^T a(qdd0) (workspace accelerations carry the
  // gravity offset, the ground a_ground: the offset cancels in the equal-and-opposite pair)
  mbs_loopAll(m, w, lw, 1);
  for (int i = 0; i < n; i++) lw->rhs[i] = lw->kappa[i] - mbs_loopDotAcc(m, lw, i, w->acc, ag);
  MBS_FLOPS(n);
  memcpy(lw->qdd0, w->qdd, (size_t)nv * sizeof(mbsReal));
  // A = G H^-1 G^T: articulated sweeps (aba) or the LTDL factor (crba)
  if (crba) {
    lw->nskip = 0; // crba's A from its dense H^-1 G^T, every column
    memset(lw->skip, 0, (size_t)n);
    mbs_loopMatrixCrba(m, w, lw);
  } else { // the sweeps need U and Dinv of every joint (the fast mbs_aba keeps its own records)
    if (!mbs_abaFactor(m, w)) {
      MBS_TOC(w->timer, MBS_TIMER_LOOPS);
      return mbs_errSet(MBS_ERR_NUMERIC, "loops: singular articulated inertia");
    }
    mbs_loopMatrixAba(m, w, lw);
  }
  mbs_loopFactorA(m, lw);
  mbs_loopMinNorm(lw, lw->rhs, lw->lam);
  // the loop wrenches join the external ones, and the tree is solved again with them
  mbs_loopAddWrench(m, lw, lw->lam, w->fext);
  w->fext_on = 1;
  MBS_TOC(w->timer, MBS_TIMER_LOOPS);
  if (crba) {
    for (int i = 0; i < n; i++)
      for (int d = 0; d < nv; d++) w->qdd[d] += lw->Y[(size_t)i * nv + d] * lw->lam[i];
    mbs_rnea(m, w, w->qdd);
    memcpy(w->jfrc, w->frc, 6 * (size_t)m->nbody * sizeof(mbsReal));
  } else {
    MBS_CALL(mbs_aba(m, w));
  }
  memcpy(w->lam + m->nlam, lw->lam, (size_t)n * sizeof(mbsReal));
  // the acceleration-level closure after the solve
  MBS_TIC(w->timer, MBS_TIMER_LOOPS);
  lw->resid = 0;
  for (int i = 0; i < n; i++)
    lw->resid = fmax(lw->resid, fabs(mbs_loopDotAcc(m, lw, i, w->acc, ag) - lw->kappa[i]));
  MBS_FLOPS(n);
  MBS_TOC(w->timer, MBS_TIMER_LOOPS);
  return MBS_OK;
}
