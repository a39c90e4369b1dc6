/// \file flex_cfs_private.h
/// The workspace of the constraint-force system with flexible bodies and the kernels its solvers
/// share (src/flex_cfs.c: the data, the operator, the direct solve; src/flex_cfs_iter.c: the
/// iterations; docs/flexible.md 13). Not installed.
#ifndef MBS_FLEX_CFS_PRIVATE_H
#define MBS_FLEX_CFS_PRIVATE_H

#include "mbspar/mbs_cfs.h"
#include "flex_cfs.h"
#include "flex_private.h"

struct mbsFlexCfs {
  const mbsModel *m;
  mbsFlexAba *a;
  int nb, nl, N;
  int *nlb, *la;         ///< (nbody) rows of joint b and their first index
  mbsReal *T, *F, *SSi;  ///< (nbody x 36) T (6 x nl), F (6 x nd), (S^T S)^-1 (nd^2)
  mbsReal *Minv, *h, *Q; ///< M_b^-1 (nz^2 at a->oq), h_b and Q_b / zdot_b (nz at a->ov)
  mbsReal *wr, *tau;     ///< (nbody x 6) joint wrenches, (nv) joint forces
  mbsReal *Dinv;         ///< (nbody x 36) the diagonal blocks' inverses
  mbsReal *A;            ///< (nl^2) the assembled A (direct, gs, sor), or NULL
  mbsReal *x, *b, *r, *z, *p, *q;
  mbsReal *wk;        ///< scratch (nzmax^2 + 12 nzmax)
  int b0, b1, l0, l1; ///< the owned bodies and their rows
  char *need;         ///< (nbody) the body's M^-1 is used here: owned, or the parent of one
  mbsCfsComm comm;    ///< reduce only (NULL: one process)
  size_t sv;          ///< the length of h, Q
  // closed loops (src/flex_cfs_loops.c): their nle rows follow the tree's, to nl
  int nle, nzmax;
  int spec_it; ///< the last spectrum estimate's CG steps (mbs_fcBounds; cpa's graph)
  mbsReal *lg; ///< (nle x 2 x nzmax) per loop row and side: A_s^T dw on its body's z
  mbsReal *lk; ///< (nle) the rows' affine parts
  mbsReal *ld; ///< (nle) the rows' diagonal entries of A (preconditioner; the owner's)
  mbsReal *xl; ///< (nle) the loop multipliers on every rank
  mbsReal *lA; ///< (2 x 6 x nzmax) scratch: the sides' node maps
};

/// T (6 x (6 - nd)): the orthonormal complement of S's nd columns by Gram-Schmidt; its flops.
long mbs_fcComplement(const mbsReal *S, int nd, mbsReal *T);
/// The in-place sum over the ranks (nothing at one process).
mbsErr mbs_fcReduce(const mbsFlexCfs *f, double *v, int n);
/// y = A x (known = 0) or A x + the affine part (known = 1), on the owned rows. Collective.
mbsErr mbs_fcApply(mbsFlexCfs *f, const mbsReal *x, int known, mbsReal *yo);
/// z = D^-1 r on the owned rows (the diagonal blocks).
void mbs_fcPrecond(const mbsFlexCfs *f, const mbsReal *r, mbsReal *z);
/// a . b over n entries (local).
double mbs_fcDotN(int n, const mbsReal *a, const mbsReal *b);
/// a . b over the owned rows, summed over the ranks (NaN if the sum fails). Collective.
double mbs_fcDot(const mbsFlexCfs *f, const mbsReal *a, const mbsReal *b);
/// PCG on A x = f->b from x = 0 to the relative residual tol. Collective.
mbsErr mbs_fcCG(mbsFlexCfs *f, double tol, int *it);
/// Block Gauss-Seidel (omega 1) or SOR sweeps on the assembled f->A (every rank the same).
mbsErr mbs_fcSOR(mbsFlexCfs *f, double omega, double tol, int *it);
/// Block Jacobi (cheb 0) or Chebyshev (1) on the estimated spectrum of D^-1 A. Collective.
mbsErr mbs_fcPoly(mbsFlexCfs *f, int cheb, double tol, int *it);

/// Closed loops (src/flex_cfs_loops.c; docs/flexible.md 15.2). Create: f->nle and the arrays (after
/// the tree's rows are counted); Free: the arrays.
mbsErr mbs_fcLoopCreate(mbsFlexCfs *f);
void mbs_fcLoopFree(mbsFlexCfs *f);
/// 1 on the rank that owns the loop rows (its row range ends at nl).
int mbs_fcLoopOwner(const mbsFlexCfs *f);
/// Mark the sides' bodies as needed (their M^-1) on the owner of the loop rows.
void mbs_fcLoopNeed(mbsFlexCfs *f);
/// The rows' directions, affine parts and diagonal at the current kinematics (after M^-1).
void mbs_fcLoopPrepare(mbsFlexCfs *f, const mbsReal *y, const mbsReal *eta);
/// The loop multipliers of x into f->xl on every rank (one sum). Collective.
mbsErr mbs_fcLoopGather(mbsFlexCfs *f, const mbsReal *x);
/// Q_b += the loop multipliers' generalized forces on body b.
void mbs_fcLoopForce(const mbsFlexCfs *f, int b, mbsReal *Qb);
/// The loop rows of y = A x (+ the affine part when known) from the summed zdot (owner only).
void mbs_fcLoopRows(const mbsFlexCfs *f, int known, mbsReal *yo);
/// z = r / diag on the loop rows (owner only).
void mbs_fcLoopPrecond(const mbsFlexCfs *f, const mbsReal *r, mbsReal *z);
/// Cholesky of the n x n A in place (as mbs_faChol) that drops rows k >= nfree whose pivot is
/// at most tol times their diagonal (redundant closure equations: b_k = 0, so their x_k = 0);
/// -1 if another pivot is not positive.
int mbs_fcCholDrop(int n, int nfree, mbsReal tol, mbsReal *A, mbsReal *b, int *ndrop);

#endif
