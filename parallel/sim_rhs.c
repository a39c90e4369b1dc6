/// \file sim_rhs.c
/// `mbspar run`: the right side of the integrator (the distributed engine or a serial baseline)
/// and the projection of closed loops after a step.
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
double mbsp_simPower(const mbspSim *S, const mbsReal *qd) {
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
mbsErr mbsp_simProject(mbspSim *S) {
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
mbsErr mbsp_simFull(mbspSim *S) {
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
mbsErr mbsp_simProjectFull(mbspSim *S) {
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

mbsErr mbsp_simRhs(void *ctx, double t, const double *y, double *f) {
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
    if (S->rank == 0) e = S->ndrv ? mbsp_simDriveForward(S, t) : mbs_forward(m, S->s, S->w);
    if (!e && S->ndrv) mbsp_simDriveKeep(S); // this evaluation's driving forces, for the guard
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
  mbsp_simGuardKeep(S); // the accuracy guard: the first evaluation now, the last at the end
  if (!S->gchecked) MBS_CALL(mbsp_simGuardCheck(S, 0));
  if (S->w && getenv("MBS_DEBUG_ITERS") && S->rank == 0)
    fprintf(stderr, "eval %ld t=%.17g stage %d nhist %d ws %d it=%d res %g\n", S->evals, t,
            S->s->stage, S->s->nhist[S->s->stage], m->opt.warm_start, S->w->stat.iterations,
            S->w->stat.residual);
  if (S->w) {
    S->iters += S->w->stat.iterations;
    if (S->w->stat.iface_rounds > S->irounds) S->irounds = S->w->stat.iface_rounds;
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
    if (mbs_jntHasQuat(t0)) { // scalar coordinates before the quaternion (free: x, y, z)
      int qq = mbs_jntQuatAdr(t0);
      for (int k = 0; k < qq; k++) f[qa + k] = qd[k];
      mbsp_quatDot(q + qq, qd + qq, f + qa + qq);
    } else {
      for (int k = 0; k < m->body_dofnum[b]; k++) f[qa + k] = qd[k];
    }
  }
  if (S->ndrv) mbsp_simDriveRates(S, f); // rank 0, the whole state: q' from the profiles
  if (nvo) memcpy(f + nqo, S->w->qdd + S->v0, (size_t)nvo * sizeof(double));
  return MBS_OK;
}

void mbsp_simPost(void *ctx, double *y) {
  mbspSim *S = ctx;
  const mbsModel *m = S->m;
  for (int b = S->b0; b < S->b1; b++) {
    int t0 = m->body_jnttype[b], qa = m->body_qadr[b] - S->q0;
    if (mbs_jntHasQuat(t0)) mbsp_quatNormalize(y + qa + mbs_jntQuatAdr(t0));
  }
}
