/// \file flex_oracle.c
/// The serial oracle of flexible bodies (issue 34 part 2a; docs/flexible.md 5): the equations of
/// motion of a tree of rigid and flexible bodies in the generalized coordinates [q; eta] (the
/// joints' rates, then each flexible body's modal coordinates), assembled from every body's
/// Jacobians: M = sum J^T M_body J, the velocity-product and gravity terms from the bias
/// accelerations (the accelerations at zero generalized acceleration), solved by Cholesky. A
/// flexible body's mass is its finite-element beam's, integrated at 4 Gauss points per element
/// with the elements' shape functions (exact for the consistent mass matrix), so the inertia
/// shape invariants are the sums over those points, formed once in mbs_flexOracleCreate. A
/// reference, not a fast path: O(points N^2) per evaluation.

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_flex.h"
#include "mbspar/mbs_joint.h"
#include "mbspar/mbs_model.h"
#include "flex_private.h"

void mbs_foCross(const mbsReal *a, const mbsReal *b, mbsReal *c) {
  mbsReal x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2],
          z = a[0] * b[1] - a[1] * b[0];
  c[0] = x, c[1] = y, c[2] = z;
}
void mbs_foMat3Vec(const mbsReal *R, const mbsReal *v, mbsReal *o) {
  mbsReal x = R[0] * v[0] + R[1] * v[1] + R[2] * v[2], y = R[3] * v[0] + R[4] * v[1] + R[5] * v[2],
          z = R[6] * v[0] + R[7] * v[1] + R[8] * v[2];
  o[0] = x, o[1] = y, o[2] = z;
}

void mbs_foBodyFree(mbsFoBody *b) {
  free(b->x), free(b->dm), free(b->ax), free(b->jt), free(b->phit), free(b->phix), free(b->D),
      free(b->G), free(b->Gnode), free(b->ge);
}

void mbs_flexOracleDestroy(mbsFlexOracle **po) {
  if (!po || !*po) return;
  mbsFlexOracle *o = *po;
  for (int k = 0; o->f && k < o->nf; k++) {
    mbs_foBodyFree(o->f + k);
  }
  free(o->nodeG);
  mbs_foLoopsFree(&o->lp);
  free(o->f), free(o->flexof), free(o->nodefe), free(o->nodex), free(o->Rw), free(o->pw),
      free(o->om), free(o->vo), free(o->al);
  free(o->ao), free(o->Jw), free(o->Jv), free(o->Jg), free(o->Jwn), free(o->Jvn), free(o->M),
      free(o->f_);
  free(o);
  *po = NULL;
}

const double mbs_fo_gx[MBS_FO_GAUSS] = {0.0694318442029737, 0.3300094782075719, 0.6699905217924281,
                                        0.9305681557970263};
const double mbs_fo_gw[MBS_FO_GAUSS] = {0.1739274225687269, 0.3260725774312731, 0.3260725774312731,
                                        0.1739274225687269};

// the transverse slopes v' and w' (m each) of the modes at local coordinate xi of element e
// (the derivatives of the cubic Hermite functions; thz = v', thy = -w')
void mbs_foSlopes(const mbsFlexModal *md, int e, double xi, mbsReal *sv, mbsReal *sw) {
  int m = md->m;
  mbsReal h = md->x[e + 1] - md->x[e];
  const mbsReal *Pi = md->Phi + (size_t)6 * e * m, *Pj = md->Phi + (size_t)6 * (e + 1) * m;
  double d1 = (-6 * xi + 6 * xi * xi) / h, d2 = 1 - 4 * xi + 3 * xi * xi,
         d3 = (6 * xi - 6 * xi * xi) / h, d4 = -2 * xi + 3 * xi * xi;
  for (int c = 0; c < m; c++) {
    sv[c] = d1 * Pi[1 * m + c] + d2 * Pi[5 * m + c] + d3 * Pj[1 * m + c] + d4 * Pj[5 * m + c];
    sw[c] = d1 * Pi[2 * m + c] - d2 * Pi[4 * m + c] + d3 * Pj[2 * m + c] - d4 * Pj[4 * m + c];
  }
}

// G(x) = int_0^x (v'^T v' + w'^T w') dx (m x m) at local coordinate xi of element e, by 4-point
// Gauss on each whole element before e and on [0, xi] of e (the integrand is a polynomial of
// degree 4 in x: exact); sv, sw scratch (m each)
static void mbs_foGAt(const mbsFlexModal *md, int e, double xi, mbsReal *G, mbsReal *sv,
                      mbsReal *sw) {
  int m = md->m;
  memset(G, 0, sizeof(mbsReal) * (size_t)m * (size_t)m);
  for (int k = 0; k <= e; k++) {
    double span = k < e ? 1.0 : xi, h = md->x[k + 1] - md->x[k];
    if (span <= 0) continue;
    for (int g = 0; g < MBS_FO_GAUSS; g++) {
      double w = mbs_fo_gw[g] * span * h;
      mbs_foSlopes(md, k, mbs_fo_gx[g] * span, sv, sw);
      for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) G[(size_t)i * m + j] += w * (sv[i] * sv[j] + sw[i] * sw[j]);
    }
  }
}

// the FE node nearest to x
int mbs_foNearestFe(const mbsFlexModal *md, mbsReal x) {
  int best = 0;
  for (int i = 1; i < md->nfe; i++)
    if (fabs(md->x[i] - x) < fabs(md->x[best] - x)) best = i;
  return best;
}

// the axial shortening -eta^T G eta / 2 at a point (docs/flexible.md 5.3): u2, its rate
// u2d = -(G eta) . etad (so its Jacobian in the eta columns is -(G eta) = -ge) and its bias
// acceleration (at etadd = 0) u2b = -etad^T G etad
void mbs_foShorten(int m, const mbsReal *G, const mbsReal *et, const mbsReal *etd, mbsReal *ge,
                   mbsReal *u2, mbsReal *u2d, mbsReal *u2b) {
  mbsReal a = 0, b = 0, c = 0;
  for (int i = 0; i < m; i++) {
    mbsReal gi = 0, hi = 0;
    const mbsReal *Gi = G + (size_t)i * m;
    for (int j = 0; j < m; j++) gi += Gi[j] * et[j], hi += Gi[j] * etd[j];
    ge[i] = gi;
    a += et[i] * gi, b += etd[i] * gi, c += etd[i] * hi;
  }
  *u2 = -0.5 * a, *u2d = -b, *u2b = -c;
}

// the points of body fb: positions, masses and the shapes interpolated by the element functions
// (a lumped body: its points)
mbsErr mbs_foPoints(const mbsFlexBody *fb, mbsFoBody *b) {
  const double *gx = mbs_fo_gx, *gw = mbs_fo_gw;
  const mbsFlexBeamSpec *s = &fb->spec;
  const mbsFlexModal *md = &fb->modal;
  int lumped = md->pos != NULL;
  int ne = md->nfe - 1, m = md->m, np = lumped ? md->nfe : MBS_FO_GAUSS * ne;
  b->fb = fb, b->np = np;
  b->nax = lumped ? (md->pJ ? 3 : 0) : 1;
  size_t na = (size_t)np * (size_t)b->nax;
  b->x = malloc(sizeof(mbsReal) * 3 * (size_t)np + 1);
  b->dm = malloc(sizeof(mbsReal) * (size_t)np + 1);
  b->ax = calloc(3 * na + 1, sizeof(mbsReal));
  b->jt = calloc(na + 1, sizeof(mbsReal));
  b->phit = calloc((size_t)np * 3 * (size_t)m + 1, sizeof(mbsReal));
  b->phix = calloc(na * (size_t)m + 1, sizeof(mbsReal));
  b->D = calloc((size_t)m * (size_t)m + 1, sizeof(mbsReal));
  if (!b->x || !b->dm || !b->ax || !b->jt || !b->phit || !b->phix || !b->D)
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (flexible oracle)");
  if (lumped) MBS_CALL(mbs_foLumped(md, b));
  if (fb->stiffening && m > 0 && !lumped) {
    b->G = malloc(sizeof(mbsReal) * (size_t)np * (size_t)m * (size_t)m);
    b->ge = malloc(sizeof(mbsReal) * 2 * (size_t)m);
    if (!b->G || !b->ge) return mbs_errSet(MBS_ERR_NOMEM, "out of memory (flexible oracle)");
    for (int e = 0; e < ne; e++)
      for (int g = 0; g < MBS_FO_GAUSS; g++)
        mbs_foGAt(md, e, gx[g], b->G + (size_t)(MBS_FO_GAUSS * e + g) * m * m, b->ge, b->ge + m);
    b->Gnode = calloc((size_t)fb->nnodes * (size_t)m * (size_t)m + 1, sizeof(mbsReal));
    if (!b->Gnode) return mbs_errSet(MBS_ERR_NOMEM, "out of memory (flexible oracle)");
    for (int j = 0; j < fb->nnodes; j++) { // at the end of the element before the node
      int fe = mbs_foNearestFe(md, s->node_x[j]);
      if (fe > 0) mbs_foGAt(md, fe - 1, 1.0, b->Gnode + (size_t)j * m * m, b->ge, b->ge + m);
    }
  }
  for (int e = 0; !lumped && e < ne; e++) {
    mbsReal x0 = md->x[e], h = md->x[e + 1] - md->x[e];
    const mbsReal *Pi = md->Phi + (size_t)6 * e * m, *Pj = md->Phi + (size_t)6 * (e + 1) * m;
    for (int g = 0; g < MBS_FO_GAUSS; g++) {
      int p = MBS_FO_GAUSS * e + g;
      double xi = gx[g], w = gw[g] * h;
      double N1 = 1 - 3 * xi * xi + 2 * xi * xi * xi, N2 = (xi - 2 * xi * xi + xi * xi * xi) * h,
             N3 = 3 * xi * xi - 2 * xi * xi * xi, N4 = (-xi * xi + xi * xi * xi) * h;
      b->x[3 * p] = x0 + xi * h, b->x[3 * p + 1] = b->x[3 * p + 2] = 0;
      b->dm[p] = md->rhoA[e] * w;
      b->jt[p] = md->rhoJ[e] * w;
      b->ax[3 * p] = 1;
      mbsReal *T = b->phit + (size_t)3 * p * m, *X = b->phix + (size_t)p * m;
      for (int c = 0; c < m; c++) {
        // rows of Phi: [u v w thx thy thz] of node i (Pi) and node i + 1 (Pj); thz = v',
        // thy = -w'
        T[c] = (1 - xi) * Pi[0 * m + c] + xi * Pj[0 * m + c];
        T[m + c] =
            N1 * Pi[1 * m + c] + N2 * Pi[5 * m + c] + N3 * Pj[1 * m + c] + N4 * Pj[5 * m + c];
        T[2 * m + c] =
            N1 * Pi[2 * m + c] - N2 * Pi[4 * m + c] + N3 * Pj[2 * m + c] - N4 * Pj[4 * m + c];
        X[c] = (1 - xi) * Pi[3 * m + c] + xi * Pj[3 * m + c];
      }
    }
  }
  // modal damping: 2 zeta omega_k on the fixed-interface modes (mass-normalised), none on the
  // constraint modes
  int nb = md->nbound;
  for (int k = 0; k < md->nmodes; k++)
    b->D[(size_t)(nb + k) * m + nb + k] = 2 * fb->damping * md->omega_fixed[k];
  return MBS_OK;
}

mbsErr mbs_flexOracleCreate(const mbsModel *m, mbsFlexOracle **po) {
  *po = NULL;
  const mbsFlexSet *set = m->flex;
  mbsFlexOracle *o = calloc(1, sizeof *o);
  if (!o) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  *po = o;
  o->m = m;
  o->nf = set ? set->n : 0;
  o->N = m->nv;
  o->flexof = malloc(sizeof(int) * (size_t)(m->nbody + 1));
  o->nodefe = malloc(sizeof(int) * (size_t)(m->nbody + 1));
  o->nodex = calloc(3 * (size_t)m->nbody + 1, sizeof(mbsReal));
  o->nodeG = calloc((size_t)m->nbody + 1, sizeof *o->nodeG);
  o->f = calloc((size_t)o->nf + 1, sizeof *o->f);
  if (!o->flexof || !o->nodefe || !o->nodex || !o->nodeG || !o->f)
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  for (int b = 0; b < m->nbody; b++) o->flexof[b] = o->nodefe[b] = -1;
  for (int k = 0; k < o->nf; k++) {
    const mbsFlexBody *fb = set->b + k;
    if (fb->body < 0 || fb->body >= m->nbody)
      return mbs_errSet(MBS_ERR_UNSUPPORTED, "flexible oracle: needs the whole model");
    MBS_CALL(mbs_foPoints(fb, o->f + k));
    o->f[k].col = o->N;
    o->N += fb->modal.m;
    o->flexof[fb->body] = k;
  }
  // children on nodes: the FE node each hangs from
  for (int a = 0; set && a < set->natt; a++) {
    int c = set->att_child[a], p = c >= 0 && c < m->nbody ? m->body_parent[c] : -1;
    int k = p >= 0 ? o->flexof[p] : -1, nd = set->att_node[a];
    if (k < 0 || nd < 0 || nd >= set->b[k].nnodes)
      return mbs_errSet(MBS_ERR_UNSUPPORTED, "flexible oracle: needs the whole model");
    const mbsFlexModal *md = &set->b[k].modal;
    o->nodefe[c] = mbs_foNodeAt(set->b + k, nd, o->nodex + 3 * c);
    if (o->f[k].Gnode) o->nodeG[c] = o->f[k].Gnode + (size_t)nd * md->m * md->m;
  }
  size_t nb = (size_t)m->nbody, N = (size_t)o->N;
  o->Rw = malloc(sizeof(mbsReal) * 9 * nb + 1);
  mbsReal **v3[] = {&o->pw, &o->om, &o->vo, &o->al, &o->ao};
  for (int k = 0; k < 5; k++) *v3[k] = malloc(sizeof(mbsReal) * 3 * nb + 1);
  o->Jw = malloc(sizeof(mbsReal) * 3 * nb * N + 1);
  o->Jv = malloc(sizeof(mbsReal) * 3 * nb * N + 1);
  o->Jg = malloc(sizeof(mbsReal) * 3 * N + 1);
  o->Jwn = malloc(sizeof(mbsReal) * 3 * N + 1);
  o->Jvn = malloc(sizeof(mbsReal) * 3 * N + 1);
  o->M = malloc(sizeof(mbsReal) * N * N + 1);
  o->f_ = malloc(sizeof(mbsReal) * N + 1);
  if (!o->Rw || !o->pw || !o->om || !o->vo || !o->al || !o->ao || !o->Jw || !o->Jv || !o->Jg ||
      !o->Jwn || !o->Jvn || !o->M || !o->f_)
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (flexible oracle of %d coordinates)", o->N);
  return MBS_OK;
}

int mbs_flexOracleSize(const mbsFlexOracle *o) {
  return o->N;
}

int mbs_flexOracleCol(const mbsFlexOracle *o, int k) {
  return o->f[k].col;
}

// the rotation vector th: R = exp([th]x) and the coefficients of the tangent map
// T(th) = I + ca [th]x + cb [th]x^2 (the world angular velocity of R is T th_dot), with
// da = (dca/dphi)/phi and db = (dcb/dphi)/phi (phi = |th|); series below phi = 0.1
void mbs_foRotvec(const mbsReal *th, mbsReal *R, mbsReal *ca, mbsReal *cb, mbsReal *da,
                  mbsReal *db) {
  mbsReal p2 = th[0] * th[0] + th[1] * th[1] + th[2] * th[2], phi = sqrt(p2), sa;
  if (phi < 0.1) {
    sa = 1 - p2 / 6 * (1 - p2 / 20 * (1 - p2 / 42));
    *ca = 0.5 - p2 / 24 * (1 - p2 / 30 * (1 - p2 / 56));
    *cb = 1.0 / 6 - p2 / 120 * (1 - p2 / 42 * (1 - p2 / 72));
    *da = -1.0 / 12 + p2 / 180 - p2 * p2 / 6720;
    *db = -1.0 / 60 + p2 / 1260 - p2 * p2 / 60480;
  } else {
    mbsReal sn = sin(phi), cs = cos(phi);
    sa = sn / phi;
    *ca = (1 - cs) / p2;
    *cb = (phi - sn) / (p2 * phi);
    *da = sn / (p2 * phi) - 2 * (1 - cs) / (p2 * p2);
    *db = (1 - cs) / (p2 * p2) - 3 * (phi - sn) / (p2 * p2 * phi);
  }
  // R = I + sa [th]x + ca [th]x^2, [th]x^2 = th th^T - p2 I
  mbsReal x = th[0], y = th[1], z = th[2];
  R[0] = 1 + *ca * (x * x - p2), R[1] = -sa * z + *ca * x * y, R[2] = sa * y + *ca * x * z;
  R[3] = sa * z + *ca * x * y, R[4] = 1 + *ca * (y * y - p2), R[5] = -sa * x + *ca * y * z;
  R[6] = -sa * y + *ca * x * z, R[7] = sa * x + *ca * y * z, R[8] = 1 + *ca * (z * z - p2);
}

// T(th) v = v + ca th x v + cb th x (th x v)
void mbs_foTangent(const mbsReal *th, mbsReal ca, mbsReal cb, const mbsReal *v, mbsReal *o) {
  mbsReal c1[3], c2[3];
  mbs_foCross(th, v, c1);
  mbs_foCross(th, c1, c2);
  for (int i = 0; i < 3; i++) o[i] = v[i] + ca * c1[i] + cb * c2[i];
}

// The frame of node fe of flexible body p (its world pose, twist, bias accelerations and
// Jacobians into o->Jwn, o->Jvn): origin at the deformed node s = x e_x + Phi_t eta, rotation
// R_p exp([th]x) with th = Phi_r eta (docs/flexible.md 5.5)
void mbs_foNodeFrame(mbsFlexOracle *o, int p, int fe, const mbsReal *xn, const mbsReal *Gn,
                     const mbsReal *y, const mbsReal *eta, mbsReal *Rn, mbsReal *pn, mbsReal *omn,
                     mbsReal *von, mbsReal *aln, mbsReal *aon) {
  const mbsModel *m = o->m;
  int N = o->N;
  const mbsFoBody *fo = o->f + o->flexof[p];
  const mbsFlexModal *md = &fo->fb->modal;
  int mm = md->m, col = fo->col;
  const mbsReal *et = eta + (col - m->nv), *etd = y + col;
  const mbsReal *Ph = md->Phi + (size_t)6 * fe * mm;
  const mbsReal *Rp = o->Rw + 9 * p, *pp = o->pw + 3 * p, *omp = o->om + 3 * p;
  const mbsReal *vop = o->vo + 3 * p, *alp = o->al + 3 * p, *aop = o->ao + 3 * p;
  mbsReal s[3] = {xn[0], xn[1], xn[2]}, ud[3] = {0, 0, 0}, th[3] = {0, 0, 0}, thd[3] = {0, 0, 0};
  for (int c = 0; c < mm; c++)
    for (int i = 0; i < 3; i++) {
      s[i] += Ph[i * mm + c] * et[c], ud[i] += Ph[i * mm + c] * etd[c];
      th[i] += Ph[(3 + i) * mm + c] * et[c], thd[i] += Ph[(3 + i) * mm + c] * etd[c];
    }
  mbsReal u2 = 0, u2d = 0, u2b = 0; // the axial shortening at the node (5.3)
  if (Gn) mbs_foShorten(mm, Gn, et, etd, fo->ge, &u2, &u2d, &u2b);
  s[0] += u2, ud[0] += u2d;
  mbsReal E[9], ca, cb, da, db;
  mbs_foRotvec(th, E, &ca, &cb, &da, &db);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      Rn[3 * i + j] = Rp[3 * i] * E[j] + Rp[3 * i + 1] * E[3 + j] + Rp[3 * i + 2] * E[6 + j];
  // relative angular velocity w = T th_dot and its bias T_dot th_dot =
  // da (th.thd) th x thd + db (th.thd) th x (th x thd) + cb thd x (th x thd)
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
  for (int i = 0; i < 3; i++) pn[i] = pp[i] + d[i], omn[i] = omp[i] + ww[i];
  mbs_foCross(omp, d, c1);
  for (int i = 0; i < 3; i++) von[i] = vop[i] + c1[i] + uw[i];
  mbs_foCross(omp, ww, c2);
  for (int i = 0; i < 3; i++) aln[i] = alp[i] + c2[i] + c3[i];
  // a = a_p + al_p x d + om_p x (om_p x d) + 2 om_p x (R_p Phi_t etad)
  mbs_foCross(alp, d, c2);
  mbs_foCross(omp, c1, c3);
  mbs_foCross(omp, uw, c1);
  for (int i = 0; i < 3; i++) aon[i] = aop[i] + c2[i] + c3[i] + 2 * c1[i] + u2b * Rp[3 * i];
  // Jacobians: Jw = Jw_p + R_p T Phi_r E, Jv = Jv_p - [d]x Jw_p + R_p Phi_t E
  const mbsReal *Jwp = o->Jw + (size_t)3 * p * N, *Jvp = o->Jv + (size_t)3 * p * N;
  for (int c = 0; c < N; c++) {
    mbsReal v[3] = {Jwp[c], Jwp[N + c], Jwp[2 * N + c]}, x[3];
    mbs_foCross(d, v, x);
    for (int i = 0; i < 3; i++) o->Jwn[i * N + c] = v[i], o->Jvn[i * N + c] = Jvp[i * N + c] - x[i];
  }
  for (int c = 0; c < mm; c++) {
    mbsReal r[3] = {Ph[3 * mm + c], Ph[4 * mm + c], Ph[5 * mm + c]}, t[3], tw[3];
    mbsReal u[3] = {Ph[c] - (Gn ? fo->ge[c] : 0), Ph[mm + c], Ph[2 * mm + c]};
    mbs_foTangent(th, ca, cb, r, t);
    mbs_foMat3Vec(Rp, t, tw);
    mbs_foMat3Vec(Rp, u, t);
    for (int i = 0; i < 3; i++) o->Jwn[i * N + col + c] += tw[i], o->Jvn[i * N + col + c] += t[i];
  }
}

// kinematics of every body: world pose, twist (omega, velocity of the origin), the accelerations
// at zero generalized acceleration and the Jacobians of the twist
void mbs_foKinematics(mbsFlexOracle *o, const mbsReal *q, const mbsReal *y, const mbsReal *eta) {
  const mbsModel *m = o->m;
  int N = o->N;
  for (int b = 0; b < m->nbody; b++) {
    int p = m->body_parent[b], t = m->body_jnttype[b], nd = m->body_dofnum[b];
    int d0 = m->body_dofadr[b];
    const mbsJointType *jt = mbs_jntType(t);
    mbsReal R[9], r[3], S[36], vJ[6] = {0, 0, 0, 0, 0, 0}, cJ[6] = {0, 0, 0, 0, 0, 0};
    jt->pose(m->jnt_origin + 3 * b, m->jnt_axis + 3 * b, m->jnt_axis2 + 3 * b, q + m->body_qadr[b],
             R, r, S);
    for (int k = 0; k < nd; k++)
      for (int i = 0; i < 6; i++) vJ[i] += S[6 * k + i] * y[d0 + k];
    if (jt->bias && nd) jt->bias(m->jnt_axis2 + 3 * b, S, y + d0, vJ, cJ);
    static const mbsReal I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, z3[3] = {0, 0, 0};
    const mbsReal *Rp = p < 0 ? I3 : o->Rw + 9 * p, *pp = p < 0 ? z3 : o->pw + 3 * p;
    const mbsReal *omp = p < 0 ? z3 : o->om + 3 * p, *vop = p < 0 ? z3 : o->vo + 3 * p;
    const mbsReal *alp = p < 0 ? z3 : o->al + 3 * p, *aop = p < 0 ? z3 : o->ao + 3 * p;
    const mbsReal *Jwp = p < 0 ? NULL : o->Jw + (size_t)3 * p * N;
    const mbsReal *Jvp = p < 0 ? NULL : o->Jv + (size_t)3 * p * N;
    mbsReal Rn[9], pn[3], omn[3], von[3], aln[3], aon[3];
    if (p >= 0 && o->nodefe[b] >= 0) { // on a node: the parent frame is the node's
      mbs_foNodeFrame(o, p, o->nodefe[b], o->nodex + 3 * b, o->nodeG[b], y, eta, Rn, pn, omn, von,
                      aln, aon);
      Rp = Rn, pp = pn, omp = omn, vop = von, alp = aln, aop = aon, Jwp = o->Jwn, Jvp = o->Jvn;
      for (int i = 0; i < 3; i++) r[i] -= o->nodex[3 * b + i]; // measured from the node
    }
    mbsReal *Rw = o->Rw + 9 * b, *pw = o->pw + 3 * b, *om = o->om + 3 * b, *vo = o->vo + 3 * b;
    mbsReal *al = o->al + 3 * b, *ao = o->ao + 3 * b;
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++)
        Rw[3 * i + j] = Rp[3 * i] * R[j] + Rp[3 * i + 1] * R[3 + j] + Rp[3 * i + 2] * R[6 + j];
    mbsReal d[3], wrel[3], vrel[3], c1[3], c2[3], c3[3];
    mbs_foMat3Vec(Rp, r, d);
    mbs_foMat3Vec(Rw, vJ, wrel);
    mbs_foMat3Vec(Rw, vJ + 3, vrel);
    for (int i = 0; i < 3; i++) pw[i] = pp[i] + d[i], om[i] = omp[i] + wrel[i];
    mbs_foCross(omp, d, c1);
    for (int i = 0; i < 3; i++) vo[i] = vop[i] + c1[i] + vrel[i];
    mbsReal cw[3], cv[3];
    mbs_foMat3Vec(Rw, cJ, cw);
    mbs_foMat3Vec(Rw, cJ + 3, cv);
    mbs_foCross(omp, wrel, c2);
    for (int i = 0; i < 3; i++) al[i] = alp[i] + c2[i] + cw[i];
    // a = a_p + al_p x d + om_p x (om_p x d) + om_p x vrel + om x vrel + R cJ_v
    mbs_foCross(alp, d, c2);
    mbs_foCross(omp, c1, c3);
    for (int i = 0; i < 3; i++) ao[i] = aop[i] + c2[i] + c3[i] + cv[i];
    mbs_foCross(omp, vrel, c2);
    mbs_foCross(om, vrel, c3);
    for (int i = 0; i < 3; i++) ao[i] += c2[i] + c3[i];
    // Jacobians: Jw = Jw_p + R S_w E, Jv = Jv_p - [d]x Jw_p + R S_v E
    mbsReal *Jw = o->Jw + (size_t)3 * b * N, *Jv = o->Jv + (size_t)3 * b * N;
    if (p < 0) {
      memset(Jw, 0, sizeof(mbsReal) * 3 * (size_t)N);
      memset(Jv, 0, sizeof(mbsReal) * 3 * (size_t)N);
    } else {
      for (int c = 0; c < N; c++) {
        mbsReal w[3] = {Jwp[c], Jwp[N + c], Jwp[2 * N + c]}, x[3];
        mbs_foCross(d, w, x);
        for (int i = 0; i < 3; i++) Jw[i * N + c] = w[i], Jv[i * N + c] = Jvp[i * N + c] - x[i];
      }
    }
    for (int k = 0; k < nd; k++) {
      mbsReal sw[3], sv[3];
      mbs_foMat3Vec(Rw, S + 6 * k, sw);
      mbs_foMat3Vec(Rw, S + 6 * k + 3, sv);
      for (int i = 0; i < 3; i++) Jw[i * N + d0 + k] += sw[i], Jv[i * N + d0 + k] += sv[i];
    }
  }
}

// a point mass dm at rs (world, from the body origin) moving with Jacobian Jg (3 x N) and bias
// acceleration a: M += dm Jg^T Jg, h += dm Jg^T (a - g)
static void mbs_foPoint(mbsFlexOracle *o, mbsReal dm, const mbsReal *Jg, const mbsReal *a) {
  int N = o->N;
  const mbsReal *g = o->m->gravity;
  mbsReal ag[3] = {a[0] - g[0], a[1] - g[1], a[2] - g[2]};
  for (int r = 0; r < N; r++) {
    mbsReal j0 = Jg[r], j1 = Jg[N + r], j2 = Jg[2 * N + r];
    if (j0 == 0 && j1 == 0 && j2 == 0) continue;
    o->f_[r] -= dm * (j0 * ag[0] + j1 * ag[1] + j2 * ag[2]);
    if (!o->formM) continue;
    mbsReal *Mr = o->M + (size_t)r * N;
    for (int c = 0; c < N; c++) Mr[c] += dm * (j0 * Jg[c] + j1 * Jg[N + c] + j2 * Jg[2 * N + c]);
  }
}

// Jg = Jv - [rs]x Jw (+ R Phi_t E in the body's eta columns, added by the caller)
static void mbs_foPointJac(int N, const mbsReal *Jw, const mbsReal *Jv, const mbsReal *rs,
                           mbsReal *Jg) {
  for (int c = 0; c < N; c++) {
    mbsReal w[3] = {Jw[c], Jw[N + c], Jw[2 * N + c]}, x[3];
    mbs_foCross(rs, w, x);
    for (int i = 0; i < 3; i++) Jg[i * N + c] = Jv[i * N + c] - x[i];
  }
}

mbsErr mbs_flexOracleSystem(mbsFlexOracle *o, const mbsReal *q, const mbsReal *y,
                            const mbsReal *eta, mbsReal **M, mbsReal **f) {
  const mbsModel *m = o->m;
  int N = o->N;
  mbs_foKinematics(o, q, y, eta);
  o->formM = M != NULL;
  if (o->formM) memset(o->M, 0, sizeof(mbsReal) * (size_t)N * N);
  memset(o->f_, 0, sizeof(mbsReal) * (size_t)N);
  // applied joint forces
  for (int b = 0; b < m->nbody; b++) {
    int nd = m->body_dofnum[b], d0 = m->body_dofadr[b];
    int scalar = mbs_jntQuatAdr(m->body_jnttype[b]) < 0;
    const mbsReal *qb = q + m->body_qadr[b];
    for (int k = 0; k < nd; k++) {
      int d = d0 + k;
      o->f_[d] += m->dof_force[d] - m->dof_damping[d] * y[d];
      if (scalar) o->f_[d] -= m->dof_stiffness[d] * (qb[k] - m->dof_springref[d]);
    }
  }
  mbsReal *Jg = o->Jg;
  for (int b = 0; b < m->nbody; b++) {
    const mbsReal *Rw = o->Rw + 9 * b, *om = o->om + 3 * b, *al = o->al + 3 * b;
    const mbsReal *ao = o->ao + 3 * b;
    const mbsReal *Jw = o->Jw + (size_t)3 * b * N, *Jv = o->Jv + (size_t)3 * b * N;
    int k = o->flexof[b];
    if (k < 0) { // rigid: the com's translation and the rotation about it
      mbsReal rc[3], a[3], c1[3], c2[3], Ic[9], Iw[9], T[9];
      mbs_foMat3Vec(Rw, m->body_com + 3 * b, rc);
      mbs_foPointJac(N, Jw, Jv, rc, Jg);
      mbs_foCross(al, rc, c1);
      mbs_foCross(om, rc, c2);
      mbs_foCross(om, c2, a);
      for (int i = 0; i < 3; i++) a[i] += ao[i] + c1[i];
      mbs_foPoint(o, m->body_mass[b], Jg, a);
      const mbsReal *in = m->body_inertia + 6 * b; // [Ixx Iyy Izz Ixy Ixz Iyz] about the com
      Ic[0] = in[0], Ic[4] = in[1], Ic[8] = in[2];
      Ic[1] = Ic[3] = in[3], Ic[2] = Ic[6] = in[4], Ic[5] = Ic[7] = in[5];
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
          T[3 * i + j] = Ic[3 * i] * Rw[3 * j] + Ic[3 * i + 1] * Rw[3 * j + 1] +
                         Ic[3 * i + 2] * Rw[3 * j + 2]; // Ic R^T
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
          Iw[3 * i + j] = Rw[3 * i] * T[j] + Rw[3 * i + 1] * T[3 + j] + Rw[3 * i + 2] * T[6 + j];
      mbsReal Ia[3], Io[3], gy[3];
      mbs_foMat3Vec(Iw, al, Ia);
      mbs_foMat3Vec(Iw, om, Io);
      mbs_foCross(om, Io, gy);
      for (int r = 0; r < N; r++) {
        mbsReal j0 = Jw[r], j1 = Jw[N + r], j2 = Jw[2 * N + r];
        if (j0 == 0 && j1 == 0 && j2 == 0) continue;
        o->f_[r] -= j0 * (Ia[0] + gy[0]) + j1 * (Ia[1] + gy[1]) + j2 * (Ia[2] + gy[2]);
        if (!o->formM) continue;
        mbsReal u[3] = {Iw[0] * j0 + Iw[1] * j1 + Iw[2] * j2, Iw[3] * j0 + Iw[4] * j1 + Iw[5] * j2,
                        Iw[6] * j0 + Iw[7] * j1 + Iw[8] * j2};
        mbsReal *Mr = o->M + (size_t)r * N;
        for (int c = 0; c < N; c++) Mr[c] += u[0] * Jw[c] + u[1] * Jw[N + c] + u[2] * Jw[2 * N + c];
      }
      continue;
    }
    // flexible: the points of the beam at r = x e_x + Phi_t eta (body frame)
    const mbsFoBody *fo = o->f + k;
    const mbsFlexModal *md = &fo->fb->modal;
    int mm = md->m, col = fo->col;
    const mbsReal *et = eta + (col - m->nv), *etd = y + col;
    mbsReal ex[3] = {Rw[0], Rw[3], Rw[6]}; // body x in world
    for (int p = 0; p < fo->np; p++) {
      const mbsReal *T = fo->phit + (size_t)3 * p * mm;
      mbsReal s[3] = {fo->x[3 * p], fo->x[3 * p + 1], fo->x[3 * p + 2]}, ud[3] = {0, 0, 0};
      mbsReal rs[3], uw[3], a[3], c1[3], c2[3], u2 = 0, u2d = 0, u2b = 0;
      for (int c = 0; c < mm; c++)
        for (int i = 0; i < 3; i++) s[i] += T[i * mm + c] * et[c], ud[i] += T[i * mm + c] * etd[c];
      const mbsReal *Gp = fo->G ? fo->G + (size_t)p * mm * mm : NULL;
      if (Gp) mbs_foShorten(mm, Gp, et, etd, fo->ge, &u2, &u2d, &u2b); // 5.3
      s[0] += u2, ud[0] += u2d;
      mbs_foMat3Vec(Rw, s, rs);
      mbs_foMat3Vec(Rw, ud, uw);
      mbs_foPointJac(N, Jw, Jv, rs, Jg);
      for (int c = 0; c < mm; c++) { // + R (Phi_t - e_x (G eta)^T) in the eta columns
        mbsReal t[3] = {T[c] - (Gp ? fo->ge[c] : 0), T[mm + c], T[2 * mm + c]}, tw[3];
        mbs_foMat3Vec(Rw, t, tw);
        for (int i = 0; i < 3; i++) Jg[i * N + col + c] += tw[i];
      }
      // a = ao + al x rs + om x (om x rs) + 2 om x (R s_dot) + R e_x u2b
      mbs_foCross(al, rs, c1);
      mbs_foCross(om, rs, c2);
      mbs_foCross(om, c2, a);
      mbs_foCross(om, uw, c2);
      for (int i = 0; i < 3; i++) a[i] += ao[i] + c1[i] + 2 * c2[i] + u2b * ex[i];
      mbs_foPoint(o, fo->dm[p], Jg, a);
      // the rotary inertia jt about each spin axis a (body frame; a beam: its cross-section's
      // polar inertia about e_x), spinning at a_w . omega + phi_a etad (T = jt/2 (a_w . omega +
      // phi_a etad)^2, a_w = R a): js = a_w^T Jw + phi_a E
      for (int k = 0; k < fo->nax; k++) {
        const mbsReal *X = fo->phix + (size_t)(fo->nax * p + k) * mm;
        mbsReal aw[3], thd = 0;
        mbs_foMat3Vec(Rw, fo->ax + 3 * ((size_t)fo->nax * p + k), aw);
        for (int c = 0; c < mm; c++) thd += X[c] * etd[c];
        mbsReal jt = fo->jt[fo->nax * p + k],
                spin = aw[0] * om[0] + aw[1] * om[1] + aw[2] * om[2] + thd;
        mbsReal exa = aw[0] * al[0] + aw[1] * al[1] + aw[2] * al[2], oxe[3];
        mbs_foCross(om, aw, oxe);
        mbsReal *js = Jg; // reuse row 0 of the scratch
        for (int c = 0; c < N; c++)
          js[c] = aw[0] * Jw[c] + aw[1] * Jw[N + c] + aw[2] * Jw[2 * N + c];
        for (int c = 0; c < mm; c++) js[col + c] += X[c];
        for (int r = 0; r < N; r++) {
          mbsReal gr = jt * js[r] * exa +
                       jt * spin * (oxe[0] * Jw[r] + oxe[1] * Jw[N + r] + oxe[2] * Jw[2 * N + r]);
          o->f_[r] -= gr;
          if (js[r] == 0 || !o->formM) continue;
          mbsReal *Mr = o->M + (size_t)r * N;
          for (int c = 0; c < N; c++) Mr[c] += jt * js[r] * js[c];
        }
      }
    }
    // elastic and damping forces
    for (int i = 0; i < mm; i++) {
      mbsReal fe = 0;
      for (int j = 0; j < mm; j++)
        fe += md->K[(size_t)i * mm + j] * et[j] + fo->D[(size_t)i * mm + j] * etd[j];
      o->f_[col + i] -= fe;
    }
  }
  if (M) *M = o->M;
  if (f) *f = o->f_;
  return MBS_OK;
}

mbsErr mbs_flexOracleAccel(mbsFlexOracle *o, const mbsReal *q, const mbsReal *y, const mbsReal *eta,
                           mbsReal *ydd) {
  if (o->m->nloop) return mbs_foLoopAccel(o, q, y, eta, ydd); // src/flex_oracle_loops.c
  mbsReal *M, *f;
  MBS_CALL(mbs_flexOracleSystem(o, q, y, eta, &M, &f));
  memcpy(ydd, f, sizeof(mbsReal) * (size_t)o->N);
  if (mbs_flexCholSolve(o->N, M, ydd))
    return mbs_errSet(MBS_ERR_NUMERIC, "flexible oracle: the mass matrix is not positive definite");
  return MBS_OK;
}

void mbs_foBodyPotential(const mbsModel *m, int b, const mbsFoBody *fo, const mbsReal *q,
                         const mbsReal *eta, const mbsReal *Rw, const mbsReal *pw, mbsReal *pV) {
  const mbsReal *g = m->gravity;
  mbsReal V = *pV; // added to in the order the two energies always summed
  int nd = m->body_dofnum[b], d0 = m->body_dofadr[b];
  if (mbs_jntQuatAdr(m->body_jnttype[b]) < 0)
    for (int i = 0; i < nd; i++) {
      mbsReal dq = q[m->body_qadr[b] + i] - m->dof_springref[d0 + i];
      V += 0.5 * m->dof_stiffness[d0 + i] * dq * dq - m->dof_force[d0 + i] * q[m->body_qadr[b] + i];
    }
  if (!fo) {
    mbsReal rc[3];
    mbs_foMat3Vec(Rw, m->body_com + 3 * b, rc);
    for (int i = 0; i < 3; i++) V -= m->body_mass[b] * g[i] * (pw[i] + rc[i]);
    *pV = V;
    return;
  }
  const mbsFlexModal *md = &fo->fb->modal;
  int mm = md->m;
  const mbsReal *et = eta + (fo->col - m->nv);
  for (int p = 0; p < fo->np; p++) {
    const mbsReal *Tp = fo->phit + (size_t)3 * p * mm;
    mbsReal s[3] = {fo->x[3 * p], fo->x[3 * p + 1], fo->x[3 * p + 2]}, rs[3], u2 = 0, u2d, u2b;
    for (int c = 0; c < mm; c++)
      for (int i = 0; i < 3; i++) s[i] += Tp[i * mm + c] * et[c];
    if (fo->G) mbs_foShorten(mm, fo->G + (size_t)p * mm * mm, et, et, fo->ge, &u2, &u2d, &u2b);
    s[0] += u2;
    mbs_foMat3Vec(Rw, s, rs);
    for (int i = 0; i < 3; i++) V -= fo->dm[p] * g[i] * (pw[i] + rs[i]);
  }
  for (int i = 0; i < mm; i++)
    for (int j = 0; j < mm; j++) V += 0.5 * et[i] * md->K[(size_t)i * mm + j] * et[j];
  *pV = V;
}

mbsErr mbs_flexOracleEnergy(mbsFlexOracle *o, const mbsReal *q, const mbsReal *y,
                            const mbsReal *eta, mbsReal *kin, mbsReal *pot) {
  const mbsModel *m = o->m;
  int N = o->N;
  mbsReal *M;
  MBS_CALL(mbs_flexOracleSystem(o, q, y, eta, &M, NULL));
  mbsReal T = 0, V = 0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) T += 0.5 * y[i] * M[(size_t)i * N + j] * y[j];
  for (int b = 0; b < m->nbody; b++) {
    int k = o->flexof[b];
    mbs_foBodyPotential(m, b, k < 0 ? NULL : o->f + k, q, eta, o->Rw + 9 * b, o->pw + 3 * b, &V);
  }
  *kin = T, *pot = V;
  return MBS_OK;
}

mbsErr mbs_flexOracleBodyPoses(mbsFlexOracle *o, const mbsReal *q, const mbsReal *y,
                               const mbsReal *eta, mbsReal *R, mbsReal *pos) {
  mbs_foKinematics(o, q, y, eta);
  memcpy(R, o->Rw, sizeof(mbsReal) * 9 * (size_t)o->m->nbody);
  memcpy(pos, o->pw, sizeof(mbsReal) * 3 * (size_t)o->m->nbody);
  return MBS_OK;
}

mbsErr mbs_flexOracleNodePose(mbsFlexOracle *o, const mbsReal *q, const mbsReal *y,
                              const mbsReal *eta, int k, int j, mbsReal *pos, mbsReal *R) {
  const mbsFlexBody *fb = o->f[k].fb;
  const mbsFlexModal *md = &fb->modal;
  mbsReal x[3], om[3], v[3], al[3], a[3];
  int fe = mbs_foNodeAt(fb, j, x);
  const mbsReal *Gn = o->f[k].Gnode ? o->f[k].Gnode + (size_t)j * md->m * md->m : NULL;
  mbs_foKinematics(o, q, y, eta);
  mbs_foNodeFrame(o, fb->body, fe, x, Gn, y, eta, R, pos, om, v, al, a);
  return MBS_OK;
}
