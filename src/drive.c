/// \file drive.c
/// The profiles of driven joints and the small dense solve of their forces (mbs_drive.h,
/// docs/model.md "Driven joints").
#include "mbspar/mbs_drive.h"

#include <math.h>
#include "mbspar/mbs_trajectory.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

const char *const mbs_drive_profile_names[] = {"spinup", "cycloidal", "sine", "motion", NULL};

void mbs_driveMotionEval(int ns, const mbsReal *ts, const mbsReal *q, const mbsReal *qd, int nq,
                         int nv, int iq, int iv, mbsReal t, mbsReal *qo, mbsReal *qdo,
                         mbsReal *qddo) {
  if (t < ts[0]) t = ts[0];
  if (t > ts[ns - 1]) t = ts[ns - 1];
  int lo = 0, hi = ns - 1; // the interval [ts[lo], ts[lo + 1]] holding t
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    if (ts[mid] <= t)
      lo = mid;
    else
      hi = mid;
  }
  mbsReal h = ts[lo + 1] - ts[lo], s = (t - ts[lo]) / h, s2 = s * s, s3 = s2 * s;
  mbsReal y0 = q[(size_t)lo * nq + iq], y1 = q[(size_t)(lo + 1) * nq + iq];
  mbsReal v0 = h * qd[(size_t)lo * nv + iv], v1 = h * qd[(size_t)(lo + 1) * nv + iv];
  *qo = (2 * s3 - 3 * s2 + 1) * y0 + (s3 - 2 * s2 + s) * v0 + (-2 * s3 + 3 * s2) * y1 +
        (s3 - s2) * v1;
  *qdo = ((6 * s2 - 6 * s) * y0 + (3 * s2 - 4 * s + 1) * v0 + (-6 * s2 + 6 * s) * y1 +
          (3 * s2 - 2 * s) * v1) /
         h;
  *qddo = ((12 * s - 6) * y0 + (6 * s - 4) * v0 + (-12 * s + 6) * y1 + (6 * s - 2) * v1) / (h * h);
}

void mbs_driveEval(const mbsDriveSpec *d, mbsReal q0, mbsReal t, mbsReal *q, mbsReal *qd,
                   mbsReal *qdd) {
  if (t < 0) t = 0;
  switch (d->profile) {
  case MBS_DRIVE_SPINUP: {
    mbsReal w = d->speed, T = d->T;
    if (t < T) {
      mbsReal c = T / (2 * M_PI), a = 2 * M_PI * t / T;
      *q = q0 + w / T * (0.5 * t * t + c * c * (cos(a) - 1));
      *qd = w / T * (t - c * sin(a));
      *qdd = w / T * (1 - cos(a));
    } else {
      *q = q0 + w * (t - 0.5 * T);
      *qd = w;
      *qdd = 0;
    }
    break;
  }
  case MBS_DRIVE_CYCLOIDAL:
    mbsu_cycloid(q0, d->q_end, d->T, t, q, qd, qdd);
    break;
  case MBS_DRIVE_MOTION: // mbs_driveMotionEval with the motion's data (the caller has them)
    *q = q0, *qd = 0, *qdd = 0;
    break;
  default: { // sine
    mbsReal om = 2 * M_PI * d->freq;
    *q = q0 + d->amp * sin(om * t);
    *qd = d->amp * om * cos(om * t);
    *qdd = -d->amp * om * om * sin(om * t);
    break;
  }
  }
}

int mbs_driveSolve(int k, mbsReal *A, mbsReal *b) {
  for (int c = 0; c < k; c++) {
    int p = c;
    for (int r = c + 1; r < k; r++)
      if (fabs(A[r * k + c]) > fabs(A[p * k + c])) p = r;
    if (!(fabs(A[p * k + c]) > 0) || !isfinite(A[p * k + c])) return -1;
    if (p != c) {
      for (int j = 0; j < k; j++) {
        mbsReal t = A[c * k + j];
        A[c * k + j] = A[p * k + j], A[p * k + j] = t;
      }
      mbsReal t = b[c];
      b[c] = b[p], b[p] = t;
    }
    for (int r = c + 1; r < k; r++) {
      mbsReal f = A[r * k + c] / A[c * k + c];
      for (int j = c; j < k; j++) A[r * k + j] -= f * A[c * k + j];
      b[r] -= f * b[c];
    }
  }
  for (int c = k - 1; c >= 0; c--) {
    mbsReal s = b[c];
    for (int j = c + 1; j < k; j++) s -= A[c * k + j] * b[j];
    b[c] = s / A[c * k + c];
  }
  return 0;
}
