/// \file schur_par_light.c
/// Light leaves at rank cuts (docs/formulation.md 4.9, src/schur/schur_light.c): which cut joints
/// of this rank's components are light-leaf cuts (once), their change of variables applied to the
/// rank-level port systems before the merge and undone on the merged lambdas after it. Every rank
/// decides from the model and the decomposition alone, so both sides of a cut agree without a
/// message. Full models, one segment per rank, no loops, the exact merge; elsewhere nothing
/// changes.
#include <stdlib.h>
#include <string.h>
#include "schur_par_private.h"

mbsErr mbsp_schurLightSetup(mbspSchur *sp) {
  const mbsModel *m = sp->m;
  const mbsSchur *v = sp->seg;
  sp->light = 0;
  if (sp->size < 2 || sp->iface == MBSP_IFACE_JCG || m->nloop > 0 || sp->rk->nseg != 1 ||
      m->nbody != sp->start[sp->size] || sp->b0 != sp->start[sp->rank] ||
      sp->b1 != sp->start[sp->rank + 1])
    return MBS_OK;
  mbsSchur *s = sp->rk->seg[0];
  sp->light_up = calloc((size_t)v->ncomp + 1, 1);
  sp->light_low = calloc((size_t)v->nport + 1, 1);
  if (!sp->light_up || !sp->light_low)
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur light leaves)");
  int nlow = 0;
  for (int c = 0; c < v->ncomp; c++)
    if (v->comp[c].up && mbs_schurLightCut(m, sp->start, sp->size, v->comp[c].root))
      sp->light_up[c] = 1, sp->light = 1;
  for (int q = 0; q < v->nport; q++)
    if (mbs_schurLightCut(m, sp->start, sp->size, v->port_body[q])) sp->light_low[q] = 1, nlow++;
  if (nlow == 0) return MBS_OK;
  sp->light = 1;
  s->light = calloc((size_t)s->nport * MBS_SCHUR_LW + 1, sizeof(mbsReal));
  if (!s->light) return mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur light leaves)");
  for (int q = 0; q < v->nport; q++)
    for (int k = 0; k < s->nport && sp->light_low[q]; k++)
      if (s->port_body[k] == v->port_body[q]) s->light[MBS_SCHUR_LW * k] = 1;
  return MBS_OK;
}

// the segment's light slot of port body l
static mbsReal *mbsp_schurLightSlot(const mbspSchur *sp, int l) {
  const mbsSchur *s = sp->rk->seg[0];
  for (int k = 0; k < s->nport; k++)
    if (s->port_body[k] == l) return s->light + MBS_SCHUR_LW * k;
  return NULL;
}

void mbsp_schurLightFwd(mbspSchur *sp, const mbsWork *w) {
  const mbsModel *m = sp->m;
  mbsSchur *v = sp->seg;
  mbsReal R[36];
  for (int c = 0; c < v->ncomp; c++) {
    mbsSchurComp *cp = v->comp + c;
    if (sp->light_up[c]) {
      int nl = m->body_lamnum[cp->root];
      mbs_schurLightBasis(m, w, cp->root, R);
      mbs_schurLightApply(cp->n, 0, nl, R, cp->C, cp->g);
    }
    for (int q = cp->p0; q < cp->p0 + cp->np; q++) {
      if (!sp->light_low[q]) continue;
      int l = v->port_body[q], nl = m->body_lamnum[l], o = cp->nup + v->port_cadr[q] - cp->c0;
      mbsReal sd = mbs_schurLightBasis(m, w, l, R), *L = mbsp_schurLightSlot(sp, l);
      mbs_schurLightApply(cp->n, o, nl, R, cp->C, cp->g);
      if (L) L[3] = sd;
      if (L && L[0] > 1) { // the leaf's term in (y, t): Ds/D at (t, t), -phi sqrt(Ds) at t
        int t = o + nl - 1;
        cp->C[(size_t)cp->n * t + t] += sd * sd * L[1];
        cp->g[t] -= L[2] * sd;
      }
    }
  }
}

void mbsp_schurLightBack(mbspSchur *sp, const mbsWork *w) {
  const mbsModel *m = sp->m;
  const mbsSchur *v = sp->seg;
  mbsReal R[36];
  for (int c = 0, at = 0; c < v->ncomp; c++) {
    const mbsSchurComp *cp = v->comp + c;
    if (sp->light_up[c]) {
      mbs_schurLightBasis(m, w, cp->root, R);
      mbs_schurLightVec(m->body_lamnum[cp->root], R, sp->lam_up + at);
    }
    at += cp->nup;
  }
  for (int q = 0; q < v->nport; q++) {
    if (!sp->light_low[q]) continue;
    int l = v->port_body[q], nl = m->body_lamnum[l];
    mbsReal *x = sp->lam_low + v->port_cadr[q], *L = mbsp_schurLightSlot(sp, l);
    if (L) L[4] = x[nl - 1];
    mbs_schurLightBasis(m, w, l, R);
    mbs_schurLightVec(nl, R, x);
  }
}
