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

static int ncompared = 0; // models whose velocities satisfy the constraints (compared)

// q̈ of natural against aba (the loop baseline when the model has loops) on m at q0, qd0
static void compare(const char *what, mbsModel *m, int nredundant, double *worst,
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
  mbsNaturalInfo info;
  MBS_EXPECT_OK(mbs_naturalAccelDense(m, s, w, qdd_nat, &info));
  double d = mbs_test_relDiff(qdd_nat, qdd_aba, m->nv, 1e-300);
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
  printf("  %-40s qdd rel diff %.2e, residuals %.1e %.1e, velocity %.1e, %d redundant\n", what, d,
         info.acc_residual, info.qdd_residual, info.vel_residual, info.nredundant);
  free(qdd_aba), free(qdd_nat);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
}

static void check_model(int nbody, int chain, unsigned long long seed, double *worst,
                        double *worst_res) {
  mbsModel *m = NULL;
  mbsState *s = NULL;
  mbsWork *w = NULL;
  MBS_EXPECT_OK(mbs_test_randomModel(nbody, mbs_test_alltypes, 7, chain, seed, &m));
  if (!m) return;
  MBS_EXPECT_OK(mbs_stateCreate(m, &s));
  MBS_EXPECT_OK(mbs_workCreate(m, &w));
  double *qdd_aba = calloc((size_t)m->nv + 1, sizeof(double));
  double *qdd_nat = calloc((size_t)m->nv + 1, sizeof(double));
  mbs_fwdPosition(m, s, w);
  mbs_fwdVelocity(m, s, w);
  MBS_EXPECT_OK(mbs_aba(m, w));
  memcpy(qdd_aba, w->qdd, (size_t)m->nv * sizeof(double));
  mbsNaturalInfo info;
  MBS_EXPECT_OK(mbs_naturalAccelDense(m, s, w, qdd_nat, &info));
  double d = mbs_test_relDiff(qdd_nat, qdd_aba, m->nv, 1e-300);
  if (info.vel_residual <= 1e-8 && d > *worst) *worst = d;
  double r = info.acc_residual > info.qdd_residual ? info.acc_residual : info.qdd_residual;
  if (r > *worst_res) *worst_res = r;
  MBS_EXPECT(d <= 1e-9, "seed %llu n=%d %s: natural vs aba qdd rel diff %.3e", seed, nbody,
             chain ? "chain" : "tree", d);
  MBS_EXPECT(info.acc_residual <= 1e-10 && info.qdd_residual <= 1e-10,
             "seed %llu n=%d: residuals %.3e (G pdd = gamma), %.3e (tree motion)", seed, nbody,
             info.acc_residual, info.qdd_residual);
  MBS_EXPECT(info.np == 12 * m->nbody && info.njoint == m->nlam, "seed %llu: sizes", seed);
  free(qdd_aba), free(qdd_nat);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
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
    compare(what, m, m->loop_asm.nredundant, &wl, &wlr);
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
    compare(cfgs[k].file, m, m->nloop ? m->loop_asm.nredundant : 0, &wl, &wlr);
    mbs_modelDestroy(&m);
  }
  printf("loop models and configs: worst qdd rel diff %.3e (%d with consistent velocities "
         "compared), worst residual %.3e\n",
         wl, ncompared, wlr);
  MBS_EXPECT(ncompared >= 18, "only %d of 21 loop models and configs compared", ncompared);
  return mbs_test_finish("test_natural");
}
