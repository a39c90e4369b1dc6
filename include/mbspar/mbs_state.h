/// \file mbs_state.h
/// The state: only what a restart needs.
#ifndef MBS_STATE_H
#define MBS_STATE_H

#include "mbs_model.h"

#define MBS_WARM_HIST 4 ///< number of previous constraint-force solutions kept for warm start
#define MBS_MAX_STAGE 8 ///< most integrator stages with a warm-start history of their own

typedef struct {
  mbsReal time; ///< simulated time
  mbsReal *q;   ///< (nq) joint position coordinates
  mbsReal *qd;  ///< (nv) joint velocities
  mbsReal *tau; ///< (nv) extra applied joint forces (user input, added to model forces)
  // warm-start history of the constraint forces, one ring buffer per integrator stage (a
  // Runge–Kutta stage sequence is smooth in the step number; the stages of one step are not)
  int nstage;                                   ///< stage slots in use (1: no stages)
  int stage;                                    ///< slot of the next evaluation, < nstage
  int nhist[MBS_MAX_STAGE];                     ///< valid entries per slot (0..MBS_WARM_HIST)
  int hist_head[MBS_MAX_STAGE];                 ///< newest entry per slot
  mbsReal hist_t[MBS_MAX_STAGE][MBS_WARM_HIST]; ///< times of the stored solutions
  mbsReal *hist_lam; ///< (nstage x MBS_WARM_HIST x mbs_stateHistWidth) stored solutions
} mbsState;

/// Entries of one stored solution in the warm-start history: the tree's constraint components,
/// then the closure equations (rows of the system with solver.loops = rows, docs/loops.md 8.4).
static inline int mbs_stateHistWidth(const mbsModel *m) {
  return m->nlam + m->nlam_loop;
}

/// Allocate a state for \p m and set it to the model's initial state.
mbsErr mbs_stateCreate(const mbsModel *m, mbsState **s);
/// Use \p nstage warm-start slots (one per integrator stage; 1 for single evaluations); clears
/// the history. \return MBS_ERR_NOMEM, or MBS_ERR_INTERNAL for nstage outside 1..MBS_MAX_STAGE.
mbsErr mbs_stateSetStages(const mbsModel *m, mbsState *s, int nstage);
/// Reset to the model's initial state (q0, qd0, t = 0, no history).
void mbs_stateReset(const mbsModel *m, mbsState *s);
/// Free and NULL (NULL is a no-op).
void mbs_stateDestroy(mbsState **s);

#endif
