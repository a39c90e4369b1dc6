/// \file config_read.c
/// The config reader (docs/config.md): locations and FILE:LINE messages, the typed readers of
/// settings, the text preprocessing before libconfig parses it, and the --set overrides that
/// edit the libconfig tree in place.

#define _POSIX_C_SOURCE 200809L
#include "config_private.h"

char *mbs_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

// ---------------------------------------------------------------- locations and messages

// dotted path of a setting: model.bodies[2].joint.axis
void mbs_cfgPath(const mbsCs *s, char *buf, size_t n) {
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
const char *mbs_cfgSetOf(const mbsCs *s) {
  for (const mbsCs *p = s; p; p = config_setting_parent(p))
    if (config_setting_get_hook(p)) return (const char *)config_setting_get_hook(p);
  return NULL;
}

int mbs_cfgLine(const mbsCs *s) {
  for (const mbsCs *p = s; p; p = config_setting_parent(p))
    if (config_setting_source_line(p) > 0) return (int)config_setting_source_line(p);
  return 1;
}

// record "FILE:LINE: msg" (or "--set K=V: msg") for setting s and return the code
mbsErr mbs_cfgFail(const mbsConfig *c, const mbsCs *s, const char *fmt, ...) {
  char msg[1536];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const char *set = s ? mbs_cfgSetOf(s) : NULL;
  if (set) return mbs_errSet(MBS_ERR_USAGE, "--set %s: %s", set, msg);
  return mbs_errSet(MBS_ERR_INPUT, "%s:%d: %s", c->filename, s ? mbs_cfgLine(s) : 1, msg);
}

const char *mbs_cfgTypeName(const mbsCs *s) {
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

int mbs_cfgIsList(const mbsCs *s) {
  return config_setting_type(s) == CONFIG_TYPE_LIST || config_setting_type(s) == CONFIG_TYPE_ARRAY;
}

// unknown keys are errors
mbsErr mbs_cfgCheckKeys(const mbsConfig *c, const mbsCs *g, const char *const *keys) {
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
mbsErr mbs_cfgNumber(const mbsConfig *c, const mbsCs *s, mbsReal *v) {
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

mbsErr mbs_cfgGetReal(const mbsConfig *c, const mbsCs *g, const char *key, mbsReal *v) {
  const mbsCs *s = config_setting_get_member(g, key);
  if (s) MBS_CALL(mbs_cfgNumber(c, s, v));
  return MBS_OK;
}

// The one reader of integers: an integer setting as 64 bits (the preprocessor makes libconfig
// keep every literal exactly), in [lo, hi]; out-of-range values are printed as written
mbsErr mbs_cfgInt(const mbsConfig *c, const mbsCs *s, long long lo, long long hi, long long *v) {
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
mbsErr mbs_cfgGetInt(const mbsConfig *c, const mbsCs *g, const char *key, int lo, int hi, int *v) {
  const mbsCs *s = config_setting_get_member(g, key);
  long long x;
  if (!s) return MBS_OK;
  MBS_CALL(mbs_cfgInt(c, s, lo, hi, &x));
  *v = (int)x;
  return MBS_OK;
}

mbsErr mbs_cfgGetString(const mbsConfig *c, const mbsCs *g, const char *key, const char **v) {
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
mbsErr mbs_cfgGetEnum(const mbsConfig *c, const mbsCs *g, const char *key, const char *const *names,
                      int *v) {
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
mbsErr mbs_cfgGetVec(const mbsConfig *c, const mbsCs *g, const char *key, int n, mbsReal *v) {
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
mbsErr mbs_cfgGetValues(const mbsConfig *c, const mbsCs *g, const char *key, mbsReal **v,
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
mbsErr mbs_cfgGetGroup(const mbsConfig *c, const mbsCs *g, const char *key, const mbsCs **out) {
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
mbsErr mbs_cfgPreprocess(const char *text, const char *filename, const char *set, char **out) {
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

mbsErr mbs_cfgApplySet(config_t *tree, char *set) {
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
