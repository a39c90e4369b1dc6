/// \file comm.c
/// The file that calls MPI (with comm_fmt.c, the rows formatted by a waiting rank). Communication
/// patterns used by mbspar:
///  - setup: rank 0 reads input files and broadcasts their bytes (every rank parses the same
///    text, so no rank touches the file system but rank 0);
///  - errors: mbsp_agreeErr is one MPI_Allreduce (MAX of the codes) plus, on failure, one
///    MPI_Bcast of the message from the lowest failing rank, so all ranks leave together;
///  - solver: nearest-neighbour halo exchange and fused allreduces (see halo/cgj code).
/// MPI is initialised with MPI_THREAD_FUNNELED (OpenMP threads never call MPI) and
/// MPI_ERRORS_RETURN so failures become mbsErr codes instead of aborts.
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "flex_modalfile.h"
#include "comm_private.h"
#include "flops.h"
#include "mbspar/mbs_schur.h"
#include "fmtoff.h"
#include "mbspar/mbs_fault.h"
#include "mbspar/mbs_textfile.h"
#include "solvers.h"

struct mbspComm {
  MPI_Comm comm;
  int rank, size, provided;
  int job;   // ranks of the job (mbsp_commIdle: the ranks waiting while this one works; else 0)
  int radix; // of the log-depth scans (mbs_scanRadix, read once at mbsp_init)
  // a split agreement in flight (mbsp_agreeErrStart .. End): the requests, the codes, and the
  // message of this rank's error as it was when the agreement started (radix-k dissemination
  // rounds: with window d, to rank + jd and from rank - jd modulo P, j = 1 .. an)
  MPI_Request areq[2 * (MBS_SCAN_RADIX_MAX - 1)];
  int aopen, ad, an, acodes[2], ared[2], ain[2 * (MBS_SCAN_RADIX_MAX - 1)];
  char amsg[2048];
  // mbsp_commSetIdle: local work run in mbsp_exscan while each round's messages travel
  void (*idle)(void *ctx);
  void *idle_ctx;
};

void mbsp_commSetIdle(mbspComm *c, void (*idle)(void *ctx), void *ctx) {
  c->idle = idle, c->idle_ctx = ctx;
}

int mbsp_jobSize(const mbspComm *c) {
  return c->job > 0 ? c->job : c->size;
}

mbsErr mbsp_commIdle(const mbspComm *comm, mbspComm **out) {
  MBS_CALL(mbsp_commSelf(comm, out));
  (*out)->job = comm->size;
  return MBS_OK;
}

// The SMPI flop-cost build (bench/smpi/build.sh --flops): before every MPI call, the flops counted
// since the last one are charged to the simulated clock (src/flops.h, mbs_flop_sink); the
// simulation runs with smpi/simulate-computation:no, so compute costs flops / host speed
#ifdef MBS_SMPI_FLOPS
static void mbsp_smpiFlops(void) {
  static unsigned long long done = 0; // per simulated rank (SMPI privatizes globals)
  unsigned long long d = mbs_flop_count - done;
  done = mbs_flop_count;
  if (d) smpi_execute_flops((double)d);
}
#define MBSP_SINK() mbsp_smpiFlops()
#else
#define MBSP_SINK() ((void)0)
#endif

// The SMPI warm-cache timed build (bench/smpi/build.sh: mbspar_smpi_warm, run with
// smpi/simulate-computation:no): this file times each compute block itself, from the return of
// one MPI call (or clock read) to the next, on the thread's real CPU clock, and charges it to the
// simulated host (smpi_execute: seconds on a host as fast as this machine's core). Before each
// block starts, the rank re-reads its own live heap blocks (bench/smpi/warmwrap.c), untimed, so
// the block runs with this rank's data in the cache, as on a node of its own
#ifdef MBS_SMPI_WARM
size_t mbsp_smpiWarmTouch(void); // bench/smpi/warmwrap.c
double mbsp_smpiCpuNow(void);    // bench/smpi/warmwrap.c (smpicc replaces clock_gettime)
static double mbsp_warm_t0 = -1, mbsp_warm_carry = 0; // per simulated rank (privatized)
static void mbsp_smpiWarmStop(void) {
  if (mbsp_warm_t0 < 0) return;
  double d = mbsp_smpiCpuNow() - mbsp_warm_t0 + mbsp_warm_carry;
  mbsp_warm_t0 = -1;
  mbsp_warm_carry = d < 1e-6 ? d : 0; // SMPI drops executions under smpi/cpu-threshold (1 us)
  if (d >= 1e-6) smpi_execute(d);
}
static void mbsp_smpiWarm(void) {
  (void)mbsp_smpiWarmTouch();
  mbsp_warm_t0 = mbsp_smpiCpuNow();
}
#undef MBSP_SINK
#define MBSP_SINK()   mbsp_smpiWarmStop()
#define MBSP_RESUME() mbsp_smpiWarm()
#else
#define MBSP_RESUME() ((void)0)
#endif

#define MBS_CALL_MPI(expr)                                                                         \
  do {                                                                                             \
    MBSP_SINK();                                                                                   \
    int mbs_mpi_rc_ = (expr);                                                                      \
    MBSP_RESUME();                                                                                 \
    if (mbs_mpi_rc_ != MPI_SUCCESS) {                                                              \
      char mbs_mpi_s_[MPI_MAX_ERROR_STRING];                                                       \
      int mbs_mpi_l_ = 0;                                                                          \
      MPI_Error_string(mbs_mpi_rc_, mbs_mpi_s_, &mbs_mpi_l_);                                      \
      return mbs_errSet(MBS_ERR_MPI, "%s failed: %s", #expr, mbs_mpi_s_);                          \
    }                                                                                              \
  } while (0)

mbsErr mbsp_init(int *argc, char ***argv, mbspComm **out) {
  int inited = 0;
  *out = NULL;
  MBS_CALL(mbsp_solversRegister()); // the parallel layer's entries of the solver table
  mbsp_flexFileRegister();          // the HDF5 reader of flexible.file (docs/flexible.md 14)
  MPI_Initialized(&inited);
  mbspComm *c = calloc(1, sizeof *c);
  if (!c) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  if (!inited)
    MBS_CALL_MPI(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &c->provided));
  else
    MPI_Query_thread(&c->provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  c->comm = MPI_COMM_WORLD;
  MPI_Comm_rank(c->comm, &c->rank);
  MPI_Comm_size(c->comm, &c->size);
  c->radix = mbs_scanRadix();
  mbs_faultSetRank(c->rank); // fault injection for tests (MBS_FAULT, mbs_fault.h) counts from here
#ifdef MBS_SMPI_FLOPS
  mbsp_smpiFlops(); // the setup's flops are not part of the study
  mbs_flop_sink = mbsp_smpiFlops;
#endif
#ifdef MBS_SMPI_WARM
  mbs_flop_sink = mbsp_smpiWarmStop; // mbs_wtime reads SMPI's clock, which may let others run
  mbs_wtime_resume = mbsp_smpiWarm;
#endif
  *out = c;
  return MBS_OK;
}

void mbsp_finalize(mbspComm **pc) {
  if (!pc || !*pc) return;
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin) MPI_Finalize();
  free(*pc);
  *pc = NULL;
}

mbsErr mbsp_commSelf(const mbspComm *comm, mbspComm **out) {
  *out = NULL;
  mbspComm *c = calloc(1, sizeof *c);
  if (!c) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  c->provided = comm->provided;
  int rc = MPI_Comm_dup(MPI_COMM_SELF, &c->comm);
  if (rc != MPI_SUCCESS) {
    free(c);
    return mbs_errSet(MBS_ERR_MPI, "MPI_Comm_dup(MPI_COMM_SELF) failed");
  }
  MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
  c->rank = 0, c->size = 1, c->radix = comm->radix;
  *out = c;
  return MBS_OK;
}

mbsErr mbsp_commSplit(const mbspComm *comm, int keep, mbspComm **out) {
  *out = NULL;
  MPI_Comm sub = MPI_COMM_NULL;
  MBS_CALL_MPI(MPI_Comm_split(comm->comm, keep ? 0 : MPI_UNDEFINED, comm->rank, &sub));
  if (sub == MPI_COMM_NULL) return MBS_OK;
  mbspComm *c = calloc(1, sizeof *c);
  if (!c) {
    MPI_Comm_free(&sub);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  }
  MPI_Comm_set_errhandler(sub, MPI_ERRORS_RETURN);
  c->comm = sub, c->provided = comm->provided, c->job = comm->size, c->radix = comm->radix;
  MPI_Comm_rank(sub, &c->rank);
  MPI_Comm_size(sub, &c->size);
  *out = c;
  return MBS_OK;
}

void mbsp_commFree(mbspComm **pc) {
  if (!pc || !*pc) return;
  MPI_Comm_free(&(*pc)->comm);
  free(*pc);
  *pc = NULL;
}

int mbsp_rank(const mbspComm *c) {
  return c->rank;
}
int mbsp_size(const mbspComm *c) {
  return c->size;
}
int mbsp_threadLevel(const mbspComm *c) {
  return c->provided;
}

const char *mbsp_libraryVersion(void) {
  static char v[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(v, &len);
  // keep the first line only
  char *nl = strchr(v, '\n');
  if (nl) *nl = 0;
  char *comma = strchr(v, ',');
  if (comma) *comma = 0;
  return v;
}

// the end of an agreement once the codes are reduced (red): on failure the lowest failing rank's
// message (own: this rank's, as it was when the agreement started) to every rank
static mbsErr mbsp_agreeFinish(mbspComm *c, mbsErr local, const int *red, const char *own) {
  if (red[0] == MBS_OK) return MBS_OK;
  int root = -red[1];
  if (root < 0 || root >= c->size) root = 0;
  char msg[2048];
  if (c->rank == root) snprintf(msg, sizeof msg, "%s", own);
  MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, root, c->comm);
  msg[sizeof msg - 1] = 0;
  if (c->rank != root || !local) mbs_errSet((mbsErr)red[0], "%s", msg);
  return (mbsErr)red[0];
}

mbsErr mbsp_agreeErr(mbspComm *c, mbsErr local) {
  mbs_faultPhase(); // fault injection: the points between two agreements form one stretch
  int codes[2] = {(int)local, local ? -c->rank : -c->size}, red[2];
  MBSP_SINK();
  // MAX of the code; MAX of -rank among failing ranks gives the lowest failing rank
  int arc = MPI_Allreduce(codes, red, 2, MPI_INT, MPI_MAX, c->comm);
  MBSP_RESUME();
  if (arc != MPI_SUCCESS)
    return mbs_errSet(MBS_ERR_MPI, "MPI_Allreduce failed while agreeing on an error");
  return mbsp_agreeFinish(c, local, red, local ? mbs_errMsg() : "");
}

// The split agreement reduces the codes by radix-k dissemination (k = c->radix, as the scans;
// MAX is idempotent, so any P): a round with window d (1 at first) exchanges with the ranks
// +- jd modulo P, j = 1 .. an = min(k - 1, ceil(P / d) - 1), and leaves each rank the MAX over
// the d (an + 1) ranks below it: ceil(log_k P) rounds, k - 1 messages each way a round (k = 2:
// ceil(log2 P) rounds of one). Start posts the first round; End completes it and runs the rest.
// This is what a non-blocking collective does in an MPI library without a progress thread (its
// rounds advance only inside MPI calls), written out so that the simulator (SMPI, bench/smpi)
// sees the same rounds: SMPI's own MPI_Iallreduce sends every rank's value to every other rank
// at once (P^2 messages in one round), which real libraries do not.
#define MBSP_TAG_AGREE 7711
static int mbsp_agreePost(mbspComm *c) {
  const int P = c->size, k = c->radix >= 2 ? c->radix : 2, d = c->ad;
  int an = (P + d - 1) / d - 1;
  if (an > k - 1) an = k - 1;
  c->an = an;
  int rc = MPI_SUCCESS;
  MBSP_SINK();
  for (int j = 1; j <= an && rc == MPI_SUCCESS; j++) { // j d < P: the partners are distinct
    int to = (int)(((long)c->rank + (long)j * d) % P), from = (c->rank - j * d + P) % P;
    rc = MPI_Irecv(c->ain + 2 * (j - 1), 2, MPI_INT, from, MBSP_TAG_AGREE, c->comm,
                   &c->areq[2 * (j - 1)]);
    if (rc == MPI_SUCCESS)
      rc = MPI_Isend(c->ared, 2, MPI_INT, to, MBSP_TAG_AGREE, c->comm, &c->areq[2 * j - 1]);
  }
  MBSP_RESUME();
  return rc;
}

mbsErr mbsp_agreeErrStart(mbspComm *c, mbsErr local) {
  mbs_faultPhase(); // the same stretch boundary as mbsp_agreeErr's
  c->acodes[0] = (int)local, c->acodes[1] = local ? -c->rank : -c->size;
  c->ared[0] = c->acodes[0], c->ared[1] = c->acodes[1];
  c->amsg[0] = 0;
  if (local) snprintf(c->amsg, sizeof c->amsg, "%s", mbs_errMsg());
  c->ad = 1, c->aopen = 1;
  if (c->size > 1 && mbsp_agreePost(c) != MPI_SUCCESS) {
    c->aopen = 0;
    return mbs_errSet(MBS_ERR_MPI, "MPI_Isend/Irecv failed while agreeing on an error");
  }
  return MBS_OK;
}

mbsErr mbsp_agreeErrEnd(mbspComm *c) {
  if (!c->aopen) return mbs_errSet(MBS_ERR_INTERNAL, "agreement: none started");
  c->aopen = 0;
  while (c->ad < c->size) {
    MBSP_SINK();
    int arc = MPI_Waitall(2 * c->an, c->areq, MPI_STATUSES_IGNORE);
    MBSP_RESUME();
    if (arc != MPI_SUCCESS)
      return mbs_errSet(MBS_ERR_MPI, "MPI_Waitall failed while agreeing on an error");
    for (int j = 0; j < c->an; j++)
      for (int i = 0; i < 2; i++)
        if (c->ain[2 * j + i] > c->ared[i]) c->ared[i] = c->ain[2 * j + i];
    c->ad *= c->an + 1;
    if (c->ad < c->size && mbsp_agreePost(c) != MPI_SUCCESS)
      return mbs_errSet(MBS_ERR_MPI, "MPI_Isend/Irecv failed while agreeing on an error");
  }
  return mbsp_agreeFinish(c, (mbsErr)c->acodes[0], c->ared, c->amsg);
}

#define MBSP_RELAY_TAG 7707
static MPI_Comm mbsp_relay = MPI_COMM_NULL;

mbsErr mbsp_relayBegin(mbspComm *c) {
  if (mbsp_relay != MPI_COMM_NULL) return MBS_OK;
  if (MPI_Comm_dup(c->comm, &mbsp_relay) != MPI_SUCCESS) {
    mbsp_relay = MPI_COMM_NULL;
    return mbs_errSet(MBS_ERR_MPI, "MPI_Comm_dup failed (signal relay)");
  }
  return MBS_OK;
}

int mbsp_relayPoll(void) {
  if (mbsp_relay == MPI_COMM_NULL) return 0;
  int flag = 0, sig = 0;
  MPI_Status st;
  if (MPI_Iprobe(MPI_ANY_SOURCE, MBSP_RELAY_TAG, mbsp_relay, &flag, &st) != MPI_SUCCESS || !flag)
    return 0;
  MPI_Recv(&sig, 1, MPI_INT, st.MPI_SOURCE, MBSP_RELAY_TAG, mbsp_relay, MPI_STATUS_IGNORE);
  return sig;
}

void mbsp_relayEnd(void) {
  if (mbsp_relay == MPI_COMM_NULL) return;
  MPI_Barrier(mbsp_relay); // every relayed signal was sent before its rank got here
  while (mbsp_relayPoll()) {
  }
  MPI_Comm_free(&mbsp_relay);
  mbsp_relay = MPI_COMM_NULL;
}

mbsErr mbsp_agreeErrIdle(mbspComm *c, mbsErr local, int (*pending)(void)) {
  int relayed = 0;
  MPI_Request req;
  if (MPI_Ibarrier(c->comm, &req) != MPI_SUCCESS)
    return mbs_errSet(MBS_ERR_MPI, "MPI_Ibarrier failed while waiting");
  // sleeps from 50 us up to 2 ms: the waiting ranks wake ~500 times a second at most, and the
  // last one to arrive (rank 0 after its verb) waits at most one sleep of the others. The rank
  // that formats rank 0's output rows (fmtoff.h) serves them here, from 50 us again after each
  // row up to 400 us (a row every ~0.5 ms in the main job; a 50 us poll throughout woke it 20000
  // times a second, each wake-up taking rank 0's core when no other is free)
  for (int done = 0, us = 50, cap = mbsp_fmtServing() ? 400 : 2000;;) {
    if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      return mbs_errSet(MBS_ERR_MPI, "MPI_Test failed while waiting");
    if (done) break;
    int served = mbsp_fmtServe(); // then no sleep: the next row may be there already
    int sig = pending && !relayed && c->rank != 0 && mbsp_relay != MPI_COMM_NULL ? pending() : 0;
    if (sig) { // a signal for the run: rank 0 takes it as its own
      relayed = 1;
      MPI_Send(&sig, 1, MPI_INT, 0, MBSP_RELAY_TAG, mbsp_relay);
    }
    struct timespec ts = {0, 1000L * us};
    if (!served) nanosleep(&ts, NULL);
    us = served ? 50 : us < cap ? 2 * us : cap;
  }
  return mbsp_agreeErr(c, local);
}

mbsErr mbsp_bcastFile(mbspComm *c, const char *path, char **text, size_t *len) {
  long n = -1;
  char *buf = NULL;
  mbsErr e = MBS_OK;
  *text = NULL;
  if (c->rank == 0) { // regular files only, checked without blocking (mbs_textfile.h)
    size_t sz = 0;
    e = mbs_fileRead(path, &buf, &sz);
    if (!e && sz > (size_t)LONG_MAX - 1)
      e = mbs_errSet(MBS_ERR_INPUT, "%s:0: file too large", path);
    n = e ? -1 : (long)sz;
  }
  e = mbsp_agreeErr(c, e);
  if (e) {
    free(buf);
    return e;
  }
  MBS_CALL_MPI(MPI_Bcast(&n, 1, MPI_LONG, 0, c->comm));
  if (c->rank != 0) {
    buf = malloc((size_t)n + 1);
    e = buf ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  }
  e = mbsp_agreeErr(c, e);
  if (e) {
    free(buf);
    return e;
  }
  for (long off = 0; off < n;) { // chunks below INT_MAX
    int chunk = (n - off) > (1L << 30) ? (1 << 30) : (int)(n - off);
    MBS_CALL_MPI(MPI_Bcast(buf + off, chunk, MPI_CHAR, 0, c->comm));
    off += chunk;
  }
  buf[n] = 0;
  *text = buf;
  if (len) *len = (size_t)n;
  return MBS_OK;
}

mbsErr mbsp_bcastBytes(mbspComm *c, void *buf, size_t n, int root) {
  for (size_t off = 0; off < n;) {
    int chunk = (n - off) > ((size_t)1 << 30) ? (1 << 30) : (int)(n - off);
    MBS_CALL_MPI(MPI_Bcast((char *)buf + off, chunk, MPI_BYTE, root, c->comm));
    off += (size_t)chunk;
  }
  return MBS_OK;
}

mbsErr mbsp_allreduceSum(mbspComm *c, double *buf, int n) {
  if (c->size > 1) MBS_CALL_MPI(MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, MPI_SUM, c->comm));
  return MBS_OK;
}
mbsErr mbsp_allreduceMax(mbspComm *c, double *buf, int n) {
  if (c->size > 1) MBS_CALL_MPI(MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, MPI_MAX, c->comm));
  return MBS_OK;
}
mbsErr mbsp_allreduceMin(mbspComm *c, double *buf, int n) {
  if (c->size > 1) MBS_CALL_MPI(MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, MPI_MIN, c->comm));
  return MBS_OK;
}
mbsErr mbsp_allreduceSumLong(mbspComm *c, long *buf, int n) {
  if (c->size > 1) MBS_CALL_MPI(MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_LONG, MPI_SUM, c->comm));
  return MBS_OK;
}
mbsErr mbsp_gather(mbspComm *c, const double *in, int n, double *out) {
  MBS_CALL_MPI(MPI_Gather(in, n, MPI_DOUBLE, out, n, MPI_DOUBLE, 0, c->comm));
  return MBS_OK;
}
mbsErr mbsp_gatherv(mbspComm *c, const double *in, int n, double *out, const int *counts,
                    const int *displs) {
  MBS_CALL_MPI(MPI_Gatherv(in, n, MPI_DOUBLE, out, counts, displs, MPI_DOUBLE, 0, c->comm));
  return MBS_OK;
}
mbsErr mbsp_gatherBytes(mbspComm *c, const void *in, int n, void *out) {
  MBS_CALL_MPI(MPI_Gather(in, n, MPI_BYTE, out, n, MPI_BYTE, 0, c->comm));
  return MBS_OK;
}
mbsErr mbsp_localRank(mbspComm *c, int *local_rank, int *nlocal) {
  MPI_Comm node;
  MBS_CALL_MPI(MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node));
  MPI_Comm_rank(node, local_rank);
  MPI_Comm_size(node, nlocal);
  MPI_Comm_free(&node);
  return MBS_OK;
}
mbsErr mbsp_localOverlap(mbspComm *c, const unsigned char *mask, int nbytes, int *count) {
  MPI_Comm node;
  int nl = 1, err = 0;
  *count = 0;
  MBS_CALL_MPI(MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node));
  MPI_Comm_size(node, &nl);
  unsigned char *all = malloc((size_t)nl * (size_t)nbytes);
  // the allgather is collective: every rank of the node must know that every one can take part
  int nomem = !all, anynomem = 1;
  if (MPI_Allreduce(&nomem, &anynomem, 1, MPI_INT, MPI_MAX, node) != MPI_SUCCESS) anynomem = 1;
  if (anynomem) {
    free(all);
    MPI_Comm_free(&node);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (mbsp_localOverlap)");
  }
  if (MPI_Allgather(mask, nbytes, MPI_BYTE, all, nbytes, MPI_BYTE, node) != MPI_SUCCESS) err = 1;
  for (int r = 0; !err && r < nl; r++) {
    int common = 0;
    for (int k = 0; k < nbytes && !common; k++)
      common = (all[(size_t)r * nbytes + k] & mask[k]) != 0;
    *count += common;
  }
  free(all);
  MPI_Comm_free(&node);
  if (err)
    return mbs_errSet(MBS_ERR_MPI, "mbsp_localOverlap: allgather of %d bytes failed", nbytes);
  return MBS_OK;
}
// user-defined operator: MPI calls it as f(in, inout) with in from the lower ranks
static void (*mbsp_scan_combine)(const double *a, double *b) = NULL;
static int mbsp_scan_n = 0;
static void mbsp_scanOp(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  for (int k = 0; k < *len; k++)
    mbsp_scan_combine((const double *)in + (size_t)k * mbsp_scan_n,
                      (double *)inout + (size_t)k * mbsp_scan_n);
}

// MPI_Exscan with the user-defined operator (kept for comparison: MBSPAR_EXSCAN=mpi; SimGrid's
// implementation is linear in P)
static mbsErr mbsp_exscanMpi(mbspComm *c, const double *mine, double *prefix, int n,
                             void (*combine)(const double *a, double *b)) {
  MPI_Datatype rec;
  MPI_Op op;
  MBS_CALL_MPI(MPI_Type_contiguous(n, MPI_DOUBLE, &rec));
  MBS_CALL_MPI(MPI_Type_commit(&rec));
  MBS_CALL_MPI(MPI_Op_create(mbsp_scanOp, 0, &op)); // not commutative
  mbsp_scan_combine = combine, mbsp_scan_n = n;
  int rc = MPI_Exscan(mine, prefix, 1, rec, op, c->comm);
  MPI_Op_free(&op);
  MPI_Type_free(&rec);
  if (rc != MPI_SUCCESS) return mbs_errSet(MBS_ERR_MPI, "MPI_Exscan failed");
  return MBS_OK;
}

// Radix-k scan (k = c->radix; k = 2 is recursive doubling, Hillis-Steele): in round i (d = k^i)
// rank r holds the combination of the ranks [r - d + 1, r] (its window); it receives the windows
// of r - d, r - 2d, ..., r - (k - 1)d and sends its own to r + d, ..., r + (k - 1)d, all posted
// together; the received windows, joined in rank order, then join in front of both its
// exclusive and its inclusive value. ceil(log_k P) rounds of up to k - 1 messages each way (every
// pair of ranks exchanges at most once: the distances j k^i are distinct), whatever the MPI
// library's Exscan does. Each round: post its messages, wait, combine.
#define MBSP_SCAN_MAX   64
#define MBSP_TAG_EXSCAN 31
mbsErr mbsp_exscan(mbspComm *c, const double *mine, double *prefix, int n,
                   void (*combine)(const double *a, double *b), int *valid) {
  const char *mode = getenv("MBSPAR_EXSCAN");
  *valid = c->rank > 0;
  if (mode && strcmp(mode, "mpi") == 0) return mbsp_exscanMpi(c, mine, prefix, n, combine);
  if (n > MBSP_SCAN_MAX) return mbs_errSet(MBS_ERR_INTERNAL, "exscan record of %d doubles", n);
  const int k = c->radix >= 2 ? c->radix : 2;
  double inc[MBSP_SCAN_MAX], out[MBSP_SCAN_MAX], in[(MBS_SCAN_RADIX_MAX - 1) * MBSP_SCAN_MAX];
  memcpy(inc, mine, sizeof(double) * (size_t)n);
  int have = 0;
  for (int d = 1; d < c->size; d *= k) {
    MPI_Request rq[2 * (MBS_SCAN_RADIX_MAX - 1)];
    int nr = 0, nin = 0;
    memcpy(out, inc, sizeof(double) * (size_t)n);
    // window j - 1 from r - j d; ours to r + j d (one buffer, read by every send)
    for (int j = 1; j < k && c->rank - j * d >= 0; j++, nin++)
      MBS_CALL_MPI(MPI_Irecv(in + (size_t)n * (j - 1), n, MPI_DOUBLE, c->rank - j * d,
                             MBSP_TAG_EXSCAN, c->comm, &rq[nr++]));
    for (int j = 1; j < k && c->rank + j * d < c->size; j++)
      MBS_CALL_MPI(
          MPI_Isend(out, n, MPI_DOUBLE, c->rank + j * d, MBSP_TAG_EXSCAN, c->comm, &rq[nr++]));
    if (c->idle) c->idle(c->idle_ctx); // the owner's work while the round's messages travel
    MBS_CALL_MPI(MPI_Waitall(nr, rq, MPI_STATUSES_IGNORE));
    if (nin > 0) {
      // the windows in rank order: in_0 <- in_j then in_0 (j = 1 .. nin - 1, the lower ranks)
      for (int j = 1; j < nin; j++) combine(in + (size_t)n * j, in);
      if (have) {
        combine(in, prefix); // prefix <- in then prefix
      } else {
        memcpy(prefix, in, sizeof(double) * (size_t)n);
        have = 1;
      }
      combine(in, inc);
    }
  }
  return MBS_OK;
}

int mbsp_scanRadix(const mbspComm *c) {
  return c->radix;
}

mbsErr mbsp_barrier(mbspComm *c) {
  MBS_CALL_MPI(MPI_Barrier(c->comm));
  return MBS_OK;
}
double mbsp_wtime(void) {
  MBSP_SINK();
  double t = MPI_Wtime();
  MBSP_RESUME();
  return t;
}
void mbsp_abort(mbspComm *c, int code) {
  MPI_Abort(c ? c->comm : MPI_COMM_WORLD, code);
}

// ---------------------------------------------------------------- halo exchange

struct mbspHalo {
  mbspComm *comm;
  int nnbr, mode;
  int *nbr, *scnt, *rcnt, *sdispl, *rdispl;
  double *sbuf, *rbuf;
  MPI_Request *req; // active (nonzero) receives [0, nr) then sends [nr, nr + ns), persistent
  int nr, ns;
  int *rk, *sreq; // neighbour of each receive request; send request of each neighbour (-1)
  MPI_Comm graph; // distributed-graph communicator (neighbor mode)
};

mbsErr mbsp_haloCreate(mbspComm *c, int nnbr, const int *nbr, const int *sendcnt,
                       const int *recvcnt, int mode, mbspHalo **out) {
  mbspHalo *h = calloc(1, sizeof *h);
  int n = nnbr > 0 ? nnbr : 1;
  *out = NULL;
  if (!h) return mbs_errSet(MBS_ERR_NOMEM, "out of memory (halo)");
  h->comm = c, h->nnbr = nnbr, h->mode = mode, h->graph = MPI_COMM_NULL;
  h->nbr = calloc((size_t)n, sizeof(int));
  h->scnt = calloc((size_t)n, sizeof(int));
  h->rcnt = calloc((size_t)n, sizeof(int));
  h->sdispl = calloc((size_t)n + 1, sizeof(int));
  h->rdispl = calloc((size_t)n + 1, sizeof(int));
  h->req = calloc(2 * (size_t)n, sizeof(MPI_Request));
  h->rk = calloc((size_t)n, sizeof(int));
  h->sreq = calloc((size_t)n, sizeof(int));
  if (!h->nbr || !h->scnt || !h->rcnt || !h->sdispl || !h->rdispl || !h->req || !h->rk ||
      !h->sreq) {
    mbsp_haloDestroy(&h);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (halo)");
  }
  for (int k = 0; k < nnbr; k++) {
    h->nbr[k] = nbr[k], h->scnt[k] = sendcnt[k], h->rcnt[k] = recvcnt[k];
    h->sdispl[k + 1] = h->sdispl[k] + sendcnt[k];
    h->rdispl[k + 1] = h->rdispl[k] + recvcnt[k];
  }
  h->sbuf = calloc((size_t)h->sdispl[nnbr] + 1, sizeof(double));
  h->rbuf = calloc((size_t)h->rdispl[nnbr] + 1, sizeof(double));
  if (!h->sbuf || !h->rbuf) {
    mbsp_haloDestroy(&h);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (halo buffers)");
  }
  // only nonzero directions get a request, so phased (pipelined) use cannot wait on a partner
  // that has nothing to send yet
  for (int k = 0; k < nnbr; k++)
    if (h->rcnt[k] > 0) {
      h->rk[h->nr] = k;
      MBS_CALL_MPI(MPI_Recv_init(h->rbuf + h->rdispl[k], h->rcnt[k], MPI_DOUBLE, h->nbr[k], 77,
                                 c->comm, &h->req[h->nr++]));
    }
  for (int k = 0; k < nnbr; k++) {
    h->sreq[k] = -1;
    if (h->scnt[k] > 0) {
      h->sreq[k] = h->nr + h->ns;
      MBS_CALL_MPI(MPI_Send_init(h->sbuf + h->sdispl[k], h->scnt[k], MPI_DOUBLE, h->nbr[k], 77,
                                 c->comm, &h->req[h->nr + h->ns++]));
    }
  }
  if (mode == MBSP_HALO_NEIGHBOR) {
    // the same neighbour list both ways (a symmetric graph); GCC misreads MPI_UNWEIGHTED
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif
    MBS_CALL_MPI(MPI_Dist_graph_create_adjacent(c->comm, nnbr, h->nbr, MPI_UNWEIGHTED, nnbr, h->nbr,
                                                MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &h->graph));
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  }
  *out = h;
  return MBS_OK;
}

double *mbsp_haloSendBuf(mbspHalo *h, int k) {
  return h->sbuf + h->sdispl[k];
}
double *mbsp_haloRecvBuf(mbspHalo *h, int k) {
  return h->rbuf + h->rdispl[k];
}

mbsErr mbsp_haloExchange(mbspHalo *h) {
  if (h->nnbr == 0) return MBS_OK;
  if (h->mode == MBSP_HALO_NEIGHBOR) {
    MBS_CALL_MPI(MPI_Neighbor_alltoallv(h->sbuf, h->scnt, h->sdispl, MPI_DOUBLE, h->rbuf, h->rcnt,
                                        h->rdispl, MPI_DOUBLE, h->graph));
    return MBS_OK;
  }
  if (h->nr + h->ns == 0) return MBS_OK;
  MBS_CALL_MPI(MPI_Startall(h->nr + h->ns, h->req));
  MBS_CALL_MPI(MPI_Waitall(h->nr + h->ns, h->req, MPI_STATUSES_IGNORE));
  return MBS_OK;
}

mbsErr mbsp_haloRecvAll(mbspHalo *h) {
  if (h->nr == 0) return MBS_OK;
  MBS_CALL_MPI(MPI_Startall(h->nr, h->req));
  MBS_CALL_MPI(MPI_Waitall(h->nr, h->req, MPI_STATUSES_IGNORE));
  return MBS_OK;
}

mbsErr mbsp_haloSendAll(mbspHalo *h) {
  if (h->ns == 0) return MBS_OK;
  MBS_CALL_MPI(MPI_Startall(h->ns, h->req + h->nr));
  MBS_CALL_MPI(MPI_Waitall(h->ns, h->req + h->nr, MPI_STATUSES_IGNORE));
  return MBS_OK;
}

mbsErr mbsp_haloStartRecvs(mbspHalo *h) {
  if (h->nr > 0) MBS_CALL_MPI(MPI_Startall(h->nr, h->req));
  return MBS_OK;
}

mbsErr mbsp_haloWaitAnyRecv(mbspHalo *h, int *k) {
  int idx = MPI_UNDEFINED;
  *k = -1;
  if (h->nr == 0) return MBS_OK;
  MBS_CALL_MPI(MPI_Waitany(h->nr, h->req, &idx, MPI_STATUS_IGNORE));
  if (idx != MPI_UNDEFINED) *k = h->rk[idx];
  return MBS_OK;
}

mbsErr mbsp_haloStartSend(mbspHalo *h, int k) {
  if (k >= 0 && k < h->nnbr && h->sreq[k] >= 0) MBS_CALL_MPI(MPI_Start(&h->req[h->sreq[k]]));
  return MBS_OK;
}

mbsErr mbsp_haloWaitSends(mbspHalo *h) {
  if (h->ns > 0) MBS_CALL_MPI(MPI_Waitall(h->ns, h->req + h->nr, MPI_STATUSES_IGNORE));
  return MBS_OK;
}

int mbsp_haloRecvs(const mbspHalo *h, int k) {
  return k >= 0 && k < h->nnbr && h->rcnt[k] > 0;
}

void mbsp_haloDestroy(mbspHalo **ph) {
  if (!ph || !*ph) return;
  mbspHalo *h = *ph;
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin && h->req)
    for (int k = 0; k < h->nr + h->ns; k++)
      if (h->req[k] != MPI_REQUEST_NULL) MPI_Request_free(&h->req[k]);
  if (!fin && h->graph != MPI_COMM_NULL) MPI_Comm_free(&h->graph);
  free(h->nbr), free(h->scnt), free(h->rcnt), free(h->sdispl), free(h->rdispl);
  free(h->sbuf), free(h->rbuf), free(h->req), free(h->rk), free(h->sreq);
  free(h);
  *ph = NULL;
}

mbsErr mbsp_stats(mbspComm *c, const double *v, int n, double *out) {
  // out[5k..5k+4] = min, avg, max, rank of min, rank of max
  struct {
    double val;
    int rank;
  } *in = malloc(sizeof(*in) * (size_t)(n > 0 ? n : 1)),
    *mn = malloc(sizeof(*in) * (size_t)(n > 0 ? n : 1)),
    *mx = malloc(sizeof(*in) * (size_t)(n > 0 ? n : 1));
  double *sum = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  // the reductions below are collective: every rank must know that every rank can take part
  mbsErr e = mbsp_agreeErr(
      c, !in || !mn || !mx || !sum ? mbs_errSet(MBS_ERR_NOMEM, "out of memory (stats)") : MBS_OK);
  if (e) {
    free(in), free(mn), free(mx), free(sum);
    return e;
  }
  for (int k = 0; k < n; k++) in[k].val = v[k], in[k].rank = c->rank, sum[k] = v[k];
  int rc = MPI_Allreduce(in, mn, n, MPI_DOUBLE_INT, MPI_MINLOC, c->comm);
  if (rc == MPI_SUCCESS) rc = MPI_Allreduce(in, mx, n, MPI_DOUBLE_INT, MPI_MAXLOC, c->comm);
  if (rc == MPI_SUCCESS) rc = MPI_Allreduce(MPI_IN_PLACE, sum, n, MPI_DOUBLE, MPI_SUM, c->comm);
  for (int k = 0; k < n && rc == MPI_SUCCESS; k++) {
    out[5 * k] = mn[k].val;
    out[5 * k + 1] = sum[k] / c->size;
    out[5 * k + 2] = mx[k].val;
    out[5 * k + 3] = mn[k].rank;
    out[5 * k + 4] = mx[k].rank;
  }
  free(in), free(mn), free(mx), free(sum);
  if (rc != MPI_SUCCESS) return mbs_errSet(MBS_ERR_MPI, "MPI_Allreduce failed (stats)");
  return MBS_OK;
}

MPI_Comm mbsp_commRaw(const mbspComm *c) {
  return c->comm;
}

// ---------------------------------------------------------------- point-to-point batches

struct mbspMsg {
  mbspComm *comm;
  int cap, n;
  MPI_Request *req;
};

mbsErr mbsp_msgCreate(mbspComm *c, int cap, mbspMsg **out) {
  *out = NULL;
  mbspMsg *g = calloc(1, sizeof *g);
  if (!g) return mbs_errSet(MBS_ERR_NOMEM, "out of memory (messages)");
  g->comm = c, g->cap = cap > 0 ? cap : 1;
  g->req = calloc((size_t)g->cap, sizeof(MPI_Request));
  if (!g->req) {
    free(g);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (messages)");
  }
  for (int k = 0; k < g->cap; k++) g->req[k] = MPI_REQUEST_NULL;
  *out = g;
  return MBS_OK;
}

void mbsp_msgDestroy(mbspMsg **pg) {
  if (!pg || !*pg) return;
  mbspMsg *g = *pg;
  for (int k = 0; k < g->n; k++)
    if (g->req[k] != MPI_REQUEST_NULL) {
      MPI_Cancel(&g->req[k]);
      MPI_Request_free(&g->req[k]);
    }
  free(g->req);
  free(g);
  *pg = NULL;
}

mbsErr mbsp_msgIrecv(mbspMsg *g, double *buf, int n, int src, int tag, int *id) {
  if (g->n >= g->cap) return mbs_errSet(MBS_ERR_INTERNAL, "message batch full (%d)", g->cap);
  MBS_CALL_MPI(MPI_Irecv(buf, n, MPI_DOUBLE, src, tag, g->comm->comm, &g->req[g->n]));
  if (id) *id = g->n;
  g->n++;
  return MBS_OK;
}

mbsErr mbsp_msgIsend(mbspMsg *g, const double *buf, int n, int dst, int tag, int *id) {
  if (g->n >= g->cap) return mbs_errSet(MBS_ERR_INTERNAL, "message batch full (%d)", g->cap);
  MBS_CALL_MPI(MPI_Isend(buf, n, MPI_DOUBLE, dst, tag, g->comm->comm, &g->req[g->n]));
  if (id) *id = g->n;
  g->n++;
  return MBS_OK;
}

mbsErr mbsp_msgWait(mbspMsg *g, int id) {
  MBS_CALL_MPI(MPI_Wait(&g->req[id], MPI_STATUS_IGNORE));
  return MBS_OK;
}

mbsErr mbsp_msgWaitAll(mbspMsg *g) {
  if (g->n > 0) MBS_CALL_MPI(MPI_Waitall(g->n, g->req, MPI_STATUSES_IGNORE));
  g->n = 0;
  return MBS_OK;
}

mbsErr mbsp_msgWaitAny(mbspMsg *g, int lo, int hi, int *id) {
  int idx = MPI_UNDEFINED;
  *id = -1;
  if (hi > g->n) hi = g->n;
  if (lo < 0) lo = 0;
  if (hi <= lo) return MBS_OK;
  MBS_CALL_MPI(MPI_Waitany(hi - lo, g->req + lo, &idx, MPI_STATUS_IGNORE));
  if (idx != MPI_UNDEFINED) *id = lo + idx;
  return MBS_OK;
}

mbsErr mbsp_sendrecv(mbspComm *c, const double *sbuf, int ns, int dst, double *rbuf, int nr,
                     int src, int tag) {
  MBS_CALL_MPI(MPI_Sendrecv(sbuf, ns, MPI_DOUBLE, dst >= 0 ? dst : MPI_PROC_NULL, tag, rbuf, nr,
                            MPI_DOUBLE, src >= 0 ? src : MPI_PROC_NULL, tag, c->comm,
                            MPI_STATUS_IGNORE));
  return MBS_OK;
}
