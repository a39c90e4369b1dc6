/// \file verb_accel.c
/// `mbspar accel`: one forward-dynamics evaluation at the initial state (--repeat K times it).
/// The serial baselines run on rank 0; the constraint-force methods on the distributed engine,
/// whose results are gathered to rank 0 with the timers of every rank (distributed-memory models:
/// streamed to rank 0 chunk by chunk while it writes, parallel/accel_stream.c). Collective.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "accel_stream.h"
#include "cli.h"
#include "guard.h"
#include "loops_local.h"
#include "natural_par.h"
#include "rankreport.h"
#include "mbspar/mbs_engine.h"
#include "mbspar/mbs_finite.h"
#include "mbspar/mbs_loops.h"
#include "mbspar/mbs_solvertype.h"
#include "mbspar/mbspar.h"
#include "spatial.h"
#include "body.h"

typedef struct {
  const mbsModel *m;
  const mbsWork *w;
  const mbsReal *qdd, *lam; // (nv, nlam of the global model)
  const mbsReal *wrench;    // (nbody x 6) world frame, global model
  int nbody, nv, nlam;      // sizes of the global model
  int local;                // 1: each rank held only its bodies (distributed-memory model)
  double time_per_eval;
  int repeat;
  double residual;
  double kin_residual; // distributed-memory models: the constraint residual (guard)
  const mbspGuard *guard;
  const mbspRankReport *rr;        // timers over the ranks, decomposition, affinity
  mbsSolveStat stat;               // the solver's statistics
  const mbsWork *wloop;            // the loop solve's workspace (the engine's on rank 0), else w
  const mbspNaturalParReport *nat; // natural over several ranks: what each rank did
  const mbsLoopSnap *lsnap;        // distributed loop models: the loop results (rank 0)
  mbspSlices *slices; // distributed-memory models: qdd, lam, wrench streamed from the ranks
} mbsAccelOut;

// a line on standard error at every tick while an iterative solve runs (rank 0): on the ladder
// jacobi runs for hours (docs/loops.md 8.4), which should not look like a hang
typedef struct {
  const mbsModel *m;
  mbspTicker tick;
} mbspAccelProgress;

static void mbsp_accelProgress(void *ctx, long it, double res) {
  mbspAccelProgress *p = ctx;
  double t;
  if (mbsp_tickerDue(&p->tick, &t))
    fprintf(stderr, "mbspar: accel: %s: %ld iterations, residual %.3g (tol %.3g), %.1f s\n",
            mbs_solverName(p->m->opt.solver), it, res, p->m->opt.tol, t);
}

// a solve that stopped without converging: the warning, and for the stationary methods at
// max_iter a hint (they need of the order of N^2 sweeps on long chains, docs/scaling.md)
static void mbsp_accelWarn(const mbsModel *m, int reason, int iterations, double residual) {
  int method = m->opt.solver;
  const mbsSolverType *t = mbs_solverCaps(method);
  fprintf(stderr,
          "mbspar: warning: %s stopped without converging (%s after %d iterations, residual "
          "%.3e > tol %g)\n",
          mbs_solverName(method), mbs_reasonName(reason), iterations, residual, m->opt.tol);
  if (reason == MBS_REASON_DIVERGED_STAGNATED)
    fprintf(stderr,
            "mbspar: hint: the residual b - A lambda, recomputed, stays near %.1e: the "
            "rounding floor of this system lies above solver.tol (docs/formulation.md)\n",
            residual);
  if (reason == MBS_REASON_DIVERGED_MAXIT && t->stationary)
    fprintf(stderr,
            "mbspar: hint: %s needs of the order of N^2 sweeps on long chains (docs/scaling.md); "
            "jcg, chebyshev, schur or petsc converge far faster%s\n",
            mbs_solverName(method), t->maxit_hint ? t->maxit_hint : "");
}

/// One forward-dynamics evaluation at the state \p s with the method m->opt.solver. Collective:
/// every rank calls it. The serial baselines (aba, crba) run on rank 0 only (the other ranks
/// return at once and wait at the caller's agreement); the constraint-force methods run on the
/// distributed engine \p eng. Writes (rank 0, serial) or the engine's workspace (distributed).
static mbsErr accel_compute(mbspComm *comm, const mbsModel *m, mbsState *s, mbsWork *w,
                            mbspEngine *eng) {
  if (mbsp_naturalParActive(comm, m)) { // natural, by parts (docs/natural.md 13)
    MBS_CALL(mbsp_naturalForward(comm, m, s, w));
    w->stat.iterations = 0;
    w->stat.reason = MBS_REASON_CONVERGED_DIRECT;
    return MBS_OK;
  }
  if (mbs_solverIsBaseline(m->opt.solver)) {
    if (mbsp_rank(comm) != 0) return MBS_OK;
    MBS_CALL(mbs_forward(m, s, w));
    w->stat.iterations = 0;
    w->stat.reason = MBS_REASON_CONVERGED_DIRECT;
    return MBS_OK;
  }
  return mbsp_engineForward(eng, s);
}

/// No silent NaN (issue 12.3): the results of the evaluation, every method. aba/crba: rank 0
/// checks q̈ and λ (λ = T^T f computed here, as the report does); the engine: every rank its owned
/// dofs and constraint components (the message of the lowest failing rank is the first offending
/// body in model order). Local; the caller agrees.
static mbsErr accel_check(mbspComm *comm, const mbsModel *m, mbsWork *w, mbspEngine *eng) {
  char phase[128];
  snprintf(phase, sizeof phase, "accel (solver.method = %s)", mbs_solverName(m->opt.solver));
  if (mbs_solverIsBaseline(m->opt.solver)) {
    if (mbsp_rank(comm) != 0) return MBS_OK;
    mbs_constraintLambda(m, w);
    return mbs_checkForward(m, w, 1, 0, m->nv, 0, m->nlam, phase);
  }
  mbspDecompInfo di;
  mbsp_engineDecomp(eng, &di);
  if (di.b1 <= di.b0) return MBS_OK;
  int last = di.b1 - 1;
  return mbs_checkForward(m, mbsp_engineWork(eng), 0, m->body_dofadr[di.b0],
                          m->body_dofadr[last] + m->body_dofnum[last], m->body_lamadr[di.b0],
                          m->body_lamadr[last] + m->body_lamnum[last], phase);
}

// the rest of the table's method line: a direct solve says so; an iterative one its iterations,
// residual and reason
static void mbsp_accelSolveLine(const mbsSolveStat *st) {
  if (st->reason == MBS_REASON_CONVERGED_DIRECT)
    printf(" (direct)\n");
  else
    printf(" (%d iterations, residual %.3e, %s)\n", st->iterations, st->residual,
           mbs_reasonName(st->reason));
}

static void mbs_accelJson(mbsJson *j, const void *ctx) {
  const mbsAccelOut *a = ctx;
  const mbsModel *m = a->m;
  const mbsSolveStat *st = &a->stat;
  mbs_jsonBeginObject(j, "solver");
  mbs_jsonString(j, "method", mbs_solverName(m->opt.solver));
  mbs_jsonInt(j, "iterations", st->iterations);
  mbs_jsonNumber(j, "residual", st->residual);
  mbs_jsonBool(j, "converged", st->reason > 0);
  mbs_jsonString(j, "reason", mbs_reasonName(st->reason));
  mbs_jsonNumber(j, "tol", m->opt.tol);
  const mbsSolverType *t = mbs_solverCaps(m->opt.solver);
  if (t->restarts) mbs_jsonInt(j, "restarts", st->total_restarts); // from the true residual
  if (t->floored) mbs_jsonInt(j, "floored_pivots", st->floored);
  if (t->floored) mbs_jsonInt(j, "interface_rounds", st->iface_rounds);
  if (a->nat && a->nat->nparts) { // natural over the ranks (docs/natural.md 13)
    const mbspNaturalParReport *n = a->nat;
    mbs_jsonInt(j, "interface_rows", n->nif);
    mbs_jsonInt(j, "interface_rows_cut", n->nif_cut);
    mbs_jsonInt(j, "interface_rank", n->rank);
    mbs_jsonBeginArray(j, "parts");
    for (int r = 0; r < n->nparts; r++) {
      const long *p = n->per + 5 * r;
      mbs_jsonBeginObject(j, NULL);
      mbs_jsonInt(j, "rank", r);
      mbs_jsonInt(j, "body_first", p[0]);
      mbs_jsonInt(j, "body_end", p[1]);
      mbs_jsonInt(j, "bodies_factored", p[2]);
      mbs_jsonInt(j, "unit_solves", p[3]);
      mbs_jsonInt(j, "root_solves", p[4]);
      mbs_jsonEndObject(j);
    }
    mbs_jsonEndArray(j);
  }
  mbs_jsonEndObject(j);
  // one check of the result under one name at every rank count, its kind beside it: full
  // models: ||RNEA(q, qd, qdd) - tau|| relative ("eom"); distributed-memory models: the largest
  // body Newton-Euler residual relative to the body wrenches ("newton_euler"; each rank checks
  // its bodies), and the acceleration-level constraint residual (the guard)
  mbs_jsonNumber(j, "check_residual", a->residual);
  mbs_jsonString(j, "check_residual_kind", a->local ? "newton_euler" : "eom");
  if (a->local) mbs_jsonNumber(j, "constraint_residual", a->kin_residual);
  if (a->guard) { // docs/formulation.md 4.9
    mbs_jsonBeginObject(j, "accuracy");
    mbs_jsonNumber(j, "residual", a->guard->residual);
    mbs_jsonNumber(j, "bound", a->guard->bound);
    mbs_jsonBool(j, "exceeded", a->guard->exceeded);
    if (a->guard->exceeded) mbs_jsonString(j, "likely_cause", a->guard->cause);
    mbs_jsonEndObject(j);
  }
  mbs_jsonInt(j, "repeat", a->repeat);
  mbs_jsonNumber(j, "time_per_eval_s", a->time_per_eval);
  if (a->slices) { // the same bytes, read from the ranks that own them while they are written
    mbsp_slicesJsonArray(a->slices, j, "qdd", MBSP_SLICE_QDD);
    mbsp_slicesJsonArray(a->slices, j, "lambda", MBSP_SLICE_LAM);
    mbsp_slicesJsonRows6(a->slices, j, "joint_wrench", MBSP_SLICE_WRENCH);
  } else {
    mbs_jsonNumberArray(j, "qdd", a->qdd, a->nv);
    mbs_jsonNumberArray(j, "lambda", a->lam, a->nlam);
    mbs_jsonBeginArray(j, "joint_wrench");
    for (int b = 0; b < a->nbody; b++) mbs_jsonNumberArray(j, NULL, a->wrench + 6 * b, 6);
    mbs_jsonEndArray(j);
  }
  if (a->wloop) // loop_lambda, loop_wrench, loops (docs/loops.md)
    mbs_loopJsonResult(j, m, a->wloop);
  else if (a->lsnap) // the same, kept from the freed engine (distributed loop models)
    mbs_loopSnapJson(j, m, a->lsnap);
  // per-phase timers over the ranks (seconds, all evaluations of --repeat), decomposition,
  // placement
  mbsp_rankReportJson(a->rr, j);
}

// Distributed-memory models: the owned bodies' world joint wrenches and their Newton-Euler
// residuals r_b = I_b a_b + v x* I_b v - f_ext - f_b + sum_children X_c^T f_c (the children on
// other ranks send X_c^T f_c through the engine's halo); returns max |r_b| / max |f_b| over all
// ranks.
static mbsErr accel_localCheck(mbspComm *comm, const mbsModel *m, mbspEngine *eng, mbsReal *wr,
                               double *res) {
  mbsWork *w = mbsp_engineWork(eng);
  mbspDecompInfo di;
  mbsp_engineDecomp(eng, &di);
  mbsReal *up = calloc(6 * (size_t)m->nbody, sizeof(mbsReal));
  // the halo below is collective: agree on the allocation first
  MBS_CALL(mbsp_agreeErr(comm, up ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory")));
  for (int b = di.b0; b < di.b1; b++) {
    mbsu_mulMat3Vec(w->xmat + 9 * b, w->jfrc + 6 * b, wr + 6 * (b - di.b0));
    mbsu_mulMat3Vec(w->xmat + 9 * b, w->jfrc + 6 * b + 3, wr + 6 * (b - di.b0) + 3);
    mbsu_xTForce(w->xpar + 12 * b, w->jfrc + 6 * b, up + 6 * b);
  }
  mbsErr e = mbsp_engineHaloUp(eng, up);
  double r[2] = {0, 0};
  for (int b = di.b0; b < di.b1 && !e; b++) {
    mbsReal t[6];
    mbs_bodyInertiaMul(m, b, w->acc + 6 * b, t);
    for (int i = 0; i < 6; i++) t[i] += w->cbias[6 * b + i] - w->jfrc[6 * b + i];
    if (w->fext_on) // the loop forces (distributed loop models, docs/loops.md 9)
      for (int i = 0; i < 6; i++) t[i] -= w->fext[6 * b + i];
    const int *ch = m->child_list + m->body_childadr[b];
    for (int k = 0; k < m->body_childnum[b]; k++)
      for (int i = 0; i < 6; i++) t[i] += up[6 * ch[k] + i];
    for (int i = 0; i < 6; i++) {
      r[0] = fmax(r[0], fabs(t[i]));
      r[1] = fmax(r[1], fabs(w->jfrc[6 * b + i]));
    }
  }
  free(up);
  MBS_CALL(mbsp_agreeErr(comm, e));
  MBS_CALL(mbsp_allreduceMax(comm, r, 2));
  *res = r[1] > 0 ? r[0] / r[1] : r[0];
  return MBS_OK;
}

// A distributed-memory run's owned results (qdd, lambda, world wrenches), copied out of the
// engine so that it can be freed before rank 0 writes the report, reading the other ranks'
// slices chunk by chunk (accel_stream.c: no rank holds the global arrays, docs/scaling.md
// "Memory")
typedef struct {
  int nv, nl, nb; // owned dofs, constraint components, bodies
  double *qdd, *lam, *wr;
} mbsAccelOwn;

static mbsErr accel_localCopy(mbspComm *comm, const mbsModel *m, mbspEngine *eng, mbsAccelOwn *o,
                              double *res) {
  mbspDecompInfo di;
  mbsp_engineDecomp(eng, &di);
  const mbsWork *w = mbsp_engineWork(eng);
  int b0 = di.b0, b1 = di.b1, d0 = m->body_dofadr[b0], l0 = m->body_lamadr[b0];
  o->nb = b1 - b0;
  o->nv = m->body_dofadr[b1 - 1] + m->body_dofnum[b1 - 1] - d0;
  o->nl = m->body_lamadr[b1 - 1] + m->body_lamnum[b1 - 1] - l0;
  o->qdd = malloc(((size_t)o->nv + 1) * sizeof(double));
  o->lam = malloc(((size_t)o->nl + 1) * sizeof(double));
  o->wr = malloc(6 * (size_t)o->nb * sizeof(double));
  mbsErr e = o->qdd && o->lam && o->wr ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  MBS_CALL(mbsp_agreeErr(comm, e));
  memcpy(o->qdd, w->qdd + d0, sizeof(double) * (size_t)o->nv);
  memcpy(o->lam, w->lam + l0, sizeof(double) * (size_t)o->nl);
  return accel_localCheck(comm, m, eng, o->wr, res);
}

// the table's |qdd| and first values, from the streamed slices in model order (the same sum,
// term by term, as over the global array)
typedef struct {
  double qn, first[8];
} mbsAccelHead;

static void accel_headFold(void *ctx, const double *v, long n, long at) {
  mbsAccelHead *h = ctx;
  for (long i = 0; i < n; i++) {
    h->qn += v[i] * v[i];
    if (at + i < 8) h->first[at + i] = v[i];
  }
}

// ---------------------------------------------------------------- the accuracy guard

// Distributed-memory models: the constraint residual of the owned bodies' accelerations,
// max_b |a_b - X_b a_p - c_b - S_b qdd_b| / max(max_b |a_b|, |a_ground|), the parents on other
// ranks through the down halo. The body Newton-Euler residual cannot see an error in a light
// body's acceleration (its inertia scales it away); this one does. Collective.
static mbsErr accel_kinResidual(mbspComm *comm, const mbsModel *m, mbspEngine *eng, double *res) {
  mbsWork *w = mbsp_engineWork(eng);
  mbspDecompInfo di;
  mbsp_engineDecomp(eng, &di);
  mbsReal *acc = malloc(6 * (size_t)m->nbody * sizeof(mbsReal));
  MBS_CALL(mbsp_agreeErr(comm, acc ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory")));
  memcpy(acc, w->acc, 6 * (size_t)m->nbody * sizeof(mbsReal));
  mbsErr e = mbsp_engineHaloDown(eng, acc);
  mbsReal a0g[6];
  mbs_baseAccel(m, 1, a0g);
  double r[2] = {0, 0};
  for (int i = 0; i < 6; i++) r[1] = fmax(r[1], fabs(a0g[i]));
  for (int b = di.b0; b < di.b1 && !e; b++) {
    int p = m->body_parent[b], nd = m->body_dofnum[b], da = m->body_dofadr[b];
    mbsReal t[6], d[6];
    mbsu_xMotion(w->xpar + 12 * b, p < 0 ? a0g : acc + 6 * p, t);
    for (int i = 0; i < 6; i++) d[i] = acc[6 * b + i] - t[i] - w->cacc[6 * b + i];
    for (int k = 0; k < nd; k++)
      for (int i = 0; i < 6; i++) d[i] -= w->sdof[6 * (da + k) + i] * w->qdd[da + k];
    for (int i = 0; i < 6; i++) {
      r[0] = fmax(r[0], fabs(d[i]));
      r[1] = fmax(r[1], fabs(acc[6 * b + i]));
    }
  }
  free(acc);
  MBS_CALL(mbsp_agreeErr(comm, e));
  MBS_CALL(mbsp_allreduceMax(comm, r, 2));
  *res = r[1] > 0 ? r[0] / r[1] : r[0];
  return MBS_OK;
}

// a distributed loop model is not assembled (mbs_loopAssemble is whole-model): its q0 must close
// the loops to solver.closure_tol already. By default accel tested that (and qd0) before its
// first evaluation (mbsp_loopsLocalClosed); with MBSPAR_LOOPS_LOCAL=1 this is the test. The
// residual from the gathered loop-body poses of the evaluation, the same on every rank.
static mbsErr accel_closureCheck(const mbsConfig *cfg, const mbsModel *m, mbspEngine *eng) {
  mbsReal ep = 0, er = 0;
  mbs_loopViolation(m, mbsp_engineWork(eng), &ep, &er, NULL);
  if (fmax(ep, er) <= m->opt.closure_tol) return MBS_OK;
  return mbs_errSet(MBS_ERR_UNSUPPORTED,
                    "%s: model.loops: q0 does not close the loops (max |c| %.3g m, %.3g rad > "
                    "solver.closure_tol %g) and MBSPAR_LOOPS_LOCAL=1 does not assemble it (the "
                    "assembly needs the whole model: unset MBSPAR_LOOPS_LOCAL, and the model is "
                    "built whole for it)",
                    cfg->filename, ep, er, m->opt.closure_tol);
}

mbsErr mbsp_verbAccel(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, const mbsModel *m) {
  int rank = mbsp_rank(comm), size = mbsp_size(comm);
  int serial = mbs_solverIsBaseline(m->opt.solver);
  mbsState *s = NULL;
  mbsWork *w = NULL;
  mbspEngine *eng = NULL;
  mbsReal *wrench = NULL;
  mbspRankReport rr;
  memset(&rr, 0, sizeof rr);
  mbspNaturalParReport natrep;
  memset(&natrep, 0, sizeof natrep);
  static const char *const files[] = {"accel.json"};
  mbsErr e = rank == 0 ? mbsp_outPrepare(cli, files, 1) : MBS_OK;
  if (!e) e = mbs_stateCreate(m, &s);
  int local = m->local;
  // on a distributed model the evaluations run in the engine's workspace: the verb's own only
  // carries the statistics and timers copied from it, a shell without arrays (a whole workspace
  // was ~3 MiB per rank on the 2^16-body ladder at 16 ranks, docs/scaling.md "Memory")
  mbsWork shell;
  memset(&shell, 0, sizeof shell);
  int use_shell = local && !serial && !mbsp_naturalParActive(comm, m);
  if (!e && use_shell) w = &shell;
  if (!e && !use_shell) e = mbs_workCreate(m, &w);
  mbspSlices slices; // distributed-memory models: this rank's results, read by rank 0
  memset(&slices, 0, sizeof slices);
  mbsAccelOwn own = {0, 0, 0, NULL, NULL, NULL};
  mbsLoopSnap lsnap;
  memset(&lsnap, 0, sizeof lsnap);
  if (!e && rank == 0 && !local) {
    wrench = malloc((size_t)m->nbody * 6 * sizeof *wrench);
    if (!wrench) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  }
  e = mbsp_agreeErr(comm, e);
  if (!e && !serial) e = mbsp_engineCreate(comm, m, MBSP_HALO_P2P, &eng);
  if (e == MBS_ERR_INPUT) e = mbs_configBlame(cfg, "model", e);
  // a loop model built distributed by default: q0 and qd0 on the loops before anything is bound
  // or solved, else main.c builds it whole and runs the verb again (parallel/loops_local.c)
  if (!e && local && m->nloop && mbsp_loopsLocalTrying()) {
    int closed = 0;
    e = mbsp_loopsLocalClosed(comm, m, eng, s, &closed);
    if (!e && !closed) e = mbsp_loopsLocalReject(); // (the same on every rank)
  }
  // the solver now, not at the first evaluation: its failures are agreed before any solve
  if (!e && !serial) e = mbsp_agreeErr(comm, mbs_cfsBindSolver(m, mbsp_engineCfs(eng)));

  // K full evaluations from the initial state (the first builds the warm-start history: use
  // solver.warm_start = none to time cold solves). With K > 1 one untimed evaluation first: the
  // first touches the whole workspace (page faults: ~130 ms on a 65536-link chain, more than ten
  // warm ABA evaluations), which a run pays once; the timers then start from zero
  if (!e && cli->repeat > 1) {
    mbs_stateReset(m, s);
    if (cfg->torques) mbs_torquesAt(cfg->torques, m, s->time, s->tau);
    e = mbsp_agreeErr(comm, accel_compute(comm, m, s, w, eng));
    mbsWork *tw = eng ? mbsp_engineWork(eng) : w;
    for (int k = 0; !e && k < MBS_TIMER_COUNT; k++) tw->timer[k] = (mbsTimer){0};
  }
  mbsp_barrier(comm);
  double t0 = mbs_wtime();
  mbspAccelProgress prog = {.m = m};
  mbsp_tickerStart(&prog.tick, cli);
  if (!e && !serial && rank == 0 && !cli->quiet)
    mbs_cfsSetProgress(mbsp_engineCfs(eng), mbsp_accelProgress, &prog);
  for (int k = 0; k < cli->repeat && !e; k++) {
    mbs_stateReset(m, s);
    if (cfg->torques) mbs_torquesAt(cfg->torques, m, s->time, s->tau); // URDF: forces at t = 0
    e = accel_compute(comm, m, s, w, eng);
  }
  double tpe = (mbs_wtime() - t0) / cli->repeat;
  if (eng) mbs_cfsSetProgress(mbsp_engineCfs(eng), NULL, NULL); // prog is this frame's
  e = mbsp_agreeErr(comm, e);
  if (!e && local && m->nloop) e = mbsp_agreeErr(comm, accel_closureCheck(cfg, m, eng));
  // no evaluation follows: the loop layer's dense matrices go before the results are copied and
  // gathered (they would otherwise be held on top of them: docs/scaling.md "Memory")
  if (local && m->nloop && eng) mbs_loopWorkRelease(mbsp_engineWork(eng));
  if (!e) e = mbsp_agreeErr(comm, accel_check(comm, m, w, eng));

  // results to rank 0; timers and decomposition over all ranks
  double local_res = 0, kin_res = 0;
  mbspGuard guard;
  memset(&guard, 0, sizeof guard);
  if (!e && local) {
    mbsWork *ew = mbsp_engineWork(eng);
    e = accel_localCopy(comm, m, eng, &own, &local_res);
    if (!e) e = accel_kinResidual(comm, m, eng, &kin_res);
    if (!e) { // the guard on both residuals (docs/formulation.md 4.9)
      mbspDecompInfo di;
      mbsp_engineDecomp(eng, &di);
      e = mbsp_guardJudge(comm, m, 1, di.b0, di.b1, fmax(local_res, kin_res), ew->stat.reason,
                          &guard);
    }
    // the loop results (every rank has them all; agreed below)
    if (!e && rank == 0) e = mbs_loopSnapTake(m, ew, &lsnap);
    w->stat = ew->stat;
    memcpy(w->timer, ew->timer, sizeof w->timer);
  } else if (!e && !serial) {
    mbsWork *ew = mbsp_engineWork(eng);
    e = mbsp_engineGather(eng, rank == 0 ? w->qdd : NULL, rank == 0 ? w->lam : NULL,
                          rank == 0 ? w->jfrc : NULL);
    w->stat = ew->stat;
    memcpy(w->timer, ew->timer, sizeof w->timer);
  }
  e = mbsp_agreeErr(comm, e);
  if (!e) e = mbsp_rankReportCollect(comm, eng, w, &rr);
  if (!e && !local) e = mbsp_naturalParReport(comm, w, m, &natrep);
  e = mbsp_agreeErr(comm, e);
  mbsSolveStat stat = w ? w->stat : (mbsSolveStat){0};
  if (!e) e = mbsp_allreduceSumLong(comm, &stat.floored, 1);
  double irounds = stat.iface_rounds; // the deepest any rank saw (schur, docs/formulation.md 4.4)
  if (!e) e = mbsp_allreduceMax(comm, &irounds, 1);
  stat.iface_rounds = (int)irounds;
  if (!e && local) { // free the engine and the workspaces; the results stay where they are
    mbsp_engineDestroy(&eng);
    if (w == &shell) w = NULL; // nothing of its own
    mbs_workDestroy(&w);
    mbs_stateDestroy(&s);
    const double *ov[MBSP_SLICE_N] = {own.qdd, own.lam, own.wr};
    const long on[MBSP_SLICE_N] = {own.nv, own.nl, 6L * own.nb};
    e = mbsp_slicesOpen(comm, ov, on, &slices);
  }
  if (!e) e = mbsp_agreeErr(comm, mbsp_cliGatherRss(comm));
  // distributed-memory models: the other ranks answer rank 0's requests for their slices while it
  // prints and writes, until it says done (which it does whatever happened: no rank waits on)
  if (!e && local && rank != 0) e = mbsp_slicesServe(&slices);

  if (!e && rank == 0 && local) {
    mbsAccelOut a = {m,         NULL, NULL, NULL,        NULL,      m->nbody_g, m->nv_g,
                     m->nlam_g, 1,    tpe,  cli->repeat, local_res, kin_res,    &guard,
                     &rr,       stat, NULL, NULL,        &lsnap,    &slices};
    mbsAccelHead head = {0, {0}};
    if (mbsp_cliTable(cli) && !mbsp_slicesFold(&slices, MBSP_SLICE_QDD, accel_headFold, &head)) {
      double qn = head.qn;
      printf("mbspar accel %s: %d bodies, %d dofs, %d rank(s), distributed model\n", cfg->filename,
             m->nbody_g, m->nv_g, size);
      printf("  %-20s %s", "method", mbs_solverName(m->opt.solver));
      mbsp_accelSolveLine(&stat);
      printf("  %-20s %.3e s (mean of %d)\n", "time per eval", tpe, cli->repeat);
      printf("  %-20s %.3e (largest body Newton-Euler residual, relative)\n", "check residual",
             local_res);
      printf("  %-20s %.3e (largest acceleration constraint residual, relative)\n",
             "constraint residual", kin_res);
      printf("  %-20s %.6e\n", "|qdd|", sqrt(qn));
      int show = m->nv_g < 8 ? m->nv_g : 8;
      printf("  %-20s", "qdd");
      for (int d = 0; d < show; d++) printf(" %.6g", head.first[d]);
      printf("%s\n", show < m->nv_g ? " ..." : "");
    }
    if (stat.reason < 0) mbsp_accelWarn(m, stat.reason, stat.iterations, stat.residual);
    mbsp_guardWarn("accel", NULL, m, &guard);
    // a distributed loop model is not assembled: its report's rank, redundant equations and zero
    // rows from the evaluation's loop solve at the same q0, the closure errors of its poses (what
    // the assembly reports for a q0 it does not move; a view; docs/loops.md 9)
    mbsModel view = *m;
    if (m->nloop && lsnap.lam && !m->loop_asm.done) {
      view.loop_asm.rank = lsnap.st.rank;
      view.loop_asm.nredundant = lsnap.nred;
      view.loop_asm.redundant = lsnap.red;
      view.loop_asm.nskip = lsnap.st.nskip;
      view.loop_asm.c0_pos = view.loop_asm.c_pos = lsnap.viol[0];
      view.loop_asm.c0_rot = view.loop_asm.c_rot = lsnap.viol[1];
    }
    mbspOutSet set; // staged: a failed read of a slice puts no file in place
    mbsp_outInit(&set);
    e = mbsp_emitStaged(cli, comm, cfg, &view, mbs_accelJson, &a, &set);
    mbsErr ed = mbsp_slicesDone(&slices); // the others stop serving, whatever happened
    if (!e) e = ed;
    if (!e) e = mbsp_outCommit(&set);
    mbsp_outDiscard(&set);
  } else if (!e && rank == 0) {
    if (serial) {
      mbs_constraintLambda(m, w);
    } else { // poses and velocities of the whole model, for the outputs only
      mbs_fwdPosition(m, s, w);
      mbs_fwdVelocity(m, s, w);
      if (m->nloop || m->nforce) { // the external wrenches (every rank has all of them)
        const mbsWork *ew = mbsp_engineWork(eng);
        memcpy(w->fext, ew->fext, 6 * (size_t)m->nbody * sizeof(mbsReal));
        w->fext_on = ew->fext_on;
        memcpy(w->lam + m->nlam, ew->lam + m->nlam, (size_t)m->nlam_loop * sizeof(mbsReal));
      }
    }
    mbs_jointWrenchWorld(m, w, wrench);
    // equation-of-motion residual of the result (docs/formulation.md 4.9); the closure rows of
    // the system (docs/loops.md 8.4) left the loop forces out of w->fext: they join it here
    mbsReal *qdd = malloc((size_t)(m->nv > 0 ? m->nv : 1) * sizeof *qdd);
    mbsReal *acc = malloc((size_t)m->nbody * 6 * sizeof *acc);
    double eom = 0;
    if (qdd && acc) {
      memcpy(qdd, w->qdd, (size_t)m->nv * sizeof *qdd);
      memcpy(acc, w->acc, (size_t)m->nbody * 6 * sizeof *acc);
      if (m->nloop && mbs_loopUseRows(m, m->opt.solver)) {
        if (!w->fext_on) memset(w->fext, 0, 6 * (size_t)m->nbody * sizeof(mbsReal));
        mbs_loopAddForces(m, w, w->lam + m->nlam);
      }
      mbsp_guardEom(m, w, qdd, &eom);
      memcpy(w->acc, acc, (size_t)m->nbody * 6 * sizeof *acc);
    } else {
      e = mbs_errSet(MBS_ERR_NOMEM, "mbspar accel: out of memory (equation-of-motion residual)");
    }
    free(acc);
    free(qdd);
    // the guard (rank 0 alone)
    if (!e) e = mbsp_guardJudge(comm, m, 0, 0, m->nbody, eom, serial ? 1 : w->stat.reason, &guard);
    mbsAccelOut a = {m,
                     w,
                     w->qdd,
                     w->lam,
                     wrench,
                     m->nbody,
                     m->nv,
                     m->nlam,
                     0,
                     tpe,
                     cli->repeat,
                     eom,
                     0,
                     &guard,
                     &rr,
                     w->stat,
                     serial ? w : mbsp_engineWork(eng),
                     &natrep,
                     NULL,
                     NULL};
    if (!e && mbsp_cliTable(cli)) {
      double qn = 0;
      for (int d = 0; d < m->nv; d++) qn += w->qdd[d] * w->qdd[d];
      printf("mbspar accel %s: %d bodies, %d dofs, %d rank(s)\n", cfg->filename, m->nbody, m->nv,
             size);
      printf("  %-20s %s", "method", mbs_solverName(m->opt.solver));
      if (!serial)
        mbsp_accelSolveLine(&w->stat);
      else
        printf("\n");
      printf("  %-20s %.3e s (mean of %d)\n", "time per eval", tpe, cli->repeat);
      printf("  %-20s %.3e (RNEA(q, qd, qdd) - tau, relative)\n", "check residual", a.residual);
      printf("  %-20s %.6e\n", "|qdd|", sqrt(qn));
      int show = m->nv < 8 ? m->nv : 8;
      printf("  %-20s", "qdd");
      for (int d = 0; d < show; d++) printf(" %.6g", w->qdd[d]);
      printf("%s\n", show < m->nv ? " ..." : "");
    }
    if (!e && !serial && w->stat.reason < 0)
      mbsp_accelWarn(m, w->stat.reason, w->stat.iterations, w->stat.residual);
    if (!e) mbsp_guardWarn("accel", NULL, m, &guard);
    if (!e) e = mbsp_emit(cli, comm, cfg, m, mbs_accelJson, &a);
  }
  e = mbsp_agreeErr(comm, e);
  mbsp_engineDestroy(&eng);
  free(wrench), free(own.qdd), free(own.lam), free(own.wr);
  mbsp_slicesFree(&slices);
  mbs_loopSnapFree(&lsnap);
  mbsp_rankReportFree(&rr);
  mbsp_naturalParReportFree(&natrep);
  if (w == &shell) w = NULL;
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  return e;
}
