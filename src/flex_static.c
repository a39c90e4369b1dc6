/// \file flex_static.c
/// `mbspar static` on models with flexible bodies (issue 34; docs/flexible.md 8): the energy
/// drainage of src/static.c (docs/static.md: kinetic damping or the seed's drain operator,
/// semi-implicit Euler in pseudo-time, the same stopping rule) on the oracle's state
/// [q; eta; qd; etad], so the elastic coordinates are drained with the joints'. The pseudo-time
/// step is static.dt or 0.5 / omega_max, whichever is smaller, with omega_max the highest
/// frequency of the flexible bodies' reduced (K, M) (clamped root): semi-implicit Euler is
/// stable below 2 / omega, and at 1 / omega kinetic damping was measured to lock into a
/// two-step cycle of the stiffest mode (docs/flexible.md 8). A converged drainage is polished by
/// Newton steps on the linearised force balance.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_dynamics.h"
#include "mbspar/mbs_flexmodes.h"
#include "mbspar/mbs_timer.h"

static mbsReal mbs_fsMaxAbs(const mbsReal *v, int n) {
  mbsReal mx = 0;
  for (int i = 0; i < n; i++) mx = fmax(mx, fabs(v[i]));
  return mx;
}

mbsErr mbs_flexStaticStep(const mbsModel *m, const mbsStaticOpt *opt, mbsReal *h) {
  mbsReal wmax = 0;
  for (int k = 0; m->flex && k < m->flex->n; k++) {
    const mbsFlexModal *md = &m->flex->b[k].modal;
    mbsReal *om = malloc(sizeof(mbsReal) * (size_t)(md->m + 1));
    if (!om) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    int rc = md->m > 0 ? mbs_flexModalFrequencies(md, md->m, om) : 0; // -1 singular, -2 memory
    if (!rc && md->m > 0) wmax = fmax(wmax, om[md->m - 1]);
    free(om);
    if (rc == -2) return mbs_errSet(MBS_ERR_NOMEM, "out of memory (flexible body's frequencies)");
    if (rc) return mbs_errSet(MBS_ERR_NUMERIC, "static: a flexible body's mass matrix is singular");
  }
  *h = wmax > 0 ? fmin(opt->dt, 0.5 / wmax) : opt->dt;
  return MBS_OK;
}

// max |f| of the oracle at (q, eta) at rest: the force residual (fr: n)
static mbsErr mbs_fsResidual(mbsFlexOracle *o, const mbsReal *q, const mbsReal *eta,
                             const mbsReal *y0, int n, mbsReal *fr, mbsReal *rmax) {
  mbsReal *f;
  MBS_CALL(mbs_flexOracleSystem(o, q, y0, eta, NULL, &f));
  memcpy(fr, f, sizeof(mbsReal) * (size_t)n);
  *rmax = mbs_fsMaxAbs(fr, n);
  return MBS_OK;
}

// Newton polish of the drained state (at most 4 steps, each kept only if it lowers max |f|):
// K dx = f with K = -df/dx by central differences (as the modes verb) and Cholesky (K positive
// definite at a stable equilibrium; an indefinite K ends the polish). The drainage stops at an
// acceleration of order dq_tol / h^2, large for the small pseudo-time steps of stiff beams; the
// polish takes the force residual to rounding.
static mbsErr mbs_fsNewton(const mbsModel *m, mbsFlexOracle *o, mbsReal *x, int *steps) {
  const int nq = m->nq, nv = m->nv, n = mbs_flexOracleSize(o), ne = n - nv;
  size_t sz = (size_t)n * (size_t)n + (size_t)(6 * n + 2 * nq + 2 * ne) + 1;
  mbsReal *K = calloc(sz, sizeof *K);
  if (!K) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  mbsReal *y0 = K + (size_t)n * n, *f0 = y0 + n, *fp = f0 + n, *fm = fp + n, *dx = fm + n;
  mbsReal *e = dx + n, *qt = e + n, *et = qt + nq, *f1 = et + ne, rmax, r1;
  const mbsReal h = 1e-6;
  mbsErr err = MBS_OK;
  *steps = 0;
  for (int it = 0; it < 4 && !err; it++) {
    err = mbs_fsResidual(o, x, x + nq, y0, n, f0, &rmax);
    for (int j = 0; j < n && !err; j++) {
      for (int sgn = 0; sgn < 2 && !err; sgn++) {
        mbsReal hs = sgn ? -h : h;
        memcpy(qt, x, sizeof(mbsReal) * (size_t)nq);
        memcpy(et, x + nq, sizeof(mbsReal) * (size_t)ne);
        if (j < nv) {
          e[j] = 1;
          mbs_integratePos(m, x, e, hs, qt);
          e[j] = 0;
        } else {
          et[j - nv] += hs;
        }
        err = mbs_fsResidual(o, qt, et, y0, n, sgn ? fm : fp, &r1);
      }
      for (int i = 0; i < n && !err; i++) K[(size_t)i * n + j] = -(fp[i] - fm[i]) / (2 * h);
    }
    if (err) break;
    for (int i = 0; i < n; i++) // symmetrise (a Hessian at an equilibrium)
      for (int j = i + 1; j < n; j++)
        K[(size_t)i * n + j] = K[(size_t)j * n + i] =
            0.5 * (K[(size_t)i * n + j] + K[(size_t)j * n + i]);
    memcpy(dx, f0, sizeof(mbsReal) * (size_t)n);
    if (mbs_flexCholSolve(n, K, dx)) break; // not positive definite: keep the drained state
    memcpy(qt, x, sizeof(mbsReal) * (size_t)nq);
    mbs_integratePos(m, x, dx, 1, qt);
    for (int i = 0; i < ne; i++) et[i] = x[nq + i] + dx[nv + i];
    err = mbs_fsResidual(o, qt, et, y0, n, f1, &r1);
    if (err || !(r1 < rmax)) break;
    memcpy(x, qt, sizeof(mbsReal) * (size_t)nq);
    memcpy(x + nq, et, sizeof(mbsReal) * (size_t)ne);
    (*steps)++;
  }
  free(K);
  return err;
}

mbsErr mbs_flexStaticSolve(const mbsModel *m, mbsFlexOracle *o, const mbsStaticOpt *opt, mbsReal *x,
                           mbsFlexStatic *res) {
  const int nq = m->nq, nv = m->nv, n = mbs_flexOracleSize(o), ne = n - nv;
  mbsReal *q = x, *eta = x + nq, *y = x + nq + ne;
  mbsReal h, wd = opt->omega_d, ke_prev = 0, dq_prev = INFINITY, kin;
  MBS_CALL(mbs_flexStaticStep(m, opt, &h));
  mbsReal *ydd = calloc((size_t)n + 1, sizeof *ydd), *dx = calloc((size_t)n + 1, sizeof *dx);
  if (!ydd || !dx) {
    free(ydd), free(dx);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  }
  double t0 = mbs_wtime();
  memset(res, 0, sizeof *res);
  res->h = h, res->reason = MBS_STATIC_MAXITER, res->dq_max = INFINITY;
  mbsErr e = mbs_flexOracleEnergy(o, q, y, eta, &kin, &res->pe0);
  for (int it = 0; !e && it < opt->max_iter; it++) {
    // the system once: the kinetic energy y^T M y / 2, then ydd by Cholesky of M
    mbsReal *M, *f, ke = 0;
    e = mbs_flexOracleSystem(o, q, y, eta, &M, &f);
    if (e) break;
    for (int i = 0; i < n; i++) {
      mbsReal r = 0;
      for (int j = 0; j < n; j++) r += M[(size_t)i * n + j] * y[j];
      ke += 0.5 * y[i] * r;
    }
    memcpy(ydd, f, sizeof(mbsReal) * (size_t)n);
    if (mbs_flexCholSolve(n, M, ydd)) {
      e = mbs_errSet(MBS_ERR_NUMERIC, "static: the mass matrix is not positive definite");
      break;
    }
    res->iterations = it + 1;
    if (!isfinite(ke)) {
      e = mbs_errSet(MBS_ERR_NUMERIC,
                     "mbspar static: the kinetic energy became %g after %d steps (pseudo-time "
                     "step %g too large?)",
                     ke, it, h);
      break;
    }
    res->ke = ke;
    if (ke < opt->ke_tol && res->dq_max < opt->dq_tol && dq_prev < opt->dq_tol) {
      res->reason = MBS_STATIC_CONVERGED;
      break;
    }
    if (opt->method == MBS_STATIC_KINETIC && ke < ke_prev) {
      memset(y, 0, sizeof(mbsReal) * (size_t)n);
      ke_prev = 0;
      res->resets++;
      continue;
    }
    ke_prev = ke;
    if (opt->method == MBS_STATIC_DRAIN)
      for (int d = 0; d < n; d++) ydd[d] -= 2 * wd * y[d] + wd * wd * dx[d];
    for (int d = 0; d < n; d++) y[d] += h * ydd[d], dx[d] = h * y[d];
    mbs_integratePos(m, q, y, h, q);
    for (int i = 0; i < ne; i++) eta[i] += h * y[nv + i];
    dq_prev = res->dq_max;
    res->dq_max = mbs_fsMaxAbs(dx, n);
  }
  memset(y, 0, sizeof(mbsReal) * (size_t)n);
  if (!e && res->reason == MBS_STATIC_CONVERGED) e = mbs_fsNewton(m, o, x, &res->newton);
  if (!e) e = mbs_flexOracleAccel(o, q, y, eta, ydd);
  if (!e) e = mbs_flexOracleEnergy(o, q, y, eta, &kin, &res->pe);
  if (!e) res->qdd_res = mbs_fsMaxAbs(ydd, n);
  res->wall = mbs_wtime() - t0;
  free(ydd), free(dx);
  return e;
}

mbsErr mbs_flexStaticAt(const mbsModel *m, mbsFlexOracle *o, const mbsStaticOpt *opt, mbsReal *q,
                        mbsReal *eta) {
  int n = mbs_flexOracleSize(o), ne = n - m->nv;
  mbsReal *x = calloc((size_t)(m->nq + ne + n) + 1, sizeof *x);
  if (!x) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  memcpy(x, q, sizeof(mbsReal) * (size_t)m->nq);
  memcpy(x + m->nq, eta, sizeof(mbsReal) * (size_t)ne);
  mbsFlexStatic st;
  mbsErr e = mbs_flexStaticSolve(m, o, opt, x, &st);
  if (!e && st.reason != MBS_STATIC_CONVERGED)
    fprintf(stderr,
            "mbspar: warning: modes: the static solve did not converge in static.max_iter = %d "
            "evaluations (kinetic energy %.3e J): linearising where it stopped\n",
            opt->max_iter, st.ke);
  if (!e) {
    memcpy(q, x, sizeof(mbsReal) * (size_t)m->nq);
    memcpy(eta, x + m->nq, sizeof(mbsReal) * (size_t)ne);
  }
  free(x);
  return e;
}
