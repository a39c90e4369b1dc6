/// \file flex_config.c
/// The config keys of a flexible body (issue 34 part 2a; ../shared/design.md section 9;
/// docs/flexible.md): `flexible = { beam = {...}; modes; damping; nodes = (...); }` inside a
/// body, read strictly (FILE:LINE, one line) and reduced by Craig–Bampton (flex_beam.c) while
/// the model is built, or `flexible = { file = "BODY.h5"; ... }` read from a modal file
/// (docs/flexible.md 14). Called from config_model.c (mbs_cfgBody).

#define _POSIX_C_SOURCE 200809L
#include "config_private.h"
#include "mbspar/mbs_flex.h"

// the setting a message of mbs_flexBeamReduce is about (it names flexible.KEY or flexible.beam.KEY)
static const mbsCs *mbs_flexBlame(const mbsCs *fl, const mbsCs *beam, const char *msg) {
  static const char *const bk[] = {"length", "E", "rho", "area", "Iy", "Iz", "elements", NULL};
  const mbsCs *s = NULL;
  const char *p = strstr(msg, "flexible.beam.");
  if (p && beam)
    for (int k = 0; bk[k] && !s; k++) {
      size_t n = strlen(bk[k]);
      const char *q = p + strlen("flexible.beam.");
      if (!strncmp(q, bk[k], n) && (q[n] == ' ' || q[n] == 0))
        s = config_setting_get_member(beam, bk[k]);
    }
  if (!s && strstr(msg, "flexible.beam:") && beam) s = beam;
  if (!s && strstr(msg, "flexible.modes")) s = config_setting_get_member(fl, "modes");
  if (!s && strstr(msg, "flexible.nodes")) s = config_setting_get_member(fl, "nodes");
  return s ? s : fl;
}

// the attachment nodes: a list of { name; position = [x, 0, 0]; } on the beam's axis
static mbsErr mbs_cfgFlexNodes(const mbsConfig *c, const mbsCs *fl, const char *what,
                               mbsFlexBody *fb) {
  static const char *const nkeys[] = {"name", "position", NULL};
  const mbsCs *ns = config_setting_get_member(fl, "nodes");
  if (!ns) return MBS_OK;
  if (!mbs_cfgIsList(ns))
    return mbs_cfgFail(c, ns,
                       "%s: flexible.nodes: wrong type: expected a list ( { name = ...; position = "
                       "[x, 0, 0]; }, ... ), got %s",
                       what, mbs_cfgTypeName(ns));
  int n = config_setting_length(ns);
  if (n > MBS_FLEX_MAX_NODES)
    return mbs_cfgFail(c, ns, "%s: flexible.nodes: at most %d nodes (got %d)", what,
                       MBS_FLEX_MAX_NODES, n);
  mbsReal L = fb->spec.length;
  for (int k = 0; k < n; k++) {
    const mbsCs *nd = config_setting_get_elem(ns, (unsigned)k);
    if (config_setting_type(nd) != CONFIG_TYPE_GROUP)
      return mbs_cfgFail(c, nd,
                         "%s: flexible.nodes: wrong type: a node is a group { name = ...; "
                         "position = [x, 0, 0]; }, got %s",
                         what, mbs_cfgTypeName(nd));
    MBS_CALL(mbs_cfgCheckKeys(c, nd, nkeys));
    const char *name = NULL;
    MBS_CALL(mbs_cfgGetString(c, nd, "name", &name));
    if (!name || !name[0]) return mbs_cfgFail(c, nd, "%s: flexible.nodes: missing name", what);
    MBS_CALL(mbs_cfgCheckName(c, config_setting_get_member(nd, "name"), what, name));
    if (strlen(name) >= MBS_FLEX_NAME)
      return mbs_cfgFail(c, config_setting_get_member(nd, "name"),
                         "%s: flexible.nodes: name \"%.20s...\" is longer than %d characters", what,
                         name, MBS_FLEX_NAME - 1);
    for (int j = 0; j < k; j++)
      if (!strcmp(fb->node_name[j], name))
        return mbs_cfgFail(c, config_setting_get_member(nd, "name"),
                           "%s: flexible.nodes: two nodes are named \"%s\"", what, name);
    const mbsCs *ps = config_setting_get_member(nd, "position");
    if (!ps)
      return mbs_cfgFail(c, nd, "%s: flexible.nodes: node \"%s\" has no position = [x, 0, 0]", what,
                         name);
    mbsReal p[3];
    MBS_CALL(mbs_cfgGetVec(c, nd, "position", 3, p));
    if (fabs(p[1]) > 1e-12 * L || fabs(p[2]) > 1e-12 * L || !(p[0] > 0) || p[0] > L * (1 + 1e-12))
      return mbs_cfgFail(c, ps,
                         "%s: flexible.nodes: node \"%s\" at [%g, %g, %g] is off the beam (its "
                         "axis runs from [0, 0, 0] (the body frame) to [%g, 0, 0])",
                         what, name, p[0], p[1], p[2], L);
    snprintf(fb->node_name[k], MBS_FLEX_NAME, "%s", name);
    fb->spec.node_x[k] = p[0];
  }
  fb->spec.nnodes = fb->nnodes = n;
  return MBS_OK;
}

// flexible.damping and flexible.stiffening (both sources)
static mbsErr mbs_cfgFlexDamping(const mbsConfig *c, const mbsCs *fl, const char *what,
                                 mbsFlexBody *fb) {
  MBS_CALL(mbs_cfgGetReal(c, fl, "damping", &fb->damping));
  const mbsCs *ds = config_setting_get_member(fl, "damping");
  if (ds && !(fb->damping >= 0 && isfinite(fb->damping)))
    return mbs_cfgFail(c, ds, "%s: flexible.damping must be >= 0 (got %g)", what, fb->damping);
  const mbsCs *st = config_setting_get_member(fl, "stiffening");
  if (st) {
    if (config_setting_type(st) != CONFIG_TYPE_BOOL)
      return mbs_cfgFail(c, st,
                         "%s: flexible.stiffening: wrong type: expected true or false, got %s",
                         what, mbs_cfgTypeName(st));
    fb->stiffening = config_setting_get_bool(st);
  }
  return MBS_OK;
}

// flexible.file: the modal data, nodes and rigid properties from a modal file (docs/flexible.md
// 14), read by the reader the parallel layer registered (HDF5) and checked by mbs_flexFileCheck;
// the config's nodes, when given, pick the file's nodes by name (in the config's order)
static mbsErr mbs_cfgFlexFile(const mbsConfig *c, const mbsCs *fl, const mbsCs *fs,
                              const char *what, mbsFlexBody *fb) {
  static const char *const nkeys[] = {"name", "position", NULL};
  if (config_setting_type(fs) != CONFIG_TYPE_STRING || !config_setting_get_string(fs)[0])
    return mbs_cfgFail(c, fs, "%s: flexible.file: expected a file name \"BODY.h5\"", what);
  const mbsCs *ms = config_setting_get_member(fl, "modes");
  if (ms)
    return mbs_cfgFail(
        c, ms, "%s: flexible.modes: not with flexible.file (the file's modes are all kept)", what);
  MBS_CALL(mbs_cfgFlexDamping(c, fl, what, fb));
  mbsFlexFileReader rd = mbs_flexFileGetReader();
  if (!rd)
    return mbs_cfgFail(c, fs,
                       "%s: flexible.file: modal files are read by the mbspar program (this "
                       "program has no HDF5 reader)",
                       what);
  MBS_CALL(mbs_cfgResolve(c, config_setting_get_string(fs), &fb->file));
  mbsFlexFileData d;
  memset(&d, 0, sizeof d);
  mbsErr e = rd(fb->file, &d);
  if (!e) e = mbs_flexFileCheck(fb->file, &d);
  if (e == MBS_ERR_INPUT) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", mbs_errMsg());
    mbs_flexFileFree(&d);
    return mbs_cfgFail(c, fs, "%s: flexible.file: %s", what, msg);
  }
  if (e) {
    mbs_flexFileFree(&d);
    return e;
  }
  fb->modal = d.modal; // moved
  const mbsFlexModal *md = &fb->modal;
  fb->spec.length = md->x[md->nfe - 1];
  if (md->pos) { // the lumped form: no geometric stiffness (docs/flexible.md 14)
    const mbsCs *st = config_setting_get_member(fl, "stiffening");
    if (st && fb->stiffening)
      return mbs_cfgFail(c, st,
                         "%s: flexible.stiffening: a lumped modal file (%s) has no geometric "
                         "stiffness: stiffening is off for it",
                         what, fb->file);
    fb->stiffening = 0;
    fb->spec.length = 0;
    for (int i = 0; i < md->nfe; i++)
      for (int k = 0; k < 3; k++) fb->spec.length = fmax(fb->spec.length, fabs(md->pos[3 * i + k]));
  }
  fb->spec.elements = md->nfe - 1;
  fb->spec.modes = md->nmodes;
  fb->rigid_mass = d.mass;
  memcpy(fb->rigid_com, d.com, sizeof d.com);
  memcpy(fb->rigid_inertia, d.inertia, sizeof d.inertia);
  const mbsCs *ns = config_setting_get_member(fl, "nodes");
  if (!ns) { // every node of the file
    for (int k = 0; k < d.nnodes; k++) {
      snprintf(fb->node_name[k], MBS_FLEX_NAME, "%s", d.node_name[k]);
      fb->spec.node_x[k] = md->x[d.node_fe[k]];
      if (md->pos) // a lumped body: the node's point
        for (int i = 0; i < 2; i++) fb->node_yz[k][i] = md->pos[3 * d.node_fe[k] + 1 + i];
    }
    fb->spec.nnodes = fb->nnodes = d.nnodes;
    return MBS_OK;
  }
  if (!mbs_cfgIsList(ns))
    return mbs_cfgFail(c, ns,
                       "%s: flexible.nodes: wrong type: expected a list ( { name = ...; }, ... ), "
                       "got %s",
                       what, mbs_cfgTypeName(ns));
  int n = config_setting_length(ns);
  if (n > MBS_FLEX_MAX_NODES)
    return mbs_cfgFail(c, ns, "%s: flexible.nodes: at most %d nodes (got %d)", what,
                       MBS_FLEX_MAX_NODES, n);
  for (int k = 0; k < n; k++) {
    const mbsCs *nd = config_setting_get_elem(ns, (unsigned)k);
    if (config_setting_type(nd) != CONFIG_TYPE_GROUP)
      return mbs_cfgFail(
          c, nd, "%s: flexible.nodes: wrong type: a node is a group { name = ...; }, got %s", what,
          mbs_cfgTypeName(nd));
    MBS_CALL(mbs_cfgCheckKeys(c, nd, nkeys));
    const char *name = NULL;
    MBS_CALL(mbs_cfgGetString(c, nd, "name", &name));
    if (!name || !name[0]) return mbs_cfgFail(c, nd, "%s: flexible.nodes: missing name", what);
    int f = -1;
    for (int j = 0; j < d.nnodes && f < 0; j++)
      if (!strcmp(d.node_name[j], name)) f = j;
    if (f < 0)
      return mbs_cfgFail(c, config_setting_get_member(nd, "name"),
                         "%s: flexible.nodes: node \"%s\" is not in %s (/node_names)", what, name,
                         fb->file);
    for (int j = 0; j < k; j++)
      if (!strcmp(fb->node_name[j], name))
        return mbs_cfgFail(c, config_setting_get_member(nd, "name"),
                           "%s: flexible.nodes: node \"%s\" is named twice", what, name);
    mbsReal x = md->x[d.node_fe[f]];
    mbsReal yz[2] = {md->pos ? md->pos[3 * d.node_fe[f] + 1] : 0,
                     md->pos ? md->pos[3 * d.node_fe[f] + 2] : 0};
    if (config_setting_get_member(nd, "position")) {
      mbsReal p[3];
      MBS_CALL(mbs_cfgGetVec(c, nd, "position", 3, p));
      mbsReal L = fb->spec.length;
      if (fabs(p[0] - x) > 1e-12 * L || fabs(p[1] - yz[0]) > 1e-12 * L ||
          fabs(p[2] - yz[1]) > 1e-12 * L)
        return mbs_cfgFail(c, config_setting_get_member(nd, "position"),
                           "%s: flexible.nodes: node \"%s\" is at [%g, %g, %g] in %s, not at "
                           "[%g, %g, %g]",
                           what, name, x, yz[0], yz[1], fb->file, p[0], p[1], p[2]);
    }
    snprintf(fb->node_name[k], MBS_FLEX_NAME, "%s", name);
    fb->spec.node_x[k] = x;
    fb->node_yz[k][0] = yz[0], fb->node_yz[k][1] = yz[1];
  }
  fb->spec.nnodes = fb->nnodes = n;
  return MBS_OK;
}

mbsErr mbs_cfgFlexible(const mbsConfig *c, const mbsCs *b, const mbsCs *fl, const char *what,
                       mbsFlexBody *fb) {
  static const char *const fkeys[] = {"beam",  "file",       "modes", "damping",
                                      "nodes", "stiffening", NULL};
  static const char *const bkeys[] = {"length", "E", "rho", "area",     "Iy",
                                      "Iz",     "G", "J",   "elements", NULL};
  // the body's mass properties follow from the beam: giving them too is an error
  static const char *const rigid[] = {"mass",   "com",       "inertia", "shape", "size",
                                      "radius", "direction", "length",  NULL};
  memset(fb, 0, sizeof *fb);
  mbs_flexBeamDefault(&fb->spec);
  fb->stiffening = 1;
  for (int k = 0; rigid[k]; k++) {
    const mbsCs *s = config_setting_get_member(b, rigid[k]);
    if (s)
      return mbs_cfgFail(c, s,
                         "%s: %s given for a flexible body (its mass properties and extent follow "
                         "from flexible.beam)",
                         what, rigid[k]);
  }
  MBS_CALL(mbs_cfgCheckKeys(c, fl, fkeys));
  const mbsCs *fs = config_setting_get_member(fl, "file");
  if (fs) {
    if (config_setting_get_member(fl, "beam"))
      return mbs_cfgFail(
          c, fs, "%s: flexible: beam and file both given (a body has one modal source)", what);
    mbsErr e = mbs_cfgFlexFile(c, fl, fs, what, fb);
    if (e) { // the caller frees nothing on an error
      mbs_flexModalFree(&fb->modal);
      free(fb->file), fb->file = NULL;
    }
    return e;
  }
  const mbsCs *beam;
  MBS_CALL(mbs_cfgGetGroup(c, fl, "beam", &beam));
  if (!beam)
    return mbs_cfgFail(c, fl,
                       "%s: flexible: missing beam = { length; E; rho; area; Iy; Iz; ... } or "
                       "file = \"BODY.h5\" (the modal source)",
                       what);
  MBS_CALL(mbs_cfgCheckKeys(c, beam, bkeys));
  mbsReal *dst[] = {&fb->spec.length, &fb->spec.E,  &fb->spec.rho, &fb->spec.area,
                    &fb->spec.Iy,     &fb->spec.Iz, &fb->spec.G,   &fb->spec.J};
  for (int k = 0; k < 8; k++) {
    if (k < 6 && !config_setting_get_member(beam, bkeys[k]))
      return mbs_cfgFail(c, beam, "%s: flexible.beam: missing %s", what, bkeys[k]);
    MBS_CALL(mbs_cfgGetReal(c, beam, bkeys[k], dst[k]));
  }
  MBS_CALL(mbs_cfgGetInt(c, beam, "elements", 1, MBS_FLEX_MAX_ELEMENTS, &fb->spec.elements));
  MBS_CALL(mbs_cfgGetInt(c, fl, "modes", 0, INT_MAX, &fb->spec.modes));
  MBS_CALL(mbs_cfgFlexDamping(c, fl, what, fb));
  // the beam's properties before the nodes (a node is checked against the length)
  const mbsReal pos[] = {fb->spec.length, fb->spec.E,  fb->spec.rho,
                         fb->spec.area,   fb->spec.Iy, fb->spec.Iz};
  for (int k = 0; k < 6; k++)
    if (!(pos[k] > 0 && isfinite(pos[k])))
      return mbs_cfgFail(c, config_setting_get_member(beam, bkeys[k]),
                         "%s: flexible.beam.%s must be positive and finite (got %g)", what,
                         bkeys[k], pos[k]);
  MBS_CALL(mbs_cfgFlexNodes(c, fl, what, fb));
  mbsErr e = mbs_flexBeamReduce(&fb->spec, &fb->modal);
  if (!e) mbs_flexRigidEquivalent(&fb->spec, &fb->rigid_mass, fb->rigid_com, fb->rigid_inertia);
  if (e == MBS_ERR_INPUT) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", mbs_errMsg());
    return mbs_cfgFail(c, mbs_flexBlame(fl, beam, msg), "%s: %s", what, msg);
  }
  if (e == MBS_ERR_NUMERIC) { // valid numbers, a degenerate beam (e.g. length 1e-200 m): input
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", mbs_errMsg());
    return mbs_cfgFail(c, beam ? beam : fl,
                       "%s: %s (a degenerate beam: its length, E, rho, area, Iy and Iz give "
                       "matrices that cannot be factored in double precision)",
                       what, msg);
  }
  return e;
}

int mbs_configHasFlexible(const mbsConfig *cfg) {
  const config_t *tree = (const config_t *)cfg->priv;
  const mbsCs *model = config_setting_get_member(config_root_setting(tree), "model");
  const mbsCs *bodies = model ? config_setting_get_member(model, "bodies") : NULL;
  if (!bodies || !mbs_cfgIsList(bodies)) return 0;
  for (int k = 0; k < config_setting_length(bodies); k++) {
    const mbsCs *b = config_setting_get_elem(bodies, (unsigned)k);
    if (b && config_setting_type(b) == CONFIG_TYPE_GROUP &&
        config_setting_get_member(b, "flexible"))
      return 1;
  }
  return 0;
}
