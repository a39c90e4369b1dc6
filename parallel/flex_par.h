/// \file flex_par.h
/// Flexible models over the ranks (docs/flexible.md 11): the MPI half of src/flex_part.c. Each
/// rank eliminates its contiguous body range; one allreduce sums the interface system of the
/// cut joints (then rank 0's broadcast, so every rank solves the same numbers); a gather brings
/// the accelerations to rank 0.
#ifndef MBSP_FLEX_PAR_H
#define MBSP_FLEX_PAR_H
#include "mbspar/mbs_flex.h"
#include "mbspar/mbs_model.h"
#include "mbspar/mbs_parallel.h"

typedef struct mbspFlexPar mbspFlexPar;

/// Part mbsp_rank of mbsp_size for every rank (each holds the whole model). Collective.
mbsErr mbsp_flexParCreate(mbspComm *comm, const mbsModel *m, mbspFlexPar **out);
/// Local.
void mbsp_flexParDestroy(mbspFlexPar **p);
/// ydd (N = nv + the modal coordinates) at (q, y, eta), complete on rank 0 (other ranks: their
/// own entries). Every rank calls it with the same state; errors agreed. Collective, unless
/// served (mbsp_flexParServe): then rank 0 alone calls it and sends the state to the others.
mbsErr mbsp_flexParAccel(mbspFlexPar *p, const double *q, const double *y, const double *eta,
                         double *ydd);
/// The whole model's kinetic and potential energies (as mbs_flexAbaEnergy) on every rank: the
/// ranges' sums. Collective, or rank 0 alone when served.
mbsErr mbsp_flexParEnergy(mbspFlexPar *p, const double *q, const double *y, const double *eta,
                          double *kin, double *pot);
/// Ranks other than 0: evaluate whatever rank 0 asks (mbsp_flexParAccel, mbsp_flexParEnergy on
/// rank 0 alone, the verb's loop running there) until rank 0 calls mbsp_flexParStop. Rank 0:
/// marks p as served. Collective (a long one).
mbsErr mbsp_flexParServe(mbspFlexPar *p);
/// Rank 0 of a served p: releases the others from mbsp_flexParServe. Collective with them.
mbsErr mbsp_flexParStop(mbspFlexPar *p);
/// The verbs' way (parallel/flex_run.c): creates *par on every rank; ranks other than 0 serve
/// rank 0 until it is done (*worker = 1; the returned code is the job's, agreed); rank 0 gets
/// *self, a communicator of its own (the report still counts the job's ranks) to run the verb
/// on. On an error *par is freed and the error agreed. Collective.
mbsErr mbsp_flexParBegin(mbspComm *comm, const mbsModel *m, mbspFlexPar **par, mbspComm **self,
                         int *worker);
/// mbsp_flexParBegin with the \p k driven dofs \p dof (velocity indices, every rank the same; all
/// dofs of a driven joint): their accelerations are prescribed per evaluation
/// (mbsp_flexParAccelDriven; docs/flexible.md 9). Collective.
mbsErr mbsp_flexParBeginDriven(mbspComm *comm, const mbsModel *m, const int *dof, int k,
                               mbspFlexPar **par, mbspComm **self, int *worker);
/// ydd as mbsp_flexParAccel with the driven dofs' accelerations \p acc (k, in the order given to
/// mbsp_flexParBeginDriven) and their driving forces into \p tau (k; the ranges' sum). Rank 0 of
/// a served p.
mbsErr mbsp_flexParAccelDriven(mbspFlexPar *p, const double *q, const double *y, const double *eta,
                               const double *acc, double *ydd, double *tau);
/// Rank 0 after the verb (its code e): releases the others, frees *par and *self and agrees
/// the job's code with them. Collective with mbsp_flexParBegin's workers.
mbsErr mbsp_flexParEnd(mbspComm *job, mbspFlexPar **par, mbspComm **self, mbsErr e);
/// The whole model's recursive workspace of this rank's part (node poses). Local.
mbsFlexAba *mbsp_flexParAba(mbspFlexPar *p);
/// Ranks, cut joints, interface unknowns, evaluations and unit-response columns of this rank.
/// Local.
void mbsp_flexParInfo(const mbspFlexPar *p, int *ranks, int *ncut, int *nif, long *evals,
                      long *unit);
#endif
