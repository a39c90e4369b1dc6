/// \file accel_stream.h
/// A distributed-memory model's result slices (accel: q̈, λ, the world joint wrenches; each rank
/// holds those of its bodies), read by rank 0 in chunks of bounded length while it writes the
/// report or the table, instead of gathered whole: rank 0 asks ("chunk of slice K at OFFSET",
/// then "done"), the other ranks answer in mbsp_slicesServe until it says done. Rank 0 holds at
/// most one chunk of another rank at a time (docs/scaling.md "Memory"). Not recovered: an MPI
/// call of the exchange itself that fails (a rank whose answer is not sent leaves rank 0 waiting).
#ifndef MBSP_ACCEL_STREAM_H
#define MBSP_ACCEL_STREAM_H
#include "mbspar/mbs_parallel.h"
#include "mbspar/mbs_report.h"

/// The slices: q̈, λ, world joint wrenches (6 per body, model order).
enum { MBSP_SLICE_QDD = 0, MBSP_SLICE_LAM, MBSP_SLICE_WRENCH, MBSP_SLICE_N };

typedef struct {
  mbspComm *comm;
  const double *own[MBSP_SLICE_N]; ///< this rank's slices
  long nown[MBSP_SLICE_N];         ///< their lengths (doubles)
  double *count; ///< rank 0: count[MBSP_SLICE_N * r + k], the length of slice k on rank r
  double *buf;   ///< rank 0: one chunk of another rank's slice
  mbsErr err;    ///< rank 0: the first failure of a request (the later ones are skipped)
} mbspSlices;

/// A piece of global array: \p n values whose first has the global index \p at.
typedef void (*mbspSliceFn)(void *ctx, const double *v, long n, long at);

/// Set \p s up over this rank's slices \p own (lengths \p nown): the lengths to rank 0, its chunk
/// buffer; failures agreed. Collective. Free with mbsp_slicesFree.
mbsErr mbsp_slicesOpen(mbspComm *comm, const double *const own[MBSP_SLICE_N],
                       const long nown[MBSP_SLICE_N], mbspSlices *s);
/// Rank 0: \p fn on the consecutive pieces of the global array of slice \p k, in order (rank 0's
/// own slice whole, the others' in chunks asked for one at a time). After a failure (returned and
/// kept in s->err) nothing more is asked. Pairwise with mbsp_slicesServe.
mbsErr mbsp_slicesFold(mbspSlices *s, int k, mbspSliceFn fn, void *ctx);
/// Rank 0: tell every other rank to stop serving. Call it once whatever happened before
/// (a target that could not be opened or written): the others wait in mbsp_slicesServe until
/// then. Returns s->err or the failure to tell them.
mbsErr mbsp_slicesDone(mbspSlices *s);
/// Ranks other than 0: answer rank 0's requests until it says done.
mbsErr mbsp_slicesServe(mbspSlices *s);
/// Rank 0: "key": [the global array of slice k] on one line (mbs_jsonNumberArray's bytes).
void mbsp_slicesJsonArray(mbspSlices *s, mbsJson *j, const char *key, int k);
/// Rank 0: "key": [[6 values], ...] one array per 6 values (the joint wrenches).
void mbsp_slicesJsonRows6(mbspSlices *s, mbsJson *j, const char *key, int k);
/// Free the buffers. Local.
void mbsp_slicesFree(mbspSlices *s);
#endif
