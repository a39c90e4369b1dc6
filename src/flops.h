/// \file flops.h
/// Flop counts of the kernels the solvers run, defined ONCE: the counting macro MBS_FLOPS(n) at
/// every kernel call site of the evaluation (dynamics.c, cfs.c) and the node costs of the
/// data-flow graphs in critpath.c use the same constants and functions below, so the graph's
/// total work T1 and the counted flops of a real evaluation cannot drift apart (test_cpa.c checks
/// that they are equal).
///
/// Counting rule: one flop per +, -, *, /, sqrt, sin, cos on reals (a sign change, a copy, a
/// comparison and fabs count zero). Counts are of the code as written (e.g. an accumulation that
/// starts from zero counts its first add), derived line by line from spatial.h, dynamics.c and
/// cfs.c; docs/cpa.md lists the derivations.
///
/// MBS_FLOPS(n) compiles to nothing unless MBS_COUNT_FLOPS is defined (the instrumented build
/// used by test_cpa: CMake target mbs_core_flops); then it adds n to mbs_flop_count (atomically,
/// the constraint-force sweeps may run under OpenMP).
#ifndef MBS_FLOPS_H
#define MBS_FLOPS_H

#include "mbspar/mbs_model.h"

/// The global flop counter of the instrumented build (defined in critpath.c, always present).
extern unsigned long long mbs_flop_count;

#ifdef MBS_COUNT_FLOPS
#define MBS_FLOPS(n)                                                                               \
  do {                                                                                             \
    unsigned long long n_ = (unsigned long long)(n);                                               \
    _Pragma("omp atomic") mbs_flop_count += n_;                                                    \
  } while (0)
#else
#define MBS_FLOPS(n) ((void)0)
#endif

// ---- spatial.h kernels
#define MBS_FL_CROSS3      9  // 6 mul + 3 sub
#define MBS_FL_DOT3        5  // 3 mul + 2 add
#define MBS_FL_MAT3VEC     15 // 9 mul + 6 add
#define MBS_FL_MAT3        45 // 27 mul + 18 add
#define MBS_FL_ROTAXIS     36 // sin, cos, 1 - c, 9 entries (3 diagonal x 3, 6 off-diagonal x 4)
#define MBS_FL_QUAT2MAT    51 // norm 8, 4 div, 3 diagonal x 5, 6 off-diagonal x 4
#define MBS_FL_XMOTION     42 // cross 9, 3 sub, 2 mat3vec
#define MBS_FL_XFORCE      42 // xForce and xTForce: 2 mat3vec, cross 9, 3 add
#define MBS_FL_CROSSMOTION 30 // 3 cross + 3 add (crossForce the same)
#define MBS_FL_RBIMUL      42 // 15 + cross 9 + 3 add + cross 9 + 6
#define MBS_FL_MUL6        66 // 36 mul + 30 add
#define MBS_FL_DOT6        11 // 6 mul + 5 add
#define MBS_FL_ROTSYM3     75 // mat3 45 + 6 entries x 5
/// inertiaCongruenceAdd = 348 to form X^T I X + 36 adds into the target (the accumulation)
#define MBS_FL_CONGR_FORM 348
#define MBS_FL_CONGR_ACC  36
#define MBS_FL_CONGRUENCE (MBS_FL_CONGR_FORM + MBS_FL_CONGR_ACC)

/// mbsu_cholFactor(k): column j: 2j + sqrt; rows below: (k-1-j)(2j + 1).
static inline long mbs_flopChol(int k) {
  long f = 0;
  for (int j = 0; j < k; j++) f += 2 * j + 1 + (long)(k - 1 - j) * (2 * j + 1);
  return f;
}
/// mbsu_cholSolve(k): forward + backward substitution, k^2 each.
static inline long mbs_flopCholSolve(int k) {
  return 2L * k * k;
}
/// dynamics.c mbs_spdInverse(k) = mbsu_cholFactor + mbsu_cholInverse (k solves of 2 k^2).
static inline long mbs_flopSpdInverse(int k) {
  return mbs_flopChol(k) + (long)k * mbs_flopCholSolve(k);
}
/// cfs.c mbs_congruence(ka, kb, add): kb x (mul6 + ka dot6) (+ ka kb adds when accumulating).
static inline long mbs_flopCongr(int ka, int kb, int add) {
  return (long)kb * (MBS_FL_MUL6 + (long)ka * MBS_FL_DOT6) + (add ? (long)ka * kb : 0);
}

// ---- position stage (mbs_bodyPosition)
/// Joint rotation and translation by joint type.
static inline long mbs_flopPosJoint(int type) {
  switch (type) {
  case MBS_JNT_REVOLUTE:
    return MBS_FL_ROTAXIS;
  case MBS_JNT_PRISMATIC:
    return 6;
  case MBS_JNT_CYLINDRICAL:
    return MBS_FL_ROTAXIS + 6;
  case MBS_JNT_UNIVERSAL:
    return 2 * MBS_FL_ROTAXIS + MBS_FL_MAT3 + MBS_FL_MAT3VEC;
  case MBS_JNT_SPHERICAL:
    return MBS_FL_QUAT2MAT;
  case MBS_JNT_FREE:
    return MBS_FL_QUAT2MAT + 3;
  default:
    return 0;
  }
}
/// Ground pose of a body with a parent: mat3 + mat3vec + 3 add.
#define MBS_FL_POSE (MBS_FL_MAT3 + MBS_FL_MAT3VEC + 3)

// ---- velocity stage (mbs_bodyVelocity)
/// vJ = S qd and cJ.
static inline long mbs_flopVelJoint(int nd, int type) {
  long f = nd == 1 ? 6 : 12L * nd;
  if (type == MBS_JNT_UNIVERSAL) f += MBS_FL_CROSS3 + 6;
  if (type == MBS_JNT_FREE) f += MBS_FL_CROSS3;
  return f;
}
#define MBS_FL_VEL_LINK (MBS_FL_XMOTION + 6)                 // v = X v_p + vJ
#define MBS_FL_VEL_C    (MBS_FL_CROSSMOTION + 6)             // c = cJ + v x vJ
#define MBS_FL_VEL_BIAS (MBS_FL_RBIMUL + MBS_FL_CROSSMOTION) // v x* I v
/// Applied joint forces: constant - damper (2), spring (3, scalar joints), + tau (1).
static inline long mbs_flopVelForce(int nd, int type, int has_tau) {
  int scalar = type != MBS_JNT_SPHERICAL && type != MBS_JNT_FREE;
  return (long)nd * (2 + (scalar ? 3 : 0) + (has_tau ? 1 : 0));
}

// ---- ABA: the reference projection of one joint (aba.c), also the non-specialised joints of
// mbs_aba (mbs_flopAba below)
/// Pass 2 joint projection: k == 1: U, u, D (+ 1/D); k > 1: U, u (78 k) and the block step.
static inline long mbs_flopAbaU(int k, int type) {
  if (k == 1) return type == MBS_JNT_REVOLUTE ? 30 + 6 + MBS_FL_DOT3 + 1 : 66 + 12 + 11 + 1;
  return 78L * k;
}
/// k > 1: D, D^-1, Du, DU, Ia (upper triangle), pa (dynamics.c mbs_abaProjectBlock).
static inline long mbs_flopAbaBlock(int k) {
  return 25L * k * k + 66L * k + 72 + mbs_flopSpdInverse(k);
}
#define MBS_FL_ABA_IA1 78                  // k == 1: Ia = IA - U U^T / D
#define MBS_FL_ABA_PA1 97                  // k == 1: pa = pA + IA c + U g
#define MBS_FL_ABA_PA0 72                  // fixed joint: pa = pA + IA c
#define MBS_FL_ABA_PF  (MBS_FL_XFORCE + 6) // pA_p += X^T pa
/// Pass 3 per body: a = X a_p + c (48); qdd (24 k + 2 k^2); f = IA a + pA (72).
#define MBS_FL_ABA_A (MBS_FL_XMOTION + 6)
static inline long mbs_flopAbaQdd(int k) {
  return 24L * k + 2L * k * k;
}
#define MBS_FL_ABA_F (MBS_FL_MUL6 + 6)

// ---- joint-specialised kernels: revolute joints about a coordinate axis +-e_k (jnt_axisk >= 0)
/// 1 if body b's joint runs the axis-specialised kernels (position and velocity stages, mbs_aba).
static inline int mbs_jntSpecial(const mbsModel *m, int b) {
  return m->body_jnttype[b] == MBS_JNT_REVOLUTE && m->jnt_axisk[b] >= 0;
}
#define MBS_FL_POS_K     3  // cos, sin, sign of the sine (axis -e_k)
#define MBS_FL_POSE_K    36 // xmat = xmat_p R: 3 rows x 2 entries x 3; xpos: mat3vec + 3
#define MBS_FL_VEL_JNT_K 1  // vJ = [sg qd e_k; 0]
#define MBS_FL_VEL_LNK_K 25 // v = X v_p + vJ: xMotionK 24 + 1
#define MBS_FL_VEL_C_K   4  // c = v x vJ: 4 nonzero entries, 1 mul each
/// Position stage of body b: joint transform and subspace (mbs_bodyPosition).
static inline long mbs_flopPosBody(const mbsModel *m, int b) {
  return mbs_jntSpecial(m, b) ? MBS_FL_POS_K : mbs_flopPosJoint(m->body_jnttype[b]);
}
/// Ground pose of body b (it has a parent).
static inline long mbs_flopPoseBody(const mbsModel *m, int b) {
  return mbs_jntSpecial(m, b) ? MBS_FL_POSE_K : MBS_FL_POSE;
}
/// Velocity stage of body b: vJ, the link v = X v_p + vJ (parent present), c.
static inline long mbs_flopVelJointBody(const mbsModel *m, int b) {
  return mbs_jntSpecial(m, b) ? MBS_FL_VEL_JNT_K
                              : mbs_flopVelJoint(m->body_dofnum[b], m->body_jnttype[b]);
}
static inline long mbs_flopVelLinkBody(const mbsModel *m, int b) {
  return mbs_jntSpecial(m, b) ? MBS_FL_VEL_LNK_K : MBS_FL_VEL_LINK;
}
static inline long mbs_flopVelCBody(const mbsModel *m, int b) {
  return mbs_jntSpecial(m, b) ? MBS_FL_VEL_C_K : MBS_FL_VEL_C;
}

/// The parts of mbs_aba (aba.c) per body, one per node kind of the ABA graph (critpath.c).
enum {
  MBS_FLA_U,         // pass 2: U, u, D^-1 (k >= 1)
  MBS_FLA_BLOCK,     // pass 2, k > 1: the block step (Ia and pa)
  MBS_FLA_IA,        // pass 2, k == 1: Ia = IA - U U^T / D
  MBS_FLA_PA,        // pass 2, k <= 1: pa = pA + Ia c + U u / D
  MBS_FLA_CONGR,     // pass 2: X^T Ia X formed
  MBS_FLA_CONGR_ACC, // ... and added into the parent's IA
  MBS_FLA_XF,        // pass 2: X^T pa
  MBS_FLA_XF_ACC,    // ... added into the parent's pA
  MBS_FLA_A,         // pass 3: a = X a_p + c
  MBS_FLA_QDD,       // pass 3: qdd and a += S qdd
  MBS_FLA_F          // pass 3: joint wrench f = IA a + pA
};
/// Flops of part \p part of mbs_aba for body b. Axis-specialised revolute joints (per body):
/// U: u = tau - sg pA_k (2), 1/D (1). IA: U/D (5), 15 entries x 2. PA: sg u, pa_k = sg tau, 5
/// entries x (Ia c 7 + 3). CONGR: cos 2t, sin 2t (5); rotation: A 2x2 block 11, B rows i, j
/// 12 + 18, C 11 + 6; translation: W 27, B' 6, Y 18, Z 18, A' 11. XF: xTForceK 24. A: xMotionK 24
/// + 4. QDD: y = IA a 66, qdd 3, a_k 2. F: f = y + pA + IA_k h, 18.
/// Every other joint: the reference projection (mbs_flopAbaU, mbs_flopAbaBlock, MBS_FL_ABA_IA1,
/// MBS_FL_ABA_PA1 / PA0) and the packed congruence mbsu_sym6CongruenceAdd (rotation 240 unless
/// the joint cannot rotate (prismatic, fixed), translation 99, accumulation 21).
static inline long mbs_flopAba(const mbsModel *m, int b, int part) {
  int k = m->body_dofnum[b], t = m->body_jnttype[b];
  if (mbs_jntSpecial(m, b)) {
    static const long fl[] = {3, 0, 35, 52, 143, 21, 24, 6, 28, 71, 18};
    return fl[part];
  }
  switch (part) {
  case MBS_FLA_U:
    return k >= 1 ? mbs_flopAbaU(k, t) : 0;
  case MBS_FLA_BLOCK:
    return k > 1 ? mbs_flopAbaBlock(k) : 0;
  case MBS_FLA_IA:
    return k == 1 ? MBS_FL_ABA_IA1 : 0;
  case MBS_FLA_PA:
    return k == 1 ? MBS_FL_ABA_PA1 : (k == 0 ? MBS_FL_ABA_PA0 : 0);
  case MBS_FLA_CONGR:
    return (t == MBS_JNT_PRISMATIC || t == MBS_JNT_FIXED ? 0 : 240) + 99;
  case MBS_FLA_CONGR_ACC:
    return 21;
  case MBS_FLA_XF:
    return MBS_FL_XFORCE;
  case MBS_FLA_XF_ACC:
    return MBS_FL_ABA_PF - MBS_FL_XFORCE;
  case MBS_FLA_A:
    return MBS_FL_ABA_A;
  case MBS_FLA_QDD:
    return mbs_flopAbaQdd(k);
  default: // MBS_FLA_F
    return MBS_FL_ABA_F;
  }
}

// ---- RNEA / CRBA
#define MBS_FL_RNEA_A  (MBS_FL_XMOTION + 6) // a = X a_p + c (+ 12 k with qdd)
#define MBS_FL_RNEA_F  (MBS_FL_RBIMUL + 6)  // f = I a + bias
#define MBS_FL_RNEA_PF (MBS_FL_XFORCE + 6)  // f_p += X^T f

// ---- constraint-force method (cfs.c)
/// mbs_bodyComplement: the perpendicular pair (27) or the universal normal (18).
static inline long mbs_flopComplement(int type) {
  switch (type) {
  case MBS_JNT_REVOLUTE:
  case MBS_JNT_PRISMATIC:
  case MBS_JNT_CYLINDRICAL:
    return 2 * MBS_FL_CROSS3 + MBS_FL_DOT3 + 4;
  case MBS_JNT_UNIVERSAL:
    return MBS_FL_CROSS3 + MBS_FL_DOT3 + 4;
  default:
    return 0;
  }
}
/// Force duals F = S (S^T S)^-1 for nd dofs.
static inline long mbs_flopCfsF(int nd) {
  if (nd <= 0) return 0;
  return 11L * nd * nd + mbs_flopChol(nd) + (long)nd * mbs_flopCholSolve(nd) + 12L * nd * nd;
}
/// Diagonal block D = T^T M T + G^T M_p G and its Cholesky factor.
static inline long mbs_flopCfsD(int nl, int has_parent) {
  if (nl <= 0) return 0;
  return mbs_flopCongr(nl, nl, 0) + (has_parent ? mbs_flopCongr(nl, nl, 1) : 0) + mbs_flopChol(nl);
}
/// Operator sweeps per body.
static inline long mbs_flopCfsUp(int nl, int nd, int known, int has_parent) {
  return 12L * nl + (known ? 12L * nd : 0) + (has_parent ? MBS_FL_XFORCE : 0);
}
static inline long mbs_flopCfsMid(int nchild, int known) {
  return (known ? 6 : 0) + 6L * nchild + MBS_FL_MUL6;
}
static inline long mbs_flopCfsDown(int nl) {
  return MBS_FL_XMOTION + 6 + 11L * nl;
}
/// mbs_cfsFinish per body: a, qdd and the joint wrench.
static inline long mbs_flopCfsFinish(int nd, int nl) {
  return MBS_FL_XMOTION + 12 + 11L * nd + 2L * nd * nd + 12L * nd + 12L * nl;
}
/// A local dot product of n entries as written (n mul + n-1 add).
static inline long mbs_flopDot(int n) {
  return n > 0 ? 2L * n - 1 : 0;
}

// ---- direct solver (solver_direct.c, cfs.c mbs_cfsAssemble)
/// D = L L^T rebuilt from the factor: entry (i, j) sums min(i, j) + 1 products.
static inline long mbs_flopLLt(int n) {
  long f = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) f += 2L * ((i < j ? i : j) + 1);
  return f;
}
/// Schur update C -= A^T B for n x ka and n x kb blocks: each entry n products, n adds, 1 sub.
static inline long mbs_flopSchur(int ka, int kb, int n) {
  return (long)ka * kb * (2L * n + 1);
}

/// Bisection steps of the tridiagonal eigenvalue search (cfs.c mbs_tridiagEig).
#define MBS_EIG_BISECT 200
/// mbs_tridiagEig(n): Gershgorin discs 3n; per bisection step the midpoint (2) and the Sturm
/// count (first pivot 1, then 4 per row); the final midpoint 2.
static inline long mbs_flopTridiagEig(int n) {
  return 3L * n + (long)MBS_EIG_BISECT * (2 + 1 + 4L * (n - 1)) + 2;
}
/// Lanczos coefficients from CG step it (solver_jcg.c mbs_cfsCg): a = 1/alpha (+ beta'/alpha'),
/// b = sqrt(|beta|)/alpha.
static inline long mbs_flopLanczosStep(int it) {
  return it > 1 ? 5 : 4;
}

#endif
