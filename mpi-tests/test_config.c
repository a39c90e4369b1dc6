/// \file test_config.c
/// Tests of the config parser (src/config.c) and the prescribed-motion helpers
/// (src/trajectory.c): explicit bodies and generators build the intended model, --set overrides
/// edit any key without changing the build order, defaults and resolved options, errors carry
/// their location, the shipped configs/ load, and the inverse motion and RNEA sample are right.
/// usage: test_config CONFIGS_DIR
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mbs_json_check.h"
#include "mbs_test.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_report.h"
#include "mbspar/mbs_trajectory.h"
#include "config_private.h" // the descriptor tables (test_solver_equal)

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static const char *configs_dir = "configs";

// parse + build; returns the model or NULL (the error is kept in mbs_errMsg)
static mbsErr build(const char *text, const char *const *sets, int nsets, mbsConfig **pc,
                    mbsModel **pm) {
  mbsConfig *c = NULL;
  *pm = NULL;
  mbsErr e = mbs_configParse(text, "t.cfg", sets, nsets, &c);
  if (!e) e = mbs_configBuildModel(c, pm);
  if (pc)
    *pc = c;
  else
    mbs_configDestroy(&c);
  return e;
}

static const char *mixed =
    "# bodies, then a chain hanging from them, then a tree hanging from the chain's end\n"
    "model = {\n"
    "  gravity = [0, 0, -10];                      # integers in a float list\n"
    "  bodies = (\n"
    "    { name = \"base\"; parent = \"ground\";\n"
    "      joint = { type = \"free\"; q0 = [1, 2, 3, 1, 0, 0, 0]; qd0 = [0, 0, 0, 0, 0, 1]; };\n"
    "      mass = 2; inertia = [1, 1, 1, 0, 0, 0]; }\n"
    "  );\n"
    "  chain = { n = 3; parent = \"base\"; joint = \"revolute\"; axis = [0, 1, 0];\n"
    "            origin = [0.5, 0, 0]; direction = [1, 0, 0]; length = 0.2; mass = 0.3;\n"
    "            radius = 0.01; q0 = [0.1, 0.2, 0.3]; damping = 0.5; };\n"
    "  tree = { parent = \"link3\"; branching = 2; depth = 3; joint = \"spherical\";\n"
    "           length = 0.1; mass = 0.1; shape = \"sphere\"; radius = 0.02; };\n"
    "};\n"
    "solver = { method = \"crba\"; tol = 1e-9; };\n";

static void test_mixed(void) {
  mbsConfig *c;
  mbsModel *m;
  MBS_EXPECT_OK(build(mixed, NULL, 0, &c, &m));
  if (!m) {
    mbs_configDestroy(&c);
    return;
  }
  MBS_EXPECT(m->nbody == 1 + 3 + 7, "nbody %d", m->nbody);
  MBS_EXPECT(m->nv == 6 + 3 + 7 * 3, "nv %d", m->nv);
  MBS_EXPECT(m->nq == 7 + 3 + 7 * 4, "nq %d", m->nq);
  MBS_EXPECT_NEAR(m->gravity[2], -10, 0);
  MBS_EXPECT(m->opt.solver == MBS_SOLVER_CRBA, "solver %d", m->opt.solver);
  MBS_EXPECT_NEAR(m->opt.tol, 1e-9, 0);
  MBS_EXPECT(m->opt.warm_start == MBS_WARM_CUBIC, "default warm start");
  // chain: names, parents, geometry
  MBS_EXPECT(!strcmp(m->body_name[1], "link1") && !strcmp(m->body_name[3], "link3"), "names");
  MBS_EXPECT(m->body_parent[1] == 0 && m->body_parent[2] == 1 && m->body_parent[3] == 2,
             "chain parents");
  MBS_EXPECT_NEAR(m->jnt_origin[3 * 1 + 0], 0.5, 0);   // first joint at origin
  MBS_EXPECT_NEAR(m->jnt_origin[3 * 2 + 0], 0.2, 0);   // next at length * direction
  MBS_EXPECT_NEAR(m->body_com[3 * 2 + 0], 0.1, 1e-15); // rod com at the middle
  double L = 0.2, r = 0.01, mass = 0.3;
  MBS_EXPECT_NEAR(m->body_inertia[6 * 2 + 0], mass * r * r / 2, 1e-15);                // along x
  MBS_EXPECT_NEAR(m->body_inertia[6 * 2 + 1], mass * (3 * r * r + L * L) / 12, 1e-15); // across
  MBS_EXPECT_NEAR(m->q0[7 + 1], 0.2, 0);
  MBS_EXPECT_NEAR(m->dof_damping[6 + 2], 0.5, 0);
  MBS_EXPECT_NEAR(m->q0[0], 1, 0);
  MBS_EXPECT_NEAR(m->qd0[5], 1, 0);
  // tree: depth-first preorder under link3, spheres with com at the tip
  static const int want[7] = {3, 4, 5, 5, 4, 8, 8};
  for (int k = 0; k < 7; k++)
    MBS_EXPECT(m->body_parent[4 + k] == want[k], "tree parent of body %d is %d, want %d", 4 + k,
               m->body_parent[4 + k], want[k]);
  MBS_EXPECT(!strcmp(m->body_name[4], "node1") && !strcmp(m->body_name[10], "node7"), "tree names");
  MBS_EXPECT_NEAR(m->body_inertia[6 * 5], 0.4 * 0.1 * 0.02 * 0.02, 1e-18);
  MBS_EXPECT_NEAR(m->body_com[3 * 5 + 2], -0.1, 1e-15);
  MBS_EXPECT_NEAR(m->q0[m->body_qadr[5]], 1, 0); // identity quaternion by default
  MBS_EXPECT(m->maxdepth == 1 + 3 + 3, "maxdepth %d", m->maxdepth);
  // issue 11.8: a generator hung from a generated body starts at its tip (no origin given):
  // node1 hangs at link3's tip, length * direction = [0.2, 0, 0]
  MBS_EXPECT(m->jnt_origin[3 * 4 + 0] == 0.2 && m->jnt_origin[3 * 4 + 1] == 0 &&
                 m->jnt_origin[3 * 4 + 2] == 0,
             "tree root at the tip of link3: [%g, %g, %g]", m->jnt_origin[12], m->jnt_origin[13],
             m->jnt_origin[14]);

  // resolved parameters as JSON
  mbsJson *j;
  MBS_EXPECT_OK(mbs_jsonOpenMemory(&j));
  mbs_jsonBeginObject(j, "config");
  mbs_configWriteJson(c, j);
  mbs_jsonEndObject(j);
  mbs_jsonEndObject(j);
  const char *s = mbs_jsonBuffer(j), *why = "";
  MBS_EXPECT(mbs_jsonValid(s, &why), "config JSON invalid: %s\n%s", why, s);
  MBS_EXPECT(strstr(s, "\"method\": \"crba\"") && strstr(s, "\"max_iter\": 100000") &&
                 strstr(s, "\"method\": \"rk4\"") && strstr(s, "\"branching\": 2") &&
                 strstr(s, "\"format\": \"csv\""),
             "config JSON lacks resolved values:\n%s", s);
  MBS_EXPECT_OK(mbs_jsonClose(&j));
  mbs_modelDestroy(&m);
  mbs_configDestroy(&c);
}

static void test_set(void) {
  mbsModel *m;
  mbsConfig *c;
  // scalars, bare words, lists, list elements, new groups
  const char *sets[] = {"model.chain.n=5",          "solver.method=aba",  "model.gravity=[0,-1,0]",
                        "model.bodies[0].mass=2.5", "integrator.dt=1e-5", "output.dir=\"res/x\"",
                        "model.chain.q0=0.7"};
  MBS_EXPECT_OK(build(mixed, sets, 7, &c, &m));
  if (m) {
    MBS_EXPECT(m->nbody == 1 + 5 + 7, "chain.n override: nbody %d", m->nbody);
    MBS_EXPECT(m->opt.solver == MBS_SOLVER_ABA, "solver override");
    MBS_EXPECT_NEAR(m->gravity[1], -1, 0);
    MBS_EXPECT_NEAR(m->body_mass[0], 2.5, 0);
    MBS_EXPECT_NEAR(m->opt.dt, 1e-5, 0);
    MBS_EXPECT_NEAR(m->q0[7 + 4], 0.7, 0);
    MBS_EXPECT(!strcmp(c->out_dir, "res/x"), "output.dir %s", c->out_dir);
    MBS_EXPECT(c->nset == 7, "nset");
    // the tree still hangs from the chain's last link (now link5)... no: from "link3" as written
    MBS_EXPECT(m->body_parent[6] == 3, "tree parent after override: %d", m->body_parent[6]);
  }
  mbs_modelDestroy(&m);
  mbs_configDestroy(&c);

  // replacing a whole group keeps its place in the file (the tree needs the chain first)
  const char *regroup[] = {"model.chain={ n = 4; parent = \"base\"; length = 1; mass = 1; }"};
  MBS_EXPECT_OK(build(mixed, regroup, 1, NULL, &m));
  if (m) MBS_EXPECT(m->nbody == 1 + 4 + 7 && m->body_parent[5] == 3, "group replacement order");
  mbs_modelDestroy(&m);

  // errors: a bad --set is a usage error that names the option
  const char *bad1[] = {"solver.method=newton"};
  MBS_EXPECT(build(mixed, bad1, 1, NULL, &m) == MBS_ERR_USAGE, "bad method via --set");
  MBS_EXPECT(!strncmp(mbs_errMsg(), "--set solver.method=newton: ", 28), "msg: %s", mbs_errMsg());
  const char *bad2[] = {"solver.bogus=1"};
  MBS_EXPECT(build(mixed, bad2, 1, NULL, &m) == MBS_ERR_USAGE, "unknown key via --set");
  MBS_EXPECT(strstr(mbs_errMsg(), "unknown key \"bogus\""), "msg: %s", mbs_errMsg());
  const char *bad3[] = {"noequals"};
  MBS_EXPECT(build(mixed, bad3, 1, NULL, &m) == MBS_ERR_USAGE, "--set without =");
  const char *bad4[] = {"model.gravity=[1,2"};
  MBS_EXPECT(build(mixed, bad4, 1, NULL, &m) == MBS_ERR_USAGE, "unparsable --set value");
  const char *bad5[] = {"model.bodies[7].mass=1"};
  MBS_EXPECT(build(mixed, bad5, 1, NULL, &m) == MBS_ERR_USAGE, "index out of range");
  MBS_EXPECT(m == NULL, "model returned on error");
}

// the option groups by descriptor (src/config_opts.c): every key of the table is listed by
// `mbspar help config` with its default, the reader accepts that default through --set, and the
// defaults the help prints are those the parser starts from (mbs_optionDefault and the config's
// own): the JSON echo of the option groups is the same with every default set explicitly.
// Iterates the table, so a new row is tested without editing this test.
static const char *config_json(const char *text, const char *const *sets, int nsets, char *buf,
                               size_t n) {
  mbsConfig *c = NULL;
  mbsJson *j = NULL;
  buf[0] = 0;
  mbsErr e = mbs_configParse(text, "t.cfg", sets, nsets, &c);
  if (!e) e = mbs_jsonOpenMemory(&j);
  if (!e) {
    mbs_configWriteJson(c, j);
    mbs_jsonEndObject(j); // the top level: the buffer is complete
    const char *from = strstr(mbs_jsonBuffer(j), "\"solver\"");
    snprintf(buf, n, "%s", from ? from : "(no solver group)");
    if (!from) e = mbs_errSet(MBS_ERR_INTERNAL, "no solver group in the JSON echo");
    mbs_jsonAbandon(&j);
  }
  mbs_configDestroy(&c);
  return e ? mbs_errMsg() : NULL;
}

static void test_option_keys(void) {
  static const char *plain = "model = { chain = { n = 2; length = 1; mass = 1; }; };\n";
  // with an empty inverse group, so that its defaults are echoed too
  static const char *plain_inv =
      "model = { chain = { n = 2; length = 1; mass = 1; }; };\ninverse = { };\n";
  int n = mbs_configKeyInfo(0, NULL), nset = 0;
  MBS_EXPECT(n >= 30, "%d keys in the option groups", n);
  mbsConfigKeyInfo *ki = calloc((size_t)n, sizeof *ki);
  char(*sets)[320] = calloc((size_t)n, sizeof *sets);
  const char **setp = calloc((size_t)n, sizeof *setp);
  char *help = calloc(1 << 16, 1), *want = calloc(1 << 14, 1), *got = calloc(1 << 14, 1);
  if (!ki || !sets || !setp || !help || !want || !got) {
    MBS_EXPECT(0, "out of memory");
    return;
  }
  FILE *f = tmpfile();
  MBS_EXPECT(f != NULL, "tmpfile");
  if (f) {
    mbs_configHelp(f);
    rewind(f);
    size_t len = fread(help, 1, (1 << 16) - 1, f);
    help[len] = 0;
    fclose(f);
  }
  for (int k = 0; k < n; k++) {
    MBS_EXPECT(mbs_configKeyInfo(k, ki + k) == n, "key %d", k);
    snprintf(sets[k], sizeof sets[k], "%s=%s", ki[k].key, ki[k].sample);
    if (!strcmp(ki[k].sample, ki[k].def)) setp[nset++] = sets[k]; // keys with a default
    // the help lists the key (a line starting with it) with its type and default
    char line[128];
    snprintf(line, sizeof line, "\n%s ", ki[k].key);
    const char *at = strstr(help, line);
    MBS_EXPECT(at != NULL, "help config lists %s", ki[k].key);
    const char *eol = at ? strchr(at + 1, '\n') : NULL;
    const char *d = at ? strstr(at + 1, ki[k].def) : NULL;
    MBS_EXPECT(d && (!eol || d < eol), "help config: %s shows its default %s", ki[k].key,
               ki[k].def);
    MBS_EXPECT(ki[k].help && ki[k].help[0] && ki[k].range[0], "%s: help and range", ki[k].key);
    // the reader accepts the default as a value of the key
    const char *one[] = {sets[k]};
    const char *err = config_json(plain, one, 1, got, 1 << 14);
    MBS_EXPECT(err == NULL, "--set %s: %s", sets[k], err ? err : "");
  }
  // every default set explicitly echoes as the defaults do
  MBS_EXPECT(config_json(plain_inv, NULL, 0, want, 1 << 14) == NULL, "plain config");
  MBS_EXPECT(strstr(want, "\"inverse\""), "inverse echoed");
  const char *err = config_json(plain_inv, setp, nset, got, 1 << 14);
  MBS_EXPECT(err == NULL, "all defaults by --set: %s", err ? err : "");
  MBS_EXPECT(!strcmp(want, got), "defaults of help config differ from the parser's:\n%s\n%s", want,
             got);
  // a bound through --set: the row's message, located at the --set
  const char *bad[] = {"solver.omega=3"};
  MBS_EXPECT(config_json(plain, bad, 1, got, 1 << 14) != NULL, "omega = 3 refused");
  MBS_EXPECT(!strcmp(mbs_errMsg(), "--set solver.omega=3: solver.omega must be in (0, 2) (got 3)"),
             "msg: %s", mbs_errMsg());
  free(ki);
  free(sets);
  free(setp);
  free(help);
  free(want);
  free(got);
}

static void test_errors(void) {
  mbsModel *m;
  // a file error is an input error with FILE:LINE of the offending setting
  const char *t1 = "model = {\n chain = {\n  n = 3;\n  length = 1.0;\n  mass = -1.0;\n };\n};\n";
  MBS_EXPECT(build(t1, NULL, 0, NULL, &m) == MBS_ERR_INPUT, "negative mass");
  MBS_EXPECT(!strncmp(mbs_errMsg(), "t.cfg:5: ", 9), "location: %s", mbs_errMsg());
  MBS_EXPECT(strstr(mbs_errMsg(), "mass must be positive"), "msg: %s", mbs_errMsg());
  const char *t2 = "model = {\n chain = { n = 3; length = 1.0; mass = 1.0;\n  extra = 1; };\n};\n";
  MBS_EXPECT(build(t2, NULL, 0, NULL, &m) == MBS_ERR_INPUT, "unknown key");
  MBS_EXPECT(!strncmp(mbs_errMsg(), "t.cfg:3: unknown key \"extra\"", 28), "msg: %s", mbs_errMsg());
  const char *t3 = "model = {\n\n  chain = { n = = 3; length = 1.0; };\n};\n";
  MBS_EXPECT(build(t3, NULL, 0, NULL, &m) == MBS_ERR_INPUT, "syntax error");
  MBS_EXPECT(!strncmp(mbs_errMsg(), "t.cfg:3: syntax error", 21), "msg: %s", mbs_errMsg());
  // brackets inside strings and comments are left alone
  const char *t4 =
      "# [not a list\nmodel = { chain = { n = 2; name = \"a[1]\"; length = 1; mass = 1; }; };\n";
  MBS_EXPECT_OK(build(t4, NULL, 0, NULL, &m));
  if (m) MBS_EXPECT(!strcmp(m->body_name[1], "a[1]2"), "name %s", m->body_name[1]);
  mbs_modelDestroy(&m);
  // explicit parent list of a tree
  const char *t5 = "model = { tree = { parents = [0, 1, 1, 0, 4]; length = 1; mass = 1; }; };\n";
  MBS_EXPECT_OK(build(t5, NULL, 0, NULL, &m));
  if (m) {
    static const int want[5] = {-1, 0, 0, -1, 3};
    for (int k = 0; k < 5; k++) MBS_EXPECT(m->body_parent[k] == want[k], "parents[%d]", k);
    MBS_EXPECT_NEAR(m->jnt_origin[3 * 3 + 2], 0, 0);  // a root sits at origin
    MBS_EXPECT_NEAR(m->jnt_origin[3 * 4 + 2], -1, 0); // a child at length * direction
  }
  mbs_modelDestroy(&m);
}

static void test_trajectory(void) {
  double q, qd, qdd, T = 2.0, a = 0.3, b = 1.1;
  mbsu_cycloid(a, b, T, 0, &q, &qd, &qdd);
  MBS_EXPECT(q == a && qd == 0 && qdd == 0, "start %g %g %g", q, qd, qdd);
  mbsu_cycloid(a, b, T, T, &q, &qd, &qdd);
  MBS_EXPECT_NEAR(q, b, 1e-15);
  MBS_EXPECT_NEAR(qd, 0, 1e-15);
  MBS_EXPECT_NEAR(qdd, 0, 1e-12);
  mbsu_cycloid(a, b, T, T / 2, &q, &qd, &qdd);
  MBS_EXPECT_NEAR(q, (a + b) / 2, 1e-15);
  MBS_EXPECT_NEAR(qd, 2 * (b - a) / T, 1e-15); // peak rate = 2 * mean rate
  // derivatives by central differences
  for (double t = 0.1; t < T; t += 0.37) {
    double h = 1e-5, qp, qm, dp, dm, d2, q0, d0;
    mbsu_cycloid(a, b, T, t + h, &qp, &dp, &d2);
    mbsu_cycloid(a, b, T, t - h, &qm, &dm, &d2);
    mbsu_cycloid(a, b, T, t, &q0, &d0, &d2);
    MBS_EXPECT_NEAR((qp - qm) / (2 * h), d0, 1e-8);
    MBS_EXPECT_NEAR((dp - dm) / (2 * h), d2, 1e-7);
  }
}

// configs/pendulum.cfg: closed-form accelerations; configs/gripper.cfg: static torques
static void test_shipped(void) {
  static const char *names[] = {"chain.cfg", "pendulum.cfg", "gripper.cfg",
                                "rope.cfg",  "tree.cfg",     "large_chain.cfg"};
  static const int nbody[] = {256, 1, 4, 50, 255, 100000};
  for (int k = 0; k < 6; k++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", configs_dir, names[k]);
    char *text = mbs_test_slurp(path);
    MBS_EXPECT(text != NULL, "cannot read %s", path);
    if (!text) continue;
    mbsConfig *c = NULL;
    mbsModel *m = NULL;
    mbsErr e = mbs_configParse(text, path, NULL, 0, &c);
    if (!e) e = mbs_configBuildModel(c, &m);
    MBS_EXPECT(e == MBS_OK, "%s: %s", path, mbs_errMsg());
    if (m) MBS_EXPECT(m->nbody == nbody[k], "%s: %d bodies", path, m->nbody);
    if (m && k == 3) MBS_EXPECT(m->nv == 100, "rope dofs %d", m->nv);
    if (m && k == 1) {
      // uniform rod of radius 0.01: qdd = -m g (l/2) sin(q) / (I_c + m (l/2)^2)
      mbsState *s;
      mbsWork *w;
      MBS_EXPECT_OK(mbs_stateCreate(m, &s));
      MBS_EXPECT_OK(mbs_workCreate(m, &w));
      m->opt.solver = MBS_SOLVER_ABA;
      MBS_EXPECT_OK(mbs_forward(m, s, w));
      double Ic = (3 * 0.01 * 0.01 + 1.0) / 12, want = -9.81 * 0.5 * sin(0.5) / (Ic + 0.25);
      MBS_EXPECT_NEAR(w->qdd[0], want, 1e-12);
      mbs_workDestroy(&w);
      mbs_stateDestroy(&s);
    }
    if (m && k == 2) {
      // Table 2 motion: radians after conversion, static holding torques at t = 0
      mbsReal qs[4], qe[4], qdd[4], tau[4];
      MBS_EXPECT(mbs_configInverseCoords(m) == 4, "gripper coords");
      MBS_EXPECT_OK(mbs_configInverse(c, m, qs, qe));
      MBS_EXPECT_NEAR(qe[0], M_PI / 3, 1e-15);
      MBS_EXPECT_NEAR(qs[3], M_PI / 2, 1e-15);
      MBS_EXPECT_NEAR(qe[3], 2 * M_PI / 3, 1e-15);
      mbsState *s;
      mbsWork *w;
      MBS_EXPECT_OK(mbs_stateCreate(m, &s));
      MBS_EXPECT_OK(mbs_workCreate(m, &w));
      mbs_inverseSample(m, s, w, qs, qe, c->inverse.T, 0, qdd, tau);
      // palm horizontal, finger M2 straight along it, finger M3 vertical (gravity -y)
      double g = 9.81;
      MBS_EXPECT_NEAR(tau[0], g * (0.4 * 0.05 + 0.2 * 0.125 + 0.2 * 0.175 + 0.2 * 0.1), 1e-12);
      MBS_EXPECT_NEAR(tau[1], g * (0.2 * 0.025 + 0.2 * 0.075), 1e-12);
      MBS_EXPECT_NEAR(tau[2], g * 0.2 * 0.025, 1e-12);
      MBS_EXPECT_NEAR(tau[3], 0, 1e-12);
      // mid-motion: RNEA torques reproduce the prescribed accelerations through ABA
      mbs_inverseSample(m, s, w, qs, qe, c->inverse.T, 0.3, qdd, tau);
      for (int d = 0; d < 4; d++) s->tau[d] = tau[d];
      MBS_EXPECT_OK(mbs_forward(m, s, w));
      MBS_EXPECT(mbs_test_relDiff(w->qdd, qdd, 4, 1e-12) < 1e-10, "ABA(RNEA(qdd)) != qdd");
      mbs_workDestroy(&w);
      mbs_stateDestroy(&s);
    }
    mbs_modelDestroy(&m);
    mbs_configDestroy(&c);
    free(text);
  }
}

// issue 11.8: generator defaults that do not surprise
static void test_defaults(void) {
  // the same default axes for explicit bodies and generators: y, universal's second x
  const char *t =
      "model = {\n"
      "  bodies = ( { name = \"a\"; joint = { type = \"universal\"; }; mass = 1;\n"
      "               shape = \"rod\"; length = 0.5; } );\n"
      "  chain = { n = 2; parent = \"a\"; joint = \"universal\"; length = 1; mass = 1; };\n"
      "  tree = { parents = [0, 1, 1, 1]; joint = \"revolute\"; spread = 0.3;\n"
      "           length = 1; mass = 1; q0 = 0.1; };\n"
      "};\n";
  mbsConfig *c;
  mbsModel *m;
  MBS_EXPECT_OK(build(t, NULL, 0, &c, &m));
  if (!m) {
    mbs_configDestroy(&c);
    return;
  }
  for (int b = 0; b < 3; b++) {
    const double *a = m->jnt_axis + 3 * b, *a2 = m->jnt_axis2 + 3 * b;
    MBS_EXPECT(a[0] == 0 && a[1] == 1 && a[2] == 0 && a2[0] == 1 && a2[1] == 0 && a2[2] == 0,
               "body %d: default axes [%g %g %g], [%g %g %g]", b, a[0], a[1], a[2], a2[0], a2[1],
               a2[2]);
  }
  // the chain hangs at the explicit body's tip: length * direction = 0.5 [0, 0, -1]
  MBS_EXPECT(m->jnt_origin[3 * 1 + 2] == -0.5, "chain starts at a's tip (z = %g)",
             m->jnt_origin[3 * 1 + 2]);
  // the tree (under the ground) starts at the origin; siblings 2, 3, 4 fan out by 0.3 rad
  MBS_EXPECT(m->jnt_origin[3 * 3 + 2] == 0, "tree root at the origin");
  MBS_EXPECT_NEAR(m->q0[m->body_qadr[3]], 0.1, 0);
  MBS_EXPECT_NEAR(m->q0[m->body_qadr[4]], 0.1 - 0.3, 1e-15);
  MBS_EXPECT_NEAR(m->q0[m->body_qadr[5]], 0.1, 1e-15);
  MBS_EXPECT_NEAR(m->q0[m->body_qadr[6]], 0.1 + 0.3, 1e-15);
  mbs_modelDestroy(&m);
  mbs_configDestroy(&c);
}

// the decomposition of a forest (docs/model.md "Body order decides the decomposition"): a rank
// boundary near the start of a tree listed after another moves there (no joint cut), the same
// in the full model (mbs_partitionModel: engine, cpa, check) and in the local builds of every
// rank (mbs_partitionRuns on the structure pass's runs and clean cuts)
static const char *forest =
    "model = {\n"
    "  bodies = (\n"
    "    { name = \"a1\"; parent = \"ground\"; joint = { type = \"revolute\"; axis = [0, 1, 0]; "
    "};\n"
    "      mass = 1; inertia = [1, 1, 1, 0, 0, 0]; },\n"
    "    { name = \"a2\"; parent = \"a1\"; joint = { type = \"revolute\"; axis = [0, 1, 0]; };\n"
    "      mass = 1; inertia = [1, 1, 1, 0, 0, 0]; },\n"
    "    { name = \"s\"; parent = \"ground\"; joint = { type = \"free\"; };\n"
    "      mass = 1; inertia = [1, 1, 1, 0, 0, 0]; },\n"
    "    { name = \"a3\"; parent = \"a2\"; joint = { type = \"revolute\"; axis = [0, 1, 0]; };\n"
    "      mass = 1; inertia = [1, 1, 1, 0, 0, 0]; }\n"
    "  );\n"
    "  chain = (\n"
    "    { name = \"l\"; n = 53; parent = \"a3\"; joint = \"revolute\"; axis = [0, 1, 0];\n"
    "      length = 0.1; mass = 0.1; radius = 0.01; },\n"
    "    { name = \"r\"; n = 56; joint = \"revolute\"; axis = [0, 1, 0]; length = 0.1; mass = "
    "0.1;\n"
    "      radius = 0.01; },\n"
    "    { name = \"f\"; n = 7; joint = \"revolute\"; axis = [0, 1, 0]; length = 0.1; mass = 0.1;\n"
    "      radius = 0.01; }\n"
    "  );\n"
    "};\n";

static void test_partition_forest(void) {
  mbsConfig *c;
  mbsModel *m;
  MBS_EXPECT_OK(build(forest, NULL, 0, &c, &m));
  if (!m) {
    mbs_configDestroy(&c);
    return;
  }
  // bodies: a1 a2 s a3 l1..l53 (0..56), r1..r56 (57..112), f1..f7 (113..119); body 2 ("s") is
  // on the ground but a3 hangs from a2 across it: not a clean cut; r1 (57) and f1 (113) are
  int cut[130];
  int nc = mbs_partitionCuts(m, cut);
  MBS_EXPECT(nc == 3 && cut[0] == 0 && cut[1] == 57 && cut[2] == 113,
             "forest: clean cuts %d (%d %d %d), expected 0 57 113", nc, nc > 0 ? cut[0] : -1,
             nc > 1 ? cut[1] : -1, nc > 2 ? cut[2] : -1);
  for (int P = 2; P <= 5; P++) {
    int start[8];
    MBS_EXPECT_OK(mbs_partitionModel(m, P, start));
    if (P == 2) // the balanced boundary (61) moves to the right chain's root
      MBS_EXPECT(start[1] == 57, "forest P = 2: boundary at %d, expected 57", start[1]);
    for (int r = 0; r < P; r++) {
      MBS_EXPECT(start[r] < start[r + 1], "forest P = %d: rank %d empty", P, r);
      mbsModel *ml = NULL;
      MBS_EXPECT_OK(mbs_configBuildLocal(c, P, r, &ml));
      if (!ml) continue;
      int same = ml->part_n == P;
      for (int k = 0; same && k <= P; k++) same = ml->part_start[k] == start[k];
      MBS_EXPECT(same, "forest P = %d rank %d: the local build's decomposition differs", P, r);
      mbs_modelDestroy(&ml);
    }
  }
  mbs_modelDestroy(&m);
  mbs_configDestroy(&c);
}

// light joints (docs/formulation.md 4.9): explicit links alternating with 1e-8 kg bodies on
// revolute joints, then a generated chain hanging from the last light body (its first joint is
// light: noted by the structure pass without the bodies). The local builds cut where the full
// model does, and no boundary is crossed by a light joint (parent before, child at or after it)
static void test_partition_light(void) {
  char text[4096];
  size_t at = 0;
  at += (size_t)snprintf(text + at, sizeof text - at, "model = { bodies = (");
  for (int k = 0; k < 6; k++) {
    char par[16] = "ground";
    if (k) snprintf(par, sizeof par, "b%d", k - 1);
    at += (size_t)snprintf(
        text + at, sizeof text - at,
        "%s{ name = \"a%d\"; parent = \"%s\"; joint = { type = \"revolute\"; axis = [0, 1, 0]; "
        "}; mass = 1; inertia = [1, 1, 1, 0, 0, 0]; }, { name = \"b%d\"; parent = \"a%d\"; "
        "joint = { type = \"revolute\"; axis = [1, 0, 0]; }; mass = 1e-8; inertia = [1e-16, "
        "1e-16, 1e-16, 0, 0, 0]; }",
        k ? ", " : "", k, par, k, k);
  }
  snprintf(text + at, sizeof text - at,
           "); chain = { name = \"g\"; n = 20; parent = \"b5\"; joint = \"revolute\"; axis = "
           "[0, 1, 0]; length = 0.1; mass = 1; radius = 0.01; }; };");
  mbsConfig *c;
  mbsModel *m;
  MBS_EXPECT_OK(build(text, NULL, 0, &c, &m));
  if (!m) {
    mbs_configDestroy(&c);
    return;
  }
  for (int P = 2; P <= 5; P++) {
    int start[8];
    MBS_EXPECT_OK(mbs_partitionModel(m, P, start));
    for (int r = 1; r < P; r++)
      for (int b = start[r]; b < m->nbody; b++) {
        int p = m->body_parent[b];
        int light = p >= 0 && (m->body_mass[p] < 1e-3 * m->body_mass[b] ||
                               m->body_mass[b] < 1e-3 * m->body_mass[p]);
        MBS_EXPECT(!(light && p < start[r]),
                   "light P = %d: the light joint %d -> %d crosses the boundary at %d", P, p, b,
                   start[r]);
      }
    for (int r = 0; r < P; r++) {
      mbsModel *ml = NULL;
      MBS_EXPECT_OK(mbs_configBuildLocal(c, P, r, &ml));
      if (!ml) continue;
      int same = ml->part_n == P;
      for (int k = 0; same && k <= P; k++) same = ml->part_start[k] == start[k];
      MBS_EXPECT(same, "light P = %d rank %d: the local build's decomposition differs", P, r);
      mbs_modelDestroy(&ml);
    }
  }
  mbs_modelDestroy(&m);
  mbs_configDestroy(&c);
}

// issue 30: integer literals beyond 32 bits keep their value (libconfig 1.5 wrapped them), the
// real-number forms around them are untouched, and names, strings and comments with digits too
static void test_wide_integers(void) {
  static const struct {
    const char *text;
    double mass, gz; // expected body mass and gravity z; mass < 0: an error with fragment err
    const char *err;
  } cases[] = {
      {"model = { gravity = [0, 0, -12345678901]; bodies = ({ joint = { type = \"revolute\"; }; "
       "name = \"b12345678901\"; "
       "mass = 4294967297; inertia = [1e10, 1e10, 1e10, 0, 0, 0]; }); };",
       4294967297.0, -12345678901.0, NULL},
      {"model = { gravity = [0, 0, -.12345678901]; bodies = ({ joint = { type = \"revolute\"; }; "
       "name = \"b\"; "
       "mass = 12345678901.5; inertia = [1e10, 1e10, 1e10, 0, 0, 0]; }); };",
       12345678901.5, -.12345678901, NULL},
      {"model = { gravity = [0, 0, 1.5e+12345678901]; bodies = ({ joint = { type = \"revolute\"; "
       "}; name = \"b\"; mass = 1; "
       "inertia = [1, 1, 1, 0, 0, 0]; }); };",
       -1, 0, "not finite"},
      {"# 99999999999999999999 in a comment\nmodel = { gravity = [0, 0, 0x2540BE3FF]; /* "
       "4294967297 */ bodies = ({ joint = { type = \"revolute\"; }; name = \"b 4294967297\"; mass "
       "= 0x100000001L; "
       "inertia = [1e10, 1e10, 1e10, 0, 0, 0]; }); };",
       4294967297.0, 9999999999.0, NULL},
      {"model = { bodies = ({ joint = { type = \"revolute\"; }; name = \"b\"; mass = 1; inertia = "
       "[1, 1, 1, 0, 0, 0]; }); };\n"
       "solver = { max_iter = 4294967297; };",
       -1, 0, "t.cfg:2: solver.max_iter must be >= 1 (got 4294967297, beyond the 32-bit range)"},
      {"model = { bodies = ({ joint = { type = \"revolute\"; }; name = \"b\"; mass = 1; inertia = "
       "[1, 1, 1, 0, 0, 0]; }); };\n"
       "output = { every = -99999999999999999999; };",
       -1, 0, "t.cfg:2: integer -99999999999999999999 does not fit in 64 bits"},
      {"\xef\xbb\xbfmodel = { bodies = ({ joint = { type = \"revolute\"; }; name = \"b\"; mass = "
       "2; inertia = [1, 1, 1, 0, 0, 0]; "
       "}); gravity = [0, 0, 9223372036854775807]; };",
       2, 9223372036854775807.0, NULL},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    mbsModel *m = NULL;
    mbsErr e = build(cases[k].text, NULL, 0, NULL, &m);
    if (cases[k].mass < 0) {
      MBS_EXPECT(e == MBS_ERR_INPUT && strstr(mbs_errMsg(), cases[k].err),
                 "wide case %zu: want \"%s\", got %d \"%s\"", k, cases[k].err, (int)e,
                 mbs_errMsg());
    } else {
      MBS_EXPECT(!e && m, "wide case %zu: %s", k, mbs_errMsg());
      if (m) {
        MBS_EXPECT(m->body_mass[0] == cases[k].mass, "wide case %zu: mass %.17g", k,
                   m->body_mass[0]);
        MBS_EXPECT(m->gravity[2] == cases[k].gz, "wide case %zu: gravity %.17g", k, m->gravity[2]);
      }
    }
    mbs_modelDestroy(&m);
  }
  // --set: the same reader
  const char *sets[] = {"solver.max_iter=0x100000000"};
  mbsModel *m = NULL;
  mbsErr e = build(cases[0].text, sets, 1, NULL, &m);
  MBS_EXPECT(e == MBS_ERR_USAGE && strstr(mbs_errMsg(), "--set solver.max_iter=0x100000000: "
                                                        "solver.max_iter must be >= 1 (got "
                                                        "4294967296"),
             "--set wide: %d \"%s\"", (int)e, mbs_errMsg());
  mbs_modelDestroy(&m);
}

// the solver options' equality comes from the solver group's descriptor rows: for every row,
// changing that one field (its first byte at the row's offset: an int, a real or a vector's first
// entry) flips mbs_configSolverOptEqual, unless the row is left out (no_equal: the loop layer's
// keys). Iterates the table, so a new row is checked without editing this test.
static void test_solver_equal(void) {
  const mbsOptGroup *g = mbs_cfgOptGroup("solver");
  MBS_EXPECT(g != NULL, "no solver group");
  if (!g) return;
  mbsOption a, b;
  mbs_optionDefault(&a);
  MBS_EXPECT(mbs_configSolverOptEqual(&a, &a), "equality is not reflexive");
  int compared = 0, left = 0;
  for (int k = 0; k < g->n; k++) {
    const mbsOptDesc *d = g->rows + k;
    MBS_EXPECT(d->type != MBS_OPT_STRING, "solver.%s: a string (not in mbsOption)", d->key);
    if (d->type == MBS_OPT_STRING) continue;
    MBS_EXPECT(d->offset < sizeof a, "solver.%s: offset %zu", d->key, d->offset);
    memcpy(&b, &a, sizeof b);
    ((unsigned char *)&b)[d->offset] ^= 1;
    int eq = mbs_configSolverOptEqual(&a, &b), eq2 = mbs_configSolverOptEqual(&b, &a);
    MBS_EXPECT(eq == eq2, "solver.%s: equality is not symmetric", d->key);
    MBS_EXPECT(eq == (d->no_equal != 0), "solver.%s changed: equal = %d (no_equal %d)", d->key, eq,
               d->no_equal);
    compared += !d->no_equal, left += d->no_equal != 0;
  }
  printf("solver options: %d keys compared, %d left to the loop layer\n", compared, left);
}

int main(int argc, char **argv) {
  if (argc > 1) configs_dir = argv[1];
  test_mixed();
  test_defaults();
  test_set();
  test_option_keys();
  test_solver_equal();
  test_errors();
  test_trajectory();
  test_shipped();
  test_partition_forest();
  test_partition_light();
  test_wide_integers();
  return mbs_test_finish("test_config");
}
