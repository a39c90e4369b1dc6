/// \file flex_cfs.h
/// The constraint-force system of seed 002 with flexible (modal) bodies (docs/flexible.md 13;
/// issue 34): every body free with its own velocities z_b = [omega; v_o; etad] (6 + m_b) and
/// mass matrix M_b, each joint a set of constraint rows on the child's frame twist and the
/// parent's attachment-frame twist, A = G M^-1 G^T with the per-joint block sparsity of the rigid
/// system. One process, the whole model; the body data come from the recursive algorithm's
/// kinematics and body equations (src/flex_aba.c, flex_private.h). Not installed.
#ifndef MBS_FLEX_CFS_H
#define MBS_FLEX_CFS_H

#include "mbspar/mbs_cfs.h"
#include "mbspar/mbs_flex.h"
#include "mbspar/mbs_model.h"

/// The solvers of the flexible constraint-force system (docs/flexible.md 13.3).
enum {
  MBS_FCFS_DIRECT = 0, ///< the assembled A, dense Cholesky (small models)
  MBS_FCFS_JCG,        ///< CG with the block-diagonal (per joint) preconditioner, matrix-free
  MBS_FCFS_GS,         ///< block Gauss-Seidel on the assembled A (small models)
  MBS_FCFS_SOR,        ///< block SOR (omega 1.3) on the assembled A (small models)
  MBS_FCFS_JACOBI,     ///< block Jacobi, damped by the spectrum estimate, matrix-free (small)
  MBS_FCFS_CHEB,       ///< Chebyshev on the spectrum estimate, block-preconditioned, matrix-free
  MBS_FCFS_PETSC,      ///< KSP on the operator (parallel/flex_cfs_petsc.c; not mbs_flexCfsAccel)
  MBS_FCFS_NMETHOD
};

typedef struct mbsFlexCfs mbsFlexCfs;

/// The workspace of model m (its flexible set complete: the whole model).
mbsErr mbs_flexCfsCreate(const mbsModel *m, mbsFlexCfs **out);
void mbs_flexCfsDestroy(mbsFlexCfs **f);
/// Own bodies [b0, b1) (contiguous) and their rows; comm->reduce (an in-place sum over the ranks;
/// comm NULL: one process) joins the ranges: the operator's two exchanges, the dots, and for
/// direct, gs and sor the assembled A. Every rank computes the kinematics of the whole model and
/// the body data of its bodies and their parents. Collective from then on: every rank calls
/// mbs_flexCfsAccel with the same arguments and gets the whole ydd.
mbsErr mbs_flexCfsSetRange(mbsFlexCfs *f, int b0, int b1, const mbsCfsComm *comm);
/// The name of method k ("direct", "jcg", "gs", "sor", "jacobi", "chebyshev", "petsc").
const char *mbs_flexCfsName(int k);
/// ydd (N = nv + the modal coordinates, laid out as mbs_flexOracleAccel's) at (q, y, eta) by
/// method (MBS_FCFS_*), to the relative residual tol (iterative methods); *it: iterations (0 for
/// direct). MBS_ERR_NUMERIC if a block is not positive definite or an iteration does not converge.
mbsErr mbs_flexCfsAccel(mbsFlexCfs *f, int method, double tol, const mbsReal *q, const mbsReal *y,
                        const mbsReal *eta, mbsReal *ydd, int *it);
/// N = nv + the modal coordinates (the length of ydd).
int mbs_flexCfsSize(const mbsFlexCfs *f);
/// The pieces of mbs_flexCfsAccel for an outside solver (parallel/flex_cfs_petsc.c), all
/// collective: the system at (q, y, eta) and its right side *b (rows indexed globally; the owned
/// rows [*l0, *l1) valid); y = A x and z = D^-1 r on the owned rows; ydd from the solution x (its
/// owned rows read).
mbsErr mbs_flexCfsBegin(mbsFlexCfs *f, const mbsReal *q, const mbsReal *y, const mbsReal *eta,
                        const mbsReal **b, int *l0, int *l1);
mbsErr mbs_flexCfsOp(mbsFlexCfs *f, const mbsReal *x, mbsReal *y);
void mbs_flexCfsPrec(const mbsFlexCfs *f, const mbsReal *r, mbsReal *z);
mbsErr mbs_flexCfsEnd(mbsFlexCfs *f, const mbsReal *x, mbsReal *ydd);
/// The number of constraint rows (the unknowns of A).
int mbs_flexCfsRows(const mbsFlexCfs *f);
/// The iterations of one solve by method at the initial state (q0, qd0, the modal coordinates and
/// their rates zero) at one process: the count `mbspar cpa --method jcg` builds its graph with
/// (src/flex_cfs_cpa.c); *spec (may be NULL): the spectrum estimate's CG steps (jacobi, chebyshev).
mbsErr mbs_flexCfsIterations(const mbsModel *m, int method, double tol, int *it, int *spec);
/// The CG steps of the last spectrum estimate (jacobi, chebyshev; 0: none yet).
int mbs_flexCfsSpecIterations(const mbsFlexCfs *f);

#endif
