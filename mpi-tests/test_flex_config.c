/// \file test_flex_config.c
/// The config keys of flexible bodies (issue 34 part 2a; docs/flexible.md; src/flex_config.c):
/// a cantilever with a tip node and a body hung from it is built with its modal data (m = 6 per
/// node + modes), the rigid-equivalent mass properties and the child's joint at the node; bad
/// input is refused with MBS_ERR_INPUT and "FILE:LINE:" of the setting at fault. flexible.file
/// (docs/flexible.md 14) without HDF5: a stand-in reader hands the core the beam's own modal data
/// (the model then holds the same doubles), or that data with one thing wrong (mbs_flexFileCheck
/// refuses it naming the dataset); without a reader the key is refused.
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

// flexible.file through a stand-in reader: the beam of GOOD's modal data, deep-copied, with
// fault `ff_fault` (0: none)
static const mbsFlexBody *ff_src;
static int ff_fault;

static mbsReal *ff_dup(const mbsReal *a, size_t n) {
  mbsReal *b = malloc(sizeof(mbsReal) * (n + 1));
  if (b && n) memcpy(b, a, sizeof(mbsReal) * n);
  return b;
}

static mbsErr ff_read(const char *path, mbsFlexFileData *d) {
  (void)path;
  memset(d, 0, sizeof *d);
  const mbsFlexModal *s = &ff_src->modal;
  mbsFlexModal *o = &d->modal;
  size_t m = (size_t)s->m, nfe = (size_t)s->nfe;
  *o = *s;
  o->M = ff_dup(s->M, m * m), o->K = ff_dup(s->K, m * m), o->Phi = ff_dup(s->Phi, 6 * nfe * m);
  o->x = ff_dup(s->x, nfe), o->omega_fixed = ff_dup(s->omega_fixed, (size_t)s->nmodes);
  o->Sbar = ff_dup(s->Sbar, 3 * m), o->rhoA = ff_dup(s->rhoA, nfe - 1);
  o->rhoJ = ff_dup(s->rhoJ, nfe - 1);
  d->mass = ff_src->rigid_mass;
  memcpy(d->com, ff_src->rigid_com, sizeof d->com);
  memcpy(d->inertia, ff_src->rigid_inertia, sizeof d->inertia);
  d->nnodes = ff_src->nnodes;
  for (int k = 0; k < d->nnodes; k++) {
    memcpy(d->node_name[k], ff_src->node_name[k], MBS_FLEX_NAME);
    d->node_fe[k] = mbs_flexNodeFe(ff_src, k);
  }
  if (ff_fault == 1) o->M[1] += 1e-3 * o->M[0];           // M not symmetric
  if (ff_fault == 2) o->Sbar[2 * m + 2] *= 1.001;         // Sbar off
  if (ff_fault == 3) d->mass *= 1.001;                    // rigid mass off
  if (ff_fault == 4) o->Phi[0] = 1e-3;                    // the root moves
  if (ff_fault == 5) o->K[(m - 1) * m + m - 1] *= -1;     // K indefinite
  if (ff_fault == 6) o->Phi[(6 * 5 + 2) * m + 2] += 1e-3; // M no longer the elements'
  if (ff_fault == 7) o->x[3] = o->x[2];                   // mesh not increasing
  if (ff_fault == 8) d->node_fe[0] = 0;                   // a node at the root
  if (ff_fault == 9) memcpy(d->node_name[0], "t,p", 4);   // a name a CSV header cannot hold
  return MBS_OK;
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
  // flexible.file with the stand-in reader
  mbsModel *mb = NULL;
  MBS_EXPECT_OK(build(GOOD, &mb));
  char *ft = edit("beam = { length = 1.0; E = 2.1e11; rho = 7850.0; area = 1.0e-4;\n"
                  "                 Iy = 8.3333e-10; Iz = 8.3333e-10; elements = 10; };\n"
                  "        modes = 6;\n",
                  "file = \"x.h5\";\n\n\n");
  MBS_EXPECT(ft && mb, "file config");
  if (ft && mb) {
    ff_src = mbs_flexSetFindName(mb->flex, "beam");
    mbsErr e = build(ft, &m); // no reader registered
    MBS_EXPECT(e == MBS_ERR_INPUT && !strncmp(mbs_errMsg(), "t.cfg:5:", 8) &&
                   strstr(mbs_errMsg(), "no HDF5 reader"),
               "no reader: %d %s", (int)e, mbs_errMsg());
    mbs_modelDestroy(&m);
    mbs_flexFileSetReader(ff_read);
    MBS_EXPECT_OK(build(ft, &m));
    const mbsFlexBody *fb = m ? mbs_flexSetFindName(m->flex, "beam") : NULL;
    MBS_EXPECT(fb && fb->file && strstr(fb->file, "x.h5"), "the file body");
    if (fb) {
      const mbsFlexModal *a = &fb->modal, *b = &ff_src->modal;
      size_t mm = (size_t)b->m * (size_t)b->m;
      MBS_EXPECT(a->m == b->m && a->nfe == b->nfe && a->nbound == b->nbound &&
                     a->nmodes == b->nmodes && !memcmp(a->M, b->M, sizeof(mbsReal) * mm) &&
                     !memcmp(a->K, b->K, sizeof(mbsReal) * mm) &&
                     !memcmp(a->Phi, b->Phi, sizeof(mbsReal) * 6 * (size_t)b->nfe * (size_t)b->m),
                 "the file body's modal data is the beam's");
      MBS_EXPECT(m->body_mass[fb->body] == mb->body_mass[ff_src->body] && fb->nnodes == 1 &&
                     fb->spec.node_x[0] == 1.0 && fb->damping == 0.01,
                 "mass, node, damping");
    }
    mbs_modelDestroy(&m);
    static const char *const want[] = {NULL,
                                       "x.h5: /M: not symmetric",
                                       "x.h5: /Sbar: differs",
                                       "x.h5: /rigid/mass:",
                                       "x.h5: /Phi: row 0, column 0",
                                       "x.h5: /K: not positive semidefinite",
                                       "x.h5: /M: differs from the mass of the elements",
                                       "x.h5: /x: the FE node positions must increase",
                                       "x.h5: /node_fe: node \"tip\" at FE node 0",
                                       "x.h5: /node_names: name 0: "};
    for (ff_fault = 1; ff_fault < (int)(sizeof want / sizeof want[0]); ff_fault++) {
      e = build(ft, &m);
      MBS_EXPECT(e == MBS_ERR_INPUT && !strncmp(mbs_errMsg(), "t.cfg:5:", 8) &&
                     strstr(mbs_errMsg(), want[ff_fault]),
                 "fault %d: %d \"%s\" (expected %s)", ff_fault, (int)e, mbs_errMsg(),
                 want[ff_fault]);
      mbs_modelDestroy(&m);
    }
    ff_fault = 0;
    char *both = edit("modes = 6;", "file = \"x.h5\"; modes = 6;");
    e = both ? build(both, &m) : MBS_ERR_INTERNAL;
    MBS_EXPECT(e == MBS_ERR_INPUT && !strncmp(mbs_errMsg(), "t.cfg:7:", 8) &&
                   strstr(mbs_errMsg(), "beam and file both given"),
               "beam and file: %s", mbs_errMsg());
    mbs_modelDestroy(&m);
    free(both);
    mbs_flexFileSetReader(NULL);
  }
  free(ft);
  mbs_modelDestroy(&mb);
  return mbs_test_finish("test_flex_config");
}
