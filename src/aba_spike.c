/// \file aba_spike.c
/// ABA's spikes on schur's paths (docs/formulation.md 4.6): an unknown wrench on a body of a path
/// carried as columns P into the articulated bias from there to the path's root (mbs_abaSpike,
/// mbs_abaSpikeVec, mbs_abaSpikeCols) and the forward pass with the known port forces
/// (mbs_abaBodyFwdSpike). Built on the records of ABA's pass 2 (aba.c). The overlapped factor's
/// split of pass 2 and of the spike into their inertia and bias parts (docs/formulation.md 4.4).
#include <math.h>
#include <string.h>
#include "mbspar/mbs_dynamics.h"
#include "spatial.h"
#include "flops.h"
#include "body.h"
#include "aba_private.h"

// ---------------------------------------------------------------- spikes (schur paths)
// An unknown wrench -G pi on a body of a path (a port force, nl columns) enters the articulated
// bias of every body from there to the path's root as P pi (docs/formulation.md 4.6). Revolute
// joints about a coordinate axis: S = sg e_k, U = sg IA[:, k], D^-1 = dinv (the record of pass 2).

// P is stored by rows, MBS_SPIKE_LD apart; only the first nq columns (the port's constraint
// directions) are live and touched, the others stay zero. nq is a compile-time constant in the
// kernels below (mbs_abaSpike dispatches), so every step is the same operation on the columns,
// which the compiler vectorises. Theta is symmetric: only its lower triangle (a >= q) is
// accumulated; the readers (schur_factor.c) read that triangle.
// In parts (part, a compile-time constant): 3 the whole kernel (mbs_abaSpike); for the overlapped
// factor of schur, 1 its inertia part (Theta and P moved to the parent: positions alone; P at b
// kept in Pold) and 2 its bias part (gam += Pold^T e). The same expressions in every part.
static MBS_FORCEINLINE void mbs_abaSpikeKPart(const int k, const int nq, const int part,
                                              const mbsModel *m, const mbsWork *w, int b,
                                              mbsReal *restrict P, mbsReal *restrict Th,
                                              mbsReal *restrict gam, mbsReal *restrict Pold,
                                              const mbsReal *restrict Pb) {
  enum { L = MBS_SPIKE_LD };
  const int i = (k + 1) % 3, j = (k + 2) % 3;
  const mbsReal *R = w->abar + (size_t)MBS_ABAR * b, *c6 = w->cacc + 6 * b;
  const mbsReal sg = m->jnt_axis[3 * b + k], dinv = R[MBS_REC_DINV];
  mbsReal col[6], e[6];
  mbs_abaColK(R, k, col);
  if (part == 1) memcpy(Pold, P, 6 * L * sizeof(mbsReal));
  const mbsReal *Pg = part == 2 ? Pb : P; // P at b, for gam
  if (part & 2) {
    // e: the body's acceleration for a zero parent acceleration and pi = 0. c's k and 3 + k
    // components are exactly zero (mbs_bodyVelocity; mbs_aba relies on it too), so they are left
    // out of U^T c, e_k = dinv (sg u - U^T c) and e_{3+k} = 0 is left out of P^T e: the same sums
    // less terms that are exactly zero (bitwise equal but for the sign of a zero)
    for (int x = 0; x < 6; x++) e[x] = c6[x];
    mbsReal uc = 0; // U^T c over the four live terms, in mbsu_dot6's order
    for (int x = 0; x < 6; x++)
      if (x != k && x != 3 + k) uc += col[x] * c6[x];
    e[k] = dinv * (sg * R[MBS_REC_U] - uc);
  }
  if (part == 2) {
    for (int q = 0; q < nq; q++) {
      mbsReal g = 0;
      for (int x = 0; x < 6; x++)
        if (x != 3 + k) g += Pg[x * L + q] * e[x];
      gam[q] += g;
    }
    return;
  }
  const mbsReal *X = w->xpar + 12 * b, c = X[3 * i + i], s = X[3 * i + j], *r = X + 9;
  mbsReal pk[L], h[L], pa[6][L];
  for (int q = 0; q < nq; q++) {
    pk[q] = P[k * L + q];
    h[q] = dinv * pk[q];
    mbsReal g = 0;
    for (int x = 0; x < 6; x++) {
      if ((part & 2) && x != 3 + k) g += Pg[x * L + q] * e[x];
      // S^T pa = pk - D dinv pk is zero in exact arithmetic (col_k = D): set, as mbs_aba sets
      // its pa_k, not left as a rounding residue
      pa[x][q] = x == k ? 0 : P[x * L + q] - col[x] * h[q];
    }
    if (part & 2) gam[q] += g;
  }
  // Theta += h pk^T (symmetric: h = dinv pk), lower triangle
  for (int a = 0; a < nq; a++)
    for (int q = 0; q <= a; q++) Th[a * L + q] += h[a] * pk[q];
  // P = X^T pa: E^T about e_k on both halves, then the angular half += r x (linear half)
  for (int q = 0; q < nq; q++) {
    mbsReal n0[3], f0[3];
    n0[i] = c * pa[i][q] - s * pa[j][q];
    n0[j] = s * pa[i][q] + c * pa[j][q];
    f0[i] = c * pa[3 + i][q] - s * pa[3 + j][q];
    f0[j] = s * pa[3 + i][q] + c * pa[3 + j][q];
    f0[k] = pa[3 + k][q];
    mbsReal t[3];
    mbsu_cross3(r, f0, t);
    P[i * L + q] = n0[i] + t[i];
    P[j * L + q] = n0[j] + t[j];
    P[k * L + q] = t[k]; // n0_k = pa_k = 0
    P[3 * L + q] = f0[0];
    P[4 * L + q] = f0[1];
    P[5 * L + q] = f0[2];
  }
}

static MBS_FORCEINLINE void mbs_abaSpikeK(const int k, const int nq, const mbsModel *m,
                                          const mbsWork *w, int b, mbsReal *restrict P,
                                          mbsReal *restrict Th, mbsReal *restrict gam) {
  mbs_abaSpikeKPart(k, nq, 3, m, w, b, P, Th, gam, NULL, NULL);
}

// any other joint: the generic record of pass 2 (w->U, w->Dinv, w->u; k = 0 for fixed joints)
static void mbs_abaSpikeGeneric(const mbsModel *m, const mbsWork *w, int b, int nq,
                                mbsReal *restrict P, mbsReal *restrict Th, mbsReal *restrict gam) {
  enum { L = MBS_SPIKE_LD };
  const int k = m->body_dofnum[b], d0 = m->body_dofadr[b];
  const mbsReal *S = w->sdof + 6 * d0, *U = w->U + 6 * d0, *Dinv = w->Dinv + 36 * b;
  const mbsReal *c6 = w->cacc + 6 * b;
  mbsReal e[6], r[6], h[6], SP[6][L], DSP[6][L];
  // e = c + S Dinv (u - U^T c): b's acceleration for a motionless parent and pi = 0
  for (int x = 0; x < 6; x++) e[x] = c6[x];
  for (int j = 0; j < k; j++) r[j] = w->u[d0 + j] - mbsu_dot6(U + 6 * j, c6);
  for (int i = 0; i < k; i++) {
    h[i] = 0;
    for (int j = 0; j < k; j++) h[i] += Dinv[k * i + j] * r[j];
    for (int x = 0; x < 6; x++) e[x] += S[6 * i + x] * h[i];
  }
  for (int q = 0; q < nq; q++) {
    mbsReal g = 0;
    for (int x = 0; x < 6; x++) g += P[x * L + q] * e[x];
    gam[q] += g;
    for (int j = 0; j < k; j++) {
      mbsReal v = 0;
      for (int x = 0; x < 6; x++) v += S[6 * j + x] * P[x * L + q];
      SP[j][q] = v;
    }
  }
  for (int i = 0; i < k; i++)
    for (int q = 0; q < nq; q++) {
      mbsReal v = 0;
      for (int j = 0; j < k; j++) v += Dinv[k * i + j] * SP[j][q];
      DSP[i][q] = v;
    }
  // Theta += SP^T Dinv SP (lower triangle); P = X^T (P - U Dinv SP)
  for (int a = 0; a < nq && k > 0; a++)
    for (int q = 0; q <= a; q++) {
      mbsReal v = 0;
      for (int i = 0; i < k; i++) v += SP[i][a] * DSP[i][q];
      Th[a * L + q] += v;
    }
  const mbsReal *X = w->xpar + 12 * b;
  for (int q = 0; q < nq; q++) {
    mbsReal pa[6], out[6];
    for (int x = 0; x < 6; x++) {
      pa[x] = P[x * L + q];
      for (int i = 0; i < k; i++) pa[x] -= U[6 * i + x] * DSP[i][q];
    }
    mbsu_xTForce(X, pa, out);
    for (int x = 0; x < 6; x++) P[x * L + q] = out[x];
  }
}

// the axis-specialised kernel for nq live columns: the port of a revolute joint (5), any
// 6-constraint joint, or any other count (a loop bound known at run time)
static MBS_FORCEINLINE void mbs_abaSpikeNq(const int k, const mbsModel *m, const mbsWork *w, int b,
                                           int nq, mbsReal *restrict P, mbsReal *restrict Th,
                                           mbsReal *restrict gam) {
  if (nq == 5)
    mbs_abaSpikeK(k, 5, m, w, b, P, Th, gam);
  else if (nq == 6)
    mbs_abaSpikeK(k, 6, m, w, b, P, Th, gam);
  else
    mbs_abaSpikeK(k, nq, m, w, b, P, Th, gam);
}

MBS_CLONES void mbs_abaSpike(const mbsModel *m, const mbsWork *w, int b, int nq,
                             mbsReal *restrict P, mbsReal *restrict Th, mbsReal *restrict gam) {
  MBS_FLOPS(mbs_flopSpikeBody(m, b, nq));
  if (!mbs_jntSpecial(m, b)) {
    mbs_abaSpikeGeneric(m, w, b, nq, P, Th, gam);
    return;
  }
  switch (m->jnt_axisk[b]) {
  case 0:
    mbs_abaSpikeNq(0, m, w, b, nq, P, Th, gam);
    return;
  case 1:
    mbs_abaSpikeNq(1, m, w, b, nq, P, Th, gam);
    return;
  default:
    mbs_abaSpikeNq(2, m, w, b, nq, P, Th, gam);
  }
}

MBS_CLONES void mbs_abaSpikeInertia(const mbsModel *m, const mbsWork *w, int b, int nq,
                                    mbsReal *restrict P, mbsReal *restrict Th,
                                    mbsReal *restrict Pold) {
  MBS_FLOPS(mbs_flopSpikeSpec(nq) - mbs_flopSpikeSpecBias(nq));
  const int k = m->jnt_axisk[b];
  if (nq == 5) { // the port of a revolute joint: the vectorised kernel of mbs_abaSpike
    if (k == 0)
      mbs_abaSpikeKPart(0, 5, 1, m, w, b, P, Th, NULL, Pold, NULL);
    else if (k == 1)
      mbs_abaSpikeKPart(1, 5, 1, m, w, b, P, Th, NULL, Pold, NULL);
    else
      mbs_abaSpikeKPart(2, 5, 1, m, w, b, P, Th, NULL, Pold, NULL);
  } else if (k == 0) {
    mbs_abaSpikeKPart(0, nq, 1, m, w, b, P, Th, NULL, Pold, NULL);
  } else if (k == 1) {
    mbs_abaSpikeKPart(1, nq, 1, m, w, b, P, Th, NULL, Pold, NULL);
  } else {
    mbs_abaSpikeKPart(2, nq, 1, m, w, b, P, Th, NULL, Pold, NULL);
  }
}

MBS_CLONES void mbs_abaSpikeBias(const mbsModel *m, const mbsWork *w, int b, int nq,
                                 const mbsReal *restrict Pold, mbsReal *restrict gam) {
  MBS_FLOPS(mbs_flopSpikeSpecBias(nq));
  const int k = m->jnt_axisk[b];
  if (nq == 5) {
    if (k == 0)
      mbs_abaSpikeKPart(0, 5, 2, m, w, b, NULL, NULL, gam, NULL, Pold);
    else if (k == 1)
      mbs_abaSpikeKPart(1, 5, 2, m, w, b, NULL, NULL, gam, NULL, Pold);
    else
      mbs_abaSpikeKPart(2, 5, 2, m, w, b, NULL, NULL, gam, NULL, Pold);
  } else if (k == 0) {
    mbs_abaSpikeKPart(0, nq, 2, m, w, b, NULL, NULL, gam, NULL, Pold);
  } else if (k == 1) {
    mbs_abaSpikeKPart(1, nq, 2, m, w, b, NULL, NULL, gam, NULL, Pold);
  } else {
    mbs_abaSpikeKPart(2, nq, 2, m, w, b, NULL, NULL, gam, NULL, Pold);
  }
}

static MBS_FORCEINLINE void mbs_abaSpikeVecK(const int k, const mbsWork *w, int b,
                                             mbsReal *restrict p) {
  const int i = (k + 1) % 3, j = (k + 2) % 3;
  const mbsReal *R = w->abar + (size_t)MBS_ABAR * b, *X = w->xpar + 12 * b;
  mbsReal col[6], pa[6];
  mbs_abaColK(R, k, col);
  const mbsReal h = R[MBS_REC_DINV] * p[k], c = X[3 * i + i], s = X[3 * i + j];
  for (int x = 0; x < 6; x++) pa[x] = x == k ? 0 : p[x] - col[x] * h; // S^T pa = 0 (mbs_abaSpikeK)
  // p = X^T pa (mbsu_xTForceK without the add of pa_k = 0)
  mbsReal t[3];
  mbsu_rotKTVec(k, c, s, pa + 3, p + 3);
  mbsu_cross3(X + 9, p + 3, t);
  p[i] = c * pa[i] - s * pa[j] + t[i];
  p[j] = s * pa[i] + c * pa[j] + t[j];
  p[k] = t[k];
}

MBS_CLONES void mbs_abaSpikeVec(const mbsModel *m, const mbsWork *w, int b, mbsReal *restrict p) {
  MBS_FLOPS(mbs_flopSpikeVecBody(m, b));
  if (!mbs_jntSpecial(m, b)) { // p = X^T (p - U Dinv S^T p)
    const int k = m->body_dofnum[b], d0 = m->body_dofadr[b];
    const mbsReal *S = w->sdof + 6 * d0, *U = w->U + 6 * d0, *Dinv = w->Dinv + 36 * b;
    mbsReal sp[6], pa[6];
    for (int j = 0; j < k; j++) sp[j] = mbsu_dot6(S + 6 * j, p);
    for (int x = 0; x < 6; x++) pa[x] = p[x];
    for (int i = 0; i < k; i++) {
      mbsReal h = 0;
      for (int j = 0; j < k; j++) h += Dinv[k * i + j] * sp[j];
      for (int x = 0; x < 6; x++) pa[x] -= U[6 * i + x] * h;
    }
    mbsu_xTForce(w->xpar + 12 * b, pa, p);
    return;
  }
  switch (m->jnt_axisk[b]) {
  case 0:
    mbs_abaSpikeVecK(0, w, b, p);
    return;
  case 1:
    mbs_abaSpikeVecK(1, w, b, p);
    return;
  default:
    mbs_abaSpikeVecK(2, w, b, p);
  }
}

// Spikes of a tree of paths (several ports, nq columns, leading dimension ld): the same steps as
// mbs_abaSpike on the joint's record written as S, U, D^-1, u (k = dofnum; an axis-specialised
// revolute joint as S = e_k, U = IA e_k, u = sg u: the signs cancel in every product)
void mbs_abaSpikeCols(const mbsModel *m, const mbsWork *w, int b, int nq, int ld,
                      mbsReal *restrict P, mbsReal *restrict Th, mbsReal *restrict gam,
                      mbsReal *restrict work) {
  MBS_FLOPS(mbs_flopSpikeCols(mbs_jntSpecial(m, b), m->body_dofnum[b], nq));
  mbsReal Sb[6], Ub[6], Db[1], ub[1];
  const mbsReal *S = Sb, *U = Ub, *Dinv = Db, *u = ub;
  int k;
  if (mbs_jntSpecial(m, b)) {
    const int ax = m->jnt_axisk[b];
    const mbsReal *R = w->abar + (size_t)MBS_ABAR * b;
    k = 1;
    memset(Sb, 0, sizeof Sb);
    Sb[ax] = 1;
    mbs_abaColK(R, ax, Ub);
    Db[0] = R[MBS_REC_DINV];
    ub[0] = m->jnt_axis[3 * b + ax] * R[MBS_REC_U];
  } else {
    const int d0 = m->body_dofadr[b];
    k = m->body_dofnum[b];
    S = w->sdof + 6 * d0, U = w->U + 6 * d0, Dinv = w->Dinv + 36 * b, u = w->u + d0;
  }
  const mbsReal *c6 = w->cacc + 6 * b, *X = w->xpar + 12 * b;
  mbsReal e[6], r[6], h[6];
  mbsReal *SP = work, *DSP = work + 6 * (size_t)nq; // k x nq each, row j: S_j^T P
  // e = c + S D^-1 (u - U^T c): b's acceleration for a motionless parent and pi = 0
  for (int x = 0; x < 6; x++) e[x] = c6[x];
  for (int j = 0; j < k; j++) r[j] = u[j] - mbsu_dot6(U + 6 * j, c6);
  for (int i = 0; i < k; i++) {
    h[i] = 0;
    for (int j = 0; j < k; j++) h[i] += Dinv[k * i + j] * r[j];
    for (int x = 0; x < 6; x++) e[x] += S[6 * i + x] * h[i];
  }
  // gam += P^T e, S^T P and D^-1 S^T P of every column
  for (int q = 0; q < nq; q++) {
    mbsReal g = 0;
    for (int x = 0; x < 6; x++) g += P[x * ld + q] * e[x];
    gam[q] += g;
    for (int j = 0; j < k; j++) {
      mbsReal v = 0;
      for (int x = 0; x < 6; x++) v += S[6 * j + x] * P[x * ld + q];
      SP[(size_t)nq * j + q] = v;
    }
    for (int i = 0; i < k; i++) {
      mbsReal v = 0;
      for (int j = 0; j < k; j++) v += Dinv[k * i + j] * SP[(size_t)nq * j + q];
      DSP[(size_t)nq * i + q] = v;
    }
  }
  // Theta += (S^T P)^T D^-1 (S^T P)
  for (int a = 0; a < nq && k > 0; a++)
    for (int q = 0; q < nq; q++) {
      mbsReal v = 0;
      for (int i = 0; i < k; i++) v += SP[(size_t)nq * i + a] * DSP[(size_t)nq * i + q];
      Th[a * ld + q] += v;
    }
  // P = X^T (P - U D^-1 S^T P)
  for (int q = 0; q < nq; q++) {
    mbsReal pa[6], out[6];
    for (int x = 0; x < 6; x++) {
      pa[x] = P[x * ld + q];
      for (int i = 0; i < k; i++) pa[x] -= U[6 * i + x] * DSP[(size_t)nq * i + q];
    }
    mbsu_xTForce(X, pa, out);
    for (int x = 0; x < 6; x++) P[x * ld + q] = out[x];
  }
}

// ---------------------------------------------------------------- pass 2 split (the overlapped
// factor of schur, docs/formulation.md 4.4): the two parts of aba.c's mbs_abaBackK one at a time

void mbs_abaBodyInitInertia(const mbsModel *m, mbsWork *w, int b) {
  mbs_bodyInertiaSym6(m, b, w->abar + (size_t)MBS_ABAR * b);
}

int mbs_abaBodyBackInertia(const mbsModel *m, mbsWork *w, int b, mbsReal *stash) {
  switch (m->jnt_axisk[b]) {
  case 0:
    return mbs_abaBackKPart(0, 1, m, w, b, stash);
  case 1:
    return mbs_abaBackKPart(1, 1, m, w, b, stash);
  default:
    return mbs_abaBackKPart(2, 1, m, w, b, stash);
  }
}

void mbs_abaBodyBackBias(const mbsModel *m, mbsWork *w, int b, const mbsReal *stash) {
  mbsReal st[MBS_ABA_STASH];
  memcpy(st, stash, sizeof st);
  switch (m->jnt_axisk[b]) {
  case 0:
    (void)mbs_abaBackKPart(0, 2, m, w, b, st);
    return;
  case 1:
    (void)mbs_abaBackKPart(1, 2, m, w, b, st);
    return;
  default:
    (void)mbs_abaBackKPart(2, 2, m, w, b, st);
  }
}

void mbs_abaBodyFwdSpike(const mbsModel *m, mbsWork *w, int b, const mbsReal *ap,
                         const mbsReal *p) {
  mbs_abaBodyFwdSpikeSp(m, w, b, ap, p, NULL);
}

void mbs_abaBodyFwdSpikeSp(const mbsModel *m, mbsWork *w, int b, const mbsReal *ap,
                           const mbsReal *p, const mbsReal *sp) {
  MBS_FLOPS(mbs_flopFwdSpikeBody(m, b, !w->homog));
  if (!mbs_jntSpecial(m, b)) { // u - S^T P pi in the generic record
    const int k = m->body_dofnum[b], d0 = m->body_dofadr[b];
    const mbsReal *S = w->sdof + 6 * d0;
    mbsReal u0[6];
    for (int j = 0; j < k; j++)
      u0[j] = w->u[d0 + j], w->u[d0 + j] -= sp ? sp[j] : mbsu_dot6(S + 6 * j, p);
    mbs_abaBodyFwd(m, w, b, ap);
    for (int j = 0; j < k; j++) w->u[d0 + j] = u0[j];
  } else {
    const int k = m->jnt_axisk[b];
    mbsReal *R = w->abar + (size_t)MBS_ABAR * b, u = R[MBS_REC_U];
    R[MBS_REC_U] = u - (sp ? sp[0] : m->jnt_axis[3 * b + k] * p[k]); // u - S^T P pi
    mbs_abaBodyFwd(m, w, b, ap);
    R[MBS_REC_U] = u;
  }
  if (!w->homog)
    for (int x = 0; x < 6; x++) w->jfrc[6 * b + x] += p[x]; // the true pA = pA + P pi
}
