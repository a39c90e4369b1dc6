/// \file test_urdf_forces.c
/// Joint forces of URDF robots (docs/urdf.md "Joint forces"): model.urdf.joints (constant force,
/// spring with rest position, damper per joint, named by the URDF joint name) and the torque
/// table of model.urdf.torques.
///  - a pendulum URDF with force, spring and damper: q̈ equals the closed form
///    I q̈ = -m g l sin q + f - k (q - q_ref) - c q̇ to 1e-12 at several states, and equals the
///    same pendulum written as a cfg body with the same joint keys;
///  - <dynamics damping> of the file applies unless model.urdf.joints gives damping;
///  - a floating joint's six forces: a body whose force cancels gravity does not accelerate;
///  - bad entries are refused with the config's FILE:LINE (unknown joint, fixed joint, twice,
///    negative stiffness, stiffness on a floating joint);
///  - the torque table: linear interpolation, values held outside the samples, inverse.csv's
///    tau_LINK columns, and its errors with the CSV's FILE:LINE.
#include "mbs_test.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_torques.h"

static const char *const pend_urdf =
    "<?xml version=\"1.0\"?>\n"
    "<robot name=\"pendulum\">\n"
    "  <link name=\"world\"/>\n"
    "  <link name=\"rod\"><inertial><origin xyz=\"0 0 -0.5\"/><mass value=\"2\"/>\n"
    "    <inertia ixx=\"0.05\" iyy=\"0.04\" izz=\"0.01\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/>"
    "</inertial></link>\n"
    "  <joint name=\"hinge\" type=\"revolute\"><parent link=\"world\"/><child link=\"rod\"/>\n"
    "    <axis xyz=\"0 1 0\"/><dynamics damping=\"0.3\"/></joint>\n"
    "  <link name=\"tip\"/>\n"
    "  <joint name=\"tip_frame\" type=\"fixed\"><parent link=\"rod\"/><child link=\"tip\"/>"
    "<origin xyz=\"0 0 -1\"/></joint>\n"
    "  <link name=\"puck\"><inertial><mass value=\"0.5\"/>\n"
    "    <inertia ixx=\"0.01\" iyy=\"0.02\" izz=\"0.025\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/>"
    "</inertial></link>\n"
    "  <joint name=\"free\" type=\"floating\"><parent link=\"world\"/><child link=\"puck\"/>"
    "<origin xyz=\"2 0 0\"/></joint>\n"
    "</robot>\n";

// parse cfg text + the pendulum; build (NULL model and the error code on failure)
static mbsErr load(const char *cfgtext, mbsConfig **cfg, mbsModel **m) {
  *m = NULL;
  static const char *const sets[] = {"solver.method=aba"}; // the serial core's method
  mbsErr e = mbs_configParse(cfgtext, "robot.cfg", sets, 1, cfg);
  if (!e) e = mbs_configSetUrdf(*cfg, pend_urdf, strlen(pend_urdf));
  if (!e) e = mbs_configBuildModel(*cfg, m);
  return e;
}

static double hingeQdd(const mbsModel *m, double q, double qd, double tau) {
  mbsState *s = NULL;
  mbsWork *w = NULL;
  double r = NAN;
  int b = mbs_modelFindBody(m, "rod");
  if (!mbs_stateCreate(m, &s) && !mbs_workCreate(m, &w) && b >= 0) {
    s->q[m->body_qadr[b]] = q, s->qd[m->body_dofadr[b]] = qd, s->tau[m->body_dofadr[b]] = tau;
    if (!mbs_forward(m, s, w)) r = w->qdd[m->body_dofadr[b]];
  }
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  return r;
}

static void closedForm(void) {
  const char *cfgtext =
      "model = { urdf = { file = \"p.urdf\";\n"
      "  joints = ( { name = \"hinge\"; force = 0.7; stiffness = 3.0; springref = 0.1;\n"
      "               damping = 0.2; } ); }; };\n";
  // the same pendulum as a cfg body (hinge at the origin, rod along -z)
  const char *bodytext =
      "model = { bodies = ( { name = \"rod\"; parent = \"ground\";\n"
      "  joint = { type = \"revolute\"; axis = [0, 1, 0]; force = 0.7; stiffness = 3.0;\n"
      "            springref = 0.1; damping = 0.2; };\n"
      "  mass = 2.0; com = [0, 0, -0.5]; inertia = [0.05, 0.04, 0.01, 0, 0, 0]; } ); };\n";
  mbsConfig *cfg = NULL, *cb = NULL;
  mbsModel *m = NULL, *mb = NULL;
  MBS_EXPECT_OK(load(cfgtext, &cfg, &m));
  static const char *const aba[] = {"solver.method=aba"};
  MBS_EXPECT_OK(mbs_configParse(bodytext, "body.cfg", aba, 1, &cb));
  if (cb) MBS_EXPECT_OK(mbs_configBuildModel(cb, &mb));
  double worst = 0, worst_cfg = 0;
  for (int k = 0; m && mb && k < 5; k++) {
    double q = -1.2 + 0.7 * k, qd = 1.5 - 0.8 * k, tau = 0.25 * k;
    double I = 0.04 + 2 * 0.5 * 0.5, mgl = 2 * 9.81 * 0.5;
    double ref = (-mgl * sin(q) + 0.7 - 3.0 * (q - 0.1) - 0.2 * qd + tau) / I;
    double got = hingeQdd(m, q, qd, tau), alt = hingeQdd(mb, q, qd, tau);
    double e1 = fabs(got - ref) / fmax(1, fabs(ref)), e2 = fabs(got - alt) / fmax(1, fabs(alt));
    worst = e1 > worst || isnan(e1) ? e1 : worst; // a NaN stays (fmax would drop it)
    worst_cfg = e2 > worst_cfg || isnan(e2) ? e2 : worst_cfg;
  }
  printf("  pendulum with force, spring, damper: |q̈ - closed form| %.2e, |q̈ - cfg body| %.2e\n",
         worst, worst_cfg);
  MBS_EXPECT(m && worst <= 1e-12, "closed form: %.3e", worst);
  MBS_EXPECT(mb && worst_cfg <= 1e-12, "cfg body: %.3e", worst_cfg);
  mbs_modelDestroy(&m), mbs_modelDestroy(&mb);
  mbs_configDestroy(&cfg), mbs_configDestroy(&cb);
  // the file's damping (0.3) when the config gives none; the config's replaces it
  double I = 0.04 + 0.5, q = 0.4, qd = 2.0, g = -2 * 9.81 * 0.5 * sin(q);
  MBS_EXPECT_OK(load("model = { urdf = \"p.urdf\"; };\n", &cfg, &m));
  if (m) MBS_EXPECT_NEAR(hingeQdd(m, q, qd, 0), (g - 0.3 * qd) / I, 1e-12);
  mbs_modelDestroy(&m), mbs_configDestroy(&cfg);
  MBS_EXPECT_OK(load("model = { urdf = { file = \"p.urdf\"; joints = ( { name = \"hinge\"; "
                     "force = 1.0; } ); }; };\n",
                     &cfg, &m));
  if (m) MBS_EXPECT_NEAR(hingeQdd(m, q, qd, 0), (g + 1.0 - 0.3 * qd) / I, 1e-12);
  mbs_modelDestroy(&m), mbs_configDestroy(&cfg);
  MBS_EXPECT_OK(load("model = { urdf = { file = \"p.urdf\"; joints = ( { name = \"hinge\"; "
                     "damping = 0.0; } ); }; };\n",
                     &cfg, &m));
  if (m) MBS_EXPECT_NEAR(hingeQdd(m, q, qd, 0), g / I, 1e-12);
  mbs_modelDestroy(&m), mbs_configDestroy(&cfg);
}

// the floating joint: forces [fx fy fz tx ty tz]; m g up cancels gravity, a torque about z
// turns the puck at tz / Izz
static void floating(void) {
  mbsConfig *cfg = NULL;
  mbsModel *m = NULL;
  MBS_EXPECT_OK(load("model = { urdf = { file = \"p.urdf\"; joints = ( { name = \"free\"; "
                     "force = [0, 0, 4.905, 0, 0, 0.05]; } ); }; };\n",
                     &cfg, &m));
  mbsState *s = NULL;
  mbsWork *w = NULL;
  int b = m ? mbs_modelFindBody(m, "puck") : -1;
  if (b >= 0 && !mbs_stateCreate(m, &s) && !mbs_workCreate(m, &w) && !mbs_forward(m, s, w)) {
    const double *a = w->qdd + m->body_dofadr[b];
    double lin = fabs(a[0]) + fabs(a[1]) + fabs(a[2]);
    printf("  floating joint: linear q̈ %.2e (force cancels gravity), angular z %.15g\n", lin, a[5]);
    MBS_EXPECT(lin <= 1e-12, "the floating body accelerates: %.3e", lin);
    MBS_EXPECT_NEAR(a[5], 0.05 / 0.025, 1e-12);
  } else {
    MBS_EXPECT(0, "floating case did not evaluate: %s", mbs_errMsg());
  }
  mbs_workDestroy(&w), mbs_stateDestroy(&s), mbs_modelDestroy(&m), mbs_configDestroy(&cfg);
}

// a config that must be refused with robot.cfg:LINE: and the fragment
static void refused(const char *text, int line, const char *frag) {
  mbsConfig *cfg = NULL;
  mbsModel *m = NULL;
  mbsErr e = load(text, &cfg, &m);
  char want[64];
  snprintf(want, sizeof want, "robot.cfg:%d: ", line);
  MBS_EXPECT(e == MBS_ERR_INPUT, "not refused: %s", text);
  MBS_EXPECT(!strncmp(mbs_errMsg(), want, strlen(want)) && strstr(mbs_errMsg(), frag),
             "message \"%s\" (want %s... %s)", mbs_errMsg(), want, frag);
  mbs_modelDestroy(&m), mbs_configDestroy(&cfg);
}

static void refusals(void) {
  refused("model = { urdf = { file = \"p.urdf\";\n joints = ( { name = \"hinge\"; },\n"
          "  { name = \"knee\"; force = 1.0; } ); }; };\n",
          3, "model.urdf.joints[1]: \"knee\" is not a joint of p.urdf");
  refused("model = { urdf = { file = \"p.urdf\";\n joints = ( { name = \"tip_frame\"; "
          "force = 1.0; } ); }; };\n",
          2, "joint \"tip_frame\" is fixed");
  refused("model = { urdf = { file = \"p.urdf\";\n joints = ( { name = \"hinge\"; force = 1.0; "
          "},\n { name = \"hinge\"; damping = 1.0; } ); }; };\n",
          3, "listed twice");
  refused("model = { urdf = { file = \"p.urdf\";\n joints = ( { name = \"hinge\";\n "
          "stiffness = -1.0; } ); }; };\n",
          3, "joint stiffness must be >= 0");
  refused("model = { urdf = { file = \"p.urdf\";\n joints = ( { name = \"free\";\n "
          "stiffness = 1.0; } ); }; };\n",
          3, "stiffness is not supported for the floating joint");
  refused("model = { urdf = { file = \"p.urdf\";\n joints = ( { force = 1.0; } ); }; };\n", 2,
          "missing name");
}

// the torque table
static void table(void) {
  mbsConfig *cfg = NULL;
  mbsModel *m = NULL;
  MBS_EXPECT_OK(load("model = { urdf = \"p.urdf\"; };\n", &cfg, &m));
  if (!m) return;
  const mbsUrdf *u = cfg->urdf;
  mbsTorques *tq = NULL;
  const char *csv = "# a comment\nt, hinge\n0, 1.0\n\n2, 3.0\n3, -1\n";
  MBS_EXPECT_OK(mbs_torquesRead(u, csv, strlen(csv), "tau.csv", &tq));
  mbsReal tau[16] = {0};
  int d = m->body_dofadr[mbs_modelFindBody(m, "rod")];
  const double ts[6] = {-1, 0, 0.5, 2, 2.75, 9}, want[6] = {1, 1, 1.5, 3, 0, -1};
  for (int k = 0; tq && k < 6; k++) {
    mbs_torquesAt(tq, m, ts[k], tau);
    MBS_EXPECT_NEAR(tau[d], want[k], 1e-15);
  }
  mbs_torquesDestroy(&tq);
  // an inverse.csv: tau_LINK columns, q_/qd_/qdd_ skipped
  csv = "t,q_rod,qd_rod,qdd_rod,tau_rod\n0,5,5,5,2.5\n";
  MBS_EXPECT_OK(mbs_torquesRead(u, csv, strlen(csv), "inverse.csv", &tq));
  if (tq) mbs_torquesAt(tq, m, 7, tau);
  MBS_EXPECT_NEAR(tau[d], 2.5, 0);
  mbs_torquesDestroy(&tq);
  // errors: FILE:LINE and the fragment
  static const struct {
    const char *csv, *msg;
  } bad[] = {
      {"t,knee\n0,1\n", "tau.csv:1: column 2: \"knee\" is not a joint of the robot"},
      {"time,hinge\n0,1\n", "tau.csv:1: the first column must be t"},
      {"t,tip_frame\n0,1\n", "tau.csv:1: column 2: joint \"tip_frame\" is fixed"},
      {"t,free\n0,1\n", "tau.csv:1: column 2: joint \"free\" is floating"},
      {"t,hinge,hinge\n0,1,1\n", "tau.csv:1: column 3: joint \"hinge\" has a column already"},
      {"t,hinge\n0,1\n1,2,3\n", "tau.csv:3: more fields than the header's 2"},
      {"t,hinge\n0,1\n1\n", "tau.csv:3: 1 fields, the header has 2"},
      {"t,hinge\n0,1\n1,x\n", "tau.csv:3: field 2: \"x\" is not a finite number"},
      {"t,hinge\n0,1\n1,nan\n", "tau.csv:3: field 2: \"nan\" is not a finite number"},
      {"t,hinge\n1,1\n1,2\n", "tau.csv:3: t = 1 does not increase"},
      {"t,hinge\n", "tau.csv:1: no rows after the header"},
      {"\n# nothing\n", "tau.csv:1: empty"},
      {"t\n0\n", "tau.csv:1: no joint columns"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    mbsErr e = mbs_torquesRead(u, bad[k].csv, strlen(bad[k].csv), "tau.csv", &tq);
    MBS_EXPECT(e == MBS_ERR_INPUT && strstr(mbs_errMsg(), bad[k].msg) == mbs_errMsg(),
               "case %zu: got \"%s\", want \"%s\"", k, e ? mbs_errMsg() : "(accepted)", bad[k].msg);
    mbs_torquesDestroy(&tq);
  }
  const char nul[] = "t,hinge\n0,1\0\n";
  MBS_EXPECT(mbs_torquesRead(u, nul, sizeof nul - 1, "tau.csv", &tq) == MBS_ERR_INPUT &&
                 strstr(mbs_errMsg(), "NUL byte"),
             "a NUL byte accepted: %s", mbs_errMsg());
  mbs_torquesDestroy(&tq);
  mbs_modelDestroy(&m), mbs_configDestroy(&cfg);
}

int main(void) {
  closedForm();
  floating();
  refusals();
  table();
  return mbs_test_finish("test_urdf_forces");
}
