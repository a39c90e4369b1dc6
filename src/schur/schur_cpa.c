/// \file schur_cpa.c
/// The critical-path graph of the exact distributed solver schur (src/schur.c,
/// parallel/schur_par.c): its own kinematics with ghost stages, the set-up and the entry points
/// (mbs_cpaSchurGraph, mbs_cpaSchurLoops); one tree solve (the per-rank factors, the interface
/// and the back-substitutions, one node per call site of the kernels) is in schur_cpa_solve.c.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpa_private.h"
#include "schur_cpa_private.h"

// ---------------------------------------------------------------- the exact solver (schur)

// a node on rank `rank` (distributed graphs; -1: the body's owner), never merged at block or body
// grain unless phases are given
int mbs_cpaNodeOn(mbsCpaB *B, int kind, int body, long long flops, int pblk, int pbdy, int rank) {
  int v = mbs_cpaNode(B, kind, body, flops, pblk, pbdy);
  if (v >= 0 && B->o->ranks >= 1 && rank >= 0) B->proc[v] = rank;
  return v;
}

// a point-to-point message of `bytes` (time alpha + bytes beta, no processor)
int mbs_cpaMsg(mbsCpaB *B, double bytes, int from) {
  int v = mbs_cpaNode(B, MBS_CPA_MSG_HALO, -1, 0, -1, -1);
  if (v < 0) return v;
  B->cost[v] = B->o->latency + bytes / B->o->bandwidth;
  B->proc[v] = -2;
  mbs_cpaDep(B, from, v);
  return v;
}

// ceil(log_k P): the rounds of a radix-k scan or dissemination over P ranks (k < 2 counts as 2)
int mbs_cpaLogK(int P, int k) {
  int n = 0;
  for (long d = 1; d < P; d *= k < 2 ? 2 : k) n++;
  return n;
}

// ceil(log2 P)
int mbs_cpaLog2(int P) {
  return mbs_cpaLogK(P, 2);
}

enum { PH_KMAP = 1000000, PH_SLAM };

// mbs_bodyPosition and mbs_bodyVelocity of body b on rank `rank` (-1: its owner); state: the node
// the joint state comes from (-1: input); pp, vp: the parent's pose and velocity nodes (-1: none
// read); own: 1 for the owner's stages (merged at block/body grain), 0 for a ghost copy
static void mbs_cpaBodyPos(mbsCpaB *B, int b, int rank, int state, int pp, int own, int *joint,
                           int *pose) {
  const mbsModel *m = B->m;
  int pb = own ? PH_POS : -1, pd = own ? 0 : -1;
  *joint = mbs_cpaNodeOn(B, MBS_CPA_POS_JOINT, b, mbs_flopPosBody(m, b), pb, pd, rank);
  mbs_cpaDep(B, state, *joint);
  *pose = *joint;
  if (m->body_parent[b] >= 0) {
    *pose = mbs_cpaNodeOn(B, MBS_CPA_POS_POSE, b, mbs_flopPoseBody(m, b), pb, pd, rank);
    mbs_cpaDep(B, *joint, *pose);
    mbs_cpaDep(B, pp, *pose);
  }
}
static void mbs_cpaBodyVel(mbsCpaB *B, int b, int rank, int joint, int vp, int own, int *v, int *c,
                           int *bias, int *force) {
  const mbsModel *m = B->m;
  int pb = own ? PH_VEL : -1, pd = own ? 0 : -1;
  int t = m->body_jnttype[b], nd = m->body_dofnum[b];
  int vj = mbs_cpaNodeOn(B, MBS_CPA_VEL_JOINT, b, mbs_flopVelJointBody(m, b), pb, pd, rank);
  mbs_cpaDep(B, joint, vj);
  *v = vj;
  if (m->body_parent[b] >= 0) {
    *v = mbs_cpaNodeOn(B, MBS_CPA_VEL_LINK, b, mbs_flopVelLinkBody(m, b), pb, pd, rank);
    mbs_cpaDep(B, vp, *v);
    mbs_cpaDep(B, joint, *v);
    mbs_cpaDep(B, vj, *v);
  }
  *c = mbs_cpaNodeOn(B, MBS_CPA_VEL_C, b, mbs_flopVelCBody(m, b), pb, pd, rank);
  mbs_cpaDep(B, *v, *c);
  mbs_cpaDep(B, vj, *c);
  *bias = mbs_cpaNodeOn(B, MBS_CPA_VEL_BIAS, b, MBS_FL_VEL_BIAS, pb, pd, rank);
  mbs_cpaDep(B, *v, *bias);
  *force =
      mbs_cpaNodeOn(B, MBS_CPA_VEL_FORCE, b, mbs_flopVelForce(nd, t, B->o->has_tau), pb, pd, rank);
  mbs_cpaDep(B, joint, *force);
}

// node of body l's joint transform / joint force as seen from rank r
int mbs_cpaSeen(const mbsCpaB *B, const int *own, const int *ghost, int l, int r) {
  return (B->o->ranks < 1 || B->owner[l] == r || ghost[l] < 0) ? own[l] : ghost[l];
}

void mbs_cpaSchFree(mbsCpaSch *X) {
  for (int r = 0; X->R && r < X->P; r++) {
    mbs_schurRankDestroy(&X->R[r].rk);
    free(X->R[r].vsys), free(X->R[r].vexp);
  }
  free(X->start), free(X->R), free(X->map), free(X->IAw), free(X->pAw), free(X->proj);
  free(X->done), free(X->stn), free(X->acc), free(X->lam), free(X->spv), free(X->gho);
  free(X->gbuf), free(X->kmsg), free(X->fwdn), free(X->pjoint);
  memset(X, 0, sizeof *X);
}

// the remote children's stages on their parent's rank (schur_par.c mbsp_schurSolve, in every tree
// solve): the joint state message, then mbs_bodyPosition and mbs_bodyVelocity
// (a local solve, B->smask: the states of the last full solve, no message, the masked ranks)
void mbs_cpaSchGhosts(mbsCpaB *B, const mbsCpaKin *K, mbsCpaSch *X) {
  const mbsModel *m = B->m;
  int P = X->P;
  const mbsCpaRank *R = X->R;
  mbsCpaGhost G = X->G;
  for (int r = 0; P > 1 && r < P; r++) {
    const mbsCpaRank *rr = R + r;
    if (B->smask && !B->smask[r]) continue;
    for (int b = rr->b0; b < rr->b1; b++)
      for (int k = 0; k < m->body_childnum[b]; k++) {
        int g = m->child_list[m->body_childadr[b] + k];
        if (g < rr->b1) continue;
        int st = B->smask ? -1 : mbs_cpaMsg(B, 13 * sizeof(double), -1);
        mbs_cpaBodyPos(B, g, r, st, K->pose[b], 0, &G.joint[g], &G.pose[g]);
        mbs_cpaBodyVel(B, g, r, G.joint[g], K->v[b], 0, &G.v[g], &G.c[g], &G.bias[g], &G.force[g]);
      }
  }
}

// the ghost poses (parallel/engine.c mbsp_enginePoses): after the solve without loops and
// spring-dampers (deferred), else in the kinematics
static void mbs_cpaSchPoses(mbsCpaB *B, mbsCpaSch *X) {
  int P = X->P, use_scan = X->use_scan, defer = X->defer;
  const mbsCpaRank *R = X->R;
  const int *map = X->map, *gho = X->gho, *kmsg = X->kmsg, *fwdn = X->fwdn;
  for (int r = 0; P > 1 && r < P; r++) {
    const mbsCpaRank *rr = R + r;
    if (!rr->ghosted) continue;
    int prev = -1; // a chain's segment: the pose recursion from the ghost's (mbs_bodyPose)
    for (int b = rr->b0; b < rr->b1; b++) {
      if (gho[b] < 0) continue;
      int pg = B->cls;
      B->cls = MBS_CPA_CLASS_KIN;
      int pn = mbs_cpaNode(B, MBS_CPA_KIN_GHOST, b,
                           use_scan ? mbs_flopPoseBody(B->m, b) : MBS_FL_KIN_GHOSTPOSE, -1, -1);
      B->cls = pg;
      mbs_cpaDep(B, use_scan ? prev : map[b], pn);
      mbs_cpaDep(B, use_scan ? rr->kin_in : kmsg[fwdn[b]], pn);
      if (defer) mbs_cpaDep(B, rr->if_end, pn);
      prev = pn;
    }
  }
}

// the overlapped factor (src/schur/schur_pre.c): body b's inertia part (1/D, the congruence into
// the parent, the spike's P and Theta; at the path's last body its start) after the rank's local
// maps and on the position stage's joints, in the prefix's waits; its bias part (u, pa, the
// spike's gam, the port's known force) after the kinematics, as the rest of the factor
int mbs_cpaPreBody(mbsCpaB *B, const mbsCpaKin *K, mbsCpaSch *X, int r, const mbsSchur *s, int b,
                   int *spk) {
  if (b < X->R[r].b1 - X->R[r].pre_n) return 0;
  const mbsModel *m = B->m;
  int lb = b - s->s0, ci = s->body_comp[lb], p = m->body_parent[b];
  const mbsSchurComp *cp = s->comp + ci;
  long long fi = mbs_flopAba(m, b, MBS_FLA_U) - MBS_FL_ABA_UBIAS + mbs_flopAba(m, b, MBS_FLA_IA) +
                 mbs_flopAba(m, b, MBS_FLA_CONGR) + mbs_flopAba(m, b, MBS_FLA_CONGR_ACC);
  long long fb = MBS_FL_ABA_UBIAS + mbs_flopAba(m, b, MBS_FLA_PA) + mbs_flopAba(m, b, MBS_FLA_XF) +
                 mbs_flopAba(m, b, MBS_FLA_XF_ACC);
  int l = -1;
  if (s->onpath[lb]) {
    fi += mbs_flopSpikeSpec(cp->nc) - mbs_flopSpikeSpecBias(cp->nc);
    fb += mbs_flopSpikeSpecBias(cp->nc);
    if (b == cp->last) {
      l = s->port_body[cp->p0];
      long long f0 = mbs_flopSpathStart(0, 0, m->body_dofnum[l]);
      fi += mbs_flopSpathStart(m->body_lamnum[l], mbs_flopSchurT(m, s, l), m->body_dofnum[l]) - f0;
      fb += f0;
    }
  }
  int in = mbs_cpaNode(B, MBS_CPA_ABA_IA, b, fi, PH_P2, 1);
  mbs_cpaDep(B, X->R[r].pre_dep, in);
  mbs_cpaDep(B, X->pjoint[b], in);
  mbs_cpaDep(B, X->IAw[b], in); // the children's inertia parts (and the spike's P before b)
  if (l >= 0) mbs_cpaDep(B, X->pjoint[l], in);
  mbs_cpaDep(B, X->IAw[p], in);
  X->IAw[p] = in;
  int bi = mbs_cpaNode(B, MBS_CPA_ABA_PA, b, fb, PH_P2, 1);
  mbs_cpaDep(B, in, bi);
  mbs_cpaDep(B, K->c[b], bi);
  mbs_cpaDep(B, K->force[b], bi);
  mbs_cpaDep(B, X->pAw[b], bi);
  if (l >= 0) mbs_cpaDep(B, mbs_cpaSeen(B, K->force, X->G.force, l, r), bi);
  if (s->onpath[lb]) mbs_cpaDep(B, spk[ci], bi), spk[ci] = bi;
  mbs_cpaDep(B, X->pAw[p], bi);
  X->pAw[p] = bi;
  X->proj[b] = X->done[b] = bi;
  return 1;
}

// setup, kinematics and the first tree solve's ghost stages
mbsErr mbs_cpaSchBegin(mbsCpaB *B, mbsCpaKin *K, mbsCpaSch *X) {
  const mbsModel *m = B->m;
  const mbsCpaOptions *o = B->o;
  int n = m->nbody, P = o->ranks > 1 ? o->ranks : 1, nseg = o->threads > 1 ? o->threads : 1;
  mbsErr e = MBS_OK;
  size_t nb = (size_t)n + 1;
  memset(X, 0, sizeof *X);
  X->P = P;
  int *start = X->start = malloc(((size_t)P + 1) * sizeof *start);
  mbsCpaRank *R = X->R = calloc((size_t)P, sizeof *R);
  int *map = X->map = malloc(nb * sizeof *map), *IAw = X->IAw = malloc(nb * sizeof *IAw);
  int *pAw = X->pAw = malloc(nb * sizeof *pAw), *proj = X->proj = malloc(nb * sizeof *proj);
  int *done = X->done = malloc(nb * sizeof *done), *stn = X->stn = malloc(nb * sizeof *stn);
  int *acc = X->acc = malloc(nb * sizeof *acc), *lam = X->lam = malloc(nb * sizeof *lam);
  int *spv = X->spv = malloc(nb * sizeof *spv), *gho = X->gho = malloc(nb * sizeof *gho);
  int *gbuf = X->gbuf = malloc(6 * nb * sizeof *gbuf), *kmsg = X->kmsg = malloc(nb * sizeof *kmsg);
  int *fwdn = X->fwdn = malloc(nb * sizeof *fwdn);
  mbsCpaGhost G;
  if (!start || !R || !map || !IAw || !pAw || !proj || !done || !stn || !acc || !lam || !spv ||
      !gho || !gbuf || !kmsg || !fwdn)
    return mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  G.joint = gbuf, G.pose = gbuf + nb, G.v = gbuf + 2 * nb, G.c = gbuf + 3 * nb;
  G.bias = gbuf + 4 * nb, G.force = gbuf + 5 * nb;
  for (size_t i = 0; i < 6 * nb; i++) gbuf[i] = -1;
  for (int b = 0; b < n; b++) {
    map[b] = IAw[b] = proj[b] = done[b] = stn[b] = acc[b] = lam[b] = spv[b] = -1;
    kmsg[b] = fwdn[b] = -1;
  }
  if (P == 1) {
    start[0] = 0, start[1] = n;
  } else if ((e = mbs_partitionModel(m, P, start))) {
    return e;
  }
  for (int r = 0; r < P && !e; r++) {
    mbsCpaRank *rr = R + r;
    rr->b0 = start[r], rr->b1 = start[r + 1];
    rr->fac_end = rr->if_end = rr->kin_in = -1;
    e = mbs_schurRankCreate(m, rr->b0, rr->b1, nseg, &rr->rk);
    if (!e) {
      int nv = rr->rk->view.ncomp + 1;
      rr->vsys = malloc((size_t)nv * sizeof(int)), rr->vexp = malloc((size_t)nv * sizeof(int));
      if (!rr->vsys || !rr->vexp) e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
      for (int c = 0; c < nv && !e; c++) rr->vsys[c] = rr->vexp[c] = -1;
    }
    for (int b = rr->b0; b < rr->b1; b++) {
      int p = m->body_parent[b];
      if (p >= 0 && p < rr->b0) rr->ghosted = 1;
    }
  }
  if (e) return e;
  // the engine's choice: the kinematics prefix by a scan when every rank owns one path segment
  int use_scan = P > 1;
  for (int r = 0; r < P && use_scan; r++) {
    const mbsCpaRank *rr = R + r;
    for (int b = rr->b0; b < rr->b1 && use_scan; b++)
      if (m->body_parent[b] != b - 1 || (b + 1 < rr->b1 && m->body_childnum[b] != 1)) use_scan = 0;
    if (use_scan && rr->b1 < n)
      for (int b = rr->b0; b < rr->b1 && use_scan; b++)
        for (int k = 0; k < m->body_childnum[b]; k++)
          if (m->child_list[m->body_childadr[b] + k] >= rr->b1 && b != rr->b1 - 1) use_scan = 0;
  }
  // ... and schur_par.c's: the cut-joint scan when every rank is one chain element
  int chain = P > 1;
  for (int r = 0; r < P && chain; r++) {
    const mbsSchur *v = &R[r].rk->view;
    if (!(v->ncomp == 1 && v->nport <= 1))
      chain = 0;
    else if (v->comp[0].up && B->owner[m->body_parent[v->comp[0].root]] != r - 1)
      chain = 0;
    else if (v->nport == 1 && B->owner[v->port_body[0]] != r + 1)
      chain = 0;
  }
  // the measurement switches of the engine (MBSPAR_PREFIX=pipeline, MBSPAR_SCHUR_MERGE=tree)
  const char *pm = getenv("MBSPAR_PREFIX"), *sm = getenv("MBSPAR_SCHUR_MERGE");
  if (pm && !strcmp(pm, "pipeline")) use_scan = 0;
  if (sm && (!strcmp(sm, "tree") || !strcmp(sm, "pass"))) chain = 0;
  int defer = m->nforce == 0 && m->nloop == 0;
  X->G = G, X->use_scan = use_scan, X->chain = chain, X->defer = defer;
  X->radix = mbs_scanRadix();

  // ---- kinematics (parallel/engine.c mbsp_engineForward, mbsp_kinematics)
  B->cls = MBS_CPA_CLASS_KIN;
  for (int b = 0; b < n; b++) K->joint[b] = K->pose[b] = K->v[b] = -1;
  for (int r = 0; r < P; r++) {
    const mbsCpaRank *rr = R + r;
    for (int b = rr->b0; b < rr->b1; b++) {
      int p = m->body_parent[b];
      gho[b] = P < 2 || p < 0 ? -1 : (p < rr->b0 ? p : gho[p]);
      if (gho[b] >= 0) { // below a ghost parent: the joint alone (engine.c mbsp_enginePosition)
        K->joint[b] = K->pose[b] =
            mbs_cpaNodeOn(B, MBS_CPA_POS_JOINT, b, mbs_flopPosBody(m, b), PH_POS, 0, -1);
        continue;
      }
      mbs_cpaBodyPos(B, b, -1, -1, p >= rr->b0 ? K->pose[p] : -1, 1, &K->joint[b], &K->pose[b]);
    }
    // local maps from the ghost parents (ranks without: the velocities alone); none on the
    // scan's last rank (its map goes to nobody)
    if (P > 1 && use_scan && r == P - 1)
      for (int b = rr->b0; b < rr->b1; b++) {
        int p = m->body_parent[b];
        fwdn[b] = p < 0 ? -1 : (p < rr->b0 ? b : fwdn[p]);
        map[b] = -1;
      }
    else if (P > 1)
      for (int b = rr->b0; b < rr->b1; b++) {
        int p = m->body_parent[b], lp = p >= rr->b0;
        fwdn[b] = p < 0 ? -1 : (p < rr->b0 ? b : fwdn[p]); // the body below the ghost parent
        map[b] = mbs_cpaNode(B, MBS_CPA_KIN_MAP, b, mbs_flopKinMap(m, b, lp, lp && gho[b] >= 0),
                             PH_KMAP, PH_KMAP);
        mbs_cpaDep(B, K->joint[b], map[b]);
        if (lp) mbs_cpaDep(B, map[p], map[b]);
      }
    else
      for (int b = rr->b0; b < rr->b1; b++) gho[b] = -1;
  }
  if (P > 1 && use_scan) {
    // the exclusive scan of the ranks' maps (comm.c mbsp_exscan, radix k): per round rank r
    // joins the windows received from r - jd in front of its prefix and its inclusive value
    int *inc = malloc((size_t)P * sizeof(int)), *pre = malloc((size_t)P * sizeof(int));
    if (!inc || !pre) {
      free(inc), free(pre);
      e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
      return e;
    }
    for (int r = 0; r < P; r++) {
      int last = R[r].b1 - 1;
      inc[r] = map[last];  // the record of the rank's segment
      if (!R[r].ghosted) { // rooted at the ground: its last pose and velocity
        inc[r] = mbs_cpaNodeOn(B, MBS_CPA_KIN_SCAN, R[r].b0, 0, -1, -1, -1);
        mbs_cpaDep(B, K->pose[last], inc[r]);
        mbs_cpaDep(B, map[last], inc[r]);
      }
      pre[r] = -1;
    }
    e = mbs_cpaKinScan(B, R, P, X->radix, inc, pre);
    for (int r = 0; r < P; r++) R[r].kin_in = pre[r];
    free(inc), free(pre);
    if (e) return e;
  } else if (P > 1) {
    // pipeline as a data flow (mbsp_kinematics): per rank, each neighbour's segment goes out as
    // soon as the messages with its bodies' ghost parents are in (halo hvel: one message per pair
    // of ranks, 18 doubles per boundary body and neighbour)
    int *msgq = malloc((size_t)P * sizeof(int)), *nsq = malloc((size_t)P * sizeof(int));
    int *touched = malloc((size_t)P * sizeof(int));
    if (!msgq || !nsq || !touched) {
      free(msgq), free(nsq), free(touched);
      e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
      return e;
    }
    for (int q = 0; q < P; q++) msgq[q] = -1, nsq[q] = 0;
    for (int r = 0; r < P; r++) {
      const mbsCpaRank *rr = R + r;
      int nt = 0;
      for (int b = rr->b0; b < rr->b1; b++) {
        const int *ch = m->child_list + m->body_childadr[b];
        for (int k = 0; k < m->body_childnum[b]; k++) {
          if (ch[k] < rr->b1) continue;
          int q = B->owner[ch[k]], seen = 0;
          for (int k2 = 0; k2 < k; k2++) seen |= ch[k2] >= rr->b1 && B->owner[ch[k2]] == q;
          if (seen) continue;
          int val;
          if (gho[b] >= 0) { // mbsp_fromGhost
            val = mbs_cpaNodeOn(B, MBS_CPA_KIN_GHOST, b, MBS_FL_KIN_GHOSTPOSE + MBS_FL_KIN_GHOSTVEL,
                                -1, -1, -1);
            mbs_cpaDep(B, kmsg[fwdn[b]], val); // the message with its ghost parent
            mbs_cpaDep(B, map[b], val);
          } else {
            val = map[b];
          }
          if (msgq[q] < 0) {
            msgq[q] = mbs_cpaMsg(B, 0, val);
            touched[nt++] = q;
          }
          mbs_cpaDep(B, val, msgq[q]);
          mbs_cpaDep(B, K->pose[b], msgq[q]);
          nsq[q]++;
        }
      }
      for (int i = 0; i < nt; i++) {
        int q = touched[i];
        if (msgq[q] >= 0)
          B->cost[msgq[q]] = o->latency + 18.0 * sizeof(double) * nsq[q] / o->bandwidth;
        for (int b = R[q].b0; b < R[q].b1; b++) {
          int p = m->body_parent[b];
          if (p >= rr->b0 && p < rr->b1) kmsg[b] = msgq[q];
        }
        msgq[q] = -1, nsq[q] = 0;
      }
    }
    free(msgq), free(nsq), free(touched);
  }
  // every rank finishes its own velocities (a ghost parent's from the prefix)
  for (int r = 0; r < P; r++) {
    const mbsCpaRank *rr = R + r;
    for (int b = rr->b0; b < rr->b1; b++) {
      int p = m->body_parent[b], vp = -1;
      if (p >= rr->b0)
        vp = K->v[p];
      else if (p >= 0)
        vp = use_scan ? rr->kin_in : kmsg[b];
      mbs_cpaBodyVel(B, b, -1, K->joint[b], vp, 1, &K->v[b], &K->c[b], &K->bias[b], &K->force[b]);
    }
  }
  if (!defer) mbs_cpaSchPoses(B, X);
  mbs_cpaSchGhosts(B, K, X);
  // on P ranks, each rank runs its kinematics (its pipeline sends, the ghost copies) before its
  // factor, as the engine's program order does: the factor reads the kinematics through one
  // node per rank (without it, a list schedule could hold back a rank's sends behind its own
  // factor and starve the ranks that wait for them)
  // the overlapped factor (parallel/schur_par.c mbsp_schurPre, docs/formulation.md 4.4): on a
  // chain scanned both ways with one segment per rank, without loops, P >= 3 unless
  // MBSPAR_OVERLAP says otherwise, each rank's last bodies' inertia parts in the prefix's
  // ceil(log2 P) rounds, MBSPAR_OVERLAP_BODIES (48) bodies a round: after the rank's local
  // maps, on the joints of the position stage (the split: mbs_schurPreCount)
  const char *ov = getenv("MBSPAR_OVERLAP"), *ob = getenv("MBSPAR_OVERLAP_BODIES");
  int per = ob ? atoi(ob) : MBS_SCHUR_PRE_BODIES, ovl = ov ? atoi(ov) != 0 : P >= 3;
  if (ovl && per > 0 && P > 1 && use_scan && chain && nseg == 1 && m->nloop == 0) {
    if (!(X->pjoint = malloc(nb * sizeof(int))))
      return mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
    for (int b = 0; b < n; b++) X->pjoint[b] = -1;
    long want = (long)mbs_cpaLog2(P) * per;
    for (int r = 0; r < P; r++) {
      mbsCpaRank *rr = R + r;
      int cap = MBS_SCHUR_PRE_CAP < want ? MBS_SCHUR_PRE_CAP : (int)want;
      rr->pre_n = mbs_schurPreCount(m, rr->rk->seg[0], cap);
      rr->pre_dep = map[rr->b1 - 1];
      for (int b = rr->b1 - rr->pre_n; b < rr->b1; b++) X->pjoint[b] = K->joint[b];
      if (rr->b1 < n && G.joint[rr->b1] >= 0) X->pjoint[rr->b1] = G.joint[rr->b1];
    }
  }
  if (o->ranks >= 1) {
    int *kend = malloc((size_t)P * sizeof(int));
    if (!kend) {
      e = mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
      return e;
    }
    int nk = B->n;
    for (int r = 0; r < P; r++)
      kend[r] = mbs_cpaNodeOn(B, MBS_CPA_KIN_GHOST, R[r].b0, 0, -1, -1, -1);
    for (int v = 0; v < nk && !B->err; v++)
      if (B->proc[v] >= 0) mbs_cpaDep(B, v, kend[B->proc[v]]);
    for (int b = 0; b < n; b++) {
      int k = kend[B->owner[b]];
      K->joint[b] = K->c[b] = K->bias[b] = K->force[b] = k;
      if (G.joint[b] >= 0) {
        int kg = kend[B->owner[m->body_parent[b]]];
        G.joint[b] = G.force[b] = kg;
      }
    }
    free(kend);
  }

  return e;
}
// a loop model: schur's own kinematics, then the loop evaluation's m + 2 schur solves
mbsErr mbs_cpaSchurLoops(mbsCpaB *B, mbsCpaKin *K) {
  mbsCpaSch X;
  mbsErr e = mbs_cpaSchBegin(B, K, &X);
  B->sch = &X;
  B->cls = MBS_CPA_CLASS_DYN;
  if (!e) e = mbs_cpaLoops(B, K, MBS_CPA_GRAPH_SCHUR);
  B->sch = NULL;
  mbs_cpaSchFree(&X);
  return e;
}

mbsErr mbs_cpaSchurGraph(mbsCpaB *B, mbsCpaKin *K) {
  mbsCpaSch X;
  mbsErr e = mbs_cpaSchBegin(B, K, &X);
  if (!e) e = mbs_cpaSchSolve(B, K, &X, 0, 0);
  if (!e && X.defer) mbs_cpaSchPoses(B, &X);
  mbs_cpaSchFree(&X);
  return e;
}
