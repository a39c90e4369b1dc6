/// \file seed003_counts.c
/// Seed 003's Table 4 against mbspar's counted flops (issue 36; docs/seeds.md section 5).
/// The seed counts multiplications/divisions (M) and additions/subtractions (A) of its recursive
/// inverse dynamics, (94n - 81) M + (82n - 75) A, and forward dynamics, (135n - 116) M +
/// (131n - 123) A, for n one-dof joints, beside Featherstone's ABA of 1983, (199n - 198) M +
/// (174n - 173) A, and others. mbspar counts every +, -, *, / (and sqrt, sin, cos) of its kernels
/// in the instrumented build (src/flops.h: MBS_FLOPS, the counts test_cpa checks against the
/// critical-path graphs), so the comparison is with M + A. Serial chains of n revolute joints
/// about general axes (and about a coordinate axis, which mbspar's ABA specialises): the flops of
/// one evaluation from (q, qd, tau), split into the kinematics (positions and velocities, which
/// the seed's counts include in theirs) and the recursions. Prints a table and the least-squares
/// lines a n + b over n = 16..128. Reports, never asserts.
///   cmake --build build --target seed003_counts && build/bench/seed003_counts
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "flops.h"
#include "mbspar/mbs_dynamics.h"
#include "mbspar/mbs_model.h"
#include "mbspar/mbs_state.h"

static mbsModel *chain(int n, int coord) {
  mbsModel *m = NULL;
  if (mbs_modelCreate(&m, n)) return NULL;
  for (int b = 0; b < n; b++) {
    mbsBodySpec sp;
    mbs_bodySpecDefault(&sp);
    char name[32];
    snprintf(name, sizeof name, "l%d", b);
    sp.name = name;
    sp.parent = b - 1;
    sp.jnttype = MBS_JNT_REVOLUTE;
    double ax[3] = {0.3, 0.8, -0.5};
    if (coord) ax[0] = ax[2] = 0, ax[1] = 1;
    memcpy(sp.axis, ax, sizeof ax);
    sp.origin[0] = b ? 0.1 : 0, sp.origin[2] = b ? -0.02 : 0;
    sp.com[0] = 0.05, sp.com[1] = 0.01;
    sp.mass = 1;
    sp.inertia[0] = 0.01, sp.inertia[1] = 0.02, sp.inertia[2] = 0.025;
    sp.q0[0] = 0.1 * b, sp.qd0[0] = 0.2;
    if (mbs_modelAddBody(m, &sp, NULL)) {
      mbs_modelDestroy(&m);
      return NULL;
    }
  }
  if (mbs_modelFinalize(m)) mbs_modelDestroy(&m);
  return m;
}

// flops of: kinematics (position + velocity), then each recursion on top
static int count(int n, int coord, unsigned long long out[4]) {
  mbsModel *m = chain(n, coord);
  mbsState *s = NULL;
  mbsWork *w = NULL;
  if (!m || mbs_stateCreate(m, &s) || mbs_workCreate(m, &w) || mbs_workEnableCrba(m, w)) return -1;
  mbs_flop_count = 0;
  mbs_fwdPosition(m, s, w);
  mbs_fwdVelocity(m, s, w);
  out[0] = mbs_flop_count;
  mbs_flop_count = 0;
  mbs_rnea(m, w, w->qdd); // inverse dynamics at the state's qdd (zero)
  out[1] = mbs_flop_count;
  mbs_flop_count = 0;
  if (mbs_aba(m, w)) return -1;
  out[2] = mbs_flop_count;
  mbs_flop_count = 0;
  if (mbs_crba(m, w)) return -1;
  out[3] = mbs_flop_count;
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&m);
  return 0;
}

int main(void) {
  static const int ns[] = {1, 2, 4, 8, 16, 32, 64, 128};
  const int nn = sizeof ns / sizeof ns[0];
  for (int coord = 0; coord < 2; coord++) {
    printf("\n%s revolute axes: flops of one evaluation (every +, -, *, /)\n",
           coord ? "coordinate (y)" : "general");
    printf("%5s %12s %12s %12s %12s %14s %14s\n", "n", "kinematics", "RNEA", "ABA", "CRBA+LTDL",
           "kin+RNEA", "kin+ABA");
    double sx = 0, sxx = 0, sy[4] = {0}, sxy[4] = {0};
    int k = 0;
    for (int i = 0; i < nn; i++) {
      unsigned long long c[4];
      if (count(ns[i], coord, c)) {
        fprintf(stderr, "seed003_counts: model of %d links failed\n", ns[i]);
        return 1;
      }
      printf("%5d %12llu %12llu %12llu %12llu %14llu %14llu\n", ns[i], c[0], c[1], c[2], c[3],
             c[0] + c[1], c[0] + c[2]);
      if (ns[i] >= 16) { // least squares on the linear range
        double x = ns[i],
               y[4] = {(double)(c[0] + c[1]), (double)(c[0] + c[2]), (double)c[1], (double)c[2]};
        sx += x, sxx += x * x, k++;
        for (int j = 0; j < 4; j++) sy[j] += y[j], sxy[j] += x * y[j];
      }
    }
    const char *lab[4] = {"kinematics + RNEA (inverse)", "kinematics + ABA (forward)", "RNEA alone",
                          "ABA alone"};
    for (int j = 0; j < 4; j++) {
      double a = (k * sxy[j] - sx * sy[j]) / (k * sxx - sx * sx), b = (sy[j] - a * sx) / k;
      printf("  fit n = 16..128, %-28s %8.1f n %+9.1f\n", lab[j], a, b);
    }
  }
  printf("\nseed 003 Table 4 (M + A): inverse 176 n - 156 (proposed), 174 n - 134 ([13]); forward "
         "266 n - 239 (proposed), 323 n - 261 ([11]), 373 n - 371 (Featherstone 1983, [2])\n");
  return 0;
}
