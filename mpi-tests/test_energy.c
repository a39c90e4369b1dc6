/// \file test_energy.c
/// Power balance and energy conservation on random trees with every joint type (including
/// floating bases).
///
/// 1. Power balance dE/dt = sum_d qd_d (force_d - damping_d qd_d + tau_d) (springs and gravity are
///    in E = KE + PE). dE/dt is a central difference along the curve
///    q(eps) = mbs_integratePos(q, qd, eps), qd(eps) = qd + eps qdd, whose tangent at eps = 0 is
///    the true (qd, qdd) of the motion, with qdd from ABA. Because E is evaluated only from the
///    kinematics stages (no dynamics), this independently checks the velocity-product terms c_J
///    of the universal and free joints that ABA and CRBA share.
/// 2. Energy drift of a conservative tree (no damping, no joint force) over a short RK4 run
///    written here: bounded, and of 4th order for trees of scalar joints.
#include "mbs_test.h"

// E = KE + PE at (q, qd) (runs the kinematics stages on w)
static double energy(const mbsModel *m, mbsState *s, mbsWork *w) {
  mbs_fwdPosition(m, s, w);
  mbs_fwdVelocity(m, s, w);
  return mbs_kineticEnergy(m, w) + mbs_potentialEnergy(m, s, w);
}

// qdd at (q, qd) by ABA
static void accel(const mbsModel *m, mbsState *s, mbsWork *w, double *qdd) {
  mbs_fwdPosition(m, s, w);
  mbs_fwdVelocity(m, s, w);
  MBS_EXPECT_OK(mbs_aba(m, w));
  memcpy(qdd, w->qdd, (size_t)m->nv * sizeof(double));
}

// dE/dt by the central difference along the curve described above, with qdd given
static double dEdt(const mbsModel *m, const mbsState *s0, mbsState *s, mbsWork *w,
                   const double *qdd, double eps, double *dKE) {
  double e[2], k[2];
  for (int sg = 0; sg < 2; sg++) {
    double h = sg ? -eps : eps;
    mbs_integratePos(m, s0->q, s0->qd, h, s->q);
    for (int d = 0; d < m->nv; d++) s->qd[d] = s0->qd[d] + h * qdd[d];
    e[sg] = energy(m, s, w);
    k[sg] = mbs_kineticEnergy(m, w);
  }
  *dKE = (k[0] - k[1]) / (2 * eps);
  return (e[0] - e[1]) / (2 * eps);
}

static void copyState(const mbsModel *m, const mbsState *a, mbsState *b) {
  memcpy(b->q, a->q, (size_t)m->nq * sizeof(double));
  memcpy(b->qd, a->qd, (size_t)m->nv * sizeof(double));
  memcpy(b->tau, a->tau, (size_t)m->nv * sizeof(double));
}

// zero every non-conservative joint force (the test owns the model)
static void makeConservative(mbsModel *m, mbsState *s) {
  for (int d = 0; d < m->nv; d++) m->dof_force[d] = m->dof_damping[d] = s->tau[d] = 0;
}

static void power_balance(int nbody, int chain, unsigned long long seed, int conservative,
                          double *worst, double *worst_sens) {
  mbsModel *m = NULL;
  mbsState *s0 = NULL, *s = NULL;
  mbsWork *w = NULL;
  MBS_EXPECT_OK(mbs_test_randomModel(nbody, mbs_test_alltypes, 7, chain, seed, &m));
  if (!m) return;
  MBS_EXPECT_OK(mbs_stateCreate(m, &s0));
  MBS_EXPECT_OK(mbs_stateCreate(m, &s));
  MBS_EXPECT_OK(mbs_workCreate(m, &w));
  unsigned long long st = seed * 7 + 3;
  for (int d = 0; d < m->nv; d++) s0->tau[d] = mbs_test_uniform(&st, -1, 1);
  if (conservative) makeConservative(m, s0);
  copyState(m, s0, s);
  double *qdd = calloc((size_t)m->nv + 1, sizeof(double));
  accel(m, s, w, qdd);
  // applied non-conservative power
  double P = 0;
  for (int d = 0; d < m->nv; d++)
    P += s0->qd[d] * (m->dof_force[d] - m->dof_damping[d] * s0->qd[d] + s0->tau[d]);
  double dKE, dE = dEdt(m, s0, s, w, qdd, 1e-5, &dKE);
  // scale: the larger of the applied power and the kinetic power (which gravity and springs
  // mostly balance)
  double scale = fmax(fabs(P), fabs(dKE));
  double rel = fabs(dE - P) / scale;
  if (rel > *worst) *worst = rel;
  MBS_EXPECT(rel <= 1e-6, "seed %llu n=%d cons=%d: dE/dt %.12g vs applied power %.12g (rel %.2e)",
             seed, nbody, conservative, dE, P, rel);
  // sensitivity: a wrong qdd (relative error 1e-3 in a random direction) must be detected
  double nq = 0;
  for (int d = 0; d < m->nv; d++) nq += qdd[d] * qdd[d];
  nq = sqrt(nq / (m->nv > 0 ? m->nv : 1));
  for (int d = 0; d < m->nv; d++) qdd[d] += 1e-3 * nq * mbs_test_uniform(&st, -1, 1);
  double dE2 = dEdt(m, s0, s, w, qdd, 1e-5, &dKE);
  double rel2 = fabs(dE2 - P) / scale;
  if (m->nv > 0 && (*worst_sens < 0 || rel2 < *worst_sens)) *worst_sens = rel2;
  free(qdd);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  mbs_stateDestroy(&s0);
  mbs_modelDestroy(&m);
}

// time derivative of the position coordinates: qd for scalar joints; for quaternions
// d/dt q = 1/2 q * (0, w) with w the angular velocity in the child frame
static void qdot(const mbsModel *m, const double *q, const double *qd, double *dq) {
  for (int b = 0; b < m->nbody; b++) {
    int t = m->body_jnttype[b], qa = m->body_qadr[b], da = m->body_dofadr[b];
    if (t == MBS_JNT_SPHERICAL || t == MBS_JNT_FREE) {
      int o = t == MBS_JNT_FREE ? 3 : 0;
      const double *p = q + qa + o, *w = qd + da + o;
      for (int k = 0; k < o; k++) dq[qa + k] = qd[da + k];
      dq[qa + o] = 0.5 * (-p[1] * w[0] - p[2] * w[1] - p[3] * w[2]);
      dq[qa + o + 1] = 0.5 * (p[0] * w[0] + p[2] * w[2] - p[3] * w[1]);
      dq[qa + o + 2] = 0.5 * (p[0] * w[1] + p[3] * w[0] - p[1] * w[2]);
      dq[qa + o + 3] = 0.5 * (p[0] * w[2] + p[1] * w[1] - p[2] * w[0]);
    } else {
      for (int k = 0; k < m->body_dofnum[b]; k++) dq[qa + k] = qd[da + k];
    }
  }
}

// one classical RK4 step of the embedded ODE (q in R^nq with quaternion components, qd), then
// the quaternions are renormalised (a projection that keeps the 4th order). mbs_integratePos is
// deliberately not used here: it is checked by the power balance above.
static void rk4Step(const mbsModel *m, mbsState *s, mbsState *t, mbsWork *w, double h, double *k) {
  int nv = m->nv, nq = m->nq;
  double *kq = k, *ka = k + 4 * nq;
  static const double c[4] = {0, 0.5, 0.5, 1.0};
  copyState(m, s, t);
  for (int j = 0; j < 4; j++) {
    if (j > 0) {
      for (int i = 0; i < nq; i++) t->q[i] = s->q[i] + c[j] * h * kq[(j - 1) * nq + i];
      for (int d = 0; d < nv; d++) t->qd[d] = s->qd[d] + c[j] * h * ka[(j - 1) * nv + d];
    }
    qdot(m, t->q, t->qd, kq + j * nq);
    accel(m, t, w, ka + j * nv);
  }
  for (int i = 0; i < nq; i++)
    s->q[i] += h * (kq[i] + 2 * kq[nq + i] + 2 * kq[2 * nq + i] + kq[3 * nq + i]) / 6;
  for (int d = 0; d < nv; d++)
    s->qd[d] += h * (ka[d] + 2 * ka[nv + d] + 2 * ka[2 * nv + d] + ka[3 * nv + d]) / 6;
  for (int b = 0; b < m->nbody; b++) {
    int ty = m->body_jnttype[b];
    if (ty != MBS_JNT_SPHERICAL && ty != MBS_JNT_FREE) continue;
    double *p = s->q + m->body_qadr[b] + (ty == MBS_JNT_FREE ? 3 : 0);
    double n = sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3]);
    for (int i = 0; i < 4; i++) p[i] /= n;
  }
  s->time += h;
}

// max |E(t) - E(0)| / max(KE(0), 1e-3) over [0, T] with step h
static double drift(int nbody, const int *types, int ntypes, unsigned long long seed, double h,
                    double T) {
  mbsModel *m = NULL;
  mbsState *s = NULL, *t = NULL;
  mbsWork *w = NULL;
  MBS_EXPECT_OK(mbs_test_randomModel(nbody, types, ntypes, 0, seed, &m));
  if (!m) return 1;
  MBS_EXPECT_OK(mbs_stateCreate(m, &s));
  MBS_EXPECT_OK(mbs_stateCreate(m, &t));
  MBS_EXPECT_OK(mbs_workCreate(m, &w));
  makeConservative(m, s);
  double *k = calloc(4 * (size_t)(m->nq + m->nv) + 1, sizeof(double));
  double E0 = energy(m, s, w), KE0 = mbs_kineticEnergy(m, w), dmax = 0;
  int nstep = (int)(T / h + 0.5);
  for (int i = 0; i < nstep; i++) {
    rk4Step(m, s, t, w, h, k);
    double e = fabs(energy(m, s, w) - E0);
    if (e > dmax) dmax = e;
  }
  free(k);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&t);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&m);
  return dmax / fmax(KE0, 1e-3);
}

int main(void) {
  double worst = 0, worst_sens = -1;
  int n = 0;
  for (unsigned long long seed = 1; seed <= 100; seed++) {
    int nbody = 1 + (int)(seed % 25);
    power_balance(nbody, 0, seed, 0, &worst, &worst_sens);
    power_balance(nbody, 0, seed, 1, &worst, &worst_sens);
    n += 2;
  }
  for (unsigned long long seed = 1; seed <= 10; seed++) {
    power_balance(20 + (int)seed, 1, 500 + seed, 0, &worst, &worst_sens);
    n++;
  }
  printf("power balance on %d random trees/chains (all joint types, eps 1e-5): worst rel err "
         "%.3e\n",
         n, worst);
  printf("  sensitivity: with qdd perturbed by 1e-3 the smallest mismatch is %.3e\n", worst_sens);
  MBS_EXPECT(worst_sens > 1e-5, "the power balance does not detect a wrong qdd (%.3e)", worst_sens);

  // energy drift over a short RK4 run: bounded, and 4th order (halving h divides it by ~16)
  static const int scalar_types[] = {MBS_JNT_REVOLUTE, MBS_JNT_PRISMATIC, MBS_JNT_CYLINDRICAL,
                                     MBS_JNT_UNIVERSAL, MBS_JNT_FIXED};
  double worst_ratio = 1e300, worst_drift[2] = {0, 0};
  for (int fam = 0; fam < 2; fam++)
    for (unsigned long long seed = 1; seed <= 4; seed++) {
      const int *types = fam ? mbs_test_alltypes : scalar_types;
      int ntypes = fam ? 7 : 5;
      unsigned long long sd = (fam ? 950 : 900) + seed;
      double d1 = drift(8, types, ntypes, sd, 1e-3, 1.0);
      double d2 = drift(8, types, ntypes, sd, 5e-4, 1.0);
      double ratio = d1 / d2;
      printf("  RK4 %s tree %llu: drift %.3e (h=1e-3), %.3e (h=5e-4), ratio %.1f\n",
             fam ? "all-joint-type" : "scalar-joint", seed, d1, d2, ratio);
      if (ratio < worst_ratio) worst_ratio = ratio;
      if (d1 > worst_drift[fam]) worst_drift[fam] = d1;
      MBS_EXPECT(d1 <= 1e-6, "tree %llu (family %d): energy drift %.3e", seed, fam, d1);
      MBS_EXPECT(ratio >= 12 || d2 < 1e-13,
                 "tree %llu (family %d): drift ratio %.2f (4th order "
                 "gives 16)",
                 seed, fam, ratio);
    }
  printf("energy drift over 1 s (RK4, h=1e-3): scalar-joint trees %.3e, all joint types %.3e; "
         "worst h-halving ratio %.1f\n",
         worst_drift[0], worst_drift[1], worst_ratio);
  return mbs_test_finish("test_energy");
}
