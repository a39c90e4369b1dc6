/// \file flex_cfs.c
/// The constraint-force system with flexible bodies (docs/flexible.md 13; seed 002's method,
/// docs/formulation.md parts 2-3, with a body's 6 x 6 mobility replaced by its (6 + m)^2 one).
/// Body b is free with z_b = [omega; v_o; etad] (world axes at its origin, as src/flex_aba.c) and
/// M_b zdot_b + h_b = Q_b. Joint b exerts f_b = F_b tau_b + T_b lam_b on body b (F_b = S (S^T
/// S)^-1, T_b the orthonormal complement of S_b: S^T f = tau, T^T S = 0) and -P_b^T f_b on the
/// generalized forces of its parent (P_b: the parent's z to b's frame twist, through a node frame
/// of a flexible parent). Its rows: T_b^T (zdot_b6 - P_b zdot_p - c_b) = 0. So A = G M^-1 G^T,
/// the operator in three sweeps (wrenches up, accelerations, rows down) as src/cfs_op.c.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_cfs.h"
#include "mbspar/mbs_joint.h"
#include "flex_cfs.h"
#include "flex_flops.h"
#include "flex_private.h"
#include "flex_cfs_private.h"

static const char *const mbs_fcfsNames[MBS_FCFS_NMETHOD] = {"direct", "jcg",       "gs",   "sor",
                                                            "jacobi", "chebyshev", "petsc"};

const char *mbs_flexCfsName(int k) {
  return k >= 0 && k < MBS_FCFS_NMETHOD ? mbs_fcfsNames[k] : "?";
}

int mbs_flexCfsSize(const mbsFlexCfs *f) {
  return f->N;
}

int mbs_flexCfsRows(const mbsFlexCfs *f) {
  return f->nl;
}

int mbs_flexCfsSpecIterations(const mbsFlexCfs *f) {
  return f->spec_it;
}

void mbs_flexCfsDestroy(mbsFlexCfs **pf) {
  if (!pf || !*pf) return;
  mbsFlexCfs *f = *pf;
  mbs_flexAbaDestroy(&f->a);
  mbs_fcLoopFree(f);
  void *arr[] = {f->nlb,  f->la, f->T, f->F, f->SSi, f->Minv, f->h, f->Q, f->wr, f->tau,
                 f->Dinv, f->A,  f->x, f->b, f->r,   f->z,    f->p, f->q, f->wk, f->need};
  for (size_t k = 0; k < sizeof arr / sizeof arr[0]; k++) free(arr[k]);
  free(f);
  *pf = NULL;
}

mbsErr mbs_flexCfsCreate(const mbsModel *m, mbsFlexCfs **out) {
  *out = NULL;
  mbsFlexCfs *f = calloc(1, sizeof *f);
  if (!f) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  *out = f;
  f->m = m, f->nb = m->nbody;
  MBS_CALL(mbs_flexAbaCreate(m, &f->a));
  f->N = mbs_flexAbaSize(f->a);
  size_t nb = (size_t)m->nbody + 1, sq = 1, sv = 1;
  int nzmax = 6;
  f->nlb = malloc(sizeof(int) * nb), f->la = malloc(sizeof(int) * nb);
  if (!f->nlb || !f->la) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  for (int b = 0; b < m->nbody; b++) {
    int n = f->a->nz[b];
    f->la[b] = f->nl, f->nlb[b] = 6 - m->body_dofnum[b], f->nl += f->nlb[b];
    sq += (size_t)n * n, sv += (size_t)n;
    if (n > nzmax) nzmax = n;
  }
  MBS_CALL(mbs_fcLoopCreate(f)); // the closure rows follow the tree's
  f->nl += f->nle;
  size_t nl = (size_t)f->nl + 1;
  f->sv = sv, f->need = calloc(nb, 1);
  mbsReal **a36[] = {&f->T, &f->F, &f->SSi, &f->Dinv};
  for (int k = 0; k < 4; k++) *a36[k] = calloc(36 * nb, sizeof(mbsReal));
  f->Minv = calloc(sq, sizeof(mbsReal)), f->h = calloc(sv, sizeof(mbsReal));
  f->Q = calloc(sv, sizeof(mbsReal)), f->wr = calloc(6 * nb, sizeof(mbsReal));
  f->tau = calloc((size_t)m->nv + 1, sizeof(mbsReal));
  mbsReal **vl[] = {&f->x, &f->b, &f->r, &f->z, &f->p, &f->q};
  for (int k = 0; k < 6; k++) *vl[k] = calloc(nl, sizeof(mbsReal));
  f->wk = calloc((size_t)nzmax * nzmax + 12 * (size_t)nzmax + 64, sizeof(mbsReal));
  if (!f->T || !f->F || !f->SSi || !f->Dinv || !f->Minv || !f->h || !f->Q || !f->wr || !f->tau ||
      !f->x || !f->b || !f->r || !f->z || !f->p || !f->q || !f->wk || !f->need)
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (flexible constraint-force system)");
  return mbs_flexCfsSetRange(f, 0, m->nbody, NULL);
}

mbsErr mbs_flexCfsSetRange(mbsFlexCfs *f, int b0, int b1, const mbsCfsComm *comm) {
  const mbsModel *m = f->m;
  MBS_CHECK(b0 >= 0 && b0 <= b1 && b1 <= m->nbody, MBS_ERR_INTERNAL, "flexible cfs: range");
  f->b0 = b0, f->b1 = b1;
  f->l0 = b0 < m->nbody ? f->la[b0] : f->nl, f->l1 = b1 < m->nbody ? f->la[b1] : f->nl;
  memset(&f->comm, 0, sizeof f->comm);
  if (comm) f->comm = *comm;
  memset(f->need, 0, (size_t)m->nbody);
  for (int b = b0; b < b1; b++) {
    f->need[b] = 1;
    if (m->body_parent[b] >= 0) f->need[m->body_parent[b]] = 1;
  }
  mbs_fcLoopNeed(f);
  return MBS_OK;
}

// the in-place sum over the ranks (nothing at one process)
mbsErr mbs_fcReduce(const mbsFlexCfs *f, double *v, int n) {
  return f->comm.reduce ? f->comm.reduce(f->comm.ctx, v, n) : MBS_OK;
}

// Ai (n x n, full) = A^-1 from A's Cholesky factor L
static void mbs_fcCholInverse(int n, const mbsReal *L, mbsReal *Ai) {
  for (int j = 0; j < n; j++) {
    mbsReal *e = Ai + (size_t)j * n; // column j, stored as row j (symmetric)
    for (int i = 0; i < n; i++) e[i] = i == j;
    mbs_faCholSolve(n, L, e);
  }
}

// T: an orthonormal basis (columns of 6) of the complement of the nd columns of S (world);
// returns its flops (they depend on which unit vectors are rejected)
long mbs_fcComplement(const mbsReal *S, int nd, mbsReal *T) {
  mbsReal Qs[72];
  int nq = 0, nt = 0;
  long fl = 0;
  for (int k = 0; k < nd + 6 && nt < 6 - nd; k++) {
    fl += 48L * nq + 12;
    mbsReal v[6];
    for (int i = 0; i < 6; i++) v[i] = k < nd ? S[6 * k + i] : (i == k - nd);
    for (int pass = 0; pass < 2; pass++) // Gram-Schmidt, twice for accuracy
      for (int j = 0; j < nq; j++) {
        mbsReal d = 0;
        for (int i = 0; i < 6; i++) d += Qs[6 * j + i] * v[i];
        for (int i = 0; i < 6; i++) v[i] -= d * Qs[6 * j + i];
      }
    mbsReal n2 = 0;
    for (int i = 0; i < 6; i++) n2 += v[i] * v[i];
    if (k >= nd && n2 < 0.25) continue; // a unit vector nearly in the span so far
    fl += 8;
    mbsReal s = 1 / sqrt(n2);
    for (int i = 0; i < 6; i++) Qs[6 * nq + i] = v[i] * s;
    if (k >= nd) memcpy(T + 6 * nt++, Qs + 6 * nq, 6 * sizeof(mbsReal));
    nq++;
  }
  return fl;
}

// the position- and velocity-dependent data: kinematics, M_b^-1, h_b, T, F, tau, D_b^-1
static mbsErr mbs_fcPrepare(mbsFlexCfs *f, const mbsReal *q, const mbsReal *y, const mbsReal *eta) {
  const mbsModel *m = f->m;
  mbsFlexAba *a = f->a;
  for (int b = 0; b < m->nbody; b++) {
    int n = a->nz[b], nd = m->body_dofnum[b], d0 = m->body_dofadr[b];
    mbs_faKin(a, b, q, y, eta);
    if (!f->need[b]) continue;
    mbsReal *Mf = f->wk;
    mbs_faBody(a, b, y, eta, Mf, f->h + a->ov[b]);
    if (mbs_faChol(n, Mf))
      return mbs_errSet(MBS_ERR_NUMERIC, "body %s: mass matrix is not positive definite",
                        m->body_name[b]);
    mbs_fcCholInverse(n, Mf, f->Minv + a->oq[b]);
    const mbsReal *S = a->S + 36 * b;
    long gs = mbs_fcComplement(S, nd, f->T + 36 * b);
    MBS_FLOPS(gs + mbs_flopFcPrepare(n, nd, mbs_jntQuatAdr(m->body_jnttype[b]) < 0));
    (void)gs;
    if (nd) { // F = S (S^T S)^-1
      mbsReal SS[36], *Si = f->SSi + 36 * b;
      for (int i = 0; i < nd; i++)
        for (int j = 0; j < nd; j++) {
          mbsReal t = 0;
          for (int r = 0; r < 6; r++) t += S[6 * i + r] * S[6 * j + r];
          SS[nd * i + j] = t;
        }
      if (mbs_faChol(nd, SS))
        return mbs_errSet(MBS_ERR_NUMERIC, "body %s: degenerate joint subspace", m->body_name[b]);
      mbs_fcCholInverse(nd, SS, Si);
      for (int j = 0; j < nd; j++)
        for (int r = 0; r < 6; r++) {
          mbsReal t = 0;
          for (int i = 0; i < nd; i++) t += S[6 * i + r] * Si[nd * i + j];
          f->F[36 * b + 6 * j + r] = t;
        }
    }
    const mbsReal *qb = q + m->body_qadr[b];
    int scalar = mbs_jntQuatAdr(m->body_jnttype[b]) < 0;
    for (int k = 0; k < nd; k++) {
      int dd = d0 + k;
      f->tau[dd] = m->dof_force[dd] - m->dof_damping[dd] * y[dd];
      if (scalar) f->tau[dd] -= m->dof_stiffness[dd] * (qb[k] - m->dof_springref[dd]);
    }
  }
  if (f->nle) mbs_fcLoopPrepare(f, y, eta);
  // the diagonal blocks D_b = T^T [M_b^-1]_66 T + (P^T T)^T M_p^-1 (P^T T), inverted
  for (int b = f->b0; b < f->b1; b++) {
    int nl = f->nlb[b], n = a->nz[b], p = m->body_parent[b];
    if (!nl) continue;
    const mbsReal *T = f->T + 36 * b, *Mi = f->Minv + a->oq[b];
    mbsReal D[36];
    MBS_FLOPS(mbs_flopFcBlock(nl, p >= 0 ? a->nz[p] : 0));
    for (int i = 0; i < nl; i++)
      for (int j = 0; j < nl; j++) {
        mbsReal t = 0;
        for (int r = 0; r < 6; r++)
          for (int s = 0; s < 6; s++) t += T[6 * i + r] * Mi[r * n + s] * T[6 * j + s];
        D[nl * i + j] = t;
      }
    if (p >= 0) {
      int np = a->nz[p];
      const mbsReal *P = a->P + a->oP[b], *Mp = f->Minv + a->oq[p];
      mbsReal *PT = f->wk, *MPT = f->wk + 6 * (size_t)np;
      for (int i = 0; i < nl; i++) // PT column i (np) = P^T T_i, MPT column i = M_p^-1 PT_i
        for (int k = 0; k < np; k++) {
          mbsReal t = 0;
          for (int r = 0; r < 6; r++) t += P[r * np + k] * T[6 * i + r];
          PT[i * np + k] = t;
        }
      for (int i = 0; i < nl; i++)
        for (int k = 0; k < np; k++) {
          mbsReal t = 0;
          for (int j = 0; j < np; j++) t += Mp[k * np + j] * PT[i * np + j];
          MPT[i * np + k] = t;
        }
      for (int i = 0; i < nl; i++)
        for (int j = 0; j < nl; j++) {
          mbsReal t = 0;
          for (int k = 0; k < np; k++) t += PT[i * np + k] * MPT[j * np + k];
          D[nl * i + j] += t;
        }
    }
    if (mbs_faChol(nl, D))
      return mbs_errSet(MBS_ERR_NUMERIC,
                        "body %s: diagonal block of the constraint-force system is not positive "
                        "definite",
                        m->body_name[b]);
    mbs_fcCholInverse(nl, D, f->Dinv + 36 * b);
  }
  return MBS_OK;
}

// y = A x (known = 0) or A x + the affine part (known = 1: joint forces, bias forces, c): the
// three sweeps. Leaves zdot_b in f->Q.
mbsErr mbs_fcApply(mbsFlexCfs *f, const mbsReal *x, int known, mbsReal *yo) {
  const mbsModel *m = f->m;
  const mbsFlexAba *a = f->a;
  if (f->comm.reduce) { // the other ranks' entries are summed in: zero here
    memset(f->wr, 0, sizeof(mbsReal) * 6 * (size_t)m->nbody);
    memset(f->Q, 0, sizeof(mbsReal) * f->sv);
  }
  for (int b = f->b0; b < f->b1; b++) { // up: the joint wrenches
    int nl = f->nlb[b], la = f->la[b], nd = m->body_dofnum[b], d0 = m->body_dofadr[b];
    const mbsReal *T = f->T + 36 * b, *F = f->F + 36 * b;
    mbsReal *wr = f->wr + 6 * b;
    MBS_FLOPS(mbs_flopFcUp(nl, nd, known));
    for (int i = 0; i < 6; i++) wr[i] = 0;
    for (int k = 0; k < nl; k++)
      for (int i = 0; i < 6; i++) wr[i] += T[6 * k + i] * x[la + k];
    for (int k = 0; known && k < nd; k++)
      for (int i = 0; i < 6; i++) wr[i] += F[6 * k + i] * f->tau[d0 + k];
  }
  MBS_CALL(mbs_fcReduce(f, f->wr, 6 * m->nbody)); // the children's wrenches
  MBS_CALL(mbs_fcLoopGather(f, x));               // the loop multipliers
  for (int b = f->b0; b < f->b1; b++) {           // mid: Q_b and zdot_b = M_b^-1 Q_b
    int n = a->nz[b];
    mbsReal *Qb = f->wk, *zd = f->Q + a->ov[b];
    const mbsReal *hb = f->h + a->ov[b], *Mi = f->Minv + a->oq[b];
    MBS_FLOPS(mbs_flopFcMid(n, m->body_childnum[b], known));
    for (int i = 0; i < n; i++) Qb[i] = (i < 6 ? f->wr[6 * b + i] : 0) - (known ? hb[i] : 0);
    const int *ch = m->child_list + m->body_childadr[b];
    for (int k = 0; k < m->body_childnum[b]; k++) {
      const mbsReal *P = a->P + a->oP[ch[k]], *wc = f->wr + 6 * ch[k];
      for (int j = 0; j < n; j++) {
        mbsReal t = 0;
        for (int i = 0; i < 6; i++) t += P[i * n + j] * wc[i];
        Qb[j] -= t;
      }
    }
    if (f->nle) mbs_fcLoopForce(f, b, Qb);
    for (int i = 0; i < n; i++) {
      mbsReal t = 0;
      for (int j = 0; j < n; j++) t += Mi[i * n + j] * Qb[j];
      zd[i] = t;
    }
  }
  MBS_CALL(mbs_fcReduce(f, f->Q, (int)f->sv)); // the parents' accelerations
  for (int b = f->b0; b < f->b1; b++) {        // down: the rows
    int nl = f->nlb[b], la = f->la[b], p = m->body_parent[b];
    mbsReal ap[6], d[6];
    MBS_FLOPS(mbs_flopFcDown(p < 0 ? 0 : a->nz[p], nl));
    mbs_faApply(a, b, p < 0 ? NULL : f->Q + a->ov[p], known ? a->c + 6 * b : NULL, ap);
    for (int i = 0; i < 6; i++) d[i] = f->Q[a->ov[b] + i] - ap[i];
    const mbsReal *T = f->T + 36 * b;
    for (int k = 0; k < nl; k++) {
      mbsReal t = 0;
      for (int i = 0; i < 6; i++) t += T[6 * k + i] * d[i];
      yo[la + k] = t;
    }
  }
  if (f->nle) mbs_fcLoopRows(f, known, yo);
  return MBS_OK;
}

void mbs_fcPrecond(const mbsFlexCfs *f, const mbsReal *r, mbsReal *z) {
  for (int b = f->b0; b < f->b1; b++) {
    int nl = f->nlb[b], la = f->la[b];
    const mbsReal *Di = f->Dinv + 36 * b;
    MBS_FLOPS(2L * nl * nl);
    for (int i = 0; i < nl; i++) {
      mbsReal t = 0;
      for (int j = 0; j < nl; j++) t += Di[i * nl + j] * r[la + j];
      z[la + i] = t;
    }
  }
  if (f->nle) mbs_fcLoopPrecond(f, r, z);
}

double mbs_fcDotN(int n, const mbsReal *a, const mbsReal *b) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

// a . b over the owned rows, summed over the ranks (a failed sum gives NaN: no convergence)
double mbs_fcDot(const mbsFlexCfs *f, const mbsReal *a, const mbsReal *b) {
  double s = 0;
  MBS_FLOPS(2L * (f->l1 - f->l0));
  for (int i = f->l0; i < f->l1; i++) s += a[i] * b[i];
  if (mbs_fcReduce(f, &s, 1)) return NAN;
  return s;
}

// the explicit A on every rank (column by column from the operator, each rank its rows, then one
// sum) and b likewise: small models
static mbsErr mbs_fcAssemble(mbsFlexCfs *f) {
  int n = f->nl;
  if (!f->A && !(f->A = malloc(sizeof(mbsReal) * ((size_t)n * n + 1))))
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (assembled flexible A, %d rows)", n);
  memset(f->A, 0, sizeof(mbsReal) * (size_t)n * n);
  memset(f->z, 0, sizeof(mbsReal) * (size_t)n);
  for (int j = 0; j < n; j++) {
    f->z[j] = 1;
    MBS_CALL(mbs_fcApply(f, f->z, 0, f->q));
    f->z[j] = 0;
    for (int i = f->l0; i < f->l1; i++) f->A[(size_t)i * n + j] = f->q[i];
  }
  MBS_CALL(mbs_fcReduce(f, f->A, n * n));
  for (int i = 0; i < n; i++)
    if (i < f->l0 || i >= f->l1) f->b[i] = 0;
  return mbs_fcReduce(f, f->b, n);
}

mbsErr mbs_flexCfsBegin(mbsFlexCfs *f, const mbsReal *q, const mbsReal *y, const mbsReal *eta,
                        const mbsReal **b, int *l0, int *l1) {
  int n = f->nl;
  mbsErr e = mbs_fcPrepare(f, q, y, eta);
  if (f->comm.reduce) { // every rank must agree before the collective sweeps
    double bad = e ? 1 : 0;
    MBS_CALL(mbs_fcReduce(f, &bad, 1));
    if (bad > 0 && !e)
      e = mbs_errSet(MBS_ERR_NUMERIC, "flexible cfs: a block failed on another rank");
  }
  if (e) return e;
  memset(f->z, 0, sizeof(mbsReal) * ((size_t)n + 1));
  memset(f->b, 0, sizeof(mbsReal) * ((size_t)n + 1));
  MBS_CALL(mbs_fcApply(f, f->z, 1, f->b)); // b = -(the affine part at lam = 0)
  for (int i = 0; i < n; i++) f->b[i] = -f->b[i];
  *b = f->b, *l0 = f->l0, *l1 = f->l1;
  return MBS_OK;
}

mbsErr mbs_flexCfsOp(mbsFlexCfs *f, const mbsReal *x, mbsReal *y) {
  return mbs_fcApply(f, x, 0, y);
}

void mbs_flexCfsPrec(const mbsFlexCfs *f, const mbsReal *r, mbsReal *z) {
  mbs_fcPrecond(f, r, z);
}

mbsErr mbs_flexCfsAccel(mbsFlexCfs *f, int method, double tol, const mbsReal *q, const mbsReal *y,
                        const mbsReal *eta, mbsReal *ydd, int *it) {
  int n = f->nl, l0, l1;
  const mbsReal *b;
  *it = 0;
  MBS_CHECK(method >= 0 && method < MBS_FCFS_PETSC, MBS_ERR_INTERNAL, "flexible cfs: method");
  MBS_CALL(mbs_flexCfsBegin(f, q, y, eta, &b, &l0, &l1));
  if (method == MBS_FCFS_JCG) {
    MBS_CALL(mbs_fcCG(f, tol, it));
  } else if (method == MBS_FCFS_JACOBI || method == MBS_FCFS_CHEB) {
    MBS_CALL(mbs_fcPoly(f, method == MBS_FCFS_CHEB, tol, it));
  } else {
    MBS_CALL(mbs_fcAssemble(f));
    if (method == MBS_FCFS_DIRECT) {
      int nd; // redundant closure equations dropped (their lam = 0; docs/flexible.md 15.2)
      memcpy(f->x, f->b, sizeof(mbsReal) * (size_t)n);
      MBS_FLOPS(mbs_flopChol(n) + mbs_flopCholSolve(n));
      if (mbs_fcCholDrop(n, n - f->nle, f->m->opt.rank_tol, f->A, f->x, &nd))
        return mbs_errSet(MBS_ERR_NUMERIC, "flexible direct: A is not positive definite");
      mbs_faCholSolve(n, f->A, f->x);
    } else {
      MBS_CALL(mbs_fcSOR(f, method == MBS_FCFS_GS ? 1.0 : 1.3, tol, it));
    }
  }
  return mbs_flexCfsEnd(f, f->x, ydd);
}

mbsErr mbs_flexCfsEnd(mbsFlexCfs *f, const mbsReal *x, mbsReal *ydd) {
  const mbsModel *m = f->m;
  const mbsFlexAba *a = f->a;
  // the accelerations at lam: zdot_b, then q'' = (S^T S)^-1 S^T (zdot_b6 - P zdot_p - c), each
  // rank its bodies' entries, summed
  MBS_CALL(mbs_fcApply(f, x, 1, f->q));
  memset(ydd, 0, sizeof(mbsReal) * (size_t)f->N);
  for (int b = f->b0; b < f->b1; b++) {
    int nd = m->body_dofnum[b], d0 = m->body_dofadr[b], p = m->body_parent[b];
    mbsReal ap[6], d[6], sd[6];
    const mbsReal *zd = f->Q + a->ov[b], *S = a->S + 36 * b, *Si = f->SSi + 36 * b;
    MBS_FLOPS(mbs_flopFcEnd(p < 0 ? 0 : a->nz[p], nd));
    mbs_faApply(a, b, p < 0 ? NULL : f->Q + a->ov[p], a->c + 6 * b, ap);
    for (int i = 0; i < 6; i++) d[i] = zd[i] - ap[i];
    for (int k = 0; k < nd; k++) {
      sd[k] = 0;
      for (int i = 0; i < 6; i++) sd[k] += S[6 * k + i] * d[i];
    }
    for (int k = 0; k < nd; k++) {
      mbsReal t = 0;
      for (int j = 0; j < nd; j++) t += Si[nd * k + j] * sd[j];
      ydd[d0 + k] = t;
    }
    for (int j = 0; j < a->nz[b] - 6; j++) ydd[a->col[b] + j] = zd[6 + j];
  }
  return mbs_fcReduce(f, ydd, f->N);
}
