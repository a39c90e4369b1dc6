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
  int nzmax = f->nzmax, owner = mbs_fcLoopOwner(f);
  mbsReal al = m->opt.baumgarte[0], be = m->opt.baumgarte[1];
  for (int k = 0, i0 = 0; k < m->nloop; k++) {
    int nk = m->loop_lamnum[k];
    mbsReal R[2][9], p[2][3], om[2][3], vo[2][3], cs[2][6], v[2][6], Fo[24];
    mbsLoopSide ls[2] = {{NULL, NULL, NULL}, {NULL, NULL, NULL}};
    for (int s = 0; s < 2; s++) {
      int b = m->loop_body[2 * k + s], nd = mbs_flexSetLoopNodeOf(m->flex, k, s);
      memcpy(Fo + 12 * s, m->loop_frame + 24 * k + 12 * s, 12 * sizeof(mbsReal));
      if (b < 0) continue;
      int n = a->nz[b], fk = a->flexof[b];
      mbsReal *A = f->lA + (size_t)6 * nzmax * s; // 6 x n
      if (nd >= 0 && fk >= 0) {
        const mbsFlexBody *fb = a->f[fk].fb;
        const mbsFlexModal *md = &fb->modal;
        mbsReal x[3];
        int fe = mbs_foNodeAt(fb, nd, x);
        const mbsReal *Gn = a->f[fk].Gnode ? a->f[fk].Gnode + (size_t)nd * md->m * md->m : NULL;
        mbs_faNode(a, fe, x, Gn, b, y, eta, R[s], p[s], om[s], vo[s], A, cs[s]);
        for (int i = 0; i < 3; i++) Fo[12 * s + i] -= x[i]; // measured from the node
      } else {
        memcpy(R[s], a->Rw + 9 * b, sizeof R[s]);
        memcpy(p[s], a->pw + 3 * b, sizeof p[s]);
        memcpy(om[s], a->om + 3 * b, sizeof om[s]);
        memcpy(vo[s], a->vo + 3 * b, sizeof vo[s]);
        memset(A, 0, sizeof(mbsReal) * 6 * (size_t)n);
        for (int i = 0; i < 6; i++) A[i * n + i] = 1, cs[s][i] = 0;
      }
      for (int i = 0; i < 3; i++) { // body-coordinate velocity of the frame
        v[s][i] = R[s][i] * om[s][0] + R[s][3 + i] * om[s][1] + R[s][6 + i] * om[s][2];
        v[s][3 + i] = R[s][i] * vo[s][0] + R[s][3 + i] * vo[s][1] + R[s][6 + i] * vo[s][2];
      }
      ls[s].R = R[s], ls[s].x = p[s], ls[s].v = v[s];
    }
    mbsReal D[2][36], c[6], cd[6], kap[6];
    mbsu_loopClosure(m->loop_type[k], Fo, Fo + 12, ls, ls + 1, D[0], D[1], c, cd, kap);
    for (int r = 0; r < nk; r++) {
      int i = i0 + r;
      mbsReal lk = -kap[r] + 2 * al * cd[r] + be * be * c[r], ld = 0;
      for (int s = 0; s < 2; s++) {
        int b = m->loop_body[2 * k + s];
        mbsReal *g = f->lg + (size_t)(2 * i + s) * nzmax;
        if (b < 0) {
          memset(g, 0, sizeof(mbsReal) * (size_t)nzmax);
          continue;
        }
        int n = a->nz[b];
        const mbsReal *A = f->lA + (size_t)6 * nzmax * s;
        mbsReal dw[6], t[3];
        mbs_foMat3Vec(R[s], D[s] + 6 * r, dw);
        mbs_foMat3Vec(R[s], D[s] + 6 * r + 3, dw + 3);
        for (int j = 0; j < n; j++) {
          mbsReal sum = 0;
          for (int q = 0; q < 6; q++) sum += A[q * n + j] * dw[q];
          g[j] = sum;
        }
        mbs_foCross(om[s], vo[s], t);
        for (int q = 0; q < 6; q++) lk += dw[q] * cs[s][q];
        lk -= dw[3] * t[0] + dw[4] * t[1] + dw[5] * t[2];
        if (owner) { // the preconditioner's diagonal g^T M_b^-1 g
          const mbsReal *Mi = f->Minv + a->oq[b];
          for (int j = 0; j < n; j++) {
            mbsReal sum = 0;
            for (int q = 0; q < n; q++) sum += Mi[j * n + q] * g[q];
            ld += g[j] * sum;
          }
        }
      }
      f->lk[i] = lk, f->ld[i] = ld;
    }
    i0 += nk;
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
