/// \file guard.c
/// The accuracy guard (guard.h, docs/formulation.md 4.9): the bound, the likely cause of an
/// exceeded bound, the warning line, the equation-of-motion residual of a result, and the checks
/// at the first and the last evaluation of `run` and `static`.
#include "guard.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_loops.h"
#include "mbspar/mbs_solvertype.h"

#define MBS_GUARD_BOUND 1e-8 // relative residual of a direct method's result
#define MBS_GUARD_RATIO 1e3  // mass ratio across a joint named as the likely cause
#define MBS_GUARD_CAP   1e-3 // the largest bound: a loose solver.tol does not raise it further

// 100 tol of an iterative method (its residual is measured on A lambda = b; measured on
// configs/: the equation-of-motion residual stays below 6 tol, docs/formulation.md 4.9), else 0
static double mbsp_guardTolBound(const mbsModel *m) {
  const mbsSolverType *t = mbs_solverFind(m->opt.solver);
  return t && t->iterative ? 100 * m->opt.tol : 0;
}

// The bound of the guard: 1e-8 for the direct methods; for the iterative ones 100 tol when that
// is larger, at most 1e-3 (a result that misses the equations of motion by more is reported
// whatever tolerance was asked for)
double mbsp_guardBound(const mbsModel *m) {
  double b = fmax(MBS_GUARD_BOUND, mbsp_guardTolBound(m));
  return fmin(b, MBS_GUARD_CAP);
}

#define MBS_GUARD_CAUSE 240 // characters of a rank's cause text, sent as doubles
// the joint of [b0, b1) whose two bodies' masses differ most: the ratio, and the pair as text
static double mbsp_guardMassRatio(const mbsModel *m, int b0, int b1, char *text, size_t n) {
  double best_ratio = 0;
  int best = -1;
  text[0] = 0;
  for (int b = b0; b < b1; b++) {
    int p = m->body_parent[b];
    if (p < 0) continue;
    double mb = m->body_mass[b], mp = m->body_mass[p];
    if (!(mb > 0 && mp > 0)) continue;
    double ratio = mb > mp ? mb / mp : mp / mb;
    if (ratio > best_ratio) best_ratio = ratio, best = b;
  }
  if (best >= 0) {
    int p = m->body_parent[best], light = m->body_mass[best] < m->body_mass[p] ? best : p,
        heavy = light == best ? p : best;
    snprintf(text, n, "%.80s (%.3g kg) next to %.80s (%.3g kg)", m->body_name[light],
             m->body_mass[light], m->body_name[heavy], m->body_mass[heavy]);
  }
  return best_ratio;
}

// The likely cause of an exceeded bound, on rank 0: the joint whose two bodies' masses differ
// most, over the owned bodies [b0, b1) of every rank and their parents. Collective if local
// (distributed-memory models), else rank 0 alone over the whole model.
static mbsErr mbsp_guardCause(mbspComm *comm, const mbsModel *m, int local, int b0, int b1,
                              char *out, size_t n) {
  double mine[1 + MBS_GUARD_CAUSE] = {0}, ratio;
  char text[MBS_GUARD_CAUSE];
  mine[0] = mbsp_guardMassRatio(m, b0, b1, text, sizeof text);
  ratio = mine[0];
  if (local) {
    for (int i = 0; i < MBS_GUARD_CAUSE - 1 && text[i]; i++) mine[1 + i] = (unsigned char)text[i];
    int P = mbsp_size(comm), rank = mbsp_rank(comm);
    double *all = rank == 0 ? calloc((size_t)P * (1 + MBS_GUARD_CAUSE), sizeof(double)) : NULL;
    MBS_CALL(mbsp_agreeErr(comm,
                           rank != 0 || all ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory")));
    mbsErr e = mbsp_gather(comm, mine, 1 + MBS_GUARD_CAUSE, all);
    if (!e && rank == 0) {
      int r = 0;
      for (int k = 1; k < P; k++)
        if (all[(size_t)k * (1 + MBS_GUARD_CAUSE)] > all[(size_t)r * (1 + MBS_GUARD_CAUSE)]) r = k;
      const double *row = all + (size_t)r * (1 + MBS_GUARD_CAUSE);
      for (int i = 0; i < MBS_GUARD_CAUSE; i++) text[i] = (char)row[1 + i];
      text[MBS_GUARD_CAUSE - 1] = 0;
      ratio = row[0];
    }
    free(all);
    MBS_CALL(mbsp_agreeErr(comm, e));
  }
  if (mbsp_guardTolBound(m) > MBS_GUARD_CAP) // the tolerance first: it alone explains the miss
    snprintf(out, n,
             "solver.tol = %g is loose (an iterative method's result carries errors of the order "
             "of its tolerance; %g or less keeps it within the bound)",
             m->opt.tol, MBS_GUARD_CAP / 100);
  else if (ratio >= MBS_GUARD_RATIO)
    snprintf(out, n, "bodies whose masses differ by %.0f orders of magnitude: %s",
             floor(log10(ratio)), text);
  else
    snprintf(out, n,
             "no two jointed bodies' masses differ by %g or more; the system is ill-conditioned "
             "for this method or its tolerance",
             MBS_GUARD_RATIO);
  return MBS_OK;
}

// The guard: compare the residual with the bound; when exceeded, the likely cause
mbsErr mbsp_guardJudge(mbspComm *comm, const mbsModel *m, int local, int b0, int b1,
                       double residual, int reason, mbspGuard *g) {
  g->residual = residual, g->bound = mbsp_guardBound(m);
  g->exceeded = !(residual <= g->bound);
  g->unconverged = reason < 0;
  g->cause[0] = 0;
  if (!g->exceeded) return MBS_OK;
  if (g->unconverged) { // the solver's own warning has said so
    snprintf(g->cause, sizeof g->cause, "the solve stopped without converging");
    return MBS_OK;
  }
  return mbsp_guardCause(comm, m, local, b0, b1, g->cause, sizeof g->cause);
}

void mbsp_guardWarn(const char *verb, const char *where, const mbsModel *m, const mbspGuard *g) {
  if (g->exceeded && !g->unconverged)
    fprintf(stderr,
            "mbspar: warning: %s: the result of %s misses the equations of motion by %.1e "
            "(relative; bound %.0e)%s; likely cause: %s (docs/formulation.md 4.9)\n",
            verb, mbs_solverName(m->opt.solver), g->residual, g->bound, where ? where : "",
            g->cause);
}

void mbsp_guardEom(const mbsModel *m, mbsWork *w, const mbsReal *qdd, double *res) {
  // ||RNEA(q, qd, qdd) - tau|| / scale, scale = max(||bias||, ||bias_0||, ||tau||), bias =
  // RNEA(q, qd, 0) with the external wrenches (spring-dampers, loop forces), bias_0 without them:
  // at an equilibrium the loop or spring forces cancel gravity in bias, which then says nothing
  // of the forces' size (the four-bar at rest: ||bias|| ~ 1e-7 against gravity's ~ 30)
  double num = 0, nb = 0, nt = 0;
  mbs_rnea(m, w, NULL);
  for (int d = 0; d < m->nv; d++) nb += w->qfrc_inv[d] * w->qfrc_inv[d];
  if (w->fext_on) {
    double n0 = 0;
    w->fext_on = 0;
    mbs_rnea(m, w, NULL);
    w->fext_on = 1;
    for (int d = 0; d < m->nv; d++) n0 += w->qfrc_inv[d] * w->qfrc_inv[d];
    if (n0 > nb) nb = n0;
  }
  mbs_rnea(m, w, qdd);
  for (int d = 0; d < m->nv; d++) {
    double r = w->qfrc_inv[d] - w->qfrc[d];
    num += r * r;
    nt += w->qfrc[d] * w->qfrc[d];
  }
  double scale = sqrt(nb > nt ? nb : nt);
  *res = scale > 0 ? sqrt(num) / scale : sqrt(num);
}

// ---------------------------------------------------------------- first and last evaluation

mbsErr mbsp_guardPairCreate(const mbsModel *m, mbspGuardPair *gp) {
  memset(gp, 0, sizeof *gp);
  gp->m = m;
  mbsErr e = mbs_stateCreate(m, &gp->s);
  if (!e) e = mbs_workCreate(m, &gp->w);
  gp->qdd = calloc((size_t)m->nv + 1, sizeof(mbsReal));
  gp->lam = calloc((size_t)m->nlam_loop + 1, sizeof(mbsReal));
  if (!e && !(gp->qdd && gp->lam)) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (accuracy guard)");
  if (e) mbsp_guardPairDestroy(gp);
  return e;
}

void mbsp_guardPairDestroy(mbspGuardPair *gp) {
  mbs_stateDestroy(&gp->s);
  mbs_workDestroy(&gp->w);
  free(gp->qdd), free(gp->lam);
  gp->qdd = gp->lam = NULL;
}

void mbsp_guardPairKeep(mbspGuardPair *gp, const mbsState *s, const mbsReal *qdd,
                        const mbsReal *lam, int reason) {
  const mbsModel *m = gp->m;
  gp->s->time = s->time;
  memcpy(gp->s->q, s->q, (size_t)m->nq * sizeof(mbsReal));
  memcpy(gp->s->qd, s->qd, (size_t)m->nv * sizeof(mbsReal));
  if (gp->s->tau) {
    if (s->tau)
      memcpy(gp->s->tau, s->tau, (size_t)m->nv * sizeof(mbsReal));
    else
      memset(gp->s->tau, 0, (size_t)m->nv * sizeof(mbsReal));
  }
  memcpy(gp->qdd, qdd, (size_t)m->nv * sizeof(mbsReal));
  if (lam && m->nlam_loop) memcpy(gp->lam, lam, (size_t)m->nlam_loop * sizeof(mbsReal));
  gp->reason = reason;
}

mbsErr mbsp_guardPairCheck(mbspGuardPair *gp, int which, const char *verb) {
  const mbsModel *m = gp->m;
  mbsWork *w = gp->w;
  // the kept evaluation's stages, its spring-dampers and loop wrenches (whatever the method did
  // with them: in w->fext, or as rows of the constraint-force system)
  mbs_fwdPosition(m, gp->s, w);
  mbs_fwdVelocity(m, gp->s, w);
  mbs_fwdForces(m, w);
  if (m->nloop) mbs_loopAddForces(m, w, gp->lam);
  double res;
  mbsp_guardEom(m, w, gp->qdd, &res);
  mbspGuard *g = gp->g + which;
  MBS_CALL(mbsp_guardJudge(NULL, m, 0, 0, m->nbody, res, gp->reason, g));
  gp->t[which] = gp->s->time;
  gp->done[which] = 1;
  if (g->exceeded && !g->unconverged && !gp->warned) {
    char where[96];
    snprintf(where, sizeof where, " at t = %.6g s (%s evaluation)", gp->s->time,
             which ? "last" : "first");
    mbsp_guardWarn(verb, where, m, g);
    gp->warned = 1;
  }
  return MBS_OK;
}

void mbsp_guardPairJson(mbsJson *j, const mbspGuardPair *gp) {
  if (!gp->done[0] && !gp->done[1]) return;
  // the worse of the two checks, then each
  int k = !gp->done[0] || (gp->done[1] && !(gp->g[1].residual <= gp->g[0].residual));
  const mbspGuard *g = gp->g + k;
  mbs_jsonBeginObject(j, "accuracy");
  mbs_jsonNumber(j, "residual", g->residual);
  mbs_jsonNumber(j, "bound", g->bound);
  mbs_jsonBool(j, "exceeded", gp->g[0].exceeded || gp->g[1].exceeded);
  if (g->exceeded) mbs_jsonString(j, "likely_cause", g->cause);
  static const char *const nm[2] = {"first", "last"};
  for (int i = 0; i < 2; i++) {
    if (!gp->done[i]) continue;
    mbs_jsonBeginObject(j, nm[i]);
    mbs_jsonNumber(j, "t", gp->t[i]);
    mbs_jsonNumber(j, "residual", gp->g[i].residual);
    mbs_jsonEndObject(j);
  }
  mbs_jsonEndObject(j);
}
