/// \file engine_impl.h
/// The distributed engine's state and what its files share (engine.c: the communication hooks and
/// the evaluation; engine_setup.c: the decomposition, neighbour lists, halos, creation). Private
/// to them.
#ifndef MBSP_ENGINE_IMPL_H
#define MBSP_ENGINE_IMPL_H
#include "mbspar/mbs_engine.h"
#include "mbspar/mbs_solvertype.h"

struct mbspEngine {
  mbspComm *comm;
  const mbsModel *m;
  int rank, size;
  int *start; // (size + 1) first body of each rank
  int b0, b1;
  mbsWork *w;
  mbsCfs *c;
  mbsCfsComm hooks;

  // neighbour ranks and per-neighbour body lists (grouped by neighbour, sorted by body)
  int nnbr, *nbr;
  int *up_sadr, *up_s; // owned bodies whose parent is on nbr k
  int *up_radr, *up_r; // bodies of nbr k whose parent is owned here
  int *dn_sadr, *dn_s; // owned bodies with children on nbr k
  int *dn_radr, *dn_r; // bodies of nbr k that parent owned bodies
  mbspHalo *hup, *hdn, *hvel;

  // velocity prefix
  int *gho;        // (nbody) ghost parent at the top of each owned body's local path, -1: ground
  mbsReal *Xg;     // (nbody x 12) transform ghost -> body
  mbsReal *vloc;   // (nbody x 6) velocity with the ghost velocity set to zero
  int use_scan;    // every rank owns one path segment of a chain: velocity prefix by Exscan
  int defer_poses; // mbsp_engineForward: the ghost poses after the solve
  int ghosted;     // some owned body has its parent on another rank (else every pose and velocity
                   // of the rank is known before the prefix)
  // the tree pipeline as a data flow: the segment for neighbour k goes out once the segments of
  // the kin_need[k] neighbours its bodies' ghost parents come from are in; kin_dep lists, per
  // neighbour j, the segments waiting for j's (CSR kin_dadr)
  int *kin_need, *kin_cnt, *kin_dadr, *kin_dep;

  // loops and spring-dampers (models built whole on every rank; docs/loops.md 8)
  int nlb, *lb;   // the bodies of the loops and spring-dampers, each once
  double *lbuf;   // (nlb x 18) their poses and velocities, summed over the ranks
  mbsReal *lsave; // velocity-stage terms of the owned bodies kept over the homogeneous solves
  mbsState *scur; // the state of the evaluation under way (the loop solve's tree solves)
  // the overlapped factor (docs/formulation.md 4.4): the state of mbsp_engineForward's
  // evaluation (NULL: none; models without loops), the bound solver taking slices of its factor
  // in the kinematics prefix's waits (mbsp_engineOverlapHook)
  mbsState *ovl_s;
  const mbsSolverType *ovl_t;
  void *ovl_self;
};

/// owner rank of local body b (through its global index)
int mbsp_engineOwner(const mbspEngine *e, int b);
/// the halo and reduction hooks the engine hands to mbs_cfsSolve (ctx: the engine)
mbsErr mbsp_engineHaloUpHook(void *ctx, mbsReal *up);
mbsErr mbsp_engineHaloDownHook(void *ctx, mbsReal *acc);
mbsErr mbsp_engineReduceHook(void *ctx, double *v, int n);
/// engine_kin.c: the position stage of the owned bodies (joints; poses where no ghost parent is
/// above them), the velocities across ranks (scan or pipeline; the poses below a ghost parent
/// too unless e->defer_poses) and those deferred poses
void mbsp_enginePosition(mbspEngine *e, const mbsState *s);
mbsErr mbsp_kinematics(mbspEngine *e, const mbsState *s);
void mbsp_enginePoses(mbspEngine *e);

#endif
