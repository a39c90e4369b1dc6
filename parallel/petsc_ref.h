/// \file petsc_ref.h
/// PETSc KSP backend of the constraint-force solve (solver.method = petsc). Private to the
/// parallel layer; no PETSc types leak out.
#ifndef MBS_PETSC_REF_H
#define MBS_PETSC_REF_H
#include "mbspar/mbs_solvertype.h"
#include "mbspar/mbs_parallel.h"

typedef struct mbspPetsc mbspPetsc;

/// Initialise PETSc on top of the running MPI (options from argc/argv: -ksp_*, -pc_*, ...).
/// Returns MBS_ERR_UNSUPPORTED in builds without PETSc. Collective.
mbsErr mbsp_petscInitialize(int *argc, char ***argv);
/// Finalise PETSc if it was initialised. Collective.
void mbsp_petscFinalize(void);
/// Set (value: "" for a flag) or clear (value NULL) one option of PETSc's global database, as
/// -name value on the command line would; read when a petsc solver is next created. Local.
mbsErr mbsp_petscSetOption(const char *name, const char *value);
/// The solver-table entry of solver.method = petsc (KSP on the assembled matrix); registered by
/// mbsp_solversRegister. Its create needs the engine as context (mbs_cfsSetContext).
extern const mbsSolverType mbsp_solverPetsc;
/// PETSc version string ("" without PETSc). Local.
const char *mbsp_petscVersion(void);
#endif
