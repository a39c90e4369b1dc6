/// \file flex_chain_ranks.c
/// Issue 34 benchmark (reports only, never asserts): time per evaluation of the accelerations of
/// a chain of n flexible links (bench/flex_chain_text.h; m = 4) by the distributed elimination
/// over the job's ranks (mbsp_flexParAccel, parallel/flex_par.c + src/flex_part.c; every rank
/// calls it with the same state, so no state broadcast is timed), and at one rank by the serial
/// recursive algorithm (mbs_flexAbaAccel, src/flex_aba.c) it is checked against: the largest
/// difference of ydd relative to the largest |ydd|. Best of three batches of at least ~0.3 s.
///   mpiexec -n P build/bench/flex_chain_ranks [n]      (default 4096)
/// bench/flex_chain_ranks.sh runs it at 1 and 2 ranks and prints the table.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "flex_par.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_flex.h"
#include "mbspar/mbs_model.h"
#include "mbspar/mbs_timer.h"
#include "flex_chain_text.h"

int main(int argc, char **argv) {
  mbspComm *comm = NULL;
  if (mbsp_init(&argc, &argv, &comm)) return fprintf(stderr, "%s\n", mbs_errMsg()), 1;
  int n = argc > 1 ? atoi(argv[1]) : 4096, P = mbsp_size(comm), rank = mbsp_rank(comm);
  char *t = chainText(n);
  mbsConfig *cfg = NULL;
  mbsModel *m = NULL;
  mbsFlexAba *a = NULL;
  mbspFlexPar *fp = NULL;
  if (!t || mbs_configParse(t, "chain.cfg", NULL, 0, &cfg) || mbs_configBuildModel(cfg, &m) ||
      mbs_flexAbaCreate(m, &a) || mbsp_flexParCreate(comm, m, &fp)) {
    fprintf(stderr, "n = %d: %s\n", n, mbs_errMsg());
    return 1;
  }
  free(t);
  mbs_configDestroy(&cfg);
  int N = mbs_flexAbaSize(a);
  double *q = calloc((size_t)m->nq + 1, sizeof(double)), *y = calloc((size_t)N, sizeof(double));
  double *eta = calloc((size_t)N, sizeof(double)), *ya = calloc((size_t)N, sizeof(double));
  double *yp = calloc((size_t)N, sizeof(double));
  for (int i = 0; i < m->nq; i++) q[i] = 0.3 * sin(0.7 * i); // flex_chain.c's moving state
  for (int i = 0; i < N; i++) y[i] = 0.5 * cos(1.3 * i), eta[i] = 1e-4 * sin(2.1 * i);
  // the distributed evaluation: repetitions from a first one (rank 0's, broadcast)
  double t0 = mbs_wtime(), best = 1e30, reps = 1;
  if (mbsp_flexParAccel(fp, q, y, eta, yp)) return fprintf(stderr, "%s\n", mbs_errMsg()), 1;
  reps = fmax(3, ceil(0.3 / fmax(mbs_wtime() - t0, 1e-9)));
  mbsp_bcastBytes(comm, &reps, sizeof reps, 0);
  for (int batch = 0; batch < 3; batch++) {
    mbsp_barrier(comm);
    t0 = mbs_wtime();
    for (int r = 0; r < (int)reps; r++) mbsp_flexParAccel(fp, q, y, eta, yp);
    double dt = (mbs_wtime() - t0) / reps;
    mbsp_allreduceMax(comm, &dt, 1);
    best = fmin(best, dt);
  }
  // the serial recursive algorithm on rank 0: its time at one rank, the difference always
  double ts = -1, sc = 0, df = 0;
  if (rank == 0) {
    mbs_flexAbaAccel(a, q, y, eta, ya);
    for (int i = 0; i < N; i++) sc = fmax(sc, fabs(ya[i])), df = fmax(df, fabs(ya[i] - yp[i]));
    for (int batch = 0; P == 1 && batch < 3; batch++) {
      t0 = mbs_wtime();
      for (int r = 0; r < (int)reps; r++) mbs_flexAbaAccel(a, q, y, eta, ya);
      double dt = (mbs_wtime() - t0) / reps;
      ts = ts < 0 ? dt : fmin(ts, dt);
    }
  }
  int rk, ncut, nif;
  long ev, unit;
  mbsp_flexParInfo(fp, &rk, &ncut, &nif, &ev, &unit);
  if (rank == 0) {
    printf("| %d | %d | %d | %d | %.3e | ", n, N, P, nif, best);
    if (ts > 0)
      printf("%.3e | %.2f | %.1e |\n", ts, best / ts, df / sc);
    else
      printf("— | — | %.1e |\n", df / sc);
  }
  free(q), free(y), free(eta), free(ya), free(yp);
  mbsp_flexParDestroy(&fp), mbs_flexAbaDestroy(&a), mbs_modelDestroy(&m);
  mbsp_finalize(&comm);
  return 0;
}
