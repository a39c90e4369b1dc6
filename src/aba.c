/// \file aba.c
/// The articulated-body algorithm (Featherstone, Rigid Body Dynamics Algorithms (2008), Table 7.1)
/// twice: mbs_abaRef, the plain reference kept as the oracle, and mbs_aba, the optimised kernel
/// that solver.method = aba runs. They compute the same quantities with the same three passes;
/// mbs_aba differs in
///  - storage: each body's articulated inertia is packed symmetric (21 reals, spatial.h sym6)
///    in one record with pA, u and 1/D (w->abar), so passes 2 and 3 stream one array;
///  - revolute joints about a coordinate axis sg e_k (jnt_axisk, most joints of real models) run
///    kernels specialised for k: U = IA S is sg times column k of IA and D its diagonal entry;
///    Ia = IA - U U^T / D has row and column k exactly zero (15 entries are computed, not 36);
///    X rotates about e_k, so the congruence X^T Ia X rotates 2x2 blocks (half-angle form for the
///    symmetric ones); pa_k = sg tau; pass 3 forms y = IA a once for qdd and the joint wrench;
///  - every other joint unpacks IA and runs the reference projection (mbs_abaProjectJoint), then
///    the packed congruence mbsu_sym6CongruenceAdd.
/// The spikes of schur's paths (mbs_abaSpike ...) are in aba_spike.c.
/// Flops: flops.h mbs_flopAba, which also gives the ABA graph's node costs (critpath.c).
#include <math.h>
#include <string.h>
#include "mbspar/mbs_dynamics.h"
#include "mbspar/mbs_critpath.h"
#include "mbspar/mbs_solvertype.h"
#include "spatial.h"
#include "body.h"
#include "flops.h"
#include "aba_private.h"

// ---------------------------------------------------------------- the reference (mbs_abaRef)

// inverse of a k x k SPD matrix (row-major) by Cholesky; returns 0 if not positive definite
static int mbs_spdInverse(const mbsReal *A, int k, mbsReal *Ainv) {
  mbsReal L[36];
  memcpy(L, A, (size_t)(k * k) * sizeof(mbsReal));
  if (!mbsu_cholFactor(L, k)) return 0;
  mbsu_cholInverse(L, k, Ainv);
  return 1;
}

// k x k joint block of body b (k > 1): D = S^T U, Dinv = D^-1; Ia = IA - U Dinv U^T (upper
// triangle only, what mbsu_inertiaCongruenceAdd reads); pa = pA + Ia c + U Dinv u.
// Returns 0 if D is not positive definite.
static int mbs_abaProjectBlock(int k, const mbsReal *restrict IA, const mbsReal *restrict pA,
                               const mbsReal *restrict S, const mbsReal *restrict U,
                               const mbsReal *restrict u, const mbsReal *restrict c,
                               mbsReal *restrict Dinv, mbsReal *restrict Ia, mbsReal *restrict pa) {
  mbsReal D[36], DU[36], Du[6];
  for (int i = 0; i < k; i++)
    for (int j = 0; j < k; j++) D[k * i + j] = mbsu_dot6(S + 6 * i, U + 6 * j);
  if (!mbs_spdInverse(D, k, Dinv)) return 0;
  for (int i = 0; i < k; i++) {
    Du[i] = 0;
    for (int j = 0; j < k; j++) Du[i] += Dinv[k * i + j] * u[j];
    for (int r = 0; r < 6; r++) {
      mbsReal sum = 0;
      for (int j = 0; j < k; j++) sum += Dinv[k * i + j] * U[6 * j + r];
      DU[6 * i + r] = sum; // (Dinv U^T) row i
    }
  }
  for (int r = 0; r < 6; r++)
    for (int cc = r; cc < 6; cc++) {
      mbsReal sum = IA[6 * r + cc];
      for (int i = 0; i < k; i++) sum -= U[6 * i + r] * DU[6 * i + cc];
      Ia[6 * r + cc] = sum;
    }
  // pa = pA + IA c + U (Dinv u - DU c), using Ia c = IA c - U (DU c)
  mbsu_mul6(IA, c, pa);
  for (int i = 0; i < k; i++) Du[i] -= mbsu_dot6(DU + 6 * i, c);
  for (int r = 0; r < 6; r++) {
    pa[r] += pA[r];
    for (int i = 0; i < k; i++) pa[r] += U[6 * i + r] * Du[i];
  }
  return 1;
}

// pass 2 projection of body b's joint from its articulated inertia IA (full 6 x 6) and bias pA:
// writes U, u, Dinv (w->U, w->u, w->Dinv) and, if b has a parent, what it hands on: Ia (upper
// triangle valid) and pa. Returns -1 if D is singular (error set), 0 for a root (nothing to hand
// on), 1 otherwise.
static int mbs_abaProjectJoint(const mbsModel *m, mbsWork *w, int b, const mbsReal *restrict IA,
                               const mbsReal *restrict pA, mbsReal *restrict Ia,
                               mbsReal *restrict pa) {
  int k = m->body_dofnum[b], d0 = m->body_dofadr[b], p = m->body_parent[b];
  const mbsReal *restrict S = w->sdof + 6 * d0, *restrict c = w->cacc + 6 * b;
  mbsReal *restrict U = w->U + 6 * d0, *restrict u = w->u + d0, *restrict Dinv = w->Dinv + 36 * b;
  if (k == 1) {
    // one dof: U = IA s, u = tau - s^T pA, D = s^T U is a scalar, Ia = IA - U U^T / D
    mbsReal D;
    if (mbs_jntIsRevolute(m->body_jnttype[b])) { // s = [axis; 0]
      for (int r = 0; r < 6; r++)
        U[r] = IA[6 * r] * S[0] + IA[6 * r + 1] * S[1] + IA[6 * r + 2] * S[2];
      u[0] = w->qfrc[d0] - mbsu_dot3(S, pA);
      D = mbsu_dot3(S, U);
    } else {
      mbsu_mul6(IA, S, U);
      u[0] = w->qfrc[d0] - mbsu_dot6(S, pA);
      D = mbsu_dot6(S, U);
    }
    if (!(D > 0)) {
      mbs_errSet(MBS_ERR_NUMERIC, "aba: singular articulated inertia at body %s", m->body_name[b]);
      return -1;
    }
    mbsReal dinv = 1 / D;
    Dinv[0] = dinv;
    MBS_FLOPS(mbs_flopAbaU(1, m->body_jnttype[b]));
    if (p < 0) return 0;
    // (the full square costs fewer instructions than the triangle: fixed trip counts)
    for (int r = 0; r < 6; r++) {
      mbsReal Ur = dinv * U[r];
      for (int cc = 0; cc < 6; cc++) Ia[6 * r + cc] = IA[6 * r + cc] - Ur * U[cc];
    }
    MBS_FLOPS(MBS_FL_ABA_IA1);
    // pa = pA + Ia c + U u / D = pA + IA c + U (u - U.c) / D
    mbsu_mul6(IA, c, pa);
    mbsReal g = dinv * (u[0] - mbsu_dot6(U, c));
    for (int r = 0; r < 6; r++) pa[r] += pA[r] + U[r] * g;
    MBS_FLOPS(MBS_FL_ABA_PA1);
  } else if (k > 1) {
    // U = IA S ; u = tau - S^T pA
    for (int j = 0; j < k; j++) {
      mbsu_mul6(IA, S + 6 * j, U + 6 * j);
      u[j] = w->qfrc[d0 + j] - mbsu_dot6(S + 6 * j, pA);
    }
    MBS_FLOPS(mbs_flopAbaU(k, m->body_jnttype[b]) + mbs_flopAbaBlock(k));
    if (!mbs_abaProjectBlock(k, IA, pA, S, U, u, c, Dinv, Ia, pa)) {
      mbs_errSet(MBS_ERR_NUMERIC, "aba: singular articulated inertia at body %s", m->body_name[b]);
      return -1;
    }
    if (p < 0) return 0;
  } else { // fixed joint: everything passes to the parent
    if (p < 0) return 0;
    memcpy(Ia, IA, 36 * sizeof(mbsReal));
    mbsu_mul6(IA, c, pa);
    for (int r = 0; r < 6; r++) pa[r] += pA[r];
    MBS_FLOPS(MBS_FL_ABA_PA0);
  }
  return 1;
}

// pass 3 for body b: a = X a_p + c ; qdd = Dinv (u - U^T a) ; a += S qdd (w->acc, w->qdd)
static void mbs_abaAccel(const mbsModel *m, mbsWork *w, int b, const mbsReal *restrict ap) {
  int k = m->body_dofnum[b], d0 = m->body_dofadr[b];
  const mbsReal *restrict S = w->sdof + 6 * d0, *restrict U = w->U + 6 * d0;
  const mbsReal *restrict Dinv = w->Dinv + 36 * b;
  mbsReal *restrict a = w->acc + 6 * b, *restrict qdd = w->qdd + d0, r[6];
  mbsu_xMotion(w->xpar + 12 * b, ap, a);
  for (int i = 0; i < 6; i++) a[i] += w->cacc[6 * b + i];
  for (int j = 0; j < k; j++) r[j] = w->u[d0 + j] - mbsu_dot6(U + 6 * j, a);
  for (int i = 0; i < k; i++) {
    mbsReal sum = 0;
    for (int j = 0; j < k; j++) sum += Dinv[k * i + j] * r[j];
    qdd[i] = sum;
  }
  for (int j = 0; j < k; j++)
    for (int i = 0; i < 6; i++) a[i] += S[6 * j + i] * qdd[j];
}

mbsErr mbs_abaRef(const mbsModel *m, mbsWork *w) {
  int n = m->nbody;
  mbsReal a0[6];
  mbs_baseAccel(m, 1, a0);

  // pass 1: articulated quantities start as the rigid ones (bias minus external wrenches)
  for (int b = 0; b < n; b++) {
    mbs_bodyInertiaFull(m, b, w->IA + 36 * b);
    memcpy(w->pA + 6 * b, w->cbias + 6 * b, 6 * sizeof(mbsReal));
  }
  if (w->fext_on) {
    for (int i = 0; i < 6 * n; i++) w->pA[i] -= w->fext[i];
    MBS_FLOPS(6L * n);
  }

  // pass 2 (tip to base): project out each joint and hand the rest to the parent
  for (int b = n - 1; b >= 0; b--) {
    mbsReal Ia[36], pa[6]; // the congruence below reads only the upper triangle of Ia
    int st = mbs_abaProjectJoint(m, w, b, w->IA + 36 * b, w->pA + 6 * b, Ia, pa);
    if (st < 0) return MBS_ERR_NUMERIC;
    if (st == 0) continue;
    // parent: IA_p += X^T Ia X ; pA_p += X^T pa
    int p = m->body_parent[b];
    const mbsReal *X = w->xpar + 12 * b;
    mbsReal t6[6];
    mbsu_inertiaCongruenceAdd(X, Ia, w->IA + 36 * p);
    mbsu_xTForce(X, pa, t6);
    for (int r = 0; r < 6; r++) w->pA[6 * p + r] += t6[r];
    MBS_FLOPS(MBS_FL_CONGRUENCE + MBS_FL_ABA_PF);
  }

  // pass 3 (base to tip): accelerations
  for (int b = 0; b < n; b++) {
    int p = m->body_parent[b];
    mbs_abaAccel(m, w, b, p < 0 ? a0 : w->acc + 6 * p);
    // joint wrench f = IA a + pA (articulated inertia before projection)
    mbsReal *restrict f = w->jfrc + 6 * b;
    mbsu_mul6(w->IA + 36 * b, w->acc + 6 * b, f);
    for (int i = 0; i < 6; i++) f[i] += w->pA[6 * b + i];
    MBS_FLOPS(MBS_FL_ABA_A + mbs_flopAbaQdd(m->body_dofnum[b]) + MBS_FL_ABA_F);
  }
  return MBS_OK;
}

// ---------------------------------------------------------------- the optimised ABA (mbs_aba)

// pass 2 for a revolute joint about sg e_k (aba_private.h, the whole pass)
static MBS_FORCEINLINE int mbs_abaBackK(const int k, const mbsModel *m, mbsWork *w, int b) {
  return mbs_abaBackKPart(k, 3, m, w, b, NULL);
}

// pass 2 for any other joint: the reference projection on the unpacked IA, packed congruence
static int mbs_abaBackGeneric(const mbsModel *m, mbsWork *w, int b) {
  mbsReal *R = w->abar + (size_t)MBS_ABAR * b, IA[36], Ia[36], pa[6], P[21], t6[6];
  mbsu_sym6ToFull(R, IA);
  int st = mbs_abaProjectJoint(m, w, b, IA, R + MBS_REC_PA, Ia, pa);
  if (st <= 0) return st;
  int p = m->body_parent[b], t = m->body_jnttype[b];
  mbsReal *Rp = w->abar + (size_t)MBS_ABAR * p;
  const mbsReal *X = w->xpar + 12 * b;
  mbsu_sym6FromFull(Ia, P);
  mbsu_sym6CongruenceAdd(X, mbs_jntRotates(t), P, Rp);
  MBS_FLOPS(mbs_flopAba(m, b, MBS_FLA_CONGR) + mbs_flopAba(m, b, MBS_FLA_CONGR_ACC));
  mbsu_xTForce(X, pa, t6);
  for (int x = 0; x < 6; x++) Rp[MBS_REC_PA + x] += t6[x];
  MBS_FLOPS(mbs_flopAba(m, b, MBS_FLA_XF) + mbs_flopAba(m, b, MBS_FLA_XF_ACC));
  return 1;
}

// pass 3 for a revolute joint about sg e_k: a = X a_p + c, y = IA a, qdd = (u - sg y_k) / D,
// a_k += sg qdd, f = IA a + pA = y + pA + IA[:, k] sg qdd
static MBS_FORCEINLINE void mbs_abaFwdK(const int k, const mbsModel *m, mbsWork *w, int b,
                                        const mbsReal *restrict ap) {
  const int i = (k + 1) % 3, j = (k + 2) % 3;
  const mbsReal *restrict R = w->abar + (size_t)MBS_ABAR * b, *X = w->xpar + 12 * b;
  const mbsReal *c6 = w->cacc + 6 * b, sg = m->jnt_axis[3 * b + k];
  mbsReal a[6], y[6];
  mbsu_xMotionK(k, X[3 * i + i], X[3 * i + j], X + 9, ap, a);
  a[i] += c6[i], a[j] += c6[j], a[3 + i] += c6[3 + i], a[3 + j] += c6[3 + j];
  MBS_FLOPS(mbs_flopAba(m, b, MBS_FLA_A));
  mbsu_sym6Mul(R, a, y);
  mbsReal qdd = R[MBS_REC_DINV] * (R[MBS_REC_U] - sg * y[k]), h = sg * qdd;
  a[k] += h;
  MBS_FLOPS(mbs_flopAba(m, b, MBS_FLA_QDD));
  const mbsReal *A = R, *B = R + 6, *pA = R + MBS_REC_PA;
  mbsReal *restrict f = w->jfrc + 6 * b, *restrict ao = w->acc + 6 * b;
  if (!w->homog) { // a loop layer's unit solve reads the accelerations alone: no joint wrench
    f[0] = y[0] + pA[0] + A[S3(0, k)] * h;
    f[1] = y[1] + pA[1] + A[S3(1, k)] * h;
    f[2] = y[2] + pA[2] + A[S3(2, k)] * h;
    f[3] = y[3] + pA[3] + B[3 * k] * h;
    f[4] = y[4] + pA[4] + B[3 * k + 1] * h;
    f[5] = y[5] + pA[5] + B[3 * k + 2] * h;
    MBS_FLOPS(mbs_flopAba(m, b, MBS_FLA_F));
  }
  memcpy(ao, a, sizeof a);
  w->qdd[m->body_dofadr[b]] = qdd;
}

// pass 1 for body b, the bias: pA starts as b's own
static inline void mbs_abaInitBias(mbsWork *w, int b) {
  mbsReal *R = w->abar + (size_t)MBS_ABAR * b;
  memcpy(R + MBS_REC_PA, w->cbias + 6 * b, 6 * sizeof(mbsReal));
  if (w->fext_on) { // external wrenches (spring-dampers, loop forces) enter as minus a bias
    for (int i = 0; i < 6; i++) R[MBS_REC_PA + i] -= w->fext[6 * b + i];
    MBS_FLOPS(6);
  }
}

// pass 1 for body b: articulated quantities start as the rigid ones
static inline void mbs_abaInitBody(const mbsModel *m, mbsWork *w, int b) {
  mbs_bodyInertiaSym6(m, b, w->abar + (size_t)MBS_ABAR * b);
  mbs_abaInitBias(w, b);
}

// ---------------------------------------------------------------- per-body entry points

void mbs_abaBodyInit(const mbsModel *m, mbsWork *w, int b) {
  mbs_abaInitBody(m, w, b);
}

void mbs_abaBodyInitRhs(const mbsModel *m, mbsWork *w, int b) {
  (void)m;
  mbs_abaInitBias(w, b);
}

static MBS_FORCEINLINE void mbs_abaRhsK(const int k, const mbsModel *m, mbsWork *w, int b) {
  const int i = (k + 1) % 3, j = (k + 2) % 3, p = m->body_parent[b];
  mbsReal *restrict R = w->abar + (size_t)MBS_ABAR * b;
  const mbsReal *pA = R + MBS_REC_PA, sg = m->jnt_axis[3 * b + k];
  const mbsReal u = w->qfrc[m->body_dofadr[b]] - sg * pA[k];
  R[MBS_REC_U] = u;
  MBS_FLOPS(mbs_flopAbaRhs(m, b, w->homog));
  if (p < 0) return;
  mbsReal y[6] = {0, 0, 0, 0, 0, 0}, col[6], pa[6], t6[6];
  if (!w->homog) mbsu_sym6Mul(R, w->cacc + 6 * b, y);
  mbs_abaColK(R, k, col);
  const mbsReal h = R[MBS_REC_DINV] * (sg * u - y[k]);
  for (int x = 0; x < 6; x++) pa[x] = pA[x] + y[x] + col[x] * h;
  const mbsReal *X = w->xpar + 12 * b;
  mbsu_xTForceK(k, X[3 * i + i], X[3 * i + j], X + 9, pa, t6);
  mbsReal *Rp = w->abar + (size_t)MBS_ABAR * p;
  for (int x = 0; x < 6; x++) Rp[MBS_REC_PA + x] += t6[x];
}

// any other joint: the generic record of the last full pass (w->U, w->Dinv; u into w->u)
static void mbs_abaRhsGeneric(const mbsModel *m, mbsWork *w, int b) {
  const int k = m->body_dofnum[b], d0 = m->body_dofadr[b], p = m->body_parent[b];
  mbsReal *R = w->abar + (size_t)MBS_ABAR * b, *u = w->u + d0;
  const mbsReal *pA = R + MBS_REC_PA, *S = w->sdof + 6 * d0, *U = w->U + 6 * d0;
  const mbsReal *Dinv = w->Dinv + 36 * b, *c = w->cacc + 6 * b;
  for (int j = 0; j < k; j++) u[j] = w->qfrc[d0 + j] - mbsu_dot6(S + 6 * j, pA);
  MBS_FLOPS(mbs_flopAbaRhs(m, b, w->homog));
  if (p < 0) return;
  mbsReal y[6] = {0, 0, 0, 0, 0, 0}, r[6], h[6], pa[6], t6[6];
  if (!w->homog) mbsu_sym6Mul(R, c, y);
  for (int j = 0; j < k; j++) r[j] = w->homog ? u[j] : u[j] - mbsu_dot6(U + 6 * j, c);
  for (int i = 0; i < k; i++) {
    h[i] = 0;
    for (int j = 0; j < k; j++) h[i] += Dinv[k * i + j] * r[j];
  }
  for (int x = 0; x < 6; x++) {
    pa[x] = pA[x] + y[x];
    for (int i = 0; i < k; i++) pa[x] += U[6 * i + x] * h[i];
  }
  mbsu_xTForce(w->xpar + 12 * b, pa, t6);
  mbsReal *Rp = w->abar + (size_t)MBS_ABAR * p;
  for (int x = 0; x < 6; x++) Rp[MBS_REC_PA + x] += t6[x];
}

void mbs_abaBodyRhs(const mbsModel *m, mbsWork *w, int b) {
  if (!mbs_jntSpecial(m, b)) {
    mbs_abaRhsGeneric(m, w, b);
    return;
  }
  switch (m->jnt_axisk[b]) {
  case 0:
    mbs_abaRhsK(0, m, w, b);
    return;
  case 1:
    mbs_abaRhsK(1, m, w, b);
    return;
  default:
    mbs_abaRhsK(2, m, w, b);
  }
}

// pass 2 or 3 for one body: the axis-specialised kernel or the generic one (mbs_aba and the
// per-body entry points)
static MBS_FORCEINLINE int mbs_abaBack1(const mbsModel *m, mbsWork *w, int b) {
  if (mbs_jntSpecial(m, b)) {
    int ok;
    switch (m->jnt_axisk[b]) {
    case 0:
      ok = mbs_abaBackK(0, m, w, b);
      break;
    case 1:
      ok = mbs_abaBackK(1, m, w, b);
      break;
    default:
      ok = mbs_abaBackK(2, m, w, b);
    }
    if (!ok)
      mbs_errSet(MBS_ERR_NUMERIC, "aba: singular articulated inertia at body %s", m->body_name[b]);
    return ok ? 1 : -1;
  }
  return mbs_abaBackGeneric(m, w, b) < 0 ? -1 : 1;
}

static MBS_FORCEINLINE void mbs_abaFwd1(const mbsModel *m, mbsWork *w, int b, const mbsReal *ap) {
  if (mbs_jntSpecial(m, b)) {
    switch (m->jnt_axisk[b]) {
    case 0:
      mbs_abaFwdK(0, m, w, b, ap);
      return;
    case 1:
      mbs_abaFwdK(1, m, w, b, ap);
      return;
    default:
      mbs_abaFwdK(2, m, w, b, ap);
      return;
    }
  }
  mbs_abaAccel(m, w, b, ap);
  MBS_FLOPS(mbs_flopAba(m, b, MBS_FLA_A) + mbs_flopAba(m, b, MBS_FLA_QDD));
  if (w->homog) return; // a loop layer's unit solve reads the accelerations alone
  const mbsReal *R = w->abar + (size_t)MBS_ABAR * b;
  mbsReal *restrict f = w->jfrc + 6 * b;
  mbsu_sym6Mul(R, w->acc + 6 * b, f);
  for (int x = 0; x < 6; x++) f[x] += R[MBS_REC_PA + x];
  MBS_FLOPS(mbs_flopAba(m, b, MBS_FLA_F));
}

void mbs_abaBodyZeroU(const mbsModel *m, mbsWork *w, int b) {
  if (mbs_jntSpecial(m, b))
    w->abar[(size_t)MBS_ABAR * b + MBS_REC_U] = 0;
  else
    memset(w->u + m->body_dofadr[b], 0, sizeof(mbsReal) * (size_t)m->body_dofnum[b]);
}

int mbs_abaBodyBack(const mbsModel *m, mbsWork *w, int b) {
  return mbs_abaBack1(m, w, b);
}

void mbs_abaBodyFwd(const mbsModel *m, mbsWork *w, int b, const mbsReal *ap) {
  mbs_abaFwd1(m, w, b, ap);
}

mbsErr mbs_aba(const mbsModel *m, mbsWork *w) {
  int n = m->nbody;
  mbsReal a0[6];
  mbs_baseAccel(m, 1, a0);

  // pass 2 (tip to base): project out each joint and hand the rest to the parent. Pass 1 (the
  // articulated quantities start as the rigid ones) runs inside it, just before a record is first
  // written: a leaf's own, a parent's before its last child (the first one visited) adds to it
  for (int b = n - 1; b >= 0; b--) {
    int p = m->body_parent[b];
    if (m->body_childnum[b] == 0) mbs_abaInitBody(m, w, b);
    if (p >= 0 && m->child_list[m->body_childadr[p] + m->body_childnum[p] - 1] == b)
      mbs_abaInitBody(m, w, p);
    if (mbs_abaBack1(m, w, b) < 0) return MBS_ERR_NUMERIC;
  }

  // pass 3 (base to tip): accelerations and joint wrenches
  for (int b = 0; b < n; b++) {
    int p = m->body_parent[b];
    mbs_abaFwd1(m, w, b, p < 0 ? a0 : w->acc + 6 * p);
  }
  return MBS_OK;
}

// the serial baseline aba: a whole-model recursion behind mbs_forward (rank 0), no callbacks
const mbsSolverType mbs_solverAba = {.name = "aba",
                                     .method = MBS_SOLVER_ABA,
                                     .baseline = 1,
                                     .cpa_graph = MBS_CPA_GRAPH_ABA,
                                     .semidef_bodies = 1,
                                     .cpa_build = mbs_cpaAbaGraph,
                                     .cpa_loops = mbs_cpaLoopsGraph,
                                     .tree = mbs_aba};
