/// \file verb_static.c
/// `mbspar static`: static equilibrium by kinetic-energy drainage (src/static.c, docs/static.md)
/// on rank 0 (aba, crba) or over the distributed engine (every other method). Collective.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "guard.h"
#include "mbspar/mbs_engine.h"
#include "mbspar/mbs_finite.h"
#include "mbspar/mbs_solvertype.h"
#include "mbspar/mbs_loops.h"
#include "mbspar/mbs_static.h"
#include "mbspar/mbspar.h"

/// Forward dynamics of the static solve on the distributed engine: every rank evaluates its own
/// bodies, then one allreduce of nv + 2 doubles (owned q̈ entries in place, zeros elsewhere, and
/// the partial kinetic and potential energies) gives every rank the same q̈ and energies, so all
/// ranks integrate the same replicated state and take the same stopping decisions.
typedef struct {
  mbspComm *comm;
  mbspEngine *eng;
  const mbsModel *m;
  mbsWork *w;         // serial workspace for the potential energy (world poses)
  int b0, b1, d0, d1; // owned bodies and dofs
  mbsReal *buf;       // (nv + 1)
  long evals;         // evaluations so far (messages)
  mbspGuardPair *gp;  // rank 0: the accuracy guard (first and last evaluation)
} mbsStaticEngine;

static const char *const mbs_static_enames[2] = {"kinetic energy", "potential energy"};

static mbsErr mbs_staticEngineForward(void *ctx, mbsState *s, int want_pe, mbsReal *qdd,
                                      mbsReal *energy) {
  mbsStaticEngine *c = ctx;
  const int nv = c->m->nv;
  // closed loops: project the replicated state back onto the loops, on every rank alike (the
  // same input, the same result), as the serial drainage does (docs/loops.md)
  if (c->m->nloop && c->m->opt.projection) {
    mbsLoopProj pj;
    MBS_CALL(mbsp_agreeErr(c->comm, mbs_loopProject(c->m, s, c->w, 10, &pj)));
  }
  mbsErr e = mbsp_engineForward(c->eng, s);
  const mbsWork *ew = mbsp_engineWork(c->eng);
  // no silent NaN: the owned q̈ and λ of every evaluation (issue 12.3)
  char phase[128];
  snprintf(phase, sizeof phase, "static: evaluation %ld (solver.method = %s)", ++c->evals,
           mbs_solverName(c->m->opt.solver));
  if (!e && c->b1 > c->b0)
    e = mbs_checkForward(c->m, ew, 0, c->d0, c->d1, c->m->body_lamadr[c->b0],
                         c->m->body_lamadr[c->b1 - 1] + c->m->body_lamnum[c->b1 - 1], phase);
  MBS_CALL(mbsp_agreeErr(c->comm, e));
  mbsReal pe_unused;
  memset(c->buf, 0, (size_t)(nv + 1) * sizeof *c->buf);
  memcpy(c->buf + c->d0, ew->qdd + c->d0, (size_t)(c->d1 - c->d0) * sizeof *c->buf);
  // kinetic energy from the owned body velocities (body coordinates: no world poses needed)
  mbs_staticEnergy(c->m, s, ew, c->b0, c->b1, c->buf + nv, &pe_unused);
  MBS_CALL(mbsp_allreduceSum(c->comm, c->buf, nv + 1));
  memcpy(qdd, c->buf, (size_t)nv * sizeof *qdd);
  energy[0] = c->buf[nv];
  // the accuracy guard (rank 0: the replicated state, the summed q̈, the replicated loop forces)
  mbsErr eg = MBS_OK;
  if (c->gp) {
    mbsp_guardPairKeep(c->gp, s, qdd, ew->lam + c->m->nlam, ew->stat.reason);
    if (c->evals == 1) eg = mbsp_guardPairCheck(c->gp, 0, "static");
  }
  MBS_CALL(mbsp_agreeErr(c->comm, eg));
  // potential energy (history samples only): world poses of the replicated state, serially on
  // every rank (the engine forms only parent-relative transforms of its own bodies)
  if (want_pe) {
    mbsReal ke_unused;
    mbs_fwdPosition(c->m, s, c->w);
    memset(c->w->cvel, 0, (size_t)c->m->nbody * 6 * sizeof *c->w->cvel);
    mbs_staticEnergy(c->m, s, c->w, 0, c->m->nbody, &ke_unused, energy + 1);
  }
  return mbsp_agreeErr(c->comm,
                       mbs_checkFiniteScalars(energy, mbs_static_enames, want_pe ? 2 : 1, phase));
}

// aba/crba on rank 0: the serial drainage step, then the same checks
typedef struct {
  mbsStaticSerial sc;
  long evals;
  mbspGuardPair *gp; // the accuracy guard (first and last evaluation)
} mbsStaticSerialChk;

static mbsErr mbs_staticForwardChecked(void *ctx, mbsState *s, int want_pe, mbsReal *qdd,
                                       mbsReal *energy) {
  mbsStaticSerialChk *c = ctx;
  MBS_CALL(mbs_staticForwardSerial(&c->sc, s, want_pe, qdd, energy));
  char phase[128];
  snprintf(phase, sizeof phase, "static: evaluation %ld (solver.method = %s)", ++c->evals,
           mbs_solverName(c->sc.m->opt.solver));
  MBS_CALL(mbs_checkForward(c->sc.m, c->sc.w, 1, 0, c->sc.m->nv, 0, 0, phase));
  mbsp_guardPairKeep(c->gp, s, qdd, c->sc.w->lam + c->sc.m->nlam, 1);
  if (c->evals == 1) MBS_CALL(mbsp_guardPairCheck(c->gp, 0, "static"));
  return mbs_checkFiniteScalars(energy, mbs_static_enames, 2, phase);
}

typedef struct {
  const mbsModel *m;
  const mbsStatic *st;
  const mbsState *s;
  const mbsSolveStat *stat; // forward-dynamics solver statistics (rank 0)
  const mbspGuardPair *gp;  // the accuracy guard
} mbsStaticOut;

static void mbs_staticJson(mbsJson *j, const void *ctx) {
  const mbsStaticOut *r = ctx;
  const mbsStatic *st = r->st;
  const mbsModel *m = r->m;
  mbs_jsonBeginObject(j, "solver");
  mbs_jsonString(j, "method", mbs_solverName(m->opt.solver));
  mbs_jsonInt(j, "evaluations", r->stat->evals);
  mbs_jsonInt(j, "total_iterations", r->stat->total_iterations);
  mbs_jsonInt(j, "nonconverged", r->stat->nonconverged);
  mbs_jsonInt(j, "restarts", r->stat->total_restarts); // jcg, chebyshev, petsc: from b - A x
  mbs_jsonNumber(j, "tol", m->opt.tol);
  mbs_jsonEndObject(j);
  mbsp_guardPairJson(j, r->gp); // accuracy (docs/formulation.md 4.9)
  mbs_jsonBeginObject(j, "results");
  mbs_jsonString(j, "drainage", mbs_staticMethodName(st->opt.method));
  mbs_jsonBool(j, "converged", st->reason == MBS_STATIC_CONVERGED);
  mbs_jsonString(j, "reason", st->reason == MBS_STATIC_CONVERGED ? "converged" : "max_iter");
  mbs_jsonInt(j, "iterations", st->iterations);
  mbs_jsonInt(j, "velocity_resets", st->resets);
  mbs_jsonNumber(j, "potential_energy", st->pe);
  mbs_jsonNumber(j, "potential_energy_initial", st->pe0);
  mbs_jsonNumber(j, "kinetic_energy", st->ke);
  mbs_jsonNumber(j, "kinetic_energy_max", st->ke_max);
  mbs_jsonNumber(j, "dq_max", st->dq_max);
  mbs_jsonNumber(j, "qdd_residual", st->qdd_res);
  mbs_jsonNumber(j, "pseudo_time", st->iterations * st->opt.dt);
  mbs_jsonNumber(j, "time_s", st->wall);
  mbs_jsonNumberArray(j, "q", r->s->q, m->nq);
  mbs_jsonBeginObject(j, "history");
  mbs_jsonInt(j, "stride", st->hist_stride);
  mbs_jsonIntArray(j, "iteration", st->hist_iter, st->nhist);
  mbs_jsonNumberArray(j, "kinetic_energy", st->hist_ke, st->nhist);
  mbs_jsonNumberArray(j, "potential_energy", st->hist_pe, st->nhist);
  mbs_jsonEndObject(j);
  mbs_jsonEndObject(j);
}

// DIR/static_ke.csv: the decimated energy history (written through a temporary)
static mbsErr mbs_staticCsv(const char *path, const mbsStatic *st, int exclusive, mbspOutSet *set) {
  char tmp[4200];
  FILE *f;
  MBS_CALL(mbsp_tmpOpen(path, tmp, sizeof tmp, &f));
  fprintf(f, "iteration,pseudo_time,kinetic_energy,potential_energy\n");
  for (int k = 0; k < st->nhist; k++)
    fprintf(f, "%d,%.17g,%.17g,%.17g\n", st->hist_iter[k], st->hist_iter[k] * st->opt.dt,
            st->hist_ke[k], st->hist_pe[k]);
  MBS_CALL(mbsp_tmpClose(f, tmp, path));
  return mbsp_outStage(set, tmp, path, exclusive);
}

/// `mbspar static`: energy drainage from the initial state to the equilibrium (src/static.c).
/// aba/crba run the loop on rank 0 while the other ranks wait at the agreement; every other
/// method runs it on all ranks over the distributed engine. Collective.
mbsErr mbsp_verbStatic(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, const mbsModel *m) {
  int rank = mbsp_rank(comm), size = mbsp_size(comm);
  int serial = mbs_solverIsBaseline(m->opt.solver);
  mbsState *s = NULL;
  mbsWork *w = NULL;
  mbsStatic *st = NULL;
  mbspEngine *eng = NULL;
  mbsStaticEngine ec = {comm, NULL, m, NULL, 0, 0, 0, 0, NULL, 0, NULL};
  mbspGuardPair gp;
  memset(&gp, 0, sizeof gp);
  mbsSolveStat stat;
  memset(&stat, 0, sizeof stat);
  static const char *const files[] = {"static.json", "static_ke.csv"};
  mbsErr e = rank == 0 ? mbsp_outPrepare(cli, files, 2) : MBS_OK;
  if (!e) e = mbs_stateCreate(m, &s);
  if (!e) e = mbs_staticCreate(m, &cfg->statics, &st);
  if (!e && (rank == 0 || !serial)) e = mbs_workCreate(m, &w);
  if (!e && rank == 0) e = mbsp_guardPairCreate(m, &gp);
  if (rank == 0) ec.gp = &gp;
  e = mbsp_agreeErr(comm, e);
  if (e == MBS_ERR_INPUT) e = mbs_configBlame(cfg, "model", e);
  if (!e && !serial) {
    e = mbsp_engineCreate(comm, m, MBSP_HALO_P2P, &eng);
    if (e == MBS_ERR_INPUT) e = mbs_configBlame(cfg, "model", e);
    // the solver now, not at the first evaluation: its failures are agreed before any solve
    if (!e) e = mbsp_agreeErr(comm, mbs_cfsBindSolver(m, mbsp_engineCfs(eng)));
  }
  if (!e && !serial) {
    mbspDecompInfo di;
    mbsp_engineDecomp(eng, &di);
    ec.eng = eng;
    ec.w = w;
    ec.b0 = di.b0, ec.b1 = di.b1;
    ec.d0 = m->body_dofadr[di.b0];
    ec.d1 = m->body_dofadr[di.b1 - 1] + m->body_dofnum[di.b1 - 1];
    ec.buf = malloc((size_t)(m->nv + 1) * sizeof *ec.buf);
    if (!ec.buf) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  }
  e = mbsp_agreeErr(comm, e);

  // progress lines on rank 0 (every 10 s or --progress SEC; not with --quiet)
  mbspStaticProgress prog = {.o = st ? &st->opt : NULL};
  mbsp_tickerStart(&prog.tick, cli);
  if (!e && rank == 0 && !cli->quiet) st->progress = mbsp_staticProgress, st->progress_ctx = &prog;

  // the drainage loop: rank 0 alone (serial methods) or every rank (engine)
  if (!e && serial && rank == 0) {
    mbsStaticSerialChk sc = {{m, w}, 0, &gp};
    e = mbs_staticSolve(st, s, mbs_staticForwardChecked, &sc);
    stat = w->stat;
    if (!e && sc.evals > 0) e = mbsp_guardPairCheck(&gp, 1, "static"); // the last evaluation
  } else if (!e && !serial) {
    e = mbs_staticSolve(st, s, mbs_staticEngineForward, &ec);
    stat = mbsp_engineWork(eng)->stat;
    if (!e && rank == 0 && ec.evals > 0) e = mbsp_guardPairCheck(&gp, 1, "static"); // the last
  }
  e = mbsp_agreeErr(comm, e);
  if (!e) e = mbsp_agreeErr(comm, mbsp_cliGatherRss(comm));

  if (!e && rank == 0) {
    mbsStaticOut r = {m, st, s, &stat, &gp};
    int conv = st->reason == MBS_STATIC_CONVERGED;
    if (mbsp_cliTable(cli)) {
      const mbsStaticOpt *o = &st->opt;
      printf("mbspar static %s: %d bodies, %d dofs, %d rank(s)\n", cfg->filename, m->nbody, m->nv,
             size);
      printf("  %-22s %s, dt %g s, ke_tol %g J, dq_tol %g", "drainage",
             mbs_staticMethodName(o->method), o->dt, o->ke_tol, o->dq_tol);
      if (o->method == MBS_STATIC_DRAIN) printf(", omega_d %g rad/s", o->omega_d);
      printf("\n  %-22s %s\n", "forward dynamics", mbs_solverName(m->opt.solver));
      printf("  %-22s %s after %d evaluations (%d velocity resets), %.3f s\n", "result",
             conv ? "converged" : "NOT converged", st->iterations, st->resets, st->wall);
      printf("  %-22s %.10g J (initial %.10g J)\n", "potential energy", st->pe, st->pe0);
      printf("  %-22s %.3e J (max %.6g J)\n", "kinetic energy", st->ke, st->ke_max);
      printf("  %-22s %.3e\n", "max |q_i - q_{i-1}|", st->dq_max);
      printf("  %-22s %.3e\n", "max |qdd| at rest", st->qdd_res);
      int show = m->nq < 8 ? m->nq : 8;
      printf("  %-22s", "q");
      for (int k = 0; k < show; k++) printf(" %.8g", s->q[k]);
      printf("%s\n", show < m->nq ? " ..." : "");
    }
    if (!conv)
      fprintf(stderr,
              "mbspar: warning: static did not converge in static.max_iter = %d evaluations "
              "(kinetic energy %.3e J, step change %.3e)%s\n",
              st->opt.max_iter, st->ke, st->dq_max,
              st->resets > st->iterations / 20
                  ? "; velocity resets on more than 5% of the steps: static.dt is probably above "
                    "the stability limit of the fastest mode, try a smaller one"
                  : "");
    // static_ke.csv and static.json (and --json PATH) are put in place together or not at all
    mbspOutSet set;
    mbsp_outInit(&set);
    if (cli->out) {
      char p[4096];
      e = mbsp_outPath(cli, "static_ke.csv", p, sizeof p);
      if (!e) e = mbs_staticCsv(p, st, !cli->force, &set);
    }
    if (!e) e = mbsp_emitStaged(cli, comm, cfg, m, mbs_staticJson, &r, &set);
    if (!e) e = mbsp_outCommit(&set);
    mbsp_outDiscard(&set);
  }
  e = mbsp_agreeErr(comm, e);
  mbsp_engineDestroy(&eng);
  free(ec.buf);
  mbs_staticDestroy(&st);
  mbsp_guardPairDestroy(&gp);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  return e;
}
