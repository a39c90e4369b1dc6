/// \file bodyout.h
/// Per-body outputs of `mbspar run` (docs/outputs.md): at every output row the ranks that own
/// the bodies compute the world pose of each body frame, its centre of mass and (HDF5) its
/// velocity and the joint wrench, from the state of that row. CSV mode gathers the pose rows to
/// rank 0; HDF5 mode writes them from every rank (h5out.c). Private to the parallel layer.
#ifndef MBSP_BODYOUT_H
#define MBSP_BODYOUT_H

#include <stdio.h>
#include "h5out.h"
#include "mbspar/mbs_engine.h"
#include "mbspar/mbs_poses.h"

typedef struct mbspBodyOut mbspBodyOut;

/// Create the per-body outputs of bodies [b0, b1) of this rank. \p eng: the distributed engine,
/// or NULL for the serial baselines (rank 0 owns every body and evaluates alone). \p full: 1 =
/// velocities and joint wrenches too (one extra forward-dynamics evaluation per output row, on
/// its own state, so the run itself is not changed: warm-start history, solver caches, the
/// solver's initial guess, counters and timers are kept), 0 = poses only (kinematics, no
/// solve). Collective.
mbsErr mbsp_bodyOutCreate(mbspComm *comm, const mbsModel *m, mbspEngine *eng, int b0, int b1,
                          int full, mbspBodyOut **bo);
/// Compute the outputs at time \p t of the state whose owned slices are \p q_owned and
/// \p qd_owned (the coordinates and rates of bodies [b0, b1)). Collective.
mbsErr mbsp_bodyOutCompute(mbspBodyOut *bo, double t, const double *q_owned,
                           const double *qd_owned);
/// The state of the output rows' evaluations (its tau: joint forces of the row's time). Local.
mbsState *mbsp_bodyOutState(mbspBodyOut *bo);
/// Gather the pose rows (MBS_POSE_NCOMP per body) of every body to rank 0 into \p all
/// (nbody x MBS_POSE_NCOMP on rank 0, ignored elsewhere). Collective.
mbsErr mbsp_bodyOutGather(mbspBodyOut *bo, double *all);
/// Declare the per-body HDF5 datasets (/bodies/..., /joints/...) and write /model/...
/// Collective.
mbsErr mbsp_bodyOutH5(mbspBodyOut *bo, mbspH5 *h);
/// Hand the last computed rows to the next mbsp_h5Append. Local.
void mbsp_bodyOutH5Row(mbspBodyOut *bo, mbspH5 *h);
/// CSV header columns of the pose rows of every body: ",pos_B_x,...". Rank 0. Local.
void mbsp_bodyOutCsvHeader(const mbsModel *m, FILE *f);
/// Write DIR/bodies.csv, the bodies and their parents (CSV runs; rank 0). Local.
mbsErr mbsp_bodyOutTopology(const mbsModel *m, const char *path);
/// Free and NULL (NULL is a no-op). Local.
void mbsp_bodyOutDestroy(mbspBodyOut **bo);

#endif
