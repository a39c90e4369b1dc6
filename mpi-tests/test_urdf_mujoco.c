/// \file test_urdf_mujoco.c
/// URDF input against MuJoCo (issue 11.4): the same URDF file loaded by mbspar (model.urdf
/// through the config, mbs_configSetUrdf, ABA) and by MuJoCo 2.2 (mj_loadXML, mj_forward with
/// contacts off) gives the same joint accelerations q̈ to 1e-9 (relative to max(1, |q̈|)) at
/// random states: on random URDF trees generated here with every supported joint type (revolute
/// with limits, continuous, prismatic, fixed with and without mass, floating base), random
/// origins with rpy, axes, inertials with rpy and full tensors, damping; and on the real robot
/// descriptions of Debian's dart-doc (KUKA KR5, Atlas v3, DRC-Hubo, Barrett WAM) when that
/// package is installed. Joints are matched by name; a floating base is mapped between mbspar's
/// body frame and MuJoCo's link frame (docs/urdf.md). Also checks that the poses mbspar
/// reports are the URDF link frames: world position and orientation of every MuJoCo body equal
/// mbspar's (framequat) pose of the body of the same name.
///
/// MuJoCo 2.2's compiler turns a full inertia tensor into principal moments with an iterative
/// eigensolver that stops at about 1e-8 relative (measured here as MuJoCo's own inertia error,
/// from body_inertia and body_iquat), which alone moves q̈ by ~1e-7. So every robot is loaded
/// twice into MuJoCo: as the file is (MuJoCo diagonalises; checked to 1e-5 and reported with
/// MuJoCo's inertia error), and with each inertial written in its principal axes (the test
/// diagonalises to 1e-15 with Jacobi rotations: the same URDF up to roundoff), which is checked
/// to 1e-9 and agrees to ~1e-14.
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <mujoco/mujoco.h>
#include <unistd.h>
#include "mbs_test.h"
#include "mbs_test_mujoco.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_poses.h"
#include "spatial.h"

static double worst_qdd = 0, worst_pose = 0, worst_raw = 0, worst_ierr = 0;
static int on_merged = 0; // random joints whose parent link is massless (merged)

// ---------------------------------------------------------------- random URDF trees

typedef struct {
  unsigned long long st;
  char *buf;
  size_t len, cap;
} gen;

static void out(gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out(gen *g, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int n = vsnprintf(g->buf + g->len, g->cap - g->len, fmt, ap);
    va_end(ap);
    if (n >= 0 && g->len + (size_t)n < g->cap) {
      g->len += (size_t)n;
      return;
    }
    g->cap = 2 * g->cap + (size_t)n + 64;
    g->buf = realloc(g->buf, g->cap);
  }
}

static double U(gen *g, double lo, double hi) {
  return mbs_test_uniform(&g->st, lo, hi);
}

// an inertial: principal moments that satisfy the triangle inequality, turned by a random
// rotation into a full tensor, plus a random inertial rpy
static void inertial(gen *g) {
  double a = U(g, 0.01, 0.1), b = U(g, 0.01, 0.1);
  double c = U(g, fabs(a - b) + 0.002, a + b - 0.002), d[3] = {a, b, c}, R[9], ax[3];
  for (int k = 0; k < 3; k++) ax[k] = U(g, -1, 1);
  double n = sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]);
  for (int k = 0; k < 3; k++) ax[k] /= n;
  mbsu_rotAxis(ax, U(g, -3, 3), R);
  double I[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      I[3 * i + j] = R[3 * i] * d[0] * R[3 * j] + R[3 * i + 1] * d[1] * R[3 * j + 1] +
                     R[3 * i + 2] * d[2] * R[3 * j + 2];
  out(g,
      "  <inertial><origin xyz=\"%.17g %.17g %.17g\" rpy=\"%.17g %.17g %.17g\"/>"
      "<mass value=\"%.17g\"/>\n    <inertia ixx=\"%.17g\" ixy=\"%.17g\" ixz=\"%.17g\" "
      "iyy=\"%.17g\" iyz=\"%.17g\" izz=\"%.17g\"/></inertial>\n",
      U(g, -0.2, 0.2), U(g, -0.2, 0.2), U(g, -0.2, 0.2), U(g, -3, 3), U(g, -1.5, 1.5), U(g, -3, 3),
      U(g, 0.3, 2), I[0], I[1], I[2], I[4], I[5], I[8]);
}

// a random tree of n links (link0 is the base); the base is welded to the ground (a massive
// root), fixed to "world", or floating from "world"; the other joints cycle through the types
static char *randomUrdf(unsigned long long seed, int n, int base) {
  gen g = {seed, malloc(4096), 0, 4096};
  static const char *const types[] = {"revolute", "continuous", "prismatic", "fixed",
                                      "revolute", "continuous", "prismatic"};
  out(&g, "<?xml version=\"1.0\"?>\n<robot name=\"random%llu\">\n", seed);
  if (base > 0) out(&g, " <link name=\"world\"/>\n");
  for (int i = 0; i < n; i++) {
    // the links of even index on fixed joints have no mass (merged into their parent by mbspar)
    int fixed = i > 0 && !strcmp(types[(i + seed) % 7], "fixed");
    out(&g, " <link name=\"link%d\">\n", i);
    if (!(fixed && i % 2 == 0)) inertial(&g);
    out(&g, "  <visual><geometry><box size=\"0.1 0.1 0.1\"/></geometry></visual>\n </link>\n");
  }
  if (base > 0)
    out(&g,
        " <joint name=\"base\" type=\"%s\"><parent link=\"world\"/><child link=\"link0\"/>"
        "<origin xyz=\"%.17g %.17g %.17g\" rpy=\"%.17g %.17g %.17g\"/></joint>\n",
        base == 2 ? "floating" : "fixed", U(&g, -1, 1), U(&g, -1, 1), U(&g, -1, 1), U(&g, -3, 3),
        U(&g, -1.5, 1.5), U(&g, -3, 3));
  for (int i = 1; i < n; i++) {
    const char *t = types[(i + seed) % 7];
    // any earlier link, also a massless one on a fixed joint (merged into its parent: its
    // children hang from the merged frame)
    int p = (int)U(&g, 0, i - 0.001);
    on_merged += p > 0 && p % 2 == 0 && !strcmp(types[(p + seed) % 7], "fixed");
    out(&g, " <joint name=\"j%d\" type=\"%s\"><parent link=\"link%d\"/><child link=\"link%d\"/>", i,
        t, p, i);
    out(&g, "<origin xyz=\"%.17g %.17g %.17g\" rpy=\"%.17g %.17g %.17g\"/>", U(&g, -0.5, 0.5),
        U(&g, -0.5, 0.5), U(&g, -0.5, 0.5), U(&g, -3, 3), U(&g, -1.5, 1.5), U(&g, -3, 3));
    out(&g, "<axis xyz=\"%.17g %.17g %.17g\"/>", U(&g, -1, 1), U(&g, -1, 1), U(&g, -1, 1));
    if (!strcmp(t, "revolute") || !strcmp(t, "prismatic"))
      out(&g, "<limit lower=\"%g\" upper=\"%g\" effort=\"50\" velocity=\"3\"/>", -2.0, 2.0);
    if (strcmp(t, "fixed")) out(&g, "<dynamics damping=\"%.17g\"/>", U(&g, 0, 0.5));
    out(&g, "</joint>\n");
  }
  out(&g, "</robot>\n");
  return g.buf;
}

// ---------------------------------------------------------------- MuJoCo side

// the URDF for MuJoCo: geometry, transmissions and gazebo tags dropped (meshes are not there),
// a <mujoco><compiler/> that keeps bodies and inertias as they are; \p principal_axes: every
// inertial in its principal axes
static int writeForMujoco(const char *text, size_t len, const char *path, int principal_axes) {
  xmlDoc *doc =
      xmlReadMemory(text, (int)len, "robot.urdf", NULL, XML_PARSE_NONET | XML_PARSE_NOBLANKS);
  if (!doc) return -1;
  xmlNode *robot = xmlDocGetRootElement(doc);
  for (xmlNode *n = robot->children, *next; n; n = next) {
    next = n->next;
    if (n->type == XML_ELEMENT_NODE && (!strcmp((const char *)n->name, "transmission") ||
                                        !strcmp((const char *)n->name, "gazebo"))) {
      xmlUnlinkNode(n);
      xmlFreeNode(n);
      continue;
    }
    if (n->type != XML_ELEMENT_NODE || strcmp((const char *)n->name, "link")) continue;
    xmlNode *in = mbs_tmjChild(n, "inertial");
    if (in && principal_axes) mbs_tmjPrincipal(in);
    for (xmlNode *c = n->children, *cn; c; c = cn) {
      cn = c->next;
      if (c->type == XML_ELEMENT_NODE && (!strcmp((const char *)c->name, "visual") ||
                                          !strcmp((const char *)c->name, "collision"))) {
        xmlUnlinkNode(c);
        xmlFreeNode(c);
      }
    }
  }
  xmlNode *mj = xmlNewChild(robot, NULL, (const xmlChar *)"mujoco", NULL);
  xmlNode *cp = xmlNewChild(mj, NULL, (const xmlChar *)"compiler", NULL);
  xmlNewProp(cp, (const xmlChar *)"fusestatic", (const xmlChar *)"false");
  xmlNewProp(cp, (const xmlChar *)"inertiafromgeom", (const xmlChar *)"false");
  xmlNewProp(cp, (const xmlChar *)"balanceinertia", (const xmlChar *)"false");
  int rc = xmlSaveFile(path, doc) < 0 ? -1 : 0;
  xmlFreeDoc(doc);
  return rc;
}

// quaternion product r = a (x) b
static void qmul(const double *a, const double *b, double *r) {
  r[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  r[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  r[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  r[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
}

// mbspar merges every URDF link on a fixed joint into its parent's body (docs/urdf.md
// "Merging"); MuJoCo (fusestatic off) keeps them as bodies welded to their parents. The MuJoCo
// body a link belongs to in mbspar: its nearest ancestor (itself included) that is an mbspar
// body (0: the world)
static int mbspBodyOf(const mbsModel *m, const mjModel *mm, int k) {
  while (k > 0 && mbs_modelFindBody(m, mj_id2name(mm, mjOBJ_BODY, k)) < 0) k = mm->body_parentid[k];
  return k;
}

// the combined centre of mass (world) of the MuJoCo bodies that make up mbspar body \p mb, and
// how many of them have mass
static int groupCom(const mbsModel *m, const mjModel *mm, const mjData *d, int mb, double *c) {
  double M = 0;
  int n = 0;
  c[0] = c[1] = c[2] = 0;
  for (int k = 1; k < mm->nbody; k++) {
    if (mm->body_mass[k] <= 0 || mbspBodyOf(m, mm, k) != mb) continue;
    M += mm->body_mass[k], n++;
    for (int i = 0; i < 3; i++) c[i] += mm->body_mass[k] * d->xipos[3 * k + i];
  }
  for (int i = 0; i < 3 && M > 0; i++) c[i] /= M;
  return n;
}

// MuJoCo's own inertia error: its principal moments and axes (body_inertia, body_iquat)
// against the tensor mbspar holds (body_inertia about the COM in the body frame, turned into the
// link frame by framequat), relative to the largest moment
static double mujocoInertiaError(const mbsModel *m, const mjModel *mm) {
  double worst = 0;
  for (int b = 0; b < m->nbody; b++) {
    int mb = mj_name2id(mm, mjOBJ_BODY, m->body_name[b]);
    int merged = 0; // links with mass merged into this body: MuJoCo has them apart
    for (int k = 1; mb >= 0 && k < mm->nbody; k++)
      merged += k != mb && mm->body_mass[k] > 0 && mbspBodyOf(m, mm, k) == mb;
    if (mb < 0 || merged) continue;
    double F[9], Ib[9], IL[9], T[9], Q[9];
    const double *I6 = m->body_inertia + 6 * b;
    Ib[0] = I6[0], Ib[4] = I6[1], Ib[8] = I6[2], Ib[1] = Ib[3] = I6[3], Ib[2] = Ib[6] = I6[4];
    Ib[5] = Ib[7] = I6[5];
    mbsu_quat2Mat(m->body_framequat + 4 * b, F);
    mbsu_mulMat3T(F, Ib, T); // IL = F^T Ib F
    mbsu_mulMat3(T, F, IL);
    mbsu_quat2Mat(mm->body_iquat + 4 * mb, Q);
    double scale = fmax(fmax(fabs(IL[0]), fabs(IL[4])), fabs(IL[8]));
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        double v = 0;
        for (int k = 0; k < 3; k++) v += Q[3 * i + k] * mm->body_inertia[3 * mb + k] * Q[3 * j + k];
        worst = fmax(worst, fabs(v - IL[3 * i + j]) / scale);
      }
  }
  return worst;
}

// one robot: load in both, random states, compare qdd and poses
static void compare(const char *label, const char *text, size_t len, unsigned long long seed,
                    int principal_axes) {
  // mbspar through the config: model.urdf, the bytes handed over as main.c does
  char cfgtext[] = "model = { urdf = \"robot.urdf\"; };\nsolver = { method = \"aba\"; };\n";
  mbsConfig *cfg = NULL;
  mbsModel *m = NULL;
  MBS_EXPECT_OK(mbs_configParse(cfgtext, "robot.cfg", NULL, 0, &cfg));
  if (!cfg) return;
  mbsErr e = mbs_configSetUrdf(cfg, text, len);
  if (!e) e = mbs_configBuildModel(cfg, &m);
  MBS_EXPECT(!e, "%s: mbspar did not load it: %s", label, mbs_errMsg());
  char path[] = "/tmp/mbspar_urdf_XXXXXX";
  int fd = mkstemp(path);
  if (fd >= 0) close(fd);
  char lerr[1000] = "";
  mjModel *mm = NULL;
  if (fd >= 0 && writeForMujoco(text, len, path, principal_axes) == 0)
    mm = mj_loadXML(path, NULL, lerr, sizeof lerr);
  if (fd >= 0) unlink(path);
  MBS_EXPECT(mm, "%s: MuJoCo did not load it: %s", label, lerr);
  if (e || !mm) {
    if (mm) mj_deleteModel(mm);
    mbs_modelDestroy(&m);
    mbs_configDestroy(&cfg);
    return;
  }
  mm->opt.disableflags |= mjDSBL_CONTACT;
  mm->opt.gravity[0] = m->gravity[0], mm->opt.gravity[1] = m->gravity[1];
  mm->opt.gravity[2] = m->gravity[2];
  MBS_EXPECT(mm->nv == m->nv, "%s: nv %d (MuJoCo) vs %d (mbspar)", label, mm->nv, m->nv);
  mjData *d = mj_makeData(mm);
  mbsState *s = NULL;
  mbsWork *w = NULL;
  MBS_EXPECT_OK(mbs_stateCreate(m, &s));
  MBS_EXPECT_OK(mbs_workCreate(m, &w));
  // MuJoCo joint of every mbspar body (by the URDF joint name: the body's joint is the one whose
  // child link names the body); URDF joints come from the file's parse
  unsigned long long st = seed * 7919 + 17;
  double qerr = 0, perr = 0;
  for (int trial = 0; trial < 3 && s && w && mm->nv == m->nv; trial++) {
    mj_resetData(mm, d);
    for (int b = 0; b < m->nbody; b++) {
      int t = m->body_jnttype[b], qa = m->body_qadr[b], va = m->body_dofadr[b];
      int mb = mj_name2id(mm, mjOBJ_BODY, m->body_name[b]);
      int jid = mb >= 0 && mm->body_jntnum[mb] > 0 ? mm->body_jntadr[mb] : -1;
      if (t == MBS_JNT_FIXED) continue;
      MBS_EXPECT(jid >= 0, "%s: MuJoCo has no joint for body %s", label, m->body_name[b]);
      if (jid < 0) continue;
      int mq = mm->jnt_qposadr[jid], mv = mm->jnt_dofadr[jid];
      if (t == MBS_JNT_FREE) {
        // mbspar: x from origin in the parent (ground) frame, quaternion and angular velocity of
        // the body frame; MuJoCo: the link frame, whose rotation in the body frame is framequat
        double q4[4], n = 0, *fq = m->body_framequat + 4 * b;
        for (int k = 0; k < 4; k++) q4[k] = mbs_test_uniform(&st, -1, 1), n += q4[k] * q4[k];
        for (int k = 0; k < 4; k++) s->q[qa + 3 + k] = q4[k] / sqrt(n);
        for (int k = 0; k < 3; k++) {
          s->q[qa + k] = mbs_test_uniform(&st, -0.5, 0.5);
          d->qpos[mq + k] = m->jnt_origin[3 * b + k] + s->q[qa + k];
        }
        qmul(s->q + qa + 3, fq, d->qpos + mq + 3);
        double F[9], wl[3];
        mbsu_quat2Mat(fq, F);
        for (int k = 0; k < 6; k++) s->qd[va + k] = mbs_test_uniform(&st, -1, 1);
        mbsu_mulMat3TVec(F, s->qd + va + 3, wl); // omega_link = F^T omega_body
        for (int k = 0; k < 3; k++) d->qvel[mv + k] = s->qd[va + k], d->qvel[mv + 3 + k] = wl[k];
      } else {
        double lo = -3, hi = 3;
        if (mm->jnt_limited[jid]) lo = mm->jnt_range[2 * jid], hi = mm->jnt_range[2 * jid + 1];
        double x = lo + (hi - lo) * mbs_test_uniform(&st, 0.1, 0.9);
        s->q[qa] = d->qpos[mq] = x;
        s->qd[va] = d->qvel[mv] = mbs_test_uniform(&st, -2, 2);
      }
    }
    mj_forward(mm, d);
    MBS_EXPECT_OK(mbs_forward(m, s, w));
    // q̈ (a floating base's angular part turned into the body frame)
    for (int b = 0; b < m->nbody; b++) {
      int t = m->body_jnttype[b], va = m->body_dofadr[b];
      int mb = mj_name2id(mm, mjOBJ_BODY, m->body_name[b]);
      if (t == MBS_JNT_FIXED || mb < 0 || mm->body_jntnum[mb] == 0) continue;
      int mv = mm->jnt_dofadr[mm->body_jntadr[mb]];
      double ref[6];
      int nv = m->body_dofnum[b];
      for (int k = 0; k < nv; k++) ref[k] = d->qacc[mv + k];
      if (t == MBS_JNT_FREE) {
        double F[9];
        mbsu_quat2Mat(m->body_framequat + 4 * b, F);
        mbsu_mulMat3Vec(F, d->qacc + mv + 3, ref + 3);
      }
      for (int k = 0; k < nv; k++)
        qerr = fmax(qerr, fabs(w->qdd[va + k] - ref[k]) / fmax(1, fabs(ref[k])));
    }
    // poses: mbspar's reported frame of each body = MuJoCo's body (the URDF link frame)
    for (int b = 0; b < m->nbody; b++) {
      int mb = mj_name2id(mm, mjOBJ_BODY, m->body_name[b]);
      if (mb < 0) continue;
      double pose[MBS_POSE_NCOMP], R[9];
      mbs_bodyPoseWorld(m, w, b, pose);
      mbsu_quat2Mat(pose + 3, R);
      for (int k = 0; k < 3; k++) perr = fmax(perr, fabs(pose[k] - d->xpos[3 * mb + k]));
      for (int k = 0; k < 9; k++) perr = fmax(perr, fabs(R[k] - d->xmat[9 * mb + k]));
      double gc[3]; // the centre of mass of the body with its merged links
      groupCom(m, mm, d, mb, gc);
      for (int k = 0; k < 3; k++) perr = fmax(perr, fabs(pose[7 + k] - gc[k]));
    }
  }
  double ierr = mujocoInertiaError(m, mm);
  printf("  %-38s %-9s %3d bodies %3d dofs: q̈ %.2e  poses %.2e  (MuJoCo inertia error %.1e)\n",
         label, principal_axes ? "principal" : "as is", m->nbody, m->nv, qerr, perr, ierr);
  double tol = principal_axes ? 1e-9 : 1e-5;
  MBS_EXPECT(qerr <= tol, "%s: qdd differs from MuJoCo by %.3e > %g", label, qerr, tol);
  MBS_EXPECT(perr <= 1e-9, "%s: poses differ from MuJoCo by %.3e", label, perr);
  if (principal_axes)
    worst_qdd = fmax(worst_qdd, qerr);
  else
    worst_raw = fmax(worst_raw, qerr), worst_ierr = fmax(worst_ierr, ierr);
  worst_pose = fmax(worst_pose, perr);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  mj_deleteData(d);
  mj_deleteModel(mm);
  mbs_modelDestroy(&m);
  mbs_configDestroy(&cfg);
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *t = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (t && fread(t, 1, (size_t)n, f) != (size_t)n) free(t), t = NULL;
  if (t) t[n] = 0, *len = (size_t)n;
  fclose(f);
  return t;
}

int main(int argc, char **argv) {
  printf("test_urdf_mujoco: MuJoCo %s\n", mj_versionString());
  // random trees: bases welded, fixed to world, floating; every joint type
  int ntree = 0;
  for (unsigned long long seed = 1; seed <= 8; seed++) {
    int n = 6 + (int)(seed * 3 % 13), base = (int)(seed % 3);
    char *t = randomUrdf(seed, n, base), label[64];
    snprintf(label, sizeof label, "random tree %llu (%s base)", seed,
             base == 2   ? "floating"
             : base == 1 ? "fixed-to-world"
                         : "welded");
    compare(label, t, strlen(t), seed, 1);
    compare(label, t, strlen(t), seed, 0);
    free(t);
    ntree++;
  }
  // the real robots of Debian's dart-doc, when installed (argv: the data directory)
  const char *dir = argc > 1 ? argv[1] : "/usr/share/doc/dart/data";
  static const char *const robots[] = {"urdf/KR5/KR5 sixx R650.urdf",
                                       "sdf/atlas/atlas_v3_no_head.urdf",
                                       "urdf/drchubo/drchubo.urdf", "urdf/wam/wam.urdf"};
  printf("  (%d random joints hang from a massless link on a fixed joint)\n", on_merged);
  MBS_EXPECT(on_merged > 0, "the random trees never hang a joint from a merged link");
  int nreal = 0;
  for (int k = 0; k < 4; k++) {
    char p[1024];
    size_t len = 0;
    snprintf(p, sizeof p, "%s/%s", dir, robots[k]);
    char *t = slurp(p, &len);
    if (!t) continue;
    compare(robots[k], t, len, 100 + (unsigned long long)k, 1);
    compare(robots[k], t, len, 100 + (unsigned long long)k, 0);
    free(t);
    nreal++;
  }
  if (!nreal) printf("  (no real robot descriptions: Debian dart-doc is not installed)\n");
  printf("test_urdf_mujoco: %d random trees, %d real robots: worst q̈ difference %.2e (inertials in "
         "principal axes; %.2e as written, where MuJoCo's own inertia error is up to %.1e), worst "
         "pose difference %.2e\n",
         ntree, nreal, worst_qdd, worst_raw, worst_ierr, worst_pose);
  return mbs_test_finish("test_urdf_mujoco");
}
