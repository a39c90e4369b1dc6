/// \file mbs_abm.h
/// The variable-step, variable-order Adams–Bashforth–Moulton PECE integrator (issue 36; the
/// formulas and rules of docs/integrator_abm.md): modified divided differences on a variable
/// grid, orders 1 to 12, error estimates at the neighbouring orders from the same differences,
/// Shampine–Gordon-style order and step selection. The core of `integrator.method = "abm"`:
/// serial, one state vector, a right side given as a callback (the engine's evaluation in the
/// runs). Not yet wired into `run` (docs/integrator_abm.md "Status").
#ifndef MBS_ABM_H
#define MBS_ABM_H

#include "mbspar/mbs_error.h"
#include "mbspar/mbs_types.h"

/// Highest order.
#define MBS_ABM_KMAX 12

/// Right side f(t, y) into f (n values); nonzero stops the integration with that code.
typedef int (*mbsAbmRhs)(void *ctx, mbsReal t, const mbsReal *y, mbsReal *f);

/// The integrator's state: what a restart needs (t, h, k, the grid and the differences) and its
/// counters. Created by mbs_abmCreate; fields are read-only for callers.
typedef struct {
  int n;                         ///< state size
  int kmax;                      ///< highest order allowed (1..MBS_ABM_KMAX)
  mbsReal tol;                   ///< local error tolerance (absolute and relative, per component)
  mbsReal t, h;                  ///< time of y and the next step
  int k;                         ///< order of the next step
  int nd;                        ///< differences held (points of the history, at most kmax + 2)
  int start;                     ///< 1 in the start phase (order and step growing)
  int ns;                        ///< steps taken with the present step size
  mbsReal psi[MBS_ABM_KMAX + 3]; ///< psi_i(n) = t_n - t_{n-i}, i = 1.. (psi[i - 1])
  mbsReal *y, *f;                ///< (n) the state at t and f(t, y)
  mbsReal *phi;         ///< ((kmax + 2) x n) modified divided differences phi_i(n), i = 1..nd
  mbsReal *phis;        ///< ((kmax + 2) x n) scratch: phi*_i
  mbsReal *yp, *fp, *e; ///< (n) scratch: predicted state, its f, differences
  long steps, rejected, evaluations, restarts;
  /// Sum of v (n values) over the ranks in place (NULL: one rank): the norms are of the whole
  /// state, so every rank takes the same decisions (one reduction per attempted step).
  int (*reduce)(void *ctx, mbsReal *v, int n);
  void *reduce_ctx;
  long order_used[MBS_ABM_KMAX + 1]; ///< accepted steps per order
} mbsAbm;

/// Scalars of the state a bitwise restart needs (mbs_abmSave): kmax, k, nd, start, ns, t, h,
/// the psi's, the four counters and order_used. The vectors are y, f and the nd rows of phi.
#define MBS_ABM_NSCALAR (11 + (MBS_ABM_KMAX + 3) + (MBS_ABM_KMAX + 1))
#define MBS_ABM_SAVED_T 5 ///< index of t among the saved scalars
#define MBS_ABM_SAVED_H 6 ///< index of h (the next step)

/// Allocate for n components, tolerance tol (> 0), highest order kmax (1..12).
mbsErr mbs_abmCreate(int n, mbsReal tol, int kmax, mbsAbm **out);
/// Free and NULL (NULL is a no-op).
void mbs_abmDestroy(mbsAbm **a);
/// The reduction over the ranks (a distributed state: each rank holds n of its components).
void mbs_abmSetReduce(mbsAbm *a, int (*reduce)(void *ctx, mbsReal *v, int n), void *ctx);
/// Start (or restart) at t0, y0: evaluates f once, order 1, a first step from the size of f and
/// the tolerance (h0 > 0: that step instead), history cleared.
mbsErr mbs_abmStart(mbsAbm *a, mbsReal t0, const mbsReal *y0, mbsReal h0, mbsAbmRhs f, void *ctx);
/// A change of y between steps up to MBS_ABM_KEEP times the tolerance keeps the history
/// (mbs_abmSetY): the differences are of f, which such a change moves by O(L change), an error
/// of O(h L change) in the next steps (measured on the squeezer, docs/integrator_abm.md 5.3:
/// restarts at 1 x tol cost evaluations and gained no accuracy).
#define MBS_ABM_KEEP 1e3

/// Replace y between steps (a projection onto closed loops, a renormalised quaternion): keep the
/// history when the change is small (weighted RMS of the change <= MBS_ABM_KEEP tol, the norm of
/// the error control), else restart at the next step (order 1, history cleared). Collective when
/// a reduction is set (every rank calls it, each with its part). Before the first step: only
/// sets y (the start evaluates f).
mbsErr mbs_abmSetY(mbsAbm *a, const mbsReal *y);
/// The scalars of the state into s (MBS_ABM_NSCALAR values; integers as exact doubles).
void mbs_abmSave(const mbsAbm *a, mbsReal *s);
/// Check saved scalars (pure: any values are safe): 0 when they are a state of an integrator
/// with highest order \p kmax, else a short reason (static text).
const char *mbs_abmSavedInvalid(const mbsReal *s, int kmax);
/// Restore the scalars saved by mbs_abmSave (checked with mbs_abmSavedInvalid first); the caller
/// then fills a->y, a->f and the first nd rows of a->phi. MBS_ERR_INPUT if they are invalid.
mbsErr mbs_abmLoad(mbsAbm *a, const mbsReal *s);

/// One accepted step, not past tout (the step is shortened to land on it); rejected attempts
/// are retried inside with smaller steps. A state without history (mbs_abmSetY's restart, or
/// a->nd == 0) starts first at (a->t, a->y). 0, or the right side's code, or MBS_ERR_NUMERIC when
/// the step falls below the resolution of t.
mbsErr mbs_abmStep(mbsAbm *a, mbsReal tout, mbsAbmRhs f, void *ctx);

#endif
