/// \file config_opts.c
/// The option groups of the config (solver, integrator, output, inverse, static, cpa) as
/// descriptor tables (one mbsOptDesc row per key, docs/code.md "Adding a config option"): the
/// reader (mbs_cfgReadDescs), the JSON echo (mbs_cfgEchoDescs) and `mbspar help config`
/// (mbs_configHelp) are made from the rows; model.formulation; the names of enumerated values.

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

// solver.method: "auto" (the default) or a row of the solver table
static mbsErr mbs_optReadMethod(mbsConfig *c, const mbsCs *s, void *base) {
  mbsOption *o = base;
  const char *method = NULL;
  if (!s) return MBS_OK;
  MBS_CALL(mbs_cfgGetString(c, config_setting_parent(s), "method", &method));
  if (!strcmp(method, "auto")) return MBS_OK;
  c->sauto.on = 0;
  o->solver = mbs_solverFromName(method);
  if (o->solver < 0) {
    char allowed[256];
    mbs_solverNames(allowed, sizeof allowed); // the solver table
    return mbs_cfgFail(c, s, "solver.method: unknown value \"%s\" (expected one of: auto, %s)",
                       method, allowed);
  }
  return MBS_OK;
}
static void mbs_optEchoMethod(mbsJson *j, const mbsConfig *c, const mbsOptDesc *d,
                              const void *base) {
  const mbsOption *o = base;
  mbs_jsonString(j, d->key, mbs_solverName(o->solver));
  mbs_jsonBool(j, "auto", c->sauto.on); // the method chosen by solver.method = auto
}
static void mbs_optRangeMethod(char *buf, size_t n) {
  char names[200];
  mbs_solverNames(names, sizeof names);
  snprintf(buf, n, "auto, %s", names);
}
static void mbs_optShowMethod(char *buf, size_t n, const mbsConfig *c, const void *base) {
  const mbsOption *o = base;
  snprintf(buf, n, "%s", c->sauto.on ? "auto" : mbs_solverName(o->solver));
}
static mbsErr mbs_optCheckTol(const mbsConfig *c, const mbsCs *g, const void *base) {
  const mbsOption *o = base;
  if (o->tol < MBS_CFG_MINTOL)
    return mbs_cfgFail(c, config_setting_get_member(g, "tol"),
                       "solver.tol = %g is below what double precision can meet: relative "
                       "residuals stall near 1e-15, so the floor is %g",
                       o->tol, MBS_CFG_MINTOL);
  return MBS_OK;
}
static mbsErr mbs_optCheckLoops(const mbsConfig *c, const mbsCs *g, const void *base) {
  const mbsOption *o = base;
  if (o->loops == MBS_LOOPS_ROWS &&
      !(mbs_solverFind(o->solver) && mbs_solverFind(o->solver)->iterative))
    return mbs_cfgFail(c, config_setting_get_member(g, "loops"),
                       "solver.loops = \"rows\" needs an iterative method of the engine (jacobi, "
                       "gs, sor, chebyshev, jcg or petsc; solver.method is \"%s\")",
                       mbs_solverName(o->solver));
  return MBS_OK;
}

#define MBS_OO(f) offsetof(mbsOption, f)
#define MBS_NOLO  .lo = -INFINITY
#define MBS_NOHI  .hi = INFINITY
static const mbsOptDesc mbs_solver_opts[] = {
    {.key = "method",
     .type = MBS_OPT_CUSTOM,
     .offset = 0,
     .read = mbs_optReadMethod,
     .echo = mbs_optEchoMethod,
     .show = mbs_optShowMethod,
     .range = mbs_optRangeMethod,
     .help = "auto (chosen for the model and ranks) or a method of the solver table"},
    {.key = "tol",
     .type = MBS_OPT_REAL,
     .offset = MBS_OO(tol),
     .lo = 0,
     .lo_open = 1,
     MBS_NOHI,
     .check = mbs_optCheckTol,
     .help = "constraint-force solver tolerance (relative; floor 1e-14)"},
    {.key = "max_iter",
     .type = MBS_OPT_INT,
     .offset = MBS_OO(max_iter),
     .ilo = 1,
     .ihi = INT_MAX,
     .help = "iteration cap of the iterative solvers"},
    {.key = "check_every",
     .type = MBS_OPT_INT,
     .offset = MBS_OO(check_every),
     .ilo = 1,
     .ihi = INT_MAX,
     .help = "jacobi, gs, sor, chebyshev: test convergence every N iterations"},
    {.key = "criterion",
     .type = MBS_OPT_ENUM,
     .offset = MBS_OO(criterion),
     .names = mbs_crit_names,
     .help = "convergence test of the iterative solvers"},
    {.key = "omega",
     .type = MBS_OPT_REAL,
     .offset = MBS_OO(omega),
     .lo = 0,
     .lo_open = 1,
     .hi = 2,
     .hi_open = 1,
     .help = "SOR relaxation factor"},
    {.key = "rho",
     .type = MBS_OPT_REAL,
     .offset = MBS_OO(rho),
     .lo = 0,
     .hi = 1,
     .hi_open = 1,
     .msg = "solver.rho must be in [0, 1) (0 = estimate; got %g)",
     .help = "spectral radius for chebyshev (0: estimate)"},
    {.key = "warm_start",
     .type = MBS_OPT_ENUM,
     .offset = MBS_OO(warm_start),
     .names = mbs_warm_names,
     .help = "initial guess of the iterative solvers from past steps"},
    {.key = "interface",
     .type = MBS_OPT_ENUM,
     .offset = MBS_OO(iface),
     .names = mbs_iface_names,
     .help = "cut-joint system of schur: cr (merge) or jcg (J-CG)"},
    {.key = "baumgarte",
     .type = MBS_OPT_VEC2,
     .offset = MBS_OO(baumgarte),
     .lo = 0,
     MBS_NOHI,
     .msg = "solver.baumgarte = [alpha, beta] must be >= 0 (got [%g, %g])",
     .help = "closed loops: [alpha, beta] of c'' + 2 alpha c' + beta^2 c = 0"},
    {.key = "rank_tol",
     .type = MBS_OPT_REAL,
     .offset = MBS_OO(rank_tol),
     .lo = 0,
     .lo_open = 1,
     .hi = 1,
     .hi_open = 1,
     .msg = "solver.rank_tol must be in (0, 1) (a relative pivot; got %g)",
     .help = "closed loops: relative pivot below which a closure equation is redundant"},
    {.key = "closure_tol",
     .type = MBS_OPT_REAL,
     .offset = MBS_OO(closure_tol),
     .lo = 1e-15,
     .hi = 1e-2,
     .msg = "solver.closure_tol must be in [1e-15, 1e-2] (m or rad; got %g)",
     .help = "closed loops: Newton-Raphson stops at max |c| below this (m, rad)"},
    {.key = "loops",
     .type = MBS_OPT_ENUM,
     .offset = MBS_OO(loops),
     .names = mbs_loops_names,
     .check = mbs_optCheckLoops,
     .help = "closure equations in the constraint-force methods (rows: iterative methods)"},
};

mbsErr mbs_cfgReadSolver(mbsConfig *c, const mbsCs *root) {
  // solver.method = "auto", the default: cfg->opt.solver keeps the provisional default until
  // mbsp_solverAuto chooses (parallel/solver_auto.c, docs/model.md "Choosing the method")
  c->sauto.on = 1;
  return mbs_cfgReadDescs(c, root, mbs_cfgOptGroup("solver"));
}

static mbsErr mbs_optCheckIntTol(const mbsConfig *c, const mbsCs *g, const void *base) {
  const mbsOption *o = base;
  if (o->int_tol < MBS_CFG_MINTOL)
    return mbs_cfgFail(c, config_setting_get_member(g, "tol"),
                       "integrator.tol = %g is below what double precision can meet: the floor "
                       "of the relative error per step is %g",
                       o->int_tol, MBS_CFG_MINTOL);
  return MBS_OK;
}
// fixed-step methods take t_end/dt steps; PETSc counts them in a 32-bit integer
static mbsErr mbs_optCheckSteps(const mbsConfig *c, const mbsCs *g, const void *base) {
  const mbsOption *o = base;
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
static const mbsOptDesc mbs_integrator_opts[] = {
    {.key = "method",
     .type = MBS_OPT_ENUM,
     .offset = MBS_OO(integrator),
     .names = mbs_int_names,
     .help = "time integrator (dp5: adaptive)"},
    {.key = "dt",
     .type = MBS_OPT_REAL,
     .offset = MBS_OO(dt),
     .lo = 0,
     .lo_open = 1,
     MBS_NOHI,
     .help = "time step, or the initial step of dp5 [s]"},
    {.key = "t_end",
     .type = MBS_OPT_REAL,
     .offset = MBS_OO(t_end),
     .lo = 0,
     MBS_NOHI,
     .help = "end time of a run [s] (fixed steps: at most 1e9 steps)"},
    {.key = "tol",
     .type = MBS_OPT_REAL,
     .offset = MBS_OO(int_tol),
     .lo = 0,
     .lo_open = 1,
     MBS_NOHI,
     .check = mbs_optCheckIntTol,
     .help = "dp5: relative error per step (floor 1e-14)"},
    {.key = "projection",
     .type = MBS_OPT_BOOL,
     .offset = MBS_OO(projection),
     .check = mbs_optCheckSteps,
     .help = "closed loops: project q and qd onto the loops after each step"},
};

mbsErr mbs_cfgReadIntegrator(mbsConfig *c, const mbsCs *root) {
  return mbs_cfgReadDescs(c, root, mbs_cfgOptGroup("integrator"));
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

static mbsErr mbs_optReadFlush(mbsConfig *c, const mbsCs *s, void *base) {
  (void)base;
  return mbs_cfgReadFlush(c, s);
}
static void mbs_optRangeFlush(char *buf, size_t n) {
  snprintf(buf, n, "seconds >= 0 or \"N rows\"");
}
static void mbs_optShowFlush(char *buf, size_t n, const mbsConfig *c, const void *base) {
  (void)base;
  if (c->out_flush_rows)
    snprintf(buf, n, "%d rows", c->out_flush_rows);
  else
    snprintf(buf, n, "%g", c->out_flush_sec);
}
static void mbs_optEchoFlush(mbsJson *j, const mbsConfig *c, const mbsOptDesc *d,
                             const void *base) {
  (void)base;
  if (c->out_flush_rows) {
    char fr[32];
    mbs_optShowFlush(fr, sizeof fr, c, base);
    mbs_jsonString(j, d->key, fr);
  } else {
    mbs_jsonNumber(j, d->key, c->out_flush_sec);
  }
}
#define MBS_OC(f) offsetof(mbsConfig, f)
static const mbsOptDesc mbs_output_opts[] = {
    {.key = "dir",
     .type = MBS_OPT_STRING,
     .offset = MBS_OC(out_dir),
     .help = "output directory (relative to the working directory)"},
    {.key = "every",
     .type = MBS_OPT_INT,
     .offset = MBS_OC(out_every),
     .ilo = 1,
     .ihi = INT_MAX,
     .help = "write a row every N steps"},
    {.key = "checkpoint_every",
     .type = MBS_OPT_INT,
     .offset = MBS_OC(out_checkpoint_every),
     .ilo = 0,
     .ihi = INT_MAX,
     .help = "write a restart checkpoint every N steps (0: none)"},
    {.key = "format",
     .type = MBS_OPT_ENUM,
     .offset = MBS_OC(out_format),
     .names = mbs_fmt_names,
     .help = "time-history format"},
    {.key = "joint_wrench",
     .type = MBS_OPT_BOOL,
     .offset = MBS_OC(out_joint_wrench),
     .help = "write the joint reaction wrenches"},
    {.key = "flush_every",
     .type = MBS_OPT_CUSTOM,
     .read = mbs_optReadFlush,
     .echo = mbs_optEchoFlush,
     .show = mbs_optShowFlush,
     .range = mbs_optRangeFlush,
     .help = "flush every N seconds (0: every row) or \"N rows\""},
};

mbsErr mbs_cfgReadOutput(mbsConfig *c, const mbsCs *root) {
  return mbs_cfgReadDescs(c, root, mbs_cfgOptGroup("output"));
}

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
  const char *slash = strrchr(c->filename, '/');
  size_t dl = mot[0] == '/' || !slash ? 0 : (size_t)(slash - c->filename + 1);
  iv->motion = malloc(dl + strlen(mot) + 1);
  if (!iv->motion) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  memcpy(iv->motion, c->filename, dl);
  memcpy(iv->motion + dl, mot, strlen(mot) + 1);
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

// ---------------------------------------------------------------- the groups

static void *mbs_optBaseOpt(mbsConfig *c) {
  return &c->opt;
}
static void *mbs_optBaseCfg(mbsConfig *c) {
  return c;
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
#define MBS_NROWS(t) ((int)(sizeof t / sizeof t[0]))
const mbsOptGroup mbs_opt_groups[] = {
    {"solver", mbs_solver_opts, MBS_NROWS(mbs_solver_opts), mbs_optBaseOpt},
    {"integrator", mbs_integrator_opts, MBS_NROWS(mbs_integrator_opts), mbs_optBaseOpt},
    {"output", mbs_output_opts, MBS_NROWS(mbs_output_opts), mbs_optBaseCfg},
    {"inverse", mbs_inverse_opts, MBS_NROWS(mbs_inverse_opts), mbs_optBaseInverse},
    {"static", mbs_static_opts, MBS_NROWS(mbs_static_opts), mbs_optBaseStatic},
    {"cpa", mbs_cpa_opts, MBS_NROWS(mbs_cpa_opts), mbs_optBaseCpa},
};
const int mbs_opt_ngroups = MBS_NROWS(mbs_opt_groups);

const mbsOptGroup *mbs_cfgOptGroup(const char *name) {
  for (int k = 0; k < mbs_opt_ngroups; k++)
    if (!strcmp(mbs_opt_groups[k].name, name)) return mbs_opt_groups + k;
  return NULL;
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
  for (int g = 0; g < mbs_opt_ngroups; g++) total += mbs_opt_groups[g].n;
  if (!info || k < 0 || k >= total) return total;
  int g = 0;
  while (k >= mbs_opt_groups[g].n) k -= mbs_opt_groups[g++].n;
  const mbsOptGroup *grp = mbs_opt_groups + g;
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
