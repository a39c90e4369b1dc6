/// \file flex_static.c
/// `mbspar static` on models with flexible bodies (issue 34; docs/flexible.md 8): the energy
/// drainage of src/static.c (docs/static.md: kinetic damping or the seed's drain operator,
/// semi-implicit Euler in pseudo-time at static.dt, the same stopping rule) on the joint
/// coordinates, the elastic coordinates held at their equilibrium for the current joints at every
/// step (eta <- eta + K_r^-1 f_eta body by body). Elastic modes are orders of magnitude faster
/// than the joints' (flex_chain: 11668 against 1.9 rad/s), so draining them together needs a step
/// set by the former and takes minutes. When that elastic iteration does not contract (soft
/// bodies), every coordinate is drained together on [q; eta; qd; etad] with the step static.dt,
/// 0.5 / omega_max of the bodies' clamped-root (K, M) or 0.5 / (1.2 omega) of the coupled system's
/// power-iteration estimate, whichever is smallest. A converged drainage is polished by Newton
/// steps on the linearised force balance, whose tangent's columns may be split over the ranks
/// (mbsFlexStatic.split, mbs_colsplit.h; docs/flexible.md 8).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_dynamics.h"
#include "mbspar/mbs_flexmodes.h"
#include "mbspar/mbs_timer.h"

// Drainage steps between two evaluations of the joints' mass matrix (and at every restart): the
// mass of the pseudo-dynamics only shapes the path, not the equilibrium, and the oracle's f alone
// costs O(N) a mass point against O(N^2) with M.
#define MBS_FS_MASS_AGE 256

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
// polish takes the force residual to rounding. cs: K's columns split over the parts, the rest
// replicated (every part the same bits, so the same decisions); every failure path agreed.
static mbsErr mbs_fsNewton(const mbsModel *m, mbsFlexOracle *o, mbsReal *x, int *steps,
                           const mbsColSplit *cs) {
  const int nq = m->nq, nv = m->nv, n = mbs_flexOracleSize(o), ne = n - nv;
  size_t sz = (size_t)n * (size_t)n + (size_t)(6 * n + 2 * nq + 2 * ne) + 1;
  mbsReal *K = calloc(sz, sizeof *K);
  mbsErr err = K ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  if (cs) err = cs->agree(cs->ctx, err);
  if (err) {
    free(K);
    return err;
  }
  mbsReal *y0 = K + (size_t)n * n, *f0 = y0 + n, *fp = f0 + n, *fm = fp + n, *dx = fm + n;
  mbsReal *e = dx + n, *qt = e + n, *et = qt + nq, *f1 = et + ne, rmax = 0, r1 = 0;
  const mbsReal h = 1e-6;
  int j0, j1;
  mbs_colRange(cs, n, &j0, &j1);
  *steps = 0;
  for (int it = 0; it < 4 && !err; it++) {
    err = mbs_fsResidual(o, x, x + nq, y0, n, f0, &rmax);
    // this part's columns of K, column j in row j (the symmetrisation below gives the same bits
    // for K and its transpose)
    for (int j = j0; j < j1 && !err; j++) {
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
      for (int i = 0; i < n && !err; i++) K[(size_t)j * n + i] = -(fp[i] - fm[i]) / (2 * h);
    }
    if (cs) err = cs->gather(cs->ctx, err, K, n, n); // every part's columns to every part
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
    if (cs) err = cs->agree(cs->ctx, err); // replicated: the same decision on every part
    if (err || !(r1 < rmax)) break;
    memcpy(x, qt, sizeof(mbsReal) * (size_t)nq);
    memcpy(x + nq, et, sizeof(mbsReal) * (size_t)ne);
    (*steps)++;
  }
  free(K);
  return err;
}

// Solve L L^T b = b in place (L lower triangular, n x n in the rows of stride ld).
static void mbs_fsCholBack(int n, size_t ld, const mbsReal *L, mbsReal *b) {
  for (int i = 0; i < n; i++) {
    mbsReal s = b[i];
    for (int j = 0; j < i; j++) s -= L[(size_t)i * ld + j] * b[j];
    b[i] = s / L[(size_t)i * ld + i];
  }
  for (int i = n - 1; i >= 0; i--) {
    mbsReal s = b[i];
    for (int j = i + 1; j < n; j++) s -= L[(size_t)j * ld + i] * b[j];
    b[i] = s / L[(size_t)i * ld + i];
  }
}

// The elastic coordinates held at their equilibrium for the current joints (docs/flexible.md 8):
// eta <- eta + K_r^-1 f_eta body by body (each body's own reduced K, clamped root, positive
// definite), repeated until the largest change is below tol. K_r is the elastic coordinates'
// stiffness up to the load-dependent (geometric, gravity) terms, which are small for stiff bodies,
// so the iteration contracts by their ratio (measured: 1 to 3 evaluations per drainage step on the
// chains). Kf: the bodies' factors of K_r (their blocks along the diagonal, in y order); returns
// the oracle's f at the last evaluation (f alone, no M: at the eta before the last, sub-tol
// change) and *ev the evaluations; *stalled = 1 when the iteration did not contract (the caller
// falls back).
static mbsErr mbs_fsRelax(const mbsModel *m, mbsFlexOracle *o, const mbsReal *Kf, const mbsReal *q,
                          const mbsReal *y, mbsReal *eta, mbsReal tol, mbsReal *de, mbsReal **f,
                          int *ev, int *stalled) {
  const int nv = m->nv, ne = mbs_flexOracleSize(o) - nv;
  mbsReal prev = INFINITY;
  *stalled = 0;
  for (int it = 0; it < 30; it++) {
    MBS_CALL(mbs_flexOracleSystem(o, q, y, eta, NULL, f));
    (*ev)++;
    memcpy(de, *f + nv, sizeof(mbsReal) * (size_t)ne);
    for (int k = 0, c = 0; m->flex && k < m->flex->n; k++) {
      int mk = m->flex->b[k].modal.m;
      mbs_fsCholBack(mk, (size_t)ne, Kf + (size_t)c * (size_t)ne + (size_t)c, de + c);
      c += mk;
    }
    mbsReal d = mbs_fsMaxAbs(de, ne);
    for (int i = 0; i < ne; i++) eta[i] += de[i];
    if (d <= tol) return MBS_OK;
    if (it > 2 && !(d < 0.5 * prev)) break; // not contracting: soft bodies
    prev = d;
  }
  *stalled = 1;
  return MBS_OK;
}

// The factors of the flexible bodies' K_r on the diagonal of Kf (ne x ne, zero elsewhere).
static mbsErr mbs_fsStiffness(const mbsModel *m, int ne, mbsReal *Kf) {
  for (int k = 0, c = 0; m->flex && k < m->flex->n; k++) {
    const mbsFlexModal *md = &m->flex->b[k].modal;
    mbsReal *L = Kf + (size_t)c * (size_t)ne + (size_t)c;
    for (int i = 0; i < md->m; i++)
      for (int j = 0; j <= i; j++) L[(size_t)i * ne + j] = md->K[(size_t)i * md->m + j];
    for (int j = 0; j < md->m; j++) { // Cholesky in place (lower triangle)
      mbsReal d = L[(size_t)j * ne + j];
      for (int p = 0; p < j; p++) d -= L[(size_t)j * ne + p] * L[(size_t)j * ne + p];
      if (!(d > 0))
        return mbs_errSet(MBS_ERR_NUMERIC,
                          "static: flexible body \"%s\": its stiffness matrix is not positive "
                          "definite",
                          m->flex->b[k].name);
      d = sqrt(d);
      L[(size_t)j * ne + j] = d;
      for (int i = j + 1; i < md->m; i++) {
        mbsReal s = L[(size_t)i * ne + j];
        for (int p = 0; p < j; p++) s -= L[(size_t)i * ne + p] * L[(size_t)j * ne + p];
        L[(size_t)i * ne + j] = s / d;
      }
    }
    c += md->m;
  }
  return MBS_OK;
}

// The drainage of the joints with the elastic coordinates held quasi-statically (mbs_fsRelax at
// every step): kinetic damping or the drain operator on the joints alone, their mass the joint
// block M_qq of the oracle's M, the step static.dt (the elastic modes no longer bound it). The
// equilibria are those of the full system (f = 0 in every coordinate); the path to them is not
// the physical motion. *stalled: the elastic iteration did not contract (the caller drains
// everything instead, the state as it was on entry).
static mbsErr mbs_fsDrainJoints(const mbsModel *m, mbsFlexOracle *o, const mbsStaticOpt *opt,
                                mbsReal *x, mbsFlexStatic *res, int *stalled) {
  const int nq = m->nq, nv = m->nv, n = mbs_flexOracleSize(o), ne = n - nv;
  mbsReal *q = x, *eta = x + nq, *y = x + nq + ne;
  const mbsReal h = opt->dt, wd = opt->omega_d;
  mbsReal ke_prev = 0, dq_prev = INFINITY;
  size_t sz =
      (size_t)ne * (size_t)ne + (size_t)nv * (size_t)nv + (size_t)(3 * nv + 2 * ne + n + nq);
  mbsReal *Kf = calloc(sz + 1, sizeof *Kf);
  if (!Kf) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  mbsReal *Mq = Kf + (size_t)ne * ne, *a = Mq + (size_t)nv * nv, *dx = a + nv, *de = dx + nv;
  mbsReal *yv = de + ne, *save = yv + n;
  memcpy(save, x, sizeof(mbsReal) * (size_t)(nq + ne));
  mbsErr e = mbs_fsStiffness(m, ne, Kf);
  res->h = h, res->reason = MBS_STATIC_MAXITER, res->dq_max = INFINITY, *stalled = 0;
  memset(y + nv, 0, sizeof(mbsReal) * (size_t)ne);
  const mbsReal etol = fmax(opt->dq_tol, 1e-14);
  for (int it = 0, age = 1 << 30; !e && res->iterations < opt->max_iter; it++) {
    mbsReal *M, *f, ke = 0;
    memcpy(yv, y, sizeof(mbsReal) * (size_t)n); // the joints' velocities, the elastic ones zero
    e = mbs_fsRelax(m, o, Kf, q, yv, eta, etol, de, &f, &res->iterations, stalled);
    if (e || *stalled) break;
    if (age >= MBS_FS_MASS_AGE) { // the joints' mass M_qq afresh (the oracle's M, O(N^2) a point)
      e = mbs_flexOracleSystem(o, q, yv, eta, &M, &f);
      if (e) break;
      res->iterations++, age = 0;
      for (int i = 0; i < nv; i++)
        for (int j = 0; j <= i; j++) Mq[(size_t)i * nv + j] = M[(size_t)i * n + j];
      memset(a, 0, sizeof(mbsReal) * (size_t)nv);
      if (mbs_flexCholSolve(nv, Mq, a)) { // factors Mq in place (lower triangle)
        e = mbs_errSet(MBS_ERR_NUMERIC, "static: the joints' mass matrix is not positive definite");
        break;
      }
    }
    age++;
    for (int i = 0; i < nv; i++) { // |L^T v|^2 / 2
      mbsReal r = 0;
      for (int j = i; j < nv; j++) r += Mq[(size_t)j * nv + i] * y[j];
      ke += 0.5 * r * r;
    }
    memcpy(a, f, sizeof(mbsReal) * (size_t)nv);
    mbs_fsCholBack(nv, (size_t)nv, Mq, a);
    if (!isfinite(ke)) {
      e = mbs_errSet(MBS_ERR_NUMERIC,
                     "mbspar static: the kinetic energy became %g after %d steps (static.dt = %g "
                     "too large?)",
                     ke, it, h);
      break;
    }
    res->ke = ke;
    if (res->progress) res->progress(res->progress_ctx, res->iterations, ke, res->dq_max);
    if (ke < opt->ke_tol && res->dq_max < opt->dq_tol && dq_prev < opt->dq_tol) {
      res->reason = MBS_STATIC_CONVERGED;
      break;
    }
    if (opt->method == MBS_STATIC_KINETIC && ke < ke_prev) {
      memset(y, 0, sizeof(mbsReal) * (size_t)nv);
      ke_prev = 0;
      res->resets++;
      age = MBS_FS_MASS_AGE; // the mass afresh at every restart
      continue;
    }
    ke_prev = ke;
    if (opt->method == MBS_STATIC_DRAIN)
      for (int d = 0; d < nv; d++) a[d] -= 2 * wd * y[d] + wd * wd * dx[d];
    for (int d = 0; d < nv; d++) y[d] += h * a[d], dx[d] = h * y[d];
    mbs_integratePos(m, q, y, h, q);
    dq_prev = res->dq_max;
    res->dq_max = mbs_fsMaxAbs(dx, nv);
    res->steps++;
  }
  if (*stalled) { // back to the entry state: the full drainage starts from there
    memcpy(x, save, sizeof(mbsReal) * (size_t)(nq + ne));
    memset(y, 0, sizeof(mbsReal) * (size_t)n);
  }
  free(Kf);
  return e;
}

// The coupled system's highest frequency at rest at x = [q; eta] (for the full drainage's step): a
// power iteration on M^-1 K, K v by a one-sided directional difference of the oracle's f (f alone)
// along v scaled to max 1e-7, 40 iterations from an all-ones start; the Rayleigh quotient
// v^T K v / v^T M v, which approaches omega_max^2 from below. *w2 = 0 when it fails to apply.
static mbsErr mbs_fsOmegaMax(const mbsModel *m, mbsFlexOracle *o, const mbsReal *x, mbsReal *w2) {
  const int nq = m->nq, nv = m->nv, n = mbs_flexOracleSize(o), ne = n - nv;
  size_t sz = (size_t)n * (size_t)n + (size_t)(5 * n + nq + ne);
  mbsReal *L = calloc(sz + 1, sizeof *L);
  if (!L) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  mbsReal *y0 = L + (size_t)n * n, *f0 = y0 + n, *v = f0 + n, *kv = v + n, *mv = kv + n;
  mbsReal *qt = mv + n, *et = qt + nq, *M, *f;
  mbsErr e = mbs_flexOracleSystem(o, x, y0, x + nq, &M, &f);
  *w2 = 0;
  if (!e) {
    memcpy(L, M, sizeof(mbsReal) * (size_t)n * n);
    memcpy(f0, f, sizeof(mbsReal) * (size_t)n);
    if (mbs_flexCholSolve(n, L, mv)) e = mbs_errSet(MBS_ERR_NUMERIC, "static: M not definite");
  }
  for (int i = 0; i < n; i++) v[i] = 1;
  for (int it = 0; it < 40 && !e; it++) {
    mbsReal s = 1e-7 / fmax(mbs_fsMaxAbs(v, n), 1e-300);
    memcpy(qt, x, sizeof(mbsReal) * (size_t)nq);
    mbs_integratePos(m, x, v, s, qt);
    for (int i = 0; i < ne; i++) et[i] = x[nq + i] + s * v[nv + i];
    e = mbs_flexOracleSystem(o, qt, y0, et, NULL, &f);
    if (e) break;
    mbsReal vkv = 0, vmv = 0;
    for (int i = 0; i < n; i++) kv[i] = -(f[i] - f0[i]) / s, vkv += v[i] * kv[i];
    for (int i = 0; i < n; i++) { // M v from the factor: L (L^T v)
      mbsReal r = 0;
      for (int j = i; j < n; j++) r += L[(size_t)j * n + i] * v[j];
      mv[i] = r;
    }
    for (int i = 0; i < n; i++) vmv += mv[i] * mv[i];
    if (vmv > 0) *w2 = fmax(*w2, vkv / vmv);
    memcpy(v, kv, sizeof(mbsReal) * (size_t)n); // v <- M^-1 K v, scaled to max 1
    mbs_fsCholBack(n, (size_t)n, L, v);
    mbsReal vm = mbs_fsMaxAbs(v, n);
    if (!(vm > 0 && isfinite(vm))) break;
    for (int i = 0; i < n; i++) v[i] /= vm;
  }
  if (!isfinite(*w2)) *w2 = 0;
  free(L);
  return e;
}

// The drainage of every coordinate (joints and elastic) on the oracle's dynamics, the step
// bounded by the bodies' clamped-root frequencies (mbs_flexStaticStep): used when the elastic
// coordinates cannot be held quasi-statically (mbs_fsRelax does not contract).
static mbsErr mbs_fsDrainAll(const mbsModel *m, mbsFlexOracle *o, const mbsStaticOpt *opt,
                             mbsReal *x, mbsFlexStatic *res) {
  const int nq = m->nq, nv = m->nv, n = mbs_flexOracleSize(o), ne = n - nv;
  mbsReal *q = x, *eta = x + nq, *y = x + nq + ne;
  mbsReal h, wd = opt->omega_d, ke_prev = 0, dq_prev = INFINITY;
  mbsReal w2 = 0;
  MBS_CALL(mbs_flexStaticStep(m, opt, &h));
  MBS_CALL(mbs_fsOmegaMax(m, o, x, &w2)); // the coupled system's (the bodies' bound is not one)
  if (w2 > 0) h = fmin(h, 0.5 / (1.2 * sqrt(w2)));
  mbsReal *ydd = calloc((size_t)n + 1, sizeof *ydd), *dx = calloc((size_t)n + 1, sizeof *dx);
  if (!ydd || !dx) {
    free(ydd), free(dx);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  }
  res->h = h, res->reason = MBS_STATIC_MAXITER, res->dq_max = INFINITY;
  mbsErr e = MBS_OK;
  for (int it = 0; !e && res->iterations < opt->max_iter; it++) {
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
    res->iterations++;
    if (!isfinite(ke)) {
      e = mbs_errSet(MBS_ERR_NUMERIC,
                     "mbspar static: the kinetic energy became %g after %d steps (pseudo-time "
                     "step %g too large?)",
                     ke, it, h);
      break;
    }
    res->ke = ke;
    if (res->progress) res->progress(res->progress_ctx, res->iterations, ke, res->dq_max);
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
  free(ydd), free(dx);
  return e;
}

mbsErr mbs_flexStaticSolve(const mbsModel *m, mbsFlexOracle *o, const mbsStaticOpt *opt, mbsReal *x,
                           mbsFlexStatic *res) {
  const int nq = m->nq, nv = m->nv, n = mbs_flexOracleSize(o), ne = n - nv;
  mbsReal *q = x, *eta = x + nq, *y = x + nq + ne, kin;
  mbsReal *ydd = calloc((size_t)n + 1, sizeof *ydd);
  double t0 = mbs_wtime();
  void (*prog)(void *, int, double, double) = res->progress;
  void *pctx = res->progress_ctx;
  const mbsColSplit *cs = res->split;
  memset(res, 0, sizeof *res);
  res->progress = prog, res->progress_ctx = pctx, res->split = cs;
  int stalled = 0;
  mbsErr e = ydd ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  // the drainage (replicated over the parts of cs: no communication)
  if (!e) e = mbs_flexOracleEnergy(o, q, y, eta, &kin, &res->pe0);
  if (!e) e = mbs_fsDrainJoints(m, o, opt, x, res, &stalled);
  res->quasi = !stalled;
  if (!e && stalled) e = mbs_fsDrainAll(m, o, opt, x, res);
  memset(y, 0, sizeof(mbsReal) * (size_t)n);
  if (cs) e = cs->agree(cs->ctx, e); // every part reaches the polish together, or none
  if (!e && res->reason == MBS_STATIC_CONVERGED) e = mbs_fsNewton(m, o, x, &res->newton, cs);
  if (!e) e = mbs_flexOracleAccel(o, q, y, eta, ydd);
  if (!e) e = mbs_flexOracleEnergy(o, q, y, eta, &kin, &res->pe);
  if (!e) res->qdd_res = mbs_fsMaxAbs(ydd, n);
  res->wall = mbs_wtime() - t0;
  free(ydd);
  return e;
}

mbsErr mbs_flexStaticAt(const mbsModel *m, mbsFlexOracle *o, const mbsStaticOpt *opt, mbsReal *q,
                        mbsReal *eta, const mbsColSplit *cs) {
  int n = mbs_flexOracleSize(o), ne = n - m->nv;
  mbsReal *x = calloc((size_t)(m->nq + ne + n) + 1, sizeof *x);
  if (!x) { // the parts that got theirs wait at the solve's first agreement
    mbsErr e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    return cs ? cs->agree(cs->ctx, e) : e;
  }
  memcpy(x, q, sizeof(mbsReal) * (size_t)m->nq);
  memcpy(x + m->nq, eta, sizeof(mbsReal) * (size_t)ne);
  mbsFlexStatic st = {0};
  st.split = cs;
  mbsErr e = mbs_flexStaticSolve(m, o, opt, x, &st);
  if (!e && st.reason != MBS_STATIC_CONVERGED && (!cs || cs->part == 0))
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
