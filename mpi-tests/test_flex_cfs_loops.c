/// \file test_flex_cfs_loops.c
/// Closed loops through flexible bodies in the constraint-force system (src/flex_cfs_loops.c,
/// docs/flexible.md 15.2; issue 34) at this run's rank count (CTest: 1, 2, 3, 4): random trees
/// and chains of rigid and flexible bodies (flex_gen.h) closed by 1 or 2 cut joints of every type
/// between random bodies or a body and the ground, a side on a named node of a flexible body
/// when it has one (the frames placed so that the loops close at q0, eta = 0), at a random
/// state (eta, etad, the rates off the closure): ydd of direct, jcg and petsc (KSP CG on the
/// operator, when built with PETSc), and of gs and sor (block sweeps with the closure rows one at
/// a time, on the assembled A) on the models of 4 or 5 bodies that are not locked, and of chebyshev
/// and jacobi (matrix-free, on the spectrum of D^-1 A with the loop rows' 1x1 blocks) on the models
/// of 4 or 5 bodies with independent closure rows (jacobi where chebyshev needs under 600
/// iterations: its count is about the square; the last 8 of the 20 models are small ones, one
/// loop each), equals the dense oracle's (mbs_flexOracleAccel with the KKT rows,
/// src/flex_oracle_loops.c) to 1e-9, the joint block and the modal block each relative to its
/// largest entry (at least 1 % of the largest of all: some random loops lock the mechanism, whose
/// joint accelerations are then roundoff). The state is first put on the loops
/// (mbs_flexOracleLoopProject), where redundant closure rows are consistent, as along a motion. The
/// same models on schur's distributed elimination (src/flex_part_loops.c over parallel/flex_par.c,
/// docs/flexible.md 15.4: one tree solve with the applied forces and one homogeneous unit solve per
/// closure row on the ranks' body ranges, the k x k system's minimum-norm solution) against the
/// oracle to 1e-9 as well, and on the models with independent closure rows also at the state before
/// the projection with solver.baumgarte = [3, 4] (the rows' bias with its cdot and c terms).
#include <stdlib.h>
#include "mbs_test.h"
#include "flex_gen.h"
#include "flex_cfs_par.h"
#include "flex_par.h"
#include "petsc_ref.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_flex.h"

static const char *const LT[] = {"revolute",  "prismatic", "cylindrical",
                                 "universal", "spherical", "fixed"};

// blockDiff (flex_gen.h) with each block's scale at least 1 % of the largest entry of yo: a
// locked mechanism (mobility 0) has joint accelerations of roundoff size, 1e-14 against 1e-11
static double blockDiffFloor(const double *ya, const double *yo, int N, int nv) {
  double all = 1e-300, sj = 0, se = 0, ej = 0, ee = 0;
  for (int k = 0; k < N; k++) all = fmax(all, fabs(yo[k]));
  for (int k = 0; k < N; k++) {
    double d = fabs(ya[k] - yo[k]);
    if (k < nv)
      sj = fmax(sj, fabs(yo[k])), ej = fmax(ej, d);
    else
      se = fmax(se, fabs(yo[k])), ee = fmax(ee, d);
  }
  return fmax(ej / fmax(sj, 1e-2 * all), N > nv ? ee / fmax(se, 1e-2 * all) : 0);
}

static void mv(const double *R, const double *v, double *o) { // o = R v
  for (int i = 0; i < 3; i++) o[i] = R[3 * i] * v[0] + R[3 * i + 1] * v[1] + R[3 * i + 2] * v[2];
}
static void mtv(const double *R, const double *v, double *o) { // o = R^T v
  for (int i = 0; i < 3; i++) o[i] = R[i] * v[0] + R[3 + i] * v[1] + R[6 + i] * v[2];
}

// nl loops closed at the poses (R, p) of the tree model's bodies, appended to the text t
static int addLoops(const Body *B, int nb, const mbsModel *m0, const double *R, const double *p,
                    int nl, char *t, size_t cap, int *nnode) {
  char *end = strstr(t, "\n); };\n");
  if (!end) return -1;
  size_t n = (size_t)(end - t);
  if (cat(t, cap, &n, "\n);\nloops = (")) return -1;
  for (int k = 0; k < nl; k++) {
    int b1 = (int)(rnd() * nb), b2 = (int)(rnd() * (nb + 1)) - 1, type = (int)(rnd() * 6);
    if (b2 == b1) b2 = -1;
    int node = B[b1].flex && B[b1].nodes > 0 && rnd() < 0.7 ? 1 + (int)(rnd() * B[b1].nodes) : 0;
    *nnode += node > 0;
    double o[3] = {sym(0.3), sym(0.3), sym(0.3)}, ax[3] = {sym(1), sym(1), sym(1)};
    double rf[3] = {sym(1), sym(1), sym(1)}, ob[3];
    unit(ax);
    double d = ax[0] * rf[0] + ax[1] * rf[1] + ax[2] * rf[2];
    for (int i = 0; i < 3; i++) rf[i] -= d * ax[i]; // normal to the axis
    unit(rf);
    memcpy(ob, o, sizeof ob);
    if (node) ob[0] += node == 1 ? B[b1].L : B[b1].L / 2; // n1 the tip, n2 the middle
    const double *R1 = R + 9 * b1, *x1 = p + 3 * b1;
    double P[3], A[3], F[3], o2[3], a2[3], f2[3];
    mv(R1, ob, P);
    for (int i = 0; i < 3; i++) P[i] += x1[i];
    mv(R1, ax, A);
    mv(R1, rf, F);
    if (type == 3) { // universal: axis 2 normal to axis 1
      double t3[3];
      memcpy(t3, A, sizeof t3), memcpy(A, F, sizeof A), memcpy(F, t3, sizeof F);
    }
    static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, z3[3] = {0, 0, 0};
    const double *R2 = b2 < 0 ? I3 : R + 9 * b2, *x2 = b2 < 0 ? z3 : p + 3 * b2;
    double dP[3] = {P[0] - x2[0], P[1] - x2[1], P[2] - x2[2]};
    mtv(R2, dP, o2);
    mtv(R2, A, a2);
    mtv(R2, F, f2);
    char n1[32] = "", s2[16];
    if (node) snprintf(n1, sizeof n1, "node1 = \"n%d\"; ", node);
    if (b2 < 0)
      snprintf(s2, sizeof s2, "ground");
    else
      snprintf(s2, sizeof s2, "b%d", b2);
    if (cat(t, cap, &n,
            "%s{ name = \"L%d\"; type = \"%s\"; body1 = \"b%d\"; %sframe1 = { origin = [%.17g, "
            "%.17g, %.17g]; axis = [%.17g, %.17g, %.17g]; ref = [%.17g, %.17g, %.17g]; }; body2 "
            "= \"%s\"; frame2 = { origin = [%.17g, %.17g, %.17g]; axis = [%.17g, %.17g, %.17g]; "
            "ref = [%.17g, %.17g, %.17g]; }; }",
            k ? ",\n" : "\n", k, LT[type], b1, n1, o[0], o[1], o[2], ax[0], ax[1], ax[2], rf[0],
            rf[1], rf[2], s2, o2[0], o2[1], o2[2], a2[0], a2[1], a2[2], f2[0], f2[1], f2[2]))
      return -1;
  }
  (void)m0;
  return cat(t, cap, &n, "\n); };\n");
}

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
  enum { NB = 9, CAP = 1 << 16, NTRIAL = 20 };
  (void)blockDiff; // flex_gen.h's plain form: blockDiffFloor here
  Body B[NB];
  char *t1 = malloc(CAP);
  double worst[7] = {0, 0, 0, 0, 0, 0, 0};
  int nbaum = 0;
  int nsmall = 0, itgs[4] = {0, 0, 0, 0}, npoly = 0, njac = 0;
  double worstp[2] = {0, 0};
  int ntrial = 0, itmax = 0, nnode = 0, nflex = 0, nloops = 0, nred = 0;
  for (int trial = 0; t1 && trial < NTRIAL; trial++) {
    int chain = trial % 3 == 0, nb = 4 + trial % (NB - 3), nl = 1 + trial % 2;
    if (trial >= 12) nb = 4 + trial % 2, nl = 1; // 8 more small ones (jacobi, chebyshev: few)
    gen(B, nb, chain, 2);
    for (int b = 0; b < nb; b++) nflex += B[b].flex;
    MBS_EXPECT(text(B, nb, 0, t1, CAP) == 0, "text");
    mbsModel *m0 = mbs_test_buildText(t1), *m = NULL;
    MBS_EXPECT(m0 != NULL, "trial %d: tree model", trial);
    if (!m0) break;
    mbsFlexOracle *o = NULL;
    MBS_EXPECT_OK(mbs_flexOracleCreate(m0, &o));
    int N = o ? mbs_flexOracleSize(o) : 0, nv = m0->nv;
    double *R = calloc(9 * (size_t)nb, sizeof(double)),
           *pw = calloc(3 * (size_t)nb, sizeof(double));
    double *y = calloc((size_t)N + 1, sizeof(double)), *eta = calloc((size_t)N + 1, sizeof(double));
    double *yo = calloc((size_t)N + 1, sizeof(double)), *yc = calloc((size_t)N + 1, sizeof(double));
    if (o && R && pw && y && eta && yo && yc) {
      MBS_EXPECT_OK(mbs_flexOracleBodyPoses(o, m0->q0, y, eta, R, pw));
      MBS_EXPECT(addLoops(B, nb, m0, R, pw, nl, t1, CAP, &nnode) == 0, "loops text");
      m = mbs_test_buildText(t1);
      MBS_EXPECT(m != NULL, "trial %d: loop model", trial);
    }
    mbs_flexOracleDestroy(&o);
    mbsFlexCfs *f = NULL;
    if (m) {
      MBS_EXPECT_OK(mbs_flexOracleCreate(m, &o));
      MBS_EXPECT_OK(mbs_flexCfsCreate(m, &f));
      if (f) MBS_EXPECT_OK(mbsp_flexCfsBind(comm, f, m));
    }
    if (m && o && f) {
      nloops += m->nloop;
      memcpy(y, m->qd0, sizeof(double) * (size_t)nv);
      for (int k = 0; k < nv; k++) y[k] += sym(0.2); // off the closure too
      for (int k = nv; k < N; k++) y[k] = sym(0.3), eta[k - nv] = sym(0.01);
      // onto the loops (positions and rates): the closure rows are then consistent where they
      // are redundant, as along a motion
      double *q = malloc(sizeof(double) * ((size_t)m->nq + 1));
      double *yb = malloc(sizeof(double) * ((size_t)N + 1)),
             *eb = malloc(sizeof(double) * ((size_t)N + 1));
      if (yb && eb) // the state off the loops: schur with Baumgarte's terms below
        memcpy(yb, y, sizeof(double) * (size_t)N), memcpy(eb, eta, sizeof(double) * (size_t)N);
      mbsFlexLoopProj pj;
      if (q) {
        memcpy(q, m->q0, sizeof(double) * (size_t)m->nq);
        MBS_EXPECT_OK(mbs_flexOracleLoopProject(o, q, eta, y, 1e-12, 30, &pj));
        MBS_EXPECT(pj.c_after <= 1e-12, "trial %d: projection %.3g -> %.3g", trial, pj.c_before,
                   pj.c_after);
      }
      MBS_EXPECT_OK(mbs_flexOracleAccel(o, q, y, eta, yo));
      mbsFlexLoopInfo li;
      MBS_EXPECT_OK(mbs_flexOracleLoopInfo(o, &li));
      nred += li.rank < li.n;
      static const int meths[7] = {MBS_FCFS_DIRECT, MBS_FCFS_JCG,  MBS_FCFS_PETSC, MBS_FCFS_GS,
                                   MBS_FCFS_SOR,    MBS_FCFS_CHEB, MBS_FCFS_JACOBI};
      int itc = 0; // chebyshev's iterations on this model
      for (int k = 0; k < 7; k++) {
        int meth = meths[k], it = 0;
        // gs, sor: small models that move (a locked one, mobility 0, did not converge in 2e5
        // sweeps: the worst-conditioned A of the set); jacobi, chebyshev: those with independent
        // closure rows besides (redundant rows make A singular: D^-1 A's zero eigenvalue is
        // outside the spectrum interval of the Chebyshev and Richardson steps: jacobi did not
        // converge in 2e6 iterations on one, chebyshev missed 1e-9); of 4-5 bodies (the others
        // took jacobi up to 8e5 iterations); jacobi where chebyshev took under 600 iterations
        // (jacobi's count goes as its square: 1.6e5 iterations, 40 s at 4 ranks under load, on
        // one with 1850)
        if ((k == 2 && !petsc) || (k >= 3 && k < 5 && (nb > 5 || m->loop_asm.rank >= nv)) ||
            (k >= 5 && (nb > 5 || li.rank < li.n)) || (k == 6 && itc >= 600))
          continue;
        if (k >= 3) nsmall += k == 3;
        npoly += k == 5, njac += k == 6;
        memset(yc, 0, sizeof(double) * (size_t)N);
        mbsErr e = mbsp_flexCfsSolve(comm, f, meth, 1e-14, q, y, eta, yc, &it);
        MBS_EXPECT(e == MBS_OK, "trial %d %s: %s", trial, mbs_flexCfsName(meth), mbs_errMsg());
        double d = blockDiffFloor(yc, yo, N, nv);
        MBS_EXPECT(d < 1e-9, "trial %d (%d bodies, %d loop rows, rank %d) %s: %.3e", trial, nb,
                   li.n, li.rank, mbs_flexCfsName(meth), d);
        if (k < 5) worst[k] = fmax(worst[k], d); // (worst[5], [6]: schur below)
        if (k == 1 && it > itmax) itmax = it;
        if (k >= 3 && it > itgs[k - 3]) itgs[k - 3] = it;
        if (k >= 5) worstp[k - 5] = fmax(worstp[k - 5], d);
        if (k == 5) itc = it;
      }
      // schur: the loop layer on the ranges (every rank calls; ydd complete on rank 0)
      mbspFlexPar *fp = NULL;
      MBS_EXPECT_OK(mbsp_flexParCreate(comm, m, &fp));
      if (fp && q) {
        memset(yc, 0, sizeof(double) * (size_t)N);
        mbsErr e = mbsp_flexParAccel(fp, q, y, eta, yc);
        MBS_EXPECT(e == MBS_OK, "trial %d schur: %s", trial, mbs_errMsg());
        double d = rank == 0 ? blockDiffFloor(yc, yo, N, nv) : 0;
        MBS_EXPECT(d < 1e-9, "trial %d (%d bodies, %d loop rows, rank %d) schur: %.3e", trial, nb,
                   li.n, li.rank, d);
        worst[5] = fmax(worst[5], d);
      }
      // off the loops (c, cdot not zero) with solver.baumgarte = [3, 4]: the bias k's closure
      // and Baumgarte terms against the oracle's; models whose closure rows are independent (the
      // redundant rows of the others are then inconsistent)
      if (fp && yb && eb && li.rank == li.n) {
        double *yo2 = calloc((size_t)N + 1, sizeof(double));
        m->opt.baumgarte[0] = 3, m->opt.baumgarte[1] = 4;
        MBS_EXPECT_OK(mbs_flexOracleAccel(o, m->q0, yb, eb, yo2));
        MBS_EXPECT_OK(mbsp_flexParAccel(fp, m->q0, yb, eb, yc));
        double d = rank == 0 && yo2 ? blockDiffFloor(yc, yo2, N, nv) : 0;
        MBS_EXPECT(d < 1e-9, "trial %d schur with Baumgarte off the loops: %.3e", trial, d);
        worst[6] = fmax(worst[6], d), nbaum++;
        m->opt.baumgarte[0] = m->opt.baumgarte[1] = 0;
        free(yo2);
      }
      free(yb), free(eb);
      mbsp_flexParDestroy(&fp);
      ntrial++;
      free(q);
    }
    free(R), free(pw), free(y), free(eta), free(yo), free(yc);
    mbs_flexCfsDestroy(&f), mbs_flexOracleDestroy(&o);
    mbs_modelDestroy(&m), mbs_modelDestroy(&m0);
  }
  free(t1);
  if (rank == 0)
    printf("np=%d: %d models, %d flexible bodies, %d loops (%d sides on nodes, %d models with "
           "redundant closure rows): direct %.2e, jcg %.2e, petsc %.2e%s, schur %.2e against the "
           "dense oracle (bound 1e-9), jcg at most %d iterations; on the %d models of 4-5 bodies "
           "gs %.2e, sor %.2e (at most %d, %d sweeps; locked models skipped); on the %d models "
           "of 4-5 bodies with independent closure rows chebyshev %.2e (at most %d iterations), on "
           "%d of "
           "those jacobi %.2e (at most %d iterations); schur off the loops with Baumgarte [3, 4] "
           "on the %d models with "
           "independent rows %.2e\n",
           P, ntrial, nflex, nloops, nnode, nred, worst[0], worst[1], worst[2],
           petsc ? "" : " (not built)", worst[5], itmax, nsmall, worst[3], worst[4], itgs[0],
           itgs[1], npoly, worstp[0], itgs[2], njac, worstp[1], itgs[3], nbaum, worst[6]);
  MBS_EXPECT(ntrial == NTRIAL && nnode >= 3 && nloops >= 16, "coverage: %d models %d nodes", ntrial,
             nnode);
  MBS_EXPECT(npoly >= 6 && njac >= 3, "coverage: chebyshev on %d models, jacobi on %d", npoly,
             njac);
  long fails = mbs_test_fail;
  mbsp_allreduceSumLong(comm, &fails, 1);
  if (rank == 0)
    printf("test_flex_cfs_loops np=%d: %s (%ld failure(s) over all ranks)\n", P,
           fails ? "FAILED" : "all checks passed", fails);
  if (petsc) mbsp_petscFinalize();
  mbsp_finalize(&comm);
  return fails ? 1 : 0;
}
