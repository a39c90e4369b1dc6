/// \file cfs.c
/// The constraint-force method of seed 002 (Sharf & D'Eleuterio 1993): operator sweeps, block
/// preconditioner, explicit blocks, the iterative solvers (Jacobi, Gauss–Seidel/SOR, Chebyshev
/// semi-iteration, conjugate gradients preconditioned by the block diagonal) and an exact
/// fill-free block Cholesky for trees. Derivations in docs/formulation.md.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_cfs.h"
#include "spatial.h"
#include "flops.h"

/// Loops over fewer bodies than this stay serial (a parallel region costs about a microsecond).
#define MBS_OMP_MIN 256

// ---------------------------------------------------------------- lifecycle

mbsErr mbs_cfsCreate(const mbsModel *m, int b0, int b1, mbsCfs **out) {
  mbsCfs *c;
  *out = NULL;
  MBS_CHECK(b0 >= 0 && b1 <= m->nbody && b0 < b1, MBS_ERR_INTERNAL, "bad body range");
  MBS_ALLOC(c, 1);
  c->nbody = m->nbody, c->nlam = m->nlam, c->nv = m->nv;
  c->b0 = b0, c->b1 = b1;
  c->l0 = m->body_lamadr[b0];
  c->l1 = m->body_lamadr[b1 - 1] + m->body_lamnum[b1 - 1];
  size_t nb = (size_t)m->nbody, nl = (size_t)(m->nlam > 0 ? m->nlam : 1);
  size_t nv = (size_t)(m->nv > 0 ? m->nv : 1);
  mbsErr e = MBS_OK;
#define MBS_CALLOC(f, n)                                                                           \
  if (!e && !(c->f = calloc((n), sizeof(*c->f))))                                                  \
  e = mbs_errSet(MBS_ERR_NOMEM, "out of memory allocating the constraint-force workspace")
  MBS_CALLOC(Minv, 36 * nb);
  MBS_CALLOC(T, 6 * nl);
  MBS_CALLOC(G, 6 * nl);
  MBS_CALLOC(F, 6 * nv);
  MBS_CALLOC(SSinv, 36 * nb);
  MBS_CALLOC(Dfac, 36 * nb);
  MBS_CALLOC(up, 6 * nb);
  MBS_CALLOC(wr, 6 * nb);
  MBS_CALLOC(acc, 6 * nb);
  MBS_CALLOC(rhs, nl);
  MBS_CALLOC(x, nl);
  MBS_CALLOC(r, nl);
  MBS_CALLOC(z, nl);
  MBS_CALLOC(p, nl);
  MBS_CALLOC(q, nl);
  MBS_CALLOC(xold, nl);
  MBS_CALLOC(tmp, nl);
  MBS_CALLOC(child_rank, nb);
  MBS_CALLOC(sib_adr, nb);
  MBS_CALLOC(color, nb);
#undef MBS_CALLOC
  if (e) {
    mbs_cfsDestroy(&c);
    return e;
  }
  // inverse spatial inertias (constant in body coordinates)
  for (int b = 0; b < m->nbody; b++) {
    mbsReal I6[36], *Mi = c->Minv + 36 * b;
    mbsu_rbiFull(m->body_sinert + 10 * b, I6);
    if (!mbsu_cholFactor(I6, 6)) {
      mbs_cfsDestroy(&c);
      return mbs_errSet(MBS_ERR_INPUT, "body %s: spatial inertia is not positive definite",
                        m->body_name[b]);
    }
    mbsu_cholInverse(I6, 6, Mi);
  }
  // sibling-pair block addresses
  int nsib = 0;
  for (int b = 0; b < m->nbody; b++) {
    int nc = m->body_childnum[b];
    c->sib_adr[b] = nsib;
    nsib += nc * (nc - 1) / 2;
    for (int k = 0; k < nc; k++) c->child_rank[m->child_list[m->body_childadr[b] + k]] = k;
  }
  c->nsib = nsib;
  c->ncolor = mbs_cfsColour(m, c->color);
  c->bipartite = !mbs_modelBranched(m);
  c->jacobi_omega = 1;
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
  free(c->color);
  void *arrs[] = {c->Minv, c->T,    c->G,    c->F,       c->SSinv,      c->Dfac, c->up, c->wr,
                  c->acc,  c->Pblk, c->Sblk, c->rhs,     c->x,          c->r,    c->z,  c->p,
                  c->q,    c->xold, c->tmp,  c->sib_adr, c->child_rank, c->Ld,   c->Lp, c->Ls};
  for (size_t k = 0; k < sizeof arrs / sizeof arrs[0]; k++) free(arrs[k]);
  free(c);
  *pc = NULL;
}

// ---------------------------------------------------------------- position-dependent data

// out (k x k, packed) = A^T M B for 6 x k column sets A, B (columns of 6) and a 6x6 M
static void mbs_congruence(const mbsReal *A, int ka, const mbsReal *M, const mbsReal *B, int kb,
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
    }
  }
  c->blocks_ready = 0;
  return MBS_OK;
}

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

// mid: wr_b -= bias + sum of the children's up; acc_b = M_b wr_b
static inline void mbs_cfsMidBody(const mbsModel *m, const mbsWork *w, mbsCfs *c, int known,
                                  int b) {
  mbsReal *wr = c->wr + 6 * b;
  if (known)
    for (int i = 0; i < 6; i++) wr[i] -= w->cbias[6 * b + i];
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

mbsErr mbs_cfsApply(const mbsModel *m, const mbsWork *w, mbsCfs *c, const mbsCfsComm *comm,
                    const mbsReal *x, int known, mbsReal *y) {
  mbsReal a0[6];
  mbs_baseAccel(m, known, a0);
  MBS_FOR_OWNED(c, b, mbs_cfsUpBody(m, w, c, x, known, b));
  if (comm && comm->halo_up) MBS_CALL(comm->halo_up(comm->ctx, c->up));
  MBS_FOR_OWNED(c, b, mbs_cfsMidBody(m, w, c, known, b));
  if (comm && comm->halo_down) MBS_CALL(comm->halo_down(comm->ctx, c->acc));
  MBS_FOR_OWNED(c, b, mbs_cfsDownBody(m, w, c, a0, y, b));
  return MBS_OK;
}

static inline void mbs_cfsPrecondBody(const mbsModel *m, const mbsCfs *c, const mbsReal *r,
                                      mbsReal *z, int b) {
  int nl = m->body_lamnum[b], la = m->body_lamadr[b];
  for (int k = 0; k < nl; k++) z[la + k] = r[la + k];
  if (nl) mbsu_cholSolve(c->Dfac + 36 * b, nl, z + la);
  MBS_FLOPS(nl ? mbs_flopCholSolve(nl) : 0);
}

void mbs_cfsPrecond(const mbsModel *m, const mbsCfs *c, const mbsReal *r, mbsReal *z) {
  MBS_FOR_OWNED(c, b, mbs_cfsPrecondBody(m, c, r, z, b));
}

// ---------------------------------------------------------------- explicit blocks

static mbsReal *mbs_sibBlock(const mbsModel *m, mbsCfs *c, int i, int k) {
  // block of the pair (i, k), stored for the later child (higher rank among the children)
  int p = m->body_parent[i], a = c->child_rank[i], bb = c->child_rank[k];
  if (a < bb) {
    int t = a;
    a = bb, bb = t;
  }
  (void)p;
  return c->Sblk + 36 * ((size_t)c->sib_adr[m->body_parent[i]] + (size_t)(a * (a - 1) / 2 + bb));
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
                     mbs_sibBlock(m, c, b, k), 0);
      MBS_FLOPS(mbs_flopCongr(nl, m->body_lamnum[k], 0));
    }
  }
  c->blocks_ready = 1;
  return MBS_OK;
}

// T and G of any body, owned or not (position data computed on the fly for remote bodies)
static void mbs_cfsDirections(const mbsModel *m, const mbsState *s, mbsWork *w, mbsCfs *c, int b,
                              mbsReal *T, mbsReal *G) {
  if (b < c->b0 || b >= c->b1) mbs_bodyPosition(m, s->q, w, b);
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
  int n = m->nlam, order = mode - 1; // previous: 0, linear: 1, quadratic: 2, cubic: 3
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
  for (int k = 0; k <= order; k++) {
    double l = 1;
    for (int j = 0; j <= order; j++)
      if (j != k) l *= (t - ht[idx[j]]) / (ht[idx[k]] - ht[idx[j]]);
    wgt[k] = l;
  }
  for (int i = l0; i < l1; i++) {
    double v = 0;
    for (int k = 0; k <= order; k++) v += wgt[k] * hl[(size_t)idx[k] * n + i];
    x[i] = v;
  }
}

void mbs_cfsPushHistory(const mbsModel *m, mbsState *s, mbsReal t, int l0, int l1,
                        const mbsReal *x) {
  int n = m->nlam, sl = s->stage;
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

// ---------------------------------------------------------------- vector helpers (owned range)

static double mbs_dotLocal(const mbsCfs *c, const mbsReal *a, const mbsReal *b) {
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

static mbsErr mbs_reduce(const mbsCfsComm *comm, double *v, int n) {
  if (comm && comm->reduce) return comm->reduce(comm->ctx, v, n);
  return MBS_OK;
}

// extreme eigenvalues of a symmetric tridiagonal matrix (diag d, offdiag e, size n) by
// Sturm-sequence bisection (flops: src/flops.h mbs_flopTridiagEig)
static int mbs_sturmCount(const double *d, const double *e, int n, double x) {
  double q = d[0] - x;
  if (q == 0) q = 1e-300;
  int cnt = q < 0;
  for (int i = 1; i < n; i++) {
    q = d[i] - x - e[i - 1] * e[i - 1] / q;
    if (q == 0) q = 1e-300;
    cnt += q < 0;
  }
  return cnt;
}
static double mbs_tridiagEig(const double *d, const double *e, int n, int which) {
  double lo = 1e300, hi = -1e300;
  for (int i = 0; i < n; i++) { // Gershgorin discs
    double rad = (i > 0 ? fabs(e[i - 1]) : 0) + (i < n - 1 ? fabs(e[i]) : 0);
    double a = d[i] - rad, b = d[i] + rad;
    if (a < lo) lo = a;
    if (b > hi) hi = b;
  }
  for (int it = 0; it < MBS_EIG_BISECT; it++) {
    double mid = 0.5 * (lo + hi);
    if (mbs_sturmCount(d, e, n, mid) > which)
      hi = mid;
    else
      lo = mid;
  }
  MBS_FLOPS(mbs_flopTridiagEig(n));
  return 0.5 * (lo + hi);
}

// ---------------------------------------------------------------- solvers

typedef struct {
  double bnorm;
  int it;
  int reason;
  double res;
} mbsSolveInfo;

// convergence test: residual ||r||/||b|| or seed-002 relative change ||dx||/||x||
static int mbs_converged(const mbsModel *m, double rr, double dxdx, double xx, double bnorm,
                         double *res) {
  MBS_FLOPS(2);
  if (m->opt.criterion == MBS_CRIT_CHANGE)
    *res = xx > 0 ? sqrt(dxdx / xx) : sqrt(dxdx);
  else
    *res = bnorm > 0 ? sqrt(rr) / bnorm : sqrt(rr);
  return *res <= m->opt.tol;
}

// conjugate gradients preconditioned by the block diagonal D (seed 002's J-CG); optionally
// records the Lanczos coefficients for a spectral estimate
static mbsErr mbs_solveJcg(const mbsModel *m, const mbsWork *w, mbsCfs *c, const mbsCfsComm *comm,
                           int maxit, mbsSolveInfo *info, double *lan_a, double *lan_b) {
  mbsReal *x = c->x, *r = c->r, *z = c->z, *p = c->p, *q = c->q;
  int l0 = c->l0, l1 = c->l1;
  MBS_CALL(mbs_cfsApply(m, w, c, comm, x, 0, q));
  for (int i = l0; i < l1; i++) r[i] = c->rhs[i] - q[i];
  MBS_FLOPS(l1 - l0);
  mbs_cfsPrecond(m, c, r, z);
  double red[4] = {mbs_dotLocal(c, r, z), mbs_dotLocal(c, r, r), 0, 0};
  MBS_CALL(mbs_reduce(comm, red, 2));
  double rz = red[0], res;
  info->it = 0;
  info->reason = MBS_REASON_DIVERGED_MAXIT;
  if (m->opt.criterion != MBS_CRIT_CHANGE && mbs_converged(m, red[1], 0, 1, info->bnorm, &res)) {
    info->res = res;
    info->reason = MBS_REASON_CONVERGED;
    return MBS_OK;
  }
  for (int i = l0; i < l1; i++) p[i] = z[i];
  double alpha_old = 1, beta_old = 0;
  for (int it = 1; it <= maxit; it++) {
    MBS_CALL(mbs_cfsApply(m, w, c, comm, p, 0, q));
    double pq = mbs_dotLocal(c, p, q);
    MBS_CALL(mbs_reduce(comm, &pq, 1));
    if (!(pq > 0)) {
      info->it = it;
      info->reason = isfinite(pq) ? MBS_REASON_DIVERGED_BREAKDOWN : MBS_REASON_DIVERGED_NAN;
      return MBS_OK;
    }
    double alpha = rz / pq;
    for (int i = l0; i < l1; i++) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
    }
    MBS_FLOPS(1 + 4L * (l1 - l0));
    mbs_cfsPrecond(m, c, r, z);
    // fused reduction: r.z, r.r, and for the change criterion |alpha p|^2 and x.x
    red[0] = mbs_dotLocal(c, r, z);
    red[1] = mbs_dotLocal(c, r, r);
    int nred = 2;
    if (m->opt.criterion == MBS_CRIT_CHANGE) {
      red[2] = alpha * alpha * mbs_dotLocal(c, p, p);
      MBS_FLOPS(2);
      red[3] = mbs_dotLocal(c, x, x);
      nred = 4;
    }
    MBS_CALL(mbs_reduce(comm, red, nred));
    double rz_new = red[0], beta = rz_new / rz;
    MBS_FLOPS(1);
    if (lan_a && it <= 64) { // Lanczos tridiagonal of D^{-1} A from the CG coefficients
      lan_a[it - 1] = 1 / alpha + (it > 1 ? beta_old / alpha_old : 0);
      lan_b[it - 1] = sqrt(fabs(beta)) / alpha;
      MBS_FLOPS(mbs_flopLanczosStep(it));
    }
    alpha_old = alpha, beta_old = beta;
    info->it = it;
    if (!isfinite(rz_new)) {
      info->reason = MBS_REASON_DIVERGED_NAN;
      return MBS_OK;
    }
    if (mbs_converged(m, red[1], red[2], red[3], info->bnorm, &res)) {
      info->res = res;
      info->reason = MBS_REASON_CONVERGED;
      return MBS_OK;
    }
    info->res = res;
    rz = rz_new;
    for (int i = l0; i < l1; i++) p[i] = z[i] + beta * p[i];
    MBS_FLOPS(2L * (l1 - l0));
  }
  return MBS_OK;
}

// block Jacobi: x <- x + D^{-1} (b - A x)
static mbsErr mbs_solveJacobi(const mbsModel *m, const mbsWork *w, mbsCfs *c,
                              const mbsCfsComm *comm, mbsSolveInfo *info) {
  mbsReal *x = c->x, *r = c->r, *z = c->z, *q = c->q;
  double rr0 = 0;
  info->reason = MBS_REASON_DIVERGED_MAXIT;
  for (int it = 0; it <= m->opt.max_iter; it++) {
    MBS_CALL(mbs_cfsApply(m, w, c, comm, x, 0, q));
    for (int i = c->l0; i < c->l1; i++) r[i] = c->rhs[i] - q[i];
    MBS_FLOPS(c->l1 - c->l0);
    mbs_cfsPrecond(m, c, r, z);
    double om = c->jacobi_omega;
    for (int i = c->l0; i < c->l1; i++) z[i] *= om;
    for (int i = c->l0; i < c->l1; i++) x[i] += z[i];
    MBS_FLOPS(2L * (c->l1 - c->l0));
    double red[3] = {mbs_dotLocal(c, r, r), mbs_dotLocal(c, z, z), mbs_dotLocal(c, x, x)}, res;
    MBS_CALL(mbs_reduce(comm, red, 3));
    info->it = it;
    if (!isfinite(red[0]) || !isfinite(red[1])) {
      info->reason = MBS_REASON_DIVERGED_NAN;
      return MBS_OK;
    }
    if (it == 0) rr0 = red[0];
    MBS_FLOPS(1);
    if (red[0] > 1e12 * rr0) { // rho(I - D^-1 A) > 1: possible for trees (sibling couplings)
      info->reason = MBS_REASON_DIVERGED_DTOL;
      return MBS_OK;
    }
    // the residual test judges the iterate before this update (it is what r belongs to)
    int conv = mbs_converged(m, red[0], red[1], red[2], info->bnorm, &res);
    info->res = res;
    if (conv) {
      if (m->opt.criterion != MBS_CRIT_CHANGE) {
        for (int i = c->l0; i < c->l1; i++) x[i] -= z[i];
        MBS_FLOPS(c->l1 - c->l0);
      }
      info->reason = MBS_REASON_CONVERGED;
      return MBS_OK;
    }
  }
  return MBS_OK;
}

// Chebyshev semi-iteration on D^{-1} A with eigenvalues in [lo, hi] (Saad, Alg. 12.1)
static mbsErr mbs_solveChebyshev(const mbsModel *m, const mbsWork *w, mbsCfs *c,
                                 const mbsCfsComm *comm, double lo, double hi, int maxit,
                                 mbsSolveInfo *info) {
  mbsReal *x = c->x, *r = c->r, *z = c->z, *d = c->p, *q = c->q;
  double theta = 0.5 * (hi + lo), delta = 0.5 * (hi - lo), sigma = theta / delta;
  double rho = 1 / sigma, res;
  MBS_FLOPS(6);
  MBS_CALL(mbs_cfsApply(m, w, c, comm, x, 0, q));
  for (int i = c->l0; i < c->l1; i++) r[i] = c->rhs[i] - q[i];
  MBS_FLOPS(c->l1 - c->l0);
  mbs_cfsPrecond(m, c, r, z);
  for (int i = c->l0; i < c->l1; i++) d[i] = z[i] / theta;
  MBS_FLOPS(c->l1 - c->l0);
  info->reason = MBS_REASON_DIVERGED_MAXIT;
  double r0 = -1;
  for (int it = 1; it <= maxit; it++) {
    for (int i = c->l0; i < c->l1; i++) x[i] += d[i];
    MBS_FLOPS(c->l1 - c->l0);
    MBS_CALL(mbs_cfsApply(m, w, c, comm, d, 0, q));
    for (int i = c->l0; i < c->l1; i++) r[i] -= q[i];
    MBS_FLOPS(c->l1 - c->l0);
    mbs_cfsPrecond(m, c, r, z);
    double red[3] = {mbs_dotLocal(c, r, r), mbs_dotLocal(c, d, d), mbs_dotLocal(c, x, x)};
    MBS_CALL(mbs_reduce(comm, red, 3));
    info->it = it;
    if (!isfinite(red[0])) {
      info->reason = MBS_REASON_DIVERGED_NAN;
      return MBS_OK;
    }
    if (r0 < 0) r0 = red[0];
    MBS_FLOPS(1);
    if (red[0] > 1e12 * r0) { // the interval was wrong: report divergence
      info->reason = MBS_REASON_DIVERGED_DTOL;
      return MBS_OK;
    }
    if (mbs_converged(m, red[0], red[1], red[2], info->bnorm, &res)) {
      info->res = res;
      info->reason = MBS_REASON_CONVERGED;
      return MBS_OK;
    }
    info->res = res;
    double rho_new = 1 / (2 * sigma - rho);
    for (int i = c->l0; i < c->l1; i++) d[i] = rho_new * rho * d[i] + 2 * rho_new / delta * z[i];
    MBS_FLOPS(3 + 6L * (c->l1 - c->l0));
    rho = rho_new;
  }
  return MBS_OK;
}

// multicolour block Gauss–Seidel / SOR: one iteration sweeps the colours in turn; the joints of
// one colour do not couple, so each colour is a parallel block-Jacobi update with the newest
// values of the others (red-black on chains). Converges for SPD A and 0 < omega < 2 in any
// ordering, and the iterates do not depend on the rank count.
static mbsErr mbs_solveSor(const mbsModel *m, const mbsWork *w, mbsCfs *c, const mbsCfsComm *comm,
                           double omega, mbsSolveInfo *info) {
  mbsReal *x = c->x, *q = c->q, *r = c->r, *z = c->z;
  info->reason = MBS_REASON_DIVERGED_MAXIT;
  double rr0 = 0;
  for (int it = 0; it <= m->opt.max_iter; it++) {
    for (int i = c->l0; i < c->l1; i++) c->xold[i] = x[i];
    double rr = 0;
    for (int col = 0; col < c->ncolor; col++) {
      MBS_CALL(mbs_cfsApply(m, w, c, comm, x, 0, q));
      for (int i = c->l0; i < c->l1; i++) r[i] = c->rhs[i] - q[i];
      MBS_FLOPS(c->l1 - c->l0);
      if (col == 0) rr = mbs_dotLocal(c, r, r); // residual of the iterate entering the sweep
      for (int b = c->b0; b < c->b1; b++) {
        int nl = m->body_lamnum[b], la = m->body_lamadr[b];
        if (!nl || c->color[b] != col) continue;
        for (int k = 0; k < nl; k++) z[la + k] = r[la + k];
        mbsu_cholSolve(c->Dfac + 36 * b, nl, z + la);
        for (int k = 0; k < nl; k++) x[la + k] += omega * z[la + k];
        MBS_FLOPS(mbs_flopCholSolve(nl) + 2L * nl);
      }
    }
    for (int i = c->l0; i < c->l1; i++) z[i] = x[i] - c->xold[i]; // the change of this sweep
    MBS_FLOPS(c->l1 - c->l0);
    double red[3] = {rr, mbs_dotLocal(c, z, z), mbs_dotLocal(c, x, x)}, res;
    MBS_CALL(mbs_reduce(comm, red, 3));
    info->it = it;
    if (!isfinite(red[0]) || !isfinite(red[1])) {
      info->reason = MBS_REASON_DIVERGED_NAN;
      return MBS_OK;
    }
    if (it == 0) rr0 = red[0];
    MBS_FLOPS(1);
    if (red[0] > 1e12 * rr0) {
      info->reason = MBS_REASON_DIVERGED_DTOL;
      return MBS_OK;
    }
    int conv = mbs_converged(m, red[0], red[1], red[2], info->bnorm, &res);
    info->res = res;
    if (conv) {
      // the residual test judged the iterate before this sweep: return that one
      if (m->opt.criterion != MBS_CRIT_CHANGE)
        for (int i = c->l0; i < c->l1; i++) x[i] = c->xold[i];
      info->reason = MBS_REASON_CONVERGED;
      return MBS_OK;
    }
  }
  return MBS_OK;
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

// exact solve by block Cholesky in leaf-first order (fill-free on the tree pattern); serial
static mbsErr mbs_solveDirect(const mbsModel *m, const mbsWork *w, mbsCfs *c, mbsSolveInfo *info) {
  MBS_CHECK(c->b0 == 0 && c->b1 == m->nbody, MBS_ERR_INTERNAL,
            "direct solver needs the whole model");
  int n = m->nbody;
  if (!c->blocks_ready) MBS_CALL(mbs_cfsAssemble(m, w, c));
  if (!c->Ld) {
    c->Ld = calloc(36 * (size_t)n, sizeof(mbsReal));
    c->Lp = calloc(36 * (size_t)n, sizeof(mbsReal));
    c->Ls = calloc(36 * (size_t)(c->nsib > 0 ? c->nsib : 1), sizeof(mbsReal));
    MBS_CHECK(c->Ld && c->Lp && c->Ls, MBS_ERR_NOMEM, "out of memory (direct solver)");
  }
  // copies: D = L L^T from the factors, parent and sibling blocks
  for (int b = 0; b < n; b++) {
    int nl = m->body_lamnum[b];
    const mbsReal *L = c->Dfac + 36 * b;
    for (int i = 0; i < nl; i++)
      for (int j = 0; j < nl; j++) {
        mbsReal s = 0;
        for (int k = 0; k <= (i < j ? i : j); k++) s += L[nl * i + k] * L[nl * j + k];
        c->Ld[36 * b + nl * i + j] = s;
      }
    MBS_FLOPS(mbs_flopLLt(nl));
  }
  memcpy(c->Lp, c->Pblk, 36 * (size_t)n * sizeof(mbsReal));
  memcpy(c->Ls, c->Sblk, 36 * (size_t)(c->nsib > 0 ? c->nsib : 1) * sizeof(mbsReal));
  // swap the explicit sibling storage for the factor copy while factoring
  mbsReal *Sorig = c->Sblk;
  c->Sblk = c->Ls;

  // factor: eliminate joints from the last body to the first
  for (int i = n - 1; i >= 0; i--) {
    int ni = m->body_lamnum[i], p = m->body_parent[i];
    if (ni == 0) continue;
    mbsReal *Lii = c->Ld + 36 * i;
    if (!mbsu_cholFactor(Lii, ni)) {
      c->Sblk = Sorig;
      return mbs_errSet(MBS_ERR_NUMERIC,
                        "direct: constraint-force matrix is not positive definite");
    }
    MBS_FLOPS(mbs_flopChol(ni));
    if (p < 0) continue;
    // W_u = L_ii^{-1} A_{i,u} for the upper neighbours u (parent, earlier siblings), in place
    int np = m->body_lamnum[p];
    mbsReal *Wp = c->Lp + 36 * i; // ni x np
    mbs_blockSolveL(Lii, ni, Wp, np);
    const int *ch = m->child_list + m->body_childadr[p];
    int ri = c->child_rank[i];
    for (int r = 0; r < ri; r++) {
      int k = ch[r];
      mbs_blockSolveL(Lii, ni, mbs_sibBlock(m, c, i, k), m->body_lamnum[k]); // row i: ni x nk
    }
    // Schur complement updates A_uv -= W_u^T W_v over the upper neighbours (they are already
    // coupled: no fill)
    mbs_blockSubAtB(Wp, np, Wp, np, ni, c->Ld + 36 * p); // (p, p)
    for (int r = 0; r < ri; r++) {
      int k = ch[r], nk = m->body_lamnum[k];
      if (nk == 0) continue;
      const mbsReal *Wk = mbs_sibBlock(m, c, i, k);
      mbs_blockSubAtB(Wk, nk, Wp, np, ni, c->Lp + 36 * k); // (k, p): parent block of k
      mbs_blockSubAtB(Wk, nk, Wk, nk, ni, c->Ld + 36 * k); // (k, k)
      for (int r2 = 0; r2 < r; r2++) {                     // (k, k') for earlier siblings k'
        int k2 = ch[r2], nk2 = m->body_lamnum[k2];
        if (nk2 == 0) continue;
        mbs_blockSubAtB(Wk, nk, mbs_sibBlock(m, c, i, k2), nk2, ni, mbs_sibBlock(m, c, k, k2));
      }
    }
  }

  // solve L L^T x = b in elimination order
  mbsReal *y = c->x;
  memcpy(y, c->rhs, (size_t)m->nlam * sizeof(mbsReal));
  for (int i = n - 1; i >= 0; i--) {
    int ni = m->body_lamnum[i], p = m->body_parent[i], la = m->body_lamadr[i];
    if (ni == 0) continue;
    mbsu_cholSolveL(c->Ld + 36 * i, ni, y + la);
    MBS_FLOPS((long)ni * ni);
    if (p < 0) continue;
    mbs_blockSubTMul(c->Lp + 36 * i, ni, m->body_lamnum[p], y + la, y + m->body_lamadr[p]);
    const int *ch = m->child_list + m->body_childadr[p];
    for (int r = 0; r < c->child_rank[i]; r++) {
      int k = ch[r];
      mbs_blockSubTMul(mbs_sibBlock(m, c, i, k), ni, m->body_lamnum[k], y + la,
                       y + m->body_lamadr[k]);
    }
  }
  for (int i = 0; i < n; i++) {
    int ni = m->body_lamnum[i], p = m->body_parent[i], la = m->body_lamadr[i];
    if (ni == 0) continue;
    if (p >= 0) {
      mbs_blockSubMul(c->Lp + 36 * i, ni, m->body_lamnum[p], y + m->body_lamadr[p], y + la);
      const int *ch = m->child_list + m->body_childadr[p];
      for (int r = 0; r < c->child_rank[i]; r++) {
        int k = ch[r];
        mbs_blockSubMul(mbs_sibBlock(m, c, i, k), ni, m->body_lamnum[k], y + m->body_lamadr[k],
                        y + la);
      }
    }
    mbsu_cholSolveLT(c->Ld + 36 * i, ni, y + la);
    MBS_FLOPS((long)ni * ni);
  }
  c->Sblk = Sorig;
  info->it = 1;
  info->res = 0;
  info->reason = MBS_REASON_CONVERGED_DIRECT;
  return MBS_OK;
}

// the extreme eigenvalues of D^{-1} A from the CG (Lanczos) coefficients of k >= 2 steps; the
// upper bound is widened by 5 % (Lanczos approaches lmax from below)
static void mbs_spectrumFromLanczos(mbsCfs *c, const double *la, const double *lb, int k) {
  c->lmin = mbs_tridiagEig(la, lb, k, 0);
  c->lmax = 1.05 * mbs_tridiagEig(la, lb, k, k - 1);
  MBS_FLOPS(1);
}

// spectrum of D^{-1} A from up to 40 Lanczos (CG) steps on the right side from x = 0, leaving x
// intact
static mbsErr mbs_estimateSpectrum(const mbsModel *m, const mbsWork *w, mbsCfs *c,
                                   const mbsCfsComm *comm, double bnorm) {
  double la[64], lb[64];
  mbsSolveInfo tmp = {bnorm, 0, 0, 0};
  for (int i = c->l0; i < c->l1; i++) c->tmp[i] = c->x[i], c->x[i] = 0;
  mbsOption save = m->opt;
  ((mbsModel *)m)->opt.criterion = MBS_CRIT_RESIDUAL; // estimation only; restored below
  ((mbsModel *)m)->opt.tol = 1e-14;
  mbsErr e = mbs_solveJcg(m, w, c, comm, MBS_CFS_SPEC_STEPS, &tmp, la, lb);
  ((mbsModel *)m)->opt = save;
  for (int i = c->l0; i < c->l1; i++) c->x[i] = c->tmp[i];
  if (e) return e;
  c->spec_it = tmp.it;
  c->spec_conv = tmp.reason == MBS_REASON_CONVERGED;
  if (tmp.it >= 2)
    mbs_spectrumFromLanczos(c, la, lb, tmp.it);
  else
    c->lmin = 0.5, c->lmax = 1.5;
  c->have_spec = 1;
  return MBS_OK;
}

// ---------------------------------------------------------------- full solve

mbsErr mbs_cfsPrepare(const mbsModel *m, mbsState *s, mbsWork *w, mbsCfs *c, const mbsCfsComm *comm,
                      double *bnorm) {
  // position-dependent blocks and the right side b = T^T c - (affine part at lam = 0)
  MBS_TIC(w->timer, MBS_TIMER_ASSEMBLY);
  mbsErr e = mbs_cfsPosition(m, w, c);
  MBS_TOC(w->timer, MBS_TIMER_ASSEMBLY);
  if (comm && comm->reduce) { // every rank must agree before the collective sweeps
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
  double bb = mbs_dotLocal(c, c->rhs, c->rhs);
  MBS_CALL(mbs_reduce(comm, &bb, 1));
  *bnorm = sqrt(bb);
  MBS_FLOPS(1);

  // initial guess from the history (warm start)
  if (m->opt.warm_start != MBS_WARM_NONE && s->nhist[s->stage] > 0) {
    mbs_cfsWarmStart(m, s, m->opt.warm_start, s->time, c->l0, c->l1, c->x);
  }
  return MBS_OK;
}

mbsErr mbs_cfsFinish(const mbsModel *m, mbsState *s, mbsWork *w, mbsCfs *c, const mbsCfsComm *comm,
                     int method, int iterations, int reason, double residual) {
  mbsSolveInfo info = {0, iterations, reason, residual};
  // accelerations from the constraint forces: affine operator at lam, then qdd per joint
  MBS_TIC(w->timer, MBS_TIMER_ACCEL);
  MBS_CALL(mbs_cfsApply(m, w, c, comm, c->x, 1, c->q));
  mbsReal a0[6];
  mbs_baseAccel(m, 1, a0);
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
  MBS_TOC(w->timer, MBS_TIMER_ACCEL);

  // history for the next warm start (owned part; other entries are never read by this rank)
  if (m->opt.warm_start != MBS_WARM_NONE) mbs_cfsPushHistory(m, s, s->time, c->l0, c->l1, c->x);

  w->stat.method = method;
  w->stat.iterations = info.it;
  w->stat.reason = info.reason;
  w->stat.residual = info.res;
  w->stat.evals++;
  w->stat.total_iterations += info.it;
  if (info.reason < 0) w->stat.nonconverged++;
  return MBS_OK;
}

mbsErr mbs_cfsSolve(const mbsModel *m, mbsState *s, mbsWork *w, mbsCfs *c, const mbsCfsComm *comm) {
  int method = m->opt.solver;
  mbsSolveInfo info = {0, 0, 0, 0};
  c->spec_it = c->spec_conv = 0;
  MBS_CALL(mbs_cfsPrepare(m, s, w, c, comm, &info.bnorm));
  switch (method) {
  case MBS_SOLVER_JCG:
    MBS_CALL(mbs_solveJcg(m, w, c, comm, m->opt.max_iter, &info, NULL, NULL));
    break;
  case MBS_SOLVER_JACOBI:
    // the seed's Jacobi on 2-cyclic (chain-like) systems; on branched trees the spectrum of
    // D^{-1} A is not symmetric about 1 and plain Jacobi may diverge: relax by 2/(lmin+lmax)
    if (!c->bipartite) {
      if (!c->have_spec) MBS_CALL(mbs_estimateSpectrum(m, w, c, comm, info.bnorm));
      c->jacobi_omega = 2 / (c->lmin + c->lmax / 1.05);
      MBS_FLOPS(3);
    }
    MBS_CALL(mbs_solveJacobi(m, w, c, comm, &info));
    break;
  case MBS_SOLVER_GS:
    MBS_CALL(mbs_solveSor(m, w, c, comm, 1.0, &info));
    break;
  case MBS_SOLVER_SOR:
    MBS_CALL(mbs_solveSor(m, w, c, comm, m->opt.omega, &info));
    break;
  case MBS_SOLVER_CHEBYSHEV: {
    double lo, hi;
    int used = 0;
    if (m->opt.rho > 0) {
      MBS_CHECK(m->opt.rho < 1, MBS_ERR_INPUT, "solver.rho must be below 1 (got %g)", m->opt.rho);
      lo = 1 - m->opt.rho, hi = 1 + m->opt.rho;
      MBS_FLOPS(2);
    } else if (c->have_spec) {
      lo = c->lmin, hi = c->lmax;
    } else {
      // estimate the spectrum of D^{-1} A from a few CG (Lanczos) steps, which also improve x
      double la[64], lb[64];
      int k = m->opt.max_iter < MBS_CFS_CHEB_STEPS ? m->opt.max_iter : MBS_CFS_CHEB_STEPS;
      MBS_CALL(mbs_solveJcg(m, w, c, comm, k, &info, la, lb));
      used = c->spec_it = info.it;
      c->spec_conv = info.reason == MBS_REASON_CONVERGED;
      if (info.reason == MBS_REASON_CONVERGED || used < 2) {
        c->lmin = 0.5, c->lmax = 1.5; // trivially small system: any safe interval
        if (info.reason == MBS_REASON_CONVERGED) break;
      } else {
        mbs_spectrumFromLanczos(c, la, lb, used);
      }
      c->have_spec = 1;
      lo = c->lmin, hi = c->lmax;
    }
    MBS_CALL(mbs_solveChebyshev(m, w, c, comm, lo, hi, m->opt.max_iter - used, &info));
    info.it += used;
    if (info.reason == MBS_REASON_DIVERGED_DTOL) c->have_spec = 0;
    break;
  }
  case MBS_SOLVER_DIRECT:
    MBS_CHECK(!comm || !comm->reduce || (c->b0 == 0 && c->b1 == m->nbody), MBS_ERR_UNSUPPORTED,
              "solver.method = direct runs on one rank only");
    MBS_CALL(mbs_solveDirect(m, w, c, &info));
    break;
  default:
    return mbs_errSet(MBS_ERR_UNSUPPORTED, "solver.method \"%s\" is not a constraint-force solver",
                      mbs_solverName(method));
  }
  MBS_TOC(w->timer, MBS_TIMER_SOLVE);
  return mbs_cfsFinish(m, s, w, c, comm, method, info.it, info.reason, info.res);
}

mbsErr mbs_cfsForward(const mbsModel *m, mbsState *s, mbsWork *w, mbsCfs *c) {
  MBS_TIC(w->timer, MBS_TIMER_EVAL);
  mbs_fwdPosition(m, s, w);
  mbs_fwdVelocity(m, s, w);
  mbsErr e = mbs_cfsSolve(m, s, w, c, NULL);
  MBS_TOC(w->timer, MBS_TIMER_EVAL);
  return e;
}
