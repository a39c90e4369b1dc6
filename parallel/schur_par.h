/// \file schur_par.h
/// The exact distributed constraint-force solver (solver.method = "schur"); see schur_par.c.
#ifndef MBSP_SCHUR_PAR_H
#define MBSP_SCHUR_PAR_H

#include "mbspar/mbs_parallel.h"
#include "mbspar/mbs_schur.h"
#include "mbspar/mbs_solvertype.h"

typedef struct mbspSchur mbspSchur;

/// Interface solvers (solver.interface): the exact merge (scan or component tree) or J-CG.
typedef enum { MBSP_IFACE_CR = 0, MBSP_IFACE_JCG = 1 } mbspIface;

/// Set up the solver for the decomposition \p start (first global body of each rank, size + 1
/// entries, the same on every rank; this rank owns the model's bodies [b0, b1)); each rank cuts its
/// range into \p nthread segments eliminated by its OpenMP threads. Collective.
mbsErr mbsp_schurCreate(mbspComm *comm, const mbsModel *m, const int *start, int b0, int b1,
                        int iface, int nthread, mbspSchur **sp);
/// Segments (threads) of this rank. Local.
int mbsp_schurSegments(const mbspSchur *sp);
/// One solve: needs the position and velocity stages of the owned bodies (and the state of every
/// joint). Writes w->lam, acc, jfrc, qdd of the owned bodies and the statistics. Collective.
/// Post the remote joints' state messages of the next mbsp_schurSolve (needs the state only;
/// the engine calls it before its kinematics). Local.
mbsErr mbsp_schurBegin(mbspSchur *sp, const mbsState *st);
mbsErr mbsp_schurSolve(mbspSchur *sp, mbsState *s, mbsWork *w);
/// The overlapped factor (docs/formulation.md 4.4; the solver table's prefactor): \p what < 0
/// forgets the last evaluation's slices (1 if this rank takes slices: a chain, P >= 3 unless
/// MBSPAR_OVERLAP says otherwise); \p what > 0 runs one slice of MBSPAR_OVERLAP_BODIES bodies
/// (the first one receives the lower ports' joint states posted by mbsp_schurBegin and computes
/// their joints). Local (it sends nothing).
int mbsp_schurPre(mbspSchur *sp, mbsState *st, mbsWork *w, int what);
/// A solve of this rank's bodies alone with every cut-joint lambda zero and the external wrenches
/// of w->fext (the loop layer's separators, docs/loops.md 8.1), after a full mbsp_schurSolve at
/// the same positions (w->reuse: the factor's matrix part is kept where mbs_schurRhsOnly allows):
/// acc of the owned bodies; the rank's condensed cut-joint system added into C (nglob x nglob,
/// row-major, NULL: not wanted) and g (nglob), the cut joints numbered by child body. \p load
/// (nload bodies, NULL: unknown): the bodies w->fext loads, so that the bias passes can run
/// along their paths alone (mbs_schurRankFactorPath). \p first (NULL: every body): the
/// accelerations of the bodies with first[b] <= \p lim alone (mbs_schurBack). No messages.
/// Local.
mbsErr mbsp_schurLocal(mbspSchur *sp, mbsState *st, mbsWork *w, double *C, double *g,
                       const int *load, int nload, const int *first, int lim);
/// Cut-joint lambdas over all ranks (nglob of mbsp_schurLocal); -1 if local solves are not
/// available (local models). Local.
int mbsp_schurInterface(const mbspSchur *sp);
/// The schur solver bound to \p c, NULL if another solver is bound. Local.
mbspSchur *mbsp_schurOf(const mbsCfs *c);
/// 1 if the cut-joint system is solved by the (radix-k) scan of a chain decomposition. Local.
int mbsp_schurChain(const mbspSchur *sp);
/// Point-to-point messages sent so far by this rank. Local.
long mbsp_schurMessages(const mbspSchur *sp);
/// Free and NULL. Local.
void mbsp_schurDestroy(mbspSchur **sp);

/// The solver table entry (solver.method = schur), registered by mbsp_solversRegister.
extern const mbsSolverType mbsp_solverSchur;
/// Thread segments of the schur solver bound to \p c (0 if another solver is bound) and, in
/// *scan, whether it merges the cut joints by the (radix-k) scan. Local.
int mbsp_schurSegmentsOf(const mbsCfs *c, int *scan);

#endif
