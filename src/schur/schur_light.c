/// \file schur_light.c
/// Light leaves at rank cuts (docs/formulation.md 4.9): a light body s on a revolute joint whose
/// only child l lies on another rank ends the upper side's path without its children; its spike
/// term v v^T / D (D = S^T I_s S ~ 1e-16, v = (S^T G_l)^T) in the port system of joint l cancelled
/// everything else on that joint. Both sides of the cut instead write joint l's unknowns as
/// lambda = R (y; t), R = Q diag(1, .., 1, -sqrt(Ds)/|v|), Q orthogonal with last column v/|v|
/// (Ds: s's inertia about its axis from the model, the same on both ranks); the upper side leaves
/// the leaf's term out of its spikes and adds it in (y, t), where it is Ds/D at (t, t) and
/// -phi sqrt(Ds) at t (phi: s's acceleration along its joint for a motionless parent, pi = 0):
/// a positive definite system of the joint's own size, moderate entries, nothing cancelled. Back:
/// v^T pi = -sqrt(Ds) t exactly, which replaces the spike's S^T p at s. Checked on synthetic
/// systems by test_schur_lightport, on models by test_schur_light moving_all.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "schur_private.h"
#include "aba_private.h"

static int mbs_schurRankOf(const int *start, int P, int b) {
  int r = 0;
  while (r + 1 < P && start[r + 1] <= b) r++;
  return r;
}

int mbs_schurLightCut(const mbsModel *m, const int *start, int P, int l) {
  int p = l >= 0 && l < m->nbody ? m->body_parent[l] : -1, nl = p >= 0 ? m->body_lamnum[l] : 0;
  if (p < 0 || m->body_parent[p] < 0 || nl < 1 || nl > 6 || m->body_childnum[p] != 1 ||
      m->body_dofnum[p] != 1 || !mbs_jntSpecial(m, p) || !(m->body_mass[p] < m->body_mass[l]) ||
      !mbs_partitionIsLight(m->body_mass[p], mbs_jntIsFixed(m->body_jnttype[p]), m->body_mass[l],
                            mbs_jntIsFixed(m->body_jnttype[l])))
    return 0;
  int rp = mbs_schurRankOf(start, P, p);
  return mbs_schurRankOf(start, P, l) != rp && mbs_schurRankOf(start, P, m->body_parent[p]) == rp;
}

mbsReal mbs_schurLightBasis(const mbsModel *m, const mbsWork *w, int l, mbsReal *R) {
  int p = m->body_parent[l], k = m->jnt_axisk[p], nl = m->body_lamnum[l];
  mbsReal T[36], G[36], v[6], u[6], nv = 0, uu = 0;
  mbs_bodyComplement(m, w, l, T);
  mbs_schurG(w->xpar + 12 * l, T, nl, G);
  for (int j = 0; j < nl; j++) v[j] = G[6 * j + k], nv += v[j] * v[j];
  nv = sqrt(nv);
  const mbsReal *c = m->body_com + 3 * p, *in = m->body_inertia + 6 * p;
  mbsReal Ds = in[k] + m->body_mass[p] * (c[0] * c[0] + c[1] * c[1] + c[2] * c[2] - c[k] * c[k]);
  mbsReal sd = Ds > 0 ? sqrt(Ds) : 0;
  for (int i = 0; i < nl * nl; i++) R[i] = 0;
  if (!(nv > 0) || !(sd > 0) || !isfinite(nv)) {
    for (int i = 0; i < nl; i++) R[nl * i + i] = 1;
    return 0;
  }
  // Householder H = I - 2 u u^T / u^T u, u = v/|v| + sg e_last: H e_last = -sg v/|v|
  const mbsReal sg = v[nl - 1] >= 0 ? 1 : -1;
  for (int i = 0; i < nl; i++) u[i] = v[i] / nv;
  u[nl - 1] += sg;
  for (int i = 0; i < nl; i++) uu += u[i] * u[i];
  for (int i = 0; i < nl; i++)
    for (int j = 0; j < nl; j++)
      R[nl * i + j] = ((i == j) - 2 * u[i] * u[j] / uu) * (j == nl - 1 ? sg * sd / nv : 1);
  return sd;
}

void mbs_schurLightApply(int n, int o, int nl, const mbsReal *R, mbsReal *C, mbsReal *g) {
  mbsReal t[6];
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
  mbsReal t[6];
  for (int i = 0; i < nl; i++) {
    t[i] = 0;
    for (int j = 0; j < nl; j++) t[i] += R[nl * i + j] * x[j];
  }
  memcpy(x, t, sizeof(mbsReal) * (size_t)nl);
}

int mbs_schurLightAt(const mbsModel *m, const mbsSchur *s, int b) {
  if (!s->light || m->body_childnum[b] != 1) return -1;
  int l = m->child_list[m->body_childadr[b]];
  if (!mbs_schurIsPort(m, s, l)) return -1;
  for (int q = 0; q < s->nport; q++)
    if (s->port_body[q] == l) return s->light[MBS_SCHUR_LW * q] > 0 ? q : -1;
  return -1;
}

void mbs_schurLightSpike(const mbsModel *m, const mbsWork *w, mbsSchur *s, int q, int b, int ld,
                         int nq, mbsReal *P, mbsReal *Th, mbsReal *gam) {
  const int k = m->jnt_axisk[b];
  const mbsReal *Rb = w->abar + (size_t)MBS_ABAR * b, *c6 = w->cacc + 6 * b;
  mbsReal th[36], ga[6], gp[6], col[6];
  for (int a = 0; a < nq; a++) {
    ga[a] = gam[a], gp[a] = 0;
    for (int x = 0; x < 6; x++) gp[a] += P[ld * x + a] * c6[x];
    for (int c = 0; c < nq; c++) th[nq * a + c] = Th[ld * a + c];
  }
  mbs_abaColK(Rb, k, col);
  const mbsReal dinv = Rb[MBS_REC_DINV];
  const mbsReal phi = dinv * (m->jnt_axis[3 * b + k] * Rb[MBS_REC_U] - mbsu_dot6(col, c6));
  if (ld == MBS_SPIKE_LD && nq == MBS_SPIKE_LD)
    mbs_abaSpike(m, w, b, P, Th, gam);
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

void mbs_schurLightSpikeBack(const mbsModel *m, const mbsSchur *s, int b, mbsReal *p) {
  int q = mbs_schurLightAt(m, s, b);
  if (q < 0 || s->light[MBS_SCHUR_LW * q] < 2) return;
  const mbsReal *L = s->light + MBS_SCHUR_LW * q;
  p[m->jnt_axisk[b]] = -L[3] * L[4]; // v^T pi = -sqrt(Ds) t
}
