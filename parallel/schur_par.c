/// \file schur_par.c
/// The exact distributed constraint-force solver (solver.method = "schur").
///
/// Every rank eliminates the joints of its own bodies (src/schur/), which leaves, per connected
/// component of its bodies, a small dense system on the component's cut joints: its upper port
/// (the root's joint, whose parent lives on a lower rank) and its lower ports (joints of children
/// on higher ranks). The sum of these systems over all ranks is the cut-joint (interface)
/// system; it is solved without gathering it anywhere:
///  - chain decompositions (every rank one component, ports only to rank r - 1 and r + 1): the
///    rank systems are the elements of an associative merge (join two systems on their shared
///    cut joint and eliminate it), so a radix-k scan (k = mbsp_scanRadix; k = 2 is recursive
///    doubling) gives every rank the merge of all ranks above it and of all ranks below it in
///    ceil(log_k P) rounds of point-to-point messages to the ranks at distances j k^i
///    (j = 1 .. k - 1; prefix and suffix in the same rounds, up to 4 (k - 1) messages of 158
///    doubles per rank and round); each rank then solves its own 2-port system;
///  - any other decomposition (trees): a leaf-to-root pass over the component tree (each
///    component adds its children's reduced systems to its lower ports, eliminates them and sends
///    the system left on its upper port to the parent's rank), then a root-to-leaf pass with the
///    cut-joint lambdas, where its depth (the height of the rank tree, measured at setup) is at
///    most ceil(log2 P); else the contraction over rank intervals (schur_par_red.c): ceil(log2 P)
///    rounds each way whatever the tree, exact (docs/formulation.md 4.4).
///  - solver.interface = "jcg": conjugate gradients preconditioned by the cut joints' diagonal
///    blocks on the same interface system (the seed's J-CG, about P iterations instead of N),
///    with two neighbour exchanges and one fused allreduce per iteration.
/// After the interface solve every rank back-substitutes its own lambdas and accelerations; the
/// roots with a remote parent get the parent's acceleration in one more message for their qdd.
/// All MPI goes through parallel/comm.c.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "schur_par.h"
#include "mbspar/mbs_cfs.h"
#include "mbspar/mbs_critpath.h"
#include "mbspar/mbs_engine.h"
#include "mbspar/mbs_solvertype.h"
#include "flops.h"
#include "spatial.h"
#include "schur_par_private.h"

// owner rank of local body b (through its global index)
static int mbsp_schurOwner(const mbspSchur *sp, int b) {
  b = sp->m->body_gid[b];
  int lo = 0, hi = sp->size - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (sp->start[mid] <= b)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

void mbsp_schurDestroy(mbspSchur **psp) {
  if (!psp || !*psp) return;
  mbspSchur *sp = *psp;
  mbsp_schurRedDestroy(sp);
  for (int c = 0; sp->lr_aug && c < sp->seg->ncomp; c++) free(sp->lr_aug[c]);
  free(sp->lr_aug);
  mbs_schurRankDestroy(&sp->rk);
  mbsp_msgDestroy(&sp->msg);
  void *arrs[] = {sp->start,      sp->comp_rank, sp->comp_tag,   sp->port_rank, sp->port_tag,
                  sp->ghost,      sp->rbuf,      sp->port_radr,  sp->sbuf,      sp->comp_sadr,
                  sp->S,          sp->lam_up,    sp->lam_low,    sp->acc_s,     sp->acc_r,
                  sp->ghost_rank, sp->ghost_tag, sp->comp_erank, sp->comp_etag, sp->jx,
                  sp->jr,         sp->jz,        sp->jp,         sp->jq,        sp->jd,
                  sp->jg,         sp->lp,        sp->lq,         sp->dsend,     sp->jd_adr,
                  sp->jt,         sp->st_s,      sp->st_r,       sp->port_comp, sp->comp_uadr,
                  sp->comp_pend,  sp->up_comp,   sp->goff,       sp->gmap,      sp->light_b,
                  sp->light_blk,  sp->lr_lam,    sp->lr_send,    sp->pbuf};
  for (size_t k = 0; k < sizeof arrs / sizeof arrs[0]; k++) free(arrs[k]);
  free(sp);
  *psp = NULL;
}

static mbsErr mbsp_schurSetup(mbspSchur *sp) {
  const mbsModel *m = sp->m;
  MBS_CALL(mbs_schurRankCreate(m, sp->b0, sp->b1, sp->nthread, &sp->rk));
  sp->seg = &sp->rk->view;
  mbsSchur *s = sp->seg;
  int nc = s->ncomp, np = s->nport;
  MBS_ALLOC(sp->comp_rank, nc);
  MBS_ALLOC(sp->comp_tag, nc);
  MBS_ALLOC(sp->comp_sadr, nc + 1);
  MBS_ALLOC(sp->port_rank, np);
  MBS_ALLOC(sp->port_tag, np);
  MBS_ALLOC(sp->port_radr, np + 1);
  // pair indices: the cut joints between two ranks, in increasing child body order, are
  // numbered the same way on both sides
  int nup = 0, maxup = 0;
  for (int c = 0; c < nc; c++) {
    const mbsSchurComp *cp = s->comp + c;
    // + the pass's depth stamp and a light root's soft part (v, sigma, phi; light_all only)
    sp->comp_sadr[c + 1] = sp->comp_sadr[c] + cp->nup * cp->nup + 2 * cp->nup + 3;
    nup += cp->nup;
    if (cp->nup > maxup) maxup = cp->nup;
    if (!cp->up) continue;
    int pr = mbsp_schurOwner(sp, m->body_parent[cp->root]), idx = 0;
    for (int c2 = 0; c2 < c; c2++)
      if (s->comp[c2].up && mbsp_schurOwner(sp, m->body_parent[s->comp[c2].root]) == pr) idx++;
    sp->comp_rank[c] = pr, sp->comp_tag[c] = MBSP_TAG(idx, 0);
  }
  for (int q = 0; q < np; q++) {
    int l = s->port_body[q], cr = mbsp_schurOwner(sp, l), idx = 0, nl = m->body_lamnum[l];
    for (int q2 = 0; q2 < np; q2++)
      if (s->port_body[q2] < l && mbsp_schurOwner(sp, s->port_body[q2]) == cr) idx++;
    sp->port_rank[q] = cr, sp->port_tag[q] = MBSP_TAG(idx, 0);
    sp->port_radr[q + 1] = sp->port_radr[q] + nl * nl + 2 * nl + 3; // as comp_sadr
  }
  MBS_ALLOC(sp->port_comp, np + 1);
  MBS_ALLOC(sp->comp_uadr, nc + 1);
  MBS_ALLOC(sp->comp_pend, nc + 1);
  MBS_ALLOC(sp->up_comp, nc + 1);
  for (int c = 0; c < nc; c++) {
    sp->comp_uadr[c + 1] = sp->comp_uadr[c] + s->comp[c].nup;
    for (int q = s->comp[c].p0; q < s->comp[c].p0 + s->comp[c].np; q++) sp->port_comp[q] = c;
  }
  MBS_ALLOC(sp->rbuf, sp->port_radr[np]);
  MBS_ALLOC(sp->sbuf, sp->comp_sadr[nc]);
  MBS_ALLOC(sp->S, (maxup + 1) * (maxup + 1) + maxup + 2); // + a light root's mu
  MBS_ALLOC(sp->lam_up, nup);
  MBS_ALLOC(sp->lam_low, s->ncol);
  MBS_ALLOC(sp->acc_s, 6 * np);
  MBS_ALLOC(sp->acc_r, 6 * nc);
  // the scan's buffers and messages: per round up to radix - 1 each way, both directions
  sp->radix = mbsp_scanRadix(sp->comm);
  MBS_ALLOC(sp->pbuf, 2 * sp->radix * MBS_SCHUR_PAIR_DOUBLES);
  MBS_CALL(mbsp_msgCreate(sp->comm, 2 * (np + nc) + 4 * sp->radix + 4, &sp->msg));
  MBS_ALLOC(sp->jx, nup);
  MBS_ALLOC(sp->jr, nup);
  MBS_ALLOC(sp->jz, nup);
  MBS_ALLOC(sp->jp, nup);
  MBS_ALLOC(sp->jq, nup);
  MBS_ALLOC(sp->jt, nup);
  MBS_ALLOC(sp->jg, nup);
  MBS_ALLOC(sp->jd_adr, nc + 1);
  for (int c = 0; c < nc; c++) sp->jd_adr[c + 1] = sp->jd_adr[c] + s->comp[c].nup * s->comp[c].nup;
  MBS_ALLOC(sp->jd, sp->jd_adr[nc]);
  MBS_ALLOC(sp->lp, s->ncol);
  MBS_ALLOC(sp->lq, s->ncol);
  MBS_ALLOC(sp->dsend, sp->port_radr[np]);
  // remote children of owned bodies
  int ng = 0;
  for (int b = sp->b0; b < sp->b1; b++)
    for (int k = 0; k < m->body_childnum[b]; k++)
      if (m->child_list[m->body_childadr[b] + k] >= sp->b1) ng++;
  MBS_ALLOC(sp->ghost, ng);
  MBS_ALLOC(sp->ghost_rank, ng);
  MBS_ALLOC(sp->ghost_tag, ng);
  MBS_ALLOC(sp->comp_erank, nc);
  MBS_ALLOC(sp->comp_etag, nc);
  MBS_ALLOC(sp->st_s, 13 * nc);
  MBS_ALLOC(sp->st_r, 13 * ng);
  for (int b = sp->b0; b < sp->b1; b++)
    for (int k = 0; k < m->body_childnum[b]; k++) {
      int c = m->child_list[m->body_childadr[b] + k];
      if (c >= sp->b1) sp->ghost[sp->nghost++] = c;
    }
  // tree edges between two ranks (for the acceleration messages), numbered by child body
  for (int k = 0; k < ng; k++) {
    int c = sp->ghost[k], cr = mbsp_schurOwner(sp, c), idx = 0;
    for (int k2 = 0; k2 < ng; k2++)
      if (sp->ghost[k2] < c && mbsp_schurOwner(sp, sp->ghost[k2]) == cr) idx++;
    sp->ghost_rank[k] = cr, sp->ghost_tag[k] = MBSP_TAG(idx, 0);
  }
  for (int c = 0; c < nc; c++) {
    int r = s->comp[c].root, p = m->body_parent[r];
    sp->comp_erank[c] = -1;
    if (p < 0 || p >= sp->b0) continue; // ground, or a parent on this rank (free-joint cut)
    int pr = mbsp_schurOwner(sp, p), idx = 0;
    for (int c2 = 0; c2 < c; c2++) {
      int p2 = m->body_parent[s->comp[c2].root];
      if (p2 >= 0 && p2 < sp->b0 && mbsp_schurOwner(sp, p2) == pr) idx++;
    }
    sp->comp_erank[c] = pr, sp->comp_etag[c] = MBSP_TAG(idx, 0);
  }
  // the interface over all ranks (loop models: mbsp_schurLocal) is numbered collectively, after
  // the setup (mbsp_schurGlobalIface); here only its scratch
  sp->nglob = -1;
  if (m->nloop) {
    int maxn = 1;
    for (int c = 0; c < nc; c++) maxn = s->comp[c].n > maxn ? s->comp[c].n : maxn;
    MBS_ALLOC(sp->gmap, maxn);
  }
  // chain decomposition: one component per rank, ports only to the neighbouring ranks
  int chain = nc == 1 && np <= 1;
  if (chain && s->comp[0].up && sp->comp_rank[0] != sp->rank - 1) chain = 0;
  if (chain && np == 1 && sp->port_rank[0] != sp->rank + 1) chain = 0;
  // MBSPAR_SCHUR_MERGE (tests, measurements): "tree" no scan (the interval contraction), "pass"
  // no scan and the leaf-to-root / root-to-leaf passes over the component tree
  const char *mode = getenv("MBSPAR_SCHUR_MERGE");
  int nochain = mode && (strcmp(mode, "tree") == 0 || strcmp(mode, "pass") == 0);
  sp->chain = chain && !nochain;
  sp->red = !(mode && strcmp(mode, "pass") == 0) + (mode && strcmp(mode, "tree") == 0);
  return MBS_OK;
}

// a local model's light joint from global gp (local lp, -1 if not held) to gc that crosses a
// rank edge and stays inexact, decided by one rank only: a light root (the child the lighter
// body, \p light_parent 0) by the child's rank; a light parent by the parent's rank, exact if
// this rank takes it as a light leaf (mbsp_schurLightSetup) or keeps one of its children (its D
// includes that child: no light leaf, as mbs_schurLightCut)
static int mbsp_schurLightInexact(const mbspSchur *sp, int light_parent, int gc, int gp, int lp) {
  const mbsModel *m = sp->m;
  const int s0 = sp->start[sp->rank], s1 = sp->start[sp->rank + 1];
  if (!light_parent) // a light root: exact where this rank takes its light roots
    return gc >= s0 && gc < s1 && gp < s0 && !mbsp_schurLightRootsCovered(sp);
  if (gp < s0 || gp >= s1 || gc < s1 || lp < 0) return 0;
  for (int i = 0; i < sp->light; i++)
    if (sp->light_b[3 * i] == lp) return 0;
  const int *ch = m->child_list + m->body_childadr[lp];
  for (int c = 0; c < m->body_childnum[lp]; c++)
    if (m->body_gid[ch[c]] < s1) return 0;
  return 1;
}

// a light joint at a rank boundary (no clean place within MBS_PARTITION_FIXED_SKIP bodies,
// docs/formulation.md 4.9; thread boundaries never cut one, mbs_schurRankCreate joins the
// segments instead) that the light-leaf change of variables does not make exact (where every
// rank takes its light leaves, mbsp_schurLightSetup: full and local models, any number of
// segments; not with loops, the J-CG interface or MBSPAR_SCHUR_LIGHT=0; never a light root): one
// warning line before the run, printed by the rank that holds the lowest such child. Collective.
static mbsErr mbsp_schurLightWarn(const mbspSchur *sp) {
  const mbsModel *m = sp->m;
  int b = -1, g = -1;
  const char *pname = NULL;
  double ok[2] = {sp->light_ok, mbsp_schurLightRootsCovered(sp)}; // light leaves; light roots
  MBS_CALL(mbsp_allreduceMin(sp->comm, ok, 2));
  if (!m->local && sp->rank == 0) { // the rank boundaries of a full model
    int pr, br = mbs_schurLightCut(m, sp->start, sp->size, ok[0] > 0 ? 1 + (ok[1] > 0) : 0, &pr);
    if (br >= 0) b = br, g = br, pname = m->body_name[pr];
  } else if (m->local) { // the light joints of the structure pass that cross this rank's edges
    for (int k = 0; k < m->nrun_light && g < 0; k++) {
      int gc = m->run_light[2 * k], gp = mbs_partitionLightParentOf(m->run_light[2 * k + 1]),
          lc = mbs_modelLocal(m, gc), lp = mbs_modelLocal(m, gp);
      if (lc >= 0 && mbsp_schurLightInexact(sp, m->run_light[2 * k + 1] >= 0, gc, gp, lp))
        b = lc, g = gc, pname = lp >= 0 ? m->body_name[lp] : "its parent on another rank";
    }
  }
  double first = g >= 0 ? (double)g : 1e300;
  MBS_CALL(mbsp_allreduceMin(sp->comm, &first, 1));
  if (g >= 0 && (double)g == first)
    fprintf(stderr,
            "mbspar: warning: schur: a rank boundary cuts the light joint between %s "
            "and %s (no clean place within %d bodies): schur may lose its accuracy on this "
            "layout; solver.method = \"aba\" is exact (docs/formulation.md 4.9)\n",
            pname, m->body_name[b], MBS_PARTITION_FIXED_SKIP);
  return MBS_OK;
}

// the interface over all ranks for the loops' local solves (mbsp_schurLocal): the cut joints
// between two ranks numbered by child body, each counted by the rank that owns its child (parents
// come first, so the cut joints of a rank's owned children are those with a parent below its
// range). A rank needs the first unknown of its components' upper ports and of its ports only:
// from a table of every cut joint's child (global index) and size, O(cut joints) on every rank,
// not the whole model's parents (local models too). Collective.
static mbsErr mbsp_schurGlobalIface(mbspSchur *sp) {
  const mbsModel *m = sp->m;
  const mbsSchur *v = sp->seg;
  sp->nglob = -1;
  if (!m->nloop) return MBS_OK;
  int P = sp->size, mine = 0;
  for (int b = sp->b0; b < sp->b1; b++)
    if (m->body_parent[b] >= 0 && m->body_parent[b] < sp->b0) mine++;
  double *cnt = calloc((size_t)P + 1, sizeof(double)), *tab = NULL;
  mbsErr e = mbsp_agreeErr(sp->comm, cnt ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory"));
  if (!e) cnt[sp->rank] = mine, e = mbsp_allreduceSum(sp->comm, cnt, P);
  int total = 0, base = 0;
  for (int r = 0; !e && r < P; r++) total += (int)cnt[r], base += r < sp->rank ? (int)cnt[r] : 0;
  if (!e) { // (global child, size) of every cut joint, in rank order: increasing child
    tab = calloc(2 * (size_t)total + 1, sizeof(double));
    sp->goff = malloc(sizeof(int) * ((size_t)m->nbody + 1));
    e = mbsp_agreeErr(sp->comm,
                      tab && sp->goff ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory"));
  }
  if (!e) {
    for (int b = sp->b0, k = base; b < sp->b1; b++)
      if (m->body_parent[b] >= 0 && m->body_parent[b] < sp->b0)
        tab[2 * k] = m->body_gid[b], tab[2 * k + 1] = m->body_lamnum[b], k++;
    if (total > 0) e = mbsp_allreduceSum(sp->comm, tab, 2 * total);
  }
  if (!e) {
    double off = 0; // tab[2 k + 1]: the first unknown of cut joint k
    for (int k = 0; k < total; k++) {
      double nl = tab[2 * k + 1];
      tab[2 * k + 1] = off, off += nl;
    }
    sp->nglob = (int)off;
    for (int b = 0; b <= m->nbody; b++) sp->goff[b] = -1;
    for (int c = 0; c < v->ncomp + v->nport; c++) { // the upper ports, then the ports
      int l = c < v->ncomp ? v->comp[c].root : v->port_body[c - v->ncomp], lo = 0, hi = total;
      double g = m->body_gid[l];
      while (lo < hi) { // the first entry at or above g
        int mid = (lo + hi) / 2;
        if (tab[2 * mid] < g)
          lo = mid + 1;
        else
          hi = mid;
      }
      if (lo < total && tab[2 * lo] == g) sp->goff[l] = (int)tab[2 * lo + 1];
    }
  }
  free(cnt), free(tab);
  return e;
}

mbsErr mbsp_schurCreate(mbspComm *comm, const mbsModel *m, const int *start, int b0, int b1,
                        int iface, int nthread, mbspSchur **out) {
  *out = NULL;
  mbspSchur *sp = calloc(1, sizeof *sp);
  mbsErr e = sp ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur)");
  if (!e) {
    sp->comm = comm, sp->m = m, sp->iface = iface, sp->nthread = nthread > 0 ? nthread : 1;
    sp->rank = mbsp_rank(comm), sp->size = mbsp_size(comm);
    sp->start = malloc(sizeof(int) * (size_t)(sp->size + 1));
    if (!sp->start) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur)");
  }
  if (!e) {
    memcpy(sp->start, start, sizeof(int) * (size_t)(sp->size + 1));
    sp->b0 = b0, sp->b1 = b1; // the model's indices (local models: not the global ones)
    e = mbsp_schurSetup(sp);
    if (!e) e = mbsp_schurLightSetup(sp);
  }
  e = mbsp_agreeErr(comm, e);
  if (!e) e = mbsp_schurGlobalIface(sp);
  if (!e) { // the scan needs every rank to be a chain element
    double ok = sp->chain;
    e = mbsp_allreduceMin(comm, &ok, 1);
    sp->chain = ok > 0;
  }
  if (!e) { // light leaves at rank cuts (schur_par_light.c) are taken by the passes alone
    double nl = -(double)(sp->light + sp->lroot); // and the light roots (their soft parts)
    e = mbsp_allreduceMin(comm, &nl, 1);
    if (nl < 0) sp->chain = 0, sp->red = 0, sp->light_all = 1;
    if (!e && sp->light_all) {
      const mbsSchur *v = sp->seg;
      sp->lr_lam = calloc((size_t)(sp->comp_uadr[v->ncomp] + v->ncomp) + 1, sizeof(double));
      sp->lr_send = calloc((size_t)(v->ncol + v->nport) + 1, sizeof(double));
      if (!sp->lr_lam || !sp->lr_send) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur light)");
    }
    int mc = 1;
    for (int c = 0; c < sp->seg->ncomp; c++)
      if (sp->seg->comp[c].nc > mc) mc = sp->seg->comp[c].nc;
    if (!e && sp->light_all && !(sp->light_blk = malloc(sizeof(int) * (size_t)mc)))
      e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur light)");
    e = mbsp_agreeErr(comm, e);
  }
  // trees: the log-depth contraction's lists and buffers (collective)
  if (!e) {
    // the passes where they are at most ceil(log2 P) messages deep (their messages are one
    // component's upper port; the contraction's carry a whole interval's boundary), else the
    // contraction (MBSPAR_SCHUR_MERGE: sp->red 2 forces it, 0 the passes)
    int forced = sp->red;
    sp->red = sp->red && !sp->chain && sp->size > 1 && iface != MBSP_IFACE_JCG;
    if (sp->red && forced == 1) {
      int depth = 0, K = 0;
      while ((1 << K) < sp->size) K++;
      e = mbsp_schurPassDepth(sp, &depth);
      if (!e && depth <= K) sp->red = 0;
    }
    if (!e && sp->red) e = mbsp_agreeErr(comm, mbsp_schurRedSetup(sp));
  }
  if (!e && sp->chain && sp->size > 1 && sp->rk->nseg == 1) {
    // the overlapped factor (docs/formulation.md 4.4): slices of MBSPAR_OVERLAP_BODIES bodies in
    // the kinematics prefix's rounds, by default where it has two or more (P >= 3);
    // MBSPAR_OVERLAP=0 off, 1 on at any P >= 2. Without the memory: off (a local choice, no
    // messages depend on it)
    const char *ov = getenv("MBSPAR_OVERLAP"), *nb = getenv("MBSPAR_OVERLAP_BODIES");
    int on = ov ? atoi(ov) != 0 : sp->size >= 3, per = nb ? atoi(nb) : MBS_SCHUR_PRE_BODIES;
    if (on && per > 0 && mbs_schurPreEnable(sp->rk, MBS_SCHUR_PRE_CAP) == MBS_OK)
      sp->pre_bodies = per;
  }
  if (!e) e = mbsp_schurLightWarn(sp);
  if (e) {
    mbsp_schurDestroy(&sp);
    return e;
  }
  *out = sp;
  return MBS_OK;
}

// ---------------------------------------------------------------- evaluation

// the remote children's joint states: receives posted, own roots' states sent (the state alone
// decides them, so the engine posts them before its kinematics: mbs_cfsBegin)
static mbsErr mbsp_schurPost(mbspSchur *sp, const mbsState *st) {
  const mbsModel *m = sp->m;
  const mbsSchur *s = sp->seg;
  mbsErr e0 = MBS_OK;
  for (int k = 0; k < sp->nghost && !e0; k++)
    e0 = mbsp_msgIrecv(sp->msg, sp->st_r + 13 * k, 13, sp->ghost_rank[k],
                       sp->ghost_tag[k] + MBSP_PH_STATE, NULL);
  for (int c = 0; c < s->ncomp && !e0; c++) {
    if (sp->comp_erank[c] < 0) continue;
    int r = s->comp[c].root, nq = m->body_qnum[r], nv = m->body_dofnum[r];
    double *b = sp->st_s + 13 * c;
    memcpy(b, st->q + m->body_qadr[r], sizeof(double) * (size_t)nq);
    memcpy(b + nq, st->qd + m->body_dofadr[r], sizeof(double) * (size_t)nv);
    e0 = mbsp_msgIsend(sp->msg, b, 13, sp->comp_erank[c], sp->comp_etag[c] + MBSP_PH_STATE, NULL);
  }
  return e0;
}

mbsErr mbsp_schurBegin(mbspSchur *sp, const mbsState *st) {
  if (sp->size <= 1 || sp->posted) return MBS_OK;
  sp->posted = 1;
  sp->post_err = mbsp_schurPost(sp, st);
  return MBS_OK; // a failure is reported by the solve, collectively
}

// the remote children's position and velocity stages from their joint states in st (under
// w->homog their velocity terms are zero)
static void mbsp_schurGhostStages(const mbspSchur *sp, const mbsState *st, mbsWork *w) {
  for (int k = 0; k < sp->nghost; k++) {
    mbs_bodyPosition(sp->m, st->q, w, sp->ghost[k]);
    mbs_bodyVelocity(sp->m, st, w, sp->ghost[k]);
  }
}

// the remote children's joint states into st
static void mbsp_schurStatesIn(const mbspSchur *sp, mbsState *st) {
  const mbsModel *m = sp->m;
  for (int k = 0; k < sp->nghost; k++) {
    int g = sp->ghost[k], nq = m->body_qnum[g], nv = m->body_dofnum[g];
    memcpy(st->q + m->body_qadr[g], sp->st_r + 13 * k, sizeof(double) * (size_t)nq);
    memcpy(st->qd + m->body_dofadr[g], sp->st_r + 13 * k + nq, sizeof(double) * (size_t)nv);
  }
}

int mbsp_schurPre(mbspSchur *sp, mbsState *st, mbsWork *w, int what) {
  if (sp->pre_bodies <= 0) return 0;
  if (what < 0) {
    sp->states_in = 0, sp->pre_err = MBS_OK;
    mbs_schurRankPre(sp->m, w, sp->rk, -1);
    return 1;
  }
  if (!sp->states_in) { // the lower ports' joints first: their states, posted by mbsp_schurBegin
    if (!sp->posted) return 0;
    sp->pre_err = sp->post_err;
    sp->posted = 0, sp->states_in = 1;
    if (!sp->pre_err) sp->pre_err = mbsp_msgWaitAll(sp->msg);
    if (sp->pre_err) return 0;
    mbsp_schurStatesIn(sp, st);
    for (int k = 0; k < sp->nghost; k++) mbs_bodyJoint(sp->m, st->q, w, sp->ghost[k]);
  }
  return sp->pre_err ? 0 : mbs_schurRankPre(sp->m, w, sp->rk, sp->pre_bodies);
}

mbsErr mbsp_schurSolve(mbspSchur *sp, mbsState *st, mbsWork *w) {
  const mbsModel *m = sp->m;
  mbsSchur *s = sp->seg;
  // the remote children's joint states (each rank integrates only its own joints), then their
  // stages (their joints are the lower ports); with the overlapped factor the states and the
  // joints came in with its first slice (mbsp_schurPre)
  const int pre = sp->states_in;
  sp->states_in = 0;
  if (sp->size > 1) {
    MBS_TIC(w->timer, MBS_TIMER_HALO);
    mbsErr e0 = pre ? sp->pre_err : sp->posted ? sp->post_err : mbsp_schurPost(sp, st);
    if (!pre) {
      sp->posted = 0;
      if (!e0) e0 = mbsp_msgWaitAll(sp->msg);
    }
    MBS_TOC(w->timer, MBS_TIMER_HALO);
    MBS_CALL(e0);
    if (!pre) mbsp_schurStatesIn(sp, st);
  }
  if (pre) // the joints are in w: the poses and velocities
    for (int k = 0; k < sp->nghost; k++) {
      mbs_bodyPose(m, w, sp->ghost[k]);
      mbs_bodyVelocity(m, st, w, sp->ghost[k]);
    }
  else
    mbsp_schurGhostStages(sp, st, w);
  MBS_TIC(w->timer, MBS_TIMER_FACTOR);
  mbsErr e = mbs_schurRankFactor(m, w, sp->rk);
  MBS_TOC(w->timer, MBS_TIMER_FACTOR);
  sp->nfloor = sp->rk->nfloor;
  // the cut-joint system. A failed factor does not leave the solve: the interface's messages
  // follow the decomposition, not the data, so every rank goes through them (with whatever the
  // failed factor left) and one agreement after them covers both phases (one allreduce per
  // evaluation instead of two)
  mbsErr ef = e;
  char fmsg[512] = "";
  if (ef) snprintf(fmsg, sizeof fmsg, "%s", mbs_errMsg());
  MBS_TIC(w->timer, MBS_TIMER_SOLVE);
  sp->reason = MBS_REASON_CONVERGED_DIRECT, sp->residual = 0;
  if (sp->size > 1) {
    if (sp->iface == MBSP_IFACE_JCG)
      e = mbsp_schurJcg(sp, st, w);
    else if (sp->chain)
      e = mbsp_schurScan(sp, w);
    else if (sp->red)
      e = mbsp_schurRed(sp, w);
    else
      e = mbsp_schurTree(sp, w);
  } else {
    // one rank: every component is rooted at the ground (or cut by a free joint): no ports
    sp->rounds = 0;
  }
  MBS_TOC(w->timer, MBS_TIMER_SOLVE);
  if (ef) e = mbs_errSet(ef, "%s", fmsg); // the factor's error (it caused whatever followed)
  // the agreement overlaps the back-substitution (local arithmetic, no messages, no allocation:
  // on a failure somewhere it runs on whatever the solve left and its results are dropped), so
  // the reduction's first round is off the critical path; its others run while the
  // accelerations' messages that follow travel, and it decides before they are read
  MBS_CALL(mbsp_agreeErrStart(sp->comm, e));
  // back-substitution, then the parents' accelerations for the roots with remote parents
  MBS_TIC(w->timer, MBS_TIMER_ACCEL);
  mbs_schurRankBack(m, w, sp->rk, sp->lam_up, sp->lam_low, NULL, 0);
  MBS_TOC(w->timer, MBS_TIMER_ACCEL);
  if (sp->size > 1) {
    // the parents' accelerations travel while the agreement's other rounds run (every rank posts
    // them, failed or not: the pattern follows the decomposition); the agreement decides before
    // any rank reads them
    MBS_TIC(w->timer, MBS_TIMER_HALO);
    e = MBS_OK;
    for (int c = 0; c < s->ncomp && !e; c++)
      if (sp->comp_erank[c] >= 0)
        e = mbsp_msgIrecv(sp->msg, sp->acc_r + 6 * c, 6, sp->comp_erank[c],
                          sp->comp_etag[c] + MBSP_PH_ACC, NULL);
    for (int k = 0; k < sp->nghost && !e; k++)
      e = mbsp_msgIsend(sp->msg, w->acc + 6 * m->body_parent[sp->ghost[k]], 6, sp->ghost_rank[k],
                        sp->ghost_tag[k] + MBSP_PH_ACC, NULL);
    mbsErr ea = mbsp_agreeErrEnd(sp->comm);
    mbsErr ew = mbsp_msgWaitAll(sp->msg);
    e = ea ? ea : e ? e : ew; // the agreed outcome first
    MBS_TOC(w->timer, MBS_TIMER_HALO);
    MBS_CALL(e);
    for (int c = 0; c < s->ncomp; c++)
      if (sp->comp_erank[c] >= 0) mbs_schurQdd(m, w, s->comp[c].root, sp->acc_r + 6 * c);
  } else {
    MBS_CALL(mbsp_agreeErrEnd(sp->comm));
  }
  w->stat.method = MBS_SOLVER_SCHUR;
  // iterations: only those of an iterative interface solve (J-CG); the direct merge's rounds
  // (ceil(log2 P) or pipeline passes) are no iterations, so a direct schur reports 0 at every
  // rank count, as direct and aba do
  int iters = sp->iface == MBSP_IFACE_JCG && sp->size > 1 ? sp->rounds : 0;
  w->stat.iterations = iters;
  w->stat.iface_rounds = sp->iface != MBSP_IFACE_JCG && sp->size > 1 ? sp->rounds : 0;
  w->stat.reason = sp->reason;
  w->stat.residual = sp->residual;
  w->stat.evals++;
  w->stat.total_iterations += iters;
  w->stat.floored += sp->nfloor;
  if (sp->reason < 0) w->stat.nonconverged++;
  if (m->opt.warm_start != MBS_WARM_NONE && sp->iface == MBSP_IFACE_JCG && sp->b1 > sp->b0 &&
      !w->homog) {
    int l0 = m->body_lamadr[sp->b0];
    int l1 = m->body_lamadr[sp->b1 - 1] + m->body_lamnum[sp->b1 - 1];
    mbs_cfsPushHistory(m, st, st->time, l0, l1, w->lam);
  }
  return MBS_OK;
}

mbsErr mbsp_schurLocal(mbspSchur *sp, mbsState *st, mbsWork *w, double *C, double *g,
                       const int *load, int nload, const int *first, int lim) {
  const mbsModel *m = sp->m;
  const mbsSchur *v = sp->seg;
  MBS_CHECK(sp->nglob >= 0, MBS_ERR_INTERNAL, "schur: no local solves without loops");
  mbsp_schurGhostStages(sp, st, w); // their states arrived with the last full solve
  MBS_TIC(w->timer, MBS_TIMER_FACTOR);
  mbsErr e = MBS_OK; // the bias passes along the loaded paths alone where they can be
  if (!mbs_schurRankFactorPath(m, w, sp->rk, load, nload)) e = mbs_schurRankFactor(m, w, sp->rk);
  MBS_TOC(w->timer, MBS_TIMER_FACTOR);
  MBS_CALL(e);
  // the rank-level components' systems over [upper port; lower ports] into the global interface
  int n = sp->nglob;
  for (int c = 0; c < v->ncomp; c++) {
    const mbsSchurComp *cp = v->comp + c;
    int *map = sp->gmap;
    for (int i = 0; i < cp->nup; i++) map[i] = sp->goff[cp->root] + i;
    for (int q = cp->p0; q < cp->p0 + cp->np; q++) {
      int l = v->port_body[q], o = cp->nup + v->port_cadr[q] - cp->c0;
      for (int i = 0; i < m->body_lamnum[l]; i++) map[o + i] = sp->goff[l] + i;
    }
    MBS_FLOPS(mbs_flopSchurAdd(cp->n));
    for (int i = 0; i < cp->n; i++) {
      g[map[i]] += cp->g[i];
      if (C)
        for (int j = 0; j < cp->n; j++) C[(size_t)n * map[i] + map[j]] += cp->C[cp->n * i + j];
    }
  }
  // the bodies' accelerations with every interface lambda zero (those the caller needs)
  memset(sp->lam_up, 0, sizeof(double) * (size_t)sp->comp_uadr[v->ncomp]);
  memset(sp->lam_low, 0, sizeof(double) * (size_t)v->ncol);
  MBS_TIC(w->timer, MBS_TIMER_ACCEL);
  mbs_schurRankBack(m, w, sp->rk, sp->lam_up, sp->lam_low, first, lim);
  MBS_TOC(w->timer, MBS_TIMER_ACCEL);
  return MBS_OK;
}

int mbsp_schurInterface(const mbspSchur *sp) {
  return sp->nglob;
}

int mbsp_schurSegments(const mbspSchur *sp) {
  return sp->rk->nseg;
}
int mbsp_schurChain(const mbspSchur *sp) {
  return sp->chain;
}
long mbsp_schurMessages(const mbspSchur *sp) {
  return sp->messages;
}

// ---------------------------------------------------------------- the solver table entry

typedef struct {
  mbsSolverOpt opt;
  mbspSchur *sp;
} mbspSchurSolver;

static mbsErr mbsp_schurSolverCreate(const mbsModel *m, const mbsCfs *c, const mbsSolverOpt *opt,
                                     void *ctx, void **self) {
  (void)c;
  MBS_CHECK(ctx, MBS_ERR_UNSUPPORTED, "solver.method = schur runs on the distributed engine only");
  mbspEngine *eng = ctx;
  mbspSchurSolver *sv = calloc(1, sizeof *sv);
  // mbsp_schurCreate is collective: a failed allocation here must not skip it on one rank
  mbsErr ea = mbsp_agreeErr(mbsp_engineComm(eng),
                            sv ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur)"));
  if (ea) {
    free(sv);
    return ea;
  }
  sv->opt = *opt;
  mbspDecompInfo di;
  mbsp_engineDecomp(eng, &di);
  mbsErr e = mbsp_schurCreate(mbsp_engineComm(eng), m, mbsp_engineStarts(eng), di.b0, di.b1,
                              opt->iface, mbs_maxThreads(), &sv->sp);
  if (e) {
    free(sv);
    return e;
  }
  *self = sv;
  return MBS_OK;
}

static mbsErr mbsp_schurSolverForward(void *self, const mbsModel *m, mbsState *s, mbsWork *w,
                                      mbsCfs *c, const mbsCfsComm *comm) {
  (void)m, (void)c, (void)comm; // the exact solver sends its own messages
  mbspSchurSolver *sv = self;
  return mbsp_schurSolve(sv->sp, s, w);
}

static int mbsp_schurSolverPre(void *self, const mbsModel *m, mbsState *s, mbsWork *w, int what) {
  (void)m;
  return mbsp_schurPre(((mbspSchurSolver *)self)->sp, s, w, what);
}

static mbsErr mbsp_schurSolverBegin(void *self, const mbsModel *m, const mbsState *s) {
  (void)m;
  return mbsp_schurBegin(((mbspSchurSolver *)self)->sp, s);
}

static void mbsp_schurSolverDestroy(void **self) {
  mbspSchurSolver *sv = *self;
  if (!sv) return;
  mbsp_schurDestroy(&sv->sp);
  free(sv);
  *self = NULL;
}

static int mbsp_schurLoopPorts(const void *self) {
  const mbspSchurSolver *sv = self;
  return mbsp_schurInterface(sv->sp);
}

static mbsErr mbsp_schurLoopLocal(void *self, mbsState *s, mbsWork *w, mbsReal *C, mbsReal *g,
                                  const int *load, int nload, const int *first, int lim) {
  mbspSchurSolver *sv = self;
  return mbsp_schurLocal(sv->sp, s, w, C, g, load, nload, first, lim);
}

static int mbsp_schurSegmentsHook(const void *self, int *scan) {
  const mbspSchurSolver *sv = self;
  *scan = mbsp_schurChain(sv->sp);
  return mbsp_schurSegments(sv->sp);
}

const mbsSolverType mbsp_solverSchur = {
    .name = "schur",
    .method = MBS_SOLVER_SCHUR,
    .distributed = 1,
    .iterative = 0,
    .cpa_graph = MBS_CPA_GRAPH_SCHUR,
    .cpa_build = mbs_cpaSchurGraph,
    .cpa_loops = mbs_cpaSchurLoops,
    .floored = 1,
    .local_model = 1,
    .engine_only = 1,
    .separators = 1,
    .create = mbsp_schurSolverCreate,
    .forward = mbsp_schurSolverForward,
    .begin = mbsp_schurSolverBegin,
    .destroy = mbsp_schurSolverDestroy,
    .loop_ports = mbsp_schurLoopPorts,
    .loop_local = mbsp_schurLoopLocal,
    .segments_of = mbsp_schurSegmentsHook,
    .prefactor = mbsp_schurSolverPre,
};

int mbsp_schurSegmentsOf(const mbsCfs *c, int *scan) {
  const mbspSchurSolver *sv = mbs_cfsSolverSelf(c, &mbsp_solverSchur);
  *scan = sv ? mbsp_schurChain(sv->sp) : 0;
  return sv ? mbsp_schurSegments(sv->sp) : 0;
}

mbspSchur *mbsp_schurOf(const mbsCfs *c) {
  const mbspSchurSolver *sv = mbs_cfsSolverSelf(c, &mbsp_solverSchur);
  return sv ? sv->sp : NULL;
}
