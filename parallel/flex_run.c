/// \file flex_run.c
/// `mbspar accel` and `mbspar run` on models with flexible bodies (issue 34; docs/flexible.md 6):
/// the serial oracle (src/flex_oracle.c) as the method, at one rank. The state is
/// x = [q (nq); eta (ne); qd (nv); etad (ne)] with each flexible body's modal coordinates in
/// mbsModel.flex order; integrators euler, rk4 (fixed step integrator.dt) and dp5 (adaptive,
/// integrator.tol, step control of its own). Outputs in the run directory: the trajectory
/// (parallel/flex_out.c: trajectory.csv, or trajectory.h5 and trajectory.xmf), energy.csv (t,
/// kinetic, potential, elastic, total), checkpoint.bin (every output.checkpoint_every steps and at
/// the end; --restart continues bitwise) and run.json. `static` and the routing: flex_verbs.c.
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"
#include "flex_par.h"
#include "flex_run.h"
#include "sim.h"
#include "mbspar/mbs_flex.h"
#include "mbspar/mbs_flexmodes.h"
#include "mbspar/mbs_joint.h"
#include "mbspar/mbs_model.h"
#include "mbspar/mbs_report.h"
#include "mbspar/mbs_solver.h"
#include "mbspar/mbs_timer.h"

#define MBSP_FLEX_MAGIC "MBSFLEX1"

/// Above this many generalized coordinates (nv + the modal ones) `accel` and an undriven `run`
/// evaluate on the recursive O(n) algorithm (src/flex_aba.c, docs/flexible.md 10) instead of
/// the dense oracle (O(N^2) memory, O(N^3) per evaluation): 1000 coordinates is a 8 MB mass
/// matrix and about 0.1 s per dense evaluation.
#define MBSP_FLEX_DENSE_MAX 1000

// the method's accelerations, energies, node poses and modal columns
static mbsErr mbsp_flexAccel(const mbspFlexRun *R, const double *q, const double *y,
                             const double *eta, double *ydd) {
  if (R->par) return mbsp_flexParAccel(R->par, q, y, eta, ydd);
  if (R->fcp) return mbsp_flexCfsParAccel(R->fcp, q, y, eta, ydd);
  if (R->cfs) {
    int it;
    return mbsp_flexCfsSolve(R->cfscomm, R->cfs, R->cfsm, R->m->opt.tol, q, y, eta, ydd, &it);
  }
  return R->o ? mbs_flexOracleAccel(R->o, q, y, eta, ydd) : mbs_flexAbaAccel(R->a, q, y, eta, ydd);
}
mbsErr mbsp_flexNodePose(const mbspFlexRun *R, const double *x, int k, int n, double *p,
                         double *Rn) {
  const double *q = x, *eta = x + R->nq, *y = x + R->nq + R->ne;
  return R->o ? mbs_flexOracleNodePose(R->o, q, y, eta, k, n, p, Rn)
              : mbs_flexAbaNodePose(R->a ? R->a : mbsp_flexParAba(R->par), q, y, eta, k, n, p, Rn);
}
mbsErr mbsp_flexBodyPoses(const mbspFlexRun *R, const double *x, double *Rw, double *pw) {
  const double *q = x, *eta = x + R->nq, *y = x + R->nq + R->ne;
  return R->o ? mbs_flexOracleBodyPoses(R->o, q, y, eta, Rw, pw)
              : mbs_flexAbaBodyPoses(R->a ? R->a : mbsp_flexParAba(R->par), q, y, eta, Rw, pw);
}
static int mbsp_flexCol(const mbspFlexRun *R, int k) {
  int c = R->nv;
  for (int j = 0; j < k; j++) c += R->m->flex->b[j].modal.m;
  return c;
}
// solver.method = schur on a flexible model: the ranges over the ranks (flex_par.h)
int mbsp_flexPart(const mbsConfig *cfg, const mbsModel *m) {
  // explicit, or auto's choice (parallel/solver_auto.c; verbs without auto keep its placeholder)
  return (!cfg->sauto.on || cfg->sauto.decided) && !strcmp(mbs_solverName(m->opt.solver), "schur");
}

static const char *mbsp_flexMethod(const mbspFlexRun *R) {
  return R->par ? "flex_part" : R->cfs || R->fcp ? "flex_cfs" : R->o ? "flex_oracle" : "flex_aba";
}

// x' = f(x): q' from qd (quaternions: q' = q (x) (0, w) / 2, w in the body frame), eta' = etad,
// [qd; etad]' from the oracle
static mbsErr mbsp_flexRhs(mbspFlexRun *R, double t, const double *x, double *f) {
  const mbsModel *m = R->m;
  int nq = R->nq, nv = R->nv, ne = R->ne;
  if (R->dr.k) { // driven joints on their profiles at the stage time t
    memcpy(R->xd, x, sizeof(double) * (size_t)R->nx);
    mbsp_flexDriveState(&R->dr, R->cfg, t, R->xd, R->xd + nq + ne);
    x = R->xd;
  }
  const double *q = x, *eta = x + nq, *y = x + nq + ne;
  for (int b = 0; b < m->nbody; b++) {
    int t0 = m->body_jnttype[b], qa = m->body_qadr[b], da = m->body_dofadr[b];
    if (mbs_jntHasQuat(t0)) {
      int qq = mbs_jntQuatAdr(t0);
      for (int k = 0; k < qq; k++) f[qa + k] = y[da + k];
      const double *u = q + qa + qq, *w = y + da + qq;
      double *o = f + qa + qq;
      o[0] = -0.5 * (u[1] * w[0] + u[2] * w[1] + u[3] * w[2]);
      o[1] = 0.5 * (u[0] * w[0] + u[2] * w[2] - u[3] * w[1]);
      o[2] = 0.5 * (u[0] * w[1] + u[3] * w[0] - u[1] * w[2]);
      o[3] = 0.5 * (u[0] * w[2] + u[1] * w[1] - u[2] * w[0]);
    } else {
      for (int k = 0; k < m->body_dofnum[b]; k++) f[qa + k] = y[da + k];
    }
  }
  memcpy(f + nq, y + nv, sizeof(double) * (size_t)ne);
  if (R->dr.k) { // the prescribed accelerations, the driving forces and their power W'
    MBS_CALL(mbsp_flexDriveAccel(&R->dr, R->cfg, R->o, t, q, y, eta, f + nq + ne, f + R->nx - 1));
  } else {
    MBS_CALL(mbsp_flexAccel(R, q, y, eta, f + nq + ne));
  }
  R->evals++;
  for (int i = 0; i < nv + ne; i++)
    if (!isfinite(f[nq + ne + i]))
      return mbs_errSet(MBS_ERR_NUMERIC,
                        "run: the accelerations are not finite at t = %.9g s (integrator.dt = %g "
                        "is probably above the stability limit; try a smaller dt or dp5)",
                        R->t, m->opt.dt);
  return MBS_OK;
}

static void mbsp_flexNormalize(const mbsModel *m, double *x) {
  for (int b = 0; b < m->nbody; b++) {
    int t0 = m->body_jnttype[b];
    if (!mbs_jntHasQuat(t0)) continue;
    double *u = x + m->body_qadr[b] + mbs_jntQuatAdr(t0);
    double n = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2] + u[3] * u[3]);
    if (n > 0)
      for (int k = 0; k < 4; k++) u[k] /= n;
  }
}

// kinetic, potential (gravity, joint springs) and elastic energy of state x
static mbsErr mbsp_flexEnergy(mbspFlexRun *R, const double *x, double *kin, double *pot,
                              double *ela) {
  const mbsModel *m = R->m;
  int nq = R->nq, ne = R->ne;
  if (R->par)
    MBS_CALL(mbsp_flexParEnergy(R->par, x, x + nq + ne, x + nq, kin, pot));
  else if (R->o)
    MBS_CALL(mbs_flexOracleEnergy(R->o, x, x + nq + ne, x + nq, kin, pot));
  else
    MBS_CALL(mbs_flexAbaEnergy(R->a, x, x + nq + ne, x + nq, kin, pot));
  double el = 0;
  for (int k = 0; k < m->flex->n; k++) {
    const mbsFlexModal *md = &m->flex->b[k].modal;
    const double *et = x + nq + mbsp_flexCol(R, k) - R->nv;
    for (int i = 0; i < md->m; i++)
      for (int j = 0; j < md->m; j++) el += 0.5 * et[i] * md->K[(size_t)i * md->m + j] * et[j];
  }
  *pot -= el, *ela = el;
  return MBS_OK;
}

// an energy.csv row's values: kinetic, potential, elastic, total and with drives the work W,
// total - W and the driving forces at state x (one more evaluation)
static mbsErr mbsp_flexEnergyRow(mbspFlexRun *R, const double *x, double kin, double pot,
                                 double ela, double *ev) {
  ev[0] = kin, ev[1] = pot, ev[2] = ela, ev[3] = kin + pot + ela;
  if (!R->dr.k) return MBS_OK;
  double W = x[R->nx - 1], P;
  int nq = R->nq, ne = R->ne;
  ev[4] = W, ev[5] = ev[3] - W;
  MBS_CALL(mbsp_flexDriveAccel(&R->dr, R->cfg, R->o, R->t, x, x + nq + ne, x + nq, R->ydd, &P));
  for (int k = 0; k < R->dr.k; k++) ev[6 + k] = R->dr.tau[k];
  return MBS_OK;
}

// one fixed step (euler, rk4) from x to R->xn
mbsErr mbsp_flexFixed(mbspFlexRun *R, int method, const double *x, double h) {
  int n = R->nx;
  MBS_CALL(mbsp_flexRhs(R, R->t, x, R->k[0]));
  if (method == MBS_INT_EULER) {
    for (int i = 0; i < n; i++) R->xn[i] = x[i] + h * R->k[0][i];
    return MBS_OK;
  }
  static const double c[3] = {0.5, 0.5, 1};
  for (int s = 1; s < 4; s++) {
    for (int i = 0; i < n; i++) R->xs[i] = x[i] + c[s - 1] * h * R->k[s - 1][i];
    MBS_CALL(mbsp_flexRhs(R, R->t + c[s - 1] * h, R->xs, R->k[s]));
  }
  for (int i = 0; i < n; i++)
    R->xn[i] = x[i] + h / 6 * (R->k[0][i] + 2 * R->k[1][i] + 2 * R->k[2][i] + R->k[3][i]);
  return MBS_OK;
}

// one Dormand-Prince 5(4) attempt from x with step h: R->xn (5th order) and the scaled error norm
static mbsErr mbsp_flexDp5(mbspFlexRun *R, const double *x, double h, double tol, double *enorm) {
  const double(*a)[6] = mbs_dp5A, *e = mbs_dp5E; // src/integrator.c
  int n = R->nx;
  MBS_CALL(mbsp_flexRhs(R, R->t, x, R->k[0]));
  for (int s = 1; s < 7; s++) {
    double cs = 0; // the stage's time: c_s = the row sum of a
    for (int j = 0; j < s; j++) cs += a[s][j];
    for (int i = 0; i < n; i++) {
      double acc = 0;
      for (int j = 0; j < s; j++) acc += a[s][j] * R->k[j][i];
      R->xs[i] = x[i] + h * acc;
    }
    MBS_CALL(mbsp_flexRhs(R, R->t + cs * h, R->xs, R->k[s]));
  }
  memcpy(R->xn, R->xs, sizeof(double) * (size_t)n); // stage 7 is at the 5th-order solution
  double sum = 0;
  for (int i = 0; i < n; i++) {
    double ei = 0;
    for (int s = 0; s < 7; s++) ei += e[s] * R->k[s][i];
    double sc = tol + tol * fmax(fabs(x[i]), fabs(R->xn[i]));
    sum += (h * ei / sc) * (h * ei / sc);
  }
  *enorm = sqrt(sum / n);
  return MBS_OK;
}

static uint64_t mbsp_flexFnv(const unsigned char *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

// the model's fingerprint in a checkpoint: sizes, joint types, masses and every flexible body's
// reduced M and K, and which have stiffening off (a checkpoint of another model of the same size
// is refused)
static uint64_t mbsp_flexFingerprint(const mbsModel *m) {
  int64_t sz[3] = {m->nq, m->nv, m->nbody};
  uint64_t h = mbsp_flexFnv((const unsigned char *)sz, sizeof sz);
  h ^= mbsp_flexFnv((const unsigned char *)m->body_jnttype, sizeof(int) * (size_t)m->nbody) * 31;
  h ^= mbsp_flexFnv((const unsigned char *)m->body_mass, sizeof(mbsReal) * (size_t)m->nbody) * 37;
  for (int k = 0; m->flex && k < m->flex->n; k++) {
    const mbsFlexModal *md = &m->flex->b[k].modal;
    size_t n2 = sizeof(mbsReal) * (size_t)md->m * (size_t)md->m;
    h ^= mbsp_flexFnv((const unsigned char *)md->M, n2) * (41 + 2 * (uint64_t)k);
    h ^= mbsp_flexFnv((const unsigned char *)md->K, n2) * (43 + 2 * (uint64_t)k);
    if (!m->flex->b[k].stiffening) h ^= 0x9e3779b97f4a7c15ull * (47 + 2 * (uint64_t)k);
  }
  return h;
}

// checkpoint: magic, nx, step, t, h, fingerprint, x, FNV-1a of everything before it
static mbsErr mbsp_flexCkptWrite(const char *dir, const mbspFlexRun *R, const double *x) {
  char p[4200], tmp[4210];
  snprintf(p, sizeof p, "%s/checkpoint.bin", dir);
  snprintf(tmp, sizeof tmp, "%s.tmp", p);
  size_t n = 48 + sizeof(double) * (size_t)R->nx;
  unsigned char *b = malloc(n + 8);
  if (!b) return mbs_errSet(MBS_ERR_NOMEM, "out of memory (checkpoint)");
  int64_t nx = R->nx, st = R->steps;
  uint64_t fp = mbsp_flexFingerprint(R->m);
  memcpy(b, MBSP_FLEX_MAGIC, 8);
  memcpy(b + 8, &nx, 8), memcpy(b + 16, &st, 8), memcpy(b + 24, &R->t, 8), memcpy(b + 32, &R->h, 8);
  memcpy(b + 40, &fp, 8);
  memcpy(b + 48, x, sizeof(double) * (size_t)R->nx);
  uint64_t c = mbsp_flexFnv(b, n);
  memcpy(b + n, &c, 8);
  FILE *f = fopen(tmp, "wb");
  int ok = f && fwrite(b, 1, n + 8, f) == n + 8;
  if (f && fclose(f)) ok = 0;
  free(b);
  if (!ok || rename(tmp, p))
    return mbs_errSet(MBS_ERR_IO, "%s: cannot write: %s", p, strerror(errno));
  return MBS_OK;
}

static mbsErr mbsp_flexCkptRead(const char *path, mbspFlexRun *R, double *x) {
  FILE *f = fopen(path, "rb");
  if (!f) return mbs_errSet(MBS_ERR_IO, "--restart %s: cannot open: %s", path, strerror(errno));
  size_t n = 48 + sizeof(double) * (size_t)R->nx;
  unsigned char *b = malloc(n + 9);
  if (!b) {
    fclose(f);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (checkpoint)");
  }
  size_t got = fread(b, 1, n + 9, f);
  fclose(f);
  int64_t nx = 0, st = 0;
  uint64_t c = 0, fp = 0;
  if (got == n + 8)
    memcpy(&nx, b + 8, 8), memcpy(&st, b + 16, 8), memcpy(&fp, b + 40, 8), memcpy(&c, b + n, 8);
  int bad = got != n + 8 || memcmp(b, MBSP_FLEX_MAGIC, 8) || nx != R->nx ||
            c != mbsp_flexFnv(b, n) || st < 0 || fp != mbsp_flexFingerprint(R->m);
  if (!bad) {
    memcpy(&R->t, b + 24, 8), memcpy(&R->h, b + 32, 8);
    memcpy(x, b + 48, sizeof(double) * (size_t)R->nx);
    R->steps = st;
    for (int i = 0; i < R->nx; i++) bad |= !isfinite(x[i]);
    bad |= !isfinite(R->t) || !(R->h > 0);
  }
  free(b);
  if (bad)
    return mbs_errSet(MBS_ERR_INPUT,
                      "--restart %s: not a checkpoint of this flexible model (size, model "
                      "fingerprint, magic or checksum differ)",
                      path);
  return MBS_OK;
}

static void mbsp_flexCsvRow(FILE *f, double t, const double *v, int n) {
  fprintf(f, "%.17g", t);
  for (int i = 0; i < n; i++) fprintf(f, ",%.17g", v[i]);
  fputc('\n', f);
}

// the constraint-force method of m->opt at one rank (docs/flexible.md 12), or -1
int mbsp_flexCfsMethod(const mbsConfig *cfg, const mbsModel *m) {
  for (int k = 0; !cfg->sauto.on && k < MBS_FCFS_NMETHOD; k++)
    if (!strcmp(mbs_solverName(m->opt.solver), mbs_flexCfsName(k))) return k;
  return -1;
}

// the dense oracle, the recursive algorithm when \p recursive (or with the constraint-force
// method cfsm >= 0), or the ranges over the ranks par
static mbsErr mbsp_flexCreate(const mbsModel *m, mbspFlexRun *R, int recursive, mbspFlexPar *par,
                              int cfsm, mbspFlexCfsPar *fcp) {
  memset(R, 0, sizeof *R);
  R->m = m, R->par = par, R->cfsm = cfsm, R->fcp = fcp;
  if (cfsm >= 0 && !par && !fcp) MBS_CALL(mbs_flexCfsCreate(m, &R->cfs));
  if ((recursive || cfsm >= 0) && !par)
    MBS_CALL(mbs_flexAbaCreate(m, &R->a));
  else if (!par)
    MBS_CALL(mbs_flexOracleCreate(m, &R->o));
  if (m->nloop && !R->o) MBS_CALL(mbs_flexOracleCreate(m, &R->lo)); // the loops' projection
  R->nq = m->nq, R->nv = m->nv;
  R->ne = (R->o ? mbs_flexOracleSize(R->o) : mbs_flexAbaSize(R->a ? R->a : mbsp_flexParAba(par))) -
          m->nv;
  R->nx = R->nq + 2 * R->ne + R->nv;
  size_t n = (size_t)R->nx + 2; // + the drives' work (mbsp_flexVerb)
  for (int s = 0; s < 7; s++) MBS_ALLOC(R->k[s], n);
  MBS_ALLOC(R->xs, n);
  MBS_ALLOC(R->xn, n);
  MBS_ALLOC(R->err, n);
  MBS_ALLOC(R->xd, n);
  return MBS_OK;
}

static void mbsp_flexFree(mbspFlexRun *R) {
  mbs_flexOracleDestroy(&R->o);
  mbs_flexOracleDestroy(&R->lo);
  mbs_flexAbaDestroy(&R->a);
  mbs_flexCfsDestroy(&R->cfs);
  for (int s = 0; s < 7; s++) free(R->k[s]);
  free(R->xs), free(R->xn), free(R->err), free(R->xd);
  mbsp_flexDriveFree(&R->dr);
}

// the initial state: q0, qd0, eta = etad = 0
void mbsp_flexInitial(const mbspFlexRun *R, double *x) {
  memset(x, 0, sizeof(double) * (size_t)R->nx);
  memcpy(x, R->m->q0, sizeof(double) * (size_t)R->nq);
  memcpy(x + R->nq + R->ne, R->m->qd0, sizeof(double) * (size_t)R->nv);
}

// ---------------------------------------------------------------- accel

typedef struct {
  mbspFlexRun *R;
  double time_per_eval;
  const double *x;
} mbspFlexAccelOut;

// solver.method = auto chose it: the rule (docs/model.md "Choosing the method")
void mbsp_flexAutoJson(mbsJson *j, const mbspFlexRun *R) {
  const mbsSolverAuto *sa = R->cfg ? &R->cfg->sauto : NULL;
  mbs_jsonBool(j, "auto", sa && sa->decided);
  if (sa && sa->decided) {
    mbs_jsonString(j, "auto_rule", sa->rule);
    mbs_jsonBool(j, "auto_idle_ranks", sa->idle);
  }
}

// solver.method = schur routed to the ranges over the ranks: what ran
static void mbsp_flexParJson(mbsJson *j, const mbspFlexRun *R) {
  if (!R->par) return;
  int ranks, ncut, nif;
  long ev, unit;
  mbsp_flexParInfo(R->par, &ranks, &ncut, &nif, &ev, &unit);
  mbs_jsonString(j, "requested", R->cfg && R->cfg->sauto.decided ? "auto" : "schur");
  mbs_jsonInt(j, "parts", ranks);
  mbs_jsonInt(j, "cut_joints", ncut);
  mbs_jsonInt(j, "interface_unknowns", nif);
}

static void mbsp_flexAccelJson(mbsJson *j, const void *ctx) {
  const mbspFlexAccelOut *a = ctx;
  mbspFlexRun *R = a->R;
  mbs_jsonBeginObject(j, "solver");
  mbs_jsonString(j, "method", mbsp_flexMethod(R));
  mbsp_flexAutoJson(j, R);
  mbsp_flexParJson(j, R);
  mbs_jsonEndObject(j);
  mbs_jsonNumber(j, "time_per_eval_s", a->time_per_eval);
  mbs_jsonNumberArray(j, "qdd", R->ydd, R->nv);
  mbs_jsonNumberArray(j, "etadd", R->ydd + R->nv, R->ne);
  mbsp_flexNodesJson(j, R, a->x);
}

// ---------------------------------------------------------------- run

typedef struct {
  mbspFlexRun *R;
  const double *x;
  const char *integrator;
  double E_final;
  const char *stop; ///< "t_end", or the signal that stopped the run
} mbspFlexRunOut;

static void mbsp_flexRunJson(mbsJson *j, const void *ctx) {
  const mbspFlexRunOut *r = ctx;
  mbspFlexRun *R = r->R;
  mbs_jsonBeginObject(j, "solver");
  mbs_jsonString(j, "method", mbsp_flexMethod(R));
  mbsp_flexAutoJson(j, R);
  mbsp_flexParJson(j, R);
  if (R->dr.k) { // driven joints: as the rigid runs report them (parallel/sim_drive.c)
    mbs_jsonBeginArray(j, "drives");
    for (int k = 0; k < R->dr.k; k++) {
      mbs_jsonBeginObject(j, NULL);
      mbs_jsonString(j, "body", R->cfg->drives[k].body);
      mbs_jsonString(j, "profile", mbs_drive_profile_names[R->cfg->drives[k].profile]);
      mbs_jsonInt(j, "dof", R->dr.dof[k]);
      mbs_jsonNumber(j, "force_last", R->dr.tau[k]);
      mbs_jsonNumber(j, "force_max_abs", R->dr.max[k]);
      mbs_jsonEndObject(j);
    }
    mbs_jsonEndArray(j);
    mbs_jsonInt(j, "drive_solves", R->dr.solves);
  }
  mbs_jsonEndObject(j);
  if (R->m->nloop) { // closed loops (docs/flexible.md 15)
    mbs_jsonBeginObject(j, "loops");
    mbs_jsonBool(j, "projection", R->m->opt.projection);
    mbs_jsonNumber(j, "closure_max", R->cmax);
    mbs_jsonInt(j, "projection_iterations", R->nproj);
    mbs_jsonEndObject(j);
  }
  if (R->dr.k) mbs_jsonNumber(j, "work", r->x[R->nx - 1]);
  mbs_jsonString(j, "integrator", r->integrator);
  mbs_jsonString(j, "stop", r->stop);
  mbs_jsonBool(j, "complete", !strcmp(r->stop, "t_end"));
  mbs_jsonNumber(j, "t", R->t);
  mbs_jsonInt(j, "steps", R->steps);
  mbs_jsonInt(j, "rejected_steps", R->rejected);
  mbs_jsonInt(j, "evaluations", R->evals);
  mbs_jsonNumber(j, "energy_initial", R->E0);
  mbs_jsonNumber(j, "energy_final", r->E_final);
  mbs_jsonNumber(j, "energy_drift_max", R->drift);
  mbs_jsonNumber(j, "elastic_energy_max", R->emax);
  mbs_jsonNumberArray(j, "q", r->x, R->nq);
  mbs_jsonNumberArray(j, "eta", r->x + R->nq, R->ne);
  mbs_jsonNumberArray(j, "qd", r->x + R->nq + R->ne, R->nv);
  mbs_jsonNumberArray(j, "etad", r->x + R->nq + R->ne + R->nv, R->ne);
  mbsp_flexNodesJson(j, R, r->x);
}

// closed loops (docs/flexible.md 15): the closure error of state x after a step, and with
// integrator.projection (the default) x put back on the loops first (mbs_flexOracleLoopProject)
static mbsErr mbsp_flexLoopStep(mbspFlexRun *R, double *x) {
  const mbsModel *m = R->m;
  mbsFlexOracle *o = R->o ? R->o : R->lo;
  if (!m->nloop || !o) return MBS_OK;
  double *q = x, *eta = x + R->nq, *y = x + R->nq + R->ne;
  mbsFlexLoopProj pj;
  MBS_CALL(
      mbs_flexOracleLoopProject(o, q, eta, y, m->opt.closure_tol, m->opt.projection ? 10 : 0, &pj));
  if (m->opt.projection) mbsp_flexNormalize(m, x);
  R->cmax = fmax(R->cmax, m->opt.projection ? pj.c_after : pj.c_before);
  R->nproj += pj.iterations;
  return MBS_OK;
}

static mbsErr mbsp_flexRunLoop(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg,
                               const mbsModel *m, mbspFlexRun *R, double *x) {
  const mbsOption *op = &m->opt;
  int method = op->integrator;
  if (method != MBS_INT_EULER && method != MBS_INT_RK4 && method != MBS_INT_DP5)
    return mbs_errSet(MBS_ERR_UNSUPPORTED,
                      "%s:%d: body \"%s\" is flexible: integrator.method = %s cannot run flexible "
                      "bodies yet (euler, rk4 or dp5; docs/flexible.md 6)",
                      cfg->filename, m->flex->b[0].line, m->flex->b[0].name,
                      mbs_integratorName(method));
  if (mbsp_cliTsOption(cli->argc, cli->argv)) // its own steppers: PETSc TS would not see them
    return mbs_errSet(MBS_ERR_USAGE,
                      "mbspar run: %s: a model with flexible bodies steps with mbspar's own %s "
                      "(integrator.method), not PETSc TS: of the -ts_* options only -ts_dt and "
                      "-ts_max_time apply (docs/flexible.md 6)",
                      mbsp_cliTsOption(cli->argc, cli->argv), mbs_integratorName(method));
  char dir[4096];
  const char *out = cli->out ? cli->out : cfg->out_dir;
  if (!cli->out && cli->restart) { // --restart CK continues into CK's directory
    const char *slash = strrchr(cli->restart, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - cli->restart) : 1,
             slash ? cli->restart : ".");
    if (slash == cli->restart) snprintf(dir, sizeof dir, "/");
  } else {
    snprintf(dir, sizeof dir, "%s", out);
  }
  mbsp_flexInitial(R, x);
  R->t = 0, R->h = op->dt;
  if (R->dr.k) mbsp_flexDriveState(&R->dr, cfg, 0, x, x + R->nq + R->ne); // on the profiles
  if (cli->restart) MBS_CALL(mbsp_flexCkptRead(cli->restart, R, x));
  if (mkdir(dir, 0777) && errno != EEXIST)
    return mbs_errSet(MBS_ERR_IO, "%s: cannot create: %s", dir, strerror(errno));
  char pe[4200], ph[4200];
  snprintf(pe, sizeof pe, "%s/energy.csv", dir);
  snprintf(ph, sizeof ph, "%s/trajectory.h5", dir);
  struct stat st;
  const char *exists = stat(pe, &st) == 0 ? pe : stat(ph, &st) == 0 ? ph : NULL;
  if (!cli->restart && !cli->force && exists)
    return mbs_errSet(MBS_ERR_IO,
                      "%s exists; not overwriting an earlier run's output (use --force "
                      "or another --out)",
                      exists);
  mbspFlexOut *fo = NULL;
  MBS_CALL(mbsp_flexOutOpen(R, dir, cli->restart != NULL, &fo));
  FILE *fe = fopen(pe, cli->restart ? "a" : "w");
  if (!fe) {
    mbsp_flexOutClose(&fo, 0);
    return mbs_errSet(MBS_ERR_IO, "%s: cannot write: %s", pe, strerror(errno));
  }
  if (!cli->restart) {
    fputs("t,kinetic,potential,elastic,total", fe);
    if (R->dr.k) fputs(",work,total_minus_work", fe);
    for (int k = 0; k < R->dr.k; k++) fprintf(fe, ",drive_%s", cfg->drives[k].body);
    fputc('\n', fe);
  }
  mbsErr e = MBS_OK;
  double kin, pot, ela, ev[6 + MBS_DRIVE_MAX];
  int nev = R->dr.k ? 6 + R->dr.k : 4;
  e = mbsp_flexEnergy(R, x, &kin, &pot, &ela);
  R->E0 = kin + pot + ela - (R->dr.k ? x[R->nx - 1] : 0); // E - W is conserved
  int every = cfg->out_every > 0 ? cfg->out_every : 1, ckev = cfg->out_checkpoint_every;
  if (!e && !cli->restart) {
    e = mbsp_flexEnergyRow(R, x, kin, pot, ela, ev);
    if (!e) e = mbsp_flexOutRow(fo, x, ev, R->dr.k ? 6 : 4);
    if (!e) mbsp_flexCsvRow(fe, R->t, ev, nev);
  }
  double tend = op->t_end, tol = op->int_tol;
  // SIGTERM, SIGUSR1, SIGINT: finish the step, write the checkpoint and stop (exit 10), as the
  // rigid runs do (parallel/sim.c); PETSc may have replaced main's handlers
  mbsp_simInstallSignals();
  int sig = 0;
  fflush(fe);
  while (!e && R->t < tend * (1 - 1e-14) && !(sig = mbsp_simPendingSignal())) {
    double h = fmin(R->h, tend - R->t);
    if (method == MBS_INT_DP5) {
      double en;
      e = mbsp_flexDp5(R, x, h, tol, &en);
      if (e) break;
      double fac = en > 0 ? fmin(5.0, fmax(0.2, 0.9 * pow(en, -0.2))) : 5.0;
      if (en > 1) {
        R->rejected++;
        R->h = h * fac;
        if (R->h < 1e-14 * fmax(1, tend))
          e = mbs_errSet(MBS_ERR_NUMERIC, "run: dp5 step size underflow at t = %.9g s", R->t);
        continue;
      }
      if (h == R->h || fac < 1) R->h = h * fac; // a step cut to t_end keeps the controller's h
      R->t += h;
    } else {
      e = mbsp_flexFixed(R, method, x, op->dt);
      if (e) break;
      R->t = (double)(R->steps + 1) * op->dt;
    }
    memcpy(x, R->xn, sizeof(double) * (size_t)R->nx);
    mbsp_flexNormalize(m, x);
    if (R->dr.k) mbsp_flexDriveState(&R->dr, cfg, R->t, x, x + R->nq + R->ne);
    R->steps++;
    e = mbsp_flexLoopStep(R, x);
    if (e) break;
    e = mbsp_flexEnergy(R, x, &kin, &pot, &ela);
    if (e) break;
    double W = R->dr.k ? x[R->nx - 1] : 0;
    R->drift = fmax(R->drift, fabs(kin + pot + ela - W - R->E0)), R->emax = fmax(R->emax, ela);
    int last = R->t >= tend * (1 - 1e-14);
    if (R->steps % every == 0 || last) {
      e = mbsp_flexEnergyRow(R, x, kin, pot, ela, ev);
      if (!e) e = mbsp_flexOutRow(fo, x, ev, R->dr.k ? 6 : 4);
      if (e) break;
      mbsp_flexCsvRow(fe, R->t, ev, nev);
      fflush(fe); // every output row reaches the file (a kill loses no complete row)
    }
    int stopping = mbsp_simPendingSignal() != 0;
    if ((ckev > 0 && R->steps % ckev == 0) || last || stopping) {
      e = mbsp_flexOutFlush(fo); // the rows the checkpoint refers to are on disk
      if (!e) e = mbsp_flexCkptWrite(dir, R, x);
    }
  }
  sig = e ? 0 : mbsp_simPendingSignal();
  const char *stop = !sig             ? "t_end"
                     : sig == SIGUSR1 ? "SIGUSR1"
                     : sig == SIGINT  ? "SIGINT"
                                      : "SIGTERM";
  mbsErr eo = mbsp_flexOutClose(&fo, !e);
  if (!e) e = eo;
  if (fclose(fe) && !e) e = mbs_errSet(MBS_ERR_IO, "%s: write failed", pe);
  if (e) return e;
  mbsCli c = *cli;
  c.out = dir, c.force = 1;
  mbspFlexRunOut ro = {R, x, mbs_integratorName(method), kin + pot + ela, stop};
  if (mbsp_cliTable(cli))
    printf("flexible run (%s, %s): t = %.6g s, %ld steps (%ld rejected), %ld "
           "evaluations; energy %.12g -> %.12g J (largest drift %.3g J%s, largest elastic %.3g "
           "J)\n",
           mbsp_flexMethod(R), ro.integrator, R->t, R->steps, R->rejected, R->evals, R->E0,
           ro.E_final, R->drift, R->dr.k ? " of E - W" : "", R->emax);
  if (mbsp_cliTable(cli) && m->nloop)
    printf("  loops: largest closure error after a step %.3g (m, rad; projection %s, %ld Newton "
           "steps)\n",
           R->cmax, m->opt.projection ? "on" : "off", R->nproj);
  for (int k = 0; mbsp_cliTable(cli) && k < R->dr.k; k++)
    printf("  drive %-12s %s: driving force %.6g at the end, largest %.6g (N m or N); work %.12g "
           "J\n",
           cfg->drives[k].body, mbs_drive_profile_names[cfg->drives[k].profile], R->dr.tau[k],
           R->dr.max[k], x[R->nx - 1]);
  e = mbsp_emit(&c, comm, cfg, m, mbsp_flexRunJson, &ro);
  if (!e && sig) {
    char ck[4200], cmd[7000];
    snprintf(ck, sizeof ck, "%s/checkpoint.bin", dir);
    mbsp_continueCmd(cli->argc, cli->argv, 1, ck, cmd, sizeof cmd);
    e = mbs_errSet(MBS_INTERRUPTED,
                   "mbspar: %s received: stopped at t = %.9g s (step %ld) after finishing the "
                   "step; checkpoint written to %s (continue with: %s)",
                   stop, R->t, R->steps, ck, cmd);
  }
  return e;
}

// "nodes": [{body, node, position (world), rotation (3 x 3 row-major, world)}] of every named node
void mbsp_flexNodesJson(mbsJson *j, const mbspFlexRun *R, const double *x) {
  const mbsModel *m = R->m;
  mbs_jsonBeginArray(j, "nodes");
  for (int k = 0; k < m->flex->n; k++)
    for (int n = 0; n < m->flex->b[k].nnodes; n++) {
      double p[3], Rm[9];
      if (mbsp_flexNodePose(R, x, k, n, p, Rm)) continue;
      mbs_jsonBeginObject(j, NULL);
      mbs_jsonString(j, "body", m->flex->b[k].name);
      mbs_jsonString(j, "node", m->flex->b[k].node_name[n]);
      mbs_jsonNumberArray(j, "position", p, 3);
      mbs_jsonNumberArray(j, "rotation", Rm, 9);
      mbs_jsonEndObject(j);
    }
  mbs_jsonEndArray(j);
}

mbsErr mbsp_flexVerb(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, const mbsModel *m) {
  if (cli->verb->run != mbsp_verbAccel && cli->verb->run != mbsp_verbRun &&
      cli->verb->run != mbsp_verbStatic && cli->verb->run != mbsp_verbInverse)
    return cli->verb->run(cli, comm, cfg, m); // check, modes: their own verbs
  int inverse = cli->verb->run == mbsp_verbInverse;
  mbspFlexRun R;
  int N = m->nv; // the recursive algorithm for large models in accel, run and inverse
  for (int k = 0; k < m->flex->n; k++) N += m->flex->b[k].modal.m;
  // crba: the assembled mass matrix always (the dense oracle is the flexible CRBA + Cholesky)
  int crba = !cfg->sauto.on && !strcmp(mbs_solverName(m->opt.solver), "crba");
  int recursive = N > MBSP_FLEX_DENSE_MAX && cli->verb->run != mbsp_verbStatic && !crba &&
                  !m->nloop; // loops: the dense oracle (docs/flexible.md 15)
  // solver.method = schur: the ranges over the ranks (docs/flexible.md 11); rank 0 runs the verb
  // on a communicator of its own (the report still counts the job's ranks), the others evaluate
  // their ranges whenever it asks
  mbspFlexPar *par = NULL;
  mbspFlexCfsPar *fcp = NULL;
  mbspComm *self = NULL, *job = comm;
  int cfsm = mbsp_flexCfsMethod(cfg, m);
  if (mbsp_flexPart(cfg, m)) {
    int worker = 0;
    int mode = cli->verb->run == mbsp_verbRun ? 1 : inverse ? 2 : 0; // driven joints
    mbsErr e = mbsp_flexParBeginVerb(comm, cfg, m, mode, &par, &self, &worker);
    if (worker || e) return e;
    comm = self;
  } else if (cfsm >= 0 && mbsp_size(comm) > 1) { // the same with the constraint-force ranges
    int worker = 0;
    mbsErr e = mbsp_flexCfsParBegin(comm, m, cfsm, m->opt.tol, &fcp, &self, &worker);
    if (worker || e) return e;
    comm = self;
  }
  mbsErr e = mbsp_flexCreate(m, &R, recursive, par, cfsm, fcp);
  R.cfscomm = comm;
  R.cfg = cfg; // the reports' auto fields, the drives
  double *x = NULL;
  if (!e) {
    x = calloc((size_t)R.nx + 2, sizeof(double)); // + the drives' work
    R.ydd = calloc((size_t)(R.nv + R.ne) + 1, sizeof(double));
    if (!x || !R.ydd) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  }
  // --out DIR: accel.json / static.json go there as in the rigid verbs (created, never overwritten
  // without --force); run prepares its own files in mbsp_flexRunLoop
  // (agreed also after a local failure above: static runs on every rank of comm)
  if (cli->verb->run != mbsp_verbRun && !inverse) {
    const char *files[1] = {cli->verb->run == mbsp_verbAccel ? "accel.json" : "static.json"};
    e = mbsp_agreeErr(comm, e || mbsp_rank(comm) ? e : mbsp_outPrepare(cli, files, 1));
  }
  if (!e && cli->verb->run == mbsp_verbAccel) {
    mbsp_flexInitial(&R, x);
    int rep = cli->repeat > 0 ? cli->repeat : 1;
    double t0 = mbs_wtime();
    for (int r = 0; r < rep && !e; r++) e = mbsp_flexAccel(&R, x, x + R.nq + R.ne, x + R.nq, R.ydd);
    mbspFlexAccelOut a = {&R, (mbs_wtime() - t0) / rep, x};
    if (!e && mbsp_cliTable(cli)) {
      printf("flexible accel (%s): qdd =", R.par            ? "flex_part, ranges over the ranks"
                                           : R.cfs || R.fcp ? "flex_cfs, constraint forces"
                                           : R.o            ? "serial oracle"
                                                            : "recursive, flex_aba");
      for (int i = 0; i < R.nv; i++) printf(" %.10g", R.ydd[i]);
      printf("\n  etadd =");
      for (int i = 0; i < R.ne; i++) printf(" %.6g", R.ydd[R.nv + i]);
      printf("\n");
    }
    if (!e) e = mbsp_emit(cli, comm, cfg, m, mbsp_flexAccelJson, &a);
  } else if (!e && cli->verb->run == mbsp_verbStatic) {
    e = mbsp_flexStatic(cli, comm, cfg, &R, x);
  } else if (!e && inverse) {
    e = mbsp_flexInverse(cli, comm, cfg, &R, x);
  } else if (!e) {
    e = mbsp_flexDriveSetup(&R.dr, cfg, m, R.nv + R.ne);
    if (!e) e = mbsp_flexDriveUse(&R.dr, par, R.a);
    if (!e && R.dr.k) R.nx++; // the drives' work W joins the state (its rate is their power)
    if (!e) e = mbsp_flexRunLoop(cli, comm, cfg, m, &R, x);
  }
  free(x), free(R.ydd);
  mbsp_flexFree(&R);
  if (fcp) return mbsp_flexCfsParEnd(job, &fcp, &self, e);
  return par ? mbsp_flexParEnd(job, &par, &self, e) : e;
}
