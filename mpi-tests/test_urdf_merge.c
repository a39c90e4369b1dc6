/// \file test_urdf_merge.c
/// Fixed-joint links merged into their parent's body (docs/urdf.md "Merging", issue 30), one
/// robot per class of real URDF that mbspar refused before: a point mass with zero inertia on a
/// fixed joint, a thin rod with a zero principal moment, a tiny semidefinite dummy root, a chain
/// of fixed joints with rotations, a merged link with a moving child. Each robot is a pendulum
/// about y hanging from the world, so q̈ at q = 0 has a closed form written out from the file's
/// numbers, q̈ = -g_z Σ m x / Σ (I_yy + m (x² + z²)), independent of the merging code; the
/// merged links are reported by `check` (mbs_urdfPrint) with the body they went into.
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include "mbs_test.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_poses.h"
#include "mbspar/mbs_urdf.h"

#define ARM                                                                                        \
  "<robot name=\"r\">\n<link name=\"world\"/>\n"                                                   \
  "<link name=\"arm\"><inertial><origin xyz=\"0.3 0 0\"/><mass value=\"1\"/>"                      \
  "<inertia ixx=\"0.01\" iyy=\"0.02\" izz=\"0.03\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial>"     \
  "</link>\n<joint name=\"swing\" type=\"revolute\"><parent link=\"world\"/>"                      \
  "<child link=\"arm\"/><axis xyz=\"0 1 0\"/></joint>\n"
#define ZERO_I "<inertia ixx=\"0\" iyy=\"0\" izz=\"0\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/>"
#define FIXED(name, parent, child, origin)                                                         \
  "<joint name=\"" name "\" type=\"fixed\"><parent link=\"" parent "\"/><child link=\"" child      \
  "\"/><origin " origin "/></joint>\n"

// load \p urdf at q = 0 (ABA): q̈ of joint "swing" equals -g_z num / den, the model has \p nbody
// bodies, and `check` lists \p merged ("LINK -> BODY")
static void one(const char *label, const char *urdf, double num, double den, int nbody,
                const char *merged) {
  static const char cfgtext[] =
      "model = { urdf = \"robot.urdf\"; };\nsolver = { method = \"aba\"; };\n";
  mbsConfig *cfg = NULL;
  mbsModel *m = NULL;
  mbsState *s = NULL;
  mbsWork *w = NULL;
  mbsErr e = mbs_configParse(cfgtext, "robot.cfg", NULL, 0, &cfg);
  if (!e) e = mbs_configSetUrdf(cfg, urdf, strlen(urdf));
  if (!e) e = mbs_configBuildModel(cfg, &m);
  if (!e) e = mbs_stateCreate(m, &s);
  if (!e) e = mbs_workCreate(m, &w);
  if (!e) e = mbs_forward(m, s, w);
  MBS_EXPECT(!e, "%s: refused: %s", label, mbs_errMsg());
  if (!e) {
    int b = mbs_modelFindBody(m, "arm");
    double want = -m->gravity[2] * num / den, got = b >= 0 ? w->qdd[m->body_dofadr[b]] : 0;
    MBS_EXPECT(b >= 0 && fabs(got - want) <= 1e-12 * fabs(want), "%s: q̈ %.17g, closed form %.17g",
               label, got, want);
    MBS_EXPECT(m->nbody == nbody, "%s: %d bodies, want %d", label, m->nbody, nbody);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f) mbs_urdfPrint(cfg->urdf, f), fclose(f);
    char want_line[128];
    snprintf(want_line, sizeof want_line, "merged %s ", merged);
    MBS_EXPECT(buf && strstr(buf, want_line), "%s: check does not report \"%s\":\n%s", label,
               merged, buf ? buf : "");
    free(buf);
    printf("  %-34s q̈ %.6f (closed form %.6f), %d bodies\n", label, got, want, m->nbody);
  }
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&m);
  mbs_configDestroy(&cfg);
}

int main(void) {
  // the arm alone: Σ m x = 0.3, Σ (Iyy + m (x² + z²)) = 0.02 + 0.09
  // 1. a 0.5 kg point mass at (0.5, 0, 0.2): + 0.25, + 0.5 * 0.29
  one("point mass on a fixed joint",
      ARM "<link name=\"sensor\"><inertial><mass value=\"0.5\"/>" ZERO_I
          "</inertial></link>\n" FIXED("js", "arm", "sensor", "xyz=\"0.5 0 0.2\"") "</robot>\n",
      0.3 + 0.25, 0.11 + 0.145, 1, "sensor -> arm");
  // 2. a thin rod along x (ixx = 0), 0.3 kg, centre at 0.4 + 0.1: + 0.15, + 0.004 + 0.3 * 0.25
  one("thin rod (zero principal moment)",
      ARM "<link name=\"rod\"><inertial><origin xyz=\"0.1 0 0\"/><mass value=\"0.3\"/>"
          "<inertia ixx=\"0\" iyy=\"0.004\" izz=\"0.004\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/>"
          "</inertial></link>\n" FIXED("jr", "arm", "rod", "xyz=\"0.4 0 0\"") "</robot>\n",
      0.3 + 0.15, 0.11 + 0.004 + 0.075, 1, "rod -> arm");
  // 3. a tiny dummy root (1e-6 kg, rank-one inertia) welded to a trunk; the arm swings from the
  //    trunk: the root is a body welded to the ground, the trunk merged into it
  one("tiny semidefinite dummy root",
      "<robot name=\"r\">\n<link name=\"base\"><inertial><mass value=\"1e-6\"/>"
      "<inertia ixx=\"1e-6\" iyy=\"1e-6\" izz=\"1e-6\" ixy=\"1e-6\" ixz=\"1e-6\" iyz=\"1e-6\"/>"
      "</inertial></link>\n<link name=\"trunk\"><inertial><mass value=\"2\"/>"
      "<inertia ixx=\"0.1\" iyy=\"0.2\" izz=\"0.3\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial>"
      "</link>\n" FIXED(
          "jt", "base", "trunk",
          "xyz=\"0 0 0\"") "<link name=\"arm\"><inertial><origin xyz=\"0.3 0 0\"/><mass "
                           "value=\"1\"/>"
                           "<inertia ixx=\"0.01\" iyy=\"0.02\" izz=\"0.03\" ixy=\"0\" ixz=\"0\" "
                           "iyz=\"0\"/></inertial>"
                           "</link>\n<joint name=\"swing\" type=\"revolute\"><parent "
                           "link=\"trunk\"/>"
                           "<child link=\"arm\"/><axis xyz=\"0 1 0\"/></joint>\n</robot>\n",
      0.3, 0.11, 2, "trunk -> base");
  // 4. a chain of fixed joints: f1 at (0.2, 0, 0) turned 90° about z, f2 at (0.1, 0, 0) in f1
  //    (that is (0.2, 0.1, 0)), a 0.2 kg point mass at (0.1, 0, 0) in f2: (0.2, 0.2, 0);
  //    + 0.2 * 0.2, + 0.2 * 0.04 (f1 and f2 massless)
  one("chain of fixed joints",
      ARM "<link name=\"f1\"/>\n<link name=\"f2\"/>\n<link name=\"tip\"><inertial>"
          "<origin xyz=\"0.1 0 0\"/><mass value=\"0.2\"/>" ZERO_I "</inertial></link>\n" FIXED(
              "j1", "arm", "f1", "xyz=\"0.2 0 0\" rpy=\"0 0 1.5707963267948966\"")
              FIXED("j2", "f1", "f2", "xyz=\"0.1 0 0\"")
                  FIXED("j3", "f2", "tip", "xyz=\"0 0 0\"") "</robot>\n",
      0.3 + 0.04, 0.11 + 0.008, 1, "tip -> arm");
  // 5. a merged link with a moving child: a 0.4 kg point-mass mount at (0.6, 0, 0) carries a
  //    hand (isotropic inertia, centre (0.6, 0, -0.1) on the wrist axis) on a revolute joint
  //    about z through the mount; at rest nothing turns the wrist, so the hand swings as part of
  //    the arm: + 0.4 * 0.6 + 0.5 * 0.6, + 0.4 * 0.36 + 0.001 + 0.5 * (0.36 + 0.01)
  one("merged link with a moving child",
      ARM
      "<link name=\"mount\"><inertial><mass value=\"0.4\"/>" ZERO_I "</inertial></link>\n" FIXED(
          "jm", "arm", "mount", "xyz=\"0.6 0 0\"") "<link name=\"hand\"><inertial>"
                                                   "<origin xyz=\"0 0 -0.1\"/><mass value=\"0.5\"/>"
                                                   "<inertia ixx=\"0.001\" iyy=\"0.001\" "
                                                   "izz=\"0.001\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/>"
                                                   "</inertial></link>\n"
                                                   "<joint name=\"wrist\" type=\"revolute\">"
                                                   "<parent link=\"mount\"/><child link=\"hand\"/>"
                                                   "<axis xyz=\"0 0 1\"/></joint>\n</robot>\n",
      0.3 + 0.24 + 0.3, 0.11 + 0.144 + 0.001 + 0.185, 2, "mount -> arm");
  return mbs_test_finish("test_urdf_merge");
}
