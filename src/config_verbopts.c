/// \file config_verbopts.c
/// The verbs' option groups as descriptor tables (config_private.h mbsOptDesc; docs/code.md
/// "Adding a config option"): inverse (the motion of `mbspar inverse`: q_start, q_end, a motion
/// file, the actuated joints), static (`mbspar static`, docs/static.md) and cpa (the analyser's
/// cost model); their groups join the table of groups in config_opts.c.

#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stddef.h>
#include "config_private.h"

// inverse.q_start, q_end: one value (broadcast) or one per coordinate
static mbsErr mbs_optReadQStart(mbsConfig *c, const mbsCs *s, void *base) {
  mbsInverseSpec *iv = base;
  return s ? mbs_cfgGetValues(c, config_setting_parent(s), "q_start", &iv->q_start, &iv->nstart)
           : MBS_OK;
}
static mbsErr mbs_optReadQEnd(mbsConfig *c, const mbsCs *s, void *base) {
  mbsInverseSpec *iv = base;
  return s ? mbs_cfgGetValues(c, config_setting_parent(s), "q_end", &iv->q_end, &iv->nend) : MBS_OK;
}
static void mbs_optEchoQStart(mbsJson *j, const mbsConfig *c, const mbsOptDesc *d,
                              const void *base) {
  const mbsInverseSpec *iv = base;
  (void)c;
  if (iv->nstart) mbs_jsonNumberArray(j, d->key, iv->q_start, iv->nstart);
}
static void mbs_optEchoQEnd(mbsJson *j, const mbsConfig *c, const mbsOptDesc *d, const void *base) {
  const mbsInverseSpec *iv = base;
  (void)c;
  if (iv->nend) mbs_jsonNumberArray(j, d->key, iv->q_end, iv->nend);
}
static void mbs_optRangeValues(char *buf, size_t n) {
  snprintf(buf, n, "a number or a list, one per coordinate");
}
static void mbs_optShowNone(char *buf, size_t n, const mbsConfig *c, const void *base) {
  (void)c, (void)base;
  snprintf(buf, n, "none");
}

// inverse.motion: a CSV file relative to the config's directory
static mbsErr mbs_optReadMotion(mbsConfig *c, const mbsCs *s, void *base) {
  mbsInverseSpec *iv = base;
  const char *mot = NULL;
  if (!s) return MBS_OK;
  MBS_CALL(mbs_cfgGetString(c, config_setting_parent(s), "motion", &mot));
  if (!mot[0]) return mbs_cfgFail(c, s, "inverse.motion: empty file name");
  MBS_CALL(mbs_cfgResolve(c, mot, &iv->motion));
  iv->motion_line = mbs_cfgLine(s);
  return MBS_OK;
}
static void mbs_optEchoMotion(mbsJson *j, const mbsConfig *c, const mbsOptDesc *d,
                              const void *base) {
  const mbsInverseSpec *iv = base;
  (void)c;
  if (iv->motion) mbs_jsonString(j, d->key, iv->motion);
}
static void mbs_optRangeFile(char *buf, size_t n) {
  snprintf(buf, n, "a CSV file (t, q)");
}

// inverse.actuated: the actuated joints of a model with loops, body names (a string or a list)
static mbsErr mbs_optReadActuated(mbsConfig *c, const mbsCs *as, void *base) {
  mbsInverseSpec *iv = base;
  if (!as) return MBS_OK;
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
  return MBS_OK;
}
static void mbs_optEchoActuated(mbsJson *j, const mbsConfig *c, const mbsOptDesc *d,
                                const void *base) {
  const mbsInverseSpec *iv = base;
  (void)c;
  if (!iv->nactuated) return;
  mbs_jsonBeginArray(j, d->key);
  for (int k = 0; k < iv->nactuated; k++) mbs_jsonString(j, NULL, iv->actuated[k]);
  mbs_jsonEndArray(j);
}
static void mbs_optRangeNames(char *buf, size_t n) {
  snprintf(buf, n, "a body name or a list of them");
}

static const char *const mbs_unit_names[] = {"rad", "deg", NULL};
#define MBS_IO(f) offsetof(mbsInverseSpec, f)
static const mbsOptDesc mbs_inverse_opts[] = {
    {.key = "T",
     .type = MBS_OPT_REAL,
     .offset = MBS_IO(T),
     .lo = 0,
     .lo_open = 1,
     MBS_NOHI,
     .help = "duration of the prescribed motion [s]"},
    {.key = "steps",
     .type = MBS_OPT_INT,
     .offset = MBS_IO(steps),
     .ilo = 1,
     .ihi = 100000000,
     .help = "intervals of the motion (steps + 1 samples)"},
    {.key = "angle_unit",
     .type = MBS_OPT_ENUM,
     .offset = MBS_IO(degrees),
     .names = mbs_unit_names,
     .help = "unit of the rotation coordinates of q_start and q_end"},
    {.key = "q_start",
     .type = MBS_OPT_CUSTOM,
     .read = mbs_optReadQStart,
     .echo = mbs_optEchoQStart,
     .show = mbs_optShowNone,
     .range = mbs_optRangeValues,
     .example = "0",
     .help = "start coordinates (none: q0)"},
    {.key = "q_end",
     .type = MBS_OPT_CUSTOM,
     .read = mbs_optReadQEnd,
     .echo = mbs_optEchoQEnd,
     .show = mbs_optShowNone,
     .range = mbs_optRangeValues,
     .example = "0.5",
     .help = "end coordinates (none: q0)"},
    {.key = "motion",
     .type = MBS_OPT_CUSTOM,
     .read = mbs_optReadMotion,
     .echo = mbs_optEchoMotion,
     .show = mbs_optShowNone,
     .range = mbs_optRangeFile,
     .example = "motion.csv",
     .help = "a user motion instead of the profile (relative to the config's directory)"},
    {.key = "actuated",
     .type = MBS_OPT_CUSTOM,
     .read = mbs_optReadActuated,
     .echo = mbs_optEchoActuated,
     .show = mbs_optShowNone,
     .range = mbs_optRangeNames,
     .example = "link1",
     .help = "closed loops: the bodies whose joints are driven"},
};

mbsErr mbs_cfgReadInverse(mbsConfig *c, const mbsCs *root) {
  if (config_setting_get_member(root, "inverse")) c->inverse.present = 1;
  return mbs_cfgReadDescs(c, root, mbs_cfgOptGroup("inverse"));
}

// the static verb's group (docs/static.md); defaults in mbs_staticOptDefault
static const char *const mbs_static_methods[] = {"kinetic", "drain", NULL};
#define MBS_SO(f) offsetof(mbsStaticOpt, f)
static const mbsOptDesc mbs_static_opts[] = {
    {.key = "method",
     .type = MBS_OPT_ENUM,
     .offset = MBS_SO(method),
     .names = mbs_static_methods,
     .help = "kinetic (damped by energy peaks) or drain (a damping operator)"},
    {.key = "dt",
     .type = MBS_OPT_REAL,
     .offset = MBS_SO(dt),
     .lo = 0,
     .lo_open = 1,
     MBS_NOHI,
     .help = "pseudo-time step [s]"},
    {.key = "ke_tol",
     .type = MBS_OPT_REAL,
     .offset = MBS_SO(ke_tol),
     .lo = 0,
     .lo_open = 1,
     MBS_NOHI,
     .help = "kinetic-energy tolerance [J]"},
    {.key = "dq_tol",
     .type = MBS_OPT_REAL,
     .offset = MBS_SO(dq_tol),
     .lo = 0,
     .lo_open = 1,
     MBS_NOHI,
     .help = "coordinate-change tolerance"},
    {.key = "max_iter",
     .type = MBS_OPT_INT,
     .offset = MBS_SO(max_iter),
     .ilo = 1,
     .ihi = INT_MAX,
     .help = "most steps"},
    {.key = "omega_d",
     .type = MBS_OPT_REAL,
     .offset = MBS_SO(omega_d),
     .lo = 0,
     MBS_NOHI,
     .help = "drain damping [rad/s]"},
    {.key = "history",
     .type = MBS_OPT_INT,
     .offset = MBS_SO(history),
     .ilo = 2,
     .ihi = 100000000,
     .help = "energy-history samples kept"},
};

mbsErr mbs_cfgReadStatic(mbsConfig *c, const mbsCs *root) {
  return mbs_cfgReadDescs(c, root, mbs_cfgOptGroup("static"));
}

#define MBS_CO(f) offsetof(mbsCpaSpec, f)
static const mbsOptDesc mbs_cpa_opts[] = {
    {.key = "latency",
     .type = MBS_OPT_REAL,
     .offset = MBS_CO(latency),
     .lo = 0,
     MBS_NOHI,
     .help = "modelled message latency [s]"},
    {.key = "bandwidth",
     .type = MBS_OPT_REAL,
     .offset = MBS_CO(bandwidth),
     .lo = 0,
     .lo_open = 1,
     MBS_NOHI,
     .help = "modelled bandwidth [byte/s]"},
    {.key = "flop_time",
     .type = MBS_OPT_REAL,
     .offset = MBS_CO(flop_time),
     .lo = 0,
     .lo_open = 1,
     MBS_NOHI,
     .help = "modelled time per flop [s]"},
};

mbsErr mbs_cfgReadCpa(mbsConfig *c, const mbsCs *root) {
  return mbs_cfgReadDescs(c, root, mbs_cfgOptGroup("cpa"));
}

static void *mbs_optBaseInverse(mbsConfig *c) {
  return &c->inverse;
}
static void *mbs_optBaseStatic(mbsConfig *c) {
  return &c->statics;
}
static void *mbs_optBaseCpa(mbsConfig *c) {
  return &c->cpa;
}
const mbsOptGroup mbs_opt_group_inverse = {"inverse", mbs_inverse_opts, MBS_NROWS(mbs_inverse_opts),
                                           mbs_optBaseInverse};
const mbsOptGroup mbs_opt_group_static = {"static", mbs_static_opts, MBS_NROWS(mbs_static_opts),
                                          mbs_optBaseStatic};
const mbsOptGroup mbs_opt_group_cpa = {"cpa", mbs_cpa_opts, MBS_NROWS(mbs_cpa_opts),
                                       mbs_optBaseCpa};
