/// \file threads.h
/// The OpenMP thread count of each rank: a default that never oversubscribes the cores, and a
/// warning when OMP_NUM_THREADS does (parallel/threads.c).
#ifndef MBS_THREADS_H
#define MBS_THREADS_H

#include "affinity.h"
#include "mbspar/mbs_parallel.h"

/// Threads per rank from an OMP_NUM_THREADS value: its first entry ("4" or "4,2" for nested
/// levels) if that is a positive integer, else 0 (unset or unusable: the default applies). Local.
int mbsp_threadsParseEnv(const char *value);

/// The default thread count of a rank whose cpu set covers \p cores cores, shared with
/// \p ranks_sharing ranks on its node (itself included): max(1, cores / ranks_sharing). Local.
int mbsp_threadsDefault(int cores, int ranks_sharing);

/// Choose this rank's OpenMP thread count before any parallel region: OMP_NUM_THREADS when it is
/// set (parsed by mbsp_threadsParseEnv), otherwise mbsp_threadsDefault of the rank's cpu set and
/// the ranks on its node whose cpu sets overlap it (omp_set_num_threads). When OMP_NUM_THREADS
/// (> 1) times the ranks sharing a cpu set exceeds its cores on some rank, rank 0 prints one
/// warning line on stderr naming the numbers (the run continues). The choice is kept for the
/// reports (mbspAffinity threads_source, cores, ranks_sharing) and returned in \p out (may be
/// NULL). Collective.
mbsErr mbsp_threadsInit(mbspComm *comm, mbspThreadChoice *out);

#endif
