/// \file config_opts.c
/// The option groups of the config (solver, integrator, output, inverse, static, cpa) and the
/// names of their enumerated values.

#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include "config_private.h"

static const char *const mbs_crit_names[] = {"residual", "change", NULL};
static const char *const mbs_iface_names[] = {"cr", "jcg", NULL};
static const char *const mbs_warm_names[] = {"none",      "previous", "linear",
                                             "quadratic", "cubic",    NULL};
static const char *const mbs_loops_names[] = {"auto", "unit", "rows", NULL};
static const char *const mbs_int_names[] = {"euler", "rk4", "dp5", NULL};
static const char *const mbs_fmt_names[] = {"csv", "hdf5", NULL};
const char *const mbs_shape_names[] = {"rod", "box", "sphere", NULL};

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

// ---------------------------------------------------------------- options

mbsErr mbs_cfgReadSolver(mbsConfig *c, const mbsCs *root) {
  static const char *const keys[] = {
      "method",    "tol",       "max_iter", "criterion",   "omega", "rho",         "warm_start",
      "interface", "baumgarte", "rank_tol", "closure_tol", "loops", "check_every", NULL};
  const mbsCs *g;
  // solver.method = "auto", the default: cfg->opt.solver keeps the provisional default until
  // mbsp_solverAuto chooses (parallel/solver_auto.c, docs/model.md "Choosing the method")
  c->sauto.on = 1;
  MBS_CALL(mbs_cfgGetGroup(c, root, "solver", &g));
  if (!g) return MBS_OK;
  MBS_CALL(mbs_cfgCheckKeys(c, g, keys));
  mbsOption *o = &c->opt;
  const char *method = NULL;
  MBS_CALL(mbs_cfgGetString(c, g, "method", &method));
  if (method && strcmp(method, "auto") != 0) {
    c->sauto.on = 0;
    o->solver = mbs_solverFromName(method);
    if (o->solver < 0) {
      char allowed[256];
      mbs_solverNames(allowed, sizeof allowed); // the solver table
      return mbs_cfgFail(c, config_setting_get_member(g, "method"),
                         "solver.method: unknown value \"%s\" (expected one of: auto, %s)", method,
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

mbsErr mbs_cfgReadIntegrator(mbsConfig *c, const mbsCs *root) {
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

mbsErr mbs_cfgReadOutput(mbsConfig *c, const mbsCs *root) {
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

mbsErr mbs_cfgReadInverse(mbsConfig *c, const mbsCs *root) {
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

// model.formulation = "joint" (the default) or "natural" (docs/natural.md 8): the natural
// formulation is the serial method `natural` of the solver table, so it excludes another
// solver.method; solver.method = natural alone means the same.
mbsErr mbs_cfgReadFormulation(mbsConfig *c, const mbsCs *model) {
  const mbsCs *s = config_setting_get_member(model, "formulation");
  const mbsCs *sm = config_lookup((const config_t *)c->priv, "solver.method");
  int natural = mbs_solverCaps(c->opt.solver)->natural && sm;
  if (s) {
    if (config_setting_type(s) != CONFIG_TYPE_STRING)
      return mbs_cfgFail(c, s,
                         "model.formulation: wrong type: expected \"joint\" or \"natural\", got %s",
                         mbs_cfgTypeName(s));
    const char *v = config_setting_get_string(s);
    if (strcmp(v, "joint") && strcmp(v, "natural"))
      return mbs_cfgFail(
          c, s, "model.formulation: unknown value \"%s\" (expected \"joint\" or \"natural\")", v);
    if (!strcmp(v, "joint") && natural)
      return mbs_cfgFail(
          c, sm,
          "solver.method = natural is the natural formulation, but model.formulation "
          "= \"joint\"");
    if (!strcmp(v, "natural")) {
      if (sm && !natural && !c->sauto.on) { // the formulation wins (a --set on a shipped
                                            // config), with a note
        c->natural_over = c->opt.solver + 1;
        c->natural_over_line = config_setting_source_line(sm);
      }
      natural = 1;
    }
  }
  if (!natural) return MBS_OK;
  c->opt.solver = MBS_SOLVER_NATURAL;
  c->loop_default_aba = 0;
  c->sauto.on = 0; // nothing to choose
  return MBS_OK;
}

// the descriptors' group: check the keys, read each (integers: bounds as read), then the real
// bounds in row order
mbsErr mbs_cfgReadDescs(const mbsConfig *c, const mbsCs *root, const char *group,
                        const mbsOptDesc *d, int n, void *base) {
  const char *keys[33];
  const mbsCs *g;
  char *at = base;
  if (n > 32) return mbs_errSet(MBS_ERR_INTERNAL, "config: group %s has too many keys", group);
  MBS_CALL(mbs_cfgGetGroup(c, root, group, &g));
  if (!g) return MBS_OK;
  for (int k = 0; k < n; k++) keys[k] = d[k].key;
  keys[n] = NULL;
  MBS_CALL(mbs_cfgCheckKeys(c, g, keys));
  for (int k = 0; k < n; k++) {
    void *f = at + d[k].offset;
    if (d[k].type == MBS_OPT_REAL) MBS_CALL(mbs_cfgGetReal(c, g, d[k].key, f));
    if (d[k].type == MBS_OPT_INT) MBS_CALL(mbs_cfgGetInt(c, g, d[k].key, d[k].ilo, d[k].ihi, f));
    if (d[k].type == MBS_OPT_ENUM) MBS_CALL(mbs_cfgGetEnum(c, g, d[k].key, d[k].names, f));
  }
  for (int k = 0; k < n; k++) {
    if (d[k].type != MBS_OPT_REAL || d[k].lo == -INFINITY) continue;
    mbsReal v = *(const mbsReal *)(at + d[k].offset);
    if (d[k].lo_open ? v > d[k].lo : v >= d[k].lo) continue;
    return mbs_cfgFail(c, config_setting_get_member(g, d[k].key), "%s.%s must be %s %g (got %g)",
                       group, d[k].key, d[k].lo_open ? ">" : ">=", d[k].lo, v);
  }
  return MBS_OK;
}

void mbs_cfgEchoDescs(mbsJson *j, const char *group, const mbsOptDesc *d, int n, const void *base) {
  const char *at = base;
  mbs_jsonBeginObject(j, group);
  for (int k = 0; k < n; k++) {
    const void *f = at + d[k].offset;
    if (d[k].type == MBS_OPT_REAL) mbs_jsonNumber(j, d[k].key, *(const mbsReal *)f);
    if (d[k].type == MBS_OPT_INT) mbs_jsonInt(j, d[k].key, *(const int *)f);
    if (d[k].type == MBS_OPT_ENUM) mbs_jsonString(j, d[k].key, d[k].names[*(const int *)f]);
  }
  mbs_jsonEndObject(j);
}

// the static verb's group (docs/static.md); defaults in mbs_staticOptDefault
static const char *const mbs_static_methods[] = {"kinetic", "drain", NULL};
#define MBS_SO(f) offsetof(mbsStaticOpt, f)
const mbsOptDesc mbs_static_opts[] = {
    {"method", MBS_OPT_ENUM, MBS_SO(method), 0, 0, 0, 0, mbs_static_methods,
     "kinetic (damped by energy peaks) or drain (a damping operator)"},
    {"dt", MBS_OPT_REAL, MBS_SO(dt), 0, 1, 0, 0, NULL, "pseudo-time step [s], > 0"},
    {"ke_tol", MBS_OPT_REAL, MBS_SO(ke_tol), 0, 1, 0, 0, NULL, "kinetic-energy tolerance [J], > 0"},
    {"dq_tol", MBS_OPT_REAL, MBS_SO(dq_tol), 0, 1, 0, 0, NULL, "coordinate-change tolerance, > 0"},
    {"max_iter", MBS_OPT_INT, MBS_SO(max_iter), -INFINITY, 0, 1, INT_MAX, NULL, "most steps"},
    {"omega_d", MBS_OPT_REAL, MBS_SO(omega_d), 0, 0, 0, 0, NULL, "drain damping [rad/s], >= 0"},
    {"history", MBS_OPT_INT, MBS_SO(history), -INFINITY, 0, 2, 100000000, NULL,
     "energy-history samples kept"},
};
const int mbs_static_nopt = (int)(sizeof mbs_static_opts / sizeof mbs_static_opts[0]);

mbsErr mbs_cfgReadStatic(mbsConfig *c, const mbsCs *root) {
  return mbs_cfgReadDescs(c, root, "static", mbs_static_opts, mbs_static_nopt, &c->statics);
}

mbsErr mbs_cfgReadCpa(mbsConfig *c, const mbsCs *root) {
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
