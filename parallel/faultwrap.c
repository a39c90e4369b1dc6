/// \file faultwrap.c
/// Allocation fault points of the mbspar binary (mbs_fault.h): the binary is linked with
/// -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc, so every allocation of mbspar's own code
/// (the static libraries mbs_core and mbs_parallel and main.c) passes through here; the shared
/// libraries (MPI, PETSc, HDF5, libconfig, libc itself) keep their own references. Without
/// MBS_FAULT / MBS_FAULT_LOG the wrappers cost one test of a flag. Not part of the libraries (the
/// test programs link them without the wrap). No communication.
#include <errno.h>
#include <stddef.h>
#include "mbspar/mbs_fault.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

// the caller's address identifies the allocation point
#define MBS_FAULT_ALLOC_POINT()                                                                    \
  (mbs_faultActive() && mbs_faultHit(MBS_FAULT_ALLOC, __builtin_return_address(0), NULL))

void *__wrap_malloc(size_t n) {
  if (MBS_FAULT_ALLOC_POINT()) {
    errno = ENOMEM;
    return NULL;
  }
  return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size) {
  if (MBS_FAULT_ALLOC_POINT()) {
    errno = ENOMEM;
    return NULL;
  }
  return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n) {
  if (MBS_FAULT_ALLOC_POINT()) {
    errno = ENOMEM;
    return NULL;
  }
  return __real_realloc(p, n);
}
