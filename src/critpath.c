/// \file critpath.c
/// The critical-path analyser's core: the builder's node and edge primitives, the kinematics'
/// nodes, mbs_cpaBuild (which calls the graph of the method's solver-table row: cpa_build, or
/// cpa_loops on models with closed loops or spring-dampers), the finalized graph and the names of
/// kinds, classes, phases and grains; the analysis, list schedules and Graphviz are in
/// src/critpath_sched.c. It names no method: each method's graph
/// lives beside its kernel (src/cpa_private.h lists where). Every node cost is a flop count from
/// src/flops.h, the same expression the instrumented kernels add to mbs_flop_count at the
/// matching call site, so T1 equals the counted flops of a real evaluation
/// (mpi-tests/test_cpa.c); docs/cpa.md describes the graph model.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpa_private.h"

static const char *const mbs_cpa_kind_names[MBS_CPA_KIND_COUNT] = {
#define MBS_CPA_KIND_NAME(id, name) name,
    MBS_CPA_KIND_LIST(MBS_CPA_KIND_NAME)
#undef MBS_CPA_KIND_NAME
};

static const char *const mbs_cpa_class_names[MBS_CPA_CLASS_COUNT] = {
#define MBS_CPA_CLASS_NAME(id, name) name,
    MBS_CPA_CLASS_LIST(MBS_CPA_CLASS_NAME)
#undef MBS_CPA_CLASS_NAME
};

const char *mbs_cpaClassName(int cls) {
  return cls >= 0 && cls < MBS_CPA_CLASS_COUNT ? mbs_cpa_class_names[cls] : "?";
}

const char *mbs_cpaKindName(int kind) {
  return kind >= 0 && kind < MBS_CPA_KIND_COUNT ? mbs_cpa_kind_names[kind] : "?";
}

static const char *const mbs_cpa_phase_names[MBS_CPA_PHASE_COUNT] = {
    "kinematics", "factor", "interface", "acceleration", "other"};

const char *mbs_cpaPhaseName(int phase) {
  return phase >= 0 && phase < MBS_CPA_PHASE_COUNT ? mbs_cpa_phase_names[phase] : "?";
}

int mbs_cpaKindPhase(int kind) {
  switch (kind) {
  case MBS_CPA_ABA_A:
  case MBS_CPA_ABA_QDD:
  case MBS_CPA_ABA_F:
  case MBS_CPA_SCH_LAM:
  case MBS_CPA_SCH_SPIKEVEC:
  case MBS_CPA_SCH_ACC:
  case MBS_CPA_SCH_QDD:
  case MBS_CPA_FLEX_ACC:
  case MBS_CPA_FLEX_CFS_END:
  case MBS_CPA_NAT_FWD:
  case MBS_CPA_NAT_QDD:
    return MBS_CPA_PHASE_ACCELERATION;
  case MBS_CPA_FLEX_KIN:
    return MBS_CPA_PHASE_KINEMATICS;
  case MBS_CPA_SCH_MERGE:
  case MBS_CPA_SCH_SOLVE:
  case MBS_CPA_FLEX_SOLVE:
  case MBS_CPA_FLEX_CFS_SOLVE:
    return MBS_CPA_PHASE_INTERFACE;
  default:
    break;
  }
  const char *n = mbs_cpaKindName(kind);
  if (!strncmp(n, "pos.", 4) || !strncmp(n, "vel.", 4) || !strncmp(n, "kin.", 4))
    return MBS_CPA_PHASE_KINEMATICS;
  if (!strncmp(n, "aba.", 4) || !strncmp(n, "schur.", 6) || !strncmp(n, "flex.", 5) ||
      !strncmp(n, "natural.", 8))
    return MBS_CPA_PHASE_FACTOR;
  return MBS_CPA_PHASE_OTHER;
}

static const char *const mbs_cpa_grain_names[] = {"op", "block", "body", "flop"};

const char *mbs_cpaGrainName(int grain) {
  return grain >= 0 && grain <= 3 ? mbs_cpa_grain_names[grain] : "?";
}

int mbs_cpaGrainFromName(const char *name) {
  for (int k = 0; k < 4; k++)
    if (name && !strcmp(name, mbs_cpa_grain_names[k])) return k;
  return -1;
}

void mbs_cpaDefaults(mbsCpaOptions *o) {
  memset(o, 0, sizeof *o);
  o->method = MBS_SOLVER_ABA;
  o->grain = MBS_CPA_GRAIN_OP;
  o->iterations = 10;
  o->criterion = MBS_CRIT_RESIDUAL;
  o->check_every = 1;
  o->flop_time = 1e-9;
  o->latency = 1.5e-6;
  o->bandwidth = 5e9;
  o->loop_rank = o->loop_zero = -1;
}

// ---------------------------------------------------------------- builder

// seconds per flop of kernel class cls
double mbs_cpaFlopTime(const mbsCpaOptions *o, int cls) {
  return o->class_time[cls] > 0 ? o->class_time[cls] : o->flop_time;
}

static int mbs_cpaGrow(void **p, int *cap, int need, size_t sz) {
  (void)cap;
  void *q = realloc(*p, (size_t)need * sz);
  if (!q) return 0;
  *p = q;
  return 1;
}

// a node; body >= 0 binds it to the body's owner rank in distributed graphs; pblk/pbdy are the
// phase ids used to merge nodes at block and body grain (-1: never merged)
int mbs_cpaNode(mbsCpaB *B, int kind, int body, long long flops, int pblk, int pbdy) {
  if (B->err) return -1;
  if (B->n == B->cap) {
    int nc = B->cap ? 2 * B->cap : 1024, ok = 1;
    ok = ok && mbs_cpaGrow((void **)&B->flops, &B->cap, nc, sizeof *B->flops);
    ok = ok && mbs_cpaGrow((void **)&B->cost, &B->cap, nc, sizeof *B->cost);
    ok = ok && mbs_cpaGrow((void **)&B->kind, &B->cap, nc, sizeof *B->kind);
    ok = ok && mbs_cpaGrow((void **)&B->body, &B->cap, nc, sizeof *B->body);
    ok = ok && mbs_cpaGrow((void **)&B->proc, &B->cap, nc, sizeof *B->proc);
    ok = ok && mbs_cpaGrow((void **)&B->pblk, &B->cap, nc, sizeof *B->pblk);
    ok = ok && mbs_cpaGrow((void **)&B->pbdy, &B->cap, nc, sizeof *B->pbdy);
    if (!ok) {
      B->err = 1;
      return -1;
    }
    B->cap = nc;
  }
  int v = B->n++;
  B->flops[v] = flops;
  B->cost[v] = (double)flops * mbs_cpaFlopTime(B->o, B->cls);
  B->class_flops[B->cls] += flops;
  B->kind[v] = kind;
  B->body[v] = body;
  B->proc[v] = (B->o->ranks >= 1 && body >= 0) ? B->owner[body] : -1;
  B->pblk[v] = pblk >= 0 ? pblk + B->phoff : pblk;
  B->pbdy[v] = pbdy >= 0 ? pbdy + B->phoff : pbdy;
  return v;
}

// the rank owning body b in distributed graphs (0 in data-flow graphs, one rank)
int mbs_cpaOwner(const mbsCpaB *B, int b) {
  return B->o->ranks >= 1 ? B->owner[b] : 0;
}

// a data dependency from -> to (ignored if either is absent)
void mbs_cpaDep(mbsCpaB *B, int from, int to) {
  if (B->err || from < 0 || to < 0 || from == to) return;
  if (B->ne == B->ecap) {
    int nc = B->ecap ? 2 * B->ecap : 4096, ok = 1;
    ok = ok && mbs_cpaGrow((void **)&B->esrc, &B->ecap, nc, sizeof *B->esrc);
    ok = ok && mbs_cpaGrow((void **)&B->edst, &B->ecap, nc, sizeof *B->edst);
    if (!ok) {
      B->err = 1;
      return;
    }
    B->ecap = nc;
  }
  B->esrc[B->ne] = from;
  B->edst[B->ne] = to;
  B->ne++;
}

void mbs_cpaKinStage(mbsCpaB *B, mbsCpaKin *K) {
  B->cls = MBS_CPA_CLASS_KIN;
  mbs_cpaKinematics(B, K);
  B->cls = MBS_CPA_CLASS_DYN;
}

void mbs_cpaKinematics(mbsCpaB *B, mbsCpaKin *K) {
  const mbsModel *m = B->m;
  for (int b = 0; b < m->nbody; b++) {
    int t = m->body_jnttype[b], p = m->body_parent[b], nd = m->body_dofnum[b];
    // position: joint transform (X, S), ground pose (a prefix product along the tree)
    K->joint[b] = mbs_cpaNode(B, MBS_CPA_POS_JOINT, b, mbs_flopPosBody(m, b), PH_POS, 0);
    if (p >= 0) {
      K->pose[b] = mbs_cpaNode(B, MBS_CPA_POS_POSE, b, mbs_flopPoseBody(m, b), PH_POS, 0);
      mbs_cpaDep(B, K->joint[b], K->pose[b]);
      mbs_cpaDep(B, K->pose[p], K->pose[b]);
    } else {
      K->pose[b] = K->joint[b];
    }
    // velocity: vJ, v = X v_p + vJ, c, bias force, applied joint forces
    K->vj[b] = mbs_cpaNode(B, MBS_CPA_VEL_JOINT, b, mbs_flopVelJointBody(m, b), PH_VEL, 0);
    mbs_cpaDep(B, K->joint[b], K->vj[b]);
    if (p >= 0) {
      K->v[b] = mbs_cpaNode(B, MBS_CPA_VEL_LINK, b, mbs_flopVelLinkBody(m, b), PH_VEL, 0);
      mbs_cpaDep(B, K->v[p], K->v[b]);
      mbs_cpaDep(B, K->joint[b], K->v[b]);
      mbs_cpaDep(B, K->vj[b], K->v[b]);
    } else {
      K->v[b] = K->vj[b];
    }
    K->c[b] = mbs_cpaNode(B, MBS_CPA_VEL_C, b, mbs_flopVelCBody(m, b), PH_VEL, 0);
    mbs_cpaDep(B, K->v[b], K->c[b]);
    mbs_cpaDep(B, K->vj[b], K->c[b]);
    K->bias[b] = mbs_cpaNode(B, MBS_CPA_VEL_BIAS, b, MBS_FL_VEL_BIAS, PH_VEL, 0);
    mbs_cpaDep(B, K->v[b], K->bias[b]);
    K->force[b] =
        mbs_cpaNode(B, MBS_CPA_VEL_FORCE, b, mbs_flopVelForce(nd, t, B->o->has_tau), PH_VEL, 0);
  }
}

// ---------------------------------------------------------------- finalize

static int mbs_cpaCmpPair(const void *a, const void *b) {
  const long long *x = a, *y = b;
  if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
  if (x[1] != y[1]) return x[1] < y[1] ? -1 : 1;
  return 0;
}

// the engine's decomposition: the one partition module (src/partition.c)
static void mbs_cpaDecompose(const mbsModel *m, int P, int *owner) {
  int n = m->nbody;
  int *start = malloc((size_t)(P + 1) * sizeof *start);
  if (!start || mbs_partitionModel(m, P, start) != MBS_OK) { // fall back to equal counts
    for (int b = 0; b < n; b++) owner[b] = (int)((long long)b * P / n);
    free(start);
    return;
  }
  for (int k = 0; k < P; k++)
    for (int b = start[k]; b < start[k + 1]; b++) owner[b] = k;
  free(start);
}

// every dependency between two ranks becomes a message node (one per source node and target
// rank)
static void mbs_cpaMessages(mbsCpaB *B) {
  int ne = B->ne;
  long long *pr = malloc((size_t)(ne > 0 ? ne : 1) * 3 * sizeof *pr);
  if (!pr) {
    B->err = 1;
    return;
  }
  int nx = 0;
  for (int k = 0; k < ne; k++) {
    int u = B->esrc[k], v = B->edst[k];
    if (B->proc[u] >= 0 && B->proc[v] >= 0 && B->proc[u] != B->proc[v]) {
      pr[3 * nx] = (long long)u * (B->o->ranks + 1) + B->proc[v];
      pr[3 * nx + 1] = k;
      pr[3 * nx + 2] = 0;
      nx++;
    }
  }
  qsort(pr, (size_t)nx, 3 * sizeof *pr, mbs_cpaCmpPair);
  int msg = -1;
  for (int i = 0; i < nx; i++) {
    int k = (int)pr[3 * i + 1], u = B->esrc[k];
    if (i == 0 || pr[3 * i] != pr[3 * (i - 1)]) {
      msg = mbs_cpaNode(B, MBS_CPA_MSG_HALO, -1, 0, -1, -1);
      if (msg < 0) break;
      B->cost[msg] = B->o->latency + MBS_CPA_MSG_BYTES / B->o->bandwidth;
      B->proc[msg] = -2;
      mbs_cpaDep(B, u, msg);
    }
    B->esrc[k] = msg; // the edge now leaves the message
  }
  free(pr);
}

// merge nodes of one (phase, body) at block or body grain; returns the group of every node
static int mbs_cpaGroups(const mbsCpaB *B, int grain, int *grp) {
  long long *key = malloc((size_t)B->n * 2 * sizeof *key);
  if (!key) return -1;
  int nb = B->m->nbody + 1;
  for (int v = 0; v < B->n; v++) {
    int ph = grain == MBS_CPA_GRAIN_BLOCK ? B->pblk[v] : B->pbdy[v];
    key[2 * v] = (ph < 0 || B->body[v] < 0) ? -1 - (long long)v : (long long)ph * nb + B->body[v];
    key[2 * v + 1] = v;
  }
  qsort(key, (size_t)B->n, 2 * sizeof *key, mbs_cpaCmpPair);
  int ng = 0;
  for (int i = 0; i < B->n; i++) {
    if (i > 0 && key[2 * i] != key[2 * (i - 1)]) ng++;
    grp[key[2 * i + 1]] = ng;
  }
  free(key);
  return B->n > 0 ? ng + 1 : 0;
}

static mbsErr mbs_cpaFinalize(mbsCpaB *B, mbsCpaGraph *g) {
  int n = B->n, ng = n;
  int *grp = malloc((size_t)(n > 0 ? n : 1) * sizeof *grp);
  long long *pairs = NULL;
  int *indeg = NULL, *order = NULL, *pos = NULL;
  mbsErr e = MBS_OK;
  if (!grp) return mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  if (B->o->grain == MBS_CPA_GRAIN_OP || B->o->grain == MBS_CPA_GRAIN_FLOP) {
    for (int v = 0; v < n; v++) grp[v] = v;
  } else {
    ng = mbs_cpaGroups(B, B->o->grain, grp);
    if (ng < 0) {
      free(grp);
      return mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
    }
  }
  // merged nodes: sums of flops and cost; kind of the costliest member
  g->nnode = ng;
  size_t sz = (size_t)(ng > 0 ? ng : 1);
  g->flops = calloc(sz, sizeof *g->flops);
  g->cost = calloc(sz, sizeof *g->cost);
  g->span = calloc(sz, sizeof *g->span);
  g->kind = calloc(sz, sizeof *g->kind);
  g->body = calloc(sz, sizeof *g->body);
  g->proc = calloc(sz, sizeof *g->proc);
  double *best = calloc(sz, sizeof *best);
  pairs = malloc((size_t)(B->ne > 0 ? B->ne : 1) * 2 * sizeof *pairs);
  indeg = calloc(sz, sizeof *indeg), order = malloc(sz * sizeof *order);
  pos = malloc(sz * sizeof *pos);
  if (!g->flops || !g->cost || !g->span || !g->kind || !g->body || !g->proc || !best || !pairs ||
      !indeg || !order || !pos) {
    e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
    goto done;
  }
  for (int v = 0; v < ng; v++) best[v] = -1;
  for (int v = 0; v < n; v++) {
    int G = grp[v];
    g->flops[G] += B->flops[v];
    g->cost[G] += B->cost[v];
    if (B->cost[v] > best[G]) {
      best[G] = B->cost[v];
      g->kind[G] = B->kind[v];
      g->body[G] = B->body[v];
      g->proc[G] = B->proc[v];
    }
  }
  // edges between groups, deduplicated
  int ne = 0;
  for (int k = 0; k < B->ne; k++) {
    int a = grp[B->esrc[k]], b = grp[B->edst[k]];
    if (a == b) continue;
    pairs[2 * ne] = a, pairs[2 * ne + 1] = b;
    ne++;
  }
  qsort(pairs, (size_t)ne, 2 * sizeof *pairs, mbs_cpaCmpPair);
  int u = 0;
  for (int k = 0; k < ne; k++)
    if (k == 0 || pairs[2 * k] != pairs[2 * (k - 1)] || pairs[2 * k + 1] != pairs[2 * k - 1])
      pairs[2 * u] = pairs[2 * k], pairs[2 * u + 1] = pairs[2 * k + 1], u++;
  ne = u;
  // topological order (Kahn); a cycle means merged phases that depend on each other
  for (int k = 0; k < ne; k++) indeg[pairs[2 * k + 1]]++;
  int *sadr = calloc(sz + 1, sizeof *sadr);
  if (!sadr) {
    e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
    goto done;
  }
  for (int k = 0; k < ne; k++) sadr[pairs[2 * k] + 1]++;
  for (int v = 0; v < ng; v++) sadr[v + 1] += sadr[v];
  int head = 0, tail = 0;
  for (int v = 0; v < ng; v++)
    if (!indeg[v]) order[tail++] = v;
  while (head < tail) {
    int v = order[head++];
    for (int k = sadr[v]; k < sadr[v + 1]; k++) {
      int w = (int)pairs[2 * k + 1];
      if (--indeg[w] == 0) order[tail++] = w;
    }
  }
  free(sadr);
  if (tail != ng) {
    e = mbs_errSet(MBS_ERR_INTERNAL, "cpa: the %s-grain graph has a cycle",
                   mbs_cpaGrainName(B->o->grain));
    goto done;
  }
  // renumber in topological order
  for (int i = 0; i < ng; i++) pos[order[i]] = i;
  {
    long long *fl = malloc(sz * sizeof *fl);
    double *co = malloc(sz * sizeof *co);
    int *ki = malloc(sz * sizeof *ki), *bo = malloc(sz * sizeof *bo), *pr = malloc(sz * sizeof *pr);
    if (!fl || !co || !ki || !bo || !pr) {
      free(fl), free(co), free(ki), free(bo), free(pr);
      e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
      goto done;
    }
    for (int v = 0; v < ng; v++) {
      int i = pos[v];
      fl[i] = g->flops[v], co[i] = g->cost[v], ki[i] = g->kind[v], bo[i] = g->body[v];
      pr[i] = g->proc[v];
    }
    free(g->flops), free(g->cost), free(g->kind), free(g->body), free(g->proc);
    g->flops = fl, g->cost = co, g->kind = ki, g->body = bo, g->proc = pr;
  }
  // span of a node: its cost; at flop grain a kernel call's W flops as a balanced tree
  g->fine = B->o->grain == MBS_CPA_GRAIN_FLOP;
  for (int v = 0; v < ng; v++) {
    g->span[v] = g->cost[v];
    if (g->fine && g->proc[v] != -2 && g->flops[v] > 0) {
      int d = 1;
      while ((1LL << (d - 1)) < g->flops[v]) d++; // d = 1 + ceil(log2 W)
      if ((double)d < (double)g->flops[v]) g->span[v] = d * (g->cost[v] / (double)g->flops[v]);
    }
  }
  for (int k = 0; k < ne; k++)
    pairs[2 * k] = pos[pairs[2 * k]], pairs[2 * k + 1] = pos[pairs[2 * k + 1]];
  // CSR both ways
  g->nedge = ne;
  g->succ_adr = calloc(sz + 1, sizeof(int)), g->pred_adr = calloc(sz + 1, sizeof(int));
  g->succ = malloc((size_t)(ne > 0 ? ne : 1) * sizeof(int));
  g->pred = malloc((size_t)(ne > 0 ? ne : 1) * sizeof(int));
  if (!g->succ_adr || !g->pred_adr || !g->succ || !g->pred) {
    e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
    goto done;
  }
  for (int k = 0; k < ne; k++) g->succ_adr[pairs[2 * k] + 1]++, g->pred_adr[pairs[2 * k + 1] + 1]++;
  for (int v = 0; v < ng; v++)
    g->succ_adr[v + 1] += g->succ_adr[v], g->pred_adr[v + 1] += g->pred_adr[v];
  for (int v = 0; v < ng; v++) indeg[v] = 0, order[v] = 0;
  for (int k = 0; k < ne; k++) {
    int a = (int)pairs[2 * k], b = (int)pairs[2 * k + 1];
    g->succ[g->succ_adr[a] + indeg[a]++] = b;
    g->pred[g->pred_adr[b] + order[b]++] = a;
  }
done:
  free(grp), free(best), free(pairs), free(indeg), free(order), free(pos);
  return e;
}

int mbs_cpaConvergedOf(int reason) {
  return reason == MBS_REASON_CONVERGED ? 1 : reason == MBS_REASON_DIVERGED_STAGNATED ? 2 : 0;
}

// a row of the solver table that has a critical-path graph (the analyser names no method)
static int mbs_cpaHasGraph(const mbsSolverType *t) {
  return t->cpa_build != NULL;
}

int mbs_cpaIterative(int method) {
  const mbsSolverType *t = mbs_solverFind(method);
  return t && t->iterative && t->cpa_build;
}

int mbs_cpaDistributed(int method) {
  const mbsSolverType *t = mbs_solverCaps(method);
  return t->cpa_build && !t->baseline && t->distributed;
}

mbsErr mbs_cpaBuild(const mbsModel *m, const mbsCpaOptions *o, mbsCpaGraph **out) {
  *out = NULL;
  const mbsSolverType *t = mbs_solverCaps(o->method);
  int flex = m->nflex_g > 0; // the recursive flexible algorithm's graph
  MBS_CHECK(!flex || o->ranks == 0 || !strcmp(mbs_solverName(o->method), "schur") ||
                !strcmp(mbs_solverName(o->method), "direct") ||
                !strcmp(mbs_solverName(o->method), "jcg") ||
                !strcmp(mbs_solverName(o->method), "gs") ||
                !strcmp(mbs_solverName(o->method), "sor") ||
                !strcmp(mbs_solverName(o->method), "jacobi") ||
                !strcmp(mbs_solverName(o->method), "chebyshev"),
            MBS_ERR_UNSUPPORTED,
            "cpa: a model with flexible bodies has the graphs of the recursive algorithm (aba; "
            "over ranks: schur, the distributed elimination) and of the constraint-force "
            "direct, jcg, gs, sor, jacobi and chebyshev methods only");
  if (!t->cpa_build && !flex) {
    char names[256];
    mbs_solverNamesIf(names, sizeof names, mbs_cpaHasGraph); // the table's rows with a graph
    return mbs_errSet(MBS_ERR_UNSUPPORTED, "cpa: no graph for method \"%s\" (available: %s)",
                      mbs_solverName(o->method), names);
  }
  for (int k = 0; o->cg && k < o->cg->n; k++)
    MBS_CHECK(k < MBS_CFS_CG_RESTARTS && o->cg->it[k] >= 1 && o->cg->it[k] <= o->iterations &&
                  o->cg->seg[k] >= 0 && o->cg->seg[k] < MBS_CHEB_SEGS,
              MBS_ERR_INPUT, "cpa: jcg restart %d after iteration %d out of range", k,
              o->cg->it[k]);
  MBS_CHECK(o->spec_iterations >= 0 &&
                o->spec_iterations <= (mbs_solverCaps(o->method)->segments
                                           ? MBS_CHEB_SEGS * MBS_CFS_CHEB_STEPS
                                           : MBS_CFS_SPEC_STEPS),
            MBS_ERR_INPUT, "cpa: spectrum-estimate iterations %d out of range", o->spec_iterations);
  MBS_CHECK(flex || !mbs_solverCaps(o->method)->segments || m->opt.rho > 0 || // (flexible: apart)
                o->spec_iterations <= o->iterations,
            MBS_ERR_INPUT, "cpa: chebyshev: %d estimate iterations exceed the %d in total",
            o->spec_iterations, o->iterations);
  MBS_CHECK(o->grain >= 0 && o->grain <= 3, MBS_ERR_INPUT, "cpa: bad grain %d", o->grain);
  MBS_CHECK(o->iterations >= 0, MBS_ERR_INPUT, "cpa: iterations must be >= 0");
  MBS_CHECK(o->ranks >= 0 && o->ranks <= m->nbody, MBS_ERR_INPUT,
            "cpa: cannot distribute %d bodies over %d ranks", m->nbody, o->ranks);
  MBS_CHECK(o->ranks == 0 || flex || mbs_cpaDistributed(o->method), MBS_ERR_UNSUPPORTED,
            "cpa: the distributed graph exists for the constraint-force methods only; aba and "
            "crba run on one rank");
  MBS_CHECK(o->flop_time > 0 && o->latency >= 0 && o->bandwidth > 0, MBS_ERR_INPUT,
            "cpa: flop_time and bandwidth must be > 0, latency >= 0");
  MBS_CHECK(!(m->nloop || m->nforce) || t->cpa_loops, MBS_ERR_UNSUPPORTED,
            "cpa: --method %s: models with %s have graphs for aba and the constraint-force "
            "methods schur, jcg, jacobi, gs, sor, chebyshev and direct; not yet for %s",
            mbs_solverName(o->method), m->nloop ? "closed loops" : "spring-dampers",
            mbs_solverName(o->method));
  mbsCpaB B;
  memset(&B, 0, sizeof B);
  B.m = m, B.o = o;
  int n = m->nbody;
  size_t nb = (size_t)(n > 0 ? n : 1);
  mbsCpaKin K;
  int *buf = malloc(11 * nb * sizeof(int));
  B.owner = calloc(nb, sizeof(int));
  mbsErr e = MBS_OK;
  mbsCpaGraph *g = calloc(1, sizeof *g);
  if (!buf || !B.owner || !g) {
    free(buf), free(B.owner), free(g);
    return mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  }
  if (o->ranks >= 1) mbs_cpaDecompose(m, o->ranks, B.owner);
  K.joint = buf, K.pose = buf + nb, K.vj = buf + 2 * nb, K.v = buf + 3 * nb, K.c = buf + 4 * nb;
  K.bias = buf + 5 * nb, K.force = buf + 6 * nb, K.scr = buf + 7 * nb;
  // the method's graph (its row): on loop models the loop layer's around its tree solves
  B.cls = MBS_CPA_CLASS_DYN;
  e = flex                    ? mbs_cpaFlexGraph(&B, &K)
      : m->nloop || m->nforce ? t->cpa_loops(&B, &K)
                              : t->cpa_build(&B, &K);
  if (!e && o->ranks >= 1) mbs_cpaMessages(&B);
  if (!e && B.err) e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory building the graph");
  g->nbody = n, g->ranks = o->ranks;
  memcpy(g->class_flops, B.class_flops, sizeof g->class_flops);
  g->iface_rounds = B.iface_rounds;
  if (!e) e = mbs_cpaFinalize(&B, g);
  free(buf), free(B.owner), free(B.flops), free(B.cost), free(B.kind), free(B.body), free(B.proc);
  free(B.pblk), free(B.pbdy), free(B.esrc), free(B.edst);
  if (e) {
    mbs_cpaDestroy(&g);
    return e;
  }
  *out = g;
  return MBS_OK;
}

void mbs_cpaDestroy(mbsCpaGraph **pg) {
  if (!pg || !*pg) return;
  mbsCpaGraph *g = *pg;
  free(g->flops), free(g->cost), free(g->span), free(g->kind), free(g->body), free(g->proc);
  free(g->pred_adr), free(g->pred), free(g->succ_adr), free(g->succ);
  free(g);
  *pg = NULL;
}
