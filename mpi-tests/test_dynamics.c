/// \file test_dynamics.c
/// ABA vs CRBA on random trees with every joint type (including floating bases), RNEA round
/// trip, and the spatial kernels against plain 6x6 algebra.
#include "mbs_test.h"

static void check_tree(int nbody, int chain, unsigned long long seed, double *worst_fd,
                       double *worst_id) {
  mbsModel *m = NULL;
  mbsState *s = NULL;
  mbsWork *w = NULL;
  MBS_EXPECT_OK(mbs_test_randomModel(nbody, mbs_test_alltypes, 7, chain, seed, &m));
  if (!m) return;
  MBS_EXPECT_OK(mbs_stateCreate(m, &s));
  MBS_EXPECT_OK(mbs_workCreate(m, &w));
  MBS_EXPECT_OK(mbs_workEnableCrba(m, w));
  double *qdd_aba = calloc((size_t)m->nv + 1, sizeof(double));
  mbs_fwdPosition(m, s, w);
  mbs_fwdVelocity(m, s, w);
  MBS_EXPECT_OK(mbs_aba(m, w));
  memcpy(qdd_aba, w->qdd, (size_t)m->nv * sizeof(double));
  double *jf_aba = calloc(6 * (size_t)m->nbody, sizeof(double));
  memcpy(jf_aba, w->jfrc, 6 * (size_t)m->nbody * sizeof(double));
  MBS_EXPECT_OK(mbs_crba(m, w));
  double dfd = mbs_test_relDiff(w->qdd, qdd_aba, m->nv, 1e-300);
  double djf = mbs_test_relDiff(w->jfrc, jf_aba, 6 * m->nbody, 1e-300);
  if (dfd > *worst_fd) *worst_fd = dfd;
  MBS_EXPECT(dfd <= 1e-10, "seed %llu n=%d: ABA vs CRBA qdd rel diff %.3e", seed, nbody, dfd);
  MBS_EXPECT(djf <= 1e-10, "seed %llu n=%d: ABA vs CRBA joint wrench rel diff %.3e", seed, nbody,
             djf);
  // RNEA(q, qd, ABA(q, qd, tau)) == tau
  mbs_rnea(m, w, qdd_aba);
  double did = mbs_test_relDiff(w->qfrc_inv, w->qfrc, m->nv, 1e-300);
  if (did > *worst_id) *worst_id = did;
  MBS_EXPECT(did <= 1e-10, "seed %llu n=%d: RNEA(ABA(tau)) vs tau rel diff %.3e", seed, nbody, did);
  free(qdd_aba);
  free(jf_aba);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&m);
}

int main(void) {
  double worst_fd = 0, worst_id = 0;
  int ntrees = 0;
  for (unsigned long long seed = 1; seed <= 200; seed++) {
    int nbody = 1 + (int)(seed % 40);
    check_tree(nbody, 0, seed, &worst_fd, &worst_id);
    ntrees++;
  }
  for (unsigned long long seed = 1; seed <= 20; seed++) {
    check_tree(30 + (int)seed, 1, 1000 + seed, &worst_fd, &worst_id);
    ntrees++;
  }
  printf("%d random trees/chains: worst ABA-vs-CRBA %.3e, worst RNEA round trip %.3e\n", ntrees,
         worst_fd, worst_id);
  return mbs_test_finish("test_dynamics");
}
