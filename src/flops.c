/// \file flops.c
/// The flop counter of the instrumented kernels (flops.h; counted only in the builds with
/// MBS_COUNT_FLOPS, e.g. the CMake target mbs_core_flops of test_cpa).
#include "flops.h"

unsigned long long mbs_flop_count = 0;
void (*mbs_flop_sink)(void) = NULL;
void (*mbs_wtime_resume)(void) = NULL;
