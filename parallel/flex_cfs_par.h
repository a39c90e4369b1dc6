/// \file flex_cfs_par.h
/// The constraint-force system with flexible bodies over the ranks (src/flex_cfs.c;
/// docs/flexible.md 13): every rank holds the whole model and owns a contiguous body range; the
/// operator's exchanges and the dots are sums over the ranks.
#ifndef MBSP_FLEX_CFS_PAR_H
#define MBSP_FLEX_CFS_PAR_H

#include "mbspar/mbs_parallel.h"
#include "flex_cfs.h"

/// Give f this rank's range of the bodies (equal counts, in topological order) and the sums
/// over comm. Collective.
mbsErr mbsp_flexCfsBind(mbspComm *comm, mbsFlexCfs *f, const mbsModel *m);

/// ydd by method: petsc here (parallel/flex_cfs_petsc.c, KSP on the operator), the others by
/// mbs_flexCfsAccel. Collective over comm (the communicator f was bound to; one process: any).
mbsErr mbsp_flexCfsSolve(mbspComm *comm, mbsFlexCfs *f, int method, double tol, const double *q,
                         const double *y, const double *eta, double *ydd, int *it);

/// The verbs at several ranks (as flex_par.h's Begin/End): every rank builds the system and
/// binds its range; the workers (*worker = 1) serve rank 0's evaluations until it stops them and
/// return; rank 0 gets *par and a communicator of its own (*self) for the verb's loop.
typedef struct mbspFlexCfsPar mbspFlexCfsPar;
mbsErr mbsp_flexCfsParBegin(mbspComm *comm, const mbsModel *m, int method, double tol,
                            mbspFlexCfsPar **par, mbspComm **self, int *worker);
/// rank 0: ydd (N) at (q, y, eta) by the ranges of every rank (the state sent to them).
mbsErr mbsp_flexCfsParAccel(mbspFlexCfsPar *p, const double *q, const double *y, const double *eta,
                            double *ydd);
/// rank 0: stop the workers, free, agree e over job.
mbsErr mbsp_flexCfsParEnd(mbspComm *job, mbspFlexCfsPar **par, mbspComm **self, mbsErr e);
void mbsp_flexCfsParDestroy(mbspFlexCfsPar **p);

#endif
