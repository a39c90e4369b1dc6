/// \file mbs_solver.h
/// Method selectors shared by the config, the serial core and the parallel engine.
#ifndef MBS_SOLVER_H
#define MBS_SOLVER_H

/// Forward-dynamics / constraint-force methods (solver.method).
#define MBS_SOLVER_LIST(X)                                                                         \
  X(MBS_SOLVER_ABA, "aba")                                                                         \
  X(MBS_SOLVER_CRBA, "crba")                                                                       \
  X(MBS_SOLVER_JACOBI, "jacobi")                                                                   \
  X(MBS_SOLVER_GS, "gs")                                                                           \
  X(MBS_SOLVER_SOR, "sor")                                                                         \
  X(MBS_SOLVER_CHEBYSHEV, "chebyshev")                                                             \
  X(MBS_SOLVER_JCG, "jcg")                                                                         \
  X(MBS_SOLVER_DIRECT, "direct")                                                                   \
  X(MBS_SOLVER_PETSC, "petsc")                                                                     \
  X(MBS_SOLVER_SCHUR, "schur")

typedef enum {
#define MBS_SOLVER_ENUM(id, name) id,
  MBS_SOLVER_LIST(MBS_SOLVER_ENUM)
#undef MBS_SOLVER_ENUM
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

/// Time integrators (integrator.method).
typedef enum { MBS_INT_EULER = 0, MBS_INT_RK4 = 1, MBS_INT_DP5 = 2 } mbsIntegrator;

/// Why an iterative solve stopped (a reason, not an error).
typedef enum {
  MBS_REASON_CONVERGED = 1,
  MBS_REASON_CONVERGED_DIRECT = 2,
  MBS_REASON_DIVERGED_MAXIT = -1,
  MBS_REASON_DIVERGED_BREAKDOWN = -2,
  MBS_REASON_DIVERGED_NAN = -3,
  MBS_REASON_DIVERGED_DTOL = -4 ///< the residual grew by more than 1e6 (iteration diverges)
} mbsReason;

const char *mbs_solverName(int method);
int mbs_solverFromName(const char *name);
const char *mbs_reasonName(int reason);

#endif
