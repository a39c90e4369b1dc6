/// \file aba_private.h
/// What ABA's kernel (aba.c) shares with its spikes (aba_spike.c), private to src/aba*.c: the
/// layout of the per-body record w->abar and the column of a packed articulated inertia.
#ifndef MBS_ABA_PRIVATE_H
#define MBS_ABA_PRIVATE_H

#include "mbspar/mbs_dynamics.h"
#include "spatial.h"

// the per-body record w->abar: IA packed (sym6), pA, u and 1/D of an axis-specialised joint
enum { MBS_REC_PA = MBS_ABAR_PA, MBS_REC_U = 27, MBS_REC_DINV = 28 };

#define S3(a, b) mbsu_s3(a, b)

// column k of the packed articulated inertia of record R
static MBS_FORCEINLINE void mbs_abaColK(const mbsReal *R, int k, mbsReal col[6]) {
  const mbsReal *A = R, *B = R + 6;
  col[0] = A[S3(0, k)], col[1] = A[S3(1, k)], col[2] = A[S3(2, k)];
  col[3] = B[3 * k], col[4] = B[3 * k + 1], col[5] = B[3 * k + 2];
}

#endif
