/// \file sim.c
/// `mbspar run`: the simulation loop.
///
/// State ownership: rank r owns the joint coordinates and rates of its body range (contiguous q
/// and qd slices); the integrator's distributed vector is [q_own; qd_own]. Every right-side
/// evaluation runs the distributed engine (kinematics prefix, constraint-force solve, joint
/// accelerations) and every rank integrates its own slice concurrently (PETSc TS). The serial
/// baselines (solver.method = aba | crba) run on rank 0, which then owns the whole state.
///
/// Communication per step: whatever the engine needs per evaluation, one allreduce per
/// evaluation to agree on errors, one per step (a sum of five numbers) for the power of the
/// nonconservative forces, the signal flags and the decision to flush the rows (and the adaptive
/// error norm inside TS). At output steps the state is gathered to rank 0 (O(n) bytes), which
/// writes the files and computes the energies; checkpoints also gather the warm-start history.
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sim_impl.h"
#include "solver_auto.h"

static volatile sig_atomic_t mbsp_sim_signal = 0;

static volatile sig_atomic_t mbsp_sim_sigints = 0;

static void mbsp_simOnSignal(int sig) {
  // a second SIGINT (Ctrl-C pressed again) ends the process at once, by the default action
  // (async-signal-safe: write, sigaction, raise)
  if (sig == SIGINT && mbsp_sim_sigints++ > 0) {
    static const char msg[] = "mbspar: second SIGINT: stopping at once (no checkpoint)\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGINT, &dfl, NULL);
    raise(SIGINT);
    return;
  }
  if (!mbsp_sim_signal) mbsp_sim_signal = sig; // the first one names the stop
}

void mbsp_simInstallSignals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = mbsp_simOnSignal;
  sa.sa_flags = SA_RESTART; // system calls of the libraries (MPI, I/O) go on after the flag is set
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGUSR1, &sa, NULL);
  sigaction(SIGINT, &sa, NULL); // Ctrl-C: as SIGTERM; a second one ends at once
}

int mbsp_simPendingSignal(void) {
  return mbsp_sim_signal;
}

// the name of a stopping signal in run.json and the message
static const char *mbsp_simSigName(int sig) {
  return sig == SIGUSR1 ? "SIGUSR1" : sig == SIGINT ? "SIGINT" : "SIGTERM";
}

// ---------------------------------------------------------------- outputs

// URDF joint limits at an output row (rank 0, the gathered state): a joint found outside its
// range after being inside (or at the first row) is one crossing; the first of the run is
// warned about in one line (mbspar does not model limits, docs/urdf.md)
static void mbsp_simLimits(mbspSim *S, double t) {
  for (int k = 0; k < S->nlim; k++) {
    double q = S->sout->q[S->lim_q[k]];
    int out = q < S->lim_lo[k] || q > S->lim_hi[k];
    if (out && !S->lim_out[k]) {
      S->lim_cross[k]++;
      if (!S->lim_warned)
        fprintf(stderr,
                "mbspar: warning: joint %s left its URDF limits [%g, %g] at t = %.6g s; mbspar "
                "does not model limits (docs/urdf.md)\n",
                S->lim_name[k], S->lim_lo[k], S->lim_hi[k], t);
      S->lim_warned = 1;
    }
    S->lim_out[k] = (unsigned char)out;
  }
}

// one output row (collective: gathers; rank 0 writes)
static mbsErr mbsp_simOutput(mbspSim *S, double t, long step, double *ke, double *pe, double *wk) {
  MBS_TIC(S->tim, MBS_TIMER_OUTPUT);
  MBS_CALL(mbsp_simGatherState(S));
  // per-body outputs, computed by the owners of the bodies; CSV: the pose rows to rank 0
  if (S->a->cfg && S->a->cfg->torques) // the joint forces of the row's time
    mbs_torquesAt(S->a->cfg->torques, S->m, t, mbsp_bodyOutState(S->bo)->tau);
  MBS_CALL(mbsp_bodyOutCompute(S->bo, t, S->y, S->y + (S->q1 - S->q0)));
  if (S->out.ops->gather_poses) MBS_CALL(mbsp_bodyOutGather(S->bo, S->out.poses));
  double wsum = S->work; // the same on every rank (the power is summed over the ranks per step)
  double en[4] = {0, 0, 0, 0}, avg = 0;
  mbsErr e = MBS_OK;
  if (S->rank == 0) {
    const mbsModel *m = S->m;
    mbs_fwdPosition(m, S->sout, S->wout);
    mbs_fwdVelocity(m, S->sout, S->wout);
    double k = mbs_kineticEnergy(m, S->wout), p = mbs_potentialEnergy(m, S->sout, S->wout);
    if (ke) *ke = k, *pe = p, *wk = wsum;
    long de = S->evals - S->evals_out, di = S->iters - S->iters_out;
    en[0] = k, en[1] = p, en[2] = k + p, en[3] = wsum, avg = de > 0 ? (double)di / de : 0.0;
    // no silent NaN: the energies of the row (a finite state can still overflow them)
    static const char *const enames[4] = {"kinetic energy", "potential energy", "total energy",
                                          "work"};
    char phase[160];
    snprintf(phase, sizeof phase, "run: the output row at t = %.9g s (step %ld)", t, step);
    e = mbs_checkFiniteScalars(en, enames, 4, phase);
    if (!e) mbsp_simLimits(S, t);
    if (!e && m->nloop) { // the closure error of the row's state
      mbs_loopViolation(m, S->wout, &S->last_pos, &S->last_rot, &S->last_vel);
      S->viol_pos = fmax(S->viol_pos, S->last_pos), S->viol_rot = fmax(S->viol_rot, S->last_rot);
      S->viol_vel = fmax(S->viol_vel, S->last_vel);
    }
  }
  MBS_CALL(mbsp_agreeErr(S->comm, e)); // rank 0 alone may have failed
  int nqo = S->q1 - S->q0;
  double viol[3] = {S->last_pos, S->last_rot, S->last_vel};
  mbspOutRow r = {
      t,  S->y, S->y + nqo, S->sout ? S->sout->q : NULL, S->sout ? S->sout->qd : NULL, S->out.poses,
      en, avg};
  // driven joints (rank 0): their forces at the row's state (sim_drive.c: evaluated there)
  MBS_CALL(mbsp_outRow(&S->out, &r, step, S->evals, S->m->nloop ? viol : NULL,
                       S->ndrv ? S->drv_last : NULL));
  S->unflushed++;
  S->evals_out = S->evals, S->iters_out = S->iters;
  MBS_TOC(S->tim, MBS_TIMER_OUTPUT);
  return MBS_OK;
}

// how progress is shown: 1 = a live line rewritten with \r (stderr is a terminal, or rank 0
// runs under an MPI launcher that forwards its stderr to the terminal it was started from:
// stderr is then a pipe, but the process still has that controlling terminal), 0 = a plain line
// every --progress seconds (batch jobs, logs)
static int mbsp_progressLive(void) {
  if (isatty(2)) return 1;
  int launched = getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
  if (!launched || getenv("SLURM_JOB_ID")) return 0;
  FILE *tty = fopen("/dev/tty", "r");
  if (!tty) return 0;
  fclose(tty);
  return 1;
}

static void mbsp_progress(mbspSim *S, double t, long step, int final) {
  if (S->rank != 0 || S->a->quiet) return;
  double now = mbsp_wtime(), wall = now - S->wall0;
  // --progress SEC: plain lines every SEC seconds (logs), whatever stderr is
  if (S->live < 0) S->live = S->a->progress_every > 0 ? 0 : mbsp_progressLive();
  int tty = S->live;
  double every = tty ? 0.2 : S->a->progress_every > 0 ? S->a->progress_every : 10;
  if (!final && now - S->last_progress < every) return;
  S->last_progress = now;
  // rate and ETA from the steps and the simulated time of this invocation (a restart starts
  // counting at its checkpoint)
  double tend = S->m->opt.t_end, done = (t - S->t_start) / (tend - S->t_start);
  long nstep = step - S->step_start;
  double rate = wall > 0 ? nstep / wall : 0.0;
  double avg = S->evals ? (double)S->iters / S->evals : 0;
  char eta[32];
  if (final)
    snprintf(eta, sizeof eta, "0 s");
  else if (done > 0 && wall > 0)
    snprintf(eta, sizeof eta, "%.1f s", wall * (1 - done) / done);
  else
    snprintf(eta, sizeof eta, "-");
  fprintf(stderr,
          "%s[%5.1f%%] t = %.6g / %.6g s  step %ld  wall %.1f s  ETA %s  %.3g steps/s  avg iter "
          "%.1f%s",
          tty ? "\r" : "", 100 * (t / tend), t, tend, step, wall, eta, rate, avg,
          tty ? (final ? "\n" : "   ") : "\n");
  fflush(stderr);
}

typedef struct {
  const mbspSim *S;
  const mbspRankReport *rr; // NULL: a failed run (no collective report pieces)
  double t, ke, pe, wk, dt_last;
  long steps, rejected;
  const char *ts_type, *method, *stop; // method: the one TS ran (after -ts_* options)
  mbsErr err;                          // a failed run: its error and message
  const char *errmsg;
} mbspRunOut;

static void mbsp_runJson(mbsJson *j, const void *ctx) {
  const mbspRunOut *o = ctx;
  const mbspSim *S = o->S;
  const mbsModel *m = S->m;
  mbs_jsonString(j, "formulation", mbs_solverCaps(m->opt.solver)->natural ? "natural" : "joint");
  if (S->nat) mbsp_simNatJson(S, j);
  mbs_jsonBeginObject(j, "solver");
  mbs_jsonString(j, "method", mbs_solverName(m->opt.solver));
  const mbsSolverAuto *sa = S->a->cfg ? &S->a->cfg->sauto : NULL;
  mbs_jsonBool(j, "auto", sa && sa->decided); // solver.method = auto chose it (docs/outputs.md)
  if (sa && sa->decided) {
    mbs_jsonString(j, "auto_rule", sa->rule);
    mbs_jsonBeginObject(j, "predicted_s"); // the cost model's seconds per evaluation
    for (int k = 0; k < sa->ncand; k++) mbs_jsonNumber(j, mbs_solverName(sa->cand[k]), sa->pred[k]);
    mbs_jsonEndObject(j);
    mbs_jsonInt(j, "auto_ranks", sa->ranks);
    mbs_jsonInt(j, "auto_threads", sa->threads);
    mbs_jsonNumber(j, "auto_slowdown", sa->slow); // > 1: ranks x threads share cores
    mbs_jsonBool(j, "auto_idle_ranks", sa->idle);
    mbs_jsonInt(j, "auto_active_ranks", sa->active ? sa->active : sa->idle ? 1 : sa->job);
  }
  mbs_jsonNumber(j, "tol", m->opt.tol);
  mbs_jsonInt(j, "evaluations", S->evals);
  mbsp_simDriveJson(S, j); // driven joints: their forces (rank 0)
  mbs_jsonInt(j, "total_iterations", S->iters);
  mbs_jsonNumber(j, "avg_iterations", S->evals ? (double)S->iters / S->evals : 0);
  mbs_jsonInt(j, "nonconverged", S->nonconv);
  mbs_jsonInt(j, "stagnated", S->stagnated); // of the nonconverged: at the rounding floor
  mbs_jsonInt(j, "restarts", S->restarts);   // jcg, chebyshev, petsc: from b - A x
  if (mbs_solverCaps(m->opt.solver)->floored) mbs_jsonInt(j, "interface_rounds", S->irounds);
  mbs_jsonString(
      j, "warm_start",
      (const char *[]){"none", "previous", "linear", "quadratic", "cubic"}[m->opt.warm_start]);
  mbs_jsonEndObject(j);
  mbs_jsonBeginObject(j, "integrator");
  mbs_jsonString(j, "method", o->method);
  mbs_jsonString(j, "ts_type", o->ts_type);
  mbs_jsonNumber(j, "dt", m->opt.dt);
  mbs_jsonNumber(j, "tol", m->opt.int_tol);
  mbs_jsonInt(j, "steps", o->steps);
  mbs_jsonInt(j, "rejected", o->rejected);
  mbs_jsonNumber(j, "dt_next", o->dt_last);
  const mbsAbm *ab = S->ts ? mbsp_tsAbm(S->ts) : NULL;
  if (ab) { // abm: accepted steps per order (1..12), restarts, the present order
    double ord[MBS_ABM_KMAX];
    int kmax = 0;
    for (int k = 1; k <= MBS_ABM_KMAX; k++) {
      ord[k - 1] = (double)ab->order_used[k];
      if (ab->order_used[k]) kmax = k;
    }
    mbs_jsonNumberArray(j, "steps_per_order", ord, MBS_ABM_KMAX);
    mbs_jsonInt(j, "max_order", kmax);
    mbs_jsonInt(j, "order", ab->k);
    mbs_jsonInt(j, "restarts", ab->restarts);
    mbs_jsonInt(j, "evaluations", ab->evaluations);
  }
  mbs_jsonEndObject(j);
  if (!o->err) mbsp_guardPairJson(j, &S->guard); // accuracy (docs/formulation.md 4.9)
  if (S->nlim) { // URDF joint limits: crossings per joint at the output rows (docs/outputs.md)
    mbs_jsonBeginObject(j, "limits");
    for (int k = 0; k < S->nlim; k++) mbs_jsonInt(j, S->lim_name[k], S->lim_cross[k]);
    mbs_jsonEndObject(j);
  }
  if (o->rr) mbsp_rankReportJson(o->rr, j);
  mbs_jsonBeginObject(j, "results");
  // complete: the run reached t_end; a signal stop or an error leave an incomplete run
  mbs_jsonBool(j, "complete", !o->err && !strcmp(o->stop, "t_end"));
  mbs_jsonString(j, "stopped", o->stop);
  if (o->err) { // failed: the message of the error, the last step finished
    mbs_jsonBeginObject(j, "error");
    mbs_jsonInt(j, "exit_code", mbs_errExitCode(o->err));
    mbs_jsonString(j, "kind", mbs_errString(o->err));
    mbs_jsonString(j, "message", o->errmsg);
    mbs_jsonEndObject(j);
    mbs_jsonNumber(j, "t", o->t);
    mbs_jsonInt(j, "step", o->steps);
    mbs_jsonString(j, "output_dir", S->dir);
    mbs_jsonEndObject(j);
    return;
  }
  mbs_jsonNumber(j, "t", o->t);
  mbs_jsonInt(j, "step", o->steps);
  mbs_jsonNumberArray(j, "q", S->sout->q, m->nq);
  mbs_jsonNumberArray(j, "qd", S->sout->qd, m->nv);
  mbs_jsonBeginObject(j, "energy");
  mbs_jsonNumber(j, "kinetic", o->ke);
  mbs_jsonNumber(j, "potential", o->pe);
  mbs_jsonNumber(j, "total", o->ke + o->pe);
  mbs_jsonNumber(j, "work", o->wk);
  mbs_jsonEndObject(j);
  mbs_jsonString(j, "output_dir", S->dir);
  if (m->nloop) { // closed loops: drift control and the closure error over the output rows
    mbs_jsonBeginObject(j, "loops");
    mbs_jsonNumberArray(j, "baumgarte", m->opt.baumgarte, 2);
    mbs_jsonBool(j, "projection", m->opt.projection);
    mbs_jsonInt(j, "projected_steps", S->proj_steps);
    mbs_jsonInt(j, "projection_iterations", S->proj_iters);
    mbs_jsonInt(j, "projection_unconverged", S->proj_fail);
    mbs_jsonNumber(j, "projection_dq_max", S->proj_dq);
    mbs_jsonNumber(j, "projection_dqd_max", S->proj_dqd);
    mbs_jsonNumber(j, "closure_pos_max", S->viol_pos);
    mbs_jsonNumber(j, "closure_rot_max", S->viol_rot);
    mbs_jsonNumber(j, "closure_vel_max", S->viol_vel);
    mbs_jsonNumber(j, "closure_pos_final", S->last_pos);
    mbs_jsonNumber(j, "closure_rot_final", S->last_rot);
    mbs_jsonNumber(j, "closure_vel_final", S->last_vel);
    mbs_jsonEndObject(j);
  }
  mbs_jsonEndObject(j);
}

mbsErr mbsp_simRun(const mbspSimArgs *a) {
  mbspSim S0, *S = &S0;
  memset(S, 0, sizeof *S);
  S->a = a, S->m = a->m, S->comm = a->comm;
  S->rank = mbsp_rank(a->comm), S->size = mbsp_size(a->comm);
  const mbsModel *m = a->m;
  S->serial = mbs_solverIsBaseline(m->opt.solver);
  mbsp_simInstallSignals(); // again: PetscInitialize installed its own handlers since main's
  if (!(m->opt.t_end > 0))  // the config allows 0 (other verbs do not integrate)
    return mbs_configBlame(
        a->cfg, "integrator.t_end",
        mbs_errSet(MBS_ERR_INPUT, "integrator.t_end must be > 0 for run (got %g)", m->opt.t_end));
  // a directory (say the --out of the run), FIFO or device is not a checkpoint: say so before
  // anything is created (and without blocking), and name the file that is meant
  mbsErr e = MBS_OK;
  const char *kind = a->restart && S->rank == 0 ? mbs_fileNotRegular(a->restart) : NULL;
  if (kind)
    e = mbs_errSet(MBS_ERR_USAGE,
                   "mbspar: --restart %s: is %s, not a checkpoint file (a run writes its "
                   "checkpoint to DIR/checkpoint.bin)",
                   a->restart, kind);
  else if (a->restart && S->rank == 0 && access(a->restart, R_OK) != 0) // nor a missing one
    e = mbs_errSet(MBS_ERR_INPUT, "%s:0: cannot open file for reading: %s", a->restart,
                   strerror(errno));
  if (!e) e = mbsp_simNatCheck(a); // natural: 1 rank, rk4 or dp5 (before anything is written)
  MBS_CALL(mbsp_agreeErr(a->comm, e));
  if (!S->serial) e = mbsp_engineCreate(a->comm, m, MBSP_HALO_P2P, &S->eng);
  if (e == MBS_ERR_INPUT) e = mbs_configBlame(a->cfg, "model", e);
  // the solver now, not at the first evaluation: its failures are agreed before any solve
  if (!e && !S->serial) e = mbsp_agreeErr(a->comm, mbs_cfsBindSolver(m, mbsp_engineCfs(S->eng)));
  if (!e) e = mbsp_agreeErr(a->comm, mbsp_simSetup(S));
  if (!e) e = mbsp_simGuardCreate(S); // the accuracy guard (sim_guard.c)
  if (!e)
    e = mbsp_agreeErr(a->comm, mbsp_tsCreate(a->comm, S->nloc, m->opt.integrator, m->opt.dt,
                                             m->opt.int_tol, mbsp_simRhs, mbsp_simPost, S, &S->ts));
  if (!e && mbsp_simNatural(a)) e = mbsp_agreeErr(a->comm, mbsp_simNatCreate(S));
  if (!e && a->restart)
    e = mbsp_simRestore(S, a->restart);
  else if (!e)
    e = mbsp_tsSetState(S->ts, 0, 0, m->opt.dt, S->y);
  double t = 0, dt = m->opt.dt, ke = 0, pe = 0, wk = 0;
  long step = 0;
  if (!e) {
    mbsp_tsGetState(S->ts, &t, &step, &dt);
    if (a->restart) e = mbsp_simCheckDir(S);
    if (!e) e = mbsp_outOpen(&S->out, a->restart != NULL, step, t);
    // a restart continues the files of its run: they are this run's once they were opened
    if (a->restart && S->rank == 0) S->claimed = !e;
  }
  const char *stop = "t_end";
  char ckpath[4200] = "";
  if (!e) {
    S->t_start = t;
    S->step_start = step;
    S->live = -1;
    S->wall0 = S->last_progress = mbsp_wtime();
    if (S->sfull) e = mbsp_simFull(S);
    if (!e && a->cfg->ndrive) // the driving forces at the first state (its power; restarts too)
      e = mbsp_agreeErr(a->comm, S->rank == 0 ? mbsp_simDriveAt(S, t) : MBS_OK);
    S->pprev = mbsp_simPower(S, S->y + (S->q1 - S->q0));
    if (!e) e = mbsp_allreduceSum(a->comm, &S->pprev, 1);
    if (!e && !a->restart) e = mbsp_simOutput(S, t, step, &ke, &pe, &wk);
    if (!e) e = mbsp_simFlushRows(S, 0); // the first row (or the continued files) at once
  }

  // the time loop
  // a step that ends within roundoff of t_end is the last one
  double tstop = m->opt.t_end - 1e-9 * m->opt.dt;
  while (!e && t < tstop) {
    MBS_TIC(S->tim, MBS_TIMER_STEP);
    double told = t;
    S->stage_count = 0;
    int nat = mbsp_simNatural(a); // natural: a step of (p, ṗ), y the joint state recovered
    e = nat ? mbsp_simNatStep(S) : mbsp_tsStep(S->ts, m->opt.t_end);
    if (!e && !nat) e = mbsp_tsGetSolution(S->ts, S->y);
    e = mbsp_agreeErr(a->comm, e); // TS's own failures (step-size control, PETSc) on every rank
    if (!e) { // an explicit integrator beyond its stability limit: say so, not what it broke
      double bad = 0;
      for (int i = 0; i < S->nloc; i++)
        if (!isfinite(S->y[i]) || fabs(S->y[i]) > 1e12) bad = 1;
      e = mbsp_allreduceMax(a->comm, &bad, 1);
      if (!e && bad > 0)
        e = mbs_errSet(MBS_ERR_NUMERIC,
                       "mbspar run: the integration diverged at t = %.9g s (step %ld): the state "
                       "is no longer finite; integrator.dt = %g is probably above the stability "
                       "limit of %s for this model (try a smaller dt or integrator.method = dp5)",
                       t, step + 1, m->opt.dt, mbs_integratorType(m->opt.integrator)->name);
    }
    // closed loops: q and qd back onto the loops (serial baselines; docs/loops.md)
    if (!e && S->serial && !nat && m->nloop && m->opt.projection) e = mbsp_simProject(S);
    if (!e && S->sfull) { // the engine: the whole state, projected on every rank alike
      e = mbsp_simFull(S);
      if (!e && m->nloop && m->opt.projection) e = mbsp_simProjectFull(S);
      e = mbsp_agreeErr(a->comm, e);
    }
    if (e) break;
    mbsp_tsGetState(S->ts, &t, &step, &dt);
    // driven joints: their forces at the step's end state (the power below; k + 1 solves)
    if (a->cfg->ndrive) {
      e = mbsp_agreeErr(a->comm, S->rank == 0 ? mbsp_simDriveAt(S, t) : MBS_OK);
      if (e) break;
    }
    // power of the nonconservative joint forces summed over the ranks, trapezoid rule over the
    // step; the same sum carries a pending signal (a count per kind) and rank 0's decision to
    // flush the rows (output.flush_every): one allreduce per step
    if (!mbsp_sim_signal && S->rank == 0) { // auto's waiting ranks relay theirs (main.c)
      int rs = mbsp_relayPoll();
      if (rs) mbsp_sim_signal = rs;
    }
    int sg = mbsp_sim_signal;
    double red[5] = {mbsp_simPower(S, S->y + (S->q1 - S->q0)), sg == SIGTERM, sg == SIGUSR1,
                     sg == SIGINT, mbsp_simFlushDue(S)};
    e = mbsp_allreduceSum(a->comm, red, 5);
    if (e) break;
    S->work += 0.5 * (S->pprev + red[0]) * (t - told);
    S->pprev = red[0];
    // the stop's name: SIGTERM before SIGUSR1 before SIGINT if ranks got different ones
    int sig = red[1] > 0 ? SIGTERM : red[2] > 0 ? SIGUSR1 : red[3] > 0 ? SIGINT : 0;
    MBS_TOC(S->tim, MBS_TIMER_STEP);
    int last = !(t < tstop);
    int outstep = last || (a->cfg->out_every > 0 && step % a->cfg->out_every == 0);
    if (outstep) e = mbsp_simOutput(S, t, step, &ke, &pe, &wk);
    if (!e && a->cfg->out_checkpoint_every > 0 && step % a->cfg->out_checkpoint_every == 0)
      e = mbsp_simCheckpoint(S, ckpath, sizeof ckpath);
    // every rank has finished the step and agreed (above) on a pending signal and on flushing
    if (!e && red[4] > 0 && !(sig && !last)) e = mbsp_simFlushRows(S, 0);
    if (!e && sig && !last) {
      // the row of this step first: the checkpoint flushes every row up to its step
      if (!outstep) e = mbsp_simOutput(S, t, step, &ke, &pe, &wk);
      if (!e) e = mbsp_simCheckpoint(S, ckpath, sizeof ckpath);
      stop = mbsp_simSigName(sig);
      break;
    }
    mbsp_progress(S, t, step, 0);
  }
  if (!e) mbsp_progress(S, t, step, 1);
  if (!e && S->gchecked) e = mbsp_simGuardCheck(S, 1); // the last evaluation (every rank alike)
  if (e && S->rank == 0 && S->live == 1 && !a->quiet) fputc('\n', stderr); // end the live line
  // the rows written are complete: close (rename into place) also after an error (collective)
  mbsErr ew = MBS_OK, ec = S->out.ops ? mbsp_outClose(&S->out, &ew) : MBS_OK;
  if (!e) e = ew;
  if (!e) e = ec;

  // final report: complete (t_end) or stopped by a signal
  mbspRankReport rr;
  memset(&rr, 0, sizeof rr);
  mbspRunOut o = {S,
                  &rr,
                  t,
                  ke,
                  pe,
                  wk,
                  dt,
                  step,
                  S->ts ? mbsp_tsRejected(S->ts) : 0,
                  S->ts ? mbsp_tsTypeName(S->ts) : "-",
                  S->ts ? mbsp_tsMethodName(S->ts) : "-",
                  stop,
                  0,
                  NULL};
  if (!e) e = mbsp_rankReportCollect(a->comm, S->eng, S->w, &rr);
  if (!e) { // schur's interface rounds: the deepest any rank saw (docs/formulation.md 4.4)
    double ir = S->irounds;
    e = mbsp_allreduceMax(a->comm, &ir, 1);
    S->irounds = (int)ir;
  }
  if (!e) e = mbsp_agreeErr(a->comm, mbsp_cliGatherRss(a->comm));
  if (!e && S->rank == 0) {
    if (!a->quiet && !a->no_table)
      printf("mbspar run %s: %d bodies, %d dofs, %d rank(s), %s + %s\n"
             "  t = %.9g s after %ld steps (%ld rejected), %ld evaluations, %.2f iterations each\n"
             "  energy: kinetic %.9g J, potential %.9g J, total %.9g J, work %.9g J\n"
             "  outputs in %s/ (%s, energy.csv, run.json)\n",
             a->cfg->filename, m->nbody, m->nv, mbsp_jobSize(a->comm),
             mbs_solverName(m->opt.solver), o.method, t, step, o.rejected, S->evals,
             S->evals ? (double)S->iters / S->evals : 0.0, ke, pe, ke + pe, wk, S->dir,
             mbsp_outSummary(&S->out));
    char autos[512];
    if (a->cfg) mbsp_solverAutoSummary(a->cfg, autos, sizeof autos);
    if (!a->quiet && !a->no_table && a->cfg && autos[0]) printf("  solver: %s\n", autos);
    if (!a->quiet && !a->no_table && S->nlim) {
      long n = 0;
      int nj = 0;
      for (int k = 0; k < S->nlim; k++) n += S->lim_cross[k], nj += S->lim_cross[k] > 0;
      printf("  URDF limits: %ld crossing%s by %d of %d limited joints (run.json limits; not "
             "modelled, docs/urdf.md)\n",
             n, n == 1 ? "" : "s", nj, S->nlim);
    }
    for (int k = 0; !a->quiet && !a->no_table && k < S->ndrv; k++)
      printf("  drive %-12s %s: driving force %.6g at the end, largest %.6g (N m or N)\n",
             a->cfg->drives[k].body, mbs_drive_profile_names[a->cfg->drives[k].profile],
             S->drv_last[k], S->drv_max[k]);
    if (!a->quiet && !a->no_table && (S->nonconv || S->restarts))
      printf("  solver: %ld of %ld evaluations did not converge (%ld stagnated at the rounding "
             "floor), %ld restarts from b - A lambda\n",
             S->nonconv, S->evals, S->stagnated, S->restarts);
    e = a->emit(a->emit_ctx, mbsp_runJson, &o, 0);
  }
  e = mbsp_agreeErr(a->comm, e);
  if (!e && strcmp(stop, "t_end") != 0) {
    char cmd[7000];
    mbsp_simContinueCmd(S, ckpath, cmd, sizeof cmd);
    e = mbs_errSet(MBS_INTERRUPTED,
                   "mbspar: %s received: stopped at t = %.9g s (step %ld) after finishing the "
                   "step; checkpoint written to %s (continue with: %s)",
                   stop, t, step, ckpath, cmd);
  }
  // a failed run leaves a run.json marked incomplete with the error (rank 0, no communication;
  // only in a directory this run claimed, never over an earlier run's report)
  if (e && e != MBS_INTERRUPTED && S->rank == 0 && S->claimed) {
    char msg[2048];
    snprintf(msg, sizeof msg, "%s", mbs_errMsg());
    o.rr = NULL, o.stop = "error", o.err = e, o.errmsg = msg;
    a->emit(a->emit_ctx, mbsp_runJson, &o, 1); // best effort: the first error is the one reported
    mbs_errSet(e, "%s", msg);
  }

  // refused before the directory was claimed: remove the (empty) directories this run made
  if (e && S->rank == 0 && !S->claimed) mbsp_simUnmake(S->dir, S->made);
  mbsp_rankReportFree(&rr);
  mbsp_outDestroy(&S->out);
  mbsp_tsDestroy(&S->ts);
  mbsp_simNatDestroy(S);
  if (S->serial) mbs_workDestroy(&S->w);
  mbsp_engineDestroy(&S->eng);
  mbs_stateDestroy(&S->s);
  mbs_stateDestroy(&S->sout);
  mbs_workDestroy(&S->wout);
  mbs_stateDestroy(&S->sfull);
  mbs_workDestroy(&S->wfull);
  free(S->fbuf);
  mbsp_simGuardDestroy(S);
  mbsp_bodyOutDestroy(&S->bo);
  free(S->y), free(S->qcnt), free(S->qdsp), free(S->vcnt), free(S->vdsp), free(S->lcnt);
  free(S->ldsp);
  free(S->lim_q), free(S->lim_lo), free(S->lim_hi), free(S->lim_name), free(S->lim_out);
  free(S->lim_cross);
  mbsp_simDriveFree(S);
  return e;
}
