/// \file test_flex_oracle.c
/// The serial oracle of flexible bodies (src/flex_oracle.c, docs/flexible.md 5; issue 34):
/// (a) a flexible body with m = 0 is the rigid body its beam is: qdd equals mbs_aba on the rigid
///     model to 1e-12 (a chain with revolute, universal and spherical joints, moving, gravity);
///     and the oracle on the rigid model equals mbs_aba too;
/// (b) a clamped cantilever: the oracle's eta block of M at rest is the reduced mass matrix
///     (quadrature exact), its linearised frequencies reproduce beta_1 L = 1.8751 and beta_2 L =
///     4.6941 to 1e-3 (10 elements), and K eta = its generalized gravity force gives the tip
///     deflection w L^4 / (8 E I) to 1 %;
/// (c) a free flexible pendulum (revolute to the ground, gravity, no damping) integrated by RK4
///     for 1 s: kinetic + gravity + elastic energy is kept to 1e-6 of m g L (measured 1.4e-7 at
///     h = 5e-4 s; RK4's energy error is O(h^4), with omega h = 0.17 for the highest kept mode of
///     about 330 rad/s), halving the step shrinks the drift by more than 8 (measured 22: the
///     drift is the integrator's, not a missing or inconsistent term, which would not converge),
///     and the beam does bend (elastic energy > 1e-6 J).
#include "mbs_test.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_flex.h"

static const char *const BEAM =
    "beam = { length = 1.0; E = 2.1e11; rho = 7850.0; area = 1.0e-4; Iy = 8.3333e-10; "
    "Iz = 4.0e-10; elements = 10; };";

static double rigidCase(void) {
  char a[4096], b[4096];
  mbsFlexBeamSpec s;
  mbs_flexBeamDefault(&s);
  s.length = 1, s.rho = 7850, s.area = 1e-4, s.Iy = 8.3333e-10, s.Iz = 4.0e-10;
  mbsReal mass, com[3], in[6];
  mbs_flexRigidEquivalent(&s, &mass, com, in);
  const char *head = "solver = { method = \"aba\"; }; model = { gravity = [0.3, -0.2, -9.81]; "
                     "bodies = (\n";
  const char *rest =
      "  { name = \"b2\"; parent = \"link\"; joint = { type = \"universal\"; axis = [0.0, 1.0, "
      "0.0]; axis2 = [1.0, 0.0, 0.0]; origin = [1.0, 0.0, 0.0]; q0 = [0.4, -0.3]; qd0 = [1.1, "
      "-0.7]; }; mass = 0.7; com = [0.2, 0.05, -0.1]; inertia = [0.03, 0.02, 0.025, 0.0, 0.0, "
      "0.0]; },\n"
      "  { name = \"b3\"; parent = \"b2\"; joint = { type = \"spherical\"; origin = [0.3, 0.1, "
      "0.0]; q0 = [0.9, 0.1, -0.3, 0.3]; qd0 = [0.5, -1.0, 0.3]; }; mass = 0.4; "
      "com = [0.0, 0.1, 0.05]; inertia = [0.01, 0.012, 0.008, 0.0, 0.0, 0.0]; }\n); };\n";
  const char *joint = "joint = { type = \"revolute\"; axis = [0.0, 0.6, 0.8]; q0 = 0.7; qd0 = "
                      "-1.3; stiffness = 2.0; damping = 0.1; }";
  snprintf(a, sizeof a, "%s  { name = \"link\"; %s; flexible = { %s modes = 0; }; },\n%s", head,
           joint, BEAM, rest);
  snprintf(b, sizeof b,
           "%s  { name = \"link\"; %s; mass = %.17g; com = [%.17g, 0.0, 0.0]; inertia = [%.17g, "
           "%.17g, %.17g, 0.0, 0.0, 0.0]; },\n%s",
           head, joint, mass, com[0], in[0], in[1], in[2], rest);
  mbsModel *ma = mbs_test_buildText(a), *mb = mbs_test_buildText(b);
  double worst = -1;
  if (ma && mb) {
    mbsState *st = NULL;
    mbsWork *w = NULL;
    mbsFlexOracle *oa = NULL, *ob = NULL;
    MBS_EXPECT_OK(mbs_stateCreate(mb, &st));
    MBS_EXPECT_OK(mbs_workCreate(mb, &w));
    MBS_EXPECT_OK(mbs_flexOracleCreate(ma, &oa));
    MBS_EXPECT_OK(mbs_flexOracleCreate(mb, &ob));
    if (st && w && oa && ob) {
      MBS_EXPECT_OK(mbs_forward(mb, st, w));
      int n = mbs_flexOracleSize(oa);
      MBS_EXPECT(n == mb->nv && mbs_flexOracleSize(ob) == mb->nv, "sizes %d %d", n, mb->nv);
      double ya[16], yb[16];
      MBS_EXPECT_OK(mbs_flexOracleAccel(oa, st->q, st->qd, NULL, ya));
      MBS_EXPECT_OK(mbs_flexOracleAccel(ob, st->q, st->qd, NULL, yb));
      worst = 0;
      for (int k = 0; k < n && k < 16; k++) {
        double sc = 1 + fabs(w->qdd[k]);
        MBS_EXPECT_NEAR(ya[k] / sc, w->qdd[k] / sc, 1e-12);
        MBS_EXPECT_NEAR(yb[k] / sc, w->qdd[k] / sc, 1e-12);
        worst = fmax(worst, fmax(fabs(ya[k] - w->qdd[k]), fabs(yb[k] - w->qdd[k])) / sc);
      }
    }
    mbs_flexOracleDestroy(&oa), mbs_flexOracleDestroy(&ob);
    mbs_workDestroy(&w);
    mbs_stateDestroy(&st);
  }
  mbs_modelDestroy(&ma), mbs_modelDestroy(&mb);
  return worst;
}

static void cantilever(double *freq_err, double *defl_err) {
  char t[2048];
  snprintf(t, sizeof t,
           "model = { gravity = [0.0, 0.0, -9.81]; bodies = ( { name = \"c\"; parent = "
           "\"ground\"; joint = { type = \"fixed\"; }; flexible = { %s modes = 8; nodes = ( { "
           "name = \"tip\"; position = [1.0, 0.0, 0.0]; } ); }; } ); };\n",
           BEAM);
  mbsModel *m = mbs_test_buildText(t);
  mbsFlexOracle *o = NULL;
  *freq_err = *defl_err = 1;
  if (!m) return;
  MBS_EXPECT_OK(mbs_flexOracleCreate(m, &o));
  if (o) {
    int n = mbs_flexOracleSize(o); // nv = 0: all modal
    const mbsFlexModal *md = &m->flex->b[0].modal;
    double y[64] = {0}, eta[64] = {0}, *M, *f;
    MBS_EXPECT(n == md->m && n <= 64, "n = %d", n);
    MBS_EXPECT_OK(mbs_flexOracleSystem(o, NULL, y, eta, &M, &f));
    double dM = 0;
    for (int i = 0; i < n * n; i++) dM = fmax(dM, fabs(M[i] - md->M[i]));
    MBS_EXPECT(dM < 1e-12 * md->mass, "oracle M vs reduced M: %g", dM);
    // static deflection: K eta = f (a copy of K, factored by Cholesky on the positive block)
    double K[64 * 64], Mc[64 * 64], rhs[64], lam[64];
    memcpy(K, md->K, sizeof(double) * (size_t)n * n);
    memcpy(rhs, f, sizeof(double) * (size_t)n);
    MBS_EXPECT(mbs_flexCholSolve(n, K, rhs) == 0, "K not positive definite");
    double EI = 2.1e11 * 8.3333e-10, wl = 7850 * 1e-4 * 9.81, ref = wl / (8 * EI); // L = 1
    *defl_err = fabs(-rhs[2] - ref) / ref; // tip w (gravity along -z: bending about y)
    // linearised free vibration: K w = omega^2 M w
    memcpy(K, md->K, sizeof(double) * (size_t)n * n);
    memcpy(Mc, M, sizeof(double) * (size_t)n * n);
    MBS_EXPECT(mbs_symGenEig(n, K, Mc, lam, NULL) == 0, "eigensolver");
    const double bl[2] = {1.87510407, 4.69409113};
    double wz = sqrt(EI / (7850 * 1e-4)), wy = sqrt(2.1e11 * 4.0e-10 / (7850 * 1e-4));
    double worst = 0;
    for (int r = 0; r < 4; r++) {
      double ref_w = bl[r / 2] * bl[r / 2] * (r % 2 ? wz : wy), best = 1e300;
      for (int i = 0; i < n; i++) best = fmin(best, fabs(sqrt(fmax(lam[i], 0)) - ref_w) / ref_w);
      worst = fmax(worst, best);
    }
    *freq_err = worst;
  }
  mbs_flexOracleDestroy(&o);
  mbs_modelDestroy(&m);
}

// RK4 on [q (nq = nv here: scalar joints); eta; y] for tend: the largest |E(t) - E(0)|
static double drift(const char *t, double tend, double h, double *emax) {
  mbsModel *m = mbs_test_buildText(t);
  mbsFlexOracle *o = NULL;
  double drift = 1;
  *emax = 0;
  if (!m) return drift;
  MBS_EXPECT_OK(mbs_flexOracleCreate(m, &o));
  if (o) {
    int n = mbs_flexOracleSize(o), nv = m->nv, ne = n - nv, S = nv + ne + n;
    double x[96] = {0}, k[4][96], xs[96], E0 = 0, T, V;
    MBS_EXPECT(S <= 96 && m->nq == nv, "state of %d", S);
    // x = [q (nv); eta (ne); y (n)]
    for (int i = 0; i < nv; i++) x[i] = m->q0[i], x[nv + ne + i] = m->qd0[i];
    for (int st = 0; S <= 96 && st <= (int)lround(tend / h); st++) {
      MBS_EXPECT_OK(mbs_flexOracleEnergy(o, x, x + nv + ne, x + nv, &T, &V));
      double ee = 0;
      const mbsFlexModal *md = &m->flex->b[0].modal;
      for (int i = 0; i < ne; i++)
        for (int j = 0; j < ne; j++) ee += 0.5 * x[nv + i] * md->K[i * ne + j] * x[nv + j];
      *emax = fmax(*emax, ee);
      if (st == 0) E0 = T + V, drift = 0;
      drift = fmax(drift, fabs(T + V - E0));
      for (int s = 0; s < 4; s++) {
        static const double c[4] = {0, 0.5, 0.5, 1};
        for (int i = 0; i < S; i++) xs[i] = x[i] + (s ? c[s] * h * k[s - 1][i] : 0);
        for (int i = 0; i < nv; i++) k[s][i] = xs[nv + ne + i];
        for (int i = 0; i < ne; i++) k[s][nv + i] = xs[nv + ne + nv + i];
        MBS_EXPECT_OK(mbs_flexOracleAccel(o, xs, xs + nv + ne, xs + nv, k[s] + nv + ne));
      }
      for (int i = 0; i < S; i++) x[i] += h / 6 * (k[0][i] + 2 * k[1][i] + 2 * k[2][i] + k[3][i]);
    }
  }
  mbs_flexOracleDestroy(&o);
  mbs_modelDestroy(&m);
  return drift;
}

static double pendulum(double h, double *emax) {
  char t[2048];
  snprintf(t, sizeof t,
           "model = { gravity = [0.0, 0.0, -9.81]; bodies = ( { name = \"p\"; parent = "
           "\"ground\"; joint = { type = \"revolute\"; axis = [0.0, 1.0, 0.0]; }; flexible = { %s "
           "modes = 4; }; } ); };\n",
           BEAM);
  return drift(t, 1.0, h, emax);
}

// (d) a rigid body fixed to the tip node of a cantilever, com c along x: the static tip
// deflection is w L^4/(8 EI) + P L^3/(3 EI) + P c L^2/(2 EI) (P = M g; exact for the
// Craig-Bampton body with the tip as interface); returns the relative error
static double tipMass(void) {
  char t[2048];
  snprintf(t, sizeof t,
           "model = { gravity = [0.0, 0.0, -9.81]; bodies = ( { name = \"c\"; parent = "
           "\"ground\"; joint = { type = \"fixed\"; }; flexible = { %s modes = 4; nodes = ( { "
           "name = \"tip\"; position = [1.0, 0.0, 0.0]; } ); }; },\n { name = \"m\"; parent = "
           "\"c\"; joint = { type = \"fixed\"; node = \"tip\"; }; mass = 0.5; com = [0.2, 0.0, "
           "0.0]; inertia = [0.01, 0.01, 0.01, 0.0, 0.0, 0.0]; } ); };\n",
           BEAM);
  mbsModel *m = mbs_test_buildText(t);
  mbsFlexOracle *o = NULL;
  double err = 1;
  if (!m) return err;
  MBS_EXPECT_OK(mbs_flexOracleCreate(m, &o));
  if (o) {
    int n = mbs_flexOracleSize(o);
    double y[64] = {0}, eta[64] = {0}, *f, K[64 * 64], rhs[64];
    MBS_EXPECT(n == m->flex->b[0].modal.m && n <= 64, "n = %d", n);
    MBS_EXPECT_OK(mbs_flexOracleSystem(o, NULL, y, eta, NULL, &f));
    memcpy(K, m->flex->b[0].modal.K, sizeof(double) * (size_t)n * n);
    memcpy(rhs, f, sizeof(double) * (size_t)n);
    MBS_EXPECT(mbs_flexCholSolve(n, K, rhs) == 0, "K not positive definite");
    double EI = 2.1e11 * 8.3333e-10, wl = 7850 * 1e-4 * 9.81, P = 0.5 * 9.81;
    double ref = wl / (8 * EI) + P / (3 * EI) + P * 0.2 / (2 * EI);
    err = fabs(-rhs[2] - ref) / ref;
  }
  mbs_flexOracleDestroy(&o);
  mbs_modelDestroy(&m);
  return err;
}

// (e) a flexible pendulum with a rigid body on a universal joint at its tip node, swinging in
// 3-D: exercises the node frame's rotation (exp of the node's rotation vector) and its bias
static double nodePendulum(double h, double *emax) {
  char t[2048];
  snprintf(t, sizeof t,
           "model = { gravity = [0.0, 0.0, -9.81]; bodies = ( { name = \"p\"; parent = "
           "\"ground\"; joint = { type = \"revolute\"; axis = [0.0, 1.0, 0.0]; qd0 = 0.5; }; "
           "flexible = { %s modes = 2; nodes = ( { name = \"tip\"; position = [1.0, 0.0, 0.0]; } "
           "); }; },\n { name = \"b\"; parent = \"p\"; joint = { type = \"universal\"; node = "
           "\"tip\"; axis = [0.0, 0.0, 1.0]; axis2 = [0.0, 1.0, 0.0]; q0 = [0.3, 0.2]; qd0 = "
           "[2.0, -1.0]; }; mass = 0.2; com = [0.2, 0.02, 0.0]; inertia = [0.002, 0.003, 0.004, "
           "0.0, 0.0, 0.0]; } ); };\n",
           BEAM);
  return drift(t, 0.25, h, emax);
}

int main(void) {
  double r = rigidCase();
  printf("(a) m = 0 against aba: worst |qdd| difference (scaled) %.3g\n", r);
  MBS_EXPECT(r >= 0 && r < 1e-12, "rigid equivalence %g", r);
  double fe, de;
  cantilever(&fe, &de);
  printf("(b) cantilever: worst bending frequency error %.3g, tip deflection error %.3g\n", fe, de);
  MBS_EXPECT(fe < 1e-3, "frequencies %g", fe);
  MBS_EXPECT(de < 1e-2, "deflection %g", de);
  double e1, e2, mgl = 7850 * 1e-4 * 9.81 * 1.0;
  double d1 = pendulum(5e-4, &e1), d2 = pendulum(2.5e-4, &e2);
  printf("(c) flexible pendulum 1 s: energy drift %.3g J (h = 5e-4), %.3g J (h = 2.5e-4), m g L = "
         "%.3g J, largest elastic energy %.3g J\n",
         d1, d2, mgl, e1);
  MBS_EXPECT(d1 < 1e-6 * mgl, "energy drift %g", d1);
  MBS_EXPECT(d2 < d1 / 8 || d2 < 1e-12 * mgl, "drift does not converge: %g %g", d1, d2);
  MBS_EXPECT(e1 > 1e-6, "the beam did not bend: %g", e1);
  double tm = tipMass();
  printf("(d) tip mass on the tip node (com offset): static tip deflection error %.3g\n", tm);
  MBS_EXPECT(tm < 1e-9, "tip mass deflection %g", tm);
  double n1 = nodePendulum(2e-4, &e1), n2 = nodePendulum(1e-4, &e2);
  printf("(e) body on the tip node, 3-D, 0.25 s: energy drift %.3g J (h = 2e-4), %.3g J (h = "
         "1e-4), largest elastic energy %.3g J\n",
         n1, n2, e1);
  MBS_EXPECT(n1 < 1e-6 * mgl, "energy drift %g", n1);
  MBS_EXPECT(n2 < n1 / 8 || n2 < 1e-12 * mgl, "drift does not converge: %g %g", n1, n2);
  MBS_EXPECT(e1 > 1e-7, "the beam did not bend: %g", e1);
  return mbs_test_finish("test_flex_oracle");
}
