/// \file solvers.h
/// The solvers of the parallel layer in the solver table (mbs_solvertype.h). Private to parallel/.
#ifndef MBSP_SOLVERS_H
#define MBSP_SOLVERS_H
#include "mbspar/mbs_error.h"

/// Register the solvers implemented in the parallel layer (petsc; schur to come) in the solver
/// table, so that solver.method, the config and mbspar accept them. Called by mbsp_init before
/// any config is parsed; idempotent. Local.
mbsErr mbsp_solversRegister(void);

#endif
