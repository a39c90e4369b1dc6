/// \file verb_cpa.c
/// `mbspar cpa`: critical-path analysis of one evaluation (src/critpath.c, docs/cpa.md). Rank 0
/// measures the iterations by a real solve (unless given), builds and analyses the graph and
/// writes the table; --calibrate times halo exchanges and allreduces on all ranks. Collective.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "flex_cfs.h"
#include "mbspar/mbs_cfs.h"
#include "mbspar/mbs_critpath.h"
#include "mbspar/mbs_loops.h"
#include "mbspar/mbs_solvertype.h"
#include "mbspar/mbspar.h"

// the cpa options (accepted by mbsp_cliParse, read here): the value of --NAME or NULL
// the rows that have a critical-path graph (for the message naming them)
static int mbs_cpaHasGraph(const mbsSolverType *t) {
  return t->cpa_build != NULL;
}

static mbsErr mbs_cpaNumber(const char *opt, const char *v, double lo, double *out) {
  char *end = NULL;
  double x = v ? strtod(v, &end) : 0;
  MBS_CHECK(v && end != v && !*end && x >= lo && isfinite(x), MBS_ERR_USAGE,
            "mbspar cpa: %s %s: expected a number >= %g", opt, v ? v : "", lo);
  *out = x;
  return MBS_OK;
}

typedef struct {
  const mbsModel *m;
  const mbsCpaOptions *o;
  const mbsCpaGraph *g;
  const mbsCpaResult *r;
  const char *iter_source; // "measured" or "given"
  const char *loops_solve; // loop models: "rows", "separators" or "unit" (NULL: no loops)
  int nP;
  int P[16];
  double tp[16], tdist[16], sdist[16]; // list schedule, distributed schedule / span (NAN: none)
  int nmsg[16];
  // per-rank phase sums of the distributed graph (P <= 8; NULL: none), mbs_cpaRankPhases
  long long *rk_flops[16];
  double *rk_sec[16];
  int irounds[16]; // schur: interface rounds of the distributed graph
  int calibrated;
  double t_eval, allreduce; // calibration: seconds per evaluation, per allreduce (NAN: none)
  double t_class[MBS_CPA_CLASS_COUNT]; // calibration: seconds per evaluation in each class
} mbsCpaOut;

// a flexible model's graph: the recursive algorithm's or a constraint-force method's (NULL: rigid)
static const char *mbs_cpaFlexName(const mbsModel *m, int method) {
  const char *a = mbs_solverName(method);
  return !m->nflex_g               ? NULL
         : !strcmp(a, "direct")    ? "flex_cfs_direct"
         : !strcmp(a, "jcg")       ? "flex_cfs_jcg"
         : !strcmp(a, "gs")        ? "flex_cfs_gs"
         : !strcmp(a, "sor")       ? "flex_cfs_sor"
         : !strcmp(a, "jacobi")    ? "flex_cfs_jacobi"
         : !strcmp(a, "chebyshev") ? "flex_cfs_chebyshev"
                                   : "flex_aba";
}

static void mbs_cpaJson(mbsJson *j, const void *ctx) {
  const mbsCpaOut *c = ctx;
  const mbsCpaOptions *o = c->o;
  const mbsCpaResult *r = c->r;
  mbs_jsonBeginObject(j, "cpa");
  const char *fn = mbs_cpaFlexName(c->m, o->method);
  mbs_jsonString(j, "method", fn ? fn : mbs_solverName(o->method));
  if (c->m->nflex_g)
    mbs_jsonString(j, "distributed_method", strcmp(fn, "flex_aba") ? fn : "flex_part");
  mbs_jsonString(j, "grain", mbs_cpaGrainName(o->grain));
  if (c->loops_solve) mbs_jsonString(j, "loops_solve", c->loops_solve);
  if (c->iter_source) {
    mbs_jsonInt(j, "iterations", o->iterations);
    mbs_jsonString(j, "iterations_source", c->iter_source);
    mbs_jsonBool(j, "converged", o->converged == 1);
    if (o->converged == 2) mbs_jsonBool(j, "stagnated", 1);
    if (o->cg) { // jcg, chebyshev: the iterations after which it went on from b - A x
      mbs_jsonIntArray(j, "cg_restarts", o->cg->it, o->cg->n);
      if (mbs_solverCaps(o->method)->segments) // the segment of each (sweeps count from 1)
        mbs_jsonIntArray(j, "cg_restart_segments", o->cg->seg, o->cg->n);
    }
    mbs_jsonInt(j, "spectrum_estimate_iterations", o->spec_iterations);
    mbs_jsonBool(j, "spectrum_estimate_converged", o->spec_converged);
    if (o->cheb) { // Chebyshev's segments: estimate steps, sweeps, stall-watch windows
      mbs_jsonBeginArray(j, "chebyshev_segments");
      for (int k = 0; k < o->cheb->nseg; k++) {
        mbs_jsonBeginObject(j, NULL);
        mbs_jsonInt(j, "estimate_iterations", o->cheb->est[k]);
        mbs_jsonInt(j, "sweeps", o->cheb->sweep[k]);
        mbs_jsonInt(j, "watch_window", o->cheb->win[k]);
        // the estimate's CG stopped on its recursion: b - A x met tol (1) or not (2); 0: no stop
        mbs_jsonInt(j, "estimate_confirmed", o->cheb->econf[k]);
        mbs_jsonEndObject(j);
      }
      mbs_jsonEndArray(j);
    }
  }
  mbs_jsonInt(j, "nodes", c->g->nnode);
  mbs_jsonInt(j, "edges", c->g->nedge);
  mbs_jsonBeginObject(j, "cost_model");
  mbs_jsonNumber(j, "flop_time_s", o->flop_time);
  mbs_jsonNumber(j, "latency_s", o->latency);
  mbs_jsonNumber(j, "bandwidth_Bps", o->bandwidth);
  mbs_jsonBool(j, "calibrated", c->calibrated);
  mbs_jsonNumber(j, "measured_eval_s", c->t_eval);
  mbs_jsonNumber(j, "measured_allreduce_s", c->allreduce);
  mbs_jsonBeginArray(j, "classes");
  for (int k = 0; k < MBS_CPA_CLASS_COUNT; k++) {
    if (!c->g->class_flops[k]) continue;
    mbs_jsonBeginObject(j, NULL);
    mbs_jsonString(j, "class", mbs_cpaClassName(k));
    mbs_jsonInt(j, "flops", c->g->class_flops[k]);
    mbs_jsonNumber(j, "measured_s", c->calibrated ? c->t_class[k] : NAN);
    mbs_jsonNumber(j, "s_per_flop", o->class_time[k] > 0 ? o->class_time[k] : o->flop_time);
    mbs_jsonEndObject(j);
  }
  mbs_jsonEndArray(j);
  mbs_jsonEndObject(j);
  mbs_jsonInt(j, "work_flops", r->work_flops);
  mbs_jsonNumber(j, "work_s", r->work);
  mbs_jsonInt(j, "span_flops", r->span_flops);
  mbs_jsonNumber(j, "span_flop_times", r->span / o->flop_time);
  mbs_jsonNumber(j, "span_s", r->span);
  mbs_jsonNumber(j, "parallelism", r->parallelism);
  mbs_jsonBeginObject(j, "critical_path");
  mbs_jsonInt(j, "nodes", r->path_nodes);
  mbs_jsonBeginArray(j, "by_kind");
  for (int k = 0; k < MBS_CPA_KIND_COUNT; k++) {
    if (!r->kind_nodes[k]) continue;
    mbs_jsonBeginObject(j, NULL);
    mbs_jsonString(j, "kind", mbs_cpaKindName(k));
    mbs_jsonInt(j, "nodes", r->kind_nodes[k]);
    mbs_jsonInt(j, "flops", r->kind_flops[k]);
    mbs_jsonNumber(j, "time_s", r->kind_time[k]);
    mbs_jsonEndObject(j);
  }
  mbs_jsonEndArray(j);
  mbs_jsonEndObject(j);
  mbs_jsonBeginArray(j, "schedule");
  for (int i = 0; i < c->nP; i++) {
    int P = c->P[i];
    mbs_jsonBeginObject(j, NULL);
    mbs_jsonInt(j, "P", P);
    mbs_jsonNumber(j, "list_s", c->tp[i]);
    mbs_jsonNumber(j, "list_speedup", r->work / c->tp[i]);
    mbs_jsonNumber(j, "brent_s", r->work / P + r->span);
    mbs_jsonNumber(j, "lower_bound_s", fmax(r->work / P, r->span));
    mbs_jsonNumber(j, "distributed_s", c->tdist[i]);
    mbs_jsonNumber(j, "distributed_speedup", r->work / c->tdist[i]);
    mbs_jsonNumber(j, "distributed_span_s", c->sdist[i]);
    mbs_jsonInt(j, "distributed_messages", c->nmsg[i]);
    if (c->rk_flops[i]) { // what each rank computes, by the engine phase that times it
      mbs_jsonBeginArray(j, "ranks");
      for (int q = 0; q < P; q++) {
        mbs_jsonBeginObject(j, NULL);
        mbs_jsonInt(j, "rank", q);
        for (int ph = 0; ph < MBS_CPA_PHASE_COUNT; ph++) {
          char key[40];
          snprintf(key, sizeof key, "%s_flops", mbs_cpaPhaseName(ph));
          mbs_jsonInt(j, key, c->rk_flops[i][q * MBS_CPA_PHASE_COUNT + ph]);
          snprintf(key, sizeof key, "%s_s", mbs_cpaPhaseName(ph));
          mbs_jsonNumber(j, key, c->rk_sec[i][q * MBS_CPA_PHASE_COUNT + ph]);
        }
        mbs_jsonEndObject(j);
      }
      mbs_jsonEndArray(j);
    }
    mbs_jsonInt(j, "interface_rounds", c->irounds[i]);
    mbs_jsonEndObject(j);
  }
  mbs_jsonEndArray(j);
  mbs_jsonEndObject(j);
}

// calibration: seconds per evaluation of the real kernels (rank 0), message latency and
// bandwidth by halo exchanges between ranks 0 and 1, and the allreduce time (all ranks)
static mbsErr mbs_cpaCalibrate(mbspComm *comm, const mbsModel *m, mbsCpaOptions *o,
                               mbsCpaOut *out) {
  int rank = mbsp_rank(comm), size = mbsp_size(comm);
  mbsErr e = MBS_OK;
  out->calibrated = 1;
  if (size >= 2) {
    static const int cnt[2] = {6, 65536};
    double t[2] = {0, 0};
    for (int k = 0; k < 2 && !e; k++) {
      int nbr = rank == 0 ? 1 : 0, nn = rank < 2 ? 1 : 0;
      mbspHalo *h = NULL;
      e = mbsp_agreeErr(comm, mbsp_haloCreate(comm, nn, &nbr, &cnt[k], &cnt[k], MBSP_HALO_P2P, &h));
      if (e) break;
      int reps = k == 0 ? 2000 : 50;
      for (int it = 0; it < 10 && !e; it++) e = mbsp_haloExchange(h);
      if (!e) e = mbsp_barrier(comm);
      double t0 = mbsp_wtime();
      for (int it = 0; it < reps && !e; it++) e = mbsp_haloExchange(h);
      t[k] = (mbsp_wtime() - t0) / reps;
      mbsp_haloDestroy(&h);
      e = mbsp_agreeErr(comm, e);
    }
    if (!e) {
      o->latency = t[0];
      if (t[1] > t[0]) o->bandwidth = 8.0 * (cnt[1] - cnt[0]) / (t[1] - t[0]);
    }
  }
  if (!e) { // allreduce of 2 doubles (CG's fused dot products)
    double v[2] = {1, 2};
    e = mbsp_barrier(comm);
    double t0 = mbsp_wtime();
    for (int it = 0; it < 1000 && !e; it++) e = mbsp_allreduceSum(comm, v, 2);
    out->allreduce = (mbsp_wtime() - t0) / 1000;
    e = mbsp_agreeErr(comm, e);
  }
  if (e || rank != 0) return e;
  // the real kernels: repeat one evaluation for about 0.2 s
  mbsState *s = NULL;
  mbsWork *w = NULL;
  mbsCfs *c = NULL;
  // the method's options on a view of the model (a struct copy sharing its arrays): the built
  // model is not written
  mbsModel view = *m;
  view.opt.solver = o->method;
  view.opt.warm_start = MBS_WARM_NONE;
  m = &view;
  e = mbs_stateCreate(m, &s);
  if (!e) e = mbs_workCreate(m, &w);
  if (!e) e = mbs_workEnableMethod(m, w);
  if (!e && mbs_cpaIterative(o->method))
    view.opt.tol = 0, view.opt.max_iter = o->iterations; // exactly the graph's iterations
  if (!e && !mbs_solverIsBaseline(o->method)) e = mbs_cfsCreate(m, 0, m->nbody, &c);
  // one evaluation untimed first: the first touches the workspace (page faults, cold caches;
  // at 65536 bodies it cost as much as two warm ones), which the repeated evaluations of a run do
  // not pay; then the timers start from zero
  if (!e) e = c ? mbs_cfsForward(m, s, w, c) : mbs_forward(m, s, w);
  for (int k = 0; k < MBS_TIMER_COUNT; k++) w->timer[k] = (mbsTimer){0};
  int reps = 0;
  double t0 = mbsp_wtime(), t1 = t0;
  while (!e && (t1 - t0 < 0.2 || reps < 3) && reps < 100000) {
    e = c ? mbs_cfsForward(m, s, w, c) : mbs_forward(m, s, w);
    reps++;
    t1 = mbsp_wtime();
  }
  if (!e) { // the phase timers of those evaluations give the seconds of each kernel class
    const mbsTimer *tm = w->timer;
    double kin = tm[MBS_TIMER_POSITION].total + tm[MBS_TIMER_VELOCITY].total;
    out->t_eval = (t1 - t0) / reps;
    out->t_class[MBS_CPA_CLASS_KIN] = kin / reps;
    if (c) {
      out->t_class[MBS_CPA_CLASS_BLOCKS] = tm[MBS_TIMER_ASSEMBLY].total / reps;
      out->t_class[MBS_CPA_CLASS_SOLVE] = tm[MBS_TIMER_SOLVE].total / reps;
      out->t_class[MBS_CPA_CLASS_FINISH] = tm[MBS_TIMER_ACCEL].total / reps;
    } else {
      out->t_class[MBS_CPA_CLASS_DYN] = (tm[MBS_TIMER_EVAL].total - kin) / reps;
    }
  }
  mbs_cfsDestroy(&c);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  return e;
}

mbsErr mbsp_verbCpa(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, const mbsModel *m) {
  int rank = mbsp_rank(comm);
  mbsCpaOptions o;
  mbsCpaOut out;
  mbsCpaGraph *g = NULL;
  mbsCpaResult r;
  mbsErr e = MBS_OK;
  int pmax = 1024, have_r = 0;
  memset(&out, 0, sizeof out);
  memset(&r, 0, sizeof r);
  out.t_eval = out.allreduce = NAN;
  // loop models (docs/cpa.md "Loop models"): the graph of the loop solve, with the rank of the
  // closure equations at q0 (model.loop_asm) and, for the iterative methods, the measured tree
  // solve's iteration count for every one of the m + 2 solves (an estimate)
  mbs_cpaDefaults(&o);
  o.latency = cfg->cpa.latency, o.bandwidth = cfg->cpa.bandwidth; // config group cpa
  o.flop_time = cfg->cpa.flop_time;

  // options (every rank parses the same command line)
  const char *a;
  o.method = m->opt.solver;
  if ((a = mbsp_cliArg(cli, "--method"))) o.method = mbs_solverFromName(a);
  int fdirect = 0;  // flexible bodies with --method direct or jcg: the constraint-force graphs
  if (m->nflex_g) { // flexible bodies: the recursive algorithm's graph (docs/cpa.md "Flexible")
    int aba = mbs_solverFromName("aba");
    fdirect = a && (!strcmp(a, "direct") || !strcmp(a, "jcg") || !strcmp(a, "gs") ||
                    !strcmp(a, "sor") || !strcmp(a, "jacobi") || !strcmp(a, "chebyshev"));
    if (a && o.method != aba && strcmp(a, "flex_aba") && !fdirect)
      e = mbs_errSet(MBS_ERR_UNSUPPORTED,
                     "mbspar cpa: --method %s: a model with flexible bodies has the graphs of the "
                     "recursive algorithm (--method aba or flex_aba; over ranks the distributed "
                     "elimination) and of the constraint-force methods direct, jcg, gs, sor, "
                     "jacobi and chebyshev (not petsc; docs/cpa.md)",
                     a);
    else if (mbsp_cliArg(cli, "--calibrate"))
      e = mbs_errSet(MBS_ERR_UNSUPPORTED,
                     "mbspar cpa: --calibrate times a rigid evaluation; a model with flexible "
                     "bodies is not calibrated yet (time it with accel --repeat)");
    o.method = fdirect ? mbs_solverFromName(a) : aba;
  }
  int iterative = mbs_cpaIterative(o.method);
  const mbsSolverType *t = mbs_solverFind(o.method);
  // distributed graphs on P ranks: the iterative constraint-force solvers and the exact solver
  // (flexible models: the distributed elimination, flex_part; docs/flexible.md 11)
  int dist = mbs_cpaDistributed(o.method) || m->nflex_g;
  if (!e && (!t || !t->cpa_build)) { // the solver table names each method's graph
    char with[256];
    mbs_solverNamesIf(with, sizeof with, mbs_cpaHasGraph);
    e = mbs_errSet(MBS_ERR_UNSUPPORTED,
                   "mbspar cpa: --method %s has no critical-path graph (graphs exist for %s)",
                   a ? a : mbs_solverName(o.method), with);
  }
  if (!e && (a = mbsp_cliArg(cli, "--grain")) && (o.grain = mbs_cpaGrainFromName(a)) < 0)
    e = mbs_errSet(MBS_ERR_USAGE, "mbspar cpa: --grain %s: expected op, block or body", a);
  double x = 0;
  if (!e && (a = mbsp_cliArg(cli, "--iterations"))) {
    e = mbs_cpaNumber("--iterations", a, 0, &x);
    o.iterations = (int)x;
    out.iter_source = "given";
    // a spectrum estimate that is part of the solve is assumed to run its full length
    const mbsSolverType *ts = mbs_solverCaps(o.method);
    if (ts->cpa_spec && !m->nflex_g) o.spec_iterations = ts->cpa_spec(m, o.iterations);
    if (ts->cpa_spec && m->nflex_g) { // flexible: up to 40 CG steps, at most the rows
      int rows = 0;
      for (int b = 0; b < m->nbody; b++) rows += 6 - m->body_dofnum[b];
      o.spec_iterations = rows < 40 ? rows : 40;
    }
  }
  if (!e && (a = mbsp_cliArg(cli, "--procs"))) {
    e = mbs_cpaNumber("--procs", a, 1, &x);
    pmax = x > 65536 ? 65536 : (int)x;
  }
  if (!e && (a = mbsp_cliArg(cli, "--latency"))) e = mbs_cpaNumber("--latency", a, 0, &o.latency);
  if (!e && (a = mbsp_cliArg(cli, "--bandwidth")))
    e = mbs_cpaNumber("--bandwidth", a, 1e-300, &o.bandwidth);
  if (!e && (a = mbsp_cliArg(cli, "--flop-time")))
    e = mbs_cpaNumber("--flop-time", a, 1e-300, &o.flop_time);
  o.criterion = m->opt.criterion;
  o.check_every = m->opt.check_every;
  // --out DIR: created here, and an earlier cpa.json is not overwritten without --force
  static const char *const files[] = {"cpa.json"};
  if (!e && rank == 0) e = mbsp_outPrepare(cli, files, 1);
  e = mbsp_agreeErr(comm, e);

  // Chebyshev's segments (estimates, sweeps, stall watches) of the measured solve
  mbsChebTrace cheb = {0};
  mbsCgTrace cg = {0}; // jcg's restarts from its true residual
  // the engine's default for this method on this model may put the closure equations into the
  // system (solver.loops = rows, docs/loops.md 8.4): the graph and the measured solve follow it
  int lrows = m->nloop && iterative && mbs_loopUseRows(m, o.method);
  if (m->nloop)
    out.loops_solve = lrows ? "rows" : mbs_loopSeparators(m, o.method) ? "separators" : "unit";
  // flexible jcg, gs, sor: the iterations of the flexible system's solve at the initial state
  // (rank 0)
  if (!e && iterative && m->nflex_g && !out.iter_source) {
    out.iter_source = "measured";
    o.converged = 1; // (the flexible iterations return at the tolerance or fail)
    int fm = MBS_FCFS_JCG;
    for (int k = 0; k < MBS_FCFS_NMETHOD; k++)
      if (!strcmp(mbs_flexCfsName(k), mbs_solverName(o.method))) fm = k;
    if (rank == 0) e = mbs_flexCfsIterations(m, fm, m->opt.tol, &o.iterations, &o.spec_iterations);
    e = mbsp_agreeErr(comm, e);
    if (!e) e = mbsp_bcastBytes(comm, &o.iterations, sizeof o.iterations, 0);
    if (!e) e = mbsp_bcastBytes(comm, &o.spec_iterations, sizeof o.spec_iterations, 0);
    o.spec_converged = 0;
  }
  // J-CG iterations: measured by a real solve at the initial state unless given
  if (!e && iterative && !out.iter_source) {
    out.iter_source = "measured";
    if (rank == 0) {
      mbsState *s = NULL;
      mbsWork *w = NULL;
      mbsCfs *c = NULL;
      mbsModel view = *m; // the method on a view of the model: the model is not written
      view.opt.solver = o.method;
      const mbsModel *mv = &view;
      e = mbs_stateCreate(mv, &s);
      if (!e) e = mbs_workCreate(mv, &w);
      if (!e) e = mbs_cfsCreate(mv, 0, mv->nbody, &c);
      // the closure rows in the system, as the engine runs them; the unit path measures solve 0
      // (the spring-dampers' wrenches, no loop wrenches yet)
      if (!e && lrows) e = mbs_cfsEnableLoopRows(mv, c, 1);
      if (!e) {
        mbs_fwdPosition(mv, s, w);
        mbs_fwdVelocity(mv, s, w);
        if (mv->nforce) mbs_fwdForces(mv, w);
        e = mbs_cfsSolve(mv, s, w, c, NULL);
      }
      if (!e) {
        o.iterations = w->stat.iterations;
        o.converged = mbs_cpaConvergedOf(w->stat.reason);
        o.spec_iterations = c->spec_it;
        o.spec_converged = c->spec_conv;
        cheb = c->cheb;
        cg = c->cg;
        if (w->stat.reason < 0 && w->stat.reason != MBS_REASON_DIVERGED_MAXIT &&
            w->stat.reason != MBS_REASON_DIVERGED_STAGNATED)
          e = mbs_errSet(MBS_ERR_UNSUPPORTED,
                         "mbspar cpa: the measured %s solve stopped early (%s after %d "
                         "iterations); the graph models converged or max_iter solves: give "
                         "--iterations K to analyse K iterations",
                         mbs_solverName(o.method), mbs_reasonName(w->stat.reason), o.iterations);
      }
      mbs_cfsDestroy(&c);
      mbs_workDestroy(&w);
      mbs_stateDestroy(&s);
    }
    e = mbsp_agreeErr(comm, e);
    double v[4] = {o.iterations, o.converged, o.spec_iterations, o.spec_converged};
    if (!e) e = mbsp_bcastBytes(comm, v, sizeof v, 0);
    o.iterations = (int)v[0], o.converged = (int)v[1];
    o.spec_iterations = (int)v[2], o.spec_converged = (int)v[3];
    if (!e) e = mbsp_bcastBytes(comm, &cheb, sizeof cheb, 0);
    if (cheb.nseg > 0 && mbs_solverCaps(o.method)->segments) o.cheb = &cheb;
    if (!e) e = mbsp_bcastBytes(comm, &cg, sizeof cg, 0);
    if (cg.n > 0 && mbs_solverCaps(o.method)->restarts) o.cg = &cg;
  }
  if (!e && mbsp_cliArg(cli, "--calibrate") && mbs_solverCaps(o.method)->engine_only)
    e = mbs_errSet(MBS_ERR_UNSUPPORTED,
                   "mbspar cpa: --calibrate times one evaluation on rank 0, but schur runs on the "
                   "distributed engine only (time it with accel --repeat; give --latency, "
                   "--bandwidth, --flop-time)");
  if (!e && mbsp_cliArg(cli, "--calibrate") && (m->nloop || m->nforce))
    e = mbs_errSet(MBS_ERR_UNSUPPORTED,
                   "mbspar cpa: --calibrate times a tree evaluation; models with closed loops or "
                   "spring-dampers are not calibrated yet (time them with accel --repeat)");
  if (!e && mbsp_cliArg(cli, "--calibrate")) e = mbs_cpaCalibrate(comm, m, &o, &out);
  if (!e) e = mbsp_agreeErr(comm, mbsp_cliGatherRss(comm));
  if (e || rank != 0) return mbsp_agreeErr(comm, e);

  // the graph, its analysis, list schedules on P = 1, 2, 4, ... processors
  e = mbs_cpaBuild(m, &o, &g);
  if (!e) e = mbs_cpaAnalyse(g, &r);
  have_r = !e;
  if (!e && out.calibrated && isfinite(out.t_eval) && r.work_flops > 0) {
    // seconds per flop of the real evaluation (messages' adds) and of each kernel class; rebuild
    // with the measured costs
    o.flop_time = out.t_eval / (double)r.work_flops;
    for (int k = 0; k < MBS_CPA_CLASS_COUNT; k++)
      if (g->class_flops[k] > 0 && out.t_class[k] > 0)
        o.class_time[k] = out.t_class[k] / (double)g->class_flops[k];
    mbs_cpaResultFree(&r);
    mbs_cpaDestroy(&g);
    have_r = 0;
    e = mbs_cpaBuild(m, &o, &g);
    if (!e) e = mbs_cpaAnalyse(g, &r);
    have_r = !e;
  }
  out.m = m, out.o = &o, out.g = g, out.r = &r;
  for (int P = 1; !e && P <= pmax && out.nP < 16; P *= 2) {
    int i = out.nP++;
    out.P[i] = P;
    out.tp[i] = out.tdist[i] = out.sdist[i] = NAN;
    out.nmsg[i] = 0, out.irounds[i] = 0;
    if (g->fine) continue; // flop grain: Brent bound only
    e = mbs_cpaSchedule(g, P, &out.tp[i]);
    if (!e && dist && P <= m->nbody) {
      // owner-computes on P ranks with messages
      mbsCpaOptions od = o;
      mbsCpaGraph *gd = NULL;
      mbsCpaResult rd;
      od.ranks = P;
      if (m->nflex_g && !fdirect) od.method = mbs_solverFromName("schur"); // flex_part's graph
      e = mbs_cpaBuild(m, &od, &gd);
      if (!e) e = mbs_cpaAnalyse(gd, &rd);
      if (!e) {
        e = mbs_cpaSchedule(gd, P, &out.tdist[i]);
        out.sdist[i] = rd.span;
        out.nmsg[i] = rd.nmsg;
        if (!e && P <= 8) {
          size_t nrp = (size_t)P * MBS_CPA_PHASE_COUNT;
          out.rk_flops[i] = malloc(nrp * sizeof *out.rk_flops[i]);
          out.rk_sec[i] = malloc(nrp * sizeof *out.rk_sec[i]);
          if (out.rk_flops[i] && out.rk_sec[i]) {
            mbs_cpaRankPhases(gd, out.rk_flops[i], out.rk_sec[i]);
          } else { // the report leaves the per-rank sums out
            free(out.rk_flops[i]), free(out.rk_sec[i]);
            out.rk_flops[i] = NULL, out.rk_sec[i] = NULL;
          }
        }
        out.irounds[i] = gd->iface_rounds;
        mbs_cpaResultFree(&rd);
      }
      mbs_cpaDestroy(&gd);
    }
  }
  if (!e && (a = mbsp_cliArg(cli, "--dot"))) e = mbs_cpaWriteDot(g, &r, a, 2000);

  // table
  if (!e && mbsp_cliTable(cli)) {
    const char *fn = mbs_cpaFlexName(m, o.method);
    printf("mbspar cpa %s: method %s", cfg->filename, fn ? fn : mbs_solverName(o.method));
    if (iterative) {
      printf(" (%d iterations, %s%s", o.iterations, out.iter_source,
             o.converged == 2 ? ", stagnated"
             : o.converged    ? ", converged"
                              : "");
      if (o.cg) printf("; %d restart%s from the true residual", o.cg->n, o.cg->n > 1 ? "s" : "");
      if (o.spec_iterations)
        printf("; spectrum estimate %d CG steps%s", o.spec_iterations,
               o.spec_converged ? ", converged" : "");
      if (o.cheb && o.cheb->nseg > 1)
        printf("; %d re-estimate(s) of the interval after stalls", o.cheb->nseg - 1);
      printf(")");
    }
    printf(", grain %s, %d bodies, %d dofs", mbs_cpaGrainName(o.grain), m->nbody, m->nv);
    if (m->nflex_g)
      printf(" (distrib: %s%s)", fdirect ? fn : "flex_part",
             fdirect ? ", equal body ranges" : ", the ranges over the ranks");
    if (out.loops_solve)
      printf(", %d closure equations %s", m->nlam_loop,
             strcmp(out.loops_solve, "rows") == 0         ? "as rows of the system"
             : strcmp(out.loops_solve, "separators") == 0 ? "and the cut joints as separators"
                                                          : "by unit solves");
    printf("\n");
    printf("  graph: %d nodes, %d edges; cost: %.3e s/flop%s, latency %.3e s, bandwidth %.3e B/s\n",
           g->nnode, g->nedge, o.flop_time, out.calibrated ? " (calibrated)" : "", o.latency,
           o.bandwidth);
    if (out.calibrated) {
      printf("  calibration: %.3e s per evaluation, %.3e s per allreduce of 2 doubles\n",
             out.t_eval, out.allreduce);
      for (int k = 0; k < MBS_CPA_CLASS_COUNT; k++)
        if (g->class_flops[k] > 0)
          printf("    %-18s %12lld flops  %.3e s measured  %.3e s/flop\n", mbs_cpaClassName(k),
                 g->class_flops[k], out.t_class[k],
                 o.class_time[k] > 0 ? o.class_time[k] : o.flop_time);
    }
    printf("  %-24s %14lld flops  %.4e s\n", "T1 (work)", r.work_flops, r.work);
    printf("  %-24s %14.0f flops  %.4e s  (%d nodes)\n", "T_inf (critical path)",
           r.span / o.flop_time, r.span, r.path_nodes);
    printf("  %-24s %14.2f\n", "T1/T_inf (max speedup)", r.parallelism);
    printf("\n  %6s %12s %9s %12s", "P", "list T_P [s]", "speedup", "T1/P+T_inf");
    if (dist) printf(" %14s %9s %7s %7s", "distrib T_P", "speedup", "msgs", "rounds");
    printf("\n");
    for (int i = 0; i < out.nP; i++) {
      int P = out.P[i];
      if (isfinite(out.tp[i]))
        printf("  %6d %12.4e %9.2f %12.4e", P, out.tp[i], r.work / out.tp[i], r.work / P + r.span);
      else
        printf("  %6d %12s %9s %12.4e", P, "-", "-", r.work / P + r.span);
      if (dist) {
        if (isfinite(out.tdist[i]))
          printf(" %14.4e %9.2f %7d %7d", out.tdist[i], r.work / out.tdist[i], out.nmsg[i],
                 out.irounds[i]);
        else
          printf(" %14s %9s %7s %7s", "-", "-", "-", "-");
      }
      printf("\n");
    }
    printf("\n  critical path by kind:\n  %-22s %8s %14s %7s\n", "kind", "nodes", "flops", "share");
    for (int k = 0; k < MBS_CPA_KIND_COUNT; k++)
      if (r.kind_nodes[k])
        printf("  %-22s %8lld %14lld %6.1f%%\n", mbs_cpaKindName(k), r.kind_nodes[k],
               r.kind_flops[k], r.span > 0 ? 100 * r.kind_time[k] / r.span : 0);
  }
  if (!e) e = mbsp_emit(cli, comm, cfg, m, mbs_cpaJson, &out);
  if (have_r) mbs_cpaResultFree(&r);
  mbs_cpaDestroy(&g);
  for (int i = 0; i < 16; i++) free(out.rk_flops[i]), free(out.rk_sec[i]);
  return mbsp_agreeErr(comm, e);
}
