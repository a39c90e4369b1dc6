/// \file mbs_static.h
/// Static equilibrium by energy drainage (seed 001, section 6): the dynamic model itself is
/// integrated in pseudo-time while kinetic energy is drained out of it, so the state settles at a
/// minimum of the potential energy. No potential function and no linearisation are needed: any
/// forward-dynamics method that gives q̈(q, q̇) will do, serial or distributed.
///
/// Two drainage operators (docs/static.md):
///  - kinetic: kinetic damping. The motion is undamped; whenever the kinetic energy has passed a
///    maximum (KE_k < KE_{k-1}) every velocity is set to zero. The state then restarts from rest
///    close to where the potential energy was lowest along the path.
///  - drain: the seed's acceleration operator (its eq. 50, a Baumgarte-like term), applied to the
///    accelerations before they are integrated:
///        q̈* = q̈ - 2 ω_d q̇ - ω_d² (q_i - q_{i-1})
///    i.e. mass-proportional damping with modal damping ratio ω_d / ω_k.
/// Integration is semi-implicit (symplectic) Euler: q̇ += h q̈*, q = q ⊕ h q̇ (quaternions are
/// rotated by mbs_integratePos). The solve stops when KE < ke_tol and max|q_i - q_{i-1}| < dq_tol
/// for the last two steps (the change is measured in the tangent space, h |q̇|, so it is defined
/// for quaternions too; two steps in a row exclude a turning point of an oscillation and bound the
/// residual acceleration by 2 dq_tol / h²), or after max_iter evaluations.
///
/// The forward dynamics is a callback, so the same loop runs the serial baselines (aba, crba) on
/// one process and the distributed engine on every rank (parallel/main.c): the callback must
/// return the same q̈ and energies on every caller, and the loop then takes the same decisions
/// everywhere without communicating itself. Local (no MPI here).
#ifndef MBS_STATIC_H
#define MBS_STATIC_H

#include "mbs_dynamics.h"
#include "mbs_model.h"
#include "mbs_state.h"

/// Energy-drainage operator (config key static.method).
typedef enum {
  MBS_STATIC_KINETIC = 0,
  MBS_STATIC_DRAIN = 1,
  MBS_STATIC_METHOD_COUNT
} mbsStaticMethod;

/// Options of the static solve (config group `static`, docs/model.md).
typedef struct {
  int method;      ///< mbsStaticMethod (default kinetic)
  mbsReal dt;      ///< pseudo-time step h [s] (default 1e-3)
  mbsReal ke_tol;  ///< stop when the kinetic energy is below this [J] (default 1e-10) ...
  mbsReal dq_tol;  ///< ... and the largest coordinate change per step is below this (1e-10)
  int max_iter;    ///< cap on forward-dynamics evaluations (default 1000000)
  mbsReal omega_d; ///< damping frequency of the drain operator [rad/s] (default 1)
  int history;     ///< samples kept of the energy history (>= 2, default 1000; decimated)
} mbsStaticOpt;

/// Why the solve stopped (a numerical outcome, not an error).
typedef enum { MBS_STATIC_CONVERGED = 1, MBS_STATIC_MAXITER = -1 } mbsStaticReason;

/// Forward dynamics for the static solve: at state \p s write the joint accelerations \p qdd (nv)
/// and energy[0] = kinetic energy of that state; if \p want_pe, also energy[1] = its potential
/// energy (the loop asks only at history samples and at the end, because a distributed potential
/// energy needs world poses the engine does not otherwise form). Every process that runs the loop
/// must get the same values.
typedef mbsErr (*mbsStaticForwardFn)(void *ctx, mbsState *s, int want_pe, mbsReal *qdd,
                                     mbsReal *energy);

/// The solver: options, scratch and results. Fields below "results" are valid after
/// mbs_staticSolve.
typedef struct {
  const mbsModel *m;
  mbsStaticOpt opt;
  // scratch (allocated by mbs_staticCreate; the loop never allocates)
  mbsReal *qdd; ///< (nv) accelerations of the last evaluation
  mbsReal *dq;  ///< (nv) tangent displacement of the last step, q_i - q_{i-1}
  /// called after every evaluation of the loop when set (NULL by mbs_staticCreate): evaluations
  /// so far, kinetic energy, max |q_i - q_{i-1}|; a verb prints progress from it
  void (*progress)(void *ctx, int it, double ke, double dq);
  void *progress_ctx;
  // results
  int reason;      ///< mbsStaticReason
  int iterations;  ///< forward-dynamics evaluations in the loop
  int resets;      ///< velocity resets (kinetic method)
  mbsReal ke;      ///< kinetic energy when the loop stopped [J]
  mbsReal ke_max;  ///< largest kinetic energy seen [J]
  mbsReal pe0;     ///< potential energy of the initial state [J]
  mbsReal pe;      ///< potential energy at the equilibrium [J]
  mbsReal dq_max;  ///< max |q_i - q_{i-1}| of the last step
  mbsReal qdd_res; ///< max |q̈| at the equilibrium with q̇ = 0 (0 at an exact equilibrium)
  mbsReal wall;    ///< wall time of the solve [s]
  // energy history, decimated: a sample every hist_stride evaluations, at most opt.history
  int nhist;        ///< samples stored
  int hist_stride;  ///< evaluations between samples (doubles when the buffer fills)
  int *hist_iter;   ///< (opt.history) evaluation index of each sample
  mbsReal *hist_ke; ///< (opt.history) kinetic energy
  mbsReal *hist_pe; ///< (opt.history) potential energy
} mbsStatic;

/// Default options.
void mbs_staticOptDefault(mbsStaticOpt *opt);
/// Name of a drainage operator ("kinetic", "drain"); mbs_staticMethodFromName gives -1 if unknown.
const char *mbs_staticMethodName(int method);
int mbs_staticMethodFromName(const char *name);

/// Allocate a solver for \p m (all scratch and the history buffers).
/// \return MBS_OK; MBS_ERR_INPUT for invalid options; MBS_ERR_NOMEM.
mbsErr mbs_staticCreate(const mbsModel *m, const mbsStaticOpt *opt, mbsStatic **st);

/// Drain the energy from state \p s (updated in place: on return s->q is the equilibrium and
/// s->qd is zero). Runs one more evaluation at the final q with q̇ = 0 for pe and qdd_res.
/// Local; collective only in the sense that \p fwd may communicate.
/// \return MBS_OK (whether or not it converged: see st->reason); the callback's error;
///         MBS_ERR_NUMERIC when the energy becomes NaN/Inf (step too large).
mbsErr mbs_staticSolve(mbsStatic *st, mbsState *s, mbsStaticForwardFn fwd, void *ctx);

/// Free and NULL (NULL is a no-op).
void mbs_staticDestroy(mbsStatic **st);

/// Kinetic and potential energy summed over bodies [b0, b1) (position and velocity stages of
/// those bodies must be present in \p w): the serial total with b0 = 0, b1 = nbody, or one
/// rank's share of a distributed sum.
void mbs_staticEnergy(const mbsModel *m, const mbsState *s, const mbsWork *w, int b0, int b1,
                      mbsReal *ke, mbsReal *pe);

/// Context of mbs_staticForwardSerial.
typedef struct {
  const mbsModel *m;
  mbsWork *w;
} mbsStaticSerial;

/// The serial callback: mbs_forward with m->opt.solver (aba or crba) and the energies of all
/// bodies. \p ctx is an mbsStaticSerial.
mbsErr mbs_staticForwardSerial(void *ctx, mbsState *s, int want_pe, mbsReal *qdd, mbsReal *energy);

#endif
