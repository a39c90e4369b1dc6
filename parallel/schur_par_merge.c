/// \file schur_par_merge.c
/// The interface solves of the exact distributed solver (solver.method = "schur", see
/// parallel/schur_par.c and docs/formulation.md 4.4): the radix-k scan of chain
/// decompositions, the leaf-to-root and root-to-leaf passes over the component tree, and J-CG on
/// the cut-joint system (solver.interface = jcg). All MPI goes through parallel/comm.c.
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

// ---------------------------------------------------------------- chain scan

// Radix-k scan (k = sp->radix; k = 2 is recursive doubling): in round i (d = k^i) rank r holds
// acc, the merge of the ranks [r - d + 1, r], and sacc, that of [r, r + d - 1]; it sends acc to
// r + jd and sacc to r - jd (j = 1 .. k - 1, all posted together) and receives theirs, joins the
// received windows with each other in rank order, and merges the result in front of excl and acc
// (behind sexcl and sacc; acc and sacc not in the last round, where nothing reads them).
// ceil(log_k P) rounds (docs/formulation.md 4.4).
#define MBSP_PD MBS_SCHUR_PAIR_DOUBLES
// doubles of a packed pair that carry data (mbs_schurPairPack: na, nb, C, g); the rest of the
// MBSP_PD is zeros, not sent (a receive of MBSP_PD doubles takes a shorter message)
static int mbsp_pairLen(const mbsSchurPair *p) {
  int n = p->na < 0 ? 0 : p->na + p->nb;
  return 2 + n * n + n;
}
mbsErr mbsp_schurScan(mbspSchur *sp, mbsWork *w) {
  mbsSchur *s = sp->seg;
  const mbsSchurComp *cp = s->comp;
  int r = sp->rank, P = sp->size, n = cp->n, k = sp->radix;
  double *sdn = sp->pbuf, *sup = sdn + MBSP_PD; // packed acc (to r + jd), sacc (to r - jd)
  double *rlo = sup + MBSP_PD, *rhi = rlo + (size_t)MBSP_PD * (k - 1); // from r - jd, r + jd
  sp->x.na = cp->nup, sp->x.nb = cp->nc;
  memcpy(sp->x.C, cp->C, sizeof(double) * (size_t)n * n);
  memcpy(sp->x.g, cp->g, sizeof(double) * (size_t)n);
  sp->acc = sp->x, sp->sacc = sp->x;
  sp->excl.na = sp->sexcl.na = -1;
  sp->rounds = 0;
  int ok = 1, nfloor = 0;
  for (int d = 1; d < P; d *= k) {
    const int last = d >= (P + k - 1) / k; // no round follows: acc and sacc are not sent again
    int nlo = 0, nhi = 0;                  // partners below (r - jd) and above (r + jd)
    while (nlo + 1 < k && r - (nlo + 1) * d >= 0) nlo++;
    while (nhi + 1 < k && r + (nhi + 1) * d < P) nhi++;
    mbs_schurPairPack(&sp->acc, sdn);
    mbs_schurPairPack(&sp->sacc, sup);
    const int ldn = mbsp_pairLen(&sp->acc), lup = mbsp_pairLen(&sp->sacc);
    MBS_TIC(w->timer, MBS_TIMER_IFACE);
    for (int j = 1; j <= nlo; j++) {
      MBS_CALL(mbsp_msgIrecv(sp->msg, rlo + (size_t)MBSP_PD * (j - 1), MBSP_PD, r - j * d,
                             MBSP_TAG_SCAN_DOWN, NULL));
      MBS_CALL(mbsp_msgIsend(sp->msg, sup, lup, r - j * d, MBSP_TAG_SCAN_UP, NULL));
    }
    for (int j = 1; j <= nhi; j++) {
      MBS_CALL(mbsp_msgIrecv(sp->msg, rhi + (size_t)MBSP_PD * (j - 1), MBSP_PD, r + j * d,
                             MBSP_TAG_SCAN_UP, NULL));
      MBS_CALL(mbsp_msgIsend(sp->msg, sdn, ldn, r + j * d, MBSP_TAG_SCAN_DOWN, NULL));
    }
    sp->messages += nlo + nhi;
    MBS_CALL(mbsp_msgWaitAll(sp->msg));
    MBS_TOC(w->timer, MBS_TIMER_IFACE);
    mbsSchurPair t, u;
    if (nlo > 0) { // prefix: the ranks just above this range join in front
      mbs_schurPairUnpack(rlo, &sp->tmp);
      for (int j = 2; j <= nlo; j++) { // tmp <- (window of r - jd) . tmp
        mbs_schurPairUnpack(rlo + (size_t)MBSP_PD * (j - 1), &u);
        ok &= mbs_schurPairMerge(&u, &sp->tmp, &t, &nfloor);
        sp->tmp = t;
      }
      ok &= mbs_schurPairMerge(&sp->tmp, &sp->excl, &t, &nfloor);
      sp->excl = t;
      if (!last) {
        ok &= mbs_schurPairMerge(&sp->tmp, &sp->acc, &t, &nfloor);
        sp->acc = t;
      }
    }
    if (nhi > 0) { // suffix: the ranks just below join behind
      mbs_schurPairUnpack(rhi, &sp->tmp);
      for (int j = 2; j <= nhi; j++) { // tmp <- tmp . (window of r + jd)
        mbs_schurPairUnpack(rhi + (size_t)MBSP_PD * (j - 1), &u);
        ok &= mbs_schurPairMerge(&sp->tmp, &u, &t, &nfloor);
        sp->tmp = t;
      }
      ok &= mbs_schurPairMerge(&sp->sexcl, &sp->tmp, &t, &nfloor);
      sp->sexcl = t;
      if (!last) {
        ok &= mbs_schurPairMerge(&sp->sacc, &sp->tmp, &t, &nfloor);
        sp->sacc = t;
      }
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
  int n = cp->n, nup = cp->nup, depth = 0;
  for (int q = cp->p0; q < cp->p0 + cp->np; q++) {
    int nl = m->body_lamnum[s->port_body[q]], o = nup + s->port_cadr[q] - cp->c0;
    const double *rb = sp->rbuf + sp->port_radr[q];
    if ((int)rb[nl * nl + nl] > depth) depth = (int)rb[nl * nl + nl]; // the child's stamp
    MBS_FLOPS(mbs_flopSchurAdd(nl));
    for (int i = 0; i < nl; i++) {
      cp->g[o + i] += rb[nl * nl + i];
      for (int j = 0; j < nl; j++) cp->C[n * (o + i) + o + j] += rb[nl * i + j];
    }
  }
  if (depth > sp->rounds) sp->rounds = depth;
  mbsSchurComp save; // a light root with lower ports: mu one more upper unknown until sent
  const int aug = sp->light_all && mbsp_schurLightRootAug(sp, c, &save);
  if (sp->light) mbsp_schurLightUp(sp, w, c);
  if (sp->light_all) mbsp_schurLightRootUp(sp, c);
  double *S = sp->S;
  const int ku = cp->nup;
  *ok &= sp->light_all ? mbs_schurReduceBlk(ku, cp->nc, cp->C, cp->g, S, S + ku * ku, &sp->nfloor,
                                            mbsp_schurLightBlocks(sp, c))
                       : mbs_schurReduce(nup, cp->nc, cp->C, cp->g, S, S + nup * nup, &sp->nfloor);
  if (cp->up) {
    double *sb = sp->sbuf + sp->comp_sadr[c];
    if (aug)
      mbsp_schurLightRootSend(sp, c, &save, S, sb);
    else
      memcpy(sb, S, sizeof(double) * (size_t)(nup * nup + nup));
    sb[nup * nup + nup] = ++depth; // cross-rank hops of the longest message chain to here
    if (sp->light_all && !aug) mbsp_schurLightRootTail(sp, c, sb + nup * nup + nup + 1);
    MBS_TIC(w->timer, MBS_TIMER_IFACE);
    mbsErr e = mbsp_msgIsend(sp->msg, sb, nup * nup + nup + 1 + (sp->light_all ? nup + 2 : 0),
                             sp->comp_rank[c], sp->comp_tag[c], NULL);
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
  if (sp->light_all && cp->up) { // the upper port's lambdas with t (a light root's)
    const double *x = sp->lr_lam + sp->comp_uadr[c] + c;
    memcpy(sp->lam_up + sp->comp_uadr[c], x, sizeof(double) * (size_t)cp->nup);
    mbsp_schurLightRootT(sp, c, x[cp->nup]);
  }
  if (!sp->light_all || !mbsp_schurLightRootExpand(sp, c, sp->lam_up + sp->comp_uadr[c]))
    mbs_schurExpand(cp->nup, cp->nc, cp->C, cp->g, sp->lam_up + sp->comp_uadr[c],
                    sp->lam_low + cp->c0);
  if (sp->light) mbsp_schurLightDown(sp, w, c);
  if (sp->light_all) mbsp_schurLightRootDown(sp, c);
  MBS_TIC(w->timer, MBS_TIMER_IFACE);
  mbsErr e = MBS_OK;
  for (int q = cp->p0; q < cp->p0 + cp->np && !e; q++) {
    int nl = m->body_lamnum[s->port_body[q]];
    e = sp->light_all ? mbsp_msgIsend(sp->msg, sp->lr_send + s->port_cadr[q] + q, nl + 1,
                                      sp->port_rank[q], sp->port_tag[q] + 1, NULL)
                      : mbsp_msgIsend(sp->msg, sp->lam_low + s->port_cadr[q], nl, sp->port_rank[q],
                                      sp->port_tag[q] + 1, NULL);
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
mbsErr mbsp_schurTree(mbspSchur *sp, mbsWork *w) {
  const mbsModel *m = sp->m;
  mbsSchur *s = sp->seg;
  int *pend = sp->comp_pend;
  // leaf-to-root: the children's systems on every lower port (receive q is operation q)
  MBS_TIC(w->timer, MBS_TIMER_IFACE);
  for (int q = 0; q < s->nport; q++) {
    int nl = m->body_lamnum[s->port_body[q]];
    MBS_CALL(mbsp_msgIrecv(sp->msg, sp->rbuf + sp->port_radr[q],
                           nl * nl + nl + 1 + (sp->light_all ? nl + 2 : 0), sp->port_rank[q],
                           sp->port_tag[q], NULL));
  }
  MBS_TOC(w->timer, MBS_TIMER_IFACE);
  int ok = 1;
  sp->rounds = 0;
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
      if (sp->light_all)
        MBS_CALL(mbsp_msgIrecv(sp->msg, sp->lr_lam + sp->comp_uadr[c] + c, s->comp[c].nup + 1,
                               sp->comp_rank[c], sp->comp_tag[c] + MBSP_PH_LAM, NULL));
      else
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
  if (!ok) return mbs_errSet(MBS_ERR_NUMERIC, "schur: a cut-joint block is not finite");
  return MBS_OK;
}

// The passes' depth (cross-rank hops of the longest chain of messages in the leaf-to-root pass),
// the largest over all ranks, in *depth: the same data flow with one stamp per message. Setup
// only (allocates); collective. Every rank posts and completes all its messages before the
// agreement, so no rank waits for one that failed.
mbsErr mbsp_schurPassDepth(mbspSchur *sp, int *depth) {
  mbsSchur *s = sp->seg;
  int np = s->nport, nc = s->ncomp;
  double *rin = calloc((size_t)np + 1, sizeof(double)),
         *out = calloc((size_t)nc + 1, sizeof(double));
  int *pend = calloc((size_t)nc + 1, sizeof(int));
  mbsErr e = rin && out && pend ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur)");
  double dmax = 0;
  e = mbsp_agreeErr(sp->comm, e);
  for (int q = 0; q < np && !e; q++)
    e = mbsp_msgIrecv(sp->msg, rin + q, 1, sp->port_rank[q], sp->port_tag[q] + MBSP_PH_SYS, NULL);
  // a component whose children's stamps are all in sends its own: 1 + the largest of them
  for (int c = nc - 1; c >= 0 && !e; c--) {
    pend[c] = s->comp[c].np;
    if (pend[c] == 0 && s->comp[c].up) {
      out[c] = 1, dmax = dmax > 1 ? dmax : 1;
      e = mbsp_msgIsend(sp->msg, out + c, 1, sp->comp_rank[c], sp->comp_tag[c] + MBSP_PH_SYS, NULL);
    }
  }
  while (!e) {
    int q = -1;
    e = mbsp_msgWaitAny(sp->msg, 0, np, &q);
    if (e || q < 0) break;
    int c = sp->port_comp[q];
    if (rin[q] > dmax) dmax = rin[q];
    if (--pend[c] > 0) continue;
    double d = 0;
    for (int k = s->comp[c].p0; k < s->comp[c].p0 + s->comp[c].np; k++) d = rin[k] > d ? rin[k] : d;
    if (s->comp[c].up) {
      out[c] = d + 1, dmax = d + 1 > dmax ? d + 1 : dmax;
      e = mbsp_msgIsend(sp->msg, out + c, 1, sp->comp_rank[c], sp->comp_tag[c] + MBSP_PH_SYS, NULL);
    }
  }
  if (!e) e = mbsp_msgWaitAll(sp->msg);
  free(rin), free(out), free(pend);
  e = mbsp_agreeErr(sp->comm, e);
  if (!e) e = mbsp_allreduceMax(sp->comm, &dmax, 1);
  *depth = (int)dmax;
  return e;
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

mbsErr mbsp_schurJcg(mbspSchur *sp, mbsState *st, mbsWork *w) {
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
