/// \file test_threads.c
/// parallel/threads.c: the OpenMP thread count of a rank. Without OMP_NUM_THREADS it is
/// max(1, cores of the rank's cpu set / ranks on the node whose cpu sets overlap it); the number
/// of sharing ranks is checked against the cpu sets and hosts every rank reports (mbspAffinity);
/// OpenMP then runs that many threads. With OMP_NUM_THREADS the value is kept; rank 0 prints
/// exactly one warning line when it oversubscribes the cores, none when it does not. The reports
/// record the choice (threads_source, cores, ranks_sharing). Run at 1 and 2 ranks.
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <unistd.h>
#include "mbs_test.h"
#include "threads.h"

static mbspComm *comm;

// cpu list "0-2,5" -> flags in[0..n-1]; number of cpus, or -1 if malformed
static int parseList(const char *s, int *in, int n) {
  int count = 0;
  memset(in, 0, sizeof(int) * (size_t)n);
  while (*s) {
    char *end;
    long a = strtol(s, &end, 10), b = a;
    if (end == s) return -1;
    s = end;
    if (*s == '-') b = strtol(s + 1, &end, 10), s = end;
    if (a < 0 || b < a || b >= n) return -1;
    for (long c = a; c <= b; c++) in[c] = 1, count++;
    if (*s == ',') s++;
  }
  return count;
}

#define NCPU 4096

// run mbsp_threadsInit with stderr redirected; returns the lines rank 0 wrote there (copied into
// msg, up to n bytes)
static int initCaptured(mbspThreadChoice *c, char *msg, size_t n) {
  char path[] = "/tmp/test_threads.XXXXXX";
  int rank = mbsp_rank(comm), fd = -1, saved = -1;
  msg[0] = '\0';
  if (rank == 0) {
    fflush(stderr);
    fd = mkstemp(path);
    saved = dup(2);
    if (fd >= 0 && saved >= 0) dup2(fd, 2);
  }
  MBS_EXPECT_OK(mbsp_threadsInit(comm, c));
  int lines = 0;
  if (rank == 0) {
    fflush(stderr);
    if (saved >= 0) dup2(saved, 2), close(saved);
    if (fd >= 0) {
      FILE *f = fdopen(fd, "r");
      if (f) {
        rewind(f);
        size_t len = fread(msg, 1, n - 1, f);
        msg[len] = '\0';
        for (size_t k = 0; k < len; k++) lines += msg[k] == '\n';
        fclose(f);
      }
      unlink(path);
    }
  }
  return lines;
}

int main(int argc, char **argv) {
  if (mbsp_init(&argc, &argv, &comm)) {
    fprintf(stderr, "MPI init failed: %s\n", mbs_errMsg());
    return 1;
  }
  int rank = mbsp_rank(comm), size = mbsp_size(comm);

  // the pure parts
  MBS_EXPECT(mbsp_threadsParseEnv("4") == 4 && mbsp_threadsParseEnv(" 3 ") == 3, "plain values");
  MBS_EXPECT(mbsp_threadsParseEnv("4,2") == 4, "nested list: first level");
  MBS_EXPECT(mbsp_threadsParseEnv(NULL) == 0 && mbsp_threadsParseEnv("") == 0 &&
                 mbsp_threadsParseEnv("0") == 0 && mbsp_threadsParseEnv("-2") == 0 &&
                 mbsp_threadsParseEnv("two") == 0 && mbsp_threadsParseEnv("2x") == 0,
             "unusable values must give 0 (the default applies)");
  MBS_EXPECT(mbsp_threadsDefault(2, 2) == 1 && mbsp_threadsDefault(2, 1) == 2 &&
                 mbsp_threadsDefault(8, 3) == 2 && mbsp_threadsDefault(1, 4) == 1 &&
                 mbsp_threadsDefault(0, 0) == 1 && mbsp_threadsDefault(16, 0) == 16,
             "default = max(1, cores / ranks sharing)");

  // no OMP_NUM_THREADS: the default, and OpenMP uses it
  char msg[1024];
  mbspThreadChoice c;
  unsetenv("OMP_NUM_THREADS");
  int lines = initCaptured(&c, msg, sizeof msg);
  MBS_EXPECT(!c.from_env, "source without OMP_NUM_THREADS");
  MBS_EXPECT(c.threads == mbsp_threadsDefault(c.cores, c.ranks_sharing),
             "threads %d, cores %d, ranks sharing %d", c.threads, c.cores, c.ranks_sharing);
  MBS_EXPECT(omp_get_max_threads() == c.threads, "OpenMP runs %d threads, chosen %d",
             omp_get_max_threads(), c.threads);
  MBS_EXPECT(lines == 0, "warning without OMP_NUM_THREADS: %s", msg);

  // the report, and the sharing count against every rank's cpu set and host
  mbspAffinity me, *all = rank == 0 ? calloc((size_t)size, sizeof *all) : NULL;
  MBS_EXPECT_OK(mbsp_affinityQuery(&me));
  MBS_EXPECT(strcmp(me.threads_source, "default") == 0 && me.nthreads == c.threads &&
                 me.cores == c.cores && me.ranks_sharing == c.ranks_sharing,
             "report: source %s threads %d cores %d sharing %d", me.threads_source, me.nthreads,
             me.cores, me.ranks_sharing);
  static int in[NCPU], other[NCPU];
  int ncpu = parseList(me.cpuset, in, NCPU);
  MBS_EXPECT(c.cores >= 1 && c.cores <= ncpu, "cores %d for cpu set %s", c.cores, me.cpuset);
  MBS_EXPECT_OK(mbsp_gatherBytes(comm, &me, (int)sizeof me, rank == 0 ? (void *)all : &me));
  for (int r = 0; rank == 0 && all && r < size; r++) {
    int expect = 0;
    parseList(all[r].cpuset, in, NCPU);
    for (int q = 0; q < size; q++) {
      if (strcmp(all[q].host, all[r].host) != 0) continue;
      parseList(all[q].cpuset, other, NCPU);
      int common = 0;
      for (int k = 0; k < NCPU && !common; k++) common = in[k] && other[k];
      expect += common;
    }
    MBS_EXPECT(all[r].ranks_sharing == expect,
               "rank %d (cpu set %s): %d ranks sharing, expected %d", r, all[r].cpuset,
               all[r].ranks_sharing, expect);
    printf("rank %d: cpu set %s, %d core(s), %d rank(s) sharing -> %d thread(s) (%s)\n", r,
           all[r].cpuset, all[r].cores, all[r].ranks_sharing, all[r].nthreads,
           all[r].threads_source);
  }
  free(all);

  // OMP_NUM_THREADS within the cores: kept, no warning
  setenv("OMP_NUM_THREADS", "1", 1);
  lines = initCaptured(&c, msg, sizeof msg);
  MBS_EXPECT(c.from_env && c.threads == 1 && omp_get_max_threads() == 1, "OMP_NUM_THREADS=1: %d",
             c.threads);
  MBS_EXPECT(lines == 0, "warning for OMP_NUM_THREADS=1: %s", msg);
  MBS_EXPECT_OK(mbsp_affinityQuery(&me));
  MBS_EXPECT(strcmp(me.threads_source, "OMP_NUM_THREADS") == 0, "source %s", me.threads_source);

  // OMP_NUM_THREADS beyond the cores: kept (the run goes on), one warning line naming it
  char val[32];
  int over = c.cores + 1;
  snprintf(val, sizeof val, "%d", over);
  setenv("OMP_NUM_THREADS", val, 1);
  lines = initCaptured(&c, msg, sizeof msg);
  MBS_EXPECT(c.from_env && c.threads == over && omp_get_max_threads() == over,
             "OMP_NUM_THREADS=%d: %d threads", over, c.threads);
  if (rank == 0) {
    char want[64];
    snprintf(want, sizeof want, "warning: OMP_NUM_THREADS=%d ", over);
    MBS_EXPECT(lines == 1 && strstr(msg, want) && strstr(msg, "oversubscribe"),
               "%d warning line(s) for OMP_NUM_THREADS=%d: '%s'", lines, over, msg);
    printf("warning: %s", msg);
  }
  setenv("OMP_NUM_THREADS", "1", 1);
  omp_set_num_threads(1);

  long fails = mbs_test_fail;
  mbsp_allreduceSumLong(comm, &fails, 1);
  mbsp_finalize(&comm);
  if (rank == 0)
    printf("test_threads np=%d: %s (%ld failure(s) over all ranks)\n", size,
           fails ? "FAILED" : "all checks passed", fails);
  return fails ? 1 : 0;
}
