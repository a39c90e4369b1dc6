/// \file guard.h
/// The accuracy guard of `accel`, `run` and `static` (docs/formulation.md 4.9): a result's
/// residual against the equations of motion, the bound it is held to, and, when the bound is
/// exceeded, one warning line and the likely cause in the report's `accuracy` object.
#ifndef MBSP_GUARD_H
#define MBSP_GUARD_H

#include "mbspar/mbs_parallel.h"
#include "mbspar/mbs_report.h"
#include "mbspar/mbspar.h"

/// One check of a result against its bound.
typedef struct {
  double residual, bound;
  int exceeded, unconverged; ///< unconverged: the solver's own warning stands for the guard's
  char cause[320];           ///< the likely cause when exceeded
} mbspGuard;

/// The bound: 1e-8 for the direct methods, for the iterative ones 100 solver.tol when larger.
double mbsp_guardBound(const mbsModel *m);

/// Compare \p residual with the bound into \p g; when exceeded, the likely cause: the joint
/// whose two bodies' masses differ most over the bodies [b0, b1) of every rank (local = 1,
/// distributed-memory models: collective) or of the whole model (local = 0: the caller's rank
/// alone), or "the solve stopped without converging" when \p reason < 0.
mbsErr mbsp_guardJudge(mbspComm *comm, const mbsModel *m, int local, int b0, int b1,
                       double residual, int reason, mbspGuard *g);

/// The guard's one warning line on stderr (when exceeded and the solve converged): "mbspar:
/// warning: VERB: the result of METHOD misses the equations of motion by ...WHERE; likely cause:
/// ..." (where: "" or e.g. " at t = 0.5 s (first evaluation)").
void mbsp_guardWarn(const char *verb, const char *where, const mbsModel *m, const mbspGuard *g);

/// The equation-of-motion residual of \p qdd at the position and velocity stages of \p w, with
/// the external wrenches w->fext (w->fext_on): ||RNEA(q, qd, qdd) - tau|| / max(||bias||,
/// ||bias_0||, ||tau||) with bias = RNEA(q, qd, 0), bias_0 the same without the external wrenches
/// (they may cancel gravity at an equilibrium). Overwrites w->acc, frc and qfrc_inv (mbs_rnea).
/// Local.
void mbsp_guardEom(const mbsModel *m, mbsWork *w, const mbsReal *qdd, double *res);

/// The guard at the first and the last evaluation of `run` and `static` (one rank holds the
/// whole model): a copy of an evaluation's state and results, checked on demand.
typedef struct {
  const mbsModel *m;
  mbsState *s;  ///< the evaluation's q, qd, tau and time (copied)
  mbsWork *w;   ///< the checker's own workspace
  mbsReal *qdd; ///< (nv)
  mbsReal *lam; ///< (nlam_loop) the loop forces
  int reason;   ///< the solve's reason (< 0: not converged)
  mbspGuard g[2];
  double t[2];
  int done[2]; ///< 1: that check ran (0 first, 1 last)
  int warned;
} mbspGuardPair;

/// Allocate the checker for model \p m (before the loop of evaluations). Local.
mbsErr mbsp_guardPairCreate(const mbsModel *m, mbspGuardPair *gp);
/// Free (a zeroed or destroyed pair is a no-op).
void mbsp_guardPairDestroy(mbspGuardPair *gp);
/// Keep an evaluation: its state (q, qd, tau, time), q̈ (nv) and loop forces (nlam_loop, or NULL
/// for models without loops). O(nv) copies, no allocation. Local.
void mbsp_guardPairKeep(mbspGuardPair *gp, const mbsState *s, const mbsReal *qdd,
                        const mbsReal *lam, int reason);
/// Check the kept evaluation as check \p which (0 first, 1 last): the spring-dampers and the
/// loop wrenches of the kept loop forces in the external wrenches, the equation-of-motion
/// residual, the bound, the likely cause; the warning line of \p verb once per pair. Local.
mbsErr mbsp_guardPairCheck(mbspGuardPair *gp, int which, const char *verb);
/// The `accuracy` object of the pair's checks (nothing if none ran).
void mbsp_guardPairJson(mbsJson *j, const mbspGuardPair *gp);

#endif
