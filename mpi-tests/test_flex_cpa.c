/// \file test_flex_cpa.c
/// The critical-path graph of the recursive flexible algorithm (src/flex_cpa.c) against the real
/// kernels. Linked to mbs_core_flops (MBS_COUNT_FLOPS): the graph's T1 must equal the counted
/// flops of mbs_flexAbaAccel exactly, at every grain, on a tree that mixes rigid and flexible
/// bodies (every joint type with dofs but fixed, children on nodes of flexible parents, stiffening
/// on and off, torsion shapes with zero entries) with its node frames' rotations below 0.1 rad
/// (the graph's assumption), and on chains and a star of flexible links; a chain's T∞ grows
/// linearly with its length (the same flops per link), a star's parallelism is 3 times a chain's;
/// above 0.1 rad the count is 10 flops per node frame under T1 (mbs_foRotvec's closed forms).
/// Over ranks: the distributed elimination's graph (src/flex_part_cpa.c) against all parts'
/// counted flops at 1-4 parts, and the constraint-force direct method's and jcg's
/// (src/flex_cfs_cpa.c) against their one-process count and, at 2 and 3 ranks, OpenMP threads
/// playing the ranks.
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mbs_test.h"
#include "mbspar/mbs_critpath.h"
#include "mbspar/mbs_flex.h"
#include "flex_cfs.h"
#include "flops.h"

#define BEAM(L, EL)                                                                                \
  "beam = { length = " #L "; E = 7e9; rho = 2700.0; area = 4e-4; Iy = 1e-6; Iz = 2e-6; "           \
  "elements = " #EL "; };"

static const char tree[] =
    "model = { gravity = [0.4, -1.1, -9.81]; bodies = (\n"
    "{ name = \"f1\"; parent = \"ground\"; joint = { type = \"revolute\"; axis = [0.0, 1.0, 0.0]; "
    "q0 = 0.3; qd0 = 0.5; stiffness = 2.0; damping = 0.1; }; flexible = { " BEAM(
        0.8,
        4) " modes = 3; damping = 0.02; nodes = ( { name = \"tip\"; position = [0.8, 0.0, 0.0]; }, "
           "{ name = \"mid\"; position = [0.4, 0.0, 0.0]; } ); }; },\n"
           "{ name = \"r1\"; parent = \"f1\"; joint = { type = \"universal\"; node = \"tip\"; "
           "axis = [0.0, 1.0, 0.0]; axis2 = [1.0, 0.0, 0.0]; q0 = [0.2, -0.1]; qd0 = [0.3, 0.4]; "
           "}; "
           "mass = 0.5; com = [0.1, 0.0, 0.0]; inertia = [0.01, 0.012, 0.011, 0.0, 0.0, 0.0]; },\n"
           "{ name = \"f2\"; parent = \"f1\"; joint = { type = \"prismatic\"; node = \"mid\"; "
           "axis = [0.0, 0.0, 1.0]; q0 = 0.05; qd0 = 0.1; }; flexible = { " BEAM(
               0.6, 6) " modes = 2; stiffening = false; nodes = ( { name = \"tip\"; position = "
                       "[0.6, 0.0, 0.0]; } ); "
                       "}; },\n"
                       "{ name = \"c1\"; parent = \"f2\"; joint = { type = \"cylindrical\"; node = "
                       "\"tip\"; "
                       "axis = [1.0, 0.0, 0.0]; qd0 = [0.7, -0.2]; }; mass = 0.2; com = [0.05, "
                       "0.0, 0.0]; "
                       "inertia = [0.001, 0.002, 0.002, 0.0, 0.0, 0.0]; },\n"
                       "{ name = \"r2\"; parent = \"ground\"; joint = { type = \"spherical\"; "
                       "origin = [1.0, 0.0, "
                       "0.0]; qd0 = [0.2, -0.3, 0.5]; }; mass = 1.0; com = [0.0, 0.0, -0.3]; "
                       "inertia = [0.02, 0.02, 0.01, 0.0, 0.0, 0.0]; },\n"
                       "{ name = \"f3\"; parent = \"r2\"; joint = { type = \"free\"; origin = "
                       "[0.0, 0.0, -0.6]; "
                       "qd0 = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]; }; flexible = { " BEAM(
                           0.5, 4) " modes = 2; }; }\n"
                                   "); };\n";

// the counted flops of one mbs_flexAbaAccel at q0, qd0 and the modal state eta = a s_i,
// etad = 0.3 s_i (s_i a fixed pattern of signs and sizes)
static unsigned long long count(const mbsModel *m, double a) {
  mbsFlexAba *fa = NULL;
  unsigned long long cnt = 0;
  MBS_EXPECT_OK(mbs_flexAbaCreate(m, &fa));
  if (!fa) return 0;
  int N = mbs_flexAbaSize(fa);
  double *y = calloc((size_t)N + 1, sizeof(double)), *eta = calloc((size_t)N + 1, sizeof(double));
  double *ydd = calloc((size_t)N + 1, sizeof(double));
  if (y && eta && ydd) {
    memcpy(y, m->qd0, sizeof(double) * (size_t)m->nv);
    for (int k = m->nv; k < N; k++) {
      double s = ((k * 7) % 5 - 2) * 0.5;
      eta[k - m->nv] = a * s, y[k] = 0.3 * s;
    }
    mbs_flop_count = 0;
    MBS_EXPECT_OK(mbs_flexAbaAccel(fa, m->q0, y, eta, ydd));
    cnt = mbs_flop_count;
    for (int k = 0; k < N; k++) MBS_EXPECT(isfinite(ydd[k]), "ydd[%d] = %g", k, ydd[k]);
  }
  free(y), free(eta), free(ydd);
  mbs_flexAbaDestroy(&fa);
  return cnt;
}

// T1 of the graph at each grain equals cnt; returns the op graph's T∞ (flops) and parallelism
static long long check(const mbsModel *m, unsigned long long cnt, const char *what, double *par) {
  long long span = -1;
  for (int grain = 0; grain < 4; grain++) {
    mbsCpaOptions o;
    mbs_cpaDefaults(&o);
    o.method = mbs_solverFromName("aba");
    o.grain = grain;
    mbsCpaGraph *g = NULL;
    mbsCpaResult r;
    MBS_EXPECT_OK(mbs_cpaBuild(m, &o, &g));
    if (!g) continue;
    MBS_EXPECT_OK(mbs_cpaAnalyse(g, &r));
    MBS_EXPECT((unsigned long long)r.work_flops == cnt, "%s grain %d: T1 %lld, counted %llu", what,
               grain, r.work_flops, cnt);
    if (grain == 0) {
      span = r.span_flops, *par = r.parallelism;
      printf("%s: T1 %lld flops = counted %llu; T_inf %lld flops (%d nodes), T1/T_inf %.2f\n", what,
             r.work_flops, cnt, r.span_flops, r.path_nodes, r.parallelism);
    }
    mbs_cpaResultFree(&r);
    mbs_cpaDestroy(&g);
  }
  return span;
}

// the counted flops of the distributed elimination over P parts (src/flex_part.c): every part's
// mbs_flexPartLocal, their rows summed (as the allreduce does), every part's mbs_flexPartFinish;
// *diff: the largest |ydd - the serial algorithm's| relative to the largest |ydd|
static unsigned long long countParts(const mbsModel *m, int P, double *diff) {
  mbsFlexPart **fp = calloc((size_t)P, sizeof *fp);
  mbsFlexAba *fa = NULL;
  unsigned long long cnt = 0;
  MBS_EXPECT_OK(mbs_flexAbaCreate(m, &fa));
  int N = fa ? mbs_flexAbaSize(fa) : 0;
  double *y = calloc((size_t)N + 1, sizeof(double)), *eta = calloc((size_t)N + 1, sizeof(double));
  double *ydd = calloc((size_t)N + 1, sizeof(double)), *ref = calloc((size_t)N + 1, sizeof(double));
  double *sum = NULL;
  *diff = 1;
  if (!fp || !fa || !y || !eta || !ydd || !ref) goto out;
  memcpy(y, m->qd0, sizeof(double) * (size_t)m->nv);
  for (int k = m->nv; k < N; k++) {
    double s = ((k * 7) % 5 - 2) * 0.5;
    eta[k - m->nv] = 1e-3 * s, y[k] = 0.3 * s;
  }
  MBS_EXPECT_OK(mbs_flexAbaAccel(fa, m->q0, y, eta, ref));
  for (int r = 0; r < P; r++) MBS_EXPECT_OK(mbs_flexPartCreate(m, P, r, &fp[r]));
  for (int r = 0; r < P; r++)
    if (!fp[r]) goto out;
  int ni = mbs_flexPartIfSize(fp[0]), nn = ni * ni + ni;
  sum = calloc((size_t)nn + 1, sizeof(double));
  if (!sum) goto out;
  double *bufs[4] = {NULL, NULL, NULL, NULL};
  mbs_flop_count = 0;
  for (int r = 0; r < P; r++) { // (each part has a workspace of its own)
    int n = 0;
    MBS_EXPECT_OK(mbs_flexPartLocal(fp[r], m->q0, y, eta, &bufs[r], &n));
    for (int i = 0; bufs[r] && i < n; i++) sum[i] += bufs[r][i];
  }
  for (int r = 0; r < P; r++) {
    if (bufs[r]) memcpy(bufs[r], sum, sizeof(double) * (size_t)nn);
    MBS_EXPECT_OK(mbs_flexPartFinish(fp[r], m->q0, y, ydd));
  }
  cnt = mbs_flop_count;
  double big = 0, d = 0;
  for (int k = 0; k < N; k++) big = fmax(big, fabs(ref[k])), d = fmax(d, fabs(ydd[k] - ref[k]));
  *diff = d / big;
out:
  for (int r = 0; fp && r < P; r++) mbs_flexPartDestroy(&fp[r]);
  free(fp), free(y), free(eta), free(ydd), free(ref), free(sum);
  mbs_flexAbaDestroy(&fa);
  return cnt;
}

// the distributed graph over P = 1..4 ranks (cpa --procs, method schur): T1 equals the counted
// flops of the parts; returns T1 at 2 ranks
static long long checkParts(const mbsModel *m, const char *what) {
  long long t2 = 0;
  for (int P = 1; P <= 4 && P <= m->nbody; P++) {
    double diff;
    unsigned long long cnt = countParts(m, P, &diff);
    MBS_EXPECT(diff < 1e-9, "%s, %d parts: accelerations differ by %g", what, P, diff);
    mbsCpaOptions o;
    mbs_cpaDefaults(&o);
    o.method = mbs_solverFromName("schur");
    o.ranks = P;
    mbsCpaGraph *g = NULL;
    mbsCpaResult r;
    MBS_EXPECT_OK(mbs_cpaBuild(m, &o, &g));
    if (!g) continue;
    MBS_EXPECT_OK(mbs_cpaAnalyse(g, &r));
    MBS_EXPECT((unsigned long long)r.work_flops == cnt, "%s, %d ranks: T1 %lld, counted %llu", what,
               P, r.work_flops, cnt);
    double tp = 0;
    MBS_EXPECT_OK(mbs_cpaSchedule(g, P, &tp));
    printf("%s over %d ranks: T1 %lld flops = counted %llu; T_inf %.3g s, scheduled %.3g s "
           "(%d messages)\n",
           what, P, r.work_flops, cnt, r.span, tp, r.nmsg);
    if (P == 2) t2 = r.work_flops;
    mbs_cpaResultFree(&r);
    mbs_cpaDestroy(&g);
  }
  return t2;
}

// P ranks of the constraint-force direct method as P OpenMP threads in this process: each its
// body range (flex_cfs_par.c's split), the sums over the ranks through a shared buffer between
// barriers; returns the flops counted by all of them (0 if P threads were not granted)
static double *g_red;
static mbsErr redThreads(void *ctx, double *v, int n) {
  (void)ctx;
#pragma omp barrier
#pragma omp single
  memset(g_red, 0, sizeof(double) * (size_t)n);
#pragma omp critical
  for (int i = 0; i < n; i++) g_red[i] += v[i];
#pragma omp barrier
  memcpy(v, g_red, sizeof(double) * (size_t)n);
#pragma omp barrier
  return MBS_OK;
}
static unsigned long long countCfsRanks(const mbsModel *m, int meth, int P, const double *y,
                                        const double *eta, double *ydd, int *its) {
  mbsFlexCfs *f[4] = {NULL, NULL, NULL, NULL};
  mbsCfsComm comm = {0};
  comm.reduce = redThreads;
  int ok = 1, got = 0;
  for (int r = 0; r < P; r++) {
    MBS_EXPECT_OK(mbs_flexCfsCreate(m, &f[r]));
    ok = ok && f[r];
    if (f[r])
      MBS_EXPECT_OK(mbs_flexCfsSetRange(f[r], (int)((long)m->nbody * r / P),
                                        (int)((long)m->nbody * (r + 1) / P), &comm));
  }
  int nl = ok ? mbs_flexCfsRows(f[0]) : 0, N = ok ? mbs_flexCfsSize(f[0]) : 0;
  g_red =
      calloc((size_t)(nl + 1) * (nl + 1) + 12 * (size_t)N + 6 * (size_t)m->nbody, sizeof(double));
  unsigned long long cnt = 0;
  double *yr = calloc((size_t)P * ((size_t)N + 1), sizeof(double)); // each rank's ydd
  if (ok && g_red && yr) {
    mbs_flop_count = 0;
    omp_set_dynamic(0);
#pragma omp parallel num_threads(P)
    {
      int r = omp_get_thread_num(), it = 0;
#pragma omp single
      got = omp_get_num_threads();
      if (got == P) { // (the implicit barrier of single: every thread sees got)
        double *yo = yr + (size_t)r * ((size_t)N + 1);
        mbsErr e = mbs_flexCfsAccel(f[r], meth, 1e-12, m->q0, y, eta, yo, &it);
        MBS_EXPECT(e == MBS_OK, "rank %d of %d: %s", r, P, mbs_errMsg());
        if (r == 0) its[0] = it, its[1] = mbs_flexCfsSpecIterations(f[r]);
      }
    }
    cnt = got == P ? mbs_flop_count : 0;
    memcpy(ydd, yr, sizeof(double) * (size_t)N); // rank 0's (every rank has the sum)
  }
  free(g_red), free(yr);
  for (int r = 0; r < P; r++) mbs_flexCfsDestroy(&f[r]);
  return cnt;
}

// the constraint-force direct method or jcg (src/flex_cfs.c, flex_cfs_iter.c) at one process: its
// counted flops equal the data-flow graph's T1 (cpa --method direct, jcg; jcg's graph with the
// iterations of the counted solve); at 2 and 3 ranks the graph's T1 equals the flops counted by
// as many threads playing the ranks (the replicated work included: kinematics, parents' prepare,
// the direct solve, jcg's scalars)
static void checkCfs(const mbsModel *m, const char *what, int meth) {
  mbsFlexCfs *f = NULL;
  const char *mn = mbs_flexCfsName(meth);
  MBS_EXPECT_OK(mbs_flexCfsCreate(m, &f));
  int N = f ? mbs_flexCfsSize(f) : 0, it = 0;
  double *y = calloc((size_t)N + 1, sizeof(double)), *eta = calloc((size_t)N + 1, sizeof(double));
  double *ydd = calloc((size_t)N + 1, sizeof(double));
  if (f && y && eta && ydd) {
    memcpy(y, m->qd0, sizeof(double) * (size_t)m->nv);
    for (int k = m->nv; k < N; k++) {
      double s = ((k * 7) % 5 - 2) * 0.5;
      eta[k - m->nv] = 1e-3 * s, y[k] = 0.3 * s;
    }
    mbs_flop_count = 0;
    MBS_EXPECT_OK(mbs_flexCfsAccel(f, meth, 1e-12, m->q0, y, eta, ydd, &it));
    unsigned long long cnt = mbs_flop_count;
    MBS_EXPECT(meth == MBS_FCFS_DIRECT || it > 2, "%s %s: %d iterations", what, mn, it);
    for (int P = 0; P <= 3; P++) {
      mbsCpaOptions o;
      mbs_cpaDefaults(&o);
      o.method = mbs_solverFromName(mn);
      o.ranks = P;
      o.iterations = it;
      o.spec_iterations = mbs_flexCfsSpecIterations(f);
      unsigned long long cr = 0;
      double *yr = P ? calloc((size_t)N + 1, sizeof(double)) : NULL;
      int itp[2] = {it, 0}; // the ranks' iterations (their sums round in another order)
      if (yr) cr = countCfsRanks(m, meth, P, y, eta, yr, itp);
      if (cr) o.iterations = itp[0], o.spec_iterations = itp[1];
      mbsCpaGraph *g = NULL;
      mbsCpaResult r;
      MBS_EXPECT_OK(mbs_cpaBuild(m, &o, &g));
      if (!g) {
        free(yr);
        continue;
      }
      MBS_EXPECT_OK(mbs_cpaAnalyse(g, &r));
      if (P == 0) {
        MBS_EXPECT((unsigned long long)r.work_flops == cnt, "%s %s: T1 %lld, counted %llu", what,
                   mn, r.work_flops, cnt);
      } else { // the ranks as threads: their counted flops, their accelerations
        double big = 0, d = 0;
        for (int k = 0; yr && k < N; k++)
          big = fmax(big, fabs(ydd[k])), d = fmax(d, fabs(yr[k] - ydd[k]));
        if (cr) {
          MBS_EXPECT((unsigned long long)r.work_flops == cr,
                     "%s %s over %d ranks: T1 %lld, counted %llu", what, mn, P, r.work_flops, cr);
          MBS_EXPECT(d <= 1e-9 * big, "%s %s over %d ranks: ydd differs by %g", what, mn, P,
                     d / big);
        } else {
          printf("%s %s over %d ranks: %d threads not granted, count not checked\n", what, mn, P,
                 P);
        }
      }
      printf("%s, flex_cfs %s%s%.0d: T1 %lld flops%s%llu (%d iterations); T_inf %.3g s, T1/T_inf "
             "%.2f\n",
             what, mn, P ? " over ranks " : "", P, r.work_flops,
             P ? " = counted over the ranks (threads) " : " = counted ", P && cr ? cr : cnt,
             o.iterations, r.span, r.parallelism);
      free(yr);
      mbs_cpaResultFree(&r);
      mbs_cpaDestroy(&g);
    }
  }
  free(y), free(eta), free(ydd);
  mbs_flexCfsDestroy(&f);
}

// n flexible links (4 elements, 4 modes, no nodes): a chain (each on the previous link's
// undeformed tip) or a star (all on the ground)
static mbsModel *links(int n, int chain) {
  size_t cap = 600 * (size_t)n + 200, len = 0;
  char *t = malloc(cap);
  if (!t) return NULL;
  len += (size_t)snprintf(t + len, cap - len, "model = { gravity = [0, 0, -9.81]; bodies = (\n");
  for (int i = 0; i < n; i++) {
    char par[32];
    snprintf(par, sizeof par, i && chain ? "l%d" : "ground", i - 1);
    len += (size_t)snprintf(t + len, cap - len,
                            "%s{ name = \"l%d\"; parent = \"%s\"; joint = { type = \"revolute\"; "
                            "axis = [0.0, 1.0, 0.0]; origin = [%s, 0.0, 0.0]; qd0 = 0.3; }; "
                            "flexible = { " BEAM(0.25, 4) " modes = 4; }; }\n",
                            i ? "," : "", i, par, i && chain ? "0.25" : "0.0");
  }
  snprintf(t + len, cap - len, "); };\n");
  mbsModel *m = mbs_test_buildText(t);
  free(t);
  return m;
}

int main(void) {
  double par;
  mbsModel *m = mbs_test_buildText(tree);
  MBS_EXPECT(m && m->flex && m->flex->n == 3 && m->flex->natt == 3, "the tree: %d flexible",
             m && m->flex ? m->flex->n : -1);
  if (m) {
    unsigned long long c = count(m, 1e-3);
    check(m, c, "tree (6 bodies, 3 flexible, 3 children on nodes)", &par);
    // node rotations above 0.1 rad: mbs_foRotvec's closed forms, 10 flops fewer per node frame
    unsigned long long big = count(m, 2.0);
    MBS_EXPECT(big + 30 == c, "large rotations: counted %llu, small %llu (want 30 fewer)", big, c);
    printf("node rotations above 0.1 rad: counted %llu = T1 - 3 x 10\n", big);
    checkParts(m, "tree");
    checkCfs(m, "tree", MBS_FCFS_DIRECT);
    for (int k = MBS_FCFS_JCG; k <= MBS_FCFS_CHEB; k++) checkCfs(m, "tree", k);
    mbs_modelDestroy(&m);
  }
  long long span[3] = {0, 0, 0};
  double pc = 0, ps = 0;
  for (int k = 0; k < 3; k++) {
    int n = 8 * (k + 1);
    mbsModel *mc = links(n, 1);
    if (!mc) continue;
    char what[64];
    snprintf(what, sizeof what, "chain of %d flexible links", n);
    span[k] = check(mc, count(mc, 1e-3), what, k == 1 ? &pc : &ps);
    if (k == 1)
      checkParts(mc, what), checkCfs(mc, what, MBS_FCFS_DIRECT), checkCfs(mc, what, MBS_FCFS_JCG);
    mbs_modelDestroy(&mc);
  }
  // T_inf = a + b n: every link adds the same path (its kin, condense, transfer, acc)
  printf("chain T_inf grows by %lld flops per 8 links, then %lld (linear)\n", span[1] - span[0],
         span[2] - span[1]);
  MBS_EXPECT(span[1] - span[0] == span[2] - span[1] && span[1] > span[0],
             "chain T_inf %lld %lld %lld", span[0], span[1], span[2]);
  mbsModel *ms = links(16, 0);
  if (ms) {
    check(ms, count(ms, 1e-3), "star of 16 flexible links", &ps);
    mbs_modelDestroy(&ms);
  }
  MBS_EXPECT(ps > 3 * pc, "star parallelism %g against the 16-link chain's %g", ps, pc);
  return mbs_test_finish("test_flex_cpa");
}
