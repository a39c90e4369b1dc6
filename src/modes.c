/// \file modes.c
/// Linearisation about a configuration at rest and the generalised eigenproblem K v = ω² M v
/// (mbs_modes.h, docs/modes.md). M: one RNEA per column with gravity, velocities and external
/// wrenches off (then RNEA(q, 0, e_j) = M e_j exactly). K: central differences of the residual
/// r(q) = C(q, 0) − τ(q, 0) along each velocity coordinate on the configuration manifold. The
/// eigen solve is LAPACK's dsygv (Debian liblapack-dev), called through its Fortran symbol.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_loops.h"
#include "mbspar/mbs_modes.h"

// LAPACK (Fortran calling convention: every argument by reference, then the hidden lengths of
// the character arguments, as gfortran and the other common compilers pass them)
extern void dsygv_(const int *itype, const char *jobz, const char *uplo, const int *n, double *a,
                   const int *lda, double *b, const int *ldb, double *w, double *work,
                   const int *lwork, int *info, size_t ljobz, size_t luplo);

mbsErr mbs_modesCreate(const mbsModel *m, mbsModes **md) {
  *md = NULL;
  MBS_CHECK(m->nloop == 0, MBS_ERR_UNSUPPORTED,
            "modes: models with closed loops (%d cut joint%s) are not supported yet: their joint "
            "coordinates are not independent (docs/modes.md)",
            m->nloop, m->nloop == 1 ? "" : "s");
  MBS_CHECK(m->nv <= MBS_MODES_MAX_DOF, MBS_ERR_UNSUPPORTED,
            "modes: %d degrees of freedom: the dense eigen solve takes at most %d", m->nv,
            MBS_MODES_MAX_DOF);
  MBS_CHECK(m->nv > 0, MBS_ERR_INPUT, "modes: the model has no degrees of freedom");
  mbsModes *d = calloc(1, sizeof *d);
  if (!d) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  *md = d;
  size_t n = (size_t)m->nv;
  d->n = m->nv;
  d->h = MBS_MODES_FD_STEP;
  d->lwork = 66 * m->nv; // (block size 64 + 2) n: dsytrd's optimum
  MBS_ALLOC(d->M, n * n);
  MBS_ALLOC(d->K, n * n);
  MBS_ALLOC(d->A, n * n);
  MBS_ALLOC(d->B, n * n);
  MBS_ALLOC(d->V, n * n);
  MBS_ALLOC(d->r, n);
  MBS_ALLOC(d->qdd, n);
  MBS_ALLOC(d->lambda, n);
  MBS_ALLOC(d->zero, n);
  MBS_ALLOC(d->col, n);
  MBS_ALLOC(d->work, (size_t)d->lwork);
  return mbs_stateCreate(m, &d->sp);
}

void mbs_modesTrim(mbsModes *md) {
  free(md->V), md->V = NULL;
  // A shrinks to the linearisation's scratch row (a failed shrink keeps the block); B stays
  // whole: the accelerations at rest factor M in it
  mbsReal *a = realloc(md->A, sizeof *a * (size_t)md->n);
  if (a) md->A = a;
}

void mbs_modesDestroy(mbsModes **md) {
  if (!md || !*md) return;
  mbsModes *d = *md;
  free(d->M), free(d->K), free(d->A), free(d->B), free(d->V), free(d->r), free(d->qdd);
  free(d->lambda), free(d->zero), free(d->col), free(d->work);
  mbs_stateDestroy(&d->sp);
  free(d);
  *md = NULL;
}

// r = C(q, 0) − τ(q, 0) at the configuration of state sp (velocities zero): RNEA with zero
// acceleration (gravity, spring-dampers as external wrenches) minus the applied joint forces
static void mbs_modesResidual(const mbsModel *m, const mbsState *sp, mbsWork *w, mbsReal *r) {
  mbs_fwdPosition(m, sp, w);
  mbs_fwdVelocity(m, sp, w);
  if (m->nforce)
    mbs_fwdForces(m, w);
  else
    w->fext_on = 0;
  mbs_rnea(m, w, NULL);
  for (int i = 0; i < m->nv; i++) r[i] = w->qfrc_inv[i] - w->qfrc[i];
}

// max |X_ij| and max |X_ij − X_ji|, then X = (X + X^T) / 2
static void mbs_modesSymmetrise(int n, mbsReal *X, mbsReal *xmax, mbsReal *xasym) {
  mbsReal mx = 0, as = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      mbsReal a = X[(size_t)i * n + j], b = X[(size_t)j * n + i];
      if (fabs(a) > mx) mx = fabs(a);
      if (fabs(a - b) > as) as = fabs(a - b);
    }
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) {
      mbsReal s = 0.5 * (X[(size_t)i * n + j] + X[(size_t)j * n + i]);
      X[(size_t)i * n + j] = X[(size_t)j * n + i] = s;
    }
  *xmax = mx;
  *xasym = mx > 0 ? as / mx : 0;
}

void mbs_colRange(const mbsColSplit *cs, int n, int *j0, int *j1) {
  if (!cs || cs->parts <= 1) {
    *j0 = 0, *j1 = n;
    return;
  }
  int q = n / cs->parts, r = n % cs->parts, p = cs->part;
  *j0 = p * q + (p < r ? p : r);
  *j1 = *j0 + q + (p < r);
}

mbsErr mbs_modesLinearise(const mbsModel *m, const mbsState *s, mbsWork *w, mbsModes *md) {
  return mbs_modesLinearisePart(m, s, w, md, NULL);
}

mbsErr mbs_modesLinearisePart(const mbsModel *m, const mbsState *s, mbsWork *w, mbsModes *md,
                              const mbsColSplit *cs) {
  const int n = md->n;
  int j0, j1;
  mbs_colRange(cs, n, &j0, &j1);
  const size_t nq = (size_t)m->nq;
  mbsState *sp = md->sp;
  sp->time = s->time;
  memcpy(sp->q, s->q, nq * sizeof *sp->q);
  memset(sp->qd, 0, (size_t)n * sizeof *sp->qd);
  memcpy(sp->tau, s->tau, (size_t)n * sizeof *sp->tau);
  int fext_on = w->fext_on;

  // residual at q*
  mbs_modesResidual(m, sp, w, md->r);

  // M column by column: RNEA(q, 0, e_j) with gravity and external wrenches off is M e_j (a view
  // of the model without gravity: the model itself is not written). Column j is stored in row j
  // (M and K transposed: this part's columns are contiguous for the gather); the symmetrisation
  // below gives the same bits for a matrix and its transpose.
  mbsModel view = *m;
  view.gravity[0] = view.gravity[1] = view.gravity[2] = 0;
  w->fext_on = 0;
  mbsReal *e = md->col;
  memset(e, 0, (size_t)n * sizeof *e);
  for (int j = j0; j < j1; j++) {
    e[j] = 1;
    mbs_rnea(&view, w, e);
    e[j] = 0;
    for (int i = 0; i < n; i++) md->M[(size_t)j * n + i] = w->qfrc_inv[i];
  }

  // K column by column: (r(q ⊕ h e_j) − r(q ⊖ h e_j)) / 2h; the perturbed state's velocities
  // stay zero, its q is rebuilt from q* each time (no drift)
  mbsReal *rp = md->A, *rm = md->B; // scratch rows (A and B are free until mbs_modesSolve)
  const mbsReal h = md->h;
  for (int j = j0; j < j1; j++) {
    e[j] = 1;
    mbs_integratePos(m, s->q, e, h, sp->q);
    mbs_modesResidual(m, sp, w, rp);
    mbs_integratePos(m, s->q, e, -h, sp->q);
    mbs_modesResidual(m, sp, w, rm);
    e[j] = 0;
    for (int i = 0; i < n; i++) md->K[(size_t)j * n + i] = (rp[i] - rm[i]) / (2 * h);
  }
  memcpy(sp->q, s->q, nq * sizeof *sp->q);
  w->fext_on = fext_on;
  if (cs) { // every part's columns to every part
    MBS_CALL(cs->gather(cs->ctx, MBS_OK, md->M, n, n));
    MBS_CALL(cs->gather(cs->ctx, MBS_OK, md->K, n, n));
  }
  mbsReal mmax;
  mbs_modesSymmetrise(n, md->M, &mmax, &md->m_asym);
  mbs_modesSymmetrise(n, md->K, &md->k_max, &md->k_asym);

  // accelerations of the model at rest at q*: M qdd = −r (Cholesky of a copy of M)
  mbsReal *L = md->B;
  memcpy(L, md->M, (size_t)n * n * sizeof *L);
  for (int j = 0; j < n; j++) {
    mbsReal d = L[(size_t)j * n + j];
    for (int k = 0; k < j; k++) d -= L[(size_t)j * n + k] * L[(size_t)j * n + k];
    if (!(d > 0)) {
      return mbs_errSet(MBS_ERR_NUMERIC,
                        "modes: the joint-space inertia is not positive definite (dof %d): "
                        "massless bodies or joints without inertia behind them",
                        j);
    }
    d = sqrt(d);
    L[(size_t)j * n + j] = d;
    for (int i = j + 1; i < n; i++) {
      mbsReal t = L[(size_t)i * n + j];
      for (int k = 0; k < j; k++) t -= L[(size_t)i * n + k] * L[(size_t)j * n + k];
      L[(size_t)i * n + j] = t / d;
    }
  }
  for (int i = 0; i < n; i++) { // L y = −r
    mbsReal t = -md->r[i];
    for (int k = 0; k < i; k++) t -= L[(size_t)i * n + k] * md->qdd[k];
    md->qdd[i] = t / L[(size_t)i * n + i];
  }
  for (int i = n - 1; i >= 0; i--) { // L^T qdd = y
    mbsReal t = md->qdd[i];
    for (int k = i + 1; k < n; k++) t -= L[(size_t)k * n + i] * md->qdd[k];
    md->qdd[i] = t / L[(size_t)i * n + i];
  }
  md->r_max = md->qdd_max = 0;
  for (int i = 0; i < n; i++) {
    if (fabs(md->r[i]) > md->r_max) md->r_max = fabs(md->r[i]);
    if (fabs(md->qdd[i]) > md->qdd_max) md->qdd_max = fabs(md->qdd[i]);
  }
  return MBS_OK;
}

mbsReal mbs_modesOmega(mbsReal lambda) {
  return lambda >= 0 ? sqrt(lambda) : -sqrt(-lambda);
}

mbsErr mbs_modesSolve(mbsModes *md) {
  const int n = md->n, itype = 1;
  int info = 0;
  for (size_t i = 0; i < (size_t)n * n; i++)
    if (!isfinite(md->K[i]) || !isfinite(md->M[i]))
      return mbs_errSet(MBS_ERR_NUMERIC,
                        "modes: the linearised system is not finite (%s, row %d, column %d)",
                        isfinite(md->M[i]) ? "K" : "M", (int)(i / (size_t)n), (int)(i % (size_t)n));
  memcpy(md->A, md->K, (size_t)n * n * sizeof *md->A);
  memcpy(md->B, md->M, (size_t)n * n * sizeof *md->B);
  dsygv_(&itype, "V", "U", &n, md->A, &n, md->B, &n, md->lambda, md->work, &md->lwork, &info, 1, 1);
  if (info > n)
    return mbs_errSet(MBS_ERR_NUMERIC,
                      "modes: the joint-space inertia is not positive definite (LAPACK dsygv, "
                      "leading minor %d): massless bodies or joints without inertia behind them",
                      info - n);
  if (info != 0) return mbs_errSet(MBS_ERR_NUMERIC, "modes: LAPACK dsygv failed (info = %d)", info);
  // A (column-major) holds the M-orthonormal eigenvectors: mode k is A[k n .. k n + n)
  mbsReal lmax = 0;
  for (int k = 0; k < n; k++)
    if (fabs(md->lambda[k]) > lmax) lmax = fabs(md->lambda[k]);
  for (int k = 0; k < n; k++) {
    const mbsReal *v = md->A + (size_t)k * n;
    int imax = 0;
    for (int i = 1; i < n; i++)
      if (fabs(v[i]) > fabs(v[imax]) * (1 + 1e-12)) imax = i;
    mbsReal sc = v[imax] != 0 ? 1 / v[imax] : 1;
    for (int i = 0; i < n; i++) md->V[(size_t)i * n + k] = v[i] * sc + 0.0; // + 0: no -0
    mbsReal a = fabs(md->lambda[k]);
    md->zero[k] = a <= 1e-8 * lmax || a <= 1e-12;
  }
  return MBS_OK;
}
