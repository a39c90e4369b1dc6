/// \file natural_runon.c
/// The pieces of a natural run (natural_run.c, docs/natural.md 7 and 12) in O(n): the recorded
/// rows assembled joint by joint into the O(n) solver's workspace (natural_tree.c), the rows'
/// values g(p) and products G v, and the minimum-norm correction x −= Gᵀ (G Gᵀ)⁺ v by the same
/// block elimination with every body's mass matrix replaced by the identity (a workspace whose K
/// is I₄): [I Gᵀ; G 0] (Δx; λ) = (0; −v) gives Δx = −Gᵀ (G Gᵀ)⁻¹ v, the tree rows eliminated
/// body by body, the cut joints' rows in the range space with the pivoted Cholesky (dependent
/// closure rows dropped).
///
/// The rows' values and right sides use one layout of 12 nb + nl entries: the rigid-body rows
/// (6 per body), the joint rows of each body's joint (6 slots per body, the first body_lamnum
/// used), the cut joints' rows.
#include <math.h>
#include <string.h>
#include "natural_private.h"
#include "spatial.h"

static const int mbs_ntPj[6] = {0, 1, 2, 0, 0, 1}, mbs_ntPk[6] = {0, 1, 2, 1, 2, 2};

void mbs_ntReplay(const mbsModel *m, mbsNaturalWork *nw, const mbsNatRec *rec, const int *rec0,
                  int nrec) {
  int nb = nw->nb, np = 12 * nb;
  mbsNat *s = &nw->s;
  memset(nw->Jc, 0, 72 * (size_t)nb * sizeof(double));
  memset(nw->Jp, 0, 72 * (size_t)nb * sizeof(double));
  memset(nw->gj, 0, 6 * (size_t)nb * sizeof(double));
  s->blk = 1;
  for (int c = 0; c < nb; c++) {
    s->bc = c, s->bp = m->body_parent[c], s->row0 = s->row = 0;
    s->Jc = nw->Jc + 72 * c, s->Jp = nw->Jp + 72 * c, s->gj = nw->gj + 6 * c;
    mbs_natReplay(s, rec + rec0[c], rec0[c + 1] - rec0[c]);
  }
  s->blk = 0;
  if (nw->nl) {
    memset(nw->Lr, 0, (size_t)nw->nl * (size_t)np * sizeof(double));
    s->L = nw->Lr, s->nrt = 0, s->row = 0;
    mbs_natReplay(s, rec + rec0[nb], nrec - rec0[nb]);
  }
}

double mbs_ntValues(const mbsModel *m, const mbsNaturalWork *nw, const mbsNatRec *rec,
                    const int *rec0, int nrec, double *g) {
  int nb = nw->nb, nl = nw->nl;
  const mbsNat *s = &nw->s;
  (void)m;
  memset(g, 0, (12 * (size_t)nb + (size_t)nl) * sizeof(double));
  for (int b = 0; b < nb; b++) { // rigid: ½ (e_k.e_k − 1), e_j.e_k
    const double *e = s->p + 12 * b + 3;
    for (int r = 0; r < 6; r++) {
      double d = mbsu_dot3(e + 3 * mbs_ntPj[r], e + 3 * mbs_ntPk[r]);
      g[6 * b + r] = mbs_ntPj[r] == mbs_ntPk[r] ? 0.5 * (d - 1) : d;
    }
  }
  for (int c = 0; c < nb; c++) {
    double *gc = g + 6 * nb + 6 * c;
    for (int i = rec0[c], row = 0; i < rec0[c + 1]; i++)
      row += mbs_natRecValue(s, rec + i, gc + row);
  }
  for (int i = rec0[nb], row = 0; i < nrec; i++)
    row += mbs_natRecValue(s, rec + i, g + 12 * nb + row);
  double gmax = 0;
  for (int i = 0; i < 12 * nb + nl; i++) gmax = fmax(gmax, fabs(g[i]));
  return gmax;
}

double mbs_ntJacMul(const mbsModel *m, const mbsNaturalWork *nw, const double *v, double *gv) {
  int nb = nw->nb, nl = nw->nl, np = 12 * nb;
  const double *p = nw->s.p;
  double vmax = 0;
  for (int b = 0; b < nb; b++) { // rigid rows: e_k on e_k; e_k on e_j and e_j on e_k
    const double *e = p + 12 * b + 3, *u = v + 12 * b + 3;
    for (int r = 0; r < 6; r++) {
      int j = mbs_ntPj[r], k = mbs_ntPk[r];
      double t = mbsu_dot3(e + 3 * k, u + 3 * j);
      if (j != k) t += mbsu_dot3(e + 3 * j, u + 3 * k);
      gv[6 * b + r] = t;
    }
  }
  for (int c = 0; c < nb; c++) {
    int k = m->body_lamnum[c], pb = m->body_parent[c];
    double *gc = gv + 6 * nb + 6 * c;
    for (int i = 0; i < 6; i++) {
      double t = 0;
      for (int j = 0; i < k && j < 12; j++) {
        t += nw->Jc[72 * c + 12 * i + j] * v[12 * c + j];
        if (pb >= 0) t += nw->Jp[72 * c + 12 * i + j] * v[12 * pb + j];
      }
      gc[i] = t;
    }
  }
  for (int i = 0; i < nl; i++) {
    const double *li = nw->Lr + (size_t)i * (size_t)np;
    double t = 0;
    for (int j = 0; j < np; j++) t += li[j] * v[j];
    gv[12 * nb + i] = t;
  }
  for (int i = 0; i < 12 * nb + nl; i++) vmax = fmax(vmax, fabs(gv[i]));
  return vmax;
}

int mbs_ntCorrect(const mbsModel *m, mbsNaturalWork *nw, const double *v, int fresh, double tol,
                  double *x) {
  int nb = nw->nb, nl = nw->nl, np = 12 * nb;
  for (int b = 0; b < nb; b++) {
    memset(nw->r + NB * b, 0, 12 * sizeof(double));
    for (int r = 0; r < 6; r++) {
      nw->r[NB * b + 12 + r] = -v[6 * b + r];
      nw->gj[6 * b + r] = -v[6 * nb + 6 * b + r];
    }
  }
  for (int i = 0; i < nl; i++) nw->s.gl[i] = -v[12 * nb + i];
  mbs_ntSolve(m, nw, nw->gj, 1);
  int rank = mbs_ntLoops(m, nw, nw->s.gl, tol, fresh);
  if (rank < 0) return -1;
  for (int j = 0; j < np; j++) x[j] += nw->pdd[j];
  return rank;
}
