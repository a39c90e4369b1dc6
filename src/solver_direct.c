/// \file solver_direct.c
/// solver.method = direct: the exact solve of A x = b by block Cholesky in leaf-first order,
/// fill-free on the tree pattern of A (a joint couples with its parent's joint and its
/// siblings). Serial: needs the whole model on one rank. Its factor works on copies of the
/// explicit blocks (mbs_cfsAssemble), held in its own state.
#include <stdlib.h>
#include <string.h>
#include "solver_private.h"
#include "spatial.h"
#include "flops.h"

typedef struct {
  mbsReal *Ld, *Lp, *Ls; // factor copies of the diagonal, parent and sibling blocks
  int factored;          // the factor is of the current blocks (kept under w->reuse)
} mbsDirect;

// the factor copy of the sibling-pair block of i and k
static mbsReal *mbs_directSib(mbsDirect *s, const mbsModel *m, const mbsCfs *c, int i, int k) {
  return s->Ls + 36 * mbs_cfsSibIndex(m, c, i, k);
}

// W <- L^{-1} W for an n x k row-major block W (column by column)
static void mbs_blockSolveL(const mbsReal *L, int n, mbsReal *W, int k) {
  for (int j = 0; j < k; j++) {
    mbsReal col[6];
    for (int l = 0; l < n; l++) col[l] = W[k * l + j];
    mbsu_cholSolveL(L, n, col);
    for (int l = 0; l < n; l++) W[k * l + j] = col[l];
  }
  MBS_FLOPS((long)k * n * n);
}

// C -= A^T B for row-major A (n x ka), B (n x kb); C is ka x kb (leading dimension kb)
static void mbs_blockSubAtB(const mbsReal *A, int ka, const mbsReal *B, int kb, int n, mbsReal *C) {
  for (int a = 0; a < ka; a++)
    for (int b = 0; b < kb; b++) {
      mbsReal s = 0;
      for (int l = 0; l < n; l++) s += A[ka * l + a] * B[kb * l + b];
      C[kb * a + b] -= s;
    }
  MBS_FLOPS(mbs_flopSchur(ka, kb, n));
}

// yu -= W^T yi and yi -= W yu for an ni x nu row-major coupling block W
static void mbs_blockSubTMul(const mbsReal *W, int ni, int nu, const mbsReal *yi, mbsReal *yu) {
  for (int a = 0; a < nu; a++)
    for (int l = 0; l < ni; l++) yu[a] -= W[nu * l + a] * yi[l];
  MBS_FLOPS(2L * ni * nu);
}
static void mbs_blockSubMul(const mbsReal *W, int ni, int nu, const mbsReal *yu, mbsReal *yi) {
  for (int l = 0; l < ni; l++)
    for (int a = 0; a < nu; a++) yi[l] -= W[nu * l + a] * yu[a];
  MBS_FLOPS(2L * ni * nu);
}

static mbsErr mbs_directFactor(mbsDirect *s, const mbsModel *m, mbsWork *w, mbsCfs *c);
static void mbs_directSubst(mbsDirect *s, const mbsModel *m, const mbsCfs *c);

// exact solve by block Cholesky in leaf-first order (fill-free on the tree pattern); serial
static mbsErr mbs_directSolve(void *self, const mbsModel *m, const mbsState *st, mbsWork *w,
                              mbsCfs *c, const mbsCfsComm *comm, mbsSolveInfo *info) {
  mbsDirect *s = self;
  (void)st, (void)comm;
  // the loop layer's further solves at the same positions (w->reuse) keep the factor: the loop
  // rows are the trailing separator, H^-1 G^T by substitutions alone (docs/loops.md 8.1)
  if (!(w->reuse && s->factored)) MBS_CALL(mbs_directFactor(s, m, w, c));
  mbs_directSubst(s, m, c);
  info->it = 1;
  info->res = 0;
  info->reason = MBS_REASON_CONVERGED_DIRECT;
  return MBS_OK;
}

// the factor of the current blocks into s
static mbsErr mbs_directFactor(mbsDirect *s, const mbsModel *m, mbsWork *w, mbsCfs *c) {
  int n = m->nbody;
  s->factored = 0;
  if (!c->blocks_ready) MBS_CALL(mbs_cfsAssemble(m, w, c));
  // copies: D = L L^T from the factors, parent and sibling blocks
  for (int b = 0; b < n; b++) {
    int nl = m->body_lamnum[b];
    const mbsReal *L = c->Dfac + 36 * b;
    for (int i = 0; i < nl; i++)
      for (int j = 0; j < nl; j++) {
        mbsReal sum = 0;
        for (int k = 0; k <= (i < j ? i : j); k++) sum += L[nl * i + k] * L[nl * j + k];
        s->Ld[36 * b + nl * i + j] = sum;
      }
    MBS_FLOPS(mbs_flopLLt(nl));
  }
  memcpy(s->Lp, c->Pblk, 36 * (size_t)n * sizeof(mbsReal));
  memcpy(s->Ls, c->Sblk, 36 * (size_t)(c->nsib > 0 ? c->nsib : 1) * sizeof(mbsReal));

  // factor: eliminate joints from the last body to the first
  for (int i = n - 1; i >= 0; i--) {
    int ni = m->body_lamnum[i], p = m->body_parent[i];
    if (ni == 0) continue;
    mbsReal *Lii = s->Ld + 36 * i;
    if (!mbsu_cholFactor(Lii, ni))
      return mbs_errSet(MBS_ERR_NUMERIC,
                        "direct: constraint-force matrix is not positive definite");
    MBS_FLOPS(mbs_flopChol(ni));
    if (p < 0) continue;
    // W_u = L_ii^{-1} A_{i,u} for the upper neighbours u (parent, earlier siblings), in place
    int np = m->body_lamnum[p];
    mbsReal *Wp = s->Lp + 36 * i; // ni x np
    mbs_blockSolveL(Lii, ni, Wp, np);
    const int *ch = m->child_list + m->body_childadr[p];
    int ri = c->child_rank[i];
    for (int r = 0; r < ri; r++) {
      int k = ch[r];
      mbs_blockSolveL(Lii, ni, mbs_directSib(s, m, c, i, k), m->body_lamnum[k]); // row i: ni x nk
    }
    // Schur complement updates A_uv -= W_u^T W_v over the upper neighbours (they are already
    // coupled: no fill)
    mbs_blockSubAtB(Wp, np, Wp, np, ni, s->Ld + 36 * p); // (p, p)
    for (int r = 0; r < ri; r++) {
      int k = ch[r], nk = m->body_lamnum[k];
      if (nk == 0) continue;
      const mbsReal *Wk = mbs_directSib(s, m, c, i, k);
      mbs_blockSubAtB(Wk, nk, Wp, np, ni, s->Lp + 36 * k); // (k, p): parent block of k
      mbs_blockSubAtB(Wk, nk, Wk, nk, ni, s->Ld + 36 * k); // (k, k)
      for (int r2 = 0; r2 < r; r2++) {                     // (k, k') for earlier siblings k'
        int k2 = ch[r2], nk2 = m->body_lamnum[k2];
        if (nk2 == 0) continue;
        mbs_blockSubAtB(Wk, nk, mbs_directSib(s, m, c, i, k2), nk2, ni,
                        mbs_directSib(s, m, c, k, k2));
      }
    }
  }

  s->factored = 1;
  return MBS_OK;
}

// solve L L^T x = b in elimination order (b = c->rhs, x into c->x)
static void mbs_directSubst(mbsDirect *s, const mbsModel *m, const mbsCfs *c) {
  int n = m->nbody;
  mbsReal *y = c->x;
  memcpy(y, c->rhs, (size_t)m->nlam * sizeof(mbsReal));
  for (int i = n - 1; i >= 0; i--) {
    int ni = m->body_lamnum[i], p = m->body_parent[i], la = m->body_lamadr[i];
    if (ni == 0) continue;
    mbsu_cholSolveL(s->Ld + 36 * i, ni, y + la);
    MBS_FLOPS((long)ni * ni);
    if (p < 0) continue;
    mbs_blockSubTMul(s->Lp + 36 * i, ni, m->body_lamnum[p], y + la, y + m->body_lamadr[p]);
    const int *ch = m->child_list + m->body_childadr[p];
    for (int r = 0; r < c->child_rank[i]; r++) {
      int k = ch[r];
      mbs_blockSubTMul(mbs_directSib(s, m, c, i, k), ni, m->body_lamnum[k], y + la,
                       y + m->body_lamadr[k]);
    }
  }
  for (int i = 0; i < n; i++) {
    int ni = m->body_lamnum[i], p = m->body_parent[i], la = m->body_lamadr[i];
    if (ni == 0) continue;
    if (p >= 0) {
      mbs_blockSubMul(s->Lp + 36 * i, ni, m->body_lamnum[p], y + m->body_lamadr[p], y + la);
      const int *ch = m->child_list + m->body_childadr[p];
      for (int r = 0; r < c->child_rank[i]; r++) {
        int k = ch[r];
        mbs_blockSubMul(mbs_directSib(s, m, c, i, k), ni, m->body_lamnum[k], y + m->body_lamadr[k],
                        y + la);
      }
    }
    mbsu_cholSolveLT(s->Ld + 36 * i, ni, y + la);
    MBS_FLOPS((long)ni * ni);
  }
}

static void mbs_directDestroy(void **self) {
  mbsDirect *s = *self;
  if (!s) return;
  free(s->Ld), free(s->Lp), free(s->Ls);
  free(s);
  *self = NULL;
}

static mbsErr mbs_directCreate(const mbsModel *m, const mbsCfs *c, const mbsSolverOpt *opt,
                               void *ctx, void **self) {
  (void)opt, (void)ctx;
  MBS_CHECK(c->b0 == 0 && c->b1 == m->nbody, MBS_ERR_INTERNAL,
            "direct solver needs the whole model");
  mbsDirect *s = calloc(1, sizeof *s);
  if (s) {
    s->Ld = calloc(36 * (size_t)m->nbody, sizeof(mbsReal));
    s->Lp = calloc(36 * (size_t)m->nbody, sizeof(mbsReal));
    s->Ls = calloc(36 * (size_t)(c->nsib > 0 ? c->nsib : 1), sizeof(mbsReal));
  }
  if (!s || !s->Ld || !s->Lp || !s->Ls) {
    void *p = s;
    mbs_directDestroy(&p);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (direct solver)");
  }
  *self = s;
  return MBS_OK;
}

const mbsSolverType mbs_solverDirect = {
    .name = "direct",
    .method = MBS_SOLVER_DIRECT,
    .distributed = 0,
    .iterative = 0,
    .cpa_graph = MBS_CPA_GRAPH_DIRECT,
    .create = mbs_directCreate,
    .solve = mbs_directSolve,
    .destroy = mbs_directDestroy,
};
