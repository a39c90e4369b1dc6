/// \file petsc_private.h
/// What the two PETSc files (petsc_ref.c: KSP backend, petsc_ts.c: TS integrator) share: the
/// call-and-check macro that turns a PETSc error code into mbspar's MBS_ERR_PETSC with the failing
/// call named. Include after a PETSc header.
#ifndef MBSP_PETSC_PRIVATE_H
#define MBSP_PETSC_PRIVATE_H

#include "mbspar/mbs_error.h"

#define MBS_CALL_PETSC(expr)                                                                       \
  do {                                                                                             \
    PetscErrorCode mbs_petsc_rc_ = (expr);                                                         \
    if (mbs_petsc_rc_)                                                                             \
      return mbs_errSet(MBS_ERR_PETSC, "%s failed (PETSc error %d)", #expr, (int)mbs_petsc_rc_);   \
  } while (0)

#endif
