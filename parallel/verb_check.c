/// \file verb_check.c
/// `mbspar check`: validate the input and summarise the model (rank 0 prints and writes; the
/// other ranks wait at the agreement).
#include <stdio.h>
#include "cli.h"
#include "mbspar/mbspar.h"

static void mbs_checkJson(mbsJson *j, const void *ctx) {
  (void)ctx;
  mbs_jsonBool(j, "valid", 1);
}

static void mbs_printSummary(const mbsConfig *cfg, const mbsModel *m) {
  int cnt[MBS_JNT_COUNT];
  mbsp_jointCounts(m, cnt);
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

mbsErr mbsp_verbCheck(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, mbsModel *m) {
  mbsErr e = mbsp_agreeErr(comm, mbsp_cliGatherRss(comm));
  if (!e && mbsp_rank(comm) == 0) {
    static const char *const files[] = {"check.json"};
    e = mbsp_outPrepare(cli, files, 1);
    if (!e && mbsp_cliTable(cli)) {
      mbs_printSummary(cfg, m);
      printf("input is valid\n");
    }
    if (!e) e = mbsp_emit(cli, comm, cfg, m, mbs_checkJson, NULL);
  }
  return mbsp_agreeErr(comm, e);
}
