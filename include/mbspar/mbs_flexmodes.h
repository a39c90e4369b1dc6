/// \file mbs_flexmodes.h
/// `mbspar modes` on models with flexible bodies (src/flex_modes.c; docs/flexible.md 7): the
/// linearised system of the serial oracle in [q; eta], in the rigid verb's mbsModes (solved by
/// mbs_modesSolve, reported by parallel/verb_modes.c).
#ifndef MBS_FLEXMODES_H
#define MBS_FLEXMODES_H

#include "mbs_flex.h"
#include "mbs_modes.h"

/// Allocate for the oracle's n = nv + modal coordinates (no perturbed state: md->sp is NULL).
mbsErr mbs_flexModesCreate(const mbsModel *m, const mbsFlexOracle *o, mbsModes **md);
/// M, K, r, qdd at (q, eta) at rest.
mbsErr mbs_flexModesLinearise(const mbsModel *m, mbsFlexOracle *o, const mbsReal *q,
                              const mbsReal *eta, mbsModes *md);

#endif
