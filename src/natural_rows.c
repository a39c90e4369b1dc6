/// \file natural_rows.c
/// The natural-coordinate formulation's pieces (docs/natural.md, src/natural_private.h): the
/// coordinates of the current state, the mass matrix, the generalised forces, the rigid-body,
/// joint and cut-joint rows with their Jacobians and γ, small dense factorisations, and q̈ from p̈.
/// Notation: body b has p_b = (o, e1, e2, e3) in the ground frame (e_k the columns of its
/// orientation X); a body-fixed point r maps to C_r p_b = o + r1 e1 + r2 e2 + r3 e3, a body-fixed
/// vector d to C'_d p_b = d1 e1 + d2 e2 + d3 e3.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_poses.h"
#include "natural_private.h"
#include "spatial.h"
#include "body.h"

// natural coordinates of body b (-1: the ground, fixed at the origin with X = I)
void mbs_natBody(const mbsNat *s, int b, double o[3], double e[9], double od[3], double ed[9]) {
  static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  if (b < 0) {
    memset(o, 0, 3 * sizeof(double)), memcpy(e, I3, sizeof I3);
    memset(od, 0, 3 * sizeof(double)), memset(ed, 0, 9 * sizeof(double));
    return;
  }
  memcpy(o, s->p + 12 * b, 3 * sizeof(double)), memcpy(e, s->p + 12 * b + 3, 9 * sizeof(double));
  memcpy(od, s->pd + 12 * b, 3 * sizeof(double));
  memcpy(ed, s->pd + 12 * b + 3, 9 * sizeof(double));
}

// x = Σ_k v_k e_k (e: e1, e2, e3 stored one after the other)
void mbs_natVec(const double e[9], const double v[3], double x[3]) {
  for (int i = 0; i < 3; i++) x[i] = v[0] * e[i] + v[1] * e[3 + i] + v[2] * e[6 + i];
}

// local coordinates of the world vector x in a body with axes e (x_k = e_k . x)
void mbs_natLocal(const double e[9], const double x[3], double v[3]) {
  for (int k = 0; k < 3; k++) v[k] = e[3 * k] * x[0] + e[3 * k + 1] * x[1] + e[3 * k + 2] * x[2];
}

// constraint row r of the matrix: the G block (row np + r) and its transpose (column np + r);
// loop rows (r >= nrt) go to L
void mbs_natG(mbsNat *s, int r, int col, double v) {
  if (s->blk) { // one joint's rows: on the child (bc) or the parent (bp)
    double *J = col / 12 == s->bc ? s->Jc : s->Jp;
    J[12 * (r - s->row0) + col % 12] += v;
    return;
  }
  if (r >= s->nrt) {
    s->L[(size_t)(r - s->nrt) * (size_t)s->np + (size_t)col] += v;
    return;
  }
  s->A[(size_t)(s->np + r) * (size_t)s->n + (size_t)col] += v;
  s->A[(size_t)col * (size_t)s->n + (size_t)(s->np + r)] += v;
}

// γ of constraint row r
void mbs_natGamma(mbsNat *s, int r, double v) {
  if (s->blk)
    s->gj[r - s->row0] = v;
  else if (r >= s->nrt)
    s->gl[r - s->nrt] = v;
  else
    s->b[s->np + r] = v;
}

// point coincidence: C_rc p_c - C_rp p_p = 0 (3 rows; linear, γ = 0)
// record mode: keep the row's bodies, vectors and value at this state instead of assembling it
static void mbs_natRecord(mbsNat *s, int kind, int pb, int cb, const double *a, const double *b,
                          const double *c, double c0) {
  mbsNatRec *r = &s->rec[s->nrec++];
  r->kind = kind, r->pb = pb, r->cb = cb, r->c0 = c0;
  memcpy(r->a, a, sizeof r->a), memcpy(r->b, b, sizeof r->b);
  if (c)
    memcpy(r->c, c, sizeof r->c);
  else
    memset(r->c, 0, sizeof r->c);
}

void mbs_natPoint(mbsNat *s, int pb, const double rp[3], int cb, const double rc[3]) {
  if (s->rec) {
    mbs_natRecord(s, MBS_NATROW_POINT, pb, cb, rp, rc, NULL, 0);
    s->row += 3;
    return;
  }
  for (int i = 0; i < 3; i++) {
    int r = s->row + i;
    if (cb >= 0) {
      mbs_natG(s, r, 12 * cb + i, 1);
      for (int k = 0; k < 3; k++) mbs_natG(s, r, 12 * cb + 3 + 3 * k + i, rc[k]);
    }
    if (pb >= 0) {
      mbs_natG(s, r, 12 * pb + i, -1);
      for (int k = 0; k < 3; k++) mbs_natG(s, r, 12 * pb + 3 + 3 * k + i, -rp[k]);
    }
    mbs_natGamma(s, r, 0);
  }
  s->row += 3;
}

// (C'_h p_p) . (C'_d p_c) = const: a parent-fixed vector h against a child-fixed vector d
// (1 row; γ = -2 ḣ . ḋ)
void mbs_natDot(mbsNat *s, int pb, const double h[3], int cb, const double d[3]) {
  double op[3], ep[9], opd[3], epd[9], oc[3], ec[9], ocd[3], ecd[9];
  mbs_natBody(s, pb, op, ep, opd, epd);
  mbs_natBody(s, cb, oc, ec, ocd, ecd);
  double hw[3], dw[3], hd[3], dd[3];
  mbs_natVec(ep, h, hw), mbs_natVec(ec, d, dw), mbs_natVec(epd, h, hd), mbs_natVec(ecd, d, dd);
  if (s->rec) {
    mbs_natRecord(s, MBS_NATROW_DOT, pb, cb, h, d, NULL, mbsu_dot3(hw, dw));
    s->row++;
    return;
  }
  int r = s->row;
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < 3; i++) {
      if (pb >= 0) mbs_natG(s, r, 12 * pb + 3 + 3 * k + i, h[k] * dw[i]);
      if (cb >= 0) mbs_natG(s, r, 12 * cb + 3 + 3 * k + i, d[k] * hw[i]);
    }
  mbs_natGamma(s, r, -2 * mbsu_dot3(hd, dd));
  s->row++;
}

// (C_c p_c - C_a p_p) . (C'_h p_p) = 0 at a state where C_c p_c = C_a p_p: the child point c
// slides perpendicular to the parent-fixed vector h (1 row; γ = -2 ṙ . ḣ with
// r = C_c p_c - C_a p_p)
void mbs_natSlide(mbsNat *s, int pb, const double a[3], const double h[3], int cb,
                  const double c[3]) {
  double op[3], ep[9], opd[3], epd[9], oc[3], ec[9], ocd[3], ecd[9];
  mbs_natBody(s, pb, op, ep, opd, epd);
  mbs_natBody(s, cb, oc, ec, ocd, ecd);
  double hw[3], hd[3], ad[3], cd[3], rd[3], aw[3], cw[3], rr[3];
  mbs_natVec(ep, h, hw), mbs_natVec(epd, h, hd), mbs_natVec(epd, a, ad), mbs_natVec(ecd, c, cd);
  mbs_natVec(ep, a, aw), mbs_natVec(ec, c, cw);
  for (int i = 0; i < 3; i++) {
    rd[i] = ocd[i] + cd[i] - opd[i] - ad[i];
    rr[i] = oc[i] + cw[i] - op[i] - aw[i]; // r: zero where a was taken at this state
  }
  if (s->rec) {
    mbs_natRecord(s, MBS_NATROW_SLIDE, pb, cb, a, h, c, mbsu_dot3(rr, hw));
    s->row++;
    return;
  }
  int r = s->row;
  for (int i = 0; i < 3; i++) {
    if (cb >= 0) {
      mbs_natG(s, r, 12 * cb + i, hw[i]);
      for (int k = 0; k < 3; k++) mbs_natG(s, r, 12 * cb + 3 + 3 * k + i, c[k] * hw[i]);
    }
    if (pb >= 0) { // -hᵂᵀ C_a, and r . C'_h (h_k r on e_k)
      mbs_natG(s, r, 12 * pb + i, -hw[i]);
      for (int k = 0; k < 3; k++)
        mbs_natG(s, r, 12 * pb + 3 + 3 * k + i, -a[k] * hw[i] + h[k] * rr[i]);
    }
  }
  mbs_natGamma(s, r, -2 * mbsu_dot3(rd, hd));
  s->row++;
}

// generalised force of a wrench on body b: force f (ground frame) at the world point x, torque n
// (ground frame): C_r^T f on (o, e), and 1/2 n x e_k on e_k (its virtual work is n . δθ on the
// rigid manifold, docs/natural.md 2.3)
void mbs_natWrench(mbsNat *s, int b, const double x[3], const double n[3], const double f[3]) {
  if (b < 0) return;
  double o[3], e[9], od[3], ed[9], d[3], r[3], t[3];
  mbs_natBody(s, b, o, e, od, ed);
  for (int i = 0; i < 3; i++) d[i] = x[i] - o[i];
  mbs_natLocal(e, d, r);
  double *g = s->f + 12 * b;
  for (int i = 0; i < 3; i++) g[i] += f[i];
  for (int k = 0; k < 3; k++) {
    mbsu_cross3(n, e + 3 * k, t);
    for (int i = 0; i < 3; i++) g[3 + 3 * k + i] += r[k] * f[i] + 0.5 * t[i];
  }
}

// dense LU with partial pivoting, in place (A = P L U, piv the row swaps); -1 if singular
int mbs_natFactor(double *A, int *piv, int n) {
  double amax = 0;
  for (size_t i = 0; i < (size_t)n * (size_t)n; i++) amax = fmax(amax, fabs(A[i]));
  for (int k = 0; k < n; k++) {
    int pk = k;
    for (int i = k + 1; i < n; i++)
      if (fabs(A[(size_t)i * n + k]) > fabs(A[(size_t)pk * n + k])) pk = i;
    if (!(fabs(A[(size_t)pk * n + k]) > 1e-14 * amax)) return -1;
    piv[k] = pk;
    if (pk != k)
      for (int j = 0; j < n; j++) {
        double t = A[(size_t)k * n + j];
        A[(size_t)k * n + j] = A[(size_t)pk * n + j], A[(size_t)pk * n + j] = t;
      }
    double inv = 1 / A[(size_t)k * n + k];
    for (int i = k + 1; i < n; i++) {
      double l = A[(size_t)i * n + k] * inv;
      A[(size_t)i * n + k] = l;
      if (l == 0) continue;
      for (int j = k + 1; j < n; j++) A[(size_t)i * n + j] -= l * A[(size_t)k * n + j];
    }
  }
  return 0;
}

// x <- A^{-1} x with the factors of mbs_natFactor
void mbs_natSolve(const double *A, const int *piv, int n, double *x) {
  for (int k = 0; k < n; k++) // the row swaps (whole rows were swapped: P A = L U)
    if (piv[k] != k) {
      double t = x[k];
      x[k] = x[piv[k]], x[piv[k]] = t;
    }
  for (int k = 0; k < n; k++)
    for (int i = k + 1; i < n; i++) x[i] -= A[(size_t)i * n + k] * x[k];
  for (int i = n - 1; i >= 0; i--) {
    double v = x[i];
    for (int j = i + 1; j < n; j++) v -= A[(size_t)i * n + j] * x[j];
    x[i] = v / A[(size_t)i * n + i];
  }
}

// S y = r for the symmetric positive semidefinite S (k x k, destroyed) by Cholesky with diagonal
// pivoting: a pivot below tol times the largest diagonal drops its row (y = 0 there: constraint
// partitioning, seed 004 §8); returns the rank
int mbs_natPivChol(double *S, int k, double tol, double *r, double *y) {
  int *perm = malloc(sizeof(int) * (size_t)(k + 1));
  if (!perm) return -1;
  int rank = mbs_natPivCholP(S, k, tol, r, y, perm);
  free(perm);
  return rank;
}

int mbs_natPivCholP(double *S, int k, double tol, double *r, double *y, int *perm) {
  int rank = 0;
  double dmax = 0;
  for (int i = 0; i < k; i++) perm[i] = i, dmax = fmax(dmax, S[(size_t)i * k + i]);
  for (; rank < k; rank++) {
    int j = rank; // the largest remaining diagonal
    for (int i = rank + 1; i < k; i++)
      if (S[(size_t)perm[i] * k + perm[i]] > S[(size_t)perm[j] * k + perm[j]]) j = i;
    double d = S[(size_t)perm[j] * k + perm[j]];
    if (!(d > tol * dmax) || !(d > 0)) break;
    int t = perm[rank];
    perm[rank] = perm[j], perm[j] = t;
    int pr = perm[rank];
    d = sqrt(d);
    for (int i = rank; i < k; i++) S[(size_t)perm[i] * k + pr] /= d; // column pr of L
    for (int i = rank + 1; i < k; i++) {
      int pi = perm[i];
      for (int l = rank + 1; l <= i; l++) {
        int pl = perm[l];
        S[(size_t)pi * k + pl] -= S[(size_t)pi * k + pr] * S[(size_t)pl * k + pr];
        if (l != i) S[(size_t)pl * k + pi] = S[(size_t)pi * k + pl];
      }
    }
  }
  // forward and back substitution on the kept rows (L stored below the diagonal, by perm)
  for (int i = 0; i < k; i++) y[i] = 0;
  for (int i = 0; i < rank; i++) {
    double v = r[perm[i]];
    for (int l = 0; l < i; l++) v -= S[(size_t)perm[i] * k + perm[l]] * y[perm[l]];
    y[perm[i]] = v / S[(size_t)perm[i] * k + perm[i]];
  }
  for (int i = rank - 1; i >= 0; i--) {
    double v = y[perm[i]];
    for (int l = i + 1; l < rank; l++) v -= S[(size_t)perm[l] * k + perm[i]] * y[perm[l]];
    y[perm[i]] = v / S[(size_t)perm[i] * k + perm[i]];
  }
  return rank;
}

void mbs_natCoordsBody(const mbsModel *m, const mbsWork *w, mbsNat *s, int b) {
  const double *X = w->xmat + 9 * b;
  double *p = s->p + 12 * b, *pd = s->pd + 12 * b, vel[3], om[3];
  memcpy(p, w->xpos + 3 * b, 3 * sizeof(double));
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < 3; i++) p[3 + 3 * k + i] = X[3 * i + k];
  mbs_bodyVelocityWorld(m, w, b, vel, om);
  memcpy(pd, vel, sizeof vel);
  for (int k = 0; k < 3; k++) mbsu_cross3(om, p + 3 + 3 * k, pd + 3 + 3 * k);
}

void mbs_natCoords(const mbsModel *m, const mbsWork *w, mbsNat *s) {
  for (int b = 0; b < m->nbody; b++) mbs_natCoordsBody(m, w, s, b);
}

void mbs_natMassK(const mbsModel *m, int b, double K[16]) {
  double mass = mbs_bodyMass(m, b), c[3], J[9];
  memcpy(c, mbs_bodyCom(m, b), sizeof c);
  const double *I = mbs_bodyInertiaCom(m, b); // [xx yy zz xy xz yz] about the COM
  double Ic[9] = {I[0], I[3], I[4], I[3], I[1], I[5], I[4], I[5], I[2]};
  double tr2 = 0.5 * (I[0] + I[1] + I[2]);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      J[3 * i + j] = (i == j ? tr2 : 0) - Ic[3 * i + j] + mass * c[i] * c[j];
  K[0] = mass;
  for (int k = 0; k < 3; k++) K[1 + k] = K[4 * (1 + k)] = mass * c[k];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) K[4 * (1 + i) + 1 + j] = J[3 * i + j];
}

void mbs_natRigid(const mbsNat *s, int b, double G[72], double g[6]) {
  const double *e3 = s->p + 12 * b + 3, *ed = s->pd + 12 * b + 3;
  static const int pj[6] = {0, 1, 2, 0, 0, 1}, pk[6] = {0, 1, 2, 1, 2, 2};
  memset(G, 0, 72 * sizeof(double));
  for (int r = 0; r < 6; r++) {
    int j = pj[r], k = pk[r];
    for (int i = 0; i < 3; i++) {
      G[12 * r + 3 + 3 * j + i] += e3[3 * k + i];
      if (j != k) G[12 * r + 3 + 3 * k + i] += e3[3 * j + i];
    }
    g[r] = -(j == k ? 1 : 2) * mbsu_dot3(ed + 3 * j, ed + 3 * k);
  }
}

void mbs_natGravityBody(const mbsModel *m, mbsNat *s, int b) { // m g at the centre of mass
  double f[3], x[3], zero[3] = {0, 0, 0};
  for (int i = 0; i < 3; i++) f[i] = mbs_bodyMass(m, b) * m->gravity[i];
  mbs_natVec(s->p + 12 * b + 3, mbs_bodyCom(m, b), x);
  for (int i = 0; i < 3; i++) x[i] += s->p[12 * b + i];
  mbs_natWrench(s, b, x, zero, f);
}

void mbs_natGravity(const mbsModel *m, mbsNat *s) {
  for (int b = 0; b < m->nbody; b++) mbs_natGravityBody(m, s, b);
}

void mbs_natDenseBodies(const mbsModel *m, mbsNat *s) {
  int n = s->n;
  for (int b = 0; b < m->nbody; b++) {
    double K[16], G[72], g[6];
    mbs_natMassK(m, b, K); // M_b = K ⊗ I3 (2.1)
    for (int al = 0; al < 4; al++)
      for (int be = 0; be < 4; be++)
        for (int i = 0; i < 3; i++)
          s->A[(size_t)(12 * b + 3 * al + i) * (size_t)n + (size_t)(12 * b + 3 * be + i)] =
              K[4 * al + be];
    mbs_natRigid(s, b, G, g); // the rigid-body rows (2.3), on the e blocks
    for (int r = 0; r < 6; r++) {
      for (int j = 3; j < 12; j++)
        if (G[12 * r + j] != 0) mbs_natG(s, 6 * b + r, 12 * b + j, G[12 * r + j]);
      mbs_natGamma(s, 6 * b + r, g[r]);
    }
  }
  mbs_natGravity(m, s);
  s->row = 6 * m->nbody;
}

void mbs_natFextBody(const mbsModel *m, const mbsWork *w, mbsNat *s, int b) {
  if (m->nforce || w->fext_on) { // body coordinates at the body origin, [n; f]
    double nw[3], fw[3];
    mbsu_mulMat3Vec(w->xmat + 9 * b, w->fext + 6 * b, nw);
    mbsu_mulMat3Vec(w->xmat + 9 * b, w->fext + 6 * b + 3, fw);
    mbs_natWrench(s, b, s->p + 12 * b, nw, fw);
  }
}

mbsErr mbs_natForces(const mbsModel *m, const mbsWork *w, mbsNat *s) {
  for (int b = 0; b < m->nbody; b++) mbs_natFextBody(m, w, s, b); // external wrenches
  return mbs_natJointForces(m, w, s);
}

mbsErr mbs_natJointForces(const mbsModel *m, const mbsWork *w, mbsNat *s) {
  for (int b = 0; b < m->nbody; b++) MBS_CALL(mbs_natJointForceBody(m, w, s, b));
  return MBS_OK;
}

mbsErr mbs_natJointForceBody(const mbsModel *m, const mbsWork *w, mbsNat *s, int b) {
  // joint forces: a wrench F = S y with SᵀS y = τ on the child at its origin, -F on the parent
  int k = m->body_dofnum[b], d0 = m->body_dofadr[b];
  if (!k) return MBS_OK;
  const double *S = w->sdof + 6 * d0;
  double G[36], y[6], F[6] = {0, 0, 0, 0, 0, 0}, nw[3], fw[3];
  for (int i = 0; i < k; i++) {
    y[i] = w->qfrc[d0 + i];
    for (int j = 0; j < k; j++) G[k * i + j] = mbsu_dot6(S + 6 * i, S + 6 * j);
  }
  MBS_CHECK(mbsu_cholFactor(G, k), MBS_ERR_NUMERIC,
            "natural: the joint of body %d has a singular motion subspace", b);
  mbsu_cholSolve(G, k, y);
  for (int i = 0; i < k; i++)
    for (int j = 0; j < 6; j++) F[j] += S[6 * i + j] * y[i];
  mbsu_mulMat3Vec(w->xmat + 9 * b, F, nw), mbsu_mulMat3Vec(w->xmat + 9 * b, F + 3, fw);
  mbs_natWrench(s, b, s->p + 12 * b, nw, fw);
  for (int i = 0; i < 3; i++) nw[i] = -nw[i], fw[i] = -fw[i];
  mbs_natWrench(s, m->body_parent[b], s->p + 12 * b, nw, fw);
  return MBS_OK;
}

double mbs_natQdd(const mbsModel *m, mbsWork *w, const mbsNat *s, const double *pddall,
                  mbsReal *qdd) {
  int nb = m->nbody;
  double res = 0, amax = sqrt(mbsu_dot3(m->gravity, m->gravity));
  for (int b = 0; b < nb; b++) {
    const double *e3 = s->p + 12 * b + 3, *pdd = pddall + 12 * b, *X = w->xmat + 9 * b;
    double A3[9], al[3], om[3], vel[3], a6[6], ow[3], vw[3];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++)
        A3[3 * i + j] = pdd[3 + i] * e3[j] + pdd[6 + i] * e3[3 + j] + pdd[9 + i] * e3[6 + j];
    al[0] = 0.5 * (A3[7] - A3[5]), al[1] = 0.5 * (A3[2] - A3[6]), al[2] = 0.5 * (A3[3] - A3[1]);
    mbs_bodyVelocityWorld(m, w, b, vw, ow);
    mbsu_mulMat3TVec(X, al, a6);
    mbsu_mulMat3TVec(X, pdd, a6 + 3);
    mbsu_mulMat3TVec(X, ow, om), mbsu_mulMat3TVec(X, vw, vel);
    double t[3];
    mbsu_cross3(om, vel, t);
    for (int i = 0; i < 3; i++) a6[3 + i] -= t[i];
    memcpy(w->acc + 6 * b, a6, sizeof a6); // true accelerations (no gravity offset)
    for (int i = 0; i < 6; i++) amax = fmax(amax, fabs(a6[i]));
  }
  for (int b = 0; b < nb; b++) {
    int k = m->body_dofnum[b], d0 = m->body_dofadr[b], pb = m->body_parent[b];
    double r[6], xa[6] = {0, 0, 0, 0, 0, 0};
    if (pb >= 0) mbsu_xMotion(w->xpar + 12 * b, w->acc + 6 * pb, xa);
    for (int i = 0; i < 6; i++) r[i] = w->acc[6 * b + i] - xa[i] - w->cacc[6 * b + i];
    const double *S = w->sdof + 6 * d0;
    double G[36], y[6];
    for (int i = 0; i < k; i++) {
      y[i] = mbsu_dot6(S + 6 * i, r);
      for (int j = 0; j < k; j++) G[k * i + j] = mbsu_dot6(S + 6 * i, S + 6 * j);
    }
    if (k && mbsu_cholFactor(G, k)) mbsu_cholSolve(G, k, y);
    for (int i = 0; i < k; i++) {
      qdd[d0 + i] = y[i];
      for (int j = 0; j < 6; j++) r[j] -= S[6 * i + j] * y[i];
    }
    for (int j = 0; j < 6; j++) res = fmax(res, fabs(r[j]));
  }
  return res / fmax(amax, 1e-300);
}

void mbs_natReplay(mbsNat *s, const mbsNatRec *rec, int n) {
  for (int i = 0; i < n; i++) {
    const mbsNatRec *r = rec + i;
    if (r->kind == MBS_NATROW_POINT)
      mbs_natPoint(s, r->pb, r->a, r->cb, r->b);
    else if (r->kind == MBS_NATROW_DOT)
      mbs_natDot(s, r->pb, r->a, r->cb, r->b);
    else
      mbs_natSlide(s, r->pb, r->a, r->b, r->cb, r->c);
  }
}

int mbs_natRecValue(const mbsNat *s, const mbsNatRec *r, double *g) {
  double op[3], ep[9], opd[3], epd[9], oc[3], ec[9], ocd[3], ecd[9], x[3], y[3], h[3];
  mbs_natBody(s, r->pb, op, ep, opd, epd);
  mbs_natBody(s, r->cb, oc, ec, ocd, ecd);
  if (r->kind == MBS_NATROW_POINT) { // C_b p_c - C_a p_p
    mbs_natVec(ec, r->b, x), mbs_natVec(ep, r->a, y);
    for (int i = 0; i < 3; i++) g[i] = oc[i] + x[i] - op[i] - y[i];
    return 3;
  }
  if (r->kind == MBS_NATROW_DOT) {
    mbs_natVec(ep, r->a, x), mbs_natVec(ec, r->b, y);
    g[0] = mbsu_dot3(x, y) - r->c0;
    return 1;
  }
  mbs_natVec(ep, r->a, y), mbs_natVec(ep, r->b, h), mbs_natVec(ec, r->c, x);
  double rr[3];
  for (int i = 0; i < 3; i++) rr[i] = oc[i] + x[i] - op[i] - y[i];
  g[0] = mbsu_dot3(rr, h) - r->c0;
  return 1;
}

int mbs_natLoopSolve(mbsNat *s, int nl, double rank_tol, const int *piv, double *Z, double *S,
                     double *r, double *mu) {
  int n = s->n, np = s->np;
  if (!nl) return 0;
  for (int i = 0; i < nl; i++) { // Z = K⁻¹ [Lᵀ; 0]
    double *z = Z + (size_t)i * (size_t)n;
    memset(z, 0, sizeof(double) * (size_t)n);
    memcpy(z, s->L + (size_t)i * (size_t)np, sizeof(double) * (size_t)np);
    mbs_natSolve(s->A, piv, n, z);
  }
  for (int i = 0; i < nl; i++) { // (L Z) μ = L p̈_t − γ_l
    const double *li = s->L + (size_t)i * (size_t)np;
    double v = -s->gl[i];
    for (int j = 0; j < np; j++) v += li[j] * s->b[j];
    r[i] = v;
    for (int k = 0; k < nl; k++) {
      const double *zk = Z + (size_t)k * (size_t)n;
      double t = 0;
      for (int j = 0; j < np; j++) t += li[j] * zk[j];
      S[(size_t)i * nl + k] = t;
    }
  }
  int rank = mbs_natPivChol(S, nl, rank_tol, r, mu);
  for (int k = 0; k < nl && rank >= 0; k++) { // p̈ −= Z μ
    const double *zk = Z + (size_t)k * (size_t)n;
    for (int j = 0; j < np; j++) s->b[j] -= zk[j] * mu[k];
  }
  return rank;
}
