/// \file cli.c
/// The command line of mbspar (docs/cli.md): option parsing against the verb table, the usage
/// text, output files and the common head of every JSON report. Local: no communication (the
/// report head asks the communicator for its size and thread level only).
#define _POSIX_C_SOURCE 200809L
#include <sys/resource.h>
#include "cli.h"
#include "mbspar/mbs_loops.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "build_info.h"
#include "mbspar/mbs_fault.h"
#include "mbspar/mbspar.h"

// ---------------------------------------------------------------- the options

// One option of mbspar: its name, its argument (NULL: a flag), the verbs it applies to (NULL:
// every verb; else the verb names separated by spaces) and its help (lines separated by \n).
// The usage text of `mbspar --help`, `mbspar help VERB` and `mbspar VERB --help` is made from
// this table, and mbsp_cliParse asks it which options take a value.
typedef struct {
  const char *name, *arg, *verbs, *help;
} mbsOpt;

static const mbsOpt mbs_opts[] = {
    {"--set", "KEY=VALUE", NULL,
     "override any config key by dotted path (repeatable), e.g.\n"
     "--set solver.method=aba --set model.chain.n=64 --set model.gravity=[0,0,-1]"},
    {"--json", "PATH|-", NULL, "write the machine-readable result (- = standard output)"},
    {"--out", "DIR", NULL,
     "write result files into DIR (VERB.json, inverse.csv; run: trajectory,\n"
     "energy.csv, run.json, checkpoint.bin; default output.dir)"},
    {"--force", NULL, NULL, "overwrite existing files in --out"},
    {"--repeat", "K", "accel", "time K evaluations and report the mean (time_per_eval_s)"},
    {"--restart", "FILE", "run",
     "continue from a checkpoint (output.checkpoint_every, or the one\n"
     "written on SIGTERM/SIGUSR1, after which mbspar exits with code 10)"},
    {"--progress", "SEC", "run accel static",
     "run: a plain progress line every SEC seconds (default: a live line\n"
     "on a terminal, also under mpirun; otherwise every 10 s);\n"
     "accel, static: a line every SEC s while they work (10 s)"},
    {"--bind", "MODE", NULL,
     "bind each rank (and its threads) when the launcher did not:\n"
     "core, numa or none (default: leave as launched)"},
    {"--count", "K", "modes", "the K lowest modes (default 10)"},
    {"--modal-out", "DIR", "check",
     "write each flexible body's modal file, DIR/BODY.h5 (flexible.file\n"
     "reads it; docs/flexible.md 14)"},
    {"--at", "WHERE", "modes",
     "q0 (default) or static: linearise at the initial state or at the\n"
     "equilibrium `mbspar static` finds (the config's static group)"},
    {"--method", "M", "cpa", "aba|crba|direct|jcg|jacobi|gs|sor|chebyshev|schur"},
    {"--grain", "G", "cpa", "op|block|body|flop"},
    {"--iterations", "K", "cpa", "iterative methods; default: measured"},
    {"--procs", "PMAX", "cpa", "table P = 1, 2, 4 .. PMAX; 1024"},
    {"--dot", "FILE", "cpa", "Graphviz, <= 2000 nodes"},
    {"--calibrate", NULL, "cpa", "time the kernels and, with >= 2 ranks, messages"},
    {"--latency", "S", "cpa", "message latency of the model, seconds"},
    {"--bandwidth", "BYTES/S", "cpa", "message bandwidth of the model"},
    {"--flop-time", "S", "cpa", "seconds per flop of the model"},
    {"--quiet", NULL, NULL, "no table on standard output"},
    {"--help", NULL, NULL, "this text (mbspar help VERB, mbspar VERB --help: one verb's)"},
    {"--version", NULL, NULL, "version, git sha, MPI library"},
};
#define MBS_NOPT ((int)(sizeof mbs_opts / sizeof mbs_opts[0]))

static const mbsOpt *mbs_optFind(const char *name) {
  for (int k = 0; k < MBS_NOPT; k++)
    if (!strcmp(mbs_opts[k].name, name)) return &mbs_opts[k];
  return NULL;
}

// 1 when option \p o applies to verb \p verb (NULL: the whole usage, every option)
static int mbs_optFor(const mbsOpt *o, const char *verb) {
  if (!o->verbs || !verb) return 1;
  size_t n = strlen(verb);
  for (const char *p = o->verbs; (p = strstr(p, verb)) != NULL; p += n)
    if ((p == o->verbs || p[-1] == ' ') && (p[n] == ' ' || !p[n])) return 1;
  return 0;
}

static void mbs_optPrint(FILE *f, const mbsOpt *o, int tag) {
  char head[64];
  snprintf(head, sizeof head, "%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
  const char *h = o->help;
  int first = 1;
  while (*h) {
    const char *nl = strchr(h, '\n');
    int len = nl ? (int)(nl - h) : (int)strlen(h);
    if (first && tag && o->verbs)
      fprintf(f, "  %-19s %s: %.*s\n", head, o->verbs, len, h);
    else
      fprintf(f, "  %-19s %.*s\n", first ? head : "", len, h);
    first = 0;
    h += len + (nl != NULL);
  }
}

static const char mbs_usage_petsc[] =
    "  -ksp_* -pc_* ...    PETSc options, wherever they stand (single dash; a value may be\n"
    "                      negative): the solvers of solver.method = petsc, and for run\n"
    "                      TS's -ts_type, -ts_rk_type, -ts_adapt_*, -ts_monitor, ...;\n"
    "                      -ts_dt DT = --set integrator.dt=DT, -ts_max_time T = --set\n"
    "                      integrator.t_end=T; -ts_max_steps is refused (set t_end);\n"
    "                      -help lists PETSc's options and this text, -options_left what\n"
    "                      PETSc did not use\n";

static const char mbs_usage_exit[] =
    "\n"
    "exit codes: 0 ok, 2 bad input or usage, 3 I/O error, 4 out of memory, 5 numerical failure,\n"
    "            6 MPI error, 7 PETSc error, 8 not available, 9 internal error, 10 run stopped\n"
    "            by SIGTERM or SIGUSR1 after writing a checkpoint (docs/cli.md)\n";

void mbsp_cliUsage(FILE *f, const mbspVerb *verbs, int nverb, const mbspVerb *verb) {
  if (verb) { // one verb: its line, then the options that apply to it
    fprintf(f, "usage: mbspar %s CONFIG [options]\n\n%s: %s\n\noptions:\n", verb->name, verb->name,
            verb->help);
  } else {
    fputs("usage: mbspar [VERB] CONFIG [options]\n"
          "       mbspar help [VERB]   (the options of one verb: mbspar VERB --help)\n"
          "       mbspar help config   (every key of the option groups: type, range, default)\n"
          "\nverbs:\n",
          f);
    for (int v = 0; v < nverb; v++) fprintf(f, "  %-9s %s\n", verbs[v].name, verbs[v].help);
    fputs("\noptions:\n", f);
  }
  for (int k = 0; k < MBS_NOPT; k++)
    if (mbs_optFor(&mbs_opts[k], verb ? verb->name : NULL)) mbs_optPrint(f, &mbs_opts[k], !verb);
  if (!verb || verb->petsc || verb->forward) fputs(mbs_usage_petsc, f);
  fputs(mbs_usage_exit, f);
}

mbsErr mbsp_cliBlameTs(const mbsCli *cli, mbsErr e) {
  static const char *const opt[2] = {"-ts_dt", "-ts_max_time"};
  const char *msg = mbs_errMsg();
  for (int k = 0; e && k < 2; k++) {
    size_t n = strlen(cli->ts_set[k]);
    if (!n || strncmp(msg, "--set ", 6) || strncmp(msg + 6, cli->ts_set[k], n) || msg[6 + n] != ':')
      continue;
    char rest[1024];
    snprintf(rest, sizeof rest, "%s", msg + 6 + n);
    return mbs_errSet(e, "%s %s%s", opt[k], strchr(cli->ts_set[k], '=') + 1, rest);
  }
  return e;
}

void mbsp_cliFree(mbsCli *cli) {
  free(cli->sets);
  free(cli->pargv);
  cli->sets = NULL;
  cli->pargv = NULL;
}

int mbsp_cliTable(const mbsCli *cli) {
  return !cli->quiet && !(cli->json && !strcmp(cli->json, "-"));
}

void mbsp_tickerStart(mbspTicker *k, const mbsCli *cli) {
  k->every = cli->progress_every > 0 ? cli->progress_every : 10;
  k->t0 = mbs_wtime();
  k->next = k->t0 + k->every;
}

int mbsp_tickerDue(mbspTicker *k, double *elapsed) {
  double t = mbs_wtime();
  if (t < k->next) return 0;
  k->next = t + k->every;
  *elapsed = t - k->t0;
  return 1;
}

void mbsp_staticProgress(void *ctx, int it, double ke, double dq) {
  mbspStaticProgress *p = ctx;
  double t;
  if (mbsp_tickerDue(&p->tick, &t))
    fprintf(stderr,
            "mbspar: static: %d of at most %d evaluations, kinetic energy %.3g J (ke_tol %.3g), "
            "step %.3g (dq_tol %.3g), %.1f s\n",
            it, p->o->max_iter, ke, p->o->ke_tol, dq, p->o->dq_tol, t);
}

// ---------------------------------------------------------------- command line

// a number, negative too ("-1", "-2.5e-3"): the value of a PETSc option, not an option
static int mbs_isNumber(const char *s) {
  char *end = NULL;
  strtod(s, &end);
  return end != s && !*end;
}

static const mbspVerb *mbs_verbFind(const char *a, const mbspVerb *verbs, int nverb) {
  for (int v = 0; v < nverb; v++)
    if (!strcmp(a, verbs[v].name)) return &verbs[v];
  return NULL;
}

// what each word of the command line is
enum { MBS_ARG_OWN, MBS_ARG_PETSC, MBS_ARG_PVAL, MBS_ARG_MAYBE, MBS_ARG_POS };

static mbsErr mbs_cliWords(int argc, char **argv, const mbspVerb *verbs, int nverb, mbsCli *cli,
                           unsigned char *kind) {
  int ndef = 0; // positionals that cannot be anything else
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *val = NULL;
    // single-dash options belong to PETSc (-ksp_type cg, -pc_type jacobi, -log_view, ...),
    // wherever they stand: a following number (also negative: -ts_max_reject -1) is the value;
    // a following word is the value too (MAYBE) unless it names a verb, or a positional turns
    // out to be missing (mbspar -ts_monitor chain.cfg: see mbsp_cliParse)
    if (a[0] == '-' && a[1] && a[1] != '-' && a[2] && !mbs_isNumber(a)) {
      kind[i] = MBS_ARG_PETSC;
      if (!strcmp(a, "-help")) cli->petsc_help = 1;
      if (i + 1 < argc) {
        const char *b = argv[i + 1];
        if (b[0] == '-' && b[1]) {
          if (mbs_isNumber(b)) kind[++i] = MBS_ARG_PVAL;
        } else if (!(ndef == 0 && (!strcmp(b, "help") || mbs_verbFind(b, verbs, nverb)))) {
          kind[++i] = MBS_ARG_MAYBE;
        }
      }
      continue;
    }
    if (a[0] == '-' && a[1]) {
      kind[i] = MBS_ARG_OWN;
      // --opt=value or --opt value
      char opt[64];
      const char *eq = strchr(a, '=');
      size_t n = eq ? (size_t)(eq - a) : strlen(a);
      if (n >= sizeof opt) n = sizeof opt - 1;
      memcpy(opt, a, n);
      opt[n] = 0;
      const mbsOpt *o = mbs_optFind(opt);
      // cpa and modes options: accepted here, read by mbsp_verbCpa and mbsp_verbModes
      int cpa_opt = o && o->verbs && (!strcmp(o->verbs, "cpa") || !strcmp(o->verbs, "modes"));
      if (o && o->arg) {
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
      } else if (!strcmp(opt, "--modal-out")) {
        if (!val[0]) return mbs_errSet(MBS_ERR_USAGE, "mbspar: --modal-out needs a directory");
        cli->modal_out = val;
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
                            "mbspar: --repeat %s: expected an integer number of evaluations "
                            "in [1, 1000000000]",
                            val);
        cli->repeat = (int)k;
      } else if (cpa_opt || !strcmp(opt, "--calibrate")) {
        // read again by mbsp_verbCpa
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
      kind[i] = MBS_ARG_POS;
      ndef++;
    }
  }
  return MBS_OK;
}

// the PETSc words in the order given (argv[0] first), without the -ts_* options mbspar maps onto
// its config (-ts_dt, -ts_max_time: --set, after the user's own); -ts_max_steps is refused
static mbsErr mbs_cliPetsc(int argc, char **argv, const unsigned char *kind, mbsCli *cli) {
  static const char *const map[][2] = {{"-ts_dt", "integrator.dt"},
                                       {"-ts_max_time", "integrator.t_end"}};
  int np = 0;
  cli->pargv[np++] = argv[0];
  for (int i = 1; i < argc; i++) {
    if (kind[i] != MBS_ARG_PETSC) continue;
    const char *a = argv[i];
    const char *val = i + 1 < argc && (kind[i + 1] == MBS_ARG_PVAL || kind[i + 1] == MBS_ARG_MAYBE)
                          ? argv[i + 1]
                          : NULL;
    if (!strcmp(a, "-ts_max_steps"))
      return mbs_errSet(MBS_ERR_USAGE,
                        "mbspar: -ts_max_steps is not supported: a run ends at integrator.t_end "
                        "(-ts_max_time T or --set integrator.t_end=T)");
    int k = -1;
    for (int j = 0; j < 2; j++)
      if (!strcmp(a, map[j][0])) k = j;
    if (k >= 0) {
      if (!val) return mbs_errSet(MBS_ERR_USAGE, "mbspar: %s needs a value", a);
      int w = snprintf(cli->ts_set[k], sizeof cli->ts_set[k], "%s=%s", map[k][1], val);
      if (w < 0 || (size_t)w >= sizeof cli->ts_set[k])
        return mbs_errSet(MBS_ERR_USAGE, "mbspar: %s %s: value too long", a, val);
      i++;
      continue;
    }
    cli->pargv[np++] = argv[i];
    if (val) cli->pargv[np++] = argv[++i];
  }
  cli->pargv[np] = NULL;
  cli->pargc = np;
  for (int k = 0; k < 2; k++)
    if (cli->ts_set[k][0]) cli->sets[cli->nset++] = cli->ts_set[k];
  return MBS_OK;
}

const char *mbsp_cliTsOption(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (!strncmp(argv[i], "-ts_", 4) && strcmp(argv[i], "-ts_dt") &&
        strcmp(argv[i], "-ts_max_time"))
      return argv[i];
  return NULL;
}

mbsErr mbsp_cliParse(int argc, char **argv, const mbspVerb *verbs, int nverb, mbsCli *cli) {
  memset(cli, 0, sizeof *cli);
  cli->repeat = 1;
  cli->progress_every = 0; // 0: not given (a live line on a terminal, else every 10 s)
  cli->argc = argc;
  cli->argv = argv;
  size_t na = (size_t)(argc > 0 ? argc : 1);
  cli->sets = calloc(na + 2, sizeof *cli->sets); // + -ts_dt, -ts_max_time
  cli->pargv = calloc(na + 1, sizeof *cli->pargv);
  unsigned char *kind = calloc(na, 1);
  if (!cli->sets || !cli->pargv || !kind) {
    free(kind);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  }
  mbsErr e = mbs_cliWords(argc, argv, verbs, nverb, cli, kind);
  // the positionals: [VERB] CONFIG or help [VERB]. A word after a PETSc option is the option's
  // value unless a positional is missing: then the missing ones are taken from those words,
  // files that exist first, else the earliest (mbspar -ts_monitor chain.cfg)
  int ndef = 0, first = 0;
  for (int i = 1; i < argc; i++)
    if (kind[i] == MBS_ARG_POS && !ndef++) first = i;
  int need =
      first && (!strcmp(argv[first], "help") || mbs_verbFind(argv[first], verbs, nverb)) ? 2 : 1;
  if (first && !strcmp(argv[first], "help")) need = ndef;
  for (int pass = 0;
       !e && pass < (cli->petsc_help ? 1 : 2) && ndef < need && !cli->help && !cli->version; pass++)
    for (int i = 1; i < argc && ndef < need; i++) {
      struct stat st;
      if (kind[i] == MBS_ARG_MAYBE && (pass || stat(argv[i], &st) == 0))
        kind[i] = MBS_ARG_POS, ndef++;
    }
  const char *pos[2] = {NULL, NULL};
  int npos = 0;
  for (int i = 1; !e && i < argc; i++) {
    if (kind[i] != MBS_ARG_POS) continue;
    if (npos == 2)
      e = mbs_errSet(MBS_ERR_USAGE, "mbspar: unexpected argument \"%s\" (see mbspar --help)",
                     argv[i]);
    else
      pos[npos++] = argv[i];
  }
  if (!e) e = mbs_cliPetsc(argc, argv, kind, cli);
  free(kind);
  if (e) return e;
  // mbspar help [VERB], mbspar VERB --help: the usage of one verb (cli->verb) or of all (NULL)
  int help_word = npos >= 1 && !strcmp(pos[0], "help");
  if (help_word) {
    cli->help = 1;
    pos[0] = pos[1], npos--;
  }
  // mbspar -help, mbspar VERB -help: no CONFIG, so the usage (and PETSc's general options)
  if (!cli->help && !cli->version && cli->petsc_help &&
      (npos == 0 || (npos == 1 && mbs_verbFind(pos[0], verbs, nverb))))
    cli->help = 1;
  if (cli->help || cli->version) {
    cli->verb = npos >= 1 ? mbs_verbFind(pos[0], verbs, nverb) : NULL;
    // mbspar help config: the config keys (no verb is called config)
    cli->help_config = help_word && npos == 1 && !cli->verb && !strcmp(pos[0], "config");
    if (cli->help_config) return MBS_OK;
    if (help_word && npos >= 1 && !cli->verb)
      return mbs_errSet(MBS_ERR_USAGE, "mbspar: help %s: no such verb (mbspar help lists them)",
                        pos[0]);
    return MBS_OK;
  }
  // VERB CONFIG or CONFIG
  if (npos >= 1) cli->verb = mbs_verbFind(pos[0], verbs, nverb);
  if (cli->verb) {
    if (npos < 2)
      return mbs_errSet(MBS_ERR_USAGE, "mbspar: missing CONFIG after \"%s\" (see mbspar --help)",
                        pos[0]);
    cli->config = pos[1];
  } else {
    if (npos == 0)
      return mbs_errSet(MBS_ERR_USAGE,
                        "mbspar: missing CONFIG (usage: mbspar [VERB] CONFIG [options]; see "
                        "mbspar --help)");
    if (npos == 2) {
      char names[256];
      size_t len = 0;
      names[0] = 0;
      for (int v = 0; v < nverb && len < sizeof names; v++)
        len +=
            (size_t)snprintf(names + len, sizeof names - len, "%s%s", v ? ", " : "", verbs[v].name);
      return mbs_errSet(MBS_ERR_USAGE, "mbspar: unknown verb \"%s\" (verbs: %s)", pos[0], names);
    }
    cli->verb = &verbs[0];
    cli->config = pos[0];
  }
  return mbsp_cliCheckJson(cli); // a --json that is a directory: refused before anything runs
}

// ---------------------------------------------------------------- output files

static int mbs_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

mbsErr mbsp_outPath(const mbsCli *cli, const char *name, char *buf, size_t n) {
  int w = snprintf(buf, n, "%s/%s", cli->out, name);
  MBS_CHECK(w > 0 && (size_t)w < n, MBS_ERR_USAGE, "mbspar: --out %s: path too long", cli->out);
  return MBS_OK;
}

mbsErr mbsp_outPrepare(const mbsCli *cli, const char *const *names, int nnames) {
  if (!cli->out) return MBS_OK;
  // mkdir first (EEXIST is fine), then what is there: no window between a test and the creation
  struct stat st;
  if (MBS_FAULT_WRITE_POINT() || (mkdir(cli->out, 0777) != 0 && errno != EEXIST))
    return mbs_errSet(MBS_ERR_IO, "mbspar: --out %s: cannot create directory (%s)", cli->out,
                      strerror(errno));
  if (stat(cli->out, &st) != 0 || !S_ISDIR(st.st_mode))
    return mbs_errSet(MBS_ERR_IO, "mbspar: --out %s: exists and is not a directory", cli->out);
  for (int k = 0; k < nnames; k++) {
    char p[4096];
    MBS_CALL(mbsp_outPath(cli, names[k], p, sizeof p));
    struct stat sn;
    if (lstat(p, &sn) == 0 && !S_ISREG(sn.st_mode))
      return mbs_errSet(MBS_ERR_IO, "mbspar: %s exists and is not a regular file; not writing it",
                        p);
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
  mbs_jsonString(j, "verb", cli->verb->name);
  mbs_jsonInt(j, "ranks", mbsp_jobSize(comm)); // auto: the job's, also while rank 0 works alone
  mbs_jsonInt(j, "mpi_thread_level", mbsp_threadLevel(comm));
  mbs_jsonString(j, "host", host);
  mbs_jsonString(j, "date", date);
  mbs_jsonBeginArray(j, "argv");
  for (int k = 0; k < cli->argc; k++) mbs_jsonString(j, NULL, cli->argv[k]);
  mbs_jsonEndArray(j);
  mbs_jsonEndObject(j);
}

void mbsp_jointCounts(const mbsModel *m, int *cnt) {
  for (int t = 0; t < MBS_JNT_COUNT; t++) cnt[t] = m->local ? m->sum_jnt[t] : 0;
  if (m->local) return;
  for (int b = 0; b < m->nbody; b++) cnt[m->body_jnttype[b]]++;
}

static void mbs_jsonModel(mbsJson *j, const mbsModel *m) {
  int cnt[MBS_JNT_COUNT];
  mbsp_jointCounts(m, cnt);
  mbs_jsonBeginObject(j, "model");
  mbs_jsonInt(j, "bodies", m->nbody_g);
  mbs_jsonInt(j, "nq", m->nq_g);
  mbs_jsonInt(j, "dofs", m->nv_g);
  mbs_jsonInt(j, "nlam", m->nlam_g);
  if (m->local) { // each rank holds its bodies only: the totals below are over all ranks
    mbs_jsonString(j, "storage", "distributed");
    mbs_jsonNumber(j, "total_mass", m->sum_mass);
  } else {
    mbs_jsonString(j, "storage", "replicated");
    mbs_jsonInt(j, "max_depth", m->maxdepth);
    mbs_jsonNumber(j, "total_mass", mbs_modelTotalMass(m));
  }
  mbs_jsonNumberArray(j, "gravity", m->gravity, 3);
  mbs_jsonBeginObject(j, "joint_types");
  for (int t = 0; t < MBS_JNT_COUNT; t++)
    if (cnt[t]) mbs_jsonInt(j, mbs_jntName(t), cnt[t]);
  mbs_jsonEndObject(j);
  mbs_loopJsonModel(j, m); // closed loops and spring-dampers (docs/loops.md)
  mbs_jsonEndObject(j);
}

// peak resident memory of every rank (mbsp_cliGatherRss), written into the report head
static double mbsp_rss[5];
static int mbsp_have_rss = 0;

mbsErr mbsp_cliGatherRss(mbspComm *comm) {
  struct rusage ru;
  double rss = getrusage(RUSAGE_SELF, &ru) == 0 ? 1024.0 * (double)ru.ru_maxrss : -1;
  MBS_CALL(mbsp_stats(comm, &rss, 1, mbsp_rss));
  mbsp_have_rss = 1;
  return MBS_OK;
}

void mbsp_jsonHead(mbsJson *j, const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg,
                   const mbsModel *m) {
  mbs_jsonString(j, "schema", "mbspar-report-1");
  mbs_jsonBuild(j);
  mbs_jsonRun(j, cli, comm);
  mbs_jsonInt(j, "ranks", mbsp_jobSize(comm)); // auto: the job's, also while rank 0 works alone
  mbs_jsonBeginObject(j, "config");
  mbs_configWriteJson(cfg, j);
  mbs_jsonEndObject(j);
  mbs_jsonModel(j, m);
  if (mbsp_have_rss) { // peak resident memory per rank (getrusage), bytes
    mbs_jsonBeginObject(j, "peak_rss_bytes");
    mbs_jsonNumber(j, "min", mbsp_rss[0]);
    mbs_jsonNumber(j, "avg", mbsp_rss[1]);
    mbs_jsonNumber(j, "max", mbsp_rss[2]);
    mbs_jsonInt(j, "min_rank", (long)mbsp_rss[3]);
    mbs_jsonInt(j, "max_rank", (long)mbsp_rss[4]);
    mbs_jsonEndObject(j);
  }
  if (cfg->urdf) { // the robot: joints with their limits, what is not modelled
    mbs_jsonBeginObject(j, "urdf");
    mbs_urdfJson(cfg->urdf, j);
    if (cfg->nurdf_jf) { // model.urdf.joints: the keys given, per dof
      static const char *const keys[4] = {"force", "stiffness", "springref", "damping"};
      mbs_jsonBeginArray(j, "joint_forces");
      for (int k = 0; k < cfg->nurdf_jf; k++) {
        const mbsUrdfJointForce *f = &cfg->urdf_jf[k];
        const mbsReal *v[4] = {f->force, f->stiffness, f->springref, f->damping};
        mbs_jsonBeginObject(j, NULL);
        mbs_jsonString(j, "joint", f->name);
        for (int q = 0; q < 4; q++)
          if (f->given & (1 << q)) mbs_jsonNumberArray(j, keys[q], v[q], f->nv);
        mbs_jsonEndObject(j);
      }
      mbs_jsonEndArray(j);
    }
    if (cfg->torques) { // model.urdf.torques: the table
      const mbsTorques *t = cfg->torques;
      mbs_jsonBeginObject(j, "torques");
      mbs_jsonString(j, "file", t->file);
      mbs_jsonInt(j, "rows", t->ns);
      mbs_jsonNumber(j, "t_first", t->t[0]);
      mbs_jsonNumber(j, "t_last", t->t[t->ns - 1]);
      mbs_jsonBeginArray(j, "joints");
      for (int k = 0; k < t->ncol; k++) mbs_jsonString(j, NULL, t->joint[k]);
      mbs_jsonEndArray(j);
      mbs_jsonEndObject(j);
    }
    mbs_jsonEndObject(j);
  }
}

// what a report target is: 0 a regular file or nothing (written through a temporary and
// renamed), 1 a character device or FIFO (written to directly), 2 a symbolic link to a regular
// file (its target, \p real, is replaced), -1 anything else (a directory, a socket: refused);
// "-" is 0
static int mbsp_cliJsonKind(const char *path, char *real, size_t n) {
  struct stat st, lst;
  if (!strcmp(path, "-") || lstat(path, &lst) != 0) return 0;
  if (stat(path, &st) != 0) return S_ISLNK(lst.st_mode) ? -1 : 0; // a dangling link
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return 1;
  if (!S_ISREG(st.st_mode)) return -1;
  if (!S_ISLNK(lst.st_mode)) return 0;
  char *r = realpath(path, NULL);
  if (!r || strlen(r) >= n) {
    free(r);
    return -1;
  }
  memcpy(real, r, strlen(r) + 1);
  free(r);
  return 2;
}

mbsErr mbsp_cliCheckJson(const mbsCli *cli) {
  char real[4096];
  if (cli->json && mbsp_cliJsonKind(cli->json, real, sizeof real) < 0)
    return mbs_errSet(MBS_ERR_USAGE,
                      "mbspar: --json %s: not a regular file, character device or FIFO (a "
                      "directory?); not writing the report there",
                      cli->json);
  return MBS_OK;
}

mbsErr mbsp_emitStaged(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, const mbsModel *m,
                       mbspJsonBody body, const void *ctx, mbspOutSet *set) {
  const char *targets[2] = {cli->json, NULL};
  char outp[4096];
  if (cli->out) {
    char name[64];
    snprintf(name, sizeof name, "%s.json", cli->verb->name);
    MBS_CALL(mbsp_outPath(cli, name, outp, sizeof outp));
    targets[1] = outp;
  }
  for (int k = 0; k < 2; k++) {
    if (!targets[k]) continue;
    mbsJson *j;
    char real[4096];
    int kind = mbsp_cliJsonKind(targets[k], real, sizeof real);
    if (kind < 0)
      return mbs_errSet(MBS_ERR_IO,
                        "mbspar: %s: not a regular file, character device or FIFO; "
                        "not writing the report there",
                        targets[k]);
    if (!strcmp(targets[k], "-")) { // standard output: now, nothing to stage
      MBS_CALL(mbs_jsonOpen(targets[k], &j));
    } else if (kind == 1) { // a device or FIFO (--json /dev/stderr): written to, never replaced
      MBS_CALL(mbs_jsonOpenNew(targets[k], MBS_JSON_STREAM, &j));
    } else if (kind == 2) { // a symbolic link to a regular file: the file is replaced, not the link
      char tmp[4200];
      snprintf(tmp, sizeof tmp, "%s.tmp.%ld", real, (long)getpid());
      MBS_CALL(mbs_jsonOpenNew(tmp, MBS_JSON_DIRECT, &j));
      mbsErr es = mbsp_outStage(set, tmp, real, k == 1 && !cli->force);
      if (es) {
        mbs_jsonAbandon(&j);
        return es;
      }
    } else { // a temporary of the set; --json PATH is overwritten, DIR/VERB.json only with --force
      char tmp[4200];
      snprintf(tmp, sizeof tmp, "%s.tmp.%ld", targets[k], (long)getpid());
      MBS_CALL(mbs_jsonOpenNew(tmp, MBS_JSON_DIRECT, &j));
      mbsErr es = mbsp_outStage(set, tmp, targets[k], k == 1 && !cli->force);
      if (es) {
        mbs_jsonAbandon(&j);
        return es;
      }
    }
    mbsp_jsonHead(j, cli, comm, cfg, m);
    body(j, ctx);
    MBS_CALL(mbs_jsonClose(&j));
  }
  return MBS_OK;
}

mbsErr mbsp_emit(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, const mbsModel *m,
                 mbspJsonBody body, const void *ctx) {
  mbspOutSet set;
  mbsp_outInit(&set);
  mbsErr e = mbsp_emitStaged(cli, comm, cfg, m, body, ctx, &set);
  if (!e) e = mbsp_outCommit(&set);
  mbsp_outDiscard(&set);
  return e;
}

// ---------------------------------------------------------------- files written through a
// temporary, put in place together

void mbsp_outInit(mbspOutSet *o) {
  memset(o, 0, sizeof *o);
}

mbsErr mbsp_outStage(mbspOutSet *o, const char *tmp, const char *path, int exclusive) {
  if (o->n == MBSP_OUTSET_MAX) {
    remove(tmp);
    return mbs_errSet(MBS_ERR_INTERNAL, "mbspar: more than %d output files in one set",
                      MBSP_OUTSET_MAX);
  }
  snprintf(o->tmp[o->n], sizeof o->tmp[0], "%s", tmp);
  snprintf(o->path[o->n], sizeof o->path[0], "%s", path);
  o->excl[o->n++] = exclusive;
  return MBS_OK;
}

void mbsp_outDiscard(mbspOutSet *o) {
  for (int k = 0; k < o->n; k++) remove(o->tmp[k]);
  o->n = 0;
}

// all or nothing: an existing file is first linked to PATH.old.PID (so it can come back), then
// each temporary takes its name (rename; exclusive: link, which refuses an existing PATH
// atomically); on a failure the files already put in place are undone (the old ones come back,
// new ones go) and every temporary is removed
mbsErr mbsp_outCommit(mbspOutSet *o) {
  char old[MBSP_OUTSET_MAX][4300];
  int had[MBSP_OUTSET_MAX] = {0}, done = 0;
  mbsErr e = MBS_OK;
  for (int k = 0; k < o->n && !e; k++) {
    snprintf(old[k], sizeof old[k], "%s.old.%ld", o->path[k], (long)getpid());
    struct stat st;
    if (o->excl[k] || stat(o->path[k], &st) != 0) continue;
    if (MBS_FAULT_WRITE_POINT() || link(o->path[k], old[k]) != 0)
      e = mbs_errSet(MBS_ERR_IO, "mbspar: %s: cannot keep the earlier file while replacing it: %s",
                     o->path[k], strerror(errno));
    else
      had[k] = 1;
  }
  for (; done < o->n && !e; done++) {
    const char *tmp = o->tmp[done], *path = o->path[done];
    int rc = MBS_FAULT_WRITE_POINT() ? -1 : o->excl[done] ? link(tmp, path) : rename(tmp, path);
    int err = errno;
    if (rc == 0) continue;
    e = err == EEXIST && o->excl[done]
            ? mbs_errSet(MBS_ERR_IO, "mbspar: %s exists; not overwriting it (use --force)", path)
            : mbs_errSet(MBS_ERR_IO, "mbspar: %s: cannot put in place (nothing written): %s", path,
                         strerror(err));
    break;
  }
  for (int k = 0; k < done && e; k++) { // undo
    if (had[k])
      rename(old[k], o->path[k]);
    else
      remove(o->path[k]);
  }
  for (int k = 0; k < o->n; k++) {
    if (had[k]) remove(old[k]); // the extra link (after an undo it was renamed back already)
    remove(o->tmp[k]);          // exclusive: the second link; a failure: the temporary
  }
  o->n = 0;
  return e;
}

mbsErr mbsp_tmpOpen(const char *path, char *tmp, size_t n, FILE **f) {
  snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
  *f = MBS_FAULT_WRITE_POINT() ? NULL : fopen(tmp, "w");
  if (!*f)
    return mbs_errSet(MBS_ERR_IO, "mbspar: %s: cannot open for writing: %s", tmp, strerror(errno));
  return MBS_OK;
}

mbsErr mbsp_tmpClose(FILE *f, const char *tmp, const char *path) {
  int bad = ferror(f) != 0;
  if (fclose(f) != 0) bad = 1;
  if (MBS_FAULT_WRITE_POINT()) bad = 1;
  if (bad) {
    remove(tmp);
    return mbs_errSet(MBS_ERR_IO, "mbspar: %s: write failed (nothing written): %s", path,
                      strerror(errno));
  }
  return MBS_OK;
}

const char *mbsp_cliArg(const mbsCli *cli, const char *name) {
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
