/// \file test_robots_mujoco.c
/// The real-robot corpus (mpi-tests/robots/, README.md there) against MuJoCo: `mbspar accel`
/// ran on ROBOT.cfg (model.urdf with q0 and qd0 in the FILE order of the joints) at some rank
/// count and wrote its JSON report; this program loads the same URDF file into MuJoCo, sets
/// qpos/qvel joint by joint from the cfg's q0/qd0 taken in the order of the <joint> elements in
/// the file (its own libxml2 reading, not mbspar's), and compares MuJoCo's qacc with the
/// report's qdd, joints matched by name (the body of a joint's child link holds its dof). The
/// cfg's joint forces (model.urdf.joints, and model.urdf.torques at t = 0) become MuJoCo's
/// qfrc_applied, jnt_stiffness with qpos_spring, and dof_damping.
///
/// usage: test_robots_mujoco ROBOT.cfg ACCEL.json [TOL]    (TOL default 1e-10, relative to
/// max(1, |q̈|))
///
/// MuJoCo 2.2 diagonalises a full inertia tensor with an eigensolver that stops near 1e-8
/// relative (test_urdf_mujoco measures it), so MuJoCo gets the file with each inertial rewritten
/// in its principal axes (to roundoff: the same robot); the rest of the file is loaded as it
/// is, including the <mujoco><compiler/> element the corpus files carry. Contacts, joint limits
/// and friction loss are off in MuJoCo: mbspar does not model them (docs/urdf.md).
#define _POSIX_C_SOURCE 200809L
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <mujoco/mujoco.h>
#include <unistd.h>
#include "mbs_test.h"
#include "mbs_test_mujoco.h"
#include "mbspar/mbs_config.h"

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *t = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (t && fread(t, 1, (size_t)n, f) != (size_t)n) free(t), t = NULL;
  if (t) t[n] = 0;
  if (t && len) *len = (size_t)n;
  fclose(f);
  return t;
}

// the numbers of "key": [ ... ] in a JSON text (count in *n)
static double *jsonArray(const char *text, const char *key, int *n) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\": [", key);
  const char *p = strstr(text, pat);
  *n = 0;
  if (!p) return NULL;
  p += strlen(pat);
  int cap = 64;
  double *v = malloc(sizeof(double) * (size_t)cap);
  while (v) {
    while (*p == ' ' || *p == '\n' || *p == ',') p++;
    if (*p == ']') break;
    char *end;
    double x = strtod(p, &end);
    if (end == p) break;
    if (*n == cap) v = realloc(v, sizeof(double) * (size_t)(cap *= 2));
    if (v) v[(*n)++] = x;
    p = end;
  }
  return v;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: test_robots_mujoco ROBOT.cfg ACCEL.json [TOL]\n");
    return 2;
  }
  double tol = argc > 3 ? atof(argv[3]) : 1e-10;
  // mbspar's model of the cfg: the dof of each body (the report's qdd are in dof order)
  char *ctext = slurp(argv[1], NULL), *json = slurp(argv[2], NULL);
  MBS_EXPECT(ctext && json, "cannot read %s or %s", argv[1], argv[2]);
  if (!ctext || !json) return mbs_test_finish("test_robots_mujoco");
  mbsConfig *cfg = NULL;
  mbsModel *m = NULL;
  MBS_EXPECT_OK(mbs_configParse(ctext, argv[1], NULL, 0, &cfg));
  size_t ulen = 0;
  char *utext = cfg && cfg->urdf_path ? slurp(cfg->urdf_path, &ulen) : NULL;
  MBS_EXPECT(utext, "%s: no readable model.urdf", argv[1]);
  if (utext) MBS_EXPECT_OK(mbs_configSetUrdf(cfg, utext, ulen));
  if (utext && !mbs_test_fail && cfg->urdf_torques) { // model.urdf.torques
    size_t tlen = 0;
    char *ttext = slurp(cfg->urdf_torques, &tlen);
    MBS_EXPECT(ttext, "cannot read %s", cfg->urdf_torques);
    if (ttext) MBS_EXPECT_OK(mbs_configSetTorques(cfg, ttext, tlen));
    free(ttext);
  }
  if (utext && !mbs_test_fail) MBS_EXPECT_OK(mbs_configBuildModel(cfg, &m));
  int nqdd = 0;
  double *qdd = jsonArray(json, "qdd", &nqdd);
  if (m) MBS_EXPECT(nqdd == m->nv, "%s: %d qdd, the model has %d dofs", argv[2], nqdd, m->nv);
  // MuJoCo: the same file, inertials in principal axes
  char path[] = "/tmp/mbspar_robot_XXXXXX";
  int fd = mkstemp(path);
  if (fd >= 0) close(fd);
  char lerr[1000] = "";
  mjModel *mm = NULL;
  if (m && fd >= 0 && mbs_testMujocoFile(utext, ulen, path) == 0)
    mm = mj_loadXML(path, NULL, lerr, sizeof lerr);
  if (fd >= 0) unlink(path);
  MBS_EXPECT(mm, "MuJoCo did not load %s: %s", cfg ? cfg->urdf_path : "?", lerr);
  if (!m || !mm || nqdd != m->nv) {
    if (mm) mj_deleteModel(mm);
    return mbs_test_finish("test_robots_mujoco");
  }
  mm->opt.disableflags |= mjDSBL_CONTACT | mjDSBL_LIMIT | mjDSBL_FRICTIONLOSS;
  for (int k = 0; k < 3; k++) mm->opt.gravity[k] = m->gravity[k];
  MBS_EXPECT(mm->nv == m->nv, "nv %d (MuJoCo) vs %d (mbspar)", mm->nv, m->nv);
  mjData *d = mj_makeData(mm);
  // q0 / qd0 in the FILE order of the joints (read here with libxml2)
  xmlDoc *doc = xmlReadMemory(utext, (int)ulen, "robot.urdf", NULL, XML_PARSE_NONET);
  xmlNode *robot = doc ? xmlDocGetRootElement(doc) : NULL;
  int qa = 0, va = 0, njoint = 0, bad = 0;
  for (xmlNode *n = robot ? robot->children : NULL; n; n = n->next) {
    if (n->type != XML_ELEMENT_NODE || strcmp((const char *)n->name, "joint")) continue;
    char *name = (char *)xmlGetProp(n, (const xmlChar *)"name");
    char *type = (char *)xmlGetProp(n, (const xmlChar *)"type");
    if (type && strcmp(type, "fixed")) {
      int j = mj_name2id(mm, mjOBJ_JOINT, name);
      MBS_EXPECT(j >= 0 && strcmp(type, "floating") != 0, "joint %s (%s): no MuJoCo hinge/slide",
                 name, type);
      if (j >= 0 && strcmp(type, "floating")) {
        d->qpos[mm->jnt_qposadr[j]] = qa < cfg->nurdf_q0 ? cfg->urdf_q0[qa] : 0;
        d->qvel[mm->jnt_dofadr[j]] = va < cfg->nurdf_qd0 ? cfg->urdf_qd0[va] : 0;
      } else {
        bad = 1;
      }
      qa++, va++, njoint++;
    }
    xmlFree(name), xmlFree(type);
  }
  MBS_EXPECT(cfg->nurdf_q0 == qa && cfg->nurdf_qd0 == va,
             "the cfg gives %d q0 and %d qd0 for %d joints: the test wants them all given",
             cfg->nurdf_q0, cfg->nurdf_qd0, qa);
  // model.urdf.joints and the torque table at t = 0 (what accel applies): MuJoCo's damping,
  // joint stiffness with its spring reference, applied joint forces
  mbsReal *tau = calloc((size_t)m->nv, sizeof *tau);
  if (cfg->torques && tau) mbs_torquesAt(cfg->torques, m, 0, tau);
  for (int j = 0; j < mm->njnt && tau; j++) {
    const char *link = mj_id2name(mm, mjOBJ_BODY, mm->jnt_bodyid[j]);
    int b = link ? mbs_modelFindBody(m, link) : -1, dv = mm->jnt_dofadr[j];
    if (b < 0) continue;
    d->qfrc_applied[dv] += tau[m->body_dofadr[b]];
    for (int k = 0; k < cfg->nurdf_jf; k++) {
      const mbsUrdfJointForce *jf = &cfg->urdf_jf[k];
      if (strcmp(jf->link, link) != 0) continue;
      if (jf->given & MBS_UJF_FORCE) d->qfrc_applied[dv] += jf->force[0];
      if (jf->given & MBS_UJF_STIFFNESS) mm->jnt_stiffness[j] = jf->stiffness[0];
      if (jf->given & MBS_UJF_SPRINGREF) mm->qpos_spring[mm->jnt_qposadr[j]] = jf->springref[0];
      if (jf->given & MBS_UJF_DAMPING) mm->dof_damping[dv] = jf->damping[0];
    }
  }
  free(tau);
  mj_forward(mm, d);
  // compare, joint by joint
  double worst = 0;
  const char *wname = "";
  for (int j = 0; j < mm->njnt && !bad; j++) {
    const char *jn = mj_id2name(mm, mjOBJ_JOINT, j);
    int mb = mm->jnt_bodyid[j];
    const char *link = mj_id2name(mm, mjOBJ_BODY, mb);
    int b = link ? mbs_modelFindBody(m, link) : -1;
    MBS_EXPECT(b >= 0 && m->body_dofnum[b] == 1, "joint %s: no mbspar body %s with one dof", jn,
               link ? link : "?");
    if (b < 0 || m->body_dofnum[b] != 1) continue;
    double ref = d->qacc[mm->jnt_dofadr[j]], got = qdd[m->body_dofadr[b]];
    double err = fabs(got - ref) / fmax(1, fabs(ref));
    if (err > worst) worst = err, wname = jn;
  }
  printf("test_robots_mujoco: %s: %d joints, %d bodies, q0 in file order: max |q̈ - q̈_MuJoCo| / "
         "max(1, |q̈|) = %.2e (joint %s; tol %g)\n",
         cfg->urdf_path, njoint, m->nbody, worst, wname, tol);
  MBS_EXPECT(worst <= tol, "%s: q̈ differs from MuJoCo by %.3e at joint %s", cfg->urdf_path, worst,
             wname);
  xmlFreeDoc(doc);
  mj_deleteData(d);
  mj_deleteModel(mm);
  free(qdd), free(utext), free(ctext), free(json);
  mbs_modelDestroy(&m);
  mbs_configDestroy(&cfg);
  return mbs_test_finish("test_robots_mujoco");
}
