/// \file flex_cfs_iter.c
/// The iterations of the constraint-force system with flexible bodies (docs/flexible.md 13.3):
/// PCG with the block-diagonal preconditioner, block Gauss-Seidel and SOR on the assembled A,
/// block Jacobi and Chebyshev on the spectrum of D^-1 A estimated from a short PCG run. The
/// operator and the data are in src/flex_cfs.c.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "flex_cfs_private.h"
#include "flex_flops.h"
#include "flex_private.h"

// preconditioned CG on A x = b from x = 0, on the owned rows (the sums over the ranks in the
// operator and the dots)
mbsErr mbs_fcCG(mbsFlexCfs *f, double tol, int *it) {
  int n = f->nl, maxit = 20 * n + 100, l0 = f->l0, l1 = f->l1;
  double bn = sqrt(mbs_fcDot(f, f->b, f->b));
  MBS_FLOPS(1); // (the counts: src/flex_cfs_cpa.c's graph, docs/cpa.md "Flexible models")
  memset(f->x, 0, sizeof(mbsReal) * (size_t)n);
  memcpy(f->r, f->b, sizeof(mbsReal) * (size_t)n);
  if (!(bn > 0)) return bn == 0 ? MBS_OK : mbs_errSet(MBS_ERR_NUMERIC, "flexible jcg: NaN");
  mbs_fcPrecond(f, f->r, f->z);
  memcpy(f->p, f->z, sizeof(mbsReal) * (size_t)n);
  double rz = mbs_fcDot(f, f->r, f->z);
  for (*it = 0; *it < maxit; (*it)++) {
    double rr = mbs_fcDot(f, f->r, f->r);
    MBS_FLOPS(2); // the test
    if (!isfinite(rr)) break;
    if (sqrt(rr) <= tol * bn) return MBS_OK;
    MBS_CALL(mbs_fcApply(f, f->p, 0, f->q));
    double al = rz / mbs_fcDot(f, f->p, f->q);
    MBS_FLOPS(1 + 4L * (l1 - l0));
    for (int i = l0; i < l1; i++) f->x[i] += al * f->p[i], f->r[i] -= al * f->q[i];
    mbs_fcPrecond(f, f->r, f->z);
    double rz1 = mbs_fcDot(f, f->r, f->z), be = rz1 / rz; // (rz1 / rz * p: the same rounding)
    MBS_FLOPS(1 + 2L * (l1 - l0));
    for (int i = l0; i < l1; i++) f->p[i] = f->z[i] + be * f->p[i];
    rz = rz1;
  }
  return mbs_errSet(MBS_ERR_NUMERIC, "flexible jcg: no convergence in %d iterations", *it);
}

// block Gauss-Seidel (omega 1) or SOR sweeps on the assembled A from x = 0 (every rank the same)
mbsErr mbs_fcSOR(mbsFlexCfs *f, double omega, double tol, int *it) {
  int n = f->nl, maxit = 200000;
  const mbsReal *A = f->A;
  double bn = sqrt(mbs_fcDotN(n, f->b, f->b));
  long long sweep = mbs_flopFcSweep(n, f->nlb, f->nb, f->nle); // (the counts: flex_cfs_cpa.c)
  MBS_FLOPS(2LL * n + 1);
  (void)sweep;
  memset(f->x, 0, sizeof(mbsReal) * (size_t)n);
  if (bn == 0) return MBS_OK;
  double dmax = 0; // the closure rows' largest diagonal entry (the zero-row scale)
  for (int i = n - f->nle; i < n; i++) dmax = fmax(dmax, A[(size_t)i * n + i]);
  for (*it = 0; *it < maxit; (*it)++) {
    double rr = 0;
    MBS_FLOPS(sweep);
    for (int b = 0; b < f->nb; b++) {
      int nl = f->nlb[b], la = f->la[b];
      mbsReal rb[6];
      for (int i = 0; i < nl; i++) {
        mbsReal t = f->b[la + i];
        const mbsReal *Ar = A + (size_t)(la + i) * n;
        for (int j = 0; j < n; j++) t -= Ar[j] * f->x[j];
        rb[i] = t, rr += t * t;
      }
      // D_b^-1 from A's diagonal block (every rank: Dinv holds the owned blocks only)
      mbsReal D[36];
      for (int i = 0; i < nl; i++)
        for (int j = 0; j < nl; j++) D[nl * i + j] = A[(size_t)(la + i) * n + la + j];
      if (nl && mbs_faChol(nl, D))
        return mbs_errSet(MBS_ERR_NUMERIC,
                          "flexible gs: a diagonal block is not positive definite");
      if (nl) mbs_faCholSolve(nl, D, rb);
      for (int i = 0; i < nl; i++) f->x[la + i] += omega * rb[i];
    }
    for (int i = n - f->nle; i < n; i++) { // closure rows one at a time (docs/flexible.md 15.2)
      const mbsReal *Ar = A + (size_t)i * n;
      mbsReal t = f->b[i];
      for (int j = 0; j < n; j++) t -= Ar[j] * f->x[j];
      rr += t * t;
      if (Ar[i] > 1e-20 * dmax) f->x[i] += omega * t / Ar[i]; // a zero row left alone
    }
    if (!isfinite(rr)) break;
    if (sqrt(rr) <= tol * bn) return MBS_OK; // the residual met by the sweep's blocks
  }
  return mbs_errSet(MBS_ERR_NUMERIC, "flexible %s: no convergence in %d sweeps",
                    omega == 1 ? "gs" : "sor", *it);
}

// the number of eigenvalues below x of the symmetric tridiagonal (d, e: e[j] couples j-1, j)
static int mbs_fcSturm(int k, const double *d, const double *e, double x) {
  int cnt = 0;
  double q = 1;
  for (int j = 0; j < k; j++) {
    q = d[j] - x - (j ? e[j] * e[j] / q : 0);
    if (q == 0) q = 1e-300;
    cnt += q < 0;
  }
  return cnt;
}

// estimates of the extreme eigenvalues of D^-1 A: the Ritz values of up to 40 PCG steps from
// x = 0 (the Lanczos tridiagonal from CG's coefficients, bisection on its Sturm counts); lmax
// raised 5 % (the Ritz value lies below the true one; Chebyshev and Jacobi diverge above it)
static mbsErr mbs_fcBounds(mbsFlexCfs *f, double *lmin, double *lmax) {
  enum { K = 40 };
  double al[K], be[K], d[K], e[K];
  int n = f->nl, l0 = f->l0, l1 = f->l1, k = 0;
  memset(f->x, 0, sizeof(mbsReal) * (size_t)n);
  memcpy(f->r, f->b, sizeof(mbsReal) * (size_t)n);
  double bn = sqrt(mbs_fcDot(f, f->b, f->b));
  MBS_FLOPS(1); // (the counts: src/flex_cfs_cpa.c's graph)
  mbs_fcPrecond(f, f->r, f->z);
  memcpy(f->p, f->z, sizeof(mbsReal) * (size_t)n);
  double rz = mbs_fcDot(f, f->r, f->z);
  f->spec_it = 0;
  while (k < K && k < n && bn > 0) {
    MBS_CALL(mbs_fcApply(f, f->p, 0, f->q));
    al[k] = rz / mbs_fcDot(f, f->p, f->q);
    MBS_FLOPS(1 + 2L * (l1 - l0));
    for (int i = l0; i < l1; i++) f->r[i] -= al[k] * f->q[i];
    mbs_fcPrecond(f, f->r, f->z);
    double rz1 = mbs_fcDot(f, f->r, f->z);
    be[k] = rz1 / rz, rz = rz1;
    MBS_FLOPS(1 + 2L * (l1 - l0));
    for (int i = l0; i < l1; i++) f->p[i] = f->z[i] + be[k] * f->p[i];
    k++;
    MBS_FLOPS(2);
    if (!(sqrt(mbs_fcDot(f, f->r, f->r)) > 1e-15 * bn)) break; // the Krylov space exhausted
  }
  f->spec_it = k;
  if (!k) return *lmin = *lmax = 1, MBS_OK;
  MBS_FLOPS(mbs_flopFcSpectrum(k)); // the tridiagonal, its bound and the two bisections
  for (int j = 0; j < k; j++) {
    d[j] = 1 / al[j] + (j ? be[j - 1] / al[j - 1] : 0);
    e[j] = j ? sqrt(be[j - 1]) / al[j - 1] : 0;
  }
  double lo = 0, hi = 0;
  for (int j = 0; j < k; j++)
    hi = fmax(hi, fabs(d[j]) + fabs(e[j]) + (j + 1 < k ? fabs(e[j + 1]) : 0));
  double a = lo, b = hi;
  for (int it = 0; it < 200; it++) { // the smallest: the first x with one eigenvalue below
    double c = 0.5 * (a + b);
    if (mbs_fcSturm(k, d, e, c) >= 1)
      b = c;
    else
      a = c;
  }
  *lmin = b, a = lo, b = hi;
  for (int it = 0; it < 200; it++) { // the largest: the first x with all k below
    double c = 0.5 * (a + b);
    if (mbs_fcSturm(k, d, e, c) >= k)
      b = c;
    else
      a = c;
  }
  *lmax = 1.05 * b;
  if (!(*lmin > 0 && *lmax > *lmin))
    return mbs_errSet(MBS_ERR_NUMERIC, "flexible cfs: spectrum estimate failed (%g, %g)", *lmin,
                      *lmax);
  return MBS_OK;
}

// block Jacobi (Richardson with D^-1, omega = 2 / (lmin + lmax)) or Chebyshev on the interval
// [lmin, lmax] (Saad, Iterative Methods for Sparse Linear Systems, 2nd ed., alg. 12.1), matrix-free
// from x = 0
mbsErr mbs_fcPoly(mbsFlexCfs *f, int cheb, double tol, int *it) {
  int n = f->nl, l0 = f->l0, l1 = f->l1, maxit = 2000000;
  double lmin, lmax;
  MBS_CALL(mbs_fcBounds(f, &lmin, &lmax));
  double bn = sqrt(mbs_fcDot(f, f->b, f->b));
  MBS_FLOPS(7); // |b|, th, de, s1, r0
  memset(f->x, 0, sizeof(mbsReal) * (size_t)n);
  memcpy(f->r, f->b, sizeof(mbsReal) * (size_t)n);
  if (bn == 0) return MBS_OK;
  double th = 0.5 * (lmax + lmin), de = 0.5 * (lmax - lmin), s1 = th / de, r0 = 1 / s1;
  mbs_fcPrecond(f, f->r, f->p);
  MBS_FLOPS(l1 - l0);
  for (int i = l0; i < l1; i++) f->p[i] /= th;
  for (*it = 0; *it < maxit; (*it)++) {
    MBS_FLOPS(2L * (l1 - l0) + 4); // x += p, r -= q, the tests
    for (int i = l0; i < l1; i++) f->x[i] += f->p[i];
    MBS_CALL(mbs_fcApply(f, f->p, 0, f->q));
    for (int i = l0; i < l1; i++) f->r[i] -= f->q[i];
    double rr = mbs_fcDot(f, f->r, f->r);
    if (!isfinite(rr) || rr > 1e24 * bn * bn) break;
    if (sqrt(rr) <= tol * bn) return (*it)++, MBS_OK;
    mbs_fcPrecond(f, f->r, f->z);
    if (cheb) { // (r1 * r0 * p and 2 * r1 / de * z: the same rounding hoisted)
      double r1 = 1 / (2 * s1 - r0), c1 = r1 * r0, c2 = 2 * r1 / de;
      MBS_FLOPS(6 + 3L * (l1 - l0));
      for (int i = l0; i < l1; i++) f->p[i] = c1 * f->p[i] + c2 * f->z[i];
      r0 = r1;
    } else {
      MBS_FLOPS(l1 - l0);
      for (int i = l0; i < l1; i++) f->p[i] = f->z[i] / th;
    }
  }
  return mbs_errSet(MBS_ERR_NUMERIC, "flexible %s: no convergence in %d iterations",
                    cheb ? "chebyshev" : "jacobi", *it);
}
