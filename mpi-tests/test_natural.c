/// \file test_natural.c
/// The natural-coordinate formulation of seed 004 (docs/natural.md), dense reference, against
/// ABA: q̈ on random chains and trees with every joint type (floating bases, joint springs,
/// dampers and forces), on random loop models with every cut-joint type and spring-dampers and on
/// the loop configs (ABA with the range-space loop solve: docs/loops.md), with the redundant
/// closure rows found (six-bar, Bricard); and the acceleration-level constraints G p̈ = γ and the
/// tree motion of p̈.
/// usage: test_natural CONFIGS_DIR
#include "mbs_test.h"
#include "mbs_test_loops.h"
#include "mbspar/mbs_natural.h"

static int ncompared = 0;     // models whose velocities satisfy the constraints (compared)
static double worst_tree = 0; // the O(n) solver against the dense reference

// q̈ of natural against aba (the loop baseline when the model has loops) on m at q0, qd0
static void compare(const char *what, mbsModel *m, int nredundant, int verbose, double *worst,
                    double *worst_res) {
  mbsState *s = NULL;
  mbsWork *w = NULL;
  MBS_EXPECT_OK(mbs_stateCreate(m, &s));
  MBS_EXPECT_OK(mbs_workCreate(m, &w));
  if (!s || !w) return;
  double *qdd_aba = calloc((size_t)m->nv + 1, sizeof(double));
  double *qdd_nat = calloc((size_t)m->nv + 1, sizeof(double));
  m->opt.solver = MBS_SOLVER_ABA;
  MBS_EXPECT_OK(mbs_forward(m, s, w));
  memcpy(qdd_aba, w->qdd, (size_t)m->nv * sizeof(double));
  mbsNaturalInfo info, info2;
  MBS_EXPECT_OK(mbs_naturalAccelDense(m, s, w, qdd_nat, &info));
  double d = mbs_test_relDiff(qdd_nat, qdd_aba, m->nv, 1e-300);
  // the O(n) solver against the dense reference (the same equations: to rounding)
  mbsNaturalWork *nw = NULL;
  double *qdd_tree = calloc((size_t)m->nv + 1, sizeof(double));
  MBS_EXPECT_OK(mbs_naturalWorkCreate(m, &nw));
  if (nw) MBS_EXPECT_OK(mbs_naturalAccel(m, s, w, nw, qdd_tree, &info2));
  double dt = mbs_test_relDiff(qdd_tree, qdd_nat, m->nv, 1e-300);
  if (info.vel_residual <= 1e-8 && dt > worst_tree) worst_tree = dt;
  // (where the velocities violate the constraints, the dependent rows' right sides are
  // inconsistent and which rows rounding drops decides q̈: compared only where they hold)
  MBS_EXPECT((info.vel_residual > 1e-8 || dt <= 1e-10) &&
                 (!nw || info2.nredundant == info.nredundant),
             "%s: O(n) vs dense qdd rel diff %.3e, redundant %d vs %d", what, dt,
             nw ? info2.nredundant : -1, info.nredundant);
  mbs_naturalWorkDestroy(&nw);
  free(qdd_tree);
  if (info.vel_residual <= 1e-8 && d > *worst) *worst = d;
  double r = info.acc_residual > info.qdd_residual ? info.acc_residual : info.qdd_residual;
  if (r > *worst_res) *worst_res = r;
  // two equivalent sets of constraint functions give the same accelerations only where the
  // velocities satisfy them (g'' = A g'' + 2 A' g' + ...): compare there
  int consistent = info.vel_residual <= 1e-8;
  if (consistent) ncompared++;
  MBS_EXPECT(!consistent || d <= 1e-9, "%s: natural vs aba qdd rel diff %.3e", what, d);
  MBS_EXPECT(info.acc_residual <= 1e-9 && info.qdd_residual <= 1e-9,
             "%s: residuals %.3e (G pdd = gamma), %.3e (tree motion)", what, info.acc_residual,
             info.qdd_residual);
  if (nredundant >= 0)
    MBS_EXPECT(info.nredundant == nredundant, "%s: %d redundant closure rows, expected %d", what,
               info.nredundant, nredundant);
  if (verbose)
    printf("  %-40s qdd rel diff %.2e, residuals %.1e %.1e, velocity %.1e, %d redundant\n", what, d,
           info.acc_residual, info.qdd_residual, info.vel_residual, info.nredundant);
  free(qdd_aba), free(qdd_nat);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
}

static void check_model(int nbody, int chain, unsigned long long seed, double *worst,
                        double *worst_res) {
  mbsModel *m = NULL;
  MBS_EXPECT_OK(mbs_test_randomModel(nbody, mbs_test_alltypes, 7, chain, seed, &m));
  if (!m) return;
  char what[64];
  snprintf(what, sizeof what, "seed %llu, %d bodies (%s)", seed, nbody, chain ? "chain" : "tree");
  compare(what, m, 0, 0, worst, worst_res);
  mbs_modelDestroy(&m);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_natural CONFIGS_DIR\n");
    return 2;
  }
  double worst = 0, worst_res = 0;
  int n = 0;
  for (unsigned long long seed = 1; seed <= 60; seed++, n++)
    check_model(1 + (int)(seed % 24), 0, seed, &worst, &worst_res);
  for (unsigned long long seed = 1; seed <= 10; seed++, n++)
    check_model(10 + 3 * (int)seed, 1, 500 + seed, &worst, &worst_res);
  printf("%d random trees and chains (every joint type): natural vs aba worst qdd rel diff "
         "%.3e, worst residual %.3e\n",
         n, worst, worst_res);
  double wl = 0, wlr = 0;
  for (int k = 0; k < 16; k++) { // random loop models (as test_loops)
    int nb = 4 + k % 9, nl = 1 + k % 4, nf = k % 3;
    mbsModel *m = mbs_test_randomLoopModel(nb, nl, nf, 1000 + k);
    if (!m) continue;
    char what[64];
    snprintf(what, sizeof what, "random %d: %d bodies %d loops %d springs", k, nb, nl, nf);
    compare(what, m, m->loop_asm.nredundant, 1, &wl, &wlr);
    mbs_modelDestroy(&m);
  }
  static const struct {
    const char *file;
    int nredundant;
  } cfgs[] = {{"fourbar.cfg", -1},
              {"slider_crank.cfg", -1},
              {"rssr.cfg", -1},
              {"sixbar.cfg", -1},
              {"bricard.cfg", -1}};
  for (size_t k = 0; k < sizeof cfgs / sizeof cfgs[0]; k++) {
    mbsModel *m = mbs_test_loadConfig(argv[1], cfgs[k].file, NULL, 0);
    if (!m) continue;
    compare(cfgs[k].file, m, m->nloop ? m->loop_asm.nredundant : 0, 1, &wl, &wlr);
    mbs_modelDestroy(&m);
  }
  printf("loop models and configs: worst qdd rel diff %.3e (%d with consistent velocities "
         "compared), worst residual %.3e\n",
         wl, ncompared, wlr);
  MBS_EXPECT(ncompared >= 88, "only %d of 91 models compared", ncompared);
  printf("the O(n) solver against the dense reference: worst qdd rel diff %.3e\n", worst_tree);
  // motion in natural coordinates: conservative loop mechanisms over 10 s, RK4 with projection
  static const struct {
    const char *file;
    double h, T;
  } runs[] = {{"fourbar.cfg", 1e-3, 10}, {"slider_crank.cfg", 5e-4, 5}};
  for (int k = 0; k < 2; k++) {
    mbsModel *m = mbs_test_loadConfig(argv[1], runs[k].file, NULL, 0);
    if (!m) continue;
    mbsState *s = NULL;
    mbsWork *w = NULL;
    mbsNaturalSim *ns = NULL;
    MBS_EXPECT_OK(mbs_stateCreate(m, &s));
    MBS_EXPECT_OK(mbs_workCreate(m, &w));
    MBS_EXPECT_OK(mbs_naturalSimCreate(m, s, w, &ns));
    if (ns) {
      double E0 = mbs_naturalSimEnergy(ns), h = runs[k].h, dE = 0, viol = 0,
             v0 = mbs_naturalSimViolation(ns);
      int nstep = (int)(runs[k].T / h + 0.5);
      for (int i = 0; i < nstep; i++) {
        MBS_EXPECT_OK(mbs_naturalSimStep(ns, h));
        mbs_naturalSimProject(ns, 1e-13, 5);
        viol = fmax(viol, mbs_naturalSimViolation(ns));
        dE = fmax(dE, fabs(mbs_naturalSimEnergy(ns) - E0));
      }
      double rel = dE / fmax(fabs(E0), 1e-300);
      printf("natural run %s: %g s, RK4 h = %g with projection: energy error %.2e relative "
             "(E0 = %.6g), max constraint violation %.2e (initial %.2e)\n",
             runs[k].file, runs[k].T, h, rel, E0, viol, v0);
      MBS_EXPECT(rel <= 1e-8 && viol <= 1e-10, "%s: natural run energy error %.3e, violation %.3e",
                 runs[k].file, rel, viol);
    }
    mbs_naturalSimDestroy(&ns);
    mbs_workDestroy(&w);
    mbs_stateDestroy(&s);
    mbs_modelDestroy(&m);
  }
  { // the adaptive core (docs/natural.md 7.1): Dormand–Prince 5(4) with a projection tolerance
    mbsModel *m = mbs_test_loadConfig(argv[1], "fourbar.cfg", NULL, 0);
    mbsState *s = NULL;
    mbsWork *w = NULL;
    mbsNaturalSim *ns = NULL;
    if (m) {
      MBS_EXPECT_OK(mbs_stateCreate(m, &s));
      MBS_EXPECT_OK(mbs_workCreate(m, &w));
      MBS_EXPECT_OK(mbs_naturalSimCreate(m, s, w, &ns));
    }
    if (ns) {
      double E0 = mbs_naturalSimEnergy(ns), dE = 0, viol = 0, tol = 1e-10, ptol = 1e-10;
      for (int i = 0; i < 30; i++) { // 3 s in pieces of 0.1 s (the step size carries over)
        mbsErr e = mbs_naturalSimAdvance(ns, 0.1, tol, ptol);
        MBS_EXPECT(e == MBS_OK, "fourbar dp5 at t = %g: %s", 0.1 * i, mbs_errMsg());
        if (e) break;
        viol = fmax(viol, mbs_naturalSimViolation(ns));
        dE = fmax(dE, fabs(mbs_naturalSimEnergy(ns) - E0));
      }
      mbsNaturalSimStats st;
      mbs_naturalSimGetStats(ns, &st);
      double rel = dE / fmax(fabs(E0), 1e-300);
      printf("natural run fourbar.cfg: 3 s, dp5 tol %g, projection tol %g: energy error %.2e "
             "relative, max constraint violation %.2e; %ld steps, %ld rejected, %ld evaluations, "
             "%ld projections\n",
             tol, ptol, rel, viol, st.steps, st.rejected, st.evals, st.projections);
      MBS_EXPECT(rel <= 1e-9 && viol <= ptol, "fourbar dp5: energy error %.3e, violation %.3e", rel,
                 viol);
      // a fifth-order method: 867 steps here (a wrong tableau entry keeps the error by taking
      // 2.4x as many: the bound catches it)
      MBS_EXPECT(fabs(st.t - 3) <= 1e-12 && st.steps > 10 && st.steps <= 1300 &&
                     st.rejected < st.steps && st.evals >= 6 * st.steps &&
                     st.evals <= 7 * (st.steps + st.rejected) + 30,
                 "fourbar dp5 counters: t %.15g, %ld steps, %ld rejected, %ld evaluations", st.t,
                 st.steps, st.rejected, st.evals);
      // a loose projection tolerance lets the constraints drift (and is refused below 0)
      MBS_EXPECT(mbs_naturalSimAdvance(ns, 0.1, tol, -1) == MBS_ERR_INPUT, "negative ptol");
    }
    mbs_naturalSimDestroy(&ns);
    mbs_workDestroy(&w);
    mbs_stateDestroy(&s);
    mbs_modelDestroy(&m);
  }
  return mbs_test_finish("test_natural");
}
