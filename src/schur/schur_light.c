/// \file schur_light.c
/// Light leaves at rank cuts (docs/formulation.md 4.9): a light body s on a one-dof joint whose
/// children all lie on other ranks ends the upper side's path without them; its spike term
/// v v^T / D (D = S^T I_s S ~ 1e-16, v = P_s^T S over the children's cut joints) in the port
/// system cancelled everything else on those joints. The component that eliminates those joints
/// (the upper side, in the component-tree passes) writes their unknowns as lambda = R (y; t),
/// R = Q diag(1, .., 1, -sqrt(Ds)/|v|), Q orthogonal with last column v/|v| (Ds: s's inertia
/// about its axis), once the children's systems are added; the factor leaves the leaf's term out
/// of the spikes and it is added in (y, t), where it is Ds/D at (t, t) and -phi sqrt(Ds) at t
/// (phi: s's acceleration along its joint for a motionless parent, pi = 0): moderate entries,
/// nothing cancelled. Back: v^T pi = -sqrt(Ds) t exactly, which replaces the spike's S^T p at s.
/// Checked on synthetic systems by test_schur_lightport, on models by test_schur_light moving_all.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "schur_private.h"
#include "aba_private.h"
#include "body.h"

// the leaf's direction d (body coordinates): e_k of an axis-specialised revolute joint (its
// record's 1/D, u and spikes are along e_k, the joint's sign folded in), else the joint's motion
// subspace column S (any other one-dof joint: general-axis revolute, prismatic; its
// generic record w->U, w->Dinv, w->u)
static void mbs_schurLightDir(const mbsModel *m, const mbsWork *w, int b, mbsReal d[6]) {
  if (mbs_jntSpecial(m, b)) {
    for (int x = 0; x < 6; x++) d[x] = x == m->jnt_axisk[b];
    return;
  }
  memcpy(d, w->sdof + 6 * m->body_dofadr[b], 6 * sizeof(mbsReal));
}

int mbs_schurLightLeaf(const mbsModel *m, int b, int b1) {
  int nch = m->body_childnum[b], ncol = 0;
  if (m->body_parent[b] < 0 || nch < 1 || m->body_dofnum[b] != 1) return 0;
  const int *ch = m->child_list + m->body_childadr[b];
  for (int k = 0; k < nch; k++) {
    int l = ch[k];
    if (l < b1 || m->body_lamnum[l] < 1 || !(m->body_mass[b] < m->body_mass[l]) ||
        !mbs_partitionIsLight(m->body_mass[b], mbs_jntIsFixed(m->body_jnttype[b]), m->body_mass[l],
                              mbs_jntIsFixed(m->body_jnttype[l])))
      return 0;
    ncol += m->body_lamnum[l];
  }
  return ncol <= MBS_SCHUR_LIGHTMAX;
}

int mbs_schurLightCut(const mbsModel *m, const int *start, int n, int exact, int *parent) {
  if (!exact) return mbs_partitionLightCut(m, start, n, parent);
  for (int k = 1; k < n; k++)
    for (int b = start[k]; b < start[n]; b++) {
      int p = m->body_parent[b], r = 0;
      if (p < start[0] || p >= start[k] ||
          !mbs_partitionIsLight(m->body_mass[p], mbs_jntIsFixed(m->body_jnttype[p]),
                                m->body_mass[b], mbs_jntIsFixed(m->body_jnttype[b])))
        continue;
      while (start[r + 1] <= p) r++;                                 // p's range
      if (exact == 2 && m->body_mass[b] < m->body_mass[p]) continue; // a light root, taken
      if (m->body_mass[p] < m->body_mass[b]) {                       // p the light body
        const int *ch = m->child_list + m->body_childadr[p];
        int kept = 0; // a child on p's range: p's D includes it (no light leaf)
        for (int c = 0; c < m->body_childnum[p]; c++) kept |= ch[c] < start[r + 1];
        if (kept || (m->body_parent[p] >= start[r] && mbs_schurLightLeaf(m, p, start[r + 1])))
          continue;
      }
      *parent = p;
      return b;
    }
  *parent = -1;
  return -1;
}

mbsReal mbs_schurLightBasis(const mbsModel *m, const mbsWork *w, int b, mbsReal *R, int *ncol) {
  const int *ch = m->child_list + m->body_childadr[b];
  mbsReal T[36], G[36], v[MBS_SCHUR_LIGHTMAX], d[6];
  int n = 0;
  mbs_schurLightDir(m, w, b, d);
  for (int c = 0; c < m->body_childnum[b]; c++) { // v = P_b^T d over b's ports, in child order
    int l = ch[c], nl = m->body_lamnum[l];
    mbs_bodyComplement(m, w, l, T);
    mbs_schurG(w->xpar + 12 * l, T, nl, G);
    for (int j = 0; j < nl; j++) v[n] = mbsu_dot6(G + 6 * j, d), n++;
  }
  *ncol = n;
  mbsReal Ds, f[6]; // d^T I_b d: the leaf's own inertia along its joint
  if (mbs_jntSpecial(m, b)) {
    const int k = m->jnt_axisk[b];
    const mbsReal *c = m->body_com + 3 * b, *in = m->body_inertia + 6 * b;
    Ds = in[k] + m->body_mass[b] * (c[0] * c[0] + c[1] * c[1] + c[2] * c[2] - c[k] * c[k]);
  } else {
    mbs_bodyInertiaMul(m, b, d, f);
    Ds = mbsu_dot6(d, f);
  }
  mbsReal sd = Ds > 0 ? sqrt(Ds) : 0;
  return mbs_schurLightR(v, n, sd, R) ? sd : 0;
}

int mbs_schurLightR(const mbsReal *v, int n, mbsReal sd, mbsReal *R) {
  mbsReal u[MBS_SCHUR_LIGHTMAX], nv = 0, uu = 0;
  for (int i = 0; i < n; i++) nv += v[i] * v[i];
  nv = sqrt(nv);
  for (int i = 0; i < n * n; i++) R[i] = 0;
  if (!(nv > 0) || !(sd > 0) || !isfinite(nv)) {
    for (int i = 0; i < n; i++) R[n * i + i] = 1;
    return 0;
  }
  // Householder H = I - 2 u u^T / u^T u, u = v/|v| + sg e_last: H e_last = -sg v/|v|
  const mbsReal sg = v[n - 1] >= 0 ? 1 : -1;
  for (int i = 0; i < n; i++) u[i] = v[i] / nv;
  u[n - 1] += sg;
  for (int i = 0; i < n; i++) uu += u[i] * u[i];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      R[n * i + j] = ((i == j) - 2 * u[i] * u[j] / uu) * (j == n - 1 ? sg * sd / nv : 1);
  return 1;
}

void mbs_schurLightApply(int n, int o, int nl, const mbsReal *R, mbsReal *C, mbsReal *g) {
  mbsReal t[MBS_SCHUR_LIGHTMAX];
  for (int i = 0; i < n; i++) { // C[:, o..] R
    for (int a = 0; a < nl; a++) {
      t[a] = 0;
      for (int j = 0; j < nl; j++) t[a] += C[(size_t)n * i + o + j] * R[nl * j + a];
    }
    for (int a = 0; a < nl; a++) C[(size_t)n * i + o + a] = t[a];
  }
  for (int j = 0; j < n; j++) { // R^T C[o.., :]
    for (int a = 0; a < nl; a++) {
      t[a] = 0;
      for (int i = 0; i < nl; i++) t[a] += R[nl * i + a] * C[(size_t)n * (o + i) + j];
    }
    for (int a = 0; a < nl; a++) C[(size_t)n * (o + a) + j] = t[a];
  }
  for (int a = 0; a < nl; a++) {
    t[a] = 0;
    for (int i = 0; i < nl; i++) t[a] += R[nl * i + a] * g[o + i];
  }
  for (int a = 0; a < nl; a++) g[o + a] = t[a];
  for (int a = o; a < o + nl; a++) // symmetric to the last bit
    for (int j = 0; j < n; j++) {
      mbsReal s = 0.5 * (C[(size_t)n * a + j] + C[(size_t)n * j + a]);
      C[(size_t)n * a + j] = C[(size_t)n * j + a] = s;
    }
}

void mbs_schurLightVec(int nl, const mbsReal *R, mbsReal *x) {
  mbsReal t[MBS_SCHUR_LIGHTMAX];
  for (int i = 0; i < nl; i++) {
    t[i] = 0;
    for (int j = 0; j < nl; j++) t[i] += R[nl * i + j] * x[j];
  }
  memcpy(x, t, sizeof(mbsReal) * (size_t)nl);
}

int mbs_schurLightAt(const mbsModel *m, const mbsSchur *s, int b) {
  if (!s->light || m->body_childnum[b] < 1) return -1;
  int l = m->child_list[m->body_childadr[b]];
  if (!mbs_schurIsPort(m, s, l)) return -1;
  for (int q = 0; q < s->nport; q++)
    if (s->port_body[q] == l) return s->light[MBS_SCHUR_LW * q] > 0 ? q : -1;
  return -1;
}

void mbs_schurLightSpike(const mbsModel *m, const mbsWork *w, mbsSchur *s, int q, int b, int ld,
                         int nq, mbsReal *P, mbsReal *Th, mbsReal *gam) {
  const mbsReal *Rb = w->abar + (size_t)MBS_ABAR * b, *c6 = w->cacc + 6 * b;
  mbsReal th[MBS_SCHUR_LIGHTMAX * MBS_SCHUR_LIGHTMAX], ga[MBS_SCHUR_LIGHTMAX],
      gp[MBS_SCHUR_LIGHTMAX], col[6];
  for (int a = 0; a < nq; a++) {
    ga[a] = gam[a], gp[a] = 0;
    for (int x = 0; x < 6; x++) gp[a] += P[ld * x + a] * c6[x];
    for (int c = 0; c < nq; c++) th[nq * a + c] = Th[ld * a + c];
  }
  // 1/D and phi = 1/D (u - U^T c) along the leaf's direction (mbs_schurLightDir)
  mbsReal dinv, phi;
  if (mbs_jntSpecial(m, b)) {
    const int k = m->jnt_axisk[b];
    mbs_abaColK(Rb, k, col);
    dinv = Rb[MBS_REC_DINV];
    phi = dinv * (m->jnt_axis[3 * b + k] * Rb[MBS_REC_U] - mbsu_dot6(col, c6));
  } else {
    const int d0 = m->body_dofadr[b];
    dinv = w->Dinv[36 * b];
    phi = dinv * (w->u[d0] - mbsu_dot6(w->U + 6 * d0, c6));
  }
  if (s->comp[s->body_comp[b - s->s0]].spath == 1) // a path: nq columns, Theta's lower half
    mbs_abaSpike(m, w, b, nq, P, Th, gam);
  else
    mbs_abaSpikeCols(m, w, b, nq, ld, P, Th, gam, s->tpwork);
  // the leaf's own term (P^T S D^-1 S^T P and its part of P^T e) left out: added in (y, t)
  for (int a = 0; a < nq; a++) {
    gam[a] = ga[a] + gp[a];
    for (int c = 0; c < nq; c++) Th[ld * a + c] = th[nq * a + c];
  }
  mbsReal *L = s->light + MBS_SCHUR_LW * q;
  L[0] = 2, L[1] = dinv, L[2] = phi;
}

void mbs_schurLightSpikeBack(const mbsModel *m, const mbsWork *w, const mbsSchur *s, int b,
                             mbsReal *p) {
  int q = mbs_schurLightAt(m, s, b);
  if (q < 0 || s->light[MBS_SCHUR_LW * q] < 2) return;
  const mbsReal *L = s->light + MBS_SCHUR_LW * q;
  if (mbs_jntSpecial(m, b)) {
    p[m->jnt_axisk[b]] = -L[3] * L[4]; // v^T pi = -sqrt(Ds) t
    return;
  }
  mbsReal d[6], dd; // d^T p = -sqrt(Ds) t: p moved along d only (for the wrench and the spike
                    // carried up; the leaf's qdd takes S^T p from mbs_schurLightSp, unrounded)
  mbs_schurLightDir(m, w, b, d);
  dd = mbsu_dot6(d, d);
  if (!(dd > 0)) return;
  const mbsReal h = (-L[3] * L[4] - mbsu_dot6(d, p)) / dd;
  for (int x = 0; x < 6; x++) p[x] += h * d[x];
}

int mbs_schurLightSp(const mbsModel *m, const mbsSchur *s, int b, mbsReal *sp) {
  int q = mbs_schurLightAt(m, s, b);
  if (q < 0 || s->light[MBS_SCHUR_LW * q] < 2 || mbs_jntSpecial(m, b)) return 0;
  const mbsReal *L = s->light + MBS_SCHUR_LW * q;
  *sp = -L[3] * L[4]; // S^T p = v^T pi = -sqrt(Ds) t, d = S
  return 1;
}
