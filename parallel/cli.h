/// \file cli.h
/// The mbspar command line, shared by the driver (main.c) and the verbs (verb_*.c): the parsed
/// options, the verb table entry, output files and the common head of every JSON report.
/// Private to the parallel layer. Adding a verb: write parallel/verb_NAME.c with a handler of
/// type mbspVerbFn, declare it below, and add a row to the table in main.c (docs/code.md).
#ifndef MBSP_CLI_H
#define MBSP_CLI_H

#include <stdio.h>
#include "mbspar/mbs_config.h"
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
  double progress_every; ///< --progress SECONDS (batch logs)
  int quiet, force, help, version;
  int argc;
  char **argv;
} mbsCli;

/// A verb: runs on every rank with the parsed command line, the config and the model, and
/// returns a code every rank agrees on (mbsp_agreeErr). Collective.
typedef mbsErr (*mbspVerbFn)(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, mbsModel *m);

/// One row of the verb table (main.c).
struct mbspVerb {
  const char *name; ///< the word on the command line
  mbspVerbFn run;   ///< the handler
  const char *help; ///< its line in the usage text
  int petsc;        ///< 1: PETSc must be initialised before the handler runs (run: TS)
  int local;        ///< 1: runs on distributed-memory models (each rank only its bodies)
};

/// Peak resident memory of every rank (min/avg/max over ranks), kept for the report head of the
/// next mbsp_emit. Collective.
mbsErr mbsp_cliGatherRss(mbspComm *comm);

// ---------------------------------------------------------------- the verbs (verb_*.c)

mbsErr mbsp_verbRun(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, mbsModel *m);
mbsErr mbsp_verbAccel(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, mbsModel *m);
mbsErr mbsp_verbInverse(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, mbsModel *m);
mbsErr mbsp_verbStatic(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, mbsModel *m);
mbsErr mbsp_verbCpa(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, mbsModel *m);
mbsErr mbsp_verbCheck(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, mbsModel *m);

// ---------------------------------------------------------------- shared pieces (cli.c)

/// Parse argv against the verb table \p verbs (\p nverb rows; row 0 is the default verb). Usage
/// errors return MBS_ERR_USAGE with the one-line message. Local.
mbsErr mbsp_cliParse(int argc, char **argv, const mbspVerb *verbs, int nverb, mbsCli *cli);
/// The usage text: the verbs of the table, then the options. Local.
void mbsp_cliUsage(FILE *f, const mbspVerb *verbs, int nverb);

/// DIR/NAME of --out DIR into buf. Local.
mbsErr mbsp_outPath(const mbsCli *cli, const char *name, char *buf, size_t n);
/// Create --out DIR if needed and refuse to overwrite the files a verb writes (rank 0).
mbsErr mbsp_outPrepare(const mbsCli *cli, const char *const *names, int nnames);
/// Open PATH.tmp.<pid> for writing (its name in tmp) ...
mbsErr mbsp_tmpOpen(const char *path, char *tmp, size_t n, FILE **f);
/// ... and rename it into place (\p exclusive: only if PATH does not exist, atomically: a link);
/// on any failure the temporary goes and PATH is untouched.
mbsErr mbsp_tmpCommit(FILE *f, const char *tmp, const char *path, int exclusive);

/// Number of joints of each type (MBS_JNT_COUNT entries).
void mbsp_jointCounts(const mbsModel *m, int *cnt);
/// The common head of every report: schema, build, run, ranks, config, model.
void mbsp_jsonHead(mbsJson *j, const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg,
                   const mbsModel *m);
/// Write one report (head + \p body) to every requested target (--json PATH|-,
/// --out DIR/VERB.json); rank 0 only.
mbsErr mbsp_emit(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, const mbsModel *m,
                 mbspJsonBody body, const void *ctx);
/// 1 when the result goes as a table to standard output (not --quiet, not --json -).
int mbsp_cliTable(const mbsCli *cli);

#endif
