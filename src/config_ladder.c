/// \file config_ladder.c
/// The ladder generator of the config (`model.ladder`, docs/model.md "Ladder generator"): two
/// chains of revolute links joined by rungs, the rungs' spherical cut joints made as loops. O(1)
/// in the config whatever the number of links (issue 35 item 4: the explicit ladder of
/// scripts/gen_ladder.py costs ~3.4 kB of libconfig tree per body on every rank).

#define _POSIX_C_SOURCE 200809L
#include "config_private.h"

// what the bodies and the loops of one ladder share
typedef struct {
  const mbsCs *g;
  int links, every, base;
  mbsReal origin[3], tilt, q0;
  mbsGeom link, rung;
} mbsLadder;

// one revolute body of the ladder: name, parent (global index), joint origin, q0, geometry
static mbsErr mbs_ladAdd(const mbsConfig *c, mbsModel *m, const mbsLadder *L, const char *name,
                         int parent, const mbsReal *origin, mbsReal q0, const mbsGeom *geo,
                         int *id) {
  mbsBodySpec sp;
  mbs_bodySpecDefault(&sp);
  sp.keep_name = name[0] == 'r' && name[1] == 'u'; // subset builds: rungs by name, links by prefix
  char what[160];
  snprintf(what, sizeof what, "ladder body \"%s\"", name);
  sp.name = name;
  sp.parent = parent;
  sp.jnttype = mbs_jntFromName("revolute");
  // the input file's default axes (config_model.c): rotation about y, the ladder in x-z
  sp.axis[0] = 0, sp.axis[1] = 1, sp.axis[2] = 0;
  sp.axis2[0] = 1, sp.axis2[1] = 0, sp.axis2[2] = 0;
  for (int k = 0; k < 3; k++) {
    sp.origin[k] = origin[k];
    sp.com[k] = geo->com[k];
    sp.tip[k] = geo->length * geo->dir[k];
  }
  sp.q0[0] = q0;
  sp.mass = geo->mass;
  memcpy(sp.inertia, geo->inertia, sizeof sp.inertia);
  return mbs_cfgAdd(c, m, &sp, L->g, NULL, geo, what, id);
}

// link or rung = { mass; length; direction; shape; radius; size; inertia; com; }
static mbsErr mbs_ladPart(const mbsConfig *c, const mbsCs *g, const char *key, mbsGeom *geo) {
  static const char *const keys[] = {"mass", "length",  "direction", "shape", "radius",
                                     "size", "inertia", "com",       NULL};
  const mbsCs *p;
  char what[32];
  snprintf(what, sizeof what, "ladder.%s", key);
  MBS_CALL(mbs_cfgGetGroup(c, g, key, &p));
  if (!p) return mbs_cfgFail(c, g, "ladder: missing %s = { mass = ...; length = ...; ... }", key);
  MBS_CALL(mbs_cfgCheckKeys(c, p, keys));
  // the rung runs from the left chain to the right one: no default direction
  if (key[0] == 'r' && !config_setting_get_member(p, "direction"))
    return mbs_cfgFail(c, p,
                       "ladder.rung: missing direction (from the left chain to the right one, "
                       "e.g. [1.0, 0.0, 0.0])");
  return mbs_cfgReadGeom(c, p, 1, what, geo);
}

// an angle key: finite and in [-pi, pi]
static mbsErr mbs_ladAngle(const mbsConfig *c, const mbsCs *g, const char *key, mbsReal *v) {
  MBS_CALL(mbs_cfgGetReal(c, g, key, v));
  if (!(fabs(*v) <= M_PI))
    return mbs_cfgFail(c, config_setting_get_member(g, key),
                       "ladder.%s = %g: must be an angle in [-pi, pi] (rad)", key, *v);
  return MBS_OK;
}

static mbsErr mbs_ladRead(const mbsConfig *c, const mbsCs *g, mbsLadder *L) {
  static const char *const keys[] = {"links", "every", "origin", "tilt",
                                     "q0",    "link",  "rung",   NULL};
  if (config_setting_type(g) != CONFIG_TYPE_GROUP)
    return mbs_cfgFail(c, g, "ladder: wrong type: expected a group { links = ...; ... }, got %s",
                       mbs_cfgTypeName(g));
  MBS_CALL(mbs_cfgCheckKeys(c, g, keys));
  L->g = g;
  L->links = L->every = -1;
  if (!config_setting_get_member(g, "links"))
    return mbs_cfgFail(c, g, "ladder: missing links (the number of links of each chain)");
  if (!config_setting_get_member(g, "every"))
    return mbs_cfgFail(c, g, "ladder: missing every (a rung on every every-th link)");
  MBS_CALL(mbs_cfgGetInt(c, g, "links", 1, MBS_CFG_MAXBODIES / 3, &L->links));
  MBS_CALL(mbs_cfgGetInt(c, g, "every", 1, L->links, &L->every));
  if (L->links / L->every > MBS_MAX_LOOPS)
    return mbs_cfgFail(c, config_setting_get_member(g, "every"),
                       "ladder: links %d and every %d make %d rungs, more than %d loops (the loop "
                       "solver is dense in the closure equations)",
                       L->links, L->every, L->links / L->every, MBS_MAX_LOOPS);
  MBS_CALL(mbs_cfgGetVec(c, g, "origin", 3, L->origin));
  MBS_CALL(mbs_ladAngle(c, g, "tilt", &L->tilt));
  MBS_CALL(mbs_ladAngle(c, g, "q0", &L->q0));
  MBS_CALL(mbs_ladPart(c, g, "link", &L->link));
  return mbs_ladPart(c, g, "rung", &L->rung);
}

// the bodies: the left chain with each rung right after its link (depth first), then the right
// chain, hung at origin + the rung's tip. Each rung's q0 undoes the turns of the left links above
// it, so every rung keeps its direction and every loop is closed at q0 (a parallelogram).
static mbsErr mbs_ladBodies(const mbsConfig *c, mbsModel *m, mbsLadder *L) {
  const mbsGeom *lk = &L->link, *rg = &L->rung;
  mbsReal ltip[3], rtip[3], sum = 0;
  for (int k = 0; k < 3; k++) ltip[k] = lk->length * lk->dir[k], rtip[k] = rg->length * rg->dir[k];
  char name[48];
  L->base = m->nbody_g;
  int prev = -1, id = -1;
  for (int i = 1; i <= L->links; i++) {
    mbsReal q = i == 1 ? L->tilt : L->q0;
    sum += q;
    snprintf(name, sizeof name, "left%d", i);
    MBS_CALL(mbs_ladAdd(c, m, L, name, prev, i == 1 ? L->origin : ltip, q, lk, &id));
    prev = id;
    if (i % L->every) continue;
    snprintf(name, sizeof name, "rung%d", i);
    MBS_CALL(mbs_ladAdd(c, m, L, name, prev, ltip, -sum, rg, &id));
  }
  mbsReal rorg[3];
  for (int k = 0; k < 3; k++) rorg[k] = L->origin[k] + rtip[k];
  int rbase = m->nbody_g;
  prev = -1;
  for (int i = 1; i <= L->links; i++) {
    snprintf(name, sizeof name, "right%d", i);
    MBS_CALL(
        mbs_ladAdd(c, m, L, name, prev, i == 1 ? rorg : ltip, i == 1 ? L->tilt : L->q0, lk, &prev));
  }
  // subset builds find the links by their prefixes (the left chain's skips the rungs, whose
  // names are kept: at most MBS_MAX_LOOPS of them)
  if (m->local) MBS_CALL(mbs_modelAddPrefixEvery(m, "left", L->base, L->links, L->every));
  if (m->local) MBS_CALL(mbs_modelAddPrefix(m, "right", rbase, L->links));
  return MBS_OK;
}

// the cut joints: rung k's tip to right link k's tip, spherical, named R<k>
static mbsErr mbs_ladLoops(const mbsConfig *c, mbsModel *m, const mbsLadder *L) {
  mbsReal org1[3], org2[3], axis[3] = {0, 1, 0};
  for (int k = 0; k < 3; k++)
    org1[k] = L->rung.length * L->rung.dir[k], org2[k] = L->link.length * L->link.dir[k];
  int nr = L->links / L->every;
  for (int r = 1; r <= nr; r++) {
    int i = r * L->every;
    char name[32];
    snprintf(name, sizeof name, "R%d", i);
    mbsLoopSpec sp;
    memset(&sp, 0, sizeof sp);
    sp.name = name;
    sp.type = mbs_jntFromName("spherical");
    sp.body1 = L->base + i + r - 1;             // rung i: i links and r rungs up to it
    sp.body2 = L->base + L->links + nr + i - 1; // right link i
    mbsu_loopFrame(org1, axis, NULL, sp.frame1);
    mbsu_loopFrame(org2, axis, NULL, sp.frame2);
    mbsErr e = mbs_modelAddLoop(m, &sp);
    if (e == MBS_ERR_INPUT)
      return mbs_cfgFail(c, L->g, "ladder: loop \"%s\": %s", name, mbs_errMsg());
    MBS_CALL(e);
  }
  return MBS_OK;
}

mbsErr mbs_cfgLadder(const mbsConfig *c, mbsModel *m, const mbsCs *g, int *base) {
  mbsLadder L;
  memset(&L, 0, sizeof L);
  MBS_CALL(mbs_ladRead(c, g, &L));
  MBS_CALL(mbs_ladBodies(c, m, &L));
  *base = L.base;
  return MBS_OK;
}

mbsErr mbs_cfgLadderLoops(const mbsConfig *c, mbsModel *m, const mbsCs *g, int base) {
  mbsLadder L;
  memset(&L, 0, sizeof L);
  MBS_CALL(mbs_ladRead(c, g, &L));
  L.base = base;
  return mbs_ladLoops(c, m, &L);
}

// bodies and loops of a ladder group counted without building it (0 if malformed: the build
// reports it)
void mbs_cfgLadderCount(const mbsCs *g, long long *nbody, int *nloop) {
  *nbody = 0, *nloop = 0;
  if (config_setting_type(g) != CONFIG_TYPE_GROUP) return;
  long long v[2] = {0, 0};
  const char *const keys[2] = {"links", "every"};
  for (int k = 0; k < 2; k++) {
    const mbsCs *s = config_setting_get_member(g, keys[k]);
    int t = s ? config_setting_type(s) : CONFIG_TYPE_NONE;
    if (t == CONFIG_TYPE_INT) v[k] = config_setting_get_int(s);
    if (t == CONFIG_TYPE_INT64) v[k] = config_setting_get_int64(s);
  }
  if (v[0] < 1 || v[0] > MBS_CFG_MAXBODIES / 3 || v[1] < 1 || v[1] > v[0]) return;
  *nloop = (int)(v[0] / v[1]);
  *nbody = 2 * v[0] + *nloop;
}
