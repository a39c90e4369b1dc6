/// \file sim_guard.c
/// `mbspar run`: the accuracy guard (guard.h, docs/formulation.md 4.9) at the first and the last
/// evaluation of the run. Every evaluation keeps this rank's slices of its state and q̈ (O(n)
/// copies); a check sums the slices over the ranks (one allreduce) and rank 0 checks the whole
/// evaluation against the equations of motion.
#include <stdlib.h>
#include <string.h>
#include "sim_impl.h"

mbsErr mbsp_simGuardCreate(mbspSim *S) {
  const mbsModel *m = S->m;
  size_t n = (size_t)m->nq + 2 * (size_t)m->nv + 1;
  mbsErr e = MBS_OK;
  S->gbuf = calloc(2 * n, sizeof(double)); // this rank's slices (zero elsewhere), then the sum
  if (!S->gbuf) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (accuracy guard)");
  if (!e && S->rank == 0) e = mbsp_guardPairCreate(m, &S->guard);
  return mbsp_agreeErr(S->comm, e);
}

void mbsp_simGuardDestroy(mbspSim *S) {
  mbsp_guardPairDestroy(&S->guard);
  free(S->gbuf);
  S->gbuf = NULL;
}

void mbsp_simGuardKeep(mbspSim *S) {
  const mbsModel *m = S->m;
  int nq = m->nq, nv = m->nv;
  if (!S->gbuf) return;
  if (S->q1 > S->q0)
    memcpy(S->gbuf + S->q0, S->s->q + S->q0, (size_t)(S->q1 - S->q0) * sizeof(double));
  if (S->v1 > S->v0) {
    memcpy(S->gbuf + nq + S->v0, S->s->qd + S->v0, (size_t)(S->v1 - S->v0) * sizeof(double));
    memcpy(S->gbuf + nq + nv + S->v0, S->w->qdd + S->v0, (size_t)(S->v1 - S->v0) * sizeof(double));
  }
  if (S->rank == 0 && S->w) { // the time, the loop forces (replicated) and the solve's outcome
    S->gtime = S->s->time;
    if (m->nlam_loop)
      memcpy(S->guard.lam, S->w->lam + m->nlam, (size_t)m->nlam_loop * sizeof(double));
    S->greason = S->serial ? 1 : S->w->stat.reason;
  }
}

mbsErr mbsp_simGuardCheck(mbspSim *S, int which) {
  const mbsModel *m = S->m;
  if (!S->gbuf) return MBS_OK;
  S->gchecked = 1;
  size_t n = (size_t)m->nq + 2 * (size_t)m->nv;
  double *sum = S->gbuf + n + 1;
  memcpy(sum, S->gbuf, n * sizeof(double));
  MBS_CALL(mbsp_allreduceSum(S->comm, sum, (int)n));
  mbsErr e = MBS_OK;
  if (S->rank == 0) {
    mbspGuardPair *gp = &S->guard;
    mbsState *s = gp->s;
    memcpy(s->q, sum, (size_t)m->nq * sizeof(double));
    memcpy(s->qd, sum + m->nq, (size_t)m->nv * sizeof(double));
    memcpy(gp->qdd, sum + m->nq + m->nv, (size_t)m->nv * sizeof(double));
    s->time = S->gtime;
    if (s->tau && S->s->tau) memcpy(s->tau, S->s->tau, (size_t)m->nv * sizeof(double));
    for (int j = 0; s->tau && j < S->ndrv; j++) // driven joints: the forces of that evaluation
      s->tau[S->drv_dof[j]] = S->drv_keep[j];
    gp->reason = S->greason;
    e = mbsp_guardPairCheck(gp, which, "run");
  }
  return mbsp_agreeErr(S->comm, e);
}
