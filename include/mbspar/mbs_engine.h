/// \file mbs_engine.h
/// The distributed forward-dynamics engine: one contiguous range of bodies per MPI rank, the
/// constraint-force system solved by the iterative methods of mbs_cfs.h with nearest-neighbour
/// halo exchanges and allreduces. No MPI types here.
#ifndef MBS_ENGINE_H
#define MBS_ENGINE_H

#include "mbs_cfs.h"
#include "mbs_parallel.h"

typedef struct mbspEngine mbspEngine;

/// Decomposition summary of one rank.
typedef struct {
  int b0, b1;      ///< owned bodies [b0, b1) (indices of the engine's model)
  int g0, g1;      ///< the same as global body indices
  int nnbr;        ///< neighbour ranks
  int cut_up;      ///< owned bodies whose parent is remote
  int cut_down;    ///< owned bodies with remote children
  double weight;   ///< load-balance weight of the range
  int prefix_scan; ///< 1: velocity prefix by MPI_Exscan (O(log P)); 0: rank pipeline
  int segments;    ///< thread segments of the exact solver on this rank (0: not set up)
  int merge_scan;  ///< exact solver: 1 cut joints merged by the radix-k scan
} mbspDecompInfo;

/// Split the model over the ranks (contiguous body ranges balanced by per-joint cost), set up
/// halos and the local workspaces. More ranks than bodies is an input error. Collective.
/// \param[in] halo_mode mbspHaloMode
mbsErr mbsp_engineCreate(mbspComm *comm, const mbsModel *m, int halo_mode, mbspEngine **e);
/// One forward-dynamics evaluation at state s (every rank holds the whole state; each computes
/// its own bodies). Writes the owned part of the engine workspace. Collective.
mbsErr mbsp_engineForward(mbspEngine *e, mbsState *s);
/// Poses and velocities of the owned bodies at state s, without a solve: the position stage and
/// the kinematics across ranks of mbsp_engineForward. Writes the owned entries of w->xpar, xmat,
/// xpos, sdof, cvel, cacc, cbias, qfrc of the engine workspace. Collective.
mbsErr mbsp_engineKinematics(mbspEngine *e, mbsState *s);
/// mbsp_engineKinematics, then the poses and velocities of the bodies of the loops and
/// spring-dampers on every rank (as mbsp_engineForward gathers them): enough for
/// mbs_loopViolation on a distributed loop model. Collective.
mbsErr mbsp_engineLoopPoses(mbspEngine *e, mbsState *s);
/// Gather qdd (nv), lam (nlam) and jfrc (nbody x 6, body coordinates) to rank 0 (NULL pointers
/// allowed on other ranks). Collective.
mbsErr mbsp_engineGather(mbspEngine *e, double *qdd, double *lam, double *jfrc);
/// The same for a subset: \p what bits 1 qdd, 2 lam, 4 jfrc (the same on every rank). Collective.
mbsErr mbsp_engineGatherSome(mbspEngine *e, double *qdd, double *lam, double *jfrc, int what);
/// The engine's workspace (owned entries valid) and decomposition. Local.
mbsWork *mbsp_engineWork(mbspEngine *e);
mbsCfs *mbsp_engineCfs(mbspEngine *e);
/// The engine's communicator. Solvers of the parallel layer receive the engine as the context of
/// their create (mbs_solvertype.h) and communicate through it (mbsp_* of mbs_parallel.h). Local.
mbspComm *mbsp_engineComm(mbspEngine *e);
/// The decomposition: first body of each rank, size + 1 entries (rank r owns
/// [starts[r], starts[r+1])). Local.
const int *mbsp_engineStarts(const mbspEngine *e);
void mbsp_engineDecomp(const mbspEngine *e, mbspDecompInfo *info);
/// Timers of this rank: communication phases are counted in w->timer (comm.halo,
/// comm.allreduce, comm.prefix). Local.
/// Free and NULL. Collective (frees communicator resources).
void mbsp_engineDestroy(mbspEngine **e);

/// Apply y = A x through the distributed operator (tests). Collective.
mbsErr mbsp_engineApply(mbspEngine *e, const double *x, double *y);
/// Built-in halo validation: exchanges index-encoded values (body*16 + component) through the
/// up, down and velocity halos and counts entries that did not arrive exactly. Collective.
mbsErr mbsp_engineHaloCheck(mbspEngine *e, long *nbad);
/// The engine's up halo on a per-body 6-vector array (model indices): owned bodies whose parent
/// is remote send theirs, the remote children's arrive at their ghost entries. Collective.
mbsErr mbsp_engineHaloUp(mbspEngine *e, mbsReal *up);
/// The engine's down halo on a per-body 6-vector array (model indices): owned bodies with
/// children on other ranks send theirs, the remote parents' arrive at their ghost entries.
/// Collective.
mbsErr mbsp_engineHaloDown(mbspEngine *e, mbsReal *down);
/// Sum over ranks through the engine's communicator. Collective.
mbsErr mbsp_engineReduce(mbspEngine *e, double *v, int n);

#endif
