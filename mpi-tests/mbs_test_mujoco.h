/// \file mbs_test_mujoco.h
/// What the MuJoCo comparisons of URDF robots share (test_robots_mujoco.c): the URDF written
/// for MuJoCo with every inertial in its principal axes. MuJoCo 2.2's compiler diagonalises a
/// full tensor itself with an eigensolver that stops near 1e-8 relative, which alone moves q̈ by
/// ~1e-7; diagonalised here to roundoff (cyclic Jacobi rotations) it is the same robot.
#ifndef MBS_TEST_MUJOCO_H
#define MBS_TEST_MUJOCO_H

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// symmetric 3x3 A = V diag(ev) V^T by cyclic Jacobi rotations (to roundoff), det V = +1
static inline void mbs_tmjEig3(const double *Ain, double *ev, double *V) {
  double A[9];
  memcpy(A, Ain, sizeof A);
  for (int k = 0; k < 9; k++) V[k] = k % 4 == 0;
  for (int sweep = 0; sweep < 60; sweep++) {
    if (fabs(A[1]) + fabs(A[2]) + fabs(A[5]) <= 1e-300) break;
    for (int p = 0; p < 2; p++)
      for (int q = p + 1; q < 3; q++) {
        double apq = A[3 * p + q];
        if (apq == 0) continue;
        double th = 0.5 * (A[3 * q + q] - A[3 * p + p]) / apq;
        double t = (th >= 0 ? 1 : -1) / (fabs(th) + sqrt(th * th + 1));
        double c = 1 / sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < 3; k++) { // A <- J^T A J, V <- V J
          double akp = A[3 * k + p], akq = A[3 * k + q];
          A[3 * k + p] = c * akp - s * akq, A[3 * k + q] = s * akp + c * akq;
        }
        for (int k = 0; k < 3; k++) {
          double apk = A[3 * p + k], aqk = A[3 * q + k];
          A[3 * p + k] = c * apk - s * aqk, A[3 * q + k] = s * apk + c * aqk;
        }
        for (int k = 0; k < 3; k++) {
          double vkp = V[3 * k + p], vkq = V[3 * k + q];
          V[3 * k + p] = c * vkp - s * vkq, V[3 * k + q] = s * vkp + c * vkq;
        }
      }
  }
  for (int k = 0; k < 3; k++) ev[k] = A[4 * k];
  double det = V[0] * (V[4] * V[8] - V[5] * V[7]) - V[1] * (V[3] * V[8] - V[5] * V[6]) +
               V[2] * (V[3] * V[7] - V[4] * V[6]);
  if (det < 0)
    for (int k = 0; k < 3; k++) V[3 * k + 2] = -V[3 * k + 2];
}

// URDF roll, pitch, yaw <-> R = Rz(y) Ry(p) Rx(r)
static inline void mbs_tmjRpyMat(const double *rpy, double *R) {
  double cr = cos(rpy[0]), sr = sin(rpy[0]), cp = cos(rpy[1]), sp = sin(rpy[1]);
  double cy = cos(rpy[2]), sy = sin(rpy[2]);
  R[0] = cy * cp, R[1] = cy * sp * sr - sy * cr, R[2] = cy * sp * cr + sy * sr;
  R[3] = sy * cp, R[4] = sy * sp * sr + cy * cr, R[5] = sy * sp * cr - cy * sr;
  R[6] = -sp, R[7] = cp * sr, R[8] = cp * cr;
}
static inline void mbs_tmjMatRpy(const double *R, double *rpy) {
  rpy[1] = asin(fmax(-1, fmin(1, -R[6])));
  rpy[0] = atan2(R[7], R[8]);
  rpy[2] = atan2(R[3], R[0]);
}

static inline double mbs_tmjAttr(xmlNode *n, const char *name) {
  xmlChar *a = xmlGetProp(n, (const xmlChar *)name);
  double v = a ? strtod((const char *)a, NULL) : 0;
  xmlFree(a);
  return v;
}
static inline void mbs_tmjAttr3(xmlNode *n, const char *name, double *v) {
  xmlChar *a = xmlGetProp(n, (const xmlChar *)name);
  const char *p = (const char *)a;
  for (int k = 0; k < 3; k++) {
    char *end;
    v[k] = p ? strtod(p, &end) : 0;
    if (p) p = end;
  }
  xmlFree(a);
}
static inline xmlNode *mbs_tmjChild(xmlNode *n, const char *name) {
  for (xmlNode *c = n->children; c; c = c->next)
    if (c->type == XML_ELEMENT_NODE && !strcmp((const char *)c->name, name)) return c;
  return NULL;
}

// an <inertial> rewritten in its principal axes: diagonal tensor, rpy of R_in V
static inline void mbs_tmjPrincipal(xmlNode *in) {
  xmlNode *o = mbs_tmjChild(in, "origin"), *I = mbs_tmjChild(in, "inertia");
  if (!I) return;
  double rpy[3] = {0, 0, 0}, Rin[9], A[9], ev[3], V[9], R[9], nrpy[3];
  if (o) mbs_tmjAttr3(o, "rpy", rpy);
  mbs_tmjRpyMat(rpy, Rin);
  A[0] = mbs_tmjAttr(I, "ixx"), A[4] = mbs_tmjAttr(I, "iyy"), A[8] = mbs_tmjAttr(I, "izz");
  A[1] = A[3] = mbs_tmjAttr(I, "ixy"), A[2] = A[6] = mbs_tmjAttr(I, "ixz");
  A[5] = A[7] = mbs_tmjAttr(I, "iyz");
  mbs_tmjEig3(A, ev, V);
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++)
      R[3 * r + c] = Rin[3 * r] * V[c] + Rin[3 * r + 1] * V[3 + c] + Rin[3 * r + 2] * V[6 + c];
  mbs_tmjMatRpy(R, nrpy);
  char buf[128];
  if (!o) o = xmlNewChild(in, NULL, (const xmlChar *)"origin", NULL);
  snprintf(buf, sizeof buf, "%.17g %.17g %.17g", nrpy[0], nrpy[1], nrpy[2]);
  xmlSetProp(o, (const xmlChar *)"rpy", (const xmlChar *)buf);
  static const char *const names[6] = {"ixx", "iyy", "izz", "ixy", "ixz", "iyz"};
  for (int k = 0; k < 6; k++) {
    snprintf(buf, sizeof buf, "%.17g", k < 3 ? ev[k] : 0.0);
    xmlSetProp(I, (const xmlChar *)names[k], (const xmlChar *)buf);
  }
}

/// Write URDF \p text to \p path for MuJoCo: every inertial in its principal axes, everything
/// else as it is; a <mujoco><compiler fusestatic="false" inertiafromgeom="false"
/// balanceinertia="false"/></mujoco> added when the file has no <mujoco> element. 0 or -1.
static inline int mbs_testMujocoFile(const char *text, size_t len, const char *path) {
  xmlDoc *doc = xmlReadMemory(text, (int)len, "robot.urdf", NULL, XML_PARSE_NONET);
  if (!doc) return -1;
  xmlNode *robot = xmlDocGetRootElement(doc);
  for (xmlNode *n = robot->children; n; n = n->next) {
    if (n->type != XML_ELEMENT_NODE || strcmp((const char *)n->name, "link")) continue;
    xmlNode *in = mbs_tmjChild(n, "inertial");
    if (in) mbs_tmjPrincipal(in);
  }
  if (!mbs_tmjChild(robot, "mujoco")) {
    xmlNode *mj = xmlNewChild(robot, NULL, (const xmlChar *)"mujoco", NULL);
    xmlNode *cp = xmlNewChild(mj, NULL, (const xmlChar *)"compiler", NULL);
    xmlNewProp(cp, (const xmlChar *)"fusestatic", (const xmlChar *)"false");
    xmlNewProp(cp, (const xmlChar *)"inertiafromgeom", (const xmlChar *)"false");
    xmlNewProp(cp, (const xmlChar *)"balanceinertia", (const xmlChar *)"false");
  }
  int rc = xmlSaveFile(path, doc) < 0 ? -1 : 0;
  xmlFreeDoc(doc);
  return rc;
}

#endif
