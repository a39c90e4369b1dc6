/// \file test_modes.c
/// The linearisation and eigen solve of `mbspar modes` (src/modes.c, docs/modes.md): M against
/// the kinetic energy on random models of every joint type, dsygv against the library's own
/// Jacobi solver (mbs_symGenEig) on the same M and K, K of a spring chain without gravity against
/// diag(k), the zero modes of a free body, a turned spherical pendulum (the charts of K and M), the
/// residual away from an equilibrium, the refusal of loop models. usage: test_modes CONFIGS_DIR
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mbs_test.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_flex.h"
#include "mbspar/mbs_modes.h"

static const char *cfgdir = "configs";

static mbsErr load(const char *text, const char *name, mbsModel **m) {
  mbsConfig *c = NULL;
  *m = NULL;
  mbsErr e = mbs_configParse(text, name, NULL, 0, &c);
  if (!e) e = mbs_configBuildModel(c, m);
  mbs_configDestroy(&c);
  return e;
}

// linearise m at its q0; the caller destroys *md
static mbsErr linearise(const mbsModel *m, mbsModes **md) {
  mbsState *s = NULL;
  mbsWork *w = NULL;
  MBS_CALL(mbs_modesCreate(m, md));
  mbsErr e = mbs_stateCreate(m, &s);
  if (!e) e = mbs_workCreate(m, &w);
  if (!e) e = mbs_modesLinearise(m, s, w, *md);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  return e;
}

// random models of every moving joint type: 1/2 qd^T M qd = kinetic energy; dsygv = Jacobi
static void test_random(void) {
  static const int types[] = {MBS_JNT_REVOLUTE,  MBS_JNT_PRISMATIC, MBS_JNT_CYLINDRICAL,
                              MBS_JNT_UNIVERSAL, MBS_JNT_SPHERICAL, MBS_JNT_FREE};
  for (unsigned long long seed = 1; seed <= 3; seed++) {
    mbsModel *m = NULL;
    mbsModes *md = NULL;
    mbsState *s = NULL;
    mbsWork *w = NULL;
    MBS_EXPECT_OK(mbs_test_randomModel(6, types, 6, seed == 2, seed, &m));
    if (!m) continue;
    MBS_EXPECT_OK(linearise(m, &md));
    MBS_EXPECT_OK(mbs_stateCreate(m, &s));
    MBS_EXPECT_OK(mbs_workCreate(m, &w));
    if (md && s && w) {
      const int n = md->n;
      MBS_EXPECT(md->m_asym < 1e-13, "seed %llu: M asymmetry %g", seed, md->m_asym);
      // M against the kinetic energy of random velocities at q0
      unsigned long long st = seed * 7919;
      for (int rep = 0; rep < 3; rep++) {
        for (int i = 0; i < n; i++) s->qd[i] = mbs_test_uniform(&st, -2, 2);
        mbs_fwdPosition(m, s, w);
        mbs_fwdVelocity(m, s, w);
        double ke = mbs_kineticEnergy(m, w), qmq = 0;
        for (int i = 0; i < n; i++)
          for (int j = 0; j < n; j++) qmq += s->qd[i] * md->M[(size_t)i * n + j] * s->qd[j];
        MBS_EXPECT_NEAR(0.5 * qmq, ke, 1e-12 * fabs(ke));
      }
      // dsygv against the Jacobi solver on the same M and K
      double *A = malloc((size_t)n * n * sizeof *A), *B = malloc((size_t)n * n * sizeof *B);
      double *lam = malloc((size_t)n * sizeof *lam);
      MBS_EXPECT_OK(mbs_modesSolve(md));
      if (A && B && lam) {
        memcpy(A, md->K, (size_t)n * n * sizeof *A);
        memcpy(B, md->M, (size_t)n * n * sizeof *B);
        MBS_EXPECT(mbs_symGenEig(n, A, B, lam, NULL) == 0, "seed %llu: Jacobi failed", seed);
        double lmax = 0;
        for (int k = 0; k < n; k++) lmax = fmax(lmax, fabs(lam[k]));
        for (int k = 0; k < n; k++) MBS_EXPECT_NEAR(md->lambda[k], lam[k], 1e-10 * lmax);
        // the shapes solve K v = lambda M v, largest component 1
        for (int k = 0; k < n; k++) {
          double res = 0, vmax = 0, kmax = 0;
          for (int i = 0; i < n; i++) {
            double kv = 0, mv = 0;
            for (int j = 0; j < n; j++) {
              kv += md->K[(size_t)i * n + j] * md->V[(size_t)j * n + k];
              mv += md->M[(size_t)i * n + j] * md->V[(size_t)j * n + k];
            }
            res = fmax(res, fabs(kv - md->lambda[k] * mv));
            kmax = fmax(kmax, fabs(kv) + fabs(md->lambda[k] * mv));
            vmax = fmax(vmax, md->V[(size_t)i * n + k]);
          }
          MBS_EXPECT(res <= 1e-10 * kmax + 1e-14, "seed %llu mode %d: residual %g", seed, k, res);
          MBS_EXPECT_NEAR(vmax, 1.0, 1e-15);
        }
      }
      free(A), free(B), free(lam);
      // random q0 with joint forces: not an equilibrium
      MBS_EXPECT(md->r_max > 0 && md->qdd_max > 0, "seed %llu: residual %g", seed, md->r_max);
    }
    mbs_workDestroy(&w);
    mbs_stateDestroy(&s);
    mbs_modesDestroy(&md);
    mbs_modelDestroy(&m);
  }
}

// a revolute chain with joint springs and no gravity at its rest position: K = diag(k), r = 0
static void test_spring_chain(void) {
  static const char *text =
      "model = { gravity = [0, 0, 0]; bodies = (\n"
      "{ name = \"a\"; joint = { type = \"revolute\"; stiffness = 10.0; springref = 0.2; q0 = "
      "[0.2]; }; mass = 1.0; com = [0, 0, -0.5]; inertia = [0.1, 0.1, 0.01, 0, 0, 0]; },\n"
      "{ name = \"b\"; parent = \"a\"; joint = { type = \"revolute\"; origin = [0, 0, -1]; "
      "stiffness = 20.0; q0 = [0.0]; }; mass = 2.0; com = [0, 0, -0.5]; inertia = [0.1, 0.1, "
      "0.01, 0, 0, 0]; },\n"
      "{ name = \"c\"; parent = \"b\"; joint = { type = \"revolute\"; origin = [0, 0, -1]; "
      "stiffness = 5.0; springref = -0.3; q0 = [-0.3]; }; mass = 0.5; com = [0, 0, -0.5]; "
      "inertia = [0.1, 0.1, 0.01, 0, 0, 0]; }); };\n";
  mbsModel *m = NULL;
  mbsModes *md = NULL;
  MBS_EXPECT_OK(load(text, "spring_chain", &m));
  if (m) MBS_EXPECT_OK(linearise(m, &md));
  if (md) {
    static const double k[3] = {10, 20, 5};
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) MBS_EXPECT_NEAR(md->K[i * 3 + j], i == j ? k[i] : 0.0, 1e-9 * 20);
    MBS_EXPECT(md->r_max == 0, "residual %g at the springs' rest", md->r_max);
    MBS_EXPECT_OK(mbs_modesSolve(md));
    for (int i = 0; i < 3; i++) MBS_EXPECT(!md->zero[i], "mode %d flagged zero", i);
  }
  mbs_modesDestroy(&md);
  mbs_modelDestroy(&m);
}

// a free body without gravity: six zero modes; tilted on a spherical joint: not an equilibrium
static void test_free_and_tilted(void) {
  static const char *free_text =
      "model = { gravity = [0, 0, 0]; bodies = ( { name = \"f\"; joint = { type = \"free\"; }; "
      "mass = 2.0; inertia = [0.1, 0.2, 0.3, 0.01, 0, 0]; } ); };\n";
  static const char *tilt_text =
      "model = { gravity = [0, 0, -9.81]; bodies = ( { name = \"s\"; joint = { type = "
      "\"spherical\"; q0 = [0.9553364891256060, 0.2955202066613396, 0, 0]; }; mass = 2.0; "
      "com = [0, 0, -0.6]; inertia = [0.03, 0.03, 0.01, 0, 0, 0]; } ); };\n";
  mbsModel *m = NULL;
  mbsModes *md = NULL;
  MBS_EXPECT_OK(load(free_text, "free", &m));
  if (m) MBS_EXPECT_OK(linearise(m, &md));
  if (md) {
    MBS_EXPECT_OK(mbs_modesSolve(md));
    for (int i = 0; i < 6; i++) MBS_EXPECT(md->zero[i], "free body: mode %d not zero", i);
  }
  mbs_modesDestroy(&md);
  mbs_modelDestroy(&m);
  MBS_EXPECT_OK(load(tilt_text, "tilted", &m));
  if (m) MBS_EXPECT_OK(linearise(m, &md));
  if (md) { // tilted by 0.6 rad about x: gravity torque m g d sin 0.6 about x
    MBS_EXPECT_NEAR(md->r_max, 2 * 9.81 * 0.6 * sin(0.6), 1e-12);
    MBS_EXPECT(md->qdd_max > 1, "tilted: qdd %g", md->qdd_max);
  }
  mbs_modesDestroy(&md);
  mbs_modelDestroy(&m);
}

// a spherical pendulum whose body frame is turned by 0.7 rad about y at its equilibrium (the com
// off the body's z axis, q0 turning it under the pivot): K (differences in the joint's local
// rotation vector) and M (the child-frame angular velocity) must use the same coordinates, else
// the swings differ from the closed form sqrt(m g d / (I + m d^2)) of the isotropic body
static void test_turned_spherical(void) {
  static const char *text =
      "model = { gravity = [0, 0, -9.81]; bodies = ( { name = \"bob\"; joint = { type = "
      "\"spherical\"; q0 = [0.9393727128473789, 0.0, 0.34289780745545134, 0.0]; }; mass = 2.0; "
      "com = [0.3865306123426146, 0.0, -0.4589053123706931]; inertia = [0.02, 0.02, 0.02, 0, 0, "
      "0]; } ); };\n";
  mbsModel *m = NULL;
  mbsModes *md = NULL;
  MBS_EXPECT_OK(load(text, "turned", &m));
  if (m) MBS_EXPECT_OK(linearise(m, &md));
  if (md) {
    MBS_EXPECT(md->r_max < 1e-12, "turned: residual %g at the equilibrium", md->r_max);
    MBS_EXPECT_OK(mbs_modesSolve(md));
    double ref = sqrt(2 * 9.81 * 0.6 / (0.02 + 2 * 0.36));
    MBS_EXPECT(md->zero[0] && !md->zero[1], "turned: zero modes %d %d", md->zero[0], md->zero[1]);
    for (int k = 1; k < 3; k++) MBS_EXPECT_NEAR(mbs_modesOmega(md->lambda[k]), ref, 1e-9 * ref);
  }
  mbs_modesDestroy(&md);
  mbs_modelDestroy(&m);
}

// one dof (pendulum.cfg at q0 = 0.5): omega^2 = m g d cos q0 / I_pivot, the residual m g d sin q0
static void test_pendulum(void) {
  char path[4096];
  snprintf(path, sizeof path, "%s/pendulum.cfg", cfgdir);
  char *text = mbs_test_slurp(path);
  MBS_EXPECT(text != NULL, "cannot read %s", path);
  mbsModel *m = NULL;
  mbsModes *md = NULL;
  if (text) MBS_EXPECT_OK(load(text, path, &m));
  if (m) MBS_EXPECT_OK(linearise(m, &md));
  if (md) {
    const double mgd = 9.81 * 0.5, ip = 0.083358333333333 + 0.25;
    MBS_EXPECT_NEAR(md->r_max, mgd * sin(0.5), 1e-12);
    MBS_EXPECT_OK(mbs_modesSolve(md));
    MBS_EXPECT_NEAR(md->lambda[0], mgd * cos(0.5) / ip, 1e-9 * mgd / ip);
    MBS_EXPECT_NEAR(md->V[0], 1.0, 0);
  }
  mbs_modesDestroy(&md);
  mbs_modelDestroy(&m);
  free(text);
}

// closed loops: refused
static void test_loops(void) {
  char path[4096];
  snprintf(path, sizeof path, "%s/fourbar.cfg", cfgdir);
  char *text = mbs_test_slurp(path);
  MBS_EXPECT(text != NULL, "cannot read %s", path);
  mbsModel *m = NULL;
  mbsModes *md = NULL;
  if (text) MBS_EXPECT_OK(load(text, path, &m));
  if (m) MBS_EXPECT(mbs_modesCreate(m, &md) == MBS_ERR_UNSUPPORTED, "loop model accepted");
  MBS_EXPECT(md == NULL, "loop model: allocated");
  mbs_modelDestroy(&m);
  free(text);
}

int main(int argc, char **argv) {
  if (argc > 1) cfgdir = argv[1];
  test_random();
  test_spring_chain();
  test_free_and_tilted();
  test_turned_spherical();
  test_pendulum();
  test_loops();
  return mbs_test_finish("test_modes");
}
