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
/// evaluation to agree on errors, one per step for the signal flag (and the adaptive error norm
/// inside TS). At output steps the state is gathered to rank 0 (O(n) bytes), which writes the
/// files and computes the energies; checkpoints also gather the warm-start history.
#define _POSIX_C_SOURCE 200809L
#include "sim.h"
#include "cli.h"
#include <errno.h>
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
#include "mbspar/mbs_checkpoint.h"
#include "mbspar/mbs_loops.h"
#include "petsc_ts.h"
#include "rankreport.h"
#include "xdmf.h"
#include "mbspar/mbs_solvertype.h"

static volatile sig_atomic_t mbsp_sim_signal = 0;

static void mbsp_simOnSignal(int sig) {
  mbsp_sim_signal = sig;
}

void mbsp_simInstallSignals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = mbsp_simOnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGUSR1, &sa, NULL);
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
  mbspH5 *h5;      // output.format = hdf5: the trajectory writer (every rank writes its slices)
  mbspBodyOut *bo; // per-body outputs (poses ...) of the owned bodies (bodyout.c)
  mbspXdmf *xmf;   // rank 0, HDF5: trajectory.xmf (xdmf.c)
  double *poses;   // rank 0, CSV: the gathered pose rows (nbody x MBS_POSE_NCOMP)
  char dir[4096];
  // bookkeeping (identical on every rank except the local work partial sums)
  double work, pprev;
  long evals, iters, nonconv, evals_out, iters_out;
  int warned, stage_count;
  double t_start, wall0, last_progress;
  long step_start; // first step of this invocation (progress rate)
  int live;        // progress display: -1 not decided, 0 plain lines, 1 live line
  // closed loops (serial baselines, rank 0; docs/loops.md): projection after each step and the
  // closure error at the output rows
  long proj_steps, proj_iters, proj_fail;
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
  }
  return p;
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
      S->proj_steps++, S->proj_iters += pj.iterations, S->proj_fail += !pj.converged;
      S->proj_dq = fmax(S->proj_dq, pj.dq_max), S->proj_dqd = fmax(S->proj_dqd, pj.dqd_max);
    }
  }
  MBS_CALL(mbsp_agreeErr(S->comm, e));
  return mbsp_tsSetSolution(S->ts, S->y);
}

// ---------------------------------------------------------------- right side

static mbsErr mbsp_simRhs(void *ctx, double t, const double *y, double *f) {
  mbspSim *S = ctx;
  const mbsModel *m = S->m;
  int nqo = S->q1 - S->q0, nvo = S->v1 - S->v0;
  // a stage state that is no longer finite means the explicit integrator diverged
  double bad = 0;
  for (int i = 0; i < nqo + nvo; i++)
    if (!isfinite(y[i])) bad = 1;
  MBS_CALL(mbsp_allreduceMax(S->comm, &bad, 1));
  if (bad > 0)
    return mbs_errSet(MBS_ERR_NUMERIC,
                      "mbspar run: the integration diverged near t = %.9g s: a stage state is no "
                      "longer finite; integrator.dt = %g is probably above the stability limit "
                      "of the method for this model (try a smaller dt or integrator.method = dp5)",
                      t, S->m->opt.dt);
  memcpy(S->s->q + S->q0, y, (size_t)nqo * sizeof(double));
  memcpy(S->s->qd + S->v0, y + nqo, (size_t)nvo * sizeof(double));
  S->s->time = t;
  // warm-start slot: the position of this evaluation within the step (capped: the extra
  // evaluations of a rejected adaptive step share the last slot)
  S->s->stage = S->stage_count < S->s->nstage ? S->stage_count : S->s->nstage - 1;
  S->stage_count++;
  mbsErr e = MBS_OK;
  if (S->serial) {
    if (S->rank == 0) e = mbs_forward(m, S->s, S->w);
  } else {
    e = mbsp_engineForward(S->eng, S->s);
  }
  MBS_CALL(mbsp_agreeErr(S->comm, e)); // nobody continues alone into the next collective
  S->evals++;
  if (S->w && getenv("MBS_DEBUG_ITERS") && S->rank == 0)
    fprintf(stderr, "eval %ld t=%.17g stage %d nhist %d ws %d it=%d res %g\n", S->evals, t,
            S->s->stage, S->s->nhist[S->s->stage], m->opt.warm_start, S->w->stat.iterations,
            S->w->stat.residual);
  if (S->w) {
    S->iters += S->w->stat.iterations;
    if (!S->serial && S->w->stat.reason < 0) {
      S->nonconv++;
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

static void mbsp_csvHeader(mbspSim *S) {
  const mbsModel *m = S->m;
  if (S->ftraj) {
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
  fprintf(S->fenergy,
          "step,t,kinetic,potential,total,work,total_minus_work,evaluations,"
          "avg_iterations%s\n",
          S->m->nloop ? ",closure_pos,closure_rot,closure_vel" : "");
}

// one output row (collective: gathers; rank 0 writes)
static mbsErr mbsp_simOutput(mbspSim *S, double t, long step, double *ke, double *pe, double *wk) {
  MBS_TIC(S->tim, MBS_TIMER_OUTPUT);
  MBS_CALL(mbsp_gatherState(S));
  // per-body outputs, computed by the owners of the bodies; CSV: the pose rows to rank 0
  MBS_CALL(mbsp_bodyOutCompute(S->bo, t, S->y, S->y + (S->q1 - S->q0)));
  if (S->ftraj || !S->h5) MBS_CALL(mbsp_bodyOutGather(S->bo, S->poses));
  double wsum = S->work;
  MBS_CALL(mbsp_allreduceSum(S->comm, &wsum, 1));
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
    if ((S->ftraj && ferror(S->ftraj)) || (S->fenergy && ferror(S->fenergy)))
      e = mbs_errSet(MBS_ERR_IO, "%s: write error (disk full?)", S->dir);
  }
  // HDF5: every rank its owned slices [q_own; qd_own] = S->y (collective)
  if (S->h5) {
    mbsp_bodyOutH5Row(S->bo, S->h5);
    mbsErr eh = mbsp_h5Append(S->h5, t, S->y, S->y + (S->q1 - S->q0), en, avg);
    if (!e) e = eh;
    if (!e && S->xmf) e = mbsp_xdmfAppend(S->xmf, mbsp_h5Rows(S->h5) - 1, t);
  }
  MBS_CALL(e);
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

static mbsErr mbsp_simCheckpoint(mbspSim *S, char *path_out, size_t pathlen) {
  const mbsModel *m = S->m;
  MBS_TIC(S->tim, MBS_TIMER_OUTPUT);
  MBS_CALL(mbsp_gatherState(S));
  double wsum = S->work;
  MBS_CALL(mbsp_allreduceSum(S->comm, &wsum, 1));
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
  double dummy = 0;
  for (int k = 0; k < S->s->nstage * MBS_WARM_HIST; k++) {
    const double *src = S->s->hist_lam + (size_t)k * m->nlam + S->l0;
    e = mbsp_gatherv(S->comm, nlo ? src : &dummy, nlo,
                     S->rank == 0 ? hl + (size_t)k * m->nlam : &dummy, S->lcnt, S->ldsp);
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
    FILE *f = fopen(tmp, "wb");
    if (!f) {
      e = mbs_errSet(MBS_ERR_IO, "%s: cannot write checkpoint: %s", tmp, strerror(errno));
    } else {
      size_t nw = fwrite(buf, 1, bytes, f);
      int bad = nw != bytes || fflush(f) != 0 || fsync(fileno(f)) != 0;
      bad |= fclose(f) != 0;
      if (bad) {
        remove(tmp);
        e = mbs_errSet(MBS_ERR_IO, "%s: checkpoint write failed (disk full?)", tmp);
      } else if (rename(tmp, path_out) != 0) {
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
  S->work = S->rank == 0 ? h.work : 0;
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
  if (mkdir(p, 0777) != 0 && errno != EEXIST)
    return mbs_errSet(MBS_ERR_IO, "%s: cannot create directory: %s", p, strerror(errno));
  return MBS_OK;
}

// keep the CSV rows with t <= t_cut (restart: rows written after the checkpoint are dropped)
static mbsErr mbsp_truncateCsv(const char *path, int tcol, double t_cut) {
  FILE *in = fopen(path, "r");
  if (!in) return MBS_OK;
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  FILE *out = fopen(tmp, "w");
  if (!out) {
    fclose(in);
    return mbs_errSet(MBS_ERR_IO, "%s: cannot rewrite: %s", path, strerror(errno));
  }
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  int first = 1;
  while ((n = getline(&line, &cap, in)) > 0) {
    if (!first) {
      const char *c = line;
      for (int k = 0; k < tcol && c; k++) {
        c = strchr(c, ',');
        if (c) c++;
      }
      if (!c || strtod(c, NULL) > t_cut * (1 + 1e-15) + 1e-300) continue;
    }
    first = 0;
    fwrite(line, 1, (size_t)n, out);
  }
  free(line);
  fclose(in);
  if (fclose(out) != 0 || rename(tmp, path) != 0) {
    remove(tmp);
    return mbs_errSet(MBS_ERR_IO, "%s: cannot rewrite", path);
  }
  return MBS_OK;
}

typedef struct {
  const mbspSim *S;
  const mbspRankReport *rr;
  double t, ke, pe, wk, dt_last;
  long steps, rejected;
  const char *ts_type, *method, *stop; // method: the one TS ran (after -ts_* options)
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
  mbsp_rankReportJson(o->rr, j);
  mbs_jsonBeginObject(j, "results");
  mbs_jsonString(j, "stopped", o->stop);
  mbs_jsonNumber(j, "t", o->t);
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

static mbsErr mbsp_simSetup(mbspSim *S) {
  const mbsModel *m = S->m;
  const mbspSimArgs *a = S->a;
  int rank = S->rank;
  MBS_CALL(mbs_stateCreate(m, &S->s));
  // one warm-start history per Runge–Kutta stage
  int nst = m->opt.integrator == MBS_INT_EULER ? 1 : m->opt.integrator == MBS_INT_RK4 ? 4 : 7;
  MBS_CALL(mbs_stateSetStages(m, S->s, nst));
  if (S->serial) {
    if (rank == 0) {
      MBS_CALL(mbs_workCreate(m, &S->w));
      if (m->opt.solver == MBS_SOLVER_CRBA) MBS_CALL(mbs_workEnableCrba(m, S->w));
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

  // gather layout on rank 0
  double mine[6] = {S->q0, S->q1 - S->q0, S->v0, S->v1 - S->v0, S->l0, S->l1 - S->l0};
  double *all = NULL;
  if (rank == 0) MBS_ALLOC(all, 6 * (size_t)S->size);
  MBS_CALL(mbsp_gather(S->comm, mine, 6, rank == 0 ? all : mine));
  if (rank == 0) {
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
    free(all);
    MBS_CALL(mbs_stateCreate(m, &S->sout));
    MBS_CALL(mbs_workCreate(m, &S->wout));
  }
  // per-body outputs of the owned bodies; HDF5 rows also hold the joint wrenches
  int h5 = a->cfg->out_format == MBS_OUTFMT_HDF5;
  MBS_CALL(
      mbsp_bodyOutCreate(S->comm, m, S->eng, S->b0, S->b1, h5 && a->cfg->out_joint_wrench, &S->bo));
  if (rank == 0 && !h5) MBS_ALLOC(S->poses, (size_t)m->nbody * MBS_POSE_NCOMP);
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
    for (int k = 0; k < 7 && !e && !a->force && !a->restart; k++) {
      char p[4200];
      struct stat st;
      snprintf(p, sizeof p, "%s/%s", S->dir, names[k]);
      if (stat(p, &st) == 0)
        e = mbs_errSet(MBS_ERR_IO,
                       "%s exists; not overwriting an earlier run's output (use --force, another "
                       "--out, or --restart %s/checkpoint.bin)",
                       p, S->dir);
    }
  }
  return mbsp_agreeErr(S->comm, e);
}

static mbsErr mbsp_simOpenFiles(mbspSim *S, int append, double t_cut) {
  if (S->rank != 0) return MBS_OK;
  int csv = S->a->cfg->out_format != MBS_OUTFMT_HDF5;
  char pt[4200], pe[4200];
  snprintf(pt, sizeof pt, "%s/trajectory.csv", S->dir);
  snprintf(pe, sizeof pe, "%s/energy.csv", S->dir);
  if (append) {
    if (csv) MBS_CALL(mbsp_truncateCsv(pt, 0, t_cut));
    MBS_CALL(mbsp_truncateCsv(pe, 1, t_cut));
  }
  struct stat st;
  int fresh = !append || (csv && stat(pt, &st) != 0) || stat(pe, &st) != 0;
  S->ftraj = csv ? fopen(pt, fresh ? "w" : "a") : NULL;
  S->fenergy = fopen(pe, fresh ? "w" : "a");
  MBS_CHECK((S->ftraj || !csv) && S->fenergy, MBS_ERR_IO, "%s: cannot open output files: %s",
            S->dir, strerror(errno));
  if (fresh) mbsp_csvHeader(S);
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
  // the CSV column names, q then qd (a name that cannot be allocated stays empty)
  for (int b = 0, i = 0, j = m->nq; nm && b < m->nbody; b++) {
    size_t len = strlen(m->body_name[b]) + 16;
    for (int k = 0; k < m->body_qnum[b]; k++, i++)
      if ((nm[i] = malloc(len))) mbs_coordName(m, "q", b, k, 0, nm[i], len);
    for (int k = 0; k < m->body_dofnum[b]; k++, j++)
      if ((nm[j] = malloc(len))) mbs_coordName(m, "qd", b, k, 1, nm[j], len);
  }
  const char *const *cn = (const char *const *)nm;
  int nqo = S->q1 - S->q0, nvo = S->v1 - S->v0;
  mbsErr e =
      append ? mbsp_h5Resume(S->comm, path, m->nq, m->nv, S->q0, nqo, S->v0, nvo, cn, t_cut, &S->h5)
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
  S->serial = m->opt.solver == MBS_SOLVER_ABA || m->opt.solver == MBS_SOLVER_CRBA;
  if (!(m->opt.t_end > 0)) // the config allows 0 (other verbs do not integrate)
    return mbs_configBlame(
        a->cfg, "integrator.t_end",
        mbs_errSet(MBS_ERR_INPUT, "integrator.t_end must be > 0 for run (got %g)", m->opt.t_end));
  // a directory (say the --out of the run) is not a checkpoint: say so before anything is
  // created, and name the file that is meant
  mbsErr e = MBS_OK;
  struct stat st;
  if (a->restart && S->rank == 0 && stat(a->restart, &st) == 0 && S_ISDIR(st.st_mode))
    e = mbs_errSet(MBS_ERR_USAGE,
                   "mbspar: --restart %s: is a directory, not a checkpoint file (a run writes "
                   "its checkpoint to DIR/checkpoint.bin)",
                   a->restart);
  MBS_CALL(mbsp_agreeErr(a->comm, e));
  if (!S->serial) e = mbsp_engineCreate(a->comm, m, MBSP_HALO_P2P, &S->eng);
  if (e == MBS_ERR_INPUT) e = mbs_configBlame(a->cfg, "model", e);
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
    e = mbsp_agreeErr(a->comm, mbsp_simOpenFiles(S, a->restart != NULL, t));
    if (!e && a->cfg->out_format == MBS_OUTFMT_HDF5) e = mbsp_simOpenH5(S, a->restart != NULL, t);
  }
  const char *stop = "t_end";
  char ckpath[4200] = "";
  if (!e) {
    S->t_start = t;
    S->step_start = step;
    S->live = -1;
    S->wall0 = S->last_progress = mbsp_wtime();
    S->pprev = mbsp_power(S, S->y + (S->q1 - S->q0));
    if (!a->restart) e = mbsp_simOutput(S, t, step, &ke, &pe, &wk);
  }
  mbsp_simInstallSignals();

  // the time loop
  // a step that ends within roundoff of t_end is the last one
  double tstop = m->opt.t_end - 1e-9 * m->opt.dt;
  while (!e && t < tstop) {
    MBS_TIC(S->tim, MBS_TIMER_STEP);
    double told = t;
    S->stage_count = 0;
    e = mbsp_tsStep(S->ts, m->opt.t_end);
    if (!e) e = mbsp_tsGetSolution(S->ts, S->y);
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
    if (e) break;
    mbsp_tsGetState(S->ts, &t, &step, &dt);
    // power of the nonconservative joint forces, trapezoid rule over the step
    double p = mbsp_power(S, S->y + (S->q1 - S->q0));
    S->work += 0.5 * (S->pprev + p) * (t - told);
    S->pprev = p;
    MBS_TOC(S->tim, MBS_TIMER_STEP);
    int last = !(t < tstop);
    int outstep = last || (a->cfg->out_every > 0 && step % a->cfg->out_every == 0);
    if (outstep) e = mbsp_simOutput(S, t, step, &ke, &pe, &wk);
    if (!e && a->cfg->out_checkpoint_every > 0 && step % a->cfg->out_checkpoint_every == 0)
      e = mbsp_simCheckpoint(S, ckpath, sizeof ckpath);
    // every rank finishes the step, then all agree on a pending signal
    double sig = mbsp_sim_signal;
    if (!e) e = mbsp_allreduceMax(a->comm, &sig, 1);
    if (!e && sig > 0 && !last) {
      e = mbsp_simCheckpoint(S, ckpath, sizeof ckpath);
      if (!e && !outstep) e = mbsp_simOutput(S, t, step, &ke, &pe, &wk);
      stop = sig == SIGUSR1 ? "SIGUSR1" : "SIGTERM";
      break;
    }
    mbsp_progress(S, t, step, 0);
  }
  if (!e) mbsp_progress(S, t, step, 1);
  // the rows written are complete: close (rename into place) also after an error (collective)
  mbsErr eh5 = mbsp_h5Close(&S->h5);
  if (!e) e = eh5;
  if (S->xmf) { // rank 0: the final row count in every grid
    mbsErr ex = mbsp_xdmfClose(&S->xmf);
    if (!e) e = ex;
  }

  // final report
  mbspRankReport rr;
  memset(&rr, 0, sizeof rr);
  if (!e) e = mbsp_rankReportCollect(a->comm, S->eng, S->w, &rr);
  if (!e) e = mbsp_agreeErr(a->comm, mbsp_cliGatherRss(a->comm));
  if (!e && S->rank == 0) {
    mbspRunOut o = {S,
                    &rr,
                    t,
                    ke,
                    pe,
                    wk,
                    dt,
                    step,
                    mbsp_tsRejected(S->ts),
                    mbsp_tsTypeName(S->ts),
                    mbsp_tsMethodName(S->ts),
                    stop};
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
    if (S->ftraj) fflush(S->ftraj);
    if (S->fenergy) fflush(S->fenergy);
    e = a->emit(a->emit_ctx, mbsp_runJson, &o);
  }
  e = mbsp_agreeErr(a->comm, e);
  if (!e && strcmp(stop, "t_end") != 0)
    e = mbs_errSet(MBS_INTERRUPTED,
                   "mbspar: %s received: stopped at t = %.9g s (step %ld) after finishing the "
                   "step; checkpoint written to %s (continue with --restart %s)",
                   stop, t, step, ckpath, ckpath);

  mbsp_rankReportFree(&rr);
  if (S->ftraj) fclose(S->ftraj);
  if (S->fenergy) fclose(S->fenergy);
  mbsp_tsDestroy(&S->ts);
  if (S->serial) mbs_workDestroy(&S->w);
  mbsp_engineDestroy(&S->eng);
  mbs_stateDestroy(&S->s);
  mbs_stateDestroy(&S->sout);
  mbs_workDestroy(&S->wout);
  mbsp_bodyOutDestroy(&S->bo);
  free(S->poses);
  free(S->y), free(S->qcnt), free(S->qdsp), free(S->vcnt), free(S->vdsp), free(S->lcnt);
  free(S->ldsp);
  return e;
}
