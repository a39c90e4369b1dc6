/// \file mbs_test_loops.h
/// Test helpers for closed loops (test_loops, test_loops_par): random cut-joint frames and random
/// loop models (a random tree with loops closed at q0 and spring-dampers).
#ifndef MBS_TEST_LOOPS_H
#define MBS_TEST_LOOPS_H
#include "mbs_test.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_loops.h"
#include "spatial.h"

// the model of DIR/NAME with the --set overrides SETS (NULL on failure, counted as one)
static inline mbsModel *mbs_test_loadConfig(const char *dir, const char *name,
                                            const char *const *sets, int nsets) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  char *text = mbs_test_slurp(path);
  mbsConfig *cfg = NULL;
  mbsModel *m = NULL;
  MBS_EXPECT(text, "cannot read %s", path);
  if (!text) return NULL;
  MBS_EXPECT_OK(mbs_configParse(text, path, sets, nsets, &cfg));
  if (cfg) MBS_EXPECT_OK(mbs_configBuildModel(cfg, &m));
  mbs_configDestroy(&cfg);
  free(text);
  return m;
}

// a random frame (origin, axes) for a cut joint
static void mbs_test_randomFrame(unsigned long long *st, double *F) {
  double o[3], ax[3], ref[3];
  for (int k = 0; k < 3; k++) {
    o[k] = mbs_test_uniform(st, -0.5, 0.5);
    ax[k] = mbs_test_uniform(st, -1, 1);
    ref[k] = mbs_test_uniform(st, -1, 1);
  }
  MBS_EXPECT(mbsu_loopFrame(o, ax, ref, F), "random frame");
}

// a random tree with loops closed at q0 (frame 2 placed where frame 1 is) and spring-dampers
static mbsModel *mbs_test_randomLoopModel(int nbody, int nloop, int nforce,
                                          unsigned long long seed) {
  mbsModel *t = NULL, *m = NULL;
  MBS_EXPECT_OK(mbs_test_randomModel(nbody, mbs_test_alltypes, 7, 0, seed, &t));
  if (!t) return NULL;
  mbsState *s = NULL;
  mbsWork *w = NULL;
  MBS_EXPECT_OK(mbs_stateCreate(t, &s));
  MBS_EXPECT_OK(mbs_workCreate(t, &w));
  mbs_fwdPosition(t, s, w);
  MBS_EXPECT_OK(mbs_modelCreate(&m, nbody));
  MBS_EXPECT_OK(mbs_test_randomBodies(m, nbody, mbs_test_alltypes, 7, 0, seed));
  unsigned long long st = seed * 7919 + 3;
  static const int cut[] = {MBS_JNT_FIXED,       MBS_JNT_REVOLUTE,  MBS_JNT_PRISMATIC,
                            MBS_JNT_CYLINDRICAL, MBS_JNT_UNIVERSAL, MBS_JNT_SPHERICAL};
  for (int k = 0; k < nloop; k++) {
    mbsLoopSpec sp;
    char name[16];
    snprintf(name, sizeof name, "L%d", k);
    sp.name = name;
    sp.type = cut[(int)(mbs_test_rand(&st) * 6)];
    sp.body1 = (int)(mbs_test_rand(&st) * (nbody + 1)) - 1;
    sp.body2 = (int)(mbs_test_rand(&st) * nbody);
    if (sp.body2 == sp.body1) sp.body2 = (sp.body2 + 1) % nbody;
    mbs_test_randomFrame(&st, sp.frame1);
    // frame 2: frame 1's place and axes in body 2's coordinates (universal: turned 90 degrees
    // about x so the axes are perpendicular; prismatic, cylindrical: slid along the axis)
    double R1[9], x1[3] = {0, 0, 0}, R2[9], x2[3] = {0, 0, 0}, W[9], p[3], Wl[9], d[3], o[3];
    if (sp.body1 >= 0)
      memcpy(R1, w->xmat + 9 * sp.body1, sizeof R1), memcpy(x1, w->xpos + 3 * sp.body1, sizeof x1);
    else
      mbsu_eye3(R1);
    memcpy(R2, w->xmat + 9 * sp.body2, sizeof R2), memcpy(x2, w->xpos + 3 * sp.body2, sizeof x2);
    mbsu_mulMat3(R1, sp.frame1 + 3, W);
    mbsu_mulMat3Vec(R1, sp.frame1, p);
    for (int i = 0; i < 3; i++) p[i] += x1[i];
    if (sp.type == MBS_JNT_UNIVERSAL) { // columns (x, y, z) -> (x, z, -y)
      double Wu[9];
      for (int i = 0; i < 3; i++)
        Wu[3 * i] = W[3 * i], Wu[3 * i + 1] = W[3 * i + 2], Wu[3 * i + 2] = -W[3 * i + 1];
      memcpy(W, Wu, sizeof W);
    }
    if (sp.type == MBS_JNT_PRISMATIC || sp.type == MBS_JNT_CYLINDRICAL) {
      double slide = mbs_test_uniform(&st, -0.2, 0.2);
      for (int i = 0; i < 3; i++) p[i] += slide * W[3 * i + 2];
    }
    mbsu_mulMat3T(R2, W, Wl);
    for (int i = 0; i < 3; i++) d[i] = p[i] - x2[i];
    mbsu_mulMat3TVec(R2, d, o);
    memcpy(sp.frame2, o, sizeof o);
    memcpy(sp.frame2 + 3, Wl, sizeof Wl);
    MBS_EXPECT_OK(mbs_modelAddLoop(m, &sp));
  }
  for (int k = 0; k < nforce; k++) {
    mbsForceSpec fs;
    memset(&fs, 0, sizeof fs);
    fs.name = "spring";
    fs.body1 = (int)(mbs_test_rand(&st) * (nbody + 1)) - 1;
    fs.body2 = (int)(mbs_test_rand(&st) * nbody);
    if (fs.body2 == fs.body1) fs.body2 = (fs.body2 + 1) % nbody;
    for (int i = 0; i < 3; i++) {
      fs.point1[i] = mbs_test_uniform(&st, -0.3, 0.3);
      fs.point2[i] = mbs_test_uniform(&st, -0.3, 0.3);
    }
    fs.stiffness = mbs_test_uniform(&st, 0, 50);
    fs.rest_length = mbs_test_uniform(&st, 0, 1);
    fs.damping = mbs_test_uniform(&st, 0, 2);
    MBS_EXPECT_OK(mbs_modelAddForce(m, &fs));
  }
  MBS_EXPECT_OK(mbs_modelFinalize(m));
  MBS_EXPECT_OK(mbs_loopAssemble(m));
  MBS_EXPECT(m->loop_asm.iterations == 0 && m->loop_asm.c_pos < 1e-12 && m->loop_asm.c_rot < 1e-12,
             "random loops closed at q0 (%d iterations, %.3e, %.3e)", m->loop_asm.iterations,
             m->loop_asm.c_pos, m->loop_asm.c_rot);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&t);
  return m;
}

#endif
