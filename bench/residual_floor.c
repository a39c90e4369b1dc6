/// \file residual_floor.c
/// How noisy is the computed residual of a stationary iteration near its tolerance, and does a
/// Krylov solver's reported residual match b − Aλ? An experiment for docs/loops.md 8.4 (why
/// jacobi's stop on the full ladder moves by 10^4 sweeps between rank counts and check_every
/// values) and docs/formulation.md 3.2.1. It solves the constraint-force system with jcg at the
/// config's solver.tol (MBS_FLOOR_FIRST=chebyshev in the environment: chebyshev instead), prints
/// its reported residual and b − Aλ recomputed at its answer (jcg once more from it, tol 1: the
/// start test only), then continues with jacobi (or gs) warm-started from that answer, one
/// evaluation of two sweeps at a time (max_iter 1: sweeps 0 and 1, the second tested), and
/// prints the relative residual ‖b − Aλ‖/‖b‖ each evaluation reports. The iterate barely moves
/// there, so what the residual does is the rounding noise of r = b − Aλ at the answer, the level
/// at which a tolerance test is a coin toss. Reports, never asserts.
/// usage: mpirun -n P bench_residual_floor CONFIG [jacobi | gs] [EVALUATIONS] [--set K=V ...]
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbspar.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_engine.h"
#include "mbspar/mbs_parallel.h"

int main(int argc, char **argv) {
  mbspComm *comm = NULL;
  if (mbsp_init(&argc, &argv, &comm) != MBS_OK) return 1;
  int rank = mbsp_rank(comm), rc = 0;
  if (argc < 2) {
    if (!rank)
      fprintf(stderr, "usage: bench_residual_floor CONFIG [jacobi | gs] [EVALUATIONS] "
                      "[--set KEY=VALUE ...]\n");
    mbsp_finalize(&comm);
    return 2;
  }
  const char *path = argv[1];
  const char *method = argc > 2 && strncmp(argv[2], "--", 2) ? argv[2] : "jacobi";
  int nev = argc > 3 && strncmp(argv[3], "--", 2) ? atoi(argv[3]) : 50;
  const char *sets[16];
  int nsets = 0;
  for (int i = 2; i + 1 < argc && nsets < 16; i++)
    if (!strcmp(argv[i], "--set")) sets[nsets++] = argv[++i];
  char *text = NULL;
  size_t len = 0;
  mbsConfig *cfg = NULL;
  mbsModel *m = NULL;
  mbsState *s = NULL;
  mbspEngine *e = NULL;
  if (mbsp_bcastFile(comm, path, &text, &len) != MBS_OK ||
      mbs_configParse(text, path, sets, nsets, &cfg) != MBS_OK ||
      mbs_configBuildModel(cfg, &m) != MBS_OK || mbs_stateCreate(m, &s) != MBS_OK) {
    if (!rank) fprintf(stderr, "bench_residual_floor: cannot load %s\n", path);
    rc = 2;
    goto done;
  }
  // 1. jcg at the config's solver.tol (e.g. --set solver.tol=1e-14, the smallest allowed); the
  // history keeps its answer
  double tol = m->opt.tol;
  const char *first = getenv("MBS_FLOOR_FIRST"); // chebyshev: that instead of jcg
  m->opt.solver = first && !strcmp(first, "chebyshev") ? MBS_SOLVER_CHEBYSHEV : MBS_SOLVER_JCG;
  m->opt.warm_start = MBS_WARM_PREVIOUS;
  m->opt.max_iter = 200000;
  m->opt.check_every = 1;
  mbs_stateReset(m, s);
  if (mbsp_engineCreate(comm, m, MBSP_HALO_P2P, &e) != MBS_OK ||
      mbsp_engineForward(e, s) != MBS_OK) {
    rc = 1;
    goto done;
  }
  const mbsWork *w = mbsp_engineWork(e);
  if (!rank)
    printf("# %s, %d ranks: %s at tol %.0e: %d iterations, residual %.6e (%s)\n", path,
           mbsp_size(comm), mbs_solverName(m->opt.solver), tol, w->stat.iterations,
           w->stat.residual, mbs_reasonName(w->stat.reason));
  mbsp_engineDestroy(&e);
  // 1b. jcg's answer's residual recomputed as b - A lambda: jcg once more from the history with
  // tol 1, which stops at the initial test (no step)
  m->opt.tol = 1;
  if (mbsp_engineCreate(comm, m, MBSP_HALO_P2P, &e) != MBS_OK ||
      mbsp_engineForward(e, s) != MBS_OK) {
    rc = 1;
    goto done;
  }
  w = mbsp_engineWork(e);
  if (!rank)
    printf("# its answer's residual recomputed as b - A lambda: %.6e (%d iterations)\n",
           w->stat.residual, w->stat.iterations);
  mbsp_engineDestroy(&e);
  // 2. the stationary method from there, two sweeps per evaluation
  m->opt.solver = strcmp(method, "gs") ? MBS_SOLVER_JACOBI : MBS_SOLVER_GS;
  m->opt.max_iter = 1;
  m->opt.tol = 1e-14; // not met: every evaluation makes its two sweeps
  if (mbsp_engineCreate(comm, m, MBSP_HALO_P2P, &e) != MBS_OK) {
    rc = 1;
    goto done;
  }
  w = mbsp_engineWork(e);
  double lo = INFINITY, hi = 0, sum = 0, sum2 = 0;
  if (!rank) printf("# evaluation  sweeps  relative residual\n");
  for (int k = 0; k < nev; k++) {
    if (mbsp_engineForward(e, s) != MBS_OK) {
      rc = 1;
      break;
    }
    double r = w->stat.residual;
    lo = fmin(lo, r), hi = fmax(hi, r), sum += r, sum2 += r * r;
    if (!rank) printf("%d %d %.6e\n", k + 1, 2 * (k + 1), r);
  }
  if (!rank && nev > 0) {
    double mean = sum / nev, sd = sqrt(fmax(sum2 / nev - mean * mean, 0));
    printf("# %s from that answer, %d evaluations: residual min %.3e mean %.3e max %.3e, "
           "standard deviation %.3e\n",
           method, nev, lo, mean, hi, sd);
  }
done:
  mbsp_engineDestroy(&e);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&m);
  mbs_configDestroy(&cfg);
  free(text);
  mbsp_finalize(&comm);
  return rc;
}
