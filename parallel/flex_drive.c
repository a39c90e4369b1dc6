/// \file flex_drive.c
/// Driven joints of a model with flexible bodies (flex_drive.h; docs/flexible.md 9, 11): the
/// profiles of src/drive.c (run) or the inverse group's motion (inverse), the driven accelerations
/// prescribed exactly by a solve on the free block of the oracle's mass matrix, the driving forces
/// from the driven rows.
#include "flex_drive.h"
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_drive.h"
#include "mbspar/mbs_trajectory.h"

// the arrays of k drives and the free block of N velocities
static mbsErr mbsp_flexDriveAlloc(mbspFlexDrive *d, int k, int N) {
  d->k = k, d->N = N;
  size_t kk = (size_t)k + 1;
  d->dof = calloc(5 * kk, sizeof(int));
  d->q0 = calloc(6 * kk, sizeof(double));
  d->free_ = malloc(sizeof(int) * (size_t)N + 1);
  d->Mf = malloc(sizeof(double) * (size_t)N * (size_t)N + 1);
  d->bf = malloc(sizeof(double) * (size_t)N + 1);
  d->mo = calloc(kk, sizeof *d->mo);
  if (!d->dof || !d->q0 || !d->free_ || !d->Mf || !d->bf || !d->mo)
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  d->qa = d->dof + kk, d->hb = d->qa + kk, d->nqadr = d->hb + kk, d->nqnum = d->nqadr + kk;
  for (int j = 0; j < k; j++) d->hb[j] = -1;
  d->vel = d->q0 + kk, d->acc = d->vel + kk, d->tau = d->acc + kk, d->max = d->tau + kk;
  return MBS_OK;
}

// the undriven velocity indices
static mbsErr mbsp_flexDriveFree_(mbspFlexDrive *d, const mbsConfig *cfg) {
  int nf = 0;
  for (int i = 0; i < d->N; i++) {
    int driven = 0;
    for (int j = 0; j < d->k; j++) driven |= d->dof[j] == i;
    if (!driven) d->free_[nf++] = i;
  }
  if (nf != d->N - d->k)
    return mbs_errSet(MBS_ERR_INPUT, "%s:%d: drive: a joint is driven twice", cfg->filename,
                      cfg->ndrive ? cfg->drives[0].line : 1);
  return MBS_OK;
}

mbsErr mbsp_flexDriveSetup(mbspFlexDrive *d, const mbsConfig *cfg, const mbsModel *m, int N) {
  memset(d, 0, sizeof *d);
  int k = cfg ? cfg->ndrive : 0;
  if (!k) return MBS_OK;
  MBS_CALL(mbsp_flexDriveAlloc(d, k, N));
  d->nq = m->nq, d->nv = m->nv;
  MBS_CALL(mbs_configDrives(cfg, m, d->dof, d->qa));
  for (int j = 0; j < k; j++) {
    d->q0[j] = m->q0[d->qa[j]];
    if (cfg->drives[j].profile == MBS_DRIVE_MOTION) // its file, as the rigid runs read it
      MBS_CALL(mbsp_driveMotionRead(cfg, m, j, &d->mo[j]));
  }
  return mbsp_flexDriveFree_(d, cfg);
}

mbsErr mbsp_flexDriveInverse(mbspFlexDrive *d, const mbsConfig *cfg, const mbsModel *m, int N,
                             const mbsMotion *imo, const double *qs, const double *qe, double T) {
  memset(d, 0, sizeof *d);
  for (int b = 0; imo && b < m->nbody; b++)
    if (m->body_qnum[b] != m->body_dofnum[b]) {
      const mbsFlexBody *fb = m->flex && m->flex->n ? m->flex->b : NULL;
      return mbs_errSet(MBS_ERR_UNSUPPORTED,
                        "%s:%d: body \"%s\" is flexible: inverse.motion drives flexible models "
                        "whose joints have scalar coordinates (body \"%s\" has a spherical or "
                        "free joint; the profile holds it; docs/flexible.md 11)",
                        cfg->filename, fb ? fb->line : 1, fb ? fb->name : "?", m->body_name[b]);
    }
  MBS_CALL(mbsp_flexDriveAlloc(d, m->nv, N));
  d->nq = m->nq, d->nv = m->nv;
  // every dof driven: a scalar coordinate along the motion; a spherical or free joint held at
  // q_start at rest, as the rigid verb holds it (qa -1; hb: its body at the joint's first dof)
  for (int b = 0; b < m->nbody; b++)
    for (int k = 0; k < m->body_dofnum[b]; k++) {
      int j = m->body_dofadr[b] + k, scalar = m->body_qnum[b] == m->body_dofnum[b];
      d->dof[j] = j, d->qa[j] = scalar ? m->body_qadr[b] + k : -1;
      d->hb[j] = !scalar && k == 0 ? b : -1;
      d->nqadr[j] = m->body_qadr[b], d->nqnum[j] = m->body_qnum[b];
      d->q0[j] = scalar ? m->q0[d->qa[j]] : 0;
    }
  d->imo = imo, d->qs = qs, d->qe = qe, d->T = T;
  return mbsp_flexDriveFree_(d, cfg);
}

void mbsp_flexDriveFree(mbspFlexDrive *d) {
  for (int j = 0; d->mo && j < d->k; j++) mbs_motionDestroy(&d->mo[j]);
  free(d->dof), free(d->q0), free(d->free_), free(d->Mf), free(d->bf), free(d->mo);
  memset(d, 0, sizeof *d);
}

// the prescribed q, q', q'' of driven dof j at time t
static void mbsp_flexDriveAt(const mbspFlexDrive *d, const mbsConfig *cfg, int j, double t,
                             double *q, double *v, double *a) {
  if (d->qa[j] < 0) // inverse: a spherical or free joint held at q_start
    *q = 0, *v = 0, *a = 0;
  else if (d->imo) // inverse with a user motion: its cubic Hermite interpolant between the samples
    mbs_driveMotionEval(d->imo->ns, d->imo->t, d->imo->q, d->imo->qd, d->nq, d->nv, d->qa[j],
                        d->dof[j], t, q, v, a);
  else if (d->qs) // inverse with the profile: the cycloid of every coordinate
    mbsu_cycloid(d->qs[d->qa[j]], d->qe[d->qa[j]], d->T, t, q, v, a);
  else if (d->mo[j]) // a `motion` drive
    mbs_driveMotionEval(d->mo[j]->ns, d->mo[j]->t, d->mo[j]->q, d->mo[j]->qd, d->nq, d->nv,
                        d->qa[j], d->dof[j], t, q, v, a);
  else
    mbs_driveEval(&cfg->drives[j], d->q0[j], t, q, v, a);
}

void mbsp_flexDriveState(mbspFlexDrive *d, const mbsConfig *cfg, double t, double *q, double *y) {
  for (int j = 0; j < d->k; j++) {
    double qq, acc;
    mbsp_flexDriveAt(d, cfg, j, t, &qq, &d->vel[j], &acc);
    y[d->dof[j]] = d->vel[j];
    if (d->qa[j] >= 0)
      q[d->qa[j]] = qq;
    else if (d->hb[j] >= 0) // a held joint's coordinates (a quaternion and its position)
      memcpy(q + d->nqadr[j], d->qs + d->nqadr[j], sizeof(double) * (size_t)d->nqnum[j]);
  }
}

// the prescribed accelerations at time t into d->acc
static void mbsp_flexDriveAcc(mbspFlexDrive *d, const mbsConfig *cfg, double t) {
  for (int j = 0; j < d->k; j++) {
    double qq, v;
    mbsp_flexDriveAt(d, cfg, j, t, &qq, &v, &d->acc[j]);
    if (d->acc_at) d->acc[j] = d->acc_at[d->dof[j]];
  }
}

// the driving forces' bookkeeping and power
static double mbsp_flexDrivePower(mbspFlexDrive *d, const double *y) {
  double p = 0;
  for (int j = 0; j < d->k; j++) {
    d->max[j] = fmax(d->max[j], fabs(d->tau[j]));
    p += d->tau[j] * y[d->dof[j]];
  }
  d->solves++;
  return p;
}

mbsErr mbsp_flexDriveAccelPar(mbspFlexDrive *d, const mbsConfig *cfg, mbspFlexPar *par, double t,
                              const double *q, const double *y, const double *eta, double *ydd,
                              double *power) {
  mbsp_flexDriveAcc(d, cfg, t);
  MBS_CALL(mbsp_flexParAccelDriven(par, q, y, eta, d->acc, ydd, d->tau));
  *power = mbsp_flexDrivePower(d, y);
  return MBS_OK;
}

mbsErr mbsp_flexDriveAccel(mbspFlexDrive *d, const mbsConfig *cfg, mbsFlexOracle *o, double t,
                           const double *q, const double *y, const double *eta, double *ydd,
                           double *power) {
  if (d->par) return mbsp_flexDriveAccelPar(d, cfg, d->par, t, q, y, eta, ydd, power);
  if (d->aba) { // the recursive algorithm with the driven joints' accelerations prescribed
    mbsp_flexDriveAcc(d, cfg, t);
    mbsReal *ac = mbs_flexAbaDriveAcc(d->aba);
    for (int j = 0; j < d->k; j++) ac[d->dof[j]] = d->acc[j];
    MBS_CALL(mbs_flexAbaAccel(d->aba, q, y, eta, ydd));
    const mbsReal *tD = mbs_flexAbaDriveForce(d->aba);
    for (int j = 0; j < d->k; j++) d->tau[j] = tD[d->dof[j]];
    *power = mbsp_flexDrivePower(d, y);
    return MBS_OK;
  }
  int N = d->N, k = d->k, nf = N - k;
  double *acc = d->acc;
  mbsp_flexDriveAcc(d, cfg, t);
  mbsReal *M, *f;
  MBS_CALL(mbs_flexOracleSystem(o, q, y, eta, &M, &f));
  // M_FF y''_F = f_F - M_FD a_D
  for (int r = 0; r < nf; r++) {
    const mbsReal *Mr = M + (size_t)d->free_[r] * N;
    double b = f[d->free_[r]];
    for (int j = 0; j < k; j++) b -= Mr[d->dof[j]] * acc[j];
    d->bf[r] = b;
    for (int c = 0; c < nf; c++) d->Mf[(size_t)r * nf + c] = Mr[d->free_[c]];
  }
  if (nf > 0 && mbs_flexCholSolve(nf, d->Mf, d->bf))
    return mbs_errSet(MBS_ERR_NUMERIC,
                      "the mass matrix of the undriven coordinates is not positive definite "
                      "at t = %.9g s",
                      t);
  for (int r = 0; r < nf; r++) ydd[d->free_[r]] = d->bf[r];
  for (int j = 0; j < k; j++) ydd[d->dof[j]] = acc[j];
  // tau_D = (M y'' - f)_D
  for (int j = 0; j < k; j++) {
    const mbsReal *Mr = M + (size_t)d->dof[j] * N;
    double s = -f[d->dof[j]];
    for (int c = 0; c < N; c++) s += Mr[c] * ydd[c];
    d->tau[j] = s;
  }
  *power = mbsp_flexDrivePower(d, y);
  return MBS_OK;
}

mbsErr mbsp_flexDriveUse(mbspFlexDrive *d, mbspFlexPar *par, mbsFlexAba *aba) {
  d->par = par, d->aba = par ? NULL : aba;
  return d->aba && d->k ? mbs_flexAbaDrive(d->aba, d->dof, d->k) : MBS_OK;
}

mbsErr mbsp_flexParBeginVerb(mbspComm *comm, const mbsConfig *cfg, const mbsModel *m, int mode,
                             mbspFlexPar **par, mbspComm **self, int *worker) {
  int k = mode == 2 ? m->nv : mode == 1 ? cfg->ndrive : 0;
  int *dof = malloc(sizeof(int) * (size_t)(2 * k + 1)); // dofs, then coordinates
  mbsErr e = dof ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  for (int j = 0; !e && mode == 2 && j < k; j++) dof[j] = j;
  if (!e && mode == 1 && k) e = mbs_configDrives(cfg, m, dof, dof + k);
  e = mbsp_agreeErr(comm, e);
  if (!e) e = mbsp_flexParBeginDriven(comm, m, dof, k, par, self, worker);
  free(dof);
  return e;
}
