/// \file loops.c
/// Closed loops and spring-dampers in the serial core (mbs_loops.h, docs/loops.md): the
/// loop-capable serial baseline, the rank-revealing factorization of the closure equations,
/// assembly and projection onto the loops, diagnostics and inverse dynamics.
///
/// Every dense matrix here is nlam_loop x nlam_loop (or nlam_loop x nv): the oracle is meant for
/// mechanisms with a moderate number of closure equations (cost O(nlam_loop * nbody) for the
/// articulated sweeps plus O(nlam_loop^3) for the factorization); the distributed constraint-force
/// solvers are the scalable route (docs/loops.md 8).
#include "mbspar/mbs_loops.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "flops.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_joint.h"
#include "mbspar/mbs_schur.h"
#include "mbspar/mbs_solvertype.h"
#include "spatial.h"

struct mbsLoopWork {
  int n, nv, nb;         // closure equations, dofs, bodies
  int *eq_loop;          // (n) loop of each equation
  int *eq_row;           // (n) row of the equation within its loop
  mbsReal *D;            // (n x 12) directions on body1 (6) then body2 (6), body coordinates
  mbsReal *c, *cdot;     // (n) closure error and its rate
  mbsReal *kappa, *rhs;  // (n) closure right side (with Baumgarte) and b of A lambda = b
  mbsReal *lam, *nu;     // (n) solutions
  mbsReal *A;            // (n x n) G H^-1 G^T
  mbsReal *L;            // (n x n) its pivoted Cholesky factor (Jacobi-scaled, permuted)
  mbsReal *M;            // (n x n) Cholesky factor of L^T L (rank x rank), min-norm solves
  mbsReal *sc;           // (n) Jacobi scaling 1/sqrt(A_ii) (0: a zero row)
  mbsReal *tmp;          // (n) scratch
  mbsReal *col;          // (n) scratch of the factorization (one column, contiguous)
  int *piv;              // (n) pivot order
  int rank;              // accepted pivots
  int nzero;             // zero rows of the last factorization (dropped before pivoting)
  mbsReal min_pivot;     // smallest accepted (scaled) pivot
  mbsReal resid;         // acceleration closure residual after the last solve
  mbsReal *G, *Y;        // (n x nv) closure Jacobian and H^-1 G^T (rows), crba and inverse
  mbsReal *qdd0;         // (nv) the tree solution without loop forces
  mbsReal *fz, *pz, *az; // (nb x 6) unit sweeps: external wrenches, bias, accelerations
  mbsReal *uz, *dz;      // (nv) unit sweeps: u, response qdd
  unsigned char *nz;     // (nb) nonzero flags of the sweeps
  mbsReal *zg;           // (2n) zero-row test: sum_d G_id^2, then the size of its terms
  unsigned char *skip;   // (n) G_i = 0: a zero row, its unit solve left out
  int nskip;             // equations skipped by the last solve
  int *zt;               // (nb) scratch of the zero-row test: bodies visited
  mbsReal *sg;           // (nv x 7) scratch of the zero-row test: S^g, |S^g|^2 per dof
  mbsReal *zacc;         // (nv x 6) scratch of the zero-row test: G_id per row of a loop
  mbsReal *vq, *vq2;     // (nv) scratch of the projection and the inverse
  mbsReal *sub;          // interface separators (mbsLoopOps.local): [C | G | L | rhs | failed]
  size_t nsub;           // its length
  mbsReal *minv;         // (nloop x 2 x 36) inverse rigid inertia of each loop's sides (model
                         // constants, mbs_loopFreeCompliance)
  unsigned char *mok;    // (nloop x 2) 1: that side has one (not the ground, not massless)
  int *ord;              // (n) aba's column order (mbs_loopColumnOrder): shallowest first
  int *first;            // (nb) the first column position whose pass 3 needs the body
};

mbsErr mbs_loopWorkCreate(const mbsModel *m, struct mbsLoopWork **out) {
  *out = NULL;
  struct mbsLoopWork *lw;
  MBS_ALLOC(lw, 1);
  size_t n = (size_t)(m->nlam_loop > 0 ? m->nlam_loop : 1), nv = (size_t)(m->nv > 0 ? m->nv : 1);
  size_t nb = (size_t)(m->nbody > 0 ? m->nbody : 1);
  lw->n = m->nlam_loop, lw->nv = m->nv, lw->nb = m->nbody;
  MBS_CHECK((double)n * (double)(n > nv ? n : nv) <= 2e8, MBS_ERR_NOMEM,
            "the loop solver needs dense %zu x %zu matrices (%d closure equations): too many "
            "closure equations for the serial baseline",
            n, n > nv ? n : nv, m->nlam_loop);
  lw->eq_loop = calloc(n, sizeof(int));
  lw->eq_row = calloc(n, sizeof(int));
  lw->piv = calloc(n, sizeof(int));
  lw->nz = calloc(nb, 1);
  lw->D = calloc(12 * n, sizeof(mbsReal));
  mbsReal **v[] = {&lw->c,  &lw->cdot, &lw->kappa, &lw->rhs, &lw->lam,
                   &lw->nu, &lw->sc,   &lw->tmp,   &lw->col};
  for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) *v[k] = calloc(n, sizeof(mbsReal));
  lw->A = calloc(n * n, sizeof(mbsReal));
  lw->L = calloc(n * n, sizeof(mbsReal));
  lw->M = calloc(n * n, sizeof(mbsReal));
  lw->G = calloc(n * nv, sizeof(mbsReal));
  lw->Y = calloc(n * nv, sizeof(mbsReal));
  lw->qdd0 = calloc(nv, sizeof(mbsReal));
  lw->uz = calloc(nv, sizeof(mbsReal));
  lw->dz = calloc(nv, sizeof(mbsReal));
  lw->vq = calloc(nv + 7 * nb, sizeof(mbsReal)); // room for nq as well
  lw->vq2 = calloc(nv + 7 * nb, sizeof(mbsReal));
  lw->fz = calloc(6 * nb, sizeof(mbsReal));
  lw->pz = calloc(6 * nb, sizeof(mbsReal));
  lw->az = calloc(6 * nb, sizeof(mbsReal));
  lw->zg = calloc(2 * n, sizeof(mbsReal));
  lw->skip = calloc(n, 1);
  lw->zt = calloc(nb, sizeof(int));
  lw->sg = calloc(7 * nv, sizeof(mbsReal));
  lw->zacc = calloc(6 * nv, sizeof(mbsReal));
  size_t nlp = (size_t)(m->nloop > 0 ? m->nloop : 1);
  lw->minv = calloc(72 * nlp, sizeof(mbsReal));
  lw->mok = calloc(2 * nlp, 1);
  lw->ord = calloc(n, sizeof(int));
  lw->first = calloc(nb, sizeof(int));
  int ok = lw->minv && lw->mok && lw->ord && lw->first && lw->eq_loop && lw->eq_row && lw->piv &&
           lw->nz && lw->D && lw->A && lw->L && lw->M && lw->G && lw->Y && lw->qdd0 && lw->uz &&
           lw->dz && lw->vq && lw->vq2 && lw->fz && lw->pz && lw->az && lw->zg && lw->skip &&
           lw->zt && lw->sg && lw->zacc;
  for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) ok = ok && *v[k];
  if (!ok) {
    mbs_loopWorkDestroy(&lw);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory allocating the loop solver's workspace");
  }
  for (int k = 0, i = 0; k < m->nloop; k++)
    for (int r = 0; r < m->loop_lamnum[k]; r++, i++) lw->eq_loop[i] = k, lw->eq_row[i] = r;
  if (mbs_loopColumnOrder(m, lw->ord, lw->first)) {
    mbs_loopWorkDestroy(&lw);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory allocating the loop solver's workspace");
  }
  for (int k = 0; k < 2 * m->nloop; k++) { // the sides' inverse rigid inertias, once
    int b = m->loop_body[k];
    mbsReal I6[36];
    if (b < 0) continue;
    mbsu_rbiFull(m->body_sinert + 10 * b, I6);
    if (!mbsu_cholFactor(I6, 6)) continue; // massless: no bound from this side
    mbsu_cholInverse(I6, 6, lw->minv + 36 * k);
    lw->mok[k] = 1;
  }
  *out = lw;
  return MBS_OK;
}

void mbs_loopWorkDestroy(struct mbsLoopWork **plw) {
  if (!plw || !*plw) return;
  struct mbsLoopWork *lw = *plw;
  void *arrs[] = {lw->eq_loop, lw->eq_row, lw->piv, lw->nz,   lw->D,   lw->c,    lw->cdot,
                  lw->kappa,   lw->rhs,    lw->lam, lw->nu,   lw->sc,  lw->tmp,  lw->col,
                  lw->A,       lw->L,      lw->M,   lw->G,    lw->Y,   lw->qdd0, lw->uz,
                  lw->dz,      lw->vq,     lw->vq2, lw->fz,   lw->pz,  lw->az,   lw->zg,
                  lw->skip,    lw->zt,     lw->sg,  lw->zacc, lw->sub, lw->minv, lw->mok,
                  lw->ord,     lw->first};
  for (size_t k = 0; k < sizeof arrs / sizeof arrs[0]; k++) free(arrs[k]);
  free(lw);
  *plw = NULL;
}

// ---------------------------------------------------------------- spring-dampers

// world position and velocity of a point given in body b's frame (-1: the ground)
static void mbs_pointWorld(const mbsWork *w, int b, const mbsReal *pt, int vel, mbsReal *p,
                           mbsReal *pd) {
  if (b < 0) {
    memcpy(p, pt, 3 * sizeof(mbsReal));
    pd[0] = pd[1] = pd[2] = 0;
    return;
  }
  const mbsReal *R = w->xmat + 9 * b, *v = w->cvel + 6 * b;
  mbsu_mulMat3Vec(R, pt, p);
  for (int i = 0; i < 3; i++) p[i] += w->xpos[3 * b + i];
  if (vel) {
    mbsReal t[3];
    mbsu_cross3(v, pt, t);
    for (int i = 0; i < 3; i++) t[i] += v[3 + i];
    mbsu_mulMat3Vec(R, t, pd);
  } else {
    pd[0] = pd[1] = pd[2] = 0;
  }
}

// one spring-damper: unit direction u from point 1 to point 2, length, rate of the length
static void mbs_forceGeom(const mbsModel *m, const mbsWork *w, int j, int vel, mbsReal *u,
                          mbsReal *l, mbsReal *ld, mbsReal *p1) {
  mbsReal p2[3], v1[3], v2[3];
  mbs_pointWorld(w, m->force_body[2 * j], m->force_point + 6 * j, vel, p1, v1);
  mbs_pointWorld(w, m->force_body[2 * j + 1], m->force_point + 6 * j + 3, vel, p2, v2);
  for (int i = 0; i < 3; i++) u[i] = p2[i] - p1[i];
  *l = sqrt(mbsu_dot3(u, u));
  if (*l > 0)
    for (int i = 0; i < 3; i++) u[i] /= *l;
  else
    u[0] = u[1] = u[2] = 0; // coincident points: no direction, no force
  mbsReal dv[3] = {v2[0] - v1[0], v2[1] - v1[1], v2[2] - v1[2]};
  *ld = mbsu_dot3(u, dv);
}

// add the world force f at the world point p to body b's wrench (body coordinates, origin)
static void mbs_addWorldForce(const mbsWork *w, int b, const mbsReal *p, const mbsReal *f,
                              mbsReal *wr) {
  if (b < 0) return;
  const mbsReal *R = w->xmat + 9 * b;
  mbsReal r[3], n[3], t[6];
  for (int i = 0; i < 3; i++) r[i] = p[i] - w->xpos[3 * b + i];
  mbsu_cross3(r, f, n);
  mbsu_mulMat3TVec(R, n, t);
  mbsu_mulMat3TVec(R, f, t + 3);
  for (int i = 0; i < 6; i++) wr[6 * b + i] += t[i];
}

void mbs_fwdForces(const mbsModel *m, mbsWork *w) {
  memset(w->fext, 0, 6 * (size_t)m->nbody * sizeof(mbsReal));
  for (int j = 0; j < m->nforce; j++) {
    mbsReal u[3], l, ld, p1[3], p2[3], f[3];
    MBS_FLOPS(mbs_flopSpring(m->force_body[2 * j] >= 0, m->force_body[2 * j + 1] >= 0));
    mbs_forceGeom(m, w, j, 1, u, &l, &ld, p1);
    const mbsReal *prm = m->force_prm + 3 * j;
    mbsReal T = prm[0] * (l - prm[1]) + prm[2] * ld; // tension
    for (int i = 0; i < 3; i++) p2[i] = p1[i] + l * u[i], f[i] = T * u[i];
    mbs_addWorldForce(w, m->force_body[2 * j], p1, f, w->fext); // pulled towards point 2
    for (int i = 0; i < 3; i++) f[i] = -f[i];
    mbs_addWorldForce(w, m->force_body[2 * j + 1], p2, f, w->fext);
  }
  w->fext_on = m->nforce > 0;
}

mbsReal mbs_forcePotential(const mbsModel *m, const mbsWork *w) {
  mbsReal pe = 0;
  for (int j = 0; j < m->nforce; j++) {
    mbsReal u[3], l, ld, p1[3];
    mbs_forceGeom(m, w, j, 0, u, &l, &ld, p1);
    mbsReal e = l - m->force_prm[3 * j + 1];
    pe += 0.5 * m->force_prm[3 * j] * e * e;
  }
  return pe;
}

mbsReal mbs_forcePower(const mbsModel *m, const mbsWork *w) {
  mbsReal p = 0;
  for (int j = 0; j < m->nforce; j++) {
    mbsReal u[3], l, ld, p1[3];
    mbs_forceGeom(m, w, j, 1, u, &l, &ld, p1);
    p -= m->force_prm[3 * j + 2] * ld * ld;
  }
  return p;
}

// ---------------------------------------------------------------- directions

// D, c (pos != 0), cdot and kappa (vel != 0) of every closure equation
static void mbs_loopAll(const mbsModel *m, const mbsWork *w, struct mbsLoopWork *lw, int vel) {
  for (int k = 0, i = 0; k < m->nloop; k++) {
    int nk = m->loop_lamnum[k];
    mbsReal D1[36], D2[36];
    mbs_loopRows(m, w, k, D1, D2, lw->c + i, vel ? lw->cdot + i : NULL, vel ? lw->kappa + i : NULL);
    for (int r = 0; r < nk; r++) {
      memcpy(lw->D + 12 * (i + r), D1 + 6 * r, 6 * sizeof(mbsReal));
      memcpy(lw->D + 12 * (i + r) + 6, D2 + 6 * r, 6 * sizeof(mbsReal));
    }
    i += nk;
  }
}

// D_i^T a over the sides of equation i whose body this caller owns ([b0, b1)); the ground sides
// (a_ground = ag) only where ag is given (one caller adds them)
static mbsReal mbs_loopDotOwned(const mbsModel *m, const struct mbsLoopWork *lw, int i,
                                const mbsReal *acc, const mbsReal *ag, int b0, int b1) {
  int k = lw->eq_loop[i];
  mbsReal s = 0;
  for (int side = 0; side < 2; side++) {
    int b = m->loop_body[2 * k + side];
    const mbsReal *D = lw->D + 12 * i + 6 * side;
    if (b >= b0 && b < b1) {
      s += mbsu_dot6(D, acc + 6 * b);
      MBS_FLOPS(MBS_FL_LOOP_DOT);
    } else if (b < 0 && ag) {
      s += mbsu_dot6(D, ag);
      MBS_FLOPS(MBS_FL_LOOP_DOT);
    }
  }
  return s;
}

// D_i^T (accelerations of its two bodies); ground sides use a_ground (ag, if given)
static mbsReal mbs_loopDotAcc(const mbsModel *m, const struct mbsLoopWork *lw, int i,
                              const mbsReal *acc, const mbsReal *ag) {
  return mbs_loopDotOwned(m, lw, i, acc, ag, 0, m->nbody);
}

// wrenches sum_i D_i x_i into wr (nbody x 6, added)
static void mbs_loopAddWrench(const mbsModel *m, const struct mbsLoopWork *lw, const mbsReal *x,
                              mbsReal *wr) {
  for (int i = 0; i < lw->n; i++) {
    int k = lw->eq_loop[i], b1 = m->loop_body[2 * k], b2 = m->loop_body[2 * k + 1];
    const mbsReal *D = lw->D + 12 * i;
    if (b1 >= 0)
      for (int j = 0; j < 6; j++) wr[6 * b1 + j] += D[j] * x[i];
    if (b2 >= 0)
      for (int j = 0; j < 6; j++) wr[6 * b2 + j] += D[6 + j] * x[i];
    MBS_FLOPS(12 * ((b1 >= 0) + (b2 >= 0)));
  }
}

// the wrench pair of a unit lambda of equation i into wr (nbody x 6, added)
static void mbs_loopAddUnit(const mbsModel *m, const struct mbsLoopWork *lw, int i, mbsReal *wr) {
  int k = lw->eq_loop[i], b1 = m->loop_body[2 * k], b2 = m->loop_body[2 * k + 1];
  const mbsReal *D = lw->D + 12 * i;
  if (b1 >= 0)
    for (int j = 0; j < 6; j++) wr[6 * b1 + j] += D[j];
  if (b2 >= 0)
    for (int j = 0; j < 6; j++) wr[6 * b2 + j] += D[6 + j];
  MBS_FLOPS(6 * ((b1 >= 0) + (b2 >= 0)));
}

// the unit wrench pair of equation i taken out of wr again (its bodies' entries zeroed)
static void mbs_loopClearUnit(const mbsModel *m, const struct mbsLoopWork *lw, int i, mbsReal *wr) {
  int k = lw->eq_loop[i];
  for (int side = 0; side < 2; side++)
    if (m->loop_body[2 * k + side] >= 0)
      memset(wr + 6 * m->loop_body[2 * k + side], 0, 6 * sizeof(mbsReal));
}

void mbs_loopJacobian(const mbsModel *m, const mbsWork *w, mbsReal *G) {
  const struct mbsLoopWork *lw = w->loop;
  int nv = m->nv;
  memset(G, 0, (size_t)lw->n * (size_t)(nv > 0 ? nv : 1) * sizeof(mbsReal));
  for (int i = 0; i < lw->n; i++) {
    int k = lw->eq_loop[i];
    for (int side = 0; side < 2; side++) {
      int b = m->loop_body[2 * k + side];
      mbsReal F[6], t6[6];
      memcpy(F, lw->D + 12 * i + 6 * side, sizeof F);
      // walk to the root: G_id = S_d^T (the direction moved to body a)
      for (int a = b; a >= 0; a = m->body_parent[a]) {
        for (int j = 0; j < m->body_dofnum[a]; j++) {
          int d = m->body_dofadr[a] + j;
          G[(size_t)i * nv + d] += mbsu_dot6(w->sdof + 6 * d, F);
        }
        mbsu_xTForce(w->xpar + 12 * a, F, t6);
        memcpy(F, t6, sizeof F);
      }
    }
  }
}

// ---------------------------------------------------------------- zero rows, in advance

// A closure equation i with G_i = 0 (no joint motion can violate it: the out-of-plane equations
// of a planar mechanism built from spatial joints) has A_ii = G_i H^-1 G_i^T = 0, so every
// factorization drops it as a zero row (section 4) whatever its column of A holds: its unit
// solve is left out (docs/loops.md 8.1). G_id = S_d^T F is the power of the equation's wrench F
// on dof d, paired in the ground frame about its origin: S_d^g = [R w; R v + p x R w] once per dof
// of the bodies in [b0, b1), F^g = [R n + p x R f; R f] once per side and row. This sums, over
// those dofs, zg[i] = sum_d G_id^2 and zg[n + i] = sum over the sides of |F^g|^2 sum_d |S_d^g|^2,
// a bound of it by Cauchy-Schwarz and the scale of its roundoff. The rows of a loop share the
// walk along their sides' paths.
static void mbs_loopZeroSums(const mbsModel *m, const mbsWork *w, struct mbsLoopWork *lw, int b0,
                             int b1) {
  int n = lw->n;
  mbsReal *g = lw->zacc; // per dof and row of the loop: G_id, zero between loops
  mbsReal *sg = lw->sg;  // per dof: S^g (6) and |S^g|^2
  for (int i = 0; i < 2 * n; i++) lw->zg[i] = 0;
  memset(lw->nz, 0, (size_t)m->nbody); // the visited flags (the sweeps leave theirs there)
  for (int c = b0; c < b1; c++) {
    const mbsReal *R = w->xmat + 9 * c, *p = w->xpos + 3 * c;
    for (int j = 0; j < m->body_dofnum[c]; j++) {
      int d = m->body_dofadr[c] + j;
      const mbsReal *S = w->sdof + 6 * d;
      mbsReal *o = sg + 7 * d, t[3];
      mbsu_mulMat3Vec(R, S, o);
      mbsu_mulMat3Vec(R, S + 3, o + 3);
      mbsu_cross3(p, o, t);
      for (int r = 0; r < 3; r++) o[3 + r] += t[r];
      o[6] = mbsu_dot6(o, o);
      MBS_FLOPS(MBS_FL_LOOP_ZDOF);
    }
  }
  for (int k = 0, i0 = 0; k < m->nloop; i0 += m->loop_lamnum[k], k++) {
    int nk = m->loop_lamnum[k], nt = 0;
    for (int side = 0; side < 2; side++) {
      int b = m->loop_body[2 * k + side];
      if (b < 0 || b < b0) continue; // the ground, or no body of the path here
      const mbsReal *R = w->xmat + 9 * b;
      mbsReal F[36], t[3], s2 = 0;
      for (int r = 0; r < nk; r++) {
        const mbsReal *D = lw->D + 12 * (i0 + r) + 6 * side;
        mbsReal *Fr = F + 6 * r;
        mbsu_mulMat3Vec(R, D + 3, Fr + 3);
        mbsu_mulMat3Vec(R, D, Fr);
        mbsu_cross3(w->xpos + 3 * b, Fr + 3, t);
        for (int x = 0; x < 3; x++) Fr[x] += t[x];
      }
      MBS_FLOPS((long)nk * MBS_FL_LOOP_ZSIDE);
      for (int c = b; c >= b0; c = m->body_parent[c]) {
        int nd = m->body_dofnum[c], d0 = m->body_dofadr[c];
        if (c >= b1 || nd == 0) continue;
        if (!lw->nz[c]) lw->nz[c] = 1, lw->zt[nt++] = c;
        for (int j = 0; j < nd; j++) {
          const mbsReal *o = sg + 7 * (d0 + j);
          mbsReal *gd = g + 6 * (d0 + j);
          s2 += o[6];
          for (int r = 0; r < nk; r++) gd[r] += mbsu_dot6(o, F + 6 * r);
        }
        MBS_FLOPS(mbs_flopLoopZeroVisit(nd, nk));
      }
      for (int r = 0; r < nk; r++) lw->zg[n + i0 + r] += mbsu_dot6(F + 6 * r, F + 6 * r) * s2;
      MBS_FLOPS((long)nk * (MBS_FL_DOT6 + 2));
    }
    for (int q = 0; q < nt; q++) {
      int c = lw->zt[q], nd = m->body_dofnum[c], d0 = m->body_dofadr[c];
      for (int j = 0; j < nd; j++)
        for (int r = 0; r < nk; r++) {
          mbsReal *gd = g + 6 * (d0 + j);
          lw->zg[i0 + r] += gd[r] * gd[r];
          gd[r] = 0;
        }
      lw->nz[c] = 0;
      MBS_FLOPS(2L * nd * nk);
    }
  }
}

// the equations to skip from the summed zg: G_i below 1e-9 of the size of its terms (A_ii then
// ~1e-18 of its scale, far below any solver.rank_tol)
static void mbs_loopZeroDecide(struct mbsLoopWork *lw) {
  int n = lw->n;
  lw->nskip = 0;
  for (int i = 0; i < n; i++) {
    lw->skip[i] = !(lw->zg[i] > 1e-18 * lw->zg[n + i]);
    lw->nskip += lw->skip[i];
  }
}

// ---------------------------------------------------------------- articulated sweeps

// articulated inertias and the joint factors U = IA S, Dinv = (S^T U)^-1 from the position stage
// alone (what mbs_aba computes besides the bias); returns 0 if singular
static int mbs_abaFactor(const mbsModel *m, mbsWork *w) {
  int n = m->nbody;
  for (int b = 0; b < n; b++) mbsu_rbiFull(m->body_sinert + 10 * b, w->IA + 36 * b);
  for (int b = n - 1; b >= 0; b--) {
    int k = m->body_dofnum[b], d0 = m->body_dofadr[b], p = m->body_parent[b];
    const mbsReal *IA = w->IA + 36 * b, *S = w->sdof + 6 * d0;
    mbsReal *U = w->U + 6 * d0, *Dinv = w->Dinv + 36 * b, Ia[36], Dm[36];
    memcpy(Ia, IA, sizeof Ia);
    if (k > 0) {
      for (int j = 0; j < k; j++) mbsu_mul6(IA, S + 6 * j, U + 6 * j);
      for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++) Dm[k * i + j] = mbsu_dot6(S + 6 * i, U + 6 * j);
      if (!mbsu_cholFactor(Dm, k)) return 0;
      mbsu_cholInverse(Dm, k, Dinv);
      for (int r = 0; r < 6; r++)
        for (int c = 0; c < 6; c++) {
          mbsReal sum = 0;
          for (int i = 0; i < k; i++)
            for (int j = 0; j < k; j++) sum += U[6 * i + r] * Dinv[k * i + j] * U[6 * j + c];
          Ia[6 * r + c] -= sum;
        }
    }
    if (p >= 0) mbsu_inertiaCongruenceAdd(w->xpar + 12 * b, Ia, w->IA + 36 * p);
    MBS_FLOPS(mbs_flopLoopAbaFactor(k, p >= 0));
  }
  return 1;
}

// response of the tree at rest without gravity to the external wrenches lw->fz: accelerations
// lw->az (nbody x 6, body coordinates) and joint accelerations lw->dz (H^-1 J^T fz), with the
// factors U, Dinv of the current position (mbs_aba or mbs_abaFactor). lim >= 0: pass 3 only on
// the bodies with first[b] <= lim (aba's column lim, mbs_loopMatrixAba); the others keep stale
// values. lim < 0: every body.
static void mbs_loopSweep(const mbsModel *m, const mbsWork *w, struct mbsLoopWork *lw, int lim) {
  int n = m->nbody;
  for (int b = 0; b < n; b++) {
    const mbsReal *f = lw->fz + 6 * b;
    int nz = f[0] != 0 || f[1] != 0 || f[2] != 0 || f[3] != 0 || f[4] != 0 || f[5] != 0;
    lw->nz[b] = (unsigned char)nz;
    for (int i = 0; i < 6; i++) lw->pz[6 * b + i] = -f[i];
  }
  // tip to base: u = -S^T p, p_parent += X^T (p + U Dinv u)
  for (int b = n - 1; b >= 0; b--) {
    int k = m->body_dofnum[b], d0 = m->body_dofadr[b], p = m->body_parent[b];
    mbsReal *u = lw->uz + d0;
    if (!lw->nz[b]) {
      for (int j = 0; j < k; j++) u[j] = 0;
      continue;
    }
    const mbsReal *S = w->sdof + 6 * d0, *U = w->U + 6 * d0, *Dinv = w->Dinv + 36 * b;
    mbsReal *pb = lw->pz + 6 * b, pa[6], du[6], t6[6];
    for (int j = 0; j < k; j++) u[j] = -mbsu_dot6(S + 6 * j, pb);
    MBS_FLOPS(mbs_flopLoopSweepBack(k, p >= 0));
    if (p < 0) continue;
    memcpy(pa, pb, sizeof pa);
    for (int i = 0; i < k; i++) {
      du[i] = 0;
      for (int j = 0; j < k; j++) du[i] += Dinv[k * i + j] * u[j];
      for (int r = 0; r < 6; r++) pa[r] += U[6 * i + r] * du[i];
    }
    mbsu_xTForce(w->xpar + 12 * b, pa, t6);
    for (int r = 0; r < 6; r++) lw->pz[6 * p + r] += t6[r];
    lw->nz[p] = 1;
  }
  // base to tip: a = X a_parent ; qdd = Dinv (u - U^T a) ; a += S qdd
  for (int b = 0; b < n; b++) {
    int k = m->body_dofnum[b], d0 = m->body_dofadr[b], p = m->body_parent[b];
    mbsReal *a = lw->az + 6 * b, *qdd = lw->dz + d0;
    if (lim >= 0 && lw->first[b] > lim) continue; // nor any of its descendants (first grows)
    int moving = lw->nz[b] || (p >= 0 && lw->nz[p] == 2);
    if (!moving) {
      for (int i = 0; i < 6; i++) a[i] = 0;
      for (int j = 0; j < k; j++) qdd[j] = 0;
      continue;
    }
    const mbsReal *S = w->sdof + 6 * d0, *U = w->U + 6 * d0, *Dinv = w->Dinv + 36 * b;
    if (p >= 0)
      mbsu_xMotion(w->xpar + 12 * b, lw->az + 6 * p, a);
    else
      for (int i = 0; i < 6; i++) a[i] = 0;
    mbsReal r[6];
    for (int j = 0; j < k; j++) r[j] = lw->uz[d0 + j] - mbsu_dot6(U + 6 * j, a);
    for (int i = 0; i < k; i++) {
      qdd[i] = 0;
      for (int j = 0; j < k; j++) qdd[i] += Dinv[k * i + j] * r[j];
    }
    for (int j = 0; j < k; j++)
      for (int i = 0; i < 6; i++) a[i] += S[6 * j + i] * qdd[j];
    lw->nz[b] = 2; // moving: its children move too
    MBS_FLOPS(mbs_flopLoopSweepFwd(k, p >= 0));
  }
}

// (key, index) pairs in lexicographic order (mbs_loopColumnOrder)
static int mbs_loopCmpPair(const void *a, const void *b) {
  const int *x = a, *y = b;
  if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
  return (x[1] > y[1]) - (x[1] < y[1]);
}

int mbs_loopColumnOrder(const mbsModel *m, int *ord, int *first) {
  int n = m->nlam_loop, nb = m->nbody;
  int *depth = malloc((size_t)(nb > 0 ? nb : 1) * sizeof(int));
  int *key = malloc(2 * (size_t)(n > 0 ? n : 1) * sizeof(int));
  if (!depth || !key) {
    free(depth), free(key);
    return 1;
  }
  for (int b = 0; b < nb; b++) { // parents come before their children
    int p = m->body_parent[b];
    depth[b] = p < 0 ? 0 : depth[p] + 1;
  }
  // each equation keyed by the depth of its loop's deeper body (ground sides -1): sorted with
  // its index, the shallowest first and ties in equation order
  for (int k = 0, i = 0; k < m->nloop; k++) {
    int d = -1;
    for (int side = 0; side < 2; side++) {
      int b = m->loop_body[2 * k + side];
      if (b >= 0 && depth[b] > d) d = depth[b];
    }
    for (int r = 0; r < m->loop_lamnum[k]; r++, i++) key[2 * i] = d, key[2 * i + 1] = i;
  }
  if (n > 0) qsort(key, (size_t)n, 2 * sizeof(int), mbs_loopCmpPair);
  for (int t = 0; t < n; t++) ord[t] = key[2 * t + 1];
  for (int t = 0; t < n; t++) key[2 * ord[t]] = t; // key[2 i]: the position of equation i
  for (int b = 0; b < nb; b++) first[b] = n;
  for (int k = 0, i = 0; k < m->nloop; k++)
    for (int r = 0; r < m->loop_lamnum[k]; r++, i++)
      for (int side = 0; side < 2; side++) {
        int b = m->loop_body[2 * k + side];
        if (b >= 0 && first[b] > key[2 * i]) first[b] = key[2 * i];
      }
  for (int b = nb - 1; b >= 0; b--) { // up the tree: the smallest position in the subtree
    int p = m->body_parent[b];
    if (p >= 0 && first[p] > first[b]) first[p] = first[b];
  }
  free(depth), free(key);
  return 0;
}

// A = G H^-1 G^T by one sweep per closure equation (articulated factors in w). A is symmetric:
// column j (at position t of mbs_loopColumnOrder) gives the entries of the equations at positions
// <= t, and the rest of its column comes from their columns, so pass 3 of column t stops at the
// bodies no equation at a position <= t needs (docs/loops.md 9: about half of it on the ladder)
static void mbs_loopMatrixAba(const mbsModel *m, const mbsWork *w, struct mbsLoopWork *lw) {
  int n = lw->n;
  mbs_loopZeroSums(m, w, lw, 0, m->nbody);
  mbs_loopZeroDecide(lw);
  for (int t = 0; t < n; t++) {
    int j = lw->ord[t];
    if (lw->skip[j]) { // a zero row: its column (and row) are left 0
      for (int i = 0; i < n; i++) lw->A[(size_t)i * n + j] = lw->A[(size_t)j * n + i] = 0;
      continue;
    }
    int k = lw->eq_loop[j], b1 = m->loop_body[2 * k], b2 = m->loop_body[2 * k + 1];
    const mbsReal *D = lw->D + 12 * j;
    if (b1 >= 0) memcpy(lw->fz + 6 * b1, D, 6 * sizeof(mbsReal));
    if (b2 >= 0) memcpy(lw->fz + 6 * b2, D + 6, 6 * sizeof(mbsReal));
    mbs_loopSweep(m, w, lw, t);
    for (int s = 0; s <= t; s++) {
      int i = lw->ord[s];
      mbsReal v = lw->skip[i] ? 0 : mbs_loopDotAcc(m, lw, i, lw->az, NULL);
      lw->A[(size_t)i * n + j] = lw->A[(size_t)j * n + i] = v;
    }
    if (b1 >= 0) memset(lw->fz + 6 * b1, 0, 6 * sizeof(mbsReal));
    if (b2 >= 0) memset(lw->fz + 6 * b2, 0, 6 * sizeof(mbsReal));
  }
}

// A = G H^-1 G^T with the LTDL factor of mbs_crba (also G and Y = rows of H^-1 G^T)
static void mbs_loopMatrixCrba(const mbsModel *m, const mbsWork *w, struct mbsLoopWork *lw) {
  int n = lw->n, nv = m->nv;
  mbs_loopJacobian(m, w, lw->G);
  memcpy(lw->Y, lw->G, (size_t)n * (size_t)nv * sizeof(mbsReal));
  for (int i = 0; i < n; i++) mbs_crbaSolve(m, w, lw->Y + (size_t)i * nv);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      mbsReal s = 0;
      const mbsReal *g = lw->G + (size_t)i * nv, *y = lw->Y + (size_t)j * nv;
      for (int d = 0; d < nv; d++) s += g[d] * y[d];
      lw->A[(size_t)i * n + j] = s;
    }
}

// ---------------------------------------------------------------- rank-revealing factorization

// the compliance each closure equation would have between free bodies, D1^T M1^-1 D1 +
// D2^T M2^-1 D2 (rigid-body inertias; the ground side adds nothing): an upper bound of A_ii (the
// tree only stiffens the bodies), the scale below which A_ii is roundoff of the tree solves
static void mbs_loopFreeCompliance(const struct mbsLoopWork *lw, mbsReal *out) {
  for (int i = 0; i < lw->n; i++) {
    int k = lw->eq_loop[i];
    out[i] = 0;
    for (int side = 0; side < 2; side++) {
      if (!lw->mok[2 * k + side]) continue; // the ground or massless: no bound from this side
      mbsReal y[6];
      const mbsReal *D = lw->D + 12 * i + 6 * side;
      mbsu_mul6(lw->minv + 72 * k + 36 * side, D, y);
      out[i] += mbsu_dot6(D, y);
      MBS_FLOPS(MBS_FL_LOOP_FREE);
    }
  }
}

// pivoted Cholesky of the Jacobi-scaled S A S (S = diag(1/sqrt(A_ii))): L (n x rank, permuted
// order piv), pivots below tol are redundant; then the Cholesky factor of L^T L for the
// minimum-norm solves. ref: A_ii at or below tol * ref_i is a zero row (NULL: only exact zeros
// and 1e-20 of the largest diagonal)
static void mbs_loopFactor(struct mbsLoopWork *lw, mbsReal tol, const mbsReal *ref) {
  int n = lw->n;
  mbsReal *A = lw->A, *L = lw->L, dmax = 0;
  int nzero = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++) { // symmetrize (roundoff of the sweeps)
      mbsReal a = 0.5 * (A[(size_t)i * n + j] + A[(size_t)j * n + i]);
      A[(size_t)i * n + j] = A[(size_t)j * n + i] = a;
    }
  for (int i = 0; i < n; i++) dmax = fmax(dmax, A[(size_t)i * n + i]);
  for (int i = 0; i < n; i++) {
    mbsReal d = A[(size_t)i * n + i], lim = ref ? tol * ref[i] : 0;
    int zero = !(d > 1e-20 * dmax && d > 0) || (ref && !(d > lim));
    nzero += zero;
    lw->sc[i] = zero ? 0 : 1 / sqrt(d); // a zero row: redundant outright
  }
  // the zero rows go last, out of the elimination (their scaled rows are 0: never a pivot, no
  // update); the others keep their order, so the pivots are those of the whole matrix
  int nn = n - nzero;
  for (int i = 0, a = 0, z = nn; i < n; i++) lw->piv[lw->sc[i] > 0 ? a++ : z++] = i;
  for (int i = 0; i < n; i++) {
    mbsReal *Li = L + (size_t)i * n;
    if (i >= nn) {
      memset(Li, 0, (size_t)n * sizeof(mbsReal));
      continue;
    }
    const mbsReal *Ai = A + (size_t)lw->piv[i] * n;
    mbsReal si = lw->sc[lw->piv[i]];
    for (int j = 0; j < nn; j++) Li[j] = si * Ai[lw->piv[j]] * lw->sc[lw->piv[j]];
    for (int j = nn; j < n; j++) Li[j] = 0;
  }
  int r = 0;
  lw->min_pivot = n ? INFINITY : 0;
  for (int k = 0; k < nn; k++) {
    int p = k;
    for (int i = k + 1; i < nn; i++)
      if (L[(size_t)i * n + i] > L[(size_t)p * n + p]) p = i;
    mbsReal d = L[(size_t)p * n + p];
    if (!(d > tol)) break;
    if (p != k) { // symmetric swap of rows and columns k, p
      for (int j = 0; j < nn; j++) {
        mbsReal t = L[(size_t)k * n + j];
        L[(size_t)k * n + j] = L[(size_t)p * n + j];
        L[(size_t)p * n + j] = t;
      }
      for (int i = 0; i < nn; i++) {
        mbsReal t = L[(size_t)i * n + k];
        L[(size_t)i * n + k] = L[(size_t)i * n + p];
        L[(size_t)i * n + p] = t;
      }
      int t = lw->piv[k];
      lw->piv[k] = lw->piv[p];
      lw->piv[p] = t;
    }
    lw->min_pivot = fmin(lw->min_pivot, d);
    d = sqrt(d);
    L[(size_t)k * n + k] = d;
    mbsReal *col = lw->col; // column k below the pivot, contiguous: the update reads rows
    for (int i = k + 1; i < nn; i++) col[i] = L[(size_t)i * n + k] /= d;
    for (int i = k + 1; i < nn; i++) {
      mbsReal li = col[i], *Li = L + (size_t)i * n;
      for (int j = k + 1; j < nn; j++) Li[j] -= li * col[j];
    }
    for (int j = k + 1; j < nn; j++) L[(size_t)k * n + j] = 0;
    r = k + 1;
  }
  // columns beyond the rank: the remainder (redundant) is dropped
  for (int i = r; i < nn; i++)
    for (int j = r; j < nn; j++) L[(size_t)i * n + j] = 0;
  lw->rank = r;
  lw->nzero = nzero;
  MBS_FLOPS(mbs_flopLoopFactor(n, r, nzero, ref != NULL));
  // the non-zero rows independent (r == nn): the solution is unique, no minimum-norm factor M
  if (r == nn) return;
  // M = chol(L^T L), r x r (L lower trapezoidal: L_ik = 0 for i < k), accumulated row by row of
  // L (each M_ab sums its terms in increasing i, as a column dot product would)
  mbsReal *M = lw->M;
  for (size_t q = 0; q < (size_t)r * r; q++) M[q] = 0;
  for (int i = 0; i < nn; i++) { // the zero rows add nothing
    const mbsReal *Li = L + (size_t)i * n;
    for (int a = 0; a < r && a <= i; a++) {
      mbsReal la = Li[a], *Ma = M + (size_t)a * r;
      for (int b = 0; b <= a; b++) Ma[b] += la * Li[b];
    }
  }
  for (int j = 0; j < r; j++) {
    mbsReal d = M[(size_t)j * r + j];
    for (int l = 0; l < j; l++) d -= M[(size_t)j * r + l] * M[(size_t)j * r + l];
    d = sqrt(d > 0 ? d : 0);
    M[(size_t)j * r + j] = d;
    for (int i = j + 1; i < r; i++) {
      mbsReal s = M[(size_t)i * r + j];
      for (int l = 0; l < j; l++) s -= M[(size_t)i * r + l] * M[(size_t)j * r + l];
      M[(size_t)i * r + j] = d > 0 ? s / d : 0;
    }
  }
}

// A = G H^-1 G^T factored, its zero rows judged against the free-body compliance
static void mbs_loopFactorA(const mbsModel *m, struct mbsLoopWork *lw) {
  mbs_loopFreeCompliance(lw, lw->tmp);
  mbs_loopFactor(lw, m->opt.rank_tol, lw->tmp);
}

// x = the solution of A x = b with the least sum A_ii x_i^2 (minimum norm of the scaled
// unknowns): Jacobi-scaled, permuted S A S = L L^T; nu = L w with L11 (L^T L) w = (P S b)_1
static void mbs_loopMinNorm(struct mbsLoopWork *lw, const mbsReal *b, mbsReal *x) {
  int n = lw->n, r = lw->rank;
  const mbsReal *L = lw->L, *M = lw->M;
  mbsReal *z = lw->tmp;
  MBS_FLOPS(mbs_flopLoopMinNorm(n, r, lw->nzero));
  for (int i = 0; i < r; i++) { // forward: L11 z = (P S b)_1
    mbsReal s = lw->sc[lw->piv[i]] * b[lw->piv[i]];
    for (int l = 0; l < i; l++) s -= L[(size_t)i * n + l] * z[l];
    z[i] = s / L[(size_t)i * n + i];
  }
  if (r == n - lw->nzero) { // independent non-zero rows: the unique solution L11^T y = z
    for (int i = r - 1; i >= 0; i--) {
      mbsReal s = z[i];
      for (int l = i + 1; l < r; l++) s -= L[(size_t)l * n + i] * z[l];
      z[i] = s / L[(size_t)i * n + i];
    }
    for (int i = 0; i < n; i++) x[lw->piv[i]] = i < r ? lw->sc[lw->piv[i]] * z[i] : 0;
    return;
  }
  for (int i = 0; i < r; i++) { // (L^T L) w = z with M M^T = L^T L
    mbsReal s = z[i];
    for (int l = 0; l < i; l++) s -= M[(size_t)i * r + l] * z[l];
    z[i] = M[(size_t)i * r + i] > 0 ? s / M[(size_t)i * r + i] : 0;
  }
  for (int i = r - 1; i >= 0; i--) {
    mbsReal s = z[i];
    for (int l = i + 1; l < r; l++) s -= M[(size_t)l * r + i] * z[l];
    z[i] = M[(size_t)i * r + i] > 0 ? s / M[(size_t)i * r + i] : 0;
  }
  for (int i = 0; i < n; i++) { // nu = L w, back to the original order and scale
    mbsReal s = 0;
    int lim = i < r ? i + 1 : r;
    for (int l = 0; l < lim; l++) s += L[(size_t)i * n + l] * z[l];
    x[lw->piv[i]] = lw->sc[lw->piv[i]] * s;
  }
}

// ---------------------------------------------------------------- the serial baseline

mbsErr mbs_loopSolve(const mbsModel *m, mbsWork *w) {
  struct mbsLoopWork *lw = w->loop;
  MBS_CHECK(lw, MBS_ERR_INTERNAL, "mbs_loopSolve: the workspace has no loop solver");
  int n = lw->n, nv = m->nv, crba = mbs_solverCaps(m->opt.solver)->dense_inertia;
  mbsReal ag[6];
  mbs_baseAccel(m, 1, ag);
  // eval.loops: everything here but the final tree solve
  MBS_TIC(w->timer, MBS_TIMER_LOOPS);
  // directions and right side: b = kappa' - D^T a(qdd0) (workspace accelerations carry the
  // gravity offset, the ground a_ground: the offset cancels in the equal-and-opposite pair)
  mbs_loopAll(m, w, lw, 1);
  for (int i = 0; i < n; i++) lw->rhs[i] = lw->kappa[i] - mbs_loopDotAcc(m, lw, i, w->acc, ag);
  MBS_FLOPS(n);
  memcpy(lw->qdd0, w->qdd, (size_t)nv * sizeof(mbsReal));
  // A = G H^-1 G^T: articulated sweeps (aba) or the LTDL factor (crba)
  if (crba) {
    lw->nskip = 0; // crba's A from its dense H^-1 G^T, every column
    memset(lw->skip, 0, (size_t)n);
    mbs_loopMatrixCrba(m, w, lw);
  } else { // the sweeps need U and Dinv of every joint (the fast mbs_aba keeps its own records)
    if (!mbs_abaFactor(m, w)) {
      MBS_TOC(w->timer, MBS_TIMER_LOOPS);
      return mbs_errSet(MBS_ERR_NUMERIC, "loops: singular articulated inertia");
    }
    mbs_loopMatrixAba(m, w, lw);
  }
  mbs_loopFactorA(m, lw);
  mbs_loopMinNorm(lw, lw->rhs, lw->lam);
  // the loop wrenches join the external ones, and the tree is solved again with them
  mbs_loopAddWrench(m, lw, lw->lam, w->fext);
  w->fext_on = 1;
  MBS_TOC(w->timer, MBS_TIMER_LOOPS);
  if (crba) {
    for (int i = 0; i < n; i++)
      for (int d = 0; d < nv; d++) w->qdd[d] += lw->Y[(size_t)i * nv + d] * lw->lam[i];
    mbs_rnea(m, w, w->qdd);
    memcpy(w->jfrc, w->frc, 6 * (size_t)m->nbody * sizeof(mbsReal));
  } else {
    MBS_CALL(mbs_aba(m, w));
  }
  memcpy(w->lam + m->nlam, lw->lam, (size_t)n * sizeof(mbsReal));
  // the acceleration-level closure after the solve
  MBS_TIC(w->timer, MBS_TIMER_LOOPS);
  lw->resid = 0;
  for (int i = 0; i < n; i++)
    lw->resid = fmax(lw->resid, fabs(mbs_loopDotAcc(m, lw, i, w->acc, ag) - lw->kappa[i]));
  MBS_FLOPS(n);
  MBS_TOC(w->timer, MBS_TIMER_LOOPS);
  return MBS_OK;
}

// ---------------------------------------------------------------- the distributed loop solve

// this caller's part of the separators' system (mbsLoopOps.local, docs/loops.md 8.1): for every
// closure equation j with a side on an owned body (and not a zero row), a local solve with j's
// unit wrench pair and the interface lambdas zero; its condensed interface right side is column j
// of G, the owned sides' dots with its accelerations column j of L; C from one more local solve
// (any load: C does not depend on it). sub = [C (np x np) | G (np x n) | L (n x n) | ...] zeroed
// first; gj: np scratch. L is symmetric (this caller's G_r H_r^-1 G_r^T): the columns go in
// mbs_loopColumnOrder, column j at position t gives the entries of the equations at positions
// <= t (the others come from their own columns, or are 0 where an equation has no owned side),
// so the local solve's back-substitution stops at the bodies none of them needs (docs/loops.md
// 9, as aba's sweeps). Local.
static mbsErr mbs_loopLocalColumns(const mbsModel *m, mbsWork *w, struct mbsLoopWork *lw,
                                   const mbsLoopOps *ops, mbsReal *sub, mbsReal *gj) {
  int n = lw->n, np = ops->nport, nb = m->nbody;
  size_t nn = (size_t)n * n;
  mbsReal *C = sub, *G = sub + (size_t)np * np, *L = G + (size_t)np * n;
  memset(sub, 0, ((size_t)np * np + (size_t)np * n + nn) * sizeof(mbsReal));
  memset(w->fext, 0, 6 * (size_t)nb * sizeof(mbsReal));
  w->fext_on = 1;
  if (np > 0) { // this caller's cut-joint systems (its local pieces are all it adds)
    memset(gj, 0, (size_t)np * sizeof(mbsReal));
    MBS_CALL(ops->local(ops->ctx, C, gj, NULL, 0, lw->first, -1));
  }
  mbsErr e = MBS_OK;
  for (int t = 0; t < n && !e; t++) {
    int j = lw->ord[t], k = lw->eq_loop[j], b1 = m->loop_body[2 * k], b2 = m->loop_body[2 * k + 1];
    int own = (b1 >= ops->b0 && b1 < ops->b1) || (b2 >= ops->b0 && b2 < ops->b1);
    if (lw->skip[j] || !own) continue; // no unit solve here: the column's local part is 0
    mbs_loopAddUnit(m, lw, j, w->fext);
    memset(gj, 0, (size_t)np * sizeof(mbsReal));
    int load[2] = {b1, b2}; // the unit pair's bodies: the tree solver's bias pass follows them
    e = ops->local(ops->ctx, NULL, gj, load, 2, lw->first, t);
    mbs_loopClearUnit(m, lw, j, w->fext);
    MBS_TIC(w->timer, MBS_TIMER_LOOPS);
    for (int p = 0; p < np; p++) G[(size_t)p * n + j] = gj[p];
    for (int s = 0; s <= t; s++) {
      int i = lw->ord[s];
      mbsReal v = mbs_loopDotOwned(m, lw, i, w->acc, NULL, ops->b0, ops->b1);
      L[(size_t)i * n + j] = L[(size_t)j * n + i] = v;
    }
    MBS_TOC(w->timer, MBS_TIMER_LOOPS);
  }
  return e;
}

// A -= G^T C^-1 G: the cut joints eliminated from the separators' system [L -G^T; -G C] by
// schur's own reduction (mbs_schurReduce: C's Cholesky factor with its pivot floor, a port
// system being positive semidefinite up to rounding, docs/formulation.md 4.7). A holds L on entry;
// W ((n + np)^2), gw (n + np), sg (n): scratch. 0 if C or the result is not finite. Local.
static int mbs_loopInterfaceEliminate(int np, int n, const mbsReal *C, const mbsReal *G, mbsReal *A,
                                      mbsReal *W, mbsReal *gw, mbsReal *sg) {
  if (np == 0) return 1;
  size_t nt = (size_t)n + (size_t)np;
  // W over [closure equations (kept); cut joints (eliminated)]: the reduction reads the kept
  // block, the eliminated rows and their lower triangle
  for (int i = 0; i < n; i++) memcpy(W + nt * i, A + (size_t)n * i, (size_t)n * sizeof(mbsReal));
  for (int p = 0; p < np; p++) {
    mbsReal *wp = W + nt * ((size_t)n + p);
    for (int j = 0; j < n; j++) wp[j] = -G[(size_t)n * p + j];
    memcpy(wp + n, C + (size_t)np * p, (size_t)np * sizeof(mbsReal));
  }
  memset(gw, 0, nt * sizeof(mbsReal));
  if (!mbs_schurReduce(n, np, W, gw, A, sg, NULL)) return 0;
  for (size_t k = 0; k < (size_t)n * n; k++)
    if (!isfinite(A[k])) return 0;
  return 1;
}

mbsErr mbs_loopSolveOps(const mbsModel *m, mbsWork *w, const mbsLoopOps *ops) {
  struct mbsLoopWork *lw = w->loop;
  MBS_CHECK(lw, MBS_ERR_INTERNAL, "mbs_loopSolveOps: the workspace has no loop solver");
  int n = lw->n, nb = m->nbody;
  size_t nn = (size_t)n * (size_t)n;
  MBS_CHECK(nn <= (size_t)INT32_MAX, MBS_ERR_NOMEM, "%d closure equations: too many", n);
  mbsReal ag[6];
  mbs_baseAccel(m, 1, ag);
  // eval.loops: this rank's own loop work (rows, dots, factorization), not the tree solves and
  // the sums
  MBS_TIC(w->timer, MBS_TIMER_LOOPS);
  // rows of every equation (the caller made the loop bodies' stages current) and the partial
  // right side from the tree solution without loop forces (w->acc of the owned bodies)
  mbs_loopAll(m, w, lw, 1);
  for (int i = 0; i < n; i++)
    lw->rhs[i] = (ops->root ? lw->kappa[i] : 0) -
                 mbs_loopDotOwned(m, lw, i, w->acc, ops->root ? ag : NULL, ops->b0, ops->b1);
  MBS_FLOPS(n);
  // the zero rows, known before any unit solve: this caller's joints, then the sum
  mbs_loopZeroSums(m, w, lw, ops->b0, ops->b1);
  MBS_TOC(w->timer, MBS_TIMER_LOOPS);
  MBS_CALL(ops->sum(ops->ctx, lw->zg, 2 * n));
  mbs_loopZeroDecide(lw);
  // A = G H^-1 G^T column by column: the response to each equation's unit wrench pair
  memcpy(lw->fz, w->fext, 6 * (size_t)nb * sizeof(mbsReal)); // the spring-dampers, kept
  int fext_on = w->fext_on;
  // the unit solves' statistics: their iterations count, a failure to converge is reported as
  // the evaluation's, the main solves' figures stay those of the tree solve
  mbsSolveStat keep = w->stat, unit = {0};
  unit.reason = MBS_REASON_CONVERGED;
  // the positions stay: every further tree solve has tree solve 0's matrix (schur then redoes
  // only its right side's passes where it can, mbs_schurRhsOnly)
  int np = ops->local ? ops->nport : 0;
  size_t len = (size_t)np * np + (size_t)np * n + nn + (size_t)n + 1, nt = (size_t)n + np;
  // + scratch: g of a local solve (np), the reduction's W, gw and sg
  size_t all = len + (size_t)np + nt * nt + nt + (size_t)n;
  mbsReal *sub = NULL;
  if (ops->local) { // [C | G | L | rhs | failed | scratch], allocated by the first evaluation
    MBS_CHECK(len <= (size_t)INT32_MAX, MBS_ERR_NOMEM,
              "%d cut-joint and %d closure equations: the separators' system is too large", np, n);
    if (lw->nsub != all) { // every caller at once: the same sizes everywhere
      free(lw->sub);
      lw->sub = malloc(all * sizeof(mbsReal));
      lw->nsub = lw->sub ? all : 0;
      mbsReal bad = lw->sub ? 0 : 1;
      MBS_CALL(ops->sum(ops->ctx, &bad, 1));
      MBS_CHECK(bad == 0, MBS_ERR_NOMEM, "out of memory (the separators' system, %zu numbers)",
                all);
    }
    sub = lw->sub;
  }
  w->reuse = 1;
  mbsErr e = ops->homog(ops->ctx, 1);
  if (ops->local && !e) e = mbs_loopLocalColumns(m, w, lw, ops, sub, sub + len); // direct
  for (int j = 0; j < n && !e && !ops->local; j++) {
    if (lw->skip[j]) { // a zero row: no unit solve, its column 0
      for (int i = 0; i < n; i++) lw->A[(size_t)i * n + j] = 0;
      continue;
    }
    memset(w->fext, 0, 6 * (size_t)nb * sizeof(mbsReal));
    mbs_loopAddUnit(m, lw, j, w->fext);
    w->fext_on = 1;
    e = ops->solve(ops->ctx);
    unit.total_iterations += w->stat.iterations;
    unit.total_restarts += w->stat.restarts;
    if (w->stat.reason < 0) // the failed unit solve's figures, for the warning
      unit.nonconverged++, unit.reason = w->stat.reason, unit.iterations = w->stat.iterations,
                           unit.residual = w->stat.residual;
    MBS_TIC(w->timer, MBS_TIMER_LOOPS);
    for (int i = 0; i < n; i++)
      lw->A[(size_t)i * n + j] = mbs_loopDotOwned(m, lw, i, w->acc, NULL, ops->b0, ops->b1);
    MBS_TOC(w->timer, MBS_TIMER_LOOPS);
  }
  mbsErr e2 = ops->homog(ops->ctx, 0);
  if (!e) e = e2;
  memcpy(w->fext, lw->fz, 6 * (size_t)nb * sizeof(mbsReal));
  w->fext_on = fext_on;
  w->stat = keep;
  w->reuse = 0;
  if (ops->local) { // one sum; a failed local solve is agreed on through it
    memcpy(sub + len - 1 - n, lw->rhs, (size_t)n * sizeof(mbsReal));
    sub[len - 1] = e ? 1 : 0;
    mbsErr es = ops->sum(ops->ctx, sub, (int)len);
    MBS_CALL(e);
    MBS_CALL(es);
    MBS_CHECK(sub[len - 1] == 0, MBS_ERR_NUMERIC,
              "loops: a local tree solve failed on another rank (see its message)");
    memcpy(lw->A, sub + (size_t)np * np + (size_t)np * n, nn * sizeof(mbsReal));
    memcpy(lw->rhs, sub + len - 1 - n, (size_t)n * sizeof(mbsReal));
    MBS_TIC(w->timer, MBS_TIMER_LOOPS);
    mbsReal *W = sub + len + np;
    int ok = mbs_loopInterfaceEliminate(np, n, sub, sub + (size_t)np * np, lw->A, W, W + nt * nt,
                                        W + nt * nt + nt);
    MBS_TOC(w->timer, MBS_TIMER_LOOPS);
    MBS_CHECK(ok, MBS_ERR_NUMERIC, "loops: the interface system of the tree solver is not finite");
    for (int i = 0; i < n; i++) // zero rows: no column was solved, their row is left out too
      if (lw->skip[i])
        for (int j = 0; j < n; j++) lw->A[(size_t)i * n + j] = lw->A[(size_t)j * n + i] = 0;
  } else {
    MBS_CALL(e);
    // the partial sums of every caller
    MBS_CALL(ops->sum(ops->ctx, lw->A, (int)nn));
    MBS_CALL(ops->sum(ops->ctx, lw->rhs, n));
  }
  MBS_TIC(w->timer, MBS_TIMER_LOOPS);
  mbs_loopFactorA(m, lw);
  mbs_loopMinNorm(lw, lw->rhs, lw->lam);
  // the loop wrenches join the external ones; the tree is solved again with them
  mbs_loopAddWrench(m, lw, lw->lam, w->fext);
  w->fext_on = 1;
  MBS_TOC(w->timer, MBS_TIMER_LOOPS);
  w->reuse = 1;
  e = ops->solve(ops->ctx);
  w->reuse = 0;
  MBS_CALL(e);
  // the final solve counted as this evaluation's second tree solve; the unit ones added
  w->stat.evals--;
  w->stat.total_iterations += unit.total_iterations;
  w->stat.total_restarts += unit.total_restarts;
  if (unit.nonconverged && w->stat.reason >= 0) {
    w->stat.reason = unit.reason, w->stat.nonconverged++;
    w->stat.iterations = unit.iterations, w->stat.residual = unit.residual;
  }
  memcpy(w->lam + m->nlam, lw->lam, (size_t)n * sizeof(mbsReal));
  // the acceleration-level closure after the solve
  MBS_TIC(w->timer, MBS_TIMER_LOOPS);
  for (int i = 0; i < n; i++)
    lw->tmp[i] = mbs_loopDotOwned(m, lw, i, w->acc, ops->root ? ag : NULL, ops->b0, ops->b1) -
                 (ops->root ? lw->kappa[i] : 0);
  MBS_FLOPS(n);
  MBS_TOC(w->timer, MBS_TIMER_LOOPS);
  MBS_CALL(ops->sum(ops->ctx, lw->tmp, n));
  lw->resid = 0;
  for (int i = 0; i < n; i++) lw->resid = fmax(lw->resid, fabs(lw->tmp[i]));
  return MBS_OK;
}

void mbs_loopStat(const mbsWork *w, mbsLoopStat *st) {
  memset(st, 0, sizeof *st);
  if (!w->loop) return;
  st->rank = w->loop->rank;
  st->nzero = w->loop->nzero;
  st->nredundant = w->loop->n - w->loop->rank;
  st->min_pivot = w->loop->min_pivot;
  st->nskip = w->loop->nskip;
  st->residual = w->loop->resid;
}

int mbs_loopSkipped(const mbsWork *w, unsigned char *mask) {
  const struct mbsLoopWork *lw = w->loop;
  if (!lw) return 0;
  if (mask) memcpy(mask, lw->skip, (size_t)lw->n);
  return lw->nskip;
}

// ---------------------------------------------------------------- closure rows in the system

// how solver.method takes the loop forces: 0 the serial baseline's range space (aba, crba), 1
// unit solves (section 8.1), 2 closure rows in the system (8.4), 3 schur's separators (8.1)
static int mbs_loopSolveKind(const mbsModel *m) {
  int sv = m->opt.solver;
  if (mbs_solverIsBaseline(sv)) return 0;
  return mbs_loopUseRows(m, sv) ? 2 : mbs_loopSeparators(m, sv) ? 3 : 1;
}
static const char *mbs_loopSolveName(const mbsModel *m) {
  static const char *const nm[] = {"range_space", "unit", "rows", "separators"};
  return nm[mbs_loopSolveKind(m)];
}

int mbs_loopSeparators(const mbsModel *m, int method) {
  return m->nloop && mbs_solverCaps(method)->separators && m->opt.loops != MBS_LOOPS_UNIT;
}

int mbs_loopUseRows(const mbsModel *m, int method) {
  const mbsSolverType *t = mbs_solverFind(method);
  if (!m->nloop || !t || !t->iterative || m->opt.loops == MBS_LOOPS_UNIT) return 0;
  if (m->opt.loops == MBS_LOOPS_ROWS) return 1;
  // auto: the kept equations independent at the assembled q0, so lambda is unique there
  const mbsLoopAssembly *a = &m->loop_asm;
  return a->done && a->rank == m->nlam_loop - a->nskip;
}

const mbsReal *mbs_loopRowsCompute(const mbsModel *m, mbsWork *w, const mbsReal **kappa) {
  struct mbsLoopWork *lw = w->loop;
  mbs_loopAll(m, w, lw, 1);
  if (kappa) *kappa = lw->kappa;
  return lw->D;
}

mbsReal *mbs_loopZeroBegin(const mbsModel *m, mbsWork *w, int b0, int b1) {
  mbs_loopZeroSums(m, w, w->loop, b0, b1);
  return w->loop->zg;
}

const unsigned char *mbs_loopZeroEnd(mbsWork *w) {
  mbs_loopZeroDecide(w->loop);
  return w->loop->skip;
}

void mbs_loopRowsDone(const mbsModel *m, mbsWork *w, const mbsReal *lam, mbsReal resid) {
  struct mbsLoopWork *lw = w->loop;
  int n = lw->n, k = 0;
  memcpy(lw->lam, lam, (size_t)n * sizeof(mbsReal));
  memcpy(w->lam + m->nlam, lam, (size_t)n * sizeof(mbsReal));
  // the kept equations first, then the zero rows (the redundant ones of the reports)
  for (int i = 0; i < n; i++)
    if (!lw->skip[i]) lw->piv[k++] = i;
  lw->rank = k;
  for (int i = 0; i < n; i++)
    if (lw->skip[i]) lw->piv[k++] = i;
  lw->nzero = lw->nskip;
  lw->min_pivot = NAN; // no factorization of the closure equations
  lw->resid = resid;
}

int mbs_loopRedundant(const mbsWork *w, int *idx) {
  const struct mbsLoopWork *lw = w->loop;
  if (!lw) return 0;
  int k = 0;
  for (int i = lw->rank; i < lw->n; i++) idx[k++] = lw->piv[i];
  // ascending order for reports
  for (int i = 1; i < k; i++)
    for (int j = i; j > 0 && idx[j - 1] > idx[j]; j--) {
      int t = idx[j];
      idx[j] = idx[j - 1];
      idx[j - 1] = t;
    }
  return k;
}

void mbs_loopViolation(const mbsModel *m, const mbsWork *w, mbsReal *pos, mbsReal *rot,
                       mbsReal *vel) {
  mbsReal p = 0, r = 0, v = 0;
  for (int k = 0; k < m->nloop; k++) {
    mbsReal c[6], cd[6];
    int t = m->loop_type[k];
    mbs_loopRows(m, w, k, NULL, NULL, c, vel ? cd : NULL, NULL);
    for (int i = 0; i < m->loop_lamnum[k]; i++) {
      if (mbs_loopEqIsPosition(t, i))
        p = fmax(p, fabs(c[i]));
      else
        r = fmax(r, fabs(c[i]));
      if (vel) v = fmax(v, fabs(cd[i]));
    }
  }
  if (pos) *pos = p;
  if (rot) *rot = r;
  if (vel) *vel = v;
}

// the wrench of loop k (its equations from i0 on) in the ground frame into out (6)
static void mbs_loopWrenchOne(const mbsModel *m, const mbsWork *w, int k, int i0, mbsReal *out) {
  const struct mbsLoopWork *lw = w->loop;
  int b2 = m->loop_body[2 * k + 1];
  mbsReal W[6] = {0, 0, 0, 0, 0, 0};
  for (int r = 0, i = i0; r < m->loop_lamnum[k]; r++, i++)
    for (int j = 0; j < 6; j++) W[j] += lw->D[12 * i + 6 + j] * w->lam[m->nlam + i];
  // body-2 coordinates at its origin -> ground frame, moment about the origin of frame 2
  const mbsReal *o2 = m->loop_frame + 24 * k + 12;
  mbsReal R[9], f[3], n[3], r2[3], t[3];
  if (b2 >= 0)
    memcpy(R, w->xmat + 9 * b2, sizeof R);
  else
    mbsu_eye3(R);
  mbsu_mulMat3Vec(R, W, n);
  mbsu_mulMat3Vec(R, W + 3, f);
  mbsu_mulMat3Vec(R, o2, r2);
  mbsu_cross3(r2, f, t);
  for (int j = 0; j < 3; j++) out[j] = n[j] - t[j], out[3 + j] = f[j];
}

void mbs_loopWrenchWorld(const mbsModel *m, const mbsWork *w, mbsReal *out) {
  for (int k = 0, i = 0; k < m->nloop; i += m->loop_lamnum[k], k++)
    mbs_loopWrenchOne(m, w, k, i, out + 6 * k);
}

// ---------------------------------------------------------------- assembly and projection

// A at the current position stage (articulated factors from positions only), factored
static mbsErr mbs_loopFactorHere(const mbsModel *m, mbsWork *w) {
  struct mbsLoopWork *lw = w->loop;
  if (!mbs_abaFactor(m, w))
    return mbs_errSet(MBS_ERR_NUMERIC, "loops: singular articulated inertia");
  mbs_loopMatrixAba(m, w, lw);
  mbs_loopFactorA(m, lw);
  return MBS_OK;
}

// the mass-metric correction of x (n closure values): y = -H^-1 G^T A^+ x into lw->dz
static void mbs_loopCorrect(const mbsModel *m, const mbsWork *w, struct mbsLoopWork *lw,
                            const mbsReal *x) {
  mbs_loopMinNorm(lw, x, lw->nu);
  for (int i = 0; i < lw->n; i++) lw->nu[i] = -lw->nu[i];
  memset(lw->fz, 0, 6 * (size_t)m->nbody * sizeof(mbsReal));
  mbs_loopAddWrench(m, lw, lw->nu, lw->fz);
  mbs_loopSweep(m, w, lw, -1);
  memset(lw->fz, 0, 6 * (size_t)m->nbody * sizeof(mbsReal));
}

static void mbs_loopErr(const mbsModel *m, const struct mbsLoopWork *lw, const mbsReal *c,
                        mbsReal *pos, mbsReal *rot) {
  *pos = *rot = 0;
  for (int i = 0; i < lw->n; i++) {
    int t = m->loop_type[lw->eq_loop[i]];
    if (mbs_loopEqIsPosition(t, lw->eq_row[i]))
      *pos = fmax(*pos, fabs(c[i]));
    else
      *rot = fmax(*rot, fabs(c[i]));
  }
}

mbsErr mbs_loopProject(const mbsModel *m, mbsState *s, mbsWork *w, int maxit, mbsLoopProj *info) {
  struct mbsLoopWork *lw = w->loop;
  MBS_CHECK(lw, MBS_ERR_INTERNAL, "mbs_loopProject: the workspace has no loop solver");
  memset(info, 0, sizeof *info);
  int nv = m->nv;
  mbsReal tol = m->opt.closure_tol;
  // positions: Newton-Raphson, G dq = -c in the mass metric
  for (int it = 0;; it++) {
    mbs_fwdPosition(m, s, w);
    mbs_loopAll(m, w, lw, 0);
    mbsReal ep, er;
    mbs_loopErr(m, lw, lw->c, &ep, &er);
    if (it == 0) info->c_pos = ep, info->c_rot = er;
    info->c_pos1 = ep, info->c_rot1 = er;
    if (!(fmax(ep, er) > tol) || !isfinite(ep + er)) {
      info->converged = isfinite(ep + er);
      break;
    }
    if (it >= maxit) break;
    MBS_CALL(mbs_loopFactorHere(m, w));
    mbs_loopCorrect(m, w, lw, lw->c);
    for (int d = 0; d < nv; d++) info->dq_max = fmax(info->dq_max, fabs(lw->dz[d]));
    mbs_integratePos(m, s->q, lw->dz, 1, s->q);
    info->iterations = it + 1;
  }
  // rates: G qd = 0 in the mass metric, at the final positions (A factored there)
  mbs_fwdVelocity(m, s, w);
  mbs_loopAll(m, w, lw, 1);
  MBS_CALL(mbs_loopFactorHere(m, w));
  mbs_loopCorrect(m, w, lw, lw->cdot);
  for (int d = 0; d < nv; d++) {
    info->dqd_max = fmax(info->dqd_max, fabs(lw->dz[d]));
    s->qd[d] += lw->dz[d];
  }
  return MBS_OK;
}

mbsErr mbs_loopAssemble(mbsModel *m) {
  mbsLoopAssembly *as = &m->loop_asm;
  free(as->redundant), free(as->skip);
  memset(as, 0, sizeof *as);
  if (m->nloop == 0) return MBS_OK;
  mbsState *s = NULL;
  mbsWork *w = NULL;
  mbsErr e = mbs_stateCreate(m, &s);
  if (!e) e = mbs_workCreate(m, &w);
  mbsLoopProj pj;
  if (!e) e = mbs_loopProject(m, s, w, 50, &pj);
  if (e == MBS_ERR_NUMERIC) { // the iterates left the model (a singular factor): cannot close
    char why[512];
    snprintf(why, sizeof why, "%s", mbs_errMsg());
    e = mbs_errSet(MBS_ERR_INPUT,
                   "the loops cannot be closed from q0: the Newton-Raphson iterations diverged "
                   "(%s; the closure error was %.3g at q0): check the loop frames, the link "
                   "geometry and q0",
                   why, fmax(pj.c_pos, pj.c_rot));
  }
  if (!e && !pj.converged) {
    // the worst equation
    struct mbsLoopWork *lw = w->loop;
    int worst = 0;
    for (int i = 1; i < lw->n; i++)
      if (!(fabs(lw->c[i]) <= fabs(lw->c[worst]))) worst = i;
    int k = lw->eq_loop[worst];
    e = mbs_errSet(MBS_ERR_INPUT,
                   "the loops cannot be closed from q0: after %d Newton-Raphson iterations the "
                   "closure error is %.3g (loop \"%s\", equation %s; it was %.3g at q0): check the "
                   "loop frames, the link geometry and q0",
                   pj.iterations, fabs(lw->c[worst]), m->loop_name[k],
                   mbs_loopEqName(m->loop_type[k], lw->eq_row[worst]), fmax(pj.c_pos, pj.c_rot));
  }
  if (!e) {
    memcpy(m->q0, s->q, (size_t)m->nq * sizeof(mbsReal));
    memcpy(m->qd0, s->qd, (size_t)m->nv * sizeof(mbsReal));
    as->done = 1;
    as->iterations = pj.iterations;
    as->c0_pos = pj.c_pos, as->c0_rot = pj.c_rot;
    as->c_pos = pj.c_pos1, as->c_rot = pj.c_rot1;
    as->dq_max = pj.dq_max, as->dqd_max = pj.dqd_max;
    // rank of the closure equations at the assembled q0 (the factor of the rate projection)
    as->rank = w->loop->rank;
    as->nredundant = w->loop->n - w->loop->rank;
    as->redundant = malloc(sizeof(int) * (size_t)(as->nredundant + 1));
    // the zero rows known in advance there (the unit solves a loop solve leaves out; cpa): the
    // rate projection's factorization just found them at these positions
    const struct mbsLoopWork *lw = w->loop;
    as->nskip = lw->nskip;
    as->skip = malloc((size_t)lw->n + 1);
    if (!as->redundant || !as->skip) {
      e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    } else {
      mbs_loopRedundant(w, as->redundant);
      memcpy(as->skip, lw->skip, (size_t)lw->n);
    }
  }
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  return e;
}

// ---------------------------------------------------------------- inverse dynamics

// A = Gu Gu^T for the columns of G with sel[d] = 1, factored (rank in lw->rank)
static void mbs_loopFactorCols(const mbsModel *m, struct mbsLoopWork *lw, const int *sel) {
  int n = lw->n, nv = m->nv;
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++) {
      mbsReal s = 0;
      const mbsReal *gi = lw->G + (size_t)i * nv, *gj = lw->G + (size_t)j * nv;
      for (int d = 0; d < nv; d++)
        if (sel[d]) s += gi[d] * gj[d];
      lw->A[(size_t)i * n + j] = lw->A[(size_t)j * n + i] = s;
    }
  mbs_loopFactor(lw, m->opt.rank_tol, NULL);
}

// x[d] = sum_i G_id mu_i for the selected columns (the minimum-norm Gu^+ r with mu = A^+ r)
static void mbs_loopGuT(const mbsModel *m, const struct mbsLoopWork *lw, const int *sel,
                        const mbsReal *mu, mbsReal *x) {
  for (int d = 0; d < m->nv; d++) {
    x[d] = 0;
    if (!sel[d]) continue;
    for (int i = 0; i < lw->n; i++) x[d] += lw->G[(size_t)i * m->nv + d] * mu[i];
  }
}

mbsErr mbs_loopInverse(const mbsModel *m, mbsState *s, mbsWork *w, const int *act, mbsReal *qdd,
                       mbsReal *tau, mbsReal *lam, mbsReal *resid) {
  struct mbsLoopWork *lw = w->loop;
  MBS_CHECK(lw, MBS_ERR_INTERNAL, "mbs_loopInverse: the workspace has no loop solver");
  int n = lw->n, nv = m->nv, nu = 0;
  int *un = calloc((size_t)nv + 1, sizeof *un), *all = calloc((size_t)nv + 1, sizeof *all);
  mbsReal *x = lw->vq, *f = lw->vq2;
  MBS_CHECK(un && all, MBS_ERR_NOMEM, "out of memory");
  for (int d = 0; d < nv; d++) un[d] = !act[d], all[d] = 1, nu += un[d];
  mbsErr e = MBS_OK;
  // positions: Newton-Raphson on the unactuated coordinates, Gu dq_u = -c (minimum norm)
  mbsReal ep = 0, er = 0;
  for (int it = 0; it <= 50; it++) {
    mbs_fwdPosition(m, s, w);
    mbs_loopAll(m, w, lw, 0);
    mbs_loopErr(m, lw, lw->c, &ep, &er);
    if (!(fmax(ep, er) > m->opt.closure_tol) || it == 50) break;
    mbs_loopJacobian(m, w, lw->G);
    mbs_loopFactorCols(m, lw, un);
    mbs_loopMinNorm(lw, lw->c, lw->nu);
    mbs_loopGuT(m, lw, un, lw->nu, x);
    for (int d = 0; d < nv; d++) x[d] = -x[d];
    mbs_integratePos(m, s->q, x, 1, s->q);
  }
  if (fmax(ep, er) > m->opt.closure_tol || !isfinite(ep + er))
    e = mbs_errSet(MBS_ERR_INPUT,
                   "inverse: the loops cannot be closed with the actuated coordinates of t = %g "
                   "(closure error %.3g after 50 Newton-Raphson iterations): the prescribed "
                   "motion leaves the mechanism's reach",
                   s->time, fmax(ep, er));
  // the actuated dofs must determine the others: rank(Gu) = #unactuated = rank(G)
  mbs_loopJacobian(m, w, lw->G);
  int rank_all = 0;
  if (!e) {
    mbs_loopFactorCols(m, lw, all);
    rank_all = lw->rank;
    mbs_loopFactorCols(m, lw, un);
    if (lw->rank < nu)
      e = mbs_errSet(MBS_ERR_INPUT,
                     "inverse.actuated: the actuated joints do not determine the motion (the "
                     "mechanism has %d degree(s) of freedom, %d dof(s) are actuated)",
                     nv - rank_all, nv - nu);
    else if (lw->rank < rank_all)
      e = mbs_errSet(MBS_ERR_INPUT,
                     "inverse.actuated: the actuated joints are not independent: the loops tie "
                     "them together (the mechanism has %d degree(s) of freedom, %d dof(s) are "
                     "actuated)",
                     nv - rank_all, nv - nu);
  }
  if (!e) {
    // rates: Gu qd_u = -Ga qd_a (the loops' rates with qd_u = 0)
    for (int d = 0; d < nv; d++)
      if (un[d]) s->qd[d] = 0;
    mbs_fwdVelocity(m, s, w);
    mbs_loopAll(m, w, lw, 1);
    memcpy(lw->rhs, lw->cdot, (size_t)n * sizeof(mbsReal));
    mbs_loopMinNorm(lw, lw->rhs, lw->nu);
    mbs_loopGuT(m, lw, un, lw->nu, x);
    for (int d = 0; d < nv; d++)
      if (un[d]) s->qd[d] = -x[d];
    // accelerations: Gu qdd_u = kappa - D^T a(qdd with qdd_u = 0) (no Baumgarte terms)
    mbs_fwdVelocity(m, s, w);
    mbs_loopAll(m, w, lw, 1);
    mbsReal ag[6];
    mbs_baseAccel(m, 1, ag);
    for (int d = 0; d < nv; d++)
      if (un[d]) qdd[d] = 0;
    mbs_fwdForces(m, w);
    mbs_rnea(m, w, qdd);
    for (int i = 0; i < n; i++) {
      // kappa without the Baumgarte terms: -c'' of the motion with a = 0
      int k = lw->eq_loop[i];
      mbsReal ka[6];
      int b1 = m->loop_body[2 * k], b2 = m->loop_body[2 * k + 1];
      mbsLoopSide s1 = {NULL, NULL, NULL}, s2 = {NULL, NULL, NULL};
      if (b1 >= 0) s1.R = w->xmat + 9 * b1, s1.x = w->xpos + 3 * b1, s1.v = w->cvel + 6 * b1;
      if (b2 >= 0) s2.R = w->xmat + 9 * b2, s2.x = w->xpos + 3 * b2, s2.v = w->cvel + 6 * b2;
      mbsu_loopClosure(m->loop_type[k], m->loop_frame + 24 * k, m->loop_frame + 24 * k + 12, &s1,
                       &s2, NULL, NULL, NULL, NULL, ka);
      lw->rhs[i] = ka[lw->eq_row[i]] - mbs_loopDotAcc(m, lw, i, w->acc, ag);
    }
    mbs_loopMinNorm(lw, lw->rhs, lw->nu);
    mbs_loopGuT(m, lw, un, lw->nu, x);
    for (int d = 0; d < nv; d++)
      if (un[d]) qdd[d] = x[d];
    // forces: RNEA(q, qd, qdd) - joint forces = tau + G^T lam, tau = 0 on the unactuated dofs
    mbs_rnea(m, w, qdd);
    for (int d = 0; d < nv; d++) f[d] = w->qfrc_inv[d] - w->qfrc[d];
    for (int i = 0; i < n; i++) { // Gu f_u
      lw->rhs[i] = 0;
      for (int d = 0; d < nv; d++)
        if (un[d]) lw->rhs[i] += lw->G[(size_t)i * nv + d] * f[d];
    }
    mbs_loopMinNorm(lw, lw->rhs, lam);
    mbsReal num = 0, den = 0;
    for (int d = 0; d < nv; d++) {
      mbsReal gl = 0;
      for (int i = 0; i < n; i++) gl += lw->G[(size_t)i * nv + d] * lam[i];
      tau[d] = un[d] ? 0 : f[d] - gl;
      if (un[d]) num = fmax(num, fabs(f[d] - gl));
      den = fmax(den, fabs(f[d]));
    }
    *resid = num / (den > 1e-12 ? den : 1e-12);
  }
  free(un);
  free(all);
  return e;
}

// ---------------------------------------------------------------- reports

char *mbs_loopEqLabel(const mbsModel *m, int i, char *buf, size_t n) {
  int k = 0;
  while (k + 1 < m->nloop && m->loop_lamadr[k + 1] - m->nlam <= i) k++;
  int r = i - (m->loop_lamadr[k] - m->nlam);
  snprintf(buf, n, "%s.%s", m->loop_name[k], mbs_loopEqName(m->loop_type[k], r));
  return buf;
}

static void mbs_loopJsonRedundant(mbsJson *j, const mbsModel *m, const int *idx, int n) {
  mbs_jsonBeginArray(j, "redundant");
  for (int i = 0; i < n; i++) {
    char lab[300];
    mbs_jsonString(j, NULL, mbs_loopEqLabel(m, idx[i], lab, sizeof lab));
  }
  mbs_jsonEndArray(j);
}

void mbs_loopJsonModel(mbsJson *j, const mbsModel *m) {
  if (m->nforce) mbs_jsonInt(j, "forces", m->nforce);
  if (!m->nloop) return;
  const mbsLoopAssembly *as = &m->loop_asm;
  mbs_jsonBeginObject(j, "loops");
  mbs_jsonInt(j, "count", m->nloop);
  mbs_jsonInt(j, "closure_equations", m->nlam_loop);
  mbs_jsonInt(j, "rank", as->rank);
  mbs_loopJsonRedundant(j, m, as->redundant, as->nredundant);
  mbs_jsonInt(j, "zero_rows", as->nskip); // G_i = 0 at q0: no unit solve (docs/loops.md 8.1)
  mbs_jsonInt(j, "mobility", m->nv - as->rank);
  mbs_jsonString(j, "solve", mbs_loopSolveName(m)); // with solver.method (docs/loops.md 8.4)
  mbs_jsonBeginObject(j, "assembly");
  mbs_jsonInt(j, "iterations", as->iterations);
  mbs_jsonNumber(j, "closure_pos_before", as->c0_pos);
  mbs_jsonNumber(j, "closure_rot_before", as->c0_rot);
  mbs_jsonNumber(j, "closure_pos_after", as->c_pos);
  mbs_jsonNumber(j, "closure_rot_after", as->c_rot);
  mbs_jsonNumber(j, "dq_max", as->dq_max);
  mbs_jsonNumber(j, "dqd_max", as->dqd_max);
  mbs_jsonEndObject(j);
  mbs_jsonEndObject(j);
}

void mbs_loopJsonResult(mbsJson *j, const mbsModel *m, const mbsWork *w) {
  if (!m->nloop || !w->loop) return;
  // no allocation here: a report cannot come out half-written
  const struct mbsLoopWork *lw = w->loop;
  mbs_jsonNumberArray(j, "loop_lambda", w->lam + m->nlam, m->nlam_loop);
  mbs_jsonBeginArray(j, "loop_wrench");
  for (int k = 0, i = 0; k < m->nloop; i += m->loop_lamnum[k], k++) {
    mbsReal wr[6];
    mbs_loopWrenchOne(m, w, k, i, wr);
    mbs_jsonNumberArray(j, NULL, wr, 6);
  }
  mbs_jsonEndArray(j);
  mbsLoopStat st;
  mbs_loopStat(w, &st);
  mbsReal pos, rot, vel;
  mbs_loopViolation(m, w, &pos, &rot, &vel);
  mbs_jsonBeginObject(j, "loops");
  // how the loop forces were solved: the serial baseline's range space (aba, crba), the engine's
  // unit solves, or the closure equations as rows of the constraint-force system (section 8.4)
  mbs_jsonString(j, "solve", mbs_loopSolveName(m));
  mbs_jsonInt(j, "rank", st.rank);
  mbs_jsonBeginArray(j, "redundant"); // ascending: the equations past the rank in pivot order
  for (int i = 0; i < lw->n; i++)
    for (int q = lw->rank; q < lw->n; q++)
      if (lw->piv[q] == i) {
        char lab[300];
        mbs_jsonString(j, NULL, mbs_loopEqLabel(m, i, lab, sizeof lab));
      }
  mbs_jsonEndArray(j);
  mbs_jsonNumber(j, "min_pivot", st.min_pivot);
  // zero rows known before the unit solves (G_i = 0): the solves left out (docs/loops.md 8.1)
  mbs_jsonInt(j, "zero_rows_skipped", st.nskip);
  mbs_jsonNumber(j, "closure_residual", st.residual);
  mbs_jsonNumber(j, "violation_pos", pos);
  mbs_jsonNumber(j, "violation_rot", rot);
  mbs_jsonNumber(j, "violation_vel", vel);
  mbs_jsonEndObject(j);
}

void mbs_loopPrint(FILE *f, const mbsModel *m) {
  if (m->nforce) fprintf(f, "  %-26s %d\n", "spring-dampers", m->nforce);
  if (!m->nloop) return;
  const mbsLoopAssembly *as = &m->loop_asm;
  fprintf(f, "  %-26s %d (", "loops (cut joints)", m->nloop);
  for (int k = 0; k < m->nloop && k < 8; k++)
    fprintf(f, "%s%s %s", k ? ", " : "", m->loop_name[k], mbs_jntName(m->loop_type[k]));
  fprintf(f, "%s)\n", m->nloop > 8 ? ", ..." : "");
  fprintf(f, "  %-26s %d, rank %d at q0\n", "closure equations", m->nlam_loop, as->rank);
  fprintf(f, "  %-26s %d", "redundant equations", as->nredundant);
  for (int i = 0; i < as->nredundant && i < 12; i++) {
    char lab[300];
    fprintf(f, "%s%s", i ? ", " : " (", mbs_loopEqLabel(m, as->redundant[i], lab, sizeof lab));
  }
  fprintf(f, "%s\n", as->nredundant > 12 ? ", ...)" : as->nredundant ? ")" : "");
  fprintf(f, "  %-26s %d of them zero rows (no motion violates them: no unit solve)\n", "",
          as->nskip);
  fprintf(f, "  %-26s %d (nv %d - rank %d)\n", "mobility (dofs)", m->nv - as->rank, m->nv,
          as->rank);
  static const char *const how[] = {"the serial baseline's range space (section 3)",
                                    "one unit tree solve per closure equation (section 8.1)",
                                    "closure equations as rows of the system (section 8.4)",
                                    "closure equations and cut joints as separators, local "
                                    "solves (section 8.1)"};
  fprintf(f, "  %-26s %s: %s, solver.loops = %s\n", "loop forces", mbs_solverName(m->opt.solver),
          how[mbs_loopSolveKind(m)], mbs_loopModeName(m->opt.loops));
  fprintf(f,
          "  %-26s %d Newton-Raphson iteration(s): closure %.3g m / %.3g rad -> %.3g m / "
          "%.3g rad, max |dq| %.3g, max |dqd| %.3g\n",
          "assembly of q0", as->iterations, as->c0_pos, as->c0_rot, as->c_pos, as->c_rot,
          as->dq_max, as->dqd_max);
}
