/// \file mbs_report.h
/// Streaming JSON writer: the one place that formats machine-readable output. Doubles are
/// written with %.17g (round-trip exact); NaN and Inf become null. A file target is written to a
/// temporary name and renamed on a successful close, so a failed run never clobbers an earlier
/// report. "-" writes to stdout.
#ifndef MBS_REPORT_H
#define MBS_REPORT_H

#include "mbs_error.h"

typedef struct mbsJson mbsJson;

/// Open a writer on \p path ("-" = stdout). The document is one top-level object, opened here.
mbsErr mbs_jsonOpen(const char *path, mbsJson **j);
/// How a file target reaches its name (mbs_jsonOpenNew).
enum {
  MBS_JSON_RENAME = 0,    ///< written to PATH.tmp.PID, renamed over PATH by mbs_jsonClose
  MBS_JSON_EXCLUSIVE = 1, ///< the same, but put in place only if PATH does not exist (an atomic
                          ///< link: of two writers only one succeeds, the other gets MBS_ERR_IO)
  MBS_JSON_DIRECT = 2,    ///< written to PATH itself, which is the caller's temporary (the caller
                          ///< puts it in place); removed if the close fails
  MBS_JSON_STREAM = 3     ///< written to PATH itself, an existing character device or FIFO
                          ///< (/dev/null, /dev/stderr, a pipe): never created, truncated,
                          ///< renamed or removed; a FIFO without a reader is refused (no hang)
};
/// As mbs_jsonOpen with a \p mode (MBS_JSON_*).
mbsErr mbs_jsonOpenNew(const char *path, int mode, mbsJson **j);
/// Open a writer into a growable memory buffer (tests); read it with mbs_jsonBuffer.
mbsErr mbs_jsonOpenMemory(mbsJson **j);
/// The text written so far (memory writers only).
const char *mbs_jsonBuffer(const mbsJson *j);
/// Begin/end a nested object or array; \p key is NULL inside arrays.
void mbs_jsonBeginObject(mbsJson *j, const char *key);
void mbs_jsonEndObject(mbsJson *j);
void mbs_jsonBeginArray(mbsJson *j, const char *key);
void mbs_jsonEndArray(mbsJson *j);
/// Scalars (\p key NULL inside arrays).
void mbs_jsonNumber(mbsJson *j, const char *key, double v);
void mbs_jsonInt(mbsJson *j, const char *key, long v);
void mbs_jsonBool(mbsJson *j, const char *key, int v);
void mbs_jsonString(mbsJson *j, const char *key, const char *v);
void mbs_jsonNull(mbsJson *j, const char *key);
/// An array of n doubles.
void mbs_jsonNumberArray(mbsJson *j, const char *key, const double *v, long n);
/// The same array written in parts (arrays too large to hold whole, e.g. a distributed model's
/// results streamed from the ranks): Open writes the key and "[", each Part \p n doubles of which
/// \p at were written before, Close "]"; nothing else may be written in between. The bytes are
/// those of one mbs_jsonNumberArray of all the parts.
void mbs_jsonNumberArrayOpen(mbsJson *j, const char *key);
void mbs_jsonNumberArrayPart(mbsJson *j, const double *v, long n, long at);
void mbs_jsonNumberArrayClose(mbsJson *j);
/// An array of n ints.
void mbs_jsonIntArray(mbsJson *j, const char *key, const int *v, long n);
/// Close the top-level object, flush, rename into place. Returns MBS_ERR_IO on a write failure
/// (the temporary is removed and the target left untouched). Sets *j to NULL.
mbsErr mbs_jsonClose(mbsJson **j);
/// Discard without writing the target (temporary removed). Sets *j to NULL.
void mbs_jsonAbandon(mbsJson **j);

#endif
