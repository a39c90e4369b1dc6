/// \file solver_sor.c
/// solver.method = gs and sor: multicolour block Gauss–Seidel and SOR, one sweep kernel with
/// omega = 1 (gs) or solver.omega (sor). The joints are coloured once so that joints of one
/// colour do not couple (a joint couples with its parent's joint and its siblings).
#include <math.h>
#include <stdlib.h>
#include "solver_private.h"
#include "cpa_private.h"
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

static mbsErr mbs_sorCpaSolve(mbsCpaB *B, mbsCpaCfs *C, const mbsCpaKin *K, mbsCpaVec *V);

// gs and sor: the same kernel, graph and flags (create reads the omega of each)
#define MBS_SOR_TYPE(nm, id, hint)                                                                 \
  {                                                                                                \
    .name = nm, .method = id, .distributed = 1, .iterative = 1, .precond = 1,                      \
    .cpa_graph = MBS_CPA_GRAPH_SOR, .check_every = 1, .stationary = 1, .maxit_hint = hint,         \
    .cpa_build = mbs_cpaCfsGraph, .cpa_loops = mbs_cpaLoopsGraph, .cpa_solve = mbs_sorCpaSolve,    \
    .create = mbs_sorCreate, .solve = mbs_sorSolve, .destroy = mbs_sorDestroy                      \
  }
const mbsSolverType mbs_solverGs = MBS_SOR_TYPE("gs", MBS_SOLVER_GS, "");
const mbsSolverType mbs_solverSor = MBS_SOR_TYPE(
    "sor", MBS_SOLVER_SOR, ", and sor's rate depends steeply on solver.omega (docs/loops.md 8.4)");

// ---------------------------------------------------------------- cpa: this solver's graph

// multicolour block Gauss–Seidel / SOR (solver_sor.c): iterations + 1 iterations of ncolor
// colour sweeps; each sweep applies A to the newest x, forms r = b - A x everywhere and updates
// the joints of its colour x += omega D^-1 r; then ||r_0||, ||dx|| and ||x|| in one reduction.
// xn receives the final writers of x.
mbsErr mbs_cpaSor(mbsCpaB *B, mbsCpaCfs *C, const mbsCpaKin *K, const int *rhs, int bnorm, int *xn,
                  int *rn, int *zn, int **lv) {
  const mbsModel *m = B->m;
  const mbsCpaOptions *o = B->o;
  int n = m->nbody, red[3], conv = -1;
  int *color = malloc((size_t)(n > 0 ? n : 1) * sizeof(int)), *xold = lv[3];
  if (!color) return mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  int ncolor = mbs_cfsColour(m, color), nlcolor = 0, own = n - 1;
  int *lcol = B->lrows ? malloc((size_t)m->nloop * sizeof(int)) : NULL;
  long long *lcf = B->lrows ? calloc((size_t)m->nloop + 1, sizeof(long long)) : NULL;
  int *lrf = B->lrows ? calloc((size_t)m->nloop + 1, sizeof(int)) : NULL; // rows per colour
  if (B->lrows && (!lcol || !lcf || !lrf)) {
    free(color), free(lcol), free(lcf), free(lrf);
    return mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  }
  if (B->lrows) { // the loops' colours after the joints': per colour its blocks' solves, x += w z
    nlcolor = mbs_cfsLoopColour(m, lcol);
    for (int k = 0; k < m->nloop; k++) {
      int nr = mbs_cpaLoopKept(m, B->lskip, k);
      lcf[lcol[k]] += (nr ? mbs_flopCholSolve(nr) : 0) + 2LL * m->loop_lamnum[k];
      lrf[lcol[k]] += m->loop_lamnum[k]; // their residual r = b - q
    }
  }
  B->noloopprec = 1;
  for (int b = 0; b < n; b++) xn[b] = -1;
  for (int it = 0; it <= o->iterations; it++) {
    int chk = mbs_cpaCheckIt(o, it, o->iterations); // solver.check_every
    if (chk)
      for (int b = 0; b < n; b++) xold[b] = xn[b];
    int ph = 0;
    for (int col = 0; col < ncolor + nlcolor; col++) {
      C->ctl = conv; // the next iteration runs only if this one did not converge
      if (col == 0)  // the whole residual (r.r judges the iterate entering the sweep)
        mbs_cpaApply(B, K, C, 0, xn);
      else // the rows of this colour, from what the previous colour's update changed
        mbs_cpaApplyColour(B, K, C, xn, color, ncolor, lcol, col - 1, col);
      ph = PH_ITER + 8 * (C->napply - 1);
      if (col >= ncolor) // the closure rows of this colour, on their owner
        rn[own] = mbs_cpaResidRows(B, C, own, rhs[own], lrf[col - ncolor], ph);
      for (int b = 0; b < n; b++) {
        int nl = m->body_lamnum[b];
        if (col == 0) {
          rn[b] = mbs_cpaResidNode(B, C, b, rhs[b], ph);
          if (chk) lv[0][b] = mbs_cpaLeaf(B, b, rn[b], -1, ph); // r.r entering the sweep
        }
        if (!nl || color[b] != col) continue;
        if (col > 0) rn[b] = mbs_cpaResidRows(B, C, b, rhs[b], nl, ph);
        zn[b] = mbs_cpaPrecondNode(B, C, b, rn[b], ph);
        int u = mbs_cpaNode(B, MBS_CPA_SOR_UPDATE, b, 2LL * nl, ph + 3, ph + 2);
        mbs_cpaDep(B, zn[b], u);
        mbs_cpaDep(B, xn[b], u);
        xn[b] = u;
      }
      if (col >= ncolor) { // a loop colour, on the rows' owner
        int u = mbs_cpaNode(B, MBS_CPA_ROWS_UPDATE, own, lcf[col - ncolor], ph + 3, ph + 2);
        mbs_cpaDep(B, rn[own], u);
        mbs_cpaDep(B, xn[own], u);
        mbs_cpaDep(B, B->lsetup, u);
        xn[own] = u;
      }
    }
    C->ctl = -1;
    if (!chk) continue;
    for (int b = 0; b < n; b++) { // z = x - xold, z.z and x.x
      int nl = mbs_cpaNl(B, b);
      lv[1][b] = lv[2][b] = -1;
      if (nl == 0) continue;
      int d = mbs_cpaNode(B, MBS_CPA_SOR_UPDATE, b, nl, ph + 3, ph + 2);
      mbs_cpaDep(B, xn[b], d);
      mbs_cpaDep(B, xold[b], d);
      lv[1][b] = mbs_cpaLeaf(B, b, d, -1, ph);
      lv[2][b] = mbs_cpaLeaf(B, b, xn[b], -1, ph);
    }
    mbs_cpaReduce(B, C, 3, lv, red);
    conv = mbs_cpaTest(B, red, bnorm);
  }
  // converged under the residual test: the iterate before the last sweep is returned (a copy)
  if (o->converged && o->criterion != MBS_CRIT_CHANGE)
    for (int b = 0; b < n; b++) {
      int f = mbs_cpaNode(B, MBS_CPA_SOR_UNDO, b, 0, -1, -1);
      mbs_cpaDep(B, conv, f);
      mbs_cpaDep(B, xold[b], f);
      xn[b] = f;
    }
  B->noloopprec = 0;
  free(color), free(lcol), free(lcf), free(lrf);
  return MBS_OK;
}

static mbsErr mbs_sorCpaSolve(mbsCpaB *B, mbsCpaCfs *C, const mbsCpaKin *K, mbsCpaVec *V) {
  return mbs_cpaSor(B, C, K, V->rhs, V->bnorm, V->xn, V->rn, V->zn, V->lv);
}
