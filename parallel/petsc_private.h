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
    if (mbs_petsc_rc_) { /* PETSc's message of the error (its handler only returns codes) */       \
      const char *mbs_petsc_txt_ = NULL;                                                           \
      char *mbs_petsc_msg_ = NULL;                                                                 \
      PetscErrorMessage(mbs_petsc_rc_, &mbs_petsc_txt_, &mbs_petsc_msg_);                          \
      return mbs_errSet(                                                                           \
          MBS_ERR_PETSC, "%s failed (PETSc error %d: %s)", #expr, (int)mbs_petsc_rc_,              \
          mbs_petsc_msg_ && *mbs_petsc_msg_                                                        \
              ? mbs_petsc_msg_                                                                     \
              : (mbs_petsc_txt_ ? mbs_petsc_txt_ : "MBS_PETSC_TRACE=1 shows PETSc's"));            \
    }                                                                                              \
  } while (0)

#endif
