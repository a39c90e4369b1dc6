/// \file urdf.c
/// URDF input (include/mbspar/mbs_urdf.h, docs/urdf.md): libxml2 reads the text, the robot is
/// kept as links and joints with their line numbers, and mbs_urdfAddBodies converts it into
/// mbspar bodies in depth-first order from the root.
#define _POSIX_C_SOURCE 200809L
#include "mbspar/mbs_urdf.h"
#include <math.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "spatial.h"

#ifdef MBS_HAVE_URDF
#include <libxml/parser.h>
#include <libxml/tree.h>

// limits of the input: a URDF is a few kB to a few MB (a 100,000-link chain: 27 MB) and a few
// levels deep (robot, link, inertial, inertia)
#define MBS_URDF_MAX_BYTES (256 << 20)
#define MBS_URDF_MAX_DEPTH 32

enum {
  MBS_URDF_REVOLUTE,
  MBS_URDF_CONTINUOUS,
  MBS_URDF_PRISMATIC,
  MBS_URDF_FIXED,
  MBS_URDF_FLOATING
};
static const char *const mbs_urdf_types[] = {"revolute", "continuous", "prismatic", "fixed",
                                             "floating"};

typedef struct {
  char *name;
  int line;
  int massive;                  // an inertial with mass > 0
  double mass, com[3], rpy[3];  // inertial origin
  double I[6];                  // ixx iyy izz ixy ixz iyz (tensor elements, inertial frame)
  int iline;                    // line of <inertial>
  int parent_joint;             // joint whose child this is, -1: a root
  int *child, nchild, capchild; // joints whose parent this is, in file order
  // merging (mbs_urdfMerge): the link heading the body this link belongs to (itself, -1: the
  // ground), this link's frame in that link's frame (the ground's: the root's), and for the
  // links heading a body the body's mass, centre of mass and inertia about it (own link frame)
  int owner;
  double fR[9], fp[3];
  double bm, bc[3], bI[9];
} mbsUrdfLink;

typedef struct {
  char *name;
  int line, type, parent, child; // links
  int qa, va;                    // first q0 / qd0 entry: file order of the moving joints
  double xyz[3], rpy[3], axis[3];
  int has_limit;
  double lower, upper, effort, velocity;
  double damping, friction;
} mbsUrdfJoint;

// names -> indices: open addressing, at most half full (a linear build, docs/urdf.md)
typedef struct {
  int *slot; // -1: empty
  unsigned mask;
} mbsUrdfIndex;

struct mbsUrdf {
  char *file, *robot;
  int nlink, njoint, root;
  mbsUrdfLink *link;
  mbsUrdfJoint *joint;
  mbsUrdfIndex link_index, joint_index;
  int nq, nv;
  // what mbspar reads but does not model (counts) and the note made of them
  int n_limit, n_effort, n_velocity, n_friction, n_mimic, n_safety, n_calib;
  int n_visual, n_collision, n_transmission, n_gazebo, n_material, n_other;
  char note[1024];
};

// ---------------------------------------------------------------- helpers

static mbsErr mbs_urdfFail(const mbsUrdf *u, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static mbsErr mbs_urdfFail(const mbsUrdf *u, int line, const char *fmt, ...) {
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
  l->name = mbs_urdfStrdup(name);
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
  j->line = mbs_urdfLine(n), j->parent = j->child = -1, j->axis[0] = 1; // URDF's default axis
  char *name = mbs_urdfAttr(n, "name"), *type = mbs_urdfAttr(n, "type");
  j->name = mbs_urdfStrdup(name ? name : "");
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
  MBS_CALL(mbs_urdfOrigin(u, n, j->xyz, j->rpy));
  const xmlNode *ax = mbs_urdfChild(n, "axis");
  if (ax) MBS_CALL(mbs_urdfNumbers(u, ax, "xyz", 3, j->axis, NULL));
  double na = sqrt(j->axis[0] * j->axis[0] + j->axis[1] * j->axis[1] + j->axis[2] * j->axis[2]);
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

// parent and child of every joint; one root; every link reached once
static mbsErr mbs_urdfTopology(mbsUrdf *u, const xmlNode *robot) {
  int k = 0;
  for (const xmlNode *n = robot->children; n; n = n->next) {
    if (!mbs_urdfIs(n, "joint")) continue;
    mbsUrdfJoint *j = &u->joint[k++];
    for (int side = 0; side < 2; side++) {
      const xmlNode *c = mbs_urdfChild(n, side ? "child" : "parent");
      char *ln = c ? mbs_urdfAttr(c, "link") : NULL;
      int id = ln ? mbs_urdfFindLink(u, ln) : -1;
      mbsErr e = MBS_OK;
      if (!ln)
        e = mbs_urdfFail(u, c ? mbs_urdfLine(c) : j->line, "joint \"%s\" needs <%s link=\"...\"/>",
                         j->name, side ? "child" : "parent");
      else if (id < 0)
        e = mbs_urdfFail(u, mbs_urdfLine(c), "joint \"%s\": unknown %s link \"%s\"", j->name,
                         side ? "child" : "parent", ln);
      xmlFree(ln);
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
  if (u->root < 0)
    return mbs_urdfFail(u, mbs_urdfLine(robot), "no root link: the joints form a loop");
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
    return mbs_urdfFail(u, mbs_urdfLine(robot),
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

// ---------------------------------------------------------------- libxml2, hardened

// what the parser's callbacks found first: the error mbspar reports (one line)
typedef struct {
  int line; // 0: nothing yet
  char msg[256];
  startElementNsSAX2Func start; // libxml2's own tree builder
} mbsUrdfXml;

static void mbs_urdfXmlStop(xmlParserCtxt *ctxt, int line, const char *msg) {
  mbsUrdfXml *x = ctxt->_private;
  if (!x->line) {
    x->line = line > 0 ? line : 1;
    snprintf(x->msg, sizeof x->msg, "%s", msg);
  }
  xmlStopParser(ctxt);
}

// libxml2's errors (any level above a warning) come here instead of its multi-line report on
// standard error; the first one is kept (what follows is a consequence of it)
static void mbs_urdfXmlError(void *ctx, xmlError *err) {
  xmlParserCtxt *ctxt = ctx;
  mbsUrdfXml *x = ctxt ? ctxt->_private : NULL;
  if (!x || !err || err->level <= XML_ERR_WARNING || x->line) return;
  char msg[256];
  snprintf(msg, sizeof msg, "XML syntax error: %s", err->message ? err->message : "unreadable");
  msg[strcspn(msg, "\r\n")] = 0; // libxml2 ends its messages with a newline
  x->line = err->line > 0 ? err->line : 1;
  snprintf(x->msg, sizeof x->msg, "%s", msg);
}

// entities are refused where they are declared: nothing is ever expanded (no billion laughs,
// no external files)
static void mbs_urdfXmlEntity(void *ctx, const xmlChar *name, int type, const xmlChar *publicId,
                              const xmlChar *systemId, xmlChar *content) {
  (void)type, (void)publicId, (void)systemId, (void)content;
  xmlParserCtxt *ctxt = ctx;
  char msg[256];
  snprintf(msg, sizeof msg,
           "the document declares the entity \"%.64s\": URDF input takes no DOCTYPE entities",
           (const char *)name);
  mbs_urdfXmlStop(ctxt, ctxt->input ? ctxt->input->line : 0, msg);
}

// every element: its line (exact beyond 65535) and a depth cap
static void mbs_urdfXmlStart(void *ctx, const xmlChar *localname, const xmlChar *prefix,
                             const xmlChar *URI, int nb_namespaces, const xmlChar **namespaces,
                             int nb_attributes, int nb_defaulted, const xmlChar **attributes) {
  xmlParserCtxt *ctxt = ctx;
  mbsUrdfXml *x = ctxt->_private;
  int line = ctxt->input ? ctxt->input->line : 0;
  if (ctxt->nameNr > MBS_URDF_MAX_DEPTH) {
    char msg[128];
    snprintf(msg, sizeof msg, "elements nested deeper than %d levels", MBS_URDF_MAX_DEPTH);
    mbs_urdfXmlStop(ctxt, line, msg);
    return;
  }
  x->start(ctx, localname, prefix, URI, nb_namespaces, namespaces, nb_attributes, nb_defaulted,
           attributes);
  if (ctxt->node && ctxt->node->type == XML_ELEMENT_NODE)
    ctxt->node->_private = (void *)(intptr_t)line;
}

static void mbs_urdfXmlQuiet(void *ctx, const char *fmt, ...) {
  (void)ctx, (void)fmt;
}

// the document of \p text, or NULL with *line, msg set
static xmlDoc *mbs_urdfXmlRead(const char *text, size_t len, const char *file, int *line, char *msg,
                               size_t msglen) {
  mbsUrdfXml x = {0, "", NULL};
  xmlParserCtxt *ctxt = xmlNewParserCtxt();
  if (!ctxt || !ctxt->sax) {
    xmlFreeParserCtxt(ctxt);
    *line = 1;
    snprintf(msg, msglen, "out of memory (URDF)");
    return NULL;
  }
  ctxt->_private = &x;
  x.start = ctxt->sax->startElementNs;
  ctxt->sax->startElementNs = mbs_urdfXmlStart;
  ctxt->sax->entityDecl = mbs_urdfXmlEntity;
  ctxt->sax->serror = mbs_urdfXmlError;
  ctxt->sax->error = ctxt->sax->fatalError = ctxt->sax->warning = NULL;
  ctxt->vctxt.error = ctxt->vctxt.warning = NULL;
  // no network, no DTD loading, no entity substitution (XML_PARSE_NOENT is not given), line
  // numbers beyond 65535
  // anything libxml2 would report without a parser context (it has none to route) is silenced
  xmlGenericErrorFunc generic = xmlGenericError;
  void *generic_ctx = xmlGenericErrorContext;
  xmlSetGenericErrorFunc(NULL, mbs_urdfXmlQuiet);
  xmlDoc *doc =
      xmlCtxtReadMemory(ctxt, text, (int)len, file, NULL, XML_PARSE_NONET | XML_PARSE_BIG_LINES);
  xmlSetGenericErrorFunc(generic_ctx, generic);
  if (x.line || !doc || !ctxt->wellFormed) {
    xmlFreeDoc(doc);
    doc = NULL;
    *line = x.line ? x.line : 1;
    snprintf(msg, msglen, "%s", x.line ? x.msg : "XML syntax error: unreadable");
  }
  xmlFreeParserCtxt(ctxt);
  return doc;
}

static mbsErr mbs_urdfMerge(mbsUrdf *u);

mbsErr mbs_urdfParse(const char *text, size_t len, const char *filename, mbsUrdf **out) {
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
  xmlDoc *doc = mbs_urdfXmlRead(text, len, u->file, &line, msg, sizeof msg);
  if (!doc) return mbs_urdfFail(u, line, "%s", msg);
  mbsErr e = MBS_OK;
  xmlNode *robot = xmlDocGetRootElement(doc);
  if (!robot || !mbs_urdfIs(robot, "robot"))
    e = mbs_urdfFail(u, robot ? mbs_urdfLine(robot) : 1,
                     "not a URDF robot: the root element is "
                     "<%s>, expected <robot>",
                     robot ? (const char *)robot->name : "");
  int nl = 0, nj = 0;
  for (xmlNode *n = robot ? robot->children : NULL; !e && n; n = n->next) {
    nl += mbs_urdfIs(n, "link"), nj += mbs_urdfIs(n, "joint");
    if (n->type != XML_ELEMENT_NODE || mbs_urdfIs(n, "link") || mbs_urdfIs(n, "joint")) continue;
    if (mbs_urdfIs(n, "material"))
      u->n_material++;
    else if (mbs_urdfIs(n, "transmission"))
      u->n_transmission++;
    else if (mbs_urdfIs(n, "gazebo"))
      u->n_gazebo++;
    else if (!mbs_urdfIs(n, "mujoco"))
      u->n_other++;
  }
  if (!e && nl == 0) e = mbs_urdfFail(u, mbs_urdfLine(robot), "the robot has no links");
  if (!e) {
    char *rn = mbs_urdfAttr(robot, "name");
    u->robot = mbs_urdfStrdup(rn ? rn : "");
    xmlFree(rn);
    u->link = calloc((size_t)nl, sizeof *u->link);
    u->joint = calloc((size_t)(nj > 0 ? nj : 1), sizeof *u->joint);
    if (!u->robot || !u->link || !u->joint) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (URDF)");
  }
  if (!e) e = mbs_urdfIndexCreate(&u->link_index, nl);
  if (!e) e = mbs_urdfIndexCreate(&u->joint_index, nj);
  for (xmlNode *n = robot ? robot->children : NULL; !e && n; n = n->next)
    if (mbs_urdfIs(n, "link")) e = mbs_urdfLink(u, n);
  for (xmlNode *n = robot ? robot->children : NULL; !e && n; n = n->next)
    if (mbs_urdfIs(n, "joint")) e = mbs_urdfJoint(u, n);
  if (!e) e = mbs_urdfTopology(u, robot);
  if (!e) e = mbs_urdfMerge(u);
  if (!e) mbs_urdfNote(u);
  xmlFreeDoc(doc);
  return e;
}

// ---------------------------------------------------------------- conversion

// R = Rz(yaw) Ry(pitch) Rx(roll): URDF's fixed-axis roll, pitch, yaw
static void mbs_urdfRpy(const double *rpy, double *R) {
  double cr = cos(rpy[0]), sr = sin(rpy[0]), cp = cos(rpy[1]), sp = sin(rpy[1]);
  double cy = cos(rpy[2]), sy = sin(rpy[2]);
  R[0] = cy * cp, R[1] = cy * sp * sr - sy * cr, R[2] = cy * sp * cr + sy * sr;
  R[3] = sy * cp, R[4] = sy * sp * sr + cy * cr, R[5] = sy * sp * cr - cy * sr;
  R[6] = -sp, R[7] = cp * sr, R[8] = cp * cr;
}

// quaternion [w x y z] (w >= 0) of a rotation matrix
static void mbs_urdfQuat(const double *R, double *q) {
  double tr = R[0] + R[4] + R[8];
  if (tr >= R[0] && tr >= R[4] && tr >= R[8]) {
    double s = 2 * sqrt(1 + tr);
    q[0] = 0.25 * s, q[1] = (R[7] - R[5]) / s, q[2] = (R[2] - R[6]) / s, q[3] = (R[3] - R[1]) / s;
  } else if (R[0] >= R[4] && R[0] >= R[8]) {
    double s = 2 * sqrt(1 + R[0] - R[4] - R[8]);
    q[0] = (R[7] - R[5]) / s, q[1] = 0.25 * s, q[2] = (R[1] + R[3]) / s, q[3] = (R[2] + R[6]) / s;
  } else if (R[4] >= R[8]) {
    double s = 2 * sqrt(1 + R[4] - R[0] - R[8]);
    q[0] = (R[2] - R[6]) / s, q[1] = (R[1] + R[3]) / s, q[2] = 0.25 * s, q[3] = (R[5] + R[7]) / s;
  } else {
    double s = 2 * sqrt(1 + R[8] - R[0] - R[4]);
    q[0] = (R[3] - R[1]) / s, q[1] = (R[2] + R[6]) / s, q[2] = (R[5] + R[7]) / s, q[3] = 0.25 * s;
  }
  double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (q[0] < 0) n = -n;
  for (int k = 0; k < 4; k++) q[k] /= n;
}

// Fixed-joint links merged into the body of their parent, recursively (docs/urdf.md "Merging",
// as MuJoCo's and Pinocchio's URDF readers do): a body starts at the root (unless it is the
// ground), at every moving joint, and at a fixed joint to the ground that carries mass; every
// other link joins its parent's body with the composed fixed transforms, and the body takes the
// combined mass, centre of mass and inertia of its links. A body without mass on a moving joint
// is refused. Linear in the number of links.
static mbsErr mbs_urdfMerge(mbsUrdf *u) {
  int n = u->nlink, *order = malloc(sizeof(int) * (size_t)n),
      *stack = malloc(sizeof(int) * (size_t)n), top = 0, cnt = 0;
  double *wm = calloc((size_t)n, sizeof(double)); // mass welded at and below each link
  mbsErr e = order && stack && wm ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory (URDF)");
  static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  if (!e) stack[top++] = u->root;
  while (!e && top > 0) { // depth-first preorder, children in file order
    const mbsUrdfLink *l = &u->link[stack[--top]];
    order[cnt++] = (int)(l - u->link);
    for (int c = l->nchild - 1; c >= 0 && top < n; c--) stack[top++] = u->joint[l->child[c]].child;
  }
  for (int i = cnt - 1; !e && i >= 0; i--) { // children before parents
    const mbsUrdfLink *l = &u->link[order[i]];
    wm[order[i]] += l->massive ? l->mass : 0;
    if (l->parent_joint >= 0 && u->joint[l->parent_joint].type == MBS_URDF_FIXED)
      wm[u->joint[l->parent_joint].parent] += wm[order[i]];
  }
  for (int i = 0; !e && i < cnt; i++) { // owners and frames, parents before children
    int L = order[i];
    mbsUrdfLink *l = &u->link[L];
    memcpy(l->fR, I3, sizeof I3), memset(l->fp, 0, sizeof l->fp);
    l->bm = 0, memset(l->bc, 0, sizeof l->bc), memset(l->bI, 0, sizeof l->bI);
    if (l->parent_joint < 0) { // the root: the ground when massless or named "world"
      l->owner = l->massive && strcmp(l->name, "world") != 0 ? L : -1;
      continue;
    }
    const mbsUrdfJoint *j = &u->joint[l->parent_joint];
    const mbsUrdfLink *p = &u->link[j->parent];
    if (j->type != MBS_URDF_FIXED || (p->owner < 0 && wm[L] > 0)) {
      l->owner = L;
      continue;
    }
    double Ro[9], t[3];
    l->owner = p->owner;
    mbs_urdfRpy(j->rpy, Ro);
    mbsu_mulMat3(p->fR, Ro, l->fR);
    mbsu_mulMat3Vec(p->fR, j->xyz, t);
    for (int k = 0; k < 3; k++) l->fp[k] = p->fp[k] + t[k];
  }
  // the bodies' inertials: mass and centre of mass first, then the inertia about that centre
  for (int pass = 0; !e && pass < 2; pass++) {
    for (int i = 0; i < cnt; i++) {
      const mbsUrdfLink *l = &u->link[order[i]];
      if (!l->massive || l->owner < 0) continue;
      mbsUrdfLink *o = &u->link[l->owner];
      double c[3];
      mbsu_mulMat3Vec(l->fR, l->com, c);
      for (int k = 0; k < 3; k++) c[k] += l->fp[k];
      if (pass == 0) {
        o->bm += l->mass;
        for (int k = 0; k < 3; k++) o->bc[k] += l->mass * c[k];
        continue;
      }
      // inertia turned from the inertial frame (fR Rin) into the owner's link frame, moved to
      // the body's centre of mass (parallel axes)
      double Rin[9], M[9], I[9], T[9], d[3];
      mbs_urdfRpy(l->rpy, Rin);
      mbsu_mulMat3(l->fR, Rin, M);
      I[0] = l->I[0], I[4] = l->I[1], I[8] = l->I[2];
      I[1] = I[3] = l->I[3], I[2] = I[6] = l->I[4], I[5] = I[7] = l->I[5];
      mbsu_mulMat3(M, I, T);
      for (int k = 0; k < 3; k++) d[k] = c[k] - o->bc[k];
      double dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
      for (int r = 0; r < 3; r++)
        for (int q = 0; q < 3; q++)
          o->bI[3 * r + q] += T[3 * r] * M[3 * q] + T[3 * r + 1] * M[3 * q + 1] +
                              T[3 * r + 2] * M[3 * q + 2] +
                              l->mass * ((r == q ? dd : 0) - d[r] * d[q]);
    }
    for (int i = 0; pass == 0 && i < cnt; i++) { // sum m c / sum m
      mbsUrdfLink *l = &u->link[order[i]];
      if (l->owner == order[i] && l->bm > 0)
        for (int k = 0; k < 3; k++) l->bc[k] /= l->bm;
    }
  }
  for (int i = 0; !e && i < cnt; i++) {
    const mbsUrdfLink *l = &u->link[order[i]];
    if (l->owner != order[i] || l->bm > 0) continue;
    const mbsUrdfJoint *j = &u->joint[l->parent_joint]; // the root and welded links have mass
    e = mbs_urdfFail(u, l->line,
                     "link \"%s\" has no mass but joint \"%s\" (%s) moves it (and no link with "
                     "mass is welded to it): mbspar needs a positive mass for every moving body",
                     l->name, j->name, mbs_urdf_types[j->type]);
  }
  free(order), free(stack), free(wm);
  return e;
}

void mbs_urdfSizes(const mbsUrdf *u, int *nq, int *nv) {
  if (nq) *nq = u->nq;
  if (nv) *nv = u->nv;
}

// add link \p l as a body: joint \p jt to body \p parent at \p org with axis \p ax (body frame),
// the link frame at rotation RL in the body frame
static mbsErr mbs_urdfBody(const mbsUrdf *u, const mbsUrdfLink *l, const mbsUrdfJoint *j,
                           mbsModel *m, int parent, int jt, const double *org, const double *ax,
                           const double *RL, const mbsReal *q0, const mbsReal *qd0, int *id) {
  mbsBodySpec sp;
  mbs_bodySpecDefault(&sp);
  sp.name = l->name, sp.parent = parent, sp.jnttype = jt, sp.mass = l->bm;
  sp.any_name = 1; // a link may be called "ground" or "world" (mbspar's names for its ground)
  memcpy(sp.origin, org, sizeof sp.origin);
  if (ax) memcpy(sp.axis, ax, sizeof sp.axis);
  mbs_urdfQuat(RL, sp.framequat);
  // the body's inertial (its links merged, mbs_urdfMerge) turned from the link frame into the
  // body frame: com RL c, inertia RL I RL^T
  double T[9], Ib[9];
  mbsu_mulMat3Vec(RL, l->bc, sp.com);
  mbsu_mulMat3(RL, l->bI, T);
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++)
      Ib[3 * r + c] =
          T[3 * r] * RL[3 * c] + T[3 * r + 1] * RL[3 * c + 1] + T[3 * r + 2] * RL[3 * c + 2];
  sp.inertia[0] = Ib[0], sp.inertia[1] = Ib[4], sp.inertia[2] = Ib[8];
  sp.inertia[3] = 0.5 * (Ib[1] + Ib[3]), sp.inertia[4] = 0.5 * (Ib[2] + Ib[6]);
  sp.inertia[5] = 0.5 * (Ib[5] + Ib[7]);
  int nq = mbs_jntNq(jt), nv = mbs_jntNv(jt);
  if (jt == MBS_JNT_FREE) sp.q0[3] = 1;
  if (q0) memcpy(sp.q0, q0, sizeof(mbsReal) * (size_t)nq);
  if (qd0) memcpy(sp.qd0, qd0, sizeof(mbsReal) * (size_t)nv);
  if (j && nv == 1) sp.damping[0] = j->damping;
  if (j && jt == MBS_JNT_FREE)
    for (int k = 0; k < 6; k++) sp.damping[k] = 0;
  mbsErr e = mbs_modelAddBody(m, &sp, id);
  if (e == MBS_ERR_INPUT) {
    char msg[768];
    snprintf(msg, sizeof msg, "%s", mbs_errMsg());
    int line = strstr(msg, "inertia") || strstr(msg, "mass") ? (l->iline ? l->iline : l->line)
                                                             : (j ? j->line : l->line);
    return mbs_urdfFail(u, line, "link \"%s\": %s", l->name, msg);
  }
  return e;
}

mbsErr mbs_urdfAddBodies(const mbsUrdf *u, mbsModel *m, int parent, const mbsReal *q0,
                         const mbsReal *qd0) {
  // per link: the body it belongs to, its frame in that body's frame (rotation, position)
  int *body = malloc(sizeof(int) * (size_t)u->nlink),
      *stack = malloc(sizeof(int) * (size_t)u->nlink);
  double *R = malloc(sizeof(double) * 9 * (size_t)u->nlink);
  double *p = malloc(sizeof(double) * 3 * (size_t)u->nlink);
  mbsErr e = body && stack && R && p ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory (URDF)");
  static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, zero[3] = {0, 0, 0};
  int top = 0;
  if (!e) {
    // the root: the ground when it has no mass (or is named "world"), else a body welded to it
    const mbsUrdfLink *r = &u->link[u->root];
    body[u->root] = parent;
    memcpy(R + 9 * u->root, I3, sizeof I3), memcpy(p + 3 * u->root, zero, sizeof zero);
    if (r->owner == u->root)
      e = mbs_urdfBody(u, r, NULL, m, parent, MBS_JNT_FIXED, zero, NULL, I3, NULL, NULL,
                       &body[u->root]);
    // children in file order: push in reverse so they come off the stack in order
    for (int c = r->nchild - 1; c >= 0; c--) stack[top++] = r->child[c];
  }
  while (!e && top > 0) {
    const mbsUrdfJoint *j = &u->joint[stack[--top]];
    const mbsUrdfLink *l = &u->link[j->child];
    int P = j->parent, L = j->child;
    // the joint frame in the parent body's frame: RJ = R_P rpy, origin p_P + R_P xyz
    double Ro[9], RJ[9], o[3], ax[3];
    mbs_urdfRpy(j->rpy, Ro);
    mbsu_mulMat3(R + 9 * P, Ro, RJ);
    mbsu_mulMat3Vec(R + 9 * P, j->xyz, o);
    for (int k = 0; k < 3; k++) o[k] += p[3 * P + k];
    mbsu_mulMat3Vec(RJ, j->axis, ax);
    if (l->owner != L) { // merged into the parent's body (mbs_urdfMerge)
      body[L] = body[P];
      memcpy(R + 9 * L, RJ, sizeof RJ), memcpy(p + 3 * L, o, sizeof o);
    } else {
      int jt = j->type == MBS_URDF_PRISMATIC  ? MBS_JNT_PRISMATIC
               : j->type == MBS_URDF_FIXED    ? MBS_JNT_FIXED
               : j->type == MBS_URDF_FLOATING ? MBS_JNT_FREE
                                              : MBS_JNT_REVOLUTE;
      e = mbs_urdfBody(u, l, j, m, body[P], jt, o, jt == MBS_JNT_FIXED ? NULL : ax, RJ,
                       q0 ? q0 + j->qa : NULL, qd0 ? qd0 + j->va : NULL, &body[L]);
      memcpy(R + 9 * L, RJ, sizeof RJ), memcpy(p + 3 * L, zero, sizeof zero);
    }
    for (int c = l->nchild - 1; c >= 0; c--) stack[top++] = l->child[c];
  }
  free(body), free(stack), free(R), free(p);
  return e;
}

int mbs_urdfJointCount(const mbsUrdf *u) {
  return u->njoint;
}

void mbs_urdfJointInfo(const mbsUrdf *u, int i, const char **name, const char **child, int *nv,
                       int *line) {
  const mbsUrdfJoint *j = &u->joint[i];
  int t = j->type;
  if (name) *name = j->name;
  if (child) *child = u->link[j->child].name;
  if (nv) *nv = t == MBS_URDF_FLOATING ? 6 : t == MBS_URDF_FIXED ? 0 : 1;
  if (line) *line = j->line;
}

const char *mbs_urdfNotModelled(const mbsUrdf *u) {
  return u->note;
}

// link \p i merged into a body (mbs_urdfMerge): the body's name ("ground"), the link frame in
// that body link's frame (position, quaternion w x y z); 0 for the links that head a body
static int mbs_urdfMerged(const mbsUrdf *u, int i, const char **body, double *xyz, double *q) {
  const mbsUrdfLink *l = &u->link[i];
  if (l->owner == i) return 0;
  *body = l->owner >= 0 ? u->link[l->owner].name : "ground";
  memcpy(xyz, l->fp, sizeof l->fp);
  mbs_urdfQuat(l->fR, q);
  return 1;
}

void mbs_urdfJson(const mbsUrdf *u, mbsJson *j) {
  mbs_jsonString(j, "file", u->file);
  mbs_jsonString(j, "robot", u->robot ? u->robot : "");
  mbs_jsonInt(j, "links", u->nlink);
  mbs_jsonString(j, "root", u->link[u->root].name);
  mbs_jsonString(j, "not_modelled", u->note);
  mbs_jsonBeginArray(j, "joints");
  for (int i = 0; i < u->njoint; i++) {
    const mbsUrdfJoint *jt = &u->joint[i];
    mbs_jsonBeginObject(j, NULL);
    mbs_jsonString(j, "name", jt->name);
    mbs_jsonString(j, "type", mbs_urdf_types[jt->type]);
    mbs_jsonString(j, "parent", u->link[jt->parent].name);
    mbs_jsonString(j, "child", u->link[jt->child].name);
    if (jt->type != MBS_URDF_FIXED) mbs_jsonInt(j, "q0_index", jt->qa);
    if (jt->has_limit) {
      mbs_jsonNumber(j, "lower", jt->lower);
      mbs_jsonNumber(j, "upper", jt->upper);
    }
    if (jt->effort > 0) mbs_jsonNumber(j, "effort", jt->effort);
    if (jt->velocity > 0) mbs_jsonNumber(j, "velocity", jt->velocity);
    if (jt->damping > 0) mbs_jsonNumber(j, "damping", jt->damping);
    if (jt->friction != 0) mbs_jsonNumber(j, "friction", jt->friction);
    mbs_jsonEndObject(j);
  }
  mbs_jsonEndArray(j);
  mbs_jsonBeginArray(j, "merged"); // links merged into their parent's body (docs/urdf.md)
  for (int i = 0; i < u->nlink; i++) {
    const char *body;
    double xyz[3], q[4];
    if (i == u->root || !mbs_urdfMerged(u, i, &body, xyz, q)) continue;
    mbs_jsonBeginObject(j, NULL);
    mbs_jsonString(j, "link", u->link[i].name);
    mbs_jsonString(j, "body", body);
    mbs_jsonNumberArray(j, "xyz", xyz, 3);
    mbs_jsonNumberArray(j, "quat", q, 4);
    mbs_jsonEndObject(j);
  }
  mbs_jsonEndArray(j);
}

void mbs_urdfPrint(const mbsUrdf *u, FILE *f) {
  fprintf(f, "URDF %s: robot \"%s\", %d links, %d joints (root link \"%s\")\n", u->file,
          u->robot ? u->robot : "", u->nlink, u->njoint, u->link[u->root].name);
  // q0: the joint's entries of model.urdf.q0 (0-based; qd0 likewise, a floating joint's 6)
  fprintf(f, "  %-24s %-10s %-20s %7s %12s %12s %10s %10s\n", "joint", "type", "child", "q0",
          "lower", "upper", "effort", "velocity");
  for (int i = 0; i < u->njoint; i++) {
    const mbsUrdfJoint *jt = &u->joint[i];
    char lo[32] = "-", hi[32] = "-", ef[32] = "-", ve[32] = "-", qi[32] = "-";
    if (jt->type == MBS_URDF_FLOATING)
      snprintf(qi, sizeof qi, "%d-%d", jt->qa, jt->qa + 6);
    else if (jt->type != MBS_URDF_FIXED)
      snprintf(qi, sizeof qi, "%d", jt->qa);
    if (jt->has_limit) snprintf(lo, sizeof lo, "%.6g", jt->lower);
    if (jt->has_limit) snprintf(hi, sizeof hi, "%.6g", jt->upper);
    if (jt->effort > 0) snprintf(ef, sizeof ef, "%.6g", jt->effort);
    if (jt->velocity > 0) snprintf(ve, sizeof ve, "%.6g", jt->velocity);
    fprintf(f, "  %-24s %-10s %-20s %7s %12s %12s %10s %10s\n", jt->name, mbs_urdf_types[jt->type],
            u->link[jt->child].name, qi, lo, hi, ef, ve);
  }
  for (int i = 0; i < u->nlink; i++) { // links merged into their parent's body (docs/urdf.md)
    const char *body;
    double x[3], q[4];
    if (i != u->root && mbs_urdfMerged(u, i, &body, x, q))
      fprintf(f, "  merged %s -> %s xyz %.6g %.6g %.6g quat %.6g %.6g %.6g %.6g\n", u->link[i].name,
              body, x[0], x[1], x[2], q[0], q[1], q[2], q[3]);
  }
  if (u->note[0]) fprintf(f, "  not modelled: %s\n", u->note);
}

void mbs_urdfDestroy(mbsUrdf **pu) {
  if (!pu || !*pu) return;
  mbsUrdf *u = *pu;
  for (int i = 0; u->link && i < u->nlink; i++) free(u->link[i].name), free(u->link[i].child);
  for (int i = 0; u->joint && i < u->njoint; i++) free(u->joint[i].name);
  free(u->link_index.slot), free(u->joint_index.slot);
  free(u->link), free(u->joint), free(u->file), free(u->robot), free(u);
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
void mbs_urdfSizes(const mbsUrdf *u, int *nq, int *nv) {
  (void)u;
  if (nq) *nq = 0;
  if (nv) *nv = 0;
}
mbsErr mbs_urdfAddBodies(const mbsUrdf *u, mbsModel *m, int parent, const mbsReal *q0,
                         const mbsReal *qd0) {
  (void)u, (void)m, (void)parent, (void)q0, (void)qd0;
  return MBS_ERR_UNSUPPORTED;
}
int mbs_urdfJointCount(const mbsUrdf *u) {
  (void)u;
  return 0;
}
void mbs_urdfJointInfo(const mbsUrdf *u, int i, const char **name, const char **child, int *nv,
                       int *line) {
  (void)u, (void)i, (void)name, (void)child, (void)nv, (void)line;
}
const char *mbs_urdfNotModelled(const mbsUrdf *u) {
  (void)u;
  return "";
}
void mbs_urdfJson(const mbsUrdf *u, mbsJson *j) {
  (void)u, (void)j;
}
void mbs_urdfPrint(const mbsUrdf *u, FILE *f) {
  (void)u, (void)f;
}
void mbs_urdfDestroy(mbsUrdf **u) {
  if (u) *u = NULL;
}
#endif
