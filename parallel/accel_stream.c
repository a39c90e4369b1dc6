/// \file accel_stream.c
/// Rank 0 reads the other ranks' result slices chunk by chunk while it writes (accel_stream.h).
/// The requests are three doubles {slice, offset, length} (slice -1: done) sent to one rank,
/// answered with that many doubles of its slice; one request is outstanding at a time.
#include <stdlib.h>
#include <string.h>
#include "accel_stream.h"

// the chunk: a multiple of 6 (joint wrench rows never straddle two chunks); 384 KiB
#define MBSP_SLICE_CHUNK (6L * 8192)
#define MBSP_SLICE_TAG   7301

mbsErr mbsp_slicesOpen(mbspComm *comm, const double *const own[MBSP_SLICE_N],
                       const long nown[MBSP_SLICE_N], mbspSlices *s) {
  memset(s, 0, sizeof *s);
  s->comm = comm;
  double mine[MBSP_SLICE_N];
  for (int k = 0; k < MBSP_SLICE_N; k++) {
    s->own[k] = own[k];
    s->nown[k] = nown[k];
    mine[k] = (double)nown[k];
  }
  mbsErr e = MBS_OK;
  if (mbsp_rank(comm) == 0) {
    s->count = malloc((size_t)mbsp_size(comm) * MBSP_SLICE_N * sizeof *s->count);
    s->buf = malloc(MBSP_SLICE_CHUNK * sizeof *s->buf);
    if (!s->count || !s->buf) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  }
  MBS_CALL(mbsp_agreeErr(comm, e));
  return mbsp_agreeErr(comm, mbsp_gather(comm, mine, MBSP_SLICE_N, s->count));
}

mbsErr mbsp_slicesFold(mbspSlices *s, int k, mbspSliceFn fn, void *ctx) {
  if (s->err) return s->err;
  long at = 0;
  fn(ctx, s->own[k], s->nown[k], at); // rank 0's own slice first
  at += s->nown[k];
  for (int r = 1; r < mbsp_size(s->comm); r++) {
    long n = (long)s->count[MBSP_SLICE_N * r + k];
    for (long off = 0; off < n; off += MBSP_SLICE_CHUNK) {
      long len = n - off < MBSP_SLICE_CHUNK ? n - off : MBSP_SLICE_CHUNK;
      double req[3] = {k, (double)off, (double)len};
      s->err = mbsp_sendrecv(s->comm, req, 3, r, s->buf, (int)len, r, MBSP_SLICE_TAG);
      if (s->err) return s->err;
      fn(ctx, s->buf, len, at);
      at += len;
    }
  }
  return MBS_OK;
}

mbsErr mbsp_slicesDone(mbspSlices *s) {
  mbsErr e = s->err;
  double req[3] = {-1, 0, 0};
  for (int r = 1; r < mbsp_size(s->comm); r++) {
    mbsErr es = mbsp_sendrecv(s->comm, req, 3, r, NULL, 0, -1, MBSP_SLICE_TAG);
    if (!e) e = es;
  }
  return e;
}

mbsErr mbsp_slicesServe(mbspSlices *s) {
  for (;;) {
    double req[3];
    MBS_CALL(mbsp_sendrecv(s->comm, NULL, 0, -1, req, 3, 0, MBSP_SLICE_TAG));
    int k = (int)req[0];
    if (k < 0) return MBS_OK;
    long off = (long)req[1], len = (long)req[2];
    // rank 0 asks only within the lengths this rank gave it
    if (k >= MBSP_SLICE_N || off < 0 || len < 0 || off + len > s->nown[k])
      return mbs_errSet(MBS_ERR_INTERNAL, "mbspar: slice request %d [%ld, +%ld) out of range", k,
                        off, len);
    MBS_CALL(mbsp_sendrecv(s->comm, s->own[k] + off, (int)len, 0, NULL, 0, -1, MBSP_SLICE_TAG));
  }
}

static void mbsp_slicesPart(void *ctx, const double *v, long n, long at) {
  mbs_jsonNumberArrayPart(ctx, v, n, at);
}

void mbsp_slicesJsonArray(mbspSlices *s, mbsJson *j, const char *key, int k) {
  mbs_jsonNumberArrayOpen(j, key);
  mbsp_slicesFold(s, k, mbsp_slicesPart, j);
  mbs_jsonNumberArrayClose(j);
}

static void mbsp_slicesRows(void *ctx, const double *v, long n, long at) {
  (void)at;
  for (long i = 0; i + 6 <= n; i += 6) mbs_jsonNumberArray(ctx, NULL, v + i, 6);
}

void mbsp_slicesJsonRows6(mbspSlices *s, mbsJson *j, const char *key, int k) {
  mbs_jsonBeginArray(j, key);
  mbsp_slicesFold(s, k, mbsp_slicesRows, j);
  mbs_jsonEndArray(j);
}

void mbsp_slicesFree(mbspSlices *s) {
  free(s->count);
  free(s->buf);
  s->count = NULL;
  s->buf = NULL;
}
