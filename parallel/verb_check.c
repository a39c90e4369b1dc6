/// \file verb_check.c
/// `mbspar check`: validate the input and summarise the model (rank 0 prints and writes; the
/// other ranks wait at the agreement).
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"
#include "mbspar/mbs_loops.h"
#include "mbspar/mbs_solvertype.h"
#include "mbspar/mbspar.h"
#include "mbspar/mbs_flex.h"
#include "flex_modalfile.h"

#define MBS_CHECK_NWARN 2

// geometry warnings at q0: joints that coincide with the parent's joint (a zero-length link,
// e.g. a generator hung from a body without a tip and without origin) and siblings that overlap
// (same joint, same place, same pose: a tree without spread)
typedef struct {
  int count[MBS_CHECK_NWARN];
  char text[MBS_CHECK_NWARN][1024];
  // the decomposition over the ranks of this launch (P > 1): joints whose parent is on another
  // rank, with the body order as given and with a depth-first order
  int P, cut, cut_max, cut_dfs, warn_order;
  int *start; ///< (P + 1) the engine's rank ranges (mbs_partitionModel): rank r owns the bodies
              ///< start[r] .. start[r + 1])
  const mbsModel *model; ///< its flexible bodies in the JSON (mbs_flexJson)
  int frank, fneq;       ///< loops through flexible bodies: the closure rank with the modal
                         ///< coordinates at q0 (the dense oracle), of fneq equations (0: none)
  double fpivot;         ///< its smallest accepted pivot
} mbsCheckWarn;

// loops through flexible bodies (docs/flexible.md 15): the closure rank with the modal
// coordinates, at q0 with eta = 0 (the rigid report above counts the joints' rates only)
static mbsErr mbs_checkFlexLoops(const mbsModel *m, mbsCheckWarn *cw) {
  return mbs_flexLoopRankQ0(m, &cw->frank, &cw->fneq, &cw->fpivot);
}

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
      if (p >= 0 && !mbs_jntIsFixed(m->body_jnttype[b]) && !mbs_jntIsFixed(m->body_jnttype[p])) {
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

// joints between ranks when rank r owns the bodies byp[start[r] .. start[r + 1]) (byp NULL: the
// body order as given); *maxr: the most that touch one rank
static mbsErr mbs_checkCuts(const mbsModel *m, const int *byp, const int *start, int P, int *cut,
                            int *maxr) {
  int n = m->nbody;
  int *own = malloc(sizeof(int) * (size_t)n), *per = calloc((size_t)P, sizeof(int));
  if (!own || !per) {
    free(own), free(per);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  }
  for (int r = 0; r < P; r++)
    for (int k = start[r]; k < start[r + 1]; k++) own[byp ? byp[k] : k] = r;
  *cut = *maxr = 0;
  for (int b = 0; b < n; b++) {
    int p = m->body_parent[b];
    if (p >= 0 && own[p] != own[b]) (*cut)++, per[own[p]]++, per[own[b]]++;
  }
  for (int r = 0; r < P; r++)
    if (per[r] > *maxr) *maxr = per[r];
  free(own), free(per);
  return MBS_OK;
}

typedef struct {
  int size, body;
} mbsCheckKid;

// heaviest subtree first (pushed first, so popped last); ties by body index
static int mbs_checkKidCmp(const void *a, const void *b) {
  const mbsCheckKid *x = a, *y = b;
  if (x->size != y->size) return x->size < y->size ? 1 : -1;
  return (x->body > y->body) - (x->body < y->body);
}

// the cuts of the body order as given (the engine's own partition, mbs_partitionModel; its rank
// ranges kept in cw->start) and of a depth-first order (each subtree contiguous, the lighter
// subtrees first, as docs/model.md advises) split into contiguous ranges the same way
// (mbs_partitionRunsLight on its joint types and its light joints)
static mbsErr mbs_checkDecomp(const mbsModel *m, int P, mbsCheckWarn *cw) {
  int n = m->nbody, nr = 0, chain = 1;
  cw->P = P;
  if (P <= 1 || P > n) return MBS_OK;
  int *size = malloc(sizeof(int) * (size_t)n), *byp = malloc(sizeof(int) * (size_t)n);
  int *stack = malloc(sizeof(int) * (size_t)n), *start = malloc(sizeof(int) * (size_t)(P + 1));
  int *rt = malloc(sizeof(int) * (size_t)n), *rl = malloc(sizeof(int) * (size_t)n);
  mbsCheckKid *kids = malloc(sizeof(mbsCheckKid) * (size_t)n);
  int *lj = malloc(2 * sizeof(int) * (size_t)n), nl = 0;
  cw->start = malloc(sizeof(int) * (size_t)(P + 1));
  mbsErr e = (size && byp && stack && start && rt && rl && kids && lj && cw->start)
                 ? MBS_OK
                 : mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  if (!e) e = mbs_partitionModel(m, P, start);
  if (!e) e = mbs_checkCuts(m, NULL, start, P, &cw->cut, &cw->cut_max);
  if (!e) memcpy(cw->start, start, sizeof(int) * (size_t)(P + 1));
  if (!e) {
    for (int b = 0; b < n; b++) size[b] = 1;
    for (int b = n - 1; b >= 0; b--) // parents come before their children
      if (m->body_parent[b] >= 0) size[m->body_parent[b]] += size[b];
    // preorder: pop a body, push its children heaviest first (the lightest comes out next); the
    // roots first, likewise
    int top = 0, k = 0, nk = 0;
    for (int b = 0; b < n; b++)
      if (m->body_parent[b] < 0) kids[nk].size = size[b], kids[nk++].body = b;
    for (;;) {
      qsort(kids, (size_t)nk, sizeof *kids, mbs_checkKidCmp);
      for (int i = 0; i < nk; i++) stack[top++] = kids[i].body;
      if (top == 0) break;
      int b = stack[--top];
      byp[k++] = b;
      nk = m->body_childnum[b];
      for (int i = 0; i < nk; i++) {
        int c = m->child_list[m->body_childadr[b] + i];
        kids[i].size = size[c], kids[i].body = c;
      }
    }
    // its joint types as runs, and the chain rule when the model is a chain (then both orders
    // are the same)
    for (int i = 0; i < n; i++) {
      int jt = m->body_jnttype[byp[i]];
      if (nr && rt[nr - 1] == jt)
        rl[nr - 1]++;
      else
        rt[nr] = jt, rl[nr] = 1, nr++;
      chain = chain && m->body_parent[i] == i - 1;
    }
    // the light joints as the engine sees them (mbs_partitionModel), in preorder places: (child,
    // parent), ascending by child (size is free: the places)
    for (int i = 0; i < n; i++) size[byp[i]] = i;
    for (int i = 0; i < n; i++) {
      int b = byp[i], p = m->body_parent[b];
      if (p >= 0 && mbs_partitionIsLight(m->body_mass[p], mbs_jntIsFixed(m->body_jnttype[p]),
                                         m->body_mass[b], mbs_jntIsFixed(m->body_jnttype[b]))) {
        lj[2 * nl] = i;
        lj[2 * nl + 1] = mbs_partitionLightParent(size[p], m->body_mass[b], m->body_mass[p]);
        nl++;
      }
    }
    // the roots start clean cuts (each subtree is contiguous in preorder; the stack is free)
    int nc = 0;
    for (int i = 0; i < n; i++)
      if (m->body_parent[byp[i]] < 0) stack[nc++] = i;
    e = mbs_partitionRunsLight(rt, rl, nr, chain, stack, nc, lj, nl, P, start);
  }
  int dfs_max = 0;
  if (!e) e = mbs_checkCuts(m, byp, start, P, &cw->cut_dfs, &dfs_max);
  cw->warn_order = !e && cw->cut > 2 * cw->cut_dfs + P;
  free(size), free(byp), free(stack), free(start), free(rt), free(rl), free(kids), free(lj);
  return e;
}

static const char *const mbs_check_what[MBS_CHECK_NWARN] = {
    "joint(s) at the same place as the parent's joint at q0 (a zero-length link: give origin, "
    "or hang a generator from a body with a length, whose tip it then starts at):",
    "sibling(s) that overlap their sibling at q0 (same joint, place and pose: e.g. a tree "
    "without spread):"};

static void mbs_checkOrderMsg(const mbsCheckWarn *cw, char *msg, size_t len) {
  snprintf(msg, len,
           "the body order puts %d joints between the %d ranks, a depth-first order %d: list each "
           "subtree's bodies together, each side branch right after its parent (docs/model.md, "
           "\"Body order decides the decomposition\")",
           cw->cut, cw->P, cw->cut_dfs);
}

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
  if (cw->warn_order) {
    char msg[512];
    mbs_checkOrderMsg(cw, msg, sizeof msg);
    mbs_jsonString(j, NULL, msg);
  }
  mbs_jsonEndArray(j);
  mbs_flexJson(j, cw->model->flex);
  if (cw->fneq) {
    const mbsModel *m = cw->model;
    mbs_jsonBeginObject(j, "flexible_loops");
    mbs_jsonInt(j, "equations", cw->fneq);
    mbs_jsonInt(j, "rank", cw->frank);
    mbs_jsonNumber(j, "min_pivot", cw->fpivot);
    mbs_jsonBeginArray(j, "nodes"); // the cut joints' sides on named nodes
    for (int k = 0; k < m->nloop; k++)
      for (int s = 0; s < 2; s++) {
        int nd = mbs_flexSetLoopNodeOf(m->flex, k, s);
        const mbsFlexBody *fb = mbs_flexSetFind(m->flex, m->loop_body[2 * k + s]);
        if (nd < 0 || !fb) continue;
        mbs_jsonBeginObject(j, NULL);
        mbs_jsonString(j, "loop", m->loop_name[k]);
        mbs_jsonInt(j, "side", s + 1);
        mbs_jsonString(j, "body", fb->name);
        mbs_jsonString(j, "node", fb->node_name[nd]);
        mbs_jsonEndObject(j);
      }
    mbs_jsonEndArray(j);
    mbs_jsonEndObject(j);
  }
  if (cw->P > 1) {
    mbs_jsonBeginObject(j, "decomposition");
    mbs_jsonInt(j, "ranks", cw->P);
    mbs_jsonInt(j, "cut_joints", cw->cut);
    mbs_jsonInt(j, "cut_joints_max_per_rank", cw->cut_max);
    mbs_jsonInt(j, "cut_joints_depth_first", cw->cut_dfs);
    if (cw->start) mbs_jsonIntArray(j, "first_body", cw->start, cw->P);
    mbs_jsonEndObject(j);
  }
}

static void mbs_printSummary(const mbsConfig *cfg, const mbsModel *m, const mbsCheckWarn *cw) {
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
  // solver.method = auto: chosen by run, accel and static for their job (docs/model.md)
  int undecided = cfg->sauto.on && !cfg->sauto.decided && !cfg->nloops && !cfg->nforces;
  printf("  %-26s %s (tol %g, max_iter %d, warm start %s", "solver",
         undecided ? "auto" : mbs_solverName(m->opt.solver), m->opt.tol, m->opt.max_iter,
         mbs_warmStartName(m->opt.warm_start));
  int stat = mbs_solverCaps(m->opt.solver)->check_every;
  if (stat && m->opt.check_every > 1) // solver.check_every (the others ignore it)
    printf(", convergence tested every %d iterations", m->opt.check_every);
  printf(")\n");
  printf("  %-26s %s (dt %g s, t_end %g s)\n", "integrator", mbs_integratorName(m->opt.integrator),
         m->opt.dt, m->opt.t_end);
  mbs_loopPrint(stdout, m); // loops, closure equations, rank, redundancy, mobility
  if (cw->P > 1)
    printf("  %-26s %d ranks: %d joint(s) between ranks (at most %d on one rank; %d with a "
           "depth-first body order)\n",
           "decomposition", cw->P, cw->cut, cw->cut_max, cw->cut_dfs);
  if (cw->P > 1 && cw->start) {
    printf("  %-26s", "rank ranges (first body)");
    for (int r = 0; r < cw->P; r++) printf(" %s", m->body_name[cw->start[r]]);
    printf("\n");
  }
}

// --modal-out DIR: every flexible body's modal file DIR/BODY.h5 (docs/flexible.md 14); an
// existing file only with --force
static mbsErr mbs_checkModalOut(const mbsCli *cli, const mbsModel *m) {
  const mbsFlexSet *set = m->flex;
  const char *dir = cli->modal_out;
  if (!set || !set->n)
    return mbs_errSet(MBS_ERR_USAGE, "mbspar: --modal-out %s: the model has no flexible body", dir);
  struct stat st;
  if (stat(dir, &st) != 0 && mkdir(dir, 0777) != 0)
    return mbs_errSet(MBS_ERR_IO, "mbspar: --modal-out %s: cannot create directory (%s)", dir,
                      strerror(errno));
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return mbs_errSet(MBS_ERR_IO, "mbspar: --modal-out %s: exists and is not a directory", dir);
  for (int pass = 0; pass < 2; pass++) // first the clobber checks, then the files
    for (int k = 0; k < set->n; k++) {
      char path[4096];
      int w = snprintf(path, sizeof path, "%s/%s.h5", dir, set->b[k].name);
      if (w < 0 || (size_t)w >= sizeof path)
        return mbs_errSet(MBS_ERR_USAGE, "mbspar: --modal-out %s: path too long", dir);
      if (!pass && !cli->force && stat(path, &st) == 0)
        return mbs_errSet(MBS_ERR_IO, "mbspar: --modal-out: %s exists (--force overwrites it)",
                          path);
      if (pass) {
        MBS_CALL(mbsp_flexModalWrite(set->b + k, path));
        if (mbsp_cliTable(cli))
          printf("  modal file %s (body %s, %d modal coordinates)\n", path, set->b[k].name,
                 set->b[k].modal.m);
      }
    }
  return MBS_OK;
}

mbsErr mbsp_verbCheck(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, const mbsModel *m) {
  mbsErr e = mbsp_agreeErr(comm, mbsp_cliGatherRss(comm));
  if (!e && mbsp_rank(comm) == 0) {
    static const char *const files[] = {"check.json"};
    mbsCheckWarn cw;
    memset(&cw, 0, sizeof cw);
    e = mbsp_outPrepare(cli, files, 1);
    if (!e) e = mbs_checkGeometry(m, &cw);
    cw.model = m; // (mbs_checkGeometry zeroes cw)
    if (!e) e = mbs_checkDecomp(m, mbsp_size(comm), &cw);
    if (!e) e = mbs_checkFlexLoops(m, &cw);
    if (!e && mbsp_cliTable(cli)) {
      mbs_printSummary(cfg, m, &cw);
      mbs_flexReport(stdout, m->flex);
      if (cw.fneq) {
        printf(
            "  flexible loops             closure rank %d of %d with the modal coordinates at q0 "
            "(dense oracle, eta = 0; smallest pivot %.3g)\n",
            cw.frank, cw.fneq, cw.fpivot);
        for (int k = 0; k < m->nloop; k++)
          for (int s = 0; s < 2; s++) {
            int nd = mbs_flexSetLoopNodeOf(m->flex, k, s);
            const mbsFlexBody *fb = mbs_flexSetFind(m->flex, m->loop_body[2 * k + s]);
            if (nd >= 0 && fb)
              printf("    loop %s side %d on node %s.%s\n", m->loop_name[k], s + 1, fb->name,
                     fb->node_name[nd]);
          }
      }
      if (cfg->urdf) mbs_urdfPrint(cfg->urdf, stdout);
      for (int k = 0; k < cfg->nurdf_jf; k++) { // model.urdf.joints (docs/urdf.md)
        const mbsUrdfJointForce *f = &cfg->urdf_jf[k];
        printf("  joint forces %-24s%s%s%s%s\n", f->name, f->given & MBS_UJF_FORCE ? " force" : "",
               f->given & MBS_UJF_STIFFNESS ? " stiffness" : "",
               f->given & MBS_UJF_SPRINGREF ? " springref" : "",
               f->given & MBS_UJF_DAMPING ? " damping" : "");
      }
      if (cfg->torques)
        printf("  torque table %s: %d rows, t = %g .. %g s, %d joint(s)\n", cfg->torques->file,
               cfg->torques->ns, cfg->torques->t[0], cfg->torques->t[cfg->torques->ns - 1],
               cfg->torques->ncol);
      printf("input is valid\n");
    }
    // the geometry warnings: on the table, and on stderr when the JSON takes standard output
    for (int k = 0; !e && k < MBS_CHECK_NWARN; k++)
      if (cw.count[k])
        fprintf(mbsp_cliTable(cli) ? stdout : stderr, "warning: %d %s%s%s\n", cw.count[k],
                mbs_check_what[k], cw.text[k], cw.count[k] > 4 ? " ..." : "");
    if (!e && cw.warn_order) {
      char msg[512];
      mbs_checkOrderMsg(&cw, msg, sizeof msg);
      fprintf(mbsp_cliTable(cli) ? stdout : stderr, "warning: %s\n", msg);
    }
    if (!e && cli->modal_out) e = mbs_checkModalOut(cli, m);
    if (!e) e = mbsp_emit(cli, comm, cfg, m, mbs_checkJson, &cw);
    free(cw.start);
  }
  return mbsp_agreeErr(comm, e);
}
