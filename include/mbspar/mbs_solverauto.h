/// \file mbs_solverauto.h
/// solver.method = "auto" (docs/model.md "Choosing the method"): the method the critical-path
/// analyser's cost model (mbs_critpath.h) predicts fastest for a model on a job of R ranks with T
/// OpenMP threads each. The serial core's part (no MPI): the predictions and the choice;
/// parallel/solver_auto.c gathers the job's ranks, threads and cores and broadcasts the choice.
#ifndef MBS_SOLVERAUTO_H
#define MBS_SOLVERAUTO_H

#include "mbs_config.h"
#include "mbs_error.h"
#include "mbs_model.h"

/// The job and the cost model the prediction is for.
typedef struct {
  int ranks;        ///< MPI ranks
  int threads;      ///< OpenMP threads per rank
  double slow;      ///< >= 1: compute slowdown of ranks (x threads) outnumbering their cores
  double flop_time; ///< seconds per flop
  double latency;   ///< message latency [s] between ranks on their own cores
  double bandwidth; ///< bytes/s
  double slice;     ///< latency [s] of a message to a rank that shares its core (slow > 1)
  double margin;    ///< a distributed method is chosen only if predicted this factor faster
} mbsAutoJob;

/// This machine's calibrated constants (docs/model.md: measured 2026-11-28 and earlier with
/// `mbspar cpa --calibrate`), one rank, one thread.
void mbs_autoDefaults(mbsAutoJob *j);

/// Predict the seconds per evaluation of every candidate method (the serial baselines aba, and
/// crba on models of at most 64 bodies; direct at one rank; schur, the exact distributed method,
/// on R x T processors) and choose: the fastest serial method unless a distributed one is
/// predicted faster by the factor j->margin. Iterative methods are not candidates (their cost
/// depends on an iteration count only a solve measures). Fills out->ncand, cand, pred and returns
/// the choice in \p method. Local.
/// \return MBS_OK; MBS_ERR_NOMEM; errors of mbs_cpaBuild.
mbsErr mbs_autoPredict(const mbsModel *m, const mbsAutoJob *j, mbsSolverAuto *out, int *method);

#endif
