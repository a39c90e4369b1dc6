/// \file flex_flops.h
/// Flop counts of the recursive flexible algorithm's kernels (src/flex_aba.c), defined once for
/// its MBS_FLOPS call sites and the nodes of its critical-path graph (src/flex_cpa.c), under the
/// counting rule of flops.h (one flop per +, -, *, /, sqrt, sin, cos on reals; constants folded
/// by the compiler count zero). Derived line by line from flex_aba.c and the helpers it calls
/// (flex_oracle.c: mbs_foCross 9, mbs_foMat3Vec 15, mbs_foShorten, mbs_foRotvec, mbs_foTangent);
/// docs/cpa.md "Flexible models" lists them. m: the body's modal coordinates, n = 6 + m, nd its
/// joint's dofs, nu = nd + m, np the parent's n (0 at the root), g = 1 with geometric
/// stiffening.
#ifndef MBS_FLEX_FLOPS_H
#define MBS_FLEX_FLOPS_H

#include "mbspar/mbs_joint.h"
#include "flops.h"

/// mbs_foShorten: per i, m terms of 2 sums (4 m), 3 dots (6), u2 = -a / 2 (1).
static inline long mbs_flopFoShorten(int m) {
  return 4L * m * m + 6L * m + 1;
}
/// mbs_foRotvec: p2 (5), sqrt (1), R (3 diagonal x 4 + 6 off-diagonal x 4 = 36), the
/// coefficients: the series below phi = 0.1 (sa, ca, cb 8 each; da, db 5 each: 34) or the closed
/// forms (sin, cos and 22: 24).
static inline long mbs_flopFoRotvec(int series) {
  return 42 + (series ? 34 : 24);
}
/// mbs_foTangent: 2 crosses and 3 x (2 mul + 2 add).
#define MBS_FL_FO_TANGENT 30
/// mbs_faPoint(n): ag (3), per row h (7) and n entries of M (7 each).
static inline long mbs_flopFaPoint(int n) {
  return 3 + 7L * n + 7L * n * n;
}
/// mbs_faBody of a rigid body: the com (mat3vec, 2 crosses), mbs_faPoint(6), the rotated inertia
/// (45 + 54), omega x I omega (mat3vec, cross) and its 3 adds.
#define MBS_FL_FA_BODY_RIGID (15 + 9 + 9 + (3 + 42 + 252) + 45 + 54 + 15 + 9 + 3)
/// mbs_faBody of a flexible body: om x e_x (9) once; per quadrature point the deformed position
/// and rates (14 m), the shortening (g), s, ud updates (2), 2 mat3vec, the eta columns of J
/// ((15 + g) m), kap (3 crosses + 12), mbs_faPoint(n), the spin (6), its bias (9); the rows of
/// the spin's rank-one update (3 n each; rows 0-2 always, the torsion shape's nonzero entries:
/// \p nnzx over all points); K eta + D etad into h (4 m^2 + m).
static inline long mbs_flopFaBodyFlex(int m, int npt, int g, long nnzx) {
  long n = 6 + m;
  long pt = 86 + 29L * m + (g ? mbs_flopFoShorten(m) + m : 0) + mbs_flopFaPoint((int)n) + 9 * n;
  return 9 + npt * pt + 3 * n * nnzx + 4L * m * m + m;
}
/// mbs_faNode with the map A (pass 1 of a child on a node of a flexible parent with m modal
/// coordinates): the node's deformation and rates (24 m), shortening (g: + 1 for u2 into s),
/// mbs_foRotvec, the frame and its twist and bias (253), A's eta columns ((60 + g) m).
static inline long mbs_flopFaNode(int m, int g, int series) {
  return 253 + mbs_flopFoRotvec(series) + 84L * m + (g ? mbs_flopFoShorten(m) + m : 0);
}
/// mbs_faForward's own work for one body besides its joint (pose, vJ = S qd, bias), node frame
/// and mbs_faBody: the rotation, twists and biases (207), P = X A (12 np), S in world axes
/// (30 nd), the node origin (1 on a node).
static inline long mbs_flopFaKin(int nd, int np, int on_node) {
  return 207 + 12L * np + 30L * nd + (on_node ? 1 : 0);
}
/// The joint's part of pass 1: pose, vJ = S qd (12 nd), the bias cJ when the joint has one.
static inline long mbs_flopFaJoint(const mbsModel *m, int b) {
  const mbsJointType *jt = mbs_jntType(m->body_jnttype[b]);
  int nd = m->body_dofnum[b];
  return jt->flops_pose + 12L * nd + (jt->bias && nd ? jt->flops_bias : 0);
}
/// Pass 2's condensation of body b: U (12 n nd), D (6 nd (nd + 1)), u (nd (14 + 3 scalar)), the
/// Cholesky of D (nu), W and v (7 nu^2: 7 triangular solves).
static inline long mbs_flopFaCondense(int n, int nd, int nu, int scalar) {
  return 12L * n * nd + 6L * nd * (nd + 1) + (long)nd * (14 + 3 * scalar) + mbs_flopChol(nu) +
         7L * nu * nu;
}
/// Pass 2's transfer to the parent: Ia (21 entries of 2 nu), pa (6 (12 + 2 nu)), Ia P (72 np),
/// P^T pa and P^T Ia P accumulated (13 np + 13 np^2).
static inline long mbs_flopFaTransfer(int nu, int np) {
  return 42L * nu + 72 + 12L * nu + 72L * np + 13L * np + 13L * np * np;
}
/// Pass 3 of body b: a' (12 np), v - W a' (12 nu), L^-T (nu^2), zdot (12 nd).
static inline long mbs_flopFaAcc(int nd, int nu, int np) {
  return 12L * np + 12L * nu + (long)nu * nu + 12L * nd;
}
/// mbs_faApply: a' = P z_p (+ c): 12 np (np = 0 without a parent's z).
static inline long mbs_flopFaApply(int np) {
  return 12L * np;
}
/// mbs_faDown: v - W a' (12 nu), L^-T (nu^2), zdot's twist rows (12 nd).
static inline long mbs_flopFaDown(int nd, int nu) {
  return 12L * nu + (long)nu * nu + 12L * nd;
}
/// mbs_faCondense's output for the parent, Ia (21 entries of 2 nu) and pa (6 (12 + 2 nu)): counted
/// by the distributed elimination (src/flex_part.c) at every condensation, by the serial
/// algorithm with the transfer (mbs_flopFaTransfer = this + mbs_flopFaTransferOnly).
static inline long mbs_flopFaCondenseOut(int nu) {
  return 42L * nu + 72 + 12L * nu;
}
/// mbs_faTransfer proper: with the inertia Ia P (72 np), P^T pa and P^T Ia P (13 np + 13 np^2);
/// the bias alone 13 np.
static inline long mbs_flopFaTransferOnly(int np, int inertia) {
  return inertia ? 72L * np + 13L * np + 13L * np * np : 13L * np;
}
/// mbs_faBiasUp: u (nd (12 + 2 + 3 scalar), the applied forces not in the homogeneous form), L^-1
/// (nu^2), pa (12 nu, + 72 for Ia c).
static inline long mbs_flopFaBiasUp(int nd, int nu, int scalar, int homog) {
  return (long)nd * (12 + (homog ? 0 : 2 + 3 * scalar)) + (long)nu * nu + 12L * nu +
         (homog ? 0 : 72);
}
/// The distributed elimination's LU with partial pivoting of its n x n interface system and the
/// solve (src/flex_part.c): per column k the multipliers (1 each), the updates (2 per entry) and
/// the right side (2 per row); the back substitution n^2.
static inline long long mbs_flopFpLu(int n) {
  long long f = (long long)n * n;
  for (long long k = 0; k < n; k++) f += (n - k - 1) * (1 + 2 * (n - k - 1) + 2);
  return f;
}

/// The constraint-force system with flexible bodies (src/flex_cfs.c; docs/flexible.md 13), per
/// body of its operator: up, the joint wrench T x (+ F tau when known); mid, Q_b (- h_b when
/// known) minus each of its nch children's P^T f (13 n each) and M_b^-1 Q_b (2 n^2); down, a' = P
/// zdot_p (+ c), d = zdot - a' (6) and the rows T^T d (12 nl).
static inline long mbs_flopFcUp(int nl, int nd, int known) {
  return 12L * nl + (known ? 12L * nd : 0);
}
static inline long mbs_flopFcMid(int n, int nch, int known) {
  return (known ? n : 0) + 13L * n * nch + 2L * n * n;
}
static inline long mbs_flopFcDown(int np, int nl) {
  return 12L * np + 6 + 12L * nl;
}
/// mbs_fcPrepare of a body whose M^-1 is needed (besides mbs_faKin, mbs_faBody and the
/// complement's Gram-Schmidt, counted as it runs): the Cholesky of M_b and its inverse (n
/// solves), (S^T S)^-1 and F (24 nd^2 + its Cholesky and inverse), the applied joint forces.
static inline long mbs_flopFcPrepare(int n, int nd, int scalar) {
  return mbs_flopChol(n) + 2L * n * n * n +
         (nd ? 24L * nd * nd + mbs_flopChol(nd) + 2L * nd * nd * nd : 0) +
         (long)nd * (2 + 3 * scalar);
}
/// An owned joint's diagonal block D_b (its nl rows; np its parent's size, 0 at a root): T^T
/// M_b^-1 T (108 nl^2), (P^T T)^T M_p^-1 (P^T T), its Cholesky and inverse.
static inline long mbs_flopFcBlock(int nl, int np) {
  return 108L * nl * nl +
         (np ? 12L * nl * np + 2L * nl * np * np + (long)nl * nl * (2L * np + 1) : 0) +
         mbs_flopChol(nl) + 2L * nl * nl * nl;
}
/// mbs_flexCfsEnd's accelerations of a body: a' (12 np), d (6), S^T d (12 nd), (S^T S)^-1 (2 nd^2).
static inline long mbs_flopFcEnd(int np, int nd) {
  return 12L * np + 6 + 12L * nd + 2L * nd * nd;
}
/// One block Gauss-Seidel / SOR sweep of src/flex_cfs_iter.c on the assembled n x n A (every
/// rank the whole sweep): per joint block of nl rows its residual (2 n + 2 a row, with r.r), the
/// Cholesky of its diagonal block and the solve, x += omega d (2 a row); per closure row (nle) its
/// residual, 2 n + 2, and the update, 3; the convergence test 2.
static inline long long mbs_flopFcSweep(int n, const int *nlb, int nb, int nle) {
  long long f = 2 + (long long)nle * (2LL * n + 5);
  for (int b = 0; b < nb; b++)
    f += (long long)nlb[b] * (2LL * n + 4) +
         (nlb[b] ? mbs_flopChol(nlb[b]) + mbs_flopCholSolve(nlb[b]) : 0);
  return f;
}
/// The spectrum estimate's scalar work after k CG steps (src/flex_cfs_iter.c mbs_fcBounds, a
/// convention): the Lanczos tridiagonal 5 k, its Gershgorin bound 3 k, lmax 1, two bisections of
/// 200 steps each (the midpoint 2, a Sturm count 4 k).
static inline long mbs_flopFcSpectrum(int k) {
  return 8L * k + 1 + 400L * (2 + 4L * k);
}

#endif
