/// \file abm_cvode.c
/// The Adams–Bashforth–Moulton core (src/abm.c, mbs_abm.h) against SUNDIALS CVODE's Adams method
/// with its fixed-point (functional) nonlinear solver, on a model from a config (issue 36,
/// docs/integrator_abm.md section 5). Serial, the core library only: the right side is the serial
/// ABA (mbs_forward with solver.method = aba, the joint forces and spring-dampers of the config)
/// on the state y = (q, q̇). Restricted to models whose joints have scalar coordinates (revolute,
/// prismatic, cylindrical, universal, fixed: q' = q̇) and no closed loops (those need the
/// quaternion rate, the renormalisation or the projection of the engine's integrator).
///
/// For each TOL both integrate from the config's initial state to t_end with rtol = atol = TOL
/// (the same weighted norm: component i weighted by 1 / (TOL (1 + |y_i|))) and land on t_end
/// exactly. The error is max_i |q_i − q_ref,i| / max(1, max_i |q_ref,i|) at t_end against CVODE at
/// the reference tolerance (abm at that tolerance is printed beside it as a check). Reports per
/// method and TOL: error, right-side evaluations, steps, rejected steps, the orders used, wall
/// time (under whatever load the machine has).
///
/// usage: abm_cvode [CONFIG] [--t-end T] [--tols T1,T2,...] [--ref TOL] [--csv FILE]
///                  [--label NAME] [--ref-out FILE] [--check] [--set KEY=VALUE ...]
///        abm_cvode --print-config
///   CONFIG absent: the built-in 8-link chain released from a bent pose (ABM_CHAIN8 below;
///   --print-config prints it). --csv appends the rows to FILE; --ref-out writes the reference
///   q at t_end, one value a line (bench/abm_cvode.sh measures `mbspar run`'s dp5 against it).
///   --check: the CTest abm_cvode (docs/integrator_abm.md section 5): TOL 1e-6 and 1e-9 only,
///   asserts that abm's error is within ABM_FACTOR of CVODE's at each TOL, that it falls by more
///   than 100 from 1e-6 to 1e-9, and that orders of 8 or more are used at 1e-9; exit 1 if not.
/// Exit codes: 0, 1 (a check failed or an integration failed), 2 (bad input or usage).
#define _POSIX_C_SOURCE 200809L
#include <cvode/cvode.h>
#include <math.h>
#include <nvector/nvector_serial.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sundials/sundials_context.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>
#include "mbspar/mbs_abm.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_dynamics.h"
#include "mbspar/mbs_solver.h"
#include "mbspar/mbs_state.h"
#include "mbspar/mbs_textfile.h"
#include "mbspar/mbs_timer.h"

/// The built-in model: 8 uniform rods of 0.25 m and 0.5 kg hinged about y, released at rest from
/// a bent pose (relative joint angles below; the free end whips round during the 2 s).
static const char ABM_CHAIN8[] =
    "description = \"8-link pendulum chain released from a bent pose (bench/abm_cvode.c)\";\n"
    "model = { gravity = [0, 0, -9.81];\n"
    "  chain = { n = 8; joint = \"revolute\"; axis = [0, 1, 0]; direction = [0, 0, -1];\n"
    "    length = 0.25; mass = 0.5; shape = \"rod\"; radius = 0.01;\n"
    "    q0 = [0.9, 0.4, 0.3, 0.2, -0.2, -0.3, 0.3, 0.5]; qd0 = 0.0; }; };\n"
    "solver = { method = \"aba\"; };\n"
    "integrator = { t_end = 2.0; };\n";

/// --check: abm's error at most this many times CVODE's at the same TOL. Measured on 2026-11-28
/// (docs/integrator_abm.md section 5): abm/CVODE 0.25 at 1e-6 and 0.20 at 1e-9 on the chain.
#define ABM_FACTOR 10.0

typedef struct {
  const mbsModel *m;
  mbsState *s;
  mbsWork *w;
  long nf;     // right-side evaluations
  mbsErr fail; // the first failing evaluation's code
} abmCtx;

// f(t, y) = (q̇, q̈) with q̈ from the serial ABA
static int abm_rhs(void *ctx, mbsReal t, const mbsReal *y, mbsReal *f) {
  abmCtx *c = ctx;
  const int nv = c->m->nv;
  c->nf++;
  memcpy(c->s->q, y, (size_t)nv * sizeof(mbsReal));
  memcpy(c->s->qd, y + nv, (size_t)nv * sizeof(mbsReal));
  c->s->time = t;
  mbsErr e = mbs_forward(c->m, c->s, c->w);
  if (e) {
    if (!c->fail) c->fail = e;
    return (int)e;
  }
  memcpy(f, y + nv, (size_t)nv * sizeof(mbsReal));
  memcpy(f + nv, c->w->qdd, (size_t)nv * sizeof(mbsReal));
  for (int i = 0; i < 2 * nv; i++)
    if (!isfinite(f[i])) return (int)MBS_ERR_NUMERIC;
  return 0;
}

static int cv_rhs(sunrealtype t, N_Vector y, N_Vector ydot, void *ctx) {
  return abm_rhs(ctx, t, N_VGetArrayPointer(y), N_VGetArrayPointer(ydot)) ? -1 : 0;
}

typedef struct {
  double err, wall;
  long evals, steps, rejected;
  long order[MBS_ABM_KMAX + 1]; // accepted steps per order
  int kmax;                     // highest order used
  int ok;
} abmRun;

static void abm_initialState(const mbsModel *m, mbsState *s, mbsReal *y) {
  mbs_stateReset(m, s);
  memcpy(y, s->q, (size_t)m->nv * sizeof(mbsReal));
  memcpy(y + m->nv, s->qd, (size_t)m->nv * sizeof(mbsReal));
}

// mbs_abm from the initial state to tend at tol; y: the state at tend
static void run_abm(abmCtx *c, double tend, double tol, mbsReal *y, abmRun *r) {
  memset(r, 0, sizeof *r);
  const int n = 2 * c->m->nv;
  mbsAbm *a = NULL;
  abm_initialState(c->m, c->s, y);
  c->nf = 0, c->fail = MBS_OK;
  double t0 = mbs_wtime();
  mbsErr e = mbs_abmCreate(n, tol, MBS_ABM_KMAX, &a);
  if (!e) e = mbs_abmStart(a, 0, y, 0, abm_rhs, c);
  while (!e && a->t < tend) e = mbs_abmStep(a, tend, abm_rhs, c);
  r->wall = mbs_wtime() - t0;
  if (e) {
    fprintf(stderr, "abm_cvode: abm at TOL %g failed at t = %g: %s\n", tol, a ? a->t : 0.0,
            mbs_errMsg());
  } else {
    memcpy(y, a->y, (size_t)n * sizeof(mbsReal));
    r->ok = 1;
  }
  if (a) {
    r->evals = a->evaluations, r->steps = a->steps, r->rejected = a->rejected;
    for (int k = 1; k <= MBS_ABM_KMAX; k++)
      if ((r->order[k] = a->order_used[k])) r->kmax = k;
  }
  mbs_abmDestroy(&a);
}

// CVODE Adams + fixed-point iteration, one step at a time (the order of each step), landing on
// tend (stop time)
static void run_cvode(abmCtx *c, double tend, double tol, mbsReal *yout, abmRun *r) {
  memset(r, 0, sizeof *r);
  const int n = 2 * c->m->nv;
  SUNContext sctx = NULL;
  N_Vector y = NULL;
  void *cv = NULL;
  SUNNonlinearSolver nls = NULL;
  c->nf = 0, c->fail = MBS_OK;
  double t0 = mbs_wtime();
  int flag = SUNContext_Create(NULL, &sctx);
  if (!flag && !(y = N_VNew_Serial(n, sctx))) flag = -1;
  if (!flag) abm_initialState(c->m, c->s, N_VGetArrayPointer(y));
  if (!flag && !(cv = CVodeCreate(CV_ADAMS, sctx))) flag = -1;
  if (!flag) flag = CVodeInit(cv, cv_rhs, 0.0, y);
  if (!flag) flag = CVodeSetUserData(cv, c);
  if (!flag) flag = CVodeSStolerances(cv, tol, tol);
  if (!flag && !(nls = SUNNonlinSol_FixedPoint(y, 0, sctx))) flag = -1;
  if (!flag) flag = CVodeSetNonlinearSolver(cv, nls);
  if (!flag) flag = CVodeSetMaxNumSteps(cv, 100000000L);
  if (!flag) flag = CVodeSetStopTime(cv, tend);
  sunrealtype t = 0;
  while (!flag && t < tend) {
    flag = CVode(cv, tend, y, &t, CV_ONE_STEP);
    if (flag >= 0) {
      int q = 0;
      CVodeGetLastOrder(cv, &q);
      if (q >= 1 && q <= MBS_ABM_KMAX) r->order[q]++;
      flag = flag == CV_TSTOP_RETURN ? 0 : flag;
      if (flag > 0) flag = 0;
    }
  }
  r->wall = mbs_wtime() - t0;
  if (flag) {
    fprintf(stderr, "abm_cvode: CVODE at TOL %g failed at t = %g (flag %d, %s)\n", tol, (double)t,
            flag, flag < 0 ? CVodeGetReturnFlagName(flag) : "setup");
  } else {
    memcpy(yout, N_VGetArrayPointer(y), (size_t)n * sizeof(mbsReal));
    r->ok = 1;
  }
  if (cv) {
    long ns = 0, nfe = 0, netf = 0, nncf = 0;
    CVodeGetNumSteps(cv, &ns);
    CVodeGetNumRhsEvals(cv, &nfe);
    CVodeGetNumErrTestFails(cv, &netf);
    CVodeGetNumNonlinSolvConvFails(cv, &nncf);
    r->steps = ns, r->evals = nfe, r->rejected = netf + nncf;
    for (int k = 1; k <= MBS_ABM_KMAX; k++)
      if (r->order[k]) r->kmax = k;
    if (nfe != c->nf)
      fprintf(stderr, "abm_cvode: CVODE reports %ld evaluations, %ld made\n", nfe, c->nf);
  }
  CVodeFree(&cv);
  if (nls) SUNNonlinSolFree(nls);
  if (y) N_VDestroy(y);
  if (sctx) SUNContext_Free(&sctx);
}

// max_i |q_i - q_ref,i| / max(1, max_i |q_ref,i|)
static double q_error(int nv, const mbsReal *y, const mbsReal *ref) {
  double d = 0, sc = 1;
  for (int i = 0; i < nv; i++) d = fmax(d, fabs(y[i] - ref[i])), sc = fmax(sc, fabs(ref[i]));
  return d / sc;
}

static void orders_str(const abmRun *r, char *buf, size_t len) {
  size_t o = 0;
  buf[0] = 0;
  for (int k = 1; k <= MBS_ABM_KMAX && o + 1 < len; k++)
    if (r->order[k]) {
      int w = snprintf(buf + o, len - o, "%s%d:%ld", o ? " " : "", k, r->order[k]);
      if (w < 0) break;
      o += (size_t)w;
    }
}

static void usage(FILE *f) {
  fprintf(f, "usage: abm_cvode [CONFIG] [--t-end T] [--tols T1,T2,...] [--ref TOL] [--csv FILE]\n"
             "                 [--label NAME] [--ref-out FILE] [--check] [--set KEY=VALUE ...]\n"
             "       abm_cvode --print-config\n");
}

int main(int argc, char **argv) {
  const char *path = NULL, *csv = NULL, *label = NULL, *refout = NULL;
  const char *sets[32];
  int nsets = 0, check = 0;
  double tend = -1, tref = 1e-13;
  double tols[32] = {1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11};
  int ntol = 8;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int more = i + 1 < argc;
    char *end = NULL;
    if (!strcmp(a, "--check")) {
      check = 1;
    } else if (!strcmp(a, "--print-config")) {
      fputs(ABM_CHAIN8, stdout);
      return 0;
    } else if (!strcmp(a, "--ref-out") && more) {
      refout = argv[++i];
    } else if (!strcmp(a, "--t-end") && more) {
      tend = strtod(argv[++i], &end);
      if (*end || !(tend > 0) || !isfinite(tend)) {
        fprintf(stderr, "abm_cvode: --t-end %s: not a positive number\n", argv[i]);
        return 2;
      }
    } else if (!strcmp(a, "--ref") && more) {
      tref = strtod(argv[++i], &end);
      if (*end || !(tref >= 1e-14 && tref < 1)) {
        fprintf(stderr, "abm_cvode: --ref %s: not in [1e-14, 1)\n", argv[i]);
        return 2;
      }
    } else if (!strcmp(a, "--tols") && more) {
      const char *p = argv[++i];
      ntol = 0;
      while (*p && ntol < 32) {
        double v = strtod(p, &end);
        if (end == p || !(v >= 1e-14 && v < 1) || (*end && *end != ',')) {
          fprintf(stderr, "abm_cvode: --tols %s: a comma-separated list in [1e-14, 1)\n", argv[i]);
          return 2;
        }
        tols[ntol++] = v;
        p = *end ? end + 1 : end;
      }
      if (!ntol) {
        fprintf(stderr, "abm_cvode: --tols: empty list\n");
        return 2;
      }
    } else if (!strcmp(a, "--csv") && more) {
      csv = argv[++i];
    } else if (!strcmp(a, "--label") && more) {
      label = argv[++i];
    } else if (!strcmp(a, "--set") && more) {
      if (nsets == 32) {
        fprintf(stderr, "abm_cvode: more than 32 --set\n");
        return 2;
      }
      sets[nsets++] = argv[++i];
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return 0;
    } else if (a[0] != '-' && !path) {
      path = a;
    } else {
      fprintf(stderr, "abm_cvode: unknown or incomplete argument '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }
  if (check) tols[0] = 1e-6, tols[1] = 1e-9, ntol = 2;
  if (!label) label = path ? path : "chain8";

  char *text = NULL;
  size_t len = 0;
  mbsConfig *cfg = NULL;
  mbsModel *m = NULL;
  abmCtx c = {0};
  mbsReal *y = NULL, *ref = NULL, *ref2 = NULL;
  FILE *fc = NULL;
  int rc = 0;
  mbsErr e = path ? mbs_fileRead(path, &text, &len) : MBS_OK;
  if (!e) e = mbs_configParse(path ? text : ABM_CHAIN8, path ? path : "chain8", sets, nsets, &cfg);
  if (!e) e = mbs_configBuildModel(cfg, &m);
  if (e) {
    fprintf(stderr, "abm_cvode: %s\n", mbs_errMsg());
    rc = mbs_errExitCode(e);
    goto done;
  }
  // y = (q, q̇): scalar coordinates only, no loops
  int bad = m->nq != m->nv || m->nloop > 0 || m->nv < 1;
  for (int b = 0; b < m->nbody && !bad; b++) bad = mbs_jntHasQuat(m->body_jnttype[b]);
  if (bad) {
    fprintf(stderr,
            "abm_cvode: %s: the model needs joints with scalar coordinates only (revolute, "
            "prismatic, ...; no quaternion joint) and no closed loop\n",
            path ? path : "chain8");
    rc = 2;
    goto done;
  }
  if (tend < 0) tend = m->opt.t_end;
  m->opt.solver = mbs_solverFromName("aba");
  c.m = m;
  const int nv = m->nv, n = 2 * nv;
  y = calloc((size_t)n, sizeof *y), ref = calloc((size_t)n, sizeof *ref);
  ref2 = calloc((size_t)n, sizeof *ref2);
  if (!y || !ref || !ref2 || mbs_stateCreate(m, &c.s) || mbs_workCreate(m, &c.w) ||
      mbs_workEnableMethod(m, c.w)) {
    fprintf(stderr, "abm_cvode: out of memory (%s)\n", mbs_errMsg());
    rc = 1;
    goto done;
  }
  if (csv && !(fc = fopen(csv, "a"))) {
    fprintf(stderr, "abm_cvode: cannot open %s\n", csv);
    rc = 2;
    goto done;
  }

  // the reference: CVODE at tref, abm at tref beside it
  abmRun rr, ra;
  run_cvode(&c, tend, tref, ref, &rr);
  run_abm(&c, tend, tref, ref2, &ra);
  if (!rr.ok || !ra.ok) {
    rc = 1;
    goto done;
  }
  double dref = q_error(nv, ref2, ref);
  if (refout) {
    FILE *fr = fopen(refout, "w");
    for (int i = 0; fr && i < nv; i++) fprintf(fr, "%.17g\n", ref[i]);
    if (!fr || fclose(fr)) {
      fprintf(stderr, "abm_cvode: cannot write %s\n", refout);
      rc = 2;
      goto done;
    }
  }
  printf("# %s: %d dofs, t_end %g s; reference CVODE Adams at %.0e (%ld evaluations, %ld steps, "
         "highest order %d); abm at %.0e differs from it by %.2e (%ld evaluations, highest order "
         "%d)\n",
         label, nv, tend, tref, rr.evals, rr.steps, rr.kmax, tref, dref, ra.evals, ra.kmax);
  printf("# error = max_i |q_i - q_ref,i| / max(1, max_i |q_ref,i|) at t_end; wall time under "
         "load\n");
  printf("| method | TOL | error | evaluations | eval/s simulated | steps | rejected | highest "
         "order | orders (order:steps) | wall s |\n|---|---|---|---|---|---|---|---|---|---|\n");
  if (fc)
    fprintf(fc, "# model,method,tol,error,evaluations,evals_per_sim_s,steps,rejected,max_order,"
                "wall_s,orders\n");
  double errs[2][32];
  int kmx[2][32];
  for (int it = 0; it < ntol; it++) {
    for (int meth = 0; meth < 2; meth++) {
      abmRun r;
      if (meth == 0)
        run_abm(&c, tend, tols[it], y, &r);
      else
        run_cvode(&c, tend, tols[it], y, &r);
      if (!r.ok) {
        rc = 1;
        goto done;
      }
      const char *name = meth == 0 ? "abm" : "cvode";
      double err = q_error(nv, y, ref);
      errs[meth][it] = err, kmx[meth][it] = r.kmax;
      char ord[256];
      orders_str(&r, ord, sizeof ord);
      printf("| %s | %.0e | %.2e | %ld | %.0f | %ld | %ld | %d | %s | %.3f |\n", name, tols[it],
             err, r.evals, r.evals / tend, r.steps, r.rejected, r.kmax, ord, r.wall);
      if (fc)
        fprintf(fc, "%s,%s,%.0e,%.6e,%ld,%.1f,%ld,%ld,%d,%.4f,%s\n", label, name, tols[it], err,
                r.evals, r.evals / tend, r.steps, r.rejected, r.kmax, r.wall, ord);
    }
    fflush(stdout);
  }
  if (check) { // tols = {1e-6, 1e-9}
    int fails = 0;
    for (int it = 0; it < 2; it++) {
      double ratio = errs[0][it] / errs[1][it];
      int ok = ratio <= ABM_FACTOR;
      printf("%s: TOL %.0e: abm error %.3e, CVODE %.3e, ratio %.3g (limit %g)\n",
             ok ? "ok" : "FAIL", tols[it], errs[0][it], errs[1][it], ratio, ABM_FACTOR);
      fails += !ok;
    }
    double prop = errs[0][1] / errs[0][0];
    printf("%s: abm error(1e-9) / error(1e-6) = %.3g (limit 1e-2)\n", prop < 1e-2 ? "ok" : "FAIL",
           prop);
    fails += !(prop < 1e-2);
    printf("%s: abm's highest order at 1e-9: %d (limit 8)\n", kmx[0][1] >= 8 ? "ok" : "FAIL",
           kmx[0][1]);
    fails += kmx[0][1] < 8;
    printf("%s: reference: abm at %.0e within %.2e of CVODE (limit 1e-9)\n",
           dref < 1e-9 ? "ok" : "FAIL", tref, dref);
    fails += !(dref < 1e-9);
    if (fails) rc = 1;
  }
done:
  if (fc) fclose(fc);
  free(y), free(ref), free(ref2);
  mbs_workDestroy(&c.w);
  mbs_stateDestroy(&c.s);
  mbs_modelDestroy(&m);
  mbs_configDestroy(&cfg);
  free(text);
  return rc;
}
