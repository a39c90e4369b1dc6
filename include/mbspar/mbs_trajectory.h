/// \file mbs_trajectory.h
/// Prescribed joint motions for inverse dynamics: the seed-003 (eq. 15) cycloidal profile
///   theta(t) = theta0 + (thetaT - theta0)/T * [t - T/(2 pi) sin(2 pi t / T)],
/// whose rate and acceleration vanish at t = 0 and t = T, and one inverse-dynamics sample on it.
#ifndef MBS_TRAJECTORY_H
#define MBS_TRAJECTORY_H

#include "mbs_dynamics.h"

/// Evaluate the cycloidal profile and its first two derivatives at time \p t (clamped to [0, T]).
void mbsu_cycloid(mbsReal theta0, mbsReal thetaT, mbsReal T, mbsReal t, mbsReal *q, mbsReal *qd,
                  mbsReal *qdd);

/// One inverse-dynamics sample at time \p t: every coordinate of a scalar-coordinate joint
/// (revolute, prismatic, cylindrical, universal) follows the cycloid from q_start to q_end over
/// \p T; other joints stay at q_start with zero velocity and acceleration. Sets s->q, s->qd and
/// \p qdd (nv), runs mbs_fwdPosition, mbs_fwdVelocity and mbs_rnea, and returns in \p tau (nv)
/// the actuator force needed on top of the model's joint springs, dampers and constant forces
/// (tau = RNEA(q, qd, qdd) - applied joint forces).
/// Writes: s->q, s->qd, w (position, velocity, RNEA stages).
void mbs_inverseSample(const mbsModel *m, mbsState *s, mbsWork *w, const mbsReal *q_start,
                       const mbsReal *q_end, mbsReal T, mbsReal t, mbsReal *qdd, mbsReal *tau);

#endif
