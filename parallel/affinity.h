/// \file affinity.h
/// Where a process and its OpenMP threads run (host, cpu set, NUMA node, per-thread cpu) and an
/// optional binding when the launcher did not bind. hwloc is used only in affinity.c (guarded by
/// MBS_HAVE_HWLOC); without it a Linux fallback uses sched_getaffinity/sched_setaffinity.
/// Nothing here calls MPI: callers gather the per-rank records through comm.c.
#ifndef MBS_AFFINITY_H
#define MBS_AFFINITY_H

#include "mbspar/mbs_error.h"

/// One process's placement. Strings are always NUL-terminated; a list too long for its buffer
/// ends in "...".
typedef struct {
  char host[64];           // host name (gethostname)
  char cpuset[128];        // cpus (OS indices) the process may run on, as a list, e.g. "0-1"
  int numa_node;           // NUMA node of those cpus; -1 if they span several or it is unknown
  int ncores_machine;      // physical cores of the machine (logical cpus without hwloc)
  int npus_machine;        // logical cpus (hardware threads) of the machine
  int nthreads;            // OpenMP threads of a parallel region
  char thread_cpus[256];   // per OpenMP thread (in thread order) the cpu it last ran on, followed
                           // by "(set)" when the thread's binding differs from cpuset: "0(0),1(1)"
  char binding[32];        // "mbspar:core", "mbspar:numa" (bound by mbsp_affinityBind),
                           // "launcher" (bound to a strict subset of the allowed cpus before we
                           // looked) or "none" (may run on every allowed cpu)
  int cores;               // cores the cpu set covers (a core counts if one of its cpus is in it)
  char threads_source[24]; // how the thread count was chosen: "OMP_NUM_THREADS", "default"
                           // (mbsp_threadsInit: cores / ranks_sharing) or "unset" (not chosen)
  int ranks_sharing;       // ranks on this node whose cpu sets overlap this one's, itself
                           // included, when the thread count was chosen (0: not chosen)
} mbspAffinity;

/// How a process's OpenMP thread count was chosen (parallel/threads.c mbsp_threadsInit).
typedef struct {
  int threads;       // threads of a parallel region
  int from_env;      // 1: OMP_NUM_THREADS, 0: the default max(1, cores / ranks_sharing)
  int cores;         // cores of the process's cpu set
  int ranks_sharing; // ranks on this node whose cpu sets overlap it, itself included
} mbspThreadChoice;

/// Fill \p a for the calling process and its OpenMP threads (opens one parallel region).
/// Call it outside any parallel region. Local.
mbsErr mbsp_affinityQuery(mbspAffinity *a);

/// The process's cpu set as a bit mask (bit c % 8 of byte c / 8 is cpu c, by OS index; cpus
/// beyond 8 * nbytes are left out) and the number of cores it covers (a core counts when one of
/// its cpus is in the set; logical cpus without hwloc). Call it outside any parallel region.
/// Local.
mbsErr mbsp_affinityCpuMask(unsigned char *mask, int nbytes, int *ncores);

/// Remember how the thread count was chosen, for mbsp_affinityQuery's report. Local.
void mbsp_affinitySetThreadChoice(const mbspThreadChoice *c);

/// Bind the process and its threads when the launcher did not (mode "core" or "numa"); "none"
/// leaves everything as it is. "core": the process gets T = omp_get_max_threads() consecutive
/// cores starting at core (local_rank * T) mod ncores, so ranks on one node fill distinct cores
/// while there are enough; "numa": NUMA node local_rank mod nnuma. A process already bound by
/// its launcher (cpu set a strict subset of the allowed cpus, not set by an earlier call here)
/// is left alone. \p nlocal (ranks on this node) is only checked (>= 1, > local_rank). An
/// unknown mode is MBS_ERR_USAGE; "numa" without hwloc is MBS_ERR_UNSUPPORTED. Local.
mbsErr mbsp_affinityBind(const char *mode, int local_rank, int nlocal);

#endif
