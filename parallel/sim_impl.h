/// \file sim_impl.h
/// `mbspar run`'s state and the functions its files share (sim.c: the loop and the report;
/// sim_rhs.c: the right side and loop projection; sim_ckpt.c: flushing, checkpoints, restarts;
/// sim_setup.c: allocations, the output directory and the restart's checks; sim_out.c and the
/// writers: the output files). Private to them.
#ifndef MBSP_SIM_IMPL_H
#define MBSP_SIM_IMPL_H
#include "bodyout.h"
#include "cli.h"
#include "guard.h"
#include "mbspar/mbs_checkpoint.h"
#include "mbspar/mbs_fault.h"
#include "mbspar/mbs_finite.h"
#include "mbspar/mbs_loops.h"
#include "mbspar/mbs_motion.h"
#include "mbspar/mbs_solvertype.h"
#include "mbspar/mbs_textfile.h"
#include "mbspar/mbs_urdf.h"
#include "petsc_ts.h"
#include "rankreport.h"
#include "sim.h"
#include "simout.h"

typedef struct {
  const mbspSimArgs *a;
  const mbsModel *m;
  mbspComm *comm;
  int rank, size, serial;
  mbspEngine *eng;
  mbsWork *w;  // the workspace of the evaluations (engine's, or rank 0's for aba/crba)
  mbsState *s; // every rank: owned slices authoritative
  mbsTimer tdummy[MBS_TIMER_COUNT], *tim;
  int b0, b1, q0, q1, v0, v1, l0, l1, nloc;
  mbspTs *ts;
  double *y;
  // rank 0: gathered state for outputs and checkpoints
  mbsState *sout;
  mbsWork *wout;
  int *qcnt, *qdsp, *vcnt, *vdsp, *lcnt, *ldsp;
  mbspOut out;       // energy.csv and the trajectory writer of output.format (sim_out.c)
  long unflushed;    // output rows since the last flush (every rank)
  double last_flush; // rank 0: wall-clock time of the last flush
  mbspBodyOut *bo;   // per-body outputs (poses ...) of the owned bodies (bodyout.c)
  char dir[4096];
  char made[4096]; // the topmost directory of dir that this run created (rank 0), or ""
  int claimed;     // rank 0: the output files are this run's (a failed run may write its run.json)
  // bookkeeping (identical on every rank except the local work partial sums)
  double work, pprev; // work of the nonconservative forces and the power of the last step: the
                      // same on every rank (the power is summed over the ranks at every step, so
                      // a restart continues the sum bitwise, whatever was summed before)
  long evals, iters, nonconv, evals_out, iters_out;
  int irounds; // schur: the most interface rounds of an evaluation (this rank; all at the end)
  long restarts, stagnated; // restarts from b - A x; stagnated solves (counted in nonconv too)
  int warned, stage_count;
  double t_start, wall0, last_progress;
  long step_start; // first step of this invocation (progress rate)
  int live;        // progress display: -1 not decided, 0 plain lines, 1 live line
  // closed loops (serial baselines, rank 0; docs/loops.md): projection after each step and the
  // closure error at the output rows
  long proj_steps, proj_iters, proj_fail;
  // the constraint-force methods on a model with loops or spring-dampers (built whole on every
  // rank): the whole state on every rank after each step (projection, the dampers' power)
  mbsState *sfull;
  mbsWork *wfull;
  double *fbuf;
  double proj_dq, proj_dqd, viol_pos, viol_rot, viol_vel, last_pos, last_rot, last_vel;
  // the accuracy guard at the first and the last evaluation (sim_guard.c)
  mbspGuardPair guard;   // rank 0
  double *gbuf, gtime;   // this rank's slices of the last evaluation's q, qd, qdd; its time
  int greason, gchecked; // gchecked: the first evaluation's check ran (every rank alike)
  // URDF joint limits (rank 0, docs/urdf.md): per limited revolute/prismatic joint its
  // coordinate, range, name, whether the last output row had it outside, and its crossings
  int nlim, lim_warned;
  int *lim_q;
  double *lim_lo, *lim_hi;
  const char **lim_name;
  unsigned char *lim_out;
  long *lim_cross;
  // driven joints (the config's `drive`, sim_drive.c; rank 0, serial methods): dofs, position
  // coordinates; in drv_buf the responses and per drive its initial coordinate, the profile's
  // rate and acceleration of the last evaluation, the applied force as given, the driving force
  // of the last evaluation and its largest magnitude, the applied force of the last right side
  int ndrv;
  int *drv_dof, *drv_q;
  double *drv_buf, *drv_a0, *drv_col, *drv_K, *drv_rhs, *drv_q0, *drv_vel, *drv_acc, *drv_base,
      *drv_last, *drv_max, *drv_keep;
  mbsMotion **drv_mo; // (ndrv) profile motion: the file's samples, else NULL
  long drv_solves;
  // model.formulation = natural (sim_natural.c; a replica on every rank): the (p, ṗ) simulation,
  // its projections and rejected steps, the largest constraint violation after a step's
  // projection; at 2+ ranks the distributed solve (nat_run) and the broadcast joint state nat_y
  struct mbsNaturalSim *nat;
  struct mbspNaturalRun *nat_run;
  double *nat_y;
  long nat_proj, nat_rejected;
  double nat_viol;
} mbspSim;

double mbsp_simPower(const mbspSim *S, const mbsReal *qd);
// driven joints (sim_drive.c)
mbsErr mbsp_simDriveSetup(mbspSim *S);
void mbsp_simDriveStart(mbspSim *S);
void mbsp_simDriveFree(mbspSim *S);
mbsErr mbsp_simDriveForward(mbspSim *S, double t);
mbsErr mbsp_simDriveAt(mbspSim *S, double t);
void mbsp_simDriveRates(const mbspSim *S, double *f);
void mbsp_simDriveKeep(mbspSim *S);
void mbsp_simDriveJson(const mbspSim *S, mbsJson *j);
// model.formulation = natural (sim_natural.c)
int mbsp_simNatural(const mbspSimArgs *a);
mbsErr mbsp_simNatCheck(const mbspSimArgs *a);
mbsErr mbsp_simNatCreate(mbspSim *S);
void mbsp_simNatDestroy(mbspSim *S);
mbsErr mbsp_simNatStep(mbspSim *S);
void mbsp_simNatJson(const mbspSim *S, mbsJson *j);
mbsErr mbsp_simProject(mbspSim *S);
mbsErr mbsp_simFull(mbspSim *S);
mbsErr mbsp_simProjectFull(mbspSim *S);
mbsErr mbsp_simRhs(void *ctx, double t, const double *y, double *f);
void mbsp_simPost(void *ctx, double *y);
mbsErr mbsp_simGatherState(mbspSim *S);
mbsErr mbsp_simFlushRows(mbspSim *S, int sync);
int mbsp_simFlushDue(const mbspSim *S);
mbsErr mbsp_simCheckpoint(mbspSim *S, char *path_out, size_t pathlen);
mbsErr mbsp_simRestore(mbspSim *S, const char *path);
void mbsp_simContinueCmd(const mbspSim *S, const char *ck, char *buf, size_t n);
/// mkdir -p \p dir; \p made gets the topmost directory it created ("" if none), so a run that
/// is refused before it claims the directory can remove what it made (mbsp_simUnmake).
mbsErr mbsp_simMkdirs(const char *dir, char *made, size_t n);
/// rmdir \p dir and its parents up to \p made (each only if empty). Local.
void mbsp_simUnmake(const char *dir, const char *made);
mbsErr mbsp_simSetup(mbspSim *S);
mbsErr mbsp_simCheckDir(mbspSim *S);
mbsErr mbsp_simGuardCreate(mbspSim *S);
void mbsp_simGuardDestroy(mbspSim *S);
void mbsp_simGuardKeep(mbspSim *S);
mbsErr mbsp_simGuardCheck(mbspSim *S, int which);

#endif
