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
#include "h5out.h"
#include "mbspar/mbs_textfile.h"
#include "mbspar/mbs_checkpoint.h"
#include "mbspar/mbs_fault.h"
#include "mbspar/mbs_finite.h"
#include "mbspar/mbs_loops.h"
#include "petsc_ts.h"
#include "rankreport.h"
#include "xdmf.h"
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
  FILE *ftraj, *fenergy;
  // rank 0: the CSV files' stdio buffers (ours, so that they only reach the file as whole rows,
  // docs/outputs.md "Flushing"): capacity, the longest row, the file position written so far
  char *tbuf, *ebuf;
  size_t tcap, ecap, trowmax, erowmax;
  long tdone, edone;
  long unflushed;    // output rows since the last flush (every rank)
  double last_flush; // rank 0: wall-clock time of the last flush
  mbspH5 *h5;        // output.format = hdf5: the trajectory writer (every rank writes its slices)
  mbspBodyOut *bo;   // per-body outputs (poses ...) of the owned bodies (bodyout.c)
  mbspXdmf *xmf;     // rank 0, HDF5: trajectory.xmf (xdmf.c)
  double *poses;     // rank 0, CSV: the gathered pose rows (nbody x MBS_POSE_NCOMP)
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

static void mbsp_csvHeader(mbspSim *S, int traj, int energy) {
  const mbsModel *m = S->m;
  if (S->ftraj && traj) {
    char nm[400];
    fprintf(S->ftraj, "t");
    for (int b = 0; b < m->nbody; b++)
      for (int k = 0; k < m->body_qnum[b]; k++)
        fprintf(S->ftraj, ",%s", mbs_coordName(m, "q", b, k, 0, nm, sizeof nm));
    for (int b = 0; b < m->nbody; b++)
      for (int k = 0; k < m->body_dofnum[b]; k++)
        fprintf(S->ftraj, ",%s", mbs_coordName(m, "qd", b, k, 1, nm, sizeof nm));
    mbsp_bodyOutCsvHeader(m, S->ftraj); // the pose of every body
    fprintf(S->ftraj, "\n");
  }
  if (energy)
    fprintf(S->fenergy,
            "step,t,kinetic,potential,total,work,total_minus_work,evaluations,"
            "avg_iterations%s\n",
            S->m->nloop ? ",closure_pos,closure_rot,closure_vel" : "");
}

static int mbsp_rowRoom(FILE *f, size_t cap, size_t rowmax, long done);
static void mbsp_rowPass(FILE *f, long *done);

// one output row (collective: gathers; rank 0 writes)
static mbsErr mbsp_simOutput(mbspSim *S, double t, long step, double *ke, double *pe, double *wk) {
  MBS_TIC(S->tim, MBS_TIMER_OUTPUT);
  MBS_CALL(mbsp_gatherState(S));
  // per-body outputs, computed by the owners of the bodies; CSV: the pose rows to rank 0
  if (S->a->cfg && S->a->cfg->torques) // the joint forces of the row's time
    mbs_torquesAt(S->a->cfg->torques, S->m, t, mbsp_bodyOutState(S->bo)->tau);
  MBS_CALL(mbsp_bodyOutCompute(S->bo, t, S->y, S->y + (S->q1 - S->q0)));
  if (S->ftraj || !S->h5) MBS_CALL(mbsp_bodyOutGather(S->bo, S->poses));
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
  }
  if (S->rank == 0 && !e) {
    const mbsModel *m = S->m;
    long de = S->evals - S->evals_out, di = S->iters - S->iters_out;
    double k = en[0], p = en[1];
    // whole rows only reach the files: pass the buffered rows on first if this one might not
    // fit, in both files alike (so that they hold the same rows but within a write)
    if (!mbsp_rowRoom(S->ftraj, S->tcap, S->trowmax, S->tdone) ||
        !mbsp_rowRoom(S->fenergy, S->ecap, S->erowmax, S->edone)) {
      mbsp_rowPass(S->ftraj, &S->tdone);
      mbsp_rowPass(S->fenergy, &S->edone);
    }
    if (S->ftraj) {
      fprintf(S->ftraj, "%.17g", t);
      for (int i = 0; i < m->nq; i++) fprintf(S->ftraj, ",%.17g", S->sout->q[i]);
      for (int i = 0; i < m->nv; i++) fprintf(S->ftraj, ",%.17g", S->sout->qd[i]);
      for (size_t i = 0; i < (size_t)m->nbody * MBS_POSE_NCOMP; i++)
        fprintf(S->ftraj, ",%.17g", S->poses[i]);
      fprintf(S->ftraj, "\n");
    }
    if (m->nloop) { // the closure error of the row's state
      mbs_loopViolation(m, S->wout, &S->last_pos, &S->last_rot, &S->last_vel);
      S->viol_pos = fmax(S->viol_pos, S->last_pos), S->viol_rot = fmax(S->viol_rot, S->last_rot);
      S->viol_vel = fmax(S->viol_vel, S->last_vel);
    }
    if (S->fenergy) {
      fprintf(S->fenergy, "%ld,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%ld,%.6g", step, t, k, p, k + p,
              wsum, k + p - wsum, S->evals, de > 0 ? (double)di / de : 0.0);
      if (m->nloop) fprintf(S->fenergy, ",%.3e,%.3e,%.3e", S->last_pos, S->last_rot, S->last_vel);
      fprintf(S->fenergy, "\n");
    }
    if ((S->ftraj && ferror(S->ftraj)) || (S->fenergy && ferror(S->fenergy)) ||
        MBS_FAULT_WRITE_POINT())
      e = mbs_errSet(MBS_ERR_IO, "%s: write error at the output row of t = %.9g s (disk full?)",
                     S->dir, t);
  }
  MBS_CALL(mbsp_agreeErr(S->comm, e)); // rank 0 alone may have failed
  // HDF5: every rank its owned slices [q_own; qd_own] = S->y (collective, agreed inside); the
  // XDMF grid of the row is written once the row is flushed (mbsp_simFlushRows)
  if (S->h5) {
    mbsp_bodyOutH5Row(S->bo, S->h5);
    MBS_CALL(mbsp_h5Append(S->h5, t, S->y, S->y + (S->q1 - S->q0), en, avg));
    if (S->xmf) e = mbsp_xdmfAppend(S->xmf, mbsp_h5Rows(S->h5) - 1, t);
    MBS_CALL(mbsp_agreeErr(S->comm, e));
  }
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

// Flushing (docs/outputs.md "Flushing"): the CSV files have stdio buffers of our own, large enough
// for the longest row, and are passed to the file (one write of whole rows) before a row that
// might not fit and at every flush, so a killed run leaves no half row in them; the HDF5 file is
// flushed (H5Fflush: the datasets' extents and the chunk index on disk, the file opens after a
// kill) and only then are the rows' grids added to the XDMF file, which so never lists a row the
// HDF5 file lacks.

// the longest CSV row of \p nfield fields: "%.17g" needs at most 24 characters, a comma each
static size_t mbsp_rowMax(long nfield) {
  return 25 * (size_t)nfield + 2;
}

// rank 0: give \p f a fully buffered stdio buffer of ours for rows of at most \p rowmax bytes
// (before any other operation on \p f); the buffer is freed after fclose
static mbsErr mbsp_rowBuffer(FILE *f, size_t rowmax, char **buf, size_t *cap) {
  if (!f) return MBS_OK;
  *cap = rowmax + 65536;
  *buf = malloc(*cap);
  MBS_CHECK(*buf, MBS_ERR_NOMEM, "out of memory (output buffer of %zu bytes)", *cap);
  MBS_CHECK(setvbuf(f, *buf, _IOFBF, *cap) == 0, MBS_ERR_IO, "cannot set an output buffer");
  return MBS_OK;
}

// rank 0: does one more row of \p rowmax bytes fit into the buffer of \p f (else stdio would
// write a part of it)? \p done: the file position written so far
static int mbsp_rowRoom(FILE *f, size_t cap, size_t rowmax, long done) {
  if (!f) return 1;
  long pos = ftell(f);
  return pos >= 0 && pos >= done && (size_t)(pos - done) + rowmax <= cap;
}

// rank 0: pass the buffered (whole) rows of \p f to the file
static void mbsp_rowPass(FILE *f, long *done) {
  if (!f) return;
  fflush(f); // an error stays in ferror(f): the output row reports it
  long pos = ftell(f);
  *done = pos >= 0 ? pos : 0;
}

// rank 0: one CSV file's rows to the file (\p sync: also to the disk, fsync)
static mbsErr mbsp_simSync(FILE *f, long *done, int sync, const char *dir, const char *name) {
  if (!f) return MBS_OK;
  errno = 0;
  int bad =
      fflush(f) != 0 || ferror(f) || (sync && fsync(fileno(f)) != 0) || MBS_FAULT_WRITE_POINT();
  MBS_CHECK(!bad, MBS_ERR_IO, "%s/%s: write error (disk full?): %s", dir, name,
            errno ? strerror(errno) : "stream error");
  long pos = ftell(f);
  *done = pos >= 0 ? pos : 0;
  return MBS_OK;
}

// every output row so far to the files (\p sync: to the disk, before a checkpoint names its
// step, so a restart from it finds them all, issue 12.2): CSV files (rank 0), the HDF5 file
// (collective), then the XDMF grids of the flushed rows (rank 0). Collective.
static mbsErr mbsp_simFlushRows(mbspSim *S, int sync) {
  mbsErr e = MBS_OK;
  if (S->rank == 0) {
    e = mbsp_simSync(S->ftraj, &S->tdone, sync, S->dir, "trajectory.csv");
    if (!e) e = mbsp_simSync(S->fenergy, &S->edone, sync, S->dir, "energy.csv");
    S->last_flush = mbsp_wtime();
  }
  MBS_CALL(mbsp_agreeErr(S->comm, e));
  if (S->h5) MBS_CALL(mbsp_h5Flush(S->h5));
  if (S->xmf) e = mbsp_xdmfCommit(S->xmf, mbsp_h5Rows(S->h5));
  MBS_CALL(mbsp_agreeErr(S->comm, e));
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

// a complete CSV line: ends in a newline and has \p nfield fields (a row cut by a kill has not)
static int mbsp_csvComplete(const char *line, ssize_t n, int nfield) {
  if (n <= 0 || line[n - 1] != '\n') return 0;
  int k = 1;
  for (ssize_t i = 0; i < n; i++) k += line[i] == ',';
  return k == nfield;
}

// the \p k-th field (0-based) of a CSV line, up to the next comma or the end, into buf
static void mbsp_csvField(const char *line, int k, char *buf, size_t n) {
  const char *c = line;
  for (int i = 0; i < k && c; i++) {
    c = strchr(c, ',');
    if (c) c++;
  }
  size_t len = 0;
  while (c && c[len] && c[len] != ',' && c[len] != '\n') len++;
  if (len >= n) len = n - 1;
  if (c) memcpy(buf, c, len);
  buf[len] = 0;
}

// --restart: cut energy.csv and trajectory.csv back to the checkpoint's step, keeping the headers.
// energy.csv keeps its header and the complete rows (9 fields, newline) with step <= \p step, in
// order; trajectory.csv keeps its header and as many complete rows, each of which must carry the
// t of the energy row it belongs to (the two files are written together, row by row). Rows after
// the checkpoint, a row cut by a kill and rows of a later, killed continuation all go, so the
// files read as if the run had not been interrupted. Each file is rewritten through a temporary
// and renamed into place. Rank 0.
static mbsErr mbsp_truncateFile(const char *path, long *nkeep, int nfield, long step, char **times,
                                long ntimes) {
  FILE *in = fopen(path, "r");
  if (!in) { // nothing to continue: a new file with its header
    if (nkeep) *nkeep = -1;
    return MBS_OK;
  }
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  FILE *out = MBS_FAULT_WRITE_POINT() ? NULL : fopen(tmp, "w");
  if (!out) {
    fclose(in);
    return mbs_errSet(MBS_ERR_IO, "%s: cannot rewrite: %s", path, strerror(errno));
  }
  char *line = NULL, tf[64];
  size_t cap = 0;
  ssize_t n;
  long row = -1; // -1: the header
  mbsErr e = MBS_OK;
  while (!e && (n = getline(&line, &cap, in)) > 0) {
    if (row < 0) { // the header (a file cut inside its header is refused below)
      if (n < 2 || line[n - 1] != '\n') break;
      if (nfield == 0) { // trajectory.csv: the number of columns is the header's
        nfield = 1;
        for (ssize_t i = 0; i < n; i++) nfield += line[i] == ',';
      }
    } else if (times) { // trajectory.csv: the rows of the kept energy rows, same times
      if (row >= ntimes || !mbsp_csvComplete(line, n, nfield)) break;
      mbsp_csvField(line, 0, tf, sizeof tf);
      if (strcmp(tf, times[row]) != 0)
        e = mbs_errSet(MBS_ERR_INPUT,
                       "%s:%ld: row at t = %s, but energy.csv has t = %s there: the files are "
                       "not of one run (move them away or use another --out)",
                       path, row + 2, tf, times[row]);
    } else { // energy.csv: complete rows up to the checkpoint's step
      if (!mbsp_csvComplete(line, n, nfield)) break;
      mbsp_csvField(line, 0, tf, sizeof tf);
      char *end = NULL;
      long st = strtol(tf, &end, 10);
      if (end == tf || *end || st > step) break;
    }
    if (e) break;
    if (fwrite(line, 1, (size_t)n, out) != (size_t)n)
      e = mbs_errSet(MBS_ERR_IO, "%s: write error", tmp);
    row++;
  }
  free(line);
  fclose(in);
  int bad = ferror(out) != 0;
  bad |= fclose(out) != 0;
  if (!e && row < 0)
    e = mbs_errSet(MBS_ERR_INPUT, "%s: has no complete header line: not a file of this run", path);
  if (!e && times && row < ntimes)
    e = mbs_errSet(MBS_ERR_INPUT,
                   "%s: has %ld complete rows up to the checkpoint, energy.csv %ld: the rows "
                   "before the checkpoint are not all there (move the files away to start their "
                   "outputs anew from the checkpoint)",
                   path, row, ntimes);
  if (!e && (bad || MBS_FAULT_WRITE_POINT()))
    e = mbs_errSet(MBS_ERR_IO, "%s: write error (disk full?): %s", tmp, strerror(errno));
  if (!e && (MBS_FAULT_WRITE_POINT() || rename(tmp, path) != 0))
    e = mbs_errSet(MBS_ERR_IO, "%s: cannot rename %s into place: %s", path, tmp, strerror(errno));
  if (e) remove(tmp);
  if (nkeep) *nkeep = row;
  return e;
}

// the t column of the kept rows of energy.csv (times[k] of row k, malloc'ed strings)
static mbsErr mbsp_energyTimes(const char *path, long nrow, char ***times) {
  *times = calloc((size_t)(nrow > 0 ? nrow : 1), sizeof **times);
  MBS_CHECK(*times, MBS_ERR_NOMEM, "out of memory (restart)");
  FILE *f = fopen(path, "r");
  MBS_CHECK(f, MBS_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
  char *line = NULL;
  size_t cap = 0;
  mbsErr e = MBS_OK;
  for (long k = -1; !e && k < nrow && getline(&line, &cap, f) > 0; k++) {
    if (k < 0) continue; // header
    char tf[64];
    mbsp_csvField(line, 1, tf, sizeof tf);
    size_t len = strlen(tf) + 1;
    (*times)[k] = malloc(len);
    if (!(*times)[k])
      e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (restart)");
    else
      memcpy((*times)[k], tf, len);
  }
  free(line);
  fclose(f);
  return e;
}

static mbsErr mbsp_truncateOutputs(const char *dir, int csv, long step) {
  char pt[4200], pe[4200];
  snprintf(pt, sizeof pt, "%s/trajectory.csv", dir);
  snprintf(pe, sizeof pe, "%s/energy.csv", dir);
  long nkeep = 0;
  MBS_CALL(mbsp_truncateFile(pe, &nkeep, 9, step, NULL, 0));
  if (!csv) return MBS_OK;
  if (nkeep < 0) { // no energy.csv: nothing to match the trajectory rows against, start anew
    struct stat st;
    if (stat(pt, &st) == 0 && (MBS_FAULT_WRITE_POINT() || remove(pt) != 0))
      return mbs_errSet(MBS_ERR_IO, "%s: cannot remove: %s", pt, strerror(errno));
    return MBS_OK;
  }
  char **times = NULL;
  mbsErr e = mbsp_energyTimes(pe, nkeep, &times);
  if (!e) e = mbsp_truncateFile(pt, NULL, 0, step, times, nkeep);
  for (long k = 0; times && k < nkeep; k++) free(times[k]);
  free(times);
  return e;
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
  if (S->a->cfg->out_format != MBS_OUTFMT_HDF5)
    MBS_ALLOC(S->poses, (size_t)m->nbody * MBS_POSE_NCOMP);
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
  int h5 = a->cfg->out_format == MBS_OUTFMT_HDF5;
  MBS_CALL(
      mbsp_bodyOutCreate(S->comm, m, S->eng, S->b0, S->b1, h5 && a->cfg->out_joint_wrench, &S->bo));
  int nqo = S->q1 - S->q0;
  memcpy(S->y, S->s->q + S->q0, (size_t)nqo * sizeof(double));
  memcpy(S->y + nqo, S->s->qd + S->v0, (size_t)(S->v1 - S->v0) * sizeof(double));

  // the output directory: never overwrite an earlier run's files unless --force (a restart
  // continues the files of its own run)
  snprintf(S->dir, sizeof S->dir, "%s", a->out_dir);
  mbsErr e = MBS_OK;
  if (rank == 0) {
    e = mbsp_mkdirs(S->dir);
    static const char *const names[] = {"trajectory.csv", "trajectory.h5", "trajectory.xmf",
                                        "bodies.csv",     "energy.csv",    "run.json",
                                        "checkpoint.bin"};
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
    for (int k = 0; k < 7 && !e; k++) {
      struct stat st;
      snprintf(p, sizeof p, "%s/%s", S->dir, names[k]);
      if (lstat(p, &st) == 0 && !S_ISREG(st.st_mode))
        e = mbs_errSet(MBS_ERR_IO,
                       "%s exists and is not a regular file; not writing it (move it "
                       "away or use another --out)",
                       p);
    }
    for (int k = 0; k < 7 && !e && !a->force && !a->restart; k++) {
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

// the first line of \p path into \p buf (empty if the file is absent or empty)
static void mbsp_firstLine(const char *path, char **buf, size_t *cap) {
  FILE *f = fopen(path, "r");
  ssize_t n = f ? getline(buf, cap, f) : -1;
  if (f) fclose(f);
  if (n < 0 && *buf) (*buf)[0] = 0;
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
  // the headers this run writes
  char *want[2] = {NULL, NULL}, *have = NULL;
  size_t wlen[2] = {0, 0}, hcap = 0;
  FILE *mt = open_memstream(&want[0], &wlen[0]), *me = open_memstream(&want[1], &wlen[1]);
  if (mt && me) {
    FILE *ft = S->ftraj, *fe = S->fenergy;
    S->ftraj = mt, S->fenergy = me;
    mbsp_csvHeader(S, 1, 1);
    S->ftraj = ft, S->fenergy = fe;
  }
  if (mt) fclose(mt);
  if (me) fclose(me);
  mbsErr e = want[0] && want[1] ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory (restart)");
  static const char *const csvname[2] = {"trajectory.csv", "energy.csv"};
  for (int k = 0; k < 2 && !e && !why; k++) {
    snprintf(p, sizeof p, "%s/%s", dir, csvname[k]);
    mbsp_firstLine(p, &have, &hcap);
    if (have && have[0] && strcmp(have, want[k]) != 0)
      why = k ? "energy.csv has another header" : "trajectory.csv has another model's columns";
  }
  // the energies of the checkpoint's state against the row of its step
  snprintf(p, sizeof p, "%s/energy.csv", dir);
  FILE *f = !e && !why ? fopen(p, "r") : NULL;
  if (f) {
    double t;
    long step;
    mbsp_tsGetState(S->ts, &t, &step, &(double){0});
    mbs_fwdPosition(m, S->sout, S->wout);
    mbs_fwdVelocity(m, S->sout, S->wout);
    char row[200], fld[64];
    snprintf(row, sizeof row, "%ld,%.17g,%.17g,%.17g,", step, t, mbs_kineticEnergy(m, S->wout),
             mbs_potentialEnergy(m, S->sout, S->wout));
    snprintf(fld, sizeof fld, "%ld,", step);
    while (getline(&have, &hcap, f) > 0)
      if (!strncmp(have, fld, strlen(fld))) {
        if (strncmp(have, row, strlen(row)) != 0) {
          why = "energy.csv holds other energies at the checkpoint's step";
          snprintf(what, sizeof what, " (%.*s... against %s...)", 60, have, row);
        }
        break;
      }
    fclose(f);
  }
  if (!e && !why && S->a->cfg->out_format == MBS_OUTFMT_HDF5) {
    snprintf(p, sizeof p, "%s/trajectory.h5", dir);
    e = mbsp_h5Probe(p, m->nq, m->nv);
  }
  free(want[0]), free(want[1]), free(have);
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

static mbsErr mbsp_simOpenFiles(mbspSim *S, int append, long step) {
  if (S->rank != 0) return MBS_OK;
  int csv = S->a->cfg->out_format != MBS_OUTFMT_HDF5;
  char pt[4200], pe[4200];
  snprintf(pt, sizeof pt, "%s/trajectory.csv", S->dir);
  snprintf(pe, sizeof pe, "%s/energy.csv", S->dir);
  if (append) MBS_CALL(mbsp_truncateOutputs(S->dir, csv, step));
  // a restart continues the files it found (cut back above), else they start with their header
  struct stat st;
  int tnew = !append || stat(pt, &st) != 0, enew = !append || stat(pe, &st) != 0;
  errno = 0;
  if (!MBS_FAULT_WRITE_POINT()) {
    S->ftraj = csv ? fopen(pt, tnew ? "w" : "a") : NULL;
    S->fenergy = fopen(pe, enew ? "w" : "a");
  }
  MBS_CHECK((S->ftraj || !csv) && S->fenergy, MBS_ERR_IO, "%s: cannot open output files: %s",
            S->dir, strerror(errno));
  const mbsModel *m = S->m;
  MBS_CALL(mbsp_rowBuffer(S->ftraj,
                          mbsp_rowMax(1 + m->nq + m->nv + (long)m->nbody * MBS_POSE_NCOMP),
                          &S->tbuf, &S->tcap));
  MBS_CALL(mbsp_rowBuffer(S->fenergy, mbsp_rowMax(12), &S->ebuf, &S->ecap));
  S->trowmax = mbsp_rowMax(1 + m->nq + m->nv + (long)m->nbody * MBS_POSE_NCOMP);
  S->erowmax = mbsp_rowMax(12);
  mbsp_csvHeader(S, tnew, enew);
  // the headers now (a long header may pass the buffer in parts: only at the start)
  MBS_CALL(mbsp_simSync(S->ftraj, &S->tdone, 0, S->dir, "trajectory.csv"));
  MBS_CALL(mbsp_simSync(S->fenergy, &S->edone, 0, S->dir, "energy.csv"));
  // the bodies and their parents beside the CSV trajectory (HDF5 files hold them in /model)
  char pb[4200];
  snprintf(pb, sizeof pb, "%s/bodies.csv", S->dir);
  if (csv) MBS_CALL(mbsp_bodyOutTopology(S->m, pb));
  return MBS_OK;
}

// output.format = hdf5: create (or, on --restart, continue) DIR/trajectory.h5 (collective)
static mbsErr mbsp_simOpenH5(mbspSim *S, int append, double t_cut) {
  const mbsModel *m = S->m;
  char path[4200], **nm = calloc((size_t)(m->nq + m->nv), sizeof(char *));
  snprintf(path, sizeof path, "%s/trajectory.h5", S->dir);
  // the CSV column names, q then qd
  int nomem = !nm;
  for (int b = 0, i = 0, j = m->nq; nm && b < m->nbody; b++) {
    size_t len = strlen(m->body_name[b]) + 16;
    for (int k = 0; k < m->body_qnum[b]; k++, i++)
      if ((nm[i] = malloc(len)))
        mbs_coordName(m, "q", b, k, 0, nm[i], len);
      else
        nomem = 1;
    for (int k = 0; k < m->body_dofnum[b]; k++, j++)
      if ((nm[j] = malloc(len)))
        mbs_coordName(m, "qd", b, k, 1, nm[j], len);
      else
        nomem = 1;
  }
  const char *const *cn = (const char *const *)nm;
  int nqo = S->q1 - S->q0, nvo = S->v1 - S->v0;
  mbsErr e = mbsp_agreeErr(
      S->comm, nomem ? mbs_errSet(MBS_ERR_NOMEM, "out of memory (HDF5 column names)") : MBS_OK);
  if (!e)
    e = append
            ? mbsp_h5Resume(S->comm, path, m->nq, m->nv, S->q0, nqo, S->v0, nvo, cn, t_cut, &S->h5)
            : mbsp_h5Create(S->comm, path, m->nq, m->nv, S->q0, nqo, S->v0, nvo, cn, &S->h5);
  for (int i = 0; nm && i < m->nq + m->nv; i++) free(nm[i]);
  free(nm);
  // the per-body datasets (/bodies, /joints, /model)
  if (!e) e = mbsp_bodyOutH5(S->bo, S->h5);
  // rank 0: the XDMF description for ParaView (a restart continues it from the kept rows)
  if (!e && S->rank == 0) {
    char px[4200], pe[4200];
    snprintf(px, sizeof px, "%s/trajectory.xmf", S->dir);
    snprintf(pe, sizeof pe, "%s/energy.csv", S->dir);
    e = mbsp_xdmfOpen(px, "trajectory.h5", m->nbody, S->a->cfg->out_joint_wrench,
                      mbsp_h5Rows(S->h5), pe, &S->xmf);
  }
  e = mbsp_agreeErr(S->comm, e);
  if (e) mbsp_h5Abandon(&S->h5);
  return e;
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
    if (!e) e = mbsp_agreeErr(a->comm, mbsp_simOpenFiles(S, a->restart != NULL, step));
    if (!e && a->cfg->out_format == MBS_OUTFMT_HDF5) e = mbsp_simOpenH5(S, a->restart != NULL, t);
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
  mbsErr eh5 = mbsp_h5Close(&S->h5);
  if (!e) e = eh5;
  mbsErr ec = MBS_OK;
  if (S->xmf) ec = mbsp_xdmfClose(&S->xmf); // rank 0: the final row count in every grid
  if (!ec) ec = mbsp_simSync(S->ftraj, &S->tdone, 1, S->dir, "trajectory.csv"); // the last rows
  if (!ec) ec = mbsp_simSync(S->fenergy, &S->edone, 1, S->dir, "energy.csv");
  ec = mbsp_agreeErr(a->comm, ec); // rank 0 alone may have failed
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
             ke + pe, wk, S->dir,
             a->cfg->out_format == MBS_OUTFMT_HDF5 ? "trajectory.h5, trajectory.xmf"
                                                   : "trajectory.csv, bodies.csv");
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
  if (S->ftraj) fclose(S->ftraj);
  if (S->fenergy) fclose(S->fenergy);
  free(S->tbuf), free(S->ebuf); // after fclose: they were the streams' buffers
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
  free(S->poses);
  free(S->y), free(S->qcnt), free(S->qdsp), free(S->vcnt), free(S->vdsp), free(S->lcnt);
  free(S->ldsp);
  return e;
}
