/// \file solver_sor.c
/// solver.method = gs and sor: multicolour block Gauss–Seidel and SOR, one sweep kernel with
/// omega = 1 (gs) or solver.omega (sor). The joints are coloured once so that joints of one
/// colour do not couple (a joint couples with its parent's joint and its siblings).
#include <math.h>
#include <stdlib.h>
#include "solver_private.h"
#include "spatial.h"
#include "flops.h"

typedef struct {
  mbsSolverOpt opt;
  double omega; // 1 (gs) or solver.omega (sor)
  int ncolor;
  int *color; // (nbody) colour of each joint: parent and siblings differ
} mbsSor;

// r = b - q on the owned rows of colour col (joints by s->color, then the closure rows')
static void mbs_sorResidual(const mbsModel *m, mbsCfs *c, const mbsSor *s, int col,
                            const mbsReal *q, mbsReal *r) {
  if (col < s->ncolor) {
    for (int b = c->b0; b < c->b1; b++) {
      int nl = m->body_lamnum[b], la = m->body_lamadr[b];
      if (!nl || s->color[b] != col) continue;
      for (int i = la; i < la + nl; i++) r[i] = c->rhs[i] - q[i];
      MBS_FLOPS(nl);
    }
  } else if (c->lowner) {
    for (int k = 0; k < m->nloop; k++)
      if (c->Lcolor[k] == col - s->ncolor) {
        for (int i = m->loop_lamadr[k]; i < m->loop_lamadr[k] + m->loop_lamnum[k]; i++)
          r[i] = c->rhs[i] - q[i];
        MBS_FLOPS(m->loop_lamnum[k]);
      }
  }
}

// multicolour block Gauss–Seidel / SOR: one iteration sweeps the colours in turn; the joints of
// one colour do not couple, so each colour is a parallel block-Jacobi update with the newest
// values of the others (red-black on chains). Converges for SPD A and 0 < omega < 2 in any
// ordering, and the iterates do not depend on the rank count. Closure rows in the system
// (solver.loops = rows) take colours of their own after the joints'. A colour's residual after
// the first comes from a partial application (mbs_cfsApplyColour: what the previous colour's
// update changed), equal to the bit to a full one on that colour's rows: about two applications
// per sweep instead of one per colour.
static mbsErr mbs_sorSolve(void *self, const mbsModel *m, const mbsState *st, mbsWork *w, mbsCfs *c,
                           const mbsCfsComm *comm, mbsSolveInfo *info) {
  const mbsSor *s = self;
  const mbsSolverOpt *o = &s->opt;
  double omega = s->omega;
  (void)st;
  mbsReal *x = c->x, *q = c->q, *r = c->r, *z = c->z;
  info->reason = MBS_REASON_DIVERGED_MAXIT;
  double rr0 = 0;
  int last = -1; // the last sweep that tested
  for (int it = 0; it <= o->max_iter; it++) {
    // solver.check_every = K: the norms, their reduction and the test on every K-th sweep and
    // the last
    int check = mbs_cfsCheckSweep(o, it);
    if (check)
      for (int i = c->l0; i < c->l1; i++) c->xold[i] = x[i];
    double rr = 0;
    // the joints' colours, then the closure rows' (solver.loops = rows: loops sharing no body)
    for (int col = 0; col < s->ncolor + c->nlcolor; col++) {
      if (col == 0) { // the whole residual: r.r judges the iterate entering the sweep
        MBS_CALL(mbs_cfsApply(m, w, c, comm, x, 0, q));
        for (int i = c->l0; i < c->l1; i++) r[i] = c->rhs[i] - q[i];
        MBS_FLOPS(c->l1 - c->l0);
        if (check) rr = mbs_cfsDot(c, r, r);
      } else { // only the rows of this colour, from what the previous colour changed
        MBS_CALL(mbs_cfsApplyColour(m, w, c, comm, x, s->color, s->ncolor, col - 1, col, q));
        mbs_sorResidual(m, c, s, col, q, r);
      }
      for (int b = c->b0; b < c->b1; b++) {
        int nl = m->body_lamnum[b], la = m->body_lamadr[b];
        if (!nl || s->color[b] != col) continue;
        mbsu_blockApply(c->Dinv + 36 * b, nl, r + la, z + la);
        for (int k = 0; k < nl; k++) x[la + k] += omega * z[la + k];
        MBS_FLOPS(mbs_flopBlockApply(nl) + 2L * nl);
      }
      if (col >= s->ncolor && c->lowner) {
        mbs_cfsPrecondLoops(m, c, col - s->ncolor, r, z);
        for (int k = 0; k < m->nloop; k++)
          if (c->Lcolor[k] == col - s->ncolor) {
            for (int i = m->loop_lamadr[k]; i < m->loop_lamadr[k] + m->loop_lamnum[k]; i++)
              x[i] += omega * z[i];
            MBS_FLOPS(2L * m->loop_lamnum[k]);
          }
      }
    }
    if (!check) continue;
    for (int i = c->l0; i < c->l1; i++) z[i] = x[i] - c->xold[i]; // the change of this sweep
    MBS_FLOPS(c->l1 - c->l0);
    double red[3] = {rr, mbs_cfsDot(c, z, z), mbs_cfsDot(c, x, x)};
    MBS_CALL(mbs_cfsReduce(comm, red, 3));
    int stop = mbs_cfsStationaryTest(o, red, it, &rr0, info);
    mbs_cfsProgress(c, it - last, info->res);
    last = it;
    // the residual test judged the iterate before this sweep: return that one
    if (stop > 0 && o->criterion != MBS_CRIT_CHANGE)
      for (int i = c->l0; i < c->l1; i++) x[i] = c->xold[i];
    if (stop) return MBS_OK;
  }
  return MBS_OK;
}

static mbsErr mbs_sorCreate(const mbsModel *m, const mbsCfs *c, const mbsSolverOpt *opt, void *ctx,
                            void **self) {
  (void)c, (void)ctx;
  mbsSor *s;
  MBS_ALLOC(s, 1);
  *self = s;
  s->opt = *opt;
  s->omega = opt->method == MBS_SOLVER_GS ? 1.0 : opt->omega;
  MBS_ALLOC(s->color, m->nbody);
  s->ncolor = mbs_cfsColour(m, s->color);
  return MBS_OK;
}

static void mbs_sorDestroy(void **self) {
  mbsSor *s = *self;
  if (!s) return;
  free(s->color);
  free(s);
  *self = NULL;
}

// gs and sor: the same kernel, graph and flags (create reads the omega of each)
#define MBS_SOR_TYPE(nm, id, hint)                                                                 \
  {                                                                                                \
    .name = nm, .method = id, .distributed = 1, .iterative = 1, .precond = 1,                      \
    .cpa_graph = MBS_CPA_GRAPH_SOR, .check_every = 1, .stationary = 1, .maxit_hint = hint,         \
    .create = mbs_sorCreate, .solve = mbs_sorSolve, .destroy = mbs_sorDestroy                      \
  }
const mbsSolverType mbs_solverGs = MBS_SOR_TYPE("gs", MBS_SOLVER_GS, "");
const mbsSolverType mbs_solverSor = MBS_SOR_TYPE(
    "sor", MBS_SOLVER_SOR, ", and sor's rate depends steeply on solver.omega (docs/loops.md 8.4)");
