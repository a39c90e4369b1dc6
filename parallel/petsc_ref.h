/// \file petsc_ref.h
/// PETSc KSP backend of the constraint-force solve (solver.method = petsc). Private to the
/// parallel layer; no PETSc types leak out.
#ifndef MBS_PETSC_REF_H
#define MBS_PETSC_REF_H
#include "mbspar/mbs_cfs.h"
#include "mbspar/mbs_parallel.h"

typedef struct mbspPetsc mbspPetsc;

/// Initialise PETSc on top of the running MPI (options from argc/argv: -ksp_*, -pc_*, ...).
/// Returns MBS_ERR_UNSUPPORTED in builds without PETSc. Collective.
mbsErr mbsp_petscInitialize(int *argc, char ***argv);
/// Finalise PETSc if it was initialised. Collective.
void mbsp_petscFinalize(void);
/// Solve A x = rhs (c->rhs, initial guess c->x) with KSP; the matrix is assembled from the block
/// rows of the owned bodies (created with its nonzero pattern on the first call). Collective.
mbsErr mbsp_petscSolve(mbspComm *comm, mbspPetsc **ctx, const mbsModel *m, const mbsState *s,
                       mbsWork *w, mbsCfs *c, int *iterations, int *reason, double *residual);
/// Free (NULL is a no-op). Collective.
void mbsp_petscDestroy(mbspPetsc **ctx);
/// PETSc version string ("" without PETSc). Local.
const char *mbsp_petscVersion(void);
#endif
