/// \file test_static.c
/// Static equilibrium by energy drainage (src/static.c): the seed-001 acceptance cases (pendulum
/// released horizontal -> -12.9455 J hanging; 50-link chain -> closed-form hanging energy), both
/// drainage operators, both serial forward methods, quaternion joints, springs, the history
/// decimation, the stopping reasons and the `static` config group.
/// usage: test_static CONFIGS_DIR
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mbs_test.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_static.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static const char *cfgdir = "configs";

/// Parse text (with overrides) and build the model and the static options.
static mbsErr load(const char *text, const char *name, const char *const *sets, int nsets,
                   mbsModel **m, mbsStaticOpt *opt) {
  mbsConfig *c = NULL;
  *m = NULL;
  mbsErr e = mbs_configParse(text, name, sets, nsets, &c);
  if (!e) e = mbs_configBuildModel(c, m);
  if (!e) *opt = c->statics;
  mbs_configDestroy(&c);
  return e;
}

static mbsErr loadFile(const char *file, const char *const *sets, int nsets, mbsModel **m,
                       mbsStaticOpt *opt) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", cfgdir, file);
  char *text = mbs_test_slurp(path);
  if (!text) return mbs_errSet(MBS_ERR_IO, "%s: cannot read", path);
  mbsErr e = load(text, path, sets, nsets, m, opt);
  free(text);
  return e;
}

/// Run the static solve serially; results in *st (caller destroys), final state in *ps.
static mbsErr solve(const mbsModel *m, const mbsStaticOpt *opt, mbsStatic **st, mbsState **ps) {
  mbsWork *w = NULL;
  MBS_CALL(mbs_stateCreate(m, ps));
  MBS_CALL(mbs_workCreate(m, &w));
  mbsErr e = mbs_staticCreate(m, opt, st);
  mbsStaticSerial sc = {m, w};
  if (!e) e = mbs_staticSolve(*st, *ps, mbs_staticForwardSerial, &sc);
  mbs_workDestroy(&w);
  return e;
}

static double maxAbs(const double *x, int n) {
  double mx = 0;
  for (int i = 0; i < n; i++) mx = fmax(mx, fabs(x[i]));
  return mx;
}

// seed 001 pendulum: -m g L/2 = -1.7595 * 9.81 * 0.75 = -12.94552125 J, hanging (q = 0)
static void test_pendulum(const char *method, const char *drain, const char *omega) {
  char s1[64], s2[64], s3[64];
  snprintf(s1, sizeof s1, "solver.method=%s", method);
  snprintf(s2, sizeof s2, "static.method=%s", drain);
  snprintf(s3, sizeof s3, "static.omega_d=%s", omega);
  const char *sets[3] = {s1, s2, s3};
  mbsModel *m = NULL;
  mbsStaticOpt opt;
  mbsStatic *st = NULL;
  mbsState *s = NULL;
  MBS_EXPECT_OK(loadFile("seed001_pendulum.cfg", sets, 3, &m, &opt));
  if (!m) return;
  MBS_EXPECT_NEAR(m->q0[0], M_PI / 2, 1e-15); // released horizontal
  MBS_EXPECT_OK(solve(m, &opt, &st, &s));
  if (st) {
    printf("pendulum %s/%s: %d evaluations, %d resets, PE %.10f J, q %.3e\n", method, drain,
           st->iterations, st->resets, st->pe, s->q[0]);
    MBS_EXPECT(st->reason == MBS_STATIC_CONVERGED, "%s/%s did not converge", method, drain);
    // the seed's number to 4 decimals, and the closed form much tighter
    MBS_EXPECT(fabs(st->pe - (-12.9455)) < 5e-5, "PE %.6f J is not -12.9455 J", st->pe);
    MBS_EXPECT_NEAR(st->pe, -1.7595 * 9.81 * 1.5 / 2, 1e-8);
    MBS_EXPECT_NEAR(st->pe0, 0.0, 1e-12); // horizontal: centre of mass at the hinge height
    MBS_EXPECT_NEAR(s->q[0], 0.0, 1e-4);  // hanging vertical
    MBS_EXPECT_NEAR(s->qd[0], 0.0, 0.0);  // returned at rest
    MBS_EXPECT(st->ke < opt.ke_tol, "KE %.3e", st->ke);
    MBS_EXPECT(st->dq_max < opt.dq_tol, "dq %.3e", st->dq_max);
    // two quiet steps bound the residual acceleration (plus the drain terms)
    double h = opt.dt, wd = opt.method == MBS_STATIC_DRAIN ? opt.omega_d : 0;
    double bound = 2 * opt.dq_tol / (h * h) + 2 * wd * opt.dq_tol / h + wd * wd * opt.dq_tol;
    MBS_EXPECT(st->qdd_res <= bound * 1.01, "residual acceleration %.3e > %.3e", st->qdd_res,
               bound);
    // the drained energy went through kinetic energy: its peak is the energy released (up to the
    // integrator's energy error)
    MBS_EXPECT(st->ke_max > 1 && st->ke_max <= (st->pe0 - st->pe) * (1 + 1e-3), "KE max %.6f",
               st->ke_max);
    if (!strcmp(drain, "kinetic")) MBS_EXPECT(st->resets >= 1, "no velocity reset");
    if (!strcmp(drain, "drain")) MBS_EXPECT(st->resets == 0, "resets in drain mode");
    // history: starts at the initial state, energies never below the equilibrium
    MBS_EXPECT(st->nhist >= 2 && st->hist_iter[0] == 0, "history start");
    MBS_EXPECT_NEAR(st->hist_pe[0], st->pe0, 0.0);
    for (int k = 0; k < st->nhist; k++)
      MBS_EXPECT(st->hist_pe[k] >= st->pe - 1e-6 && st->hist_ke[k] >= 0, "history %d", k);
  }
  mbs_staticDestroy(&st);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&m);
}

// seed 001 chain: 50 links of the pendulum's beam, 5 deg then +1 deg per link; hanging
// equilibrium PE = -m g L sum (i - 1/2) = -m g L n^2 / 2
static void test_chain50(void) {
  mbsModel *m = NULL;
  mbsStaticOpt opt;
  mbsStatic *st = NULL;
  mbsState *s = NULL;
  MBS_EXPECT_OK(loadFile("seed001_chain50.cfg", NULL, 0, &m, &opt));
  if (!m) return;
  MBS_EXPECT(m->nbody == 50 && m->nv == 50, "chain size %d", m->nbody);
  // initial angles: 5 deg from vertical, each link 1 deg more (relative 1 deg)
  MBS_EXPECT_NEAR(m->q0[0], 5 * M_PI / 180, 1e-15);
  for (int d = 1; d < 50; d++) MBS_EXPECT_NEAR(m->q0[d], M_PI / 180, 1e-15);
  MBS_EXPECT_OK(solve(m, &opt, &st, &s));
  if (st) {
    double closed = -1.7595 * 9.81 * 1.5 * 50 * 50 / 2;
    printf("chain50: %d evaluations, %d resets, PE %.8f J (closed form %.8f), max|q| %.3e\n",
           st->iterations, st->resets, st->pe, closed, maxAbs(s->q, m->nq));
    MBS_EXPECT(st->reason == MBS_STATIC_CONVERGED, "chain did not converge");
    MBS_EXPECT(fabs(st->pe - closed) < 1e-9 * fabs(closed), "PE %.10f vs %.10f", st->pe, closed);
    MBS_EXPECT(maxAbs(s->q, m->nq) < 1e-5, "not hanging: max|q| = %.3e", maxAbs(s->q, m->nq));
    MBS_EXPECT(st->pe < st->pe0 - 2000, "energy not drained: %.3f -> %.3f", st->pe0, st->pe);
    MBS_EXPECT(st->qdd_res < 1e-3, "residual acceleration %.3e", st->qdd_res);
  }
  mbs_staticDestroy(&st);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&m);
}

// quaternion joint: a rod on a spherical joint, tilted 1 rad about (1,1,0)/sqrt2, drains to
// hanging; the quaternion stays unit and the rod axis ends on -z
static void test_spherical(void) {
  const char *text = "model = { gravity = [0, 0, -9.81];\n"
                     "  bodies = ( { name = \"rod\"; parent = \"ground\";\n"
                     "    joint = { type = \"spherical\";\n"
                     "      q0 = [0.87758256189037276, 0.33900504942104487, 0.33900504942104487, "
                     "0]; };\n"
                     "    mass = 2; shape = \"rod\"; length = 1; direction = [0, 0, -1]; } ); };\n"
                     "solver = { method = \"aba\"; };\n"
                     "static = { dt = 2e-3; ke_tol = 1e-12; dq_tol = 1e-11; };\n";
  mbsModel *m = NULL;
  mbsStaticOpt opt;
  mbsStatic *st = NULL;
  mbsState *s = NULL;
  MBS_EXPECT_OK(load(text, "sph.cfg", NULL, 0, &m, &opt));
  if (!m) return;
  MBS_EXPECT_OK(solve(m, &opt, &st, &s));
  if (st) {
    const double *q = s->q;
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    // rotated rod direction: third column of R(q) applied to -z -> world z component of the tip
    double zz = 1 - 2 * (q[1] * q[1] + q[2] * q[2]);
    printf("spherical: %d evaluations, PE %.10f, |q| - 1 = %.1e, cos(tilt) %.12f\n", st->iterations,
           st->pe, n - 1, zz);
    MBS_EXPECT(st->reason == MBS_STATIC_CONVERGED, "spherical did not converge");
    MBS_EXPECT_NEAR(n, 1.0, 1e-12);
    MBS_EXPECT_NEAR(zz, 1.0, 1e-8);
    MBS_EXPECT_NEAR(st->pe, -2 * 9.81 * 0.5, 1e-8);
  }
  mbs_staticDestroy(&st);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&m);
}

// spring-supported mass: a prismatic joint along z with a spring; equilibrium x = ref - m g / k,
// PE = -m g x + k (x - ref)^2 / 2; the drain operator, crba
static void test_spring(void) {
  const char *text = "model = { gravity = [0, 0, -9.81];\n"
                     "  bodies = ( { name = \"mass\"; parent = \"ground\";\n"
                     "    joint = { type = \"prismatic\"; axis = [0, 0, 1]; q0 = [0.3];\n"
                     "              stiffness = 400; springref = 0.1; };\n"
                     "    mass = 3; inertia = [0.01, 0.01, 0.01, 0, 0, 0]; } ); };\n"
                     "solver = { method = \"crba\"; };\n"
                     "static = { method = \"drain\"; omega_d = 8; dt = 1e-3; ke_tol = 1e-14;\n"
                     "           dq_tol = 1e-12; };\n";
  mbsModel *m = NULL;
  mbsStaticOpt opt;
  mbsStatic *st = NULL;
  mbsState *s = NULL;
  MBS_EXPECT_OK(load(text, "spring.cfg", NULL, 0, &m, &opt));
  if (!m) return;
  MBS_EXPECT(opt.method == MBS_STATIC_DRAIN && opt.omega_d == 8, "static group not read");
  MBS_EXPECT_OK(solve(m, &opt, &st, &s));
  if (st) {
    double x = 0.1 - 3 * 9.81 / 400, pe = 3 * 9.81 * x + 0.5 * 400 * (x - 0.1) * (x - 0.1);
    printf("spring: %d evaluations, x %.12f (exact %.12f), PE %.12f (exact %.12f)\n",
           st->iterations, s->q[0], x, st->pe, pe);
    MBS_EXPECT(st->reason == MBS_STATIC_CONVERGED, "spring did not converge");
    // |q̈| <= 2 dq_tol/h² + 2 w dq_tol/h + w² dq_tol ~ 2e-6 -> |x - x*| <= |q̈| m / k ~ 2e-8
    MBS_EXPECT_NEAR(s->q[0], x, 3e-8);
    MBS_EXPECT_NEAR(st->pe, pe, 1e-9);
  }
  mbs_staticDestroy(&st);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&m);
}

// the cap is a reason, not an error; the history buffer is decimated in place, evenly spaced
static void test_maxiter_history(void) {
  const char *sets[] = {"static.max_iter=5000", "static.history=8", "static.ke_tol=1e-30",
                        "static.dq_tol=1e-30"};
  mbsModel *m = NULL;
  mbsStaticOpt opt;
  mbsStatic *st = NULL;
  mbsState *s = NULL;
  MBS_EXPECT_OK(loadFile("seed001_pendulum.cfg", sets, 4, &m, &opt));
  if (!m) return;
  MBS_EXPECT_OK(solve(m, &opt, &st, &s));
  if (st) {
    MBS_EXPECT(st->reason == MBS_STATIC_MAXITER, "reason %d", st->reason);
    MBS_EXPECT(st->iterations == 5000, "iterations %d", st->iterations);
    MBS_EXPECT(st->nhist >= 4 && st->nhist <= 8, "nhist %d", st->nhist);
    // 5000 evaluations in at most 8 samples: stride 1024, samples 0, 1024, ..., 4096
    MBS_EXPECT(st->hist_stride == 1024, "stride %d", st->hist_stride);
    for (int k = 0; k < st->nhist; k++)
      MBS_EXPECT(st->hist_iter[k] == k * st->hist_stride, "sample %d at %d", k, st->hist_iter[k]);
  }
  mbs_staticDestroy(&st);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&m);
}

// the `static` config group: strict keys, checked values with FILE:LINE, defaults, bad options
static void test_config(void) {
  const char *base = "model = { chain = { n = 2; length = 1; mass = 1; }; };\n";
  char text[1024];
  mbsModel *m = NULL;
  mbsStaticOpt opt;
  struct {
    const char *group, *fragment;
  } bad[] = {
      {"static = { dt = 0; };", "t.cfg:2: static.dt must be > 0"},
      {"static = {\n dq_tol = -1; };", "t.cfg:3: static.dq_tol must be > 0"},
      {"static = { ke_tol = 0; };", "static.ke_tol must be > 0"},
      {"static = { max_iter = 0; };", "static.max_iter must be >= 1"},
      {"static = { max_iter = 1.5; };", "expected an integer"},
      {"static = { omega_d = -2; };", "static.omega_d must be >= 0"},
      {"static = { history = 1; };", "static.history must be in [2, 100000000]"},
      {"static = { method = \"newton\"; };", "unknown value \"newton\""},
      {"static = { tolerance = 1e-3; };", "unknown key \"tolerance\""},
      {"static = 3;", "expected a group"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    snprintf(text, sizeof text, "%s%s\n", base, bad[k].group);
    mbsErr e = load(text, "t.cfg", NULL, 0, &m, &opt);
    MBS_EXPECT(e == MBS_ERR_INPUT, "%s accepted", bad[k].group);
    MBS_EXPECT(strstr(mbs_errMsg(), bad[k].fragment) != NULL, "%s: message \"%s\" lacks \"%s\"",
               bad[k].group, mbs_errMsg(), bad[k].fragment);
    mbs_modelDestroy(&m);
  }
  // defaults without a group, --set creates it
  MBS_EXPECT_OK(load(base, "t.cfg", NULL, 0, &m, &opt));
  MBS_EXPECT(opt.method == MBS_STATIC_KINETIC && opt.dt == 1e-3 && opt.max_iter == 1000000 &&
                 opt.history == 1000,
             "defaults");
  mbs_modelDestroy(&m);
  const char *sets[] = {"static.dt=0.02", "static.method=drain"};
  MBS_EXPECT_OK(load(base, "t.cfg", sets, 2, &m, &opt));
  MBS_EXPECT(opt.dt == 0.02 && opt.method == MBS_STATIC_DRAIN, "--set static.*");
  mbs_modelDestroy(&m);
  // options checked again by the solver (API users bypass the parser)
  mbsStaticOpt o;
  mbsStatic *st = NULL;
  MBS_EXPECT_OK(load(base, "t.cfg", NULL, 0, &m, &opt));
  mbs_staticOptDefault(&o);
  o.dt = -1;
  if (m) MBS_EXPECT(mbs_staticCreate(m, &o, &st) == MBS_ERR_INPUT && !st, "dt < 0 accepted");
  MBS_EXPECT(mbs_staticMethodFromName("drain") == MBS_STATIC_DRAIN &&
                 mbs_staticMethodFromName("x") == -1 &&
                 !strcmp(mbs_staticMethodName(MBS_STATIC_KINETIC), "kinetic"),
             "method names");
  mbs_modelDestroy(&m);
}

int main(int argc, char **argv) {
  if (argc > 1) cfgdir = argv[1];
  test_pendulum("aba", "kinetic", "1");
  test_pendulum("crba", "kinetic", "1");
  test_pendulum("aba", "drain", "3");
  test_chain50();
  test_spherical();
  test_spring();
  test_maxiter_history();
  test_config();
  return mbs_test_finish("test_static");
}
