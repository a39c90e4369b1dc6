/// \file mbs_parallel.h
/// The parallel layer's public interface. MPI is hidden behind the opaque mbspComm; only
/// parallel/comm.c includes <mpi.h>. Each function says whether it is Collective (every rank of
/// the communicator must call it) or Local.
#ifndef MBS_PARALLEL_H
#define MBS_PARALLEL_H

#include <stddef.h>
#include "mbs_error.h"

typedef struct mbspComm mbspComm;

/// Initialise MPI (thread level FUNNELED, errors returned, not fatal) and wrap MPI_COMM_WORLD;
/// registers the parallel layer's solvers in the solver table (petsc). Collective.
mbsErr mbsp_init(int *argc, char ***argv, mbspComm **comm);
/// Finalize MPI and free the handle. Collective. NULL is a no-op.
void mbsp_finalize(mbspComm **comm);
/// A communicator holding this rank alone (MPI_COMM_SELF duplicated), for a serial run beside a
/// distributed one (the tests' rank-count comparisons). Local. Free it with mbsp_commFree.
mbsErr mbsp_commSelf(const mbspComm *comm, mbspComm **self);
/// mbsp_commSelf for rank 0 working alone while the other ranks of \p comm wait (solver.method =
/// auto, a serial method at several ranks): mbsp_jobSize gives \p comm's size. Local.
mbsErr mbsp_commIdle(const mbspComm *comm, mbspComm **self);
/// The ranks of \p comm with \p keep != 0 as a communicator of their own, in \p comm's order
/// (solver.method = auto, ranks sharing cores: the distributed method runs on one rank per core,
/// the others wait); *sub is NULL on the others. mbsp_jobSize gives \p comm's size. Collective.
mbsErr mbsp_commSplit(const mbspComm *comm, int keep, mbspComm **sub);
/// The ranks of the job: mbsp_size, or for mbsp_commIdle's and mbsp_commSplit's communicators the
/// whole job's. Local.
int mbsp_jobSize(const mbspComm *comm);
/// Free a communicator made by mbsp_commSelf. Local. NULL is a no-op.
void mbsp_commFree(mbspComm **comm);
/// Rank and size. Local.
int mbsp_rank(const mbspComm *comm);
int mbsp_size(const mbspComm *comm);
/// Thread level MPI provided (0 single .. 3 multiple). Local.
int mbsp_threadLevel(const mbspComm *comm);
/// MPI library version string. Local.
const char *mbsp_libraryVersion(void);

/// Agree on an error: returns the largest code over all ranks; if any rank failed, the message of
/// the lowest failing rank is copied into every rank's error message. Collective.
mbsErr mbsp_agreeErr(mbspComm *comm, mbsErr local);
/// mbsp_agreeErr in two halves: Start posts the first of the ceil(log_k P) radix-k dissemination
/// rounds (k = mbsp_scanRadix, k - 1 messages each way a round) that reduce the codes and returns
/// (an error only if MPI refuses it); End completes the rounds and returns what mbsp_agreeErr would
/// have (the message: the failing rank's as it was at Start). Work between the two that sends no
/// message overlaps the first round's latency (the others follow in End, as a non-blocking
/// collective's do without a progress thread). One open agreement per communicator. Collective.
mbsErr mbsp_agreeErrStart(mbspComm *comm, mbsErr local);
mbsErr mbsp_agreeErrEnd(mbspComm *comm);
/// mbsp_agreeErr after a wait that sleeps: a barrier polled with the process asleep in between
/// (50 us growing to 2 ms), so ranks waiting for another rank's long work leave it their cores (a
/// serial method at several ranks, solver.method = auto). Collective.
/// \p pending (may be NULL) is asked while waiting: a non-zero value (a signal number) is relayed
/// once to rank 0 (mbsp_relayPoll), so a signal delivered to a waiting rank still stops rank 0's
/// run (mbsp_relayBegin must have been called).
mbsErr mbsp_agreeErrIdle(mbspComm *comm, mbsErr local, int (*pending)(void));
/// The relay of signals from waiting ranks to rank 0: begin (collective over \p comm), poll (rank
/// 0: a relayed signal number or 0; Local, cheap: one probe), end (drains; collective).
mbsErr mbsp_relayBegin(mbspComm *comm);
int mbsp_relayPoll(void);
void mbsp_relayEnd(void);

/// Rank 0 reads the whole file \p path; its bytes (NUL-terminated, *text malloc'ed) reach every
/// rank. An unreadable file is an MBS_ERR_INPUT agreed by all ranks. Collective.
mbsErr mbsp_bcastFile(mbspComm *comm, const char *path, char **text, size_t *len);
/// Broadcast bytes from \p root. Collective.
mbsErr mbsp_bcastBytes(mbspComm *comm, void *buf, size_t n, int root);
/// In-place sum / max / min of n doubles over all ranks. Collective.
mbsErr mbsp_allreduceSum(mbspComm *comm, double *buf, int n);
mbsErr mbsp_allreduceMax(mbspComm *comm, double *buf, int n);
mbsErr mbsp_allreduceMin(mbspComm *comm, double *buf, int n);
/// Sum of n longs. Collective.
mbsErr mbsp_allreduceSumLong(mbspComm *comm, long *buf, int n);
/// Gather n doubles from every rank to rank 0 (out has size*n entries on rank 0). Collective.
mbsErr mbsp_gather(mbspComm *comm, const double *in, int n, double *out);
/// Gather variable-size blocks to rank 0 (counts/displs in doubles, used on rank 0). Collective.
mbsErr mbsp_gatherv(mbspComm *comm, const double *in, int n, double *out, const int *counts,
                    const int *displs);
/// Gather n bytes from every rank to rank 0 (out has size*n bytes on rank 0). Collective.
mbsErr mbsp_gatherBytes(mbspComm *comm, const void *in, int n, void *out);
/// Rank within the node (shared-memory domain) and the number of ranks on it. Collective.
mbsErr mbsp_localRank(mbspComm *comm, int *local_rank, int *nlocal);
/// Among the ranks on this node, the number whose masks (\p nbytes bytes each, e.g. cpu sets)
/// share a set bit with this rank's, this rank included unless its mask is empty. Collective.
mbsErr mbsp_localOverlap(mbspComm *comm, const unsigned char *mask, int nbytes, int *count);
/// Exclusive prefix scan of one record of \p n doubles per rank with a non-commutative
/// combination: rank r receives x_0 . x_1 . ... . x_{r-1} (rank 0 receives nothing; *valid = 0
/// there), where combine(a, b) overwrites b with "a then b" (a from the lower ranks). O(log P)
/// depth: a hand-written radix-k scan with point-to-point messages (k = mbsp_scanRadix; k = 2 is
/// recursive doubling), ceil(log_k P) rounds of up to k - 1 messages each way
/// (MBSPAR_EXSCAN=mpi uses MPI_Exscan instead; SimGrid's is linear in P). n <= 64. Collective.
mbsErr mbsp_exscan(mbspComm *comm, const double *mine, double *prefix, int n,
                   void (*combine)(const double *a, double *b), int *valid);
/// Local work for mbsp_exscan's waits: \p idle (NULL: none) is called with \p ctx in every
/// round after that round's messages are posted and before they are waited for (it posts no
/// message; it may complete receives posted before the scan; the engine's overlapped factor,
/// docs/formulation.md 4.4). Local.
void mbsp_commSetIdle(mbspComm *comm, void (*idle)(void *ctx), void *ctx);
/// The radix of the log-depth scans over the ranks (mbsp_exscan, schur's cut-joint scan):
/// mbs_scanRadix() as read at mbsp_init, the same on every rank. Local.
int mbsp_scanRadix(const mbspComm *comm);
/// Barrier. Collective.
mbsErr mbsp_barrier(mbspComm *comm);
/// Wall-clock seconds (MPI_Wtime). Local.
double mbsp_wtime(void);
/// Abort every rank with exit code \p code (last resort: after an error has been agreed, prefer
/// returning from main with that code). Local.
void mbsp_abort(mbspComm *comm, int code);

/// Nearest-neighbour halo exchange with fixed partners and sizes, set up once. Buffers belong to
/// the halo (one send and one receive segment per neighbour) so persistent requests can be
/// created at setup and a step never allocates.
typedef struct mbspHalo mbspHalo;
/// Halo implementations: persistent point-to-point requests, or a neighbourhood collective
/// (MPI_Neighbor_alltoallv) on a distributed-graph communicator.
typedef enum { MBSP_HALO_P2P = 0, MBSP_HALO_NEIGHBOR = 1 } mbspHaloMode;
/// Create a halo: \p nnbr neighbour ranks, doubles sent to / received from each. Collective.
mbsErr mbsp_haloCreate(mbspComm *comm, int nnbr, const int *nbr, const int *sendcnt,
                       const int *recvcnt, int mode, mbspHalo **h);
/// Send / receive segment of neighbour k. Local.
double *mbsp_haloSendBuf(mbspHalo *h, int k);
double *mbsp_haloRecvBuf(mbspHalo *h, int k);
/// Exchange all segments (start and wait). Collective over the neighbours.
mbsErr mbsp_haloExchange(mbspHalo *h);
/// Phased use for pipelines: receive all (blocking), later send all (blocking). A rank that only
/// receives from lower ranks and sends to higher ones cannot deadlock. Collective over neighbours.
mbsErr mbsp_haloRecvAll(mbspHalo *h);
mbsErr mbsp_haloSendAll(mbspHalo *h);
/// Data-flow use (pipelines down a rank tree, each segment sent as soon as its inputs are in):
/// start every receive; wait for any one of them (*k: its neighbour, -1 when none is left);
/// start the send of neighbour k's segment; wait for the started sends. Collective over the
/// neighbours (every started receive is matched by the partner's started send).
mbsErr mbsp_haloStartRecvs(mbspHalo *h);
mbsErr mbsp_haloWaitAnyRecv(mbspHalo *h, int *k);
mbsErr mbsp_haloStartSend(mbspHalo *h, int k);
mbsErr mbsp_haloWaitSends(mbspHalo *h);
/// Receives expected from neighbour k (its segment is nonzero). Local.
int mbsp_haloRecvs(const mbspHalo *h, int k);
/// Free and NULL. Local.
void mbsp_haloDestroy(mbspHalo **h);

/// A batch of nonblocking point-to-point messages of doubles (irregular patterns such as the
/// exact solver's cut-joint merge). Operations are numbered in the order they are posted; Wait
/// completes one, WaitAll completes all and empties the batch.
typedef struct mbspMsg mbspMsg;
/// Create a batch for at most \p cap pending operations. Local.
mbsErr mbsp_msgCreate(mbspComm *comm, int cap, mbspMsg **g);
/// Post a receive of \p n doubles from rank \p src / a send to \p dst, with \p tag; *id (may be
/// NULL) numbers the operation. Local (the matching operation is on the partner).
mbsErr mbsp_msgIrecv(mbspMsg *g, double *buf, int n, int src, int tag, int *id);
mbsErr mbsp_msgIsend(mbspMsg *g, const double *buf, int n, int dst, int tag, int *id);
/// Wait for operation \p id / for all. Local.
mbsErr mbsp_msgWait(mbspMsg *g, int id);
mbsErr mbsp_msgWaitAll(mbspMsg *g);
/// Wait for any one of the operations numbered [lo, hi) still pending; *id is the one that
/// completed, or -1 when none of them is pending. Local.
mbsErr mbsp_msgWaitAny(mbspMsg *g, int lo, int hi, int *id);
/// Free (cancels pending operations) and NULL. Local.
void mbsp_msgDestroy(mbspMsg **g);
/// Blocking send to \p dst and receive from \p src (either may be -1: none). Pairwise.
mbsErr mbsp_sendrecv(mbspComm *comm, const double *sbuf, int ns, int dst, double *rbuf, int nr,
                     int src, int tag);

/// Per-rank timer statistics: for each of n values, min, avg, max over ranks and the ranks of
/// min and max (out has 5*n entries on every rank). Collective.
mbsErr mbsp_stats(mbspComm *comm, const double *v, int n, double *out);

#endif
