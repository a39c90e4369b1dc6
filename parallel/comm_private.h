/// \file comm_private.h
/// Raw MPI communicator of an mbspComm, for the modules that hand it to a library (PETSc).
/// Included only by parallel/comm.c, parallel/comm_fmt.c, parallel/petsc_*.c and parallel/h5out.c.
#ifndef MBS_COMM_PRIVATE_H
#define MBS_COMM_PRIVATE_H
#include <mpi.h>
#include "mbspar/mbs_parallel.h"
MPI_Comm mbsp_commRaw(const mbspComm *comm);
#endif
