/// \file mbs_flexmodes.h
/// `mbspar modes` and `static` on models with flexible bodies (src/flex_modes.c, flex_static.c;
/// docs/flexible.md 7, 8): the
/// linearised system of the serial oracle in [q; eta], in the rigid verb's mbsModes (solved by
/// mbs_modesSolve, reported by parallel/verb_modes.c).
#ifndef MBS_FLEXMODES_H
#define MBS_FLEXMODES_H

#include "mbs_flex.h"
#include "mbs_modes.h"
#include "mbs_static.h"

/// Allocate for the oracle's n = nv + modal coordinates (no perturbed state: md->sp is NULL).
mbsErr mbs_flexModesCreate(const mbsModel *m, const mbsFlexOracle *o, mbsModes **md);
/// M, K, r, qdd at (q, eta) at rest.
mbsErr mbs_flexModesLinearise(const mbsModel *m, mbsFlexOracle *o, const mbsReal *q,
                              const mbsReal *eta, mbsModes *md);
/// As mbs_flexModesLinearise with K's columns split over the parts of \p cs (NULL: one part;
/// mbs_colsplit.h): the same bits on every part as one part alone. Collective over \p cs.
mbsErr mbs_flexModesLinearisePart(const mbsModel *m, mbsFlexOracle *o, const mbsReal *q,
                                  const mbsReal *eta, mbsModes *md, const mbsColSplit *cs);

/// The static solve of a flexible model (src/flex_static.c; docs/flexible.md 8).
typedef struct {
  int reason;      ///< mbsStaticReason
  int iterations;  ///< oracle evaluations
  int resets;      ///< velocity resets (kinetic)
  int newton;      ///< Newton steps of the polish after a converged drainage
  mbsReal h;       ///< pseudo-time step used
  mbsReal ke;      ///< kinetic energy when it stopped
  mbsReal dq_max;  ///< largest coordinate change of the last step
  mbsReal qdd_res; ///< max |acceleration| at rest at the result
  mbsReal pe0, pe; ///< potential energy (gravity, springs, elastic) before and after
  mbsReal wall;    ///< seconds
  int steps;       ///< drainage steps (evaluations: iterations)
  int quasi;       ///< 1: the joints drained with the elastic coordinates held quasi-statically
  /// in: called after every drainage step with the evaluations so far, the kinetic energy and the
  /// largest step (NULL: none); kept by mbs_flexStaticSolve, which zeroes the rest
  void (*progress)(void *ctx, int it, double ke, double dq);
  void *progress_ctx;
  /// in: the Newton polish's columns split over the ranks (NULL: one rank; kept like progress).
  /// The drainage itself runs replicated: every part the same steps on the same bits.
  const mbsColSplit *split;
} mbsFlexStatic;

/// The pseudo-time step: opt->dt or 0.5 / (the highest frequency of the flexible bodies' reduced
/// K, M), whichever is smaller.
mbsErr mbs_flexStaticStep(const mbsModel *m, const mbsStaticOpt *opt, mbsReal *h);
/// Drain state x = [q; eta; qd; etad] (in place) to rest at a minimum of the potential energy.
mbsErr mbs_flexStaticSolve(const mbsModel *m, mbsFlexOracle *o, const mbsStaticOpt *opt, mbsReal *x,
                           mbsFlexStatic *res);
/// `modes --at static`: drain (q, eta) (in place, q of nq, eta of the modal coordinates) from
/// rest to the equilibrium; a warning line on stderr when it does not converge.
/// \p cs: the Newton polish's columns split over the parts (NULL: one part; only part 0 warns).
/// Collective over \p cs.
mbsErr mbs_flexStaticAt(const mbsModel *m, mbsFlexOracle *o, const mbsStaticOpt *opt, mbsReal *q,
                        mbsReal *eta, const mbsColSplit *cs);

#endif
