/// \file spatial.h
/// Spatial-algebra kernels (Featherstone's conventions): motion and force vectors are
/// [angular; linear] 6-vectors; a Plücker transform ^B X_A is stored compactly as 12 reals,
/// E (3x3 row-major, rotates A coordinates into B coordinates) followed by r (position of B's
/// origin in A coordinates): X = [E 0; -E r^ E]. 6x6 matrices are row-major.
/// Pure utilities: no model, no state. Outputs must not alias inputs unless stated.
#ifndef MBS_SPATIAL_H
#define MBS_SPATIAL_H

#include <math.h>
#include <string.h>
#include "mbspar/mbs_types.h"

/// Inline even where the compiler would not: the joint-specialised kernels take the axis index as
/// a parameter and are called with constants, one copy per axis.
#if defined(__GNUC__)
#define MBS_FORCEINLINE inline __attribute__((always_inline))
#else
#define MBS_FORCEINLINE inline
#endif

/// A kernel built twice, for AVX2 and for the baseline x86-64, the one the CPU runs picked at
/// load time (GCC's target_clones, x86-64 Linux; elsewhere, or with MBS_NO_CLONES, the baseline
/// only). For kernels vectorised over several columns (the spikes): AVX2's 4 doubles per
/// instruction against SSE2's 2. No FMA (avx2 alone does not enable it, and ISO C does not
/// contract): every entry is the same arithmetic in the same order, the results bitwise equal.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) &&       \
    !defined(MBS_NO_CLONES)
#define MBS_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define MBS_CLONES
#endif

// ---- 3-vectors and 3x3 matrices ----
static inline void mbsu_cross3(const mbsReal *a, const mbsReal *b, mbsReal *c) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}
static inline mbsReal mbsu_dot3(const mbsReal *a, const mbsReal *b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
// c = M a
static inline void mbsu_mulMat3Vec(const mbsReal *M, const mbsReal *a, mbsReal *c) {
  c[0] = M[0] * a[0] + M[1] * a[1] + M[2] * a[2];
  c[1] = M[3] * a[0] + M[4] * a[1] + M[5] * a[2];
  c[2] = M[6] * a[0] + M[7] * a[1] + M[8] * a[2];
}
// c = M^T a
static inline void mbsu_mulMat3TVec(const mbsReal *M, const mbsReal *a, mbsReal *c) {
  c[0] = M[0] * a[0] + M[3] * a[1] + M[6] * a[2];
  c[1] = M[1] * a[0] + M[4] * a[1] + M[7] * a[2];
  c[2] = M[2] * a[0] + M[5] * a[1] + M[8] * a[2];
}
// C = A B
static inline void mbsu_mulMat3(const mbsReal *A, const mbsReal *B, mbsReal *C) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      C[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}
// C = A^T B
static inline void mbsu_mulMat3T(const mbsReal *A, const mbsReal *B, mbsReal *C) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      C[3 * i + j] = A[i] * B[j] + A[3 + i] * B[3 + j] + A[6 + i] * B[6 + j];
}
static inline void mbsu_eye3(mbsReal *R) {
  memset(R, 0, 9 * sizeof(mbsReal));
  R[0] = R[4] = R[8] = 1;
}

/// Rotation matrix (child axes in parent coordinates) for a rotation by \p angle about unit
/// \p axis (Rodrigues).
static inline void mbsu_rotAxis(const mbsReal *a, mbsReal angle, mbsReal *R) {
  mbsReal c = cos(angle), s = sin(angle), t = 1 - c;
  R[0] = c + t * a[0] * a[0];
  R[1] = t * a[0] * a[1] - s * a[2];
  R[2] = t * a[0] * a[2] + s * a[1];
  R[3] = t * a[0] * a[1] + s * a[2];
  R[4] = c + t * a[1] * a[1];
  R[5] = t * a[1] * a[2] - s * a[0];
  R[6] = t * a[0] * a[2] - s * a[1];
  R[7] = t * a[1] * a[2] + s * a[0];
  R[8] = c + t * a[2] * a[2];
}

/// Rotation matrix of a unit quaternion [w x y z] (normalised here).
static inline void mbsu_quat2Mat(const mbsReal *q, mbsReal *R) {
  mbsReal n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  mbsReal w = q[0] / n, x = q[1] / n, y = q[2] / n, z = q[3] / n;
  R[0] = 1 - 2 * (y * y + z * z);
  R[1] = 2 * (x * y - w * z);
  R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z);
  R[4] = 1 - 2 * (x * x + z * z);
  R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y);
  R[7] = 2 * (y * z + w * x);
  R[8] = 1 - 2 * (x * x + y * y);
}

/// q <- q * exp(omega*h/2) (quaternion rotated by the body-frame rotation vector omega*h),
/// normalised.
static inline void mbsu_quatIntegrate(mbsReal *q, const mbsReal *omega, mbsReal h) {
  mbsReal th = sqrt(mbsu_dot3(omega, omega)) * h;
  mbsReal dq[4];
  if (th < 1e-12) {
    dq[0] = 1;
    dq[1] = 0.5 * h * omega[0];
    dq[2] = 0.5 * h * omega[1];
    dq[3] = 0.5 * h * omega[2];
  } else {
    mbsReal s = sin(0.5 * th) / (th / h);
    dq[0] = cos(0.5 * th);
    dq[1] = s * omega[0];
    dq[2] = s * omega[1];
    dq[3] = s * omega[2];
  }
  mbsReal w = q[0] * dq[0] - q[1] * dq[1] - q[2] * dq[2] - q[3] * dq[3];
  mbsReal x = q[0] * dq[1] + q[1] * dq[0] + q[2] * dq[3] - q[3] * dq[2];
  mbsReal y = q[0] * dq[2] - q[1] * dq[3] + q[2] * dq[0] + q[3] * dq[1];
  mbsReal z = q[0] * dq[3] + q[1] * dq[2] - q[2] * dq[1] + q[3] * dq[0];
  mbsReal n = sqrt(w * w + x * x + y * y + z * z);
  q[0] = w / n;
  q[1] = x / n;
  q[2] = y / n;
  q[3] = z / n;
}

// ---- spatial vectors ----

/// out = X v (motion vector from A to B coordinates): [E w; E (v - r x w)].
static inline void mbsu_xMotion(const mbsReal *X, const mbsReal *v, mbsReal *out) {
  const mbsReal *E = X, *r = X + 9;
  mbsReal t[3];
  mbsu_cross3(r, v, t);
  t[0] = v[3] - t[0];
  t[1] = v[4] - t[1];
  t[2] = v[5] - t[2];
  mbsu_mulMat3Vec(E, v, out);
  mbsu_mulMat3Vec(E, t, out + 3);
}

/// out = X^{-1} v (motion vector from B to A coordinates): [E^T w; E^T v + r x E^T w].
static inline void mbsu_xInvMotion(const mbsReal *X, const mbsReal *v, mbsReal *out) {
  const mbsReal *E = X, *r = X + 9;
  mbsReal t[3];
  mbsu_mulMat3TVec(E, v, out);
  mbsu_mulMat3TVec(E, v + 3, out + 3);
  mbsu_cross3(r, out, t);
  out[3] += t[0];
  out[4] += t[1];
  out[5] += t[2];
}

/// out = X^* f = X^{-T} f (force vector from A to B coordinates): [E (n - r x f); E f].
static inline void mbsu_xForce(const mbsReal *X, const mbsReal *f, mbsReal *out) {
  const mbsReal *E = X, *r = X + 9;
  mbsReal t[3];
  mbsu_cross3(r, f + 3, t);
  t[0] = f[0] - t[0];
  t[1] = f[1] - t[1];
  t[2] = f[2] - t[2];
  mbsu_mulMat3Vec(E, t, out);
  mbsu_mulMat3Vec(E, f + 3, out + 3);
}

/// out = X^T f (force vector from B to A coordinates): [E^T n + r x E^T f; E^T f].
static inline void mbsu_xTForce(const mbsReal *X, const mbsReal *f, mbsReal *out) {
  const mbsReal *E = X, *r = X + 9;
  mbsReal t[3];
  mbsu_mulMat3TVec(E, f, out);
  mbsu_mulMat3TVec(E, f + 3, out + 3);
  mbsu_cross3(r, out + 3, t);
  out[0] += t[0];
  out[1] += t[1];
  out[2] += t[2];
}

/// out = v x m (motion cross product): [w x mw; w x mv + v x mw].
static inline void mbsu_crossMotion(const mbsReal *v, const mbsReal *m, mbsReal *out) {
  mbsReal t[3];
  mbsu_cross3(v, m, out);
  mbsu_cross3(v, m + 3, out + 3);
  mbsu_cross3(v + 3, m, t);
  out[3] += t[0];
  out[4] += t[1];
  out[5] += t[2];
}

/// out = v x* f (force cross product): [w x n + v x f; w x f].
static inline void mbsu_crossForce(const mbsReal *v, const mbsReal *f, mbsReal *out) {
  mbsReal t[3];
  mbsu_cross3(v, f, out);
  mbsu_cross3(v + 3, f + 3, t);
  mbsu_cross3(v, f + 3, out + 3);
  out[0] += t[0];
  out[1] += t[1];
  out[2] += t[2];
}

/// out = I v for a rigid-body inertia in compact form si = [m, h(3), Io(6: xx yy zz xy xz yz)]:
/// [Io w + h x v; m v - h x w].
static inline void mbsu_rbiMul(const mbsReal *si, const mbsReal *v, mbsReal *out) {
  mbsReal m = si[0];
  const mbsReal *h = si + 1, *I = si + 4;
  mbsReal t[3];
  out[0] = I[0] * v[0] + I[3] * v[1] + I[4] * v[2];
  out[1] = I[3] * v[0] + I[1] * v[1] + I[5] * v[2];
  out[2] = I[4] * v[0] + I[5] * v[1] + I[2] * v[2];
  mbsu_cross3(h, v + 3, t);
  out[0] += t[0];
  out[1] += t[1];
  out[2] += t[2];
  mbsu_cross3(h, v, t);
  out[3] = m * v[3] - t[0];
  out[4] = m * v[4] - t[1];
  out[5] = m * v[5] - t[2];
}

/// Expand a compact rigid-body inertia into a full 6x6 matrix [Io h^; -h^ m1] (row-major).
static inline void mbsu_rbiFull(const mbsReal *si, mbsReal *I6) {
  mbsReal m = si[0];
  const mbsReal *h = si + 1, *I = si + 4;
  memset(I6, 0, 36 * sizeof(mbsReal));
  I6[0] = I[0];
  I6[7] = I[1];
  I6[14] = I[2];
  I6[1] = I6[6] = I[3];
  I6[2] = I6[12] = I[4];
  I6[8] = I6[13] = I[5];
  // upper-right h^ and lower-left (h^)^T = -h^
  I6[4] = -h[2];
  I6[5] = h[1];
  I6[9] = h[2];
  I6[11] = -h[0];
  I6[15] = -h[1];
  I6[16] = h[0];
  I6[19] = h[2];
  I6[20] = -h[1];
  I6[24] = -h[2];
  I6[26] = h[0];
  I6[30] = h[1];
  I6[31] = -h[0];
  I6[21] = I6[28] = I6[35] = m;
}

/// out = M v for a full 6x6 matrix.
static inline void mbsu_mul6(const mbsReal *M, const mbsReal *v, mbsReal *out) {
  for (int i = 0; i < 6; i++) {
    const mbsReal *row = M + 6 * i;
    out[i] = row[0] * v[0] + row[1] * v[1] + row[2] * v[2] + row[3] * v[3] + row[4] * v[4] +
             row[5] * v[5];
  }
}
static inline mbsReal mbsu_dot6(const mbsReal *a, const mbsReal *b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

/// out = E^T Y E for a symmetric 3x3 Y (full storage in and out).
static inline void mbsu_rotSym3(const mbsReal *restrict E, const mbsReal *restrict Y,
                                mbsReal *restrict out) {
  mbsReal T[9];
  mbsu_mulMat3(Y, E, T); // T = Y E
  for (int i = 0; i < 3; i++)
    for (int j = i; j < 3; j++)
      out[3 * i + j] = out[3 * j + i] = E[i] * T[j] + E[3 + i] * T[3 + j] + E[6 + i] * T[6 + j];
}

/// Index k of a coordinate axis that the rotation E leaves in place (row k and column k of E are
/// zero off the diagonal, as for a joint about x, y or z, or no rotation at all), or -1.
static inline int mbsu_rotFixedAxis(const mbsReal *E) {
  for (int k = 0; k < 3; k++) {
    int i = (k + 1) % 3, j = (k + 2) % 3;
    if (E[3 * k + i] == 0 && E[3 * k + j] == 0 && E[3 * i + k] == 0 && E[3 * j + k] == 0) return k;
  }
  return -1;
}

/// out = E^T M E for any 3x3 M when E leaves axis k in place (see mbsu_rotFixedAxis): only the
/// 2x2 block of E in the other two axes mixes entries, 24 multiplications instead of 54.
static inline void mbsu_rotAboutAxis3(const mbsReal *restrict E, int k, const mbsReal *restrict M,
                                      mbsReal *restrict out) {
  const int i = (k + 1) % 3, j = (k + 2) % 3;
  const mbsReal eii = E[3 * i + i], eij = E[3 * i + j], eji = E[3 * j + i], ejj = E[3 * j + j];
  const mbsReal ekk = E[3 * k + k];
  mbsReal T[9];
  for (int r = 0; r < 3; r++) { // T = M E
    T[3 * r + i] = M[3 * r + i] * eii + M[3 * r + j] * eji;
    T[3 * r + j] = M[3 * r + i] * eij + M[3 * r + j] * ejj;
    T[3 * r + k] = M[3 * r + k] * ekk;
  }
  for (int c = 0; c < 3; c++) { // out = E^T T
    out[3 * i + c] = eii * T[3 * i + c] + eji * T[3 * j + c];
    out[3 * j + c] = eij * T[3 * i + c] + ejj * T[3 * j + c];
    out[3 * k + c] = ekk * T[3 * k + c];
  }
}

// the three blocks of a 6x6 inertia rotated about coordinate axis k
static inline void mbsu_rotAboutAxis3x3(const mbsReal *E, int k, const mbsReal *A, const mbsReal *B,
                                        const mbsReal *C, mbsReal *A1, mbsReal *B1, mbsReal *C1) {
  mbsu_rotAboutAxis3(E, k, A, A1);
  mbsu_rotAboutAxis3(E, k, B, B1);
  mbsu_rotAboutAxis3(E, k, C, C1);
}

/// Iout += X^T I X for a symmetric 6x6 I given in B coordinates (a congruence that moves an
/// inertia from B to A coordinates). Reads only the upper triangle of I; updates all of Iout.
/// With I = [A B; B^T C] rotated blockwise by E (A1 = E^T A E, ...) and r^ the cross matrix of r:
/// A' = A1 + Y + Y^T + W r^T, B' = B1 + W, C' = C1, where W = r^ C1 and Y = r^ B1^T.
static inline void mbsu_inertiaCongruenceAdd(const mbsReal *restrict X, const mbsReal *restrict I,
                                             mbsReal *restrict Iout) {
  const mbsReal *E = X, *r = X + 9;
  // blocks of I from its upper triangle
  const mbsReal A[9] = {I[0], I[1], I[2], I[1], I[7], I[8], I[2], I[8], I[14]};
  const mbsReal B[9] = {I[3], I[4], I[5], I[9], I[10], I[11], I[15], I[16], I[17]};
  const mbsReal C[9] = {I[21], I[22], I[23], I[22], I[28], I[29], I[23], I[29], I[35]};
  // rotate: A1 = E^T A E, B1 = E^T B E, C1 = E^T C E (cheaper about a coordinate axis; the
  // switch gives the compiler constant indices)
  mbsReal A1[9], B1[9], C1[9], T[9];
  switch (mbsu_rotFixedAxis(E)) {
  case 0:
    mbsu_rotAboutAxis3x3(E, 0, A, B, C, A1, B1, C1);
    break;
  case 1:
    mbsu_rotAboutAxis3x3(E, 1, A, B, C, A1, B1, C1);
    break;
  case 2:
    mbsu_rotAboutAxis3x3(E, 2, A, B, C, A1, B1, C1);
    break;
  default:
    mbsu_rotSym3(E, A, A1);
    mbsu_rotSym3(E, C, C1);
    mbsu_mulMat3(B, E, T);
    mbsu_mulMat3T(E, T, B1);
  }
  // W = r^ C1 and Y = r^ B1^T, column by column: column j of r^ M is r x (column j of M)
  mbsReal W[9], Y[9], Z[9];
  for (int j = 0; j < 3; j++) {
    const mbsReal cj[3] = {C1[j], C1[3 + j], C1[6 + j]};
    const mbsReal bj[3] = {B1[3 * j], B1[3 * j + 1], B1[3 * j + 2]};
    mbsReal o[3], q[3];
    mbsu_cross3(r, cj, o);
    mbsu_cross3(r, bj, q);
    W[j] = o[0], W[3 + j] = o[1], W[6 + j] = o[2];
    Y[j] = q[0], Y[3 + j] = q[1], Y[6 + j] = q[2];
  }
  // Z = W r^T = -W r^: row i of Z is r x (row i of W)
  for (int i = 0; i < 3; i++) mbsu_cross3(r, W + 3 * i, Z + 3 * i);
  // accumulate: upper-left symmetric, off-diagonal blocks transposed, lower-right symmetric
  for (int i = 0; i < 3; i++) {
    for (int j = i; j < 3; j++) {
      mbsReal a = A1[3 * i + j] + Y[3 * i + j] + Y[3 * j + i] + Z[3 * i + j];
      Iout[6 * i + j] += a;
      if (j != i) Iout[6 * j + i] += a;
      mbsReal c = C1[3 * i + j];
      Iout[6 * (3 + i) + 3 + j] += c;
      if (j != i) Iout[6 * (3 + j) + 3 + i] += c;
    }
    for (int j = 0; j < 3; j++) {
      mbsReal bij = B1[3 * i + j] + W[3 * i + j];
      Iout[6 * i + 3 + j] += bij;
      Iout[6 * (3 + j) + i] += bij;
    }
  }
}

// ---- rotations about a coordinate axis ----
// E = R^T for the rotation R about coordinate axis k by an angle with cosine c and sine s; with
// (i, j, k) cyclic: E[i][i] = E[j][j] = c, E[i][j] = s, E[j][i] = -s, E[k][k] = 1, the rest 0.
// The joint-specialised kernels call these with a constant k (a switch over k), so the indices
// fold at compile time.

/// out = E v (parent to child coordinates) for E about coordinate axis k (6 flops).
static inline void mbsu_rotKVec(int k, mbsReal c, mbsReal s, const mbsReal *restrict v,
                                mbsReal *restrict out) {
  const int i = (k + 1) % 3, j = (k + 2) % 3;
  out[i] = c * v[i] + s * v[j];
  out[j] = c * v[j] - s * v[i];
  out[k] = v[k];
}
/// out = E^T v (child to parent coordinates) for E about coordinate axis k (6 flops).
static inline void mbsu_rotKTVec(int k, mbsReal c, mbsReal s, const mbsReal *restrict v,
                                 mbsReal *restrict out) {
  const int i = (k + 1) % 3, j = (k + 2) % 3;
  out[i] = c * v[i] - s * v[j];
  out[j] = s * v[i] + c * v[j];
  out[k] = v[k];
}
/// out = X v for X = (E about axis k, r): [E w; E (v - r x w)] (24 flops; mbsu_xMotion: 42).
static inline void mbsu_xMotionK(int k, mbsReal c, mbsReal s, const mbsReal *restrict r,
                                 const mbsReal *restrict v, mbsReal *restrict out) {
  mbsReal t[3];
  mbsu_cross3(r, v, t);
  t[0] = v[3] - t[0];
  t[1] = v[4] - t[1];
  t[2] = v[5] - t[2];
  mbsu_rotKVec(k, c, s, v, out);
  mbsu_rotKVec(k, c, s, t, out + 3);
}
/// out = X^T f for X = (E about axis k, r): [E^T n + r x E^T f; E^T f] (24 flops; mbsu_xTForce:
/// 42).
static inline void mbsu_xTForceK(int k, mbsReal c, mbsReal s, const mbsReal *restrict r,
                                 const mbsReal *restrict f, mbsReal *restrict out) {
  mbsReal t[3];
  mbsu_rotKTVec(k, c, s, f, out);
  mbsu_rotKTVec(k, c, s, f + 3, out + 3);
  mbsu_cross3(r, out + 3, t);
  out[0] += t[0];
  out[1] += t[1];
  out[2] += t[2];
}

// ---- symmetric 6x6 matrices, packed (sym6: 21 reals) ----
// A symmetric spatial matrix [A B; B^T C] (A, C symmetric 3x3) is stored as A (6: upper triangle
// row by row, a00 a01 a02 a11 a12 a22), B (9, row-major), C (6, like A): offsets 0, 6, 15.

/// Position of entry (a, b) of a symmetric 3x3 matrix in its packed upper triangle.
static inline int mbsu_s3(int a, int b) {
  int lo = a < b ? a : b, hi = a < b ? b : a;
  return lo * (5 - lo) / 2 + hi;
}
/// Pack a compact rigid-body inertia si = [m, h, Io] (see mbsu_rbiMul): A = Io, B = h^, C = m 1.
static inline void mbsu_sym6FromRbi(const mbsReal *restrict si, mbsReal *restrict P) {
  const mbsReal m = si[0], *h = si + 1, *I = si + 4;
  P[0] = I[0], P[1] = I[3], P[2] = I[4], P[3] = I[1], P[4] = I[5], P[5] = I[2];
  P[6] = 0, P[7] = -h[2], P[8] = h[1];
  P[9] = h[2], P[10] = 0, P[11] = -h[0];
  P[12] = -h[1], P[13] = h[0], P[14] = 0;
  P[15] = m, P[16] = 0, P[17] = 0, P[18] = m, P[19] = 0, P[20] = m;
}
/// Full row-major 6x6 from a packed sym6.
static inline void mbsu_sym6ToFull(const mbsReal *restrict P, mbsReal *restrict M) {
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) {
      M[6 * a + b] = P[mbsu_s3(a, b)];
      M[6 * a + 3 + b] = P[6 + 3 * a + b];
      M[6 * (3 + b) + a] = P[6 + 3 * a + b];
      M[6 * (3 + a) + 3 + b] = P[15 + mbsu_s3(a, b)];
    }
}
/// Packed sym6 from the upper triangle of a row-major 6x6 (the lower triangle is not read).
static inline void mbsu_sym6FromFull(const mbsReal *restrict M, mbsReal *restrict P) {
  for (int a = 0; a < 3; a++) {
    for (int b = a; b < 3; b++) {
      P[mbsu_s3(a, b)] = M[6 * a + b];
      P[15 + mbsu_s3(a, b)] = M[6 * (3 + a) + 3 + b];
    }
    for (int b = 0; b < 3; b++) P[6 + 3 * a + b] = M[6 * a + 3 + b];
  }
}
/// out = P v for a packed sym6 (66 flops, as mbsu_mul6).
static inline void mbsu_sym6Mul(const mbsReal *restrict P, const mbsReal *restrict v,
                                mbsReal *restrict out) {
  const mbsReal *A = P, *B = P + 6, *C = P + 15, *w = v, *l = v + 3;
  out[0] = A[0] * w[0] + A[1] * w[1] + A[2] * w[2] + (B[0] * l[0] + B[1] * l[1] + B[2] * l[2]);
  out[1] = A[1] * w[0] + A[3] * w[1] + A[4] * w[2] + (B[3] * l[0] + B[4] * l[1] + B[5] * l[2]);
  out[2] = A[2] * w[0] + A[4] * w[1] + A[5] * w[2] + (B[6] * l[0] + B[7] * l[1] + B[8] * l[2]);
  out[3] = B[0] * w[0] + B[3] * w[1] + B[6] * w[2] + (C[0] * l[0] + C[1] * l[1] + C[2] * l[2]);
  out[4] = B[1] * w[0] + B[4] * w[1] + B[7] * w[2] + (C[1] * l[0] + C[3] * l[1] + C[4] * l[2]);
  out[5] = B[2] * w[0] + B[5] * w[1] + B[8] * w[2] + (C[2] * l[0] + C[4] * l[1] + C[5] * l[2]);
}
/// Packed out = E^T S E for a packed symmetric 3x3 S and any 3x3 E (75 flops).
static inline void mbsu_sym3Rot(const mbsReal *restrict E, const mbsReal *restrict S,
                                mbsReal *restrict out) {
  mbsReal T[9]; // T = S E
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++)
      T[3 * a + b] =
          S[mbsu_s3(a, 0)] * E[b] + S[mbsu_s3(a, 1)] * E[3 + b] + S[mbsu_s3(a, 2)] * E[6 + b];
  for (int a = 0; a < 3; a++)
    for (int b = a; b < 3; b++)
      out[mbsu_s3(a, b)] = E[a] * T[b] + E[3 + a] * T[3 + b] + E[6 + a] * T[6 + b];
}
/// Pout += X^T P X for packed sym6 P (B coordinates) and Pout (A coordinates), X = (E, r) as
/// everywhere in this file. rot = 0 asserts E = 1 (prismatic and fixed joints) and skips the
/// rotation. Same algebra as mbsu_inertiaCongruenceAdd: rotate blockwise (A1 = E^T A E, ...),
/// then translate: A' = A1 + Y + Y^T + W r^T, B' = B1 + W, C' = C1 with W = r^ C1, Y = r^ B1^T.
/// Flops: rotation 240 (2 x 75 + 90), translation 99, accumulation 21.
static inline void mbsu_sym6CongruenceAdd(const mbsReal *restrict X, int rot,
                                          const mbsReal *restrict P, mbsReal *restrict Pout) {
  const mbsReal *E = X, *r = X + 9;
  mbsReal A1[6], B1[9], C1[6];
  if (rot) {
    mbsReal T[9];
    mbsu_sym3Rot(E, P, A1);
    mbsu_sym3Rot(E, P + 15, C1);
    mbsu_mulMat3(P + 6, E, T);
    mbsu_mulMat3T(E, T, B1);
  } else {
    memcpy(A1, P, sizeof A1);
    memcpy(B1, P + 6, sizeof B1);
    memcpy(C1, P + 15, sizeof C1);
  }
  // W = r^ C1 and Y = r^ B1^T, column by column: column b of r^ M is r x (column b of M)
  mbsReal W[9], Y[9];
  for (int b = 0; b < 3; b++) {
    const mbsReal cb[3] = {C1[mbsu_s3(0, b)], C1[mbsu_s3(1, b)], C1[mbsu_s3(2, b)]};
    mbsReal o[3], q[3];
    mbsu_cross3(r, cb, o);
    mbsu_cross3(r, B1 + 3 * b, q);
    W[b] = o[0], W[3 + b] = o[1], W[6 + b] = o[2];
    Y[b] = q[0], Y[3 + b] = q[1], Y[6 + b] = q[2];
  }
  mbsReal *Ao = Pout, *Bo = Pout + 6, *Co = Pout + 15;
  for (int a = 0; a < 3; a++) {
    for (int b = a; b < 3; b++) {
      // Z = W r^T: row a of Z is r x (row a of W); its entry b (upper triangle only)
      const int b1 = (b + 1) % 3, b2 = (b + 2) % 3;
      mbsReal z = r[b1] * W[3 * a + b2] - r[b2] * W[3 * a + b1];
      Ao[mbsu_s3(a, b)] += A1[mbsu_s3(a, b)] + Y[3 * a + b] + Y[3 * b + a] + z;
      Co[mbsu_s3(a, b)] += C1[mbsu_s3(a, b)];
    }
    for (int b = 0; b < 3; b++) Bo[3 * a + b] += B1[3 * a + b] + W[3 * a + b];
  }
}

// ---- small dense SPD blocks (k <= 6, row-major, packed with leading dimension k) ----

/// In-place Cholesky factor A = L L^T (lower triangle of A overwritten by L, upper zeroed).
/// Returns 0 if A is not positive definite.
static inline int mbsu_cholFactor(mbsReal *A, int k) {
  for (int j = 0; j < k; j++) {
    mbsReal d = A[k * j + j];
    for (int l = 0; l < j; l++) d -= A[k * j + l] * A[k * j + l];
    if (!(d > 0)) return 0;
    d = sqrt(d);
    A[k * j + j] = d;
    for (int i = j + 1; i < k; i++) {
      mbsReal sum = A[k * i + j];
      for (int l = 0; l < j; l++) sum -= A[k * i + l] * A[k * j + l];
      A[k * i + j] = sum / d;
    }
    for (int i = 0; i < j; i++) A[k * i + j] = 0;
  }
  return 1;
}
/// x <- L^{-1} x (forward substitution).
static inline void mbsu_cholSolveL(const mbsReal *L, int k, mbsReal *x) {
  for (int i = 0; i < k; i++) {
    mbsReal sum = x[i];
    for (int l = 0; l < i; l++) sum -= L[k * i + l] * x[l];
    x[i] = sum / L[k * i + i];
  }
}
/// x <- L^{-T} x (backward substitution).
static inline void mbsu_cholSolveLT(const mbsReal *L, int k, mbsReal *x) {
  for (int i = k - 1; i >= 0; i--) {
    mbsReal sum = x[i];
    for (int l = i + 1; l < k; l++) sum -= L[k * l + i] * x[l];
    x[i] = sum / L[k * i + i];
  }
}
/// x <- (L L^T)^{-1} x.
static inline void mbsu_cholSolve(const mbsReal *L, int k, mbsReal *x) {
  mbsu_cholSolveL(L, k, x);
  mbsu_cholSolveLT(L, k, x);
}
/// y = A x for a k x k packed matrix (k <= 6; x and y may not alias).
static inline void mbsu_blockApply(const mbsReal *A, int k, const mbsReal *x, mbsReal *y) {
  for (int i = 0; i < k; i++) {
    mbsReal sum = 0;
    for (int j = 0; j < k; j++) sum += A[k * i + j] * x[j];
    y[i] = sum;
  }
}
/// Ainv (k x k, packed) = (L L^T)^{-1} from the factor of mbsu_cholFactor, column by column.
static inline void mbsu_cholInverse(const mbsReal *L, int k, mbsReal *Ainv) {
  for (int j = 0; j < k; j++) {
    mbsReal col[6] = {0, 0, 0, 0, 0, 0};
    col[j] = 1;
    mbsu_cholSolve(L, k, col);
    for (int i = 0; i < k; i++) Ainv[k * i + j] = col[i];
  }
}

#endif
