/// \file flex_hybrid.c
/// Driven joints in the recursive flexible algorithm (src/flex_aba.c) and its split over parts
/// (src/flex_part.c): hybrid dynamics (Featherstone, *Rigid Body Dynamics Algorithms*, 2008,
/// 9.2) with flexible bodies (docs/flexible.md 9). A driven joint's acceleration a_D is known: its
/// dofs leave the body's free directions (pass 2 condenses only the body's modal coordinates,
/// mbs_faNd), and S a_D joins the joint's bias c (mbs_faKin), so pass 3's a' = P zdot_p + c is
/// the body frame's whole acceleration. The driving force is what the joint must transmit
/// beyond its applied force, spring and damper: with f_b = IA_b zdot_b + pA_b the force the
/// parent transmits to b (section 10; the articulated quantities, children included, and on a
/// part the bottom cuts' forces in pA), S_b^T f_b = tau_applied + tau_D.
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_flex.h"
#include "mbspar/mbs_joint.h"
#include "mbspar/mbs_model.h"
#include "flex_private.h"
#include "flops.h"

mbsErr mbs_flexAbaDrive(mbsFlexAba *a, const int *dof, int k) {
  const mbsModel *m = a->m;
  free(a->drv), free(a->acD);
  a->drv = NULL, a->acD = a->tauD = NULL;
  if (k <= 0) return MBS_OK;
  size_t nv = (size_t)m->nv + 1;
  a->drv = calloc((size_t)m->nbody + 1, 1);
  a->acD = calloc(2 * nv, sizeof(mbsReal));
  if (!a->drv || !a->acD) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  a->tauD = a->acD + nv;
  unsigned char *on = calloc(nv, 1);
  if (!on) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  for (int j = 0; j < k; j++)
    if (dof[j] >= 0 && dof[j] < m->nv) on[dof[j]] = 1;
  mbsErr e = MBS_OK;
  for (int b = 0; b < m->nbody && !e; b++) {
    int d0 = m->body_dofadr[b], nd = m->body_dofnum[b], cnt = 0;
    for (int i = 0; i < nd; i++) cnt += on[d0 + i];
    if (cnt && cnt != nd)
      e = mbs_errSet(MBS_ERR_UNSUPPORTED,
                     "flexible recursive algorithm: body \"%s\": %d of its joint's %d dofs "
                     "driven (all or none)",
                     m->body_name[b], cnt, nd);
    a->drv[b] = cnt > 0;
  }
  free(on);
  return e;
}

mbsReal *mbs_flexAbaDriveAcc(mbsFlexAba *a) {
  return a->acD;
}

const mbsReal *mbs_flexAbaDriveForce(const mbsFlexAba *a) {
  return a->tauD;
}

void mbs_faOut(mbsFlexAba *a, int b, const mbsReal *q, const mbsReal *y, const mbsReal *ud,
               mbsReal *ydd) {
  const mbsModel *m = a->m;
  int nd = m->body_dofnum[b], d0 = m->body_dofadr[b], n = a->nz[b], ne = mbs_faNd(a, b);
  for (int j = 0; j < n - 6; j++) ydd[a->col[b] + j] = ud[ne + j];
  if (ne == nd) {
    for (int k = 0; k < nd; k++) ydd[d0 + k] = ud[k];
    return;
  }
  // driven: the prescribed accelerations; tau_D = S^T (IA zdot + pA)_6 - the applied forces
  const mbsReal *IA = a->IA + a->oq[b], *pA = a->pA + a->ov[b], *zd = a->zd + a->ov[b];
  const mbsReal *Sw = a->S + 36 * b, *qb = q + m->body_qadr[b];
  int scalar = mbs_jntQuatAdr(m->body_jnttype[b]) < 0;
  mbsReal f[6];
  for (int i = 0; i < 6; i++) {
    mbsReal t = pA[i];
    for (int j = 0; j < n; j++) t += IA[i * n + j] * zd[j];
    f[i] = t;
  }
  for (int k = 0; k < nd; k++) {
    int dd = d0 + k;
    mbsReal t = -(m->dof_force[dd] - m->dof_damping[dd] * y[dd]);
    if (scalar) t += m->dof_stiffness[dd] * (qb[k] - m->dof_springref[dd]);
    for (int i = 0; i < 6; i++) t += Sw[6 * k + i] * f[i];
    ydd[dd] = a->acD[dd], a->tauD[dd] = t;
  }
  MBS_FLOPS(12L * n + 16L * nd);
}
