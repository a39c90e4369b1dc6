/// \file body.c
/// The table of body kinds (body.h, docs/code.md "Adding a body kind"): the rigid body's row, and
/// the points fixed to a body.
#include "body.h"

#include <string.h>

static void mbs_rigidInertiaMul(const mbsModel *m, int b, const mbsReal *a, mbsReal *f) {
  mbsu_rbiMul(m->body_sinert + 10 * b, a, f);
}
static void mbs_rigidInertiaFull(const mbsModel *m, int b, mbsReal *I6) {
  mbsu_rbiFull(m->body_sinert + 10 * b, I6);
}
static void mbs_rigidInertiaSym6(const mbsModel *m, int b, mbsReal *P) {
  mbsu_sym6FromRbi(m->body_sinert + 10 * b, P);
}
// a point fixed in the body frame: x + R pt, velocity R (w x pt + v) (cvel in body coordinates)
static void mbs_rigidPointWorld(const mbsModel *m, const mbsWork *w, int b, const mbsReal *pt,
                                int vel, mbsReal *p, mbsReal *pd) {
  (void)m;
  const mbsReal *R = w->xmat + 9 * b, *v = w->cvel + 6 * b;
  mbsu_mulMat3Vec(R, pt, p);
  for (int i = 0; i < 3; i++) p[i] += w->xpos[3 * b + i];
  if (vel) {
    mbsReal t[3];
    mbsu_cross3(v, pt, t);
    for (int i = 0; i < 3; i++) t[i] += v[3 + i];
    mbsu_mulMat3Vec(R, t, pd);
  } else {
    pd[0] = pd[1] = pd[2] = 0;
  }
}

const mbsBodyKind mbs_bodyKinds[MBS_BODY_NKIND] = {
    [MBS_BODY_RIGID] = {.name = "rigid",
                        .nmodes = 0,
                        .inertia_mul = mbs_rigidInertiaMul,
                        .inertia_full = mbs_rigidInertiaFull,
                        .inertia_sym6 = mbs_rigidInertiaSym6,
                        .point_world = mbs_rigidPointWorld},
};

const mbsBodyKind *mbs_bodyKindRow(int kind) {
  return &mbs_bodyKinds[kind >= 0 && kind < MBS_BODY_NKIND ? kind : MBS_BODY_RIGID];
}

void mbs_bodyPointWorld(const mbsModel *m, const mbsWork *w, int b, const mbsReal *pt, int vel,
                        mbsReal *p, mbsReal *pd) {
  if (b < 0) { // the ground
    memcpy(p, pt, 3 * sizeof(mbsReal));
    pd[0] = pd[1] = pd[2] = 0;
    return;
  }
  mbs_bodyKindRow(mbs_bodyKindOf(m, b))->point_world(m, w, b, pt, vel, p, pd);
}
