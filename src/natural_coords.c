/// \file natural_coords.c
/// Joint coordinates from natural coordinates (docs/natural.md 11): q and q̇ of every tree joint
/// from (p, ṗ) of its parent and child, per joint type (a table keyed by the joint table's id,
/// beside src/joint.c's), the inverse of the joint formulation's forward kinematics
/// (mbs_fwdPosition, mbs_fwdVelocity and mbs_natCoords). Angles are continued from a reference
/// (the nearest branch), quaternions take the reference's sign.
#include <math.h>
#include <string.h>
#include "mbspar/mbs_joint.h"
#include "natural_private.h"
#include "spatial.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

// one tree joint's relative motion: R (child axes in parent coordinates, row-major), r (child
// origin in parent coordinates), ṙ (its rate in the parent frame), ω (the child's angular
// velocity relative to the parent, child coordinates)
typedef struct {
  const double *a, *a2, *org; // axis, second axis, joint origin (parent coordinates)
  double R[9], r[3], rd[3], w[3];
} mbsNatRel;

// the angle of a rotation R about the unit axis u: R h1 = cos q h1 + sin q h2 (h1, h2 = u × h1
// the completion of mbsu_perpPair), continued from qref when given
static double mbs_natAngle(const double *u, const double R[9], const double *qref) {
  double h1[3], h2[3], x[3];
  mbsu_perpPair(u, h1, h2);
  mbsu_mulMat3Vec(R, h1, x);
  double q = atan2(mbsu_dot3(h2, x), mbsu_dot3(h1, x));
  if (qref) q = *qref + remainder(q - *qref, 2 * M_PI);
  return q;
}

// the unit quaternion [w x y z] of a rotation matrix (largest-component pivot), with the sign of
// qref when given (else w >= 0)
static void mbs_natQuat(const double R[9], const double *qref, double *q) {
  double tr = R[0] + R[4] + R[8], d[4] = {tr, R[0], R[4], R[8]};
  int k = 0;
  for (int i = 1; i < 4; i++)
    if (d[i] > d[k]) k = i;
  if (k == 0) {
    double s = 2 * sqrt(1 + tr); // 4 w
    q[0] = 0.25 * s, q[1] = (R[7] - R[5]) / s, q[2] = (R[2] - R[6]) / s, q[3] = (R[3] - R[1]) / s;
  } else if (k == 1) {
    double s = 2 * sqrt(1 + R[0] - R[4] - R[8]); // 4 x
    q[0] = (R[7] - R[5]) / s, q[1] = 0.25 * s, q[2] = (R[1] + R[3]) / s, q[3] = (R[2] + R[6]) / s;
  } else if (k == 2) {
    double s = 2 * sqrt(1 + R[4] - R[0] - R[8]); // 4 y
    q[0] = (R[2] - R[6]) / s, q[1] = (R[1] + R[3]) / s, q[2] = 0.25 * s, q[3] = (R[5] + R[7]) / s;
  } else {
    double s = 2 * sqrt(1 + R[8] - R[0] - R[4]); // 4 z
    q[0] = (R[3] - R[1]) / s, q[1] = (R[2] + R[6]) / s, q[2] = (R[5] + R[7]) / s, q[3] = 0.25 * s;
  }
  double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  double sg = qref
                  ? (q[0] * qref[0] + q[1] * qref[1] + q[2] * qref[2] + q[3] * qref[3] < 0 ? -1 : 1)
                  : (q[0] < 0 ? -1 : 1);
  for (int i = 0; i < 4; i++) q[i] *= sg / n;
}

// the slide along the unit axis u: q = u·(r - origin), q̇ = u·ṙ
static void mbs_natSlideQ(const mbsNatRel *J, const double *u, double *q, double *qd) {
  double d[3] = {J->r[0] - J->org[0], J->r[1] - J->org[1], J->r[2] - J->org[2]};
  *q = mbsu_dot3(u, d), *qd = mbsu_dot3(u, J->rd);
}

static void mbs_natQNone(const mbsNatRel *J, const double *qref, double *q, double *qd) {
  (void)J, (void)qref, (void)q, (void)qd;
}

static void mbs_natQRevolute(const mbsNatRel *J, const double *qref, double *q, double *qd) {
  q[0] = mbs_natAngle(J->a, J->R, qref);
  qd[0] = mbsu_dot3(J->a, J->w);
}

static void mbs_natQPrismatic(const mbsNatRel *J, const double *qref, double *q, double *qd) {
  (void)qref;
  mbs_natSlideQ(J, J->a, q, qd);
}

static void mbs_natQCylindrical(const mbsNatRel *J, const double *qref, double *q, double *qd) {
  q[0] = mbs_natAngle(J->a, J->R, qref);
  qd[0] = mbsu_dot3(J->a, J->w);
  mbs_natSlideQ(J, J->a, q + 1, qd + 1);
}

// R = Rot(a, q0) Rot(a2, q1): R a2 = Rot(a, q0) a2 gives q0 (the turn of a2's part normal to a),
// R2 = Rot(a, -q0) R gives q1; ω = (R2ᵀ a) q̇0 + a2 q̇1 solved in least squares (2 x 2)
static void mbs_natQUniversal(const mbsNatRel *J, const double *qref, double *q, double *qd) {
  const double *a = J->a, *a2 = J->a2;
  double v[3], wn[3], c[3], R1[9], R2[9], s0[3];
  mbsu_mulMat3Vec(J->R, a2, v);
  double aa = mbsu_dot3(a, a2);
  for (int i = 0; i < 3; i++) wn[i] = a2[i] - aa * a[i];
  mbsu_cross3(wn, v, c);
  q[0] = atan2(mbsu_dot3(a, c), mbsu_dot3(wn, v));
  if (qref) q[0] = qref[0] + remainder(q[0] - qref[0], 2 * M_PI);
  mbsu_rotAxis(a, -q[0], R1);
  mbsu_mulMat3(R1, J->R, R2);
  q[1] = mbs_natAngle(a2, R2, qref ? qref + 1 : NULL);
  mbsu_mulMat3TVec(R2, a, s0);
  double g00 = mbsu_dot3(s0, s0), g01 = mbsu_dot3(s0, a2), g11 = mbsu_dot3(a2, a2);
  double b0 = mbsu_dot3(s0, J->w), b1 = mbsu_dot3(a2, J->w), det = g00 * g11 - g01 * g01;
  qd[0] = (g11 * b0 - g01 * b1) / det, qd[1] = (g00 * b1 - g01 * b0) / det;
}

static void mbs_natQSpherical(const mbsNatRel *J, const double *qref, double *q, double *qd) {
  mbs_natQuat(J->R, qref, q);
  memcpy(qd, J->w, 3 * sizeof(double));
}

static void mbs_natQFree(const mbsNatRel *J, const double *qref, double *q, double *qd) {
  for (int i = 0; i < 3; i++) q[i] = J->r[i] - J->org[i], qd[i] = J->rd[i];
  mbs_natQuat(J->R, qref ? qref + 3 : NULL, q + 3);
  memcpy(qd + 3, J->w, 3 * sizeof(double));
}

/// q and q̇ of a tree joint from its relative motion, keyed by the joint table's id (a new joint
/// type adds a row here too; docs/natural.md 11 derives each).
static void (*const mbs_nat_joint_coords[MBS_JNT_COUNT])(const mbsNatRel *, const double *,
                                                         double *, double *) = {
    [MBS_JNT_FIXED] = mbs_natQNone,          [MBS_JNT_REVOLUTE] = mbs_natQRevolute,
    [MBS_JNT_PRISMATIC] = mbs_natQPrismatic, [MBS_JNT_CYLINDRICAL] = mbs_natQCylindrical,
    [MBS_JNT_UNIVERSAL] = mbs_natQUniversal, [MBS_JNT_SPHERICAL] = mbs_natQSpherical,
    [MBS_JNT_FREE] = mbs_natQFree,
};

// X (columns e_k: X[3 i + k] = e_k[i]), o and their rates of body b (-1: the ground)
static void mbs_natPose(const double *p, const double *pd, int b, double X[9], double o[3],
                        double Xd[9], double od[3]) {
  if (b < 0) {
    mbsu_eye3(X);
    memset(Xd, 0, 9 * sizeof(double));
    memset(o, 0, 3 * sizeof(double)), memset(od, 0, 3 * sizeof(double));
    return;
  }
  const double *pb = p + 12 * b, *vb = pd + 12 * b;
  for (int i = 0; i < 3; i++) {
    o[i] = pb[i], od[i] = vb[i];
    for (int k = 0; k < 3; k++) X[3 * i + k] = pb[3 + 3 * k + i], Xd[3 * i + k] = vb[3 + 3 * k + i];
  }
}

void mbs_naturalJointCoords(const mbsModel *m, const double *p, const double *pd,
                            const mbsReal *qref, mbsReal *q, mbsReal *qd) {
  for (int b = 0; b < m->nbody; b++) {
    int pb = m->body_parent[b], t = m->body_jnttype[b];
    double Xp[9], op[3], Xpd[9], opd[3], Xc[9], oc[3], Xcd[9], ocd[3], d[3], dd[3], t9[9], u9[9];
    mbs_natPose(p, pd, pb, Xp, op, Xpd, opd);
    mbs_natPose(p, pd, b, Xc, oc, Xcd, ocd);
    mbsNatRel J = {
        .a = m->jnt_axis + 3 * b, .a2 = m->jnt_axis2 + 3 * b, .org = m->jnt_origin + 3 * b};
    // R = Xpᵀ Xc, r = Xpᵀ (oc - op), ṙ = Xṗᵀ (oc - op) + Xpᵀ (ȯc - ȯp)
    for (int i = 0; i < 3; i++) d[i] = oc[i] - op[i], dd[i] = ocd[i] - opd[i];
    for (int i = 0; i < 3; i++) {
      J.r[i] = J.rd[i] = 0;
      for (int k = 0; k < 3; k++) {
        J.r[i] += Xp[3 * k + i] * d[k];
        J.rd[i] += Xpd[3 * k + i] * d[k] + Xp[3 * k + i] * dd[k];
      }
      for (int j = 0; j < 3; j++) {
        double s = 0, sd = 0;
        for (int k = 0; k < 3; k++) {
          s += Xp[3 * k + i] * Xc[3 * k + j];
          sd += Xpd[3 * k + i] * Xc[3 * k + j] + Xp[3 * k + i] * Xcd[3 * k + j];
        }
        J.R[3 * i + j] = s, t9[3 * i + j] = sd; // t9 = Ṙ
      }
    }
    // ω̃ = Rᵀ Ṙ (child coordinates): its skew part
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        double s = 0;
        for (int k = 0; k < 3; k++) s += J.R[3 * k + i] * t9[3 * k + j];
        u9[3 * i + j] = s;
      }
    J.w[0] = 0.5 * (u9[7] - u9[5]), J.w[1] = 0.5 * (u9[2] - u9[6]), J.w[2] = 0.5 * (u9[3] - u9[1]);
    int qa = m->body_qadr[b], da = m->body_dofadr[b];
    mbs_nat_joint_coords[t](&J, qref ? qref + qa : NULL, q + qa, qd + da);
  }
}

void mbs_naturalFromJoint(const mbsModel *m, const mbsState *s, mbsWork *w, double *p, double *pd) {
  mbsNat t;
  memset(&t, 0, sizeof t);
  t.p = p, t.pd = pd;
  mbs_fwdPosition(m, s, w);
  mbs_fwdVelocity(m, s, w);
  mbs_natCoords(m, w, &t);
}
