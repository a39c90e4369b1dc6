/// \file dynamics.c
/// Serial dynamics: kinematics stages, CRBA + LTDL, RNEA, energies (the ABAs: aba.c).
/// References: R. Featherstone, Rigid Body Dynamics Algorithms (2008), Tables 5.1, 6.2, 6.3, 7.1.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_dynamics.h"
#include "mbspar/mbs_loops.h"
#include "mbspar/mbs_critpath.h"
#include "mbspar/mbs_solvertype.h"
#include "spatial.h"
#include "body.h"
#include "flops.h"

mbsErr mbs_workCreate(const mbsModel *m, mbsWork **out) {
  mbsWork *w;
  *out = NULL;
  MBS_ALLOC(w, 1);
  size_t nb = (size_t)m->nbody, nv = (size_t)(m->nv > 0 ? m->nv : 1);
  size_t nl = (size_t)(m->nlam + m->nlam_loop > 0 ? m->nlam + m->nlam_loop : 1);
#define MBS_WALLOC(f, n)                                                                           \
  do {                                                                                             \
    w->f = calloc((n), sizeof(mbsReal));                                                           \
    if (!w->f) {                                                                                   \
      mbs_workDestroy(&w);                                                                         \
      return mbs_errSet(MBS_ERR_NOMEM, "out of memory allocating the workspace");                  \
    }                                                                                              \
  } while (0)
  MBS_WALLOC(xpar, 12 * nb);
  MBS_WALLOC(xmat, 9 * nb);
  MBS_WALLOC(xpos, 3 * nb);
  MBS_WALLOC(sdof, 6 * nv);
  MBS_WALLOC(cvel, 6 * nb);
  MBS_WALLOC(cacc, 6 * nb);
  MBS_WALLOC(cbias, 6 * nb);
  MBS_WALLOC(qfrc, nv);
  MBS_WALLOC(IA, 36 * nb);
  MBS_WALLOC(pA, 6 * nb);
  MBS_WALLOC(U, 6 * nv);
  MBS_WALLOC(Dinv, 36 * nb);
  MBS_WALLOC(u, nv);
  MBS_WALLOC(abar, (size_t)MBS_ABAR * nb);
  MBS_WALLOC(qdd, nv);
  MBS_WALLOC(acc, 6 * nb);
  MBS_WALLOC(jfrc, 6 * nb);
  MBS_WALLOC(lam, nl);
  MBS_WALLOC(frc, 6 * nb);
  MBS_WALLOC(qfrc_inv, nv);
  MBS_WALLOC(fext, 6 * nb);
#undef MBS_WALLOC
  if (m->nloop > 0) {
    mbsErr e = mbs_loopWorkCreate(m, &w->loop);
    if (e) {
      mbs_workDestroy(&w);
      return e;
    }
  }
  *out = w;
  return MBS_OK;
}

mbsErr mbs_workEnableCrba(const mbsModel *m, mbsWork *w) {
  if (w->crba_ready) return MBS_OK;
  size_t nv = (size_t)(m->nv > 0 ? m->nv : 1);
  MBS_CHECK(nv <= 46000, MBS_ERR_INPUT,
            "crba needs a dense %zu x %zu joint-space inertia; use aba for models this large", nv,
            nv);
  MBS_ALLOC(w->M, nv * nv);
  MBS_ALLOC(w->Ic, 36 * (size_t)m->nbody);
  MBS_ALLOC(w->qbias, nv);
  w->crba_ready = 1;
  return MBS_OK;
}

void mbs_workDestroy(mbsWork **pw) {
  if (!pw || !*pw) return;
  mbsWork *w = *pw;
  void *arrs[] = {w->xpar, w->xmat, w->xpos, w->sdof,  w->cvel, w->cacc,     w->cbias, w->qfrc,
                  w->IA,   w->pA,   w->U,    w->Dinv,  w->u,    w->qdd,      w->acc,   w->jfrc,
                  w->lam,  w->M,    w->Ic,   w->qbias, w->frc,  w->qfrc_inv, w->abar,  w->fext};
  mbs_loopWorkDestroy(&w->loop);
  if (w->ext_free) w->ext_free(&w->ext);
  for (size_t k = 0; k < sizeof arrs / sizeof arrs[0]; k++) free(arrs[k]);
  free(w);
  *pw = NULL;
}

// ---------------------------------------------------------------- position stage

// revolute joint about sg e_k (jnt_axisk): R, X and S are placements of cos and sin (3 flops, not
// 36)
static MBS_FORCEINLINE void mbs_bodyJointK(const int k, const mbsModel *m, const mbsReal *qall,
                                           mbsWork *w, int b) {
  const int i = (k + 1) % 3, j = (k + 2) % 3;
  const mbsReal *org = m->jnt_origin + 3 * b, sg = m->jnt_axis[3 * b + k];
  mbsReal q = qall[m->body_qadr[b]], c = cos(q), s = sg * sin(q);
  MBS_FLOPS(MBS_FL_POS_K);

  // X = (E = R^T, r): E[i][i] = E[j][j] = c, E[i][j] = s, E[j][i] = -s, E[k][k] = 1
  mbsReal *X = w->xpar + 12 * b, *S = w->sdof + 6 * m->body_dofadr[b];
  X[3 * i + i] = c, X[3 * i + j] = s, X[3 * i + k] = 0;
  X[3 * j + i] = -s, X[3 * j + j] = c, X[3 * j + k] = 0;
  X[3 * k + i] = 0, X[3 * k + j] = 0, X[3 * k + k] = 1;
  X[9] = org[0], X[10] = org[1], X[11] = org[2];
  S[0] = S[1] = S[2] = S[3] = S[4] = S[5] = 0;
  S[k] = sg;
}

// the pose in the ground frame for a revolute joint about e_k (X from mbs_bodyJointK): columns i
// and j of xmat_p rotate, column k stays (36 flops with xpos, not 63)
static MBS_FORCEINLINE void mbs_bodyPoseK(const int k, const mbsModel *m, mbsWork *w, int b) {
  const int i = (k + 1) % 3, j = (k + 2) % 3;
  const mbsReal *X = w->xpar + 12 * b, c = X[3 * i + i], s = X[3 * i + j], *org = X + 9;
  int p = m->body_parent[b];
  mbsReal *xm = w->xmat + 9 * b, *xp = w->xpos + 3 * b;
  if (p < 0) {
    for (int a = 0; a < 9; a++) xm[a] = X[3 * (a % 3) + a / 3]; // R = E^T
    xp[0] = org[0], xp[1] = org[1], xp[2] = org[2];
  } else {
    const mbsReal *pm = w->xmat + 9 * p, *pp = w->xpos + 3 * p;
    for (int a = 0; a < 3; a++) {
      const mbsReal *pr = pm + 3 * a;
      xm[3 * a + i] = c * pr[i] + s * pr[j];
      xm[3 * a + j] = c * pr[j] - s * pr[i];
      xm[3 * a + k] = pr[k];
    }
    mbsu_mulMat3Vec(pm, org, xp);
    xp[0] += pp[0], xp[1] += pp[1], xp[2] += pp[2];
    MBS_FLOPS(MBS_FL_POSE_K);
  }
}

void mbs_bodyJoint(const mbsModel *m, const mbsReal *qall, mbsWork *w, int b) {
  if (mbs_jntSpecial(m, b)) {
    switch (m->jnt_axisk[b]) {
    case 0:
      mbs_bodyJointK(0, m, qall, w, b);
      return;
    case 1:
      mbs_bodyJointK(1, m, qall, w, b);
      return;
    default:
      mbs_bodyJointK(2, m, qall, w, b);
      return;
    }
  }
  const mbsReal *q = qall + m->body_qadr[b], *a = m->jnt_axis + 3 * b;
  const mbsReal *a2 = m->jnt_axis2 + 3 * b, *org = m->jnt_origin + 3 * b;
  mbsReal R[9], r[3];
  mbsReal *S = w->sdof + 6 * m->body_dofadr[b];
  int t = m->body_jnttype[b];

  // joint rotation R (child axes in parent coordinates), translation r, subspace S
  mbs_jntType(t)->pose(org, a, a2, q, R, r, S);
  MBS_FLOPS(mbs_flopPosJoint(t));

  // Plücker transform parent -> body: E = R^T, r
  mbsReal *X = w->xpar + 12 * b;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) X[3 * i + j] = R[3 * j + i];
  X[9] = r[0], X[10] = r[1], X[11] = r[2];
}

void mbs_bodyPose(const mbsModel *m, mbsWork *w, int b) {
  if (mbs_jntSpecial(m, b)) {
    switch (m->jnt_axisk[b]) {
    case 0:
      mbs_bodyPoseK(0, m, w, b);
      return;
    case 1:
      mbs_bodyPoseK(1, m, w, b);
      return;
    default:
      mbs_bodyPoseK(2, m, w, b);
      return;
    }
  }
  // the joint rotation R = E^T and translation r from X = (E, r)
  const mbsReal *X = w->xpar + 12 * b, *r = X + 9;
  mbsReal R[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) R[3 * i + j] = X[3 * j + i];
  int p = m->body_parent[b];
  mbsReal *xm = w->xmat + 9 * b, *xp = w->xpos + 3 * b;
  if (p < 0) {
    memcpy(xm, R, sizeof R);
    memcpy(xp, r, 3 * sizeof(mbsReal));
  } else {
    const mbsReal *pm = w->xmat + 9 * p, *pp = w->xpos + 3 * p;
    mbsu_mulMat3(pm, R, xm);
    mbsu_mulMat3Vec(pm, r, xp);
    xp[0] += pp[0], xp[1] += pp[1], xp[2] += pp[2];
    MBS_FLOPS(MBS_FL_POSE);
  }
}

void mbs_bodyPoses(const mbsModel *m, mbsWork *w, int b0, int b1) {
  for (int b = b0; b < b1; b++) {
    if (!mbs_jntSpecial(m, b)) {
      mbs_bodyPose(m, w, b);
      continue;
    }
    switch (m->jnt_axisk[b]) { // inlined per axis: a chain's segment calls it once
    case 0:
      mbs_bodyPoseK(0, m, w, b);
      break;
    case 1:
      mbs_bodyPoseK(1, m, w, b);
      break;
    default:
      mbs_bodyPoseK(2, m, w, b);
    }
  }
}

void mbs_bodyPosition(const mbsModel *m, const mbsReal *qall, mbsWork *w, int b) {
  if (mbs_jntSpecial(m, b)) {
    switch (m->jnt_axisk[b]) {
    case 0:
      mbs_bodyJointK(0, m, qall, w, b), mbs_bodyPoseK(0, m, w, b);
      return;
    case 1:
      mbs_bodyJointK(1, m, qall, w, b), mbs_bodyPoseK(1, m, w, b);
      return;
    default:
      mbs_bodyJointK(2, m, qall, w, b), mbs_bodyPoseK(2, m, w, b);
      return;
    }
  }
  mbs_bodyJoint(m, qall, w, b);
  mbs_bodyPose(m, w, b);
}

void mbs_fwdPosition(const mbsModel *m, const mbsState *s, mbsWork *w) {
  MBS_TIC(w->timer, MBS_TIMER_POSITION);
  for (int b = 0; b < m->nbody; b++) mbs_bodyPosition(m, s->q, w, b);
  MBS_TOC(w->timer, MBS_TIMER_POSITION);
}

// ---------------------------------------------------------------- velocity stage

// bias force v x* I v (mbs_bodyBias: a body of small radius of gyration without the rounded zero
// term of its moment) and the applied joint forces of body b (every joint type)
static inline void mbs_bodyBiasForce(const mbsModel *m, const mbsState *s, mbsWork *w, int b) {
  int nd = m->body_dofnum[b], d0 = m->body_dofadr[b], t = m->body_jnttype[b];
  const mbsReal *v = w->cvel + 6 * b, *qd = s->qd + d0;
  mbs_bodyBias(m, b, v, w->cbias + 6 * b);
  MBS_FLOPS(MBS_FL_VEL_BIAS);

  // applied joint forces: constant + spring + damper + user
  const mbsReal *q = s->q + m->body_qadr[b];
  int scalar = mbs_jntQuatAdr(t) < 0;
  for (int k = 0; k < nd; k++) {
    int d = d0 + k;
    mbsReal f = m->dof_force[d] - m->dof_damping[d] * qd[k];
    if (scalar) f -= m->dof_stiffness[d] * (q[k] - m->dof_springref[d]);
    if (s->tau) f += s->tau[d];
    w->qfrc[d] = f;
  }
  MBS_FLOPS(mbs_flopVelForce(nd, t, s->tau != NULL));
  if (w->homog) { // the response to the external wrenches alone (mbsWork.homog)
    memset(w->cacc + 6 * b, 0, 6 * sizeof(mbsReal));
    memset(w->cbias + 6 * b, 0, 6 * sizeof(mbsReal));
    memset(w->qfrc + d0, 0, (size_t)nd * sizeof(mbsReal));
  }
}

// revolute joint about sg e_k: vJ = [sg qd e_k; 0], X v_p with a 2x2 rotation, c = v x vJ has
// four nonzero entries (its k components are exactly zero: mbs_aba relies on it)
static MBS_FORCEINLINE void mbs_bodyVelocityK(const int k, const mbsModel *m, const mbsState *s,
                                              mbsWork *w, int b) {
  const int i = (k + 1) % 3, j = (k + 2) % 3, p = m->body_parent[b];
  mbsReal wq = m->jnt_axis[3 * b + k] * s->qd[m->body_dofadr[b]];
  MBS_FLOPS(MBS_FL_VEL_JNT_K);
  mbsReal *v = w->cvel + 6 * b, *c = w->cacc + 6 * b;
  if (p < 0) {
    v[0] = v[1] = v[2] = v[3] = v[4] = v[5] = 0;
    v[k] = wq;
  } else {
    const mbsReal *X = w->xpar + 12 * b;
    mbsu_xMotionK(k, X[3 * i + i], X[3 * i + j], X + 9, w->cvel + 6 * p, v);
    v[k] += wq;
    MBS_FLOPS(MBS_FL_VEL_LNK_K);
  }
  // w x e_k = [w_j, -w_i, 0] in (i, j, k)
  c[i] = v[j] * wq, c[j] = -v[i] * wq, c[k] = 0;
  c[3 + i] = v[3 + j] * wq, c[3 + j] = -v[3 + i] * wq, c[3 + k] = 0;
  MBS_FLOPS(MBS_FL_VEL_C_K);
  mbs_bodyBiasForce(m, s, w, b);
}

void mbs_bodyVelocity(const mbsModel *m, const mbsState *s, mbsWork *w, int b) {
  if (mbs_jntSpecial(m, b)) {
    switch (m->jnt_axisk[b]) {
    case 0:
      mbs_bodyVelocityK(0, m, s, w, b);
      return;
    case 1:
      mbs_bodyVelocityK(1, m, s, w, b);
      return;
    default:
      mbs_bodyVelocityK(2, m, s, w, b);
      return;
    }
  }
  int nd = m->body_dofnum[b], d0 = m->body_dofadr[b], t = m->body_jnttype[b];
  const mbsReal *qd = s->qd + d0, *S = w->sdof + 6 * d0;
  mbsReal vJ[6] = {0, 0, 0, 0, 0, 0}, cJ[6];

  // joint velocity vJ = S qd
  if (nd == 1) {
    for (int i = 0; i < 6; i++) vJ[i] = S[i] * qd[0];
  } else {
    for (int k = 0; k < nd; k++)
      for (int i = 0; i < 6; i++) vJ[i] += S[6 * k + i] * qd[k];
  }

  // cJ = (dS/dt) qd in body coordinates (nonzero for q-dependent subspaces)
  mbs_jntType(t)->bias(m->jnt_axis2 + 3 * b, S, qd, vJ, cJ);
  MBS_FLOPS(mbs_flopVelJoint(nd, t));

  // body velocity v = X v_parent + vJ; velocity-product acceleration c = cJ + v x vJ
  int p = m->body_parent[b];
  mbsReal *v = w->cvel + 6 * b, *c = w->cacc + 6 * b, t6[6];
  if (p < 0) {
    memcpy(v, vJ, sizeof vJ);
  } else {
    mbsu_xMotion(w->xpar + 12 * b, w->cvel + 6 * p, v);
    for (int i = 0; i < 6; i++) v[i] += vJ[i];
    MBS_FLOPS(MBS_FL_VEL_LINK);
  }
  mbsu_crossMotion(v, vJ, t6);
  for (int i = 0; i < 6; i++) c[i] = cJ[i] + t6[i];
  MBS_FLOPS(MBS_FL_VEL_C);
  mbs_bodyBiasForce(m, s, w, b);
}

void mbs_fwdVelocity(const mbsModel *m, const mbsState *s, mbsWork *w) {
  MBS_TIC(w->timer, MBS_TIMER_VELOCITY);
  for (int b = 0; b < m->nbody; b++) mbs_bodyVelocity(m, s, w, b);
  MBS_TOC(w->timer, MBS_TIMER_VELOCITY);
}

// fictitious base acceleration [0; -g]
void mbs_baseAccel(const mbsModel *m, int gravity, mbsReal a0[6]) {
  a0[0] = a0[1] = a0[2] = 0;
  for (int i = 0; i < 3; i++) a0[3 + i] = gravity ? -m->gravity[i] : 0;
}

// ---------------------------------------------------------------- RNEA

void mbs_rnea(const mbsModel *m, mbsWork *w, const mbsReal *qdd) {
  int n = m->nbody;
  mbsReal a0[6];
  mbs_baseAccel(m, 1, a0);
  for (int b = 0; b < n; b++) {
    int k = m->body_dofnum[b], d0 = m->body_dofadr[b], p = m->body_parent[b];
    const mbsReal *S = w->sdof + 6 * d0;
    mbsReal *a = w->acc + 6 * b, t6[6];
    mbsu_xMotion(w->xpar + 12 * b, p < 0 ? a0 : w->acc + 6 * p, a);
    for (int i = 0; i < 6; i++) a[i] += w->cacc[6 * b + i];
    if (qdd)
      for (int j = 0; j < k; j++)
        for (int i = 0; i < 6; i++) a[i] += S[6 * j + i] * qdd[d0 + j];
    mbs_bodyInertiaMul(m, b, a, t6);
    for (int i = 0; i < 6; i++) w->frc[6 * b + i] = t6[i] + w->cbias[6 * b + i];
    if (w->fext_on) {
      for (int i = 0; i < 6; i++) w->frc[6 * b + i] -= w->fext[6 * b + i];
      MBS_FLOPS(6);
    }
    MBS_FLOPS(MBS_FL_RNEA_A + (qdd ? 12L * k : 0) + MBS_FL_RNEA_F);
  }
  for (int b = n - 1; b >= 0; b--) {
    int k = m->body_dofnum[b], d0 = m->body_dofadr[b], p = m->body_parent[b];
    const mbsReal *S = w->sdof + 6 * d0, *f = w->frc + 6 * b;
    for (int j = 0; j < k; j++) w->qfrc_inv[d0 + j] = mbsu_dot6(S + 6 * j, f);
    MBS_FLOPS(MBS_FL_DOT6 * k);
    if (p >= 0) {
      mbsReal t6[6];
      mbsu_xTForce(w->xpar + 12 * b, f, t6);
      for (int i = 0; i < 6; i++) w->frc[6 * p + i] += t6[i];
      MBS_FLOPS(MBS_FL_RNEA_PF);
    }
  }
}

// ---------------------------------------------------------------- CRBA + LTDL

mbsErr mbs_crba(const mbsModel *m, mbsWork *w) {
  MBS_CHECK(w->crba_ready, MBS_ERR_INTERNAL, "crba workspace not enabled");
  int n = m->nbody, nv = m->nv;
  mbsReal *H = w->M;

  // bias forces C(q, qd) including gravity: RNEA with zero acceleration
  mbs_rnea(m, w, NULL);
  memcpy(w->qbias, w->qfrc_inv, (size_t)nv * sizeof(mbsReal));

  // composite inertias
  for (int b = 0; b < n; b++) mbs_bodyInertiaFull(m, b, w->Ic + 36 * b);
  for (int b = n - 1; b >= 0; b--)
    if (m->body_parent[b] >= 0) {
      mbsu_inertiaCongruenceAdd(w->xpar + 12 * b, w->Ic + 36 * b, w->Ic + 36 * m->body_parent[b]);
      MBS_FLOPS(MBS_FL_CONGRUENCE);
    }

  // joint-space inertia: H_ij = S_i^T Ic_b S_j, walking F up to the ancestors
  for (int b = 0; b < n; b++) {
    int k = m->body_dofnum[b], d0 = m->body_dofadr[b];
    for (int j = 0; j < k; j++) {
      int dj = d0 + j;
      mbsReal F[6], t6[6];
      mbsu_mul6(w->Ic + 36 * b, w->sdof + 6 * dj, F);
      for (int i = 0; i < k; i++)
        H[(size_t)dj * nv + d0 + i] = mbsu_dot6(w->sdof + 6 * (d0 + i), F);
      MBS_FLOPS(MBS_FL_MUL6 + MBS_FL_DOT6 * k);
      for (int a = b; m->body_parent[a] >= 0;) {
        mbsu_xTForce(w->xpar + 12 * a, F, t6);
        memcpy(F, t6, sizeof F);
        a = m->body_parent[a];
        for (int i = 0; i < m->body_dofnum[a]; i++) {
          int di = m->body_dofadr[a] + i;
          mbsReal hij = mbsu_dot6(w->sdof + 6 * di, F);
          H[(size_t)dj * nv + di] = hij;
          H[(size_t)di * nv + dj] = hij;
        }
        MBS_FLOPS(MBS_FL_XFORCE + MBS_FL_DOT6 * m->body_dofnum[a]);
      }
    }
  }

  // LTDL factorization (Featherstone Table 6.3): H = L^T D L with the dof-tree sparsity
  const int *lam = m->dof_parent;
  for (int k = nv - 1; k >= 0; k--) {
    mbsReal hkk = H[(size_t)k * nv + k];
    if (!(hkk > 0))
      return mbs_errSet(MBS_ERR_NUMERIC, "crba: joint-space inertia is not positive definite");
    for (int i = lam[k]; i >= 0; i = lam[i]) {
      mbsReal a = H[(size_t)k * nv + i] / hkk;
      MBS_FLOPS(1);
      for (int j = i; j >= 0; j = lam[j]) {
        H[(size_t)i * nv + j] -= a * H[(size_t)k * nv + j];
        MBS_FLOPS(2);
      }
      H[(size_t)k * nv + i] = a;
    }
  }

  // solve L^T D L qdd = qfrc - qbias
  mbsReal *x = w->qdd;
  for (int i = 0; i < nv; i++) x[i] = w->qfrc[i] - w->qbias[i];
  MBS_FLOPS(nv);
  for (int i = nv - 1; i >= 0; i--)
    for (int j = lam[i]; j >= 0; j = lam[j]) {
      x[j] -= H[(size_t)i * nv + j] * x[i];
      MBS_FLOPS(2);
    }
  for (int i = 0; i < nv; i++) x[i] /= H[(size_t)i * nv + i];
  MBS_FLOPS(nv);
  for (int i = 0; i < nv; i++)
    for (int j = lam[i]; j >= 0; j = lam[j]) {
      x[i] -= H[(size_t)i * nv + j] * x[j];
      MBS_FLOPS(2);
    }

  // body accelerations and joint wrenches from the solution
  mbs_rnea(m, w, x);
  memcpy(w->jfrc, w->frc, 6 * (size_t)n * sizeof(mbsReal));
  return MBS_OK;
}

void mbs_crbaSolve(const mbsModel *m, const mbsWork *w, mbsReal *x) {
  int nv = m->nv;
  const int *lam = m->dof_parent;
  const mbsReal *H = w->M;
  for (int i = nv - 1; i >= 0; i--)
    for (int j = lam[i]; j >= 0; j = lam[j]) x[j] -= H[(size_t)i * nv + j] * x[i];
  for (int i = 0; i < nv; i++) x[i] /= H[(size_t)i * nv + i];
  for (int i = 0; i < nv; i++)
    for (int j = lam[i]; j >= 0; j = lam[j]) x[i] -= H[(size_t)i * nv + j] * x[j];
}

// ---------------------------------------------------------------- constraint directions

void mbs_bodyComplement(const mbsModel *m, const mbsWork *w, int b, mbsReal *T) {
  // only the universal joint's directions depend on q (through S); w may be NULL for the others
  int t = m->body_jnttype[b];
  const mbsReal *S = mbs_jntHasAxis2(t) ? w->sdof + 6 * m->body_dofadr[b] : NULL;
  mbs_jntType(t)->complement(m->jnt_axis + 3 * b, S, T);
}

void mbs_constraintLambda(const mbsModel *m, mbsWork *w) {
  mbsReal T[36];
  for (int b = 0; b < m->nbody; b++) {
    int nl = m->body_lamnum[b];
    mbs_bodyComplement(m, w, b, T);
    for (int j = 0; j < nl; j++)
      w->lam[m->body_lamadr[b] + j] = mbsu_dot6(T + 6 * j, w->jfrc + 6 * b);
  }
}

// ---------------------------------------------------------------- energies, integration

mbsReal mbs_kineticEnergy(const mbsModel *m, const mbsWork *w) {
  mbsReal ke = 0, t6[6];
  for (int b = 0; b < m->nbody; b++) {
    mbs_bodyInertiaMul(m, b, w->cvel + 6 * b, t6);
    ke += 0.5 * mbsu_dot6(w->cvel + 6 * b, t6);
  }
  return ke;
}

mbsReal mbs_potentialEnergy(const mbsModel *m, const mbsState *s, const mbsWork *w) {
  mbsReal pe = 0;
  for (int b = 0; b < m->nbody; b++) {
    pe += mbs_bodyGravityEnergy(m, w, b);
    if (!mbs_jntScalar(m->body_jnttype[b])) continue;
    for (int k = 0; k < m->body_dofnum[b]; k++) {
      int d = m->body_dofadr[b] + k;
      mbsReal dq = s->q[m->body_qadr[b] + k] - m->dof_springref[d];
      pe += 0.5 * m->dof_stiffness[d] * dq * dq;
    }
  }
  if (m->nforce) pe += mbs_forcePotential(m, w);
  return pe;
}

void mbs_integratePos(const mbsModel *m, const mbsReal *q, const mbsReal *qd, mbsReal h,
                      mbsReal *qout) {
  if (qout != q) memcpy(qout, q, (size_t)m->nq * sizeof(mbsReal));
  for (int b = 0; b < m->nbody; b++) {
    mbs_jntType(m->body_jnttype[b])->integrate(qout + m->body_qadr[b], qd + m->body_dofadr[b], h);
  }
}

void mbs_jointWrenchWorld(const mbsModel *m, const mbsWork *w, mbsReal *out) {
  for (int b = 0; b < m->nbody; b++) {
    mbsu_mulMat3Vec(w->xmat + 9 * b, w->jfrc + 6 * b, out + 6 * b);
    mbsu_mulMat3Vec(w->xmat + 9 * b, w->jfrc + 6 * b + 3, out + 6 * b + 3);
  }
}

mbsErr mbs_workEnableMethod(const mbsModel *m, mbsWork *w) {
  const mbsSolverType *t = mbs_solverCaps(m->opt.solver);
  if (t->work) return t->work(m, w);
  return t->dense_inertia ? mbs_workEnableCrba(m, w) : MBS_OK;
}

// crba's tree solve: the dense joint-space inertia and its LTDL factor
static mbsErr mbs_crbaTree(const mbsModel *m, mbsWork *w) {
  mbsErr e = mbs_workEnableCrba(m, w);
  return e ? e : mbs_crba(m, w);
}

// the serial baseline crba: a whole-model recursion behind mbs_forward (rank 0), no callbacks
const mbsSolverType mbs_solverCrba = {.name = "crba",
                                      .method = MBS_SOLVER_CRBA,
                                      .baseline = 1,
                                      .cpa_graph = MBS_CPA_GRAPH_CRBA,
                                      .dense_inertia = 1,
                                      .semidef_bodies = 1,
                                      .cpa_build = mbs_cpaCrbaGraph,
                                      .tree = mbs_crbaTree};

mbsErr mbs_forward(const mbsModel *m, mbsState *s, mbsWork *w) {
  MBS_TIC(w->timer, MBS_TIMER_EVAL);
  mbs_fwdPosition(m, s, w);
  mbs_fwdVelocity(m, s, w);
  if (m->nforce || m->nloop || w->fext_on) mbs_fwdForces(m, w); // spring-dampers -> w->fext
  const mbsSolverType *t = mbs_solverFind(m->opt.solver);
  mbsErr e = t && t->tree ? t->tree(m, w)
                          : mbs_errSet(MBS_ERR_UNSUPPORTED,
                                       "solver.method \"%s\" is not available in the serial core",
                                       mbs_solverName(m->opt.solver));
  // closed loops: the loop constraint forces on top of the tree solution (docs/loops.md 3)
  if (!e && m->nloop && !(t && t->loops_inside)) e = mbs_loopSolve(m, w);
  w->stat.method = m->opt.solver;
  w->stat.evals++;
  MBS_TOC(w->timer, MBS_TIMER_EVAL);
  return e;
}
