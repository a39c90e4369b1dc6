/// \file solver_auto.h
/// solver.method = "auto" in the parallel layer (parallel/solver_auto.c, docs/model.md).
#ifndef MBSP_SOLVER_AUTO_H
#define MBSP_SOLVER_AUTO_H

#include <stddef.h>
#include "affinity.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_parallel.h"

/// Choose cfg->opt.solver when cfg->sauto.on (before the model is built): the job's ranks, the
/// threads of \p tc (this rank's choice, mbsp_threadsInit) and the cores they share, the cost
/// model's prediction on rank 0, the choice on every rank (cfg->sauto records it). \p dyn: the
/// verb is accel or run (a flexible model may then take the distributed elimination). Collective.
mbsErr mbsp_solverAuto(mbspComm *comm, mbsConfig *cfg, const mbspThreadChoice *tc, int dyn);

/// The summary's text "auto -> METHOD (model: aba 4.2e-05 s, schur ... per evaluation at R
/// ranks x T threads)" ("" when auto did not choose). Local.
void mbsp_solverAutoSummary(const mbsConfig *cfg, char *buf, size_t n);

#endif
