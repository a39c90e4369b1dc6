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

// limits of the input: a URDF is a few kB to a few MB (a 100,000-link chain: 27 MB) and a few
// levels deep (robot, link, inertial, inertia)
#define MBS_URDF_MAX_BYTES (256 << 20)
#define MBS_URDF_MAX_DEPTH 32

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
void mbs_urdfDestroy(mbsUrdf **u) {
  if (u) *u = NULL;
}
#endif
