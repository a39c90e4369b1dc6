/// \file flex_aba.c
/// The recursive O(n) algorithm of a tree of rigid and flexible bodies (issue 34;
/// docs/flexible.md 10): an articulated-body algorithm whose body quantities are
/// (6 + m) x (6 + m), the modal coordinates of a flexible body condensed into the 6 x 6
/// articulated inertia that its parent sees. The same physics as the dense oracle
/// (src/flex_oracle.c): the body's inertia and bias forces are the same sums over the beam's
/// quadrature points (src/flex_private.h), written in the body's own velocities
/// z = [omega; v_o; etad] (world-aligned, at the body origin) instead of the whole y.

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_flex.h"
#include "mbspar/mbs_joint.h"
#include "mbspar/mbs_model.h"
#include "flex_flops.h"
#include "flex_private.h"

void mbs_flexAbaDestroy(mbsFlexAba **pa) {
  if (!pa || !*pa) return;
  mbsFlexAba *a = *pa;
  for (int k = 0; a->f && k < a->nf; k++) mbs_foBodyFree(a->f + k);
  free(a->f), free(a->flexof), free(a->nodefe), free(a->nodex), free(a->nodeG), free(a->nz);
  free(a->col), free(a->oq), free(a->ov), free(a->oP), free(a->Rw), free(a->pw), free(a->om);
  free(a->vo), free(a->IA), free(a->pA), free(a->U), free(a->Dinv), free(a->u), free(a->P);
  free(a->c), free(a->S), free(a->zd), free(a->wk), free(a->Ia), free(a->pa), free(a->drv);
  free(a->acD);
  free(a);
  *pa = NULL;
}

mbsErr mbs_flexAbaCreate(const mbsModel *m, mbsFlexAba **pa) {
  *pa = NULL;
  const mbsFlexSet *set = m->flex;
  mbsFlexAba *a = calloc(1, sizeof *a);
  if (!a) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  *pa = a;
  a->m = m;
  a->nf = set ? set->n : 0;
  a->N = m->nv;
  size_t nb = (size_t)m->nbody + 1;
  a->flexof = malloc(sizeof(int) * nb), a->nodefe = malloc(sizeof(int) * nb);
  a->nodex = calloc(3 * nb, sizeof(mbsReal)), a->nodeG = calloc(nb, sizeof *a->nodeG);
  a->nz = malloc(sizeof(int) * nb), a->col = malloc(sizeof(int) * nb);
  a->oq = malloc(sizeof(size_t) * nb), a->ov = malloc(sizeof(size_t) * nb);
  a->oP = malloc(sizeof(size_t) * nb);
  a->f = calloc((size_t)a->nf + 1, sizeof *a->f);
  if (!a->flexof || !a->nodefe || !a->nodex || !a->nodeG || !a->nz || !a->col || !a->oq || !a->ov ||
      !a->oP || !a->f)
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  for (int b = 0; b < m->nbody; b++) a->flexof[b] = a->nodefe[b] = a->col[b] = -1;
  for (int k = 0; k < a->nf; k++) {
    const mbsFlexBody *fb = set->b + k;
    if (fb->body < 0 || fb->body >= m->nbody)
      return mbs_errSet(MBS_ERR_UNSUPPORTED, "flexible ABA: needs the whole model");
    MBS_CALL(mbs_foPoints(fb, a->f + k));
    a->f[k].col = a->col[fb->body] = a->N;
    a->N += fb->modal.m;
    a->flexof[fb->body] = k;
  }
  for (int t = 0; set && t < set->natt; t++) {
    int c = set->att_child[t], p = c >= 0 && c < m->nbody ? m->body_parent[c] : -1;
    int k = p >= 0 ? a->flexof[p] : -1, nd = set->att_node[t];
    if (k < 0 || nd < 0 || nd >= set->b[k].nnodes)
      return mbs_errSet(MBS_ERR_UNSUPPORTED, "flexible ABA: needs the whole model");
    const mbsFlexModal *md = &set->b[k].modal;
    a->nodefe[c] = mbs_foNodeAt(set->b + k, nd, a->nodex + 3 * c);
    if (a->f[k].Gnode) a->nodeG[c] = a->f[k].Gnode + (size_t)nd * md->m * md->m;
  }
  size_t sq = 0, sv = 0, sp = 0;
  int nzmax = 6;
  for (int b = 0; b < m->nbody; b++) {
    int k = a->flexof[b], p = m->body_parent[b];
    a->nz[b] = 6 + (k < 0 ? 0 : set->b[k].modal.m);
    if (a->nz[b] > nzmax) nzmax = a->nz[b];
    a->oq[b] = sq, a->ov[b] = sv, a->oP[b] = sp;
    sq += (size_t)a->nz[b] * a->nz[b], sv += (size_t)a->nz[b];
    sp += p < 0 ? 0 : (size_t)6 * a->nz[p];
  }
  a->Rw = malloc(sizeof(mbsReal) * 9 * nb);
  mbsReal **v3[] = {&a->pw, &a->om, &a->vo};
  for (int k = 0; k < 3; k++) *v3[k] = malloc(sizeof(mbsReal) * 3 * nb);
  a->IA = malloc(sizeof(mbsReal) * (sq + 1)), a->U = malloc(sizeof(mbsReal) * (sq + 1));
  a->Dinv = malloc(sizeof(mbsReal) * (sq + 1));
  a->pA = malloc(sizeof(mbsReal) * (sv + 1)), a->u = malloc(sizeof(mbsReal) * (sv + 1));
  a->zd = malloc(sizeof(mbsReal) * (sv + 1));
  a->P = malloc(sizeof(mbsReal) * (sp + 1));
  a->c = malloc(sizeof(mbsReal) * 6 * nb), a->S = malloc(sizeof(mbsReal) * 36 * nb);
  a->Ia = malloc(sizeof(mbsReal) * 36 * nb), a->pa = malloc(sizeof(mbsReal) * 6 * nb);
  a->wk = malloc(sizeof(mbsReal) * (size_t)(8 * nzmax * nzmax + 64));
  if (!a->Rw || !a->pw || !a->om || !a->vo || !a->IA || !a->U || !a->Dinv || !a->pA || !a->u ||
      !a->zd || !a->P || !a->c || !a->S || !a->wk || !a->Ia || !a->pa)
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (flexible ABA of %d bodies)", m->nbody);
  return MBS_OK;
}

int mbs_flexAbaSize(const mbsFlexAba *a) {
  return a->N;
}

// a point of mass dm moving with the local Jacobian J (3 x n: the world velocity of the point
// is J z) and local bias acceleration kap (its acceleration at zdot = 0): M += dm J^T J,
// h += dm J^T (kap - g)
static void mbs_faPoint(int n, mbsReal dm, const mbsReal *J, const mbsReal *kap, const mbsReal *g,
                        mbsReal *M, mbsReal *h) {
  mbsReal ag[3] = {kap[0] - g[0], kap[1] - g[1], kap[2] - g[2]};
  for (int r = 0; r < n; r++) {
    mbsReal j0 = J[r], j1 = J[n + r], j2 = J[2 * n + r];
    h[r] += dm * (j0 * ag[0] + j1 * ag[1] + j2 * ag[2]);
    mbsReal *Mr = M + (size_t)r * n;
    for (int c = 0; c < n; c++) Mr[c] += dm * (j0 * J[c] + j1 * J[n + c] + j2 * J[2 * n + c]);
  }
}

// J = [-[rs]x, I, 0...] (3 x n)
static void mbs_faPointJac(int n, const mbsReal *rs, mbsReal *J) {
  memset(J, 0, sizeof(mbsReal) * 3 * (size_t)n);
  J[1] = rs[2], J[2] = -rs[1], J[n + 0] = -rs[2], J[n + 2] = rs[0];
  J[2 * n + 0] = rs[1], J[2 * n + 1] = -rs[0];
  J[3] = J[n + 4] = J[2 * n + 5] = 1;
}

// the body's own mass matrix M (nz x nz) and bias force h (nz) in z = [omega; v_o; etad]:
// docs/flexible.md 5.2 with the terms of the parent's motion left to the recursion
void mbs_faBody(mbsFlexAba *a, int b, const mbsReal *y, const mbsReal *eta, mbsReal *M,
                mbsReal *h) {
  const mbsModel *m = a->m;
  int n = a->nz[b], k = a->flexof[b];
  const mbsReal *Rw = a->Rw + 9 * b, *om = a->om + 3 * b, *g = m->gravity;
  mbsReal *J = a->wk;
  memset(M, 0, sizeof(mbsReal) * (size_t)n * n);
  memset(h, 0, sizeof(mbsReal) * (size_t)n);
  if (k < 0) { // rigid: the com's translation and the rotation about it
    mbsReal rc[3], c1[3], kap[3], Ic[9], T[9], Iw[9], Io[3];
    mbs_foMat3Vec(Rw, m->body_com + 3 * b, rc);
    mbs_faPointJac(6, rc, J);
    mbs_foCross(om, rc, c1);
    mbs_foCross(om, c1, kap);
    mbs_faPoint(6, m->body_mass[b], J, kap, g, M, h);
    const mbsReal *in = m->body_inertia + 6 * b;
    Ic[0] = in[0], Ic[4] = in[1], Ic[8] = in[2];
    Ic[1] = Ic[3] = in[3], Ic[2] = Ic[6] = in[4], Ic[5] = Ic[7] = in[5];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++)
        T[3 * i + j] =
            Ic[3 * i] * Rw[3 * j] + Ic[3 * i + 1] * Rw[3 * j + 1] + Ic[3 * i + 2] * Rw[3 * j + 2];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        Iw[3 * i + j] = Rw[3 * i] * T[j] + Rw[3 * i + 1] * T[3 + j] + Rw[3 * i + 2] * T[6 + j];
        M[i * 6 + j] += Iw[3 * i + j];
      }
    mbs_foMat3Vec(Iw, om, Io);
    mbs_foCross(om, Io, c1);
    for (int i = 0; i < 3; i++) h[i] += c1[i];
    MBS_FLOPS(MBS_FL_FA_BODY_RIGID);
    return;
  }
  const mbsFoBody *fo = a->f + k;
  const mbsFlexModal *md = &fo->fb->modal;
  int mm = md->m, col = fo->col;
  const mbsReal *et = eta + (col - m->nv), *etd = y + col;
  mbsReal ex[3] = {Rw[0], Rw[3], Rw[6]};
  MBS_FLOPS(mbs_flopFaBodyFlex(mm, fo->np, fo->G != NULL, 0)); // + the spin rows' 3 n below
  mbsReal *js = J + 3 * n;
  for (int p = 0; p < fo->np; p++) {
    const mbsReal *T = fo->phit + (size_t)3 * p * mm;
    mbsReal s[3] = {fo->x[3 * p], fo->x[3 * p + 1], fo->x[3 * p + 2]}, ud[3] = {0, 0, 0};
    mbsReal rs[3], uw[3], kap[3], c1[3], c2[3], u2 = 0, u2d = 0, u2b = 0;
    for (int c = 0; c < mm; c++)
      for (int i = 0; i < 3; i++) s[i] += T[i * mm + c] * et[c], ud[i] += T[i * mm + c] * etd[c];
    const mbsReal *Gp = fo->G ? fo->G + (size_t)p * mm * mm : NULL;
    if (Gp) mbs_foShorten(mm, Gp, et, etd, fo->ge, &u2, &u2d, &u2b); // 5.3
    s[0] += u2, ud[0] += u2d;
    mbs_foMat3Vec(Rw, s, rs);
    mbs_foMat3Vec(Rw, ud, uw);
    mbs_faPointJac(n, rs, J);
    for (int c = 0; c < mm; c++) { // R (Phi_t - e_x (G eta)^T) in the eta columns
      mbsReal t[3] = {T[c] - (Gp ? fo->ge[c] : 0), T[mm + c], T[2 * mm + c]}, tw[3];
      mbs_foMat3Vec(Rw, t, tw);
      for (int i = 0; i < 3; i++) J[i * n + 6 + c] = tw[i];
    }
    // kap = om x (om x rs) + 2 om x (R s_dot) + R e_x u2b
    mbs_foCross(om, rs, c1);
    mbs_foCross(om, c1, kap);
    mbs_foCross(om, uw, c2);
    for (int i = 0; i < 3; i++) kap[i] += 2 * c2[i] + u2b * ex[i];
    mbs_faPoint(n, fo->dm[p], J, kap, g, M, h);
    mbs_faSpin(fo, p, Rw, om, etd, n, js, M, h);
  }
  for (int i = 0; i < mm; i++) {
    mbsReal fe = 0;
    for (int j = 0; j < mm; j++)
      fe += md->K[(size_t)i * mm + j] * et[j] + fo->D[(size_t)i * mm + j] * etd[j];
    h[6 + i] += fe;
  }
}

// The node frame a child of flexible body p hangs from (docs/flexible.md 5.5): world pose Rn,
// pn, twist omn, von, the map A (6 x nz_p: the node's twist is A z_p) and the bias cn (6: the
// node's acceleration at zdot_p = 0)
void mbs_faNode(mbsFlexAba *a, int fe, const mbsReal *xn, const mbsReal *Gn, int p,
                const mbsReal *y, const mbsReal *eta, mbsReal *Rn, mbsReal *pn, mbsReal *omn,
                mbsReal *von, mbsReal *A, mbsReal *cn) {
  const mbsModel *m = a->m;
  const mbsFoBody *fo = a->f + a->flexof[p];
  const mbsFlexModal *md = &fo->fb->modal;
  int mm = md->m, col = fo->col, np = a->nz[p];
  const mbsReal *et = eta + (col - m->nv), *etd = y + col;
  const mbsReal *Ph = md->Phi + (size_t)6 * fe * mm;
  const mbsReal *Rp = a->Rw + 9 * p, *omp = a->om + 3 * p;
  mbsReal s[3] = {xn[0], xn[1], xn[2]}, ud[3] = {0, 0, 0}, th[3] = {0, 0, 0}, thd[3] = {0, 0, 0};
  for (int c = 0; c < mm; c++)
    for (int i = 0; i < 3; i++) {
      s[i] += Ph[i * mm + c] * et[c], ud[i] += Ph[i * mm + c] * etd[c];
      th[i] += Ph[(3 + i) * mm + c] * et[c], thd[i] += Ph[(3 + i) * mm + c] * etd[c];
    }
  mbsReal u2 = 0, u2d = 0, u2b = 0;
  if (Gn) mbs_foShorten(mm, Gn, et, etd, fo->ge, &u2, &u2d, &u2b);
  s[0] += u2, ud[0] += u2d;
  mbsReal E[9], ca, cb, da, db;
  mbs_foRotvec(th, E, &ca, &cb, &da, &db);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      Rn[3 * i + j] = Rp[3 * i] * E[j] + Rp[3 * i + 1] * E[3 + j] + Rp[3 * i + 2] * E[6 + j];
  mbsReal w[3], wb[3], d[3], uw[3], ww[3], c1[3], c2[3], c3[3];
  mbs_foTangent(th, ca, cb, thd, w);
  mbsReal tt = th[0] * thd[0] + th[1] * thd[1] + th[2] * thd[2];
  mbs_foCross(th, thd, c1);
  mbs_foCross(th, c1, c2);
  mbs_foCross(thd, c1, c3);
  for (int i = 0; i < 3; i++) wb[i] = da * tt * c1[i] + db * tt * c2[i] + cb * c3[i];
  mbs_foMat3Vec(Rp, s, d);
  mbs_foMat3Vec(Rp, ud, uw);
  mbs_foMat3Vec(Rp, w, ww);
  mbs_foMat3Vec(Rp, wb, c3);
  for (int i = 0; i < 3; i++) pn[i] = a->pw[3 * p + i] + d[i], omn[i] = omp[i] + ww[i];
  mbs_foCross(omp, d, c1);
  for (int i = 0; i < 3; i++) von[i] = a->vo[3 * p + i] + c1[i] + uw[i];
  mbs_foCross(omp, ww, c2);
  for (int i = 0; i < 3; i++) cn[i] = c2[i] + c3[i];
  mbs_foCross(omp, c1, c3);
  mbs_foCross(omp, uw, c2);
  for (int i = 0; i < 3; i++) cn[3 + i] = c3[i] + 2 * c2[i] + u2b * Rp[3 * i];
  if (!A) return;
  MBS_FLOPS(
      mbs_flopFaNode(mm, Gn != NULL, sqrt(th[0] * th[0] + th[1] * th[1] + th[2] * th[2]) < 0.1));
  // A = [[I, 0, R_p T Phi_r], [-[d]x, I, R_p (Phi_t - e_x (G eta)^T)]]
  memset(A, 0, sizeof(mbsReal) * 6 * (size_t)np);
  for (int i = 0; i < 6; i++) A[i * np + i] = 1;
  A[3 * np + 1] = d[2], A[3 * np + 2] = -d[1], A[4 * np + 0] = -d[2], A[4 * np + 2] = d[0];
  A[5 * np + 0] = d[1], A[5 * np + 1] = -d[0];
  for (int c = 0; c < mm; c++) {
    mbsReal r[3] = {Ph[3 * mm + c], Ph[4 * mm + c], Ph[5 * mm + c]}, t[3], tw[3];
    mbsReal uu[3] = {Ph[c] - (Gn ? fo->ge[c] : 0), Ph[mm + c], Ph[2 * mm + c]};
    mbs_foTangent(th, ca, cb, r, t);
    mbs_foMat3Vec(Rp, t, tw);
    mbs_foMat3Vec(Rp, uu, t);
    for (int i = 0; i < 3; i++) A[i * np + 6 + c] = tw[i], A[(3 + i) * np + 6 + c] = t[i];
  }
}

// Cholesky A = L L^T of the n x n symmetric positive definite A (lower triangle read, L
// written there); -1 if not positive definite
int mbs_faChol(int n, mbsReal *A) {
  for (int j = 0; j < n; j++) {
    mbsReal s = A[j * n + j];
    for (int k = 0; k < j; k++) s -= A[j * n + k] * A[j * n + k];
    if (!(s > 0)) return -1;
    A[j * n + j] = sqrt(s);
    for (int i = j + 1; i < n; i++) {
      mbsReal t = A[i * n + j];
      for (int k = 0; k < j; k++) t -= A[i * n + k] * A[j * n + k];
      A[i * n + j] = t / A[j * n + j];
    }
  }
  return 0;
}
// x := L^-1 x
void mbs_faLsolve(int n, const mbsReal *L, mbsReal *x) {
  for (int i = 0; i < n; i++) {
    mbsReal t = x[i];
    for (int k = 0; k < i; k++) t -= L[i * n + k] * x[k];
    x[i] = t / L[i * n + i];
  }
}
// x := L^-T x
void mbs_faLTsolve(int n, const mbsReal *L, mbsReal *x) {
  for (int i = n - 1; i >= 0; i--) {
    mbsReal t = x[i];
    for (int k = i + 1; k < n; k++) t -= L[k * n + i] * x[k];
    x[i] = t / L[i * n + i];
  }
}
// x := (L L^T)^-1 x
void mbs_faCholSolve(int n, const mbsReal *L, mbsReal *x) {
  mbs_faLsolve(n, L, x);
  mbs_faLTsolve(n, L, x);
}

// pass 1 at body b: pose, twist, the map P from the parent's z, the bias c, S in world axes
void mbs_faKin(mbsFlexAba *a, int b, const mbsReal *q, const mbsReal *y, const mbsReal *eta) {
  const mbsModel *m = a->m;
  static const mbsReal I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, z3[3] = {0, 0, 0};
  {
    int p = m->body_parent[b], nd = m->body_dofnum[b], d0 = m->body_dofadr[b];
    int npz = p < 0 ? 0 : a->nz[p];
    const mbsJointType *jt = mbs_jntType(m->body_jnttype[b]);
    mbsReal R[9], r[3], S[36], vJ[6] = {0, 0, 0, 0, 0, 0}, cJ[6] = {0, 0, 0, 0, 0, 0};
    jt->pose(m->jnt_origin + 3 * b, m->jnt_axis + 3 * b, m->jnt_axis2 + 3 * b, q + m->body_qadr[b],
             R, r, S);
    for (int k = 0; k < nd; k++)
      for (int i = 0; i < 6; i++) vJ[i] += S[6 * k + i] * y[d0 + k];
    if (jt->bias && nd) jt->bias(m->jnt_axis2 + 3 * b, S, y + d0, vJ, cJ);
    MBS_FLOPS(mbs_flopFaJoint(m, b) + mbs_flopFaKin(nd, npz, p >= 0 && a->nodefe[b] >= 0));
    mbsReal Rnb[9], pnb[3], omnb[3], vonb[3], cn[6] = {0, 0, 0, 0, 0, 0};
    const mbsReal *Rn = I3, *pn = z3, *omn = z3, *von = z3;
    mbsReal *P = a->P + a->oP[b];
    if (p >= 0 && a->nodefe[b] >= 0) {
      mbs_faNode(a, a->nodefe[b], a->nodex + 3 * b, a->nodeG[b], p, y, eta, Rnb, pnb, omnb, vonb, P,
                 cn);
      Rn = Rnb, pn = pnb, omn = omnb, von = vonb;
      for (int i = 0; i < 3; i++) r[i] -= a->nodex[3 * b + i]; // measured from the node
    } else if (p >= 0) {
      Rn = a->Rw + 9 * p, pn = a->pw + 3 * p, omn = a->om + 3 * p, von = a->vo + 3 * p;
      memset(P, 0, sizeof(mbsReal) * 6 * (size_t)npz);
      for (int i = 0; i < 6; i++) P[i * npz + i] = 1;
    }
    mbsReal *Rw = a->Rw + 9 * b, *om = a->om + 3 * b, *vo = a->vo + 3 * b, *c = a->c + 6 * b;
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++)
        Rw[3 * i + j] = Rn[3 * i] * R[j] + Rn[3 * i + 1] * R[3 + j] + Rn[3 * i + 2] * R[6 + j];
    mbsReal d[3], wrel[3], vrel[3], cw[3], cv[3], c1[3], c2[3];
    mbs_foMat3Vec(Rn, r, d);
    mbs_foMat3Vec(Rw, vJ, wrel);
    mbs_foMat3Vec(Rw, vJ + 3, vrel);
    mbs_foMat3Vec(Rw, cJ, cw);
    mbs_foMat3Vec(Rw, cJ + 3, cv);
    for (int i = 0; i < 3; i++) a->pw[3 * b + i] = pn[i] + d[i], om[i] = omn[i] + wrel[i];
    mbs_foCross(omn, d, c1);
    for (int i = 0; i < 3; i++) vo[i] = von[i] + c1[i] + vrel[i];
    // c = X c_node + the joint's velocity products; X = [[I, 0], [-[d]x, I]]
    mbs_foCross(omn, wrel, c2);
    for (int i = 0; i < 3; i++) c[i] = cn[i] + c2[i] + cw[i];
    mbs_foCross(cn, d, c2);
    for (int i = 0; i < 3; i++) c[3 + i] = cn[3 + i] + c2[i] + cv[i];
    mbs_foCross(omn, c1, c2);
    for (int i = 0; i < 3; i++) c[3 + i] += c2[i];
    mbs_foCross(omn, vrel, c1);
    mbs_foCross(om, vrel, c2);
    for (int i = 0; i < 3; i++) c[3 + i] += c1[i] + c2[i];
    for (int k = 0; k < npz; k++) { // P = X A: the v rows gain A_omega x d
      mbsReal w[3] = {P[k], P[npz + k], P[2 * npz + k]};
      mbs_foCross(w, d, c1);
      for (int i = 0; i < 3; i++) P[(3 + i) * npz + k] += c1[i];
    }
    mbsReal *Sw = a->S + 36 * b;
    for (int k = 0; k < nd; k++) {
      mbs_foMat3Vec(Rw, S + 6 * k, Sw + 6 * k);
      mbs_foMat3Vec(Rw, S + 6 * k + 3, Sw + 6 * k + 3);
    }
    for (int k = 0; a->drv && a->drv[b] && k < nd; k++) { // driven: S a_D joins the bias
      MBS_FLOPS(12);
      for (int i = 0; i < 6; i++) c[i] += Sw[6 * k + i] * a->acD[d0 + k];
    }
  }
}

// pass 1 (root to leaves): kinematics and the bodies' own M and h (the articulated quantities'
// starting values, in IA and pA); kin: the kinematics alone
static void mbs_faForward(mbsFlexAba *a, const mbsReal *q, const mbsReal *y, const mbsReal *eta,
                          int kin) {
  for (int b = 0; b < a->m->nbody; b++) {
    mbs_faKin(a, b, q, y, eta);
    if (!kin) mbs_faBody(a, b, y, eta, a->IA + a->oq[b], a->pA + a->ov[b]);
  }
}

mbsErr mbs_faCondense(mbsFlexAba *a, int b, const mbsReal *q, const mbsReal *y) {
  const mbsModel *m = a->m;
  int n = a->nz[b], nd = mbs_faNd(a, b), d0 = m->body_dofadr[b];
  int mm = n - 6, nu = nd + mm;
  const mbsReal *IA = a->IA + a->oq[b], *pA = a->pA + a->ov[b], *Sw = a->S + 36 * b;
  mbsReal *W = a->U + a->oq[b], *L = a->Dinv + a->oq[b], *v = a->u + a->ov[b];
  mbsReal *U = a->wk; // (n x nu)
  for (int r = 0; r < n; r++)
    for (int k = 0; k < nu; k++) {
      mbsReal t = 0;
      if (k < nd)
        for (int i = 0; i < 6; i++) t += IA[r * n + i] * Sw[6 * k + i];
      else
        t = IA[r * n + 6 + k - nd];
      U[r * nu + k] = t;
    }
  const mbsReal *qb = q + m->body_qadr[b];
  int scalar = mbs_jntQuatAdr(m->body_jnttype[b]) < 0;
  for (int k = 0; k < nu; k++) {
    for (int j = 0; j <= k; j++) {
      mbsReal t = 0;
      if (k < nd)
        for (int i = 0; i < 6; i++) t += Sw[6 * k + i] * U[i * nu + j];
      else
        t = U[(6 + k - nd) * nu + j];
      L[k * nu + j] = t;
    }
    mbsReal t = 0;
    if (k < nd) {
      int dd = d0 + k;
      if (!a->homog) t = m->dof_force[dd] - m->dof_damping[dd] * y[dd];
      if (!a->homog && scalar) t -= m->dof_stiffness[dd] * (qb[k] - m->dof_springref[dd]);
      for (int i = 0; i < 6; i++) t -= Sw[6 * k + i] * pA[i];
    } else {
      t = -pA[6 + k - nd];
    }
    v[k] = t; // u = Q - Sf^T pA
  }
  MBS_FLOPS(mbs_flopFaCondense(n, nd, nu, scalar));
  if (nu && mbs_faChol(nu, L))
    return mbs_errSet(MBS_ERR_NUMERIC,
                      "flexible ABA: the articulated inertia of body %d is not positive definite",
                      b);
  // W = L^-1 U6^T (nu x 6, column i stored at W + i nu), v = L^-1 u
  for (int i = 0; i < 6; i++) {
    mbsReal *Wi = W + i * nu;
    for (int k = 0; k < nu; k++) Wi[k] = U[i * nu + k];
    mbs_faLsolve(nu, L, Wi);
  }
  mbs_faLsolve(nu, L, v);
  // the parent sees Ia = IA6 - W^T W and pa = pA6 + Ia c + W^T v
  mbsReal *Ia = a->Ia + 36 * b, *pa = a->pa + 6 * b;
  const mbsReal *c = a->c + 6 * b;
  for (int i = 0; i < 6; i++)
    for (int j = 0; j <= i; j++) {
      mbsReal t = IA[i * n + j];
      for (int k = 0; k < nu; k++) t -= W[i * nu + k] * W[j * nu + k];
      Ia[i * 6 + j] = Ia[j * 6 + i] = t;
    }
  for (int i = 0; i < 6; i++) {
    mbsReal t = pA[i];
    for (int j = 0; !a->homog && j < 6; j++) t += Ia[i * 6 + j] * c[j];
    for (int k = 0; k < nu; k++) t += W[i * nu + k] * v[k];
    pa[i] = t;
  }
  return MBS_OK;
}

void mbs_faBiasUp(const mbsFlexAba *a, int b, const mbsReal *q, const mbsReal *y, const mbsReal *pA,
                  int homog, mbsReal *v, mbsReal *pa) {
  const mbsModel *m = a->m;
  int n = a->nz[b], nd = mbs_faNd(a, b), d0 = m->body_dofadr[b], nu = nd + n - 6;
  const mbsReal *Sw = a->S + 36 * b, *W = a->U + a->oq[b], *L = a->Dinv + a->oq[b];
  const mbsReal *qb = q + m->body_qadr[b], *Ia = a->Ia + 36 * b, *c = a->c + 6 * b;
  int scalar = mbs_jntQuatAdr(m->body_jnttype[b]) < 0;
  for (int k = 0; k < nu; k++) {
    mbsReal t = 0;
    if (k < nd) {
      int dd = d0 + k;
      if (!homog) t = m->dof_force[dd] - m->dof_damping[dd] * y[dd];
      if (!homog && scalar) t -= m->dof_stiffness[dd] * (qb[k] - m->dof_springref[dd]);
      for (int i = 0; i < 6; i++) t -= Sw[6 * k + i] * pA[i];
    } else {
      t = -pA[6 + k - nd];
    }
    v[k] = t;
  }
  mbs_faLsolve(nu, L, v);
  for (int i = 0; i < 6; i++) {
    mbsReal t = pA[i];
    for (int j = 0; !homog && j < 6; j++) t += Ia[i * 6 + j] * c[j];
    for (int k = 0; k < nu; k++) t += W[i * nu + k] * v[k];
    pa[i] = t;
  }
}

void mbs_faTransfer(mbsFlexAba *a, int b, int inertia, const mbsReal *pa) {
  int p = a->m->body_parent[b], np = a->nz[p];
  const mbsReal *P = a->P + a->oP[b], *Ia = a->Ia + 36 * b;
  mbsReal *IAp = a->IA + a->oq[p], *pAp = a->pA + a->ov[p], *IP = a->wk;
  if (inertia) // IP = Ia P
    for (int i = 0; i < 6; i++)
      for (int k = 0; k < np; k++) {
        mbsReal t = 0;
        for (int j = 0; j < 6; j++) t += Ia[i * 6 + j] * P[j * np + k];
        IP[i * np + k] = t;
      }
  for (int r = 0; r < np; r++) { // IA_p += P^T Ia P, pA_p += P^T pa
    mbsReal t = 0;
    for (int i = 0; i < 6; i++) t += P[i * np + r] * pa[i];
    pAp[r] += t;
    for (int k = 0; inertia && k < np; k++) {
      mbsReal s = 0;
      for (int i = 0; i < 6; i++) s += P[i * np + r] * IP[i * np + k];
      IAp[r * np + k] += s;
    }
  }
}

void mbs_faApply(const mbsFlexAba *a, int b, const mbsReal *zp, const mbsReal *c, mbsReal *ap) {
  int p = a->m->body_parent[b], np = p < 0 || !zp ? 0 : a->nz[p];
  const mbsReal *P = a->P + a->oP[b];
  for (int i = 0; i < 6; i++) {
    mbsReal s = c ? c[i] : 0;
    for (int k = 0; k < np; k++) s += P[i * np + k] * zp[k];
    ap[i] = s;
  }
}

void mbs_faDown(const mbsFlexAba *a, int b, const mbsReal *ap, const mbsReal *v, mbsReal *ud,
                mbsReal *zd) {
  int n = a->nz[b], nd = mbs_faNd(a, b), mm = n - 6, nu = nd + mm;
  const mbsReal *Sw = a->S + 36 * b, *W = a->U + a->oq[b], *L = a->Dinv + a->oq[b];
  for (int k = 0; k < nu; k++) {
    mbsReal s = v ? v[k] : 0;
    for (int i = 0; i < 6; i++) s -= W[i * nu + k] * ap[i];
    ud[k] = s;
  }
  mbs_faLTsolve(nu, L, ud);
  for (int i = 0; i < 6; i++) {
    mbsReal s = ap[i];
    for (int k = 0; k < nd; k++) s += Sw[6 * k + i] * ud[k];
    zd[i] = s;
  }
  for (int j = 0; j < mm; j++) zd[6 + j] = ud[nd + j];
}

mbsErr mbs_flexAbaAccel(mbsFlexAba *a, const mbsReal *q, const mbsReal *y, const mbsReal *eta,
                        mbsReal *ydd) {
  const mbsModel *m = a->m;
  mbs_faForward(a, q, y, eta, 0);
  // pass 2 (leaves to root): project out the joint's dofs and the modal coordinates. With
  // Sf = blkdiag(S, I_m), U = IA Sf, D = Sf^T U = L L^T (Cholesky), the parent sees the twist
  // block of IA - U D^-1 U^T = IA - W^T W with W = L^-1 U^T (the 6 twist rows of U only)
  for (int b = m->nbody - 1; b >= 0; b--) {
    MBS_CALL(mbs_faCondense(a, b, q, y));
    if (m->body_parent[b] < 0) continue;
    MBS_FLOPS(mbs_flopFaTransfer(mbs_faNd(a, b) + a->nz[b] - 6, a->nz[m->body_parent[b]]));
    mbs_faTransfer(a, b, 1, a->pa + 6 * b);
  }
  // pass 3 (root to leaves): a' = P zdot_p + c, (q'', eta'') = L^-T (v - W a'),
  // zdot = [a' + S q''; eta'']
  for (int b = 0; b < m->nbody; b++) {
    int p = m->body_parent[b];
    mbsReal ap[6], *ud = a->wk;
    MBS_FLOPS(mbs_flopFaAcc(mbs_faNd(a, b), mbs_faNd(a, b) + a->nz[b] - 6, p < 0 ? 0 : a->nz[p]));
    mbs_faApply(a, b, p < 0 ? NULL : a->zd + a->ov[p], a->c + 6 * b, ap);
    mbs_faDown(a, b, ap, a->u + a->ov[b], ud, a->zd + a->ov[b]);
    mbs_faOut(a, b, q, y, ud, ydd);
  }
  return MBS_OK;
}

mbsErr mbs_flexAbaEnergy(mbsFlexAba *a, const mbsReal *q, const mbsReal *y, const mbsReal *eta,
                         mbsReal *kin, mbsReal *pot) {
  const mbsModel *m = a->m;
  mbs_faForward(a, q, y, eta, 0);
  mbsReal T = 0, V = 0;
  for (int b = 0; b < m->nbody; b++) {
    int n = a->nz[b], k = a->flexof[b];
    const mbsReal *M = a->IA + a->oq[b], *Rw = a->Rw + 9 * b, *pw = a->pw + 3 * b;
    mbsReal *z = a->wk + 4 * (size_t)n; // after mbs_faBody's scratch
    for (int i = 0; i < 3; i++) z[i] = a->om[3 * b + i], z[3 + i] = a->vo[3 * b + i];
    for (int j = 6; j < n; j++) z[j] = y[a->col[b] + j - 6];
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) T += 0.5 * z[i] * M[(size_t)i * n + j] * z[j];
    mbs_foBodyPotential(m, b, k < 0 ? NULL : a->f + k, q, eta, Rw, pw, &V);
  }
  *kin = T, *pot = V;
  return MBS_OK;
}

mbsErr mbs_flexAbaBodyPoses(mbsFlexAba *a, const mbsReal *q, const mbsReal *y, const mbsReal *eta,
                            mbsReal *R, mbsReal *pos) {
  mbs_faForward(a, q, y, eta, 1); // the poses alone
  memcpy(R, a->Rw, sizeof(mbsReal) * 9 * (size_t)a->m->nbody);
  memcpy(pos, a->pw, sizeof(mbsReal) * 3 * (size_t)a->m->nbody);
  return MBS_OK;
}

mbsErr mbs_flexAbaNodePose(mbsFlexAba *a, const mbsReal *q, const mbsReal *y, const mbsReal *eta,
                           int k, int j, mbsReal *pos, mbsReal *R) {
  const mbsFlexBody *fb = a->f[k].fb;
  const mbsFlexModal *md = &fb->modal;
  mbsReal x[3], om[3], v[3], cn[6];
  int fe = mbs_foNodeAt(fb, j, x);
  const mbsReal *Gn = a->f[k].Gnode ? a->f[k].Gnode + (size_t)j * md->m * md->m : NULL;
  mbs_faForward(a, q, y, eta, 1); // the poses alone
  mbs_faNode(a, fe, x, Gn, fb->body, y, eta, R, pos, om, v, NULL, cn);
  return MBS_OK;
}
