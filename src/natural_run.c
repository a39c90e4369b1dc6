/// \file natural_run.c
/// Motion in natural coordinates (docs/natural.md 7): the state is (p, ṗ) itself, the joint rows
/// are recorded once at the assembled initial state (their vectors and values, so they can be
/// evaluated at any p: position-level constraints g(p) = 0), the accelerations come from the
/// augmented system, and after each step p and ṗ are projected back onto g(p) = 0 and
/// G ṗ = 0 (Gauss–Newton with minimum-norm corrections, the dependent rows dropped by the same
/// pivoted Cholesky). Both in O(n) by the block elimination (natural_tree.c, natural_runon.c: the
/// projection with the identity in place of M); the dense system (dense = 1) is the reference of
/// the tests (O(n³), small models). Forces:
/// gravity, the point-to-point spring-dampers (functions of p and ṗ) and the joint forces,
/// springs and dampers (functions of q, q̇ recovered from p, ṗ: natural_coords.c). Two integrators:
/// fixed-step RK4 (mbs_naturalSimStep, projection by the caller) and an adaptive Dormand–Prince
/// 5(4) with a projection tolerance (mbs_naturalSimAdvance, docs/natural.md 7.1).
#include "mbspar/mbs_solver.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_joint.h"
#include "natural_private.h"
#include "spatial.h"
#include "body.h"

struct mbsNaturalSim {
  const mbsModel *m;
  int nb, np, nrt, nl, nrec_t, nrec; // rows: 6 nb rigid + tree joints (nrt), loops (nl)
  mbsNatRec *rec;                    // the tree joints' rows, then the cut joints'
  mbsNat s;                          // dense assembly (s.p, s.pd: the state)
  int *piv;
  double *Z, *S, *r, *mu;                     // loop solve scratch
  double *G, *g, *W, *y;                      // projection: (R x np), (R), (R x R), (R)
  double *k1, *k2, *k3, *k4, *p0, *pd0, *pdd; // RK4 stages (2 np each)
  double *dk[7], *y0, *y1, *yt;               // DP5 stages and states y = (p, ṗ) (2 np each)
  double h;                                   // DP5: the next step (0: not chosen yet)
  int fsal;                                   // DP5: dk[0] is f at the current state
  mbsNaturalSimStats st;                      // counters
  // joint coordinates (docs/natural.md 11): q, q̇ recovered from (p, ṗ) into qs; qref the q of
  // the last accepted state (angles continue from it); w the joint kinematics at qs for the joint
  // forces (jforces: the model has joint forces, springs or dampers) and for q̈
  mbsState *qs;
  mbsWork *w;
  double *qref;
  int jforces;
  // O(n) (dense 0, docs/natural.md 12): the elimination with the mass matrices (nwM) and with the
  // identity (nwI, the projection); rec0 (nb + 1) the tree records' ranges by body; g and y hold
  // the rows' values and products in natural_runon.c's layout (12 nb + nl)
  int dense;
  mbsNaturalWork *nwM, *nwI;
  int *rec0;
  mbsNaturalSolveFn solve;     // (not NULL: the evaluations' solve, e.g. distributed over ranks)
  mbsNaturalCorrectFn correct; // (not NULL: the projection's corrections, likewise)
  void *solve_ctx;
};

mbsErr mbs_naturalSimCreate(const mbsModel *m, const mbsState *st, mbsWork *w,
                            mbsNaturalSim **out) {
  return mbs_naturalSimCreateOpt(m, st, w, 0, out);
}

mbsErr mbs_naturalSimCreateOpt(const mbsModel *m, const mbsState *st, mbsWork *w, int dense,
                               mbsNaturalSim **out) {
  *out = NULL;
  MBS_CHECK(!m->sub, MBS_ERR_UNSUPPORTED, "model.formulation = natural needs the whole model");
  mbsNaturalSim *ns = calloc(1, sizeof *ns);
  MBS_CHECK(ns, MBS_ERR_NOMEM, "out of memory");
  for (int d = 0; d < m->nv; d++)
    if (m->dof_force[d] != 0 || m->dof_stiffness[d] != 0 || m->dof_damping[d] != 0) ns->jforces = 1;
  int nb = m->nbody, np = 12 * nb, nrt = 6 * nb + m->nlam, nl = m->nlam_loop, n = np + nrt,
      R = nrt + nl;
  size_t N = dense ? (size_t)n : 0, RD = dense ? (size_t)R : 0, NPD = dense ? (size_t)np : 0;
  ns->m = m, ns->nb = nb, ns->np = np, ns->nrt = nrt, ns->nl = nl, ns->dense = dense;
  ns->rec = calloc((size_t)(2 * nb + 2 * m->nloop) * 6 + 1, sizeof *ns->rec);
  ns->rec0 = calloc((size_t)nb + 1, sizeof(int));
  ns->s.n = n, ns->s.np = np, ns->s.nrt = nrt;
  ns->s.A = calloc(N * N + 1, sizeof(double));
  ns->s.b = calloc(N + 1, sizeof(double));
  ns->s.L = calloc((size_t)nl * NPD + 1, sizeof(double));
  ns->s.gl = calloc((size_t)nl + 1, sizeof(double));
  ns->s.p = calloc((size_t)np, sizeof(double));
  ns->s.pd = calloc((size_t)np, sizeof(double));
  ns->piv = calloc(N + 1, sizeof(int));
  ns->Z = calloc((size_t)nl * N + 1, sizeof(double));
  ns->S = calloc((size_t)nl * (size_t)nl + 1, sizeof(double));
  ns->r = calloc((size_t)nl + 1, sizeof(double));
  ns->mu = calloc((size_t)nl + 1, sizeof(double));
  ns->G = calloc(RD * NPD + 1, sizeof(double));
  ns->g = calloc((size_t)R + 12 * (size_t)nb + (size_t)nl, sizeof(double));
  ns->W = calloc(RD * RD + 1, sizeof(double));
  ns->y = calloc((size_t)R + 12 * (size_t)nb + (size_t)nl, sizeof(double));
  double **st6[] = {&ns->k1,    &ns->k2,    &ns->k3,    &ns->k4,    &ns->p0,    &ns->pd0,
                    &ns->pdd,   &ns->dk[0], &ns->dk[1], &ns->dk[2], &ns->dk[3], &ns->dk[4],
                    &ns->dk[5], &ns->dk[6], &ns->y0,    &ns->y1,    &ns->yt};
  int ok = ns->rec && ns->rec0 && ns->s.A && ns->s.b && ns->s.L && ns->s.gl && ns->s.p &&
           ns->s.pd && ns->piv && ns->Z && ns->S && ns->r && ns->mu && ns->G && ns->g && ns->W &&
           ns->y;
  for (int i = 0; i < 17; i++) ok = ok && (*st6[i] = calloc(2 * (size_t)np, sizeof(double)));
  ok = ok && !mbs_stateCreate(m, &ns->qs) && !mbs_workCreate(m, &ns->w) &&
       (ns->qref = calloc((size_t)m->nq + 1, sizeof(double)));
  if (ok && !dense) { // the O(n) workspaces; the projection's has K = I₄ (M replaced by I)
    ok = !mbs_naturalWorkCreate(m, &ns->nwM) && !mbs_naturalWorkCreate(m, &ns->nwI);
    for (int b = 0; ok && b < nb; b++)
      for (int i = 0; i < 16; i++) ns->nwI->K[16 * b + i] = i % 5 == 0;
  }
  if (!ok) {
    mbs_naturalSimDestroy(&ns);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (natural coordinates)");
  }
  // the assembled initial state and its rows
  mbs_fwdPosition(m, st, w);
  mbs_fwdVelocity(m, st, w);
  mbs_natCoords(m, w, &ns->s);
  ns->s.f = dense ? ns->s.b : ns->nwM->s.f; // the forces go where the solve reads them
  ns->s.rec = ns->rec;
  for (int b = 0; b < nb; b++) {
    ns->rec0[b] = ns->s.nrec;
    mbs_natJoint(m, w, &ns->s, b);
  }
  ns->nrec_t = ns->rec0[nb] = ns->s.nrec;
  for (int k = 0; k < m->nloop; k++) mbs_natLoop(m, &ns->s, k);
  ns->nrec = ns->s.nrec;
  ns->s.rec = NULL;
  memcpy(ns->qref, st->q, sizeof(double) * (size_t)m->nq);
  *out = ns;
  return MBS_OK;
}

void mbs_naturalSimDestroy(mbsNaturalSim **pns) {
  mbsNaturalSim *ns = *pns;
  if (!ns) return;
  free(ns->rec), free(ns->s.A), free(ns->s.b), free(ns->s.L), free(ns->s.gl), free(ns->s.p);
  free(ns->s.pd), free(ns->piv), free(ns->Z), free(ns->S), free(ns->r), free(ns->mu);
  free(ns->G), free(ns->g), free(ns->W), free(ns->y);
  free(ns->k1), free(ns->k2), free(ns->k3), free(ns->k4), free(ns->p0), free(ns->pd0);
  free(ns->pdd), free(ns->y0), free(ns->y1), free(ns->yt);
  for (int i = 0; i < 7; i++) free(ns->dk[i]);
  mbs_stateDestroy(&ns->qs);
  mbs_workDestroy(&ns->w);
  free(ns->qref);
  free(ns->rec0);
  mbs_naturalWorkDestroy(&ns->nwM);
  mbs_naturalWorkDestroy(&ns->nwI);
  free(ns);
  *pns = NULL;
}

const double *mbs_naturalSimState(const mbsNaturalSim *ns, const double **pd) {
  if (pd) *pd = ns->s.pd;
  return ns->s.p;
}

// q, q̇ of the current (p, ṗ) into qs, continued from qref; qref follows (an accepted state)
static void mbs_nsSync(mbsNaturalSim *ns) {
  mbs_naturalJointCoords(ns->m, ns->s.p, ns->s.pd, ns->qref, ns->qs->q, ns->qs->qd);
  memcpy(ns->qref, ns->qs->q, sizeof(double) * (size_t)ns->m->nq);
}

void mbs_naturalSimJoint(mbsNaturalSim *ns, mbsReal *q, mbsReal *qd) {
  mbs_nsSync(ns);
  if (q) memcpy(q, ns->qs->q, sizeof(double) * (size_t)ns->m->nq);
  if (qd) memcpy(qd, ns->qs->qd, sizeof(double) * (size_t)ns->m->nv);
}

// the whole system at the current s.p, s.pd: [M Gᵀ; G 0] (tree) in A, the loops' rows in L
static void mbs_nsAssemble(mbsNaturalSim *ns) {
  mbsNat *s = &ns->s;
  int n = s->n;
  memset(s->A, 0, sizeof(double) * (size_t)n * (size_t)n);
  memset(s->b, 0, sizeof(double) * (size_t)n);
  memset(s->L, 0, sizeof(double) * (size_t)ns->nl * (size_t)ns->np);
  mbs_natDenseBodies(ns->m, s);
  mbs_natReplay(s, ns->rec, ns->nrec);
}

// the body point r (body coordinates) of body b (-1: the ground) at p, ṗ: x = C_r p, ẋ = C_r ṗ
static void mbs_nsPoint(const mbsNat *s, int b, const double *r, double *x, double *xd) {
  for (int i = 0; i < 3; i++)
    x[i] = b < 0 ? r[i] : s->p[12 * b + i], xd[i] = b < 0 ? 0 : s->pd[12 * b + i];
  if (b < 0) return;
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < 3; i++)
      x[i] += r[k] * s->p[12 * b + 3 + 3 * k + i], xd[i] += r[k] * s->pd[12 * b + 3 + 3 * k + i];
}

// spring-damper j at s.p, s.pd: the unit direction u from point 1 to point 2, length, its rate
static void mbs_nsSpring(const mbsNaturalSim *ns, int j, double u[3], double *l, double *ld) {
  const mbsModel *m = ns->m;
  double x1[3], x2[3], v1[3], v2[3];
  mbs_nsPoint(&ns->s, m->force_body[2 * j], m->force_point + 6 * j, x1, v1);
  mbs_nsPoint(&ns->s, m->force_body[2 * j + 1], m->force_point + 6 * j + 3, x2, v2);
  for (int i = 0; i < 3; i++) u[i] = x2[i] - x1[i], v2[i] -= v1[i];
  *l = sqrt(mbsu_dot3(u, u));
  for (int i = 0; i < 3; i++) u[i] = *l > 0 ? u[i] / *l : 0; // coincident points: no force
  *ld = mbsu_dot3(u, v2);
}

// s.f += the spring-dampers' generalised forces C_rᵀ F (docs/natural.md 2.2): the tension T
// = k (l - l0) + c l̇ pulls point 1 towards point 2 and point 2 towards point 1
static void mbs_nsSprings(mbsNaturalSim *ns) {
  const mbsModel *m = ns->m;
  for (int j = 0; j < m->nforce; j++) {
    double u[3], l, ld;
    mbs_nsSpring(ns, j, u, &l, &ld);
    const mbsReal *prm = m->force_prm + 3 * j;
    double T = prm[0] * (l - prm[1]) + prm[2] * ld;
    for (int e = 0; e < 2; e++) {
      int b = m->force_body[2 * j + e];
      const mbsReal *r = m->force_point + 6 * j + 3 * e;
      double sg = e ? -T : T, rho[4] = {1, r[0], r[1], r[2]};
      if (b < 0) continue;
      for (int al = 0; al < 4; al++)
        for (int i = 0; i < 3; i++) ns->s.f[12 * b + 3 * al + i] += rho[al] * sg * u[i];
    }
  }
}

// the closure rows' pivot tolerance of the evaluations (solver.rank_tol)
static double mbs_nsRankTol(const mbsNaturalSim *ns) {
  return ns->m->opt.rank_tol > 0 ? ns->m->opt.rank_tol : 1e-10;
}

// p̈ at (p, ṗ) into pdd
static mbsErr mbs_nsAccel(mbsNaturalSim *ns, const double *p, const double *pd, double *pdd) {
  mbsNat *s = &ns->s;
  memcpy(s->p, p, sizeof(double) * (size_t)ns->np);
  memcpy(s->pd, pd, sizeof(double) * (size_t)ns->np);
  ns->st.evals++;
  if (ns->dense)
    mbs_nsAssemble(ns);
  else { // O(n): the forces into nwM->s.f (= s->f), the recorded rows joint by joint
    mbsNaturalWork *nw = ns->nwM;
    memcpy(nw->s.p, p, sizeof(double) * (size_t)ns->np);
    memcpy(nw->s.pd, pd, sizeof(double) * (size_t)ns->np);
    memset(s->f, 0, sizeof(double) * (size_t)ns->np);
    mbs_natGravity(ns->m, &nw->s);
    mbs_ntReplay(ns->m, nw, ns->rec, ns->rec0, ns->nrec);
  }
  mbs_nsSprings(ns);
  if (ns->jforces) { // q, q̇ from p, ṗ, then the joint formulation's joint forces at them
    mbs_naturalJointCoords(ns->m, p, pd, ns->qref, ns->qs->q, ns->qs->qd);
    mbs_fwdPosition(ns->m, ns->qs, ns->w);
    mbs_fwdVelocity(ns->m, ns->qs, ns->w);
    MBS_CALL(mbs_natJointForces(ns->m, ns->w, s));
  }
  if (!ns->dense && ns->solve) return ns->solve(ns->solve_ctx, ns->nwM, pdd);
  if (!ns->dense) { // the elimination of docs/natural.md 5, the cut joints in the range space
    mbsNaturalWork *nw = ns->nwM;
    MBS_CALL(mbs_ntFactor(ns->m, nw));
    for (int b = 0; b < ns->nb; b++) {
      memcpy(nw->r + NB * b, s->f + 12 * b, 12 * sizeof(double));
      memcpy(nw->r + NB * b + 12, nw->rg + 6 * b, 6 * sizeof(double));
    }
    mbs_ntSolve(ns->m, nw, nw->gj, 1);
    MBS_CHECK(mbs_ntLoops(ns->m, nw, nw->s.gl, mbs_nsRankTol(ns), 1) >= 0, MBS_ERR_NOMEM,
              "out of memory");
    memcpy(pdd, nw->pdd, sizeof(double) * (size_t)ns->np);
    return MBS_OK;
  }
  MBS_CHECK(!mbs_natFactor(s->A, ns->piv, s->n), MBS_ERR_NUMERIC,
            "natural: the augmented matrix [M G'; G 0] is singular");
  mbs_natSolve(s->A, ns->piv, s->n, s->b);
  MBS_CHECK(mbs_natLoopSolve(s, ns->nl, mbs_nsRankTol(ns), ns->piv, ns->Z, ns->S, ns->r, ns->mu) >=
                0,
            MBS_ERR_NOMEM, "out of memory");
  memcpy(pdd, s->b, sizeof(double) * (size_t)ns->np);
  return MBS_OK;
}

// G (all rows: rigid, tree joints, loops) and the position-level values g at s.p
static void mbs_nsJacobian(mbsNaturalSim *ns) {
  mbsNat *s = &ns->s;
  int np = ns->np, nrt = ns->nrt, nb = ns->nb;
  mbs_nsAssemble(ns);
  for (int r = 0; r < nrt; r++)
    memcpy(ns->G + (size_t)r * (size_t)np, s->A + (size_t)(np + r) * (size_t)s->n,
           sizeof(double) * (size_t)np);
  memcpy(ns->G + (size_t)nrt * (size_t)np, s->L, sizeof(double) * (size_t)ns->nl * (size_t)np);
  for (int b = 0; b < nb; b++) { // rigid: 1/2 (e.e - 1), e_j.e_k
    const double *e = s->p + 12 * b + 3;
    static const int pj[6] = {0, 1, 2, 0, 0, 1}, pk[6] = {0, 1, 2, 1, 2, 2};
    for (int r = 0; r < 6; r++) {
      double d = mbsu_dot3(e + 3 * pj[r], e + 3 * pk[r]);
      ns->g[6 * b + r] = pj[r] == pk[r] ? 0.5 * (d - 1) : d;
    }
  }
  int row = 6 * nb;
  for (int i = 0; i < ns->nrec; i++) row += mbs_natRecValue(s, ns->rec + i, ns->g + row);
}

// x −= Gᵀ (G Gᵀ)⁺ v, the minimum-norm correction (dependent rows dropped); v (R) is overwritten
static void mbs_nsCorrect(mbsNaturalSim *ns, double *v, double *x) {
  int R = ns->nrt + ns->nl, np = ns->np;
  for (int i = 0; i < R; i++)
    for (int k = 0; k <= i; k++) {
      const double *gi = ns->G + (size_t)i * (size_t)np, *gk = ns->G + (size_t)k * (size_t)np;
      double t = 0;
      for (int j = 0; j < np; j++) t += gi[j] * gk[j];
      ns->W[(size_t)i * R + k] = ns->W[(size_t)k * R + i] = t;
    }
  mbs_natPivChol(ns->W, R, 1e-12, v, ns->y);
  for (int i = 0; i < R; i++) {
    const double *gi = ns->G + (size_t)i * (size_t)np;
    for (int j = 0; j < np; j++) x[j] -= gi[j] * ns->y[i];
  }
}

// the rows assembled at s.p, s.pd into nwI (not factored); returns max |g(p)| (g into ns->g)
static double mbs_nsRowsOn(mbsNaturalSim *ns) {
  mbsNaturalWork *nw = ns->nwI;
  memcpy(nw->s.p, ns->s.p, sizeof(double) * (size_t)ns->np);
  memcpy(nw->s.pd, ns->s.pd, sizeof(double) * (size_t)ns->np);
  mbs_ntReplay(ns->m, nw, ns->rec, ns->rec0, ns->nrec);
  return mbs_ntValues(ns->m, nw, ns->rec, ns->rec0, ns->nrec, ns->g);
}

// x += −Gᵀ (G Gᵀ)⁺ v by nwI (factored at the iterate unless a correct callback does it all)
static void mbs_nsCorr(mbsNaturalSim *ns, const double *v, int fresh, double *x) {
  if (!ns->correct) {
    mbs_ntCorrect(ns->m, ns->nwI, v, fresh, 1e-12, x);
    return;
  }
  double *dx = ns->yt; // (DP5's stage scratch: free after a step)
  if (ns->correct(ns->solve_ctx, ns->nwI, v, dx)) return; // (an agreed error: no correction)
  for (int j = 0; j < ns->np; j++) x[j] += dx[j];
}

// the projection of docs/natural.md 7 in O(n): the same Gauss–Newton iterations and minimum-norm
// corrections as the dense one, each solved by the block elimination of [I Gᵀ; G 0] (nwI); the
// velocities reuse the factors of the last position iterate (the one at the projected p)
static double mbs_nsProjectOn(mbsNaturalSim *ns, double tol, int maxit) {
  mbsNaturalWork *nw = ns->nwI;
  double gmax = 0;
  int fresh = 1;
  for (int it = 0; it <= maxit; it++) {
    gmax = mbs_nsRowsOn(ns);
    if (!ns->correct && mbs_ntFactor(ns->m, nw)) return gmax; // (not on a run's manifold)
    fresh = 1;
    if (gmax <= tol || it == maxit) break;
    mbs_nsCorr(ns, ns->g, 1, ns->s.p);
    fresh = 0;
    ns->st.corrections++;
  }
  mbs_ntJacMul(ns->m, nw, ns->s.pd, ns->y); // G ṗ with G at the projected p
  mbs_nsCorr(ns, ns->y, fresh, ns->s.pd);
  mbs_nsSync(ns);
  return gmax;
}

double mbs_naturalSimProject(mbsNaturalSim *ns, double tol, int maxit) {
  if (!ns->dense) return mbs_nsProjectOn(ns, tol, maxit);
  mbsNat *s = &ns->s;
  int R = ns->nrt + ns->nl, np = ns->np;
  double gmax = 0;
  for (int it = 0; it <= maxit; it++) { // positions: Gauss–Newton on g(p) = 0
    mbs_nsJacobian(ns);
    gmax = 0;
    for (int i = 0; i < R; i++) gmax = fmax(gmax, fabs(ns->g[i]));
    if (gmax <= tol || it == maxit) break;
    mbs_nsCorrect(ns, ns->g, s->p);
    ns->st.corrections++;
  }
  for (int i = 0; i < R; i++) { // velocities: G ṗ = 0 (G at the projected p)
    const double *gi = ns->G + (size_t)i * (size_t)np;
    double t = 0;
    for (int j = 0; j < np; j++) t += gi[j] * s->pd[j];
    ns->g[i] = t;
  }
  mbs_nsCorrect(ns, ns->g, s->pd);
  mbs_nsSync(ns);
  return gmax;
}

mbsErr mbs_naturalSimStep(mbsNaturalSim *ns, double h) {
  int np = ns->np;
  double *p0 = ns->p0, *v0 = ns->pd0, *k[4] = {ns->k1, ns->k2, ns->k3, ns->k4};
  memcpy(p0, ns->s.p, sizeof(double) * (size_t)np);
  memcpy(v0, ns->s.pd, sizeof(double) * (size_t)np);
  static const double c[4] = {0, 0.5, 0.5, 1};
  double *pp = ns->pdd, *vv = ns->pdd + np;
  for (int st = 0; st < 4; st++) { // k = (ṗ, p̈) at p0 + c h k_prev
    for (int j = 0; j < np; j++) {
      pp[j] = p0[j] + (st ? c[st] * h * k[st - 1][j] : 0);
      vv[j] = v0[j] + (st ? c[st] * h * k[st - 1][np + j] : 0);
    }
    memcpy(k[st], vv, sizeof(double) * (size_t)np);
    MBS_CALL(mbs_nsAccel(ns, pp, vv, k[st] + np));
  }
  for (int j = 0; j < 2 * np; j++) {
    double d = h / 6 * (k[0][j] + 2 * k[1][j] + 2 * k[2][j] + k[3][j]);
    if (j < np)
      ns->s.p[j] = p0[j] + d;
    else
      ns->s.pd[j - np] = v0[j - np] + d;
  }
  mbs_nsSync(ns);
  return MBS_OK;
}

mbsErr mbs_naturalSimAccel(mbsNaturalSim *ns, mbsReal *qdd) {
  int np = ns->np;
  memcpy(ns->p0, ns->s.p, sizeof(double) * (size_t)np);
  memcpy(ns->pd0, ns->s.pd, sizeof(double) * (size_t)np);
  MBS_CALL(mbs_nsAccel(ns, ns->p0, ns->pd0, ns->pdd));
  mbs_nsSync(ns);
  mbs_fwdPosition(ns->m, ns->qs, ns->w);
  mbs_fwdVelocity(ns->m, ns->qs, ns->w);
  mbs_natQdd(ns->m, ns->w, &ns->s, ns->pdd, qdd);
  return MBS_OK;
}

double mbs_naturalSimEnergy(const mbsNaturalSim *ns) {
  const mbsModel *m = ns->m;
  double E = 0;
  for (int b = 0; b < ns->nb; b++) {
    double K[16], x[3];
    mbs_natMassK(m, b, K);
    const double *pd = ns->s.pd + 12 * b, *p = ns->s.p + 12 * b;
    for (int al = 0; al < 4; al++)
      for (int be = 0; be < 4; be++)
        E += 0.5 * K[4 * al + be] * mbsu_dot3(pd + 3 * al, pd + 3 * be);
    mbs_natVec(p + 3, mbs_bodyCom(m, b), x);
    for (int i = 0; i < 3; i++) x[i] += p[i];
    E -= mbs_bodyMass(m, b) * mbsu_dot3(m->gravity, x);
  }
  for (int b = 0; b < ns->nb; b++) { // joint springs ½ k (q - q_ref)² at the last accepted q
    int t = m->body_jnttype[b], d0 = m->body_dofadr[b], q0 = m->body_qadr[b];
    if (!mbs_jntScalar(t)) continue;
    for (int k = 0; k < m->body_dofnum[b]; k++) {
      double e = ns->qref[q0 + k] - m->dof_springref[d0 + k];
      E += 0.5 * m->dof_stiffness[d0 + k] * e * e;
    }
  }
  for (int j = 0; j < m->nforce; j++) { // ½ k (l - l0)²
    double u[3], l, ld, e;
    mbs_nsSpring(ns, j, u, &l, &ld);
    e = l - m->force_prm[3 * j + 1];
    E += 0.5 * m->force_prm[3 * j] * e * e;
  }
  return E;
}

double mbs_naturalSimViolation(mbsNaturalSim *ns) {
  if (!ns->dense) {
    mbsNaturalWork *nw = ns->nwI;
    memcpy(nw->s.p, ns->s.p, sizeof(double) * (size_t)ns->np);
    return mbs_ntValues(ns->m, nw, ns->rec, ns->rec0, ns->nrec, ns->g);
  }
  mbs_nsJacobian(ns);
  double gmax = 0;
  for (int i = 0; i < ns->nrt + ns->nl; i++) gmax = fmax(gmax, fabs(ns->g[i]));
  return gmax;
}

// max |g(p)| and max |G ṗ| at s.p, s.pd (the Jacobian assembled into ns->G)
static void mbs_nsResiduals(mbsNaturalSim *ns, double *gpos, double *gvel) {
  int R = ns->nrt + ns->nl, np = ns->np;
  if (!ns->dense) {
    *gpos = mbs_nsRowsOn(ns);
    *gvel = mbs_ntJacMul(ns->m, ns->nwI, ns->s.pd, ns->y);
    return;
  }
  mbs_nsJacobian(ns);
  double a = 0, b = 0;
  for (int i = 0; i < R; i++) {
    const double *gi = ns->G + (size_t)i * (size_t)np;
    double t = 0;
    for (int j = 0; j < np; j++) t += gi[j] * ns->s.pd[j];
    a = fmax(a, fabs(ns->g[i])), b = fmax(b, fabs(t));
  }
  *gpos = a, *gvel = b;
}

// f(y) = (ṗ, p̈) at y = (p, ṗ)
static mbsErr mbs_nsRhs(mbsNaturalSim *ns, const double *y, double *k) {
  int np = ns->np;
  memcpy(k, y + np, sizeof(double) * (size_t)np);
  return mbs_nsAccel(ns, y, y + np, k + np);
}

// one accepted Dormand–Prince step from *t towards T (the last one ends exactly at T), with the
// projection tolerance ptol (docs/natural.md 7.1); *attempts bounds the work of the caller's call
static mbsErr mbs_nsDp5(mbsNaturalSim *ns, double *tp, double T, double tol, double ptol,
                        long *attempts) {
  int np = ns->np, N = 2 * np;
  double *y0 = ns->y0, *y1 = ns->y1, *yt = ns->yt, **k = ns->dk, t = *tp;
  MBS_CHECK(++*attempts <= 1000000, MBS_ERR_NUMERIC,
            "natural: more than 10^6 steps in one advance of %g s (tolerance %g)", T, tol);
  memcpy(y0, ns->s.p, sizeof(double) * (size_t)np);
  memcpy(y0 + np, ns->s.pd, sizeof(double) * (size_t)np);
  if (!ns->fsal) MBS_CALL(mbs_nsRhs(ns, y0, k[0]));
  ns->fsal = 1;
  double h = ns->h, err;
  int last = t + h >= T * (1 - 1e-14);
  if (last) h = T - t;
  for (;;) { // one attempt: stages 2..7, y1 the fifth-order solution
    for (int st = 1; st < 7; st++) {
      double *z = st == 6 ? y1 : yt;
      for (int j = 0; j < N; j++) {
        double d = 0;
        for (int l = 0; l < st; l++) d += mbs_dp5A[st][l] * k[l][j];
        z[j] = y0[j] + h * d;
      }
      MBS_CALL(mbs_nsRhs(ns, z, k[st]));
    }
    double e2 = 0; // RMS of the error over sc = tol (1 + |y|) (absolute for |y| < 1)
    for (int j = 0; j < N; j++) {
      double d = 0;
      for (int l = 0; l < 7; l++) d += mbs_dp5E[l] * k[l][j];
      double sc = tol * (1 + fmax(fabs(y0[j]), fabs(y1[j])));
      e2 += (h * d / sc) * (h * d / sc);
    }
    err = sqrt(e2 / N);
    if (err <= 1) break;
    ns->st.rejected++;
    MBS_CHECK(++*attempts <= 1000000, MBS_ERR_NUMERIC,
              "natural: more than 10^6 steps in one advance of %g s (tolerance %g)", T, tol);
    h *= fmax(0.2, 0.9 * pow(err, -0.2));
    last = 0;
    MBS_CHECK(h > 1e-14 * fmax(T, 1), MBS_ERR_NUMERIC,
              "natural: the step size fell below 1e-14 (tolerance %g)", tol);
  }
  ns->st.steps++;
  *tp = last ? T : t + h;
  ns->st.t += h;
  double fac = err > 0 ? fmin(5, fmax(0.2, 0.9 * pow(err, -0.2))) : 5;
  if (!last || fac < 1) ns->h = h * fac;
  memcpy(ns->s.p, y1, sizeof(double) * (size_t)np);
  memcpy(ns->s.pd, y1 + np, sizeof(double) * (size_t)np);
  double *sw = k[0]; // first same as last
  k[0] = k[6], k[6] = sw;
  mbs_nsSync(ns);
  // the projection tolerance: project only when a residual exceeds it (then to 1e-13)
  double gp, gv;
  mbs_nsResiduals(ns, &gp, &gv);
  ns->st.gmax = fmax(ns->st.gmax, gp), ns->st.gvmax = fmax(ns->st.gvmax, gv);
  if (gp > ptol || gv > ptol) {
    mbs_naturalSimProject(ns, 1e-13, 8);
    ns->st.projections++;
    ns->fsal = 0; // the state moved: f again
  }
  return MBS_OK;
}

mbsErr mbs_naturalSimAdvance(mbsNaturalSim *ns, double T, double tol, double ptol) {
  MBS_CHECK(T >= 0 && tol > 0 && ptol > 0, MBS_ERR_INPUT,
            "natural: advance needs T >= 0 and positive tolerances");
  if (ns->h <= 0) ns->h = fmin(1e-3, T > 0 ? T : 1e-3);
  double t = 0;
  long attempts = 0; // a bound on the work of one call: a broken error estimate cannot spin
  while (t < T) MBS_CALL(mbs_nsDp5(ns, &t, T, tol, ptol, &attempts));
  return MBS_OK;
}

mbsErr mbs_naturalSimStepAdaptive(mbsNaturalSim *ns, double hmax, double tol, double ptol,
                                  double *hdone) {
  MBS_CHECK(hmax > 0 && tol > 0 && ptol > 0, MBS_ERR_INPUT,
            "natural: an adaptive step needs hmax > 0 and positive tolerances");
  if (ns->h <= 0) ns->h = fmin(1e-3, hmax);
  double t = 0;
  long attempts = 0;
  MBS_CALL(mbs_nsDp5(ns, &t, hmax, tol, ptol, &attempts));
  *hdone = t;
  return MBS_OK;
}

void mbs_naturalSimSetJoint(mbsNaturalSim *ns, const mbsReal *q, const mbsReal *qd) {
  const mbsModel *m = ns->m;
  memcpy(ns->qs->q, q, sizeof(double) * (size_t)m->nq);
  memcpy(ns->qs->qd, qd, sizeof(double) * (size_t)m->nv);
  mbs_naturalFromJoint(m, ns->qs, ns->w, ns->s.p, ns->s.pd);
  memcpy(ns->qref, q, sizeof(double) * (size_t)m->nq);
  ns->fsal = 0;
}

void mbs_naturalSimSetSolve(mbsNaturalSim *ns, mbsNaturalSolveFn fn, mbsNaturalCorrectFn cfn,
                            void *ctx) {
  ns->solve = ns->dense ? NULL : fn, ns->correct = ns->dense ? NULL : cfn, ns->solve_ctx = ctx;
  if (ns->nwI) ns->nwI->ptol = 1e-12; // (the parts' pivots: mbs_ntCorrect's tolerance)
}

mbsErr mbs_naturalSimSetParts(mbsNaturalSim *ns, int nparts, int part) {
  MBS_CHECK(!ns->dense, MBS_ERR_INTERNAL, "natural: the dense run has no parts");
  MBS_CALL(mbs_naturalPartSet(ns->m, ns->nwM, nparts, part, NULL));
  return mbs_naturalPartSet(ns->m, ns->nwI, nparts, part, NULL);
}

void mbs_naturalSimSetStep(mbsNaturalSim *ns, double h) {
  ns->h = h;
}

double mbs_naturalSimGetStep(const mbsNaturalSim *ns) {
  return ns->h;
}

void mbs_naturalSimGetStats(const mbsNaturalSim *ns, mbsNaturalSimStats *st) {
  *st = ns->st;
}
