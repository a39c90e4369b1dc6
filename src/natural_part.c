/// \file natural_part.c
/// The O(n) natural-coordinate solver distributed over parts (docs/natural.md 13). Part r owns
/// the bodies [b0, b1) and eliminates them as natural_tree.c does a whole model, with the joints
/// to parents on earlier parts removed (its roots float). Those part-cut joints' rows and the
/// closed loops' cut-joint rows are the interface rows L: with K the block-diagonal matrix of the
/// parts' forests,
///   p̈ = p̈_F − Z μ,  Z = K⁻¹ Lᵀ,  (L Z) μ = L p̈_F − γ_L,
/// and since K is block-diagonal over the parts, S = L Z = Σ_r L_r Z_r and L p̈_F = Σ_r L_r p̈_F,r:
/// each part computes the unit responses Z_r of the rows that touch its bodies (every interface
/// row touches at most two bodies, so at most two parts) with its own factors. The caller sums
/// the contributions (the parallel layer: one allreduce), every part factors S alike with the
/// pivoted Cholesky of the cut joints (constraint partitioning, solver.rank_tol) and corrects its
/// own p̈. No MPI here.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_loops.h"
#include "natural_private.h"

struct mbsNatPart {
  int nif, nifc;        // interface rows; of them the part-cut joints' (first)
  int *bpart;           // (nb) the part of each body
  int *need, nneed;     // the bodies whose p, ṗ this part reads: its own, their parents and
                        // children, the cut joints' bodies
  int *jnt, njnt;       // the joints whose rows and forces it assembles: its bodies' and those
                        // of its bodies' children on later parts
  int *lrow;            // (nl) the cut joint of each of their rows
  int *cut;             // (nifc) the child body of each part-cut joint row (rows in body order)
  int *ib;              // (2 nif) the (at most two) bodies of each row, -1: none
  double *iw;           // (2 nif x 12) the row's coefficients on those bodies
  double *ig;           // (nif) γ
  unsigned char *touch; // (nif) the row touches this part
  unsigned char *root;  // (nif) its one body here is a root of this part's forest: its response
                        // is needed (and computed) at that root only
  double *Z;            // (nif x 12 nloc) unit responses on this part's bodies
  double *buf;          // (nif² + nif) contributions to S and its right side
  double *mu;           // (nif)
  double *pf;           // (12 nloc) the forest's p̈
  double *zero;         // (6 nb) zero joint right sides for the unit solves
  double *full;         // (12 nb) the gather's target
  int rank;
  long evals, factored, unit, rootsolve;
};

void mbs_naturalPartFree(mbsNaturalWork *nw) {
  struct mbsNatPart *pt = nw->pt;
  free(nw->starts);
  nw->starts = NULL;
  if (!pt) return;
  free(pt->bpart), free(pt->need), free(pt->jnt), free(pt->lrow), free(pt->cut), free(pt->ib),
      free(pt->iw), free(pt->ig), free(pt->touch), free(pt->root);
  free(pt->Z), free(pt->buf), free(pt->mu), free(pt->pf), free(pt->zero), free(pt->full);
  free(pt);
  nw->pt = NULL;
}

void mbs_naturalPartStarts(int nbody, int nparts, int *starts) {
  for (int r = 0; r <= nparts; r++) starts[r] = (int)((long long)nbody * r / nparts);
}

// The cost model of the weighted split (docs/natural.md 13): per body, assembly and
// factorisation cost about MBS_NP_FACTOR forest solves (measured 2.0 against 0.5 µs per body on a
// revolute chain), and a part makes its own forest solve, one per interface row on a non-root
// body it holds and one for its root rows' correction.
#define MBS_NP_FACTOR 4.0

// The model's cost of each part of the split starts (per body, in forest solves: the
// factorisation and its own solve, one per interface row on a non-root body it holds, one for the
// roots' correction; natural_part.c's rule) into cost; returns the largest part's total
static double mbs_npSplitCost(const mbsModel *m, int nparts, const int *starts, int *bpart,
                              double *cost, unsigned char *corr) {
  int nb = m->nbody;
  for (int r = 0; r < nparts; r++) {
    cost[r] = 0, corr[r] = 0;
    for (int b = starts[r]; b < starts[r + 1]; b++) bpart[b] = r;
  }
  for (int c = 0; c < nb; c++) {
    int p = m->body_parent[c];
    if (p < 0 || bpart[p] == bpart[c]) continue;
    int rp = bpart[p];
    corr[bpart[c]] = 1; // (c is a root of its part)
    if (m->body_parent[p] < starts[rp])
      corr[rp] = 1;
    else
      cost[rp] += m->body_lamnum[c];
  }
  for (int k = 0; k < m->nloop; k++)
    for (int h = 0; h < 2; h++) {
      int b = m->loop_body[2 * k + h];
      if (b >= 0 && (h == 0 || m->loop_body[2 * k] < 0 || bpart[b] != bpart[m->loop_body[2 * k]]))
        cost[bpart[b]] += m->loop_lamnum[k];
    }
  double worst = 0;
  for (int r = 0; r < nparts; r++) {
    cost[r] += MBS_NP_FACTOR + 1 + corr[r];
    worst = fmax(worst, cost[r] * (starts[r + 1] - starts[r]));
  }
  return worst;
}

mbsErr mbs_naturalPartSplit(const mbsModel *m, int nparts, int *starts) {
  int nb = m->nbody;
  mbs_naturalPartStarts(nb, nparts, starts);
  if (nparts < 2 || nb < 2 * nparts) return MBS_OK;
  int *bpart = malloc(sizeof(int) * (size_t)nb), *st = malloc(sizeof(int) * (size_t)(nparts + 1));
  double *cost = calloc((size_t)nparts, sizeof(double));
  unsigned char *corr = calloc((size_t)nparts, 1);
  if (!bpart || !st || !cost || !corr) {
    free(bpart), free(st), free(cost), free(corr);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  }
  // the balanced split's costs; bodies in proportion to 1 / (cost per body); the better of the two
  // (moving a boundary changes which joints are cut: on a depth-first tree the balanced split may
  // fall between subtrees, the weighted one inside one)
  double c0 = mbs_npSplitCost(m, nparts, starts, bpart, cost, corr), wsum = 0, at = 0;
  for (int r = 0; r < nparts; r++) wsum += 1 / cost[r];
  st[0] = 0;
  for (int r = 0; r < nparts; r++) {
    at += nb / cost[r] / wsum;
    int s = r + 1 == nparts ? nb : (int)(at + 0.5);
    st[r + 1] = s < st[r] ? st[r] : s > nb ? nb : s;
  }
  if (mbs_npSplitCost(m, nparts, st, bpart, cost, corr) < c0)
    memcpy(starts, st, sizeof(int) * (size_t)(nparts + 1));
  free(bpart), free(st), free(cost), free(corr);
  return MBS_OK;
}

mbsErr mbs_naturalPartSet(const mbsModel *m, mbsNaturalWork *nw, int nparts, int part,
                          const int *starts) {
  MBS_CHECK(nparts >= 1 && part >= 0 && part < nparts, MBS_ERR_INTERNAL, "natural: part %d of %d",
            part, nparts);
  mbs_naturalPartFree(nw);
  int nb = nw->nb;
  nw->starts = malloc(sizeof(int) * (size_t)(nparts + 1));
  struct mbsNatPart *pt = nw->pt = calloc(1, sizeof *pt);
  if (!nw->starts || !pt) {
    mbs_naturalPartFree(nw);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (natural coordinates over %d parts)", nparts);
  }
  if (starts)
    memcpy(nw->starts, starts, sizeof(int) * (size_t)(nparts + 1));
  else if (mbs_naturalPartSplit(m, nparts, nw->starts)) {
    mbs_naturalPartFree(nw);
    return MBS_ERR_NOMEM;
  }
  nw->nparts = nparts, nw->part = part;
  nw->b0 = nw->starts[part], nw->b1 = nw->starts[part + 1];
  pt->bpart = malloc(sizeof(int) * (size_t)(nb + 1));
  pt->need = malloc(sizeof(int) * (size_t)(nb + 1));
  pt->jnt = malloc(sizeof(int) * (size_t)(nb + 1));
  pt->lrow = malloc(sizeof(int) * (size_t)(nw->nl + 1));
  unsigned char *mark = calloc((size_t)nb + 1, 1);
  if (!pt->bpart || !pt->need || !pt->jnt || !pt->lrow || !mark) {
    free(mark);
    mbs_naturalPartFree(nw);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  }
  for (int r = 0; r < nparts; r++)
    for (int b = nw->starts[r]; b < nw->starts[r + 1]; b++) pt->bpart[b] = r;
  // what this part assembles (in body order)
  for (int b = nw->b0; b < nw->b1; b++) {
    int p = m->body_parent[b];
    mark[b] = 1;
    if (p >= 0) mark[p] = 1;
    for (int q = 0; q < m->body_childnum[b]; q++) {
      int c = m->child_list[m->body_childadr[b] + q];
      mark[c] = 1;
      if (c >= nw->b1) pt->jnt[pt->njnt++] = c; // children on later parts first
    }
  }
  for (int k = 0; k < m->nloop; k++)
    for (int h = 0; h < 2; h++)
      if (m->loop_body[2 * k + h] >= 0) mark[m->loop_body[2 * k + h]] = 1;
  for (int b = 0; b < nb; b++)
    if (mark[b]) pt->need[pt->nneed++] = b;
  free(mark);
  for (int b = nw->b0; b < nw->b1; b++) pt->jnt[pt->njnt++] = b; // (then this part's joints)
  int nifc = 0;
  for (int c = 0; c < nb; c++) {
    int p = m->body_parent[c];
    if (p >= 0 && pt->bpart[p] != pt->bpart[c]) nifc += m->body_lamnum[c];
  }
  int nif = nifc + nw->nl;
  size_t nloc = (size_t)(nw->b1 - nw->b0), ni = (size_t)nif;
  pt->nif = nif, pt->nifc = nifc;
  pt->cut = malloc(sizeof(int) * (ni + 1));
  pt->ib = malloc(sizeof(int) * (2 * ni + 1));
  pt->iw = calloc(24 * ni + 1, sizeof(double));
  pt->ig = calloc(ni + 1, sizeof(double));
  pt->touch = calloc(ni + 1, 1);
  pt->root = calloc(ni + 1, 1);
  pt->Z = calloc(12 * ni * nloc + 1, sizeof(double));
  pt->buf = calloc(ni * ni + ni + 1, sizeof(double));
  pt->mu = calloc(ni + 1, sizeof(double));
  pt->pf = calloc(12 * nloc + 1, sizeof(double));
  pt->zero = calloc(6 * (size_t)nb + 1, sizeof(double));
  pt->full = calloc(12 * (size_t)nb + 1, sizeof(double));
  if (!(pt->cut && pt->ib && pt->iw && pt->ig && pt->touch && pt->root && pt->Z && pt->buf &&
        pt->mu && pt->pf && pt->zero && pt->full)) {
    mbs_naturalPartFree(nw);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (natural coordinates: %d interface rows)", nif);
  }
  for (int c = 0, i = 0; c < nb; c++) {
    int p = m->body_parent[c];
    if (p >= 0 && pt->bpart[p] != pt->bpart[c])
      for (int k = 0; k < m->body_lamnum[c]; k++) pt->cut[i++] = c;
  }
  return MBS_OK;
}

// The assembly of mbs_ntAssemble restricted to what this part reads: p, ṗ of the needed bodies,
// the forces on its bodies (gravity, external wrenches, the joint forces of its joints and of its
// children's on later parts), those joints' rows and every cut joint's rows (each row's two
// body blocks copied out of the dense rows, which are zeroed again there: O(1) per row)
static mbsErr mbs_npAssemble(const mbsModel *m, const mbsWork *w, mbsNaturalWork *nw) {
  struct mbsNatPart *pt = nw->pt;
  mbsNat *s = &nw->s;
  for (int i = 0; i < pt->nneed; i++) {
    int b = pt->need[i];
    mbs_natCoordsBody(m, w, s, b);
    memset(s->f + 12 * b, 0, 12 * sizeof(double));
  }
  for (int b = nw->b0; b < nw->b1; b++) mbs_natGravityBody(m, s, b), mbs_natFextBody(m, w, s, b);
  s->blk = 1;
  for (int i = 0; i < pt->njnt; i++) {
    int c = pt->jnt[i];
    MBS_CALL(mbs_natJointForceBody(m, w, s, c));
    memset(nw->Jc + 72 * c, 0, 72 * sizeof(double));
    memset(nw->Jp + 72 * c, 0, 72 * sizeof(double));
    s->bc = c, s->bp = m->body_parent[c], s->row0 = s->row = 0;
    s->Jc = nw->Jc + 72 * c, s->Jp = nw->Jp + 72 * c, s->gj = nw->gj + 6 * c;
    mbs_natJoint(m, w, s, c);
  }
  s->blk = 0;
  s->L = nw->Lr, s->nrt = 0, s->row = 0;
  for (int k = 0; k < m->nloop; k++) {
    int r0 = s->row;
    mbs_natLoop(m, s, k);
    for (int l = r0; l < s->row; l++) pt->lrow[l] = k;
  }
  return MBS_OK;
}

// the interface rows at this state: the part-cut joints' from the joint rows (J_c on the child,
// J_p on the parent), the cut joints' from their dense rows (at most two bodies each)
static mbsErr mbs_npRows(const mbsModel *m, mbsNaturalWork *nw) {
  struct mbsNatPart *pt = nw->pt;
  int np = 12 * nw->nb;
  for (int i = 0, prev = -1, k = 0; i < pt->nifc; i++) {
    int c = pt->cut[i];
    k = c == prev ? k + 1 : 0, prev = c;
    pt->ib[2 * i] = c, pt->ib[2 * i + 1] = m->body_parent[c];
    memcpy(pt->iw + 24 * i, nw->Jc + 72 * c + 12 * k, 12 * sizeof(double));
    memcpy(pt->iw + 24 * i + 12, nw->Jp + 72 * c + 12 * k, 12 * sizeof(double));
    pt->ig[i] = nw->gj[6 * c + k];
  }
  for (int l = 0; l < nw->nl; l++) { // body 1, body 2 of the cut joint (-1: the ground)
    int i = pt->nifc + l, k = pt->lrow[l];
    double *row = nw->Lr + (size_t)l * (size_t)np;
    memset(pt->iw + 24 * i, 0, 24 * sizeof(double));
    for (int h = 0; h < 2; h++) {
      int b = m->loop_body[2 * k + h];
      pt->ib[2 * i + h] = b;
      if (b < 0 || (h == 1 && b == pt->ib[2 * i])) continue;
      memcpy(pt->iw + 24 * i + 12 * h, row + 12 * b, 12 * sizeof(double));
      memset(row + 12 * b, 0, 12 * sizeof(double));
    }
    pt->ig[i] = nw->s.gl[l];
  }
  return MBS_OK;
}

// the body of row i on this part (the first; -1: none)
static int mbs_npBody(const mbsNaturalWork *nw, int i) {
  for (int h = 0; h < 2; h++) {
    int b = nw->pt->ib[2 * i + h];
    if (b >= nw->b0 && b < nw->b1) return b;
  }
  return -1;
}

// the row's coefficients on this part's bodies times a vector x (12 per local body)
static double mbs_npDot(const mbsNaturalWork *nw, int i, const double *x) {
  const struct mbsNatPart *pt = nw->pt;
  double v = 0;
  for (int h = 0; h < 2; h++) {
    int b = pt->ib[2 * i + h];
    if (b < nw->b0 || b >= nw->b1) continue;
    const double *c = pt->iw + 24 * i + 12 * h, *y = x + 12 * (b - nw->b0);
    for (int j = 0; j < 12; j++) v += c[j] * y[j];
  }
  return v;
}

static mbsErr mbs_npEliminate(const mbsModel *m, mbsNaturalWork *nw, const double *v, double **buf,
                              int *n);

mbsErr mbs_naturalPartLocal(const mbsModel *m, const mbsState *s, mbsWork *w, mbsNaturalWork *nw,
                            double **buf, int *n) {
  MBS_CHECK(nw->pt, MBS_ERR_INTERNAL, "natural: the workspace is not distributed");
  mbs_fwdPosition(m, s, w);
  mbs_fwdVelocity(m, s, w);
  if (m->nforce) mbs_fwdForces(m, w); // spring-dampers -> w->fext
  MBS_CALL(mbs_npAssemble(m, w, nw));
  return mbs_npEliminate(m, nw, NULL, buf, n);
}

mbsErr mbs_naturalPartLocalAt(const mbsModel *m, mbsNaturalWork *nw, double **buf, int *n) {
  struct mbsNatPart *pt = nw->pt;
  MBS_CHECK(pt, MBS_ERR_INTERNAL, "natural: the workspace is not distributed");
  for (int k = 0, l = 0; k < m->nloop; k++) // the cut joint of each row (loop_lamnum rows each)
    for (int i = 0; i < m->loop_lamnum[k] && l < nw->nl; i++) pt->lrow[l++] = k;
  return mbs_npEliminate(m, nw, NULL, buf, n);
}

mbsErr mbs_naturalPartCorrectLocal(const mbsModel *m, mbsNaturalWork *nw, const double *v,
                                   double **buf, int *n) {
  struct mbsNatPart *pt = nw->pt;
  MBS_CHECK(pt, MBS_ERR_INTERNAL, "natural: the workspace is not distributed");
  for (int k = 0, l = 0; k < m->nloop; k++)
    for (int i = 0; i < m->loop_lamnum[k] && l < nw->nl; i++) pt->lrow[l++] = k;
  int nb = nw->nb; // the rows' right sides −v (natural_runon.c's layout), as mbs_ntCorrect's
  for (int i = 0; i < 6 * nb; i++) nw->gj[i] = -v[6 * nb + i];
  for (int i = 0; i < nw->nl; i++) nw->s.gl[i] = -v[12 * nb + i];
  return mbs_npEliminate(m, nw, v, buf, n);
}

// the part's elimination after the assembly (rows in Jc, Jp, gj, Lr, s.gl; forces in s.f; v not
// NULL: the projection's right sides, zero on p̈ and −v on the rigid rows)
static mbsErr mbs_npEliminate(const mbsModel *m, mbsNaturalWork *nw, const double *v, double **buf,
                              int *n) {
  struct mbsNatPart *pt = nw->pt;
  int b0 = nw->b0, b1 = nw->b1, nif = pt->nif;
  size_t nl12 = 12 * (size_t)(b1 - b0);
  MBS_CALL(mbs_npRows(m, nw));
  MBS_CALL(mbs_ntFactor(m, nw));
  pt->evals++, pt->factored += b1 - b0;
  // this forest's solution
  for (int b = b0; b < b1; b++) {
    if (v) {
      memset(nw->r + NB * b, 0, 12 * sizeof(double));
      for (int r = 0; r < 6; r++) nw->r[NB * b + 12 + r] = -v[6 * b + r];
    } else {
      memcpy(nw->r + NB * b, nw->s.f + 12 * b, 12 * sizeof(double));
      memcpy(nw->r + NB * b + 12, nw->rg + 6 * b, 6 * sizeof(double));
    }
  }
  mbs_ntSolve(m, nw, nw->gj, 1);
  memcpy(pt->pf, nw->pdd + 12 * b0, nl12 * sizeof(double));
  // the unit responses of the interface rows that touch this part: a rank-cut row on a root of
  // this forest needs its response at that root only (O(1): the other entries of S it meets come
  // from the other rows' responses by symmetry, the correction is one solve in Finish)
  for (int i = 0; i < nif; i++) {
    int a = pt->ib[2 * i], c = pt->ib[2 * i + 1], ain = a >= b0 && a < b1, cin = c >= b0 && c < b1;
    pt->touch[i] = ain || cin;
    pt->root[i] = 0;
    if (!pt->touch[i]) continue;
    if (i < pt->nifc && ain != cin) {
      int b = ain ? a : c;
      if (m->body_parent[b] < b0) {
        pt->root[i] = 1;
        mbs_ntRootSolve(m, nw, b, pt->iw + 24 * i + 12 * (ain ? 0 : 1),
                        pt->Z + (size_t)i * nl12 + 12 * (size_t)(b - b0));
        pt->rootsolve++;
        continue;
      }
    }
    for (int b = b0; b < b1; b++) memset(nw->r + NB * b, 0, NB * sizeof(double));
    for (int h = 0; h < 2; h++) {
      int b = pt->ib[2 * i + h];
      if (b < b0 || b >= b1) continue;
      for (int j = 0; j < 12; j++) nw->r[NB * b + j] += pt->iw[24 * i + 12 * h + j];
    }
    mbs_ntSolve(m, nw, pt->zero, 0);
    memcpy(pt->Z + (size_t)i * nl12, nw->pdd + 12 * b0, nl12 * sizeof(double));
    pt->unit++;
  }
  // contributions: S_ik = Σ_r L_i,r Z_k,r, the right side Σ_r L_i,r p̈_F,r − γ_i (γ added by the
  // part of the row's first body)
  double *S = pt->buf, *rhs = pt->buf + (size_t)nif * nif;
  memset(pt->buf, 0, ((size_t)nif * nif + nif) * sizeof(double));
  for (int i = 0; i < nif; i++) {
    if (!pt->touch[i]) continue;
    for (int k = 0; k < nif; k++) {
      if (!pt->touch[k]) continue;
      double v = 0;
      if (!pt->root[k]) // (Z_k everywhere)
        v = mbs_npDot(nw, i, pt->Z + (size_t)k * nl12);
      else if (!pt->root[i]) // symmetry: Z_i everywhere
        v = mbs_npDot(nw, k, pt->Z + (size_t)i * nl12);
      else if (mbs_npBody(nw, i) == mbs_npBody(nw, k)) // two rows on one root (else: two trees)
        v = mbs_npDot(nw, i, pt->Z + (size_t)k * nl12);
      S[(size_t)i * nif + k] = v;
    }
    rhs[i] = mbs_npDot(nw, i, pt->pf);
    int first = pt->ib[2 * i] >= 0 ? pt->ib[2 * i] : pt->ib[2 * i + 1];
    if (first >= b0 && first < b1) rhs[i] -= pt->ig[i];
  }
  *buf = pt->buf, *n = nif * nif + nif;
  return MBS_OK;
}

mbsErr mbs_naturalPartFinish(const mbsModel *m, mbsNaturalWork *nw, const double **local, int *n,
                             double **full) {
  struct mbsNatPart *pt = nw->pt;
  MBS_CHECK(pt, MBS_ERR_INTERNAL, "natural: the workspace is not distributed");
  int b0 = nw->b0, b1 = nw->b1, nif = pt->nif;
  size_t nl12 = 12 * (size_t)(b1 - b0);
  double *x = nw->pdd + 12 * b0;
  memcpy(x, pt->pf, nl12 * sizeof(double));
  pt->rank = 0;
  if (nif) {
    double *S = pt->buf, *rhs = pt->buf + (size_t)nif * nif;
    pt->rank = mbs_natPivChol(S, nif,
                              nw->ptol > 0          ? nw->ptol
                              : m->opt.rank_tol > 0 ? m->opt.rank_tol
                                                    : 1e-10,
                              rhs, pt->mu);
    MBS_CHECK(pt->rank >= 0, MBS_ERR_NOMEM, "out of memory");
    int nroot = 0; // the rows on roots: p̈ −= K⁻¹ Σ μ_k l_kᵀ, one solve
    for (int b = b0; b < b1; b++) memset(nw->r + NB * b, 0, NB * sizeof(double));
    for (int k = 0; k < nif; k++) {
      if (!pt->touch[k] || !pt->root[k] || pt->mu[k] == 0) continue;
      int b = mbs_npBody(nw, k), h = pt->ib[2 * k] == b ? 0 : 1;
      for (int j = 0; j < 12; j++) nw->r[NB * b + j] += pt->mu[k] * pt->iw[24 * k + 12 * h + j];
      nroot++;
    }
    if (nroot) {
      mbs_ntSolve(m, nw, pt->zero, 0);
      for (size_t j = 0; j < nl12; j++) x[j] = pt->pf[j] - x[j];
      pt->unit++;
    }
    for (int k = 0; k < nif; k++) {
      if (!pt->touch[k] || pt->root[k] || pt->mu[k] == 0) continue;
      const double *z = pt->Z + (size_t)k * nl12;
      for (size_t j = 0; j < nl12; j++) x[j] -= z[j] * pt->mu[k];
    }
  }
  *local = x, *n = (int)nl12, *full = pt->full;
  return MBS_OK;
}

void mbs_naturalPartGiven(mbsNaturalWork *nw) {
  if (!nw->pt) return;
  memcpy(nw->pdd, nw->pt->full, 12 * (size_t)nw->nb * sizeof(double));
  nw->given = 1;
}

void mbs_naturalPartGetInfo(const mbsNaturalWork *nw, mbsNaturalPartInfo *info) {
  memset(info, 0, sizeof *info);
  const struct mbsNatPart *pt = nw->pt;
  if (!pt) return;
  info->nparts = nw->nparts, info->part = nw->part, info->b0 = nw->b0, info->b1 = nw->b1;
  info->nif = pt->nif, info->nif_cut = pt->nifc, info->rank = pt->rank;
  info->evals = pt->evals, info->factored = pt->factored, info->unit_solves = pt->unit;
  info->root_solves = pt->rootsolve;
  info->starts = nw->starts;
}
