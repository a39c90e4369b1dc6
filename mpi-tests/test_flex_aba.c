/// \file test_flex_aba.c
/// The recursive algorithm of flexible bodies (src/flex_aba.c, docs/flexible.md 10; issue 34)
/// against its references:
/// (a) random rigid trees with every joint type (revolute, prismatic, cylindrical, universal,
///     spherical, free, fixed), moving, springs and dampers, gravity off-axis: qdd equals mbs_aba
///     (mbs_forward) to 1e-12, scaled by 1 + |qdd|;
/// (b) the same trees with some bodies flexible with m = 0 (modes = 0, no nodes): equals mbs_aba
///     on the model whose those bodies are their rigid equivalents (mbs_flexRigidEquivalent) to
///     1e-12;
/// (c) random trees and chains of rigid and flexible bodies (4 or 6 elements, 0 to 3 modes, a
///     tip and a mid node, children on nodes, damping, stiffening on and off, random modal
///     coordinates and rates): equals mbs_flexOracleAccel (dense Cholesky) to 1e-9, the joint
///     block and the modal block each relative to its largest entry (measured 1.7e-10: the
///     systems are ill-conditioned — stiff constraint modes, light rotations — and both solutions
///     carry rounding of the order cond(M) eps), and the recursive solution's backward error in
///     the oracle's own system, |M ydd - f| / (|M| |ydd| + |f|), is below 1e-13; the O(n)
///     energies (relative) and every node's pose equal the oracle's to 1e-12.
#include "mbs_test.h"
#include "flex_gen.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_flex.h"

// flexAba against mbs_aba on the (rigid or rigid-equivalent) model r
static double againstAba(mbsModel *mf, mbsModel *mr) {
  mbsState *st = NULL;
  mbsWork *w = NULL;
  mbsFlexAba *a = NULL;
  double worst = -1, yd[64];
  MBS_EXPECT_OK(mbs_stateCreate(mr, &st));
  MBS_EXPECT_OK(mbs_workCreate(mr, &w));
  MBS_EXPECT_OK(mbs_flexAbaCreate(mf, &a));
  if (st && w && a && mbs_flexAbaSize(a) == mr->nv && mr->nv <= 64) {
    MBS_EXPECT_OK(mbs_forward(mr, st, w));
    MBS_EXPECT_OK(mbs_flexAbaAccel(a, st->q, st->qd, NULL, yd));
    worst = 0;
    for (int k = 0; k < mr->nv; k++)
      worst = fmax(worst, fabs(yd[k] - w->qdd[k]) / (1 + fabs(w->qdd[k])));
  } else {
    MBS_EXPECT(0, "setup (size %d, nv %d)", a ? mbs_flexAbaSize(a) : -1, mr->nv);
  }
  mbs_flexAbaDestroy(&a), mbs_workDestroy(&w), mbs_stateDestroy(&st);
  return worst;
}

// flexAba against the oracle at a random modal state: the largest error of the joint block and
// of the modal block, each relative to the block's largest entry
static double againstOracle(mbsModel *m, double *scale, double *resid, double *edev) {
  mbsState *st = NULL;
  mbsFlexAba *a = NULL;
  mbsFlexOracle *o = NULL;
  double worst = -1;
  MBS_EXPECT_OK(mbs_stateCreate(m, &st));
  MBS_EXPECT_OK(mbs_flexAbaCreate(m, &a));
  MBS_EXPECT_OK(mbs_flexOracleCreate(m, &o));
  if (!st || !a || !o) goto done;
  int N = mbs_flexOracleSize(o), nv = m->nv;
  MBS_EXPECT(mbs_flexAbaSize(a) == N, "sizes %d %d", mbs_flexAbaSize(a), N);
  double *y = calloc((size_t)N, sizeof(double)), *eta = calloc((size_t)N + 1, sizeof(double));
  double *ya = calloc((size_t)N, sizeof(double)), *yo = calloc((size_t)N, sizeof(double));
  if (y && eta && ya && yo && mbs_flexAbaSize(a) == N) {
    memcpy(y, st->qd, sizeof(double) * (size_t)nv);
    for (int k = nv; k < N; k++) y[k] = sym(0.3), eta[k - nv] = sym(0.01);
    MBS_EXPECT_OK(mbs_flexOracleAccel(o, st->q, y, eta, yo));
    MBS_EXPECT_OK(mbs_flexAbaAccel(a, st->q, y, eta, ya));
    worst = blockDiff(ya, yo, N, nv);
    // the backward error: the residual of the oracle's own system at the recursive solution
    double *M, *f, ra = 0, Mm = 0, ym = 0, fm = 0;
    MBS_EXPECT_OK(mbs_flexOracleSystem(o, st->q, y, eta, &M, &f));
    for (int i = 0; i < N; i++) {
      double r = -f[i];
      for (int j = 0; j < N; j++)
        r += M[(size_t)i * N + j] * ya[j], Mm = fmax(Mm, fabs(M[(size_t)i * N + j]));
      ra = fmax(ra, fabs(r)), ym = fmax(ym, fabs(ya[i])), fm = fmax(fm, fabs(f[i]));
    }
    *resid = ra / (Mm * ym + fm);
    // the O(n) energies and node poses against the oracle's
    double ka, pa, ko, po;
    MBS_EXPECT_OK(mbs_flexAbaEnergy(a, st->q, y, eta, &ka, &pa));
    MBS_EXPECT_OK(mbs_flexOracleEnergy(o, st->q, y, eta, &ko, &po));
    double de = fmax(fabs(ka - ko), fabs(pa - po)) / (fabs(ko) + fabs(po));
    for (int k = 0; k < m->flex->n; k++)
      for (int j = 0; j < m->flex->b[k].nnodes; j++) {
        double p1[3], R1[9], p2[3], R2[9];
        MBS_EXPECT_OK(mbs_flexAbaNodePose(a, st->q, y, eta, k, j, p1, R1));
        MBS_EXPECT_OK(mbs_flexOracleNodePose(o, st->q, y, eta, k, j, p2, R2));
        for (int i = 0; i < 9; i++)
          de = fmax(de, fabs(R1[i] - R2[i]) + (i < 3 ? fabs(p1[i] - p2[i]) : 0));
      }
    { // every body frame (the trajectory's poses) and every flexible body's deformed FE nodes
      int nb = m->nbody;
      double *R1 = malloc(sizeof(double) * 24 * (size_t)nb), *R2 = R1 + 9 * nb, *p1 = R2 + 9 * nb,
             *p2 = p1 + 3 * nb, s1[3 * (MBS_FLEX_MAX_ELEMENTS + 1)],
             s2[3 * (MBS_FLEX_MAX_ELEMENTS + 1)];
      double *scr = malloc(sizeof(double) * (2 * (size_t)N + 2));
      if (R1 && scr) {
        MBS_EXPECT_OK(mbs_flexAbaBodyPoses(a, st->q, y, eta, R1, p1));
        MBS_EXPECT_OK(mbs_flexOracleBodyPoses(o, st->q, y, eta, R2, p2));
        for (int i = 0; i < 9 * nb; i++)
          de = fmax(de, fabs(R1[i] - R2[i]) + (i < 3 * nb ? fabs(p1[i] - p2[i]) : 0));
        for (int k = 0; k < m->flex->n; k++) { // the shape's last node at a named node: its pose
          const mbsFlexBody *fb = m->flex->b + k;
          int col = mbs_flexOracleCol(o, k) - m->nv, nfe = fb->modal.nfe;
          mbs_flexShape(fb, eta + col, R1 + 9 * fb->body, p1 + 3 * fb->body, scr, s1);
          mbs_flexShape(fb, eta + col, R2 + 9 * fb->body, p2 + 3 * fb->body, scr, s2);
          for (int i = 0; i < 3 * nfe; i++) de = fmax(de, fabs(s1[i] - s2[i]));
          for (int j = 0; j < fb->nnodes; j++) {
            double pn[3], Rn[9];
            int fe = mbs_flexNodeFe(fb, j);
            MBS_EXPECT_OK(mbs_flexOracleNodePose(o, st->q, y, eta, k, j, pn, Rn));
            for (int i = 0; i < 3; i++) de = fmax(de, fabs(s1[3 * fe + i] - pn[i]));
          }
        }
      }
      free(R1), free(scr);
    }
    *edev = de;
    double sc = 1e-300; // the largest |yo| (blockDiff's two block scales, the larger)
    for (int k = 0; k < N; k++) sc = fmax(sc, fabs(yo[k]));
    *scale = sc;
  }
  free(y), free(eta), free(ya), free(yo);
done:
  mbs_flexOracleDestroy(&o), mbs_flexAbaDestroy(&a), mbs_stateDestroy(&st);
  return worst;
}

int main(void) {
  enum { NB = 9, CAP = 1 << 16 };
  Body B[NB];
  char *t1 = malloc(CAP), *t2 = malloc(CAP);
  double wa = 0, wb = 0, wc = 0, sc = 0, wr = 0, we = 0;
  int nflex = 0, nnode = 0, nstiff = 0;
  for (int trial = 0; t1 && t2 && trial < 24; trial++) {
    int chain = trial % 3 == 0, nb = 3 + trial % (NB - 2);
    // (a) rigid
    gen(B, nb, chain, 0);
    MBS_EXPECT(text(B, nb, 0, t1, CAP) == 0, "text");
    mbsModel *m = mbs_test_buildText(t1);
    MBS_EXPECT(m != NULL, "trial %d (a): model", trial);
    if (m) wa = fmax(wa, againstAba(m, m));
    mbs_modelDestroy(&m);
    // (b) flexible with m = 0 against the rigid equivalents
    gen(B, nb, chain, 1);
    MBS_EXPECT(text(B, nb, 0, t1, CAP) == 0 && text(B, nb, 1, t2, CAP) == 0, "text");
    mbsModel *mf = mbs_test_buildText(t1), *mr = mbs_test_buildText(t2);
    MBS_EXPECT(mf && mr, "trial %d (b): models", trial);
    if (mf && mr) wb = fmax(wb, againstAba(mf, mr));
    mbs_modelDestroy(&mf), mbs_modelDestroy(&mr);
    // (c) flexible against the oracle
    gen(B, nb, chain, 2);
    for (int b = 0; b < nb; b++)
      nflex += B[b].flex, nnode += B[b].onnode > 0, nstiff += B[b].flex && B[b].stiff;
    MBS_EXPECT(text(B, nb, 0, t1, CAP) == 0, "text");
    m = mbs_test_buildText(t1);
    MBS_EXPECT(m != NULL, "trial %d (c): model\n%s", trial, t1);
    double s = 0, r = 1, ed = 1;
    if (m) wc = fmax(wc, againstOracle(m, &s, &r, &ed)), sc = fmax(sc, s), wr = fmax(wr, r);
    we = fmax(we, ed);
    mbs_modelDestroy(&m);
  }
  free(t1), free(t2);
  printf("(a) rigid trees, every joint type, against mbs_aba: %.2e (bound 1e-12)\n", wa);
  printf("(b) m = 0 flexible bodies against mbs_aba on the rigid equivalents: %.2e (1e-12)\n", wb);
  printf("(c) %d flexible bodies (%d with stiffening), %d children on nodes, against the oracle: "
         "%.2e (1e-9; largest |ydd| %.3g)\n",
         nflex, nstiff, nnode, wc, sc);
  printf("(c) backward error max |M ydd - f| / (|M| |ydd| + |f|) with the oracle's M, f: %.2e "
         "(1e-13)\n",
         wr);
  MBS_EXPECT(wa >= 0 && wa < 1e-12, "(a) %g", wa);
  MBS_EXPECT(wb >= 0 && wb < 1e-12, "(b) %g", wb);
  MBS_EXPECT(wc >= 0 && wc < 1e-9, "(c) %g", wc);
  MBS_EXPECT(wr < 1e-13, "(c) backward error %g", wr);
  printf("(c) mbs_flexAbaEnergy, mbs_flexAbaNodePose, mbs_flexAbaBodyPoses and the deformed shapes "
         "(mbs_flexShape at the named nodes) against the oracle's: %.2e (1e-12)\n",
         we);
  MBS_EXPECT(we < 1e-12, "(c) energy / node poses %g", we);
  MBS_EXPECT(nnode > 5 && nstiff > 5, "coverage: %d nodes, %d stiffening", nnode, nstiff);
  return mbs_test_finish("test_flex_aba");
}
