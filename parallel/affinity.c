/// \file affinity.c
/// Process/thread placement report and optional binding. The only file that uses hwloc
/// (MBS_HAVE_HWLOC); without hwloc a Linux fallback uses sched_getaffinity/sched_setaffinity and
/// sched_getcpu. No MPI here: the driver gathers the per-rank mbspAffinity records via comm.c.
///
/// "Bound by the launcher" means the process's cpu set is a strict subset of the cpus it is
/// allowed to use (its cgroup / the machine) and was not set by mbsp_affinityBind. Such a process
/// is never rebound: mpirun --bind-to, srun --cpu-bind and taskset keep the last word.
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef MBS_HAVE_HWLOC
#include <hwloc.h>
#endif
#include "affinity.h"

// the cpu list and mode of the last binding made here ("" if none)
static char mbsp_aff_boundset[128];
static char mbsp_aff_boundmode[16];

static int mbsp_affMaxThreads(void) {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

// copy src into dst (size n), ending in "..." when it does not fit
static void mbsp_affCopy(char *dst, size_t n, const char *src) {
  size_t len = strlen(src);
  if (len < n) {
    memcpy(dst, src, len + 1);
    return;
  }
  memcpy(dst, src, n - 1);
  dst[n - 1] = '\0';
  if (n > 4) memcpy(dst + n - 4, "...", 4);
}

// append "text" to dst (size n) after a comma when dst is not empty; mark truncation with "..."
static void mbsp_affAppend(char *dst, size_t n, const char *text) {
  size_t len = strlen(dst);
  if (len + 4 >= n && len >= 3 && strcmp(dst + len - 3, "...") == 0) return;
  char tmp[96];
  snprintf(tmp, sizeof tmp, "%s%s", len ? "," : "", text);
  if (len + strlen(tmp) < n) {
    memcpy(dst + len, tmp, strlen(tmp) + 1);
  } else if (n > 4) {
    size_t at = len + 3 < n ? len : n - 4;
    memcpy(dst + at, "...", 4);
  }
}

// how the thread count was chosen (mbsp_affinitySetThreadChoice; threads 0: not chosen)
static mbspThreadChoice mbsp_aff_choice;

void mbsp_affinitySetThreadChoice(const mbspThreadChoice *c) {
  mbsp_aff_choice = *c;
}

// the thread-choice fields of a report
static void mbsp_affChoice(mbspAffinity *a) {
  const mbspThreadChoice *c = &mbsp_aff_choice;
  mbsp_affCopy(a->threads_source, sizeof a->threads_source,
               c->threads <= 0 ? "unset" : (c->from_env ? "OMP_NUM_THREADS" : "default"));
  a->ranks_sharing = c->threads > 0 ? c->ranks_sharing : 0;
}

static void mbsp_affHost(mbspAffinity *a) {
  if (gethostname(a->host, sizeof a->host) != 0) mbsp_affCopy(a->host, sizeof a->host, "unknown");
  a->host[sizeof a->host - 1] = '\0';
}

static int mbsp_affCheckMode(const char *mode, int local_rank, int nlocal, mbsErr *err) {
  if (!mode || (strcmp(mode, "core") && strcmp(mode, "numa") && strcmp(mode, "none"))) {
    *err = mbs_errSet(MBS_ERR_USAGE, "unknown binding '%s' (expected core, numa or none)",
                      mode ? mode : "(null)");
    return 0;
  }
  if (nlocal < 1 || local_rank < 0 || local_rank >= nlocal) {
    *err = mbs_errSet(MBS_ERR_USAGE, "binding: local rank %d of %d is out of range", local_rank,
                      nlocal);
    return 0;
  }
  *err = MBS_OK;
  return 1;
}

#ifdef MBS_HAVE_HWLOC

// ---- hwloc implementation

static mbsErr mbsp_affTopo(hwloc_topology_t *topo) {
  if (hwloc_topology_init(topo) != 0)
    return mbs_errSet(MBS_ERR_INTERNAL, "hwloc_topology_init failed: %s", strerror(errno));
  if (hwloc_topology_load(*topo) != 0) {
    hwloc_topology_destroy(*topo);
    return mbs_errSet(MBS_ERR_INTERNAL, "hwloc_topology_load failed: %s", strerror(errno));
  }
  return MBS_OK;
}

// list form of a bitmap into dst (size n), "..." when truncated
static void mbsp_affList(char *dst, size_t n, hwloc_const_bitmap_t set) {
  int len = hwloc_bitmap_list_snprintf(dst, n, set);
  if (len >= (int)n && n > 4) memcpy(dst + n - 4, "...", 4);
}

// the process's cpu set (union over its threads); the calling thread's if that fails
static int mbsp_affProcSet(hwloc_topology_t topo, hwloc_bitmap_t set) {
  if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0) return 0;
  return hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_THREAD);
}

// cores (PUs if the topology has no cores) with at least one cpu in set
static int mbsp_affCores(hwloc_topology_t topo, hwloc_const_bitmap_t set) {
  hwloc_obj_type_t type = HWLOC_OBJ_CORE;
  int n = hwloc_get_nbobjs_by_type(topo, type), cnt = 0;
  if (n <= 0) type = HWLOC_OBJ_PU, n = hwloc_get_nbobjs_by_type(topo, type);
  for (int k = 0; k < n; k++) {
    hwloc_obj_t o = hwloc_get_obj_by_type(topo, type, (unsigned)k);
    if (o && o->cpuset && hwloc_bitmap_intersects(o->cpuset, set)) cnt++;
  }
  return cnt;
}

mbsErr mbsp_affinityCpuMask(unsigned char *mask, int nbytes, int *ncores) {
  hwloc_topology_t topo;
  MBS_CALL(mbsp_affTopo(&topo));
  mbsErr err = MBS_OK;
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  memset(mask, 0, (size_t)nbytes);
  *ncores = 0;
  if (!set) {
    err = mbs_errSet(MBS_ERR_NOMEM, "out of memory in mbsp_affinityCpuMask");
  } else if (mbsp_affProcSet(topo, set) != 0) {
    err = mbs_errSet(MBS_ERR_UNSUPPORTED, "cannot read the cpu binding: %s", strerror(errno));
  } else {
    int c;
    hwloc_bitmap_foreach_begin(c, set) {
      if (c < 8 * nbytes) mask[c / 8] |= (unsigned char)(1u << (c % 8));
    }
    hwloc_bitmap_foreach_end();
    *ncores = mbsp_affCores(topo, set);
  }
  hwloc_bitmap_free(set);
  hwloc_topology_destroy(topo);
  return err;
}

static const char *mbsp_affState(hwloc_topology_t topo, hwloc_const_bitmap_t set,
                                 const char *list) {
  static char mode[32];
  if (mbsp_aff_boundmode[0] && strcmp(list, mbsp_aff_boundset) == 0) {
    snprintf(mode, sizeof mode, "mbspar:%s", mbsp_aff_boundmode);
    return mode;
  }
  hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(topo);
  if (hwloc_bitmap_isincluded(allowed, set)) return "none";
  return "launcher";
}

mbsErr mbsp_affinityQuery(mbspAffinity *a) {
  MBS_CHECK(a, MBS_ERR_INTERNAL, "mbsp_affinityQuery: NULL argument");
  memset(a, 0, sizeof *a);
  mbsp_affHost(a);
  hwloc_topology_t topo;
  MBS_CALL(mbsp_affTopo(&topo));
  mbsErr err = MBS_OK;
  int maxt = mbsp_affMaxThreads(), nt = 1;
  hwloc_bitmap_t set = hwloc_bitmap_alloc(), nodes = hwloc_bitmap_alloc();
  int *tcpu = calloc((size_t)maxt, sizeof *tcpu);
  hwloc_bitmap_t *tset = calloc((size_t)maxt, sizeof *tset);
  if (!set || !nodes || !tcpu || !tset) {
    err = mbs_errSet(MBS_ERR_NOMEM, "out of memory in mbsp_affinityQuery");
    goto done;
  }
  a->npus_machine = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  a->ncores_machine = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  if (a->ncores_machine <= 0) a->ncores_machine = a->npus_machine;

    // ask every OpenMP thread where it runs and how it is bound (first, so that the thread pool
    // exists, and an OpenMP runtime's own binding (OMP_PROC_BIND) is in place, when the process's
    // set is read below)
#pragma omp parallel
  {
    int t = 0;
#ifdef _OPENMP
    t = omp_get_thread_num();
#pragma omp single
    nt = omp_get_num_threads();
#endif
    if (t < maxt) {
      hwloc_bitmap_t s = hwloc_bitmap_alloc();
      tcpu[t] = -1;
      if (s && hwloc_get_last_cpu_location(topo, s, HWLOC_CPUBIND_THREAD) == 0)
        tcpu[t] = hwloc_bitmap_first(s);
      if (s && hwloc_get_cpubind(topo, s, HWLOC_CPUBIND_THREAD) == 0)
        tset[t] = s;
      else
        hwloc_bitmap_free(s);
    }
  }
  a->nthreads = nt;

  // the process's set: the union over all its threads (or over the team if that fails)
  if (mbsp_affProcSet(topo, set) != 0) {
    hwloc_bitmap_zero(set);
    for (int t = 0; t < nt && t < maxt; t++)
      if (tset[t]) hwloc_bitmap_or(set, set, tset[t]);
    if (hwloc_bitmap_iszero(set)) {
      err = mbs_errSet(MBS_ERR_UNSUPPORTED, "cannot read the cpu binding: %s", strerror(errno));
      goto done;
    }
  }
  mbsp_affList(a->cpuset, sizeof a->cpuset, set);
  a->cores = mbsp_affCores(topo, set);
  mbsp_affChoice(a);
  hwloc_cpuset_to_nodeset(topo, set, nodes);
  a->numa_node = hwloc_bitmap_weight(nodes) == 1 ? hwloc_bitmap_first(nodes) : -1;
  mbsp_affCopy(a->binding, sizeof a->binding, mbsp_affState(topo, set, a->cpuset));
  for (int t = 0; t < nt && t < maxt; t++) {
    char item[64], list[40];
    if (tset[t] && !hwloc_bitmap_isequal(tset[t], set)) {
      mbsp_affList(list, sizeof list, tset[t]);
      snprintf(item, sizeof item, "%d(%s)", tcpu[t], list);
    } else {
      snprintf(item, sizeof item, "%d", tcpu[t]);
    }
    mbsp_affAppend(a->thread_cpus, sizeof a->thread_cpus, item);
  }

done:
  if (tset)
    for (int t = 0; t < maxt; t++) hwloc_bitmap_free(tset[t]);
  free(tcpu);
  free(tset);
  hwloc_bitmap_free(set);
  hwloc_bitmap_free(nodes);
  hwloc_topology_destroy(topo);
  return err;
}

mbsErr mbsp_affinityBind(const char *mode, int local_rank, int nlocal) {
  mbsErr err;
  if (!mbsp_affCheckMode(mode, local_rank, nlocal, &err)) return err;
  if (strcmp(mode, "none") == 0) return MBS_OK;
  hwloc_topology_t topo;
  MBS_CALL(mbsp_affTopo(&topo));
  hwloc_bitmap_t cur = hwloc_bitmap_alloc(), target = hwloc_bitmap_alloc();
  if (!cur || !target) {
    err = mbs_errSet(MBS_ERR_NOMEM, "out of memory in mbsp_affinityBind");
    goto done;
  }
  if (mbsp_affProcSet(topo, cur) != 0) {
    err = mbs_errSet(MBS_ERR_UNSUPPORTED, "cannot read the cpu binding: %s", strerror(errno));
    goto done;
  }
  char curlist[128];
  mbsp_affList(curlist, sizeof curlist, cur);
  if (strcmp(mbsp_affState(topo, cur, curlist), "launcher") == 0) goto done; // launcher bound

  if (strcmp(mode, "core") == 0) {
    hwloc_obj_type_t type = HWLOC_OBJ_CORE;
    int n = hwloc_get_nbobjs_by_type(topo, type);
    if (n <= 0) type = HWLOC_OBJ_PU, n = hwloc_get_nbobjs_by_type(topo, type);
    int nt = mbsp_affMaxThreads();
    if (nt > n) nt = n;
    int first = (int)(((long)local_rank * nt) % n);
    for (int k = 0; k < nt; k++) {
      hwloc_obj_t o = hwloc_get_obj_by_type(topo, type, (unsigned)((first + k) % n));
      if (o && o->cpuset) hwloc_bitmap_or(target, target, o->cpuset);
    }
  } else {
    int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    hwloc_obj_t o =
        n > 0 ? hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)(local_rank % n)) : NULL;
    if (o && o->cpuset) hwloc_bitmap_copy(target, o->cpuset);
  }
  hwloc_bitmap_and(target, target, hwloc_topology_get_allowed_cpuset(topo));
  if (hwloc_bitmap_iszero(target)) {
    err = mbs_errSet(MBS_ERR_UNSUPPORTED, "binding '%s': no allowed cpu found for local rank %d",
                     mode, local_rank);
    goto done;
  }
  if (hwloc_set_cpubind(topo, target, HWLOC_CPUBIND_PROCESS) != 0) {
    err = mbs_errSet(MBS_ERR_UNSUPPORTED, "binding '%s' failed: %s", mode, strerror(errno));
    goto done;
  }
  mbsp_affList(mbsp_aff_boundset, sizeof mbsp_aff_boundset, target);
  mbsp_affCopy(mbsp_aff_boundmode, sizeof mbsp_aff_boundmode, mode);

done:
  hwloc_bitmap_free(cur);
  hwloc_bitmap_free(target);
  hwloc_topology_destroy(topo);
  return err;
}

#else

// ---- fallback without hwloc: Linux scheduler affinity of the calling thread(s)

// "0-3,6" list of the cpus in set
static void mbsp_affList(char *dst, size_t n, const cpu_set_t *set) {
  dst[0] = '\0';
  for (int c = 0; c < CPU_SETSIZE; c++) {
    if (!CPU_ISSET(c, set)) continue;
    int e = c;
    while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set)) e++;
    char item[32];
    if (e > c)
      snprintf(item, sizeof item, "%d-%d", c, e);
    else
      snprintf(item, sizeof item, "%d", c);
    mbsp_affAppend(dst, n, item);
    c = e;
  }
}

static int mbsp_affOnline(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

mbsErr mbsp_affinityCpuMask(unsigned char *mask, int nbytes, int *ncores) {
  cpu_set_t set;
  CPU_ZERO(&set);
  memset(mask, 0, (size_t)nbytes);
  *ncores = 0;
  if (sched_getaffinity(0, sizeof set, &set) != 0)
    return mbs_errSet(MBS_ERR_UNSUPPORTED, "sched_getaffinity failed: %s", strerror(errno));
  for (int c = 0; c < CPU_SETSIZE && c < 8 * nbytes; c++)
    if (CPU_ISSET(c, &set)) mask[c / 8] |= (unsigned char)(1u << (c % 8));
  *ncores = CPU_COUNT(&set);
  return MBS_OK;
}

// the cpu set the process had before any binding made here
static cpu_set_t mbsp_aff_initial;
static int mbsp_aff_haveinitial = 0;

mbsErr mbsp_affinityQuery(mbspAffinity *a) {
  MBS_CHECK(a, MBS_ERR_INTERNAL, "mbsp_affinityQuery: NULL argument");
  memset(a, 0, sizeof *a);
  mbsp_affHost(a);
  a->npus_machine = a->ncores_machine = mbsp_affOnline();
  a->numa_node = -1; // unknown without hwloc

  // each OpenMP thread's cpu and binding; the process's set is their union
  int maxt = mbsp_affMaxThreads(), nt = 1, fail = 0;
  int *tcpu = calloc((size_t)maxt, sizeof *tcpu);
  cpu_set_t *tset = calloc((size_t)maxt, sizeof *tset);
  if (!tcpu || !tset) {
    free(tcpu);
    free(tset);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory in mbsp_affinityQuery");
  }
#pragma omp parallel reduction(+ : fail)
  {
    int t = 0;
#ifdef _OPENMP
    t = omp_get_thread_num();
#pragma omp single
    nt = omp_get_num_threads();
#endif
    if (t < maxt) {
      tcpu[t] = sched_getcpu();
      CPU_ZERO(&tset[t]);
      if (sched_getaffinity(0, sizeof tset[t], &tset[t]) != 0) fail++;
    }
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int t = 0; t < nt && t < maxt; t++) CPU_OR(&set, &set, &tset[t]);
  if (fail || CPU_COUNT(&set) == 0) {
    free(tcpu);
    free(tset);
    return mbs_errSet(MBS_ERR_UNSUPPORTED, "sched_getaffinity failed in %d thread(s)", fail);
  }
  a->nthreads = nt;
  mbsp_affList(a->cpuset, sizeof a->cpuset, &set);
  a->cores = CPU_COUNT(&set);
  mbsp_affChoice(a);
  if (mbsp_aff_boundmode[0] && strcmp(a->cpuset, mbsp_aff_boundset) == 0)
    snprintf(a->binding, sizeof a->binding, "mbspar:%s", mbsp_aff_boundmode);
  else if (CPU_COUNT(&set) < a->npus_machine)
    mbsp_affCopy(a->binding, sizeof a->binding, "launcher");
  else
    mbsp_affCopy(a->binding, sizeof a->binding, "none");
  for (int t = 0; t < nt && t < maxt; t++) {
    char item[64], list[40];
    if (!CPU_EQUAL(&tset[t], &set)) {
      mbsp_affList(list, sizeof list, &tset[t]);
      snprintf(item, sizeof item, "%d(%s)", tcpu[t], list);
    } else {
      snprintf(item, sizeof item, "%d", tcpu[t]);
    }
    mbsp_affAppend(a->thread_cpus, sizeof a->thread_cpus, item);
  }
  free(tcpu);
  free(tset);
  return MBS_OK;
}

mbsErr mbsp_affinityBind(const char *mode, int local_rank, int nlocal) {
  mbsErr err;
  if (!mbsp_affCheckMode(mode, local_rank, nlocal, &err)) return err;
  if (strcmp(mode, "none") == 0) return MBS_OK;
  MBS_CHECK(strcmp(mode, "numa") != 0, MBS_ERR_UNSUPPORTED,
            "binding 'numa' needs hwloc (configure with -DMBS_ENABLE_HWLOC=ON)");
  cpu_set_t cur;
  CPU_ZERO(&cur);
  if (sched_getaffinity(0, sizeof cur, &cur) != 0)
    return mbs_errSet(MBS_ERR_UNSUPPORTED, "sched_getaffinity failed: %s", strerror(errno));
  char curlist[128];
  mbsp_affList(curlist, sizeof curlist, &cur);
  int ours = mbsp_aff_boundmode[0] && strcmp(curlist, mbsp_aff_boundset) == 0;
  if (!ours && CPU_COUNT(&cur) < mbsp_affOnline()) return MBS_OK; // launcher bound
  if (!mbsp_aff_haveinitial) mbsp_aff_initial = cur, mbsp_aff_haveinitial = 1;

  // the allowed cpus in order; T consecutive ones starting at local_rank * T
  int cpus[CPU_SETSIZE], n = 0;
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &mbsp_aff_initial)) cpus[n++] = c;
  MBS_CHECK(n > 0, MBS_ERR_UNSUPPORTED, "binding 'core': no allowed cpu");
  int nt = mbsp_affMaxThreads();
  if (nt > n) nt = n;
  int first = (int)(((long)local_rank * nt) % n);
  cpu_set_t target;
  CPU_ZERO(&target);
  for (int k = 0; k < nt; k++) CPU_SET(cpus[(first + k) % n], &target);

  // sched_setaffinity binds one thread: bind every thread of the OpenMP pool
  int fail = 0;
#pragma omp parallel reduction(+ : fail)
  {
    if (sched_setaffinity(0, sizeof target, &target) != 0) fail++;
  }
  if (sched_setaffinity(0, sizeof target, &target) != 0) fail++;
  MBS_CHECK(!fail, MBS_ERR_UNSUPPORTED, "binding 'core' failed in %d thread(s)", fail);
  mbsp_affList(mbsp_aff_boundset, sizeof mbsp_aff_boundset, &target);
  mbsp_affCopy(mbsp_aff_boundmode, sizeof mbsp_aff_boundmode, mode);
  return MBS_OK;
}

#endif
