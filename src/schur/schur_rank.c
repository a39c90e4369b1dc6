/// \file schur_rank.c
/// A rank's range cut into thread segments and their join inside the rank (docs/formulation.md
/// 4.5): setup, the factor of every segment and the elimination of the cut joints between them,
/// the back-substitution, and the bias-only passes of the loop layer's repeated solves.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "schur_private.h"
#ifdef _OPENMP
#include <omp.h>
#endif

// ---------------------------------------------------------------- a rank's segments joined

void mbs_schurRankDestroy(mbsSchurRank **pr) {
  if (!pr || !*pr) return;
  mbsSchurRank *r = *pr;
  for (int k = 0; r->sc && k < r->nsc; k++) free(r->sc[k].aug);
  for (int t = 0; t < r->nseg; t++) {
    if (r->seg) mbs_schurDestroy(&r->seg[t]); // NULL: its allocation failed
    if (r->lam_up) free(r->lam_up[t]);
    if (r->lam_low) free(r->lam_low[t]);
  }
  free(r->seg), free(r->sc), free(r->pool), free(r->ipool), free(r->lam_up), free(r->lam_low);
  free(r->view.comp), free(r->view.port_body), free(r->view.port_cadr);
  free(r->pmark), free(r->pinit), free(r->plist);
  free(r);
  *pr = NULL;
}

// the segment-component whose segment holds body b (sc sorted by root; b in [b0, b1))
static int mbs_schurScOf(const mbsSchurRank *r, int b) {
  int t = 0;
  while (t + 1 < r->nseg && r->seg[t + 1]->s0 <= b) t++;
  const mbsSchur *s = r->seg[t];
  int c = s->body_comp[b - s->s0], k = 0;
  while (!(r->sc[k].seg == t && r->sc[k].comp == c)) k++;
  return k;
}

// 1 if a light joint of the rank's range [b0, b1) crosses a thread boundary at body s (with the
// test switch MBSPAR_TEST_LIGHT_ROOTS=1 only those whose parent is the lighter body)
static int mbs_schurCutLight(const mbsModel *m, int b0, int b1, int s) {
  const int leaves_only = mbs_partitionTestLightRoots();
  for (int b = s; b < b1; b++) {
    int p = m->body_parent[b];
    if (p >= b0 && p < s &&
        mbs_partitionIsLight(m->body_mass[p], mbs_jntIsFixed(m->body_jnttype[p]), m->body_mass[b],
                             mbs_jntIsFixed(m->body_jnttype[b])) &&
        !(leaves_only && m->body_mass[b] < m->body_mass[p]))
      return 1;
  }
  return 0;
}

// 1 if a thread boundary at body s of the rank's range [b0, b1) starts a segment at a body on a
// fixed joint below a body of the range, or a light joint of the range crosses it
static int mbs_schurCutBad(const mbsModel *m, int b0, int b1, int s) {
  if (mbs_jntIsFixed(m->body_jnttype[s]) && m->body_parent[s] >= b0) return 1;
  return mbs_schurCutLight(m, b0, b1, s);
}

mbsErr mbs_schurRankCreate(const mbsModel *m, int b0, int b1, int nseg, mbsSchurRank **out) {
  *out = NULL;
  mbsSchurRank *r = calloc(1, sizeof *r);
  MBS_CHECK(r, MBS_ERR_NOMEM, "out of memory (schur rank)");
  if (nseg > b1 - b0) nseg = b1 - b0;
  if (nseg > MBS_SCHUR_MAXSEG) nseg = MBS_SCHUR_MAXSEG;
  if (nseg < 1) nseg = 1;
  r->b0 = b0, r->b1 = b1, r->nseg = nseg;
  r->seg = calloc((size_t)nseg, sizeof *r->seg);
  r->lam_up = calloc((size_t)nseg, sizeof *r->lam_up);
  r->lam_low = calloc((size_t)nseg, sizeof *r->lam_low);
  mbsErr e =
      r->seg && r->lam_up && r->lam_low ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  // a chain piece whose last body has no child (the end of a chain): its last segment has no
  // lower port and no spikes (docs/formulation.md 4.6), the others get 1/(nseg + sigma) each
  long n = b1 - b0;
  int chainend = m->body_childnum[b1 - 1] == 0;
  for (int b = b0 + 1; b < b1 && chainend; b++)
    if (m->body_parent[b] != b - 1) chainend = 0;
  const double parts = chainend && nseg > 1 ? nseg + MBS_SCHUR_THREAD_SPIKE : nseg;
  int cut[MBS_SCHUR_MAXSEG + 1];
  for (int t = 0; t < nseg; t++) cut[t] = b0 + (int)((double)n * t / parts);
  cut[nseg] = b1;
  for (int t = 1; t < nseg; t++) // every segment at least one body
    if (cut[t] <= cut[t - 1]) cut[t] = cut[t - 1] + 1;
  for (int t = nseg - 1; t >= 1; t--)
    if (cut[t] > b1 - (nseg - t)) cut[t] = b1 - (nseg - t);
  // a boundary within MBS_PARTITION_SNAP of a part from a clean cut (a body on the ground, or
  // whose parent is on another rank, that no joint of the range reaches across) moves to it: the
  // two segments then share no joint (no spike, no port; and the loop layer's solves after the
  // first redo only the bias passes, mbs_schurRhsOnly)
  int *cl = nseg > 1 ? malloc(sizeof(int) * (size_t)n) : NULL, ncl = 0;
  for (int b = b0; cl && b < b1; b++) {
    int p = m->body_parent[b];
    if (p < b0)
      cl[ncl++] = b;
    else
      ncl = mbs_partitionCutDrop(cl, ncl, p);
  }
  for (int t = 1; cl && t < nseg; t++) {
    double lim = MBS_PARTITION_SNAP * (double)n / parts, best = lim;
    int to = -1;
    for (int k = 0; k < ncl; k++) {
      double d = fabs((double)(cl[k] - cut[t]));
      if (d <= best && cl[k] > cut[t - 1] && cl[k] < cut[t + 1]) best = d, to = cl[k];
    }
    if (to >= 0) cut[t] = to;
  }
  free(cl);
  // no segment starts at a body on a fixed joint below a body of the range, and no light joint
  // of the range crosses a boundary (the rule of mbs_partitionRunsLight, docs/formulation.md
  // 4.9): the nearest clean place within MBS_PARTITION_FIXED_SKIP bodies, down first; else as
  // far down as the next boundary allows
  for (int t = 1; t < nseg; t++) {
    int to = -1;
    for (int d = 0; to < 0 && d <= MBS_PARTITION_FIXED_SKIP; d++)
      for (int sg = 1; to < 0 && sg >= (d ? -1 : 1); sg -= 2) {
        int b = cut[t] + sg * d;
        if (b > cut[t - 1] && b <= b1 - (nseg - t) && !mbs_schurCutBad(m, b0, b1, b)) to = b;
      }
    if (to >= 0) {
      cut[t] = to;
      for (int t2 = t + 1; t2 < nseg && cut[t2] <= cut[t2 - 1]; t2++) cut[t2] = cut[t2 - 1] + 1;
      continue;
    }
    for (int step = 0; step < MBS_PARTITION_FIXED_SKIP && cut[t] + 1 < cut[t + 1] &&
                       mbs_schurCutBad(m, b0, b1, cut[t]);
         step++)
      cut[t]++;
  }
  // a boundary that a light joint still crosses (every joint near it light: no clean place) is
  // dropped, its two segments joined: schur loses its digits across such a boundary (a light
  // body ending a segment without its children, or rooting one; docs/formulation.md 4.9), and
  // one thread less on that stretch keeps them
  int kept = 1;
  for (int t = 1; t < nseg; t++)
    if (!mbs_schurCutLight(m, b0, b1, cut[t])) cut[kept++] = cut[t];
  cut[kept] = b1;
  nseg = r->nseg = kept;
  for (int t = 0; t < nseg && !e; t++) {
    int s0 = cut[t], s1 = cut[t + 1];
    e = mbs_schurCreate(m, s0, s1, &r->seg[t]);
    if (!e) {
      const mbsSchur *s = r->seg[t];
      int nu = 0;
      for (int c = 0; c < s->ncomp; c++) nu += s->comp[c].nup;
      r->lam_up[t] = calloc((size_t)nu + 1, sizeof(mbsReal));
      r->lam_low[t] = calloc((size_t)s->ncol + 1, sizeof(mbsReal));
      if (!r->lam_up[t] || !r->lam_low[t]) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    }
  }
  for (int t = 0; t < nseg && !e; t++) r->nsc += r->seg[t]->ncomp;
  if (!e && !(r->sc = calloc((size_t)r->nsc, sizeof *r->sc)))
    e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  if (e) {
    mbs_schurRankDestroy(&r);
    return e;
  }
  // segment-components and where their roots' parents are
  for (int t = 0, k = 0; t < nseg; t++)
    for (int c = 0; c < r->seg[t]->ncomp; c++, k++) {
      mbsSchurSc *sc = r->sc + k;
      sc->seg = t, sc->comp = c, sc->root = r->seg[t]->comp[c].root;
      sc->nup = r->seg[t]->comp[c].nup; // 0 for roots at the ground and free-joint cuts
    }
  for (int k = 0; k < r->nsc; k++) {
    mbsSchurSc *sc = r->sc + k;
    int p = m->body_parent[sc->root];
    sc->parent_sc = p >= b0 ? mbs_schurScOf(r, p) : -1;
  }
  // port lists, bottom-up: kept = own remote ports then the internal children's kept ports
  int ktot = 0, etot = 0;
  for (int k = 0; k < r->nsc; k++) {
    const mbsSchurComp *cp = r->seg[r->sc[k].seg]->comp + r->sc[k].comp;
    ktot += cp->np, etot += cp->np;
  }
  size_t isize = 2 * (size_t)r->nsc * (size_t)(ktot + 1) + (size_t)etot + 16;
  r->ipool = calloc(isize, sizeof(int));
  if (!r->ipool) {
    mbs_schurRankDestroy(&r);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur join)");
  }
  int *ip = r->ipool;
  for (int k = r->nsc - 1; k >= 0; k--) {
    mbsSchurSc *sc = r->sc + k;
    const mbsSchur *s = r->seg[sc->seg];
    const mbsSchurComp *cp = s->comp + sc->comp;
    sc->kport = ip, sc->nkp = 0, sc->nk = 0;
    for (int q = cp->p0; q < cp->p0 + cp->np; q++) {
      int l = s->port_body[q];
      if (l >= b1) sc->kport[sc->nkp++] = l, sc->nk += m->body_lamnum[l];
    }
    for (int q = cp->p0; q < cp->p0 + cp->np; q++) {
      int l = s->port_body[q];
      if (l >= b1) continue;
      const mbsSchurSc *ch = r->sc + mbs_schurScOf(r, l);
      for (int i = 0; i < ch->nkp; i++) sc->kport[sc->nkp++] = ch->kport[i];
      sc->nk += ch->nk;
    }
    ip += sc->nkp;
    sc->eport = ip, sc->nep = 0, sc->ne = 0;
    for (int q = cp->p0; q < cp->p0 + cp->np; q++) {
      int l = s->port_body[q];
      if (l < b1) sc->eport[sc->nep++] = l, sc->ne += m->body_lamnum[l];
    }
    ip += sc->nep;
  }
  // working storage and the rank-level view
  size_t rs = 0;
  int nview = 0, vport = 0;
  for (int k = 0; k < r->nsc; k++) {
    mbsSchurSc *sc = r->sc + k;
    size_t n = (size_t)(sc->nup + sc->nk + sc->ne), nk = (size_t)(sc->nup + sc->nk);
    rs += n * n + n + nk * nk + nk;
    int joins = sc->parent_sc >= 0 && sc->nup > 0;
    sc->view = joins ? -1 : nview++;
    if (!joins) vport += sc->nkp;
  }
  r->pool = calloc(rs + 1, sizeof(mbsReal));
  r->view.comp = calloc((size_t)nview + 1, sizeof(mbsSchurComp));
  r->view.port_body = calloc((size_t)vport + 1, sizeof(int));
  r->view.port_cadr = calloc((size_t)vport + 1, sizeof(int));
  if (!r->pool || !r->view.comp || !r->view.port_body || !r->view.port_cadr) {
    mbs_schurRankDestroy(&r);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur join)");
  }
  mbsReal *at = r->pool;
  r->view.ncomp = nview, r->view.nport = vport, r->view.s0 = b0, r->view.s1 = b1;
  int col = 0, pq = 0;
  for (int k = 0; k < r->nsc; k++) {
    mbsSchurSc *sc = r->sc + k;
    int n = sc->nup + sc->nk + sc->ne, nk = sc->nup + sc->nk;
    sc->W = at, at += (size_t)n * n;
    sc->gw = at, at += n;
    sc->R = at, at += (size_t)nk * nk + nk;
    if (sc->view < 0) continue;
    mbsSchurComp *vc = r->view.comp + sc->view;
    int p = m->body_parent[sc->root];
    vc->root = sc->root;
    vc->up = p >= 0 && p < b0 && sc->nup > 0;
    vc->nup = vc->up ? sc->nup : 0;
    vc->p0 = pq, vc->np = sc->nkp, vc->c0 = col, vc->nc = sc->nk, vc->n = vc->nup + sc->nk;
    vc->C = sc->R, vc->g = sc->R + (size_t)nk * nk;
    for (int i = 0; i < sc->nkp; i++) {
      r->view.port_body[pq] = sc->kport[i], r->view.port_cadr[pq] = col;
      col += m->body_lamnum[sc->kport[i]], pq++;
    }
  }
  r->view.ncol = col;
  if (vport) r->view.port_cadr[vport] = col;
  // the factor can be redone for a new right side alone (mbs_schurRhsOnly): no ports, every
  // body in inertia form; with several segments (threads) also every component on the ground, so
  // no segment's bias pass reaches into another's records
  r->rhs_only = 1;
  r->pmark = calloc((size_t)(b1 - b0) + 1, sizeof(int));
  r->pinit = calloc((size_t)(b1 - b0) + 1, sizeof(int));
  r->plist = calloc((size_t)(b1 - b0) + 1, sizeof(int));
  r->pdirty = 1;
  if (!r->pmark || !r->pinit || !r->plist) {
    mbs_schurRankDestroy(&r);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur join)");
  }
  // light roots at thread boundaries (only where the segmentation cuts at one: the test switch
  // MBSPAR_TEST_LIGHT_ROOTS=1): a segment-component without ports whose root is a light root of
  // its segment leaves its soft part out of its system (schur_lightroot.c) and the join changes
  // variables along it in its parent's component (mbs_schurRankFactor)
  for (int k = 0; k < r->nsc; k++) {
    mbsSchurSc *sc = r->sc + k;
    mbsSchur *s = r->seg[sc->seg];
    const mbsSchurComp *cp = s->comp + sc->comp;
    // with ports only internal ones on a path (the soft unknown mu kept while they go: aug); a
    // rank-level one (its parent on another rank) gets aug here and its mark from the parallel
    // layer (mbsp_schurLightSetup), which knows whether the passes take its soft part
    const int ports = cp->nc > 0;
    if (!cp->up || cp->nup > 6 || cp->nc > 6 || (ports && (!cp->spath || sc->nk > 0)) ||
        !mbs_schurLightRoot(m, s, sc->root))
      continue;
    if (ports) {
      size_t n = (size_t)(sc->nup + sc->ne) + 1, u = (size_t)sc->nup + 1;
      if (!(sc->aug = calloc(n * n + n + u * u + u, sizeof(mbsReal)))) {
        mbs_schurRankDestroy(&r);
        return mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur join)");
      }
    }
    if (sc->parent_sc < 0) continue;
    if (!s->lroot && !(s->lroot = calloc((size_t)s->ncomp * MBS_SCHUR_LRW + 1, sizeof(mbsReal)))) {
      mbs_schurRankDestroy(&r);
      return mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur join)");
    }
    s->lroot[MBS_SCHUR_LRW * sc->comp] = 1;
  }
  for (int t = 0; t < r->nseg && r->rhs_only; t++) {
    const mbsSchur *st = r->seg[t];
    if (st->nport) r->rhs_only = 0;
    for (int c = 0; c < st->ncomp && r->rhs_only; c++)
      if (st->comp[c].up || st->comp[c].spath ||
          (r->nseg > 1 && m->body_parent[st->comp[c].root] >= 0))
        r->rhs_only = 0;
    for (int b = st->s0; b < st->s1 && r->rhs_only; b++)
      if (!st->mode[b - st->s0]) r->rhs_only = 0;
  }
  *out = r;
  return MBS_OK;
}

// position of port l in a list
static int mbs_schurPortPos(const mbsModel *m, const int *list, int n, int l) {
  int pos = 0;
  for (int i = 0; i < n && list[i] != l; i++) pos += m->body_lamnum[list[i]];
  return pos;
}

// the light roots among sc's eliminated ports (their soft part left out of the child's system):
// with x NULL the change of variables along v on sc's system W (n unknowns), else the
// eliminated ports' values x from (y, t) back to lambda, t into the child's slot
static void mbs_schurRankLight(const mbsModel *m, mbsSchurRank *r, const mbsSchurSc *sc, mbsReal *W,
                               mbsReal *gw, int n, int nk, mbsReal *x) {
  for (int e = 0; e < sc->nep; e++) {
    const mbsSchurSc *ch = r->sc + mbs_schurScOf(r, sc->eport[e]);
    mbsSchur *cs = r->seg[ch->seg];
    mbsReal *L = cs->lroot ? cs->lroot + MBS_SCHUR_LRW * ch->comp : NULL, R[36];
    int nl = ch->nup, o = mbs_schurPortPos(m, sc->eport, sc->nep, sc->eport[e]);
    if (!L || L[0] < 2 || nl > 6 || ch->nk > 0 || !mbs_schurLightR(L + 11, nl, L[3], R)) continue;
    if (x) {
      L[4] = x[o + nl - 1];
      mbs_schurLightVec(nl, R, x + o);
      continue;
    }
    mbs_schurLightApply(n, nk + o, nl, R, W, gw);
    const int t = nk + o + nl - 1; // the soft part in (y, t): sd^2 / sigma at (t, t), phi sd at t
    W[(size_t)n * t + t] += L[3] * L[3] / L[1];
    gw[t] += L[2] * L[3];
  }
}

// a light root with internal lower ports (sc->aug): its system with mu after the upper port,
// [W w; w^T -sigma] (x; mu) = (gw; -sigma phi), w = (v; P^T q) placed by wmap (its component's
// unknowns to W's); 0 if the factor left no soft part out this time
static int mbs_schurRankAug(const mbsModel *m, mbsSchurRank *r, mbsSchurSc *sc, const int *wmap) {
  mbsSchur *s = r->seg[sc->seg];
  const mbsSchurComp *cp = s->comp + sc->comp;
  const mbsReal *L = s->lroot ? s->lroot + MBS_SCHUR_LRW * sc->comp : NULL;
  if (!L || L[0] < 2 || cp->n > 12) return 0;
  (void)m;
  const int n = sc->nup + sc->ne, k = n + 1, nu = sc->nup;
  mbsReal *A = sc->aug, *ga = A + (size_t)k * k, wv[13] = {0};
  for (int i = 0; i < cp->n; i++) wv[wmap[i]] = i < cp->nup ? L[11 + i] : L[23 + i - cp->nup];
  for (int i = 0; i < n; i++) {
    int ii = i < nu ? i : i + 1;
    ga[ii] = sc->gw[i];
    for (int j = 0; j < n; j++) A[(size_t)k * ii + (j < nu ? j : j + 1)] = sc->W[(size_t)n * i + j];
    A[(size_t)k * ii + nu] = A[(size_t)k * nu + ii] = wv[i];
  }
  A[(size_t)k * nu + nu] = -L[1];
  ga[nu] = -L[1] * L[2];
  return 1;
}

// its reduction: the grandchildren's light roots, the elimination of the internal ports, then
// the system on the upper port into sc->R and its soft part (w~, sigma~, phi~) into the slot
static int mbs_schurRankAugReduce(const mbsModel *m, mbsSchurRank *r, mbsSchurSc *sc) {
  mbsSchur *s = r->seg[sc->seg];
  mbsReal *L = s->lroot + MBS_SCHUR_LRW * sc->comp;
  const int n = sc->nup + sc->ne, k = n + 1, nu = sc->nup, u = nu + 1;
  mbsReal *A = sc->aug, *ga = A + (size_t)k * k, *S = ga + k, *gs = S + (size_t)u * u;
  mbs_schurRankLight(m, r, sc, A, ga, k, u, NULL);
  if (!mbs_schurReduce(u, sc->ne, A, ga, S, gs, &r->nfloor)) return 0;
  for (int i = 0; i < nu; i++) {
    for (int j = 0; j < nu; j++) sc->R[nu * i + j] = S[u * i + j];
    sc->R[nu * nu + i] = gs[i];
    L[11 + i] = S[u * i + nu];
  }
  const mbsReal sig = -S[u * nu + nu];
  L[1] = sig, L[2] = sig > 0 ? -gs[nu] / sig : 0, L[3] = sig > 0 ? sqrt(sig) : 0;
  L[0] = 3; // augmented in this evaluation
  return 1;
}

int mbs_schurRhsOnly(const mbsSchurRank *r) {
  return r->rhs_only;
}

// the right side alone (w->reuse, mbs_schurRhsOnly): pass 1 and 2 of ABA's bias, in the order of
// mbs_schurFactor, on the articulated inertias and 1/D the last factor left in the records
static void mbs_schurFactorRhs(const mbsModel *m, mbsWork *w, const mbsSchur *s) {
  for (int b = s->s1 - 1; b >= s->s0; b--) {
    int lb = b - s->s0;
    if (s->selfinit[lb]) mbs_abaBodyInitRhs(m, w, b);
    if (s->initp[lb]) mbs_abaBodyInitRhs(m, w, m->body_parent[b]);
    mbs_abaBodyRhs(m, w, b);
  }
}

static int mbs_schurCmpDesc(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x < y) - (x > y);
}

int mbs_schurRankFactorPath(const mbsModel *m, mbsWork *w, mbsSchurRank *r, const int *load,
                            int nload) {
  if (!load || !w->reuse || !w->homog || !r->rhs_only || !r->pmark) return 0;
  int b0 = r->b0, b1 = r->b1, par = r->nseg > 1 && nload <= MBS_SCHUR_PATH_LOADS;
  if (r->pdirty) { // a full factor ran: every u is stale (each segment's by its thread)
#pragma omp parallel for schedule(static, 1) if (par)
    for (int t = 0; t < r->nseg; t++)
      for (int b = r->seg[t]->s0; b < r->seg[t]->s1; b++) mbs_abaBodyZeroU(m, w, b);
  } else {
#pragma omp parallel for schedule(static, 1) if (par)
    for (int t = 0; t < r->nseg; t++)
      for (int k = 0; k < r->nplist; k++)
        if (r->plist[k] >= r->seg[t]->s0 && r->plist[k] < r->seg[t]->s1)
          mbs_abaBodyZeroU(m, w, r->plist[k]);
  }
  r->pdirty = 0;
  if (r->pcur == INT32_MAX) { // restart the stamps
    memset(r->pmark, 0, sizeof(int) * (size_t)(b1 - b0));
    memset(r->pinit, 0, sizeof(int) * (size_t)(b1 - b0));
    r->pcur = 0;
  }
  // the loaded bodies' root paths on this rank, each from its load up to the first body an
  // earlier one reached; taken in reverse, leaf to root, every body comes after its children on
  // the paths (a child in a later piece ends that piece just below it)
  int cur = ++r->pcur, n = 0, seg[MBS_SCHUR_PATH_LOADS + 1], ns = 0;
  for (int k = 0; k < nload; k++) {
    if (ns == MBS_SCHUR_PATH_LOADS) break;
    seg[ns++] = n;
    for (int b = load[k]; b >= b0 && b < b1 && r->pmark[b - b0] != cur; b = m->body_parent[b])
      r->pmark[b - b0] = cur, r->plist[n++] = b;
  }
  seg[ns] = n;
  if (nload > MBS_SCHUR_PATH_LOADS) { // more loads than pieces: one piece, in index order
    for (int k = MBS_SCHUR_PATH_LOADS; k < nload; k++)
      for (int b = load[k]; b >= b0 && b < b1 && r->pmark[b - b0] != cur; b = m->body_parent[b])
        r->pmark[b - b0] = cur, r->plist[n++] = b;
    qsort(r->plist, (size_t)n, sizeof(int), mbs_schurCmpDesc);
    ns = 1, seg[0] = 0, seg[1] = n;
  }
  // with several segments (each whole trees: mbs_schurRhsOnly) a piece lies in one segment, and
  // each segment's thread takes its own pieces, where its records are in cache
  int tq[MBS_SCHUR_PATH_LOADS];
  for (int q = 0; q < ns; q++) {
    tq[q] = 0;
    if (par && seg[q + 1] > seg[q])
      while (tq[q] + 1 < r->nseg && r->seg[tq[q] + 1]->s0 <= r->plist[seg[q]]) tq[q]++;
  }
#pragma omp parallel for schedule(static, 1) if (par)
  for (int t = 0; t < (par ? r->nseg : 1); t++)
    for (int q = ns - 1; q >= 0; q--) {
      if (par && tq[q] != t) continue;
      for (int k = seg[q]; k < seg[q + 1]; k++) { // a record starts as its bias before any add
        int b = r->plist[k], p = m->body_parent[b];
        if (r->pinit[b - b0] != cur) mbs_abaBodyInitRhs(m, w, b), r->pinit[b - b0] = cur;
        if (p >= b0 && r->pinit[p - b0] != cur) mbs_abaBodyInitRhs(m, w, p), r->pinit[p - b0] = cur;
        mbs_abaBodyRhs(m, w, b);
      }
    }
  r->nplist = n;
  r->nfloor = 0;
  return 1;
}

mbsErr mbs_schurRankFactor(const mbsModel *m, mbsWork *w, mbsSchurRank *r) {
  mbsErr err = MBS_OK;
  r->nfloor = 0;
  r->pdirty = 1; // every u of the rank written (mbs_schurRankFactorPath)
  if (w->reuse && r->rhs_only) {
    if (r->nseg == 1) {
      mbs_schurFactorRhs(m, w, r->seg[0]);
    } else {
#pragma omp parallel for schedule(static, 1)
      for (int t = 0; t < r->nseg; t++) mbs_schurFactorRhs(m, w, r->seg[t]);
    }
  } else if (r->nseg == 1) {
    err = mbs_schurFactor(m, w, r->seg[0]);
  } else {
#pragma omp parallel for schedule(static, 1)
    for (int t = 0; t < r->nseg; t++) {
      mbsErr e = mbs_schurFactor(m, w, r->seg[t]);
      if (e) {
#pragma omp critical
        err = e;
      }
    }
  }
  if (err) return err;
  // join, children first: W over [up; kept; eliminated] from the segment system and the internal
  // children's reduced systems, then the eliminated ports reduced away
  for (int k = r->nsc - 1; k >= 0; k--) {
    mbsSchurSc *sc = r->sc + k;
    const mbsSchur *s = r->seg[sc->seg];
    const mbsSchurComp *cp = s->comp + sc->comp;
    int n = sc->nup + sc->nk + sc->ne, nk = sc->nup + sc->nk;
    memset(sc->W, 0, sizeof(mbsReal) * (size_t)n * n);
    memset(sc->gw, 0, sizeof(mbsReal) * (size_t)n);
    int pos[64 + 6], *map = pos, *big = NULL;
    if (cp->n > 64) {
      big = malloc(sizeof(int) * (size_t)cp->n);
      if (!big) return mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur join)");
      map = big;
    }
    for (int i = 0; i < cp->nup; i++) map[i] = i; // nup == cp->nup whenever cp->up
    for (int q = cp->p0; q < cp->p0 + cp->np; q++) {
      int l = s->port_body[q], o = cp->nup + s->port_cadr[q] - cp->c0, base;
      if (l >= r->b1)
        base = sc->nup + mbs_schurPortPos(m, sc->kport, sc->nkp, l);
      else
        base = nk + mbs_schurPortPos(m, sc->eport, sc->nep, l);
      for (int i = 0; i < m->body_lamnum[l]; i++) map[o + i] = base + i;
    }
    MBS_FLOPS(mbs_flopSchurAdd(cp->n));
    for (int i = 0; i < cp->n; i++) {
      sc->gw[map[i]] += cp->g[i];
      for (int j = 0; j < cp->n; j++) sc->W[(size_t)n * map[i] + map[j]] += cp->C[cp->n * i + j];
    }
    int wmap[12]; // a light root's soft direction (cp->n <= 12) placed in W
    for (int i = 0; sc->aug && i < cp->n && i < 12; i++) wmap[i] = map[i];
    free(big);
    // the internal children's reduced systems over [their upper port; their kept ports]
    for (int e = 0, kat = 0; e < sc->nep; e++) {
      const mbsSchurSc *ch = r->sc + mbs_schurScOf(r, sc->eport[e]);
      int nc = ch->nup + ch->nk, ep = nk + mbs_schurPortPos(m, sc->eport, sc->nep, sc->eport[e]);
      int own = 0; // own remote ports come first in the kept list
      for (int i = 0; i < cp->np; i++)
        if (s->port_body[cp->p0 + i] >= r->b1) own += m->body_lamnum[s->port_body[cp->p0 + i]];
      int kb = sc->nup + own + kat;
      const mbsReal *Rc = ch->R, *gc = ch->R + (size_t)nc * nc;
      MBS_FLOPS(mbs_flopSchurAdd(nc));
      for (int i = 0; i < nc; i++) {
        int pi = i < ch->nup ? ep + i : kb + i - ch->nup;
        sc->gw[pi] += gc[i];
        for (int j = 0; j < nc; j++) {
          int pj = j < ch->nup ? ep + j : kb + j - ch->nup;
          sc->W[(size_t)n * pi + pj] += Rc[nc * i + j];
        }
      }
      kat += ch->nk;
    }
    if (sc->aug && mbs_schurRankAug(m, r, sc, wmap)) {
      if (!mbs_schurRankAugReduce(m, r, sc))
        return mbs_errSet(MBS_ERR_NUMERIC, "schur: a cut-joint block is not positive definite");
      continue;
    }
    mbs_schurRankLight(m, r, sc, sc->W, sc->gw, n, nk, NULL);
    if (!mbs_schurReduce(nk, sc->ne, sc->W, sc->gw, sc->R, sc->R + (size_t)nk * nk, &r->nfloor))
      return mbs_errSet(MBS_ERR_NUMERIC, "schur: a cut-joint block is not positive definite");
  }
  return MBS_OK;
}

void mbs_schurRankBack(const mbsModel *m, mbsWork *w, mbsSchurRank *r, const mbsReal *lam_up,
                       const mbsReal *lam_low, const int *first, int lim) {
  // the rank-level ports' lambdas into w->lam, then the joined ports' from the parents down
  for (int c = 0, at = 0; c < r->view.ncomp; c++) {
    const mbsSchurComp *vc = r->view.comp + c;
    memcpy(w->lam + m->body_lamadr[vc->root], lam_up + at, sizeof(mbsReal) * (size_t)vc->nup);
    at += vc->nup;
  }
  for (int q = 0; q < r->view.nport; q++) {
    int l = r->view.port_body[q];
    memcpy(w->lam + m->body_lamadr[l], lam_low + r->view.port_cadr[q],
           sizeof(mbsReal) * (size_t)m->body_lamnum[l]);
  }
  for (int k = 0; k < r->nsc; k++) {
    const mbsSchurSc *sc = r->sc + k;
    if (sc->ne == 0) continue;
    mbsReal xk[64], xe[64], *bk = NULL;
    int nk = sc->nup + sc->nk;
    mbsReal *pk = xk, *pe = xe;
    if (nk > 64 || sc->ne > 64) {
      bk = malloc(sizeof(mbsReal) * (size_t)(nk + sc->ne));
      if (!bk) continue; // cannot happen for the sizes the setup allows
      pk = bk, pe = bk + nk;
    }
    memcpy(pk, w->lam + m->body_lamadr[sc->root], sizeof(mbsReal) * (size_t)sc->nup);
    for (int i = 0, o = sc->nup; i < sc->nkp; i++) {
      int l = sc->kport[i];
      memcpy(pk + o, w->lam + m->body_lamadr[l], sizeof(mbsReal) * (size_t)m->body_lamnum[l]);
      o += m->body_lamnum[l];
    }
    const mbsSchur *cs = r->seg[sc->seg];
    const mbsReal *L = cs->lroot ? cs->lroot + MBS_SCHUR_LRW * sc->comp : NULL;
    if (sc->aug && L && L[0] > 2) { // (lambda_u; mu), mu = phi~ - t / sqrt(sigma~)
      int k1 = sc->nup + sc->ne + 1;
      mbsReal xa[8];
      memcpy(xa, pk, sizeof(mbsReal) * (size_t)nk);
      xa[nk] = L[3] > 0 ? L[2] - L[4] / L[3] : 0;
      mbs_schurExpand(nk + 1, sc->ne, sc->aug, sc->aug + (size_t)k1 * k1, xa, pe);
    } else {
      mbs_schurExpand(nk, sc->ne, sc->W, sc->gw, pk, pe);
    }
    mbs_schurRankLight(m, r, sc, NULL, NULL, 0, 0, pe);
    for (int i = 0, o = 0; i < sc->nep; i++) {
      int l = sc->eport[i];
      memcpy(w->lam + m->body_lamadr[l], pe + o, sizeof(mbsReal) * (size_t)m->body_lamnum[l]);
      o += m->body_lamnum[l];
    }
    free(bk);
  }
  // each segment's port values, then its back-substitution
  for (int t = 0; t < r->nseg; t++) {
    mbsSchur *s = r->seg[t];
    for (int c = 0, at = 0; c < s->ncomp; c++) {
      memcpy(r->lam_up[t] + at, w->lam + m->body_lamadr[s->comp[c].root],
             sizeof(mbsReal) * (size_t)s->comp[c].nup);
      at += s->comp[c].nup;
    }
    for (int q = 0; q < s->nport; q++) {
      int l = s->port_body[q];
      memcpy(r->lam_low[t] + s->port_cadr[q], w->lam + m->body_lamadr[l],
             sizeof(mbsReal) * (size_t)m->body_lamnum[l]);
    }
  }
  if (r->nseg == 1) {
    mbs_schurBack(m, w, r->seg[0], r->lam_up[0], r->lam_low[0], first, lim);
  } else {
#pragma omp parallel for schedule(static, 1)
    for (int t = 0; t < r->nseg; t++)
      mbs_schurBack(m, w, r->seg[t], r->lam_up[t], r->lam_low[t], first, lim);
  }
  // roots whose parent is in another segment of this rank
  for (int k = 0; k < r->nsc; k++) {
    int root = r->sc[k].root, p = m->body_parent[root];
    if (first && first[root] > lim) continue;
    if (p >= r->b0 && r->sc[k].parent_sc >= 0) mbs_schurQdd(m, w, root, w->acc + 6 * p);
  }
}
