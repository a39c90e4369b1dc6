/// \file test_schur.c
/// The exact elimination (src/schur/) against the ABA oracle, serially: the whole model as one
/// segment and the model cut into 2, 3, random and one-body segments (each segment eliminates
/// its own joints, the dense cut-joint system joins them), on random chains and trees with every
/// joint type and floating bases. Checks qdd, lambda and joint wrenches to 1e-10 relative, and
/// that the condensed systems are symmetric; and 16384-link grounded chains cut in 1-8 pieces.
#include "mbspar/mbs_schur.h"
#include "mbs_test.h"
#include "mbspar/mbs_config.h"

static double worst_q, worst_l, worst_f;
static double tol = 1e-10; // relative to ABA

// the model cut at the given segment starts, solved, compared with ABA's results
static void check_cut(const mbsModel *m, mbsWork *w, const int *start, int nseg, const double *qdd,
                      const double *lam, const double *jf, const char *what) {
  mbsSchur **seg = calloc((size_t)nseg, sizeof *seg);
  for (int k = 0; k < nseg; k++) MBS_EXPECT_OK(mbs_schurCreate(m, start[k], start[k + 1], &seg[k]));
  memset(w->qdd, 0, sizeof(double) * (size_t)m->nv);
  memset(w->lam, 0, sizeof(double) * (size_t)(m->nlam > 0 ? m->nlam : 1));
  MBS_EXPECT_OK(mbs_schurSolveSegments(m, w, seg, nseg));
  // condensed systems are symmetric (relative to the largest entry of all of them: a component
  // welded to the ground has a zero system up to roundoff)
  double asym = 0, mx = 1e-300;
  for (int k = 0; k < nseg; k++)
    for (int c = 0; c < seg[k]->ncomp; c++) {
      const mbsSchurComp *cp = seg[k]->comp + c;
      for (int i = 0; i < cp->n; i++)
        for (int j = 0; j < cp->n; j++) {
          double a = fabs(cp->C[cp->n * i + j] - cp->C[cp->n * j + i]);
          if (a > asym) asym = a;
          if (fabs(cp->C[cp->n * i + j]) > mx) mx = fabs(cp->C[cp->n * i + j]);
        }
    }
  MBS_EXPECT(asym <= 1e-12 * mx, "%s (%d segments): condensed systems not symmetric (%.3e)", what,
             nseg, asym / mx);
  double dq = mbs_test_relDiff(w->qdd, qdd, m->nv, 1e-300);
  double dl = mbs_test_relDiff(w->lam, lam, m->nlam, 1e-300);
  double df = mbs_test_relDiff(w->jfrc, jf, 6 * m->nbody, 1e-300);
  if (dq > worst_q) worst_q = dq;
  if (dl > worst_l) worst_l = dl;
  if (df > worst_f) worst_f = df;
  if (getenv("MBS_TEST_VERBOSE"))
    printf("%s (%d segments): qdd %.3e lambda %.3e wrench %.3e\n", what, nseg, dq, dl, df);
  MBS_EXPECT(dq <= tol, "%s (%d segments): qdd rel diff to ABA %.3e", what, nseg, dq);
  MBS_EXPECT(dl <= tol, "%s (%d segments): lambda rel diff to ABA %.3e", what, nseg, dl);
  MBS_EXPECT(df <= tol, "%s (%d segments): joint wrench rel diff to ABA %.3e", what, nseg, df);
  for (int k = 0; k < nseg; k++) mbs_schurDestroy(&seg[k]);
  free(seg);
}

static void check_model(mbsModel *m, const char *what, unsigned long long seed) {
  mbsState *s;
  mbsWork *w;
  MBS_EXPECT_OK(mbs_stateCreate(m, &s));
  MBS_EXPECT_OK(mbs_workCreate(m, &w));
  m->opt.solver = MBS_SOLVER_ABA;
  MBS_EXPECT_OK(mbs_forward(m, s, w));
  int n = m->nbody;
  double *qdd = malloc(sizeof(double) * (size_t)(m->nv + 1));
  double *lam = malloc(sizeof(double) * (size_t)(m->nlam + 1));
  double *jf = malloc(sizeof(double) * 6 * (size_t)n);
  memcpy(qdd, w->qdd, sizeof(double) * (size_t)m->nv);
  mbs_constraintLambda(m, w);
  memcpy(lam, w->lam, sizeof(double) * (size_t)m->nlam);
  memcpy(jf, w->jfrc, sizeof(double) * 6 * (size_t)n);
  int *start = malloc(sizeof(int) * (size_t)(n + 1));
  // one segment, halves, thirds, every body alone, random cuts
  for (int nseg = 1; nseg <= 3 && nseg <= n; nseg++) {
    for (int k = 0; k <= nseg; k++) start[k] = (int)((long)n * k / nseg);
    check_cut(m, w, start, nseg, qdd, lam, jf, what);
  }
  for (int k = 0; k <= n; k++) start[k] = k;
  check_cut(m, w, start, n, qdd, lam, jf, what);
  unsigned long long st = seed * 7919 + 3;
  for (int rep = 0; rep < 3; rep++) {
    int nseg = 1;
    start[0] = 0;
    for (int b = 1; b < n; b++)
      if (mbs_test_rand(&st) < 0.3) start[nseg++] = b;
    start[nseg] = n;
    check_cut(m, w, start, nseg, qdd, lam, jf, what);
  }
  free(start);
  free(qdd), free(lam), free(jf);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
}

// A long grounded chain cut in a few pieces: the top piece's port system comes from a path of
// thousands of joints down from the ground. Eliminated leaf-first, its ground pivot would come last
// and the port system would be a difference of huge nearly equal terms (not even positive definite
// at 16384 links); the solver eliminates such paths from the ground down instead.
static void check_long_chain(int n, double q0, double qd0) {
  char text[1024];
  snprintf(text, sizeof text,
           "model = { gravity = [2.0, 0.0, -9.81]; chain = { n = %d; joint = \"revolute\"; "
           "axis = [0.0, 1.0, 0.0]; direction = [0.0, 0.0, -1.0]; length = 0.02; mass = 0.01; "
           "shape = \"rod\"; radius = 0.002; q0 = %g; qd0 = %g; }; };",
           n, q0, qd0);
  mbsConfig *c;
  mbsModel *m;
  MBS_EXPECT_OK(mbs_configParse(text, "long-chain.cfg", NULL, 0, &c));
  MBS_EXPECT_OK(mbs_configBuildModel(c, &m));
  mbsState *s;
  mbsWork *w;
  MBS_EXPECT_OK(mbs_stateCreate(m, &s));
  MBS_EXPECT_OK(mbs_workCreate(m, &w));
  m->opt.solver = MBS_SOLVER_ABA;
  MBS_EXPECT_OK(mbs_forward(m, s, w));
  double *qdd = malloc(sizeof(double) * (size_t)m->nv);
  double *lam = malloc(sizeof(double) * (size_t)m->nlam);
  double *jf = malloc(sizeof(double) * 6 * (size_t)n);
  memcpy(qdd, w->qdd, sizeof(double) * (size_t)m->nv);
  mbs_constraintLambda(m, w);
  memcpy(lam, w->lam, sizeof(double) * (size_t)m->nlam);
  memcpy(jf, w->jfrc, sizeof(double) * 6 * (size_t)n);
  char what[96];
  snprintf(what, sizeof what, "%d-link chain q0 %g qd0 %g", n, q0, qd0);
  // the constraint-force matrix of an n-link chain has a condition number growing like n^2
  // (~3e8 here, eps * kappa ~ 6e-8); ABA's lambda (Newton-Euler from its qdd) and the
  // one-segment elimination differ by 4e-10 on the hanging chain, so 1e-8 (1e-10 elsewhere)
  tol = 1e-8;
  for (int nseg = 1; nseg <= 8; nseg *= 2) {
    int start[9];
    for (int k = 0; k <= nseg; k++) start[k] = (int)((long)n * k / nseg);
    check_cut(m, w, start, nseg, qdd, lam, jf, what);
  }
  tol = 1e-10;
  free(qdd), free(lam), free(jf);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&m);
  mbs_configDestroy(&c);
}

int main(void) {
  char what[64];
  const int rev[] = {MBS_JNT_REVOLUTE},
            mix[] = {MBS_JNT_REVOLUTE, MBS_JNT_UNIVERSAL, MBS_JNT_SPHERICAL};
  const int pri[] = {MBS_JNT_PRISMATIC, MBS_JNT_CYLINDRICAL, MBS_JNT_FIXED};
  const int *chain_types[] = {rev, mix, pri};
  const char *names[] = {"revolute chain", "mixed chain", "prismatic/cylindrical/fixed chain"};
  for (int k = 0; k < 3; k++)
    for (unsigned long long seed = 1; seed <= 3; seed++) {
      mbsModel *m;
      MBS_EXPECT_OK(
          mbs_test_randomModel(5 + 9 * (int)seed, chain_types[k], k == 0 ? 1 : 3, 1, seed, &m));
      snprintf(what, sizeof what, "%s #%llu", names[k], seed);
      check_model(m, what, seed);
      mbs_modelDestroy(&m);
    }
  for (unsigned long long seed = 1; seed <= 40; seed++) {
    mbsModel *m;
    MBS_EXPECT_OK(
        mbs_test_randomModel(2 + (int)(seed % 30), mbs_test_alltypes, 7, 0, 900 + seed, &m));
    snprintf(what, sizeof what, "random tree #%llu", seed);
    check_model(m, what, seed);
    mbs_modelDestroy(&m);
  }
  check_long_chain(16384, 0.0, 0.0);
  check_long_chain(16384, 0.01, 0.5);
  printf("worst rel diff to ABA: qdd %.3e, lambda %.3e, joint wrench %.3e\n", worst_q, worst_l,
         worst_f);
  return mbs_test_finish("test_schur");
}
