/// \file mbs_motion.h
/// A user motion for `mbspar inverse` (docs/model.md, inverse.motion): a CSV file with a `t`
/// column and joint coordinates named as in trajectory.csv (q_BODY or q_BODY_COMPONENT), with
/// rates qd_* and accelerations qdd_* given or, where absent, from not-a-knot cubic splines
/// through the samples. Coordinates without a column stay at the model's q0 at rest; tau_*
/// columns are ignored, so an inverse.csv can be fed back.
#ifndef MBS_MOTION_H
#define MBS_MOTION_H

#include "mbs_model.h"

typedef struct {
  int ns;                           ///< samples (rows)
  mbsReal *t;                       ///< (ns) times, strictly increasing
  mbsReal *q;                       ///< (ns x nq)
  mbsReal *qd;                      ///< (ns x nv)
  mbsReal *qdd;                     ///< (ns x nv)
  int given_q, given_qd, given_qdd; ///< columns found of each kind
} mbsMotion;

/// Read the motion from CSV \p text (NUL-terminated) of file \p filename for model \p m.
/// Quaternion coordinates (spherical, free) are normalised per sample; their rates, when not
/// given, are w = 2 vec(conj(q) (x) q') and w' = 2 vec(conj(q) (x) q'') from the splines of the
/// four components (free joints: linear parts are plain coordinates). Errors: MBS_ERR_INPUT
/// "FILE:LINE: message" (unknown column, not a number, ragged row, times not increasing, fewer
/// than two rows, no t column). Local.
mbsErr mbs_motionRead(const mbsModel *m, const char *text, const char *filename, mbsMotion **mo);
/// Free and NULL (NULL is a no-op).
void mbs_motionDestroy(mbsMotion **mo);

/// Derivatives at the knots of the not-a-knot cubic spline through (t_i, y_i), i < n (n >= 2;
/// n = 2: the line, n = 3: the parabola): dy (n) and d2y (n); \p work holds 5 n reals. Local.
void mbsu_splineKnots(int n, const mbsReal *t, const mbsReal *y, mbsReal *dy, mbsReal *d2y,
                      mbsReal *work);

#endif
