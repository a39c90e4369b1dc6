/// \file dynamics_cpa.c
/// The critical-path graphs of the serial tree recursions (mbspar cpa): ABA (aba.c mbs_aba), RNEA
/// and CRBA + LTDL (dynamics.c), one node per call site of the instrumented kernels (the same
/// flop expressions of flops.h). The analyser's core is src/critpath.c.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpa_private.h"

// ---- ABA (aba.c mbs_aba)
// ABA pass 2 of one body (mbs_abaBodyBack; mbs_cpaAba and the schur graph); IAw/pAw: last writers
// of the records; returns the last node of the body's own projection (proj[b] = the record's U)
int mbs_cpaAbaBody(mbsCpaB *B, const mbsCpaKin *K, int b, int *IAw, int *pAw, int *proj) {
  const mbsModel *m = B->m;
  int k = m->body_dofnum[b], p = m->body_parent[b], ia = -1, pa = -1, last = -1;
  proj[b] = -1;
  if (k >= 1) {
    int u = mbs_cpaNode(B, MBS_CPA_ABA_U, b, mbs_flopAba(m, b, MBS_FLA_U), PH_P2, 1);
    mbs_cpaDep(B, IAw[b], u);
    mbs_cpaDep(B, pAw[b], u);
    mbs_cpaDep(B, K->joint[b], u);
    mbs_cpaDep(B, K->force[b], u);
    proj[b] = last = u;
    if (k > 1) {
      int blk = mbs_cpaNode(B, MBS_CPA_ABA_BLOCK, b, mbs_flopAba(m, b, MBS_FLA_BLOCK), PH_P2, 1);
      mbs_cpaDep(B, u, blk);
      mbs_cpaDep(B, K->c[b], blk);
      mbs_cpaDep(B, IAw[b], blk);
      mbs_cpaDep(B, pAw[b], blk);
      proj[b] = ia = pa = last = blk;
    } else if (p >= 0) {
      ia = mbs_cpaNode(B, MBS_CPA_ABA_IA, b, mbs_flopAba(m, b, MBS_FLA_IA), PH_P2, 1);
      mbs_cpaDep(B, u, ia);
      mbs_cpaDep(B, IAw[b], ia);
      pa = mbs_cpaNode(B, MBS_CPA_ABA_PA, b, mbs_flopAba(m, b, MBS_FLA_PA), PH_P2, 1);
      mbs_cpaDep(B, u, pa);
      mbs_cpaDep(B, K->c[b], pa);
      mbs_cpaDep(B, IAw[b], pa);
      mbs_cpaDep(B, pAw[b], pa);
    }
  } else if (p >= 0) {
    ia = IAw[b];
    pa = mbs_cpaNode(B, MBS_CPA_ABA_PA, b, mbs_flopAba(m, b, MBS_FLA_PA), PH_P2, 1);
    mbs_cpaDep(B, K->c[b], pa);
    mbs_cpaDep(B, IAw[b], pa);
    mbs_cpaDep(B, pAw[b], pa);
  }
  if (p < 0) return last;
  int cf = mbs_cpaNode(B, MBS_CPA_ABA_CONGR, b, mbs_flopAba(m, b, MBS_FLA_CONGR), PH_P2, 1);
  mbs_cpaDep(B, ia, cf);
  mbs_cpaDep(B, K->joint[b], cf);
  int ca = mbs_cpaNode(B, MBS_CPA_ABA_CONGR_ACC, b, mbs_flopAba(m, b, MBS_FLA_CONGR_ACC), PH_P2, 1);
  mbs_cpaDep(B, cf, ca);
  mbs_cpaDep(B, IAw[p], ca);
  IAw[p] = ca;
  int xf = mbs_cpaNode(B, MBS_CPA_ABA_XF, b, mbs_flopAba(m, b, MBS_FLA_XF), PH_P2, 1);
  mbs_cpaDep(B, pa, xf);
  mbs_cpaDep(B, K->joint[b], xf);
  int xa = mbs_cpaNode(B, MBS_CPA_ABA_XF_ACC, b, mbs_flopAba(m, b, MBS_FLA_XF_ACC), PH_P2, 1);
  mbs_cpaDep(B, xf, xa);
  mbs_cpaDep(B, pAw[p], xa);
  pAw[p] = xa;
  return xa;
}

// ABA pass 3 of one body (mbs_abaBodyFwd; spike: mbs_abaBodyFwdSpike); returns the node of qdd
// and the body's acceleration, *fn the joint wrench
int mbs_cpaAbaFwdBody(mbsCpaB *B, const mbsCpaKin *K, int b, int accp, int spike, const int *IAw,
                      const int *pAw, const int *proj, int homog, int *fn) {
  const mbsModel *m = B->m;
  int a = mbs_cpaNode(B, MBS_CPA_ABA_A, b,
                      mbs_flopAba(m, b, MBS_FLA_A) +
                          (spike >= 0 ? mbs_flopFwdSpikeBody(m, b, !homog) : 0),
                      PH_P3, 2);
  mbs_cpaDep(B, accp, a);
  mbs_cpaDep(B, K->joint[b], a);
  mbs_cpaDep(B, K->c[b], a);
  mbs_cpaDep(B, spike, a);
  int q = mbs_cpaNode(B, MBS_CPA_ABA_QDD, b, mbs_flopAba(m, b, MBS_FLA_QDD), PH_P3, 2);
  mbs_cpaDep(B, a, q);
  mbs_cpaDep(B, proj[b], q);
  *fn = -1;
  if (homog) return q; // a loop layer's unit solve: no joint wrench
  int f = mbs_cpaNode(B, MBS_CPA_ABA_F, b, mbs_flopAba(m, b, MBS_FLA_F), PH_P3, 2);
  mbs_cpaDep(B, q, f);
  mbs_cpaDep(B, IAw[b], f);
  mbs_cpaDep(B, pAw[b], f);
  *fn = f;
  return q;
}

void mbs_cpaAba(mbsCpaB *B, const mbsCpaKin *K, int *IAw, int *pAw, int *proj, int *acc) {
  const mbsModel *m = B->m;
  int n = m->nbody;
  for (int b = 0; b < n; b++) IAw[b] = -1, pAw[b] = K->bias[b];
  // pass 2, tip to base; IAw/pAw: last writer of IA_b / pA_b (the children's accumulation chain)
  for (int b = n - 1; b >= 0; b--) mbs_cpaAbaBody(B, K, b, IAw, pAw, proj);
  // pass 3, base to tip
  for (int b = 0; b < n; b++) {
    int p = m->body_parent[b], fn;
    acc[b] = mbs_cpaAbaFwdBody(B, K, b, p >= 0 ? acc[p] : -1, -1, IAw, pAw, proj, 0, &fn);
  }
}

// ---- RNEA (dynamics.c mbs_rnea); qddn: per dof the node that produced qdd (NULL: no qdd)
static void mbs_cpaRnea(mbsCpaB *B, const mbsCpaKin *K, const int *qddn, int phf, int phb, int *acc,
                        int *frw, int *tau) {
  const mbsModel *m = B->m;
  int n = m->nbody;
  for (int b = 0; b < n; b++) {
    int k = m->body_dofnum[b], p = m->body_parent[b], d0 = m->body_dofadr[b];
    int a = mbs_cpaNode(B, MBS_CPA_RNEA_A, b, MBS_FL_RNEA_A + (qddn ? 12L * k : 0), phf, phf);
    if (p >= 0) mbs_cpaDep(B, acc[p], a);
    mbs_cpaDep(B, K->joint[b], a);
    mbs_cpaDep(B, K->c[b], a);
    if (qddn)
      for (int j = 0; j < k; j++) mbs_cpaDep(B, qddn[d0 + j], a);
    acc[b] = a;
    frw[b] = mbs_cpaNode(B, MBS_CPA_RNEA_F, b, MBS_FL_RNEA_F, phf, phf);
    mbs_cpaDep(B, a, frw[b]);
    mbs_cpaDep(B, K->bias[b], frw[b]);
  }
  for (int b = n - 1; b >= 0; b--) {
    int k = m->body_dofnum[b], p = m->body_parent[b];
    tau[b] = mbs_cpaNode(B, MBS_CPA_RNEA_QINV, b, (long long)MBS_FL_DOT6 * k, phb, phb);
    mbs_cpaDep(B, frw[b], tau[b]);
    mbs_cpaDep(B, K->joint[b], tau[b]);
    if (p < 0) continue;
    int xf = mbs_cpaNode(B, MBS_CPA_RNEA_XF, b, MBS_FL_XFORCE, phb, phb);
    mbs_cpaDep(B, frw[b], xf);
    mbs_cpaDep(B, K->joint[b], xf);
    int xa = mbs_cpaNode(B, MBS_CPA_RNEA_XF_ACC, b, MBS_FL_RNEA_PF - MBS_FL_XFORCE, phb, phb);
    mbs_cpaDep(B, xf, xa);
    mbs_cpaDep(B, frw[p], xa);
    frw[p] = xa;
  }
}

// ---- CRBA + LTDL (dynamics.c mbs_crba)
mbsErr mbs_cpaCrba(mbsCpaB *B, const mbsCpaKin *K) {
  const mbsModel *m = B->m;
  int n = m->nbody, nv = m->nv;
  const int *lam = m->dof_parent;
  int *acc = NULL, *frw = NULL, *tau = NULL, *Icw = NULL, *row = NULL, *dbody = NULL, *dd = NULL;
  int *Lstart = NULL, *Lnum = NULL, *rhs = NULL, *back = NULL, *divn = NULL, *fwd = NULL;
  int *cadr = NULL, *clist = NULL;
  mbsErr e = MBS_OK;
  size_t nb = (size_t)n + 1, nd = (size_t)nv + 1;
  acc = malloc(nb * sizeof *acc), frw = malloc(nb * sizeof *frw), tau = malloc(nb * sizeof *tau);
  Icw = malloc(nb * sizeof *Icw), row = malloc(nd * sizeof *row),
  dbody = malloc(nd * sizeof *dbody);
  dd = malloc(nd * sizeof *dd), Lstart = malloc(nd * sizeof *Lstart);
  Lnum = malloc(nd * sizeof *Lnum), rhs = malloc(nd * sizeof *rhs),
  back = malloc(nd * sizeof *back);
  divn = malloc(nd * sizeof *divn), fwd = malloc(nd * sizeof *fwd);
  cadr = calloc(nd + 1, sizeof *cadr), clist = malloc(nd * sizeof *clist);
  if (!acc || !frw || !tau || !Icw || !row || !dbody || !dd || !Lstart || !Lnum || !rhs || !back ||
      !divn || !fwd || !cadr || !clist) {
    e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
    goto done;
  }
  // dof -> body, dof depth (dofs on the path to the ground), dof children lists
  for (int b = 0; b < n; b++)
    for (int j = 0; j < m->body_dofnum[b]; j++) dbody[m->body_dofadr[b] + j] = b;
  for (int i = 0; i < nv; i++) dd[i] = 1 + (lam[i] >= 0 ? dd[lam[i]] : 0);
  for (int i = 0; i < nv; i++)
    if (lam[i] >= 0) cadr[lam[i] + 1]++;
  for (int i = 0; i < nv; i++) cadr[i + 1] += cadr[i];
  {
    int *fill = Lnum; // scratch
    for (int i = 0; i < nv; i++) fill[i] = cadr[i];
    for (int i = 0; i < nv; i++)
      if (lam[i] >= 0) clist[fill[lam[i]]++] = i;
  }

  // bias forces: RNEA with zero acceleration
  mbs_cpaRnea(B, K, NULL, PH_RNEA1F, PH_RNEA1B, acc, frw, tau);
  // composite inertias (congruences formed in parallel, accumulated per parent in a chain)
  for (int b = 0; b < n; b++) Icw[b] = -1;
  for (int b = n - 1; b >= 0; b--) {
    int p = m->body_parent[b];
    if (p < 0) continue;
    int cf = mbs_cpaNode(B, MBS_CPA_CRBA_CONGR, b, MBS_FL_CONGR_FORM, PH_COMP, PH_RNEA1B);
    mbs_cpaDep(B, Icw[b], cf);
    mbs_cpaDep(B, K->joint[b], cf);
    int ca = mbs_cpaNode(B, MBS_CPA_CRBA_CONGR_ACC, b, MBS_FL_CONGR_ACC, PH_COMP, PH_RNEA1B);
    mbs_cpaDep(B, cf, ca);
    mbs_cpaDep(B, Icw[p], ca);
    Icw[p] = ca;
  }
  // joint-space inertia: per dof F = Ic S, then the walk to the ground
  for (int b = 0; b < n; b++) {
    int k = m->body_dofnum[b], d0 = m->body_dofadr[b];
    for (int j = 0; j < k; j++) {
      int last = mbs_cpaNode(B, MBS_CPA_CRBA_F, b, MBS_FL_MUL6 + (long long)MBS_FL_DOT6 * k,
                             PH_HCOL, PH_HCOL);
      mbs_cpaDep(B, Icw[b], last);
      mbs_cpaDep(B, K->joint[b], last);
      for (int a = b; m->body_parent[a] >= 0;) {
        int na = m->body_parent[a];
        int wn = mbs_cpaNode(B, MBS_CPA_CRBA_WALK, b,
                             MBS_FL_XFORCE + (long long)MBS_FL_DOT6 * m->body_dofnum[na], PH_HCOL,
                             PH_HCOL);
        mbs_cpaDep(B, last, wn);
        mbs_cpaDep(B, K->joint[a], wn);
        mbs_cpaDep(B, K->joint[na], wn);
        last = wn;
        a = na;
      }
      row[d0 + j] = last;
    }
  }
  // LTDL: update (k, i) for every ancestor i of k; row[i] is the last writer of row i
  for (int k = nv - 1; k >= 0; k--) {
    int rk = row[k];
    Lstart[k] = B->n;
    Lnum[k] = 0;
    for (int i = lam[k]; i >= 0; i = lam[i]) {
      int L = mbs_cpaNode(B, MBS_CPA_LTDL, dbody[k], 1 + 2LL * dd[i], PH_LTDL, PH_LTDL);
      mbs_cpaDep(B, rk, L);
      mbs_cpaDep(B, row[i], L);
      row[i] = L;
      Lnum[k]++;
    }
  }
  // solve L^T D L x = tau - bias: right side, back substitution, diagonal, forward substitution
  for (int i = 0; i < nv; i++) {
    rhs[i] = mbs_cpaNode(B, MBS_CPA_SOL_RHS, dbody[i], 1, PH_SOLB, PH_SOLB);
    mbs_cpaDep(B, K->force[dbody[i]], rhs[i]);
    mbs_cpaDep(B, tau[dbody[i]], rhs[i]);
  }
  for (int i = nv - 1; i >= 0; i--) {
    back[i] = mbs_cpaNode(B, MBS_CPA_SOL_BACK, dbody[i], 2LL * (dd[i] - 1), PH_SOLB, PH_SOLB);
    mbs_cpaDep(B, rhs[i], back[i]);
    for (int c = cadr[i]; c < cadr[i + 1]; c++) mbs_cpaDep(B, back[clist[c]], back[i]);
    for (int l = 0; l < Lnum[i]; l++) mbs_cpaDep(B, Lstart[i] + l, back[i]);
  }
  for (int i = 0; i < nv; i++) {
    divn[i] = mbs_cpaNode(B, MBS_CPA_SOL_DIV, dbody[i], 1, PH_SOLD, PH_SOLD);
    mbs_cpaDep(B, rhs[i], divn[i]);
    mbs_cpaDep(B, row[i], divn[i]);
    for (int c = cadr[i]; c < cadr[i + 1]; c++) mbs_cpaDep(B, back[clist[c]], divn[i]);
  }
  for (int i = 0; i < nv; i++) {
    fwd[i] = mbs_cpaNode(B, MBS_CPA_SOL_FWD, dbody[i], 2LL * (dd[i] - 1), PH_SOLF, PH_SOLF);
    mbs_cpaDep(B, divn[i], fwd[i]);
    if (lam[i] >= 0) mbs_cpaDep(B, fwd[lam[i]], fwd[i]);
    for (int l = 0; l < Lnum[i]; l++) mbs_cpaDep(B, Lstart[i] + l, fwd[i]);
  }
  // accelerations and joint wrenches: RNEA with qdd
  mbs_cpaRnea(B, K, fwd, PH_RNEA2F, PH_RNEA2B, acc, frw, tau);
done:
  free(acc), free(frw), free(tau), free(Icw), free(row), free(dbody), free(dd), free(Lstart);
  free(Lnum), free(rhs), free(back), free(divn), free(fwd), free(cadr), free(clist);
  return e;
}

mbsErr mbs_cpaAbaGraph(mbsCpaB *B, mbsCpaKin *K) {
  size_t nb = (size_t)B->m->nbody;
  mbs_cpaKinStage(B, K);
  mbs_cpaAba(B, K, K->scr, K->scr + nb, K->scr + 2 * nb, K->scr + 3 * nb);
  return MBS_OK;
}

mbsErr mbs_cpaCrbaGraph(mbsCpaB *B, mbsCpaKin *K) {
  mbs_cpaKinStage(B, K);
  return mbs_cpaCrba(B, K);
}
