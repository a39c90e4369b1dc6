/// \file loops_local.c
/// Where a model with closed loops is built at several ranks (docs/loops.md 9, docs/scaling.md
/// "Memory"). The distributed build (mbs_configBuildLocal: each rank its bodies with their
/// remote parents and children, the bodies of every loop and every loop) serves `accel` with
/// solver.method = schur, whose loop layer runs on it (the loop bodies' poses gathered by the
/// engine); it does not assemble q0 onto the loops nor project qd0 (both need the whole model).
/// So main.c builds a loop model distributed for `accel` with schur at two or more ranks; the verb
/// checks q0 and qd0 on its engine before the first evaluation (mbsp_loopsLocalClosed, one
/// kinematics pass) and returns at once when they do not close the loops (the assembly would move
/// them); main.c then builds the model whole and runs the verb again: the replicated run of
/// before. (An engine of the check's own, created and freed in main.c, left up to 9 MiB more peak
/// memory on some ranks of the 2^16 ladder at 8 ranks: tried, not kept.) MBSPAR_LOOPS_LOCAL=0
/// builds every loop model whole, =1 distributed for every local verb and method (the others
/// refused, exit 8; q0 checked after the evaluation, exit 8 when open). The choice is the same on
/// every rank: the config, the environment and the gathered poses are.
#include "loops_local.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "mbspar/mbs_engine.h"
#include "mbspar/mbs_loops.h"
#include "mbspar/mbs_solvertype.h"
#include "mbspar/mbspar.h"

mbspLoopsPlan mbsp_loopsLocalPlan(const mbsCli *cli, const mbsConfig *cfg) {
  const char *ll = getenv("MBSPAR_LOOPS_LOCAL");
  if (ll && strcmp(ll, "1") == 0) return MBSP_LOOPS_FORCED;
  if (ll && strcmp(ll, "0") == 0) return MBSP_LOOPS_WHOLE;
  // accel with schur (its loop layer's separators or unit solves); drives are checked against
  // the whole model (main.c, mbs_configDrives) even where the verb ignores them: whole
  // (a URDF robot's parse is compacted after a distributed build: a second, whole build after a
  // rejected try could not use it)
  if (cli->verb->run != mbsp_verbAccel || strcmp(mbs_solverName(cfg->opt.solver), "schur") ||
      cfg->ndrive || cfg->urdf)
    return MBSP_LOOPS_WHOLE;
  return MBSP_LOOPS_TRY;
}

static int mbsp_loops_try = 0, mbsp_loops_rejected = 0;

void mbsp_loopsLocalTry(int on) {
  mbsp_loops_try = on;
  mbsp_loops_rejected = 0;
}
int mbsp_loopsLocalTrying(void) {
  return mbsp_loops_try;
}
mbsErr mbsp_loopsLocalReject(void) {
  mbsp_loops_rejected = 1;
  return mbs_errSet(MBS_ERR_UNSUPPORTED, "the loop model's q0 or qd0 is off the loops: the "
                                         "distributed build cannot assemble it (built whole)");
}
int mbsp_loopsLocalRejected(void) {
  return mbsp_loops_rejected;
}

mbsErr mbsp_loopsLocalClosed(mbspComm *comm, const mbsModel *m, mbspEngine *eng, mbsState *s,
                             int *closed) {
  *closed = 0;
  MBS_CALL(mbsp_agreeErr(comm, mbsp_engineLoopPoses(eng, s)));
  const mbsWork *w = mbsp_engineWork(eng);
  mbsReal ep = 0, er = 0, ev = 0, vmax = 1;
  mbs_loopViolation(m, w, &ep, &er, &ev);
  for (int k = 0; k < 2 * m->nloop; k++) {
    int b = m->loop_body[k];
    for (int i = 0; b >= 0 && i < 6; i++) vmax = fmax(vmax, fabs(w->cvel[6 * b + i]));
  }
  // every rank holds the same gathered poses; agree anyway (a NaN fails everywhere)
  double ok = fmax(ep, er) <= m->opt.closure_tol && ev <= 1e-12 * vmax ? 1 : 0;
  MBS_CALL(mbsp_allreduceMin(comm, &ok, 1));
  *closed = ok > 0;
  return MBS_OK;
}

mbsErr mbsp_loopsLocalStop(mbspComm *comm, const mbsModel *m, const char *verb) {
  struct rusage ru;
  double v[2] = {getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss / 1024.0 : -1,
                 (double)m->nbody},
         st[10];
  MBS_CALL(mbsp_stats(comm, v, 2, st));
  return mbs_errSet(MBS_ERR_UNSUPPORTED,
                    "MBSPAR_LOOPS_LOCAL: the distributed-memory model with %d loops is built "
                    "(bodies held per rank %.0f to %.0f; peak resident memory after the build "
                    "%.1f to %.1f MiB, largest on rank %.0f); the loop layer runs on it for "
                    "`accel` with solver.method = schur only, not `%s` with %s "
                    "(docs/scaling.md \"Memory\")",
                    m->nloop, st[5], st[7], st[0], st[2], st[4], verb,
                    mbs_solverName(m->opt.solver));
}
