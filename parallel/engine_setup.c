/// \file engine_setup.c
/// The distributed engine's setup: the decomposition into contiguous body ranges balanced by a
/// per-joint cost weight, the neighbour lists and halos, the loop bodies, the data-flow
/// dependencies of the kinematics pipeline, creation and destruction (see engine.c for the
/// communication per evaluation). No MPI calls here: everything goes through parallel/comm.c.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine_impl.h"
#include "flops.h"
#include "mbspar/mbs_loops.h"
#include "mbspar/mbs_solvertype.h"
#include "spatial.h"

// ---------------------------------------------------------------- setup

// the decomposition: a local model was built for one (model.part_start); a full model is cut
// here by the same partition (src/partition.c)
static mbsErr mbsp_decompose(mbspEngine *e) {
  const mbsModel *m = e->m;
  int P = e->size;
  MBS_ALLOC(e->start, P + 1);
  if (m->local) {
    MBS_CHECK(m->part_start && m->part_n == P, MBS_ERR_INTERNAL,
              "engine: the local model was built for %d ranks, not %d", m->part_n, P);
    memcpy(e->start, m->part_start, sizeof(int) * (size_t)(P + 1));
    e->b0 = m->own0, e->b1 = m->own1;
    return MBS_OK;
  }
  MBS_CALL(mbs_partitionModel(m, P, e->start));
  e->b0 = e->start[e->rank];
  e->b1 = e->start[e->rank + 1];
  return MBS_OK;
}

// neighbour lists; *cnt arrays are per neighbour (size nnbr+1 address arrays)
static mbsErr mbsp_buildLists(mbspEngine *e) {
  const mbsModel *m = e->m;
  int P = e->size;
  int *mark, *ucount_s, *ucount_r, *dcount_s, *dcount_r;
  MBS_ALLOC(mark, P);
  MBS_ALLOC(ucount_s, P);
  MBS_ALLOC(ucount_r, P);
  MBS_ALLOC(dcount_s, P);
  MBS_ALLOC(dcount_r, P);
  int *lastdn; // avoid listing a body twice for the same neighbour
  MBS_ALLOC(lastdn, P);
  for (int k = 0; k < P; k++) lastdn[k] = -1;
  for (int b = e->b0; b < e->b1; b++) {
    int p = m->body_parent[b];
    if (p >= 0 && p < e->b0) {
      int q = mbsp_engineOwner(e, p);
      mark[q] = 1, ucount_s[q]++;
    }
    const int *ch = m->child_list + m->body_childadr[b];
    for (int k = 0; k < m->body_childnum[b]; k++) {
      int cb = ch[k];
      if (cb >= e->b1) {
        int q = mbsp_engineOwner(e, cb);
        mark[q] = 1, ucount_r[q]++;
        if (lastdn[q] != b) dcount_s[q]++, lastdn[q] = b;
      }
    }
  }
  // remote parents, each counted once (marked in a body-sized scratch array)
  char *seen;
  MBS_ALLOC(seen, m->nbody);
  for (int b = e->b0; b < e->b1; b++) {
    int p = m->body_parent[b];
    if (p >= 0 && p < e->b0 && !seen[p]) {
      seen[p] = 1;
      dcount_r[mbsp_engineOwner(e, p)]++;
    }
  }
  e->nnbr = 0;
  for (int q = 0; q < P; q++) e->nnbr += mark[q];
  int nn = e->nnbr;
  MBS_ALLOC(e->nbr, nn + 1);
  MBS_ALLOC(e->up_sadr, nn + 1);
  MBS_ALLOC(e->up_radr, nn + 1);
  MBS_ALLOC(e->dn_sadr, nn + 1);
  MBS_ALLOC(e->dn_radr, nn + 1);
  int *slot; // neighbour index of each rank
  MBS_ALLOC(slot, P);
  for (int q = 0, k = 0; q < P; q++)
    if (mark[q]) {
      slot[q] = k;
      e->nbr[k] = q;
      e->up_sadr[k + 1] = e->up_sadr[k] + ucount_s[q];
      e->up_radr[k + 1] = e->up_radr[k] + ucount_r[q];
      e->dn_sadr[k + 1] = e->dn_sadr[k] + dcount_s[q];
      e->dn_radr[k + 1] = e->dn_radr[k] + dcount_r[q];
      k++;
    }
  MBS_ALLOC(e->up_s, e->up_sadr[nn] + 1);
  MBS_ALLOC(e->up_r, e->up_radr[nn] + 1);
  MBS_ALLOC(e->dn_s, e->dn_sadr[nn] + 1);
  MBS_ALLOC(e->dn_r, e->dn_radr[nn] + 1);
  int *fus, *fur, *fds, *fdr;
  MBS_ALLOC(fus, nn + 1);
  MBS_ALLOC(fur, nn + 1);
  MBS_ALLOC(fds, nn + 1);
  MBS_ALLOC(fdr, nn + 1);
  for (int k = 0; k < P; k++) lastdn[k] = -1;
  // fill in body order: every list ends up sorted by body index on both sides
  for (int b = e->b0; b < e->b1; b++) {
    int p = m->body_parent[b];
    if (p >= 0 && p < e->b0) {
      int k = slot[mbsp_engineOwner(e, p)];
      e->up_s[e->up_sadr[k] + fus[k]++] = b;
    }
    const int *ch = m->child_list + m->body_childadr[b];
    for (int j = 0; j < m->body_childnum[b]; j++) {
      int cb = ch[j];
      if (cb >= e->b1) {
        int q = mbsp_engineOwner(e, cb), k = slot[q];
        e->up_r[e->up_radr[k] + fur[k]++] = cb;
        if (lastdn[q] != b) e->dn_s[e->dn_sadr[k] + fds[k]++] = b, lastdn[q] = b;
      }
    }
  }
  // up_r must be sorted by child index per neighbour (the sender lists them in body order)
  for (int k = 0; k < nn; k++) {
    int *a = e->up_r + e->up_radr[k], len = e->up_radr[k + 1] - e->up_radr[k];
    for (int i = 1; i < len; i++) // insertion sort: lists are short or nearly sorted
      for (int j = i; j > 0 && a[j - 1] > a[j]; j--) {
        int t = a[j];
        a[j] = a[j - 1], a[j - 1] = t;
      }
  }
  // remote parents, distinct, sorted per neighbour
  for (int b = e->b0; b < e->b1; b++) {
    int p = m->body_parent[b];
    if (p >= 0 && p < e->b0 && seen[p]) {
      seen[p] = 0;
      int k = slot[mbsp_engineOwner(e, p)];
      e->dn_r[e->dn_radr[k] + fdr[k]++] = p;
    }
  }
  for (int k = 0; k < nn; k++) {
    int *a = e->dn_r + e->dn_radr[k], len = e->dn_radr[k + 1] - e->dn_radr[k];
    for (int i = 1; i < len; i++)
      for (int j = i; j > 0 && a[j - 1] > a[j]; j--) {
        int t = a[j];
        a[j] = a[j - 1], a[j - 1] = t;
      }
  }
  free(mark), free(ucount_s), free(ucount_r), free(dcount_s), free(dcount_r), free(lastdn);
  free(slot), free(fus), free(fur), free(fds), free(fdr), free(seen);
  return MBS_OK;
}

// the bodies of the loops and spring-dampers and the buffers of the loop solve
static mbsErr mbsp_loopSetup(mbspEngine *e) {
  const mbsModel *m = e->m;
  if (!m->nloop && !m->nforce) return MBS_OK;
  // a local model holds the bodies of every loop (mbs_configBuildLocal), not spring-dampers'
  MBS_CHECK(!m->local || !m->nforce, MBS_ERR_INTERNAL,
            "engine: a model with spring-dampers is built whole on every rank");
  for (int k = 0; k < 2 * m->nloop; k++) // mbs_loopRows would take a side not held for the ground
    MBS_CHECK(m->loop_body[k] != MBS_LOOP_REMOTE, MBS_ERR_INTERNAL,
              "engine: loop %d's body %d is not held on this rank", k / 2, m->loop_gbody[k]);
  size_t nb = (size_t)m->nbody;
  MBS_ALLOC(e->lb, 2 * (size_t)(m->nloop + m->nforce) + 1);
  unsigned char *mark = calloc(nb, 1);
  MBS_CHECK(mark, MBS_ERR_NOMEM, "out of memory (engine loops)");
  for (int k = 0; k < 2 * m->nloop + 2 * m->nforce; k++) {
    int b = k < 2 * m->nloop ? m->loop_body[k] : m->force_body[k - 2 * m->nloop];
    if (b >= 0 && !mark[b]) mark[b] = 1, e->lb[e->nlb++] = b;
  }
  free(mark);
  MBS_ALLOC(e->lbuf, 18 * (size_t)e->nlb + 1);
  int nd = e->b1 > e->b0
               ? m->body_dofadr[e->b1 - 1] + m->body_dofnum[e->b1 - 1] - m->body_dofadr[e->b0]
               : 0;
  MBS_ALLOC(e->lsave, 12 * (size_t)(e->b1 - e->b0) + (size_t)nd + 1);
  return MBS_OK;
}

// neighbour index of rank q (e->nbr is sorted), -1 if q is not a neighbour
static int mbsp_slot(const mbspEngine *e, int q) {
  int lo = 0, hi = e->nnbr - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (e->nbr[mid] == q) return mid;
    if (e->nbr[mid] < q)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}

// the data-flow dependencies of the tree pipeline (mbsp_kinematics): which received segments
// each sent segment needs (its bodies' ghost parents, structural)
static mbsErr mbsp_kinDeps(mbspEngine *e) {
  const mbsModel *m = e->m;
  int nn = e->nnbr;
  MBS_ALLOC(e->kin_need, nn + 1);
  MBS_ALLOC(e->kin_cnt, nn + 1);
  MBS_ALLOC(e->kin_dadr, nn + 1);
  char *dep; // dep[j * nn + k]: segment k needs neighbour j's
  MBS_ALLOC(dep, (size_t)nn * (size_t)nn + 1);
  for (int b = e->b0; b < e->b1; b++) { // the ghost root of every owned body, as in the maps
    int p = m->body_parent[b];
    e->gho[b] = p < 0 ? -1 : p < e->b0 ? p : e->gho[p];
  }
  for (int k = 0; k < nn; k++)
    for (int i = e->dn_sadr[k]; i < e->dn_sadr[k + 1]; i++) {
      int g = e->gho[e->dn_s[i]];
      int j = g >= 0 ? mbsp_slot(e, mbsp_engineOwner(e, g)) : -1;
      if (j >= 0) dep[(size_t)j * nn + k] = 1;
    }
  int nd = 0;
  for (int j = 0; j < nn; j++)
    for (int k = 0; k < nn; k++) nd += dep[(size_t)j * nn + k];
  MBS_ALLOC(e->kin_dep, nd + 1);
  nd = 0;
  for (int j = 0; j < nn; j++) {
    e->kin_dadr[j] = nd;
    for (int k = 0; k < nn; k++)
      if (dep[(size_t)j * nn + k]) e->kin_dep[nd++] = k, e->kin_need[k]++;
  }
  e->kin_dadr[nn] = nd;
  free(dep); // e->gho stays: the position stage reads it before the kinematics (re)set it
  return MBS_OK;
}

static mbsErr mbsp_engineSetup(mbspEngine *e) {
  MBS_CALL(mbsp_decompose(e));
  MBS_CALL(mbsp_buildLists(e));
  MBS_CALL(mbs_workCreate(e->m, &e->w));
  MBS_CALL(mbs_cfsCreate(e->m, e->b0, e->b1, &e->c));
  mbs_cfsSetContext(e->c, e); // solvers of the parallel layer reach the engine through it
  size_t nb = (size_t)e->m->nbody;
  MBS_ALLOC(e->gho, nb);
  MBS_ALLOC(e->Xg, 12 * nb);
  MBS_ALLOC(e->vloc, 6 * nb);
  for (int b = e->b0; b < e->b1; b++) {
    int p = e->m->body_parent[b];
    e->gho[b] = -1;
    if (p >= 0 && p < e->b0) e->ghosted = 1;
  }
  MBS_CALL(mbsp_kinDeps(e));
  MBS_CALL(mbsp_loopSetup(e));
  // solver.loops = rows: the closure equations join the system, held by the last body's rank
  if (mbs_loopUseRows(e->m, e->m->opt.solver))
    MBS_CALL(mbs_cfsEnableLoopRows(e->m, e->c, e->b1 == e->m->nbody));
  return MBS_OK;
}

static mbsErr mbsp_engineHalos(mbspEngine *e, int halo_mode) {
  int nn = e->nnbr;
  int *sc, *rc, *sc2, *rc2;
  MBS_ALLOC(sc, nn + 1);
  MBS_ALLOC(rc, nn + 1);
  MBS_ALLOC(sc2, nn + 1);
  MBS_ALLOC(rc2, nn + 1);
  for (int k = 0; k < nn; k++) {
    sc[k] = 6 * (e->up_sadr[k + 1] - e->up_sadr[k]);
    rc[k] = 6 * (e->up_radr[k + 1] - e->up_radr[k]);
    sc2[k] = 6 * (e->dn_sadr[k + 1] - e->dn_sadr[k]);
    rc2[k] = 6 * (e->dn_radr[k + 1] - e->dn_radr[k]);
  }
  mbsErr err = mbsp_haloCreate(e->comm, nn, e->nbr, sc, rc, halo_mode, &e->hup);
  if (!err) err = mbsp_haloCreate(e->comm, nn, e->nbr, sc2, rc2, halo_mode, &e->hdn);
  for (int k = 0; k < nn; k++) sc2[k] *= 3, rc2[k] *= 3; // pose (12) and velocity (6)
  if (!err) err = mbsp_haloCreate(e->comm, nn, e->nbr, sc2, rc2, MBSP_HALO_P2P, &e->hvel);
  free(sc), free(rc), free(sc2), free(rc2);
  return err;
}

mbsErr mbsp_engineCreate(mbspComm *comm, const mbsModel *m, int halo_mode, mbspEngine **out) {
  mbspEngine *e = calloc(1, sizeof *e);
  *out = NULL;
  mbsErr err = e ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory (engine)");
  if (e) {
    e->comm = comm, e->m = m;
    e->rank = mbsp_rank(comm), e->size = mbsp_size(comm);
    err = mbsp_engineSetup(e);
  }
  // all ranks agree before the collective halo setup
  err = mbsp_agreeErr(comm, err);
  if (!err) err = mbsp_agreeErr(comm, mbsp_engineHalos(e, halo_mode));
  if (err) {
    mbsp_engineDestroy(&e);
    return err;
  }
  // 2-cyclic or not is a property of the whole tree: an owned body has all its children locally
  {
    double br = 0;
    for (int b = e->b0; b < e->b1; b++)
      if (e->m->body_childnum[b] > 1) br = 1;
    if (mbsp_allreduceMax(comm, &br, 1) != MBS_OK) br = 1;
    e->c->branched = br > 0 || e->c->nlr; // closure rows: mbs_cfsEnableLoopRows
  }
  // the O(log P) prefix applies when every rank owns one path segment whose only remote parent
  // is the last body of the previous rank (chains); otherwise the pipeline (trees)
  {
    const mbsModel *mm = e->m;
    double ok = 1;
    for (int b = e->b0; b < e->b1 && ok; b++)
      if (mm->body_parent[b] != b - 1 || (b + 1 < e->b1 && mm->body_childnum[b] != 1)) ok = 0;
    if (ok && e->b1 < mm->nbody)
      for (int b = e->b0; b < e->b1 && ok; b++)
        for (int k = 0; k < mm->body_childnum[b]; k++)
          if (mm->child_list[mm->body_childadr[b] + k] >= e->b1 && b != e->b1 - 1) ok = 0;
    if (mbsp_allreduceMin(comm, &ok, 1) != MBS_OK) ok = 0;
    const char *pm = getenv("MBSPAR_PREFIX"); // "pipeline" forces the pipeline (measurements)
    e->use_scan = ok > 0 && e->size > 1 && !(pm && strcmp(pm, "pipeline") == 0);
  }
  e->hooks.ctx = e;
  e->hooks.reduce = mbsp_engineReduceHook;
  if (e->size > 1) {
    e->hooks.halo_up = mbsp_engineHaloUpHook;
    e->hooks.halo_down = mbsp_engineHaloDownHook;
  }
  *out = e;
  return MBS_OK;
}

void mbsp_engineDestroy(mbspEngine **pe) {
  if (!pe || !*pe) return;
  mbspEngine *e = *pe;
  mbsp_haloDestroy(&e->hup);
  mbsp_haloDestroy(&e->hdn);
  mbsp_haloDestroy(&e->hvel);
  mbs_cfsDestroy(&e->c);
  mbs_workDestroy(&e->w);
  void *arrs[] = {e->start, e->nbr,     e->up_sadr,  e->up_s,    e->up_radr,  e->up_r,   e->dn_sadr,
                  e->dn_s,  e->dn_radr, e->dn_r,     e->gho,     e->Xg,       e->vloc,   e->lb,
                  e->lbuf,  e->lsave,   e->kin_need, e->kin_cnt, e->kin_dadr, e->kin_dep};
  for (size_t k = 0; k < sizeof arrs / sizeof arrs[0]; k++) free(arrs[k]);
  free(e);
  *pe = NULL;
}
