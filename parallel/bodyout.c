/// \file bodyout.c
/// Per-body outputs of `mbspar run`: world poses, centres of mass, velocities and joint wrenches
/// of the owned bodies at each output row.
///
/// Communication: poses need the kinematics across ranks (mbsp_engineKinematics: the prefix of
/// the engine, one record per rank or one message per cut edge); joint wrenches need one
/// forward-dynamics evaluation (mbsp_engineForward) at the row's state. Both run on a state of
/// their own, so the integration is bitwise the same with and without them: the evaluation's
/// warm-start history lives in that state, and the solver's initial guess (the owned part of
/// c->x), its cache (spectrum, omega), the statistics and the timers of the engine workspace are
/// restored afterwards. CSV runs then gather the pose rows to rank 0 (O(n) bytes per row, the
/// same order as the state rows it already gathers); HDF5 runs write them from every rank, so
/// nothing of the whole model meets on one rank. The serial baselines (aba, crba) evaluate on
/// rank 0, which owns every body there. Trade-off: the extra evaluation per output row costs
/// 1/4 of an RK4 step (output.every = 1); output.every or output.joint_wrench = false reduce it.
#include "bodyout.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_fault.h"
#include "mbspar/mbs_poses.h"
#include "mbspar/mbs_solvertype.h"

struct mbspBodyOut {
  mbspComm *comm;
  const mbsModel *m;
  mbspEngine *eng; // NULL: serial baseline on rank 0
  int rank, size, b0, b1, nbo, full;
  int q0, nqo, v0, nvo;
  mbsState *s;   // the state of the output rows (own warm-start history)
  mbsWork *w;    // serial: rank 0's workspace; engine: NULL (the engine's)
  double *xsave; // (nlam) the engine's initial guess c->x, restored after an evaluation
  // rows of the owned bodies
  double *pose;             // (nbo x 10) position, quaternion, centre of mass (the CSV rows)
  double *pos, *quat, *com; // (nbo x 3, 4, 3) the same, one array each (the HDF5 rows)
  double *pts;              // (nbo x 9) drawing points: origin, centre of mass, shape end
  double *vel;              // (nbo x 3)
  double *omega;            // (nbo x 3)
  double *speed;            // (nbo)
  double *wrench;           // (nbo x 6) [torque, force] in the ground frame
  double *fnorm;            // (nbo) |force|
  double *tnorm;            // (nbo) |torque about the joint origin|
  int *cnt, *dsp;           // rank 0: gather layout of the pose rows
};

mbsErr mbsp_bodyOutCreate(mbspComm *comm, const mbsModel *m, mbspEngine *eng, int b0, int b1,
                          int full, mbspBodyOut **out) {
  mbspBodyOut *bo = calloc(1, sizeof *bo);
  *out = NULL;
  mbsErr e = bo ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory (body outputs)");
  if (bo) {
    *out = bo;
    bo->comm = comm, bo->m = m, bo->eng = eng, bo->full = full;
    bo->rank = mbsp_rank(comm), bo->size = mbsp_size(comm);
    bo->b0 = b0, bo->b1 = b1 > b0 ? b1 : b0, bo->nbo = bo->b1 - bo->b0;
    if (bo->nbo > 0) {
      int last = bo->b1 - 1;
      bo->q0 = m->body_qadr[b0], bo->nqo = m->body_qadr[last] + m->body_qnum[last] - bo->q0;
      bo->v0 = m->body_dofadr[b0], bo->nvo = m->body_dofadr[last] + m->body_dofnum[last] - bo->v0;
    }
    size_t n = (size_t)(bo->nbo > 0 ? bo->nbo : 1);
    e = mbs_stateCreate(m, &bo->s);
    if (!e && !eng && bo->nbo > 0) e = mbs_workCreate(m, &bo->w);
    if (!e && !eng && bo->nbo > 0) e = mbs_workEnableMethod(m, bo->w);
    bo->pose = malloc(n * MBS_POSE_NCOMP * sizeof(double));
    bo->pos = malloc(n * 3 * sizeof(double)), bo->quat = malloc(n * 4 * sizeof(double));
    bo->com = malloc(n * 3 * sizeof(double)), bo->pts = malloc(n * 9 * sizeof(double));
    bo->vel = calloc(n * 3, sizeof(double)), bo->omega = calloc(n * 3, sizeof(double));
    bo->speed = calloc(n, sizeof(double)), bo->wrench = calloc(n * 6, sizeof(double));
    bo->fnorm = calloc(n, sizeof(double)), bo->tnorm = calloc(n, sizeof(double));
    bo->xsave = malloc(sizeof(double) * (size_t)(m->nlam > 0 ? m->nlam : 1));
    if (!e && (!bo->pose || !bo->pos || !bo->quat || !bo->com || !bo->pts || !bo->vel ||
               !bo->omega || !bo->speed || !bo->wrench || !bo->fnorm || !bo->tnorm || !bo->xsave))
      e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (body outputs)");
  }
  MBS_CALL(mbsp_agreeErr(comm, e));
  // rank 0: where each rank's pose rows go in the gathered array
  double mine[2] = {bo->b0, bo->nbo}, *all = NULL;
  if (bo->rank == 0) {
    all = malloc(sizeof(double) * 2 * (size_t)bo->size);
    bo->cnt = malloc(sizeof(int) * (size_t)bo->size),
    bo->dsp = malloc(sizeof(int) * (size_t)bo->size);
    if (!all || !bo->cnt || !bo->dsp) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (body outputs)");
  }
  MBS_CALL(mbsp_agreeErr(comm, e));
  MBS_CALL(mbsp_gather(comm, mine, 2, bo->rank == 0 ? all : mine));
  if (bo->rank == 0) {
    for (int r = 0; r < bo->size; r++)
      bo->dsp[r] = MBS_POSE_NCOMP * (int)all[2 * r],
      bo->cnt[r] = MBS_POSE_NCOMP * (int)all[2 * r + 1];
    free(all);
  }
  return MBS_OK;
}

// one forward evaluation of the engine at bo->s that leaves the run untouched (see \file)
static mbsErr mbsp_bodyOutEvaluate(mbspBodyOut *bo) {
  mbsWork *w = mbsp_engineWork(bo->eng);
  mbsCfs *c = mbsp_engineCfs(bo->eng);
  mbsTimer tsave[MBS_TIMER_COUNT];
  mbsSolveStat stat = w->stat;
  mbsSolverCache cache;
  memcpy(tsave, w->timer, sizeof tsave);
  mbs_cfsCacheSave(c, &cache);
  if (c->l1 > c->l0)
    memcpy(bo->xsave + c->l0, c->x + c->l0, sizeof(double) * (size_t)(c->l1 - c->l0));
  mbsErr e = mbsp_engineForward(bo->eng, bo->s);
  if (c->l1 > c->l0)
    memcpy(c->x + c->l0, bo->xsave + c->l0, sizeof(double) * (size_t)(c->l1 - c->l0));
  mbsErr er = mbs_cfsCacheRestore(bo->m, c, &cache);
  w->stat = stat;
  memcpy(w->timer, tsave, sizeof tsave);
  return e ? e : er;
}

mbsState *mbsp_bodyOutState(mbspBodyOut *bo) {
  return bo->s;
}

mbsErr mbsp_bodyOutCompute(mbspBodyOut *bo, double t, const double *q_owned,
                           const double *qd_owned) {
  const mbsModel *m = bo->m;
  // the row's state: this rank's slices
  if (bo->nqo) memcpy(bo->s->q + bo->q0, q_owned, sizeof(double) * (size_t)bo->nqo);
  if (bo->nvo) memcpy(bo->s->qd + bo->v0, qd_owned, sizeof(double) * (size_t)bo->nvo);
  bo->s->time = t;
  mbsErr e = MBS_OK;
  mbsWork *w = bo->w;
  if (bo->eng) {
    w = mbsp_engineWork(bo->eng);
    e = bo->full ? mbsp_bodyOutEvaluate(bo) : mbsp_engineKinematics(bo->eng, bo->s);
  } else if (bo->nbo > 0) { // serial baseline: rank 0 owns the whole model
    if (bo->full) {
      e = mbs_forward(m, bo->s, w);
    } else {
      mbs_fwdPosition(m, bo->s, w);
      mbs_fwdVelocity(m, bo->s, w);
    }
  }
  MBS_CALL(mbsp_agreeErr(bo->comm, e));
  // the rows of the owned bodies
  for (int i = 0; i < bo->nbo; i++) {
    int b = bo->b0 + i;
    const double *p = bo->pose + MBS_POSE_NCOMP * i;
    mbs_bodyPoseWorld(m, w, b, bo->pose + MBS_POSE_NCOMP * i);
    memcpy(bo->pos + 3 * i, p, 3 * sizeof(double));
    memcpy(bo->quat + 4 * i, p + 3, 4 * sizeof(double));
    memcpy(bo->com + 3 * i, p + 7, 3 * sizeof(double));
    // drawing points: origin, centre of mass, shape end (the centre of mass when not known)
    double *d = bo->pts + 9 * i;
    const double *R = w->xmat + 9 * b, *tip = m->body_tip + 3 * b;
    memcpy(d, p, 3 * sizeof(double)), memcpy(d + 3, p + 7, 3 * sizeof(double));
    for (int r = 0; r < 3; r++)
      d[6 + r] = tip[0] == 0 && tip[1] == 0 && tip[2] == 0
                     ? p[7 + r]
                     : p[r] + R[3 * r] * tip[0] + R[3 * r + 1] * tip[1] + R[3 * r + 2] * tip[2];
    double *v = bo->vel + 3 * i, *f = bo->wrench + 6 * i;
    mbs_bodyVelocityWorld(m, w, b, v, bo->omega + 3 * i);
    bo->speed[i] = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (!bo->full) continue;
    mbs_bodyJointWrenchWorld(m, w, b, f);
    bo->tnorm[i] = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    bo->fnorm[i] = sqrt(f[3] * f[3] + f[4] * f[4] + f[5] * f[5]);
  }
  return MBS_OK;
}

mbsErr mbsp_bodyOutGather(mbspBodyOut *bo, double *all) {
  double dummy = 0;
  return mbsp_gatherv(bo->comm, bo->nbo ? bo->pose : &dummy, MBS_POSE_NCOMP * bo->nbo,
                      bo->rank == 0 ? all : &dummy, bo->cnt, bo->dsp);
}

// the per-body row datasets: name, components, units, description
static const mbspH5BodySet mbsp_bodyout_sets[] = {
    {"bodies/pos", 3, "m", "world position of the body frame origin (x, y, z)"},
    {"bodies/quat", 4, "1",
     "world orientation of the body frame, unit quaternion (w, x, y, z), w >= 0"},
    {"bodies/com", 3, "m", "world position of the centre of mass"},
    {"bodies/vel", 3, "m/s", "world linear velocity of the body frame origin"},
    {"bodies/omega", 3, "rad/s", "world angular velocity"},
    {"bodies/speed", 0, "m/s", "|vel|"},
    {"bodies/points", 9, "m",
     "drawing points of the body (the XDMF geometry): world positions of the body frame origin "
     "(3), the centre of mass (3) and the end of the body's shape, length * direction in the body "
     "frame (3; the centre of mass when the model gives no length)"},
    {"joints/wrench", 6, "N m, N",
     "wrench the parent exerts on the body through the joint, ground frame: torque about the "
     "joint origin (3), force (3)"},
    {"joints/force_norm", 0, "N", "|force| of joints/wrench"},
    {"joints/torque_norm", 0, "N m", "|torque| of joints/wrench"},
};
#define MBSP_BODYOUT_NSET ((int)(sizeof mbsp_bodyout_sets / sizeof mbsp_bodyout_sets[0]))

mbsErr mbsp_bodyOutH5(mbspBodyOut *bo, mbspH5 *h) {
  const mbsModel *m = bo->m;
  size_t n = (size_t)(bo->nbo > 0 ? bo->nbo : 1);
  int *parent = malloc(n * sizeof(int));
  const char **names = malloc(n * sizeof(char *));
  mbsErr e = parent && names ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory (body outputs)");
  for (int i = 0; !e && i < bo->nbo; i++)
    parent[i] = m->body_parent[bo->b0 + i], names[i] = m->body_name[bo->b0 + i];
  e = mbsp_agreeErr(bo->comm, e);
  // without joint wrenches: the seven /bodies sets
  if (!e)
    e = mbsp_h5Bodies(h, m->nbody, bo->b0, bo->nbo, mbsp_bodyout_sets,
                      bo->full ? MBSP_BODYOUT_NSET : 7, parent, names);
  // the model's geometry, so a reader can redo the kinematics from /q (docs/outputs.md)
  double *buf = malloc(n * 4 * sizeof(double));
  if (!buf) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (body outputs)");
  e = mbsp_agreeErr(bo->comm, e);
  static const struct {
    const char *name;
    int ncomp;
    const char *units, *desc;
  } st[] = {{"model/mass", 0, "kg", "body mass"},
            {"model/com", 3, "m", "centre of mass in the body frame"},
            {"model/origin", 3, "m", "joint origin in the parent frame"},
            {"model/axis", 3, "1", "joint axis"},
            {"model/axis2", 3, "1", "second joint axis (universal)"},
            {"model/framequat", 4, "1",
             "reported frame in the body frame (w, x, y, z): /bodies/quat = body orientation "
             "times this"},
            {"model/tip", 3, "m",
             "end of the body's shape in the body frame, length * direction (0: not given)"}};
  for (int k = 0; !e && k < 7; k++) {
    int nc = st[k].ncomp;
    for (int i = 0; i < bo->nbo; i++) {
      int b = bo->b0 + i;
      const double *src = k == 0   ? m->body_mass + b
                          : k == 1 ? m->body_com + 3 * b
                          : k == 2 ? m->jnt_origin + 3 * b
                          : k == 3 ? m->jnt_axis + 3 * b
                          : k == 4 ? m->jnt_axis2 + 3 * b
                          : k == 5 ? m->body_framequat + 4 * b
                                   : m->body_tip + 3 * b;
      memcpy(buf + (size_t)i * (nc ? nc : 1), src, sizeof(double) * (size_t)(nc ? nc : 1));
    }
    e = mbsp_h5BodyStatic(h, st[k].name, nc, buf, NULL, st[k].units, st[k].desc);
  }
  for (int i = 0; !e && i < bo->nbo; i++) parent[i] = m->body_jnttype[bo->b0 + i];
  if (!e)
    e = mbsp_h5BodyStatic(h, "model/joint", 0, NULL, parent, NULL,
                          "joint type: 0 fixed, 1 revolute, 2 prismatic, 3 cylindrical, "
                          "4 universal, 5 spherical, 6 free");
  // the XDMF cells: one polyline per body through the points of /bodies/points (three per
  // body): the parent's origin (its own on the ground), its origin, centre of mass, shape end
  int *cells = malloc(n * 4 * sizeof(int));
  if (!e && !cells) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (body outputs)");
  e = mbsp_agreeErr(bo->comm, e);
  for (int i = 0; !e && i < bo->nbo; i++) {
    int b = bo->b0 + i, p = m->body_parent[b];
    cells[4 * i] = 3 * (p >= 0 ? p : b);
    for (int k = 1; k < 4; k++) cells[4 * i + k] = 3 * b + k - 1;
  }
  if (!e)
    e = mbsp_h5BodyStatic(h, "model/cells", 4, NULL, cells, NULL,
                          "one polyline per body (the XDMF topology) through points of "
                          "/bodies/points (3 per body): parent's origin (the body's own on the "
                          "ground), origin, centre of mass, shape end");
  free(cells);
  free(buf);
  free(parent);
  free(names);
  return e;
}

void mbsp_bodyOutH5Row(mbspBodyOut *bo, mbspH5 *h) {
  const double *data[MBSP_BODYOUT_NSET] = {bo->pos,   bo->quat, bo->com,    bo->vel,   bo->omega,
                                           bo->speed, bo->pts,  bo->wrench, bo->fnorm, bo->tnorm};
  mbsp_h5BodyRow(h, data);
}

void mbsp_bodyOutCsvHeader(const mbsModel *m, FILE *f) {
  static const char *const comp[MBS_POSE_NCOMP][2] = {
      {"pos", "x"},   {"pos", "y"},   {"pos", "z"}, {"quat", "qw"}, {"quat", "qx"},
      {"quat", "qy"}, {"quat", "qz"}, {"com", "x"}, {"com", "y"},   {"com", "z"}};
  for (int b = 0; b < m->nbody; b++)
    for (int k = 0; k < MBS_POSE_NCOMP; k++)
      fprintf(f, ",%s_%s_%s", comp[k][0], m->body_name[b], comp[k][1]);
}

mbsErr mbsp_bodyOutTopology(const mbsModel *m, const char *path) {
  FILE *f = MBS_FAULT_WRITE_POINT() ? NULL : fopen(path, "w");
  MBS_CHECK(f, MBS_ERR_IO, "%s: cannot open for writing: %s", path, strerror(errno));
  fprintf(f, "index,name,parent,parent_name,joint,mass,com_x,com_y,com_z,origin_x,origin_y,"
             "origin_z,axis_x,axis_y,axis_z,axis2_x,axis2_y,axis2_z,frame_qw,frame_qx,frame_qy,"
             "frame_qz,tip_x,tip_y,tip_z\n");
  for (int b = 0; b < m->nbody; b++) {
    int p = m->body_parent[b];
    fprintf(f, "%d,%s,%d,%s,%s,%.17g", b, m->body_name[b], p, p >= 0 ? m->body_name[p] : "ground",
            mbs_jntName(m->body_jnttype[b]), m->body_mass[b]);
    const double *v[6] = {m->body_com + 3 * b,  m->jnt_origin + 3 * b,     m->jnt_axis + 3 * b,
                          m->jnt_axis2 + 3 * b, m->body_framequat + 4 * b, m->body_tip + 3 * b};
    for (int k = 0; k < 6; k++)
      for (int i = 0; i < (k == 4 ? 4 : 3); i++) fprintf(f, ",%.17g", v[k][i]);
    fprintf(f, "\n");
  }
  int bad = ferror(f) != 0;
  if (fclose(f) != 0) bad = 1;
  if (MBS_FAULT_WRITE_POINT()) bad = 1;
  MBS_CHECK(!bad, MBS_ERR_IO, "%s: write error (disk full?)", path);
  return MBS_OK;
}

void mbsp_bodyOutDestroy(mbspBodyOut **pbo) {
  if (!pbo || !*pbo) return;
  mbspBodyOut *bo = *pbo;
  mbs_stateDestroy(&bo->s);
  mbs_workDestroy(&bo->w);
  void *arrs[] = {bo->pts,   bo->xsave, bo->pose,   bo->pos,   bo->quat,  bo->com, bo->vel,
                  bo->omega, bo->speed, bo->wrench, bo->fnorm, bo->tnorm, bo->cnt, bo->dsp};
  for (size_t k = 0; k < sizeof arrs / sizeof arrs[0]; k++) free(arrs[k]);
  free(bo);
  *pbo = NULL;
}
