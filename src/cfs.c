/// \file cfs.c
/// The constraint-force method of seed 002 (Sharf & D'Eleuterio 1993): the workspace, the closure
/// rows, the position-dependent blocks, the owned-range vector helpers and the evaluation around
/// a solve (prepare, the solver of the table, finish); the operator sweeps, the block
/// preconditioner, explicit blocks and the warm start are in cfs_op.c. The solvers themselves live
/// in src/solver_*.c behind the solver table (mbs_solvertype.h, src/solver.c). Derivations in
/// docs/formulation.md.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_loops.h"
#include "solver_private.h"
#include "spatial.h"
#include "body.h"
#include "flops.h"

// ---------------------------------------------------------------- lifecycle

mbsErr mbs_cfsCreate(const mbsModel *m, int b0, int b1, mbsCfs **out) {
  mbsCfs *c;
  *out = NULL;
  MBS_CHECK(b0 >= 0 && b1 <= m->nbody && b0 < b1, MBS_ERR_INTERNAL, "bad body range");
  MBS_ALLOC(c, 1);
  c->nbody = m->nbody, c->nlam = m->nlam, c->nv = m->nv;
  c->b0 = b0, c->b1 = b1;
  c->branched = mbs_modelBranched(m);
  c->l0 = m->body_lamadr[b0];
  c->l1 = m->body_lamadr[b1 - 1] + m->body_lamnum[b1 - 1];
  size_t nb = (size_t)m->nbody, nl = (size_t)(m->nlam > 0 ? m->nlam : 1);
  size_t nv = (size_t)(m->nv > 0 ? m->nv : 1);
  mbsErr e = MBS_OK;
#define MBS_CALLOC(f, n)                                                                           \
  if (!e && !(c->f = calloc((n), sizeof(*c->f))))                                                  \
  e = mbs_errSet(MBS_ERR_NOMEM, "out of memory allocating the constraint-force workspace")
  // a method that does the whole constraint stage itself (its row's forward: schur) uses none of
  // the operator's blocks, sweeps and vectors: only x is kept (the run's body outputs save and
  // restore it around an evaluation, parallel/bodyout.c). Each unused array would still cost
  // resident memory (calloc clears the heap's old top, ~128 kB per array) and M^-1 of every body
  // held its pages (1.5 MiB per rank on the 2^16-body ladder at 16 ranks, docs/scaling.md
  // "Memory")
  const mbsSolverType *st = mbs_solverFind(m->opt.solver);
  c->own_forward = st && st->forward;
  MBS_CALLOC(x, nl);
  if (!c->own_forward) {
    MBS_CALLOC(Minv, 36 * nb);
    MBS_CALLOC(T, 6 * nl);
    MBS_CALLOC(G, 6 * nl);
    MBS_CALLOC(F, 6 * nv);
    MBS_CALLOC(SSinv, 36 * nb);
    MBS_CALLOC(Dfac, 36 * nb);
    MBS_CALLOC(Dinv, 36 * nb);
    MBS_CALLOC(up, 6 * nb);
    MBS_CALLOC(wr, 6 * nb);
    MBS_CALLOC(acc, 6 * nb);
    MBS_CALLOC(rhs, nl);
    MBS_CALLOC(r, nl);
    MBS_CALLOC(z, nl);
    MBS_CALLOC(p, nl);
    MBS_CALLOC(q, nl);
    MBS_CALLOC(xold, nl);
    MBS_CALLOC(tmp, nl);
    MBS_CALLOC(child_rank, nb);
    MBS_CALLOC(sib_adr, nb);
  }
#undef MBS_CALLOC
  if (e) {
    mbs_cfsDestroy(&c);
    return e;
  }
  // inverse spatial inertias (constant in body coordinates; checked for every method)
  for (int b = 0; b < m->nbody; b++) {
    mbsReal I6[36];
    mbs_bodyInertiaFull(m, b, I6);
    if (!mbsu_cholFactor(I6, 6)) {
      mbs_cfsDestroy(&c);
      return mbs_errSet(MBS_ERR_INPUT, "body %s: spatial inertia is not positive definite",
                        m->body_name[b]);
    }
    if (!c->own_forward) mbsu_cholInverse(I6, 6, c->Minv + 36 * b);
  }
  // sibling-pair block addresses
  int nsib = 0;
  for (int b = 0; !c->own_forward && b < m->nbody; b++) {
    int nc = m->body_childnum[b];
    c->sib_adr[b] = nsib;
    nsib += nc * (nc - 1) / 2;
    for (int k = 0; k < nc; k++) c->child_rank[m->child_list[m->body_childadr[b] + k]] = k;
  }
  c->nsib = nsib;
  *out = c;
  return MBS_OK;
}

int mbs_cfsColour(const mbsModel *m, int *color) {
  // children of p take the colours 0, 1, ... skipping p's colour
  int ncolor = 1;
  for (int b = 0; b < m->nbody; b++) color[b] = 0;
  for (int b = 0; b < m->nbody; b++) {
    int nc = m->body_childnum[b];
    for (int k = 0, col = 0; k < nc; k++, col++) {
      if (col == color[b]) col++;
      int ch = m->child_list[m->body_childadr[b] + k];
      color[ch] = col;
      if (col + 1 > ncolor) ncolor = col + 1;
    }
  }
  return ncolor;
}

void mbs_cfsDestroy(mbsCfs **pc) {
  if (!pc || !*pc) return;
  mbsCfs *c = *pc;
  mbs_solverFree(&c->solver);
  void *arrs[] = {c->Minv,       c->T,    c->G,   c->F,    c->SSinv, c->Dfac,  c->Dinv,
                  c->up,         c->wr,   c->acc, c->Pblk, c->Sblk,  c->rhs,   c->x,
                  c->r,          c->z,    c->p,   c->q,    c->xold,  c->tmp,   c->sib_adr,
                  c->child_rank, c->Lfac, c->Lx,  c->Ldot, c->Lwr,   c->Lbody, c->Lcolor};
  for (size_t k = 0; k < sizeof arrs / sizeof arrs[0]; k++) free(arrs[k]);
  free(c);
  *pc = NULL;
}

void mbs_cfsSetContext(mbsCfs *c, void *ctx) {
  c->ctx = ctx;
}

void mbs_cfsSetProgress(mbsCfs *c, void (*fn)(void *ctx, long it, double res), void *ctx) {
  c->progress = fn, c->progress_ctx = ctx, c->progress_it = 0;
}

void mbs_cfsProgress(mbsCfs *c, int n, double res) {
  if (!c->progress) return;
  long before = c->progress_it;
  c->progress_it += n;
  if (c->progress_it / MBS_CFS_PROGRESS_EVERY != before / MBS_CFS_PROGRESS_EVERY)
    c->progress(c->progress_ctx, c->progress_it, res);
}

// ---------------------------------------------------------------- closure rows (docs/loops.md 8.4)

int mbs_cfsLoopColour(const mbsModel *m, int *color) {
  // greedy: a loop takes the smallest colour no earlier loop on one of its bodies has
  int ncolor = 0;
  for (int k = 0; k < m->nloop; k++) {
    int col = 0, clash = 1;
    while (clash) {
      clash = 0;
      for (int j = 0; j < k && !clash; j++) {
        if (color[j] != col) continue;
        for (int a = 0; a < 2 && !clash; a++)
          for (int b = 0; b < 2; b++)
            if (m->loop_body[2 * k + a] >= 0 && m->loop_body[2 * k + a] == m->loop_body[2 * j + b])
              clash = 1;
      }
      if (clash) col++;
    }
    color[k] = col;
    if (col + 1 > ncolor) ncolor = col + 1;
  }
  return ncolor;
}

mbsErr mbs_cfsEnableLoopRows(const mbsModel *m, mbsCfs *c, int owner) {
  int n = m->nlam_loop;
  MBS_CHECK(n > 0 && !c->nlr, MBS_ERR_INTERNAL, "closure rows: no loops, or enabled twice");
  MBS_CHECK(!c->own_forward, MBS_ERR_INTERNAL,
            "closure rows: the constraint-force system was made for a method with its own forward");
  MBS_CHECK(!owner || c->b1 == m->nbody, MBS_ERR_INTERNAL,
            "closure rows: their owner must hold the last body");
  size_t nt = (size_t)(m->nlam + n);
  mbsReal **vec[] = {&c->rhs, &c->x, &c->r, &c->z, &c->p, &c->q, &c->xold, &c->tmp};
  for (size_t k = 0; k < sizeof vec / sizeof vec[0]; k++) {
    mbsReal *v = realloc(*vec[k], nt * sizeof(mbsReal));
    MBS_CHECK(v, MBS_ERR_NOMEM, "out of memory (closure rows)");
    memset(v, 0, nt * sizeof(mbsReal));
    *vec[k] = v;
  }
  c->Lfac = calloc(36 * (size_t)m->nloop, sizeof(mbsReal));
  c->Lx = calloc((size_t)n, sizeof(mbsReal));
  c->Ldot = calloc((size_t)n, sizeof(mbsReal));
  c->Lwr = calloc(6 * (size_t)m->nbody, sizeof(mbsReal));
  c->Lbody = calloc((size_t)m->nbody, 1);
  c->Lcolor = calloc((size_t)m->nloop, sizeof(int));
  MBS_CHECK(c->Lfac && c->Lx && c->Ldot && c->Lwr && c->Lbody && c->Lcolor, MBS_ERR_NOMEM,
            "out of memory (closure rows)");
  for (int k = 0; k < 2 * m->nloop; k++)
    if (m->loop_body[k] >= 0) c->Lbody[m->loop_body[k]] = 1;
  c->nlcolor = mbs_cfsLoopColour(m, c->Lcolor);
  c->nlr = n;
  c->lowner = owner;
  if (owner) c->l1 = m->nlam + n;
  c->branched = 1; // the loop couplings break the 2-cyclic structure of a chain
  return MBS_OK;
}

void mbs_cfsPrecondLoops(const mbsModel *m, const mbsCfs *c, int colour, const mbsReal *r,
                         mbsReal *z) {
  if (!c->nlr || !c->lowner) return;
  for (int k = 0; k < m->nloop; k++) {
    if (colour >= 0 && c->Lcolor[k] != colour) continue;
    int i0 = m->loop_lamadr[k], nk = m->loop_lamnum[k], idx[6], nr = 0;
    mbsReal t[6];
    for (int q = 0; q < nk; q++) {
      if (c->Lskip[i0 - m->nlam + q])
        z[i0 + q] = r[i0 + q]; // an identity row
      else
        idx[nr] = i0 + q, t[nr++] = r[i0 + q];
    }
    if (!nr) continue;
    mbsu_cholSolve(c->Lfac + 36 * k, nr, t);
    for (int q = 0; q < nr; q++) z[idx[q]] = t[q];
    MBS_FLOPS(mbs_flopCholSolve(nr));
  }
}

// ---------------------------------------------------------------- position-dependent data

// out (k x k, packed) = A^T M B for 6 x k column sets A, B (columns of 6) and a 6x6 M
void mbs_congruence(const mbsReal *A, int ka, const mbsReal *M, const mbsReal *B, int kb,
                    mbsReal *out, int add) {
  for (int j = 0; j < kb; j++) {
    mbsReal mb[6];
    mbsu_mul6(M, B + 6 * j, mb);
    for (int i = 0; i < ka; i++) {
      mbsReal v = mbsu_dot6(A + 6 * i, mb);
      if (add)
        out[kb * i + j] += v;
      else
        out[kb * i + j] = v;
    }
  }
}

mbsErr mbs_cfsPosition(const mbsModel *m, const mbsWork *w, mbsCfs *c) {
  const mbsSolverType *st = mbs_solverFind(m->opt.solver);
  int inv = st && st->precond;
  for (int b = c->b0; b < c->b1; b++) {
    int nl = m->body_lamnum[b], nd = m->body_dofnum[b], p = m->body_parent[b];
    mbsReal *T = c->T + 6 * m->body_lamadr[b], *G = c->G + 6 * m->body_lamadr[b];
    const mbsReal *X = w->xpar + 12 * b, *S = w->sdof + 6 * m->body_dofadr[b];

    // constraint directions and their parent-coordinate images
    mbs_bodyComplement(m, w, b, T);
    for (int k = 0; k < nl; k++) mbsu_xTForce(X, T + 6 * k, G + 6 * k);
    MBS_FLOPS(mbs_flopComplement(m->body_jnttype[b]) + (long)MBS_FL_XFORCE * nl);

    // force duals of the motion subspace: F = S (S^T S)^{-1}
    if (nd > 0) {
      mbsReal SS[36], *Si = c->SSinv + 36 * b;
      for (int i = 0; i < nd; i++)
        for (int j = 0; j < nd; j++) SS[nd * i + j] = mbsu_dot6(S + 6 * i, S + 6 * j);
      if (!mbsu_cholFactor(SS, nd))
        return mbs_errSet(MBS_ERR_NUMERIC, "body %s: degenerate joint subspace", m->body_name[b]);
      mbsu_cholInverse(SS, nd, Si);
      mbsReal *F = c->F + 6 * m->body_dofadr[b];
      for (int j = 0; j < nd; j++)
        for (int r = 0; r < 6; r++) {
          mbsReal sum = 0;
          for (int i = 0; i < nd; i++) sum += S[6 * i + r] * Si[nd * i + j];
          F[6 * j + r] = sum;
        }
      MBS_FLOPS(mbs_flopCfsF(nd));
    }

    // diagonal block D = T^T M_i T + G^T M_p G, factored
    if (nl > 0) {
      mbsReal *D = c->Dfac + 36 * b;
      mbs_congruence(T, nl, c->Minv + 36 * b, T, nl, D, 0);
      if (p >= 0) mbs_congruence(G, nl, c->Minv + 36 * p, G, nl, D, 1);
      MBS_FLOPS(mbs_flopCfsD(nl, p >= 0));
      if (!mbsu_cholFactor(D, nl))
        return mbs_errSet(MBS_ERR_NUMERIC,
                          "body %s: diagonal block of the constraint-force system is not "
                          "positive definite",
                          m->body_name[b]);
      // the explicit inverse for the preconditioner: a k x k product instead of two triangular
      // solves whose 2k divisions form one dependent chain (measured: the block solves took half
      // of a Jacobi sweep on the ladder); its lower triangle mirrored, so that CG's
      // preconditioner is symmetric to the bit. Only for the methods that apply it.
      if (inv) {
        mbsReal *Di = c->Dinv + 36 * b;
        mbsu_cholInverse(D, nl, Di);
        for (int i = 0; i < nl; i++)
          for (int j = i + 1; j < nl; j++) Di[nl * i + j] = Di[nl * j + i];
        MBS_FLOPS(mbs_flopCfsDinv(nl));
      }
    }
  }
  c->blocks_ready = 0;
  return MBS_OK;
}

// ---------------------------------------------------------------- vector helpers (owned range)

double mbs_cfsDot(const mbsCfs *c, const mbsReal *a, const mbsReal *b) {
  double s = 0;
  if (c->l1 - c->l0 > 8 * MBS_OMP_MIN) {
#pragma omp parallel for schedule(static) reduction(+ : s)
    for (int i = c->l0; i < c->l1; i++) s += a[i] * b[i];
  } else {
    for (int i = c->l0; i < c->l1; i++) s += a[i] * b[i];
  }
  MBS_FLOPS(mbs_flopDot(c->l1 - c->l0));
  return s;
}

mbsErr mbs_cfsReduce(const mbsCfsComm *comm, double *v, int n) {
  if (comm && comm->reduce) return comm->reduce(comm->ctx, v, n);
  return MBS_OK;
}

int mbs_cfsConverged(int criterion, double tol, double rr, double dxdx, double xx, double bnorm,
                     double *res) {
  MBS_FLOPS(2);
  if (criterion == MBS_CRIT_CHANGE)
    *res = xx > 0 ? sqrt(dxdx / xx) : sqrt(dxdx);
  else
    *res = bnorm > 0 ? sqrt(rr) / bnorm : sqrt(rr);
  return *res <= tol;
}

int mbs_cfsStationaryTest(const mbsSolverOpt *o, const double *red, int it, double *rr0,
                          mbsSolveInfo *info) {
  info->it = it;
  if (!isfinite(red[0]) || !isfinite(red[1])) {
    info->reason = MBS_REASON_DIVERGED_NAN;
    return -1;
  }
  if (it == 0) *rr0 = red[0];
  MBS_FLOPS(1);
  if (red[0] > 1e12 * *rr0) { // the iteration diverges
    info->reason = MBS_REASON_DIVERGED_DTOL;
    return -1;
  }
  int conv =
      mbs_cfsConverged(o->criterion, o->tol, red[0], red[1], red[2], info->bnorm, &info->res);
  if (conv) info->reason = MBS_REASON_CONVERGED;
  return conv;
}

// ---------------------------------------------------------------- full solve

// the rows' data at this evaluation's stages: directions, right sides, the zero rows (a sum over
// the ranks) and, on the owner, each loop's block D^T M^-1 D over its kept rows, factored
static mbsErr mbs_cfsLoopPrepare(const mbsModel *m, mbsWork *w, mbsCfs *c, const mbsCfsComm *comm) {
  MBS_TIC(w->timer, MBS_TIMER_LOOPS);
  c->LD = mbs_loopRowsCompute(m, w, &c->Lkap);
  mbsReal *zg = mbs_loopZeroBegin(m, w, c->b0, c->b1);
  MBS_TOC(w->timer, MBS_TIMER_LOOPS);
  MBS_CALL(mbs_cfsReduce(comm, zg, 2 * c->nlr));
  MBS_TIC(w->timer, MBS_TIMER_LOOPS);
  c->Lskip = mbs_loopZeroEnd(w);
  mbsErr e = MBS_OK;
  for (int k = 0; c->lowner && k < m->nloop && !e; k++) {
    int i0 = m->loop_lamadr[k] - m->nlam, nk = m->loop_lamnum[k], nr = 0, added = 0;
    mbsReal Dk[2][36]; // the kept rows' directions on each side, a column of 6 each
    for (int r = 0; r < nk; r++)
      if (!c->Lskip[i0 + r]) {
        for (int side = 0; side < 2; side++)
          memcpy(Dk[side] + 6 * nr, c->LD + 12 * (i0 + r) + 6 * side, 6 * sizeof(mbsReal));
        nr++;
      }
    mbsReal *B = c->Lfac + 36 * k;
    for (int side = 0; side < 2 && nr; side++) {
      int bd = m->loop_body[2 * k + side];
      if (bd < 0) continue;
      mbs_congruence(Dk[side], nr, c->Minv + 36 * bd, Dk[side], nr, B, added);
      MBS_FLOPS(mbs_flopCongr(nr, nr, added));
      added++;
    }
    if (nr) MBS_FLOPS(mbs_flopChol(nr));
    if (nr && !mbsu_cholFactor(B, nr))
      e = mbs_errSet(MBS_ERR_NUMERIC,
                     "loop %s: its block of the constraint-force system is not positive definite",
                     m->loop_name[k]);
  }
  MBS_TOC(w->timer, MBS_TIMER_LOOPS);
  return e;
}

mbsErr mbs_cfsPrepare(const mbsModel *m, mbsState *s, mbsWork *w, mbsCfs *c, const mbsCfsComm *comm,
                      double *bnorm) {
  MBS_CHECK(!c->own_forward, MBS_ERR_INTERNAL,
            "constraint-force system: made for a method with its own forward (no blocks here)");
  // position-dependent blocks and the right side b = T^T c - (affine part at lam = 0)
  // (w->reuse: the loop layer's further solves at the same positions keep them, docs/loops.md 8)
  MBS_TIC(w->timer, MBS_TIMER_ASSEMBLY);
  mbsErr e = w->reuse ? MBS_OK : mbs_cfsPosition(m, w, c);
  MBS_TOC(w->timer, MBS_TIMER_ASSEMBLY);
  if (c->nlr) { // closure rows (a collective sum inside: every rank goes through it)
    mbsErr el = mbs_cfsLoopPrepare(m, w, c, comm);
    if (!e) e = el;
  }
  if (comm && comm->reduce && !w->reuse) { // every rank must agree before the collective sweeps
    double bad = e ? 1 : 0;
    MBS_CALL(comm->reduce(comm->ctx, &bad, 1));
    if (bad > 0 && !e)
      e = mbs_errSet(MBS_ERR_NUMERIC, "constraint-force blocks failed on another rank");
  }
  if (e) return e;
  MBS_TIC(w->timer, MBS_TIMER_SOLVE);
  memset(c->x + c->l0, 0, (size_t)(c->l1 - c->l0) * sizeof(mbsReal));
  MBS_CALL(mbs_cfsApply(m, w, c, comm, c->x, 1, c->q));
  for (int b = c->b0; b < c->b1; b++) {
    int nl = m->body_lamnum[b], la = m->body_lamadr[b];
    for (int k = 0; k < nl; k++)
      c->rhs[la + k] = mbsu_dot6(c->T + 6 * (la + k), w->cacc + 6 * b) - c->q[la + k];
    MBS_FLOPS(12L * nl);
  }
  if (c->nlr && c->lowner) // closure rows: D^T a = kappa; zero rows stay 0
    for (int i = 0; i < c->nlr; i++) {
      c->rhs[m->nlam + i] = c->Lskip[i] ? 0 : c->Lkap[i] - c->q[m->nlam + i];
      MBS_FLOPS(!c->Lskip[i]);
    }
  double bb = mbs_cfsDot(c, c->rhs, c->rhs);
  MBS_CALL(mbs_cfsReduce(comm, &bb, 1));
  *bnorm = sqrt(bb);
  MBS_FLOPS(1);

  // initial guess from the history (warm start)
  if (m->opt.warm_start != MBS_WARM_NONE && s->nhist[s->stage] > 0 && !w->homog) {
    mbs_cfsWarmStart(m, s, m->opt.warm_start, s->time, c->l0, c->l1, c->x);
  }
  return MBS_OK;
}

mbsErr mbs_cfsFinish(const mbsModel *m, mbsState *s, mbsWork *w, mbsCfs *c, const mbsCfsComm *comm,
                     int method, int iterations, int reason, double residual) {
  mbsSolveInfo info = {.it = iterations, .reason = reason, .res = residual};
  // accelerations from the constraint forces: affine operator at lam, then qdd per joint
  MBS_TIC(w->timer, MBS_TIMER_ACCEL);
  MBS_CALL(mbs_cfsApply(m, w, c, comm, c->x, 1, c->q));
  mbsReal a0[6];
  mbs_baseAccel(m, !w->homog, a0);
  for (int b = c->b0; b < c->b1; b++) {
    int nd = m->body_dofnum[b], da = m->body_dofadr[b], p = m->body_parent[b];
    int nl = m->body_lamnum[b], la = m->body_lamadr[b];
    mbsReal t[6], d[6], sd[6];
    mbsu_xMotion(w->xpar + 12 * b, p < 0 ? a0 : c->acc + 6 * p, t);
    for (int i = 0; i < 6; i++) d[i] = c->acc[6 * b + i] - t[i] - w->cacc[6 * b + i];
    const mbsReal *S = w->sdof + 6 * da, *Si = c->SSinv + 36 * b;
    for (int k = 0; k < nd; k++) sd[k] = mbsu_dot6(S + 6 * k, d);
    for (int k = 0; k < nd; k++) {
      mbsReal v = 0;
      for (int j = 0; j < nd; j++) v += Si[nd * k + j] * sd[j];
      w->qdd[da + k] = v;
    }
    memcpy(w->acc + 6 * b, c->acc + 6 * b, 6 * sizeof(mbsReal));
    // joint wrench f = F tau + T lam
    mbsReal *f = w->jfrc + 6 * b;
    for (int i = 0; i < 6; i++) f[i] = 0;
    for (int k = 0; k < nd; k++)
      for (int i = 0; i < 6; i++) f[i] += c->F[6 * (da + k) + i] * w->qfrc[da + k];
    for (int k = 0; k < nl; k++) {
      w->lam[la + k] = c->x[la + k];
      for (int i = 0; i < 6; i++) f[i] += c->T[6 * (la + k) + i] * c->x[la + k];
    }
    MBS_FLOPS(mbs_flopCfsFinish(nd, nl));
  }
  if (c->nlr) { // the loop forces (every rank: the last apply sent them) and the closure residual
    mbsReal res = 0;
    for (int i = 0; i < c->nlr; i++) res = fmax(res, fabs(c->Ldot[i] - c->Lkap[i]));
    MBS_FLOPS(c->nlr);
    mbs_loopRowsDone(m, w, c->Lx, res);
  }
  MBS_TOC(w->timer, MBS_TIMER_ACCEL);

  // history for the next warm start (owned part; other entries are never read by this rank)
  if (m->opt.warm_start != MBS_WARM_NONE && !w->homog)
    mbs_cfsPushHistory(m, s, s->time, c->l0, c->l1, c->x);

  w->stat.method = method;
  w->stat.iterations = info.it;
  w->stat.reason = info.reason;
  w->stat.residual = info.res;
  w->stat.evals++;
  w->stat.total_iterations += info.it;
  if (info.reason < 0) w->stat.nonconverged++;
  return MBS_OK;
}

mbsErr mbs_cfsBegin(const mbsModel *m, const mbsState *s, mbsCfs *c) {
  const mbsSolverType *t = mbs_solverFind(m->opt.solver);
  if (!t || !t->begin) return MBS_OK;
  MBS_CALL(mbs_solverBind(m, c));
  return t->begin(c->solver->self, m, s);
}

mbsErr mbs_cfsSolve(const mbsModel *m, mbsState *s, mbsWork *w, mbsCfs *c, const mbsCfsComm *comm) {
  mbsSolveInfo info = {0};
  c->spec_it = c->spec_conv = 0;
  c->cheb.nseg = 0;
  c->cg.n = 0;
  // solvers that do the whole constraint stage themselves (schur)
  {
    const mbsSolverType *t = mbs_solverFind(m->opt.solver);
    if (t && t->forward) {
      MBS_CALL(mbs_solverBind(m, c));
      return t->forward(c->solver->self, m, s, w, c, comm);
    }
  }
  MBS_CALL(mbs_cfsPrepare(m, s, w, c, comm, &info.bnorm));
  // the solver of m->opt (solver table), created on first use
  MBS_CALL(mbs_solverBind(m, c));
  MBS_CALL(c->solver->type->solve(c->solver->self, m, s, w, c, comm, &info));
  c->spec_it = info.spec_it, c->spec_conv = info.spec_conv;
  c->cheb = info.cheb;
  c->cg = info.cg;
  MBS_TOC(w->timer, MBS_TIMER_SOLVE);
  MBS_CALL(mbs_cfsFinish(m, s, w, c, comm, m->opt.solver, info.it, info.reason, info.res));
  w->stat.restarts = info.cg.n;
  w->stat.total_restarts += info.cg.n;
  return MBS_OK;
}

mbsErr mbs_cfsForward(const mbsModel *m, mbsState *s, mbsWork *w, mbsCfs *c) {
  MBS_TIC(w->timer, MBS_TIMER_EVAL);
  mbs_fwdPosition(m, s, w);
  mbs_fwdVelocity(m, s, w);
  mbsErr e = mbs_cfsSolve(m, s, w, c, NULL);
  MBS_TOC(w->timer, MBS_TIMER_EVAL);
  return e;
}
