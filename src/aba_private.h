/// \file aba_private.h
/// What ABA's kernel (aba.c) shares with its spikes (aba_spike.c), private to src/aba*.c: the
/// layout of the per-body record w->abar, the column of a packed articulated inertia and pass 2 of
/// an axis-specialised revolute joint in its two parts (aba.c runs them in turn, the overlapped
/// factor's split entry points in aba_spike.c one at a time).
#ifndef MBS_ABA_PRIVATE_H
#define MBS_ABA_PRIVATE_H

#include "mbspar/mbs_dynamics.h"
#include "spatial.h"
#include "flops.h"

// the per-body record w->abar: IA packed (sym6), pA, u and 1/D of an axis-specialised joint
enum { MBS_REC_PA = MBS_ABAR_PA, MBS_REC_U = 27, MBS_REC_DINV = 28 };

#define S3(a, b) mbsu_s3(a, b)

// column k of the packed articulated inertia of record R
static MBS_FORCEINLINE void mbs_abaColK(const mbsReal *R, int k, mbsReal col[6]) {
  const mbsReal *A = R, *B = R + 6;
  col[0] = A[S3(0, k)], col[1] = A[S3(1, k)], col[2] = A[S3(2, k)];
  col[3] = B[3 * k], col[4] = B[3 * k + 1], col[5] = B[3 * k + 2];
}

// ---------------------------------------------------------------- pass 2, axis-specialised

// 2 x 2 symmetric block [a b; b d] of rows/columns (i, j) rotated by E about e_k: Q^T M Q with
// Q = [c s; -s c], in half-angle form (C2 = cos 2t, S2 = sin 2t; uses c^2 + s^2 = 1): 11 flops
static MBS_FORCEINLINE void mbs_sym2Rot(mbsReal C2, mbsReal S2, mbsReal a, mbsReal bb, mbsReal d,
                                        mbsReal *oii, mbsReal *oij, mbsReal *ojj) {
  mbsReal h = 0.5 * (a - d), mid = a - h, t = C2 * h - S2 * bb;
  *oii = mid + t;
  *ojj = mid - t;
  *oij = S2 * h + C2 * bb;
}

// Pass 2 for a revolute joint about sg e_k: U = sg IA[:, k], D = IA_kk, u = tau - sg pA_k; hand
// X^T Ia X and X^T pa to the parent. Returns 0 if D is not positive. In parts (part, a
// compile-time constant): 3 the whole pass (mbs_aba, mbs_abaBodyBack); 1 its inertia part (1/D,
// Ia = IA - U U^T / D and X^T Ia X into the parent: positions alone) and 2 its bias part (u, pa
// and X^T pa into the parent's pA), for the overlapped factor of schur (aba_spike.c
// mbs_abaBodyBackInertia, mbs_abaBodyBackBias; b has a parent): part 1 leaves in st what part 2
// reads (Ia without row and column k, and U / D: MBS_ABA_STASH reals). The same expressions in
// the same order in every part: the results are bitwise those of the whole pass.
static MBS_FORCEINLINE int mbs_abaBackKPart(const int k, const int part, const mbsModel *m,
                                            mbsWork *w, int b, mbsReal *restrict st) {
  const int i = (k + 1) % 3, j = (k + 2) % 3, p = m->body_parent[b];
  mbsReal *restrict R = w->abar + (size_t)MBS_ABAR * b;
  const mbsReal *A = R, *B = R + 6, *C = R + 15, *pA = R + MBS_REC_PA;
  const mbsReal sg = m->jnt_axis[3 * b + k], Q = w->qfrc[m->body_dofadr[b]];
  const mbsReal D = A[S3(k, k)];
  if ((part & 1) && !(D > 0)) return 0;
  const mbsReal dinv = 1 / D, u = Q - sg * pA[k]; // (each part stores only its own)
  if (part & 2) R[MBS_REC_U] = u;
  if (part & 1) R[MBS_REC_DINV] = dinv;
  MBS_FLOPS(part == 3   ? mbs_flopAba(m, b, MBS_FLA_U)
            : part == 2 ? MBS_FL_ABA_UBIAS
                        : mbs_flopAba(m, b, MBS_FLA_U) - MBS_FL_ABA_UBIAS);
  if (p < 0) return 1;

  // column k of IA (off its diagonal): ki, kj (angular), kl (linear); their multiples by 1/D
  // Ia = IA - U U^T / D without row and column k (zero): A block (i, j), B rows i and j, C
  mbsReal di, dj, dl[3], aii, aij, ajj, bi[3], bj[3], Cc[6];
  if (part & 1) {
    const mbsReal ki = A[S3(i, k)], kj = A[S3(j, k)];
    const mbsReal kl[3] = {B[3 * k], B[3 * k + 1], B[3 * k + 2]};
    di = dinv * ki, dj = dinv * kj;
    dl[0] = dinv * kl[0], dl[1] = dinv * kl[1], dl[2] = dinv * kl[2];
    aii = A[S3(i, i)] - ki * di, aij = A[S3(i, j)] - ki * dj, ajj = A[S3(j, j)] - kj * dj;
    for (int y = 0; y < 3; y++) {
      bi[y] = B[3 * i + y] - ki * dl[y];
      bj[y] = B[3 * j + y] - kj * dl[y];
    }
    for (int x = 0; x < 3; x++)
      for (int y = x; y < 3; y++) Cc[S3(x, y)] = C[S3(x, y)] - kl[x] * dl[y];
    MBS_FLOPS(mbs_flopAba(m, b, MBS_FLA_IA));
  } else { // the bias part alone: what the inertia part left
    aii = st[0], aij = st[1], ajj = st[2], di = st[3], dj = st[4];
    for (int y = 0; y < 3; y++) bi[y] = st[5 + y], bj[y] = st[8 + y], dl[y] = st[11 + y];
    for (int x = 0; x < 6; x++) Cc[x] = st[14 + x];
  }

  // pa = pA + Ia c + U u / D; c_k = c_{3+k} = 0 (mbs_bodyVelocity), pa_k = sg tau
  mbsReal pa[6];
  if (part & 2) {
    const mbsReal *c6 = w->cacc + 6 * b;
    const mbsReal ci = c6[i], cj = c6[j], li = c6[3 + i], lj = c6[3 + j], gs = sg * u;
    pa[i] = pA[i] + (aii * ci + aij * cj + bi[i] * li + bi[j] * lj) + di * gs;
    pa[j] = pA[j] + (aij * ci + ajj * cj + bj[i] * li + bj[j] * lj) + dj * gs;
    pa[k] = sg * Q;
    for (int x = 0; x < 3; x++)
      pa[3 + x] = pA[3 + x] + (bi[x] * ci + bj[x] * cj + Cc[S3(x, i)] * li + Cc[S3(x, j)] * lj) +
                  dl[x] * gs;
    MBS_FLOPS(mbs_flopAba(m, b, MBS_FLA_PA));
  }

  // rotate Ia into parent axes (E about e_k: E_ii = E_jj = c, E_ij = s, E_ji = -s)
  const mbsReal *X = w->xpar + 12 * b, *r = X + 9, c = X[3 * i + i], s = X[3 * i + j];
  if (part & 1) {
    const mbsReal C2 = c * c - s * s, S2 = 2 * c * s;
    mbsReal A1ii, A1ij, A1jj, C1[6], B1i[3], B1j[3];
    mbs_sym2Rot(C2, S2, aii, aij, ajj, &A1ii, &A1ij, &A1jj); // A1: only the (i, j) block
    {                                                        // B1 = E^T B E, row k stays zero
      mbsReal ti[3], tj[3];                                  // rows i, j of B E
      ti[i] = c * bi[i] - s * bi[j], ti[j] = s * bi[i] + c * bi[j], ti[k] = bi[k];
      tj[i] = c * bj[i] - s * bj[j], tj[j] = s * bj[i] + c * bj[j], tj[k] = bj[k];
      for (int y = 0; y < 3; y++) {
        B1i[y] = c * ti[y] - s * tj[y];
        B1j[y] = s * ti[y] + c * tj[y];
      }
    }
    mbs_sym2Rot(C2, S2, Cc[S3(i, i)], Cc[S3(i, j)], Cc[S3(j, j)], &C1[S3(i, i)], &C1[S3(i, j)],
                &C1[S3(j, j)]);
    C1[S3(i, k)] = c * Cc[S3(i, k)] - s * Cc[S3(j, k)];
    C1[S3(j, k)] = s * Cc[S3(i, k)] + c * Cc[S3(j, k)];
    C1[S3(k, k)] = Cc[S3(k, k)];

    // translate by r: W = r^ C1, Y = r^ B1^T (column k zero), Z = W r^T (upper triangle)
    mbsReal W[9], Yi[3], Yj[3]; // Yi, Yj: columns i, j of Y
    for (int y = 0; y < 3; y++) {
      const mbsReal cy[3] = {C1[S3(0, y)], C1[S3(1, y)], C1[S3(2, y)]};
      mbsReal o[3];
      mbsu_cross3(r, cy, o);
      W[y] = o[0], W[3 + y] = o[1], W[6 + y] = o[2];
    }
    mbsu_cross3(r, B1i, Yi);
    mbsu_cross3(r, B1j, Yj);
#define MBS_Z(x, y)                                                                                \
  (r[((y) + 1) % 3] * W[3 * (x) + ((y) + 2) % 3] - r[((y) + 2) % 3] * W[3 * (x) + ((y) + 1) % 3])
    mbsReal Aii = A1ii + Yi[i] + Yi[i] + MBS_Z(i, i), Ajj = A1jj + Yj[j] + Yj[j] + MBS_Z(j, j);
    mbsReal Aij = A1ij + Yj[i] + Yi[j] + MBS_Z(i, j), Aik = Yi[k] + MBS_Z(i, k);
    mbsReal Ajk = Yj[k] + MBS_Z(j, k), Akk = MBS_Z(k, k);
#undef MBS_Z
    MBS_FLOPS(mbs_flopAba(m, b, MBS_FLA_CONGR));

    // accumulate into the parent: A += A', B += B1 + W, C += C1
    mbsReal *restrict Rp = w->abar + (size_t)MBS_ABAR * p, *Ap = Rp, *Bp = Rp + 6, *Cp = Rp + 15;
    Ap[S3(i, i)] += Aii, Ap[S3(j, j)] += Ajj, Ap[S3(i, j)] += Aij;
    Ap[S3(i, k)] += Aik, Ap[S3(j, k)] += Ajk, Ap[S3(k, k)] += Akk;
    for (int y = 0; y < 3; y++) {
      Bp[3 * i + y] += B1i[y] + W[3 * i + y];
      Bp[3 * j + y] += B1j[y] + W[3 * j + y];
      Bp[3 * k + y] += W[3 * k + y];
    }
    for (int x = 0; x < 6; x++) Cp[x] += C1[x];
    MBS_FLOPS(mbs_flopAba(m, b, MBS_FLA_CONGR_ACC));
  }

  if (part & 2) { // pA_p += X^T pa
    mbsReal *restrict Rp = w->abar + (size_t)MBS_ABAR * p, t6[6];
    mbsu_xTForceK(k, c, s, r, pa, t6);
    MBS_FLOPS(mbs_flopAba(m, b, MBS_FLA_XF));
    for (int x = 0; x < 6; x++) Rp[MBS_REC_PA + x] += t6[x];
    MBS_FLOPS(mbs_flopAba(m, b, MBS_FLA_XF_ACC));
  }
  if (part == 1) {
    st[0] = aii, st[1] = aij, st[2] = ajj, st[3] = di, st[4] = dj;
    for (int y = 0; y < 3; y++) st[5 + y] = bi[y], st[8 + y] = bj[y], st[11 + y] = dl[y];
    for (int x = 0; x < 6; x++) st[14 + x] = Cc[x];
  }
  return 1;
}

#endif
