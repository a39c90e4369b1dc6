/// \file flex_run.h
/// What the flexible run (parallel/flex_run.c: accel, run, static on the serial oracle or the
/// recursive algorithm) shares with its trajectory output (parallel/flex_out.c: trajectory.csv,
/// or trajectory.h5 and trajectory.xmf). Private to them (docs/flexible.md 6, docs/outputs.md).
#ifndef MBSP_FLEX_RUN_H
#define MBSP_FLEX_RUN_H

#include "cli.h"
#include "flex_cfs_par.h"
#include "flex_drive.h"
#include "flex_par.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_flex.h"
#include "mbspar/mbs_model.h"
#include "mbspar/mbs_report.h"

typedef struct {
  const mbsModel *m;
  const mbsConfig *cfg;
  mbsFlexOracle *o;    ///< the dense oracle, or NULL when a is used
  mbsFlexOracle *lo;   ///< closed loops on another method: the dense oracle of the projection
  mbsFlexAba *a;       ///< the recursive algorithm (large undriven accel and run), or NULL
  mbspFlexPar *par;    ///< solver.method = schur: the ranges over the ranks (flex_par.h), or NULL
  mbsFlexCfs *cfs;     ///< a constraint-force method at one rank (src/flex_cfs.c; a too), or NULL
  mbspFlexCfsPar *fcp; ///< the same at several ranks (flex_cfs_par.h; a too), or NULL
  int cfsm;            ///< its MBS_FCFS_* method
  mbspComm *cfscomm;   ///< the one-rank communicator cfs's petsc solves on
  mbspFlexDrive dr;    ///< driven joints (run only; flex_drive.h)
  double *xd;          ///< (nx) scratch: the state with the driven joints on their profiles
  int nq, nv, ne, nx;  ///< sizes: nx = nq + ne + nv + ne, + 1 with drives (their work W, x[nx - 1])
  double *ydd;         ///< (nv + ne)
  double *k[7], *xs, *xn, *err; ///< integrator stages and scratch (nx each)
  long evals, steps, rejected;
  double t, h;      ///< time and (dp5) the next step
  double E0, drift; ///< energy at the start of this run and the largest |E - E0|
  double emax;      ///< largest elastic energy
  double cmax;      ///< closed loops: the largest closure error max |c| after a step (m, rad)
  long nproj;       ///< closed loops: Newton steps of the projections
} mbspFlexRun;

/// solver.method = schur (explicit or auto's choice): the ranges over the ranks (flex_par.h).
int mbsp_flexPart(const mbsConfig *cfg, const mbsModel *m);
/// The constraint-force method of m->opt (docs/flexible.md 13), or -1.
int mbsp_flexCfsMethod(const mbsConfig *cfg, const mbsModel *m);
/// The initial state: q0, qd0, eta = etad = 0.
void mbsp_flexInitial(const mbspFlexRun *R, double *x);
/// The reports' "auto", "auto_rule", "auto_idle_ranks" (inside the solver object).
void mbsp_flexAutoJson(mbsJson *j, const mbspFlexRun *R);
/// The reports' "nodes" of state x.
void mbsp_flexNodesJson(mbsJson *j, const mbspFlexRun *R, const double *x);
/// `mbspar static` of a flexible model (parallel/flex_verbs.c, docs/flexible.md 8): the drainage
/// replicated on every rank of \p comm, the Newton polish's columns split over them, rank 0
/// reports. Collective.
mbsErr mbsp_flexStatic(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, mbspFlexRun *R,
                       double *x);

/// World position and rotation (3 x 3 row-major) of named node \p n of flexible body \p k at
/// state \p x = [q; eta; qd; etad].
mbsErr mbsp_flexNodePose(const mbspFlexRun *R, const double *x, int k, int n, double *p,
                         double *Rn);
/// World rotations (nbody x 9) and origins (nbody x 3) of every body frame at state \p x.
mbsErr mbsp_flexBodyPoses(const mbspFlexRun *R, const double *x, double *Rw, double *pw);

/// One fixed step (MBS_INT_EULER or MBS_INT_RK4) of size \p h from state \p x at time R->t into
/// R->xn (the drives, if any, on their profiles at the stage times).
mbsErr mbsp_flexFixed(mbspFlexRun *R, int method, const double *x, double h);
/// The inverse verb on a flexible model (flex_inverse.c; docs/flexible.md 12): R has the dense
/// oracle and R->cfg; \p x holds R->nx + 2 values (the state grows by the drives' work).
mbsErr mbsp_flexInverse(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, mbspFlexRun *R,
                        double *x);

/// The trajectory output of a flexible run (flex_out.c): trajectory.csv (output.format csv) or
/// trajectory.h5 with trajectory.xmf (hdf5).
typedef struct mbspFlexOut mbspFlexOut;
/// Open the trajectory of run \p R in \p dir: a new file, or with \p restart the file of the run
/// a checkpoint at time R->t continues (CSV: appended; HDF5: the rows after R->t dropped).
/// \p ndrive: the drives' columns of /energy (0: kinetic, potential, elastic, total; else also
/// work, total_minus_work). Local (one rank).
mbsErr mbsp_flexOutOpen(mbspFlexRun *R, const char *dir, int restart, mbspFlexOut **o);
/// One output row at state \p x and time R->t; \p ev: the energy.csv values (kinetic, potential,
/// elastic, total, [work, total_minus_work]), \p nev of them.
mbsErr mbsp_flexOutRow(mbspFlexOut *o, const double *x, const double *ev, int nev);
/// Everything written so far on disk (checkpoints, signal stops).
mbsErr mbsp_flexOutFlush(mbspFlexOut *o);
/// Close: HDF5 renamed into place and its XDMF written. \p ok = 0 (an error path): close without
/// the XDMF, keeping what was written. Frees and NULLs *o (NULL is a no-op).
mbsErr mbsp_flexOutClose(mbspFlexOut **o, int ok);

#endif
