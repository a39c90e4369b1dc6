/// \file flex_chain.c
/// Issue 34 benchmark (reports only, never asserts): time per evaluation of the accelerations
/// of a chain of n flexible links (revolute joints, each link a 4-element beam with m = 4
/// fixed-interface modes, the next link on its undeformed tip, as configs/flex_chain.cfg) by the
/// recursive algorithm (mbs_flexAbaAccel, src/flex_aba.c) for n = 256 .. NMAX and by the dense
/// oracle (mbs_flexOracleAccel: assembly + Cholesky) for n up to ORACLE_MAX, with the exponents
/// fitted by least squares on log t against log n. A moving state (every q, qd, eta, etad set).
///   cmake --build build --target flex_chain && build/bench/flex_chain [NMAX [ORACLE_MAX]]
/// (defaults 4096 and 256). Prints a Markdown table.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_flex.h"
#include "mbspar/mbs_model.h"
#include "mbspar/mbs_timer.h"
#include "flex_chain_text.h"

// seconds per evaluation (best of 3 batches of at least ~0.2 s or 1 evaluation)
static double timeit(int which, void *obj, const double *q, const double *y, const double *eta,
                     double *ydd) {
  double best = 1e30;
  for (int batch = 0; batch < 3; batch++) {
    int reps = 0;
    double t0 = mbs_wtime(), t;
    do {
      mbsErr e =
          which ? mbs_flexOracleAccel(obj, q, y, eta, ydd) : mbs_flexAbaAccel(obj, q, y, eta, ydd);
      if (e) return -1;
      reps++;
      t = mbs_wtime() - t0;
    } while (t < 0.2);
    if (t / reps < best) best = t / reps;
    if (t > 2) break;
  }
  return best;
}

static double slope(const double *x, const double *y, int n) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int i = 0; i < n; i++) {
    double a = log(x[i]), b = log(y[i]);
    sx += a, sy += b, sxx += a * a, sxy += a * b;
  }
  return n > 1 ? (n * sxy - sx * sy) / (n * sxx - sx * sx) : NAN;
}

int main(int argc, char **argv) {
  int nmax = argc > 1 ? atoi(argv[1]) : 4096, omax = argc > 2 ? atoi(argv[2]) : 256;
  double na[32] = {0}, ta[32] = {0}, no[32] = {0}, to[32] = {0}, dev = 0;
  int ka = 0, ko = 0;
  printf("| links n | coordinates N | recursive (s/eval) | dense oracle (s/eval) | max \\|diff\\| "
         "/ max \\|ydd\\| | backward error recursive / oracle |\n");
  printf("|---|---|---|---|---|---|\n");
  for (int n = 32; n <= nmax; n *= 2) {
    char *t = chainText(n);
    mbsConfig *cfg = NULL;
    mbsModel *m = NULL;
    if (!t || mbs_configParse(t, "chain.cfg", NULL, 0, &cfg) || mbs_configBuildModel(cfg, &m)) {
      fprintf(stderr, "n = %d: %s\n", n, mbs_errMsg());
      return 1;
    }
    free(t);
    mbs_configDestroy(&cfg);
    mbsFlexAba *a = NULL;
    if (mbs_flexAbaCreate(m, &a)) return fprintf(stderr, "%s\n", mbs_errMsg()), 1;
    int N = mbs_flexAbaSize(a);
    double *q = calloc((size_t)m->nq + 1, sizeof(double)), *y = calloc((size_t)N, sizeof(double));
    double *eta = calloc((size_t)N, sizeof(double)), *ya = calloc((size_t)N, sizeof(double));
    double *yo = calloc((size_t)N, sizeof(double));
    for (int i = 0; i < m->nq; i++) q[i] = 0.3 * sin(0.7 * i);
    for (int i = 0; i < N; i++) y[i] = 0.5 * cos(1.3 * i), eta[i] = 1e-4 * sin(2.1 * i);
    double tA = timeit(0, a, q, y, eta, ya), tO = -1, d = NAN, bA = NAN, bO = NAN;
    if (n >= 256 || n == nmax) na[ka] = n, ta[ka++] = tA;
    if (n <= omax) {
      mbsFlexOracle *o = NULL;
      if (!mbs_flexOracleCreate(m, &o)) {
        tO = timeit(1, o, q, y, eta, yo);
        double sc = 0, df = 0;
        for (int i = 0; i < N; i++) sc = fmax(sc, fabs(yo[i])), df = fmax(df, fabs(yo[i] - ya[i]));
        d = df / sc, dev = fmax(dev, d);
        // backward errors in the oracle's own system: |M ydd - f| / (|M| |ydd| + |f|)
        double *M, *f, ra = 0, ro = 0, Mm = 0, ym = 0, fm = 0;
        if (!mbs_flexOracleSystem(o, q, y, eta, &M, &f)) {
          for (int i = 0; i < N; i++) {
            double r1 = -f[i], r2 = -f[i];
            for (int j = 0; j < N; j++) {
              double Mij = M[(size_t)i * N + j];
              r1 += Mij * ya[j], r2 += Mij * yo[j], Mm = fmax(Mm, fabs(Mij));
            }
            ra = fmax(ra, fabs(r1)), ro = fmax(ro, fabs(r2));
            ym = fmax(ym, fabs(yo[i])), fm = fmax(fm, fabs(f[i]));
          }
          bA = ra / (Mm * ym + fm), bO = ro / (Mm * ym + fm);
        }
        no[ko] = n, to[ko++] = tO;
      }
      mbs_flexOracleDestroy(&o);
    }
    if (tO < 0)
      printf("| %d | %d | %.3e | — | — | — |\n", n, N, tA);
    else
      printf("| %d | %d | %.3e | %.3e | %.1e | %.1e / %.1e |\n", n, N, tA, tO, d, bA, bO);
    fflush(stdout);
    free(q), free(y), free(eta), free(ya), free(yo);
    mbs_flexAbaDestroy(&a);
    mbs_modelDestroy(&m);
  }
  printf("\nfitted exponent (t ~ n^p): recursive p = %.2f over n = %g..%g; dense oracle p = %.2f "
         "over n = %g..%g\n",
         slope(na, ta, ka), ka ? na[0] : 0, ka ? na[ka - 1] : 0, slope(no, to, ko), ko ? no[0] : 0,
         ko ? no[ko - 1] : 0);
  printf("largest relative difference recursive - oracle: %.1e\n", dev);
  return 0;
}
