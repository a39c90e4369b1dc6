/// \file finite.c
/// Non-finite results are errors (mbs_finite.h): find the first NaN/Inf of an array and name it
/// by its column (body and joint component) in one message line. No allocation, no
/// communication.
#include "mbspar/mbs_finite.h"
#include <math.h>
#include <stdio.h>
#include "mbspar/mbs_fault.h"
#include "mbspar/mbs_solver.h"

// the caller identifies the NaN fault point of a check (mbs_fault.h): one point per call site
#if defined(__GNUC__)
#define MBS_FIN_CALLER() __builtin_return_address(0)
#else
#define MBS_FIN_CALLER() ((const void *)mbs_fin_what)
#endif
#define MBS_FIN_INJECT() (mbs_faultActive() && mbs_faultHit(MBS_FAULT_NAN, MBS_FIN_CALLER(), NULL))

static const char *const mbs_fin_what[MBS_FIN_COUNT] = {"q", "qd", "qdd", "lambda", "tau"};
static const char *const mbs_fin_index[MBS_FIN_COUNT] = {"coordinate", "dof", "dof",
                                                         "constraint component", "dof"};
static const char *const mbs_fin_long[MBS_FIN_COUNT] = {
    "joint coordinate", "joint rate", "joint acceleration", "constraint force", "joint force"};

// the body whose entries of kind \p kind hold local index i (bodies in increasing order)
static int mbs_finiteBody(const mbsModel *m, mbsFiniteKind kind, int i, int *k) {
  const int *adr = kind == MBS_FIN_Q        ? m->body_qadr
                   : kind == MBS_FIN_LAMBDA ? m->body_lamadr
                                            : m->body_dofadr;
  const int *num = kind == MBS_FIN_Q        ? m->body_qnum
                   : kind == MBS_FIN_LAMBDA ? m->body_lamnum
                                            : m->body_dofnum;
  int lo = 0, hi = m->nbody - 1; // last body with adr <= i
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (adr[mid] <= i)
      lo = mid;
    else
      hi = mid - 1;
  }
  *k = i - adr[lo];
  return *k >= 0 && *k < num[lo] ? lo : -1;
}

// the check itself; \p inject: report v[i0] as NaN (an injected fault)
static mbsErr mbs_finiteArray(const mbsModel *m, mbsFiniteKind kind, const mbsReal *v, int i0,
                              int i1, const char *phase, int inject) {
  if (i1 <= i0) return MBS_OK;
  int bad = -1;
  for (int i = i0; i < i1 && bad < 0; i++)
    if (!isfinite(v[i])) bad = i;
  double val = bad >= 0 ? v[bad] : NAN;
  if (bad < 0 && inject) bad = i0; // injected: as if the first entry were NaN
  if (bad < 0) return MBS_OK;
  int k = 0, b = mbs_finiteBody(m, kind, bad, &k);
  const char *sval = isnan(val) ? "nan" : val > 0 ? "inf" : "-inf";
  if (b < 0)
    return mbs_errSet(MBS_ERR_NUMERIC, "mbspar: non-finite %s in %s: %s[%d] = %s",
                      mbs_fin_long[kind], phase, mbs_fin_what[kind], bad, sval);
  // global index of the entry and the column name of trajectory.csv / inverse.csv
  const int *gadr = kind == MBS_FIN_Q        ? m->body_gqadr
                    : kind == MBS_FIN_LAMBDA ? m->body_glamadr
                                             : m->body_gdofadr;
  int g = gadr ? gadr[b] + k : bad;
  char col[400];
  if (kind == MBS_FIN_LAMBDA)
    snprintf(col, sizeof col, "component %d of the joint of body \"%s\"", k, m->body_name[b]);
  else
    mbs_coordName(m, mbs_fin_what[kind], b, k, kind != MBS_FIN_Q, col, sizeof col);
  return mbs_errSet(
      MBS_ERR_NUMERIC,
      "mbspar: non-finite %s in %s: %s = %s (body \"%s\", %s %d of the model); the first "
      "non-finite value in model order",
      mbs_fin_long[kind], phase, col, sval, m->body_name[b], mbs_fin_index[kind], g);
}

mbsErr mbs_checkFinite(const mbsModel *m, mbsFiniteKind kind, const mbsReal *v, int i0, int i1,
                       const char *phase) {
  return mbs_finiteArray(m, kind, v, i0, i1, phase, i1 > i0 && MBS_FIN_INJECT());
}

mbsErr mbs_checkFiniteScalars(const double *v, const char *const *names, int n, const char *phase) {
  int bad = -1;
  for (int i = 0; i < n && bad < 0; i++)
    if (!isfinite(v[i])) bad = i;
  double val = bad >= 0 ? v[bad] : NAN;
  if (bad < 0 && n > 0 && MBS_FIN_INJECT()) bad = 0;
  if (bad < 0) return MBS_OK;
  return mbs_errSet(MBS_ERR_NUMERIC, "mbspar: non-finite %s in %s: %s", names[bad], phase,
                    isnan(val) ? "nan"
                    : val > 0  ? "inf"
                               : "-inf");
}

// an iterative solver met a NaN: name the first body of dofs [d0, d1) whose inputs to the
// constraint-force system (spatial velocity, velocity-product force v x* I v, applied joint
// forces) are non-finite, in model order; *b = -1 if they are all finite
static void mbs_finiteInput(const mbsModel *m, const mbsWork *w, int d0, int d1, int *b,
                            const char **what, double *val) {
  *b = -1;
  for (int d = d0; d < d1; d++) {
    int k = 0, bb = mbs_finiteBody(m, MBS_FIN_QDD, d, &k);
    if (bb < 0 || k != 0) continue; // each body once, at its first dof
    for (int i = 0; i < 6; i++) {
      if (w->cvel && !isfinite(w->cvel[6 * bb + i]))
        *what = "spatial velocity", *val = w->cvel[6 * bb + i];
      else if (w->cbias && !isfinite(w->cbias[6 * bb + i]))
        *what = "velocity-product force (v x* I v)", *val = w->cbias[6 * bb + i];
      else
        continue;
      *b = bb;
      return;
    }
    for (int j = 0; j < m->body_dofnum[bb] && w->qfrc; j++)
      if (!isfinite(w->qfrc[d + j])) {
        *what = "applied joint force", *val = w->qfrc[d + j], *b = bb;
        return;
      }
  }
}

mbsErr mbs_checkForward(const mbsModel *m, const mbsWork *w, int baseline, int d0, int d1, int l0,
                        int l1, const char *phase) {
  if (!baseline && w->stat.reason == MBS_REASON_DIVERGED_NAN) {
    int b = -1;
    const char *what = "";
    double val = NAN;
    mbs_finiteInput(m, w, d0, d1, &b, &what, &val);
    if (b >= 0)
      return mbs_errSet(MBS_ERR_NUMERIC,
                        "mbspar: non-finite constraint-force system in %s: %s met a NaN or Inf "
                        "after %d iterations (reason nan); the first non-finite input in model "
                        "order: the %s of body \"%s\" = %s",
                        phase, mbs_solverName(w->stat.method), w->stat.iterations, what,
                        m->body_name[b],
                        isnan(val) ? "nan"
                        : val > 0  ? "inf"
                                   : "-inf");
    return mbs_errSet(
        MBS_ERR_NUMERIC,
        "mbspar: non-finite constraint-force system in %s: %s met a NaN or Inf "
        "after %d iterations (reason nan), so its qdd and lambda are not the solution; "
        "the forces, velocities or parameters of the model are beyond double "
        "precision",
        phase, mbs_solverName(w->stat.method), w->stat.iterations);
  }
  int inject = (d1 > d0 || l1 > l0) && MBS_FIN_INJECT();
  MBS_CALL(mbs_finiteArray(m, MBS_FIN_QDD, w->qdd, d0, d1, phase, inject && d1 > d0));
  MBS_CALL(mbs_finiteArray(m, MBS_FIN_LAMBDA, w->lam, l0, l1, phase, inject && d1 <= d0));
  return MBS_OK;
}
