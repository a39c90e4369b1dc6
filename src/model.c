/// \file model.c
/// Model construction and validation: defaults, the per-body arrays, the checks of a body and
/// mbs_modelAddBody, the name tables, mbs_modelDestroy. The local builds' subsets, loops,
/// spring-dampers and mbs_modelFinalize are in model_build.c.
#include <limits.h>
#include <math.h>
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_model.h"
#include "mbspar/mbs_flex.h"
#include "mbspar/mbs_solver.h"
#include "mbspar/mbs_joint.h"
#include "spatial.h"
#include "model_private.h"

char *mbs_coordName(const mbsModel *m, const char *prefix, int b, int k, int rate, char *buf,
                    size_t n) {
  const char *c = mbs_jntCoordName(m->body_jnttype[b], k, rate);
  if (c)
    snprintf(buf, n, "%s_%s_%s", prefix, m->body_name[b], c);
  else
    snprintf(buf, n, "%s_%s", prefix, m->body_name[b]);
  return buf;
}

void mbs_bodySpecDefault(mbsBodySpec *spec) {
  memset(spec, 0, sizeof *spec);
  spec->parent = -1;
  spec->jnttype = MBS_JNT_REVOLUTE;
  spec->axis[2] = 1;
  spec->axis2[1] = 1;
  spec->mass = 1;
  spec->framequat[0] = 1;
}

const char *mbs_nameProblem(const char *name) {
  for (const unsigned char *p = (const unsigned char *)name; *p; p++)
    if (*p < 0x20 || *p == 0x7f || *p == ',') return *p == ',' ? "a comma" : "a control character";
  return NULL;
}

void mbs_optionDefault(mbsOption *opt) {
  memset(opt, 0, sizeof *opt);
  opt->solver = MBS_SOLVER_SCHUR;
  opt->tol = 1e-12;
  opt->max_iter = 100000;
  opt->check_every = 1;
  opt->criterion = MBS_CRIT_RESIDUAL;
  opt->omega = 1.5;
  opt->rho = 0;
  opt->warm_start = MBS_WARM_CUBIC;
  opt->integrator = MBS_INT_RK4;
  opt->dt = 1e-3;
  opt->t_end = 1;
  opt->int_tol = 1e-6;
  opt->proj_tol = 1e-10;
  opt->rank_tol = 1e-9;
  opt->closure_tol = 1e-10;
  opt->projection = 1;
}

// grow every per-body array to capacity n
static mbsErr mbs_modelGrow(mbsModel *m, int n) {
#define MBS_GROW(arr, k)                                                                           \
  do {                                                                                             \
    void *p_ = realloc(m->arr, (size_t)n * (k) * sizeof(*m->arr));                                 \
    if (!p_) return mbs_errSet(MBS_ERR_NOMEM, "out of memory growing the model to %d bodies", n);  \
    m->arr = p_;                                                                                   \
  } while (0)
  MBS_GROW(body_parent, 1);
  MBS_GROW(body_jnttype, 1);
  MBS_GROW(body_qadr, 1);
  MBS_GROW(body_qnum, 1);
  MBS_GROW(body_dofadr, 1);
  MBS_GROW(body_dofnum, 1);
  MBS_GROW(body_lamadr, 1);
  MBS_GROW(body_lamnum, 1);
  MBS_GROW(body_name, 1);
  MBS_GROW(body_mass, 1);
  MBS_GROW(body_com, 3);
  MBS_GROW(body_inertia, 6);
  MBS_GROW(jnt_origin, 3);
  MBS_GROW(jnt_axis, 3);
  MBS_GROW(jnt_axis2, 3);
  MBS_GROW(body_framequat, 4);
  MBS_GROW(body_tip, 3);
  // per-dof and per-coordinate arrays are sized by 6 and 7 per body (upper bounds)
  MBS_GROW(dof_stiffness, 6);
  MBS_GROW(dof_springref, 6);
  MBS_GROW(dof_damping, 6);
  MBS_GROW(dof_force, 6);
  MBS_GROW(dof_body, 6);
  MBS_GROW(body_gid, 1);
  MBS_GROW(body_gqadr, 1);
  MBS_GROW(body_gdofadr, 1);
  MBS_GROW(body_glamadr, 1);
  MBS_GROW(qd0, 6);
  MBS_GROW(q0, 7);
#undef MBS_GROW
  m->cap = n;
  return MBS_OK;
}

mbsErr mbs_modelCreate(mbsModel **out, int capacity) {
  mbsModel *m;
  *out = NULL;
  MBS_ALLOC(m, 1);
  m->gravity[2] = -9.81;
  m->own1 = -1; // all bodies unless the caller says otherwise
  mbs_optionDefault(&m->opt);
  mbsErr e = mbs_modelGrow(m, capacity > 0 ? capacity : 16);
  if (e) {
    mbs_modelDestroy(&m);
    return e;
  }
  *out = m;
  return MBS_OK;
}

// numeric extremes of the model parameters (docs/hardening.md "Numeric extremes")
#define MBS_MASS_MIN    1e-50
#define MBS_MASS_MAX    1e50
#define MBS_INERTIA_MAX 1e60
#define MBS_LENGTH_MAX  1e9

int mbs_finite(const mbsReal *x, int n) {
  for (int i = 0; i < n; i++)
    if (!isfinite(x[i])) return 0;
  return 1;
}

// eigenvalues of a symmetric 3x3 matrix (ascending), closed form
static void mbs_symEig3(const mbsReal *I6, mbsReal *ev) {
  // scaled by the largest entry: the squares below overflow beyond 1e154 otherwise
  mbsReal s = 0;
  for (int k = 0; k < 6; k++) s = fmax(s, fabs(I6[k]));
  if (!(s > 0)) s = 1;
  mbsReal a = I6[0] / s, b = I6[1] / s, c = I6[2] / s, d = I6[3] / s, e = I6[4] / s, f = I6[5] / s;
  mbsReal p1 = d * d + e * e + f * f;
  mbsReal q = (a + b + c) / 3;
  if (p1 == 0) {
    ev[0] = a, ev[1] = b, ev[2] = c;
  } else {
    mbsReal p2 = (a - q) * (a - q) + (b - q) * (b - q) + (c - q) * (c - q) + 2 * p1;
    mbsReal p = sqrt(p2 / 6);
    mbsReal B[9] = {(a - q) / p, d / p, e / p, d / p,      (b - q) / p,
                    f / p,       e / p, f / p, (c - q) / p};
    mbsReal r = (B[0] * (B[4] * B[8] - B[5] * B[7]) - B[1] * (B[3] * B[8] - B[5] * B[6]) +
                 B[2] * (B[3] * B[7] - B[4] * B[6])) /
                2;
    mbsReal phi = r <= -1 ? M_PI / 3 : (r >= 1 ? 0 : acos(r) / 3);
    ev[0] = q + 2 * p * cos(phi);
    ev[2] = q + 2 * p * cos(phi + 2 * M_PI / 3);
    ev[1] = 3 * q - ev[0] - ev[2];
  }
  // sort ascending
  for (int i = 0; i < 2; i++)
    for (int j = i + 1; j < 3; j++)
      if (ev[j] < ev[i]) {
        mbsReal t = ev[i];
        ev[i] = ev[j];
        ev[j] = t;
      }
  for (int k = 0; k < 3; k++) ev[k] *= s;
}

static mbsErr mbs_normalize(mbsReal *a, const char *what) {
  mbsReal n = sqrt(mbsu_dot3(a, a));
  MBS_CHECK(n > 1e-12, MBS_ERR_INPUT, "%s has zero length", what);
  a[0] /= n, a[1] /= n, a[2] /= n;
  return MBS_OK;
}

static unsigned mbs_strHash(const char *s) {
  unsigned h = 2166136261u; // FNV-1a
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

// (re)build the name hash with room for at least 2*n entries
static mbsErr mbs_nameTableRebuild(mbsModel *m, int n) {
  int cap = 64;
  while (cap < 2 * n) cap *= 2;
  free(m->name_table);
  m->name_table = malloc((size_t)cap * sizeof(int));
  if (!m->name_table) return mbs_errSet(MBS_ERR_NOMEM, "out of memory (name table)");
  for (int k = 0; k < cap; k++) m->name_table[k] = -1;
  m->name_tablecap = cap;
  for (int b = 0; b < m->nbody; b++) {
    unsigned k = mbs_strHash(m->body_name[b]) & (unsigned)(cap - 1);
    while (m->name_table[k] >= 0) k = (k + 1) & (unsigned)(cap - 1);
    m->name_table[k] = b;
  }
  return MBS_OK;
}

// names of the bodies a validation build does not keep (duplicate detection only)
// the global index of a remembered name, -1 if none
int mbs_vnameGid(const mbsModel *m, const char *name) {
  if (!m->vname_table) return -1;
  unsigned mask = (unsigned)(m->vname_tablecap - 1);
  for (unsigned k = mbs_strHash(name) & mask; m->vname_table[k] >= 0; k = (k + 1) & mask)
    if (strcmp(m->vname[m->vname_table[k]], name) == 0) return m->vname_gid[m->vname_table[k]];
  return -1;
}
static mbsErr mbs_vnameAdd(mbsModel *m, const char *name, int gid) {
  if (m->nvname == m->vnamecap) {
    int nc = m->vnamecap ? 2 * m->vnamecap : 1024;
    char **p = realloc(m->vname, (size_t)nc * sizeof *p);
    MBS_CHECK(p, MBS_ERR_NOMEM, "out of memory (body names)");
    m->vname = p;
    int *g = realloc(m->vname_gid, (size_t)nc * sizeof *g);
    MBS_CHECK(g, MBS_ERR_NOMEM, "out of memory (body names)");
    m->vname_gid = g, m->vnamecap = nc;
  }
  m->vname_gid[m->nvname] = gid;
  size_t len = strlen(name) + 1;
  MBS_ALLOC(m->vname[m->nvname], len);
  memcpy(m->vname[m->nvname], name, len);
  m->nvname++;
  if (2 * m->nvname > m->vname_tablecap) { // rebuild at most half full
    int cap = m->vname_tablecap ? 2 * m->vname_tablecap : 2048;
    while (cap < 2 * m->nvname) cap *= 2;
    free(m->vname_table);
    MBS_ALLOC(m->vname_table, cap);
    m->vname_tablecap = cap;
    for (int k = 0; k < cap; k++) m->vname_table[k] = -1;
    for (int i = 0; i < m->nvname; i++) {
      unsigned k = mbs_strHash(m->vname[i]) & (unsigned)(cap - 1);
      while (m->vname_table[k] >= 0) k = (k + 1) & (unsigned)(cap - 1);
      m->vname_table[k] = i;
    }
  } else {
    unsigned mask = (unsigned)(m->vname_tablecap - 1), k = mbs_strHash(name) & mask;
    while (m->vname_table[k] >= 0) k = (k + 1) & mask;
    m->vname_table[k] = m->nvname - 1;
  }
  return MBS_OK;
}

static mbsErr mbs_intPush(int **a, int *n, int *cap, int v) {
  if (*n == *cap) {
    int nc = *cap ? 2 * *cap : 64;
    int *p = realloc(*a, (size_t)nc * sizeof *p);
    MBS_CHECK(p, MBS_ERR_NOMEM, "out of memory (model structure)");
    *a = p, *cap = nc;
  }
  (*a)[(*n)++] = v;
  return MBS_OK;
}

// the run-length list of joint types in global order (partitioning without the bodies)
mbsErr mbs_modelRun(mbsModel *m, int type, int count) {
  if (m->nrun < 0) return MBS_OK;
  if (m->nrun > 0 && m->run_type[m->nrun - 1] == type) {
    m->run_len[m->nrun - 1] += count;
    return MBS_OK;
  }
  int cap = m->runcap;
  MBS_CALL(mbs_intPush(&m->run_type, &m->nrun, &m->runcap, type));
  m->nrun--, m->runcap = cap;
  MBS_CALL(mbs_intPush(&m->run_len, &m->nrun, &m->runcap, count));
  return MBS_OK;
}

// clean cuts (mbs_partitionRuns, the rule of mbs_partitionCutDrop; amortised O(1) per body)
mbsErr mbs_modelCutNote(mbsModel *m, int gid, int parent) {
  if (m->nrun_cut < 0) return MBS_OK;
  if (parent >= 0) {
    m->nrun_cut = mbs_partitionCutDrop(m->run_cut, m->nrun_cut, parent);
    return MBS_OK;
  }
  return mbs_intPush(&m->run_cut, &m->nrun_cut, &m->run_cutcap, gid);
}

mbsErr mbs_modelAddBody(mbsModel *m, const mbsBodySpec *spec, int *id) {
  MBS_CHECK(!m->finalized, MBS_ERR_INTERNAL, "model is already finalized");
  int b = m->nbody, t = spec->jnttype, gid = m->nbody_g;
  MBS_CHECK(t >= 0 && t < MBS_JNT_COUNT, MBS_ERR_INPUT, "unknown joint type %d", t);
  MBS_CHECK(spec->parent >= -1 && spec->parent < (m->sub || m->names_only ? gid : b), MBS_ERR_INPUT,
            "parent index %d is not an earlier body", spec->parent);
  int nq = mbs_jntNq(t), nv = mbs_jntNv(t);

  // finiteness of every real
  MBS_CHECK(mbs_finite(spec->origin, 3), MBS_ERR_INPUT, "joint origin is not finite");
  MBS_CHECK(mbs_finite(spec->axis, 3), MBS_ERR_INPUT, "joint axis is not finite");
  MBS_CHECK(mbs_finite(spec->axis2, 3), MBS_ERR_INPUT, "joint axis2 is not finite");
  MBS_CHECK(isfinite(spec->mass), MBS_ERR_INPUT, "mass is not finite");
  MBS_CHECK(mbs_finite(spec->com, 3), MBS_ERR_INPUT, "com is not finite");
  MBS_CHECK(mbs_finite(spec->inertia, 6), MBS_ERR_INPUT, "inertia is not finite");
  MBS_CHECK(mbs_finite(spec->q0, nq), MBS_ERR_INPUT, "joint q0 is not finite");
  mbsReal fq = 0;
  for (int k = 0; k < 4; k++) fq += spec->framequat[k] * spec->framequat[k];
  MBS_CHECK(isfinite(fq) && (fq == 0 || fabs(fq - 1) <= 1e-6), MBS_ERR_INPUT,
            "framequat is not a unit quaternion"); // all zero: identity
  MBS_CHECK(mbs_finite(spec->qd0, nv), MBS_ERR_INPUT, "joint qd0 is not finite");
  MBS_CHECK(mbs_finite(spec->stiffness, nv) && mbs_finite(spec->springref, nv) &&
                mbs_finite(spec->damping, nv) && mbs_finite(spec->force, nv),
            MBS_ERR_INPUT, "joint stiffness/springref/damping/force is not finite");

  // mass and inertia
  MBS_CHECK(spec->mass > 0, MBS_ERR_INPUT, "mass must be positive (got %g)", spec->mass);
  // numeric extremes (docs/hardening.md): the solvers multiply and divide masses, inertias and
  // lengths of different bodies; within these bounds their products stay inside double precision
  MBS_CHECK(spec->mass >= MBS_MASS_MIN && spec->mass <= MBS_MASS_MAX, MBS_ERR_INPUT,
            "mass %g kg is outside [%g, %g]: masses that far apart overflow the solvers' products "
            "of masses and inverse masses",
            spec->mass, MBS_MASS_MIN, MBS_MASS_MAX);
  for (int k = 0; k < 6; k++)
    MBS_CHECK(fabs(spec->inertia[k]) <= MBS_INERTIA_MAX, MBS_ERR_INPUT,
              "inertia entry %d = %g kg m^2 is beyond %g (overflows the solvers' products)", k + 1,
              spec->inertia[k], MBS_INERTIA_MAX);
  for (int k = 0; k < 3; k++) {
    MBS_CHECK(fabs(spec->com[k]) <= MBS_LENGTH_MAX, MBS_ERR_INPUT,
              "com component %g m is beyond %g m", spec->com[k], MBS_LENGTH_MAX);
    MBS_CHECK(fabs(spec->origin[k]) <= MBS_LENGTH_MAX, MBS_ERR_INPUT,
              "joint origin component %g m is beyond %g m", spec->origin[k], MBS_LENGTH_MAX);
  }
  mbsReal ev[3];
  mbs_symEig3(spec->inertia, ev);
  mbsReal scale = fmax(fabs(ev[0]), fmax(fabs(ev[1]), fabs(ev[2]))); // no overflow, unlike a sum
  // positive semidefinite (a thin rod: no moment about its own axis) is accepted where the
  // joint's motion still meets inertia, below; negative or non-finite moments are refused
  MBS_CHECK(ev[0] >= -1e-12 * scale && ev[2] > 0, MBS_ERR_INPUT,
            "inertia is not positive semidefinite (principal moments %g %g %g)", ev[0], ev[1],
            ev[2]);
  MBS_CHECK(ev[0] / 2 + ev[1] / 2 >= ev[2] / 2 * (1 - 1e-9), MBS_ERR_INPUT,
            "inertia violates the triangle inequality (principal moments %g + %g < %g)", ev[0],
            ev[1], ev[2]);
  int semidef = !(ev[0] > 1e-12 * scale);
  // what the solvers factor: the spatial inertia at the joint frame, Io = Ic + m (|c|^2 1 - c c^T)
  // with the coupling m c (as mbs_modelFinalize builds it). Refused here with its cause, so that
  // `check` and every verb agree (the solvers' own test has no location).
  {
    const mbsReal *c = spec->com, *Ic = spec->inertia, mass = spec->mass;
    mbsReal cc = mbsu_dot3(c, c), si[10], I6[36];
    si[0] = mass, si[1] = mass * c[0], si[2] = mass * c[1], si[3] = mass * c[2];
    si[4] = Ic[0] + mass * (cc - c[0] * c[0]);
    si[5] = Ic[1] + mass * (cc - c[1] * c[1]);
    si[6] = Ic[2] + mass * (cc - c[2] * c[2]);
    si[7] = Ic[3] - mass * c[0] * c[1];
    si[8] = Ic[4] - mass * c[0] * c[2];
    si[9] = Ic[5] - mass * c[1] * c[2];
    MBS_CHECK(mbs_finite(si, 10), MBS_ERR_INPUT,
              "mass %g with com offset %g m overflows double precision (mass * |com|^2 = %g, "
              "inertia up to %g)",
              mass, hypot(hypot(c[0], c[1]), c[2]), mass * cc, scale);
    mbsu_rbiFull(si, I6);
    if (semidef) {
      // the articulated system stays definite if the body's inertia is definite along its own
      // joint's motion S (at q0): D = S^T Io S, the pivot ABA divides by when the body has no
      // children; children only add to it (docs/model.md "Inertia")
      MBS_CHECK(!mbs_jntIsFree(t), MBS_ERR_INPUT,
                "the free joint's motion has no inertia: a free body needs a positive definite "
                "inertia (principal moments %g %g %g)",
                ev[0], ev[1], ev[2]);
      mbsReal R[9], r[3], S[36], D[36];
      mbs_jntType(t)->pose(spec->origin, spec->axis, spec->axis2, spec->q0, R, r, S);
      for (int i = 0; i < nv; i++)
        for (int j = 0; j < nv; j++) {
          mbsReal IS[6];
          mbsu_mul6(I6, S + 6 * j, IS);
          D[nv * i + j] = mbsu_dot6(S + 6 * i, IS);
        }
      mbsReal srot = si[4] + si[5] + si[6]; // trace of the rotational block at the joint
      for (int i = 0; i < nv; i++) {        // Cholesky with a relative pivot bound
        const mbsReal *Si = S + 6 * i;
        mbsReal tol = 1e-12 * (mbsu_dot3(Si, Si) * srot + mbsu_dot3(Si + 3, Si + 3) * mass);
        mbsReal d = D[nv * i + i];
        for (int k = 0; k < i; k++) d -= D[nv * i + k] * D[nv * i + k];
        MBS_CHECK(d > tol, MBS_ERR_INPUT,
                  "the %s joint's motion has no inertia: it turns or moves the body only where "
                  "the body's inertia is zero (principal moments %g %g %g about the com at %g %g "
                  "%g m)",
                  mbs_jntName(t), ev[0], ev[1], ev[2], c[0], c[1], c[2]);
        d = sqrt(d);
        D[nv * i + i] = d;
        for (int j = i + 1; j < nv; j++) {
          mbsReal v = D[nv * j + i];
          for (int k = 0; k < i; k++) v -= D[nv * j + k] * D[nv * i + k];
          D[nv * j + i] = v / d;
        }
      }
      if (!m->nsemidef_g)
        snprintf(m->semidef_name, sizeof m->semidef_name, "%s", spec->name ? spec->name : "?");
      m->nsemidef_g++;
    } else
      MBS_CHECK(mbsu_cholFactor(I6, 6), MBS_ERR_INPUT,
                "inertia is numerically singular at the joint frame: the principal moments about "
                "the com (%g %g %g) are too small next to mass * |com|^2 = %g (ratio %.1e; double "
                "precision needs more than about 1e-13)",
                ev[0], ev[1], ev[2], mass * cc, mass * cc > 0 ? ev[0] / (mass * cc) : 0.0);
  }

  // axes
  mbsReal axis[3] = {spec->axis[0], spec->axis[1], spec->axis[2]};
  mbsReal axis2[3] = {spec->axis2[0], spec->axis2[1], spec->axis2[2]};
  if (mbs_jntHasAxis(t)) MBS_CALL(mbs_normalize(axis, "joint axis"));
  if (mbs_jntHasAxis2(t)) {
    MBS_CALL(mbs_normalize(axis2, "joint axis2"));
    mbsReal c[3];
    mbsu_cross3(axis, axis2, c);
    MBS_CHECK(sqrt(mbsu_dot3(c, c)) > 1e-6, MBS_ERR_INPUT,
              "universal joint axis and axis2 are parallel");
  }

  // quaternions
  if (mbs_jntQuatAdr(t) >= 0) {
    const mbsReal *qq = spec->q0 + mbs_jntQuatAdr(t);
    mbsReal n = sqrt(qq[0] * qq[0] + qq[1] * qq[1] + qq[2] * qq[2] + qq[3] * qq[3]);
    MBS_CHECK(fabs(n - 1) <= 1e-6, MBS_ERR_INPUT,
              "joint q0 quaternion is not a unit quaternion (norm %.9g)", n);
    for (int k = 0; k < nv; k++)
      MBS_CHECK(spec->stiffness[k] == 0, MBS_ERR_INPUT,
                "joint stiffness is not supported for %s joints", mbs_jntName(t));
  }
  for (int k = 0; k < nv; k++) {
    MBS_CHECK(spec->stiffness[k] >= 0, MBS_ERR_INPUT, "joint stiffness must be >= 0");
    MBS_CHECK(spec->damping[k] >= 0, MBS_ERR_INPUT, "joint damping must be >= 0");
  }

  // names
  MBS_CHECK(spec->name && spec->name[0], MBS_ERR_INPUT, "body name is empty");
  MBS_CHECK(spec->any_name ||
                (strcmp(spec->name, "ground") != 0 && strcmp(spec->name, "world") != 0),
            MBS_ERR_INPUT, "body name \"%s\" is reserved", spec->name);
  MBS_CHECK(mbs_modelFindGlobal(m, spec->name) < 0, MBS_ERR_INPUT, "duplicate body name \"%s\"",
            spec->name);

  // subset builds keep only the wanted bodies (global order)
  int keep = 1;
  if (m->sub || m->names_only) {
    while (m->sub_at < m->nsub && m->sub[m->sub_at] < gid) m->sub_at++;
    keep = m->sub_at < m->nsub && m->sub[m->sub_at] == gid;
  }
  if (m->sub || m->names_only) {
    mbs_modelTrackBodies(m, gid, spec->parent, 1, 1); // loops in subset builds
    MBS_CALL(mbs_modelRun(m, t, 1));
    MBS_CALL(mbs_modelCutNote(m, gid, spec->parent));
    mbs_partitionNoteMass(m, gid, 1, spec->parent, spec->mass, t);
  }
  if (spec->parent != gid - 1) m->run_branched = 1;
  if (m->rec1 > m->rec0) { // structure pass: remote parents and remote children of [rec0, rec1)
    int p = spec->parent, in = gid >= m->rec0 && gid < m->rec1;
    if (in && p >= 0 && p < m->rec0)
      MBS_CALL(mbs_intPush(&m->rec_par, &m->nrec_par, &m->rec_parcap, p));
    if (!in && p >= m->rec0 && p < m->rec1)
      MBS_CALL(mbs_intPush(&m->rec_child, &m->nrec_child, &m->rec_childcap, gid));
  }
  if (!keep) {
    // names of explicit bodies are kept; generated ones are known by their generator's prefix
    if (spec->keep_name) MBS_CALL(mbs_vnameAdd(m, spec->name, gid));
    m->nbody_g++, m->nq_g += nq, m->nv_g += nv, m->nlam_g += 6 - nv;
    if (id) *id = gid;
    return MBS_OK;
  }
  int parent = spec->parent;
  if (m->sub && parent >= 0) parent = mbs_modelLocal(m, parent); // -1: a remote parent

  if (b == m->cap) MBS_CALL(mbs_modelGrow(m, 2 * m->cap));
  size_t len = strlen(spec->name) + 1;
  MBS_ALLOC(m->body_name[b], len);
  memcpy(m->body_name[b], spec->name, len);

  m->body_parent[b] = parent;
  m->body_gid[b] = gid;
  m->body_gqadr[b] = m->nq_g;
  m->body_gdofadr[b] = m->nv_g;
  m->body_glamadr[b] = m->nlam_g;
  m->nbody_g++, m->nq_g += nq, m->nv_g += nv, m->nlam_g += 6 - nv;
  m->body_jnttype[b] = t;
  m->body_qadr[b] = m->nq;
  m->body_qnum[b] = nq;
  m->body_dofadr[b] = m->nv;
  m->body_dofnum[b] = nv;
  m->body_lamadr[b] = m->nlam;
  m->body_lamnum[b] = 6 - nv;
  m->body_mass[b] = spec->mass;
  memcpy(m->body_com + 3 * b, spec->com, 3 * sizeof(mbsReal));
  memcpy(m->body_inertia + 6 * b, spec->inertia, 6 * sizeof(mbsReal));
  memcpy(m->jnt_origin + 3 * b, spec->origin, 3 * sizeof(mbsReal));
  memcpy(m->jnt_axis + 3 * b, axis, 3 * sizeof(mbsReal));
  memcpy(m->jnt_axis2 + 3 * b, axis2, 3 * sizeof(mbsReal));
  memcpy(m->body_tip + 3 * b, spec->tip, 3 * sizeof(mbsReal));
  for (int k = 0; k < 4; k++)
    m->body_framequat[4 * b + k] = fq == 0 ? (k == 0) : spec->framequat[k] / sqrt(fq);
  for (int k = 0; k < nv; k++) {
    int d = m->nv + k;
    m->dof_stiffness[d] = spec->stiffness[k];
    m->dof_springref[d] = spec->springref[k];
    m->dof_damping[d] = spec->damping[k];
    m->dof_force[d] = spec->force[k];
    m->dof_body[d] = b;
    m->qd0[d] = spec->qd0[k];
  }
  for (int k = 0; k < nq; k++) m->q0[m->nq + k] = spec->q0[k];
  if (mbs_jntQuatAdr(t) >= 0) {
    // store the quaternion exactly normalised
    mbsReal *qq = m->q0 + m->nq + mbs_jntQuatAdr(t);
    mbsReal n = sqrt(qq[0] * qq[0] + qq[1] * qq[1] + qq[2] * qq[2] + qq[3] * qq[3]);
    for (int k = 0; k < 4; k++) qq[k] /= n;
  }
  m->nq += nq;
  m->nv += nv;
  m->nlam += 6 - nv;
  m->nbody++;
  // keep the name hash at most half full
  if (2 * m->nbody > m->name_tablecap) {
    MBS_CALL(mbs_nameTableRebuild(m, 2 * m->nbody));
  } else {
    unsigned mask = (unsigned)(m->name_tablecap - 1), k = mbs_strHash(spec->name) & mask;
    while (m->name_table[k] >= 0) k = (k + 1) & mask;
    m->name_table[k] = b;
  }
  if (id) *id = m->sub ? gid : b;
  return MBS_OK;
}

int mbs_modelFindBody(const mbsModel *m, const char *name) {
  if (!m->name_table) return -1;
  unsigned mask = (unsigned)(m->name_tablecap - 1);
  for (unsigned k = mbs_strHash(name) & mask; m->name_table[k] >= 0; k = (k + 1) & mask)
    if (strcmp(m->body_name[m->name_table[k]], name) == 0) return m->name_table[k];
  return -1;
}

void mbs_modelDestroy(mbsModel **pm) {
  if (!pm || !*pm) return;
  mbsModel *m = *pm;
  if (m->body_name)
    for (int b = 0; b < m->nbody; b++) free(m->body_name[b]);
  for (int i = 0; i < m->nvname; i++) free(m->vname[i]);
  free(m->vname), free(m->vname_table), free(m->vname_gid);
  for (int k = 0; k < m->nprefix; k++) free(m->prefix[k].prefix);
  free(m->prefix), free(m->rec_par), free(m->rec_child), free(m->run_type), free(m->run_len),
      free(m->run_cut);
  free(m->run_mfirst), free(m->run_mass), free(m->run_light);
  free(m->part_start);
  for (int k = 0; k < m->nloop; k++) free(m->loop_name[k]);
  free(m->loop_name), free(m->loop_type), free(m->loop_body), free(m->loop_lamadr);
  free(m->loop_lamnum), free(m->loop_frame), free(m->loop_asm.redundant), free(m->loop_asm.skip);
  free(m->loop_gbody), free(m->loop_depth), free(m->loop_anc), free(m->trk);
  free(m->loop_asm.vdep), free(m->loop_asm.vind), free(m->loop_asm.vmap);
  free(m->body_kind);
  for (int k = 0; k < m->nforce; k++) free(m->force_name[k]);
  free(m->force_name), free(m->force_body), free(m->force_point), free(m->force_prm);
  free(m->body_gid), free(m->body_gqadr), free(m->body_gdofadr), free(m->body_glamadr);
  free(m->body_tip);
  mbs_flexSetFree(m->flex);
  void *arrs[] = {
      m->body_parent,   m->body_jnttype,   m->body_qadr,       m->body_qnum,     m->body_dofadr,
      m->body_dofnum,   m->body_lamadr,    m->body_lamnum,     m->body_childadr, m->body_childnum,
      m->child_list,    m->body_depth,     m->body_subtreeend, m->body_name,     m->body_mass,
      m->body_com,      m->body_inertia,   m->body_sinert,     m->jnt_origin,    m->jnt_axis,
      m->jnt_axis2,     m->body_framequat, m->jnt_axisk,       m->dof_body,      m->dof_parent,
      m->dof_stiffness, m->dof_springref,  m->dof_damping,     m->dof_force,     m->q0,
      m->qd0,           m->name_table};
  for (size_t k = 0; k < sizeof arrs / sizeof arrs[0]; k++) free(arrs[k]);
  free(m);
  *pm = NULL;
}
