/// \file loops_local.h
/// Where a model with closed loops is built at several ranks (docs/loops.md 9, docs/scaling.md
/// "Memory"): distributed (each rank its bodies, the bodies of every loop and every loop) where
/// `accel` with solver.method = schur can run on it, else whole on every rank.
#ifndef MBSP_LOOPS_LOCAL_H
#define MBSP_LOOPS_LOCAL_H

#include "cli.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_engine.h"
#include "mbspar/mbs_model.h"
#include "mbspar/mbs_parallel.h"

/// How a loop model that could be built distributed (several ranks, a verb and a method with
/// distributed-memory models, no spring-dampers, no flexible bodies) is built.
typedef enum {
  MBSP_LOOPS_WHOLE = 0, ///< replicated: every rank the whole model (assembled q0)
  MBSP_LOOPS_FORCED,    ///< MBSPAR_LOOPS_LOCAL=1: distributed whatever the verb (others refused)
  MBSP_LOOPS_TRY        ///< distributed if q0 and qd0 close the loops (mbsp_loopsLocalClosed)
} mbspLoopsPlan;

/// The plan, from the verb, the config and MBSPAR_LOOPS_LOCAL ("0": whole, "1": forced, unset or
/// anything else: TRY for `accel` with solver.method = schur, no drives and no URDF robot, else
/// whole). The same on every rank (the same config and environment). Local.
mbspLoopsPlan mbsp_loopsLocalPlan(const mbsCli *cli, const mbsConfig *cfg);

/// main.c before the verb: 1 when the model was built distributed on the plan TRY (the verb then
/// checks q0 and qd0 with mbsp_loopsLocalClosed before its first evaluation), 0 otherwise.
void mbsp_loopsLocalTry(int on);
int mbsp_loopsLocalTrying(void);

/// On a distributed loop model: do q0 and qd0 close the loops? The kinematics of the verb's engine
/// \p eng at s (the loop bodies' poses gathered, as an evaluation gathers them): max |c| within
/// solver.closure_tol (what the replicated model's assembly leaves untouched) and max |dc/dt|
/// within 1e-12 of the loop bodies' largest speed (at least 1: the rate projection of the
/// replicated model then changes qd0 by rounding only). The same answer on every rank. When they
/// do not, the verb returns mbsp_loopsLocalReject() and main.c builds the model whole and runs
/// the verb again. Collective; errors agreed.
mbsErr mbsp_loopsLocalClosed(mbspComm *comm, const mbsModel *m, mbspEngine *eng, mbsState *s,
                             int *closed);
/// Remember that the distributed model was rejected; returns MBS_ERR_UNSUPPORTED. Local.
mbsErr mbsp_loopsLocalReject(void);
/// 1 after mbsp_loopsLocalReject (main.c: build whole and run the verb again). Local.
int mbsp_loopsLocalRejected(void);

/// MBSPAR_LOOPS_LOCAL=1 with a verb or method that cannot run on the distributed loop model:
/// refused (exit 8) with the build's peak memory over the ranks. Collective.
mbsErr mbsp_loopsLocalStop(mbspComm *comm, const mbsModel *m, const char *verb);

#endif
