/// \file joint.c
/// The joint module (mbs_joint.h): the joint-type table, tree-joint kinematics (transform,
/// subspace, velocity-product term, constraint directions) and the closure equations of the cut
/// joints that close loops. Derivations: docs/formulation.md 1.4 (tree joints) and docs/loops.md
/// (cut joints).
#include "mbspar/mbs_joint.h"

#include <math.h>
#include <string.h>
#include "flops.h"
#include "mbspar/mbs_dynamics.h"
#include "spatial.h"

static const struct {
  const char *name;
  int nq, nv;
} mbs_jnt_table[] = {
#define MBS_JNT_ROW(id, name, nq, nv) {name, nq, nv},
    MBS_JNT_LIST(MBS_JNT_ROW)
#undef MBS_JNT_ROW
};

/// The rest of a type's row: `axis` (uses jnt_axis), `quat` (offset of the orientation
/// quaternion in q, -1 if none). Designated initialisers: one entry per MBS_JNT_LIST row.
static const struct {
  signed char axis, quat;
} mbs_jnt_flags[MBS_JNT_COUNT] = {
    [MBS_JNT_FIXED] = {0, -1},       [MBS_JNT_REVOLUTE] = {1, -1},  [MBS_JNT_PRISMATIC] = {1, -1},
    [MBS_JNT_CYLINDRICAL] = {1, -1}, [MBS_JNT_UNIVERSAL] = {1, -1}, [MBS_JNT_SPHERICAL] = {0, 0},
    [MBS_JNT_FREE] = {0, 3},
};

int mbs_jntNq(int type) {
  return (type >= 0 && type < MBS_JNT_COUNT) ? mbs_jnt_table[type].nq : 0;
}
int mbs_jntNv(int type) {
  return (type >= 0 && type < MBS_JNT_COUNT) ? mbs_jnt_table[type].nv : 0;
}
const char *mbs_jntName(int type) {
  return (type >= 0 && type < MBS_JNT_COUNT) ? mbs_jnt_table[type].name : "?";
}
int mbs_jntFromName(const char *name) {
  for (int t = 0; t < MBS_JNT_COUNT; t++)
    if (strcmp(name, mbs_jnt_table[t].name) == 0) return t;
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
  return (type >= 0 && type < MBS_JNT_COUNT) ? mbs_jnt_flags[type].axis : 0;
}
int mbs_jntQuatAdr(int type) {
  return (type >= 0 && type < MBS_JNT_COUNT) ? mbs_jnt_flags[type].quat : -1;
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
  static const char *const cyl[] = {"angle", "disp"}, *const uni[] = {"angle1", "angle2"};
  static const char *const quat[] = {"qw", "qx", "qy", "qz"}, *const ang[] = {"wx", "wy", "wz"};
  static const char *const freeq[] = {"x", "y", "z", "qw", "qx", "qy", "qz"};
  static const char *const freev[] = {"vx", "vy", "vz", "wx", "wy", "wz"};
  int n = rate ? mbs_jntNv(type) : mbs_jntNq(type);
  if (k < 0 || k >= n || n == 1) return NULL;
  switch (type) {
  case MBS_JNT_CYLINDRICAL:
    return cyl[k];
  case MBS_JNT_UNIVERSAL:
    return uni[k];
  case MBS_JNT_SPHERICAL:
    return rate ? ang[k] : quat[k];
  case MBS_JNT_FREE:
    return rate ? freev[k] : freeq[k];
  default:
    return NULL;
  }
}

// ---------------------------------------------------------------- tree joints

void mbsu_jointPose(int t, const mbsReal *org, const mbsReal *a, const mbsReal *a2,
                    const mbsReal *q, mbsReal *R, mbsReal *r, mbsReal *S) {
  r[0] = org[0], r[1] = org[1], r[2] = org[2];
  switch (t) {
  case MBS_JNT_REVOLUTE:
    mbsu_rotAxis(a, q[0], R);
    S[0] = a[0], S[1] = a[1], S[2] = a[2], S[3] = S[4] = S[5] = 0;
    break;
  case MBS_JNT_PRISMATIC:
    mbsu_eye3(R);
    for (int k = 0; k < 3; k++) r[k] += a[k] * q[0];
    S[0] = S[1] = S[2] = 0, S[3] = a[0], S[4] = a[1], S[5] = a[2];
    break;
  case MBS_JNT_CYLINDRICAL:
    mbsu_rotAxis(a, q[0], R);
    for (int k = 0; k < 3; k++) r[k] += a[k] * q[1];
    S[0] = a[0], S[1] = a[1], S[2] = a[2], S[3] = S[4] = S[5] = 0;
    S[6] = S[7] = S[8] = 0, S[9] = a[0], S[10] = a[1], S[11] = a[2];
    break;
  case MBS_JNT_UNIVERSAL: {
    mbsReal R1[9], R2[9];
    mbsu_rotAxis(a, q[0], R1);
    mbsu_rotAxis(a2, q[1], R2);
    mbsu_mulMat3(R1, R2, R);
    // omega (child) = R2^T a qd0 + a2 qd1
    mbsu_mulMat3TVec(R2, a, S);
    S[3] = S[4] = S[5] = 0;
    S[6] = a2[0], S[7] = a2[1], S[8] = a2[2], S[9] = S[10] = S[11] = 0;
    break;
  }
  case MBS_JNT_SPHERICAL:
    mbsu_quat2Mat(q, R);
    memset(S, 0, 18 * sizeof(mbsReal));
    S[0] = S[7] = S[14] = 1;
    break;
  case MBS_JNT_FREE:
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
    break;
  default: // fixed
    mbsu_eye3(R);
    break;
  }
}

void mbsu_jointBias(int t, const mbsReal *a2, const mbsReal *S, const mbsReal *qd,
                    const mbsReal *vJ, mbsReal *cJ) {
  for (int i = 0; i < 6; i++) cJ[i] = 0;
  if (t == MBS_JNT_UNIVERSAL) { // -qd0 qd1 [a2 x (R2^T a); 0]
    mbsu_cross3(a2, S, cJ);
    for (int i = 0; i < 3; i++) cJ[i] *= -qd[0] * qd[1];
  } else if (t == MBS_JNT_FREE) { // [0; -w x (R^T xdot)]
    mbsu_cross3(qd + 3, vJ + 3, cJ + 3);
    for (int i = 3; i < 6; i++) cJ[i] = -cJ[i];
  }
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

void mbsu_jointComplement(int t, const mbsReal *a, const mbsReal *S, mbsReal *T) {
  int nl = 6 - mbs_jntNv(t);
  mbsReal n1[3], n2[3];
  memset(T, 0, 6 * (size_t)nl * sizeof(mbsReal));
  switch (t) {
  case MBS_JNT_FIXED:
    for (int i = 0; i < 6; i++) T[6 * i + i] = 1;
    break;
  case MBS_JNT_REVOLUTE: // moments normal to the axis, all forces
    mbsu_perpPair(a, n1, n2);
    memcpy(T, n1, sizeof n1);
    memcpy(T + 6, n2, sizeof n2);
    T[12 + 3] = T[18 + 4] = T[24 + 5] = 1;
    break;
  case MBS_JNT_PRISMATIC: // all moments, forces normal to the axis
    mbsu_perpPair(a, n1, n2);
    T[0] = T[6 + 1] = T[12 + 2] = 1;
    memcpy(T + 18 + 3, n1, sizeof n1);
    memcpy(T + 24 + 3, n2, sizeof n2);
    break;
  case MBS_JNT_CYLINDRICAL:
    mbsu_perpPair(a, n1, n2);
    memcpy(T, n1, sizeof n1);
    memcpy(T + 6, n2, sizeof n2);
    memcpy(T + 12 + 3, n1, sizeof n1);
    memcpy(T + 18 + 3, n2, sizeof n2);
    break;
  case MBS_JNT_UNIVERSAL: { // the moment normal to both rotation axes, all forces
    mbsu_cross3(S, S + 6, n1);
    mbsReal l = sqrt(mbsu_dot3(n1, n1));
    T[0] = n1[0] / l, T[1] = n1[1] / l, T[2] = n1[2] / l;
    T[6 + 3] = T[12 + 4] = T[18 + 5] = 1;
    break;
  }
  case MBS_JNT_SPHERICAL:
    T[3] = T[6 + 4] = T[12 + 5] = 1;
    break;
  default: // free: no constraint
    break;
  }
}

// ---------------------------------------------------------------- cut joints

// the rows of each type: rotation rows first, then position rows (docs/loops.md 2)
enum { MBS_ROW_RX, MBS_ROW_RY, MBS_ROW_RZ, MBS_ROW_PERP, MBS_ROW_X, MBS_ROW_Y, MBS_ROW_Z };
static const char *const mbs_row_names[] = {"rx", "ry", "rz", "perp", "x", "y", "z"};

// rows of a type; returns their number (-1 terminated list in rows)
static int mbs_loopRowList(int type, int *rows) {
  static const int fixed[] = {MBS_ROW_RX, MBS_ROW_RY, MBS_ROW_RZ, MBS_ROW_X, MBS_ROW_Y, MBS_ROW_Z};
  static const int rev[] = {MBS_ROW_RX, MBS_ROW_RY, MBS_ROW_X, MBS_ROW_Y, MBS_ROW_Z};
  static const int pri[] = {MBS_ROW_RX, MBS_ROW_RY, MBS_ROW_RZ, MBS_ROW_X, MBS_ROW_Y};
  static const int cyl[] = {MBS_ROW_RX, MBS_ROW_RY, MBS_ROW_X, MBS_ROW_Y};
  static const int uni[] = {MBS_ROW_PERP, MBS_ROW_X, MBS_ROW_Y, MBS_ROW_Z};
  static const int sph[] = {MBS_ROW_X, MBS_ROW_Y, MBS_ROW_Z};
  const int *l = NULL;
  int n = 0;
  switch (type) {
  case MBS_JNT_FIXED:
    l = fixed, n = 6;
    break;
  case MBS_JNT_REVOLUTE:
    l = rev, n = 5;
    break;
  case MBS_JNT_PRISMATIC:
    l = pri, n = 5;
    break;
  case MBS_JNT_CYLINDRICAL:
    l = cyl, n = 4;
    break;
  case MBS_JNT_UNIVERSAL:
    l = uni, n = 4;
    break;
  case MBS_JNT_SPHERICAL:
    l = sph, n = 3;
    break;
  default:
    break;
  }
  for (int k = 0; k < n; k++) rows[k] = l[k];
  return n;
}

int mbs_loopNumEq(int type) {
  int rows[6];
  return mbs_loopRowList(type, rows);
}

const char *mbs_loopEqName(int type, int r) {
  int rows[6], n = mbs_loopRowList(type, rows);
  return r >= 0 && r < n ? mbs_row_names[rows[r]] : "?";
}

int mbs_loopEqIsPosition(int type, int r) {
  int rows[6], n = mbs_loopRowList(type, rows);
  return r >= 0 && r < n && rows[r] >= MBS_ROW_X;
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
  int rows[6], n = mbs_loopRowList(type, rows);
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
