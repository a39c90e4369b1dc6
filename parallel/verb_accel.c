/// \file verb_accel.c
/// `mbspar accel`: one forward-dynamics evaluation at the initial state (--repeat K times it).
/// The serial baselines run on rank 0; the constraint-force methods on the distributed engine,
/// whose results are gathered to rank 0 with the timers of every rank. Collective.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "rankreport.h"
#include "mbspar/mbs_engine.h"
#include "mbspar/mbs_finite.h"
#include "mbspar/mbs_loops.h"
#include "mbspar/mbs_solvertype.h"
#include "mbspar/mbspar.h"
#include "spatial.h"

// The accuracy guard (docs/formulation.md 4.9): the result's residual against the equations of
// motion, the bound it is held to, and on rank 0 the likely cause when it is exceeded
typedef struct {
  double residual, bound;
  int exceeded, unconverged; // unconverged: mbsp_accelWarn's line stands for the guard's
  char cause[320];
} mbsAccelGuard;

#define MBS_GUARD_BOUND 1e-8 // relative residual of a direct method's result
#define MBS_GUARD_RATIO 1e3  // mass ratio across a joint named as the likely cause

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
  const mbsAccelGuard *guard;
  const mbspRankReport *rr; // timers over the ranks, decomposition, affinity
  mbsSolveStat stat;        // the solver's statistics
  const mbsWork *wloop;     // the loop solve's workspace (the engine's on rank 0), else w
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
  mbs_jsonNumberArray(j, "qdd", a->qdd, a->nv);
  mbs_jsonNumberArray(j, "lambda", a->lam, a->nlam);
  mbs_jsonBeginArray(j, "joint_wrench");
  for (int b = 0; b < a->nbody; b++) mbs_jsonNumberArray(j, NULL, a->wrench + 6 * b, 6);
  mbs_jsonEndArray(j);
  if (a->wloop) // loop_lambda, loop_wrench, loops (docs/loops.md)
    mbs_loopJsonResult(j, m, a->wloop);
  // per-phase timers over the ranks (seconds, all evaluations of --repeat), decomposition,
  // placement
  mbsp_rankReportJson(a->rr, j);
}

// Distributed-memory models: the owned bodies' world joint wrenches and their Newton-Euler
// residuals r_b = I_b a_b + v x* I_b v - f_b + sum_children X_c^T f_c (the children on other
// ranks send X_c^T f_c through the engine's halo); returns max |r_b| / max |f_b| over all ranks.
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
    mbsu_rbiMul(m->body_sinert + 10 * b, w->acc + 6 * b, t);
    for (int i = 0; i < 6; i++) t[i] += w->cbias[6 * b + i] - w->jfrc[6 * b + i];
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
// engine so that it can be freed before rank 0 gathers the global arrays (rank 0's peak memory
// is then its share or the outputs, not both)
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

// gather n doubles per rank (in rank order) into out on rank 0
static mbsErr accel_gatherSlices(mbspComm *comm, const double *in, int n, double *out) {
  int P = mbsp_size(comm);
  int *cnt = calloc((size_t)P, sizeof(int)), *dsp = calloc((size_t)P, sizeof(int));
  double *all = calloc((size_t)P, sizeof(double)), mine = n, dummy = 0;
  mbsErr e = cnt && dsp && all ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  e = mbsp_agreeErr(comm, e);
  if (!e) e = mbsp_gather(comm, &mine, 1, all);
  for (int r = 0, at = 0; !e && r < P && mbsp_rank(comm) == 0; r++)
    cnt[r] = (int)all[r], dsp[r] = at, at += cnt[r];
  if (!e) e = mbsp_gatherv(comm, n ? in : &dummy, n, out ? out : &dummy, cnt, dsp);
  free(cnt), free(dsp), free(all);
  return e;
}

// ---------------------------------------------------------------- the accuracy guard

// The bound of the guard: 1e-8 for the direct methods, and for the iterative ones 100 tol when
// that is larger (their residual is measured on A lambda = b; measured on configs/: the
// equation-of-motion residual stays below 6 tol, docs/formulation.md 4.9)
static double accel_guardBound(const mbsModel *m) {
  const mbsSolverType *t = mbs_solverFind(m->opt.solver);
  double b = MBS_GUARD_BOUND;
  if (t && t->iterative && 100 * m->opt.tol > b) b = 100 * m->opt.tol;
  return b;
}

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

#define MBS_GUARD_CAUSE 240 // characters of a rank's cause text, sent as doubles
// the joint of [b0, b1) whose two bodies' masses differ most: the ratio, and the pair as text
static double accel_massRatio(const mbsModel *m, int b0, int b1, char *text, size_t n) {
  double best_ratio = 0;
  int best = -1;
  text[0] = 0;
  for (int b = b0; b < b1; b++) {
    int p = m->body_parent[b];
    if (p < 0) continue;
    double mb = m->body_mass[b], mp = m->body_mass[p];
    if (!(mb > 0 && mp > 0)) continue;
    double ratio = mb > mp ? mb / mp : mp / mb;
    if (ratio > best_ratio) best_ratio = ratio, best = b;
  }
  if (best >= 0) {
    int p = m->body_parent[best], light = m->body_mass[best] < m->body_mass[p] ? best : p,
        heavy = light == best ? p : best;
    snprintf(text, n, "%.80s (%.3g kg) next to %.80s (%.3g kg)", m->body_name[light],
             m->body_mass[light], m->body_name[heavy], m->body_mass[heavy]);
  }
  return best_ratio;
}

// The likely cause of an exceeded bound, on rank 0: the joint whose two bodies' masses differ
// most, over the owned bodies [b0, b1) of every rank and their parents. Collective if local
// (distributed-memory models), else rank 0 alone over the whole model.
static mbsErr accel_guardCause(mbspComm *comm, const mbsModel *m, int local, int b0, int b1,
                               char *out, size_t n) {
  double mine[1 + MBS_GUARD_CAUSE] = {0}, ratio;
  char text[MBS_GUARD_CAUSE];
  mine[0] = accel_massRatio(m, b0, b1, text, sizeof text);
  ratio = mine[0];
  if (local) {
    for (int i = 0; i < MBS_GUARD_CAUSE - 1 && text[i]; i++) mine[1 + i] = (unsigned char)text[i];
    int P = mbsp_size(comm), rank = mbsp_rank(comm);
    double *all = rank == 0 ? calloc((size_t)P * (1 + MBS_GUARD_CAUSE), sizeof(double)) : NULL;
    MBS_CALL(mbsp_agreeErr(comm,
                           rank != 0 || all ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory")));
    mbsErr e = mbsp_gather(comm, mine, 1 + MBS_GUARD_CAUSE, all);
    if (!e && rank == 0) {
      int r = 0;
      for (int k = 1; k < P; k++)
        if (all[(size_t)k * (1 + MBS_GUARD_CAUSE)] > all[(size_t)r * (1 + MBS_GUARD_CAUSE)]) r = k;
      const double *row = all + (size_t)r * (1 + MBS_GUARD_CAUSE);
      for (int i = 0; i < MBS_GUARD_CAUSE; i++) text[i] = (char)row[1 + i];
      text[MBS_GUARD_CAUSE - 1] = 0;
      ratio = row[0];
    }
    free(all);
    MBS_CALL(mbsp_agreeErr(comm, e));
  }
  if (ratio >= MBS_GUARD_RATIO)
    snprintf(out, n, "bodies whose masses differ by %.0f orders of magnitude: %s",
             floor(log10(ratio)), text);
  else
    snprintf(out, n,
             "no two jointed bodies' masses differ by %g or more; the system is ill-conditioned "
             "for this method or its tolerance",
             MBS_GUARD_RATIO);
  return MBS_OK;
}

// The guard: compare the residual with the bound; when exceeded, one warning line (rank 0) and
// the likely cause in the JSON. Collective if local, else rank 0 alone.
static mbsErr accel_guard(mbspComm *comm, const mbsModel *m, int local, int b0, int b1,
                          double residual, int reason, mbsAccelGuard *g) {
  g->residual = residual, g->bound = accel_guardBound(m);
  g->exceeded = !(residual <= g->bound);
  g->unconverged = reason < 0;
  g->cause[0] = 0;
  if (!g->exceeded) return MBS_OK;
  if (g->unconverged) { // mbsp_accelWarn has said so
    snprintf(g->cause, sizeof g->cause, "the solve stopped without converging");
    return MBS_OK;
  }
  return accel_guardCause(comm, m, local, b0, b1, g->cause, sizeof g->cause);
}

// the guard's one warning line (rank 0)
static void accel_guardWarn(const mbsModel *m, const mbsAccelGuard *g) {
  if (g->exceeded && !g->unconverged)
    fprintf(stderr,
            "mbspar: warning: accel: the result of %s misses the equations of motion by %.1e "
            "(relative; bound %.0e); likely cause: %s (docs/formulation.md 4.9)\n",
            mbs_solverName(m->opt.solver), g->residual, g->bound, g->cause);
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
  static const char *const files[] = {"accel.json"};
  mbsErr e = rank == 0 ? mbsp_outPrepare(cli, files, 1) : MBS_OK;
  if (!e) e = mbs_stateCreate(m, &s);
  if (!e) e = mbs_workCreate(m, &w);
  int local = m->local;
  mbsReal *gqdd = NULL, *glam = NULL; // global results on rank 0 (distributed-memory models)
  mbsAccelOwn own = {0, 0, 0, NULL, NULL, NULL};
  if (!e && rank == 0 && !local) {
    wrench = malloc((size_t)m->nbody * 6 * sizeof *wrench);
    if (!wrench) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  }
  e = mbsp_agreeErr(comm, e);
  if (!e && !serial) e = mbsp_engineCreate(comm, m, MBSP_HALO_P2P, &eng);
  if (e == MBS_ERR_INPUT) e = mbs_configBlame(cfg, "model", e);
  // the solver now, not at the first evaluation: its failures are agreed before any solve
  if (!e && !serial) e = mbsp_agreeErr(comm, mbs_cfsBindSolver(m, mbsp_engineCfs(eng)));

  // K full evaluations from the initial state (the first builds the warm-start history: use
  // solver.warm_start = none to time cold solves)
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
  if (!e) e = mbsp_agreeErr(comm, accel_check(comm, m, w, eng));

  // results to rank 0; timers and decomposition over all ranks
  double local_res = 0, kin_res = 0;
  mbsAccelGuard guard;
  memset(&guard, 0, sizeof guard);
  if (!e && local) {
    mbsWork *ew = mbsp_engineWork(eng);
    e = accel_localCopy(comm, m, eng, &own, &local_res);
    if (!e) e = accel_kinResidual(comm, m, eng, &kin_res);
    if (!e) { // the guard on both residuals (docs/formulation.md 4.9)
      mbspDecompInfo di;
      mbsp_engineDecomp(eng, &di);
      e = accel_guard(comm, m, 1, di.b0, di.b1, fmax(local_res, kin_res), ew->stat.reason, &guard);
    }
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
  e = mbsp_agreeErr(comm, e);
  mbsSolveStat stat = w ? w->stat : (mbsSolveStat){0};
  if (!e) e = mbsp_allreduceSumLong(comm, &stat.floored, 1);
  if (!e && local) { // free the engine and the workspaces, then the global arrays on rank 0
    mbsp_engineDestroy(&eng);
    mbs_workDestroy(&w);
    mbs_stateDestroy(&s);
    if (rank == 0) {
      wrench = malloc((size_t)m->nbody_g * 6 * sizeof *wrench);
      gqdd = malloc(((size_t)m->nv_g + 1) * sizeof *gqdd);
      glam = malloc(((size_t)m->nlam_g + 1) * sizeof *glam);
      if (!wrench || !gqdd || !glam) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    }
    e = mbsp_agreeErr(comm, e);
    if (!e) e = accel_gatherSlices(comm, own.qdd, own.nv, gqdd);
    if (!e) e = accel_gatherSlices(comm, own.lam, own.nl, glam);
    if (!e) e = accel_gatherSlices(comm, own.wr, 6 * own.nb, wrench);
    e = mbsp_agreeErr(comm, e);
  }
  if (!e) e = mbsp_agreeErr(comm, mbsp_cliGatherRss(comm));

  if (!e && rank == 0 && local) {
    mbsAccelOut a = {m,       NULL,      gqdd, glam, wrench,      m->nbody_g,
                     m->nv_g, m->nlam_g, 1,    tpe,  cli->repeat, local_res,
                     kin_res, &guard,    &rr,  stat, NULL};
    if (mbsp_cliTable(cli)) {
      double qn = 0;
      for (int d = 0; d < m->nv_g; d++) qn += gqdd[d] * gqdd[d];
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
      for (int d = 0; d < show; d++) printf(" %.6g", gqdd[d]);
      printf("%s\n", show < m->nv_g ? " ..." : "");
    }
    if (stat.reason < 0) mbsp_accelWarn(m, stat.reason, stat.iterations, stat.residual);
    accel_guardWarn(m, &guard);
    e = mbsp_emit(cli, comm, cfg, m, mbs_accelJson, &a);
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
    // equation-of-motion residual of the result: ||RNEA(q, qd, qdd) - tau|| / scale, with
    // scale = max(||bias||, ||tau||), bias = RNEA(q, qd, 0) (gravity and velocity terms)
    mbsReal *qdd = malloc((size_t)(m->nv > 0 ? m->nv : 1) * sizeof *qdd);
    mbsReal *acc = malloc((size_t)m->nbody * 6 * sizeof *acc);
    double num = 0, nb = 0, nt = 0;
    if (qdd && acc) {
      memcpy(qdd, w->qdd, (size_t)m->nv * sizeof *qdd);
      memcpy(acc, w->acc, (size_t)m->nbody * 6 * sizeof *acc);
      mbs_rnea(m, w, NULL);
      for (int d = 0; d < m->nv; d++) nb += w->qfrc_inv[d] * w->qfrc_inv[d];
      mbs_rnea(m, w, qdd);
      for (int d = 0; d < m->nv; d++) {
        double r = w->qfrc_inv[d] - w->qfrc[d];
        num += r * r;
        nt += w->qfrc[d] * w->qfrc[d];
      }
      memcpy(w->acc, acc, (size_t)m->nbody * 6 * sizeof *acc);
    } else {
      e = mbs_errSet(MBS_ERR_NOMEM, "mbspar accel: out of memory (equation-of-motion residual)");
    }
    free(acc);
    free(qdd);
    double scale = sqrt(nb > nt ? nb : nt), eom = scale > 0 ? sqrt(num) / scale : sqrt(num);
    // the guard (rank 0 alone); not where the closure equations are rows of the system: the
    // check above does not count their forces yet (fourbar.cfg with jcg: 1.1 for a q̈ within
    // 1e-13 of aba's)
    int guarded = !(m->nloop && mbs_loopUseRows(m, m->opt.solver));
    if (!e && guarded)
      e = accel_guard(comm, m, 0, 0, m->nbody, eom, serial ? 1 : w->stat.reason, &guard);
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
                     guarded ? &guard : NULL,
                     &rr,
                     w->stat,
                     serial ? w : mbsp_engineWork(eng)};
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
    if (!e) accel_guardWarn(m, &guard);
    if (!e) e = mbsp_emit(cli, comm, cfg, m, mbs_accelJson, &a);
  }
  e = mbsp_agreeErr(comm, e);
  mbsp_engineDestroy(&eng);
  free(wrench), free(gqdd), free(glam), free(own.qdd), free(own.lam), free(own.wr);
  mbsp_rankReportFree(&rr);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  return e;
}
