/// \file test_cpa.c
/// The critical-path analyser against the real kernels. Linked to mbs_core_flops (the core built
/// with MBS_COUNT_FLOPS), so every evaluation counts its flops: the graph's T1 must equal the
/// counted flops exactly for ABA, CRBA and J-CG on chains and random trees, at every grain and for
/// distributed J-CG graphs. Also: ABA's T∞ grows linearly along a chain, a J-CG iteration's T∞
/// sub-linearly (log-depth reductions), and list schedules respect the Graham/Brent bounds.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "mbs_test.h"
#include "mbspar/mbs_cfs.h"
#include "mbspar/mbs_critpath.h"
#include "flops.h"

// one real evaluation with the counter on; returns the counted flops and fills the options the
// graph needs (iterations, convergence)
// the tolerance of the runs to convergence (jcg at 1e-14 below: its restarts from the true
// residual, and stagnation where the true residual cannot meet it)
static double mbs_conv_tol = 1e-10;
static int mbs_cg_maxrestart = 0; // most restarts of a jcg solve checked
// chebyshev solves checked whose estimate CG's stop was confirmed (econf 1) or missed (2), whose
// sweeps replaced r by b - A x, and that stagnated
static int mbs_cheb_econf[3] = {0, 0, 0}, mbs_cheb_repl = 0, mbs_cheb_stag = 0;

static unsigned long long mbs_countEval(mbsModel *m, int method, int iters, int conv_run,
                                        mbsCpaOptions *o) {
  mbsState *s = NULL;
  mbsWork *w = NULL;
  mbsCfs *c = NULL;
  unsigned long long cnt = 0;
  MBS_EXPECT_OK(mbs_stateCreate(m, &s));
  MBS_EXPECT_OK(mbs_workCreate(m, &w));
  if (!s || !w) goto done;
  m->opt.solver = method;
  mbs_cpaDefaults(o);
  o->method = method;
  o->criterion = m->opt.criterion;
  o->check_every = m->opt.check_every;
  o->has_tau = s->tau != NULL;
  if (method == MBS_SOLVER_DIRECT) {
    MBS_EXPECT_OK(mbs_cfsCreate(m, 0, m->nbody, &c));
    if (!c) goto done;
    mbs_flop_count = 0;
    MBS_EXPECT_OK(mbs_cfsForward(m, s, w, c));
    cnt = mbs_flop_count;
  } else if (mbs_cpaIterative(method)) { // Chebyshev: solver.rho as the caller set it
    m->opt.warm_start = MBS_WARM_NONE;
    m->opt.tol = conv_run ? mbs_conv_tol : 0; // tol 0: exactly iters iterations
    m->opt.max_iter = conv_run ? 10000 : iters;
    MBS_EXPECT_OK(mbs_cfsCreate(m, 0, m->nbody, &c));
    if (!c) goto done;
    mbs_flop_count = 0;
    MBS_EXPECT_OK(mbs_cfsForward(m, s, w, c));
    cnt = mbs_flop_count;
    o->iterations = w->stat.iterations;
    o->converged = mbs_cpaConvergedOf(w->stat.reason);
    static mbsCgTrace cg; // jcg's restarts from the true residual
    cg = c->cg;
    o->cg = (method == MBS_SOLVER_JCG || method == MBS_SOLVER_CHEBYSHEV) && cg.n > 0 ? &cg : NULL;
    o->spec_iterations = c->spec_it;
    o->spec_converged = c->spec_conv;
    static mbsChebTrace cheb; // Chebyshev's segments (estimates, sweeps, stall watches)
    cheb = c->cheb;
    o->cheb = method == MBS_SOLVER_CHEBYSHEV && cheb.nseg > 0 ? &cheb : NULL;
    if (!conv_run)
      MBS_EXPECT(w->stat.reason == MBS_REASON_DIVERGED_MAXIT && w->stat.iterations == iters,
                 "%s ran %d iterations, reason %d", mbs_solverName(method), w->stat.iterations,
                 w->stat.reason);
    else
      MBS_EXPECT(o->converged == 1 || (o->converged == 2 && mbs_conv_tol < 1e-12),
                 "%s did not converge (%d iterations, reason %d)", mbs_solverName(method),
                 w->stat.iterations, w->stat.reason);
  } else {
    if (method == MBS_SOLVER_CRBA) MBS_EXPECT_OK(mbs_workEnableCrba(m, w));
    mbs_flop_count = 0;
    MBS_EXPECT_OK(mbs_forward(m, s, w));
    cnt = mbs_flop_count;
  }
done:
  mbs_cfsDestroy(&c);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  return cnt;
}

static double mbs_span(const mbsModel *m, const mbsCpaOptions *o, long long *work) {
  mbsCpaGraph *g = NULL;
  mbsCpaResult r;
  double span = -1;
  MBS_EXPECT_OK(mbs_cpaBuild(m, o, &g));
  if (!g) return -1;
  MBS_EXPECT_OK(mbs_cpaAnalyse(g, &r));
  span = r.span;
  if (work) *work = r.work_flops;
  mbs_cpaResultFree(&r);
  mbs_cpaDestroy(&g);
  return span;
}

// T1 of the graph == counted flops, at every grain (and distributed J-CG on 1..3 ranks)
static int mbs_cheb_maxseg = 0; // most segments of a Chebyshev solve checked

static void mbs_checkEquality(mbsModel *m, const char *what, int method, int iters, int conv_run) {
  mbsCpaOptions o;
  unsigned long long cnt = mbs_countEval(m, method, iters, conv_run, &o);
  MBS_EXPECT(cnt > 0, "%s: the instrumented build counted no flops", what);
  for (int grain = 0; grain < 4; grain++) { // op, block, body, flop
    // not the flop grain (one node per flop) of the long solves to convergence (jacobi and gs on
    // the chains of 12: 4-19 Mflop): their sweeps have the graphs of the short runs checked at
    // the flop grain, and the stops are grain-independent
    if (grain == 3 && cnt > 2000000ULL) continue;
    o.grain = grain;
    int iterative = mbs_cpaIterative(method);
    int maxr = iterative ? (m->nbody < 3 ? m->nbody : 3) : 0;
    for (int R = 0; R <= maxr; R++) {
      o.ranks = R;
      long long t1 = -1;
      double span = mbs_span(m, &o, &t1);
      MBS_EXPECT(t1 == (long long)cnt,
                 "%s %s grain %s ranks %d (it %d%s): graph T1 %lld != counted %llu flops", what,
                 mbs_solverName(method), mbs_cpaGrainName(grain), R, o.iterations,
                 o.converged ? ", converged" : "", t1, cnt);
      MBS_EXPECT(span > 0, "%s: span %g", what, span);
    }
  }
  printf("  %-28s %-9s it %4d%s (estimate %2d%s): T1 = %llu flops (counted) = graph\n", what,
         mbs_solverName(method), mbs_cpaIterative(method) ? o.iterations : 0,
         o.converged ? " conv" : "     ", o.spec_iterations, o.spec_converged ? " conv" : "", cnt);
  if (o.cheb && o.cheb->nseg > 1)
    printf("  %-28s %-9s (%d segments: the interval re-estimated after stalls)\n", "", "",
           o.cheb->nseg);
  if (o.cheb && o.cheb->nseg > mbs_cheb_maxseg) mbs_cheb_maxseg = o.cheb->nseg;
  if (o.cg) {
    printf("  %-28s %-9s (%d restart(s) from the true residual%s)\n", "", "", o.cg->n,
           o.converged == 2 ? ", stagnated" : "");
    if (method == MBS_SOLVER_JCG && o.cg->n > mbs_cg_maxrestart) mbs_cg_maxrestart = o.cg->n;
    if (method == MBS_SOLVER_CHEBYSHEV) mbs_cheb_repl++;
  }
  if (method == MBS_SOLVER_CHEBYSHEV) {
    for (int j = 0; o.cheb && j < o.cheb->nseg; j++) mbs_cheb_econf[o.cheb->econf[j]]++;
    if (o.converged == 2) mbs_cheb_stag++;
  }
}

int main(void) {
  static const int rev[] = {MBS_JNT_REVOLUTE};
  static const int mixed[] = {MBS_JNT_REVOLUTE, MBS_JNT_PRISMATIC, MBS_JNT_UNIVERSAL,
                              MBS_JNT_SPHERICAL, MBS_JNT_CYLINDRICAL};
  mbsModel *m = NULL;

  // 1. flop-count equality on chains and trees
  // (coord: share of joint axes along +-e_k, which run the axis-specialised kernels)
  struct {
    int n;
    const int *types;
    int nt, chain;
    unsigned long long seed;
    double coord;
    const char *name;
  } cases[] = {{3, rev, 1, 1, 5, 0, "revolute chain 3"},
               {6, mixed, 5, 0, 6, 0, "random tree 6"},
               {12, rev, 1, 1, 1, 0, "revolute chain 12"},
               {40, mixed, 5, 1, 2, 0, "mixed chain 40"},
               {30, mbs_test_alltypes, 7, 0, 3, 0, "random tree 30 (all joints)"},
               {64, mixed, 5, 0, 4, 0, "random tree 64"},
               {12, rev, 1, 1, 8, 1, "revolute chain 12, axes e_k"},
               {30, mbs_test_alltypes, 7, 0, 9, 0.5, "random tree 30, half e_k"},
               {20, mixed, 5, 1, 10, 0.5, "mixed chain 20, half e_k"}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    MBS_EXPECT_OK(mbs_test_randomModelEx(cases[k].n, cases[k].types, cases[k].nt, cases[k].chain,
                                         cases[k].seed, cases[k].coord, &m));
    if (!m) continue;
    mbs_checkEquality(m, cases[k].name, MBS_SOLVER_ABA, 0, 0);
    mbs_checkEquality(m, cases[k].name, MBS_SOLVER_CRBA, 0, 0);
    mbs_checkEquality(m, cases[k].name, MBS_SOLVER_DIRECT, 0, 0);
    mbs_checkEquality(m, cases[k].name, MBS_SOLVER_JCG, 5, 0);
    mbs_checkEquality(m, cases[k].name, MBS_SOLVER_JCG, 0, 1); // to convergence
    mbs_conv_tol = 1e-14; // near the rounding floor: restarts from b - A x
    mbs_checkEquality(m, cases[k].name, MBS_SOLVER_JCG, 0, 1);
    mbs_conv_tol = 1e-10;
    m->opt.criterion = MBS_CRIT_CHANGE;
    mbs_checkEquality(m, cases[k].name, MBS_SOLVER_JCG, 4, 0);
    m->opt.criterion = MBS_CRIT_RESIDUAL;
    // the stationary solvers and Chebyshev (with solver.rho, and with the Lanczos estimate that
    // Jacobi also runs on branched trees)
    mbs_checkEquality(m, cases[k].name, MBS_SOLVER_JACOBI, 6, 0);
    mbs_checkEquality(m, cases[k].name, MBS_SOLVER_GS, 5, 0);
    mbs_checkEquality(m, cases[k].name, MBS_SOLVER_SOR, 5, 0);
    m->opt.criterion = MBS_CRIT_CHANGE;
    mbs_checkEquality(m, cases[k].name, MBS_SOLVER_SOR, 3, 0);
    m->opt.criterion = MBS_CRIT_RESIDUAL;
    m->opt.rho = 0.995;
    mbs_checkEquality(m, cases[k].name, MBS_SOLVER_CHEBYSHEV, 6, 0);
    m->opt.rho = 0;
    mbs_checkEquality(m, cases[k].name, MBS_SOLVER_CHEBYSHEV, 36, 0); // 30 CG + 6 Chebyshev
    // solver.check_every = 3: the norms, reduction and test on every third iteration and the
    // last (7 and 40: not multiples of 3)
    m->opt.check_every = 3;
    mbs_checkEquality(m, cases[k].name, MBS_SOLVER_JACOBI, 7, 0);
    mbs_checkEquality(m, cases[k].name, MBS_SOLVER_GS, 7, 0);
    mbs_checkEquality(m, cases[k].name, MBS_SOLVER_SOR, 7, 0);
    m->opt.rho = 0.995;
    mbs_checkEquality(m, cases[k].name, MBS_SOLVER_CHEBYSHEV, 7, 0);
    m->opt.rho = 0;
    mbs_checkEquality(m, cases[k].name, MBS_SOLVER_CHEBYSHEV, 40, 0);
    m->opt.check_every = 1;
    if (cases[k].n <= 12) {
      // jacobi and gs to convergence (thousands of sweeps) only where the axes are general: with
      // axes along e_k they took 16 of this test's 43 s, and their sweeps' graphs (the
      // axis-specialised kernels) are checked by the short runs above; the stopping logic does
      // not depend on the kernels
      int sweeps = cases[k].coord == 0;
      m->opt.check_every = 4; // to convergence: the stop falls on a tested sweep
      if (sweeps) mbs_checkEquality(m, cases[k].name, MBS_SOLVER_JACOBI, 0, 1);
      if (sweeps) mbs_checkEquality(m, cases[k].name, MBS_SOLVER_GS, 0, 1);
      mbs_checkEquality(m, cases[k].name, MBS_SOLVER_CHEBYSHEV, 0, 1);
      m->opt.check_every = 1;
      if (sweeps) mbs_checkEquality(m, cases[k].name, MBS_SOLVER_JACOBI, 0, 1);
      if (sweeps) mbs_checkEquality(m, cases[k].name, MBS_SOLVER_GS, 0, 1);
      mbs_checkEquality(m, cases[k].name, MBS_SOLVER_SOR, 0, 1);
      mbs_checkEquality(m, cases[k].name, MBS_SOLVER_CHEBYSHEV, 0, 1);
      mbs_conv_tol = 1e-14; // b - A x confirms the stops of the estimate CG and of the sweeps
      mbs_checkEquality(m, cases[k].name, MBS_SOLVER_CHEBYSHEV, 0, 1);
      mbs_conv_tol = 1e-10;
      if (cases[k].chain) { // 1 -+ rho contains the spectrum of a chain's D^-1 A, not a tree's
        m->opt.rho = 0.995;
        mbs_checkEquality(m, cases[k].name, MBS_SOLVER_CHEBYSHEV, 0, 1);
        m->opt.rho = 0;
      }
    }
    mbs_modelDestroy(&m);
  }

  // Chebyshev's stall watch re-estimated the interval in some of the solves to convergence
  // above (the revolute chains of 12: Lanczos's first lmin missed the bottom of the spectrum),
  // and those graphs, which follow the segments of the solve, matched the count too
  MBS_EXPECT(mbs_cheb_maxseg > 1,
             "no Chebyshev solve re-estimated its interval (at most %d "
             "segment); the segment graphs went untested",
             mbs_cheb_maxseg);

  // jcg at tol 1e-14: some solves' recursive residual met the tolerance before b - A x did, and
  // the graphs of their restarts matched the count
  printf("  chebyshev: estimate stops confirmed %d, missed %d; solves with replacements %d, "
         "stagnated %d\n",
         mbs_cheb_econf[1], mbs_cheb_econf[2], mbs_cheb_repl, mbs_cheb_stag);
  MBS_EXPECT(mbs_cg_maxrestart > 0, "no jcg solve restarted from its true residual; the restart "
                                    "graphs went untested");

  // 2. T∞ along a serial revolute chain: linear for ABA, sub-linear per J-CG iteration
  double prev_aba = 0, prev_it = 0;
  printf("  %6s %14s %10s %18s %10s\n", "N", "T_inf ABA [s]", "ratio", "T_inf/iter JCG [s]",
         "ratio");
  for (int n = 16; n <= 1024; n *= 2) {
    MBS_EXPECT_OK(mbs_test_randomModel(n, rev, 1, 1, 7, &m));
    if (!m) continue;
    mbsCpaOptions o;
    mbs_cpaDefaults(&o);
    o.method = MBS_SOLVER_ABA;
    double aba = mbs_span(m, &o, NULL);
    o.method = MBS_SOLVER_JCG;
    // per iteration: the growth of T_inf between K = 100 and 140 iterations (enough iterations
    // for the solve to outgrow the serial pose and velocity chains of the kinematics)
    o.iterations = 100;
    double s1 = mbs_span(m, &o, NULL);
    o.iterations = 140;
    double it = (mbs_span(m, &o, NULL) - s1) / 40;
    printf("  %6d %14.4e %10.3f %18.4e %10.3f\n", n, aba, prev_aba > 0 ? aba / prev_aba : 0, it,
           prev_it > 0 ? it / prev_it : 0);
    if (prev_aba > 0) {
      MBS_EXPECT(aba / prev_aba > 1.9 && aba / prev_aba < 2.1, "ABA T_inf(%d)/T_inf(%d) = %g", n,
                 n / 2, aba / prev_aba);
      MBS_EXPECT(it / prev_it <= 1.3, "J-CG T_inf per iteration (%d)/(%d) = %g", n, n / 2,
                 it / prev_it);
    }
    MBS_EXPECT(it > 0, "J-CG iteration span %g", it);
    prev_aba = aba, prev_it = it;
    mbs_modelDestroy(&m);
  }

  // 3. list schedules: P = 1 gives T1; max(T1/P, T_inf) <= T_P <= T1/P + T_inf
  MBS_EXPECT_OK(mbs_test_randomModel(60, mixed, 5, 0, 11, &m));
  for (int method = 0; m && method < 3; method++) {
    static const int meth[] = {MBS_SOLVER_ABA, MBS_SOLVER_CRBA, MBS_SOLVER_JCG};
    mbsCpaOptions o;
    mbs_cpaDefaults(&o);
    o.method = meth[method];
    o.iterations = 4;
    mbsCpaGraph *g = NULL;
    mbsCpaResult r;
    MBS_EXPECT_OK(mbs_cpaBuild(m, &o, &g));
    if (!g) continue;
    MBS_EXPECT_OK(mbs_cpaAnalyse(g, &r));
    for (int P = 1; P <= 256; P *= 4) {
      double tp = 0;
      MBS_EXPECT_OK(mbs_cpaSchedule(g, P, &tp));
      double lo = fmax(r.work / P, r.span), hi = r.work / P + r.span;
      MBS_EXPECT(tp >= lo * (1 - 1e-12) && tp <= hi * (1 + 1e-12),
                 "%s P=%d: T_P %g outside [%g, %g]", mbs_solverName(o.method), P, tp, lo, hi);
      if (P == 1) MBS_EXPECT_NEAR(tp, r.work, 1e-9 * r.work);
    }
    // the critical path is a path: consecutive nodes are connected
    for (int i = 1; i < r.path_nodes; i++) {
      int u = r.path[i - 1], v = r.path[i], found = 0;
      for (int k = g->pred_adr[v]; k < g->pred_adr[v + 1]; k++) found |= g->pred[k] == u;
      MBS_EXPECT(found, "critical path step %d -> %d is not an edge", u, v);
    }
    mbs_cpaResultFree(&r);
    mbs_cpaDestroy(&g);
  }
  // distributed J-CG: messages appear, P ranks scheduled on P processors
  if (m) {
    mbsCpaOptions o;
    mbs_cpaDefaults(&o);
    o.method = MBS_SOLVER_JCG;
    o.iterations = 3;
    o.ranks = 4;
    mbsCpaGraph *g = NULL;
    mbsCpaResult r;
    MBS_EXPECT_OK(mbs_cpaBuild(m, &o, &g));
    if (g) {
      MBS_EXPECT_OK(mbs_cpaAnalyse(g, &r));
      MBS_EXPECT(r.nmsg > 0, "no message nodes in a 4-rank graph");
      double tp = 0;
      MBS_EXPECT_OK(mbs_cpaSchedule(g, 4, &tp));
      MBS_EXPECT(tp >= r.span * (1 - 1e-12) && tp >= r.work / 4, "4-rank T_P %g", tp);
      MBS_EXPECT(mbs_cpaSchedule(g, 8, &tp) == MBS_ERR_INPUT, "8 procs for a 4-rank graph");
      mbs_cpaResultFree(&r);
      mbs_cpaDestroy(&g);
    }
    o.ranks = 0;
    o.method = MBS_SOLVER_PETSC;
    MBS_EXPECT(mbs_cpaBuild(m, &o, &g) == MBS_ERR_UNSUPPORTED, "PETSc graph");
    o.method = MBS_SOLVER_DIRECT;
    o.ranks = 2;
    MBS_EXPECT(mbs_cpaBuild(m, &o, &g) == MBS_ERR_UNSUPPORTED, "distributed direct-solver graph");
    o.ranks = 0;
    // --dot refuses big graphs
    o.method = MBS_SOLVER_ABA;
    MBS_EXPECT_OK(mbs_cpaBuild(m, &o, &g));
    if (g) {
      MBS_EXPECT_OK(mbs_cpaAnalyse(g, &r));
      MBS_EXPECT(mbs_cpaWriteDot(g, &r, "/dev/null", 10) == MBS_ERR_USAGE, "dot size limit");
      MBS_EXPECT_OK(mbs_cpaWriteDot(g, &r, "/dev/null", 100000));
      mbs_cpaResultFree(&r);
      mbs_cpaDestroy(&g);
    }
  }
  mbs_modelDestroy(&m);
  return mbs_test_finish("test_cpa");
}
