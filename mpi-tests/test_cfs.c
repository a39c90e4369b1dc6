/// \file test_cfs.c
/// Serial constraint-force method against the ABA oracle: every solver on random chains and trees
/// with all joint types (floating bases included); the operator is symmetric positive definite;
/// explicit blocks agree with the matrix-free operator; warm-start extrapolation is exact on
/// polynomials.
#include "mbspar/mbs_cfs.h"
#include "mbs_test.h"
#ifdef _OPENMP
#include <omp.h>
#endif

// the constraint-force rows of the table that run on a serial whole model (every one but the
// baselines and the engine-only ones); methods[] is filled in main
static int pick_serial_cfs(const mbsSolverType *t) {
  return !t->baseline && !t->engine_only;
}
// the rows that read solver.check_every
static int pick_check_every(const mbsSolverType *t) {
  return t->check_every;
}
static int methods[MBS_SOLVER_COUNT], nmethods;

static double worst[MBS_SOLVER_COUNT];
static int jacobi_tree_conv, jacobi_tree_div;

static void check_model(mbsModel *m, const char *what, int is_chain) {
  mbsState *s;
  mbsWork *w;
  mbsCfs *c;
  MBS_EXPECT_OK(mbs_stateCreate(m, &s));
  MBS_EXPECT_OK(mbs_workCreate(m, &w));
  MBS_EXPECT_OK(mbs_cfsCreate(m, 0, m->nbody, &c));
  m->opt.solver = MBS_SOLVER_ABA;
  MBS_EXPECT_OK(mbs_forward(m, s, w));
  double *qdd = malloc(sizeof(double) * (size_t)(m->nv + 1));
  double *lam = malloc(sizeof(double) * (size_t)(m->nlam + 1));
  memcpy(qdd, w->qdd, sizeof(double) * (size_t)m->nv);
  mbs_constraintLambda(m, w);
  memcpy(lam, w->lam, sizeof(double) * (size_t)m->nlam);
  for (int k = 0; k < nmethods; k++) {
    int meth = methods[k];
    m->opt.solver = meth;
    m->opt.tol = 1e-12;
    m->opt.max_iter = 200000;
    m->opt.warm_start = MBS_WARM_NONE;
    m->opt.omega = 1.3;
    mbs_stateReset(m, s);
    MBS_EXPECT_OK(mbs_cfsForward(m, s, w, c));
    if (meth == MBS_SOLVER_JACOBI && !is_chain) {
      // block Jacobi need not converge on trees (sibling couplings break the 2-cyclic
      // structure): it must then say so, never return a wrong answer as converged
      if (w->stat.reason > 0)
        jacobi_tree_conv++;
      else {
        jacobi_tree_div++;
        MBS_EXPECT(w->stat.reason == MBS_REASON_DIVERGED_DTOL, "%s jacobi: reason %d", what,
                   w->stat.reason);
        continue;
      }
    }
    double dq = mbs_test_relDiff(w->qdd, qdd, m->nv, 1e-300);
    double dl = mbs_test_relDiff(w->lam, lam, m->nlam, 1e-300);
    if (dq > worst[meth]) worst[meth] = dq;
    MBS_EXPECT(w->stat.reason > 0, "%s %s: not converged (reason %d, it %d)", what,
               mbs_solverName(meth), w->stat.reason, w->stat.iterations);
    MBS_EXPECT(dq <= 1e-8, "%s %s: qdd rel diff to ABA %.3e (it %d)", what, mbs_solverName(meth),
               dq, w->stat.iterations);
    MBS_EXPECT(dl <= 1e-8, "%s %s: lambda rel diff to ABA %.3e", what, mbs_solverName(meth), dl);
  }
  free(qdd);
  free(lam);
  mbs_cfsDestroy(&c);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
}

// x.(A y) == y.(A x) and x.(A x) > 0; explicit blocks reproduce A x
static void check_operator(mbsModel *m, unsigned long long seed) {
  mbsState *s;
  mbsWork *w;
  mbsCfs *c;
  MBS_EXPECT_OK(mbs_stateCreate(m, &s));
  MBS_EXPECT_OK(mbs_workCreate(m, &w));
  MBS_EXPECT_OK(mbs_cfsCreate(m, 0, m->nbody, &c));
  mbs_fwdPosition(m, s, w);
  mbs_fwdVelocity(m, s, w);
  MBS_EXPECT_OK(mbs_cfsPosition(m, w, c));
  int n = m->nlam;
  double *x = calloc((size_t)n + 1, sizeof(double)), *y = calloc((size_t)n + 1, sizeof(double));
  double *Ax = calloc((size_t)n + 1, sizeof(double)), *Ay = calloc((size_t)n + 1, sizeof(double));
  unsigned long long st = seed;
  for (int i = 0; i < n; i++)
    x[i] = mbs_test_uniform(&st, -1, 1), y[i] = mbs_test_uniform(&st, -1, 1);
  MBS_EXPECT_OK(mbs_cfsApply(m, w, c, NULL, x, 0, Ax));
  MBS_EXPECT_OK(mbs_cfsApply(m, w, c, NULL, y, 0, Ay));
  double xAy = 0, yAx = 0, xAx = 0, sc = 0;
  for (int i = 0; i < n; i++) xAy += x[i] * Ay[i], yAx += y[i] * Ax[i], xAx += x[i] * Ax[i];
  for (int i = 0; i < n; i++) sc += fabs(x[i] * Ay[i]);
  MBS_EXPECT(fabs(xAy - yAx) <= 1e-12 * sc, "symmetry: x.Ay=%.17g y.Ax=%.17g", xAy, yAx);
  MBS_EXPECT(xAx > 0, "positivity: x.Ax = %g", xAx);
  // gs and sor's partial application (mbs_cfsApplyColour): after x changes on the rows of one
  // colour, the rows of the next colour equal a full application's to the bit
  {
    int *color = malloc(sizeof(int) * (size_t)m->nbody), nc = mbs_cfsColour(m, color), nrow = 0;
    double *Ap = calloc((size_t)n + 1, sizeof(double));
    MBS_EXPECT_OK(mbs_cfsApply(m, w, c, NULL, x, 0, Ax));
    for (int pc = 0; pc < 2 * nc; pc++) {
      int col = (pc + 1) % nc;
      for (int b = 0; b < m->nbody; b++)
        for (int i = 0; i < m->body_lamnum[b] && color[b] == pc % nc; i++)
          x[m->body_lamadr[b] + i] = mbs_test_uniform(&st, -1, 1);
      MBS_EXPECT_OK(mbs_cfsApplyColour(m, w, c, NULL, x, color, nc, pc % nc, col, Ap));
      MBS_EXPECT_OK(mbs_cfsApply(m, w, c, NULL, x, 0, Ax));
      for (int b = 0; b < m->nbody; b++)
        for (int i = 0, la = m->body_lamadr[b]; i < m->body_lamnum[b] && color[b] == col; i++) {
          nrow++;
          MBS_EXPECT(Ap[la + i] == Ax[la + i],
                     "partial application, colour %d after %d, row %d: "
                     "%.17g, full %.17g",
                     col, pc % nc, la + i, Ap[la + i], Ax[la + i]);
        }
    }
    MBS_EXPECT(nrow > 0 || n == 0, "partial application: no row compared");
    free(color), free(Ap);
  }
  // explicit block rows (as assembled for PETSc) reproduce the matrix-free operator
  {
    int *cols = malloc(sizeof(int) * (size_t)(n + 1));
    double *vals = malloc(sizeof(double) * 6 * (size_t)(n + 1)), err = 0, scale = 0;
    for (int b = 0; b < m->nbody; b++) {
      int nc, nl = m->body_lamnum[b], la = m->body_lamadr[b];
      mbs_cfsRow(m, s, w, c, b, cols, vals, &nc);
      MBS_EXPECT(nc == mbs_cfsRowLength(m, b), "row length %d vs %d", nc, mbs_cfsRowLength(m, b));
      for (int i = 0; i < nl; i++) {
        double v = 0;
        for (int j = 0; j < nc; j++) v += vals[(size_t)nc * i + j] * x[cols[j]];
        err = fmax(err, fabs(v - Ax[la + i]));
        scale = fmax(scale, fabs(Ax[la + i]));
      }
    }
    MBS_EXPECT(err <= 1e-12 * (1 + scale), "explicit rows vs operator: %.3e", err);
    free(cols), free(vals);
  }
  free(x), free(y), free(Ax), free(Ay);
  mbs_cfsDestroy(&c);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
}

static void check_warmstart(void) {
  // cubic extrapolation is exact for a cubic in time with non-uniform spacing
  mbsModel *m;
  const int rev[] = {MBS_JNT_REVOLUTE};
  MBS_EXPECT_OK(mbs_test_randomModel(2, rev, 1, 1, 7, &m));
  mbsState *s;
  MBS_EXPECT_OK(mbs_stateCreate(m, &s));
  double ts[4] = {0.0, 0.1, 0.25, 0.3}, x[10], g[10];
  for (int k = 0; k < 4; k++) {
    double t = ts[k];
    for (int i = 0; i < m->nlam; i++) x[i] = 1 + i * t - 2 * t * t + (i + 1) * t * t * t;
    mbs_cfsPushHistory(m, s, t, 0, m->nlam, x);
  }
  double t = 0.37;
  mbs_cfsWarmStart(m, s, MBS_WARM_CUBIC, t, 0, m->nlam, g);
  for (int i = 0; i < m->nlam; i++)
    MBS_EXPECT_NEAR(g[i], 1 + i * t - 2 * t * t + (i + 1) * t * t * t, 1e-12);
  mbs_cfsWarmStart(m, s, MBS_WARM_PREVIOUS, t, 0, m->nlam, g);
  MBS_EXPECT_NEAR(g[0], 1 - 2 * 0.09 + 0.027, 1e-12);
  // same-time push replaces the newest entry
  mbs_cfsPushHistory(m, s, 0.3, 0, m->nlam, x);
  MBS_EXPECT(s->nhist[0] == 4, "history length %d", s->nhist[0]);
  // a rejected adaptive step: a later solution at an earlier node's time, not the newest one
  // (nodes 0.3, 0.4, 0.3 from the newest back): cubic and quadratic through them do not exist,
  // the guess drops to the linear one through 0.3 and 0.4 (finite; NaN before 2026-11-26)
  mbs_stateReset(m, s);
  double tr[4] = {0.25, 0.3, 0.4, 0.3};
  for (int k = 0; k < 4; k++) {
    for (int i = 0; i < m->nlam; i++) x[i] = 1 + i * tr[k];
    mbs_cfsPushHistory(m, s, tr[k], 0, m->nlam, x);
  }
  mbs_cfsWarmStart(m, s, MBS_WARM_CUBIC, 0.35, 0, m->nlam, g);
  for (int i = 0; i < m->nlam; i++) MBS_EXPECT_NEAR(g[i], 1 + i * 0.35, 1e-12);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&m);
}

// solver.check_every = K: the sweeps between the tests are the same sweeps, so the iterates equal
// those of K = 1 to the bit; a converged run stops on a tested sweep (jacobi, gs, sor: a multiple
// of K) and returns the iterate that test judged
static void check_checkevery(void) {
  mbsModel *m;
  const int rev[] = {MBS_JNT_REVOLUTE, MBS_JNT_UNIVERSAL};
  MBS_EXPECT_OK(mbs_test_randomModel(20, rev, 2, 1, 3, &m));
  if (!m) return;
  mbsState *s;
  mbsWork *w;
  mbsCfs *c;
  MBS_EXPECT_OK(mbs_stateCreate(m, &s));
  MBS_EXPECT_OK(mbs_workCreate(m, &w));
  MBS_EXPECT_OK(mbs_cfsCreate(m, 0, m->nbody, &c));
  double *lam = malloc(sizeof(double) * (size_t)(m->nlam + 1));
  int meths[MBS_SOLVER_COUNT];
  int nmeths = mbs_test_solvers(pick_check_every, meths, MBS_SOLVER_COUNT);
  MBS_EXPECT(nmeths >= 4, "only %d solver rows read check_every", nmeths);
  for (int k = 0; k < nmeths; k++) {
    const char *nm = mbs_solverName(meths[k]);
    m->opt.solver = meths[k];
    m->opt.warm_start = MBS_WARM_NONE;
    m->opt.omega = 1.3;
    // 1. a fixed number of sweeps (tol 0): K = 1 and K = 7 give the same iterate and residual
    double res1 = 0;
    for (int K = 1; K <= 7; K += 6) {
      m->opt.check_every = K, m->opt.tol = 0, m->opt.max_iter = 50;
      mbs_stateReset(m, s);
      MBS_EXPECT_OK(mbs_cfsForward(m, s, w, c));
      if (K == 1) {
        memcpy(lam, w->lam, sizeof(double) * (size_t)m->nlam);
        res1 = w->stat.residual;
      } else {
        MBS_EXPECT(memcmp(lam, w->lam, sizeof(double) * (size_t)m->nlam) == 0,
                   "%s, check_every 7: the iterate after 50 iterations differs from K = 1's", nm);
        MBS_EXPECT(w->stat.residual == res1, "%s, check_every 7: residual %.17e, K = 1 %.17e", nm,
                   w->stat.residual, res1);
      }
    }
    // 2. to convergence with K = 5, then K = 1 stopped by max_iter after as many updates
    m->opt.check_every = 5, m->opt.tol = 1e-10, m->opt.max_iter = 100000;
    mbs_stateReset(m, s);
    MBS_EXPECT_OK(mbs_cfsForward(m, s, w, c));
    int it5 = w->stat.iterations;
    MBS_EXPECT(w->stat.reason > 0 && w->stat.residual <= 1e-10,
               "%s, check_every 5: not converged (reason %d, %d iterations, residual %.3e)", nm,
               w->stat.reason, it5, w->stat.residual);
    if (mbs_solverCaps(meths[k])->segments) continue; // its count includes the estimate's steps
    MBS_EXPECT(it5 % 5 == 0, "%s, check_every 5: stopped after %d sweeps", nm, it5);
    memcpy(lam, w->lam, sizeof(double) * (size_t)m->nlam);
    m->opt.check_every = 1, m->opt.tol = 0, m->opt.max_iter = it5 - 1; // it5 updates
    mbs_stateReset(m, s);
    MBS_EXPECT_OK(mbs_cfsForward(m, s, w, c));
    MBS_EXPECT(memcmp(lam, w->lam, sizeof(double) * (size_t)m->nlam) == 0,
               "%s, check_every 5: the converged iterate differs from %d plain sweeps'", nm, it5);
    printf("check_every 5, %-9s: converged after %d sweeps, the same iterate as K = 1\n", nm, it5);
  }
  m->opt.check_every = 1;
  free(lam);
  mbs_cfsDestroy(&c);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&m);
}

int main(void) {
  const int chain_types[][3] = {{MBS_JNT_REVOLUTE, MBS_JNT_REVOLUTE, MBS_JNT_REVOLUTE},
                                {MBS_JNT_UNIVERSAL, MBS_JNT_UNIVERSAL, MBS_JNT_UNIVERSAL},
                                {MBS_JNT_REVOLUTE, MBS_JNT_SPHERICAL, MBS_JNT_PRISMATIC}};
  const char *names[] = {"revolute chain", "universal chain", "mixed chain"};
  char what[64];
  nmethods = mbs_test_solvers(pick_serial_cfs, methods, MBS_SOLVER_COUNT);
  MBS_EXPECT(nmethods >= 6, "only %d serial constraint-force rows in the solver table", nmethods);
  for (int k = 0; k < 3; k++)
    for (unsigned long long seed = 1; seed <= 4; seed++) {
      mbsModel *m;
      MBS_EXPECT_OK(mbs_test_randomModel(8 + 6 * (int)seed, chain_types[k], 3, 1, seed, &m));
      snprintf(what, sizeof what, "%s #%llu", names[k], seed);
      check_model(m, what, 1);
      check_operator(m, seed);
      mbs_modelDestroy(&m);
    }
  for (unsigned long long seed = 1; seed <= 40; seed++) {
    mbsModel *m;
    MBS_EXPECT_OK(
        mbs_test_randomModel(2 + (int)(seed % 25), mbs_test_alltypes, 7, 0, 500 + seed, &m));
    snprintf(what, sizeof what, "random tree #%llu", seed);
    check_model(m, what, 0);
    check_operator(m, seed);
    mbs_modelDestroy(&m);
  }
  check_warmstart();
  check_checkevery();
  // a chain long enough for the OpenMP loops (threads on), J-CG against ABA
  {
#ifdef _OPENMP
    omp_set_num_threads(2);
#endif
    mbsModel *m;
    mbsState *s;
    mbsWork *w;
    mbsCfs *c;
    const int rev[] = {MBS_JNT_REVOLUTE, MBS_JNT_UNIVERSAL};
    MBS_EXPECT_OK(mbs_test_randomModel(700, rev, 2, 1, 77, &m));
    MBS_EXPECT_OK(mbs_stateCreate(m, &s));
    MBS_EXPECT_OK(mbs_workCreate(m, &w));
    MBS_EXPECT_OK(mbs_cfsCreate(m, 0, m->nbody, &c));
    m->opt.solver = MBS_SOLVER_ABA;
    MBS_EXPECT_OK(mbs_forward(m, s, w));
    double *qdd = malloc(sizeof(double) * (size_t)m->nv);
    memcpy(qdd, w->qdd, sizeof(double) * (size_t)m->nv);
    m->opt.solver = MBS_SOLVER_JCG;
    m->opt.tol = 1e-13;
    m->opt.warm_start = MBS_WARM_NONE;
    MBS_EXPECT_OK(mbs_cfsForward(m, s, w, c));
    double dq = mbs_test_relDiff(w->qdd, qdd, m->nv, 1e-300);
    printf("700-body chain, J-CG with OpenMP threads: qdd rel diff to ABA %.3e (%d iterations)\n",
           dq, w->stat.iterations);
    MBS_EXPECT(dq <= 1e-8, "OpenMP J-CG qdd rel diff %.3e", dq);
    free(qdd);
    mbs_cfsDestroy(&c);
    mbs_workDestroy(&w);
    mbs_stateDestroy(&s);
    mbs_modelDestroy(&m);
  }
  for (int k = 0; k < nmethods; k++)
    printf("worst qdd rel diff to ABA, %-9s %.3e\n", mbs_solverName(methods[k]), worst[methods[k]]);
  printf("relaxed block Jacobi converged on %d random trees\n", jacobi_tree_conv);
  (void)jacobi_tree_div;
  return mbs_test_finish("test_cfs");
}
