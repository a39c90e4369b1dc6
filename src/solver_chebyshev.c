/// \file solver_chebyshev.c
/// solver.method = chebyshev: Chebyshev semi-iteration on D^{-1} A over an interval [lo, hi] of
/// its spectrum: 1 -+ solver.rho when given, else the extreme Lanczos eigenvalues of a few J-CG
/// steps (which also improve x), estimated once and cached until an iteration diverges.
#include <math.h>
#include <stdlib.h>
#include "solver_private.h"
#include "flops.h"

typedef struct {
  mbsSolverOpt opt;
  int have_spec;     // lmin, lmax valid
  double lmin, lmax; // spectral bounds of D^{-1} A (lmax widened by 5 %)
} mbsChebyshev;

// Chebyshev semi-iteration on D^{-1} A with eigenvalues in [lo, hi] (Saad, Alg. 12.1)
static mbsErr mbs_chebyshevSweeps(const mbsModel *m, const mbsWork *w, mbsCfs *c,
                                  const mbsCfsComm *comm, const mbsSolverOpt *o, double lo,
                                  double hi, int maxit, mbsSolveInfo *info) {
  mbsReal *x = c->x, *r = c->r, *z = c->z, *d = c->p, *q = c->q;
  double theta = 0.5 * (hi + lo), delta = 0.5 * (hi - lo), sigma = theta / delta;
  double rho = 1 / sigma, res;
  MBS_FLOPS(6);
  MBS_CALL(mbs_cfsApply(m, w, c, comm, x, 0, q));
  for (int i = c->l0; i < c->l1; i++) r[i] = c->rhs[i] - q[i];
  MBS_FLOPS(c->l1 - c->l0);
  mbs_cfsPrecond(m, c, r, z);
  for (int i = c->l0; i < c->l1; i++) d[i] = z[i] / theta;
  MBS_FLOPS(c->l1 - c->l0);
  info->reason = MBS_REASON_DIVERGED_MAXIT;
  double r0 = -1;
  for (int it = 1; it <= maxit; it++) {
    for (int i = c->l0; i < c->l1; i++) x[i] += d[i];
    MBS_FLOPS(c->l1 - c->l0);
    MBS_CALL(mbs_cfsApply(m, w, c, comm, d, 0, q));
    for (int i = c->l0; i < c->l1; i++) r[i] -= q[i];
    MBS_FLOPS(c->l1 - c->l0);
    mbs_cfsPrecond(m, c, r, z);
    double red[3] = {mbs_cfsDot(c, r, r), mbs_cfsDot(c, d, d), mbs_cfsDot(c, x, x)};
    MBS_CALL(mbs_cfsReduce(comm, red, 3));
    info->it = it;
    if (!isfinite(red[0])) {
      info->reason = MBS_REASON_DIVERGED_NAN;
      return MBS_OK;
    }
    if (r0 < 0) r0 = red[0];
    MBS_FLOPS(1);
    if (red[0] > 1e12 * r0) { // the interval was wrong: report divergence
      info->reason = MBS_REASON_DIVERGED_DTOL;
      return MBS_OK;
    }
    if (mbs_cfsConverged(o->criterion, o->tol, red[0], red[1], red[2], info->bnorm, &res)) {
      info->res = res;
      info->reason = MBS_REASON_CONVERGED;
      return MBS_OK;
    }
    info->res = res;
    double rho_new = 1 / (2 * sigma - rho);
    for (int i = c->l0; i < c->l1; i++) d[i] = rho_new * rho * d[i] + 2 * rho_new / delta * z[i];
    MBS_FLOPS(3 + 6L * (c->l1 - c->l0));
    rho = rho_new;
  }
  return MBS_OK;
}

static mbsErr mbs_chebyshevCreate(const mbsModel *m, const mbsCfs *c, const mbsSolverOpt *opt,
                                  void *ctx, void **self) {
  (void)m, (void)c, (void)ctx;
  mbsChebyshev *s;
  MBS_ALLOC(s, 1);
  s->opt = *opt;
  *self = s;
  return MBS_OK;
}

static mbsErr mbs_chebyshevSolve(void *self, const mbsModel *m, const mbsState *st, mbsWork *w,
                                 mbsCfs *c, const mbsCfsComm *comm, mbsSolveInfo *info) {
  mbsChebyshev *s = self;
  const mbsSolverOpt *o = &s->opt;
  double lo, hi;
  int used = 0;
  (void)st;
  if (o->rho > 0) {
    MBS_CHECK(o->rho < 1, MBS_ERR_INPUT, "solver.rho must be below 1 (got %g)", o->rho);
    lo = 1 - o->rho, hi = 1 + o->rho;
    MBS_FLOPS(2);
  } else if (s->have_spec) {
    lo = s->lmin, hi = s->lmax;
  } else {
    // estimate the spectrum of D^{-1} A from a few CG (Lanczos) steps, which also improve x
    double la[64], lb[64];
    int k = o->max_iter < MBS_CFS_CHEB_STEPS ? o->max_iter : MBS_CFS_CHEB_STEPS;
    MBS_CALL(mbs_cfsCg(m, w, c, comm, o->criterion, o->tol, k, info, la, lb));
    used = info->spec_it = info->it;
    info->spec_conv = info->reason == MBS_REASON_CONVERGED;
    if (info->reason == MBS_REASON_CONVERGED || used < 2) {
      s->lmin = 0.5, s->lmax = 1.5; // trivially small system: any safe interval
      if (info->reason == MBS_REASON_CONVERGED) return MBS_OK;
    } else {
      mbs_cfsLanczosSpectrum(la, lb, used, &s->lmin, &s->lmax);
    }
    s->have_spec = 1;
    lo = s->lmin, hi = s->lmax;
  }
  MBS_CALL(mbs_chebyshevSweeps(m, w, c, comm, o, lo, hi, o->max_iter - used, info));
  info->it += used;
  if (info->reason == MBS_REASON_DIVERGED_DTOL) s->have_spec = 0;
  return MBS_OK;
}

static void mbs_chebyshevSave(const void *self, mbsSolverCache *cache) {
  const mbsChebyshev *s = self;
  cache->have_spec = s->have_spec, cache->lmin = s->lmin, cache->lmax = s->lmax;
}

static void mbs_chebyshevRestore(void *self, const mbsSolverCache *cache) {
  mbsChebyshev *s = self;
  s->have_spec = cache->have_spec, s->lmin = cache->lmin, s->lmax = cache->lmax;
}

const mbsSolverType mbs_solverChebyshev = {
    .name = "chebyshev",
    .method = MBS_SOLVER_CHEBYSHEV,
    .distributed = 1,
    .iterative = 1,
    .cpa_graph = MBS_CPA_GRAPH_CHEBYSHEV,
    .create = mbs_chebyshevCreate,
    .solve = mbs_chebyshevSolve,
    .destroy = mbs_solverFreeSelf,
    .save = mbs_chebyshevSave,
    .restore = mbs_chebyshevRestore,
};
