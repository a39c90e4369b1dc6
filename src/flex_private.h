/// \file flex_private.h
/// The per-body data of a flexible body shared by the dense oracle (src/flex_oracle.c) and the
/// recursive algorithm (src/flex_aba.c): the beam's quadrature points with their shapes, the
/// modal damping and the geometric-stiffening matrices (docs/flexible.md 5.2, 5.3), and the
/// node-frame helpers of 5.5. Not installed.
#ifndef MBS_FLEX_PRIVATE_H
#define MBS_FLEX_PRIVATE_H

#include "mbspar/mbs_flex.h"
#include "mbspar/mbs_model.h"

#define MBS_FO_GAUSS 4

typedef struct mbsFoBody {
  const mbsFlexBody *fb;
  int col;        ///< first column of its eta in [v; eta]
  int np;         ///< quadrature points
  mbsReal *x;     ///< (np x 3) their positions in the body frame (a beam: [x 0 0])
  mbsReal *dm;    ///< (np) their masses, rho A w
  int nax;        ///< spin axes per point: 1 (a beam: e_x) or 3 (lumped: J's eigenvectors)
  mbsReal *ax;    ///< (np x nax x 3) the spin axes (body frame, unit)
  mbsReal *jt;    ///< (np x nax) the rotary inertia about each axis (a beam: rho (Iy + Iz) w)
  mbsReal *phit;  ///< (np x 3 x m) translation shapes at the points (body frame)
  mbsReal *phix;  ///< (np x nax x m) rotation shapes about each axis at the points
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
/// The points of a lumped body into b (arrays allocated, b->nax set; src/flex_points.c).
mbsErr mbs_foLumped(const mbsFlexModal *md, mbsFoBody *b);
/// The recursive algorithm's rotary-inertia terms of point p about each spin axis into M and h
/// (n = 6 + m; js scratch of n; src/flex_points.c).
void mbs_faSpin(const mbsFoBody *fo, int p, const mbsReal *Rw, const mbsReal *om,
                const mbsReal *etd, int n, mbsReal *js, mbsReal *M, mbsReal *h);
/// The FE node nearest to x.
int mbs_foNearestFe(const mbsFlexModal *md, mbsReal x);
/// Named node j of fb: its undeformed position s (3, body frame) and its FE node (a lumped body:
/// the first point at s).
int mbs_foNodeAt(const mbsFlexBody *fb, int j, mbsReal *s);
/// The axial shortening at a point: u2 = -eta^T G eta / 2, its rate u2d = -(G eta) . etad (ge =
/// G eta, m) and its bias acceleration u2b = -etad^T G etad.
void mbs_foShorten(int m, const mbsReal *G, const mbsReal *et, const mbsReal *etd, mbsReal *ge,
                   mbsReal *u2, mbsReal *u2d, mbsReal *u2b);
/// R = exp([th]x) and the tangent-map coefficients ca, cb with their derivatives over phi, da, db.
void mbs_foRotvec(const mbsReal *th, mbsReal *R, mbsReal *ca, mbsReal *cb, mbsReal *da,
                  mbsReal *db);
/// o = T(th) v = v + ca th x v + cb th x (th x v).
void mbs_foTangent(const mbsReal *th, mbsReal ca, mbsReal cb, const mbsReal *v, mbsReal *o);
/// Cholesky A = L L^T of the n x n symmetric positive definite A in place (lower triangle read,
/// L written there); -1 if not positive definite (flex_aba.c; the constraint-force methods too).
int mbs_faChol(int n, mbsReal *A);
/// x := L^-1 x, x := L^-T x and x := (L L^T)^-1 x with the factor of mbs_faChol.
void mbs_faLsolve(int n, const mbsReal *L, mbsReal *x);
void mbs_faLTsolve(int n, const mbsReal *L, mbsReal *x);
void mbs_faCholSolve(int n, const mbsReal *L, mbsReal *x);
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

/// The dense oracle's workspace (src/flex_oracle.c), shared with its closed loops
/// (src/flex_oracle_loops.c).
struct mbsFlexOracle {
  const mbsModel *m;
  int formM; ///< 1: mbs_flexOracleSystem forms M (0: f alone, the caller passed M = NULL)
  int N;     ///< nv + sum of the modal coordinates
  int nf;    ///< flexible bodies
  mbsFoBody *f;
  int *flexof;    ///< (nbody) index into f, -1 for a rigid body
  int *nodefe;    ///< (nbody) FE node of the parent a body hangs from (-1: the parent's frame)
  mbsReal *nodex; ///< (nbody x 3) that node's undeformed position in the parent's frame
  const mbsReal **nodeG; ///< (nbody) G (m x m) of the parent at that node (NULL: none or off)
  // per-evaluation workspace
  mbsReal *Rw, *pw, *om, *vo, *al, *ao; ///< (nbody x 9 / 3) world pose, twist, bias accelerations
  mbsReal *Jw, *Jv;                     ///< (nbody x 3 x N) angular and linear (origin) Jacobians
  mbsReal *Jg;                          ///< (3 x N) scratch
  mbsReal *Jwn, *Jvn;                   ///< (3 x N) the Jacobians of a node frame
  mbsReal *M, *f_;                      ///< (N x N), (N)
  struct mbsFoLoops *lp; ///< closed loops (src/flex_oracle_loops.c; NULL: none or not yet)
};
/// The kinematics of every body at (q, y, eta) into o (poses, twists, bias accelerations,
/// Jacobians).
void mbs_foKinematics(mbsFlexOracle *o, const mbsReal *q, const mbsReal *y, const mbsReal *eta);
/// The frame of FE node fe (at xn, G there Gn or NULL) of flexible body p after the kinematics:
/// pose, twist, bias accelerations, and its Jacobians into o->Jwn, o->Jvn (docs/flexible.md 5.5).
void mbs_foNodeFrame(mbsFlexOracle *o, int p, int fe, const mbsReal *xn, const mbsReal *Gn,
                     const mbsReal *y, const mbsReal *eta, mbsReal *Rn, mbsReal *pn, mbsReal *omn,
                     mbsReal *von, mbsReal *aln, mbsReal *aon);
/// ydd of a model with closed loops: the KKT system M ydd - G^T lam = f, G ydd = kappa' - D^T abar
/// in the range space (src/flex_oracle_loops.c; docs/flexible.md 15).
mbsErr mbs_foLoopAccel(mbsFlexOracle *o, const mbsReal *q, const mbsReal *y, const mbsReal *eta,
                       mbsReal *ydd);
/// Free the loop workspace (NULL fine).
void mbs_foLoopsFree(struct mbsFoLoops **lp);

/// The recursive algorithm's workspace (src/flex_aba.c; docs/flexible.md 10), shared with its
/// split over body ranges (src/flex_part.c).
struct mbsFlexAba {
  const mbsModel *m;
  int N, nf;
  mbsFoBody *f;
  int *flexof;                ///< (nbody) index into f, -1 rigid
  int *nodefe;                ///< (nbody) FE node of the parent a body hangs from (-1: its frame)
  mbsReal *nodex;             ///< (nbody x 3) that node's undeformed position
  const mbsReal **nodeG;      ///< (nbody) G of the parent at that node (NULL: none or off)
  int *nz;                    ///< (nbody) 6 + m
  int *col;                   ///< (nbody) first column of its eta in y (-1 rigid)
  size_t *oq, *ov, *oP;       ///< (nbody) offsets of the nz^2, nz and 6 x nz(parent) blocks
  mbsReal *Rw, *pw, *om, *vo; ///< (nbody x 9 / 3) world pose and twist
  mbsReal *IA, *pA;           ///< articulated inertia (nz^2) and bias force (nz)
  mbsReal *U, *Dinv, *u;      ///< W = L^-1 U6^T (nu x 6), L (nu^2), L^-1 u (nu); nu = ndof + m
  mbsReal *P, *c, *S, *zd;    ///< parent map (6 x nz_p), bias (6), S (6 x ndof, 36), zdot (nz)
  mbsReal *Ia, *pa;           ///< (nbody x 36 / 6) what the parent sees (pass 2)
  mbsReal *wk;                ///< scratch
  unsigned char *drv;         ///< (nbody) the body's joint is driven (NULL: none; flex_hybrid.c)
  mbsReal *acD, *tauD;        ///< (nv each) the driven dofs' accelerations and driving forces
  int homog; ///< 1: a homogeneous solve (no joint forces, no velocity products; flex_part_loops.c)
};

/// The joint dofs of body b among its free directions: 0 when its joint is driven.
static inline int mbs_faNd(const mbsFlexAba *a, int b) {
  return a->drv && a->drv[b] ? 0 : a->m->body_dofnum[b];
}
/// Pass 3's result at body b into ydd: ud's joint and modal accelerations; a driven joint's
/// prescribed ones, and its driving force into tauD (from IA zdot + pA, after mbs_faDown).
void mbs_faOut(mbsFlexAba *a, int b, const mbsReal *q, const mbsReal *y, const mbsReal *ud,
               mbsReal *ydd);

/// Body b's kinematics (pass 1 without the body's inertia): world pose, twist, the map P from its
/// parent's z, the bias c and the world motion subspace S.
void mbs_faKin(mbsFlexAba *a, int b, const mbsReal *q, const mbsReal *y, const mbsReal *eta);
/// Body b's own M and h into IA and pA (after mbs_faKin of b).
void mbs_faBody(mbsFlexAba *a, int b, const mbsReal *y, const mbsReal *eta, mbsReal *M, mbsReal *h);
/// Pass 2 at body b: with IA and pA complete (its children added), the Cholesky L of
/// Sf^T IA Sf, W = L^-1 U6^T, v = L^-1 u and what the parent sees, Ia (a->Ia) and pa (a->pa).
/// MBS_ERR_NUMERIC if not positive definite.
mbsErr mbs_faCondense(mbsFlexAba *a, int b, const mbsReal *q, const mbsReal *y);
/// The parent of b gains P^T Ia P (when inertia) and P^T pa.
void mbs_faTransfer(mbsFlexAba *a, int b, int inertia, const mbsReal *pa);
/// Pass 2's bias part alone at body b, with b's factors: v = L^-1 u from the bias pA (nz) and
/// pa = pA6 + Ia c + W^T v; homog: without the applied joint forces and Ia c (the response to a
/// change of pA).
void mbs_faBiasUp(const mbsFlexAba *a, int b, const mbsReal *q, const mbsReal *y, const mbsReal *pA,
                  int homog, mbsReal *v, mbsReal *pa);
/// Pass 3 at body b: from a' (6; P zdot_p + c) and v, ud = L^-T (v - W a') (nu) and
/// zd = [a' + S q''; eta''] (nz).
void mbs_faDown(const mbsFlexAba *a, int b, const mbsReal *ap, const mbsReal *v, mbsReal *ud,
                mbsReal *zd);
/// The frame of FE node fe (at xn, G there Gn or NULL) of flexible body p after its mbs_faKin:
/// world pose Rn, pn, twist omn, von, the map A (6 x nz_p, NULL: not formed: the node's twist is
/// A z_p) and the bias cn (6: the node's acceleration at zdot_p = 0; docs/flexible.md 5.5).
void mbs_faNode(mbsFlexAba *a, int fe, const mbsReal *xn, const mbsReal *Gn, int p,
                const mbsReal *y, const mbsReal *eta, mbsReal *Rn, mbsReal *pn, mbsReal *omn,
                mbsReal *von, mbsReal *A, mbsReal *cn);
/// ap = P zp (+ c when c is not NULL; zp NULL: zero), P the map of body b from its parent
/// (6 x nz_p).
void mbs_faApply(const mbsFlexAba *a, int b, const mbsReal *zp, const mbsReal *c, mbsReal *ap);

/// The recursive algorithm over a contiguous body range (src/flex_part.c; docs/flexible.md 11),
/// read by its critical-path graph (src/flex_part_cpa.c).
struct mbsFlexPart {
  const mbsModel *m;
  mbsFlexAba *a;
  int P, r, b0, b1, N, nif, ncut;
  int *starts;         ///< (P + 1) the parts' first bodies
  int *cutid;          ///< (nbody) the cut of the joint to b's parent, -1 none
  int *top, ntop;      ///< this part's bodies whose joint is cut (its roots with a remote parent)
  int *bot, nbot;      ///< the cut bodies whose parent is here (later parts)
  int *rootof;         ///< (nbody) the part's root of b's tree (b in range)
  unsigned char *kin;  ///< (nbody) kinematics needed: the range and its ancestors
  unsigned char *path; ///< (nbody) b is (an ancestor of) a bottom cut's parent, here
  int *walk;           ///< (nbody) stamp: on the current spike's way up
  int stamp;           ///< the current spike's stamp
  mbsReal *hb;         ///< (sv) the bodies' own h
  size_t sv;           ///< the bodies' z entries in all
  mbsReal *dpA, *dv, *dz; ///< (6 x sv) the 6 unit responses of a cut: bias, L^-1 u, zdot
  mbsReal *buf;           ///< (nif^2 + nif) this part's rows of the interface system, then the sum
  mbsReal *x;             ///< (nif) the interface unknowns [a_g; f_g] per cut
  int *piv;               ///< (nif)
  mbsReal *ydd;           ///< (N) the baseline pass's accelerations (parts without cuts)
  long evals, unit;       ///< evaluations, unit-response columns
  struct mbsFpLoops *lp;  ///< closed loops (src/flex_part_loops.c; NULL: none)
};

/// The closure rows at a's kinematics (the sides' bodies done; docs/flexible.md 15.2): per row i
/// and side s the generalised force g_s = A_s^T dw on body b_s's z (at lg + (2 i + s) nzmax), the
/// bias k_i (lk) and, when D is not NULL, the directions at the bodies' origins in body
/// coordinates (n x 12, the zero-row test's scale); lA: 12 nzmax scratch.
void mbs_faLoopRows(mbsFlexAba *a, const mbsReal *y, const mbsReal *eta, int nzmax, mbsReal *lA,
                    mbsReal *lg, mbsReal *lk, mbsReal *D);
/// The loop layer of a part (flex_part_loops.c): created with the part, freed with it; the unit
/// force of the current solve applied to the range's bias forces (after pass 1).
mbsErr mbs_fplCreate(mbsFlexPart *p);
void mbs_fplFree(mbsFlexPart *p);
void mbs_fplForce(mbsFlexPart *p);

#endif
