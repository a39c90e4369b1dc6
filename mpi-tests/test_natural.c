/// \file test_natural.c
/// The natural-coordinate formulation of seed 004 (docs/natural.md), dense reference, against
/// ABA: q̈ on random chains and trees with every joint type (floating bases, joint springs,
/// dampers and forces), and the acceleration-level constraints G p̈ = γ and the tree motion of p̈.
#include "mbs_test.h"
#include "mbspar/mbs_natural.h"

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
  if (d > *worst) *worst = d;
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

int main(void) {
  double worst = 0, worst_res = 0;
  int n = 0;
  for (unsigned long long seed = 1; seed <= 60; seed++, n++)
    check_model(1 + (int)(seed % 24), 0, seed, &worst, &worst_res);
  for (unsigned long long seed = 1; seed <= 10; seed++, n++)
    check_model(10 + 3 * (int)seed, 1, 500 + seed, &worst, &worst_res);
  printf("%d random trees and chains (every joint type): natural vs aba worst qdd rel diff "
         "%.3e, worst residual %.3e\n",
         n, worst, worst_res);
  return mbs_test_finish("test_natural");
}
