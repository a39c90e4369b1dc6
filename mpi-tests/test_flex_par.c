/// \file test_flex_par.c
/// Flexible models over the ranks (parallel/flex_par.c, src/flex_part.c; docs/flexible.md 11;
/// issue 34): on random trees and chains of 6 to 11 rigid and flexible bodies (flex_gen.h: every
/// joint type, beams with 0-3 modes, tip and mid nodes, children on nodes, damping, stiffening
/// on and off), at a random modal state,
/// (a) the distributed ydd at this run's rank count equals the dense oracle's
///     (mbs_flexOracleAccel) to 1e-9, the joint block and the modal block each relative to its
///     largest entry (as test_flex_aba (c)), and the serial recursive algorithm's to 1e-9;
/// (b) rank 0 also splits the model into 2, 3 and 4 parts in-process (the parts' contributions
///     summed by hand) and checks the same bounds, so every rank count's split is checked at
///     every np;
/// (c) the ranges' energies summed (mbsp_flexParEnergy) equal the oracle's to 1e-12 relative.
#include <stdlib.h>
#include "mbs_test.h"
#include "flex_gen.h"
#include "flex_par.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_flex.h"

// the split into P parts in this process: ydd (N)
static mbsErr splitHere(const mbsModel *m, int P, const double *q, const double *y,
                        const double *eta, double *ydd, int *ncut) {
  mbsFlexPart *pt[4] = {NULL, NULL, NULL, NULL};
  mbsErr e = MBS_OK;
  double *sum = NULL;
  int n = 0;
  for (int r = 0; r < P && !e; r++) e = mbs_flexPartCreate(m, P, r, pt + r);
  double *bufs[4] = {NULL, NULL, NULL, NULL};
  for (int r = 0; r < P && !e; r++) {
    e = mbs_flexPartLocal(pt[r], q, y, eta, bufs + r, &n);
    if (!e && !sum) sum = calloc((size_t)n + 1, sizeof(double));
    if (!e && !sum) e = MBS_ERR_NOMEM;
    for (int i = 0; !e && i < n; i++) sum[i] += bufs[r][i];
  }
  for (int r = 0; r < P && !e; r++) { // every part solves the summed system
    memcpy(bufs[r], sum, sizeof(double) * (size_t)n);
    e = mbs_flexPartFinish(pt[r], q, y, ydd);
  }
  if (!e) {
    int b0, b1;
    long u;
    mbs_flexPartInfo(pt[0], &b0, &b1, ncut, &u);
  }
  free(sum);
  for (int r = 0; r < P; r++) mbs_flexPartDestroy(pt + r);
  return e;
}

int main(int argc, char **argv) {
  mbspComm *comm = NULL;
  if (mbsp_init(&argc, &argv, &comm)) {
    fprintf(stderr, "MPI init failed: %s\n", mbs_errMsg());
    return 1;
  }
  int P = mbsp_size(comm), rank = mbsp_rank(comm);
  enum { NB = 12, CAP = 1 << 16 };
  Body B[NB];
  char *t1 = malloc(CAP);
  double wpar = 0, waba = 0, wsplit = 0, wsa = 0, wen = 0, scale = 0;
  int ncuts = 0, nsplit = 0, ntrial = 0, nflex = 0, nnode = 0;
  for (int trial = 0; t1 && trial < 16; trial++) {
    int chain = trial % 3 == 0, nb = 6 + trial % (NB - 6);
    gen(B, nb, chain, 2);
    for (int b = 0; b < nb; b++) nflex += B[b].flex, nnode += B[b].onnode > 0;
    MBS_EXPECT(text(B, nb, 0, t1, CAP) == 0, "text");
    mbsModel *m = mbs_test_buildText(t1);
    MBS_EXPECT(m != NULL, "trial %d: model", trial);
    if (!m) break;
    mbsFlexOracle *o = NULL;
    mbsFlexAba *a = NULL;
    mbspFlexPar *fp = NULL;
    MBS_EXPECT_OK(mbs_flexOracleCreate(m, &o));
    MBS_EXPECT_OK(mbs_flexAbaCreate(m, &a));
    MBS_EXPECT_OK(mbsp_flexParCreate(comm, m, &fp));
    int N = o ? mbs_flexOracleSize(o) : 0, nv = m->nv;
    double *y = calloc((size_t)N + 1, sizeof(double)), *eta = calloc((size_t)N + 1, sizeof(double));
    double *yo = calloc((size_t)N + 1, sizeof(double)), *ya = calloc((size_t)N + 1, sizeof(double));
    double *yp = calloc((size_t)N + 1, sizeof(double)), *ys = calloc((size_t)N + 1, sizeof(double));
    if (o && a && fp && y && eta && yo && ya && yp && ys) {
      memcpy(y, m->qd0, sizeof(double) * (size_t)nv);
      for (int k = nv; k < N; k++) y[k] = sym(0.3), eta[k - nv] = sym(0.01); // same on every rank
      MBS_EXPECT_OK(mbs_flexOracleAccel(o, m->q0, y, eta, yo));
      MBS_EXPECT_OK(mbs_flexAbaAccel(a, m->q0, y, eta, ya));
      MBS_EXPECT_OK(mbsp_flexParAccel(fp, m->q0, y, eta, yp));
      int rk, nc, nif;
      long ev, un;
      mbsp_flexParInfo(fp, &rk, &nc, &nif, &ev, &un);
      ncuts += nc, ntrial++;
      for (int k = 0; k < N; k++) scale = fmax(scale, fabs(yo[k]));
      if (rank == 0) {
        wpar = fmax(wpar, blockDiff(yp, yo, N, nv));
        waba = fmax(waba, blockDiff(yp, ya, N, nv));
        for (int parts = 2; parts <= 4; parts++) {
          int c = 0;
          MBS_EXPECT_OK(splitHere(m, parts, m->q0, y, eta, ys, &c));
          wsplit = fmax(wsplit, blockDiff(ys, yo, N, nv)), nsplit += c;
          wsa = fmax(wsa, blockDiff(ys, ya, N, nv));
        }
      }
      double ko, po, kp, pp;
      MBS_EXPECT_OK(mbs_flexOracleEnergy(o, m->q0, y, eta, &ko, &po));
      MBS_EXPECT_OK(mbsp_flexParEnergy(fp, m->q0, y, eta, &kp, &pp));
      wen = fmax(wen, fmax(fabs(kp - ko), fabs(pp - po)) / (fabs(ko) + fabs(po)));
    }
    free(y), free(eta), free(yo), free(ya), free(yp), free(ys);
    mbsp_flexParDestroy(&fp), mbs_flexAbaDestroy(&a), mbs_flexOracleDestroy(&o);
    mbs_modelDestroy(&m);
  }
  free(t1);
  if (rank == 0) {
    printf("np=%d: %d models (%d flexible bodies, %d children on nodes), %d cut joints at this "
           "rank count, %d in the 2-4 part splits; largest |ydd| %.3g\n",
           P, ntrial, nflex, nnode, ncuts, nsplit, scale);
    printf("(a) distributed against the dense oracle: %.2e (bound 1e-9); against the serial "
           "recursive algorithm: %.2e (1e-9)\n",
           wpar, waba);
    printf("(b) 2, 3, 4 parts in one process against the dense oracle: %.2e (1e-9); against the "
           "serial recursive algorithm: %.2e (1e-9)\n",
           wsplit, wsa);
    printf("(c) energies of the ranges summed against the oracle's: %.2e (1e-12)\n", wen);
    MBS_EXPECT(ntrial == 16 && nsplit > 20 && nnode > 5, "coverage: %d models, %d cuts", ntrial,
               nsplit);
    MBS_EXPECT(wpar < 1e-9 && waba < 1e-9, "(a) %g %g", wpar, waba);
    MBS_EXPECT(wsplit < 1e-9 && wsa < 1e-9, "(b) %g %g", wsplit, wsa);
  }
  MBS_EXPECT(wen < 1e-12, "(c) %g", wen);
  long fails = mbs_test_fail;
  mbsp_allreduceSumLong(comm, &fails, 1);
  if (rank == 0)
    printf("test_flex_par np=%d: %s (%ld failure(s) over all ranks)\n", P,
           fails ? "FAILED" : "all checks passed", fails);
  mbsp_finalize(&comm);
  return fails ? 1 : 0;
}
