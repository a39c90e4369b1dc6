/// \file test_schur_light.c
/// Issue 30 (item 3, "light bodies"): schur at several ranks against the serial ABA oracle on
/// models whose heavy links (1 kg) each carry a light body (1e-8 kg, 1e-16 kg m^2, or 1e-6 kg,
/// 1e-12 kg m^2) on a fixed joint, the next link hanging from the light body. On the chain the
/// weights alone would put rank cuts at the fixed joint above a light body (the light body would
/// then be the root of a rank: fixed by the partition rule MBS_PARTITION_FIXED_SKIP); on the tree
/// (two links below every light body) the ranks' and threads' components have several lower ports
/// and run as trees of paths in inertia form with spikes (docs/formulation.md 4.9; in compliance
/// form a light body's compliance, ~1e12..1e16, was cancelled when it was absorbed through its
/// fixed joint: errors up to 6e-2). Asserts q̈ and lambda to 1e-12 relative (normwise; measured
/// <= 2e-15). Full (replicated) models, the cut-joint system merged by the scan (chain) and the
/// component-tree passes (tree). A few seconds at 4 ranks. Argument: "chain" (default) or "tree".
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include "mbspar/mbs_engine.h"
#include "mbspar/mbs_config.h"
#include "mbs_test.h"

static mbspComm *comm;

// n links; link k hangs from light body s_{k-1} (chain) or s_{(k-1)/2} (tree)
static char *light_model(int n, int tree, double lm, double li) {
  size_t cap = 1024 + 700 * (size_t)n, at = 0;
  char *t = malloc(cap);
  if (!t) return NULL;
  at += (size_t)snprintf(t + at, cap - at, "model = { gravity = [0.0, 0.0, -9.81]; bodies = (");
  for (int k = 0; k < n; k++) {
    char par[32];
    if (k == 0)
      snprintf(par, sizeof par, "ground");
    else
      snprintf(par, sizeof par, "s%d", tree ? (k - 1) / 2 : k - 1);
    at += (size_t)snprintf(
        t + at, cap - at,
        "%s{ name = \"l%d\"; parent = \"%s\"; joint = { type = \"revolute\"; axis = [0.0, 1.0, "
        "0.0]; origin = [0.0, 0.0, -0.2]; q0 = [%.17g]; qd0 = [%.17g]; }; mass = 1.0; com = "
        "[0.0, 0.0, -0.25]; inertia = [0.02, 0.02, 0.001, 0.0, 0.0, 0.0]; },"
        "{ name = \"s%d\"; parent = \"l%d\"; joint = { type = \"fixed\"; origin = [0.01, 0.0, "
        "-0.3]; }; mass = %.17g; com = [0.0, 0.0, 0.0]; inertia = [%.17g, %.17g, %.17g, 0.0, "
        "0.0, 0.0]; }",
        k ? "," : "", k, par, 0.1 * (k % 5), 0.05 * k, k, k, lm, li, li, li);
  }
  snprintf(t + at, cap - at, "); };");
  return t;
}

static void check(int n, int tree, double lm, double li, const char *merge) {
  char *text = light_model(n, tree, lm, li);
  MBS_EXPECT(text, "out of memory");
  if (!text) return;
  mbsConfig *c = NULL;
  mbsModel *m = NULL;
  MBS_EXPECT_OK(mbs_configParse(text, "light.cfg", NULL, 0, &c));
  free(text);
  if (!c) return;
  MBS_EXPECT_OK(mbs_configBuildModel(c, &m));
  mbs_configDestroy(&c);
  if (!m) return;
  mbsState *s;
  mbsWork *wo;
  MBS_EXPECT_OK(mbs_stateCreate(m, &s));
  MBS_EXPECT_OK(mbs_workCreate(m, &wo));
  m->opt.solver = MBS_SOLVER_ABA;
  MBS_EXPECT_OK(mbs_forward(m, s, wo));
  mbs_constraintLambda(m, wo);
  if (merge) setenv("MBSPAR_SCHUR_MERGE", merge, 1);
  m->opt.solver = MBS_SOLVER_SCHUR;
  m->opt.warm_start = MBS_WARM_NONE;
  mbspEngine *e;
  mbsErr err = mbsp_engineCreate(comm, m, MBSP_HALO_P2P, &e);
  MBS_EXPECT_OK(err);
  if (!err) {
    double *qdd = calloc((size_t)m->nv + 1, sizeof(double));
    double *lam = calloc((size_t)m->nlam + 1, sizeof(double));
    double *jf = calloc(6 * (size_t)m->nbody, sizeof(double));
    MBS_EXPECT_OK(mbsp_engineForward(e, s));
    MBS_EXPECT_OK(mbsp_engineGather(e, qdd, lam, jf));
    if (mbsp_rank(comm) == 0) {
      double dq = mbs_test_relDiff(qdd, wo->qdd, m->nv, 1e-300);
      double dl = mbs_test_relDiff(lam, wo->lam, m->nlam, 1e-300);
      printf("%s of %d links, light bodies %.0e kg %.0e kg m^2, np=%d, %s merge: qdd %.3e, "
             "lambda %.3e\n",
             tree ? "tree" : "chain", n, lm, li, mbsp_size(comm), merge ? merge : "default", dq,
             dl);
      MBS_EXPECT(dq <= 1e-12 && dl <= 1e-12, "%s n=%d np=%d: qdd %.3e, lambda %.3e to ABA",
                 tree ? "tree" : "chain", n, mbsp_size(comm), dq, dl);
    }
    free(qdd), free(lam), free(jf);
    mbsp_engineDestroy(&e);
  }
  unsetenv("MBSPAR_SCHUR_MERGE");
  mbs_workDestroy(&wo);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&m);
}

int main(int argc, char **argv) {
  if (mbsp_init(&argc, &argv, &comm)) {
    fprintf(stderr, "MPI init failed: %s\n", mbs_errMsg());
    return 1;
  }
  const char *which = argc > 1 ? argv[1] : "chain";
  if (strcmp(which, "tree") != 0) {
    // chains of 9 and 10 links: the weights alone cut at the fixed joint above s4 (2 ranks) or
    // s2 and s7 (4 ranks), and the 3 thread segments of one rank there too; the partition moves
    // such boundaries one body down (MBS_PARTITION_FIXED_SKIP)
    check(9, 0, 1e-8, 1e-16, NULL);
    check(10, 0, 1e-8, 1e-16, NULL);
    check(9, 0, 1e-8, 1e-16, "tree");
  } else {
    // trees: every light body carries two links (trees of paths, docs/formulation.md 4.9)
    check(12, 1, 1e-6, 1e-12, NULL);
    check(12, 1, 1e-8, 1e-16, NULL);
    check(20, 1, 1e-6, 1e-12, NULL);
  }
  long fails = mbs_test_fail;
  mbsp_allreduceSumLong(comm, &fails, 1);
  if (mbsp_rank(comm) == 0)
    printf("test_schur_light %s np=%d: %s (%ld failure(s) over all ranks)\n", which,
           mbsp_size(comm), fails ? "FAILED" : "all checks passed", fails);
  mbsp_finalize(&comm);
  return fails ? 1 : 0;
}
