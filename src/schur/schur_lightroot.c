/// \file schur_lightroot.c
/// Light roots (docs/formulation.md 4.9): a compliance-form root r of a segment below an upper
/// port that is MBS_PARTITION_LIGHT times lighter than its one child c, c in inertia form on a
/// one-dof joint. Its articulated inertia A = I_r + (c's projected inertia) has one soft
/// direction z (c's joint motion seen from r, an exact null vector of the projected inertia), so
/// the Cholesky of A puts the rounding of the projected inertia (eps |I^A_c|) into the soft
/// eigenvalue z^T I_r z (~1e-10 for 1e-8 kg at 0.2 m) and the free acceleration's soft part
/// (eps |p^a_c| against z^T p^a_c = tau_c). Here both come from the model instead: with Z = [Y z]
/// orthogonal (a Householder reflector), A z = I_r z and z^T f = z^T (f_own) - tau_c/|n| exactly,
/// Z^T A Z = [K b; b^T kappa], and
///   Phi = A^{-1} = Y K^{-1} Y^T + m m^T / sigma,  m = z - Y K^{-1} b,  sigma = kappa - b^T K^{-1}
///   b beta = Phi f = Y K^{-1} Y^T f + m (z^T f - b^T K^{-1} Y^T f) / sigma =: beta_0 + m phi.
/// The segment keeps Phi_0 = Y K^{-1} Y^T and beta_0 (moderate) in place of Phi and beta, so its
/// port system on the upper port u is C_0 = T_u^T Phi_0 T_u, g_0 = T_u^T (c_u - beta_0); the soft
/// part, (v v^T / sigma, -v phi) with v = T_u^T m, goes with it to the rank that eliminates u
/// (parallel/schur_par_light.c), which changes variables along v as for a light leaf, so that
/// v^T lambda = -sqrt(sigma) t comes back exactly: a_r = beta_0 + Phi_0 f + m (phi - t /
/// sqrt(sigma)). Only components without lower ports whose upper port is a rank port, on layouts
/// that run the component-tree passes (marked by the parallel layer); everything else as before.
#include <math.h>
#include <string.h>
#include "schur_private.h"
#include "aba_private.h"
#include "body.h"

int mbs_schurLightRoot(const mbsModel *m, const mbsSchur *s, int b) {
  if (m->body_childnum[b] != 1 || m->body_parent[b] >= s->s0 || m->body_parent[b] < 0) return 0;
  int c = m->child_list[m->body_childadr[b]];
  if (c >= s->s1 || !s->mode[c - s->s0] || m->body_dofnum[c] != 1 ||
      !(m->body_mass[b] * MBS_PARTITION_LIGHT <= m->body_mass[c]) ||
      mbs_bodyKindOf(m, b) != MBS_BODY_RIGID)
    return 0;
  return 1;
}

int mbs_schurLightRootPhi(const mbsModel *m, const mbsWork *w, int b, const mbsReal *kw,
                          mbsReal *Phi, mbsReal *beta, mbsReal *L) {
  const int c = m->child_list[m->body_childadr[b]], d0 = m->body_dofadr[c];
  const mbsReal *R = w->abar + (size_t)MBS_ABAR * b;
  mbsReal S[6], n[6], z[6], u[6], Z[36], A[36], Iz[6], AY[36], K[25], kb[5], Kinv[25], mv[6];
  if (mbs_jntSpecial(m, c)) {
    const int k = m->jnt_axisk[c];
    for (int x = 0; x < 6; x++) S[x] = x == k ? m->jnt_axis[3 * c + k] : 0;
  } else {
    memcpy(S, w->sdof + 6 * d0, sizeof S);
  }
  mbsu_xInvMotion(w->xpar + 12 * c, S, n);
  mbsReal nn = sqrt(mbsu_dot6(n, n));
  if (!(nn > 0)) return 0;
  // Householder H = I - 2 u u^T / u^T u, u = n/|n| + sg e_5: H e_5 = -sg n/|n| =: z
  const mbsReal sg = n[5] >= 0 ? 1 : -1;
  mbsReal uu = 0;
  for (int x = 0; x < 6; x++) u[x] = n[x] / nn + (x == 5 ? sg : 0), uu += u[x] * u[x];
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++) Z[6 * i + j] = (i == j) - 2 * u[i] * u[j] / uu;
  for (int x = 0; x < 6; x++) z[x] = Z[6 * x + 5];
  mbsu_sym6ToFull(R, A);
  mbs_bodyInertiaMul(m, b, z, Iz);
  // K = Y^T A Y, b = Y^T I_r z, kappa = z^T I_r z
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 5; j++) {
      mbsReal t = 0;
      for (int x = 0; x < 6; x++) t += A[6 * i + x] * Z[6 * x + j];
      AY[6 * i + j] = t;
    }
  for (int i = 0; i < 5; i++) {
    for (int j = 0; j <= i; j++) {
      mbsReal t = 0;
      for (int x = 0; x < 6; x++)
        t += 0.5 * (Z[6 * x + i] * AY[6 * x + j] + Z[6 * x + j] * AY[6 * x + i]);
      K[5 * i + j] = K[5 * j + i] = t;
    }
    kb[i] = 0;
    for (int x = 0; x < 6; x++) kb[i] += Z[6 * x + i] * Iz[x];
  }
  const mbsReal kappa = mbsu_dot6(z, Iz);
  if (!mbsu_cholFactor(K, 5)) return 0;
  mbsu_cholInverse(K, 5, Kinv);
  mbsReal Kb[5], yf[5], x5[5], sigma = kappa;
  for (int i = 0; i < 5; i++) Kb[i] = kb[i];
  mbsu_cholSolve(K, 5, Kb);
  for (int i = 0; i < 5; i++) sigma -= kb[i] * Kb[i];
  if (!(sigma > 0)) return 0;
  mbsReal qv[6]; // q = Y K^{-1} b, m = z - q
  for (int x = 0; x < 6; x++) {
    qv[x] = 0;
    for (int i = 0; i < 5; i++) qv[x] += Z[6 * x + i] * Kb[i];
    mv[x] = z[x] - qv[x];
  }
  for (int p = 0; p < 6; p++)
    for (int q = 0; q < 6; q++) {
      mbsReal t = 0; // the soft part m m^T / sigma left out (L)
      for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++) t += Z[6 * p + i] * Kinv[5 * i + j] * Z[6 * q + j];
      Phi[6 * p + q] = t;
    }
  for (int p = 0; p < 6; p++)
    for (int q = 0; q < p; q++)
      Phi[6 * p + q] = Phi[6 * q + p] = 0.5 * (Phi[6 * p + q] + Phi[6 * q + p]);
  // f = kw - pA: its z part from the model (z^T X_c^T p^a_c = -sg tau_c / |n|)
  mbsReal f[6], own[6], zf;
  for (int x = 0; x < 6; x++) f[x] = kw[x] - R[MBS_REC_PA + x];
  for (int x = 0; x < 6; x++)
    own[x] = kw[x] - w->cbias[6 * b + x] + (w->fext_on ? w->fext[6 * b + x] : 0);
  zf = mbsu_dot6(z, own) + sg * w->qfrc[d0] / nn;
  for (int i = 0; i < 5; i++) {
    yf[i] = 0;
    for (int x = 0; x < 6; x++) yf[i] += Z[6 * x + i] * f[x];
    x5[i] = yf[i];
  }
  mbsu_cholSolve(K, 5, x5);
  mbsReal mf = zf;
  for (int i = 0; i < 5; i++) mf -= kb[i] * x5[i];
  for (int x = 0; x < 6; x++) { // beta without its soft part m phi (L)
    beta[x] = 0;
    for (int i = 0; i < 5; i++) beta[x] += Z[6 * x + i] * x5[i];
  }
  L[0] = 2, L[1] = sigma, L[2] = mf / sigma, L[3] = sqrt(sigma);
  memcpy(L + 5, mv, sizeof mv);
  memcpy(L + 17, qv, sizeof qv);
  return 1;
}
