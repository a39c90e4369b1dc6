/// \file test_flex_beam.c
/// The modal source of flexible bodies (mbs_flex.h, docs/flexible.md; issue 34), against closed
/// forms of a clamped-free (cantilever) uniform beam:
/// - bending: omega_k = (beta_k L)^2 sqrt(E I / (rho A L^4)), beta_1 L = 1.87510407,
///   beta_2 L = 4.69409113, in both planes; axial: (2k - 1) pi / 2 sqrt(E / rho) / L; torsion:
///   (2k - 1) pi / 2 sqrt(G J / (rho Ip)) / L; each within 0.5 % (and converging as the mesh
///   grows), from the fixed-interface modes (no nodes) and from the Craig–Bampton body with a tip
///   node;
/// - the static tip deflection under its weight, w L^4 / (8 E I), from the reduced stiffness and
///   the invariant Sbar (the modes' load under a uniform acceleration): exact to rounding (cubic
///   Hermite elements are exact at the nodes, and Craig–Bampton's stiffness is block diagonal, so
///   the tip's constraint modes carry the static condensation whatever the normal modes kept);
/// - the eigensolver on a matrix pair with known eigenvalues; the banded LAPACK reduction against
///   the dense Jacobi solver (the exact Craig–Bampton body); a 400-element mesh; the refusals of
///   bad input.
#include "mbs_test.h"
#include "mbspar/mbs_flex.h"

static const double PI = 3.14159265358979323846;
static const double L = 1.0, E = 2.1e11, RHO = 7850, A = 1e-4, I2 = 8.3333e-10;

static void beam(mbsFlexBeamSpec *s, int ne, int modes, int tip) {
  mbs_flexBeamDefault(s);
  s->length = L, s->E = E, s->rho = RHO, s->area = A, s->Iy = s->Iz = I2;
  s->elements = ne, s->modes = modes;
  s->nnodes = tip ? 1 : 0;
  s->node_x[0] = L;
}

// the worst relative distance of each closed-form frequency to the nearest computed one
static double match(const double *om, int n, const double *ref, int nref) {
  double worst = 0;
  for (int r = 0; r < nref; r++) {
    double best = 1e300;
    for (int i = 0; i < n; i++) best = fmin(best, fabs(om[i] - ref[r]) / ref[r]);
    worst = fmax(worst, best);
  }
  return worst;
}

int main(void) {
  // the eigensolver: A = diag(1..5) in a rotated basis, B = 2 I -> lambda = k / 2
  {
    double Am[25] = {0}, Bm[25] = {0}, lam[5], V[25];
    for (int k = 0; k < 5; k++) Am[6 * k] = k + 1, Bm[6 * k] = 2;
    double c = cos(0.3), s = sin(0.3); // rotate dofs 1 and 3
    for (int k = 0; k < 5; k++) {
      double a = Am[5 * 1 + k], b = Am[5 * 3 + k];
      Am[5 * 1 + k] = c * a - s * b, Am[5 * 3 + k] = s * a + c * b;
    }
    for (int k = 0; k < 5; k++) {
      double a = Am[5 * k + 1], b = Am[5 * k + 3];
      Am[5 * k + 1] = c * a - s * b, Am[5 * k + 3] = s * a + c * b;
    }
    MBS_EXPECT(mbs_symGenEig(5, Am, Bm, lam, V) == 0, "symGenEig failed");
    for (int k = 0; k < 5; k++) MBS_EXPECT_NEAR(lam[k], (k + 1) / 2.0, 1e-14);
  }
  double EI = E * I2, wb = sqrt(EI / (RHO * A * L * L * L * L));
  double G = E / 2.6, Jt = 2 * I2;
  double ref[6] = {1.87510407 * 1.87510407 * wb,
                   4.69409113 * 4.69409113 * wb,
                   PI / 2 * sqrt(E / RHO) / L,
                   3 * PI / 2 * sqrt(E / RHO) / L,
                   PI / 2 * sqrt(G * Jt / (RHO * Jt)) / L,
                   0};
  // bending only for the first check (the lowest 4 modes are the two planes' first two)
  double prev = 1;
  printf("cantilever, fixed-interface modes: elements, worst error of bending 1-2 (both planes), "
         "axial 1, torsion 1\n");
  for (int ne = 4; ne <= 32; ne *= 2) {
    mbsFlexBeamSpec s;
    mbsFlexModal f;
    beam(&s, ne, 24, 0);
    MBS_EXPECT_OK(mbs_flexBeamReduce(&s, &f));
    if (!f.m) continue;
    double eb = match(f.omega_fixed, 4, ref, 2), ea = match(f.omega_fixed, 24, ref + 2, 1),
           et = match(f.omega_fixed, 24, ref + 4, 1);
    printf("  %3d  %.2e  %.2e  %.2e\n", ne, eb, ea, et);
    if (ne >= 8) {
      MBS_EXPECT(eb < 5e-3 && ea < 5e-3 && et < 5e-3, "ne %d: frequencies off (%.3g %.3g %.3g)", ne,
                 eb, ea, et);
      MBS_EXPECT(eb < prev, "bending frequencies do not converge (%.3g after %.3g)", eb, prev);
    }
    prev = eb;
    mbs_flexModalFree(&f);
  }
  // the banded LAPACK reduction against the dense Jacobi solver: with every interior mode kept,
  // Craig–Bampton is exact, so the tip-node body's reduced frequencies (Jacobi on the m x m
  // reduced pair) are the clamped-free beam's, which the node-free body's fixed-interface modes
  // (LAPACK dsbgvx on the banded FE pair) give directly
  {
    enum { NE = 12, NI = 6 * NE - 6 }; // interior dofs: all but the root's and the tip's
    mbsFlexBeamSpec s;
    mbsFlexModal f0, f1;
    beam(&s, NE, 6 * NE, 0); // every dof: the clamped-free beam's whole spectrum
    MBS_EXPECT_OK(mbs_flexBeamReduce(&s, &f0));
    beam(&s, NE, NI, 1);
    MBS_EXPECT_OK(mbs_flexBeamReduce(&s, &f1));
    double om[6 * NE], worst = 0;
    MBS_EXPECT(mbs_flexModalFrequencies(&f1, f1.m, om) == 0, "reduced frequencies (Jacobi)");
    for (int k = 0; k < 30; k++)
      worst = fmax(worst, fabs(om[k] - f0.omega_fixed[k]) / f0.omega_fixed[k]);
    printf("the 30 lowest frequencies, LAPACK dsbgvx (banded, %d elements) against Jacobi on the "
           "exact Craig-Bampton body: worst relative difference %.2e\n",
           NE, worst);
    MBS_EXPECT(worst < 1e-9, "banded and dense eigensolvers disagree by %.3g", worst);
    mbs_flexModalFree(&f0), mbs_flexModalFree(&f1);
  }
  // a fine mesh (the dense Jacobi reduction took 6 s at 100 elements, 168 s at 200): its
  // bending frequencies are closer to the closed form than the 32-element mesh's
  {
    mbsFlexBeamSpec s;
    mbsFlexModal f;
    beam(&s, 160, 8, 0);
    MBS_EXPECT_OK(mbs_flexBeamReduce(&s, &f));
    double eb = match(f.omega_fixed, 4, ref, 2);
    printf("160 elements, 8 modes: bending error %.2e (32 elements: %.2e)\n", eb, prev);
    MBS_EXPECT(eb < prev, "the 160-element mesh is no better (%.3g against %.3g)", eb, prev);
    mbs_flexModalFree(&f);
  }
  // Craig–Bampton with a tip node: the reduced body's own frequencies, and the weight's deflection
  {
    mbsFlexBeamSpec s;
    mbsFlexModal f;
    // 4 normal modes: the fixed-interface bending modes, so the body's bending is right; its axial
    // motion has only the tip's constraint mode (a linear field: Rayleigh's sqrt(3) against pi/2,
    // 10 % high) until interior axial modes are kept (24 modes)
    for (int modes = 4; modes <= 24; modes += 20) {
      beam(&s, 10, modes, 1);
      MBS_EXPECT_OK(mbs_flexBeamReduce(&s, &f));
      MBS_EXPECT(f.m == 6 + modes, "6 constraint + %d normal modes expected, got %d", modes, f.m);
      double om[30];
      MBS_EXPECT(mbs_flexModalFrequencies(&f, f.m, om) == 0, "reduced frequencies");
      double eb = match(om, 4, ref, 2), ea = match(om, f.m, ref + 2, 1);
      printf("Craig-Bampton (10 elements, tip node, %d modes): bending %.2e, axial %.2e\n", modes,
             eb, ea);
      MBS_EXPECT(eb < 5e-3, "CB bending frequencies off (%.3g)", eb);
      MBS_EXPECT(modes < 24 ? ea > 0.05 : ea < 1e-2, "CB axial frequency: %.3g", ea);
      mbs_flexModalFree(&f);
    }
  }
  double wl = RHO * A * 9.81, defl = wl * L * L * L * L / (8 * EI);
  for (int all = 0; all < 2; all++) {
    mbsFlexBeamSpec s;
    mbsFlexModal f;
    beam(&s, 10, all ? 6 * 10 - 6 - 6 : 4, 1); // all: every interior dof (54 - 6 at the tip)
    MBS_EXPECT_OK(mbs_flexBeamReduce(&s, &f));
    int m = f.m;
    if (!m) continue;
    double *Kc = malloc(sizeof(double) * (size_t)m * m), *eta = malloc(sizeof(double) * (size_t)m);
    memcpy(Kc, f.K, sizeof(double) * (size_t)m * m);
    for (int i = 0; i < m; i++) eta[i] = -9.81 * f.Sbar[(size_t)2 * m + i]; // gravity along -z
    // K eta = f by Gaussian elimination (K is positive definite: the root is clamped)
    for (int c = 0; c < m; c++)
      for (int r = c + 1; r < m; r++) {
        double t = Kc[(size_t)r * m + c] / Kc[(size_t)c * m + c];
        for (int k = c; k < m; k++) Kc[(size_t)r * m + k] -= t * Kc[(size_t)c * m + k];
        eta[r] -= t * eta[c];
      }
    for (int r = m - 1; r >= 0; r--) {
      for (int k = r + 1; k < m; k++) eta[r] -= Kc[(size_t)r * m + k] * eta[k];
      eta[r] /= Kc[(size_t)r * m + r];
    }
    double w = 0; // the tip's w (FE node 10, dof 2)
    for (int i = 0; i < m; i++) w += f.Phi[(size_t)(6 * 10 + 2) * m + i] * eta[i];
    double err = fabs(-w - defl) / defl;
    printf("tip deflection under the weight (%s modes): %.6e m, closed form %.6e m, error %.2e\n",
           all ? "all 48" : "4", -w, defl, err);
    MBS_EXPECT(err < (all ? 1e-9 : 1e-2), "tip deflection off by %.3g", err);
    free(Kc), free(eta);
    mbs_flexModalFree(&f);
  }
  // refusals
  {
    mbsFlexBeamSpec s;
    mbsFlexModal f;
    beam(&s, 10, 4, 1);
    s.node_x[0] = 0.55;
    MBS_EXPECT(mbs_flexBeamReduce(&s, &f) == MBS_ERR_INPUT, "a node off the mesh was accepted");
    beam(&s, 10, 4, 1);
    s.node_x[0] = 0;
    MBS_EXPECT(mbs_flexBeamReduce(&s, &f) == MBS_ERR_INPUT, "a node at the root was accepted");
    beam(&s, 2, 13, 0);
    MBS_EXPECT(mbs_flexBeamReduce(&s, &f) == MBS_ERR_INPUT,
               "13 modes of 12 interior dofs accepted");
    beam(&s, 10, 4, 0);
    s.E = -1;
    MBS_EXPECT(mbs_flexBeamReduce(&s, &f) == MBS_ERR_INPUT, "a negative E was accepted");
    beam(&s, 0, 4, 0);
    MBS_EXPECT(mbs_flexBeamReduce(&s, &f) == MBS_ERR_INPUT, "0 elements were accepted");
  }
  return mbs_test_finish("test_flex_beam");
}
