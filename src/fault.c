/// \file fault.c
/// Fault injection (mbs_fault.h): counters per kind, the distinct points in the order first
/// reached, and the log written at exit. Nothing here allocates (the allocation wrappers of the
/// mbspar binary call mbs_faultHit from inside malloc).
#define _GNU_SOURCE // dladdr (the log names allocation callers relative to the binary)
#include "mbspar/mbs_fault.h"
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <dlfcn.h>
#endif

#define MBS_FAULT_MAXRULE 8
#define MBS_FAULT_MAXSITE 4096

typedef struct {
  int kind;
  long n;     // the n-th point fails
  int sticky; // "N+": and every later one
  int rank;   // -1: every rank
} mbsFaultRule;

typedef struct {
  const void *key;
  const char *label;
  int kind;
  long index;
  long phase; // agreements passed before the point was first reached
} mbsFaultSite;

typedef struct {
  const char *name;
  long count[MBS_FAULT_NKIND];
} mbsFaultMark;

static int mbs_fault_on = 0; // 1: counting (and maybe injecting)
static int mbs_fault_rank = -1;
static long mbs_fault_count[MBS_FAULT_NKIND];
static mbsFaultRule mbs_fault_rule[MBS_FAULT_MAXRULE];
static int mbs_fault_nrule = 0;
static mbsFaultSite mbs_fault_site[MBS_FAULT_MAXSITE];
static int mbs_fault_nsite = 0;
static char mbs_fault_log[1024];
static long mbs_fault_phase = 0;
#define MBS_FAULT_MAXMARK 8
static mbsFaultMark mbs_fault_mark[MBS_FAULT_MAXMARK];
static int mbs_fault_nmark = 0;

static const char *const mbs_fault_kind[MBS_FAULT_NKIND] = {"alloc", "write", "nan"};

static void mbs_faultWriteLog(void) {
  if (!mbs_fault_log[0] || mbs_fault_rank < 0) return;
  char path[1100];
  snprintf(path, sizeof path, "%s.%d", mbs_fault_log, mbs_fault_rank);
  mbs_fault_on = 0; // nothing below counts (fopen allocates inside libc, not through the wrap)
  FILE *f = fopen(path, "w");
  if (!f) return;
  for (int k = 0; k < MBS_FAULT_NKIND; k++)
    fprintf(f, "count %s %ld\n", mbs_fault_kind[k], mbs_fault_count[k]);
  fprintf(f, "count phase %ld\n", mbs_fault_phase);
  for (int i = 0; i < mbs_fault_nmark; i++)
    fprintf(f, "mark %s %ld %ld %ld\n", mbs_fault_mark[i].name, mbs_fault_mark[i].count[0],
            mbs_fault_mark[i].count[1], mbs_fault_mark[i].count[2]);
  for (int i = 0; i < mbs_fault_nsite; i++) {
    const mbsFaultSite *s = &mbs_fault_site[i];
    if (s->label) {
      const char *base = strrchr(s->label, '/');
      fprintf(f, "site %s %ld %s %ld\n", mbs_fault_kind[s->kind], s->index,
              base ? base + 1 : s->label, s->phase);
      continue;
    }
    uintptr_t off = (uintptr_t)s->key;
#ifdef __GLIBC__
    Dl_info di;
    if (dladdr(s->key, &di) && di.dli_fbase) off -= (uintptr_t)di.dli_fbase;
#endif
    fprintf(f, "site %s %ld 0x%lx %ld\n", mbs_fault_kind[s->kind], s->index, (unsigned long)off,
            s->phase);
  }
  fclose(f);
}

// "alloc:12@1,write:3+" -> rules; a malformed rule is ignored with a note on stderr
static void mbs_faultParse(const char *spec) {
  const char *p = spec;
  while (*p && mbs_fault_nrule < MBS_FAULT_MAXRULE) {
    mbsFaultRule r = {-1, 0, 0, -1};
    for (int k = 0; k < MBS_FAULT_NKIND; k++) {
      size_t n = strlen(mbs_fault_kind[k]);
      if (!strncmp(p, mbs_fault_kind[k], n) && p[n] == ':') r.kind = k, p += n + 1;
    }
    char *end = NULL;
    r.n = r.kind >= 0 ? strtol(p, &end, 10) : 0;
    if (r.kind >= 0 && end != p && r.n > 0) {
      p = end;
      if (*p == '+') r.sticky = 1, p++;
      if (*p == '@') {
        r.rank = (int)strtol(p + 1, &end, 10);
        p = end;
      }
    }
    if (r.kind < 0 || r.n <= 0 || (*p && *p != ',')) {
      fprintf(stderr,
              "mbspar: MBS_FAULT: cannot read \"%s\" (KIND:N[+][@RANK],...; KIND alloc, "
              "write or nan)\n",
              spec);
      mbs_fault_nrule = 0;
      return;
    }
    mbs_fault_rule[mbs_fault_nrule++] = r;
    if (*p == ',') p++;
  }
}

void mbs_faultSetRank(int rank) {
  if (mbs_fault_rank >= 0) return;
  const char *spec = getenv("MBS_FAULT"), *log = getenv("MBS_FAULT_LOG");
  mbs_fault_rank = rank;
  if (spec && spec[0]) mbs_faultParse(spec);
  if (log && log[0]) {
    snprintf(mbs_fault_log, sizeof mbs_fault_log, "%s", log);
    atexit(mbs_faultWriteLog);
  }
  mbs_fault_on = mbs_fault_nrule > 0 || mbs_fault_log[0];
}

int mbs_faultActive(void) {
  return mbs_fault_on;
}

int mbs_faultHit(mbsFaultKind kind, const void *key, const char *label) {
  if (!mbs_fault_on) return 0;
  int fail = 0;
#pragma omp critical(mbs_fault)
  {
    long n = ++mbs_fault_count[kind];
    if (mbs_fault_log[0]) { // a new point: remember where it was first reached
      int seen = 0;
      for (int i = 0; i < mbs_fault_nsite && !seen; i++)
        seen = mbs_fault_site[i].key == key && mbs_fault_site[i].kind == (int)kind;
      if (!seen && mbs_fault_nsite < MBS_FAULT_MAXSITE)
        mbs_fault_site[mbs_fault_nsite++] =
            (mbsFaultSite){key, label, (int)kind, n, mbs_fault_phase};
    }
    for (int i = 0; i < mbs_fault_nrule; i++) {
      const mbsFaultRule *r = &mbs_fault_rule[i];
      if (r->kind == (int)kind && (r->rank < 0 || r->rank == mbs_fault_rank) &&
          (n == r->n || (r->sticky && n > r->n)))
        fail = 1;
    }
  }
  if (fail) errno = kind == MBS_FAULT_WRITE ? ENOSPC : kind == MBS_FAULT_ALLOC ? ENOMEM : EDOM;
  return fail;
}

void mbs_faultPhase(void) {
  if (mbs_fault_on) mbs_fault_phase++;
}

void mbs_faultMark(const char *name) {
  if (!mbs_fault_on || mbs_fault_nmark == MBS_FAULT_MAXMARK) return;
  mbsFaultMark *k = &mbs_fault_mark[mbs_fault_nmark++];
  k->name = name;
  for (int i = 0; i < MBS_FAULT_NKIND; i++) k->count[i] = mbs_fault_count[i];
}
