/// \file schur_par_red.c
/// The log-depth interface solve of the exact distributed solver for decompositions that are not
/// chains (solver.method = "schur", docs/formulation.md 4.4): a contraction of the component
/// tree over rank intervals. In round k (k = 0 .. ceil(log2 P) - 1) rank r with r mod 2^(k+1) =
/// 2^k sends its cluster (a dense system on the cut joints between its interval [r, r + 2^k) and
/// the other ranks) to rank r - 2^k, which adds it to its own on their shared cut joints and
/// eliminates every cut joint whose two sides now lie in the merged interval (mbs_schurReduce:
/// Gaussian elimination in another order, so the result is exact). After the last round rank 0
/// holds a system with no joint left; the expansion runs the rounds backwards with the cut
/// joints' lambdas. Rounds: ceil(log2 P) each way, whatever the shape of the component tree.
/// The joint lists, the index maps and every buffer are set up once (mbsp_schurRedSetup, with
/// messages of its own); a solve allocates nothing. All MPI goes through parallel/comm.c.
#include <stdlib.h>
#include <string.h>
#include "schur_par.h"
#include "mbspar/mbs_engine.h"
#include "flops.h"
#include "schur_par_private.h"

#define MBSP_TAG_RED_SYS 43 // round k: the cluster's system to rank r - 2^k
#define MBSP_TAG_RED_LAM 44 // ... and its joints' lambdas back
#define MBSP_TAG_RED_CNT 45 // setup: the number of joints of the cluster
#define MBSP_TAG_RED_LIST                                                                          \
  46 // setup: the joints (global child body, lambdas, child rank, parent rank)

// a cut joint of a cluster: global index of the child body, its lambdas, the ranks of its child
// and parent sides
typedef struct {
  int gid, l, cr, pr;
} mbspRedJoint;

struct mbspRedLev {
  int partner;       // the rank whose cluster joins (-1: the rank's own components)
  int n, nk, na, nb; // unknowns: combined, kept (the boundary, first), own part, partner's part
  int *mapa, *mapb;  // (na), (nb) positions of the two parts' unknowns in the combined system
  double *M, *g;     // n*n, n: the combined system, factored in place by mbs_schurReduce
  double *S;         // nk*nk + nk: the system left on the kept joints (the next level's cluster)
  double *rb;        // nb*nb + nb: the partner's system as received; nb: its lambdas to send
  double *x;         // n: the combined unknowns' lambdas
};

static void mbsp_redLevFree(mbspRedLev *lv) {
  free(lv->mapa), free(lv->mapb), free(lv->M), free(lv->g), free(lv->S), free(lv->rb), free(lv->x);
}

void mbsp_schurRedDestroy(mbspSchur *sp) {
  for (int k = 0; k < sp->red_nlev; k++) mbsp_redLevFree(sp->red_lev + k);
  free(sp->red_lev);
  sp->red_lev = NULL, sp->red_nlev = 0;
}

// combine the joint lists a (na joints) and b (nb): the unique joints, those with a side outside
// [lo, hi) first (kept), into *out (*nout joints, *nkept of them kept, their unknowns in *nk and
// *n); pos[i] = the first unknown of input joint i (a then b)
static mbsErr mbsp_redCombine(const mbspRedJoint *a, int na, const mbspRedJoint *b, int nb, int lo,
                              int hi, mbspRedJoint **out, int *nout, int *nkept, int *nk, int *n,
                              int *pos) {
  int nin = na + nb, nu = 0;
  *nkept = 0, *nk = 0;
  mbspRedJoint *u;
  int *uidx;
  MBS_ALLOC(u, nin);
  uidx = malloc(sizeof(int) * (size_t)(nin ? nin : 1));
  if (!uidx) {
    free(u);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur interval reduction)");
  }
  for (int i = 0; i < nin; i++) {
    const mbspRedJoint *j = i < na ? a + i : b + (i - na);
    int k = 0;
    while (k < nu && u[k].gid != j->gid) k++;
    if (k == nu) u[nu++] = *j;
    uidx[i] = k;
  }
  // kept joints first, in input order, then the interior ones
  int *ord = malloc(sizeof(int) * (size_t)(nu ? nu : 1)),
      *off = malloc(sizeof(int) * (size_t)(nu ? nu : 1));
  mbspRedJoint *o = malloc(sizeof *o * (size_t)(nu ? nu : 1));
  if (!ord || !off || !o) {
    free(u), free(uidx), free(ord), free(off), free(o);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur interval reduction)");
  }
  int m = 0, at = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int k = 0; k < nu; k++) {
      int in = u[k].cr >= lo && u[k].cr < hi && u[k].pr >= lo && u[k].pr < hi;
      if (in != pass) continue;
      ord[k] = m, off[k] = at, o[m++] = u[k];
      at += u[k].l;
      if (!pass) *nkept = m, *nk = at;
    }
  *nout = nu, *n = at, *out = o;
  for (int i = 0; i < nin; i++) pos[i] = off[uidx[i]];
  free(u), free(uidx), free(ord), free(off);
  return MBS_OK;
}

// one combine's buffers; mapa/mapb from the joints' first unknowns
static mbsErr mbsp_redLevAlloc(mbspRedLev *lv) {
  MBS_ALLOC(lv->M, (size_t)lv->n * lv->n);
  MBS_ALLOC(lv->g, lv->n);
  MBS_ALLOC(lv->S, (size_t)lv->nk * lv->nk + lv->nk);
  MBS_ALLOC(lv->rb, (size_t)lv->nb * lv->nb + lv->nb);
  MBS_ALLOC(lv->x, lv->n);
  return MBS_OK;
}

// the setup's exchange of one round: the sender's joint list to the receiver. Both sides post
// their messages even after a local failure (then with an empty list), so no rank waits for one
// that gave up; the error is agreed on after the setup
static mbsErr mbsp_redSendList(mbspSchur *sp, const mbspRedJoint *j, int nj, int dst, double *buf) {
  double cnt = nj;
  for (int i = 0; i < nj; i++)
    buf[4 * i] = j[i].gid, buf[4 * i + 1] = j[i].l, buf[4 * i + 2] = j[i].cr,
            buf[4 * i + 3] = j[i].pr;
  MBS_CALL(mbsp_msgIsend(sp->msg, &cnt, 1, dst, MBSP_TAG_RED_CNT, NULL));
  MBS_CALL(mbsp_msgWaitAll(sp->msg));
  if (nj) MBS_CALL(mbsp_msgIsend(sp->msg, buf, 4 * nj, dst, MBSP_TAG_RED_LIST, NULL));
  return mbsp_msgWaitAll(sp->msg);
}

static mbsErr mbsp_redRecvList(mbspSchur *sp, int src, mbspRedJoint **out, int *nj) {
  double cnt = 0;
  *out = NULL, *nj = 0;
  MBS_CALL(mbsp_msgIrecv(sp->msg, &cnt, 1, src, MBSP_TAG_RED_CNT, NULL));
  MBS_CALL(mbsp_msgWaitAll(sp->msg));
  int n = (int)cnt;
  if (n == 0) return MBS_OK;
  double *buf = malloc(sizeof(double) * 4 * (size_t)n);
  mbspRedJoint *j = malloc(sizeof *j * (size_t)n);
  if (!buf || !j) {
    free(buf), free(j);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur interval reduction)");
  }
  mbsErr e = mbsp_msgIrecv(sp->msg, buf, 4 * n, src, MBSP_TAG_RED_LIST, NULL);
  if (!e) e = mbsp_msgWaitAll(sp->msg);
  for (int i = 0; i < n && !e; i++)
    j[i] = (mbspRedJoint){(int)buf[4 * i], (int)buf[4 * i + 1], (int)buf[4 * i + 2],
                          (int)buf[4 * i + 3]};
  free(buf);
  if (e) {
    free(j);
    return e;
  }
  *out = j, *nj = n;
  return MBS_OK;
}

mbsErr mbsp_schurRedSetup(mbspSchur *sp) {
  const mbsModel *m = sp->m;
  const mbsSchur *s = sp->seg;
  int r = sp->rank, P = sp->size, nc = s->ncomp;
  int nlev = 1; // own components, then one per round in which this rank receives
  for (int d = 1; d < P && r % (2 * d) == 0; d *= 2)
    if (r + d < P) nlev++;
  // a local failure before the rounds must not skip them (the partners wait for this rank's
  // joint list): every failure below sets e and the rounds still run, with empty lists
  sp->red_lev = calloc((size_t)nlev, sizeof *sp->red_lev);
  sp->red_nlev = sp->red_lev ? nlev : 0, sp->red_send = -1, sp->red_rounds = 0;
  for (int d = 1; d < P; d *= 2) sp->red_rounds++;
  // the own components' joints (upper port, then lower ports, per component)
  int nin = 0, nun = 0;
  for (int c = 0; c < nc; c++) nin += 1 + s->comp[c].np, nun += s->comp[c].n;
  mbspRedJoint *in = calloc((size_t)(nin ? nin : 1), sizeof *in), *cur = NULL;
  int *jpos = malloc(sizeof(int) * (size_t)(nin ? nin : 1));
  mbsErr e = MBS_OK;
  if (!sp->red_lev || !in || !jpos)
    e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur interval reduction)");
  int k = 0;
  for (int c = 0; c < nc && !e; c++) {
    const mbsSchurComp *cp = s->comp + c;
    in[k++] = (mbspRedJoint){cp->up ? m->body_gid[cp->root] : -1 - c, cp->nup, r,
                             cp->up ? sp->comp_rank[c] : r};
    for (int q = cp->p0; q < cp->p0 + cp->np; q++) {
      int l = s->port_body[q];
      in[k++] = (mbspRedJoint){m->body_gid[l], m->body_lamnum[l], sp->port_rank[q], r};
    }
  }
  mbspRedLev *lv = sp->red_lev;
  int ncur = 0, nkept = 0;
  if (!e)
    e = mbsp_redCombine(in, nin, NULL, 0, r, r + 1, &cur, &ncur, &nkept, &lv->nk, &lv->n, jpos);
  if (lv) lv->partner = -1, lv->na = nun, lv->nb = 0;
  if (!e) {
    lv->mapa = malloc(sizeof(int) * (size_t)(nun ? nun : 1));
    if (!lv->mapa) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur interval reduction)");
  }
  for (int c = 0, kk = 0, u = 0; c < nc && !e; c++) {
    const mbsSchurComp *cp = s->comp + c;
    for (int i = 0; i < cp->nup; i++) lv->mapa[u++] = jpos[kk] + i;
    kk++;
    for (int q = cp->p0; q < cp->p0 + cp->np; q++, kk++)
      for (int i = 0; i < m->body_lamnum[s->port_body[q]]; i++) lv->mapa[u++] = jpos[kk] + i;
  }
  free(in), free(jpos);
  if (!e) e = mbsp_redLevAlloc(lv);
  // the rounds: the joint lists travel like the systems will
  double *buf = NULL;
  int il = 1;
  for (int d = 1; d < P; d *= 2) {
    if (r % (2 * d) == d) { // send the cluster to r - d, done
      int nk_ = e ? 0 : nkept;
      buf = malloc(sizeof(double) * 4 * (size_t)(nk_ ? nk_ : 1));
      if (!buf) nk_ = 0, e = e ? e : mbs_errSet(MBS_ERR_NOMEM, "out of memory");
      mbsErr es = mbsp_redSendList(sp, cur, nk_, r - d, buf);
      e = e ? e : es;
      free(buf);
      sp->red_send = r - d;
      break;
    }
    if (r + d >= P) continue;
    mbspRedJoint *b = NULL, *nxt = NULL;
    int nb = 0;
    mbsErr er = mbsp_redRecvList(sp, r + d, &b, &nb);
    e = e ? e : er;
    mbspRedLev *l2 = sp->red_lev ? sp->red_lev + il : NULL; // NULL only with e set
    il++;
    if (l2) l2->partner = r + d;
    int *pos = malloc(sizeof(int) * (size_t)(nkept + nb + 1));
    if (!pos && !e) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    int nn = 0, nkp = 0, hi = r + 2 * d < P ? r + 2 * d : P;
    if (!e) e = mbsp_redCombine(cur, nkept, b, nb, r, hi, &nxt, &nn, &nkp, &l2->nk, &l2->n, pos);
    if (!e) {
      l2->na = 0, l2->nb = 0;
      for (int i = 0; i < nkept; i++) l2->na += cur[i].l;
      for (int i = 0; i < nb; i++) l2->nb += b[i].l;
      l2->mapa = malloc(sizeof(int) * (size_t)(l2->na + 1));
      l2->mapb = malloc(sizeof(int) * (size_t)(l2->nb + 1));
      if (!l2->mapa || !l2->mapb) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    }
    for (int i = 0, u = 0; i < nkept && !e; i++)
      for (int t = 0; t < cur[i].l; t++) l2->mapa[u++] = pos[i] + t;
    for (int i = 0, u = 0; i < nb && !e; i++)
      for (int t = 0; t < b[i].l; t++) l2->mapb[u++] = pos[nkept + i] + t;
    if (!e) e = mbsp_redLevAlloc(l2);
    free(pos), free(b);
    if (nxt) free(cur), cur = nxt, nkept = nkp;
  }
  free(cur);
  return e;
}

// ---------------------------------------------------------------- the solve

mbsErr mbsp_schurRed(mbspSchur *sp, mbsWork *w) {
  mbsSchur *s = sp->seg;
  mbspRedLev *lev = sp->red_lev;
  int L = sp->red_nlev - 1, ok = 1;
  // the own components' systems, summed on their shared joints, interior joints eliminated
  {
    mbspRedLev *lv = lev;
    memset(lv->M, 0, sizeof(double) * (size_t)lv->n * lv->n);
    memset(lv->g, 0, sizeof(double) * (size_t)lv->n);
    for (int c = 0, u0 = 0; c < s->ncomp; c++) {
      const mbsSchurComp *cp = s->comp + c;
      const int *mp = lv->mapa + u0;
      MBS_FLOPS(mbs_flopSchurAdd(cp->n));
      for (int i = 0; i < cp->n; i++) {
        lv->g[mp[i]] += cp->g[i];
        for (int j = 0; j < cp->n; j++)
          lv->M[(size_t)lv->n * mp[i] + mp[j]] += cp->C[cp->n * i + j];
      }
      u0 += cp->n;
    }
    ok &= mbs_schurReduce(lv->nk, lv->n - lv->nk, lv->M, lv->g, lv->S, lv->S + lv->nk * lv->nk,
                          &sp->nfloor);
  }
  // contraction: receive the partners' clusters in round order, merge
  for (int k = 1; k <= L; k++) {
    mbspRedLev *lv = lev + k, *pv = lev + k - 1;
    MBS_TIC(w->timer, MBS_TIMER_IFACE);
    mbsErr e = mbsp_msgIrecv(sp->msg, lv->rb, lv->nb * lv->nb + lv->nb, lv->partner,
                             MBSP_TAG_RED_SYS, NULL);
    if (!e) e = mbsp_msgWaitAll(sp->msg);
    MBS_TOC(w->timer, MBS_TIMER_IFACE);
    MBS_CALL(e);
    int n = lv->n, na = lv->na, nb = lv->nb;
    memset(lv->M, 0, sizeof(double) * (size_t)n * n);
    memset(lv->g, 0, sizeof(double) * (size_t)n);
    MBS_FLOPS(mbs_flopSchurAdd(na) + mbs_flopSchurAdd(nb));
    for (int i = 0; i < na; i++) {
      lv->g[lv->mapa[i]] += pv->S[pv->nk * pv->nk + i];
      for (int j = 0; j < na; j++)
        lv->M[(size_t)n * lv->mapa[i] + lv->mapa[j]] += pv->S[na * i + j];
    }
    for (int i = 0; i < nb; i++) {
      lv->g[lv->mapb[i]] += lv->rb[nb * nb + i];
      for (int j = 0; j < nb; j++)
        lv->M[(size_t)n * lv->mapb[i] + lv->mapb[j]] += lv->rb[nb * i + j];
    }
    ok &= mbs_schurReduce(lv->nk, n - lv->nk, lv->M, lv->g, lv->S, lv->S + lv->nk * lv->nk,
                          &sp->nfloor);
  }
  // a failed reduction does not leave the rounds: the partners wait for this rank's messages
  mbspRedLev *top = lev + L;
  if (sp->red_send >= 0) {
    MBS_TIC(w->timer, MBS_TIMER_IFACE);
    mbsErr e = mbsp_msgIsend(sp->msg, top->S, top->nk * top->nk + top->nk, sp->red_send,
                             MBSP_TAG_RED_SYS, NULL);
    sp->messages++;
    if (!e) e = mbsp_msgIrecv(sp->msg, top->x, top->nk, sp->red_send, MBSP_TAG_RED_LAM, NULL);
    if (!e) e = mbsp_msgWaitAll(sp->msg);
    MBS_TOC(w->timer, MBS_TIMER_IFACE);
    MBS_CALL(e);
  }
  // expansion: the rounds backwards
  for (int k = L; k >= 0; k--) {
    mbspRedLev *lv = lev + k;
    mbs_schurExpand(lv->nk, lv->n - lv->nk, lv->M, lv->g, lv->x, lv->x + lv->nk);
    if (k == 0) break;
    for (int i = 0; i < lv->nb; i++) lv->rb[i] = lv->x[lv->mapb[i]];
    for (int i = 0; i < lv->na; i++) lev[k - 1].x[i] = lv->x[lv->mapa[i]];
    MBS_TIC(w->timer, MBS_TIMER_IFACE);
    mbsErr e = mbsp_msgIsend(sp->msg, lv->rb, lv->nb, lv->partner, MBSP_TAG_RED_LAM, NULL);
    sp->messages++;
    MBS_TOC(w->timer, MBS_TIMER_IFACE);
    MBS_CALL(e);
  }
  // the components' port lambdas
  for (int c = 0, u = 0; c < s->ncomp; c++) {
    const mbsSchurComp *cp = s->comp + c;
    for (int i = 0; i < cp->nup; i++) sp->lam_up[sp->comp_uadr[c] + i] = lev->x[lev->mapa[u++]];
    for (int i = 0; i < cp->nc; i++) sp->lam_low[cp->c0 + i] = lev->x[lev->mapa[u++]];
  }
  MBS_TIC(w->timer, MBS_TIMER_IFACE);
  mbsErr e = mbsp_msgWaitAll(sp->msg);
  MBS_TOC(w->timer, MBS_TIMER_IFACE);
  MBS_CALL(e);
  sp->rounds = sp->red_rounds;
  if (!ok) return mbs_errSet(MBS_ERR_NUMERIC, "schur: a cut-joint block is not finite");
  return MBS_OK;
}
