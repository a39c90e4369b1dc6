/// \file schur_par_light.c
/// Light leaves at rank cuts (docs/formulation.md 4.9, src/schur/schur_light.c): the light bodies
/// of this rank whose children all lie on other ranks (once), and in the component-tree passes the
/// change of variables of their children's cut joints in the component that eliminates them (after
/// the children's systems are added) and back on the lambdas before they go down. Only that
/// component changes its unknowns, so no other rank needs to know. Full and distributed-memory
/// (local) models alike (a local model holds the remote children with their joints and masses,
/// and their stages come from the ghost states); any number of thread segments per rank (the leaf's
/// slot lives in the segment that holds it and its parent; the thread join adds nothing to the
/// leaf's term, which touches only rank ports); no loops, the exact merge (the passes:
/// mbsp_schurCreate turns the scan and the contraction off when any rank has a light leaf);
/// elsewhere nothing changes. MBSPAR_SCHUR_LIGHT=0 turns it off (tests of the accuracy guard).
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "schur_par_private.h"

// the segment of the rank that holds body b
static mbsSchur *mbsp_schurLightSeg(const mbspSchur *sp, int b) {
  const mbsSchurRank *rk = sp->rk;
  for (int t = 0; t < rk->nseg; t++)
    if (b >= rk->seg[t]->s0 && b < rk->seg[t]->s1) return rk->seg[t];
  return NULL;
}

// 1 if b is a light leaf this rank takes: its parent in the same segment
static int mbsp_schurLightIs(const mbspSchur *sp, int b) {
  const mbsSchur *s = mbsp_schurLightSeg(sp, b);
  return s && sp->m->body_parent[b] >= s->s0 && mbs_schurLightLeaf(sp->m, b, sp->b1);
}

// light roots (src/schur/schur_lightroot.c): the rank-level components without lower ports whose
// upper port is a rank port and whose root is a light root of its segment; their segments'
// slots marked (the factor then leaves the soft part out, the passes take it)
static mbsErr mbsp_schurLightRootSetup(mbspSchur *sp) {
  const mbsModel *m = sp->m;
  const mbsSchur *v = sp->seg;
  sp->lroot = 0;
  for (int c = 0; c < v->ncomp; c++) {
    const mbsSchurComp *vc = v->comp + c;
    mbsSchur *s = mbsp_schurLightSeg(sp, vc->root);
    if (!vc->up || vc->nc > 6 || vc->nup > 6 || !s) continue;
    int sc = s->body_comp[vc->root - s->s0], joined = 0; // its ports all joined inside the rank
    for (int k = 0; k < sp->rk->nsc; k++)
      if (sp->rk->sc[k].root == vc->root) joined = vc->nc == 0 && sp->rk->sc[k].aug != NULL;
    if (s->comp[sc].root != vc->root || !s->comp[sc].up || (s->comp[sc].nc != vc->nc && !joined) ||
        (vc->nc > 0 && !s->comp[sc].spath) || !mbs_schurLightRoot(m, s, vc->root))
      continue;
    if (!s->lroot && !(s->lroot = calloc((size_t)s->ncomp * MBS_SCHUR_LRW + 1, sizeof(mbsReal))))
      return mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur light)");
    s->lroot[MBS_SCHUR_LRW * sc] = 1;
    sp->lroot++;
    if (vc->nc > 0) { // the system with the soft unknown mu (mbsp_schurLightRootAug)
      size_t k = (size_t)vc->n + 1;
      if (!sp->lr_aug && !(sp->lr_aug = calloc((size_t)v->ncomp, sizeof(double *))))
        return mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur light)");
      if (!(sp->lr_aug[c] = calloc(k * k + k, sizeof(double))))
        return mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur light)");
    }
  }
  return MBS_OK;
}

mbsErr mbsp_schurLightSetup(mbspSchur *sp) {
  const mbsModel *m = sp->m;
  const mbsSchur *v = sp->seg;
  sp->light = 0, sp->light_ok = 0;
  const char *env = getenv("MBSPAR_SCHUR_LIGHT"); // "0": off (tests: the layout as before)
  if ((env && strcmp(env, "0") == 0) || sp->size < 2 || sp->iface == MBSP_IFACE_JCG ||
      m->nloop > 0 || sp->b1 - sp->b0 != sp->start[sp->rank + 1] - sp->start[sp->rank])
    return MBS_OK;
  sp->light_ok = 1; // the layout's light leaves are taken exactly (mbsp_schurLightWarn)
  MBS_CALL(mbsp_schurLightRootSetup(sp));
  int n = 0;
  for (int b = sp->b0; b < sp->b1; b++) n += mbsp_schurLightIs(sp, b);
  if (n == 0) return MBS_OK;
  sp->light_b = malloc(sizeof(int) * (size_t)n * 3);
  if (!sp->light_b) return mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur light)");
  for (int b = sp->b0; b < sp->b1; b++) {
    if (!mbsp_schurLightIs(sp, b)) continue;
    mbsSchur *s = mbsp_schurLightSeg(sp, b);
    if (!s->light && !(s->light = calloc((size_t)s->nport * MBS_SCHUR_LW + 1, sizeof(mbsReal))))
      return mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur light)");
    int l = m->child_list[m->body_childadr[b]], q = 0, k = 0;
    while (q < v->nport && v->port_body[q] != l) q++; // the rank-level port of its first child
    while (k < s->nport && s->port_body[k] != l) k++;
    if (q == v->nport || k == s->nport) continue;
    int c = 0;
    while (c + 1 < v->ncomp && !(q >= v->comp[c].p0 && q < v->comp[c].p0 + v->comp[c].np)) c++;
    sp->light_b[3 * sp->light] = b, sp->light_b[3 * sp->light + 1] = c;
    sp->light_b[3 * sp->light + 2] = q;
    s->light[MBS_SCHUR_LW * k] = 1;
    sp->light++;
  }
  return MBS_OK;
}

// the light slot of port body l (child of the light leaf b) in the segment that holds b
static mbsReal *mbsp_schurLightSlot(const mbspSchur *sp, int b, int l) {
  const mbsSchur *s = mbsp_schurLightSeg(sp, b);
  for (int k = 0; s && s->light && k < s->nport; k++)
    if (s->port_body[k] == l) return s->light + MBS_SCHUR_LW * k;
  return NULL;
}

void mbsp_schurLightUp(mbspSchur *sp, const mbsWork *w, int c) {
  const mbsModel *m = sp->m;
  mbsSchurComp *cp = sp->seg->comp + c;
  mbsReal R[MBS_SCHUR_LIGHTMAX * MBS_SCHUR_LIGHTMAX];
  for (int i = 0; i < sp->light; i++) {
    if (sp->light_b[3 * i + 1] != c) continue;
    int b = sp->light_b[3 * i], q = sp->light_b[3 * i + 2], nl;
    int o = cp->nup + sp->seg->port_cadr[q] - cp->c0;
    mbsReal sd = mbs_schurLightBasis(m, w, b, R, &nl);
    mbsReal *L = mbsp_schurLightSlot(sp, b, sp->seg->port_body[q]);
    mbs_schurLightApply(cp->n, o, nl, R, cp->C, cp->g);
    L[3] = sd;
    if (L[0] > 1) { // the leaf's term in (y, t): Ds/D at (t, t), -phi sqrt(Ds) at t
      int t = o + nl - 1;
      cp->C[(size_t)cp->n * t + t] += sd * sd * L[1];
      cp->g[t] -= L[2] * sd;
    }
  }
}

void mbsp_schurLightDown(mbspSchur *sp, const mbsWork *w, int c) {
  const mbsModel *m = sp->m;
  mbsReal R[MBS_SCHUR_LIGHTMAX * MBS_SCHUR_LIGHTMAX];
  for (int i = 0; i < sp->light; i++) {
    if (sp->light_b[3 * i + 1] != c) continue;
    int b = sp->light_b[3 * i], q = sp->light_b[3 * i + 2], nl;
    mbsReal *x = sp->lam_low + sp->seg->port_cadr[q];
    mbsReal *L = mbsp_schurLightSlot(sp, b, sp->seg->port_body[q]);
    mbs_schurLightBasis(m, w, b, R, &nl);
    L[4] = x[nl - 1];
    mbs_schurLightVec(nl, R, x);
  }
}

const int *mbsp_schurLightBlocks(mbspSchur *sp, int c) {
  const mbsModel *m = sp->m;
  const mbsSchur *v = sp->seg;
  const mbsSchurComp *cp = v->comp + c;
  int *blk = sp->light_blk;
  for (int q = cp->p0; q < cp->p0 + cp->np; q++)
    for (int i = 0; i < m->body_lamnum[v->port_body[q]]; i++) blk[v->port_cadr[q] - cp->c0 + i] = q;
  for (int i = 0; i < sp->light; i++) {
    if (sp->light_b[3 * i + 1] != c) continue;
    int b = sp->light_b[3 * i], q = sp->light_b[3 * i + 2];
    for (int k = 0; k < m->body_childnum[b] && q + k < v->nport; k++)
      for (int j = 0; j < m->body_lamnum[v->port_body[q + k]]; j++)
        blk[v->port_cadr[q + k] - cp->c0 + j] = q;
  }
  return blk;
}

// the slot of view component c's light root, NULL if it is none
static mbsReal *mbsp_schurLightRootSlot(const mbspSchur *sp, int c) {
  int r = sp->seg->comp[c].root;
  mbsSchur *s = mbsp_schurLightSeg(sp, r);
  if (!s || !s->lroot) return NULL;
  return s->lroot + MBS_SCHUR_LRW * s->body_comp[r - s->s0];
}

void mbsp_schurLightRootTail(const mbspSchur *sp, int c, double *tail) {
  const mbsReal *L = mbsp_schurLightRootSlot(sp, c);
  int nup = sp->seg->comp[c].nup;
  for (int i = 0; i < nup + 2; i++) tail[i] = 0;
  if (!L || L[0] < 2) return;
  for (int i = 0; i < nup; i++) tail[i] = L[11 + i];
  tail[nup] = L[1], tail[nup + 1] = L[2];
}

void mbsp_schurLightRootT(mbspSchur *sp, int c, double t) {
  mbsReal *L = mbsp_schurLightRootSlot(sp, c);
  if (L) L[4] = t;
}

void mbsp_schurLightRootUp(mbspSchur *sp, int c) {
  const mbsModel *m = sp->m;
  const mbsSchur *v = sp->seg;
  mbsSchurComp *cp = v->comp + c;
  mbsReal R[36];
  for (int q = cp->p0; q < cp->p0 + cp->np; q++) {
    int nl = m->body_lamnum[v->port_body[q]], o = cp->nup + v->port_cadr[q] - cp->c0;
    const double *tail = sp->rbuf + sp->port_radr[q] + nl * nl + nl + 1;
    const mbsReal sigma = tail[nl], sd = sigma > 0 ? sqrt(sigma) : 0;
    if (nl > 6 || !mbs_schurLightR(tail, nl, sd, R)) continue;
    // the soft part (v v^T / sigma, -v phi) in (y, t): sd^2 / sigma at (t, t), phi sd at t
    mbs_schurLightApply(cp->n, o, nl, R, cp->C, cp->g);
    int t = o + nl - 1;
    cp->C[(size_t)cp->n * t + t] += sd * sd / sigma;
    cp->g[t] += tail[nl + 1] * sd;
  }
}

void mbsp_schurLightRootDown(mbspSchur *sp, int c) {
  const mbsModel *m = sp->m;
  const mbsSchur *v = sp->seg;
  const mbsSchurComp *cp = v->comp + c;
  mbsReal R[36];
  for (int q = cp->p0; q < cp->p0 + cp->np; q++) {
    int nl = m->body_lamnum[v->port_body[q]];
    const double *tail = sp->rbuf + sp->port_radr[q] + nl * nl + nl + 1;
    const mbsReal sigma = tail[nl], sd = sigma > 0 ? sqrt(sigma) : 0;
    double *x = sp->lam_low + v->port_cadr[q], *out = sp->lr_send + v->port_cadr[q] + q;
    out[nl] = 0;
    if (nl <= 6 && mbs_schurLightR(tail, nl, sd, R)) { // lambda = R (y; t), t to the child
      out[nl] = x[nl - 1];
      mbs_schurLightVec(nl, R, x);
    }
    memcpy(out, x, sizeof(double) * (size_t)nl);
  }
}

// a light root with lower ports: its system over (upper port, mu, lower ports), mu = w^T x /
// sigma + phi the soft part's acceleration, w = (v; P_r^T q) (src/schur/schur_lightroot.c):
// [C_0 w; w^T -sigma] (x; mu) = (g_0; -sigma phi); cp points to it until the reduction is sent
// (the lower ports' changes of variables and the elimination then see n + 1 unknowns, nup + 1
// upper ones)
int mbsp_schurLightRootAug(mbspSchur *sp, int c, mbsSchurComp *save) {
  mbsSchurComp *cp = sp->seg->comp + c;
  const mbsReal *L = mbsp_schurLightRootSlot(sp, c);
  if (!sp->lr_aug || !sp->lr_aug[c] || !L || L[0] < 2) return 0;
  int n = cp->n, nup = cp->nup, k = n + 1;
  double *A = sp->lr_aug[c], *ga = A + (size_t)k * k;
  for (int i = 0; i < n; i++) {
    int ii = i < nup ? i : i + 1;
    ga[ii] = cp->g[i];
    for (int j = 0; j < n; j++)
      A[(size_t)k * ii + (j < nup ? j : j + 1)] = cp->C[(size_t)n * i + j];
    const double wi = i < nup ? L[11 + i] : L[23 + i - nup];
    A[(size_t)k * ii + nup] = A[(size_t)k * nup + ii] = wi;
  }
  A[(size_t)k * nup + nup] = -L[1];
  ga[nup] = -L[1] * L[2];
  *save = *cp;
  cp->C = A, cp->g = ga, cp->n = k, cp->nup = nup + 1;
  return 1;
}

// after the reduction S (nup + 1 unknowns, mu last) of an augmented component: the message's
// system on the upper port, S_0 and g_0, and its tail (w~, sigma~, phi~) in sb; cp restored
void mbsp_schurLightRootSend(mbspSchur *sp, int c, const mbsSchurComp *save, const double *S,
                             double *sb) {
  mbsSchurComp *cp = sp->seg->comp + c;
  mbsReal *L = mbsp_schurLightRootSlot(sp, c);
  int nup = save->nup, k = nup + 1;
  const double *gs = S + k * k;
  double *tail = sb + nup * nup + nup + 1;
  for (int i = 0; i < nup; i++) {
    for (int j = 0; j < nup; j++) sb[nup * i + j] = S[k * i + j];
    sb[nup * nup + i] = gs[i];
    tail[i] = S[k * i + nup];
  }
  const double sig = -S[k * nup + nup];
  tail[nup] = sig, tail[nup + 1] = sig > 0 ? -gs[nup] / sig : 0;
  L[2] = tail[nup + 1], L[3] = sig > 0 ? sqrt(sig) : 0; // mu = phi~ - t / sqrt(sigma~)
  L[0] = 3;                                             // augmented in this evaluation
  *cp = *save;
}

// the expansion of an augmented component: the lower ports' lambdas from (lambda_u; mu)
int mbsp_schurLightRootExpand(mbspSchur *sp, int c, const double *lam_u) {
  const mbsSchurComp *cp = sp->seg->comp + c;
  const mbsReal *L = mbsp_schurLightRootSlot(sp, c);
  if (!sp->lr_aug || !sp->lr_aug[c] || !L || L[0] < 3) return 0; // (3 also after the join's)
  int nup = cp->nup, k = cp->n + 1;
  double x[8], *A = sp->lr_aug[c];
  memcpy(x, lam_u, sizeof(double) * (size_t)nup);
  x[nup] = L[3] > 0 ? L[2] - L[4] / L[3] : 0;
  mbs_schurExpand(nup + 1, cp->nc, A, A + (size_t)k * k, x, sp->lam_low + cp->c0);
  return 1;
}

int mbsp_schurLightRootsCovered(const mbspSchur *sp) {
  const mbsModel *m = sp->m;
  const mbsSchur *v = sp->seg;
  if (!sp->light_ok) return 0;
  for (int c = 0; c < v->ncomp; c++) { // every rank-level root lighter than its remote parent
    const mbsSchurComp *vc = v->comp + c;
    int r = vc->root, light = 0;
    if (!vc->up) continue;
    if (!m->local) {
      int p = m->body_parent[r];
      light = m->body_mass[r] < m->body_mass[p] &&
              mbs_partitionIsLight(m->body_mass[p], mbs_jntIsFixed(m->body_jnttype[p]),
                                   m->body_mass[r], mbs_jntIsFixed(m->body_jnttype[r]));
    } else { // the structure pass's light joints (a light root: parent entry < 0)
      for (int k = 0; k < m->nrun_light && !light; k++)
        light = m->run_light[2 * k] == m->body_gid[r] && m->run_light[2 * k + 1] < 0;
    }
    const mbsReal *L = light ? mbsp_schurLightRootSlot(sp, c) : NULL;
    if (light && !(L && L[0] > 0)) return 0;
  }
  return 1;
}
