/// \file cfs_op.c
/// The constraint-force system's operator (docs/formulation.md part 3): the matrix-free sweeps
/// (mbs_cfsApply, mbs_cfsApplyColour), the block-diagonal preconditioner (mbs_cfsPrecond), the
/// explicit blocks and rows (mbs_cfsAssemble, mbs_cfsRow) and the warm start (mbs_cfsWarmStart,
/// mbs_cfsPushHistory). The workspace and the evaluation around a solve are in cfs.c.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_loops.h"
#include "solver_private.h"
#include "spatial.h"
#include "flops.h"
// ---------------------------------------------------------------- operator

// Run STMT for every owned body b: threaded when the rank owns many bodies, a plain loop
// otherwise (an OpenMP region whose if() clause is false still enters libgomp, which allocates
// and frees per region: measured ~5 us per CG iteration on small models).
#define MBS_FOR_OWNED(c, b, STMT)                                                                  \
  do {                                                                                             \
    if ((c)->b1 - (c)->b0 > MBS_OMP_MIN) {                                                         \
      _Pragma("omp parallel for schedule(static)") for (int b = (c)->b0; b < (c)->b1; b++) {       \
        STMT;                                                                                      \
      }                                                                                            \
    } else {                                                                                       \
      for (int b = (c)->b0; b < (c)->b1; b++) {                                                    \
        STMT;                                                                                      \
      }                                                                                            \
    }                                                                                              \
  } while (0)

// up: wr_b = T_b x_b (+ F_b tau_b); up_b = X_bp^T wr_b
static inline void mbs_cfsUpBody(const mbsModel *m, const mbsWork *w, mbsCfs *c, const mbsReal *x,
                                 int known, int b) {
  int nl = m->body_lamnum[b], la = m->body_lamadr[b];
  const mbsReal *T = c->T + 6 * la;
  mbsReal *wr = c->wr + 6 * b;
  for (int i = 0; i < 6; i++) wr[i] = 0;
  for (int k = 0; k < nl; k++)
    for (int i = 0; i < 6; i++) wr[i] += T[6 * k + i] * x[la + k];
  if (known) {
    int nd = m->body_dofnum[b], da = m->body_dofadr[b];
    const mbsReal *F = c->F + 6 * da;
    for (int k = 0; k < nd; k++)
      for (int i = 0; i < 6; i++) wr[i] += F[6 * k + i] * w->qfrc[da + k];
  }
  if (m->body_parent[b] >= 0) mbsu_xTForce(w->xpar + 12 * b, wr, c->up + 6 * b);
  MBS_FLOPS(mbs_flopCfsUp(nl, m->body_dofnum[b], known, m->body_parent[b] >= 0));
}

// mid: acc_b = M_b (wr_b - bias + f_ext + loop wrenches - sum of the children's up); wr_b is
// left as the up pass made it, so a partial application (mbs_cfsApplyColour) can redo one body's
// mid alone
static inline void mbs_cfsMidBody(const mbsModel *m, const mbsWork *w, mbsCfs *c, int known,
                                  int b) {
  mbsReal wr[6];
  for (int i = 0; i < 6; i++) wr[i] = c->wr[6 * b + i];
  if (known) {
    for (int i = 0; i < 6; i++) wr[i] -= w->cbias[6 * b + i];
    if (w->fext_on) { // spring-dampers, loop wrenches (docs/loops.md 8)
      for (int i = 0; i < 6; i++) wr[i] += w->fext[6 * b + i];
      MBS_FLOPS(6);
    }
  }
  if (c->nlr && c->Lbody[b]) { // closure rows: their wrench pairs (docs/loops.md 8.4)
    for (int i = 0; i < 6; i++) wr[i] += c->Lwr[6 * b + i];
    MBS_FLOPS(6);
  }
  const int *ch = m->child_list + m->body_childadr[b];
  for (int k = 0; k < m->body_childnum[b]; k++)
    for (int i = 0; i < 6; i++) wr[i] -= c->up[6 * ch[k] + i];
  mbsu_mul6(c->Minv + 36 * b, wr, c->acc + 6 * b);
  MBS_FLOPS(mbs_flopCfsMid(m->body_childnum[b], known));
}

// down: y_b = T_b^T (acc_b - X_bp acc_p)
static inline void mbs_cfsDownBody(const mbsModel *m, const mbsWork *w, mbsCfs *c,
                                   const mbsReal *a0, mbsReal *y, int b) {
  int nl = m->body_lamnum[b], la = m->body_lamadr[b], p = m->body_parent[b];
  mbsReal t[6], d[6];
  mbsu_xMotion(w->xpar + 12 * b, p < 0 ? a0 : c->acc + 6 * p, t);
  for (int i = 0; i < 6; i++) d[i] = c->acc[6 * b + i] - t[i];
  const mbsReal *T = c->T + 6 * la;
  for (int k = 0; k < nl; k++) y[la + k] = mbsu_dot6(T + 6 * k, d);
  MBS_FLOPS(mbs_flopCfsDown(nl));
}

// closure rows, before the bodies' sweep: their x on every rank (the owner's, summed with zeros:
// exact), the wrench pairs on the owned loop bodies
static mbsErr mbs_cfsLoopWrenches(const mbsModel *m, mbsCfs *c, const mbsCfsComm *comm,
                                  const mbsReal *x) {
  int n = c->nlr;
  for (int i = 0; i < n; i++) c->Lx[i] = c->lowner && !c->Lskip[i] ? x[m->nlam + i] : 0;
  if (comm && comm->reduce) MBS_CALL(comm->reduce(comm->ctx, c->Lx, n));
  for (int k = 0; k < 2 * m->nloop; k++) {
    int b = m->loop_body[k];
    if (b >= c->b0 && b < c->b1)
      for (int j = 0; j < 6; j++) c->Lwr[6 * b + j] = 0;
  }
  for (int k = 0; k < m->nloop; k++)
    for (int side = 0; side < 2; side++) {
      int b = m->loop_body[2 * k + side];
      if (b < c->b0 || b >= c->b1) continue;
      for (int i = m->loop_lamadr[k] - m->nlam, r = 0; r < m->loop_lamnum[k]; r++, i++) {
        const mbsReal *D = c->LD + 12 * i + 6 * side;
        for (int j = 0; j < 6; j++) c->Lwr[6 * b + j] += D[j] * c->Lx[i];
      }
      MBS_FLOPS(mbs_flopLoopRowWrench(m->loop_lamnum[k]));
    }
  return MBS_OK;
}

// closure rows, after the sweep: D_i^T a over the owned sides (the ground side a0 on the owner),
// summed over the ranks (at most two non-zero terms: exact in any order); y on the owner
static mbsErr mbs_cfsLoopOutputs(const mbsModel *m, mbsCfs *c, const mbsCfsComm *comm,
                                 const mbsReal *a0, const mbsReal *x, mbsReal *y) {
  int n = c->nlr;
  for (int k = 0; k < m->nloop; k++)
    for (int i = m->loop_lamadr[k] - m->nlam, r = 0; r < m->loop_lamnum[k]; r++, i++) {
      mbsReal s = 0;
      for (int side = 0; side < 2; side++) {
        int b = m->loop_body[2 * k + side];
        const mbsReal *D = c->LD + 12 * i + 6 * side;
        if (b >= c->b0 && b < c->b1) {
          s += mbsu_dot6(D, c->acc + 6 * b);
          MBS_FLOPS(MBS_FL_LOOP_DOT);
        } else if (b < 0 && c->lowner) {
          s += mbsu_dot6(D, a0);
          MBS_FLOPS(MBS_FL_LOOP_DOT);
        }
      }
      c->Ldot[i] = s;
    }
  if (comm && comm->reduce) MBS_CALL(comm->reduce(comm->ctx, c->Ldot, n));
  if (c->lowner)
    for (int i = 0; i < n; i++) y[m->nlam + i] = c->Lskip[i] ? x[m->nlam + i] : c->Ldot[i];
  return MBS_OK;
}

mbsErr mbs_cfsApply(const mbsModel *m, const mbsWork *w, mbsCfs *c, const mbsCfsComm *comm,
                    const mbsReal *x, int known, mbsReal *y) {
  mbsReal a0[6];
  mbs_baseAccel(m, known && !w->homog, a0);
  if (c->nlr) MBS_CALL(mbs_cfsLoopWrenches(m, c, comm, x));
  MBS_FOR_OWNED(c, b, mbs_cfsUpBody(m, w, c, x, known, b));
  if (comm && comm->halo_up) MBS_CALL(comm->halo_up(comm->ctx, c->up));
  MBS_FOR_OWNED(c, b, mbs_cfsMidBody(m, w, c, known, b));
  if (comm && comm->halo_down) MBS_CALL(comm->halo_down(comm->ctx, c->acc));
  MBS_FOR_OWNED(c, b, mbs_cfsDownBody(m, w, c, a0, y, b));
  if (c->nlr) MBS_CALL(mbs_cfsLoopOutputs(m, c, comm, a0, x, y));
  return MBS_OK;
}

static inline void mbs_cfsPrecondBody(const mbsModel *m, const mbsCfs *c, const mbsReal *r,
                                      mbsReal *z, int b) {
  int nl = m->body_lamnum[b], la = m->body_lamadr[b];
  mbsu_blockApply(c->Dinv + 36 * b, nl, r + la, z + la);
  MBS_FLOPS(mbs_flopBlockApply(nl));
}

// after the update of colour pc (solver_sor.c), A x on the rows of colour col: joint colours are
// 0 .. ncolor - 1 (color[b]), the closure rows' ncolor .. (c->Lcolor). Row b of A reads acc_b and
// acc of b's parent; acc_b reads x_b, the x of b's children and the closure rows at b. So after a
// joint colour the up pass runs for its bodies and the mid pass for them and their parents, after
// a closure-row colour the loop wrench pairs and the mid pass of that colour's loop bodies; then
// the down pass for the bodies of colour col, or the closure rows' outputs. Each value is
// computed as mbs_cfsApply computes it (the others are the previous application's and still
// current): on the rows of colour col, y equals a full application's to the bit. Collective.
mbsErr mbs_cfsApplyColour(const mbsModel *m, const mbsWork *w, mbsCfs *c, const mbsCfsComm *comm,
                          const mbsReal *x, const int *color, int ncolor, int pc, int col,
                          mbsReal *y) {
  mbsReal a0[6];
  mbs_baseAccel(m, 0, a0);
  if (pc < ncolor) {
    for (int b = c->b0; b < c->b1; b++)
      if (color[b] == pc && m->body_lamnum[b]) mbs_cfsUpBody(m, w, c, x, 0, b);
    if (comm && comm->halo_up) MBS_CALL(comm->halo_up(comm->ctx, c->up));
    for (int b = c->b0; b < c->b1; b++) {
      int redo = color[b] == pc && m->body_lamnum[b];
      const int *ch = m->child_list + m->body_childadr[b];
      for (int k = 0; k < m->body_childnum[b] && !redo; k++)
        redo = color[ch[k]] == pc && m->body_lamnum[ch[k]];
      if (redo) mbs_cfsMidBody(m, w, c, 0, b);
    }
  } else {
    MBS_CALL(mbs_cfsLoopWrenches(m, c, comm, x));
    for (int k = 0; k < m->nloop; k++) // loops of one colour share no body
      for (int side = 0; side < 2 && c->Lcolor[k] == pc - ncolor; side++) {
        int b = m->loop_body[2 * k + side];
        if (b >= c->b0 && b < c->b1) mbs_cfsMidBody(m, w, c, 0, b);
      }
  }
  if (comm && comm->halo_down) MBS_CALL(comm->halo_down(comm->ctx, c->acc));
  if (col < ncolor) {
    for (int b = c->b0; b < c->b1; b++)
      if (color[b] == col && m->body_lamnum[b]) mbs_cfsDownBody(m, w, c, a0, y, b);
  } else {
    MBS_CALL(mbs_cfsLoopOutputs(m, c, comm, a0, x, y));
  }
  return MBS_OK;
}

void mbs_cfsPrecond(const mbsModel *m, const mbsCfs *c, const mbsReal *r, mbsReal *z) {
  MBS_FOR_OWNED(c, b, mbs_cfsPrecondBody(m, c, r, z, b));
  if (c->nlr) mbs_cfsPrecondLoops(m, c, -1, r, z);
}

// ---------------------------------------------------------------- explicit blocks

size_t mbs_cfsSibIndex(const mbsModel *m, const mbsCfs *c, int i, int k) {
  // block of the pair (i, k), stored for the later child (higher rank among the children)
  int a = c->child_rank[i], bb = c->child_rank[k];
  if (a < bb) {
    int t = a;
    a = bb, bb = t;
  }
  return (size_t)c->sib_adr[m->body_parent[i]] + (size_t)(a * (a - 1) / 2 + bb);
}

static int mbs_owned(const mbsCfs *c, int b) {
  return b >= c->b0 && b < c->b1;
}

mbsErr mbs_cfsAssemble(const mbsModel *m, const mbsWork *w, mbsCfs *c) {
  (void)w;
  if (!c->Pblk) {
    c->Pblk = calloc(36 * (size_t)m->nbody, sizeof(mbsReal));
    c->Sblk = calloc(36 * (size_t)(c->nsib > 0 ? c->nsib : 1), sizeof(mbsReal));
    MBS_CHECK(c->Pblk && c->Sblk, MBS_ERR_NOMEM, "out of memory (explicit blocks)");
  }
  for (int b = c->b0; b < c->b1; b++) {
    int p = m->body_parent[b], nl = m->body_lamnum[b];
    if (p < 0 || nl == 0) continue;
    const mbsReal *G = c->G + 6 * m->body_lamadr[b], *Mp = c->Minv + 36 * p;
    // parent block A_{b,p} = -G_b^T M_p T_p
    if (mbs_owned(c, p) && m->body_lamnum[p] > 0) {
      int np = m->body_lamnum[p];
      mbsReal *P = c->Pblk + 36 * b;
      mbs_congruence(G, nl, Mp, c->T + 6 * m->body_lamadr[p], np, P, 0);
      for (int k = 0; k < nl * np; k++) P[k] = -P[k];
      MBS_FLOPS(mbs_flopCongr(nl, np, 0));
    }
    // sibling blocks A_{b,k} = G_b^T M_p G_k for earlier siblings k
    const int *ch = m->child_list + m->body_childadr[p];
    for (int r = 0; r < c->child_rank[b]; r++) {
      int k = ch[r];
      if (!mbs_owned(c, k) || m->body_lamnum[k] == 0) continue;
      mbs_congruence(G, nl, Mp, c->G + 6 * m->body_lamadr[k], m->body_lamnum[k],
                     c->Sblk + 36 * mbs_cfsSibIndex(m, c, b, k), 0);
      MBS_FLOPS(mbs_flopCongr(nl, m->body_lamnum[k], 0));
    }
  }
  c->blocks_ready = 1;
  return MBS_OK;
}

// T and G of any body, owned or not (position data computed on the fly for remote bodies)
static void mbs_cfsDirections(const mbsModel *m, const mbsState *s, mbsWork *w, mbsCfs *c, int b,
                              mbsReal *T, mbsReal *G) {
  if (b < c->b0 || b >= c->b1) { // its joint transform; its ground pose is kept (a loop body's
                                 // gathered pose, docs/loops.md 8.1; the parent's may be stale)
    mbsReal xm[9], xp[3];
    memcpy(xm, w->xmat + 9 * b, sizeof xm);
    memcpy(xp, w->xpos + 3 * b, sizeof xp);
    mbs_bodyPosition(m, s->q, w, b);
    memcpy(w->xmat + 9 * b, xm, sizeof xm);
    memcpy(w->xpos + 3 * b, xp, sizeof xp);
  }
  int nl = m->body_lamnum[b];
  mbs_bodyComplement(m, w, b, T);
  for (int k = 0; k < nl; k++) mbsu_xTForce(w->xpar + 12 * b, T + 6 * k, G + 6 * k);
}

int mbs_cfsRowLength(const mbsModel *m, int b) {
  int n = m->body_lamnum[b], p = m->body_parent[b];
  if (p >= 0) {
    n += m->body_lamnum[p];
    const int *sib = m->child_list + m->body_childadr[p];
    for (int k = 0; k < m->body_childnum[p]; k++)
      if (sib[k] != b) n += m->body_lamnum[sib[k]];
  }
  const int *ch = m->child_list + m->body_childadr[b];
  for (int k = 0; k < m->body_childnum[b]; k++) n += m->body_lamnum[ch[k]];
  return n;
}

void mbs_cfsRow(const mbsModel *m, const mbsState *s, mbsWork *w, mbsCfs *c, int b, int *cols,
                mbsReal *vals, int *ncols) {
  int nl = m->body_lamnum[b], p = m->body_parent[b], len = mbs_cfsRowLength(m, b), at = 0;
  mbsReal Ti[36], Gi[36], To[36], Go[36], blk[36];
  *ncols = len;
  if (nl == 0) return;
  mbs_cfsDirections(m, s, w, c, b, Ti, Gi);
#define MBS_PUT(col0, ncol)                                                                        \
  do {                                                                                             \
    for (int j_ = 0; j_ < (ncol); j_++) cols[at + j_] = (col0) + j_;                               \
    for (int i_ = 0; i_ < nl; i_++)                                                                \
      for (int j_ = 0; j_ < (ncol); j_++) vals[(size_t)len * i_ + at + j_] = blk[(ncol)*i_ + j_];  \
    at += (ncol);                                                                                  \
  } while (0)
  // diagonal D = T^T M_i T + G^T M_p G
  mbs_congruence(Ti, nl, c->Minv + 36 * b, Ti, nl, blk, 0);
  if (p >= 0) mbs_congruence(Gi, nl, c->Minv + 36 * p, Gi, nl, blk, 1);
  MBS_PUT(m->body_lamadr[b], nl);
  if (p >= 0) {
    // parent: -G_i^T M_p T_p
    int np = m->body_lamnum[p];
    if (np > 0) {
      mbs_cfsDirections(m, s, w, c, p, To, Go);
      mbs_congruence(Gi, nl, c->Minv + 36 * p, To, np, blk, 0);
      for (int k = 0; k < nl * np; k++) blk[k] = -blk[k];
      MBS_PUT(m->body_lamadr[p], np);
    }
    // siblings: G_i^T M_p G_k
    const int *sib = m->child_list + m->body_childadr[p];
    for (int k = 0; k < m->body_childnum[p]; k++) {
      int sb = sib[k], ns = m->body_lamnum[sb];
      if (sb == b || ns == 0) continue;
      mbs_cfsDirections(m, s, w, c, sb, To, Go);
      mbs_congruence(Gi, nl, c->Minv + 36 * p, Go, ns, blk, 0);
      MBS_PUT(m->body_lamadr[sb], ns);
    }
  }
  // children: -T_i^T M_i G_j
  const int *ch = m->child_list + m->body_childadr[b];
  for (int k = 0; k < m->body_childnum[b]; k++) {
    int cb = ch[k], nc = m->body_lamnum[cb];
    if (nc == 0) continue;
    mbs_cfsDirections(m, s, w, c, cb, To, Go);
    mbs_congruence(Ti, nl, c->Minv + 36 * b, Go, nc, blk, 0);
    for (int q = 0; q < nl * nc; q++) blk[q] = -blk[q];
    MBS_PUT(m->body_lamadr[cb], nc);
  }
#undef MBS_PUT
}

// ---------------------------------------------------------------- warm start

void mbs_cfsWarmStart(const mbsModel *m, const mbsState *s, int mode, mbsReal t, int l0, int l1,
                      mbsReal *x) {
  // previous: 0, linear: 1, quadratic: 2, cubic: 3
  int n = mbs_stateHistWidth(m), order = mode - 1;
  int sl = s->stage, nh = s->nhist[sl];
  if (mode == MBS_WARM_NONE || nh == 0) {
    memset(x + l0, 0, (size_t)(l1 - l0) * sizeof(mbsReal));
    return;
  }
  if (order > nh - 1) order = nh - 1;
  // Lagrange extrapolation through the newest order+1 solutions of this stage slot
  // (non-uniform times)
  int idx[MBS_WARM_HIST];
  double wgt[MBS_WARM_HIST];
  const mbsReal *ht = s->hist_t[sl];
  const mbsReal *hl = s->hist_lam + (size_t)sl * MBS_WARM_HIST * n;
  for (int k = 0; k <= order; k++) idx[k] = (s->hist_head[sl] - k + MBS_WARM_HIST) % MBS_WARM_HIST;
  // an adaptive integrator's rejected step can leave two solutions at the same time in a slot,
  // not next to each other (seen: dp5 on the slider-crank with jcg at t = 0.4616 s, nodes 0.46109,
  // 0.46397, 0.46109 after a rejection: a division by zero, NaN in the guess, the run stopped);
  // the polynomial through them does not exist, so the order drops until the nodes are distinct
  // and the weights finite
  for (;; order--) {
    int ok = 1;
    for (int k = 0; k <= order && ok; k++) {
      double l = 1;
      for (int j = 0; j <= order; j++)
        if (j != k) {
          double d = ht[idx[k]] - ht[idx[j]];
          if (!(fabs(d) > 1e-12 * (1 + fabs(t)))) ok = 0;
          l *= (t - ht[idx[j]]) / d;
        }
      wgt[k] = l;
      if (!isfinite(l)) ok = 0;
    }
    if (ok || order == 0) break; // order 0: the empty product, weight 1
  }
  for (int i = l0; i < l1; i++) {
    double v = 0;
    for (int k = 0; k <= order; k++) v += wgt[k] * hl[(size_t)idx[k] * n + i];
    x[i] = v;
  }
}

void mbs_cfsPushHistory(const mbsModel *m, mbsState *s, mbsReal t, int l0, int l1,
                        const mbsReal *x) {
  int n = mbs_stateHistWidth(m), sl = s->stage;
  size_t len = (size_t)(l1 - l0) * sizeof(mbsReal);
  mbsReal *ht = s->hist_t[sl], *hl = s->hist_lam + (size_t)sl * MBS_WARM_HIST * n;
  if (s->nhist[sl] > 0 && fabs(t - ht[s->hist_head[sl]]) <= 1e-14 * (1 + fabs(t))) {
    memcpy(hl + (size_t)s->hist_head[sl] * n + l0, x + l0, len);
    return;
  }
  s->hist_head[sl] = (s->hist_head[sl] + 1) % MBS_WARM_HIST;
  ht[s->hist_head[sl]] = t;
  memcpy(hl + (size_t)s->hist_head[sl] * n + l0, x + l0, len);
  if (s->nhist[sl] < MBS_WARM_HIST) s->nhist[sl]++;
}
