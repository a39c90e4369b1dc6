/// \file flex_par.c
/// Flexible models over the ranks (docs/flexible.md 11): the MPI half of src/flex_part.c. Every
/// rank holds the whole model and eliminates its contiguous body range as a forest. Per
/// evaluation: the ranges' passes in parallel, one allreduce of the interface system ((12 c)^2 +
/// 12 c doubles for c cut joints) and rank 0's broadcast of it (every rank solves the same
/// bits), each rank finishes its range, one gather of the accelerations to rank 0. The verbs run
/// their loop on rank 0 alone and the other ranks serve it (mbsp_flexParServe): rank 0 then
/// broadcasts the state before each evaluation (nq + N + ne doubles), which a replicated
/// integration would save; the kinematics of each range's ancestors are recomputed by its rank
/// (O(n) per rank, a tenth of an evaluation's flops on the chain of links). Closed loops
/// (mbsp_fpLoops): 1 + (closure rows) tree solves and one more sum of n^2 + n doubles. Driven
/// joints (mbsp_flexParBeginDriven; src/flex_hybrid.c): their k prescribed accelerations travel
/// with the state, each rank computes the driving forces of its own bodies and one allreduce of k
/// doubles sums them.
#include <stdlib.h>
#include <string.h>
#include "flex_par.h"
#include "mbspar/mbs_model.h"

enum { MBSP_FP_STOP = 0, MBSP_FP_ACCEL = 1, MBSP_FP_ENERGY = 2 };

struct mbspFlexPar {
  mbspComm *comm;
  const mbsModel *m;
  mbsFlexPart *part;
  int P, rank, N, ne, served;
  int *cnt, *dsp; ///< (P) the gather's counts and offsets
  double *mine;   ///< this rank's packed entries
  double *all;    ///< (rank 0: N) the gathered entries
  double *msg;    ///< (served: 1 + nq + N + ne) the command and the state
  double *ydd;    ///< (workers: N)
  long evals;
  int k;              ///< driven dofs (mbsp_flexParBeginDriven; 0: none)
  int *dof;           ///< (k) their velocity indices
  double *tau;        ///< (k) their driving forces (the ranks' sum)
  unsigned char *own; ///< (k) the dof's body is in this rank's range
};

mbsErr mbsp_flexParCreate(mbspComm *comm, const mbsModel *m, mbspFlexPar **out) {
  *out = NULL;
  mbspFlexPar *p = calloc(1, sizeof *p);
  mbsErr e = p ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  if (!e) {
    *out = p;
    p->comm = comm, p->m = m, p->P = mbsp_size(comm), p->rank = mbsp_rank(comm);
    e = mbs_flexPartCreate(m, p->P, p->rank, &p->part);
  }
  if (!e) {
    p->N = mbs_flexAbaSize(mbs_flexPartAba(p->part)), p->ne = p->N - m->nv;
    p->cnt = malloc(sizeof(int) * (size_t)p->P), p->dsp = malloc(sizeof(int) * (size_t)p->P);
    p->mine = malloc(sizeof(double) * ((size_t)p->N + 1));
    p->all = malloc(sizeof(double) * ((size_t)p->N + 1));
    p->msg = malloc(sizeof(double) * ((size_t)(m->nq + p->N + p->ne + m->nv) + 1));
    p->ydd = malloc(sizeof(double) * ((size_t)p->N + 1));
    if (!p->cnt || !p->dsp || !p->mine || !p->all || !p->msg || !p->ydd)
      e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  }
  for (int r = 0, at = 0; !e && r < p->P; r++)
    p->cnt[r] = mbs_flexPartCount(p->part, r), p->dsp[r] = at, at += p->cnt[r];
  e = mbsp_agreeErr(comm, e);
  if (e) mbsp_flexParDestroy(out);
  return e;
}

void mbsp_flexParDestroy(mbspFlexPar **pp) {
  if (!pp || !*pp) return;
  mbspFlexPar *p = *pp;
  mbs_flexPartDestroy(&p->part);
  free(p->cnt), free(p->dsp), free(p->mine), free(p->all), free(p->msg), free(p->ydd);
  free(p->dof), free(p->tau), free(p->own);
  free(p);
  *pp = NULL;
}

mbsFlexAba *mbsp_flexParAba(mbspFlexPar *p) {
  return mbs_flexPartAba(p->part);
}

void mbsp_flexParInfo(const mbspFlexPar *p, int *ranks, int *ncut, int *nif, long *evals,
                      long *unit) {
  int b0, b1;
  mbs_flexPartInfo(p->part, &b0, &b1, ncut, unit);
  *ranks = p->P, *nif = mbs_flexPartIfSize(p->part), *evals = p->evals;
}

// rank 0 of a served p: the command and the state to the others
static mbsErr mbsp_fpSend(mbspFlexPar *p, int cmd, const double *q, const double *y,
                          const double *eta) {
  if (!p->served || p->P == 1) return MBS_OK;
  int nq = p->m->nq;
  p->msg[0] = cmd;
  if (q) {
    memcpy(p->msg + 1, q, sizeof(double) * (size_t)nq);
    memcpy(p->msg + 1 + nq, y, sizeof(double) * (size_t)p->N);
    memcpy(p->msg + 1 + nq + p->N, eta, sizeof(double) * (size_t)p->ne);
    for (int j = 0; j < p->k; j++) // the driven dofs' prescribed accelerations
      p->msg[1 + nq + p->N + p->ne + j] = mbs_flexAbaDriveAcc(mbsp_flexParAba(p))[p->dof[j]];
  }
  return mbsp_bcastBytes(p->comm, p->msg, sizeof(double) * (size_t)(1 + nq + p->N + p->ne + p->k),
                         0);
}

// one tree solve (every rank): the ranges' passes, the interface system's sum, the finish
static mbsErr mbsp_fpTree(mbspFlexPar *p, const double *q, const double *y, const double *eta,
                          double *ydd) {
  double *buf = NULL;
  int n = 0;
  mbsErr e = mbs_flexPartLocal(p->part, q, y, eta, &buf, &n);
  MBS_CALL(mbsp_agreeErr(p->comm, e));
  if (n && p->P > 1) { // the sum, bitwise the same on every rank (rank 0's broadcast)
    MBS_CALL(mbsp_allreduceSum(p->comm, buf, n));
    MBS_CALL(mbsp_bcastBytes(p->comm, buf, sizeof(double) * (size_t)n, 0));
  }
  e = mbs_flexPartFinish(p->part, q, y, ydd);
  return mbsp_agreeErr(p->comm, e);
}

// closed loops (src/flex_part_loops.c, docs/flexible.md 15.4): tree solve 0, one homogeneous
// unit solve per closure row that is not a zero row, one sum of A and G ydd0 (n^2 + n doubles)
// and rank 0's broadcast of it, the range-space combination on each rank's own entries
static mbsErr mbsp_fpLoops(mbspFlexPar *p, const double *q, const double *y, const double *eta,
                           double *ydd, int nab, double *Ab) {
  int n = p->m->nlam_loop;
  (void)mbs_flexPartLoopUnit(p->part, -1);
  MBS_CALL(mbsp_fpTree(p, q, y, eta, ydd));
  mbs_flexPartLoopDots(p->part, ydd);
  for (int j = 0; j < n; j++) {
    double *yj = mbs_flexPartLoopUnit(p->part, j);
    if (!yj) continue; // a zero row: no motion violates it
    mbsErr e = mbsp_fpTree(p, q, y, eta, yj);
    mbs_flexPartLoopDots(p->part, yj); // (also back to the applied forces)
    MBS_CALL(e);
  }
  if (p->P > 1) {
    MBS_CALL(mbsp_allreduceSum(p->comm, Ab, nab));
    MBS_CALL(mbsp_bcastBytes(p->comm, Ab, sizeof(double) * (size_t)nab, 0));
  }
  return mbsp_agreeErr(p->comm, mbs_flexPartLoopSolve(p->part, ydd));
}

// the evaluation proper (every rank)
static mbsErr mbsp_fpAccel(mbspFlexPar *p, const double *q, const double *y, const double *eta,
                           double *ydd) {
  double *Ab = NULL;
  p->evals++;
  int nab = mbs_flexPartLoopRows(p->part, q, y, eta, &Ab);
  if (nab)
    MBS_CALL(mbsp_fpLoops(p, q, y, eta, ydd, nab, Ab));
  else
    MBS_CALL(mbsp_fpTree(p, q, y, eta, ydd));
  if (p->P == 1) return MBS_OK;
  mbs_flexPartPack(p->part, p->rank, ydd, p->mine);
  MBS_CALL(mbsp_gatherv(p->comm, p->mine, p->cnt[p->rank], p->all, p->cnt, p->dsp));
  for (int r = 1; p->rank == 0 && r < p->P; r++)
    mbs_flexPartUnpack(p->part, r, p->all + p->dsp[r], ydd);
  return MBS_OK;
}

// the driving forces: each rank's for its own bodies, summed (exact: one nonzero term each)
static mbsErr mbsp_fpTau(mbspFlexPar *p) {
  const mbsReal *tD = mbs_flexAbaDriveForce(mbsp_flexParAba(p));
  for (int j = 0; j < p->k; j++) p->tau[j] = p->own[j] ? tD[p->dof[j]] : 0;
  return p->P > 1 && p->k ? mbsp_allreduceSum(p->comm, p->tau, p->k) : MBS_OK;
}

static mbsErr mbsp_fpEnergy(mbspFlexPar *p, const double *q, const double *y, const double *eta,
                            double *kin, double *pot) {
  double v[2] = {0, 0};
  mbsErr e = mbs_flexPartEnergy(p->part, q, y, eta, v, v + 1);
  MBS_CALL(mbsp_agreeErr(p->comm, e));
  if (p->P > 1) {
    MBS_CALL(mbsp_allreduceSum(p->comm, v, 2));
    MBS_CALL(mbsp_bcastBytes(p->comm, v, sizeof v, 0));
  }
  *kin = v[0], *pot = v[1];
  return MBS_OK;
}

mbsErr mbsp_flexParAccel(mbspFlexPar *p, const double *q, const double *y, const double *eta,
                         double *ydd) {
  MBS_CALL(mbsp_fpSend(p, MBSP_FP_ACCEL, q, y, eta));
  MBS_CALL(mbsp_fpAccel(p, q, y, eta, ydd));
  return mbsp_fpTau(p); // (the served ranks reduce the driving forces of every evaluation)
}

mbsErr mbsp_flexParEnergy(mbspFlexPar *p, const double *q, const double *y, const double *eta,
                          double *kin, double *pot) {
  MBS_CALL(mbsp_fpSend(p, MBSP_FP_ENERGY, q, y, eta));
  return mbsp_fpEnergy(p, q, y, eta, kin, pot);
}

mbsErr mbsp_flexParServe(mbspFlexPar *p) {
  p->served = 1;
  if (p->rank == 0 || p->P == 1) return MBS_OK;
  int nq = p->m->nq;
  size_t bytes = sizeof(double) * (size_t)(1 + nq + p->N + p->ne + p->k);
  for (;;) {
    MBS_CALL(mbsp_bcastBytes(p->comm, p->msg, bytes, 0));
    int cmd = (int)p->msg[0];
    if (cmd == MBSP_FP_STOP) return MBS_OK;
    const double *q = p->msg + 1, *y = q + nq, *eta = y + p->N;
    double kin, pot;
    // an evaluation's error is agreed inside it and rank 0 reports it; keep serving
    if (cmd == MBSP_FP_ACCEL) {
      mbsReal *acc = mbs_flexAbaDriveAcc(mbsp_flexParAba(p));
      for (int j = 0; j < p->k; j++) acc[p->dof[j]] = eta[p->ne + j];
      if (!mbsp_fpAccel(p, q, y, eta, p->ydd)) (void)mbsp_fpTau(p);
    } else
      (void)mbsp_fpEnergy(p, q, y, eta, &kin, &pot);
  }
}

mbsErr mbsp_flexParStop(mbspFlexPar *p) {
  return mbsp_fpSend(p, MBSP_FP_STOP, NULL, NULL, NULL);
}

// the driven dofs (every rank alike): the recursive workspace's hybrid mode and the forces' owners
static mbsErr mbsp_fpDrive(mbspFlexPar *p, const int *dof, int k) {
  if (k <= 0) return MBS_OK;
  const mbsModel *m = p->m;
  int b0, b1, ncut;
  long unit;
  mbs_flexPartInfo(p->part, &b0, &b1, &ncut, &unit);
  p->k = k;
  p->dof = malloc(sizeof(int) * (size_t)k), p->tau = calloc((size_t)k, sizeof(double));
  p->own = calloc((size_t)k, 1);
  if (!p->dof || !p->tau || !p->own) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  memcpy(p->dof, dof, sizeof(int) * (size_t)k);
  for (int j = 0; j < k; j++)
    for (int b = b0; b < b1; b++)
      if (dof[j] >= m->body_dofadr[b] && dof[j] < m->body_dofadr[b] + m->body_dofnum[b])
        p->own[j] = 1;
  return mbs_flexAbaDrive(mbsp_flexParAba(p), dof, k);
}

mbsErr mbsp_flexParAccelDriven(mbspFlexPar *p, const double *q, const double *y, const double *eta,
                               const double *acc, double *ydd, double *tau) {
  mbsReal *ac = mbs_flexAbaDriveAcc(mbsp_flexParAba(p));
  for (int j = 0; j < p->k; j++) ac[p->dof[j]] = acc[j];
  MBS_CALL(mbsp_fpSend(p, MBSP_FP_ACCEL, q, y, eta));
  MBS_CALL(mbsp_fpAccel(p, q, y, eta, ydd));
  MBS_CALL(mbsp_fpTau(p));
  memcpy(tau, p->tau, sizeof(double) * (size_t)p->k);
  return MBS_OK;
}

mbsErr mbsp_flexParBegin(mbspComm *comm, const mbsModel *m, mbspFlexPar **par, mbspComm **self,
                         int *worker) {
  return mbsp_flexParBeginDriven(comm, m, NULL, 0, par, self, worker);
}

mbsErr mbsp_flexParBeginDriven(mbspComm *comm, const mbsModel *m, const int *dof, int k,
                               mbspFlexPar **par, mbspComm **self, int *worker) {
  *worker = mbsp_rank(comm) != 0, *self = NULL;
  MBS_CALL(mbsp_flexParCreate(comm, m, par)); // (agreed)
  mbsErr e = mbsp_agreeErr(comm, mbsp_fpDrive(*par, dof, k));
  if (e) {
    mbsp_flexParDestroy(par);
    return e;
  }
  e = mbsp_flexParServe(*par);
  if (*worker) {
    mbsp_flexParDestroy(par);
    return mbsp_agreeErr(comm, e);
  }
  if (!e) e = mbsp_commIdle(comm, self);
  if (e) { // rank 0 alone here: release the others first
    mbsp_flexParStop(*par), mbsp_flexParDestroy(par);
    return mbsp_agreeErr(comm, e);
  }
  return MBS_OK;
}

mbsErr mbsp_flexParEnd(mbspComm *job, mbspFlexPar **par, mbspComm **self, mbsErr e) {
  mbsErr es = mbsp_flexParStop(*par);
  mbsp_flexParDestroy(par), mbsp_commFree(self);
  return mbsp_agreeErr(job, e ? e : es);
}
