/// \file engine_kin.c
/// The distributed engine's kinematics (engine.c evaluates through it): the position stage of the
/// owned bodies, the velocities across ranks (a chain's radix-k scan of its segments'
/// maps, or a tree's rank pipeline) and the poses below a ghost parent. No MPI calls here.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_engine.h"
#include "flops.h"
#include "spatial.h"

#include "engine_impl.h"

// ---------------------------------------------------------------- evaluation

// ^C X_A = ^C X_B ^B X_A for compact transforms (E, r)
static void mbsp_compose(const mbsReal *Xcb, const mbsReal *Xba, mbsReal *Xca) {
  mbsu_mulMat3(Xcb, Xba, Xca);
  mbsReal t[3];
  mbsu_mulMat3TVec(Xba, Xcb + 9, t);
  Xca[9] = Xba[9] + t[0], Xca[10] = Xba[10] + t[1], Xca[11] = Xba[11] + t[2];
}

// A scan record: the map from a ghost parent's pose and velocity to a body's, 30 reals: pose
// (R (9), p (3): R_b = R_g R, p_b = p_g + R_g p) and velocity (X compact (12), c (6):
// v_b = X v_g + c). combine(a, b): b <- "a then b".
static void mbsp_kinThen(const double *a, double *b) {
  double R[9], p[3], X[12], c[6];
  MBS_FLOPS(MBS_FL_KIN_THEN);
  mbsu_mulMat3(a, b, R); // R_a R_b
  mbsu_mulMat3Vec(a, b + 9, p);
  for (int i = 0; i < 3; i++) p[i] += a[9 + i];
  memcpy(b, R, sizeof R), memcpy(b + 9, p, sizeof p);
  const double *xa = a + 12;
  double *xb = b + 12;
  mbsp_compose(xb, xa, X);      // X_b X_a
  mbsu_xMotion(xb, xa + 12, c); // X_b c_a
  for (int i = 0; i < 6; i++) xb[12 + i] += c[i];
  memcpy(xb, X, sizeof X);
}

// boundary bodies' pose and velocity [xmat (9), xpos (3), cvel (6)] for the rank pipeline:
// neighbour j's segment in
static void mbsp_unpackKin(mbspEngine *e, mbsWork *w, int k) {
  const double *buf = mbsp_haloRecvBuf(e->hvel, k);
  for (int j = e->dn_radr[k]; j < e->dn_radr[k + 1]; j++) {
    int b = e->dn_r[j];
    const double *o = buf + 18 * (j - e->dn_radr[k]);
    memcpy(w->xmat + 9 * b, o, 9 * sizeof(double));
    memcpy(w->xpos + 3 * b, o + 9, 3 * sizeof(double));
    memcpy(w->cvel + 6 * b, o + 12, 6 * sizeof(double));
  }
}

// pose of owned body b from its ghost parent g's (already in w) and the compact transform
// Xg = (E, r) from g's frame to b's: R_b = R_g E^T, p_b = p_g + R_g r
static void mbsp_poseFromGhost(const mbspEngine *e, mbsWork *w, int b, int g) {
  const double *X = e->Xg + 12 * b, *Rw = w->xmat + 9 * g;
  double *R = w->xmat + 9 * b, *pb = w->xpos + 3 * b;
  MBS_FLOPS(MBS_FL_KIN_GHOSTPOSE);
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++)
      R[3 * i + j] =
          Rw[3 * i] * X[3 * j] + Rw[3 * i + 1] * X[3 * j + 1] + Rw[3 * i + 2] * X[3 * j + 2];
    pb[i] = w->xpos[3 * g + i] + Rw[3 * i] * X[9] + Rw[3 * i + 1] * X[10] + Rw[3 * i + 2] * X[11];
  }
}

// pose and velocity of owned body b from its ghost parent g's (already in w)
static void mbsp_fromGhost(mbspEngine *e, mbsWork *w, int b, int g) {
  double t[6];
  mbsp_poseFromGhost(e, w, b, g);
  mbsu_xMotion(e->Xg + 12 * b, w->cvel + 6 * g, t);
  MBS_FLOPS(MBS_FL_KIN_GHOSTVEL);
  for (int i = 0; i < 6; i++) w->cvel[6 * b + i] = e->vloc[6 * b + i] + t[i];
}

// neighbour k's segment of the pipeline: its bodies' poses and velocities (their ghost parents are
// in), packed and sent (a body with children on several ranks is finished once per segment)
static mbsErr mbsp_kinSend(mbspEngine *e, int k) {
  mbsWork *w = e->w;
  double *buf = mbsp_haloSendBuf(e->hvel, k);
  for (int j = e->dn_sadr[k]; j < e->dn_sadr[k + 1]; j++) {
    int b = e->dn_s[j], g = e->gho[b];
    if (g >= 0)
      mbsp_fromGhost(e, w, b, g);
    else // rooted at the ground on this rank: v = vloc, pose from the position stage
      memcpy(w->cvel + 6 * b, e->vloc + 6 * b, 6 * sizeof(double));
    double *o = buf + 18 * (j - e->dn_sadr[k]);
    memcpy(o, w->xmat + 9 * b, 9 * sizeof(double));
    memcpy(o + 9, w->xpos + 3 * b, 3 * sizeof(double));
    memcpy(o + 12, w->cvel + 6 * b, 6 * sizeof(double));
  }
  return mbsp_haloStartSend(e->hvel, k);
}

// Xgb = X_b Xgp for a joint about coordinate axis k (E_b: rows i, j rotated by (c, s)): 18 + 15
// flops against mbsp_compose's 60
static void mbsp_composeK(int k, const mbsReal *Xb, const mbsReal *Xgp, mbsReal *Xgb) {
  const int i = (k + 1) % 3, j = (k + 2) % 3;
  const mbsReal c = Xb[3 * i + i], s = Xb[3 * i + j];
  for (int x = 0; x < 3; x++) {
    Xgb[3 * i + x] = c * Xgp[3 * i + x] + s * Xgp[3 * j + x];
    Xgb[3 * j + x] = c * Xgp[3 * j + x] - s * Xgp[3 * i + x];
    Xgb[3 * k + x] = Xgp[3 * k + x];
  }
  mbsReal t[3];
  mbsu_mulMat3TVec(Xgp, Xb + 9, t);
  Xgb[9] = Xgp[9] + t[0], Xgb[10] = Xgp[10] + t[1], Xgb[11] = Xgp[11] + t[2];
}

// Poses (the position stage's prefix product) and velocities across ranks, after the local
// joint transforms: each rank composes, in parallel, the maps from its ghost parents to its
// bodies; chains exchange only the map of each rank's segment by a radix-k scan
// (ceil(log_k P) rounds), trees pass the boundary bodies' values down the rank tree (depth: the
// rank tree's height); then every rank finishes its own bodies.
// A chain's segment (the scan) takes its poses from its parents' in order, as the serial
// recursion does (the ghost's pose from the scan); the pipeline from the maps Xg, as the poses
// it sends down were made.
void mbsp_enginePoses(mbspEngine *e) {
  mbsWork *w = e->w;
  if (e->size == 1 || !e->ghosted) return;
  MBS_TIC(w->timer, MBS_TIMER_POSITION);
  if (e->use_scan) { // one segment below its ghost parent: every owned body
    mbs_bodyPoses(e->m, w, e->b0, e->b1);
  } else {
    for (int b = e->b0; b < e->b1; b++) {
      int g = e->gho[b];
      if (g >= 0) mbsp_poseFromGhost(e, w, b, g);
    }
  }
  MBS_TOC(w->timer, MBS_TIMER_POSITION);
}

// the position stage of the owned bodies: joints, and the poses of the bodies rooted at the
// ground on this rank (the others' need their ghost parent's: mbsp_enginePoses)
void mbsp_enginePosition(mbspEngine *e, const mbsState *s) {
  const mbsModel *m = e->m;
  mbsWork *w = e->w;
  MBS_TIC(w->timer, MBS_TIMER_POSITION);
  if (e->size == 1 || !e->ghosted) {
    for (int b = e->b0; b < e->b1; b++) mbs_bodyPosition(m, s->q, w, b);
  } else {
    for (int b = e->b0; b < e->b1; b++) {
      if (e->gho[b] < 0)
        mbs_bodyPosition(m, s->q, w, b);
      else
        mbs_bodyJoint(m, s->q, w, b);
    }
  }
  MBS_TOC(w->timer, MBS_TIMER_POSITION);
}

// the joint velocity vJ = S qd of body b
static MBS_FORCEINLINE void mbsp_jointVel(const mbsModel *m, const mbsWork *w, const mbsState *s,
                                          int b, int spec, mbsReal vJ[6]) {
  const int nd = m->body_dofnum[b], da = m->body_dofadr[b];
  for (int i = 0; i < 6; i++) vJ[i] = 0;
  if (spec) {
    vJ[m->jnt_axisk[b]] = m->jnt_axis[3 * b + m->jnt_axisk[b]] * s->qd[da];
  } else {
    for (int k = 0; k < nd; k++)
      for (int i = 0; i < 6; i++) vJ[i] += w->sdof[6 * (da + k) + i] * s->qd[da + k];
  }
}

// a chain's segment (the scan): the map of its last body from the ghost parent (or the ground),
// the velocity with the ghost's set to zero and the composed transform carried from body to body
// in registers, only the last body's stored (e->vloc, e->Xg): the scan reads nothing else (the
// poses follow the recursion, mbsp_enginePoses). The same arithmetic as the general loop.
static void mbsp_segmentMap(mbspEngine *e, const mbsState *s) {
  const mbsModel *m = e->m;
  const mbsWork *w = e->w;
  const int ghosted = m->body_parent[e->b0] >= 0;
  mbsReal v[6], t[6], Xc[12], Xt[12];
  for (int b = e->b0; b < e->b1; b++) {
    mbsReal vJ[6];
    const mbsReal *X = w->xpar + 12 * b;
    const int spec = mbs_jntSpecial(m, b);
    mbsp_jointVel(m, w, s, b, spec, vJ);
    if (b == e->b0) {
      memcpy(v, vJ, sizeof vJ);
      if (ghosted) memcpy(Xc, X, sizeof Xc);
    } else {
      if (spec) {
        const int k = m->jnt_axisk[b], i = (k + 1) % 3, j = (k + 2) % 3;
        mbsu_xMotionK(k, X[3 * i + i], X[3 * i + j], X + 9, v, t);
      } else {
        mbsu_xMotion(X, v, t);
      }
      if (spec) { // vJ = sg qd e_k: its other entries are zero
        memcpy(v, t, sizeof t);
        v[m->jnt_axisk[b]] += vJ[m->jnt_axisk[b]];
      } else {
        for (int i = 0; i < 6; i++) v[i] = t[i] + vJ[i];
      }
      if (ghosted) {
        if (spec)
          mbsp_composeK(m->jnt_axisk[b], X, Xc, Xt);
        else
          mbsp_compose(X, Xc, Xt);
        memcpy(Xc, Xt, sizeof Xc);
      }
    }
    MBS_FLOPS(mbs_flopKinMap(m, b, b > e->b0, b > e->b0 && ghosted));
  }
  const int last = e->b1 - 1;
  memcpy(e->vloc + 6 * last, v, sizeof v);
  if (ghosted) memcpy(e->Xg + 12 * last, Xc, sizeof Xc);
}

// one slice of the bound solver's factor while a round of the prefix travels (its timer: the
// factor's)
static void mbsp_engineOverlapHook(void *ctx) {
  mbspEngine *e = ctx;
  MBS_TOC(e->w->timer, MBS_TIMER_PREFIX);
  MBS_TIC(e->w->timer, MBS_TIMER_FACTOR);
  (void)e->ovl_t->prefactor(e->ovl_self, e->m, e->ovl_s, e->w, 1);
  MBS_TOC(e->w->timer, MBS_TIMER_FACTOR);
  MBS_TIC(e->w->timer, MBS_TIMER_PREFIX);
}

mbsErr mbsp_kinematics(mbspEngine *e, const mbsState *s) {
  const mbsModel *m = e->m;
  mbsWork *w = e->w;
  if (e->size > 1) {
    MBS_TIC(w->timer, MBS_TIMER_PREFIX);
    // local maps from the ghost parents (parallel, no communication): the transform Xg from
    // the ghost's frame (it gives the pose too) and the velocity with the ghost's set to zero (a
    // rank without ghost parents: its velocities alone, so the ranks below get their prefix
    // early; the rest of the velocity stage follows the prefix). The scan's last rank sends its
    // map to nobody, and its poses follow the recursion (mbsp_enginePoses): no maps there.
    const int maps = !(e->use_scan && e->rank == e->size - 1);
    if (e->use_scan && maps) mbsp_segmentMap(e, s);
    for (int b = e->b0; b < e->b1 && maps && !e->use_scan; b++) {
      int p = m->body_parent[b];
      mbsReal vJ[6], *vl = e->vloc + 6 * b;
      const mbsReal *X = w->xpar + 12 * b;
      const int spec = mbs_jntSpecial(m, b);
      mbsp_jointVel(m, w, s, b, spec, vJ);
      if (p < 0) {
        e->gho[b] = -1;
        memcpy(vl, vJ, sizeof vJ);
      } else if (p < e->b0) {
        e->gho[b] = p;
        memcpy(e->Xg + 12 * b, X, 12 * sizeof(mbsReal));
        memcpy(vl, vJ, sizeof vJ);
      } else {
        e->gho[b] = e->gho[p];
        if (spec) {
          const int k = m->jnt_axisk[b], i = (k + 1) % 3, j = (k + 2) % 3;
          mbsu_xMotionK(k, X[3 * i + i], X[3 * i + j], X + 9, e->vloc + 6 * p, vl);
        } else {
          mbsu_xMotion(X, e->vloc + 6 * p, vl);
        }
        if (spec) // vJ = sg qd e_k: its other entries are zero
          vl[m->jnt_axisk[b]] += vJ[m->jnt_axisk[b]];
        else
          for (int i = 0; i < 6; i++) vl[i] += vJ[i];
        if (e->gho[b] >= 0) {
          if (spec)
            mbsp_composeK(m->jnt_axisk[b], X, e->Xg + 12 * p, e->Xg + 12 * b);
          else
            mbsp_compose(X, e->Xg + 12 * p, e->Xg + 12 * b);
        }
      }
      MBS_FLOPS(mbs_flopKinMap(m, b, p >= e->b0, p >= e->b0 && e->gho[b] >= 0));
    }
    mbsErr err;
    if (e->use_scan) {
      double mine[30], pre[30];
      int valid = 0, last = e->b1 - 1;
      if (!maps) { // read by nobody (MBSPAR_EXSCAN=mpi may still combine it)
        memset(mine, 0, sizeof mine);
      } else if (e->gho[last] >= 0) {
        const double *Xl = e->Xg + 12 * last; // R = E^T, p = r
        for (int i = 0; i < 3; i++)
          for (int j = 0; j < 3; j++) mine[3 * i + j] = Xl[3 * j + i];
        memcpy(mine + 9, Xl + 9, 3 * sizeof(double));
        memcpy(mine + 12, Xl, 12 * sizeof(double));
        memcpy(mine + 24, e->vloc + 6 * last, 6 * sizeof(double));
      } else { // this rank's path starts at the ground: the map ignores its input
        memcpy(mine, w->xmat + 9 * last, 9 * sizeof(double));
        memcpy(mine + 9, w->xpos + 3 * last, 3 * sizeof(double));
        memset(mine + 12, 0, 12 * sizeof(double));
        memcpy(mine + 24, e->vloc + 6 * last, 6 * sizeof(double));
      }
      // the overlapped factor: the solver's slices of its factor that read the joints alone, in
      // each round's wait (mbsp_engineOverlapHook)
      e->ovl_t = e->ovl_s ? mbs_cfsSolverBound(e->c, &e->ovl_self) : NULL;
      const int ovl =
          e->ovl_t && e->ovl_t->prefactor && e->ovl_t->prefactor(e->ovl_self, m, e->ovl_s, w, -1);
      if (ovl) mbsp_commSetIdle(e->comm, mbsp_engineOverlapHook, e);
      err = mbsp_exscan(e->comm, mine, pre, 30, mbsp_kinThen, &valid);
      if (ovl) mbsp_commSetIdle(e->comm, NULL, NULL);
      MBS_TOC(w->timer, MBS_TIMER_PREFIX);
      if (err) return err;
      if (valid && e->b0 > 0) { // the ghost parent (last body of the rank above): map of ground
        int g = e->b0 - 1;
        memcpy(w->xmat + 9 * g, pre, 9 * sizeof(double));
        memcpy(w->xpos + 3 * g, pre + 9, 3 * sizeof(double));
        memcpy(w->cvel + 6 * g, pre + 24, 6 * sizeof(double));
      }
    } else {
      // the rank tree's pipeline as a data flow: each neighbour's segment goes out as soon as
      // the segments its bodies depend on are in (a rank waiting for all of its inputs before
      // sending any would chain the ranks of a depth-first partition one after another: depth
      // ~P/2 instead of the rank tree's height)
      err = mbsp_haloStartRecvs(e->hvel);
      for (int k = 0; k < e->nnbr; k++) e->kin_cnt[k] = e->kin_need[k];
      for (int k = 0; k < e->nnbr && !err; k++)
        if (e->kin_cnt[k] == 0) err = mbsp_kinSend(e, k);
      for (;;) {
        int j = -1;
        if (!err) err = mbsp_haloWaitAnyRecv(e->hvel, &j);
        if (err || j < 0) break;
        mbsp_unpackKin(e, w, j);
        for (int i = e->kin_dadr[j]; i < e->kin_dadr[j + 1] && !err; i++)
          if (--e->kin_cnt[e->kin_dep[i]] == 0) err = mbsp_kinSend(e, e->kin_dep[i]);
      }
      if (!err) err = mbsp_haloWaitSends(e->hvel);
      MBS_TOC(w->timer, MBS_TIMER_PREFIX);
      if (err) return err;
    }
    // poses of the bodies below a ghost parent (their parent's pose was unknown before); the
    // dynamics never read them, so an evaluation without forces or loops finishes them last
    // (mbsp_enginePoses), off the path to the factor
    if (!e->defer_poses) mbsp_enginePoses(e);
  }
  // every rank finishes its own bodies (parents are ready: owned ones in order, ghosts received)
  MBS_TIC(w->timer, MBS_TIMER_VELOCITY);
  for (int b = e->b0; b < e->b1; b++) mbs_bodyVelocity(m, s, w, b);
  MBS_TOC(w->timer, MBS_TIMER_VELOCITY);
  return MBS_OK;
}
