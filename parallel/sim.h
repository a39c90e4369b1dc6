/// \file sim.h
/// `mbspar run`: time integration of the distributed state with PETSc TS, outputs, progress,
/// checkpoint/restart and signal handling.
#ifndef MBS_SIM_H
#define MBS_SIM_H
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_engine.h"
#include "mbspar/mbs_report.h"

typedef void (*mbspJsonBody)(mbsJson *j, const void *ctx);

typedef struct {
  mbspComm *comm;
  const mbsModel *m;
  const mbsConfig *cfg;
  const char *out_dir; ///< output directory (created if absent)
  int force;           ///< overwrite earlier outputs
  int quiet;           ///< no progress, no table
  int no_table;        ///< no table on stdout (the JSON report goes there)
  const char *restart; ///< checkpoint to continue from, or NULL
  int argc;            ///< the command line, for the commands the messages suggest
  char **argv;
  double progress_every; ///< --progress: plain lines every so many seconds (0: live line on a
                         ///< terminal, also under mpirun; else every 10 s)
  /// write the final report (common head + body) to the --json / --out targets (\p out_only:
  /// DIR/run.json alone, the report of a failed run); rank 0 only
  mbsErr (*emit)(void *ctx, mbspJsonBody body, const void *bodyctx, int out_only);
  void *emit_ctx;
} mbspSimArgs;

/// Simulate from the model's initial state (or the checkpoint) to integrator.t_end. Returns
/// MBS_INTERRUPTED (exit code 10) after SIGTERM/SIGUSR1/SIGINT made every rank finish its step and
/// a checkpoint was written. Collective.
mbsErr mbsp_simRun(const mbspSimArgs *a);

/// Install the SIGTERM/SIGUSR1/SIGINT handlers (they only set a flag; a second SIGINT ends the
/// process at once). Local.
void mbsp_simInstallSignals(void);
/// The first stopping signal received (0: none). Local, async-signal-safe to read.
int mbsp_simPendingSignal(void);
/// The command that continues a stopped run from checkpoint \p ck: the command line (argc, argv;
/// without its --restart) run on \p size ranks, then --restart ck, shell-quoted (sim_ckpt.c).
void mbsp_continueCmd(int argc, char *const *argv, int size, const char *ck, char *buf, size_t n);

#endif
