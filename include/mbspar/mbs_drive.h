/// \file mbs_drive.h
/// Driven joints in forward dynamics (issue 34 item 5, docs/model.md "Driven joints"): a revolute
/// or prismatic joint of `run` follows a prescribed motion q(t) while the rest of the model moves
/// freely; the driving force is whatever the equations of motion need for it. The config's
/// top-level list `drive` (src/config_drive.c) gives, per driven joint, the body whose joint it
/// is and a profile:
///   spinup     q0 + (w/T) (t^2/2 + (T/2pi)^2 (cos(2 pi t/T) - 1)) for t < T, then
///              q0 + w (t - T/2): the rate rises smoothly from 0 to `speed` w over T (the
///              spin-up of Kane, Ryan and Banerjee, 1987), then stays;
///   cycloidal  seed 003's cycloid from q0 to `q_end` over T (rate and acceleration 0 at both
///              ends), then held;
///   sine       q0 + A sin(2 pi f t): `amplitude` A, `frequency` f [Hz] (a shaker);
///   motion     the joint's column of a motion file (`file`: the CSV of `inverse.motion`,
///              mbs_motion.h: t, q_BODY and optionally qd_BODY, qdd_BODY; missing rates from
///              not-a-knot splines), between the samples the cubic Hermite interpolant of q
///              and q̇ at the samples (the spline itself where the rates came from it).
/// q0 is the joint's initial coordinate of the model; the profile replaces its q0 rate.
#ifndef MBS_DRIVE_H
#define MBS_DRIVE_H

#include "mbs_types.h"

/// Largest number of driven joints.
#define MBS_DRIVE_MAX 16

/// The profiles, as named in the config.
typedef enum {
  MBS_DRIVE_SPINUP,
  MBS_DRIVE_CYCLOIDAL,
  MBS_DRIVE_SINE,
  MBS_DRIVE_MOTION,
  MBS_DRIVE_NPROFILE
} mbsDriveProfile;

/// One driven joint as the config gives it.
typedef struct {
  char *body;    ///< the body whose joint is driven
  int line;      ///< its line in the config (messages)
  int profile;   ///< mbsDriveProfile
  mbsReal speed; ///< spinup: final rate (rad/s or m/s)
  mbsReal T;     ///< spinup, cycloidal: duration [s]
  mbsReal q_end; ///< cycloidal: final coordinate (rad or m)
  mbsReal amp;   ///< sine: amplitude (rad or m)
  mbsReal freq;  ///< sine: frequency [Hz]
  char *file;    ///< motion: the CSV, resolved against the config's directory
} mbsDriveSpec;

/// The names of the profiles (NULL-terminated, index = mbsDriveProfile).
extern const char *const mbs_drive_profile_names[];

/// The prescribed coordinate, rate and acceleration of drive \p d at time \p t (t < 0 is taken
/// as 0) from the joint's initial coordinate \p q0.
void mbs_driveEval(const mbsDriveSpec *d, mbsReal q0, mbsReal t, mbsReal *q, mbsReal *qd,
                   mbsReal *qdd);

/// Drive of profile `motion`: q, q̇, q̈ at time \p t of coordinate \p iq (rate \p iv) of a
/// motion with \p ns samples at times \p ts (strictly increasing; t clamped to their range),
/// positions \p q (ns x nq) and rates \p qd (ns x nv): the cubic Hermite interpolant on t's
/// interval. Local.
void mbs_driveMotionEval(int ns, const mbsReal *ts, const mbsReal *q, const mbsReal *qd, int nq,
                         int nv, int iq, int iv, mbsReal t, mbsReal *qo, mbsReal *qdo,
                         mbsReal *qddo);

/// Solve the dense k x k system A x = b in place (Gaussian elimination with partial pivoting;
/// A row-major, overwritten; b becomes x). 0 on success, -1 if a pivot is zero or not finite.
int mbs_driveSolve(int k, mbsReal *A, mbsReal *b);

#endif
