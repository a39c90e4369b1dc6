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

// a link's inertial: mass, com and the tensor in the link frame (0 without one)
static inline double mbs_tmjInertial(xmlNode *link, double *c, double *I) {
  xmlNode *in = mbs_tmjChild(link, "inertial");
  xmlNode *o = in ? mbs_tmjChild(in, "origin") : NULL,
          *I0 = in ? mbs_tmjChild(in, "inertia") : NULL;
  xmlNode *ms = in ? mbs_tmjChild(in, "mass") : NULL;
  double rpy[3] = {0, 0, 0}, R[9], A[9] = {0}, T[9];
  memset(c, 0, 3 * sizeof *c), memset(I, 0, 9 * sizeof *I);
  if (!ms) return 0;
  if (o) mbs_tmjAttr3(o, "xyz", c), mbs_tmjAttr3(o, "rpy", rpy);
  if (I0) {
    A[0] = mbs_tmjAttr(I0, "ixx"), A[4] = mbs_tmjAttr(I0, "iyy"), A[8] = mbs_tmjAttr(I0, "izz");
    A[1] = A[3] = mbs_tmjAttr(I0, "ixy"), A[2] = A[6] = mbs_tmjAttr(I0, "ixz");
    A[5] = A[7] = mbs_tmjAttr(I0, "iyz");
  }
  mbs_tmjRpyMat(rpy, R);
  for (int r = 0; r < 3; r++)
    for (int q = 0; q < 3; q++)
      T[3 * r + q] = R[3 * r] * A[q] + R[3 * r + 1] * A[3 + q] + R[3 * r + 2] * A[6 + q];
  for (int r = 0; r < 3; r++)
    for (int q = 0; q < 3; q++)
      I[3 * r + q] =
          T[3 * r] * R[3 * q] + T[3 * r + 1] * R[3 * q + 1] + T[3 * r + 2] * R[3 * q + 2];
  return mbs_tmjAttr(ms, "value");
}

// MuJoCo 2.2 refuses a body whose principal moments violate A + B >= C before it fuses static
// bodies, even where the body is welded to another (real URDFs have such links: TALOS's gripper
// motor, Go1's dummy root). The same robot for MuJoCo: such a link on a fixed joint gives its
// inertial to its parent link (mass, centre of mass and inertia combined exactly, written in the
// parent's frame); the root, welded to the world in MuJoCo, loses it (it moves nothing). Links
// of moving joints are left as they are. Returns the number of links changed.
static inline int mbs_tmjFold(xmlNode *robot) {
  int changed = 0;
  for (xmlNode *n = robot->children; n; n = n->next) {
    if (n->type != XML_ELEMENT_NODE || strcmp((const char *)n->name, "link")) continue;
    double c[3], I[9], ev[3], V[9];
    double m = mbs_tmjInertial(n, c, I);
    if (m <= 0) continue;
    mbs_tmjEig3(I, ev, V);
    double big = fmax(ev[0], fmax(ev[1], ev[2])), sum = ev[0] + ev[1] + ev[2];
    if (2 * big <= sum * (1 + 1e-12)) continue; // A + B >= C: MuJoCo takes it
    xmlChar *name = xmlGetProp(n, (const xmlChar *)"name");
    xmlNode *joint = NULL, *parent = NULL;
    for (xmlNode *j = robot->children; j && name; j = j->next) {
      if (j->type != XML_ELEMENT_NODE || strcmp((const char *)j->name, "joint")) continue;
      xmlNode *ch = mbs_tmjChild(j, "child");
      xmlChar *cl = ch ? xmlGetProp(ch, (const xmlChar *)"link") : NULL;
      if (cl && !strcmp((const char *)cl, (const char *)name)) joint = j;
      xmlFree(cl);
    }
    xmlChar *type = joint ? xmlGetProp(joint, (const xmlChar *)"type") : NULL;
    int fixed = type && !strcmp((const char *)type, "fixed");
    xmlFree(type);
    if (joint && !fixed) {
      xmlFree(name);
      continue;
    }
    if (joint) {
      xmlNode *pj = mbs_tmjChild(joint, "parent");
      xmlChar *pl = pj ? xmlGetProp(pj, (const xmlChar *)"link") : NULL;
      for (xmlNode *l = robot->children; l && pl; l = l->next)
        if (l->type == XML_ELEMENT_NODE && !strcmp((const char *)l->name, "link")) {
          xmlChar *ln = xmlGetProp(l, (const xmlChar *)"name");
          if (ln && !strcmp((const char *)ln, (const char *)pl)) parent = l;
          xmlFree(ln);
        }
      xmlFree(pl);
    }
    xmlFree(name);
    if (parent) { // the child's inertial in the parent frame: p + R c, R I R^T
      xmlNode *o = mbs_tmjChild(joint, "origin");
      double xyz[3] = {0, 0, 0}, rpy[3] = {0, 0, 0}, R[9], cc[3], Ic[9], T[9];
      if (o) mbs_tmjAttr3(o, "xyz", xyz), mbs_tmjAttr3(o, "rpy", rpy);
      mbs_tmjRpyMat(rpy, R);
      for (int r = 0; r < 3; r++)
        cc[r] = xyz[r] + R[3 * r] * c[0] + R[3 * r + 1] * c[1] + R[3 * r + 2] * c[2];
      for (int r = 0; r < 3; r++)
        for (int q = 0; q < 3; q++)
          T[3 * r + q] = R[3 * r] * I[q] + R[3 * r + 1] * I[3 + q] + R[3 * r + 2] * I[6 + q];
      for (int r = 0; r < 3; r++)
        for (int q = 0; q < 3; q++)
          Ic[3 * r + q] =
              T[3 * r] * R[3 * q] + T[3 * r + 1] * R[3 * q + 1] + T[3 * r + 2] * R[3 * q + 2];
      double cp[3], Ip[9], mp = mbs_tmjInertial(parent, cp, Ip), M = mp + m, C[3], J[9];
      for (int r = 0; r < 3; r++) C[r] = (mp * cp[r] + m * cc[r]) / M;
      for (int r = 0; r < 9; r++) J[r] = Ip[r] + Ic[r];
      for (int side = 0; side < 2; side++) { // parallel axes to the combined centre
        double mm = side ? m : mp, d[3], dd = 0;
        for (int r = 0; r < 3; r++) d[r] = (side ? cc[r] : cp[r]) - C[r], dd += d[r] * d[r];
        for (int r = 0; r < 3; r++)
          for (int q = 0; q < 3; q++) J[3 * r + q] += mm * ((r == q ? dd : 0) - d[r] * d[q]);
      }
      xmlNode *old = mbs_tmjChild(parent, "inertial");
      if (old) xmlUnlinkNode(old), xmlFreeNode(old);
      xmlNode *in = xmlNewChild(parent, NULL, (const xmlChar *)"inertial", NULL);
      char buf[160];
      xmlNode *on = xmlNewChild(in, NULL, (const xmlChar *)"origin", NULL);
      snprintf(buf, sizeof buf, "%.17g %.17g %.17g", C[0], C[1], C[2]);
      xmlNewProp(on, (const xmlChar *)"xyz", (const xmlChar *)buf);
      xmlNewProp(on, (const xmlChar *)"rpy", (const xmlChar *)"0 0 0");
      xmlNode *mn = xmlNewChild(in, NULL, (const xmlChar *)"mass", NULL);
      snprintf(buf, sizeof buf, "%.17g", M);
      xmlNewProp(mn, (const xmlChar *)"value", (const xmlChar *)buf);
      xmlNode *In = xmlNewChild(in, NULL, (const xmlChar *)"inertia", NULL);
      static const char *const nm[6] = {"ixx", "iyy", "izz", "ixy", "ixz", "iyz"};
      static const int at[6] = {0, 4, 8, 1, 2, 5};
      for (int k = 0; k < 6; k++) {
        snprintf(buf, sizeof buf, "%.17g", J[at[k]]);
        xmlNewProp(In, (const xmlChar *)nm[k], (const xmlChar *)buf);
      }
    }
    xmlNode *old = mbs_tmjChild(n, "inertial");
    if (old) xmlUnlinkNode(old), xmlFreeNode(old);
    changed++;
  }
  return changed;
}

/// Write URDF \p text to \p path for MuJoCo: every inertial in its principal axes, everything
/// else as it is; a <mujoco><compiler fusestatic="false" inertiafromgeom="false"
/// balanceinertia="false"/></mujoco> added when the file has no <mujoco> element. 0 or -1.
static inline int mbs_testMujocoFile(const char *text, size_t len, const char *path) {
  xmlDoc *doc = xmlReadMemory(text, (int)len, "robot.urdf", NULL, XML_PARSE_NONET);
  if (!doc) return -1;
  xmlNode *robot = xmlDocGetRootElement(doc);
  while (mbs_tmjFold(robot) > 0) { // a parent may now need folding in turn
  }
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
