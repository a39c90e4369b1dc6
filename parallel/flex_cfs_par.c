/// \file flex_cfs_par.c
/// The MPI half of src/flex_cfs.c (docs/flexible.md 13): the body ranges and the sum over the
/// ranks that joins them.
#include <stdlib.h>
#include <string.h>
#include "flex_cfs_par.h"

static mbsErr mbsp_fcsSum(void *ctx, double *v, int n) {
  return mbsp_allreduceSum((mbspComm *)ctx, v, n);
}

mbsErr mbsp_flexCfsBind(mbspComm *comm, mbsFlexCfs *f, const mbsModel *m) {
  int P = mbsp_size(comm), r = mbsp_rank(comm);
  long nb = m->nbody;
  int b0 = (int)(nb * r / P), b1 = (int)(nb * (r + 1) / P);
  mbsCfsComm c = {.ctx = comm, .reduce = P > 1 ? mbsp_fcsSum : NULL};
  return mbsp_agreeErr(comm, mbs_flexCfsSetRange(f, b0, b1, &c));
}

// ---------------------------------------------------------------- the verbs at several ranks
// As parallel/flex_par.c: rank 0 runs the verb's loop on a communicator of its own and, for each
// evaluation, broadcasts a command and the state; every rank then evaluates its range
// collectively (mbs_flexCfsAccel) and has the whole ydd.

enum { MBSP_FCS_STOP = 0, MBSP_FCS_ACCEL = 1 };

struct mbspFlexCfsPar {
  mbspComm *comm;
  const mbsModel *m;
  mbsFlexCfs *f;
  int method, rank, P, N;
  double tol;
  double *msg; ///< (1 + nq + N + ne) the command and the state
  double *ydd; ///< (N) the workers' result
};

void mbsp_flexCfsParDestroy(mbspFlexCfsPar **pp) {
  if (!pp || !*pp) return;
  mbspFlexCfsPar *p = *pp;
  mbs_flexCfsDestroy(&p->f);
  free(p->msg), free(p->ydd), free(p);
  *pp = NULL;
}

static mbsErr mbsp_fcsSend(mbspFlexCfsPar *p, int cmd, const double *q, const double *y,
                           const double *eta) {
  if (p->P == 1) return MBS_OK;
  int nq = p->m->nq, ne = p->N - p->m->nv;
  p->msg[0] = cmd;
  if (q) {
    memcpy(p->msg + 1, q, sizeof(double) * (size_t)nq);
    memcpy(p->msg + 1 + nq, y, sizeof(double) * (size_t)p->N);
    memcpy(p->msg + 1 + nq + p->N, eta, sizeof(double) * (size_t)ne);
  }
  return mbsp_bcastBytes(p->comm, p->msg, sizeof(double) * (size_t)(1 + nq + p->N + ne), 0);
}

// the evaluation proper (every rank); the error agreed
static mbsErr mbsp_fcsAccel(mbspFlexCfsPar *p, const double *q, const double *y, const double *eta,
                            double *ydd) {
  int it;
  return mbsp_agreeErr(p->comm,
                       mbsp_flexCfsSolve(p->comm, p->f, p->method, p->tol, q, y, eta, ydd, &it));
}

mbsErr mbsp_flexCfsParAccel(mbspFlexCfsPar *p, const double *q, const double *y, const double *eta,
                            double *ydd) {
  MBS_CALL(mbsp_fcsSend(p, MBSP_FCS_ACCEL, q, y, eta));
  return mbsp_fcsAccel(p, q, y, eta, ydd);
}

static mbsErr mbsp_fcsServe(mbspFlexCfsPar *p) {
  if (p->rank == 0 || p->P == 1) return MBS_OK;
  int nq = p->m->nq, ne = p->N - p->m->nv;
  size_t bytes = sizeof(double) * (size_t)(1 + nq + p->N + ne);
  for (;;) {
    MBS_CALL(mbsp_bcastBytes(p->comm, p->msg, bytes, 0));
    if ((int)p->msg[0] == MBSP_FCS_STOP) return MBS_OK;
    const double *q = p->msg + 1, *y = q + nq, *eta = y + p->N;
    (void)mbsp_fcsAccel(p, q, y, eta, p->ydd); // agreed inside; rank 0 reports it
  }
}

mbsErr mbsp_flexCfsParBegin(mbspComm *comm, const mbsModel *m, int method, double tol,
                            mbspFlexCfsPar **par, mbspComm **self, int *worker) {
  *worker = mbsp_rank(comm) != 0, *self = NULL, *par = NULL;
  mbspFlexCfsPar *p = calloc(1, sizeof *p);
  mbsErr e = p ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  if (!e) {
    *par = p;
    p->comm = comm, p->m = m, p->method = method, p->tol = tol;
    p->rank = mbsp_rank(comm), p->P = mbsp_size(comm);
    e = mbs_flexCfsCreate(m, &p->f);
  }
  if (!e) {
    p->N = mbs_flexCfsSize(p->f);
    p->msg = malloc(sizeof(double) * ((size_t)(m->nq + 2 * p->N) + 1));
    p->ydd = malloc(sizeof(double) * ((size_t)p->N + 1));
    if (!p->msg || !p->ydd) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  }
  e = mbsp_agreeErr(comm, e);
  if (!e) e = mbsp_flexCfsBind(comm, p->f, m); // (agreed)
  if (e) {
    mbsp_flexCfsParDestroy(par);
    return e;
  }
  e = mbsp_fcsServe(p);
  if (*worker) {
    mbsp_flexCfsParDestroy(par);
    return mbsp_agreeErr(comm, e);
  }
  if (!e) e = mbsp_commIdle(comm, self);
  if (e) { // rank 0 alone here: release the others first
    mbsp_fcsSend(p, MBSP_FCS_STOP, NULL, NULL, NULL), mbsp_flexCfsParDestroy(par);
    return mbsp_agreeErr(comm, e);
  }
  return MBS_OK;
}

mbsErr mbsp_flexCfsParEnd(mbspComm *job, mbspFlexCfsPar **par, mbspComm **self, mbsErr e) {
  mbsErr es = mbsp_fcsSend(*par, MBSP_FCS_STOP, NULL, NULL, NULL);
  mbsp_flexCfsParDestroy(par), mbsp_commFree(self);
  return mbsp_agreeErr(job, e ? e : es);
}
