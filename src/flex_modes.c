/// \file flex_modes.c
/// `mbspar modes` on models with flexible bodies (issue 34; docs/flexible.md 7): the linearised
/// system of the serial oracle (src/flex_oracle.c) in the generalized coordinates [q; eta]
/// (n = nv + the modal coordinates), filled into the same mbsModes as the rigid models' (the
/// eigen solve, the checks and the report are theirs: src/modes.c, parallel/verb_modes.c).
/// M is the oracle's mass matrix at rest; K the central difference of the residual
/// r = -f(q, 0, eta) along each coordinate (joint coordinates on the configuration manifold by
/// mbs_integratePos, as the rigid verb; eta by plain differences, where r is affine in eta up to
/// the node frames' rotations). The columns of K split over the ranks by mbs_colSplit hooks
/// (mbs_colsplit.h): bitwise the one-rank K.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_dynamics.h"
#include "mbspar/mbs_flex.h"
#include "mbspar/mbs_flexmodes.h"
#include "mbspar/mbs_modes.h"

mbsErr mbs_flexModesCreate(const mbsModel *m, const mbsFlexOracle *o, mbsModes **md) {
  *md = NULL;
  int n = mbs_flexOracleSize(o);
  MBS_CHECK(m->nloop == 0, MBS_ERR_UNSUPPORTED,
            "modes: models with closed loops are not supported yet (docs/modes.md)");
  MBS_CHECK(n <= MBS_MODES_MAX_DOF, MBS_ERR_UNSUPPORTED,
            "modes: %d coordinates: the dense eigen solve takes at most %d", n, MBS_MODES_MAX_DOF);
  MBS_CHECK(n > 0, MBS_ERR_INPUT, "modes: the model has no degrees of freedom");
  mbsModes *d = calloc(1, sizeof *d);
  if (!d) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  *md = d;
  size_t nn = (size_t)n;
  d->n = n;
  d->h = MBS_MODES_FD_STEP;
  d->lwork = 66 * n;
  MBS_ALLOC(d->M, nn * nn);
  MBS_ALLOC(d->K, nn * nn);
  MBS_ALLOC(d->A, nn * nn);
  MBS_ALLOC(d->B, nn * nn);
  MBS_ALLOC(d->V, nn * nn);
  MBS_ALLOC(d->r, nn);
  MBS_ALLOC(d->qdd, nn);
  MBS_ALLOC(d->lambda, nn);
  MBS_ALLOC(d->zero, nn);
  MBS_ALLOC(d->col, nn);
  MBS_ALLOC(d->work, (size_t)d->lwork);
  return MBS_OK;
}

// max |A_ij| and the relative asymmetry, then A = (A + A^T) / 2
static void mbs_fmSym(int n, mbsReal *A, mbsReal *amax, mbsReal *asym) {
  mbsReal mx = 0, as = 0;
  for (size_t i = 0; i < (size_t)n * n; i++) mx = fmax(mx, fabs(A[i]));
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) {
      mbsReal a = A[(size_t)i * n + j], b = A[(size_t)j * n + i];
      as = fmax(as, fabs(a - b));
      A[(size_t)i * n + j] = A[(size_t)j * n + i] = 0.5 * (a + b);
    }
  *amax = mx, *asym = mx > 0 ? as / mx : 0;
}

mbsErr mbs_flexModesLinearise(const mbsModel *m, mbsFlexOracle *o, const mbsReal *q,
                              const mbsReal *eta, mbsModes *md) {
  return mbs_flexModesLinearisePart(m, o, q, eta, md, NULL);
}

mbsErr mbs_flexModesLinearisePart(const mbsModel *m, mbsFlexOracle *o, const mbsReal *q,
                                  const mbsReal *eta, mbsModes *md, const mbsColSplit *cs) {
  const int n = md->n, nv = m->nv, ne = n - nv;
  int j0, j1;
  mbs_colRange(cs, n, &j0, &j1);
  mbsReal *y = calloc((size_t)n + 1, sizeof *y), *qp = malloc(sizeof(mbsReal) * (m->nq + 1));
  mbsReal *ep = malloc(sizeof(mbsReal) * (size_t)(ne + 1)), *e = md->col;
  mbsErr err = y && qp && ep ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  mbsReal *M, *f;
  if (!err) err = mbs_flexOracleSystem(o, q, y, eta, &M, &f);
  if (!err) {
    memcpy(md->M, M, sizeof(mbsReal) * (size_t)n * n);
    for (int i = 0; i < n; i++) md->r[i] = -f[i];
  }
  // K column by column, this part's columns; column j stored in row j (contiguous for the
  // gather; the symmetrisation gives the same bits for K and its transpose)
  mbsReal *rp = md->A, *rm = md->B, h = md->h;
  memset(e, 0, sizeof(mbsReal) * (size_t)n);
  for (int j = j0; j < j1 && !err; j++) {
    for (int s = 0; s < 2 && !err; s++) {
      mbsReal hs = s ? -h : h, *r = s ? rm : rp;
      memcpy(qp, q, sizeof(mbsReal) * (size_t)m->nq);
      memcpy(ep, eta, sizeof(mbsReal) * (size_t)ne);
      if (j < nv) {
        e[j] = 1;
        mbs_integratePos(m, q, e, hs, qp);
        e[j] = 0;
      } else {
        ep[j - nv] += hs;
      }
      err = mbs_flexOracleSystem(o, qp, y, ep, NULL, &f);
      for (int i = 0; !err && i < n; i++) r[i] = -f[i];
    }
    for (int i = 0; !err && i < n; i++) md->K[(size_t)j * n + i] = (rp[i] - rm[i]) / (2 * h);
  }
  free(y), free(qp), free(ep);
  if (cs) err = cs->gather(cs->ctx, err, md->K, n, n); // every part's columns to every part
  MBS_CALL(err);
  mbsReal mmax;
  mbs_fmSym(n, md->M, &mmax, &md->m_asym);
  mbs_fmSym(n, md->K, &md->k_max, &md->k_asym);
  // accelerations at rest: M qdd = -r
  memcpy(md->B, md->M, sizeof(mbsReal) * (size_t)n * n);
  for (int i = 0; i < n; i++) md->qdd[i] = -md->r[i];
  if (mbs_flexCholSolve(n, md->B, md->qdd))
    return mbs_errSet(MBS_ERR_NUMERIC, "modes: the mass matrix is not positive definite");
  md->r_max = md->qdd_max = 0;
  for (int i = 0; i < n; i++) {
    md->r_max = fmax(md->r_max, fabs(md->r[i]));
    md->qdd_max = fmax(md->qdd_max, fabs(md->qdd[i]));
  }
  return MBS_OK;
}
