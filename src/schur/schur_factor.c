/// \file schur_factor.c
/// Exact elimination of the constraint-force system A lam = b on a segment of bodies, in
/// compliance form, with the joints that leave the segment kept as ports (docs/formulation.md,
/// "The exact solver"). Notation (per body b, parent p, joint i = b):
///   M_b = I_b^{-1} (6x6),  T_i: constraint directions (6 x l_i),  G_i = X_ip^T T_i,
///   a0_b: acceleration of b under the known forces alone,  c_b: velocity-product term.
/// The energy Q(lam) = sum_b [1/2 w_b^T M_b w_b + a0_b^T w_b] + a0_g^T w_g - sum_i c_i^T T_i lam_i
/// with the body wrenches w_b = T_b lam_b - sum_{children c} G_c lam_c has gradient A lam - b, so
/// eliminating a joint is minimising Q over its lambda. Each body keeps the reduced element
///   E_b(w, pi) = 1/2 w^T Phi_b w + beta_b^T w + w^T Psi_b pi + 1/2 pi^T Theta_b pi - gam_b^T pi
/// over the unknown wrench w on it and the lower ports pi of its subtree. Absorbing child c into
/// b (minimising over lam_c) is one pivot block of the leaf-first block Cholesky of A:
///   D = T_c^T Phi_c T_c + G_c^T Phi_b G_c = L L^T,  W = L^{-1} (Phi_b G_c)^T,
///   rho = T_c^T (c_c - beta_c) + G_c^T beta_b,  y = L^{-1} rho,
///   R = [G_c^T Psi_b | -T_c^T Psi_c],  V = L^{-1} R,
///   Phi_b -= W^T W,  beta_b -= W^T y,  Psi_b = [Psi_b | 0] - W^T V,
///   Theta_b = diag(Theta_b, Theta_c) - V^T V,  gam_b = [gam_b; gam_c] + V^T y,
/// and back-substitution is L^T lam_c = y + W f' + V pi with f' the wrench on b from the
/// unknowns that were still open when c was absorbed.
#include <math.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "schur_private.h"
#ifdef _OPENMP
#include <omp.h>
#endif

// ---------------------------------------------------------------- elimination

// The pivot block of joint c (child of b), generic joint: D (packed) = T^T Phi_c T + G^T Phi_b G,
// Y = Phi_b G (written into W, nl x 6 row-major = columns of Y), rho = T^T (c_c - beta_c) +
// G^T beta_b. Writes T and G for the port terms.
static void mbs_schurPivotGeneric(const mbsModel *m, const mbsWork *w, const mbsSchur *s, int c,
                                  const mbsReal *Phib, const mbsReal *betab, mbsReal *T, mbsReal *G,
                                  mbsReal *D, mbsReal *W, mbsReal *rho) {
  int lc = c - s->s0, nl = m->body_lamnum[c];
  mbsReal PT[36], d[6];
  mbs_schurT(m, w, s, c, T);
  mbs_schurG(w->xpar + 12 * c, T, nl, G);
  mbs_schurPhiG(Phib, G, nl, W);
  mbs_schurPhiG(s->Phi + 36 * lc, T, nl, PT);
  for (int i = 0; i < nl; i++)
    for (int j = 0; j <= i; j++)
      D[MBS_PK(i, j)] = mbsu_dot6(T + 6 * i, PT + 6 * j) + mbsu_dot6(G + 6 * i, W + 6 * j);
  for (int r = 0; r < 6; r++) d[r] = w->cacc[6 * c + r] - s->beta[6 * lc + r];
  for (int i = 0; i < nl; i++) rho[i] = mbsu_dot6(T + 6 * i, d) + mbsu_dot6(G + 6 * i, betab);
}

// The same for a revolute joint c: T = [n1 n2 0; 0 0 1], G = X^T T = [E^T n1, E^T n2, r x E^T;
// 0, 0, E^T] with X = (E, r); no generic 6 x 6 products.
static void mbs_schurPivotRevolute(const mbsWork *w, const mbsSchur *s, int c,
                                   const mbsReal *restrict Phib, const mbsReal *restrict betab,
                                   mbsReal *restrict G, mbsReal *restrict D, mbsReal *restrict W,
                                   mbsReal *restrict rho) {
  int lc = c - s->s0;
  const mbsReal *E = w->xpar + 12 * c, *r = E + 9, *n = s->tn + 6 * lc;
  const mbsReal *Pc = s->Phi + 36 * lc;
  // G columns: g0, g1 pure moments [E^T n_k; 0]; g(2+j) = [r x e_j; e_j], e_j = row j of E
  mbsReal u[2][3];
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < 3; i++)
      u[k][i] = E[i] * n[3 * k] + E[3 + i] * n[3 * k + 1] + E[6 + i] * n[3 * k + 2];
  for (int k = 0; k < 2; k++) {
    G[6 * k] = u[k][0], G[6 * k + 1] = u[k][1], G[6 * k + 2] = u[k][2];
    G[6 * k + 3] = G[6 * k + 4] = G[6 * k + 5] = 0;
  }
  for (int j = 0; j < 3; j++) {
    mbsReal *g = G + 6 * (2 + j);
    const mbsReal *e = E + 3 * j;
    g[0] = r[1] * e[2] - r[2] * e[1];
    g[1] = r[2] * e[0] - r[0] * e[2];
    g[2] = r[0] * e[1] - r[1] * e[0];
    g[3] = e[0], g[4] = e[1], g[5] = e[2];
  }
  // Y = Phi_b G into W (row k = column k of Y)
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < 6; i++)
      W[6 * k + i] = Phib[6 * i] * u[k][0] + Phib[6 * i + 1] * u[k][1] + Phib[6 * i + 2] * u[k][2];
  for (int k = 2; k < 5; k++) mbsu_mul6(Phib, G + 6 * k, W + 6 * k);
  // T^T Phi_c T: [n^T A n, n^T B; B^T n, C] with Phi_c = [A B; B^T C]
  mbsReal An[2][3], tpt[15];
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < 3; i++)
      An[k][i] = Pc[6 * i] * n[3 * k] + Pc[6 * i + 1] * n[3 * k + 1] + Pc[6 * i + 2] * n[3 * k + 2];
  tpt[MBS_PK(0, 0)] = mbsu_dot3(n, An[0]);
  tpt[MBS_PK(1, 0)] = mbsu_dot3(n + 3, An[0]);
  tpt[MBS_PK(1, 1)] = mbsu_dot3(n + 3, An[1]);
  for (int j = 0; j < 3; j++) { // rows 2..4: B^T n (Phi_c row 3 + j, angular columns), C
    const mbsReal *row = Pc + 6 * (3 + j);
    tpt[MBS_PK(2 + j, 0)] = row[0] * n[0] + row[1] * n[1] + row[2] * n[2];
    tpt[MBS_PK(2 + j, 1)] = row[0] * n[3] + row[1] * n[4] + row[2] * n[5];
    for (int i = 0; i <= j; i++) tpt[MBS_PK(2 + j, 2 + i)] = row[3 + i];
  }
  // D = T^T Phi_c T + G^T Y
  for (int i = 0; i < 5; i++)
    for (int j = 0; j <= i; j++) {
      const mbsReal *gi = G + 6 * i, *yj = W + 6 * j;
      mbsReal v = gi[0] * yj[0] + gi[1] * yj[1] + gi[2] * yj[2];
      if (i >= 2) v += gi[3] * yj[3] + gi[4] * yj[4] + gi[5] * yj[5];
      D[MBS_PK(i, j)] = tpt[MBS_PK(i, j)] + v;
    }
  // rho = T^T (c_c - beta_c) + G^T beta_b
  mbsReal d[6];
  for (int i = 0; i < 6; i++) d[i] = w->cacc[6 * c + i] - s->beta[6 * lc + i];
  rho[0] = mbsu_dot3(n, d) + mbsu_dot3(u[0], betab);
  rho[1] = mbsu_dot3(n + 3, d) + mbsu_dot3(u[1], betab);
  for (int j = 0; j < 3; j++) rho[2 + j] = d[3 + j] + mbsu_dot6(G + 6 * (2 + j), betab);
}

// Phi_b -= W^T W, beta_b -= W^T y for an nl x 6 W
static inline void mbs_schurUpdate(int nl, const mbsReal *restrict W, const mbsReal *restrict y,
                                   mbsReal *restrict Phib, mbsReal *restrict betab) {
  for (int r = 0; r < 6; r++) {
    for (int q = r; q < 6; q++) {
      mbsReal sum = 0;
      for (int i = 0; i < nl; i++) sum += W[6 * i + r] * W[6 * i + q];
      Phib[6 * r + q] -= sum;
      if (q != r) Phib[6 * q + r] = Phib[6 * r + q];
    }
    mbsReal sum = 0;
    for (int i = 0; i < nl; i++) sum += W[6 * i + r] * y[i];
    betab[r] -= sum;
  }
}

// absorb internal child c into its parent b (both in the segment); 0 if the pivot is singular
static int mbs_schurAbsorb(const mbsModel *m, const mbsWork *w, mbsSchur *s, int b, int c) {
  int lb = b - s->s0, lc = c - s->s0, nl = m->body_lamnum[c];
  int wb = s->cur[lb], ncc = s->body_nc[lc], ncf = s->body_nc[lb];
  mbsReal *Phib = s->Phi + 36 * lb, *betab = s->beta + 6 * lb;
  mbsReal *Psib = s->Psi + s->psi_adr[lb], *Thb = s->Theta + s->th_adr[lb];
  mbsReal *gamb = s->gam + s->gam_adr[lb];

  // the child's ports join the parent's block (columns wb .. wb + ncc), decoupled so far
  if (ncc > 0) {
    const mbsReal *Thc = s->Theta + s->th_adr[lc], *gamc = s->gam + s->gam_adr[lc];
    for (int i = 0; i < ncc; i++) {
      for (int j = 0; j < wb; j++) Thb[ncf * (wb + i) + j] = Thb[ncf * j + wb + i] = 0;
      for (int j = 0; j < ncc; j++) Thb[ncf * (wb + i) + wb + j] = Thc[ncc * i + j];
      gamb[wb + i] = gamc[i];
      for (int r = 0; r < 6; r++) Psib[6 * (wb + i) + r] = 0;
    }
    s->cur[lb] = wb + ncc;
  }
  if (nl == 0) return 1; // free joint: no constraint couples c to b
  MBS_FLOPS(
      mbs_flopSchurAbsorb(nl, s->kind[lc] == 1, mbs_flopSchurT(m, s, c), wb, ncc, s->v_w[lc]));

  mbsReal *rec = s->rec + s->rec_adr[lc];
  mbsReal *L = MBS_REC_L(rec, nl), *Wc = MBS_REC_W(rec, nl), *yc = MBS_REC_Y(rec);
  mbsReal T[36], G[36];
  if (s->kind[lc] == 1) {
    mbs_schurPivotRevolute(w, s, c, Phib, betab, G, L, Wc, yc);
    if (!mbs_cholPacked(L, 5)) return 0;
    mbs_fwdPacked(L, 5, yc);
    mbs_fwdPackedRows(L, 5, Wc, 6, 6);
    mbs_schurUpdate(5, Wc, yc, Phib, betab);
  } else {
    mbs_schurPivotGeneric(m, w, s, c, Phib, betab, T, G, L, Wc, yc);
    if (!mbs_cholPacked(L, nl)) return 0;
    mbs_fwdPacked(L, nl, yc);
    mbs_fwdPackedRows(L, nl, Wc, 6, 6);
    mbs_schurUpdate(nl, Wc, yc, Phib, betab);
  }
  int vw = s->v_w[lc];
  if (vw == 0) return 1;
  // ports: V = L^{-1} [G^T Psi_b | -T^T Psi_c]; Psi_b -= W^T V; Theta_b -= V^T V; gam_b += V^T y
  if (s->kind[lc] == 1) mbs_schurT(m, w, s, c, T);
  const mbsReal *Psic = s->Psi + s->psi_adr[lc];
  mbsReal *V = s->V + s->v_adr[lc];
  for (int i = 0; i < nl; i++) {
    for (int j = 0; j < wb; j++) V[vw * i + j] = mbsu_dot6(G + 6 * i, Psib + 6 * j);
    for (int j = 0; j < ncc; j++) V[vw * i + wb + j] = -mbsu_dot6(T + 6 * i, Psic + 6 * j);
  }
  mbs_fwdPackedRows(L, nl, V, vw, vw);
  for (int j = 0; j < vw; j++)
    for (int r = 0; r < 6; r++) {
      mbsReal sum = 0;
      for (int i = 0; i < nl; i++) sum += Wc[6 * i + r] * V[vw * i + j];
      Psib[6 * j + r] -= sum;
    }
  for (int a = 0; a < vw; a++) {
    for (int bb = 0; bb < vw; bb++) {
      mbsReal sum = 0;
      for (int i = 0; i < nl; i++) sum += V[vw * i + a] * V[vw * i + bb];
      Thb[ncf * a + bb] -= sum;
    }
    mbsReal sum = 0;
    for (int i = 0; i < nl; i++) sum += V[vw * i + a] * yc[i];
    gamb[a] += sum;
  }
  return 1;
}

// attach the lower port of outside child l to body b
static void mbs_schurAttach(const mbsModel *m, const mbsWork *w, mbsSchur *s, int b, int l) {
  int lb = b - s->s0, nl = m->body_lamnum[l], wb = s->cur[lb], ncf = s->body_nc[lb];
  mbsReal *Phib = s->Phi + 36 * lb, *betab = s->beta + 6 * lb;
  mbsReal *Psib = s->Psi + s->psi_adr[lb], *Thb = s->Theta + s->th_adr[lb];
  mbsReal *gamb = s->gam + s->gam_adr[lb];
  mbsReal T[36], G[36], Y[36];
  MBS_FLOPS(mbs_flopSchurAttach(nl, mbs_flopSchurT(m, s, l), wb));
  mbs_schurT(m, w, s, l, T);
  mbs_schurG(w->xpar + 12 * l, T, nl, G);
  mbs_schurPhiG(Phib, G, nl, Y);
  for (int i = 0; i < nl; i++) {
    // Theta: new-new G^T Phi G, new-old -G^T Psi (and its transpose)
    for (int j = 0; j < nl; j++) Thb[ncf * (wb + i) + wb + j] = mbsu_dot6(G + 6 * i, Y + 6 * j);
    for (int j = 0; j < wb; j++) {
      mbsReal v = -mbsu_dot6(G + 6 * i, Psib + 6 * j);
      Thb[ncf * (wb + i) + j] = v;
      Thb[ncf * j + wb + i] = v;
    }
    gamb[wb + i] = mbsu_dot6(G + 6 * i, betab);
  }
  for (int i = 0; i < nl; i++)
    for (int r = 0; r < 6; r++) Psib[6 * (wb + i) + r] = -Y[6 * i + r];
  s->cur[lb] = wb + nl;
}

// the condensed system of the component rooted at r
static int mbs_schurFinishComp(const mbsModel *m, const mbsWork *w, mbsSchur *s, int r) {
  int lr = r - s->s0, nl = m->body_lamnum[r], nc = s->body_nc[lr];
  mbsSchurComp *cp = s->comp + s->body_comp[lr];
  const mbsReal *Phir = s->Phi + 36 * lr, *betar = s->beta + 6 * lr;
  const mbsReal *Psir = s->Psi + s->psi_adr[lr], *Thr = s->Theta + s->th_adr[lr];
  const mbsReal *gamr = s->gam + s->gam_adr[lr];
  int n = cp->n;
  mbsReal T[36], PT[36] = {0}, d[6];
  MBS_FLOPS(mbs_flopSchurFinish(nl, mbs_flopSchurT(m, s, r), nc, cp->up, m->body_parent[r] < 0,
                                s->v_w[lr]));
  if (nl > 0) {
    mbs_schurT(m, w, s, r, T);
    mbs_schurPhiG(Phir, T, nl, PT);
  }
  for (int r6 = 0; r6 < 6; r6++) d[r6] = w->cacc[6 * r + r6] - betar[r6];
  if (cp->up) {
    // [T^T Phi T, T^T Psi; Psi^T T, Theta], [T^T (c - beta); gam]
    mbs_schurAtB(T, nl, PT, nl, cp->C, n, 0);
    mbsReal *L = s->lroot ? s->lroot + MBS_SCHUR_LRW * s->body_comp[lr] : NULL;
    if (L && L[0] > 1) // a light root: its soft part's direction v = T^T m (schur_lightroot.c)
      for (int i = 0; i < nl; i++) L[11 + i] = mbsu_dot6(T + 6 * i, L + 5);
    for (int i = 0; i < nl; i++) {
      for (int j = 0; j < nc; j++) {
        mbsReal v = mbsu_dot6(T + 6 * i, Psir + 6 * j);
        cp->C[n * i + nl + j] = v, cp->C[n * (nl + j) + i] = v;
      }
      cp->g[i] = mbsu_dot6(T + 6 * i, d);
    }
    for (int i = 0; i < nc; i++) {
      for (int j = 0; j < nc; j++) cp->C[n * (nl + i) + nl + j] = Thr[nc * i + j];
      cp->g[nl + i] = gamr[i];
    }
    return 1;
  }
  for (int i = 0; i < nc; i++) {
    for (int j = 0; j < nc; j++) cp->C[n * i + j] = Thr[nc * i + j];
    cp->g[i] = gamr[i];
  }
  if (nl <= 0 || m->body_parent[r] >= 0) return 1; // free joint: nothing to eliminate
  // joint to the ground: absorb into the ground (Phi = 0, beta = a0_g): W = 0
  mbsReal a0g[6], G[36];
  mbs_baseAccel(m, !w->homog, a0g);
  mbs_schurG(w->xpar + 12 * r, T, nl, G);
  mbsReal *rec = s->rec + s->rec_adr[lr];
  mbsReal *L = MBS_REC_L(rec, nl), *yc = MBS_REC_Y(rec), *V = s->V + s->v_adr[lr];
  for (int i = 0; i < nl; i++)
    for (int j = 0; j <= i; j++) L[MBS_PK(i, j)] = mbsu_dot6(T + 6 * i, PT + 6 * j);
  if (!mbs_cholPacked(L, nl)) return 0;
  memset(MBS_REC_W(rec, nl), 0, 6 * (size_t)nl * sizeof(mbsReal));
  for (int i = 0; i < nl; i++) yc[i] = mbsu_dot6(T + 6 * i, d) + mbsu_dot6(G + 6 * i, a0g);
  mbs_fwdPacked(L, nl, yc);
  int vw = s->v_w[lr];
  if (vw > 0) {
    for (int i = 0; i < nl; i++)
      for (int j = 0; j < vw; j++) V[vw * i + j] = -mbsu_dot6(T + 6 * i, Psir + 6 * j);
    mbs_fwdPackedRows(L, nl, V, vw, vw);
    for (int a = 0; a < vw; a++) {
      for (int bb = 0; bb < vw; bb++) {
        mbsReal sum = 0;
        for (int i = 0; i < nl; i++) sum += V[vw * i + a] * V[vw * i + bb];
        cp->C[n * a + bb] -= sum;
      }
      mbsReal sum = 0;
      for (int i = 0; i < nl; i++) sum += V[vw * i + a] * yc[i];
      cp->g[a] += sum;
    }
  }
  return 1;
}

// spath (docs/formulation.md 4.6): at the path's last body, before its pass 2: the spike P =
// G_l of the port l (its force -G_l pi on last), Theta = 0, gam = 0 (kept in the root's Theta and
// gam), and the port joint's known force in last's articulated bias. In two parts for the
// overlapped factor (schur_pre.c): P, Theta, gam (positions alone), then the known force
void mbs_schurSpathStartP(const mbsModel *m, const mbsWork *w, mbsSchur *s,
                          const mbsSchurComp *cp) {
  int l = s->port_body[cp->p0], nl = m->body_lamnum[l];
  mbsReal T[36], G[36], *sw = s->spP + MBS_SPW * (cp - s->comp);
  MBS_FLOPS(mbs_flopSpathStart(nl, mbs_flopSchurT(m, s, l), m->body_dofnum[l]) -
            mbs_flopSpathStart(0, 0, m->body_dofnum[l]));
  mbs_schurT(m, w, s, l, T);
  mbs_schurG(w->xpar + 12 * l, T, nl, G);
  memset(sw, 0, MBS_SPW * sizeof(mbsReal));
  for (int q = 0; q < nl; q++)
    for (int r = 0; r < 6; r++) sw[MBS_SPIKE_LD * r + q] = G[6 * q + r];
}
void mbs_schurSpathStartBias(const mbsModel *m, mbsWork *w, const mbsSchur *s,
                             const mbsSchurComp *cp) {
  int l = s->port_body[cp->p0];
  mbsReal f[6], t[6];
  MBS_FLOPS(mbs_flopSpathStart(0, 0, m->body_dofnum[l]));
  mbs_schurKnownWrench(m, w, l, f);
  mbsu_xTForce(w->xpar + 12 * l, f, t);
  mbsReal *pA = w->abar + (size_t)MBS_ABAR * cp->last + MBS_ABAR_PA;
  for (int r = 0; r < 6; r++) pA[r] += t[r];
}
static void mbs_schurSpathStart(const mbsModel *m, mbsWork *w, mbsSchur *s,
                                const mbsSchurComp *cp) {
  mbs_schurSpathStartP(m, w, s, cp);
  mbs_schurSpathStartBias(m, w, s, cp);
}

// the spike work of component cp: P (6 rows of ld), Theta (ld x ld), gam; ld = MBS_SPIKE_LD for
// a path (spath 1), the port columns nc for a tree of paths (spath 2)
static inline mbsReal *mbs_schurSpw(const mbsSchur *s, const mbsSchurComp *cp, int *ld) {
  int c = (int)(cp - s->comp);
  if (cp->spath == 2) {
    *ld = cp->nc;
    return s->tpool + s->tp_adr[c];
  }
  *ld = MBS_SPIKE_LD;
  return s->spP + MBS_SPW * c;
}

// a tree of paths, at path body b before its pass 2 (or at the root below an upper port, known:
// 0, after its start): the spike columns of b's own ports, P = G_l, and (known) their joints'
// known forces in b's articulated bias
static void mbs_schurTpathPorts(const mbsModel *m, mbsWork *w, mbsSchur *s, const mbsSchurComp *cp,
                                int b, int known) {
  int ld;
  mbsReal *sw = mbs_schurSpw(s, cp, &ld);
  const int *ch = m->child_list + m->body_childadr[b];
  for (int k = 0; k < m->body_childnum[b]; k++) {
    int l = ch[k], nl = m->body_lamnum[l], q = cp->p0;
    if (!mbs_schurIsPort(m, s, l)) continue;
    while (s->port_body[q] != l) q++;
    int col = s->port_cadr[q] - cp->c0;
    mbsReal T[36], G[36], f[6], t[6];
    mbs_schurT(m, w, s, l, T);
    mbs_schurG(w->xpar + 12 * l, T, nl, G);
    for (int j = 0; j < nl; j++)
      for (int r = 0; r < 6; r++) sw[ld * r + col + j] = G[6 * j + r];
    if (!known) {
      MBS_FLOPS(mbs_flopTpathPort(nl, mbs_flopSchurT(m, s, l)));
      continue;
    }
    MBS_FLOPS(mbs_flopSpathStart(nl, mbs_flopSchurT(m, s, l), m->body_dofnum[l]));
    mbs_schurKnownWrench(m, w, l, f);
    mbsu_xTForce(w->xpar + 12 * l, f, t);
    mbsReal *pA = w->abar + (size_t)MBS_ABAR * b + MBS_ABAR_PA;
    for (int r = 0; r < 6; r++) pA[r] += t[r];
  }
}

// spath with a grounded root, after the root's spike (P now in ground coordinates): gam +=
// P^T a0_ground; the port system is C = Theta, g = gam (a path's spike keeps Theta's lower
// triangle alone, mbs_abaSpike: mirrored here; a tree of paths' is full)
static void mbs_schurSpathGround(const mbsModel *m, const mbsWork *w, mbsSchur *s,
                                 mbsSchurComp *cp) {
  int n = cp->n, ld;
  const mbsReal *sw = mbs_schurSpw(s, cp, &ld), *Th = sw + 6 * ld, *ga = sw + 6 * ld + ld * ld;
  const int low = cp->spath == 1;
  mbsReal a0g[6];
  mbs_baseAccel(m, !w->homog, a0g);
  MBS_FLOPS(mbs_flopSpathGround(n));
  for (int i = 0; i < n; i++) {
    mbsReal v = ga[i];
    for (int r = 0; r < 6; r++) v += sw[ld * r + i] * a0g[r];
    for (int j = 0; j < n; j++) cp->C[n * i + j] = low && j > i ? Th[ld * j + i] : Th[ld * i + j];
    cp->g[i] = v;
  }
}

// spath below an upper port, at the root (Phi, beta: (I^A)^{-1} and its free acceleration with
// pi = 0): Psi = -Phi P, Theta += P^T Phi P, gam += P^T beta; mbs_schurFinishComp assembles
static void mbs_schurSpathUp(mbsSchur *s, const mbsSchurComp *cp) {
  int lr = cp->root - s->s0, nc = cp->nc, ld;
  const mbsReal *sw = mbs_schurSpw(s, cp, &ld), *Phi = s->Phi + 36 * lr, *beta = s->beta + 6 * lr;
  mbsReal *Psi = s->Psi + s->psi_adr[lr], *Th = s->Theta + s->th_adr[lr],
          *ga = s->gam + s->gam_adr[lr], pi[6], pj[6];
  MBS_FLOPS(mbs_flopSpathUp(nc));
  for (int j = 0; j < nc; j++) {
    for (int r = 0; r < 6; r++) pj[r] = sw[ld * r + j];
    mbsu_mul6(Phi, pj, Psi + 6 * j);
    for (int r = 0; r < 6; r++) Psi[6 * j + r] = -Psi[6 * j + r];
    ga[j] = sw[6 * ld + ld * ld + j] + mbsu_dot6(pj, beta);
  }
  for (int i = 0; i < nc; i++) {
    for (int r = 0; r < 6; r++) pi[r] = sw[ld * r + i];
    for (int j = 0; j <= i; j++) {
      for (int r = 0; r < 6; r++) pj[r] = sw[ld * r + j];
      mbsReal v = -0.5 * (mbsu_dot6(pi, Psi + 6 * j) + mbsu_dot6(pj, Psi + 6 * i));
      Th[nc * i + j] = sw[6 * ld + ld * i + j] + v;
      Th[nc * j + i] = Th[nc * i + j];
    }
  }
}

mbsErr mbs_schurFactor(const mbsModel *m, mbsWork *w, mbsSchur *s) {
  for (int c = 0; c < s->ncomp; c++) // trees of paths: Theta and gam accumulate from zero
    if (s->comp[c].spath == 2) {
      int nc = s->comp[c].nc;
      memset(s->tpool + s->tp_adr[c] + 6 * nc, 0, sizeof(mbsReal) * (size_t)(nc * nc + nc));
    }
  // the bodies whose inertia part ran during the kinematics prefix: their bias part
  int b = mbs_schurPreBias(m, w, s);
  for (; b >= s->s0; b--) {
    int lb = b - s->s0;
    const int *ch = m->child_list + m->body_childadr[b];
    int nch = m->body_childnum[b];
    if (s->mode[lb]) { // inertia form: ABA's pass 2 (pass 1 just before a record is first used)
      if (s->selfinit[lb]) mbs_abaBodyInit(m, w, b);
      if (s->initp[lb]) mbs_abaBodyInit(m, w, m->body_parent[b]);
      mbsSchurComp *cp = s->comp + s->body_comp[lb];
      if (s->onpath[lb] && b == cp->last) mbs_schurSpathStart(m, w, s, cp);
      if (s->onpath[lb] && cp->spath == 2) mbs_schurTpathPorts(m, w, s, cp, b, 1);
      if (mbs_abaBodyBack(m, w, b) < 0) return MBS_ERR_NUMERIC;
      if (s->onpath[lb] && cp->spath == 2) { // the subtree's columns of the tree's spike
        int ld, o = s->body_c0[lb] - cp->c0;
        mbsReal *sw = mbs_schurSpw(s, cp, &ld);
        int lq = mbs_schurLightAt(m, s, b);
        if (lq >= 0)
          mbs_schurLightSpike(m, w, s, lq, b, ld, s->body_nc[lb], sw + o, sw + 6 * ld + ld * o + o,
                              sw + 6 * ld + ld * ld + o);
        else
          mbs_abaSpikeCols(m, w, b, s->body_nc[lb], ld, sw + o, sw + 6 * ld + ld * o + o,
                           sw + 6 * ld + ld * ld + o, s->tpwork);
        if (b == cp->root) mbs_schurSpathGround(m, w, s, cp);
      } else if (s->onpath[lb]) {
        mbsReal *sw = s->spP + MBS_SPW * s->body_comp[lb];
        int lq = b == cp->last ? mbs_schurLightAt(m, s, b) : -1;
        if (lq >= 0)
          mbs_schurLightSpike(m, w, s, lq, b, MBS_SPIKE_LD, cp->nc, sw, sw + MBS_SPW_TH,
                              sw + MBS_SPW_GA);
        else // the port's nc columns alone, Theta's lower triangle
          mbs_abaSpike(m, w, b, cp->nc, sw, sw + MBS_SPW_TH, sw + MBS_SPW_GA);
        if (b == cp->root) mbs_schurSpathGround(m, w, s, cp);
      }
      continue;
    }
    // M^-1 (kept exactly for the compliance-form bodies without inertia-form children)
    const mbsReal *bias = w->cbias + 6 * b;
    const mbsReal *Mb = s->phi0_adr[lb] < 0 ? s->Minv + s->minv_adr[lb] : NULL;
    if (s->phi0_adr[lb] >= 0) { // with inertia-form children: (I^A)^{-1} and pA of the record
      const mbsReal *R = w->abar + (size_t)MBS_ABAR * b;
      mbsReal IA[36], *P0 = s->Phi0 + s->phi0_adr[lb];
      mbsu_sym6ToFull(R, IA);
      if (!mbsu_cholFactor(IA, 6))
        return mbs_errSet(MBS_ERR_NUMERIC, "schur: articulated inertia of body %s is singular",
                          m->body_name[b]);
      mbsu_cholInverse(IA, 6, P0);
      bias = R + MBS_ABAR_PA, Mb = P0;
    }
    mbsReal *rec = s->rec + s->rec_adr[lb], *kw = MBS_REC_KW(rec);
    // known wrench: own joint force - bias - the compliance-form children's known joint forces
    // (the inertia-form children's are in pA)
    mbsReal wk[6], f[6], t[6];
    mbs_schurKnownWrench(m, w, b, kw);
    MBS_FLOPS(mbs_flopSchurStart(s->phi0_adr[lb] >= 0, m->body_dofnum[b]));
    for (int r = 0; r < 6; r++) wk[r] = kw[r] - bias[r];
    if (w->fext_on && s->phi0_adr[lb] < 0) { // external wrenches (a record's pA has them already)
      for (int r = 0; r < 6; r++) wk[r] += w->fext[6 * b + r];
      MBS_FLOPS(6);
    }
    for (int k = 0; k < nch; k++) {
      int c = ch[k];
      const mbsReal *fc = f;
      if (c < s->s1) {
        if (s->mode[c - s->s0]) continue;
        fc = MBS_REC_KW(s->rec + s->rec_adr[c - s->s0]);
      } else {
        mbs_schurKnownWrench(m, w, c, f);
      }
      mbsu_xTForce(w->xpar + 12 * c, fc, t);
      MBS_FLOPS(MBS_FL_SCHUR_KID + (c < s->s1 ? 0 : mbs_flopSchurKnown(m->body_dofnum[c])));
      for (int r = 0; r < 6; r++) wk[r] -= t[r];
    }
    mbsu_mul6(Mb, wk, MBS_REC_A0(rec));
    if (s->lroot && s->phi0_adr[lb] >= 0 && s->lroot[MBS_SCHUR_LRW * s->body_comp[lb]] > 0) {
      mbsReal *L = s->lroot + MBS_SCHUR_LRW * s->body_comp[lb];
      L[0] = 1; // a light root whose soft part the rank above takes (schur_lightroot.c)
      mbs_schurLightRootPhi(m, w, b, kw, s->Phi0 + s->phi0_adr[lb], MBS_REC_A0(rec), L);
    }
    memcpy(s->beta + 6 * lb, MBS_REC_A0(rec), 6 * sizeof(mbsReal));
    memcpy(s->Phi + 36 * lb, Mb, 36 * sizeof(mbsReal));
    s->cur[lb] = 0;
    const mbsSchurComp *cpb = s->comp + s->body_comp[lb];
    if (cpb->spath == 2) mbs_schurTpathPorts(m, w, s, cpb, b, 0); // the root's own ports
    if (cpb->spath) mbs_schurSpathUp(s, cpb);
    mbsReal *Lr = s->lroot ? s->lroot + MBS_SCHUR_LRW * s->body_comp[lb] : NULL;
    if (Lr && Lr[0] > 1 && cpb->spath && cpb->nc <= 6) { // a light root's soft part on the ports:
      int ld;                                            // -P^T m = P^T q (P^T z = 0 exactly)
      const mbsReal *sw = mbs_schurSpw(s, cpb, &ld);
      for (int j = 0; j < cpb->nc; j++) {
        Lr[23 + j] = 0;
        for (int r = 0; r < 6; r++) Lr[23 + j] += sw[ld * r + j] * Lr[17 + r];
      }
    }
    for (int k = 0; k < nch; k++)
      if (ch[k] < s->s1 && !s->mode[ch[k] - s->s0] && !mbs_schurAbsorb(m, w, s, b, ch[k]))
        return mbs_errSet(MBS_ERR_NUMERIC,
                          "schur: pivot block of joint %s is not positive definite",
                          m->body_name[ch[k]]);
    for (int k = 0; k < nch; k++)
      if (mbs_schurIsPort(m, s, ch[k]) && cpb->spath != 2) mbs_schurAttach(m, w, s, b, ch[k]);
    if (m->body_parent[b] < s->s0 && !mbs_schurFinishComp(m, w, s, b))
      return mbs_errSet(MBS_ERR_NUMERIC, "schur: pivot block of joint %s is not positive definite",
                        m->body_name[b]);
  }
  return MBS_OK;
}
