/// \file solvers.c
/// Registration of the parallel layer's constraint-force solvers in the solver table. A solver
/// implemented here gets a stable id in include/mbspar/mbs_solver.h and a const mbsSolverType in
/// its own file; its create receives the distributed engine (mbspEngine *) as context, which
/// gives it the communicator (mbsp_engineComm), the decomposition (mbsp_engineStarts, mbsp_
/// engineDecomp) and, through mbs_parallel.h, point-to-point and collective messages. No
/// communication here.
#include "solvers.h"
#include "petsc_ref.h"
#include "schur_par.h"

mbsErr mbsp_solversRegister(void) {
  MBS_CALL(mbs_solverRegister(&mbsp_solverPetsc));
  MBS_CALL(mbs_solverRegister(&mbsp_solverSchur)); // the exact distributed solver
  return MBS_OK;
}
