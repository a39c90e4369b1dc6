/// \file test_natural_coords.c
/// Joint coordinates from natural coordinates (docs/natural.md 11) and joint forces in (p, ṗ)
/// runs: on random chains and trees with every joint type, q and q̇ recovered from the p, ṗ of
/// the joint formulation's forward kinematics equal q and q̇ (the round trip), angles continued
/// from a reference 2π away and quaternions taking its sign; and q̈ of the natural simulation
/// (joint forces, springs and dampers at the recovered q, q̇) equals ABA's.
#include "mbs_test.h"
#include "mbspar/mbs_natural.h"

#define TWO_PI 6.283185307179586

int main(void) {
  double worst_q = 0, worst_qd = 0, worst_ref = 0, worst_qdd = 0;
  int nmodels = 0, nsim = 0;
  for (unsigned long long seed = 1; seed <= 60; seed++) {
    int chain = seed > 45, nbody = chain ? 8 + (int)(seed % 20) : 1 + (int)(seed % 24);
    mbsModel *m = NULL;
    MBS_EXPECT_OK(mbs_test_randomModel(nbody, mbs_test_alltypes, 7, chain, 7000 + seed, &m));
    if (!m) continue;
    mbsState *s = NULL;
    mbsWork *w = NULL;
    MBS_EXPECT_OK(mbs_stateCreate(m, &s));
    MBS_EXPECT_OK(mbs_workCreate(m, &w));
    int np = 12 * m->nbody, nq = m->nq, nv = m->nv;
    double *p = calloc((size_t)np + 1, sizeof(double)),
           *pd = calloc((size_t)np + 1, sizeof(double));
    double *q = calloc((size_t)nq + 1, sizeof(double)),
           *qd = calloc((size_t)nv + 1, sizeof(double));
    double *qref = calloc((size_t)nq + 1, sizeof(double)), *qexp = calloc((size_t)nq + 1, 8);
    double *qdd_aba = calloc((size_t)nv + 1, sizeof(double));
    double *qdd_nat = calloc((size_t)nv + 1, sizeof(double));
    if (!s || !w || !p || !pd || !q || !qd || !qref || !qexp || !qdd_aba || !qdd_nat) return 1;
    mbs_naturalFromJoint(m, s, w, p, pd);
    // the principal branch (q0 in [-1.5, 1.5]: angles in (-π, π]); quaternions up to sign
    mbs_naturalJointCoords(m, p, pd, NULL, q, qd);
    for (int b = 0; b < m->nbody; b++) {
      int t = m->body_jnttype[b], qa = m->body_qadr[b], qu = mbs_jntQuatAdr(t);
      double sg = 1;
      if (qu >= 0) {
        double dot = 0;
        for (int k = 0; k < 4; k++) dot += q[qa + qu + k] * s->q[qa + qu + k];
        sg = dot < 0 ? -1 : 1;
      }
      for (int k = 0; k < mbs_jntNq(t); k++) {
        int isq = qu >= 0 && k >= qu && k < qu + 4;
        worst_q = fmax(worst_q, fabs((isq ? sg : 1) * q[qa + k] - s->q[qa + k]));
        // a reference 2π + 0.4 away from each angle, the opposite quaternion, others far
        double ref = mbs_jntCoordIsAngle(t, k) ? s->q[qa + k] + TWO_PI + 0.4
                     : isq                     ? -s->q[qa + k]
                                               : s->q[qa + k] + 7;
        qref[qa + k] = ref;
        qexp[qa + k] = mbs_jntCoordIsAngle(t, k) ? s->q[qa + k] + TWO_PI
                       : isq                     ? -s->q[qa + k]
                                                 : s->q[qa + k];
      }
    }
    for (int d = 0; d < nv; d++) worst_qd = fmax(worst_qd, fabs(qd[d] - s->qd[d]));
    mbs_naturalJointCoords(m, p, pd, qref, q, qd);
    for (int i = 0; i < nq; i++) worst_ref = fmax(worst_ref, fabs(q[i] - qexp[i]));
    nmodels++;
    // joint forces, springs and dampers in a (p, ṗ) simulation: q̈ against ABA (dense: small)
    if (m->nbody <= 30) {
      mbsNaturalSim *ns = NULL;
      m->opt.solver = MBS_SOLVER_ABA;
      MBS_EXPECT_OK(mbs_forward(m, s, w));
      memcpy(qdd_aba, w->qdd, sizeof(double) * (size_t)nv);
      MBS_EXPECT_OK(mbs_naturalSimCreate(m, s, w, &ns));
      if (ns) {
        MBS_EXPECT_OK(mbs_naturalSimAccel(ns, qdd_nat));
        double d = mbs_test_relDiff(qdd_nat, qdd_aba, nv, 1e-300);
        MBS_EXPECT(d <= 1e-9, "seed %llu: natural run q̈ vs aba rel diff %.3e", seed, d);
        worst_qdd = fmax(worst_qdd, d);
        nsim++;
      }
      mbs_naturalSimDestroy(&ns);
    }
    free(p), free(pd), free(q), free(qd), free(qref), free(qexp), free(qdd_aba), free(qdd_nat);
    mbs_workDestroy(&w);
    mbs_stateDestroy(&s);
    mbs_modelDestroy(&m);
  }
  printf("%d random models (every joint type): q from (p, ṗ) worst abs diff %.3e, q̇ %.3e, "
         "continued from a far reference %.3e\n",
         nmodels, worst_q, worst_qd, worst_ref);
  printf("%d models with joint forces, springs and dampers: natural run q̈ vs aba worst rel diff "
         "%.3e\n",
         nsim, worst_qdd);
  MBS_EXPECT(nmodels == 60 && nsim == 60, "%d models, %d simulated", nmodels, nsim);
  MBS_EXPECT(worst_q <= 1e-13 && worst_qd <= 1e-13 && worst_ref <= 1e-13,
             "round trip: q %.3e, q̇ %.3e, referenced %.3e", worst_q, worst_qd, worst_ref);
  return mbs_test_finish("test_natural_coords");
}
