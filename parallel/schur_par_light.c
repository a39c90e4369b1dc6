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

mbsErr mbsp_schurLightSetup(mbspSchur *sp) {
  const mbsModel *m = sp->m;
  const mbsSchur *v = sp->seg;
  sp->light = 0, sp->light_ok = 0;
  const char *env = getenv("MBSPAR_SCHUR_LIGHT"); // "0": off (tests: the layout as before)
  if ((env && strcmp(env, "0") == 0) || sp->size < 2 || sp->iface == MBSP_IFACE_JCG ||
      m->nloop > 0 || sp->b1 - sp->b0 != sp->start[sp->rank + 1] - sp->start[sp->rank])
    return MBS_OK;
  sp->light_ok = 1; // the layout's light leaves are taken exactly (mbsp_schurLightWarn)
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
