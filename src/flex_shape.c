/// \file flex_shape.c
/// The deformed shape of a flexible body for the outputs (issue 34; docs/flexible.md 6,
/// docs/outputs.md): the world positions of its beam's FE nodes, the points a viewer joins into
/// the bent beam's polyline. The same kinematics as the oracle's node frames (5.5): the node at
/// x_i sits at x_i e_x + Phi_t,i eta in the floating frame, moved along e_x by the axial
/// shortening u2 = -eta^T G(x_i) eta / 2 of 5.3 when stiffening is on. G(x_i) is not formed:
/// u2 is accumulated element by element as -1/2 of the integral of (v'(x))^2 + (w'(x))^2 with
/// the deformed slopes v' = phi_v' eta, w' = phi_w' eta at the 4 Gauss points of each element
/// (the integrand is a polynomial of degree 4: exact, the same sum as eta^T G eta in another
/// order), so a row costs O(nfe m) instead of O(nfe m^2).

#include "mbspar/mbs_flex.h"
#include "mbspar/mbs_model.h"
#include "flex_private.h"

void mbs_flexShape(const mbsFlexBody *fb, const mbsReal *eta, const mbsReal *Rw, const mbsReal *pw,
                   mbsReal *scratch, mbsReal *pts) {
  const mbsFlexModal *md = &fb->modal;
  int m = md->m;
  mbsReal u2 = 0, *sv = scratch, *sw = scratch + m;
  for (int i = 0; i < md->nfe; i++) {
    if (i > 0 && fb->stiffening && m > 0 && !md->pos) { // the shortening gained over element i - 1
      mbsReal h = md->x[i] - md->x[i - 1], acc = 0;
      for (int g = 0; g < MBS_FO_GAUSS; g++) {
        mbs_foSlopes(md, i - 1, mbs_fo_gx[g], sv, sw);
        mbsReal a = 0, b = 0;
        for (int c = 0; c < m; c++) a += sv[c] * eta[c], b += sw[c] * eta[c];
        acc += mbs_fo_gw[g] * h * (a * a + b * b);
      }
      u2 -= 0.5 * acc;
    }
    const mbsReal *Ph = md->Phi + (size_t)6 * i * m;
    mbsReal s[3] = {md->x[i], md->pos ? md->pos[3 * i + 1] : 0, md->pos ? md->pos[3 * i + 2] : 0};
    mbsReal d[3];
    for (int c = 0; c < m; c++)
      for (int k = 0; k < 3; k++) s[k] += Ph[k * m + c] * eta[c];
    s[0] += u2; // in the order of the node frames' (flex_oracle.c)
    mbs_foMat3Vec(Rw, s, d);
    for (int k = 0; k < 3; k++) pts[3 * i + k] = pw[k] + d[k];
  }
}

int mbs_flexNodeFe(const mbsFlexBody *fb, int node) {
  mbsReal s[3];
  return mbs_foNodeAt(fb, node, s);
}
