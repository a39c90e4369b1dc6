/// \file static.c
/// Static equilibrium by energy drainage (seed 001 section 6; mbs_static.h, docs/static.md).
#include "mbspar/mbs_static.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_loops.h"
#include "spatial.h"
#include "body.h"

static const char *const mbs_static_names[MBS_STATIC_METHOD_COUNT] = {"kinetic", "drain"};

void mbs_staticOptDefault(mbsStaticOpt *opt) {
  memset(opt, 0, sizeof *opt);
  opt->method = MBS_STATIC_KINETIC;
  opt->dt = 1e-3;
  opt->ke_tol = 1e-10;
  opt->dq_tol = 1e-10;
  opt->max_iter = 1000000;
  opt->omega_d = 1.0;
  opt->history = 1000;
}

const char *mbs_staticMethodName(int method) {
  return method >= 0 && method < MBS_STATIC_METHOD_COUNT ? mbs_static_names[method] : "?";
}

int mbs_staticMethodFromName(const char *name) {
  for (int k = 0; k < MBS_STATIC_METHOD_COUNT; k++)
    if (name && !strcmp(name, mbs_static_names[k])) return k;
  return -1;
}

mbsErr mbs_staticCreate(const mbsModel *m, const mbsStaticOpt *opt, mbsStatic **out) {
  *out = NULL;
  MBS_CHECK(opt->method >= 0 && opt->method < MBS_STATIC_METHOD_COUNT, MBS_ERR_INPUT,
            "static.method: unknown operator %d", opt->method);
  MBS_CHECK(opt->dt > 0 && isfinite(opt->dt), MBS_ERR_INPUT, "static.dt must be > 0 (got %g)",
            opt->dt);
  MBS_CHECK(opt->ke_tol > 0, MBS_ERR_INPUT, "static.ke_tol must be > 0 (got %g)", opt->ke_tol);
  MBS_CHECK(opt->dq_tol > 0, MBS_ERR_INPUT, "static.dq_tol must be > 0 (got %g)", opt->dq_tol);
  MBS_CHECK(opt->max_iter >= 1, MBS_ERR_INPUT, "static.max_iter must be >= 1 (got %d)",
            opt->max_iter);
  MBS_CHECK(opt->omega_d >= 0, MBS_ERR_INPUT, "static.omega_d must be >= 0 (got %g)", opt->omega_d);
  MBS_CHECK(opt->history >= 2, MBS_ERR_INPUT, "static.history must be >= 2 (got %d)", opt->history);
  mbsStatic *st;
  MBS_ALLOC(st, 1);
  st->m = m;
  st->opt = *opt;
  st->qdd = calloc((size_t)(m->nv > 0 ? m->nv : 1), sizeof *st->qdd);
  st->dq = calloc((size_t)(m->nv > 0 ? m->nv : 1), sizeof *st->dq);
  st->hist_iter = calloc((size_t)opt->history, sizeof *st->hist_iter);
  st->hist_ke = calloc((size_t)opt->history, sizeof *st->hist_ke);
  st->hist_pe = calloc((size_t)opt->history, sizeof *st->hist_pe);
  if (!st->qdd || !st->dq || !st->hist_iter || !st->hist_ke || !st->hist_pe) {
    mbs_staticDestroy(&st);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory for the static solver (%d dofs)", m->nv);
  }
  *out = st;
  return MBS_OK;
}

void mbs_staticDestroy(mbsStatic **pst) {
  if (!pst || !*pst) return;
  mbsStatic *st = *pst;
  free(st->qdd);
  free(st->dq);
  free(st->hist_iter);
  free(st->hist_ke);
  free(st->hist_pe);
  free(st);
  *pst = NULL;
}

void mbs_staticEnergy(const mbsModel *m, const mbsState *s, const mbsWork *w, int b0, int b1,
                      mbsReal *ke, mbsReal *pe) {
  mbsReal k = 0, p = 0;
  for (int b = b0; b < b1; b++) {
    // kinetic: v^T I v / 2 in body coordinates
    mbsReal t6[6];
    mbs_bodyInertiaMul(m, b, w->cvel + 6 * b, t6);
    k += 0.5 * mbsu_dot6(w->cvel + 6 * b, t6);
    // gravity: -m g . (x_b + R_b com_b)
    p += mbs_bodyGravityEnergy(m, w, b);
    // joint springs (scalar-coordinate joints)
    int t = m->body_jnttype[b];
    if (mbs_jntHasQuat(t)) continue;
    for (int j = 0; j < m->body_dofnum[b]; j++) {
      int d = m->body_dofadr[b] + j;
      mbsReal x = s->q[m->body_qadr[b] + j] - m->dof_springref[d];
      p += 0.5 * m->dof_stiffness[d] * x * x;
    }
  }
  if (m->nforce && b0 == 0 && b1 == m->nbody) p += mbs_forcePotential(m, w); // spring-dampers
  *ke = k;
  *pe = p;
}

mbsErr mbs_staticForwardSerial(void *ctx, mbsState *s, int want_pe, mbsReal *qdd, mbsReal *energy) {
  mbsStaticSerial *c = ctx;
  (void)want_pe; // the position stage is there anyway: always cheap
  // closed loops: drainage moves q and qd off the loops; project them back first (docs/loops.md)
  if (c->m->nloop && c->m->opt.projection) {
    mbsLoopProj pj;
    MBS_CALL(mbs_loopProject(c->m, s, c->w, 10, &pj));
  }
  MBS_CALL(mbs_forward(c->m, s, c->w));
  memcpy(qdd, c->w->qdd, (size_t)c->m->nv * sizeof *qdd);
  mbs_staticEnergy(c->m, s, c->w, 0, c->m->nbody, energy, energy + 1);
  return MBS_OK;
}

// evaluation it is a history sample (every hist_stride-th; the stride doubles when the buffer
// fills, so the kept samples stay evenly spaced; see mbs_staticRecord)
static int mbs_staticWants(const mbsStatic *st, int it) {
  if (it % st->hist_stride) return 0;
  return st->nhist < st->opt.history || it % (2 * st->hist_stride) == 0;
}

// keep a sample every hist_stride evaluations; when the buffer is full drop every other sample
// and double the stride (fixed memory, covers the whole run)
static void mbs_staticRecord(mbsStatic *st, int it, mbsReal ke, mbsReal pe) {
  if (it % st->hist_stride) return;
  if (st->nhist == st->opt.history) {
    int n = 0;
    for (int k = 0; k < st->nhist; k += 2, n++) {
      st->hist_iter[n] = st->hist_iter[k];
      st->hist_ke[n] = st->hist_ke[k];
      st->hist_pe[n] = st->hist_pe[k];
    }
    st->nhist = n;
    st->hist_stride *= 2;
    if (it % st->hist_stride) return;
  }
  st->hist_iter[st->nhist] = it;
  st->hist_ke[st->nhist] = ke;
  st->hist_pe[st->nhist] = pe;
  st->nhist++;
}

static mbsReal mbs_staticMaxAbs(const mbsReal *x, int n) {
  mbsReal mx = 0;
  for (int i = 0; i < n; i++) mx = fmax(mx, fabs(x[i]));
  return mx;
}

mbsErr mbs_staticSolve(mbsStatic *st, mbsState *s, mbsStaticForwardFn fwd, void *ctx) {
  const mbsModel *m = st->m;
  const mbsStaticOpt *o = &st->opt;
  const int nv = m->nv;
  const mbsReal h = o->dt, wd = o->omega_d;
  mbsReal en[2], ke_prev = 0, dq_prev = INFINITY;
  double t0 = mbs_wtime();
  st->reason = MBS_STATIC_MAXITER;
  st->iterations = st->resets = st->nhist = 0;
  st->hist_stride = 1;
  st->ke_max = 0;
  st->dq_max = INFINITY; // no step taken yet
  memset(st->dq, 0, (size_t)nv * sizeof *st->dq);

  for (int it = 0; it < o->max_iter; it++) {
    // q̈ and energies at (q_i, q̇_i); the potential energy only for the history
    int want_pe = mbs_staticWants(st, it);
    en[1] = NAN;
    MBS_CALL(fwd(ctx, s, want_pe, st->qdd, en));
    st->iterations = it + 1;
    if (!isfinite(en[0]))
      return mbs_errSet(MBS_ERR_NUMERIC,
                        "mbspar static: the kinetic energy became %g after %d steps (static.dt = "
                        "%g is too large for this model?)",
                        en[0], it, h);
    if (it == 0) st->pe0 = en[1];
    st->ke = en[0];
    st->ke_max = fmax(st->ke_max, en[0]);
    if (want_pe) mbs_staticRecord(st, it, en[0], en[1]);
    if (st->progress) st->progress(st->progress_ctx, it + 1, en[0], st->dq_max);

    // stop: little kinetic energy left and the state no longer moves, over the last two steps
    // (one small step alone can be a turning point of an oscillation; two in a row bound the
    // residual acceleration: |q̈| <= 2 dq_tol / h² (+ the drain terms))
    if (en[0] < o->ke_tol && st->dq_max < o->dq_tol && dq_prev < o->dq_tol) {
      st->reason = MBS_STATIC_CONVERGED;
      break;
    }

    // kinetic damping: the kinetic energy passed a maximum -> restart from rest here
    if (o->method == MBS_STATIC_KINETIC && en[0] < ke_prev) {
      memset(s->qd, 0, (size_t)nv * sizeof *s->qd);
      ke_prev = 0;
      st->resets++;
      continue; // the next evaluation sees q̇ = 0
    }
    ke_prev = en[0];

    // drain operator (seed eq. 50): q̈* = q̈ - 2 ω_d q̇ - ω_d² (q_i - q_{i-1})
    if (o->method == MBS_STATIC_DRAIN)
      for (int d = 0; d < nv; d++) st->qdd[d] -= 2 * wd * s->qd[d] + wd * wd * st->dq[d];

    // semi-implicit Euler: q̇ += h q̈*, q = q ⊕ h q̇
    for (int d = 0; d < nv; d++) {
      s->qd[d] += h * st->qdd[d];
      st->dq[d] = h * s->qd[d];
    }
    mbs_integratePos(m, s->q, s->qd, h, s->q);
    s->time += h;
    dq_prev = st->dq_max;
    st->dq_max = mbs_staticMaxAbs(st->dq, nv);
  }

  // the equilibrium: q̇ = 0, residual acceleration and potential energy there
  memset(s->qd, 0, (size_t)nv * sizeof *s->qd);
  MBS_CALL(fwd(ctx, s, 1, st->qdd, en));
  MBS_CHECK(isfinite(en[1]), MBS_ERR_NUMERIC, "mbspar static: the potential energy is %g", en[1]);
  st->pe = en[1];
  st->qdd_res = mbs_staticMaxAbs(st->qdd, nv);
  st->wall = mbs_wtime() - t0;
  return MBS_OK;
}
