/// \file test_flex_loops.c
/// Closed loops through flexible bodies in the dense oracle (src/flex_oracle_loops.c,
/// docs/flexible.md 15; issue 34):
/// (a) the planar four-bar of configs/fourbar.cfg with its coupler a flexible beam of m = 0 (the
///     rigid body the beam is) equals the rigid loop baseline (mbs_forward, aba) on the rigid
///     equivalent: qdd and the loop's multipliers (3 of 5 closure equations redundant, minimum
///     norm) to 1e-12;
/// (b) a spatial loop whose cut joint sits on the tip node of a flexible link (m = 6 + 2 modes,
///     stiffening on), at a random state (eta, etad nonzero): the closure rate of mbsu_loopClosure
///     equals G y (the Jacobian through the node's shapes), the central differences of c along
///     the motion give cdot, and those of cdot along the motion with the solved accelerations
///     give cddot = 0 (the KKT rows with the node's bias); the same for a cut joint on the body
///     frame of a flexible body; and with solver.baumgarte = [3, 4] the differences of cdot give
///     cddot = -2 alpha cdot - beta^2 c (the stabilised rows).
#include "mbs_test.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_flex.h"

static const char *const FOURBAR_HEAD =
    "solver = { method = \"aba\"; }; model = { gravity = [0.0, 0.0, -9.81]; bodies = (\n"
    "{ name = \"crank\"; parent = \"ground\"; joint = { type = \"revolute\"; axis = [0.0, 1.0, "
    "0.0]; q0 = [0.0]; qd0 = [-4.0]; }; mass = 1.0; shape = \"rod\"; length = 0.2; direction = "
    "[1.0, 0.0, 0.0]; radius = 0.01; },\n";
static const char *const FOURBAR_TAIL =
    "{ name = \"rocker\"; parent = \"ground\"; joint = { type = \"revolute\"; axis = [0.0, 1.0, "
    "0.0]; origin = [0.6, 0.0, 0.0]; q0 = [-1.37]; qd0 = [2.0]; }; mass = 1.5; shape = \"rod\"; "
    "length = 0.5; direction = [1.0, 0.0, 0.0]; radius = 0.01; }\n);\n"
    "loops = ( { name = \"C\"; type = \"revolute\"; body1 = \"coupler\"; frame1 = { origin = "
    "[0.7, 0.0, 0.0]; axis = [0.0, 1.0, 0.0]; }; body2 = \"rocker\"; frame2 = { origin = [0.5, "
    "0.0, 0.0]; axis = [0.0, 1.0, 0.0]; }; } ); };\n";
static const char *const CJOINT = "joint = { type = \"revolute\"; axis = [0.0, 1.0, 0.0]; origin "
                                  "= [0.2, 0.0, 0.0]; q0 = [-0.78]; qd0 = [6.0]; }";

static double fourbar(double *lam_err) {
  char a[4096], b[4096];
  mbsFlexBeamSpec s;
  mbs_flexBeamDefault(&s);
  s.length = 0.7, s.E = 7e10, s.rho = 2700, s.area = 2e-4, s.Iy = 2e-9, s.Iz = 3e-9;
  mbsReal mass, com[3], in[6];
  mbs_flexRigidEquivalent(&s, &mass, com, in);
  snprintf(a, sizeof a,
           "%s{ name = \"coupler\"; parent = \"crank\"; %s; flexible = { beam = { length = 0.7; "
           "E = 7e10; rho = 2700.0; area = 2e-4; Iy = 2e-9; Iz = 3e-9; elements = 6; }; modes = "
           "0; }; },\n%s",
           FOURBAR_HEAD, CJOINT, FOURBAR_TAIL);
  snprintf(b, sizeof b,
           "%s{ name = \"coupler\"; parent = \"crank\"; %s; mass = %.17g; com = [%.17g, 0.0, "
           "0.0]; inertia = [%.17g, %.17g, %.17g, 0.0, 0.0, 0.0]; },\n%s",
           FOURBAR_HEAD, CJOINT, mass, com[0], in[0], in[1], in[2], FOURBAR_TAIL);
  mbsModel *ma = mbs_test_buildText(a), *mb = mbs_test_buildText(b);
  double worst = -1;
  *lam_err = -1;
  if (ma && mb) {
    mbsState *st = NULL;
    mbsWork *w = NULL;
    mbsFlexOracle *o = NULL;
    MBS_EXPECT_OK(mbs_stateCreate(mb, &st));
    MBS_EXPECT_OK(mbs_workCreate(mb, &w));
    MBS_EXPECT_OK(mbs_flexOracleCreate(ma, &o));
    if (st && w && o) {
      // both assembled q0 onto the loop the same way (the beam is the rigid body at eta = 0)
      for (int i = 0; i < mb->nv; i++) MBS_EXPECT_NEAR(ma->q0[i], mb->q0[i], 1e-14);
      MBS_EXPECT_OK(mbs_forward(mb, st, w));
      int n = mbs_flexOracleSize(o);
      MBS_EXPECT(n == mb->nv, "size %d", n);
      double ya[8];
      MBS_EXPECT_OK(mbs_flexOracleAccel(o, ma->q0, ma->qd0, NULL, ya));
      worst = 0;
      for (int k = 0; k < n && k < 8; k++) {
        double sc = 1 + fabs(w->qdd[k]);
        MBS_EXPECT_NEAR(ya[k] / sc, w->qdd[k] / sc, 1e-12);
        worst = fmax(worst, fabs(ya[k] - w->qdd[k]) / sc);
      }
      mbsFlexLoopInfo li;
      MBS_EXPECT_OK(mbs_flexOracleLoopInfo(o, &li));
      MBS_EXPECT(li.n == 5 && li.rank == 2, "rank %d of %d (expected 2 of 5)", li.rank, li.n);
      double lmax = 0;
      const mbsReal *lr = w->lam + mb->loop_lamadr[0];
      for (int i = 0; i < li.n; i++) lmax = fmax(lmax, fabs(lr[i]));
      *lam_err = 0;
      for (int i = 0; i < li.n; i++) {
        MBS_EXPECT_NEAR(li.lam[i] / (1 + lmax), lr[i] / (1 + lmax), 1e-12);
        *lam_err = fmax(*lam_err, fabs(li.lam[i] - lr[i]) / (1 + lmax));
      }
      MBS_EXPECT(lmax > 1, "the loop carries a force (|lam| %g)", lmax);
    }
    mbs_flexOracleDestroy(&o);
    mbs_workDestroy(&w);
    mbs_stateDestroy(&st);
  }
  mbs_modelDestroy(&ma), mbs_modelDestroy(&mb);
  return worst;
}

// (b): returns the worst of the three relative consistency errors
static double spatial(int onnode, int baum) {
  char t[4096];
  snprintf(t, sizeof t,
           "%smodel = { gravity = [0.2, 0.1, -9.81]; bodies = (\n"
           "{ name = \"link\"; parent = \"ground\"; joint = { type = \"universal\"; axis = [0.0, "
           "1.0, 0.0]; axis2 = [0.0, 0.0, 1.0]; }; flexible = { beam = { length = 1.0; E = "
           "2.0e9; rho = 2700.0; area = 1e-4; Iy = 2e-10; Iz = 3e-10; elements = 6; }; modes = "
           "2; nodes = ( { name = \"tip\"; position = [1.0, 0.0, 0.0]; } ); }; },\n"
           "{ name = \"arm\"; parent = \"ground\"; joint = { type = \"revolute\"; axis = [0.0, "
           "0.0, 1.0]; origin = [1.0, 0.6, 0.0]; }; mass = 0.8; com = [0.0, -0.3, 0.0]; inertia "
           "= [0.03, 0.01, 0.03, 0.0, 0.0, 0.0]; },\n"
           "{ name = \"rod\"; parent = \"arm\"; joint = { type = \"universal\"; axis = [1.0, "
           "0.0, 0.0]; axis2 = [0.0, 0.0, 1.0]; origin = [0.0, -0.6, 0.0]; }; mass = 0.3; com = "
           "[0.0, 0.0, 0.0]; inertia = [0.001, 0.001, 0.001, 0.0, 0.0, 0.0]; }\n);\n"
           "loops = ( { name = \"S\"; type = \"spherical\"; body1 = \"link\"; %s frame1 = { "
           "origin = [%s, 0.0, 0.0]; }; body2 = \"rod\"; frame2 = { origin = [0.0, 0.0, 0.0]; "
           "}; } ); };\n",
           baum ? "solver = { baumgarte = [3.0, 4.0]; };\n" : "", onnode ? "node1 = \"tip\";" : "",
           onnode ? "0.0" : "1.0");
  mbsModel *m = mbs_test_buildText(t);
  double worst = 1;
  if (!m) return worst;
  mbsFlexOracle *o = NULL;
  MBS_EXPECT_OK(mbs_flexOracleCreate(m, &o));
  if (o) {
    int N = mbs_flexOracleSize(o), nv = m->nv, ne = N - nv, nq = m->nq;
    MBS_EXPECT(nq == nv && N <= 32, "scalar joints only (nq %d nv %d N %d)", nq, nv, N);
    // a random state on no particular closure (c, cdot nonzero: the identities hold anywhere)
    double q[32], eta[32], y[32], ydd[32], qp[32], ep[32], yp[32], c0[8], c1[8], d0[8], d1[8];
    unsigned long long seed = 7;
    for (int i = 0; i < nv; i++)
      q[i] = m->q0[i] + 0.1 * mbs_test_uniform(&seed, -1, 1), y[i] = mbs_test_uniform(&seed, -1, 1);
    for (int i = 0; i < ne; i++)
      eta[i] = 1e-3 * mbs_test_uniform(&seed, -1, 1),
      y[nv + i] = 0.05 * mbs_test_uniform(&seed, -1, 1);
    MBS_EXPECT_OK(mbs_flexOracleAccel(o, q, y, eta, ydd));
    mbsFlexLoopInfo li;
    MBS_EXPECT_OK(mbs_flexOracleLoopInfo(o, &li));
    int n = li.n;
    double e1 = 0, e2 = 0, e3 = 0, sc = 0, cdsc = 0, ysc = 0;
    for (int i = 0; i < N; i++) ysc = fmax(ysc, fabs(ydd[i]));
    for (int i = 0; i < n; i++) {
      double g = 0;
      for (int j = 0; j < N; j++) g += li.G[(size_t)i * N + j] * y[j];
      sc = fmax(sc, fabs(li.cdot[i]));
      e1 = fmax(e1, fabs(g - li.cdot[i]));
    }
    e1 /= sc;
    const double h = 1e-5;
    for (int s = -1; s <= 1; s += 2) {
      for (int i = 0; i < nv; i++) qp[i] = q[i] + s * h * y[i], yp[i] = y[i] + s * h * ydd[i];
      for (int i = 0; i < ne; i++)
        ep[i] = eta[i] + s * h * y[nv + i], yp[nv + i] = y[nv + i] + s * h * ydd[nv + i];
      double tmp[32];
      MBS_EXPECT_OK(mbs_flexOracleAccel(o, qp, yp, ep, tmp));
      MBS_EXPECT_OK(mbs_flexOracleLoopInfo(o, &li));
      for (int i = 0; i < n; i++) (s < 0 ? c0 : c1)[i] = li.c[i], (s < 0 ? d0 : d1)[i] = li.cdot[i];
    }
    // back to the state (li.cdot of it)
    MBS_EXPECT_OK(mbs_flexOracleAccel(o, q, y, eta, ydd));
    MBS_EXPECT_OK(mbs_flexOracleLoopInfo(o, &li));
    for (int i = 0; i < n; i++) {
      e2 = fmax(e2, fabs((c1[i] - c0[i]) / (2 * h) - li.cdot[i]));
      // cddot along the flow: -2 alpha cdot - beta^2 c by the KKT rows (0 without Baumgarte)
      double cdd = (d1[i] - d0[i]) / (2 * h) + (baum ? 2 * 3.0 * li.cdot[i] + 16.0 * li.c[i] : 0);
      cdsc = fmax(cdsc, fabs(cdd));
      e3 = fmax(e3, fabs(cdd));
    }
    e2 /= sc, e3 /= fmax(ysc, 1);
    printf("  (b) %s%s: |G y - cdot| %.2g, fd(c) - cdot %.2g, fd(cdot) along the solved motion "
           "%.2g (relative), rank %d of %d\n",
           onnode ? "on the tip node" : "on the body frame", baum ? ", Baumgarte [3, 4]" : "", e1,
           e2, e3, li.rank, n);
    MBS_EXPECT(e1 < 1e-12, "G y against cdot: %g", e1);
    MBS_EXPECT(e2 < 1e-8, "finite differences of c against cdot: %g", e2);
    MBS_EXPECT(e3 < 1e-8, "cddot along the solved motion: %g", e3);
    MBS_EXPECT(sc > 1e-3, "the state moves the loop (cdot %g)", sc);
    worst = fmax(e1, fmax(e2, e3));
  }
  mbs_flexOracleDestroy(&o);
  mbs_modelDestroy(&m);
  return worst;
}

int main(void) {
  double le, fb = fourbar(&le);
  printf("(a) four-bar, coupler a flexible beam with m = 0, against the rigid baseline: qdd %.3g, "
         "loop lambda %.3g (bound 1e-12)\n",
         fb, le);
  MBS_EXPECT(fb >= 0 && le >= 0, "four-bar not built");
  double sn = spatial(1, 0), sb = spatial(0, 0), sz = spatial(1, 1);
  printf("(b) worst consistency error: node %.3g, body frame %.3g, node with Baumgarte %.3g\n", sn,
         sb, sz);
  return mbs_test_finish("test_flex_loops");
}
