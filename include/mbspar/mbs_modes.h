/// \file mbs_modes.h
/// Natural frequencies and mode shapes of the linearised model (`mbspar modes`, docs/modes.md).
///
/// At a configuration q* with q̇ = 0 the equations of motion M(q) q̈ + C(q, q̇) = τ(q, q̇) give,
/// for small motions δq in the velocity coordinates,
///     M(q*) δq̈ + K δq = 0,   K = ∂(C(q, 0) − τ(q, 0)) / ∂q at q*,
/// and the generalised symmetric-definite eigenproblem K v = ω² M v gives the natural
/// frequencies ω and mode shapes v. M comes from one RNEA per column without gravity
/// (M e_j); K from central differences of the residual r(q) = C(q, 0) − τ(q, 0) (gravity, joint
/// springs, spring-dampers) with a step h along each velocity coordinate, taken on the
/// configuration manifold (mbs_integratePos: quaternion joints are perturbed by a local rotation
/// vector δθ, so free and spherical joints need no special case). Everything is dense n x n with
/// n = nv: coordinates a model adds to nv (the modal coordinates of flexible bodies) grow M and K
/// with no change here. Local (no MPI); the eigen solve is LAPACK's dsygv.
#ifndef MBS_MODES_H
#define MBS_MODES_H

#include "mbs_colsplit.h"
#include "mbs_dynamics.h"
#include "mbs_model.h"
#include "mbs_state.h"

/// Default central-difference step of K, in the units of each velocity coordinate (rad, m).
#define MBS_MODES_FD_STEP 1e-5
/// Largest system mbs_modesCreate accepts (dense n x n matrices, O(n^3) eigen solve).
#define MBS_MODES_MAX_DOF 8000

/// The linearised system and its eigen solution.
typedef struct {
  int n;        ///< size of the system (nv)
  mbsReal h;    ///< central-difference step of K (MBS_MODES_FD_STEP unless changed)
  mbsReal *M;   ///< (n x n) joint-space inertia at q*, symmetrised
  mbsReal *K;   ///< (n x n) stiffness, symmetrised (K + K^T) / 2
  mbsReal *r;   ///< (n) residual C(q*, 0) − τ(q*, 0): zero at an equilibrium
  mbsReal *qdd; ///< (n) accelerations of the model at rest at q*, −M^{-1} r
  // written by mbs_modesLinearise
  mbsReal k_max;   ///< max |K_ij| before symmetrisation
  mbsReal k_asym;  ///< max |K_ij − K_ji| / k_max (0 when k_max = 0)
  mbsReal m_asym;  ///< max |M_ij − M_ji| / max |M_ij| (rounding only)
  mbsReal r_max;   ///< max |r_i|
  mbsReal qdd_max; ///< max |qdd_i|
  // written by mbs_modesSolve
  mbsReal *lambda; ///< (n) eigenvalues ω², ascending
  mbsReal *V;      ///< (n x n) mode k in column k: V[i * n + k]; largest |component| = 1 and
                   ///< positive
  int *zero;       ///< (n) 1: a zero (rigid-body) mode, |λ| <= 1e-8 max|λ| (or <= 1e-12)
  // scratch
  mbsReal *A, *B, *work, *col; ///< LAPACK copies (n x n each), work (lwork), column (n)
  int lwork;
  mbsState *sp; ///< perturbed state
} mbsModes;

/// Allocate for \p m (n = nv). \return MBS_ERR_UNSUPPORTED for models with closed loops (their
/// coordinates are not independent) or with n > MBS_MODES_MAX_DOF; MBS_ERR_NOMEM.
mbsErr mbs_modesCreate(const mbsModel *m, mbsModes **md);
/// M, K, r, qdd at s->q with q̇ = 0 (s->qd is not used; s->tau and s->time are).
/// \p w is a serial workspace of \p m (its position and velocity stages are overwritten).
mbsErr mbs_modesLinearise(const mbsModel *m, const mbsState *s, mbsWork *w, mbsModes *md);
/// As mbs_modesLinearise with the columns of M and K split over the parts of \p cs (NULL: one
/// part): this part evaluates its columns (mbs_colRange), cs->gather brings the others; every
/// part ends with the same bits as one part alone. Collective over the parts of \p cs.
mbsErr mbs_modesLinearisePart(const mbsModel *m, const mbsState *s, mbsWork *w, mbsModes *md,
                              const mbsColSplit *cs);
/// A part that only evaluates columns (mbs_modesLinearisePart at a rank other than the one that
/// solves): frees V and shrinks A to n (M, K and B stay whole: the gather fills M and K, B
/// factors M for the accelerations at rest). The
/// result must not be passed to mbs_modesSolve. Local.
void mbs_modesTrim(mbsModes *md);
/// K v = λ M v by LAPACK dsygv: lambda ascending, V, zero.
/// \return MBS_ERR_NUMERIC when M is not positive definite (massless bodies) or LAPACK fails.
mbsErr mbs_modesSolve(mbsModes *md);
/// ω of eigenvalue λ: sqrt(λ), or −sqrt(−λ) for an unstable mode (λ < 0).
mbsReal mbs_modesOmega(mbsReal lambda);
/// Free and NULL (NULL is a no-op).
void mbs_modesDestroy(mbsModes **md);

#endif
