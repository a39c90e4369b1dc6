/// \file trajectory.c
/// Prescribed joint motions (seed 003, eq. 15) and the inverse-dynamics sample on them.
#include <math.h>
#include <string.h>
#include "mbspar/mbs_trajectory.h"
#include "mbspar/mbs_loops.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

void mbsu_cycloid(mbsReal theta0, mbsReal thetaT, mbsReal T, mbsReal t, mbsReal *q, mbsReal *qd,
                  mbsReal *qdd) {
  if (t < 0) t = 0;
  if (t > T) t = T;
  mbsReal d = (thetaT - theta0) / T, w = 2 * M_PI / T;
  // theta = theta0 + d [t - sin(w t)/w]; theta' = d [1 - cos(w t)]; theta'' = d w sin(w t)
  *q = theta0 + d * (t - sin(w * t) / w);
  *qd = d * (1 - cos(w * t));
  *qdd = d * w * sin(w * t);
}

void mbs_inverseSample(const mbsModel *m, mbsState *s, mbsWork *w, const mbsReal *q_start,
                       const mbsReal *q_end, mbsReal T, mbsReal t, mbsReal *qdd, mbsReal *tau) {
  // prescribed state: cycloid on scalar-coordinate joints, others held at q_start
  memcpy(s->q, q_start, (size_t)m->nq * sizeof(mbsReal));
  memset(s->qd, 0, (size_t)m->nv * sizeof(mbsReal));
  memset(qdd, 0, (size_t)m->nv * sizeof(mbsReal));
  for (int b = 0; b < m->nbody; b++) {
    if (m->body_qnum[b] != m->body_dofnum[b]) continue;
    for (int k = 0; k < m->body_qnum[b]; k++) {
      int iq = m->body_qadr[b] + k, iv = m->body_dofadr[b] + k;
      mbsu_cycloid(q_start[iq], q_end[iq], T, t, &s->q[iq], &s->qd[iv], &qdd[iv]);
    }
  }
  s->time = t;
  // tau = M qdd + c(q, qd) - applied joint forces
  mbs_fwdPosition(m, s, w);
  mbs_fwdVelocity(m, s, w);
  if (m->nforce) mbs_fwdForces(m, w); // spring-dampers (docs/loops.md)
  mbs_rnea(m, w, qdd);
  for (int d = 0; d < m->nv; d++) tau[d] = w->qfrc_inv[d] - w->qfrc[d];
}
