/// \file poses.c
/// Per-body output quantities: world poses, centres of mass, velocities, joint wrenches.
#include <math.h>
#include "mbspar/mbs_poses.h"
#include "spatial.h"
#include "body.h"

void mbsu_mat2Quat(const mbsReal *R, mbsReal *q) {
  // Shepperd: pivot on the largest of w^2, x^2, y^2, z^2 for accuracy
  mbsReal tr = R[0] + R[4] + R[8];
  if (tr >= R[0] && tr >= R[4] && tr >= R[8]) {
    mbsReal s = 2 * sqrt(1 + tr);
    q[0] = 0.25 * s;
    q[1] = (R[7] - R[5]) / s, q[2] = (R[2] - R[6]) / s, q[3] = (R[3] - R[1]) / s;
  } else if (R[0] >= R[4] && R[0] >= R[8]) {
    mbsReal s = 2 * sqrt(1 + R[0] - R[4] - R[8]);
    q[0] = (R[7] - R[5]) / s, q[1] = 0.25 * s;
    q[2] = (R[1] + R[3]) / s, q[3] = (R[2] + R[6]) / s;
  } else if (R[4] >= R[8]) {
    mbsReal s = 2 * sqrt(1 + R[4] - R[0] - R[8]);
    q[0] = (R[2] - R[6]) / s, q[1] = (R[1] + R[3]) / s;
    q[2] = 0.25 * s, q[3] = (R[5] + R[7]) / s;
  } else {
    mbsReal s = 2 * sqrt(1 + R[8] - R[0] - R[4]);
    q[0] = (R[3] - R[1]) / s, q[1] = (R[2] + R[6]) / s;
    q[2] = (R[5] + R[7]) / s, q[3] = 0.25 * s;
  }
  // one sign (w >= 0) and unit norm
  mbsReal n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (q[0] < 0) n = -n;
  for (int k = 0; k < 4; k++) q[k] /= n;
}

void mbs_bodyPoseWorld(const mbsModel *m, const mbsWork *w, int b, mbsReal *out) {
  const mbsReal *R = w->xmat + 9 * b, *p = w->xpos + 3 * b, *fq = m->body_framequat + 4 * b;
  out[0] = p[0], out[1] = p[1], out[2] = p[2];
  // reported frame: R_f = R F, F the frame rotation in the body frame
  mbsReal F[9], Rf[9];
  mbsu_quat2Mat(fq, F);
  mbsu_mulMat3(R, F, Rf);
  mbsu_mat2Quat(Rf, out + 3);
  // c_world = p + R c
  mbsReal c[3];
  mbsu_mulMat3Vec(R, mbs_bodyCom(m, b), c);
  for (int k = 0; k < 3; k++) out[7 + k] = p[k] + c[k];
}

void mbs_bodyVelocityWorld(const mbsModel *m, const mbsWork *w, int b, mbsReal vel[3],
                           mbsReal omega[3]) {
  (void)m;
  const mbsReal *R = w->xmat + 9 * b, *v = w->cvel + 6 * b;
  mbsu_mulMat3Vec(R, v, omega); // [omega; v] in body coordinates at the body origin
  mbsu_mulMat3Vec(R, v + 3, vel);
}

void mbs_bodyJointWrenchWorld(const mbsModel *m, const mbsWork *w, int b, mbsReal out[6]) {
  (void)m;
  mbsu_mulMat3Vec(w->xmat + 9 * b, w->jfrc + 6 * b, out);
  mbsu_mulMat3Vec(w->xmat + 9 * b, w->jfrc + 6 * b + 3, out + 3);
}
