/// \file abm.c
/// Variable-step, variable-order Adams–Bashforth–Moulton PECE (mbs_abm.h; the formulas of
/// docs/integrator_abm.md section 2, the rules of section 3).
///
/// With psi_i(n+1) = h + psi_{i-1}(n), alpha_i = h / psi_i(n+1), beta_i = prod_{j<i}
/// psi_j(n+1) / psi_j(n) and phi*_i = beta_i phi_i(n):
///   predict  y^p = y_n + h sum_{i<=k} g_i phi*_i,   g_i = int_0^1 prod_{j<i} (1 + (s-1) alpha_j)
///   ds evaluate f^p = f(t_{n+1}, y^p),  phi^p_{k+1} = f^p - sum_{i<=k} phi*_i correct  y_{n+1} =
///   y^p + h g_{k+1} phi^p_{k+1},  evaluate f_{n+1} error    LE_k = h |g_{k+1} - g_k| |phi^p_{k+1}|
///   (weighted RMS, relative to tol)
/// and the new differences phi_1(n+1) = f_{n+1}, phi_{i+1}(n+1) = phi_i(n+1) - phi*_i(n).
#include "mbspar/mbs_abm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

mbsErr mbs_abmCreate(int n, mbsReal tol, int kmax, mbsAbm **out) {
  *out = NULL;
  MBS_CHECK(n >= 1, MBS_ERR_INPUT, "abm: %d components", n);
  MBS_CHECK(tol > 0 && isfinite(tol), MBS_ERR_INPUT, "abm: tolerance %g is not positive", tol);
  MBS_CHECK(kmax >= 1 && kmax <= MBS_ABM_KMAX, MBS_ERR_INPUT, "abm: order %d not in [1, %d]", kmax,
            MBS_ABM_KMAX);
  mbsAbm *a = calloc(1, sizeof *a);
  MBS_CHECK(a, MBS_ERR_NOMEM, "out of memory");
  size_t nn = (size_t)n, rows = (size_t)kmax + 2;
  a->n = n, a->tol = tol, a->kmax = kmax;
  a->y = calloc(nn, sizeof(mbsReal)), a->f = calloc(nn, sizeof(mbsReal));
  a->phi = calloc(rows * nn, sizeof(mbsReal)), a->phis = calloc(rows * nn, sizeof(mbsReal));
  a->yp = calloc(nn, sizeof(mbsReal)), a->fp = calloc(nn, sizeof(mbsReal));
  a->e = calloc(nn, sizeof(mbsReal));
  if (!a->y || !a->f || !a->phi || !a->phis || !a->yp || !a->fp || !a->e) {
    mbs_abmDestroy(&a);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  }
  *out = a;
  return MBS_OK;
}

void mbs_abmDestroy(mbsAbm **pa) {
  mbsAbm *a = *pa;
  if (!a) return;
  free(a->y), free(a->f), free(a->phi), free(a->phis), free(a->yp), free(a->fp), free(a->e);
  free(a);
  *pa = NULL;
}

// weighted RMS of v against the state y over every rank: sqrt(mean (v_i / (1 + |y_i|))^2)
static int mbs_abmRms(const mbsAbm *a, const mbsReal *v, mbsReal *out) {
  mbsReal ss[2] = {0, (mbsReal)a->n};
  for (int i = 0; i < a->n; i++) {
    mbsReal q = v[i] / (1 + fabs(a->y[i]));
    ss[0] += q * q;
  }
  int rc = a->reduce ? a->reduce(a->reduce_ctx, ss, 2) : 0;
  *out = sqrt(ss[0] / (ss[1] > 0 ? ss[1] : 1));
  return rc;
}

void mbs_abmSetReduce(mbsAbm *a, int (*reduce)(void *ctx, mbsReal *v, int n), void *ctx) {
  a->reduce = reduce, a->reduce_ctx = ctx;
}

// g_i = int_{-1}^{0} prod_{j=1}^{i-1} (1 + alpha_j u) du for i = 1..kk (the polynomial formed
// coefficient by coefficient; int_{-1}^{0} u^m du = (-1)^m / (m + 1))
static void mbs_abmG(int kk, const mbsReal *alpha, mbsReal *g) {
  mbsReal c[MBS_ABM_KMAX + 4] = {1};
  int deg = 0;
  for (int i = 1; i <= kk; i++) {
    if (i > 1) {
      mbsReal al = alpha[i - 2];
      for (int m = deg + 1; m >= 1; m--) c[m] += al * c[m - 1];
      deg++;
    }
    mbsReal s = 0;
    for (int m = 0; m <= deg; m++) s += c[m] * ((m & 1) ? -1.0 : 1.0) / (m + 1);
    g[i - 1] = s;
  }
}

mbsErr mbs_abmStart(mbsAbm *a, mbsReal t0, const mbsReal *y0, mbsReal h0, mbsAbmRhs f, void *ctx) {
  if (y0 != a->y) memcpy(a->y, y0, (size_t)a->n * sizeof(mbsReal));
  a->t = t0;
  int rc = f(ctx, t0, a->y, a->f);
  a->evaluations++;
  if (rc) return (mbsErr)rc;
  memcpy(a->phi, a->f, (size_t)a->n * sizeof(mbsReal));
  a->nd = 1, a->k = 1, a->start = 1, a->ns = 0;
  if (!(h0 > 0)) { // order 1: local error ~ h^2 |y''| / 2; without y'', h |f| ~ sqrt(tol)
    mbsReal fn = 0;
    rc = mbs_abmRms(a, a->f, &fn);
    if (rc) return (mbsErr)rc;
    h0 = 0.1 * sqrt(a->tol) / (fn > 1e-10 ? fn : 1e-10);
  }
  a->h = h0;
  if (a->steps || a->rejected) a->restarts++;
  return MBS_OK;
}

mbsErr mbs_abmSetY(mbsAbm *a, const mbsReal *y) {
  if (a->nd > 0) {
    for (int i = 0; i < a->n; i++) a->e[i] = y[i] - a->y[i];
    mbsReal d = 0;
    int rc = mbs_abmRms(a, a->e, &d);
    if (rc) return (mbsErr)rc;
    if (!(d <= MBS_ABM_KEEP * a->tol))
      a->nd = 0; // an assembly-scale jump: restart from y at the next step
  }
  memcpy(a->y, y, (size_t)a->n * sizeof(mbsReal));
  return MBS_OK;
}

// the saved scalars: [kmax k nd start ns t h steps rejected evaluations restarts] psi[KMAX+3]
// order_used[KMAX+1]
enum {
  MBS_ABM_S_KMAX,
  MBS_ABM_S_K,
  MBS_ABM_S_ND,
  MBS_ABM_S_START,
  MBS_ABM_S_NS,
  MBS_ABM_S_T = MBS_ABM_SAVED_T,
  MBS_ABM_S_H = MBS_ABM_SAVED_H,
  MBS_ABM_S_STEPS,
  MBS_ABM_S_REJ,
  MBS_ABM_S_EVAL,
  MBS_ABM_S_RESTARTS,
  MBS_ABM_S_PSI,
  MBS_ABM_S_ORDER = MBS_ABM_S_PSI + MBS_ABM_KMAX + 3
};

void mbs_abmSave(const mbsAbm *a, mbsReal *s) {
  memset(s, 0, MBS_ABM_NSCALAR * sizeof *s);
  s[MBS_ABM_S_KMAX] = a->kmax, s[MBS_ABM_S_K] = a->k, s[MBS_ABM_S_ND] = a->nd;
  s[MBS_ABM_S_START] = a->start, s[MBS_ABM_S_NS] = a->ns, s[MBS_ABM_S_T] = a->t;
  s[MBS_ABM_S_H] = a->h, s[MBS_ABM_S_STEPS] = (mbsReal)a->steps;
  s[MBS_ABM_S_REJ] = (mbsReal)a->rejected, s[MBS_ABM_S_EVAL] = (mbsReal)a->evaluations;
  s[MBS_ABM_S_RESTARTS] = (mbsReal)a->restarts;
  memcpy(s + MBS_ABM_S_PSI, a->psi, sizeof a->psi);
  for (int i = 0; i <= MBS_ABM_KMAX; i++) s[MBS_ABM_S_ORDER + i] = (mbsReal)a->order_used[i];
}

// an integer in [lo, hi], exactly
static int mbs_abmIsInt(mbsReal v, mbsReal lo, mbsReal hi) {
  return v >= lo && v <= hi && v == floor(v);
}

const char *mbs_abmSavedInvalid(const mbsReal *s, int kmax) {
  const mbsReal big = 9.0e15; // counters: exact integers in a double
  if (s[MBS_ABM_S_KMAX] != kmax) return "another highest order";
  if (!mbs_abmIsInt(s[MBS_ABM_S_K], 1, kmax) || !mbs_abmIsInt(s[MBS_ABM_S_ND], 0, kmax + 2) ||
      !mbs_abmIsInt(s[MBS_ABM_S_START], 0, 1) || !mbs_abmIsInt(s[MBS_ABM_S_NS], 0, big))
    return "invalid order, history length or step counter";
  if (!isfinite(s[MBS_ABM_S_T]) || !(s[MBS_ABM_S_H] > 0) || !isfinite(s[MBS_ABM_S_H]))
    return "invalid time or step";
  for (int i = MBS_ABM_S_STEPS; i <= MBS_ABM_S_RESTARTS; i++)
    if (!mbs_abmIsInt(s[i], 0, big)) return "invalid counters";
  for (int i = 0; i < MBS_ABM_KMAX + 3; i++) {
    mbsReal p = s[MBS_ABM_S_PSI + i];
    // the grid of the history: psi_i = t_n - t_{n-i} increasing, positive where it is used
    if (!isfinite(p) || p < 0 || (i + 1 < s[MBS_ABM_S_ND] && !(p > 0)) ||
        (i > 0 && i + 1 < s[MBS_ABM_S_ND] && !(p > s[MBS_ABM_S_PSI + i - 1])))
      return "invalid step history";
  }
  for (int i = 0; i <= MBS_ABM_KMAX; i++)
    if (!mbs_abmIsInt(s[MBS_ABM_S_ORDER + i], 0, big)) return "invalid order counts";
  return NULL;
}

mbsErr mbs_abmLoad(mbsAbm *a, const mbsReal *s) {
  const char *why = mbs_abmSavedInvalid(s, a->kmax);
  MBS_CHECK(!why, MBS_ERR_INPUT, "abm: saved state: %s", why);
  a->k = (int)s[MBS_ABM_S_K], a->nd = (int)s[MBS_ABM_S_ND], a->start = (int)s[MBS_ABM_S_START];
  a->ns = (int)s[MBS_ABM_S_NS], a->t = s[MBS_ABM_S_T], a->h = s[MBS_ABM_S_H];
  a->steps = (long)s[MBS_ABM_S_STEPS], a->rejected = (long)s[MBS_ABM_S_REJ];
  a->evaluations = (long)s[MBS_ABM_S_EVAL], a->restarts = (long)s[MBS_ABM_S_RESTARTS];
  memcpy(a->psi, s + MBS_ABM_S_PSI, sizeof a->psi);
  for (int i = 0; i <= MBS_ABM_KMAX; i++) a->order_used[i] = (long)s[MBS_ABM_S_ORDER + i];
  return MBS_OK;
}

mbsErr mbs_abmStep(mbsAbm *a, mbsReal tout, mbsAbmRhs f, void *ctx) {
  const int n = a->n;
  int fails = 0;
  if (a->nd == 0) { // no history (a fresh state or a restart): order 1 from (t, y)
    mbsReal t0 = a->t;
    MBS_CALL(mbs_abmStart(a, t0, a->y, 0, f, ctx));
  }
  for (;;) {
    mbsReal hnat = a->h, h = hnat;
    int landed = 0;
    if (a->t + 1.0001 * h >= tout) h = tout - a->t, landed = 1;
    MBS_CHECK(h > 1e-14 * fmax(fabs(a->t), fabs(tout)) && h > 0, MBS_ERR_NUMERIC,
              "abm: the step fell to %g at t = %g (below the resolution of t)", h, a->t);
    int k = a->k < a->nd ? a->k : a->nd;     // the order the history allows
    int ndu = k + 1 < a->nd ? k + 1 : a->nd; // differences used (k, and k + 1 for k + 1's estimate)
    mbsReal psin[MBS_ABM_KMAX + 3], alpha[MBS_ABM_KMAX + 3], beta[MBS_ABM_KMAX + 3];
    mbsReal g[MBS_ABM_KMAX + 3];
    for (int i = 1; i <= k + 2; i++) {
      psin[i - 1] = i == 1 ? h : h + a->psi[i - 2];
      alpha[i - 1] = h / psin[i - 1];
    }
    beta[0] = 1;
    for (int i = 2; i <= ndu; i++) beta[i - 1] = beta[i - 2] * psin[i - 2] / a->psi[i - 2];
    mbs_abmG(k + 2, alpha, g);
    for (int i = 1; i <= ndu; i++) {
      const mbsReal *p = a->phi + (size_t)(i - 1) * n;
      mbsReal *q = a->phis + (size_t)(i - 1) * n;
      for (int c = 0; c < n; c++) q[c] = beta[i - 1] * p[c];
    }
    // predict, evaluate
    for (int c = 0; c < n; c++) {
      mbsReal s = 0;
      for (int i = k; i >= 1; i--) s += g[i - 1] * a->phis[(size_t)(i - 1) * n + c];
      a->yp[c] = a->y[c] + h * s;
    }
    int rc = f(ctx, a->t + h, a->yp, a->fp);
    a->evaluations++;
    if (rc) return (mbsErr)rc;
    // phi^p_{k+1} and the estimates at k, k - 1, k - 2 and k + 1
    for (int c = 0; c < n; c++) {
      mbsReal s = 0;
      for (int i = 1; i <= k; i++) s += a->phis[(size_t)(i - 1) * n + c];
      a->e[c] = a->fp[c] - s;
    }
    // the weighted sums of squares of phi^p_{k+1} (order k), phi^p_k = phi^p_{k+1} + phi*_k
    // (k - 1), phi^p_{k-1} = phi^p_k + phi*_{k-1} (k - 2), phi^p_{k+2} = phi^p_{k+1} - phi*_{k+1}
    // (k + 1), and the component count: one reduction over the ranks per attempt
    int up = ndu >= k + 1 && k < a->kmax;
    mbsReal ss[5] = {0, 0, 0, 0, (mbsReal)n};
    for (int c = 0; c < n; c++) {
      mbsReal w = 1 / (1 + fabs(a->y[c])), q = a->e[c] * w;
      ss[0] += q * q;
      if (k >= 2) {
        mbsReal pk = a->e[c] + a->phis[(size_t)(k - 1) * n + c];
        ss[1] += pk * w * pk * w;
        if (k >= 3) {
          mbsReal pk1 = (pk + a->phis[(size_t)(k - 2) * n + c]) * w;
          ss[2] += pk1 * pk1;
        }
      }
      if (up) {
        mbsReal p2 = (a->e[c] - a->phis[(size_t)k * n + c]) * w;
        ss[3] += p2 * p2;
      }
    }
    if (a->reduce) {
      rc = a->reduce(a->reduce_ctx, ss, 5);
      if (rc) return (mbsErr)rc;
    }
    const mbsReal N = ss[4] > 0 ? ss[4] : 1;
    mbsReal ek = h * fabs(g[k] - g[k - 1]) * sqrt(ss[0] / N) / a->tol;
    mbsReal ekm1 = k >= 2 ? h * fabs(g[k - 1] - g[k - 2]) * sqrt(ss[1] / N) / a->tol : INFINITY;
    mbsReal ekm2 = k >= 3 ? h * fabs(g[k - 2] - g[k - 3]) * sqrt(ss[2] / N) / a->tol : INFINITY;
    mbsReal ekp1 = up ? h * fabs(g[k + 1] - g[k]) * sqrt(ss[3] / N) / a->tol : INFINITY;
    if (!(ek <= 1)) { // rejected (or NaN): a smaller step, order 1 after three failures
      fails++, a->rejected++;
      mbsReal r = isfinite(ek) ? 0.9 * pow(ek, -1.0 / (k + 1)) : 0.1;
      a->h = h * fmin(0.5, fmax(0.1, r));
      a->ns = 0, a->start = 0;
      if (fails >= 3) a->k = 1;
      continue;
    }
    // correct (the evaluation follows)
    for (int c = 0; c < n; c++) a->yp[c] += h * g[k] * a->e[c]; // y_{n+1}
    memcpy(a->y, a->yp, (size_t)n * sizeof(mbsReal));
    a->t = landed ? tout : a->t + h;
    rc = f(ctx, a->t, a->y, a->f);
    a->evaluations++;
    if (rc) return (mbsErr)rc;
    // the new differences and grid
    memcpy(a->phi, a->f, (size_t)n * sizeof(mbsReal));
    for (int i = 1; i <= ndu && i < a->kmax + 2; i++) {
      const mbsReal *prev = a->phi + (size_t)(i - 1) * n, *ps = a->phis + (size_t)(i - 1) * n;
      mbsReal *nx = a->phi + (size_t)i * n;
      for (int c = 0; c < n; c++) nx[c] = prev[c] - ps[c];
    }
    a->nd = ndu + 1 < a->kmax + 2 ? ndu + 1 : a->kmax + 2;
    for (int i = 1; i <= a->nd && i <= k + 2; i++) a->psi[i - 1] = psin[i - 1];
    a->steps++;
    a->order_used[k]++;
    // the next order and step
    int knew = k;
    mbsReal enew = ek;
    if (a->start) {
      if ((k >= 2 && ekm1 <= ek) || ek * pow(2.0, k + 2) > 0.5 || k >= a->kmax) {
        a->start = 0; // the start phase ends where doubling and raising stop paying
      } else {
        a->k = k + 1;
        a->h = landed ? hnat : 2 * h;
        a->ns = 0;
        return MBS_OK;
      }
    }
    if (k > 1 && fmax(ekm1, k >= 3 ? ekm2 : 0) <= ek) {
      knew = k - 1, enew = ekm1;
    } else if (a->ns >= k + 1 && k < a->kmax && ekp1 < ek) {
      knew = k + 1, enew = ekp1;
    }
    a->k = knew;
    mbsReal r = 0.9 * pow(fmax(enew, 1e-10), -1.0 / (knew + 1));
    if (landed) { // a shortened last step says little about the next: keep the natural one
      a->h = hnat;
    } else if (r >= 1.2) { // grow by up to 2 (the divided differences take any ratio: the
                           // g's are formed every step anyway)
      a->h = h * fmin(2.0, r), a->ns = 0;
    } else if (r < 1) {
      a->h = h * fmax(0.5, r), a->ns = 0;
    } else {
      a->h = h, a->ns++;
    }
    return MBS_OK;
  }
}
