/// \file mbs_state.h
/// The state: only what a restart needs.
#ifndef MBS_STATE_H
#define MBS_STATE_H

#include "mbs_model.h"

#define MBS_WARM_HIST 4 ///< number of previous constraint-force solutions kept for warm start

typedef struct {
  mbsReal time; ///< simulated time
  mbsReal *q;   ///< (nq) joint position coordinates
  mbsReal *qd;  ///< (nv) joint velocities
  mbsReal *tau; ///< (nv) extra applied joint forces (user input, added to model forces)
  // warm-start history of the constraint forces (ring buffer, newest at hist_head)
  int nhist;                     ///< number of valid entries (0..MBS_WARM_HIST)
  int hist_head;                 ///< index of the newest entry
  mbsReal hist_t[MBS_WARM_HIST]; ///< times of the stored solutions
  mbsReal *hist_lam;             ///< (MBS_WARM_HIST x nlam) stored solutions
} mbsState;

/// Allocate a state for \p m and set it to the model's initial state.
mbsErr mbs_stateCreate(const mbsModel *m, mbsState **s);
/// Reset to the model's initial state (q0, qd0, t = 0, no history).
void mbs_stateReset(const mbsModel *m, mbsState *s);
/// Free and NULL (NULL is a no-op).
void mbs_stateDestroy(mbsState **s);

#endif
