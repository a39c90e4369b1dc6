/// \file solver_direct.c
/// solver.method = direct: the exact solve of A x = b by block Cholesky in leaf-first order,
/// fill-free on the tree pattern of A (a joint couples with its parent's joint and its
/// siblings). Serial: needs the whole model on one rank. Its factor works on copies of the
/// explicit blocks (mbs_cfsAssemble), held in its own state.
#include <stdlib.h>
#include <string.h>
#include "solver_private.h"
#include "cpa_private.h"
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

static mbsErr mbs_directCpaSolve(mbsCpaB *B, mbsCpaCfs *C, const mbsCpaKin *K, mbsCpaVec *V);

const mbsSolverType mbs_solverDirect = {
    .name = "direct",
    .method = MBS_SOLVER_DIRECT,
    .distributed = 0,
    .iterative = 0,
    .cpa_graph = MBS_CPA_GRAPH_DIRECT,
    .cpa_build = mbs_cpaCfsGraph,
    .cpa_loops = mbs_cpaLoopsGraph,
    .cpa_solve = mbs_directCpaSolve,
    .create = mbs_directCreate,
    .solve = mbs_directSolve,
    .destroy = mbs_directDestroy,
};

// ---------------------------------------------------------------- cpa: this solver's graph

// a node of the direct solver for body i (phase ph at every grain) depending on a, b and c
static int mbs_cpaDirNode(mbsCpaB *B, int kind, int i, long long flops, int ph, int a, int b,
                          int c) {
  int u = mbs_cpaNode(B, kind, i, flops, ph, ph);
  mbs_cpaDep(B, a, u);
  mbs_cpaDep(B, b, u);
  mbs_cpaDep(B, c, u);
  return u;
}

// the exact solve by block Cholesky in leaf-first order (solver_direct.c, one rank): the
// explicit parent and sibling blocks (mbs_cfsAssemble), D rebuilt from its factor, then per joint
// from the last body to the first: the diagonal factor, the triangular solves of its upper
// couplings and the Schur updates of the blocks they touch (every update of one block after the
// previous one, as written); forward and backward substitution in the same order. xn receives
// the writers of x.
mbsErr mbs_cpaDirect(mbsCpaB *B, mbsCpaCfs *C, const int *rhs, int *xn) {
  const mbsModel *m = B->m;
  int n = m->nbody, nsib = 0, ph = PH_ITER + 8 * C->napply + 4;
  size_t nb = (size_t)(n > 0 ? n : 1);
  for (int b = 0; b < n; b++) nsib += m->body_childnum[b] * (m->body_childnum[b] - 1) / 2;
  int *rank = malloc(nb * sizeof(int)), *sadr = malloc(nb * sizeof(int));
  int *ld = malloc(nb * sizeof(int)), *lp = malloc(nb * sizeof(int)),
      *fac = malloc(nb * sizeof(int));
  int *wp = malloc(nb * sizeof(int)), *y = malloc(nb * sizeof(int));
  int *ls = malloc((size_t)(nsib > 0 ? nsib : 1) * sizeof(int));
  int *ws = malloc((size_t)(nsib > 0 ? nsib : 1) * sizeof(int));
  mbsErr e = MBS_OK;
  if (!rank || !sadr || !ld || !lp || !fac || !wp || !y || !ls || !ws) {
    e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
    goto done;
  }
  for (int b = 0, s = 0; b < n; b++) {
    int nc = m->body_childnum[b];
    sadr[b] = s;
    s += nc * (nc - 1) / 2;
    for (int k = 0; k < nc; k++) rank[m->child_list[m->body_childadr[b] + k]] = k;
  }
#define MBS_SIB(i, k)                                                                              \
  (sadr[m->body_parent[i]] + (rank[i] > rank[k] ? rank[i] * (rank[i] - 1) / 2 + rank[k]            \
                                                : rank[k] * (rank[k] - 1) / 2 + rank[i]))
  for (int s = 0; s < nsib; s++) ls[s] = ws[s] = -1;
  // the loop layer's further solves keep solve 0's factor (solver_direct.c, w->reuse)
  int kept = B->reuse && B->keep;
  int *kfac = B->keep ? B->keep + 3 * nb : NULL, *kwp = kfac ? kfac + nb : NULL;
  int *kws = kwp ? kwp + nb : NULL;
  if (kept) {
    memcpy(fac, kfac, nb * sizeof(int));
    memcpy(wp, kwp, nb * sizeof(int));
    memcpy(ws, kws, (size_t)nsib * sizeof(int));
  }
  // explicit blocks: A_{b,p} = -G^T M_p T_p, A_{b,k} = G_b^T M_p G_k; D = L L^T
  for (int b = 0; b < n && !kept; b++) {
    int p = m->body_parent[b], nl = m->body_lamnum[b];
    lp[b] = -1;
    if (p >= 0 && nl > 0) {
      if (m->body_lamnum[p] > 0) {
        lp[b] =
            mbs_cpaNode(B, MBS_CPA_DIR_BLOCK, b, mbs_flopCongr(nl, m->body_lamnum[p], 0), ph, ph);
        mbs_cpaDep(B, C->T[b], lp[b]);
        mbs_cpaDep(B, C->T[p], lp[b]);
      }
      const int *ch = m->child_list + m->body_childadr[p];
      for (int r = 0; r < rank[b]; r++) {
        int k = ch[r], nk = m->body_lamnum[k];
        if (nk == 0) continue;
        int v = mbs_cpaNode(B, MBS_CPA_DIR_BLOCK, b, mbs_flopCongr(nl, nk, 0), ph, ph);
        mbs_cpaDep(B, C->T[b], v);
        mbs_cpaDep(B, C->T[k], v);
        ls[MBS_SIB(b, k)] = v;
      }
    }
    ld[b] = mbs_cpaNode(B, MBS_CPA_DIR_LLT, b, mbs_flopLLt(nl), ph, ph);
    mbs_cpaDep(B, C->D[b], ld[b]);
  }
  // factor, last joint first
  for (int i = n - 1; i >= 0 && !kept; i--) {
    int ni = m->body_lamnum[i], p = m->body_parent[i];
    fac[i] = wp[i] = -1;
    if (ni == 0) continue;
    fac[i] = mbs_cpaNode(B, MBS_CPA_DIR_FACTOR, i, mbs_flopChol(ni), ph + 1, ph + 1);
    mbs_cpaDep(B, ld[i], fac[i]);
    if (p < 0) continue;
    int np = m->body_lamnum[p], ri = rank[i];
    const int *ch = m->child_list + m->body_childadr[p];
    wp[i] = mbs_cpaNode(B, MBS_CPA_DIR_TRSM, i, (long long)np * ni * ni, ph + 1, ph + 1);
    mbs_cpaDep(B, fac[i], wp[i]);
    mbs_cpaDep(B, lp[i], wp[i]);
    for (int r = 0; r < ri; r++) {
      int k = ch[r], sk = MBS_SIB(i, k);
      ws[sk] = mbs_cpaNode(B, MBS_CPA_DIR_TRSM, i, (long long)m->body_lamnum[k] * ni * ni, ph + 1,
                           ph + 1);
      mbs_cpaDep(B, fac[i], ws[sk]);
      mbs_cpaDep(B, ls[sk], ws[sk]);
    }
    ld[p] = mbs_cpaDirNode(B, MBS_CPA_DIR_SCHUR, i, mbs_flopSchur(np, np, ni), ph + 1, wp[i], ld[p],
                           -1);
    for (int r = 0; r < ri; r++) {
      int k = ch[r], nk = m->body_lamnum[k], sk = MBS_SIB(i, k);
      if (nk == 0) continue;
      lp[k] = mbs_cpaDirNode(B, MBS_CPA_DIR_SCHUR, i, mbs_flopSchur(nk, np, ni), ph + 1, ws[sk],
                             wp[i], lp[k]);
      ld[k] = mbs_cpaDirNode(B, MBS_CPA_DIR_SCHUR, i, mbs_flopSchur(nk, nk, ni), ph + 1, ws[sk],
                             ld[k], -1);
      for (int r2 = 0; r2 < r; r2++) {
        int k2 = ch[r2], nk2 = m->body_lamnum[k2], s2 = MBS_SIB(i, k2), skk = MBS_SIB(k, k2);
        if (nk2 == 0) continue;
        ls[skk] = mbs_cpaDirNode(B, MBS_CPA_DIR_SCHUR, i, mbs_flopSchur(nk, nk2, ni), ph + 1,
                                 ws[sk], ws[s2], ls[skk]);
      }
    }
  }
  if (kfac && !kept) {
    memcpy(kfac, fac, nb * sizeof(int));
    memcpy(kwp, wp, nb * sizeof(int));
    memcpy(kws, ws, (size_t)nsib * sizeof(int));
  }
  // forward substitution L y = b (elimination order), then backward L^T x = y
  for (int b = 0; b < n; b++) y[b] = rhs[b];
  for (int i = n - 1; i >= 0; i--) {
    int ni = m->body_lamnum[i], p = m->body_parent[i];
    if (ni == 0) continue;
    int f = y[i] =
        mbs_cpaDirNode(B, MBS_CPA_DIR_SUBST, i, (long long)ni * ni, ph + 2, y[i], fac[i], -1);
    if (p < 0) continue;
    y[p] = mbs_cpaDirNode(B, MBS_CPA_DIR_SUBST, i, 2LL * ni * m->body_lamnum[p], ph + 2, f, wp[i],
                          y[p]);
    const int *ch = m->child_list + m->body_childadr[p];
    for (int r = 0; r < rank[i]; r++) {
      int k = ch[r];
      y[k] = mbs_cpaDirNode(B, MBS_CPA_DIR_SUBST, i, 2LL * ni * m->body_lamnum[k], ph + 2, f,
                            ws[MBS_SIB(i, k)], y[k]);
    }
  }
  for (int i = 0; i < n; i++) {
    int ni = m->body_lamnum[i], p = m->body_parent[i];
    xn[i] = -1;
    if (ni == 0) continue;
    if (p >= 0) {
      y[i] = mbs_cpaDirNode(B, MBS_CPA_DIR_SUBST, i, 2LL * ni * m->body_lamnum[p], ph + 3, y[i],
                            wp[i], xn[p]);
      const int *ch = m->child_list + m->body_childadr[p];
      for (int r = 0; r < rank[i]; r++) {
        int k = ch[r];
        y[i] = mbs_cpaDirNode(B, MBS_CPA_DIR_SUBST, i, 2LL * ni * m->body_lamnum[k], ph + 3, y[i],
                              ws[MBS_SIB(i, k)], xn[k]);
      }
    }
    xn[i] = mbs_cpaDirNode(B, MBS_CPA_DIR_SUBST, i, (long long)ni * ni, ph + 3, y[i], fac[i], -1);
  }
#undef MBS_SIB
done:
  free(rank), free(sadr), free(ld), free(lp), free(fac), free(wp), free(y), free(ls), free(ws);
  return e;
}

static mbsErr mbs_directCpaSolve(mbsCpaB *B, mbsCpaCfs *C, const mbsCpaKin *K, mbsCpaVec *V) {
  (void)K;
  return mbs_cpaDirect(B, C, V->rhs, V->xn);
}
