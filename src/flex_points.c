/// \file flex_points.c
/// The points of a flexible body beyond the beam's Gauss points (docs/flexible.md 14): a lumped
/// modal file's points with their rotary inertias split along J's eigenvectors, the named nodes'
/// positions anywhere in the body, and the recursive algorithm's spin terms of the rotary
/// inertia about each axis (the beam's polar inertia about e_x is the case of one axis).

#include <math.h>
#include <string.h>
#include "mbspar/mbs_flex.h"
#include "mbspar/mbs_model.h"
#include "flex_flops.h"
#include "flex_private.h"

// the points of a lumped body (docs/flexible.md 14): the file's points themselves, each with its
// rotary inertia split along J's eigenvectors (T = 1/2 Omega^T J Omega = sum_k lam_k/2 (a_k .
// Omega)^2, Omega the point's angular velocity in the body frame)
mbsErr mbs_foLumped(const mbsFlexModal *md, mbsFoBody *b) {
  int m = md->m, np = md->nfe;
  for (int p = 0; p < np; p++) {
    const mbsReal *Ph = md->Phi + (size_t)6 * p * m;
    for (int i = 0; i < 3; i++) b->x[3 * p + i] = md->pos[3 * p + i];
    b->dm[p] = md->pmass[p];
    memcpy(b->phit + (size_t)3 * p * m, Ph, sizeof(mbsReal) * 3 * (size_t)m);
    if (!b->nax) continue;
    const mbsReal *J = md->pJ + 6 * p;
    mbsReal A[9] = {J[0], J[3], J[4], J[3], J[1], J[5], J[4], J[5], J[2]};
    mbsReal B[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, lam[3], V[9];
    int rc = mbs_symGenEig(3, A, B, lam, V);
    if (rc == -2) return mbs_errSet(MBS_ERR_NOMEM, "out of memory (flexible oracle)");
    for (int k = 0; k < 3; k++) {
      mbsReal *a = b->ax + (size_t)9 * p + 3 * k, *X = b->phix + (size_t)(3 * p + k) * m;
      for (int i = 0; i < 3; i++) a[i] = V[3 * i + k];
      b->jt[3 * p + k] = lam[k];
      for (int c = 0; c < m; c++)
        X[c] = a[0] * Ph[3 * m + c] + a[1] * Ph[4 * m + c] + a[2] * Ph[5 * m + c];
    }
  }
  return MBS_OK;
}

int mbs_foNodeAt(const mbsFlexBody *fb, int j, mbsReal *s) {
  const mbsFlexModal *md = &fb->modal;
  s[0] = fb->spec.node_x[j], s[1] = fb->node_yz[j][0], s[2] = fb->node_yz[j][1];
  if (!md->pos) return mbs_foNearestFe(md, s[0]);
  int best = 0; // a lumped body: the first point nearest to s
  mbsReal bd = INFINITY;
  for (int i = 0; i < md->nfe; i++) {
    const mbsReal *q = md->pos + 3 * i;
    mbsReal d = (q[0] - s[0]) * (q[0] - s[0]) + (q[1] - s[1]) * (q[1] - s[1]) +
                (q[2] - s[2]) * (q[2] - s[2]);
    if (d < bd) bd = d, best = i;
  }
  return best;
}

// the spin about each axis a of point p (a beam: the cross-section's about e_x), a_w . omega +
// phi_a etad: M += jt js js^T, h += jt spin (om x a_w) (n = 6 + m; js scratch of n)
void mbs_faSpin(const mbsFoBody *fo, int p, const mbsReal *Rw, const mbsReal *om,
                const mbsReal *etd, int n, mbsReal *js, mbsReal *M, mbsReal *h) {
  int mm = n - 6;
  for (int k = 0; k < fo->nax; k++) {
    const mbsReal *X = fo->phix + (size_t)(fo->nax * p + k) * mm;
    mbsReal aw[3], oxe[3], thd = 0;
    mbs_foMat3Vec(Rw, fo->ax + 3 * ((size_t)fo->nax * p + k), aw);
    mbs_foCross(om, aw, oxe);
    for (int c = 0; c < mm; c++) thd += X[c] * etd[c];
    mbsReal jt = fo->jt[fo->nax * p + k],
            spin = aw[0] * om[0] + aw[1] * om[1] + aw[2] * om[2] + thd;
    memset(js, 0, sizeof(mbsReal) * (size_t)n);
    for (int i = 0; i < 3; i++) js[i] = aw[i], h[i] += jt * spin * oxe[i];
    for (int c = 0; c < mm; c++) js[6 + c] = X[c];
    for (int r = 0; r < n; r++) // rows 0-2 always (the counts: flex_flops.h), then X's nonzeros
      if (r < 3 || js[r] != 0) {
        for (int c = 0; c < n; c++) M[(size_t)r * n + c] += jt * js[r] * js[c];
        if (r >= 3) MBS_FLOPS(3 * n);
      }
  }
}
