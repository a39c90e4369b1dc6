/// \file sim_drive.c
/// `mbspar run` with driven joints (the config's `drive` list; mbs_drive.h, docs/model.md "Driven
/// joints"). Each evaluation sets the driven coordinates and rates from their profiles at the
/// stage time and finds the driving forces tau_d that give the prescribed accelerations: qdd is
/// affine in the joint forces, qdd(tau) = qdd0 + H^-1 tau, so with k driven joints the serial
/// method solves k + 1 times at the same state (the forces as given, then each driven joint's
/// force raised by delta_j), the k x k block K of the responses at the driven dofs gives
/// K tau = qdd_prescribed - qdd0, and qdd = qdd0 + sum_j tau_j col_j. Exact up to rounding for the
/// direct serial methods (aba, crba, natural); delta_j = 1 (N m or N), so the result depends on the
/// state alone and restarts stay bitwise. The driving forces join the
/// applied joint forces (state tau): the accuracy guard checks them against RNEA and the energy
/// balance counts their work. Rank 0 alone (the serial methods hold the whole state there).
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "sim_impl.h"
#include "mbspar/mbs_motion.h"

// the prescribed q, q̇, q̈ of drive j at time t (a profile, or its motion file's interpolant)
static void mbsp_driveAt(const mbspSim *S, int j, double t, double *q, double *qd, double *qdd) {
  const mbsDriveSpec *d = &S->a->cfg->drives[j];
  const mbsMotion *mo = S->drv_mo ? S->drv_mo[j] : NULL;
  if (d->profile == MBS_DRIVE_MOTION && mo)
    mbs_driveMotionEval(mo->ns, mo->t, mo->q, mo->qd, S->m->nq, S->m->nv, S->drv_q[j],
                        S->drv_dof[j], t, q, qd, qdd);
  else
    mbs_driveEval(d, S->drv_q0[j], t, q, qd, qdd);
}

// drive j's motion file (rank 0): read, its column of the driven coordinate, and times that cover
// the run from 0 to t_end (also the flexible runs', flex_drive.c)
mbsErr mbsp_driveMotionRead(const mbsConfig *c, const mbsModel *m, int j, mbsMotion **pmo) {
  const mbsDriveSpec *d = &c->drives[j];
  int b = mbs_modelFindBody(m, d->body);
  char *text = NULL, col[256], msg[1024];
  size_t n = 0;
  mbsErr e = mbs_fileRead(d->file, &text, &n); // regular files only, never blocks
  if (!e) e = mbs_textCheck(text, n, d->file);
  if (e == MBS_ERR_INPUT) {
    snprintf(msg, sizeof msg, "%s", mbs_errMsg());
    free(text);
    return mbs_errSet(MBS_ERR_INPUT, "%s:%d: drive: cannot read %s (%s)", c->filename, d->line,
                      d->file, msg);
  }
  if (!e) e = mbs_motionRead(m, text, d->file, pmo);
  // the header must name the driven coordinate (mbs_motionRead leaves a missing one at rest)
  mbs_coordName(m, "q", b, 0, 0, col, sizeof col);
  int found = 0;
  for (const char *p = text; !e && p && *p && *p != '\n';) {
    size_t len = strcspn(p, ",\r\n");
    found |= len == strlen(col) && !strncmp(p, col, len);
    p += len;
    if (*p == ',')
      p++;
    else
      break;
  }
  free(text);
  MBS_CALL(e);
  const mbsMotion *mo = *pmo;
  if (!found)
    return mbs_errSet(MBS_ERR_INPUT,
                      "%s:%d: drive: %s has no column %s for the driven joint of \"%s\"",
                      c->filename, d->line, d->file, col, d->body);
  if (mo->t[0] > 0 || mo->t[mo->ns - 1] < m->opt.t_end)
    return mbs_errSet(MBS_ERR_INPUT,
                      "%s:%d: drive: the motion of %s covers t = %g ... %g s, the run needs 0 ... "
                      "%g s (integrator.t_end)",
                      c->filename, d->line, d->file, mo->t[0], mo->t[mo->ns - 1], m->opt.t_end);
  return MBS_OK;
}

mbsErr mbsp_simDriveSetup(mbspSim *S) {
  const mbsConfig *c = S->a->cfg;
  const mbsModel *m = S->m;
  int k = c ? c->ndrive : 0;
  if (!k) return MBS_OK;
  if (!S->serial)
    return mbs_errSet(MBS_ERR_INPUT,
                      "%s:%d: drive: solver.method = %s does not take driven joints yet; they run "
                      "with the serial methods aba, crba and natural (solver.method = aba, or "
                      "auto)",
                      c->filename, c->drives[0].line, mbs_solverName(m->opt.solver));
  if (S->rank != 0) return MBS_OK;
  int nv = m->nv;
  S->ndrv = k;
  S->drv_dof = calloc((size_t)k, sizeof(int));
  S->drv_q = calloc((size_t)k, sizeof(int));
  S->drv_buf = calloc((size_t)(k + 1) * (size_t)nv + (size_t)k * (size_t)(k + 8), sizeof(double));
  if (!S->drv_dof || !S->drv_q || !S->drv_buf) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  MBS_CALL(mbs_configDrives(c, m, S->drv_dof, S->drv_q));
  double *p = S->drv_buf;
  S->drv_a0 = p, p += nv;
  S->drv_col = p, p += (size_t)k * nv;
  S->drv_K = p, p += (size_t)k * k;
  S->drv_rhs = p, p += k;
  S->drv_q0 = p, p += k;
  S->drv_vel = p, p += k;
  S->drv_acc = p, p += k;
  S->drv_base = p, p += k;
  S->drv_last = p, p += k;
  S->drv_max = p, p += k;
  S->drv_keep = p, p += k;
  for (int j = 0; j < k; j++) S->drv_q0[j] = m->q0[S->drv_q[j]];
  S->drv_mo = calloc((size_t)k, sizeof *S->drv_mo);
  if (!S->drv_mo) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  for (int j = 0; j < k; j++)
    if (c->drives[j].profile == MBS_DRIVE_MOTION)
      MBS_CALL(mbsp_driveMotionRead(c, m, j, &S->drv_mo[j]));
  return MBS_OK;
}

void mbsp_simDriveStart(mbspSim *S) {
  if (!S->ndrv || S->a->restart) return; // a restart continues the checkpoint's state
  for (int j = 0; j < S->ndrv; j++) {
    double q, qd, qdd;
    mbsp_driveAt(S, j, S->s->time, &q, &qd, &qdd);
    S->y[S->drv_q[j]] = q;               // rank 0 holds the whole state (serial methods)
    S->y[S->m->nq + S->drv_dof[j]] = qd; // the profile's rate replaces the model's q̇0
  }
}

void mbsp_simDriveFree(mbspSim *S) {
  for (int j = 0; S->drv_mo && j < S->ndrv; j++) mbs_motionDestroy(&S->drv_mo[j]);
  free(S->drv_mo), S->drv_mo = NULL;
  free(S->drv_dof), free(S->drv_q), free(S->drv_buf);
  S->drv_dof = S->drv_q = NULL, S->drv_buf = NULL, S->ndrv = 0;
}

mbsErr mbsp_simDriveForward(mbspSim *S, double t) {
  const mbsConfig *c = S->a->cfg;
  const mbsModel *m = S->m;
  mbsState *s = S->s;
  mbsWork *w = S->w;
  int k = S->ndrv, nv = m->nv;
  for (int j = 0; j < k; j++) {
    double q;
    mbsp_driveAt(S, j, t, &q, &S->drv_vel[j], &S->drv_acc[j]);
    s->q[S->drv_q[j]] = q, s->qd[S->drv_dof[j]] = S->drv_vel[j];
    // the applied force as given: the torques file's, else 0 (s->tau holds the last driving force)
    S->drv_base[j] = c->torques ? s->tau[S->drv_dof[j]] : 0;
    s->tau[S->drv_dof[j]] = S->drv_base[j];
  }
  MBS_CALL(mbs_forward(m, s, w));
  memcpy(S->drv_a0, w->qdd, (size_t)nv * sizeof(double));
  for (int j = 0; j < k; j++) {
    int d = S->drv_dof[j];
    double delta = 1; // a function of nothing but the state: restarts stay bitwise
    s->tau[d] = S->drv_base[j] + delta;
    mbsErr e = mbs_forward(m, s, w);
    s->tau[d] = S->drv_base[j];
    MBS_CALL(e);
    double *col = S->drv_col + (size_t)j * nv;
    for (int i = 0; i < nv; i++) col[i] = (w->qdd[i] - S->drv_a0[i]) / delta;
  }
  S->drv_solves += k + 1;
  for (int i = 0; i < k; i++) {
    for (int j = 0; j < k; j++) S->drv_K[i * k + j] = S->drv_col[(size_t)j * nv + S->drv_dof[i]];
    S->drv_rhs[i] = S->drv_acc[i] - S->drv_a0[S->drv_dof[i]];
  }
  if (mbs_driveSolve(k, S->drv_K, S->drv_rhs))
    return mbs_errSet(MBS_ERR_INPUT,
                      "%s:%d: drive: the driving forces are not determined at t = %.9g s (a driven "
                      "joint whose motion the other driven joints or a closed loop fix already)",
                      c->filename, c->drives[0].line, t);
  for (int i = 0; i < nv; i++) {
    double a = S->drv_a0[i];
    for (int j = 0; j < k; j++) a += S->drv_rhs[j] * S->drv_col[(size_t)j * nv + i];
    w->qdd[i] = a;
  }
  for (int j = 0; j < k; j++) {
    int d = S->drv_dof[j];
    w->qdd[d] = S->drv_acc[j]; // exactly the profile's (the combination gives it to rounding)
    s->tau[d] = S->drv_base[j] + S->drv_rhs[j];
    S->drv_last[j] = S->drv_rhs[j];
    S->drv_max[j] = fmax(S->drv_max[j], fabs(S->drv_rhs[j]));
  }
  return MBS_OK;
}

mbsErr mbsp_simDriveAt(mbspSim *S, double t) {
  if (!S->ndrv) return MBS_OK;
  const mbsModel *m = S->m;
  memcpy(S->s->q, S->y, (size_t)m->nq * sizeof(double));
  memcpy(S->s->qd, S->y + m->nq, (size_t)m->nv * sizeof(double));
  S->s->time = t;
  if (S->a->cfg->torques) mbs_torquesAt(S->a->cfg->torques, m, t, S->s->tau);
  return mbsp_simDriveForward(S, t);
}

void mbsp_simDriveKeep(mbspSim *S) {
  for (int j = 0; j < S->ndrv; j++) S->drv_keep[j] = S->s->tau[S->drv_dof[j]];
}

void mbsp_simDriveRates(const mbspSim *S, double *f) {
  for (int j = 0; j < S->ndrv; j++) f[S->drv_q[j]] = S->drv_vel[j]; // q' of a driven joint
}

void mbsp_simDriveJson(const mbspSim *S, mbsJson *j) {
  const mbsConfig *c = S->a->cfg;
  if (!S->ndrv) return;
  mbs_jsonBeginArray(j, "drives");
  for (int k = 0; k < S->ndrv; k++) {
    mbs_jsonBeginObject(j, NULL);
    mbs_jsonString(j, "body", c->drives[k].body);
    mbs_jsonString(j, "profile", mbs_drive_profile_names[c->drives[k].profile]);
    mbs_jsonInt(j, "dof", S->drv_dof[k]);
    mbs_jsonNumber(j, "force_last", S->drv_last[k]);
    mbs_jsonNumber(j, "force_max_abs", S->drv_max[k]);
    mbs_jsonEndObject(j);
  }
  mbs_jsonEndArray(j);
  mbs_jsonInt(j, "drive_solves", S->drv_solves);
}
