/// \file config_gen.c
/// The model generators of the config (chain, tree, ...): bodies made from a few numbers.

#define _POSIX_C_SOURCE 200809L
#include "config_private.h"

// ---------------------------------------------------------------- model: generators

typedef struct {
  const mbsCs *g;
  const char *kind; // "chain" or "tree"
  const char *prefix;
  int n, type, nq, nv, parent;
  mbsReal axis[3], axis2[3], origin[3];
  mbsGeom geo;
  // per-joint values: count 0 (default), 1 (broadcast), per (every joint), n*per (each joint)
  mbsReal *val[6];
  int cnt[6];
  mbsTips *tips;
  mbsReal spread; // tree: fan angle between siblings (rad), 0 = none
} mbsGen;

static const char *const mbs_gen_vkeys[6] = {"q0",      "qd0",       "stiffness",
                                             "damping", "springref", "force"};

static void mbs_genFree(mbsGen *gen) {
  for (int k = 0; k < 6; k++) free(gen->val[k]);
}

// read everything a chain and a tree share; n must already be known
static mbsErr mbs_genRead(const mbsConfig *c, mbsModel *m, mbsGen *gen) {
  const mbsCs *g = gen->g;
  char what[64];
  snprintf(what, sizeof what, "%s", gen->kind);
  gen->prefix = strcmp(gen->kind, "chain") == 0 ? "link" : "node";
  MBS_CALL(mbs_cfgGetString(c, g, "name", &gen->prefix));
  if (!gen->prefix[0])
    return mbs_cfgFail(c, config_setting_get_member(g, "name"),
                       "%s: name (the body name prefix) is empty", what);
  MBS_CALL(mbs_cfgCheckName(c, config_setting_get_member(g, "name"), what, gen->prefix));
  MBS_CALL(mbs_cfgParent(c, m, g, what, NULL, &gen->parent));
  const char *type = "revolute";
  MBS_CALL(mbs_cfgGetString(c, g, "joint", &type));
  gen->type = mbs_jntFromName(type);
  if (gen->type < 0)
    return mbs_cfgFail(c, config_setting_get_member(g, "joint"),
                       "%s: unknown joint type \"%s\" (expected %s)", what, type,
                       mbs_jntNameList());
  gen->nq = mbs_jntNq(gen->type);
  gen->nv = mbs_jntNv(gen->type);
  gen->axis[1] = 1; // default: rotation about y, swinging in the x-z plane
  gen->axis2[0] = 1;
  MBS_CALL(mbs_cfgGetVec(c, g, "axis", 3, gen->axis));
  MBS_CALL(mbs_cfgGetVec(c, g, "axis2", 3, gen->axis2));
  MBS_CALL(mbs_cfgGetVec(c, g, "origin", 3, gen->origin));
  // without origin, a generator hung from a body with a tip (a generated body, or an explicit
  // one with a length) starts at that tip; from the ground or a body without one, at the origin
  const mbsReal *tip = mbs_tipGet(gen->tips, gen->parent);
  if (!config_setting_get_member(g, "origin") && tip) memcpy(gen->origin, tip, 3 * sizeof(mbsReal));
  MBS_CALL(mbs_cfgReadGeom(c, g, 1, what, &gen->geo));
  for (int k = 0; k < 6; k++) {
    int per = k == 0 ? gen->nq : gen->nv;
    MBS_CALL(mbs_cfgGetValues(c, g, mbs_gen_vkeys[k], &gen->val[k], &gen->cnt[k]));
    int cnt = gen->cnt[k];
    const mbsCs *s = config_setting_get_member(g, mbs_gen_vkeys[k]);
    if (!cnt) continue;
    if (per == 0)
      return mbs_cfgFail(c, s, "%s: %s given for %s joints, which have no coordinates", what,
                         mbs_gen_vkeys[k], type);
    // a single value broadcasts only where coordinates are plain scalars
    if (cnt == 1 && per > 1 && k == 0 && gen->nq != gen->nv)
      return mbs_cfgFail(c, s, "%s: wrong array length: q0 of a %s joint needs %d values", what,
                         type, per);
    if (cnt != 1 && cnt != per && (long)cnt != (long)gen->n * per) {
      if (per == 1)
        return mbs_cfgFail(c, s,
                           "%s: wrong array length: %s needs 1 (all joints) or %d (one per "
                           "joint) values, got %d",
                           what, mbs_gen_vkeys[k], gen->n, cnt);
      return mbs_cfgFail(c, s,
                         "%s: wrong array length: %s needs 1, %d (per joint) or %ld (all joints) "
                         "values, got %d",
                         what, mbs_gen_vkeys[k], per, (long)gen->n * per, cnt);
    }
  }
  return MBS_OK;
}

// body i of a generator with parent index p: spec filled and added
// quaternion q <- q (x) [cos(a/2), sin(a/2) u] (rotation by a about the unit axis u, child frame)
static void mbs_quatTurn(mbsReal *q, const mbsReal *u, mbsReal a) {
  mbsReal c = cos(0.5 * a), s = sin(0.5 * a), d[4] = {c, s * u[0], s * u[1], s * u[2]}, r[4];
  r[0] = q[0] * d[0] - q[1] * d[1] - q[2] * d[2] - q[3] * d[3];
  r[1] = q[0] * d[1] + q[1] * d[0] + q[2] * d[3] - q[3] * d[2];
  r[2] = q[0] * d[2] - q[1] * d[3] + q[2] * d[0] + q[3] * d[1];
  r[3] = q[0] * d[3] + q[1] * d[2] - q[2] * d[1] + q[3] * d[0];
  memcpy(q, r, sizeof r);
}

// body i of a generator with parent index p: spec filled and added; \p fan: the extra initial
// rotation about the joint axis (tree spread)
static mbsErr mbs_genAdd(const mbsConfig *c, mbsModel *m, const mbsGen *gen, int i, int p, int root,
                         mbsReal fan, int *id) {
  mbsBodySpec sp;
  mbs_bodySpecDefault(&sp);
  char name[320], what[400];
  snprintf(name, sizeof name, "%s%d", gen->prefix, i + 1);
  snprintf(what, sizeof what, "%s body \"%s\"", gen->kind, name);
  sp.name = name;
  sp.parent = p;
  sp.jnttype = gen->type;
  for (int k = 0; k < 3; k++) {
    sp.axis[k] = gen->axis[k];
    sp.axis2[k] = gen->axis2[k];
    sp.origin[k] = root ? gen->origin[k] : gen->geo.length * gen->geo.dir[k];
    sp.com[k] = gen->geo.com[k];
    sp.tip[k] = gen->geo.length * gen->geo.dir[k]; // drawn extent (outputs)
  }
  sp.mass = gen->geo.mass;
  memcpy(sp.inertia, gen->geo.inertia, sizeof sp.inertia);
  mbs_jntDefaultQ0(gen->type, sp.q0);
  mbsReal *dst[6] = {sp.q0, sp.qd0, sp.stiffness, sp.damping, sp.springref, sp.force};
  for (int k = 0; k < 6; k++) {
    int per = k == 0 ? gen->nq : gen->nv, cnt = gen->cnt[k];
    if (!cnt) continue;
    for (int d = 0; d < per; d++)
      dst[k][d] =
          cnt == 1 ? gen->val[k][0] : (cnt == per ? gen->val[k][d] : gen->val[k][i * per + d]);
  }
  // tree spread: the first rotation coordinate turns by fan, quaternions about the axis
  if (fan != 0) {
    mbsReal u[3];
    mbsReal n = sqrt(gen->axis[0] * gen->axis[0] + gen->axis[1] * gen->axis[1] +
                     gen->axis[2] * gen->axis[2]);
    for (int k = 0; k < 3; k++) u[k] = n > 0 ? gen->axis[k] / n : (k == 1);
    if (mbs_jntQuatAdr(gen->type) >= 0) mbs_quatTurn(sp.q0 + mbs_jntQuatAdr(gen->type), u, fan);
    if (mbs_jntScalar(gen->type) && mbs_jntRotates(gen->type)) sp.q0[0] += fan;
  }
  return mbs_cfgAdd(c, m, &sp, gen->g, NULL, &gen->geo, what, id);
}

// every body of a generator (global indices base ..) has the same tip
static mbsErr mbs_genTips(const mbsGen *gen, int base) {
  mbsReal tip[3] = {gen->geo.length * gen->geo.dir[0], gen->geo.length * gen->geo.dir[1],
                    gen->geo.length * gen->geo.dir[2]};
  return mbs_tipSetRange(gen->tips, base, gen->n, tip);
}

static mbsErr mbs_cfgChain(const mbsConfig *c, mbsModel *m, const mbsCs *g, mbsTips *tips) {
  static const char *const keys[] = {
      "n",         "name",      "parent",  "joint",     "axis",  "axis2",   "origin", "length",
      "direction", "mass",      "shape",   "radius",    "size",  "inertia", "com",    "q0",
      "qd0",       "stiffness", "damping", "springref", "force", NULL};
  if (config_setting_type(g) != CONFIG_TYPE_GROUP)
    return mbs_cfgFail(c, g, "chain: wrong type: expected a group { n = ...; ... }, got %s",
                       mbs_cfgTypeName(g));
  MBS_CALL(mbs_cfgCheckKeys(c, g, keys));
  mbsGen gen;
  memset(&gen, 0, sizeof gen);
  gen.g = g;
  gen.kind = "chain";
  gen.tips = tips;
  gen.n = -1;
  MBS_CALL(mbs_cfgGetInt(c, g, "n", 1, MBS_CFG_MAXBODIES, &gen.n));
  if (!config_setting_get_member(g, "n"))
    return mbs_cfgFail(c, g, "chain: missing n (number of links)");
  mbsErr e = mbs_genRead(c, m, &gen);
  int base = m->nbody_g, prev = gen.parent;
  for (int i = 0; i < gen.n && !e;) {
    // subset builds skip the links nobody asked for (a chain link's parent is the previous one)
    int gid = base + i, nxt = mbs_modelNextWanted(m, gid);
    if (nxt > gid) {
      int cnt = nxt - gid < gen.n - i ? nxt - gid : gen.n - i;
      mbs_modelSkipBodies(m, gen.type, cnt, 1, prev, gen.geo.mass);
      i += cnt, prev = base + i - 1;
      continue;
    }
    e = mbs_genAdd(c, m, &gen, i, prev, i == 0, 0, &prev);
    i++;
  }
  // later bodies find these by name through the prefix (after the loop: a link's own name must
  // not look like a duplicate of itself)
  if (!e && m->local) e = mbs_modelAddPrefix(m, gen.prefix, base, gen.n);
  if (!e) e = mbs_genTips(&gen, base);
  mbs_genFree(&gen);
  return e;
}

// parent lists (1-based, 0 = the tree's parent) of the generated shapes: a caterpillar of \p nn
// spine links or a random recursive tree of \p nn bodies in depth-first preorder
static mbsErr mbs_genShape(int caterpillar, int nn, unsigned seed, int **out, int *n) {
  *out = NULL;
  if (caterpillar) {
    int *pl = malloc(sizeof *pl * 2 * (size_t)nn);
    if (!pl) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    for (int i = 0; i < nn; i++) pl[2 * i] = i == 0 ? 0 : 2 * i - 1, pl[2 * i + 1] = 2 * i + 1;
    *out = pl, *n = 2 * nn;
    return MBS_OK;
  }
  int *par = malloc(sizeof(int) * (size_t)nn), *cadr = calloc((size_t)nn + 1, sizeof(int));
  int *clist = malloc(sizeof(int) * (size_t)nn), *num = malloc(sizeof(int) * (size_t)nn);
  int *stack = malloc(sizeof(int) * (size_t)nn), *pl = malloc(sizeof(int) * (size_t)nn);
  mbsErr e = par && cadr && clist && num && stack && pl
                 ? MBS_OK
                 : mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  unsigned long long x = 0x9e3779b97f4a7c15ull ^ seed;
  for (int i = 0; i < nn && !e; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17; // xorshift64
    par[i] = i == 0 ? -1 : (int)((x >> 11) % (unsigned long long)i);
    if (i) cadr[par[i] + 1]++;
  }
  if (!e) {
    for (int i = 0; i < nn; i++) cadr[i + 1] += cadr[i];
    for (int i = 1; i < nn; i++) clist[cadr[par[i]]++] = i; // cadr[p] now ends p's children
    for (int i = nn; i > 0; i--) cadr[i] = cadr[i - 1];
    cadr[0] = 0;
    // preorder: children in increasing index (pushed in reverse)
    int top = 0, cnt = 0;
    stack[top++] = 0;
    while (top > 0) {
      int v = stack[--top];
      num[v] = ++cnt;
      pl[cnt - 1] = v == 0 ? 0 : num[par[v]];
      for (int k = cadr[v + 1] - 1; k >= cadr[v]; k--) stack[top++] = clist[k];
    }
    *out = pl, pl = NULL, *n = nn;
  }
  free(par), free(cadr), free(clist), free(num), free(stack), free(pl);
  return e;
}

static mbsErr mbs_cfgTree(const mbsConfig *c, mbsModel *m, const mbsCs *g, mbsTips *tips) {
  static const char *const keys[] = {
      "branching", "depth",   "parents", "name",        "parent", "joint",     "axis",
      "axis2",     "origin",  "length",  "direction",   "mass",   "shape",     "radius",
      "size",      "inertia", "com",     "q0",          "qd0",    "stiffness", "damping",
      "springref", "force",   "spread",  "caterpillar", "random", "seed",      NULL};
  if (config_setting_type(g) != CONFIG_TYPE_GROUP)
    return mbs_cfgFail(c, g, "tree: wrong type: expected a group { branching = ...; ... }, got %s",
                       mbs_cfgTypeName(g));
  MBS_CALL(mbs_cfgCheckKeys(c, g, keys));
  mbsGen gen;
  memset(&gen, 0, sizeof gen);
  gen.g = g;
  gen.kind = "tree";
  gen.tips = tips;
  const mbsCs *ps = config_setting_get_member(g, "parents");
  const mbsCs *ks = config_setting_get_member(g, "branching"),
              *ds = config_setting_get_member(g, "depth");
  const mbsCs *cs = config_setting_get_member(g, "caterpillar"),
              *rs = config_setting_get_member(g, "random"),
              *ss = config_setting_get_member(g, "seed");
  int k = 0, d = 0;
  int *plist = NULL;
  if ((cs != NULL) + (rs != NULL) + (ps != NULL) + (ks || ds) > 1)
    return mbs_cfgFail(c,
                       cs   ? cs
                       : rs ? rs
                            : ps,
                       "tree: give one of branching and depth, parents, caterpillar or random");
  if (ss && !rs) return mbs_cfgFail(c, ss, "tree: seed needs random");
  if (cs || rs) {
    // generated shapes with a deep component tree (docs/scaling.md): a caterpillar (a spine of N
    // links, a leaf on every link, in preorder: spine1, leaf1, spine2, leaf2, ...) or a random
    // recursive tree of N bodies (body k hangs from a uniformly drawn earlier body), renumbered
    // into depth-first preorder so that every subtree is a contiguous range
    int nn = 0, seed = 1;
    MBS_CALL(mbs_cfgGetInt(c, g, cs ? "caterpillar" : "random", 1,
                           cs ? MBS_CFG_MAXBODIES / 2 : MBS_CFG_MAXBODIES, &nn));
    if (ss) MBS_CALL(mbs_cfgGetInt(c, g, "seed", 0, INT_MAX, &seed));
    MBS_CALL(mbs_genShape(cs != NULL, nn, (unsigned)seed, &plist, &gen.n));
  } else if (ps) {
    if (ks || ds)
      return mbs_cfgFail(c, ps, "tree: give either parents or branching and depth, not both");
    if (!mbs_cfgIsList(ps) || config_setting_length(ps) < 1)
      return mbs_cfgFail(c, ps, "tree.parents: wrong type: expected a non-empty list of integers");
    gen.n = config_setting_length(ps);
    plist = malloc((size_t)gen.n * sizeof *plist);
    if (!plist) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    for (int i = 0; i < gen.n; i++) {
      const mbsCs *e = config_setting_get_elem(ps, (unsigned)i);
      long long x = 0;
      mbsErr ei = mbs_cfgInt(c, e, LLONG_MIN, LLONG_MAX, &x);
      if (ei) {
        free(plist);
        return ei;
      }
      if (x < 0 || x > i) {
        free(plist);
        return mbs_cfgFail(c, e,
                           "tree.parents[%d] = %lld: must be 0 (the tree's parent) or the number "
                           "of an earlier tree body (1..%d)",
                           i, x, i);
      }
      plist[i] = (int)x;
    }
  } else {
    if (!ks || !ds) {
      return mbs_cfgFail(c, g, "tree: missing %s (give branching and depth, or parents)",
                         !ks ? "branching" : "depth");
    }
    MBS_CALL(mbs_cfgGetInt(c, g, "branching", 1, INT_MAX, &k));
    MBS_CALL(mbs_cfgGetInt(c, g, "depth", 1, INT_MAX, &d));
    // n = 1 + k + ... + k^(d-1), capped
    double n = 0, pw = 1;
    for (int l = 0; l < d && n <= MBS_CFG_MAXBODIES; l++, pw *= k) n += pw;
    if (n > MBS_CFG_MAXBODIES)
      return mbs_cfgFail(c, ds, "tree: branching %d and depth %d give more than %d bodies", k, d,
                         MBS_CFG_MAXBODIES);
    gen.n = (int)n;
  }
  mbsErr e = mbs_genRead(c, m, &gen);
  if (!e) e = mbs_cfgGetReal(c, g, "spread", &gen.spread);
  if (!e && gen.spread != 0 && !mbs_jntRotates(gen.type))
    e = mbs_cfgFail(c, config_setting_get_member(g, "spread"),
                    "tree: spread needs a rotating joint (revolute, cylindrical, universal, "
                    "spherical or free), not %s",
                    mbs_jntName(gen.type));
  if (!e && plist) {
    // explicit or generated parent list: tree body i+1 hangs from tree body plist[i] (0 = the
    // tree's parent)
    int *ids = malloc((size_t)gen.n * sizeof *ids), base = m->nbody_g;
    if (!ids) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    // sibling rank and count of every tree body (the spread fans siblings out)
    int *nsib = calloc((size_t)gen.n + 1, sizeof *nsib),
        *rank = malloc(sizeof *rank * (size_t)gen.n);
    if (!e && (!nsib || !rank)) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    for (int i = 0; i < gen.n && !e; i++) rank[i] = nsib[plist[i]]++;
    for (int i = 0; i < gen.n && !e; i++) {
      int root = plist[i] == 0;
      mbsReal fan = gen.spread * (rank[i] - 0.5 * (nsib[plist[i]] - 1));
      e = mbs_genAdd(c, m, &gen, i, root ? gen.parent : ids[plist[i] - 1], root, fan, &ids[i]);
    }
    free(nsib), free(rank);
    free(ids);
    if (!e && m->local) e = mbs_modelAddPrefix(m, gen.prefix, base, gen.n);
    if (!e) e = mbs_genTips(&gen, base);
  } else if (!e) {
    // complete k-ary tree in depth-first preorder (subtrees are contiguous); subset builds skip
    // the subtrees that hold no wanted body
    int *path = malloc((size_t)d * sizeof *path), *cnt = malloc((size_t)d * sizeof *cnt);
    long *size = malloc((size_t)d * sizeof *size); // bodies in a subtree rooted at each level
    if (!path || !cnt || !size) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    for (int l = d - 1; l >= 0 && !e; l--) size[l] = 1 + (l + 1 < d ? (long)k * size[l + 1] : 0);
    int i = 0, lvl = 0, base = m->nbody_g;
    if (!e) e = mbs_genAdd(c, m, &gen, i++, gen.parent, 1, 0, &path[0]);
    if (!e) cnt[0] = 0;
    while (!e && lvl >= 0) {
      if (lvl < d - 1 && cnt[lvl] < k) {
        cnt[lvl]++;
        long sz = size[lvl + 1];
        if (!mbs_modelWants(m, base + i, (int)(base + i + sz), path[lvl])) {
          mbs_modelSkipBodies(m, gen.type, (int)sz, 0, path[lvl], gen.geo.mass);
          i += (int)sz;
          continue;
        }
        int id;
        mbsReal fan = gen.spread * (cnt[lvl] - 1 - 0.5 * (k - 1));
        e = mbs_genAdd(c, m, &gen, i++, path[lvl], 0, fan, &id);
        lvl++;
        path[lvl] = id;
        cnt[lvl] = 0;
      } else {
        lvl--;
      }
    }
    free(path);
    free(cnt);
    free(size);
    if (!e && m->local) e = mbs_modelAddPrefix(m, gen.prefix, base, gen.n);
    if (!e) e = mbs_genTips(&gen, base);
  }
  free(plist);
  mbs_genFree(&gen);
  return e;
}

// a generator key holds one group or a list of groups
mbsErr mbs_cfgGenerators(const mbsConfig *c, mbsModel *m, const mbsCs *s, int tree, mbsTips *tips) {
  if (mbs_cfgIsList(s)) {
    for (int k = 0; k < config_setting_length(s); k++) {
      const mbsCs *g = config_setting_get_elem(s, (unsigned)k);
      MBS_CALL(tree ? mbs_cfgTree(c, m, g, tips) : mbs_cfgChain(c, m, g, tips));
    }
    return MBS_OK;
  }
  return tree ? mbs_cfgTree(c, m, s, tips) : mbs_cfgChain(c, m, s, tips);
}
