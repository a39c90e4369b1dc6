/// \file natural_scaling.c
/// Benchmark (reports, never asserts; issue 33): time per evaluation of the natural-coordinate
/// formulation's O(n) solver (mbs_naturalAccel) against serial ABA on chains (revolute) and
/// binary trees (spherical) of 2^8 .. 2^NMAX bodies, thread CPU time, the median of interleaved
/// rounds (natural, aba, natural, aba, ...); the fitted exponent of natural's time against n, and
/// the q̈ difference to ABA at each size.
///   natural_scaling [NMAX=16] [ROUNDS=5]
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_natural.h"

static double bn_cpu(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int bn_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static mbsModel *bn_model(int tree, int lg) {
  char text[1024];
  if (tree)
    snprintf(text, sizeof text,
             "model = { tree = { branching = 2; depth = %d; joint = \"spherical\"; direction = "
             "[0, 0, -1]; length = 0.1; mass = 0.05; shape = \"rod\"; q0 = [0.995004165278, "
             "0.0998334166468, 0, 0]; spread = 0.5; }; };",
             lg);
  else
    snprintf(text, sizeof text,
             "model = { chain = { n = %d; joint = \"revolute\"; axis = [0, 1, 0]; direction = "
             "[0, 0, -1]; length = 0.02; mass = 0.01; q0 = [0.1]; qd0 = [0.2]; }; };",
             1 << lg);
  mbsConfig *cfg = NULL;
  mbsModel *m = NULL;
  if (mbs_configParse(text, "natural_scaling", NULL, 0, &cfg) || mbs_configBuildModel(cfg, &m)) {
    fprintf(stderr, "natural_scaling: %s\n", mbs_errMsg());
    m = NULL;
  }
  mbs_configDestroy(&cfg);
  return m;
}

int main(int argc, char **argv) {
  int nmax = argc > 1 ? atoi(argv[1]) : 16, rounds = argc > 2 ? atoi(argv[2]) : 5;
  if (nmax < 8 || nmax > 20 || rounds < 1 || rounds > 99) {
    fprintf(stderr, "usage: natural_scaling [NMAX 8..20] [ROUNDS 1..99]\n");
    return 2;
  }
  printf("| model | bodies | natural (us/eval) | aba (us/eval) | natural / aba | natural ns/body "
         "| qdd rel diff |\n|---|---|---|---|---|---|---|\n");
  for (int tree = 0; tree < 2; tree++) {
    double lx[32], ly[32];
    int npts = 0;
    for (int lg = 8; lg <= nmax; lg++) {
      mbsModel *m = bn_model(tree, lg);
      mbsState *s = NULL;
      mbsWork *w = NULL;
      mbsNaturalWork *nw = NULL;
      if (!m || mbs_stateCreate(m, &s) || mbs_workCreate(m, &w) || mbs_naturalWorkCreate(m, &nw)) {
        fprintf(stderr, "natural_scaling: %s\n", mbs_errMsg());
        return 1;
      }
      double *qn = malloc(sizeof(double) * (size_t)m->nv),
             *qa = malloc(sizeof(double) * (size_t)m->nv);
      double tn[99], ta[99];
      long calls = 1 + (1L << 18) / m->nbody; // about 0.05-0.5 s per round
      for (int r = 0; r < rounds; r++) {
        double t0 = bn_cpu();
        for (long k = 0; k < calls; k++) mbs_naturalAccel(m, s, w, nw, qn, NULL);
        double t1 = bn_cpu();
        for (long k = 0; k < calls; k++) {
          mbs_fwdPosition(m, s, w);
          mbs_fwdVelocity(m, s, w);
          mbs_aba(m, w);
        }
        double t2 = bn_cpu();
        tn[r] = (t1 - t0) / calls, ta[r] = (t2 - t1) / calls;
      }
      memcpy(qa, w->qdd, sizeof(double) * (size_t)m->nv);
      double dmax = 0, amax = 1e-300;
      for (int i = 0; i < m->nv; i++)
        dmax = fmax(dmax, fabs(qn[i] - qa[i])), amax = fmax(amax, fabs(qa[i]));
      qsort(tn, (size_t)rounds, sizeof(double), bn_cmp);
      qsort(ta, (size_t)rounds, sizeof(double), bn_cmp);
      double mn = tn[rounds / 2], ma = ta[rounds / 2];
      printf("| %s | %d | %.1f | %.1f | %.1f | %.0f | %.1e |\n", tree ? "binary tree" : "chain",
             m->nbody, 1e6 * mn, 1e6 * ma, mn / ma, 1e9 * mn / m->nbody, dmax / amax);
      fflush(stdout);
      lx[npts] = log((double)m->nbody), ly[npts] = log(mn), npts++;
      free(qn), free(qa);
      mbs_naturalWorkDestroy(&nw);
      mbs_workDestroy(&w);
      mbs_stateDestroy(&s);
      mbs_modelDestroy(&m);
    }
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < npts; i++)
      sx += lx[i], sy += ly[i], sxx += lx[i] * lx[i], sxy += lx[i] * ly[i];
    double slope = (npts * sxy - sx * sy) / (npts * sxx - sx * sx);
    printf("\n%s: natural time ~ n^%.3f (least squares over %d sizes)\n\n",
           tree ? "binary trees" : "chains", slope, npts);
    if (!tree)
      printf("| model | bodies | natural (us/eval) | aba (us/eval) | natural / aba | natural "
             "ns/body | qdd rel diff |\n|---|---|---|---|---|---|---|\n");
  }
  return 0;
}
