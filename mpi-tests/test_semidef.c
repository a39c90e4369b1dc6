/// \file test_semidef.c
/// Semidefinite body inertias on moving joints (docs/model.md "Inertia", issue 30): a thin rod
/// (mass m, length L, no moment about its own axis z, com at L/2 below the hinge) hinged at one
/// end across its axis is a pendulum, q̈ = -(3 g / (2 L)) sin q, run by aba and crba from a cfg
/// and from a URDF (1e-12 relative). The same rod hinged about its own axis, on a spherical or
/// on a free joint has a joint motion without inertia and is refused at the body; the
/// constraint-force methods refuse the accepted rod at solver.method; solver.method = auto
/// predicts only aba and crba for it.
#include <stdio.h>
#include "mbs_test.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_solver.h"
#include "mbspar/mbs_solverauto.h"
#include "mbspar/mbs_urdf.h"

#define MASS 0.3
#define LEN  0.4
#define GRAV 9.81
#define Q0   0.7

// the rod along -z from the hinge (Izz = 0), joint \p joint, solver.method \p method (NULL: auto)
static void rodCfg(char *buf, size_t n, const char *joint, const char *method) {
  int w = snprintf(buf, n,
                   "model = { gravity = [0, 0, %.17g]; bodies = ( { name = \"rod\"; parent = "
                   "\"ground\"; joint = %s; mass = %.17g; com = [0, 0, %.17g]; inertia = "
                   "[%.17g, %.17g, 0, 0, 0, 0]; } ); };\n",
                   -GRAV, joint, MASS, -LEN / 2, MASS * LEN * LEN / 12, MASS * LEN * LEN / 12);
  if (method && w > 0 && (size_t)w < n)
    snprintf(buf + w, n - (size_t)w, "solver = { method = \"%s\"; };\n", method);
}

#define URDF_ROD(axis)                                                                             \
  "<robot name=\"r\">\n<link name=\"world\"/>\n<link name=\"rod\"><inertial>"                      \
  "<origin xyz=\"0 0 -0.2\"/><mass value=\"0.3\"/><inertia ixx=\"0.004\" iyy=\"0.004\" izz=\"0\" " \
  "ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n<joint name=\"j\" type=\"revolute\">"        \
  "<parent link=\"world\"/><child link=\"rod\"/><axis xyz=\"" axis "\"/></joint>\n</robot>\n"

// build (cfg text, optional URDF) -> the error and, on success, q̈ of the rod at q0
static mbsErr build(const char *label, const char *text, const char *urdf, double *qdd,
                    mbsModel **keep) {
  mbsConfig *cfg = NULL;
  mbsModel *m = NULL;
  mbsState *s = NULL;
  mbsWork *w = NULL;
  mbsErr e = mbs_configParse(text, "rod.cfg", NULL, 0, &cfg);
  if (!e && urdf) e = mbs_configSetUrdf(cfg, urdf, strlen(urdf));
  if (!e) e = mbs_configBuildModel(cfg, &m);
  if (!e && qdd) {
    e = mbs_stateCreate(m, &s);
    if (!e) e = mbs_workCreate(m, &w);
    if (!e && urdf) s->q[0] = Q0; // the URDF's q0 is 0
    if (!e) e = mbs_forward(m, s, w);
    if (!e) *qdd = w->qdd[0];
  }
  printf("  %-40s %s%s\n", label, e ? "refused: " : "ok", e ? mbs_errMsg() : "");
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  if (keep)
    *keep = m;
  else
    mbs_modelDestroy(&m);
  mbs_configDestroy(&cfg);
  return e;
}

static void accepted(const char *label, const char *text, const char *urdf) {
  double qdd = 0, want = -(3 * GRAV / (2 * LEN)) * sin(Q0);
  mbsErr e = build(label, text, urdf, &qdd, NULL);
  MBS_EXPECT(!e, "%s: refused: %s", label, mbs_errMsg());
  MBS_EXPECT(!e && fabs(qdd - want) <= 1e-12 * fabs(want), "%s: q̈ %.17g, closed form %.17g", label,
             qdd, want);
}

static void refused(const char *label, const char *text, const char *urdf, const char *frag) {
  mbsErr e = build(label, text, urdf, NULL, NULL);
  MBS_EXPECT(e == MBS_ERR_INPUT && strstr(mbs_errMsg(), frag),
             "%s: error %d \"%s\", want input error with \"%s\"", label, (int)e, mbs_errMsg(),
             frag);
  mbs_errClear();
}

int main(void) {
  char buf[1024];
  static const char hinge[] = "{ type = \"revolute\"; axis = [0, 1, 0]; q0 = [0.7]; }";
  const char *baselines[] = {"aba", "crba"};
  for (int k = 0; k < 2; k++) {
    char label[64];
    rodCfg(buf, sizeof buf, hinge, baselines[k]);
    snprintf(label, sizeof label, "cfg rod across its axis, %s", baselines[k]);
    accepted(label, buf, NULL);
    snprintf(buf, sizeof buf, "model = { urdf = \"rod.urdf\"; };\nsolver = { method = \"%s\"; };\n",
             baselines[k]);
    snprintf(label, sizeof label, "URDF rod across its axis, %s", baselines[k]);
    accepted(label, buf, URDF_ROD("0 1 0"));
  }

  // a joint motion the rod's inertia cannot feel
  rodCfg(buf, sizeof buf, "{ type = \"revolute\"; axis = [0, 0, 1]; }", "aba");
  refused("cfg rod about its own axis", buf, NULL, "revolute joint's motion has no inertia");
  rodCfg(buf, sizeof buf, "{ type = \"spherical\"; }", "aba");
  refused("cfg rod on a spherical joint", buf, NULL, "spherical joint's motion has no inertia");
  rodCfg(buf, sizeof buf, "{ type = \"free\"; }", "aba");
  refused("cfg rod on a free joint", buf, NULL, "free joint's motion has no inertia");
  refused("URDF rod about its own axis",
          "model = { urdf = \"rod.urdf\"; };\nsolver = { method = \"aba\"; };\n", URDF_ROD("0 0 1"),
          "joint \"j\" (link \"rod\"): the revolute joint's motion has no");
  // a negative moment is still refused
  snprintf(buf, sizeof buf,
           "model = { bodies = ( { name = \"rod\"; parent = \"ground\"; joint = %s; mass = 1; "
           "inertia = [1, 1, -1e-6, 0, 0, 0]; } ); };\nsolver = { method = \"aba\"; };\n",
           hinge);
  refused("negative principal moment", buf, NULL, "inertia is not positive semidefinite");

  // the constraint-force methods factor every body's inertia: refused at solver.method
  const char *cfs[] = {"jacobi", "gs", "sor", "chebyshev", "jcg", "direct"};
  for (size_t k = 0; k < sizeof cfs / sizeof cfs[0]; k++) {
    rodCfg(buf, sizeof buf, hinge, cfs[k]);
    refused(cfs[k], buf, NULL, "use solver.method = aba or crba");
  }
  for (int id = 0; id < MBS_SOLVER_COUNT; id++) { // the table: only aba and crba run it
    const mbsSolverType *t = mbs_solverFind(id);
    if (t)
      MBS_EXPECT(t->semidef_bodies == (id == MBS_SOLVER_ABA || id == MBS_SOLVER_CRBA),
                 "%s: semidef_bodies = %d", t->name, t->semidef_bodies);
  }

  // auto: built undecided (no refusal), predicts only methods that run the rod
  mbsModel *m = NULL;
  rodCfg(buf, sizeof buf, hinge, NULL);
  mbsErr e = build("auto (undecided)", buf, NULL, NULL, &m);
  MBS_EXPECT(!e && m && m->nsemidef_g == 1, "auto: build failed or rod not counted");
  if (!e && m) {
    mbsAutoJob j;
    mbsSolverAuto out;
    int method = -1;
    mbs_autoDefaults(&j);
    memset(&out, 0, sizeof out);
    e = mbs_autoPredict(m, &j, &out, &method);
    MBS_EXPECT(!e && (method == MBS_SOLVER_ABA || method == MBS_SOLVER_CRBA), "auto chose %d (%s)",
               method, e ? mbs_errMsg() : "");
    for (int k = 0; k < out.ncand; k++)
      MBS_EXPECT(mbs_solverCaps(out.cand[k])->semidef_bodies, "auto predicted %s",
                 mbs_solverName(out.cand[k]));
  }
  mbs_modelDestroy(&m);
  return mbs_test_finish("test_semidef");
}
