/// \file test_urdf.c
/// URDF reader (docs/urdf.md, issue 30), without MuJoCo:
/// - q0 / qd0 follow the order of the joints in the file: a tree whose joints are listed with
///   the branches interleaved and a chain listed in reverse give, with q0 / qd0 in their file
///   order, the same initial state and q̈ (matched by body name) as the same robots with the
///   joints listed depth-first and q0 / qd0 permuted accordingly; `check`'s table names the q0
///   index of every joint.
/// - links named "ground" and "world" are accepted (duplicate and malformed names are refused:
///   mpi-tests/bad/urdf_duplicate_*.urdf, urdf_name_*.urdf).
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include "mbs_test.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_urdf.h"

// ---------------------------------------------------------------- helpers

typedef struct {
  char *buf;
  size_t len, cap;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int n = vsnprintf(t->buf ? t->buf + t->len : NULL, t->buf ? t->cap - t->len : 0, fmt, ap);
    va_end(ap);
    if (t->buf && n >= 0 && t->len + (size_t)n < t->cap) {
      t->len += (size_t)n;
      return;
    }
    size_t cap = 2 * t->cap + (size_t)n + 256;
    char *b = realloc(t->buf, cap);
    if (!b) abort();
    t->buf = b, t->cap = cap;
  }
}

// one joint of a test robot: its URDF text (without the order) and its initial values
typedef struct {
  const char *name, *type, *parent, *child, *origin, *axis;
  double q0[7], qd0[6];
} tjoint;

static int jointNq(const tjoint *j) {
  return !strcmp(j->type, "floating") ? 7 : !strcmp(j->type, "fixed") ? 0 : 1;
}
static int jointNv(const tjoint *j) {
  return !strcmp(j->type, "floating") ? 6 : !strcmp(j->type, "fixed") ? 0 : 1;
}

// a URDF with links \p links (each with an inertial) and the joints in the order \p order, and a
// cfg with q0 / qd0 in that order
static void makeRobot(const char *const *links, int nlink, const tjoint *jt, const int *order,
                      int nj, text *urdf, text *cfg) {
  put(urdf, "<?xml version=\"1.0\"?>\n<robot name=\"order\">\n");
  for (int i = 0; i < nlink; i++)
    put(urdf,
        " <link name=\"%s\"><inertial><origin xyz=\"0.1 %g 0.05\" rpy=\"0.1 0.2 %g\"/>"
        "<mass value=\"%g\"/><inertia ixx=\"0.03\" iyy=\"0.04\" izz=\"%g\" ixy=\"0.001\" "
        "ixz=\"0\" iyz=\"0.002\"/></inertial></link>\n",
        links[i], 0.02 * i, 0.3 * i, 1 + 0.25 * i, 0.05 + 0.001 * i);
  put(cfg, "model = { urdf = { file = \"robot.urdf\"; q0 = [");
  const char *sep = "";
  for (int k = 0; k < nj; k++) {
    const tjoint *j = &jt[order[k]];
    put(urdf,
        " <joint name=\"%s\" type=\"%s\"><parent link=\"%s\"/><child link=\"%s\"/>"
        "<origin %s/><axis xyz=\"%s\"/></joint>\n",
        j->name, j->type, j->parent, j->child, j->origin, j->axis);
    for (int i = 0; i < jointNq(j); i++, sep = ", ") put(cfg, "%s%.17g", sep, j->q0[i]);
  }
  put(urdf, "</robot>\n");
  put(cfg, "]; qd0 = [");
  sep = "";
  for (int k = 0; k < nj; k++)
    for (int i = 0; i < jointNv(&jt[order[k]]); i++, sep = ", ")
      put(cfg, "%s%.17g", sep, jt[order[k]].qd0[i]);
  put(cfg, "]; }; };\nsolver = { method = \"aba\"; };\n");
}

typedef struct {
  mbsConfig *cfg;
  mbsModel *m;
  mbsState *s;
  mbsWork *w;
} loaded;

static int load(const text *urdf, const text *cfg, loaded *L) {
  memset(L, 0, sizeof *L);
  mbsErr e = mbs_configParse(cfg->buf, "robot.cfg", NULL, 0, &L->cfg);
  if (!e) e = mbs_configSetUrdf(L->cfg, urdf->buf, urdf->len);
  if (!e) e = mbs_configBuildModel(L->cfg, &L->m);
  if (!e) e = mbs_stateCreate(L->m, &L->s);
  if (!e) e = mbs_workCreate(L->m, &L->w);
  if (!e) e = mbs_forward(L->m, L->s, L->w);
  MBS_EXPECT(!e, "load: %s", mbs_errMsg());
  return e ? -1 : 0;
}

static void unload(loaded *L) {
  mbs_workDestroy(&L->w);
  mbs_stateDestroy(&L->s);
  mbs_modelDestroy(&L->m);
  mbs_configDestroy(&L->cfg);
}

// the same robot with its joints in two orders: the same q, qd, q̈ body by body
static void compareOrders(const char *label, const char *const *links, int nlink, const tjoint *jt,
                          const int *order, const int *dfs, int nj) {
  text ua = {0}, ca = {0}, ub = {0}, cb = {0};
  makeRobot(links, nlink, jt, order, nj, &ua, &ca);
  makeRobot(links, nlink, jt, dfs, nj, &ub, &cb);
  loaded A, B;
  if (load(&ua, &ca, &A) == 0 && load(&ub, &cb, &B) == 0) {
    MBS_EXPECT(A.m->nbody == B.m->nbody && A.m->nv == B.m->nv, "%s: sizes differ", label);
    double qerr = 0, verr = 0, aerr = 0, scale = 0;
    for (int b = 0; b < A.m->nbody && A.m->nv == B.m->nv; b++) {
      int c = mbs_modelFindBody(B.m, A.m->body_name[b]);
      MBS_EXPECT(c >= 0, "%s: body %s missing", label, A.m->body_name[b]);
      if (c < 0) continue;
      // the values the test gave this joint (by the child link's name)
      const tjoint *j = NULL;
      for (int k = 0; k < nj; k++)
        if (!strcmp(jt[k].child, A.m->body_name[b])) j = &jt[k];
      int qa = A.m->body_qadr[b], qb = B.m->body_qadr[c], va = A.m->body_dofadr[b];
      int vb = B.m->body_dofadr[c];
      for (int k = 0; j && k < A.m->body_qnum[b]; k++) {
        qerr = fmax(qerr, fabs(A.s->q[qa + k] - j->q0[k]));
        qerr = fmax(qerr, fabs(B.s->q[qb + k] - j->q0[k]));
      }
      for (int k = 0; j && k < A.m->body_dofnum[b]; k++) {
        verr = fmax(verr, fabs(A.s->qd[va + k] - j->qd0[k]));
        verr = fmax(verr, fabs(B.s->qd[vb + k] - j->qd0[k]));
        aerr = fmax(aerr, fabs(A.w->qdd[va + k] - B.w->qdd[vb + k]));
        scale = fmax(scale, fabs(B.w->qdd[vb + k]));
      }
    }
    printf("  %-34s %d bodies %2d dofs: |q - q0| %.1e  |qd - qd0| %.1e  q̈ %.1e (of %.2g)\n", label,
           A.m->nbody, A.m->nv, qerr, verr, aerr, scale);
    MBS_EXPECT(qerr == 0, "%s: q0 not applied in file order (off by %.3g)", label, qerr);
    MBS_EXPECT(verr == 0, "%s: qd0 not applied in file order (off by %.3g)", label, verr);
    MBS_EXPECT(aerr <= 1e-12 * fmax(1, scale), "%s: q̈ differs by %.3g", label, aerr);
    MBS_EXPECT(scale > 0.1, "%s: q̈ is too small to tell the orders apart", label);
    unload(&B);
  }
  unload(&A);
  free(ua.buf), free(ca.buf), free(ub.buf), free(cb.buf);
}

// `check`'s joint table: the q0 index of every joint in file order
static void checkTable(void) {
  static const char robot[] =
      "<robot name=\"r\">\n"
      "<link name=\"base\"/>\n"
      "<link name=\"a\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" iyy=\"1\" izz=\"1\" "
      "ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
      "<link name=\"b\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" iyy=\"1\" izz=\"1\" "
      "ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
      "<link name=\"c\"/>\n"
      "<joint name=\"jb\" type=\"revolute\"><parent link=\"a\"/><child link=\"b\"/></joint>\n"
      "<joint name=\"jc\" type=\"fixed\"><parent link=\"b\"/><child link=\"c\"/></joint>\n"
      "<joint name=\"ja\" type=\"floating\"><parent link=\"base\"/><child link=\"a\"/></joint>\n"
      "</robot>\n";
  mbsUrdf *u = NULL;
  MBS_EXPECT_OK(mbs_urdfParse(robot, sizeof robot - 1, "t.urdf", &u));
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (u && f) mbs_urdfPrint(u, f);
  if (f) fclose(f);
  const char *jb = buf ? strstr(buf, "\n  jb ") : NULL, *ja = buf ? strstr(buf, "\n  ja ") : NULL;
  const char *jc = buf ? strstr(buf, "\n  jc ") : NULL;
  MBS_EXPECT(buf && strstr(buf, "q0"), "check's table has no q0 column:\n%s", buf ? buf : "");
  MBS_EXPECT(jb && strstr(jb, " 0 ") && strstr(jb, " 0 ") < strchr(jb + 1, '\n'),
             "jb (first in the file) is not q0[0]:\n%s", buf ? buf : "");
  MBS_EXPECT(ja && strstr(ja, " 1-7 ") && strstr(ja, " 1-7 ") < strchr(ja + 1, '\n'),
             "ja (a floating joint after jb) is not q0[1-7]:\n%s", buf ? buf : "");
  MBS_EXPECT(jc && strstr(jc, " - ") && strstr(jc, " - ") < strchr(jc + 1, '\n'),
             "jc (fixed) has a q0 index:\n%s", buf ? buf : "");
  free(buf);
  mbs_urdfDestroy(&u);
}

// links named "ground" and "world" (mbspar's names for its ground) are ordinary URDF links: a
// moving link of either name is a body; a massless root of either name is the ground
static void groundNames(void) {
#define INERTIAL                                                                                   \
  "<inertial><mass value=\"1\"/><inertia ixx=\"0.1\" iyy=\"0.1\" izz=\"0.1\" ixy=\"0\" "           \
  "ixz=\"0\" iyz=\"0\"/></inertial>"
  static const char bodies[] =
      "<robot name=\"g\">\n<link name=\"base\">" INERTIAL "</link>\n"
      "<link name=\"ground\">" INERTIAL "</link>\n<link name=\"world\">" INERTIAL "</link>\n"
      "<joint name=\"j\" type=\"revolute\"><parent link=\"base\"/><child link=\"ground\"/>"
      "<axis xyz=\"0 1 0\"/><origin xyz=\"0.3 0 1\"/></joint>\n"
      "<joint name=\"k\" type=\"prismatic\"><parent link=\"ground\"/><child link=\"world\"/>"
      "<axis xyz=\"0 0.6 0.8\"/><origin xyz=\"0.3 0 1\"/></joint>\n</robot>\n";
  static const char root[] = "<robot name=\"g\">\n<link name=\"ground\"/>\n"
                             "<link name=\"arm\">" INERTIAL "</link>\n"
                             "<joint name=\"j\" type=\"revolute\"><parent link=\"ground\"/>"
                             "<child link=\"arm\"/><axis xyz=\"0 1 0\"/></joint>\n</robot>\n";
#undef INERTIAL
  static const char cfg[] = "model = { urdf = { file = \"robot.urdf\"; q0 = [0.4, 0.1]; }; "
                            "};\nsolver = { method = \"aba\"; };\n";
  text tb = {(char *)bodies, sizeof bodies - 1, 0}, tr = {(char *)root, sizeof root - 1, 0};
  text tc = {(char *)cfg, sizeof cfg - 1, 0};
  loaded L;
  if (load(&tb, &tc, &L) == 0) {
    int g = mbs_modelFindBody(L.m, "ground"), w = mbs_modelFindBody(L.m, "world");
    MBS_EXPECT(L.m->nbody == 3 && g >= 0 && w >= 0, "links ground and world are not bodies");
    MBS_EXPECT(g >= 0 && L.m->body_parent[g] == mbs_modelFindBody(L.m, "base") &&
                   fabs(L.s->q[L.m->body_qadr[g]] - 0.4) == 0 && fabs(L.w->qdd[0]) > 0.1,
               "the link named ground does not move as the joint says");
  }
  unload(&L);
  static const char cfg1[] =
      "model = { urdf = \"robot.urdf\"; };\nsolver = { method = \"aba\"; };\n";
  text tc1 = {(char *)cfg1, sizeof cfg1 - 1, 0};
  if (load(&tr, &tc1, &L) == 0)
    MBS_EXPECT(L.m->nbody == 1 && L.m->body_parent[0] == -1 && mbs_modelFindBody(L.m, "arm") == 0,
               "a massless root named ground is not the ground");
  unload(&L);
  printf("  links named ground and world: accepted\n");
}

int main(void) {
  // a tree: base with three branches (a1-a2, b1-b2, a floating f), listed interleaved
  static const char *const tlinks[] = {"base", "a1", "a2", "b1", "b2", "f", "s"};
  static const tjoint tree[] = {
      {"ja1",
       "revolute",
       "base",
       "a1",
       "xyz=\"0.1 0 0.2\" rpy=\"0.3 0 0.1\"",
       "0 0 1",
       {0.7},
       {1.1}},
      {"ja2", "prismatic", "a1", "a2", "xyz=\"0 0.3 0\" rpy=\"0 0.4 0\"", "1 0 0", {0.15}, {-0.4}},
      {"jb1", "continuous", "base", "b1", "xyz=\"-0.2 0 0.1\"", "0 1 0", {-1.2}, {0.3}},
      {"jb2", "revolute", "b1", "b2", "xyz=\"0 0 -0.4\" rpy=\"0.2 0.1 0\"", "1 0 0", {0.45}, {2.0}},
      {"jf",
       "floating",
       "base",
       "f",
       "xyz=\"0 0.5 0\" rpy=\"0 0 0.3\"",
       "1 0 0",
       {0.1, -0.2, 0.3, 0.8, 0.2, -0.4, 0.4},
       {0.5, -0.1, 0.2, 0.3, -0.7, 0.9}},
      {"js", "revolute", "f", "s", "xyz=\"0.2 0 0\"", "0 0 1", {-0.3}, {0.6}},
  };
  static const int tfile[] = {3, 1, 4, 2, 5, 0}; // jb2 ja2 jf jb1 js ja1: no parent before child
  static const int tdfs[] = {2, 3, 4, 5, 0, 1};  // the depth-first order of tfile's bodies
  // a chain listed from the tip to the root
  static const char *const clinks[] = {"c0", "c1", "c2", "c3", "c4"};
  static const tjoint chain[] = {
      {"j1", "revolute", "c0", "c1", "xyz=\"0 0 0.3\"", "0 1 0", {0.9}, {0.1}},
      {"j2", "revolute", "c1", "c2", "xyz=\"0 0 0.3\" rpy=\"0.5 0 0\"", "0 1 0", {-0.6}, {0.2}},
      {"j3", "prismatic", "c2", "c3", "xyz=\"0 0 0.3\"", "0 0 1", {0.2}, {-0.3}},
      {"j4", "continuous", "c3", "c4", "xyz=\"0.1 0 0.3\"", "1 0 0", {1.7}, {0.4}},
  };
  static const int crev[] = {3, 2, 1, 0}, cfwd[] = {0, 1, 2, 3};
  compareOrders("tree, branches interleaved", tlinks, 7, tree, tfile, tdfs, 6);
  compareOrders("chain listed in reverse", clinks, 5, chain, crev, cfwd, 4);
  checkTable();
  groundNames();
  return mbs_test_finish("test_urdf");
}
