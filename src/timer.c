/// \file timer.c
/// Monotonic clock and timer names.
#define _POSIX_C_SOURCE 200809L
#include <time.h>
#include "mbspar/mbs_timer.h"
#include "flops.h"

double mbs_wtime(void) {
  if (mbs_flop_sink) mbs_flop_sink(); // the SMPI flop-cost build: charge the compute so far
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  if (mbs_wtime_resume) mbs_wtime_resume(); // the SMPI warm build: this rank's data re-read
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const char *mbs_timerName(int id) {
  static const char *names[] = {
#define MBS_TIMER_NAME(id, name) name,
      MBS_TIMER_LIST(MBS_TIMER_NAME)
#undef MBS_TIMER_NAME
  };
  return (id >= 0 && id < MBS_TIMER_COUNT) ? names[id] : "?";
}

mbsTimerHook mbs_timer_hook = NULL;

void mbs_timerSetHook(mbsTimerHook hook) {
  mbs_timer_hook = hook;
}
