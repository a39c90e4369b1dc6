/// \file rankreport.h
/// Per-rank facts for the JSON reports: phase timers reduced to min/avg/max over the ranks (with
/// the ranks of min and max), the decomposition of each rank, and each rank's placement.
#ifndef MBS_RANKREPORT_H
#define MBS_RANKREPORT_H
#include "affinity.h"
#include "mbspar/mbs_engine.h"
#include "mbspar/mbs_report.h"

typedef struct {
  int ranks;
  double stats[5 * MBS_TIMER_COUNT]; ///< min, avg, max, rank of min, rank of max per timer
  double count[MBS_TIMER_COUNT];     ///< calls on rank 0
  double *decomp;    ///< (ranks x 6) first body, end, neighbours, cut up/down, weight
  mbspAffinity *aff; ///< (ranks) placement
  int prefix_scan;   ///< velocity prefix: 1 MPI_Exscan, 0 pipeline, -1 none
} mbspRankReport;

/// Gather the report to rank 0 (engine may be NULL: no decomposition). Collective.
mbsErr mbsp_rankReportCollect(mbspComm *comm, mbspEngine *eng, const mbsWork *w, mbspRankReport *r);
/// Write "timers", "decomposition" and "affinity" members into the open object (rank 0). Local.
void mbsp_rankReportJson(const mbspRankReport *r, mbsJson *j);
/// Free the gathered arrays. Local.
void mbsp_rankReportFree(mbspRankReport *r);
#endif
