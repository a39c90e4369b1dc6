/// \file config.c
/// The config parser (see mbs_config.h and docs/model.md). libconfig parses the text; everything
/// after that is ours: --set overrides edit the libconfig tree in place (keeping member order,
/// because the model is built in file order), then strict readers check every key, type, length
/// and value and report "FILE:LINE: message" (or "--set KEY=VALUE: message" for values that came
/// from the command line).
///
/// Before parsing, square brackets outside strings and comments become parentheses: libconfig
/// arrays must be homogeneous ("[0, 0, -9.81]" is a syntax error there), lists are not, and the
/// readers treat arrays and lists alike. The rewrite keeps every character position, so the
/// line numbers are unchanged.
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_loops.h"
#include "mbspar/mbs_solver.h"
#include "mbspar/mbs_solvertype.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

typedef config_setting_t mbsCs;

static const char *const mbs_crit_names[] = {"residual", "change", NULL};
static const char *const mbs_iface_names[] = {"cr", "jcg", NULL};
static const char *const mbs_warm_names[] = {"none",      "previous", "linear",
                                             "quadratic", "cubic",    NULL};
static const char *const mbs_loops_names[] = {"auto", "unit", "rows", NULL};
static const char *const mbs_int_names[] = {"euler", "rk4", "dp5", NULL};
static const char *const mbs_fmt_names[] = {"csv", "hdf5", NULL};
static const char *const mbs_shape_names[] = {"rod", "box", "sphere", NULL};

static const char *mbs_nameOf(const char *const *names, int n, int k) {
  return (k >= 0 && k < n) ? names[k] : "?";
}
const char *mbs_criterionName(int c) {
  return mbs_nameOf(mbs_crit_names, 2, c);
}
const char *mbs_interfaceName(int i) {
  return mbs_nameOf(mbs_iface_names, 2, i);
}
const char *mbs_warmStartName(int w) {
  return mbs_nameOf(mbs_warm_names, 5, w);
}
const char *mbs_loopModeName(int k) {
  return mbs_nameOf(mbs_loops_names, 3, k);
}
const char *mbs_integratorName(int i) {
  return mbs_nameOf(mbs_int_names, 3, i);
}
const char *mbs_outFormatName(int f) {
  return mbs_nameOf(mbs_fmt_names, 2, f);
}

static char *mbs_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

// ---------------------------------------------------------------- locations and messages

// dotted path of a setting: model.bodies[2].joint.axis
static void mbs_cfgPath(const mbsCs *s, char *buf, size_t n) {
  const mbsCs *chain[64];
  int k = 0;
  for (const mbsCs *p = s; p && !config_setting_is_root(p) && k < 64; p = config_setting_parent(p))
    chain[k++] = p;
  size_t len = 0;
  buf[0] = 0;
  for (int i = k - 1; i >= 0 && len + 1 < n; i--) {
    const mbsCs *p = chain[i];
    const char *name = config_setting_name(p);
    int w;
    if (name)
      w = snprintf(buf + len, n - len, "%s%s", len ? "." : "", name);
    else
      w = snprintf(buf + len, n - len, "[%d]", config_setting_index(p));
    if (w < 0) break;
    len += (size_t)w;
    if (len >= n) len = n - 1;
  }
  if (!buf[0]) snprintf(buf, n, "(top level)");
}

// the --set override a setting came from (NULL: from the file)
static const char *mbs_cfgSetOf(const mbsCs *s) {
  for (const mbsCs *p = s; p; p = config_setting_parent(p))
    if (config_setting_get_hook(p)) return (const char *)config_setting_get_hook(p);
  return NULL;
}

static int mbs_cfgLine(const mbsCs *s) {
  for (const mbsCs *p = s; p; p = config_setting_parent(p))
    if (config_setting_source_line(p) > 0) return (int)config_setting_source_line(p);
  return 1;
}

// record "FILE:LINE: msg" (or "--set K=V: msg") for setting s and return the code
static mbsErr mbs_cfgFail(const mbsConfig *c, const mbsCs *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static mbsErr mbs_cfgFail(const mbsConfig *c, const mbsCs *s, const char *fmt, ...) {
  char msg[1536];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const char *set = s ? mbs_cfgSetOf(s) : NULL;
  if (set) return mbs_errSet(MBS_ERR_USAGE, "--set %s: %s", set, msg);
  return mbs_errSet(MBS_ERR_INPUT, "%s:%d: %s", c->filename, s ? mbs_cfgLine(s) : 1, msg);
}

static const char *mbs_cfgTypeName(const mbsCs *s) {
  switch (config_setting_type(s)) {
  case CONFIG_TYPE_GROUP:
    return "a group";
  case CONFIG_TYPE_INT:
  case CONFIG_TYPE_INT64:
    return "an integer";
  case CONFIG_TYPE_FLOAT:
    return "a number";
  case CONFIG_TYPE_STRING:
    return "a string";
  case CONFIG_TYPE_BOOL:
    return "a boolean";
  case CONFIG_TYPE_ARRAY:
  case CONFIG_TYPE_LIST:
    return "a list";
  default:
    return "nothing";
  }
}

// ---------------------------------------------------------------- typed readers

static int mbs_cfgIsList(const mbsCs *s) {
  return config_setting_type(s) == CONFIG_TYPE_LIST || config_setting_type(s) == CONFIG_TYPE_ARRAY;
}

// unknown keys are errors
static mbsErr mbs_cfgCheckKeys(const mbsConfig *c, const mbsCs *g, const char *const *keys) {
  int n = config_setting_length(g);
  for (int i = 0; i < n; i++) {
    const mbsCs *s = config_setting_get_elem(g, (unsigned)i);
    const char *name = config_setting_name(s);
    int ok = 0;
    for (int k = 0; keys[k] && !ok; k++) ok = strcmp(keys[k], name) == 0;
    if (!ok) {
      char path[256], allowed[512];
      size_t len = 0;
      allowed[0] = 0;
      for (int k = 0; keys[k] && len + 1 < sizeof allowed; k++) {
        int w = snprintf(allowed + len, sizeof allowed - len, "%s%s", k ? ", " : "", keys[k]);
        if (w < 0) break;
        len += (size_t)w;
      }
      mbs_cfgPath(s, path, sizeof path);
      return mbs_cfgFail(c, s, "unknown key \"%s\" (%s; allowed here: %s)", name, path, allowed);
    }
  }
  return MBS_OK;
}

// a number (integer or float), finite
static mbsErr mbs_cfgNumber(const mbsConfig *c, const mbsCs *s, mbsReal *v) {
  char path[256];
  int t = config_setting_type(s);
  if (t == CONFIG_TYPE_INT)
    *v = (mbsReal)config_setting_get_int(s);
  else if (t == CONFIG_TYPE_INT64)
    *v = (mbsReal)config_setting_get_int64(s);
  else if (t == CONFIG_TYPE_FLOAT)
    *v = config_setting_get_float(s);
  else {
    mbs_cfgPath(s, path, sizeof path);
    return mbs_cfgFail(c, s, "%s: wrong type: expected a number, got %s", path, mbs_cfgTypeName(s));
  }
  if (!isfinite(*v)) {
    mbs_cfgPath(s, path, sizeof path);
    return mbs_cfgFail(c, s, "%s: value is not finite (NaN or Inf, e.g. an overflowing literal)",
                       path);
  }
  return MBS_OK;
}

static mbsErr mbs_cfgGetReal(const mbsConfig *c, const mbsCs *g, const char *key, mbsReal *v) {
  const mbsCs *s = config_setting_get_member(g, key);
  if (s) MBS_CALL(mbs_cfgNumber(c, s, v));
  return MBS_OK;
}

// The one reader of integers: an integer setting as 64 bits (the preprocessor makes libconfig
// keep every literal exactly), in [lo, hi]; out-of-range values are printed as written
static mbsErr mbs_cfgInt(const mbsConfig *c, const mbsCs *s, long long lo, long long hi,
                         long long *v) {
  char path[256];
  int t = config_setting_type(s);
  mbs_cfgPath(s, path, sizeof path);
  if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64)
    return mbs_cfgFail(c, s, "%s: wrong type: expected an integer, got %s", path,
                       mbs_cfgTypeName(s));
  long long x = t == CONFIG_TYPE_INT ? config_setting_get_int(s) : config_setting_get_int64(s);
  if (x < lo || x > hi) {
    if (hi == INT_MAX)
      return mbs_cfgFail(c, s, "%s must be >= %lld (got %lld%s)", path, lo, x,
                         x > hi ? ", beyond the 32-bit range" : "");
    return mbs_cfgFail(c, s, "%s must be in [%lld, %lld] (got %lld)", path, lo, hi, x);
  }
  *v = x;
  return MBS_OK;
}

// an optional integer member in [lo, hi] (at most 32 bits); *v unchanged if absent
static mbsErr mbs_cfgGetInt(const mbsConfig *c, const mbsCs *g, const char *key, int lo, int hi,
                            int *v) {
  const mbsCs *s = config_setting_get_member(g, key);
  long long x;
  if (!s) return MBS_OK;
  MBS_CALL(mbs_cfgInt(c, s, lo, hi, &x));
  *v = (int)x;
  return MBS_OK;
}

static mbsErr mbs_cfgGetString(const mbsConfig *c, const mbsCs *g, const char *key,
                               const char **v) {
  const mbsCs *s = config_setting_get_member(g, key);
  if (!s) return MBS_OK;
  if (config_setting_type(s) != CONFIG_TYPE_STRING) {
    char path[256];
    mbs_cfgPath(s, path, sizeof path);
    return mbs_cfgFail(c, s, "%s: wrong type: expected a string, got %s", path, mbs_cfgTypeName(s));
  }
  *v = config_setting_get_string(s);
  return MBS_OK;
}

// an enum given as a string; *v unchanged if absent
static mbsErr mbs_cfgGetEnum(const mbsConfig *c, const mbsCs *g, const char *key,
                             const char *const *names, int *v) {
  const char *str = NULL;
  MBS_CALL(mbs_cfgGetString(c, g, key, &str));
  if (!str) return MBS_OK;
  for (int k = 0; names[k]; k++)
    if (strcmp(names[k], str) == 0) {
      *v = k;
      return MBS_OK;
    }
  char path[256], allowed[256];
  size_t len = 0;
  allowed[0] = 0;
  for (int k = 0; names[k]; k++) {
    int w = snprintf(allowed + len, sizeof allowed - len, "%s%s", k ? ", " : "", names[k]);
    if (w < 0 || (size_t)w >= sizeof allowed - len) break;
    len += (size_t)w;
  }
  const mbsCs *s = config_setting_get_member(g, key);
  mbs_cfgPath(s, path, sizeof path);
  return mbs_cfgFail(c, s, "%s: unknown value \"%s\" (expected one of: %s)", path, str, allowed);
}

// exactly n numbers
static mbsErr mbs_cfgGetVec(const mbsConfig *c, const mbsCs *g, const char *key, int n,
                            mbsReal *v) {
  const mbsCs *s = config_setting_get_member(g, key);
  if (!s) return MBS_OK;
  char path[256];
  mbs_cfgPath(s, path, sizeof path);
  if (!mbs_cfgIsList(s))
    return mbs_cfgFail(c, s, "%s: wrong type: expected a list of %d numbers, got %s", path, n,
                       mbs_cfgTypeName(s));
  if (config_setting_length(s) != n)
    return mbs_cfgFail(c, s, "%s: wrong array length: expected %d numbers, got %d", path, n,
                       config_setting_length(s));
  for (int k = 0; k < n; k++)
    MBS_CALL(mbs_cfgNumber(c, config_setting_get_elem(s, (unsigned)k), v + k));
  return MBS_OK;
}

// a number or a list of numbers (malloc'ed, *count values; a scalar gives count 1); absent: 0
static mbsErr mbs_cfgGetValues(const mbsConfig *c, const mbsCs *g, const char *key, mbsReal **v,
                               int *count) {
  *v = NULL;
  *count = 0;
  const mbsCs *s = config_setting_get_member(g, key);
  if (!s) return MBS_OK;
  int n = mbs_cfgIsList(s) ? config_setting_length(s) : 1;
  mbsReal *a = malloc((size_t)(n > 0 ? n : 1) * sizeof *a);
  if (!a) return mbs_errSet(MBS_ERR_NOMEM, "out of memory reading %s", key);
  mbsErr e = MBS_OK;
  if (!mbs_cfgIsList(s)) {
    e = mbs_cfgNumber(c, s, a);
  } else {
    for (int k = 0; k < n && !e; k++)
      e = mbs_cfgNumber(c, config_setting_get_elem(s, (unsigned)k), a + k);
  }
  if (e) {
    free(a);
    return e;
  }
  if (n == 0) {
    char path[256];
    mbs_cfgPath(s, path, sizeof path);
    free(a);
    return mbs_cfgFail(c, s, "%s: wrong array length: empty list", path);
  }
  *v = a;
  *count = n;
  return MBS_OK;
}

// a group member that must itself be a group (NULL if absent)
static mbsErr mbs_cfgGetGroup(const mbsConfig *c, const mbsCs *g, const char *key,
                              const mbsCs **out) {
  const mbsCs *s = config_setting_get_member(g, key);
  *out = NULL;
  if (!s) return MBS_OK;
  if (config_setting_type(s) != CONFIG_TYPE_GROUP) {
    char path[256];
    mbs_cfgPath(s, path, sizeof path);
    return mbs_cfgFail(c, s, "%s: wrong type: expected a group { ... }, got %s", path,
                       mbs_cfgTypeName(s));
  }
  *out = s;
  return MBS_OK;
}

// ---------------------------------------------------------------- text preprocessing

// An integer literal at p (libconfig's forms: [+-]digits or [+-]0x hex digits, then an optional L
// or LL): its length (0: not an integer literal, e.g. a real number or a name) and *wide: 0 if
// it fits in 32 bits, 1 if only in 64 bits, 2 if not even there.
static size_t mbs_cfgIntLiteral(const char *p, int *wide) {
  size_t i = 0;
  int neg = 0;
  if (p[i] == '+' || p[i] == '-') neg = p[i++] == '-';
  int hex = p[i] == '0' && (p[i + 1] == 'x' || p[i + 1] == 'X');
  size_t d0 = i + (hex ? 2 : 0), j = d0;
  unsigned long long v = 0;
  int over = 0;
  for (;; j++) {
    int dig = p[j] >= '0' && p[j] <= '9'          ? p[j] - '0'
              : hex && p[j] >= 'a' && p[j] <= 'f' ? p[j] - 'a' + 10
              : hex && p[j] >= 'A' && p[j] <= 'F' ? p[j] - 'A' + 10
                                                  : -1;
    if (dig < 0) break;
    unsigned base = hex ? 16u : 10u;
    if (v > (ULLONG_MAX - (unsigned)dig) / base) over = 1;
    v = v * base + (unsigned)dig;
  }
  if (j == d0) return 0;
  // a real number (1.5, 1e3, 2.) is not an integer literal
  if (!hex && (p[j] == '.' || p[j] == 'e' || p[j] == 'E')) return 0;
  unsigned long long lim64 =
      neg ? (unsigned long long)LLONG_MAX + 1 : (unsigned long long)LLONG_MAX;
  unsigned long long lim32 = neg ? (unsigned long long)INT_MAX + 1 : (unsigned long long)INT_MAX;
  *wide = over || v > lim64 ? 2 : v > lim32 ? 1 : 0;
  if (p[j] == 'L') j += p[j + 1] == 'L' ? 2 : 1;
  return j;
}

// [ ] -> ( ) outside strings and comments; rejects @include (only rank 0 reads files); a UTF-8
// byte-order mark at the start is skipped. Integer literals beyond 32 bits get libconfig's 64-bit
// suffix L (libconfig 1.5 reads a plain literal into an int and wraps it: 4294967297 would be
// 1); literals beyond 64 bits are refused here, with the digits as written. Line numbers are
// unchanged. \p set: the --set override the text came from (messages then name it).
static mbsErr mbs_cfgPreprocess(const char *text, const char *filename, const char *set,
                                char **out) {
  if ((unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB &&
      (unsigned char)text[2] == 0xBF)
    text += 3;
  size_t n = strlen(text);
  char *t = malloc(n + n / 8 + 2); // an L per literal of at least 10 digits
  if (!t) return mbs_errSet(MBS_ERR_NOMEM, "out of memory copying the config text");
  size_t o = 0;
  int line = 1;
  enum { NORMAL, STRING, LINECOMMENT, BLOCKCOMMENT } st = NORMAL;
  for (size_t i = 0; i < n; i++) {
    char ch = text[i];
    if (ch == '\n') line++;
    switch (st) {
    case NORMAL:
      if (ch == '"')
        st = STRING;
      else if (ch == '#')
        st = LINECOMMENT;
      else if (ch == '/' && text[i + 1] == '/')
        st = LINECOMMENT;
      else if (ch == '/' && text[i + 1] == '*') {
        st = BLOCKCOMMENT;
        t[o++] = text[i++];
        ch = text[i];
      } else if (ch == '[')
        ch = '(';
      else if (ch == ']')
        ch = ')';
      else if (ch == '@') {
        free(t);
        if (set) return mbs_errSet(MBS_ERR_USAGE, "--set %s: @include is not supported", set);
        return mbs_errSet(MBS_ERR_INPUT,
                          "%s:%d: @include is not supported (put everything in one file)", filename,
                          line);
      } else if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '*') {
        // a name (key, true, false): its digits are no number
        while (i + 1 < n && ((text[i + 1] >= 'a' && text[i + 1] <= 'z') ||
                             (text[i + 1] >= 'A' && text[i + 1] <= 'Z') ||
                             (text[i + 1] >= '0' && text[i + 1] <= '9') || text[i + 1] == '_' ||
                             text[i + 1] == '-' || text[i + 1] == '*'))
          t[o++] = text[i++];
        ch = text[i];
      } else if ((ch >= '0' && ch <= '9') || ch == '+' || ch == '-' || ch == '.') {
        int wide = 0;
        size_t len = mbs_cfgIntLiteral(text + i, &wide);
        if (len && wide == 2) {
          int w = (int)(len < 64 ? len : 64);
          free(t);
          if (set)
            return mbs_errSet(MBS_ERR_USAGE,
                              "--set %s: integer %.*s%s does not fit in 64 bits (write a real "
                              "number as 1e20)",
                              set, w, text + i, len > 64 ? "..." : "");
          return mbs_errSet(MBS_ERR_INPUT,
                            "%s:%d: integer %.*s%s does not fit in 64 bits (write a real number "
                            "as 1e20)",
                            filename, line, w, text + i, len > 64 ? "..." : "");
        }
        if (len) {
          memcpy(t + o, text + i, len);
          o += len;
          i += len - 1;
          if (wide == 1 && text[i] != 'L') t[o++] = 'L';
          continue;
        }
        // a real number: copy its digits (so that "1e5" is not read again from the "5")
        while (i + 1 < n &&
               ((text[i + 1] >= '0' && text[i + 1] <= '9') || text[i + 1] == '.' ||
                text[i + 1] == 'e' || text[i + 1] == 'E' ||
                ((text[i + 1] == '+' || text[i + 1] == '-') && (text[i] == 'e' || text[i] == 'E'))))
          t[o++] = text[i++];
        ch = text[i];
      }
      break;
    case STRING:
      if (ch == '\\' && text[i + 1]) {
        if (text[i + 1] == '\n') line++;
        t[o++] = text[i++];
        ch = text[i];
      } else if (ch == '"')
        st = NORMAL;
      break;
    case LINECOMMENT:
      if (ch == '\n') st = NORMAL;
      break;
    case BLOCKCOMMENT:
      if (ch == '*' && text[i + 1] == '/') {
        st = NORMAL;
        t[o++] = text[i++];
        ch = text[i];
      }
      break;
    }
    t[o++] = ch;
  }
  t[o] = 0;
  *out = t;
  return MBS_OK;
}

// ---------------------------------------------------------------- --set overrides

// deep copy of src as a new member \p name of parent (name NULL inside lists)
static mbsCs *mbs_cfgCopy(mbsCs *parent, const char *name, const mbsCs *src) {
  int t = config_setting_type(src);
  mbsCs *d = config_setting_add(parent, name, t);
  if (!d) return NULL;
  int ok = CONFIG_TRUE;
  switch (t) {
  case CONFIG_TYPE_INT:
    ok = config_setting_set_int(d, config_setting_get_int(src));
    break;
  case CONFIG_TYPE_INT64:
    ok = config_setting_set_int64(d, config_setting_get_int64(src));
    break;
  case CONFIG_TYPE_FLOAT:
    ok = config_setting_set_float(d, config_setting_get_float(src));
    break;
  case CONFIG_TYPE_STRING:
    ok = config_setting_set_string(d, config_setting_get_string(src));
    break;
  case CONFIG_TYPE_BOOL:
    ok = config_setting_set_bool(d, config_setting_get_bool(src));
    break;
  case CONFIG_TYPE_GROUP:
  case CONFIG_TYPE_LIST:
  case CONFIG_TYPE_ARRAY:
    for (int k = 0; k < config_setting_length(src) && ok; k++) {
      const mbsCs *e = config_setting_get_elem(src, (unsigned)k);
      ok = mbs_cfgCopy(d, t == CONFIG_TYPE_GROUP ? config_setting_name(e) : NULL, e) != NULL;
    }
    break;
  default:
    break;
  }
  return ok ? d : NULL;
}

// move the last member of an aggregate to position idx (keeps file order after a replacement)
static void mbs_cfgMoveLast(mbsCs *agg, int idx) {
  config_list_t *l = agg->value.list;
  if (!l || l->length == 0 || idx < 0 || (unsigned)idx >= l->length - 1) return;
  mbsCs *last = l->elements[l->length - 1];
  memmove(&l->elements[idx + 1], &l->elements[idx],
          (size_t)(l->length - 1 - (unsigned)idx) * sizeof *l->elements);
  l->elements[idx] = last;
}

// a value without quotes or brackets that libconfig cannot parse is taken as a string
static int mbs_cfgBareWord(const char *v) {
  if (!v[0]) return 0;
  for (const char *p = v; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          *p == '_' || *p == '-' || *p == '.' || *p == '+' || *p == '/' || *p == ':'))
      return 0;
  return 1;
}

static mbsErr mbs_cfgApplySet(config_t *tree, char *set) {
  char *eq = strchr(set, '=');
  MBS_CHECK(eq && eq != set, MBS_ERR_USAGE,
            "--set %s: expected KEY=VALUE, e.g. --set solver.method=aba", set);
  size_t klen = (size_t)(eq - set);
  const char *value = eq + 1;
  MBS_CHECK(value[0], MBS_ERR_USAGE, "--set %s: empty value", set);
  MBS_CHECK(klen < 256, MBS_ERR_USAGE, "--set %s: key too long", set);
  char key[256];
  memcpy(key, set, klen);
  key[klen] = 0;

  // parse the value as the right-hand side of a libconfig setting
  size_t vlen = strlen(value);
  char *src = malloc(vlen + 16), *pre = NULL;
  if (!src) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  snprintf(src, vlen + 16, "v = %s;\n", value);
  mbsErr e = mbs_cfgPreprocess(src, "--set", set, &pre);
  free(src);
  if (e) return e;
  config_t vc;
  config_init(&vc);
  int parsed = config_read_string(&vc, pre);
  free(pre);
  if (!parsed) {
    config_destroy(&vc);
    config_init(&vc);
    if (!mbs_cfgBareWord(value)) {
      config_destroy(&vc);
      return mbs_errSet(MBS_ERR_USAGE,
                        "--set %s: cannot parse the value \"%s\" (use libconfig syntax: 1.5, "
                        "\"text\", [1, 2, 3])",
                        set, value);
    }
    config_setting_t *sv = config_setting_add(config_root_setting(&vc), "v", CONFIG_TYPE_STRING);
    if (!sv || !config_setting_set_string(sv, value)) {
      config_destroy(&vc);
      return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    }
  }
  const mbsCs *val = config_setting_get_member(config_root_setting(&vc), "v");

  // walk the dotted path, creating missing groups; segments are "name", "name[i]" or "[i]"
  mbsCs *cur = config_root_setting(tree);
  char *save = NULL, *seg = strtok_r(key, ".", &save);
  e = MBS_OK;
  while (seg && !e) {
    char *next = strtok_r(NULL, ".", &save);
    char *br = strchr(seg, '[');
    int idx = -1;
    if (br) {
      char *end = NULL;
      long x = strtol(br + 1, &end, 10);
      if (end == br + 1 || *end != ']' || end[1] || x < 0 || x > INT_MAX) {
        e = mbs_errSet(MBS_ERR_USAGE, "--set %s: bad index in \"%s\" (expected name[i])", set, seg);
        break;
      }
      idx = (int)x;
      *br = 0;
    }
    mbsCs *target = cur;
    if (seg[0]) {
      // a named member of a group
      if (config_setting_type(cur) != CONFIG_TYPE_GROUP) {
        e = mbs_errSet(MBS_ERR_USAGE, "--set %s: cannot set member \"%s\" of a non-group", set,
                       seg);
        break;
      }
      mbsCs *child = config_setting_get_member(cur, seg);
      int last = !next && idx < 0;
      if (last) {
        // replace (in place) or add the member
        int pos = child ? config_setting_index(child) : -1;
        if (child) config_setting_remove(cur, seg);
        mbsCs *d = mbs_cfgCopy(cur, seg, val);
        if (!d) {
          e = mbs_errSet(MBS_ERR_USAGE, "--set %s: \"%s\" is not a valid key name", set, seg);
          break;
        }
        mbs_cfgMoveLast(cur, pos);
        config_setting_set_hook(d, set);
        break;
      }
      if (!child) {
        if (idx >= 0) {
          e = mbs_errSet(MBS_ERR_USAGE, "--set %s: there is no list \"%s\" to index", set, seg);
          break;
        }
        child = config_setting_add(cur, seg, CONFIG_TYPE_GROUP);
        if (!child) {
          e = mbs_errSet(MBS_ERR_USAGE, "--set %s: \"%s\" is not a valid key name", set, seg);
          break;
        }
        config_setting_set_hook(child, set);
      }
      target = child;
    }
    if (idx >= 0) {
      // an element of a list
      if (!mbs_cfgIsList(target) || idx >= config_setting_length(target)) {
        e = mbs_errSet(MBS_ERR_USAGE, "--set %s: index %d is out of range (list of %d)", set, idx,
                       mbs_cfgIsList(target) ? config_setting_length(target) : 0);
        break;
      }
      if (!next) {
        config_setting_remove_elem(target, (unsigned)idx);
        mbsCs *d = mbs_cfgCopy(target, NULL, val);
        if (!d) {
          e = mbs_errSet(MBS_ERR_NOMEM, "--set %s: cannot store the value", set);
          break;
        }
        mbs_cfgMoveLast(target, idx);
        config_setting_set_hook(d, set);
        break;
      }
      target = config_setting_get_elem(target, (unsigned)idx);
    }
    cur = target;
    seg = next;
  }
  config_destroy(&vc);
  return e;
}

// ---------------------------------------------------------------- options

static mbsErr mbs_cfgReadSolver(mbsConfig *c, const mbsCs *root) {
  static const char *const keys[] = {
      "method",    "tol",       "max_iter", "criterion",   "omega", "rho",         "warm_start",
      "interface", "baumgarte", "rank_tol", "closure_tol", "loops", "check_every", NULL};
  const mbsCs *g;
  MBS_CALL(mbs_cfgGetGroup(c, root, "solver", &g));
  if (!g) return MBS_OK;
  MBS_CALL(mbs_cfgCheckKeys(c, g, keys));
  mbsOption *o = &c->opt;
  const char *method = NULL;
  MBS_CALL(mbs_cfgGetString(c, g, "method", &method));
  if (method) {
    o->solver = mbs_solverFromName(method);
    if (o->solver < 0) {
      char allowed[256];
      mbs_solverNames(allowed, sizeof allowed); // the solver table
      return mbs_cfgFail(c, config_setting_get_member(g, "method"),
                         "solver.method: unknown value \"%s\" (expected one of: %s)", method,
                         allowed);
    }
  }
  MBS_CALL(mbs_cfgGetReal(c, g, "tol", &o->tol));
  MBS_CALL(mbs_cfgGetInt(c, g, "max_iter", 1, INT_MAX, &o->max_iter));
  MBS_CALL(mbs_cfgGetInt(c, g, "check_every", 1, INT_MAX, &o->check_every));
  MBS_CALL(mbs_cfgGetEnum(c, g, "criterion", mbs_crit_names, &o->criterion));
  MBS_CALL(mbs_cfgGetReal(c, g, "omega", &o->omega));
  MBS_CALL(mbs_cfgGetReal(c, g, "rho", &o->rho));
  MBS_CALL(mbs_cfgGetEnum(c, g, "warm_start", mbs_warm_names, &o->warm_start));
  MBS_CALL(mbs_cfgGetEnum(c, g, "interface", mbs_iface_names, &o->iface));
  // closed loops (docs/loops.md)
  MBS_CALL(mbs_cfgGetVec(c, g, "baumgarte", 2, o->baumgarte));
  MBS_CALL(mbs_cfgGetReal(c, g, "rank_tol", &o->rank_tol));
  MBS_CALL(mbs_cfgGetReal(c, g, "closure_tol", &o->closure_tol));
  MBS_CALL(mbs_cfgGetEnum(c, g, "loops", mbs_loops_names, &o->loops));
  if (!(o->baumgarte[0] >= 0 && o->baumgarte[1] >= 0))
    return mbs_cfgFail(c, config_setting_get_member(g, "baumgarte"),
                       "solver.baumgarte = [alpha, beta] must be >= 0 (got [%g, %g])",
                       o->baumgarte[0], o->baumgarte[1]);
  if (!(o->rank_tol > 0 && o->rank_tol < 1))
    return mbs_cfgFail(c, config_setting_get_member(g, "rank_tol"),
                       "solver.rank_tol must be in (0, 1) (a relative pivot; got %g)", o->rank_tol);
  if (o->loops == MBS_LOOPS_ROWS &&
      !(mbs_solverFind(o->solver) && mbs_solverFind(o->solver)->iterative))
    return mbs_cfgFail(c, config_setting_get_member(g, "loops"),
                       "solver.loops = \"rows\" needs an iterative method of the engine (jacobi, "
                       "gs, sor, chebyshev, jcg or petsc; solver.method is \"%s\")",
                       mbs_solverName(o->solver));
  if (!(o->closure_tol >= 1e-15 && o->closure_tol <= 1e-2))
    return mbs_cfgFail(c, config_setting_get_member(g, "closure_tol"),
                       "solver.closure_tol must be in [1e-15, 1e-2] (m or rad; got %g)",
                       o->closure_tol);
  if (!(o->tol > 0))
    return mbs_cfgFail(c, config_setting_get_member(g, "tol"), "solver.tol must be > 0 (got %g)",
                       o->tol);
  if (!(o->omega > 0 && o->omega < 2))
    return mbs_cfgFail(c, config_setting_get_member(g, "omega"),
                       "solver.omega must be in (0, 2) (got %g)", o->omega);
  if (!(o->rho >= 0 && o->rho < 1))
    return mbs_cfgFail(c, config_setting_get_member(g, "rho"),
                       "solver.rho must be in [0, 1) (0 = estimate; got %g)", o->rho);
  if (o->tol < MBS_CFG_MINTOL)
    return mbs_cfgFail(c, config_setting_get_member(g, "tol"),
                       "solver.tol = %g is below what double precision can meet: relative "
                       "residuals stall near 1e-15, so the floor is %g",
                       o->tol, MBS_CFG_MINTOL);
  return MBS_OK;
}

static mbsErr mbs_cfgReadIntegrator(mbsConfig *c, const mbsCs *root) {
  static const char *const keys[] = {"method", "dt", "t_end", "tol", "projection", NULL};
  const mbsCs *g;
  MBS_CALL(mbs_cfgGetGroup(c, root, "integrator", &g));
  if (!g) return MBS_OK;
  MBS_CALL(mbs_cfgCheckKeys(c, g, keys));
  mbsOption *o = &c->opt;
  const mbsCs *pj = config_setting_get_member(g, "projection");
  if (pj) {
    if (config_setting_type(pj) != CONFIG_TYPE_BOOL)
      return mbs_cfgFail(c, pj, "integrator.projection: wrong type: expected true or false, got %s",
                         mbs_cfgTypeName(pj));
    o->projection = config_setting_get_bool(pj);
  }
  MBS_CALL(mbs_cfgGetEnum(c, g, "method", mbs_int_names, &o->integrator));
  MBS_CALL(mbs_cfgGetReal(c, g, "dt", &o->dt));
  MBS_CALL(mbs_cfgGetReal(c, g, "t_end", &o->t_end));
  MBS_CALL(mbs_cfgGetReal(c, g, "tol", &o->int_tol));
  if (!(o->dt > 0))
    return mbs_cfgFail(c, config_setting_get_member(g, "dt"), "integrator.dt must be > 0 (got %g)",
                       o->dt);
  if (!(o->t_end >= 0))
    return mbs_cfgFail(c, config_setting_get_member(g, "t_end"),
                       "integrator.t_end must be >= 0 (got %g)", o->t_end);
  if (!(o->int_tol > 0))
    return mbs_cfgFail(c, config_setting_get_member(g, "tol"),
                       "integrator.tol must be > 0 (got %g)", o->int_tol);
  if (o->int_tol < MBS_CFG_MINTOL)
    return mbs_cfgFail(c, config_setting_get_member(g, "tol"),
                       "integrator.tol = %g is below what double precision can meet: the floor "
                       "of the relative error per step is %g",
                       o->int_tol, MBS_CFG_MINTOL);
  // fixed-step methods take t_end/dt steps; PETSc counts them in a 32-bit integer
  double steps = o->t_end / o->dt;
  if (o->integrator != MBS_INT_DP5 && steps > MBS_CFG_MAXSTEPS) {
    const mbsCs *sdt = config_setting_get_member(g, "dt"),
                *stend = config_setting_get_member(g, "t_end");
    // blame the value that came from a --set, else dt, else t_end
    const mbsCs *at = sdt && mbs_cfgSetOf(sdt)       ? sdt
                      : stend && mbs_cfgSetOf(stend) ? stend
                      : sdt                          ? sdt
                                                     : stend;
    return mbs_cfgFail(c, at,
                       "integrator.dt = %g and t_end = %g s give %.3g steps of %s: at most %.0e "
                       "fixed steps are allowed (use a larger dt, a shorter t_end, or "
                       "integrator.method = \"dp5\")",
                       o->dt, o->t_end, steps, mbs_int_names[o->integrator], MBS_CFG_MAXSTEPS);
  }
  return MBS_OK;
}

// output.flush_every: seconds of wall-clock time (a number, or a string "N s"; 0: every row) or
// output rows (a string "N rows")
static mbsErr mbs_cfgReadFlush(mbsConfig *c, const mbsCs *s) {
  if (!s) return MBS_OK;
  static const char what[] =
      "output.flush_every: expected seconds >= 0 (e.g. 1 or \"2.5 s\"; 0: after every row) or "
      "a number of output rows (e.g. \"10 rows\")";
  int t = config_setting_type(s);
  double sec = -1;
  long rows = 0;
  if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64 || t == CONFIG_TYPE_FLOAT) {
    sec = config_setting_get_float(s);
    if (t != CONFIG_TYPE_FLOAT) sec = (double)config_setting_get_int64(s);
  } else if (t == CONFIG_TYPE_STRING) {
    const char *v = config_setting_get_string(s);
    char *end = NULL;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || errno) return mbs_cfgFail(c, s, "%s, got \"%s\"", what, v);
    while (*end == ' ') end++;
    if (!strcmp(end, "s") || !strcmp(end, "sec") || !strcmp(end, "seconds") || !*end) {
      sec = x;
    } else if (!strcmp(end, "row") || !strcmp(end, "rows")) {
      if (!(x >= 1 && x <= 1e9 && x == floor(x)))
        return mbs_cfgFail(c, s,
                           "output.flush_every: the number of rows must be an integer from 1 "
                           "to 1e9, got \"%s\"",
                           v);
      rows = (long)x;
    } else {
      return mbs_cfgFail(c, s, "%s, got \"%s\"", what, v);
    }
  } else {
    return mbs_cfgFail(c, s, "%s, got %s", what, mbs_cfgTypeName(s));
  }
  if (!rows && !(sec >= 0 && sec <= 1e9)) return mbs_cfgFail(c, s, "%s, got %g", what, sec);
  c->out_flush_rows = (int)rows;
  c->out_flush_sec = rows ? 0 : sec;
  return MBS_OK;
}

static mbsErr mbs_cfgReadOutput(mbsConfig *c, const mbsCs *root) {
  static const char *const keys[] = {
      "dir", "every", "checkpoint_every", "format", "joint_wrench", "flush_every", NULL};
  const mbsCs *g;
  MBS_CALL(mbs_cfgGetGroup(c, root, "output", &g));
  if (!g) return MBS_OK;
  MBS_CALL(mbs_cfgCheckKeys(c, g, keys));
  const char *dir = NULL;
  MBS_CALL(mbs_cfgGetString(c, g, "dir", &dir));
  if (dir) {
    if (!dir[0]) return mbs_cfgFail(c, config_setting_get_member(g, "dir"), "output.dir is empty");
    char *d = mbs_strdup(dir);
    if (!d) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    free(c->out_dir);
    c->out_dir = d;
  }
  MBS_CALL(mbs_cfgGetInt(c, g, "every", 1, INT_MAX, &c->out_every));
  MBS_CALL(mbs_cfgGetInt(c, g, "checkpoint_every", 0, INT_MAX, &c->out_checkpoint_every));
  MBS_CALL(mbs_cfgGetEnum(c, g, "format", mbs_fmt_names, &c->out_format));
  const mbsCs *jw = config_setting_get_member(g, "joint_wrench");
  if (jw) {
    if (config_setting_type(jw) != CONFIG_TYPE_BOOL)
      return mbs_cfgFail(c, jw, "output.joint_wrench: wrong type: expected true or false, got %s",
                         mbs_cfgTypeName(jw));
    c->out_joint_wrench = config_setting_get_bool(jw);
  }
  return mbs_cfgReadFlush(c, config_setting_get_member(g, "flush_every"));
}

static mbsErr mbs_cfgReadInverse(mbsConfig *c, const mbsCs *root) {
  static const char *const keys[] = {"T",          "steps",  "q_start",  "q_end",
                                     "angle_unit", "motion", "actuated", NULL};
  static const char *const units[] = {"rad", "deg", NULL};
  const mbsCs *g;
  mbsInverseSpec *iv = &c->inverse;
  MBS_CALL(mbs_cfgGetGroup(c, root, "inverse", &g));
  if (!g) return MBS_OK;
  iv->present = 1;
  MBS_CALL(mbs_cfgCheckKeys(c, g, keys));
  MBS_CALL(mbs_cfgGetReal(c, g, "T", &iv->T));
  MBS_CALL(mbs_cfgGetInt(c, g, "steps", 1, 100000000, &iv->steps));
  MBS_CALL(mbs_cfgGetEnum(c, g, "angle_unit", units, &iv->degrees));
  MBS_CALL(mbs_cfgGetValues(c, g, "q_start", &iv->q_start, &iv->nstart));
  MBS_CALL(mbs_cfgGetValues(c, g, "q_end", &iv->q_end, &iv->nend));
  if (!(iv->T > 0))
    return mbs_cfgFail(c, config_setting_get_member(g, "T"), "inverse.T must be > 0 (got %g)",
                       iv->T);
  // a user motion: a CSV file relative to the config's directory
  const char *mot = NULL;
  MBS_CALL(mbs_cfgGetString(c, g, "motion", &mot));
  if (mot) {
    const mbsCs *ms = config_setting_get_member(g, "motion");
    if (!mot[0]) return mbs_cfgFail(c, ms, "inverse.motion: empty file name");
    const char *slash = strrchr(c->filename, '/');
    size_t dl = mot[0] == '/' || !slash ? 0 : (size_t)(slash - c->filename + 1);
    iv->motion = malloc(dl + strlen(mot) + 1);
    if (!iv->motion) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    memcpy(iv->motion, c->filename, dl);
    memcpy(iv->motion + dl, mot, strlen(mot) + 1);
    iv->motion_line = mbs_cfgLine(ms);
  }
  // the actuated joints of a model with loops: body names (a string or a list of strings)
  const mbsCs *as = config_setting_get_member(g, "actuated");
  if (as) {
    int n = mbs_cfgIsList(as) ? config_setting_length(as) : 1;
    iv->actuated = calloc((size_t)n + 1, sizeof *iv->actuated);
    if (!iv->actuated) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    for (int k = 0; k < n; k++) {
      const mbsCs *e = mbs_cfgIsList(as) ? config_setting_get_elem(as, (unsigned)k) : as;
      if (config_setting_type(e) != CONFIG_TYPE_STRING)
        return mbs_cfgFail(c, e, "inverse.actuated: wrong type: expected body names, got %s",
                           mbs_cfgTypeName(e));
      iv->actuated[k] = mbs_strdup(config_setting_get_string(e));
      if (!iv->actuated[k]) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
      iv->nactuated = k + 1;
    }
    if (n == 0) return mbs_cfgFail(c, as, "inverse.actuated: empty list");
  }
  return MBS_OK;
}

static mbsErr mbs_cfgReadStatic(mbsConfig *c, const mbsCs *root) {
  static const char *const keys[] = {"method",   "dt",      "ke_tol",  "dq_tol",
                                     "max_iter", "omega_d", "history", NULL};
  static const char *const methods[] = {"kinetic", "drain", NULL};
  const mbsCs *g;
  mbsStaticOpt *so = &c->statics;
  MBS_CALL(mbs_cfgGetGroup(c, root, "static", &g));
  if (!g) return MBS_OK;
  MBS_CALL(mbs_cfgCheckKeys(c, g, keys));
  MBS_CALL(mbs_cfgGetEnum(c, g, "method", methods, &so->method));
  MBS_CALL(mbs_cfgGetReal(c, g, "dt", &so->dt));
  MBS_CALL(mbs_cfgGetReal(c, g, "ke_tol", &so->ke_tol));
  MBS_CALL(mbs_cfgGetReal(c, g, "dq_tol", &so->dq_tol));
  MBS_CALL(mbs_cfgGetInt(c, g, "max_iter", 1, INT_MAX, &so->max_iter));
  MBS_CALL(mbs_cfgGetReal(c, g, "omega_d", &so->omega_d));
  MBS_CALL(mbs_cfgGetInt(c, g, "history", 2, 100000000, &so->history));
  if (!(so->dt > 0))
    return mbs_cfgFail(c, config_setting_get_member(g, "dt"), "static.dt must be > 0 (got %g)",
                       so->dt);
  if (!(so->ke_tol > 0))
    return mbs_cfgFail(c, config_setting_get_member(g, "ke_tol"),
                       "static.ke_tol must be > 0 (got %g)", so->ke_tol);
  if (!(so->dq_tol > 0))
    return mbs_cfgFail(c, config_setting_get_member(g, "dq_tol"),
                       "static.dq_tol must be > 0 (got %g)", so->dq_tol);
  if (!(so->omega_d >= 0))
    return mbs_cfgFail(c, config_setting_get_member(g, "omega_d"),
                       "static.omega_d must be >= 0 (got %g)", so->omega_d);
  return MBS_OK;
}

static mbsErr mbs_cfgReadCpa(mbsConfig *c, const mbsCs *root) {
  static const char *const keys[] = {"latency", "bandwidth", "flop_time", NULL};
  const mbsCs *g;
  mbsCpaSpec *cp = &c->cpa;
  MBS_CALL(mbs_cfgGetGroup(c, root, "cpa", &g));
  if (!g) return MBS_OK;
  MBS_CALL(mbs_cfgCheckKeys(c, g, keys));
  MBS_CALL(mbs_cfgGetReal(c, g, "latency", &cp->latency));
  MBS_CALL(mbs_cfgGetReal(c, g, "bandwidth", &cp->bandwidth));
  MBS_CALL(mbs_cfgGetReal(c, g, "flop_time", &cp->flop_time));
  if (!(cp->latency >= 0))
    return mbs_cfgFail(c, config_setting_get_member(g, "latency"),
                       "cpa.latency must be >= 0 (got %g)", cp->latency);
  if (!(cp->bandwidth > 0))
    return mbs_cfgFail(c, config_setting_get_member(g, "bandwidth"),
                       "cpa.bandwidth must be > 0 (got %g)", cp->bandwidth);
  if (!(cp->flop_time > 0))
    return mbs_cfgFail(c, config_setting_get_member(g, "flop_time"),
                       "cpa.flop_time must be > 0 (got %g)", cp->flop_time);
  return MBS_OK;
}

// ---------------------------------------------------------------- parse

// model.loops and model.forces: lists (their entries are checked when the model is built). Every
// method solves such models (the constraint-force methods through the loop solve of
// docs/loops.md 8); without solver.method the serial baseline aba is the default for them (it
// needs no tree solve per closure equation)
static mbsErr mbs_cfgLoopMethod(mbsConfig *c, const mbsCs *model) {
  static const char *const lists[] = {"loops", "forces"};
  int *cnt[] = {&c->nloops, &c->nforces};
  for (int k = 0; k < 2; k++) {
    const mbsCs *s = config_setting_get_member(model, lists[k]);
    if (!s) continue;
    if (!mbs_cfgIsList(s))
      return mbs_cfgFail(c, s, "model.%s: wrong type: expected a list ( {...}, {...} ), got %s",
                         lists[k], mbs_cfgTypeName(s));
    *cnt[k] = config_setting_length(s);
  }
  if (!c->nloops && !c->nforces) return MBS_OK;
  if (!config_lookup((const config_t *)c->priv, "solver.method")) {
    c->opt.solver = MBS_SOLVER_ABA;
    c->loop_default_aba = 1;
  }
  return MBS_OK;
}

// a file named in the config, relative to the config's directory
static mbsErr mbs_cfgResolve(const mbsConfig *c, const char *file, char **out) {
  const char *slash = strrchr(c->filename, '/');
  size_t dl = file[0] == '/' || !slash ? 0 : (size_t)(slash - c->filename + 1);
  free(*out);
  *out = malloc(dl + strlen(file) + 1);
  if (!*out) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  memcpy(*out, c->filename, dl);
  memcpy(*out + dl, file, strlen(file) + 1);
  return MBS_OK;
}

// model.urdf = "FILE" or { file = "FILE"; q0 = [...]; qd0 = [...]; }: the file name resolved
// against the config's directory; the text is read by the caller (mbs_configSetUrdf)
static mbsErr mbs_cfgReadUrdf(mbsConfig *c, const mbsCs *model) {
  const mbsCs *s = config_setting_get_member(model, "urdf");
  if (!s) return MBS_OK;
  const char *file = NULL;
  if (config_setting_type(s) == CONFIG_TYPE_STRING) {
    file = config_setting_get_string(s);
  } else if (config_setting_type(s) == CONFIG_TYPE_GROUP) {
    static const char *const keys[] = {"file", "q0", "qd0", "joints", "torques", NULL};
    MBS_CALL(mbs_cfgCheckKeys(c, s, keys));
    MBS_CALL(mbs_cfgGetString(c, s, "file", &file));
    if (!file) return mbs_cfgFail(c, s, "model.urdf: missing file = \"robot.urdf\"");
    MBS_CALL(mbs_cfgGetValues(c, s, "q0", &c->urdf_q0, &c->nurdf_q0));
    MBS_CALL(mbs_cfgGetValues(c, s, "qd0", &c->urdf_qd0, &c->nurdf_qd0));
    const mbsCs *js = config_setting_get_member(s, "joints");
    if (js && !mbs_cfgIsList(js))
      return mbs_cfgFail(c, js,
                         "model.urdf.joints: wrong type: expected a list ( { name = \"JOINT\"; "
                         "force = ...; }, ... ), got %s",
                         mbs_cfgTypeName(js));
    const char *tfile = NULL;
    MBS_CALL(mbs_cfgGetString(c, s, "torques", &tfile));
    if (tfile && !tfile[0])
      return mbs_cfgFail(c, config_setting_get_member(s, "torques"),
                         "model.urdf.torques: empty file name");
    if (tfile) {
      MBS_CALL(mbs_cfgResolve(c, tfile, &c->urdf_torques));
      c->urdf_torques_line = mbs_cfgLine(config_setting_get_member(s, "torques"));
    }
  } else {
    return mbs_cfgFail(c, s,
                       "model.urdf: wrong type: expected a file name or { file = ...; q0 = ...; "
                       "qd0 = ...; }, got %s",
                       mbs_cfgTypeName(s));
  }
  if (!file[0]) return mbs_cfgFail(c, s, "model.urdf: empty file name");
  c->urdf_line = mbs_cfgLine(s);
  return mbs_cfgResolve(c, file, &c->urdf_path);
}

static mbsErr mbs_cfgDofValues(const mbsConfig *c, const mbsCs *g, const char *key, int n,
                               const char *what, mbsReal *out);

// model.urdf.joints entry \p k (group \p g) against the robot: the joint by its URDF name, the
// values per degree of freedom (one for all or one each), checked as a cfg body's are
static mbsErr mbs_cfgUrdfJoint(mbsConfig *c, const mbsCs *g, int k, mbsUrdfJointForce *jf) {
  char what[160];
  snprintf(what, sizeof what, "model.urdf.joints[%d]", k);
  if (config_setting_type(g) != CONFIG_TYPE_GROUP)
    return mbs_cfgFail(c, g,
                       "%s: wrong type: expected a group { name = \"JOINT\"; force = ...; "
                       "stiffness = ...; springref = ...; damping = ...; }, got %s",
                       what, mbs_cfgTypeName(g));
  static const char *const keys[] = {"name", "force", "stiffness", "springref", "damping", NULL};
  MBS_CALL(mbs_cfgCheckKeys(c, g, keys));
  const char *name = NULL;
  MBS_CALL(mbs_cfgGetString(c, g, "name", &name));
  if (!name) return mbs_cfgFail(c, g, "%s: missing name = \"JOINT\" (a URDF joint name)", what);
  const mbsCs *ns = config_setting_get_member(g, "name");
  int n = mbs_urdfJointCount(c->urdf), j = -1;
  for (int i = 0; i < n && j < 0; i++) {
    const char *jn;
    mbs_urdfJointInfo(c->urdf, i, &jn, NULL, NULL, NULL);
    if (!strcmp(jn, name)) j = i;
  }
  if (j < 0)
    return mbs_cfgFail(c, ns, "%s: \"%s\" is not a joint of %s (`mbspar check` lists them)", what,
                       name, c->urdf_path);
  mbs_urdfJointInfo(c->urdf, j, &jf->name, &jf->link, &jf->nv, NULL);
  if (jf->nv == 0)
    return mbs_cfgFail(c, ns, "%s: joint \"%s\" is fixed: it has no degree of freedom to act on",
                       what, name);
  static const char *const vk[4] = {"force", "stiffness", "springref", "damping"};
  mbsReal *dst[4] = {jf->force, jf->stiffness, jf->springref, jf->damping};
  for (int q = 0; q < 4; q++) {
    const mbsCs *vs = config_setting_get_member(g, vk[q]);
    if (!vs) continue;
    if (q == 1 || q == 2) {
      if (jf->nv != 1)
        return mbs_cfgFail(c, vs, "%s: %s is not supported for the floating joint \"%s\"", what,
                           vk[q], name);
    }
    MBS_CALL(mbs_cfgDofValues(c, g, vk[q], jf->nv, what, dst[q]));
    jf->given |= 1 << q;
    for (int d = 0; (q == 1 || q == 3) && d < jf->nv; d++)
      if (dst[q][d] < 0)
        return mbs_cfgFail(c, vs, "%s: joint %s must be >= 0 (got %g)", what, vk[q], dst[q][d]);
  }
  for (int i = 0; i < k; i++)
    if (c->urdf_jf[i].link == jf->link)
      return mbs_cfgFail(c, ns, "%s: joint \"%s\" is listed twice (also entry %d)", what, name, i);
  return MBS_OK;
}

mbsErr mbs_configSetUrdf(mbsConfig *c, const char *text, size_t len) {
  MBS_CHECK(c->urdf_path, MBS_ERR_INTERNAL, "mbs_configSetUrdf: the config has no model.urdf");
  mbs_urdfDestroy(&c->urdf);
  MBS_CALL(mbs_urdfParse(text, len, c->urdf_path, &c->urdf));
  int nq, nv;
  mbs_urdfSizes(c->urdf, &nq, &nv);
  const mbsCs *s = config_setting_get_member(
      config_setting_get_member(config_root_setting((const config_t *)c->priv), "model"), "urdf");
  if (c->nurdf_q0 && c->nurdf_q0 != nq)
    return mbs_cfgFail(c, config_setting_get_member(s, "q0"),
                       "model.urdf: wrong array length: q0 needs %d values (the robot's position "
                       "coordinates in joint order), got %d",
                       nq, c->nurdf_q0);
  if (c->nurdf_qd0 && c->nurdf_qd0 != nv)
    return mbs_cfgFail(c, config_setting_get_member(s, "qd0"),
                       "model.urdf: wrong array length: qd0 needs %d values, got %d", nv,
                       c->nurdf_qd0);
  // model.urdf.joints: forces on joints named as in the file
  const mbsCs *js = config_setting_get_member(s, "joints");
  free(c->urdf_jf);
  c->urdf_jf = NULL, c->nurdf_jf = 0;
  int nj = js ? config_setting_length(js) : 0;
  if (nj > 0) {
    c->urdf_jf = calloc((size_t)nj, sizeof *c->urdf_jf);
    MBS_CHECK(c->urdf_jf, MBS_ERR_NOMEM, "out of memory");
    for (int k = 0; k < nj; k++) {
      MBS_CALL(mbs_cfgUrdfJoint(c, config_setting_get_elem(js, (unsigned)k), k, &c->urdf_jf[k]));
      c->nurdf_jf = k + 1;
    }
  }
  return MBS_OK;
}

mbsErr mbs_configSetTorques(mbsConfig *c, const char *text, size_t len) {
  MBS_CHECK(c->urdf && c->urdf_torques, MBS_ERR_INTERNAL,
            "mbs_configSetTorques: the config has no model.urdf.torques or no robot yet");
  mbs_torquesDestroy(&c->torques);
  return mbs_torquesRead(c->urdf, text, len, c->urdf_torques, &c->torques);
}

// model.urdf.joints into the robot's bodies (built just before; a subset build skips the bodies
// it does not hold)
static void mbs_cfgUrdfForces(const mbsConfig *c, mbsModel *m) {
  for (int k = 0; k < c->nurdf_jf; k++) {
    const mbsUrdfJointForce *jf = &c->urdf_jf[k];
    int b = mbs_modelFindBody(m, jf->link);
    if (b < 0 || m->body_dofnum[b] != jf->nv) continue;
    for (int i = 0; i < jf->nv; i++) {
      int d = m->body_dofadr[b] + i;
      if (jf->given & MBS_UJF_FORCE) m->dof_force[d] = jf->force[i];
      if (jf->given & MBS_UJF_STIFFNESS) m->dof_stiffness[d] = jf->stiffness[i];
      if (jf->given & MBS_UJF_SPRINGREF) m->dof_springref[d] = jf->springref[i];
      if (jf->given & MBS_UJF_DAMPING) m->dof_damping[d] = jf->damping[i];
    }
  }
}

mbsErr mbs_configParse(const char *text, const char *filename, const char *const *sets, int nsets,
                       mbsConfig **out) {
  *out = NULL;
  mbsConfig *c;
  MBS_ALLOC(c, 1);
  mbsErr e = MBS_OK;
  config_t *tree = NULL;
  char *pre = NULL;

  // defaults
  mbs_optionDefault(&c->opt);
  c->gravity[0] = 0, c->gravity[1] = 0, c->gravity[2] = -9.81;
  c->out_every = 1;
  c->out_checkpoint_every = 0;
  c->out_format = MBS_OUTFMT_CSV;
  c->out_joint_wrench = 1;
  c->out_flush_sec = 1, c->out_flush_rows = 0;
  c->inverse.T = 1;
  c->inverse.steps = 100;
  mbs_staticOptDefault(&c->statics);
  c->cpa.latency = 1.5e-6, c->cpa.bandwidth = 5e9, c->cpa.flop_time = 1e-9;
  c->filename = mbs_strdup(filename ? filename : "(config)");
  c->out_dir = mbs_strdup("out");
  c->sets = calloc((size_t)(nsets > 0 ? nsets : 1), sizeof *c->sets);
  tree = malloc(sizeof *tree);
  if (!c->filename || !c->out_dir || !c->sets || !tree) {
    free(tree);
    mbs_configDestroy(&c);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory creating the config");
  }
  config_init(tree);
  c->priv = tree;
  for (int k = 0; k < nsets; k++) {
    c->sets[k] = mbs_strdup(sets[k]);
    if (!c->sets[k]) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    c->nset = k + 1;
  }

  // syntax
  if (!e) e = mbs_cfgPreprocess(text ? text : "", c->filename, NULL, &pre);
  if (!e && !config_read_string(tree, pre)) {
    const char *msg = config_error_text(tree);
    if (!msg || !strcmp(msg, "syntax error"))
      e = mbs_errSet(MBS_ERR_INPUT,
                     "%s:%d: syntax error (libconfig syntax: key = value; groups "
                     "{ }, lists ( ) or [ ], strings \"...\", no NaN literal)",
                     c->filename, config_error_line(tree));
    else
      e = mbs_errSet(MBS_ERR_INPUT, "%s:%d: syntax error: %s", c->filename, config_error_line(tree),
                     msg);
  }
  free(pre);

  // overrides, in command-line order
  for (int k = 0; k < nsets && !e; k++) e = mbs_cfgApplySet(tree, c->sets[k]);

  // top level and options
  const mbsCs *root = config_root_setting(tree);
  static const char *const top[] = {"model",  "solver",      "integrator", "output", "inverse",
                                    "static", "description", "cpa",        NULL};
  if (!e) e = mbs_cfgCheckKeys(c, root, top);
  if (!e) {
    const char *desc = NULL;
    e = mbs_cfgGetString(c, root, "description", &desc);
  }
  if (!e) e = mbs_cfgReadSolver(c, root);
  if (!e) e = mbs_cfgReadIntegrator(c, root);
  if (!e) e = mbs_cfgReadOutput(c, root);
  if (!e) e = mbs_cfgReadInverse(c, root);
  if (!e) e = mbs_cfgReadStatic(c, root);
  if (!e) e = mbs_cfgReadCpa(c, root);
  if (!e) {
    static const char *const mkeys[] = {"gravity", "bodies", "chain",  "tree",
                                        "urdf",    "loops",  "forces", NULL};
    const mbsCs *model = NULL;
    e = mbs_cfgGetGroup(c, root, "model", &model);
    if (!e && !model)
      e = mbs_errSet(MBS_ERR_INPUT, "%s:1: empty model: there is no model group", c->filename);
    if (!e) e = mbs_cfgCheckKeys(c, model, mkeys);
    if (!e) e = mbs_cfgGetVec(c, model, "gravity", 3, c->gravity);
    if (!e) e = mbs_cfgReadUrdf(c, model);
    if (!e) e = mbs_cfgLoopMethod(c, model);
  }
  if (e) {
    mbs_configDestroy(&c);
    return e;
  }
  *out = c;
  return MBS_OK;
}

void mbs_configDestroy(mbsConfig **pc) {
  if (!pc || !*pc) return;
  mbsConfig *c = *pc;
  if (c->priv) {
    config_destroy((config_t *)c->priv);
    free(c->priv);
  }
  for (int k = 0; k < c->nset; k++) free(c->sets[k]);
  free(c->sets);
  free(c->filename);
  free(c->out_dir);
  free(c->inverse.q_start);
  free(c->inverse.q_end);
  free(c->inverse.motion);
  for (int k = 0; k < c->inverse.nactuated; k++) free(c->inverse.actuated[k]);
  free(c->inverse.actuated);
  free(c->urdf_path);
  free(c->urdf_q0);
  free(c->urdf_qd0);
  free(c->urdf_jf);
  free(c->urdf_torques);
  mbs_torquesDestroy(&c->torques);
  mbs_urdfDestroy(&c->urdf);
  free(c);
  *pc = NULL;
}

// ---------------------------------------------------------------- model: geometry helpers

// inertia about the COM of a shape whose long axis is the unit vector d
static void mbs_shapeInertia(int shape, mbsReal mass, mbsReal length, mbsReal radius,
                             const mbsReal *size, const mbsReal *d, mbsReal *I) {
  if (shape == 0) { // rod: solid cylinder of radius r along d
    mbsReal r = radius > 0 ? radius : length / 20;
    mbsReal ip = mass * (3 * r * r + length * length) / 12, ia = mass * r * r / 2;
    // I = ip (1 - d d^T) + ia d d^T
    I[0] = ip + (ia - ip) * d[0] * d[0];
    I[1] = ip + (ia - ip) * d[1] * d[1];
    I[2] = ip + (ia - ip) * d[2] * d[2];
    I[3] = (ia - ip) * d[0] * d[1];
    I[4] = (ia - ip) * d[0] * d[2];
    I[5] = (ia - ip) * d[1] * d[2];
  } else if (shape == 1) { // box with full edge lengths along the body axes
    I[0] = mass * (size[1] * size[1] + size[2] * size[2]) / 12;
    I[1] = mass * (size[0] * size[0] + size[2] * size[2]) / 12;
    I[2] = mass * (size[0] * size[0] + size[1] * size[1]) / 12;
    I[3] = I[4] = I[5] = 0;
  } else { // solid sphere
    mbsReal r = radius > 0 ? radius : length / 10;
    I[0] = I[1] = I[2] = 0.4 * mass * r * r;
    I[3] = I[4] = I[5] = 0;
  }
}

// mass, com and inertia of a body or generator group g: explicit inertia, or a shape
typedef struct {
  mbsReal mass, com[3], inertia[6], length, dir[3];
  int has_mass, has_inertia, shape; // shape -1: none
  const mbsCs *inertia_src;         // the setting that determined the inertia
} mbsGeom;

static mbsErr mbs_cfgReadGeom(const mbsConfig *c, const mbsCs *g, int generator, const char *what,
                              mbsGeom *geo) {
  memset(geo, 0, sizeof *geo);
  geo->shape = -1;
  geo->dir[2] = -1; // hanging down
  const mbsCs *s;
  if ((s = config_setting_get_member(g, "mass"))) {
    MBS_CALL(mbs_cfgNumber(c, s, &geo->mass));
    geo->has_mass = 1;
  }
  if (!geo->has_mass) return mbs_cfgFail(c, g, "%s: missing mass", what);
  MBS_CALL(mbs_cfgGetReal(c, g, "length", &geo->length));
  if ((s = config_setting_get_member(g, "length")) && !(geo->length > 0))
    return mbs_cfgFail(c, s, "%s: length must be > 0 (got %g)", what, geo->length);
  if (generator && !s) return mbs_cfgFail(c, g, "%s: missing length", what);
  if ((s = config_setting_get_member(g, "direction"))) {
    MBS_CALL(mbs_cfgGetVec(c, g, "direction", 3, geo->dir));
    mbsReal n =
        sqrt(geo->dir[0] * geo->dir[0] + geo->dir[1] * geo->dir[1] + geo->dir[2] * geo->dir[2]);
    if (!(n > 1e-12)) return mbs_cfgFail(c, s, "%s: direction has zero length", what);
    for (int k = 0; k < 3; k++) geo->dir[k] /= n;
  }
  mbsReal radius = 0, size[3] = {0, 0, 0};
  MBS_CALL(mbs_cfgGetReal(c, g, "radius", &radius));
  if ((s = config_setting_get_member(g, "radius")) && !(radius > 0))
    return mbs_cfgFail(c, s, "%s: radius must be > 0 (got %g)", what, radius);
  int has_size = config_setting_get_member(g, "size") != NULL;
  MBS_CALL(mbs_cfgGetVec(c, g, "size", 3, size));
  if (has_size && !(size[0] > 0 && size[1] > 0 && size[2] > 0))
    return mbs_cfgFail(c, config_setting_get_member(g, "size"),
                       "%s: box size must be three positive edge lengths", what);
  int shape = generator ? 0 : -1; // generators default to rods
  MBS_CALL(mbs_cfgGetEnum(c, g, "shape", mbs_shape_names, &shape));
  geo->shape = shape;

  if ((s = config_setting_get_member(g, "inertia"))) {
    MBS_CALL(mbs_cfgGetVec(c, g, "inertia", 6, geo->inertia));
    geo->has_inertia = 1;
    geo->inertia_src = s;
  } else if (shape >= 0) {
    if (shape == 1 && !has_size)
      return mbs_cfgFail(
          c, config_setting_get_member(g, "shape") ? config_setting_get_member(g, "shape") : g,
          "%s: shape \"box\" needs size = [a, b, c]", what);
    if (shape != 1 && !(geo->length > 0) && !(radius > 0))
      return mbs_cfgFail(c, g, "%s: shape \"%s\" needs length or radius", what,
                         mbs_shape_names[shape]);
    mbsReal len = geo->length > 0 ? geo->length : 2 * radius;
    mbs_shapeInertia(shape, geo->mass, len, radius, size, geo->dir, geo->inertia);
    geo->has_inertia = 1;
    geo->inertia_src = config_setting_get_member(g, "shape");
    if (!geo->inertia_src) geo->inertia_src = config_setting_get_member(g, "radius");
    if (!geo->inertia_src) geo->inertia_src = g;
  } else {
    return mbs_cfgFail(c, g,
                       "%s: missing inertia (give inertia = [Ixx, Iyy, Izz, Ixy, Ixz, Iyz] "
                       "or a shape)",
                       what);
  }
  // centre of mass: explicit, else from the shape along the direction, else the origin
  if (config_setting_get_member(g, "com")) {
    MBS_CALL(mbs_cfgGetVec(c, g, "com", 3, geo->com));
  } else if (shape >= 0 && geo->length > 0) {
    mbsReal f = shape == 2 ? 1.0 : 0.5;
    for (int k = 0; k < 3; k++) geo->com[k] = f * geo->length * geo->dir[k];
  }
  return MBS_OK;
}

// which setting an mbs_modelAddBody message is about (keywords of its messages)
static const char *mbs_cfgErrKey(const char *msg) {
  static const char *const map[][2] = {
      {"axis2", "axis2"},     {"parallel", "axis2"},  {"axis", "axis"}, {"origin", "origin"},
      {"quaternion", "q0"},   {"qd0", "qd0"},         {"q0", "q0"},     {"stiffness", "stiffness"},
      {"damping", "damping"}, {"inertia", "inertia"}, {"mass", "mass"}, {"com ", "com"},
      {"name", "name"},       {"joint type", "type"}};
  for (size_t k = 0; k < sizeof map / sizeof map[0]; k++)
    if (strstr(msg, map[k][0])) return map[k][1];
  return NULL;
}

static int mbs_isJointKey(const char *key) {
  static const char *const jk[] = {"type", "axis",      "axis2",   "origin",    "q0",
                                   "qd0",  "stiffness", "damping", "springref", "force"};
  for (size_t k = 0; k < sizeof jk / sizeof jk[0]; k++)
    if (strcmp(jk[k], key) == 0) return 1;
  return 0;
}

// add one body; on failure re-raise the model's message at the setting it is about
static mbsErr mbs_cfgAdd(const mbsConfig *c, mbsModel *m, const mbsBodySpec *sp, const mbsCs *body,
                         const mbsCs *joint, const mbsGeom *geo, const char *what, int *id) {
  mbsErr e = mbs_modelAddBody(m, sp, id);
  if (!e) return MBS_OK;
  if (e != MBS_ERR_INPUT) return e;
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", mbs_errMsg());
  const char *key = mbs_cfgErrKey(msg);
  const mbsCs *at = NULL;
  if (key && strcmp(key, "inertia") == 0 && geo && geo->inertia_src) at = geo->inertia_src;
  if (!at && key && joint && mbs_isJointKey(key)) at = config_setting_get_member(joint, key);
  if (!at && key) at = config_setting_get_member(body, key);
  if (!at && key && mbs_isJointKey(key) && joint) at = joint;
  if (!at) at = body;
  return mbs_cfgFail(c, at, "%s: %s", what, msg);
}

// parent name -> index (-1 ground); \p later_list: the bodies list to search for a later definition
static mbsErr mbs_cfgParent(const mbsConfig *c, const mbsModel *m, const mbsCs *g, const char *what,
                            const mbsCs *later_list, int *parent) {
  const char *pname = "ground";
  MBS_CALL(mbs_cfgGetString(c, g, "parent", &pname));
  if (strcmp(pname, "ground") == 0 || strcmp(pname, "world") == 0) {
    *parent = -1;
    return MBS_OK;
  }
  *parent = mbs_modelFindGlobal(m, pname);
  if (*parent >= 0) return MBS_OK;
  const mbsCs *ps = config_setting_get_member(g, "parent");
  if (later_list) {
    int n = config_setting_length(later_list);
    for (int k = 0; k < n; k++) {
      const mbsCs *b = config_setting_get_elem(later_list, (unsigned)k);
      const mbsCs *ns = config_setting_get_member(b, "name");
      if (ns && config_setting_type(ns) == CONFIG_TYPE_STRING &&
          strcmp(config_setting_get_string(ns), pname) == 0 && b != g)
        return mbs_cfgFail(c, ps,
                           "%s: parent \"%s\" is defined later in the file (a body must "
                           "come after its parent)",
                           what, pname);
    }
  }
  return mbs_cfgFail(c, ps, "%s: unknown parent \"%s\" (not \"ground\" or an earlier body)", what,
                     pname);
}

// per-dof values: scalar broadcast, or exactly n values
static mbsErr mbs_cfgDofValues(const mbsConfig *c, const mbsCs *g, const char *key, int n,
                               const char *what, mbsReal *out) {
  mbsReal *v;
  int cnt;
  MBS_CALL(mbs_cfgGetValues(c, g, key, &v, &cnt));
  if (!cnt) return MBS_OK;
  if (cnt != 1 && cnt != n) {
    free(v);
    return mbs_cfgFail(c, config_setting_get_member(g, key),
                       "%s: wrong array length: %s needs %d value(s) (or one for all), got %d",
                       what, key, n, cnt);
  }
  if (n == 0) {
    free(v);
    return mbs_cfgFail(c, config_setting_get_member(g, key),
                       "%s: %s given for a joint without degrees of freedom", what, key);
  }
  for (int k = 0; k < n; k++) out[k] = v[cnt == 1 ? 0 : k];
  free(v);
  return MBS_OK;
}

// a body name (or a generator's prefix) becomes CSV column names and report keys: no control
// characters (a newline would split the CSV header) and no commas (they would shift columns)
static mbsErr mbs_cfgCheckName(const mbsConfig *c, const mbsCs *s, const char *what,
                               const char *name) {
  const char *why = mbs_nameProblem(name);
  if (why)
    return mbs_cfgFail(c, s, "%s: name \"%s\" contains %s (names become CSV column names)", what,
                       name, why);
  return MBS_OK;
}

// ---------------------------------------------------------------- model: body tips

// the tip of every body built so far: length * direction in its frame for generated bodies and
// for explicit bodies with a length; a generator hung from such a body starts at its tip. Kept
// sparse by global body index (every generated body of one generator has the same tip), so a
// rank that builds only its own bodies knows the tip of any body
typedef struct {
  int *gid;   // (n) explicit bodies with a tip, increasing
  mbsReal *p; // (n x 3)
  int n, cap;
  int *gbase, *gnum; // (ng) generators: bodies gbase .. gbase + gnum - 1
  mbsReal *gp;       // (ng x 3)
  int ng, gcap;
} mbsTips;

static mbsErr mbs_tipGrow(int **a, int **b, mbsReal **p, int *cap, int need) {
  if (need <= *cap) return MBS_OK;
  int nc = *cap ? 2 * *cap : 16;
  int *na = realloc(*a, sizeof(int) * (size_t)nc);
  if (na) *a = na;
  int *nb = b ? realloc(*b, sizeof(int) * (size_t)nc) : NULL;
  if (nb) *b = nb;
  mbsReal *np = realloc(*p, sizeof(mbsReal) * 3 * (size_t)nc);
  if (np) *p = np;
  if (!na || (b && !nb) || !np) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  *cap = nc;
  return MBS_OK;
}

// the tip of explicit body gid (NULL: none)
static mbsErr mbs_tipSet(mbsTips *t, int gid, const mbsReal *tip) {
  if (!tip) return MBS_OK;
  MBS_CALL(mbs_tipGrow(&t->gid, NULL, &t->p, &t->cap, t->n + 1));
  t->gid[t->n] = gid;
  memcpy(t->p + 3 * t->n, tip, 3 * sizeof(mbsReal));
  t->n++;
  return MBS_OK;
}

// the tip shared by the n bodies of a generator from gid base
static mbsErr mbs_tipSetRange(mbsTips *t, int base, int n, const mbsReal *tip) {
  MBS_CALL(mbs_tipGrow(&t->gbase, &t->gnum, &t->gp, &t->gcap, t->ng + 1));
  t->gbase[t->ng] = base, t->gnum[t->ng] = n;
  memcpy(t->gp + 3 * t->ng, tip, 3 * sizeof(mbsReal));
  t->ng++;
  return MBS_OK;
}

static const mbsReal *mbs_tipGet(const mbsTips *t, int gid) {
  for (int k = 0; k < t->ng; k++)
    if (gid >= t->gbase[k] && gid < t->gbase[k] + t->gnum[k]) return t->gp + 3 * k;
  int lo = 0, hi = t->n - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (t->gid[mid] == gid) return t->p + 3 * mid;
    if (t->gid[mid] < gid)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return NULL;
}

static void mbs_tipFree(mbsTips *t) {
  free(t->gid), free(t->p), free(t->gbase), free(t->gnum), free(t->gp);
}

// ---------------------------------------------------------------- model: explicit bodies

static mbsErr mbs_cfgBody(const mbsConfig *c, mbsModel *m, const mbsCs *b, const mbsCs *list,
                          mbsTips *tips) {
  static const char *const bkeys[] = {"name",  "parent", "joint",  "mass", "com",       "inertia",
                                      "shape", "length", "radius", "size", "direction", NULL};
  static const char *const jkeys[] = {"type",      "axis",    "axis2",     "origin", "q0", "qd0",
                                      "stiffness", "damping", "springref", "force",  NULL};
  char what[320], path[64];
  mbs_cfgPath(b, path, sizeof path);
  if (config_setting_type(b) != CONFIG_TYPE_GROUP)
    return mbs_cfgFail(c, b, "%s: wrong type: a body is a group { name = ...; ... }, got %s", path,
                       mbs_cfgTypeName(b));
  MBS_CALL(mbs_cfgCheckKeys(c, b, bkeys));
  mbsBodySpec sp;
  mbs_bodySpecDefault(&sp);
  // the default axes of the input file, the same for explicit bodies and generators: rotation
  // about y (swinging in the x-z plane under gravity along -z), universal's second axis x
  sp.axis[0] = 0, sp.axis[1] = 1, sp.axis[2] = 0;
  sp.axis2[0] = 1, sp.axis2[1] = 0, sp.axis2[2] = 0;
  const char *name = NULL;
  MBS_CALL(mbs_cfgGetString(c, b, "name", &name));
  if (!name) return mbs_cfgFail(c, b, "%s: missing name", path);
  MBS_CALL(mbs_cfgCheckName(c, config_setting_get_member(b, "name"), path, name));
  snprintf(what, sizeof what, "body \"%s\"", name);
  sp.name = name;
  sp.keep_name = 1; // explicit bodies may be named as parents anywhere later in the file
  MBS_CALL(mbs_cfgParent(c, m, b, what, list, &sp.parent));

  // joint
  const mbsCs *j;
  MBS_CALL(mbs_cfgGetGroup(c, b, "joint", &j));
  if (!j) return mbs_cfgFail(c, b, "%s: missing joint = { type = ...; }", what);
  MBS_CALL(mbs_cfgCheckKeys(c, j, jkeys));
  const char *type = NULL;
  MBS_CALL(mbs_cfgGetString(c, j, "type", &type));
  if (!type) return mbs_cfgFail(c, j, "%s: missing joint type", what);
  sp.jnttype = mbs_jntFromName(type);
  if (sp.jnttype < 0)
    return mbs_cfgFail(c, config_setting_get_member(j, "type"),
                       "%s: unknown joint type \"%s\" (expected %s)", what, type,
                       mbs_jntNameList());
  int nq = mbs_jntNq(sp.jnttype), nv = mbs_jntNv(sp.jnttype);
  MBS_CALL(mbs_cfgGetVec(c, j, "axis", 3, sp.axis));
  MBS_CALL(mbs_cfgGetVec(c, j, "axis2", 3, sp.axis2));
  MBS_CALL(mbs_cfgGetVec(c, j, "origin", 3, sp.origin));
  mbs_jntDefaultQ0(sp.jnttype, sp.q0);
  const mbsCs *qs = config_setting_get_member(j, "q0");
  if (qs) {
    mbsReal *v;
    int cnt;
    MBS_CALL(mbs_cfgGetValues(c, j, "q0", &v, &cnt));
    if (cnt != nq) {
      free(v);
      return mbs_cfgFail(c, qs, "%s: wrong array length: q0 of a %s joint has %d value(s), got %d",
                         what, type, nq, cnt);
    }
    memcpy(sp.q0, v, (size_t)cnt * sizeof *v);
    free(v);
  }
  qs = config_setting_get_member(j, "qd0");
  if (qs) {
    mbsReal *v;
    int cnt;
    MBS_CALL(mbs_cfgGetValues(c, j, "qd0", &v, &cnt));
    if (cnt != nv) {
      free(v);
      return mbs_cfgFail(c, qs, "%s: wrong array length: qd0 of a %s joint has %d value(s), got %d",
                         what, type, nv, cnt);
    }
    memcpy(sp.qd0, v, (size_t)cnt * sizeof *v);
    free(v);
  }
  MBS_CALL(mbs_cfgDofValues(c, j, "stiffness", nv, what, sp.stiffness));
  MBS_CALL(mbs_cfgDofValues(c, j, "damping", nv, what, sp.damping));
  MBS_CALL(mbs_cfgDofValues(c, j, "springref", nv, what, sp.springref));
  MBS_CALL(mbs_cfgDofValues(c, j, "force", nv, what, sp.force));

  // mass properties
  mbsGeom geo;
  MBS_CALL(mbs_cfgReadGeom(c, b, 0, what, &geo));
  sp.mass = geo.mass;
  memcpy(sp.com, geo.com, sizeof sp.com);
  memcpy(sp.inertia, geo.inertia, sizeof sp.inertia);
  mbsReal tip[3] = {geo.length * geo.dir[0], geo.length * geo.dir[1], geo.length * geo.dir[2]};
  if (geo.length > 0) memcpy(sp.tip, tip, sizeof sp.tip); // drawn extent (outputs)
  int id = -1;
  MBS_CALL(mbs_cfgAdd(c, m, &sp, b, j, &geo, what, &id));
  return mbs_tipSet(tips, id, geo.length > 0 ? tip : NULL);
}

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
    if (mbs_jntScalar(gen->type) && gen->type != MBS_JNT_PRISMATIC) sp.q0[0] += fan;
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
      mbs_modelSkipBodies(m, gen.type, cnt, 1, prev);
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

static mbsErr mbs_cfgTree(const mbsConfig *c, mbsModel *m, const mbsCs *g, mbsTips *tips) {
  static const char *const keys[] = {"branching", "depth",     "parents", "name",   "parent",
                                     "joint",     "axis",      "axis2",   "origin", "length",
                                     "direction", "mass",      "shape",   "radius", "size",
                                     "inertia",   "com",       "q0",      "qd0",    "stiffness",
                                     "damping",   "springref", "force",   "spread", NULL};
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
  int k = 0, d = 0;
  int *plist = NULL;
  if (ps) {
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
  if (!e && gen.spread != 0 && gen.type != MBS_JNT_REVOLUTE && gen.type != MBS_JNT_SPHERICAL &&
      gen.type != MBS_JNT_FREE && gen.type != MBS_JNT_CYLINDRICAL && gen.type != MBS_JNT_UNIVERSAL)
    e = mbs_cfgFail(c, config_setting_get_member(g, "spread"),
                    "tree: spread needs a rotating joint (revolute, cylindrical, universal, "
                    "spherical or free), not %s",
                    mbs_jntName(gen.type));
  if (!e && plist) {
    // explicit parent list: tree body i+1 hangs from tree body plist[i] (0 = the tree's parent)
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
          mbs_modelSkipBodies(m, gen.type, (int)sz, 0, path[lvl]);
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
static mbsErr mbs_cfgGenerators(const mbsConfig *c, mbsModel *m, const mbsCs *s, int tree,
                                mbsTips *tips) {
  if (mbs_cfgIsList(s)) {
    for (int k = 0; k < config_setting_length(s); k++) {
      const mbsCs *g = config_setting_get_elem(s, (unsigned)k);
      MBS_CALL(tree ? mbs_cfgTree(c, m, g, tips) : mbs_cfgChain(c, m, g, tips));
    }
    return MBS_OK;
  }
  return tree ? mbs_cfgTree(c, m, s, tips) : mbs_cfgChain(c, m, s, tips);
}

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
  if (!has_ref && (type == MBS_JNT_PRISMATIC || type == MBS_JNT_FIXED))
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

static mbsErr mbs_cfgLoops(const mbsConfig *c, mbsModel *m, const mbsCs *list) {
  static const char *const keys[] = {"name", "type", "body1", "frame1", "body2", "frame2", NULL};
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
    if (sp.type < 0 || sp.type == MBS_JNT_FREE)
      return mbs_cfgFail(c, config_setting_get_member(g, "type"),
                         "%s: %s joint type \"%s\" (expected revolute, prismatic, cylindrical, "
                         "universal, spherical or fixed)",
                         what, sp.type < 0 ? "unknown" : "a cut joint cannot have", type);
    MBS_CALL(mbs_cfgBodyRef(c, m, g, "body1", what, &sp.body1));
    MBS_CALL(mbs_cfgBodyRef(c, m, g, "body2", what, &sp.body2));
    MBS_CALL(mbs_cfgLoopFrame(c, g, "frame1", what, sp.type, sp.frame1));
    MBS_CALL(mbs_cfgLoopFrame(c, g, "frame2", what, sp.type, sp.frame2));
    mbsErr e = mbs_modelAddLoop(m, &sp);
    if (e == MBS_ERR_INPUT) {
      char msg[1024];
      snprintf(msg, sizeof msg, "%s", mbs_errMsg());
      const mbsCs *at = strstr(msg, "name") ? config_setting_get_member(g, "name")
                                            : config_setting_get_member(g, "body2");
      return mbs_cfgFail(c, at ? at : g, "%s: %s", what, msg);
    }
    MBS_CALL(e);
  }
  return MBS_OK;
}

static mbsErr mbs_cfgForces(const mbsConfig *c, mbsModel *m, const mbsCs *list) {
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
static mbsErr mbs_cfgBuildInto(const mbsConfig *c, mbsModel *m) {
  const config_t *tree = (const config_t *)c->priv;
  const mbsCs *model = config_setting_get_member(config_root_setting(tree), "model");
  if (!model)
    return mbs_errSet(MBS_ERR_INPUT, "%s:1: empty model: there is no model group", c->filename);
  m->opt = c->opt;
  memcpy(m->gravity, c->gravity, sizeof m->gravity);
  mbsErr e = MBS_OK;
  mbsTips tips;
  memset(&tips, 0, sizeof tips);
  // bodies and generators in file order
  for (int k = 0; k < config_setting_length(model) && !e; k++) {
    const mbsCs *s = config_setting_get_elem(model, (unsigned)k);
    const char *name = config_setting_name(s);
    if (strcmp(name, "bodies") == 0) {
      if (!mbs_cfgIsList(s)) {
        e = mbs_cfgFail(c, s, "model.bodies: wrong type: expected a list ( {...}, {...} ), got %s",
                        mbs_cfgTypeName(s));
        break;
      }
      for (int b = 0; b < config_setting_length(s) && !e; b++)
        e = mbs_cfgBody(c, m, config_setting_get_elem(s, (unsigned)b), s, &tips);
    } else if (strcmp(name, "chain") == 0) {
      e = mbs_cfgGenerators(c, m, s, 0, &tips);
    } else if (strcmp(name, "tree") == 0) {
      e = mbs_cfgGenerators(c, m, s, 1, &tips);
    } else if (strcmp(name, "urdf") == 0) {
      // the robot, its root on the ground (the text was read by the caller)
      if (!c->urdf)
        e = mbs_errSet(MBS_ERR_INTERNAL, "%s: the URDF file %s was not read (mbs_configSetUrdf)",
                       c->filename, c->urdf_path ? c->urdf_path : "?");
      else
        e = mbs_urdfAddBodies(c->urdf, m, -1, c->nurdf_q0 ? c->urdf_q0 : NULL,
                              c->nurdf_qd0 ? c->urdf_qd0 : NULL);
      if (!e) mbs_cfgUrdfForces(c, m);
    }
  }
  mbs_tipFree(&tips);
  if (!e && m->nbody_g == 0 && c->urdf) // (found by fuzz_urdf: the message named the config)
    e = mbs_errSet(MBS_ERR_INPUT,
                   "%s:1: the robot has no body to simulate (its root link is the ground and every "
                   "other link is massless on a fixed joint, or there is none)",
                   c->urdf_path);
  if (!e && m->nbody_g == 0)
    e = mbs_cfgFail(c, model, "empty model: the model has no bodies (give bodies, chain or tree)");
  // cut joints and spring-dampers, after every body (they name bodies anywhere in the file);
  // full builds only: main.c builds every model with loops or forces whole on every rank
  const mbsCs *ls = config_setting_get_member(model, "loops"),
              *fs = config_setting_get_member(model, "forces");
  if (!e && ((ls && config_setting_length(ls)) || (fs && config_setting_length(fs))) && m->sub)
    e = mbs_errSet(MBS_ERR_UNSUPPORTED,
                   "%s: a distributed-memory model cannot hold loops or forces (build it whole)",
                   c->filename);
  if (!e && ls && !m->names_only) e = mbs_cfgLoops(c, m, ls);
  if (!e && fs && !m->names_only) e = mbs_cfgForces(c, m, fs);
  if (!e) {
    e = mbs_modelFinalize(m);
    if (e == MBS_ERR_INPUT) e = mbs_configBlame(c, "model", e);
  }
  // crba's dense joint-space inertia: refused here, at solver.method, rather than later
  // without a location (src/dynamics.c keeps the same limit)
  if (!e && mbs_solverCaps(m->opt.solver)->dense_inertia && m->nv > MBS_CFG_CRBA_MAXNV) {
    const mbsCs *sm = config_lookup((const config_t *)c->priv, "solver.method");
    e = mbs_cfgFail(c, sm ? sm : model,
                    "solver.method = crba needs a dense %d x %d joint-space inertia (%.3g GB); "
                    "at most %d degrees of freedom: use aba for models this large",
                    m->nv, m->nv, 8.0 * m->nv * (double)m->nv / 1e9, MBS_CFG_CRBA_MAXNV);
  }
  return e;
}

mbsErr mbs_configBuildModel(const mbsConfig *c, mbsModel **out) {
  *out = NULL;
  mbsModel *m;
  MBS_CALL(mbs_modelCreate(&m, 64));
  mbsErr e = mbs_cfgBuildInto(c, m);
  // a q0 off the loops is assembled onto them (Newton-Raphson); loops that cannot close are
  // input errors at model.loops
  if (!e && m->nloop) {
    e = mbs_loopAssemble(m);
    if (e == MBS_ERR_INPUT) {
      mbs_errPrefix("model.loops");
      e = mbs_configBlame(c, "model.loops", e);
    }
  }
  if (e) {
    mbs_modelDestroy(&m);
    return e;
  }
  *out = m;
  return MBS_OK;
}

mbsErr mbs_configValidate(const mbsConfig *c) {
  mbsModel *m;
  MBS_CALL(mbs_modelCreate(&m, 16));
  mbs_modelSubset(m, NULL, 0, 1);
  mbsErr e = mbs_cfgBuildInto(c, m);
  mbs_modelDestroy(&m);
  return e;
}

static int mbs_cmpInt(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

mbsErr mbs_configBuildLocal(const mbsConfig *c, int nranks, int rank, mbsModel **out) {
  *out = NULL;
  static const int none = -1;
  mbsModel *m0 = NULL, *m1 = NULL, *m2 = NULL;
  int *start = NULL, *sub = NULL;
  mbsErr e = mbs_modelCreate(&m0, 16);
  // pass 0: the joint types in global order (generators cost O(1)), then the decomposition
  if (!e) {
    mbs_modelSubset(m0, &none, 0, 0);
    e = mbs_cfgBuildInto(c, m0);
  }
  if (!e && m0->nrun < 0) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (model structure)");
  if (!e && !(start = malloc(sizeof(int) * (size_t)(nranks + 1))))
    e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  if (!e) {
    e = mbs_partitionRuns(m0->run_type, m0->run_len, m0->nrun, !m0->run_branched, m0->run_cut,
                          m0->nrun_cut, nranks, start);
    if (e == MBS_ERR_INPUT) e = mbs_configBlame(c, "model", e); // too many ranks: name the cause
  }
  int b0 = 0, b1 = 0;
  if (!e) b0 = start[rank], b1 = start[rank + 1];
  // pass A: the owned bodies' remote parents and remote children (nothing stored)
  if (!e) e = mbs_modelCreate(&m1, 16);
  if (!e) {
    mbs_modelSubset(m1, &none, 0, 0);
    mbs_modelRecord(m1, b0, b1);
    e = mbs_cfgBuildInto(c, m1);
  }
  // pass B: the local model, [remote parents | owned | remote children] in global order
  int nsub = 0;
  if (!e) {
    int cap = m1->nrec_par + (b1 - b0) + m1->nrec_child;
    mbs_modelDestroy(&m0);
    if (!(sub = malloc(sizeof(int) * (size_t)(cap + 1))))
      e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    for (int i = 0; !e && i < m1->nrec_par; i++) sub[nsub++] = m1->rec_par[i];
    for (int g = b0; !e && g < b1; g++) sub[nsub++] = g;
    for (int i = 0; !e && i < m1->nrec_child; i++) sub[nsub++] = m1->rec_child[i];
    if (!e) {
      qsort(sub, (size_t)nsub, sizeof *sub, mbs_cmpInt);
      int u = 0;
      for (int i = 0; i < nsub; i++)
        if (!u || sub[u - 1] != sub[i]) sub[u++] = sub[i];
      nsub = u;
      mbs_modelDestroy(&m1);
      e = mbs_modelCreate(&m2, nsub + 1);
    }
  }
  if (!e) {
    mbs_modelSubset(m2, sub, nsub, 0);
    int np = 0;
    while (np < nsub && sub[np] < b0) np++;
    m2->own0 = np, m2->own1 = np + (b1 - b0);
    e = mbs_cfgBuildInto(c, m2);
  }
  if (!e) {
    m2->part_start = start, m2->part_n = nranks, start = NULL;
    m2->sub = NULL; // the array goes away with this function
  }
  mbs_modelDestroy(&m0);
  mbs_modelDestroy(&m1);
  free(start), free(sub);
  if (e) {
    mbs_modelDestroy(&m2);
    return e;
  }
  *out = m2;
  return MBS_OK;
}

// ---------------------------------------------------------------- inverse motion

int mbs_configInverseCoords(const mbsModel *m) {
  int n = 0;
  for (int b = 0; b < m->nbody; b++)
    if (m->body_qnum[b] == m->body_dofnum[b]) n += m->body_qnum[b];
  return n;
}

mbsErr mbs_configInverseActuated(const mbsConfig *c, const mbsModel *m, int *act) {
  const mbsInverseSpec *iv = &c->inverse;
  const config_t *tree = (const config_t *)c->priv;
  const mbsCs *g = config_setting_get_member(config_root_setting(tree), "inverse");
  const mbsCs *as = g ? config_setting_get_member(g, "actuated") : NULL;
  for (int d = 0; d < m->nv; d++) act[d] = 0;
  if (iv->nactuated && !m->nloop)
    return mbs_cfgFail(c, as,
                       "inverse.actuated applies to models with loops (a tree needs a force on "
                       "every joint)");
  if (!iv->nactuated && m->nloop)
    return mbs_cfgFail(c, g ? g : config_setting_get_member(config_root_setting(tree), "model"),
                       "inverse on a model with loops needs inverse.actuated = [\"BODY\", ...]: "
                       "the bodies whose joints are driven (the others follow from the loops)");
  for (int k = 0; k < iv->nactuated; k++) {
    const mbsCs *e = mbs_cfgIsList(as) ? config_setting_get_elem(as, (unsigned)k) : as;
    int b = mbs_modelFindBody(m, iv->actuated[k]);
    if (b < 0) return mbs_cfgFail(c, e, "inverse.actuated: unknown body \"%s\"", iv->actuated[k]);
    if (!mbs_jntScalar(m->body_jnttype[b]))
      return mbs_cfgFail(c, e,
                         "inverse.actuated: the %s joint of \"%s\" cannot follow a profile "
                         "(revolute, prismatic, cylindrical or universal joints only)",
                         mbs_jntName(m->body_jnttype[b]), iv->actuated[k]);
    for (int j = 0; j < m->body_dofnum[b]; j++) act[m->body_dofadr[b] + j] = 1;
  }
  return MBS_OK;
}

mbsErr mbs_configInverse(const mbsConfig *c, const mbsModel *m, mbsReal *qs, mbsReal *qe) {
  const mbsInverseSpec *iv = &c->inverse;
  const config_t *tree = (const config_t *)c->priv;
  const mbsCs *g = config_setting_get_member(config_root_setting(tree), "inverse");
  int n = mbs_configInverseCoords(m);
  // loop models: q_start / q_end may list the actuated coordinates only
  int *act = NULL, na = 0;
  if (m->nloop && iv->nactuated) {
    act = calloc((size_t)m->nv + 1, sizeof *act);
    if (!act) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    mbsErr e = mbs_configInverseActuated(c, m, act);
    if (e) {
      free(act);
      return e;
    }
    for (int d = 0; d < m->nv; d++) na += act[d];
  }
  memcpy(qs, m->q0, (size_t)m->nq * sizeof *qs);
  memcpy(qe, m->q0, (size_t)m->nq * sizeof *qe);
  const int cnts[2] = {iv->nstart, iv->nend};
  const mbsReal *vals[2] = {iv->q_start, iv->q_end};
  static const char *const names[2] = {"q_start", "q_end"};
  mbsReal *dst[2] = {qs, qe};
  for (int w = 0; w < 2; w++) {
    if (!cnts[w]) continue;
    int only_act = act && cnts[w] == na && na != n;
    if (cnts[w] != 1 && cnts[w] != n && !only_act) {
      free(act);
      return mbs_cfgFail(c, g ? config_setting_get_member(g, names[w]) : NULL,
                         "inverse.%s: wrong array length: %d value(s), but the model has %d "
                         "scalar joint coordinates (revolute, prismatic, cylindrical, universal)%s",
                         names[w], cnts[w], n, act ? " (or give the actuated ones only)" : "");
    }
    int i = 0;
    for (int b = 0; b < m->nbody; b++) {
      int t = m->body_jnttype[b];
      if (m->body_qnum[b] != m->body_dofnum[b]) continue;
      if (only_act && !act[m->body_dofadr[b]]) continue;
      for (int k = 0; k < m->body_qnum[b]; k++, i++) {
        mbsReal v = vals[w][cnts[w] == 1 ? 0 : i];
        int rot =
            t == MBS_JNT_REVOLUTE || t == MBS_JNT_UNIVERSAL || (t == MBS_JNT_CYLINDRICAL && k == 0);
        if (iv->degrees && rot) v *= M_PI / 180;
        dst[w][m->body_qadr[b] + k] = v;
      }
    }
  }
  free(act);
  return MBS_OK;
}

// ---------------------------------------------------------------- JSON echo

static void mbs_cfgJsonValue(mbsJson *j, const char *key, const mbsCs *s) {
  switch (config_setting_type(s)) {
  case CONFIG_TYPE_GROUP:
    mbs_jsonBeginObject(j, key);
    for (int k = 0; k < config_setting_length(s); k++) {
      const mbsCs *e = config_setting_get_elem(s, (unsigned)k);
      mbs_cfgJsonValue(j, config_setting_name(e), e);
    }
    mbs_jsonEndObject(j);
    break;
  case CONFIG_TYPE_LIST:
  case CONFIG_TYPE_ARRAY: {
    // lists of numbers on one line
    int n = config_setting_length(s), numeric = n > 0;
    for (int k = 0; k < n && numeric; k++) {
      int t = config_setting_type(config_setting_get_elem(s, (unsigned)k));
      numeric = t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64 || t == CONFIG_TYPE_FLOAT;
    }
    if (numeric) {
      double *v = malloc((size_t)n * sizeof *v);
      if (v) {
        for (int k = 0; k < n; k++) {
          const mbsCs *e = config_setting_get_elem(s, (unsigned)k);
          int t = config_setting_type(e);
          v[k] = t == CONFIG_TYPE_FLOAT
                     ? config_setting_get_float(e)
                     : (double)(t == CONFIG_TYPE_INT ? config_setting_get_int(e)
                                                     : config_setting_get_int64(e));
        }
        mbs_jsonNumberArray(j, key, v, n);
        free(v);
        break;
      }
    }
    mbs_jsonBeginArray(j, key);
    for (int k = 0; k < n; k++) mbs_cfgJsonValue(j, NULL, config_setting_get_elem(s, (unsigned)k));
    mbs_jsonEndArray(j);
    break;
  }
  case CONFIG_TYPE_INT:
    mbs_jsonInt(j, key, config_setting_get_int(s));
    break;
  case CONFIG_TYPE_INT64:
    mbs_jsonInt(j, key, (long)config_setting_get_int64(s));
    break;
  case CONFIG_TYPE_FLOAT:
    mbs_jsonNumber(j, key, config_setting_get_float(s));
    break;
  case CONFIG_TYPE_STRING:
    mbs_jsonString(j, key, config_setting_get_string(s));
    break;
  case CONFIG_TYPE_BOOL:
    mbs_jsonBool(j, key, config_setting_get_bool(s));
    break;
  default:
    mbs_jsonNull(j, key);
  }
}

void mbs_configWriteJson(const mbsConfig *c, mbsJson *j) {
  const config_t *tree = (const config_t *)c->priv;
  const mbsCs *root = config_root_setting(tree);
  mbs_jsonString(j, "file", c->filename);
  mbs_jsonBeginArray(j, "set");
  for (int k = 0; k < c->nset; k++) mbs_jsonString(j, NULL, c->sets[k]);
  mbs_jsonEndArray(j);
  const mbsCs *desc = config_setting_get_member(root, "description");
  if (desc) mbs_cfgJsonValue(j, "description", desc);

  // the model as written (generators are not expanded), gravity resolved
  mbs_jsonBeginObject(j, "model");
  mbs_jsonNumberArray(j, "gravity", c->gravity, 3);
  const mbsCs *model = config_setting_get_member(root, "model");
  for (int k = 0; model && k < config_setting_length(model); k++) {
    const mbsCs *e = config_setting_get_elem(model, (unsigned)k);
    if (strcmp(config_setting_name(e), "gravity") != 0)
      mbs_cfgJsonValue(j, config_setting_name(e), e);
  }
  mbs_jsonEndObject(j);

  const mbsOption *o = &c->opt;
  mbs_jsonBeginObject(j, "solver");
  mbs_jsonString(j, "method", mbs_solverName(o->solver));
  mbs_jsonNumber(j, "tol", o->tol);
  mbs_jsonInt(j, "max_iter", o->max_iter);
  mbs_jsonInt(j, "check_every", o->check_every);
  mbs_jsonString(j, "criterion", mbs_criterionName(o->criterion));
  mbs_jsonNumber(j, "omega", o->omega);
  mbs_jsonNumber(j, "rho", o->rho);
  mbs_jsonString(j, "warm_start", mbs_warmStartName(o->warm_start));
  mbs_jsonString(j, "interface", mbs_interfaceName(o->iface));
  mbs_jsonNumberArray(j, "baumgarte", o->baumgarte, 2);
  mbs_jsonNumber(j, "rank_tol", o->rank_tol);
  mbs_jsonNumber(j, "closure_tol", o->closure_tol);
  mbs_jsonString(j, "loops", mbs_loopModeName(o->loops));
  mbs_jsonEndObject(j);

  mbs_jsonBeginObject(j, "integrator");
  mbs_jsonString(j, "method", mbs_integratorName(o->integrator));
  mbs_jsonNumber(j, "dt", o->dt);
  mbs_jsonNumber(j, "t_end", o->t_end);
  mbs_jsonNumber(j, "tol", o->int_tol);
  mbs_jsonBool(j, "projection", o->projection);
  mbs_jsonEndObject(j);

  mbs_jsonBeginObject(j, "output");
  mbs_jsonString(j, "dir", c->out_dir);
  mbs_jsonInt(j, "every", c->out_every);
  mbs_jsonInt(j, "checkpoint_every", c->out_checkpoint_every);
  mbs_jsonString(j, "format", mbs_outFormatName(c->out_format));
  mbs_jsonBool(j, "joint_wrench", c->out_joint_wrench);
  if (c->out_flush_rows) {
    char fr[32];
    snprintf(fr, sizeof fr, "%d rows", c->out_flush_rows);
    mbs_jsonString(j, "flush_every", fr);
  } else {
    mbs_jsonNumber(j, "flush_every", c->out_flush_sec);
  }
  mbs_jsonEndObject(j);

  const mbsInverseSpec *iv = &c->inverse;
  if (iv->present) {
    mbs_jsonBeginObject(j, "inverse");
    mbs_jsonNumber(j, "T", iv->T);
    mbs_jsonInt(j, "steps", iv->steps);
    mbs_jsonString(j, "angle_unit", iv->degrees ? "deg" : "rad");
    if (iv->nstart) mbs_jsonNumberArray(j, "q_start", iv->q_start, iv->nstart);
    if (iv->nend) mbs_jsonNumberArray(j, "q_end", iv->q_end, iv->nend);
    if (iv->motion) mbs_jsonString(j, "motion", iv->motion);
    if (iv->nactuated) {
      mbs_jsonBeginArray(j, "actuated");
      for (int k = 0; k < iv->nactuated; k++) mbs_jsonString(j, NULL, iv->actuated[k]);
      mbs_jsonEndArray(j);
    }
    mbs_jsonEndObject(j);
  }

  const mbsStaticOpt *so = &c->statics;
  mbs_jsonBeginObject(j, "static");
  mbs_jsonString(j, "method", mbs_staticMethodName(so->method));
  mbs_jsonNumber(j, "dt", so->dt);
  mbs_jsonNumber(j, "ke_tol", so->ke_tol);
  mbs_jsonNumber(j, "dq_tol", so->dq_tol);
  mbs_jsonInt(j, "max_iter", so->max_iter);
  mbs_jsonNumber(j, "omega_d", so->omega_d);
  mbs_jsonInt(j, "history", so->history);
  mbs_jsonEndObject(j);

  mbs_jsonBeginObject(j, "cpa");
  mbs_jsonNumber(j, "latency", c->cpa.latency);
  mbs_jsonNumber(j, "bandwidth", c->cpa.bandwidth);
  mbs_jsonNumber(j, "flop_time", c->cpa.flop_time);
  mbs_jsonEndObject(j);
}

int mbs_configIsSet(const mbsConfig *cfg, const char *path) {
  const config_t *tree = (const config_t *)cfg->priv;
  return tree && config_lookup(tree, path) != NULL;
}

// ---------------------------------------------------------------- errors found after parsing

mbsErr mbs_configBlame(const mbsConfig *cfg, const char *path, mbsErr e) {
  const config_t *tree = (const config_t *)cfg->priv;
  const mbsCs *s = tree ? config_lookup(tree, path) : NULL;
  const char *set = s ? mbs_cfgSetOf(s) : NULL;
  // an aggregate (say "model") is blamed on the last --set inside it
  size_t n = strlen(path);
  for (int k = cfg->nset - 1; k >= 0 && !set; k--) {
    const char *key = cfg->sets[k];
    if (!strncmp(key, path, n) && (key[n] == '=' || key[n] == '.' || key[n] == '[')) set = key;
  }
  if (set) {
    mbs_errPrefix("--set %s", set);
    return e == MBS_ERR_INPUT ? MBS_ERR_USAGE : e;
  }
  // else the setting's line, or that of its nearest ancestor in the file
  char buf[256];
  snprintf(buf, sizeof buf, "%s", path);
  while (!s && buf[0]) {
    char *dot = strrchr(buf, '.');
    if (!dot) break;
    *dot = 0;
    s = config_lookup(tree, buf);
  }
  mbs_errPrefix("%s:%d", cfg->filename, s ? mbs_cfgLine(s) : 1);
  return e;
}

// ---------------------------------------------------------------- size before building

// bodies of one generator group, counted without building it; 0 if it is malformed or out of
// its own range (mbs_configBuildModel reports those with their specific message). *at: the
// setting that sets the count.
static long long mbs_cfgGenCount(const mbsCs *g, int tree, const mbsCs **at) {
  *at = g;
  if (config_setting_type(g) != CONFIG_TYPE_GROUP) return 0;
  if (!tree) {
    const mbsCs *s = config_setting_get_member(g, "n");
    if (!s) return 0;
    int t = config_setting_type(s);
    long long n = 0;
    if (t == CONFIG_TYPE_INT) n = config_setting_get_int(s);
    if (t == CONFIG_TYPE_INT64) n = config_setting_get_int64(s);
    *at = s;
    return n >= 1 && n <= MBS_CFG_MAXBODIES ? n : 0;
  }
  const mbsCs *ps = config_setting_get_member(g, "parents");
  if (ps) {
    *at = ps;
    return mbs_cfgIsList(ps) ? config_setting_length(ps) : 0;
  }
  const mbsCs *ks = config_setting_get_member(g, "branching"),
              *ds = config_setting_get_member(g, "depth");
  long long k = 0, d = 0, n = 0, pw = 1;
  for (int w = 0; w < 2; w++) {
    const mbsCs *x = w ? ds : ks;
    long long *v = w ? &d : &k;
    int t = x ? config_setting_type(x) : CONFIG_TYPE_NONE;
    if (t == CONFIG_TYPE_INT) *v = config_setting_get_int(x);
    if (t == CONFIG_TYPE_INT64) *v = config_setting_get_int64(x);
  }
  if (k < 1 || d < 1 || k > MBS_CFG_MAXBODIES) return 0;
  *at = ds;
  for (long long l = 0; l < d && n <= MBS_CFG_MAXBODIES; l++, pw *= k) {
    n += pw;
    if (pw > MBS_CFG_MAXBODIES) break; // k^l alone is past the cap: stop before it overflows
  }
  return n <= MBS_CFG_MAXBODIES ? n : 0;
}

mbsErr mbs_configCountBodies(const mbsConfig *cfg, long long *nbody, const void **largest) {
  const config_t *tree = (const config_t *)cfg->priv;
  const mbsCs *model = config_setting_get_member(config_root_setting(tree), "model");
  long long total = 0, best = -1;
  *nbody = 0;
  if (largest) *largest = model;
  if (!model || config_setting_type(model) != CONFIG_TYPE_GROUP) return MBS_OK;
  for (int k = 0; k < config_setting_length(model); k++) {
    const mbsCs *s = config_setting_get_elem(model, (unsigned)k);
    const char *name = config_setting_name(s);
    int isbody = !strcmp(name, "bodies"), istree = !strcmp(name, "tree");
    if (!isbody && !istree && strcmp(name, "chain")) continue;
    // a generator key holds one group or a list of groups
    int ng = (!isbody && mbs_cfgIsList(s)) ? config_setting_length(s) : 1;
    for (int i = 0; i < ng; i++) {
      const mbsCs *at = s;
      long long n;
      if (isbody)
        n = mbs_cfgIsList(s) ? config_setting_length(s) : 0;
      else
        n = mbs_cfgGenCount(mbs_cfgIsList(s) ? config_setting_get_elem(s, (unsigned)i) : s, istree,
                            &at);
      total += n;
      if (n > best && largest) best = n, *largest = at;
      if (total > MBS_CFG_MAXBODIES)
        return mbs_cfgFail(
            cfg, at, "model: more than %d bodies in all (the cap of one model; docs/model.md)",
            MBS_CFG_MAXBODIES);
    }
  }
  *nbody = total;
  return MBS_OK;
}

mbsErr mbs_configCheckMemory(const mbsConfig *cfg, const mbsMemBudget *b, long long *nbody) {
  const void *largest = NULL;
  long long n;
  MBS_CALL(mbs_configCountBodies(cfg, &n, &largest));
  if (nbody) *nbody = n;
  double per_rank = (double)n * b->bytes_per_body + b->bytes_fixed;
  double need = per_rank * (b->ranks_here > 0 ? b->ranks_here : 1);
  if (!(need > b->avail)) return MBS_OK;
  return mbs_cfgFail(cfg, (const mbsCs *)largest,
                     "model too large for the memory here: %lld bodies need about %.3g GB per "
                     "rank for %s (%.0f bytes per body), %d rank(s) on this host about %.3g GB, "
                     "but %.3g GB is available (%s); use fewer bodies, fewer ranks per host or "
                     "more hosts",
                     n, per_rank / 1e9, b->what ? b->what : "this verb", b->bytes_per_body,
                     b->ranks_here > 0 ? b->ranks_here : 1, need / 1e9, b->avail / 1e9,
                     b->source ? b->source : "estimate");
}
