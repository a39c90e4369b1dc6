/// \file comm_fmt.c
/// Output rows formatted by a waiting rank (fmtoff.h): the channel between rank 0, which runs a
/// serial verb alone, and rank 1, which formats its trajectory rows while rank 0 computes the
/// next ones. A duplicate of the job's communicator; one row in flight at most: rank 0 sends the
/// doubles of row k (MPI_Isend: \p v stays untouched until the collect) and posts the receive of
/// its text, and waits for that text before it sends row k+1. Rank 1 answers every row it receives
/// (MPI_Isend, then back to its sleeps: it does not spin until rank 0 takes the text), so rank
/// 0's wait always ends; rank 0 collects the outstanding text before it enters the job's
/// closing barrier (mbsp_fmtDrain), so no message is left when the channel is freed. A failing rank
/// 0 (an error return) drains the same way; a crashed or killed rank ends the job through the
/// launcher.
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "comm_private.h"
#include "fmtoff.h"

#define MBSP_FMT_ROW  7708 // rank 0 -> rank 1: a row of doubles
#define MBSP_FMT_TEXT 7709 // rank 1 -> rank 0: its text

static struct {
  MPI_Comm comm;
  int rank, on;
  // rank 0: the outstanding receive of a row's text
  MPI_Request req, sreq; // rank 0: the text's receive, the row's send; rank 1: the text's send
  int pending;
  char *text;
  size_t textcap, textlen;
  // rank 1: the row received and its text
  double *row;
  long rowcap;
  char *out;
  size_t outcap;
} mbsp_fmt = {MPI_COMM_NULL, 0, 0, MPI_REQUEST_NULL, MPI_REQUEST_NULL, 0, NULL, 0, 0, NULL, 0,
              NULL,          0};

size_t mbsp_fmtTextMax(long n) {
  return 25 * (size_t)(n > 0 ? n : 1) + 2; // "%.17g" needs at most 24 characters, a comma each
}

size_t mbsp_fmtRow(const double *v, long n, char *buf) {
  char *p = buf;
  for (long i = 0; i < n; i++) {
    if (i) *p++ = ',';
    p += snprintf(p, 25, "%.17g", v[i]);
  }
  *p++ = '\n';
  *p = 0;
  return (size_t)(p - buf);
}

mbsErr mbsp_fmtBegin(mbspComm *c, int on) {
  if (!on || mbsp_size(c) < 2 || mbsp_fmt.comm != MPI_COMM_NULL) return MBS_OK;
  if (MPI_Comm_dup(mbsp_commRaw(c), &mbsp_fmt.comm) != MPI_SUCCESS) {
    mbsp_fmt.comm = MPI_COMM_NULL;
    return mbs_errSet(MBS_ERR_MPI, "MPI_Comm_dup failed (output formatting rank)");
  }
  mbsp_fmt.rank = mbsp_rank(c);
  mbsp_fmt.on = 1;
  return MBS_OK;
}

int mbsp_fmtActive(void) {
  return mbsp_fmt.comm != MPI_COMM_NULL && mbsp_fmt.rank == 0 && mbsp_fmt.on;
}

mbsErr mbsp_fmtReserve(long n) {
  size_t need = mbsp_fmtTextMax(n);
  if (mbsp_fmt.textcap >= need) return MBS_OK;
  char *t = realloc(mbsp_fmt.text, need);
  MBS_CHECK(t, MBS_ERR_NOMEM, "out of memory (output rows, %zu bytes)", need);
  mbsp_fmt.text = t, mbsp_fmt.textcap = need;
  return MBS_OK;
}

mbsErr mbsp_fmtSubmit(const double *v, long n) {
  MBS_CHECK(mbsp_fmtActive() && !mbsp_fmt.pending && n > 0 && n <= INT_MAX / 25, MBS_ERR_INTERNAL,
            "output formatting rank: a row sent out of turn");
  MBS_CALL(mbsp_fmtReserve(n));
  int rc0 = MPI_Isend(v, (int)n, MPI_DOUBLE, 1, MBSP_FMT_ROW, mbsp_fmt.comm, &mbsp_fmt.sreq);
  if (rc0 != MPI_SUCCESS) return mbs_errSet(MBS_ERR_MPI, "MPI_Isend of an output row failed");
  if (MPI_Irecv(mbsp_fmt.text, (int)mbsp_fmt.textcap, MPI_CHAR, 1, MBSP_FMT_TEXT, mbsp_fmt.comm,
                &mbsp_fmt.req) != MPI_SUCCESS)
    return mbs_errSet(MBS_ERR_MPI, "MPI_Irecv of an output row's text failed");
  mbsp_fmt.pending = 1;
  return MBS_OK;
}

mbsErr mbsp_fmtCollect(const char **text, size_t *len, int *waited) {
  *text = mbsp_fmt.text, *len = 0;
  if (waited) *waited = 0;
  if (!mbsp_fmt.pending) return MBS_OK;
  MPI_Status st;
  int cnt = 0, done = 0;
  mbsp_fmt.pending = 0;
  int rc = MPI_Test(&mbsp_fmt.req, &done, &st); // was the text there before we asked?
  if (rc == MPI_SUCCESS && !done) rc = MPI_Wait(&mbsp_fmt.req, &st);
  if (waited) *waited = !done;
  if (MPI_Wait(&mbsp_fmt.sreq, MPI_STATUS_IGNORE) != MPI_SUCCESS) rc = MPI_ERR_OTHER;
  // an empty text: rank 1 could not format the row (out of memory); *len 0 says so
  if (rc != MPI_SUCCESS || MPI_Get_count(&st, MPI_CHAR, &cnt) != MPI_SUCCESS || cnt < 0)
    return mbs_errSet(MBS_ERR_MPI, "receiving an output row's text failed");
  *len = (size_t)cnt;
  return MBS_OK;
}

void mbsp_fmtDrain(void) {
  const char *t;
  size_t n;
  if (mbsp_fmt.comm == MPI_COMM_NULL || mbsp_fmt.rank != 0) return;
  (void)mbsp_fmtCollect(&t, &n, NULL);
  mbsp_fmt.on = 0;
}

int mbsp_fmtServing(void) {
  return mbsp_fmt.comm != MPI_COMM_NULL && mbsp_fmt.rank == 1;
}

int mbsp_fmtServe(void) {
  if (mbsp_fmt.comm == MPI_COMM_NULL || mbsp_fmt.rank != 1) return 0;
  int served = 0;
  for (;;) {
    int flag = 0, n = 0;
    MPI_Status st;
    if (MPI_Iprobe(0, MBSP_FMT_ROW, mbsp_fmt.comm, &flag, &st) != MPI_SUCCESS || !flag) break;
    // the previous text has reached rank 0 (it collects a row's text before it sends the next)
    MPI_Wait(&mbsp_fmt.sreq, MPI_STATUS_IGNORE);
    MPI_Get_count(&st, MPI_DOUBLE, &n);
    size_t need = mbsp_fmtTextMax(n);
    if (n > mbsp_fmt.rowcap) { // rows keep their length: this happens once
      double *r = realloc(mbsp_fmt.row, (size_t)n * sizeof *r);
      if (r) mbsp_fmt.row = r, mbsp_fmt.rowcap = n;
    }
    if (need > mbsp_fmt.outcap) {
      char *o = realloc(mbsp_fmt.out, need);
      if (o) mbsp_fmt.out = o, mbsp_fmt.outcap = need;
    }
    int ok = n <= mbsp_fmt.rowcap && need <= mbsp_fmt.outcap;
    // out of memory: the row is taken (no room: a truncated receive) and answered with an empty
    // text; rank 0 then formats it and the later rows itself
    double dummy;
    MPI_Recv(ok ? (void *)mbsp_fmt.row : (void *)&dummy, ok ? n : 0, MPI_DOUBLE, 0, MBSP_FMT_ROW,
             mbsp_fmt.comm, MPI_STATUS_IGNORE);
    size_t len = ok ? mbsp_fmtRow(mbsp_fmt.row, n, mbsp_fmt.out) : 0;
    // a send that does not wait for rank 0 to take it: this rank goes back to its sleeps
    MPI_Isend(mbsp_fmt.out, (int)len, MPI_CHAR, 0, MBSP_FMT_TEXT, mbsp_fmt.comm, &mbsp_fmt.sreq);
    served++;
  }
  return served;
}

void mbsp_fmtEnd(void) {
  if (mbsp_fmt.comm == MPI_COMM_NULL) return;
  mbsp_fmtDrain();
  if (mbsp_fmt.rank == 1) MPI_Wait(&mbsp_fmt.sreq, MPI_STATUS_IGNORE); // taken by rank 0's drain
  MPI_Comm_free(&mbsp_fmt.comm);
  mbsp_fmt.comm = MPI_COMM_NULL;
  free(mbsp_fmt.text), free(mbsp_fmt.row), free(mbsp_fmt.out);
  mbsp_fmt.text = NULL, mbsp_fmt.row = NULL, mbsp_fmt.out = NULL;
  mbsp_fmt.textcap = mbsp_fmt.outcap = 0, mbsp_fmt.rowcap = 0;
  mbsp_fmt.on = 0;
}
