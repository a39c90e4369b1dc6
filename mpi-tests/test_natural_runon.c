/// \file test_natural_runon.c
/// A natural run (docs/natural.md 7, 12) in O(n) against the dense reference of the same run:
/// the evaluations by the block elimination of section 5 (tree joints body by body, cut joints
/// in the range space) and the projection by the same elimination with the identity in place of
/// the mass matrices must give the dense system's (p, ṗ) to rounding. On the loop configs
/// (four-bar, slider-crank, RSSR, six-bar and Bricard with dependent closure rows, the hexapod with
/// spring-dampers) and a tree of every joint type:
/// 25 RK4 steps with the projection after each, then 0.02 s of Dormand–Prince 5(4) with its
/// projection tolerance; and the projection alone from a state moved off the constraints.
/// usage: test_natural_runon CONFIGS_DIR
#include "mbs_test.h"
#include "mbs_test_loops.h"
#include "mbspar/mbs_natural.h"

// max |a − b| over the state, relative to max |a| (at least 1)
static double diff(const mbsNaturalSim *a, const mbsNaturalSim *b, int np) {
  const double *pda, *pdb, *pa = mbs_naturalSimState(a, &pda), *pb = mbs_naturalSimState(b, &pdb);
  double d = 0, sc = 1;
  for (int j = 0; j < np; j++) {
    d = fmax(d, fmax(fabs(pa[j] - pb[j]), fabs(pda[j] - pdb[j])));
    sc = fmax(sc, fmax(fabs(pa[j]), fabs(pda[j])));
  }
  return d / sc;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_natural_runon CONFIGS_DIR\n");
    return 2;
  }
  (void)mbs_test_randomLoopModel; // (mbs_test_loops.h: its config loader is used)
  static const struct {
    const char *file, *set;
  } cfgs[] = {{"fourbar.cfg", NULL},
              {"slider_crank.cfg", NULL},
              {"rssr.cfg", NULL},
              {"sixbar.cfg", NULL},
              {"bricard.cfg", NULL},
              {"hexapod.cfg", NULL},
              {"tree.cfg", "model.tree.depth=3"}};
  double worst_rk = 0, worst_dp = 0, worst_proj = 0, worst_viol = 0;
  for (int k = 0; k < (int)(sizeof cfgs / sizeof cfgs[0]); k++) {
    const char *sets[1] = {cfgs[k].set};
    mbsModel *m = mbs_test_loadConfig(argv[1], cfgs[k].file, sets, cfgs[k].set ? 1 : 0);
    if (!m) continue;
    mbsState *s = NULL;
    mbsWork *w = NULL;
    mbsNaturalSim *on = NULL, *de = NULL;
    MBS_EXPECT_OK(mbs_stateCreate(m, &s));
    MBS_EXPECT_OK(mbs_workCreate(m, &w));
    if (s && w) {
      MBS_EXPECT_OK(mbs_naturalSimCreateOpt(m, s, w, 0, &on));
      MBS_EXPECT_OK(mbs_naturalSimCreateOpt(m, s, w, 1, &de));
    }
    if (on && de) {
      int np = 12 * m->nbody;
      double rk = 0, dp = 0, pr = 0, viol = 0, h = 1e-3;
      for (int i = 0; i < 25; i++) { // RK4 with the projection after every step
        MBS_EXPECT_OK(mbs_naturalSimStep(on, h));
        MBS_EXPECT_OK(mbs_naturalSimStep(de, h));
        mbs_naturalSimProject(on, 1e-13, 8);
        mbs_naturalSimProject(de, 1e-13, 8);
        rk = fmax(rk, diff(on, de, np));
        viol = fmax(viol, mbs_naturalSimViolation(on));
      }
      MBS_EXPECT_OK(mbs_naturalSimAdvance(on, 0.02, 1e-9, 1e-10));
      MBS_EXPECT_OK(mbs_naturalSimAdvance(de, 0.02, 1e-9, 1e-10));
      dp = diff(on, de, np);
      mbsNaturalSimStats so, sd;
      mbs_naturalSimGetStats(on, &so), mbs_naturalSimGetStats(de, &sd);
      MBS_EXPECT(so.steps == sd.steps && so.evals == sd.evals && so.projections == sd.projections,
                 "%s: O(n) %ld steps %ld evaluations %ld projections, dense %ld %ld %ld",
                 cfgs[k].file, so.steps, so.evals, so.projections, sd.steps, sd.evals,
                 sd.projections);
      // the projection alone: q, q̇ moved by up to 1e-6 (closures and joint velocities violated)
      unsigned long long st = 4242 + (unsigned long long)k;
      for (int i = 0; i < m->nq; i++) s->q[i] += mbs_test_uniform(&st, -1e-6, 1e-6);
      for (int i = 0; i < m->nv; i++) s->qd[i] += mbs_test_uniform(&st, -1e-6, 1e-6);
      mbs_naturalSimSetJoint(on, s->q, s->qd), mbs_naturalSimSetJoint(de, s->q, s->qd);
      double v0 = mbs_naturalSimViolation(on);
      mbs_naturalSimProject(on, 1e-13, 8);
      mbs_naturalSimProject(de, 1e-13, 8);
      pr = diff(on, de, np);
      double v1 = mbs_naturalSimViolation(on);
      printf("%-16s %3d bodies: O(n) vs dense, rk4 25 steps %.2e, dp5 0.02 s %.2e (%ld steps, "
             "%ld projections); projection from %.1e: %.2e apart, to %.1e; violation in the "
             "rk4 steps %.1e\n",
             cfgs[k].file, m->nbody, rk, dp, so.steps, so.projections, v0, pr, v1, viol);
      MBS_EXPECT(rk <= 1e-10 && dp <= 1e-10 && pr <= 1e-10,
                 "%s: O(n) run differs from the dense one: rk4 %.3e, dp5 %.3e, projection %.3e",
                 cfgs[k].file, rk, dp, pr);
      MBS_EXPECT(viol <= 1e-12 && v1 <= 1e-12 && (!m->nloop || v0 > 1e-8),
                 "%s: violation %.3e in the steps, %.3e -> %.3e projected", cfgs[k].file, viol, v0,
                 v1);
      worst_rk = fmax(worst_rk, rk), worst_dp = fmax(worst_dp, dp);
      worst_proj = fmax(worst_proj, pr), worst_viol = fmax(worst_viol, fmax(viol, v1));
    }
    mbs_naturalSimDestroy(&on);
    mbs_naturalSimDestroy(&de);
    mbs_workDestroy(&w);
    mbs_stateDestroy(&s);
    mbs_modelDestroy(&m);
  }
  printf("worst: rk4 %.2e, dp5 %.2e, projection %.2e apart (relative); violation %.2e\n", worst_rk,
         worst_dp, worst_proj, worst_viol);
  return mbs_test_finish("test_natural_runon");
}
