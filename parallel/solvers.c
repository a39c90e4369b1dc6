/// \file solvers.c
/// Registration of the parallel layer's constraint-force solvers in the solver table: the PAR
/// lines of MBS_SOLVERS (include/mbspar/mbs_solverlist.h). A solver implemented here is one line
/// there (its id and row) and a const mbsSolverType in its own file; its create receives the
/// distributed engine (mbspEngine *) as context, which gives it the communicator
/// (mbsp_engineComm), the decomposition (mbsp_engineStarts, mbsp_engineDecomp) and, through
/// mbs_parallel.h, point-to-point and collective messages. No communication here.
#include "solvers.h"
#include "mbspar/mbs_solvertype.h"

#define MBSP_SOLVER_DECL_(ID, NUMBER, ROW) extern const mbsSolverType ROW;
MBS_SOLVERS(MBS_SOLVERS_SKIP, MBSP_SOLVER_DECL_)
#undef MBSP_SOLVER_DECL_

mbsErr mbsp_solversRegister(void) {
#define MBSP_SOLVER_REG_(ID, NUMBER, ROW) MBS_CALL(mbs_solverRegister(&ROW));
  MBS_SOLVERS(MBS_SOLVERS_SKIP, MBSP_SOLVER_REG_)
#undef MBSP_SOLVER_REG_
  return MBS_OK;
}
