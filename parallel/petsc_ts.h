/// \file petsc_ts.h
/// Thin wrapper of PETSc TS for mbspar: an ODE y' = f(t, y) on a distributed vector whose local
/// part is a plain array. No PETSc types leak out.
#ifndef MBS_PETSC_TS_H
#define MBS_PETSC_TS_H
#include "mbspar/mbs_abm.h"
#include "mbspar/mbs_parallel.h"
#include "mbspar/mbs_solver.h"

typedef struct mbspTs mbspTs;
/// Right side on the local part: f = f(t, y). Collective (called on every rank at once).
typedef mbsErr (*mbspRhs)(void *ctx, double t, const double *y, double *f);
/// Called after every accepted step with the local solution (may modify it, e.g. normalise
/// quaternions). Local.
typedef void (*mbspPostStep)(void *ctx, double *y);

/// Create: \p method mbsIntegrator (euler, rk4 fixed step; dp5 adaptive with atol = rtol = tol),
/// initial step dt; -ts_* options override. Collective.
mbsErr mbsp_tsCreate(mbspComm *comm, int nlocal, int method, double dt, double tol, mbspRhs rhs,
                     mbspPostStep post, void *ctx, mbspTs **ts);
/// Set time, step counter, next step size and the local solution. Collective.
mbsErr mbsp_tsSetState(mbspTs *ts, double t, long step, double dt, const double *y);
/// One accepted step, not beyond t_end; fixed-step times are exact (t_0 + k dt); the TS
/// monitors are called after it. Collective.
mbsErr mbsp_tsStep(mbspTs *ts, double t_end);
/// Time, step counter and next step size. Local.
void mbsp_tsGetState(mbspTs *ts, double *t, long *step, double *dt);
/// Copy the local solution out. Local.
mbsErr mbsp_tsGetSolution(mbspTs *ts, double *y);
/// Replace the local solution between steps (e.g. after a projection onto constraints) and
/// restart the method: a first-same-as-last pair (dp5) recomputes its first stage. Collective
/// in the sense that every rank must call it (each with its own part).
mbsErr mbsp_tsSetSolution(mbspTs *ts, const double *y);
/// Rejected steps so far (adaptive). Local.
long mbsp_tsRejected(mbspTs *ts);
/// The TS type actually used (after -ts_* options). Local.
const char *mbsp_tsTypeName(mbspTs *ts);
/// The method actually used, in the names of integrator.method where they apply: "euler",
/// "rk4", "dp5"; otherwise the TS type, "rk" + the TSRK type (e.g. "rk3bs"). Local.
const char *mbsp_tsMethodName(mbspTs *ts);
/// The Adams core of an abm integrator (its history, for checkpoints), or NULL. Local.
mbsAbm *mbsp_tsAbm(mbspTs *ts);
/// Free and NULL. Collective.
void mbsp_tsDestroy(mbspTs **ts);
#endif
