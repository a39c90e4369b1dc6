/// \file test_body.c
/// The body interface (src/body.h, docs/code.md "Adding a body kind"): every row of the table of
/// body kinds has a name and all its faces; and, on random trees of every joint type, what the
/// kernels ask of a rigid body equals what this test forms from the body's mass, centre of mass
/// and inertia alone: the spatial inertia at the body origin [Io h^; -h^ m 1] (Io = Ic + m (|c|^2
/// 1 - c c^T), h = m c) in full, packed and as a product, both through the inlined fast path and
/// through the table's row; and a point fixed to the body in the world, its velocity against a
/// central difference of its position along the motion (q +- eps qd).
#include "mbs_test.h"
#include "body.h"

static void expected_inertia(const mbsModel *m, int b, double I6[36]) {
  const double mass = mbs_bodyMass(m, b), *c = mbs_bodyCom(m, b), *I = mbs_bodyInertiaCom(m, b);
  double Ic[9] = {I[0], I[3], I[4], I[3], I[1], I[5], I[4], I[5], I[2]}, cc = 0;
  for (int k = 0; k < 3; k++) cc += c[k] * c[k];
  memset(I6, 0, 36 * sizeof(double));
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      I6[6 * i + j] = Ic[3 * i + j] + mass * ((i == j) * cc - c[i] * c[j]);
  double h[3] = {mass * c[0], mass * c[1], mass * c[2]};
  double hx[9] = {0, -h[2], h[1], h[2], 0, -h[0], -h[1], h[0], 0};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      I6[6 * i + 3 + j] = hx[3 * i + j];         // upper right h^
      I6[6 * (3 + i) + j] = -hx[3 * i + j];      // lower left -h^ = (h^)^T
      I6[6 * (3 + i) + 3 + j] = (i == j) * mass; // m 1
    }
}

int main(void) {
  // the table: every row complete
  for (int k = 0; k < MBS_BODY_NKIND; k++) {
    const mbsBodyKind *t = mbs_bodyKindRow(k);
    MBS_EXPECT(t->name && t->name[0], "kind %d has no name", k);
    MBS_EXPECT(t->inertia_mul && t->inertia_full && t->inertia_sym6 && t->point_world,
               "kind %s lacks a face", t->name ? t->name : "?");
    MBS_EXPECT(t->nmodes >= 0, "kind %s: nmodes %d", t->name, t->nmodes);
  }
  MBS_EXPECT(mbs_bodyKindRow(MBS_BODY_NKIND) == mbs_bodyKindRow(MBS_BODY_RIGID),
             "an unknown kind is not answered by the rigid row");
  double worst_I = 0, worst_mul = 0, worst_v = 0;
  int nbodies = 0;
  for (int seed = 1; seed <= 6; seed++) {
    mbsModel *m = NULL;
    MBS_EXPECT_OK(mbs_test_randomModel(12, mbs_test_alltypes, 7, seed % 2, (unsigned)seed, &m));
    if (!m) continue;
    mbsState *s = NULL, *s2 = NULL;
    mbsWork *w = NULL, *w2 = NULL, *w3 = NULL;
    MBS_EXPECT_OK(mbs_stateCreate(m, &s));
    MBS_EXPECT_OK(mbs_stateCreate(m, &s2));
    MBS_EXPECT_OK(mbs_workCreate(m, &w));
    MBS_EXPECT_OK(mbs_workCreate(m, &w2));
    MBS_EXPECT_OK(mbs_workCreate(m, &w3));
    if (!s || !s2 || !w || !w2 || !w3) return mbs_test_finish("test_body");
    mbs_fwdPosition(m, s, w);
    mbs_fwdVelocity(m, s, w);
    const double eps = 1e-6;
    mbs_integratePos(m, s->q, s->qd, eps, s2->q);
    mbs_fwdPosition(m, s2, w2);
    mbs_integratePos(m, s->q, s->qd, -eps, s2->q);
    mbs_fwdPosition(m, s2, w3);
    for (int b = 0; b < m->nbody; b++, nbodies++) {
      const mbsBodyKind *row = mbs_bodyKindRow(mbs_bodyKindOf(m, b));
      double E[36], F[36], Fr[36], P[21], Pf[36], a[6], f[6], fr[6], fe[6];
      expected_inertia(m, b, E);
      mbs_bodyInertiaFull(m, b, F);
      row->inertia_full(m, b, Fr);
      mbs_bodyInertiaSym6(m, b, P);
      mbsu_sym6ToFull(P, Pf);
      double scale = 0;
      for (int i = 0; i < 36; i++) scale = fmax(scale, fabs(E[i]));
      for (int i = 0; i < 36; i++) {
        worst_I = fmax(worst_I, fabs(F[i] - E[i]) / scale);
        worst_I = fmax(worst_I, fabs(Pf[i] - E[i]) / scale);
        MBS_EXPECT(F[i] == Fr[i], "body %d: the row's inertia differs from the fast path", b);
      }
      for (int i = 0; i < 6; i++) a[i] = sin(1.7 * i + b + seed);
      mbs_bodyInertiaMul(m, b, a, f);
      row->inertia_mul(m, b, a, fr);
      double fs = 0;
      for (int i = 0; i < 6; i++) {
        fe[i] = 0;
        for (int j = 0; j < 6; j++) fe[i] += E[6 * i + j] * a[j];
        fs = fmax(fs, fabs(fe[i]));
        MBS_EXPECT(f[i] == fr[i], "body %d: the row's product differs from the fast path", b);
      }
      for (int i = 0; i < 6; i++) worst_mul = fmax(worst_mul, fabs(f[i] - fe[i]) / fs);
      // a point fixed to the body: its velocity against the motion of its position
      double pt[3] = {0.1 * b - 0.3, 0.2, -0.05 * seed}, p[3], pd[3], p1[3], p2[3], z[3];
      mbs_bodyPointWorld(m, w, b, pt, 1, p, pd);
      mbs_bodyPointWorld(m, w2, b, pt, 0, p1, z);
      mbs_bodyPointWorld(m, w3, b, pt, 0, p2, z);
      double vs = 1e-3;
      for (int i = 0; i < 3; i++) vs = fmax(vs, fabs(pd[i]));
      for (int i = 0; i < 3; i++)
        worst_v = fmax(worst_v, fabs((p1[i] - p2[i]) / (2 * eps) - pd[i]) / vs);
    }
    mbs_workDestroy(&w), mbs_workDestroy(&w2), mbs_workDestroy(&w3);
    mbs_stateDestroy(&s), mbs_stateDestroy(&s2);
    mbs_modelDestroy(&m);
  }
  printf("test_body: %d bodies; inertia %.2e, product %.2e (relative, against the test's own "
         "formula); point velocity %.2e (against a central difference, eps 1e-6)\n",
         nbodies, worst_I, worst_mul, worst_v);
  MBS_EXPECT(worst_I < 1e-14, "spatial inertia off by %.3g", worst_I);
  MBS_EXPECT(worst_mul < 1e-13, "inertia product off by %.3g", worst_mul);
  MBS_EXPECT(worst_v < 1e-7, "point velocity off by %.3g", worst_v);
  return mbs_test_finish("test_body");
}
