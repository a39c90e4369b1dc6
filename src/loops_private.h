/// \file loops_private.h
/// The loop solver's workspace and the closure kinematics, sweeps and factorization shared by
/// the files of the loop layer (src/loops*.c; docs/code.md). Private to src/.
#ifndef MBS_LOOPS_PRIVATE_H
#define MBS_LOOPS_PRIVATE_H

#include "mbspar/mbs_loops.h"

struct mbsLoopWork {
  int n, nv, nb;         // closure equations, dofs, bodies
  int *eq_loop;          // (n) loop of each equation
  int *eq_row;           // (n) row of the equation within its loop
  mbsReal *D;            // (n x 12) directions on body1 (6) then body2 (6), body coordinates
  mbsReal *c, *cdot;     // (n) closure error and its rate
  mbsReal *kappa, *rhs;  // (n) closure right side (with Baumgarte) and b of A lambda = b
  mbsReal *lam, *nu;     // (n) solutions
  mbsReal *A;            // (n x n) G H^-1 G^T
  mbsReal *L;            // (n x n) its pivoted Cholesky factor (Jacobi-scaled, permuted), in
                         // A's storage: mbs_loopFactor overwrites A
  mbsReal *M;            // (n x n) Cholesky factor of L^T L (rank x rank), min-norm solves
  mbsReal *sc;           // (n) Jacobi scaling 1/sqrt(A_ii) (0: a zero row)
  mbsReal *tmp;          // (n) scratch
  mbsReal *col;          // (n) scratch of the factorization (one column, contiguous)
  int *piv;              // (n) pivot order
  int rank;              // accepted pivots
  int nzero;             // zero rows of the last factorization (dropped before pivoting)
  mbsReal min_pivot;     // smallest accepted (scaled) pivot
  mbsReal resid;         // acceleration closure residual after the last solve
  mbsReal *G, *Y;        // (n x nv) closure Jacobian and H^-1 G^T (rows), crba and inverse
  mbsReal *qdd0;         // (nv) the tree solution without loop forces
  mbsReal *fz, *pz, *az; // (nb x 6) unit sweeps: external wrenches, bias, accelerations
  mbsReal *uz, *dz;      // (nv) unit sweeps: u, response qdd
  unsigned char *nz;     // (nb) nonzero flags of the sweeps
  mbsReal *zg;           // (2n) zero-row test: sum_d G_id^2, then the size of its terms
  unsigned char *skip;   // (n) G_i = 0: a zero row, its unit solve left out
  int nskip;             // equations skipped by the last solve
  int *zt;               // (nb) scratch of the zero-row test: bodies visited
  mbsReal *sg;           // (nv x 7) scratch of the zero-row test: S^g, |S^g|^2 per dof
  mbsReal *zacc;         // (nv x 6) scratch of the zero-row test: G_id per row of a loop
  mbsReal *vq, *vq2;     // (nv) scratch of the projection and the inverse
  mbsReal *sub;          // interface separators (mbsLoopOps.local): [C | G | L | rhs | failed]
  size_t nsub;           // its length
  mbsReal *minv;         // (nloop x 2 x 36) inverse rigid inertia of each loop's sides (model
                         // constants, mbs_loopFreeCompliance)
  unsigned char *mok;    // (nloop x 2) 1: that side has one (not the ground, not massless)
  int *ord;              // (n) aba's column order (mbs_loopColumnOrder): shallowest first
  int *first;            // (nb) the first column position whose pass 3 needs the body
  // mbs_abaFactor's own records (only the sweeps read them; docs/loops.md 5 "Memory"): Dinv of
  // each joint at 6 per dof (k^2 <= 6 k), the articulated inertias only of the bodies begun and
  // not yet done (tip to base: a pool of ia_cap slots, the most mbs_loopIaSlots finds pending)
  mbsReal *dinv; // (nv x 6) (S^T IA S)^-1 of body b at 6 * body_dofadr[b], k x k
  mbsReal *ia;   // (ia_cap x 36) articulated inertias of the pending bodies
  int *ia_slot;  // (nb) slot of a pending body, -1 otherwise
  int *ia_free;  // (ia_cap) free slots (a stack)
  int ia_cap;
  int *anc; // (nloop x 2) mbs_loopAncestors for the range [anc_b0, anc_b1)
  int anc_b0, anc_b1;
};

// ---- loops.c: closure kinematics
/// D, c (pos != 0), cdot and kappa (vel != 0) of every closure equation
void mbs_loopAll(const mbsModel *m, const mbsWork *w, struct mbsLoopWork *lw, int vel);
/// D_i^T a over the sides of equation i whose body is in [b0, b1); the ground sides with a_ground
/// = ag where ag is given
mbsReal mbs_loopDotOwned(const mbsModel *m, const struct mbsLoopWork *lw, int i, const mbsReal *acc,
                         const mbsReal *ag, int b0, int b1);
/// D_i^T (accelerations of its two bodies); ground sides use a_ground (ag, if given)
mbsReal mbs_loopDotAcc(const mbsModel *m, const struct mbsLoopWork *lw, int i, const mbsReal *acc,
                       const mbsReal *ag);
/// wrenches sum_i D_i x_i into wr (nbody x 6, added)
void mbs_loopAddWrench(const mbsModel *m, const struct mbsLoopWork *lw, const mbsReal *x,
                       mbsReal *wr);
/// the wrench pair of a unit lambda of equation i into wr (nbody x 6, added)
void mbs_loopAddUnit(const mbsModel *m, const struct mbsLoopWork *lw, int i, mbsReal *wr);
/// the unit wrench pair of equation i taken out of wr again
void mbs_loopClearUnit(const mbsModel *m, const struct mbsLoopWork *lw, int i, mbsReal *wr);
/// the zero-row test's sums over the dofs of the bodies [b0, b1) into lw->zg
void mbs_loopZeroSums(const mbsModel *m, const mbsWork *w, struct mbsLoopWork *lw, int b0, int b1);
/// the first body of each loop side's path to the ground inside [b0, b1): the side's body or its
/// nearest ancestor there, -1 if none (or the ground); (nloop x 2), kept for the range
const int *mbs_loopAncestors(const mbsModel *m, struct mbsLoopWork *lw, int b0, int b1);
/// the equations to skip (lw->skip, lw->nskip) from the summed lw->zg
void mbs_loopZeroDecide(struct mbsLoopWork *lw);
/// the wrench of loop k (its equations from i0 on) in the ground frame into out (6)
void mbs_loopWrenchOne(const mbsModel *m, const mbsWork *w, int k, int i0, mbsReal *out);

// ---- loops_baseline.c: sweeps and factorization
/// articulated inertias and joint factors from the position stage alone (w->U, lw->dinv); 0 if
/// singular
int mbs_abaFactor(const mbsModel *m, mbsWork *w);
/// the slots mbs_abaFactor needs: the most articulated inertias pending at once, tip to base
int mbs_loopIaSlots(const mbsModel *m);
/// response of the tree at rest without gravity to the wrenches lw->fz into lw->az, lw->dz
void mbs_loopSweep(const mbsModel *m, const mbsWork *w, struct mbsLoopWork *lw, int lim);
/// A = G H^-1 G^T by one sweep per closure equation (articulated factors in w)
void mbs_loopMatrixAba(const mbsModel *m, const mbsWork *w, struct mbsLoopWork *lw);
/// pivoted Cholesky of the Jacobi-scaled A, pivots below tol redundant (ref: zero-row scale)
void mbs_loopFactor(struct mbsLoopWork *lw, mbsReal tol, const mbsReal *ref);
/// A = G_u G_u^T over the columns of lw->G with sel[d] = 1 (NULL: every column), factored by
/// mbs_loopFactor at solver.rank_tol (rank in lw->rank): the inverse's and the natural
/// formulation's minimum-norm solves (loops_asm.c)
void mbs_loopFactorCols(const mbsModel *m, struct mbsLoopWork *lw, const int *sel);
/// A factored, its zero rows judged against the free-body compliance
void mbs_loopFactorA(const mbsModel *m, struct mbsLoopWork *lw);
/// x = the minimum-norm solution of A x = b with the last factorization
void mbs_loopMinNorm(struct mbsLoopWork *lw, const mbsReal *b, mbsReal *x);

#endif
