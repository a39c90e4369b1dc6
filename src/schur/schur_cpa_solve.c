/// \file schur_cpa_solve.c
/// The critical-path graph of schur, one tree solve (mbs_cpaSchSolve): the per-rank factors, the
/// interface and the back-substitutions, one node per call site of the kernels; the set-up, the
/// kinematics with ghost stages and the entry points are in schur_cpa.c.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpa_private.h"
#include "schur_cpa_private.h"

// one tree solve: factor, cut-joint system, back-substitution, the accelerations to the remote
// children; later: a solve after the first of the evaluation (the remote children's stages
// again; the bias passes alone where mbs_schurRhsOnly holds); homog: a homogeneous unit solve;
// B->smask: a local solve of the masked ranks (mbsp_schurLocal: factor, the rank's cut-joint
// systems added into the separators' system, back-substitution with the cut joints' lambdas 0)
// a tree of paths (src/schur/schur_factor.c mbs_schurTpathPorts): one node for the spike columns of
// body b's own ports (known: with their joints' known forces into b's pA), after dep; 0: no port
static int mbs_cpaTpathPorts(mbsCpaB *B, const mbsCpaKin *K, const mbsCpaGhost *G,
                             const mbsSchur *s, int b, int r, int known, int dep, int *out) {
  const mbsModel *m = B->m;
  const int *ch = m->child_list + m->body_childadr[b];
  long long f = 0;
  int any = 0;
  for (int k = 0; k < m->body_childnum[b]; k++) {
    int l = ch[k], nl = m->body_lamnum[l];
    if (l < s->s1 || nl == 0) continue;
    any = 1;
    f += known ? mbs_flopSpathStart(nl, mbs_flopSchurT(m, s, l), m->body_dofnum[l])
               : mbs_flopTpathPort(nl, mbs_flopSchurT(m, s, l));
  }
  if (!any) return 0;
  int v = mbs_cpaNode(B, MBS_CPA_SCH_SPATH, b, f, PH_P2, 1);
  mbs_cpaDep(B, dep, v);
  for (int k = 0; k < m->body_childnum[b]; k++) {
    int l = ch[k];
    if (l < s->s1 || m->body_lamnum[l] == 0) continue;
    mbs_cpaDep(B, mbs_cpaSeen(B, K->joint, G->joint, l, r), v);
    if (known) mbs_cpaDep(B, mbs_cpaSeen(B, K->force, G->force, l, r), v);
  }
  *out = v;
  return 1;
}

mbsErr mbs_cpaSchSolve(mbsCpaB *B, const mbsCpaKin *K, mbsCpaSch *X, int later, int homog) {
  const mbsModel *m = B->m;
  const mbsCpaOptions *o = B->o;
  const unsigned char *mask = B->smask;
  int n = m->nbody, P = X->P, chain = X->chain, ured = 0;
  mbsErr e = MBS_OK;
  size_t nb = (size_t)n + 1;
  mbsCpaRank *R = X->R;
  int *IAw = X->IAw, *pAw = X->pAw, *proj = X->proj, *done = X->done, *stn = X->stn;
  int *acc = X->acc, *lam = X->lam, *spv = X->spv;
  if (later) mbs_cpaSchGhosts(B, K, X);
  mbsCpaGhost G = X->G;
  for (int b = 0; b < n; b++) proj[b] = done[b] = stn[b] = acc[b] = lam[b] = spv[b] = -1;
  for (int r = 0; r < P; r++) {
    int nv = R[r].rk->view.ncomp + 1;
    R[r].fac_end = R[r].if_end = -1;
    for (int c = 0; c < nv; c++) R[r].vsys[c] = R[r].vexp[c] = -1;
  }
  // ---- factor (src/schur.c mbs_schurRankFactor: mbs_schurFactor per segment, then the join)
  B->cls = MBS_CPA_CLASS_DYN;
  for (int b = 0; b < n; b++) IAw[b] = -1, pAw[b] = K->bias[b];
  for (int r = 0; r < P; r++) {
    mbsCpaRank *rr = R + r;
    mbsSchurRank *rk = rr->rk;
    if (mask && !mask[r]) continue;
    int **cs = calloc((size_t)rk->nseg, sizeof *cs);
    if (!cs) {
      e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
      return e;
    }
    for (int t = 0; t < rk->nseg; t++) {
      mbsSchur *s = rk->seg[t];
      cs[t] = malloc(((size_t)s->ncomp + 1) * sizeof(int));
      int *spk = malloc(((size_t)s->ncomp + 1) * sizeof(int));
      if (!cs[t] || !spk) {
        free(spk);
        for (int u = 0; u <= t; u++) free(cs[u]);
        free(cs);
        e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
        return e;
      }
      for (int c = 0; c < s->ncomp; c++) cs[t][c] = spk[c] = -1;
      const int rhs = later && mbs_schurRhsOnly(rk); // mbs_schurFactorRhs
      for (int b = s->s1 - 1; b >= s->s0; b--) {
        int lb = b - s->s0, ci = s->body_comp[lb], p = m->body_parent[b], sn2 = -1;
        if (rhs && homog && B->spath && !B->spath[b]) { // off the loaded paths: u = 0, no node
          proj[b] = done[b] = -1;
          continue;
        }
        if (rhs) { // the bias passes alone: u, pa, X^T pa into the parent's pA
          int v = mbs_cpaNode(B, MBS_CPA_ABA_RHS, b, mbs_flopAbaRhs(m, b, homog), PH_P2, 1);
          mbs_cpaDep(B, pAw[b], v);
          mbs_cpaDep(B, K->force[b], v);
          mbs_cpaDep(B, K->c[b], v);
          mbs_cpaDep(B, K->joint[b], v);
          proj[b] = done[b] = v;
          if (p >= 0) {
            mbs_cpaDep(B, pAw[p], v);
            pAw[p] = v;
          }
          continue;
        }
        const mbsSchurComp *cp = s->comp + ci;
        const int *ch = m->child_list + m->body_childadr[b];
        int nch = m->body_childnum[b];
        if (!later && !homog && !mask && mbs_cpaPreBody(B, K, X, r, s, b, spk)) continue;
        if (s->mode[lb]) { // inertia form: ABA's pass 2 (+ the spike)
          if (s->onpath[lb] && b == cp->last) {
            int l = s->port_body[cp->p0];
            int sn = mbs_cpaNode(
                B, MBS_CPA_SCH_SPATH, b,
                mbs_flopSpathStart(m->body_lamnum[l], mbs_flopSchurT(m, s, l), m->body_dofnum[l]),
                PH_P2, 1);
            mbs_cpaDep(B, mbs_cpaSeen(B, K->joint, G.joint, l, r), sn);
            mbs_cpaDep(B, mbs_cpaSeen(B, K->force, G.force, l, r), sn);
            mbs_cpaDep(B, pAw[b], sn);
            pAw[b] = sn;
          }
          if (s->onpath[lb] && cp->spath == 2 &&
              mbs_cpaTpathPorts(B, K, &G, s, b, r, 1, pAw[b], &sn2))
            pAw[b] = sn2;
          done[b] = mbs_cpaAbaBody(B, K, b, IAw, pAw, proj);
          if (s->onpath[lb]) {
            long long fs = cp->spath == 2 ? mbs_flopSpikeCols(mbs_jntSpecial(m, b),
                                                              m->body_dofnum[b], s->body_nc[lb])
                                          : mbs_flopSpikeBody(m, b, cp->nc);
            int sp = mbs_cpaNode(B, MBS_CPA_SCH_SPIKE, b, fs, PH_P2, 1);
            mbs_cpaDep(B, proj[b], sp);
            mbs_cpaDep(B, K->c[b], sp);
            mbs_cpaDep(B, K->joint[b], sp);
            mbs_cpaDep(B, spk[ci], sp);
            if (spk[ci] < 0) mbs_cpaDep(B, pAw[b], sp);
            spk[ci] = sp;
            if (b == cp->root) {
              int gn = mbs_cpaNode(B, MBS_CPA_SCH_SPATH, b, mbs_flopSpathGround(cp->n), PH_P2, 1);
              mbs_cpaDep(B, sp, gn);
              cs[t][ci] = gn;
            }
          }
          continue;
        }
        // compliance form: the start (known wrench, a0, (I^A)^-1 with inertia-form children)
        long long f0 = mbs_flopSchurStart(s->phi0_adr[lb] >= 0, m->body_dofnum[b]);
        int st = mbs_cpaNode(B, MBS_CPA_SCH_START, b, 0, PH_P2, 1);
        mbs_cpaDep(B, K->bias[b], st);
        mbs_cpaDep(B, K->force[b], st);
        mbs_cpaDep(B, K->joint[b], st);
        mbs_cpaDep(B, IAw[b], st);
        mbs_cpaDep(B, pAw[b], st);
        for (int k = 0; k < nch; k++) {
          int c = ch[k];
          if (c < s->s1) {
            if (s->mode[c - s->s0]) continue;
            f0 += MBS_FL_SCHUR_KID;
            mbs_cpaDep(B, stn[c], st);
          } else {
            f0 += MBS_FL_SCHUR_KID + mbs_flopSchurKnown(m->body_dofnum[c]);
            mbs_cpaDep(B, mbs_cpaSeen(B, K->force, G.force, c, r), st);
          }
          mbs_cpaDep(B, mbs_cpaSeen(B, K->joint, G.joint, c, r), st);
        }
        if (st >= 0) { // (-1 once the builder ran out of memory: the graph is then dropped)
          B->flops[st] = f0;
          B->cost[st] = (double)f0 * mbs_cpaFlopTime(o, B->cls);
          B->class_flops[B->cls] += f0;
        }
        stn[b] = done[b] = st;
        int prev = st;
        if (cp->spath == 2 && mbs_cpaTpathPorts(B, K, &G, s, b, r, 0, prev, &sn2)) prev = sn2;
        if (cp->spath) {
          int su = mbs_cpaNode(B, MBS_CPA_SCH_SPATH, b, mbs_flopSpathUp(cp->nc), PH_P2, 1);
          mbs_cpaDep(B, prev, su);
          mbs_cpaDep(B, spk[ci], su);
          prev = su;
        }
        int cur = 0;
        for (int k = 0; k < nch; k++) {
          int c = ch[k];
          if (c >= s->s1 || s->mode[c - s->s0]) continue;
          int lc = c - s->s0, ncc = s->body_nc[lc], nl = m->body_lamnum[c];
          long long fa = mbs_flopSchurAbsorb(nl, s->kind[lc] == 1, mbs_flopSchurT(m, s, c), cur,
                                             ncc, s->v_w[lc]);
          cur += ncc;
          int an = mbs_cpaNode(B, MBS_CPA_SCH_ABSORB, b, fa, PH_P2, 1);
          mbs_cpaDep(B, prev, an);
          mbs_cpaDep(B, done[c], an);
          mbs_cpaDep(B, K->joint[c], an);
          mbs_cpaDep(B, K->c[c], an);
          prev = an;
        }
        for (int k = 0; k < nch; k++) {
          int l = ch[k];
          if (!(l >= s->s1 && m->body_lamnum[l] > 0) || cp->spath == 2) continue;
          int at = mbs_cpaNode(B, MBS_CPA_SCH_ATTACH, b,
                               mbs_flopSchurAttach(m->body_lamnum[l], mbs_flopSchurT(m, s, l), cur),
                               PH_P2, 1);
          cur += m->body_lamnum[l];
          mbs_cpaDep(B, prev, at);
          mbs_cpaDep(B, mbs_cpaSeen(B, K->joint, G.joint, l, r), at);
          prev = at;
        }
        if (p < s->s0) {
          int fn = mbs_cpaNode(B, MBS_CPA_SCH_FINISH, b,
                               mbs_flopSchurFinish(m->body_lamnum[b], mbs_flopSchurT(m, s, b),
                                                   s->body_nc[lb], cp->up, p < 0, s->v_w[lb]),
                               PH_P2, 1);
          mbs_cpaDep(B, prev, fn);
          mbs_cpaDep(B, K->c[b], fn);
          prev = fn;
          cs[t][ci] = fn;
        }
        done[b] = prev;
      }
      free(spk);
    }
    // the join of the segments' systems (children first)
    int *jn = malloc(((size_t)rk->nsc + 1) * sizeof(int));
    if (!jn) {
      for (int u = 0; u < rk->nseg; u++) free(cs[u]);
      free(cs);
      e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
      return e;
    }
    int fend = mbs_cpaNodeOn(B, MBS_CPA_SCH_JOIN, rr->b0, 0, -1, -1, -1);
    for (int k = rk->nsc - 1; k >= 0; k--) {
      const mbsSchurSc *sc = rk->sc + k;
      const mbsSchur *s = rk->seg[sc->seg];
      const mbsSchurComp *cp = s->comp + sc->comp;
      long long f = mbs_flopSchurAdd(cp->n) + mbs_flopSchurReduce(sc->nup + sc->nk, sc->ne);
      int j = mbs_cpaNodeOn(B, MBS_CPA_SCH_JOIN, rr->b0, 0, -1, -1, -1);
      mbs_cpaDep(B, cs[sc->seg][sc->comp], j);
      for (int q = 0; q < sc->nep; q++) { // the internal children's reduced systems
        int k2 = k + 1;
        while (k2 < rk->nsc && rk->sc[k2].root != sc->eport[q]) k2++;
        if (k2 < rk->nsc) {
          f += mbs_flopSchurAdd(rk->sc[k2].nup + rk->sc[k2].nk);
          mbs_cpaDep(B, jn[k2], j);
        }
      }
      if (j >= 0) {
        B->flops[j] = f;
        B->cost[j] = (double)f * mbs_cpaFlopTime(o, B->cls);
        B->class_flops[B->cls] += f;
      }
      jn[k] = j;
      mbs_cpaDep(B, j, fend);
      if (sc->view >= 0) rr->vsys[sc->view] = j;
    }
    rr->fac_end = fend;
    free(jn);
    for (int u = 0; u < rk->nseg; u++) free(cs[u]);
    free(cs);
  }
  // no agreement between the factor and the interface: a failed factor goes through the
  // interface's messages, and the one agreement after them covers both (mbsp_schurSolve), so each
  // rank's interface work waits for its own factor only

  // ---- the cut-joint system (schur_par.c)
  if (mask) { // a local solve: the rank's systems added into the separators' system, no messages
    for (int r = 0; r < P; r++) {
      if (!mask[r]) continue;
      const mbsSchur *v = &R[r].rk->view;
      long long f = 0;
      for (int c = 0; c < v->ncomp; c++) f += mbs_flopSchurAdd(v->comp[c].n);
      int sc = mbs_cpaNodeOn(B, MBS_CPA_SCH_SOLVE, R[r].b0, f, -1, -1, -1);
      mbs_cpaDep(B, R[r].fac_end, sc);
      R[r].if_end = sc;
    }
  } else if (P > 1 && chain) { // the radix-k scan of the pair systems (mbsp_schurScan)
    MBS_CALL(mbs_cpaSchScan(B, R, P, X->radix));
  } else if (P > 1 && (ured = mbs_cpaSchUseRed(B, R, P)) != 0) { // contraction over intervals
    if (ured < 0) return mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
    MBS_CALL(mbs_cpaSchRed(B, R, P));
  } else if (P > 1) { // component-tree passes (mbsp_schurTree, MBSPAR_SCHUR_MERGE=pass)
    // leaf to root: ranks from the last (children's components live on higher ranks)
    int *portsys = malloc(nb * sizeof(int)), *portlam = malloc(nb * sizeof(int));
    if (!portsys || !portlam) {
      free(portsys), free(portlam);
      e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
      return e;
    }
    for (int b = 0; b < n; b++) portsys[b] = portlam[b] = -1;
    for (int r = P - 1; r >= 0; r--) {
      const mbsSchur *v = &R[r].rk->view;
      for (int c = v->ncomp - 1; c >= 0; c--) {
        const mbsSchurComp *cp = v->comp + c;
        long long f = mbs_flopSchurReduce(cp->nup, cp->nc);
        int rd = mbs_cpaNodeOn(B, MBS_CPA_SCH_MERGE, R[r].b0, 0, -1, -1, -1);
        mbs_cpaDep(B, R[r].vsys[c], rd);
        mbs_cpaDep(B, R[r].fac_end, rd);
        for (int q = cp->p0; q < cp->p0 + cp->np; q++) {
          f += mbs_flopSchurAdd(m->body_lamnum[v->port_body[q]]);
          mbs_cpaDep(B, portsys[v->port_body[q]], rd);
        }
        if (rd >= 0) {
          B->flops[rd] = f;
          B->cost[rd] = (double)f * mbs_cpaFlopTime(o, B->cls);
          B->class_flops[B->cls] += f;
        }
        R[r].vsys[c] = rd;
        if (cp->up)
          portsys[cp->root] =
              mbs_cpaMsg(B, (double)(cp->nup * cp->nup + cp->nup) * sizeof(double), rd);
      }
    }
    B->iface_rounds = mbs_cpaSchPassDepth(B, R, P); // (-1: out of memory)
    if (B->iface_rounds < 0) e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
    // root to leaf: the upper ports' lambdas, then the lower ports' to the children
    for (int r = 0; r < P; r++) {
      const mbsSchur *v = &R[r].rk->view;
      int end = mbs_cpaNodeOn(B, MBS_CPA_SCH_SOLVE, R[r].b0, 0, -1, -1, -1);
      for (int c = 0; c < v->ncomp; c++) {
        const mbsSchurComp *cp = v->comp + c;
        int ex = mbs_cpaNodeOn(B, MBS_CPA_SCH_SOLVE, R[r].b0, mbs_flopSchurExpand(cp->nup, cp->nc),
                               -1, -1, -1);
        mbs_cpaDep(B, R[r].vsys[c], ex);
        if (cp->up) mbs_cpaDep(B, portlam[cp->root], ex);
        for (int q = cp->p0; q < cp->p0 + cp->np; q++) {
          int l = v->port_body[q];
          portlam[l] = mbs_cpaMsg(B, (double)m->body_lamnum[l] * sizeof(double), ex);
          mbs_cpaDep(B, portlam[l], end); // the sends complete before the solve returns
        }
        mbs_cpaDep(B, ex, end);
      }
      for (int c = 0; c < v->ncomp; c++)
        if (v->comp[c].up) mbs_cpaDep(B, portlam[v->comp[c].root], end);
      R[r].if_end = end;
    }
    free(portsys), free(portlam);
  } else {
    R[0].if_end = R[0].fac_end;
  }
  int agree2 = -1;
  if (P > 1 && !mask) {
    agree2 = mbs_cpaNode(B, MBS_CPA_MSG_ALLREDUCE, -1, 0, -1, -1);
    if (agree2 >= 0) {
      B->cost[agree2] = o->latency + 8 / o->bandwidth; // its first round (mbsp_agreeErrStart)
      B->proc[agree2] = -2;
    }
    for (int r = 0; r < P; r++) mbs_cpaDep(B, R[r].if_end, agree2);
  }

  // ---- back-substitution (mbs_schurRankBack -> mbs_schurBack), accelerations to remote children
  for (int r = 0; r < P; r++) {
    mbsCpaRank *rr = R + r;
    mbsSchurRank *rk = rr->rk;
    if (mask && !mask[r]) continue;
    // the agreement overlaps the back-substitution (mbsp_agreeErrStart .. End): it gates only
    // the messages that follow (the accelerations to the remote children, below)
    int lin = mbs_cpaNodeOn(B, MBS_CPA_SCH_SOLVE, rr->b0, 0, -1, -1, -1);
    mbs_cpaDep(B, rr->if_end, lin);
    for (int k = 0; k < rk->nsc; k++) { // the ports eliminated in the join
      const mbsSchurSc *sc = rk->sc + k;
      if (sc->ne == 0) continue;
      int ex = mbs_cpaNodeOn(B, MBS_CPA_SCH_SOLVE, rr->b0,
                             mbs_flopSchurExpand(sc->nup + sc->nk, sc->ne), -1, -1, -1);
      mbs_cpaDep(B, rr->if_end, ex);
      mbs_cpaDep(B, rr->fac_end, ex);
      mbs_cpaDep(B, ex, lin);
    }
    for (int t = 0; t < rk->nseg; t++) {
      mbsSchur *s = rk->seg[t];
      for (int c = 0; c < s->ncomp; c++) { // the roots' lambdas
        const mbsSchurComp *cp = s->comp + c;
        int rt = cp->root, lr = rt - s->s0, nl = m->body_lamnum[rt];
        if (cp->up) {
          lam[rt] = lin;
        } else if (nl > 0 && m->body_parent[rt] < 0 && !s->mode[lr]) {
          lam[rt] = mbs_cpaNodeOn(B, MBS_CPA_SCH_LAM, rt, mbs_flopSchurLamRoot(nl, s->v_w[lr]), -1,
                                  -1, -1);
          mbs_cpaDep(B, lin, lam[rt]);
        }
      }
      for (int c = 0; c < s->ncomp; c++) { // spath: the spike vectors from the port up
        const mbsSchurComp *cp = s->comp + c;
        if (cp->spath != 1) continue;
        int l = s->port_body[cp->p0];
        int prev =
            mbs_cpaNodeOn(B, MBS_CPA_SCH_SPIKEVEC, cp->last,
                          mbs_flopSpathVec(m->body_lamnum[l], mbs_flopSchurT(m, s, l)), -1, -1, -1);
        mbs_cpaDep(B, lin, prev);
        mbs_cpaDep(B, mbs_cpaSeen(B, K->joint, G.joint, l, r), prev);
        for (int b = cp->last;; b = m->body_parent[b]) {
          spv[b] = prev;
          if (b == cp->root) break;
          int sv =
              mbs_cpaNodeOn(B, MBS_CPA_SCH_SPIKEVEC, b, mbs_flopSpikeVecBody(m, b), -1, -1, -1);
          mbs_cpaDep(B, prev, sv);
          mbs_cpaDep(B, proj[b], sv);
          prev = sv;
        }
      }
      // trees of paths (mbs_schurBack): per path body its own ports' G pi and, below the root,
      // the spike vector carried to the parent; the root below an upper port gathers its
      // children's (no flops)
      for (int b = s->s1 - 1; b >= s->s0; b--) {
        int lb = b - s->s0;
        const mbsSchurComp *cp = s->comp + s->body_comp[lb];
        if (cp->spath != 2 || !(s->onpath[lb] || b == cp->root)) continue;
        const int *ch = m->child_list + m->body_childadr[b];
        long long f = 0;
        if (s->onpath[lb]) {
          for (int k = 0; k < m->body_childnum[b]; k++) {
            int l = ch[k];
            if (l >= s->s1 && m->body_lamnum[l] > 0)
              f += mbs_flopSpathVec(m->body_lamnum[l], mbs_flopSchurT(m, s, l));
          }
          if (b != cp->root) f += mbs_flopSpikeVecBody(m, b) + 6;
        }
        int sv = mbs_cpaNodeOn(B, MBS_CPA_SCH_SPIKEVEC, b, f, -1, -1, -1);
        mbs_cpaDep(B, lin, sv);
        if (s->onpath[lb]) mbs_cpaDep(B, proj[b], sv);
        for (int k = 0; k < m->body_childnum[b]; k++) {
          int l = ch[k];
          if (l >= s->s1 && m->body_lamnum[l] > 0 && s->onpath[lb])
            mbs_cpaDep(B, mbs_cpaSeen(B, K->joint, G.joint, l, r), sv);
          else if (l < s->s1 && s->onpath[l - s->s0])
            mbs_cpaDep(B, spv[l], sv);
        }
        spv[b] = sv;
      }
      for (int b = s->s0; b < s->s1; b++) { // top-down
        int lb = b - s->s0, nl = m->body_lamnum[b], p = m->body_parent[b];
        if (B->bfirst && B->bfirst[b] > B->blim) continue; // not needed, nor its subtree
        int accp = p >= s->s0 ? acc[p] : (p < 0 ? -1 : -2);
        if (s->mode[lb]) {
          int fn;
          acc[b] = mbs_cpaAbaFwdBody(B, K, b, accp < -1 ? -1 : accp, s->onpath[lb] ? spv[b] : -1,
                                     IAw, pAw, proj, homog, &fn);
          long long fl = mbs_flopSchurLamInertia(nl, s->kind[lb] == 1, mbs_flopSchurT(m, s, b));
          if (fl > 0 && !homog) {
            int ln = mbs_cpaNode(B, MBS_CPA_SCH_LAM, b, fl, PH_P3, 2);
            mbs_cpaDep(B, fn, ln);
          }
          continue;
        }
        const mbsSchurComp *cp = s->comp + s->body_comp[lb];
        const int *ch = m->child_list + m->body_childadr[b];
        int nch = m->body_childnum[b];
        long long f1 =
            mbs_flopSchurAcc(nl, s->kind[lb] == 1, mbs_flopSchurT(m, s, b)) - (MBS_FL_MUL6 + 6);
        for (int k = 0; k < nch; k++) {
          int l = ch[k];
          if (l >= s->s1 && m->body_lamnum[l] > 0)
            f1 += mbs_flopSchurSubWrench(m->body_lamnum[l], 0, mbs_flopSchurT(m, s, l));
        }
        int n1 = mbs_cpaNode(B, MBS_CPA_SCH_ACC, b, f1, PH_P3, 2);
        mbs_cpaDep(B, lam[b], n1);
        mbs_cpaDep(B, lin, n1);
        mbs_cpaDep(B, stn[b], n1);
        int prev = n1;
        for (int k = nch - 1; k >= 0; k--) {
          int c = ch[k];
          if (c >= s->s1) continue;
          int lc = c - s->s0, ncl = m->body_lamnum[c];
          if (ncl == 0 || s->mode[lc]) continue;
          long long fc =
              mbs_flopSchurSubWrench(ncl, mbs_schurCached(s, c), mbs_flopSchurT(m, s, c));
          fc += mbs_flopSchurLam(ncl, s->v_w[lc]);
          int ln = mbs_cpaNode(B, MBS_CPA_SCH_LAM, b, fc, PH_P3, 2);
          mbs_cpaDep(B, prev, ln);
          mbs_cpaDep(B, done[c], ln);
          lam[c] = ln;
          prev = ln;
        }
        int an = mbs_cpaNode(B, MBS_CPA_SCH_ACC, b,
                             MBS_FL_MUL6 + 6 + (cp->spath && b == cp->root ? 6 : 0), PH_P3, 2);
        mbs_cpaDep(B, prev, an);
        if (cp->spath && b == cp->root) mbs_cpaDep(B, spv[b], an);
        acc[b] = an;
        if (accp != -2 && m->body_dofnum[b] > 0) {
          int qn =
              mbs_cpaNode(B, MBS_CPA_SCH_QDD, b, mbs_flopSchurQdd(m->body_dofnum[b]), PH_P3, 2);
          mbs_cpaDep(B, an, qn);
          mbs_cpaDep(B, accp, qn);
        }
      }
    }
    // roots whose parent is in another segment of this rank
    for (int k = 0; k < rk->nsc; k++) {
      int rt = rk->sc[k].root, p = m->body_parent[rt];
      if (B->bfirst && B->bfirst[rt] > B->blim) continue;
      if (p >= rr->b0 && rk->sc[k].parent_sc >= 0 && m->body_dofnum[rt] > 0) {
        int qn =
            mbs_cpaNode(B, MBS_CPA_SCH_QDD, rt, mbs_flopSchurQdd(m->body_dofnum[rt]), PH_P3, 2);
        mbs_cpaDep(B, acc[rt], qn);
        mbs_cpaDep(B, acc[p], qn);
      }
    }
  }
  // the parents' accelerations to the remote children's ranks, their qdd; deferred ghost poses
  const int arounds = mbs_cpaLogK(P, X->radix); // the agreement's rounds
  for (int r = 0; P > 1 && !mask && r < P; r++) {
    const mbsSchur *v = &R[r].rk->view;
    for (int c = 0; c < v->ncomp; c++) {
      int rt = v->comp[c].root, p = m->body_parent[rt];
      if (p < 0 || p >= R[r].b0) continue;
      // the agreement's other rounds (mbsp_agreeErrEnd) follow the sending rank's
      // back-substitution, beside the message (posted before them); the qdd waits for both
      int gate = agree2;
      if (agree2 >= 0 && arounds > 1) {
        gate = mbs_cpaNode(B, MBS_CPA_MSG_ALLREDUCE, -1, 0, -1, -1);
        if (gate >= 0) {
          B->cost[gate] = (arounds - 1) * (o->latency + 8 / o->bandwidth);
          B->proc[gate] = -2;
          mbs_cpaDep(B, agree2, gate);
          mbs_cpaDep(B, acc[p], gate);
        }
      }
      int msg = mbs_cpaMsg(B, 6 * sizeof(double), acc[p]);
      if (m->body_dofnum[rt] > 0) {
        int qn =
            mbs_cpaNode(B, MBS_CPA_SCH_QDD, rt, mbs_flopSchurQdd(m->body_dofnum[rt]), PH_P3, 2);
        mbs_cpaDep(B, acc[rt], qn);
        mbs_cpaDep(B, msg, qn);
        mbs_cpaDep(B, gate, qn);
      }
    }
  }
  return e;
}
