/// \file critpath_sched.c
/// The critical-path analyser's analysis of a finished graph (include/mbspar/mbs_critpath.h): T1,
/// T∞ and the critical path (mbs_cpaAnalyse), the per-rank work by engine phase of a distributed
/// graph (mbs_cpaRankPhases), list schedules on P processors (mbs_cpaSchedule) and Graphviz
/// (mbs_cpaWriteDot). The graph itself is built by src/critpath.c and the methods' graph files.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpa_private.h"

void mbs_cpaRankPhases(const mbsCpaGraph *g, long long *flops, double *seconds) {
  int np = MBS_CPA_PHASE_COUNT, phase[MBS_CPA_KIND_COUNT];
  for (int k = 0; k < MBS_CPA_KIND_COUNT; k++) phase[k] = mbs_cpaKindPhase(k);
  for (int i = 0; i < g->ranks * np; i++) flops[i] = 0, seconds[i] = 0;
  for (int v = 0; v < g->nnode; v++) {
    int r = g->proc[v], k = g->kind[v];
    if (r < 0 || r >= g->ranks || k < 0 || k >= MBS_CPA_KIND_COUNT) continue;
    flops[r * np + phase[k]] += g->flops[v];
    seconds[r * np + phase[k]] += g->cost[v];
  }
}

// ---------------------------------------------------------------- analysis

mbsErr mbs_cpaAnalyse(const mbsCpaGraph *g, mbsCpaResult *r) {
  memset(r, 0, sizeof *r);
  int n = g->nnode;
  double *fin = malloc((size_t)(n > 0 ? n : 1) * sizeof *fin);
  int *from = malloc((size_t)(n > 0 ? n : 1) * sizeof *from);
  if (!fin || !from) {
    free(fin), free(from);
    return mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  }
  // earliest finish times in topological order (node ids are topological)
  int last = -1;
  for (int v = 0; v < n; v++) {
    double s = 0;
    from[v] = -1;
    for (int k = g->pred_adr[v]; k < g->pred_adr[v + 1]; k++) {
      int u = g->pred[k];
      if (fin[u] > s || (from[v] < 0 && fin[u] >= s)) s = fin[u], from[v] = u;
    }
    fin[v] = s + g->span[v];
    r->work_flops += g->flops[v];
    if (g->proc[v] != -2) r->work += g->cost[v];
    if (g->proc[v] == -2) r->nmsg++;
    if (last < 0 || fin[v] > fin[last]) last = v;
  }
  r->span = last >= 0 ? fin[last] : 0;
  r->parallelism = r->span > 0 ? r->work / r->span : 1;
  int len = 0;
  for (int v = last; v >= 0; v = from[v]) len++;
  r->path = malloc((size_t)(len > 0 ? len : 1) * sizeof *r->path);
  if (!r->path) {
    free(fin), free(from);
    return mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  }
  r->path_nodes = len;
  int i = len;
  for (int v = last; v >= 0; v = from[v]) {
    r->path[--i] = v;
    r->span_flops += g->flops[v];
    r->kind_nodes[g->kind[v]]++;
    r->kind_flops[g->kind[v]] += g->flops[v];
    r->kind_time[g->kind[v]] += g->span[v];
  }
  free(fin), free(from);
  return MBS_OK;
}

void mbs_cpaResultFree(mbsCpaResult *r) {
  free(r->path);
  r->path = NULL;
}

// ---- list scheduling

typedef struct {
  double key;
  int v;
} mbsCpaHeapItem;
typedef struct {
  mbsCpaHeapItem *a;
  int n, cap;
} mbsCpaHeap;

// max-heap on key, ties to the lower node id
static int mbs_cpaAbove(const mbsCpaHeapItem *x, const mbsCpaHeapItem *y) {
  return x->key > y->key || (x->key == y->key && x->v < y->v);
}
static int mbs_cpaPush(mbsCpaHeap *h, double key, int v) {
  if (h->n == h->cap) {
    int nc = h->cap ? 2 * h->cap : 64;
    mbsCpaHeapItem *a = realloc(h->a, (size_t)nc * sizeof *a);
    if (!a) return 0;
    h->a = a, h->cap = nc;
  }
  int i = h->n++;
  h->a[i].key = key, h->a[i].v = v;
  while (i > 0 && mbs_cpaAbove(&h->a[i], &h->a[(i - 1) / 2])) {
    mbsCpaHeapItem t = h->a[i];
    h->a[i] = h->a[(i - 1) / 2], h->a[(i - 1) / 2] = t;
    i = (i - 1) / 2;
  }
  return 1;
}
static mbsCpaHeapItem mbs_cpaPop(mbsCpaHeap *h) {
  mbsCpaHeapItem top = h->a[0];
  h->a[0] = h->a[--h->n];
  for (int i = 0;;) {
    int l = 2 * i + 1, r = l + 1, b = i;
    if (l < h->n && mbs_cpaAbove(&h->a[l], &h->a[b])) b = l;
    if (r < h->n && mbs_cpaAbove(&h->a[r], &h->a[b])) b = r;
    if (b == i) break;
    mbsCpaHeapItem t = h->a[i];
    h->a[i] = h->a[b], h->a[b] = t;
    i = b;
  }
  return top;
}

mbsErr mbs_cpaSchedule(const mbsCpaGraph *g, int P, double *makespan) {
  int n = g->nnode, fixed = 0;
  *makespan = 0;
  MBS_CHECK(P >= 1, MBS_ERR_INPUT, "cpa: processors must be >= 1");
  MBS_CHECK(!g->fine, MBS_ERR_UNSUPPORTED,
            "cpa: no list schedule at flop grain (kernel calls are not split); use op grain");
  for (int v = 0; v < n; v++)
    if (g->proc[v] >= 0) fixed = 1;
  MBS_CHECK(!fixed || P == g->ranks, MBS_ERR_INPUT,
            "cpa: a graph distributed over %d ranks is scheduled on exactly that many processors",
            g->ranks);
  size_t sz = (size_t)(n > 0 ? n : 1), sp = (size_t)P;
  double *bl = malloc(sz * sizeof *bl);
  int *indeg = malloc(sz * sizeof *indeg), *runp = malloc(sz * sizeof *runp);
  char *idle = malloc(sp), *touched = calloc(sp, 1), *instack = malloc(sp);
  int *idles = malloc(sp * sizeof *idles), *tlist = malloc(sp * sizeof *tlist);
  mbsCpaHeap glob = {NULL, 0, 0}, ev = {NULL, 0, 0};
  mbsCpaHeap *own = fixed ? calloc(sp, sizeof *own) : NULL;
  mbsErr e = MBS_OK;
  if (!bl || !indeg || !runp || !idle || !touched || !instack || !idles || !tlist ||
      (fixed && !own)) {
    e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
    goto done;
  }
  // priority: bottom level (longest path from the node to the end, its own cost included)
  for (int v = n - 1; v >= 0; v--) {
    double s = 0;
    for (int k = g->succ_adr[v]; k < g->succ_adr[v + 1]; k++)
      if (bl[g->succ[k]] > s) s = bl[g->succ[k]];
    bl[v] = s + g->cost[v];
  }
  int nidle = 0, nt = 0, ok = 1;
  for (int r = 0; r < P; r++) idle[r] = 1, instack[r] = 1, idles[nidle++] = r;
  double t = 0;
  // release a node whose predecessors have all finished (at time t)
#define MBS_CPA_RELEASE(v)                                                                         \
  do {                                                                                             \
    int v_ = (v), p_ = g->proc[v_];                                                                \
    if (p_ == -2) {                                                                                \
      runp[v_] = -1;                                                                               \
      ok = ok && mbs_cpaPush(&ev, -(t + g->cost[v_]), v_);                                         \
    } else if (p_ >= 0) {                                                                          \
      ok = ok && mbs_cpaPush(&own[p_], bl[v_], v_);                                                \
      if (idle[p_] && !touched[p_]) touched[p_] = 1, tlist[nt++] = p_;                             \
    } else {                                                                                       \
      ok = ok && mbs_cpaPush(&glob, bl[v_], v_);                                                   \
    }                                                                                              \
  } while (0)
  for (int v = 0; v < n; v++) {
    indeg[v] = g->pred_adr[v + 1] - g->pred_adr[v];
    if (!indeg[v]) MBS_CPA_RELEASE(v);
  }
  int done_n = 0;
  for (;;) {
    // dispatch: processors that became idle or got bound work, then free work on idle ones
    for (int i = 0; i < nt; i++) {
      int r = tlist[i];
      touched[r] = 0;
      if (!idle[r]) continue;
      mbsCpaHeap *h = NULL;
      if (own && own[r].n) h = &own[r];
      if (glob.n && (!h || mbs_cpaAbove(&glob.a[0], &h->a[0]))) h = &glob;
      if (!h) continue;
      mbsCpaHeapItem it = mbs_cpaPop(h);
      idle[r] = 0, runp[it.v] = r;
      ok = ok && mbs_cpaPush(&ev, -(t + g->cost[it.v]), it.v);
    }
    nt = 0;
    while (glob.n && nidle > 0) {
      int r = idles[--nidle];
      instack[r] = 0;
      if (!idle[r]) continue;
      mbsCpaHeapItem it = mbs_cpaPop(&glob);
      idle[r] = 0, runp[it.v] = r;
      ok = ok && mbs_cpaPush(&ev, -(t + g->cost[it.v]), it.v);
    }
    if (!ok) {
      e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory scheduling");
      goto done;
    }
    if (!ev.n) break;
    // advance to the next finish time; complete every node finishing then
    t = -ev.a[0].key;
    while (ev.n && -ev.a[0].key <= t) {
      mbsCpaHeapItem it = mbs_cpaPop(&ev);
      int v = it.v, r = runp[v];
      done_n++;
      if (r >= 0) {
        idle[r] = 1;
        if (!instack[r]) instack[r] = 1, idles[nidle++] = r;
        if (!touched[r]) touched[r] = 1, tlist[nt++] = r;
      }
      for (int k = g->succ_adr[v]; k < g->succ_adr[v + 1]; k++) {
        int w = g->succ[k];
        if (--indeg[w] == 0) MBS_CPA_RELEASE(w);
      }
    }
  }
#undef MBS_CPA_RELEASE
  if (done_n != n) {
    e = mbs_errSet(MBS_ERR_INTERNAL, "cpa: schedule finished %d of %d nodes", done_n, n);
    goto done;
  }
  *makespan = t;
done:
  free(bl), free(indeg), free(runp), free(idle), free(touched), free(instack), free(idles);
  free(tlist);
  free(glob.a), free(ev.a);
  if (own)
    for (int r = 0; r < P; r++) free(own[r].a);
  free(own);
  return e;
}

// ---------------------------------------------------------------- Graphviz

mbsErr mbs_cpaWriteDot(const mbsCpaGraph *g, const mbsCpaResult *r, const char *path,
                       int max_nodes) {
  MBS_CHECK(g->nnode <= max_nodes, MBS_ERR_USAGE,
            "cpa --dot: the graph has %d nodes, more than %d; use a smaller model or a coarser "
            "--grain (block, body)",
            g->nnode, max_nodes);
  FILE *f = fopen(path, "w");
  MBS_CHECK(f, MBS_ERR_IO, "cpa --dot %s: cannot open for writing", path);
  char *on = calloc((size_t)(g->nnode > 0 ? g->nnode : 1), 1);
  if (!on) {
    fclose(f);
    return mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  }
  for (int i = 0; r && i < r->path_nodes; i++) on[r->path[i]] = 1;
  fprintf(f, "digraph cpa {\n  rankdir=TB;\n  node [shape=box, fontsize=9];\n");
  for (int v = 0; v < g->nnode; v++) {
    const char *shape = g->proc[v] == -2 ? ", shape=ellipse" : "";
    fprintf(f, "  n%d [label=\"%s", v, mbs_cpaKindName(g->kind[v]));
    if (g->body[v] >= 0) fprintf(f, " b%d", g->body[v]);
    fprintf(f, "\\n%lld fl\"%s%s];\n", g->flops[v], shape, on[v] ? ", color=red, penwidth=2" : "");
  }
  for (int v = 0; v < g->nnode; v++)
    for (int k = g->succ_adr[v]; k < g->succ_adr[v + 1]; k++) {
      int w = g->succ[k];
      fprintf(f, "  n%d -> n%d%s;\n", v, w, on[v] && on[w] ? " [color=red]" : "");
    }
  fprintf(f, "}\n");
  free(on);
  MBS_CHECK(fclose(f) == 0, MBS_ERR_IO, "cpa --dot %s: write failed", path);
  return MBS_OK;
}
