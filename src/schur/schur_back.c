/// \file schur_back.c
/// Back-substitution of a segment of the exact solver (root-first: the lambdas from the ports,
/// the accelerations, qdd and joint wrenches), and the serial driver over a partition into
/// segments, the oracle of the parallel merge (docs/formulation.md 4.2, 4.3).
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "schur_private.h"
#ifdef _OPENMP
#include <omp.h>
#endif

// ---------------------------------------------------------------- back-substitution

void mbs_schurQdd(const mbsModel *m, mbsWork *w, int b, const mbsReal *ap) {
  int nd = m->body_dofnum[b], da = m->body_dofadr[b];
  if (nd == 0) return;
  MBS_FLOPS(mbs_flopSchurQdd(nd));
  mbsReal t[6], d[6], sd[6], SS[36];
  const mbsReal *S = w->sdof + 6 * da;
  mbsu_xMotion(w->xpar + 12 * b, ap, t);
  for (int i = 0; i < 6; i++) d[i] = w->acc[6 * b + i] - t[i] - w->cacc[6 * b + i];
  if (nd == 1) {
    w->qdd[da] = mbsu_dot6(S, d) / mbsu_dot6(S, S);
    return;
  }
  for (int i = 0; i < nd; i++) {
    sd[i] = mbsu_dot6(S + 6 * i, d);
    for (int j = 0; j < nd; j++) SS[nd * i + j] = mbsu_dot6(S + 6 * i, S + 6 * j);
  }
  if (mbsu_cholFactor(SS, nd)) mbsu_cholSolve(SS, nd, sd);
  for (int i = 0; i < nd; i++) w->qdd[da + i] = sd[i];
}

// f -= X^T (T lam) for joint c: the wrench its constraint force puts on the parent
void mbs_schurSubParentWrench(const mbsModel *m, const mbsWork *w, const mbsSchur *s, int c,
                              const mbsReal *lam, mbsReal *f) {
  int nl = m->body_lamnum[c];
  mbsReal tl[6] = {0, 0, 0, 0, 0, 0}, t[6];
  MBS_FLOPS(mbs_flopSchurSubWrench(nl, mbs_schurCached(s, c), mbs_flopSchurT(m, s, c)));
  if (c >= s->s0 && c < s->s1 && s->kind[c - s->s0] == 1) {
    const mbsReal *n = s->tn + 6 * (c - s->s0);
    for (int i = 0; i < 3; i++) tl[i] = n[i] * lam[0] + n[3 + i] * lam[1];
    tl[3] = lam[2], tl[4] = lam[3], tl[5] = lam[4];
  } else {
    mbsReal T[36];
    mbs_schurT(m, w, s, c, T);
    for (int k = 0; k < nl; k++)
      for (int r = 0; r < 6; r++) tl[r] += T[6 * k + r] * lam[k];
  }
  mbsu_xTForce(w->xpar + 12 * c, tl, t);
  for (int r = 0; r < 6; r++) f[r] -= t[r];
}

void mbs_schurBack(const mbsModel *m, mbsWork *w, mbsSchur *s, const mbsReal *lam_up,
                   const mbsReal *lam_low, const int *first, int lim) {
  mbsReal a0g[6];
  mbs_baseAccel(m, !w->homog, a0g);
  // the roots' lambda: given (upper port) or from the ground pivot
  for (int k = 0, at = 0; k < s->ncomp; k++) {
    mbsSchurComp *cp = s->comp + k;
    int r = cp->root, lr = r - s->s0, nl = m->body_lamnum[r];
    mbsReal *lam = w->lam + m->body_lamadr[r];
    if (cp->up) {
      memcpy(lam, lam_up + at, (size_t)nl * sizeof(mbsReal));
      at += nl;
    } else if (nl > 0 && m->body_parent[r] < 0 && !s->mode[lr]) {
      const mbsReal *V = s->V + s->v_adr[lr], *rec = s->rec + s->rec_adr[lr];
      int vw = s->v_w[lr], vc = s->v_c0[lr];
      MBS_FLOPS(mbs_flopSchurLamRoot(nl, vw));
      for (int i = 0; i < nl; i++) {
        mbsReal v = MBS_REC_Y(rec)[i];
        for (int j = 0; j < vw; j++) v += V[vw * i + j] * lam_low[vc + j];
        lam[i] = v;
      }
      mbs_bwdPacked(MBS_REC_L(rec, nl), nl, lam);
    }
  }
  // spath components: the spikes p = P pi of the path's bodies, from the port up
  int tree = 0;
  for (int k = 0; k < s->ncomp; k++) {
    const mbsSchurComp *cp = s->comp + k;
    if (cp->spath == 2) tree = 1;
    if (cp->spath != 1) continue;
    int l = s->port_body[cp->p0], nl = m->body_lamnum[l];
    const mbsReal *pi = lam_low + s->port_cadr[cp->p0];
    mbsReal T[36], G[36], p[6] = {0, 0, 0, 0, 0, 0};
    MBS_FLOPS(mbs_flopSpathVec(nl, mbs_flopSchurT(m, s, l)));
    mbs_schurT(m, w, s, l, T);
    mbs_schurG(w->xpar + 12 * l, T, nl, G);
    for (int j = 0; j < nl; j++)
      for (int r = 0; r < 6; r++) p[r] += G[6 * j + r] * pi[j];
    if (s->light) mbs_schurLightSpikeBack(m, w, s, cp->last, p);
    for (int b = cp->last;; b = m->body_parent[b]) {
      memcpy(s->spk + 6 * (b - s->s0), p, sizeof p);
      if (b == cp->root) break;
      mbs_abaSpikeVec(m, w, b, p);
    }
  }
  // trees of paths: p_b = sum of b's own ports' G pi and its path children's spikes carried up
  // (the root below an upper port gathers its children's alone: its own ports are its
  // compliance-form port wrenches below)
  for (int b = s->s0; b < s->s1 && tree; b++) {
    const mbsSchurComp *cp = s->comp + s->body_comp[b - s->s0];
    if (cp->spath == 2 && (s->onpath[b - s->s0] || b == cp->root))
      memset(s->spk + 6 * (b - s->s0), 0, 6 * sizeof(mbsReal));
  }
  for (int b = s->s1 - 1; b >= s->s0 && tree; b--) {
    int lb = b - s->s0;
    const mbsSchurComp *cp = s->comp + s->body_comp[lb];
    if (cp->spath != 2 || !s->onpath[lb]) continue;
    mbsReal *p = s->spk + 6 * lb, v[6];
    const int *ch = m->child_list + m->body_childadr[b];
    for (int k = 0; k < m->body_childnum[b]; k++) {
      int l = ch[k], nl = m->body_lamnum[l], q = cp->p0;
      if (!mbs_schurIsPort(m, s, l)) continue;
      while (s->port_body[q] != l) q++;
      const mbsReal *pi = lam_low + s->port_cadr[q];
      mbsReal T[36], G[36];
      MBS_FLOPS(mbs_flopSpathVec(nl, mbs_flopSchurT(m, s, l)));
      mbs_schurT(m, w, s, l, T);
      mbs_schurG(w->xpar + 12 * l, T, nl, G);
      for (int j = 0; j < nl; j++)
        for (int r = 0; r < 6; r++) p[r] += G[6 * j + r] * pi[j];
    }
    if (s->light) mbs_schurLightSpikeBack(m, w, s, b, p);
    if (b == cp->root) continue;
    memcpy(v, p, sizeof v);
    mbs_abaSpikeVec(m, w, b, v);
    MBS_FLOPS(6);
    mbsReal *pp = s->spk + 6 * (m->body_parent[b] - s->s0);
    for (int r = 0; r < 6; r++) pp[r] += v[r];
  }
  // top-down: children's lambda from the parent's open wrench, then the body's acceleration
  for (int b = s->s0; b < s->s1; b++) {
    int lb = b - s->s0, nl = m->body_lamnum[b], p = m->body_parent[b];
    if (first && first[b] > lim) continue; // not needed, nor is its subtree
    if (s->mode[lb]) { // inertia form: ABA's pass 3, then lambda = T^T (joint wrench)
      mbsReal lsp;
      if (s->onpath[lb])
        mbs_abaBodyFwdSpikeSp(m, w, b, p < 0 ? a0g : w->acc + 6 * p, s->spk + 6 * lb,
                              s->light && mbs_schurLightSp(m, s, b, &lsp) ? &lsp : NULL);
      else
        mbs_abaBodyFwd(m, w, b, p < 0 ? a0g : w->acc + 6 * p);
      if (w->homog) continue; // a loop layer's unit solve: the accelerations alone
      const mbsReal *jf = w->jfrc + 6 * b;
      mbsReal *lam = w->lam + m->body_lamadr[b];
      MBS_FLOPS(mbs_flopSchurLamInertia(nl, s->kind[lb] == 1, mbs_flopSchurT(m, s, b)));
      if (s->kind[lb] == 1) {
        const mbsReal *n = s->tn + 6 * lb;
        lam[0] = mbsu_dot3(n, jf), lam[1] = mbsu_dot3(n + 3, jf);
        lam[2] = jf[3], lam[3] = jf[4], lam[4] = jf[5];
      } else if (nl > 0) {
        mbsReal T[36];
        mbs_schurT(m, w, s, b, T);
        for (int k = 0; k < nl; k++) lam[k] = mbsu_dot6(T + 6 * k, jf);
      }
      continue;
    }
    const mbsReal *rec = s->rec + s->rec_adr[lb];
    mbsReal f[6] = {0, 0, 0, 0, 0, 0}, t6[6];
    const mbsReal *lam = w->lam + m->body_lamadr[b];
    MBS_FLOPS(mbs_flopSchurAcc(nl, s->kind[lb] == 1, mbs_flopSchurT(m, s, b)));
    if (nl > 0) { // T lam
      if (s->kind[lb] == 1) {
        const mbsReal *n = s->tn + 6 * lb;
        for (int i = 0; i < 3; i++) f[i] = n[i] * lam[0] + n[3 + i] * lam[1];
        f[3] = lam[2], f[4] = lam[3], f[5] = lam[4];
      } else {
        mbsReal T[36];
        mbs_schurT(m, w, s, b, T);
        for (int k = 0; k < nl; k++)
          for (int r = 0; r < 6; r++) f[r] += T[6 * k + r] * lam[k];
      }
    }
    // joint wrench F tau + T lam
    mbsReal *jf = w->jfrc + 6 * b;
    for (int r = 0; r < 6; r++) jf[r] = MBS_REC_KW(rec)[r] + f[r];
    const int *ch = m->child_list + m->body_childadr[b];
    int nch = m->body_childnum[b];
    // the lower ports' wrenches were open when the children were absorbed
    for (int k = 0; k < nch; k++) {
      int l = ch[k];
      if (!mbs_schurIsPort(m, s, l)) continue;
      int q = 0;
      while (s->port_body[q] != l) q++;
      mbs_schurSubParentWrench(m, w, s, l, lam_low + s->port_cadr[q], f);
    }
    // internal children in reverse absorption order: L^T lam_c = y + W f + V pi
    for (int k = nch - 1; k >= 0; k--) {
      int c = ch[k];
      if (c >= s->s1) continue;
      int lc = c - s->s0, ncl = m->body_lamnum[c];
      if (ncl == 0 || s->mode[lc]) continue; // inertia-form children: after this body
      mbsReal *lamc = w->lam + m->body_lamadr[c];
      const mbsReal *rc = s->rec + s->rec_adr[lc], *Wc = MBS_REC_W(rc, ncl), *yc = MBS_REC_Y(rc);
      for (int i = 0; i < ncl; i++) lamc[i] = yc[i] + mbsu_dot6(Wc + 6 * i, f);
      int vw = s->v_w[lc];
      MBS_FLOPS(mbs_flopSchurLam(ncl, vw));
      if (vw > 0) {
        const mbsReal *V = s->V + s->v_adr[lc], *pi = lam_low + s->v_c0[lc];
        for (int i = 0; i < ncl; i++)
          for (int j = 0; j < vw; j++) lamc[i] += V[vw * i + j] * pi[j];
      }
      mbs_bwdPacked(MBS_REC_L(rc, ncl), ncl, lamc);
      mbs_schurSubParentWrench(m, w, s, c, lamc, f);
    }
    // a spath root below an upper port: its inertia-form child's pA is short of the spike
    MBS_FLOPS(s->comp[s->body_comp[lb]].spath && b == s->comp[s->body_comp[lb]].root ? 6 : 0);
    if (s->comp[s->body_comp[lb]].spath && b == s->comp[s->body_comp[lb]].root)
      for (int r = 0; r < 6; r++) f[r] -= s->spk[6 * lb + r];
    // a_b = M_b w_b + a0_b with the body's total constraint wrench (M_b: the starting compliance)
    mbsu_mul6(mbs_schurPhi0(s, lb), f, t6);
    for (int r = 0; r < 6; r++) w->acc[6 * b + r] = t6[r] + MBS_REC_A0(rec)[r];
    const mbsReal *L = s->lroot ? s->lroot + MBS_SCHUR_LRW * s->body_comp[lb] : NULL;
    if (L && L[0] > 1 && b == s->comp[s->body_comp[lb]].root) { // a light root's soft part
      const mbsReal h = L[2] - L[4] / L[3];                     // phi + v^T lambda / sigma
      for (int r = 0; r < 6; r++) w->acc[6 * b + r] += L[5 + r] * h;
    }
    if (p < 0)
      mbs_schurQdd(m, w, b, a0g);
    else if (p >= s->s0)
      mbs_schurQdd(m, w, b, w->acc + 6 * p);
  }
}

// ---------------------------------------------------------------- serial driver

mbsErr mbs_schurSolveSegments(const mbsModel *m, mbsWork *w, mbsSchur **seg, int nseg) {
  // interface unknowns: every upper port (each cut joint is exactly one component's upper port)
  int *off = malloc(sizeof(int) * (size_t)m->nbody);
  MBS_CHECK(off, MBS_ERR_NOMEM, "out of memory (schur driver)");
  int n = 0;
  for (int b = 0; b < m->nbody; b++) off[b] = -1;
  for (int k = 0; k < nseg; k++) {
    MBS_CALL(mbs_schurFactor(m, w, seg[k]));
    for (int c = 0; c < seg[k]->ncomp; c++)
      if (seg[k]->comp[c].up) off[seg[k]->comp[c].root] = n, n += seg[k]->comp[c].nup;
  }
  mbsReal *K = calloc((size_t)n * n + 1, sizeof(mbsReal)),
          *x = calloc((size_t)n + 1, sizeof(mbsReal));
  mbsReal *low = NULL, *up = NULL;
  if (!K || !x) {
    free(off), free(K), free(x);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur driver)");
  }
  // assemble: the component's port ordering is [upper; lower ports in column order]
  int *map = malloc(sizeof(int) * (size_t)(m->nlam + 1));
  for (int k = 0; k < nseg; k++) {
    mbsSchur *s = seg[k];
    for (int c = 0; c < s->ncomp; c++) {
      mbsSchurComp *cp = s->comp + c;
      int at = 0;
      for (int i = 0; i < cp->nup; i++) map[at++] = off[cp->root] + i;
      for (int q = cp->p0; q < cp->p0 + cp->np; q++)
        for (int i = 0; i < m->body_lamnum[s->port_body[q]]; i++)
          map[at++] = off[s->port_body[q]] + i;
      for (int i = 0; i < cp->n; i++) {
        x[map[i]] += cp->g[i];
        for (int j = 0; j < cp->n; j++) K[(size_t)n * map[i] + map[j]] += cp->C[cp->n * i + j];
      }
    }
  }
  free(map);
  // dense Cholesky of the interface system (the same pivot floor as the distributed merges)
  mbsReal dummy = 0;
  mbsReal *sol = calloc((size_t)n + 1, sizeof(mbsReal));
  if (!sol || (n > 0 && !mbs_schurReduce(0, n, K, x, &dummy, &dummy, NULL))) {
    free(off), free(K), free(x), free(sol);
    return sol ? mbs_errSet(MBS_ERR_NUMERIC, "schur: the cut-joint system is not finite")
               : mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur driver)");
  }
  if (n > 0) mbs_schurExpand(0, n, K, x, NULL, sol);
  memcpy(x, sol, sizeof(mbsReal) * (size_t)n);
  free(sol);
  // back-substitute every segment in order (parents' segments first), then the roots' qdd
  for (int k = 0; k < nseg; k++) {
    mbsSchur *s = seg[k];
    up = calloc((size_t)m->nlam + 1, sizeof(mbsReal));
    low = calloc((size_t)s->ncol + 1, sizeof(mbsReal));
    if (!up || !low) {
      free(up), free(low), free(off), free(K), free(x);
      return mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur driver)");
    }
    int at = 0;
    for (int c = 0; c < s->ncomp; c++)
      for (int i = 0; i < s->comp[c].nup; i++) up[at++] = x[off[s->comp[c].root] + i];
    for (int q = 0; q < s->nport; q++)
      for (int i = 0; i < m->body_lamnum[s->port_body[q]]; i++)
        low[s->port_cadr[q] + i] = x[off[s->port_body[q]] + i];
    mbs_schurBack(m, w, s, up, low, NULL, 0);
    free(up), free(low);
  }
  for (int k = 0; k < nseg; k++)
    for (int c = 0; c < seg[k]->ncomp; c++) {
      int r = seg[k]->comp[c].root, p = m->body_parent[r];
      if (p >= 0) mbs_schurQdd(m, w, r, w->acc + 6 * p);
    }
  free(off), free(K), free(x);
  return MBS_OK;
}
