/// \file natural_par.h
/// The natural-coordinate formulation distributed over the ranks (docs/natural.md 13): each
/// rank eliminates its bodies (src/natural_part.c), one allreduce sums the interface system,
/// every rank factors it alike and corrects its p̈, rank 0 gathers p̈ and reports.
#ifndef MBSP_NATURAL_PAR_H
#define MBSP_NATURAL_PAR_H
#include "mbspar/mbs_natural.h"
#include "mbspar/mbs_parallel.h"

/// What the ranks did, gathered to rank 0 (mbsp_naturalParReport).
typedef struct {
  int nparts;       ///< ranks (0: the solve was not distributed)
  int nif, nif_cut; ///< interface rows, of them the rank-cut joints'
  int rank;         ///< rank of the interface matrix (nif - rank rows dropped)
  long *per;        ///< (nparts x 5) first body, end, bodies factored, unit solves, root solves
} mbspNaturalParReport;

/// 1 when \p m under model.formulation = natural evaluates by parts over \p comm's ranks (a whole
/// model at any rank count: one part at one rank, whose loop rows the part solve handles sparsely,
/// 8x faster on the ladder than the whole-model solve's dense rows). Local.
int mbsp_naturalParActive(mbspComm *comm, const mbsModel *m);
/// One forward-dynamics evaluation of the natural formulation at the state \p s, distributed:
/// every rank its bodies' elimination and contributions, one allreduce of the interface system
/// (nif² + nif doubles, then rank 0's broadcast, so every rank factors the same numbers), a
/// gather of p̈ to rank 0, which runs mbs_forward on it (q̈, λ, the joint wrenches, the closure
/// multipliers into \p w). Errors are agreed. Collective.
mbsErr mbsp_naturalForward(mbspComm *comm, const mbsModel *m, mbsState *s, mbsWork *w);
/// The distributed solve of a natural run's evaluations (docs/natural.md 13;
/// mbs_naturalSimSetSolve): every rank runs a replica of the (p, ṗ) integration, eliminates its own
/// bodies at each evaluation, the interface system is summed by one allreduce (and rank 0's
/// broadcast), and p̈ is gathered and broadcast so every replica continues from the same numbers.
/// Made once per run (no allocation per evaluation).
typedef struct mbspNaturalRun {
  mbspComm *comm;
  const mbsModel *m;
  int *cnt, *dsp;           // (size) the gather's counts and displacements (12 per body)
  long solves, corrections; // calls of the evaluations' solve and of the projection's corrections
  long factored;            // bodies this rank factored in them (its range each time)
} mbspNaturalRun;
mbsErr mbsp_naturalRunCreate(mbspComm *comm, const mbsModel *m, mbspNaturalRun **out);
void mbsp_naturalRunDestroy(mbspNaturalRun **r);
/// The mbsNaturalSolveFn (ctx: an mbspNaturalRun). Collective; errors agreed.
mbsErr mbsp_naturalRunSolve(void *ctx, mbsNaturalWork *nw, double *pdd);
/// The mbsNaturalCorrectFn: the projection's corrections by the same split (the K = I workspace,
/// mbs_naturalPartCorrectLocal), one allreduce, Δx gathered and broadcast. Collective.
mbsErr mbsp_naturalRunCorrect(void *ctx, mbsNaturalWork *nw, const double *v, double *dx);
/// The counters of every rank to rank 0 (*r zero when \p w never ran distributed). Collective.
mbsErr mbsp_naturalParReport(mbspComm *comm, mbsWork *w, const mbsModel *m,
                             mbspNaturalParReport *r);
/// Frees r->per. Local.
void mbsp_naturalParReportFree(mbspNaturalParReport *r);
#endif
