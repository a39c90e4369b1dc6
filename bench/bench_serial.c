/// \file bench_serial.c
/// Serial baselines: time per call of mbspar's forward dynamics (ABA; CRBA + LTDL) and inverse
/// dynamics (RNEA) on the benchmark revolute chain for N = 8 ... 4096, beside the peers MuJoCo
/// (mj_forward) and Simbody (realize Acceleration) when they were built in. Each point repeats
/// calls for at least --min-time seconds and keeps the best of --reps repetitions. Reports
/// ns per body, the growth exponent (least squares of log t vs log N over N >= 64), a check that
/// the peers compute the same accelerations, and machine/build information. Reports, never
/// asserts: the exit code is nonzero only for usage or setup errors.
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bench_chain.h"
#include "bench_peers.h"
#include "build_info.h"
#include "mbspar/mbs_dynamics.h"

#ifndef BENCH_C_FLAGS
#define BENCH_C_FLAGS "unknown"
#endif

// ---------------------------------------------------------------- methods

enum {
  BENCH_ABA,     // fwdPosition + fwdVelocity + aba
  BENCH_CRBA,    // fwdPosition + fwdVelocity + crba (incl. LTDL solve)
  BENCH_RNEA,    // fwdPosition + fwdVelocity + rnea
  BENCH_MUJOCO,  // mj_forward
  BENCH_SIMBODY, // realize(Stage::Acceleration)
  BENCH_ABAK,    // aba alone (stages precomputed)
  BENCH_RNEAK,   // rnea alone (stages precomputed)
  BENCH_NMETHOD
};
static const char *bench_name[BENCH_NMETHOD] = {"aba",     "crba",       "rnea",       "mujoco",
                                                "simbody", "aba_kernel", "rnea_kernel"};
static const char *bench_what[BENCH_NMETHOD] = {
    "mbspar fwdPosition+fwdVelocity+aba",
    "mbspar fwdPosition+fwdVelocity+crba (mass matrix, LTDL factor and solve)",
    "mbspar fwdPosition+fwdVelocity+rnea (qdd from aba)",
    "MuJoCo mj_forward, contacts disabled",
    "Simbody realize(Stage::Acceleration) after invalidating Stage::Position",
    "mbspar aba alone (position/velocity stages done)",
    "mbspar rnea alone (position/velocity stages done)"};

#define BENCH_MAXN 64

typedef struct {
  int nn;                                  // number of chain lengths
  int n[BENCH_MAXN];                       // chain lengths
  double t[BENCH_NMETHOD][BENCH_MAXN];     // best seconds per call, < 0 = not measured
  double cpu[BENCH_NMETHOD][BENCH_MAXN];   // best thread-CPU seconds per call
  double setup[BENCH_NMETHOD][BENCH_MAXN]; // peers: seconds to build/load the model, < 0 = none
  long calls[BENCH_NMETHOD][BENCH_MAXN];   // calls per repetition
  char note[BENCH_NMETHOD][256];           // why a method stopped or is missing
  double expo[BENCH_NMETHOD];              // fitted growth exponent (NAN if < 2 points)
  int have[BENCH_NMETHOD];                 // compiled in / available
} benchResult;

typedef struct {
  const mbsModel *m;
  mbsState *s;
  mbsWork *w;
  const mbsReal *qdd;
} benchCtx;

// one chain length: the mbspar model and workspace and the peers' models
typedef struct {
  benchChain c;
  mbsModel *m;
  mbsState *s;
  mbsWork *w;
  mbsReal *qdd;
  benchCtx ctx;
  benchPeer *mj, *sb;
} benchPoint;

static void bench_evalAba(void *p) {
  benchCtx *c = p;
  mbs_fwdPosition(c->m, c->s, c->w);
  mbs_fwdVelocity(c->m, c->s, c->w);
  mbs_aba(c->m, c->w);
}
static void bench_evalCrba(void *p) {
  benchCtx *c = p;
  mbs_fwdPosition(c->m, c->s, c->w);
  mbs_fwdVelocity(c->m, c->s, c->w);
  mbs_crba(c->m, c->w);
}
static void bench_evalRnea(void *p) {
  benchCtx *c = p;
  mbs_fwdPosition(c->m, c->s, c->w);
  mbs_fwdVelocity(c->m, c->s, c->w);
  mbs_rnea(c->m, c->w, c->qdd);
}
static void bench_evalAbaKernel(void *p) {
  benchCtx *c = p;
  mbs_aba(c->m, c->w);
}
static void bench_evalRneaKernel(void *p) {
  benchCtx *c = p;
  mbs_rnea(c->m, c->w, c->qdd);
}

// ---------------------------------------------------------------- timing

// CPU seconds of this thread (excludes time the scheduler gave to other processes)
static double bench_cputime(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// one repetition: calls calls of fn; wall-clock and thread-CPU seconds per call
static void bench_rep(void (*fn)(void *), void *ctx, long calls, double *wall, double *cpu) {
  double c0 = bench_cputime(), t0 = mbs_wtime();
  for (long k = 0; k < calls; k++) fn(ctx);
  *wall = (mbs_wtime() - t0) / calls;
  *cpu = (bench_cputime() - c0) / calls;
}

// warm up, then double the calls per repetition (at least) until one repetition lasts min_time;
// that repetition is the first one counted
static long bench_calibrate(void (*fn)(void *), void *ctx, double min_time, double *wall,
                            double *cpu) {
  fn(ctx);
  long calls = 1;
  for (;;) {
    bench_rep(fn, ctx, calls, wall, cpu);
    double el = *wall * calls;
    if (el >= min_time) return calls;
    double grow = el > 0 ? 1.2 * min_time / el : 100;
    calls = (long)ceil(calls * (grow < 2 ? 2 : (grow > 100 ? 100 : grow)));
  }
}

// predicted value at n[i] from the last two positive entries before i of v (power law, exponent
// at least 1); 0 without data
static double bench_predictArr(const benchResult *r, const double *v, int i) {
  int j1 = -1, j0 = -1;
  for (int j = i - 1; j >= 0; j--)
    if (v[j] > 0) {
      if (j1 < 0)
        j1 = j;
      else {
        j0 = j;
        break;
      }
    }
  if (j1 < 0) return 0;
  double p = 2;
  if (j0 >= 0) p = log(v[j1] / v[j0]) / log((double)r->n[j1] / r->n[j0]);
  if (p < 1) p = 1;
  return v[j1] * pow((double)r->n[i] / r->n[j1], p);
}
static double bench_predict(const benchResult *r, int meth, int i) {
  return bench_predictArr(r, r->t[meth], i);
}

// least-squares slope of log t vs log N over the measured points with N >= nmin
static double bench_fitExponent(const benchResult *r, int meth, int nmin) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int k = 0;
  for (int i = 0; i < r->nn; i++) {
    if (r->n[i] < nmin || !(r->t[meth][i] > 0)) continue;
    double x = log((double)r->n[i]), y = log(r->t[meth][i]);
    sx += x, sy += y, sxx += x * x, sxy += x * y, k++;
  }
  if (k < 2) return NAN;
  return (k * sxy - sx * sy) / (k * sxx - sx * sx);
}

// ---------------------------------------------------------------- model

static mbsErr bench_buildChain(const benchChain *c, mbsModel **out) {
  mbsModel *m;
  double I[3];
  bench_chainInertia(c, I);
  MBS_CALL(mbs_modelCreate(&m, c->n));
  m->gravity[0] = m->gravity[1] = 0;
  m->gravity[2] = -c->g;
  for (int i = 0; i < c->n; i++) {
    mbsBodySpec sp;
    char name[32];
    mbs_bodySpecDefault(&sp);
    snprintf(name, sizeof name, "link%d", i);
    sp.name = name;
    sp.parent = bench_chainParent(c, i);
    sp.jnttype = MBS_JNT_REVOLUTE;
    sp.origin[2] = i == 0 ? 0 : -c->len;
    bench_chainAxis(i, sp.axis);
    sp.mass = c->mass;
    sp.com[2] = -c->len / 2;
    sp.inertia[0] = I[0], sp.inertia[1] = I[1], sp.inertia[2] = I[2];
    sp.q0[0] = bench_chainQ0(i);
    sp.qd0[0] = bench_chainQd0(i);
    mbsErr e = mbs_modelAddBody(m, &sp, NULL);
    if (e) {
      mbs_modelDestroy(&m);
      return e;
    }
  }
  mbsErr e = mbs_modelFinalize(m);
  if (e) {
    mbs_modelDestroy(&m);
    return e;
  }
  *out = m;
  return MBS_OK;
}

// ---------------------------------------------------------------- equivalence check

static double bench_maxAbsDiff(const double *a, const double *b, int n) {
  double d = 0;
  for (int i = 0; i < n; i++)
    if (fabs(a[i] - b[i]) > d || a[i] != a[i] || b[i] != b[i]) d = fabs(a[i] - b[i]);
  return d;
}

typedef struct {
  int n;
  double qdd_max;                   // max |qdd| of ABA
  double crba, mjcf, urdf, simbody; // max |qdd - qdd_aba|, NAN = not run
  char mjcf_err[300], urdf_err[300], sb_err[300];
} benchCheck;

static mbsErr bench_check(int n, int tree, benchCheck *ck) {
  benchChain c = bench_chainDefault(n);
  c.tree = tree;
  mbsModel *m = NULL;
  mbsState *s = NULL;
  mbsWork *w = NULL;
  memset(ck, 0, sizeof *ck);
  ck->n = n;
  ck->crba = ck->mjcf = ck->urdf = ck->simbody = NAN;
  MBS_CALL(bench_buildChain(&c, &m));
  MBS_CALL(mbs_stateCreate(m, &s));
  MBS_CALL(mbs_workCreate(m, &w));
  MBS_CALL(mbs_workEnableCrba(m, w));
  double *ref = calloc((size_t)n, sizeof *ref), *x = calloc((size_t)n, sizeof *x);
  MBS_CHECK(ref && x, MBS_ERR_NOMEM, "out of memory");
  mbs_fwdPosition(m, s, w);
  mbs_fwdVelocity(m, s, w);
  MBS_CALL(mbs_aba(m, w));
  memcpy(ref, w->qdd, (size_t)n * sizeof *ref);
  for (int i = 0; i < n; i++)
    if (fabs(ref[i]) > ck->qdd_max) ck->qdd_max = fabs(ref[i]);
  MBS_CALL(mbs_crba(m, w));
  ck->crba = bench_maxAbsDiff(w->qdd, ref, n);
#ifdef BENCH_HAVE_MUJOCO
  for (int fmt = 0; fmt < 2; fmt++) {
    char *err = fmt ? ck->urdf_err : ck->mjcf_err;
    benchPeer *p = bench_mujocoCreate(&c, fmt, err, 300);
    if (!p) continue;
    bench_mujocoEval(p);
    bench_mujocoQacc(p, x);
    *(fmt ? &ck->urdf : &ck->mjcf) = bench_maxAbsDiff(x, ref, n);
    bench_mujocoDestroy(p);
  }
#else
  snprintf(ck->mjcf_err, 300, "MuJoCo not built in");
  snprintf(ck->urdf_err, 300, "MuJoCo not built in");
#endif
#ifdef BENCH_HAVE_SIMBODY
  benchPeer *p = bench_simbodyCreate(&c, ck->sb_err, 300);
  if (p) {
    bench_simbodyEval(p);
    bench_simbodyQacc(p, x);
    ck->simbody = bench_maxAbsDiff(x, ref, n);
    bench_simbodyDestroy(p);
  }
#else
  snprintf(ck->sb_err, 300, "Simbody not built in");
#endif
  free(ref);
  free(x);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&m);
  return MBS_OK;
}

// ---------------------------------------------------------------- machine information

static void bench_cpuModel(char *out, size_t len) {
  snprintf(out, len, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) != 0) continue;
    char *v = strchr(line, ':');
    if (!v) break;
    v++;
    while (*v == ' ' || *v == '\t') v++;
    v[strcspn(v, "\n")] = 0;
    snprintf(out, len, "%s", v);
    break;
  }
  fclose(f);
}

// first three fields of /proc/loadavg (other work on the machine distorts wall-clock timings)
static void bench_loadavg(char *out, size_t len) {
  snprintf(out, len, "unknown");
  FILE *f = fopen("/proc/loadavg", "r");
  if (!f) return;
  double l1, l5, l15;
  if (fscanf(f, "%lf %lf %lf", &l1, &l5, &l15) == 3)
    snprintf(out, len, "%.2f %.2f %.2f", l1, l5, l15);
  fclose(f);
}

// JSON string with the few escapes our values can need
static void bench_jstr(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      fprintf(f, "\\%c", *s);
    else if ((unsigned char)*s < 0x20)
      fprintf(f, "\\u%04x", *s);
    else
      fputc(*s, f);
  }
  fputc('"', f);
}
static void bench_jnum(FILE *f, double v) {
  if (isfinite(v))
    fprintf(f, "%.17g", v);
  else
    fputs("null", f);
}

// ---------------------------------------------------------------- main

static void bench_usage(FILE *f) {
  fputs("usage: serial_baselines [--n N1,N2,...] [--min-time S] [--reps R] [--max-call S]\n"
        "                        [--max-setup S]\n"
        "                        [--methods LIST] [--json PATH] [--csv PATH] [--git SHA]\n"
        "                        [--no-peers] [--no-check] [--mujoco-format auto|mjcf|urdf]\n"
        "                        [--tree]\n"
        "  --tree      binary trees of the same links instead of chains\n"
        "  --n         bodies (default 8,16,...,4096; --tree: 7,15,...,4095)\n"
        "  --min-time  seconds per repetition (default 0.2)\n"
        "  --reps      repetitions per point, the best is kept (default 5)\n"
        "  --max-call  skip a method once its predicted time per call exceeds S (default 10)\n"
        "  --max-setup skip a peer once its predicted model load time exceeds S (default 300)\n"
        "  --methods   subset of aba,crba,rnea,mujoco,simbody,aba_kernel,rnea_kernel\n"
        "  --no-check  skip the equivalence check of the peers\n"
        "  --mujoco-format  MuJoCo model file: auto (MJCF while it loads, then URDF; default),\n"
        "              mjcf or urdf\n"
        "  --json/--csv  write the results there\n"
        "  --git       source revision to record (default: the one CMake saw)\n",
        f);
}

int main(int argc, char **argv) {
  static benchResult R;
  double min_time = 0.2, max_call = 10.0, max_setup = 300.0;
  int reps = 5, peers = 1, check = 1, mjformat = -1; // -1 = MJCF while it loads, then URDF
  int tree = 0, nset = 0;
  const char *json = NULL, *csv = NULL, *git = MBS_GIT_SHA, *only = NULL;
  R.nn = 0;
  for (int n = 8; n <= 4096; n *= 2) R.n[R.nn++] = n;
  for (int a = 1; a < argc; a++) {
    const char *o = argv[a], *v = a + 1 < argc ? argv[a + 1] : NULL;
    if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
      bench_usage(stdout);
      return 0;
    } else if (!strcmp(o, "--no-peers")) {
      peers = 0;
    } else if (!strcmp(o, "--no-check")) {
      check = 0;
    } else if (!strcmp(o, "--tree")) {
      tree = 1;
    } else if (!v) {
      bench_usage(stderr);
      return 2;
    } else if (!strcmp(o, "--n")) {
      R.nn = 0, nset = 1;
      for (char *t = strtok(argv[++a], ","); t && R.nn < BENCH_MAXN; t = strtok(NULL, ","))
        if (atoi(t) > 0) R.n[R.nn++] = atoi(t);
    } else if (!strcmp(o, "--mujoco-format")) {
      a++;
      mjformat = !strcmp(argv[a], "urdf") ? 1 : (!strcmp(argv[a], "mjcf") ? 0 : -1);
    } else if (!strcmp(o, "--methods")) {
      only = argv[++a];
    } else if (!strcmp(o, "--min-time")) {
      min_time = atof(argv[++a]);
    } else if (!strcmp(o, "--reps")) {
      reps = atoi(argv[++a]);
    } else if (!strcmp(o, "--max-call")) {
      max_call = atof(argv[++a]);
    } else if (!strcmp(o, "--max-setup")) {
      max_setup = atof(argv[++a]);
    } else if (!strcmp(o, "--json")) {
      json = argv[++a];
    } else if (!strcmp(o, "--csv")) {
      csv = argv[++a];
    } else if (!strcmp(o, "--git")) {
      git = argv[++a];
    } else {
      bench_usage(stderr);
      return 2;
    }
  }
  if (tree && !nset) // complete binary trees
    for (int i = 0; i < R.nn; i++) R.n[i] = R.n[i] - 1;
  if (R.nn == 0 || reps < 1 || !(min_time > 0)) {
    bench_usage(stderr);
    return 2;
  }

  // which methods exist in this build
  for (int k = 0; k < BENCH_NMETHOD; k++) {
    R.have[k] = 1;
    for (int i = 0; i < R.nn; i++) R.t[k][i] = R.setup[k][i] = -1;
    if (only) { // comma-separated subset
      char list[512];
      snprintf(list, sizeof list, ",%s,", only);
      char key[64];
      snprintf(key, sizeof key, ",%s,", bench_name[k]);
      if (!strstr(list, key)) {
        R.have[k] = 0;
        snprintf(R.note[k], 256, "not selected (--methods)");
      }
    }
  }
#ifndef BENCH_HAVE_MUJOCO
  R.have[BENCH_MUJOCO] = 0;
  snprintf(R.note[BENCH_MUJOCO], 256, "not built (libmujoco-dev not found at configure time)");
#endif
#ifndef BENCH_HAVE_SIMBODY
  R.have[BENCH_SIMBODY] = 0;
  snprintf(R.note[BENCH_SIMBODY], 256, "not built (libsimbody-dev not found at configure time)");
#endif
  if (!peers && (R.have[BENCH_MUJOCO] || R.have[BENCH_SIMBODY])) {
    R.have[BENCH_MUJOCO] = R.have[BENCH_SIMBODY] = 0;
    snprintf(R.note[BENCH_MUJOCO], 256, "skipped (--no-peers)");
    snprintf(R.note[BENCH_SIMBODY], 256, "skipped (--no-peers)");
  }

  // machine, build, date
  char cpu[256], date[64], host[256] = "unknown";
  bench_cpuModel(cpu, sizeof cpu);
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  gethostname(host, sizeof host - 1);
  char load0[64], load1[64];
  bench_loadavg(load0, sizeof load0);
  const char *family = tree ? "revolute binary tree" : "revolute chain";
  printf("# serial baselines: %s, %s\n", family, date);
  printf("# machine: %s, %ld cpus; build: %s %s, flags \"%s\", git %s\n", cpu, ncpu, MBS_COMPILER,
         MBS_BUILD_TYPE, BENCH_C_FLAGS, git);
  printf("# timing: >= %.2f s per repetition, best of %d; methods skipped once a call is "
         "predicted to exceed %.2f s\n",
         min_time, reps, max_call);

  // same physics: peers against ABA on a short chain (and a long one for the URDF path)
  benchCheck ck[2];
  int ncheck = 0;
  for (int c = 0; c < 2 * check; c++) {
    int n = (c == 0 ? 8 : 128) - tree;
    if (bench_check(n, tree, &ck[ncheck]) != MBS_OK) {
      fprintf(stderr, "serial_baselines: check at N=%d failed: %s\n", n, mbs_errMsg());
      return 1;
    }
    benchCheck *k = &ck[ncheck++];
    printf("# check N=%d: max|qdd_aba|=%.3g; max|qdd - qdd_aba|: crba %.2e", n, k->qdd_max,
           k->crba);
    printf(", mujoco-mjcf %s%.2e, mujoco-urdf %s%.2e, simbody %.2e\n", "", k->mjcf, "", k->urdf,
           k->simbody);
    if (k->mjcf_err[0]) printf("#   mujoco-mjcf: %s\n", k->mjcf_err);
    if (k->urdf_err[0]) printf("#   mujoco-urdf: %s\n", k->urdf_err);
    if (k->sb_err[0]) printf("#   simbody: %s\n", k->sb_err);
  }
  fflush(stdout);

  // the measurements. Pass 1 sets every point up and calibrates it (calls per repetition);
  // passes 2..reps repeat the points round-robin, so the repetitions of one point are spread
  // over the whole run and a burst of other work on the machine spoils at most some of them.
  static benchPoint P[BENCH_MAXN];
  static void (*fnk[BENCH_NMETHOD][BENCH_MAXN])(void *);
  static void *argk[BENCH_NMETHOD][BENCH_MAXN];
  static int repk[BENCH_NMETHOD][BENCH_MAXN];
  int mj_urdf_from = 0; // first N loaded from URDF (0 = none)
  for (int i = 0; i < R.nn; i++) {
    int n = R.n[i];
    benchPoint *pt = &P[i];
    pt->c = bench_chainDefault(n);
    pt->c.tree = tree;
    if (bench_buildChain(&pt->c, &pt->m) || mbs_stateCreate(pt->m, &pt->s) ||
        mbs_workCreate(pt->m, &pt->w)) {
      fprintf(stderr, "serial_baselines: setup N=%d failed: %s\n", n, mbs_errMsg());
      return 1;
    }
    pt->qdd = calloc((size_t)n, sizeof *pt->qdd);
    if (!pt->qdd) return 1;
    mbs_fwdPosition(pt->m, pt->s, pt->w);
    mbs_fwdVelocity(pt->m, pt->s, pt->w);
    mbs_aba(pt->m, pt->w);
    memcpy(pt->qdd, pt->w->qdd, (size_t)n * sizeof *pt->qdd);
    pt->ctx = (benchCtx){pt->m, pt->s, pt->w, pt->qdd};

    for (int k = 0; k < BENCH_NMETHOD; k++) {
      if (!R.have[k]) continue;
      if (i > 0 && R.t[k][i - 1] < 0 && R.note[k][0]) continue; // stopped earlier
      double pred = bench_predict(&R, k, i), spred = bench_predictArr(&R, R.setup[k], i);
      if (pred > max_call) {
        snprintf(R.note[k], 256, "skipped from N=%d on: predicted %.3g s per call > %.3g s", n,
                 pred, max_call);
        continue;
      }
      if (spred > max_setup) {
        snprintf(R.note[k], 256,
                 "skipped from N=%d on: model load predicted to take %.3g s > %.3g s", n, spred,
                 max_setup);
        continue;
      }
      void (*fn)(void *) = NULL;
      void *arg = &pt->ctx;
      char err[400] = "";
      (void)err; // unused when no peer is built in
      switch (k) {
      case BENCH_ABA:
        fn = bench_evalAba;
        break;
      case BENCH_CRBA:
        if (mbs_workEnableCrba(pt->m, pt->w)) {
          snprintf(R.note[k], 256, "skipped from N=%d on: %s", n, mbs_errMsg());
          continue;
        }
        fn = bench_evalCrba;
        break;
      case BENCH_RNEA:
        fn = bench_evalRnea;
        break;
      case BENCH_ABAK:
        fn = bench_evalAbaKernel;
        break;
      case BENCH_RNEAK:
        fn = bench_evalRneaKernel;
        break;
#ifdef BENCH_HAVE_MUJOCO
      case BENCH_MUJOCO: {
        // nested MJCF while it loads, URDF beyond
        int fmt = mjformat >= 0 ? mjformat : ((mj_urdf_from && n >= mj_urdf_from) ? 1 : 0);
        double ts = mbs_wtime();
        pt->mj = bench_mujocoCreate(&pt->c, fmt, err, sizeof err);
        if (!pt->mj && fmt == 0 && mjformat < 0) {
          printf("# N=%d: %s -> using URDF from here on\n", n, err);
          mj_urdf_from = n;
          pt->mj = bench_mujocoCreate(&pt->c, 1, err, sizeof err);
        }
        if (!pt->mj) {
          snprintf(R.note[k], 256, "failed from N=%d on: %s", n, err);
          continue;
        }
        R.setup[k][i] = mbs_wtime() - ts;
        fn = bench_mujocoEval;
        arg = pt->mj;
        break;
      }
#endif
#ifdef BENCH_HAVE_SIMBODY
      case BENCH_SIMBODY: {
        double ts = mbs_wtime();
        pt->sb = bench_simbodyCreate(&pt->c, err, sizeof err);
        if (!pt->sb) {
          snprintf(R.note[k], 256, "failed from N=%d on: %s", n, err);
          continue;
        }
        R.setup[k][i] = mbs_wtime() - ts;
        fn = bench_simbodyEval;
        arg = pt->sb;
        break;
      }
#endif
      default:
        continue;
      }
      fnk[k][i] = fn;
      argk[k][i] = arg;
      repk[k][i] = pred * (reps + 2) > 10 ? (reps < 3 ? reps : 3) : reps; // very slow: 3 reps
      R.calls[k][i] = bench_calibrate(fn, arg, min_time, &R.t[k][i], &R.cpu[k][i]);
    }
    if (R.t[BENCH_ABA][i] > 0) {
      printf("# N=%5d set up, first repetition: aba %.3g us", n, 1e6 * R.t[BENCH_ABA][i]);
      if (R.t[BENCH_MUJOCO][i] > 0) printf(", mujoco %.3g us", 1e6 * R.t[BENCH_MUJOCO][i]);
      if (R.t[BENCH_SIMBODY][i] > 0) printf(", simbody %.3g us", 1e6 * R.t[BENCH_SIMBODY][i]);
      printf("\n");
      fflush(stdout);
    }
  }
  for (int pass = 1; pass < reps; pass++) {
    for (int i = 0; i < R.nn; i++)
      for (int k = 0; k < BENCH_NMETHOD; k++) {
        if (!(R.t[k][i] > 0) || pass >= repk[k][i]) continue;
        double t, c;
        bench_rep(fnk[k][i], argk[k][i], R.calls[k][i], &t, &c);
        if (t < R.t[k][i]) R.t[k][i] = t;
        if (c < R.cpu[k][i]) R.cpu[k][i] = c;
      }
    printf("# pass %d of %d done\n", pass + 1, reps);
    fflush(stdout);
  }
  for (int i = 0; i < R.nn; i++) {
#ifdef BENCH_HAVE_MUJOCO
    bench_mujocoDestroy(P[i].mj);
#endif
#ifdef BENCH_HAVE_SIMBODY
    bench_simbodyDestroy(P[i].sb);
#endif
    free(P[i].qdd);
    mbs_workDestroy(&P[i].w);
    mbs_stateDestroy(&P[i].s);
    mbs_modelDestroy(&P[i].m);
  }
  for (int k = 0; k < BENCH_NMETHOD; k++) R.expo[k] = bench_fitExponent(&R, k, 64 - tree);
  bench_loadavg(load1, sizeof load1);

  // summary against the targets: aba <= 200 ns/body at N=1024, faster than each peer at every N
  double aba1024 = NAN, aba1024cpu = NAN;
  int faster[2] = {-1, -1}; // per peer: -1 = no common point, 0 = slower somewhere, 1 = faster
  char slower[2][256] = {"", ""};
  for (int i = 0; i < R.nn; i++) {
    if (R.n[i] == 1024 - tree && R.t[BENCH_ABA][i] > 0) { // trees: 1023 bodies
      aba1024 = 1e9 * R.t[BENCH_ABA][i] / R.n[i];
      aba1024cpu = 1e9 * R.cpu[BENCH_ABA][i] / R.n[i];
    }
    for (int q = 0; q < 2; q++) {
      double tp = R.t[q ? BENCH_SIMBODY : BENCH_MUJOCO][i], ta = R.t[BENCH_ABA][i];
      if (!(tp > 0 && ta > 0)) continue;
      if (faster[q] < 0) faster[q] = 1;
      if (ta >= tp) {
        faster[q] = 0;
        size_t l = strlen(slower[q]);
        snprintf(slower[q] + l, sizeof slower[q] - l, "%s%d", l ? "," : "", R.n[i]);
      }
    }
  }

  // table: microseconds per evaluation and nanoseconds per body
  static const int cols[] = {BENCH_ABA, BENCH_CRBA, BENCH_RNEA, BENCH_MUJOCO, BENCH_SIMBODY};
  const int ncol = 5;
  printf("\n%6s", "N");
  for (int c = 0; c < ncol; c++) printf(" | %20s", bench_name[cols[c]]);
  printf("\n%6s", "");
  for (int c = 0; c < ncol; c++) printf(" | %10s %9s", "us/eval", "ns/body");
  printf("\n");
  for (int i = 0; i < R.nn; i++) {
    printf("%6d", R.n[i]);
    for (int c = 0; c < ncol; c++) {
      double t = R.t[cols[c]][i];
      if (t > 0)
        printf(" | %10.3f %9.1f", 1e6 * t, 1e9 * t / R.n[i]);
      else
        printf(" | %10s %9s", "-", "-");
    }
    printf("\n");
  }
  printf("%6s", "exp");
  for (int c = 0; c < ncol; c++) printf(" | %20.2f", R.expo[cols[c]]);
  printf("\n(growth exponent: least squares of log t vs log N over N >= %d)\n", 64 - tree);

  // the same points in thread CPU time (robust against other work on the machine)
  printf("\nthread CPU time of the same repetitions (best), us/eval and ns/body:\n");
  for (int i = 0; i < R.nn; i++) {
    printf("%6d", R.n[i]);
    for (int c = 0; c < ncol; c++) {
      double t = R.cpu[cols[c]][i];
      if (R.t[cols[c]][i] > 0)
        printf(" | %10.3f %9.1f", 1e6 * t, 1e9 * t / R.n[i]);
      else
        printf(" | %10s %9s", "-", "-");
    }
    printf("\n");
  }
  if (R.have[BENCH_ABAK] || R.have[BENCH_RNEAK]) {
    printf("\nkernels alone (position/velocity stages excluded), ns per body:\n%6s | %10s | %10s\n",
           "N", "aba", "rnea");
    for (int i = 0; i < R.nn; i++) {
      printf("%6d", R.n[i]);
      for (int k = BENCH_ABAK; k <= BENCH_RNEAK; k++)
        if (R.t[k][i] > 0)
          printf(" | %10.1f", 1e9 * R.t[k][i] / R.n[i]);
        else
          printf(" | %10s", "-");
      printf("\n");
    }
    printf("%6s | %10.2f | %10.2f\n", "exp", R.expo[BENCH_ABAK], R.expo[BENCH_RNEAK]);
  }
  for (int k = 0; k < BENCH_NMETHOD; k++)
    if (R.note[k][0]) printf("note %s: %s\n", bench_name[k], R.note[k]);
  if (mjformat == 1)
    printf("note mujoco: URDF for every N (--mujoco-format urdf)\n");
  else if (mjformat == 0)
    printf("note mujoco: MJCF for every N (--mujoco-format mjcf)\n");
  else if (mj_urdf_from)
    printf("note mujoco: MJCF for N < %d, URDF from N=%d on\n", mj_urdf_from, mj_urdf_from);
  printf("summary: aba at N=%d: %.1f ns/body wall clock, %.1f ns/body thread CPU time (target "
         "<= 200)\n",
         1024 - tree, aba1024, aba1024cpu);
  for (int q = 0; q < 2; q++)
    printf("summary: aba faster than %s at every measured N: %s%s%s\n", q ? "simbody" : "mujoco",
           faster[q] < 0 ? "n/a" : (faster[q] ? "yes" : "no, slower at N="), slower[q], "");
  printf("load average (1/5/15 min) at start: %s, at end: %s\n", load0, load1);

  // CSV: one row per N, seconds per call (empty = not measured)
  if (csv) {
    FILE *f = fopen(csv, "w");
    if (!f) {
      fprintf(stderr, "serial_baselines: cannot write %s\n", csv);
      return 1;
    }
    fprintf(f, "n");
    for (int k = 0; k < BENCH_NMETHOD; k++) fprintf(f, ",%s_s", bench_name[k]);
    for (int k = 0; k < BENCH_NMETHOD; k++) fprintf(f, ",%s_cpu_s", bench_name[k]);
    fprintf(f, "\n");
    for (int i = 0; i < R.nn; i++) {
      fprintf(f, "%d", R.n[i]);
      for (int k = 0; k < BENCH_NMETHOD; k++)
        if (R.t[k][i] > 0)
          fprintf(f, ",%.6e", R.t[k][i]);
        else
          fprintf(f, ",");
      for (int k = 0; k < BENCH_NMETHOD; k++)
        if (R.t[k][i] > 0)
          fprintf(f, ",%.6e", R.cpu[k][i]);
        else
          fprintf(f, ",");
      fprintf(f, "\n");
    }
    fclose(f);
  }

  // JSON report
  if (json) {
    FILE *f = fopen(json, "w");
    if (!f) {
      fprintf(stderr, "serial_baselines: cannot write %s\n", json);
      return 1;
    }
    fprintf(f, "{\n  \"schema\": \"mbspar.bench.serial/1\",\n  \"date\": ");
    bench_jstr(f, date);
    fprintf(f, ",\n  \"machine\": {\"cpu_model\": ");
    bench_jstr(f, cpu);
    fprintf(f, ", \"nproc\": %ld, \"host\": ", ncpu);
    bench_jstr(f, host);
    fprintf(f, ", \"loadavg_start\": ");
    bench_jstr(f, load0);
    fprintf(f, ", \"loadavg_end\": ");
    bench_jstr(f, load1);
    fprintf(f, "},\n  \"build\": {\"compiler\": ");
    bench_jstr(f, MBS_COMPILER);
    fprintf(f, ", \"build_type\": ");
    bench_jstr(f, MBS_BUILD_TYPE);
    fprintf(f, ", \"c_flags\": ");
    bench_jstr(f, BENCH_C_FLAGS);
    fprintf(f, ", \"git\": ");
    bench_jstr(f, git);
    fprintf(f, ", \"mujoco\": ");
#ifdef BENCH_HAVE_MUJOCO
    bench_jstr(f, bench_mujocoVersion());
#else
    fputs("null", f);
#endif
    fprintf(f, ", \"simbody\": ");
#ifdef BENCH_HAVE_SIMBODY
    bench_jstr(f, bench_simbodyVersion());
#else
    fputs("null", f);
#endif
    fprintf(f,
            "},\n  \"model\": {\"type\": \"%s, axes alternating y/x\", \"len\": "
            "0.1, \"radius\": 0.01, \"mass\": 0.1, \"gravity\": 9.81},\n",
            family);
    fprintf(f,
            "  \"timing\": {\"min_time_s\": %g, \"reps\": %d, \"max_call_s\": %g, "
            "\"max_setup_s\": %g, \"statistic\": \"best of reps, seconds per call\"},\n",
            min_time, reps, max_call, max_setup);
    fprintf(f, "  \"check\": [");
    for (int c = 0; c < ncheck; c++) {
      fprintf(f, "%s\n    {\"n\": %d, \"qdd_max\": ", c ? "," : "", ck[c].n);
      bench_jnum(f, ck[c].qdd_max);
      fprintf(f, ", \"maxdiff_crba\": ");
      bench_jnum(f, ck[c].crba);
      fprintf(f, ", \"maxdiff_mujoco_mjcf\": ");
      bench_jnum(f, ck[c].mjcf);
      fprintf(f, ", \"maxdiff_mujoco_urdf\": ");
      bench_jnum(f, ck[c].urdf);
      fprintf(f, ", \"maxdiff_simbody\": ");
      bench_jnum(f, ck[c].simbody);
      fprintf(f, "}");
    }
    fprintf(f, "\n  ],\n  \"summary\": {\"aba_ns_per_body_n1024\": ");
    bench_jnum(f, aba1024);
    fprintf(f, ", \"aba_cpu_ns_per_body_n1024\": ");
    bench_jnum(f, aba1024cpu);
    fprintf(f, ", \"aba_target_ns_per_body\": 200");
    for (int q = 0; q < 2; q++) {
      fprintf(f, ", \"aba_faster_than_%s\": %s, \"aba_slower_than_%s_at_n\": [%s]",
              q ? "simbody" : "mujoco", faster[q] < 0 ? "null" : (faster[q] ? "true" : "false"),
              q ? "simbody" : "mujoco", slower[q]);
    }
    fprintf(f, "},\n  \"n\": [");
    for (int i = 0; i < R.nn; i++) fprintf(f, "%s%d", i ? ", " : "", R.n[i]);
    fprintf(f, "],\n  \"mujoco_format\": \"%s\", \"mujoco_urdf_from_n\": %d,\n  \"methods\": {",
            mjformat < 0 ? "auto" : (mjformat ? "urdf" : "mjcf"), mj_urdf_from);
    for (int k = 0; k < BENCH_NMETHOD; k++) {
      fprintf(f, "%s\n    \"%s\": {\"what\": ", k ? "," : "", bench_name[k]);
      bench_jstr(f, bench_what[k]);
      fprintf(f, ", \"available\": %s, \"note\": ", R.have[k] ? "true" : "false");
      bench_jstr(f, R.note[k]);
      fprintf(f, ", \"growth_exponent\": ");
      bench_jnum(f, R.expo[k]);
      fprintf(f, ",\n      \"s_per_eval\": [");
      for (int i = 0; i < R.nn; i++) {
        fputs(i ? ", " : "", f);
        bench_jnum(f, R.t[k][i] > 0 ? R.t[k][i] : NAN);
      }
      fprintf(f, "],\n      \"ns_per_body\": [");
      for (int i = 0; i < R.nn; i++) {
        fputs(i ? ", " : "", f);
        bench_jnum(f, R.t[k][i] > 0 ? 1e9 * R.t[k][i] / R.n[i] : NAN);
      }
      fprintf(f, "],\n      \"cpu_s_per_eval\": [");
      for (int i = 0; i < R.nn; i++) {
        fputs(i ? ", " : "", f);
        bench_jnum(f, R.t[k][i] > 0 ? R.cpu[k][i] : NAN);
      }
      fprintf(f, "],\n      \"setup_s\": [");
      for (int i = 0; i < R.nn; i++) {
        fputs(i ? ", " : "", f);
        bench_jnum(f, R.setup[k][i] > 0 ? R.setup[k][i] : NAN);
      }
      fprintf(f, "],\n      \"calls_per_rep\": [");
      for (int i = 0; i < R.nn; i++) fprintf(f, "%s%ld", i ? ", " : "", R.calls[k][i]);
      fprintf(f, "]}");
    }
    fprintf(f, "\n  }\n}\n");
    fclose(f);
  }
  return 0;
}
