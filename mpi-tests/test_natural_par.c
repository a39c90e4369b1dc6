/// \file test_natural_par.c
/// The natural-coordinate formulation distributed over the ranks (docs/natural.md 13,
/// parallel/natural_par.c) against ABA: q̈ to 1e-9 relative on random trees and chains with every
/// joint type (floating bases, joint springs, dampers, forces), on random loop models with every
/// cut-joint type and spring-dampers and on the loop configs (ABA with the range-space loop
/// solve), where the velocities satisfy the constraints (docs/natural.md 3.2); against the
/// whole-model O(n) solver to 1e-10 on all of those. And that the work was split: each rank
/// factored exactly its balanced range of bodies, the ranges cover the model once, the
/// interface rows are the rank-cut joints' plus the cut joints', and a rank solved only the rows
/// that touch its bodies. Every rank agrees on the failure count.
/// usage: test_natural_par CONFIGS_DIR
#include "mbs_test.h"
#include "mbs_test_loops.h"
#include "mbspar/mbs_natural.h"
#include "natural_par.h"

static mbspComm *comm;
static double worst_aba[2], worst_tree; // [0] trees and chains, [1] loop models
static int ncompared, nmodels;
static long rootsolves; // O(1) solves at forest roots (over all models, this rank)

static void check(mbsModel *m, const char *what, int loops) {
  int rank = mbsp_rank(comm), P = mbsp_size(comm), nb = m->nbody;
  mbsState *s = NULL;
  mbsWork *w = NULL, *wa = NULL;
  MBS_EXPECT_OK(mbs_stateCreate(m, &s));
  MBS_EXPECT_OK(mbs_workCreate(m, &w));
  MBS_EXPECT_OK(mbs_workCreate(m, &wa));
  if (!s || !w || !wa) return;
  nmodels++;
  double *qa = calloc((size_t)m->nv + 1, sizeof(double));
  double *qt = calloc((size_t)m->nv + 1, sizeof(double));
  double *qd = calloc((size_t)m->nv + 1, sizeof(double));
  // the oracles (every rank: the model is the same everywhere)
  m->opt.solver = MBS_SOLVER_ABA;
  MBS_EXPECT_OK(mbs_forward(m, s, wa));
  memcpy(qa, wa->qdd, (size_t)m->nv * sizeof(double));
  mbsNaturalInfo info;
  MBS_EXPECT_OK(mbs_naturalAccelDense(m, s, wa, qd, &info)); // (for vel_residual)
  // the whole-model O(n) solve as the verbs run it at one rank (mbs_forward)
  m->opt.solver = MBS_SOLVER_NATURAL;
  mbsWork *wn = NULL;
  MBS_EXPECT_OK(mbs_workCreate(m, &wn));
  if (wn) MBS_EXPECT_OK(mbs_forward(m, s, wn));
  if (wn) memcpy(qt, wn->qdd, (size_t)m->nv * sizeof(double));
  mbs_workDestroy(&wn);
  // distributed
  MBS_EXPECT_OK(mbsp_naturalForward(comm, m, s, w));
  if (rank == 0) {
    double d = mbs_test_relDiff(w->qdd, qa, m->nv, 1e-300);
    double dt = mbs_test_relDiff(w->qdd, qt, m->nv, 1e-300);
    int consistent = info.vel_residual <= 1e-8;
    if (consistent) {
      ncompared++;
      if (d > worst_aba[loops]) worst_aba[loops] = d;
      if (dt > worst_tree) worst_tree = dt;
    }
    MBS_EXPECT(!consistent || (d <= 1e-9 && dt <= 1e-10),
               "%s at %d ranks: q̈ rel diff %.3e to aba, %.3e to the whole-model solve", what, P, d,
               dt);
  }
  // the split: this rank factored its balanced range, once
  mbsNaturalWork *pw = NULL;
  MBS_EXPECT_OK(mbs_naturalWorkOf(m, w, &pw));
  if (pw) {
    mbsNaturalPartInfo pi;
    mbs_naturalPartGetInfo(pw, &pi);
    int *st = calloc((size_t)P + 1, sizeof(int));
    MBS_EXPECT_OK(mbs_naturalPartSplit(m, P, st));
    for (int r = 0; r < P; r++)
      MBS_EXPECT(st[r] <= st[r + 1] && st[0] == 0 && st[P] == nb, "%s: split %d..%d", what, st[r],
                 st[r + 1]);
    int nifc = 0, touch = 0;
    for (int c = 0; c < nb; c++) {
      int p = m->body_parent[c], rc = 0, rp = 0;
      if (p < 0) continue;
      while (c >= st[rc + 1]) rc++;
      while (p >= st[rp + 1]) rp++;
      if (rc != rp) {
        nifc += m->body_lamnum[c];
        if (rc == rank || rp == rank) touch += m->body_lamnum[c];
      }
    }
    MBS_EXPECT(pi.nparts == P && pi.part == rank && pi.b0 == st[rank] && pi.b1 == st[rank + 1] &&
                   pi.evals == 1 && pi.factored == pi.b1 - pi.b0,
               "%s: rank %d factored %ld bodies of [%d, %d) (expected [%d, %d))", what, rank,
               pi.factored, pi.b0, pi.b1, st[rank], st[rank + 1]);
    MBS_EXPECT(pi.nif_cut == nifc && pi.nif == nifc + m->nlam_loop,
               "%s: %d interface rows (%d rank-cut), expected %d + %d", what, pi.nif, pi.nif_cut,
               nifc, m->nlam_loop);
    // the rank-cut rows this rank solved: those of its joints (the loops' rows: at most all;
    // one more solve for the roots' correction)
    long us = pi.unit_solves + pi.root_solves;
    MBS_EXPECT(us >= touch && us <= touch + m->nlam_loop + 1,
               "%s: rank %d made %ld unit and %ld root solves, %d rank-cut rows touch it", what,
               rank, pi.unit_solves, pi.root_solves, touch);
    rootsolves += pi.root_solves;
    double tot = (double)pi.factored;
    mbsp_allreduceSum(comm, &tot, 1);
    MBS_EXPECT((long)tot == nb, "%s: %g bodies factored over the ranks, %d bodies", what, tot, nb);
    free(st);
  }
  free(qa), free(qt), free(qd);
  mbs_workDestroy(&w);
  mbs_workDestroy(&wa);
  mbs_stateDestroy(&s);
}

int main(int argc, char **argv) {
  if (mbsp_init(&argc, &argv, &comm)) {
    fprintf(stderr, "MPI init failed: %s\n", mbs_errMsg());
    return 1;
  }
  if (argc < 2) {
    fprintf(stderr, "usage: test_natural_par CONFIGS_DIR\n");
    mbsp_finalize(&comm);
    return 2;
  }
  char what[96];
  for (unsigned long long seed = 1; seed <= 40; seed++) { // trees, every joint type
    mbsModel *m = NULL;
    int n = 1 + (int)(seed % 24);
    MBS_EXPECT_OK(mbs_test_randomModel(n, mbs_test_alltypes, 7, 0, seed, &m));
    if (!m) continue;
    snprintf(what, sizeof what, "tree seed %llu (%d bodies)", seed, n);
    check(m, what, 0);
    mbs_modelDestroy(&m);
  }
  for (unsigned long long seed = 1; seed <= 10; seed++) { // chains
    mbsModel *m = NULL;
    int n = 10 + 3 * (int)seed;
    MBS_EXPECT_OK(mbs_test_randomModel(n, mbs_test_alltypes, 7, 1, 500 + seed, &m));
    if (!m) continue;
    snprintf(what, sizeof what, "chain seed %llu (%d bodies)", 500 + seed, n);
    check(m, what, 0);
    mbs_modelDestroy(&m);
  }
  for (int k = 0; k < 16; k++) { // random loop models (as test_natural)
    int nb = 4 + k % 9, nl = 1 + k % 4, nf = k % 3;
    mbsModel *m = mbs_test_randomLoopModel(nb, nl, nf, 1000 + k);
    if (!m) continue;
    snprintf(what, sizeof what, "random loop model %d (%d bodies, %d loops)", k, nb, nl);
    check(m, what, 1);
    mbs_modelDestroy(&m);
  }
  static const char *cfgs[] = {"fourbar.cfg", "slider_crank.cfg", "rssr.cfg",
                               "sixbar.cfg",  "bricard.cfg",      "hexapod.cfg"};
  for (size_t k = 0; k < sizeof cfgs / sizeof cfgs[0]; k++) {
    mbsModel *m = mbs_test_loadConfig(argv[1], cfgs[k], NULL, 0);
    if (!m) continue;
    check(m, cfgs[k], 1);
    mbs_modelDestroy(&m);
  }
  MBS_EXPECT(ncompared >= 68 || mbsp_rank(comm) != 0, "only %d models compared", ncompared);
  double rs = (double)rootsolves; // the O(1) root solves ran (every rank count above one)
  mbsp_allreduceSum(comm, &rs, 1);
  MBS_EXPECT(mbsp_size(comm) == 1 || rs > 0, "no root solves at %d ranks", mbsp_size(comm));
  long fails = mbs_test_fail;
  mbsp_allreduceSumLong(comm, &fails, 1);
  if (mbsp_rank(comm) == 0) {
    printf("%d models at %d ranks, %d with consistent velocities compared: q̈ worst rel diff to "
           "aba %.3e (trees, chains), %.3e (loop models); to the whole-model O(n) solve %.3e\n",
           nmodels, mbsp_size(comm), ncompared, worst_aba[0], worst_aba[1], worst_tree);
    printf("rank-cut rows on a forest root solved in O(1): %.0f (all ranks)\n", rs);
    printf("test_natural_par np=%d: %s (%ld failure(s) over all ranks)\n", mbsp_size(comm),
           fails ? "FAILED" : "all checks passed", fails);
  }
  mbsp_finalize(&comm);
  return fails ? 1 : 0;
}
