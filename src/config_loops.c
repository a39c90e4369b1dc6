/// \file config_loops.c
/// The config's closed loops (`model.loops`: cut joints between two bodies) and point-to-point
/// spring-dampers (`model.forces`), read into a model that config_model.c is building.

#define _POSIX_C_SOURCE 200809L
#include "config_private.h"

// ---------------------------------------------------------------- model: loops and forces

// a body reference: "ground" or "world" -> -1, else the index of a body of the model
static mbsErr mbs_cfgBodyRef(const mbsConfig *c, const mbsModel *m, const mbsCs *g, const char *key,
                             const char *what, int *b) {
  const char *name = NULL;
  MBS_CALL(mbs_cfgGetString(c, g, key, &name));
  if (!name) return mbs_cfgFail(c, g, "%s: missing %s (a body name or \"ground\")", what, key);
  if (!strcmp(name, "ground") || !strcmp(name, "world")) {
    *b = -1;
    return MBS_OK;
  }
  *b = mbs_modelFindGlobal(m, name);
  if (*b < 0)
    return mbs_cfgFail(c, config_setting_get_member(g, key),
                       "%s: %s: unknown body \"%s\" (a body of the model or \"ground\")", what, key,
                       name);
  return MBS_OK;
}

// frame1 / frame2 = { origin; axis; ref; } of a cut joint of \p type in its body's frame
static mbsErr mbs_cfgLoopFrame(const mbsConfig *c, const mbsCs *g, const char *key,
                               const char *what, int type, mbsReal *F) {
  static const char *const keys[] = {"origin", "axis", "ref", NULL};
  mbsReal org[3] = {0, 0, 0}, axis[3] = {0, 1, 0}, ref[3] = {0, 0, 0};
  const mbsCs *f;
  MBS_CALL(mbs_cfgGetGroup(c, g, key, &f));
  int has_ref = 0;
  if (f) {
    MBS_CALL(mbs_cfgCheckKeys(c, f, keys));
    MBS_CALL(mbs_cfgGetVec(c, f, "origin", 3, org));
    MBS_CALL(mbs_cfgGetVec(c, f, "axis", 3, axis));
    MBS_CALL(mbs_cfgGetVec(c, f, "ref", 3, ref));
    has_ref = config_setting_get_member(f, "ref") != NULL;
  }
  if (!has_ref && !mbs_jntRotates(type))
    return mbs_cfgFail(c, f ? f : g,
                       "%s: %s.ref is required for a %s loop (a direction normal to the axis: it "
                       "locks the rotation about the axis)",
                       what, key, mbs_jntName(type));
  if (!mbsu_loopFrame(org, axis, has_ref ? ref : NULL, F)) {
    const mbsCs *at = f ? config_setting_get_member(f, has_ref ? "ref" : "axis") : g;
    mbsReal l = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    return mbs_cfgFail(c, at ? at : g, "%s: %s.%s", what, key,
                       !(l > 1e-12) ? "axis has zero length" : "ref is parallel to the axis");
  }
  return MBS_OK;
}

// node1 / node2 = "NAME": that side's frame is on a named node of its flexible body (the frame's
// origin measured from the node's undeformed position, as a child's joint.node; docs/flexible.md
// 14); the frame kept in the body's coordinates, for the rigid-equivalent assembly of q0
static mbsErr mbs_cfgLoopNode(const mbsConfig *c, const mbsModel *m, const mbsCs *g,
                              const char *key, const char *what, int body, mbsReal *F, int *node) {
  const char *nname = NULL;
  *node = -1;
  MBS_CALL(mbs_cfgGetString(c, g, key, &nname));
  if (!nname) return MBS_OK;
  const mbsCs *ns = config_setting_get_member(g, key);
  const mbsFlexBody *fb = body >= 0 ? mbs_flexSetFind(m->flex, body) : NULL;
  if (!fb)
    return mbs_cfgFail(c, ns, "%s: %s = \"%s\": body%c is not a flexible body", what, key, nname,
                       key[4]);
  for (int k = 0; k < fb->nnodes; k++)
    if (!strcmp(fb->node_name[k], nname)) {
      *node = k;
      F[0] += fb->spec.node_x[k], F[1] += fb->node_yz[k][0], F[2] += fb->node_yz[k][1];
      return MBS_OK;
    }
  return mbs_cfgFail(c, ns, "%s: %s = \"%s\": the flexible body \"%s\" has no such node", what, key,
                     nname, fb->name);
}

mbsErr mbs_cfgLoops(const mbsConfig *c, mbsModel *m, const mbsCs *list) {
  static const char *const keys[] = {"name",   "type",  "body1", "frame1", "body2",
                                     "frame2", "node1", "node2", NULL};
  for (int k = 0; k < config_setting_length(list); k++) {
    const mbsCs *g = config_setting_get_elem(list, (unsigned)k);
    char what[320], path[64], dname[32];
    mbs_cfgPath(g, path, sizeof path);
    if (config_setting_type(g) != CONFIG_TYPE_GROUP)
      return mbs_cfgFail(c, g,
                         "%s: wrong type: a loop is a group { type = ...; body1 = ...; }, got %s",
                         path, mbs_cfgTypeName(g));
    MBS_CALL(mbs_cfgCheckKeys(c, g, keys));
    mbsLoopSpec sp;
    memset(&sp, 0, sizeof sp);
    snprintf(dname, sizeof dname, "loop%d", k + 1);
    sp.name = dname;
    MBS_CALL(mbs_cfgGetString(c, g, "name", &sp.name));
    MBS_CALL(mbs_cfgCheckName(c, config_setting_get_member(g, "name"), path, sp.name));
    snprintf(what, sizeof what, "loop \"%s\"", sp.name);
    const char *type = NULL;
    MBS_CALL(mbs_cfgGetString(c, g, "type", &type));
    if (!type) return mbs_cfgFail(c, g, "%s: missing type (the cut joint's joint type)", what);
    sp.type = mbs_jntFromName(type);
    if (sp.type < 0 || mbs_jntIsFree(sp.type))
      return mbs_cfgFail(c, config_setting_get_member(g, "type"),
                         "%s: %s joint type \"%s\" (expected revolute, prismatic, cylindrical, "
                         "universal, spherical or fixed)",
                         what, sp.type < 0 ? "unknown" : "a cut joint cannot have", type);
    MBS_CALL(mbs_cfgBodyRef(c, m, g, "body1", what, &sp.body1));
    MBS_CALL(mbs_cfgBodyRef(c, m, g, "body2", what, &sp.body2));
    MBS_CALL(mbs_cfgLoopFrame(c, g, "frame1", what, sp.type, sp.frame1));
    MBS_CALL(mbs_cfgLoopFrame(c, g, "frame2", what, sp.type, sp.frame2));
    int node[2];
    MBS_CALL(mbs_cfgLoopNode(c, m, g, "node1", what, sp.body1, sp.frame1, node));
    MBS_CALL(mbs_cfgLoopNode(c, m, g, "node2", what, sp.body2, sp.frame2, node + 1));
    mbsErr e = mbs_modelAddLoop(m, &sp);
    if (e == MBS_ERR_INPUT) {
      char msg[1024];
      snprintf(msg, sizeof msg, "%s", mbs_errMsg());
      const mbsCs *at = strstr(msg, "name") ? config_setting_get_member(g, "name")
                                            : config_setting_get_member(g, "body2");
      return mbs_cfgFail(c, at ? at : g, "%s: %s", what, msg);
    }
    MBS_CALL(e);
    for (int side = 0; side < 2; side++)
      if (node[side] >= 0) MBS_CALL(mbs_flexSetLoopNode(m->flex, m->nloop - 1, side, node[side]));
  }
  return MBS_OK;
}

mbsErr mbs_cfgForces(const mbsConfig *c, mbsModel *m, const mbsCs *list) {
  static const char *const keys[] = {"name",   "type",      "body1",       "point1",  "body2",
                                     "point2", "stiffness", "rest_length", "damping", NULL};
  static const char *const types[] = {"spring", NULL};
  for (int k = 0; k < config_setting_length(list); k++) {
    const mbsCs *g = config_setting_get_elem(list, (unsigned)k);
    char what[320], path[64], dname[32];
    mbs_cfgPath(g, path, sizeof path);
    if (config_setting_type(g) != CONFIG_TYPE_GROUP)
      return mbs_cfgFail(c, g,
                         "%s: wrong type: a force is a group { type = \"spring\"; body1 = ...; }, "
                         "got %s",
                         path, mbs_cfgTypeName(g));
    MBS_CALL(mbs_cfgCheckKeys(c, g, keys));
    mbsForceSpec sp;
    memset(&sp, 0, sizeof sp);
    snprintf(dname, sizeof dname, "force%d", k + 1);
    sp.name = dname;
    MBS_CALL(mbs_cfgGetString(c, g, "name", &sp.name));
    MBS_CALL(mbs_cfgCheckName(c, config_setting_get_member(g, "name"), path, sp.name));
    snprintf(what, sizeof what, "force \"%s\"", sp.name);
    int type = 0;
    MBS_CALL(mbs_cfgGetEnum(c, g, "type", types, &type));
    MBS_CALL(mbs_cfgBodyRef(c, m, g, "body1", what, &sp.body1));
    MBS_CALL(mbs_cfgBodyRef(c, m, g, "body2", what, &sp.body2));
    MBS_CALL(mbs_cfgGetVec(c, g, "point1", 3, sp.point1));
    MBS_CALL(mbs_cfgGetVec(c, g, "point2", 3, sp.point2));
    MBS_CALL(mbs_cfgGetReal(c, g, "stiffness", &sp.stiffness));
    MBS_CALL(mbs_cfgGetReal(c, g, "rest_length", &sp.rest_length));
    MBS_CALL(mbs_cfgGetReal(c, g, "damping", &sp.damping));
    mbsErr e = mbs_modelAddForce(m, &sp);
    if (e == MBS_ERR_INPUT) {
      char msg[1024];
      snprintf(msg, sizeof msg, "%s", mbs_errMsg());
      static const char *const ks[] = {"stiffness", "rest_length", "damping", "point"};
      const mbsCs *at = NULL;
      for (int i = 0; i < 4 && !at; i++)
        if (strstr(msg, ks[i])) at = config_setting_get_member(g, i < 3 ? ks[i] : "point1");
      if (!at) at = config_setting_get_member(g, "body2");
      return mbs_cfgFail(c, at ? at : g, "%s: %s", what, msg);
    }
    MBS_CALL(e);
  }
  return MBS_OK;
}

// every body of the file into m (full, subset or validation build: see mbs_modelSubset)
