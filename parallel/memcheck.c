/// \file memcheck.c
/// Memory admission of a model (memcheck.h). Communication: one mbsp_localRank (ranks per host)
/// and one mbsp_agreeErr; the counting itself reads only the parsed config, which every rank
/// has, so every rank of a host reaches the same verdict and the lowest failing rank's message
/// is the one printed.
///
/// The model is replicated on every rank unless the verb runs on distributed-memory models (then
/// it is split like the engine's data). The
/// constants are peak resident sizes measured with /usr/bin/time on chains of 1e5 and 5e5
/// bodies (slope between the two; docs/model.md), rounded up. The estimate errs on the safe
/// side: the whole of rank 0's gathers is counted on every host.
#define _POSIX_C_SOURCE 200809L
#include "memcheck.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "mbspar/mbs_solvertype.h"

// bytes per body, measured (docs/model.md "Model size and memory")
#define MBSP_MEM_MODEL  600.0  ///< the parsed config and the model, on every rank
#define MBSP_MEM_FIXED  120e6  ///< per rank: MPI, PETSc, hwloc and the binary
#define MBSP_MEM_ENGINE 3100.0 ///< distributed engine (blocks, halo, CG vectors), split
#define MBSP_MEM_GATHER 700.0  ///< rank 0: results gathered from a distributed method
#define MBSP_MEM_ABA    1500.0 ///< rank 0: a serial workspace (aba, crba without its M)
#define MBSP_MEM_RUN    1100.0 ///< run: integrator vectors, the gathered output state (rank 0)

// "123", "1.5G", "800M": bytes; <0 if malformed
static double mbsp_parseBytes(const char *s) {
  char *end = NULL;
  double v = strtod(s, &end);
  if (end == s || !(v >= 0)) return -1;
  double mul = 1;
  switch (*end) {
  case 'k':
  case 'K':
    mul = 1e3, end++;
    break;
  case 'm':
  case 'M':
    mul = 1e6, end++;
    break;
  case 'g':
  case 'G':
    mul = 1e9, end++;
    break;
  case 't':
  case 'T':
    mul = 1e12, end++;
    break;
  default:
    break;
  }
  if (*end == 'B' || *end == 'b') end++;
  return *end ? -1 : v * mul;
}

// the first number of a one-line file, or -1 ("max", absent)
static double mbsp_readNumber(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char buf[64] = "";
  double v = -1;
  if (fgets(buf, sizeof buf, f)) {
    char *end = NULL;
    v = strtod(buf, &end);
    if (end == buf) v = -1;
  }
  fclose(f);
  return v;
}

void mbsp_memAvailable(double *bytes, const char **source) {
  const char *env = getenv("MBS_MEM_AVAILABLE");
  if (env && env[0]) {
    double v = mbsp_parseBytes(env);
    if (v >= 0) {
      *bytes = v;
      *source = "MBS_MEM_AVAILABLE";
      return;
    }
  }
  double avail = -1;
  *source = "MemAvailable in /proc/meminfo";
  FILE *f = fopen("/proc/meminfo", "r");
  if (f) {
    char line[256];
    while (fgets(line, sizeof line, f)) {
      double kb;
      if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1) avail = kb * 1024;
    }
    fclose(f);
  }
  if (avail < 0) {
    long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    if (pages > 0 && size > 0) avail = (double)pages * (double)size;
    *source = "sysconf(_SC_AVPHYS_PAGES)";
  }
  // a cgroup v2 limit (containers, batch jobs) may be tighter than the host's free memory
  double max = mbsp_readNumber("/sys/fs/cgroup/memory.max"),
         cur = mbsp_readNumber("/sys/fs/cgroup/memory.current");
  if (max > 0 && cur >= 0 && (avail < 0 || max - cur < avail)) {
    avail = max > cur ? max - cur : 0;
    *source = "cgroup memory.max - memory.current";
  }
  *bytes = avail > 0 ? avail : 0;
}

void mbsp_memBudget(const mbsConfig *cfg, const char *verb, int ranks, int ranks_here, int local,
                    mbsMemBudget *b) {
  static char what[128];
  int method = cfg->opt.solver;
  const mbsSolverType *t = mbs_solverCaps(method);
  int serial = t->baseline;
  int check = !strcmp(verb, "check"), run = !strcmp(verb, "run"),
      inverse = !strcmp(verb, "inverse"), accel = !strcmp(verb, "accel");
  double p = ranks > 0 ? ranks : 1;
  // every rank: the model (distributed-memory models: its share); distributed methods: the
  // engine's share
  double per = local ? MBSP_MEM_MODEL / p : MBSP_MEM_MODEL, rank0 = 0;
  if (!check && !inverse && !serial) {
    per += MBSP_MEM_ENGINE / p;
    per += t->mem_per_body / p; // e.g. petsc's assembled matrix
    // accel on a distributed-memory model streams its results into the report (accel_stream.c)
    if (!(local && accel)) rank0 += MBSP_MEM_GATHER;
  }
  // rank 0: serial workspaces, run's integrator and outputs
  if (!check && (serial || inverse)) rank0 += MBSP_MEM_ABA;
  if (run) {
    rank0 += MBSP_MEM_RUN;
    per += mbs_integratorType(cfg->opt.integrator)->bytes_per_body / p; // stages, history
  }
  int here = ranks_here > 0 ? ranks_here : 1;
  // rank 0's extra once per host, spread over its ranks so the budget stays per rank
  b->bytes_per_body = per + rank0 / here;
  b->bytes_fixed = MBSP_MEM_FIXED;
  b->ranks_here = here;
  snprintf(what, sizeof what, "%s%s%s on %d rank(s)", verb, check || inverse ? "" : " with ",
           check || inverse ? "" : mbs_solverName(method), ranks);
  b->what = what;
  b->avail = 0;
  b->source = NULL;
}

mbsErr mbsp_memCheck(mbspComm *comm, const mbsConfig *cfg, const char *verb, int local) {
  int lr = 0, nl = 1;
  mbsErr e = mbsp_localRank(comm, &lr, &nl);
  if (!e) {
    mbsMemBudget b;
    mbsp_memBudget(cfg, verb, mbsp_size(comm), nl, local, &b);
    mbsp_memAvailable(&b.avail, &b.source);
    // nothing readable (an exotic host): do not guess, let the allocations decide
    if (b.avail > 0) e = mbs_configCheckMemory(cfg, &b, NULL);
  }
  return mbsp_agreeErr(comm, e);
}
