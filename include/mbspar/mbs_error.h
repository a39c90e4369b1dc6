/// \file mbs_error.h
/// The one error convention of mbspar: every function that can fail returns an mbsErr
/// (MBS_OK == 0); MBS_CALL propagates a failure with a traceback entry, MBS_CHECK raises an
/// input or usage error with a message. User-facing messages have the form "FILE:LINE: text".
#ifndef MBS_ERROR_H
#define MBS_ERROR_H

// X(name, exit code, description)
#define MBS_ERR_LIST(X)                                                                            \
  X(MBS_OK, 0, "success")                                                                          \
  X(MBS_ERR_INPUT, 2, "invalid input")                                                             \
  X(MBS_ERR_USAGE, 2, "invalid command line")                                                      \
  X(MBS_ERR_IO, 3, "input/output error")                                                           \
  X(MBS_ERR_NOMEM, 4, "out of memory")                                                             \
  X(MBS_ERR_NUMERIC, 5, "numerical failure")                                                       \
  X(MBS_ERR_MPI, 6, "MPI error")                                                                   \
  X(MBS_ERR_PETSC, 7, "PETSc error")                                                               \
  X(MBS_ERR_UNSUPPORTED, 8, "unsupported feature")                                                 \
  X(MBS_ERR_INTERNAL, 9, "internal error")                                                         \
  X(MBS_INTERRUPTED, 10, "stopped by a signal after writing a checkpoint")

typedef enum {
#define MBS_ERR_ENUM(name, code, desc) name,
  MBS_ERR_LIST(MBS_ERR_ENUM)
#undef MBS_ERR_ENUM
      MBS_ERR_COUNT
} mbsErr;

/// Return the short description of an error code.
const char *mbs_errString(mbsErr e);

/// Return the process exit code that corresponds to an error code (input/usage errors give 2).
int mbs_errExitCode(mbsErr e);

/// Record an error message (printf format) and return \p e. The message is what the user sees;
/// for input errors it starts with "FILE:LINE: ". A later call replaces an earlier message.
mbsErr mbs_errSet(mbsErr e, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/// Prefix the recorded message with "prefix: " (used to add FILE:LINE context on the way up).
void mbs_errPrefix(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/// The last recorded message ("" if none).
const char *mbs_errMsg(void);

/// Clear the recorded message and traceback.
void mbs_errClear(void);

/// Append one traceback frame (called by MBS_CALL on failure).
void mbs_errTrace(const char *file, int line, const char *func);

/// The traceback recorded since the last mbs_errClear ("" if none), one frame per line.
const char *mbs_errTraceback(void);

/// Propagate a failure: evaluate \p expr; if it is not MBS_OK, record a traceback frame and return
/// the code from the enclosing function.
#define MBS_CALL(expr)                                                                             \
  do {                                                                                             \
    mbsErr mbs_call_err_ = (expr);                                                                 \
    if (mbs_call_err_ != MBS_OK) {                                                                 \
      mbs_errTrace(__FILE__, __LINE__, __func__);                                                  \
      return mbs_call_err_;                                                                        \
    }                                                                                              \
  } while (0)

/// Check an input or usage condition that stays in release builds: on failure record the message
/// and return \p code from the enclosing function.
#define MBS_CHECK(cond, code, ...)                                                                 \
  do {                                                                                             \
    if (!(cond)) return mbs_errSet((code), __VA_ARGS__);                                           \
  } while (0)

/// Allocate \p n elements of *ptr (zeroed) or return MBS_ERR_NOMEM.
#define MBS_ALLOC(ptr, n)                                                                          \
  do {                                                                                             \
    size_t mbs_alloc_n_ = (size_t)(n);                                                             \
    (ptr) = calloc(mbs_alloc_n_ ? mbs_alloc_n_ : 1, sizeof(*(ptr)));                               \
    if (!(ptr))                                                                                    \
      return mbs_errSet(MBS_ERR_NOMEM, "out of memory allocating %zu bytes (%s:%d)",               \
                        mbs_alloc_n_ * sizeof(*(ptr)), __FILE__, __LINE__);                        \
  } while (0)

/// Internal invariant, removed under NDEBUG.
#ifdef NDEBUG
#define MBS_ASSERT(cond) ((void)0)
#else
#include <assert.h>
#define MBS_ASSERT(cond) assert(cond)
#endif

#endif
