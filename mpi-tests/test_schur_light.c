/// \file test_schur_light.c
/// Issue 30 (item 3, "light bodies"): schur at several ranks against the serial ABA oracle on
/// models whose heavy links (1 kg) each carry a light body (1e-8 kg, 1e-16 kg m^2, or 1e-6 kg,
/// 1e-12 kg m^2) on a fixed joint, the next link hanging from the light body. On the chain the
/// weights alone would put rank cuts at the fixed joint above a light body (the light body would
/// then be the root of a rank: fixed by the partition rule MBS_PARTITION_FIXED_SKIP); on the tree
/// (two links below every light body) the ranks' and threads' components have several lower ports
/// and run as trees of paths in inertia form with spikes (docs/formulation.md 4.9; in compliance
/// form a light body's compliance, ~1e12..1e16, was cancelled when it was absorbed through its
/// fixed joint: errors up to 6e-2). Asserts q̈ and lambda to 1e-12 relative (normwise; measured
/// <= 2e-15). Full (replicated) models, the cut-joint system merged by the scan (chain) and the
/// component-tree passes (tree). A few seconds at 4 ranks. Argument: "chain" (default) or "tree".
/// "moving": every third link's light body on a revolute joint (the others 0.5 kg), chains and
/// depth-first trees over a range of sizes so that the weights alone put boundaries next to light
/// bodies (before the light-joint rule of mbs_partitionRunsLight: q̈ off by up to 1.0 at 2 and
/// 4 ranks and 3 threads); asserts 1e-10 (measured <= 2.3e-11, mostly ~1e-15). "moving_all":
/// every link's light body on a revolute joint (no boundary avoids them): asserts 1e-10; passes
/// on threads of one rank (mbs_schurRankCreate joins the segments across such boundaries: CTest
/// .threads4.np1) and at 2, 3 and 4 ranks of one thread (the light leaves at the rank cuts taken
/// exactly by the passes, parallel/schur_par_light.c; .threads1.np2, .np3, .np4; before: 0.54
/// at 2, 1.19 at 3 ranks; at 4 ranks two chains missed by up to 1.2e-9 in their childless last
/// light body, ABA's error as much as schur's: the rounded zero v_o x (m v_o) of its velocity
/// product, dropped since for bodies of small radius of gyration, mbs_bodyBias;
/// docs/formulation.md 4.9). LIGHT_ONLY=chain10 runs one model, LIGHT_MERGE=pass|tree sets
/// MBSPAR_SCHUR_MERGE.
/// "mixed": the middle half of the links light (rank cuts at light leaves, thread cuts in the
/// heavy ends), chains and trees of 24-36 links. "light_root": a rank forced to start at a light
/// body (fans, no place avoids it): asserts 1e-12 (the light roots' change of variables,
/// src/schur/schur_lightroot.c; before it 1e-7, measured up to 1.5e-8). "light_root_exact": the
/// same with the test switch MBSPAR_TEST_LIGHT_ROOTS=1 on fans and all-light chains, at ranks
/// and thread segments (1e-12; LIGHT_ROOT_LOOSE=1: 1e-7 at thread segments, the gap printed).
/// LIGHT_ROOT_CHILD=general / prismatic: the fans' heavy links on a revolute joint about [0, 0.6,
/// 0.8] / a prismatic joint. LIGHT_LOCAL=1: every model also as the distributed-memory (local)
/// build of each rank, against ABA and against the full model's schur (1e-12; measured bitwise
/// equal). LIGHT_JOINT=general / prismatic: the light bodies on a revolute joint about a
/// non-coordinate axis / a prismatic joint (the generic ABA record). "layout": the light-cut check
/// that keeps solver.method = auto off schur on the "moving_all" rank layouts and on on the
/// "moving" ones, and the thread segmentation's joins (no engine; one rank). LIGHT_DEBUG=1 prints
/// the dofs that differ.
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include "mbspar/mbs_engine.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_schur.h"
#include "mbs_test.h"

static mbspComm *comm;

// the light bodies' moving joint: LIGHT_JOINT=general (a revolute about a non-coordinate axis:
// the generic ABA record, not the axis-specialised kernels), prismatic, else revolute about x
static const char *light_joint(void) {
  const char *j = getenv("LIGHT_JOINT");
  if (j && strcmp(j, "general") == 0)
    return "revolute\"; axis = [0.6, 0.8, 0.0]; q0 = [0.1]; qd0 = [0.2]";
  if (j && strcmp(j, "prismatic") == 0)
    return "prismatic\"; axis = [0.0, 0.6, 0.8]; q0 = [0.01]; qd0 = [0.2]";
  return "revolute\"; axis = [1.0, 0.0, 0.0]; q0 = [0.1]; qd0 = [0.2]";
}

// n links; link k hangs from light body s_{k-1} (chain) or s_{(k-1)/2} (tree)
static char *light_model(int n, int tree, int moving, double lm, double li) {
  size_t cap = 1024 + 700 * (size_t)n, at = 0;
  char *t = malloc(cap);
  // moving = 2: the tree's links in depth-first order (as the URDF reader orders a robot): the
  // binary heap's nodes in preorder, pos[h] the place of heap node h
  int ord[64], pos[64], st[64], ns = 0, no = 0;
  if (!t || n > 64) {
    free(t);
    return NULL;
  }
  for (st[ns++] = 0; ns > 0;) {
    int h = st[--ns];
    pos[h] = no, ord[no++] = h;
    if (2 * h + 2 < n) st[ns++] = 2 * h + 2;
    if (2 * h + 1 < n) st[ns++] = 2 * h + 1;
  }
  at += (size_t)snprintf(t + at, cap - at, "model = { gravity = [0.0, 0.0, -9.81]; bodies = (");
  for (int k = 0; k < n; k++) {
    char par[32];
    // moving = 2: every third s light, the others 0.5 kg; moving = 3: the links of the middle
    // half light (a rank cut there has no clean place), the others 0.5 kg (thread cuts do)
    int light = moving == 3 ? 4 * k >= n && 4 * k < 3 * n : moving != 2 || k % 3 == 1;
    if (k == 0)
      snprintf(par, sizeof par, "ground");
    else
      snprintf(par, sizeof par, "s%d",
               !tree         ? k - 1
               : moving == 2 ? pos[(ord[k] - 1) / 2]
                             : (k - 1) / 2);
    at += (size_t)snprintf(
        t + at, cap - at,
        "%s{ name = \"l%d\"; parent = \"%s\"; joint = { type = \"revolute\"; axis = [0.0, 1.0, "
        "0.0]; origin = [0.0, 0.0, -0.2]; q0 = [%.17g]; qd0 = [%.17g]; }; mass = 1.0; com = "
        "[0.0, 0.0, -0.25]; inertia = [0.02, 0.02, 0.001, 0.0, 0.0, 0.0]; },"
        "{ name = \"s%d\"; parent = \"l%d\"; joint = { type = \"%s; origin = [0.01, 0.0, "
        "-0.3]; }; mass = %.17g; com = [0.0, 0.0, 0.0]; inertia = [%.17g, %.17g, %.17g, 0.0, "
        "0.0, 0.0]; }",
        k ? "," : "", k, par, 0.1 * (k % 5), 0.05 * k, k, k, moving ? light_joint() : "fixed\"",
        light ? lm : 0.5, light ? li : 0.01, light ? li : 0.01, light ? li : 0.01);
  }
  snprintf(t + at, cap - at, "); };");
  return t;
}

// LIGHT_LOCAL=1 (the "_local" tests): the same model as a distributed-memory (local) build, each
// rank holding its bodies, their remote parents and children (the CLI's default at 2+ ranks);
// against ABA (tol) and against the full model's schur (1e-12)
static int local_too;

static void check_local(const mbsConfig *c, const mbsModel *m, const mbsWork *wo,
                        const double *qdd_full, const double *lam_full, const char *name,
                        double tol) {
  mbsModel *ml = NULL;
  mbsState *s = NULL;
  mbspEngine *e = NULL;
  MBS_EXPECT_OK(mbs_configBuildLocal(c, mbsp_size(comm), mbsp_rank(comm), &ml));
  mbsErr err = ml ? MBS_OK : MBS_ERR_INTERNAL;
  if (!err) {
    ml->opt.solver = MBS_SOLVER_SCHUR;
    ml->opt.warm_start = MBS_WARM_NONE;
    MBS_EXPECT(ml->local || mbsp_size(comm) == 1, "%s: the build is not local", name);
    err = mbs_stateCreate(ml, &s);
  }
  if (!err) err = mbsp_engineCreate(comm, ml, MBSP_HALO_P2P, &e);
  MBS_EXPECT_OK(err);
  if (!err) {
    double *qdd = calloc((size_t)m->nv + 1, sizeof(double));
    double *lam = calloc((size_t)m->nlam + 1, sizeof(double));
    MBS_EXPECT_OK(mbsp_engineForward(e, s));
    MBS_EXPECT_OK(mbsp_engineGatherSome(e, qdd, lam, NULL, 3));
    if (mbsp_rank(comm) == 0) {
      double dq = mbs_test_relDiff(qdd, wo->qdd, m->nv, 1e-300);
      double dl = mbs_test_relDiff(lam, wo->lam, m->nlam, 1e-300);
      double fq = mbs_test_relDiff(qdd, qdd_full, m->nv, 1e-300);
      double fl = mbs_test_relDiff(lam, lam_full, m->nlam, 1e-300);
      printf("  %s distributed-memory model, np=%d: qdd %.3e, lambda %.3e to ABA; %.3e, %.3e to "
             "the full model's schur\n",
             name, mbsp_size(comm), dq, dl, fq, fl);
      MBS_EXPECT(dq <= tol && dl <= tol && fq <= 1e-12 && fl <= 1e-12,
                 "%s np=%d local model: qdd %.3e, lambda %.3e to ABA, %.3e, %.3e to full", name,
                 mbsp_size(comm), dq, dl, fq, fl);
    }
    free(qdd), free(lam);
  }
  mbsp_engineDestroy(&e);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&ml);
}

// "light_root": a heavy hub h whose n children s_k are light (1e-8 kg, 1e-16 kg m^2, revolute
// about x), each carrying a heavy link l_k (revolute about y), depth-first: h s0 l0 s1 l1 ... Every
// place in the fan is crossed by a light root (h to the s_k after it), so a rank boundary there
// starts a rank at a light body or below one whose light siblings follow
// the heavy links' joint (LIGHT_ROOT_CHILD=general: revolute about [0, 0.6, 0.8], the generic
// ABA record; prismatic: along [0, 0.6, 0.8]; else revolute about y), and their q0/qd0 scale
static const char *fan_child_joint(void) {
  const char *j = getenv("LIGHT_ROOT_CHILD");
  if (j && strcmp(j, "general") == 0) return "revolute\"; axis = [0.0, 0.6, 0.8]";
  if (j && strcmp(j, "prismatic") == 0) return "prismatic\"; axis = [0.0, 0.6, 0.8]";
  return "revolute\"; axis = [0.0, 1.0, 0.0]";
}
static double fan_child_scale(void) {
  const char *j = getenv("LIGHT_ROOT_CHILD");
  return j && strcmp(j, "prismatic") == 0 ? 0.1 : 1.0;
}

static char *fan_model(int n) {
  size_t cap = 1024 + 900 * (size_t)n, at = 0;
  char *t = malloc(cap);
  if (!t) return NULL;
  at += (size_t)snprintf(
      t + at, cap - at,
      "model = { gravity = [0.0, 0.0, -9.81]; bodies = ({ name = \"h\"; parent = \"ground\"; "
      "joint = { type = \"revolute\"; axis = [0.0, 1.0, 0.0]; origin = [0.0, 0.0, -0.2]; q0 = "
      "[0.3]; qd0 = [0.1]; }; mass = 1.0; com = [0.0, 0.0, -0.1]; inertia = [0.02, 0.02, 0.001, "
      "0.0, 0.0, 0.0]; }");
  for (int k = 0; k < n; k++)
    at += (size_t)snprintf(
        t + at, cap - at,
        ",{ name = \"s%d\"; parent = \"h\"; joint = { type = \"revolute\"; axis = [1.0, 0.0, "
        "0.0]; origin = [%.17g, %.17g, -0.3]; q0 = [0.1]; qd0 = [0.2]; }; mass = 1e-8; com = "
        "[0.0, 0.0, 0.0]; inertia = [1e-16, 1e-16, 1e-16, 0.0, 0.0, 0.0]; },"
        "{ name = \"l%d\"; parent = \"s%d\"; joint = { type = \"%s; origin = [0.0, 0.0, -0.2]; "
        "q0 = [%.17g]; qd0 = [%.17g]; }; mass = 1.0; com = [0.0, 0.0, -0.25]; inertia = [0.02, "
        "0.02, 0.001, 0.0, 0.0, 0.0]; }",
        k, 0.02 * (k % 7) - 0.06, 0.015 * (k % 5) - 0.03, k, k, fan_child_joint(),
        0.1 * (k % 5) * fan_child_scale(), 0.05 * k * fan_child_scale());
  snprintf(t + at, cap - at, "); };");
  return t;
}

// "light_root_exact": on (root_tol > 0; root_strict: 1e-12 for thread segments too), the worst
// differences and the number of models whose layout starts a rank or a thread segment at a
// light body (of them above 1e-12)
static double root_tol, root_worst_q, root_worst_l;
static int root_strict, root_models, root_count;

// the first body of segments 1..n-1 of [st[0], st[n]) whose parent lies in an earlier segment of
// the same range and is MBS_PARTITION_LIGHT times heavier (a light root), or -1
static int light_root_at(const mbsModel *m, const int *st, int n) {
  for (int k = 1; k < n; k++)
    for (int b = st[k]; b < st[k + 1]; b++) {
      int p = m->body_parent[b];
      if (p >= st[0] && p < st[k] && m->body_mass[b] < m->body_mass[p] &&
          mbs_partitionIsLight(m->body_mass[p], mbs_jntIsFixed(m->body_jnttype[p]), m->body_mass[b],
                               mbs_jntIsFixed(m->body_jnttype[b])))
        return b;
    }
  return -1;
}

static void check(int n, int tree, int moving, double lm, double li, const char *merge) {
  // the bound for moving light bodies; a rank starting at a light body ("light_root",
  // tree = 2) is exact since the light roots' change of variables (docs/formulation.md 4.9)
  const double tol = root_tol > 0 ? root_tol : tree == 2 ? 1e-12 : moving ? 1e-10 : 1e-12;
  const char *only = getenv("LIGHT_ONLY"); // "chain10", "tree12": that model alone
  char name[32];
  snprintf(name, sizeof name, "%s%d", tree == 2 ? "fan" : tree ? "tree" : "chain", n);
  if (only && strcmp(only, name) != 0) return;
  char *text = tree == 2 ? fan_model(n) : light_model(n, tree, moving, lm, li);
  MBS_EXPECT(text, "out of memory");
  if (!text) return;
  mbsConfig *c = NULL;
  mbsModel *m = NULL;
  MBS_EXPECT_OK(mbs_configParse(text, "light.cfg", NULL, 0, &c));
  free(text);
  if (!c) return;
  MBS_EXPECT_OK(mbs_configBuildModel(c, &m));
  if (!m) {
    mbs_configDestroy(&c);
    return;
  }
  mbsState *s;
  mbsWork *wo;
  MBS_EXPECT_OK(mbs_test_abaOracle(m, &s, &wo));
  if (!merge) merge = getenv("LIGHT_MERGE"); // pass / tree: the other merges on the same models
  if (merge) setenv("MBSPAR_SCHUR_MERGE", merge, 1);
  m->opt.solver = MBS_SOLVER_SCHUR;
  m->opt.warm_start = MBS_WARM_NONE;
  mbspEngine *e;
  mbsErr err = mbsp_engineCreate(comm, m, MBSP_HALO_P2P, &e);
  MBS_EXPECT_OK(err);
  if (!err) {
    double *qdd = calloc((size_t)m->nv + 1, sizeof(double));
    double *lam = calloc((size_t)m->nlam + 1, sizeof(double));
    double *jf = calloc(6 * (size_t)m->nbody, sizeof(double));
    MBS_EXPECT_OK(mbsp_engineForward(e, s));
    MBS_EXPECT_OK(mbsp_engineGather(e, qdd, lam, jf));
    if (mbsp_rank(comm) == 0) {
      int st[9] = {0}, root = -1, troot = -1;
      if (mbsp_size(comm) <= 8 && !mbs_partitionModel(m, mbsp_size(comm), st)) {
        st[mbsp_size(comm)] = m->nbody;
        root = light_root_at(m, st, mbsp_size(comm));
        for (int r = 0; r < mbsp_size(comm); r++) {
          const char *nt = getenv("OMP_NUM_THREADS");
          mbsSchurRank *rk = NULL; // the rank's thread segments, as the engine makes them
          if (nt && atoi(nt) > 1 && !mbs_schurRankCreate(m, st[r], st[r + 1], atoi(nt), &rk)) {
            int sst[MBS_SCHUR_MAXSEG + 1];
            for (int t = 0; t < rk->nseg; t++) sst[t] = rk->seg[t]->s0;
            sst[rk->nseg] = st[r + 1];
            int tr = light_root_at(m, sst, rk->nseg);
            if (troot < 0) troot = tr;
            printf("  rank %d starts at %s, %d thread segments%s%s\n", r, m->body_name[st[r]],
                   rk->nseg, tr >= 0 ? ", one starting at the light body " : "",
                   tr >= 0 ? m->body_name[tr] : "");
          } else if (r)
            printf("  rank %d starts at %s\n", r, m->body_name[st[r]]);
          mbs_schurRankDestroy(&rk);
        }
      }
      double dq = mbs_test_relDiff(qdd, wo->qdd, m->nv, 1e-300);
      double dl = mbs_test_relDiff(lam, wo->lam, m->nlam, 1e-300);
      if (getenv("LIGHT_DEBUG"))
        for (int d = 0; d < m->nv; d++)
          if (fabs(qdd[d] - wo->qdd[d]) > 1e-12 * fabs(wo->qdd[d]) + 1e-14)
            printf("  dof %d: %.17g vs aba %.17g\n", d, qdd[d], wo->qdd[d]);
      printf("%s: %d links, light bodies %.0e kg %.0e kg m^2 on %s joints, np=%d, %s merge: "
             "qdd %.3e, lambda %.3e\n",
             name, n, lm, li, moving ? "revolute" : "fixed", mbsp_size(comm),
             merge ? merge : "default", dq, dl);
      // light_root_exact: a thread segment starting at a light body (only with the test
      // switch: the segmentation joins such segments) with LIGHT_ROOT_LOOSE=1 the old bound (not
      // covered: such a segment with a lower port to another rank, ranks x threads on chains)
      const double etol = root_tol > 0 && troot >= 0 && !root_strict ? 1e-7 : tol;
      MBS_EXPECT(dq <= etol && dl <= etol, "%s np=%d: qdd %.3e, lambda %.3e to ABA", name,
                 mbsp_size(comm), dq, dl);
      if (root < 0) root = troot;
      if (root_tol > 0 && root >= 0) {
        root_models++;
        root_worst_q = fmax(root_worst_q, dq), root_worst_l = fmax(root_worst_l, dl);
        if (dq > 1e-12 || dl > 1e-12) root_count++;
        printf("  a segment starts at the light body %s\n", m->body_name[root]);
      }
    }
    if (local_too) check_local(c, m, wo, qdd, lam, name, tol);
    free(qdd), free(lam), free(jf);
    mbsp_engineDestroy(&e);
  }
  mbs_configDestroy(&c);
  unsetenv("MBSPAR_SCHUR_MERGE");
  mbs_workDestroy(&wo);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&m);
}

// "layout": what solver.method = auto checks before it picks schur (parallel/solver_auto.c):
// on every "moving_all" model some rank boundary (2..4 ranks) cuts a light joint
// (mbs_partitionLightCut: no clean place, auto picks aba); on every "moving" model none does
// (the partition found one). Thread boundaries (2..4 segments of one rank) never cut one: on
// "moving_all" mbs_schurRankCreate joins segments (fewer than asked), on "moving" it keeps all
static void layout(int n, int tree, int moving) {
  char *text = light_model(n, tree, moving, 1e-8, 1e-16);
  mbsConfig *c = NULL;
  mbsModel *m = NULL;
  MBS_EXPECT(text, "out of memory");
  if (text) MBS_EXPECT_OK(mbs_configParse(text, "light.cfg", NULL, 0, &c));
  free(text);
  if (c) MBS_EXPECT_OK(mbs_configBuildModel(c, &m));
  mbs_configDestroy(&c);
  if (!m) return;
  for (int P = 2; P <= 4; P++) {
    int st[5], sst[5], p, cr = -1, ct = -1, ns = 0;
    mbsSchurRank *rk = NULL;
    MBS_EXPECT_OK(mbs_partitionModel(m, P, st));
    cr = mbs_partitionLightCut(m, st, P, &p);
    // every one of those cuts is a light leaf of its rank, made exact by the change of variables
    // (full and local models, any number of threads per rank): the warning and auto's rule skip
    // them
    MBS_EXPECT(mbs_schurLightCut(m, st, P, 1, &p) < 0 && mbs_schurLightCut(m, st, P, 0, &p) == cr,
               "%s of %d links: %d ranks: a light cut the light leaves do not cover",
               tree ? "tree" : "chain", n, P);
    MBS_EXPECT_OK(mbs_schurRankCreate(m, 0, m->nbody, P, &rk));
    if (rk) {
      ns = rk->nseg;
      for (int t = 0; t < ns; t++) sst[t] = rk->seg[t]->s0;
      sst[ns] = m->nbody;
      ct = mbs_partitionLightCut(m, sst, ns, &p);
    }
    mbs_schurRankDestroy(&rk);
    MBS_EXPECT((cr >= 0) == (moving == 1) && ct < 0 && ns >= 1 && (ns < P) == (moving == 1),
               "%s of %d links, %s: %d ranks: light cut at %d, %d threads: %d segments, light "
               "cut at %d",
               tree ? "tree" : "chain", n, moving == 1 ? "all light" : "every third", P, cr, P, ns,
               ct);
  }
  mbs_modelDestroy(&m);
}

// "layout" on the fans of "light_root": a rank boundary there starts a rank at a light body (no
// place avoids it), a cut the light leaves do not cover (auto's rule keeps it) but the light
// roots do (the warning skips it where every rank takes its light roots); and no light body is
// isolated (its parent on an earlier rank, a child on a later one)
static void layout_fan(int n) {
  char *text = fan_model(n);
  mbsConfig *c = NULL;
  mbsModel *m = NULL;
  MBS_EXPECT(text, "out of memory");
  if (text) MBS_EXPECT_OK(mbs_configParse(text, "fan.cfg", NULL, 0, &c));
  free(text);
  if (c) MBS_EXPECT_OK(mbs_configBuildModel(c, &m));
  mbs_configDestroy(&c);
  if (!m) return;
  for (int P = 2; P <= 4; P++) {
    int st[5], p, iso = -1, rk[64];
    MBS_EXPECT_OK(mbs_partitionModel(m, P, st));
    for (int r = 0, b = 0; b < m->nbody && b < 64; b++) {
      while (b >= st[r + 1]) r++;
      rk[b] = r;
    }
    for (int b = 1; b < m->nbody && b < 64; b++) { // s_k: odd; its child l_k next
      int pa = m->body_parent[b];
      if (b % 2 && b + 1 < m->nbody && pa >= 0 && rk[pa] < rk[b] && rk[b + 1] > rk[b]) iso = b;
    }
    int cut = mbs_schurLightCut(m, st, P, 1, &p), cut2 = mbs_schurLightCut(m, st, P, 2, &p);
    // light roots remain for the light leaves' rule (1); none once the light roots are taken (2)
    MBS_EXPECT(iso < 0 && (cut >= 0) == (n >= 10 || P > 2) && cut2 < 0,
               "fan of %d links, %d ranks: isolated light body %d, uncovered light cut at %d, "
               "with the light roots at %d",
               n, P, iso, cut, cut2);
  }
  mbs_modelDestroy(&m);
}

int main(int argc, char **argv) {
  if (mbsp_init(&argc, &argv, &comm)) {
    fprintf(stderr, "MPI init failed: %s\n", mbs_errMsg());
    return 1;
  }
  const char *which = argc > 1 ? argv[1] : "chain";
  local_too = getenv("LIGHT_LOCAL") && strcmp(getenv("LIGHT_LOCAL"), "1") == 0;
  if (strcmp(which, "chain") == 0) {
    // chains of 9 and 10 links: the weights alone cut at the fixed joint above s4 (2 ranks) or
    // s2 and s7 (4 ranks), and the 3 thread segments of one rank there too; the partition moves
    // such boundaries one body down (MBS_PARTITION_FIXED_SKIP)
    check(9, 0, 0, 1e-8, 1e-16, NULL);
    check(10, 0, 0, 1e-8, 1e-16, NULL);
    check(9, 0, 0, 1e-8, 1e-16, "tree");
  } else if (strcmp(which, "moving") == 0) {
    for (int n = 6; n <= 12; n++) check(n, 0, 2, 1e-8, 1e-16, NULL);
    for (int n = 9; n <= 20; n++) check(n, 1, 2, 1e-8, 1e-16, NULL);
  } else if (strcmp(which, "moving_all") == 0) {
    for (int n = 5; n <= 10; n++) check(n, 0, 1, 1e-8, 1e-16, NULL);
    for (int n = 9; n <= 20; n++) check(n, 1, 1, 1e-8, 1e-16, NULL);
  } else if (strcmp(which, "mixed") == 0) {
    // light in the middle only: the rank cuts at light leaves, the thread cuts in the heavy parts
    for (int n = 24; n <= 36; n += 6) check(n, 0, 3, 1e-8, 1e-16, NULL);
    for (int n = 24; n <= 36; n += 6) check(n, 1, 3, 1e-8, 1e-16, NULL);
  } else if (strcmp(which, "light_root") == 0) {
    for (int n = 6; n <= 14; n += 2) check(n, 2, 1, 1e-8, 1e-16, NULL);
  } else if (strcmp(which, "light_root_exact") == 0) {
    // the fans, and (with the test switch MBSPAR_TEST_LIGHT_ROOTS=1, set here on every rank: the
    // partition and the thread segmentation then avoid light leaves only) the all-light chains
    // and the fans at threads, so that ranks and thread segments start at light bodies. Against
    // ABA (exact there): 1e-12 (exact since the light roots' change of variables at rank cuts and
    // in the thread join, docs/formulation.md 4.9; before: up to 3.4e-8), the gap printed.
    // LIGHT_ROOT_LOOSE=1: 1e-7 where a thread segment starts at a light body (ranks x threads on
    // the chains: such a segment with a lower port to another rank, not covered)
    const char *loose = getenv("LIGHT_ROOT_LOOSE");
    root_strict = !(loose && strcmp(loose, "1") == 0);
    root_tol = 1e-12;
    setenv("MBSPAR_TEST_LIGHT_ROOTS", "1", 1);
    for (int n = 6; n <= 14; n += 2) check(n, 2, 1, 1e-8, 1e-16, NULL);
    for (int n = 5; n <= 10; n++) check(n, 0, 1, 1e-8, 1e-16, NULL);
    unsetenv("MBSPAR_TEST_LIGHT_ROOTS");
    if (mbsp_rank(comm) == 0) {
      printf("light_root_exact np=%d: %d models with a light root, %d of them above 1e-12 (the "
             "target); worst qdd %.3e, lambda %.3e\n",
             mbsp_size(comm), root_models, root_count, root_worst_q, root_worst_l);
      MBS_EXPECT(root_models > 0, "no layout started a segment at a light body");
    }
  } else if (strcmp(which, "layout") == 0) {
    for (int mv = 1; mv <= 2; mv++) {
      for (int n = 6; n <= 10; n++) layout(n, 0, mv);
      for (int n = 9; n <= 20; n++) layout(n, 1, mv);
    }
    for (int n = 6; n <= 14; n += 2) layout_fan(n);
  } else if (strcmp(which, "tree") == 0) {
    // trees: every light body carries two links (trees of paths, docs/formulation.md 4.9)
    check(12, 1, 0, 1e-6, 1e-12, NULL);
    check(12, 1, 0, 1e-8, 1e-16, NULL);
    check(20, 1, 0, 1e-6, 1e-12, NULL);
  }
  long fails = mbs_test_fail;
  mbsp_allreduceSumLong(comm, &fails, 1);
  if (mbsp_rank(comm) == 0)
    printf("test_schur_light %s np=%d: %s (%ld failure(s) over all ranks)\n", which,
           mbsp_size(comm), fails ? "FAILED" : "all checks passed", fails);
  mbsp_finalize(&comm);
  return fails ? 1 : 0;
}
