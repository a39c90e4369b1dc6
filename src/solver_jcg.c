/// \file solver_jcg.c
/// solver.method = jcg: conjugate gradients preconditioned by the block diagonal D (seed 002's
/// J-CG), docs/formulation.md. The CG kernel also serves the spectrum estimates of Jacobi and
/// Chebyshev: its coefficients give the Lanczos tridiagonal of D^{-1} A, whose extreme
/// eigenvalues are found by Sturm-sequence bisection.
#include <math.h>
#include <stdlib.h>
#include "solver_private.h"
#include "flops.h"

// extreme eigenvalues of a symmetric tridiagonal matrix (diag d, offdiag e, size n) by
// Sturm-sequence bisection (flops: src/flops.h mbs_flopTridiagEig)
static int mbs_sturmCount(const double *d, const double *e, int n, double x) {
  double q = d[0] - x;
  if (q == 0) q = 1e-300;
  int cnt = q < 0;
  for (int i = 1; i < n; i++) {
    q = d[i] - x - e[i - 1] * e[i - 1] / q;
    if (q == 0) q = 1e-300;
    cnt += q < 0;
  }
  return cnt;
}
static double mbs_tridiagEig(const double *d, const double *e, int n, int which) {
  double lo = 1e300, hi = -1e300;
  for (int i = 0; i < n; i++) { // Gershgorin discs
    double rad = (i > 0 ? fabs(e[i - 1]) : 0) + (i < n - 1 ? fabs(e[i]) : 0);
    double a = d[i] - rad, b = d[i] + rad;
    if (a < lo) lo = a;
    if (b > hi) hi = b;
  }
  for (int it = 0; it < MBS_EIG_BISECT; it++) {
    double mid = 0.5 * (lo + hi);
    if (mbs_sturmCount(d, e, n, mid) > which)
      hi = mid;
    else
      lo = mid;
  }
  MBS_FLOPS(mbs_flopTridiagEig(n));
  return 0.5 * (lo + hi);
}

mbsErr mbs_cfsTrueResidual(const mbsModel *m, const mbsWork *w, mbsCfs *c, const mbsCfsComm *comm,
                           double *red) {
  mbsReal *x = c->x, *r = c->r, *z = c->z, *q = c->q;
  MBS_CALL(mbs_cfsApply(m, w, c, comm, x, 0, q));
  for (int i = c->l0; i < c->l1; i++) r[i] = c->rhs[i] - q[i];
  MBS_FLOPS(c->l1 - c->l0);
  mbs_cfsPrecond(m, c, r, z);
  red[0] = mbs_cfsDot(c, r, z), red[1] = mbs_cfsDot(c, r, r);
  return mbs_cfsReduce(comm, red, 2);
}

int mbs_cfsRestart(mbsSolveInfo *info, double rr, double *rr_prev, int seg, int it) {
  MBS_FLOPS(1);
  if (!(rr < 0.25 * *rr_prev) || info->cg.n == MBS_CFS_CG_RESTARTS) {
    info->reason = MBS_REASON_DIVERGED_STAGNATED;
    return 0;
  }
  *rr_prev = rr;
  info->cg.seg[info->cg.n] = seg, info->cg.it[info->cg.n++] = it;
  return 1;
}

// conjugate gradients preconditioned by the block diagonal D (seed 002's J-CG); optionally
// records the Lanczos coefficients for a spectral estimate. The residual criterion is judged on
// b - A x: when the recursion's r meets it, r is recomputed (one more operator application), and
// if that misses the tolerance CG restarts from it (info->cg), unless the restart before gained
// less than a factor 2 (reason stagnated). Not with lan_a: a restart would spoil the Lanczos
// coefficients, and the estimates need none.
mbsErr mbs_cfsCg(const mbsModel *m, const mbsWork *w, mbsCfs *c, const mbsCfsComm *comm,
                 int criterion, double tol, int maxit, mbsSolveInfo *info, double *lan_a,
                 double *lan_b) {
  mbsReal *x = c->x, *r = c->r, *z = c->z, *p = c->p, *q = c->q;
  int l0 = c->l0, l1 = c->l1, confirm = !lan_a && criterion != MBS_CRIT_CHANGE;
  double red[4] = {0, 0, 0, 0};
  MBS_CALL(mbs_cfsTrueResidual(m, w, c, comm, red));
  double rz = red[0], res, rr_restart = INFINITY; // true r.r where the last restart began
  if (!lan_a) info->cg.n = 0;                     // chebyshev keeps its trace over its estimates
  info->it = 0;
  info->reason = MBS_REASON_DIVERGED_MAXIT;
  if (criterion != MBS_CRIT_CHANGE &&
      mbs_cfsConverged(criterion, tol, red[1], 0, 1, info->bnorm, &res)) {
    info->res = res;
    info->reason = MBS_REASON_CONVERGED;
    return MBS_OK;
  }
  for (int i = l0; i < l1; i++) p[i] = z[i];
  double alpha_old = 1, beta_old = 0;
  for (int it = 1; it <= maxit; it++) {
    MBS_CALL(mbs_cfsApply(m, w, c, comm, p, 0, q));
    double pq = mbs_cfsDot(c, p, q);
    MBS_CALL(mbs_cfsReduce(comm, &pq, 1));
    if (!(pq > 0)) {
      info->it = it;
      info->reason = isfinite(pq) ? MBS_REASON_DIVERGED_BREAKDOWN : MBS_REASON_DIVERGED_NAN;
      return MBS_OK;
    }
    double alpha = rz / pq;
    for (int i = l0; i < l1; i++) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
    }
    MBS_FLOPS(1 + 4L * (l1 - l0));
    mbs_cfsPrecond(m, c, r, z);
    // fused reduction: r.z, r.r, and for the change criterion |alpha p|^2 and x.x
    red[0] = mbs_cfsDot(c, r, z);
    red[1] = mbs_cfsDot(c, r, r);
    int nred = 2;
    if (criterion == MBS_CRIT_CHANGE) {
      red[2] = alpha * alpha * mbs_cfsDot(c, p, p);
      MBS_FLOPS(2);
      red[3] = mbs_cfsDot(c, x, x);
      nred = 4;
    }
    MBS_CALL(mbs_cfsReduce(comm, red, nred));
    double rz_new = red[0], beta = rz_new / rz;
    MBS_FLOPS(1);
    if (lan_a && it <= 64) { // Lanczos tridiagonal of D^{-1} A from the CG coefficients
      lan_a[it - 1] = 1 / alpha + (it > 1 ? beta_old / alpha_old : 0);
      lan_b[it - 1] = sqrt(fabs(beta)) / alpha;
      MBS_FLOPS(mbs_flopLanczosStep(it));
    }
    alpha_old = alpha, beta_old = beta;
    info->it = it;
    if (!isfinite(rz_new)) {
      info->reason = MBS_REASON_DIVERGED_NAN;
      return MBS_OK;
    }
    if (mbs_cfsConverged(criterion, tol, red[1], red[2], red[3], info->bnorm, &res)) {
      if (confirm) { // the recursion's r against b - A x
        MBS_CALL(mbs_cfsTrueResidual(m, w, c, comm, red));
        int ok = mbs_cfsConverged(criterion, tol, red[1], 0, 1, info->bnorm, &res);
        info->res = res;
        if (!ok) {
          if (!mbs_cfsRestart(info, red[1], &rr_restart, 0, it)) return MBS_OK;
          mbs_cfsProgress(c, 1, res);
          rz = red[0]; // restart: p = z
          for (int i = l0; i < l1; i++) p[i] = z[i];
          continue;
        }
      }
      info->res = res;
      info->reason = MBS_REASON_CONVERGED;
      return MBS_OK;
    }
    info->res = res;
    mbs_cfsProgress(c, 1, res);
    rz = rz_new;
    for (int i = l0; i < l1; i++) p[i] = z[i] + beta * p[i];
    MBS_FLOPS(2L * (l1 - l0));
  }
  return MBS_OK;
}

void mbs_cfsLanczosSpectrum(const double *lan_a, const double *lan_b, int k, double *lmin,
                            double *lmax) {
  *lmin = mbs_tridiagEig(lan_a, lan_b, k, 0);
  *lmax = 1.05 * mbs_tridiagEig(lan_a, lan_b, k, k - 1); // Lanczos approaches lmax from below
  MBS_FLOPS(1);
}

mbsErr mbs_cfsEstimateSpectrum(const mbsModel *m, const mbsWork *w, mbsCfs *c,
                               const mbsCfsComm *comm, mbsSolveInfo *info, double *lmin,
                               double *lmax) {
  double la[64], lb[64];
  mbsSolveInfo tmp = {.bnorm = info->bnorm};
  // from x = 0 with the residual test at 1e-14 (estimation only); the guess is kept in c->tmp
  for (int i = c->l0; i < c->l1; i++) c->tmp[i] = c->x[i], c->x[i] = 0;
  mbsErr e = mbs_cfsCg(m, w, c, comm, MBS_CRIT_RESIDUAL, 1e-14, MBS_CFS_SPEC_STEPS, &tmp, la, lb);
  for (int i = c->l0; i < c->l1; i++) c->x[i] = c->tmp[i];
  if (e) return e;
  info->spec_it = tmp.it;
  info->spec_conv = tmp.reason == MBS_REASON_CONVERGED;
  if (tmp.it >= 2)
    mbs_cfsLanczosSpectrum(la, lb, tmp.it, lmin, lmax);
  else
    *lmin = 0.5, *lmax = 1.5;
  return MBS_OK;
}

// ---------------------------------------------------------------- the solver

typedef struct {
  mbsSolverOpt opt;
} mbsJcg;

static mbsErr mbs_jcgCreate(const mbsModel *m, const mbsCfs *c, const mbsSolverOpt *opt, void *ctx,
                            void **self) {
  (void)m, (void)c, (void)ctx;
  mbsJcg *s;
  MBS_ALLOC(s, 1);
  s->opt = *opt;
  *self = s;
  return MBS_OK;
}

static mbsErr mbs_jcgSolve(void *self, const mbsModel *m, const mbsState *st, mbsWork *w, mbsCfs *c,
                           const mbsCfsComm *comm, mbsSolveInfo *info) {
  const mbsSolverOpt *o = &((mbsJcg *)self)->opt;
  (void)st;
  return mbs_cfsCg(m, w, c, comm, o->criterion, o->tol, o->max_iter, info, NULL, NULL);
}

const mbsSolverType mbs_solverJcg = {
    .name = "jcg",
    .method = MBS_SOLVER_JCG,
    .distributed = 1,
    .iterative = 1,
    .precond = 1,
    .cpa_graph = MBS_CPA_GRAPH_CG,
    .restarts = 1,
    .local_model = 1,
    .create = mbs_jcgCreate,
    .solve = mbs_jcgSolve,
    .destroy = mbs_solverFreeSelf,
};
