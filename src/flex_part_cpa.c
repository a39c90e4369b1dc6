/// \file flex_part_cpa.c
/// The critical-path graph of the distributed elimination of flexible models (src/flex_part.c,
/// docs/flexible.md 11; `mbspar cpa --procs P`, docs/cpa.md "Flexible models"): the parts' split
/// is flex_part's own (mbs_flexPartCreate), every node is bound to its part's rank. Per rank:
/// pass 1 (flex.kin of its range, of the range's ancestors and of its bottom cuts' children:
/// replicated), the range's flex.body, pass 2 on the range (flex.condense, flex.transfer), the
/// baseline pass 3 (flex.acc), the interface rows (flex.rows: top cuts' rows, bottom cuts' right
/// sides and the unit responses' columns), the unit responses (flex.spike: per cut and body on
/// its path, the 6 columns together, up with the bias-only pass 2, down with pass 3); then the
/// allreduce and broadcast of the (12 c)^2 + 12 c interface doubles (msg.allreduce), the LU on
/// every rank (flex.solve), the finish (flex.finish: the bias pass with the bottom cuts' forces;
/// flex.acc: pass 3 from the top cuts' accelerations) and the gather of the accelerations to rank
/// 0 (one message per rank). Node costs are the counts of flex_part.c's MBS_FLOPS call sites
/// (flex_flops.h), so T1 equals the counted flops of all parts' mbs_flexPartLocal and
/// mbs_flexPartFinish (test_flex_cpa).
#include <stdlib.h>
#include <string.h>
#include "cpa_private.h"
#include "flex_flops.h"
#include "flex_private.h"

// the per-part graph builder's scratch (nbody each)
typedef struct {
  int *kin, *IAw, *cond, *acc, *dn, *fw;
} mbsFpcN;

// the pass-3 walk of a unit response over the path bodies of the tree of part root c (after
// node `first` at c), and the bottom cuts' columns of that tree (each then feeds `rows`)
static void mbs_fpcDown(mbsCpaB *B, const mbsFlexPart *p, mbsFpcN *N, int c, int first, int r,
                        int rows) {
  const mbsModel *m = p->m;
  const mbsFlexAba *a = p->a;
  for (int b = c; b < p->b1; b++) {
    if (!p->path[b] || p->rootof[b] != c) continue;
    int q = m->body_parent[b], nd = mbs_faNd(a, b), nu = nd + a->nz[b] - 6;
    long long f = 6 * ((b == c ? 0 : mbs_flopFaApply(a->nz[q])) + mbs_flopFaDown(nd, nu));
    N->dn[b] = mbs_cpaNodeOn(B, MBS_CPA_FLEX_SPIKE, b, f, -1, -1, r);
    mbs_cpaDep(B, N->cond[b], N->dn[b]);
    mbs_cpaDep(B, b == c ? first : N->dn[q], N->dn[b]);
  }
  for (int i = 0; i < p->nbot; i++) {
    int k = p->bot[i], pk = m->body_parent[k];
    if (p->rootof[pk] != c) continue;
    int v = mbs_cpaNodeOn(B, MBS_CPA_FLEX_ROWS, k, 6 * (mbs_flopFaApply(a->nz[pk]) + 6), -1, -1, r);
    mbs_cpaDep(B, N->dn[pk], v);
    mbs_cpaDep(B, N->kin[k], v);
    mbs_cpaDep(B, v, rows);
  }
}

// part r's mbs_flexPartLocal; returns its rows' sync node
static int mbs_fpcLocal(mbsCpaB *B, const mbsFlexPart *p, mbsFpcN *N, const long long *kc,
                        const long long *body) {
  const mbsModel *m = p->m;
  const mbsFlexAba *a = p->a;
  int r = p->r, b0 = p->b0, b1 = p->b1;
  B->cls = MBS_CPA_CLASS_KIN;
  for (int b = 0; b < b1; b++) { // pass 1: the range and its ancestors, then the cut children
    if (!p->kin[b]) continue;
    N->kin[b] = mbs_cpaNodeOn(B, MBS_CPA_FLEX_KIN, b, kc[b], -1, -1, r);
    if (m->body_parent[b] >= 0) mbs_cpaDep(B, N->kin[m->body_parent[b]], N->kin[b]);
  }
  for (int i = 0; i < p->nbot; i++) {
    int k = p->bot[i];
    N->kin[k] = mbs_cpaNodeOn(B, MBS_CPA_FLEX_KIN, k, kc[k], -1, -1, r);
    mbs_cpaDep(B, N->kin[m->body_parent[k]], N->kin[k]);
  }
  B->cls = MBS_CPA_CLASS_DYN;
  for (int b = b0; b < b1; b++) {
    N->IAw[b] = mbs_cpaNodeOn(B, MBS_CPA_FLEX_BODY, b, body[b], -1, -1, r);
    mbs_cpaDep(B, N->kin[b], N->IAw[b]);
  }
  for (int b = b1 - 1; b >= b0; b--) { // pass 2 on the forest
    int q = m->body_parent[b], nd = mbs_faNd(a, b), nu = nd + a->nz[b] - 6;
    int scalar = mbs_jntQuatAdr(m->body_jnttype[b]) < 0;
    long long f = mbs_flopFaCondense(a->nz[b], nd, nu, scalar) + mbs_flopFaCondenseOut(nu);
    N->cond[b] = mbs_cpaNodeOn(B, MBS_CPA_FLEX_CONDENSE, b, f, -1, -1, r);
    mbs_cpaDep(B, N->IAw[b], N->cond[b]);
    mbs_cpaDep(B, N->kin[b], N->cond[b]);
    if (q < b0) continue;
    int t =
        mbs_cpaNodeOn(B, MBS_CPA_FLEX_TRANSFER, b, mbs_flopFaTransferOnly(a->nz[q], 1), -1, -1, r);
    mbs_cpaDep(B, N->cond[b], t);
    mbs_cpaDep(B, N->IAw[q], t);
    N->IAw[q] = t;
  }
  for (int b = b0; b < b1; b++) { // the baseline pass 3
    int q = m->body_parent[b], nd = mbs_faNd(a, b), nu = nd + a->nz[b] - 6;
    long long f = mbs_flopFaApply(q >= b0 ? a->nz[q] : 0) + mbs_flopFaDown(nd, nu);
    N->acc[b] = mbs_cpaNodeOn(B, MBS_CPA_FLEX_ACC, b, f, -1, -1, r);
    mbs_cpaDep(B, N->cond[b], N->acc[b]);
    if (q >= b0) mbs_cpaDep(B, N->acc[q], N->acc[b]);
  }
  int rows = mbs_cpaNodeOn(B, MBS_CPA_FLEX_ROWS, -1, 0, -1, -1, r);
  for (int i = 0; i < p->nbot; i++) { // the bottom cuts' right sides
    int k = p->bot[i], pk = m->body_parent[k];
    int v = mbs_cpaNodeOn(B, MBS_CPA_FLEX_ROWS, k, mbs_flopFaApply(a->nz[pk]) + 6, -1, -1, r);
    mbs_cpaDep(B, N->acc[pk], v);
    mbs_cpaDep(B, N->kin[k], v);
    mbs_cpaDep(B, v, rows);
  }
  for (int i = 0; i < p->ntop; i++) { // the top cuts' rows and their unit accelerations
    int c = p->top[i];
    int v = mbs_cpaNodeOn(B, MBS_CPA_FLEX_ROWS, c, 42, -1, -1, r);
    mbs_cpaDep(B, N->cond[c], v);
    mbs_cpaDep(B, v, rows);
    if (p->path[c]) mbs_fpcDown(B, p, N, c, N->cond[c], r, rows);
  }
  for (int i = 0; i < p->nbot; i++) { // the bottom cuts' unit forces: up, then down
    int b = m->body_parent[p->bot[i]], prev = N->kin[p->bot[i]];
    for (;;) {
      int q = m->body_parent[b], nd = mbs_faNd(a, b), nu = nd + a->nz[b] - 6;
      int scalar = mbs_jntQuatAdr(m->body_jnttype[b]) < 0;
      long long f = 6 * (mbs_flopFaBiasUp(nd, nu, scalar, 1) + (q >= b0 ? 12LL * a->nz[q] : 0));
      int u = mbs_cpaNodeOn(B, MBS_CPA_FLEX_SPIKE, b, f, -1, -1, r);
      mbs_cpaDep(B, N->cond[b], u);
      mbs_cpaDep(B, prev, u);
      prev = u;
      if (q < b0) break;
      b = q;
    }
    int v = mbs_cpaNodeOn(B, MBS_CPA_FLEX_ROWS, b, p->cutid[b] >= 0 ? 36 : 0, -1, -1, r);
    mbs_cpaDep(B, prev, v);
    mbs_cpaDep(B, v, rows);
    mbs_fpcDown(B, p, N, b, prev, r, rows);
  }
  return rows;
}

// part r's mbs_flexPartFinish after the interface solve `lu`; returns its end node
static int mbs_fpcFinish(mbsCpaB *B, const mbsFlexPart *p, mbsFpcN *N, int lu) {
  const mbsModel *m = p->m;
  const mbsFlexAba *a = p->a;
  int r = p->r, b0 = p->b0, b1 = p->b1;
  int end = mbs_cpaNodeOn(B, MBS_CPA_FLEX_ROWS, -1, 0, -1, -1, r);
  if (lu >= 0) mbs_cpaDep(B, lu, end);
  if (p->ntop + p->nbot == 0) { // the baseline is the answer
    for (int b = b0; b < b1; b++) mbs_cpaDep(B, N->acc[b], end);
    return end;
  }
  for (int b = b0; b < b1; b++) N->fw[b] = -1;
  for (int i = 0; i < p->nbot; i++) { // the bottom cuts' forces into their parents' bias
    int pk = m->body_parent[p->bot[i]];
    int v =
        mbs_cpaNodeOn(B, MBS_CPA_FLEX_FINISH, pk, mbs_flopFaTransferOnly(a->nz[pk], 0), -1, -1, r);
    mbs_cpaDep(B, lu, v);
    if (N->fw[pk] >= 0) mbs_cpaDep(B, N->fw[pk], v);
    N->fw[pk] = v;
  }
  for (int b = b1 - 1; b >= b0; b--) { // the bias pass 2
    int q = m->body_parent[b], nd = mbs_faNd(a, b), nu = nd + a->nz[b] - 6;
    int scalar = mbs_jntQuatAdr(m->body_jnttype[b]) < 0;
    long long f =
        mbs_flopFaBiasUp(nd, nu, scalar, 0) + (q >= b0 ? mbs_flopFaTransferOnly(a->nz[q], 0) : 0);
    int v = mbs_cpaNodeOn(B, MBS_CPA_FLEX_FINISH, b, f, -1, -1, r);
    mbs_cpaDep(B, lu, v);
    mbs_cpaDep(B, N->cond[b], v);
    if (N->fw[b] >= 0) mbs_cpaDep(B, N->fw[b], v);
    N->fw[b] = v;
    if (q < b0) continue;
    if (N->fw[q] >= 0) mbs_cpaDep(B, N->fw[q], v);
    N->fw[q] = v;
  }
  for (int b = b0; b < b1; b++) { // pass 3 from the top cuts' accelerations
    int q = m->body_parent[b], nd = mbs_faNd(a, b), nu = nd + a->nz[b] - 6;
    long long f = (q >= b0 ? mbs_flopFaApply(a->nz[q]) : 6) + mbs_flopFaDown(nd, nu);
    N->acc[b] = mbs_cpaNodeOn(B, MBS_CPA_FLEX_ACC, b, f, -1, -1, r);
    mbs_cpaDep(B, N->fw[b], N->acc[b]);
    mbs_cpaDep(B, q >= b0 ? N->acc[q] : lu, N->acc[b]);
    mbs_cpaDep(B, N->acc[b], end);
  }
  return end;
}

mbsErr mbs_cpaFlexPartGraph(mbsCpaB *B, const int *nz, const long long *kin,
                            const long long *body) {
  (void)nz;
  const mbsModel *m = B->m;
  int P = B->o->ranks;
  size_t nb = (size_t)m->nbody + 1;
  mbsFlexPart **fp = calloc((size_t)P, sizeof *fp);
  mbsFpcN *N = calloc((size_t)P, sizeof *N);
  int *rows = malloc(sizeof(int) * (size_t)P), *buf = malloc(6 * nb * (size_t)P * sizeof(int));
  mbsErr e = fp && N && rows && buf ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  for (int r = 0; !e && r < P; r++) {
    int *o = buf + 6 * nb * (size_t)r;
    N[r].kin = o, N[r].IAw = o + nb, N[r].cond = o + 2 * nb, N[r].acc = o + 3 * nb;
    N[r].dn = o + 4 * nb, N[r].fw = o + 5 * nb;
    e = mbs_flexPartCreate(m, P, r, &fp[r]);
  }
  for (int r = 0; !e && r < P; r++) // the split is flex_part's
    for (int b = fp[r]->b0; b < fp[r]->b1; b++) B->owner[b] = r;
  int ni = e ? 0 : fp[0]->nif, red = -1;
  for (int r = 0; !e && r < P; r++) rows[r] = mbs_fpcLocal(B, fp[r], &N[r], kin, body);
  if (!e && ni && P > 1) { // the interface system's sum and broadcast
    int sync = mbs_cpaNode(B, MBS_CPA_FLEX_ROWS, -1, 0, -1, -1);
    for (int r = 0; r < P; r++) mbs_cpaDep(B, rows[r], sync);
    red = mbs_cpaLoopReduce(B, (double)ni * ni + ni, 1, sync);
  }
  int gat = e ? -1 : mbs_cpaNodeOn(B, MBS_CPA_FLEX_ROWS, -1, 0, -1, -1, 0);
  for (int r = 0; !e && r < P; r++) {
    B->cls = MBS_CPA_CLASS_SOLVE;
    int lu = ni ? mbs_cpaNodeOn(B, MBS_CPA_FLEX_SOLVE, -1, mbs_flopFpLu(ni), -1, -1, r) : -1;
    if (lu >= 0) mbs_cpaDep(B, red >= 0 ? red : rows[r], lu);
    B->cls = MBS_CPA_CLASS_FINISH;
    int end = mbs_fpcFinish(B, fp[r], &N[r], lu);
    if (r > 0) // the gather of its accelerations to rank 0
      end = mbs_cpaMsg(B, 8.0 * mbs_flexPartCount(fp[r], r), end);
    mbs_cpaDep(B, end, gat);
  }
  B->cls = MBS_CPA_CLASS_DYN;
  for (int r = 0; fp && r < P; r++) mbs_flexPartDestroy(&fp[r]);
  free(fp), free(N), free(rows), free(buf);
  return e;
}
