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
#include "petsc_ts.h"
#ifdef MBS_HAVE_PETSC
#include <petscts.h>
#include <stdlib.h>
#include <string.h>
#include "comm_private.h"
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

mbsErr mbsp_tsCreate(mbspComm *comm, int nlocal, int method, double dt, double tol, mbspRhs rhs,
                     mbspPostStep post, void *ctx, mbspTs **out) {
  mbspTs *m = calloc(1, sizeof *m);
  *out = NULL;
  // the PETSc objects below are created collectively: agree on the allocation first
  mbsErr ea = mbsp_agreeErr(comm, m ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory (TS)"));
  if (ea) {
    free(m);
    return ea;
  }
  *out = m;
  m->n = nlocal, m->rhs = rhs, m->post = post, m->ctx = ctx;
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
  default:
    MBS_CALL_PETSC(TSSetType(m->ts, TSRK));
    MBS_CALL_PETSC(TSRKSetType(m->ts, TSRK4));
    m->fixed = 1;
  }
  MBS_CALL_PETSC(TSGetAdapt(m->ts, &adapt));
  MBS_CALL_PETSC(TSAdaptSetType(adapt, m->fixed ? TSADAPTNONE : TSADAPTBASIC));
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
  m->fixed = at && !strcmp(at, TSADAPTNONE);
  MBS_CALL_PETSC(TSGetTimeStep(m->ts, &m->dt0));
  TSType tt = NULL;
  MBS_CALL_PETSC(TSGetType(m->ts, &tt));
  snprintf(m->name, sizeof m->name, "%s", tt ? tt : "?");
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
  if (t + dt > t_end + 1e-9 * dt) MBS_CALL_PETSC(TSSetTimeStep(m->ts, t_end - t));
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
  return MBS_OK;
}

long mbsp_tsRejected(mbspTs *m) {
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
#endif
