/// \file config_model.c
/// Model building from the config: geometry, body tips, explicit bodies, the whole model and the
/// local (distributed-memory) model. Loops and forces: config_loops.c; the inverse motion:
/// config_inverse.c.

#define _POSIX_C_SOURCE 200809L
#include "config_private.h"

// ---------------------------------------------------------------- model: geometry helpers

// inertia about the COM of a shape whose long axis is the unit vector d
static void mbs_shapeInertia(int shape, mbsReal mass, mbsReal length, mbsReal radius,
                             const mbsReal *size, const mbsReal *d, mbsReal *I) {
  if (shape == 0) { // rod: solid cylinder of radius r along d
    mbsReal r = radius > 0 ? radius : length / 20;
    mbsReal ip = mass * (3 * r * r + length * length) / 12, ia = mass * r * r / 2;
    // I = ip (1 - d d^T) + ia d d^T
    I[0] = ip + (ia - ip) * d[0] * d[0];
    I[1] = ip + (ia - ip) * d[1] * d[1];
    I[2] = ip + (ia - ip) * d[2] * d[2];
    I[3] = (ia - ip) * d[0] * d[1];
    I[4] = (ia - ip) * d[0] * d[2];
    I[5] = (ia - ip) * d[1] * d[2];
  } else if (shape == 1) { // box with full edge lengths along the body axes
    I[0] = mass * (size[1] * size[1] + size[2] * size[2]) / 12;
    I[1] = mass * (size[0] * size[0] + size[2] * size[2]) / 12;
    I[2] = mass * (size[0] * size[0] + size[1] * size[1]) / 12;
    I[3] = I[4] = I[5] = 0;
  } else { // solid sphere
    mbsReal r = radius > 0 ? radius : length / 10;
    I[0] = I[1] = I[2] = 0.4 * mass * r * r;
    I[3] = I[4] = I[5] = 0;
  }
}

// mass, com and inertia of a body or generator group g: explicit inertia, or a shape

mbsErr mbs_cfgReadGeom(const mbsConfig *c, const mbsCs *g, int generator, const char *what,
                       mbsGeom *geo) {
  memset(geo, 0, sizeof *geo);
  geo->shape = -1;
  geo->dir[2] = -1; // hanging down
  const mbsCs *s;
  if ((s = config_setting_get_member(g, "mass"))) {
    MBS_CALL(mbs_cfgNumber(c, s, &geo->mass));
    geo->has_mass = 1;
  }
  if (!geo->has_mass) return mbs_cfgFail(c, g, "%s: missing mass", what);
  MBS_CALL(mbs_cfgGetReal(c, g, "length", &geo->length));
  if ((s = config_setting_get_member(g, "length")) && !(geo->length > 0))
    return mbs_cfgFail(c, s, "%s: length must be > 0 (got %g)", what, geo->length);
  if (generator && !s) return mbs_cfgFail(c, g, "%s: missing length", what);
  if ((s = config_setting_get_member(g, "direction"))) {
    MBS_CALL(mbs_cfgGetVec(c, g, "direction", 3, geo->dir));
    mbsReal n =
        sqrt(geo->dir[0] * geo->dir[0] + geo->dir[1] * geo->dir[1] + geo->dir[2] * geo->dir[2]);
    if (!(n > 1e-12)) return mbs_cfgFail(c, s, "%s: direction has zero length", what);
    for (int k = 0; k < 3; k++) geo->dir[k] /= n;
  }
  mbsReal radius = 0, size[3] = {0, 0, 0};
  MBS_CALL(mbs_cfgGetReal(c, g, "radius", &radius));
  if ((s = config_setting_get_member(g, "radius")) && !(radius > 0))
    return mbs_cfgFail(c, s, "%s: radius must be > 0 (got %g)", what, radius);
  int has_size = config_setting_get_member(g, "size") != NULL;
  MBS_CALL(mbs_cfgGetVec(c, g, "size", 3, size));
  if (has_size && !(size[0] > 0 && size[1] > 0 && size[2] > 0))
    return mbs_cfgFail(c, config_setting_get_member(g, "size"),
                       "%s: box size must be three positive edge lengths", what);
  int shape = generator ? 0 : -1; // generators default to rods
  MBS_CALL(mbs_cfgGetEnum(c, g, "shape", mbs_shape_names, &shape));
  geo->shape = shape;

  if ((s = config_setting_get_member(g, "inertia"))) {
    MBS_CALL(mbs_cfgGetVec(c, g, "inertia", 6, geo->inertia));
    geo->has_inertia = 1;
    geo->inertia_src = s;
  } else if (shape >= 0) {
    if (shape == 1 && !has_size)
      return mbs_cfgFail(
          c, config_setting_get_member(g, "shape") ? config_setting_get_member(g, "shape") : g,
          "%s: shape \"box\" needs size = [a, b, c]", what);
    if (shape != 1 && !(geo->length > 0) && !(radius > 0))
      return mbs_cfgFail(c, g, "%s: shape \"%s\" needs length or radius", what,
                         mbs_shape_names[shape]);
    mbsReal len = geo->length > 0 ? geo->length : 2 * radius;
    mbs_shapeInertia(shape, geo->mass, len, radius, size, geo->dir, geo->inertia);
    geo->has_inertia = 1;
    geo->inertia_src = config_setting_get_member(g, "shape");
    if (!geo->inertia_src) geo->inertia_src = config_setting_get_member(g, "radius");
    if (!geo->inertia_src) geo->inertia_src = g;
  } else {
    return mbs_cfgFail(c, g,
                       "%s: missing inertia (give inertia = [Ixx, Iyy, Izz, Ixy, Ixz, Iyz] "
                       "or a shape)",
                       what);
  }
  // centre of mass: explicit, else from the shape along the direction, else the origin
  if (config_setting_get_member(g, "com")) {
    MBS_CALL(mbs_cfgGetVec(c, g, "com", 3, geo->com));
  } else if (shape >= 0 && geo->length > 0) {
    mbsReal f = shape == 2 ? 1.0 : 0.5;
    for (int k = 0; k < 3; k++) geo->com[k] = f * geo->length * geo->dir[k];
  }
  return MBS_OK;
}

// which setting an mbs_modelAddBody message is about (keywords of its messages)
static const char *mbs_cfgErrKey(const char *msg) {
  static const char *const map[][2] = {
      {"axis2", "axis2"},     {"parallel", "axis2"},  {"axis", "axis"}, {"origin", "origin"},
      {"quaternion", "q0"},   {"qd0", "qd0"},         {"q0", "q0"},     {"stiffness", "stiffness"},
      {"damping", "damping"}, {"inertia", "inertia"}, {"mass", "mass"}, {"com ", "com"},
      {"name", "name"},       {"joint type", "type"}};
  for (size_t k = 0; k < sizeof map / sizeof map[0]; k++)
    if (strstr(msg, map[k][0])) return map[k][1];
  return NULL;
}

static int mbs_isJointKey(const char *key) {
  static const char *const jk[] = {"type", "axis",      "axis2",   "origin",    "q0",
                                   "qd0",  "stiffness", "damping", "springref", "force"};
  for (size_t k = 0; k < sizeof jk / sizeof jk[0]; k++)
    if (strcmp(jk[k], key) == 0) return 1;
  return 0;
}

// add one body; on failure re-raise the model's message at the setting it is about
mbsErr mbs_cfgAdd(const mbsConfig *c, mbsModel *m, const mbsBodySpec *sp, const mbsCs *body,
                  const mbsCs *joint, const mbsGeom *geo, const char *what, int *id) {
  mbsErr e = mbs_modelAddBody(m, sp, id);
  if (!e) return MBS_OK;
  if (e != MBS_ERR_INPUT) return e;
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", mbs_errMsg());
  const char *key = mbs_cfgErrKey(msg);
  const mbsCs *at = NULL;
  if (key && strcmp(key, "inertia") == 0 && geo && geo->inertia_src) at = geo->inertia_src;
  if (!at && key && joint && mbs_isJointKey(key)) at = config_setting_get_member(joint, key);
  if (!at && key) at = config_setting_get_member(body, key);
  if (!at && key && mbs_isJointKey(key) && joint) at = joint;
  if (!at) at = body;
  return mbs_cfgFail(c, at, "%s: %s", what, msg);
}

// parent name -> index (-1 ground); \p later_list: the bodies list to search for a later definition
mbsErr mbs_cfgParent(const mbsConfig *c, const mbsModel *m, const mbsCs *g, const char *what,
                     const mbsCs *later_list, int *parent) {
  const char *pname = "ground";
  MBS_CALL(mbs_cfgGetString(c, g, "parent", &pname));
  if (strcmp(pname, "ground") == 0 || strcmp(pname, "world") == 0) {
    *parent = -1;
    return MBS_OK;
  }
  *parent = mbs_modelFindGlobal(m, pname);
  if (*parent >= 0) return MBS_OK;
  const mbsCs *ps = config_setting_get_member(g, "parent");
  if (later_list) {
    int n = config_setting_length(later_list);
    for (int k = 0; k < n; k++) {
      const mbsCs *b = config_setting_get_elem(later_list, (unsigned)k);
      const mbsCs *ns = config_setting_get_member(b, "name");
      if (ns && config_setting_type(ns) == CONFIG_TYPE_STRING &&
          strcmp(config_setting_get_string(ns), pname) == 0 && b != g)
        return mbs_cfgFail(c, ps,
                           "%s: parent \"%s\" is defined later in the file (a body must "
                           "come after its parent)",
                           what, pname);
    }
  }
  return mbs_cfgFail(c, ps, "%s: unknown parent \"%s\" (not \"ground\" or an earlier body)", what,
                     pname);
}

// per-dof values: scalar broadcast, or exactly n values
mbsErr mbs_cfgDofValues(const mbsConfig *c, const mbsCs *g, const char *key, int n,
                        const char *what, mbsReal *out) {
  mbsReal *v;
  int cnt;
  MBS_CALL(mbs_cfgGetValues(c, g, key, &v, &cnt));
  if (!cnt) return MBS_OK;
  if (cnt != 1 && cnt != n) {
    free(v);
    return mbs_cfgFail(c, config_setting_get_member(g, key),
                       "%s: wrong array length: %s needs %d value(s) (or one for all), got %d",
                       what, key, n, cnt);
  }
  if (n == 0) {
    free(v);
    return mbs_cfgFail(c, config_setting_get_member(g, key),
                       "%s: %s given for a joint without degrees of freedom", what, key);
  }
  for (int k = 0; k < n; k++) out[k] = v[cnt == 1 ? 0 : k];
  free(v);
  return MBS_OK;
}

// a body name (or a generator's prefix) becomes CSV column names and report keys: no control
// characters (a newline would split the CSV header) and no commas (they would shift columns)
mbsErr mbs_cfgCheckName(const mbsConfig *c, const mbsCs *s, const char *what, const char *name) {
  const char *why = mbs_nameProblem(name);
  if (why)
    return mbs_cfgFail(c, s, "%s: name \"%s\" contains %s (names become CSV column names)", what,
                       name, why);
  return MBS_OK;
}

// ---------------------------------------------------------------- model: body tips

// the tip of every body built so far: length * direction in its frame for generated bodies and
// for explicit bodies with a length; a generator hung from such a body starts at its tip. Kept
// sparse by global body index (every generated body of one generator has the same tip), so a
// rank that builds only its own bodies knows the tip of any body

static mbsErr mbs_tipGrow(int **a, int **b, mbsReal **p, int *cap, int need) {
  if (need <= *cap) return MBS_OK;
  int nc = *cap ? 2 * *cap : 16;
  int *na = realloc(*a, sizeof(int) * (size_t)nc);
  if (na) *a = na;
  int *nb = b ? realloc(*b, sizeof(int) * (size_t)nc) : NULL;
  if (nb) *b = nb;
  mbsReal *np = realloc(*p, sizeof(mbsReal) * 3 * (size_t)nc);
  if (np) *p = np;
  if (!na || (b && !nb) || !np) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  *cap = nc;
  return MBS_OK;
}

// the tip of explicit body gid (NULL: none)
static mbsErr mbs_tipSet(mbsTips *t, int gid, const mbsReal *tip) {
  if (!tip) return MBS_OK;
  MBS_CALL(mbs_tipGrow(&t->gid, NULL, &t->p, &t->cap, t->n + 1));
  t->gid[t->n] = gid;
  memcpy(t->p + 3 * t->n, tip, 3 * sizeof(mbsReal));
  t->n++;
  return MBS_OK;
}

// the tip shared by the n bodies of a generator from gid base
mbsErr mbs_tipSetRange(mbsTips *t, int base, int n, const mbsReal *tip) {
  MBS_CALL(mbs_tipGrow(&t->gbase, &t->gnum, &t->gp, &t->gcap, t->ng + 1));
  t->gbase[t->ng] = base, t->gnum[t->ng] = n;
  memcpy(t->gp + 3 * t->ng, tip, 3 * sizeof(mbsReal));
  t->ng++;
  return MBS_OK;
}

const mbsReal *mbs_tipGet(const mbsTips *t, int gid) {
  for (int k = 0; k < t->ng; k++)
    if (gid >= t->gbase[k] && gid < t->gbase[k] + t->gnum[k]) return t->gp + 3 * k;
  int lo = 0, hi = t->n - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (t->gid[mid] == gid) return t->p + 3 * mid;
    if (t->gid[mid] < gid)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return NULL;
}

static void mbs_tipFree(mbsTips *t) {
  free(t->gid), free(t->p), free(t->gbase), free(t->gnum), free(t->gp);
}

// a joint's q0 or qd0 (KEY): exactly n values into out when given
static mbsErr mbs_cfgJointState(const mbsConfig *c, const mbsCs *j, const char *key, int n,
                                const char *what, const char *type, mbsReal *out) {
  const mbsCs *qs = config_setting_get_member(j, key);
  if (!qs) return MBS_OK;
  mbsReal *v;
  int cnt;
  MBS_CALL(mbs_cfgGetValues(c, j, key, &v, &cnt));
  if (cnt != n) {
    free(v);
    return mbs_cfgFail(c, qs, "%s: wrong array length: %s of a %s joint has %d value(s), got %d",
                       what, key, type, n, cnt);
  }
  memcpy(out, v, (size_t)cnt * sizeof *v);
  free(v);
  return MBS_OK;
}

// ---------------------------------------------------------------- model: explicit bodies

// joint.node = "NAME": the parent is a flexible body with that node; the joint's origin (in the
// parent's frame) is measured from the node's undeformed position
static mbsErr mbs_cfgFlexNode(const mbsConfig *c, const mbsModel *m, const mbsCs *b, const mbsCs *j,
                              const char *what, mbsReal *origin, int *node) {
  const char *nname = NULL, *pname = "ground";
  *node = -1;
  MBS_CALL(mbs_cfgGetString(c, j, "node", &nname));
  if (!nname) return MBS_OK;
  const mbsCs *ns = config_setting_get_member(j, "node");
  MBS_CALL(mbs_cfgGetString(c, b, "parent", &pname));
  const mbsFlexBody *fp = mbs_flexSetFindName(m->flex, pname);
  if (!fp)
    return mbs_cfgFail(c, ns,
                       "%s: joint.node = \"%s\": the parent \"%s\" is not a flexible body defined "
                       "before this one",
                       what, nname, pname);
  for (int k = 0; k < fp->nnodes; k++)
    if (!strcmp(fp->node_name[k], nname)) {
      *node = k;
      origin[0] += fp->spec.node_x[k], origin[1] += fp->node_yz[k][0];
      origin[2] += fp->node_yz[k][1];
      return MBS_OK;
    }
  return mbs_cfgFail(c, ns, "%s: joint.node = \"%s\": the flexible parent \"%s\" has no such node",
                     what, nname, pname);
}

static mbsErr mbs_cfgBody(const mbsConfig *c, mbsModel *m, const mbsCs *b, const mbsCs *list,
                          mbsTips *tips) {
  static const char *const bkeys[] = {"name",      "parent",   "joint",  "mass",   "com",
                                      "inertia",   "shape",    "length", "radius", "size",
                                      "direction", "flexible", NULL};
  static const char *const jkeys[] = {"type",      "axis",    "axis2",     "origin", "q0",   "qd0",
                                      "stiffness", "damping", "springref", "force",  "node", NULL};
  char what[320], path[64];
  mbs_cfgPath(b, path, sizeof path);
  if (config_setting_type(b) != CONFIG_TYPE_GROUP)
    return mbs_cfgFail(c, b, "%s: wrong type: a body is a group { name = ...; ... }, got %s", path,
                       mbs_cfgTypeName(b));
  MBS_CALL(mbs_cfgCheckKeys(c, b, bkeys));
  mbsBodySpec sp;
  mbs_bodySpecDefault(&sp);
  // the default axes of the input file, the same for explicit bodies and generators: rotation
  // about y (swinging in the x-z plane under gravity along -z), universal's second axis x
  sp.axis[0] = 0, sp.axis[1] = 1, sp.axis[2] = 0;
  sp.axis2[0] = 1, sp.axis2[1] = 0, sp.axis2[2] = 0;
  const char *name = NULL;
  MBS_CALL(mbs_cfgGetString(c, b, "name", &name));
  if (!name) return mbs_cfgFail(c, b, "%s: missing name", path);
  MBS_CALL(mbs_cfgCheckName(c, config_setting_get_member(b, "name"), path, name));
  snprintf(what, sizeof what, "body \"%s\"", name);
  sp.name = name;
  sp.keep_name = 1; // explicit bodies may be named as parents anywhere later in the file
  MBS_CALL(mbs_cfgParent(c, m, b, what, list, &sp.parent));

  // joint
  const mbsCs *j;
  MBS_CALL(mbs_cfgGetGroup(c, b, "joint", &j));
  if (!j) return mbs_cfgFail(c, b, "%s: missing joint = { type = ...; }", what);
  MBS_CALL(mbs_cfgCheckKeys(c, j, jkeys));
  const char *type = NULL;
  MBS_CALL(mbs_cfgGetString(c, j, "type", &type));
  if (!type) return mbs_cfgFail(c, j, "%s: missing joint type", what);
  sp.jnttype = mbs_jntFromName(type);
  if (sp.jnttype < 0)
    return mbs_cfgFail(c, config_setting_get_member(j, "type"),
                       "%s: unknown joint type \"%s\" (expected %s)", what, type,
                       mbs_jntNameList());
  int nq = mbs_jntNq(sp.jnttype), nv = mbs_jntNv(sp.jnttype);
  MBS_CALL(mbs_cfgGetVec(c, j, "axis", 3, sp.axis));
  MBS_CALL(mbs_cfgGetVec(c, j, "axis2", 3, sp.axis2));
  MBS_CALL(mbs_cfgGetVec(c, j, "origin", 3, sp.origin));
  mbs_jntDefaultQ0(sp.jnttype, sp.q0);
  MBS_CALL(mbs_cfgJointState(c, j, "q0", nq, what, type, sp.q0));
  MBS_CALL(mbs_cfgJointState(c, j, "qd0", nv, what, type, sp.qd0));
  MBS_CALL(mbs_cfgDofValues(c, j, "stiffness", nv, what, sp.stiffness));
  MBS_CALL(mbs_cfgDofValues(c, j, "damping", nv, what, sp.damping));
  MBS_CALL(mbs_cfgDofValues(c, j, "springref", nv, what, sp.springref));
  MBS_CALL(mbs_cfgDofValues(c, j, "force", nv, what, sp.force));

  // a joint on a node of a flexible parent (docs/flexible.md): its origin is from that node
  int node = -1;
  MBS_CALL(mbs_cfgFlexNode(c, m, b, j, what, sp.origin, &node));

  // mass properties (a flexible body's follow from its beam, src/flex_config.c)
  mbsGeom geo;
  const mbsCs *fl;
  mbsFlexBody fb;
  memset(&fb, 0, sizeof fb);
  MBS_CALL(mbs_cfgGetGroup(c, b, "flexible", &fl));
  if (fl) {
    MBS_CALL(mbs_cfgFlexible(c, b, fl, what, &fb));
    memset(&geo, 0, sizeof geo);
    geo.mass = fb.rigid_mass; // the beam's rigid equivalent, or the file's /rigid
    memcpy(geo.com, fb.rigid_com, sizeof geo.com);
    memcpy(geo.inertia, fb.rigid_inertia, sizeof geo.inertia);
    geo.length = fb.spec.length, geo.dir[0] = 1; // drawn along the beam
    snprintf(fb.name, sizeof fb.name, "%s", name);
    fb.line = mbs_cfgLine(fl);
  } else {
    MBS_CALL(mbs_cfgReadGeom(c, b, 0, what, &geo));
  }
  sp.mass = geo.mass;
  memcpy(sp.com, geo.com, sizeof sp.com);
  memcpy(sp.inertia, geo.inertia, sizeof sp.inertia);
  mbsReal tip[3] = {geo.length * geo.dir[0], geo.length * geo.dir[1], geo.length * geo.dir[2]};
  if (geo.length > 0) memcpy(sp.tip, tip, sizeof sp.tip); // drawn extent (outputs)
  int id = -1;
  mbsErr e = mbs_cfgAdd(c, m, &sp, b, j, &geo, what, &id);
  if (!e && fl) {
    fb.body = id;
    e = mbs_flexSetAdd(&m->flex, &fb);
    if (!e) m->nflex_g++;
  }
  if (fl) mbs_flexModalFree(&fb.modal), free(fb.file); // moved into the set, or dropped
  if (!e && node >= 0 && id >= 0) e = mbs_flexSetAttach(m->flex, id, node);
  if (e) return e;
  return mbs_tipSet(tips, id, geo.length > 0 ? tip : NULL);
}

static mbsErr mbs_cfgBuildInto(const mbsConfig *c, mbsModel *m) {
  const config_t *tree = (const config_t *)c->priv;
  const mbsCs *model = config_setting_get_member(config_root_setting(tree), "model");
  if (!model)
    return mbs_errSet(MBS_ERR_INPUT, "%s:1: empty model: there is no model group", c->filename);
  m->opt = c->opt;
  memcpy(m->gravity, c->gravity, sizeof m->gravity);
  mbsErr e = MBS_OK;
  mbsTips tips;
  memset(&tips, 0, sizeof tips);
  const mbsCs *lad = NULL; // model.ladder: its loops come after every body
  int lad_base = -1;
  // bodies and generators in file order
  for (int k = 0; k < config_setting_length(model) && !e; k++) {
    const mbsCs *s = config_setting_get_elem(model, (unsigned)k);
    const char *name = config_setting_name(s);
    if (strcmp(name, "bodies") == 0) {
      if (!mbs_cfgIsList(s)) {
        e = mbs_cfgFail(c, s, "model.bodies: wrong type: expected a list ( {...}, {...} ), got %s",
                        mbs_cfgTypeName(s));
        break;
      }
      for (int b = 0; b < config_setting_length(s) && !e; b++)
        e = mbs_cfgBody(c, m, config_setting_get_elem(s, (unsigned)b), s, &tips);
    } else if (strcmp(name, "chain") == 0) {
      e = mbs_cfgGenerators(c, m, s, 0, &tips);
    } else if (strcmp(name, "tree") == 0) {
      e = mbs_cfgGenerators(c, m, s, 1, &tips);
    } else if (strcmp(name, "ladder") == 0) {
      lad = s;
      e = mbs_cfgLadder(c, m, s, &lad_base);
    } else if (strcmp(name, "urdf") == 0) {
      // the robot, its root on the ground (the text was read by the caller)
      if (!c->urdf)
        e = mbs_errSet(MBS_ERR_INTERNAL, "%s: the URDF file %s was not read (mbs_configSetUrdf)",
                       c->filename, c->urdf_path ? c->urdf_path : "?");
      else
        e = mbs_urdfAddBodies(c->urdf, m, -1, c->nurdf_q0 ? c->urdf_q0 : NULL,
                              c->nurdf_qd0 ? c->urdf_qd0 : NULL);
      if (!e) mbs_cfgUrdfForces(c, m);
    }
  }
  mbs_tipFree(&tips);
  if (!e && m->nbody_g == 0 && c->urdf) // (found by fuzz_urdf: the message named the config)
    e = mbs_errSet(MBS_ERR_INPUT,
                   "%s:1: the robot has no body to simulate (its root link is the ground and every "
                   "other link is massless on a fixed joint, or there is none)",
                   c->urdf_path);
  if (!e && m->nbody_g == 0)
    e = mbs_cfgFail(c, model,
                    "empty model: the model has no bodies (give bodies, chain, tree or ladder)");
  // cut joints and spring-dampers, after every body (they name bodies anywhere in the file);
  // full builds only: main.c builds every model with loops or forces whole on every rank
  const mbsCs *ls = config_setting_get_member(model, "loops"),
              *fs = config_setting_get_member(model, "forces");
  // (subset builds: loops only in the local model's pass, mbs_modelTrackLoops; no forces)
  if (!e && (fs && config_setting_length(fs)) && m->sub)
    e = mbs_errSet(MBS_ERR_UNSUPPORTED,
                   "%s: a distributed-memory model cannot hold forces (build it whole)",
                   c->filename);
  int want_loops = !m->names_only && (!m->sub || m->trk_on);
  if (!e && lad && want_loops) e = mbs_cfgLadderLoops(c, m, lad, lad_base);
  if (!e && ls && want_loops) e = mbs_cfgLoops(c, m, ls);
  if (!e && fs && !m->names_only) e = mbs_cfgForces(c, m, fs);
  if (!e) {
    e = mbs_modelFinalize(m);
    if (e == MBS_ERR_INPUT) e = mbs_configBlame(c, "model", e);
  }
  // crba's dense joint-space inertia: refused here, at solver.method, rather than later
  // without a location (src/dynamics.c keeps the same limit)
  if (!e && mbs_solverCaps(m->opt.solver)->dense_inertia && m->nv > MBS_CFG_CRBA_MAXNV) {
    const mbsCs *sm = config_lookup((const config_t *)c->priv, "solver.method");
    e = mbs_cfgFail(c, sm ? sm : model,
                    "solver.method = crba needs a dense %d x %d joint-space inertia (%.3g GB); "
                    "at most %d degrees of freedom: use aba for models this large",
                    m->nv, m->nv, 8.0 * m->nv * (double)m->nv / 1e9, MBS_CFG_CRBA_MAXNV);
  }
  // a semidefinite body (a thin rod): only the methods that do not factor each body's inertia
  if (!e && m->nsemidef_g && !(c->sauto.on && !c->sauto.decided) &&
      !mbs_solverCaps(m->opt.solver)->semidef_bodies) {
    const mbsCs *sm = config_lookup((const config_t *)c->priv, "solver.method");
    e = mbs_cfgFail(c, sm ? sm : model,
                    "%s = %s factors every body's 6 x 6 inertia, and body %s has a "
                    "semidefinite one (a thin rod): use solver.method = aba or crba",
                    mbs_solverCaps(m->opt.solver)->natural ? "model.formulation" : "solver.method",
                    mbs_solverName(m->opt.solver), m->semidef_name);
  }
  return e;
}

mbsErr mbs_configBuildModel(const mbsConfig *c, mbsModel **out) {
  *out = NULL;
  mbsModel *m;
  MBS_CALL(mbs_modelCreate(&m, 64));
  mbsErr e = mbs_cfgBuildInto(c, m);
  // a q0 off the loops is assembled onto them (Newton-Raphson); loops that cannot close are
  // input errors at model.loops
  if (!e && m->nloop) {
    e = mbs_loopAssemble(m);
    if (e == MBS_ERR_INPUT) {
      mbs_errPrefix("model.loops");
      e = mbs_configBlame(c, "model.loops", e);
    }
  }
  if (e) {
    mbs_modelDestroy(&m);
    return e;
  }
  *out = m;
  return MBS_OK;
}

mbsErr mbs_configValidate(const mbsConfig *c) {
  mbsModel *m;
  MBS_CALL(mbs_modelCreate(&m, 16));
  mbs_modelSubset(m, NULL, 0, 1);
  mbsErr e = mbs_cfgBuildInto(c, m);
  mbs_modelDestroy(&m);
  return e;
}

static int mbs_cmpInt(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

mbsErr mbs_configBuildLocal(const mbsConfig *c, int nranks, int rank, mbsModel **out) {
  *out = NULL;
  static const int none = -1;
  mbsModel *m0 = NULL, *m1 = NULL, *m2 = NULL;
  int *start = NULL, *sub = NULL;
  mbsErr e = mbs_modelCreate(&m0, 16);
  // pass 0: the joint types in global order (generators cost O(1)), then the decomposition
  if (!e) {
    mbs_modelSubset(m0, &none, 0, 0);
    if (c->nloops) mbs_modelTrackLoops(m0, 0, 0); // the loops' bodies (global), for pass B
    e = mbs_cfgBuildInto(c, m0);
  }
  if (!e && (m0->nrun < 0 || m0->nrun_m < 0))
    e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (model structure)");
  if (!e && !(start = malloc(sizeof(int) * (size_t)(nranks + 1))))
    e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  if (!e) {
    e = mbs_partitionRunsLight(m0->run_type, m0->run_len, m0->nrun, !m0->run_branched, m0->run_cut,
                               m0->nrun_cut, m0->run_light, m0->nrun_light, nranks, start);
    if (e == MBS_ERR_INPUT) e = mbs_configBlame(c, "model", e); // too many ranks: name the cause
  }
  int b0 = 0, b1 = 0;
  if (!e) b0 = start[rank], b1 = start[rank + 1];
  // pass A: the owned bodies' remote parents and remote children (nothing stored)
  if (!e) e = mbs_modelCreate(&m1, 16);
  if (!e) {
    mbs_modelSubset(m1, &none, 0, 0);
    mbs_modelRecord(m1, b0, b1);
    e = mbs_cfgBuildInto(c, m1);
  }
  // pass B: the local model, [remote parents | owned | remote children] and the loops' bodies, in
  // global order
  int nsub = 0;
  if (!e) {
    int cap = m1->nrec_par + (b1 - b0) + m1->nrec_child + 2 * m0->nloop;
    if (!(sub = malloc(sizeof(int) * (size_t)(cap + 1))))
      e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    for (int i = 0; !e && i < m1->nrec_par; i++) sub[nsub++] = m1->rec_par[i];
    for (int g = b0; !e && g < b1; g++) sub[nsub++] = g;
    for (int i = 0; !e && i < m1->nrec_child; i++) sub[nsub++] = m1->rec_child[i];
    // every loop's bodies too: the loop layer keeps their poses at their local indices (a body
    // neither owned nor a relative of an owned one hangs from a remote parent, -1 locally)
    for (int i = 0; !e && i < 2 * m0->nloop; i++)
      if (m0->loop_gbody[i] >= 0) sub[nsub++] = m0->loop_gbody[i];
    mbs_modelDestroy(&m0);
    if (!e) {
      qsort(sub, (size_t)nsub, sizeof *sub, mbs_cmpInt);
      int u = 0;
      for (int i = 0; i < nsub; i++)
        if (!u || sub[u - 1] != sub[i]) sub[u++] = sub[i];
      nsub = u;
      mbs_modelDestroy(&m1);
      e = mbs_modelCreate(&m2, nsub + 1);
    }
  }
  if (!e) {
    mbs_modelSubset(m2, sub, nsub, 0);
    int np = 0;
    while (np < nsub && sub[np] < b0) np++;
    m2->own0 = np, m2->own1 = np + (b1 - b0);
    if (c->nloops) mbs_modelTrackLoops(m2, b0, b1); // every loop, with its sides' paths
    e = mbs_cfgBuildInto(c, m2);
  }
  if (!e) {
    m2->part_start = start, m2->part_n = nranks, start = NULL;
    m2->sub = NULL; // the array goes away with this function
  }
  mbs_modelDestroy(&m0);
  mbs_modelDestroy(&m1);
  free(start), free(sub);
  if (e) {
    mbs_modelDestroy(&m2);
    return e;
  }
  *out = m2;
  return MBS_OK;
}
