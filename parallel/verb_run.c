/// \file verb_run.c
/// `mbspar run`: the simulation (parallel/sim.c) with the report written through the common
/// head (cli.c). Collective.
#include <string.h>
#include <math.h>
#include "cli.h"
#include "sim.h"

typedef struct {
  const mbsCli *cli;
  mbspComm *comm;
  const mbsConfig *cfg;
  const mbsModel *m;
} mbsRunEmit;

static mbsErr mbs_runEmit(void *ctx, mbspJsonBody body, const void *bodyctx, int out_only) {
  const mbsRunEmit *r = ctx;
  mbsCli c = *r->cli;
  if (out_only) c.json = NULL; // a failed run: DIR/run.json only (stdout stays empty)
  c.force = 1; // DIR was claimed by the run (energy.csv) or is continued (--restart)
  return mbsp_emit(&c, r->comm, r->cfg, r->m, body, bodyctx);
}

mbsErr mbsp_verbRun(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, const mbsModel *m) {
  // seed 002: with an adaptive integrator the constraint-force tolerance is TOL/10 unless set.
  // The built model stays as it is: the run sees a view of it (a struct copy sharing its arrays)
  // that carries the run's solver options.
  mbsModel view = *m;
  if (mbs_integratorType(view.opt.integrator)->adaptive && !mbs_configIsSet(cfg, "solver.tol"))
    view.opt.tol = fmax(view.opt.int_tol / 10, MBS_CFG_MINTOL);
  m = &view;
  mbsCli c2 = *cli;
  // --restart CK continues into CK's directory unless --out says otherwise (issue 32)
  char ckdir[4096];
  if (!c2.out && cli->restart) {
    const char *slash = strrchr(cli->restart, '/');
    if (!slash)
      snprintf(ckdir, sizeof ckdir, ".");
    else if (slash == cli->restart)
      snprintf(ckdir, sizeof ckdir, "/");
    else
      snprintf(ckdir, sizeof ckdir, "%.*s", (int)(slash - cli->restart), cli->restart);
    c2.out = ckdir;
  }
  if (!c2.out) c2.out = cfg->out_dir; // the report also goes to DIR/run.json
  mbsRunEmit em = {&c2, comm, cfg, m};
  mbspSimArgs a;
  memset(&a, 0, sizeof a);
  a.comm = comm, a.m = m, a.cfg = cfg, a.out_dir = c2.out;
  a.force = cli->force, a.quiet = cli->quiet, a.restart = cli->restart;
  a.argc = cli->argc, a.argv = cli->argv;
  a.no_table = cli->json && !strcmp(cli->json, "-");
  a.progress_every = cli->progress_every;
  a.emit = mbs_runEmit, a.emit_ctx = &em;
  return mbsp_simRun(&a);
}
