/// \file test_spatial.c
/// Every inline kernel of src/spatial.h against plain 6x6 matrix algebra, with the full Plücker
/// matrix X = [E 0; -E r^ E] built explicitly, and mbs_bodyComplement (T^T T = 1, T^T S = 0) for
/// every joint type on random models. Also the small SPD block kernels (Cholesky and solves), and
/// that every row of the joint table (mbs_joint.h) is complete and consistent.
#include "mbs_test.h"
#include "spatial.h"

static unsigned long long st = 12345;
static double worst = 0; // worst absolute kernel error (all inputs are O(1))

static double rnd(void) {
  return mbs_test_uniform(&st, -1, 1);
}

static double worst_fd = 0; // worst finite-difference check (truncation-limited, apart)

static void note(double err, double tol, const char *what, int trial) {
  if (tol > 1e-12) {
    if (err > worst_fd) worst_fd = err;
  } else if (err > worst) {
    worst = err;
  }
  MBS_EXPECT(err <= tol, "%s trial %d: error %.3e > %.3e", what, trial, err, tol);
}

static double maxdiff(const double *a, const double *b, int n) {
  double d = 0;
  for (int i = 0; i < n; i++)
    if (fabs(a[i] - b[i]) > d) d = fabs(a[i] - b[i]);
  return d;
}

// skew matrix r^ (r^ x = r x x)
static void skew(const double *r, double *S) {
  S[0] = 0, S[1] = -r[2], S[2] = r[1];
  S[3] = r[2], S[4] = 0, S[5] = -r[0];
  S[6] = -r[1], S[7] = r[0], S[8] = 0;
}

// C = A B for n x n row-major matrices
static void matmul(const double *A, const double *B, double *C, int n) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int k = 0; k < n; k++) s += A[n * i + k] * B[n * k + j];
      C[n * i + j] = s;
    }
}
static void transpose(const double *A, double *B, int n) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) B[n * j + i] = A[n * i + j];
}
static void matvec(const double *A, const double *x, double *y, int n) {
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int k = 0; k < n; k++) s += A[n * i + k] * x[k];
    y[i] = s;
  }
}

// random rotation matrix via a random unit quaternion
static void randRot(double *E) {
  double q[4] = {rnd(), rnd(), rnd(), rnd()};
  mbsu_quat2Mat(q, E);
}

// random compact transform X = (E, r) and its full 6x6 matrix [E 0; -E r^ E]
static void randX(double *X, double *X6) {
  double rx[9], Erx[9];
  randRot(X);
  for (int k = 0; k < 3; k++) X[9 + k] = 2 * rnd();
  skew(X + 9, rx);
  matmul(X, rx, Erx, 3);
  memset(X6, 0, 36 * sizeof(double));
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      X6[6 * i + j] = X[3 * i + j];
      X6[6 * (3 + i) + 3 + j] = X[3 * i + j];
      X6[6 * (3 + i) + j] = -Erx[3 * i + j];
    }
}

// full motion cross-product matrix v x = [w^ 0; v^ w^]
static void crossMat(const double *v, double *C6) {
  double w[9], u[9];
  skew(v, w);
  skew(v + 3, u);
  memset(C6, 0, 36 * sizeof(double));
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      C6[6 * i + j] = w[3 * i + j];
      C6[6 * (3 + i) + 3 + j] = w[3 * i + j];
      C6[6 * (3 + i) + j] = u[3 * i + j];
    }
}

// random compact rigid-body inertia [m, h, Io] with a positive definite rotational part
static void randRbi(double *si) {
  double m = 0.5 + fabs(rnd()), c[3] = {rnd(), rnd(), rnd()}, A[9], AAt[9], At[9];
  for (int k = 0; k < 9; k++) A[k] = rnd();
  transpose(A, At, 3);
  matmul(A, At, AAt, 3);
  for (int k = 0; k < 3; k++) AAt[4 * k] += 0.1;
  double cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
  si[0] = m;
  for (int k = 0; k < 3; k++) si[1 + k] = m * c[k];
  si[4] = AAt[0] + m * (cc - c[0] * c[0]);
  si[5] = AAt[4] + m * (cc - c[1] * c[1]);
  si[6] = AAt[8] + m * (cc - c[2] * c[2]);
  si[7] = AAt[1] - m * c[0] * c[1];
  si[8] = AAt[2] - m * c[0] * c[2];
  si[9] = AAt[5] - m * c[1] * c[2];
}

static void check_kernels(int trial) {
  double X[12], X6[36], X6T[36], v[6], f[6], out[6], ref[6], tmp[6];
  randX(X, X6);
  transpose(X6, X6T, 6);
  for (int k = 0; k < 6; k++) v[k] = rnd(), f[k] = rnd();

  // xMotion: X v
  mbsu_xMotion(X, v, out);
  matvec(X6, v, ref, 6);
  note(maxdiff(out, ref, 6), 1e-14, "xMotion", trial);

  // xInvMotion: X^{-1} v, checked by X (X^{-1} v) = v and against [E^T 0; r^ E^T E^T] v
  mbsu_xInvMotion(X, v, out);
  matvec(X6, out, tmp, 6);
  note(maxdiff(tmp, v, 6), 1e-13, "xInvMotion (X X^-1 v = v)", trial);
  {
    double Et[9], rx[9], rxEt[9], Xi[36];
    transpose(X, Et, 3);
    skew(X + 9, rx);
    matmul(rx, Et, rxEt, 3);
    memset(Xi, 0, sizeof Xi);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        Xi[6 * i + j] = Et[3 * i + j];
        Xi[6 * (3 + i) + 3 + j] = Et[3 * i + j];
        Xi[6 * (3 + i) + j] = rxEt[3 * i + j];
      }
    matvec(Xi, v, ref, 6);
    note(maxdiff(out, ref, 6), 1e-14, "xInvMotion", trial);
  }

  // xForce: X^{-T} f, i.e. X^T out = f
  mbsu_xForce(X, f, out);
  matvec(X6T, out, tmp, 6);
  note(maxdiff(tmp, f, 6), 1e-13, "xForce (X^T X^-T f = f)", trial);
  // power invariance: (X v) . (X^* f) = v . f
  mbsu_xMotion(X, v, tmp);
  note(fabs(mbsu_dot6(tmp, out) - mbsu_dot6(v, f)), 1e-13, "xForce power invariance", trial);

  // xTForce: X^T f
  mbsu_xTForce(X, f, out);
  matvec(X6T, f, ref, 6);
  note(maxdiff(out, ref, 6), 1e-14, "xTForce", trial);

  // crossMotion: (v x) m; crossForce: (v x*) f = -(v x)^T f
  {
    double C6[36], C6T[36], mv[6];
    for (int k = 0; k < 6; k++) mv[k] = rnd();
    crossMat(v, C6);
    transpose(C6, C6T, 6);
    mbsu_crossMotion(v, mv, out);
    matvec(C6, mv, ref, 6);
    note(maxdiff(out, ref, 6), 1e-15, "crossMotion", trial);
    mbsu_crossForce(v, f, out);
    matvec(C6T, f, ref, 6);
    for (int k = 0; k < 6; k++) ref[k] = -ref[k];
    note(maxdiff(out, ref, 6), 1e-15, "crossForce", trial);
    // v x v = 0
    mbsu_crossMotion(v, v, out);
    note(maxdiff(out, (double[6]){0, 0, 0, 0, 0, 0}, 6), 1e-15, "crossMotion v x v", trial);
  }

  // rbiFull: symmetric, [Io h^; -h^ m1]; rbiMul equals rbiFull times v
  {
    double si[10], I6[36], I6T[36], hx[9];
    randRbi(si);
    mbsu_rbiFull(si, I6);
    transpose(I6, I6T, 6);
    note(maxdiff(I6, I6T, 36), 0, "rbiFull symmetric", trial);
    skew(si + 1, hx);
    double ref6[36];
    memset(ref6, 0, sizeof ref6);
    const double *Io = si + 4;
    double Iom[9] = {Io[0], Io[3], Io[4], Io[3], Io[1], Io[5], Io[4], Io[5], Io[2]};
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        ref6[6 * i + j] = Iom[3 * i + j];
        ref6[6 * i + 3 + j] = hx[3 * i + j];
        ref6[6 * (3 + i) + j] = -hx[3 * i + j];
      }
    ref6[21] = ref6[28] = ref6[35] = si[0];
    note(maxdiff(I6, ref6, 36), 0, "rbiFull layout", trial);
    mbsu_rbiMul(si, v, out);
    matvec(I6, v, ref, 6);
    note(maxdiff(out, ref, 6), 1e-14, "rbiMul vs rbiFull", trial);
    // mul6 and dot6 against the plain loops
    mbsu_mul6(I6, v, out);
    note(maxdiff(out, ref, 6), 1e-14, "mul6", trial);
    double d = 0;
    for (int k = 0; k < 6; k++) d += v[k] * f[k];
    note(fabs(mbsu_dot6(v, f) - d), 1e-15, "dot6", trial);
  }

  // inertiaCongruenceAdd: Iout += X^T I X for a general symmetric I
  {
    double I[36], Iout[36], Iacc[36], XI[36], ref6[36];
    for (int i = 0; i < 6; i++)
      for (int j = 0; j <= i; j++) I[6 * i + j] = I[6 * j + i] = rnd();
    for (int k = 0; k < 36; k++) Iacc[k] = Iout[k] = rnd();
    for (int i = 0; i < 6; i++)
      for (int j = 0; j < i; j++) Iacc[6 * i + j] = Iout[6 * i + j] = Iout[6 * j + i];
    mbsu_inertiaCongruenceAdd(X, I, Iout);
    matmul(I, X6, XI, 6);
    matmul(X6T, XI, ref6, 6);
    for (int k = 0; k < 36; k++) ref6[k] += Iacc[k];
    note(maxdiff(Iout, ref6, 36), 1e-12, "inertiaCongruenceAdd", trial);
    // on a rigid-body inertia the result is again a rigid-body inertia: X^T I X v = X^T(I (X v))
    double si[10], I6[36], Xv[6], IXv[6], r1[6];
    randRbi(si);
    mbsu_rbiFull(si, I6);
    memset(Iout, 0, sizeof Iout);
    mbsu_inertiaCongruenceAdd(X, I6, Iout);
    mbsu_xMotion(X, v, Xv);
    mbsu_rbiMul(si, Xv, IXv);
    mbsu_xTForce(X, IXv, r1);
    mbsu_mul6(Iout, v, out);
    note(maxdiff(out, r1, 6), 1e-12, "inertiaCongruenceAdd on rigid inertia", trial);
  }

  // 3x3 helpers
  {
    double A[9], B[9], C[9], Cref[9], At[9], a[3] = {rnd(), rnd(), rnd()}, c[3], cref[3];
    for (int k = 0; k < 9; k++) A[k] = rnd(), B[k] = rnd();
    mbsu_mulMat3(A, B, C);
    matmul(A, B, Cref, 3);
    note(maxdiff(C, Cref, 9), 1e-15, "mulMat3", trial);
    transpose(A, At, 3);
    mbsu_mulMat3T(A, B, C);
    matmul(At, B, Cref, 3);
    note(maxdiff(C, Cref, 9), 1e-15, "mulMat3T", trial);
    mbsu_mulMat3Vec(A, a, c);
    matvec(A, a, cref, 3);
    note(maxdiff(c, cref, 3), 1e-15, "mulMat3Vec", trial);
    mbsu_mulMat3TVec(A, a, c);
    matvec(At, a, cref, 3);
    note(maxdiff(c, cref, 3), 1e-15, "mulMat3TVec", trial);
    double ax[9];
    skew(a, ax);
    mbsu_cross3(a, B, c);
    matvec(ax, B, cref, 3);
    note(maxdiff(c, cref, 3), 1e-15, "cross3", trial);
  }

  // quat2Mat: orthonormal with det +1; equals Rodrigues of the same axis-angle
  {
    double ax[3] = {rnd(), rnd(), rnd()}, n = sqrt(mbsu_dot3(ax, ax)), th = 3 * rnd();
    for (int k = 0; k < 3; k++) ax[k] /= n;
    double q[4] = {cos(th / 2), sin(th / 2) * ax[0], sin(th / 2) * ax[1], sin(th / 2) * ax[2]};
    double R[9], Rr[9], RtR[9], Rt[9], I3[9];
    mbsu_quat2Mat(q, R);
    mbsu_rotAxis(ax, th, Rr);
    note(maxdiff(R, Rr, 9), 4e-15, "quat2Mat vs rotAxis", trial);
    transpose(R, Rt, 3);
    matmul(Rt, R, RtR, 3);
    mbsu_eye3(I3);
    note(maxdiff(RtR, I3, 9), 4e-15, "quat2Mat orthonormal", trial);
    double det = R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) +
                 R[2] * (R[3] * R[7] - R[4] * R[6]);
    note(fabs(det - 1), 4e-15, "quat2Mat det", trial);
    // a non-normalised quaternion gives the same rotation
    double q2[4] = {3 * q[0], 3 * q[1], 3 * q[2], 3 * q[3]}, R2[9];
    mbsu_quat2Mat(q2, R2);
    note(maxdiff(R, R2, 9), 4e-15, "quat2Mat scale invariance", trial);
    // rotAxis: R a = a, and d/dth R = a^ R (central difference)
    double Ra[3], Rp[9], Rm[9], axm[9], dR[9], h = 1e-6;
    mbsu_mulMat3Vec(Rr, ax, Ra);
    note(maxdiff(Ra, ax, 3), 4e-15, "rotAxis fixes its axis", trial);
    mbsu_rotAxis(ax, th + h, Rp);
    mbsu_rotAxis(ax, th - h, Rm);
    skew(ax, axm);
    matmul(axm, Rr, dR, 3);
    for (int k = 0; k < 9; k++) Rp[k] = (Rp[k] - Rm[k]) / (2 * h);
    note(maxdiff(Rp, dR, 9), 1e-9, "rotAxis derivative", trial);
  }

  // quatIntegrate: R(q_new) = R(q) rotAxis(w/|w|, |w| h) (body-frame increment); unit norm
  {
    double q[4] = {rnd(), rnd(), rnd(), rnd()}, w[3] = {2 * rnd(), 2 * rnd(), 2 * rnd()};
    double hs[2] = {0.37, 1e-14}; // regular and small-angle branches
    for (int k = 0; k < 2; k++) {
      double h = hs[k], qn[4] = {q[0], q[1], q[2], q[3]}, R0[9], Rn[9], Rinc[9], Rref[9];
      mbsu_quatIntegrate(qn, w, h);
      double n = sqrt(mbsu_dot3(w, w)), ax[3] = {w[0] / n, w[1] / n, w[2] / n};
      mbsu_quat2Mat(q, R0);
      mbsu_quat2Mat(qn, Rn);
      mbsu_rotAxis(ax, n * h, Rinc);
      matmul(R0, Rinc, Rref, 3);
      note(maxdiff(Rn, Rref, 9), 4e-15, k ? "quatIntegrate (small angle)" : "quatIntegrate", trial);
      note(fabs(qn[0] * qn[0] + qn[1] * qn[1] + qn[2] * qn[2] + qn[3] * qn[3] - 1), 1e-15,
           "quatIntegrate unit norm", trial);
    }
  }
}

// small SPD block kernels: cholFactor gives L with L L^T = A (upper triangle zeroed), the solves
// invert L, L^T and A; a non-SPD matrix is refused
static void check_chol(int trial) {
  for (int k = 1; k <= 6; k++) {
    double B[36], A[36], L[36], x[6], y[6], z[6];
    for (int i = 0; i < k * k; i++) B[i] = rnd();
    for (int i = 0; i < k; i++)
      for (int j = 0; j < k; j++) {
        double v = (i == j) ? 0.5 : 0;
        for (int l = 0; l < k; l++) v += B[k * i + l] * B[k * j + l];
        A[k * i + j] = v; // B B^T + 0.5 1
      }
    memcpy(L, A, sizeof A);
    MBS_EXPECT(mbsu_cholFactor(L, k), "cholFactor refused an SPD matrix (k=%d)", k);
    double e = 0;
    for (int i = 0; i < k; i++)
      for (int j = 0; j < k; j++) {
        double v = 0;
        for (int l = 0; l < k; l++) v += L[k * i + l] * L[k * j + l];
        e = fmax(e, fabs(v - A[k * i + j]));
        if (j > i) e = fmax(e, fabs(L[k * i + j]));
      }
    note(e, 1e-13, "cholFactor L L^T = A", trial);
    for (int i = 0; i < k; i++) x[i] = rnd();
    // cholSolveL: L y = x; cholSolveLT: L^T z = x; cholSolve: A z = x
    memcpy(y, x, sizeof x);
    mbsu_cholSolveL(L, k, y);
    for (int i = 0; i < k; i++) {
      double v = 0;
      for (int l = 0; l < k; l++) v += L[k * i + l] * y[l];
      z[i] = v;
    }
    note(maxdiff(z, x, k), 1e-12, "cholSolveL", trial);
    memcpy(y, x, sizeof x);
    mbsu_cholSolveLT(L, k, y);
    for (int i = 0; i < k; i++) {
      double v = 0;
      for (int l = 0; l < k; l++) v += L[k * l + i] * y[l];
      z[i] = v;
    }
    note(maxdiff(z, x, k), 1e-12, "cholSolveLT", trial);
    memcpy(y, x, sizeof x);
    mbsu_cholSolve(L, k, y);
    for (int i = 0; i < k; i++) {
      double v = 0;
      for (int l = 0; l < k; l++) v += A[k * i + l] * y[l];
      z[i] = v;
    }
    note(maxdiff(z, x, k), 1e-12, "cholSolve", trial);
    // an indefinite matrix is refused
    memcpy(L, A, sizeof A);
    L[k * (k - 1) + k - 1] = -1;
    MBS_EXPECT(!mbsu_cholFactor(L, k), "cholFactor accepted an indefinite matrix (k=%d)", k);
  }
}

// mbs_bodyComplement for every joint type: T orthonormal, T^T S = 0, S full rank
static void check_complement(unsigned long long seed, double *worst_orth, double *worst_ts,
                             int *count) {
  mbsModel *m = NULL;
  mbsState *s = NULL;
  mbsWork *w = NULL;
  MBS_EXPECT_OK(mbs_test_randomModel(12, mbs_test_alltypes, 7, 0, seed, &m));
  if (!m) return;
  MBS_EXPECT_OK(mbs_stateCreate(m, &s));
  MBS_EXPECT_OK(mbs_workCreate(m, &w));
  mbs_fwdPosition(m, s, w);
  for (int b = 0; b < m->nbody; b++) {
    int nl = m->body_lamnum[b], nd = m->body_dofnum[b];
    const double *S = w->sdof + 6 * m->body_dofadr[b];
    double T[36], G[36];
    MBS_EXPECT(nl + nd == 6, "body %d: lamnum + dofnum = %d", b, nl + nd);
    mbs_bodyComplement(m, w, b, T);
    for (int i = 0; i < nl; i++) {
      for (int j = 0; j < nl; j++) {
        double e = fabs(mbsu_dot6(T + 6 * i, T + 6 * j) - (i == j));
        if (e > *worst_orth) *worst_orth = e;
        MBS_EXPECT(e <= 1e-14, "seed %llu body %d (%s): T^T T - 1 = %.3e", seed, b,
                   mbs_jntName(m->body_jnttype[b]), e);
      }
      for (int j = 0; j < nd; j++) {
        double e = fabs(mbsu_dot6(T + 6 * i, S + 6 * j));
        if (e > *worst_ts) *worst_ts = e;
        MBS_EXPECT(e <= 1e-14, "seed %llu body %d (%s): T^T S = %.3e", seed, b,
                   mbs_jntName(m->body_jnttype[b]), e);
      }
    }
    // S has full column rank: the Gram matrix S^T S has a positive Cholesky factor
    for (int i = 0; i < nd; i++)
      for (int j = 0; j < nd; j++) G[nd * i + j] = mbsu_dot6(S + 6 * i, S + 6 * j);
    int ok = 1;
    for (int i = 0; i < nd && ok; i++) {
      for (int j = 0; j <= i; j++) {
        double sum = G[nd * i + j];
        for (int k = 0; k < j; k++) sum -= G[nd * i + k] * G[nd * j + k];
        if (i == j) {
          if (!(sum > 1e-8))
            ok = 0;
          else
            G[nd * i + i] = sqrt(sum);
        } else {
          G[nd * i + j] = sum / G[nd * j + j];
        }
      }
    }
    MBS_EXPECT(ok, "seed %llu body %d: S is rank deficient", seed, b);
    (*count)++;
  }
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&m);
}

// every row of the joint table: named (and found by its name), its functions present, its sizes,
// flags, column names and closure rows consistent with each other
static void check_table(void) {
  for (int t = 0; t < MBS_JNT_COUNT; t++) {
    const mbsJointType *J = mbs_jntType(t);
    MBS_EXPECT(J->name && mbs_jntFromName(J->name) == t, "joint type %d: no name or not found", t);
    const char *nm = J->name ? J->name : "?";
    MBS_EXPECT(J->pose && J->bias && J->complement && J->integrate, "%s: a function is missing",
               nm);
    MBS_EXPECT(J->nv >= 0 && J->nv <= 6 && J->nq >= J->nv, "%s: nq %d nv %d", nm, J->nq, J->nv);
    MBS_EXPECT((J->quat >= 0) == (J->nq > J->nv) && (J->quat < 0 || J->quat + 4 <= J->nq),
               "%s: quat %d", nm, J->quat);
    MBS_EXPECT((J->qnames != NULL) == (J->nq > 1) && (J->vnames != NULL) == (J->nv > 1),
               "%s: column names", nm);
    int rows = mbs_jntIsFree(t) ? 0 : 6 - J->nv;
    MBS_EXPECT(J->n_loop_rows == rows && (rows == 0 || J->loop_rows), "%s: %d closure rows", nm,
               J->n_loop_rows);
    // the position update of scalar coordinates is q += h qd exactly
    if (mbs_jntScalar(t)) {
      double q[6] = {0.25, -0.5}, qd[6] = {1.5, 3}, h = 0.125;
      J->integrate(q, qd, h);
      MBS_EXPECT(q[0] == 0.25 + h * 1.5 && (J->nq < 2 || q[1] == -0.5 + h * 3), "%s: integrate",
                 nm);
    }
  }
}

int main(void) {
  for (int trial = 0; trial < 2000; trial++) {
    check_kernels(trial);
    check_chol(trial);
  }
  printf("spatial kernels vs 6x6 algebra (2000 random trials): worst abs error %.3e "
         "(finite-difference derivative checks %.3e)\n",
         worst, worst_fd);
  check_table();
  printf("joint table: %d rows checked\n", (int)MBS_JNT_COUNT);
  double worst_orth = 0, worst_ts = 0;
  int count = 0;
  for (unsigned long long seed = 1; seed <= 100; seed++)
    check_complement(seed, &worst_orth, &worst_ts, &count);
  printf("bodyComplement on %d joints: worst |T^T T - 1| %.3e, worst |T^T S| %.3e\n", count,
         worst_orth, worst_ts);
  return mbs_test_finish("test_spatial");
}
