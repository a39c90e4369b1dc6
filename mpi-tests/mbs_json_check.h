/// \file mbs_json_check.h
/// A strict JSON (RFC 8259) validator for the tests: recursive descent over the whole grammar,
/// plus a lookup of the top-level keys of a document. Test-only code.
#ifndef MBS_JSON_CHECK_H
#define MBS_JSON_CHECK_H

#include <string.h>

typedef struct {
  const char *s, *p;
  int depth;
  const char *err;
} mbsJsonCheck;

static void mbs_jcWs(mbsJsonCheck *c) {
  while (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r') c->p++;
}

static int mbs_jcFail(mbsJsonCheck *c, const char *why) {
  if (!c->err) c->err = why;
  return 0;
}

static int mbs_jcValue(mbsJsonCheck *c);

static int mbs_jcString(mbsJsonCheck *c) {
  if (*c->p != '"') return mbs_jcFail(c, "expected a string");
  c->p++;
  while (*c->p != '"') {
    unsigned char ch = (unsigned char)*c->p;
    if (!ch) return mbs_jcFail(c, "unterminated string");
    if (ch < 0x20) return mbs_jcFail(c, "raw control character in a string");
    if (ch == '\\') {
      c->p++;
      if (*c->p == 'u') {
        for (int k = 1; k <= 4; k++) {
          char h = c->p[k];
          if (!((h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F')))
            return mbs_jcFail(c, "bad \\u escape");
        }
        c->p += 4;
      } else if (!strchr("\"\\/bfnrt", *c->p) || !*c->p) {
        return mbs_jcFail(c, "bad escape");
      }
    }
    c->p++;
  }
  c->p++;
  return 1;
}

static int mbs_jcDigits(mbsJsonCheck *c) {
  if (!(*c->p >= '0' && *c->p <= '9')) return 0;
  while (*c->p >= '0' && *c->p <= '9') c->p++;
  return 1;
}

static int mbs_jcNumber(mbsJsonCheck *c) {
  if (*c->p == '-') c->p++;
  if (*c->p == '0')
    c->p++;
  else if (!mbs_jcDigits(c))
    return mbs_jcFail(c, "bad number");
  if (*c->p == '.') {
    c->p++;
    if (!mbs_jcDigits(c)) return mbs_jcFail(c, "bad fraction");
  }
  if (*c->p == 'e' || *c->p == 'E') {
    c->p++;
    if (*c->p == '+' || *c->p == '-') c->p++;
    if (!mbs_jcDigits(c)) return mbs_jcFail(c, "bad exponent");
  }
  return 1;
}

static int mbs_jcLiteral(mbsJsonCheck *c, const char *lit) {
  size_t n = strlen(lit);
  if (strncmp(c->p, lit, n) != 0) return mbs_jcFail(c, "unexpected token");
  c->p += n;
  return 1;
}

static int mbs_jcValue(mbsJsonCheck *c) {
  mbs_jcWs(c);
  if (++c->depth > 200) return mbs_jcFail(c, "nesting too deep");
  int ok;
  switch (*c->p) {
  case '{':
    c->p++;
    mbs_jcWs(c);
    ok = 1;
    if (*c->p == '}') {
      c->p++;
      break;
    }
    for (;;) {
      mbs_jcWs(c);
      if (!mbs_jcString(c)) return 0;
      mbs_jcWs(c);
      if (*c->p != ':') return mbs_jcFail(c, "expected ':'");
      c->p++;
      if (!mbs_jcValue(c)) return 0;
      mbs_jcWs(c);
      if (*c->p == ',') {
        c->p++;
        continue;
      }
      if (*c->p == '}') {
        c->p++;
        break;
      }
      return mbs_jcFail(c, "expected ',' or '}'");
    }
    break;
  case '[':
    c->p++;
    mbs_jcWs(c);
    ok = 1;
    if (*c->p == ']') {
      c->p++;
      break;
    }
    for (;;) {
      if (!mbs_jcValue(c)) return 0;
      mbs_jcWs(c);
      if (*c->p == ',') {
        c->p++;
        continue;
      }
      if (*c->p == ']') {
        c->p++;
        break;
      }
      return mbs_jcFail(c, "expected ',' or ']'");
    }
    break;
  case '"':
    ok = mbs_jcString(c);
    break;
  case 't':
    ok = mbs_jcLiteral(c, "true");
    break;
  case 'f':
    ok = mbs_jcLiteral(c, "false");
    break;
  case 'n':
    ok = mbs_jcLiteral(c, "null");
    break;
  default:
    ok = mbs_jcNumber(c);
  }
  c->depth--;
  return ok;
}

/// 1 if \p s is exactly one valid JSON value (surrounding whitespace allowed); else 0 and *why.
static inline int mbs_jsonValid(const char *s, const char **why) {
  mbsJsonCheck c = {s, s, 0, NULL};
  int ok = mbs_jcValue(&c);
  mbs_jcWs(&c);
  if (ok && *c.p) ok = mbs_jcFail(&c, "trailing characters");
  if (why) *why = c.err ? c.err : "";
  return ok;
}

/// 1 if the (valid) document \p s is an object with top-level key \p key.
static inline int mbs_jsonHasTopKey(const char *s, const char *key) {
  mbsJsonCheck c = {s, s, 0, NULL};
  mbs_jcWs(&c);
  if (*c.p != '{') return 0;
  c.p++;
  size_t n = strlen(key);
  for (;;) {
    mbs_jcWs(&c);
    if (*c.p != '"') return 0;
    const char *k0 = c.p + 1;
    if (!mbs_jcString(&c)) return 0;
    if ((size_t)(c.p - 1 - k0) == n && strncmp(k0, key, n) == 0) return 1;
    mbs_jcWs(&c);
    if (*c.p != ':') return 0;
    c.p++;
    if (!mbs_jcValue(&c)) return 0;
    mbs_jcWs(&c);
    if (*c.p != ',') return 0;
    c.p++;
  }
}

#endif
