/// \file rankreport.c
/// Per-rank report pieces (timers over ranks, decomposition, affinity). Communication: one
/// allreduce triple for the timer statistics (mbsp_stats), two gathers to rank 0.
#include <stdlib.h>
#include <string.h>
#include "rankreport.h"

mbsErr mbsp_rankReportCollect(mbspComm *comm, mbspEngine *eng, const mbsWork *w,
                              mbspRankReport *r) {
  int rank = mbsp_rank(comm), size = mbsp_size(comm);
  memset(r, 0, sizeof *r);
  r->ranks = size;
  mbsErr e = MBS_OK;
  if (rank == 0) {
    r->decomp = calloc((size_t)size * 6, sizeof *r->decomp);
    r->aff = calloc((size_t)size, sizeof *r->aff);
    if (!r->decomp || !r->aff) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (report)");
  }
  MBS_CALL(mbsp_agreeErr(comm, e));
  double tot[MBS_TIMER_COUNT];
  for (int t = 0; t < MBS_TIMER_COUNT; t++) {
    tot[t] = w ? w->timer[t].total : 0;
    r->count[t] = w ? (double)w->timer[t].count : 0;
  }
  MBS_CALL(mbsp_stats(comm, tot, MBS_TIMER_COUNT, r->stats));
  double mine[6] = {0, 0, 0, 0, 0, 0};
  r->prefix_scan = -1;
  if (eng) {
    mbspDecompInfo di;
    mbsp_engineDecomp(eng, &di);
    r->prefix_scan = di.prefix_scan;
    mine[0] = di.g0, mine[1] = di.g1, mine[2] = di.nnbr, mine[3] = di.cut_up;
    mine[4] = di.cut_down, mine[5] = di.weight;
  }
  MBS_CALL(mbsp_gather(comm, mine, 6, rank == 0 ? r->decomp : mine));
  if (!eng && rank == 0) {
    free(r->decomp);
    r->decomp = NULL;
  }
  mbspAffinity me;
  e = mbsp_affinityQuery(&me);
  MBS_CALL(mbsp_agreeErr(comm, e));
  MBS_CALL(mbsp_gatherBytes(comm, &me, (int)sizeof me, rank == 0 ? (void *)r->aff : (void *)&me));
  return MBS_OK;
}

void mbsp_rankReportJson(const mbspRankReport *r, mbsJson *j) {
  mbs_jsonBeginObject(j, "timers");
  for (int t = 0; t < MBS_TIMER_COUNT; t++) {
    if (r->count[t] <= 0 && r->stats[5 * t + 2] <= 0) continue;
    const double *st = r->stats + 5 * t;
    mbs_jsonBeginObject(j, mbs_timerName(t));
    mbs_jsonNumber(j, "min", st[0]);
    mbs_jsonNumber(j, "avg", st[1]);
    mbs_jsonNumber(j, "max", st[2]);
    mbs_jsonInt(j, "min_rank", (long)st[3]);
    mbs_jsonInt(j, "max_rank", (long)st[4]);
    mbs_jsonInt(j, "count", (long)r->count[t]);
    mbs_jsonEndObject(j);
  }
  mbs_jsonEndObject(j);
  if (r->decomp) {
    mbs_jsonString(j, "velocity_prefix",
                   r->ranks == 1    ? "none (one rank)"
                   : r->prefix_scan ? "scan"
                                    : "pipeline");
    mbs_jsonBeginArray(j, "decomposition");
    for (int k = 0; k < r->ranks; k++) {
      const double *d = r->decomp + 6 * k;
      mbs_jsonBeginObject(j, NULL);
      mbs_jsonInt(j, "rank", k);
      mbs_jsonInt(j, "first_body", (long)d[0]);
      mbs_jsonInt(j, "bodies", (long)(d[1] - d[0]));
      mbs_jsonInt(j, "neighbours", (long)d[2]);
      mbs_jsonInt(j, "cut_edges_up", (long)d[3]);
      mbs_jsonInt(j, "cut_edges_down", (long)d[4]);
      mbs_jsonNumber(j, "weight", d[5]);
      mbs_jsonEndObject(j);
    }
    mbs_jsonEndArray(j);
  }
  if (r->aff) {
    mbs_jsonBeginArray(j, "affinity");
    for (int k = 0; k < r->ranks; k++) {
      const mbspAffinity *f = r->aff + k;
      mbs_jsonBeginObject(j, NULL);
      mbs_jsonInt(j, "rank", k);
      mbs_jsonString(j, "host", f->host);
      mbs_jsonString(j, "cpuset", f->cpuset);
      mbs_jsonInt(j, "numa_node", f->numa_node);
      mbs_jsonInt(j, "threads", f->nthreads);
      mbs_jsonString(j, "threads_source", f->threads_source);
      mbs_jsonInt(j, "cores", f->cores);
      mbs_jsonInt(j, "ranks_sharing", f->ranks_sharing);
      mbs_jsonString(j, "thread_cpus", f->thread_cpus);
      mbs_jsonString(j, "binding", f->binding);
      mbs_jsonEndObject(j);
    }
    mbs_jsonEndArray(j);
  }
}

void mbsp_rankReportFree(mbspRankReport *r) {
  free(r->decomp);
  free(r->aff);
  r->decomp = NULL;
  r->aff = NULL;
}
