/// \file flex_private.h
/// The per-body data of a flexible body shared by the dense oracle (src/flex_oracle.c) and the
/// recursive algorithm (src/flex_aba.c): the beam's quadrature points with their shapes, the
/// modal damping and the geometric-stiffening matrices (docs/flexible.md 5.2, 5.3), and the
/// node-frame helpers of 5.5. Not installed.
#ifndef MBS_FLEX_PRIVATE_H
#define MBS_FLEX_PRIVATE_H

#include "mbspar/mbs_flex.h"

#define MBS_FO_GAUSS 4

typedef struct mbsFoBody {
  const mbsFlexBody *fb;
  int col;        ///< first column of its eta in [v; eta]
  int np;         ///< quadrature points
  mbsReal *x;     ///< (np) their positions along the beam axis
  mbsReal *dm;    ///< (np) their masses, rho A w
  mbsReal *jt;    ///< (np) their cross-sections' polar inertia, rho (Iy + Iz) w
  mbsReal *phit;  ///< (np x 3 x m) translation shapes at the points (body frame)
  mbsReal *phix;  ///< (np x m) torsion rotation shapes at the points
  mbsReal *D;     ///< (m x m) modal damping
  mbsReal *G;     ///< (np x m x m) geometric stiffening: int_0^x (v'^T v' + w'^T w') at the points,
                  ///< so the axial shortening there is -eta^T G eta / 2 (NULL: stiffening off)
  mbsReal *Gnode; ///< (nnodes x m x m) G at the named nodes (NULL: stiffening off)
  mbsReal *ge;    ///< (2 m) scratch
} mbsFoBody;

/// The 4-point Gauss rule on [0, 1]: abscissae and weights.
extern const double mbs_fo_gx[MBS_FO_GAUSS], mbs_fo_gw[MBS_FO_GAUSS];
/// The transverse slopes v' and w' (m each) of the modes at local coordinate xi of element e.
void mbs_foSlopes(const mbsFlexModal *md, int e, double xi, mbsReal *sv, mbsReal *sw);
/// The points of flexible body fb (positions, masses, shapes; G when stiffening is on).
mbsErr mbs_foPoints(const mbsFlexBody *fb, mbsFoBody *b);
/// Free the arrays of b.
void mbs_foBodyFree(mbsFoBody *b);
/// The FE node nearest to x.
int mbs_foNearestFe(const mbsFlexModal *md, mbsReal x);
/// The axial shortening at a point: u2 = -eta^T G eta / 2, its rate u2d = -(G eta) . etad (ge =
/// G eta, m) and its bias acceleration u2b = -etad^T G etad.
void mbs_foShorten(int m, const mbsReal *G, const mbsReal *et, const mbsReal *etd, mbsReal *ge,
                   mbsReal *u2, mbsReal *u2d, mbsReal *u2b);
/// R = exp([th]x) and the tangent-map coefficients ca, cb with their derivatives over phi, da, db.
void mbs_foRotvec(const mbsReal *th, mbsReal *R, mbsReal *ca, mbsReal *cb, mbsReal *da,
                  mbsReal *db);
/// o = T(th) v = v + ca th x v + cb th x (th x v).
void mbs_foTangent(const mbsReal *th, mbsReal ca, mbsReal cb, const mbsReal *v, mbsReal *o);
/// c = a x b (c may alias a or b).
void mbs_foCross(const mbsReal *a, const mbsReal *b, mbsReal *c);
/// o = R v, R 3 x 3 row-major (o may alias v).
void mbs_foMat3Vec(const mbsReal *R, const mbsReal *v, mbsReal *o);
/// Body b's potential energy at (q, eta) with its frame at (Rw, pw): joint springs and constant
/// joint forces, gravity on its mass (fo NULL: rigid) or on its points with the axial shortening,
/// and the modal strain energy, added to *pV. The oracle's and the recursive algorithm's energies
/// share it.
void mbs_foBodyPotential(const mbsModel *m, int b, const mbsFoBody *fo, const mbsReal *q,
                         const mbsReal *eta, const mbsReal *Rw, const mbsReal *pw, mbsReal *pV);

#endif
