/// \file solver_auto.c
/// solver.method = "auto" (docs/model.md "Choosing the method"): before the model is built, the
/// job's ranks, threads and cores are agreed, rank 0 builds the whole model once and predicts
/// each candidate's seconds per evaluation with the critical-path analyser's cost model
/// (src/solver_auto.c), and broadcasts the choice, which replaces cfg->opt.solver on every rank.
/// Where ranks share cores, a distributed method is predicted (and then run, main.c) on one rank
/// per core of each node, the others waiting asleep. Communication: one allreduce of three
/// numbers, one broadcast of the choice, the agreements; sharing cores, a node split and one
/// allreduce more.
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "solver_auto.h"
#include <stdlib.h>
#include "mbspar/mbs_solverauto.h"
#include "mbspar/mbs_solvertype.h"
#include "mbspar/mbs_schur.h"

// above this many bodies the graphs are not built (building and scheduling them took ~1 s at
// 4096 bodies and ~5 s at 16384 on this loaded machine, 2026-11-28); the choice follows what
// the model says from about 1024 bodies up: schur when the job has processors of its own (more
// than one, not shared), else aba
#define MBSP_AUTO_MAXBODY 4096
// flexible models (docs/flexible.md 11): the distributed elimination (solver.method = schur)
// when every rank gets at least this many bodies, else the serial oracles on rank 0
#define MBSP_AUTO_FLEXMIN 64

// 1 if schur's partition on \p P ranks has a light joint at a boundary (no clean place: schur
// loses its accuracy there, docs/formulation.md 4.9; thread boundaries never cut one,
// mbs_schurRankCreate joins the segments instead) that it does not take exactly: the light leaves
// are exact with the merge interface and no loops, on full and distributed-memory models and at
// any number of threads per rank (parallel/schur_par_light.c); with MBSPAR_SCHUR_LIGHT=0, the
// J-CG interface or loops every light joint at a boundary counts
static mbsErr mbsp_autoLightCut(const mbsModel *m, int P, int *cut) {
  int *start = malloc(sizeof(int) * (size_t)(P + 1)), p;
  MBS_CHECK(start, MBS_ERR_NOMEM, "out of memory (auto)");
  const char *off = getenv("MBSPAR_SCHUR_LIGHT");
  int exact = m->opt.iface == 0 && m->nloop == 0 && !(off && strcmp(off, "0") == 0);
  mbsErr e = mbs_partitionModel(m, P, start);
  *cut = !e && mbs_schurLightCut(m, start, P, exact, &p) >= 0;
  free(start);
  return e;
}

mbsErr mbsp_solverAuto(mbspComm *comm, mbsConfig *cfg, const mbspThreadChoice *tc, int dyn) {
  mbsSolverAuto *a = &cfg->sauto;
  if (!a->on || a->decided) return MBS_OK;
  int rank = mbsp_rank(comm), size = mbsp_size(comm);
  // the job: threads per rank and the slowdown of the busiest rank (ranks x threads sharing its
  // cores, as the thread default counts them)
  int cores = tc && tc->cores > 0 ? tc->cores : 1;
  double v[3] = {tc ? tc->threads : 1, tc ? (double)tc->threads * tc->ranks_sharing / cores : 1,
                 -(double)cores};
  MBS_CALL(mbsp_agreeErr(comm, mbsp_allreduceMax(comm, v, 3)));
  mbsAutoJob j;
  mbs_autoDefaults(&j);
  j.ranks = size;
  j.threads = v[0] < 1 ? 1 : (int)v[0];
  j.slow = v[1] > 1 ? v[1] : 1;
  // ranks sharing cores: a distributed method would run on one rank per core of each node (the
  // node's first cores / threads ranks), unshared, while the others wait asleep (main.c)
  int mine = 1, nact = size;
  if (j.slow > 1 && size > 1) {
    int lr = 0, nl = 1, cap = (tc && tc->threads > 0 ? cores / tc->threads : cores);
    MBS_CALL(mbsp_agreeErr(comm, mbsp_localRank(comm, &lr, &nl)));
    mine = lr < (cap > 1 ? cap : 1);
    double act = mine;
    MBS_CALL(mbsp_agreeErr(comm, mbsp_allreduceSum(comm, &act, 1)));
    nact = (int)act;
    if (nact > 1 && nact < size) j.ranks = nact, j.slow = 1;
  }
  if (mbs_configIsSet(cfg, "cpa.flop_time")) j.flop_time = cfg->cpa.flop_time;
  if (mbs_configIsSet(cfg, "cpa.latency")) j.latency = cfg->cpa.latency;
  if (mbs_configIsSet(cfg, "cpa.bandwidth")) j.bandwidth = cfg->cpa.bandwidth;
  a->ranks = j.ranks, a->threads = j.threads, a->cores = (int)-v[2], a->slow = j.slow;
  a->job = size;

  // rank 0 predicts; the choice and the predictions reach every rank
  struct {
    int method, rule, ncand, cand[MBS_AUTO_MAXCAND];
    double pred[MBS_AUTO_MAXCAND];
  } c;
  memset(&c, 0, sizeof c);
  c.method = cfg->opt.solver;
  mbsErr e = MBS_OK;
  if (rank == 0) {
    long long n = 0;
    const void *largest = NULL;
    if (cfg->ndrive) {
      c.rule = 4; // driven joints: the serial methods take them (sim_drive.c)
      c.method = MBS_SOLVER_ABA;
    } else if (mbs_configHasFlexible(cfg)) {
      // flexible bodies: the distributed elimination (accel, undriven run) on unshared ranks
      // with enough bodies each, else the serial oracles (docs/flexible.md 11); closed loops
      // too (its loop layer, docs/flexible.md 15.4)
      int sch = mbs_solverFromName("schur");
      c.rule = 5;
      c.method = MBS_SOLVER_ABA;
      if (!(e = mbs_configCountBodies(cfg, &n, &largest)) && dyn && sch >= 0 && j.ranks == size &&
          size > 1 && j.slow <= 1 && n >= (long long)MBSP_AUTO_FLEXMIN * size)
        c.method = sch;
    } else if (cfg->nloops || cfg->nforces) {
      c.rule = 1; // closed loops, spring-dampers: aba (mbs_cfgLoopMethod set it)
    } else if (!(e = mbs_configCountBodies(cfg, &n, &largest)) && n > MBSP_AUTO_MAXBODY) {
      c.rule = 2;
      int sch = mbs_solverFromName("schur");
      c.method = (j.ranks * j.threads > 1 && j.slow <= 1 && sch >= 0) ? sch : MBS_SOLVER_ABA;
    } else if (!e) {
      mbsModel *m = NULL;
      mbsSolverAuto out;
      memset(&out, 0, sizeof out);
      e = mbs_configBuildModel(cfg, &m);
      if (!e) e = mbs_autoPredict(m, &j, &out, &c.method);
      int sch = mbs_solverFromName("schur"), cut = 0;
      if (!e && c.method == sch && sch >= 0) e = mbsp_autoLightCut(m, j.ranks, &cut);
      for (int k = 0, best = -1; cut && k < out.ncand; k++) // the fastest serial method
        if (mbs_solverIsBaseline(out.cand[k]) && (best < 0 || out.pred[k] < out.pred[best]))
          best = k, c.method = out.cand[k], c.rule = 3;
      mbs_modelDestroy(&m);
      c.ncand = out.ncand;
      memcpy(c.cand, out.cand, sizeof c.cand);
      memcpy(c.pred, out.pred, sizeof c.pred);
    }
  }
  MBS_CALL(mbsp_agreeErr(comm, e));
  MBS_CALL(mbsp_agreeErr(comm, mbsp_bcastBytes(comm, &c, sizeof c, 0)));
  static const char *const rules[] = {"model", "loops", "size", "light", "drive", "flexible"};
  a->rule = rules[c.rule >= 0 && c.rule < 6 ? c.rule : 0];
  a->ncand = c.ncand;
  memcpy(a->cand, c.cand, sizeof a->cand);
  memcpy(a->pred, c.pred, sizeof a->pred);
  cfg->opt.solver = c.method;
  a->decided = 1;
  a->idle = size > 1 && mbs_solverIsBaseline(c.method);
  a->active = !a->idle && j.ranks < size ? j.ranks : 0; // the distributed method on those ranks
  a->mine = mine;
  return MBS_OK;
}

void mbsp_solverAutoSummary(const mbsConfig *cfg, char *buf, size_t n) {
  const mbsSolverAuto *a = &cfg->sauto;
  if (!n) return;
  buf[0] = 0;
  if (!a->decided) return;
  size_t len = 0;
  int w = snprintf(buf, n, "auto -> %s (", mbs_solverName(cfg->opt.solver));
  len = w > 0 ? (size_t)w : 0;
  if (!strcmp(a->rule, "loops"))
    w = snprintf(buf + len, n - len, "closed loops or spring-dampers: aba");
  else if (!strcmp(a->rule, "drive"))
    w = snprintf(buf + len, n - len, "driven joints: aba");
  else if (!strcmp(a->rule, "flexible"))
    w = snprintf(buf + len, n - len, "flexible bodies: %s",
                 a->idle || a->ranks == 1 ? "the serial oracles"
                                          : "the distributed elimination, docs/flexible.md 11");
  else if (!strcmp(a->rule, "size"))
    w = snprintf(buf + len, n - len, "above %d bodies: no graph built", MBSP_AUTO_MAXBODY);
  else if (!strcmp(a->rule, "light"))
    w = snprintf(buf + len, n - len,
                 "not schur, a light joint at a rank boundary (docs/formulation.md "
                 "4.9); model:");
  else
    w = snprintf(buf + len, n - len, "model:");
  for (int k = 0; k < a->ncand && w >= 0 && (len += (size_t)w) < n; k++)
    w = snprintf(buf + len, n - len, "%s %s %.2e s", k ? "," : "", mbs_solverName(a->cand[k]),
                 a->pred[k]);
  if (w >= 0 && (len += (size_t)w) < n)
    w = snprintf(buf + len, n - len, " per evaluation at %d rank%s x %d thread%s%s)%s", a->ranks,
                 a->ranks == 1 ? "" : "s", a->threads, a->threads == 1 ? "" : "s",
                 a->slow > 1 ? ", sharing cores" : "",
                 a->idle ? "; rank 0 runs it, the other ranks wait" : "");
  if (w >= 0 && (len += (size_t)w) < n && a->active)
    snprintf(buf + len, n - len, "; %d of the job's %d ranks run it, one per core, the others wait",
             a->active, a->job);
}
