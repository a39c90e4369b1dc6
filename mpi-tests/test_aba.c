/// \file test_aba.c
/// The optimised ABA (mbs_aba, src/aba.c) against the reference mbs_abaRef: joint accelerations,
/// body accelerations and joint wrenches agree to 1e-12 (relative, norm-wise) on random trees and
/// chains with every joint type, floating bases, joint axes along coordinate axes (the
/// axis-specialised kernels, both signs) and general axes, with and without applied joint forces.
/// The whole evaluation through mbs_forward (solver aba) gives the same results, and a singular
/// joint is the same error in both.
#include "mbs_test.h"
#include "flops.h"

#define MBS_ABA_TOL 1e-12

static int nspecial = 0, ngeneric = 0;

static void fillNan(double *x, int n) {
  for (int i = 0; i < n; i++) x[i] = NAN;
}

// reference vs optimised on model m; worst relative differences so far in worst[3]
static void check_model(mbsModel *m, const char *what, unsigned long long seed, int with_tau,
                        double *worst) {
  mbsState *s = NULL;
  mbsWork *w = NULL;
  MBS_EXPECT_OK(mbs_stateCreate(m, &s));
  MBS_EXPECT_OK(mbs_workCreate(m, &w));
  if (!s || !w) goto done;
  int nv = m->nv, nb6 = 6 * m->nbody;
  if (with_tau) {
    unsigned long long st = seed + 77;
    for (int d = 0; d < nv; d++) s->tau[d] = mbs_test_uniform(&st, -3, 3);
  }
  for (int b = 0; b < m->nbody; b++) {
    if (mbs_jntSpecial(m, b))
      nspecial++;
    else
      ngeneric++;
  }
  double *ref = calloc((size_t)(nv + 2 * nb6 + 1), sizeof(double));
  if (!ref) goto done;
  double *rqdd = ref, *racc = ref + nv, *rjf = ref + nv + nb6;

  // the reference after the two stages
  mbs_fwdPosition(m, s, w);
  mbs_fwdVelocity(m, s, w);
  MBS_EXPECT_OK(mbs_abaRef(m, w));
  memcpy(rqdd, w->qdd, (size_t)nv * sizeof(double));
  memcpy(racc, w->acc, (size_t)nb6 * sizeof(double));
  memcpy(rjf, w->jfrc, (size_t)nb6 * sizeof(double));

  // the optimised kernel on the same stages: it must write every output
  for (int pass = 0; pass < 2; pass++) {
    fillNan(w->qdd, nv);
    fillNan(w->acc, nb6);
    fillNan(w->jfrc, nb6);
    fillNan(w->abar, MBS_ABAR * m->nbody);
    if (pass == 0) {
      MBS_EXPECT_OK(mbs_aba(m, w));
    } else { // the whole evaluation, stages included
      fillNan(w->xpar, 12 * m->nbody);
      fillNan(w->cacc, nb6);
      fillNan(w->cbias, nb6);
      m->opt.solver = MBS_SOLVER_ABA;
      MBS_EXPECT_OK(mbs_forward(m, s, w));
    }
    double d[3] = {mbs_test_relDiff(w->qdd, rqdd, nv, 1e-300),
                   mbs_test_relDiff(w->acc, racc, nb6, 1e-300),
                   mbs_test_relDiff(w->jfrc, rjf, nb6, 1e-300)};
    static const char *const name[3] = {"qdd", "body acceleration", "joint wrench"};
    for (int k = 0; k < 3; k++) {
      if (d[k] > worst[k] || d[k] != d[k]) worst[k] = d[k] != d[k] ? INFINITY : d[k];
      MBS_EXPECT(d[k] <= MBS_ABA_TOL, "%s seed %llu (n=%d, tau %d, %s): %s rel diff %.3e", what,
                 seed, m->nbody, with_tau, pass ? "mbs_forward" : "mbs_aba", name[k], d[k]);
    }
  }
  free(ref);
done:
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
}

static void check_random(int nbody, const int *types, int ntypes, int chain,
                         unsigned long long seed, double coord, const char *what, double *worst) {
  mbsModel *m = NULL;
  MBS_EXPECT_OK(mbs_test_randomModelEx(nbody, types, ntypes, chain, seed, coord, &m));
  if (!m) return;
  check_model(m, what, seed, (int)(seed % 2), worst);
  mbs_modelDestroy(&m);
}

// a pendulum with no inertia about its joint axis (a point mass at the joint: the builder rejects
// such inertias, so the test zeroes the packed one after building): D = 0 is an error in both
// kernels, for an axis along y (specialised) and a general axis
static void check_singular(void) {
  for (int general = 0; general < 2; general++) {
    mbsModel *m = NULL;
    mbsState *s = NULL;
    mbsWork *w = NULL;
    mbsBodySpec sp;
    mbs_bodySpecDefault(&sp);
    sp.name = "bob";
    sp.axis[0] = general ? 0.6 : 0, sp.axis[1] = general ? 0 : 1, sp.axis[2] = general ? 0.8 : 0;
    sp.inertia[0] = sp.inertia[1] = sp.inertia[2] = 0.1;
    MBS_EXPECT_OK(mbs_modelCreate(&m, 1));
    if (m) MBS_EXPECT_OK(mbs_modelAddBody(m, &sp, NULL));
    if (m) MBS_EXPECT_OK(mbs_modelFinalize(m));
    if (m) memset(m->body_sinert + 1, 0, 9 * sizeof(mbsReal)); // h = 0, Io = 0
    if (m) MBS_EXPECT_OK(mbs_stateCreate(m, &s));
    if (m) MBS_EXPECT_OK(mbs_workCreate(m, &w));
    if (m && s && w) {
      MBS_EXPECT(mbs_jntSpecial(m, 0) == !general, "axis class of the test pendulum");
      mbs_fwdPosition(m, s, w);
      mbs_fwdVelocity(m, s, w);
      MBS_EXPECT(mbs_abaRef(m, w) == MBS_ERR_NUMERIC, "reference: singular joint not reported");
      MBS_EXPECT(mbs_aba(m, w) == MBS_ERR_NUMERIC, "mbs_aba: singular joint not reported");
      MBS_EXPECT(strstr(mbs_errMsg(), "singular") != NULL, "message: %s", mbs_errMsg());
    }
    mbs_workDestroy(&w);
    mbs_stateDestroy(&s);
    mbs_modelDestroy(&m);
  }
}

int main(void) {
  static const int rev[] = {MBS_JNT_REVOLUTE};
  double worst[3] = {0, 0, 0};
  int nmodel = 0;
  // random trees and chains, every joint type, half of the axes along coordinate axes
  for (unsigned long long seed = 1; seed <= 200; seed++, nmodel++)
    check_random(1 + (int)(seed % 64), mbs_test_alltypes, 7, 0, seed, 0.5, "tree", worst);
  for (unsigned long long seed = 1; seed <= 30; seed++, nmodel++)
    check_random(20 + (int)seed, mbs_test_alltypes, 7, 1, 500 + seed, 0.5, "chain", worst);
  // general axes only, and revolute joints about coordinate axes only (every body specialised)
  for (unsigned long long seed = 1; seed <= 30; seed++, nmodel++)
    check_random(1 + (int)(seed * 3), mbs_test_alltypes, 7, 0, 900 + seed, 0, "tree", worst);
  for (unsigned long long seed = 1; seed <= 30; seed++, nmodel++)
    check_random(1 + (int)(seed * 4), rev, 1, seed % 3 == 0, 1300 + seed, 1, "revolute", worst);
  check_singular();
  MBS_EXPECT(nspecial > 1000 && ngeneric > 1000, "kernel coverage: %d specialised, %d other bodies",
             nspecial, ngeneric);
  printf("%d models (%d bodies with the axis-specialised kernels, %d others): worst relative "
         "difference to the reference: qdd %.3e, body acceleration %.3e, joint wrench %.3e "
         "(tolerance %.0e)\n",
         nmodel, nspecial, ngeneric, worst[0], worst[1], worst[2], MBS_ABA_TOL);
  return mbs_test_finish("test_aba");
}
