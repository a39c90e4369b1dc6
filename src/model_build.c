/// \file model_build.c
/// Model construction after the bodies: the subset and global names of a local (distributed-
/// memory) build, closed loops and spring-dampers (mbs_modelAddLoop, mbs_modelAddForce),
/// mbs_modelFinalize and the derived totals. The bodies themselves are added in model.c.
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_model.h"
#include "spatial.h"
#include "model_private.h"

int mbs_modelFindGlobal(const mbsModel *m, const char *name) {
  int b = mbs_modelFindBody(m, name);
  if (b >= 0) return m->body_gid ? m->body_gid[b] : b;
  int g = mbs_vnameGid(m, name);
  if (g >= 0) return g;
  for (int k = 0; k < m->nprefix; k++) {
    const struct mbsModelPrefix *p = m->prefix + k;
    size_t l = strlen(p->prefix);
    if (strncmp(name, p->prefix, l) != 0) continue;
    const char *d = name + l;
    if (!*d || *d == '0') continue;
    long v = 0;
    for (; *d >= '0' && *d <= '9' && v <= p->n; d++) v = 10 * v + (*d - '0');
    if (!*d && v >= 1 && v <= p->n)
      return p->base + (int)v - 1 + (p->every > 0 ? ((int)v - 1) / p->every : 0);
  }
  return -1;
}

mbsErr mbs_modelAddPrefix(mbsModel *m, const char *prefix, int base, int n) {
  return mbs_modelAddPrefixEvery(m, prefix, base, n, 0);
}

mbsErr mbs_modelAddPrefixEvery(mbsModel *m, const char *prefix, int base, int n, int every) {
  struct mbsModelPrefix *p = realloc(m->prefix, (size_t)(m->nprefix + 1) * sizeof *p);
  MBS_CHECK(p, MBS_ERR_NOMEM, "out of memory");
  m->prefix = p;
  size_t len = strlen(prefix) + 1;
  MBS_ALLOC(p[m->nprefix].prefix, len);
  memcpy(p[m->nprefix].prefix, prefix, len);
  p[m->nprefix].base = base, p[m->nprefix].n = n, p[m->nprefix].every = every;
  m->nprefix++;
  return MBS_OK;
}

int mbs_modelNextWanted(const mbsModel *m, int g) {
  if (!m->sub) return g;                                           // full and validation builds
  if (m->rec1 > m->rec0 && g >= m->rec0 && g <= m->rec1) return g; // [rec0, rec1] (the link after)
  int best = INT_MAX;
  if (m->rec1 > m->rec0 && g < m->rec0) best = m->rec0;
  int lo = m->sub_at, hi = m->nsub;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (m->sub[mid] < g)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < m->nsub && m->sub[lo] < best) best = m->sub[lo];
  return best;
}

void mbs_modelRecord(mbsModel *m, int g0, int g1) {
  m->rec0 = g0, m->rec1 = g1;
}

int mbs_modelWants(const mbsModel *m, int g0, int g1, int parent) {
  if (!m->sub && !m->names_only) return 1; // full builds want everything
  if (m->names_only && !m->sub) return 1;  // validation builds visit every body
  if (m->rec1 > m->rec0 && parent >= m->rec0 && parent < m->rec1) return 1;
  // a kept body in [g0, g1)?
  int lo = m->sub_at, hi = m->nsub;
  while (lo < hi) { // first kept id >= g0
    int mid = (lo + hi) / 2;
    if (m->sub[mid] < g0)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < m->nsub && m->sub[lo] < g1) return 1;
  return m->rec1 > m->rec0 && g0 < m->rec1 && g1 > m->rec0;
}

void mbs_modelSubset(mbsModel *m, const int *gids, int n, int names_only) {
  m->sub = gids; // NULL only for validation builds
  m->nsub = n, m->sub_at = 0;
  m->names_only = names_only;
  m->local = 1;
}

// ---------------------------------------------------------------- loops in subset builds

void mbs_modelTrackLoops(mbsModel *m, int g0, int g1) {
  m->trk_on = 1, m->trk_g0 = g0, m->trk_g1 = g1;
}

// depth and nearest owned ancestor-or-self of \p count bodies from gid (their parents: \p parent
// for the first, then the body before if \p chain; a skipped subtree otherwise: its depths are
// not known, -1, but none of it is owned, so its nearest owned ancestor is the parent's)
void mbs_modelTrackBodies(mbsModel *m, int gid, int parent, int count, int chain) {
  if (!m->trk_on || m->trk_on < 0) return;
  if (gid + count > m->trk_cap) {
    int cap = m->trk_cap ? m->trk_cap : 1024;
    while (cap < gid + count) cap *= 2;
    int *t = realloc(m->trk, 2 * sizeof(int) * (size_t)cap);
    if (!t) {
      m->trk_on = -1; // out of memory: mbs_modelAddLoop says so
      return;
    }
    m->trk = t, m->trk_cap = cap;
  }
  for (int j = 0; j < count; j++) {
    int g = gid + j, p = j == 0 ? parent : (chain ? g - 1 : parent);
    int dp = p >= 0 ? m->trk[2 * p] : -1, ap = p >= 0 ? m->trk[2 * p + 1] : -1;
    m->trk[2 * g] = j > 0 && !chain ? -1 : (p < 0 ? 0 : (dp < 0 ? -1 : dp + 1));
    m->trk[2 * g + 1] = g >= m->trk_g0 && g < m->trk_g1 ? g : ap;
  }
}

int mbs_modelSkipBodies(mbsModel *m, int type, int count, int chain, int parent, double mass) {
  int first = m->nbody_g, nq = mbs_jntNq(type), nv = mbs_jntNv(type);
  mbs_modelTrackBodies(m, first, parent, count, chain);
  if (!chain || parent != first - 1) m->run_branched = 1;
  if (mbs_modelRun(m, type, count)) m->nrun = -1;       // out of memory: no runs (checked by users)
  if (mbs_modelCutNote(m, first, parent)) m->nrun = -1; // (inside the run: parents >= first)
  mbs_partitionNoteMass(m, first, count, parent, mass, type);
  m->nbody_g += count;
  m->nq_g += count * nq, m->nv_g += count * nv, m->nlam_g += count * (6 - nv);
  return first;
}

int mbs_modelLocal(const mbsModel *m, int gid) {
  int lo = 0, hi = m->nbody - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2, g = m->body_gid[mid];
    if (g == gid) return mid;
    if (g < gid)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}

// ---------------------------------------------------------------- loops and forces

// room for entry n of per-entry arrays: they double when n reaches a power of two (capacity
// 1, 2, 4, ...); *grow tells the caller to realloc to k * cap elements of each array
static int mbs_entryCap(int n, int *grow) {
  *grow = n == 0 || (n & (n - 1)) == 0;
  return n ? 2 * n : 1;
}
static void *mbs_growTo(void *p, int grow, size_t count, size_t sz) {
  return grow ? realloc(p, count * sz) : p;
}

mbsErr mbs_modelAddLoop(mbsModel *m, const mbsLoopSpec *sp) {
  MBS_CHECK(!m->finalized, MBS_ERR_INTERNAL, "model is already finalized");
  int t = sp->type, n = m->nloop;
  MBS_CHECK(sp->name && sp->name[0], MBS_ERR_INPUT, "loop name is empty");
  for (int k = 0; k < n; k++)
    MBS_CHECK(strcmp(m->loop_name[k], sp->name) != 0, MBS_ERR_INPUT, "duplicate loop name \"%s\"",
              sp->name);
  MBS_CHECK(t >= 0 && t < MBS_JNT_COUNT && !mbs_jntIsFree(t), MBS_ERR_INPUT,
            "loop joint type must be revolute, prismatic, cylindrical, universal, spherical or "
            "fixed (a free cut joint constrains nothing)");
  int nb = m->sub ? m->nbody_g : m->nbody; // subset builds: global indices
  MBS_CHECK(sp->body1 >= -1 && sp->body1 < nb && sp->body2 >= -1 && sp->body2 < nb, MBS_ERR_INPUT,
            "loop body index out of range");
  MBS_CHECK(!m->sub || m->trk_on > 0, m->trk_on < 0 ? MBS_ERR_NOMEM : MBS_ERR_INTERNAL, "%s",
            m->trk_on < 0 ? "out of memory (loop bodies)" : "subset build without loops");
  MBS_CHECK(!(sp->body1 < 0 && sp->body2 < 0), MBS_ERR_INPUT,
            "loop body1 and body2 are both the ground (nothing to close)");
  MBS_CHECK(sp->body1 != sp->body2, MBS_ERR_INPUT,
            "loop body1 and body2 are the same body (a cut joint joins two bodies)");
  MBS_CHECK(mbs_finite(sp->frame1, 12) && mbs_finite(sp->frame2, 12), MBS_ERR_INPUT,
            "loop frame is not finite");
  MBS_CHECK(n < MBS_MAX_LOOPS, MBS_ERR_INPUT,
            "more than %d loops (the serial loop solver is dense in the closure equations)",
            MBS_MAX_LOOPS);
  int grow;
  size_t cap = (size_t)mbs_entryCap(n, &grow);
  char **nm = mbs_growTo(m->loop_name, grow, cap, sizeof *nm);
  if (nm) m->loop_name = nm;
  int *ty = mbs_growTo(m->loop_type, grow, cap, sizeof *ty);
  if (ty) m->loop_type = ty;
  int *bo = mbs_growTo(m->loop_body, grow, 2 * cap, sizeof *bo);
  if (bo) m->loop_body = bo;
  int *la = mbs_growTo(m->loop_lamadr, grow, cap, sizeof *la);
  if (la) m->loop_lamadr = la;
  int *ln = mbs_growTo(m->loop_lamnum, grow, cap, sizeof *ln);
  if (ln) m->loop_lamnum = ln;
  mbsReal *fr = mbs_growTo(m->loop_frame, grow, 24 * cap, sizeof *fr);
  if (fr) m->loop_frame = fr;
  int *gb = mbs_growTo(m->loop_gbody, grow, 2 * cap, sizeof *gb);
  if (gb) m->loop_gbody = gb;
  int *dp = mbs_growTo(m->loop_depth, grow, 2 * cap, sizeof *dp);
  if (dp) m->loop_depth = dp;
  int *an = mbs_growTo(m->loop_anc, grow, 2 * cap, sizeof *an);
  if (an) m->loop_anc = an;
  MBS_CHECK(nm && ty && bo && la && ln && fr && gb && dp && an, MBS_ERR_NOMEM,
            "out of memory (loops)");
  for (int side = 0; side < 2; side++) {
    int g = side ? sp->body2 : sp->body1, d = -1, anc = g, loc = g;
    if (g >= 0 && m->sub) { // the tracked depth and owned ancestor; local indices
      d = m->trk[2 * g];
      MBS_CHECK(d >= 0, MBS_ERR_UNSUPPORTED,
                "loop \"%s\": body %d is in a subtree this rank skipped (a distributed-memory "
                "model holds loops only between bodies of chains and explicit bodies)",
                sp->name, g);
      anc = m->trk[2 * g + 1] >= 0 ? mbs_modelLocal(m, m->trk[2 * g + 1]) : -1;
      loc = mbs_modelLocal(m, g);
      if (loc < 0) loc = MBS_LOOP_REMOTE;
    } else if (g >= 0) {
      for (int c = m->body_parent[g]; c >= 0; c = m->body_parent[c]) d++;
      d++;
    }
    m->loop_gbody[2 * n + side] = g, m->loop_depth[2 * n + side] = d;
    m->loop_anc[2 * n + side] = anc, m->loop_body[2 * n + side] = loc;
  }
  size_t len = strlen(sp->name) + 1;
  MBS_ALLOC(m->loop_name[n], len);
  memcpy(m->loop_name[n], sp->name, len);
  m->loop_type[n] = t;
  m->loop_lamnum[n] = mbs_loopNumEq(t);
  m->loop_lamadr[n] = 0; // set by mbs_modelFinalize (after the tree's nlam)
  memcpy(m->loop_frame + 24 * n, sp->frame1, 12 * sizeof(mbsReal));
  memcpy(m->loop_frame + 24 * n + 12, sp->frame2, 12 * sizeof(mbsReal));
  m->nloop = n + 1;
  m->nlam_loop += m->loop_lamnum[n];
  return MBS_OK;
}

mbsErr mbs_modelAddForce(mbsModel *m, const mbsForceSpec *sp) {
  MBS_CHECK(!m->finalized, MBS_ERR_INTERNAL, "model is already finalized");
  int n = m->nforce, nb = m->nbody;
  MBS_CHECK(sp->body1 >= -1 && sp->body1 < nb && sp->body2 >= -1 && sp->body2 < nb, MBS_ERR_INPUT,
            "force body index out of range");
  MBS_CHECK(!(sp->body1 < 0 && sp->body2 < 0), MBS_ERR_INPUT,
            "force body1 and body2 are both the ground (it would act on nothing)");
  MBS_CHECK(sp->body1 != sp->body2, MBS_ERR_INPUT,
            "force body1 and body2 are the same body (an internal force does nothing)");
  MBS_CHECK(mbs_finite(sp->point1, 3) && mbs_finite(sp->point2, 3), MBS_ERR_INPUT,
            "force point is not finite");
  MBS_CHECK(isfinite(sp->stiffness) && sp->stiffness >= 0, MBS_ERR_INPUT,
            "force stiffness must be >= 0 (got %g)", sp->stiffness);
  MBS_CHECK(isfinite(sp->rest_length) && sp->rest_length >= 0, MBS_ERR_INPUT,
            "force rest_length must be >= 0 (got %g)", sp->rest_length);
  MBS_CHECK(isfinite(sp->damping) && sp->damping >= 0, MBS_ERR_INPUT,
            "force damping must be >= 0 (got %g)", sp->damping);
  MBS_CHECK(n < MBS_MAX_FORCES, MBS_ERR_INPUT, "more than %d spring-dampers", MBS_MAX_FORCES);
  int grow;
  size_t cap = (size_t)mbs_entryCap(n, &grow);
  char **nm = mbs_growTo(m->force_name, grow, cap, sizeof *nm);
  if (nm) m->force_name = nm;
  int *bo = mbs_growTo(m->force_body, grow, 2 * cap, sizeof *bo);
  if (bo) m->force_body = bo;
  mbsReal *pt = mbs_growTo(m->force_point, grow, 6 * cap, sizeof *pt);
  if (pt) m->force_point = pt;
  mbsReal *pr = mbs_growTo(m->force_prm, grow, 3 * cap, sizeof *pr);
  if (pr) m->force_prm = pr;
  MBS_CHECK(nm && bo && pt && pr, MBS_ERR_NOMEM, "out of memory (forces)");
  const char *name = sp->name && sp->name[0] ? sp->name : "force";
  size_t len = strlen(name) + 1;
  MBS_ALLOC(m->force_name[n], len);
  memcpy(m->force_name[n], name, len);
  m->force_body[2 * n] = sp->body1, m->force_body[2 * n + 1] = sp->body2;
  memcpy(m->force_point + 6 * n, sp->point1, 3 * sizeof(mbsReal));
  memcpy(m->force_point + 6 * n + 3, sp->point2, 3 * sizeof(mbsReal));
  m->force_prm[3 * n] = sp->stiffness;
  m->force_prm[3 * n + 1] = sp->rest_length;
  m->force_prm[3 * n + 2] = sp->damping;
  m->nforce = n + 1;
  return MBS_OK;
}

mbsErr mbs_modelFinalize(mbsModel *m) {
  MBS_CHECK(m->nbody_g > 0, MBS_ERR_INPUT, "the model has no bodies");
  free(m->trk), m->trk = NULL, m->trk_cap = 0; // the loops have what they need from it
  if (m->own1 < 0) m->own0 = 0, m->own1 = m->nbody;
  if (m->nbody == 0) { // a validation build keeps nothing
    m->finalized = 1;
    return MBS_OK;
  }
  MBS_CHECK(mbs_finite(m->gravity, 3), MBS_ERR_INPUT, "gravity is not finite");
  int n = m->nbody;
  MBS_ALLOC(m->body_childadr, n);
  MBS_ALLOC(m->body_childnum, n);
  MBS_ALLOC(m->child_list, n);
  MBS_ALLOC(m->body_depth, n);
  MBS_ALLOC(m->body_subtreeend, n);
  MBS_ALLOC(m->body_sinert, 10 * (size_t)n);
  MBS_ALLOC(m->dof_parent, m->nv > 0 ? m->nv : 1);
  MBS_ALLOC(m->jnt_axisk, n);

  // children lists (counting sort by parent)
  for (int b = 0; b < n; b++)
    if (m->body_parent[b] >= 0) m->body_childnum[m->body_parent[b]]++;
  for (int b = 0, adr = 0; b < n; b++) {
    m->body_childadr[b] = adr;
    adr += m->body_childnum[b];
  }
  int *fill;
  MBS_ALLOC(fill, n);
  for (int b = 0; b < n; b++) {
    int p = m->body_parent[b];
    if (p >= 0) m->child_list[m->body_childadr[p] + fill[p]++] = b;
  }
  free(fill);

  // depth, subtree extents (valid as contiguous ranges only for DFS-ordered models)
  m->maxdepth = 0;
  for (int b = 0; b < n; b++) {
    int p = m->body_parent[b];
    m->body_depth[b] = p < 0 ? 1 : m->body_depth[p] + 1;
    if (m->body_depth[b] > m->maxdepth) m->maxdepth = m->body_depth[b];
    m->body_subtreeend[b] = b + 1;
  }
  for (int b = n - 1; b >= 0; b--) {
    int p = m->body_parent[b];
    if (p >= 0 && m->body_subtreeend[b] > m->body_subtreeend[p])
      m->body_subtreeend[p] = m->body_subtreeend[b];
  }

  // dof tree: previous dof on the path to the ground
  for (int b = 0; b < n; b++) {
    int prev = -1;
    for (int p = m->body_parent[b]; p >= 0; p = m->body_parent[p])
      if (m->body_dofnum[p] > 0) {
        prev = m->body_dofadr[p] + m->body_dofnum[p] - 1;
        break;
      }
    for (int k = 0; k < m->body_dofnum[b]; k++) {
      int d = m->body_dofadr[b] + k;
      m->dof_parent[d] = k == 0 ? prev : d - 1;
    }
  }

  // joint axes along a coordinate axis (exactly: the unit axis has two zero components)
  for (int b = 0; b < n; b++) {
    const mbsReal *a = m->jnt_axis + 3 * b;
    m->jnt_axisk[b] = -1;
    for (int k = 0; k < 3; k++)
      if (a[(k + 1) % 3] == 0 && a[(k + 2) % 3] == 0 && fabs(a[k]) == 1) m->jnt_axisk[b] = k;
  }

  // loop constraint components after the tree's
  for (int k = 0, adr = m->nlam; k < m->nloop; k++) {
    m->loop_lamadr[k] = adr;
    adr += m->loop_lamnum[k];
  }

  // spatial inertia at the body origin: Io = Ic + m (|c|^2 1 - c c^T)
  for (int b = 0; b < n; b++) {
    mbsReal *si = m->body_sinert + 10 * b, mass = m->body_mass[b];
    const mbsReal *c = m->body_com + 3 * b, *Ic = m->body_inertia + 6 * b;
    mbsReal cc = mbsu_dot3(c, c);
    si[0] = mass;
    si[1] = mass * c[0];
    si[2] = mass * c[1];
    si[3] = mass * c[2];
    si[4] = Ic[0] + mass * (cc - c[0] * c[0]);
    si[5] = Ic[1] + mass * (cc - c[1] * c[1]);
    si[6] = Ic[2] + mass * (cc - c[2] * c[2]);
    si[7] = Ic[3] - mass * c[0] * c[1];
    si[8] = Ic[4] - mass * c[0] * c[2];
    si[9] = Ic[5] - mass * c[1] * c[2];
  }
  m->finalized = 1;
  return MBS_OK;
}

int mbs_modelBranched(const mbsModel *m) {
  for (int b = 0; b < m->nbody; b++)
    if (m->body_childnum[b] > 1) return 1;
  return 0;
}

mbsReal mbs_modelTotalMass(const mbsModel *m) {
  mbsReal t = 0;
  for (int b = 0; b < m->nbody; b++) t += m->body_mass[b];
  return t;
}
