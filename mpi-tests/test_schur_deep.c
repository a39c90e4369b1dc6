/// \file test_schur_deep.c
/// The exact distributed solver on trees whose component (rank) tree is deep (issue 35, docs/
/// formulation.md 4.4): a caterpillar (a 256-link spine with a leaf on every link; its rank tree
/// is a path of P components, scanned as a chain decomposition by default and contracted when
/// the scan is switched off) and a random recursive tree of 600 bodies (the generator's shapes).
/// schur against the serial ABA oracle to 1e-12 (qdd, lambda), and its interface rounds (the
/// largest over the ranks) at most ceil(log2 P): the contraction over rank intervals runs exactly
/// that many rounds each way, whatever the tree. Control: the component-tree passes
/// (MBSPAR_SCHUR_MERGE=pass, today's algorithm before the contraction) are as deep as the rank
/// tree, P - 1 on the caterpillar, and must exceed the bound from 4 ranks up (so the bound can
/// fail). Every rank agrees on the failure count.
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include "mbspar/mbs_engine.h"
#include "mbspar/mbs_config.h"
#include "mbs_test.h"

static mbspComm *comm;

// schur against ABA; returns the interface rounds (max over the ranks), -1 on failure
static int check(const char *cfg, const char *what) {
  mbsConfig *c;
  mbsModel *m;
  MBS_EXPECT_OK(mbs_configParse(cfg, "deep.cfg", NULL, 0, &c));
  MBS_EXPECT_OK(mbs_configBuildModel(c, &m));
  mbsState *s;
  mbsWork *wo;
  MBS_EXPECT_OK(mbs_test_abaOracle(m, &s, &wo));
  mbspEngine *e;
  int rounds = -1;
  m->opt.solver = MBS_SOLVER_SCHUR;
  if (!mbsp_engineCreate(comm, m, MBSP_HALO_P2P, &e)) {
    double *qdd = calloc((size_t)m->nv + 1, sizeof(double));
    double *lam = calloc((size_t)m->nlam + 1, sizeof(double));
    double *jf = calloc(6 * (size_t)m->nbody, sizeof(double));
    MBS_EXPECT_OK(mbsp_engineForward(e, s));
    MBS_EXPECT_OK(mbsp_engineGather(e, qdd, lam, jf));
    double r = mbsp_engineWork(e)->stat.iface_rounds;
    MBS_EXPECT_OK(mbsp_allreduceMax(comm, &r, 1));
    rounds = (int)r;
    if (mbsp_rank(comm) == 0) {
      double dq = mbs_test_relDiff(qdd, wo->qdd, m->nv, 1e-300);
      double dl = mbs_test_relDiff(lam, wo->lam, m->nlam, 1e-300);
      printf("%s np=%d: qdd %.2e, lambda %.2e rel diff to ABA, %d interface rounds\n", what,
             mbsp_size(comm), dq, dl, rounds);
      MBS_EXPECT(dq <= 1e-12 && dl <= 1e-12, "%s: rel diff to ABA qdd %.3e lambda %.3e", what, dq,
                 dl);
    }
    free(qdd), free(lam), free(jf);
    mbsp_engineDestroy(&e);
  } else {
    MBS_EXPECT(0, "%s: engine create failed: %s", what, mbs_errMsg());
  }
  mbs_workDestroy(&wo);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&m);
  mbs_configDestroy(&c);
  return rounds;
}

int main(int argc, char **argv) {
  if (mbsp_init(&argc, &argv, &comm)) {
    fprintf(stderr, "MPI init failed: %s\n", mbs_errMsg());
    return 1;
  }
  int P = mbsp_size(comm), bound = 0;
  while ((1 << bound) < P) bound++; // ceil(log2 P)
  const char *cat = "model = { tree = { caterpillar = 256; joint = \"revolute\"; axis = [0, 1, 0]; "
                    "direction = [0, 0, -1]; length = 0.1; mass = 0.1; q0 = 0.1; qd0 = 0.3; "
                    "spread = 0.3; }; };";
  const char *rnd = "model = { tree = { random = 600; seed = 3; joint = \"spherical\"; "
                    "direction = [0, 0, -1]; length = 0.1; mass = 0.1; spread = 0.05; "
                    "qd0 = [0.1, -0.2, 0.3]; }; };";
  // the partition cuts the caterpillar between a leaf and the next spine link (one cut joint
  // up, one down): a chain decomposition, scanned. Forced off the scan (MBSPAR_SCHUR_MERGE=tree)
  // its rank tree is a path of P components: the contraction's worst case for the passes
  check(cat, "caterpillar, 512 bodies (scan)");
  setenv("MBSPAR_SCHUR_MERGE", "tree", 1);
  int r1 = check(cat, "caterpillar, 512 bodies, contraction");
  unsetenv("MBSPAR_SCHUR_MERGE");
  int r2 = check(rnd, "random tree, 600 bodies");
  MBS_EXPECT(r1 >= 0 && r1 <= bound, "caterpillar: %d interface rounds > ceil(log2 %d) = %d", r1, P,
             bound);
  MBS_EXPECT(r2 >= 0 && r2 <= bound, "random tree: %d interface rounds > ceil(log2 %d) = %d", r2, P,
             bound);
  setenv("MBSPAR_SCHUR_MERGE", "pass", 1);
  int r3 = check(cat, "caterpillar, 512 bodies, component-tree passes");
  unsetenv("MBSPAR_SCHUR_MERGE");
  if (P >= 4) MBS_EXPECT(r3 > bound, "control: the passes' depth %d does not exceed %d", r3, bound);
  long fails = mbs_test_fail;
  mbsp_allreduceSumLong(comm, &fails, 1);
  if (mbsp_rank(comm) == 0)
    printf("test_schur_deep np=%d: %s (%ld failure(s) over all ranks)\n", P,
           fails ? "FAILED" : "all checks passed", fails);
  mbsp_finalize(&comm);
  return fails ? 1 : 0;
}
