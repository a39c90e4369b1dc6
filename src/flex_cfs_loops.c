/// \file flex_cfs_loops.c
/// Closed loops in the constraint-force system with flexible bodies (docs/flexible.md 15.2): each
/// closure equation i is one more row of A lam = b after the tree's rows (rows ntree .. nl), its
/// multiplier one more unknown. Side s of the cut joint sits on the frame of body b_s or of a
/// named node of it, whose twist is A_s z_b (A_s = [1 0] for the body frame, the node map of
/// docs/flexible.md 5.5 otherwise: it reaches the body's etad) with the bias c_s. With dw the
/// row's world wrench (mbsu_loopClosure's direction turned into the world), the row is
///
///     sum_s g_s^T zdot_b + k_i = 0,  g_s = A_s^T dw,
///     k_i = sum_s (dw^T c_s - d_f . (om_s x v_s)) - kappa_i + 2 alpha cdot_i + beta^2 c_i
///
/// and the multiplier adds g_s lam_i to Q_b (so A = G M^-1 G^T stays symmetric): the rigid
/// constraint-force system's coupling of body1's and body2's rows (docs/loops.md 8), through
/// the (6 + m) rows of a flexible body. The loop rows belong to the rank owning the last bodies
/// (its row range ends at nl); every rank gets their multipliers by one sum per product.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "flex_cfs_private.h"
#include "flex_private.h"
#include "mbspar/mbs_joint.h"

mbsErr mbs_fcLoopCreate(mbsFlexCfs *f) {
  const mbsModel *m = f->m;
  f->nle = m->nlam_loop;
  if (!f->nle) return MBS_OK;
  int nzmax = 6;
  for (int b = 0; b < m->nbody; b++)
    if (f->a->nz[b] > nzmax) nzmax = f->a->nz[b];
  f->nzmax = nzmax;
  size_t n = (size_t)f->nle;
  f->lg = calloc(2 * n * (size_t)nzmax, sizeof(mbsReal));
  f->lk = calloc(n, sizeof(mbsReal));
  f->ld = calloc(n, sizeof(mbsReal));
  f->xl = calloc(n, sizeof(mbsReal));
  f->lA = malloc(sizeof(mbsReal) * 12 * (size_t)nzmax);
  if (!f->lg || !f->lk || !f->ld || !f->xl || !f->lA)
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (flexible constraint-force loops)");
  return MBS_OK;
}

void mbs_fcLoopFree(mbsFlexCfs *f) {
  free(f->lg), free(f->lk), free(f->ld), free(f->xl), free(f->lA);
}

int mbs_fcLoopOwner(const mbsFlexCfs *f) {
  return f->nle > 0 && f->l1 == f->nl;
}

void mbs_fcLoopNeed(mbsFlexCfs *f) {
  const mbsModel *m = f->m;
  if (!mbs_fcLoopOwner(f)) return;
  for (int k = 0; k < 2 * m->nloop; k++)
    if (m->loop_body[k] >= 0) f->need[m->loop_body[k]] = 1;
}

void mbs_fcLoopPrepare(mbsFlexCfs *f, const mbsReal *y, const mbsReal *eta) {
  const mbsModel *m = f->m;
  mbsFlexAba *a = f->a;
  int nzmax = f->nzmax;
  mbs_faLoopRows(a, y, eta, nzmax, f->lA, f->lg, f->lk, NULL); // (src/flex_part_loops.c)
  if (!mbs_fcLoopOwner(f)) return;
  for (int k = 0, i0 = 0; k < m->nloop; i0 += m->loop_lamnum[k], k++)
    for (int r = 0; r < m->loop_lamnum[k]; r++) { // the preconditioner's diagonal g^T M_b^-1 g
      int i = i0 + r;
      mbsReal ld = 0;
      for (int s = 0; s < 2; s++) {
        int b = m->loop_body[2 * k + s], n = b < 0 ? 0 : a->nz[b];
        const mbsReal *g = f->lg + (size_t)(2 * i + s) * nzmax,
                      *Mi = b < 0 ? NULL : f->Minv + a->oq[b];
        for (int j = 0; j < n; j++) {
          mbsReal sum = 0;
          for (int q = 0; q < n; q++) sum += Mi[j * n + q] * g[q];
          ld += g[j] * sum;
        }
      }
      f->ld[i] = ld;
    }
}

mbsErr mbs_fcLoopGather(mbsFlexCfs *f, const mbsReal *x) {
  if (!f->nle) return MBS_OK;
  if (mbs_fcLoopOwner(f))
    memcpy(f->xl, x + (f->nl - f->nle), sizeof(mbsReal) * (size_t)f->nle);
  else
    memset(f->xl, 0, sizeof(mbsReal) * (size_t)f->nle);
  return f->comm.reduce ? mbs_fcReduce(f, f->xl, f->nle) : MBS_OK;
}

void mbs_fcLoopForce(const mbsFlexCfs *f, int b, mbsReal *Qb) {
  const mbsModel *m = f->m;
  int n = f->a->nz[b];
  for (int k = 0, i0 = 0; k < m->nloop; i0 += m->loop_lamnum[k], k++)
    for (int s = 0; s < 2; s++) {
      if (m->loop_body[2 * k + s] != b) continue;
      for (int r = 0; r < m->loop_lamnum[k]; r++) {
        const mbsReal *g = f->lg + (size_t)(2 * (i0 + r) + s) * f->nzmax;
        mbsReal x = f->xl[i0 + r];
        for (int j = 0; j < n; j++) Qb[j] += g[j] * x;
      }
    }
}

void mbs_fcLoopRows(const mbsFlexCfs *f, int known, mbsReal *yo) {
  const mbsModel *m = f->m;
  if (!mbs_fcLoopOwner(f)) return;
  int l = f->nl - f->nle;
  for (int k = 0, i0 = 0; k < m->nloop; i0 += m->loop_lamnum[k], k++)
    for (int r = 0; r < m->loop_lamnum[k]; r++) {
      int i = i0 + r;
      mbsReal t = known ? f->lk[i] : 0;
      for (int s = 0; s < 2; s++) {
        int b = m->loop_body[2 * k + s];
        if (b < 0) continue;
        const mbsReal *g = f->lg + (size_t)(2 * i + s) * f->nzmax, *zd = f->Q + f->a->ov[b];
        for (int j = 0; j < f->a->nz[b]; j++) t += g[j] * zd[j];
      }
      yo[l + i] = t;
    }
}

void mbs_fcLoopPrecond(const mbsFlexCfs *f, const mbsReal *r, mbsReal *z) {
  if (!mbs_fcLoopOwner(f)) return;
  int l = f->nl - f->nle;
  mbsReal dmax = 0;
  for (int i = 0; i < f->nle; i++) dmax = fmax(dmax, f->ld[i]);
  for (int i = 0; i < f->nle; i++) // a zero row (no motion violates it): left alone
    z[l + i] = f->ld[i] > 1e-20 * dmax ? r[l + i] / f->ld[i] : 0;
}

int mbs_fcCholDrop(int n, int nfree, mbsReal tol, mbsReal *A, mbsReal *b, int *ndrop) {
  *ndrop = 0;
  for (int k = 0; k < n; k++) {
    mbsReal *Ak = A + (size_t)k * n, d0 = Ak[k], d = d0;
    for (int j = 0; j < k; j++) d -= Ak[j] * Ak[j];
    if (k >= nfree && !(d > tol * d0)) { // a redundant closure equation: dropped, its lam = 0
      for (int j = 0; j < k; j++) Ak[j] = 0;
      for (int i = k + 1; i < n; i++) A[(size_t)i * n + k] = 0;
      Ak[k] = 1, b[k] = 0, (*ndrop)++;
      continue;
    }
    if (!(d > 0)) return -1;
    d = sqrt(d);
    Ak[k] = d;
    for (int i = k + 1; i < n; i++) {
      mbsReal *Ai = A + (size_t)i * n, s = Ai[k];
      for (int j = 0; j < k; j++) s -= Ai[j] * Ak[j];
      Ai[k] = s / d;
    }
  }
  return 0;
}
