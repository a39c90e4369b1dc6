/// \file schur.c
/// Exact elimination of the constraint-force system A lam = b on a segment of bodies, in
/// compliance form, with the joints that leave the segment kept as ports (docs/formulation.md,
/// "The exact solver"). Notation (per body b, parent p, joint i = b):
///   M_b = I_b^{-1} (6x6),  T_i: constraint directions (6 x l_i),  G_i = X_ip^T T_i,
///   a0_b: acceleration of b under the known forces alone,  c_b: velocity-product term.
/// The energy Q(lam) = sum_b [1/2 w_b^T M_b w_b + a0_b^T w_b] + a0_g^T w_g - sum_i c_i^T T_i lam_i
/// with the body wrenches w_b = T_b lam_b - sum_{children c} G_c lam_c has gradient A lam - b, so
/// eliminating a joint is minimising Q over its lambda. Each body keeps the reduced element
///   E_b(w, pi) = 1/2 w^T Phi_b w + beta_b^T w + w^T Psi_b pi + 1/2 pi^T Theta_b pi - gam_b^T pi
/// over the unknown wrench w on it and the lower ports pi of its subtree. Absorbing child c into
/// b (minimising over lam_c) is one pivot block of the leaf-first block Cholesky of A:
///   D = T_c^T Phi_c T_c + G_c^T Phi_b G_c = L L^T,  W = L^{-1} (Phi_b G_c)^T,
///   rho = T_c^T (c_c - beta_c) + G_c^T beta_b,  y = L^{-1} rho,
///   R = [G_c^T Psi_b | -T_c^T Psi_c],  V = L^{-1} R,
///   Phi_b -= W^T W,  beta_b -= W^T y,  Psi_b = [Psi_b | 0] - W^T V,
///   Theta_b = diag(Theta_b, Theta_c) - V^T V,  gam_b = [gam_b; gam_c] + V^T y,
/// and back-substitution is L^T lam_c = y + W f' + V pi with f' the wrench on b from the
/// unknowns that were still open when c was absorbed.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_schur.h"
#include "spatial.h"
#include "flops.h"
#ifdef _OPENMP
#include <omp.h>
#endif

int mbs_maxThreads(void) {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

// ---------------------------------------------------------------- small dense helpers

// record layout of body b (joint b): a0 (6), kw (6), y (l), L packed (l(l+1)/2), W (l x 6)
#define MBS_REC_A0(r)   (r)
#define MBS_REC_KW(r)   ((r) + 6)
#define MBS_REC_Y(r)    ((r) + 12)
#define MBS_REC_L(r, l) ((r) + 12 + (l))
#define MBS_REC_W(r, l) ((r) + 12 + (l) + (l) * ((l) + 1) / 2)
// spath work per component: P (6 rows of MBS_SPIKE_LD), Theta (MBS_SPIKE_LD^2), gam
#define MBS_SPW    (6 * MBS_SPIKE_LD + MBS_SPIKE_LD * MBS_SPIKE_LD + MBS_SPIKE_LD)
#define MBS_SPW_TH (6 * MBS_SPIKE_LD)
#define MBS_SPW_GA (6 * MBS_SPIKE_LD + MBS_SPIKE_LD * MBS_SPIKE_LD)

static int mbs_schurRecSize(int l) {
  return 12 + l + l * (l + 1) / 2 + 6 * l;
}

// packed lower triangle: element (i, j), j <= i
#define MBS_PK(i, j) ((i) * ((i) + 1) / 2 + (j))

// in-place Cholesky of a packed n x n SPD matrix; 0 if not positive definite
static inline int mbs_cholPacked(mbsReal *restrict L, int n) {
  for (int j = 0; j < n; j++) {
    mbsReal d = L[MBS_PK(j, j)];
    for (int k = 0; k < j; k++) d -= L[MBS_PK(j, k)] * L[MBS_PK(j, k)];
    if (!(d > 0)) return 0;
    d = sqrt(d);
    L[MBS_PK(j, j)] = d;
    mbsReal inv = 1 / d;
    for (int i = j + 1; i < n; i++) {
      mbsReal v = L[MBS_PK(i, j)];
      for (int k = 0; k < j; k++) v -= L[MBS_PK(i, k)] * L[MBS_PK(j, k)];
      L[MBS_PK(i, j)] = v * inv;
    }
  }
  return 1;
}
// x <- L^{-1} x
static inline void mbs_fwdPacked(const mbsReal *restrict L, int n, mbsReal *restrict x) {
  for (int i = 0; i < n; i++) {
    mbsReal v = x[i];
    for (int k = 0; k < i; k++) v -= L[MBS_PK(i, k)] * x[k];
    x[i] = v / L[MBS_PK(i, i)];
  }
}
// x <- L^{-T} x
static inline void mbs_bwdPacked(const mbsReal *restrict L, int n, mbsReal *restrict x) {
  for (int i = n - 1; i >= 0; i--) {
    mbsReal v = x[i];
    for (int k = i + 1; k < n; k++) v -= L[MBS_PK(k, i)] * x[k];
    x[i] = v / L[MBS_PK(i, i)];
  }
}
// X <- L^{-1} X for a row-major n x k block with leading dimension ld (row i: unknown i)
static inline void mbs_fwdPackedRows(const mbsReal *restrict L, int n, mbsReal *restrict X, int k,
                                     int ld) {
  for (int i = 0; i < n; i++) {
    mbsReal *xi = X + (size_t)ld * i;
    for (int l = 0; l < i; l++) {
      mbsReal c = L[MBS_PK(i, l)];
      const mbsReal *xl = X + (size_t)ld * l;
      for (int j = 0; j < k; j++) xi[j] -= c * xl[j];
    }
    mbsReal inv = 1 / L[MBS_PK(i, i)];
    for (int j = 0; j < k; j++) xi[j] *= inv;
  }
}

// F tau for the dofs of body b: S (S^T S)^{-1} tau, the known part of the joint wrench
static void mbs_schurKnownWrench(const mbsModel *m, const mbsWork *w, int b, mbsReal *f) {
  int nd = m->body_dofnum[b], da = m->body_dofadr[b];
  const mbsReal *S = w->sdof + 6 * da, *tau = w->qfrc + da;
  if (nd == 1) {
    mbsReal t = tau[0] / mbsu_dot6(S, S);
    for (int i = 0; i < 6; i++) f[i] = S[i] * t;
    return;
  }
  for (int i = 0; i < 6; i++) f[i] = 0;
  if (nd == 0) return;
  mbsReal SS[36], t[6];
  for (int i = 0; i < nd; i++) {
    t[i] = tau[i];
    for (int j = 0; j < nd; j++) SS[nd * i + j] = mbsu_dot6(S + 6 * i, S + 6 * j);
  }
  if (mbsu_cholFactor(SS, nd)) mbsu_cholSolve(SS, nd, t);
  for (int k = 0; k < nd; k++)
    for (int i = 0; i < 6; i++) f[i] += S[6 * k + i] * t[k];
}

// G = X^T T for the nl columns of T (6 each)
static void mbs_schurG(const mbsReal *X, const mbsReal *T, int nl, mbsReal *G) {
  for (int k = 0; k < nl; k++) mbsu_xTForce(X, T + 6 * k, G + 6 * k);
}

// Y = Phi G (6 x nl, columns of 6)
static void mbs_schurPhiG(const mbsReal *Phi, const mbsReal *G, int nl, mbsReal *Y) {
  for (int k = 0; k < nl; k++) mbsu_mul6(Phi, G + 6 * k, Y + 6 * k);
}

// out (na x nb, row-major, leading dim ld) = A^T B for column sets A (6 x na), B (6 x nb)
static void mbs_schurAtB(const mbsReal *A, int na, const mbsReal *B, int nb, mbsReal *out, int ld,
                         int add) {
  for (int i = 0; i < na; i++)
    for (int j = 0; j < nb; j++) {
      mbsReal v = mbsu_dot6(A + 6 * i, B + 6 * j);
      out[ld * i + j] = add ? out[ld * i + j] + v : v;
    }
}

// the constraint directions T of body b (6 x l, columns of 6): cached for revolute joints
static void mbs_schurT(const mbsModel *m, const mbsWork *w, const mbsSchur *s, int b, mbsReal *T) {
  if (b >= s->s0 && b < s->s1 && s->kind[b - s->s0] == 1) {
    const mbsReal *n = s->tn + 6 * (b - s->s0);
    memset(T, 0, 30 * sizeof(mbsReal));
    T[0] = n[0], T[1] = n[1], T[2] = n[2];
    T[6] = n[3], T[7] = n[4], T[8] = n[5];
    T[15] = T[22] = T[29] = 1;
    return;
  }
  mbs_bodyComplement(m, w, b, T);
}

// ---------------------------------------------------------------- setup

void mbs_schurDestroy(mbsSchur **ps) {
  if (!ps || !*ps) return;
  mbsSchur *s = *ps;
  void *arrs[] = {s->comp,     s->port_body, s->port_cadr, s->body_c0,  s->body_nc, s->body_comp,
                  s->Minv,     s->tn,        s->kind,      s->rec_adr,  s->rec,     s->Phi,
                  s->beta,     s->psi_adr,   s->th_adr,    s->gam_adr,  s->v_adr,   s->Psi,
                  s->Theta,    s->gam,       s->V,         s->v_w,      s->v_c0,    s->cur,
                  s->cpool,    s->mode,      s->initp,     s->phi0_adr, s->Phi0,    s->onpath,
                  s->selfinit, s->spk,       s->spP};
  for (size_t k = 0; k < sizeof arrs / sizeof arrs[0]; k++) free(arrs[k]);
  free(s);
  *ps = NULL;
}

static int mbs_schurIsPort(const mbsModel *m, const mbsSchur *s, int c) {
  return c >= s->s1 && m->body_lamnum[c] > 0;
}

// the starting compliance of compliance-form body lb: M, or (I^A)^{-1} with inertia-form children
static inline const mbsReal *mbs_schurPhi0(const mbsSchur *s, int lb) {
  return s->phi0_adr[lb] < 0 ? s->Minv + 36 * lb : s->Phi0 + s->phi0_adr[lb];
}

mbsErr mbs_schurCreate(const mbsModel *m, int s0, int s1, mbsSchur **out) {
  *out = NULL;
  MBS_CHECK(s0 >= 0 && s1 <= m->nbody && s0 < s1, MBS_ERR_INTERNAL, "schur: bad segment");
  mbsSchur *s = calloc(1, sizeof *s);
  MBS_CHECK(s, MBS_ERR_NOMEM, "out of memory (schur segment)");
  mbsErr e = MBS_OK;
  s->s0 = s0, s->s1 = s1, s->nbody = s1 - s0;
  int n = s->nbody;
#define MBS_SALLOC(f, cnt)                                                                         \
  if (!e && !(s->f = calloc((size_t)(cnt) > 0 ? (size_t)(cnt) : 1, sizeof(*s->f))))                \
  e = mbs_errSet(MBS_ERR_NOMEM, "out of memory allocating the schur workspace")
  MBS_SALLOC(body_c0, n);
  MBS_SALLOC(body_nc, n);
  MBS_SALLOC(body_comp, n);
  MBS_SALLOC(psi_adr, n);
  MBS_SALLOC(th_adr, n);
  MBS_SALLOC(gam_adr, n);
  MBS_SALLOC(v_adr, n);
  MBS_SALLOC(v_w, n);
  MBS_SALLOC(v_c0, n);
  MBS_SALLOC(cur, n);
  MBS_SALLOC(Minv, 36 * (size_t)n);
  MBS_SALLOC(tn, 6 * (size_t)n);
  MBS_SALLOC(kind, n);
  MBS_SALLOC(rec_adr, n);
  MBS_SALLOC(Phi, 36 * (size_t)n);
  MBS_SALLOC(beta, 6 * (size_t)n);
  MBS_SALLOC(mode, n);
  MBS_SALLOC(initp, n);
  MBS_SALLOC(phi0_adr, n);
  MBS_SALLOC(onpath, n);
  MBS_SALLOC(selfinit, n);
  MBS_SALLOC(spk, 6 * (size_t)n);
  if (e) {
    mbs_schurDestroy(&s);
    return e;
  }

  // port columns of each subtree, bottom-up: internal children's columns, then own ports
  int nport = 0;
  for (int b = s1 - 1; b >= s0; b--) {
    int nc = 0;
    const int *ch = m->child_list + m->body_childadr[b];
    for (int k = 0; k < m->body_childnum[b]; k++) {
      int c = ch[k];
      if (c < s1)
        nc += s->body_nc[c - s0];
      else if (m->body_lamnum[c] > 0)
        nc += m->body_lamnum[c], nport++;
    }
    s->body_nc[b - s0] = nc;
  }
  // components (roots in increasing order) and column starts, top-down
  int ncomp = 0;
  for (int b = s0; b < s1; b++)
    if (m->body_parent[b] < s0) ncomp++;
  s->ncomp = ncomp, s->nport = nport;
  MBS_SALLOC(comp, ncomp);
  MBS_SALLOC(port_body, nport);
  MBS_SALLOC(port_cadr, nport + 1);
  MBS_SALLOC(spP, MBS_SPW * (size_t)ncomp);
  if (e) {
    mbs_schurDestroy(&s);
    return e;
  }
  int col = 0, k = 0;
  size_t csize = 0;
  for (int b = s0; b < s1; b++) {
    int lb = b - s0, p = m->body_parent[b];
    if (p < s0) {
      mbsSchurComp *cp = s->comp + k;
      cp->root = b;
      cp->up = p >= 0 && m->body_lamnum[b] > 0;
      cp->nup = cp->up ? m->body_lamnum[b] : 0;
      cp->c0 = col, cp->nc = s->body_nc[lb];
      cp->n = cp->nup + cp->nc;
      csize += (size_t)cp->n * (size_t)(cp->n + 1);
      s->body_c0[lb] = col, s->body_comp[lb] = k;
      col += s->body_nc[lb];
      k++;
    } else {
      s->body_comp[lb] = s->body_comp[p - s0];
    }
    // children's column starts in child order, own ports after them
    int at = s->body_c0[lb];
    const int *ch = m->child_list + m->body_childadr[b];
    for (int j = 0; j < m->body_childnum[b]; j++) {
      int c = ch[j];
      if (c < s1) {
        s->body_c0[c - s0] = at;
        at += s->body_nc[c - s0];
      }
    }
  }
  s->ncol = col;
  // the port list in column order: own ports follow the internal children's columns
  {
    int *tmpc = calloc((size_t)(nport > 0 ? nport : 1), sizeof(int));
    if (!tmpc) {
      mbs_schurDestroy(&s);
      return mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur ports)");
    }
    int q = 0;
    for (int b = s0; b < s1; b++) {
      int lb = b - s0, at = s->body_c0[lb];
      const int *ch = m->child_list + m->body_childadr[b];
      for (int j = 0; j < m->body_childnum[b]; j++)
        if (ch[j] < s1) at += s->body_nc[ch[j] - s0];
      for (int j = 0; j < m->body_childnum[b]; j++)
        if (mbs_schurIsPort(m, s, ch[j])) {
          s->port_body[q] = ch[j], tmpc[q] = at, q++;
          at += m->body_lamnum[ch[j]];
        }
    }
    for (int i = 1; i < nport; i++) // insertion sort by column: ports are few
      for (int j = i; j > 0 && tmpc[j - 1] > tmpc[j]; j--) {
        int t = tmpc[j];
        tmpc[j] = tmpc[j - 1], tmpc[j - 1] = t;
        t = s->port_body[j];
        s->port_body[j] = s->port_body[j - 1], s->port_body[j - 1] = t;
      }
    for (int i = 0; i < nport; i++) s->port_cadr[i] = tmpc[i];
    s->port_cadr[nport] = col;
    free(tmpc);
    for (int c = 0, q2 = 0; c < ncomp; c++) {
      mbsSchurComp *cp = s->comp + c;
      while (q2 < nport && s->port_cadr[q2] < cp->c0) q2++;
      cp->p0 = q2;
      while (q2 < nport && s->port_cadr[q2] < cp->c0 + cp->nc) q2++;
      cp->np = q2 - cp->p0;
    }
  }
  // inertia form: bodies whose subtree has no child outside the segment, below a parent in the
  // segment or the ground (the mode array holds "port-free" first)
  for (int b = s1 - 1; b >= s0; b--) {
    int pf = 1;
    const int *ch = m->child_list + m->body_childadr[b];
    for (int j = 0; j < m->body_childnum[b]; j++)
      if (ch[j] >= s1 || !s->mode[ch[j] - s0]) pf = 0;
    s->mode[b - s0] = (unsigned char)pf;
  }
  for (int b = s0; b < s1; b++) {
    int p = m->body_parent[b];
    if (p >= 0 && p < s0) s->mode[b - s0] = 0; // a root below another segment: its upper port
  }
  // spath: a path from a grounded root or a root below an upper port to the parent of the one
  // lower port runs in inertia form with the port's spikes
  for (int c = 0; c < ncomp; c++) {
    mbsSchurComp *cp = s->comp + c;
    int r = cp->root, pr = m->body_parent[r];
    if (cp->np != 1 || !(pr < 0 || cp->up)) continue;
    int last = m->body_parent[s->port_body[cp->p0]];
    if (cp->up && last == r) continue; // one body between two ports: the compliance form
    cp->spath = 1, cp->last = last;
    for (int b = last;; b = m->body_parent[b]) {
      if (b != r || pr < 0) s->mode[b - s0] = 1, s->onpath[b - s0] = 1;
      if (b == r) break;
    }
  }
  for (int b = s0; b < s1; b++) {
    int lb = b - s0, own = s->mode[lb];
    const int *ch = m->child_list + m->body_childadr[b];
    for (int j = 0; j < m->body_childnum[b]; j++)
      if (ch[j] < s1 && s->mode[ch[j] - s0]) own = 0;
    s->selfinit[lb] = (unsigned char)own;
  }
  int nphi0 = 0;
  for (int b = s0; b < s1; b++) {
    int lb = b - s0, big = -1;
    const int *ch = m->child_list + m->body_childadr[b];
    for (int j = 0; j < m->body_childnum[b]; j++)
      if (ch[j] < s1 && s->mode[ch[j] - s0] && ch[j] > big) big = ch[j];
    if (big >= 0) s->initp[big - s0] = 1;
    s->phi0_adr[lb] = (!s->mode[lb] && big >= 0) ? 36 * nphi0++ : -1;
  }
  // pool offsets: records, Psi (6 x nc), Theta (nc^2), gam (nc), V (lamnum x width)
  size_t rec = 0, psi = 0, th = 0, ga = 0, v = 0;
  for (int b = s0; b < s1; b++) {
    int lb = b - s0, nc = s->body_nc[lb], p = m->body_parent[b], l = m->body_lamnum[b];
    s->rec_adr[lb] = (int)rec;
    if (!s->mode[lb]) rec += (size_t)mbs_schurRecSize(l); // inertia form: the ABA record
    s->psi_adr[lb] = (int)psi, s->th_adr[lb] = (int)th, s->gam_adr[lb] = (int)ga;
    s->v_adr[lb] = (int)v;
    if (s->mode[lb]) { // inertia form (spath bodies too): no compliance-form port data
      s->v_c0[lb] = s->body_c0[lb], s->v_w[lb] = 0;
      continue;
    }
    psi += 6 * (size_t)nc, th += (size_t)nc * nc, ga += (size_t)nc;
    // V columns: from the parent's first column (internal) or the own subtree (ground root)
    int c0 = (p >= s0) ? s->body_c0[p - s0] : s->body_c0[lb];
    s->v_c0[lb] = c0;
    s->v_w[lb] = s->body_c0[lb] + nc - c0;
    v += (size_t)l * (size_t)s->v_w[lb];
  }
  MBS_SALLOC(rec, rec);
  MBS_SALLOC(Psi, psi);
  MBS_SALLOC(Theta, th);
  MBS_SALLOC(gam, ga);
  MBS_SALLOC(V, v);
  MBS_SALLOC(cpool, csize);
  MBS_SALLOC(Phi0, 36 * (size_t)nphi0);
#undef MBS_SALLOC
  if (e) {
    mbs_schurDestroy(&s);
    return e;
  }
  size_t at = 0;
  for (int c = 0; c < ncomp; c++) {
    mbsSchurComp *cp = s->comp + c;
    cp->C = s->cpool + at;
    at += (size_t)cp->n * cp->n;
    cp->g = s->cpool + at;
    at += (size_t)cp->n;
  }
  // model constants: inverse spatial inertias, the revolute joints' constraint directions
  for (int b = s0; b < s1; b++) {
    int lb = b - s0;
    mbsReal I6[36];
    mbsu_rbiFull(m->body_sinert + 10 * b, I6);
    if (!mbsu_cholFactor(I6, 6)) {
      mbs_schurDestroy(&s);
      return mbs_errSet(MBS_ERR_INPUT, "body %s: spatial inertia is not positive definite",
                        m->body_name[b]);
    }
    mbsu_cholInverse(I6, 6, s->Minv + 36 * lb);
    if (m->body_jnttype[b] == MBS_JNT_REVOLUTE) {
      mbsReal T[36];
      mbs_bodyComplement(m, NULL, b, T); // constant for revolute joints
      memcpy(s->tn + 6 * lb, T, 3 * sizeof(mbsReal));
      memcpy(s->tn + 6 * lb + 3, T + 6, 3 * sizeof(mbsReal));
      s->kind[lb] = 1;
    }
  }
  *out = s;
  return MBS_OK;
}

// ---------------------------------------------------------------- elimination

// The pivot block of joint c (child of b), generic joint: D (packed) = T^T Phi_c T + G^T Phi_b G,
// Y = Phi_b G (written into W, nl x 6 row-major = columns of Y), rho = T^T (c_c - beta_c) +
// G^T beta_b. Writes T and G for the port terms.
static void mbs_schurPivotGeneric(const mbsModel *m, const mbsWork *w, const mbsSchur *s, int c,
                                  const mbsReal *Phib, const mbsReal *betab, mbsReal *T, mbsReal *G,
                                  mbsReal *D, mbsReal *W, mbsReal *rho) {
  int lc = c - s->s0, nl = m->body_lamnum[c];
  mbsReal PT[36], d[6];
  mbs_schurT(m, w, s, c, T);
  mbs_schurG(w->xpar + 12 * c, T, nl, G);
  mbs_schurPhiG(Phib, G, nl, W);
  mbs_schurPhiG(s->Phi + 36 * lc, T, nl, PT);
  for (int i = 0; i < nl; i++)
    for (int j = 0; j <= i; j++)
      D[MBS_PK(i, j)] = mbsu_dot6(T + 6 * i, PT + 6 * j) + mbsu_dot6(G + 6 * i, W + 6 * j);
  for (int r = 0; r < 6; r++) d[r] = w->cacc[6 * c + r] - s->beta[6 * lc + r];
  for (int i = 0; i < nl; i++) rho[i] = mbsu_dot6(T + 6 * i, d) + mbsu_dot6(G + 6 * i, betab);
}

// The same for a revolute joint c: T = [n1 n2 0; 0 0 1], G = X^T T = [E^T n1, E^T n2, r x E^T;
// 0, 0, E^T] with X = (E, r); no generic 6 x 6 products.
static void mbs_schurPivotRevolute(const mbsWork *w, const mbsSchur *s, int c,
                                   const mbsReal *restrict Phib, const mbsReal *restrict betab,
                                   mbsReal *restrict G, mbsReal *restrict D, mbsReal *restrict W,
                                   mbsReal *restrict rho) {
  int lc = c - s->s0;
  const mbsReal *E = w->xpar + 12 * c, *r = E + 9, *n = s->tn + 6 * lc;
  const mbsReal *Pc = s->Phi + 36 * lc;
  // G columns: g0, g1 pure moments [E^T n_k; 0]; g(2+j) = [r x e_j; e_j], e_j = row j of E
  mbsReal u[2][3];
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < 3; i++)
      u[k][i] = E[i] * n[3 * k] + E[3 + i] * n[3 * k + 1] + E[6 + i] * n[3 * k + 2];
  for (int k = 0; k < 2; k++) {
    G[6 * k] = u[k][0], G[6 * k + 1] = u[k][1], G[6 * k + 2] = u[k][2];
    G[6 * k + 3] = G[6 * k + 4] = G[6 * k + 5] = 0;
  }
  for (int j = 0; j < 3; j++) {
    mbsReal *g = G + 6 * (2 + j);
    const mbsReal *e = E + 3 * j;
    g[0] = r[1] * e[2] - r[2] * e[1];
    g[1] = r[2] * e[0] - r[0] * e[2];
    g[2] = r[0] * e[1] - r[1] * e[0];
    g[3] = e[0], g[4] = e[1], g[5] = e[2];
  }
  // Y = Phi_b G into W (row k = column k of Y)
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < 6; i++)
      W[6 * k + i] = Phib[6 * i] * u[k][0] + Phib[6 * i + 1] * u[k][1] + Phib[6 * i + 2] * u[k][2];
  for (int k = 2; k < 5; k++) mbsu_mul6(Phib, G + 6 * k, W + 6 * k);
  // T^T Phi_c T: [n^T A n, n^T B; B^T n, C] with Phi_c = [A B; B^T C]
  mbsReal An[2][3], tpt[15];
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < 3; i++)
      An[k][i] = Pc[6 * i] * n[3 * k] + Pc[6 * i + 1] * n[3 * k + 1] + Pc[6 * i + 2] * n[3 * k + 2];
  tpt[MBS_PK(0, 0)] = mbsu_dot3(n, An[0]);
  tpt[MBS_PK(1, 0)] = mbsu_dot3(n + 3, An[0]);
  tpt[MBS_PK(1, 1)] = mbsu_dot3(n + 3, An[1]);
  for (int j = 0; j < 3; j++) { // rows 2..4: B^T n (Phi_c row 3 + j, angular columns), C
    const mbsReal *row = Pc + 6 * (3 + j);
    tpt[MBS_PK(2 + j, 0)] = row[0] * n[0] + row[1] * n[1] + row[2] * n[2];
    tpt[MBS_PK(2 + j, 1)] = row[0] * n[3] + row[1] * n[4] + row[2] * n[5];
    for (int i = 0; i <= j; i++) tpt[MBS_PK(2 + j, 2 + i)] = row[3 + i];
  }
  // D = T^T Phi_c T + G^T Y
  for (int i = 0; i < 5; i++)
    for (int j = 0; j <= i; j++) {
      const mbsReal *gi = G + 6 * i, *yj = W + 6 * j;
      mbsReal v = gi[0] * yj[0] + gi[1] * yj[1] + gi[2] * yj[2];
      if (i >= 2) v += gi[3] * yj[3] + gi[4] * yj[4] + gi[5] * yj[5];
      D[MBS_PK(i, j)] = tpt[MBS_PK(i, j)] + v;
    }
  // rho = T^T (c_c - beta_c) + G^T beta_b
  mbsReal d[6];
  for (int i = 0; i < 6; i++) d[i] = w->cacc[6 * c + i] - s->beta[6 * lc + i];
  rho[0] = mbsu_dot3(n, d) + mbsu_dot3(u[0], betab);
  rho[1] = mbsu_dot3(n + 3, d) + mbsu_dot3(u[1], betab);
  for (int j = 0; j < 3; j++) rho[2 + j] = d[3 + j] + mbsu_dot6(G + 6 * (2 + j), betab);
}

// Phi_b -= W^T W, beta_b -= W^T y for an nl x 6 W
static inline void mbs_schurUpdate(int nl, const mbsReal *restrict W, const mbsReal *restrict y,
                                   mbsReal *restrict Phib, mbsReal *restrict betab) {
  for (int r = 0; r < 6; r++) {
    for (int q = r; q < 6; q++) {
      mbsReal sum = 0;
      for (int i = 0; i < nl; i++) sum += W[6 * i + r] * W[6 * i + q];
      Phib[6 * r + q] -= sum;
      if (q != r) Phib[6 * q + r] = Phib[6 * r + q];
    }
    mbsReal sum = 0;
    for (int i = 0; i < nl; i++) sum += W[6 * i + r] * y[i];
    betab[r] -= sum;
  }
}

// absorb internal child c into its parent b (both in the segment); 0 if the pivot is singular
static int mbs_schurAbsorb(const mbsModel *m, const mbsWork *w, mbsSchur *s, int b, int c) {
  int lb = b - s->s0, lc = c - s->s0, nl = m->body_lamnum[c];
  int wb = s->cur[lb], ncc = s->body_nc[lc], ncf = s->body_nc[lb];
  mbsReal *Phib = s->Phi + 36 * lb, *betab = s->beta + 6 * lb;
  mbsReal *Psib = s->Psi + s->psi_adr[lb], *Thb = s->Theta + s->th_adr[lb];
  mbsReal *gamb = s->gam + s->gam_adr[lb];

  // the child's ports join the parent's block (columns wb .. wb + ncc), decoupled so far
  if (ncc > 0) {
    const mbsReal *Thc = s->Theta + s->th_adr[lc], *gamc = s->gam + s->gam_adr[lc];
    for (int i = 0; i < ncc; i++) {
      for (int j = 0; j < wb; j++) Thb[ncf * (wb + i) + j] = Thb[ncf * j + wb + i] = 0;
      for (int j = 0; j < ncc; j++) Thb[ncf * (wb + i) + wb + j] = Thc[ncc * i + j];
      gamb[wb + i] = gamc[i];
      for (int r = 0; r < 6; r++) Psib[6 * (wb + i) + r] = 0;
    }
    s->cur[lb] = wb + ncc;
  }
  if (nl == 0) return 1; // free joint: no constraint couples c to b
  MBS_FLOPS(
      mbs_flopSchurAbsorb(nl, s->kind[lc] == 1, mbs_flopSchurT(m, s, c), wb, ncc, s->v_w[lc]));

  mbsReal *rec = s->rec + s->rec_adr[lc];
  mbsReal *L = MBS_REC_L(rec, nl), *Wc = MBS_REC_W(rec, nl), *yc = MBS_REC_Y(rec);
  mbsReal T[36], G[36];
  if (s->kind[lc] == 1) {
    mbs_schurPivotRevolute(w, s, c, Phib, betab, G, L, Wc, yc);
    if (!mbs_cholPacked(L, 5)) return 0;
    mbs_fwdPacked(L, 5, yc);
    mbs_fwdPackedRows(L, 5, Wc, 6, 6);
    mbs_schurUpdate(5, Wc, yc, Phib, betab);
  } else {
    mbs_schurPivotGeneric(m, w, s, c, Phib, betab, T, G, L, Wc, yc);
    if (!mbs_cholPacked(L, nl)) return 0;
    mbs_fwdPacked(L, nl, yc);
    mbs_fwdPackedRows(L, nl, Wc, 6, 6);
    mbs_schurUpdate(nl, Wc, yc, Phib, betab);
  }
  int vw = s->v_w[lc];
  if (vw == 0) return 1;
  // ports: V = L^{-1} [G^T Psi_b | -T^T Psi_c]; Psi_b -= W^T V; Theta_b -= V^T V; gam_b += V^T y
  if (s->kind[lc] == 1) mbs_schurT(m, w, s, c, T);
  const mbsReal *Psic = s->Psi + s->psi_adr[lc];
  mbsReal *V = s->V + s->v_adr[lc];
  for (int i = 0; i < nl; i++) {
    for (int j = 0; j < wb; j++) V[vw * i + j] = mbsu_dot6(G + 6 * i, Psib + 6 * j);
    for (int j = 0; j < ncc; j++) V[vw * i + wb + j] = -mbsu_dot6(T + 6 * i, Psic + 6 * j);
  }
  mbs_fwdPackedRows(L, nl, V, vw, vw);
  for (int j = 0; j < vw; j++)
    for (int r = 0; r < 6; r++) {
      mbsReal sum = 0;
      for (int i = 0; i < nl; i++) sum += Wc[6 * i + r] * V[vw * i + j];
      Psib[6 * j + r] -= sum;
    }
  for (int a = 0; a < vw; a++) {
    for (int bb = 0; bb < vw; bb++) {
      mbsReal sum = 0;
      for (int i = 0; i < nl; i++) sum += V[vw * i + a] * V[vw * i + bb];
      Thb[ncf * a + bb] -= sum;
    }
    mbsReal sum = 0;
    for (int i = 0; i < nl; i++) sum += V[vw * i + a] * yc[i];
    gamb[a] += sum;
  }
  return 1;
}

// attach the lower port of outside child l to body b
static void mbs_schurAttach(const mbsModel *m, const mbsWork *w, mbsSchur *s, int b, int l) {
  int lb = b - s->s0, nl = m->body_lamnum[l], wb = s->cur[lb], ncf = s->body_nc[lb];
  mbsReal *Phib = s->Phi + 36 * lb, *betab = s->beta + 6 * lb;
  mbsReal *Psib = s->Psi + s->psi_adr[lb], *Thb = s->Theta + s->th_adr[lb];
  mbsReal *gamb = s->gam + s->gam_adr[lb];
  mbsReal T[36], G[36], Y[36];
  MBS_FLOPS(mbs_flopSchurAttach(nl, mbs_flopSchurT(m, s, l), wb));
  mbs_schurT(m, w, s, l, T);
  mbs_schurG(w->xpar + 12 * l, T, nl, G);
  mbs_schurPhiG(Phib, G, nl, Y);
  for (int i = 0; i < nl; i++) {
    // Theta: new-new G^T Phi G, new-old -G^T Psi (and its transpose)
    for (int j = 0; j < nl; j++) Thb[ncf * (wb + i) + wb + j] = mbsu_dot6(G + 6 * i, Y + 6 * j);
    for (int j = 0; j < wb; j++) {
      mbsReal v = -mbsu_dot6(G + 6 * i, Psib + 6 * j);
      Thb[ncf * (wb + i) + j] = v;
      Thb[ncf * j + wb + i] = v;
    }
    gamb[wb + i] = mbsu_dot6(G + 6 * i, betab);
  }
  for (int i = 0; i < nl; i++)
    for (int r = 0; r < 6; r++) Psib[6 * (wb + i) + r] = -Y[6 * i + r];
  s->cur[lb] = wb + nl;
}

// the condensed system of the component rooted at r
static int mbs_schurFinishComp(const mbsModel *m, const mbsWork *w, mbsSchur *s, int r) {
  int lr = r - s->s0, nl = m->body_lamnum[r], nc = s->body_nc[lr];
  mbsSchurComp *cp = s->comp + s->body_comp[lr];
  const mbsReal *Phir = s->Phi + 36 * lr, *betar = s->beta + 6 * lr;
  const mbsReal *Psir = s->Psi + s->psi_adr[lr], *Thr = s->Theta + s->th_adr[lr];
  const mbsReal *gamr = s->gam + s->gam_adr[lr];
  int n = cp->n;
  mbsReal T[36], PT[36] = {0}, d[6];
  MBS_FLOPS(mbs_flopSchurFinish(nl, mbs_flopSchurT(m, s, r), nc, cp->up, m->body_parent[r] < 0,
                                s->v_w[lr]));
  if (nl > 0) {
    mbs_schurT(m, w, s, r, T);
    mbs_schurPhiG(Phir, T, nl, PT);
  }
  for (int r6 = 0; r6 < 6; r6++) d[r6] = w->cacc[6 * r + r6] - betar[r6];
  if (cp->up) {
    // [T^T Phi T, T^T Psi; Psi^T T, Theta], [T^T (c - beta); gam]
    mbs_schurAtB(T, nl, PT, nl, cp->C, n, 0);
    for (int i = 0; i < nl; i++) {
      for (int j = 0; j < nc; j++) {
        mbsReal v = mbsu_dot6(T + 6 * i, Psir + 6 * j);
        cp->C[n * i + nl + j] = v, cp->C[n * (nl + j) + i] = v;
      }
      cp->g[i] = mbsu_dot6(T + 6 * i, d);
    }
    for (int i = 0; i < nc; i++) {
      for (int j = 0; j < nc; j++) cp->C[n * (nl + i) + nl + j] = Thr[nc * i + j];
      cp->g[nl + i] = gamr[i];
    }
    return 1;
  }
  for (int i = 0; i < nc; i++) {
    for (int j = 0; j < nc; j++) cp->C[n * i + j] = Thr[nc * i + j];
    cp->g[i] = gamr[i];
  }
  if (nl <= 0 || m->body_parent[r] >= 0) return 1; // free joint: nothing to eliminate
  // joint to the ground: absorb into the ground (Phi = 0, beta = a0_g): W = 0
  mbsReal a0g[6], G[36];
  mbs_baseAccel(m, !w->homog, a0g);
  mbs_schurG(w->xpar + 12 * r, T, nl, G);
  mbsReal *rec = s->rec + s->rec_adr[lr];
  mbsReal *L = MBS_REC_L(rec, nl), *yc = MBS_REC_Y(rec), *V = s->V + s->v_adr[lr];
  for (int i = 0; i < nl; i++)
    for (int j = 0; j <= i; j++) L[MBS_PK(i, j)] = mbsu_dot6(T + 6 * i, PT + 6 * j);
  if (!mbs_cholPacked(L, nl)) return 0;
  memset(MBS_REC_W(rec, nl), 0, 6 * (size_t)nl * sizeof(mbsReal));
  for (int i = 0; i < nl; i++) yc[i] = mbsu_dot6(T + 6 * i, d) + mbsu_dot6(G + 6 * i, a0g);
  mbs_fwdPacked(L, nl, yc);
  int vw = s->v_w[lr];
  if (vw > 0) {
    for (int i = 0; i < nl; i++)
      for (int j = 0; j < vw; j++) V[vw * i + j] = -mbsu_dot6(T + 6 * i, Psir + 6 * j);
    mbs_fwdPackedRows(L, nl, V, vw, vw);
    for (int a = 0; a < vw; a++) {
      for (int bb = 0; bb < vw; bb++) {
        mbsReal sum = 0;
        for (int i = 0; i < nl; i++) sum += V[vw * i + a] * V[vw * i + bb];
        cp->C[n * a + bb] -= sum;
      }
      mbsReal sum = 0;
      for (int i = 0; i < nl; i++) sum += V[vw * i + a] * yc[i];
      cp->g[a] += sum;
    }
  }
  return 1;
}

static void mbs_schurSubParentWrench(const mbsModel *m, const mbsWork *w, const mbsSchur *s, int c,
                                     const mbsReal *lam, mbsReal *f);

// spath (docs/formulation.md 4.6): at the path's last body, before its pass 2: the spike P =
// G_l of the port l (its force -G_l pi on last), Theta = 0, gam = 0 (kept in the root's Theta and
// gam), and the port joint's known force in last's articulated bias
static void mbs_schurSpathStart(const mbsModel *m, mbsWork *w, mbsSchur *s,
                                const mbsSchurComp *cp) {
  int l = s->port_body[cp->p0], nl = m->body_lamnum[l];
  mbsReal T[36], G[36], f[6], t[6], *sw = s->spP + MBS_SPW * (cp - s->comp);
  MBS_FLOPS(mbs_flopSpathStart(nl, mbs_flopSchurT(m, s, l), m->body_dofnum[l]));
  mbs_schurT(m, w, s, l, T);
  mbs_schurG(w->xpar + 12 * l, T, nl, G);
  memset(sw, 0, MBS_SPW * sizeof(mbsReal));
  for (int q = 0; q < nl; q++)
    for (int r = 0; r < 6; r++) sw[MBS_SPIKE_LD * r + q] = G[6 * q + r];
  mbs_schurKnownWrench(m, w, l, f);
  mbsu_xTForce(w->xpar + 12 * l, f, t);
  mbsReal *pA = w->abar + (size_t)MBS_ABAR * cp->last + MBS_ABAR_PA;
  for (int r = 0; r < 6; r++) pA[r] += t[r];
}

// spath with a grounded root, after the root's spike (P now in ground coordinates): gam +=
// P^T a0_ground; the port system is C = Theta, g = gam
static void mbs_schurSpathGround(const mbsModel *m, const mbsWork *w, mbsSchur *s,
                                 mbsSchurComp *cp) {
  int n = cp->n;
  const mbsReal *sw = s->spP + MBS_SPW * (cp - s->comp), *Th = sw + MBS_SPW_TH,
                *ga = sw + MBS_SPW_GA;
  mbsReal a0g[6];
  mbs_baseAccel(m, !w->homog, a0g);
  MBS_FLOPS(mbs_flopSpathGround(n));
  for (int i = 0; i < n; i++) {
    mbsReal v = ga[i];
    for (int r = 0; r < 6; r++) v += sw[MBS_SPIKE_LD * r + i] * a0g[r];
    for (int j = 0; j < n; j++) cp->C[n * i + j] = Th[MBS_SPIKE_LD * i + j];
    cp->g[i] = v;
  }
}

// spath below an upper port, at the root (Phi, beta: (I^A)^{-1} and its free acceleration with
// pi = 0): Psi = -Phi P, Theta += P^T Phi P, gam += P^T beta; mbs_schurFinishComp assembles
static void mbs_schurSpathUp(mbsSchur *s, const mbsSchurComp *cp) {
  int lr = cp->root - s->s0, nc = cp->nc;
  const mbsReal *sw = s->spP + MBS_SPW * (cp - s->comp), *Phi = s->Phi + 36 * lr,
                *beta = s->beta + 6 * lr;
  mbsReal *Psi = s->Psi + s->psi_adr[lr], *Th = s->Theta + s->th_adr[lr],
          *ga = s->gam + s->gam_adr[lr], P[36];
  MBS_FLOPS(mbs_flopSpathUp(nc));
  for (int j = 0; j < nc; j++) {
    for (int r = 0; r < 6; r++) P[6 * j + r] = sw[MBS_SPIKE_LD * r + j];
    mbsu_mul6(Phi, P + 6 * j, Psi + 6 * j);
    for (int r = 0; r < 6; r++) Psi[6 * j + r] = -Psi[6 * j + r];
    ga[j] = sw[MBS_SPW_GA + j] + mbsu_dot6(P + 6 * j, beta);
  }
  for (int i = 0; i < nc; i++)
    for (int j = 0; j <= i; j++) {
      mbsReal v = -0.5 * (mbsu_dot6(P + 6 * i, Psi + 6 * j) + mbsu_dot6(P + 6 * j, Psi + 6 * i));
      Th[nc * i + j] = sw[MBS_SPW_TH + MBS_SPIKE_LD * i + j] + v;
      Th[nc * j + i] = Th[nc * i + j];
    }
}

mbsErr mbs_schurFactor(const mbsModel *m, mbsWork *w, mbsSchur *s) {
  for (int b = s->s1 - 1; b >= s->s0; b--) {
    int lb = b - s->s0;
    const int *ch = m->child_list + m->body_childadr[b];
    int nch = m->body_childnum[b];
    if (s->mode[lb]) { // inertia form: ABA's pass 2 (pass 1 just before a record is first used)
      if (s->selfinit[lb]) mbs_abaBodyInit(m, w, b);
      if (s->initp[lb]) mbs_abaBodyInit(m, w, m->body_parent[b]);
      mbsSchurComp *cp = s->comp + s->body_comp[lb];
      if (s->onpath[lb] && b == cp->last) mbs_schurSpathStart(m, w, s, cp);
      if (mbs_abaBodyBack(m, w, b) < 0) return MBS_ERR_NUMERIC;
      if (s->onpath[lb]) {
        mbsReal *sw = s->spP + MBS_SPW * s->body_comp[lb];
        mbs_abaSpike(m, w, b, sw, sw + MBS_SPW_TH, sw + MBS_SPW_GA);
        if (b == cp->root) mbs_schurSpathGround(m, w, s, cp);
      }
      continue;
    }
    const mbsReal *bias = w->cbias + 6 * b, *Mb = s->Minv + 36 * lb;
    if (s->phi0_adr[lb] >= 0) { // with inertia-form children: (I^A)^{-1} and pA of the record
      const mbsReal *R = w->abar + (size_t)MBS_ABAR * b;
      mbsReal IA[36], *P0 = s->Phi0 + s->phi0_adr[lb];
      mbsu_sym6ToFull(R, IA);
      if (!mbsu_cholFactor(IA, 6))
        return mbs_errSet(MBS_ERR_NUMERIC, "schur: articulated inertia of body %s is singular",
                          m->body_name[b]);
      mbsu_cholInverse(IA, 6, P0);
      bias = R + MBS_ABAR_PA, Mb = P0;
    }
    mbsReal *rec = s->rec + s->rec_adr[lb], *kw = MBS_REC_KW(rec);
    // known wrench: own joint force - bias - the compliance-form children's known joint forces
    // (the inertia-form children's are in pA)
    mbsReal wk[6], f[6], t[6];
    mbs_schurKnownWrench(m, w, b, kw);
    MBS_FLOPS(mbs_flopSchurStart(s->phi0_adr[lb] >= 0, m->body_dofnum[b]));
    for (int r = 0; r < 6; r++) wk[r] = kw[r] - bias[r];
    if (w->fext_on && s->phi0_adr[lb] < 0) { // external wrenches (a record's pA has them already)
      for (int r = 0; r < 6; r++) wk[r] += w->fext[6 * b + r];
      MBS_FLOPS(6);
    }
    for (int k = 0; k < nch; k++) {
      int c = ch[k];
      const mbsReal *fc = f;
      if (c < s->s1) {
        if (s->mode[c - s->s0]) continue;
        fc = MBS_REC_KW(s->rec + s->rec_adr[c - s->s0]);
      } else {
        mbs_schurKnownWrench(m, w, c, f);
      }
      mbsu_xTForce(w->xpar + 12 * c, fc, t);
      MBS_FLOPS(MBS_FL_SCHUR_KID + (c < s->s1 ? 0 : mbs_flopSchurKnown(m->body_dofnum[c])));
      for (int r = 0; r < 6; r++) wk[r] -= t[r];
    }
    mbsu_mul6(Mb, wk, MBS_REC_A0(rec));
    memcpy(s->beta + 6 * lb, MBS_REC_A0(rec), 6 * sizeof(mbsReal));
    memcpy(s->Phi + 36 * lb, Mb, 36 * sizeof(mbsReal));
    s->cur[lb] = 0;
    if (s->comp[s->body_comp[lb]].spath) mbs_schurSpathUp(s, s->comp + s->body_comp[lb]);
    for (int k = 0; k < nch; k++)
      if (ch[k] < s->s1 && !s->mode[ch[k] - s->s0] && !mbs_schurAbsorb(m, w, s, b, ch[k]))
        return mbs_errSet(MBS_ERR_NUMERIC,
                          "schur: pivot block of joint %s is not positive definite",
                          m->body_name[ch[k]]);
    for (int k = 0; k < nch; k++)
      if (mbs_schurIsPort(m, s, ch[k])) mbs_schurAttach(m, w, s, b, ch[k]);
    if (m->body_parent[b] < s->s0 && !mbs_schurFinishComp(m, w, s, b))
      return mbs_errSet(MBS_ERR_NUMERIC, "schur: pivot block of joint %s is not positive definite",
                        m->body_name[b]);
  }
  return MBS_OK;
}

// ---------------------------------------------------------------- back-substitution

void mbs_schurQdd(const mbsModel *m, mbsWork *w, int b, const mbsReal *ap) {
  int nd = m->body_dofnum[b], da = m->body_dofadr[b];
  if (nd == 0) return;
  MBS_FLOPS(mbs_flopSchurQdd(nd));
  mbsReal t[6], d[6], sd[6], SS[36];
  const mbsReal *S = w->sdof + 6 * da;
  mbsu_xMotion(w->xpar + 12 * b, ap, t);
  for (int i = 0; i < 6; i++) d[i] = w->acc[6 * b + i] - t[i] - w->cacc[6 * b + i];
  if (nd == 1) {
    w->qdd[da] = mbsu_dot6(S, d) / mbsu_dot6(S, S);
    return;
  }
  for (int i = 0; i < nd; i++) {
    sd[i] = mbsu_dot6(S + 6 * i, d);
    for (int j = 0; j < nd; j++) SS[nd * i + j] = mbsu_dot6(S + 6 * i, S + 6 * j);
  }
  if (mbsu_cholFactor(SS, nd)) mbsu_cholSolve(SS, nd, sd);
  for (int i = 0; i < nd; i++) w->qdd[da + i] = sd[i];
}

// f -= X^T (T lam) for joint c: the wrench its constraint force puts on the parent
static void mbs_schurSubParentWrench(const mbsModel *m, const mbsWork *w, const mbsSchur *s, int c,
                                     const mbsReal *lam, mbsReal *f) {
  int nl = m->body_lamnum[c];
  mbsReal tl[6] = {0, 0, 0, 0, 0, 0}, t[6];
  MBS_FLOPS(mbs_flopSchurSubWrench(nl, mbs_schurCached(s, c), mbs_flopSchurT(m, s, c)));
  if (c >= s->s0 && c < s->s1 && s->kind[c - s->s0] == 1) {
    const mbsReal *n = s->tn + 6 * (c - s->s0);
    for (int i = 0; i < 3; i++) tl[i] = n[i] * lam[0] + n[3 + i] * lam[1];
    tl[3] = lam[2], tl[4] = lam[3], tl[5] = lam[4];
  } else {
    mbsReal T[36];
    mbs_schurT(m, w, s, c, T);
    for (int k = 0; k < nl; k++)
      for (int r = 0; r < 6; r++) tl[r] += T[6 * k + r] * lam[k];
  }
  mbsu_xTForce(w->xpar + 12 * c, tl, t);
  for (int r = 0; r < 6; r++) f[r] -= t[r];
}

void mbs_schurBack(const mbsModel *m, mbsWork *w, mbsSchur *s, const mbsReal *lam_up,
                   const mbsReal *lam_low, const int *first, int lim) {
  mbsReal a0g[6];
  mbs_baseAccel(m, !w->homog, a0g);
  // the roots' lambda: given (upper port) or from the ground pivot
  for (int k = 0, at = 0; k < s->ncomp; k++) {
    mbsSchurComp *cp = s->comp + k;
    int r = cp->root, lr = r - s->s0, nl = m->body_lamnum[r];
    mbsReal *lam = w->lam + m->body_lamadr[r];
    if (cp->up) {
      memcpy(lam, lam_up + at, (size_t)nl * sizeof(mbsReal));
      at += nl;
    } else if (nl > 0 && m->body_parent[r] < 0 && !s->mode[lr]) {
      const mbsReal *V = s->V + s->v_adr[lr], *rec = s->rec + s->rec_adr[lr];
      int vw = s->v_w[lr], vc = s->v_c0[lr];
      MBS_FLOPS(mbs_flopSchurLamRoot(nl, vw));
      for (int i = 0; i < nl; i++) {
        mbsReal v = MBS_REC_Y(rec)[i];
        for (int j = 0; j < vw; j++) v += V[vw * i + j] * lam_low[vc + j];
        lam[i] = v;
      }
      mbs_bwdPacked(MBS_REC_L(rec, nl), nl, lam);
    }
  }
  // spath components: the spikes p = P pi of the path's bodies, from the port up
  for (int k = 0; k < s->ncomp; k++) {
    const mbsSchurComp *cp = s->comp + k;
    if (!cp->spath) continue;
    int l = s->port_body[cp->p0], nl = m->body_lamnum[l];
    const mbsReal *pi = lam_low + s->port_cadr[cp->p0];
    mbsReal T[36], G[36], p[6] = {0, 0, 0, 0, 0, 0};
    MBS_FLOPS(mbs_flopSpathVec(nl, mbs_flopSchurT(m, s, l)));
    mbs_schurT(m, w, s, l, T);
    mbs_schurG(w->xpar + 12 * l, T, nl, G);
    for (int j = 0; j < nl; j++)
      for (int r = 0; r < 6; r++) p[r] += G[6 * j + r] * pi[j];
    for (int b = cp->last;; b = m->body_parent[b]) {
      memcpy(s->spk + 6 * (b - s->s0), p, sizeof p);
      if (b == cp->root) break;
      mbs_abaSpikeVec(m, w, b, p);
    }
  }
  // top-down: children's lambda from the parent's open wrench, then the body's acceleration
  for (int b = s->s0; b < s->s1; b++) {
    int lb = b - s->s0, nl = m->body_lamnum[b], p = m->body_parent[b];
    if (first && first[b] > lim) continue; // not needed, nor is its subtree
    if (s->mode[lb]) { // inertia form: ABA's pass 3, then lambda = T^T (joint wrench)
      if (s->onpath[lb])
        mbs_abaBodyFwdSpike(m, w, b, p < 0 ? a0g : w->acc + 6 * p, s->spk + 6 * lb);
      else
        mbs_abaBodyFwd(m, w, b, p < 0 ? a0g : w->acc + 6 * p);
      if (w->homog) continue; // a loop layer's unit solve: the accelerations alone
      const mbsReal *jf = w->jfrc + 6 * b;
      mbsReal *lam = w->lam + m->body_lamadr[b];
      MBS_FLOPS(mbs_flopSchurLamInertia(nl, s->kind[lb] == 1, mbs_flopSchurT(m, s, b)));
      if (s->kind[lb] == 1) {
        const mbsReal *n = s->tn + 6 * lb;
        lam[0] = mbsu_dot3(n, jf), lam[1] = mbsu_dot3(n + 3, jf);
        lam[2] = jf[3], lam[3] = jf[4], lam[4] = jf[5];
      } else if (nl > 0) {
        mbsReal T[36];
        mbs_schurT(m, w, s, b, T);
        for (int k = 0; k < nl; k++) lam[k] = mbsu_dot6(T + 6 * k, jf);
      }
      continue;
    }
    const mbsReal *rec = s->rec + s->rec_adr[lb];
    mbsReal f[6] = {0, 0, 0, 0, 0, 0}, t6[6];
    const mbsReal *lam = w->lam + m->body_lamadr[b];
    MBS_FLOPS(mbs_flopSchurAcc(nl, s->kind[lb] == 1, mbs_flopSchurT(m, s, b)));
    if (nl > 0) { // T lam
      if (s->kind[lb] == 1) {
        const mbsReal *n = s->tn + 6 * lb;
        for (int i = 0; i < 3; i++) f[i] = n[i] * lam[0] + n[3 + i] * lam[1];
        f[3] = lam[2], f[4] = lam[3], f[5] = lam[4];
      } else {
        mbsReal T[36];
        mbs_schurT(m, w, s, b, T);
        for (int k = 0; k < nl; k++)
          for (int r = 0; r < 6; r++) f[r] += T[6 * k + r] * lam[k];
      }
    }
    // joint wrench F tau + T lam
    mbsReal *jf = w->jfrc + 6 * b;
    for (int r = 0; r < 6; r++) jf[r] = MBS_REC_KW(rec)[r] + f[r];
    const int *ch = m->child_list + m->body_childadr[b];
    int nch = m->body_childnum[b];
    // the lower ports' wrenches were open when the children were absorbed
    for (int k = 0; k < nch; k++) {
      int l = ch[k];
      if (!mbs_schurIsPort(m, s, l)) continue;
      int q = 0;
      while (s->port_body[q] != l) q++;
      mbs_schurSubParentWrench(m, w, s, l, lam_low + s->port_cadr[q], f);
    }
    // internal children in reverse absorption order: L^T lam_c = y + W f + V pi
    for (int k = nch - 1; k >= 0; k--) {
      int c = ch[k];
      if (c >= s->s1) continue;
      int lc = c - s->s0, ncl = m->body_lamnum[c];
      if (ncl == 0 || s->mode[lc]) continue; // inertia-form children: after this body
      mbsReal *lamc = w->lam + m->body_lamadr[c];
      const mbsReal *rc = s->rec + s->rec_adr[lc], *Wc = MBS_REC_W(rc, ncl), *yc = MBS_REC_Y(rc);
      for (int i = 0; i < ncl; i++) lamc[i] = yc[i] + mbsu_dot6(Wc + 6 * i, f);
      int vw = s->v_w[lc];
      MBS_FLOPS(mbs_flopSchurLam(ncl, vw));
      if (vw > 0) {
        const mbsReal *V = s->V + s->v_adr[lc], *pi = lam_low + s->v_c0[lc];
        for (int i = 0; i < ncl; i++)
          for (int j = 0; j < vw; j++) lamc[i] += V[vw * i + j] * pi[j];
      }
      mbs_bwdPacked(MBS_REC_L(rc, ncl), ncl, lamc);
      mbs_schurSubParentWrench(m, w, s, c, lamc, f);
    }
    // a spath root below an upper port: its inertia-form child's pA is short of the spike
    MBS_FLOPS(s->comp[s->body_comp[lb]].spath && b == s->comp[s->body_comp[lb]].root ? 6 : 0);
    if (s->comp[s->body_comp[lb]].spath && b == s->comp[s->body_comp[lb]].root)
      for (int r = 0; r < 6; r++) f[r] -= s->spk[6 * lb + r];
    // a_b = M_b w_b + a0_b with the body's total constraint wrench (M_b: the starting compliance)
    mbsu_mul6(mbs_schurPhi0(s, lb), f, t6);
    for (int r = 0; r < 6; r++) w->acc[6 * b + r] = t6[r] + MBS_REC_A0(rec)[r];
    if (p < 0)
      mbs_schurQdd(m, w, b, a0g);
    else if (p >= s->s0)
      mbs_schurQdd(m, w, b, w->acc + 6 * p);
  }
}

// ---------------------------------------------------------------- serial driver

mbsErr mbs_schurSolveSegments(const mbsModel *m, mbsWork *w, mbsSchur **seg, int nseg) {
  // interface unknowns: every upper port (each cut joint is exactly one component's upper port)
  int *off = malloc(sizeof(int) * (size_t)m->nbody);
  MBS_CHECK(off, MBS_ERR_NOMEM, "out of memory (schur driver)");
  int n = 0;
  for (int b = 0; b < m->nbody; b++) off[b] = -1;
  for (int k = 0; k < nseg; k++) {
    MBS_CALL(mbs_schurFactor(m, w, seg[k]));
    for (int c = 0; c < seg[k]->ncomp; c++)
      if (seg[k]->comp[c].up) off[seg[k]->comp[c].root] = n, n += seg[k]->comp[c].nup;
  }
  mbsReal *K = calloc((size_t)n * n + 1, sizeof(mbsReal)),
          *x = calloc((size_t)n + 1, sizeof(mbsReal));
  mbsReal *low = NULL, *up = NULL;
  if (!K || !x) {
    free(off), free(K), free(x);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur driver)");
  }
  // assemble: the component's port ordering is [upper; lower ports in column order]
  int *map = malloc(sizeof(int) * (size_t)(m->nlam + 1));
  for (int k = 0; k < nseg; k++) {
    mbsSchur *s = seg[k];
    for (int c = 0; c < s->ncomp; c++) {
      mbsSchurComp *cp = s->comp + c;
      int at = 0;
      for (int i = 0; i < cp->nup; i++) map[at++] = off[cp->root] + i;
      for (int q = cp->p0; q < cp->p0 + cp->np; q++)
        for (int i = 0; i < m->body_lamnum[s->port_body[q]]; i++)
          map[at++] = off[s->port_body[q]] + i;
      for (int i = 0; i < cp->n; i++) {
        x[map[i]] += cp->g[i];
        for (int j = 0; j < cp->n; j++) K[(size_t)n * map[i] + map[j]] += cp->C[cp->n * i + j];
      }
    }
  }
  free(map);
  // dense Cholesky of the interface system (the same pivot floor as the distributed merges)
  mbsReal dummy = 0;
  mbsReal *sol = calloc((size_t)n + 1, sizeof(mbsReal));
  if (!sol || (n > 0 && !mbs_schurReduce(0, n, K, x, &dummy, &dummy, NULL))) {
    free(off), free(K), free(x), free(sol);
    return sol ? mbs_errSet(MBS_ERR_NUMERIC, "schur: the cut-joint system is not finite")
               : mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur driver)");
  }
  if (n > 0) mbs_schurExpand(0, n, K, x, NULL, sol);
  memcpy(x, sol, sizeof(mbsReal) * (size_t)n);
  free(sol);
  // back-substitute every segment in order (parents' segments first), then the roots' qdd
  for (int k = 0; k < nseg; k++) {
    mbsSchur *s = seg[k];
    up = calloc((size_t)m->nlam + 1, sizeof(mbsReal));
    low = calloc((size_t)s->ncol + 1, sizeof(mbsReal));
    if (!up || !low) {
      free(up), free(low), free(off), free(K), free(x);
      return mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur driver)");
    }
    int at = 0;
    for (int c = 0; c < s->ncomp; c++)
      for (int i = 0; i < s->comp[c].nup; i++) up[at++] = x[off[s->comp[c].root] + i];
    for (int q = 0; q < s->nport; q++)
      for (int i = 0; i < m->body_lamnum[s->port_body[q]]; i++)
        low[s->port_cadr[q] + i] = x[off[s->port_body[q]] + i];
    mbs_schurBack(m, w, s, up, low, NULL, 0);
    free(up), free(low);
  }
  for (int k = 0; k < nseg; k++)
    for (int c = 0; c < seg[k]->ncomp; c++) {
      int r = seg[k]->comp[c].root, p = m->body_parent[r];
      if (p >= 0) mbs_schurQdd(m, w, r, w->acc + 6 * p);
    }
  free(off), free(K), free(x);
  return MBS_OK;
}

// ---------------------------------------------------------------- dense port systems

int mbs_schurReduce(int nk, int ne, mbsReal *C, mbsReal *g, mbsReal *S, mbsReal *sg, int *nfloor) {
  int n = nk + ne;
  MBS_FLOPS(mbs_flopSchurReduce(nk, ne));
  // the pivot floor: a port system is positive semidefinite up to rounding that grows with the
  // length of the pieces it condenses (docs/formulation.md, 4.7); pivots below the floor are
  // raised to it (or to their own magnitude, the rounding level they show)
  mbsReal smax = 0;
  for (int j = nk; j < n; j++)
    if (fabs(C[(size_t)n * j + j]) > smax) smax = fabs(C[(size_t)n * j + j]);
  const mbsReal floor_ = MBS_SCHUR_PIVOT_FLOOR * smax;
  // Cholesky of C_ee in place (rows/columns nk..n-1, lower triangle)
  for (int j = nk; j < n; j++) {
    mbsReal d = C[(size_t)n * j + j];
    for (int l = nk; l < j; l++) d -= C[(size_t)n * j + l] * C[(size_t)n * j + l];
    if (!isfinite(d) || !(smax > 0)) return 0;
    if (d <= floor_) {
      d = fabs(d) > floor_ ? fabs(d) : floor_;
      if (nfloor) (*nfloor)++;
    }
    d = sqrt(d);
    C[(size_t)n * j + j] = d;
    for (int i = j + 1; i < n; i++) {
      mbsReal v = C[(size_t)n * i + j];
      for (int l = nk; l < j; l++) v -= C[(size_t)n * i + l] * C[(size_t)n * j + l];
      C[(size_t)n * i + j] = v / d;
    }
  }
  // Z = L^{-1} C_ek (rows nk..n-1, columns 0..nk-1), z = L^{-1} g_e
  for (int i = nk; i < n; i++) {
    mbsReal inv = 1 / C[(size_t)n * i + i];
    for (int c = 0; c < nk; c++) {
      mbsReal v = C[(size_t)n * i + c];
      for (int l = nk; l < i; l++) v -= C[(size_t)n * i + l] * C[(size_t)n * l + c];
      C[(size_t)n * i + c] = v * inv;
    }
    mbsReal v = g[i];
    for (int l = nk; l < i; l++) v -= C[(size_t)n * i + l] * g[l];
    g[i] = v * inv;
  }
  for (int a = 0; a < nk; a++) {
    for (int b = 0; b < nk; b++) {
      mbsReal v = C[(size_t)n * a + b];
      for (int l = nk; l < n; l++) v -= C[(size_t)n * l + a] * C[(size_t)n * l + b];
      S[nk * a + b] = v;
    }
    mbsReal v = g[a];
    for (int l = nk; l < n; l++) v -= C[(size_t)n * l + a] * g[l];
    sg[a] = v;
  }
  return 1;
}

void mbs_schurExpand(int nk, int ne, const mbsReal *C, const mbsReal *g, const mbsReal *xk,
                     mbsReal *xe) {
  int n = nk + ne;
  MBS_FLOPS(mbs_flopSchurExpand(nk, ne));
  for (int i = 0; i < ne; i++) {
    mbsReal v = g[nk + i];
    for (int c = 0; c < nk; c++) v -= C[(size_t)n * (nk + i) + c] * xk[c];
    xe[i] = v;
  }
  for (int i = ne - 1; i >= 0; i--) {
    mbsReal v = xe[i];
    for (int l = i + 1; l < ne; l++) v -= C[(size_t)n * (nk + l) + nk + i] * xe[l];
    xe[i] = v / C[(size_t)n * (nk + i) + nk + i];
  }
}

int mbs_schurPairMerge(const mbsSchurPair *a, const mbsSchurPair *b, mbsSchurPair *out,
                       int *nfloor) {
  if (a->na < 0) {
    *out = *b;
    return 1;
  }
  if (b->na < 0) {
    *out = *a;
    return 1;
  }
  // assemble over [A, B, S] (S eliminated last), then reduce
  int na = a->na, ns = a->nb, nb = b->nb, n = na + nb + ns, nk = na + nb;
  int la = a->na + a->nb, lb = b->na + b->nb;
  MBS_FLOPS(mbs_flopSchurAdd(la) + mbs_flopSchurAdd(lb));
  mbsReal M[18 * 18], gm[18];
  memset(M, 0, sizeof(mbsReal) * (size_t)n * n);
  int ia[12], ib[12]; // positions in the joint ordering
  for (int i = 0; i < na; i++) ia[i] = i;
  for (int i = 0; i < ns; i++) ia[na + i] = nk + i, ib[i] = nk + i;
  for (int i = 0; i < nb; i++) ib[ns + i] = na + i;
  for (int i = 0; i < n; i++) gm[i] = 0;
  for (int i = 0; i < la; i++) {
    gm[ia[i]] += a->g[i];
    for (int j = 0; j < la; j++) M[n * ia[i] + ia[j]] += a->C[la * i + j];
  }
  for (int i = 0; i < lb; i++) {
    gm[ib[i]] += b->g[i];
    for (int j = 0; j < lb; j++) M[n * ib[i] + ib[j]] += b->C[lb * i + j];
  }
  out->na = na, out->nb = nb;
  return mbs_schurReduce(nk, ns, M, gm, out->C, out->g, nfloor);
}

void mbs_schurPairPack(const mbsSchurPair *p, double *buf) {
  memset(buf, 0, sizeof(double) * MBS_SCHUR_PAIR_DOUBLES);
  buf[0] = p->na, buf[1] = p->nb;
  int n = p->na < 0 ? 0 : p->na + p->nb;
  memcpy(buf + 2, p->C, sizeof(double) * (size_t)n * n);
  memcpy(buf + 2 + n * n, p->g, sizeof(double) * (size_t)n);
}

void mbs_schurPairUnpack(const double *buf, mbsSchurPair *p) {
  p->na = (int)buf[0], p->nb = (int)buf[1];
  int n = p->na < 0 ? 0 : p->na + p->nb;
  memcpy(p->C, buf + 2, sizeof(double) * (size_t)n * n);
  memcpy(p->g, buf + 2 + n * n, sizeof(double) * (size_t)n);
}

// ---------------------------------------------------------------- a rank's segments joined

void mbs_schurRankDestroy(mbsSchurRank **pr) {
  if (!pr || !*pr) return;
  mbsSchurRank *r = *pr;
  for (int t = 0; t < r->nseg; t++) {
    if (r->seg) mbs_schurDestroy(&r->seg[t]); // NULL: its allocation failed
    if (r->lam_up) free(r->lam_up[t]);
    if (r->lam_low) free(r->lam_low[t]);
  }
  free(r->seg), free(r->sc), free(r->pool), free(r->ipool), free(r->lam_up), free(r->lam_low);
  free(r->view.comp), free(r->view.port_body), free(r->view.port_cadr);
  free(r->pmark), free(r->pinit), free(r->plist);
  free(r);
  *pr = NULL;
}

// the segment-component whose segment holds body b (sc sorted by root; b in [b0, b1))
static int mbs_schurScOf(const mbsSchurRank *r, int b) {
  int t = 0;
  while (t + 1 < r->nseg && r->seg[t + 1]->s0 <= b) t++;
  const mbsSchur *s = r->seg[t];
  int c = s->body_comp[b - s->s0], k = 0;
  while (!(r->sc[k].seg == t && r->sc[k].comp == c)) k++;
  return k;
}

mbsErr mbs_schurRankCreate(const mbsModel *m, int b0, int b1, int nseg, mbsSchurRank **out) {
  *out = NULL;
  mbsSchurRank *r = calloc(1, sizeof *r);
  MBS_CHECK(r, MBS_ERR_NOMEM, "out of memory (schur rank)");
  if (nseg > b1 - b0) nseg = b1 - b0;
  if (nseg > MBS_SCHUR_MAXSEG) nseg = MBS_SCHUR_MAXSEG;
  if (nseg < 1) nseg = 1;
  r->b0 = b0, r->b1 = b1, r->nseg = nseg;
  r->seg = calloc((size_t)nseg, sizeof *r->seg);
  r->lam_up = calloc((size_t)nseg, sizeof *r->lam_up);
  r->lam_low = calloc((size_t)nseg, sizeof *r->lam_low);
  mbsErr e =
      r->seg && r->lam_up && r->lam_low ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  // a chain piece whose last body has no child (the end of a chain): its last segment has no
  // lower port and no spikes (docs/formulation.md 4.6), the others get 1/(nseg + sigma) each
  long n = b1 - b0;
  int chainend = m->body_childnum[b1 - 1] == 0;
  for (int b = b0 + 1; b < b1 && chainend; b++)
    if (m->body_parent[b] != b - 1) chainend = 0;
  const double parts = chainend && nseg > 1 ? nseg + MBS_SCHUR_THREAD_SPIKE : nseg;
  int cut[MBS_SCHUR_MAXSEG + 1];
  for (int t = 0; t < nseg; t++) cut[t] = b0 + (int)((double)n * t / parts);
  cut[nseg] = b1;
  for (int t = 1; t < nseg; t++) // every segment at least one body
    if (cut[t] <= cut[t - 1]) cut[t] = cut[t - 1] + 1;
  for (int t = nseg - 1; t >= 1; t--)
    if (cut[t] > b1 - (nseg - t)) cut[t] = b1 - (nseg - t);
  // a boundary within MBS_PARTITION_SNAP of a part from a clean cut (a body on the ground, or
  // whose parent is on another rank, that no joint of the range reaches across) moves to it: the
  // two segments then share no joint (no spike, no port; and the loop layer's solves after the
  // first redo only the bias passes, mbs_schurRhsOnly)
  int *cl = nseg > 1 ? malloc(sizeof(int) * (size_t)n) : NULL, ncl = 0;
  for (int b = b0; cl && b < b1; b++) {
    int p = m->body_parent[b];
    if (p < b0)
      cl[ncl++] = b;
    else
      ncl = mbs_partitionCutDrop(cl, ncl, p);
  }
  for (int t = 1; cl && t < nseg; t++) {
    double lim = MBS_PARTITION_SNAP * (double)n / parts, best = lim;
    int to = -1;
    for (int k = 0; k < ncl; k++) {
      double d = fabs((double)(cl[k] - cut[t]));
      if (d <= best && cl[k] > cut[t - 1] && cl[k] < cut[t + 1]) best = d, to = cl[k];
    }
    if (to >= 0) cut[t] = to;
  }
  free(cl);
  // no segment starts at a body on a fixed joint below a body of the range (the rule of
  // mbs_partitionRuns, docs/formulation.md 4.9)
  for (int t = 1; t < nseg; t++)
    for (int step = 0; step < MBS_PARTITION_FIXED_SKIP && cut[t] + 1 < cut[t + 1] &&
                       m->body_jnttype[cut[t]] == MBS_JNT_FIXED && m->body_parent[cut[t]] >= b0;
         step++)
      cut[t]++;
  for (int t = 0; t < nseg && !e; t++) {
    int s0 = cut[t], s1 = cut[t + 1];
    e = mbs_schurCreate(m, s0, s1, &r->seg[t]);
    if (!e) {
      const mbsSchur *s = r->seg[t];
      int nu = 0;
      for (int c = 0; c < s->ncomp; c++) nu += s->comp[c].nup;
      r->lam_up[t] = calloc((size_t)nu + 1, sizeof(mbsReal));
      r->lam_low[t] = calloc((size_t)s->ncol + 1, sizeof(mbsReal));
      if (!r->lam_up[t] || !r->lam_low[t]) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    }
  }
  for (int t = 0; t < nseg && !e; t++) r->nsc += r->seg[t]->ncomp;
  if (!e && !(r->sc = calloc((size_t)r->nsc, sizeof *r->sc)))
    e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  if (e) {
    mbs_schurRankDestroy(&r);
    return e;
  }
  // segment-components and where their roots' parents are
  for (int t = 0, k = 0; t < nseg; t++)
    for (int c = 0; c < r->seg[t]->ncomp; c++, k++) {
      mbsSchurSc *sc = r->sc + k;
      sc->seg = t, sc->comp = c, sc->root = r->seg[t]->comp[c].root;
      sc->nup = r->seg[t]->comp[c].nup; // 0 for roots at the ground and free-joint cuts
    }
  for (int k = 0; k < r->nsc; k++) {
    mbsSchurSc *sc = r->sc + k;
    int p = m->body_parent[sc->root];
    sc->parent_sc = p >= b0 ? mbs_schurScOf(r, p) : -1;
  }
  // port lists, bottom-up: kept = own remote ports then the internal children's kept ports
  int ktot = 0, etot = 0;
  for (int k = 0; k < r->nsc; k++) {
    const mbsSchurComp *cp = r->seg[r->sc[k].seg]->comp + r->sc[k].comp;
    ktot += cp->np, etot += cp->np;
  }
  size_t isize = 2 * (size_t)r->nsc * (size_t)(ktot + 1) + (size_t)etot + 16;
  r->ipool = calloc(isize, sizeof(int));
  if (!r->ipool) {
    mbs_schurRankDestroy(&r);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur join)");
  }
  int *ip = r->ipool;
  for (int k = r->nsc - 1; k >= 0; k--) {
    mbsSchurSc *sc = r->sc + k;
    const mbsSchur *s = r->seg[sc->seg];
    const mbsSchurComp *cp = s->comp + sc->comp;
    sc->kport = ip, sc->nkp = 0, sc->nk = 0;
    for (int q = cp->p0; q < cp->p0 + cp->np; q++) {
      int l = s->port_body[q];
      if (l >= b1) sc->kport[sc->nkp++] = l, sc->nk += m->body_lamnum[l];
    }
    for (int q = cp->p0; q < cp->p0 + cp->np; q++) {
      int l = s->port_body[q];
      if (l >= b1) continue;
      const mbsSchurSc *ch = r->sc + mbs_schurScOf(r, l);
      for (int i = 0; i < ch->nkp; i++) sc->kport[sc->nkp++] = ch->kport[i];
      sc->nk += ch->nk;
    }
    ip += sc->nkp;
    sc->eport = ip, sc->nep = 0, sc->ne = 0;
    for (int q = cp->p0; q < cp->p0 + cp->np; q++) {
      int l = s->port_body[q];
      if (l < b1) sc->eport[sc->nep++] = l, sc->ne += m->body_lamnum[l];
    }
    ip += sc->nep;
  }
  // working storage and the rank-level view
  size_t rs = 0;
  int nview = 0, vport = 0;
  for (int k = 0; k < r->nsc; k++) {
    mbsSchurSc *sc = r->sc + k;
    size_t n = (size_t)(sc->nup + sc->nk + sc->ne), nk = (size_t)(sc->nup + sc->nk);
    rs += n * n + n + nk * nk + nk;
    int joins = sc->parent_sc >= 0 && sc->nup > 0;
    sc->view = joins ? -1 : nview++;
    if (!joins) vport += sc->nkp;
  }
  r->pool = calloc(rs + 1, sizeof(mbsReal));
  r->view.comp = calloc((size_t)nview + 1, sizeof(mbsSchurComp));
  r->view.port_body = calloc((size_t)vport + 1, sizeof(int));
  r->view.port_cadr = calloc((size_t)vport + 1, sizeof(int));
  if (!r->pool || !r->view.comp || !r->view.port_body || !r->view.port_cadr) {
    mbs_schurRankDestroy(&r);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur join)");
  }
  mbsReal *at = r->pool;
  r->view.ncomp = nview, r->view.nport = vport, r->view.s0 = b0, r->view.s1 = b1;
  int col = 0, pq = 0;
  for (int k = 0; k < r->nsc; k++) {
    mbsSchurSc *sc = r->sc + k;
    int n = sc->nup + sc->nk + sc->ne, nk = sc->nup + sc->nk;
    sc->W = at, at += (size_t)n * n;
    sc->gw = at, at += n;
    sc->R = at, at += (size_t)nk * nk + nk;
    if (sc->view < 0) continue;
    mbsSchurComp *vc = r->view.comp + sc->view;
    int p = m->body_parent[sc->root];
    vc->root = sc->root;
    vc->up = p >= 0 && p < b0 && sc->nup > 0;
    vc->nup = vc->up ? sc->nup : 0;
    vc->p0 = pq, vc->np = sc->nkp, vc->c0 = col, vc->nc = sc->nk, vc->n = vc->nup + sc->nk;
    vc->C = sc->R, vc->g = sc->R + (size_t)nk * nk;
    for (int i = 0; i < sc->nkp; i++) {
      r->view.port_body[pq] = sc->kport[i], r->view.port_cadr[pq] = col;
      col += m->body_lamnum[sc->kport[i]], pq++;
    }
  }
  r->view.ncol = col;
  if (vport) r->view.port_cadr[vport] = col;
  // the factor can be redone for a new right side alone (mbs_schurRhsOnly): no ports, every
  // body in inertia form; with several segments (threads) also every component on the ground, so
  // no segment's bias pass reaches into another's records
  r->rhs_only = 1;
  r->pmark = calloc((size_t)(b1 - b0) + 1, sizeof(int));
  r->pinit = calloc((size_t)(b1 - b0) + 1, sizeof(int));
  r->plist = calloc((size_t)(b1 - b0) + 1, sizeof(int));
  r->pdirty = 1;
  if (!r->pmark || !r->pinit || !r->plist) {
    mbs_schurRankDestroy(&r);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur join)");
  }
  for (int t = 0; t < r->nseg && r->rhs_only; t++) {
    const mbsSchur *st = r->seg[t];
    if (st->nport) r->rhs_only = 0;
    for (int c = 0; c < st->ncomp && r->rhs_only; c++)
      if (st->comp[c].up || st->comp[c].spath ||
          (r->nseg > 1 && m->body_parent[st->comp[c].root] >= 0))
        r->rhs_only = 0;
    for (int b = st->s0; b < st->s1 && r->rhs_only; b++)
      if (!st->mode[b - st->s0]) r->rhs_only = 0;
  }
  *out = r;
  return MBS_OK;
}

// position of port l in a list
static int mbs_schurPortPos(const mbsModel *m, const int *list, int n, int l) {
  int pos = 0;
  for (int i = 0; i < n && list[i] != l; i++) pos += m->body_lamnum[list[i]];
  return pos;
}

int mbs_schurRhsOnly(const mbsSchurRank *r) {
  return r->rhs_only;
}

// the right side alone (w->reuse, mbs_schurRhsOnly): pass 1 and 2 of ABA's bias, in the order of
// mbs_schurFactor, on the articulated inertias and 1/D the last factor left in the records
static void mbs_schurFactorRhs(const mbsModel *m, mbsWork *w, const mbsSchur *s) {
  for (int b = s->s1 - 1; b >= s->s0; b--) {
    int lb = b - s->s0;
    if (s->selfinit[lb]) mbs_abaBodyInitRhs(m, w, b);
    if (s->initp[lb]) mbs_abaBodyInitRhs(m, w, m->body_parent[b]);
    mbs_abaBodyRhs(m, w, b);
  }
}

static int mbs_schurCmpDesc(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x < y) - (x > y);
}

int mbs_schurRankFactorPath(const mbsModel *m, mbsWork *w, mbsSchurRank *r, const int *load,
                            int nload) {
  if (!load || !w->reuse || !w->homog || !r->rhs_only || !r->pmark) return 0;
  int b0 = r->b0, b1 = r->b1, par = r->nseg > 1 && nload <= MBS_SCHUR_PATH_LOADS;
  if (r->pdirty) { // a full factor ran: every u is stale (each segment's by its thread)
#pragma omp parallel for schedule(static, 1) if (par)
    for (int t = 0; t < r->nseg; t++)
      for (int b = r->seg[t]->s0; b < r->seg[t]->s1; b++) mbs_abaBodyZeroU(m, w, b);
  } else {
#pragma omp parallel for schedule(static, 1) if (par)
    for (int t = 0; t < r->nseg; t++)
      for (int k = 0; k < r->nplist; k++)
        if (r->plist[k] >= r->seg[t]->s0 && r->plist[k] < r->seg[t]->s1)
          mbs_abaBodyZeroU(m, w, r->plist[k]);
  }
  r->pdirty = 0;
  if (r->pcur == INT32_MAX) { // restart the stamps
    memset(r->pmark, 0, sizeof(int) * (size_t)(b1 - b0));
    memset(r->pinit, 0, sizeof(int) * (size_t)(b1 - b0));
    r->pcur = 0;
  }
  // the loaded bodies' root paths on this rank, each from its load up to the first body an
  // earlier one reached; taken in reverse, leaf to root, every body comes after its children on
  // the paths (a child in a later piece ends that piece just below it)
  int cur = ++r->pcur, n = 0, seg[MBS_SCHUR_PATH_LOADS + 1], ns = 0;
  for (int k = 0; k < nload; k++) {
    if (ns == MBS_SCHUR_PATH_LOADS) break;
    seg[ns++] = n;
    for (int b = load[k]; b >= b0 && b < b1 && r->pmark[b - b0] != cur; b = m->body_parent[b])
      r->pmark[b - b0] = cur, r->plist[n++] = b;
  }
  seg[ns] = n;
  if (nload > MBS_SCHUR_PATH_LOADS) { // more loads than pieces: one piece, in index order
    for (int k = MBS_SCHUR_PATH_LOADS; k < nload; k++)
      for (int b = load[k]; b >= b0 && b < b1 && r->pmark[b - b0] != cur; b = m->body_parent[b])
        r->pmark[b - b0] = cur, r->plist[n++] = b;
    qsort(r->plist, (size_t)n, sizeof(int), mbs_schurCmpDesc);
    ns = 1, seg[0] = 0, seg[1] = n;
  }
  // with several segments (each whole trees: mbs_schurRhsOnly) a piece lies in one segment, and
  // each segment's thread takes its own pieces, where its records are in cache
  int tq[MBS_SCHUR_PATH_LOADS];
  for (int q = 0; q < ns; q++) {
    tq[q] = 0;
    if (par && seg[q + 1] > seg[q])
      while (tq[q] + 1 < r->nseg && r->seg[tq[q] + 1]->s0 <= r->plist[seg[q]]) tq[q]++;
  }
#pragma omp parallel for schedule(static, 1) if (par)
  for (int t = 0; t < (par ? r->nseg : 1); t++)
    for (int q = ns - 1; q >= 0; q--) {
      if (par && tq[q] != t) continue;
      for (int k = seg[q]; k < seg[q + 1]; k++) { // a record starts as its bias before any add
        int b = r->plist[k], p = m->body_parent[b];
        if (r->pinit[b - b0] != cur) mbs_abaBodyInitRhs(m, w, b), r->pinit[b - b0] = cur;
        if (p >= b0 && r->pinit[p - b0] != cur) mbs_abaBodyInitRhs(m, w, p), r->pinit[p - b0] = cur;
        mbs_abaBodyRhs(m, w, b);
      }
    }
  r->nplist = n;
  r->nfloor = 0;
  return 1;
}

mbsErr mbs_schurRankFactor(const mbsModel *m, mbsWork *w, mbsSchurRank *r) {
  mbsErr err = MBS_OK;
  r->nfloor = 0;
  r->pdirty = 1; // every u of the rank written (mbs_schurRankFactorPath)
  if (w->reuse && r->rhs_only) {
    if (r->nseg == 1) {
      mbs_schurFactorRhs(m, w, r->seg[0]);
    } else {
#pragma omp parallel for schedule(static, 1)
      for (int t = 0; t < r->nseg; t++) mbs_schurFactorRhs(m, w, r->seg[t]);
    }
  } else if (r->nseg == 1) {
    err = mbs_schurFactor(m, w, r->seg[0]);
  } else {
#pragma omp parallel for schedule(static, 1)
    for (int t = 0; t < r->nseg; t++) {
      mbsErr e = mbs_schurFactor(m, w, r->seg[t]);
      if (e) {
#pragma omp critical
        err = e;
      }
    }
  }
  if (err) return err;
  // join, children first: W over [up; kept; eliminated] from the segment system and the internal
  // children's reduced systems, then the eliminated ports reduced away
  for (int k = r->nsc - 1; k >= 0; k--) {
    mbsSchurSc *sc = r->sc + k;
    const mbsSchur *s = r->seg[sc->seg];
    const mbsSchurComp *cp = s->comp + sc->comp;
    int n = sc->nup + sc->nk + sc->ne, nk = sc->nup + sc->nk;
    memset(sc->W, 0, sizeof(mbsReal) * (size_t)n * n);
    memset(sc->gw, 0, sizeof(mbsReal) * (size_t)n);
    int pos[64 + 6], *map = pos, *big = NULL;
    if (cp->n > 64) {
      big = malloc(sizeof(int) * (size_t)cp->n);
      if (!big) return mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur join)");
      map = big;
    }
    for (int i = 0; i < cp->nup; i++) map[i] = i; // nup == cp->nup whenever cp->up
    for (int q = cp->p0; q < cp->p0 + cp->np; q++) {
      int l = s->port_body[q], o = cp->nup + s->port_cadr[q] - cp->c0, base;
      if (l >= r->b1)
        base = sc->nup + mbs_schurPortPos(m, sc->kport, sc->nkp, l);
      else
        base = nk + mbs_schurPortPos(m, sc->eport, sc->nep, l);
      for (int i = 0; i < m->body_lamnum[l]; i++) map[o + i] = base + i;
    }
    MBS_FLOPS(mbs_flopSchurAdd(cp->n));
    for (int i = 0; i < cp->n; i++) {
      sc->gw[map[i]] += cp->g[i];
      for (int j = 0; j < cp->n; j++) sc->W[(size_t)n * map[i] + map[j]] += cp->C[cp->n * i + j];
    }
    free(big);
    // the internal children's reduced systems over [their upper port; their kept ports]
    for (int e = 0, kat = 0; e < sc->nep; e++) {
      const mbsSchurSc *ch = r->sc + mbs_schurScOf(r, sc->eport[e]);
      int nc = ch->nup + ch->nk, ep = nk + mbs_schurPortPos(m, sc->eport, sc->nep, sc->eport[e]);
      int own = 0; // own remote ports come first in the kept list
      for (int i = 0; i < cp->np; i++)
        if (s->port_body[cp->p0 + i] >= r->b1) own += m->body_lamnum[s->port_body[cp->p0 + i]];
      int kb = sc->nup + own + kat;
      const mbsReal *Rc = ch->R, *gc = ch->R + (size_t)nc * nc;
      MBS_FLOPS(mbs_flopSchurAdd(nc));
      for (int i = 0; i < nc; i++) {
        int pi = i < ch->nup ? ep + i : kb + i - ch->nup;
        sc->gw[pi] += gc[i];
        for (int j = 0; j < nc; j++) {
          int pj = j < ch->nup ? ep + j : kb + j - ch->nup;
          sc->W[(size_t)n * pi + pj] += Rc[nc * i + j];
        }
      }
      kat += ch->nk;
    }
    if (!mbs_schurReduce(nk, sc->ne, sc->W, sc->gw, sc->R, sc->R + (size_t)nk * nk, &r->nfloor))
      return mbs_errSet(MBS_ERR_NUMERIC, "schur: a cut-joint block is not positive definite");
  }
  return MBS_OK;
}

void mbs_schurRankBack(const mbsModel *m, mbsWork *w, mbsSchurRank *r, const mbsReal *lam_up,
                       const mbsReal *lam_low, const int *first, int lim) {
  // the rank-level ports' lambdas into w->lam, then the joined ports' from the parents down
  for (int c = 0, at = 0; c < r->view.ncomp; c++) {
    const mbsSchurComp *vc = r->view.comp + c;
    memcpy(w->lam + m->body_lamadr[vc->root], lam_up + at, sizeof(mbsReal) * (size_t)vc->nup);
    at += vc->nup;
  }
  for (int q = 0; q < r->view.nport; q++) {
    int l = r->view.port_body[q];
    memcpy(w->lam + m->body_lamadr[l], lam_low + r->view.port_cadr[q],
           sizeof(mbsReal) * (size_t)m->body_lamnum[l]);
  }
  for (int k = 0; k < r->nsc; k++) {
    const mbsSchurSc *sc = r->sc + k;
    if (sc->ne == 0) continue;
    mbsReal xk[64], xe[64], *bk = NULL;
    int nk = sc->nup + sc->nk;
    mbsReal *pk = xk, *pe = xe;
    if (nk > 64 || sc->ne > 64) {
      bk = malloc(sizeof(mbsReal) * (size_t)(nk + sc->ne));
      if (!bk) continue; // cannot happen for the sizes the setup allows
      pk = bk, pe = bk + nk;
    }
    memcpy(pk, w->lam + m->body_lamadr[sc->root], sizeof(mbsReal) * (size_t)sc->nup);
    for (int i = 0, o = sc->nup; i < sc->nkp; i++) {
      int l = sc->kport[i];
      memcpy(pk + o, w->lam + m->body_lamadr[l], sizeof(mbsReal) * (size_t)m->body_lamnum[l]);
      o += m->body_lamnum[l];
    }
    mbs_schurExpand(nk, sc->ne, sc->W, sc->gw, pk, pe);
    for (int i = 0, o = 0; i < sc->nep; i++) {
      int l = sc->eport[i];
      memcpy(w->lam + m->body_lamadr[l], pe + o, sizeof(mbsReal) * (size_t)m->body_lamnum[l]);
      o += m->body_lamnum[l];
    }
    free(bk);
  }
  // each segment's port values, then its back-substitution
  for (int t = 0; t < r->nseg; t++) {
    mbsSchur *s = r->seg[t];
    for (int c = 0, at = 0; c < s->ncomp; c++) {
      memcpy(r->lam_up[t] + at, w->lam + m->body_lamadr[s->comp[c].root],
             sizeof(mbsReal) * (size_t)s->comp[c].nup);
      at += s->comp[c].nup;
    }
    for (int q = 0; q < s->nport; q++) {
      int l = s->port_body[q];
      memcpy(r->lam_low[t] + s->port_cadr[q], w->lam + m->body_lamadr[l],
             sizeof(mbsReal) * (size_t)m->body_lamnum[l]);
    }
  }
  if (r->nseg == 1) {
    mbs_schurBack(m, w, r->seg[0], r->lam_up[0], r->lam_low[0], first, lim);
  } else {
#pragma omp parallel for schedule(static, 1)
    for (int t = 0; t < r->nseg; t++)
      mbs_schurBack(m, w, r->seg[t], r->lam_up[t], r->lam_low[t], first, lim);
  }
  // roots whose parent is in another segment of this rank
  for (int k = 0; k < r->nsc; k++) {
    int root = r->sc[k].root, p = m->body_parent[root];
    if (first && first[root] > lim) continue;
    if (p >= r->b0 && r->sc[k].parent_sc >= 0) mbs_schurQdd(m, w, root, w->acc + 6 * p);
  }
}
