/// \file flex_drive.h
/// Driven joints in `run` of a model with flexible bodies (issue 34 item 5; docs/flexible.md 9):
/// the config's `drive` list on the serial oracle. At each evaluation the driven coordinates and
/// rates are set from their profiles at the stage time and the oracle's system M y'' = f + tau is
/// solved with the driven accelerations prescribed: M_FF y''_F = f_F - M_FD a_D (Cholesky of the
/// free block), the driving forces tau_D = M_DF y''_F + M_DD a_D - f_D.
#ifndef MBSP_FLEX_DRIVE_H
#define MBSP_FLEX_DRIVE_H

#include "mbspar/mbs_config.h"
#include "mbspar/mbs_flex.h"
#include "mbspar/mbs_model.h"

typedef struct {
  int k;                     ///< driven joints (0: none)
  int N;                     ///< the oracle's generalized velocities
  int dof[MBS_DRIVE_MAX];    ///< their dofs
  int qa[MBS_DRIVE_MAX];     ///< their coordinates
  double q0[MBS_DRIVE_MAX];  ///< the model's initial coordinates (the profiles start there)
  double vel[MBS_DRIVE_MAX]; ///< the last evaluation's prescribed rates
  double tau[MBS_DRIVE_MAX]; ///< the last evaluation's driving forces
  double max[MBS_DRIVE_MAX]; ///< the largest |driving force| of this invocation
  long solves;               ///< evaluations with drives
  int *free_;                ///< (N - k) the undriven velocity indices
  double *Mf, *bf;           ///< (N - k)^2, (N) scratch
} mbspFlexDrive;

/// Set up the drives of \p cfg on model \p m (the oracle has \p N generalized velocities):
/// FILE:LINE and MBS_ERR_UNSUPPORTED for a profile the flexible run does not take (motion).
mbsErr mbsp_flexDriveSetup(mbspFlexDrive *d, const mbsConfig *cfg, const mbsModel *m, int N);
void mbsp_flexDriveFree(mbspFlexDrive *d);
/// Overwrite the driven coordinates and rates of q and y with the profiles at time \p t.
void mbsp_flexDriveState(mbspFlexDrive *d, const mbsConfig *cfg, double t, double *q, double *y);
/// The generalized accelerations \p ydd (N) at (q, y, eta) with the driven ones prescribed at
/// time \p t (q and y already on the profiles: mbsp_flexDriveState), the driving forces in d->tau;
/// returns the drives' power sum tau_j qd_j.
mbsErr mbsp_flexDriveAccel(mbspFlexDrive *d, const mbsConfig *cfg, mbsFlexOracle *o, double t,
                           const double *q, const double *y, const double *eta, double *ydd,
                           double *power);

#endif
