/// \file test_abm.c
/// The Adams–Bashforth–Moulton PECE core (mbs_abm.h, docs/integrator_abm.md; issue 36) on
/// problems with closed forms:
/// - the harmonic oscillator y'' = -y over 10 periods: the error at the end proportional to the
///   tolerance (within a factor 20 over TOL = 1e-5 .. 1e-10), orders of 8 or more used at the
///   tight tolerances, and fewer evaluations than dp5 would need (dp5: 6 per step; compared with
///   the step count of a fixed-order reference: below 3 evaluations per step here);
/// - Kepler's orbit with eccentricity 0.6 over 3 periods (steps shrinking and growing by a factor
///   of 16 along the orbit): position error against the closed form (Kepler's equation), energy
///   and angular momentum kept to the tolerance's order;
/// - landing exactly on the output times, a restart, and the refusals.
#include "mbs_test.h"
#include "mbspar/mbs_abm.h"

static const double PI = 3.14159265358979323846;
static long nf;

static int osc(void *ctx, double t, const double *y, double *f) {
  (void)ctx, (void)t;
  nf++;
  f[0] = y[1], f[1] = -y[0];
  return 0;
}

static int kepler(void *ctx, double t, const double *y, double *f) {
  (void)ctx, (void)t;
  nf++;
  double r = sqrt(y[0] * y[0] + y[1] * y[1]), r3 = r * r * r;
  f[0] = y[2], f[1] = y[3], f[2] = -y[0] / r3, f[3] = -y[1] / r3;
  return 0;
}

// a reduction as of two ranks holding identical halves: every sum doubled (the norms, means over
// the doubled count, are unchanged); counts its calls
static long nreduce;
static int twice(void *ctx, double *v, int n) {
  (void)ctx;
  nreduce++;
  for (int i = 0; i < n; i++) v[i] *= 2;
  return 0;
}

static int fail_at(void *ctx, double t, const double *y, double *f) {
  (void)ctx, (void)y;
  f[0] = 1;
  return t > 0.5 ? 7 : 0;
}

int main(void) {
  // harmonic oscillator: error proportional to TOL
  double tols[] = {1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10}, errs[6];
  printf("harmonic oscillator, 10 periods:\n  TOL      error     steps  rejected  evaluations  "
         "max order  evals/step\n");
  for (int it = 0; it < 6; it++) {
    mbsAbm *a = NULL;
    MBS_EXPECT_OK(mbs_abmCreate(2, tols[it], MBS_ABM_KMAX, &a));
    if (!a) break;
    double y0[2] = {1, 0}, T = 20 * PI;
    nf = 0;
    MBS_EXPECT_OK(mbs_abmStart(a, 0, y0, 0, osc, NULL));
    int guard = 0;
    while (a->t < T && guard++ < 1000000) MBS_EXPECT_OK(mbs_abmStep(a, T, osc, NULL));
    MBS_EXPECT(a->t == T, "did not land on T (t = %.17g)", a->t);
    errs[it] = fmax(fabs(a->y[0] - cos(T)), fabs(a->y[1] + sin(T)));
    int kmax = 0;
    for (int k = 1; k <= MBS_ABM_KMAX; k++)
      if (a->order_used[k]) kmax = k;
    printf("  %.0e  %.2e  %5ld  %8ld  %11ld  %9d  %.2f\n", tols[it], errs[it], a->steps,
           a->rejected, a->evaluations, kmax, (double)a->evaluations / a->steps);
    MBS_EXPECT(nf == a->evaluations, "evaluation count %ld against %ld calls", a->evaluations, nf);
    MBS_EXPECT((double)a->evaluations / a->steps < 3, "%.2f evaluations per step",
               (double)a->evaluations / a->steps);
    if (tols[it] <= 1e-8) MBS_EXPECT(kmax >= 8, "TOL %g: highest order used %d", tols[it], kmax);
    mbs_abmDestroy(&a);
  }
  for (int it = 1; it < 6; it++) { // tolerance proportionality: error / TOL within a factor 20
    double r0 = errs[0] / tols[0], r = errs[it] / tols[it];
    MBS_EXPECT(r < 20 * r0 && r > r0 / 20, "TOL %g: error/TOL %.3g against %.3g at 1e-5", tols[it],
               r, r0);
  }
  // Kepler, e = 0.6: positions against Kepler's equation
  {
    const double e = 0.6, T = 3 * 2 * PI; // a = 1, mu = 1: period 2 pi
    double y0[4] = {1 - e, 0, 0, sqrt((1 + e) / (1 - e))};
    for (int it = 0; it < 2; it++) {
      double tol = it ? 1e-10 : 1e-7;
      mbsAbm *a = NULL;
      MBS_EXPECT_OK(mbs_abmCreate(4, tol, MBS_ABM_KMAX, &a));
      if (!a) break;
      MBS_EXPECT_OK(mbs_abmStart(a, 0, y0, 0, kepler, NULL));
      double worst = 0, hmin = 1e300, hmax = 0;
      for (int out = 1; out <= 60; out++) { // 60 output times, landed on exactly
        double tout = T * out / 60;
        while (a->t < tout) {
          double t0 = a->t;
          MBS_EXPECT_OK(mbs_abmStep(a, tout, kepler, NULL));
          if (a->t < tout) hmin = fmin(hmin, a->t - t0), hmax = fmax(hmax, a->t - t0);
        }
        double M = fmod(tout, 2 * PI), En = M; // Kepler's equation E - e sin E = M (Newton)
        for (int k = 0; k < 50; k++) En -= (En - e * sin(En) - M) / (1 - e * cos(En));
        double x = cos(En) - e, yy = sqrt(1 - e * e) * sin(En);
        worst = fmax(worst, hypot(a->y[0] - x, a->y[1] - yy));
      }
      double r = hypot(a->y[0], a->y[1]);
      double energy = 0.5 * (a->y[2] * a->y[2] + a->y[3] * a->y[3]) - 1 / r;
      double mom = a->y[0] * a->y[3] - a->y[1] * a->y[2];
      printf("Kepler e = 0.6, 3 periods, TOL %.0e: position error %.2e, energy %.2e, angular "
             "momentum %.2e; %ld steps (h %.2e .. %.2e), %ld evaluations\n",
             tol, worst, fabs(energy + 0.5), fabs(mom - sqrt(1 - e * e)), a->steps, hmin, hmax,
             a->evaluations);
      MBS_EXPECT(worst < 1e4 * tol, "Kepler TOL %g: position error %.3g", tol, worst);
      MBS_EXPECT(hmax > 8 * hmin, "the step did not follow the orbit (%.3g .. %.3g)", hmin, hmax);
      mbs_abmDestroy(&a);
    }
  }
  // the reduction over ranks: one per attempted step (and one at the start), the same
  // trajectory bitwise when the ranks' sums are copies of this one's
  {
    mbsAbm *a = NULL, *b = NULL;
    MBS_EXPECT_OK(mbs_abmCreate(2, 1e-8, MBS_ABM_KMAX, &a));
    MBS_EXPECT_OK(mbs_abmCreate(2, 1e-8, MBS_ABM_KMAX, &b));
    if (a && b) {
      double y0[2] = {1, 0};
      mbs_abmSetReduce(b, twice, NULL);
      nreduce = 0;
      MBS_EXPECT_OK(mbs_abmStart(a, 0, y0, 0, osc, NULL));
      MBS_EXPECT_OK(mbs_abmStart(b, 0, y0, 0, osc, NULL));
      while (a->t < 10) MBS_EXPECT_OK(mbs_abmStep(a, 10, osc, NULL));
      while (b->t < 10) MBS_EXPECT_OK(mbs_abmStep(b, 10, osc, NULL));
      MBS_EXPECT(a->y[0] == b->y[0] && a->y[1] == b->y[1] && a->steps == b->steps,
                 "with a reduction: another trajectory");
      MBS_EXPECT(nreduce == 1 + b->steps + b->rejected, "%ld reductions for %ld + %ld attempts",
                 nreduce, b->steps, b->rejected);
    }
    mbs_abmDestroy(&a), mbs_abmDestroy(&b);
  }
  // a right side that fails: its code comes back; a restart counts
  {
    mbsAbm *a = NULL;
    MBS_EXPECT_OK(mbs_abmCreate(1, 1e-6, 5, &a));
    double y0 = 0;
    if (a) {
      MBS_EXPECT_OK(mbs_abmStart(a, 0, &y0, 0.01, fail_at, NULL));
      int rc = 0, guard = 0;
      while (!rc && guard++ < 10000) rc = mbs_abmStep(a, 1.0, fail_at, NULL);
      MBS_EXPECT(rc == 7, "the right side's code 7 came back as %d", rc);
      MBS_EXPECT_OK(mbs_abmStart(a, 0, &y0, 0, fail_at, NULL));
      MBS_EXPECT(a->restarts == 1 && a->k == 1 && a->nd == 1, "restart: %ld, k %d, nd %d",
                 a->restarts, a->k, a->nd);
      mbs_abmDestroy(&a);
    }
    mbsAbm *b = NULL;
    MBS_EXPECT(mbs_abmCreate(0, 1e-6, 5, &b) == MBS_ERR_INPUT, "0 components accepted");
    MBS_EXPECT(mbs_abmCreate(2, -1, 5, &b) == MBS_ERR_INPUT, "a negative tolerance accepted");
    MBS_EXPECT(mbs_abmCreate(2, 1e-6, 13, &b) == MBS_ERR_INPUT, "order 13 accepted");
  }
  // the saved state (checkpoints): a save/load round trip continues bitwise; values no writer
  // produces are refused; mbs_abmSetY keeps the history for a small change, not for a large one
  {
    mbsAbm *a = NULL, *b = NULL;
    MBS_EXPECT_OK(mbs_abmCreate(2, 1e-9, MBS_ABM_KMAX, &a));
    MBS_EXPECT_OK(mbs_abmCreate(2, 1e-9, MBS_ABM_KMAX, &b));
    if (a && b) {
      double y0[2] = {1, 0}, s[MBS_ABM_NSCALAR];
      MBS_EXPECT_OK(mbs_abmStart(a, 0, y0, 0, osc, NULL));
      while (a->t < 3) MBS_EXPECT_OK(mbs_abmStep(a, 10, osc, NULL));
      mbs_abmSave(a, s);
      MBS_EXPECT(!mbs_abmSavedInvalid(s, MBS_ABM_KMAX), "a saved state is refused: %s",
                 mbs_abmSavedInvalid(s, MBS_ABM_KMAX));
      MBS_EXPECT_OK(mbs_abmLoad(b, s));
      memcpy(b->y, a->y, sizeof y0), memcpy(b->f, a->f, sizeof y0);
      memcpy(b->phi, a->phi, (size_t)(MBS_ABM_KMAX + 2) * 2 * sizeof(double));
      while (a->t < 10) MBS_EXPECT_OK(mbs_abmStep(a, 10, osc, NULL));
      while (b->t < 10) MBS_EXPECT_OK(mbs_abmStep(b, 10, osc, NULL));
      MBS_EXPECT(a->y[0] == b->y[0] && a->y[1] == b->y[1] && a->steps == b->steps,
                 "save/load: the continuation differs");
      double bad[MBS_ABM_NSCALAR];
      const int idx[] = {1, 2, MBS_ABM_SAVED_H, 7};
      const double val[] = {13, 15, -1, 0.5};
      for (int c = 0; c < 4; c++) {
        memcpy(bad, s, sizeof s);
        bad[idx[c]] = val[c];
        MBS_EXPECT(mbs_abmSavedInvalid(bad, MBS_ABM_KMAX) != NULL, "scalar %d = %g accepted",
                   idx[c], val[c]);
      }
      MBS_EXPECT(mbs_abmSavedInvalid(s, 5) != NULL, "another highest order accepted");
      long r0 = a->restarts;
      double y1[2] = {a->y[0] + 1e-12, a->y[1]};
      MBS_EXPECT_OK(mbs_abmSetY(a, y1));
      MBS_EXPECT(a->nd > 0, "a change of 1e-12 at tol 1e-9 dropped the history");
      y1[0] += 1e-3;
      MBS_EXPECT_OK(mbs_abmSetY(a, y1));
      MBS_EXPECT(a->nd == 0, "a change of 1e-3 at tol 1e-9 kept the history");
      MBS_EXPECT_OK(mbs_abmStep(a, 20, osc, NULL));
      MBS_EXPECT(a->restarts == r0 + 1 && a->y[0] != y1[0], "no restart from the new state");
    }
    mbs_abmDestroy(&a), mbs_abmDestroy(&b);
  }
  return mbs_test_finish("test_abm");
}
