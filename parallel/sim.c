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
#include "sim.h"
#include "cli.h"
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
#include "bodyout.h"
#include "mbspar/mbs_textfile.h"
#include "mbspar/mbs_checkpoint.h"
#include "mbspar/mbs_fault.h"
#include "mbspar/mbs_finite.h"
#include "mbspar/mbs_loops.h"
#include "petsc_ts.h"
#include "rankreport.h"
#include "simout.h"
#include "mbspar/mbs_solvertype.h"

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

// the name of a stopping signal in run.json and the message
static const char *mbsp_simSigName(int sig) {
  return sig == SIGUSR1 ? "SIGUSR1" : sig == SIGINT ? "SIGINT" : "SIGTERM";
}

typedef struct {
  const mbspSimArgs *a;
  const mbsModel *m;
  mbspComm *comm;
  int rank, size, serial;
  mbspEngine *eng;
  mbsWork *w;  // the workspace of the evaluations (engine's, or rank 0's for aba/crba)
  mbsState *s; // every rank: owned slices authoritative
  mbsTimer tdummy[MBS_TIMER_COUNT], *tim;
  int b0, b1, q0, q1, v0, v1, l0, l1, nloc;
  mbspTs *ts;
  double *y;
  // rank 0: gathered state for outputs and checkpoints
  mbsState *sout;
  mbsWork *wout;
  int *qcnt, *qdsp, *vcnt, *vdsp, *lcnt, *ldsp;
  mbspOut out;       // energy.csv and the trajectory writer of output.format (sim_out.c)
  long unflushed;    // output rows since the last flush (every rank)
  double last_flush; // rank 0: wall-clock time of the last flush
  mbspBodyOut *bo;   // per-body outputs (poses ...) of the owned bodies (bodyout.c)
  char dir[4096];
  int claimed; // rank 0: the output files are this run's (a failed run may write its run.json)
  // bookkeeping (identical on every rank except the local work partial sums)
  double work, pprev; // work of the nonconservative forces and the power of the last step: the
                      // same on every rank (the power is summed over the ranks at every step, so
                      // a restart continues the sum bitwise, whatever was summed before)
  long evals, iters, nonconv, evals_out, iters_out;
  long restarts, stagnated; // restarts from b - A x; stagnated solves (counted in nonconv too)
  int warned, stage_count;
  double t_start, wall0, last_progress;
  long step_start; // first step of this invocation (progress rate)
  int live;        // progress display: -1 not decided, 0 plain lines, 1 live line
  // closed loops (serial baselines, rank 0; docs/loops.md): projection after each step and the
  // closure error at the output rows
  long proj_steps, proj_iters, proj_fail;
  // the constraint-force methods on a model with loops or spring-dampers (built whole on every
  // rank): the whole state on every rank after each step (projection, the dampers' power)
  mbsState *sfull;
  mbsWork *wfull;
  double *fbuf;
  double proj_dq, proj_dqd, viol_pos, viol_rot, viol_vel, last_pos, last_rot, last_vel;
} mbspSim;

// ---------------------------------------------------------------- small helpers

static void mbsp_quatDot(const mbsReal *q, const mbsReal *w, mbsReal *out) {
  // q' = 1/2 q (x) (0, w) with w in the body frame
  out[0] = -0.5 * (q[1] * w[0] + q[2] * w[1] + q[3] * w[2]);
  out[1] = 0.5 * (q[0] * w[0] + q[2] * w[2] - q[3] * w[1]);
  out[2] = 0.5 * (q[0] * w[1] + q[3] * w[0] - q[1] * w[2]);
  out[3] = 0.5 * (q[0] * w[2] + q[1] * w[1] - q[2] * w[0]);
}

static void mbsp_quatNormalize(mbsReal *q) {
  double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (n > 0)
    for (int k = 0; k < 4; k++) q[k] /= n;
}

// local power of the nonconservative joint forces (springs are in the potential energy)
static double mbsp_power(const mbspSim *S, const mbsReal *qd) {
  const mbsModel *m = S->m;
  double p = 0;
  for (int d = S->v0; d < S->v1; d++) {
    double v = qd[d - S->v0];
    p += v * (m->dof_force[d] - m->dof_damping[d] * v + S->s->tau[d]);
  }
  if (m->nforce && S->serial && S->rank == 0) { // the spring-dampers' dampers (serial: rank 0)
    memcpy(S->sout->q, S->y, (size_t)m->nq * sizeof(double));
    memcpy(S->sout->qd, qd, (size_t)m->nv * sizeof(double));
    mbs_fwdPosition(m, S->sout, S->wout);
    mbs_fwdVelocity(m, S->sout, S->wout);
    p += mbs_forcePower(m, S->wout);
  } else if (m->nforce && S->sfull && S->rank == 0) { // the engine: the whole state of this step
    mbs_fwdPosition(m, S->sfull, S->wfull);
    mbs_fwdVelocity(m, S->sfull, S->wfull);
    p += mbs_forcePower(m, S->wfull);
  }
  return p;
}

// the projection statistics of the run report
static void mbsp_simProjCount(mbspSim *S, const mbsLoopProj *pj) {
  S->proj_steps++, S->proj_iters += pj->iterations, S->proj_fail += !pj->converged;
  S->proj_dq = fmax(S->proj_dq, pj->dq_max), S->proj_dqd = fmax(S->proj_dqd, pj->dqd_max);
}

// closed loops: project the state onto the loops after a step (rank 0 holds the whole state of
// the serial baselines) and restart the integrator from it (collective)
static mbsErr mbsp_simProject(mbspSim *S) {
  const mbsModel *m = S->m;
  mbsErr e = MBS_OK;
  if (S->rank == 0) {
    mbsLoopProj pj;
    memcpy(S->s->q, S->y, (size_t)m->nq * sizeof(double));
    memcpy(S->s->qd, S->y + m->nq, (size_t)m->nv * sizeof(double));
    e = mbs_loopProject(m, S->s, S->w, 10, &pj);
    if (!e) {
      memcpy(S->y, S->s->q, (size_t)m->nq * sizeof(double));
      memcpy(S->y + m->nq, S->s->qd, (size_t)m->nv * sizeof(double));
      mbsp_simProjCount(S, &pj);
    }
  }
  MBS_CALL(mbsp_agreeErr(S->comm, e));
  return mbsp_tsSetSolution(S->ts, S->y);
}

// the constraint-force methods on loop or spring-damper models: the whole state on every rank
// (the owned slices summed with zeros: exact, the same on every rank)
static mbsErr mbsp_simFull(mbspSim *S) {
  const mbsModel *m = S->m;
  int nq = m->nq, nv = m->nv, nqo = S->q1 - S->q0, nvo = S->v1 - S->v0;
  double *f = S->fbuf;
  memset(f, 0, sizeof(double) * (size_t)(nq + nv));
  if (nqo) memcpy(f + S->q0, S->y, sizeof(double) * (size_t)nqo);
  if (nvo) memcpy(f + nq + S->v0, S->y + nqo, sizeof(double) * (size_t)nvo);
  MBS_CALL(mbsp_allreduceSum(S->comm, f, nq + nv));
  memcpy(S->sfull->q, f, sizeof(double) * (size_t)nq);
  memcpy(S->sfull->qd, f + nq, sizeof(double) * (size_t)nv);
  return MBS_OK;
}

// the same projection with the constraint-force methods: every rank projects the whole state
// (the same input, the same deterministic computation, the same result) and keeps its slices
static mbsErr mbsp_simProjectFull(mbspSim *S) {
  const mbsModel *m = S->m;
  mbsLoopProj pj;
  MBS_CALL(mbs_loopProject(m, S->sfull, S->wfull, 10, &pj)); // the same outcome on every rank
  int nqo = S->q1 - S->q0, nvo = S->v1 - S->v0;
  if (nqo) memcpy(S->y, S->sfull->q + S->q0, (size_t)nqo * sizeof(double));
  if (nvo) memcpy(S->y + nqo, S->sfull->qd + S->v0, (size_t)nvo * sizeof(double));
  mbsp_simProjCount(S, &pj);
  return mbsp_tsSetSolution(S->ts, S->y);
}

// ---------------------------------------------------------------- right side

static mbsErr mbsp_simRhs(void *ctx, double t, const double *y, double *f) {
  mbspSim *S = ctx;
  const mbsModel *m = S->m;
  int nqo = S->q1 - S->q0, nvo = S->v1 - S->v0;
  // a rank without state entries (aba/crba at several ranks) gets a NULL array
  if (nqo) memcpy(S->s->q + S->q0, y, (size_t)nqo * sizeof(double));
  if (nvo) memcpy(S->s->qd + S->v0, y + nqo, (size_t)nvo * sizeof(double));
  // a stage state that is no longer finite means the explicit integrator diverged
  char phase[200];
  snprintf(phase, sizeof phase, "run: the stage state at t = %.9g s", t);
  mbsErr e = mbs_checkFinite(m, MBS_FIN_Q, S->s->q, S->q0, S->q1, phase);
  if (!e) e = mbs_checkFinite(m, MBS_FIN_QD, S->s->qd, S->v0, S->v1, phase);
  if (e) {
    char msg[1600];
    snprintf(msg, sizeof msg, "%s", mbs_errMsg());
    e = mbs_errSet(e,
                   "%s; the integration diverged: integrator.dt = %g is probably above the "
                   "stability limit of the method for this model (try a smaller dt or "
                   "integrator.method = dp5)",
                   msg, S->m->opt.dt);
  }
  MBS_CALL(mbsp_agreeErr(S->comm, e));
  S->s->time = t;
  if (S->a->cfg && S->a->cfg->torques) mbs_torquesAt(S->a->cfg->torques, m, t, S->s->tau);
  // warm-start slot: the position of this evaluation within the step (capped: the extra
  // evaluations of a rejected adaptive step share the last slot)
  S->s->stage = S->stage_count < S->s->nstage ? S->stage_count : S->s->nstage - 1;
  S->stage_count++;
  long restarts0 = S->w ? S->w->stat.total_restarts : 0;
  if (S->serial) {
    if (S->rank == 0) e = mbs_forward(m, S->s, S->w);
  } else {
    e = mbsp_engineForward(S->eng, S->s);
  }
  // no silent NaN: the owned q̈ and λ (aba/crba: rank 0, all of q̈)
  if (!e && S->w) {
    snprintf(phase, sizeof phase, "run: the evaluation at t = %.9g s (solver.method = %s)", t,
             mbs_solverName(m->opt.solver));
    e = S->serial ? mbs_checkForward(m, S->w, 1, 0, m->nv, 0, 0, phase)
                  : mbs_checkForward(m, S->w, 0, S->v0, S->v1, S->l0, S->l1, phase);
  }
  MBS_CALL(mbsp_agreeErr(S->comm, e)); // nobody continues alone into the next collective
  S->evals++;
  if (S->w && getenv("MBS_DEBUG_ITERS") && S->rank == 0)
    fprintf(stderr, "eval %ld t=%.17g stage %d nhist %d ws %d it=%d res %g\n", S->evals, t,
            S->s->stage, S->s->nhist[S->s->stage], m->opt.warm_start, S->w->stat.iterations,
            S->w->stat.residual);
  if (S->w) {
    S->iters += S->w->stat.iterations;
    if (!S->serial) S->restarts += S->w->stat.total_restarts - restarts0;
    if (!S->serial && S->w->stat.reason < 0) {
      S->nonconv++;
      if (S->w->stat.reason == MBS_REASON_DIVERGED_STAGNATED) S->stagnated++;
      if (!S->warned && S->rank == 0)
        fprintf(stderr,
                "mbspar: warning: %s did not converge at t = %.9g (%s after %d iterations, "
                "residual %.3e > tol %g); counted in the report, warned once\n",
                mbs_solverName(m->opt.solver), t, mbs_reasonName(S->w->stat.reason),
                S->w->stat.iterations, S->w->stat.residual, m->opt.tol);
      S->warned = 1;
    }
  }
  // q' from (q, qd) per owned joint, then qdd
  for (int b = S->b0; b < S->b1; b++) {
    int t0 = m->body_jnttype[b], qa = m->body_qadr[b] - S->q0, da = m->body_dofadr[b] - S->v0;
    const double *q = y + qa, *qd = y + nqo + da;
    if (t0 == MBS_JNT_SPHERICAL) {
      mbsp_quatDot(q, qd, f + qa);
    } else if (t0 == MBS_JNT_FREE) {
      f[qa] = qd[0], f[qa + 1] = qd[1], f[qa + 2] = qd[2];
      mbsp_quatDot(q + 3, qd + 3, f + qa + 3);
    } else {
      for (int k = 0; k < m->body_dofnum[b]; k++) f[qa + k] = qd[k];
    }
  }
  if (nvo) memcpy(f + nqo, S->w->qdd + S->v0, (size_t)nvo * sizeof(double));
  return MBS_OK;
}

static void mbsp_simPost(void *ctx, double *y) {
  mbspSim *S = ctx;
  const mbsModel *m = S->m;
  for (int b = S->b0; b < S->b1; b++) {
    int t0 = m->body_jnttype[b], qa = m->body_qadr[b] - S->q0;
    if (t0 == MBS_JNT_SPHERICAL) mbsp_quatNormalize(y + qa);
    if (t0 == MBS_JNT_FREE) mbsp_quatNormalize(y + qa + 3);
  }
}

// ---------------------------------------------------------------- outputs

static mbsErr mbsp_gatherState(mbspSim *S) {
  int nqo = S->q1 - S->q0, nvo = S->v1 - S->v0;
  double dummy = 0;
  MBS_CALL(mbsp_gatherv(S->comm, nqo ? S->y : &dummy, nqo, S->rank == 0 ? S->sout->q : &dummy,
                        S->qcnt, S->qdsp));
  MBS_CALL(mbsp_gatherv(S->comm, nvo ? S->y + nqo : &dummy, nvo,
                        S->rank == 0 ? S->sout->qd : &dummy, S->vcnt, S->vdsp));
  return MBS_OK;
}

// one output row (collective: gathers; rank 0 writes)
static mbsErr mbsp_simOutput(mbspSim *S, double t, long step, double *ke, double *pe, double *wk) {
  MBS_TIC(S->tim, MBS_TIMER_OUTPUT);
  MBS_CALL(mbsp_gatherState(S));
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
  MBS_CALL(mbsp_outRow(&S->out, &r, step, S->evals, S->m->nloop ? viol : NULL));
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

// ---------------------------------------------------------------- checkpoints

// the format and its reader: src/checkpoint.c (mbs_checkpoint.h)

// every output row so far to the files (\p sync: to the disk, before a checkpoint names its
// step, so a restart from it finds them all, issue 12.2): CSV files (rank 0), the HDF5 file
// (collective), then the XDMF grids of the flushed rows (rank 0). Collective.
static mbsErr mbsp_simFlushRows(mbspSim *S, int sync) {
  mbsErr e = mbsp_outFlush0(&S->out, sync);
  if (S->rank == 0) S->last_flush = mbsp_wtime();
  MBS_CALL(mbsp_agreeErr(S->comm, e));
  MBS_CALL(mbsp_outFlush(&S->out));
  S->unflushed = 0;
  return MBS_OK;
}

// output.flush_every: are the rows due to be flushed? Rank 0 decides (the clock is its own);
// the step's signal allreduce carries the decision to every rank
static int mbsp_simFlushDue(const mbspSim *S) {
  if (S->rank != 0 || S->unflushed == 0) return 0;
  const mbsConfig *c = S->a->cfg;
  if (c->out_flush_rows > 0) return S->unflushed >= c->out_flush_rows;
  return mbsp_wtime() - S->last_flush >= c->out_flush_sec;
}

static mbsErr mbsp_simFlush(mbspSim *S) {
  return mbsp_simFlushRows(S, 1);
}

static mbsErr mbsp_simCheckpoint(mbspSim *S, char *path_out, size_t pathlen) {
  const mbsModel *m = S->m;
  MBS_TIC(S->tim, MBS_TIMER_OUTPUT);
  MBS_CALL(mbsp_simFlush(S));
  MBS_CALL(mbsp_gatherState(S));
  double wsum = S->work; // the same on every rank
  // the warm-start history of the owned constraint components
  size_t bytes = mbs_ckptSize(m, S->s->nstage);
  unsigned char *buf = NULL;
  mbsErr e = MBS_OK;
  if (S->rank == 0) {
    buf = calloc(1, bytes);
    if (!buf) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (checkpoint)");
  }
  MBS_CALL(mbsp_agreeErr(S->comm, e));
  double *hl = S->rank == 0 ? (double *)(buf + sizeof(mbsCkptHeader)) + m->nq + m->nv : NULL;
  int nlo = S->l1 - S->l0;
  size_t nlh = (size_t)mbs_stateHistWidth(m);
  double dummy = 0;
  for (int k = 0; k < S->s->nstage * MBS_WARM_HIST; k++) {
    const double *src = S->s->hist_lam + (size_t)k * nlh + S->l0;
    e = mbsp_gatherv(S->comm, nlo ? src : &dummy, nlo, S->rank == 0 ? hl + (size_t)k * nlh : &dummy,
                     S->lcnt, S->ldsp);
    if (e) break;
  }
  if (!e && S->rank == 0) {
    mbsCkptHeader h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, MBS_CKPT_MAGIC, 8);
    h.version = MBS_CKPT_VERSION;
    h.nbody = m->nbody, h.nq = m->nq, h.nv = m->nv, h.nlam = m->nlam, h.ranks = S->size;
    h.solver = m->opt.solver, h.integrator = m->opt.integrator;
    h.fingerprint = mbs_ckptFingerprint(m);
    long step;
    mbsp_tsGetState(S->ts, &h.t, &step, &h.dt_next);
    h.step = step;
    h.work = wsum;
    h.evals = S->evals, h.iters = S->iters, h.nonconv = S->nonconv;
    h.restarts = (int32_t)(S->restarts < INT32_MAX ? S->restarts : INT32_MAX); // saturates
    h.stagnated = (int32_t)(S->stagnated < INT32_MAX ? S->stagnated : INT32_MAX);
    h.nstage = S->s->nstage;
    memcpy(h.nhist, S->s->nhist, sizeof h.nhist);
    memcpy(h.hist_head, S->s->hist_head, sizeof h.hist_head);
    memcpy(h.hist_t, S->s->hist_t, sizeof h.hist_t);
    if (S->eng) {
      mbsSolverCache sc;
      mbs_cfsCacheSave(mbsp_engineCfs(S->eng), &sc);
      h.have_spec = sc.have_spec, h.lmin = sc.lmin, h.lmax = sc.lmax, h.jacobi_omega = sc.omega;
    }
    memcpy(buf, &h, sizeof h);
    double *body = (double *)(buf + sizeof h);
    memcpy(body, S->sout->q, (size_t)m->nq * sizeof(double));
    memcpy(body + m->nq, S->sout->qd, (size_t)m->nv * sizeof(double));
    mbs_ckptSeal(buf, bytes);
    // write a temporary, then rename into place
    char tmp[4200];
    snprintf(path_out, pathlen, "%s/checkpoint.bin", S->dir);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path_out, (long)getpid());
    FILE *f = MBS_FAULT_WRITE_POINT() ? NULL : fopen(tmp, "wb");
    if (!f) {
      e = mbs_errSet(MBS_ERR_IO, "%s: cannot write checkpoint: %s", tmp,
                     errno ? strerror(errno) : "injected fault");
    } else {
      size_t nw = fwrite(buf, 1, bytes, f);
      int bad = nw != bytes || fflush(f) != 0 || fsync(fileno(f)) != 0;
      bad |= fclose(f) != 0;
      bad |= MBS_FAULT_WRITE_POINT();
      if (bad) {
        remove(tmp);
        e = mbs_errSet(MBS_ERR_IO, "%s: checkpoint write failed (disk full?)", tmp);
      } else if (MBS_FAULT_WRITE_POINT() || rename(tmp, path_out) != 0) {
        remove(tmp);
        e = mbs_errSet(MBS_ERR_IO, "%s: cannot rename checkpoint: %s", path_out, strerror(errno));
      }
    }
  }
  free(buf);
  MBS_TOC(S->tim, MBS_TIMER_OUTPUT);
  return mbsp_agreeErr(S->comm, e);
}

// read and validate a checkpoint on every rank (the same bytes everywhere: same verdict)
static mbsErr mbsp_simRestore(mbspSim *S, const char *path) {
  const mbsModel *m = S->m;
  char *text = NULL;
  size_t len = 0;
  MBS_CALL(mbsp_bcastFile(S->comm, path, &text, &len));
  mbsCkptHeader h;
  mbsErr e = mbs_ckptParse(text, len, path, m, S->s->nstage, &h);
  if (e) {
    free(text);
    return mbsp_agreeErr(S->comm, e);
  }
  mbs_ckptApply(text, &h, m, S->s);
  if (S->eng) {
    mbsSolverCache sc = {h.have_spec, h.lmin, h.lmax, h.jacobi_omega};
    e = mbs_cfsCacheRestore(m, mbsp_engineCfs(S->eng), &sc);
  }
  S->evals = S->evals_out = h.evals;
  S->iters = S->iters_out = h.iters;
  S->nonconv = h.nonconv;
  S->restarts = h.restarts, S->stagnated = h.stagnated;
  S->work = h.work; // every rank: the work is global (summed power per step)
  int nqo = S->q1 - S->q0, nvo = S->v1 - S->v0;
  memcpy(S->y, S->s->q + S->q0, (size_t)nqo * sizeof(double));
  memcpy(S->y + nqo, S->s->qd + S->v0, (size_t)nvo * sizeof(double));
  if (!e) e = mbsp_tsSetState(S->ts, h.t, (long)h.step, h.dt_next, S->y);
  if (!e && S->rank == 0 &&
      (h.ranks != S->size || h.solver != m->opt.solver || h.integrator != m->opt.integrator))
    fprintf(stderr,
            "mbspar: note: checkpoint written with %d rank(s), solver %s, integrator %d; "
            "continuing with %d rank(s), solver %s: the result matches an uninterrupted run to "
            "the solver tolerance, bitwise only with the same settings\n",
            h.ranks, mbs_solverName(h.solver), h.integrator, S->size,
            mbs_solverName(m->opt.solver));
  free(text);
  return mbsp_agreeErr(S->comm, e);
}

// ---------------------------------------------------------------- setup and report

// one word of a shell command: as it is if it is made of safe characters, else single-quoted
static void mbsp_shellWord(char *buf, size_t n, size_t *len, const char *w) {
  int safe = w[0] != 0;
  for (const char *c = w; *c; c++)
    if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-", *c))
      safe = 0;
  size_t k = *len;
  if (k && k < n) buf[k++] = ' ';
  if (safe) {
    for (const char *c = w; *c && k < n; c++) buf[k++] = *c;
  } else {
    if (k < n) buf[k++] = '\'';
    for (const char *c = w; *c && k < n; c++) {
      if (*c == '\'')
        for (const char *q = "'\\''"; *q && k < n; q++) buf[k++] = *q;
      else
        buf[k++] = *c;
    }
    if (k < n) buf[k++] = '\'';
  }
  if (k >= n) k = n - 1;
  buf[k] = 0;
  *len = k;
}

// the command that continues this run from checkpoint \p ck, as the user can paste it: the
// command line of this run with --restart CK instead of any --restart it had (under an MPI
// launcher, prefixed with "mpiexec -n SIZE")
static void mbsp_simContinueCmd(const mbspSim *S, const char *ck, char *buf, size_t n) {
  const mbspSimArgs *a = S->a;
  size_t len = 0;
  buf[0] = 0;
  if (S->size > 1) {
    char pre[32];
    mbsp_shellWord(buf, n, &len, "mpiexec");
    mbsp_shellWord(buf, n, &len, "-n");
    snprintf(pre, sizeof pre, "%d", S->size);
    mbsp_shellWord(buf, n, &len, pre);
  }
  for (int i = 0; i < a->argc && a->argv; i++) {
    const char *w = a->argv[i];
    if (i > 0 && !strcmp(w, "--restart")) {
      i++; // and its value
      continue;
    }
    if (i > 0 && !strncmp(w, "--restart=", 10)) continue;
    mbsp_shellWord(buf, n, &len, w);
  }
  mbsp_shellWord(buf, n, &len, "--restart");
  mbsp_shellWord(buf, n, &len, ck);
}

static mbsErr mbsp_mkdirs(const char *dir) {
  char p[4096];
  snprintf(p, sizeof p, "%s", dir);
  for (char *c = p + 1; *c; c++)
    if (*c == '/') {
      *c = 0;
      if (mkdir(p, 0777) != 0 && errno != EEXIST)
        return mbs_errSet(MBS_ERR_IO, "%s: cannot create directory: %s", p, strerror(errno));
      *c = '/';
    }
  if (MBS_FAULT_WRITE_POINT() || (mkdir(p, 0777) != 0 && errno != EEXIST))
    return mbs_errSet(MBS_ERR_IO, "%s: cannot create directory: %s", p, strerror(errno));
  struct stat st;
  if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode))
    return mbs_errSet(MBS_ERR_IO, "%s: exists and is not a directory", p);
  return MBS_OK;
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
  mbs_jsonBeginObject(j, "solver");
  mbs_jsonString(j, "method", mbs_solverName(m->opt.solver));
  mbs_jsonNumber(j, "tol", m->opt.tol);
  mbs_jsonInt(j, "evaluations", S->evals);
  mbs_jsonInt(j, "total_iterations", S->iters);
  mbs_jsonNumber(j, "avg_iterations", S->evals ? (double)S->iters / S->evals : 0);
  mbs_jsonInt(j, "nonconverged", S->nonconv);
  mbs_jsonInt(j, "stagnated", S->stagnated); // of the nonconverged: at the rounding floor
  mbs_jsonInt(j, "restarts", S->restarts);   // jcg, chebyshev, petsc: from b - A x
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
  mbs_jsonEndObject(j);
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

// the setup's local allocations (every rank; rank 0 also the gather layout \p all); the caller
// agrees before the next collective call
static mbsErr mbsp_simSetupLocal(mbspSim *S, double **all) {
  const mbsModel *m = S->m;
  int rank = S->rank;
  MBS_CALL(mbs_stateCreate(m, &S->s));
  // one warm-start history per Runge–Kutta stage
  int nst = m->opt.integrator == MBS_INT_EULER ? 1 : m->opt.integrator == MBS_INT_RK4 ? 4 : 7;
  MBS_CALL(mbs_stateSetStages(m, S->s, nst));
  if (S->serial) {
    if (rank == 0) {
      MBS_CALL(mbs_workCreate(m, &S->w));
      MBS_CALL(mbs_workEnableMethod(m, S->w));
      S->b0 = 0, S->b1 = m->nbody, S->l0 = 0, S->l1 = m->nlam;
    }
  } else {
    mbspDecompInfo di;
    mbsp_engineDecomp(S->eng, &di);
    S->b0 = di.b0, S->b1 = di.b1;
    S->w = mbsp_engineWork(S->eng);
    S->l0 = mbsp_engineCfs(S->eng)->l0, S->l1 = mbsp_engineCfs(S->eng)->l1;
  }
  if (S->b1 > S->b0) {
    S->q0 = m->body_qadr[S->b0], S->q1 = m->body_qadr[S->b1 - 1] + m->body_qnum[S->b1 - 1];
    S->v0 = m->body_dofadr[S->b0], S->v1 = m->body_dofadr[S->b1 - 1] + m->body_dofnum[S->b1 - 1];
  }
  S->tim = S->w ? S->w->timer : S->tdummy;
  S->nloc = (S->q1 - S->q0) + (S->v1 - S->v0);
  MBS_ALLOC(S->y, S->nloc + 1);
  if (rank == 0) MBS_ALLOC(*all, 6 * (size_t)S->size);
  if (!S->serial && (m->nloop || m->nforce)) {
    MBS_CALL(mbs_stateCreate(m, &S->sfull));
    MBS_CALL(mbs_workCreate(m, &S->wfull));
    MBS_ALLOC(S->fbuf, (size_t)(m->nq + m->nv) + 1);
  }
  return MBS_OK;
}

// rank 0: the gather layout and the gathered state's workspace
static mbsErr mbsp_simSetupRoot(mbspSim *S, const double *all) {
  const mbsModel *m = S->m;
  {
    MBS_ALLOC(S->qcnt, S->size);
    MBS_ALLOC(S->qdsp, S->size);
    MBS_ALLOC(S->vcnt, S->size);
    MBS_ALLOC(S->vdsp, S->size);
    MBS_ALLOC(S->lcnt, S->size);
    MBS_ALLOC(S->ldsp, S->size);
    for (int r = 0; r < S->size; r++) {
      S->qdsp[r] = (int)all[6 * r], S->qcnt[r] = (int)all[6 * r + 1];
      S->vdsp[r] = (int)all[6 * r + 2], S->vcnt[r] = (int)all[6 * r + 3];
      S->ldsp[r] = (int)all[6 * r + 4], S->lcnt[r] = (int)all[6 * r + 5];
    }
    MBS_CALL(mbs_stateCreate(m, &S->sout));
    MBS_CALL(mbs_workCreate(m, &S->wout));
  }
  return MBS_OK;
}

// every rank: allocations, the gather layout, per-body outputs, the output directory; each
// phase's local failures are agreed before the next collective call (issue 12.1)
static mbsErr mbsp_simSetup(mbspSim *S) {
  const mbsModel *m = S->m;
  const mbspSimArgs *a = S->a;
  int rank = S->rank;
  double *all = NULL;
  mbsErr ea = mbsp_agreeErr(S->comm, mbsp_simSetupLocal(S, &all));
  // gather layout on rank 0
  double mine[6] = {S->q0, S->q1 - S->q0, S->v0, S->v1 - S->v0, S->l0, S->l1 - S->l0};
  if (!ea) ea = mbsp_gather(S->comm, mine, 6, rank == 0 ? all : mine);
  if (!ea) ea = mbsp_agreeErr(S->comm, rank == 0 ? mbsp_simSetupRoot(S, all) : MBS_OK);
  free(all);
  MBS_CALL(ea);
  // per-body outputs of the owned bodies; HDF5 rows also hold the joint wrenches (collective,
  // agreed inside)
  const mbspWriterOps *W = mbsp_writerOps(a->cfg->out_format);
  MBS_CALL(mbsp_bodyOutCreate(S->comm, m, S->eng, S->b0, S->b1,
                              W && W->joint_wrench && a->cfg->out_joint_wrench, &S->bo));
  int nqo = S->q1 - S->q0;
  snprintf(S->dir, sizeof S->dir, "%s", a->out_dir);
  mbspOutEnv env = {m, a->cfg, S->comm, rank, S->dir, S->bo, S->q0, nqo, S->v0, S->v1 - S->v0};
  MBS_CALL(mbsp_agreeErr(S->comm, mbsp_outCreate(&S->out, &env)));
  memcpy(S->y, S->s->q + S->q0, (size_t)nqo * sizeof(double));
  memcpy(S->y + nqo, S->s->qd + S->v0, (size_t)(S->v1 - S->v0) * sizeof(double));

  // the output directory: never overwrite an earlier run's files unless --force (a restart
  // continues the files of its own run)
  mbsErr e = MBS_OK;
  if (rank == 0) {
    e = mbsp_mkdirs(S->dir);
    const char *const *names = mbsp_outFileNames();
    char p[4200];
    // what to suggest: continuing the earlier run if it left a checkpoint (the command as it
    // can be pasted), else another --out or --force
    char ck[4200], hint[8192] = "use --force or another --out";
    struct stat stc;
    snprintf(ck, sizeof ck, "%s/checkpoint.bin", S->dir);
    if (!a->force && !a->restart && stat(ck, &stc) == 0 && S_ISREG(stc.st_mode)) {
      char cmd[7000];
      mbsp_simContinueCmd(S, ck, cmd, sizeof cmd);
      snprintf(hint, sizeof hint, "continue it with: %s; or use --force or another --out", cmd);
    }
    // a file name of the run that is not a regular file (a FIFO, a device, a directory, a
    // symbolic link) is never opened or renamed over, also with --force or --restart
    for (int k = 0; names[k] && !e; k++) {
      struct stat st;
      snprintf(p, sizeof p, "%s/%s", S->dir, names[k]);
      if (lstat(p, &st) == 0 && !S_ISREG(st.st_mode))
        e = mbs_errSet(MBS_ERR_IO,
                       "%s exists and is not a regular file; not writing it (move it "
                       "away or use another --out)",
                       p);
    }
    for (int k = 0; names[k] && !e && !a->force && !a->restart; k++) {
      struct stat st;
      snprintf(p, sizeof p, "%s/%s", S->dir, names[k]);
      if (stat(p, &st) == 0)
        e = mbs_errSet(MBS_ERR_IO, "%s exists; not overwriting an earlier run's output (%s)", p,
                       hint);
    }
    // claim the directory atomically: every run writes energy.csv, and only one of two runs
    // given the same --out can create it (O_EXCL; the stat above only makes the common case
    // fail early with a clear message)
    snprintf(p, sizeof p, "%s/energy.csv", S->dir);
    if (!e && !a->force && !a->restart) {
      int fd = MBS_FAULT_WRITE_POINT() ? -1 : open(p, O_WRONLY | O_CREAT | O_EXCL, 0666);
      if (fd < 0 && errno == EEXIST)
        e = mbs_errSet(MBS_ERR_IO,
                       "%s exists; not overwriting an earlier run's output (another run claimed "
                       "%s first; use --force or another --out)",
                       p, S->dir);
      else if (fd < 0)
        e = mbs_errSet(MBS_ERR_IO, "%s: cannot create: %s", p, strerror(errno));
      else
        close(fd);
    }
    S->claimed = !e && !a->restart; // the directory's run files are this run's from here on
  }
  return mbsp_agreeErr(S->comm, e);
}

// --restart, rank 0: are the files in the directory this run's? Read-only, before anything in the
// directory is changed (issue 30: a restart into another model's directory overwrote its CSV
// files, or cut its energy.csv before HDF5 refused). The directory's own checkpoint must be of
// this model, the CSV headers this model's, the HDF5 file of its sizes, and the energy.csv row
// at the checkpoint's step (if there is one) must hold the energies of the checkpoint's state
// (sout, gathered), to the last digit.
static mbsErr mbsp_simCheckDirRoot(mbspSim *S) {
  const mbsModel *m = S->m;
  const char *dir = S->dir, *why = NULL;
  char p[4200], what[400] = "";
  struct stat st, sck;
  snprintf(p, sizeof p, "%s/checkpoint.bin", dir);
  if (stat(p, &st) == 0 &&
      !(stat(S->a->restart, &sck) == 0 && st.st_dev == sck.st_dev && st.st_ino == sck.st_ino)) {
    mbsCkptHeader h;
    FILE *f = fopen(p, "rb");
    int ok = f && fread(&h, sizeof h, 1, f) == 1 && !memcmp(h.magic, MBS_CKPT_MAGIC, 8) &&
             h.fingerprint == mbs_ckptFingerprint(m) && h.nq == m->nq && h.nv == m->nv;
    if (f) fclose(f);
    if (!ok) why = "checkpoint.bin is of another model";
  }
  double t;
  long step;
  mbsp_tsGetState(S->ts, &t, &step, &(double){0});
  mbs_fwdPosition(m, S->sout, S->wout);
  mbs_fwdVelocity(m, S->sout, S->wout);
  char row[200];
  snprintf(row, sizeof row, "%ld,%.17g,%.17g,%.17g,", step, t, mbs_kineticEnergy(m, S->wout),
           mbs_potentialEnergy(m, S->sout, S->wout));
  mbsErr e = mbsp_outCheckRoot(&S->out, step, row, &why, what, sizeof what);
  if (!e && why)
    e = mbs_errSet(MBS_ERR_INPUT,
                   "mbspar: --restart %s: %s holds another run's outputs (%s%s); nothing was "
                   "changed: continue into the checkpoint's own directory or give another --out",
                   S->a->restart, dir, why, what);
  return e;
}

// --restart: the check above before the files are touched (collective: the state is gathered)
static mbsErr mbsp_simCheckDir(mbspSim *S) {
  MBS_CALL(mbsp_gatherState(S));
  return mbsp_agreeErr(S->comm, S->rank == 0 ? mbsp_simCheckDirRoot(S) : MBS_OK);
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
  MBS_CALL(mbsp_agreeErr(a->comm, e));
  if (!S->serial) e = mbsp_engineCreate(a->comm, m, MBSP_HALO_P2P, &S->eng);
  if (e == MBS_ERR_INPUT) e = mbs_configBlame(a->cfg, "model", e);
  // the solver now, not at the first evaluation: its failures are agreed before any solve
  if (!e && !S->serial) e = mbsp_agreeErr(a->comm, mbs_cfsBindSolver(m, mbsp_engineCfs(S->eng)));
  if (!e) e = mbsp_agreeErr(a->comm, mbsp_simSetup(S));
  if (!e)
    e = mbsp_agreeErr(a->comm, mbsp_tsCreate(a->comm, S->nloc, m->opt.integrator, m->opt.dt,
                                             m->opt.int_tol, mbsp_simRhs, mbsp_simPost, S, &S->ts));
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
    S->pprev = mbsp_power(S, S->y + (S->q1 - S->q0));
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
    e = mbsp_tsStep(S->ts, m->opt.t_end);
    if (!e) e = mbsp_tsGetSolution(S->ts, S->y);
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
                       t, step + 1, m->opt.dt,
                       (const char *[]){"euler", "rk4", "dp5"}[m->opt.integrator]);
    }
    // closed loops: q and qd back onto the loops (serial baselines; docs/loops.md)
    if (!e && S->serial && m->nloop && m->opt.projection) e = mbsp_simProject(S);
    if (!e && S->sfull) { // the engine: the whole state, projected on every rank alike
      e = mbsp_simFull(S);
      if (!e && m->nloop && m->opt.projection) e = mbsp_simProjectFull(S);
      e = mbsp_agreeErr(a->comm, e);
    }
    if (e) break;
    mbsp_tsGetState(S->ts, &t, &step, &dt);
    // power of the nonconservative joint forces summed over the ranks, trapezoid rule over the
    // step; the same sum carries a pending signal (a count per kind) and rank 0's decision to
    // flush the rows (output.flush_every): one allreduce per step
    int sg = mbsp_sim_signal;
    double red[5] = {mbsp_power(S, S->y + (S->q1 - S->q0)), sg == SIGTERM, sg == SIGUSR1,
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
  if (!e) e = mbsp_agreeErr(a->comm, mbsp_cliGatherRss(a->comm));
  if (!e && S->rank == 0) {
    if (!a->quiet && !a->no_table)
      printf("mbspar run %s: %d bodies, %d dofs, %d rank(s), %s + %s\n"
             "  t = %.9g s after %ld steps (%ld rejected), %ld evaluations, %.2f iterations each\n"
             "  energy: kinetic %.9g J, potential %.9g J, total %.9g J, work %.9g J\n"
             "  outputs in %s/ (%s, energy.csv, run.json)\n",
             a->cfg->filename, m->nbody, m->nv, S->size, mbs_solverName(m->opt.solver), o.method, t,
             step, o.rejected, S->evals, S->evals ? (double)S->iters / S->evals : 0.0, ke, pe,
             ke + pe, wk, S->dir, mbsp_outSummary(&S->out));
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

  mbsp_rankReportFree(&rr);
  mbsp_outDestroy(&S->out);
  mbsp_tsDestroy(&S->ts);
  if (S->serial) mbs_workDestroy(&S->w);
  mbsp_engineDestroy(&S->eng);
  mbs_stateDestroy(&S->s);
  mbs_stateDestroy(&S->sout);
  mbs_workDestroy(&S->wout);
  mbs_stateDestroy(&S->sfull);
  mbs_workDestroy(&S->wfull);
  free(S->fbuf);
  mbsp_bodyOutDestroy(&S->bo);
  free(S->y), free(S->qcnt), free(S->qdsp), free(S->vcnt), free(S->vdsp), free(S->lcnt);
  free(S->ldsp);
  return e;
}
