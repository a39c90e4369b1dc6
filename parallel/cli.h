/// \file cli.h
/// The mbspar command line, shared by the driver (main.c) and the verbs (verb_*.c): the parsed
/// options, the verb table entry, output files and the common head of every JSON report.
/// Private to the parallel layer. Adding a verb: write parallel/verb_NAME.c with a handler of
/// type mbspVerbFn, declare it below, and add a row to the table in main.c (docs/code.md).
#ifndef MBSP_CLI_H
#define MBSP_CLI_H

#include <stdio.h>
#include "mbspar/mbs_colsplit.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_motion.h"
#include "mbspar/mbs_parallel.h"
#include "mbspar/mbs_report.h"
#include "sim.h"

typedef struct mbspVerb mbspVerb;

/// The command line.
typedef struct {
  const mbspVerb *verb; ///< the verb (table entry)
  const char *config;   ///< CONFIG path
  const char **sets;    ///< (nset) --set KEY=VALUE
  int nset;
  const char *json;      ///< --json PATH or "-" (NULL: none)
  const char *out;       ///< --out DIR (NULL: none)
  int repeat;            ///< --repeat K
  const char *bind;      ///< --bind core|numa|none
  const char *restart;   ///< --restart FILE
  const char *modal_out; ///< check --modal-out DIR (NULL: none)
  double progress_every; ///< --progress SECONDS (batch logs)
  int quiet, force, help, version;
  int petsc_help;  ///< -help (PETSc's, with mbspar's own options)
  int help_config; ///< mbspar help config: the keys of the option groups (mbs_configHelp)
  int argc;
  char **argv;
  int pargc;           ///< the PETSc options (argv[0] first), for PetscInitialize
  char **pargv;        ///< (pargc + 1, NULL-terminated)
  char ts_set[2][128]; ///< -ts_dt, -ts_max_time as --set integrator.dt=, integrator.t_end=
} mbsCli;

/// A verb: runs on every rank with the parsed command line, the config and the model, and
/// returns a code every rank agrees on (mbsp_agreeErr). Collective.
typedef mbsErr (*mbspVerbFn)(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg,
                             const mbsModel *m);

/// One row of the verb table (main.c).
struct mbspVerb {
  const char *name; ///< the word on the command line
  mbspVerbFn run;   ///< the handler
  const char *help; ///< its line in the usage text
  int petsc;        ///< 1: PETSc must be initialised before the handler runs (run: TS)
  int local;        ///< 1: runs on distributed-memory models (each rank only its bodies)
  int forward;      ///< 1: evaluates the forward dynamics with solver.method (accel, run, static)
};

/// Peak resident memory of every rank (min/avg/max over ranks), kept for the report head of the
/// next mbsp_emit. Collective.
mbsErr mbsp_cliGatherRss(mbspComm *comm);

// ---------------------------------------------------------------- the verbs (verb_*.c)

mbsErr mbsp_verbRun(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, const mbsModel *m);
/// Flexible models (parallel/flex_run.c, docs/flexible.md 6): MBS_OK when the verb, its method
/// and the rank count can run them (set the error otherwise: one line, exit 8), and the verb
/// itself.
mbsErr mbsp_flexRoute(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, const mbsModel *m);
mbsErr mbsp_flexVerb(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, const mbsModel *m);
/// Flexible models at several ranks (parallel/flex_verbs.c): sets cfg->sauto.idle where the
/// serial oracles run on rank 0 alone (accel, run, inverse with aba or crba) and clears it for
/// static, which runs on every rank (docs/flexible.md 8). Nothing for rigid models (m NULL or
/// without flexible bodies) or one rank. Local (the same on every rank).
void mbsp_flexRanks(const mbsCli *cli, mbspComm *comm, mbsConfig *cfg, const mbsModel *m);
/// The column split (mbs_colsplit.h) over the ranks of \p comm: this rank's part, the gather by
/// one broadcast per rank, the agreements. Local (the hooks are collective).
void mbsp_colSplitInit(mbsColSplit *cs, mbspComm *comm);
mbsErr mbsp_verbAccel(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, const mbsModel *m);
mbsErr mbsp_verbInverse(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, const mbsModel *m);
/// inverse.motion of \p cfg read for model \p m (rank 0; verb_inverse.c).
mbsErr mbsp_inverseMotion(const mbsConfig *cfg, const mbsModel *m, mbsMotion **mo);
/// The motion file of drive \p j of \p cfg (profile motion) read for model \p m: FILE:LINE,
/// MBS_ERR_INPUT, if it cannot be read, lacks the driven coordinate's column or does not cover
/// 0 ... integrator.t_end (sim_drive.c; rank 0).
mbsErr mbsp_driveMotionRead(const mbsConfig *cfg, const mbsModel *m, int j, mbsMotion **mo);
/// The inverse verb's table, inverse.csv and inverse.json for a flexible model (the samples t,
/// q, qd, qdd, tau of every dof, the modal coordinates eta (ns x ne); docs/flexible.md 11; rank 0;
/// non-finite values refused as in the rigid verb); \p method: inverse.method of the JSON.
mbsErr mbsp_inverseFlexWrite(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg,
                             const mbsModel *m, int ns, const mbsReal *t, const mbsReal *q,
                             const mbsReal *qd, const mbsReal *qdd, const mbsReal *tau,
                             const mbsMotion *mo, const mbsReal *eta, int ne, const char *method);
mbsErr mbsp_verbStatic(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, const mbsModel *m);
mbsErr mbsp_verbModes(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, const mbsModel *m);
mbsErr mbsp_verbCpa(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, const mbsModel *m);
mbsErr mbsp_verbCheck(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, const mbsModel *m);

// ---------------------------------------------------------------- shared pieces (cli.c)

/// The first PETSc TS option on the command line that a run without PETSc TS cannot honour
/// (every -ts_* word but -ts_dt and -ts_max_time, which mbspar maps onto integrator.dt and
/// integrator.t_end), or NULL. The natural-coordinate and flexible runs integrate with mbspar's
/// own steppers and refuse such options rather than ignore them. Local.
const char *mbsp_cliTsOption(int argc, char **argv);

/// Parse argv against the verb table \p verbs (\p nverb rows; row 0 is the default verb). Usage
/// errors return MBS_ERR_USAGE with the one-line message. PETSc's options (single dash, anywhere,
/// with their values) are collected in pargv; -ts_dt and -ts_max_time become --set overrides.
/// With help set, verb is the verb whose usage is asked (NULL: all). Free with mbsp_cliFree (also
/// after an error). Local.
/// A verb's own option: the value of \p name ("--NAME=VALUE" or "--NAME VALUE", the last one
/// given; "" when it ends the command line), or NULL if absent (cpa, modes). Local.
const char *mbsp_cliArg(const mbsCli *cli, const char *name);
mbsErr mbsp_cliParse(int argc, char **argv, const mbspVerb *verbs, int nverb, mbsCli *cli);
void mbsp_cliFree(mbsCli *cli);
/// An error of the config about a value that came from -ts_dt or -ts_max_time names that option
/// instead of the --set it became. Returns \p e. Local.
mbsErr mbsp_cliBlameTs(const mbsCli *cli, mbsErr e);
/// The usage text: of \p verb (its options), or (NULL) the verbs of the table, then every
/// option. Local.
void mbsp_cliUsage(FILE *f, const mbspVerb *verbs, int nverb, const mbspVerb *verb);

/// `--json PATH` must be "-", absent, a regular file (or a link to one), a character device or a
/// FIFO; anything else (a directory, a socket) is a usage error. Called by mbsp_cliParse. Local.
mbsErr mbsp_cliCheckJson(const mbsCli *cli);

/// DIR/NAME of --out DIR into buf. Local.
mbsErr mbsp_outPath(const mbsCli *cli, const char *name, char *buf, size_t n);
/// Create --out DIR if needed and refuse to overwrite the files a verb writes (rank 0).
mbsErr mbsp_outPrepare(const mbsCli *cli, const char *const *names, int nnames);
/// The output files of a verb, written to temporaries and put in place together
/// (mbsp_outCommit): a verb that fails leaves every earlier file untouched (issue 12.2).
#define MBSP_OUTSET_MAX 4
typedef struct {
  int n;
  char tmp[MBSP_OUTSET_MAX][4200], path[MBSP_OUTSET_MAX][4200];
  int excl[MBSP_OUTSET_MAX]; ///< 1: never over an existing file (no --force)
} mbspOutSet;
/// An empty set. Local.
void mbsp_outInit(mbspOutSet *o);
/// Add the finished temporary \p tmp of \p path (\p exclusive: only if PATH does not exist).
mbsErr mbsp_outStage(mbspOutSet *o, const char *tmp, const char *path, int exclusive);
/// Put every staged file in place, or none: on a failure the files already replaced come back and
/// the temporaries go. Empties the set. Local (rank 0).
mbsErr mbsp_outCommit(mbspOutSet *o);
/// Remove the temporaries of a set that is not committed. Local.
void mbsp_outDiscard(mbspOutSet *o);
/// Open PATH.tmp.<pid> for writing (its name in tmp) ...
mbsErr mbsp_tmpOpen(const char *path, char *tmp, size_t n, FILE **f);
/// ... and close it, checking that everything was written (then stage it; on a failure the
/// temporary is removed).
mbsErr mbsp_tmpClose(FILE *f, const char *tmp, const char *path);

/// Number of joints of each type (MBS_JNT_COUNT entries).
void mbsp_jointCounts(const mbsModel *m, int *cnt);
/// The common head of every report: schema, build, run, ranks, config, model.
void mbsp_jsonHead(mbsJson *j, const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg,
                   const mbsModel *m);
/// Write one report (head + \p body) to every requested target (--json PATH|-,
/// --out DIR/VERB.json); rank 0 only.
mbsErr mbsp_emit(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, const mbsModel *m,
                 mbspJsonBody body, const void *ctx);
/// As mbsp_emit, but the files are only staged in \p set (standard output is written at once);
/// the verb commits the set with its other files. Rank 0 only.
mbsErr mbsp_emitStaged(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, const mbsModel *m,
                       mbspJsonBody body, const void *ctx, mbspOutSet *set);
/// 1 when the result goes as a table to standard output (not --quiet, not --json -).
int mbsp_cliTable(const mbsCli *cli);

/// The clock of the progress lines of accel and static: a line is due every --progress SEC
/// seconds (default 10) from mbsp_tickerStart.
typedef struct {
  double t0, next, every;
} mbspTicker;
void mbsp_tickerStart(mbspTicker *k, const mbsCli *cli);
/// 1 when a line is due (the next one is then `every` later), with the seconds since the start
/// in *elapsed; 0 otherwise.
int mbsp_tickerDue(mbspTicker *k, double *elapsed);
/// The static verbs' progress (rigid and flexible): a line on standard error at every tick of
/// the drainage loop, as mbsStatic's / mbsFlexStatic's progress callback with this as its context.
typedef struct {
  const mbsStaticOpt *o;
  mbspTicker tick;
} mbspStaticProgress;
void mbsp_staticProgress(void *ctx, int it, double ke, double dq);

#endif
