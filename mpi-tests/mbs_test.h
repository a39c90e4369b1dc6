/// \file mbs_test.h
/// Minimal test helpers shared by the tests (serial ones and MPI ones). Each test counts its
/// failures; MPI tests reduce the count over ranks before exiting so every rank agrees.
#ifndef MBS_TEST_H
#define MBS_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbspar.h"
#include "mbspar/mbs_solvertype.h"
#include "mbspar/mbs_config.h"

static int mbs_test_fail = 0;

#define MBS_EXPECT(cond, ...)                                                                      \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      mbs_test_fail++;                                                                             \
      fprintf(stderr, "%s:%d: FAILED %s: ", __FILE__, __LINE__, #cond);                            \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fprintf(stderr, "\n");                                                                       \
    }                                                                                              \
  } while (0)

#define MBS_EXPECT_NEAR(a, b, tol)                                                                 \
  do {                                                                                             \
    double mbs_a_ = (a), mbs_b_ = (b);                                                             \
    if (!(fabs(mbs_a_ - mbs_b_) <= (tol))) {                                                       \
      mbs_test_fail++;                                                                             \
      fprintf(stderr, "%s:%d: FAILED |%s - %s| = %.3e > %.3e (%.17g vs %.17g)\n", __FILE__,        \
              __LINE__, #a, #b, fabs(mbs_a_ - mbs_b_), (double)(tol), mbs_a_, mbs_b_);             \
    }                                                                                              \
  } while (0)

#define MBS_EXPECT_OK(expr)                                                                        \
  do {                                                                                             \
    mbsErr mbs_e_ = (expr);                                                                        \
    if (mbs_e_ != MBS_OK) {                                                                        \
      mbs_test_fail++;                                                                             \
      fprintf(stderr, "%s:%d: FAILED %s -> %s: %s\n", __FILE__, __LINE__, #expr,                   \
              mbs_errString(mbs_e_), mbs_errMsg());                                                \
    }                                                                                              \
  } while (0)

/// The solver rows registered in this program that \p pick accepts (NULL: every row), in id
/// order, into ids[0..cap); returns their number. Tests iterate the table through this and the
/// rows' capability flags instead of listing methods, so that a new row is checked against the
/// oracle without editing a test (docs/code.md "How to add a solver").
static inline int mbs_test_solvers(int (*pick)(const mbsSolverType *), int *ids, int cap) {
  int n = 0;
  for (int id = 0; id < MBS_SOLVER_COUNT && n < cap; id++) {
    const mbsSolverType *t = mbs_solverFind(id);
    if (t && (!pick || pick(t))) ids[n++] = id;
  }
  return n;
}

/// Relative norm-wise difference ||a - b|| / max(||b||, floor).
static inline double mbs_test_relDiff(const double *a, const double *b, int n, double floor) {
  double num = 0, den = 0;
  for (int i = 0; i < n; i++) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  den = sqrt(den);
  return sqrt(num) / (den > floor ? den : floor);
}

/// Deterministic uniform random numbers in [0,1) (xorshift64*).
static inline double mbs_test_rand(unsigned long long *st) {
  *st ^= *st >> 12;
  *st ^= *st << 25;
  *st ^= *st >> 27;
  return (double)((*st * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}
static inline double mbs_test_uniform(unsigned long long *st, double lo, double hi) {
  return lo + (hi - lo) * mbs_test_rand(st);
}

/// Build a random tree of \p nbody bodies mixing the joint types in \p types (count \p ntypes),
/// random parents (or a chain if \p chain), random geometry, inertia, q0, qd0, joint forces.
/// Floating bases appear only as children of the ground when allowed by \p types. With
/// \p coord > 0, each joint axis is +-e_k (random k and sign) with probability \p coord, which
/// selects the axis-specialised kernels of revolute joints (coord = 0 draws no extra numbers:
/// the same models as mbs_test_randomModel).
static inline mbsErr mbs_test_randomBodiesEx(mbsModel *m, int nbody, const int *types, int ntypes,
                                             int chain, unsigned long long seed, double coord) {
  unsigned long long st = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (int b = 0; b < nbody; b++) {
    mbsBodySpec sp;
    mbs_bodySpecDefault(&sp);
    char name[32];
    snprintf(name, sizeof name, "b%d", b);
    sp.name = name;
    sp.parent = chain ? b - 1 : (b == 0 ? -1 : (int)(mbs_test_rand(&st) * (b + 1)) - 1);
    int t = types[(int)(mbs_test_rand(&st) * ntypes)];
    if (t == MBS_JNT_FREE && sp.parent >= 0) t = MBS_JNT_SPHERICAL;
    sp.jnttype = t;
    for (int k = 0; k < 3; k++) {
      sp.origin[k] = mbs_test_uniform(&st, -0.6, 0.6);
      sp.axis[k] = mbs_test_uniform(&st, -1, 1);
      sp.axis2[k] = mbs_test_uniform(&st, -1, 1);
      sp.com[k] = mbs_test_uniform(&st, -0.3, 0.3);
    }
    if (coord > 0 && mbs_test_rand(&st) < coord) {
      int k = (int)(mbs_test_rand(&st) * 3);
      sp.axis[0] = sp.axis[1] = sp.axis[2] = 0;
      sp.axis[k] = mbs_test_rand(&st) < 0.5 ? -1 : 1;
    }
    sp.mass = mbs_test_uniform(&st, 0.5, 2.0);
    // inertia = R diag(l) R^T with principal moments obeying the triangle inequality
    double l0 = mbs_test_uniform(&st, 0.05, 0.2), l1 = mbs_test_uniform(&st, 0.05, 0.2);
    double l2 = mbs_test_uniform(&st, fabs(l0 - l1) + 0.01, l0 + l1 - 0.001);
    double ax[3] = {mbs_test_uniform(&st, -1, 1), mbs_test_uniform(&st, -1, 1),
                    mbs_test_uniform(&st, -1, 1)};
    double an = sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]);
    double th = mbs_test_uniform(&st, 0, 3), c = cos(th), s = sin(th), tt = 1 - c, R[9];
    for (int k = 0; k < 3; k++) ax[k] /= an;
    R[0] = c + tt * ax[0] * ax[0], R[1] = tt * ax[0] * ax[1] - s * ax[2];
    R[2] = tt * ax[0] * ax[2] + s * ax[1], R[3] = tt * ax[0] * ax[1] + s * ax[2];
    R[4] = c + tt * ax[1] * ax[1], R[5] = tt * ax[1] * ax[2] - s * ax[0];
    R[6] = tt * ax[0] * ax[2] - s * ax[1], R[7] = tt * ax[1] * ax[2] + s * ax[0];
    R[8] = c + tt * ax[2] * ax[2];
    double L[3] = {l0, l1, l2}, I[9];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++)
        I[3 * i + j] = R[3 * i] * L[0] * R[3 * j] + R[3 * i + 1] * L[1] * R[3 * j + 1] +
                       R[3 * i + 2] * L[2] * R[3 * j + 2];
    sp.inertia[0] = I[0], sp.inertia[1] = I[4], sp.inertia[2] = I[8];
    sp.inertia[3] = I[1], sp.inertia[4] = I[2], sp.inertia[5] = I[5];
    int nq = mbs_jntNq(t), nv = mbs_jntNv(t);
    for (int k = 0; k < nq; k++) sp.q0[k] = mbs_test_uniform(&st, -1.5, 1.5);
    if (t == MBS_JNT_SPHERICAL || t == MBS_JNT_FREE) {
      double *qq = sp.q0 + (t == MBS_JNT_FREE ? 3 : 0);
      double n = sqrt(qq[0] * qq[0] + qq[1] * qq[1] + qq[2] * qq[2] + qq[3] * qq[3]);
      for (int k = 0; k < 4; k++) qq[k] /= n;
    }
    for (int k = 0; k < nv; k++) {
      sp.qd0[k] = mbs_test_uniform(&st, -2, 2);
      sp.force[k] = mbs_test_uniform(&st, -1, 1);
      sp.damping[k] = mbs_test_uniform(&st, 0, 0.2);
      if (t != MBS_JNT_SPHERICAL && t != MBS_JNT_FREE) {
        sp.stiffness[k] = mbs_test_uniform(&st, 0, 2);
        sp.springref[k] = mbs_test_uniform(&st, -0.5, 0.5);
      }
    }
    MBS_CALL(mbs_modelAddBody(m, &sp, NULL));
  }
  m->gravity[0] = 0.3, m->gravity[1] = -0.2, m->gravity[2] = -9.81;
  return MBS_OK;
}

/// mbs_test_randomModelEx's bodies appended to \p m (not finalized), without coordinate axes;
/// gravity set.
static inline mbsErr mbs_test_randomBodies(mbsModel *m, int nbody, const int *types, int ntypes,
                                           int chain, unsigned long long seed) {
  return mbs_test_randomBodiesEx(m, nbody, types, ntypes, chain, seed, 0);
}

/// The finalized model of mbs_test_randomBodiesEx.
static inline mbsErr mbs_test_randomModelEx(int nbody, const int *types, int ntypes, int chain,
                                            unsigned long long seed, double coord, mbsModel **out) {
  mbsModel *m;
  MBS_CALL(mbs_modelCreate(&m, nbody));
  mbsErr e = mbs_test_randomBodiesEx(m, nbody, types, ntypes, chain, seed, coord);
  if (!e) e = mbs_modelFinalize(m);
  if (e) {
    mbs_modelDestroy(&m);
    return e;
  }
  *out = m;
  return MBS_OK;
}

/// mbs_test_randomModelEx without coordinate axes.
static inline mbsErr mbs_test_randomModel(int nbody, const int *types, int ntypes, int chain,
                                          unsigned long long seed, mbsModel **out) {
  return mbs_test_randomModelEx(nbody, types, ntypes, chain, seed, 0, out);
}

/// The whole file at path as a NUL-terminated string (free it), NULL if it cannot be opened.
static inline char *mbs_test_slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)(n > 0 ? n : 0) + 1);
  if (b && n > 0 && fread(b, 1, (size_t)n, f) != (size_t)n) n = 0;
  if (b) b[n > 0 ? n : 0] = 0;
  fclose(f);
  return b;
}

// The model of config text (file name "t.cfg" in messages), or NULL with the error printed.
static inline mbsModel *mbs_test_buildText(const char *text) {
  mbsConfig *cfg = NULL;
  mbsModel *m = NULL;
  mbsErr e = mbs_configParse(text, "t.cfg", NULL, 0, &cfg);
  if (!e) e = mbs_configBuildModel(cfg, &m);
  if (e) fprintf(stderr, "build: %s\n", mbs_errMsg());
  mbs_configDestroy(&cfg);
  return m;
}

// The serial ABA oracle of a model at its initial state: a new state *s and workspace *w holding
// q̈ and λ (mbs_forward with solver aba, then mbs_constraintLambda); the model's solver is left at
// aba. Returns the first error (what is created stays in *s, *w for the caller to destroy).
static inline mbsErr mbs_test_abaOracle(mbsModel *m, mbsState **s, mbsWork **w) {
  *s = NULL, *w = NULL;
  MBS_CALL(mbs_stateCreate(m, s));
  MBS_CALL(mbs_workCreate(m, w));
  m->opt.solver = MBS_SOLVER_ABA;
  MBS_CALL(mbs_forward(m, *s, *w));
  mbs_constraintLambda(m, *w);
  return MBS_OK;
}

static const int mbs_test_alltypes[] = {MBS_JNT_FIXED,       MBS_JNT_REVOLUTE,  MBS_JNT_PRISMATIC,
                                        MBS_JNT_CYLINDRICAL, MBS_JNT_UNIVERSAL, MBS_JNT_SPHERICAL,
                                        MBS_JNT_FREE};

static inline int mbs_test_finish(const char *name) {
  if (mbs_test_fail)
    printf("%s: %d failure(s)\n", name, mbs_test_fail);
  else
    printf("%s: all checks passed\n", name);
  return mbs_test_fail ? 1 : 0;
}

#endif
