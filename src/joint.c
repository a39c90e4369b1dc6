/// \file joint.c
/// The joint module (mbs_joint.h): the joint table (one mbsJointType row per type: sizes, flags,
/// names, kinematics, closure rows, flop counts), the tree joints' functions of each row
/// (transform, subspace, velocity-product term, constraint directions, position update) and the
/// closure equations of the cut joints that close loops. Derivations: docs/formulation.md 1.4
/// (tree joints) and docs/loops.md (cut joints).
#include "mbspar/mbs_joint.h"

#include <math.h>
#include <string.h>
#include "flops.h"
#include "mbspar/mbs_dynamics.h"
#include "spatial.h"

// ---------------------------------------------------------------- tree joints: each type's
// functions

// pose: R, r (from the joint origin) and S of each type
static void mbs_poseFixed(const mbsReal *org, const mbsReal *a, const mbsReal *a2, const mbsReal *q,
                          mbsReal *R, mbsReal *r, mbsReal *S) {
  (void)a, (void)a2, (void)q, (void)S;
  r[0] = org[0], r[1] = org[1], r[2] = org[2];
  mbsu_eye3(R);
}

static void mbs_poseRevolute(const mbsReal *org, const mbsReal *a, const mbsReal *a2,
                             const mbsReal *q, mbsReal *R, mbsReal *r, mbsReal *S) {
  (void)a2;
  r[0] = org[0], r[1] = org[1], r[2] = org[2];
  mbsu_rotAxis(a, q[0], R);
  S[0] = a[0], S[1] = a[1], S[2] = a[2], S[3] = S[4] = S[5] = 0;
}

static void mbs_posePrismatic(const mbsReal *org, const mbsReal *a, const mbsReal *a2,
                              const mbsReal *q, mbsReal *R, mbsReal *r, mbsReal *S) {
  (void)a2;
  r[0] = org[0], r[1] = org[1], r[2] = org[2];
  mbsu_eye3(R);
  for (int k = 0; k < 3; k++) r[k] += a[k] * q[0];
  S[0] = S[1] = S[2] = 0, S[3] = a[0], S[4] = a[1], S[5] = a[2];
}

static void mbs_poseCylindrical(const mbsReal *org, const mbsReal *a, const mbsReal *a2,
                                const mbsReal *q, mbsReal *R, mbsReal *r, mbsReal *S) {
  (void)a2;
  r[0] = org[0], r[1] = org[1], r[2] = org[2];
  mbsu_rotAxis(a, q[0], R);
  for (int k = 0; k < 3; k++) r[k] += a[k] * q[1];
  S[0] = a[0], S[1] = a[1], S[2] = a[2], S[3] = S[4] = S[5] = 0;
  S[6] = S[7] = S[8] = 0, S[9] = a[0], S[10] = a[1], S[11] = a[2];
}

static void mbs_poseUniversal(const mbsReal *org, const mbsReal *a, const mbsReal *a2,
                              const mbsReal *q, mbsReal *R, mbsReal *r, mbsReal *S) {
  mbsReal R1[9], R2[9];
  r[0] = org[0], r[1] = org[1], r[2] = org[2];
  mbsu_rotAxis(a, q[0], R1);
  mbsu_rotAxis(a2, q[1], R2);
  mbsu_mulMat3(R1, R2, R);
  // omega (child) = R2^T a qd0 + a2 qd1
  mbsu_mulMat3TVec(R2, a, S);
  S[3] = S[4] = S[5] = 0;
  S[6] = a2[0], S[7] = a2[1], S[8] = a2[2], S[9] = S[10] = S[11] = 0;
}

static void mbs_poseSpherical(const mbsReal *org, const mbsReal *a, const mbsReal *a2,
                              const mbsReal *q, mbsReal *R, mbsReal *r, mbsReal *S) {
  (void)a, (void)a2;
  r[0] = org[0], r[1] = org[1], r[2] = org[2];
  mbsu_quat2Mat(q, R);
  memset(S, 0, 18 * sizeof(mbsReal));
  S[0] = S[7] = S[14] = 1;
}

static void mbs_poseFree(const mbsReal *org, const mbsReal *a, const mbsReal *a2, const mbsReal *q,
                         mbsReal *R, mbsReal *r, mbsReal *S) {
  (void)a, (void)a2;
  r[0] = org[0], r[1] = org[1], r[2] = org[2];
  mbsu_quat2Mat(q + 3, R);
  for (int k = 0; k < 3; k++) r[k] += q[k];
  memset(S, 0, 36 * sizeof(mbsReal));
  // linear dofs: velocity in the parent frame -> child coordinates E = R^T (row k of R)
  for (int k = 0; k < 3; k++) {
    S[6 * k + 3] = R[3 * k];
    S[6 * k + 4] = R[3 * k + 1];
    S[6 * k + 5] = R[3 * k + 2];
  }
  S[18] = S[25] = S[32] = 1;
}

// bias c_J: zero unless S moves with q
static void mbs_biasZero(const mbsReal *a2, const mbsReal *S, const mbsReal *qd, const mbsReal *vJ,
                         mbsReal *cJ) {
  (void)a2, (void)S, (void)qd, (void)vJ;
  for (int i = 0; i < 6; i++) cJ[i] = 0;
}

static void mbs_biasUniversal(const mbsReal *a2, const mbsReal *S, const mbsReal *qd,
                              const mbsReal *vJ, mbsReal *cJ) { // -qd0 qd1 [a2 x (R2^T a); 0]
  (void)vJ;
  for (int i = 0; i < 6; i++) cJ[i] = 0;
  mbsu_cross3(a2, S, cJ);
  for (int i = 0; i < 3; i++) cJ[i] *= -qd[0] * qd[1];
}

static void mbs_biasFree(const mbsReal *a2, const mbsReal *S, const mbsReal *qd, const mbsReal *vJ,
                         mbsReal *cJ) { // [0; -w x (R^T xdot)]
  (void)a2, (void)S;
  for (int i = 0; i < 6; i++) cJ[i] = 0;
  mbsu_cross3(qd + 3, vJ + 3, cJ + 3);
  for (int i = 3; i < 6; i++) cJ[i] = -cJ[i];
}

void mbsu_perpPair(const mbsReal *a, mbsReal *n1, mbsReal *n2) {
  mbsReal e[3] = {0, 0, 0};
  int i = fabs(a[0]) <= fabs(a[1]) ? (fabs(a[0]) <= fabs(a[2]) ? 0 : 2)
                                   : (fabs(a[1]) <= fabs(a[2]) ? 1 : 2);
  e[i] = 1;
  mbsu_cross3(a, e, n1);
  mbsReal l = sqrt(mbsu_dot3(n1, n1));
  n1[0] /= l, n1[1] /= l, n1[2] /= l;
  mbsu_cross3(a, n1, n2);
}

// complement T: the 6 - nv constraint directions (zeroed, then the nonzero entries)
static void mbs_complFixed(const mbsReal *a, const mbsReal *S, mbsReal *T) {
  (void)a, (void)S;
  memset(T, 0, 36 * sizeof(mbsReal));
  for (int i = 0; i < 6; i++) T[6 * i + i] = 1;
}

static void mbs_complRevolute(const mbsReal *a, const mbsReal *S, mbsReal *T) {
  mbsReal n1[3], n2[3]; // moments normal to the axis, all forces
  (void)S;
  memset(T, 0, 30 * sizeof(mbsReal));
  mbsu_perpPair(a, n1, n2);
  memcpy(T, n1, sizeof n1);
  memcpy(T + 6, n2, sizeof n2);
  T[12 + 3] = T[18 + 4] = T[24 + 5] = 1;
}

static void mbs_complPrismatic(const mbsReal *a, const mbsReal *S, mbsReal *T) {
  mbsReal n1[3], n2[3]; // all moments, forces normal to the axis
  (void)S;
  memset(T, 0, 30 * sizeof(mbsReal));
  mbsu_perpPair(a, n1, n2);
  T[0] = T[6 + 1] = T[12 + 2] = 1;
  memcpy(T + 18 + 3, n1, sizeof n1);
  memcpy(T + 24 + 3, n2, sizeof n2);
}

static void mbs_complCylindrical(const mbsReal *a, const mbsReal *S, mbsReal *T) {
  mbsReal n1[3], n2[3];
  (void)S;
  memset(T, 0, 24 * sizeof(mbsReal));
  mbsu_perpPair(a, n1, n2);
  memcpy(T, n1, sizeof n1);
  memcpy(T + 6, n2, sizeof n2);
  memcpy(T + 12 + 3, n1, sizeof n1);
  memcpy(T + 18 + 3, n2, sizeof n2);
}

static void mbs_complUniversal(const mbsReal *a, const mbsReal *S, mbsReal *T) {
  mbsReal n1[3]; // the moment normal to both rotation axes, all forces
  (void)a;
  memset(T, 0, 24 * sizeof(mbsReal));
  mbsu_cross3(S, S + 6, n1);
  mbsReal l = sqrt(mbsu_dot3(n1, n1));
  T[0] = n1[0] / l, T[1] = n1[1] / l, T[2] = n1[2] / l;
  T[6 + 3] = T[12 + 4] = T[18 + 5] = 1;
}

static void mbs_complSpherical(const mbsReal *a, const mbsReal *S, mbsReal *T) {
  (void)a, (void)S;
  memset(T, 0, 18 * sizeof(mbsReal));
  T[3] = T[6 + 4] = T[12 + 5] = 1;
}

static void mbs_complFree(const mbsReal *a, const mbsReal *S, mbsReal *T) {
  (void)a, (void)S, (void)T; // no constraint
}

// integrate: q += h q'(qd)
static void mbs_intNone(mbsReal *q, const mbsReal *qd, mbsReal h) {
  (void)q, (void)qd, (void)h;
}

static void mbs_intScalar1(mbsReal *q, const mbsReal *qd, mbsReal h) {
  q[0] += h * qd[0];
}

static void mbs_intScalar2(mbsReal *q, const mbsReal *qd, mbsReal h) {
  for (int k = 0; k < 2; k++) q[k] += h * qd[k];
}

static void mbs_intSpherical(mbsReal *q, const mbsReal *qd, mbsReal h) {
  mbsu_quatIntegrate(q, qd, h);
}

static void mbs_intFree(mbsReal *q, const mbsReal *qd, mbsReal h) {
  for (int k = 0; k < 3; k++) q[k] += h * qd[k]; // linear coordinates first, then the quaternion
  mbsu_quatIntegrate(q + 3, qd + 3, h);
}

// ---------------------------------------------------------------- the joint table

// the closure rows of the cut joints: rotation rows first, then position rows (docs/loops.md 2)
enum { MBS_ROW_RX, MBS_ROW_RY, MBS_ROW_RZ, MBS_ROW_PERP, MBS_ROW_X, MBS_ROW_Y, MBS_ROW_Z };
static const char *const mbs_row_names[] = {"rx", "ry", "rz", "perp", "x", "y", "z"};
static const int mbs_rows_fixed[] = {MBS_ROW_RX, MBS_ROW_RY, MBS_ROW_RZ,
                                     MBS_ROW_X,  MBS_ROW_Y,  MBS_ROW_Z};
static const int mbs_rows_rev[] = {MBS_ROW_RX, MBS_ROW_RY, MBS_ROW_X, MBS_ROW_Y, MBS_ROW_Z};
static const int mbs_rows_pri[] = {MBS_ROW_RX, MBS_ROW_RY, MBS_ROW_RZ, MBS_ROW_X, MBS_ROW_Y};
static const int mbs_rows_cyl[] = {MBS_ROW_RX, MBS_ROW_RY, MBS_ROW_X, MBS_ROW_Y};
static const int mbs_rows_uni[] = {MBS_ROW_PERP, MBS_ROW_X, MBS_ROW_Y, MBS_ROW_Z};
static const int mbs_rows_sph[] = {MBS_ROW_X, MBS_ROW_Y, MBS_ROW_Z};
#define MBS_ROWS(l) l, (int)(sizeof l / sizeof l[0])

// the CSV column suffixes of the multi-coordinate types
static const char *const mbs_cyl_names[] = {"angle", "disp"};
static const char *const mbs_uni_names[] = {"angle1", "angle2"};
static const char *const mbs_quat_names[] = {"qw", "qx", "qy", "qz"};
static const char *const mbs_ang_names[] = {"wx", "wy", "wz"};
static const char *const mbs_freeq_names[] = {"x", "y", "z", "qw", "qx", "qy", "qz"};
static const char *const mbs_freev_names[] = {"vx", "vy", "vz", "wx", "wy", "wz"};

/// The joint table, one row per MBS_JNT_* id (designated initialisers: a row per id).
const mbsJointType mbs_jnt_types[MBS_JNT_COUNT] = {
    [MBS_JNT_FIXED] = {.name = "fixed",
                       .nq = 0,
                       .nv = 0,
                       .quat = -1,
                       .loop_rows = MBS_ROWS(mbs_rows_fixed),
                       .pose = mbs_poseFixed,
                       .bias = mbs_biasZero,
                       .complement = mbs_complFixed,
                       .integrate = mbs_intNone},
    [MBS_JNT_REVOLUTE] = {.name = "revolute",
                          .nq = 1,
                          .nv = 1,
                          .axis = 1,
                          .quat = -1,
                          .rotates = 1,
                          .angles = 1,
                          .loop_rows = MBS_ROWS(mbs_rows_rev),
                          .pose = mbs_poseRevolute,
                          .bias = mbs_biasZero,
                          .complement = mbs_complRevolute,
                          .integrate = mbs_intScalar1,
                          .flops_pose = MBS_FL_ROTAXIS,
                          .flops_complement = 2 * MBS_FL_CROSS3 + MBS_FL_DOT3 + 4},
    [MBS_JNT_PRISMATIC] = {.name = "prismatic",
                           .nq = 1,
                           .nv = 1,
                           .axis = 1,
                           .quat = -1,
                           .loop_rows = MBS_ROWS(mbs_rows_pri),
                           .pose = mbs_posePrismatic,
                           .bias = mbs_biasZero,
                           .complement = mbs_complPrismatic,
                           .integrate = mbs_intScalar1,
                           .flops_pose = 6,
                           .flops_complement = 2 * MBS_FL_CROSS3 + MBS_FL_DOT3 + 4},
    [MBS_JNT_CYLINDRICAL] = {.name = "cylindrical",
                             .nq = 2,
                             .nv = 2,
                             .axis = 1,
                             .quat = -1,
                             .rotates = 1,
                             .angles = 1,
                             .qnames = mbs_cyl_names,
                             .vnames = mbs_cyl_names,
                             .loop_rows = MBS_ROWS(mbs_rows_cyl),
                             .pose = mbs_poseCylindrical,
                             .bias = mbs_biasZero,
                             .complement = mbs_complCylindrical,
                             .integrate = mbs_intScalar2,
                             .flops_pose = MBS_FL_ROTAXIS + 6,
                             .flops_complement = 2 * MBS_FL_CROSS3 + MBS_FL_DOT3 + 4},
    [MBS_JNT_UNIVERSAL] = {.name = "universal",
                           .nq = 2,
                           .nv = 2,
                           .axis = 1,
                           .axis2 = 1,
                           .quat = -1,
                           .rotates = 1,
                           .angles = 3,
                           .qnames = mbs_uni_names,
                           .vnames = mbs_uni_names,
                           .loop_rows = MBS_ROWS(mbs_rows_uni),
                           .pose = mbs_poseUniversal,
                           .bias = mbs_biasUniversal,
                           .complement = mbs_complUniversal,
                           .integrate = mbs_intScalar2,
                           .flops_pose = 2 * MBS_FL_ROTAXIS + MBS_FL_MAT3 + MBS_FL_MAT3VEC,
                           .flops_bias = MBS_FL_CROSS3 + 6,
                           .flops_complement = MBS_FL_CROSS3 + MBS_FL_DOT3 + 4},
    [MBS_JNT_SPHERICAL] = {.name = "spherical",
                           .nq = 4,
                           .nv = 3,
                           .quat = 0,
                           .rotates = 1,
                           .qnames = mbs_quat_names,
                           .vnames = mbs_ang_names,
                           .loop_rows = MBS_ROWS(mbs_rows_sph),
                           .pose = mbs_poseSpherical,
                           .bias = mbs_biasZero,
                           .complement = mbs_complSpherical,
                           .integrate = mbs_intSpherical,
                           .flops_pose = MBS_FL_QUAT2MAT},
    [MBS_JNT_FREE] = {.name = "free",
                      .nq = 7,
                      .nv = 6,
                      .quat = 3,
                      .rotates = 1,
                      .qnames = mbs_freeq_names,
                      .vnames = mbs_freev_names,
                      .pose = mbs_poseFree,
                      .bias = mbs_biasFree,
                      .complement = mbs_complFree,
                      .integrate = mbs_intFree,
                      .flops_pose = MBS_FL_QUAT2MAT + 3,
                      .flops_bias = MBS_FL_CROSS3},
};

int mbs_jntNq(int type) {
  return (type >= 0 && type < MBS_JNT_COUNT) ? mbs_jnt_types[type].nq : 0;
}
int mbs_jntNv(int type) {
  return (type >= 0 && type < MBS_JNT_COUNT) ? mbs_jnt_types[type].nv : 0;
}
const char *mbs_jntName(int type) {
  return (type >= 0 && type < MBS_JNT_COUNT) ? mbs_jnt_types[type].name : "?";
}
int mbs_jntFromName(const char *name) {
  for (int t = 0; t < MBS_JNT_COUNT; t++)
    if (strcmp(name, mbs_jnt_types[t].name) == 0) return t;
  if (strcmp(name, "hinge") == 0) return MBS_JNT_REVOLUTE;
  if (strcmp(name, "slide") == 0) return MBS_JNT_PRISMATIC;
  if (strcmp(name, "ball") == 0) return MBS_JNT_SPHERICAL;
  if (strcmp(name, "weld") == 0) return MBS_JNT_FIXED;
  return -1;
}
const char *mbs_jntNameList(void) {
  return "revolute, prismatic, cylindrical, universal, spherical, free or fixed";
}
int mbs_jntHasAxis(int type) {
  return (type >= 0 && type < MBS_JNT_COUNT) ? mbs_jnt_types[type].axis : 0;
}
int mbs_jntQuatAdr(int type) {
  return (type >= 0 && type < MBS_JNT_COUNT) ? mbs_jnt_types[type].quat : -1;
}
int mbs_jntScalar(int type) {
  return mbs_jntNq(type) == mbs_jntNv(type) && mbs_jntNv(type) > 0;
}
void mbs_jntDefaultQ0(int type, mbsReal *q0) {
  for (int k = 0; k < mbs_jntNq(type); k++) q0[k] = 0;
  int qa = mbs_jntQuatAdr(type);
  if (qa >= 0) q0[qa] = 1;
}

const char *mbs_jntCoordName(int type, int k, int rate) {
  int n = rate ? mbs_jntNv(type) : mbs_jntNq(type);
  if (k < 0 || k >= n || n == 1) return NULL;
  const char *const *names = rate ? mbs_jnt_types[type].vnames : mbs_jnt_types[type].qnames;
  return names ? names[k] : NULL;
}

// ---------------------------------------------------------------- cut joints

int mbs_loopNumEq(int type) {
  return (type >= 0 && type < MBS_JNT_COUNT) ? mbs_jnt_types[type].n_loop_rows : 0;
}

const char *mbs_loopEqName(int type, int r) {
  int n = mbs_loopNumEq(type);
  return r >= 0 && r < n ? mbs_row_names[mbs_jnt_types[type].loop_rows[r]] : "?";
}

int mbs_loopEqIsPosition(int type, int r) {
  int n = mbs_loopNumEq(type);
  return r >= 0 && r < n && mbs_jnt_types[type].loop_rows[r] >= MBS_ROW_X;
}

int mbsu_loopFrame(const mbsReal *origin, const mbsReal *axis, const mbsReal *ref, mbsReal *F) {
  mbsReal z[3] = {axis[0], axis[1], axis[2]}, x[3], y[3];
  mbsReal l = sqrt(mbsu_dot3(z, z));
  if (!(l > 1e-12)) return 0;
  for (int i = 0; i < 3; i++) z[i] /= l;
  if (ref) { // the part of ref normal to the axis
    mbsReal d = mbsu_dot3(ref, z), lr = sqrt(mbsu_dot3(ref, ref));
    for (int i = 0; i < 3; i++) x[i] = ref[i] - d * z[i];
    l = sqrt(mbsu_dot3(x, x));
    if (!(l > 1e-6 * lr) || !(lr > 1e-12)) return 0;
    for (int i = 0; i < 3; i++) x[i] /= l;
  } else {
    mbsu_perpPair(z, x, y);
  }
  mbsu_cross3(z, x, y);
  F[0] = origin[0], F[1] = origin[1], F[2] = origin[2];
  for (int i = 0; i < 3; i++) F[3 + 3 * i] = x[i], F[4 + 3 * i] = y[i], F[5 + 3 * i] = z[i];
  return 1;
}

// one side in the ground frame: frame axes W (columns), origin p, angular velocity om, velocity
// pd of the material point at p, and its acceleration when the body's spatial acceleration is
// zero, acc0 = om x pd
typedef struct {
  mbsReal R[9], x[3], W[9], p[3], om[3], pd[3], acc0[3];
} mbsLoopWorld;

static void mbs_loopWorld(const mbsReal *F, const mbsLoopSide *s, mbsLoopWorld *o) {
  if (s && s->R)
    memcpy(o->R, s->R, sizeof o->R);
  else
    mbsu_eye3(o->R);
  if (s && s->x)
    memcpy(o->x, s->x, sizeof o->x);
  else
    o->x[0] = o->x[1] = o->x[2] = 0;
  mbsu_mulMat3(o->R, F + 3, o->W);
  mbsu_mulMat3Vec(o->R, F, o->p);
  for (int i = 0; i < 3; i++) o->p[i] += o->x[i];
  if (s && s->v) {
    mbsReal t[3], u[3];
    mbsu_mulMat3Vec(o->R, s->v, o->om);
    mbsu_cross3(s->v, F, t); // w x o (body coordinates)
    for (int i = 0; i < 3; i++) u[i] = s->v[3 + i] + t[i];
    mbsu_mulMat3Vec(o->R, u, o->pd);
    mbsu_cross3(o->om, o->pd, o->acc0);
  } else {
    for (int i = 0; i < 3; i++) o->om[i] = o->pd[i] = o->acc0[i] = 0;
  }
}

// column k of a row-major 3x3
static void mbs_col3(const mbsReal *W, int k, mbsReal *c) {
  c[0] = W[k], c[1] = W[3 + k], c[2] = W[6 + k];
}

void mbsu_loopClosure(int type, const mbsReal *F1, const mbsReal *F2, const mbsLoopSide *s1,
                      const mbsLoopSide *s2, mbsReal *D1, mbsReal *D2, mbsReal *c, mbsReal *cdot,
                      mbsReal *kappa) {
  int n = mbs_loopNumEq(type);
  const int *rows = mbs_jnt_types[type].loop_rows;
  mbsLoopWorld A, B;
  mbs_loopWorld(F1, s1, &A);
  mbs_loopWorld(F2, s2, &B);
  // relative position, velocity and zero-acceleration acceleration of origin 2 from origin 1
  mbsReal dp[3], dv[3], da[3];
  for (int i = 0; i < 3; i++) {
    dp[i] = B.p[i] - A.p[i];
    dv[i] = B.pd[i] - A.pd[i];
    da[i] = B.acc0[i] - A.acc0[i];
  }
  for (int r = 0; r < n; r++) {
    int row = rows[r];
    mbsReal nw[3] = {0, 0, 0}, fw[3] = {0, 0, 0}; // world wrench on body 2 (moment at p2, force)
    mbsReal cr, cdr, kr;
    if (row >= MBS_ROW_X) {
      // position row: u . (p2 - p1) with u = axis k of frame 1 (turning with body 1)
      mbsReal u[3], wu[3], wwu[3];
      mbs_col3(A.W, row - MBS_ROW_X, u);
      mbsu_cross3(A.om, u, wu);
      mbsu_cross3(A.om, wu, wwu);
      cr = mbsu_dot3(u, dp);
      cdr = mbsu_dot3(wu, dp) + mbsu_dot3(u, dv);
      kr = -(mbsu_dot3(wwu, dp) + 2 * mbsu_dot3(wu, dv) + mbsu_dot3(u, da));
      memcpy(fw, u, sizeof fw); // force u at p2 on body 2
    } else {
      // rotation row: s a . b with a an axis of frame 1, b an axis of frame 2
      int ia = 1, ib = 2;
      mbsReal s = 1;
      if (row == MBS_ROW_RX) ia = 1, ib = 2, s = -1; // -y1 . z2
      if (row == MBS_ROW_RY) ia = 0, ib = 2;         //  x1 . z2
      if (row == MBS_ROW_RZ) ia = 1, ib = 0;         //  y1 . x2
      if (row == MBS_ROW_PERP) ia = 2, ib = 2;       //  z1 . z2
      mbsReal a[3], b[3], wa[3], wb[3], wwa[3], wwb[3];
      mbs_col3(A.W, ia, a);
      mbs_col3(B.W, ib, b);
      mbsu_cross3(A.om, a, wa);
      mbsu_cross3(B.om, b, wb);
      mbsu_cross3(A.om, wa, wwa);
      mbsu_cross3(B.om, wb, wwb);
      cr = s * mbsu_dot3(a, b);
      cdr = s * (mbsu_dot3(wa, b) + mbsu_dot3(a, wb));
      kr = -s * (mbsu_dot3(wwa, b) + 2 * mbsu_dot3(wa, wb) + mbsu_dot3(a, wwb));
      mbsu_cross3(b, a, nw); // moment s (b x a) on body 2
      for (int i = 0; i < 3; i++) nw[i] *= s;
    }
    if (c) c[r] = cr;
    if (cdot) cdot[r] = cdr;
    if (kappa) kappa[r] = kr;
    // body coordinates at the body origins: body 2 gets (nw, fw) at p2, body 1 the opposite
    if (D2) {
      mbsReal *d = D2 + 6 * r, rp[3], t[3];
      mbsu_mulMat3TVec(B.R, fw, d + 3);
      for (int i = 0; i < 3; i++) rp[i] = B.p[i] - B.x[i];
      mbsu_cross3(rp, fw, t);
      for (int i = 0; i < 3; i++) t[i] += nw[i];
      mbsu_mulMat3TVec(B.R, t, d);
    }
    if (D1) {
      mbsReal *d = D1 + 6 * r, rp[3], t[3];
      mbsu_mulMat3TVec(A.R, fw, d + 3);
      for (int i = 0; i < 3; i++) rp[i] = B.p[i] - A.x[i];
      mbsu_cross3(rp, fw, t);
      for (int i = 0; i < 3; i++) t[i] += nw[i];
      mbsu_mulMat3TVec(A.R, t, d);
      for (int i = 0; i < 6; i++) d[i] = -d[i];
    }
  }
}

void mbs_loopRows(const mbsModel *m, const mbsWork *w, int k, mbsReal *D1, mbsReal *D2, mbsReal *c,
                  mbsReal *cdot, mbsReal *kappa) {
  int b1 = m->loop_body[2 * k], b2 = m->loop_body[2 * k + 1], t = m->loop_type[k];
  int vel = cdot || kappa;
  mbsLoopSide s1 = {NULL, NULL, NULL}, s2 = {NULL, NULL, NULL};
  if (b1 >= 0) s1.R = w->xmat + 9 * b1, s1.x = w->xpos + 3 * b1, s1.v = vel ? w->cvel + 6 * b1 : 0;
  if (b2 >= 0) s2.R = w->xmat + 9 * b2, s2.x = w->xpos + 3 * b2, s2.v = vel ? w->cvel + 6 * b2 : 0;
  const mbsReal *F = m->loop_frame + 24 * k;
  mbsReal cc[6], cd[6];
  int stab = kappa && (m->opt.baumgarte[0] != 0 || m->opt.baumgarte[1] != 0);
  mbsu_loopClosure(t, F, F + 12, &s1, &s2, D1, D2, c || stab ? cc : NULL, cdot || stab ? cd : NULL,
                   kappa);
  int n = m->loop_lamnum[k], npos = 0;
  for (int r = 0; r < n; r++) npos += mbs_loopEqIsPosition(t, r);
  MBS_FLOPS(mbs_flopLoopRows(npos, n - npos, b1 >= 0 && vel, b2 >= 0 && vel, stab));
  if (c) memcpy(c, cc, (size_t)n * sizeof *c);
  if (cdot) memcpy(cdot, cd, (size_t)n * sizeof *cdot);
  if (stab) { // Baumgarte: c'' + 2 alpha c' + beta^2 c = 0
    mbsReal al = m->opt.baumgarte[0], be = m->opt.baumgarte[1];
    for (int r = 0; r < n; r++) kappa[r] -= 2 * al * cd[r] + be * be * cc[r];
  }
}
