/// \file test_cpa_schur.c
/// The critical-path graph of the exact distributed solver (solver.method = schur) against the
/// real evaluation: linked to mbs_parallel_flops (core and parallel layer built with
/// MBS_COUNT_FLOPS), every rank counts the flops of one mbsp_engineForward, and the graph on the
/// same number of ranks (and OpenMP segments per rank) must have exactly that work in total and
/// on every rank, at every grain. Models: chains and trees with every joint type, joints about
/// coordinate axes (the spike paths), about other axes (the compliance form), a free-joint chain,
/// the scan and the component-tree merge (MBSPAR_SCHUR_MERGE=tree), and one body per rank.
/// Loop models (random closed loops, spring-dampers), both ways schur takes the loop forces: the
/// separators (solver.loops auto: each rank's local solves for its cut-joint system and for the
/// equations with a side on its bodies, their dots, one sum, the cut joints' elimination) and the
/// m + 2 unit solves (solver.loops = unit): the graph's rank-bound nodes are the schur solves (and
/// the separators' per-rank unit pairs and dots) and the kinematics, the rest of its loop layer is
/// one unbound copy while every rank runs it, so there each rank's count must lie between its
/// bound nodes' flops and those plus the loop layer's (and at one rank test_cpa_loops checks the
/// total exactly).
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_critpath.h"
#include "mbspar/mbs_engine.h"
#include "mbspar/mbs_schur.h"
#include "mbs_test_loops.h"
#include "flops.h"

static mbspComm *comm;
static int ncase;
static const char *fixtures = "mpi-tests"; // ladder_small.cfg

static void check_model(mbsModel *m, const char *what, int tree_merge) {
  int rank = mbsp_rank(comm), P = mbsp_size(comm);
  mbsState *s = NULL;
  mbspEngine *e = NULL;
  MBS_EXPECT_OK(mbs_stateCreate(m, &s));
  m->opt.solver = MBS_SOLVER_SCHUR;
  m->opt.iface = 0;
  m->opt.warm_start = MBS_WARM_NONE;
  mbsErr err = mbsp_engineCreate(comm, m, MBSP_HALO_P2P, &e);
  MBS_EXPECT_OK(err);
  if (err || !s) {
    mbs_stateDestroy(&s);
    return;
  }
  double *cnt = calloc((size_t)P, sizeof(double));
  mbs_flop_count = 0;
  MBS_EXPECT_OK(mbsp_engineForward(e, s));
  cnt[rank] = (double)mbs_flop_count;
  MBS_EXPECT_OK(mbsp_allreduceSum(comm, cnt, P));
  mbspDecompInfo di;
  mbsp_engineDecomp(e, &di);
  double total = 0;
  for (int r = 0; r < P; r++) total += cnt[r];
  MBS_EXPECT(total > 0, "%s: the instrumented build counted no flops", what);
  if (rank == 0) {
    mbsCpaOptions o;
    mbs_cpaDefaults(&o);
    o.method = MBS_SOLVER_SCHUR;
    o.has_tau = s->tau != NULL;
    if (m->nloop) { // the rank and the zero rows of this evaluation's closure equations
      mbsLoopStat st;
      mbs_loopStat(mbsp_engineWork(e), &st);
      o.loop_rank = st.rank, o.loop_zero = st.nzero;
    }
    o.threads = mbs_maxThreads();
    double span1 = 0;
    for (int grain = 0; grain < 4; grain++)
      for (int R = P == 1 ? 0 : P; R <= P; R++) {
        o.grain = grain;
        o.ranks = R;
        mbsCpaGraph *g = NULL;
        mbsCpaResult res;
        MBS_EXPECT_OK(mbs_cpaBuild(m, &o, &g));
        if (!g) continue;
        MBS_EXPECT_OK(mbs_cpaAnalyse(g, &res));
        int loops = m->nloop || m->nforce;
        MBS_EXPECT(loops || res.work_flops == (long long)total,
                   "%s np=%d grain %s ranks %d: graph T1 %lld != counted %.0f flops", what, P,
                   mbs_cpaGrainName(grain), R, res.work_flops, total);
        MBS_EXPECT(res.span > 0 && res.span <= res.work + 1e-3, "%s: span %g, work %g", what,
                   res.span, res.work);
        if (R >= 1) {       // every rank's share
          long long un = 0; // the unbound loop layer (no loops: none)
          for (int v = 0; v < g->nnode; v++)
            if (g->proc[v] < 0) un += g->flops[v];
          MBS_EXPECT(loops || un == 0, "%s: %lld unbound flops", what, un);
          for (int r = 0; r < P; r++) {
            long long w = 0;
            for (int v = 0; v < g->nnode; v++)
              if (g->proc[v] == r) w += g->flops[v];
            if (loops && P == 1)
              MBS_EXPECT(w + un == (long long)cnt[0], "%s np=1 grain %s: graph %lld != %.0f", what,
                         mbs_cpaGrainName(grain), w + un, cnt[0]);
            else if (loops)
              MBS_EXPECT(w <= (long long)cnt[r] && (long long)cnt[r] <= w + un,
                         "%s np=%d grain %s: rank %d counted %.0f outside graph %lld + [0, %lld]",
                         what, P, mbs_cpaGrainName(grain), r, cnt[r], w, un);
            else
              MBS_EXPECT(w == (long long)cnt[r], "%s np=%d grain %s: rank %d graph %lld != %.0f",
                         what, P, mbs_cpaGrainName(grain), r, w, cnt[r]);
          }
          if (grain == 0) {
            double tp = 0;
            MBS_EXPECT_OK(mbs_cpaSchedule(g, P, &tp));
            MBS_EXPECT(tp >= res.span * (1 - 1e-12) && tp >= res.work / P * (1 - 1e-12),
                       "%s: %d-rank T_P %g below span %g or T1/P %g", what, P, tp, res.span,
                       res.work / P);
            MBS_EXPECT(P == 1 || res.nmsg > 0, "%s: no message nodes on %d ranks", what, P);
            span1 = res.span;
          }
        }
        mbs_cpaResultFree(&res);
        mbs_cpaDestroy(&g);
      }
    printf("  %-44s np=%d seg=%d %s: counted %.0f flops (rank 0: %.0f) %s graph T1; T_P %.3e s\n",
           what, P, di.segments, tree_merge ? "tree" : "scan", total, cnt[0],
           m->nloop || m->nforce ? "~" : "=", span1);
    ncase++;
  }
  free(cnt);
  mbsp_engineDestroy(&e);
  mbs_stateDestroy(&s);
}

static void run(int tree_merge) {
  static const int rev[] = {MBS_JNT_REVOLUTE};
  static const int mixed[] = {MBS_JNT_REVOLUTE, MBS_JNT_PRISMATIC, MBS_JNT_UNIVERSAL,
                              MBS_JNT_SPHERICAL, MBS_JNT_CYLINDRICAL};
  static const int freej[] = {MBS_JNT_REVOLUTE, MBS_JNT_FREE};
  int P = mbsp_size(comm);
  struct {
    int n;
    const int *types;
    int nt, chain;
    unsigned long long seed;
    double coord;
    const char *name;
  } cases[] = {{40, rev, 1, 1, 1, 1.0, "revolute chain 40, axes e_k (spikes)"},
               {40, rev, 1, 1, 2, 0.0, "revolute chain 40, other axes"},
               {30, mixed, 5, 1, 3, 0.5, "mixed chain 30, half e_k"},
               {12, freej, 2, 1, 4, 0.5, "revolute/free chain 12"},
               {40, mbs_test_alltypes, 7, 0, 5, 0.0, "random tree 40 (all joints)"},
               {60, mbs_test_alltypes, 7, 0, 6, 0.7, "random tree 60, 70% e_k"},
               {64, rev, 1, 0, 7, 1.0, "revolute tree 64, axes e_k"},
               {0, rev, 1, 1, 8, 1.0, "revolute chain, one body per rank"}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    mbsModel *m = NULL;
    int n = cases[k].n ? cases[k].n : P;
    MBS_EXPECT_OK(mbs_test_randomModelEx(n, cases[k].types, cases[k].nt, cases[k].chain,
                                         cases[k].seed, cases[k].coord, &m));
    if (!m) continue;
    check_model(m, cases[k].name, tree_merge);
    mbs_modelDestroy(&m);
  }
  for (unsigned long long seed = 1; seed <= 2; seed++) { // closed loops (and spring-dampers)
    mbsModel *m = mbs_test_randomLoopModel(10 + 2 * P, 2, 1, seed);
    char name[64];
    for (int lm = 0; m && lm < 2; lm++) { // separators, then unit solves
      snprintf(name, sizeof name, "random loops %llu%s", seed, lm ? " (unit solves)" : "");
      m->opt.loops = lm ? MBS_LOOPS_UNIT : MBS_LOOPS_AUTO;
      check_model(m, name, tree_merge);
    }
    mbs_modelDestroy(&m);
  }
  mbsModel *m = mbs_test_randomLoopModel(8 + 2 * P, 0, 2, 9); // spring-dampers only
  if (m) check_model(m, "random spring-dampers only", tree_merge);
  mbs_modelDestroy(&m);
  // a forest with loops: schur's unit and final solves redo only the bias passes where a rank
  // holds whole trees of revolute joints about coordinate axes (mbs_schurRhsOnly)
  m = mbs_test_loadConfig(fixtures, "ladder_small.cfg", NULL, 0);
  if (m) check_model(m, "ladder_small.cfg (bias passes only)", tree_merge);
  if (m) m->opt.loops = MBS_LOOPS_UNIT;
  if (m) check_model(m, "ladder_small.cfg (bias passes only, unit solves)", tree_merge);
  mbs_modelDestroy(&m);
}

int main(int argc, char **argv) {
  if (mbsp_init(&argc, &argv, &comm)) {
    fprintf(stderr, "MPI init failed: %s\n", mbs_errMsg());
    return 1;
  }
  if (argc > 1) fixtures = argv[1];
  run(0);
  setenv("MBSPAR_SCHUR_MERGE", "tree", 1); // the component-tree passes on chains too
  run(1);
  unsetenv("MBSPAR_SCHUR_MERGE");
  long fails = mbs_test_fail;
  mbsp_allreduceSumLong(comm, &fails, 1);
  if (mbsp_rank(comm) == 0)
    printf("test_cpa_schur np=%d: %d models, %s (%ld failure(s) over all ranks)\n", mbsp_size(comm),
           ncase, fails ? "FAILED" : "all checks passed", fails);
  mbsp_finalize(&comm);
  return fails ? 1 : 0;
}
