/// \file test_affinity.c
/// parallel/affinity.c: the placement report is sane (host, cpu set inside the machine, thread
/// cpus inside the cpu set), "none" and unknown modes change nothing, "core" binds to the first
/// core(s) for local rank 0 and the next one(s) for local rank 1, "numa" binds to a NUMA node
/// (hwloc builds) or is refused (fallback). A process that its launcher already bound must be
/// left alone; that branch is checked instead when the test itself runs bound.
#include <omp.h>
#include "mbs_test.h"
#include "affinity.h"

// parse a cpu list "0-2,5" into in[] (flags, size n); returns the number of cpus or -1 if bad
static int parseList(const char *s, int *in, int n) {
  int count = 0;
  memset(in, 0, sizeof(int) * (size_t)n);
  if (!*s) return -1;
  while (*s) {
    char *end;
    long a = strtol(s, &end, 10), b = a;
    if (end == s) return -1;
    s = end;
    if (*s == '-') {
      b = strtol(s + 1, &end, 10);
      if (end == s + 1) return -1;
      s = end;
    }
    if (a < 0 || b < a || b >= n) return -1;
    for (long c = a; c <= b; c++) in[c] = 1, count++;
    if (*s == ',')
      s++;
    else if (*s)
      return -1;
  }
  return count;
}

static int firstOf(const int *in, int n) {
  for (int c = 0; c < n; c++)
    if (in[c]) return c;
  return -1;
}

// every "cpu" or "cpu(set)" entry of thread_cpus names a cpu of the set; returns the entry count
static int checkThreads(const mbspAffinity *a, const int *in) {
  int count = 0;
  const char *s = a->thread_cpus;
  while (*s) {
    char *end;
    long c = strtol(s, &end, 10);
    MBS_EXPECT(end != s, "bad thread_cpus '%s'", a->thread_cpus);
    if (end == s) break;
    MBS_EXPECT(c >= 0 && c < a->npus_machine && in[c], "thread cpu %ld outside cpuset %s", c,
               a->cpuset);
    count++;
    s = end;
    if (*s == '(') s = strchr(s, ')') ? strchr(s, ')') + 1 : s + strlen(s);
    if (*s == ',') s++;
  }
  return count;
}

static void query(mbspAffinity *a, int *in, int n) {
  MBS_EXPECT_OK(mbsp_affinityQuery(a));
  MBS_EXPECT(a->host[0] != '\0', "empty host");
  MBS_EXPECT(a->ncores_machine >= 1 && a->npus_machine >= a->ncores_machine, "ncores %d npus %d",
             a->ncores_machine, a->npus_machine);
  MBS_EXPECT(a->npus_machine <= n, "npus %d beyond the test's table", a->npus_machine);
  MBS_EXPECT(parseList(a->cpuset, in, a->npus_machine) > 0, "cpuset '%s' is empty or outside 0..%d",
             a->cpuset, a->npus_machine - 1);
  MBS_EXPECT(a->numa_node >= -1, "numa node %d", a->numa_node);
  MBS_EXPECT(a->nthreads >= 1, "nthreads %d", a->nthreads);
  MBS_EXPECT(checkThreads(a, in) == a->nthreads, "thread_cpus '%s' for %d threads", a->thread_cpus,
             a->nthreads);
}

#define NMAX 4096

int main(void) {
  static int in0[NMAX], in[NMAX];
  mbspAffinity a0, a;
  omp_set_num_threads(1);
  query(&a0, in0, NMAX);
  printf("start: host %s cpuset %s numa %d cores %d pus %d threads %d (%s) binding %s\n", a0.host,
         a0.cpuset, a0.numa_node, a0.ncores_machine, a0.npus_machine, a0.nthreads, a0.thread_cpus,
         a0.binding);
  // the cpu mask and core count the thread default uses (threads.c) match the report; no thread
  // choice was made in this process
  {
    static unsigned char mask[NMAX / 8];
    int nc = -1, ncpu = parseList(a0.cpuset, in0, NMAX), same = 1;
    MBS_EXPECT_OK(mbsp_affinityCpuMask(mask, (int)sizeof mask, &nc));
    for (int c = 0; c < NMAX; c++) same = same && (((mask[c / 8] >> (c % 8)) & 1) == in0[c]);
    MBS_EXPECT(same, "cpu mask differs from cpuset %s", a0.cpuset);
    MBS_EXPECT(nc == a0.cores && nc >= 1 && nc <= ncpu &&
                   nc >= ncpu / (a0.npus_machine / a0.ncores_machine),
               "cores %d (mask) / %d (report) for %d cpus", nc, a0.cores, ncpu);
    MBS_EXPECT(strcmp(a0.threads_source, "unset") == 0 && a0.ranks_sharing == 0,
               "thread choice '%s' / %d before any was made", a0.threads_source, a0.ranks_sharing);
  }
  int launcher = strcmp(a0.binding, "launcher") == 0;
  MBS_EXPECT(launcher || strcmp(a0.binding, "none") == 0, "binding '%s'", a0.binding);
#ifdef MBS_HAVE_HWLOC
  MBS_EXPECT(a0.numa_node >= 0, "hwloc knows the NUMA node (got %d)", a0.numa_node);
#endif

  // "none" and bad arguments change nothing
  MBS_EXPECT_OK(mbsp_affinityBind("none", 0, 1));
  query(&a, in, NMAX);
  MBS_EXPECT(strcmp(a.cpuset, a0.cpuset) == 0 && strcmp(a.binding, a0.binding) == 0,
             "'none' changed %s/%s to %s/%s", a0.cpuset, a0.binding, a.cpuset, a.binding);
  MBS_EXPECT(mbsp_affinityBind("socket", 0, 1) == MBS_ERR_USAGE, "unknown mode accepted");
  MBS_EXPECT(mbsp_affinityBind(NULL, 0, 1) == MBS_ERR_USAGE, "NULL mode accepted");
  MBS_EXPECT(mbsp_affinityBind("core", 2, 2) == MBS_ERR_USAGE, "local rank 2 of 2 accepted");
  query(&a, in, NMAX);
  MBS_EXPECT(strcmp(a.cpuset, a0.cpuset) == 0, "bad calls changed the cpuset to %s", a.cpuset);

  // "core", one thread, local rank 0: the first core of the allowed cpus
  int pus_per_core = a0.npus_machine / a0.ncores_machine;
  MBS_EXPECT_OK(mbsp_affinityBind("core", 0, 1));
  query(&a, in, NMAX);
  if (launcher) {
    MBS_EXPECT(strcmp(a.cpuset, a0.cpuset) == 0, "rebound a launcher-bound process: %s -> %s",
               a0.cpuset, a.cpuset);
  } else {
    int cnt = parseList(a.cpuset, in, NMAX);
    MBS_EXPECT(cnt >= 1 && cnt <= pus_per_core, "core 0 has %d cpus (%s)", cnt, a.cpuset);
    MBS_EXPECT(firstOf(in, NMAX) == firstOf(in0, NMAX), "core 0 is %s, allowed cpus %s", a.cpuset,
               a0.cpuset);
    if (pus_per_core == 1 && firstOf(in0, NMAX) == 0)
      MBS_EXPECT(strcmp(a.cpuset, "0") == 0, "bound to core 0: cpuset '%s'", a.cpuset);
    MBS_EXPECT(strcmp(a.binding, "mbspar:core") == 0, "binding '%s'", a.binding);
    for (int c = 0; c < NMAX; c++) MBS_EXPECT(!in[c] || in0[c], "cpu %d was not allowed", c);
    printf("core, local rank 0: cpuset %s threads %s binding %s\n", a.cpuset, a.thread_cpus,
           a.binding);

    // "none" after a binding leaves it
    MBS_EXPECT_OK(mbsp_affinityBind("none", 0, 1));
    mbspAffinity b;
    query(&b, in, NMAX);
    MBS_EXPECT(strcmp(b.cpuset, a.cpuset) == 0, "'none' undid the binding: %s", b.cpuset);

    // local rank 1 of 2 gets another core when there are two
    if (a0.ncores_machine >= 2 && parseList(a0.cpuset, in0, NMAX) >= 2 * pus_per_core) {
      MBS_EXPECT_OK(mbsp_affinityBind("core", 1, 2));
      query(&b, in, NMAX);
      MBS_EXPECT(strcmp(b.cpuset, a.cpuset) != 0, "ranks 0 and 1 share %s", b.cpuset);
      printf("core, local rank 1: cpuset %s\n", b.cpuset);

      // two threads: one rank gets two cores, each thread runs inside them
      omp_set_num_threads(2);
      MBS_EXPECT_OK(mbsp_affinityBind("core", 0, 1));
      query(&b, in, NMAX);
      MBS_EXPECT(b.nthreads == 2, "nthreads %d", b.nthreads);
      MBS_EXPECT(parseList(b.cpuset, in, NMAX) >= 2, "2 threads bound to '%s'", b.cpuset);
      printf("core, 2 threads: cpuset %s threads %s\n", b.cpuset, b.thread_cpus);
      omp_set_num_threads(1);
    }

    // "numa": a whole NUMA node with hwloc, refused without
#ifdef MBS_HAVE_HWLOC
    MBS_EXPECT_OK(mbsp_affinityBind("numa", 0, 1));
    query(&b, in, NMAX);
    MBS_EXPECT(strcmp(b.binding, "mbspar:numa") == 0 || strcmp(b.binding, "none") == 0,
               "binding '%s'", b.binding);
    MBS_EXPECT(b.numa_node >= 0, "numa node %d", b.numa_node);
    printf("numa, local rank 0: cpuset %s numa %d binding %s\n", b.cpuset, b.numa_node, b.binding);
#else
    MBS_EXPECT(mbsp_affinityBind("numa", 0, 1) == MBS_ERR_UNSUPPORTED, "numa without hwloc");
#endif
  }
  return mbs_test_finish("test_affinity");
}
