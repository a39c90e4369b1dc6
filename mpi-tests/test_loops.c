/// \file test_loops.c
/// Closed loops in the serial core (docs/loops.md, issue 10):
///  1. the cut-joint closure equations of every type (mbsu_loopClosure): dc/dt by central
///     differences along a motion equals cdot and D1^T v1 + D2^T v2; d(cdot)/dt equals
///     D1^T a1 + D2^T a2 - kappa; the pair D1, D2 has zero resultant;
///  2. aba and crba (two independent applications of H^-1) give the same qdd, joint wrenches,
///     tree lambda, loop lambda and loop wrenches on the configs with loops and on random loop
///     models with every joint and cut-joint type and spring-dampers (1e-9 relative); the result
///     satisfies the acceleration closure and the equations of motion with the loop wrenches;
///  3. the rank and the redundant equations of the configs' closure equations;
///  4. assembly of a perturbed q0, refusal of a loop that cannot close, and the projection
///     (closure restored, G qd = 0, kinetic energy not raised).
/// usage: test_loops CONFIGS_DIR
#include "mbs_test.h"
#include "mbs_test_loops.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_loops.h"
#include "mbspar/mbs_trajectory.h"
#include "spatial.h"
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static double worst_fd = 0, worst_oppo = 0, worst_cmp = 0, worst_res = 0;

// ---------------------------------------------------------------- helpers

// results of one evaluation
typedef struct {
  double *qdd, *jw, *lam, *lw, *acc;
  int rank;
  double resid, scale; // scale: |qdd| of the tree without the loop forces
} mbsRes;

static void res_free(mbsRes *r) {
  free(r->qdd), free(r->jw), free(r->lam), free(r->lw), free(r->acc);
  memset(r, 0, sizeof *r);
}

static void eval(mbsModel *m, int method, mbsRes *r) {
  mbsState *s = NULL;
  mbsWork *w = NULL;
  memset(r, 0, sizeof *r);
  MBS_EXPECT_OK(mbs_stateCreate(m, &s));
  MBS_EXPECT_OK(mbs_workCreate(m, &w));
  m->opt.solver = method;
  MBS_EXPECT_OK(mbs_forward(m, s, w));
  mbs_constraintLambda(m, w);
  int nl = m->nlam + m->nlam_loop;
  r->qdd = malloc(sizeof(double) * (size_t)(m->nv + 1));
  r->jw = malloc(sizeof(double) * 6 * (size_t)m->nbody);
  r->lam = malloc(sizeof(double) * (size_t)(nl + 1));
  r->lw = malloc(sizeof(double) * 6 * (size_t)(m->nloop + 1));
  r->acc = malloc(sizeof(double) * 6 * (size_t)m->nbody);
  memcpy(r->qdd, w->qdd, sizeof(double) * (size_t)m->nv);
  memcpy(r->lam, w->lam, sizeof(double) * (size_t)nl);
  memcpy(r->acc, w->acc, sizeof(double) * 6 * (size_t)m->nbody);
  mbs_jointWrenchWorld(m, w, r->jw);
  if (m->nloop) mbs_loopWrenchWorld(m, w, r->lw);
  mbsLoopStat st;
  mbs_loopStat(w, &st);
  r->rank = st.rank;

  // equations of motion with the external wrenches: RNEA(q, qd, qdd) = applied joint forces
  double num = 0, den = 0;
  mbs_rnea(m, w, r->qdd);
  for (int d = 0; d < m->nv; d++) {
    num = fmax(num, fabs(w->qfrc_inv[d] - w->qfrc[d]));
    den = fmax(den, fabs(w->qfrc[d]));
  }
  mbs_rnea(m, w, NULL);
  for (int d = 0; d < m->nv; d++) den = fmax(den, fabs(w->qfrc_inv[d]));
  r->resid = fmax(num / (den > 1e-12 ? den : 1e-12), st.residual);
  if (m->nloop) { // |qdd0|: the last loop solve's tree solution is not kept; recompute it
    int nl0 = m->nloop;
    m->nloop = 0;
    MBS_EXPECT_OK(mbs_forward(m, s, w));
    m->nloop = nl0;
    for (int d = 0; d < m->nv; d++) r->scale += w->qdd[d] * w->qdd[d];
    r->scale = sqrt(r->scale);
  }
  r->scale = fmax(r->scale, 1e-9);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
}

static double rel(const double *a, const double *b, int n) {
  return mbs_test_relDiff(a, b, n, 1e-9);
}

// aba vs crba; returns the qdd difference, checks the rest against tol
static double compare(const char *what, mbsModel *m, double tol_qdd, double tol) {
  mbsRes a, c;
  eval(m, MBS_SOLVER_ABA, &a);
  eval(m, MBS_SOLVER_CRBA, &c);
  int nl = m->nlam + m->nlam_loop;
  // qdd relative to the accelerations the applied forces alone would give (a locked mechanism has
  // qdd = 0 up to roundoff of that size)
  double dq = mbs_test_relDiff(a.qdd, c.qdd, m->nv, a.scale), dj = rel(a.jw, c.jw, 6 * m->nbody);
  double dl = rel(a.lam, c.lam, nl), dw = m->nloop ? rel(a.lw, c.lw, 6 * m->nloop) : 0;
  MBS_EXPECT(dq <= tol_qdd, "%s: qdd aba vs crba %.3e", what, dq);
  MBS_EXPECT(dj <= tol && dl <= tol && dw <= tol,
             "%s: aba vs crba joint wrench %.3e, lambda %.3e, loop wrench %.3e", what, dj, dl, dw);
  MBS_EXPECT(a.rank == c.rank, "%s: rank aba %d crba %d", what, a.rank, c.rank);
  MBS_EXPECT(a.resid <= 1e-9 && c.resid <= 1e-9, "%s: residual aba %.3e crba %.3e", what, a.resid,
             c.resid);
  worst_cmp = fmax(worst_cmp, fmax(fmax(dq, dj), fmax(dl, dw)));
  worst_res = fmax(worst_res, fmax(a.resid, c.resid));
  printf("  %-28s qdd %.2e  wrench %.2e  lambda %.2e  loop wrench %.2e  rank %d/%d  res %.1e\n",
         what, dq, dj, dl, dw, a.rank, m->nlam_loop, fmax(a.resid, c.resid));
  res_free(&a);
  res_free(&c);
  return dq;
}

// ---------------------------------------------------------------- 1. closure equations

// the closure values of one cut joint at the current stages of w
static void closure_at(int type, const mbsWork *w, int b1, int b2, const double *F1,
                       const double *F2, double *D1, double *D2, double *c, double *cd,
                       double *ka) {
  mbsLoopSide s1 = {NULL, NULL, NULL}, s2 = {NULL, NULL, NULL};
  if (b1 >= 0) s1.R = w->xmat + 9 * b1, s1.x = w->xpos + 3 * b1, s1.v = w->cvel + 6 * b1;
  if (b2 >= 0) s2.R = w->xmat + 9 * b2, s2.x = w->xpos + 3 * b2, s2.v = w->cvel + 6 * b2;
  mbsu_loopClosure(type, F1, F2, &s1, &s2, D1, D2, c, cd, ka);
}

static void test_closure(void) {
  static const int cut[] = {MBS_JNT_FIXED,       MBS_JNT_REVOLUTE,  MBS_JNT_PRISMATIC,
                            MBS_JNT_CYLINDRICAL, MBS_JNT_UNIVERSAL, MBS_JNT_SPHERICAL};
  unsigned long long st = 12345;
  for (int trial = 0; trial < 60; trial++) {
    mbsModel *m = NULL;
    MBS_EXPECT_OK(mbs_test_randomModel(5, mbs_test_alltypes, 7, 0, 100 + trial, &m));
    if (!m) continue;
    m->gravity[0] = m->gravity[1] = m->gravity[2] = 0; // true accelerations from RNEA
    int type = cut[trial % 6], n = mbs_loopNumEq(type);
    int b1 = (int)(mbs_test_rand(&st) * 6) - 1, b2 = (int)(mbs_test_rand(&st) * 5);
    if (b2 == b1) b2 = (b2 + 1) % 5;
    double F1[12], F2[12];
    mbs_test_randomFrame(&st, F1);
    mbs_test_randomFrame(&st, F2);
    mbsState *s = NULL;
    mbsWork *w = NULL;
    MBS_EXPECT_OK(mbs_stateCreate(m, &s));
    MBS_EXPECT_OK(mbs_workCreate(m, &w));
    double *qdd = malloc(sizeof(double) * (size_t)m->nv), *q0 = malloc(sizeof(double) * m->nq);
    double *qd0 = malloc(sizeof(double) * (size_t)m->nv);
    for (int d = 0; d < m->nv; d++) qdd[d] = mbs_test_uniform(&st, -3, 3);
    memcpy(q0, s->q, sizeof(double) * (size_t)m->nq);
    memcpy(qd0, s->qd, sizeof(double) * (size_t)m->nv);
    // at the state: D, c, cdot, kappa; accelerations of qdd
    double D1[36], D2[36], c[6], cd[6], ka[6], cp[6], cm[6], cdp[6], cdm[6], t[36];
    mbs_fwdPosition(m, s, w);
    mbs_fwdVelocity(m, s, w);
    closure_at(type, w, b1, b2, F1, F2, D1, D2, c, cd, ka);
    mbs_rnea(m, w, qdd);
    // central differences along q(e) = q + e qd, qd(e) = qd + e qdd
    const double e = 1e-6;
    for (int sg = -1; sg <= 1; sg += 2) {
      mbs_integratePos(m, q0, qd0, sg * e, s->q);
      for (int d = 0; d < m->nv; d++) s->qd[d] = qd0[d] + sg * e * qdd[d];
      mbs_fwdPosition(m, s, w);
      mbs_fwdVelocity(m, s, w);
      closure_at(type, w, b1, b2, F1, F2, t, t, sg > 0 ? cp : cm, sg > 0 ? cdp : cdm, NULL);
    }
    // restore the state's stages for the velocities and accelerations of the bodies
    memcpy(s->q, q0, sizeof(double) * (size_t)m->nq);
    memcpy(s->qd, qd0, sizeof(double) * (size_t)m->nv);
    mbs_fwdPosition(m, s, w);
    mbs_fwdVelocity(m, s, w);
    mbs_rnea(m, w, qdd);
    for (int r = 0; r < n; r++) {
      double v = 0, a = 0;
      if (b1 >= 0) v += mbsu_dot6(D1 + 6 * r, w->cvel + 6 * b1);
      if (b2 >= 0) v += mbsu_dot6(D2 + 6 * r, w->cvel + 6 * b2);
      if (b1 >= 0) a += mbsu_dot6(D1 + 6 * r, w->acc + 6 * b1);
      if (b2 >= 0) a += mbsu_dot6(D2 + 6 * r, w->acc + 6 * b2);
      double fd1 = (cp[r] - cm[r]) / (2 * e), fd2 = (cdp[r] - cdm[r]) / (2 * e);
      double sc1 = 1 + fabs(cd[r]), sc2 = 1 + fabs(a - ka[r]);
      MBS_EXPECT(fabs(fd1 - cd[r]) <= 1e-6 * sc1, "%s row %s: dc/dt fd %.12g vs cdot %.12g",
                 mbs_jntName(type), mbs_loopEqName(type, r), fd1, cd[r]);
      MBS_EXPECT(fabs(v - cd[r]) <= 1e-12 * sc1, "%s row %s: D^T v %.15g vs cdot %.15g",
                 mbs_jntName(type), mbs_loopEqName(type, r), v, cd[r]);
      MBS_EXPECT(fabs(fd2 - (a - ka[r])) <= 1e-5 * sc2,
                 "%s row %s: d(cdot)/dt %.12g vs D^T a - "
                 "kappa %.12g",
                 mbs_jntName(type), mbs_loopEqName(type, r), fd2, a - ka[r]);
      worst_fd = fmax(worst_fd, fmax(fabs(fd1 - cd[r]) / sc1, fabs(fd2 - (a - ka[r])) / sc2));
      // zero resultant: both wrenches in ground coordinates about the ground origin
      double sum[6] = {0, 0, 0, 0, 0, 0};
      for (int side = 0; side < 2; side++) {
        int b = side ? b2 : b1;
        const double *Dd = (side ? D2 : D1) + 6 * r;
        double R[9], x[3] = {0, 0, 0}, f[3], n0[3], xf[3];
        if (b >= 0)
          memcpy(R, w->xmat + 9 * b, sizeof R), memcpy(x, w->xpos + 3 * b, sizeof x);
        else
          mbsu_eye3(R);
        mbsu_mulMat3Vec(R, Dd + 3, f);
        mbsu_mulMat3Vec(R, Dd, n0);
        mbsu_cross3(x, f, xf);
        for (int i = 0; i < 3; i++) sum[i] += n0[i] + xf[i], sum[3 + i] += f[i];
      }
      double mx = 0;
      for (int i = 0; i < 6; i++) mx = fmax(mx, fabs(sum[i]));
      MBS_EXPECT(mx <= 1e-12, "%s row %s: resultant of D1, D2 %.3e", mbs_jntName(type),
                 mbs_loopEqName(type, r), mx);
      worst_oppo = fmax(worst_oppo, mx);
    }
    free(qdd), free(q0), free(qd0);
    mbs_workDestroy(&w);
    mbs_stateDestroy(&s);
    mbs_modelDestroy(&m);
  }
  printf("closure equations, 60 random cut joints of every type: worst finite-difference "
         "mismatch %.2e, worst resultant %.2e\n",
         worst_fd, worst_oppo);
}

// ---------------------------------------------------------------- 2. random loop models

static void test_random(void) {
  printf("random loop models (aba vs crba):\n");
  for (int k = 0; k < 24; k++) {
    int nb = 4 + k % 9, nl = 1 + k % 4, nf = k % 3;
    mbsModel *m = mbs_test_randomLoopModel(nb, nl, nf, 1000 + k);
    if (!m) continue;
    char what[64];
    snprintf(what, sizeof what, "random %d: %d bodies %d loops", k, nb, nl);
    compare(what, m, 1e-9, 1e-9);
    mbs_modelDestroy(&m);
  }
}

// ---------------------------------------------------------------- 3. configs

static void test_configs(const char *dir) {
  static const struct {
    const char *file;
    int rank, neq, mobility;
    int zero; // zero rows known in advance (G_i = 0: no unit solve, docs/loops.md 8.1)
    // the redundant equations, comma-separated; '|' separates equally valid sets (any equation
    // with a nonzero weight in the dependency may be the one dropped: which one, symmetric
    // mechanisms leave to rounding)
    const char *redundant;
  } cfgs[] = {
      {"fourbar.cfg", 2, 5, 1, 3, "C.rx,C.ry,C.z"},
      {"slider_crank.cfg", 2, 5, 1, 3, "pin.rx,pin.ry,pin.z"},
      {"rssr.cfg", 3, 3, 2, 0, ""},
      {"sixbar.cfg", 4, 5, 1, 0, "top2.ry|top2.rx"},
      {"bricard.cfg", 4, 5, 1, 0, "J6.rx|J6.z"},
  };
  printf("configs (aba vs crba; rank and redundancy at q0):\n");
  for (size_t k = 0; k < sizeof cfgs / sizeof cfgs[0]; k++) {
    mbsModel *m = mbs_test_loadConfig(dir, cfgs[k].file, NULL, 0);
    if (!m) continue;
    const mbsLoopAssembly *as = &m->loop_asm;
    MBS_EXPECT(as->rank == cfgs[k].rank && m->nlam_loop == cfgs[k].neq &&
                   m->nv - as->rank == cfgs[k].mobility,
               "%s: rank %d of %d, mobility %d", cfgs[k].file, as->rank, m->nlam_loop,
               m->nv - as->rank);
    // the zero rows found from G alone are among the equations crba's factorization finds
    // redundant (crba forms every column of A: no equation left out)
    MBS_EXPECT(as->nskip == cfgs[k].zero, "%s: %d zero rows known in advance, expected %d",
               cfgs[k].file, as->nskip, cfgs[k].zero);
    {
      mbsState *st = NULL;
      mbsWork *wk = NULL;
      int *idx = calloc((size_t)m->nlam_loop + 1, sizeof(int)), nred = 0, solver = m->opt.solver;
      m->opt.solver = MBS_SOLVER_CRBA;
      MBS_EXPECT_OK(mbs_stateCreate(m, &st));
      MBS_EXPECT_OK(mbs_workCreate(m, &wk));
      if (st && wk && idx) {
        MBS_EXPECT_OK(mbs_forward(m, st, wk));
        nred = mbs_loopRedundant(wk, idx);
      }
      for (int i = 0; i < m->nlam_loop && as->skip; i++) {
        int red = 0;
        for (int q = 0; q < nred; q++) red |= idx[q] == i;
        MBS_EXPECT(!as->skip[i] || red,
                   "%s: equation %d skipped as a zero row, but crba finds it independent",
                   cfgs[k].file, i);
      }
      m->opt.solver = solver;
      free(idx);
      mbs_workDestroy(&wk);
      mbs_stateDestroy(&st);
    }
    char red[256] = "", lab[64];
    for (int i = 0; i < as->nredundant; i++) {
      size_t l = strlen(red);
      snprintf(red + l, sizeof red - l, "%s%s", i ? "," : "",
               mbs_loopEqLabel(m, as->redundant[i], lab, sizeof lab));
    }
    int found = 0;
    for (const char *a = cfgs[k].redundant;;) {
      const char *e = strchr(a, '|');
      size_t len = e ? (size_t)(e - a) : strlen(a);
      if (strlen(red) == len && !strncmp(red, a, len)) found = 1;
      if (!e) break;
      a = e + 1;
    }
    MBS_EXPECT(found, "%s: redundant \"%s\", expected one of \"%s\"", cfgs[k].file, red,
               cfgs[k].redundant);
    compare(cfgs[k].file, m, 1e-9, 1e-9);
    mbs_modelDestroy(&m);
  }
}

// the ladder: the loops must not spoil aba vs crba beyond what a long chain alone gives (the
// LTDL factor of a chain of N light links loses digits in qdd: measured 6e-9 at N = 100, 5e-5 at
// N = 1000, with no loop at all). Without its explicit bodies (the left chain with the rungs) the
// ladder is the right chain alone.
static void test_ladder(const char *dir) {
  const char *noloops[] = {"model.loops=()", "model.bodies=()"};
  mbsModel *m = mbs_test_loadConfig(dir, "ladder.cfg", NULL, 0),
           *t = mbs_test_loadConfig(dir, "ladder.cfg", noloops, 2);
  if (!m || !t) return;
  MBS_EXPECT(m->loop_asm.rank == 200 && m->nlam_loop == 300 && m->loop_asm.nredundant == 100,
             "ladder: rank %d of %d", m->loop_asm.rank, m->nlam_loop);
  // its 100 redundant equations are the out-of-plane ones: zero rows known in advance (aba
  // leaves out their unit sweeps, crba does not: the comparison below covers that too)
  MBS_EXPECT(m->loop_asm.nskip == 100, "ladder: %d zero rows known in advance, expected 100",
             m->loop_asm.nskip);
  double tree = compare("ladder.cfg, right chain alone", t, 1e-3, 1e-9);
  compare("ladder.cfg", m, 10 * tree + 1e-9, 10 * tree + 1e-9);
  mbs_modelDestroy(&m);
  mbs_modelDestroy(&t);
}

// ---------------------------------------------------------------- 4. assembly and projection

static void test_assembly(const char *dir) {
  // a rounded q0 far from closure is assembled; the same closure as the config's
  const char *sets[] = {"model.bodies[1].joint.q0=[-0.5]", "model.bodies[2].joint.q0=[-1.6]"};
  mbsModel *m = mbs_test_loadConfig(dir, "fourbar.cfg", sets, 2),
           *ref = mbs_test_loadConfig(dir, "fourbar.cfg", NULL, 0);
  if (m && ref) {
    MBS_EXPECT(m->loop_asm.iterations > 1 && m->loop_asm.c0_pos > 0.05 &&
                   m->loop_asm.c_pos <= m->opt.closure_tol,
               "fourbar assembly: %d iterations, %.3e -> %.3e", m->loop_asm.iterations,
               m->loop_asm.c0_pos, m->loop_asm.c_pos);
    // the nearest closed configuration in the kinetic-energy metric: every coordinate moves a
    // little, on the same branch as the config's q0
    for (int i = 0; i < 3; i++) MBS_EXPECT_NEAR(m->q0[i], ref->q0[i], 1e-2);
    printf("assembly of a far q0 (closure %.3g m): %d iterations, closure %.2e m, same branch as "
           "the config's q0 (within %.1e)\n",
           m->loop_asm.c0_pos, m->loop_asm.iterations, m->loop_asm.c_pos,
           fmax(fabs(m->q0[1] - ref->q0[1]), fabs(m->q0[2] - ref->q0[2])));
  }
  mbs_modelDestroy(&m);
  // a rocker too short to reach: the loops cannot close (input error naming the loop)
  char path[1024];
  snprintf(path, sizeof path, "%s/fourbar.cfg", dir);
  char *text = mbs_test_slurp(path);
  const char *bad[] = {"model.loops[0].frame2.origin=[5.0, 0.0, 0.0]"};
  mbsConfig *cfg = NULL;
  if (text) MBS_EXPECT_OK(mbs_configParse(text, path, bad, 1, &cfg));
  if (cfg) {
    mbsErr e = mbs_configBuildModel(cfg, &m);
    MBS_EXPECT(e == MBS_ERR_USAGE && strstr(mbs_errMsg(), "cannot be closed"),
               "unclosable loop: %s (%s)", mbs_errString(e), mbs_errMsg());
    mbs_modelDestroy(&m);
  }
  mbs_configDestroy(&cfg);
  free(text);

  // projection of a perturbed state: closure back, G qd = 0, kinetic energy not raised
  if (ref) {
    mbsState *s = NULL;
    mbsWork *w = NULL;
    MBS_EXPECT_OK(mbs_stateCreate(ref, &s));
    MBS_EXPECT_OK(mbs_workCreate(ref, &w));
    s->q[0] += 0.01, s->q[1] -= 0.02, s->q[2] += 0.015;
    s->qd[0] = 1, s->qd[1] = -2, s->qd[2] = 3;
    mbsLoopProj pj;
    MBS_EXPECT_OK(mbs_loopProject(ref, s, w, 10, &pj));
    double pos, rot, vel;
    mbs_fwdPosition(ref, s, w);
    mbs_fwdVelocity(ref, s, w);
    double ke1 = mbs_kineticEnergy(ref, w);
    mbs_loopViolation(ref, w, &pos, &rot, &vel);
    MBS_EXPECT(pj.converged && pos <= ref->opt.closure_tol && vel <= 1e-12,
               "projection: converged %d, closure %.3e, rate %.3e", pj.converged, pos, vel);
    // the same positions with the rates before the rate projection
    double qd[3];
    memcpy(qd, s->qd, sizeof qd);
    s->qd[0] = 1, s->qd[1] = -2, s->qd[2] = 3;
    mbs_fwdVelocity(ref, s, w);
    double ke0 = mbs_kineticEnergy(ref, w);
    MBS_EXPECT(ke1 <= ke0, "projection raised the kinetic energy %.9g -> %.9g", ke0, ke1);
    printf("projection: closure %.3g m -> %.2e m in %d iterations, |G qd| %.2e, kinetic energy "
           "%.6g -> %.6g J\n",
           pj.c_pos, pos, pj.iterations, vel, ke0, ke1);
    mbs_workDestroy(&w);
    mbs_stateDestroy(&s);
  }
  mbs_modelDestroy(&ref);
}

// ---------------------------------------------------------------- 5. inverse dynamics

// the slider-crank driven at the crank: the actuator's power equals dE/dt of the mechanism (E
// from the kinematics alone), the slider follows the closed form, nothing is left unbalanced
static void test_inverse(const char *dir) {
  mbsModel *m = mbs_test_loadConfig(dir, "slider_crank.cfg", NULL, 0);
  if (!m) return;
  mbsState *s = NULL;
  mbsWork *w = NULL;
  MBS_EXPECT_OK(mbs_stateCreate(m, &s));
  MBS_EXPECT_OK(mbs_workCreate(m, &w));
  int act[3] = {1, 0, 0};
  double worst = 0, worst_kin = 0, worst_res = 0;
  for (int k = 1; k < 10; k++) {
    double t = 0.1 * k, h = 1e-5, E[2] = {0, 0}, tau[3], lam[5], qdd[3], res, P = 0;
    for (int sg = -1; sg <= 1; sg++) {
      double tt = t + sg * h, qd0;
      mbsu_cycloid(0, 2 * M_PI, 1.0, tt, &s->q[0], &qd0, &qdd[0]);
      s->qd[0] = qd0, s->time = tt;
      MBS_EXPECT_OK(mbs_loopInverse(m, s, w, act, qdd, tau, lam, &res));
      mbs_fwdPosition(m, s, w);
      mbs_fwdVelocity(m, s, w);
      double e = mbs_kineticEnergy(m, w) + mbs_potentialEnergy(m, s, w);
      if (sg) E[sg > 0] = e;
      if (!sg) {
        P = tau[0] * s->qd[0];
        double r = 0.1, l = 0.3, x = r * cos(s->q[0]) + sqrt(l * l - pow(r * sin(s->q[0]), 2));
        worst_kin = fmax(worst_kin, fabs(s->q[2] - x));
        worst_res = fmax(worst_res, res);
        MBS_EXPECT(tau[1] == 0 && tau[2] == 0, "passive dofs got forces");
      }
    }
    double dE = (E[1] - E[0]) / (2 * h);
    worst = fmax(worst, fabs(dE - P) / (1 + fabs(P)));
  }
  MBS_EXPECT(worst <= 1e-6 && worst_kin <= 1e-9 && worst_res <= 1e-9,
             "inverse: power %.3e, kinematics %.3e, residual %.3e", worst, worst_kin, worst_res);
  printf("inverse (slider-crank, crank driven): actuator power vs dE/dt %.2e, slider closed form "
         "%.2e, unbalanced %.2e\n",
         worst, worst_kin, worst_res);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&m);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "configs";
  test_closure();
  test_configs(dir);
  test_ladder(dir);
  test_random();
  test_assembly(dir);
  test_inverse(dir);
  printf("worst aba vs crba %.2e (ladder qdd: bounded by the chains alone), worst residual %.2e\n",
         worst_cmp, worst_res);
  if (mbs_test_fail) printf("%d FAILURE(S)\n", mbs_test_fail);
  return mbs_test_fail ? 1 : 0;
}
