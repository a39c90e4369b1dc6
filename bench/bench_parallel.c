/// \file bench_parallel.c
/// Constraint-force solvers of the parallel engine, reported (never asserted):
///   cold   : iterations and time per evaluation of each solver on an N-body revolute chain
///            (no warm start), at the rank count it is launched with;
///   warm   : average J-CG iterations per evaluation along a prescribed smooth 1 s trajectory
///            (q_j(t) = q0_j + 0.2 sin(2 pi t + 0.1 j), 1000 evaluations) for every warm start;
///   scale  : J-CG time per evaluation on a long chain (run at -n 1 and -n 2 and compare).
///            (optionally a fixed iteration budget: the 6th argument caps max_iter, so that both
///            rank counts do the same iterations of the same CG sequence).
/// Usage: bench_parallel MODE N [tol] [repeat] [max_iter (scale)] [evaluations (warm)].
/// One JSON object per line on stdout (rank 0).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_engine.h"
#include "petsc_ref.h"
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static mbsErr build_chain(int n, mbsModel **out) {
  mbsModel *m;
  MBS_CALL(mbs_modelCreate(&m, n));
  double L = 0.1, mass = 0.1;
  char name[32];
  for (int b = 0; b < n; b++) {
    mbsBodySpec sp;
    mbs_bodySpecDefault(&sp);
    snprintf(name, sizeof name, "link%d", b);
    sp.name = name;
    sp.parent = b - 1;
    sp.jnttype = MBS_JNT_REVOLUTE;
    sp.axis[0] = 0, sp.axis[1] = 1, sp.axis[2] = 0;
    sp.origin[2] = b == 0 ? 0 : -L;
    sp.mass = mass;
    sp.com[2] = -L / 2;
    sp.inertia[0] = sp.inertia[1] = mass * L * L / 12 + 1e-6;
    sp.inertia[2] = 2e-6;
    sp.q0[0] = b == 0 ? 0.5 : 0.02 * sin(0.3 * b);
    sp.qd0[0] = 0.1 * cos(0.2 * b);
    MBS_CALL(mbs_modelAddBody(m, &sp, NULL));
  }
  MBS_CALL(mbs_modelFinalize(m));
  *out = m;
  return MBS_OK;
}

int main(int argc, char **argv) {
  mbspComm *comm;
  if (mbsp_init(&argc, &argv, &comm)) return 1;
  int rank = mbsp_rank(comm), size = mbsp_size(comm);
  if (argc < 3) {
    if (rank == 0) fprintf(stderr, "usage: bench_parallel cold|warm|scale N [tol] [repeat]\n");
    mbsp_finalize(&comm);
    return 2;
  }
  const char *mode = argv[1];
  int n = atoi(argv[2]);
  double tol = argc > 3 ? atof(argv[3]) : 1e-8;
  int repeat = argc > 4 ? atoi(argv[4]) : 3;
#ifdef MBS_HAVE_PETSC
  mbsp_petscInitialize(&argc, &argv);
#endif
  mbsModel *m;
  mbsState *s;
  mbspEngine *e;
  // halo mode: persistent point-to-point (default) or the neighbourhood collective
  const char *hm = getenv("MBSPAR_HALO");
  int halo = (hm && strcmp(hm, "neighbor") == 0) ? MBSP_HALO_NEIGHBOR : MBSP_HALO_P2P;
  if (build_chain(n, &m) || mbs_stateCreate(m, &s) || mbsp_engineCreate(comm, m, halo, &e)) {
    if (rank == 0) fprintf(stderr, "setup failed: %s\n", mbs_errMsg());
    mbsp_finalize(&comm);
    return 1;
  }
  mbsWork *w = mbsp_engineWork(e);
  m->opt.tol = tol;
  m->opt.criterion = MBS_CRIT_RESIDUAL;

  if (strcmp(mode, "cold") == 0 || strcmp(mode, "scale") == 0) {
    const int all[] = {MBS_SOLVER_JCG, MBS_SOLVER_PETSC,  MBS_SOLVER_CHEBYSHEV, MBS_SOLVER_GS,
                       MBS_SOLVER_SOR, MBS_SOLVER_JACOBI, MBS_SOLVER_DIRECT};
    int nmeth = strcmp(mode, "scale") == 0 ? 1 : (int)(sizeof all / sizeof all[0]);
    for (int k = 0; k < nmeth; k++) {
      int meth = all[k];
      if (meth == MBS_SOLVER_DIRECT && size > 1) continue;
#ifndef MBS_HAVE_PETSC
      if (meth == MBS_SOLVER_PETSC) continue;
#endif
      m->opt.solver = meth;
      m->opt.warm_start = MBS_WARM_NONE;
      m->opt.omega = 1.9;
      // stationary methods need O(N^2) iterations on a chain: cap them (5000; Chebyshev, which
      // converges in ~8N here, 20000) and say so
      m->opt.max_iter = (meth == MBS_SOLVER_JCG || meth == MBS_SOLVER_PETSC)
                            ? 100000
                            : (meth == MBS_SOLVER_CHEBYSHEV ? 20000 : 5000);
      if (strcmp(mode, "scale") == 0 && argc > 5) m->opt.max_iter = atoi(argv[5]);
      double best = 1e300;
      int its = 0, reason = 0;
      double res = 0;
      for (int r = 0; r < repeat; r++) {
        mbs_stateReset(m, s);
        mbsp_barrier(comm);
        double t0 = mbsp_wtime();
        mbsErr err = mbsp_engineForward(e, s);
        double t = mbsp_wtime() - t0;
        mbsp_allreduceMax(comm, &t, 1);
        if (err) {
          if (rank == 0) fprintf(stderr, "%s failed: %s\n", mbs_solverName(meth), mbs_errMsg());
          break;
        }
        if (t < best) best = t;
        its = w->stat.iterations, reason = w->stat.reason, res = w->stat.residual;
      }
      if (rank == 0)
        printf(
            "{\"mode\":\"%s\",\"halo\":\"%s\",\"n\":%d,\"ranks\":%d,\"method\":\"%s\",\"tol\":%g,"
            "\"iterations\":%d,"
            "\"converged\":%s,\"reason\":\"%s\",\"residual\":%.3e,\"time_per_eval_s\":%.6e,"
            "\"us_per_iteration\":%.3f}\n",
            mode, halo == MBSP_HALO_P2P ? "p2p" : "neighbor", n, size, mbs_solverName(meth), tol,
            its, reason > 0 ? "true" : "false", mbs_reasonName(reason), res, best,
            its > 0 ? 1e6 * best / its : 0.0);
      fflush(stdout);
    }
  } else if (strcmp(mode, "warm") == 0) {
    const char *wname[] = {"none", "previous", "linear", "quadratic", "cubic"};
    int neval = argc > 6 ? atoi(argv[6]) : 1000;
    double dt = 1.0 / neval;
    for (int ws = MBS_WARM_NONE; ws <= MBS_WARM_CUBIC; ws++) {
      m->opt.solver = MBS_SOLVER_JCG;
      m->opt.warm_start = ws;
      m->opt.max_iter = 100000;
      mbs_stateReset(m, s);
      long total = 0;
      int maxit = 0, first = 0;
      double t0 = mbsp_wtime();
      for (int k = 0; k < neval; k++) {
        double t = k * dt;
        s->time = t;
        for (int j = 0; j < m->nv; j++) {
          s->q[j] = m->q0[j] + 0.2 * sin(2 * M_PI * t + 0.1 * j);
          s->qd[j] = 0.2 * 2 * M_PI * cos(2 * M_PI * t + 0.1 * j);
        }
        if (mbsp_engineForward(e, s)) {
          if (rank == 0) fprintf(stderr, "failed: %s\n", mbs_errMsg());
          break;
        }
        total += w->stat.iterations;
        if (k == 0) first = w->stat.iterations;
        if (w->stat.iterations > maxit) maxit = w->stat.iterations;
      }
      double el = mbsp_wtime() - t0;
      if (rank == 0)
        printf("{\"mode\":\"warm\",\"n\":%d,\"ranks\":%d,\"method\":\"jcg\",\"warm_start\":\"%s\","
               "\"tol\":%g,\"evaluations\":%d,\"avg_iterations\":%.2f,\"max_iterations\":%d,"
               "\"first_iterations\":%d,\"time_per_eval_s\":%.6e}\n",
               n, size, wname[ws], tol, neval, (double)total / neval, maxit, first, el / neval);
      fflush(stdout);
    }
  }
  mbsp_engineDestroy(&e);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&m);
  mbsp_petscFinalize();
  mbsp_finalize(&comm);
  return 0;
}
