/// \file warmwrap.c
/// The warm-cache timed SMPI build (bench/smpi/build.sh: build-smpi/mbspar_smpi_warm, compiled
/// with -DMBS_SMPI_WARM and linked with -Wl,--wrap= of SimGrid's four allocation entry points:
/// smpicc's smpi_helpers.h turns malloc, calloc, realloc and free of the program's code into
/// smpi_shared_malloc_intercept, smpi_shared_calloc_intercept, smpi_shared_realloc_intercept and
/// smpi_shared_free, and the wrappers below sit in front of those).
///
/// SMPI runs every simulated rank in one process, one after the other, and times each compute
/// block with the real clock: a rank's block starts after the other ranks' blocks have evicted
/// its data from this core's caches, where a real node's cache holds only its own rank's data.
/// This file keeps the live heap blocks each rank allocated (its model, work arrays and message
/// buffers: every allocation of mbspar's own code passes through the wrappers; SMPI loads one
/// copy of the program per rank, so the table below is per rank) and mbsp_smpiWarmTouch re-reads
/// them, one load per cache line. parallel/comm.c runs this binary's own block timer (SMPI's is
/// off: smpi/simulate-computation:no): after every MPI call returns it calls the re-read, then
/// starts the thread's CPU clock (mbsp_smpiCpuNow), and before the next MPI call it charges the
/// elapsed CPU time with smpi_execute, so the re-read is not charged and the block is timed with
/// the rank's own data as warm as this core's caches can hold it. What it cannot warm: the code
/// (SMPI loads one copy of the program per rank, so instruction caches stay cold) and the stack.
///
/// The re-read is skipped when no other rank ran since this rank's last one (a process-wide
/// counter; the program's globals are per rank, the environment is shared, so its address is
/// passed through the environment variable MBS_SMPI_WARM_SHARED). MBS_SMPI_WARM=0 turns the
/// re-read off: the binary then times blocks with the same own timer and no re-read (the
/// control). MBS_SMPI_WARM_VERBOSE=1 prints, per rank, the re-reads so far and the live blocks
/// and bytes after its 50th and 300th MPI call.
/// Not part of the CMake build; no MPI call.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
// this file's own table uses the C library's calloc and free (smpicc includes smpi_helpers.h
// first, whose macros would send them through the wrappers below)
#undef malloc
#undef calloc
#undef realloc
#undef free
#undef clock_gettime // the real clock, not SMPI's simulated one
#include <time.h>

void *__real_smpi_shared_malloc_intercept(size_t n, const char *file, int line);
void *__real_smpi_shared_calloc_intercept(size_t n, size_t size, const char *file, int line);
void *__real_smpi_shared_realloc_intercept(void *p, size_t n, const char *file, int line);
void __real_smpi_shared_free(void *p);
void *__wrap_smpi_shared_malloc_intercept(size_t n, const char *file, int line);
void *__wrap_smpi_shared_calloc_intercept(size_t n, size_t size, const char *file, int line);
void *__wrap_smpi_shared_realloc_intercept(void *p, size_t n, const char *file, int line);
void __wrap_smpi_shared_free(void *p);
size_t mbsp_smpiWarmTouch(void);
double mbsp_smpiCpuNow(void);

typedef struct {
  uintptr_t p; // 0: empty slot
  size_t n;
} warmBlock;

static warmBlock *tab = NULL; // open addressing, linear probing, capacity a power of 2
static size_t cap = 0, used = 0, live_bytes = 0;
static int broken = 0; // the table could not grow: touch nothing rather than a part

static size_t slotOf(uintptr_t p) {
  uint64_t h = (uint64_t)p * 0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 20) & (cap - 1);
}

static void put(uintptr_t p, size_t n);

static int grow(void) {
  size_t oc = cap;
  warmBlock *ot = tab;
  size_t nc = cap ? 2 * cap : 4096;
  warmBlock *nt = calloc(nc, sizeof *nt);
  if (!nt) return broken = 1, 0;
  tab = nt, cap = nc, used = 0, live_bytes = 0;
  for (size_t i = 0; i < oc; i++)
    if (ot[i].p) put(ot[i].p, ot[i].n);
  free(ot);
  return 1;
}

static void put(uintptr_t p, size_t n) {
  if (!p || broken) return;
  if (4 * (used + 1) > 3 * cap && !grow()) return;
  size_t i = slotOf(p);
  while (tab[i].p && tab[i].p != p) i = (i + 1) & (cap - 1);
  if (!tab[i].p)
    used++;
  else
    live_bytes -= tab[i].n;
  tab[i].p = p, tab[i].n = n;
  live_bytes += n;
}

// remove p (backward-shift deletion keeps the probe chains intact)
static void drop(uintptr_t p) {
  if (!p || !cap) return;
  size_t i = slotOf(p);
  while (tab[i].p && tab[i].p != p) i = (i + 1) & (cap - 1);
  if (!tab[i].p) return; // not ours (allocated by a library)
  live_bytes -= tab[i].n;
  used--;
  tab[i].p = 0;
  for (size_t j = (i + 1) & (cap - 1); tab[j].p; j = (j + 1) & (cap - 1)) {
    size_t h = slotOf(tab[j].p);
    // move j into the hole i when its home h is not in (i, j] (cyclically)
    if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
      tab[i] = tab[j];
      tab[j].p = 0;
      i = j;
    }
  }
}

void *__wrap_smpi_shared_malloc_intercept(size_t n, const char *file, int line) {
  void *p = __real_smpi_shared_malloc_intercept(n, file, line);
  put((uintptr_t)p, n);
  return p;
}

void *__wrap_smpi_shared_calloc_intercept(size_t n, size_t size, const char *file, int line) {
  void *p = __real_smpi_shared_calloc_intercept(n, size, file, line);
  put((uintptr_t)p, n * size);
  return p;
}

void *__wrap_smpi_shared_realloc_intercept(void *p, size_t n, const char *file, int line) {
  void *q = __real_smpi_shared_realloc_intercept(p, n, file, line);
  if (q || !n) drop((uintptr_t)p);
  put((uintptr_t)q, n);
  return q;
}

void __wrap_smpi_shared_free(void *p) {
  drop((uintptr_t)p);
  __real_smpi_shared_free(p);
}

// the process-wide counter of re-reads (shared by all simulated ranks; SMPI runs one at a time)
static unsigned long *sharedTicks(void) {
  static unsigned long *t = NULL;
  if (t) return t;
  const char *s = getenv("MBS_SMPI_WARM_SHARED");
  if (s) {
    t = (unsigned long *)(uintptr_t)strtoull(s, NULL, 16);
  } else {
    t = calloc(1, sizeof *t); // lives as long as the process
    char buf[32];
    snprintf(buf, sizeof buf, "%llx", (unsigned long long)(uintptr_t)t);
    if (!t || setenv("MBS_SMPI_WARM_SHARED", buf, 1) != 0) t = NULL;
  }
  return t;
}

size_t mbsp_smpiWarmTouch(void) {
  static int on = -1;
  static unsigned long mine = 0; // the shared counter after this rank's last re-read
  if (on < 0) {
    const char *e = getenv("MBS_SMPI_WARM");
    on = !(e && strcmp(e, "0") == 0);
  }
  if (!on || broken) return 0;
  unsigned long *ticks = sharedTicks();
  int others = !ticks || !mine || *ticks != mine; // another rank resumed since this one did
  if (ticks) mine = ++*ticks;
  static unsigned long touches = 0, skips = 0;
  static int verbose = -1;
  if (verbose < 0) verbose = getenv("MBS_SMPI_WARM_VERBOSE") != NULL;
  if (verbose && (touches + skips == 50 || touches + skips == 300))
    fprintf(stderr, "warmwrap: %lu re-reads, %lu skipped, %zu live blocks, %zu bytes\n", touches,
            skips, used, live_bytes);
  if (!others) return skips++, (size_t)0;
  touches++;
  for (size_t i = 0; i < cap; i++) {
    if (!tab[i].p) continue;
    const volatile unsigned char *b = (const volatile unsigned char *)tab[i].p;
    for (size_t k = 0; k < tab[i].n; k += 64) (void)b[k];
  }
  return live_bytes;
}

double mbsp_smpiCpuNow(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
