/// \file sim_natural.c
/// `mbspar run` under model.formulation = "natural" (docs/natural.md 12): the steps integrate the
/// natural coordinates (p, ṗ) of seed 004 (src/natural_run.c) instead of the joint state, with
/// the projection onto the rigid-body, joint and closure constraints after each step; the rest of
/// the run (outputs in joint coordinates, energies, checkpoints, restarts) is sim.c's, on the
/// joint state recovered from (p, ṗ) after each step. Each step starts from p, ṗ of the joint
/// state by the forward kinematics, so (q, q̇) and the step size are the complete state of the run
/// between steps: the checkpoint holds them and a restart continues bitwise. The evaluations and
/// the projection are the O(n) block elimination (no limit on the model's size since 2026-11-29;
/// the dense system was O(n³) and refused more than 128 bodies). At 2+ ranks every rank runs a
/// replica of the (p, ṗ) integration from rank 0's joint state (broadcast at each step) and the
/// evaluations' solve is distributed (parallel/natural_par.c, docs/natural.md 13); the projection
/// is replicated. Rank 0 writes.
#include <math.h>
#include <string.h>
#include "mbspar/mbs_natural.h"
#include <stdlib.h>
#include "natural_par.h"
#include "sim_impl.h"

int mbsp_simNatural(const mbspSimArgs *a) {
  // joint inputs over time (torque tables, drives) are not mapped onto (p, ṗ) yet: such runs
  // integrate the joint coordinates with the natural formulation's evaluation, as before the
  // (p, ṗ) integration existed (docs/natural.md 12)
  return mbs_solverCaps(a->m->opt.solver)->natural &&
         !(a->cfg && (a->cfg->torques || a->cfg->ndrive));
}

mbsErr mbsp_simNatCheck(const mbspSimArgs *a) {
  const mbsModel *m = a->m;
  if (!mbsp_simNatural(a)) return MBS_OK;
  mbsErr e = MBS_OK;
  if (m->opt.integrator != MBS_INT_RK4 && m->opt.integrator != MBS_INT_DP5)
    e = mbs_configBlame(
        a->cfg, "integrator.method",
        mbs_errSet(MBS_ERR_INPUT,
                   "integrator.method = %s: model.formulation = natural runs rk4 or dp5 only",
                   mbs_integratorType(m->opt.integrator)->name));
  else if (mbsp_cliTsOption(a->argc, a->argv)) // its own steppers: PETSc TS would not see them
    e = mbs_errSet(MBS_ERR_USAGE,
                   "mbspar run: %s: model.formulation = natural steps (p, pd) with mbspar's own %s "
                   "(integrator.method), not PETSc TS: of the -ts_* options only -ts_dt and "
                   "-ts_max_time apply (docs/natural.md 12)",
                   mbsp_cliTsOption(a->argc, a->argv), mbs_integratorType(m->opt.integrator)->name);
  return e;
}

mbsErr mbsp_simNatCreate(mbspSim *S) {
  const mbsModel *m = S->m;
  mbsState *s0 = NULL; // the model's assembled initial state: the rows are recorded there, also
  mbsWork *w0 = NULL;  // on a restart (the same rows, bit for bit); a replica on every rank
  mbsErr e = mbs_stateCreate(m, &s0);
  if (!e) e = mbs_workCreate(m, &w0);
  if (!e) e = mbs_naturalSimCreate(m, s0, w0, &S->nat);
  mbs_workDestroy(&w0);
  mbs_stateDestroy(&s0);
  if (!e && mbsp_size(S->comm) > 1) { // the evaluations' solve over the ranks
    e = mbsp_naturalRunCreate(S->comm, m, &S->nat_run);
    if (!e) e = mbs_naturalSimSetParts(S->nat, mbsp_size(S->comm), S->rank);
    if (!e)
      mbs_naturalSimSetSolve(S->nat, mbsp_naturalRunSolve, mbsp_naturalRunCorrect, S->nat_run);
    if (!e && !(S->nat_y = calloc((size_t)(m->nq + m->nv + 3), sizeof(double))))
      e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  }
  return e;
}

void mbsp_simNatDestroy(mbspSim *S) {
  mbs_naturalSimDestroy(&S->nat);
  mbsp_naturalRunDestroy(&S->nat_run);
  free(S->nat_y);
  S->nat_y = NULL;
}

mbsErr mbsp_simNatStep(mbspSim *S) {
  const mbsModel *m = S->m;
  double t = 0, dt = 0, tn = 0, hn = 0;
  long step = 0;
  mbsp_tsGetState(S->ts, &t, &step, &dt);
  mbsErr e = MBS_OK;
  double *y = S->y;
  if (S->nat_y) { // 2+ ranks: rank 0's joint state, time and step to every replica
    int nqv = m->nq + m->nv;
    y = S->nat_y;
    if (S->rank == 0) {
      memcpy(y, S->y, sizeof(double) * (size_t)nqv);
      y[nqv] = t, y[nqv + 1] = dt, y[nqv + 2] = (double)step;
    }
    MBS_CALL(mbsp_bcastBytes(S->comm, y, sizeof(double) * (size_t)(nqv + 3), 0));
    t = y[nqv], dt = y[nqv + 1], step = (long)y[nqv + 2];
  }
  mbsNaturalSimStats st0, st1;
  mbs_naturalSimGetStats(S->nat, &st0);
  mbs_naturalSimSetJoint(S->nat, y, y + m->nq);
  double tend = m->opt.t_end;
  if (m->opt.integrator == MBS_INT_RK4) { // fixed steps k dt, the last one to t_end
    tn = (double)(step + 1) * m->opt.dt;
    if (tn > tend - 1e-9 * m->opt.dt) tn = tend;
    hn = m->opt.dt;
    e = mbs_naturalSimStep(S->nat, tn - t);
    if (!e) {
      mbs_naturalSimProject(S->nat, 1e-13, 8);
      S->nat_proj++;
    }
  } else { // dp5: the step size carried in the integrator's state (checkpoints keep it)
    double h = 0;
    mbs_naturalSimSetStep(S->nat, dt);
    e = mbs_naturalSimStepAdaptive(S->nat, tend - t, m->opt.int_tol, m->opt.proj_tol, &h);
    tn = h >= tend - t ? tend : t + h, hn = mbs_naturalSimGetStep(S->nat);
  }
  if (!e) {
    mbs_naturalSimJoint(S->nat, y, y + m->nq);
    if (y != S->y && S->rank == 0) memcpy(S->y, y, sizeof(double) * (size_t)(m->nq + m->nv));
    S->nat_viol = fmax(S->nat_viol, mbs_naturalSimViolation(S->nat));
    mbs_naturalSimGetStats(S->nat, &st1);
    if (S->rank == 0) {
      S->evals += st1.evals - st0.evals;
      S->nat_proj += st1.projections - st0.projections;
      S->nat_rejected += st1.rejected - st0.rejected;
    }
  }
  MBS_CALL(mbsp_agreeErr(S->comm, e));
  return mbsp_agreeErr(S->comm, mbsp_tsSetState(S->ts, tn, step + 1, hn, S->y));
}

void mbsp_simNatJson(const mbspSim *S, mbsJson *j) {
  mbs_jsonBeginObject(j, "natural");
  mbs_jsonInt(j, "coordinates", 12L * S->m->nbody);
  mbs_jsonInt(j, "solve_ranks", S->nat_run ? mbsp_size(S->comm) : 1); // (the evaluations' solve)
  if (S->nat_run) { // rank 0's share: the distributed solves, corrections and bodies it factored
    mbs_jsonInt(j, "parts_solves", S->nat_run->solves);
    mbs_jsonInt(j, "parts_corrections", S->nat_run->corrections);
    mbs_jsonInt(j, "parts_factored_rank0", S->nat_run->factored);
  }
  mbs_jsonInt(j, "projections", S->nat_proj);
  mbs_jsonInt(j, "rejected", S->nat_rejected);
  mbs_jsonNumber(j, "projection_tol", S->m->opt.proj_tol);
  mbs_jsonNumber(j, "violation_max", S->nat_viol);
  mbs_jsonEndObject(j);
}
