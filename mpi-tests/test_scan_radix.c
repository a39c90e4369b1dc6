/// \file test_scan_radix.c
/// The radix-k scans over the ranks (docs/formulation.md 3.3, 4.4; k = mbsp_scanRadix, the
/// environment's MBSPAR_SCAN_RADIX or MBS_SCAN_RADIX): CTest runs this at 5 ranks with the
/// default radix (8: a single round with up to four windows per side) and with k = 2, 3 and 4
/// (ceil(log_k 5) = 3, 2, 2 rounds, up to one, two and three windows per side).
///  - mbsp_exscan of a non-commutative operator whose arithmetic is exact (affine maps
///    x -> a x + b with a = +-1 and small integers b, composed "a then b"): every rank's prefix
///    equals the serial composition of the ranks below it, entry by entry (==);
///  - schur on a 300-link revolute chain (the cut-joint scan and the kinematics prefix): q̈ (to
///    1e-10: this chain amplifies rounding) and λ (1e-12) against the serial ABA oracle, and the
///    interface rounds the solver reports
///    (largest over the ranks) equal to ceil(log_k P);
///  - the split error agreement (radix-k dissemination rounds): the largest code and the lowest
///    failing rank's message on every rank, for every failing rank and pairs of them.
/// Every rank agrees on the failure count.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_engine.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_schur.h"
#include "mbs_test.h"

static mbspComm *comm;

// rank r's map: x -> a x + b
static void mapOf(int r, double *x) {
  x[0] = (r * 7 + 3) % 5 < 2 ? -1.0 : 1.0;
  x[1] = (double)((r * 13 + 5) % 11) - 5.0;
}
// b <- "a then b": x -> b0 (a0 x + a1) + b1
static void thenAffine(const double *a, double *b) {
  double c0 = b[0] * a[0], c1 = b[0] * a[1] + b[1];
  b[0] = c0, b[1] = c1;
}

static void check_exscan(int P, int rank) {
  double mine[2], pre[2] = {-99, -99}, ref[2] = {1, 0};
  int valid = -1;
  mapOf(rank, mine);
  MBS_EXPECT_OK(mbsp_exscan(comm, mine, pre, 2, thenAffine, &valid));
  for (int q = 0; q < rank; q++) {
    double x[2];
    mapOf(q, x);
    thenAffine(ref, x); // x <- ref then x
    ref[0] = x[0], ref[1] = x[1];
  }
  MBS_EXPECT(valid == (rank > 0), "rank %d: valid %d", rank, valid);
  if (rank > 0)
    MBS_EXPECT(pre[0] == ref[0] && pre[1] == ref[1],
               "P=%d rank %d: prefix (%g, %g) != serial (%g, %g)", P, rank, pre[0], pre[1], ref[0],
               ref[1]);
}

static void check_chain(int P, int k) {
  const char *cfg = "model = { chain = { n = 300; joint = \"revolute\"; axis = [0, 1, 0]; "
                    "direction = [0, 0, -1]; length = 0.02; mass = 0.01; q0 = 0.01; qd0 = 0.5; "
                    "}; };";
  mbsConfig *c;
  mbsModel *m;
  MBS_EXPECT_OK(mbs_configParse(cfg, "radix.cfg", NULL, 0, &c));
  MBS_EXPECT_OK(mbs_configBuildModel(c, &m));
  mbsState *s;
  mbsWork *wo;
  MBS_EXPECT_OK(mbs_test_abaOracle(m, &s, &wo));
  m->opt.solver = MBS_SOLVER_SCHUR;
  mbspEngine *e;
  if (!mbsp_engineCreate(comm, m, MBSP_HALO_P2P, &e)) {
    double *qdd = calloc((size_t)m->nv + 1, sizeof(double));
    double *lam = calloc((size_t)m->nlam + 1, sizeof(double));
    double *jf = calloc(6 * (size_t)m->nbody, sizeof(double));
    MBS_EXPECT_OK(mbsp_engineForward(e, s));
    MBS_EXPECT_OK(mbsp_engineGather(e, qdd, lam, jf));
    double r = mbsp_engineWork(e)->stat.iface_rounds;
    MBS_EXPECT_OK(mbsp_allreduceMax(comm, &r, 1));
    int want = 0;
    for (int d = 1; d < P; d *= k) want++; // ceil(log_k P)
    if (mbsp_rank(comm) == 0) {
      double dq = mbs_test_relDiff(qdd, wo->qdd, m->nv, 1e-300);
      double dl = mbs_test_relDiff(lam, wo->lam, m->nlam, 1e-300);
      printf("chain 300, radix %d, np=%d: qdd %.2e, lambda %.2e rel diff to ABA, %d interface "
             "rounds\n",
             k, P, dq, dl, (int)r);
      // this chain's q̈ amplifies the kinematics' rounding ~1e4-fold (k = 2, the scan of before:
      // 2.8e-12 at 5 ranks); a wrong window or merge order is off by O(1)
      MBS_EXPECT(dq <= 1e-10 && dl <= 1e-12, "radix %d: rel diff to ABA qdd %.3e lambda %.3e", k,
                 dq, dl);
      MBS_EXPECT((int)r == want, "radix %d, %d ranks: %d interface rounds, not %d", k, P, (int)r,
                 want);
    }
    free(qdd), free(lam), free(jf);
    mbsp_engineDestroy(&e);
  } else {
    MBS_EXPECT(0, "engine create failed: %s", mbs_errMsg());
  }
  mbs_workDestroy(&wo);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&m);
  mbs_configDestroy(&c);
}

// the split error agreement (mbsp_agreeErrStart .. End, radix-k dissemination): no rank failing,
// one failing rank at each position, and two at distance 2 with different codes: every rank gets
// the largest code and the lowest failing rank's message
static void check_agree(int P, int rank) {
  for (int f = -1; f < P; f++)
    for (int two = 0; two < 2 && (two == 0 || (f >= 0 && P > 2)); two++) {
      const int f2 = two ? (f + 2) % P : -1;
      mbsErr local = MBS_OK;
      if (rank == f) local = mbs_errSet(MBS_ERR_NUMERIC, "failed at rank %d", rank);
      if (rank == f2) local = mbs_errSet(MBS_ERR_IO, "failed at rank %d", rank);
      MBS_EXPECT_OK(mbsp_agreeErrStart(comm, local));
      mbsErr got = mbsp_agreeErrEnd(comm);
      mbsErr want = f >= 0 ? MBS_ERR_NUMERIC : MBS_OK; // the larger code (5 > 3)
      MBS_EXPECT(got == want, "agree P=%d f=%d f2=%d rank %d: code %d, want %d", P, f, f2, rank,
                 (int)got, (int)want);
      if (want) {
        char msg[64];
        snprintf(msg, sizeof msg, "failed at rank %d", f2 >= 0 && f2 < f ? f2 : f);
        MBS_EXPECT(strstr(mbs_errMsg(), msg) != NULL, "agree P=%d f=%d f2=%d rank %d: '%s'", P, f,
                   f2, rank, mbs_errMsg());
      }
    }
}

int main(int argc, char **argv) {
  if (mbsp_init(&argc, &argv, &comm)) {
    fprintf(stderr, "MPI init failed: %s\n", mbs_errMsg());
    return 1;
  }
  int P = mbsp_size(comm), rank = mbsp_rank(comm), k = mbsp_scanRadix(comm);
  const char *env = getenv("MBSPAR_SCAN_RADIX");
  MBS_EXPECT(k >= 2 && k <= MBS_SCAN_RADIX_MAX, "radix %d", k);
  if (env) MBS_EXPECT(k == atoi(env), "MBSPAR_SCAN_RADIX=%s but radix %d", env, k);
  check_exscan(P, rank);
  check_agree(P, rank);
  check_chain(P, k);
  long fails = mbs_test_fail;
  mbsp_allreduceSumLong(comm, &fails, 1);
  if (rank == 0)
    printf("test_scan_radix np=%d radix %d: %s (%ld failure(s) over all ranks)\n", P, k,
           fails ? "FAILED" : "all checks passed", fails);
  mbsp_finalize(&comm);
  return fails ? 1 : 0;
}
