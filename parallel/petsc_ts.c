/// \file petsc_ts.c
/// PETSc TS behind a small interface: fixed-step explicit Euler (TSEULER) and classical RK4
/// (TSRK/TSRK4, adaptivity off), adaptive Dormand–Prince 5(4) (TSRK/TSRK5DP with TSADAPTBASIC,
/// atol = rtol = integrator.tol). Every -ts_* option applies (TSSetFromOptions): the driver steps
/// with TSStep and calls TSMonitor after every step (and for the initial state), as TSSolve
/// does, so -ts_monitor and any TSMonitorSet monitor see every step; -ts_adapt_monitor reports
/// from inside TSStep; -ts_view is honoured when the integrator is destroyed. Fixed-step times
/// are exact, t_k = t_0 + k dt (TS accumulates t += dt; the time is reset after each step). The
/// vector wraps the local array of each rank; communication happens only inside the RHS callback
/// (the engine) and in TS's own norms (adaptive error estimate: one allreduce per step).
///
/// integrator.method = abm is a TS type of its own, "mbsabm" (TSRegister; docs/integrator_abm.md
/// section 4): its step is one accepted step of the Adams core (src/abm.c), which chooses its
/// own step and order (TS's adapter is off) and lands on t_end (TS's max time); the right side
/// goes through TSComputeRHSFunction, so -ts_monitor and the other TS options apply.
#include "petsc_ts.h"
#ifdef MBS_HAVE_PETSC
#include <petsc/private/tsimpl.h>
#include <petscts.h>
#include <stdlib.h>
#include <string.h>
#include "comm_private.h"
#include "mbspar/mbs_abm.h"
#include "petsc_private.h"

struct mbspTs {
  TS ts;
  Vec y;
  int n;
  mbspRhs rhs;
  mbspPostStep post;
  void *ctx;
  mbsErr err; // first error raised by the right side
  int fixed;  // no step-size adaptivity (TSADAPTNONE after the options): exact times
  int abm;    // the TS type is mbsabm (its own step and order control)
  mbspComm *comm;
  double dt0; // the fixed step
  double tbase;
  long kbase; // fixed step: t_k = tbase + (k - kbase) dt0
  char name[64];
};

static PetscErrorCode mbsp_tsRhs(TS ts, PetscReal t, Vec Y, Vec F, void *vctx) {
  (void)ts;
  mbspTs *m = vctx;
  const PetscScalar *y;
  PetscScalar *f;
  PetscCall(VecGetArrayRead(Y, &y));
  PetscCall(VecGetArray(F, &f));
  mbsErr e = m->rhs(m->ctx, t, y, f);
  PetscCall(VecRestoreArray(F, &f));
  PetscCall(VecRestoreArrayRead(Y, &y));
  if (e) {
    if (!m->err) m->err = e;
    return PETSC_ERR_USER;
  }
  return 0;
}

static PetscErrorCode mbsp_tsPost(TS ts) {
  mbspTs *m;
  Vec Y;
  PetscScalar *y;
  PetscCall(TSGetApplicationContext(ts, &m));
  if (!m->post) return 0;
  PetscCall(TSGetSolution(ts, &Y));
  PetscCall(VecGetArray(Y, &y));
  m->post(m->ctx, y);
  PetscCall(VecRestoreArray(Y, &y));
  return 0;
}

// ---------------------------------------------------------------- the TS type "mbsabm"

#define MBSP_TSABM "mbsabm"

typedef struct {
  mbsAbm *a;
  Vec vy, vf; // the right side's arguments as TS vectors
  PetscErrorCode rhs_rc;
} mbspTsAbm;

// the norms of the Adams core over every rank (the application context is the wrapper)
static int mbsp_tsAbmReduce(void *ctx, mbsReal *v, int n) {
  mbspTs *m = ctx;
  return (int)mbsp_allreduceSum(m->comm, v, n);
}

// the core's right side through TSComputeRHSFunction (monitors and counters see it)
static int mbsp_tsAbmRhs(void *ctx, mbsReal t, const mbsReal *y, mbsReal *f) {
  TS ts = ctx;
  mbspTsAbm *d = ts->data;
  PetscInt n;
  PetscScalar *a;
  const PetscScalar *b;
  d->rhs_rc = VecGetLocalSize(d->vy, &n);
  if (!d->rhs_rc) d->rhs_rc = VecGetArray(d->vy, &a);
  if (d->rhs_rc) return -1;
  if (n > 0) memcpy(a, y, (size_t)n * sizeof *a);
  d->rhs_rc = VecRestoreArray(d->vy, &a);
  if (!d->rhs_rc) d->rhs_rc = TSComputeRHSFunction(ts, t, d->vy, d->vf);
  if (!d->rhs_rc) d->rhs_rc = VecGetArrayRead(d->vf, &b);
  if (d->rhs_rc) return -1;
  if (n > 0) memcpy(f, b, (size_t)n * sizeof *f);
  d->rhs_rc = VecRestoreArrayRead(d->vf, &b);
  return d->rhs_rc ? -1 : 0;
}

static PetscErrorCode TSSetUp_MbsAbm(TS ts) {
  mbspTsAbm *d = ts->data;
  mbspTs *m = NULL;
  PetscInt n;
  PetscFunctionBegin;
  if (d->a) PetscFunctionReturn(0);
  PetscCall(TSGetApplicationContext(ts, &m));
  PetscCheck(m, PetscObjectComm((PetscObject)ts), PETSC_ERR_ARG_WRONGSTATE,
             "mbsabm runs inside mbspar only");
  PetscCall(VecDuplicate(ts->vec_sol, &d->vy));
  PetscCall(VecDuplicate(ts->vec_sol, &d->vf));
  PetscCall(VecGetLocalSize(ts->vec_sol, &n));
  // one component at least: a rank without state entries still takes part in the norms
  double tol = ts->rtol > 0 ? ts->rtol : 1e-6;
  PetscCheck(mbs_abmCreate(n > 0 ? (int)n : 1, tol, MBS_ABM_KMAX, &d->a) == MBS_OK, PETSC_COMM_SELF,
             PETSC_ERR_MEM, "abm: out of memory");
  if (n == 0) d->a->n = 0; // the core's loops run over n entries: none here
  mbs_abmSetReduce(d->a, mbsp_tsAbmReduce, m);
  d->a->t = ts->ptime;
  PetscFunctionReturn(0);
}

static PetscErrorCode TSStep_MbsAbm(TS ts) {
  mbspTsAbm *d = ts->data;
  mbspTs *m = NULL;
  PetscFunctionBegin;
  PetscCall(TSGetApplicationContext(ts, &m));
  mbsAbm *a = d->a;
  if (a->nd == 0) { // no history yet: start from the TS solution at the TS time
    const PetscScalar *y;
    PetscCall(VecGetArrayRead(ts->vec_sol, &y));
    if (a->n > 0) memcpy(a->y, y, (size_t)a->n * sizeof *y);
    PetscCall(VecRestoreArrayRead(ts->vec_sol, &y));
    a->t = ts->ptime;
  }
  d->rhs_rc = 0;
  mbsErr e = mbs_abmStep(a, ts->max_time, mbsp_tsAbmRhs, ts);
  if (e) {
    // the right side's failure: its code is in the wrapper (m->err) or PETSc's; a step that
    // fell below the resolution of t: a diverged step (the wrapper reports it)
    if (d->rhs_rc) PetscFunctionReturn(d->rhs_rc);
    if (!m->err && e != MBS_ERR_NUMERIC) m->err = e;
    ts->reason = TS_DIVERGED_STEP_REJECTED;
    PetscFunctionReturn(0);
  }
  PetscScalar *y;
  PetscCall(VecGetArray(ts->vec_sol, &y));
  if (a->n > 0) memcpy(y, a->y, (size_t)a->n * sizeof *y);
  PetscCall(VecRestoreArray(ts->vec_sol, &y));
  ts->ptime = a->t;
  ts->time_step = a->h;
  PetscFunctionReturn(0);
}

static PetscErrorCode TSReset_MbsAbm(TS ts) {
  mbspTsAbm *d = ts->data;
  PetscFunctionBegin;
  mbs_abmDestroy(&d->a);
  PetscCall(VecDestroy(&d->vy));
  PetscCall(VecDestroy(&d->vf));
  PetscFunctionReturn(0);
}

static PetscErrorCode TSDestroy_MbsAbm(TS ts) {
  PetscFunctionBegin;
  PetscCall(TSReset_MbsAbm(ts));
  PetscCall(PetscFree(ts->data));
  PetscFunctionReturn(0);
}

static PetscErrorCode TSView_MbsAbm(TS ts, PetscViewer v) {
  mbspTsAbm *d = ts->data;
  PetscBool ascii;
  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)v, PETSCVIEWERASCII, &ascii));
  if (ascii && d->a)
    PetscCall(PetscViewerASCIIPrintf(v,
                                     "  Adams-Bashforth-Moulton PECE, orders 1-%d, tol %g: %ld "
                                     "steps, %ld rejected, %ld restarts, order now %d\n",
                                     d->a->kmax, d->a->tol, d->a->steps, d->a->rejected,
                                     d->a->restarts, d->a->k));
  PetscFunctionReturn(0);
}

static PetscErrorCode TSCreate_MbsAbm(TS ts) {
  mbspTsAbm *d;
  PetscFunctionBegin;
  PetscCall(PetscNew(&d));
  ts->data = d;
  ts->ops->setup = TSSetUp_MbsAbm;
  ts->ops->step = TSStep_MbsAbm;
  ts->ops->reset = TSReset_MbsAbm;
  ts->ops->destroy = TSDestroy_MbsAbm;
  ts->ops->view = TSView_MbsAbm;
  ts->default_adapt_type = TSADAPTNONE;
  PetscFunctionReturn(0);
}

mbsAbm *mbsp_tsAbm(mbspTs *m) {
  return m && m->abm ? ((mbspTsAbm *)m->ts->data)->a : NULL;
}

// ---------------------------------------------------------------- the wrapper

mbsErr mbsp_tsCreate(mbspComm *comm, int nlocal, int method, double dt, double tol, mbspRhs rhs,
                     mbspPostStep post, void *ctx, mbspTs **out) {
  static int registered;
  if (!registered) { // (PETSc is initialised once per process; TSRegister keeps the first)
    MBS_CALL_PETSC(TSRegister(MBSP_TSABM, TSCreate_MbsAbm));
    registered = 1;
  }
  mbspTs *m = calloc(1, sizeof *m);
  *out = NULL;
  // the PETSc objects below are created collectively: agree on the allocation first
  mbsErr ea = mbsp_agreeErr(comm, m ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory (TS)"));
  if (ea) {
    free(m);
    return ea;
  }
  *out = m;
  m->n = nlocal, m->rhs = rhs, m->post = post, m->ctx = ctx, m->comm = comm;
  MPI_Comm mc = mbsp_commRaw(comm);
  MBS_CALL_PETSC(VecCreateMPI(mc, nlocal, PETSC_DETERMINE, &m->y));
  MBS_CALL_PETSC(TSCreate(mc, &m->ts));
  MBS_CALL_PETSC(TSSetApplicationContext(m->ts, m));
  MBS_CALL_PETSC(TSSetProblemType(m->ts, TS_NONLINEAR));
  TSAdapt adapt;
  switch (method) {
  case MBS_INT_EULER:
    MBS_CALL_PETSC(TSSetType(m->ts, TSEULER));
    m->fixed = 1;
    break;
  case MBS_INT_DP5:
    MBS_CALL_PETSC(TSSetType(m->ts, TSRK));
    MBS_CALL_PETSC(TSRKSetType(m->ts, TSRK5DP));
    break;
  case MBS_INT_ABM:
    MBS_CALL_PETSC(TSSetType(m->ts, MBSP_TSABM));
    break;
  default:
    MBS_CALL_PETSC(TSSetType(m->ts, TSRK));
    MBS_CALL_PETSC(TSRKSetType(m->ts, TSRK4));
    m->fixed = 1;
  }
  MBS_CALL_PETSC(TSGetAdapt(m->ts, &adapt));
  MBS_CALL_PETSC(
      TSAdaptSetType(adapt, m->fixed || method == MBS_INT_ABM ? TSADAPTNONE : TSADAPTBASIC));
  MBS_CALL_PETSC(TSSetTolerances(m->ts, tol, NULL, tol, NULL));
  MBS_CALL_PETSC(TSSetRHSFunction(m->ts, NULL, mbsp_tsRhs, m));
  MBS_CALL_PETSC(TSSetTimeStep(m->ts, dt));
  MBS_CALL_PETSC(TSSetMaxSteps(m->ts, PETSC_MAX_INT));
  MBS_CALL_PETSC(TSSetMaxTime(m->ts, 1e300)); // the loop stops at t_end itself
  MBS_CALL_PETSC(TSSetExactFinalTime(m->ts, TS_EXACTFINALTIME_STEPOVER));
  MBS_CALL_PETSC(TSSetPostStep(m->ts, mbsp_tsPost));
  MBS_CALL_PETSC(TSSetFromOptions(m->ts));
  MBS_CALL_PETSC(TSSetSolution(m->ts, m->y));
  MBS_CALL_PETSC(TSSetUp(m->ts));
  // what the options made of it: the step control and the method's name
  TSAdaptType at = NULL;
  MBS_CALL_PETSC(TSGetAdapt(m->ts, &adapt));
  MBS_CALL_PETSC(TSAdaptGetType(adapt, &at));
  TSType tt = NULL;
  MBS_CALL_PETSC(TSGetType(m->ts, &tt));
  m->abm = tt && !strcmp(tt, MBSP_TSABM);
  m->fixed = !m->abm && at && !strcmp(at, TSADAPTNONE);
  MBS_CALL_PETSC(TSGetTimeStep(m->ts, &m->dt0));
  snprintf(m->name, sizeof m->name, "%s", m->abm ? "abm" : tt ? tt : "?");
  if (tt && !strcmp(tt, TSRK)) {
    TSRKType rt = NULL;
    MBS_CALL_PETSC(TSRKGetType(m->ts, &rt));
    if (rt && !strcmp(rt, TSRK5DP))
      snprintf(m->name, sizeof m->name, "dp5");
    else
      snprintf(m->name, sizeof m->name, "rk%s", rt ? rt : "");
  }
  return MBS_OK;
}

mbsErr mbsp_tsSetState(mbspTs *m, double t, long step, double dt, const double *y) {
  PetscScalar *a;
  MBS_CALL_PETSC(VecGetArray(m->y, &a));
  if (m->n > 0) memcpy(a, y, (size_t)m->n * sizeof(double)); // a rank without entries: a NULL
  MBS_CALL_PETSC(VecRestoreArray(m->y, &a));
  MBS_CALL_PETSC(TSSetTime(m->ts, t));
  MBS_CALL_PETSC(TSSetStepNumber(m->ts, (PetscInt)step));
  MBS_CALL_PETSC(TSSetTimeStep(m->ts, dt));
  // fixed step: times k dt from t = 0 when the state lies on that grid (a fresh run, or a
  // checkpoint of a run with the same dt), else counted from this state
  if (m->fixed) {
    m->dt0 = dt;
    int ongrid = t == (double)step * dt;
    m->tbase = ongrid ? 0 : t, m->kbase = ongrid ? 0 : step;
  }
  // monitors see the initial state, as in TSSolve
  MBS_CALL_PETSC(TSMonitor(m->ts, (PetscInt)step, t, m->y));
  return MBS_OK;
}

mbsErr mbsp_tsStep(mbspTs *m, double t_end) {
  PetscReal t, dt;
  MBS_CALL_PETSC(TSGetTime(m->ts, &t));
  MBS_CALL_PETSC(TSGetTimeStep(m->ts, &dt));
  // land on t_end: a shorter last step only when the step really overshoots (not by the
  // roundoff of the accumulated time), so a run to t_end/2 takes bitwise the same steps as the
  // first half of a run to t_end
  if (m->abm) // the Adams core lands on TS's max time itself, with its own next step
    MBS_CALL_PETSC(TSSetMaxTime(m->ts, t_end));
  else if (t + dt > t_end + 1e-9 * dt)
    MBS_CALL_PETSC(TSSetTimeStep(m->ts, t_end - t));
  PetscErrorCode rc = TSStep(m->ts);
  if (m->err) {
    mbsErr e = m->err;
    m->err = MBS_OK;
    return e;
  }
  if (rc)
    return mbs_errSet(MBS_ERR_PETSC, "TSStep failed (PETSc error %d) at t = %.17g", (int)rc, t);
  TSConvergedReason reason;
  MBS_CALL_PETSC(TSGetConvergedReason(m->ts, &reason));
  if (reason < 0)
    return mbs_errSet(MBS_ERR_NUMERIC,
                      "time integration failed at t = %.17g (TS reason %d: step size too small "
                      "or too many rejections)",
                      t, (int)reason);
  // TSStep does not run the post-step hook (TSSolve does): the quaternions' renormalisation
  MBS_CALL_PETSC(TSPostStep(m->ts));
  PetscInt k;
  MBS_CALL_PETSC(TSGetStepNumber(m->ts, &k));
  if (m->fixed) {
    // exact time t0 + k dt instead of the accumulated sum; t_end itself after a shortened step
    double tk = m->tbase + (double)(k - m->kbase) * m->dt0;
    MBS_CALL_PETSC(TSSetTime(m->ts, t + dt > t_end + 1e-9 * dt ? t_end : tk));
    MBS_CALL_PETSC(TSSetTimeStep(m->ts, dt)); // restore after a shortened last step
  }
  PetscReal tn;
  MBS_CALL_PETSC(TSGetTime(m->ts, &tn));
  MBS_CALL_PETSC(TSMonitor(m->ts, k, tn, m->y));
  return MBS_OK;
}

void mbsp_tsGetState(mbspTs *m, double *t, long *step, double *dt) {
  PetscReal tt = 0, dd = 0;
  PetscInt ss = 0;
  TSGetTime(m->ts, &tt);
  TSGetStepNumber(m->ts, &ss);
  TSGetTimeStep(m->ts, &dd);
  if (t) *t = tt;
  if (step) *step = ss;
  if (dt) *dt = dd;
}

mbsErr mbsp_tsGetSolution(mbspTs *m, double *y) {
  const PetscScalar *a;
  MBS_CALL_PETSC(VecGetArrayRead(m->y, &a));
  if (m->n > 0) memcpy(y, a, (size_t)m->n * sizeof(double));
  MBS_CALL_PETSC(VecRestoreArrayRead(m->y, &a));
  return MBS_OK;
}

mbsErr mbsp_tsSetSolution(mbspTs *m, const double *y) {
  PetscScalar *a;
  MBS_CALL_PETSC(VecGetArray(m->y, &a));
  if (m->n > 0) memcpy(a, y, (size_t)m->n * sizeof(double)); // a rank without entries: a NULL
  MBS_CALL_PETSC(VecRestoreArray(m->y, &a));
  MBS_CALL_PETSC(TSRestartStep(m->ts));
  // abm: keep the history for a change within the tolerance, else restart at the next step
  // (decided now, so a checkpoint written before that step restarts alike)
  mbsAbm *ab = mbsp_tsAbm(m);
  if (ab) MBS_CALL(mbs_abmSetY(ab, y));
  return MBS_OK;
}

long mbsp_tsRejected(mbspTs *m) {
  mbsAbm *a = mbsp_tsAbm(m);
  if (a) return a->rejected;
  PetscInt r = 0;
  TSGetStepRejections(m->ts, &r);
  return (long)r;
}

const char *mbsp_tsTypeName(mbspTs *m) {
  TSType t = NULL;
  TSGetType(m->ts, &t);
  return t ? t : "?";
}

const char *mbsp_tsMethodName(mbspTs *m) {
  return m->name;
}

void mbsp_tsDestroy(mbspTs **pm) {
  if (!pm || !*pm) return;
  if ((*pm)->ts) TSViewFromOptions((*pm)->ts, NULL, "-ts_view");
  TSDestroy(&(*pm)->ts);
  VecDestroy(&(*pm)->y);
  free(*pm);
  *pm = NULL;
}

#else
mbsErr mbsp_tsCreate(mbspComm *comm, int nlocal, int method, double dt, double tol, mbspRhs rhs,
                     mbspPostStep post, void *ctx, mbspTs **ts) {
  (void)comm, (void)nlocal, (void)method, (void)dt, (void)tol, (void)rhs, (void)post, (void)ctx;
  *ts = NULL;
  return mbs_errSet(MBS_ERR_UNSUPPORTED, "mbspar run needs a build with PETSc (TS integrators)");
}
mbsErr mbsp_tsSetState(mbspTs *ts, double t, long step, double dt, const double *y) {
  (void)ts, (void)t, (void)step, (void)dt, (void)y;
  return MBS_ERR_UNSUPPORTED;
}
mbsErr mbsp_tsStep(mbspTs *ts, double t_end) {
  (void)ts, (void)t_end;
  return MBS_ERR_UNSUPPORTED;
}
void mbsp_tsGetState(mbspTs *ts, double *t, long *step, double *dt) {
  (void)ts, (void)t, (void)step, (void)dt;
}
mbsErr mbsp_tsGetSolution(mbspTs *ts, double *y) {
  (void)ts, (void)y;
  return MBS_ERR_UNSUPPORTED;
}
mbsErr mbsp_tsSetSolution(mbspTs *ts, const double *y) {
  (void)ts, (void)y;
  return MBS_ERR_UNSUPPORTED;
}
long mbsp_tsRejected(mbspTs *ts) {
  (void)ts;
  return 0;
}
const char *mbsp_tsTypeName(mbspTs *ts) {
  (void)ts;
  return "none";
}
const char *mbsp_tsMethodName(mbspTs *ts) {
  (void)ts;
  return "none";
}
void mbsp_tsDestroy(mbspTs **ts) {
  (void)ts;
}
mbsAbm *mbsp_tsAbm(mbspTs *ts) {
  (void)ts;
  return NULL;
}
#endif
