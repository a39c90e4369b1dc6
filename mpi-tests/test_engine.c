/// \file test_engine.c
/// The distributed engine against the serial ABA oracle at any rank count: qdd and lambda of
/// every iterative method on chains (revolute, universal, mixed) and random trees with all joint
/// types and floating bases; the distributed operator is symmetric and positive; the halo
/// exchange is exact (index-encoded values). Every rank agrees on the failure count.
#include "mbspar/mbs_engine.h"
#include "mbs_test.h"
#include "petsc_ref.h"

static mbspComm *comm;

static int pick_iterative(const mbsSolverType *t) {
#ifndef MBS_HAVE_PETSC
  if (t->petsc) return 0; // registered, but refuses to run in a build without PETSc
#endif
  return t->iterative && t->distributed;
}

static void check_model(mbsModel *m, const char *what) {
  int rank = mbsp_rank(comm);
  // oracle (every rank computes it; only rank 0 compares)
  mbsState *s;
  mbsWork *wo;
  MBS_EXPECT_OK(mbs_test_abaOracle(m, &s, &wo));

  mbspEngine *e;
  mbsErr err = mbsp_engineCreate(comm, m, MBSP_HALO_P2P, &e);
  MBS_EXPECT_OK(err);
  if (err) return;
  long nbad = -1;
  MBS_EXPECT_OK(mbsp_engineHaloCheck(e, &nbad));
  MBS_EXPECT(nbad == 0, "%s: %ld halo entries wrong", what, nbad);

  // every iterative distributed row of the table (petsc where it is built)
  int methods[MBS_SOLVER_COUNT];
  int nmethods = mbs_test_solvers(pick_iterative, methods, MBS_SOLVER_COUNT);
  MBS_EXPECT(nmethods >= 5, "only %d iterative distributed rows in the solver table", nmethods);
  double *qdd = calloc((size_t)m->nv + 1, sizeof(double));
  double *lam = calloc((size_t)m->nlam + 1, sizeof(double));
  double *jf = calloc(6 * (size_t)m->nbody, sizeof(double));
  for (int k = 0; k < nmethods; k++) {
    int meth = methods[k];
    m->opt.solver = meth;
    m->opt.tol = 1e-12;
    m->opt.max_iter = 100000;
    m->opt.warm_start = MBS_WARM_NONE;
    m->opt.omega = 1.2;
    mbs_stateReset(m, s);
    MBS_EXPECT_OK(mbsp_engineForward(e, s));
    MBS_EXPECT_OK(mbsp_engineGather(e, qdd, lam, jf));
    mbsWork *w = mbsp_engineWork(e);
    MBS_EXPECT(w->stat.reason > 0, "%s %s: reason %d after %d iterations", what,
               mbs_solverName(meth), w->stat.reason, w->stat.iterations);
    if (rank == 0) {
      double dq = mbs_test_relDiff(qdd, wo->qdd, m->nv, 1e-300);
      double dl = mbs_test_relDiff(lam, wo->lam, m->nlam, 1e-300);
      double dj = mbs_test_relDiff(jf, wo->jfrc, 6 * m->nbody, 1e-300);
      MBS_EXPECT(dq <= 1e-8, "%s %s np=%d: qdd rel diff %.3e", what, mbs_solverName(meth),
                 mbsp_size(comm), dq);
      MBS_EXPECT(dl <= 1e-8, "%s %s np=%d: lambda rel diff %.3e", what, mbs_solverName(meth),
                 mbsp_size(comm), dl);
      MBS_EXPECT(dj <= 1e-8, "%s %s np=%d: joint wrench rel diff %.3e", what, mbs_solverName(meth),
                 mbsp_size(comm), dj);
    }
  }

  // symmetry and positivity of the distributed operator: x.Ay = y.Ax, x.Ax > 0
  int n = m->nlam;
  double *x = calloc((size_t)n + 1, sizeof(double)), *y = calloc((size_t)n + 1, sizeof(double));
  double *Ax = calloc((size_t)n + 1, sizeof(double)), *Ay = calloc((size_t)n + 1, sizeof(double));
  mbsCfs *c = mbsp_engineCfs(e);
  for (int i = 0; i < n; i++) { // same global vectors on every rank
    x[i] = sin(1.0 + 0.7 * i);
    y[i] = cos(2.0 + 1.3 * i);
  }
  MBS_EXPECT_OK(mbsp_engineApply(e, x, Ax));
  MBS_EXPECT_OK(mbsp_engineApply(e, y, Ay));
  double d[4] = {0, 0, 0, 0};
  for (int i = c->l0; i < c->l1; i++) {
    d[0] += x[i] * Ay[i], d[1] += y[i] * Ax[i], d[2] += x[i] * Ax[i], d[3] += fabs(x[i] * Ay[i]);
  }
  MBS_EXPECT_OK(mbsp_engineReduce(e, d, 4));
  MBS_EXPECT(fabs(d[0] - d[1]) <= 1e-12 * d[3], "%s: x.Ay = %.17g, y.Ax = %.17g", what, d[0], d[1]);
  MBS_EXPECT(d[2] > 0, "%s: x.Ax = %g", what, d[2]);
  free(x), free(y), free(Ax), free(Ay);
  free(qdd), free(lam), free(jf);
  mbsp_engineDestroy(&e);
  mbs_workDestroy(&wo);
  mbs_stateDestroy(&s);
}

int main(int argc, char **argv) {
  if (mbsp_init(&argc, &argv, &comm)) {
    fprintf(stderr, "MPI init failed: %s\n", mbs_errMsg());
    return 1;
  }
#ifdef MBS_HAVE_PETSC
  MBS_EXPECT_OK(mbsp_petscInitialize(&argc, &argv));
#endif
  const int chain_types[][3] = {{MBS_JNT_REVOLUTE, MBS_JNT_REVOLUTE, MBS_JNT_REVOLUTE},
                                {MBS_JNT_UNIVERSAL, MBS_JNT_UNIVERSAL, MBS_JNT_UNIVERSAL},
                                {MBS_JNT_REVOLUTE, MBS_JNT_SPHERICAL, MBS_JNT_UNIVERSAL}};
  const char *names[] = {"revolute chain", "universal chain", "mixed chain"};
  char what[64];
  for (int k = 0; k < 3; k++)
    for (unsigned long long seed = 1; seed <= 2; seed++) {
      mbsModel *m;
      MBS_EXPECT_OK(mbs_test_randomModel(16 + 7 * (int)seed, chain_types[k], 3, 1, seed, &m));
      snprintf(what, sizeof what, "%s #%llu", names[k], seed);
      check_model(m, what);
      mbs_modelDestroy(&m);
    }
  for (unsigned long long seed = 1; seed <= 6; seed++) {
    mbsModel *m;
    MBS_EXPECT_OK(
        mbs_test_randomModel(12 + 3 * (int)seed, mbs_test_alltypes, 7, 0, 900 + seed, &m));
    snprintf(what, sizeof what, "random tree #%llu", seed);
    check_model(m, what);
    mbs_modelDestroy(&m);
  }
  // more ranks than bodies is an input error agreed by every rank
  {
    mbsModel *m;
    MBS_EXPECT_OK(mbs_test_randomModel(1, chain_types[0], 1, 1, 3, &m));
    mbspEngine *e = NULL;
    mbsErr err = mbsp_engineCreate(comm, m, MBSP_HALO_P2P, &e);
    if (mbsp_size(comm) > 1)
      MBS_EXPECT(err == MBS_ERR_INPUT && strstr(mbs_errMsg(), "more ranks than bodies"),
                 "got %d: %s", err, mbs_errMsg());
    mbsp_engineDestroy(&e);
    mbs_modelDestroy(&m);
  }
  long fails = mbs_test_fail;
  mbsp_allreduceSumLong(comm, &fails, 1);
  int rank = mbsp_rank(comm), size = mbsp_size(comm);
  mbsp_petscFinalize();
  mbsp_finalize(&comm);
  if (rank == 0)
    printf("test_engine np=%d: %s (%ld failure(s) over all ranks)\n", size,
           fails ? "FAILED" : "all checks passed", fails);
  return fails ? 1 : 0;
}
