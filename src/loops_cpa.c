/// \file loops_cpa.c
/// The critical-path graph of a loop model's evaluation (src/loops.c, docs/cpa.md "Loop models"):
/// the unit solves, schur's separators or the closure rows, around the method's tree solves.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpa_private.h"

// ---------------------------------------------------------------- closed loops, spring-dampers

static mbsErr mbs_cpaLoopTree(mbsCpaB *B, const mbsCpaKin *K, int graph, int *scr, int fext,
                              int src, int after, const mbsCpaOptions *os, int solve, int *end);

// schur's separators (docs/loops.md 8.1, src/loops.c mbs_loopLocalColumns): on every rank, after
// `rows`, one local solve for its cut-joint system (if any cut joint), then for each equation j
// with a side on the rank (not a zero row) the unit pair, a local solve and the column's dots
// over the rank's sides, each rank's in sequence; then one sum of [C G L b] and the cut joints'
// elimination on every rank (*red: its node)
static mbsErr mbs_cpaLoopSeparators(mbsCpaB *B, const mbsCpaKin *K, int *scr, const int *eqb,
                                    const unsigned char *skip, const int *ord, const int *first,
                                    int rows, int *red) {
  const mbsModel *m = B->m;
  const mbsCpaOptions *o = B->o;
  const mbsCpaSch *X = B->sch;
  int n = m->nbody, neq = m->nlam_loop, P = X->P, np = 0, n0 = B->n;
  unsigned char *mk = calloc((size_t)P, 1), *pth = calloc((size_t)n + 1, 1);
  int *lastr = malloc((size_t)P * sizeof(int));
  if (!mk || !lastr || !pth) {
    free(mk), free(lastr), free(pth);
    return mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  }
  for (int b = 0; b < n; b++) // the cut joints' lambdas over all ranks
    if (m->body_parent[b] >= 0 && mbs_cpaOwner(B, m->body_parent[b]) != mbs_cpaOwner(B, b))
      np += m->body_lamnum[b];
  mbsErr e = MBS_OK;
  for (int r = 0; !e && r < P; r++) {
    lastr[r] = rows;
    mk[r] = 1;
    B->smask = mk;
    int end = -1;
    if (np > 0) { // the rank's cut-joint system: one local solve (its load does not matter; no
                  // accelerations wanted)
      B->bfirst = first, B->blim = -1;
      e = mbs_cpaLoopTree(B, K, MBS_CPA_GRAPH_SCHUR, scr, 1, rows, rows, o, neq + 2, &end);
      B->bfirst = NULL;
      lastr[r] = end;
    }
    long long cf = 0; // the dots over the rank's sides of the equations at or before t
    for (int t = 0; !e && t < neq; t++) {
      int j = ord[t], b1 = eqb[2 * j], b2 = eqb[2 * j + 1];
      for (int sd = 0; sd < 2; sd++)
        cf += eqb[2 * j + sd] >= 0 && mbs_cpaOwner(B, eqb[2 * j + sd]) == r ? MBS_FL_LOOP_DOT : 0;
      if ((skip && skip[j]) ||
          !((b1 >= 0 && mbs_cpaOwner(B, b1) == r) || (b2 >= 0 && mbs_cpaOwner(B, b2) == r)))
        continue;
      B->cls = MBS_CPA_CLASS_SOLVE;
      int unit = mbs_cpaNodeOn(B, MBS_CPA_LOOP_UNIT, -1, 6LL * ((b1 >= 0) + (b2 >= 0)), -1, -1, r);
      mbs_cpaDep(B, o->loops_concurrent ? rows : lastr[r], unit);
      // the bias passes along the loaded bodies' paths on the rank (mbs_schurRankFactorPath)
      int rb0 = X->R[r].b0, rb1 = X->R[r].b1, ld[2] = {b1, b2};
      if (mbs_schurRhsOnly(X->R[r].rk)) {
        for (int k = 0; k < 2; k++)
          for (int b = ld[k]; b >= rb0 && b < rb1 && !pth[b]; b = m->body_parent[b]) pth[b] = 1;
        B->spath = pth;
      }
      B->bfirst = first, B->blim = t; // the bodies the equations at or before t need
      e = mbs_cpaLoopTree(B, K, MBS_CPA_GRAPH_SCHUR, scr, 1, unit, unit, o, j + 1, &end);
      B->bfirst = NULL;
      if (B->spath) memset(pth, 0, (size_t)n);
      B->spath = NULL;
      B->cls = MBS_CPA_CLASS_SOLVE;
      int col = mbs_cpaNodeOn(B, MBS_CPA_LOOP_COLUMN, -1, cf, -1, -1, r);
      mbs_cpaDep(B, end, col);
      lastr[r] = col;
    }
    mk[r] = 0;
    B->smask = NULL;
  }
  if (!e) {
    int last = mbs_cpaSync(B, n0, B->n);
    *red = mbs_cpaLoopReduce(B, (double)np * np + (double)np * neq + (double)neq * neq + neq + 1, 1,
                             last);
    if (np > 0) { // A -= G^T C^-1 G on every rank (mbs_schurReduce)
      B->cls = MBS_CPA_CLASS_SOLVE;
      int el = mbs_cpaNode(B, MBS_CPA_LOOP_FACTOR, -1, mbs_flopSchurReduce(neq, np), -1, -1);
      mbs_cpaDep(B, *red, el);
      *red = el;
    }
  }
  free(mk), free(lastr), free(pth);
  return e;
}

// phase stride between the tree solves of a loop evaluation (block and body grain merge only
// within one solve)
#define MBS_CPA_LOOP_PHASES 2000000

// a 0-flop node after every node in [n0, n1) (the end of a step every rank finishes before the
// next: the code's order)
int mbs_cpaSync(mbsCpaB *B, int n0, int n1) {
  int s = mbs_cpaNode(B, MBS_CPA_LOOP_SYNC, -1, 0, -1, -1);
  for (int v = n0; v < n1; v++) mbs_cpaDep(B, v, s);
  return s;
}

// an allreduce (+ broadcast when bcast) of nd doubles over the ranks of a distributed graph after
// node `after`; returns `after` on one rank and in data-flow graphs (no message)
int mbs_cpaLoopReduce(mbsCpaB *B, double nd, int bcast, int after) {
  int R = B->o->ranks;
  if (R <= 1) return after;
  int v = mbs_cpaNode(B, MBS_CPA_MSG_ALLREDUCE, -1, 0, -1, -1);
  if (v < 0) return v;
  int rounds = mbs_cpaLog2(R);
  B->cost[v] = (bcast ? 2 : 1) * rounds * (B->o->latency + 8.0 * nd / B->o->bandwidth) +
               (double)rounds * nd * B->o->flop_time;
  B->proc[v] = -2;
  mbs_cpaDep(B, after, v);
  return v;
}

// one tree solve of the method (graph ABA or a constraint-force solver) after node `after`, with
// the external wrenches of node `src` when fext; os: its iterations; returns its closing sync
static mbsErr mbs_cpaLoopTree(mbsCpaB *B, const mbsCpaKin *K, int graph, int *scr, int fext,
                              int src, int after, const mbsCpaOptions *os, int solve, int *end) {
  const mbsModel *m = B->m;
  int n = m->nbody, n0 = B->n;
  size_t nb = (size_t)n;
  mbsCpaKin Kx = *K;
  const mbsCpaOptions *keep = B->o;
  mbsErr e = MBS_OK;
  B->phoff = (solve + 1) * MBS_CPA_LOOP_PHASES;
  B->fext = fext;
  B->cls = MBS_CPA_CLASS_DYN;
  if (fext) { // f_ext enters with the bias forces (ABA: pA -= f_ext, 6 flops per body; schur:
              // the same in each owned body's articulated record or compliance-form start)
    Kx.bias = scr + 4 * nb;
    for (int b = 0; b < n; b++) {
      if ((B->smask && !B->smask[mbs_cpaOwner(B, b)]) || (B->spath && !B->spath[b])) {
        Kx.bias[b] = K->bias[b]; // a local solve of other ranks, or off its loaded paths
        continue;
      }
      int f6 = graph == MBS_CPA_GRAPH_ABA || graph == MBS_CPA_GRAPH_SCHUR;
      Kx.bias[b] = mbs_cpaNode(B, MBS_CPA_LOOP_FEXT, b, f6 ? 6 : 0, -1, -1);
      mbs_cpaDep(B, K->bias[b], Kx.bias[b]);
      mbs_cpaDep(B, src, Kx.bias[b]);
    }
  }
  B->o = os;
  B->reuse = solve > 0; // the positions stay: solve 0's blocks (cfs) and factor (direct)
  if (graph == MBS_CPA_GRAPH_ABA)
    mbs_cpaAba(B, &Kx, scr, scr + nb, scr + 2 * nb, scr + 3 * nb);
  else if (graph == MBS_CPA_GRAPH_SCHUR) // solve 0 uses the ghost stages of the kinematics
    e = mbs_cpaSchSolve(B, &Kx, B->sch, solve > 0,
                        B->smask || (solve > 0 && solve <= m->nlam_loop));
  else
    e = mbs_cpaCfs(B, &Kx);
  B->o = keep;
  B->fext = 0;
  B->phoff = 0;
  B->reuse = 0;
  int n1 = B->n;
  for (int v = n0; v < n1; v++) mbs_cpaDep(B, after, v); // the code's order: after the last step
  *end = mbs_cpaSync(B, n0, n1);
  return e;
}

// flops of mbs_loopZeroSums for loop k with every joint on one rank (its rows share the walks);
// mark: nbody bytes of zeros, left zero
static long long mbs_cpaLoopZeroFlops(const mbsModel *m, int k, char *mark) {
  long long f = 0;
  int nk = m->loop_lamnum[k], sides[2] = {m->loop_body[2 * k], m->loop_body[2 * k + 1]};
  for (int s = 0; s < 2; s++) {
    if (sides[s] < 0) continue;
    f += (long long)nk * (MBS_FL_LOOP_ZSIDE + MBS_FL_DOT6 + 2);
    for (int c = sides[s]; c >= 0; c = m->body_parent[c]) {
      int nd = m->body_dofnum[c];
      if (nd == 0) continue;
      f += mbs_flopLoopZeroVisit(nd, nk);
      if (!mark[c]) mark[c] = 1, f += 2LL * nd * nk;
    }
  }
  for (int s = 0; s < 2; s++)
    for (int c = sides[s]; c >= 0; c = m->body_parent[c]) mark[c] = 0;
  return f;
}

// flops of loop k's loop.rows node: mbs_loopRows with velocities (directions, right sides) and
// the zero-row test of its equations (mbs_loopZeroSums, every joint on one rank; the first loop
// also the ground-frame subspaces of every dof); mark as in mbs_cpaLoopZeroFlops
long long mbs_cpaLoopRowsFlops(const mbsModel *m, int k, int stab, char *mark) {
  int t = m->loop_type[k], nk = m->loop_lamnum[k], npos = 0;
  for (int r = 0; r < nk; r++) npos += mbs_loopEqIsPosition(t, r);
  long long f = mbs_flopLoopRows(npos, nk - npos, m->loop_body[2 * k] >= 0,
                                 m->loop_body[2 * k + 1] >= 0, stab) +
                mbs_cpaLoopZeroFlops(m, k, mark);
  if (k == 0) f += (long long)MBS_FL_LOOP_ZDOF * m->nv; // S^g of every dof
  return f;
}

// one evaluation of a model with closed loops or spring-dampers (docs/loops.md 8.1, docs/cpa.md
// "Loop models"): the engine's loop solve for the constraint-force methods (m + 2 tree solves),
// the serial baseline mbs_loopSolve for aba
mbsErr mbs_cpaLoops(mbsCpaB *B, const mbsCpaKin *K, int graph) {
  const mbsModel *m = B->m;
  const mbsCpaOptions *o = B->o;
  int n = m->nbody, nkin = B->n, neq = m->nlam_loop, aba = graph == MBS_CPA_GRAPH_ABA;
  size_t nb = (size_t)(n > 0 ? n : 1);
  MBS_CHECK(neq <= 1000, MBS_ERR_UNSUPPORTED,
            "cpa: %d closure equations: the loop graph is limited to 1000", neq);
  int *scr = malloc(5 * nb * sizeof(int)), *eqb = malloc(2 * (size_t)(neq + 1) * sizeof(int));
  size_t nsib = 0;
  for (int b = 0; b < n; b++) nsib += (size_t)m->body_childnum[b] * (m->body_childnum[b] - 1) / 2;
  int cfs = !aba && graph != MBS_CPA_GRAPH_SCHUR;
  B->keep = cfs ? malloc((5 * nb + nsib + 1) * sizeof(int)) : NULL;
  if (!scr || !eqb || (cfs && !B->keep)) {
    free(scr), free(eqb), free(B->keep);
    B->keep = NULL;
    return mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  }
  for (int k = 0, i = 0; k < m->nloop; k++)
    for (int r = 0; r < m->loop_lamnum[k]; r++, i++)
      eqb[2 * i] = m->loop_body[2 * k], eqb[2 * i + 1] = m->loop_body[2 * k + 1];
  int rank = o->loop_rank >= 0 ? o->loop_rank : m->loop_asm.rank;
  // the zero rows the factorization drops: at least those known in advance (their A_ii is 0)
  int nzero = o->loop_zero >= 0 ? o->loop_zero : m->loop_asm.nskip;
  // the zero rows known in advance: no unit solve (aba and the engine; docs/loops.md 8.1)
  const unsigned char *skip = o->loop_skip ? o->loop_skip : m->loop_asm.skip;
  if (rank > neq) rank = neq;
  mbsErr e = MBS_OK;
  int stab = m->opt.baumgarte[0] != 0 || m->opt.baumgarte[1] != 0;
  // the bodies' stages gathered on every rank (engine: one allreduce of 18 per loop or spring
  // body after every rank's kinematics; serial aba: nothing), the spring-dampers' wrenches
  B->cls = MBS_CPA_CLASS_KIN;
  int gath = -1, springs = -1, n0 = B->n;
  if (!aba) {
    int nlb = 0;
    char *mark = calloc(nb, 1);
    for (int k = 0; mark && k < 2 * m->nloop + 2 * m->nforce; k++) {
      int b = k < 2 * m->nloop ? m->loop_body[k] : m->force_body[k - 2 * m->nloop];
      if (b >= 0 && !mark[b]) mark[b] = 1, nlb++;
    }
    free(mark);
    gath = mbs_cpaLoopReduce(B, 18.0 * nlb, 0, mbs_cpaSync(B, 0, nkin));
  }
  for (int j = 0; j < m->nforce; j++) {
    int b1 = m->force_body[2 * j], b2 = m->force_body[2 * j + 1];
    int s = mbs_cpaNode(B, MBS_CPA_LOOP_SPRING, -1, mbs_flopSpring(b1 >= 0, b2 >= 0), -1, -1);
    mbs_cpaDep(B, gath, s);
    if (b1 >= 0) mbs_cpaDep(B, K->pose[b1], s), mbs_cpaDep(B, K->v[b1], s);
    if (b2 >= 0) mbs_cpaDep(B, K->pose[b2], s), mbs_cpaDep(B, K->v[b2], s);
  }
  if (m->nforce) springs = mbs_cpaSync(B, n0, B->n);
  int end = -1, step = springs >= 0 ? springs : gath;
  if (cfs && m->nloop && mbs_loopUseRows(m, o->method)) {
    // the closure rows in the system (docs/loops.md 8.4): one tree solve that holds them
    const unsigned char *sk = o->loop_skip ? o->loop_skip : m->loop_asm.skip;
    B->lbody = calloc(nb, 1);
    if (!B->lbody) e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
    for (int k = 0; !e && k < 2 * m->nloop; k++)
      if (m->loop_body[k] >= 0) B->lbody[m->loop_body[k]] = 1;
    B->lrows = neq, B->lskip = sk, B->lsetup = -1, B->lprec = 0;
    for (int k = 0; k < m->nloop; k++) {
      int nr = mbs_cpaLoopKept(m, sk, k);
      if (nr) B->lprec += mbs_flopCholSolve(nr);
    }
    if (!e) e = mbs_cpaLoopTree(B, K, graph, scr, m->nforce > 0, springs, step, o, 0, &end);
    B->lrows = 0, B->lskip = NULL;
    free(B->lbody), free(scr), free(eqb), free(B->keep);
    B->lbody = NULL, B->keep = NULL;
    return e;
  }
  // tree solve 0 (with the springs)
  e = mbs_cpaLoopTree(B, K, graph, scr, m->nforce > 0, springs, step, o, 0, &end);
  if (e || !m->nloop) { // spring-dampers only: one tree solve
    free(scr), free(eqb), free(B->keep);
    B->keep = NULL;
    return e;
  }
  // the rows of every closure equation and the right side b = kappa' - D^T a0
  B->cls = MBS_CPA_CLASS_SOLVE;
  int r0 = B->n;
  char *zmark = calloc(nb, 1);
  if (!zmark) e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  for (int k = 0; !e && k < m->nloop; k++) {
    int nk = m->loop_lamnum[k];
    int rn = mbs_cpaNode(B, MBS_CPA_LOOP_ROWS, -1, mbs_cpaLoopRowsFlops(m, k, stab, zmark), -1, -1);
    mbs_cpaDep(B, end, rn);
    // the right side: the equation's dots with a0 (a ground side with a_ground) and kappa'
    int rh = mbs_cpaNode(B, MBS_CPA_LOOP_RHS, -1, (2LL * MBS_FL_LOOP_DOT + 1) * nk, -1, -1);
    mbs_cpaDep(B, rn, rh);
  }
  free(zmark);
  int rows = mbs_cpaSync(B, r0, B->n);
  if (!aba) rows = mbs_cpaLoopReduce(B, 2.0 * neq, 1, rows); // the zero-row sums
  // A column by column: the unit wrench pair, a homogeneous tree solve, the column's dots
  int prev = rows, last = rows, cols0 = B->n, sepred = -1;
  int *cols = malloc((size_t)(neq + 1) * sizeof(int));
  // aba: its columns in mbs_loopColumnOrder, each with pass 3 only where equations at or before
  // its position need it and only their dots (A is symmetric); the others in equation order
  int *ord = malloc((size_t)(neq + 1) * sizeof(int)), *first = malloc((size_t)nb * sizeof(int));
  // (schur's separators: the same order and cut, mbs_loopLocalColumns)
  int sep = graph == MBS_CPA_GRAPH_SCHUR && mbs_loopSeparators(m, o->method);
  if (!cols || !ord || !first || ((aba || sep) && mbs_loopColumnOrder(m, ord, first)))
    e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  if (!e && !aba && !sep)
    for (int t = 0; t < neq; t++) ord[t] = t;
  if (!e && sep) e = mbs_cpaLoopSeparators(B, K, scr, eqb, skip, ord, first, rows, &sepred);
  for (int t = 0; !e && !sep && t < neq; t++) {
    int j = ord[t];
    if (skip && skip[j]) continue; // its column is 0
    mbsCpaOptions os = *o;
    if (o->loop_solves) {
      const int *q = o->loop_solves + 4 * j;
      os.iterations = q[0], os.converged = q[1], os.spec_iterations = q[2];
      os.spec_converged = q[3];
    }
    int sides = (eqb[2 * j] >= 0) + (eqb[2 * j + 1] >= 0);
    B->cls = MBS_CPA_CLASS_SOLVE;
    int unit = mbs_cpaNode(B, MBS_CPA_LOOP_UNIT, -1, aba ? 0 : 6LL * sides, -1, -1);
    mbs_cpaDep(B, o->loops_concurrent ? rows : prev, unit);
    if (aba) { // mbs_loopSweep: tip to base on the loaded bodies, base to tip on the moving ones
      long long f = 0;
      char *ld = calloc(nb, 1);
      if (!ld) {
        e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
        break;
      }
      for (int s = 0; s < 2; s++)
        for (int b = eqb[2 * j + s]; b >= 0 && !ld[b]; b = m->body_parent[b]) ld[b] = 1;
      for (int b = 0; b < n; b++) {
        int p = m->body_parent[b], k = m->body_dofnum[b];
        if (ld[b]) f += mbs_flopLoopSweepBack(k, p >= 0);
        if (first[b] > t) continue; // no equation at or before t needs it (nor its subtree)
        if (ld[b] || (p >= 0 && ld[p] == 2)) ld[b] = 2, f += mbs_flopLoopSweepFwd(k, p >= 0);
      }
      free(ld);
      int sw = mbs_cpaNode(B, MBS_CPA_LOOP_SWEEP, -1, f, -1, -1);
      mbs_cpaDep(B, unit, sw);
      mbs_cpaDep(B, prev, sw);
      end = sw;
    } else {
      e = mbs_cpaLoopTree(B, K, graph, scr, 1, unit, unit, &os, j + 1, &end);
    }
    B->cls = MBS_CPA_CLASS_SOLVE;
    long long cf = 0; // A_ij = D_i^T a over the body sides of each equation (aba: i at or
                      // before t and not a zero row)
    for (int s = 0; s < (aba ? t + 1 : neq); s++) {
      int i = ord[s];
      if (!aba || !skip || !skip[i])
        cf += (long long)MBS_FL_LOOP_DOT * ((eqb[2 * i] >= 0) + (eqb[2 * i + 1] >= 0));
    }
    cols[j] = mbs_cpaNode(B, MBS_CPA_LOOP_COLUMN, -1, cf, -1, -1);
    mbs_cpaDep(B, end, cols[j]);
    prev = cols[j];
  }
  if (!e && aba && neq > 0) { // mbs_abaFactor before the sweeps
    long long f = 0;
    for (int b = 0; b < n; b++)
      f += mbs_flopLoopAbaFactor(m->body_dofnum[b], m->body_parent[b] >= 0);
    B->cls = MBS_CPA_CLASS_DYN;
    int af = mbs_cpaNode(B, MBS_CPA_LOOP_ABAFACTOR, -1, f, -1, -1);
    mbs_cpaDep(B, rows, af);
    for (int v = cols0; v < B->n; v++)
      if (B->kind[v] == MBS_CPA_LOOP_SWEEP) mbs_cpaDep(B, af, v);
  }
  if (!e) {
    last = neq ? mbs_cpaSync(B, cols0, B->n) : rows;
    // the partial A and b summed (allreduce + broadcast), the free compliances, the
    // rank-revealing factorization, the minimum-norm lambda, the loop wrenches D lambda
    // (separators: their one sum and the cut joints' elimination came before)
    int red = sep ? sepred : aba ? last : mbs_cpaLoopReduce(B, (double)neq * neq, 1, last);
    red = aba || sep ? red : mbs_cpaLoopReduce(B, neq, 1, red);
    long long ff = mbs_flopLoopFactor(neq, rank, nzero, 1) + mbs_flopLoopMinNorm(neq, rank, nzero),
              fw = 0;
    for (int i = 0; i < neq; i++) {
      int sides = (eqb[2 * i] >= 0) + (eqb[2 * i + 1] >= 0);
      ff += (long long)MBS_FL_LOOP_FREE * sides;
      fw += 12LL * sides;
    }
    B->cls = MBS_CPA_CLASS_SOLVE;
    int fac = mbs_cpaNode(B, MBS_CPA_LOOP_FACTOR, -1, ff, -1, -1);
    mbs_cpaDep(B, red, fac);
    int wr = mbs_cpaNode(B, MBS_CPA_LOOP_WRENCH, -1, fw, -1, -1);
    mbs_cpaDep(B, fac, wr);
    // the final tree solve with the loop wrenches, the closure residual and its sum
    mbsCpaOptions os = *o;
    if (o->loop_solves) {
      const int *q = o->loop_solves + 4 * neq;
      os.iterations = q[0], os.converged = q[1], os.spec_iterations = q[2];
      os.spec_converged = q[3];
    }
    e = mbs_cpaLoopTree(B, K, graph, scr, 1, wr, wr, &os, neq + 1, &end);
    B->cls = MBS_CPA_CLASS_SOLVE;
    int res = mbs_cpaNode(B, MBS_CPA_LOOP_RESID, -1, (2LL * MBS_FL_LOOP_DOT + 1) * neq, -1, -1);
    mbs_cpaDep(B, end, res);
    if (!aba) mbs_cpaLoopReduce(B, neq, 1, res);
  }
  free(cols), free(ord), free(first), free(scr), free(eqb), free(B->keep);
  B->keep = NULL;
  return e;
}

mbsErr mbs_cpaLoopsGraph(mbsCpaB *B, mbsCpaKin *K) {
  mbs_cpaKinStage(B, K);
  return mbs_cpaLoops(B, K, mbs_solverCaps(B->o->method)->cpa_graph);
}
