/// \file schur_pre.c
/// The overlapped factor (docs/formulation.md 4.4): the part of a segment's elimination that reads
/// positions alone (ABA's articulated inertias and 1/D, the spikes' P and Theta) run for the last
/// bodies of the segment while the kinematics prefix's messages travel (the engine's idle hook in
/// mbsp_exscan), and its bias part (pA, u, the spikes' gam) by mbs_schurFactor after the
/// velocities. The split takes inertia-form bodies on axis-specialised revolute joints below the
/// component's root (a chain rank's path, with or without a spike), from the segment's last body
/// down; the same arithmetic in the same order per quantity, so the results are bitwise those of
/// the whole factor.
#include <stdlib.h>
#include <string.h>
#include "schur_private.h"
#include "body.h"

mbsErr mbs_schurPreEnable(mbsSchurRank *r, int cap) {
  if (r->nseg != 1 || cap <= 0) return MBS_OK;
  mbsSchur *s = r->seg[0];
  if (cap > s->nbody) cap = s->nbody;
  free(s->pre);
  s->pre = calloc((size_t)cap * MBS_SCHUR_PREW, sizeof(mbsReal));
  MBS_CHECK(s->pre, MBS_ERR_NOMEM, "out of memory (schur overlapped factor)");
  s->pre_cap = cap, s->pre_n = 0, s->pre_end = 0;
  return MBS_OK;
}

// body b (the next one down) in the split: inertia form, axis-specialised revolute joint, parent
// in the segment, not its component's root, a rigid body; on a path only a path's spike (spath 1)
// and not a light leaf's port at the last body (schur_light.c)
static int mbs_schurPreTakes(const mbsModel *m, const mbsSchur *s, int b) {
  int lb = b - s->s0;
  const mbsSchurComp *cp = s->comp + s->body_comp[lb];
  if (!s->mode[lb] || !mbs_jntSpecial(m, b) || m->body_parent[b] < s->s0 || b == cp->root ||
      mbs_bodyKindOf(m, b) != MBS_BODY_RIGID)
    return 0;
  if (!s->onpath[lb]) return 1;
  if (cp->spath != 1) return 0;
  return b != cp->last || mbs_schurLightAt(m, s, b) < 0;
}

int mbs_schurPreCount(const mbsModel *m, const mbsSchur *s, int n) {
  int k = 0;
  while (k < n && s->s1 - 1 - k >= s->s0 && mbs_schurPreTakes(m, s, s->s1 - 1 - k)) k++;
  return k;
}

int mbs_schurRankPre(const mbsModel *m, mbsWork *w, mbsSchurRank *r, int n) {
  if (r->nseg != 1) return 0;
  mbsSchur *s = r->seg[0];
  if (n < 0) {
    s->pre_n = 0, s->pre_end = 0;
    return 0;
  }
  int done = 0;
  while (done < n && !s->pre_end && s->pre_n < s->pre_cap) {
    int b = s->s1 - 1 - s->pre_n;
    if (b < s->s0 || !mbs_schurPreTakes(m, s, b)) {
      s->pre_end = 1;
      break;
    }
    int lb = b - s->s0;
    mbsSchurComp *cp = s->comp + s->body_comp[lb];
    mbsReal *st = s->pre + (size_t)MBS_SCHUR_PREW * s->pre_n;
    // (a body redone whole by mbs_schurFactor after a failed pivot starts these records again)
    if (s->selfinit[lb]) mbs_abaBodyInitInertia(m, w, b);
    if (s->initp[lb]) mbs_abaBodyInitInertia(m, w, m->body_parent[b]);
    if (s->onpath[lb] && b == cp->last) mbs_schurSpathStartP(m, w, s, cp);
    if (!mbs_abaBodyBackInertia(m, w, b, st)) {
      s->pre_end = 1;
      break;
    }
    if (s->onpath[lb])
      mbs_abaSpikeInertia(m, w, b, cp->nc, s->spP + MBS_SPW * s->body_comp[lb],
                          s->spP + MBS_SPW * s->body_comp[lb] + MBS_SPW_TH, st + MBS_ABA_STASH);
    s->pre_n++, done++;
  }
  return done;
}

int mbs_schurPreBias(const mbsModel *m, mbsWork *w, mbsSchur *s) {
  int b = s->s1 - 1;
  for (int k = 0; k < s->pre_n; k++, b--) {
    int lb = b - s->s0;
    const mbsSchurComp *cp = s->comp + s->body_comp[lb];
    const mbsReal *st = s->pre + (size_t)MBS_SCHUR_PREW * k;
    if (s->selfinit[lb]) mbs_abaBodyInitRhs(m, w, b);
    if (s->initp[lb]) mbs_abaBodyInitRhs(m, w, m->body_parent[b]);
    if (s->onpath[lb] && b == cp->last) mbs_schurSpathStartBias(m, w, s, cp);
    mbs_abaBodyBackBias(m, w, b, st);
    if (s->onpath[lb])
      mbs_abaSpikeBias(m, w, b, cp->nc, st + MBS_ABA_STASH,
                       s->spP + MBS_SPW * s->body_comp[lb] + MBS_SPW_GA);
  }
  s->pre_n = 0, s->pre_end = 0;
  return b;
}
