/// \file test_flex_cfs.c
/// The constraint-force system with flexible bodies (src/flex_cfs.c, parallel/flex_cfs_par.c;
/// docs/flexible.md 13; issue 34) at this run's rank count (CTest: 1, 2, 3, 4), each rank owning
/// a contiguous body range: on random trees and chains of rigid and flexible bodies (flex_gen.h:
/// every joint type, beams with 0-3 modes, tip and mid nodes, children on nodes, damping,
/// stiffening on and off), at a random modal state, ydd by each method equals the dense oracle's
/// (mbs_flexOracleAccel) to 1e-9, the joint block and the modal block each relative to its
/// largest entry (as test_flex_aba (c)):
/// (a) direct, jcg and petsc (KSP CG on the operator) on 16 models of 6 to 11 bodies (as
/// test_flex_par: with larger ones the dense
///     oracle's own difference to the recursive algorithm nears 1e-9);
/// (b) gs and sor (block, on the assembled A) and chebyshev on 8 models of 3 to 6 bodies, jacobi
///     on the 4 of them with 3 or 4 bodies (the stationary methods need 10^4 to 3 10^5 sweeps:
///     small models only, docs/flexible.md 13.3).
#include <stdlib.h>
#include "mbs_test.h"
#include "flex_gen.h"
#include "flex_cfs_par.h"
#include "petsc_ref.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_flex.h"

int main(int argc, char **argv) {
  mbspComm *comm = NULL;
  if (mbsp_init(&argc, &argv, &comm)) {
    fprintf(stderr, "MPI init failed: %s\n", mbs_errMsg());
    return 1;
  }
  int P = mbsp_size(comm), rank = mbsp_rank(comm);
  int petsc = mbsp_petscVersion()[0] != 0; // built with PETSc: petsc is checked too
  if (petsc && mbsp_petscInitialize(&argc, &argv)) {
    fprintf(stderr, "PETSc init failed: %s\n", mbs_errMsg());
    return 1;
  }
  enum { NB = 12, CAP = 1 << 16 };
  Body B[NB];
  char *t1 = malloc(CAP);
  double worst[MBS_FCFS_NMETHOD] = {0}, wa[MBS_FCFS_NMETHOD] = {0}, wo = 0;
  int ntrial[MBS_FCFS_NMETHOD] = {0}, itmax[MBS_FCFS_NMETHOD] = {0}, nflex = 0, nnode = 0;
  int nmodal = 0;
  for (int trial = 0; t1 && trial < 24; trial++) {
    int small = trial >= 16, chain = trial % 3 == 0;
    int nb = small ? 3 + trial % 4 : 6 + trial % (NB - 6);
    gen(B, nb, chain, 2);
    for (int b = 0; b < nb; b++) nflex += B[b].flex, nnode += B[b].onnode > 0;
    MBS_EXPECT(text(B, nb, 0, t1, CAP) == 0, "text");
    mbsModel *m = mbs_test_buildText(t1);
    MBS_EXPECT(m != NULL, "trial %d: model", trial);
    if (!m) break;
    mbsFlexOracle *o = NULL;
    mbsFlexCfs *f = NULL;
    mbsFlexAba *a = NULL;
    MBS_EXPECT_OK(mbs_flexAbaCreate(m, &a));
    MBS_EXPECT_OK(mbs_flexOracleCreate(m, &o));
    MBS_EXPECT_OK(mbs_flexCfsCreate(m, &f));
    if (f) MBS_EXPECT_OK(mbsp_flexCfsBind(comm, f, m));
    int N = o ? mbs_flexOracleSize(o) : 0, nv = m->nv;
    double *y = calloc((size_t)N + 1, sizeof(double)), *eta = calloc((size_t)N + 1, sizeof(double));
    double *yo = calloc((size_t)N + 1, sizeof(double)), *yc = calloc((size_t)N + 1, sizeof(double));
    double *ya = calloc((size_t)N + 1, sizeof(double));
    if (o && f && a && y && eta && yo && yc && ya) {
      nmodal += N - nv;
      memcpy(y, m->qd0, sizeof(double) * (size_t)nv);
      for (int k = nv; k < N; k++) y[k] = sym(0.3), eta[k - nv] = sym(0.01);
      MBS_EXPECT_OK(mbs_flexOracleAccel(o, m->q0, y, eta, yo));
      MBS_EXPECT_OK(mbs_flexAbaAccel(a, m->q0, y, eta, ya));
      wo = fmax(wo, blockDiff(ya, yo, N, nv));
      for (int k = 0; k < MBS_FCFS_NMETHOD; k++) {
        int stationary = k >= MBS_FCFS_GS && k != MBS_FCFS_PETSC, it = 0;
        if (stationary != small || (k == MBS_FCFS_JACOBI && nb > 4)) continue;
        if (k == MBS_FCFS_PETSC && !petsc) continue;
        memset(yc, 0, sizeof(double) * (size_t)N);
        mbsErr e = mbsp_flexCfsSolve(comm, f, k, 1e-14, m->q0, y, eta, yc, &it);
        MBS_EXPECT(e == MBS_OK, "trial %d %s: %s", trial, mbs_flexCfsName(k), mbs_errMsg());
        double d = blockDiff(yc, yo, N, nv);
        MBS_EXPECT(d < 1e-9, "trial %d (%d bodies) %s: %.3e", trial, nb, mbs_flexCfsName(k), d);
        worst[k] = fmax(worst[k], d), ntrial[k]++;
        wa[k] = fmax(wa[k], blockDiff(yc, ya, N, nv));
        if (it > itmax[k]) itmax[k] = it;
      }
    }
    free(y), free(eta), free(yo), free(yc), free(ya);
    mbs_flexCfsDestroy(&f), mbs_flexOracleDestroy(&o), mbs_flexAbaDestroy(&a);
    mbs_modelDestroy(&m);
  }
  free(t1);
  if (rank == 0) printf("np=%d: ", P);
  if (rank == 0)
    printf("%d flexible bodies, %d children on nodes, %d modal coordinates in all\n", nflex, nnode,
           nmodal);
  for (int k = 0; rank == 0 && k < MBS_FCFS_NMETHOD; k++)
    printf("%-6s against the dense oracle: %.2e over %d models (bound 1e-9; the recursive "
           "algorithm: %.2e), at most %d iterations\n",
           mbs_flexCfsName(k), worst[k], ntrial[k], wa[k], itmax[k]);
  if (rank == 0)
    printf("(the recursive algorithm against the dense oracle on the same models: %.2e)\n", wo);
  MBS_EXPECT(ntrial[0] == 16 && ntrial[1] == 16 && ntrial[2] == 8 && ntrial[3] == 8 &&
                 ntrial[4] == 4 && ntrial[5] == 8 && ntrial[6] == (petsc ? 16 : 0),
             "coverage");
  MBS_EXPECT(nnode > 5 && nmodal > 20, "coverage: %d nodes %d modal", nnode, nmodal);
  long fails = mbs_test_fail;
  mbsp_allreduceSumLong(comm, &fails, 1);
  if (rank == 0)
    printf("test_flex_cfs np=%d: %s (%ld failure(s) over all ranks)\n", P,
           fails ? "FAILED" : "all checks passed", fails);
  if (petsc) mbsp_petscFinalize();
  mbsp_finalize(&comm);
  return fails ? 1 : 0;
}
