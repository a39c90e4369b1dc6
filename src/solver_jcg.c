/// \file solver_jcg.c
/// solver.method = jcg: conjugate gradients preconditioned by the block diagonal D (seed 002's
/// J-CG), docs/formulation.md. The CG kernel also serves the spectrum estimates of Jacobi and
/// Chebyshev: its coefficients give the Lanczos tridiagonal of D^{-1} A, whose extreme
/// eigenvalues are found by Sturm-sequence bisection.
#include <math.h>
#include <stdlib.h>
#include "solver_private.h"
#include "cpa_private.h"
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

static mbsErr mbs_jcgCpaSolve(mbsCpaB *B, mbsCpaCfs *C, const mbsCpaKin *K, mbsCpaVec *V);

const mbsSolverType mbs_solverJcg = {
    .name = "jcg",
    .method = MBS_SOLVER_JCG,
    .distributed = 1,
    .iterative = 1,
    .precond = 1,
    .cpa_graph = MBS_CPA_GRAPH_CG,
    .restarts = 1,
    .local_model = 1,
    .cpa_build = mbs_cpaCfsGraph,
    .cpa_loops = mbs_cpaLoopsGraph,
    .cpa_solve = mbs_jcgCpaSolve,
    .create = mbs_jcgCreate,
    .solve = mbs_jcgSolve,
    .destroy = mbs_solverFreeSelf,
};

// ---------------------------------------------------------------- cpa: this solver's graph

// the true residual (solver_jcg.c mbs_cfsTrueResidual): q = A x, r = b - q, z = D^-1 r, r.z and
// r.r reduced; red[0] receives the r.z node, red[1] the r.r node; rn, zn the writers
static void mbs_cpaCgResidual(mbsCpaB *B, mbsCpaCfs *C, const mbsCpaKin *K, const int *rhs, int *xn,
                              int *rn, int *zn, int **lv, int *red) {
  mbs_cpaApply(B, K, C, 0, xn);
  int ph = PH_ITER + 8 * (C->napply - 1);
  for (int b = 0; b < B->m->nbody; b++) {
    rn[b] = mbs_cpaResidNode(B, C, b, rhs[b], ph);
    zn[b] = mbs_cpaPrecondNode(B, C, b, rn[b], ph);
    lv[0][b] = mbs_cpaLeaf(B, b, zn[b], -1, ph); // r.z
    lv[1][b] = mbs_cpaLeaf(B, b, rn[b], -1, ph); // r.r
  }
  mbs_cpaReduce(B, C, 2, lv, red);
}

// a stop its recursion met, confirmed with b - A x (mbs_cfsTrueResidual, then mbs_cfsConverged:
// 2 flops, 3 where it missed and the solver compared against the last restart): returns the new
// test node (after the old one, prev; -1: none), *rz the r.z node (NULL: not wanted)
int mbs_cpaConfirm(mbsCpaB *B, mbsCpaCfs *C, const mbsCpaKin *K, const int *rhs, int bnorm,
                   int prev, int missed, int *xn, int *rn, int *zn, int **lv, int *rz) {
  int tr[2];
  mbs_cpaCgResidual(B, C, K, rhs, xn, rn, zn, lv, tr);
  int c2 = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, missed ? 3 : 2, -1, -1);
  mbs_cpaDep(B, tr[1], c2);
  mbs_cpaDep(B, bnorm, c2);
  mbs_cpaDep(B, prev, c2);
  if (rz) *rz = tr[0];
  return c2;
}

// conjugate gradients preconditioned by D (solver_jcg.c): iters iterations from x (writers
// xn, -1: the warm start or zero), converged: iteration iters met the tolerance (or, iters = 0,
// the start did), 2: it stagnated there; change: the change criterion's two extra dots; lanczos:
// the Lanczos coefficients are recorded (their scalar nodes are returned in lz[0..iters-1]).
// Without lanczos or change, the iterations whose recursion met the tolerance (the restarts rs,
// and a converged or stagnated iters) confirm it with b - A x. bnorm: the node of ||b||. xn and
// rn receive the final writers of x and r.
void mbs_cpaCg(mbsCpaB *B, mbsCpaCfs *C, const mbsCpaKin *K, const int *rhs, int bnorm, int iters,
               int converged, int change, const mbsCgTrace *rs, int *lz, int *xn, int *rn, int *pn,
               int *zn, int **lv) {
  const mbsModel *m = B->m;
  int n = m->nbody, red[4], confirm = !lz && !change, nrs = 0;
  // start: q = A x, r = b - q, z = D^-1 r, r.z and r.r, p = z
  mbs_cpaCgResidual(B, C, K, rhs, xn, rn, zn, lv, red);
  for (int b = 0; b < n; b++) pn[b] = zn[b];
  int rz = red[0], conv = -1, alpha_old = -1, beta_old = -1;
  if (!change) {
    conv = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, 2, -1, -1);
    mbs_cpaDep(B, red[1], conv);
    mbs_cpaDep(B, bnorm, conv);
  }
  for (int it = 1; it <= iters; it++) {
    int ph;
    // q = A p ; alpha = r.z / p.q
    mbs_cpaApply(B, K, C, 0, pn);
    ph = PH_ITER + 8 * (C->napply - 1);
    for (int b = 0; b < n; b++) lv[0][b] = mbs_cpaLeaf(B, b, C->down[b], pn[b], ph - 1); // p.q
    mbs_cpaReduce(B, C, 1, lv, red);
    int alpha = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, 1, -1, -1);
    mbs_cpaDep(B, red[0], alpha);
    mbs_cpaDep(B, rz, alpha);
    mbs_cpaDep(B, conv, alpha);
    // x += alpha p, r -= alpha q, z = D^-1 r, fused dots
    for (int b = 0; b < n; b++) {
      int nl = mbs_cpaNl(B, b);
      int u = mbs_cpaNode(B, MBS_CPA_CG_UPDATE, b, 4LL * nl, ph + 3, ph + 2);
      mbs_cpaDep(B, alpha, u);
      mbs_cpaDep(B, pn[b], u);
      mbs_cpaDep(B, C->down[b], u);
      mbs_cpaDep(B, rn[b], u);
      mbs_cpaDep(B, xn[b], u);
      xn[b] = rn[b] = u;
      zn[b] = mbs_cpaPrecondNode(B, C, b, u, ph);
      lv[0][b] = mbs_cpaLeaf(B, b, zn[b], -1, ph); // r.z, r.r (and p.p, x.x)
      lv[1][b] = mbs_cpaLeaf(B, b, u, -1, ph);
      lv[2][b] = change ? mbs_cpaLeaf(B, b, pn[b], -1, ph) : -1;
      lv[3][b] = change ? mbs_cpaLeaf(B, b, u, -1, ph) : -1;
    }
    mbs_cpaReduce(B, C, change ? 4 : 2, lv, red);
    int chg = -1;
    if (change) { // alpha^2 p.p
      chg = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, 2, -1, -1);
      mbs_cpaDep(B, red[2], chg);
      mbs_cpaDep(B, alpha, chg);
    }
    int beta = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, 1, -1, -1);
    mbs_cpaDep(B, red[0], beta);
    mbs_cpaDep(B, rz, beta);
    if (lz && it <= 64) { // Lanczos coefficients of this step
      lz[it - 1] = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, mbs_flopLanczosStep(it), -1, -1);
      mbs_cpaDep(B, alpha, lz[it - 1]);
      mbs_cpaDep(B, beta, lz[it - 1]);
      mbs_cpaDep(B, alpha_old, lz[it - 1]);
      mbs_cpaDep(B, beta_old, lz[it - 1]);
    }
    alpha_old = alpha, beta_old = beta;
    conv = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, 2, -1, -1);
    mbs_cpaDep(B, red[1], conv);
    mbs_cpaDep(B, bnorm, conv);
    mbs_cpaDep(B, chg, conv);
    if (change) mbs_cpaDep(B, red[3], conv);
    rz = red[0];
    int restart = confirm && rs && nrs < rs->n && rs->it[nrs] == it;
    if (confirm && (restart || (it == iters && converged))) {
      // the recursion met the tolerance: b - A x confirms it, or CG restarts from it (p = z)
      conv =
          mbs_cpaConfirm(B, C, K, rhs, bnorm, conv, restart || converged == 2, xn, rn, zn, lv, &rz);
      if (!restart) break;
      nrs++;
      for (int b = 0; b < n; b++) pn[b] = zn[b];
      continue;
    }
    if (it == iters && converged) break;
    // p = z + beta p
    for (int b = 0; b < n; b++) {
      int pp = mbs_cpaNode(B, MBS_CPA_CG_P, b, 2LL * mbs_cpaNl(B, b), ph + 4, ph + 3);
      mbs_cpaDep(B, beta, pp);
      mbs_cpaDep(B, conv, pp);
      mbs_cpaDep(B, zn[b], pp);
      mbs_cpaDep(B, pn[b], pp);
      pn[b] = pp;
    }
  }
}

// the spectrum of D^-1 A from k >= 2 Lanczos steps (solver_jcg.c mbs_cfsLanczosSpectrum): two
// tridiagonal eigenvalue searches and the 5 % widening; ends[0..1] receive lmin and lmax
void mbs_cpaSpectrum(mbsCpaB *B, const int *lz, int k, int *ends) {
  for (int e = 0; e < 2; e++) {
    ends[e] = mbs_cpaNode(B, MBS_CPA_EIG, -1, mbs_flopTridiagEig(k), -1, -1);
    for (int i = 0; i < k && i < 64; i++) mbs_cpaDep(B, lz[i], ends[e]);
  }
  int w = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, 1, -1, -1);
  mbs_cpaDep(B, ends[1], w);
  ends[1] = w;
}

// the solve's graph: the CG iterations with the measured solve's restarts
static mbsErr mbs_jcgCpaSolve(mbsCpaB *B, mbsCpaCfs *C, const mbsCpaKin *K, mbsCpaVec *V) {
  const mbsCpaOptions *o = B->o;
  mbs_cpaCg(B, C, K, V->rhs, V->bnorm, o->iterations, o->converged, o->criterion == MBS_CRIT_CHANGE,
            o->cg, NULL, V->xn, V->rn, V->pn, V->zn, V->lv);
  return MBS_OK;
}
