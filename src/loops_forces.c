/// \file loops_forces.c
/// The point-to-point spring-dampers (mbs_loops.h, docs/loops.md): their wrenches on the bodies,
/// potential energy and damper power.
#include "mbspar/mbs_loops.h"

#include <math.h>
#include <string.h>
#include "flops.h"
#include "spatial.h"
#include "body.h"

// one spring-damper: unit direction u from point 1 to point 2, length, rate of the length
static void mbs_forceGeom(const mbsModel *m, const mbsWork *w, int j, int vel, mbsReal *u,
                          mbsReal *l, mbsReal *ld, mbsReal *p1) {
  mbsReal p2[3], v1[3], v2[3];
  mbs_bodyPointWorld(m, w, m->force_body[2 * j], m->force_point + 6 * j, vel, p1, v1);
  mbs_bodyPointWorld(m, w, m->force_body[2 * j + 1], m->force_point + 6 * j + 3, vel, p2, v2);
  for (int i = 0; i < 3; i++) u[i] = p2[i] - p1[i];
  *l = sqrt(mbsu_dot3(u, u));
  if (*l > 0)
    for (int i = 0; i < 3; i++) u[i] /= *l;
  else
    u[0] = u[1] = u[2] = 0; // coincident points: no direction, no force
  mbsReal dv[3] = {v2[0] - v1[0], v2[1] - v1[1], v2[2] - v1[2]};
  *ld = mbsu_dot3(u, dv);
}

// add the world force f at the world point p to body b's wrench (body coordinates, origin)
static void mbs_addWorldForce(const mbsWork *w, int b, const mbsReal *p, const mbsReal *f,
                              mbsReal *wr) {
  if (b < 0) return;
  const mbsReal *R = w->xmat + 9 * b;
  mbsReal r[3], n[3], t[6];
  for (int i = 0; i < 3; i++) r[i] = p[i] - w->xpos[3 * b + i];
  mbsu_cross3(r, f, n);
  mbsu_mulMat3TVec(R, n, t);
  mbsu_mulMat3TVec(R, f, t + 3);
  for (int i = 0; i < 6; i++) wr[6 * b + i] += t[i];
}

void mbs_fwdForces(const mbsModel *m, mbsWork *w) {
  memset(w->fext, 0, 6 * (size_t)m->nbody * sizeof(mbsReal));
  for (int j = 0; j < m->nforce; j++) {
    mbsReal u[3], l, ld, p1[3], p2[3], f[3];
    MBS_FLOPS(mbs_flopSpring(m->force_body[2 * j] >= 0, m->force_body[2 * j + 1] >= 0));
    mbs_forceGeom(m, w, j, 1, u, &l, &ld, p1);
    const mbsReal *prm = m->force_prm + 3 * j;
    mbsReal T = prm[0] * (l - prm[1]) + prm[2] * ld; // tension
    for (int i = 0; i < 3; i++) p2[i] = p1[i] + l * u[i], f[i] = T * u[i];
    mbs_addWorldForce(w, m->force_body[2 * j], p1, f, w->fext); // pulled towards point 2
    for (int i = 0; i < 3; i++) f[i] = -f[i];
    mbs_addWorldForce(w, m->force_body[2 * j + 1], p2, f, w->fext);
  }
  w->fext_on = m->nforce > 0;
}

mbsReal mbs_forcePotential(const mbsModel *m, const mbsWork *w) {
  mbsReal pe = 0;
  for (int j = 0; j < m->nforce; j++) {
    mbsReal u[3], l, ld, p1[3];
    mbs_forceGeom(m, w, j, 0, u, &l, &ld, p1);
    mbsReal e = l - m->force_prm[3 * j + 1];
    pe += 0.5 * m->force_prm[3 * j] * e * e;
  }
  return pe;
}

mbsReal mbs_forcePower(const mbsModel *m, const mbsWork *w) {
  mbsReal p = 0;
  for (int j = 0; j < m->nforce; j++) {
    mbsReal u[3], l, ld, p1[3];
    mbs_forceGeom(m, w, j, 1, u, &l, &ld, p1);
    p -= m->force_prm[3 * j + 2] * ld * ld;
  }
  return p;
}
