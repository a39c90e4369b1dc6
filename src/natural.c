/// \file natural.c
/// The natural-coordinate formulation of seed 004, dense reference (include/mbspar/mbs_natural.h,
/// docs/natural.md; the pieces in natural_rows.c). The system is built at the state of the joint
/// formulation's position and velocity stages and solved whole: LU of the tree's [M Gᵀ; G 0],
/// the closure rows in the range space with constraint partitioning.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_loops.h"
#include "natural_private.h"
#include "spatial.h"

mbsErr mbs_naturalAccelDense(const mbsModel *m, const mbsState *st, mbsWork *w, mbsReal *qdd,
                             mbsNaturalInfo *info) {
  MBS_CHECK(!m->sub, MBS_ERR_UNSUPPORTED,
            "model.formulation = natural: the dense reference needs the whole model");
  int nb = m->nbody, np = 12 * nb, nrt = 6 * nb + m->nlam, n = np + nrt, nl = m->nlam_loop;
  mbsNat s;
  memset(&s, 0, sizeof s);
  s.n = n, s.np = np, s.nrt = nrt;
  double *Z = NULL, *S = NULL, *r = NULL, *mu = NULL, *G = NULL;
  int *piv = NULL;
  s.A = calloc((size_t)n * (size_t)n, sizeof(double));
  s.b = calloc((size_t)n, sizeof(double));
  s.L = calloc((size_t)nl * (size_t)np + 1, sizeof(double));
  s.gl = calloc((size_t)nl + 1, sizeof(double));
  s.p = calloc((size_t)np + 1, sizeof(double));
  s.pd = calloc((size_t)np + 1, sizeof(double));
  piv = malloc(sizeof(int) * (size_t)n);
  Z = calloc((size_t)nl * (size_t)n + 1, sizeof(double));
  S = calloc((size_t)nl * (size_t)nl + 1, sizeof(double));
  r = calloc((size_t)nl + 1, sizeof(double));
  mu = calloc((size_t)nl + 1, sizeof(double));
  G = info ? malloc(sizeof(double) * (size_t)(nrt + nl) * (size_t)(np + 1)) : NULL;
  mbsErr e = s.A && s.b && s.L && s.gl && s.p && s.pd && piv && Z && S && r && mu && (G || !info)
                 ? MBS_OK
                 : mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  if (e) goto done;
  s.f = s.b;
  mbs_fwdPosition(m, st, w);
  mbs_fwdVelocity(m, st, w);
  if (m->nforce) mbs_fwdForces(m, w); // spring-dampers -> w->fext

  mbs_natCoords(m, w, &s);     // (docs/natural.md 1)
  mbs_natDenseBodies(m, &s);   // mass blocks, gravity, rigid-body rows (2.1-2.3)
  e = mbs_natForces(m, w, &s); // external wrenches, joint forces (2.2)
  if (e) goto done;
  // joint constraints (3), then the cut joints (loops)
  for (int b = 0; b < nb; b++) mbs_natJoint(m, w, &s, b);
  for (int k = 0; k < m->nloop; k++) mbs_natLoop(m, &s, k);
  if (s.row != nrt + nl) {
    e = mbs_errSet(MBS_ERR_INTERNAL, "natural: %d constraint rows, expected %d", s.row, nrt + nl);
    goto done;
  }
  if (info) // keep G and γ for the residual
    for (int q = 0; q < nrt + nl; q++) {
      double *g = G + (size_t)q * (size_t)(np + 1);
      if (q < nrt) {
        memcpy(g, s.A + (size_t)(np + q) * (size_t)n, sizeof(double) * (size_t)np);
        g[np] = s.b[np + q];
      } else {
        memcpy(g, s.L + (size_t)(q - nrt) * (size_t)np, sizeof(double) * (size_t)np);
        g[np] = s.gl[q - nrt];
      }
    }
  if (mbs_natFactor(s.A, piv, n)) {
    e = mbs_errSet(MBS_ERR_NUMERIC, "natural: the augmented matrix [M G'; G 0] is singular");
    goto done;
  }
  mbs_natSolve(s.A, piv, n, s.b); // the tree's p̈ (and multipliers), then the loops
  int rank =
      mbs_natLoopSolve(&s, nl, m->opt.rank_tol > 0 ? m->opt.rank_tol : 1e-10, piv, Z, S, r, mu);
  if (rank < 0) {
    e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    goto done;
  }
  if (info) {
    double res = 0, gmax = 1;
    for (int q = 0; q < nrt + nl; q++) {
      const double *g = G + (size_t)q * (size_t)(np + 1);
      double v = -g[np];
      for (int j = 0; j < np; j++) v += g[j] * s.b[j];
      res = fmax(res, fabs(v)), gmax = fmax(gmax, fabs(g[np]));
    }
    double vres = 0, vmax = 1e-300;
    for (int q = 0; q < nrt + nl; q++) {
      const double *g = G + (size_t)q * (size_t)(np + 1);
      double v = 0;
      for (int j = 0; j < np; j++) v += g[j] * s.pd[j];
      vres = fmax(vres, fabs(v));
    }
    for (int j = 0; j < np; j++) vmax = fmax(vmax, fabs(s.pd[j]));
    info->vel_residual = vres / vmax;
    info->np = np, info->nrigid = 6 * nb, info->njoint = m->nlam + nl;
    info->nredundant = nl - rank;
    info->acc_residual = res / gmax;
  }

  { // q̈ from p̈ (4)
    double res = mbs_natQdd(m, w, &s, s.b, qdd);
    if (info) info->qdd_residual = res;
  }

done:
  free(s.A), free(s.b), free(s.L), free(s.gl), free(s.p), free(s.pd);
  free(piv), free(Z), free(S), free(r), free(mu), free(G);
  return e;
}
