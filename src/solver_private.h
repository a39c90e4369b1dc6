/// \file solver_private.h
/// Pieces the constraint-force solvers (src/solver_*.c) share with cfs.c and each other: the
/// solver instance an mbsCfs holds, owned-range vector helpers, the convergence test, the
/// J-CG kernel with its Lanczos spectrum, and sibling-block addressing. Private to src/.
#ifndef MBS_SOLVER_PRIVATE_H
#define MBS_SOLVER_PRIVATE_H

#include "mbspar/mbs_solvertype.h"

/// A solver bound to an mbsCfs: its table entry, the options it was created with, its state.
struct mbsSolver {
  const mbsSolverType *type;
  mbsSolverOpt opt; ///< the solver's options (mbs_solverOptions)
  mbsOption from;   ///< the model options they came from (mbs_configSolverOptEqual)
  void *self;
};

/// Make c->solver the solver of m->opt (create it, or re-create it when the method or one of its
/// options changed since). Checks that the method is a constraint-force solver that can run on
/// c's body range. Collective when the solver's create is.
mbsErr mbs_solverBind(const mbsModel *m, mbsCfs *c);
/// Destroy a bound solver and NULL it (NULL is a no-op).
void mbs_solverFree(mbsSolver **sv);
/// The destroy callback of solvers whose state is one malloc'd block: free and NULL.
void mbs_solverFreeSelf(void **self);

// ---------------------------------------------------------------- cfs.c, cfs_op.c

/// Loops over fewer bodies than this stay serial (a parallel region costs about a microsecond).
#define MBS_OMP_MIN 256

/// out (k x k, packed) = A^T M B for 6 x k column sets A, B (columns of 6) and a 6x6 M (add:
/// accumulate into out).
void mbs_congruence(const mbsReal *A, int ka, const mbsReal *M, const mbsReal *B, int kb,
                    mbsReal *out, int add);

/// a.b over the owned constraint-force range [c->l0, c->l1) (threaded when long).
double mbs_cfsDot(const mbsCfs *c, const mbsReal *a, const mbsReal *b);
/// In-place sum of n doubles over the ranks through comm->reduce (nothing serially).
mbsErr mbs_cfsReduce(const mbsCfsComm *comm, double *v, int n);
/// Convergence test: the residual ||r||/||b|| (rr = r.r) or seed 002's relative change
/// ||dx||/||x|| (dxdx, xx) by \p criterion, against \p tol; the measure in *res.
int mbs_cfsConverged(int criterion, double tol, double rr, double dxdx, double xx, double bnorm,
                     double *res);
/// The stopping tests of a stationary iteration (Jacobi, Gauss–Seidel/SOR) after its iteration
/// \p it, from the reduced red = {r.r, dx.dx, x.x} (r of the iterate entering the iteration; rr0
/// keeps r.r of iteration 0): -1 stopped on NaN or divergence (r.r > 1e12 r0.r0), 1 converged,
/// 0 go on. Sets info->it, info->res and info->reason.
int mbs_cfsStationaryTest(const mbsSolverOpt *o, const double *red, int it, double *rr0,
                          mbsSolveInfo *info);
/// \p n more iterations done (1, or the sweeps since the last test under solver.check_every),
/// \p res the last measure: the progress hook's count (mbs_cfsSetProgress).
void mbs_cfsProgress(mbsCfs *c, int n, double res);
/// solver.check_every = K: whether sweep \p it (from 0) of jacobi, gs, sor or chebyshev forms
/// the norms, reduces them and tests: every K-th (from 0) and the last (it = max_iter).
static inline int mbs_cfsCheckSweep(const mbsSolverOpt *o, int it) {
  return o->check_every <= 1 || it % o->check_every == 0 || it == o->max_iter;
}
/// Index of the sibling-pair block of siblings i and k (in c->Sblk, 36 reals each).
size_t mbs_cfsSibIndex(const mbsModel *m, const mbsCfs *c, int i, int k);

// ---------------------------------------------------------------- solver_jcg.c

/// The true residual at c->x: r = b - A x, z = D^-1 r (c->r, c->z), red[0] = r.z and red[1] = r.r
/// reduced over the ranks. jcg's start, and the confirmation of a stop that jcg and chebyshev
/// judged on their recursively updated r (docs/formulation.md 3.2.1).
mbsErr mbs_cfsTrueResidual(const mbsModel *m, const mbsWork *w, mbsCfs *c, const mbsCfsComm *comm,
                           double *red);
/// After a confirmation that missed the tolerance (true r.r \p rr): 1 and the restart recorded in
/// info->cg (segment \p seg, after iteration \p it) if rr is below a quarter of *rr_prev (the
/// last restart's; updated) and the trace has room, else 0 with reason stagnated.
int mbs_cfsRestart(mbsSolveInfo *info, double rr, double *rr_prev, int seg, int it);
/// Conjugate gradients preconditioned by the block diagonal (seed 002's J-CG) from c->x, at most
/// \p maxit iterations; records the Lanczos coefficients in lan_a, lan_b (64 each) unless NULL.
mbsErr mbs_cfsCg(const mbsModel *m, const mbsWork *w, mbsCfs *c, const mbsCfsComm *comm,
                 int criterion, double tol, int maxit, mbsSolveInfo *info, double *lan_a,
                 double *lan_b);
/// Extreme eigenvalues of D^{-1} A from k >= 2 Lanczos steps (upper bound widened by 5 %).
void mbs_cfsLanczosSpectrum(const double *lan_a, const double *lan_b, int k, double *lmin,
                            double *lmax);
/// Spectrum of D^{-1} A from up to MBS_CFS_SPEC_STEPS CG steps on the right side from x = 0
/// (tol 1e-14, residual test), leaving c->x intact; the steps in info->spec_it/spec_conv.
mbsErr mbs_cfsEstimateSpectrum(const mbsModel *m, const mbsWork *w, mbsCfs *c,
                               const mbsCfsComm *comm, mbsSolveInfo *info, double *lmin,
                               double *lmax);

#endif
