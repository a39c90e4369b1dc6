/// \file config_opts.c
/// The option groups of the config (solver, integrator, output, inverse, static, cpa) as
/// descriptor tables (one mbsOptDesc row per key, docs/code.md "Adding a config option"), with
/// their custom readers and cross-key checks; model.formulation; the names of enumerated values.
/// The reader, the JSON echo and `mbspar help config` made from the rows are in config_desc.c.

#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include "config_private.h"

static const char *const mbs_crit_names[] = {"residual", "change", NULL};
static const char *const mbs_iface_names[] = {"cr", "jcg", NULL};
static const char *const mbs_warm_names[] = {"none",      "previous", "linear",
                                             "quadratic", "cubic",    NULL};
static const char *const mbs_loops_names[] = {"auto", "unit", "rows", NULL};
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
  return mbs_nameOf(mbs_integrator_names, 4, i);
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
static int mbs_optEqualMethod(const void *a, const void *b) {
  return *(const int *)a == *(const int *)b; // mbsOption.solver
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
static const mbsOptDesc mbs_solver_opts[] = {
    {.key = "method",
     .type = MBS_OPT_CUSTOM,
     .offset = 0,
     .read = mbs_optReadMethod,
     .echo = mbs_optEchoMethod,
     .show = mbs_optShowMethod,
     .range = mbs_optRangeMethod,
     .equal = mbs_optEqualMethod,
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
     .no_equal = 1, // the loop layer's (read from the model at each evaluation)
     .help = "closed loops: [alpha, beta] of c'' + 2 alpha c' + beta^2 c = 0"},
    {.key = "rank_tol",
     .type = MBS_OPT_REAL,
     .offset = MBS_OO(rank_tol),
     .lo = 0,
     .lo_open = 1,
     .hi = 1,
     .hi_open = 1,
     .msg = "solver.rank_tol must be in (0, 1) (a relative pivot; got %g)",
     .no_equal = 1, // the loop layer's (read from the model at each evaluation)
     .help = "closed loops: relative pivot below which a closure equation is redundant"},
    {.key = "closure_tol",
     .type = MBS_OPT_REAL,
     .offset = MBS_OO(closure_tol),
     .lo = 1e-15,
     .hi = 1e-2,
     .msg = "solver.closure_tol must be in [1e-15, 1e-2] (m or rad; got %g)",
     .no_equal = 1, // the loop layer's (read from the model at each evaluation)
     .help = "closed loops: Newton-Raphson stops at max |c| below this (m, rad)"},
    {.key = "loops",
     .type = MBS_OPT_ENUM,
     .offset = MBS_OO(loops),
     .names = mbs_loops_names,
     .check = mbs_optCheckLoops,
     .no_equal = 1, // the loop layer's (read from the model at each evaluation)
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
  if (!mbs_integratorType(o->integrator)->adaptive && steps > MBS_CFG_MAXSTEPS) {
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
                       "integrator.method = \"dp5\" or \"abm\")",
                       o->dt, o->t_end, steps, mbs_integrator_names[o->integrator],
                       MBS_CFG_MAXSTEPS);
  }
  return MBS_OK;
}
static const mbsOptDesc mbs_integrator_opts[] = {
    {.key = "method",
     .type = MBS_OPT_ENUM,
     .offset = MBS_OO(integrator),
     .names = mbs_integrator_names,
     .help = "time integrator (dp5, abm: adaptive; docs/model.md)"},
    {.key = "dt",
     .type = MBS_OPT_REAL,
     .offset = MBS_OO(dt),
     .lo = 0,
     .lo_open = 1,
     MBS_NOHI,
     .help = "time step, or the initial step of dp5 (abm chooses its own) [s]"},
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
     .help = "dp5, abm: relative error per step (floor 1e-14)"},
    {.key = "projection",
     .type = MBS_OPT_BOOL,
     .offset = MBS_OO(projection),
     .check = mbs_optCheckSteps,
     .help = "closed loops: project q and qd onto the loops after each step"},
    {.key = "projection_tol",
     .type = MBS_OPT_REAL,
     .offset = MBS_OO(proj_tol),
     .lo = 0,
     .lo_open = 1,
     MBS_NOHI,
     .help = "model.formulation = natural, dp5: project (p, pd) when a constraint residual "
             "exceeds this (rk4 projects after every step; docs/natural.md 12)"},
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

// ---------------------------------------------------------------- the groups

static void *mbs_optBaseOpt(mbsConfig *c) {
  return &c->opt;
}
static void *mbs_optBaseCfg(mbsConfig *c) {
  return c;
}
static const mbsOptGroup mbs_opt_group_solver = {"solver", mbs_solver_opts,
                                                 MBS_NROWS(mbs_solver_opts), mbs_optBaseOpt};
static const mbsOptGroup mbs_opt_group_integrator = {
    "integrator", mbs_integrator_opts, MBS_NROWS(mbs_integrator_opts), mbs_optBaseOpt};
static const mbsOptGroup mbs_opt_group_output = {"output", mbs_output_opts,
                                                 MBS_NROWS(mbs_output_opts), mbs_optBaseCfg};
// the verbs' groups (inverse, static, cpa) are in config_verbopts.c
const mbsOptGroup *const mbs_opt_groups[] = {&mbs_opt_group_solver, &mbs_opt_group_integrator,
                                             &mbs_opt_group_output, &mbs_opt_group_inverse,
                                             &mbs_opt_group_static, &mbs_opt_group_cpa};
const int mbs_opt_ngroups = MBS_NROWS(mbs_opt_groups);

int mbs_configSolverOptEqual(const mbsOption *a, const mbsOption *b) {
  return mbs_cfgDescsEqual(&mbs_opt_group_solver, a, b);
}

const mbsOptGroup *mbs_cfgOptGroup(const char *name) {
  for (int k = 0; k < mbs_opt_ngroups; k++)
    if (!strcmp(mbs_opt_groups[k]->name, name)) return mbs_opt_groups[k];
  return NULL;
}
