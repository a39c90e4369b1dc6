/// \file loops_asm.c
/// Assembly of q0 onto the loops, projection of q and qd (mbs_loopProject, mbs_loopAssemble) and
/// inverse dynamics with actuated joints (mbs_loopInverse), docs/loops.md.
#include "loops_private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_joint.h"
#include "spatial.h"

// A at the current position stage (articulated factors from positions only), factored
static mbsErr mbs_loopFactorHere(const mbsModel *m, mbsWork *w) {
  struct mbsLoopWork *lw = w->loop;
  if (!mbs_abaFactor(m, w))
    return mbs_errSet(MBS_ERR_NUMERIC, "loops: singular articulated inertia");
  mbs_loopMatrixAba(m, w, lw);
  mbs_loopFactorA(m, lw);
  return MBS_OK;
}

// the mass-metric correction of x (n closure values): y = -H^-1 G^T A^+ x into lw->dz
static void mbs_loopCorrect(const mbsModel *m, const mbsWork *w, struct mbsLoopWork *lw,
                            const mbsReal *x) {
  mbs_loopMinNorm(lw, x, lw->nu);
  for (int i = 0; i < lw->n; i++) lw->nu[i] = -lw->nu[i];
  memset(lw->fz, 0, 6 * (size_t)m->nbody * sizeof(mbsReal));
  mbs_loopAddWrench(m, lw, lw->nu, lw->fz);
  mbs_loopSweep(m, w, lw, -1);
  memset(lw->fz, 0, 6 * (size_t)m->nbody * sizeof(mbsReal));
}

static void mbs_loopErr(const mbsModel *m, const struct mbsLoopWork *lw, const mbsReal *c,
                        mbsReal *pos, mbsReal *rot) {
  *pos = *rot = 0;
  for (int i = 0; i < lw->n; i++) {
    int t = m->loop_type[lw->eq_loop[i]];
    if (mbs_loopEqIsPosition(t, lw->eq_row[i]))
      *pos = fmax(*pos, fabs(c[i]));
    else
      *rot = fmax(*rot, fabs(c[i]));
  }
}

mbsErr mbs_loopProject(const mbsModel *m, mbsState *s, mbsWork *w, int maxit, mbsLoopProj *info) {
  struct mbsLoopWork *lw = w->loop;
  MBS_CHECK(
      lw && lw->G, MBS_ERR_INTERNAL,
      "mbs_loopProject: the workspace has no whole-model loop solver (a distributed loop model)");
  memset(info, 0, sizeof *info);
  int nv = m->nv;
  mbsReal tol = m->opt.closure_tol;
  // positions: Newton-Raphson, G dq = -c in the mass metric
  for (int it = 0;; it++) {
    mbs_fwdPosition(m, s, w);
    mbs_loopAll(m, w, lw, 0);
    mbsReal ep, er;
    mbs_loopErr(m, lw, lw->c, &ep, &er);
    if (it == 0) info->c_pos = ep, info->c_rot = er;
    info->c_pos1 = ep, info->c_rot1 = er;
    if (!(fmax(ep, er) > tol) || !isfinite(ep + er)) {
      info->converged = isfinite(ep + er);
      break;
    }
    if (it >= maxit) break;
    MBS_CALL(mbs_loopFactorHere(m, w));
    mbs_loopCorrect(m, w, lw, lw->c);
    for (int d = 0; d < nv; d++) info->dq_max = fmax(info->dq_max, fabs(lw->dz[d]));
    mbs_integratePos(m, s->q, lw->dz, 1, s->q);
    info->iterations = it + 1;
  }
  // rates: G qd = 0 in the mass metric, at the final positions (A factored there)
  mbs_fwdVelocity(m, s, w);
  mbs_loopAll(m, w, lw, 1);
  MBS_CALL(mbs_loopFactorHere(m, w));
  mbs_loopCorrect(m, w, lw, lw->cdot);
  for (int d = 0; d < nv; d++) {
    info->dqd_max = fmax(info->dqd_max, fabs(lw->dz[d]));
    s->qd[d] += lw->dz[d];
  }
  return MBS_OK;
}

// The velocity transformation at the assembled q0 (mbsLoopAssembly.vmap; seed 000 eqs. 15-18):
// G qd = 0 split into dependent and independent rates, G_d qd_d = -G_i qd_i. The dependent dofs
// are picked greedily from the last dof backwards (the coordinates nearest the cut joints, as
// seed 000's example picks theta3 and theta4 and keeps theta2): a column joins when its part
// orthogonal to the chosen ones (Gram-Schmidt, twice) keeps more than rank_tol of its norm and of
// the largest column's. With G_d = Q R, E = -R^-1 Q^T G_i. Stops at the rank the projection found.
static mbsErr mbs_loopVelocityMap(const mbsModel *m, mbsState *s, mbsWork *w, mbsLoopAssembly *as) {
  struct mbsLoopWork *lw = w->loop;
  int n = lw->n, nv = m->nv, r = 0;
  size_t nn = (size_t)(n > 0 ? n : 1);
  mbs_fwdPosition(m, s, w);
  mbs_loopAll(m, w, lw, 0);
  mbs_loopJacobian(m, w, lw->G);
  mbsReal *Q = malloc(nn * (size_t)(as->rank + 1) * sizeof(mbsReal)),
          *v = malloc(nn * sizeof(mbsReal));
  mbsReal *R = calloc((size_t)(as->rank + 1) * (size_t)(as->rank + 1), sizeof(mbsReal));
  int *dep = calloc((size_t)nv + 1, sizeof(int));
  as->vdep = malloc(sizeof(int) * (size_t)(as->rank + 1));
  as->vind = malloc(sizeof(int) * (size_t)(nv + 1));
  as->vmap = calloc((size_t)(as->rank + 1) * (size_t)(nv + 1), sizeof(mbsReal));
  mbsErr e = MBS_OK;
  if (!Q || !v || !R || !dep || !as->vdep || !as->vind || !as->vmap) {
    e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    goto done;
  }
  mbsReal cmax = 0, tol = m->opt.rank_tol;
  for (int d = 0; d < nv; d++) {
    mbsReal c = 0;
    for (int i = 0; i < n; i++) c += lw->G[(size_t)i * nv + d] * lw->G[(size_t)i * nv + d];
    cmax = fmax(cmax, sqrt(c));
  }
  int *col = as->vind; // (scratch: the chosen columns in the order chosen)
  for (int d = nv - 1; d >= 0 && r < as->rank; d--) {
    mbsReal c0 = 0, c = 0;
    for (int i = 0; i < n; i++) v[i] = lw->G[(size_t)i * nv + d], c0 += v[i] * v[i];
    c0 = sqrt(c0);
    if (!(c0 > tol * cmax)) continue;
    mbsReal *rr = R + (size_t)r * (size_t)(as->rank + 1); // column r of R, stored as a row
    for (int k = 0; k < r; k++) rr[k] = 0;
    for (int pass = 0; pass < 2; pass++)
      for (int k = 0; k < r; k++) {
        const mbsReal *q = Q + (size_t)k * nn;
        mbsReal t = 0;
        for (int i = 0; i < n; i++) t += q[i] * v[i];
        for (int i = 0; i < n; i++) v[i] -= t * q[i];
        rr[k] += t;
      }
    for (int i = 0; i < n; i++) c += v[i] * v[i];
    c = sqrt(c);
    if (!(c > tol * c0 && c > tol * cmax)) continue;
    for (int i = 0; i < n; i++) Q[(size_t)r * nn + i] = v[i] / c;
    rr[r] = c;
    col[r++] = d, dep[d] = 1;
  }
  // E = -R^-1 Q^T G_i, rows in the order chosen, then sorted by dof
  int ni = 0;
  mbsReal *Et = calloc((size_t)(r + 1) * (size_t)(nv + 1), sizeof(mbsReal));
  if (!Et) {
    e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    goto done;
  }
  for (int d = 0; d < nv; d++) {
    if (dep[d]) continue;
    mbsReal *x = Et + (size_t)ni * (size_t)(r + 1); // column ni of E
    for (int k = 0; k < r; k++) {
      mbsReal t = 0;
      for (int i = 0; i < n; i++) t += Q[(size_t)k * nn + i] * lw->G[(size_t)i * nv + d];
      x[k] = -t;
    }
    for (int k = r - 1; k >= 0; k--) { // back substitution, R upper: R[k][j] = row j's entry k
      mbsReal t = x[k];
      for (int j = k + 1; j < r; j++) t -= R[(size_t)j * (size_t)(as->rank + 1) + k] * x[j];
      x[k] = t / R[(size_t)k * (size_t)(as->rank + 1) + k];
    }
    ni++;
  }
  // the dependent dofs ascending and E's rows with them
  int nd = 0;
  for (int d = 0; d < nv; d++)
    if (dep[d]) as->vdep[nd++] = d;
  for (int a = 0; a < nd; a++) {
    int k = 0;
    while (col[k] != as->vdep[a]) k++;
    for (int c = 0; c < ni; c++)
      as->vmap[(size_t)a * (size_t)ni + c] = Et[(size_t)c * (size_t)(r + 1) + k];
  }
  for (int d = 0, c = 0; d < nv; d++)
    if (!dep[d]) as->vind[c++] = d;
  as->nvdep = nd;
  free(Et);
done:
  free(Q), free(v), free(R), free(dep);
  if (e) {
    free(as->vdep), free(as->vind), free(as->vmap);
    as->vdep = as->vind = NULL, as->vmap = NULL, as->nvdep = 0;
  }
  return e;
}

mbsErr mbs_loopAssemble(mbsModel *m) {
  mbsLoopAssembly *as = &m->loop_asm;
  free(as->redundant), free(as->skip), free(as->vdep), free(as->vind), free(as->vmap);
  memset(as, 0, sizeof *as);
  if (m->nloop == 0) return MBS_OK;
  mbsState *s = NULL;
  mbsWork *w = NULL;
  mbsErr e = mbs_stateCreate(m, &s);
  if (!e) e = mbs_workCreate(m, &w);
  mbsLoopProj pj;
  if (!e) e = mbs_loopProject(m, s, w, 50, &pj);
  if (e == MBS_ERR_NUMERIC) { // the iterates left the model (a singular factor): cannot close
    char why[512];
    snprintf(why, sizeof why, "%s", mbs_errMsg());
    e = mbs_errSet(MBS_ERR_INPUT,
                   "the loops cannot be closed from q0: the Newton-Raphson iterations diverged "
                   "(%s; the closure error was %.3g at q0): check the loop frames, the link "
                   "geometry and q0",
                   why, fmax(pj.c_pos, pj.c_rot));
  }
  if (!e && !pj.converged) {
    // the worst equation
    struct mbsLoopWork *lw = w->loop;
    int worst = 0;
    for (int i = 1; i < lw->n; i++)
      if (!(fabs(lw->c[i]) <= fabs(lw->c[worst]))) worst = i;
    int k = lw->eq_loop[worst];
    e = mbs_errSet(MBS_ERR_INPUT,
                   "the loops cannot be closed from q0: after %d Newton-Raphson iterations the "
                   "closure error is %.3g (loop \"%s\", equation %s; it was %.3g at q0): check the "
                   "loop frames, the link geometry and q0",
                   pj.iterations, fabs(lw->c[worst]), m->loop_name[k],
                   mbs_loopEqName(m->loop_type[k], lw->eq_row[worst]), fmax(pj.c_pos, pj.c_rot));
  }
  if (!e) {
    memcpy(m->q0, s->q, (size_t)m->nq * sizeof(mbsReal));
    memcpy(m->qd0, s->qd, (size_t)m->nv * sizeof(mbsReal));
    as->done = 1;
    as->iterations = pj.iterations;
    as->c0_pos = pj.c_pos, as->c0_rot = pj.c_rot;
    as->c_pos = pj.c_pos1, as->c_rot = pj.c_rot1;
    as->dq_max = pj.dq_max, as->dqd_max = pj.dqd_max;
    // rank of the closure equations at the assembled q0 (the factor of the rate projection)
    as->rank = w->loop->rank;
    as->nredundant = w->loop->n - w->loop->rank;
    as->redundant = malloc(sizeof(int) * (size_t)(as->nredundant + 1));
    // the zero rows known in advance there (the unit solves a loop solve leaves out; cpa): the
    // rate projection's factorization just found them at these positions
    const struct mbsLoopWork *lw = w->loop;
    as->nskip = lw->nskip;
    as->skip = malloc((size_t)lw->n + 1);
    if (!as->redundant || !as->skip) {
      e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    } else {
      mbs_loopRedundant(w, as->redundant);
      memcpy(as->skip, lw->skip, (size_t)lw->n);
    }
  }
  if (!e && m->nv <= MBS_LOOP_VMAP_MAX) e = mbs_loopVelocityMap(m, s, w, as);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  return e;
}

// ---------------------------------------------------------------- inverse dynamics

void mbs_loopFactorCols(const mbsModel *m, struct mbsLoopWork *lw, const int *sel) {
  int n = lw->n, nv = m->nv;
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++) {
      mbsReal s = 0;
      const mbsReal *gi = lw->G + (size_t)i * nv, *gj = lw->G + (size_t)j * nv;
      for (int d = 0; d < nv; d++)
        if (!sel || sel[d]) s += gi[d] * gj[d];
      lw->A[(size_t)i * n + j] = lw->A[(size_t)j * n + i] = s;
    }
  mbs_loopFactor(lw, m->opt.rank_tol, NULL);
}

// x[d] = sum_i G_id mu_i for the selected columns (the minimum-norm Gu^+ r with mu = A^+ r)
static void mbs_loopGuT(const mbsModel *m, const struct mbsLoopWork *lw, const int *sel,
                        const mbsReal *mu, mbsReal *x) {
  for (int d = 0; d < m->nv; d++) {
    x[d] = 0;
    if (!sel[d]) continue;
    for (int i = 0; i < lw->n; i++) x[d] += lw->G[(size_t)i * m->nv + d] * mu[i];
  }
}

mbsErr mbs_loopInverse(const mbsModel *m, mbsState *s, mbsWork *w, const int *act, mbsReal *qdd,
                       mbsReal *tau, mbsReal *lam, mbsReal *resid) {
  struct mbsLoopWork *lw = w->loop;
  MBS_CHECK(
      lw && lw->G, MBS_ERR_INTERNAL,
      "mbs_loopInverse: the workspace has no whole-model loop solver (a distributed loop model)");
  int n = lw->n, nv = m->nv, nu = 0;
  int *un = calloc((size_t)nv + 1, sizeof *un), *all = calloc((size_t)nv + 1, sizeof *all);
  mbsReal *x = lw->vq, *f = lw->vq2;
  MBS_CHECK(un && all, MBS_ERR_NOMEM, "out of memory");
  for (int d = 0; d < nv; d++) un[d] = !act[d], all[d] = 1, nu += un[d];
  mbsErr e = MBS_OK;
  // positions: Newton-Raphson on the unactuated coordinates, Gu dq_u = -c (minimum norm)
  mbsReal ep = 0, er = 0;
  for (int it = 0; it <= 50; it++) {
    mbs_fwdPosition(m, s, w);
    mbs_loopAll(m, w, lw, 0);
    mbs_loopErr(m, lw, lw->c, &ep, &er);
    if (!(fmax(ep, er) > m->opt.closure_tol) || it == 50) break;
    mbs_loopJacobian(m, w, lw->G);
    mbs_loopFactorCols(m, lw, un);
    mbs_loopMinNorm(lw, lw->c, lw->nu);
    mbs_loopGuT(m, lw, un, lw->nu, x);
    for (int d = 0; d < nv; d++) x[d] = -x[d];
    mbs_integratePos(m, s->q, x, 1, s->q);
  }
  if (fmax(ep, er) > m->opt.closure_tol || !isfinite(ep + er))
    e = mbs_errSet(MBS_ERR_INPUT,
                   "inverse: the loops cannot be closed with the actuated coordinates of t = %g "
                   "(closure error %.3g after 50 Newton-Raphson iterations): the prescribed "
                   "motion leaves the mechanism's reach",
                   s->time, fmax(ep, er));
  // the actuated dofs must determine the others: rank(Gu) = #unactuated = rank(G)
  mbs_loopJacobian(m, w, lw->G);
  int rank_all = 0;
  if (!e) {
    mbs_loopFactorCols(m, lw, all);
    rank_all = lw->rank;
    mbs_loopFactorCols(m, lw, un);
    if (lw->rank < nu)
      e = mbs_errSet(MBS_ERR_INPUT,
                     "inverse.actuated: the actuated joints do not determine the motion (the "
                     "mechanism has %d degree(s) of freedom, %d dof(s) are actuated)",
                     nv - rank_all, nv - nu);
    else if (lw->rank < rank_all)
      e = mbs_errSet(MBS_ERR_INPUT,
                     "inverse.actuated: the actuated joints are not independent: the loops tie "
                     "them together (the mechanism has %d degree(s) of freedom, %d dof(s) are "
                     "actuated)",
                     nv - rank_all, nv - nu);
  }
  if (!e) {
    // rates: Gu qd_u = -Ga qd_a (the loops' rates with qd_u = 0)
    for (int d = 0; d < nv; d++)
      if (un[d]) s->qd[d] = 0;
    mbs_fwdVelocity(m, s, w);
    mbs_loopAll(m, w, lw, 1);
    memcpy(lw->rhs, lw->cdot, (size_t)n * sizeof(mbsReal));
    mbs_loopMinNorm(lw, lw->rhs, lw->nu);
    mbs_loopGuT(m, lw, un, lw->nu, x);
    for (int d = 0; d < nv; d++)
      if (un[d]) s->qd[d] = -x[d];
    // accelerations: Gu qdd_u = kappa - D^T a(qdd with qdd_u = 0) (no Baumgarte terms)
    mbs_fwdVelocity(m, s, w);
    mbs_loopAll(m, w, lw, 1);
    mbsReal ag[6];
    mbs_baseAccel(m, 1, ag);
    for (int d = 0; d < nv; d++)
      if (un[d]) qdd[d] = 0;
    mbs_fwdForces(m, w);
    mbs_rnea(m, w, qdd);
    for (int i = 0; i < n; i++) {
      // kappa without the Baumgarte terms: -c'' of the motion with a = 0
      int k = lw->eq_loop[i];
      mbsReal ka[6];
      int b1 = m->loop_body[2 * k], b2 = m->loop_body[2 * k + 1];
      mbsLoopSide s1 = {NULL, NULL, NULL}, s2 = {NULL, NULL, NULL};
      if (b1 >= 0) s1.R = w->xmat + 9 * b1, s1.x = w->xpos + 3 * b1, s1.v = w->cvel + 6 * b1;
      if (b2 >= 0) s2.R = w->xmat + 9 * b2, s2.x = w->xpos + 3 * b2, s2.v = w->cvel + 6 * b2;
      mbsu_loopClosure(m->loop_type[k], m->loop_frame + 24 * k, m->loop_frame + 24 * k + 12, &s1,
                       &s2, NULL, NULL, NULL, NULL, ka);
      lw->rhs[i] = ka[lw->eq_row[i]] - mbs_loopDotAcc(m, lw, i, w->acc, ag);
    }
    mbs_loopMinNorm(lw, lw->rhs, lw->nu);
    mbs_loopGuT(m, lw, un, lw->nu, x);
    for (int d = 0; d < nv; d++)
      if (un[d]) qdd[d] = x[d];
    // forces: RNEA(q, qd, qdd) - joint forces = tau + G^T lam, tau = 0 on the unactuated dofs
    mbs_rnea(m, w, qdd);
    for (int d = 0; d < nv; d++) f[d] = w->qfrc_inv[d] - w->qfrc[d];
    for (int i = 0; i < n; i++) { // Gu f_u
      lw->rhs[i] = 0;
      for (int d = 0; d < nv; d++)
        if (un[d]) lw->rhs[i] += lw->G[(size_t)i * nv + d] * f[d];
    }
    mbs_loopMinNorm(lw, lw->rhs, lam);
    mbsReal num = 0, den = 0;
    for (int d = 0; d < nv; d++) {
      mbsReal gl = 0;
      for (int i = 0; i < n; i++) gl += lw->G[(size_t)i * nv + d] * lam[i];
      tau[d] = un[d] ? 0 : f[d] - gl;
      if (un[d]) num = fmax(num, fabs(f[d] - gl));
      den = fmax(den, fabs(f[d]));
    }
    *resid = num / (den > 1e-12 ? den : 1e-12);
  }
  free(un);
  free(all);
  return e;
}
