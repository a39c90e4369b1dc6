/// \file engine.c
/// The distributed forward-dynamics engine.
///
/// Decomposition: bodies are split into P contiguous ranges of the (topological) body order,
/// balanced by a per-joint cost weight. Because a parent always precedes its children, every
/// remote parent of a rank's bodies lives on a lower rank.
///
/// Communication per evaluation:
///  - velocities (a prefix product down the tree): each rank first composes, in parallel, the
///    affine map from its ghost parents to each owned body (v_b = v_loc_b + X_{b<-g} v_g); then
///    only the boundary velocities travel down the rank pipeline (receive from lower ranks,
///    evaluate O(1) per boundary body, send to higher ranks); then every rank finishes its own
///    bodies concurrently. The pipeline's critical path is P messages with O(1) work each; the
///    O(n/P) work is outside it. (An MPI_Exscan with a non-commutative composition operator
///    would give O(log P) depth for chains; with P <= 64 the pipeline's latency is smaller than
///    one CG iteration here, see docs/formulation.md.)
///  - operator applications: two nearest-neighbour exchanges of 6-vectors per cut tree edge
///    (child -> parent wrenches, parent -> child accelerations), persistent point-to-point
///    requests or MPI_Neighbor_alltoallv on a distributed-graph communicator (MBSPAR_HALO);
///  - inner products: one MPI_Allreduce per reduction point, the CG dots fused (2 per iteration).
/// No MPI calls here: everything goes through parallel/comm.c.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_engine.h"
#include "mbspar/mbs_loops.h"
#include "mbspar/mbs_solvertype.h"
#include "flops.h"
#include "spatial.h"

#include "engine_impl.h"

// owner rank of local body b (through its global index)
int mbsp_engineOwner(const mbspEngine *e, int b) {
  b = e->m->body_gid[b];
  int lo = 0, hi = e->size - 1;
  while (lo < hi) { // largest r with start[r] <= b
    int mid = (lo + hi + 1) / 2;
    if (e->start[mid] <= b)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

// ---------------------------------------------------------------- communication hooks

mbsErr mbsp_engineHaloUpHook(void *ctx, mbsReal *up) {
  mbspEngine *e = ctx;
  MBS_TIC(e->w->timer, MBS_TIMER_HALO);
  for (int k = 0; k < e->nnbr; k++) {
    double *buf = mbsp_haloSendBuf(e->hup, k);
    for (int j = e->up_sadr[k]; j < e->up_sadr[k + 1]; j++)
      memcpy(buf + 6 * (j - e->up_sadr[k]), up + 6 * e->up_s[j], 6 * sizeof(double));
  }
  mbsErr err = mbsp_haloExchange(e->hup);
  for (int k = 0; k < e->nnbr && !err; k++) {
    const double *buf = mbsp_haloRecvBuf(e->hup, k);
    for (int j = e->up_radr[k]; j < e->up_radr[k + 1]; j++)
      memcpy(up + 6 * e->up_r[j], buf + 6 * (j - e->up_radr[k]), 6 * sizeof(double));
  }
  MBS_TOC(e->w->timer, MBS_TIMER_HALO);
  return err;
}

static void mbsp_packDown(mbspEngine *e, mbspHalo *h, const mbsReal *v) {
  for (int k = 0; k < e->nnbr; k++) {
    double *buf = mbsp_haloSendBuf(h, k);
    for (int j = e->dn_sadr[k]; j < e->dn_sadr[k + 1]; j++)
      memcpy(buf + 6 * (j - e->dn_sadr[k]), v + 6 * e->dn_s[j], 6 * sizeof(double));
  }
}
static void mbsp_unpackDown(mbspEngine *e, mbspHalo *h, mbsReal *v) {
  for (int k = 0; k < e->nnbr; k++) {
    const double *buf = mbsp_haloRecvBuf(h, k);
    for (int j = e->dn_radr[k]; j < e->dn_radr[k + 1]; j++)
      memcpy(v + 6 * e->dn_r[j], buf + 6 * (j - e->dn_radr[k]), 6 * sizeof(double));
  }
}

mbsErr mbsp_engineHaloDownHook(void *ctx, mbsReal *acc) {
  mbspEngine *e = ctx;
  MBS_TIC(e->w->timer, MBS_TIMER_HALO);
  mbsp_packDown(e, e->hdn, acc);
  mbsErr err = mbsp_haloExchange(e->hdn);
  if (!err) mbsp_unpackDown(e, e->hdn, acc);
  MBS_TOC(e->w->timer, MBS_TIMER_HALO);
  return err;
}

mbsErr mbsp_engineReduceHook(void *ctx, double *v, int n) {
  mbspEngine *e = ctx;
  MBS_TIC(e->w->timer, MBS_TIMER_ALLREDUCE);
  mbsErr err = mbsp_allreduceSum(e->comm, v, n);
  MBS_TOC(e->w->timer, MBS_TIMER_ALLREDUCE);
  return err;
}

// ---------------------------------------------------------------- loops and spring-dampers

// the poses and velocities of the loop and spring-damper bodies on every rank (their owners'
// values; a sum with zeros is exact)
static mbsErr mbsp_loopGather(mbspEngine *e) {
  mbsWork *w = e->w;
  double *v = e->lbuf;
  memset(v, 0, 18 * (size_t)e->nlb * sizeof(double));
  for (int k = 0; k < e->nlb; k++) {
    int b = e->lb[k];
    if (b < e->b0 || b >= e->b1) continue;
    memcpy(v + 18 * k, w->xmat + 9 * b, 9 * sizeof(double));
    memcpy(v + 18 * k + 9, w->xpos + 3 * b, 3 * sizeof(double));
    memcpy(v + 18 * k + 12, w->cvel + 6 * b, 6 * sizeof(double));
  }
  if (e->size > 1) MBS_CALL(mbsp_allreduceSum(e->comm, v, 18 * e->nlb));
  for (int k = 0; k < e->nlb; k++) {
    int b = e->lb[k];
    if (b >= e->b0 && b < e->b1) continue;
    memcpy(w->xmat + 9 * b, v + 18 * k, 9 * sizeof(double));
    memcpy(w->xpos + 3 * b, v + 18 * k + 9, 3 * sizeof(double));
    memcpy(w->cvel + 6 * b, v + 18 * k + 12, 6 * sizeof(double));
  }
  return MBS_OK;
}

static mbsErr mbsp_loopSolveHook(void *ctx) {
  mbspEngine *e = ctx;
  return mbs_cfsSolve(e->m, e->scur, e->w, e->c, &e->hooks);
}

// homogeneous solves: the owned bodies' velocity-stage terms kept and zeroed, then restored (the
// solvers recompute remote bodies' stages themselves, under w->homog)
static mbsErr mbsp_loopHomogHook(void *ctx, int on) {
  mbspEngine *e = ctx;
  const mbsModel *m = e->m;
  mbsWork *w = e->w;
  if (e->b1 <= e->b0) {
    w->homog = on;
    return MBS_OK;
  }
  size_t nb = (size_t)(e->b1 - e->b0), o = (size_t)e->b0;
  int d0 = m->body_dofadr[e->b0];
  size_t nd = (size_t)(m->body_dofadr[e->b1 - 1] + m->body_dofnum[e->b1 - 1] - d0);
  mbsReal *sv = e->lsave;
  if (on) {
    memcpy(sv, w->cacc + 6 * o, 6 * nb * sizeof(mbsReal));
    memcpy(sv + 6 * nb, w->cbias + 6 * o, 6 * nb * sizeof(mbsReal));
    memcpy(sv + 12 * nb, w->qfrc + d0, nd * sizeof(mbsReal));
    memset(w->cacc + 6 * o, 0, 6 * nb * sizeof(mbsReal));
    memset(w->cbias + 6 * o, 0, 6 * nb * sizeof(mbsReal));
    memset(w->qfrc + d0, 0, nd * sizeof(mbsReal));
  } else {
    memcpy(w->cacc + 6 * o, sv, 6 * nb * sizeof(mbsReal));
    memcpy(w->cbias + 6 * o, sv + 6 * nb, 6 * nb * sizeof(mbsReal));
    memcpy(w->qfrc + d0, sv + 12 * nb, nd * sizeof(mbsReal));
  }
  w->homog = on;
  return MBS_OK;
}

// the local solves of a solver with separators of its own (schur: the cut joints as separators
// beside the closure equations)
static mbsErr mbsp_loopLocalHook(void *ctx, mbsReal *C, mbsReal *g, const int *load, int nload,
                                 const int *first, int lim) {
  mbspEngine *e = ctx;
  void *self;
  const mbsSolverType *t = mbs_cfsSolverBound(e->c, &self);
  return t->loop_local(self, e->scur, e->w, C, g, load, nload, first, lim);
}

// a sum over the ranks that is bitwise the same on every rank (rank 0's result broadcast): the
// loop solve's pivot decisions must agree
static mbsErr mbsp_loopSumHook(void *ctx, mbsReal *v, int n) {
  mbspEngine *e = ctx;
  if (e->size <= 1) return MBS_OK;
  MBS_TIC(e->w->timer, MBS_TIMER_ALLREDUCE);
  mbsErr err = mbsp_allreduceSum(e->comm, v, n);
  if (!err) err = mbsp_bcastBytes(e->comm, v, sizeof(mbsReal) * (size_t)n, 0);
  MBS_TOC(e->w->timer, MBS_TIMER_ALLREDUCE);
  return err;
}

mbsErr mbsp_engineForward(mbspEngine *e, mbsState *s) {
  const mbsModel *m = e->m;
  mbsWork *w = e->w;
  MBS_TIC(w->timer, MBS_TIMER_EVAL);
  // joint transforms and subspaces are local to each joint
  mbsp_enginePosition(e, s);
  e->defer_poses = m->nforce == 0 && m->nloop == 0;
  mbsErr err = mbs_cfsBegin(m, s, e->c); // e.g. the remote joints' states on their way
  e->ovl_s = m->nloop == 0 ? s : NULL;   // the factor's slices in the prefix's waits
  if (!err) err = mbsp_kinematics(e, s);
  e->ovl_s = NULL;
  if (!err && e->nlb) { // loops, spring-dampers: their bodies' stages here, the springs' wrenches
    err = mbsp_loopGather(e);
    if (!err) mbs_fwdForces(m, w);
  }
  // the solver of m->opt.solver from the solver table, with the engine's halo and reduction hooks
  if (!err) err = mbs_cfsSolve(m, s, w, e->c, &e->hooks);
  // the loop forces by unit solves: nlam_loop + 1 more tree solves (docs/loops.md 8); with the
  // closure rows in the system (e->c->nlr) the solve above gave them
  if (!err && m->nloop && !e->c->nlr) {
    mbsLoopOps ops = {
        e,    e->b0, e->b1, e->rank == 0, mbsp_loopSolveHook, mbsp_loopHomogHook, mbsp_loopSumHook,
        NULL, 0};
    void *self;
    const mbsSolverType *t = mbs_cfsSolverBound(e->c, &self);
    int nport = t && t->loop_ports && t->loop_local ? t->loop_ports(self) : -1;
    if (nport >= 0 && mbs_loopSeparators(m, m->opt.solver))
      ops.local = mbsp_loopLocalHook, ops.nport = nport;
    e->scur = s;
    err = mbs_loopSolveOps(m, w, &ops);
    e->scur = NULL;
  }
  if (e->defer_poses) mbsp_enginePoses(e);
  e->defer_poses = 0;
  MBS_CALL(err);
  MBS_TOC(w->timer, MBS_TIMER_EVAL);
  return MBS_OK;
}

mbsErr mbsp_engineKinematics(mbspEngine *e, mbsState *s) {
  mbsp_enginePosition(e, s);
  return mbsp_kinematics(e, s);
}

mbsErr mbsp_engineLoopPoses(mbspEngine *e, mbsState *s) {
  MBS_CALL(mbsp_engineKinematics(e, s));
  return e->nlb ? mbsp_loopGather(e) : MBS_OK;
}

mbsErr mbsp_engineApply(mbspEngine *e, const double *x, double *y) {
  return mbs_cfsApply(e->m, e->w, e->c, &e->hooks, x, 0, y);
}

mbsErr mbsp_engineHaloUp(mbspEngine *e, mbsReal *up) {
  return e->size > 1 ? mbsp_engineHaloUpHook(e, up) : MBS_OK;
}

mbsErr mbsp_engineHaloDown(mbspEngine *e, mbsReal *down) {
  return e->size > 1 ? mbsp_engineHaloDownHook(e, down) : MBS_OK;
}

mbsErr mbsp_engineReduce(mbspEngine *e, double *v, int n) {
  return mbsp_allreduceSum(e->comm, v, n);
}

mbsErr mbsp_engineGather(mbspEngine *e, double *qdd, double *lam, double *jfrc) {
  return mbsp_engineGatherSome(e, qdd, lam, jfrc, 7);
}

mbsErr mbsp_engineGatherSome(mbspEngine *e, double *qdd, double *lam, double *jfrc, int what) {
  const mbsModel *m = e->m;
  int P = e->size;
  int *cnt = calloc((size_t)P, sizeof(int)), *dsp = calloc((size_t)P, sizeof(int));
  mbsErr err = cnt && dsp ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory (gather)");
  // three contiguous ranges per rank (in rank order): dofs, constraint components, bodies x 6
  int b0 = e->b0, b1 = e->b1;
  int lo[3] = {m->body_dofadr[b0], m->body_lamadr[b0], 6 * b0};
  int hi[3] = {m->body_dofadr[b1 - 1] + m->body_dofnum[b1 - 1],
               m->body_lamadr[b1 - 1] + m->body_lamnum[b1 - 1], 6 * b1};
  double mine[3] = {hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]};
  double *all = calloc(3 * (size_t)P, sizeof(double));
  if (!err && !all) err = mbs_errSet(MBS_ERR_NOMEM, "out of memory (gather)");
  // every rank agrees before the collectives (a rank without its buffers must not leave the
  // others waiting in them)
  err = mbsp_agreeErr(e->comm, err);
  if (!err) err = mbsp_gather(e->comm, mine, 3, all);
  for (int pass = 0; pass < 3 && !err; pass++) {
    if (!(what & (1 << pass))) continue;
    for (int r = 0, at = 0; r < P; r++) {
      cnt[r] = (int)all[3 * r + pass], dsp[r] = at;
      at += cnt[r];
    }
    const double *src = pass == 0 ? e->w->qdd : pass == 1 ? e->w->lam : e->w->jfrc;
    double *dst = pass == 0 ? qdd : pass == 1 ? lam : jfrc;
    double dummy = 0;
    err = mbsp_gatherv(e->comm, src + lo[pass], (int)mine[pass], dst ? dst : &dummy, cnt, dsp);
  }
  free(all);
  free(cnt), free(dsp);
  return err;
}

mbsWork *mbsp_engineWork(mbspEngine *e) {
  return e->w;
}
mbsCfs *mbsp_engineCfs(mbspEngine *e) {
  return e->c;
}
mbspComm *mbsp_engineComm(mbspEngine *e) {
  return e->comm;
}
const int *mbsp_engineStarts(const mbspEngine *e) {
  return e->start;
}

void mbsp_engineDecomp(const mbspEngine *e, mbspDecompInfo *info) {
  info->b0 = e->b0, info->b1 = e->b1, info->nnbr = e->nnbr;
  info->cut_up = e->up_sadr[e->nnbr];
  info->cut_down = e->dn_sadr[e->nnbr];
  info->weight = 0;
  info->g0 = e->m->body_gid[e->b0], info->g1 = e->m->body_gid[e->b1 - 1] + 1;
  info->prefix_scan = e->use_scan;
  void *self;
  const mbsSolverType *t = mbs_cfsSolverBound(e->c, &self);
  info->merge_scan = 0;
  info->segments = t && t->segments_of ? t->segments_of(self, &info->merge_scan) : 0;
  for (int b = e->b0; b < e->b1; b++) info->weight += mbs_partitionWeight(e->m->body_jnttype[b]);
}

mbsErr mbsp_engineHaloCheck(mbspEngine *e, long *nbad) {
  const mbsModel *m = e->m;
  size_t n6 = 6 * (size_t)m->nbody;
  double *v = calloc(n6, sizeof(double));
  MBS_CHECK(v, MBS_ERR_NOMEM, "out of memory (halo check)");
  long bad = 0;
  for (int pass = 0; pass < 3; pass++) {
    for (size_t k = 0; k < n6; k++) v[k] = -1;
    for (int b = e->b0; b < e->b1; b++)
      for (int i = 0; i < 6; i++) v[6 * b + i] = 16.0 * m->body_gid[b] + i + 1000.0 * pass;
    mbsErr err = MBS_OK;
    if (pass == 0 && e->size > 1) err = mbsp_engineHaloUpHook(e, v);
    if (pass == 1 && e->size > 1) err = mbsp_engineHaloDownHook(e, v);
    if (pass == 2 && e->size > 1) {
      err = mbsp_haloRecvAll(e->hvel);
      if (!err) mbsp_unpackDown(e, e->hvel, v);
      mbsp_packDown(e, e->hvel, v);
      if (!err) err = mbsp_haloSendAll(e->hvel);
    }
    if (err) {
      free(v);
      return err;
    }
    // every entry this rank reads from a neighbour must hold the owner's encoded value
    for (int b = e->b0; b < e->b1; b++) {
      int p = m->body_parent[b];
      if (pass > 0 && p >= 0 && p < e->b0)
        for (int i = 0; i < 6; i++)
          bad += v[6 * p + i] != 16.0 * m->body_gid[p] + i + 1000.0 * pass;
      const int *ch = m->child_list + m->body_childadr[b];
      for (int k = 0; k < m->body_childnum[b]; k++)
        if (pass == 0 && ch[k] >= e->b1)
          for (int i = 0; i < 6; i++) bad += v[6 * ch[k] + i] != 16.0 * m->body_gid[ch[k]] + i;
    }
  }
  free(v);
  double t = (double)bad;
  MBS_CALL(mbsp_allreduceSum(e->comm, &t, 1));
  *nbad = (long)t;
  return MBS_OK;
}
