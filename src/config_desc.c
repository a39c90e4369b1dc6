/// \file config_desc.c
/// The machinery of the option descriptors (config_private.h mbsOptDesc, docs/code.md "Adding a
/// config option"), apart from the tables themselves (config_opts.c): a group's reader with its
/// FILE:LINE checks (mbs_cfgReadDescs), its JSON echo (mbs_cfgEchoDescs), and `mbspar help config`
/// with the key list the docs are generated from (mbs_configHelp, mbs_configKeyInfo).

#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include "config_private.h"

// the descriptors' group: check the keys, read each (integers: bounds as read), then the real
// bounds and the cross-key checks in row order
mbsErr mbs_cfgReadDescs(mbsConfig *c, const mbsCs *root, const mbsOptGroup *grp) {
  const char *keys[33];
  const mbsCs *g;
  const mbsOptDesc *d = grp->rows;
  int n = grp->n;
  char *at = grp->base(c);
  if (n > 32) return mbs_errSet(MBS_ERR_INTERNAL, "config: group %s has too many keys", grp->name);
  MBS_CALL(mbs_cfgGetGroup(c, root, grp->name, &g));
  if (!g) return MBS_OK;
  for (int k = 0; k < n; k++) keys[k] = d[k].key;
  keys[n] = NULL;
  MBS_CALL(mbs_cfgCheckKeys(c, g, keys));
  for (int k = 0; k < n; k++) {
    void *f = at + d[k].offset;
    const mbsCs *s = config_setting_get_member(g, d[k].key);
    switch (d[k].type) {
    case MBS_OPT_REAL:
      MBS_CALL(mbs_cfgGetReal(c, g, d[k].key, f));
      break;
    case MBS_OPT_INT:
      MBS_CALL(mbs_cfgGetInt(c, g, d[k].key, d[k].ilo, d[k].ihi, f));
      break;
    case MBS_OPT_ENUM:
      MBS_CALL(mbs_cfgGetEnum(c, g, d[k].key, d[k].names, f));
      break;
    case MBS_OPT_VEC2:
      MBS_CALL(mbs_cfgGetVec(c, g, d[k].key, 2, f));
      break;
    case MBS_OPT_CUSTOM:
      MBS_CALL(d[k].read(c, s, at));
      break;
    case MBS_OPT_BOOL:
      if (!s) break;
      if (config_setting_type(s) != CONFIG_TYPE_BOOL)
        return mbs_cfgFail(c, s, "%s.%s: wrong type: expected true or false, got %s", grp->name,
                           d[k].key, mbs_cfgTypeName(s));
      *(int *)f = config_setting_get_bool(s);
      break;
    case MBS_OPT_STRING: {
      const char *v = NULL;
      MBS_CALL(mbs_cfgGetString(c, g, d[k].key, &v));
      if (!v) break;
      if (!v[0]) return mbs_cfgFail(c, s, "%s.%s is empty", grp->name, d[k].key);
      char *dup = mbs_strdup(v);
      if (!dup) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
      free(*(char **)f);
      *(char **)f = dup;
      break;
    }
    }
  }
  for (int k = 0; k < n; k++) {
    int nv = d[k].type == MBS_OPT_REAL ? 1 : d[k].type == MBS_OPT_VEC2 ? 2 : 0;
    const mbsReal *v = (const mbsReal *)(at + d[k].offset);
    int ok = 1;
    for (int i = 0; i < nv; i++)
      ok = ok && (d[k].lo_open ? v[i] > d[k].lo : v[i] >= d[k].lo) &&
           (d[k].hi_open ? v[i] < d[k].hi : v[i] <= d[k].hi);
    const mbsCs *s = config_setting_get_member(g, d[k].key);
    if (!ok && d[k].msg) return mbs_cfgFail(c, s, d[k].msg, v[0], nv > 1 ? v[1] : 0.0);
    if (!ok && d[k].hi == INFINITY)
      return mbs_cfgFail(c, s, "%s.%s must be %s %g (got %g)", grp->name, d[k].key,
                         d[k].lo_open ? ">" : ">=", d[k].lo, v[0]);
    if (!ok)
      return mbs_cfgFail(c, s, "%s.%s must be in %c%g, %g%c (got %g)", grp->name, d[k].key,
                         d[k].lo_open ? '(' : '[', d[k].lo, d[k].hi, d[k].hi_open ? ')' : ']',
                         v[0]);
    if (d[k].check) MBS_CALL(d[k].check(c, g, at));
  }
  return MBS_OK;
}

void mbs_cfgEchoDescs(mbsJson *j, const mbsConfig *c, const mbsOptGroup *grp) {
  const char *at = grp->base((mbsConfig *)c);
  mbs_jsonBeginObject(j, grp->name);
  for (int k = 0; k < grp->n; k++) {
    const mbsOptDesc *d = grp->rows + k;
    const void *f = at + d->offset;
    switch (d->type) {
    case MBS_OPT_REAL:
      mbs_jsonNumber(j, d->key, *(const mbsReal *)f);
      break;
    case MBS_OPT_INT:
      mbs_jsonInt(j, d->key, *(const int *)f);
      break;
    case MBS_OPT_ENUM:
      mbs_jsonString(j, d->key, d->names[*(const int *)f]);
      break;
    case MBS_OPT_BOOL:
      mbs_jsonBool(j, d->key, *(const int *)f);
      break;
    case MBS_OPT_VEC2:
      mbs_jsonNumberArray(j, d->key, (const mbsReal *)f, 2);
      break;
    case MBS_OPT_STRING:
      mbs_jsonString(j, d->key, *(char *const *)f);
      break;
    case MBS_OPT_CUSTOM:
      d->echo(j, c, d, at);
      break;
    }
  }
  mbs_jsonEndObject(j);
}

int mbs_cfgDescsEqual(const mbsOptGroup *grp, const void *a, const void *b) {
  for (int k = 0; k < grp->n; k++) {
    const mbsOptDesc *d = grp->rows + k;
    const char *fa = (const char *)a + d->offset, *fb = (const char *)b + d->offset;
    int eq = 1;
    if (d->no_equal) continue;
    switch (d->type) {
    case MBS_OPT_REAL:
      eq = *(const mbsReal *)fa == *(const mbsReal *)fb;
      break;
    case MBS_OPT_INT:
    case MBS_OPT_ENUM:
    case MBS_OPT_BOOL:
      eq = *(const int *)fa == *(const int *)fb;
      break;
    case MBS_OPT_VEC2:
      eq = ((const mbsReal *)fa)[0] == ((const mbsReal *)fb)[0] &&
           ((const mbsReal *)fa)[1] == ((const mbsReal *)fb)[1];
      break;
    case MBS_OPT_STRING: {
      const char *sa = *(char *const *)fa, *sb = *(char *const *)fb;
      eq = sa == sb || (sa && sb && !strcmp(sa, sb));
      break;
    }
    case MBS_OPT_CUSTOM:
      eq = d->equal && d->equal(fa, fb);
      break;
    }
    if (!eq) return 0;
  }
  return 1;
}

// ---------------------------------------------------------------- help config

static void mbs_optRange(const mbsOptDesc *d, char *buf, size_t n) {
  size_t len = 0;
  switch (d->type) {
  case MBS_OPT_REAL:
  case MBS_OPT_VEC2:
    if (d->type == MBS_OPT_VEC2) len = (size_t)snprintf(buf, n, "[a, b], each ");
    if (len >= n) break;
    if (d->hi == INFINITY && d->lo == -INFINITY)
      snprintf(buf + len, n - len, "any");
    else if (d->hi == INFINITY)
      snprintf(buf + len, n - len, "%s %g", d->lo_open ? ">" : ">=", d->lo);
    else
      snprintf(buf + len, n - len, "%c%g, %g%c", d->lo_open ? '(' : '[', d->lo, d->hi,
               d->hi_open ? ')' : ']');
    break;
  case MBS_OPT_INT:
    if (d->ihi == INT_MAX)
      snprintf(buf, n, ">= %d", d->ilo);
    else
      snprintf(buf, n, "[%d, %d]", d->ilo, d->ihi);
    break;
  case MBS_OPT_ENUM:
    buf[0] = 0;
    for (int k = 0; d->names[k] && len < n; k++)
      len += (size_t)snprintf(buf + len, n - len, "%s%s", k ? "|" : "", d->names[k]);
    break;
  case MBS_OPT_BOOL:
    snprintf(buf, n, "true|false");
    break;
  case MBS_OPT_STRING:
    snprintf(buf, n, "not empty");
    break;
  case MBS_OPT_CUSTOM:
    d->range(buf, n);
    break;
  }
}

static void mbs_optShow(const mbsOptDesc *d, const mbsConfig *c, const void *base, char *buf,
                        size_t n) {
  const void *f = (const char *)base + d->offset;
  switch (d->type) {
  case MBS_OPT_REAL:
    snprintf(buf, n, "%g", *(const mbsReal *)f);
    break;
  case MBS_OPT_INT:
    snprintf(buf, n, "%d", *(const int *)f);
    break;
  case MBS_OPT_ENUM:
    snprintf(buf, n, "%s", d->names[*(const int *)f]);
    break;
  case MBS_OPT_BOOL:
    snprintf(buf, n, "%s", *(const int *)f ? "true" : "false");
    break;
  case MBS_OPT_VEC2: {
    const mbsReal *v = f;
    snprintf(buf, n, "[%g, %g]", v[0], v[1]);
    break;
  }
  case MBS_OPT_STRING:
    snprintf(buf, n, "%s", *(char *const *)f);
    break;
  case MBS_OPT_CUSTOM:
    d->show(buf, n, c, base);
    break;
  }
}

static const char *const mbs_opt_type_names[] = {"real", "int",    "enum", "bool",
                                                 "vec2", "string", "text"};

int mbs_configKeyInfo(int k, mbsConfigKeyInfo *info) {
  int total = 0;
  for (int g = 0; g < mbs_opt_ngroups; g++) total += mbs_opt_groups[g]->n;
  if (!info || k < 0 || k >= total) return total;
  int g = 0;
  while (k >= mbs_opt_groups[g]->n) k -= mbs_opt_groups[g++]->n;
  const mbsOptGroup *grp = mbs_opt_groups[g];
  const mbsOptDesc *d = grp->rows + k;
  // the defaults: those mbs_configParse starts from (mbs_optionDefault for solver, integrator)
  mbsConfig c;
  char outdir[] = "out";
  memset(&c, 0, sizeof c);
  mbs_cfgDefaults(&c);
  c.out_dir = outdir;
  c.sauto.on = 1; // solver.method = auto
  snprintf(info->key, sizeof info->key, "%s.%s", grp->name, d->key);
  snprintf(info->type, sizeof info->type, "%s", mbs_opt_type_names[d->type]);
  mbs_optRange(d, info->range, sizeof info->range);
  mbs_optShow(d, &c, grp->base(&c), info->def, sizeof info->def);
  snprintf(info->sample, sizeof info->sample, "%s", d->example ? d->example : info->def);
  info->help = d->help;
  return total;
}

void mbs_configHelp(FILE *f) {
  mbsConfigKeyInfo ki;
  fputs("config keys of the option groups (mbspar help config; set in the file or with --set "
        "KEY=VALUE)\n\n",
        f);
  fprintf(f, "%-27s %-6s %-24s %-10s %s\n", "KEY", "TYPE", "RANGE", "DEFAULT", "HELP");
  int n = mbs_configKeyInfo(0, NULL);
  for (int k = 0; k < n; k++) {
    mbs_configKeyInfo(k, &ki);
    fprintf(f, "%-27s %-6s %-24s %-10s %s\n", ki.key, ki.type, ki.range, ki.def, ki.help);
  }
}
