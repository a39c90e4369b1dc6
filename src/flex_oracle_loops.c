/// \file flex_oracle_loops.c
/// Closed loops through flexible bodies in the dense oracle (issue 34; docs/flexible.md 15): the
/// cut joint's frames sit on a body frame (rigid or a flexible body's floating frame) or on the
/// frame of a named node of a flexible body (docs/flexible.md 5.5), each a rigid frame with its
/// own Jacobians into y = [v; etad], so the closure equations of docs/loops.md 2 apply to it
/// unchanged (mbsu_loopClosure). The closure Jacobian G (n x N) has the node's modal translation
/// and rotation shapes in its eta columns; the KKT system
///
///     M ydd - G^T lam = f,     G ydd = kappa' - sum_sides D^T abar
///
/// is solved in the range space as the rigid baseline does (docs/loops.md 3): ydd0 = M^-1 f,
/// A = G M^-1 G^T, lam the minimum-norm solution of the Jacobi-scaled pivoted Cholesky of A
/// (redundant closure equations, docs/loops.md 4: mbs_loopFactorA, mbs_loopMinNorm), ydd = ydd0 +
/// M^-1 G^T lam. Dense: O(N^3) for the factor, O(n N^2) for M^-1 G^T.

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "flex_private.h"
#include "loops_private.h"
#include "mbspar/mbs_dynamics.h"
#include "mbspar/mbs_joint.h"

struct mbsFoLoops {
  int n, N;
  struct mbsLoopWork *lw;
  mbsReal *G, *Y;        ///< (n x N) closure Jacobian and rows of M^-1 G^T
  mbsReal *rhs, *c, *cd; ///< (n) kappa' - D^T abar, closure error and rate
  mbsReal *Js;           ///< (2 x 6 x N) the sides' Jacobians [Jw; Jv] (world)
  mbsReal *y0;           ///< (N) ydd0
  mbsReal resid;         ///< max |G ydd - rhs| of the last solve
};

void mbs_foLoopsFree(struct mbsFoLoops **plp) {
  if (!plp || !*plp) return;
  struct mbsFoLoops *lp = *plp;
  mbs_loopWorkDestroy(&lp->lw);
  free(lp->G), free(lp->Y), free(lp->rhs), free(lp->c), free(lp->cd), free(lp->Js), free(lp->y0);
  free(lp);
  *plp = NULL;
}

static mbsErr mbs_foLoopsCreate(mbsFlexOracle *o) {
  if (o->lp) return MBS_OK;
  const mbsModel *m = o->m;
  struct mbsFoLoops *lp = calloc(1, sizeof *lp);
  if (!lp) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  o->lp = lp;
  size_t n = (size_t)m->nlam_loop, N = (size_t)o->N;
  lp->n = (int)n, lp->N = (int)N;
  MBS_CALL(mbs_loopWorkCreate(m, &lp->lw));
  lp->G = calloc(n * N + 1, sizeof(mbsReal));
  lp->Y = calloc(n * N + 1, sizeof(mbsReal));
  lp->rhs = calloc(n + 1, sizeof(mbsReal));
  lp->c = calloc(n + 1, sizeof(mbsReal));
  lp->cd = calloc(n + 1, sizeof(mbsReal));
  lp->Js = calloc(12 * N + 1, sizeof(mbsReal));
  lp->y0 = calloc(N + 1, sizeof(mbsReal));
  if (!lp->G || !lp->Y || !lp->rhs || !lp->c || !lp->cd || !lp->Js || !lp->y0)
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (flexible oracle's loops)");
  return MBS_OK;
}

// one side of a cut joint after the kinematics: the frame it sits on (body b's, or node nd of
// flexible body b) with its pose, twist, bias accelerations and Jacobians (into J, 6 x N); the
// cut-joint frame F moved into that frame's coordinates (Fo)
typedef struct {
  mbsReal R[9], p[3], om[3], vo[3], al[3], ao[3], v[6], pb[3], Rb[9];
} mbsFoSide;

static void mbs_foSide(mbsFlexOracle *o, int k, int side, const mbsReal *y, const mbsReal *eta,
                       const mbsReal *F, mbsFoSide *s, mbsReal *Fo, mbsReal *J) {
  const mbsModel *m = o->m;
  int N = o->N, b = m->loop_body[2 * k + side];
  int nd = mbs_flexSetLoopNodeOf(m->flex, k, side), fk = b >= 0 ? o->flexof[b] : -1;
  memcpy(Fo, F, 12 * sizeof(mbsReal));
  memcpy(s->Rb, o->Rw + 9 * b, sizeof s->Rb);
  memcpy(s->pb, o->pw + 3 * b, sizeof s->pb);
  if (nd >= 0 && fk >= 0) {
    const mbsFlexBody *fb = o->f[fk].fb;
    const mbsFlexModal *md = &fb->modal;
    mbsReal x[3];
    int fe = mbs_foNodeAt(fb, nd, x);
    const mbsReal *Gn = o->f[fk].Gnode ? o->f[fk].Gnode + (size_t)nd * md->m * md->m : NULL;
    mbs_foNodeFrame(o, b, fe, x, Gn, y, eta, s->R, s->p, s->om, s->vo, s->al, s->ao);
    for (int i = 0; i < 3; i++) Fo[i] -= x[i]; // the frame's origin is measured from the node
    memcpy(J, o->Jwn, 3 * sizeof(mbsReal) * (size_t)N);
    memcpy(J + 3 * (size_t)N, o->Jvn, 3 * sizeof(mbsReal) * (size_t)N);
  } else {
    memcpy(s->R, o->Rw + 9 * b, sizeof s->R);
    memcpy(s->p, o->pw + 3 * b, sizeof s->p);
    memcpy(s->om, o->om + 3 * b, sizeof s->om);
    memcpy(s->vo, o->vo + 3 * b, sizeof s->vo);
    memcpy(s->al, o->al + 3 * b, sizeof s->al);
    memcpy(s->ao, o->ao + 3 * b, sizeof s->ao);
    memcpy(J, o->Jw + (size_t)3 * b * N, 3 * sizeof(mbsReal) * (size_t)N);
    memcpy(J + 3 * (size_t)N, o->Jv + (size_t)3 * b * N, 3 * sizeof(mbsReal) * (size_t)N);
  }
  // the body-coordinate spatial velocity [R^T om; R^T vo] mbsu_loopClosure takes
  for (int i = 0; i < 3; i++) {
    s->v[i] = s->R[i] * s->om[0] + s->R[3 + i] * s->om[1] + s->R[6 + i] * s->om[2];
    s->v[3 + i] = s->R[i] * s->vo[0] + s->R[3 + i] * s->vo[1] + s->R[6 + i] * s->vo[2];
  }
}

// G, rhs = kappa' - sum D^T abar, c, cdot, and the directions at the bodies' origins (lw->D, the
// scale of the zero-row test) at the current kinematics
static void mbs_foLoopRows(mbsFlexOracle *o, const mbsReal *y, const mbsReal *eta) {
  const mbsModel *m = o->m;
  struct mbsFoLoops *lp = o->lp;
  int N = o->N;
  for (int k = 0, i0 = 0; k < m->nloop; k++) {
    int nk = m->loop_lamnum[k];
    mbsFoSide S[2];
    mbsLoopSide ls[2] = {{NULL, NULL, NULL}, {NULL, NULL, NULL}};
    mbsReal Fo[24], D[2][36], kap[6];
    for (int side = 0; side < 2; side++) {
      const mbsReal *F = m->loop_frame + 24 * k + 12 * side;
      if (m->loop_body[2 * k + side] < 0) {
        memcpy(Fo + 12 * side, F, 12 * sizeof(mbsReal));
        continue;
      }
      mbs_foSide(o, k, side, y, eta, F, S + side, Fo + 12 * side, lp->Js + (size_t)6 * side * N);
      ls[side].R = S[side].R, ls[side].x = S[side].p, ls[side].v = S[side].v;
    }
    mbsu_loopClosure(m->loop_type[k], Fo, Fo + 12, ls, ls + 1, D[0], D[1], lp->c + i0, lp->cd + i0,
                     kap);
    mbsReal al = m->opt.baumgarte[0], be = m->opt.baumgarte[1];
    for (int r = 0; r < nk; r++) {
      int i = i0 + r;
      mbsReal *Gi = lp->G + (size_t)i * N;
      memset(Gi, 0, sizeof(mbsReal) * (size_t)N);
      lp->rhs[i] = kap[r] - 2 * al * lp->cd[i] - be * be * lp->c[i];
      for (int side = 0; side < 2; side++) {
        mbsReal *Db = lp->lw->D + 12 * i + 6 * side;
        const mbsReal *Ds = D[side] + 6 * r;
        if (m->loop_body[2 * k + side] < 0) {
          memcpy(Db, Ds, 6 * sizeof(mbsReal));
          continue;
        }
        const mbsFoSide *s = S + side;
        mbsReal dm[3], df[3], t[3], r3[3], ab[3];
        mbs_foMat3Vec(s->R, Ds, dm); // the world moment and force of the row
        mbs_foMat3Vec(s->R, Ds + 3, df);
        const mbsReal *J = lp->Js + (size_t)6 * side * N;
        for (int c = 0; c < N; c++)
          Gi[c] += dm[0] * J[c] + dm[1] * J[N + c] + dm[2] * J[2 * N + c] + df[0] * J[3 * N + c] +
                   df[1] * J[4 * N + c] + df[2] * J[5 * N + c];
        // abar = [alpha0; a_o0 - om x vo] (the derivative of the body-coordinate velocity)
        mbs_foCross(s->om, s->vo, t);
        for (int j = 0; j < 3; j++) ab[j] = s->ao[j] - t[j];
        lp->rhs[i] -= dm[0] * s->al[0] + dm[1] * s->al[1] + dm[2] * s->al[2] + df[0] * ab[0] +
                      df[1] * ab[1] + df[2] * ab[2];
        // at the body's origin, in its coordinates (a node side moved from the node)
        for (int j = 0; j < 3; j++) r3[j] = s->p[j] - s->pb[j];
        mbs_foCross(r3, df, t);
        for (int j = 0; j < 3; j++) t[j] += dm[j];
        for (int j = 0; j < 3; j++) {
          Db[j] = s->Rb[j] * t[0] + s->Rb[3 + j] * t[1] + s->Rb[6 + j] * t[2];
          Db[3 + j] = s->Rb[j] * df[0] + s->Rb[3 + j] * df[1] + s->Rb[6 + j] * df[2];
        }
      }
    }
    i0 += nk;
  }
}

// M (factored in place), G, rhs, Y = rows of M^-1 G^T and the factored A = G M^-1 G^T at
// (q, y, eta); M and f left in *pM, *pf
static mbsErr mbs_foLoopFactor(mbsFlexOracle *o, const mbsReal *q, const mbsReal *y,
                               const mbsReal *eta, mbsReal **pM, mbsReal **pf) {
  MBS_CALL(mbs_foLoopsCreate(o));
  struct mbsFoLoops *lp = o->lp;
  struct mbsLoopWork *lw = lp->lw;
  int N = o->N, n = lp->n;
  mbsReal *M, *f;
  MBS_CALL(mbs_flexOracleSystem(o, q, y, eta, &M, &f));
  mbs_foLoopRows(o, y, eta);
  if (mbs_faChol(N, M))
    return mbs_errSet(MBS_ERR_NUMERIC, "flexible oracle: the mass matrix is not positive definite");
  for (int i = 0; i < n; i++) {
    memcpy(lp->Y + (size_t)i * N, lp->G + (size_t)i * N, sizeof(mbsReal) * (size_t)N);
    mbs_faCholSolve(N, M, lp->Y + (size_t)i * N);
  }
  for (int i = 0; i < n; i++) {
    const mbsReal *Gi = lp->G + (size_t)i * N;
    for (int j = 0; j < n; j++) {
      const mbsReal *Yj = lp->Y + (size_t)j * N;
      mbsReal a = 0;
      for (int c = 0; c < N; c++) a += Gi[c] * Yj[c];
      lw->A[(size_t)i * n + j] = a;
    }
  }
  mbs_loopFactorA(o->m, lw);
  *pM = M, *pf = f;
  return MBS_OK;
}

// d := d - M^-1 G^T A^+ r (the minimum-kinetic-energy correction removing r = G d)
static void mbs_foLoopCorrect(mbsFlexOracle *o, const mbsReal *r, mbsReal *d) {
  struct mbsFoLoops *lp = o->lp;
  int N = o->N;
  mbs_loopMinNorm(lp->lw, r, lp->lw->nu);
  for (int j = 0; j < lp->n; j++) {
    const mbsReal *Yj = lp->Y + (size_t)j * N;
    for (int c = 0; c < N; c++) d[c] -= Yj[c] * lp->lw->nu[j];
  }
}

mbsErr mbs_flexOracleLoopProject(mbsFlexOracle *o, mbsReal *q, mbsReal *eta, mbsReal *y,
                                 mbsReal tol, int maxit, mbsFlexLoopProj *info) {
  const mbsModel *m = o->m;
  int N = o->N, nv = m->nv, n = m->nlam_loop;
  mbsReal *M, *f;
  memset(info, 0, sizeof *info);
  MBS_CALL(mbs_foLoopsCreate(o));
  struct mbsFoLoops *lp = o->lp;
  mbsReal *d = lp->y0, *qn = lp->lw->vq; // scratch: N, and nq (room for nv + 7 nbody)
  for (int it = 0;; it++) {
    MBS_CALL(mbs_foLoopFactor(o, q, y, eta, &M, &f));
    mbsReal cmax = 0;
    for (int i = 0; i < n; i++) cmax = fmax(cmax, fabs(lp->c[i]));
    if (it == 0) info->c_before = cmax;
    info->c_after = cmax;
    if (cmax <= tol || it >= maxit) break;
    memset(d, 0, sizeof(mbsReal) * (size_t)N);
    mbs_foLoopCorrect(o, lp->c, d); // d = -M^-1 G^T A^+ c
    mbs_integratePos(m, q, d, 1.0, qn);
    memcpy(q, qn, sizeof(mbsReal) * (size_t)m->nq);
    for (int i = nv; i < N; i++) eta[i - nv] += d[i];
    info->iterations = it + 1;
  }
  if (maxit <= 0) return MBS_OK; // measured only (integrator.projection = false)
  // the rates at the final positions (M, G, Y of the last factorization): the H-orthogonal
  // projection onto G y = 0
  for (int i = 0; i < n; i++) {
    const mbsReal *Gi = lp->G + (size_t)i * N;
    mbsReal r = 0;
    for (int c = 0; c < N; c++) r += Gi[c] * y[c];
    lp->lw->rhs[i] = r;
    info->cdot_before = fmax(info->cdot_before, fabs(r));
  }
  mbs_foLoopCorrect(o, lp->lw->rhs, y);
  (void)f;
  return MBS_OK;
}

mbsErr mbs_foLoopAccel(mbsFlexOracle *o, const mbsReal *q, const mbsReal *y, const mbsReal *eta,
                       mbsReal *ydd) {
  mbsReal *M, *f;
  MBS_CALL(mbs_foLoopFactor(o, q, y, eta, &M, &f));
  struct mbsFoLoops *lp = o->lp;
  struct mbsLoopWork *lw = lp->lw;
  int N = o->N, n = lp->n;
  memcpy(lp->y0, f, sizeof(mbsReal) * (size_t)N);
  mbs_faCholSolve(N, M, lp->y0);
  for (int i = 0; i < n; i++) {
    const mbsReal *Gi = lp->G + (size_t)i * N;
    mbsReal b = lp->rhs[i];
    for (int c = 0; c < N; c++) b -= Gi[c] * lp->y0[c];
    lw->rhs[i] = b;
  }
  mbs_loopMinNorm(lw, lw->rhs, lw->lam);
  memcpy(ydd, lp->y0, sizeof(mbsReal) * (size_t)N);
  for (int j = 0; j < n; j++) {
    const mbsReal *Yj = lp->Y + (size_t)j * N;
    for (int c = 0; c < N; c++) ydd[c] += Yj[c] * lw->lam[j];
  }
  lp->resid = 0;
  for (int i = 0; i < n; i++) {
    const mbsReal *Gi = lp->G + (size_t)i * N;
    mbsReal r = -lp->rhs[i];
    for (int c = 0; c < N; c++) r += Gi[c] * ydd[c];
    lp->resid = fmax(lp->resid, fabs(r));
  }
  return MBS_OK;
}

mbsErr mbs_flexOracleLoopInfo(const mbsFlexOracle *o, mbsFlexLoopInfo *info) {
  const struct mbsFoLoops *lp = o->lp;
  if (!lp) return mbs_errSet(MBS_ERR_INTERNAL, "flexible oracle: no loop solve yet");
  info->n = lp->n;
  info->lam = lp->lw->lam;
  info->c = lp->c;
  info->cdot = lp->cd;
  info->G = lp->G;
  info->rank = lp->lw->rank;
  info->min_pivot = lp->lw->min_pivot;
  info->resid = lp->resid;
  return MBS_OK;
}

mbsErr mbs_flexLoopRankQ0(const struct mbsModel *m, int *rank, int *neq, mbsReal *min_pivot) {
  *rank = *neq = 0, *min_pivot = 0;
  if (!m->flex || !m->flex->n || !m->nloop) return MBS_OK;
  mbsFlexOracle *o = NULL;
  mbsErr e = mbs_flexOracleCreate(m, &o);
  int N = o ? mbs_flexOracleSize(o) : 0;
  mbsReal *y = e ? NULL : calloc(3 * (size_t)N + 1, sizeof(mbsReal)); // y, eta = 0, ydd
  if (!e && !y) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  if (!e) memcpy(y, m->qd0, sizeof(mbsReal) * (size_t)m->nv);
  if (!e) e = mbs_flexOracleAccel(o, m->q0, y, y + N, y + 2 * (size_t)N);
  mbsFlexLoopInfo li = {0};
  if (!e) e = mbs_flexOracleLoopInfo(o, &li);
  if (!e) *rank = li.rank, *neq = li.n, *min_pivot = li.min_pivot;
  free(y);
  mbs_flexOracleDestroy(&o);
  return e;
}
