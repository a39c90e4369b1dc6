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
///    cut joint and eliminate it), so a recursive-doubling scan gives every rank the merge of all
///    ranks above it and of all ranks below it in ceil(log2 P) rounds of nearest-power-of-two
///    point-to-point messages (prefix and suffix in the same rounds, 4 messages of 158 doubles
///    per rank and round); each rank then solves its own 2-port system;
///  - any other decomposition (trees): a leaf-to-root pass over the component tree (each
///    component adds its children's reduced systems to its lower ports, eliminates them and sends
///    the system left on its upper port to the parent's rank), then a root-to-leaf pass with the
///    cut-joint lambdas. Its depth is the height of the rank tree (about log2 P for the subtree
///    decompositions of balanced trees). Messages: one per cut joint and pass.
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

#define MBSP_TAG_SCAN_DOWN 41
#define MBSP_TAG_SCAN_UP   42
// point-to-point tags: MBSP_TAG_BASE + 8 * (index of the cut joint among those between the two
// ranks, by child body) + phase
#define MBSP_TAG_BASE 100
enum { MBSP_PH_SYS = 0, MBSP_PH_LAM, MBSP_PH_ACC, MBSP_PH_JCG, MBSP_PH_STATE };
#define MBSP_TAG(idx, ph) (MBSP_TAG_BASE + 8 * (idx) + (ph))

struct mbspSchur {
  mbspComm *comm;
  const mbsModel *m;
  int rank, size, b0, b1, iface, chain, nthread;
  int *start;       // (size + 1)
  mbsSchurRank *rk; // the rank's segments (one per thread) and their join
  mbsSchur *seg;    // the rank-level view: components and ports to other ranks
  // partners: per component (upper port) the parent's rank and tag; per lower port the child's
  int *comp_rank, *comp_tag, *port_rank, *port_tag;
  int *ghost; // remote children of owned bodies (their position and velocity stages), in order
  int nghost;
  int *ghost_rank, *ghost_tag; // owner of each remote child, tag of its acceleration message
  int *comp_erank, *comp_etag; // per component with a remote parent: the parent's rank and tag
  double *rbuf;                // received child systems, per lower port l*l + l, at port_radr
  int *port_radr;              // (nport + 1)
  int *port_comp;              // (nport) the component of each lower port
  int *comp_uadr;              // (ncomp + 1) each component's upper-port lambdas in lam_up
  int *comp_pend, *up_comp;    // (ncomp) tree passes: ports still awaited; receive -> component
  double *sbuf;                // reduced systems to send, per component nup^2 + nup
  int *comp_sadr;              // (ncomp + 1)
  double *S;                   // scratch nup^2 + nup
  double *lam_up, *lam_low, *acc_s, *acc_r;
  double *st_s, *st_r; // joint states (q, qd: 13 reals) to the parents' ranks / of remote children
  mbspMsg *msg;
  // scan state
  mbsSchurPair x, acc, excl, sacc, sexcl, tmp;
  double pbuf[4][MBS_SCHUR_PAIR_DOUBLES];
  // J-CG on the interface (solver.interface = jcg): owned cut joints are the upper ports
  double *jx, *jr, *jz, *jp, *jq, *jt, *jd, *jg; // (nup) owned vectors, diagonal factors
  double *lp, *lq;                               // (ncol) lower ports: copies of p, partial A p
  double *dsend;                                 // per lower port l*l + l: diagonal block and g
  int *jd_adr;                                   // (ncomp + 1) offsets of the diagonal blocks
  long messages;                                 // point-to-point messages sent (statistics)
  int nfloor;      // port-system pivots raised to the rounding floor in the last solve (this rank)
  int posted;      // mbsp_schurBegin posted the state messages of the next solve
  mbsErr post_err; // ... with this outcome
  int *goff;       // loop models (full models): first global interface unknown of each cut
                   // joint (by child body), -1 elsewhere (mbsp_schurLocal)
  int nglob;       // interface unknowns over all ranks; -1: no local solves (local models)
  int *gmap;       // scratch: a component's system to the global interface unknowns
  int rounds;      // scan rounds, pipeline passes or J-CG iterations of the last solve
  int reason;      // mbsReason of the last solve
  double residual;
};

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
  mbs_schurRankDestroy(&sp->rk);
  mbsp_msgDestroy(&sp->msg);
  void *arrs[] = {sp->start,      sp->comp_rank, sp->comp_tag,   sp->port_rank, sp->port_tag,
                  sp->ghost,      sp->rbuf,      sp->port_radr,  sp->sbuf,      sp->comp_sadr,
                  sp->S,          sp->lam_up,    sp->lam_low,    sp->acc_s,     sp->acc_r,
                  sp->ghost_rank, sp->ghost_tag, sp->comp_erank, sp->comp_etag, sp->jx,
                  sp->jr,         sp->jz,        sp->jp,         sp->jq,        sp->jd,
                  sp->jg,         sp->lp,        sp->lq,         sp->dsend,     sp->jd_adr,
                  sp->jt,         sp->st_s,      sp->st_r,       sp->port_comp, sp->comp_uadr,
                  sp->comp_pend,  sp->up_comp,   sp->goff,       sp->gmap};
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
    sp->comp_sadr[c + 1] = sp->comp_sadr[c] + cp->nup * cp->nup + cp->nup;
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
    sp->port_radr[q + 1] = sp->port_radr[q] + nl * nl + nl;
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
  MBS_ALLOC(sp->S, maxup * maxup + maxup);
  MBS_ALLOC(sp->lam_up, nup);
  MBS_ALLOC(sp->lam_low, s->ncol);
  MBS_ALLOC(sp->acc_s, 6 * np);
  MBS_ALLOC(sp->acc_r, 6 * nc);
  MBS_CALL(mbsp_msgCreate(sp->comm, 2 * (np + nc) + 8, &sp->msg));
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
  // the interface over all ranks, numbered by child body (loop models: mbsp_schurLocal). Loop
  // models are full models: every rank sees every joint
  sp->nglob = -1;
  if (m->nloop && !m->local) {
    MBS_ALLOC(sp->goff, m->nbody + 1);
    int maxn = 1;
    sp->nglob = 0;
    for (int b = 0; b < m->nbody; b++) {
      int p = m->body_parent[b];
      sp->goff[b] = -1;
      if (p < 0 || mbsp_schurOwner(sp, p) == mbsp_schurOwner(sp, b)) continue;
      sp->goff[b] = sp->nglob;
      sp->nglob += m->body_lamnum[b];
    }
    for (int c = 0; c < nc; c++) maxn = s->comp[c].n > maxn ? s->comp[c].n : maxn;
    MBS_ALLOC(sp->gmap, maxn);
  }
  // chain decomposition: one component per rank, ports only to the neighbouring ranks
  int chain = nc == 1 && np <= 1;
  if (chain && s->comp[0].up && sp->comp_rank[0] != sp->rank - 1) chain = 0;
  if (chain && np == 1 && sp->port_rank[0] != sp->rank + 1) chain = 0;
  const char *mode = getenv("MBSPAR_SCHUR_MERGE"); // "tree": no scan (tests, measurements)
  sp->chain = chain && !(mode && strcmp(mode, "tree") == 0);
  return MBS_OK;
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
  }
  e = mbsp_agreeErr(comm, e);
  if (!e) { // the scan needs every rank to be a chain element
    double ok = sp->chain;
    e = mbsp_allreduceMin(comm, &ok, 1);
    sp->chain = ok > 0;
  }
  if (e) {
    mbsp_schurDestroy(&sp);
    return e;
  }
  *out = sp;
  return MBS_OK;
}

// ---------------------------------------------------------------- chain scan

static mbsErr mbsp_schurScan(mbspSchur *sp, mbsWork *w) {
  mbsSchur *s = sp->seg;
  const mbsSchurComp *cp = s->comp;
  int r = sp->rank, P = sp->size, n = cp->n;
  sp->x.na = cp->nup, sp->x.nb = cp->nc;
  memcpy(sp->x.C, cp->C, sizeof(double) * (size_t)n * n);
  memcpy(sp->x.g, cp->g, sizeof(double) * (size_t)n);
  sp->acc = sp->x, sp->sacc = sp->x;
  sp->excl.na = sp->sexcl.na = -1;
  sp->rounds = 0;
  int ok = 1, nfloor = 0;
  for (int d = 1; d < P; d *= 2) {
    int lo = r - d >= 0 ? r - d : -1, hi = r + d < P ? r + d : -1;
    mbs_schurPairPack(&sp->acc, sp->pbuf[0]);  // to r + d
    mbs_schurPairPack(&sp->sacc, sp->pbuf[1]); // to r - d
    MBS_TIC(w->timer, MBS_TIMER_IFACE);
    if (lo >= 0) {
      MBS_CALL(mbsp_msgIrecv(sp->msg, sp->pbuf[2], MBS_SCHUR_PAIR_DOUBLES, lo, MBSP_TAG_SCAN_DOWN,
                             NULL));
      MBS_CALL(
          mbsp_msgIsend(sp->msg, sp->pbuf[1], MBS_SCHUR_PAIR_DOUBLES, lo, MBSP_TAG_SCAN_UP, NULL));
      sp->messages++;
    }
    if (hi >= 0) {
      MBS_CALL(
          mbsp_msgIrecv(sp->msg, sp->pbuf[3], MBS_SCHUR_PAIR_DOUBLES, hi, MBSP_TAG_SCAN_UP, NULL));
      MBS_CALL(mbsp_msgIsend(sp->msg, sp->pbuf[0], MBS_SCHUR_PAIR_DOUBLES, hi, MBSP_TAG_SCAN_DOWN,
                             NULL));
      sp->messages++;
    }
    MBS_CALL(mbsp_msgWaitAll(sp->msg));
    MBS_TOC(w->timer, MBS_TIMER_IFACE);
    if (lo >= 0) { // prefix: the ranks just above this range join in front
      mbs_schurPairUnpack(sp->pbuf[2], &sp->tmp);
      mbsSchurPair t;
      ok &= mbs_schurPairMerge(&sp->tmp, &sp->excl, &t, &nfloor);
      sp->excl = t;
      ok &= mbs_schurPairMerge(&sp->tmp, &sp->acc, &t, &nfloor);
      sp->acc = t;
    }
    if (hi >= 0) { // suffix: the ranks just below join behind
      mbs_schurPairUnpack(sp->pbuf[3], &sp->tmp);
      mbsSchurPair t;
      ok &= mbs_schurPairMerge(&sp->sexcl, &sp->tmp, &t, &nfloor);
      sp->sexcl = t;
      ok &= mbs_schurPairMerge(&sp->sacc, &sp->tmp, &t, &nfloor);
      sp->sacc = t;
    }
    // a failed merge does not leave the scan: the other ranks wait for this one's messages
    sp->rounds++;
  }
  // own system with everything above added on the upper port and everything below on the lower
  double M[MBS_SCHUR_PAIR_MAX * MBS_SCHUR_PAIR_MAX], gm[MBS_SCHUR_PAIR_MAX], x[MBS_SCHUR_PAIR_MAX];
  memcpy(M, cp->C, sizeof(double) * (size_t)n * n);
  memcpy(gm, cp->g, sizeof(double) * (size_t)n);
  if (sp->excl.na >= 0) { // over (empty | upper port)
    int k = sp->excl.nb;
    MBS_FLOPS(mbs_flopSchurAdd(k));
    for (int i = 0; i < k; i++) {
      gm[i] += sp->excl.g[i];
      for (int j = 0; j < k; j++) M[n * i + j] += sp->excl.C[k * i + j];
    }
  }
  if (sp->sexcl.na >= 0) { // over (lower port | empty)
    int k = sp->sexcl.na, o = cp->nup;
    MBS_FLOPS(mbs_flopSchurAdd(k));
    for (int i = 0; i < k; i++) {
      gm[o + i] += sp->sexcl.g[i];
      for (int j = 0; j < k; j++) M[n * (o + i) + o + j] += sp->sexcl.C[k * i + j];
    }
  }
  sp->nfloor += nfloor;
  if (!ok) return mbs_errSet(MBS_ERR_NUMERIC, "schur: a cut-joint block is not finite");
  if (n > 0) {
    double dummy;
    if (!mbs_schurReduce(0, n, M, gm, &dummy, &dummy, &sp->nfloor))
      return mbs_errSet(MBS_ERR_NUMERIC, "schur: the cut-joint system is not finite");
    mbs_schurExpand(0, n, M, gm, NULL, x);
  }
  memcpy(sp->lam_up, x, sizeof(double) * (size_t)cp->nup);
  memcpy(sp->lam_low, x + cp->nup, sizeof(double) * (size_t)cp->nc);
  return MBS_OK;
}

// ---------------------------------------------------------------- component-tree passes

// one component's reduction in the leaf-to-root pass (its children's systems are in): add them
// to its lower ports, eliminate, send the system left on its upper port to the parent's rank
static mbsErr mbsp_schurTreeUp(mbspSchur *sp, mbsWork *w, int c, int *ok) {
  const mbsModel *m = sp->m;
  mbsSchur *s = sp->seg;
  mbsSchurComp *cp = s->comp + c;
  int n = cp->n, nup = cp->nup;
  for (int q = cp->p0; q < cp->p0 + cp->np; q++) {
    int nl = m->body_lamnum[s->port_body[q]], o = nup + s->port_cadr[q] - cp->c0;
    const double *rb = sp->rbuf + sp->port_radr[q];
    MBS_FLOPS(mbs_flopSchurAdd(nl));
    for (int i = 0; i < nl; i++) {
      cp->g[o + i] += rb[nl * nl + i];
      for (int j = 0; j < nl; j++) cp->C[n * (o + i) + o + j] += rb[nl * i + j];
    }
  }
  double *S = sp->S;
  *ok &= mbs_schurReduce(nup, cp->nc, cp->C, cp->g, S, S + nup * nup, &sp->nfloor);
  if (cp->up) {
    double *sb = sp->sbuf + sp->comp_sadr[c];
    memcpy(sb, S, sizeof(double) * (size_t)(nup * nup + nup));
    MBS_TIC(w->timer, MBS_TIMER_IFACE);
    mbsErr e = mbsp_msgIsend(sp->msg, sb, nup * nup + nup, sp->comp_rank[c], sp->comp_tag[c], NULL);
    MBS_TOC(w->timer, MBS_TIMER_IFACE);
    MBS_CALL(e);
    sp->messages++;
  }
  return MBS_OK;
}

// one component's expansion in the root-to-leaf pass (its upper port's lambdas are in): its
// lower ports' lambdas, sent to the children's ranks
static mbsErr mbsp_schurTreeDown(mbspSchur *sp, mbsWork *w, int c) {
  const mbsModel *m = sp->m;
  mbsSchur *s = sp->seg;
  mbsSchurComp *cp = s->comp + c;
  mbs_schurExpand(cp->nup, cp->nc, cp->C, cp->g, sp->lam_up + sp->comp_uadr[c],
                  sp->lam_low + cp->c0);
  MBS_TIC(w->timer, MBS_TIMER_IFACE);
  mbsErr e = MBS_OK;
  for (int q = cp->p0; q < cp->p0 + cp->np && !e; q++) {
    e = mbsp_msgIsend(sp->msg, sp->lam_low + s->port_cadr[q], m->body_lamnum[s->port_body[q]],
                      sp->port_rank[q], sp->port_tag[q] + 1, NULL);
    sp->messages++;
  }
  MBS_TOC(w->timer, MBS_TIMER_IFACE);
  return e;
}

// Both passes over the component tree run as a data flow: a component is reduced (expanded) as
// soon as its own inputs are in, whatever the order of the rank's other components. (Taking them
// in a fixed order chains the ranks of a depth-first partition: each rank's first component hangs
// from the previous rank's last one, so a rank that waits for its later components before
// sending its first makes the pass ~P/2 messages deep instead of the component tree's height.)
static mbsErr mbsp_schurTree(mbspSchur *sp, mbsWork *w) {
  const mbsModel *m = sp->m;
  mbsSchur *s = sp->seg;
  int *pend = sp->comp_pend;
  // leaf-to-root: the children's systems on every lower port (receive q is operation q)
  MBS_TIC(w->timer, MBS_TIMER_IFACE);
  for (int q = 0; q < s->nport; q++) {
    int nl = m->body_lamnum[s->port_body[q]];
    MBS_CALL(mbsp_msgIrecv(sp->msg, sp->rbuf + sp->port_radr[q], nl * nl + nl, sp->port_rank[q],
                           sp->port_tag[q], NULL));
  }
  MBS_TOC(w->timer, MBS_TIMER_IFACE);
  int ok = 1;
  for (int c = s->ncomp - 1; c >= 0; c--) {
    pend[c] = s->comp[c].np;
    if (pend[c] == 0) MBS_CALL(mbsp_schurTreeUp(sp, w, c, &ok));
  }
  for (;;) {
    int q = -1;
    MBS_TIC(w->timer, MBS_TIMER_IFACE);
    mbsErr e = mbsp_msgWaitAny(sp->msg, 0, s->nport, &q);
    MBS_TOC(w->timer, MBS_TIMER_IFACE);
    MBS_CALL(e);
    if (q < 0) break;
    int c = sp->port_comp[q];
    if (--pend[c] == 0) MBS_CALL(mbsp_schurTreeUp(sp, w, c, &ok));
  }
  MBS_TIC(w->timer, MBS_TIMER_IFACE);
  MBS_CALL(mbsp_msgWaitAll(sp->msg));
  MBS_TOC(w->timer, MBS_TIMER_IFACE);
  // a failed reduction does not leave the passes: the ranks below wait for this one's lambdas
  // (then computed from a broken factor); the error is agreed on after the passes
  // root-to-leaf: the upper ports' lambdas (receive k is the k-th component with a remote
  // parent), then the lower ports' for the children
  MBS_TIC(w->timer, MBS_TIMER_IFACE);
  int nrecv = 0;
  for (int c = 0; c < s->ncomp; c++)
    if (s->comp[c].up) {
      sp->up_comp[nrecv++] = c;
      MBS_CALL(mbsp_msgIrecv(sp->msg, sp->lam_up + sp->comp_uadr[c], s->comp[c].nup,
                             sp->comp_rank[c], sp->comp_tag[c] + MBSP_PH_LAM, NULL));
    }
  MBS_TOC(w->timer, MBS_TIMER_IFACE);
  for (int c = 0; c < s->ncomp; c++)
    if (!s->comp[c].up) MBS_CALL(mbsp_schurTreeDown(sp, w, c));
  for (;;) {
    int k = -1;
    MBS_TIC(w->timer, MBS_TIMER_IFACE);
    mbsErr e = mbsp_msgWaitAny(sp->msg, 0, nrecv, &k);
    MBS_TOC(w->timer, MBS_TIMER_IFACE);
    MBS_CALL(e);
    if (k < 0) break;
    MBS_CALL(mbsp_schurTreeDown(sp, w, sp->up_comp[k]));
  }
  MBS_TIC(w->timer, MBS_TIMER_IFACE);
  MBS_CALL(mbsp_msgWaitAll(sp->msg));
  MBS_TOC(w->timer, MBS_TIMER_IFACE);
  sp->rounds = 2;
  if (!ok) return mbs_errSet(MBS_ERR_NUMERIC, "schur: a cut-joint block is not finite");
  return MBS_OK;
}

// ---------------------------------------------------------------- J-CG on the interface

// owners (child side, upper port) send \p up (per component nup values) to the parent side, which
// receives them into \p low (port columns); or the reverse with \p reverse (partial sums back to
// the owners, added to \p up). One message per cut joint.
static mbsErr mbsp_schurExchange(mbspSchur *sp, double *up, double *low, int reverse, mbsWork *w) {
  const mbsModel *m = sp->m;
  mbsSchur *s = sp->seg;
  int nc = s->ncomp;
  MBS_TIC(w->timer, MBS_TIMER_IFACE);
  double *tmp = sp->jt; // the owners' incoming partial sums (reverse)
  for (int c = 0, at = 0; c < nc; c++) {
    int k = s->comp[c].nup;
    if (s->comp[c].up) {
      if (!reverse)
        MBS_CALL(mbsp_msgIsend(sp->msg, up + at, k, sp->comp_rank[c], sp->comp_tag[c] + MBSP_PH_JCG,
                               NULL));
      else
        MBS_CALL(mbsp_msgIrecv(sp->msg, tmp + at, k, sp->comp_rank[c],
                               sp->comp_tag[c] + MBSP_PH_JCG, NULL));
    }
    at += k;
  }
  for (int q = 0; q < s->nport; q++) {
    int k = m->body_lamnum[s->port_body[q]];
    double *b = low + s->port_cadr[q];
    if (!reverse)
      MBS_CALL(mbsp_msgIrecv(sp->msg, b, k, sp->port_rank[q], sp->port_tag[q] + MBSP_PH_JCG, NULL));
    else
      MBS_CALL(mbsp_msgIsend(sp->msg, b, k, sp->port_rank[q], sp->port_tag[q] + MBSP_PH_JCG, NULL));
  }
  sp->messages += reverse ? s->nport : nc;
  MBS_CALL(mbsp_msgWaitAll(sp->msg));
  MBS_TOC(w->timer, MBS_TIMER_IFACE);
  if (reverse)
    for (int c = 0, at = 0; c < nc; c++) {
      for (int i = 0; i < s->comp[c].nup; i++) up[at + i] += tmp[at + i];
      at += s->comp[c].nup;
    }
  return MBS_OK;
}

// q = sum of the components' systems applied to (xu; xl), owned part in qu, partial in ql
static void mbsp_schurLocalApply(mbspSchur *sp, const double *xu, const double *xl, double *qu,
                                 double *ql) {
  mbsSchur *s = sp->seg;
  for (int c = 0, at = 0; c < s->ncomp; c++) {
    const mbsSchurComp *cp = s->comp + c;
    int n = cp->n, nup = cp->nup;
    for (int i = 0; i < n; i++) {
      double v = 0;
      for (int j = 0; j < nup; j++) v += cp->C[n * i + j] * xu[at + j];
      for (int j = nup; j < n; j++) v += cp->C[n * i + j] * xl[cp->c0 + j - nup];
      if (i < nup)
        qu[at + i] = v;
      else
        ql[cp->c0 + i - nup] = v;
    }
    at += nup;
  }
}

// z = D^{-1} r on the owned cut joints
static void mbsp_schurPrecond(mbspSchur *sp, const double *r, double *z) {
  mbsSchur *s = sp->seg;
  for (int c = 0, at = 0; c < s->ncomp; c++) {
    int k = s->comp[c].nup;
    for (int i = 0; i < k; i++) z[at + i] = r[at + i];
    if (k) mbsu_cholSolve(sp->jd + sp->jd_adr[c], k, z + at);
    at += k;
  }
}

static double mbsp_schurDot(const mbspSchur *sp, const double *a, const double *b) {
  double v = 0;
  int n = 0;
  for (int c = 0; c < sp->seg->ncomp; c++) n += sp->seg->comp[c].nup;
  for (int i = 0; i < n; i++) v += a[i] * b[i];
  return v;
}

static mbsErr mbsp_schurJcg(mbspSchur *sp, mbsState *st, mbsWork *w) {
  const mbsModel *m = sp->m;
  mbsSchur *s = sp->seg;
  int nc = s->ncomp, nown = 0;
  for (int c = 0; c < nc; c++) nown += s->comp[c].nup;
  // the parent side's diagonal blocks and right sides go to the owners
  for (int q = 0; q < s->nport; q++) {
    int nl = m->body_lamnum[s->port_body[q]], o = s->port_cadr[q];
    const mbsSchurComp *cp = s->comp;
    while (!(o >= cp->c0 && o < cp->c0 + cp->nc)) cp++;
    int n = cp->n, i0 = cp->nup + o - cp->c0;
    double *d = sp->dsend + sp->port_radr[q];
    for (int i = 0; i < nl; i++) {
      for (int j = 0; j < nl; j++) d[nl * i + j] = cp->C[n * (i0 + i) + i0 + j];
      d[nl * nl + i] = cp->g[i0 + i];
    }
  }
  MBS_TIC(w->timer, MBS_TIMER_IFACE);
  for (int c = 0; c < nc; c++)
    if (s->comp[c].up) {
      int k = s->comp[c].nup;
      MBS_CALL(mbsp_msgIrecv(sp->msg, sp->sbuf + sp->comp_sadr[c], k * k + k, sp->comp_rank[c],
                             sp->comp_tag[c] + MBSP_PH_LAM, NULL));
    }
  for (int q = 0; q < s->nport; q++) {
    int nl = m->body_lamnum[s->port_body[q]];
    MBS_CALL(mbsp_msgIsend(sp->msg, sp->dsend + sp->port_radr[q], nl * nl + nl, sp->port_rank[q],
                           sp->port_tag[q] + MBSP_PH_LAM, NULL));
  }
  MBS_CALL(mbsp_msgWaitAll(sp->msg));
  MBS_TOC(w->timer, MBS_TIMER_IFACE);
  int okd = 1;
  for (int c = 0, at = 0; c < nc; c++) {
    const mbsSchurComp *cp = s->comp + c;
    int k = cp->nup, n = cp->n;
    if (!k) continue;
    const double *rb = sp->sbuf + sp->comp_sadr[c];
    double *D = sp->jd + sp->jd_adr[c];
    for (int i = 0; i < k; i++) {
      for (int j = 0; j < k; j++) D[k * i + j] = cp->C[n * i + j] + rb[k * i + j];
      sp->jg[at + i] = cp->g[i] + rb[k * k + i];
    }
    okd &= mbsu_cholFactor(D, k);
    at += k;
  }
  if (!okd) return mbs_errSet(MBS_ERR_NUMERIC, "schur: a cut-joint block is not positive definite");
  // warm start: the owned cut joints' lambdas extrapolated from the history
  for (int c = 0, at = 0; c < nc; c++) {
    int k = s->comp[c].nup;
    for (int i = 0; i < k; i++) sp->jx[at + i] = 0;
    if (k && m->opt.warm_start != MBS_WARM_NONE && st->nhist[st->stage] > 0 && !w->homog) {
      int l0 = m->body_lamadr[s->comp[c].root];
      mbs_cfsWarmStart(m, st, m->opt.warm_start, st->time, l0, l0 + k, w->lam);
      for (int i = 0; i < k; i++) sp->jx[at + i] = w->lam[l0 + i];
    }
    at += k;
  }
  // r = g - K x, z = D^{-1} r
  MBS_CALL(mbsp_schurExchange(sp, sp->jx, sp->lp, 0, w));
  mbsp_schurLocalApply(sp, sp->jx, sp->lp, sp->jq, sp->lq);
  MBS_CALL(mbsp_schurExchange(sp, sp->jq, sp->lq, 1, w));
  for (int i = 0; i < nown; i++) sp->jr[i] = sp->jg[i] - sp->jq[i];
  mbsp_schurPrecond(sp, sp->jr, sp->jp);
  mbsp_schurPrecond(sp, sp->jg, sp->jz);
  double red[2] = {mbsp_schurDot(sp, sp->jr, sp->jp), mbsp_schurDot(sp, sp->jg, sp->jz)};
  MBS_TIC(w->timer, MBS_TIMER_ALLREDUCE);
  MBS_CALL(mbsp_allreduceSum(sp->comm, red, 2));
  MBS_TOC(w->timer, MBS_TIMER_ALLREDUCE);
  double rho = red[0], gnorm = sqrt(red[1] > 0 ? red[1] : 1), tol = m->opt.tol;
  int it = 0, reason = MBS_REASON_DIVERGED_MAXIT;
  double res = sqrt(rho > 0 ? rho : 0) / gnorm;
  if (res <= tol) reason = MBS_REASON_CONVERGED;
  while (reason != MBS_REASON_CONVERGED && it < m->opt.max_iter) {
    // q = K p
    MBS_CALL(mbsp_schurExchange(sp, sp->jp, sp->lp, 0, w));
    mbsp_schurLocalApply(sp, sp->jp, sp->lp, sp->jq, sp->lq);
    MBS_CALL(mbsp_schurExchange(sp, sp->jq, sp->lq, 1, w));
    double pq = mbsp_schurDot(sp, sp->jp, sp->jq);
    MBS_TIC(w->timer, MBS_TIMER_ALLREDUCE);
    MBS_CALL(mbsp_allreduceSum(sp->comm, &pq, 1));
    MBS_TOC(w->timer, MBS_TIMER_ALLREDUCE);
    if (!(pq > 0)) {
      reason = MBS_REASON_DIVERGED_BREAKDOWN;
      break;
    }
    double alpha = rho / pq;
    for (int i = 0; i < nown; i++) sp->jx[i] += alpha * sp->jp[i], sp->jr[i] -= alpha * sp->jq[i];
    mbsp_schurPrecond(sp, sp->jr, sp->jz);
    double rz = mbsp_schurDot(sp, sp->jr, sp->jz);
    MBS_TIC(w->timer, MBS_TIMER_ALLREDUCE);
    MBS_CALL(mbsp_allreduceSum(sp->comm, &rz, 1));
    MBS_TOC(w->timer, MBS_TIMER_ALLREDUCE);
    it++;
    res = sqrt(rz > 0 ? rz : 0) / gnorm;
    if (!isfinite(res)) {
      reason = MBS_REASON_DIVERGED_NAN;
      break;
    }
    if (res <= tol) reason = MBS_REASON_CONVERGED;
    double beta = rz / rho;
    rho = rz;
    for (int i = 0; i < nown; i++) sp->jp[i] = sp->jz[i] + beta * sp->jp[i];
  }
  // both sides of every cut joint get its lambda
  memcpy(sp->lam_up, sp->jx, sizeof(double) * (size_t)nown);
  MBS_CALL(mbsp_schurExchange(sp, sp->jx, sp->lam_low, 0, w));
  sp->rounds = it;
  sp->reason = reason;
  sp->residual = res;
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

mbsErr mbsp_schurSolve(mbspSchur *sp, mbsState *st, mbsWork *w) {
  const mbsModel *m = sp->m;
  mbsSchur *s = sp->seg;
  // the remote children's joint states (each rank integrates only its own joints), then their
  // stages (their joints are the lower ports)
  if (sp->size > 1) {
    MBS_TIC(w->timer, MBS_TIMER_HALO);
    mbsErr e0 = sp->posted ? sp->post_err : mbsp_schurPost(sp, st);
    sp->posted = 0;
    if (!e0) e0 = mbsp_msgWaitAll(sp->msg);
    MBS_TOC(w->timer, MBS_TIMER_HALO);
    MBS_CALL(e0);
    for (int k = 0; k < sp->nghost; k++) {
      int g = sp->ghost[k], nq = m->body_qnum[g], nv = m->body_dofnum[g];
      memcpy(st->q + m->body_qadr[g], sp->st_r + 13 * k, sizeof(double) * (size_t)nq);
      memcpy(st->qd + m->body_dofadr[g], sp->st_r + 13 * k + nq, sizeof(double) * (size_t)nv);
    }
  }
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
    else
      e = mbsp_schurTree(sp, w);
  } else {
    // one rank: every component is rooted at the ground (or cut by a free joint): no ports
    sp->rounds = 0;
  }
  MBS_TOC(w->timer, MBS_TIMER_SOLVE);
  if (ef) e = mbs_errSet(ef, "%s", fmsg); // the factor's error (it caused whatever followed)
  MBS_CALL(mbsp_agreeErr(sp->comm, e));
  // back-substitution, then the parents' accelerations for the roots with remote parents
  MBS_TIC(w->timer, MBS_TIMER_ACCEL);
  mbs_schurRankBack(m, w, sp->rk, sp->lam_up, sp->lam_low, NULL, 0);
  MBS_TOC(w->timer, MBS_TIMER_ACCEL);
  if (sp->size > 1) {
    MBS_TIC(w->timer, MBS_TIMER_HALO);
    for (int c = 0; c < s->ncomp && !e; c++)
      if (sp->comp_erank[c] >= 0)
        e = mbsp_msgIrecv(sp->msg, sp->acc_r + 6 * c, 6, sp->comp_erank[c],
                          sp->comp_etag[c] + MBSP_PH_ACC, NULL);
    for (int k = 0; k < sp->nghost && !e; k++)
      e = mbsp_msgIsend(sp->msg, w->acc + 6 * m->body_parent[sp->ghost[k]], 6, sp->ghost_rank[k],
                        sp->ghost_tag[k] + MBSP_PH_ACC, NULL);
    if (!e) e = mbsp_msgWaitAll(sp->msg);
    MBS_TOC(w->timer, MBS_TIMER_HALO);
    MBS_CALL(e);
    for (int c = 0; c < s->ncomp; c++)
      if (sp->comp_erank[c] >= 0) mbs_schurQdd(m, w, s->comp[c].root, sp->acc_r + 6 * c);
  }
  w->stat.method = MBS_SOLVER_SCHUR;
  // iterations: only those of an iterative interface solve (J-CG); the direct merge's rounds
  // (ceil(log2 P) or pipeline passes) are no iterations, so a direct schur reports 0 at every
  // rank count, as direct and aba do
  int iters = sp->iface == MBSP_IFACE_JCG && sp->size > 1 ? sp->rounds : 0;
  w->stat.iterations = iters;
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
  MBS_CHECK(sp->nglob >= 0, MBS_ERR_INTERNAL, "schur: no local solves on a local model");
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
