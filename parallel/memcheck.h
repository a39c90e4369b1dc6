/// \file memcheck.h
/// Refuse models too large for the memory of the hosts before building them (issue 12): the
/// body count from the config (nothing allocated), an estimate of bytes per body per rank for
/// the verb and method (measured, docs/model.md "Model size and memory"), and the memory
/// available on each host.
#ifndef MBS_MEMCHECK_H
#define MBS_MEMCHECK_H
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_parallel.h"

/// Bytes the host has available for new allocations: MBS_MEM_AVAILABLE (bytes, or with a
/// k/M/G/T suffix: a test hook and an override for hosts whose limit the others miss), else the
/// smaller of MemAvailable in /proc/meminfo and the cgroup v2 limit (memory.max minus
/// memory.current), else sysconf(_SC_AVPHYS_PAGES) pages. Local.
/// \param[out] bytes   available bytes (0 when nothing could be read)
/// \param[out] source  a static string naming where the number came from
void mbsp_memAvailable(double *bytes, const char **source);

/// Fill \p b with the estimate for \p verb ("run", "accel", ...) with the config's solver on
/// \p ranks ranks, \p ranks_here of them on this host (the host with rank 0 is assumed: its
/// gathers are counted once per host). Local.
void mbsp_memBudget(const mbsConfig *cfg, const char *verb, int ranks, int ranks_here, int local,
                    mbsMemBudget *b);

/// Count the bodies, estimate the memory per host and refuse a model that does not fit
/// (MBS_ERR_INPUT "FILE:LINE: model too large for the memory here: ..." or MBS_ERR_USAGE
/// "--set KEY=VALUE: ..."), on every rank with the same verdict. Collective.
mbsErr mbsp_memCheck(mbspComm *comm, const mbsConfig *cfg, const char *verb, int local);

#endif
