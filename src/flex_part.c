/// \file flex_part.c
/// The recursive flexible algorithm (src/flex_aba.c) split over contiguous body ranges ("parts";
/// docs/flexible.md 11). Part r holds the bodies [b0, b1) and runs the three passes of flex_aba
/// on them as a forest. A cut joint g (child c on one part, its parent on an earlier one) has
/// 12 interface unknowns: the acceleration a_g = P_c zdot_p of the frame c hangs from (without
/// c's velocity products) and the force f_g its parent transmits (pass 2's Ia a + pa). Each part
/// gives 6 rows per cut it touches, affine in its own cuts' unknowns:
///   top cut g (c here):        f_g - Ia_c a_g - sum_k B_gk f_k = pa_c      (k: c's bottom cuts)
///   bottom cut k (parent here): a_k - C_kg a_g - sum_k' E_kk' f_k' = d_k   (g: its tree's top)
/// with B, C, E unit responses carried along the paths from the bottom cuts' parents to the
/// part's roots (the "spikes": a bias-only pass 2 up the path, a pass 3 down the paths). The rows
/// of all parts are disjoint, so the interface system is their sum (the parallel layer: one
/// allreduce); every part solves it alike (LU, partial pivoting) and finishes its range with its
/// top cuts' a_g and bottom cuts' f_k known. No MPI here.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_flex.h"
#include "mbspar/mbs_joint.h"
#include "mbspar/mbs_model.h"
#include "flex_flops.h"
#include "flex_private.h"

// body b's free directions (the joint's undriven dofs and the modal coordinates) and its
// parent's z size (0 at a root); the counts of flex_flops.h at this file's call sites are the
// costs of its critical-path graph (src/flex_part_cpa.c)
static inline int mbs_fpNu(const mbsFlexAba *a, int b) {
  return mbs_faNd(a, b) + a->nz[b] - 6;
}
static inline int mbs_fpNp(const mbsFlexAba *a, int b) {
  int q = a->m->body_parent[b];
  return q < 0 ? 0 : a->nz[q];
}
static inline int mbs_fpScalar(const mbsModel *m, int b) {
  return mbs_jntQuatAdr(m->body_jnttype[b]) < 0;
}

void mbs_flexPartDestroy(mbsFlexPart **pp) {
  if (!pp || !*pp) return;
  mbsFlexPart *p = *pp;
  mbs_flexAbaDestroy(&p->a);
  free(p->starts), free(p->cutid), free(p->top), free(p->bot), free(p->rootof), free(p->kin);
  free(p->path), free(p->walk), free(p->hb), free(p->dpA), free(p->dv), free(p->dz), free(p->buf);
  free(p->x), free(p->piv), free(p->ydd);
  mbs_fplFree(p);
  free(p);
  *pp = NULL;
}

// The cost model of the split (docs/flexible.md 11), in units of one flexible link's share of an
// evaluation (16 points, 6 + 4 coordinates): a body's pass 1-3 work grows with its points and
// (6 + m)^2; the kinematics of a part's ancestors cost MBS_FP_KIN each; every unit-response
// column walks its path (MBS_FP_COL per body): 12 per bottom cut along its way to the part root,
// 6 per top cut over the path bodies of its tree; the finish pass 2 MBS_FP_COL per body. Measured
// on the 4096-link chain (one process, load about 3): 3.8 us per link, 0.14 us per body's
// kinematics, 0.05 us per body and column walk (the 6 columns of a cut at each body in turn).
#define MBS_FP_KIN 0.04
#define MBS_FP_COL 0.013

static double mbs_fpBodyCost(const mbsFlexAba *a, int b) {
  int n = a->nz[b], np = a->flexof[b] < 0 ? 1 : a->f[a->flexof[b]].np;
  return (double)(np * n * n + 6 * n * n + 50) / 2250.0;
}

// part r's cost under the split starts (mark: nbody scratch, left zero)
static double mbs_fpPartCost(const mbsModel *m, const mbsFlexAba *a, const int *starts, int r,
                             unsigned char *mark) {
  int b0 = starts[r], b1 = starts[r + 1], cut = 0;
  double c = 0;
  for (int b = b0; b < b1; b++) {
    int q = m->body_parent[b];
    c += mbs_fpBodyCost(a, b);
    if (q >= 0 && q < b0) cut = 1;
    for (; q >= 0 && q < b0 && !mark[q]; q = m->body_parent[q]) mark[q] = 1, c += MBS_FP_KIN;
  }
  for (int b = b1; b < m->nbody; b++) { // bottom cuts: 12 columns along their way up
    int q = m->body_parent[b];
    if (q < b0 || q >= b1) continue;
    cut = 1;
    for (; q >= b0; q = m->body_parent[q]) c += 12 * MBS_FP_COL;
  }
  for (int b = 0; b < b0; b++) mark[b] = 0;
  return c + (cut ? 2 * MBS_FP_COL * (b1 - b0) : 0);
}

// contiguous ranges of about equal cost: from the balanced split, a few rounds of moving the
// boundaries by each part's cost per body; the best split seen
static mbsErr mbs_fpSplit(const mbsModel *m, const mbsFlexAba *a, int P, int *starts) {
  int nb = m->nbody;
  for (int k = 0; k <= P; k++) starts[k] = (int)((long long)nb * k / P);
  if (P < 2 || nb < 2 * P) return MBS_OK;
  unsigned char *mark = calloc((size_t)nb, 1);
  int *st = malloc(sizeof(int) * (size_t)(P + 1));
  double *cost = malloc(sizeof(double) * (size_t)P);
  if (!mark || !st || !cost) {
    free(mark), free(st), free(cost);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  }
  memcpy(st, starts, sizeof(int) * (size_t)(P + 1));
  double best = 1e300;
  for (int it = 0; it < 8; it++) {
    double worst = 0, total = 0;
    for (int r = 0; r < P; r++) {
      cost[r] = mbs_fpPartCost(m, a, st, r, mark);
      worst = fmax(worst, cost[r]), total += cost[r];
    }
    if (worst < best) best = worst, memcpy(starts, st, sizeof(int) * (size_t)(P + 1));
    // new boundaries: every body carries its part's cost per body
    double at = 0;
    int k = 1;
    for (int r = 0, b = 0; r < P && k < P; r++)
      for (b = st[r]; b < st[r + 1] && k < P; b++) {
        at += cost[r] / (st[r + 1] - st[r]);
        if (at >= total * k / P) st[k++] = b + 1;
      }
    for (; k < P; k++) st[k] = nb - (P - k);
    for (k = 1; k < P; k++) // every part keeps a body
      if (st[k] <= st[k - 1]) st[k] = st[k - 1] + 1;
    for (k = P - 1; k >= 1; k--)
      if (st[k] >= st[k + 1]) st[k] = st[k + 1] - 1;
  }
  free(mark), free(st), free(cost);
  return MBS_OK;
}

mbsErr mbs_flexPartCreate(const mbsModel *m, int nparts, int part, mbsFlexPart **pp) {
  *pp = NULL;
  MBS_CHECK(nparts >= 1 && part >= 0 && part < nparts, MBS_ERR_INTERNAL, "flex part %d of %d", part,
            nparts);
  mbsFlexPart *p = calloc(1, sizeof *p);
  if (!p) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  *pp = p;
  p->m = m, p->P = nparts, p->r = part;
  MBS_CALL(mbs_flexAbaCreate(m, &p->a));
  mbsFlexAba *a = p->a;
  int nb = m->nbody;
  size_t nbs = (size_t)nb + 1, sv = a->ov[nb - 1] + (size_t)a->nz[nb - 1];
  p->N = a->N;
  p->starts = malloc(sizeof(int) * (size_t)(nparts + 1));
  p->cutid = malloc(sizeof(int) * nbs), p->top = malloc(sizeof(int) * nbs);
  p->bot = malloc(sizeof(int) * nbs), p->rootof = malloc(sizeof(int) * nbs);
  p->kin = calloc(nbs, 1), p->path = calloc(nbs, 1), p->walk = calloc(nbs, sizeof(int));
  p->sv = sv, p->hb = malloc(sizeof(mbsReal) * sv), p->dpA = malloc(sizeof(mbsReal) * 6 * sv);
  p->dv = malloc(sizeof(mbsReal) * 6 * sv), p->dz = malloc(sizeof(mbsReal) * 6 * sv);
  p->ydd = malloc(sizeof(mbsReal) * ((size_t)p->N + 1));
  if (!p->starts || !p->cutid || !p->top || !p->bot || !p->rootof || !p->kin || !p->path ||
      !p->walk || !p->hb || !p->dpA || !p->dv || !p->dz || !p->ydd)
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (flexible parts)");
  MBS_CALL(mbs_fpSplit(m, a, nparts, p->starts));
  p->b0 = p->starts[part], p->b1 = p->starts[part + 1];
  int b0 = p->b0, b1 = p->b1;
  for (int b = 0, k = 0; b < nb; b++) {
    while (b >= p->starts[k + 1]) k++;
    int q = m->body_parent[b];
    p->cutid[b] = q >= 0 && q < p->starts[k] ? p->ncut++ : -1;
    if (p->cutid[b] >= 0 && b >= b0 && b < b1) p->top[p->ntop++] = b;
    if (p->cutid[b] >= 0 && b >= b1 && q >= b0 && q < b1) p->bot[p->nbot++] = b;
  }
  p->nif = 12 * p->ncut;
  size_t ni = (size_t)p->nif;
  p->buf = malloc(sizeof(mbsReal) * (ni * ni + ni + 1));
  p->x = malloc(sizeof(mbsReal) * (ni + 1)), p->piv = malloc(sizeof(int) * (ni + 1));
  if (!p->buf || !p->x || !p->piv) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  for (int b = b0; b < b1; b++) { // the range, its ancestors, the roots of its trees
    int q = m->body_parent[b];
    p->rootof[b] = q >= b0 ? p->rootof[q] : b;
    p->kin[b] = 1;
    for (; q >= 0 && !p->kin[q]; q = m->body_parent[q]) p->kin[q] = 1;
  }
  for (int i = 0; i < p->nbot; i++) // the spikes' paths
    for (int b = m->body_parent[p->bot[i]]; b >= b0 && !p->path[b]; b = m->body_parent[b])
      p->path[b] = 1;
  return mbs_fplCreate(p);
}

int mbs_flexPartIfSize(const mbsFlexPart *p) {
  return p->nif;
}

mbsFlexAba *mbs_flexPartAba(mbsFlexPart *p) {
  return p->a;
}

void mbs_flexPartInfo(const mbsFlexPart *p, int *b0, int *b1, int *ncut, long *unit) {
  *b0 = p->b0, *b1 = p->b1, *ncut = p->ncut, *unit = p->unit;
}

// pass 1 on the range (and the kinematics of its ancestors and of its bottom cuts' children):
// the bodies' own M and h
static void mbs_fpForward(mbsFlexPart *p, const mbsReal *q, const mbsReal *y, const mbsReal *eta) {
  mbsFlexAba *a = p->a;
  for (int b = 0; b < p->b1; b++) {
    if (!p->kin[b]) continue;
    mbs_faKin(a, b, q, y, eta);
    if (b >= p->b0) mbs_faBody(a, b, y, eta, a->IA + a->oq[b], a->pA + a->ov[b]);
  }
  for (int i = 0; i < p->nbot; i++) mbs_faKin(a, p->bot[i], q, y, eta); // their maps P
}

// the pass 3 responses to the 6 unit changes of a cut at the part root c of the tree: a' there
// (6 x 6, column j at ac + 6 j) and the spikes in dv on the bodies stamped in walk (v: 1);
// dz (column j at dz + j sv) on the tree's path bodies, the 6 columns at each body in turn
static void mbs_fpDown(mbsFlexPart *p, int c, const mbsReal *ac, int v) {
  mbsFlexAba *a = p->a;
  const mbsModel *m = p->m;
  mbsReal ap[6], *ud = a->wk;
  for (int b = c; b < p->b1; b++) {
    if (!p->path[b] || p->rootof[b] != c) continue;
    int on = v && p->walk[b] == p->stamp;
    for (int j = 0; j < 6; j++) {
      size_t o = (size_t)j * p->sv;
      MBS_FLOPS((b == c ? 0 : mbs_flopFaApply(mbs_fpNp(a, b))) +
                mbs_flopFaDown(mbs_faNd(a, b), mbs_fpNu(a, b)));
      if (b == c)
        memcpy(ap, ac + 6 * j, sizeof ap);
      else
        mbs_faApply(a, b, p->dz + o + a->ov[m->body_parent[b]], NULL, ap);
      mbs_faDown(a, b, ap, on ? p->dv + o + a->ov[b] : NULL, ud, p->dz + o + a->ov[b]);
    }
  }
}

// the bottom cuts' rows of tree c gain -(P_k dz_{p_k}) in the columns col..col + 5
static void mbs_fpBottomCols(mbsFlexPart *p, int c, int col) {
  const mbsModel *m = p->m;
  mbsFlexAba *a = p->a;
  int ni = p->nif;
  for (int i = 0; i < p->nbot; i++) {
    int k = p->bot[i], pk = m->body_parent[k];
    if (p->rootof[pk] != c) continue;
    MBS_FLOPS(6 * (mbs_flopFaApply(a->nz[pk]) + 6));
    for (int j = 0; j < 6; j++) {
      mbsReal ak[6];
      mbs_faApply(a, k, p->dz + (size_t)j * p->sv + a->ov[pk], NULL, ak);
      for (int r = 0; r < 6; r++)
        p->buf[(size_t)(12 * p->cutid[k] + 6 + r) * ni + col + j] -= ak[r];
    }
  }
}

mbsErr mbs_flexPartLocal(mbsFlexPart *p, const mbsReal *q, const mbsReal *y, const mbsReal *eta,
                         mbsReal **buf, int *n) {
  const mbsModel *m = p->m;
  mbsFlexAba *a = p->a;
  int b0 = p->b0, b1 = p->b1, ni = p->nif;
  p->evals++;
  *buf = p->buf, *n = ni * ni + ni;
  memset(p->buf, 0, sizeof(mbsReal) * (size_t)(*n));
  mbs_fpForward(p, q, y, eta);
  mbs_fplForce(p); // a loop's unit solve: its forces alone
  for (int b = b0; b < b1; b++)
    memcpy(p->hb + a->ov[b], a->pA + a->ov[b], sizeof(mbsReal) * (size_t)a->nz[b]);
  // pass 2 on the forest (the bottom cuts' forces zero)
  for (int b = b1 - 1; b >= b0; b--) {
    MBS_CALL(mbs_faCondense(a, b, q, y));
    MBS_FLOPS(mbs_flopFaCondenseOut(mbs_fpNu(a, b)));
    if (m->body_parent[b] < b0) continue;
    MBS_FLOPS(mbs_flopFaTransferOnly(mbs_fpNp(a, b), 1));
    mbs_faTransfer(a, b, 1, a->pa + 6 * b);
  }
  // pass 3 with the top cuts' a_g zero: the baseline; d_k = P_k zdot_{p_k}
  for (int b = b0; b < b1; b++) {
    int pb = m->body_parent[b];
    mbsReal ap[6], *ud = a->wk;
    MBS_FLOPS(mbs_flopFaApply(pb >= b0 ? a->nz[pb] : 0) +
              mbs_flopFaDown(mbs_faNd(a, b), mbs_fpNu(a, b)));
    mbs_faApply(a, b, pb >= b0 ? a->zd + a->ov[pb] : NULL, a->homog ? NULL : a->c + 6 * b,
                ap); // a_g = 0
    mbs_faDown(a, b, ap, a->u + a->ov[b], ud, a->zd + a->ov[b]);
    mbs_faOut(a, b, q, y, ud, p->ydd);
  }
  mbsReal *rhs = p->buf + (size_t)ni * ni;
  for (int i = 0; i < p->nbot; i++) {
    int k = p->bot[i], g = p->cutid[k], pk = m->body_parent[k];
    mbsReal ak[6];
    MBS_FLOPS(mbs_flopFaApply(a->nz[pk]) + 6);
    mbs_faApply(a, k, a->zd + a->ov[pk], NULL, ak);
    for (int j = 0; j < 6; j++) {
      rhs[12 * g + 6 + j] = ak[j];
      p->buf[(size_t)(12 * g + 6 + j) * ni + 12 * g + j] += 1;
    }
  }
  // top cuts: f_g - Ia_c a_g = pa_c + the spikes' B f_k (below); their C columns
  for (int i = 0; i < p->ntop; i++) {
    int c = p->top[i], g = p->cutid[c];
    const mbsReal *Ia = a->Ia + 36 * c, *pa = a->pa + 6 * c;
    MBS_FLOPS(42);
    for (int r = 0; r < 6; r++) {
      mbsReal *row = p->buf + (size_t)(12 * g + r) * ni;
      row[12 * g + 6 + r] += 1;
      for (int j = 0; j < 6; j++) row[12 * g + j] -= Ia[6 * r + j];
      rhs[12 * g + r] = pa[r];
    }
    if (!p->path[c]) continue; // no bottom cut below c
    mbsReal e[36];
    for (int j = 0; j < 36; j++) e[j] = j % 7 == 0;
    p->unit += 6;
    mbs_fpDown(p, c, e, 0);
    mbs_fpBottomCols(p, c, 12 * g);
  }
  // bottom cuts' unit forces: up the path to the root (B), down the paths (E); the 6 columns at
  // each body in turn
  for (int i = 0; i < p->nbot; i++) {
    int k = p->bot[i], h = p->cutid[k], pk = m->body_parent[k], npk = a->nz[pk], b = pk;
    const mbsReal *P = a->P + a->oP[k];
    mbsReal pa[36];
    p->stamp++, p->unit += 6;
    for (int j = 0; j < 6; j++) // P_k^T e_j
      for (int r = 0; r < npk; r++) p->dpA[(size_t)j * p->sv + a->ov[pk] + r] = P[j * npk + r];
    for (;;) {
      int pb = m->body_parent[b];
      MBS_FLOPS(6 * (mbs_flopFaBiasUp(mbs_faNd(a, b), mbs_fpNu(a, b), mbs_fpScalar(m, b), 1) +
                     (pb >= b0 ? 12L * a->nz[pb] : 0)));
      for (int j = 0; j < 6; j++) {
        size_t o = (size_t)j * p->sv + a->ov[b];
        mbs_faBiasUp(a, b, q, y, p->dpA + o, 1, p->dv + o, pa + 6 * j);
      }
      p->walk[b] = p->stamp;
      if (pb < b0) break;
      int np = a->nz[pb];
      const mbsReal *Pb = a->P + a->oP[b];
      for (int j = 0; j < 6; j++) {
        mbsReal *dq = p->dpA + (size_t)j * p->sv + a->ov[pb];
        for (int r = 0; r < np; r++) {
          mbsReal t = 0;
          for (int s = 0; s < 6; s++) t += Pb[s * np + r] * pa[6 * j + s];
          dq[r] = t;
        }
      }
      b = pb;
    }
    int g = p->cutid[b], col = 12 * h + 6; // b: the part root
    MBS_FLOPS(g >= 0 ? 36 : 0);
    for (int j = 0; g >= 0 && j < 6; j++)
      for (int r = 0; r < 6; r++) p->buf[(size_t)(12 * g + r) * ni + col + j] -= pa[6 * j + r];
    mbsReal z[36];
    memset(z, 0, sizeof z);
    mbs_fpDown(p, b, z, 1);
    mbs_fpBottomCols(p, b, col);
  }
  return MBS_OK;
}

// LU with partial pivoting of the n x n A (in place) and the solve A x = b (b becomes x);
// -1 when singular
static int mbs_fpLu(int n, mbsReal *A, int *piv, mbsReal *b) {
  for (int k = 0; k < n; k++) {
    int pr = k;
    for (int i = k + 1; i < n; i++)
      if (fabs(A[(size_t)i * n + k]) > fabs(A[(size_t)pr * n + k])) pr = i;
    piv[k] = pr;
    if (!(fabs(A[(size_t)pr * n + k]) > 0)) return -1;
    if (pr != k) {
      for (int j = 0; j < n; j++) {
        mbsReal t = A[(size_t)k * n + j];
        A[(size_t)k * n + j] = A[(size_t)pr * n + j], A[(size_t)pr * n + j] = t;
      }
      mbsReal t = b[k];
      b[k] = b[pr], b[pr] = t;
    }
    for (int i = k + 1; i < n; i++) {
      mbsReal l = A[(size_t)i * n + k] / A[(size_t)k * n + k];
      if (l == 0) continue;
      for (int j = k + 1; j < n; j++) A[(size_t)i * n + j] -= l * A[(size_t)k * n + j];
      b[i] -= l * b[k];
    }
  }
  for (int i = n - 1; i >= 0; i--) {
    mbsReal t = b[i];
    for (int j = i + 1; j < n; j++) t -= A[(size_t)i * n + j] * b[j];
    b[i] = t / A[(size_t)i * n + i];
  }
  return 0;
}

mbsErr mbs_flexPartFinish(mbsFlexPart *p, const mbsReal *q, const mbsReal *y, mbsReal *ydd) {
  const mbsModel *m = p->m;
  mbsFlexAba *a = p->a;
  int b0 = p->b0, b1 = p->b1, ni = p->nif;
  if (ni) {
    memcpy(p->x, p->buf + (size_t)ni * ni, sizeof(mbsReal) * (size_t)ni);
    MBS_FLOPS(mbs_flopFpLu(ni));
    if (mbs_fpLu(ni, p->buf, p->piv, p->x))
      return mbs_errSet(MBS_ERR_NUMERIC, "flexible parts: the interface system is singular");
  }
  if (p->ntop + p->nbot == 0) { // no cut here: the baseline is the answer
    for (int b = b0; b < b1; b++) {
      int nd = m->body_dofnum[b], d0 = m->body_dofadr[b];
      memcpy(ydd + d0, p->ydd + d0, sizeof(mbsReal) * (size_t)nd);
      if (a->col[b] >= 0)
        memcpy(ydd + a->col[b], p->ydd + a->col[b], sizeof(mbsReal) * (size_t)(a->nz[b] - 6));
    }
    return MBS_OK;
  }
  // pass 2's bias with the bottom cuts' forces f_k applied to their parents
  for (int b = b0; b < b1; b++)
    memcpy(a->pA + a->ov[b], p->hb + a->ov[b], sizeof(mbsReal) * (size_t)a->nz[b]);
  for (int i = 0; i < p->nbot; i++) {
    MBS_FLOPS(mbs_flopFaTransferOnly(mbs_fpNp(a, p->bot[i]), 0));
    mbs_faTransfer(a, p->bot[i], 0, p->x + 12 * p->cutid[p->bot[i]] + 6);
  }
  for (int b = b1 - 1; b >= b0; b--) {
    MBS_FLOPS(mbs_flopFaBiasUp(mbs_faNd(a, b), mbs_fpNu(a, b), mbs_fpScalar(m, b), 0) +
              (m->body_parent[b] >= b0 ? mbs_flopFaTransferOnly(mbs_fpNp(a, b), 0) : 0));
    mbs_faBiasUp(a, b, q, y, a->pA + a->ov[b], a->homog, a->u + a->ov[b], a->pa + 6 * b);
    if (m->body_parent[b] >= b0) mbs_faTransfer(a, b, 0, a->pa + 6 * b);
  }
  // pass 3 from the top cuts' a_g
  for (int b = b0; b < b1; b++) {
    int pb = m->body_parent[b];
    mbsReal ap[6], *ud = a->wk;
    MBS_FLOPS((pb >= b0 ? mbs_flopFaApply(a->nz[pb]) : 6) +
              mbs_flopFaDown(mbs_faNd(a, b), mbs_fpNu(a, b)));
    if (pb >= b0) {
      mbs_faApply(a, b, a->zd + a->ov[pb], a->homog ? NULL : a->c + 6 * b, ap);
    } else {
      const mbsReal *ag = pb >= 0 ? p->x + 12 * p->cutid[b] : NULL;
      for (int i = 0; i < 6; i++) ap[i] = (a->homog ? 0 : a->c[6 * b + i]) + (ag ? ag[i] : 0);
    }
    mbs_faDown(a, b, ap, a->u + a->ov[b], ud, a->zd + a->ov[b]);
    mbs_faOut(a, b, q, y, ud, ydd);
  }
  return MBS_OK;
}

int mbs_flexPartCount(const mbsFlexPart *p, int r) {
  int n = 0;
  for (int b = p->starts[r]; b < p->starts[r + 1]; b++) n += p->m->body_dofnum[b] + p->a->nz[b] - 6;
  return n;
}

void mbs_flexPartPack(const mbsFlexPart *p, int r, const mbsReal *ydd, mbsReal *buf) {
  const mbsModel *m = p->m;
  for (int b = p->starts[r], at = 0; b < p->starts[r + 1]; b++) {
    int d0 = m->body_dofadr[b], nd = m->body_dofnum[b], c = p->a->col[b], mm = p->a->nz[b] - 6;
    for (int k = 0; k < nd; k++) buf[at++] = ydd[d0 + k];
    for (int k = 0; k < mm; k++) buf[at++] = ydd[c + k];
  }
}

void mbs_flexPartUnpack(const mbsFlexPart *p, int r, const mbsReal *buf, mbsReal *ydd) {
  const mbsModel *m = p->m;
  for (int b = p->starts[r], at = 0; b < p->starts[r + 1]; b++) {
    int d0 = m->body_dofadr[b], nd = m->body_dofnum[b], c = p->a->col[b], mm = p->a->nz[b] - 6;
    for (int k = 0; k < nd; k++) ydd[d0 + k] = buf[at++];
    for (int k = 0; k < mm; k++) ydd[c + k] = buf[at++];
  }
}

mbsErr mbs_flexPartEnergy(mbsFlexPart *p, const mbsReal *q, const mbsReal *y, const mbsReal *eta,
                          mbsReal *kin, mbsReal *pot) {
  const mbsModel *m = p->m;
  mbsFlexAba *a = p->a;
  mbs_fpForward(p, q, y, eta);
  mbsReal T = 0, V = 0;
  for (int b = p->b0; b < p->b1; b++) {
    int n = a->nz[b], k = a->flexof[b];
    const mbsReal *M = a->IA + a->oq[b];
    mbsReal *z = a->wk + 4 * (size_t)n;
    for (int i = 0; i < 3; i++) z[i] = a->om[3 * b + i], z[3 + i] = a->vo[3 * b + i];
    for (int j = 6; j < n; j++) z[j] = y[a->col[b] + j - 6];
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) T += 0.5 * z[i] * M[(size_t)i * n + j] * z[j];
    mbs_foBodyPotential(m, b, k < 0 ? NULL : a->f + k, q, eta, a->Rw + 9 * b, a->pw + 3 * b, &V);
  }
  *kin = T, *pot = V;
  return MBS_OK;
}
