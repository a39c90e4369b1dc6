/// \file flex_cpa.c
/// The critical-path graph of the recursive flexible algorithm (src/flex_aba.c, mbspar cpa on a
/// model with flexible bodies; docs/cpa.md "Flexible models"): per body one node for each of its
/// kernels — pass 1 (root to leaves) flex.kin (joint pose, node frame, twists, P, c) and
/// flex.body (the body's own M_b, h_b over its quadrature points), pass 2 (leaves to root)
/// flex.condense (U, D, its Cholesky, W, v: the joint's dofs and the modal coordinates eliminated)
/// and flex.transfer (P^T Ia P, P^T pa into the parent's, the children's transfers chained in
/// body order as the code adds them), pass 3 (root to leaves) flex.acc. Node costs: flex_flops.h,
/// the counts of flex_aba.c's MBS_FLOPS call sites (so T1 equals the counted flops of
/// mbs_flexAbaAccel; test_flex_cpa), with the node frames' rotations below 0.1 rad (the series
/// branch of mbs_foRotvec; 10 flops fewer per node frame above). With ranks (cpa --procs): the
/// distributed elimination's graph instead (src/flex_part_cpa.c).
#include <stdlib.h>
#include <string.h>
#include "cpa_private.h"
#include "flex_flops.h"
#include "flex_private.h"
#include "mbspar/mbs_flex.h"

mbsErr mbs_cpaFlexCosts(const mbsModel *m, int *nz, long long *kin, long long *body) {
  const mbsFlexSet *set = m->flex;
  int n = m->nbody;
  int *g = calloc((size_t)n + 1, sizeof(int));
  mbsErr e = g ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  // each body's size and own work: a flexible body's from its quadrature points
  for (int b = 0; !e && b < n; b++) {
    const mbsFlexBody *fb = mbs_flexSetFind(set, b);
    nz[b] = 6 + (fb ? fb->modal.m : 0);
    if (!fb) {
      body[b] = MBS_FL_FA_BODY_RIGID;
      continue;
    }
    mbsFoBody fo = {0};
    e = mbs_foPoints(fb, &fo);
    if (!e) {
      long nnzx = 0;
      for (long i = 0; i < (long)fo.np * fo.nax * fb->modal.m; i++) nnzx += fo.phix[i] != 0;
      g[b] = fo.G != NULL;
      body[b] = mbs_flopFaBodyFlex(fb->modal.m, fo.np, g[b], 0) + 3LL * nz[b] * nnzx;
    }
    mbs_foBodyFree(&fo);
  }
  for (int b = 0; !e && b < n; b++) { // pass 1's kinematics: joint, frame, node frame
    int p = m->body_parent[b], nd = m->body_dofnum[b], np = p < 0 ? 0 : nz[p];
    int node = p >= 0 && mbs_flexSetFind(set, p) ? mbs_flexSetAttachedNode(set, b) : -1;
    kin[b] = mbs_flopFaJoint(m, b) + mbs_flopFaKin(nd, np, node >= 0) +
             (node >= 0 ? mbs_flopFaNode(nz[p] - 6, g[p], 1) : 0);
  }
  free(g);
  return e;
}

mbsErr mbs_cpaFlexGraph(mbsCpaB *B, mbsCpaKin *K) {
  (void)K; // the rigid kinematics' nodes are not used: pass 1 is flex.kin
  const mbsModel *m = B->m;
  int n = m->nbody;
  size_t nb = (size_t)n + 1;
  int *nz = calloc(nb, sizeof(int)), *kin = malloc(nb * sizeof(int));
  int *IAw = malloc(nb * sizeof(int)), *cond = malloc(nb * sizeof(int));
  int *acc = malloc(nb * sizeof(int));
  long long *body = calloc(nb, sizeof(long long)), *kc = calloc(nb, sizeof(long long));
  mbsErr e = nz && kin && IAw && cond && acc && body && kc
                 ? MBS_OK
                 : mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  if (!e) e = mbs_cpaFlexCosts(m, nz, kc, body);
  const char *meth = mbs_solverName(B->o->method);
  if (!e && (!strcmp(meth, "direct") || !strcmp(meth, "jcg") || !strcmp(meth, "gs") ||
             !strcmp(meth, "sor") || !strcmp(meth, "jacobi") ||
             !strcmp(meth, "chebyshev"))) { // flex_cfs_cpa.c
    e = mbs_cpaFlexCfsGraph(B, nz, kc, body);
    n = 0;                             // (not the recursive algorithm's graph)
  } else if (!e && B->o->ranks >= 1) { // the distributed elimination (flex_part_cpa.c)
    e = mbs_cpaFlexPartGraph(B, nz, kc, body);
    n = 0;
  }
  for (int b = 0; !e && b < n; b++) { // pass 1
    int p = m->body_parent[b];
    B->cls = MBS_CPA_CLASS_KIN;
    kin[b] = mbs_cpaNode(B, MBS_CPA_FLEX_KIN, b, kc[b], PH_POS, 0);
    if (p >= 0) mbs_cpaDep(B, kin[p], kin[b]);
    B->cls = MBS_CPA_CLASS_DYN;
    IAw[b] = mbs_cpaNode(B, MBS_CPA_FLEX_BODY, b, body[b], PH_VEL, 0);
    mbs_cpaDep(B, kin[b], IAw[b]);
  }
  for (int b = n - 1; !e && b >= 0; b--) { // pass 2
    int p = m->body_parent[b], nd = m->body_dofnum[b], nu = nd + nz[b] - 6;
    int scalar = mbs_jntQuatAdr(m->body_jnttype[b]) < 0;
    cond[b] = mbs_cpaNode(B, MBS_CPA_FLEX_CONDENSE, b, mbs_flopFaCondense(nz[b], nd, nu, scalar),
                          PH_P2, 1);
    mbs_cpaDep(B, IAw[b], cond[b]);
    mbs_cpaDep(B, kin[b], cond[b]);
    if (p < 0) continue;
    int t = mbs_cpaNode(B, MBS_CPA_FLEX_TRANSFER, b, mbs_flopFaTransfer(nu, nz[p]), PH_P2, 1);
    mbs_cpaDep(B, cond[b], t);
    mbs_cpaDep(B, kin[b], t);
    mbs_cpaDep(B, IAw[p], t);
    IAw[p] = t;
  }
  for (int b = 0; !e && b < n; b++) { // pass 3
    int p = m->body_parent[b], nd = m->body_dofnum[b], nu = nd + nz[b] - 6;
    acc[b] =
        mbs_cpaNode(B, MBS_CPA_FLEX_ACC, b, mbs_flopFaAcc(nd, nu, p < 0 ? 0 : nz[p]), PH_P3, 2);
    mbs_cpaDep(B, cond[b], acc[b]);
    if (p >= 0) mbs_cpaDep(B, acc[p], acc[b]);
  }
  free(nz), free(kin), free(IAw), free(cond), free(acc), free(body), free(kc);
  return e;
}
