/// \file solver_jacobi.c
/// solver.method = jacobi: block Jacobi x <- x + omega D^{-1} (b - A x), the seed's method. On
/// 2-cyclic (chain-like, unbranched) systems omega = 1; on branched trees the spectrum of
/// D^{-1} A is not symmetric about 1 and plain Jacobi may diverge, so omega = 2/(lmin+lmax) from
/// a Lanczos estimate of the spectrum, made once and cached.
#include <math.h>
#include <stdlib.h>
#include "solver_private.h"
#include "cpa_private.h"
#include "flops.h"

typedef struct {
  mbsSolverOpt opt;
  int bipartite;     // no body has two children: the matrix is 2-cyclic
  int have_spec;     // lmin, lmax valid
  double lmin, lmax; // spectral bounds of D^{-1} A (lmax widened by 5 %)
  double omega;      // relaxation: 1 if bipartite, else 2/(lmin+lmax)
} mbsJacobi;

// block Jacobi: x <- x + D^{-1} (b - A x)
static mbsErr mbs_jacobiSweeps(const mbsModel *m, const mbsWork *w, mbsCfs *c,
                               const mbsCfsComm *comm, const mbsSolverOpt *o, double om,
                               mbsSolveInfo *info) {
  mbsReal *x = c->x, *r = c->r, *z = c->z, *q = c->q;
  double rr0 = 0;
  int last = -1; // the last sweep that tested
  info->reason = MBS_REASON_DIVERGED_MAXIT;
  for (int it = 0; it <= o->max_iter; it++) {
    MBS_CALL(mbs_cfsApply(m, w, c, comm, x, 0, q));
    for (int i = c->l0; i < c->l1; i++) r[i] = c->rhs[i] - q[i];
    MBS_FLOPS(c->l1 - c->l0);
    mbs_cfsPrecond(m, c, r, z);
    for (int i = c->l0; i < c->l1; i++) z[i] *= om;
    for (int i = c->l0; i < c->l1; i++) x[i] += z[i];
    MBS_FLOPS(2L * (c->l1 - c->l0));
    // solver.check_every = K: the norms, their reduction and the test on every K-th sweep and
    // the last (the sweeps between need no global operation)
    if (!mbs_cfsCheckSweep(o, it)) continue;
    double red[3] = {mbs_cfsDot(c, r, r), mbs_cfsDot(c, z, z), mbs_cfsDot(c, x, x)};
    MBS_CALL(mbs_cfsReduce(comm, red, 3));
    // rho(I - D^-1 A) > 1 is possible for trees (sibling couplings): the test reports divergence
    int stop = mbs_cfsStationaryTest(o, red, it, &rr0, info);
    mbs_cfsProgress(c, it - last, info->res);
    last = it;
    if (stop > 0 && o->criterion != MBS_CRIT_CHANGE) {
      // the residual test judged the iterate before this update (it is what r belongs to)
      for (int i = c->l0; i < c->l1; i++) x[i] -= z[i];
      MBS_FLOPS(c->l1 - c->l0);
    }
    if (stop) return MBS_OK;
  }
  return MBS_OK;
}

static mbsErr mbs_jacobiCreate(const mbsModel *m, const mbsCfs *c, const mbsSolverOpt *opt,
                               void *ctx, void **self) {
  (void)m, (void)ctx;
  mbsJacobi *s;
  MBS_ALLOC(s, 1);
  s->opt = *opt;
  s->bipartite = !c->branched;
  s->omega = 1;
  *self = s;
  return MBS_OK;
}

static mbsErr mbs_jacobiSolve(void *self, const mbsModel *m, const mbsState *st, mbsWork *w,
                              mbsCfs *c, const mbsCfsComm *comm, mbsSolveInfo *info) {
  mbsJacobi *s = self;
  (void)st;
  if (!s->bipartite) {
    if (!s->have_spec) {
      MBS_CALL(mbs_cfsEstimateSpectrum(m, w, c, comm, info, &s->lmin, &s->lmax));
      s->have_spec = 1;
    }
    // with closure rows in the system (docs/loops.md 8.4) the estimate's lmax may fall short of
    // the spectrum's by more than lmin (measured on ladder_small: the sweeps diverged): the
    // widened bound keeps omega lmax < 2
    s->omega = 2 / (s->lmin + (c->nlr ? s->lmax : s->lmax / 1.05));
    MBS_FLOPS(c->nlr ? 2 : 3);
  }
  return mbs_jacobiSweeps(m, w, c, comm, &s->opt, s->omega, info);
}

static void mbs_jacobiSave(const void *self, mbsSolverCache *cache) {
  const mbsJacobi *s = self;
  cache->have_spec = s->have_spec, cache->lmin = s->lmin, cache->lmax = s->lmax;
  cache->omega = s->omega;
}

static void mbs_jacobiRestore(void *self, const mbsSolverCache *cache) {
  mbsJacobi *s = self;
  s->have_spec = cache->have_spec, s->lmin = cache->lmin, s->lmax = cache->lmax;
  s->omega = cache->omega;
}

// cpa --iterations K: on a branched model jacobi's omega comes from a Lanczos estimate, assumed
// to run its full length
static int mbs_jacobiCpaSpec(const mbsModel *m, int iterations) {
  (void)iterations;
  return mbs_modelBranched(m) ? MBS_CFS_SPEC_STEPS : 0;
}

static mbsErr mbs_jacobiCpaSolve(mbsCpaB *B, mbsCpaCfs *C, const mbsCpaKin *K, mbsCpaVec *V);

const mbsSolverType mbs_solverJacobi = {
    .name = "jacobi",
    .method = MBS_SOLVER_JACOBI,
    .distributed = 1,
    .iterative = 1,
    .precond = 1,
    .cpa_graph = MBS_CPA_GRAPH_JACOBI,
    .check_every = 1,
    .stationary = 1,
    .local_model = 1,
    .cpa_spec = mbs_jacobiCpaSpec,
    .cpa_build = mbs_cpaCfsGraph,
    .cpa_loops = mbs_cpaLoopsGraph,
    .cpa_solve = mbs_jacobiCpaSolve,
    .maxit_hint = "",
    .create = mbs_jacobiCreate,
    .solve = mbs_jacobiSolve,
    .destroy = mbs_solverFreeSelf,
    .save = mbs_jacobiSave,
    .restore = mbs_jacobiRestore,
};

// ---------------------------------------------------------------- cpa: this solver's graph

// block Jacobi (solver_jacobi.c): iterations + 1 sweeps x <- x + omega D^-1 (b - A x);
// omega: the node computing the relaxation (-1: omega = 1 on unbranched models); xn receives the
// final writers of x
void mbs_cpaJacobi(mbsCpaB *B, mbsCpaCfs *C, const mbsCpaKin *K, const int *rhs, int bnorm,
                   int omega, int *xn, int *rn, int *zn, int **lv) {
  const mbsModel *m = B->m;
  const mbsCpaOptions *o = B->o;
  int n = m->nbody, conv = -1;
  for (int b = 0; b < n; b++) xn[b] = -1;
  for (int it = 0; it <= o->iterations; it++) {
    C->ctl = conv; // the next sweep runs only if this one did not converge
    mbs_cpaApply(B, K, C, 0, xn);
    int ph = PH_ITER + 8 * (C->napply - 1);
    mbs_cpaResidual(B, C, rhs, ph, rn, zn);
    for (int b = 0; b < n; b++) {
      int nl = mbs_cpaNl(B, b);
      // z *= omega ; x += z
      int u = mbs_cpaNode(B, MBS_CPA_JAC_UPDATE, b, 2LL * nl, ph + 3, ph + 2);
      mbs_cpaDep(B, zn[b], u);
      mbs_cpaDep(B, xn[b], u);
      mbs_cpaDep(B, omega, u);
      xn[b] = u;
    }
    if (!mbs_cpaCheckIt(o, it, o->iterations)) continue;     // solver.check_every
    conv = mbs_cpaNormTest(B, C, rn, xn, xn, ph, bnorm, lv); // r.r, z.z (z *= omega in u), x.x
  }
  C->ctl = -1;
  // converged under the residual test: the last update is taken back (x -= z)
  if (o->converged && o->criterion != MBS_CRIT_CHANGE)
    for (int b = 0; b < n; b++) {
      int f = mbs_cpaNode(B, MBS_CPA_JAC_FIX, b, mbs_cpaNl(B, b), -1, -1);
      mbs_cpaDep(B, conv, f);
      mbs_cpaDep(B, xn[b], f);
      xn[b] = f;
    }
}

// the solve's graph: on branched models (or with closure rows) the Lanczos estimate from x = 0
// (its x is discarded) and omega = 2/(lmin+lmax), then the sweeps
static mbsErr mbs_jacobiCpaSolve(mbsCpaB *B, mbsCpaCfs *C, const mbsCpaKin *K, mbsCpaVec *V) {
  const mbsCpaOptions *o = B->o;
  int omega = -1;
  if (mbs_modelBranched(B->m) || B->lrows) {
    mbs_cpaCg(B, C, K, V->rhs, V->bnorm, o->spec_iterations, o->spec_converged, 0, NULL, V->lz,
              V->xe, V->rn, V->pn, V->zn, V->lv);
    int ends[2] = {-1, -1};
    if (o->spec_iterations >= 2) mbs_cpaSpectrum(B, V->lz, o->spec_iterations, ends);
    omega = mbs_cpaNode(B, MBS_CPA_SCALAR, -1, B->lrows ? 2 : 3, -1, -1);
    mbs_cpaDep(B, ends[0], omega);
    mbs_cpaDep(B, ends[1], omega);
  }
  mbs_cpaJacobi(B, C, K, V->rhs, V->bnorm, omega, V->xn, V->rn, V->zn, V->lv);
  return MBS_OK;
}
