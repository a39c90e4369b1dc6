/// \file error.c
/// Error messages and tracebacks (process-global; the engine calls them from the main thread).
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "mbspar/mbs_error.h"

static char mbs_errmsg[2048];
static char mbs_errtrace[4096];

const char *mbs_errString(mbsErr e) {
  switch (e) {
#define MBS_ERR_CASE(name, code, desc)                                                             \
  case name:                                                                                       \
    return desc;
    MBS_ERR_LIST(MBS_ERR_CASE)
#undef MBS_ERR_CASE
  default:
    return "unknown error";
  }
}

int mbs_errExitCode(mbsErr e) {
  switch (e) {
#define MBS_ERR_CASE(name, code, desc)                                                             \
  case name:                                                                                       \
    return code;
    MBS_ERR_LIST(MBS_ERR_CASE)
#undef MBS_ERR_CASE
  default:
    return 9;
  }
}

// a message is one printable line: control characters (a newline in a body name or a path, an
// escape sequence) become C escapes, so they can neither split the line nor reach the terminal
static void mbs_errEscape(char *msg, size_t cap) {
  char out[sizeof mbs_errmsg];
  size_t n = 0;
  for (const unsigned char *p = (const unsigned char *)msg; *p && n + 5 < sizeof out; p++) {
    if (*p >= 0x20 && *p != 0x7f) {
      out[n++] = (char)*p;
    } else {
      const char *esc = *p == '\n' ? "\\n" : *p == '\r' ? "\\r" : *p == '\t' ? "\\t" : NULL;
      n += (size_t)(esc ? snprintf(out + n, sizeof out - n, "%s", esc)
                        : snprintf(out + n, sizeof out - n, "\\x%02x", *p));
    }
  }
  if (n >= cap) n = cap - 1;
  memcpy(msg, out, n);
  msg[n] = 0;
}

mbsErr mbs_errSet(mbsErr e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(mbs_errmsg, sizeof mbs_errmsg, fmt, ap);
  va_end(ap);
  mbs_errEscape(mbs_errmsg, sizeof mbs_errmsg);
  mbs_errtrace[0] = 0;
  return e;
}

void mbs_errPrefix(const char *fmt, ...) {
  char pre[512], old[sizeof mbs_errmsg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(pre, sizeof pre, fmt, ap);
  va_end(ap);
  mbs_errEscape(pre, sizeof pre);
  memcpy(old, mbs_errmsg, sizeof old);
  size_t n = strlen(pre);
  if (n + 2 >= sizeof mbs_errmsg) n = sizeof mbs_errmsg - 3;
  memcpy(mbs_errmsg, pre, n);
  mbs_errmsg[n] = ':';
  mbs_errmsg[n + 1] = ' ';
  size_t rest = sizeof mbs_errmsg - n - 3, olen = strlen(old);
  if (olen > rest) olen = rest;
  memcpy(mbs_errmsg + n + 2, old, olen);
  mbs_errmsg[n + 2 + olen] = 0;
}

const char *mbs_errMsg(void) {
  return mbs_errmsg;
}

void mbs_errClear(void) {
  mbs_errmsg[0] = 0;
  mbs_errtrace[0] = 0;
}

void mbs_errTrace(const char *file, int line, const char *func) {
  size_t n = strlen(mbs_errtrace);
  if (n + 1 < sizeof mbs_errtrace)
    snprintf(mbs_errtrace + n, sizeof mbs_errtrace - n, "  %s:%d %s\n", file, line, func);
}

const char *mbs_errTraceback(void) {
  return mbs_errtrace;
}
