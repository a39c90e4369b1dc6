/// \file schur_private.h
/// Shared by the files of src/schur/ only: the record layout of a compliance-form body, the small
/// dense kernels (packed Cholesky, triangular solves) and the joint helpers of the elimination.
/// Notation and the method: schur_factor.c and docs/formulation.md Part 4.
#ifndef MBS_SCHUR_PRIVATE_H
#define MBS_SCHUR_PRIVATE_H

#include <math.h>
#include <string.h>
#include "mbspar/mbs_schur.h"
#include "spatial.h"
#include "flops.h"

// ---------------------------------------------------------------- small dense helpers

// record layout of body b (joint b): a0 (6), kw (6), y (l), L packed (l(l+1)/2), W (l x 6)
#define MBS_REC_A0(r)   (r)
#define MBS_REC_KW(r)   ((r) + 6)
#define MBS_REC_Y(r)    ((r) + 12)
#define MBS_REC_L(r, l) ((r) + 12 + (l))
#define MBS_REC_W(r, l) ((r) + 12 + (l) + (l) * ((l) + 1) / 2)
// spath work per component: P (6 rows of MBS_SPIKE_LD), Theta (MBS_SPIKE_LD^2), gam
#define MBS_SPW    (6 * MBS_SPIKE_LD + MBS_SPIKE_LD * MBS_SPIKE_LD + MBS_SPIKE_LD)
#define MBS_SPW_TH (6 * MBS_SPIKE_LD)
#define MBS_SPW_GA (6 * MBS_SPIKE_LD + MBS_SPIKE_LD * MBS_SPIKE_LD)
// a tree of paths (spath = 2), per component of nc port columns: P (6 rows of nc), Theta (nc^2),
// gam (nc)
#define MBS_TPW(nc) (6 * (nc) + (nc) * (nc) + (nc))

static inline int mbs_schurRecSize(int l) {
  return 12 + l + l * (l + 1) / 2 + 6 * l;
}

// packed lower triangle: element (i, j), j <= i
#define MBS_PK(i, j) ((i) * ((i) + 1) / 2 + (j))

// in-place Cholesky of a packed n x n SPD matrix; 0 if not positive definite
static inline int mbs_cholPacked(mbsReal *restrict L, int n) {
  for (int j = 0; j < n; j++) {
    mbsReal d = L[MBS_PK(j, j)];
    for (int k = 0; k < j; k++) d -= L[MBS_PK(j, k)] * L[MBS_PK(j, k)];
    if (!(d > 0)) return 0;
    d = sqrt(d);
    L[MBS_PK(j, j)] = d;
    mbsReal inv = 1 / d;
    for (int i = j + 1; i < n; i++) {
      mbsReal v = L[MBS_PK(i, j)];
      for (int k = 0; k < j; k++) v -= L[MBS_PK(i, k)] * L[MBS_PK(j, k)];
      L[MBS_PK(i, j)] = v * inv;
    }
  }
  return 1;
}
// x <- L^{-1} x
static inline void mbs_fwdPacked(const mbsReal *restrict L, int n, mbsReal *restrict x) {
  for (int i = 0; i < n; i++) {
    mbsReal v = x[i];
    for (int k = 0; k < i; k++) v -= L[MBS_PK(i, k)] * x[k];
    x[i] = v / L[MBS_PK(i, i)];
  }
}
// x <- L^{-T} x
static inline void mbs_bwdPacked(const mbsReal *restrict L, int n, mbsReal *restrict x) {
  for (int i = n - 1; i >= 0; i--) {
    mbsReal v = x[i];
    for (int k = i + 1; k < n; k++) v -= L[MBS_PK(k, i)] * x[k];
    x[i] = v / L[MBS_PK(i, i)];
  }
}
// X <- L^{-1} X for a row-major n x k block with leading dimension ld (row i: unknown i)
static inline void mbs_fwdPackedRows(const mbsReal *restrict L, int n, mbsReal *restrict X, int k,
                                     int ld) {
  for (int i = 0; i < n; i++) {
    mbsReal *xi = X + (size_t)ld * i;
    for (int l = 0; l < i; l++) {
      mbsReal c = L[MBS_PK(i, l)];
      const mbsReal *xl = X + (size_t)ld * l;
      for (int j = 0; j < k; j++) xi[j] -= c * xl[j];
    }
    mbsReal inv = 1 / L[MBS_PK(i, i)];
    for (int j = 0; j < k; j++) xi[j] *= inv;
  }
}

// F tau for the dofs of body b: S (S^T S)^{-1} tau, the known part of the joint wrench
static inline void mbs_schurKnownWrench(const mbsModel *m, const mbsWork *w, int b, mbsReal *f) {
  int nd = m->body_dofnum[b], da = m->body_dofadr[b];
  const mbsReal *S = w->sdof + 6 * da, *tau = w->qfrc + da;
  if (nd == 1) {
    mbsReal t = tau[0] / mbsu_dot6(S, S);
    for (int i = 0; i < 6; i++) f[i] = S[i] * t;
    return;
  }
  for (int i = 0; i < 6; i++) f[i] = 0;
  if (nd == 0) return;
  mbsReal SS[36], t[6];
  for (int i = 0; i < nd; i++) {
    t[i] = tau[i];
    for (int j = 0; j < nd; j++) SS[nd * i + j] = mbsu_dot6(S + 6 * i, S + 6 * j);
  }
  if (mbsu_cholFactor(SS, nd)) mbsu_cholSolve(SS, nd, t);
  for (int k = 0; k < nd; k++)
    for (int i = 0; i < 6; i++) f[i] += S[6 * k + i] * t[k];
}

// G = X^T T for the nl columns of T (6 each)
static inline void mbs_schurG(const mbsReal *X, const mbsReal *T, int nl, mbsReal *G) {
  for (int k = 0; k < nl; k++) mbsu_xTForce(X, T + 6 * k, G + 6 * k);
}

// Y = Phi G (6 x nl, columns of 6)
static inline void mbs_schurPhiG(const mbsReal *Phi, const mbsReal *G, int nl, mbsReal *Y) {
  for (int k = 0; k < nl; k++) mbsu_mul6(Phi, G + 6 * k, Y + 6 * k);
}

// out (na x nb, row-major, leading dim ld) = A^T B for column sets A (6 x na), B (6 x nb)
static inline void mbs_schurAtB(const mbsReal *A, int na, const mbsReal *B, int nb, mbsReal *out,
                                int ld, int add) {
  for (int i = 0; i < na; i++)
    for (int j = 0; j < nb; j++) {
      mbsReal v = mbsu_dot6(A + 6 * i, B + 6 * j);
      out[ld * i + j] = add ? out[ld * i + j] + v : v;
    }
}

// the constraint directions T of body b (6 x l, columns of 6): cached for revolute joints
static inline void mbs_schurT(const mbsModel *m, const mbsWork *w, const mbsSchur *s, int b,
                              mbsReal *T) {
  if (b >= s->s0 && b < s->s1 && s->kind[b - s->s0] == 1) {
    const mbsReal *n = s->tn + 6 * (b - s->s0);
    memset(T, 0, 30 * sizeof(mbsReal));
    T[0] = n[0], T[1] = n[1], T[2] = n[2];
    T[6] = n[3], T[7] = n[4], T[8] = n[5];
    T[15] = T[22] = T[29] = 1;
    return;
  }
  mbs_bodyComplement(m, w, b, T);
}

static inline int mbs_schurIsPort(const mbsModel *m, const mbsSchur *s, int c) {
  return c >= s->s1 && m->body_lamnum[c] > 0;
}

// the starting compliance of compliance-form body lb: M, or (I^A)^{-1} with inertia-form children
static inline const mbsReal *mbs_schurPhi0(const mbsSchur *s, int lb) {
  return s->phi0_adr[lb] < 0 ? s->Minv + s->minv_adr[lb] : s->Phi0 + s->phi0_adr[lb];
}

// the spath start of schur_factor.c in two parts: the spike's P, Theta, gam (positions alone)
// and the port's known force in the last body's pA
void mbs_schurSpathStartP(const mbsModel *m, const mbsWork *w, mbsSchur *s, const mbsSchurComp *cp);
void mbs_schurSpathStartBias(const mbsModel *m, mbsWork *w, const mbsSchur *s,
                             const mbsSchurComp *cp);
// the overlapped factor (schur_pre.c): the bias part of the bodies whose inertia part
// mbs_schurFactorPre ran (s1 - 1 down), the state reset; the body mbs_schurFactor goes on with
int mbs_schurPreBias(const mbsModel *m, mbsWork *w, mbsSchur *s);

// light leaves (schur_light.c): the light-leaf port below path body b (its only child), or -1;
// its spike step with the leaf's own term left out (ld, nq: the spike's leading dimension and
// columns, MBS_SPIKE_LD both for a path); in the back-substitution, S^T p at b from t
int mbs_schurLightAt(const mbsModel *m, const mbsSchur *s, int b);
void mbs_schurLightSpike(const mbsModel *m, const mbsWork *w, mbsSchur *s, int q, int b, int ld,
                         int nq, mbsReal *P, mbsReal *Th, mbsReal *gam);
void mbs_schurLightSpikeBack(const mbsModel *m, const mbsWork *w, const mbsSchur *s, int b,
                             mbsReal *p);
// 1 and *sp = S^T p of light leaf b on a joint without the axis-specialised kernels (whose
// rounded dot product S^T p would lose what D^-1 ~ 1e16 multiplies), else 0
int mbs_schurLightSp(const mbsModel *m, const mbsSchur *s, int b, mbsReal *sp);
/// Its compliance Phi = (I^A)^{-1} = Phi_0 + m m^T / sigma (6 x 6) and free acceleration
/// beta = Phi (kw - p^A) = beta_0 + m phi with the soft direction's eigenvalue and bias taken
/// from the model: Phi_0 and beta_0 into Phi and beta, sigma, phi, sqrt(sigma) and m into the
/// component's slot L (MBS_SCHUR_LRW); 0 if it cannot (then nothing is written).
int mbs_schurLightRootPhi(const mbsModel *m, const mbsWork *w, int b, const mbsReal *kw,
                          mbsReal *Phi, mbsReal *beta, mbsReal *L);

// f -= X^T (T lam) for joint c: the wrench its constraint force puts on the parent (schur_back.c)
void mbs_schurSubParentWrench(const mbsModel *m, const mbsWork *w, const mbsSchur *s, int c,
                              const mbsReal *lam, mbsReal *f);

#endif
