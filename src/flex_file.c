/// \file flex_file.c
/// Modal files (issue 34 item 1; docs/flexible.md 14): the reader hook the parallel layer fills
/// (HDF5 lives there) and the value checks of a file's contents, line or lumped form (a lumped
/// body's points: mbs_ffLumped, and the consistency below over either's points). The dynamics take
/// a file body's mass from its elements (mass per length and polar inertia per length, the shapes
/// interpolated as the beam's: flex_oracle.c mbs_foPoints), so a file's modal mass, Sbar, mass and
/// rigid properties are checked against that distribution here: the file cannot say one mass and
/// simulate another.

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_flex.h"
#include "mbspar/mbs_model.h"
#include "flex_private.h"

static mbsFlexFileReader mbs_flex_reader;

void mbs_flexFileSetReader(mbsFlexFileReader r) {
  mbs_flex_reader = r;
}

mbsFlexFileReader mbs_flexFileGetReader(void) {
  return mbs_flex_reader;
}

void mbs_flexFileFree(mbsFlexFileData *d) {
  if (d) mbs_flexModalFree(&d->modal);
}

// the first non-finite entry of a (n), or -1
static long mbs_ffNonFinite(const mbsReal *a, long n) {
  for (long i = 0; i < n; i++)
    if (!isfinite(a[i])) return i;
  return -1;
}

static mbsReal mbs_ffMaxAbs(const mbsReal *a, long n) {
  mbsReal r = 0;
  for (long i = 0; i < n; i++) r = fmax(r, fabs(a[i]));
  return r;
}

// the largest |A_ij - A_ji| of the m x m A, and where
static mbsReal mbs_ffAsym(int m, const mbsReal *A, int *pi, int *pj) {
  mbsReal r = 0;
  *pi = *pj = 0;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < i; j++) {
      mbsReal d = fabs(A[(size_t)i * m + j] - A[(size_t)j * m + i]);
      if (d > r) r = d, *pi = i, *pj = j;
    }
  return r;
}

#define MBS_FF_FAIL(...) return mbs_errSet(MBS_ERR_INPUT, __VA_ARGS__)

// a dataset of the file as read: its path in the file, its values, their count
typedef struct {
  const char *name;
  const mbsReal *a;
  long n;
} mbsFfArr;

// every entry of every dataset finite
static mbsErr mbs_ffFinite(const char *path, const mbsFfArr *arr, size_t narr) {
  for (size_t k = 0; k < narr; k++) {
    long i = mbs_ffNonFinite(arr[k].a, arr[k].n);
    if (i >= 0)
      MBS_FF_FAIL("%s: %s: entry %ld is not finite (%g)", path, arr[k].name, i, arr[k].a[i]);
  }
  return MBS_OK;
}

// the fixed-interface frequencies >= 0
static mbsErr mbs_ffOmega(const char *path, const mbsFlexModal *md) {
  for (int k = 0; k < md->nmodes; k++)
    if (!(md->omega_fixed[k] >= 0))
      MBS_FF_FAIL("%s: /omega_fixed: entry %d is negative (%g)", path, k, md->omega_fixed[k]);
  return MBS_OK;
}

// the lumped form (docs/flexible.md 14): finite entries, masses >= 0 (some > 0), rotary
// inertias symmetric positive semidefinite, the nodes among the points
static mbsErr mbs_ffLumped(const char *path, const mbsFlexFileData *d) {
  const mbsFlexModal *md = &d->modal;
  int m = md->m, n = md->nfe;
  const mbsFfArr arr[] = {{"/M", md->M, (long)m * m},
                          {"/K", md->K, (long)m * m},
                          {"/Phi", md->Phi, 6L * n * m},
                          {"/points/pos", md->pos, 3L * n},
                          {"/points/mass", md->pmass, n},
                          {"/points/inertia", md->pJ, md->pJ ? 6L * n : 0},
                          {"/omega_fixed", md->omega_fixed, md->nmodes},
                          {"/Sbar", md->Sbar, 3L * m},
                          {"/mass", &md->mass, 1},
                          {"/rigid/mass", &d->mass, 1},
                          {"/rigid/com", d->com, 3},
                          {"/rigid/inertia", d->inertia, 6}};
  MBS_CALL(mbs_ffFinite(path, arr, sizeof arr / sizeof arr[0]));
  if (n < 1) MBS_FF_FAIL("%s: /points/pos: at least one point", path);
  mbsReal tot = 0;
  for (int i = 0; i < n; i++) {
    if (!(md->pmass[i] >= 0))
      MBS_FF_FAIL("%s: /points/mass: point %d has a negative mass (%g)", path, i, md->pmass[i]);
    tot += md->pmass[i];
  }
  if (!(tot > 0)) MBS_FF_FAIL("%s: /points/mass: the points weigh nothing", path);
  for (int i = 0; md->pJ && i < n; i++) {
    const mbsReal *J = md->pJ + 6 * i;
    mbsReal A[9] = {J[0], J[3], J[4], J[3], J[1], J[5], J[4], J[5], J[2]};
    mbsReal B[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, lam[3];
    if (mbs_symGenEig(3, A, B, lam, NULL) == -2)
      return mbs_errSet(MBS_ERR_NOMEM, "out of memory (modal file)");
    if (lam[0] < -1e-12 * fmax(fabs(lam[2]), 1e-300))
      MBS_FF_FAIL("%s: /points/inertia: point %d: not positive semidefinite (eigenvalue %g)", path,
                  i, lam[0]);
  }
  MBS_CALL(mbs_ffOmega(path, md));
  for (int k = 0; k < d->nnodes; k++) {
    if (!d->node_name[k][0]) MBS_FF_FAIL("%s: /node_names: name %d is empty", path, k);
    const char *why = mbs_nameProblem(d->node_name[k]);
    if (why) MBS_FF_FAIL("%s: /node_names: name %d: %s", path, k, why);
    int p = d->node_fe[k];
    if (p < 0 || p >= n)
      MBS_FF_FAIL("%s: /node_fe: node \"%s\" at point %d, not among the points (0 .. %d)", path,
                  d->node_name[k], p, n - 1);
    const mbsReal *q = md->pos + 3 * p;
    for (int j = 0; j < k; j++) {
      if (!strcmp(d->node_name[j], d->node_name[k]))
        MBS_FF_FAIL("%s: /node_names: two nodes are named \"%s\"", path, d->node_name[k]);
      if (d->node_fe[j] == p)
        MBS_FF_FAIL("%s: /node_fe: nodes \"%s\" and \"%s\" are both at point %d", path,
                    d->node_name[j], d->node_name[k], p);
    }
    for (int j = 0; j < p; j++) // the kinematics find a node's point by its position
      if (md->pos[3 * j] == q[0] && md->pos[3 * j + 1] == q[1] && md->pos[3 * j + 2] == q[2])
        MBS_FF_FAIL("%s: /node_fe: node \"%s\": points %d and %d are both at [%g, %g, %g]", path,
                    d->node_name[k], j, p, q[0], q[1], q[2]);
  }
  return MBS_OK;
}

// finite entries, shapes of the mesh, the nodes
static mbsErr mbs_ffBasic(const char *path, const mbsFlexFileData *d) {
  const mbsFlexModal *md = &d->modal;
  int m = md->m, nfe = md->nfe;
  if (md->pos) return mbs_ffLumped(path, d);
  const mbsFfArr arr[] = {{"/M", md->M, (long)m * m},
                          {"/K", md->K, (long)m * m},
                          {"/Phi", md->Phi, 6L * nfe * m},
                          {"/x", md->x, nfe},
                          {"/omega_fixed", md->omega_fixed, md->nmodes},
                          {"/Sbar", md->Sbar, 3L * m},
                          {"/mass", &md->mass, 1},
                          {"/rhoA", md->rhoA, nfe - 1},
                          {"/rhoJ", md->rhoJ, nfe - 1},
                          {"/rigid/mass", &d->mass, 1},
                          {"/rigid/com", d->com, 3},
                          {"/rigid/inertia", d->inertia, 6}};
  MBS_CALL(mbs_ffFinite(path, arr, sizeof arr / sizeof arr[0]));
  if (nfe < 2) MBS_FF_FAIL("%s: /x: at least 2 FE nodes (one element), got %d", path, nfe);
  if (md->x[0] != 0)
    MBS_FF_FAIL("%s: /x: the first FE node is the root at x = 0 (the body frame), got %g", path,
                md->x[0]);
  for (int i = 1; i < nfe; i++)
    if (!(md->x[i] > md->x[i - 1]))
      MBS_FF_FAIL("%s: /x: the FE node positions must increase (x[%d] = %g after %g)", path, i,
                  md->x[i], md->x[i - 1]);
  for (int e = 0; e < nfe - 1; e++) {
    if (!(md->rhoA[e] > 0))
      MBS_FF_FAIL("%s: /rhoA: the mass per length must be > 0 (element %d: %g)", path, e,
                  md->rhoA[e]);
    if (!(md->rhoJ[e] >= 0))
      MBS_FF_FAIL("%s: /rhoJ: the polar inertia per length must be >= 0 (element %d: %g)", path, e,
                  md->rhoJ[e]);
  }
  MBS_CALL(mbs_ffOmega(path, md));
  mbsReal pmax = mbs_ffMaxAbs(md->Phi, 6L * nfe * m);
  for (int r = 0; r < 6; r++)
    for (int c = 0; c < m; c++)
      if (fabs(md->Phi[(size_t)r * m + c]) > 1e-12 * pmax)
        MBS_FF_FAIL("%s: /Phi: row %d, column %d is %g: the root (FE node 0, rows 0-5) must not "
                    "move (the body frame is clamped there)",
                    path, r, c, md->Phi[(size_t)r * m + c]);
  for (int k = 0; k < d->nnodes; k++) {
    if (!d->node_name[k][0]) MBS_FF_FAIL("%s: /node_names: name %d is empty", path, k);
    const char *why = mbs_nameProblem(d->node_name[k]);
    if (why) MBS_FF_FAIL("%s: /node_names: name %d: %s", path, k, why);
    if (d->node_fe[k] < 1 || d->node_fe[k] >= nfe)
      MBS_FF_FAIL("%s: /node_fe: node \"%s\" at FE node %d (expected 1 .. %d: not the root)", path,
                  d->node_name[k], d->node_fe[k], nfe - 1);
    for (int j = 0; j < k; j++) {
      if (!strcmp(d->node_name[j], d->node_name[k]))
        MBS_FF_FAIL("%s: /node_names: two nodes are named \"%s\"", path, d->node_name[k]);
      if (d->node_fe[j] == d->node_fe[k])
        MBS_FF_FAIL("%s: /node_fe: nodes \"%s\" and \"%s\" are both at FE node %d", path,
                    d->node_name[j], d->node_name[k], d->node_fe[k]);
    }
  }
  return MBS_OK;
}

// M symmetric positive definite, K symmetric positive semidefinite
static mbsErr mbs_ffDefinite(const char *path, const mbsFlexModal *md) {
  int m = md->m, i, j;
  if (!m) return MBS_OK;
  mbsReal mm = mbs_ffMaxAbs(md->M, (long)m * m), km = mbs_ffMaxAbs(md->K, (long)m * m);
  mbsReal am = mbs_ffAsym(m, md->M, &i, &j);
  if (am > 1e-10 * mm)
    MBS_FF_FAIL("%s: /M: not symmetric (M[%d][%d] - M[%d][%d] = %g, largest entry %g)", path, i, j,
                j, i, md->M[(size_t)i * m + j] - md->M[(size_t)j * m + i], mm);
  mbsReal ak = mbs_ffAsym(m, md->K, &i, &j);
  if (ak > 1e-10 * km)
    MBS_FF_FAIL("%s: /K: not symmetric (K[%d][%d] - K[%d][%d] = %g, largest entry %g)", path, i, j,
                j, i, md->K[(size_t)i * m + j] - md->K[(size_t)j * m + i], km);
  size_t n2 = (size_t)m * m;
  mbsReal *A = malloc(sizeof(mbsReal) * n2), *B = malloc(sizeof(mbsReal) * n2);
  mbsReal *lam = malloc(sizeof(mbsReal) * (size_t)m);
  if (!A || !B || !lam) {
    free(A), free(B), free(lam);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (modal file of %d coordinates)", m);
  }
  memcpy(A, md->K, sizeof(mbsReal) * n2);
  memcpy(B, md->M, sizeof(mbsReal) * n2);
  int rc = mbs_symGenEig(m, A, B, lam, NULL);
  mbsReal lo = rc ? 0 : lam[0], hi = rc ? 0 : lam[m - 1];
  free(A), free(B), free(lam);
  if (rc == -2) return mbs_errSet(MBS_ERR_NOMEM, "out of memory (modal file of %d coordinates)", m);
  if (rc) MBS_FF_FAIL("%s: /M: not positive definite (its Cholesky factorisation fails)", path);
  if (lo < -1e-9 * fmax(hi, 0) || (lo < 0 && hi <= 0))
    MBS_FF_FAIL("%s: /K: not positive semidefinite (K w = omega^2 M w has omega^2 = %g < 0)", path,
                lo);
  return MBS_OK;
}

// M, Sbar, mass and the rigid properties against the elements' mass (the dynamics use that)
static mbsErr mbs_ffConsistent(const char *path, const mbsFlexFileData *d) {
  const mbsFlexModal *md = &d->modal;
  int m = md->m;
  mbsFlexBody fb;
  memset(&fb, 0, sizeof fb);
  fb.modal = *md; // shallow: read only
  mbsFoBody fo;
  memset(&fo, 0, sizeof fo);
  mbsErr e = mbs_foPoints(&fb, &fo);
  mbsReal *Mp = calloc((size_t)m * m + 1, sizeof(mbsReal)),
          *Sp = calloc(3 * (size_t)m + 1, sizeof(mbsReal));
  if (!e && (!Mp || !Sp)) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (modal file)");
  const char *src = md->pos ? "the points (/points)" : "the elements (/x, /rhoA)";
  mbsReal mass = 0, mx[3] = {0, 0, 0};
  for (int p = 0; !e && p < fo.np; p++) {
    const mbsReal *T = fo.phit + (size_t)3 * p * m;
    mass += fo.dm[p];
    for (int k = 0; k < 3; k++) mx[k] += fo.dm[p] * fo.x[3 * p + k];
    for (int i = 0; i < m; i++) {
      for (int k = 0; k < 3; k++) Sp[(size_t)k * m + i] += fo.dm[p] * T[(size_t)k * m + i];
      for (int j = 0; j < m; j++) {
        mbsReal t = 0;
        for (int k = 0; k < 3; k++) t += fo.dm[p] * T[(size_t)k * m + i] * T[(size_t)k * m + j];
        for (int a = 0; a < fo.nax; a++) {
          const mbsReal *X = fo.phix + (size_t)(fo.nax * p + a) * m;
          t += fo.jt[fo.nax * p + a] * X[i] * X[j];
        }
        Mp[(size_t)i * m + j] += t;
      }
    }
  }
  mbsReal c[3], iref[6] = {0, 0, 0, 0, 0, 0}, L = 0;
  for (int k = 0; k < 3; k++) c[k] = mass > 0 ? mx[k] / mass : 0;
  for (int p = 0; !e && p < fo.np; p++) {
    mbsReal r[3];
    for (int k = 0; k < 3; k++) r[k] = fo.x[3 * p + k] - c[k], L = fmax(L, fabs(fo.x[3 * p + k]));
    mbsReal dm = fo.dm[p];
    iref[0] += dm * (r[1] * r[1] + r[2] * r[2]), iref[1] += dm * (r[0] * r[0] + r[2] * r[2]);
    iref[2] += dm * (r[0] * r[0] + r[1] * r[1]), iref[3] -= dm * r[0] * r[1];
    iref[4] -= dm * r[0] * r[2], iref[5] -= dm * r[1] * r[2];
    for (int a = 0; a < fo.nax; a++) { // jt a a^T
      const mbsReal *ax = fo.ax + 3 * ((size_t)fo.nax * p + a);
      mbsReal jt = fo.jt[fo.nax * p + a];
      iref[0] += jt * ax[0] * ax[0], iref[1] += jt * ax[1] * ax[1], iref[2] += jt * ax[2] * ax[2];
      iref[3] += jt * ax[0] * ax[1], iref[4] += jt * ax[0] * ax[2], iref[5] += jt * ax[1] * ax[2];
    }
  }
  if (!e && fabs(md->mass - mass) > 1e-10 * mass)
    e = mbs_errSet(MBS_ERR_INPUT, "%s: /mass: %.17g kg, but %s weigh %.17g kg", path, md->mass, src,
                   mass);
  if (!e && fabs(d->mass - mass) > 1e-10 * mass)
    e = mbs_errSet(MBS_ERR_INPUT, "%s: /rigid/mass: %.17g kg, but %s weigh %.17g kg", path, d->mass,
                   src, mass);
  if (!e && (fabs(d->com[0] - c[0]) > 1e-9 * L || fabs(d->com[1] - c[1]) > 1e-9 * L ||
             fabs(d->com[2] - c[2]) > 1e-9 * L))
    e = mbs_errSet(MBS_ERR_INPUT,
                   "%s: /rigid/com: [%g, %g, %g], but the centre of mass of %s is [%.17g, %.17g, "
                   "%.17g]",
                   path, d->com[0], d->com[1], d->com[2], src, c[0], c[1], c[2]);
  mbsReal is = fmax(iref[0], fmax(iref[1], iref[2]));
  for (int k = 0; !e && k < 6; k++)
    if (fabs(d->inertia[k] - iref[k]) > 1e-9 * is)
      e = mbs_errSet(MBS_ERR_INPUT,
                     "%s: /rigid/inertia: entry %d is %.17g, but %s give %.17g "
                     "([Ixx Iyy Izz Ixy Ixz Iyz] about the centre of mass)",
                     path, k, d->inertia[k], src, iref[k]);
  mbsReal mm = mbs_ffMaxAbs(md->M, (long)m * m), dmax = 0;
  for (long i = 0; !e && i < (long)m * m; i++) dmax = fmax(dmax, fabs(Mp[i] - md->M[i]));
  if (!e && dmax > 1e-8 * mm)
    e = mbs_errSet(MBS_ERR_INPUT,
                   "%s: /M: differs from the mass of %s moved by /Phi by up to %g (largest entry "
                   "%g; the dynamics integrate that mass, docs/flexible.md 14)",
                   path, src, dmax, mm);
  mbsReal smax = 0, sscale = sqrt(mass * mm);
  for (long i = 0; !e && i < 3L * m; i++) smax = fmax(smax, fabs(Sp[i] - md->Sbar[i]));
  if (!e && smax > 1e-8 * sscale)
    e = mbs_errSet(MBS_ERR_INPUT,
                   "%s: /Sbar: differs from the sum over %s of mass times Phi_t by up to %g", path,
                   src, smax);
  free(Mp), free(Sp);
  mbs_foBodyFree(&fo);
  return e;
}

mbsErr mbs_flexFileCheck(const char *path, const mbsFlexFileData *d) {
  MBS_CALL(mbs_ffBasic(path, d));
  MBS_CALL(mbs_ffDefinite(path, &d->modal));
  return mbs_ffConsistent(path, d);
}
