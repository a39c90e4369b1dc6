/// \file loops.c
/// Closed loops in the serial core (mbs_loops.h, docs/loops.md): the loop workspace, the closure
/// kinematics every loop solve shares (the directions of the closure equations, their dots with
/// accelerations and their wrenches, the closure Jacobian, the zero-row test), the closure
/// violation and the loop wrenches. The baseline is in loops_baseline.c, the engine's loop layer
/// in loops_ops.c, assembly, projection and inverse dynamics in loops_asm.c, reports in
/// loops_report.c, the spring-dampers in loops_forces.c.
///
/// Every dense matrix here is nlam_loop x nlam_loop (or nlam_loop x nv): the oracle is meant for
/// mechanisms with a moderate number of closure equations (cost O(nlam_loop * nbody) for the
/// articulated sweeps plus O(nlam_loop^3) for the factorization); the distributed constraint-force
/// solvers are the scalable route (docs/loops.md 8).
#include "loops_private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "flops.h"
#include "mbspar/mbs_joint.h"
#include "spatial.h"
#include "body.h"

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
  lw->L = lw->A; // the factor overwrites A (mbs_loopFactor: nothing reads A after it)
  lw->M = calloc(n * n, sizeof(mbsReal));
  lw->fz = calloc(6 * nb, sizeof(mbsReal));
  // what only the whole model's loop solves read (the serial baseline's sweeps and matrices, the
  // assembly, projection and inverse: loops_baseline.c, loops_asm.c); a distributed loop model
  // runs the engine's loop layer alone (loops_ops.c; docs/loops.md 9), where each of these
  // arrays would still cost resident memory (calloc clears the heap's old top)
  int whole = !m->local;
  if (whole) {
    lw->G = calloc(n * nv, sizeof(mbsReal));
    lw->Y = calloc(n * nv, sizeof(mbsReal));
    lw->qdd0 = calloc(nv, sizeof(mbsReal));
    lw->uz = calloc(nv, sizeof(mbsReal));
    lw->dz = calloc(nv, sizeof(mbsReal));
    lw->vq = calloc(nv + 7 * nb, sizeof(mbsReal)); // room for nq as well
    lw->vq2 = calloc(nv + 7 * nb, sizeof(mbsReal));
    lw->pz = calloc(6 * nb, sizeof(mbsReal));
    lw->az = calloc(6 * nb, sizeof(mbsReal));
  }
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
  if (whole) {
    lw->ia_cap = mbs_loopIaSlots(m);
    lw->dinv = calloc(6 * nv, sizeof(mbsReal));
    lw->ia = calloc(36 * (size_t)(lw->ia_cap > 0 ? lw->ia_cap : 1), sizeof(mbsReal));
    lw->ia_slot = calloc(nb, sizeof(int));
    lw->ia_free = calloc((size_t)(lw->ia_cap > 0 ? lw->ia_cap : 1), sizeof(int));
  }
  lw->anc = calloc(2 * nlp, sizeof(int));
  lw->anc_b0 = lw->anc_b1 = -1;
  int ok = lw->anc && lw->minv && lw->mok && lw->ord && lw->first && lw->eq_loop && lw->eq_row &&
           lw->piv && lw->nz && lw->D && lw->A && lw->L && lw->M && lw->fz && lw->zg && lw->skip &&
           lw->zt && lw->sg && lw->zacc;
  if (whole)
    ok = ok && lw->dinv && lw->ia && lw->ia_slot && lw->ia_free && lw->G && lw->Y && lw->qdd0 &&
         lw->uz && lw->dz && lw->vq && lw->vq2 && lw->pz && lw->az;
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
    mbs_bodyInertiaFull(m, b, I6);
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
  void *arrs[] = {lw->eq_loop, lw->eq_row, lw->piv,  lw->nz,      lw->D,       lw->c,   lw->cdot,
                  lw->kappa,   lw->rhs,    lw->lam,  lw->nu,      lw->sc,      lw->tmp, lw->col,
                  lw->A,       lw->M,      lw->G,    lw->Y,       lw->qdd0,    lw->uz,  lw->dz,
                  lw->vq,      lw->vq2,    lw->fz,   lw->pz,      lw->az,      lw->zg,  lw->skip,
                  lw->zt,      lw->sg,     lw->zacc, lw->sub,     lw->minv,    lw->mok, lw->ord,
                  lw->first,   lw->dinv,   lw->ia,   lw->ia_slot, lw->ia_free, lw->anc};
  for (size_t k = 0; k < sizeof arrs / sizeof arrs[0]; k++) free(arrs[k]);
  free(lw);
  *plw = NULL;
}

void mbs_loopWorkRelease(mbsWork *w) {
  struct mbsLoopWork *lw = w ? w->loop : NULL;
  if (!lw) return;
  free(lw->A), free(lw->M), free(lw->G), free(lw->Y);
  lw->A = lw->L = lw->M = lw->G = lw->Y = NULL;
}

// ---------------------------------------------------------------- directions

// D, c (pos != 0), cdot and kappa (vel != 0) of every closure equation
void mbs_loopAll(const mbsModel *m, const mbsWork *w, struct mbsLoopWork *lw, int vel) {
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
mbsReal mbs_loopDotOwned(const mbsModel *m, const struct mbsLoopWork *lw, int i, const mbsReal *acc,
                         const mbsReal *ag, int b0, int b1) {
  int k = lw->eq_loop[i];
  mbsReal s = 0;
  for (int side = 0; side < 2; side++) {
    int b = m->loop_body[2 * k + side];
    const mbsReal *D = lw->D + 12 * i + 6 * side;
    if (b >= b0 && b < b1) {
      s += mbsu_dot6(D, acc + 6 * b);
      MBS_FLOPS(MBS_FL_LOOP_DOT);
    } else if (b == -1 && ag) { // the ground (not a side another rank holds, local models)
      s += mbsu_dot6(D, ag);
      MBS_FLOPS(MBS_FL_LOOP_DOT);
    }
  }
  return s;
}

// D_i^T (accelerations of its two bodies); ground sides use a_ground (ag, if given)
mbsReal mbs_loopDotAcc(const mbsModel *m, const struct mbsLoopWork *lw, int i, const mbsReal *acc,
                       const mbsReal *ag) {
  return mbs_loopDotOwned(m, lw, i, acc, ag, 0, m->nbody);
}

// wrenches sum_i D_i x_i into wr (nbody x 6, added)
void mbs_loopAddWrench(const mbsModel *m, const struct mbsLoopWork *lw, const mbsReal *x,
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
void mbs_loopAddUnit(const mbsModel *m, const struct mbsLoopWork *lw, int i, mbsReal *wr) {
  int k = lw->eq_loop[i], b1 = m->loop_body[2 * k], b2 = m->loop_body[2 * k + 1];
  const mbsReal *D = lw->D + 12 * i;
  if (b1 >= 0)
    for (int j = 0; j < 6; j++) wr[6 * b1 + j] += D[j];
  if (b2 >= 0)
    for (int j = 0; j < 6; j++) wr[6 * b2 + j] += D[6 + j];
  MBS_FLOPS(6 * ((b1 >= 0) + (b2 >= 0)));
}

// the unit wrench pair of equation i taken out of wr again (its bodies' entries zeroed)
void mbs_loopClearUnit(const mbsModel *m, const struct mbsLoopWork *lw, int i, mbsReal *wr) {
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
void mbs_loopZeroSums(const mbsModel *m, const mbsWork *w, struct mbsLoopWork *lw, int b0, int b1) {
  int n = lw->n;
  mbsReal *g = lw->zacc; // per dof and row of the loop: G_id, zero between loops
  mbsReal *sg = lw->sg;  // per dof: S^g (6) and |S^g|^2
  const int *anc = mbs_loopAncestors(m, lw, b0, b1);
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
      // from the first body of the path here (no walk across the bodies above the range): a
      // path without one adds nothing (its s2 would be 0)
      int b = m->loop_body[2 * k + side], a = anc[2 * k + side];
      if (a < 0) continue; // the ground, or no body of the path here
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
      for (int c = a; c >= b0; c = m->body_parent[c]) { // (parents come first: all in range)
        int nd = m->body_dofnum[c], d0 = m->body_dofadr[c];
        if (nd == 0) continue;
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

// Full models: one walk up body_parent per side when the range changes. A local model's builder
// records them for its owned range (m->loop_anc; its held loop bodies that are not relatives of
// an owned body have local parent -1, so the walk would stop there: docs/scaling.md, (iii))
const int *mbs_loopAncestors(const mbsModel *m, struct mbsLoopWork *lw, int b0, int b1) {
  if (m->local && m->loop_anc && b0 == m->own0 && b1 == m->own1) return m->loop_anc;
  if (lw->anc_b0 == b0 && lw->anc_b1 == b1) return lw->anc;
  for (int s = 0; s < 2 * m->nloop; s++) {
    int c = m->loop_body[s];
    while (c >= b1) c = m->body_parent[c];
    lw->anc[s] = c >= b0 ? c : -1;
  }
  lw->anc_b0 = b0, lw->anc_b1 = b1;
  return lw->anc;
}

// the equations to skip from the summed zg: G_i below 1e-9 of the size of its terms (A_ii then
// ~1e-18 of its scale, far below any solver.rank_tol)
void mbs_loopZeroDecide(struct mbsLoopWork *lw) {
  int n = lw->n;
  lw->nskip = 0;
  for (int i = 0; i < n; i++) {
    lw->skip[i] = !(lw->zg[i] > 1e-18 * lw->zg[n + i]);
    lw->nskip += lw->skip[i];
  }
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

void mbs_loopAddForces(const mbsModel *m, mbsWork *w, const mbsReal *lam) {
  struct mbsLoopWork *lw = w->loop;
  if (!m->nloop || !lw) return;
  mbs_loopAll(m, w, lw, 0);
  mbs_loopAddWrench(m, lw, lam, w->fext);
  w->fext_on = 1;
}

// the wrench of loop k (its equations from i0 on) in the ground frame into out (6)
void mbs_loopWrenchOne(const mbsModel *m, const mbsWork *w, int k, int i0, mbsReal *out) {
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
