/// \file schur_merge.c
/// The dense port systems of the exact solver: the floored reduction and expansion
/// (mbs_schurReduce, mbs_schurExpand) and the two-port elements of the chain scan
/// (docs/formulation.md 4.4, 4.7).
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "schur_private.h"
#ifdef _OPENMP
#include <omp.h>
#endif

// ---------------------------------------------------------------- dense port systems

int mbs_schurReduce(int nk, int ne, mbsReal *C, mbsReal *g, mbsReal *S, mbsReal *sg, int *nfloor) {
  return mbs_schurReduceBlk(nk, ne, C, g, S, sg, nfloor, NULL);
}

int mbs_schurReduceBlk(int nk, int ne, mbsReal *C, mbsReal *g, mbsReal *S, mbsReal *sg, int *nfloor,
                       const int *blk) {
  int n = nk + ne;
  MBS_FLOPS(mbs_flopSchurReduce(nk, ne));
  // the pivot floor: a port system is positive semidefinite up to rounding that grows with the
  // length of the pieces it condenses (docs/formulation.md, 4.7); pivots below the floor are
  // raised to it (or to their own magnitude, the rounding level they show). With blocks: the
  // largest diagonal of the pivot's own block (light bodies, 4.9: a childless light body's
  // compliance, ~1e16, sets no floor for the moderate joints beside it)
  mbsReal smax = 0;
  for (int j = nk; j < n; j++)
    if (fabs(C[(size_t)n * j + j]) > smax) smax = fabs(C[(size_t)n * j + j]);
  mbsReal floor_ = MBS_SCHUR_PIVOT_FLOOR * smax;
  // Cholesky of C_ee in place (rows/columns nk..n-1, lower triangle)
  for (int j = nk; j < n; j++) {
    if (blk && (j == nk || blk[j - nk] != blk[j - nk - 1])) { // a new block: its own floor
      mbsReal bmax = 0;
      for (int i = j; i < n && blk[i - nk] == blk[j - nk]; i++)
        if (fabs(C[(size_t)n * i + i]) > bmax) bmax = fabs(C[(size_t)n * i + i]);
      floor_ = MBS_SCHUR_PIVOT_FLOOR * bmax;
    }
    mbsReal d = C[(size_t)n * j + j];
    for (int l = nk; l < j; l++) d -= C[(size_t)n * j + l] * C[(size_t)n * j + l];
    if (!isfinite(d) || !(smax > 0)) return 0;
    if (d <= floor_) {
      d = fabs(d) > floor_ ? fabs(d) : floor_;
      if (nfloor) (*nfloor)++;
    }
    d = sqrt(d);
    C[(size_t)n * j + j] = d;
    for (int i = j + 1; i < n; i++) {
      mbsReal v = C[(size_t)n * i + j];
      for (int l = nk; l < j; l++) v -= C[(size_t)n * i + l] * C[(size_t)n * j + l];
      C[(size_t)n * i + j] = v / d;
    }
  }
  // Z = L^{-1} C_ek (rows nk..n-1, columns 0..nk-1), z = L^{-1} g_e
  for (int i = nk; i < n; i++) {
    mbsReal inv = 1 / C[(size_t)n * i + i];
    for (int c = 0; c < nk; c++) {
      mbsReal v = C[(size_t)n * i + c];
      for (int l = nk; l < i; l++) v -= C[(size_t)n * i + l] * C[(size_t)n * l + c];
      C[(size_t)n * i + c] = v * inv;
    }
    mbsReal v = g[i];
    for (int l = nk; l < i; l++) v -= C[(size_t)n * i + l] * g[l];
    g[i] = v * inv;
  }
  for (int a = 0; a < nk; a++) {
    for (int b = 0; b < nk; b++) {
      mbsReal v = C[(size_t)n * a + b];
      for (int l = nk; l < n; l++) v -= C[(size_t)n * l + a] * C[(size_t)n * l + b];
      S[nk * a + b] = v;
    }
    mbsReal v = g[a];
    for (int l = nk; l < n; l++) v -= C[(size_t)n * l + a] * g[l];
    sg[a] = v;
  }
  return 1;
}

void mbs_schurExpand(int nk, int ne, const mbsReal *C, const mbsReal *g, const mbsReal *xk,
                     mbsReal *xe) {
  int n = nk + ne;
  MBS_FLOPS(mbs_flopSchurExpand(nk, ne));
  for (int i = 0; i < ne; i++) {
    mbsReal v = g[nk + i];
    for (int c = 0; c < nk; c++) v -= C[(size_t)n * (nk + i) + c] * xk[c];
    xe[i] = v;
  }
  for (int i = ne - 1; i >= 0; i--) {
    mbsReal v = xe[i];
    for (int l = i + 1; l < ne; l++) v -= C[(size_t)n * (nk + l) + nk + i] * xe[l];
    xe[i] = v / C[(size_t)n * (nk + i) + nk + i];
  }
}

int mbs_schurPairMerge(const mbsSchurPair *a, const mbsSchurPair *b, mbsSchurPair *out,
                       int *nfloor) {
  if (a->na < 0) {
    *out = *b;
    return 1;
  }
  if (b->na < 0) {
    *out = *a;
    return 1;
  }
  // assemble over [A, B, S] (S eliminated last), then reduce
  int na = a->na, ns = a->nb, nb = b->nb, n = na + nb + ns, nk = na + nb;
  int la = a->na + a->nb, lb = b->na + b->nb;
  MBS_FLOPS(mbs_flopSchurAdd(la) + mbs_flopSchurAdd(lb));
  mbsReal M[18 * 18], gm[18];
  memset(M, 0, sizeof(mbsReal) * (size_t)n * n);
  int ia[12], ib[12]; // positions in the joint ordering
  for (int i = 0; i < na; i++) ia[i] = i;
  for (int i = 0; i < ns; i++) ia[na + i] = nk + i, ib[i] = nk + i;
  for (int i = 0; i < nb; i++) ib[ns + i] = na + i;
  for (int i = 0; i < n; i++) gm[i] = 0;
  for (int i = 0; i < la; i++) {
    gm[ia[i]] += a->g[i];
    for (int j = 0; j < la; j++) M[n * ia[i] + ia[j]] += a->C[la * i + j];
  }
  for (int i = 0; i < lb; i++) {
    gm[ib[i]] += b->g[i];
    for (int j = 0; j < lb; j++) M[n * ib[i] + ib[j]] += b->C[lb * i + j];
  }
  out->na = na, out->nb = nb;
  return mbs_schurReduce(nk, ns, M, gm, out->C, out->g, nfloor);
}

void mbs_schurPairPack(const mbsSchurPair *p, double *buf) {
  memset(buf, 0, sizeof(double) * MBS_SCHUR_PAIR_DOUBLES);
  buf[0] = p->na, buf[1] = p->nb;
  int n = p->na < 0 ? 0 : p->na + p->nb;
  memcpy(buf + 2, p->C, sizeof(double) * (size_t)n * n);
  memcpy(buf + 2 + n * n, p->g, sizeof(double) * (size_t)n);
}

void mbs_schurPairUnpack(const double *buf, mbsSchurPair *p) {
  p->na = (int)buf[0], p->nb = (int)buf[1];
  int n = p->na < 0 ? 0 : p->na + p->nb;
  memcpy(p->C, buf + 2, sizeof(double) * (size_t)n * n);
  memcpy(p->g, buf + 2 + n * n, sizeof(double) * (size_t)n);
}

int mbs_scanRadix(void) {
  const char *v = getenv("MBSPAR_SCAN_RADIX");
  if (v && *v) {
    char *end;
    long k = strtol(v, &end, 10);
    if (*end == 0 && k >= 2 && k <= MBS_SCAN_RADIX_MAX) return (int)k;
  }
  return MBS_SCAN_RADIX;
}
