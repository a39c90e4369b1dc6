/// \file test_closedform.c
/// Forward dynamics (ABA and CRBA) against hand-derived closed forms: single pendulum (point mass
/// and uniform rod) with spring, damper and constant joint force; planar double pendulum (mass
/// matrix, bias and accelerations); prismatic joint under gravity; free body under gravity (COM
/// at the origin and offset: torque-free Euler equations); spherical pendulum (energies and
/// Euler's equation about the pivot); 64-link revolute and universal chains hanging at rest
/// (zero acceleration) and their joint wrenches (each joint carries the weight below it).
/// Derivations: docs/formulation.md and docs/validation.md.
#include "mbs_test.h"
#include "spatial.h"

static const double G = 9.81;

// worst errors per group, printed at the end
static double worst_pend = 0, worst_dp = 0, worst_dpM = 0, worst_pri = 0, worst_free = 0;
static double worst_sph = 0, worst_sphE = 0, worst_hang = 0, worst_wrench = 0;

static void upd(double *worst, double e) {
  if (e > *worst) *worst = e;
}

static mbsModel *newModel(void) {
  mbsModel *m = NULL;
  MBS_EXPECT_OK(mbs_modelCreate(&m, 8));
  return m;
}

static void addBody(mbsModel *m, mbsBodySpec *sp) {
  char name[32];
  snprintf(name, sizeof name, "b%d", m->nbody);
  sp->name = name;
  MBS_EXPECT_OK(mbs_modelAddBody(m, sp, NULL));
}

// forward dynamics by ABA and by CRBA at the state s; qa, qc (nv) and the joint wrenches in the
// world frame ja, jc (nbody x 6, may be NULL)
static void solveBoth(const mbsModel *m, mbsState *s, mbsWork *w, double *qa, double *qc,
                      double *ja, double *jc) {
  mbs_fwdPosition(m, s, w);
  mbs_fwdVelocity(m, s, w);
  MBS_EXPECT_OK(mbs_aba(m, w));
  memcpy(qa, w->qdd, (size_t)m->nv * sizeof(double));
  if (ja) mbs_jointWrenchWorld(m, w, ja);
  MBS_EXPECT_OK(mbs_workEnableCrba(m, w));
  MBS_EXPECT_OK(mbs_crba(m, w));
  memcpy(qc, w->qdd, (size_t)m->nv * sizeof(double));
  if (jc) mbs_jointWrenchWorld(m, w, jc);
}

// 3x3 solve x = A^{-1} b by Cramer's rule
static void solve3(const double *A, const double *b, double *x) {
  double det = A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) +
               A[2] * (A[3] * A[7] - A[4] * A[6]);
  for (int c = 0; c < 3; c++) {
    double B[9];
    memcpy(B, A, sizeof B);
    for (int r = 0; r < 3; r++) B[3 * r + c] = b[r];
    x[c] = (B[0] * (B[4] * B[8] - B[5] * B[7]) - B[1] * (B[3] * B[8] - B[5] * B[6]) +
            B[2] * (B[3] * B[7] - B[4] * B[6])) /
           det;
  }
}

static void cross(const double *a, const double *b, double *c) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

// symmetric 3x3 from [xx yy zz xy xz yz]
static void sym3(const double *I6, double *I) {
  I[0] = I6[0], I[4] = I6[1], I[8] = I6[2];
  I[1] = I[3] = I6[3], I[2] = I[6] = I6[4], I[5] = I[7] = I6[5];
}

// R diag(l) R^T with R the rotation by th about a (not normalised) axis
static void rotatedInertia(const double *l, const double *ax, double th, double *I6) {
  double n = sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]),
         a[3] = {ax[0] / n, ax[1] / n, ax[2] / n};
  double c = cos(th), s = sin(th), t = 1 - c, R[9], I[9];
  R[0] = c + t * a[0] * a[0], R[1] = t * a[0] * a[1] - s * a[2], R[2] = t * a[0] * a[2] + s * a[1];
  R[3] = t * a[0] * a[1] + s * a[2], R[4] = c + t * a[1] * a[1], R[5] = t * a[1] * a[2] - s * a[0];
  R[6] = t * a[0] * a[2] - s * a[1], R[7] = t * a[1] * a[2] + s * a[0], R[8] = c + t * a[2] * a[2];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      I[3 * i + j] = R[3 * i] * l[0] * R[3 * j] + R[3 * i + 1] * l[1] * R[3 * j + 1] +
                     R[3 * i + 2] * l[2] * R[3 * j + 2];
  I6[0] = I[0], I6[1] = I[4], I6[2] = I[8], I6[3] = I[1], I6[4] = I[2], I6[5] = I[5];
}

// ------------------------------------------------------------------ single pendulum
// Revolute about y through the joint origin, COM at (0,0,-d) in the body frame, gravity -G z.
// The COM in the world is (-d sin th, 0, -d cos th) + origin, so PE = -m G d cos th and the
// gravity torque about y is -m G d sin th:
//   th'' = (-m G d sin th - k (th - th_ref) - c th' + f + tau) / (Iyy_c + m d^2)
static void single_pendulum(double mass, double d, double Ic, const char *what) {
  const double ths[] = {-2.9, -1.3, -0.4, 0.0, 0.25, 1.0, 1.5707963267948966, 2.2, 3.1};
  const double k = 0.7, ref = 0.2, c = 0.15, f = 0.4, tau = -0.25;
  mbsModel *m = newModel();
  mbsBodySpec sp;
  mbs_bodySpecDefault(&sp);
  sp.jnttype = MBS_JNT_REVOLUTE;
  sp.axis[0] = 0, sp.axis[1] = 1, sp.axis[2] = 0;
  sp.origin[0] = 0.3, sp.origin[1] = -0.1, sp.origin[2] = 0.5;
  sp.mass = mass;
  sp.com[0] = 0, sp.com[1] = 0, sp.com[2] = -d;
  // rotational inertia about the COM; the x and z moments only keep it positive definite
  sp.inertia[0] = Ic, sp.inertia[1] = Ic, sp.inertia[2] = Ic > 1e-3 ? 1e-6 * Ic : Ic;
  sp.inertia[3] = sp.inertia[4] = sp.inertia[5] = 0;
  sp.stiffness[0] = k, sp.springref[0] = ref, sp.damping[0] = c, sp.force[0] = f;
  addBody(m, &sp);
  m->gravity[0] = 0, m->gravity[1] = 0, m->gravity[2] = -G;
  MBS_EXPECT_OK(mbs_modelFinalize(m));
  mbsState *s = NULL;
  mbsWork *w = NULL;
  MBS_EXPECT_OK(mbs_stateCreate(m, &s));
  MBS_EXPECT_OK(mbs_workCreate(m, &w));
  for (size_t i = 0; i < sizeof ths / sizeof ths[0]; i++) {
    double th = ths[i], thd = 1.7 - 0.4 * (double)i, qa, qc;
    s->q[0] = th, s->qd[0] = thd, s->tau[0] = tau;
    solveBoth(m, s, w, &qa, &qc, NULL, NULL);
    double ref_acc =
        (-mass * G * d * sin(th) - k * (th - ref) - c * thd + f + tau) / (Ic + mass * d * d);
    double ea = fabs(qa - ref_acc) / fabs(ref_acc), ec = fabs(qc - ref_acc) / fabs(ref_acc);
    upd(&worst_pend, ea), upd(&worst_pend, ec);
    MBS_EXPECT(ea <= 1e-13 && ec <= 1e-13,
               "%s th=%g: aba %.17g crba %.17g hand %.17g (rel %.2e %.2e)", what, th, qa, qc,
               ref_acc, ea, ec);
  }
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&m);
}

// ------------------------------------------------------------------ double pendulum
// Two uniform rods (mass m_i, length L_i, COM at c_i = L_i/2, J_i = m_i L_i^2/12), both
// revolute about y, rod 2 hinged at the tip of rod 1; th1 absolute, th2 relative. With
//   A = m1 c1^2 + J1 + m2 L1^2,  B = m2 c2^2 + J2,  C = m2 L1 c2:
//   M = [A + B + 2 C cos th2, B + C cos th2; B + C cos th2, B]
//   h = [-C sin th2 th2' (2 th1' + th2'); C sin th2 th1'^2]        (Coriolis, centrifugal)
//   g = [m1 G c1 s1 + m2 G (L1 s1 + c2 s12); m2 G c2 s12]          (s1 = sin th1, s12 = ...)
//   M q'' = tau_joint - h - g, tau_joint = f - k (q - ref) - c q' + tau.
static void double_pendulum(void) {
  const double m1 = 1.3, L1 = 0.9, m2 = 0.7, L2 = 1.4, c1 = L1 / 2, c2 = L2 / 2;
  const double J1 = m1 * L1 * L1 / 12, J2 = m2 * L2 * L2 / 12;
  const double kk[2] = {0.5, 0.3}, rf[2] = {0.1, -0.2}, dd[2] = {0.05, 0.12}, ff[2] = {0.3, -0.1};
  mbsModel *m = newModel();
  for (int b = 0; b < 2; b++) {
    mbsBodySpec sp;
    mbs_bodySpecDefault(&sp);
    double mass = b ? m2 : m1, L = b ? L2 : L1, J = b ? J2 : J1;
    sp.parent = b - 1;
    sp.jnttype = MBS_JNT_REVOLUTE;
    sp.axis[0] = 0, sp.axis[1] = 1, sp.axis[2] = 0;
    sp.origin[0] = 0, sp.origin[1] = 0, sp.origin[2] = b ? -L1 : 0;
    sp.mass = mass;
    sp.com[0] = 0, sp.com[1] = 0, sp.com[2] = -L / 2;
    sp.inertia[0] = J, sp.inertia[1] = J, sp.inertia[2] = 1e-6 * J;
    sp.stiffness[0] = kk[b], sp.springref[0] = rf[b], sp.damping[0] = dd[b], sp.force[0] = ff[b];
    addBody(m, &sp);
  }
  m->gravity[0] = 0, m->gravity[1] = 0, m->gravity[2] = -G;
  MBS_EXPECT_OK(mbs_modelFinalize(m));
  mbsState *s = NULL;
  mbsWork *w = NULL;
  MBS_EXPECT_OK(mbs_stateCreate(m, &s));
  MBS_EXPECT_OK(mbs_workCreate(m, &w));
  const double A = m1 * c1 * c1 + J1 + m2 * L1 * L1, B = m2 * c2 * c2 + J2, C = m2 * L1 * c2;
  unsigned long long st = 77;
  for (int trial = 0; trial < 50; trial++) {
    double th1 = mbs_test_uniform(&st, -3, 3), th2 = mbs_test_uniform(&st, -3, 3);
    double w1 = mbs_test_uniform(&st, -3, 3), w2 = mbs_test_uniform(&st, -3, 3);
    s->q[0] = th1, s->q[1] = th2, s->qd[0] = w1, s->qd[1] = w2;
    s->tau[0] = mbs_test_uniform(&st, -1, 1), s->tau[1] = mbs_test_uniform(&st, -1, 1);
    double c2t = cos(th2), s2t = sin(th2), s1 = sin(th1), s12 = sin(th1 + th2);
    double M[4] = {A + B + 2 * C * c2t, B + C * c2t, B + C * c2t, B};
    double h[2] = {-C * s2t * w2 * (2 * w1 + w2), C * s2t * w1 * w1};
    double g[2] = {m1 * G * c1 * s1 + m2 * G * (L1 * s1 + c2 * s12), m2 * G * c2 * s12};
    double r[2];
    for (int i = 0; i < 2; i++)
      r[i] = ff[i] - kk[i] * (s->q[i] - rf[i]) - dd[i] * s->qd[i] + s->tau[i] - h[i] - g[i];
    double det = M[0] * M[3] - M[1] * M[2];
    double qref[2] = {(M[3] * r[0] - M[1] * r[1]) / det, (M[0] * r[1] - M[2] * r[0]) / det};
    double qa[2], qc[2];
    solveBoth(m, s, w, qa, qc, NULL, NULL);
    double ea = mbs_test_relDiff(qa, qref, 2, 1e-300), ec = mbs_test_relDiff(qc, qref, 2, 1e-300);
    upd(&worst_dp, ea), upd(&worst_dp, ec);
    MBS_EXPECT(ea <= 1e-12 && ec <= 1e-12, "double pendulum trial %d: rel err aba %.2e crba %.2e",
               trial, ea, ec);
    // mass matrix by RNEA columns (rnea(e_j) - rnea(0)) and bias rnea(0) = h + g
    double q0[2] = {0, 0}, b0[2], e[2];
    mbs_rnea(m, w, q0);
    memcpy(b0, w->qfrc_inv, sizeof b0);
    double hb[2] = {h[0] + g[0], h[1] + g[1]};
    double eb = mbs_test_relDiff(b0, hb, 2, 1.0);
    upd(&worst_dpM, eb);
    MBS_EXPECT(eb <= 1e-13, "double pendulum trial %d: bias rel err %.2e", trial, eb);
    for (int j = 0; j < 2; j++) {
      double ej[2] = {j == 0, j == 1};
      mbs_rnea(m, w, ej);
      for (int i = 0; i < 2; i++) e[i] = w->qfrc_inv[i] - b0[i];
      double Mcol[2] = {M[j], M[2 + j]};
      double em = mbs_test_relDiff(e, Mcol, 2, 1e-300);
      upd(&worst_dpM, em);
      MBS_EXPECT(em <= 1e-13, "double pendulum trial %d: mass matrix column %d rel err %.2e", trial,
                 j, em);
    }
  }
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&m);
}

// ------------------------------------------------------------------ prismatic under gravity
// A body sliding along unit axis a (no rotation): m q'' = m g.a - k (q - ref) - c q' + f + tau,
// whatever its COM offset and inertia.
static void prismatic(void) {
  mbsModel *m = newModel();
  mbsBodySpec sp;
  mbs_bodySpecDefault(&sp);
  const double a[3] = {1 / sqrt(5.25), -2 / sqrt(5.25), 0.5 / sqrt(5.25)}, mass = 2.3;
  const double k = 3.0, ref = 0.4, c = 0.6, f = -0.8;
  sp.jnttype = MBS_JNT_PRISMATIC;
  memcpy(sp.axis, a, sizeof a);
  sp.origin[0] = 0.2, sp.origin[1] = 0.7, sp.origin[2] = -0.3;
  sp.mass = mass;
  sp.com[0] = 0.3, sp.com[1] = -0.25, sp.com[2] = 0.1;
  double l[3] = {0.1, 0.15, 0.2}, ax[3] = {1, 2, 3};
  rotatedInertia(l, ax, 0.8, sp.inertia);
  sp.stiffness[0] = k, sp.springref[0] = ref, sp.damping[0] = c, sp.force[0] = f;
  addBody(m, &sp);
  m->gravity[0] = 0.5, m->gravity[1] = -1.2, m->gravity[2] = -G;
  MBS_EXPECT_OK(mbs_modelFinalize(m));
  mbsState *s = NULL;
  mbsWork *w = NULL;
  MBS_EXPECT_OK(mbs_stateCreate(m, &s));
  MBS_EXPECT_OK(mbs_workCreate(m, &w));
  double ga = m->gravity[0] * a[0] + m->gravity[1] * a[1] + m->gravity[2] * a[2];
  for (int i = 0; i < 9; i++) {
    double q = -2 + 0.5 * i, qd = 1.5 - 0.3 * i, qa, qc;
    s->q[0] = q, s->qd[0] = qd, s->tau[0] = 0.1 * i;
    solveBoth(m, s, w, &qa, &qc, NULL, NULL);
    double r = (mass * ga - k * (q - ref) - c * qd + f + s->tau[0]) / mass;
    double ea = fabs(qa - r) / fabs(r), ec = fabs(qc - r) / fabs(r);
    upd(&worst_pri, ea), upd(&worst_pri, ec);
    MBS_EXPECT(ea <= 1e-13 && ec <= 1e-13, "prismatic q=%g: aba %.17g crba %.17g hand %.17g", q, qa,
               qc, r);
  }
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&m);
}

// ------------------------------------------------------------------ free body under gravity
// Free joint from the ground, COM c in the body frame, inertia Ic about the COM (body axes),
// orientation R, angular velocity w (body), no joint forces. Newton-Euler about the COM:
//   w' = Ic^{-1} (-w x Ic w)                     (torque-free Euler equations)
//   x_O'' = g - R (w' x c + w x (w x c))         (origin acceleration; = g when c = 0)
// The free joint's qdd is [x_O'' in the parent (world) frame, w' in the body frame].
static void free_body(int offset) {
  unsigned long long st = 991 + (unsigned long long)offset;
  for (int trial = 0; trial < 20; trial++) {
    mbsModel *m = newModel();
    mbsBodySpec sp;
    mbs_bodySpecDefault(&sp);
    sp.jnttype = MBS_JNT_FREE;
    sp.mass = mbs_test_uniform(&st, 0.5, 3);
    for (int k = 0; k < 3; k++) {
      sp.origin[k] = mbs_test_uniform(&st, -1, 1);
      sp.com[k] = offset ? mbs_test_uniform(&st, -0.5, 0.5) : 0;
    }
    double l0 = mbs_test_uniform(&st, 0.05, 0.3), l1 = mbs_test_uniform(&st, 0.05, 0.3);
    double l[3] = {l0, l1, mbs_test_uniform(&st, fabs(l0 - l1) + 0.01, l0 + l1 - 0.01)};
    double ax[3] = {mbs_test_uniform(&st, -1, 1), mbs_test_uniform(&st, -1, 1), 0.4};
    rotatedInertia(l, ax, mbs_test_uniform(&st, 0, 3), sp.inertia);
    double qq[4], n = 0;
    for (int k = 0; k < 4; k++) qq[k] = mbs_test_uniform(&st, -1, 1), n += qq[k] * qq[k];
    for (int k = 0; k < 3; k++) sp.q0[k] = mbs_test_uniform(&st, -2, 2);
    for (int k = 0; k < 4; k++) sp.q0[3 + k] = qq[k] / sqrt(n);
    for (int k = 0; k < 6; k++) sp.qd0[k] = mbs_test_uniform(&st, -3, 3);
    addBody(m, &sp);
    m->gravity[0] = 0.3, m->gravity[1] = -0.2, m->gravity[2] = -G;
    MBS_EXPECT_OK(mbs_modelFinalize(m));
    mbsState *s = NULL;
    mbsWork *w = NULL;
    MBS_EXPECT_OK(mbs_stateCreate(m, &s));
    MBS_EXPECT_OK(mbs_workCreate(m, &w));
    double qa[6], qc[6], ref[6], Ic[9], Iw[3], rhs[3], R[9], c[3];
    solveBoth(m, s, w, qa, qc, NULL, NULL);
    const double *om = s->qd + 3;
    memcpy(c, sp.com, sizeof c);
    sym3(sp.inertia, Ic);
    for (int i = 0; i < 3; i++)
      Iw[i] = Ic[3 * i] * om[0] + Ic[3 * i + 1] * om[1] + Ic[3 * i + 2] * om[2];
    cross(om, Iw, rhs);
    for (int i = 0; i < 3; i++) rhs[i] = -rhs[i];
    solve3(Ic, rhs, ref + 3);
    double t1[3], t2[3], t3[3], bodyAcc[3];
    cross(ref + 3, c, t1);
    cross(om, c, t2);
    cross(om, t2, t3);
    for (int i = 0; i < 3; i++) bodyAcc[i] = t1[i] + t3[i];
    memcpy(R, w->xmat, sizeof R);
    for (int i = 0; i < 3; i++)
      ref[i] = m->gravity[i] -
               (R[3 * i] * bodyAcc[0] + R[3 * i + 1] * bodyAcc[1] + R[3 * i + 2] * bodyAcc[2]);
    double ea = mbs_test_relDiff(qa, ref, 6, 1e-300), ec = mbs_test_relDiff(qc, ref, 6, 1e-300);
    upd(&worst_free, ea), upd(&worst_free, ec);
    MBS_EXPECT(ea <= 1e-13 && ec <= 1e-13, "free body (com offset %d) trial %d: rel err %.2e %.2e",
               offset, trial, ea, ec);
    if (!offset)
      for (int i = 0; i < 3; i++)
        MBS_EXPECT(fabs(qa[i] - m->gravity[i]) <= 1e-14 * G, "free body: qdd_lin[%d] %.17g != g", i,
                   qa[i]);
    mbs_workDestroy(&w);
    mbs_stateDestroy(&s);
    mbs_modelDestroy(&m);
  }
}

// ------------------------------------------------------------------ spherical pendulum
// Spherical joint from the ground at o, COM c (body frame), Ic about the COM, orientation R,
// angular velocity w (body). Io = Ic + m (|c|^2 1 - c c^T) is the inertia about the pivot.
//   KE = 1/2 w^T Io w,   PE = -m g . (o + R c)
//   Io w' = -w x Io w + c x (m R^T g) + f - d w        (Euler's equation about the fixed pivot)
static void spherical_pendulum(void) {
  unsigned long long st = 4242;
  for (int trial = 0; trial < 20; trial++) {
    mbsModel *m = newModel();
    mbsBodySpec sp;
    mbs_bodySpecDefault(&sp);
    sp.jnttype = MBS_JNT_SPHERICAL;
    sp.mass = mbs_test_uniform(&st, 0.5, 3);
    double l0 = mbs_test_uniform(&st, 0.05, 0.3), l1 = mbs_test_uniform(&st, 0.05, 0.3);
    double l[3] = {l0, l1, mbs_test_uniform(&st, fabs(l0 - l1) + 0.01, l0 + l1 - 0.01)};
    double ax[3] = {mbs_test_uniform(&st, -1, 1), 0.3, mbs_test_uniform(&st, -1, 1)}, n = 0;
    rotatedInertia(l, ax, mbs_test_uniform(&st, 0, 3), sp.inertia);
    for (int k = 0; k < 3; k++) {
      sp.origin[k] = mbs_test_uniform(&st, -1, 1);
      sp.com[k] = mbs_test_uniform(&st, -0.8, 0.8);
      sp.qd0[k] = mbs_test_uniform(&st, -3, 3);
      sp.force[k] = mbs_test_uniform(&st, -1, 1);
      sp.damping[k] = mbs_test_uniform(&st, 0, 0.3);
    }
    for (int k = 0; k < 4; k++) sp.q0[k] = mbs_test_uniform(&st, -1, 1), n += sp.q0[k] * sp.q0[k];
    for (int k = 0; k < 4; k++) sp.q0[k] /= sqrt(n);
    addBody(m, &sp);
    m->gravity[0] = -0.4, m->gravity[1] = 0.7, m->gravity[2] = -G;
    MBS_EXPECT_OK(mbs_modelFinalize(m));
    mbsState *s = NULL;
    mbsWork *w = NULL;
    MBS_EXPECT_OK(mbs_stateCreate(m, &s));
    MBS_EXPECT_OK(mbs_workCreate(m, &w));
    double qa[3], qc[3], Io[9], R[9], Iw[3], rhs[3], ref[3], gb[3], t[3];
    solveBoth(m, s, w, qa, qc, NULL, NULL);
    const double *om = s->qd, *c = sp.com, mass = sp.mass;
    double cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
    sym3(sp.inertia, Io);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) Io[3 * i + j] += mass * ((i == j) * cc - c[i] * c[j]);
    memcpy(R, w->xmat, sizeof R);
    // energies
    for (int i = 0; i < 3; i++)
      Iw[i] = Io[3 * i] * om[0] + Io[3 * i + 1] * om[1] + Io[3 * i + 2] * om[2];
    double ke = 0.5 * (om[0] * Iw[0] + om[1] * Iw[1] + om[2] * Iw[2]), pe = 0;
    for (int i = 0; i < 3; i++) {
      double xc = sp.origin[i] + R[3 * i] * c[0] + R[3 * i + 1] * c[1] + R[3 * i + 2] * c[2];
      pe -= mass * m->gravity[i] * xc;
    }
    double eke = fabs(mbs_kineticEnergy(m, w) - ke) / ke;
    double epe = fabs(mbs_potentialEnergy(m, s, w) - pe) / (mass * G);
    upd(&worst_sphE, eke), upd(&worst_sphE, epe);
    MBS_EXPECT(eke <= 1e-14 && epe <= 1e-14, "spherical pendulum trial %d: KE err %.2e PE err %.2e",
               trial, eke, epe);
    // Euler's equation about the pivot
    for (int i = 0; i < 3; i++)
      gb[i] = mass * (R[i] * m->gravity[0] + R[3 + i] * m->gravity[1] + R[6 + i] * m->gravity[2]);
    cross(c, gb, t);
    cross(om, Iw, rhs);
    for (int i = 0; i < 3; i++) rhs[i] = -rhs[i] + t[i] + sp.force[i] - sp.damping[i] * om[i];
    solve3(Io, rhs, ref);
    double ea = mbs_test_relDiff(qa, ref, 3, 1e-300), ec = mbs_test_relDiff(qc, ref, 3, 1e-300);
    upd(&worst_sph, ea), upd(&worst_sph, ec);
    MBS_EXPECT(ea <= 1e-13 && ec <= 1e-13, "spherical pendulum trial %d: rel err %.2e %.2e", trial,
               ea, ec);
    mbs_workDestroy(&w);
    mbs_stateDestroy(&s);
    mbs_modelDestroy(&m);
  }
}

// ------------------------------------------------------------------ hanging chains
// n links hanging straight down along the gravity direction u = g/|g| (links of length L along
// u, COM at L/2 along u, q = 0, qd = 0, springs relaxed at q = 0, no joint forces): every joint
// axis passes through the vertical line that carries all the mass below it, so all
// accelerations vanish. Joint j (the wrench its parent exerts on body j, world frame, torque
// about the joint origin) carries the weight of bodies j..n-1: force = -(sum m) g, torque = 0.
static void hanging_chain(int jnttype, int tilted) {
  const int n = 64;
  const double L = 0.25;
  double g[3] = {0, 0, -G};
  if (tilted) g[0] = 2.1, g[1] = -1.3, g[2] = -9.5;
  double gn = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]),
         u[3] = {g[0] / gn, g[1] / gn, g[2] / gn};
  unsigned long long st = 31 + (unsigned long long)(jnttype * 2 + tilted);
  mbsModel *m = newModel();
  for (int b = 0; b < n; b++) {
    mbsBodySpec sp;
    mbs_bodySpecDefault(&sp);
    sp.parent = b - 1;
    sp.jnttype = jnttype;
    sp.mass = mbs_test_uniform(&st, 0.01, 0.1);
    // random axes, the two universal axes well apart (|a x a2| >= 0.5 |a| |a2|)
    for (double sn = 0; sn < 0.5;) {
      for (int k = 0; k < 3; k++) {
        sp.origin[k] = b ? L * u[k] : 0;
        sp.com[k] = 0.5 * L * u[k];
        sp.axis[k] = mbs_test_uniform(&st, -1, 1);
        sp.axis2[k] = mbs_test_uniform(&st, -1, 1);
      }
      double cr[3];
      cross(sp.axis, sp.axis2, cr);
      sn = sqrt(cr[0] * cr[0] + cr[1] * cr[1] + cr[2] * cr[2]) /
           sqrt(sp.axis[0] * sp.axis[0] + sp.axis[1] * sp.axis[1] + sp.axis[2] * sp.axis[2]) /
           sqrt(sp.axis2[0] * sp.axis2[0] + sp.axis2[1] * sp.axis2[1] + sp.axis2[2] * sp.axis2[2]);
    }
    double J = sp.mass * L * L / 12, l[3] = {J, J, 0.2 * J}, ax[3] = {1, 0.5, 0.2};
    rotatedInertia(l, ax, mbs_test_uniform(&st, 0, 3), sp.inertia);
    if (jnttype == MBS_JNT_SPHERICAL) sp.q0[0] = 1;
    for (int k = 0; k < mbs_jntNv(jnttype); k++) {
      if (jnttype != MBS_JNT_SPHERICAL) sp.stiffness[k] = mbs_test_uniform(&st, 0, 1);
      sp.damping[k] = mbs_test_uniform(&st, 0, 1);
    }
    addBody(m, &sp);
  }
  memcpy(m->gravity, g, sizeof g);
  MBS_EXPECT_OK(mbs_modelFinalize(m));
  mbsState *s = NULL;
  mbsWork *w = NULL;
  MBS_EXPECT_OK(mbs_stateCreate(m, &s));
  MBS_EXPECT_OK(mbs_workCreate(m, &w));
  double *qa = calloc((size_t)m->nv, sizeof(double)), *qc = calloc((size_t)m->nv, sizeof(double));
  double *ja = calloc(6 * (size_t)n, sizeof(double)), *jc = calloc(6 * (size_t)n, sizeof(double));
  solveBoth(m, s, w, qa, qc, ja, jc);
  double amax = 0;
  for (int d = 0; d < m->nv; d++) {
    if (fabs(qa[d]) > amax) amax = fabs(qa[d]);
    if (fabs(qc[d]) > amax) amax = fabs(qc[d]);
  }
  printf("  hanging %s chain (gravity %s): max |qdd| %.3e, max |qdd| L/|g| %.3e\n",
         mbs_jntName(jnttype), tilted ? "tilted" : "along -z", amax, amax * L / gn);
  // dimensionless: |qdd| relative to the natural scale |g|/L of the links
  upd(&worst_hang, amax * L / gn);
  MBS_EXPECT(amax * L / gn <= 1e-12, "hanging %s chain (tilted %d): max |qdd| = %.3e",
             mbs_jntName(jnttype), tilted, amax);
  // joint wrenches: force = -(mass below) g, torque about the joint origin = 0
  double below = 0, wmax = 0;
  for (int b = n - 1; b >= 0; b--) {
    below += m->body_mass[b];
    for (int k = 0; k < 3; k++) {
      double fref = -below * g[k];
      double e = fmax(fabs(ja[6 * b + 3 + k] - fref), fabs(jc[6 * b + 3 + k] - fref));
      e = fmax(e, fmax(fabs(ja[6 * b + k]), fabs(jc[6 * b + k])) / L);
      if (e > wmax) wmax = e;
    }
  }
  wmax /= mbs_modelTotalMass(m) * G;
  upd(&worst_wrench, wmax);
  MBS_EXPECT(wmax <= 1e-13, "hanging %s chain (tilted %d): joint wrench rel err %.3e",
             mbs_jntName(jnttype), tilted, wmax);
  // first joint: the force carries the total weight, pointing against gravity
  double up = -(ja[3] * u[0] + ja[4] * u[1] + ja[5] * u[2]);
  MBS_EXPECT(up > 0 && fabs(up - mbs_modelTotalMass(m) * gn) <= 1e-12 * up,
             "first joint force along -g %.17g, expected total weight %.17g", up,
             mbs_modelTotalMass(m) * gn);
  // the joint wrench is pure constraint (S^T f = 0): |lambda| = |f| since T is orthonormal
  mbs_fwdPosition(m, s, w);
  mbs_fwdVelocity(m, s, w);
  MBS_EXPECT_OK(mbs_aba(m, w));
  mbs_constraintLambda(m, w);
  for (int b = 0; b < n; b++) {
    double fl = 0, ll = 0;
    for (int k = 0; k < 6; k++) fl += w->jfrc[6 * b + k] * w->jfrc[6 * b + k];
    for (int k = 0; k < m->body_lamnum[b]; k++)
      ll += w->lam[m->body_lamadr[b] + k] * w->lam[m->body_lamadr[b] + k];
    MBS_EXPECT(fabs(sqrt(fl) - sqrt(ll)) <= 1e-12 * sqrt(fl), "body %d: |lambda| %.17g |f| %.17g",
               b, sqrt(ll), sqrt(fl));
  }
  free(qa), free(qc), free(ja), free(jc);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&m);
}

// ------------------------------------------------------------------ constraint-force formulation
// docs/formulation.md part 2, checked densely: A = J^T M J (J: constraint forces -> body
// wrenches, M = blockdiag(I_i^{-1})) equals the block formulas (diagonal, parent, child, sibling,
// and zero elsewhere), is SPD, and A lam = b with b_i = T_i^T (c_i + X_ip abar_p - abar_i)
// reproduces ABA's constraint forces lam = T^T jfrc and, through the recovery formulas, its qdd.
static double worst_cfA = 0, worst_cfLam = 0, worst_cfQdd = 0;

// dense n x n inverse by Gauss-Jordan with partial pivoting (n <= 6); returns 0 if singular
static int inv6(const double *A, double *Ai, int n) {
  double W[72];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < 2 * n; j++) W[2 * n * i + j] = j < n ? A[n * i + j] : (j - n == i);
  for (int c = 0; c < n; c++) {
    int piv = c;
    for (int r = c + 1; r < n; r++)
      if (fabs(W[2 * n * r + c]) > fabs(W[2 * n * piv + c])) piv = r;
    if (W[2 * n * piv + c] == 0) return 0;
    for (int j = 0; j < 2 * n; j++) {
      double t = W[2 * n * c + j];
      W[2 * n * c + j] = W[2 * n * piv + j];
      W[2 * n * piv + j] = t;
    }
    double d = W[2 * n * c + c];
    for (int j = 0; j < 2 * n; j++) W[2 * n * c + j] /= d;
    for (int r = 0; r < n; r++)
      if (r != c) {
        double f = W[2 * n * r + c];
        for (int j = 0; j < 2 * n; j++) W[2 * n * r + j] -= f * W[2 * n * c + j];
      }
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) Ai[n * i + j] = W[2 * n * i + n + j];
  return 1;
}

// full 6x6 Plücker matrix [E 0; -E r^ E] from the compact (E, r)
static void fullX(const double *X, double *X6) {
  const double *E = X, *r = X + 9;
  double rx[9] = {0, -r[2], r[1], r[2], 0, -r[0], -r[1], r[0], 0};
  memset(X6, 0, 36 * sizeof(double));
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double erx = 0;
      for (int k = 0; k < 3; k++) erx += E[3 * i + k] * rx[3 * k + j];
      X6[6 * i + j] = X6[6 * (3 + i) + 3 + j] = E[3 * i + j];
      X6[6 * (3 + i) + j] = -erx;
    }
}

// C (r x c) = op(A) B with op = transpose if ta; A is (ta ? k x r : r x k), B is k x c
static void gemm(const double *A, int ta, const double *B, double *C, int r, int k, int c) {
  for (int i = 0; i < r; i++)
    for (int j = 0; j < c; j++) {
      double s = 0;
      for (int l = 0; l < k; l++) s += (ta ? A[r * l + i] : A[k * i + l]) * B[c * l + j];
      C[c * i + j] = s;
    }
}

// block formula of A_ik from docs/formulation.md 2.4 (nl_i x nl_k), 0 blocks where not coupled
static void blockFormula(const mbsModel *m, const double *Tm, const double *Mm, const double *X6,
                         int i, int k, double *B) {
  int ni = m->body_lamnum[i], nk = m->body_lamnum[k], p = m->body_parent[i];
  int pk = m->body_parent[k];
  const double *Ti = Tm + 36 * i, *Tk = Tm + 36 * k;
  double t1[36], t2[36], t3[36], t4[36];
  memset(B, 0, (size_t)(ni * nk) * sizeof(double));
  // T stored as nl columns of 6: as a 6 x nl matrix, T[6*col + row] -> transpose layout
  double Ti6[36], Tk6[36]; // 6 x ni, 6 x nk row-major
  for (int a = 0; a < 6; a++) {
    for (int c = 0; c < ni; c++) Ti6[ni * a + c] = Ti[6 * c + a];
    for (int c = 0; c < nk; c++) Tk6[nk * a + c] = Tk[6 * c + a];
  }
  if (i == k) {
    // D_i = T^T (M_i + X_ip M_p X_ip^T) T
    double Mt[36];
    memcpy(Mt, Mm + 36 * i, sizeof Mt);
    if (p >= 0) {
      gemm(X6 + 36 * i, 0, Mm + 36 * p, t1, 6, 6, 6); // X M_p
      double Xt[36];
      for (int a = 0; a < 6; a++)
        for (int c = 0; c < 6; c++) Xt[6 * a + c] = X6[36 * i + 6 * c + a];
      gemm(t1, 0, Xt, t2, 6, 6, 6);
      for (int a = 0; a < 36; a++) Mt[a] += t2[a];
    }
    gemm(Mt, 0, Ti6, t3, 6, 6, ni);
    gemm(Ti6, 1, t3, B, ni, 6, ni);
  } else if (p >= 0 && k == p) {
    // parent: -T_i^T X_ip M_p T_p
    gemm(X6 + 36 * i, 0, Mm + 36 * p, t1, 6, 6, 6);
    gemm(t1, 0, Tk6, t2, 6, 6, nk);
    gemm(Ti6, 1, t2, B, ni, 6, nk);
    for (int a = 0; a < ni * nk; a++) B[a] = -B[a];
  } else if (pk == i) {
    // child k of i: -T_i^T M_i X_ki^T T_k
    gemm(X6 + 36 * k, 1, Tk6, t1, 6, 6, nk); // X_ki^T T_k
    gemm(Mm + 36 * i, 0, t1, t2, 6, 6, nk);
    gemm(Ti6, 1, t2, B, ni, 6, nk);
    for (int a = 0; a < ni * nk; a++) B[a] = -B[a];
  } else if (p >= 0 && pk == p) {
    // sibling: +T_i^T X_ip M_p X_kp^T T_k
    gemm(X6 + 36 * k, 1, Tk6, t1, 6, 6, nk);
    gemm(Mm + 36 * p, 0, t1, t2, 6, 6, nk);
    gemm(X6 + 36 * i, 0, t2, t3, 6, 6, nk);
    gemm(Ti6, 1, t3, t4, ni, 6, nk);
    memcpy(B, t4, (size_t)(ni * nk) * sizeof(double));
  }
}

static void constraint_formulation(unsigned long long seed, int nbody) {
  mbsModel *m = NULL;
  mbsState *s = NULL;
  mbsWork *w = NULL;
  MBS_EXPECT_OK(mbs_test_randomModel(nbody, mbs_test_alltypes, 7, 0, seed, &m));
  if (!m) return;
  MBS_EXPECT_OK(mbs_stateCreate(m, &s));
  MBS_EXPECT_OK(mbs_workCreate(m, &w));
  int n = m->nbody, nl = m->nlam;
  mbs_fwdPosition(m, s, w);
  mbs_fwdVelocity(m, s, w);
  MBS_EXPECT_OK(mbs_aba(m, w));
  mbs_constraintLambda(m, w);
  double *Tm = calloc(36 * (size_t)n, sizeof(double)), *Mm = calloc(36 * (size_t)n, sizeof(double));
  double *X6 = calloc(36 * (size_t)n, sizeof(double));
  double *J = calloc(6 * (size_t)n * (size_t)(nl + 1), sizeof(double));
  double *MJ = calloc(6 * (size_t)n * (size_t)(nl + 1), sizeof(double));
  double *A = calloc((size_t)(nl + 1) * (size_t)(nl + 1), sizeof(double));
  double *b = calloc((size_t)nl + 1, sizeof(double)), *abar = calloc(6 * (size_t)n, sizeof(double));
  double *wbar = calloc(6 * (size_t)n, sizeof(double)),
         *lam = calloc((size_t)nl + 1, sizeof(double));
  for (int i = 0; i < n; i++) {
    double I6[36];
    mbs_bodyComplement(m, w, i, Tm + 36 * i);
    mbsu_rbiFull(m->body_sinert + 10 * i, I6);
    MBS_EXPECT(inv6(I6, Mm + 36 * i, 6), "singular body inertia");
    fullX(w->xpar + 12 * i, X6 + 36 * i);
  }
  // J (6n x nl): column block of joint i = T_i in body i's rows, -X_ip^T T_i in the parent's
  for (int i = 0; i < n; i++) {
    int p = m->body_parent[i];
    for (int c = 0; c < m->body_lamnum[i]; c++) {
      int col = m->body_lamadr[i] + c;
      const double *t = Tm + 36 * i + 6 * c;
      for (int a = 0; a < 6; a++) J[(size_t)nl * (6 * i + a) + col] = t[a];
      if (p >= 0)
        for (int a = 0; a < 6; a++) {
          double v = 0;
          for (int r = 0; r < 6; r++) v += X6[36 * i + 6 * r + a] * t[r]; // (X^T t)_a
          J[(size_t)nl * (6 * p + a) + col] = -v;
        }
    }
  }
  // A = J^T M J
  for (int bb = 0; bb < n; bb++)
    for (int a = 0; a < 6; a++)
      for (int col = 0; col < nl; col++) {
        double v = 0;
        for (int r = 0; r < 6; r++)
          v += Mm[36 * bb + 6 * a + r] * J[(size_t)nl * (6 * bb + r) + col];
        MJ[(size_t)nl * (6 * bb + a) + col] = v;
      }
  for (int r = 0; r < nl; r++)
    for (int c = 0; c < nl; c++) {
      double v = 0;
      for (int k = 0; k < 6 * n; k++) v += J[(size_t)nl * k + r] * MJ[(size_t)nl * k + c];
      A[(size_t)nl * r + c] = v;
    }
  // block formulas vs A
  double amax = 0, emax = 0;
  for (int k = 0; k < nl * nl; k++) amax = fmax(amax, fabs(A[k]));
  for (int i = 0; i < n; i++)
    for (int k = 0; k < n; k++) {
      double B[36];
      blockFormula(m, Tm, Mm, X6, i, k, B);
      for (int r = 0; r < m->body_lamnum[i]; r++)
        for (int c = 0; c < m->body_lamnum[k]; c++) {
          double e = fabs(B[m->body_lamnum[k] * r + c] -
                          A[(size_t)nl * (m->body_lamadr[i] + r) + m->body_lamadr[k] + c]);
          emax = fmax(emax, e);
        }
    }
  emax /= amax > 0 ? amax : 1;
  upd(&worst_cfA, emax);
  MBS_EXPECT(emax <= 1e-13, "seed %llu: block formulas vs J^T M J rel err %.3e", seed, emax);
  // b: known wrenches wbar_i = -v x* I v + F tau - sum_children X^T F tau
  for (int i = 0; i < n; i++) {
    int k = m->body_dofnum[i], d0 = m->body_dofadr[i];
    const double *S = w->sdof + 6 * d0;
    double SS[36], SSi[36], Ft[6] = {0, 0, 0, 0, 0, 0}, y[6];
    for (int a = 0; a < k; a++)
      for (int c = 0; c < k; c++) SS[k * a + c] = mbsu_dot6(S + 6 * a, S + 6 * c);
    if (k > 0) MBS_EXPECT(inv6(SS, SSi, k), "singular S^T S");
    for (int a = 0; a < k; a++) {
      y[a] = 0;
      for (int c = 0; c < k; c++) y[a] += SSi[k * a + c] * w->qfrc[d0 + c];
    }
    for (int a = 0; a < k; a++)
      for (int r = 0; r < 6; r++) Ft[r] += S[6 * a + r] * y[a]; // F tau = S (S^T S)^-1 tau
    for (int r = 0; r < 6; r++) wbar[6 * i + r] += Ft[r] - w->cbias[6 * i + r];
    int p = m->body_parent[i];
    if (p >= 0) {
      double t6[6];
      mbsu_xTForce(w->xpar + 12 * i, Ft, t6);
      for (int r = 0; r < 6; r++) wbar[6 * p + r] -= t6[r];
    }
  }
  for (int i = 0; i < n; i++) mbsu_mul6(Mm + 36 * i, wbar + 6 * i, abar + 6 * i);
  for (int i = 0; i < n; i++) {
    int p = m->body_parent[i];
    double ap[6], g0[6] = {0, 0, 0, -m->gravity[0], -m->gravity[1], -m->gravity[2]}, r6[6];
    mbsu_xMotion(w->xpar + 12 * i, p >= 0 ? abar + 6 * p : g0, ap);
    for (int r = 0; r < 6; r++) r6[r] = w->cacc[6 * i + r] + ap[r] - abar[6 * i + r];
    for (int c = 0; c < m->body_lamnum[i]; c++)
      b[m->body_lamadr[i] + c] = mbsu_dot6(Tm + 36 * i + 6 * c, r6);
  }
  // solve A lam = b by Cholesky (also shows A is SPD)
  int spd = 1;
  for (int j = 0; j < nl && spd; j++) {
    double d = A[(size_t)nl * j + j];
    for (int l = 0; l < j; l++) d -= A[(size_t)nl * j + l] * A[(size_t)nl * j + l];
    if (!(d > 0)) {
      spd = 0;
      break;
    }
    d = sqrt(d);
    A[(size_t)nl * j + j] = d;
    for (int i = j + 1; i < nl; i++) {
      double v = A[(size_t)nl * i + j];
      for (int l = 0; l < j; l++) v -= A[(size_t)nl * i + l] * A[(size_t)nl * j + l];
      A[(size_t)nl * i + j] = v / d;
    }
  }
  MBS_EXPECT(spd, "seed %llu: J^T M J is not positive definite", seed);
  if (spd && nl > 0) {
    for (int i = 0; i < nl; i++) {
      double v = b[i];
      for (int l = 0; l < i; l++) v -= A[(size_t)nl * i + l] * lam[l];
      lam[i] = v / A[(size_t)nl * i + i];
    }
    for (int i = nl - 1; i >= 0; i--) {
      double v = lam[i];
      for (int l = i + 1; l < nl; l++) v -= A[(size_t)nl * l + i] * lam[l];
      lam[i] = v / A[(size_t)nl * i + i];
    }
    double el = mbs_test_relDiff(lam, w->lam, nl, 1e-300);
    upd(&worst_cfLam, el);
    MBS_EXPECT(el <= 1e-10, "seed %llu: lambda from A lam = b vs ABA rel err %.3e", seed, el);
    // recovery: a_i = M_i (wbar_i + T_i lam_i - sum_children X^T T_j lam_j);
    // qdd_i = (S^T S)^-1 S^T (a_i - X_ip a_p - c_i)
    double *acc = calloc(6 * (size_t)n, sizeof(double)),
           *wt = calloc(6 * (size_t)n, sizeof(double));
    double *qdd = calloc((size_t)m->nv + 1, sizeof(double));
    memcpy(wt, wbar, 6 * (size_t)n * sizeof(double));
    for (int i = 0; i < n; i++) {
      double tl[6] = {0, 0, 0, 0, 0, 0}, t6[6];
      for (int c = 0; c < m->body_lamnum[i]; c++)
        for (int r = 0; r < 6; r++) tl[r] += Tm[36 * i + 6 * c + r] * lam[m->body_lamadr[i] + c];
      for (int r = 0; r < 6; r++) wt[6 * i + r] += tl[r];
      if (m->body_parent[i] >= 0) {
        mbsu_xTForce(w->xpar + 12 * i, tl, t6);
        for (int r = 0; r < 6; r++) wt[6 * m->body_parent[i] + r] -= t6[r];
      }
    }
    for (int i = 0; i < n; i++) mbsu_mul6(Mm + 36 * i, wt + 6 * i, acc + 6 * i);
    for (int i = 0; i < n; i++) {
      int p = m->body_parent[i], k = m->body_dofnum[i], d0 = m->body_dofadr[i];
      const double *S = w->sdof + 6 * d0;
      double g0[6] = {0, 0, 0, -m->gravity[0], -m->gravity[1], -m->gravity[2]}, ap[6], r6[6];
      double SS[36], SSi[36], y[6];
      mbsu_xMotion(w->xpar + 12 * i, p >= 0 ? acc + 6 * p : g0, ap);
      for (int r = 0; r < 6; r++) r6[r] = acc[6 * i + r] - ap[r] - w->cacc[6 * i + r];
      for (int a = 0; a < k; a++) {
        y[a] = mbsu_dot6(S + 6 * a, r6);
        for (int c = 0; c < k; c++) SS[k * a + c] = mbsu_dot6(S + 6 * a, S + 6 * c);
      }
      if (k > 0 && inv6(SS, SSi, k))
        for (int a = 0; a < k; a++) {
          qdd[d0 + a] = 0;
          for (int c = 0; c < k; c++) qdd[d0 + a] += SSi[k * a + c] * y[c];
        }
    }
    double eq = mbs_test_relDiff(qdd, w->qdd, m->nv, 1e-300);
    upd(&worst_cfQdd, eq);
    MBS_EXPECT(eq <= 1e-10, "seed %llu: qdd recovered from lambda vs ABA rel err %.3e", seed, eq);
    free(acc), free(wt), free(qdd);
  }
  free(Tm), free(Mm), free(X6), free(J), free(MJ), free(A), free(b), free(abar), free(wbar);
  free(lam);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&m);
}

int main(void) {
  single_pendulum(1.7, 1.2, 1e-6, "point-mass pendulum");
  single_pendulum(1.7595, 1.0, 1.7595 * 2.0 * 2.0 / 12, "uniform rod pendulum (L=2)");
  single_pendulum(0.4, 0.35, 0.4 * 0.7 * 0.7 / 12, "uniform rod pendulum (L=0.7)");
  double_pendulum();
  prismatic();
  free_body(0);
  free_body(1);
  spherical_pendulum();
  for (int tilted = 0; tilted < 2; tilted++) {
    hanging_chain(MBS_JNT_REVOLUTE, tilted);
    hanging_chain(MBS_JNT_UNIVERSAL, tilted);
    hanging_chain(MBS_JNT_SPHERICAL, tilted);
  }
  for (unsigned long long seed = 1; seed <= 40; seed++)
    constraint_formulation(seed, 2 + (int)(seed % 12));
  printf("constraint-force formulation (40 random trees): blocks vs J^T M J %.3e, lambda vs ABA "
         "%.3e, recovered qdd vs ABA %.3e\n",
         worst_cfA, worst_cfLam, worst_cfQdd);
  printf("single pendulum (point mass, rods; 27 states): worst rel err %.3e\n", worst_pend);
  printf("double pendulum (50 states): worst rel err qdd %.3e, M and bias %.3e\n", worst_dp,
         worst_dpM);
  printf("prismatic under gravity: worst rel err %.3e\n", worst_pri);
  printf("free body (Euler equations, COM at origin and offset): worst rel err %.3e\n", worst_free);
  printf("spherical pendulum: worst rel err qdd %.3e, energies %.3e\n", worst_sph, worst_sphE);
  printf("64-link hanging chains (revolute, universal, spherical): worst |qdd| L/|g| %.3e, worst "
         "joint wrench rel err %.3e\n",
         worst_hang, worst_wrench);
  return mbs_test_finish("test_closedform");
}
