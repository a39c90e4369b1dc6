/// \file integrator.c
/// The integrator table: one row per integrator.method (mbs_solver.h). The methods themselves:
/// PETSc TS (euler, rk4, dp5; parallel/petsc_ts.c) and the Adams–Bashforth–Moulton core of
/// src/abm.c, registered as a TS type there.
#include "mbspar/mbs_abm.h"
#include "mbspar/mbs_solver.h"

const char *const mbs_integrator_names[] = {"euler", "rk4", "dp5", "abm", NULL};

static const mbsIntegratorType mbs_integrators[] = {
    [MBS_INT_EULER] = {"euler", 1, 0, 0, "explicit Euler, fixed step dt"},
    [MBS_INT_RK4] = {"rk4", 4, 0, 0, "classical Runge-Kutta 4, fixed step dt (the default)"},
    [MBS_INT_DP5] = {"dp5", 7, 1, 600, "Dormand-Prince 5(4), adaptive (integrator.tol)"},
    // predict and correct: two evaluations per step (half rk4's warm-start slots); its kmax + 2
    // differences and six work vectors of the state and the checkpoint's copy take about what
    // that saves (measured: docs/model.md "Memory")
    [MBS_INT_ABM] = {"abm", 2, 1, 0,
                     "Adams-Bashforth-Moulton PECE, variable step and order 1-12 "
                     "(integrator.tol)"},
};

const mbsIntegratorType *mbs_integratorType(int id) {
  if (id < 0 || id >= (int)(sizeof mbs_integrators / sizeof mbs_integrators[0])) return NULL;
  return &mbs_integrators[id];
}

// Dormand–Prince 5(4) (Hairer, Nørsett & Wanner, Solving ODEs I, II.5): the stages' a_ij, the
// fifth-order weights b (= the last stage's row: first same as last) and b - b̂ for the error
const double mbs_dp5A[7][6] = {
    {0},
    {1.0 / 5},
    {3.0 / 40, 9.0 / 40},
    {44.0 / 45, -56.0 / 15, 32.0 / 9},
    {19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729},
    {9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656},
    {35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84}};
const double mbs_dp5E[7] = {71.0 / 57600,      0,          -71.0 / 16695, 71.0 / 1920,
                            -17253.0 / 339200, 22.0 / 525, -1.0 / 40};
