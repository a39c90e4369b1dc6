/// \file seed004_fig5.c
/// Seed 004's Fig. 5 (docs/seeds.md section 10): CPU time of a natural-coordinate simulation
/// against the required integration tolerance, one curve per projection tolerance. Runs the
/// model of CONFIG in (p, ṗ) (mbs_naturalSimAdvance: adaptive Dormand–Prince 5(4), projection
/// when max |g| or max |G ṗ| exceeds the projection tolerance) for T seconds, for every pair
/// (projection tolerance, integration tolerance), ROUNDS interleaved rounds, and prints one CSV
/// row per pair: the median and smallest CPU time of the integration (thread CPU clock), the
/// counters, the achieved error max |p(T) - p_ref(T)| against a reference run (tolerance
/// 1e-12, projection tolerance 1e-12) and the largest residuals seen. Reports, never asserts.
///   build/bench/seed004_fig5 configs/sixbar.cfg 10 3 1e-3,1e-4 1e-2,1e-8 [--set K=V ...]
/// With --trace: one run of CONFIG over T at (TOL, PTOL), a row every DT: time, CPU, the relative
/// energy error, max |g| and max |G ṗ| (after a step, before any projection, the largest so far),
/// the counters (docs/natural.md 10, the hexapod).
///   build/bench/seed004_fig5 --trace configs/hexapod.cfg 1 0.1 1e-8 1e-10
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_natural.h"

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int parse_list(const char *s, double *v, int max) {
  int n = 0;
  char *end;
  while (*s && n < max) {
    v[n++] = strtod(s, &end);
    if (end == s) return -1;
    s = *end == ',' ? end + 1 : end;
  }
  return n;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct {
  double cpu[16];
  mbsNaturalSimStats st;
  double err, dE;
} cell;

// one run: T seconds at (tol, ptol); p(T) into pT (np), the energy drift into *dE
static int run(const mbsModel *m, double T, double tol, double ptol, double *pT, int np,
               double *cpu, mbsNaturalSimStats *st, double *dE) {
  mbsState *s = NULL;
  mbsWork *w = NULL;
  mbsNaturalSim *ns = NULL;
  int rc = 1;
  if (mbs_stateCreate(m, &s) || mbs_workCreate(m, &w) || mbs_naturalSimCreate(m, s, w, &ns))
    goto out;
  double E0 = mbs_naturalSimEnergy(ns), t0 = cpu_now();
  if (mbs_naturalSimAdvance(ns, T, tol, ptol)) goto out;
  *cpu = cpu_now() - t0;
  *dE = fabs(mbs_naturalSimEnergy(ns) - E0) / fmax(fabs(E0), 1e-300);
  memcpy(pT, mbs_naturalSimState(ns, NULL), sizeof(double) * (size_t)np);
  mbs_naturalSimGetStats(ns, st);
  rc = 0;
out:
  if (rc) fprintf(stderr, "seed004_fig5: %s\n", mbs_errMsg());
  mbs_naturalSimDestroy(&ns);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  return rc;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = len >= 0 ? calloc((size_t)len + 1, 1) : NULL;
  if (text && fread(text, 1, (size_t)len, f) != (size_t)len) free(text), text = NULL;
  fclose(f);
  return text;
}

static int trace(int argc, char **argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: seed004_fig5 --trace CONFIG T DT TOL PTOL\n");
    return 2;
  }
  double T = atof(argv[3]), dt = atof(argv[4]), tol = atof(argv[5]), ptol = atof(argv[6]);
  char *text = slurp(argv[2]);
  mbsConfig *cfg = NULL;
  mbsModel *m = NULL;
  mbsState *s = NULL;
  mbsWork *w = NULL;
  mbsNaturalSim *ns = NULL;
  if (!text || !(T > 0 && dt > 0 && tol > 0 && ptol > 0)) {
    fprintf(stderr, "seed004_fig5: cannot read %s or bad T, DT, TOL, PTOL\n", argv[2]);
    return 2;
  }
  if (mbs_configParse(text, argv[2], NULL, 0, &cfg) || mbs_configBuildModel(cfg, &m) ||
      mbs_stateCreate(m, &s) || mbs_workCreate(m, &w) || mbs_naturalSimCreate(m, s, w, &ns)) {
    fprintf(stderr, "%s\n", mbs_errMsg());
    return 2;
  }
  double E0 = mbs_naturalSimEnergy(ns), c0 = cpu_now();
  mbsNaturalSimStats st;
  printf("# %s: %d bodies, natural run, dp5 tol %g, projection tol %g; E0 = %.9g J, initial "
         "violation %.2e\n",
         argv[2], m->nbody, tol, ptol, E0, mbs_naturalSimViolation(ns));
  printf("t,cpu,energy_rel,gmax,gvmax,steps,rejected,evals,projections\n");
  int n = (int)(T / dt + 0.5);
  for (int i = 1; i <= n; i++) {
    if (mbs_naturalSimAdvance(ns, dt, tol, ptol)) {
      fprintf(stderr, "%s\n", mbs_errMsg());
      return 1;
    }
    mbs_naturalSimGetStats(ns, &st);
    printf("%.4f,%.3f,%.3e,%.3e,%.3e,%ld,%ld,%ld,%ld\n", st.t, cpu_now() - c0,
           (mbs_naturalSimEnergy(ns) - E0) / fabs(E0), st.gmax, st.gvmax, st.steps, st.rejected,
           st.evals, st.projections);
  }
  mbs_naturalSimDestroy(&ns);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  mbs_configDestroy(&cfg);
  mbs_modelDestroy(&m);
  free(text);
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--trace")) return trace(argc, argv);
  if (argc < 6) {
    fprintf(stderr, "usage: seed004_fig5 CONFIG T ROUNDS TOLS PTOLS [--set K=V ...]\n");
    return 2;
  }
  double T = atof(argv[2]), tols[32], ptols[32];
  int rounds = atoi(argv[3]), nt = parse_list(argv[4], tols, 32),
      npt = parse_list(argv[5], ptols, 32);
  if (T <= 0 || rounds < 1 || rounds > 16 || nt < 1 || npt < 1) {
    fprintf(stderr, "seed004_fig5: bad T, ROUNDS (1-16) or tolerance lists\n");
    return 2;
  }
  const char *sets[32];
  int nsets = 0;
  for (int i = 6; i + 1 < argc && nsets < 32; i += 2)
    if (!strcmp(argv[i], "--set")) sets[nsets++] = argv[i + 1];
  char *text = slurp(argv[1]);
  if (!text) {
    fprintf(stderr, "seed004_fig5: cannot read %s\n", argv[1]);
    return 2;
  }
  mbsConfig *cfg = NULL;
  mbsModel *m = NULL;
  if (mbs_configParse(text, argv[1], sets, nsets, &cfg) || mbs_configBuildModel(cfg, &m)) {
    fprintf(stderr, "%s\n", mbs_errMsg());
    return 2;
  }
  int np = 12 * m->nbody;
  double *pref = calloc((size_t)np, sizeof(double)), *p = calloc((size_t)np, sizeof(double));
  cell *c = calloc((size_t)(nt * npt), sizeof *c);
  if (!pref || !p || !c) return 4;
  double cref, dEref;
  mbsNaturalSimStats sref;
  if (run(m, T, 1e-12, 1e-12, pref, np, &cref, &sref, &dEref)) return 1;
  printf("# reference: tol 1e-12, ptol 1e-12: %ld steps, %ld rejected, %ld evaluations, %ld "
         "projections, %.3f s CPU, energy drift %.2e\n",
         sref.steps, sref.rejected, sref.evals, sref.projections, cref, dEref);
  for (int r = 0; r < rounds; r++)
    for (int a = 0; a < npt; a++)
      for (int b = 0; b < nt; b++) {
        cell *x = c + a * nt + b;
        if (run(m, T, tols[b], ptols[a], p, np, &x->cpu[r], &x->st, &x->dE)) return 1;
        double e = 0;
        for (int j = 0; j < np; j++) e = fmax(e, fabs(p[j] - pref[j]));
        x->err = e;
      }
  printf("ptol,tol,cpu_median,cpu_min,steps,rejected,evals,projections,corrections,err,gmax,"
         "gvmax,energy_drift\n");
  for (int a = 0; a < npt; a++)
    for (int b = 0; b < nt; b++) {
      cell *x = c + a * nt + b;
      qsort(x->cpu, (size_t)rounds, sizeof(double), cmp);
      printf("%.0e,%.0e,%.5f,%.5f,%ld,%ld,%ld,%ld,%ld,%.3e,%.3e,%.3e,%.3e\n", ptols[a], tols[b],
             x->cpu[rounds / 2], x->cpu[0], x->st.steps, x->st.rejected, x->st.evals,
             x->st.projections, x->st.corrections, x->err, x->st.gmax, x->st.gvmax, x->dE);
    }
  free(pref), free(p), free(c), free(text);
  mbs_configDestroy(&cfg);
  mbs_modelDestroy(&m);
  return 0;
}
