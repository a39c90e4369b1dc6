/// \file flex_part_loops.c
/// Closed loops through flexible bodies on the recursive algorithm split over the ranks
/// (src/flex_part.c; docs/flexible.md 15.4): one layer above the tree solves, as the rigid loops
/// on schur (docs/loops.md 8.1a). The closure rows are those of the constraint-force system
/// (docs/flexible.md 15.2): side s of row i acts on body b_s's z = [twist; etad] through the
/// generalised force g_s = A_s^T dw (nz_b entries), with the bias k_i, so G ydd = sum_s g_s^T
/// zdot_b and the KKT rows are M ydd - G^T lam = f, G ydd + k = 0. Per evaluation: tree solve 0
/// with the applied forces (ydd0, zdot0), one homogeneous tree solve per closure row j with the
/// generalised forces g_s of row j alone (no gravity, velocity products, modal or joint forces:
/// mbsFlexAba.homog), whose zdot gives column j of A = G M^-1 G^T; A and b = -(k + G ydd0) are
/// summed over the parts by the caller, lam is the minimum-norm solution of the rigid baseline
/// (mbs_loopFactorA, mbs_loopMinNorm: redundant rows as docs/loops.md 4), and ydd = ydd0 +
/// sum_j lam_j (unit response j) on the part's own entries. No MPI here.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "flex_private.h"
#include "loops_private.h"
#include "mbspar/mbs_joint.h"

struct mbsFpLoops {
  int n, nzmax, cnt;      ///< closure rows, the largest nz, this part's packed ydd entries
  struct mbsLoopWork *lw; ///< A, its factor, rhs, lam, D (the zero-row test's scale)
  unsigned char *kin;     ///< (nbody) the sides' bodies and their ancestors
  unsigned char *zero;    ///< (n) g = 0 on both sides: no unit solve, a zero column
  mbsReal *g, *k, *lA;    ///< (2n x nzmax) the sides' forces, (n) the bias, (12 nzmax) scratch
  mbsReal *Ab;            ///< (n^2 + n) this part's share of A, then of G ydd0 (summed)
  mbsReal *Y;             ///< (n x cnt) the unit responses, this part's entries packed
  mbsReal *y0, *yd;       ///< (cnt) ydd0 packed, (N) scratch of the unit solves
  int lf;                 ///< the unit force of the current solve (-1: the applied forces)
};

void mbs_faLoopRows(mbsFlexAba *a, const mbsReal *y, const mbsReal *eta, int nzmax, mbsReal *lA,
                    mbsReal *lg, mbsReal *lk, mbsReal *D) {
  const mbsModel *m = a->m;
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
      mbsReal *A = lA + (size_t)6 * nzmax * s; // 6 x n
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
    mbsReal Dk[2][36], c[6], cd[6], kap[6];
    mbsu_loopClosure(m->loop_type[k], Fo, Fo + 12, ls, ls + 1, Dk[0], Dk[1], c, cd, kap);
    for (int r = 0; r < nk; r++) {
      int i = i0 + r;
      mbsReal k1 = -kap[r] + 2 * al * cd[r] + be * be * c[r];
      for (int s = 0; s < 2; s++) {
        int b = m->loop_body[2 * k + s];
        mbsReal *g = lg + (size_t)(2 * i + s) * nzmax, *Db = D ? D + 12 * i + 6 * s : NULL;
        if (b < 0) {
          memset(g, 0, sizeof(mbsReal) * (size_t)nzmax);
          if (Db) memcpy(Db, Dk[s] + 6 * r, 6 * sizeof(mbsReal));
          continue;
        }
        int n = a->nz[b];
        const mbsReal *A = lA + (size_t)6 * nzmax * s;
        mbsReal dw[6], t[3];
        mbs_foMat3Vec(R[s], Dk[s] + 6 * r, dw);
        mbs_foMat3Vec(R[s], Dk[s] + 6 * r + 3, dw + 3);
        for (int j = 0; j < n; j++) {
          mbsReal sum = 0;
          for (int q = 0; q < 6; q++) sum += A[q * n + j] * dw[q];
          g[j] = sum;
        }
        mbs_foCross(om[s], vo[s], t);
        for (int q = 0; q < 6; q++) k1 += dw[q] * cs[s][q];
        k1 -= dw[3] * t[0] + dw[4] * t[1] + dw[5] * t[2];
        if (!Db) continue;
        // the directions at the body's origin in its coordinates (a node side moved from the node)
        const mbsReal *Rb = a->Rw + 9 * b, *pb = a->pw + 3 * b;
        mbsReal r3[3] = {p[s][0] - pb[0], p[s][1] - pb[1], p[s][2] - pb[2]};
        mbs_foCross(r3, dw + 3, t);
        for (int j = 0; j < 3; j++) t[j] += dw[j];
        for (int j = 0; j < 3; j++) {
          Db[j] = Rb[j] * t[0] + Rb[3 + j] * t[1] + Rb[6 + j] * t[2];
          Db[3 + j] = Rb[j] * dw[3] + Rb[3 + j] * dw[4] + Rb[6 + j] * dw[5];
        }
      }
      lk[i] = k1;
    }
    i0 += nk;
  }
}

void mbs_fplFree(mbsFlexPart *p) {
  struct mbsFpLoops *lp = p->lp;
  if (!lp) return;
  mbs_loopWorkDestroy(&lp->lw);
  free(lp->kin), free(lp->zero), free(lp->g), free(lp->k), free(lp->lA), free(lp->Ab);
  free(lp->Y), free(lp->y0), free(lp->yd);
  free(lp);
  p->lp = NULL;
}

mbsErr mbs_fplCreate(mbsFlexPart *p) {
  const mbsModel *m = p->m;
  const mbsFlexAba *a = p->a;
  if (!m->nloop) return MBS_OK;
  struct mbsFpLoops *lp = calloc(1, sizeof *lp);
  if (!lp) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  p->lp = lp;
  lp->n = m->nlam_loop, lp->lf = -1, lp->cnt = mbs_flexPartCount(p, p->r), lp->nzmax = 6;
  for (int b = 0; b < m->nbody; b++)
    if (a->nz[b] > lp->nzmax) lp->nzmax = a->nz[b];
  size_t n = (size_t)lp->n, nz = (size_t)lp->nzmax, cnt = (size_t)lp->cnt;
  MBS_CALL(mbs_loopWorkCreate(m, &lp->lw));
  lp->kin = calloc((size_t)m->nbody + 1, 1), lp->zero = calloc(n + 1, 1);
  lp->g = calloc(2 * n * nz + 1, sizeof(mbsReal)), lp->k = calloc(n + 1, sizeof(mbsReal));
  lp->lA = calloc(12 * nz, sizeof(mbsReal)), lp->Ab = calloc(n * n + n + 1, sizeof(mbsReal));
  lp->Y = calloc(n * cnt + 1, sizeof(mbsReal)), lp->y0 = calloc(cnt + 1, sizeof(mbsReal));
  lp->yd = calloc((size_t)p->N + 1, sizeof(mbsReal));
  if (!lp->kin || !lp->zero || !lp->g || !lp->k || !lp->lA || !lp->Ab || !lp->Y || !lp->y0 ||
      !lp->yd)
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (flexible parts' loops)");
  for (int k = 0; k < 2 * m->nloop; k++)
    for (int b = m->loop_body[k]; b >= 0 && !lp->kin[b]; b = m->body_parent[b]) lp->kin[b] = 1;
  return MBS_OK;
}

int mbs_flexPartLoopRows(mbsFlexPart *p, const mbsReal *q, const mbsReal *y, const mbsReal *eta,
                         mbsReal **Ab) {
  struct mbsFpLoops *lp = p->lp;
  const mbsModel *m = p->m;
  if (!lp) return 0;
  lp->lf = -1, p->a->homog = 0;
  for (int b = 0; b < m->nbody; b++) // the sides' kinematics (every part alike)
    if (lp->kin[b]) mbs_faKin(p->a, b, q, y, eta);
  mbs_faLoopRows(p->a, y, eta, lp->nzmax, lp->lA, lp->g, lp->k, lp->lw->D);
  for (int i = 0; i < lp->n; i++) {
    mbsReal s = 0;
    for (int j = 0; j < 2 * lp->nzmax; j++) s += fabs(lp->g[(size_t)2 * i * lp->nzmax + j]);
    lp->zero[i] = !(s > 0);
  }
  memset(lp->Ab, 0, sizeof(mbsReal) * ((size_t)lp->n * lp->n + lp->n));
  *Ab = lp->Ab;
  return lp->n * lp->n + lp->n;
}

mbsReal *mbs_flexPartLoopUnit(mbsFlexPart *p, int j) {
  struct mbsFpLoops *lp = p->lp;
  if (!lp || (j >= 0 && lp->zero[j])) return NULL;
  lp->lf = j, p->a->homog = j >= 0;
  return j >= 0 ? lp->yd : NULL;
}

void mbs_fplForce(mbsFlexPart *p) {
  struct mbsFpLoops *lp = p->lp;
  const mbsModel *m = p->m;
  mbsFlexAba *a = p->a;
  if (!lp || lp->lf < 0) return;
  for (int b = p->b0; b < p->b1; b++) // homogeneous: the unit forces alone
    memset(a->pA + a->ov[b], 0, sizeof(mbsReal) * (size_t)a->nz[b]);
  int i = lp->lf, k = 0;
  for (int i0 = 0; i0 + m->loop_lamnum[k] <= i; k++) i0 += m->loop_lamnum[k];
  for (int s = 0; s < 2; s++) { // M zdot + h = Q: h -= g
    int b = m->loop_body[2 * k + s];
    if (b < p->b0 || b >= p->b1) continue;
    const mbsReal *g = lp->g + (size_t)(2 * i + s) * lp->nzmax;
    for (int r = 0; r < a->nz[b]; r++) a->pA[a->ov[b] + r] -= g[r];
  }
}

void mbs_flexPartLoopDots(mbsFlexPart *p, const mbsReal *ydd) {
  struct mbsFpLoops *lp = p->lp;
  const mbsModel *m = p->m;
  const mbsFlexAba *a = p->a;
  int n = lp->n, j = lp->lf;
  for (int k = 0, i0 = 0; k < m->nloop; i0 += m->loop_lamnum[k], k++)
    for (int r = 0; r < m->loop_lamnum[k]; r++) {
      int i = i0 + r;
      mbsReal t = 0;
      for (int s = 0; s < 2; s++) {
        int b = m->loop_body[2 * k + s];
        if (b < p->b0 || b >= p->b1) continue;
        const mbsReal *g = lp->g + (size_t)(2 * i + s) * lp->nzmax, *zd = a->zd + a->ov[b];
        for (int c = 0; c < a->nz[b]; c++) t += g[c] * zd[c];
      }
      lp->Ab[j < 0 ? (size_t)n * n + i : (size_t)i * n + j] = t;
    }
  mbs_flexPartPack(p, p->r, ydd, j < 0 ? lp->y0 : lp->Y + (size_t)j * lp->cnt);
  lp->lf = -1, p->a->homog = 0;
}

mbsErr mbs_flexPartLoopSolve(mbsFlexPart *p, mbsReal *ydd) {
  struct mbsFpLoops *lp = p->lp;
  struct mbsLoopWork *lw = lp->lw;
  int n = lp->n, cnt = lp->cnt;
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++)
      lw->A[(size_t)i * n + j] = 0.5 * (lp->Ab[(size_t)i * n + j] + lp->Ab[(size_t)j * n + i]);
    lw->rhs[i] = -(lp->k[i] + lp->Ab[(size_t)n * n + i]);
  }
  mbs_loopFactorA(p->m, lw);
  mbs_loopMinNorm(lw, lw->rhs, lw->lam);
  mbsReal *o = lp->yd; // this part's entries: ydd0 + sum_j lam_j Y_j
  memcpy(o, lp->y0, sizeof(mbsReal) * (size_t)cnt);
  for (int j = 0; j < n; j++) {
    if (lp->zero[j]) continue;
    const mbsReal *Yj = lp->Y + (size_t)j * cnt;
    for (int c = 0; c < cnt; c++) o[c] += lw->lam[j] * Yj[c];
  }
  mbs_flexPartUnpack(p, p->r, o, ydd);
  lw->resid = 0; // max |A lam - rhs| (the closure's acceleration residual)
  for (int i = 0; i < n; i++) {
    mbsReal r = -lw->rhs[i];
    for (int j = 0; j < n; j++) r += lw->A[(size_t)i * n + j] * lw->lam[j];
    lw->resid = fmax(lw->resid, fabs(r));
  }
  return MBS_OK;
}
