/// \file urdf_xml.c
/// libxml2, hardened, for the URDF reader (urdf.c): no network, no entities, a depth cap, exact
/// line numbers past 65535, one-line errors; the text read through a callback and the children
/// of the root element handed to a visitor and freed one at a time (docs/urdf.md "Memory").
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "urdf_internal.h"

#ifdef MBS_HAVE_URDF
#include <libxml/parser.h>
#include <libxml/tree.h>

#define MBS_URDF_MAX_DEPTH 32 // a URDF is a few levels deep (robot, link, inertial, inertia)

// what the parser's callbacks found first: the error mbspar reports (one line)
typedef struct {
  int line; // 0: nothing yet
  char msg[256];
  startElementNsSAX2Func start; // libxml2's own tree builder
  endElementNsSAX2Func end;
  void (*visit)(void *arg, const xmlNode *n); // every child of the root element, when it ends
  void *arg;
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

// the end of every element: a child of the root element is handed to the visitor, then freed
// with everything before it (text, comments), so the tree never holds more than one of the
// robot's links or joints (a 2^16-link robot's whole tree took ~400 MB on every rank)
static void mbs_urdfXmlEnd(void *ctx, const xmlChar *localname, const xmlChar *prefix,
                           const xmlChar *URI) {
  xmlParserCtxt *ctxt = ctx;
  mbsUrdfXml *x = ctxt->_private;
  xmlNode *n = ctxt->node;
  x->end(ctx, localname, prefix, URI);
  xmlNode *root = n ? n->parent : NULL;
  if (!root || root != ctxt->node || !root->parent || root->parent->type != XML_DOCUMENT_NODE)
    return;
  if (!x->line && x->visit) x->visit(x->arg, n);
  for (xmlNode *c = root->children, *next; c; c = next) {
    next = c->next;
    xmlUnlinkNode(c);
    xmlFreeNode(c);
  }
}

static void mbs_urdfXmlQuiet(void *ctx, const char *fmt, ...) {
  (void)ctx, (void)fmt;
}

xmlDoc *mbs_urdfXmlRead(mbsUrdfReadFn rd, void *rctx, const char *file, int *line, char *msg,
                        size_t msglen, void (*visit)(void *, const xmlNode *), void *arg) {
  mbsUrdfXml x = {0, "", NULL, NULL, visit, arg};
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
  x.end = ctxt->sax->endElementNs;
  if (x.end) ctxt->sax->endElementNs = mbs_urdfXmlEnd;
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
  // read through a callback rather than from memory: libxml2 then holds a few kB of the text at a
  // time, where xmlCtxtReadMemory copies all of it first (and the caller's reader need not hold
  // the text at all: mbspar's ranks receive it in pieces, parallel/urdf_stream.c)
  xmlDoc *doc =
      xmlCtxtReadIO(ctxt, rd, NULL, rctx, file, NULL, XML_PARSE_NONET | XML_PARSE_BIG_LINES);
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

#else
typedef int mbs_urdfXmlNone; // (ISO C: no empty translation unit without libxml2)
#endif
