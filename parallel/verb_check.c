/// \file verb_check.c
/// `mbspar check`: validate the input and summarise the model (rank 0 prints and writes; the
/// other ranks wait at the agreement).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "mbspar/mbs_loops.h"
#include "mbspar/mbspar.h"

#define MBS_CHECK_NWARN 2

// geometry warnings at q0: joints that coincide with the parent's joint (a zero-length link,
// e.g. a generator hung from a body without a tip and without origin) and siblings that overlap
// (same joint, same place, same pose: a tree without spread)
typedef struct {
  int count[MBS_CHECK_NWARN];
  char text[MBS_CHECK_NWARN][1024];
} mbsCheckWarn;

static void mbs_checkAdd(mbsCheckWarn *w, int k, const char *fmt, const char *a, const char *b) {
  if (w->count[k]++ >= 4) return; // name the first four
  size_t n = strlen(w->text[k]);
  snprintf(w->text[k] + n, sizeof w->text[k] - n, fmt, a, b);
}

static mbsErr mbs_checkGeometry(const mbsModel *m, mbsCheckWarn *cw) {
  memset(cw, 0, sizeof *cw);
  mbsState *s = NULL;
  mbsWork *w = NULL;
  mbsErr e = mbs_stateCreate(m, &s);
  if (!e) e = mbs_workCreate(m, &w);
  if (!e) {
    mbs_fwdPosition(m, s, w);
    double L = 0; // length scale of the model: the largest joint offset
    for (int b = 0; b < m->nbody; b++)
      for (int k = 0; k < 3; k++) L = fmax(L, fabs(m->jnt_origin[3 * b + k]));
    double tol = 1e-9 * (L > 0 ? L : 1);
    for (int b = 0; b < m->nbody; b++) {
      int p = m->body_parent[b];
      const double *x = w->xpos + 3 * b;
      if (p >= 0 && m->body_jnttype[b] != MBS_JNT_FIXED && m->body_jnttype[p] != MBS_JNT_FIXED) {
        const double *xp = w->xpos + 3 * p;
        if (fabs(x[0] - xp[0]) + fabs(x[1] - xp[1]) + fabs(x[2] - xp[2]) <= tol)
          mbs_checkAdd(cw, 0, " %s (on %s)", m->body_name[b], m->body_name[p]);
      }
      // an earlier sibling at the same place with the same pose, joint and body
      const int *ch = p >= 0 ? m->child_list + m->body_childadr[p] : NULL;
      int nch = p >= 0 ? m->body_childnum[p] : 0;
      for (int k = 0; k < nch && ch[k] < b; k++) {
        int a = ch[k];
        double d = 0;
        for (int i = 0; i < 3; i++) d += fabs(w->xpos[3 * a + i] - x[i]);
        for (int i = 0; i < 9; i++) d += L * fabs(w->xmat[9 * a + i] - w->xmat[9 * b + i]);
        for (int i = 0; i < 3; i++) d += fabs(m->body_com[3 * a + i] - m->body_com[3 * b + i]);
        if (d <= tol && m->body_jnttype[a] == m->body_jnttype[b]) {
          mbs_checkAdd(cw, 1, " %s = %s", m->body_name[b], m->body_name[a]);
          break;
        }
      }
    }
  }
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  return e;
}

static const char *const mbs_check_what[MBS_CHECK_NWARN] = {
    "joint(s) at the same place as the parent's joint at q0 (a zero-length link: give origin, "
    "or hang a generator from a body with a length, whose tip it then starts at):",
    "sibling(s) that overlap their sibling at q0 (same joint, place and pose: e.g. a tree "
    "without spread):"};

static void mbs_checkJson(mbsJson *j, const void *ctx) {
  const mbsCheckWarn *cw = ctx;
  mbs_jsonBool(j, "valid", 1);
  mbs_jsonBeginArray(j, "warnings");
  for (int k = 0; k < MBS_CHECK_NWARN; k++)
    if (cw->count[k]) {
      char msg[1600];
      snprintf(msg, sizeof msg, "%d %s%s%s", cw->count[k], mbs_check_what[k], cw->text[k],
               cw->count[k] > 4 ? " ..." : "");
      mbs_jsonString(j, NULL, msg);
    }
  mbs_jsonEndArray(j);
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
  mbs_loopPrint(stdout, m); // loops, closure equations, rank, redundancy, mobility
}

mbsErr mbsp_verbCheck(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, mbsModel *m) {
  mbsErr e = mbsp_agreeErr(comm, mbsp_cliGatherRss(comm));
  if (!e && mbsp_rank(comm) == 0) {
    static const char *const files[] = {"check.json"};
    mbsCheckWarn cw;
    e = mbsp_outPrepare(cli, files, 1);
    if (!e) e = mbs_checkGeometry(m, &cw);
    if (!e && mbsp_cliTable(cli)) {
      mbs_printSummary(cfg, m);
      if (cfg->urdf) mbs_urdfPrint(cfg->urdf, stdout);
      printf("input is valid\n");
    }
    // the geometry warnings: on the table, and on stderr when the JSON takes standard output
    for (int k = 0; !e && k < MBS_CHECK_NWARN; k++)
      if (cw.count[k])
        fprintf(mbsp_cliTable(cli) ? stdout : stderr, "warning: %d %s%s%s\n", cw.count[k],
                mbs_check_what[k], cw.text[k], cw.count[k] > 4 ? " ..." : "");
    if (!e) e = mbsp_emit(cli, comm, cfg, m, mbs_checkJson, &cw);
  }
  return mbsp_agreeErr(comm, e);
}
