/// \file main.c
/// The mbspar driver: `mbspar [VERB] CONFIG [options]` (docs/cli.md).
///
/// Communication pattern: rank 0 reads the config file and broadcasts its bytes
/// (mbsp_bcastFile); every rank parses the same text with the same --set overrides and builds the
/// same model, so no further setup traffic is needed. Every fallible phase ends in mbsp_agreeErr,
/// so all ranks leave together with the same exit code and only rank 0 prints the one-line
/// message. The serial methods (aba, crba) and inverse dynamics run on rank 0 while the other
/// ranks wait at the next agreement; the parallel constraint-force methods will run on every rank
/// inside accel_compute. MPI is reached only through the mbsp_* wrappers.
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "build_info.h"
#include "affinity.h"
#include "threads.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_cfs.h"
#include "mbspar/mbs_critpath.h"
#include "mbspar/mbs_engine.h"
#include "petsc_ref.h"
#include "rankreport.h"
#include "sim.h"
#include "mbspar/mbs_parallel.h"
#include "mbspar/mbs_report.h"
#include "mbspar/mbs_trajectory.h"
#include "mbspar/mbspar.h"

typedef enum {
  MBS_VERB_RUN,
  MBS_VERB_ACCEL,
  MBS_VERB_INVERSE,
  MBS_VERB_STATIC,
  MBS_VERB_CPA,
  MBS_VERB_CHECK,
  MBS_VERB_COUNT
} mbsVerb;

static const char *const mbs_verb_names[MBS_VERB_COUNT] = {"run",    "accel", "inverse",
                                                           "static", "cpa",   "check"};

/// The command line.
typedef struct {
  int verb;           ///< mbsVerb
  const char *config; ///< CONFIG path
  const char **sets;  ///< (nset) --set KEY=VALUE
  int nset;
  const char *json;      ///< --json PATH or "-" (NULL: none)
  const char *out;       ///< --out DIR (NULL: none)
  int repeat;            ///< --repeat K
  const char *bind;      ///< --bind core|numa|none
  const char *restart;   ///< --restart FILE
  double progress_every; ///< --progress SECONDS (batch logs)
  int quiet, force, help, version;
  int argc;
  char **argv;
} mbsCli;

static const char mbs_usage[] =
    "usage: mbspar [VERB] CONFIG [options]\n"
    "\n"
    "verbs:\n"
    "  run       simulate (default verb): PETSc TS over the distributed state, outputs in --out\n"
    "  accel     one forward-dynamics evaluation at the initial state\n"
    "  inverse   joint forces along the prescribed motion of the config's inverse group\n"
    "  static    static equilibrium by energy drainage (docs/static.md)\n"
    "  cpa       critical-path analysis of one evaluation (docs/cpa.md)\n"
    "  check     validate the input and summarise the model\n"
    "\n"
    "options:\n"
    "  --set KEY=VALUE  override any config key by dotted path (repeatable), e.g.\n"
    "                   --set solver.method=aba --set model.chain.n=64 "
    "--set model.gravity=[0,0,-1]\n"
    "  --json PATH|-    write the machine-readable result (- = standard output)\n"
    "  --out DIR        write result files into DIR (VERB.json, inverse.csv; run: trajectory,\n"
    "                   energy.csv, run.json, checkpoint.bin; default output.dir)\n"
    "  --force          overwrite existing files in --out\n"
    "  --repeat K       accel: time K evaluations and report the mean (time_per_eval_s)\n"
    "  --restart FILE   run: continue from a checkpoint (output.checkpoint_every, or the one\n"
    "                   written on SIGTERM/SIGUSR1, after which mbspar exits with code 10)\n"
    "  --progress SEC   run: seconds between progress lines when stderr is not a terminal\n"
    "                   (default 10; a terminal gets a live line)\n"
    "  --bind MODE      bind each rank (and its threads) when the launcher did not:\n"
    "                   core, numa or none (default: leave as launched)\n"
    "  cpa options: --method aba|crba|direct|jcg|jacobi|gs|sor|chebyshev\n"
    "                   --grain op|block|body|flop\n"
    "                   --iterations K (iterative methods; default: measured)\n"
    "                   --procs PMAX (table P = 1, 2, 4 .. PMAX; 1024)\n"
    "                   --dot FILE (Graphviz, <= 2000 nodes)  --calibrate (time the kernels\n"
    "                   and, with >= 2 ranks, messages)  --latency S  --bandwidth BYTES/S\n"
    "                   --flop-time S\n"
    "  -ksp_* -pc_* ... PETSc options, passed to PETSc (solver.method = petsc)\n"
    "  --quiet          no table on standard output\n"
    "  --help           this text\n"
    "  --version        version, git sha, MPI library\n"
    "\n"
    "exit codes: 0 ok, 2 bad input or usage, 3 I/O error, 4 out of memory, 5 numerical failure,\n"
    "            6 MPI error, 8 not available, 9 internal error, 10 run stopped by SIGTERM or\n"
    "            SIGUSR1 after writing a checkpoint (docs/cli.md)\n";

// ---------------------------------------------------------------- command line

static mbsErr mbs_cliParse(int argc, char **argv, mbsCli *cli) {
  memset(cli, 0, sizeof *cli);
  cli->verb = -1;
  cli->repeat = 1;
  cli->progress_every = 10;
  cli->argc = argc;
  cli->argv = argv;
  cli->sets = calloc((size_t)(argc > 0 ? argc : 1), sizeof *cli->sets);
  if (!cli->sets) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  const char *pos[2] = {NULL, NULL};
  int npos = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *val = NULL;
    if (a[0] == '-' && a[1]) {
      // --opt=value or --opt value
      char opt[64];
      const char *eq = strchr(a, '=');
      size_t n = eq ? (size_t)(eq - a) : strlen(a);
      if (n >= sizeof opt) n = sizeof opt - 1;
      memcpy(opt, a, n);
      opt[n] = 0;
      // single-dash options belong to PETSc (-ksp_type cg, -pc_type jacobi, -log_view, ...):
      // they are passed through to PetscInitialize, with a value if one follows
      if (a[1] != '-' && a[2]) {
        if (i + 1 < argc && argv[i + 1][0] != '-') i++;
        continue;
      }
      int takes = !strcmp(opt, "--set") || !strcmp(opt, "--json") || !strcmp(opt, "--out") ||
                  !strcmp(opt, "--repeat") || !strcmp(opt, "--bind") || !strcmp(opt, "--restart") ||
                  !strcmp(opt, "--progress");
      // cpa options: accepted here, read by mbs_verbCpa
      int cpa_opt = !strcmp(opt, "--method") || !strcmp(opt, "--grain") || !strcmp(opt, "--dot") ||
                    !strcmp(opt, "--iterations") || !strcmp(opt, "--procs") ||
                    !strcmp(opt, "--latency") || !strcmp(opt, "--bandwidth") ||
                    !strcmp(opt, "--flop-time");
      takes = takes || cpa_opt;
      if (takes) {
        if (eq)
          val = eq + 1;
        else if (i + 1 < argc)
          val = argv[++i];
        else
          return mbs_errSet(MBS_ERR_USAGE, "mbspar: option %s needs a value (see mbspar --help)",
                            opt);
      } else if (eq) {
        return mbs_errSet(MBS_ERR_USAGE, "mbspar: option %s takes no value (see mbspar --help)",
                          opt);
      }
      if (!strcmp(opt, "--set")) {
        if (!strchr(val, '='))
          return mbs_errSet(MBS_ERR_USAGE,
                            "mbspar: --set %s: expected KEY=VALUE, e.g. --set solver.method=aba",
                            val);
        cli->sets[cli->nset++] = val;
      } else if (!strcmp(opt, "--json")) {
        if (!val[0]) return mbs_errSet(MBS_ERR_USAGE, "mbspar: --json needs a path or -");
        cli->json = val;
      } else if (!strcmp(opt, "--out")) {
        if (!val[0]) return mbs_errSet(MBS_ERR_USAGE, "mbspar: --out needs a directory");
        cli->out = val;
      } else if (!strcmp(opt, "--restart")) {
        if (!val[0]) return mbs_errSet(MBS_ERR_USAGE, "mbspar: --restart needs a checkpoint file");
        cli->restart = val;
      } else if (!strcmp(opt, "--progress")) {
        char *end = NULL;
        double sec = strtod(val, &end);
        if (end == val || *end || !(sec > 0) || !(sec < 1e9))
          return mbs_errSet(MBS_ERR_USAGE, "mbspar: --progress %s: expected seconds > 0", val);
        cli->progress_every = sec;
      } else if (!strcmp(opt, "--bind")) {
        if (strcmp(val, "core") && strcmp(val, "numa") && strcmp(val, "none"))
          return mbs_errSet(MBS_ERR_USAGE, "mbspar: --bind %s: expected core, numa or none", val);
        cli->bind = val;
      } else if (!strcmp(opt, "--repeat")) {
        char *end = NULL;
        long k = strtol(val, &end, 10);
        if (end == val || *end || k < 1 || k > 1000000000L)
          return mbs_errSet(MBS_ERR_USAGE,
                            "mbspar: --repeat %s: expected a positive integer number of "
                            "evaluations",
                            val);
        cli->repeat = (int)k;
      } else if (cpa_opt || !strcmp(opt, "--calibrate")) {
        // read again by mbs_verbCpa
      } else if (!strcmp(opt, "--quiet") || !strcmp(opt, "-q")) {
        cli->quiet = 1;
      } else if (!strcmp(opt, "--force")) {
        cli->force = 1;
      } else if (!strcmp(opt, "--help") || !strcmp(opt, "-h")) {
        cli->help = 1;
      } else if (!strcmp(opt, "--version") || !strcmp(opt, "-V")) {
        cli->version = 1;
      } else {
        return mbs_errSet(MBS_ERR_USAGE, "mbspar: unknown option %s (see mbspar --help)", a);
      }
    } else {
      if (npos == 2)
        return mbs_errSet(MBS_ERR_USAGE, "mbspar: unexpected argument \"%s\" (see mbspar --help)",
                          a);
      pos[npos++] = a;
    }
  }
  if (cli->help || cli->version) return MBS_OK;
  // VERB CONFIG or CONFIG
  if (npos >= 1)
    for (int v = 0; v < MBS_VERB_COUNT; v++)
      if (!strcmp(pos[0], mbs_verb_names[v])) cli->verb = v;
  if (cli->verb >= 0) {
    if (npos < 2)
      return mbs_errSet(MBS_ERR_USAGE, "mbspar: missing CONFIG after \"%s\" (see mbspar --help)",
                        pos[0]);
    cli->config = pos[1];
  } else {
    if (npos == 0)
      return mbs_errSet(MBS_ERR_USAGE,
                        "mbspar: missing CONFIG (usage: mbspar [VERB] CONFIG [options]; see "
                        "mbspar --help)");
    if (npos == 2)
      return mbs_errSet(MBS_ERR_USAGE,
                        "mbspar: unknown verb \"%s\" (verbs: run, accel, inverse, static, cpa, "
                        "check)",
                        pos[0]);
    cli->verb = MBS_VERB_RUN;
    cli->config = pos[0];
  }
  return MBS_OK;
}

// ---------------------------------------------------------------- output files

static int mbs_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

// DIR/NAME into buf
static mbsErr mbs_outPath(const mbsCli *cli, const char *name, char *buf, size_t n) {
  int w = snprintf(buf, n, "%s/%s", cli->out, name);
  MBS_CHECK(w > 0 && (size_t)w < n, MBS_ERR_USAGE, "mbspar: --out %s: path too long", cli->out);
  return MBS_OK;
}

// create --out DIR if needed and refuse to overwrite the files this verb writes (rank 0)
static mbsErr mbs_outPrepare(const mbsCli *cli, const char *const *names, int nnames) {
  if (!cli->out) return MBS_OK;
  struct stat st;
  if (stat(cli->out, &st) != 0) {
    if (mkdir(cli->out, 0777) != 0)
      return mbs_errSet(MBS_ERR_IO, "mbspar: --out %s: cannot create directory (%s)", cli->out,
                        strerror(errno));
  } else if (!S_ISDIR(st.st_mode)) {
    return mbs_errSet(MBS_ERR_IO, "mbspar: --out %s: exists and is not a directory", cli->out);
  }
  for (int k = 0; k < nnames; k++) {
    char p[4096];
    MBS_CALL(mbs_outPath(cli, names[k], p, sizeof p));
    if (mbs_exists(p) && !cli->force)
      return mbs_errSet(MBS_ERR_IO, "mbspar: %s exists; not overwriting it (use --force)", p);
  }
  return MBS_OK;
}

// ---------------------------------------------------------------- report sections

static void mbs_jsonBuild(mbsJson *j) {
  mbs_jsonBeginObject(j, "build");
  mbs_jsonString(j, "version", MBS_VERSION);
  mbs_jsonString(j, "git_sha", MBS_GIT_SHA);
  mbs_jsonString(j, "compiler", MBS_COMPILER);
  mbs_jsonString(j, "build_type", MBS_BUILD_TYPE);
  mbs_jsonString(j, "c_flags", MBS_C_FLAGS);
  mbs_jsonString(j, "mpi_library", mbsp_libraryVersion());
  mbs_jsonString(j, "petsc", MBS_PETSC_VERSION);
  mbs_jsonString(j, "hwloc", MBS_HWLOC_VERSION);
  mbs_jsonString(j, "libconfig", MBS_LIBCONFIG_VERSION);
  mbs_jsonEndObject(j);
}

static void mbs_jsonRun(mbsJson *j, const mbsCli *cli, mbspComm *comm) {
  char host[256] = "unknown", date[64] = "";
  if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "unknown");
  host[sizeof host - 1] = 0;
  time_t now = time(NULL);
  struct tm tmv;
  if (gmtime_r(&now, &tmv)) strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tmv);
  mbs_jsonBeginObject(j, "run");
  mbs_jsonString(j, "verb", mbs_verb_names[cli->verb]);
  mbs_jsonInt(j, "ranks", mbsp_size(comm));
  mbs_jsonInt(j, "mpi_thread_level", mbsp_threadLevel(comm));
  mbs_jsonString(j, "host", host);
  mbs_jsonString(j, "date", date);
  mbs_jsonBeginArray(j, "argv");
  for (int k = 0; k < cli->argc; k++) mbs_jsonString(j, NULL, cli->argv[k]);
  mbs_jsonEndArray(j);
  mbs_jsonEndObject(j);
}

static void mbs_jointCounts(const mbsModel *m, int *cnt) {
  for (int t = 0; t < MBS_JNT_COUNT; t++) cnt[t] = 0;
  for (int b = 0; b < m->nbody; b++) cnt[m->body_jnttype[b]]++;
}

static void mbs_jsonModel(mbsJson *j, const mbsModel *m) {
  int cnt[MBS_JNT_COUNT];
  mbs_jointCounts(m, cnt);
  mbs_jsonBeginObject(j, "model");
  mbs_jsonInt(j, "bodies", m->nbody);
  mbs_jsonInt(j, "nq", m->nq);
  mbs_jsonInt(j, "dofs", m->nv);
  mbs_jsonInt(j, "nlam", m->nlam);
  mbs_jsonInt(j, "max_depth", m->maxdepth);
  mbs_jsonNumber(j, "total_mass", mbs_modelTotalMass(m));
  mbs_jsonNumberArray(j, "gravity", m->gravity, 3);
  mbs_jsonBeginObject(j, "joint_types");
  for (int t = 0; t < MBS_JNT_COUNT; t++)
    if (cnt[t]) mbs_jsonInt(j, mbs_jntName(t), cnt[t]);
  mbs_jsonEndObject(j);
  mbs_jsonEndObject(j);
}

// the common head of every report
static void mbs_jsonHead(mbsJson *j, const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg,
                         const mbsModel *m) {
  mbs_jsonString(j, "schema", "mbspar-report-1");
  mbs_jsonBuild(j);
  mbs_jsonRun(j, cli, comm);
  mbs_jsonInt(j, "ranks", mbsp_size(comm));
  mbs_jsonBeginObject(j, "config");
  mbs_configWriteJson(cfg, j);
  mbs_jsonEndObject(j);
  mbs_jsonModel(j, m);
}

typedef void (*mbsJsonBody)(mbsJson *j, const void *ctx);

// write one report to every requested target (--json PATH|-, --out DIR/VERB.json); rank 0 only
static mbsErr mbs_emit(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, const mbsModel *m,
                       mbsJsonBody body, const void *ctx) {
  const char *targets[2] = {cli->json, NULL};
  char outp[4096];
  if (cli->out) {
    char name[64];
    snprintf(name, sizeof name, "%s.json", mbs_verb_names[cli->verb]);
    MBS_CALL(mbs_outPath(cli, name, outp, sizeof outp));
    targets[1] = outp;
  }
  for (int k = 0; k < 2; k++) {
    if (!targets[k]) continue;
    mbsJson *j;
    MBS_CALL(mbs_jsonOpen(targets[k], &j));
    mbs_jsonHead(j, cli, comm, cfg, m);
    body(j, ctx);
    MBS_CALL(mbs_jsonClose(&j));
  }
  return MBS_OK;
}

// ---------------------------------------------------------------- check

static void mbs_checkJson(mbsJson *j, const void *ctx) {
  (void)ctx;
  mbs_jsonBool(j, "valid", 1);
}

static void mbs_printSummary(const mbsConfig *cfg, const mbsModel *m) {
  int cnt[MBS_JNT_COUNT];
  mbs_jointCounts(m, cnt);
  printf("model %s\n", cfg->filename);
  printf("  %-26s %d\n", "bodies", m->nbody);
  printf("  %-26s %d\n", "degrees of freedom (nv)", m->nv);
  printf("  %-26s %d\n", "position coordinates (nq)", m->nq);
  printf("  %-26s %d\n", "constraint components", m->nlam);
  printf("  %-26s %d\n", "max depth", m->maxdepth);
  printf("  %-26s %.6g kg\n", "total mass", mbs_modelTotalMass(m));
  printf("  %-26s [%g, %g, %g] m/s^2\n", "gravity", m->gravity[0], m->gravity[1], m->gravity[2]);
  printf("  %-26s", "joint types");
  for (int t = 0; t < MBS_JNT_COUNT; t++)
    if (cnt[t]) printf(" %s %d", mbs_jntName(t), cnt[t]);
  printf("\n");
  printf("  %-26s %s (tol %g, max_iter %d, warm start %s)\n", "solver",
         mbs_solverName(m->opt.solver), m->opt.tol, m->opt.max_iter,
         mbs_warmStartName(m->opt.warm_start));
  printf("  %-26s %s (dt %g s, t_end %g s)\n", "integrator", mbs_integratorName(m->opt.integrator),
         m->opt.dt, m->opt.t_end);
}

// ---------------------------------------------------------------- accel

typedef struct {
  const mbsModel *m;
  const mbsWork *w;
  const mbsReal *wrench; // (nbody x 6)
  double time_per_eval;
  int repeat;
  double residual;
  const mbspRankReport *rr; // timers over the ranks, decomposition, affinity
} mbsAccelOut;

static int accel_isSerial(int method) {
  return method == MBS_SOLVER_ABA || method == MBS_SOLVER_CRBA;
}

/// One forward-dynamics evaluation at the state \p s with the method m->opt.solver. Collective:
/// every rank calls it. The serial baselines (aba, crba) run on rank 0 only (the other ranks
/// return at once and wait at the caller's agreement); the constraint-force methods run on the
/// distributed engine \p eng. Writes (rank 0, serial) or the engine's workspace (distributed).
static mbsErr accel_compute(mbspComm *comm, const mbsModel *m, mbsState *s, mbsWork *w,
                            mbspEngine *eng) {
  if (accel_isSerial(m->opt.solver)) {
    if (mbsp_rank(comm) != 0) return MBS_OK;
    MBS_CALL(mbs_forward(m, s, w));
    w->stat.iterations = 0;
    w->stat.reason = MBS_REASON_CONVERGED_DIRECT;
    return MBS_OK;
  }
  return mbsp_engineForward(eng, s);
}

static void mbs_accelJson(mbsJson *j, const void *ctx) {
  const mbsAccelOut *a = ctx;
  const mbsModel *m = a->m;
  const mbsWork *w = a->w;
  mbs_jsonBeginObject(j, "solver");
  mbs_jsonString(j, "method", mbs_solverName(m->opt.solver));
  mbs_jsonInt(j, "iterations", w->stat.iterations);
  mbs_jsonNumber(j, "residual", w->stat.residual);
  mbs_jsonBool(j, "converged", w->stat.reason > 0);
  mbs_jsonString(j, "reason", mbs_reasonName(w->stat.reason));
  mbs_jsonNumber(j, "tol", m->opt.tol);
  mbs_jsonEndObject(j);
  mbs_jsonNumber(j, "eom_residual", a->residual);
  mbs_jsonInt(j, "repeat", a->repeat);
  mbs_jsonNumber(j, "time_per_eval_s", a->time_per_eval);
  mbs_jsonNumberArray(j, "qdd", w->qdd, m->nv);
  mbs_jsonNumberArray(j, "lambda", w->lam, m->nlam);
  mbs_jsonBeginArray(j, "joint_wrench");
  for (int b = 0; b < m->nbody; b++) mbs_jsonNumberArray(j, NULL, a->wrench + 6 * b, 6);
  mbs_jsonEndArray(j);
  // per-phase timers over the ranks (seconds, all evaluations of --repeat), decomposition,
  // placement
  mbsp_rankReportJson(a->rr, j);
}

static mbsErr mbs_verbAccel(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg,
                            const mbsModel *m) {
  int rank = mbsp_rank(comm), size = mbsp_size(comm);
  int serial = accel_isSerial(m->opt.solver);
  mbsState *s = NULL;
  mbsWork *w = NULL;
  mbspEngine *eng = NULL;
  mbsReal *wrench = NULL;
  mbspRankReport rr;
  memset(&rr, 0, sizeof rr);
  static const char *const files[] = {"accel.json"};
  mbsErr e = rank == 0 ? mbs_outPrepare(cli, files, 1) : MBS_OK;
  if (!e) e = mbs_stateCreate(m, &s);
  if (!e) e = mbs_workCreate(m, &w);
  if (!e && rank == 0) {
    wrench = malloc((size_t)m->nbody * 6 * sizeof *wrench);
    if (!wrench) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  }
  e = mbsp_agreeErr(comm, e);
  if (!e && !serial) e = mbsp_engineCreate(comm, m, MBSP_HALO_P2P, &eng);
  if (e == MBS_ERR_INPUT) mbs_errPrefix("%s:0", cfg->filename);

  // K full evaluations from the initial state (the first builds the warm-start history: use
  // solver.warm_start = none to time cold solves)
  mbsp_barrier(comm);
  double t0 = mbs_wtime();
  for (int k = 0; k < cli->repeat && !e; k++) {
    mbs_stateReset(m, s);
    e = accel_compute(comm, m, s, w, eng);
  }
  double tpe = (mbs_wtime() - t0) / cli->repeat;
  e = mbsp_agreeErr(comm, e);

  // results to rank 0; timers and decomposition over all ranks
  if (!e && !serial) {
    mbsWork *ew = mbsp_engineWork(eng);
    e = mbsp_engineGather(eng, rank == 0 ? w->qdd : NULL, rank == 0 ? w->lam : NULL,
                          rank == 0 ? w->jfrc : NULL);
    w->stat = ew->stat;
    memcpy(w->timer, ew->timer, sizeof w->timer);
  }
  e = mbsp_agreeErr(comm, e);
  if (!e) e = mbsp_rankReportCollect(comm, eng, w, &rr);
  e = mbsp_agreeErr(comm, e);

  if (!e && rank == 0) {
    if (serial) {
      mbs_constraintLambda(m, w);
    } else { // poses and velocities of the whole model, for the outputs only
      mbs_fwdPosition(m, s, w);
      mbs_fwdVelocity(m, s, w);
    }
    mbs_jointWrenchWorld(m, w, wrench);
    // equation-of-motion residual of the result: ||RNEA(q, qd, qdd) - tau|| / scale, with
    // scale = max(||bias||, ||tau||), bias = RNEA(q, qd, 0) (gravity and velocity terms)
    mbsReal *qdd = malloc((size_t)(m->nv > 0 ? m->nv : 1) * sizeof *qdd);
    mbsReal *acc = malloc((size_t)m->nbody * 6 * sizeof *acc);
    double num = 0, nb = 0, nt = 0;
    if (qdd && acc) {
      memcpy(qdd, w->qdd, (size_t)m->nv * sizeof *qdd);
      memcpy(acc, w->acc, (size_t)m->nbody * 6 * sizeof *acc);
      mbs_rnea(m, w, NULL);
      for (int d = 0; d < m->nv; d++) nb += w->qfrc_inv[d] * w->qfrc_inv[d];
      mbs_rnea(m, w, qdd);
      for (int d = 0; d < m->nv; d++) {
        double r = w->qfrc_inv[d] - w->qfrc[d];
        num += r * r;
        nt += w->qfrc[d] * w->qfrc[d];
      }
      memcpy(w->acc, acc, (size_t)m->nbody * 6 * sizeof *acc);
    } else {
      num = NAN;
    }
    free(acc);
    free(qdd);
    double scale = sqrt(nb > nt ? nb : nt);
    mbsAccelOut a = {m,  w, wrench, tpe, cli->repeat, scale > 0 ? sqrt(num) / scale : sqrt(num),
                     &rr};
    if (!cli->quiet && !(cli->json && !strcmp(cli->json, "-"))) {
      double qn = 0;
      for (int d = 0; d < m->nv; d++) qn += w->qdd[d] * w->qdd[d];
      printf("mbspar accel %s: %d bodies, %d dofs, %d rank(s)\n", cfg->filename, m->nbody, m->nv,
             size);
      printf("  %-20s %s", "method", mbs_solverName(m->opt.solver));
      if (!serial)
        printf(" (%d iterations, residual %.3e, %s)", w->stat.iterations, w->stat.residual,
               mbs_reasonName(w->stat.reason));
      printf("\n  %-20s %.3e s (mean of %d)\n", "time per eval", tpe, cli->repeat);
      printf("  %-20s %.3e\n", "EOM residual", a.residual);
      printf("  %-20s %.6e\n", "|qdd|", sqrt(qn));
      int show = m->nv < 8 ? m->nv : 8;
      printf("  %-20s", "qdd");
      for (int d = 0; d < show; d++) printf(" %.6g", w->qdd[d]);
      printf("%s\n", show < m->nv ? " ..." : "");
    }
    if (!serial && w->stat.reason < 0)
      fprintf(stderr,
              "mbspar: warning: %s stopped without converging (%s after %d iterations, "
              "residual %.3e > tol %g)\n",
              mbs_solverName(m->opt.solver), mbs_reasonName(w->stat.reason), w->stat.iterations,
              w->stat.residual, m->opt.tol);
    e = mbs_emit(cli, comm, cfg, m, mbs_accelJson, &a);
  }
  e = mbsp_agreeErr(comm, e);
  mbsp_engineDestroy(&eng);
  free(wrench);
  mbsp_rankReportFree(&rr);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  return e;
}

// ---------------------------------------------------------------- static

/// Forward dynamics of the static solve on the distributed engine: every rank evaluates its own
/// bodies, then one allreduce of nv + 2 doubles (owned q̈ entries in place, zeros elsewhere, and
/// the partial kinetic and potential energies) gives every rank the same q̈ and energies, so all
/// ranks integrate the same replicated state and take the same stopping decisions.
typedef struct {
  mbspComm *comm;
  mbspEngine *eng;
  const mbsModel *m;
  mbsWork *w;         // serial workspace for the potential energy (world poses)
  int b0, b1, d0, d1; // owned bodies and dofs
  mbsReal *buf;       // (nv + 1)
} mbsStaticEngine;

static mbsErr mbs_staticEngineForward(void *ctx, mbsState *s, int want_pe, mbsReal *qdd,
                                      mbsReal *energy) {
  mbsStaticEngine *c = ctx;
  const int nv = c->m->nv;
  MBS_CALL(mbsp_engineForward(c->eng, s));
  const mbsWork *ew = mbsp_engineWork(c->eng);
  mbsReal pe_unused;
  memset(c->buf, 0, (size_t)(nv + 1) * sizeof *c->buf);
  memcpy(c->buf + c->d0, ew->qdd + c->d0, (size_t)(c->d1 - c->d0) * sizeof *c->buf);
  // kinetic energy from the owned body velocities (body coordinates: no world poses needed)
  mbs_staticEnergy(c->m, s, ew, c->b0, c->b1, c->buf + nv, &pe_unused);
  MBS_CALL(mbsp_allreduceSum(c->comm, c->buf, nv + 1));
  memcpy(qdd, c->buf, (size_t)nv * sizeof *qdd);
  energy[0] = c->buf[nv];
  // potential energy (history samples only): world poses of the replicated state, serially on
  // every rank (the engine forms only parent-relative transforms of its own bodies)
  if (want_pe) {
    mbsReal ke_unused;
    mbs_fwdPosition(c->m, s, c->w);
    memset(c->w->cvel, 0, (size_t)c->m->nbody * 6 * sizeof *c->w->cvel);
    mbs_staticEnergy(c->m, s, c->w, 0, c->m->nbody, &ke_unused, energy + 1);
  }
  return MBS_OK;
}

typedef struct {
  const mbsModel *m;
  const mbsStatic *st;
  const mbsState *s;
  const mbsSolveStat *stat; // forward-dynamics solver statistics (rank 0)
} mbsStaticOut;

static void mbs_staticJson(mbsJson *j, const void *ctx) {
  const mbsStaticOut *r = ctx;
  const mbsStatic *st = r->st;
  const mbsModel *m = r->m;
  mbs_jsonBeginObject(j, "solver");
  mbs_jsonString(j, "method", mbs_solverName(m->opt.solver));
  mbs_jsonInt(j, "evaluations", r->stat->evals);
  mbs_jsonInt(j, "total_iterations", r->stat->total_iterations);
  mbs_jsonInt(j, "nonconverged", r->stat->nonconverged);
  mbs_jsonNumber(j, "tol", m->opt.tol);
  mbs_jsonEndObject(j);
  mbs_jsonBeginObject(j, "results");
  mbs_jsonString(j, "drainage", mbs_staticMethodName(st->opt.method));
  mbs_jsonBool(j, "converged", st->reason == MBS_STATIC_CONVERGED);
  mbs_jsonString(j, "reason", st->reason == MBS_STATIC_CONVERGED ? "converged" : "max_iter");
  mbs_jsonInt(j, "iterations", st->iterations);
  mbs_jsonInt(j, "velocity_resets", st->resets);
  mbs_jsonNumber(j, "potential_energy", st->pe);
  mbs_jsonNumber(j, "potential_energy_initial", st->pe0);
  mbs_jsonNumber(j, "kinetic_energy", st->ke);
  mbs_jsonNumber(j, "kinetic_energy_max", st->ke_max);
  mbs_jsonNumber(j, "dq_max", st->dq_max);
  mbs_jsonNumber(j, "qdd_residual", st->qdd_res);
  mbs_jsonNumber(j, "pseudo_time", st->iterations * st->opt.dt);
  mbs_jsonNumber(j, "time_s", st->wall);
  mbs_jsonNumberArray(j, "q", r->s->q, m->nq);
  mbs_jsonBeginObject(j, "history");
  mbs_jsonInt(j, "stride", st->hist_stride);
  mbs_jsonIntArray(j, "iteration", st->hist_iter, st->nhist);
  mbs_jsonNumberArray(j, "kinetic_energy", st->hist_ke, st->nhist);
  mbs_jsonNumberArray(j, "potential_energy", st->hist_pe, st->nhist);
  mbs_jsonEndObject(j);
  mbs_jsonEndObject(j);
}

// write-through-a-temporary: open PATH.tmp.<pid> (its name in tmp) ...
static mbsErr mbs_tmpOpen(const char *path, char *tmp, size_t n, FILE **f) {
  snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
  *f = fopen(tmp, "w");
  if (!*f) return mbs_errSet(MBS_ERR_IO, "mbspar: %s: cannot open for writing", tmp);
  return MBS_OK;
}
// ... and rename it into place; on any failure the temporary goes and PATH is untouched
static mbsErr mbs_tmpCommit(FILE *f, const char *tmp, const char *path) {
  int bad = ferror(f) != 0;
  if (fclose(f) != 0) bad = 1;
  if (bad || rename(tmp, path) != 0) {
    remove(tmp);
    return mbs_errSet(MBS_ERR_IO, "mbspar: %s: write failed (nothing written)", path);
  }
  return MBS_OK;
}

// DIR/static_ke.csv: the decimated energy history (written through a temporary)
static mbsErr mbs_staticCsv(const char *path, const mbsStatic *st) {
  char tmp[4200];
  FILE *f;
  MBS_CALL(mbs_tmpOpen(path, tmp, sizeof tmp, &f));
  fprintf(f, "iteration,pseudo_time,kinetic_energy,potential_energy\n");
  for (int k = 0; k < st->nhist; k++)
    fprintf(f, "%d,%.17g,%.17g,%.17g\n", st->hist_iter[k], st->hist_iter[k] * st->opt.dt,
            st->hist_ke[k], st->hist_pe[k]);
  return mbs_tmpCommit(f, tmp, path);
}

/// `mbspar static`: energy drainage from the initial state to the equilibrium (src/static.c).
/// aba/crba run the loop on rank 0 while the other ranks wait at the agreement; every other
/// method runs it on all ranks over the distributed engine. Collective.
static mbsErr mbs_verbStatic(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg,
                             const mbsModel *m) {
  int rank = mbsp_rank(comm), size = mbsp_size(comm);
  int serial = accel_isSerial(m->opt.solver);
  mbsState *s = NULL;
  mbsWork *w = NULL;
  mbsStatic *st = NULL;
  mbspEngine *eng = NULL;
  mbsStaticEngine ec = {comm, NULL, m, NULL, 0, 0, 0, 0, NULL};
  mbsSolveStat stat;
  memset(&stat, 0, sizeof stat);
  static const char *const files[] = {"static.json", "static_ke.csv"};
  mbsErr e = rank == 0 ? mbs_outPrepare(cli, files, 2) : MBS_OK;
  if (!e) e = mbs_stateCreate(m, &s);
  if (!e) e = mbs_staticCreate(m, &cfg->statics, &st);
  if (!e && (rank == 0 || !serial)) e = mbs_workCreate(m, &w);
  e = mbsp_agreeErr(comm, e);
  if (e == MBS_ERR_INPUT) mbs_errPrefix("%s:0", cfg->filename);
  if (!e && !serial) {
    e = mbsp_engineCreate(comm, m, MBSP_HALO_P2P, &eng);
    if (e == MBS_ERR_INPUT) mbs_errPrefix("%s:0", cfg->filename);
  }
  if (!e && !serial) {
    mbspDecompInfo di;
    mbsp_engineDecomp(eng, &di);
    ec.eng = eng;
    ec.w = w;
    ec.b0 = di.b0, ec.b1 = di.b1;
    ec.d0 = m->body_dofadr[di.b0];
    ec.d1 = m->body_dofadr[di.b1 - 1] + m->body_dofnum[di.b1 - 1];
    ec.buf = malloc((size_t)(m->nv + 1) * sizeof *ec.buf);
    if (!ec.buf) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  }
  e = mbsp_agreeErr(comm, e);

  // the drainage loop: rank 0 alone (serial methods) or every rank (engine)
  if (!e && serial && rank == 0) {
    mbsStaticSerial sc = {m, w};
    e = mbs_staticSolve(st, s, mbs_staticForwardSerial, &sc);
    stat = w->stat;
  } else if (!e && !serial) {
    e = mbs_staticSolve(st, s, mbs_staticEngineForward, &ec);
    stat = mbsp_engineWork(eng)->stat;
  }
  e = mbsp_agreeErr(comm, e);

  if (!e && rank == 0) {
    mbsStaticOut r = {m, st, s, &stat};
    int conv = st->reason == MBS_STATIC_CONVERGED;
    if (!cli->quiet && !(cli->json && !strcmp(cli->json, "-"))) {
      const mbsStaticOpt *o = &st->opt;
      printf("mbspar static %s: %d bodies, %d dofs, %d rank(s)\n", cfg->filename, m->nbody, m->nv,
             size);
      printf("  %-22s %s, dt %g s, ke_tol %g J, dq_tol %g", "drainage",
             mbs_staticMethodName(o->method), o->dt, o->ke_tol, o->dq_tol);
      if (o->method == MBS_STATIC_DRAIN) printf(", omega_d %g rad/s", o->omega_d);
      printf("\n  %-22s %s\n", "forward dynamics", mbs_solverName(m->opt.solver));
      printf("  %-22s %s after %d evaluations (%d velocity resets), %.3f s\n", "result",
             conv ? "converged" : "NOT converged", st->iterations, st->resets, st->wall);
      printf("  %-22s %.10g J (initial %.10g J)\n", "potential energy", st->pe, st->pe0);
      printf("  %-22s %.3e J (max %.6g J)\n", "kinetic energy", st->ke, st->ke_max);
      printf("  %-22s %.3e\n", "max |q_i - q_{i-1}|", st->dq_max);
      printf("  %-22s %.3e\n", "max |qdd| at rest", st->qdd_res);
      int show = m->nq < 8 ? m->nq : 8;
      printf("  %-22s", "q");
      for (int k = 0; k < show; k++) printf(" %.8g", s->q[k]);
      printf("%s\n", show < m->nq ? " ..." : "");
    }
    if (!conv)
      fprintf(stderr,
              "mbspar: warning: static did not converge in static.max_iter = %d evaluations "
              "(kinetic energy %.3e J, step change %.3e)%s\n",
              st->opt.max_iter, st->ke, st->dq_max,
              st->resets > st->iterations / 20
                  ? "; velocity resets on more than 5% of the steps: static.dt is probably above "
                    "the stability limit of the fastest mode, try a smaller one"
                  : "");
    if (cli->out) {
      char p[4096];
      e = mbs_outPath(cli, "static_ke.csv", p, sizeof p);
      if (!e) e = mbs_staticCsv(p, st);
    }
    if (!e) e = mbs_emit(cli, comm, cfg, m, mbs_staticJson, &r);
  }
  e = mbsp_agreeErr(comm, e);
  mbsp_engineDestroy(&eng);
  free(ec.buf);
  mbs_staticDestroy(&st);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  return e;
}

// ---------------------------------------------------------------- run

typedef struct {
  const mbsCli *cli;
  mbspComm *comm;
  const mbsConfig *cfg;
  const mbsModel *m;
} mbsRunEmit;

static mbsErr mbs_runEmit(void *ctx, mbspJsonBody body, const void *bodyctx) {
  const mbsRunEmit *r = ctx;
  return mbs_emit(r->cli, r->comm, r->cfg, r->m, body, bodyctx);
}

static mbsErr mbs_verbRun(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, mbsModel *m) {
  // seed 002: with an adaptive integrator the constraint-force tolerance is TOL/10 unless set
  if (m->opt.integrator == MBS_INT_DP5 && !mbs_configIsSet(cfg, "solver.tol"))
    m->opt.tol = m->opt.int_tol / 10;
  mbsCli c2 = *cli;
  if (!c2.out) c2.out = cfg->out_dir; // the report also goes to DIR/run.json
  mbsRunEmit em = {&c2, comm, cfg, m};
  mbspSimArgs a;
  memset(&a, 0, sizeof a);
  a.comm = comm, a.m = m, a.cfg = cfg, a.out_dir = c2.out;
  a.force = cli->force, a.quiet = cli->quiet, a.restart = cli->restart;
  a.no_table = cli->json && !strcmp(cli->json, "-");
  a.progress_every = cli->progress_every;
  a.emit = mbs_runEmit, a.emit_ctx = &em;
  return mbsp_simRun(&a);
}

// ---------------------------------------------------------------- cpa

// the cpa options (accepted by mbs_cliParse, read here): the value of --NAME or NULL
static const char *mbs_cpaArg(const mbsCli *cli, const char *name) {
  size_t n = strlen(name);
  const char *v = NULL;
  for (int i = 1; i < cli->argc; i++) {
    const char *a = cli->argv[i];
    if (strncmp(a, name, n)) continue;
    if (a[n] == '=')
      v = a + n + 1;
    else if (!a[n])
      v = i + 1 < cli->argc ? cli->argv[i + 1] : "";
  }
  return v;
}

static mbsErr mbs_cpaNumber(const char *opt, const char *v, double lo, double *out) {
  char *end = NULL;
  double x = v ? strtod(v, &end) : 0;
  MBS_CHECK(v && end != v && !*end && x >= lo && isfinite(x), MBS_ERR_USAGE,
            "mbspar cpa: %s %s: expected a number >= %g", opt, v ? v : "", lo);
  *out = x;
  return MBS_OK;
}

typedef struct {
  const mbsModel *m;
  const mbsCpaOptions *o;
  const mbsCpaGraph *g;
  const mbsCpaResult *r;
  const char *iter_source; // "measured" or "given"
  int nP;
  int P[16];
  double tp[16], tdist[16], sdist[16]; // list schedule, distributed schedule / span (NAN: none)
  int nmsg[16];
  int calibrated;
  double t_eval, allreduce; // calibration: seconds per evaluation, per allreduce (NAN: none)
  double t_class[MBS_CPA_CLASS_COUNT]; // calibration: seconds per evaluation in each class
} mbsCpaOut;

static void mbs_cpaJson(mbsJson *j, const void *ctx) {
  const mbsCpaOut *c = ctx;
  const mbsCpaOptions *o = c->o;
  const mbsCpaResult *r = c->r;
  mbs_jsonBeginObject(j, "cpa");
  mbs_jsonString(j, "method", mbs_solverName(o->method));
  mbs_jsonString(j, "grain", mbs_cpaGrainName(o->grain));
  if (c->iter_source) {
    mbs_jsonInt(j, "iterations", o->iterations);
    mbs_jsonString(j, "iterations_source", c->iter_source);
    mbs_jsonBool(j, "converged", o->converged);
    mbs_jsonInt(j, "spectrum_estimate_iterations", o->spec_iterations);
    mbs_jsonBool(j, "spectrum_estimate_converged", o->spec_converged);
  }
  mbs_jsonInt(j, "nodes", c->g->nnode);
  mbs_jsonInt(j, "edges", c->g->nedge);
  mbs_jsonBeginObject(j, "cost_model");
  mbs_jsonNumber(j, "flop_time_s", o->flop_time);
  mbs_jsonNumber(j, "latency_s", o->latency);
  mbs_jsonNumber(j, "bandwidth_Bps", o->bandwidth);
  mbs_jsonBool(j, "calibrated", c->calibrated);
  mbs_jsonNumber(j, "measured_eval_s", c->t_eval);
  mbs_jsonNumber(j, "measured_allreduce_s", c->allreduce);
  mbs_jsonBeginArray(j, "classes");
  for (int k = 0; k < MBS_CPA_CLASS_COUNT; k++) {
    if (!c->g->class_flops[k]) continue;
    mbs_jsonBeginObject(j, NULL);
    mbs_jsonString(j, "class", mbs_cpaClassName(k));
    mbs_jsonInt(j, "flops", c->g->class_flops[k]);
    mbs_jsonNumber(j, "measured_s", c->calibrated ? c->t_class[k] : NAN);
    mbs_jsonNumber(j, "s_per_flop", o->class_time[k] > 0 ? o->class_time[k] : o->flop_time);
    mbs_jsonEndObject(j);
  }
  mbs_jsonEndArray(j);
  mbs_jsonEndObject(j);
  mbs_jsonInt(j, "work_flops", r->work_flops);
  mbs_jsonNumber(j, "work_s", r->work);
  mbs_jsonInt(j, "span_flops", r->span_flops);
  mbs_jsonNumber(j, "span_flop_times", r->span / o->flop_time);
  mbs_jsonNumber(j, "span_s", r->span);
  mbs_jsonNumber(j, "parallelism", r->parallelism);
  mbs_jsonBeginObject(j, "critical_path");
  mbs_jsonInt(j, "nodes", r->path_nodes);
  mbs_jsonBeginArray(j, "by_kind");
  for (int k = 0; k < MBS_CPA_KIND_COUNT; k++) {
    if (!r->kind_nodes[k]) continue;
    mbs_jsonBeginObject(j, NULL);
    mbs_jsonString(j, "kind", mbs_cpaKindName(k));
    mbs_jsonInt(j, "nodes", r->kind_nodes[k]);
    mbs_jsonInt(j, "flops", r->kind_flops[k]);
    mbs_jsonNumber(j, "time_s", r->kind_time[k]);
    mbs_jsonEndObject(j);
  }
  mbs_jsonEndArray(j);
  mbs_jsonEndObject(j);
  mbs_jsonBeginArray(j, "schedule");
  for (int i = 0; i < c->nP; i++) {
    int P = c->P[i];
    mbs_jsonBeginObject(j, NULL);
    mbs_jsonInt(j, "P", P);
    mbs_jsonNumber(j, "list_s", c->tp[i]);
    mbs_jsonNumber(j, "list_speedup", r->work / c->tp[i]);
    mbs_jsonNumber(j, "brent_s", r->work / P + r->span);
    mbs_jsonNumber(j, "lower_bound_s", fmax(r->work / P, r->span));
    mbs_jsonNumber(j, "distributed_s", c->tdist[i]);
    mbs_jsonNumber(j, "distributed_speedup", r->work / c->tdist[i]);
    mbs_jsonNumber(j, "distributed_span_s", c->sdist[i]);
    mbs_jsonInt(j, "distributed_messages", c->nmsg[i]);
    mbs_jsonEndObject(j);
  }
  mbs_jsonEndArray(j);
  mbs_jsonEndObject(j);
}

// calibration: seconds per evaluation of the real kernels (rank 0), message latency and
// bandwidth by halo exchanges between ranks 0 and 1, and the allreduce time (all ranks)
static mbsErr mbs_cpaCalibrate(mbspComm *comm, const mbsModel *m, mbsCpaOptions *o,
                               mbsCpaOut *out) {
  int rank = mbsp_rank(comm), size = mbsp_size(comm);
  mbsErr e = MBS_OK;
  out->calibrated = 1;
  if (size >= 2) {
    static const int cnt[2] = {6, 65536};
    double t[2] = {0, 0};
    for (int k = 0; k < 2 && !e; k++) {
      int nbr = rank == 0 ? 1 : 0, nn = rank < 2 ? 1 : 0;
      mbspHalo *h = NULL;
      e = mbsp_agreeErr(comm, mbsp_haloCreate(comm, nn, &nbr, &cnt[k], &cnt[k], MBSP_HALO_P2P, &h));
      if (e) break;
      int reps = k == 0 ? 2000 : 50;
      for (int it = 0; it < 10 && !e; it++) e = mbsp_haloExchange(h);
      if (!e) e = mbsp_barrier(comm);
      double t0 = mbsp_wtime();
      for (int it = 0; it < reps && !e; it++) e = mbsp_haloExchange(h);
      t[k] = (mbsp_wtime() - t0) / reps;
      mbsp_haloDestroy(&h);
      e = mbsp_agreeErr(comm, e);
    }
    if (!e) {
      o->latency = t[0];
      if (t[1] > t[0]) o->bandwidth = 8.0 * (cnt[1] - cnt[0]) / (t[1] - t[0]);
    }
  }
  if (!e) { // allreduce of 2 doubles (CG's fused dot products)
    double v[2] = {1, 2};
    e = mbsp_barrier(comm);
    double t0 = mbsp_wtime();
    for (int it = 0; it < 1000 && !e; it++) e = mbsp_allreduceSum(comm, v, 2);
    out->allreduce = (mbsp_wtime() - t0) / 1000;
    e = mbsp_agreeErr(comm, e);
  }
  if (e || rank != 0) return e;
  // the real kernels: repeat one evaluation for about 0.2 s
  mbsState *s = NULL;
  mbsWork *w = NULL;
  mbsCfs *c = NULL;
  mbsModel *mm = (mbsModel *)m; // opt only: restored below
  mbsOption save = m->opt;
  mm->opt.solver = o->method;
  mm->opt.warm_start = MBS_WARM_NONE;
  e = mbs_stateCreate(m, &s);
  if (!e) e = mbs_workCreate(m, &w);
  if (!e && o->method == MBS_SOLVER_CRBA) e = mbs_workEnableCrba(m, w);
  if (!e && mbs_cpaIterative(o->method))
    mm->opt.tol = 0, mm->opt.max_iter = o->iterations; // exactly the graph's iterations
  if (!e && (mbs_cpaIterative(o->method) || o->method == MBS_SOLVER_DIRECT))
    e = mbs_cfsCreate(m, 0, m->nbody, &c);
  int reps = 0;
  double t0 = mbsp_wtime(), t1 = t0;
  while (!e && (t1 - t0 < 0.2 || reps < 3) && reps < 100000) {
    e = c ? mbs_cfsForward(m, s, w, c) : mbs_forward(m, s, w);
    reps++;
    t1 = mbsp_wtime();
  }
  mm->opt = save;
  if (!e) { // the phase timers of those evaluations give the seconds of each kernel class
    const mbsTimer *tm = w->timer;
    double kin = tm[MBS_TIMER_POSITION].total + tm[MBS_TIMER_VELOCITY].total;
    out->t_eval = (t1 - t0) / reps;
    out->t_class[MBS_CPA_CLASS_KIN] = kin / reps;
    if (c) {
      out->t_class[MBS_CPA_CLASS_BLOCKS] = tm[MBS_TIMER_ASSEMBLY].total / reps;
      out->t_class[MBS_CPA_CLASS_SOLVE] = tm[MBS_TIMER_SOLVE].total / reps;
      out->t_class[MBS_CPA_CLASS_FINISH] = tm[MBS_TIMER_ACCEL].total / reps;
    } else {
      out->t_class[MBS_CPA_CLASS_DYN] = (tm[MBS_TIMER_EVAL].total - kin) / reps;
    }
  }
  mbs_cfsDestroy(&c);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  return e;
}

static mbsErr mbs_verbCpa(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg,
                          const mbsModel *m) {
  int rank = mbsp_rank(comm);
  mbsCpaOptions o;
  mbsCpaOut out;
  mbsCpaGraph *g = NULL;
  mbsCpaResult r;
  mbsErr e = MBS_OK;
  int pmax = 1024, have_r = 0;
  memset(&out, 0, sizeof out);
  memset(&r, 0, sizeof r);
  out.t_eval = out.allreduce = NAN;
  mbs_cpaDefaults(&o);
  o.latency = cfg->cpa.latency, o.bandwidth = cfg->cpa.bandwidth; // config group cpa
  o.flop_time = cfg->cpa.flop_time;

  // options (every rank parses the same command line)
  const char *a;
  o.method = m->opt.solver;
  if ((a = mbs_cpaArg(cli, "--method"))) o.method = mbs_solverFromName(a);
  int iterative = mbs_cpaIterative(o.method);
  if (o.method != MBS_SOLVER_ABA && o.method != MBS_SOLVER_CRBA && o.method != MBS_SOLVER_DIRECT &&
      !iterative)
    e = mbs_errSet(MBS_ERR_UNSUPPORTED,
                   "mbspar cpa: --method %s: graphs exist for aba, crba, direct, jcg, jacobi, gs, "
                   "sor, chebyshev (petsc runs PETSc's own kernels and has none)",
                   a ? a : mbs_solverName(o.method));
  if (!e && (a = mbs_cpaArg(cli, "--grain")) && (o.grain = mbs_cpaGrainFromName(a)) < 0)
    e = mbs_errSet(MBS_ERR_USAGE, "mbspar cpa: --grain %s: expected op, block or body", a);
  double x;
  if (!e && (a = mbs_cpaArg(cli, "--iterations"))) {
    e = mbs_cpaNumber("--iterations", a, 0, &x);
    o.iterations = (int)x;
    out.iter_source = "given";
    // a spectrum estimate that is part of the solve is assumed to run its full length
    if (o.method == MBS_SOLVER_JACOBI && mbs_modelBranched(m))
      o.spec_iterations = MBS_CFS_SPEC_STEPS;
    if (o.method == MBS_SOLVER_CHEBYSHEV && !(m->opt.rho > 0)) {
      int k = m->opt.max_iter < MBS_CFS_CHEB_STEPS ? m->opt.max_iter : MBS_CFS_CHEB_STEPS;
      o.spec_iterations = o.iterations < k ? o.iterations : k;
    }
  }
  if (!e && (a = mbs_cpaArg(cli, "--procs"))) {
    e = mbs_cpaNumber("--procs", a, 1, &x);
    pmax = x > 65536 ? 65536 : (int)x;
  }
  if (!e && (a = mbs_cpaArg(cli, "--latency"))) e = mbs_cpaNumber("--latency", a, 0, &o.latency);
  if (!e && (a = mbs_cpaArg(cli, "--bandwidth")))
    e = mbs_cpaNumber("--bandwidth", a, 1e-300, &o.bandwidth);
  if (!e && (a = mbs_cpaArg(cli, "--flop-time")))
    e = mbs_cpaNumber("--flop-time", a, 1e-300, &o.flop_time);
  o.criterion = m->opt.criterion;
  e = mbsp_agreeErr(comm, e);

  // J-CG iterations: measured by a real solve at the initial state unless given
  if (!e && iterative && !out.iter_source) {
    out.iter_source = "measured";
    if (rank == 0) {
      mbsState *s = NULL;
      mbsWork *w = NULL;
      mbsCfs *c = NULL;
      mbsModel *mm = (mbsModel *)m; // opt only: restored below
      mbsOption save = m->opt;
      mm->opt.solver = o.method;
      e = mbs_stateCreate(m, &s);
      if (!e) e = mbs_workCreate(m, &w);
      if (!e) e = mbs_cfsCreate(m, 0, m->nbody, &c);
      if (!e) e = mbs_cfsForward(m, s, w, c);
      if (!e) {
        o.iterations = w->stat.iterations;
        o.converged = w->stat.reason == MBS_REASON_CONVERGED;
        o.spec_iterations = c->spec_it;
        o.spec_converged = c->spec_conv;
        if (w->stat.reason < 0 && w->stat.reason != MBS_REASON_DIVERGED_MAXIT)
          e = mbs_errSet(MBS_ERR_UNSUPPORTED,
                         "mbspar cpa: the measured %s solve stopped early (%s after %d "
                         "iterations); the graph models converged or max_iter solves: give "
                         "--iterations K to analyse K iterations",
                         mbs_solverName(o.method), mbs_reasonName(w->stat.reason), o.iterations);
      }
      mm->opt = save;
      mbs_cfsDestroy(&c);
      mbs_workDestroy(&w);
      mbs_stateDestroy(&s);
    }
    e = mbsp_agreeErr(comm, e);
    double v[4] = {o.iterations, o.converged, o.spec_iterations, o.spec_converged};
    if (!e) e = mbsp_bcastBytes(comm, v, sizeof v, 0);
    o.iterations = (int)v[0], o.converged = (int)v[1];
    o.spec_iterations = (int)v[2], o.spec_converged = (int)v[3];
  }
  if (!e && mbs_cpaArg(cli, "--calibrate")) e = mbs_cpaCalibrate(comm, m, &o, &out);
  if (e || rank != 0) return mbsp_agreeErr(comm, e);

  // the graph, its analysis, list schedules on P = 1, 2, 4, ... processors
  e = mbs_cpaBuild(m, &o, &g);
  if (!e) e = mbs_cpaAnalyse(g, &r);
  have_r = !e;
  if (!e && out.calibrated && isfinite(out.t_eval) && r.work_flops > 0) {
    // seconds per flop of the real evaluation (messages' adds) and of each kernel class; rebuild
    // with the measured costs
    o.flop_time = out.t_eval / (double)r.work_flops;
    for (int k = 0; k < MBS_CPA_CLASS_COUNT; k++)
      if (g->class_flops[k] > 0 && out.t_class[k] > 0)
        o.class_time[k] = out.t_class[k] / (double)g->class_flops[k];
    mbs_cpaResultFree(&r);
    mbs_cpaDestroy(&g);
    have_r = 0;
    e = mbs_cpaBuild(m, &o, &g);
    if (!e) e = mbs_cpaAnalyse(g, &r);
    have_r = !e;
  }
  out.m = m, out.o = &o, out.g = g, out.r = &r;
  for (int P = 1; !e && P <= pmax && out.nP < 16; P *= 2) {
    int i = out.nP++;
    out.P[i] = P;
    out.tp[i] = out.tdist[i] = out.sdist[i] = NAN;
    out.nmsg[i] = 0;
    if (g->fine) continue; // flop grain: Brent bound only
    e = mbs_cpaSchedule(g, P, &out.tp[i]);
    if (!e && iterative && P <= m->nbody) {
      // owner-computes on P ranks with messages
      mbsCpaOptions od = o;
      mbsCpaGraph *gd = NULL;
      mbsCpaResult rd;
      od.ranks = P;
      e = mbs_cpaBuild(m, &od, &gd);
      if (!e) e = mbs_cpaAnalyse(gd, &rd);
      if (!e) {
        e = mbs_cpaSchedule(gd, P, &out.tdist[i]);
        out.sdist[i] = rd.span;
        out.nmsg[i] = rd.nmsg;
        mbs_cpaResultFree(&rd);
      }
      mbs_cpaDestroy(&gd);
    }
  }
  if (!e && (a = mbs_cpaArg(cli, "--dot"))) e = mbs_cpaWriteDot(g, &r, a, 2000);

  // table
  if (!e && !cli->quiet && !(cli->json && !strcmp(cli->json, "-"))) {
    printf("mbspar cpa %s: method %s", cfg->filename, mbs_solverName(o.method));
    if (iterative) {
      printf(" (%d iterations, %s%s", o.iterations, out.iter_source,
             o.converged ? ", converged" : "");
      if (o.spec_iterations)
        printf("; spectrum estimate %d CG steps%s", o.spec_iterations,
               o.spec_converged ? ", converged" : "");
      printf(")");
    }
    printf(", grain %s, %d bodies, %d dofs\n", mbs_cpaGrainName(o.grain), m->nbody, m->nv);
    printf("  graph: %d nodes, %d edges; cost: %.3e s/flop%s, latency %.3e s, bandwidth %.3e B/s\n",
           g->nnode, g->nedge, o.flop_time, out.calibrated ? " (calibrated)" : "", o.latency,
           o.bandwidth);
    if (out.calibrated) {
      printf("  calibration: %.3e s per evaluation, %.3e s per allreduce of 2 doubles\n",
             out.t_eval, out.allreduce);
      for (int k = 0; k < MBS_CPA_CLASS_COUNT; k++)
        if (g->class_flops[k] > 0)
          printf("    %-18s %12lld flops  %.3e s measured  %.3e s/flop\n", mbs_cpaClassName(k),
                 g->class_flops[k], out.t_class[k],
                 o.class_time[k] > 0 ? o.class_time[k] : o.flop_time);
    }
    printf("  %-24s %14lld flops  %.4e s\n", "T1 (work)", r.work_flops, r.work);
    printf("  %-24s %14.0f flops  %.4e s  (%d nodes)\n", "T_inf (critical path)",
           r.span / o.flop_time, r.span, r.path_nodes);
    printf("  %-24s %14.2f\n", "T1/T_inf (max speedup)", r.parallelism);
    printf("\n  %6s %12s %9s %12s", "P", "list T_P [s]", "speedup", "T1/P+T_inf");
    if (iterative) printf(" %14s %9s %7s", "distrib T_P", "speedup", "msgs");
    printf("\n");
    for (int i = 0; i < out.nP; i++) {
      int P = out.P[i];
      if (isfinite(out.tp[i]))
        printf("  %6d %12.4e %9.2f %12.4e", P, out.tp[i], r.work / out.tp[i], r.work / P + r.span);
      else
        printf("  %6d %12s %9s %12.4e", P, "-", "-", r.work / P + r.span);
      if (iterative) {
        if (isfinite(out.tdist[i]))
          printf(" %14.4e %9.2f %7d", out.tdist[i], r.work / out.tdist[i], out.nmsg[i]);
        else
          printf(" %14s %9s %7s", "-", "-", "-");
      }
      printf("\n");
    }
    printf("\n  critical path by kind:\n  %-22s %8s %14s %7s\n", "kind", "nodes", "flops", "share");
    for (int k = 0; k < MBS_CPA_KIND_COUNT; k++)
      if (r.kind_nodes[k])
        printf("  %-22s %8lld %14lld %6.1f%%\n", mbs_cpaKindName(k), r.kind_nodes[k],
               r.kind_flops[k], r.span > 0 ? 100 * r.kind_time[k] / r.span : 0);
  }
  if (!e) e = mbs_emit(cli, comm, cfg, m, mbs_cpaJson, &out);
  if (have_r) mbs_cpaResultFree(&r);
  mbs_cpaDestroy(&g);
  return mbsp_agreeErr(comm, e);
}
// ---------------------------------------------------------------- inverse

typedef struct {
  const mbsModel *m;
  const mbsConfig *cfg;
  int ns;             // samples
  const mbsReal *t;   // (ns)
  const mbsReal *q;   // (ns x nq)
  const mbsReal *qd;  // (ns x nv)
  const mbsReal *qdd; // (ns x nv)
  const mbsReal *tau; // (ns x nv)
} mbsInverseOut;

static void mbs_inverseJson(mbsJson *j, const void *ctx) {
  const mbsInverseOut *r = ctx;
  const mbsModel *m = r->m;
  mbs_jsonBeginObject(j, "inverse");
  mbs_jsonNumber(j, "T", r->cfg->inverse.T);
  mbs_jsonInt(j, "steps", r->cfg->inverse.steps);
  mbs_jsonInt(j, "prescribed_coordinates", mbs_configInverseCoords(m));
  mbs_jsonNumberArray(j, "t", r->t, r->ns);
  const char *names[4] = {"q", "qd", "qdd", "tau"};
  const mbsReal *data[4] = {r->q, r->qd, r->qdd, r->tau};
  for (int k = 0; k < 4; k++) {
    int n = k == 0 ? m->nq : m->nv;
    mbs_jsonBeginArray(j, names[k]);
    for (int i = 0; i < r->ns; i++) mbs_jsonNumberArray(j, NULL, data[k] + (size_t)i * n, n);
    mbs_jsonEndArray(j);
  }
  mbsReal *mx = calloc((size_t)(m->nv > 0 ? m->nv : 1), sizeof *mx);
  if (mx) {
    for (int i = 0; i < r->ns; i++)
      for (int d = 0; d < m->nv; d++)
        if (fabs(r->tau[(size_t)i * m->nv + d]) > mx[d])
          mx[d] = fabs(r->tau[(size_t)i * m->nv + d]);
    mbs_jsonNumberArray(j, "tau_max_abs", mx, m->nv);
    free(mx);
  }
  mbs_jsonEndObject(j);
}

// column name of coordinate k of body b: PREFIX_NAME or PREFIX_NAME_k
static void mbs_csvName(FILE *f, const char *pre, const mbsModel *m, int b, int n, int k) {
  if (n == 1)
    fprintf(f, ",%s_%s", pre, m->body_name[b]);
  else
    fprintf(f, ",%s_%s_%d", pre, m->body_name[b], k);
}

static mbsErr mbs_inverseCsv(const char *path, const mbsInverseOut *r) {
  const mbsModel *m = r->m;
  char tmp[4200];
  FILE *f;
  MBS_CALL(mbs_tmpOpen(path, tmp, sizeof tmp, &f));
  fprintf(f, "t");
  for (int b = 0; b < m->nbody; b++)
    for (int k = 0; k < m->body_qnum[b]; k++) mbs_csvName(f, "q", m, b, m->body_qnum[b], k);
  const char *pre[3] = {"qd", "qdd", "tau"};
  for (int p = 0; p < 3; p++)
    for (int b = 0; b < m->nbody; b++)
      for (int k = 0; k < m->body_dofnum[b]; k++)
        mbs_csvName(f, pre[p], m, b, m->body_dofnum[b], k);
  fprintf(f, "\n");
  for (int i = 0; i < r->ns; i++) {
    fprintf(f, "%.17g", r->t[i]);
    for (int k = 0; k < m->nq; k++) fprintf(f, ",%.17g", r->q[(size_t)i * m->nq + k]);
    const mbsReal *cols[3] = {r->qd, r->qdd, r->tau};
    for (int p = 0; p < 3; p++)
      for (int d = 0; d < m->nv; d++) fprintf(f, ",%.17g", cols[p][(size_t)i * m->nv + d]);
    fprintf(f, "\n");
  }
  return mbs_tmpCommit(f, tmp, path);
}

static mbsErr mbs_inverseRun(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg,
                             const mbsModel *m) {
  const mbsInverseSpec *iv = &cfg->inverse;
  int ns = iv->steps + 1, nq = m->nq, nv = m->nv;
  mbsState *s = NULL;
  mbsWork *w = NULL;
  mbsReal *qs = NULL, *qe = NULL, *t = NULL, *q = NULL, *qd = NULL, *qdd = NULL, *tau = NULL;
  mbsErr e = MBS_OK;
  static const char *const files[] = {"inverse.csv", "inverse.json"};
  e = mbs_outPrepare(cli, files, 2);
  if (!e) e = mbs_stateCreate(m, &s);
  if (!e) e = mbs_workCreate(m, &w);
  if (!e) {
    size_t nsz = (size_t)ns;
    qs = malloc((size_t)(nq + 1) * sizeof *qs);
    qe = malloc((size_t)(nq + 1) * sizeof *qe);
    t = malloc(nsz * sizeof *t);
    q = malloc(nsz * (size_t)(nq + 1) * sizeof *q);
    qd = malloc(nsz * (size_t)(nv + 1) * sizeof *qd);
    qdd = malloc(nsz * (size_t)(nv + 1) * sizeof *qdd);
    tau = malloc(nsz * (size_t)(nv + 1) * sizeof *tau);
    if (!qs || !qe || !t || !q || !qd || !qdd || !tau)
      e = mbs_errSet(MBS_ERR_NOMEM, "mbspar inverse: out of memory for %d samples", ns);
  }
  if (!e) e = mbs_configInverse(cfg, m, qs, qe);
  // samples t_k = k T / steps
  for (int i = 0; i < ns && !e; i++) {
    t[i] = iv->T * i / iv->steps;
    mbs_inverseSample(m, s, w, qs, qe, iv->T, t[i], qdd + (size_t)i * nv, tau + (size_t)i * nv);
    memcpy(q + (size_t)i * nq, s->q, (size_t)nq * sizeof *q);
    memcpy(qd + (size_t)i * nv, s->qd, (size_t)nv * sizeof *qd);
  }
  if (!e) {
    mbsInverseOut r = {m, cfg, ns, t, q, qd, qdd, tau};
    if (!cli->quiet && !(cli->json && !strcmp(cli->json, "-"))) {
      printf("mbspar inverse %s: %d bodies, %d dofs, %d samples over T = %g s\n", cfg->filename,
             m->nbody, nv, ns, iv->T);
      printf("  %-12s %14s %14s %14s\n", "dof", "tau(0)", "tau(T/4)", "max |tau|");
      int show = nv < 16 ? nv : 16;
      for (int d = 0; d < show; d++) {
        double mx = 0;
        for (int i = 0; i < ns; i++) mx = fmax(mx, fabs(tau[(size_t)i * nv + d]));
        int b = m->dof_body[d];
        printf("  %-12s %14.6g %14.6g %14.6g\n", m->body_name[b], tau[d],
               tau[(size_t)(ns / 4) * nv + d], mx);
      }
      if (show < nv) printf("  ... (%d more)\n", nv - show);
    }
    if (cli->out) {
      char p[4096];
      e = mbs_outPath(cli, "inverse.csv", p, sizeof p);
      if (!e) e = mbs_inverseCsv(p, &r);
    }
    if (!e) e = mbs_emit(cli, comm, cfg, m, mbs_inverseJson, &r);
  }
  free(qs);
  free(qe);
  free(t);
  free(q);
  free(qd);
  free(qdd);
  free(tau);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  return e;
}

// ---------------------------------------------------------------- main

static void mbs_printError(void) {
  // exactly one line: flatten any newline in the message
  char msg[2048];
  snprintf(msg, sizeof msg, "%s", mbs_errMsg());
  for (char *p = msg; *p; p++)
    if (*p == '\n' || *p == '\r') *p = ' ';
  fprintf(stderr, "%s\n", msg[0] ? msg : "mbspar: error");
  if (getenv("MBS_TRACEBACK") && mbs_errTraceback()[0])
    fprintf(stderr, "traceback:\n%s", mbs_errTraceback());
}

int main(int argc, char **argv) {
  mbspComm *comm = NULL;
  mbsErr e = mbsp_init(&argc, &argv, &comm);
  if (e) {
    mbs_printError();
    return mbs_errExitCode(e);
  }
  int rank = mbsp_rank(comm);
  mbsCli cli;
  mbsConfig *cfg = NULL;
  mbsModel *m = NULL;
  char *text = NULL;

  // the command line is the same on every rank; agree anyway
  e = mbsp_agreeErr(comm, mbs_cliParse(argc, argv, &cli));
  if (!e) e = mbsp_threadsInit(comm, NULL); // OpenMP threads per rank: never oversubscribe
  if (!e && (cli.help || cli.version)) {
    if (rank == 0 && cli.help) fputs(mbs_usage, stdout);
    if (rank == 0 && cli.version && !cli.help) {
      printf("mbspar %s (git %s)\n", MBS_VERSION, MBS_GIT_SHA);
      printf("MPI library: %s\n", mbsp_libraryVersion());
      printf("compiler: %s, build type %s\n", MBS_COMPILER, MBS_BUILD_TYPE);
      printf("libconfig %s, PETSc %s, hwloc %s\n", MBS_LIBCONFIG_VERSION,
             MBS_PETSC_VERSION[0] ? MBS_PETSC_VERSION : "-",
             MBS_HWLOC_VERSION[0] ? MBS_HWLOC_VERSION : "-");
    }
    free(cli.sets);
    mbsp_finalize(&comm);
    return 0;
  }

  // rank 0 reads, everyone parses the same bytes
  if (!e && rank == 0) {
    struct stat st;
    if (stat(cli.config, &st) == 0 && S_ISDIR(st.st_mode))
      e = mbs_errSet(MBS_ERR_INPUT, "%s:0: cannot read: is a directory, not a config file",
                     cli.config);
  }
  e = mbsp_agreeErr(comm, e); // every rank, always (rank 0 alone may have failed)
  if (!e) e = mbsp_bcastFile(comm, cli.config, &text, NULL);
  if (!e) e = mbsp_agreeErr(comm, mbs_configParse(text, cli.config, cli.sets, cli.nset, &cfg));
  if (!e) e = mbsp_agreeErr(comm, mbs_configBuildModel(cfg, &m));
  if (!e && (m->opt.solver == MBS_SOLVER_PETSC || cli.verb == MBS_VERB_RUN)) {
    // PETSc sees only its own (single-dash) options
    char **pargv = calloc((size_t)argc + 1, sizeof *pargv);
    int pargc = 0;
    if (!pargv) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    for (int i = 0; !e && i < argc; i++) {
      const char *a = argv[i];
      if (i == 0 || (a[0] == '-' && a[1] && a[1] != '-' && a[2])) {
        pargv[pargc++] = argv[i];
        if (i > 0 && i + 1 < argc && argv[i + 1][0] != '-') pargv[pargc++] = argv[++i];
      }
    }
    if (!e) e = mbsp_petscInitialize(&pargc, &pargv);
    e = mbsp_agreeErr(comm, e);
    free(pargv);
  }
  if (!e && cli.bind) {
    int lr = 0, nl = 1;
    e = mbsp_localRank(comm, &lr, &nl);
    if (!e) e = mbsp_affinityBind(cli.bind, lr, nl);
    e = mbsp_agreeErr(comm, e);
  }

  if (!e) {
    switch (cli.verb) {
    case MBS_VERB_CHECK:
      if (rank == 0) {
        static const char *const files[] = {"check.json"};
        e = mbs_outPrepare(&cli, files, 1);
        if (!e && !cli.quiet && !(cli.json && !strcmp(cli.json, "-"))) {
          mbs_printSummary(cfg, m);
          printf("input is valid\n");
        }
        if (!e) e = mbs_emit(&cli, comm, cfg, m, mbs_checkJson, NULL);
      }
      e = mbsp_agreeErr(comm, e);
      break;
    case MBS_VERB_ACCEL:
      e = mbs_verbAccel(&cli, comm, cfg, m);
      break;
    case MBS_VERB_RUN:
      e = mbs_verbRun(&cli, comm, cfg, m);
      break;
    case MBS_VERB_CPA:
      e = mbs_verbCpa(&cli, comm, cfg, m);
      break;
    case MBS_VERB_INVERSE:
      e = mbsp_agreeErr(comm, rank == 0 ? mbs_inverseRun(&cli, comm, cfg, m) : MBS_OK);
      break;
    case MBS_VERB_STATIC:
      e = mbs_verbStatic(&cli, comm, cfg, m);
      break;
    default: // every verb has a case: unreachable (indexing the name table here trips
             // -Warray-bounds once the switch is complete)
      e = mbsp_agreeErr(comm,
                        mbs_errSet(MBS_ERR_INTERNAL, "mbspar: verb %d has no handler", cli.verb));
    }
  }

  if (e && rank == 0) mbs_printError();
  mbs_modelDestroy(&m);
  mbs_configDestroy(&cfg);
  free(text);
  free(cli.sets);
  mbsp_petscFinalize();
  mbsp_finalize(&comm);
  return mbs_errExitCode(e);
}
