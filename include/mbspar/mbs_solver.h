/// \file mbs_solver.h
/// Method selectors shared by the config, the serial core and the parallel engine.
#ifndef MBS_SOLVER_H
#define MBS_SOLVER_H

#include <stddef.h>
#include "mbs_solverlist.h"

/// Forward-dynamics / constraint-force methods (solver.method): stable ids (checkpoints store
/// them), one per line of MBS_SOLVERS (mbs_solverlist.h). Each id has one entry in the solver
/// table (mbs_solvertype.h), which gives its name, its callbacks and its cpa graph; ids of
/// solvers implemented in the parallel layer are filled when that layer registers them
/// (mbsp_init).
typedef enum {
#define MBS_SOLVER_ID_(ID, NUMBER, ROW) MBS_SOLVER_##ID = NUMBER,
  MBS_SOLVERS(MBS_SOLVER_ID_, MBS_SOLVER_ID_)
#undef MBS_SOLVER_ID_
      MBS_SOLVER_COUNT
} mbsSolverMethod;

/// Convergence criterion (solver.criterion).
typedef enum {
  MBS_CRIT_RESIDUAL = 0, ///< ||b - A x|| / ||b|| <= tol (in the D^{-1} norm for J-CG)
  MBS_CRIT_CHANGE = 1    ///< seed 002: ||x_i - x_{i-1}|| / ||x_i|| <= tol
} mbsSolverCriterion;

/// Warm start of the constraint forces (solver.warm_start).
typedef enum {
  MBS_WARM_NONE = 0,
  MBS_WARM_PREVIOUS = 1,
  MBS_WARM_LINEAR = 2,
  MBS_WARM_QUADRATIC = 3,
  MBS_WARM_CUBIC = 4
} mbsWarmStart;

/// Time integrators (integrator.method): one row each in src/integrator.c.
typedef enum { MBS_INT_EULER = 0, MBS_INT_RK4 = 1, MBS_INT_DP5 = 2, MBS_INT_ABM = 3 } mbsIntegrator;

/// A row of the integrator table (mbs_integratorType).
typedef struct {
  const char *name; ///< its integrator.method value
  int nstage;       ///< warm-start slots: right-side evaluations per step (a rejected
                    ///< attempt's share the last)
  int adaptive;     ///< error-controlled steps (integrator.tol; solver.tol = tol/10 unless set)
  double bytes_per_body; ///< memory of its stages or history per body beyond rk4's (memcheck)
  const char *help;      ///< one line for `mbspar help config`
} mbsIntegratorType;
/// The row of integrator \p id, or NULL.
const mbsIntegratorType *mbs_integratorType(int id);
/// The names in id order, NULL-terminated (the enum descriptor of integrator.method).
extern const char *const mbs_integrator_names[];

/// Why an iterative solve stopped (a reason, not an error).
typedef enum {
  MBS_REASON_CONVERGED = 1,
  MBS_REASON_CONVERGED_DIRECT = 2,
  MBS_REASON_DIVERGED_MAXIT = -1,
  MBS_REASON_DIVERGED_BREAKDOWN = -2,
  MBS_REASON_DIVERGED_NAN = -3,
  MBS_REASON_DIVERGED_DTOL = -4, ///< the residual grew by more than 1e6 (iteration diverges)
  /// jcg, chebyshev: the recursion's residual met the tolerance but b - A x did not, and going on
  /// from the true residual stopped reducing it (the rounding floor of A x lies above the
  /// tolerance)
  MBS_REASON_DIVERGED_STAGNATED = -5
} mbsReason;

/// Name of a method from the solver table ("?" if \p method has no registered entry).
const char *mbs_solverName(int method);
/// Id of the registered method called \p name, or -1.
int mbs_solverFromName(const char *name);
/// The registered method names in id order, separated by ", ", into buf (truncated to n).
void mbs_solverNames(char *buf, size_t n);
/// The same for the rows \p pick accepts (NULL: all).
struct mbsSolverType;
void mbs_solverNamesIf(char *buf, size_t n, int (*pick)(const struct mbsSolverType *));
const char *mbs_reasonName(int reason);

/// The Dormand–Prince 5(4) tableau (src/integrator.c): stage coefficients a_ij (row 6 = the
/// fifth-order weights, first same as last) and b - b̂ for the error estimate. Used by the
/// natural-coordinate and flexible-body cores, which step their own state vectors.
extern const double mbs_dp5A[7][6];
extern const double mbs_dp5E[7];

#endif
