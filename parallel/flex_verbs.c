/// \file flex_verbs.c
/// Flexible models over the ranks (issue 34 items 3, 4; docs/flexible.md 7, 8, 13.5): which
/// verb, method and rank count run them and where (mbsp_flexRanks, mbsp_flexRoute), `static`
/// (mbsp_flexStatic), and the column split of a dense tangent (mbsp_colSplitInit, for `modes`
/// and the static's Newton polish).
///
/// Communication: the column split is one agreement (allreduce MAX of the error codes) and one
/// broadcast per rank of its rows (its columns of K or M, contiguous: the core stores column j in
/// row j), so every rank holds the whole n x n matrix: P broadcasts of n^2/P doubles, n^2 in all
/// per rank, against 2n/P oracle evaluations of the columns. The drainage of `static` is
/// replicated (every rank the same serial steps on the same bits, no messages; the rigid-style
/// distributed drainage would need the oracle's f and M from the distributed elimination, which
/// forms accelerations only); rank 0's result is broadcast at the end so the ranks cannot part.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "flex_run.h"
#include "mbspar/mbs_colsplit.h"
#include "mbspar/mbs_flex.h"
#include "mbspar/mbs_flexmodes.h"
#include "mbspar/mbs_solvertype.h"

// ---------------------------------------------------------------- the column split

static mbsErr mbsp_csAgree(void *ctx, mbsErr e) {
  return mbsp_agreeErr(ctx, e);
}

static mbsErr mbsp_csGather(void *ctx, mbsErr e, mbsReal *rows, int n, int len) {
  mbspComm *comm = ctx;
  mbsColSplit cs = {mbsp_size(comm), 0, NULL, NULL, NULL};
  MBS_CALL(mbsp_agreeErr(comm, e));
  for (cs.part = 0; cs.part < cs.parts; cs.part++) { // rank r's rows from rank r
    int j0, j1;
    mbs_colRange(&cs, n, &j0, &j1);
    if (j1 > j0)
      MBS_CALL(mbsp_agreeErr(
          comm, mbsp_bcastBytes(comm, rows + (size_t)j0 * (size_t)len,
                                sizeof(mbsReal) * (size_t)(j1 - j0) * (size_t)len, cs.part)));
  }
  return MBS_OK;
}

void mbsp_colSplitInit(mbsColSplit *cs, mbspComm *comm) {
  cs->parts = mbsp_size(comm), cs->part = mbsp_rank(comm);
  cs->gather = mbsp_csGather, cs->agree = mbsp_csAgree, cs->ctx = comm;
}

// ---------------------------------------------------------------- where they run

void mbsp_flexRanks(const mbsCli *cli, mbspComm *comm, mbsConfig *cfg, const mbsModel *m) {
  if (!m || !m->nflex_g || mbsp_size(comm) == 1 || !cli->verb->forward) return;
  if (cli->verb->run == mbsp_verbStatic) {
    // static: every rank (the drainage replicated, the Newton polish's columns split), also
    // when auto chose the serial oracles
    cfg->sauto.idle = 0;
    return;
  }
  // an explicit serial method (aba, crba) at several ranks: rank 0 runs it alone as auto's
  // serial choice does (docs/flexible.md 6)
  if (!cfg->sauto.on && mbs_solverIsBaseline(m->opt.solver) &&
      !mbs_solverCaps(m->opt.solver)->natural)
    cfg->sauto.idle = 1;
}

// ---------------------------------------------------------------- static

typedef struct {
  mbspFlexRun *R;
  const double *x;
  const mbsFlexStatic *st;
  const mbsStaticOpt *opt;
  int ranks; // the ranks that ran it (the Newton columns' split)
} mbspFlexStaticOut;

static void mbsp_flexStaticJson(mbsJson *j, const void *ctx) {
  const mbspFlexStaticOut *r = ctx;
  const mbsFlexStatic *st = r->st;
  mbspFlexRun *R = r->R;
  mbs_jsonBeginObject(j, "solver");
  mbs_jsonString(j, "method", "flex_oracle");
  mbsp_flexAutoJson(j, R);
  mbs_jsonInt(j, "evaluations", st->iterations);
  // where it ran: the drainage on every rank (replicated), the Newton columns split over them
  mbs_jsonInt(j, "ranks_used", r->ranks);
  mbs_jsonString(j, "drainage_ranks", r->ranks > 1 ? "every rank, replicated" : "one");
  mbs_jsonInt(j, "newton_column_parts", r->ranks);
  mbs_jsonEndObject(j);
  mbs_jsonBeginObject(j, "results");
  mbs_jsonString(j, "drainage", mbs_staticMethodName(r->opt->method));
  mbs_jsonBool(j, "converged", st->reason == MBS_STATIC_CONVERGED);
  mbs_jsonString(j, "reason", st->reason == MBS_STATIC_CONVERGED ? "converged" : "max_iter");
  mbs_jsonInt(j, "iterations", st->iterations);
  mbs_jsonInt(j, "velocity_resets", st->resets);
  mbs_jsonInt(j, "newton_steps", st->newton);
  mbs_jsonInt(j, "drainage_steps", st->steps);
  mbs_jsonString(j, "elastic_coordinates", st->quasi ? "quasi_static" : "drained");
  mbs_jsonNumber(j, "potential_energy", st->pe);
  mbs_jsonNumber(j, "potential_energy_initial", st->pe0);
  mbs_jsonNumber(j, "kinetic_energy", st->ke);
  mbs_jsonNumber(j, "dq_max", st->dq_max);
  mbs_jsonNumber(j, "qdd_residual", st->qdd_res);
  mbs_jsonNumber(j, "pseudo_time_step", st->h);
  mbs_jsonNumber(j, "pseudo_time", st->iterations * st->h);
  mbs_jsonNumber(j, "time_s", st->wall);
  mbs_jsonNumberArray(j, "q", r->x, R->nq);
  mbs_jsonNumberArray(j, "eta", r->x + R->nq, R->ne);
  mbsp_flexNodesJson(j, R, r->x);
  mbs_jsonEndObject(j);
}

mbsErr mbsp_flexStatic(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, mbspFlexRun *R,
                       double *x) {
  const int rank = mbsp_rank(comm), size = mbsp_size(comm);
  mbsFlexStatic st = {0};
  mbsColSplit cs;
  mbsp_colSplitInit(&cs, comm);
  if (size > 1) st.split = &cs; // the Newton polish's columns over the ranks
  mbspStaticProgress prog = {.o = &cfg->statics};
  mbsp_tickerStart(&prog.tick, cli);
  if (!cli->quiet && rank == 0) st.progress = mbsp_staticProgress, st.progress_ctx = &prog;
  mbsp_flexInitial(R, x);
  mbsErr e = mbsp_agreeErr(comm, mbs_flexStaticSolve(R->m, R->o, &cfg->statics, x, &st));
  // every rank computed the same bits; rank 0's broadcast makes sure they cannot part
  if (!e && size > 1)
    e = mbsp_agreeErr(comm, mbsp_bcastBytes(comm, x, sizeof(double) * (size_t)(R->nq + R->ne), 0));
  if (e || rank != 0) return mbsp_agreeErr(comm, e);
  if (st.reason != MBS_STATIC_CONVERGED)
    fprintf(stderr,
            "mbspar: warning: static: not converged in static.max_iter = %d evaluations "
            "(kinetic energy %.3e J, pseudo-time step %g s)\n",
            cfg->statics.max_iter, st.ke, st.h);
  if (mbsp_cliTable(cli)) {
    printf("flexible static (serial oracle, %s drainage, %d rank%s%s): %s after %d evaluations "
           "(%d resets, step %g s, %d Newton steps, elastic coordinates %s); potential energy "
           "%.12g -> %.12g J, max |acceleration| at rest %.3e\n",
           mbs_staticMethodName(cfg->statics.method), size, size == 1 ? "" : "s",
           size == 1 ? "" : ": the drainage on every rank, the Newton columns split",
           st.reason == MBS_STATIC_CONVERGED ? "converged" : "NOT converged", st.iterations,
           st.resets, st.h, st.newton, st.quasi ? "quasi-static" : "drained", st.pe0, st.pe,
           st.qdd_res);
    for (int k = 0; k < R->m->flex->n; k++)
      for (int n = 0; n < R->m->flex->b[k].nnodes; n++) {
        double p[3], Rn[9];
        if (!mbsp_flexNodePose(R, x, k, n, p, Rn))
          printf("  node %s.%s at [%.10g, %.10g, %.10g]\n", R->m->flex->b[k].name,
                 R->m->flex->b[k].node_name[n], p[0], p[1], p[2]);
      }
  }
  mbspFlexStaticOut so = {R, x, &st, &cfg->statics, size};
  return mbsp_agreeErr(comm, mbsp_emit(cli, comm, cfg, R->m, mbsp_flexStaticJson, &so));
}

mbsErr mbsp_flexRoute(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, const mbsModel *m) {
  const mbsFlexBody *fb = m->flex && m->flex->n ? m->flex->b : NULL;
  const char *f = cfg->filename, *name = fb ? fb->name : "?";
  int line = fb ? fb->line : 1;
  if (cli->verb->run == mbsp_verbModes) return MBS_OK; // rank 0 at any rank count, as rigid
  if (cli->verb->run != mbsp_verbAccel && cli->verb->run != mbsp_verbRun &&
      cli->verb->run != mbsp_verbStatic && cli->verb->run != mbsp_verbInverse &&
      cli->verb->run != mbsp_verbCpa)
    return mbs_errSet(MBS_ERR_UNSUPPORTED,
                      "%s:%d: body \"%s\" is flexible: the %s verb cannot run flexible bodies yet "
                      "(check, accel, run, static, modes, inverse and cpa do; docs/flexible.md)",
                      f, line, name, cli->verb->name);
  int part = mbsp_flexPart(cfg, m), cfsm = mbsp_flexCfsMethod(cfg, m);
  if (cfsm >= 0 &&
      (cli->verb->run == mbsp_verbStatic || cli->verb->run == mbsp_verbInverse || cfg->ndrive))
    return mbs_errSet(MBS_ERR_UNSUPPORTED,
                      "%s:%d: body \"%s\" is flexible: solver.method = %s runs flexible bodies in "
                      "accel and undriven run only yet (docs/flexible.md 13)",
                      f, line, name, mbs_flexCfsName(cfsm));
  if (part && cli->verb->run == mbsp_verbStatic)
    return mbs_errSet(MBS_ERR_UNSUPPORTED,
                      "%s:%d: body \"%s\" is flexible: solver.method = schur runs flexible bodies "
                      "in accel, run and inverse only yet (static: solver.method = aba or auto, "
                      "the serial oracle on every rank, its Newton columns split; "
                      "docs/flexible.md 8, 11)",
                      f, line, name);
  if (!part && cfsm < 0 && mbsp_size(comm) != 1 && !cfg->sauto.idle &&
      cli->verb->run != mbsp_verbStatic) // auto: rank 0 alone; static: every rank
    return mbs_errSet(
        MBS_ERR_UNSUPPORTED,
        "%s:%d: body \"%s\" is flexible: %s runs flexible bodies at several ranks "
        "with solver.method = aba, crba, schur, direct, jcg, gs, sor, jacobi, chebyshev, petsc "
        "or auto only (got %s at %d ranks; docs/flexible.md 6, 11, 13)",
        f, line, name, cli->verb->name, cfg->sauto.on ? "auto" : mbs_solverName(m->opt.solver),
        mbsp_size(comm));
  if (!part && cfsm < 0 && !cfg->sauto.on && strcmp(mbs_solverName(m->opt.solver), "aba") &&
      strcmp(mbs_solverName(m->opt.solver), "crba"))
    return mbs_errSet(MBS_ERR_UNSUPPORTED,
                      "%s:%d: body \"%s\" is flexible: solver.method = %s cannot run flexible "
                      "bodies yet (aba, crba or auto: the serial oracles; schur: the distributed "
                      "elimination; direct, jcg, gs, sor, jacobi, chebyshev, petsc: the "
                      "constraint-force system; "
                      "docs/flexible.md 6, 11, 13)",
                      f, line, name, mbs_solverName(m->opt.solver));
  int fwd = cli->verb->run == mbsp_verbAccel || cli->verb->run == mbsp_verbRun;
  if (m->nloop && (!fwd || cfg->ndrive)) // (every constraint-force method takes the loop rows)
    return mbs_errSet(MBS_ERR_UNSUPPORTED,
                      "%s:%d: body \"%s\" is flexible: closed loops with flexible bodies run in "
                      "accel and undriven run only yet (%s; docs/flexible.md 15)",
                      f, line, name, cfg->ndrive ? "driven joints" : cli->verb->name);
  if (m->nloop && (cfsm == MBS_FCFS_JACOBI || cfsm == MBS_FCFS_CHEB)) {
    // the stationary/polynomial methods need independent closure rows: on redundant ones jacobi
    // does not converge and chebyshev stops at a wrong result (docs/flexible.md 15.2)
    int rank, neq;
    mbsReal piv;
    MBS_CALL(mbs_flexLoopRankQ0(m, &rank, &neq, &piv));
    if (rank < neq)
      return mbs_errSet(MBS_ERR_UNSUPPORTED,
                        "%s:%d: body \"%s\" is flexible: solver.method = %s needs independent "
                        "closure equations, and this model's %d have rank %d at q0 "
                        "(direct, jcg, gs, sor, petsc or schur solve them; docs/flexible.md 15)",
                        f, line, name, mbs_flexCfsName(cfsm), neq, rank);
  }
  if (m->nforce || cfg->torques || !fb || m->local)
    return mbs_errSet(
        MBS_ERR_UNSUPPORTED,
        "%s:%d: body \"%s\" is flexible: spring-dampers and joint torque tables cannot run with "
        "flexible bodies yet (docs/flexible.md 6)",
        f, line, name);
  return MBS_OK;
}
