/// \file loops_ops.c
/// The engine's loop layer (mbs_loops.h, docs/loops.md 8): the loop forces with any tree solver on
/// any partition (mbs_loopSolveOps: unit solves, or schur's separators with the local columns and
/// the interface elimination), and what the closure rows in the constraint-force system take from
/// the loop workspace (8.4).
#include "loops_private.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "flops.h"
#include "mbspar/mbs_schur.h"
#include "mbspar/mbs_solvertype.h"

// position of entry (i, j), j <= i, of a symmetric n x n matrix packed by rows of its lower
// triangle
static size_t mbs_loopTri(int i, int j) {
  return (size_t)i * ((size_t)i + 1) / 2 + (size_t)j;
}

// this caller's part of the separators' system (mbsLoopOps.local, docs/loops.md 8.1): for every
// closure equation j with a side on an owned body (and not a zero row), a local solve with j's
// unit wrench pair and the interface lambdas zero; its condensed interface right side is column j
// of G, the owned sides' dots with its accelerations column j of L; C from one more local solve
// (any load: C does not depend on it). buf = [L (n(n+1)/2, lower triangle packed by rows) | C
// (np x np) | G (np x n) | ...] zeroed first; gj: np scratch. L is symmetric (this caller's
// G_r H_r^-1 G_r^T): the columns go in mbs_loopColumnOrder, column j at position t gives the
// entries of the equations at positions <= t (the others come from their own columns, or are 0
// where an equation has no owned side), so the local solve's back-substitution stops at the
// bodies none of them needs (docs/loops.md 9, as aba's sweeps). Local.
static mbsErr mbs_loopLocalColumns(const mbsModel *m, mbsWork *w, struct mbsLoopWork *lw,
                                   const mbsLoopOps *ops, mbsReal *buf, mbsReal *gj) {
  int n = lw->n, np = ops->nport, nb = m->nbody;
  size_t tri = mbs_loopTri(n, 0);
  mbsReal *L = buf, *C = buf + tri, *G = C + (size_t)np * np;
  memset(buf, 0, (tri + (size_t)np * np + (size_t)np * n) * sizeof(mbsReal));
  memset(w->fext, 0, 6 * (size_t)nb * sizeof(mbsReal));
  w->fext_on = 1;
  if (np > 0) { // this caller's cut-joint systems (its local pieces are all it adds)
    memset(gj, 0, (size_t)np * sizeof(mbsReal));
    MBS_CALL(ops->local(ops->ctx, C, gj, NULL, 0, lw->first, -1));
  }
  mbsErr e = MBS_OK;
  for (int t = 0; t < n && !e; t++) {
    int j = lw->ord[t], k = lw->eq_loop[j], b1 = m->loop_body[2 * k], b2 = m->loop_body[2 * k + 1];
    int own = (b1 >= ops->b0 && b1 < ops->b1) || (b2 >= ops->b0 && b2 < ops->b1);
    if (lw->skip[j] || !own) continue; // no unit solve here: the column's local part is 0
    mbs_loopAddUnit(m, lw, j, w->fext);
    memset(gj, 0, (size_t)np * sizeof(mbsReal));
    int load[2] = {b1, b2}; // the unit pair's bodies: the tree solver's bias pass follows them
    e = ops->local(ops->ctx, NULL, gj, load, 2, lw->first, t);
    mbs_loopClearUnit(m, lw, j, w->fext);
    MBS_TIC(w->timer, MBS_TIMER_LOOPS);
    for (int p = 0; p < np; p++) G[(size_t)p * n + j] = gj[p];
    for (int s = 0; s <= t; s++) {
      int i = lw->ord[s];
      mbsReal v = mbs_loopDotOwned(m, lw, i, w->acc, NULL, ops->b0, ops->b1);
      L[i > j ? mbs_loopTri(i, j) : mbs_loopTri(j, i)] = v;
    }
    MBS_TOC(w->timer, MBS_TIMER_LOOPS);
  }
  return e;
}

// the packed lower triangle at the front of A (n x n) spread over the whole matrix in place:
// row i moves from i(i+1)/2 to i n (the last row first: no row's new place reaches a row not yet
// moved), then the upper triangle mirrored. Local.
static void mbs_loopUnpack(int n, mbsReal *A) {
  for (int i = n - 1; i > 0; i--)
    memmove(A + (size_t)i * n, A + mbs_loopTri(i, 0), ((size_t)i + 1) * sizeof(mbsReal));
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++) A[(size_t)j * n + i] = A[(size_t)i * n + j];
}

// L -= G^T C^-1 G: the cut joints eliminated from the separators' system [L -G^T; -G C], in
// place, L the lower triangle packed by rows (its entries (a, b) and (b, a) of the whole matrix
// are the same products subtracted in the same order, so the triangle is the whole result). The
// same operations in the same order as schur's own reduction of that system over [closure
// equations (kept); cut joints (eliminated)] (mbs_schurReduce: C's Cholesky factor with its pivot
// floor, a port system being positive semidefinite up to rounding, docs/formulation.md 4.7; then
// Z = L_C^-1 (-G) and L - Z^T Z), without its (n + np)^2 copy of the system: C's factor by
// mbs_schurReduce with nothing kept, Z in G's storage, C and G where the sum left them (behind
// the triangle). C (np x np), G (np x n) overwritten; g: np scratch. 0 if C or the result is not
// finite. Local.
static int mbs_loopInterfaceEliminate(int np, int n, mbsReal *C, mbsReal *G, mbsReal *L,
                                      mbsReal *g) {
  if (np == 0) return 1;
  mbsReal none = 0;
  memset(g, 0, (size_t)np * sizeof(mbsReal));
  MBS_FLOPS(mbs_flopSchurReduce(n, np) - mbs_flopSchurReduce(0, np)); // counted as one reduction
  if (!mbs_schurReduce(0, np, C, g, &none, &none, NULL)) return 0;
  for (int i = 0; i < np; i++) { // Z = L_C^-1 (-G), row by row
    mbsReal inv = 1 / C[(size_t)np * i + i], *zi = G + (size_t)n * i;
    for (int c = 0; c < n; c++) {
      mbsReal v = -zi[c];
      for (int l = 0; l < i; l++) v -= C[(size_t)np * i + l] * G[(size_t)n * l + c];
      zi[c] = v * inv;
    }
  }
  for (int a = 0; a < n; a++) {
    mbsReal *La = L + mbs_loopTri(a, 0); // row a: entries (a, 0 .. a)
    for (int b = 0; b <= a; b++) {
      mbsReal v = La[b];
      for (int l = 0; l < np; l++) v -= G[(size_t)n * l + a] * G[(size_t)n * l + b];
      La[b] = v;
    }
  }
  for (size_t k = 0, tri = mbs_loopTri(n, 0); k < tri; k++)
    if (!isfinite(L[k])) return 0;
  return 1;
}

mbsErr mbs_loopSolveOps(const mbsModel *m, mbsWork *w, const mbsLoopOps *ops) {
  struct mbsLoopWork *lw = w->loop;
  MBS_CHECK(lw && lw->A, MBS_ERR_INTERNAL,
            "mbs_loopSolveOps: the workspace has no loop solver (or it was released)");
  int n = lw->n, nb = m->nbody;
  size_t nn = (size_t)n * (size_t)n;
  MBS_CHECK(nn <= (size_t)INT32_MAX, MBS_ERR_NOMEM, "%d closure equations: too many", n);
  mbsReal ag[6];
  mbs_baseAccel(m, 1, ag);
  // eval.loops: this rank's own loop work (rows, dots, factorization), not the tree solves and
  // the sums
  MBS_TIC(w->timer, MBS_TIMER_LOOPS);
  // rows of every equation (the caller made the loop bodies' stages current) and the partial
  // right side from the tree solution without loop forces (w->acc of the owned bodies)
  mbs_loopAll(m, w, lw, 1);
  for (int i = 0; i < n; i++)
    lw->rhs[i] = (ops->root ? lw->kappa[i] : 0) -
                 mbs_loopDotOwned(m, lw, i, w->acc, ops->root ? ag : NULL, ops->b0, ops->b1);
  MBS_FLOPS(n);
  // the zero rows, known before any unit solve: this caller's joints, then the sum
  mbs_loopZeroSums(m, w, lw, ops->b0, ops->b1);
  MBS_TOC(w->timer, MBS_TIMER_LOOPS);
  MBS_CALL(ops->sum(ops->ctx, lw->zg, 2 * n));
  mbs_loopZeroDecide(lw);
  // A = G H^-1 G^T column by column: the response to each equation's unit wrench pair
  // the spring-dampers' wrenches, kept (none: w->fext is zero, mbs_fwdForces; no copy of it)
  if (m->nforce) memcpy(lw->fz, w->fext, 6 * (size_t)nb * sizeof(mbsReal));
  int fext_on = w->fext_on;
  // the unit solves' statistics: their iterations count, a failure to converge is reported as
  // the evaluation's, the main solves' figures stay those of the tree solve
  mbsSolveStat keep = w->stat, unit = {0};
  unit.reason = MBS_REASON_CONVERGED;
  // the positions stay: every further tree solve has tree solve 0's matrix (schur then redoes
  // only its right side's passes where it can, mbs_schurRhsOnly)
  int np = ops->local ? ops->nport : 0;
  // the separators' sum [L packed | C | G | rhs | failed] in A's storage when it fits (one dense
  // n x n matrix per rank, docs/loops.md 9 "Memory per rank"), else in lw->sub after the scratch;
  // the cut joints are eliminated there, L then spreads over A
  size_t tri = mbs_loopTri(n, 0), ncg = (size_t)np * np + (size_t)np * n;
  size_t len = tri + ncg + (size_t)n + 1;
  int in_a = len <= nn;
  // lw->sub: g of a local solve (np) [+ the sum]
  size_t all = (size_t)np + (in_a ? 0 : len);
  mbsReal *sub = NULL, *buf = NULL;
  if (ops->local) { // allocated by the first evaluation
    MBS_CHECK(len <= (size_t)INT32_MAX, MBS_ERR_NOMEM,
              "%d cut-joint and %d closure equations: the separators' system is too large", np, n);
    if (!lw->sub || lw->nsub != all) { // every caller at once: the same sizes everywhere
      free(lw->sub);
      lw->sub = malloc((all > 0 ? all : 1) * sizeof(mbsReal));
      lw->nsub = lw->sub ? all : 0;
      mbsReal bad = lw->sub ? 0 : 1;
      MBS_CALL(ops->sum(ops->ctx, &bad, 1));
      MBS_CHECK(bad == 0, MBS_ERR_NOMEM, "out of memory (the separators' system, %zu numbers)",
                all);
    }
    sub = lw->sub;
    buf = in_a ? lw->A : sub + np;
  }
  w->reuse = 1;
  mbsErr e = ops->homog(ops->ctx, 1);
  if (ops->local && !e) e = mbs_loopLocalColumns(m, w, lw, ops, buf, sub); // direct
  for (int j = 0; j < n && !e && !ops->local; j++) {
    if (lw->skip[j]) { // a zero row: no unit solve, its column 0
      for (int i = 0; i < n; i++) lw->A[(size_t)i * n + j] = 0;
      continue;
    }
    memset(w->fext, 0, 6 * (size_t)nb * sizeof(mbsReal));
    mbs_loopAddUnit(m, lw, j, w->fext);
    w->fext_on = 1;
    e = ops->solve(ops->ctx);
    unit.total_iterations += w->stat.iterations;
    unit.total_restarts += w->stat.restarts;
    if (w->stat.reason < 0) // the failed unit solve's figures, for the warning
      unit.nonconverged++, unit.reason = w->stat.reason, unit.iterations = w->stat.iterations,
                           unit.residual = w->stat.residual;
    MBS_TIC(w->timer, MBS_TIMER_LOOPS);
    for (int i = 0; i < n; i++)
      lw->A[(size_t)i * n + j] = mbs_loopDotOwned(m, lw, i, w->acc, NULL, ops->b0, ops->b1);
    MBS_TOC(w->timer, MBS_TIMER_LOOPS);
  }
  mbsErr e2 = ops->homog(ops->ctx, 0);
  if (!e) e = e2;
  if (m->nforce)
    memcpy(w->fext, lw->fz, 6 * (size_t)nb * sizeof(mbsReal));
  else
    memset(w->fext, 0, 6 * (size_t)nb * sizeof(mbsReal));
  w->fext_on = fext_on;
  w->stat = keep;
  w->reuse = 0;
  if (ops->local) { // one sum; a failed local solve is agreed on through it
    memcpy(buf + tri + ncg, lw->rhs, (size_t)n * sizeof(mbsReal));
    buf[len - 1] = e ? 1 : 0;
    mbsErr es = ops->sum(ops->ctx, buf, (int)len);
    MBS_CALL(e);
    MBS_CALL(es);
    MBS_CHECK(buf[len - 1] == 0, MBS_ERR_NUMERIC,
              "loops: a local tree solve failed on another rank (see its message)");
    memcpy(lw->rhs, buf + tri + ncg, (size_t)n * sizeof(mbsReal));
    MBS_TIC(w->timer, MBS_TIMER_LOOPS);
    int ok = mbs_loopInterfaceEliminate(np, n, buf + tri, buf + tri + (size_t)np * np, buf, sub);
    if (!in_a) memcpy(lw->A, buf, tri * sizeof(mbsReal));
    mbs_loopUnpack(n, lw->A); // C and G are not needed any more
    MBS_TOC(w->timer, MBS_TIMER_LOOPS);
    MBS_CHECK(ok, MBS_ERR_NUMERIC, "loops: the interface system of the tree solver is not finite");
    for (int i = 0; i < n; i++) // zero rows: no column was solved, their row is left out too
      if (lw->skip[i])
        for (int j = 0; j < n; j++) lw->A[(size_t)i * n + j] = lw->A[(size_t)j * n + i] = 0;
  } else {
    MBS_CALL(e);
    // the partial sums of every caller
    MBS_CALL(ops->sum(ops->ctx, lw->A, (int)nn));
    MBS_CALL(ops->sum(ops->ctx, lw->rhs, n));
  }
  MBS_TIC(w->timer, MBS_TIMER_LOOPS);
  mbs_loopFactorA(m, lw);
  mbs_loopMinNorm(lw, lw->rhs, lw->lam);
  // the loop wrenches join the external ones; the tree is solved again with them
  mbs_loopAddWrench(m, lw, lw->lam, w->fext);
  w->fext_on = 1;
  MBS_TOC(w->timer, MBS_TIMER_LOOPS);
  w->reuse = 1;
  e = ops->solve(ops->ctx);
  w->reuse = 0;
  MBS_CALL(e);
  // the final solve counted as this evaluation's second tree solve; the unit ones added
  w->stat.evals--;
  w->stat.total_iterations += unit.total_iterations;
  w->stat.total_restarts += unit.total_restarts;
  if (unit.nonconverged && w->stat.reason >= 0) {
    w->stat.reason = unit.reason, w->stat.nonconverged++;
    w->stat.iterations = unit.iterations, w->stat.residual = unit.residual;
  }
  memcpy(w->lam + m->nlam, lw->lam, (size_t)n * sizeof(mbsReal));
  // the acceleration-level closure after the solve
  MBS_TIC(w->timer, MBS_TIMER_LOOPS);
  for (int i = 0; i < n; i++)
    lw->tmp[i] = mbs_loopDotOwned(m, lw, i, w->acc, ops->root ? ag : NULL, ops->b0, ops->b1) -
                 (ops->root ? lw->kappa[i] : 0);
  MBS_FLOPS(n);
  MBS_TOC(w->timer, MBS_TIMER_LOOPS);
  MBS_CALL(ops->sum(ops->ctx, lw->tmp, n));
  lw->resid = 0;
  for (int i = 0; i < n; i++) lw->resid = fmax(lw->resid, fabs(lw->tmp[i]));
  return MBS_OK;
}

// ---------------------------------------------------------------- closure rows in the system

int mbs_loopSeparators(const mbsModel *m, int method) {
  return m->nloop && mbs_solverCaps(method)->separators && m->opt.loops != MBS_LOOPS_UNIT;
}

int mbs_loopUseRows(const mbsModel *m, int method) {
  const mbsSolverType *t = mbs_solverFind(method);
  if (!m->nloop || !t || !t->iterative || m->opt.loops == MBS_LOOPS_UNIT) return 0;
  if (m->opt.loops == MBS_LOOPS_ROWS) return 1;
  // auto: the kept equations independent at the assembled q0, so lambda is unique there
  const mbsLoopAssembly *a = &m->loop_asm;
  return a->done && a->rank == m->nlam_loop - a->nskip;
}

const mbsReal *mbs_loopRowsCompute(const mbsModel *m, mbsWork *w, const mbsReal **kappa) {
  struct mbsLoopWork *lw = w->loop;
  mbs_loopAll(m, w, lw, 1);
  if (kappa) *kappa = lw->kappa;
  return lw->D;
}

mbsReal *mbs_loopZeroBegin(const mbsModel *m, mbsWork *w, int b0, int b1) {
  mbs_loopZeroSums(m, w, w->loop, b0, b1);
  return w->loop->zg;
}

const unsigned char *mbs_loopZeroEnd(mbsWork *w) {
  mbs_loopZeroDecide(w->loop);
  return w->loop->skip;
}

void mbs_loopRowsDone(const mbsModel *m, mbsWork *w, const mbsReal *lam, mbsReal resid) {
  struct mbsLoopWork *lw = w->loop;
  int n = lw->n, k = 0;
  memcpy(lw->lam, lam, (size_t)n * sizeof(mbsReal));
  memcpy(w->lam + m->nlam, lam, (size_t)n * sizeof(mbsReal));
  // the kept equations first, then the zero rows (the redundant ones of the reports)
  for (int i = 0; i < n; i++)
    if (!lw->skip[i]) lw->piv[k++] = i;
  lw->rank = k;
  for (int i = 0; i < n; i++)
    if (lw->skip[i]) lw->piv[k++] = i;
  lw->nzero = lw->nskip;
  lw->min_pivot = NAN; // no factorization of the closure equations
  lw->resid = resid;
}
