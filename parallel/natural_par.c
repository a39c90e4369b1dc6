/// \file natural_par.c
/// The natural-coordinate formulation over the ranks (docs/natural.md 13): the MPI half of
/// src/natural_part.c. Every rank holds the whole model and eliminates the bodies of its balanced
/// contiguous range (mbs_naturalPartSplit) as a forest; the interface system (the rank-cut
/// joints' and the loops' cut joints' rows) is the sum of the ranks' contributions.
#include <stdlib.h>
#include <string.h>
#include "natural_par.h"
#include "mbspar/mbs_solvertype.h"

int mbsp_naturalParActive(mbspComm *comm, const mbsModel *m) {
  (void)comm; // by parts at every rank count (one part at one rank)
  return !m->sub && mbs_solverCaps(m->opt.solver)->natural;
}

mbsErr mbsp_naturalForward(mbspComm *comm, const mbsModel *m, mbsState *s, mbsWork *w) {
  int P = mbsp_size(comm), r = mbsp_rank(comm);
  mbsNaturalWork *nw = NULL;
  mbsErr e = mbs_naturalWorkOf(m, w, &nw);
  mbsNaturalPartInfo pi;
  if (!e) mbs_naturalPartGetInfo(nw, &pi);
  if (!e && (pi.nparts != P || pi.part != r)) e = mbs_naturalPartSet(m, nw, P, r, NULL);
  MBS_CALL(mbsp_agreeErr(comm, e));
  double *buf = NULL;
  int n = 0;
  e = mbs_naturalPartLocal(m, s, w, nw, &buf, &n);
  MBS_CALL(mbsp_agreeErr(comm, e));
  if (n) { // the sum, bitwise the same on every rank (rank 0's broadcast)
    MBS_CALL(mbsp_allreduceSum(comm, buf, n));
    MBS_CALL(mbsp_bcastBytes(comm, buf, sizeof(double) * (size_t)n, 0));
  }
  const double *mine = NULL;
  double *full = NULL;
  int nmine = 0;
  e = mbs_naturalPartFinish(m, nw, &mine, &nmine, &full);
  MBS_CALL(mbsp_agreeErr(comm, e));
  // p̈ to rank 0 (the ranges in rank order: the global body order)
  int *cnt = calloc((size_t)P, sizeof(int)), *dsp = calloc((size_t)P, sizeof(int));
  e = cnt && dsp ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  if (!e) {
    mbs_naturalPartGetInfo(nw, &pi);
    for (int k = 0, at = 0; k < P; k++)
      cnt[k] = 12 * (pi.starts[k + 1] - pi.starts[k]), dsp[k] = at, at += cnt[k];
  }
  e = mbsp_agreeErr(comm, e);
  double dummy = 0;
  if (!e) e = mbsp_gatherv(comm, nmine ? mine : &dummy, nmine, full, cnt, dsp);
  free(cnt), free(dsp);
  MBS_CALL(e);
  // rank 0: q̈ from p̈, the multipliers and wrenches (the whole model's O(n) recovery)
  if (r == 0) {
    mbs_naturalPartGiven(nw);
    e = mbs_forward(m, s, w);
  }
  return mbsp_agreeErr(comm, e);
}

mbsErr mbsp_naturalRunCreate(mbspComm *comm, const mbsModel *m, mbspNaturalRun **out) {
  int P = mbsp_size(comm);
  mbspNaturalRun *r = calloc(1, sizeof *r);
  if (r) r->cnt = calloc((size_t)P, sizeof(int)), r->dsp = calloc((size_t)P, sizeof(int));
  if (!r || !r->cnt || !r->dsp) {
    mbsp_naturalRunDestroy(&r);
    *out = NULL;
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  }
  r->comm = comm, r->m = m;
  int *st = malloc(sizeof(int) * (size_t)(P + 1)); // the split's ranges (the workspaces' own)
  mbsErr e = st ? mbs_naturalPartSplit(m, P, st) : mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  for (int k = 0, at = 0; !e && k < P; k++)
    r->cnt[k] = 12 * (st[k + 1] - st[k]), r->dsp[k] = at, at += r->cnt[k];
  free(st);
  if (e) mbsp_naturalRunDestroy(&r);
  *out = r;
  return e;
}

void mbsp_naturalRunDestroy(mbspNaturalRun **pr) {
  if (!*pr) return;
  free((*pr)->cnt), free((*pr)->dsp), free(*pr);
  *pr = NULL;
}

// the part's contributions by local (the evaluation's or the correction's), the sum, this part's
// result and the whole of it on every rank into out (12 nb)
static mbsErr mbsp_natRunParts(mbspNaturalRun *R, mbsNaturalWork *nw, const double *v,
                               double *out) {
  mbspComm *comm = R->comm;
  const mbsModel *m = R->m;
  int P = mbsp_size(comm), r = mbsp_rank(comm);
  mbsNaturalPartInfo pi;
  mbs_naturalPartGetInfo(nw, &pi);
  mbsErr e = MBS_OK;
  if (pi.nparts != P || pi.part != r) { // (not made before: this rank's part of the split now)
    e = mbs_naturalPartSet(m, nw, P, r, NULL);
    if (!e) mbs_naturalPartGetInfo(nw, &pi);
  }
  MBS_CALL(mbsp_agreeErr(comm, e));
  double *buf = NULL;
  int n = 0;
  MBS_CALL(mbsp_agreeErr(comm, v ? mbs_naturalPartCorrectLocal(m, nw, v, &buf, &n)
                                 : mbs_naturalPartLocalAt(m, nw, &buf, &n)));
  if (n) {
    MBS_CALL(mbsp_allreduceSum(comm, buf, n));
    MBS_CALL(mbsp_bcastBytes(comm, buf, sizeof(double) * (size_t)n, 0));
  }
  const double *mine = NULL;
  double *full = NULL, dummy = 0;
  int nmine = 0;
  MBS_CALL(mbsp_agreeErr(comm, mbs_naturalPartFinish(m, nw, &mine, &nmine, &full)));
  MBS_CALL(mbsp_gatherv(comm, nmine ? mine : &dummy, nmine, full, R->cnt, R->dsp));
  MBS_CALL(mbsp_bcastBytes(comm, full, sizeof(double) * 12 * (size_t)m->nbody, 0));
  memcpy(out, full, sizeof(double) * 12 * (size_t)m->nbody);
  if (v)
    R->corrections++;
  else
    R->solves++;
  R->factored += pi.b1 - pi.b0;
  return MBS_OK;
}

mbsErr mbsp_naturalRunSolve(void *ctx, mbsNaturalWork *nw, double *pdd) {
  return mbsp_natRunParts(ctx, nw, NULL, pdd);
}

mbsErr mbsp_naturalRunCorrect(void *ctx, mbsNaturalWork *nw, const double *v, double *dx) {
  return mbsp_natRunParts(ctx, nw, v, dx);
}

mbsErr mbsp_naturalParReport(mbspComm *comm, mbsWork *w, const mbsModel *m,
                             mbspNaturalParReport *r) {
  memset(r, 0, sizeof *r);
  mbsNaturalPartInfo pi;
  memset(&pi, 0, sizeof pi);
  if (w && w->ext && mbs_solverCaps(m->opt.solver)->natural) {
    mbsNaturalWork *nw = NULL;
    if (!mbs_naturalWorkOf(m, w, &nw)) mbs_naturalPartGetInfo(nw, &pi);
  }
  double any = pi.nparts;
  MBS_CALL(mbsp_allreduceMax(comm, &any, 1));
  if (any == 0) return MBS_OK;
  int P = mbsp_size(comm), rank0 = mbsp_rank(comm) == 0;
  double mine[5] = {pi.b0, pi.b1, (double)pi.factored, (double)pi.unit_solves,
                    (double)pi.root_solves};
  double *all = rank0 ? calloc(5 * (size_t)P, sizeof(double)) : NULL;
  long *per = rank0 ? calloc(5 * (size_t)P, sizeof(long)) : NULL;
  mbsErr e = !rank0 || (all && per) ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  e = mbsp_agreeErr(comm, e);
  if (!e) e = mbsp_gather(comm, mine, 5, all);
  if (!e && rank0) {
    for (int k = 0; k < 5 * P; k++) per[k] = (long)all[k];
    r->nparts = P, r->nif = pi.nif, r->nif_cut = pi.nif_cut, r->rank = pi.rank, r->per = per;
    per = NULL;
  }
  free(all), free(per);
  return e;
}

void mbsp_naturalParReportFree(mbspNaturalParReport *r) {
  free(r->per);
  r->per = NULL;
}
