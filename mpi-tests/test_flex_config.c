/// \file test_flex_config.c
/// The config keys of flexible bodies (issue 34 part 2a; docs/flexible.md; src/flex_config.c):
/// a cantilever with a tip node and a body hung from it is built with its modal data (m = 6 per
/// node + modes), the rigid-equivalent mass properties and the child's joint at the node; bad
/// input is refused with MBS_ERR_INPUT and "FILE:LINE:" of the setting at fault.
#include "mbs_test.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_flex.h"

static const char *const GOOD =
    "model = { gravity = [0.0, 0.0, -9.81];\n"                                            // 1
    "  bodies = (\n"                                                                      // 2
    "    { name = \"beam\"; parent = \"ground\"; joint = { type = \"fixed\"; };\n"        // 3
    "      flexible = {\n"                                                                // 4
    "        beam = { length = 1.0; E = 2.1e11; rho = 7850.0; area = 1.0e-4;\n"           // 5
    "                 Iy = 8.3333e-10; Iz = 8.3333e-10; elements = 10; };\n"              // 6
    "        modes = 6;\n"                                                                // 7
    "        damping = 0.01;\n"                                                           // 8
    "        nodes = ( { name = \"tip\"; position = [1.0, 0.0, 0.0]; } );\n"              // 9
    "      }; },\n"                                                                       // 10
    "    { name = \"bob\"; parent = \"beam\";\n"                                          // 11
    "      joint = { type = \"revolute\"; node = \"tip\"; origin = [0.1, 0.0, 0.0]; };\n" // 12
    "      mass = 1.0; inertia = [0.1, 0.1, 0.1, 0.0, 0.0, 0.0]; }\n"                     // 13
    "  ); };\n";

// GOOD with the first occurrence of from replaced by to
static char *edit(const char *from, const char *to) {
  const char *p = strstr(GOOD, from);
  if (!p) return NULL;
  size_t n = strlen(GOOD) - strlen(from) + strlen(to) + 1;
  char *s = malloc(n);
  if (!s) return NULL;
  snprintf(s, n, "%.*s%s%s", (int)(p - GOOD), GOOD, to, p + strlen(from));
  return s;
}

static mbsErr build(const char *text, mbsModel **m) {
  mbsConfig *cfg = NULL;
  *m = NULL;
  mbsErr e = mbs_configParse(text, "t.cfg", NULL, 0, &cfg);
  if (!e) e = mbs_configBuildModel(cfg, m);
  mbs_configDestroy(&cfg);
  return e;
}

int main(void) {
  mbsModel *m = NULL;
  MBS_EXPECT_OK(build(GOOD, &m));
  if (m) {
    MBS_EXPECT(m->nflex_g == 1 && m->flex && m->flex->n == 1, "one flexible body expected");
    const mbsFlexBody *fb = mbs_flexSetFindName(m->flex, "beam");
    MBS_EXPECT(fb && fb->modal.m == 12 && fb->nnodes == 1, "12 modal coordinates expected");
    if (fb) {
      MBS_EXPECT(fb->body >= 0 && !strcmp(m->body_name[fb->body], "beam"), "body index");
      MBS_EXPECT_NEAR(fb->damping, 0.01, 0);
      MBS_EXPECT_NEAR(m->body_mass[fb->body], 7850.0 * 1e-4, 1e-15);
      MBS_EXPECT_NEAR(m->body_com[3 * fb->body], 0.5, 1e-15);
      int bob = -1;
      for (int b = 0; b < m->nbody; b++)
        if (!strcmp(m->body_name[b], "bob")) bob = b;
      MBS_EXPECT(bob >= 0 && mbs_flexSetAttachedNode(m->flex, bob) == 0, "bob hangs from tip");
      if (bob >= 0) MBS_EXPECT_NEAR(m->jnt_origin[3 * bob], 1.1, 1e-15); // node x + origin
    }
  }
  mbs_modelDestroy(&m);

  // refusals: {from, to, the line the message must name, a word it must contain}
  static const char *const bad[][4] = {
      {"modes = 6", "modes = 60", "t.cfg:7:", "interior dofs"},
      {"[1.0, 0.0, 0.0]; } )", "[1.0, 0.2, 0.0]; } )", "t.cfg:9:", "off the beam"},
      {"[1.0, 0.0, 0.0]; } )", "[0.55, 0.0, 0.0]; } )", "t.cfg:9:", "not on a node"},
      {"[1.0, 0.0, 0.0]; } )", "[2.0, 0.0, 0.0]; } )", "t.cfg:9:", "off the beam"},
      {"\"fixed\"; };\n", "\"fixed\"; }; mass = 2.0;\n", "t.cfg:3:", "mass given"},
      {"\"fixed\"; };\n", "\"fixed\"; }; inertia = [1.0,1.0,1.0,0.0,0.0,0.0];\n",
       "t.cfg:3:", "inertia given"},
      {"Iy = 8.3333e-10; ", "", "t.cfg:5:", "missing Iy"},
      {"elements = 10;", "elements = 10; foo = 1;", "t.cfg:6:", "unknown key"},
      {"damping = 0.01;", "dampin = 0.01;", "t.cfg:8:", "unknown key"},
      {"damping = 0.01;", "damping = -1.0;", "t.cfg:8:", ">= 0"},
      {"E = 2.1e11", "E = -2.1e11", "t.cfg:5:", "positive"},
      {"node = \"tip\"", "node = \"top\"", "t.cfg:12:", "no such node"},
      {"parent = \"beam\";", "parent = \"ground\";", "t.cfg:12:", "not a flexible body"},
      {"beam = { length", "bean = { length", "t.cfg:5:", "unknown key"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    char *t = edit(bad[k][0], bad[k][1]);
    MBS_EXPECT(t, "edit %zu did not apply", k);
    if (!t) continue;
    mbsErr e = build(t, &m);
    MBS_EXPECT(e == MBS_ERR_INPUT, "case %zu: expected an input error, got %d", k, (int)e);
    MBS_EXPECT(
        strncmp(mbs_errMsg(), bad[k][2], strlen(bad[k][2])) == 0 && strstr(mbs_errMsg(), bad[k][3]),
        "case %zu: message \"%s\" (expected %s ... %s)", k, mbs_errMsg(), bad[k][2], bad[k][3]);
    mbs_modelDestroy(&m);
    free(t);
  }
  return mbs_test_finish("test_flex_config");
}
