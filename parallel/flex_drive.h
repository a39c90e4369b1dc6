/// \file flex_drive.h
/// Driven joints of a model with flexible bodies (issue 34 item 5; docs/flexible.md 9): in `run`
/// the config's `drive` list (its profiles and motion files), in `inverse` every joint on the
/// prescribed motion of the config's inverse group (docs/flexible.md 11). At each evaluation the
/// driven coordinates and rates are set from their profiles at the stage time and the oracle's
/// system M y'' = f + tau is solved with the driven accelerations prescribed: M_FF y''_F = f_F -
/// M_FD a_D (Cholesky of the free block), the driving forces tau_D = M_DF y''_F + M_DD a_D - f_D.
#ifndef MBSP_FLEX_DRIVE_H
#define MBSP_FLEX_DRIVE_H

#include "mbspar/mbs_config.h"
#include "mbspar/mbs_flex.h"
#include "mbspar/mbs_model.h"
#include "mbspar/mbs_motion.h"
#include "flex_par.h"

typedef struct {
  int k;           ///< driven joints (0: none); in inverse mode every dof of the joints
  int N;           ///< the oracle's generalized velocities
  int nq, nv;      ///< the model's coordinates and rates (a motion's strides)
  int *dof;        ///< (k) their dofs
  int *qa;         ///< (k) their coordinates (-1: inverse mode, a spherical or free joint held)
  int *hb;         ///< (k) inverse mode: the body of a held joint at its first dof, else -1
  int *nqadr;      ///< (k) inverse mode: the first coordinate of the dof's joint
  int *nqnum;      ///< (k) inverse mode: the joint's coordinates
  double *q0;      ///< (k) the model's initial coordinates (the profiles start there)
  double *vel;     ///< (k) the last evaluation's prescribed rates
  double *acc;     ///< (k) the last evaluation's prescribed accelerations
  double *tau;     ///< (k) the last evaluation's driving forces
  double *max;     ///< (k) the largest |driving force| of this invocation
  long solves;     ///< evaluations with drives
  int *free_;      ///< (N - k) the undriven velocity indices
  double *Mf, *bf; ///< (N - k)^2, (N) scratch
  mbsMotion **mo;  ///< (k) run: the motion file of each `motion` drive (NULL: a profile)
  // inverse mode (mbsp_flexDriveInverse): every joint dof on the inverse group's motion
  const mbsMotion *imo;  ///< the user motion (inverse.motion), or NULL: the cycloid
  const double *qs, *qe; ///< (nq) the cycloid's start and end coordinates
  const double *acc_at;  ///< not NULL: the accelerations (nv) mbsp_flexDriveAccel prescribes
                         ///< instead of the interpolant's (a user motion's q'' at its samples)
  double T;              ///< the cycloid's duration
  mbspFlexPar *par;      ///< not NULL: evaluate on the ranges over the ranks (flex_par.h)
  mbsFlexAba *aba;       ///< not NULL: on the serial recursive algorithm (src/flex_hybrid.c)
} mbspFlexDrive;

/// Set up the drives of \p cfg on model \p m (the oracle has \p N generalized velocities): the
/// motion files of `motion` drives are read (FILE:LINE, MBS_ERR_INPUT, for a file that cannot be
/// read, has no column of the driven coordinate or does not cover 0 ... t_end).
mbsErr mbsp_flexDriveSetup(mbspFlexDrive *d, const mbsConfig *cfg, const mbsModel *m, int N);
/// Inverse mode: every dof of \p m's joints driven, by the user motion \p imo (not NULL) or the
/// cycloid of every scalar coordinate from \p qs to \p qe over \p T (mbsu_cycloid), spherical
/// and free joints held at \p qs at rest (as the rigid inverse); a user motion needs joints with
/// scalar coordinates (MBS_ERR_UNSUPPORTED otherwise).
mbsErr mbsp_flexDriveInverse(mbspFlexDrive *d, const mbsConfig *cfg, const mbsModel *m, int N,
                             const mbsMotion *imo, const double *qs, const double *qe, double T);
void mbsp_flexDriveFree(mbspFlexDrive *d);
/// Overwrite the driven coordinates and rates of q and y with the profiles at time \p t.
void mbsp_flexDriveState(mbspFlexDrive *d, const mbsConfig *cfg, double t, double *q, double *y);
/// The generalized accelerations \p ydd (N) at (q, y, eta) with the driven ones prescribed at
/// time \p t (q and y already on the profiles: mbsp_flexDriveState), the driving forces in d->tau;
/// returns the drives' power sum tau_j qd_j.
mbsErr mbsp_flexDriveAccel(mbspFlexDrive *d, const mbsConfig *cfg, mbsFlexOracle *o, double t,
                           const double *q, const double *y, const double *eta, double *ydd,
                           double *power);

/// The same on the ranges over the ranks (solver.method = schur; flex_par.h, src/flex_hybrid.c):
/// the driven joints' accelerations prescribed in the recursive algorithm's passes, their
/// driving forces summed over the ranges. Rank 0 of a served \p par set up with d's dofs
/// (mbsp_flexParBeginDriven).
mbsErr mbsp_flexDriveAccelPar(mbspFlexDrive *d, const mbsConfig *cfg, mbspFlexPar *par, double t,
                              const double *q, const double *y, const double *eta, double *ydd,
                              double *power);
/// Evaluate the drives on \p par (the ranges over the ranks, set up with d's dofs) or on the
/// serial recursive algorithm \p aba (its hybrid mode set to d's dofs here); both NULL: the
/// dense oracle passed to mbsp_flexDriveAccel.
mbsErr mbsp_flexDriveUse(mbspFlexDrive *d, mbspFlexPar *par, mbsFlexAba *aba);
/// mbsp_flexParBegin for a verb: \p mode 1 (run) with the config's drives, 2 (inverse) with every
/// dof driven, 0 undriven. Collective.
mbsErr mbsp_flexParBeginVerb(mbspComm *comm, const mbsConfig *cfg, const mbsModel *m, int mode,
                             mbspFlexPar **par, mbspComm **self, int *worker);

#endif
