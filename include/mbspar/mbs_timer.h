/// \file mbs_timer.h
/// Phase timers: an X-macro list of ids and dotted names; MBS_TIC/MBS_TOC accumulate count and
/// total seconds on a monotonic clock. Compiled out with MBS_NTIMING.
#ifndef MBS_TIMER_H
#define MBS_TIMER_H

#define MBS_TIMER_LIST(X)                                                                          \
  X(MBS_TIMER_EVAL, "eval")                                                                        \
  X(MBS_TIMER_POSITION, "eval.position")                                                           \
  X(MBS_TIMER_VELOCITY, "eval.velocity")                                                           \
  X(MBS_TIMER_ASSEMBLY, "eval.constraint.assembly")                                                \
  X(MBS_TIMER_FACTOR, "eval.constraint.factor")                                                    \
  X(MBS_TIMER_SOLVE, "eval.constraint.solve")                                                      \
  X(MBS_TIMER_LOCALSOLVE, "eval.constraint.solve.local")                                           \
  X(MBS_TIMER_ACCEL, "eval.acceleration")                                                          \
  X(MBS_TIMER_LOOPS, "eval.loops")                                                                 \
  X(MBS_TIMER_HALO, "comm.halo")                                                                   \
  X(MBS_TIMER_ALLREDUCE, "comm.allreduce")                                                         \
  X(MBS_TIMER_PREFIX, "comm.prefix")                                                               \
  X(MBS_TIMER_IFACE, "comm.interface")                                                             \
  X(MBS_TIMER_STEP, "step")                                                                        \
  X(MBS_TIMER_OUTPUT, "output")

typedef enum {
#define MBS_TIMER_ENUM(id, name) id,
  MBS_TIMER_LIST(MBS_TIMER_ENUM)
#undef MBS_TIMER_ENUM
      MBS_TIMER_COUNT
} mbsTimerId;

typedef struct {
  long count;   ///< number of tic/toc pairs
  double total; ///< accumulated seconds
  double start; ///< time of the open tic
} mbsTimer;

/// Seconds on a monotonic clock.
double mbs_wtime(void);
/// Dotted name of a timer id.
const char *mbs_timerName(int id);

/// A listener of every MBS_TIC (begin = 1) and MBS_TOC (begin = 0), e.g. the PETSc log events of
/// -log_view (parallel/petsc_log.c). NULL (the default) costs one test per tic and toc.
typedef void (*mbsTimerHook)(int id, int begin);
/// The installed listener (NULL: none). Set it with mbs_timerSetHook, once, before any timing.
extern mbsTimerHook mbs_timer_hook;
/// Install (or, with NULL, remove) the listener. Local; not thread-safe (call at start-up).
void mbs_timerSetHook(mbsTimerHook hook);

#ifdef MBS_NTIMING
#define MBS_TIC(timers, id) ((void)0)
#define MBS_TOC(timers, id) ((void)0)
#else
#define MBS_TIC(timers, id)                                                                        \
  do {                                                                                             \
    if (mbs_timer_hook) mbs_timer_hook(id, 1);                                                     \
    (timers)[id].start = mbs_wtime();                                                              \
  } while (0)
#define MBS_TOC(timers, id)                                                                        \
  do {                                                                                             \
    (timers)[id].total += mbs_wtime() - (timers)[id].start;                                        \
    (timers)[id].count++;                                                                          \
    if (mbs_timer_hook) mbs_timer_hook(id, 0);                                                     \
  } while (0)
#endif

#endif
