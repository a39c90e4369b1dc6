/// \file test_auto.c
/// solver.method = auto's choice (src/solver_auto.c, docs/model.md "Choosing the method") on
/// fixed jobs, deterministic (no cores are looked at): a 4-link chain at 2 ranks is aba (schur's
/// messages cost more than its 4 bodies' work); the 255-body spherical tree at 2 ranks of their
/// own cores is schur (predicted ~1.8x faster), at 1 rank aba, and at 2 ranks sharing one core
/// aba; the predictions are positive and the choice follows them with the margin.
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "mbs_test.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_solverauto.h"
#include "mbspar/mbs_solvertype.h"
#include "mbspar/mbspar.h"

static int pick(const char *text, int ranks, int threads, double slow, mbsSolverAuto *out) {
  mbsConfig *cfg = NULL;
  mbsModel *m = NULL;
  int method = -1;
  MBS_EXPECT_OK(mbs_configParse(text, "auto.cfg", NULL, 0, &cfg));
  if (cfg) MBS_EXPECT_OK(mbs_configBuildModel(cfg, &m));
  mbsAutoJob j;
  mbs_autoDefaults(&j);
  j.ranks = ranks, j.threads = threads, j.slow = slow;
  memset(out, 0, sizeof *out);
  if (m) MBS_EXPECT_OK(mbs_autoPredict(m, &j, out, &method));
  MBS_EXPECT(cfg && cfg->sauto.on, "solver.method not given: auto");
  // the choice follows the predictions: the fastest serial one unless schur is 1.25x faster
  double serial = INFINITY, dist = INFINITY;
  int ser = -1;
  for (int k = 0; k < out->ncand; k++) {
    MBS_EXPECT(out->pred[k] > 0 && isfinite(out->pred[k]), "prediction %g", out->pred[k]);
    const mbsSolverType *t = mbs_solverFind(out->cand[k]);
    int is_serial = t->baseline || !t->distributed;
    if (is_serial && out->pred[k] < serial) serial = out->pred[k], ser = out->cand[k];
    if (!is_serial && out->pred[k] < dist) dist = out->pred[k];
  }
  int want = dist * j.margin < serial ? mbs_solverFromName("schur") : ser;
  MBS_EXPECT(method == want, "choice %s, the predictions say %s", mbs_solverName(method),
             mbs_solverName(want));
  printf("  ranks %d threads %d slowdown %g: %s (", ranks, threads, slow, mbs_solverName(method));
  for (int k = 0; k < out->ncand; k++)
    printf("%s%s %.3e s", k ? ", " : "", mbs_solverName(out->cand[k]), out->pred[k]);
  printf(")\n");
  mbs_modelDestroy(&m);
  mbs_configDestroy(&cfg);
  return method;
}

int main(void) {
  static const char chain4[] =
      "model = { chain = { n = 4; joint = \"revolute\"; axis = [0, 1, 0]; direction = [0, 0, -1];"
      " length = 0.1; mass = 0.1; shape = \"rod\"; radius = 0.01; }; };\n";
  static const char tree[] =
      "model = { tree = { branching = 2; depth = 8; joint = \"spherical\"; direction = [0, 0, -1];"
      " length = 0.1; mass = 0.1; shape = \"rod\"; radius = 0.01; spread = 0.5; }; };\n";
  mbsSolverAuto a;
  int aba = MBS_SOLVER_ABA, schur = mbs_solverFromName("schur");
  printf("4-link chain\n");
  MBS_EXPECT(pick(chain4, 2, 1, 1, &a) == aba, "4 links at 2 ranks: aba");
  printf("255-body spherical tree\n");
  MBS_EXPECT(pick(tree, 2, 1, 1, &a) == schur, "tree at 2 ranks of their own cores: schur");
  MBS_EXPECT(pick(tree, 1, 1, 1, &a) == aba, "tree at 1 rank, 1 thread: aba");
  MBS_EXPECT(pick(tree, 2, 1, 2, &a) == aba, "tree at 2 ranks sharing a core: aba");
  if (mbs_test_fail) return 1;
  printf("test_auto: all checks passed\n");
  return 0;
}
