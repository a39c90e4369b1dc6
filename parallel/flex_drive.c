/// \file flex_drive.c
/// Driven joints in `run` of a model with flexible bodies (flex_drive.h; docs/flexible.md 9): the
/// profiles of src/drive.c, the driven accelerations prescribed exactly by a solve on the free
/// block of the oracle's mass matrix, the driving forces from the driven rows.
#include "flex_drive.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_drive.h"

mbsErr mbsp_flexDriveSetup(mbspFlexDrive *d, const mbsConfig *cfg, const mbsModel *m, int N) {
  memset(d, 0, sizeof *d);
  int k = cfg ? cfg->ndrive : 0;
  if (!k) return MBS_OK;
  for (int j = 0; j < k; j++)
    if (cfg->drives[j].profile == MBS_DRIVE_MOTION)
      return mbs_errSet(MBS_ERR_UNSUPPORTED,
                        "%s:%d: drive: profile = \"motion\" cannot drive a model with flexible "
                        "bodies yet (spinup, cycloidal and sine can; docs/flexible.md 9)",
                        cfg->filename, cfg->drives[j].line);
  d->k = k, d->N = N;
  MBS_CALL(mbs_configDrives(cfg, m, d->dof, d->qa));
  for (int j = 0; j < k; j++) d->q0[j] = m->q0[d->qa[j]];
  d->free_ = malloc(sizeof(int) * (size_t)N + 1);
  d->Mf = malloc(sizeof(double) * (size_t)N * (size_t)N + 1);
  d->bf = malloc(sizeof(double) * (size_t)N + 1);
  if (!d->free_ || !d->Mf || !d->bf) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  int nf = 0;
  for (int i = 0; i < N; i++) {
    int driven = 0;
    for (int j = 0; j < k; j++) driven |= d->dof[j] == i;
    if (!driven) d->free_[nf++] = i;
  }
  if (nf != N - k)
    return mbs_errSet(MBS_ERR_INPUT, "%s:%d: drive: a joint is driven twice", cfg->filename,
                      cfg->drives[0].line);
  return MBS_OK;
}

void mbsp_flexDriveFree(mbspFlexDrive *d) {
  free(d->free_), free(d->Mf), free(d->bf);
  d->free_ = NULL, d->Mf = d->bf = NULL, d->k = 0;
}

void mbsp_flexDriveState(mbspFlexDrive *d, const mbsConfig *cfg, double t, double *q, double *y) {
  for (int j = 0; j < d->k; j++) {
    double qq, acc;
    mbs_driveEval(&cfg->drives[j], d->q0[j], t, &qq, &d->vel[j], &acc);
    q[d->qa[j]] = qq, y[d->dof[j]] = d->vel[j];
  }
}

mbsErr mbsp_flexDriveAccel(mbspFlexDrive *d, const mbsConfig *cfg, mbsFlexOracle *o, double t,
                           const double *q, const double *y, const double *eta, double *ydd,
                           double *power) {
  int N = d->N, k = d->k, nf = N - k;
  double acc[MBS_DRIVE_MAX];
  for (int j = 0; j < k; j++) {
    double qq, v;
    mbs_driveEval(&cfg->drives[j], d->q0[j], t, &qq, &v, &acc[j]);
  }
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
                      "run: the mass matrix of the undriven coordinates is not positive definite "
                      "at t = %.9g s",
                      t);
  for (int r = 0; r < nf; r++) ydd[d->free_[r]] = d->bf[r];
  for (int j = 0; j < k; j++) ydd[d->dof[j]] = acc[j];
  // tau_D = (M y'' - f)_D
  double p = 0;
  for (int j = 0; j < k; j++) {
    const mbsReal *Mr = M + (size_t)d->dof[j] * N;
    double s = -f[d->dof[j]];
    for (int c = 0; c < N; c++) s += Mr[c] * ydd[c];
    d->tau[j] = s, d->max[j] = fmax(d->max[j], fabs(s));
    p += s * y[d->dof[j]];
  }
  d->solves++;
  *power = p;
  return MBS_OK;
}
