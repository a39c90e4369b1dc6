/// \file solver_chebyshev.c
/// solver.method = chebyshev: Chebyshev semi-iteration on D^{-1} A over an interval [lo, hi] of
/// its spectrum: 1 -+ solver.rho when given, else the extreme Lanczos eigenvalues of a few J-CG
/// steps (which also improve x), cached across evaluations. A Ritz value approaches lmin from
/// above, so the estimated interval can miss the bottom of the spectrum; the iteration then
/// stalls on those components. The sweeps watch for that (a window that should cut the residual
/// 100-fold cuts it less than 10-fold) and re-estimate from the stalled iterate, whose residual is
/// dominated by exactly the missed eigenvectors; the interval only widens (docs/formulation.md).
#include <math.h>
#include <stdlib.h>
#include "solver_private.h"
#include "cpa_private.h"
#include "flops.h"

typedef struct {
  mbsSolverOpt opt;
  int have_spec;     // lmin, lmax valid
  double lmin, lmax; // spectral bounds of D^{-1} A (lmax widened by 5 %)
} mbsChebyshev;

// Chebyshev semi-iteration on D^{-1} A with eigenvalues in [lo, hi] (Saad, Alg. 12.1). With
// \p watch, every `win` iterations (the count in which the interval's rate predicts a 100-fold
// cut of the residual) the residual must have fallen at least 10-fold, else *stalled = 1 and the
// sweeps stop (reason max_iter, x the last iterate); *winp receives win (0 without watch). The
// residual r is updated by recursion (r -= A d); a test it meets is confirmed with b - A x
// (docs/formulation.md 3.2.1), and if that misses the tolerance the sweeps go on from the true r
// and z (recorded in info->cg as segment seg), unless the replacement before gained less than a
// factor 2 (reason stagnated).
static mbsErr mbs_chebyshevSweeps(const mbsModel *m, const mbsWork *w, mbsCfs *c,
                                  const mbsCfsComm *comm, const mbsSolverOpt *o, double lo,
                                  double hi, int maxit, int watch, int seg, int *stalled, int *winp,
                                  mbsSolveInfo *info) {
  mbsReal *x = c->x, *r = c->r, *z = c->z, *d = c->p, *q = c->q;
  double theta = 0.5 * (hi + lo), delta = 0.5 * (hi - lo), sigma = theta / delta;
  double rho = 1 / sigma, res;
  // the asymptotic rate per iteration, (sqrt(k) - 1) / (sqrt(k) + 1) with k = hi / lo
  double sk = sqrt(hi / lo), rate = (sk - 1) / (sk + 1);
  int win = rate > 0 && rate < 1 ? (int)ceil(log(100.0) / -log(rate)) : 1;
  if (win < 20) win = 20;
  // solver.check_every = K: the norms, their reduction and the tests on every K-th iteration and
  // the last; the watch's window a multiple of K so that its ends are tested
  int K = o->check_every > 1 ? o->check_every : 1, last = 0;
  win = (win + K - 1) / K * K;
  double rwin = -1, rr_repl = INFINITY; // true r.r at the last replacement
  *stalled = 0, *winp = watch ? win : 0;
  info->it = 0;
  MBS_FLOPS(6 + 8);
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
    if (it % K == 0 || it == maxit) {
      double red[3] = {mbs_cfsDot(c, r, r), mbs_cfsDot(c, d, d), mbs_cfsDot(c, x, x)};
      MBS_CALL(mbs_cfsReduce(comm, red, 3));
      info->it = it;
      if (!isfinite(red[0])) {
        info->reason = MBS_REASON_DIVERGED_NAN;
        return MBS_OK;
      }
      if (r0 < 0) r0 = red[0], rwin = red[0];
      MBS_FLOPS(1);
      if (red[0] > 1e12 * r0) { // the interval was wrong: report divergence
        info->reason = MBS_REASON_DIVERGED_DTOL;
        return MBS_OK;
      }
      if (mbs_cfsConverged(o->criterion, o->tol, red[0], red[1], red[2], info->bnorm, &res)) {
        int ok = 1;
        if (o->criterion != MBS_CRIT_CHANGE) { // the recursion's r against b - A x
          double tr[2];
          MBS_CALL(mbs_cfsTrueResidual(m, w, c, comm, tr));
          ok = mbs_cfsConverged(o->criterion, o->tol, tr[1], 0, 1, info->bnorm, &res);
          if (!ok) {
            if (!mbs_cfsRestart(info, tr[1], &rr_repl, seg, it)) {
              info->res = res;
              return MBS_OK;
            }
            red[0] = tr[1]; // the sweeps go on from the true r and z
          }
        }
        if (ok) {
          info->res = res;
          info->reason = MBS_REASON_CONVERGED;
          return MBS_OK;
        }
      }
      info->res = res;
      mbs_cfsProgress(c, it - last, res);
      last = it;
      if (watch && it % win == 0) { // r.r must fall 100-fold (|r| 10-fold) per window
        MBS_FLOPS(1);
        if (red[0] > 1e-2 * rwin) {
          *stalled = 1;
          return MBS_OK;
        }
        rwin = red[0];
      }
    }
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
  mbsChebTrace *tr = &info->cheb;
  int used = 0, stalled = 0;
  (void)st;
  info->spec_it = 0, info->spec_conv = 0;
  tr->nseg = 1, tr->est[0] = tr->sweep[0] = tr->win[0] = tr->econf[0] = 0;
  info->cg.n = 0;
  if (o->rho > 0) { // the seed's form: the user's interval, no watch
    MBS_CHECK(o->rho < 1, MBS_ERR_INPUT, "solver.rho must be below 1 (got %g)", o->rho);
    MBS_FLOPS(2);
    MBS_CALL(mbs_chebyshevSweeps(m, w, c, comm, o, 1 - o->rho, 1 + o->rho, o->max_iter, 0, 0,
                                 &stalled, tr->win, info));
    tr->sweep[0] = info->it;
    return MBS_OK;
  }
  for (;;) {
    // segment j; after a stall (j > 0) a new estimate widens the cached interval, not replaces it
    int j = tr->nseg - 1, widen = j > 0;
    if (!s->have_spec || widen) {
      // estimate the spectrum of D^{-1} A from a few CG (Lanczos) steps, which also improve x
      double la[64], lb[64], lmin, lmax;
      int k = o->max_iter - used < MBS_CFS_CHEB_STEPS ? o->max_iter - used : MBS_CFS_CHEB_STEPS;
      MBS_CALL(mbs_cfsCg(m, w, c, comm, o->criterion, o->tol, k, info, la, lb));
      used += info->it, info->spec_it += info->it, tr->est[j] = info->it;
      int cg_conv = info->reason == MBS_REASON_CONVERGED;
      if (cg_conv && info->it > 0 && o->criterion != MBS_CRIT_CHANGE) {
        // the CG's recursive r met the tolerance: confirmed with b - A x, else the sweeps follow
        double trr[2];
        MBS_CALL(mbs_cfsTrueResidual(m, w, c, comm, trr));
        int ok = mbs_cfsConverged(o->criterion, o->tol, trr[1], 0, 1, info->bnorm, &info->res);
        tr->econf[j] = ok ? 1 : 2;
        if (!ok) info->reason = MBS_REASON_DIVERGED_MAXIT;
      }
      info->spec_conv = info->reason == MBS_REASON_CONVERGED;
      if (info->reason == MBS_REASON_CONVERGED || info->reason == MBS_REASON_DIVERGED_NAN) {
        if (!s->have_spec) s->lmin = 0.5, s->lmax = 1.5; // solved already: any safe interval
        s->have_spec = info->reason == MBS_REASON_CONVERGED;
        info->it = used;
        return MBS_OK;
      }
      // steps with Lanczos coefficients (a breakdown's last step has none)
      int rec = info->reason == MBS_REASON_DIVERGED_BREAKDOWN ? info->it - 1 : info->it;
      if (rec >= 2) {
        mbs_cfsLanczosSpectrum(la, lb, rec, &lmin, &lmax);
        if (!widen || lmin < s->lmin) s->lmin = lmin;
        if (!widen || lmax > s->lmax) s->lmax = lmax;
      } else if (!widen) {
        s->lmin = 0.5, s->lmax = 1.5; // too few steps to tell
      }
      s->have_spec = 1;
      if (used >= o->max_iter) {
        info->it = used;
        return MBS_OK;
      }
    }
    int watch = tr->nseg < MBS_CHEB_SEGS; // the last segment the trace can hold runs unwatched
    MBS_CALL(mbs_chebyshevSweeps(m, w, c, comm, o, s->lmin, s->lmax, o->max_iter - used, watch, j,
                                 &stalled, tr->win + j, info));
    used += info->it, tr->sweep[j] = info->it;
    info->it = used;
    if (info->reason == MBS_REASON_DIVERGED_DTOL) s->have_spec = 0; // the interval was wrong
    if (!stalled || used >= o->max_iter) return MBS_OK;
    // the residual left is the part below lmin: Lanczos from it finds that part
    tr->est[j + 1] = tr->sweep[j + 1] = tr->win[j + 1] = tr->econf[j + 1] = 0, tr->nseg++;
  }
}

static void mbs_chebyshevSave(const void *self, mbsSolverCache *cache) {
  const mbsChebyshev *s = self;
  cache->have_spec = s->have_spec, cache->lmin = s->lmin, cache->lmax = s->lmax;
}

static void mbs_chebyshevRestore(void *self, const mbsSolverCache *cache) {
  mbsChebyshev *s = self;
  s->have_spec = cache->have_spec, s->lmin = cache->lmin, s->lmax = cache->lmax;
}

// cpa --iterations K: without solver.rho the first segment's estimate, assumed to run its full
// length (at most max_iter and K)
static int mbs_chebyshevCpaSpec(const mbsModel *m, int iterations) {
  if (m->opt.rho > 0) return 0;
  int k = m->opt.max_iter < MBS_CFS_CHEB_STEPS ? m->opt.max_iter : MBS_CFS_CHEB_STEPS;
  return iterations < k ? iterations : k;
}

static mbsErr mbs_chebyshevCpaSolve(mbsCpaB *B, mbsCpaCfs *C, const mbsCpaKin *K, mbsCpaVec *V);

const mbsSolverType mbs_solverChebyshev = {
    .name = "chebyshev",
    .method = MBS_SOLVER_CHEBYSHEV,
    .distributed = 1,
    .iterative = 1,
    .precond = 1,
    .cpa_graph = MBS_CPA_GRAPH_CHEBYSHEV,
    .check_every = 1,
    .restarts = 1,
    .segments = 1,
    .local_model = 1,
    .cpa_spec = mbs_chebyshevCpaSpec,
    .cpa_build = mbs_cpaCfsGraph,
    .cpa_loops = mbs_cpaLoopsGraph,
    .cpa_solve = mbs_chebyshevCpaSolve,
    .create = mbs_chebyshevCreate,
    .solve = mbs_chebyshevSolve,
    .destroy = mbs_solverFreeSelf,
    .save = mbs_chebyshevSave,
    .restore = mbs_chebyshevRestore,
};

// ---------------------------------------------------------------- cpa: this solver's graph

// Chebyshev semi-iteration (solver_chebyshev.c), iters iterations from x (writers xn; -1:
// the warm start) on the interval computed by node ival (solver.rho, or the Lanczos estimate)
void mbs_cpaChebyshev(mbsCpaB *B, mbsCpaCfs *C, const mbsCpaKin *K, const int *rhs, int bnorm,
                      int ival, int iters, int converged, int win, int stalled,
                      const mbsCgTrace *rs, int seg, int *xn, int *rn, int *dn, int **lv) {
  const mbsModel *m = B->m;
  int n = m->nbody, conv = -1, confirm = B->o->criterion != MBS_CRIT_CHANGE;
  int *zn = lv[3];
  // theta, delta, sigma, rho (6 flops) and the watch's rate and window (8)
  int rho = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, 6 + 8, -1, -1);
  mbs_cpaDep(B, ival, rho);
  mbs_cpaApply(B, K, C, 0, xn);
  int ph = PH_ITER + 8 * (C->napply - 1);
  mbs_cpaResidual(B, C, rhs, ph, rn, zn);
  for (int b = 0; b < n; b++) {
    dn[b] = mbs_cpaNode(B, MBS_CPA_CHEB_D, b, mbs_cpaNl(B, b), ph + 3, ph + 2); // d = z/theta
    mbs_cpaDep(B, zn[b], dn[b]);
    mbs_cpaDep(B, rho, dn[b]);
  }
  for (int it = 1; it <= iters; it++) {
    for (int b = 0; b < n; b++) { // x += d
      int x = mbs_cpaNode(B, MBS_CPA_CHEB_X, b, mbs_cpaNl(B, b), -1, -1);
      mbs_cpaDep(B, xn[b], x);
      mbs_cpaDep(B, dn[b], x);
      mbs_cpaDep(B, conv, x);
      xn[b] = x;
    }
    C->ctl = conv;
    mbs_cpaApply(B, K, C, 0, dn);
    ph = PH_ITER + 8 * (C->napply - 1);
    mbs_cpaResidual(B, C, rn, ph, rn, zn); // r -= q
    if (mbs_cpaCheckIt(B->o, it, iters)) { // solver.check_every (win is a multiple of K)
      conv = mbs_cpaNormTest(B, C, rn, dn, xn, ph, bnorm, lv); // r.r, d.d, x.x
      int repl = 0; // a replacement of r and z by the true residual after this sweep
      for (int k = 0; confirm && rs && k < rs->n; k++) repl |= rs->seg[k] == seg && rs->it[k] == it;
      if (confirm && (repl || (it == iters && converged))) { // the recursion's r against b - A x
        conv =
            mbs_cpaConfirm(B, C, K, rhs, bnorm, conv, repl || converged == 2, xn, rn, zn, lv, NULL);
        if (!repl) break;
        ph = PH_ITER + 8 * (C->napply - 1);
      }
      if (it == iters && converged) break;
      if (win > 0 && it % win == 0) { // the stall watch: r.r against 1e-2 of the window's start
        int chk = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, 1, -1, -1);
        mbs_cpaDep(B, conv, chk);
        conv = chk;
      }
      if (it == iters && stalled) break;
    }
    // rho_new = 1/(2 sigma - rho) ; d = rho_new rho d + 2 rho_new / delta z
    int r2 = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, 3, -1, -1);
    mbs_cpaDep(B, conv, r2);
    mbs_cpaDep(B, rho, r2);
    rho = r2;
    for (int b = 0; b < n; b++) {
      int d = mbs_cpaNode(B, MBS_CPA_CHEB_D, b, 6LL * mbs_cpaNl(B, b), ph + 4, ph + 3);
      mbs_cpaDep(B, rho, d);
      mbs_cpaDep(B, dn[b], d);
      mbs_cpaDep(B, zn[b], d);
      dn[b] = d;
    }
  }
  C->ctl = -1;
}

// the solve's graph: with solver.rho the sweeps on the given interval; else its segments: CG
// (Lanczos) steps that also improve x, the interval, the sweeps (the measured solve's trace
// o->cheb, or one segment)
static mbsErr mbs_chebyshevCpaSolve(mbsCpaB *B, mbsCpaCfs *C, const mbsCpaKin *K, mbsCpaVec *V) {
  const mbsCpaOptions *o = B->o;
  int change = o->criterion == MBS_CRIT_CHANGE;
  const int *rhs = V->rhs;
  int bnorm = V->bnorm, *xn = V->xn, *rn = V->rn, *pn = V->pn, *zn = V->zn, **lv = V->lv;
  int *lz = V->lz;
  if (B->m->opt.rho > 0) {
    int ival = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, 2, -1, -1); // 1 -+ rho
    mbs_cpaChebyshev(B, C, K, rhs, bnorm, ival, o->iterations, o->converged, 0, 0, o->cg, 0, xn, rn,
                     pn, lv);
    return MBS_OK;
  }
  mbsChebTrace one = {1, {o->spec_iterations}, {0}, {0}, {0}};
  if (!o->spec_converged) one.sweep[0] = o->iterations - o->spec_iterations;
  const mbsChebTrace *t = o->cheb && o->cheb->nseg > 0 ? o->cheb : &one;
  int ival = -1;
  for (int j = 0; j < t->nseg; j++) {
    int last = j == t->nseg - 1, est_conv = last && o->spec_converged && t->est[j] > 0;
    if (t->est[j] > 0) {
      // a CG whose recursion met the tolerance stopped there (econf), confirmed with b - A x
      mbs_cpaCg(B, C, K, rhs, bnorm, t->est[j], est_conv || t->econf[j] == 2, change, NULL, lz, xn,
                rn, pn, zn, lv);
      if (t->econf[j]) mbs_cpaConfirm(B, C, K, rhs, bnorm, -1, 0, xn, rn, zn, lv, NULL);
      int ends[2] = {-1, -1};
      if (!est_conv && t->est[j] >= 2) mbs_cpaSpectrum(B, lz, t->est[j], ends);
      int nv = ends[1] >= 0 ? ends[1] : lz[0];
      if (ends[0] >= 0) mbs_cpaDep(B, ends[0], nv);
      if (ival >= 0) mbs_cpaDep(B, ival, nv); // widened: the old interval joins the new
      ival = nv;
    }
    if (!est_conv && t->sweep[j] > 0)
      mbs_cpaChebyshev(B, C, K, rhs, bnorm, ival, t->sweep[j], last ? o->converged : 0, t->win[j],
                       !last, o->cg, j, xn, rn, pn, lv);
  }
  return MBS_OK;
}
