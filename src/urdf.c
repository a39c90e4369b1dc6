/// \file urdf.c
/// URDF input (include/mbspar/mbs_urdf.h, docs/urdf.md): libxml2 reads the text, the robot is
/// kept as links and joints with their line numbers; urdf_build.c merges fixed-joint links and
/// converts it into mbspar bodies.
#define _POSIX_C_SOURCE 200809L
#include "mbspar/mbs_urdf.h"
#include <math.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "spatial.h"
#include "urdf_internal.h"

#ifdef MBS_HAVE_URDF
#include <libxml/parser.h>
#include <libxml/tree.h>

// limit of the input: a URDF is a few kB to a few MB (a 100,000-link chain: 27 MB); the depth
// cap is urdf_xml.c's
#define MBS_URDF_MAX_BYTES (256 << 20)

const char *const mbs_urdf_types[] = {"revolute", "continuous", "prismatic", "fixed", "floating"};

// ---------------------------------------------------------------- helpers

mbsErr mbs_urdfFail(const mbsUrdf *u, int line, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return mbs_errSet(MBS_ERR_INPUT, "%s:%d: %s", u->file, line, msg);
}

static char *mbs_urdfStrdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *c = malloc(n);
  if (c) memcpy(c, s, n);
  return c;
}

// a name of a link or joint, kept with the robot's others in blocks of 64 kB (a copy of its own
// took 32 B for up to 24 characters; issue 35 item 4); freed with the robot
static char *mbs_urdfName(mbsUrdf *u, const char *s) {
  size_t n = strlen(s) + 1;
  if (n > u->nleft) {
    size_t sz = n > ((size_t)64 << 10) ? n : ((size_t)64 << 10);
    if (u->nnblk == u->capnblk) {
      int cap = u->capnblk ? 2 * u->capnblk : 16;
      char **b = realloc(u->nblk, sizeof *b * (size_t)cap);
      if (!b) return NULL;
      u->nblk = b, u->capnblk = cap;
    }
    char *b = malloc(sz);
    if (!b) return NULL;
    u->nblk[u->nnblk++] = b, u->nat = b, u->nleft = sz;
  }
  char *c = u->nat;
  memcpy(c, s, n);
  u->nat += n, u->nleft -= n;
  return c;
}

// the line of element \p n: recorded when the parser opened it (exact past line 65535, where
// libxml2's own node line stops), else libxml2's
static int mbs_urdfLine(const xmlNode *n) {
  if (n->_private) return (int)(intptr_t)n->_private;
  return (int)xmlGetLineNo(n);
}

static int mbs_urdfIs(const xmlNode *n, const char *name) {
  return n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}

// attribute \p name of \p n as a string (NULL if absent); free with xmlFree
static char *mbs_urdfAttr(const xmlNode *n, const char *name) {
  return (char *)xmlGetProp((xmlNode *)n, (const xmlChar *)name);
}

// \p count numbers of attribute \p name (absent: \p def stays, *given = 0)
static mbsErr mbs_urdfNumbers(const mbsUrdf *u, const xmlNode *n, const char *name, int count,
                              double *v, int *given) {
  char *a = mbs_urdfAttr(n, name);
  if (given) *given = a != NULL;
  if (!a) return MBS_OK;
  const char *p = a;
  int k = 0;
  mbsErr e = MBS_OK;
  for (; k < count; k++) {
    char *end;
    double x = strtod(p, &end);
    if (end == p || !isfinite(x)) break;
    v[k] = x, p = end;
  }
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
  if (k < count || *p)
    e = mbs_urdfFail(u, mbs_urdfLine(n), "<%s %s=\"%s\">: expected %d number%s", n->name, name, a,
                     count, count > 1 ? "s" : "");
  xmlFree(a);
  return e;
}

static mbsErr mbs_urdfNumber(const mbsUrdf *u, const xmlNode *n, const char *name, double *v,
                             int required) {
  int given = 0;
  MBS_CALL(mbs_urdfNumbers(u, n, name, 1, v, &given));
  if (!given && required)
    return mbs_urdfFail(u, mbs_urdfLine(n), "<%s> needs %s=\"...\"", n->name, name);
  return MBS_OK;
}

static const xmlNode *mbs_urdfChild(const xmlNode *n, const char *name) {
  for (const xmlNode *c = n->children; c; c = c->next)
    if (mbs_urdfIs(c, name)) return c;
  return NULL;
}

// <origin xyz="..." rpy="..."/> of \p n (zeros when absent)
static mbsErr mbs_urdfOrigin(const mbsUrdf *u, const xmlNode *n, double *xyz, double *rpy) {
  const xmlNode *o = mbs_urdfChild(n, "origin");
  for (int k = 0; k < 3; k++) xyz[k] = rpy[k] = 0;
  if (!o) return MBS_OK;
  MBS_CALL(mbs_urdfNumbers(u, o, "xyz", 3, xyz, NULL));
  return mbs_urdfNumbers(u, o, "rpy", 3, rpy, NULL);
}

static unsigned mbs_urdfHash(const char *s) {
  unsigned h = 2166136261u; // FNV-1a
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) h = (h ^ *p) * 16777619u;
  return h;
}

static mbsErr mbs_urdfIndexCreate(mbsUrdfIndex *x, int n) {
  unsigned cap = 16;
  while (cap < 2u * (unsigned)n && cap < (1u << 30)) cap *= 2;
  x->slot = malloc(sizeof(int) * cap);
  MBS_CHECK(x->slot, MBS_ERR_NOMEM, "out of memory (URDF)");
  for (unsigned k = 0; k < cap; k++) x->slot[k] = -1;
  x->mask = cap - 1;
  return MBS_OK;
}

// the slot of \p name in \p x: its index there, or an empty slot (-1) where it would go
static int *mbs_urdfIndexSlot(const mbsUrdfIndex *x, char *const *names, size_t stride,
                              const char *name) {
  unsigned k = mbs_urdfHash(name) & x->mask;
  while (x->slot[k] >= 0 &&
         strcmp(*(char *const *)((const char *)names + stride * (size_t)x->slot[k]), name) != 0)
    k = (k + 1) & x->mask;
  return &x->slot[k];
}

static int mbs_urdfFindLink(const mbsUrdf *u, const char *name) {
  return *mbs_urdfIndexSlot(&u->link_index, &u->link[0].name, sizeof *u->link, name);
}

// a link's or joint's name: the name rule of every input (mbs_nameProblem)
static mbsErr mbs_urdfCheckName(const mbsUrdf *u, int line, const char *what, const char *name) {
  const char *why = mbs_nameProblem(name);
  if (why)
    return mbs_urdfFail(u, line, "%s name \"%s\" contains %s (names become CSV column names)", what,
                        name, why);
  return MBS_OK;
}

// ---------------------------------------------------------------- parsing

static mbsErr mbs_urdfLink(mbsUrdf *u, const xmlNode *n) {
  char *name = mbs_urdfAttr(n, "name");
  if (!name || !name[0]) {
    xmlFree(name);
    return mbs_urdfFail(u, mbs_urdfLine(n), "<link> needs a name");
  }
  mbsUrdfLink *l = &u->link[u->nlink];
  memset(l, 0, sizeof *l);
  l->name = mbs_urdfName(u, name);
  xmlFree(name);
  MBS_CHECK(l->name, MBS_ERR_NOMEM, "out of memory (URDF)");
  u->nlink++;
  l->line = mbs_urdfLine(n), l->parent_joint = -1;
  MBS_CALL(mbs_urdfCheckName(u, l->line, "link", l->name));
  int *slot = mbs_urdfIndexSlot(&u->link_index, &u->link[0].name, sizeof *u->link, l->name);
  if (*slot >= 0)
    return mbs_urdfFail(u, l->line, "duplicate link name \"%s\" (first on line %d)", l->name,
                        u->link[*slot].line);
  *slot = (int)(l - u->link);
  for (const xmlNode *c = n->children; c; c = c->next) {
    if (mbs_urdfIs(c, "visual")) u->n_visual++;
    if (mbs_urdfIs(c, "collision")) u->n_collision++;
  }
  const xmlNode *in = mbs_urdfChild(n, "inertial");
  if (!in) return MBS_OK;
  l->iline = mbs_urdfLine(in);
  MBS_CALL(mbs_urdfOrigin(u, in, l->com, l->rpy));
  const xmlNode *mass = mbs_urdfChild(in, "mass"), *I = mbs_urdfChild(in, "inertia");
  if (!mass) return mbs_urdfFail(u, l->iline, "link \"%s\": <inertial> without <mass>", l->name);
  MBS_CALL(mbs_urdfNumber(u, mass, "value", &l->mass, 1));
  if (l->mass < 0)
    return mbs_urdfFail(u, mbs_urdfLine(mass), "link \"%s\": negative mass %g", l->name, l->mass);
  if (!I && l->mass > 0)
    return mbs_urdfFail(u, l->iline, "link \"%s\": <inertial> without <inertia>", l->name);
  static const char *const comp[6] = {"ixx", "iyy", "izz", "ixy", "ixz", "iyz"};
  for (int k = 0; I && k < 6; k++) MBS_CALL(mbs_urdfNumber(u, I, comp[k], &l->I[k], 1));
  l->massive = l->mass > 0;
  return MBS_OK;
}

static mbsErr mbs_urdfJoint(mbsUrdf *u, const xmlNode *n) {
  mbsUrdfJoint *j = &u->joint[u->njoint++];
  memset(j, 0, sizeof *j);
  double *xyz = MBS_URDF_JXYZ(u, u->njoint - 1), *rpy = MBS_URDF_JRPY(u, u->njoint - 1),
         *axis = MBS_URDF_JAXIS(u, u->njoint - 1);
  memset(xyz, 0, 9 * sizeof *xyz);
  j->line = mbs_urdfLine(n), j->parent = j->child = -1, axis[0] = 1; // URDF's default axis
  char *name = mbs_urdfAttr(n, "name"), *type = mbs_urdfAttr(n, "type");
  j->name = mbs_urdfName(u, name ? name : "");
  xmlFree(name);
  MBS_CHECK(j->name, MBS_ERR_NOMEM, "out of memory (URDF)");
  if (!j->name[0]) {
    xmlFree(type);
    return mbs_urdfFail(u, j->line, "<joint> needs a name");
  }
  mbsErr e = mbs_urdfCheckName(u, j->line, "joint", j->name);
  int *slot =
      e ? NULL : mbs_urdfIndexSlot(&u->joint_index, &u->joint[0].name, sizeof *u->joint, j->name);
  if (slot && *slot >= 0)
    e = mbs_urdfFail(u, j->line, "duplicate joint name \"%s\" (first on line %d)", j->name,
                     u->joint[*slot].line);
  if (e) {
    xmlFree(type);
    return e;
  }
  *slot = (int)(j - u->joint);
  j->type = -1;
  for (int t = 0; type && t < 5; t++)
    if (!strcmp(type, mbs_urdf_types[t])) j->type = t;
  if (j->type < 0) {
    mbsErr e = type ? mbs_urdfFail(u, j->line,
                                   "joint \"%s\": type \"%s\" is not supported (revolute, "
                                   "continuous, prismatic, fixed, floating)",
                                   j->name, type)
                    : mbs_urdfFail(u, j->line, "joint \"%s\" needs a type", j->name);
    xmlFree(type);
    return e;
  }
  xmlFree(type);
  // parent and child links (defined anywhere in the file: resolved after all links are read)
  MBS_CALL(mbs_urdfOrigin(u, n, xyz, rpy));
  const xmlNode *ax = mbs_urdfChild(n, "axis");
  if (ax) MBS_CALL(mbs_urdfNumbers(u, ax, "xyz", 3, axis, NULL));
  double na = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
  if (j->type != MBS_URDF_FIXED && j->type != MBS_URDF_FLOATING && !(na > 0))
    return mbs_urdfFail(u, ax ? mbs_urdfLine(ax) : j->line, "joint \"%s\": axis has zero length",
                        j->name);
  const xmlNode *lim = mbs_urdfChild(n, "limit");
  if (lim) {
    int g[4] = {0, 0, 0, 0};
    MBS_CALL(mbs_urdfNumbers(u, lim, "lower", 1, &j->lower, &g[0]));
    MBS_CALL(mbs_urdfNumbers(u, lim, "upper", 1, &j->upper, &g[1]));
    MBS_CALL(mbs_urdfNumbers(u, lim, "effort", 1, &j->effort, &g[2]));
    MBS_CALL(mbs_urdfNumbers(u, lim, "velocity", 1, &j->velocity, &g[3]));
    j->has_limit = (g[0] || g[1]) && j->type != MBS_URDF_CONTINUOUS;
    u->n_limit += j->has_limit, u->n_effort += g[2], u->n_velocity += g[3];
  }
  const xmlNode *dyn = mbs_urdfChild(n, "dynamics");
  if (dyn) {
    MBS_CALL(mbs_urdfNumber(u, dyn, "damping", &j->damping, 0));
    MBS_CALL(mbs_urdfNumber(u, dyn, "friction", &j->friction, 0));
    if (j->damping < 0)
      return mbs_urdfFail(u, mbs_urdfLine(dyn), "joint \"%s\": negative damping", j->name);
    u->n_friction += j->friction != 0;
  }
  u->n_mimic += mbs_urdfChild(n, "mimic") != NULL;
  u->n_safety += mbs_urdfChild(n, "safety_controller") != NULL;
  u->n_calib += mbs_urdfChild(n, "calibration") != NULL;
  return MBS_OK;
}

// a joint's <parent link=.../> or <child link=.../> whose link was not read before the joint,
// kept from the parse until the links are all known (mbs_urdfTopology): the joint, the side (0
// parent, 1 child), the link's name (NULL: absent) and the element's line (0: none). The sides
// whose link was read already go straight into the joint (issue 35 item 4: no per-joint record)
typedef struct {
  int joint, side, line;
  char *link;
} mbsUrdfSides;

// parent and child of every joint; one root; every link reached once (\p robot_line: the line of
// <robot>)
static mbsErr mbs_urdfTopology(mbsUrdf *u, const mbsUrdfSides *sides, int nside, int robot_line) {
  for (int k = 0, at = 0; k < u->njoint; k++) {
    mbsUrdfJoint *j = &u->joint[k];
    for (int side = 0; side < 2; side++) {
      int id = side ? j->child : j->parent; // read before the joint, else -1 and a record
      if (id >= 0) continue;
      MBS_CHECK(at < nside && sides[at].joint == k && sides[at].side == side, MBS_ERR_INTERNAL,
                "URDF: joint %d lost its %s link", k, side ? "child" : "parent");
      const char *ln = sides[at].link;
      int cl = sides[at++].line;
      id = ln ? mbs_urdfFindLink(u, ln) : -1;
      mbsErr e = MBS_OK;
      if (!ln)
        e = mbs_urdfFail(u, cl ? cl : j->line, "joint \"%s\" needs <%s link=\"...\"/>", j->name,
                         side ? "child" : "parent");
      else if (id < 0)
        e = mbs_urdfFail(u, cl, "joint \"%s\": unknown %s link \"%s\"", j->name,
                         side ? "child" : "parent", ln);
      MBS_CALL(e);
      if (side)
        j->child = id;
      else
        j->parent = id;
    }
    mbsUrdfLink *ch = &u->link[j->child], *pa = &u->link[j->parent];
    if (ch->parent_joint >= 0)
      return mbs_urdfFail(u, j->line, "link \"%s\" is the child of two joints (\"%s\", \"%s\")",
                          ch->name, u->joint[ch->parent_joint].name, j->name);
    ch->parent_joint = (int)(j - u->joint);
    if (pa->nchild == pa->capchild) {
      int cap = pa->capchild ? 2 * pa->capchild : 4;
      int *c = realloc(pa->child, sizeof(int) * (size_t)cap);
      MBS_CHECK(c, MBS_ERR_NOMEM, "out of memory (URDF)");
      pa->child = c, pa->capchild = cap;
    }
    pa->child[pa->nchild++] = ch->parent_joint;
  }
  u->root = -1;
  for (int i = 0; i < u->nlink; i++) {
    if (u->link[i].parent_joint >= 0) continue;
    if (u->root >= 0)
      return mbs_urdfFail(u, u->link[i].line,
                          "links \"%s\" and \"%s\" both have no parent: a URDF robot is one tree "
                          "with one root link",
                          u->link[u->root].name, u->link[i].name);
    u->root = i;
  }
  if (u->root < 0) return mbs_urdfFail(u, robot_line, "no root link: the joints form a loop");
  // every link must hang from the root (a loop elsewhere leaves links unreached)
  int *stack = malloc(sizeof(int) * (size_t)u->nlink), top = 0, seen = 0;
  MBS_CHECK(stack, MBS_ERR_NOMEM, "out of memory (URDF)");
  stack[top++] = u->root;
  while (top > 0) {
    const mbsUrdfLink *l = &u->link[stack[--top]];
    seen++;
    for (int c = 0; c < l->nchild && top < u->nlink; c++)
      stack[top++] = u->joint[l->child[c]].child;
  }
  free(stack);
  if (seen != u->nlink)
    return mbs_urdfFail(u, robot_line,
                        "the joints do not form a tree from the root link "
                        "\"%s\" (a loop)",
                        u->link[u->root].name);
  // sizes; q0 / qd0 follow the order of the joints in the file (docs/urdf.md), not the
  // depth-first order of the bodies
  for (int i = 0; i < u->njoint; i++) {
    int t = u->joint[i].type;
    u->joint[i].qa = u->nq, u->joint[i].va = u->nv;
    u->nq += t == MBS_URDF_FLOATING ? 7 : t == MBS_URDF_FIXED ? 0 : 1;
    u->nv += t == MBS_URDF_FLOATING ? 6 : t == MBS_URDF_FIXED ? 0 : 1;
  }
  return MBS_OK;
}

static void mbs_urdfNote(mbsUrdf *u) {
  char *p = u->note;
  size_t left = sizeof u->note;
  const struct {
    int n;
    const char *what;
  } items[] = {{u->n_limit, "joint limits (read and reported, not enforced)"},
               {u->n_effort, "effort limits (reported)"},
               {u->n_velocity, "velocity limits (reported)"},
               {u->n_friction, "joint friction"},
               {u->n_mimic, "mimic joints (they move independently)"},
               {u->n_safety, "safety controllers"},
               {u->n_calib, "calibration"},
               {u->n_visual, "visual geometry"},
               {u->n_collision, "collision geometry (no contacts)"},
               {u->n_material, "materials"},
               {u->n_transmission, "transmissions"},
               {u->n_gazebo, "gazebo extensions"},
               {u->n_other, "other elements"}};
  p[0] = 0;
  for (size_t k = 0; k < sizeof items / sizeof items[0]; k++) {
    if (!items[k].n) continue;
    int w = snprintf(p, left, "%s%s (%d)", p == u->note ? "" : ", ", items[k].what, items[k].n);
    if (w < 0 || (size_t)w >= left) break;
    p += w, left -= (size_t)w;
  }
}

// the parse in one pass over the document (mbs_urdfXmlRead's visitor): links and joints are read
// as their elements end and their elements freed. The errors mbspar reports are those of reading
// every link first, then every joint, then the topology: the first error of each kind is kept
// (links and joints are read on after the other kind fails), and a syntax error of the XML wins
// over both
typedef struct {
  mbsUrdf *u;
  int capl, capj;      // room in u->link, u->joint
  mbsUrdfSides *sides; // the sides whose link came after the joint (mbs_urdfTopology)
  int nside, capside;
  mbsErr elink, ejoint; // the first error among the links, among the joints
  char mlink[2048], mjoint[2048];
} mbsUrdfRead;

// room for one more entry of an array and its name index (kept at most half full)
static mbsErr mbs_urdfRoom(void **a, int *cap, int n, size_t size, mbsUrdfIndex *x, size_t stride) {
  if (n == *cap) {
    int nc = *cap ? 2 * *cap : 64;
    void *p = realloc(*a, (size_t)nc * size);
    MBS_CHECK(p, MBS_ERR_NOMEM, "out of memory (URDF)");
    *a = p, *cap = nc;
  }
  if (!x || 2u * (unsigned)(n + 1) <= x->mask + 1) return MBS_OK;
  mbsUrdfIndex y;
  MBS_CALL(mbs_urdfIndexCreate(&y, 2 * (n + 1)));
  for (int i = 0; i < n; i++)
    *mbs_urdfIndexSlot(&y, (char *const *)*a, stride,
                       *(char *const *)((const char *)*a + stride * (size_t)i)) = i;
  free(x->slot);
  *x = y;
  return MBS_OK;
}

static void mbs_urdfVisit(void *arg, const xmlNode *n) {
  mbsUrdfRead *r = arg;
  mbsUrdf *u = r->u;
  if (n->type != XML_ELEMENT_NODE || !mbs_urdfIs(n->parent, "robot")) return; // else: not read
  if (mbs_urdfIs(n, "link")) {
    if (r->elink) return;
    mbsErr e = mbs_urdfRoom((void **)&u->link, &r->capl, u->nlink, sizeof *u->link, &u->link_index,
                            sizeof *u->link);
    if (!e) e = mbs_urdfLink(u, n);
    if (e) r->elink = e, snprintf(r->mlink, sizeof r->mlink, "%s", mbs_errMsg());
  } else if (mbs_urdfIs(n, "joint")) {
    if (r->ejoint) return;
    mbsErr e = mbs_urdfRoom((void **)&u->joint, &r->capj, u->njoint, sizeof *u->joint,
                            &u->joint_index, sizeof *u->joint);
    if (!e && r->capj > u->capjgeo) { // the joints' origins and axes, in step
      double *g = realloc(u->jgeo, 9 * sizeof(double) * (size_t)r->capj);
      if (g)
        u->jgeo = g, u->capjgeo = r->capj;
      else
        e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (URDF)");
    }
    int id[2] = {-1, -1};
    for (int side = 0; side < 2 && !e; side++) {
      const xmlNode *c = mbs_urdfChild(n, side ? "child" : "parent");
      char *ln = c ? mbs_urdfAttr(c, "link") : NULL;
      // a link read already (a duplicate link name fails the parse before the topology)
      id[side] = ln && u->nlink > 0 && !r->elink ? mbs_urdfFindLink(u, (const char *)ln) : -1;
      if (id[side] < 0 && r->nside == r->capside) {
        int cap = r->capside ? 2 * r->capside : 16;
        mbsUrdfSides *p = realloc(r->sides, (size_t)cap * sizeof *p);
        if (p)
          r->sides = p, r->capside = cap;
        else
          e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (URDF)");
      }
      if (!e && id[side] < 0) {
        mbsUrdfSides *sd = &r->sides[r->nside++];
        sd->joint = u->njoint, sd->side = side, sd->line = c ? mbs_urdfLine(c) : 0;
        sd->link = ln ? mbs_urdfStrdup(ln) : NULL;
        if (ln && !sd->link) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (URDF)");
      }
      xmlFree(ln);
    }
    if (!e) e = mbs_urdfJoint(u, n);
    if (!e) u->joint[u->njoint - 1].parent = id[0], u->joint[u->njoint - 1].child = id[1];
    if (e) r->ejoint = e, snprintf(r->mjoint, sizeof r->mjoint, "%s", mbs_errMsg());
  } else if (mbs_urdfIs(n, "material")) {
    u->n_material++;
  } else if (mbs_urdfIs(n, "transmission")) {
    u->n_transmission++;
  } else if (mbs_urdfIs(n, "gazebo")) {
    u->n_gazebo++;
  } else if (!mbs_urdfIs(n, "mujoco")) {
    u->n_other++;
  }
}

// the text in memory, handed to libxml2 a piece at a time
typedef struct {
  const char *text;
  size_t len, at;
} mbsUrdfSrc;

static int mbs_urdfMemRead(void *ctx, char *buf, int len) {
  mbsUrdfSrc *src = ctx;
  size_t n = src->len - src->at;
  if (len > 0 && n > (size_t)len) n = (size_t)len;
  if (len <= 0) n = 0;
  memcpy(buf, src->text + src->at, n);
  src->at += n;
  return (int)n;
}

mbsErr mbs_urdfParse(const char *text, size_t len, const char *filename, mbsUrdf **out) {
  mbsUrdfSrc src = {text, len, 0};
  return mbs_urdfParseStream(mbs_urdfMemRead, &src, len, filename, out);
}

mbsErr mbs_urdfParseStream(mbsUrdfReadFn rd, void *rctx, size_t len, const char *filename,
                           mbsUrdf **out) {
  *out = NULL;
  mbsUrdf *u = calloc(1, sizeof *u);
  MBS_CHECK(u, MBS_ERR_NOMEM, "out of memory (URDF)");
  u->file = mbs_urdfStrdup(filename ? filename : "(urdf)");
  if (!u->file) {
    free(u);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (URDF)");
  }
  *out = u;
  if (len > MBS_URDF_MAX_BYTES)
    return mbs_urdfFail(u, 1, "the file has %zu bytes, more than a URDF may have (%d MiB)", len,
                        MBS_URDF_MAX_BYTES >> 20);
  char msg[256];
  int line = 0;
  mbsUrdfRead *r = calloc(1, sizeof *r);
  MBS_CHECK(r, MBS_ERR_NOMEM, "out of memory (URDF)");
  r->u = u;
  mbsErr e = mbs_urdfIndexCreate(&u->link_index, 0);
  if (!e) e = mbs_urdfIndexCreate(&u->joint_index, 0);
  xmlDoc *doc = NULL;
  if (!e) {
    doc = mbs_urdfXmlRead(rd, rctx, u->file, &line, msg, sizeof msg, mbs_urdfVisit, r);
    if (!doc) e = mbs_urdfFail(u, line, "%s", msg);
  }
  xmlNode *robot = doc ? xmlDocGetRootElement(doc) : NULL;
  if (!e && (!robot || !mbs_urdfIs(robot, "robot")))
    e = mbs_urdfFail(u, robot ? mbs_urdfLine(robot) : 1,
                     "not a URDF robot: the root element is "
                     "<%s>, expected <robot>",
                     robot ? (const char *)robot->name : "");
  if (!e && u->nlink == 0 && !r->elink)
    e = mbs_urdfFail(u, mbs_urdfLine(robot), "the robot has no links");
  if (!e && r->elink) e = mbs_errSet(r->elink, "%s", r->mlink);
  if (!e && r->ejoint) e = mbs_errSet(r->ejoint, "%s", r->mjoint);
  if (!e) {
    char *rn = mbs_urdfAttr(robot, "name");
    u->robot = mbs_urdfStrdup(rn ? rn : "");
    xmlFree(rn);
    if (!u->robot) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (URDF)");
  }
  if (!e && !u->joint && !(u->joint = calloc(1, sizeof *u->joint)))
    e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (URDF)");
  if (!e) e = mbs_urdfTopology(u, r->sides, r->nside, mbs_urdfLine(robot));
  if (!e) e = mbs_urdfMerge(u);
  if (!e) mbs_urdfNote(u);
  for (int k = 0; k < r->nside; k++) free(r->sides[k].link);
  // the name indexes served the parse and the topology (~1 MB each for 2^16 links)
  free(u->link_index.slot), free(u->joint_index.slot);
  u->link_index.slot = u->joint_index.slot = NULL, u->link_index.mask = u->joint_index.mask = 0;
  free(r->sides), free(r);
  xmlFreeDoc(doc);
  return e;
}

void mbs_urdfDestroy(mbsUrdf **pu) {
  if (!pu || !*pu) return;
  mbsUrdf *u = *pu;
  for (int i = 0; u->link && i < u->nlink; i++) free(u->link[i].child);
  for (int i = 0; i < u->nnblk; i++) free(u->nblk[i]); // the names
  free(u->nblk), free(u->lname), free(u->mframe);
  free(u->link_index.slot), free(u->joint_index.slot);
  free(u->link), free(u->joint), free(u->jgeo), free(u->file), free(u->robot), free(u);
  *pu = NULL;
}

#else // built without libxml2

mbsErr mbs_urdfParse(const char *text, size_t len, const char *filename, mbsUrdf **u) {
  (void)text, (void)len;
  *u = NULL;
  return mbs_errSet(MBS_ERR_UNSUPPORTED,
                    "%s: URDF input needs a build with libxml2 (Debian libxml2-dev; configure "
                    "with -DMBS_ENABLE_URDF=ON)",
                    filename ? filename : "URDF");
}
mbsErr mbs_urdfParseStream(mbsUrdfReadFn rd, void *ctx, size_t len, const char *filename,
                           mbsUrdf **u) {
  (void)rd, (void)ctx;
  return mbs_urdfParse(NULL, len, filename, u);
}
void mbs_urdfDestroy(mbsUrdf **u) {
  if (u) *u = NULL;
}
#endif
