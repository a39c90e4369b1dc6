/// \file mbs_finite.h
/// No silent NaN (issue 12.3): every verb checks what it computed (q̈, λ, τ, the state, the
/// energies) with these functions before it reports or integrates it, and a non-finite value is
/// an MBS_ERR_NUMERIC (exit code 5) whose message names the first offending entry by its column
/// name (the body and the joint component, as in trajectory.csv) and the phase. Every check is
/// also a NaN fault point (MBS_FAULT=nan:N, mbs_fault.h). No communication: the parallel layer
/// checks the owned range on every rank and agrees (mbsp_agreeErr), so the message is the one of
/// the lowest failing rank, i.e. of the first offending body in model order.
#ifndef MBS_FINITE_H
#define MBS_FINITE_H

#include "mbs_error.h"
#include "mbs_dynamics.h"
#include "mbs_model.h"

/// What an array holds (how its index maps to a body).
typedef enum {
  MBS_FIN_Q = 0,  ///< joint coordinates (nq, body_qadr)
  MBS_FIN_QD,     ///< joint rates (nv, body_dofadr)
  MBS_FIN_QDD,    ///< joint accelerations (nv)
  MBS_FIN_LAMBDA, ///< constraint-force components (nlam, body_lamadr)
  MBS_FIN_TAU,    ///< joint forces of inverse dynamics (nv)
  MBS_FIN_COUNT
} mbsFiniteKind;

/// Check v[i0 .. i1) (local indices of \p m) for NaN or Inf. Returns MBS_OK, or
/// MBS_ERR_NUMERIC with the message "mbspar: non-finite KIND in PHASE: v[i] = nan at COLUMN
/// (body "NAME", global index g)..." naming the first offending entry. Local.
mbsErr mbs_checkFinite(const mbsModel *m, mbsFiniteKind kind, const mbsReal *v, int i0, int i1,
                       const char *phase);

/// Check one forward-dynamics evaluation: the solver's reason (an iterative solver that met a NaN
/// stops with reason "nan" and leaves its initial guess, so q̈ may look finite: an error too),
/// then q̈ of dofs [d0, d1) and λ of components [l0, l1) (l1 <= l0: λ not checked, e.g. aba and
/// crba compute none). \p baseline: aba/crba (no solver reason). Local.
mbsErr mbs_checkForward(const mbsModel *m, const mbsWork *w, int baseline, int d0, int d1, int l0,
                        int l1, const char *phase);

/// Check named scalars (e.g. energies): \p n values with their names. Local.
mbsErr mbs_checkFiniteScalars(const double *v, const char *const *names, int n, const char *phase);

#endif
