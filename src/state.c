/// \file state.c
/// State allocation and reset.
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_solver.h"
#include "mbspar/mbs_state.h"

mbsErr mbs_stateCreate(const mbsModel *m, mbsState **out) {
  mbsState *s;
  *out = NULL;
  MBS_ALLOC(s, 1);
  s->q = calloc((size_t)(m->nq > 0 ? m->nq : 1), sizeof(mbsReal));
  s->qd = calloc((size_t)(m->nv > 0 ? m->nv : 1), sizeof(mbsReal));
  s->tau = calloc((size_t)(m->nv > 0 ? m->nv : 1), sizeof(mbsReal));
  s->hist_lam = calloc((size_t)MBS_WARM_HIST *
                           (size_t)(mbs_stateHistWidth(m) > 0 ? mbs_stateHistWidth(m) : 1),
                       sizeof(mbsReal));
  if (!s->q || !s->qd || !s->tau || !s->hist_lam) {
    mbs_stateDestroy(&s);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory allocating the state");
  }
  s->nstage = 1;
  mbs_stateReset(m, s);
  *out = s;
  return MBS_OK;
}

void mbs_stateReset(const mbsModel *m, mbsState *s) {
  s->time = 0;
  memcpy(s->q, m->q0, (size_t)m->nq * sizeof(mbsReal));
  memcpy(s->qd, m->qd0, (size_t)m->nv * sizeof(mbsReal));
  memset(s->tau, 0, (size_t)m->nv * sizeof(mbsReal));
  for (int k = 0; k < MBS_MAX_STAGE; k++) s->nhist[k] = 0, s->hist_head[k] = 0;
  s->stage = 0;
}

mbsErr mbs_stateSetStages(const mbsModel *m, mbsState *s, int nstage) {
  MBS_CHECK(nstage >= 1 && nstage <= MBS_MAX_STAGE, MBS_ERR_INTERNAL, "bad stage count %d", nstage);
  size_t nl = (size_t)(mbs_stateHistWidth(m) > 0 ? mbs_stateHistWidth(m) : 1);
  size_t n = (size_t)nstage * MBS_WARM_HIST * nl;
  mbsReal *h = realloc(s->hist_lam, n * sizeof(mbsReal));
  MBS_CHECK(h, MBS_ERR_NOMEM, "out of memory (warm-start history of %d stages)", nstage);
  memset(h, 0, n * sizeof(mbsReal));
  s->hist_lam = h;
  s->nstage = nstage;
  for (int k = 0; k < MBS_MAX_STAGE; k++) s->nhist[k] = 0, s->hist_head[k] = 0;
  s->stage = 0;
  return MBS_OK;
}

void mbs_stateDestroy(mbsState **ps) {
  if (!ps || !*ps) return;
  free((*ps)->q);
  free((*ps)->qd);
  free((*ps)->tau);
  free((*ps)->hist_lam);
  free(*ps);
  *ps = NULL;
}

const char *mbs_reasonName(int reason) {
  switch (reason) {
  case MBS_REASON_CONVERGED:
    return "converged";
  case MBS_REASON_CONVERGED_DIRECT:
    return "direct";
  case MBS_REASON_DIVERGED_MAXIT:
    return "max_iter";
  case MBS_REASON_DIVERGED_BREAKDOWN:
    return "breakdown";
  case MBS_REASON_DIVERGED_NAN:
    return "nan";
  case MBS_REASON_DIVERGED_DTOL:
    return "diverged";
  case MBS_REASON_DIVERGED_STAGNATED:
    return "stagnated";
  default:
    return "none";
  }
}
