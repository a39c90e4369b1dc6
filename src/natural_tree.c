/// \file natural_tree.c
/// The natural-coordinate formulation solved in O(n) (seed 004 §6, docs/natural.md 5): the
/// augmented system is eliminated body by body from the leaves, each body's 18 x 18 block
/// [M_b G_RCᵀ; G_RC 0] absorbing its children's joints (no fill outside the parent's block on a
/// tree), then the multipliers and p̈ are recovered from the roots; the cut joints' rows are added
/// in the range space by unit solves with the same factors, with constraint partitioning.
///
/// Elimination of body c with the joint j to its parent p (E_c = [J_c 0], E_p = [J_p 0]):
///   x_c = z_c − Y_c λ_j,  z_c = B_c⁻¹ r_c,  Y_c = B_c⁻¹ E_cᵀ,  D_j = E_c Y_c,
///   D_j λ_j = E_c z_c + E_p x_p − γ_j,
///   B_p += E_pᵀ D_j⁻¹ E_p,  r_p −= E_pᵀ D_j⁻¹ (E_c z_c − γ_j).
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_critpath.h"
#include "mbspar/mbs_loops.h"
#include "mbspar/mbs_solvertype.h"
#include "loops_private.h"
#include "natural_private.h"
#include "spatial.h"

mbsErr mbs_naturalWorkCreate(const mbsModel *m, mbsNaturalWork **out) {
  *out = NULL;
  MBS_CHECK(!m->sub, MBS_ERR_UNSUPPORTED, "model.formulation = natural needs the whole model");
  mbsNaturalWork *nw = calloc(1, sizeof *nw);
  MBS_CHECK(nw, MBS_ERR_NOMEM, "out of memory");
  size_t nb = (size_t)m->nbody, nl = (size_t)m->nlam_loop;
  nw->nb = m->nbody, nw->nl = m->nlam_loop;
  nw->b0 = 0, nw->b1 = m->nbody;
  nw->s.np = 12 * m->nbody;
  nw->s.p = calloc(12 * nb, sizeof(double));
  nw->s.pd = calloc(12 * nb, sizeof(double));
  nw->s.f = calloc(12 * nb, sizeof(double));
  nw->s.gl = calloc(nl + 1, sizeof(double));
  nw->K = calloc(16 * nb, sizeof(double));
  nw->Ich = calloc(36 * nb, sizeof(double));
  nw->Jc = calloc(72 * nb, sizeof(double));
  nw->Jp = calloc(72 * nb, sizeof(double));
  nw->gj = calloc(6 * nb, sizeof(double));
  nw->rg = calloc(6 * nb, sizeof(double));
  nw->V = calloc(36 * nb, sizeof(double));
  nw->D = calloc(36 * nb, sizeof(double));
  nw->r = calloc(NB * nb, sizeof(double));
  nw->z = calloc(NB * nb, sizeof(double));
  nw->lam = calloc(6 * nb, sizeof(double));
  nw->pdd = calloc(12 * nb, sizeof(double));
  nw->Lr = calloc(nl * 12 * nb + 1, sizeof(double));
  nw->Zl = calloc(nl * 12 * nb + 1, sizeof(double));
  nw->S = calloc(nl * nl + 1, sizeof(double));
  nw->rl = calloc(nl + 1, sizeof(double));
  nw->mu = calloc(nl + 1, sizeof(double));
  nw->perm = calloc(nl + 1, sizeof(int));
  nw->tmp = calloc(12 * nb, sizeof(double));
  if (!(nw->s.p && nw->s.pd && nw->s.f && nw->s.gl && nw->K && nw->Ich && nw->Jc && nw->Jp &&
        nw->gj && nw->rg && nw->V && nw->D && nw->r && nw->z && nw->lam && nw->pdd && nw->Lr &&
        nw->Zl && nw->S && nw->rl && nw->mu && nw->perm && nw->tmp)) {
    mbs_naturalWorkDestroy(&nw);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (natural coordinates, %d bodies)", m->nbody);
  }
  for (int b = 0; b < m->nbody; b++) mbs_natMassK(m, b, nw->K + 16 * b);
  *out = nw;
  return MBS_OK;
}

void mbs_naturalWorkDestroy(mbsNaturalWork **pnw) {
  mbsNaturalWork *nw = *pnw;
  if (!nw) return;
  free(nw->s.p), free(nw->s.pd), free(nw->s.f), free(nw->s.gl);
  free(nw->K), free(nw->Ich), free(nw->Jc), free(nw->Jp), free(nw->gj);
  free(nw->rg), free(nw->V), free(nw->D), free(nw->r), free(nw->z), free(nw->lam);
  free(nw->pdd), free(nw->Lr), free(nw->Zl), free(nw->S), free(nw->rl), free(nw->mu);
  free(nw->tmp), free(nw->perm);
  mbs_naturalPartFree(nw);
  free(nw);
  *pnw = NULL;
}

// y (k) = J x for the k x 12 rows J and a body's 12 p̈ values
static void mbs_ntMulJ(const double *J, int k, const double *x, double *y) {
  for (int i = 0; i < k; i++) {
    double v = 0;
    for (int j = 0; j < 12; j++) v += J[12 * i + j] * x[j];
    y[i] = v;
  }
}

// x (12) -= Jᵀ y
static void mbs_ntSubJT(const double *J, int k, const double *y, double *x) {
  for (int i = 0; i < k; i++)
    for (int j = 0; j < 12; j++) x[j] -= J[12 * i + j] * y[i];
}

// The body blocks are solved in the null space of the rigid-body rows (seed 004 eq. 15's
// null-space variant, docs/natural.md 5): with e orthonormal, G_RC Gᵀ_RC = diag(1, 1, 1, 2, 2, 2)
// and the tangent vectors are N (v, θ) = (v, θ × e1, θ × e2, θ × e3). For [M Gᵀ; G 0] (x; μ) =
// (r1; r2): x_g = Gᵀ diag⁻¹ r2, (Nᵀ M N) y = Nᵀ (r1 − M x_g), x = N y + x_g.

// t (6) = Nᵀ u (12) for the body with axes e
static void mbs_ntNT(const double *e, const double *u, double *t) {
  t[0] = u[0], t[1] = u[1], t[2] = u[2];
  t[3] = t[4] = t[5] = 0;
  for (int k = 0; k < 3; k++) { // Σ_k e_k × u_k (the θ part: (θ × e_k) . u_k = θ . (e_k × u_k))
    double c[3];
    mbsu_cross3(e + 3 * k, u + 3 + 3 * k, c);
    t[3] += c[0], t[4] += c[1], t[5] += c[2];
  }
}

// u (12) = N t (6)
static void mbs_ntN(const double *e, const double *t, double *u) {
  u[0] = t[0], u[1] = t[1], u[2] = t[2];
  for (int k = 0; k < 3; k++) mbsu_cross3(t + 3, e + 3 * k, u + 3 + 3 * k);
}

// The inertia of body b's tangent space with its children's joints: Nᵀ M'_b N with
// M'_b = K_b ⊗ I3 + Σ_children J_pᵀ D⁻¹ J_p. Nᵀ (K ⊗ I3) N in closed form (docs/natural.md 5):
// [m I, −m [c]×; m [c]×, Σ_kl J_kl ((e_k.e_l) I − e_l e_kᵀ)], c = Σ_k c_k e_k.
static void mbs_ntTangentInertia(const double *K, const double *e, double *I) {
  memset(I, 0, 36 * sizeof(double));
  double c[3] = {0, 0, 0};
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < 3; i++) c[i] += K[1 + k] * e[3 * k + i]; // m c
  for (int i = 0; i < 3; i++) I[6 * i + i] = K[0];
  // v-θ block −[mc]×, θ-v block [mc]×
  double X[9] = {0, -c[2], c[1], c[2], 0, -c[0], -c[1], c[0], 0};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) I[6 * i + 3 + j] = -X[3 * i + j], I[6 * (3 + i) + j] = X[3 * i + j];
  for (int k = 0; k < 3; k++)
    for (int l = 0; l < 3; l++) {
      double J = K[4 * (1 + k) + 1 + l];
      if (J == 0) continue;
      double d = mbsu_dot3(e + 3 * k, e + 3 * l);
      for (int i = 0; i < 3; i++) {
        I[6 * (3 + i) + 3 + i] += J * d;
        for (int j = 0; j < 3; j++) I[6 * (3 + i) + 3 + j] -= J * e[3 * l + i] * e[3 * k + j];
      }
    }
}

// x (12) = the body block's solution for (r1 (12), r2 (6)) (r2 NULL: zero)
static void mbs_ntBodySolve(const mbsModel *m, const mbsNaturalWork *nw, int b, const double *r1,
                            const double *r2, double *x) {
  const double *e = nw->s.p + 12 * b + 3, *K = nw->K + 16 * b;
  double xg[12] = {0}, t[12], y[6];
  memcpy(t, r1, sizeof t);
  if (r2) { // x_g = Gᵀ (G Gᵀ)⁻¹ r2: rows (k, k) e_k on e_k; rows (j, k) e_k on e_j, e_j on e_k.
    // G Gᵀ = diag(1, 1, 1, 2, 2, 2) where e is orthonormal; off the manifold (a run's stage
    // states, docs/natural.md 7) the exact 6 x 6 keeps the solve that of the dense system
    static const int pj[6] = {0, 1, 2, 0, 0, 1}, pk[6] = {0, 1, 2, 1, 2, 2};
    double G[54] = {0}, W[36], y[6]; // G (6 x 9) on the e blocks
    for (int r = 0; r < 6; r++) {
      int j = pj[r], k = pk[r];
      for (int i = 0; i < 3; i++) {
        G[9 * r + 3 * j + i] += e[3 * k + i];
        if (j != k) G[9 * r + 3 * k + i] += e[3 * j + i];
      }
    }
    for (int a = 0; a < 6; a++)
      for (int c = 0; c <= a; c++) {
        double v = 0;
        for (int i = 0; i < 9; i++) v += G[9 * a + i] * G[9 * c + i];
        W[6 * a + c] = W[6 * c + a] = v;
      }
    memcpy(y, r2, sizeof y);
    if (mbsu_cholFactor(W, 6)) mbsu_cholSolve(W, 6, y);
    for (int r = 0; r < 6; r++)
      for (int i = 0; i < 9; i++) xg[3 + i] += G[9 * r + i] * y[r];
    for (int al = 0; al < 4; al++) // t -= (K ⊗ I3) x_g
      for (int be = 0; be < 4; be++)
        for (int i = 0; i < 3; i++) t[3 * al + i] -= K[4 * al + be] * xg[3 * be + i];
    for (int q = 0; q < m->body_childnum[b]; q++) { // t -= J_pᵀ D⁻¹ J_p x_g of each child
      int c = m->child_list[m->body_childadr[b] + q], kc = m->body_lamnum[c];
      if (!kc || c >= nw->b1) continue; // (a child on a later part: not in this forest)
      double u[6];
      mbs_ntMulJ(nw->Jp + 72 * c, kc, xg, u);
      mbsu_cholSolve(nw->D + 36 * c, kc, u);
      mbs_ntSubJT(nw->Jp + 72 * c, kc, u, t);
    }
  }
  mbs_ntNT(e, t, y);
  mbsu_cholSolve(nw->Ich + 36 * b, 6, y);
  mbs_ntN(e, y, x);
  for (int i = 0; i < 12; i++) x[i] += xg[i];
}

int mbs_ntCutJoint(const mbsModel *m, const mbsNaturalWork *nw, int c) {
  int p = m->body_parent[c];
  return p >= 0 && p < nw->b0;
}

// the factorisation at the current state (the right sides stay untouched)
mbsErr mbs_ntFactor(const mbsModel *m, mbsNaturalWork *nw) {
  for (int b = nw->b0; b < nw->b1; b++) {
    double G[72];
    mbs_natRigid(&nw->s, b, G, nw->rg + 6 * b);
    mbs_ntTangentInertia(nw->K + 16 * b, nw->s.p + 12 * b + 3, nw->Ich + 36 * b);
  }
  for (int c = nw->b1 - 1; c >= nw->b0; c--) { // leaves first (a parent precedes its children)
    const double *e = nw->s.p + 12 * c + 3;
    double *I = nw->Ich + 36 * c;
    MBS_CHECK(mbsu_cholFactor(I, 6), MBS_ERR_NUMERIC,
              "natural: body %d has no positive definite inertia in its tangent space", c);
    int k = m->body_lamnum[c], p = m->body_parent[c];
    if (!k || mbs_ntCutJoint(m, nw, c)) continue;
    const double *Jc = nw->Jc + 72 * c, *Jp = nw->Jp + 72 * c;
    double *V = nw->V + 36 * c, *D = nw->D + 36 * c, A[36];
    for (int i = 0; i < k; i++) { // A = J_c N, V = (Nᵀ M' N)⁻¹ Aᵀ, D = A V
      mbs_ntNT(e, Jc + 12 * i, A + 6 * i);
      memcpy(V + 6 * i, A + 6 * i, 6 * sizeof(double));
      mbsu_cholSolve(I, 6, V + 6 * i);
    }
    for (int i = 0; i < k; i++)
      for (int l = 0; l <= i; l++) {
        double v = 0;
        for (int j = 0; j < 6; j++) v += A[6 * i + j] * V[6 * l + j];
        D[k * i + l] = D[k * l + i] = v;
      }
    MBS_CHECK(mbsu_cholFactor(D, k), MBS_ERR_NUMERIC,
              "natural: the joint of body %d is singular in the assembled tree", c);
    if (p < 0) continue;
    // Nᵀ M'_p N += (J_p N)ᵀ D⁻¹ (J_p N) (the parent is factored later)
    const double *ep = nw->s.p + 12 * p + 3;
    double Ap[36], W[36], *Ip = nw->Ich + 36 * p;
    for (int i = 0; i < k; i++) mbs_ntNT(ep, Jp + 12 * i, Ap + 6 * i);
    for (int j = 0; j < 6; j++) {
      double col[6];
      for (int i = 0; i < k; i++) col[i] = Ap[6 * i + j];
      mbsu_cholSolve(D, k, col);
      for (int i = 0; i < k; i++) W[6 * i + j] = col[i];
    }
    for (int a = 0; a < 6; a++)
      for (int bb = 0; bb < 6; bb++) {
        double v = 0;
        for (int i = 0; i < k; i++) v += Ap[6 * i + a] * W[6 * i + bb];
        Ip[6 * a + bb] += v;
      }
  }
  return MBS_OK;
}

// x = K⁻¹ rhs with the factors: r (NB per body: 12 forces, 6 rigid γ) and gj (k per joint) in,
// pdd and lam out; rigid: whether the rigid rows' right sides may be nonzero
void mbs_ntSolve(const mbsModel *m, mbsNaturalWork *nw, const double *gj, int rigid) {
  for (int c = nw->b1 - 1; c >= nw->b0; c--) { // backward: z = B⁻¹ r, the parent's right side
    double *z = nw->z + NB * c;
    const double *r = nw->r + NB * c;
    mbs_ntBodySolve(m, nw, c, r, rigid ? r + 12 : NULL, z);
    int k = m->body_lamnum[c], p = m->body_parent[c];
    if (!k || p < 0 || mbs_ntCutJoint(m, nw, c)) continue;
    double t[6];
    mbs_ntMulJ(nw->Jc + 72 * c, k, z, t);
    for (int i = 0; i < k; i++) t[i] -= gj[6 * c + i];
    mbsu_cholSolve(nw->D + 36 * c, k, t);
    mbs_ntSubJT(nw->Jp + 72 * c, k, t, nw->r + NB * p);
  }
  for (int c = nw->b0; c < nw->b1; c++) { // forward: λ_j, x_c = z_c − N V λ_j
    int k = m->body_lamnum[c], p = m->body_parent[c];
    double *x = nw->pdd + 12 * c, *z = nw->z + NB * c, *lam = nw->lam + 6 * c;
    memcpy(x, z, 12 * sizeof(double));
    if (!k || mbs_ntCutJoint(m, nw, c)) continue;
    double t[6], u[6], y[6] = {0, 0, 0, 0, 0, 0}, dx[12];
    mbs_ntMulJ(nw->Jc + 72 * c, k, z, t);
    if (p >= 0) {
      mbs_ntMulJ(nw->Jp + 72 * c, k, nw->pdd + 12 * p, u);
      for (int i = 0; i < k; i++) t[i] += u[i];
    }
    for (int i = 0; i < k; i++) t[i] -= gj[6 * c + i];
    mbsu_cholSolve(nw->D + 36 * c, k, t);
    memcpy(lam, t, (size_t)k * sizeof(double));
    const double *V = nw->V + 36 * c;
    for (int i = 0; i < k; i++)
      for (int j = 0; j < 6; j++) y[j] += V[6 * i + j] * t[i];
    mbs_ntN(nw->s.p + 12 * c + 3, y, dx);
    for (int j = 0; j < 12; j++) x[j] -= dx[j];
  }
}

mbsErr mbs_ntAssemble(const mbsModel *m, const mbsWork *w, mbsNaturalWork *nw) {
  int nb = nw->nb, nl = nw->nl, np = 12 * nb;
  mbsNat *s = &nw->s;
  mbs_natCoords(m, w, s);
  memset(s->f, 0, (size_t)np * sizeof(double));
  mbs_natGravity(m, s);
  MBS_CALL(mbs_natForces(m, w, s));
  // the joints' rows, one joint at a time (joint mode), then the cut joints' (dense rows)
  memset(nw->Jc, 0, 72 * (size_t)nb * sizeof(double));
  memset(nw->Jp, 0, 72 * (size_t)nb * sizeof(double));
  s->blk = 1;
  for (int c = 0; c < nb; c++) {
    s->bc = c, s->bp = m->body_parent[c], s->row0 = s->row = 0;
    s->Jc = nw->Jc + 72 * c, s->Jp = nw->Jp + 72 * c, s->gj = nw->gj + 6 * c;
    mbs_natJoint(m, w, s, c);
  }
  s->blk = 0;
  if (nl) {
    memset(nw->Lr, 0, (size_t)nl * (size_t)np * sizeof(double));
    s->L = nw->Lr, s->nrt = 0, s->row = 0;
    for (int k = 0; k < m->nloop; k++) mbs_natLoop(m, s, k);
  }
  return MBS_OK;
}

void mbs_ntRootSolve(const mbsModel *m, const mbsNaturalWork *nw, int b, const double *r1,
                     double *x) {
  mbs_ntBodySolve(m, nw, b, r1, NULL, x); // (the children's right sides are zero: no input)
  int k = m->body_lamnum[b];
  if (!k || mbs_ntCutJoint(m, nw, b)) return;
  double t[6], y[6] = {0, 0, 0, 0, 0, 0}, dx[12]; // the joint to the ground: x = z − N V λ
  mbs_ntMulJ(nw->Jc + 72 * b, k, x, t);
  mbsu_cholSolve(nw->D + 36 * b, k, t);
  const double *V = nw->V + 36 * b;
  for (int i = 0; i < k; i++)
    for (int j = 0; j < 6; j++) y[j] += V[6 * i + j] * t[i];
  mbs_ntN(nw->s.p + 12 * b + 3, y, dx);
  for (int j = 0; j < 12; j++) x[j] -= dx[j];
}

int mbs_ntLoops(const mbsModel *m, mbsNaturalWork *nw, const double *gl, double tol, int fresh) {
  int nb = nw->nb, nl = nw->nl, np = 12 * nb;
  if (!nl) return 0;
  memcpy(nw->tmp, nw->pdd, (size_t)np * sizeof(double));
  double *zero = nw->lam; // (the unit solves' γ: zero; lam is rewritten by each solve)
  for (int i = 0; fresh && i < nl; i++) {
    const double *li = nw->Lr + (size_t)i * (size_t)np;
    for (int b = 0; b < nb; b++) {
      memcpy(nw->r + NB * b, li + 12 * b, 12 * sizeof(double));
      memset(nw->r + NB * b + 12, 0, 6 * sizeof(double));
    }
    memset(zero, 0, 6 * (size_t)nb * sizeof(double));
    mbs_ntSolve(m, nw, zero, 0);
    memcpy(nw->Zl + (size_t)i * (size_t)np, nw->pdd, (size_t)np * sizeof(double));
  }
  for (int i = 0; i < nl; i++) {
    const double *li = nw->Lr + (size_t)i * (size_t)np;
    double v = -gl[i];
    for (int j = 0; j < np; j++) v += li[j] * nw->tmp[j];
    nw->rl[i] = v;
    for (int k = 0; k < nl; k++) {
      const double *zk = nw->Zl + (size_t)k * (size_t)np;
      double t = 0;
      for (int j = 0; j < np; j++) t += li[j] * zk[j];
      nw->S[(size_t)i * nl + k] = t;
    }
  }
  int rank = mbs_natPivCholP(nw->S, nl, tol, nw->rl, nw->mu, nw->perm);
  memcpy(nw->pdd, nw->tmp, (size_t)np * sizeof(double));
  for (int k = 0; k < nl; k++) {
    const double *zk = nw->Zl + (size_t)k * (size_t)np;
    for (int j = 0; j < np; j++) nw->pdd[j] -= zk[j] * nw->mu[k];
  }
  return rank;
}

// mbs_naturalAccel after the position and velocity stages and the spring-dampers' wrenches (a
// distributed solve's p̈ given: only q̈ from it, mbs_naturalPartGiven)
static mbsErr mbs_naturalSolve(const mbsModel *m, mbsWork *w, mbsNaturalWork *nw, mbsReal *qdd,
                               mbsNaturalInfo *info) {
  int nb = nw->nb, nl = nw->nl, np = 12 * nb;
  mbsNat *s = &nw->s;
  if (nw->given) {
    nw->given = 0;
    mbs_natCoords(m, w, s);
    double res = mbs_natQdd(m, w, s, nw->pdd, qdd);
    if (info) {
      memset(info, 0, sizeof *info);
      info->np = np, info->nrigid = 6 * nb, info->njoint = m->nlam + nl;
      info->qdd_residual = res, info->acc_residual = NAN, info->vel_residual = NAN;
    }
    return MBS_OK;
  }
  MBS_CHECK(nw->b0 == 0 && nw->b1 == nb, MBS_ERR_INTERNAL,
            "natural: a distributed workspace in the whole-model solve");
  MBS_CALL(mbs_ntAssemble(m, w, nw));
  MBS_CALL(mbs_ntFactor(m, nw));
  // the tree's solution
  for (int b = 0; b < nb; b++) {
    memcpy(nw->r + NB * b, s->f + 12 * b, 12 * sizeof(double));
    memcpy(nw->r + NB * b + 12, nw->rg + 6 * b, 6 * sizeof(double));
  }
  mbs_ntSolve(m, nw, nw->gj, 1);
  int rank = mbs_ntLoops(m, nw, s->gl, m->opt.rank_tol > 0 ? m->opt.rank_tol : 1e-10, 1);
  MBS_CHECK(rank >= 0, MBS_ERR_NOMEM, "out of memory");
  double res = mbs_natQdd(m, w, s, nw->pdd, qdd);
  if (info) {
    memset(info, 0, sizeof *info);
    info->np = np, info->nrigid = 6 * nb, info->njoint = m->nlam + nl;
    info->nredundant = nl - rank;
    info->qdd_residual = res;
    info->acc_residual = NAN, info->vel_residual = NAN; // (the dense reference reports them)
  }
  return MBS_OK;
}

mbsErr mbs_naturalAccel(const mbsModel *m, const mbsState *st, mbsWork *w, mbsNaturalWork *nw,
                        mbsReal *qdd, mbsNaturalInfo *info) {
  mbs_fwdPosition(m, st, w);
  mbs_fwdVelocity(m, st, w);
  if (m->nforce) mbs_fwdForces(m, w); // spring-dampers -> w->fext
  return mbs_naturalSolve(m, w, nw, qdd, info);
}

// ---------------------------------------------------------------- the solver table's row

static void mbs_naturalExtFree(void **ext) {
  mbsNaturalWork *nw = *ext;
  mbs_naturalWorkDestroy(&nw);
  *ext = NULL;
}

// the workspace of the row below (once, before the step loop: mbs_workEnableMethod)
static mbsErr mbs_naturalWork(const mbsModel *m, mbsWork *w) {
  if (w->ext) return MBS_OK;
  mbsNaturalWork *nw = NULL;
  MBS_CALL(mbs_naturalWorkCreate(m, &nw));
  w->ext = nw, w->ext_free = mbs_naturalExtFree;
  return MBS_OK;
}

mbsErr mbs_naturalWorkOf(const mbsModel *m, mbsWork *w, mbsNaturalWork **nw) {
  *nw = NULL;
  MBS_CALL(mbs_naturalWork(m, w));
  MBS_CHECK(w->ext_free == mbs_naturalExtFree, MBS_ERR_INTERNAL,
            "model.formulation = natural: the workspace holds another method's data");
  *nw = w->ext;
  return MBS_OK;
}

// The closed loops' forces in the joint formulation's terms (docs/natural.md 8), from the q̈ that
// the natural solve found with the cut joints among its rows: the closure equations' multipliers
// λ (w->lam after the tree's, the loop wrenches D λ in w->fext) are what makes the tree's inverse
// dynamics at that q̈ meet the applied joint forces: G^T λ = e, e = RNEA(q̈; spring-dampers) −
// Q_applied, with G the closure Jacobian (mbs_loopJacobian). Solved as G G^T λ = G e by the loop
// layer's rank-revealing factorization (Jacobi-scaled pivoted Cholesky, rank_tol) and its
// minimum-norm solve: unique where the closure equations are independent, so λ equals the joint
// formulation's; with redundant equations it is the solution of least sum (G G^T)_ii λ_i^2, where
// the joint formulation takes least sum (G H^-1 G^T)_ii λ_i^2 (both balance the same joint
// forces). Cost: O(n_eq * depth) for G, O(n_eq * nv) for the products, O(n_eq^3) the factor.
static mbsErr mbs_naturalLoopForces(const mbsModel *m, mbsWork *w) {
  struct mbsLoopWork *lw = w->loop;
  MBS_CHECK(lw && lw->G, MBS_ERR_INTERNAL, "natural: the workspace has no whole-model loop solver");
  int n = lw->n, nv = m->nv;
  mbs_rnea(m, w, w->qdd); // qfrc_inv: the joint forces this q̈ needs without the loop forces
  mbs_loopAll(m, w, lw, 1);
  mbs_loopJacobian(m, w, lw->G);
  for (int i = 0; i < n; i++) {
    const mbsReal *gi = lw->G + (size_t)i * nv;
    mbsReal b = 0;
    for (int d = 0; d < nv; d++) b += gi[d] * (w->qfrc_inv[d] - w->qfrc[d]);
    lw->rhs[i] = b;
  }
  lw->nskip = 0;
  memset(lw->skip, 0, (size_t)n);
  mbs_loopFactorCols(m, lw, NULL); // G G^T, every column
  mbs_loopMinNorm(lw, lw->rhs, lw->lam);
  mbs_loopAddWrench(m, lw, lw->lam, w->fext);
  w->fext_on = 1;
  memcpy(w->lam + m->nlam, lw->lam, (size_t)n * sizeof(mbsReal));
  return MBS_OK;
}

// mbs_forward's tree solve under model.formulation = "natural" (docs/natural.md 8): q̈ by the O(n)
// elimination, then the body accelerations and joint wrenches that the joint formulation reports
// (RNEA at that q̈ with the external wrenches: the same quantities, so λ means the same)
static mbsErr mbs_naturalTree(const mbsModel *m, mbsWork *w) {
  MBS_CALL(mbs_naturalWork(m, w)); // (the first call allocates, as crba's dense inertia)
  MBS_CHECK(w->ext_free == mbs_naturalExtFree, MBS_ERR_INTERNAL,
            "model.formulation = natural: the workspace holds another method's data");
  MBS_CALL(mbs_naturalSolve(m, w, w->ext, w->qdd, NULL));
  if (m->nloop) MBS_CALL(mbs_naturalLoopForces(m, w));
  mbs_rnea(m, w, w->qdd);
  memcpy(w->jfrc, w->frc, 6 * (size_t)m->nbody * sizeof(mbsReal));
  if (m->nloop) { // the acceleration-level closure at the solution, as mbs_loopSolve reports it
    struct mbsLoopWork *lw = w->loop;
    mbsReal ag[6];
    mbs_baseAccel(m, 1, ag);
    lw->resid = 0;
    for (int i = 0; i < lw->n; i++)
      lw->resid = fmax(lw->resid, fabs(mbs_loopDotAcc(m, lw, i, w->acc, ag) - lw->kappa[i]));
  }
  return MBS_OK;
}

// model.formulation = "natural": a serial whole-model method behind mbs_forward (rank 0), as aba
// and crba; the config maps the formulation to this row (src/config.c)
const mbsSolverType mbs_solverNatural = {.name = "natural",
                                         .method = MBS_SOLVER_NATURAL,
                                         .baseline = 1,
                                         .tree = mbs_naturalTree,
                                         .work = mbs_naturalWork,
                                         .loops_inside = 1,
                                         .cpa_build = mbs_cpaNaturalGraph,
                                         .natural = 1};
