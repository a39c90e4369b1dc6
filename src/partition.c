/// \file partition.c
/// The decomposition of a model over ranks, used by the engine (parallel/engine.c), the local
/// model builder (src/config.c) and the critical-path analyser (src/critpath.c): contiguous
/// ranges of the body order balanced by a per-joint cost weight. Rank r starts at the first body
/// whose cumulative weight reaches r/P of the total; then every rank gets at least one body.
/// Bodies come as runs of one joint type (a generator is one run), so a model of any size is
/// partitioned in O(runs + P) without its bodies. A forest's trees listed one after another give
/// clean cuts (a tree's root, no joint across it); a boundary near one moves there.
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_model.h"

double mbs_partitionWeight(int type) {
  int nv = mbs_jntNv(type);
  return 130.0 + 24.0 * (6 - nv) + 12.0 * nv;
}

// weight of the bodies before body b, for ascending b (run k, its first body rs, the weight ra
// before it: carried between calls)
static double mbs_partitionAcc(const int *run_type, const int *run_len, int nrun, long b, int *k,
                               long *rs, double *ra) {
  while (*k + 1 < nrun && *rs + run_len[*k] <= b) {
    *ra += run_len[*k] * mbs_partitionWeight(run_type[*k]);
    *rs += run_len[*k];
    (*k)++;
  }
  return *ra + (double)(b - *rs) * mbs_partitionWeight(run_type[*k]);
}

// move each boundary to the clean cut nearest in weight, if one lies within MBS_PARTITION_SNAP
// of a part's weight, keeping the order and one body per rank (docs/model.md)
static mbsErr mbs_partitionSnap(const int *run_type, const int *run_len, int nrun, double part,
                                const int *cut, int ncut, int P, int *start) {
  double *cw = malloc(sizeof(double) * (size_t)ncut), *sw = malloc(sizeof(double) * (size_t)P);
  if (!cw || !sw) {
    free(cw), free(sw);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (partition)");
  }
  int k = 0;
  long rs = 0;
  double ra = 0;
  for (int j = 0; j < ncut; j++)
    cw[j] = mbs_partitionAcc(run_type, run_len, nrun, cut[j], &k, &rs, &ra);
  k = 0, rs = 0, ra = 0;
  for (int r = 1; r < P; r++)
    sw[r] = mbs_partitionAcc(run_type, run_len, nrun, start[r], &k, &rs, &ra);
  const double tol = MBS_PARTITION_SNAP * part;
  for (int r = 1; r < P; r++) {
    int lo = 0, hi = ncut; // first cut with weight >= sw[r] - tol
    while (lo < hi) {
      int mid = lo + (hi - lo) / 2;
      if (cw[mid] < sw[r] - tol)
        lo = mid + 1;
      else
        hi = mid;
    }
    int best = -1;
    double bd = tol;
    for (int j = lo; j < ncut && cw[j] <= sw[r] + tol && cut[j] < start[r + 1]; j++) {
      double d = fabs(cw[j] - sw[r]);
      if (cut[j] > start[r - 1] && d <= bd) bd = d, best = cut[j];
    }
    if (best > 0) start[r] = best;
  }
  free(cw), free(sw);
  return MBS_OK;
}

mbsErr mbs_partitionRuns(const int *run_type, const int *run_len, int nrun, int chain,
                         const int *cut, int ncut, int P, int *start) {
  return mbs_partitionRunsLight(run_type, run_len, nrun, chain, cut, ncut, NULL, 0, P, start);
}

// the first entry of light (pairs child, parent, ascending by child) whose child is >= s; n if none
static int mbs_partitionLightFirst(const int *light, int n, int s) {
  int lo = 0, hi = n;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (light[2 * mid] < s)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// 1 if a light joint (light: pairs child, parent, ascending by child; sm: the suffix minima of
// the parents) crosses a boundary at body s: a parent before s, its child at or after it
static int mbs_partitionCrossLight(const int *light, const int *sm, int n, int s) {
  int lo = mbs_partitionLightFirst(light, n, s);
  return lo < n && sm[lo] < s;
}

// 1 if a boundary at body s, the previous one at s0, leaves a light body isolated: a light joint
// across s whose parent p (in [s0, s)) is the lighter body, p's own joint light with a heavier
// parent before s0 (light: pairs child, parent as mbs_partitionLightParent, ascending by child)
static int mbs_partitionIsolates(const int *light, int n, int s0, int s) {
  for (int i = mbs_partitionLightFirst(light, n, s); i < n; i++) {
    int p = light[2 * i + 1];
    if (p < 0 || p >= s || p < s0) continue;       // p >= 0: the parent is the lighter body
    int lo = mbs_partitionLightFirst(light, n, p); // p's own entry
    if (lo < n && light[2 * lo] == p && light[2 * lo + 1] < 0 && -1 - light[2 * lo + 1] < s0)
      return 1;
  }
  return 0;
}

int mbs_partitionTestLightRoots(void) {
  const char *v = getenv("MBSPAR_TEST_LIGHT_ROOTS");
  return v && strcmp(v, "1") == 0;
}

// sigma of a chain's partition: MBS_PARTITION_SPIKE, or MBSPAR_PARTITION_SPIKE from the
// environment (a measurement switch, docs/scaling.md; the same on every rank, as mpirun passes it)
static double mbs_partitionSpike(void) {
  const char *v = getenv("MBSPAR_PARTITION_SPIKE");
  if (v && *v) {
    char *end;
    double x = strtod(v, &end);
    if (*end == 0 && x >= 0 && x <= 10) return x;
  }
  return MBS_PARTITION_SPIKE;
}

// the joint type of body b (runs; O(runs))
static int mbs_partitionTypeAt(const int *run_type, const int *run_len, int nrun, long b) {
  long rs = 0;
  int k = 0;
  while (k + 1 < nrun && rs + run_len[k] <= b) rs += run_len[k++];
  return run_type[k];
}

mbsErr mbs_partitionRunsLight(const int *run_type, const int *run_len, int nrun, int chain,
                              const int *cut, int ncut, const int *light, int nlight, int P,
                              int *start) {
  long n = 0;
  double total = 0;
  for (int k = 0; k < nrun; k++) {
    n += run_len[k];
    total += run_len[k] * mbs_partitionWeight(run_type[k]); // integers: exact
  }
  MBS_CHECK(n > 0 && n <= 2147483647L, MBS_ERR_INTERNAL, "partition: %ld bodies", n);
  MBS_CHECK(P >= 1 && P <= n, MBS_ERR_INPUT,
            "cannot distribute %ld bodies over %d MPI ranks: more ranks than bodies (use at most "
            "%ld ranks)",
            n, P, n);
  // start[r] = first body b whose weight before it, acc(b), reaches total * r / P; on a chain
  // ranks 0 .. P-2 cost 1 + sigma per unit weight (their spikes), the last 1: equal times give
  // each of them total / (P + sigma)
  const double parts = chain && P > 1 ? P + mbs_partitionSpike() : P;
  int r = 1;
  long b0 = 0;
  double acc0 = 0;
  start[0] = 0;
  for (int k = 0; k < nrun && r < P; k++) {
    double w = mbs_partitionWeight(run_type[k]);
    long len = run_len[k];
    while (r < P) {
      double target = total * r / parts;
      // smallest j in [0, len) with acc0 + j w >= target
      double jf = ceil((target - acc0) / w);
      long j = jf < 0 ? 0 : (long)jf;
      while (j > 0 && acc0 + (double)(j - 1) * w >= target) j--;
      while (j < len && acc0 + (double)j * w < target) j++;
      if (j >= len) break; // reached in a later run
      start[r++] = (int)(b0 + j);
    }
    acc0 += (double)len * w, b0 += len;
  }
  while (r < P) start[r++] = (int)n;
  start[P] = (int)n;
  for (int k = 1; k < P; k++)
    if (start[k] <= start[k - 1]) start[k] = start[k - 1] + 1;
  for (int k = P - 1; k >= 1; k--)
    if (start[k] > n - (P - k)) start[k] = (int)(n - (P - k));
  // no rank starts at a body on a fixed joint, and no light joint crosses a boundary
  // (docs/formulation.md 4.9): move down past them
  int *sm = nlight > 0 ? malloc(2 * sizeof(int) * (size_t)nlight) : NULL, *sr = sm + nlight;
  if (nlight > 0 && !sm) return mbs_errSet(MBS_ERR_NOMEM, "out of memory (partition)");
  for (int i = nlight - 1; i >= 0; i--) { // all light joints; the light roots' alone (sr)
    int pe = light[2 * i + 1], pa = pe < 0 ? -1 - pe : pe, pr = pe < 0 ? pa : INT_MAX;
    sm[i] = i + 1 < nlight && sm[i + 1] < pa ? sm[i + 1] : pa;
    sr[i] = i + 1 < nlight && sr[i + 1] < pr ? sr[i + 1] : pr;
  }
  for (int r2 = 1; r2 < P; r2++) {
    // the nearest clean place within MBS_PARTITION_FIXED_SKIP bodies (down first), above the
    // previous boundary; the following boundaries are pushed down if it lies at or past them
    // (one body per rank kept)
    int to = -1;
    for (int d = 0; to < 0 && d <= MBS_PARTITION_FIXED_SKIP; d++)
      for (int sg = 1; to < 0 && sg >= (d ? -1 : 1); sg -= 2) {
        long b = (long)start[r2] + sg * d;
        if (b <= start[r2 - 1] || b > n - (P - r2)) continue;
        if (!mbs_jntIsFixed(mbs_partitionTypeAt(run_type, run_len, nrun, b)) &&
            !mbs_partitionCrossLight(light, sm, nlight, (int)b))
          to = (int)b;
      }
    // none: the nearest place that no light root crosses (a light joint whose child is the light
    // body: the rank below would start at a light body with its soft direction; a light leaf,
    // the light body above the boundary, is taken exactly by schur, docs/formulation.md 4.9) and
    // that isolates no light body (below)
    for (int d = 0; to < 0 && nlight > 0 && d <= MBS_PARTITION_FIXED_SKIP; d++)
      for (int sg = 1; to < 0 && sg >= (d ? -1 : 1); sg -= 2) {
        long b = (long)start[r2] + sg * d;
        if (b <= start[r2 - 1] || b > n - (P - r2)) continue;
        if (!mbs_jntIsFixed(mbs_partitionTypeAt(run_type, run_len, nrun, b)) &&
            !mbs_partitionCrossLight(light, sr, nlight, (int)b) &&
            !mbs_partitionIsolates(light, nlight, start[r2 - 1], (int)b))
          to = (int)b;
      }
    // none: the nearest place that isolates no light body (a light parent of a light joint
    // across it, whose own parent is a heavier body before the previous boundary: it would be a
    // rank's root with children on the next rank, its compliance undamped on both cut joints;
    // a light root alone loses about eight digits, docs/formulation.md 4.9)
    for (int d = 0; to < 0 && nlight > 0 && d <= MBS_PARTITION_FIXED_SKIP; d++)
      for (int sg = 1; to < 0 && sg >= (d ? -1 : 1); sg -= 2) {
        long b = (long)start[r2] + sg * d;
        if (b <= start[r2 - 1] || b > n - (P - r2)) continue;
        if (!mbs_jntIsFixed(mbs_partitionTypeAt(run_type, run_len, nrun, b)) &&
            !mbs_partitionIsolates(light, nlight, start[r2 - 1], (int)b))
          to = (int)b;
      }
    if (to >= 0) {
      start[r2] = to;
      for (int r3 = r2 + 1; r3 < P && start[r3] <= start[r3 - 1]; r3++)
        start[r3] = start[r3 - 1] + 1;
      continue;
    }
    long rs = 0;
    int k = 0;
    // none: as far down as the next boundary allows
    for (int step = 0; step < MBS_PARTITION_FIXED_SKIP && start[r2] + 1 < start[r2 + 1]; step++) {
      while (k + 1 < nrun && rs + run_len[k] <= start[r2]) rs += run_len[k++];
      if (!mbs_jntIsFixed(run_type[k]) && !mbs_partitionCrossLight(light, sm, nlight, start[r2]))
        break;
      start[r2]++;
    }
  }
  free(sm);
  if (ncut > 0 && P > 1 && !chain)
    return mbs_partitionSnap(run_type, run_len, nrun, total / parts, cut, ncut, P, start);
  return MBS_OK;
}

int mbs_partitionCuts(const mbsModel *m, int *cut) {
  int nc = 0;
  for (int b = 0; b < m->nbody; b++) {
    int p = m->body_parent[b];
    if (p < 0)
      cut[nc++] = b;
    else
      nc = mbs_partitionCutDrop(cut, nc, p);
  }
  return nc;
}

mbsErr mbs_partitionModel(const mbsModel *m, int P, int *start) {
  // the bodies as runs of one joint each (merged when equal)
  int *t = malloc(sizeof(int) * (size_t)(m->nbody + 1)),
      *l = malloc(sizeof(int) * (size_t)(m->nbody + 1)),
      *cut = malloc(sizeof(int) * (size_t)(m->nbody + 1));
  if (!t || !l || !cut) {
    free(t), free(l), free(cut);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (partition)");
  }
  int nr = 0;
  for (int b = 0; b < m->nbody; b++) {
    if (nr && t[nr - 1] == m->body_jnttype[b])
      l[nr - 1]++;
    else
      t[nr] = m->body_jnttype[b], l[nr] = 1, nr++;
  }
  int chain = 1;
  for (int b = 0; b < m->nbody && chain; b++)
    if (m->body_parent[b] != b - 1) chain = 0;
  int nc = mbs_partitionCuts(m, cut);
  // the light joints
  int *lj = malloc(2 * sizeof(int) * (size_t)(m->nbody + 1)), nl = 0;
  if (!lj) {
    free(t), free(l), free(cut);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (partition)");
  }
  const int leaves_only = mbs_partitionTestLightRoots();
  for (int b = 0; b < m->nbody; b++) {
    int p = m->body_parent[b];
    if (p >= 0 &&
        mbs_partitionIsLight(m->body_mass[p], mbs_jntIsFixed(m->body_jnttype[p]), m->body_mass[b],
                             mbs_jntIsFixed(m->body_jnttype[b])) &&
        !(leaves_only && m->body_mass[b] < m->body_mass[p])) {
      lj[2 * nl] = b,
             lj[2 * nl + 1] = mbs_partitionLightParent(p, m->body_mass[b], m->body_mass[p]);
      nl++;
    }
  }
  mbsErr e = mbs_partitionRunsLight(t, l, nr, chain, cut, nc, lj, nl, P, start);
  free(t), free(l), free(cut), free(lj);
  return e;
}

int mbs_partitionLightCut(const mbsModel *m, const int *start, int n, int *parent) {
  for (int k = 1; k < n; k++)
    for (int b = start[k]; b < start[n]; b++) {
      int p = m->body_parent[b];
      if (p >= start[0] && p < start[k] &&
          mbs_partitionIsLight(m->body_mass[p], mbs_jntIsFixed(m->body_jnttype[p]), m->body_mass[b],
                               mbs_jntIsFixed(m->body_jnttype[b]))) {
        *parent = p;
        return b;
      }
    }
  *parent = -1;
  return -1;
}

// the masses' runs, and the light joints, of the structure pass (mbs_modelAddBody,
// mbs_modelSkipBodies); on out of memory nrun_m = -1 and nothing more is noted
static int mbs_partitionPush(int **a, int *n, int *cap, int v) { // 1 on out of memory
  if (*n == *cap) {
    int nc = *cap ? 2 * *cap : 64;
    int *p = realloc(*a, (size_t)nc * sizeof *p);
    if (!p) return 1;
    *a = p, *cap = nc;
  }
  (*a)[(*n)++] = v;
  return 0;
}

void mbs_partitionNoteMass(mbsModel *m, int first, int count, int parent, double mass, int type) {
  if (m->nrun_m < 0 || count <= 0) return;
  int fixed = mbs_jntIsFixed(type);
  if (parent >= 0 && m->nrun_m > 0) { // the parent's run: the last one starting at or before it
    int lo = 0, hi = m->nrun_m;
    while (hi - lo > 1) {
      int mid = lo + (hi - lo) / 2;
      if (m->run_mfirst[mid] <= parent)
        lo = mid;
      else
        hi = mid;
    }
    double pm = m->run_mass[lo];
    if (mbs_partitionIsLight(fabs(pm), pm < 0, mass, fixed) &&
        !(mass < fabs(pm) && mbs_partitionTestLightRoots())) {
      int n = 2 * m->nrun_light;
      if (mbs_partitionPush(&m->run_light, &n, &m->run_lightcap, first) ||
          mbs_partitionPush(&m->run_light, &n, &m->run_lightcap,
                            mbs_partitionLightParent(parent, mass, fabs(pm)))) {
        m->nrun_m = -1;
        return;
      }
      m->nrun_light++;
    }
  }
  if (fixed) mass = -mass;
  if (m->nrun_m > 0 && m->run_mass[m->nrun_m - 1] == mass) return; // the same run goes on
  if (m->nrun_m == m->run_mcap) {
    int nc = m->run_mcap ? 2 * m->run_mcap : 64;
    double *p = realloc(m->run_mass, (size_t)nc * sizeof *p);
    if (p) m->run_mass = p;
    int *q = p ? realloc(m->run_mfirst, (size_t)nc * sizeof *q) : NULL;
    if (q) m->run_mfirst = q;
    if (!q) {
      m->nrun_m = -1;
      return;
    }
    m->run_mcap = nc;
  }
  m->run_mfirst[m->nrun_m] = first, m->run_mass[m->nrun_m] = mass;
  m->nrun_m++;
}
