/// \file solver_auto.c
/// solver.method = "auto": the cost model's predictions and the choice (mbs_solverauto.h,
/// docs/model.md "Choosing the method"). The graphs are those of `mbspar cpa` (src/critpath.c)
/// through the solver table's rows; nothing here names a method but through the table's flags.
#include <math.h>
#include <string.h>
#include "mbspar/mbs_critpath.h"
#include "mbspar/mbs_solverauto.h"
#include "mbspar/mbs_solvertype.h"

void mbs_autoDefaults(mbsAutoJob *j) {
  memset(j, 0, sizeof *j);
  j->ranks = j->threads = 1;
  j->slow = 1;
  // docs/model.md "Choosing the method": cpa --calibrate on this machine (2 cores). ABA on the
  // 256-link chain: 6.4e-10 and 6.9e-10 s/flop at a load of ~9 (2026-11-28), 2.8-3.3e-10 s/flop
  // (kinematics) at a load of ~3 (docs/cpa.md): 3e-10 for a quiet machine
  j->flop_time = 3e-10;
  // mpirun -n 2 cpa --calibrate (docs/cpa.md): alpha 7.7e-7 s, 2.5e10 B/s (shared memory)
  j->latency = 7.7e-7;
  j->bandwidth = 2.5e10;
  // mpirun -n 4 --oversubscribe cpa --calibrate on 2 cores (2026-11-28): halo latency 1.2e-4 s,
  // allreduce 5e-4 s: a message waits for the receiver's time slice
  j->slice = 1.2e-4;
  j->margin = 1.25;
}

// seconds of one evaluation of \p t's graph on \p procs processors (procs > 1: the graph over
// that many ranks); *ok = 0 if the method has no graph for this model or size
static mbsErr mbs_autoTime(const mbsModel *m, const mbsSolverType *t, int procs,
                           const mbsAutoJob *j, double *sec, int *ok) {
  mbsCpaOptions o;
  mbsCpaGraph *g = NULL;
  mbsCpaResult r;
  *ok = 0;
  mbs_cpaDefaults(&o);
  o.method = t->method;
  o.flop_time = j->flop_time;
  o.latency = j->latency;
  o.bandwidth = j->bandwidth;
  if (procs > 1) {
    o.ranks = procs;
    o.flop_time *= j->slow; // ranks sharing a core run at a fraction of its speed
    if (j->slow > 1 && o.latency < j->slice) o.latency = j->slice;
  }
  memset(&r, 0, sizeof r);
  mbsErr e = mbs_cpaBuild(m, &o, &g);
  if (e == MBS_ERR_UNSUPPORTED || e == MBS_ERR_INPUT) { // no graph here: not a candidate
    mbs_errClear();
    return MBS_OK;
  }
  MBS_CALL(e);
  e = mbs_cpaAnalyse(g, &r);
  if (!e && procs > 1) e = mbs_cpaSchedule(g, procs, sec);
  if (!e && procs <= 1) *sec = r.work;
  if (!e) *ok = 1;
  mbs_cpaResultFree(&r);
  mbs_cpaDestroy(&g);
  return e;
}

mbsErr mbs_autoPredict(const mbsModel *m, const mbsAutoJob *j, mbsSolverAuto *out, int *method) {
  double best_serial = INFINITY, best_dist = INFINITY;
  int serial = -1, dist = -1;
  out->ncand = 0;
  for (int id = 0; id < MBS_SOLVER_COUNT && out->ncand < MBS_AUTO_MAXCAND; id++) {
    const mbsSolverType *t = mbs_solverFind(id);
    if (!t || !t->cpa_build || t->iterative || t->petsc) continue;
    if (t->dense_inertia && m->nbody > 64) continue; // crba: O(n^2) graph and work
    // a semidefinite body (a thin rod): aba and crba only
    if (m->nsemidef_g && !t->semidef_bodies) continue;
    // direct (one rank): ~7x aba's work on a chain; its graph is not built for large models
    if (!t->baseline && !t->distributed && m->nbody > 512) continue;
    int is_serial = t->baseline || !t->distributed;
    if (!t->baseline && !t->distributed && j->ranks > 1) continue; // direct: one rank only
    // a distributed method on R ranks of T threads: the graph over R x T ranks (threads modelled
    // as ranks); one processor: its one-rank evaluation
    int procs = is_serial ? 1 : j->ranks * j->threads;
    if (procs > m->nbody) continue;
    double sec = 0;
    int ok = 0;
    MBS_CALL(mbs_autoTime(m, t, procs, j, &sec, &ok));
    if (!ok) continue;
    // the engine's agreements per evaluation (the finite check and the outcome): two allreduces
    if (!is_serial && j->ranks > 1)
      sec += 2 * ceil(log2((double)j->ranks)) *
             (j->slow > 1 && j->slice > j->latency ? j->slice : j->latency);
    out->cand[out->ncand] = id;
    out->pred[out->ncand++] = sec;
    if (is_serial && sec < best_serial) best_serial = sec, serial = id;
    if (!is_serial && sec < best_dist) best_dist = sec, dist = id;
  }
  MBS_CHECK(serial >= 0 || dist >= 0, MBS_ERR_INTERNAL,
            "solver.method = auto: no method has a cost model for this model");
  *method = serial;
  if (serial < 0 || (dist >= 0 && best_dist * j->margin < best_serial)) *method = dist;
  return MBS_OK;
}
