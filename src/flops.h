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
#include "mbspar/mbs_schur.h"

/// The global flop counter of the instrumented build (defined in critpath.c, always present).
extern unsigned long long mbs_flop_count;
/// Where the SMPI flop-cost build (bench/smpi/build.sh --flops: MBS_COUNT_FLOPS and
/// MBS_SMPI_FLOPS) sends the flops counted since its last call: the parallel layer installs a
/// function that charges them to the simulated clock (smpi_execute_flops), and mbs_wtime and
/// every MPI call of parallel/comm.c call it first, so the simulated time of each compute stretch
/// is its counted flops times the simulated host's time per flop. NULL (nothing) otherwise.
extern void (*mbs_flop_sink)(void);
/// Called by mbs_wtime after it read the clock: the SMPI warm-cache timed build
/// (bench/smpi/build.sh: mbspar_smpi_warm) re-reads the rank's own data there, untimed, as after
/// every MPI call (parallel/comm.c). NULL (nothing) otherwise.
extern void (*mbs_wtime_resume)(void);

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
/// mbsu_blockApply(k): a k x k matrix times a vector, k products and k sums per row (the first
/// sum starts from zero); the same 2 k^2 as the two triangular solves it replaced.
static inline long mbs_flopBlockApply(int k) {
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
/// Joint rotation and translation by joint type (its row of the joint table, mbs_joint.h).
static inline long mbs_flopPosJoint(int type) {
  return mbs_jntType(type)->flops_pose;
}
/// Ground pose of a body with a parent: mat3 + mat3vec + 3 add.
#define MBS_FL_POSE (MBS_FL_MAT3 + MBS_FL_MAT3VEC + 3)

// ---- velocity stage (mbs_bodyVelocity)
/// vJ = S qd and cJ (the joint table's count).
static inline long mbs_flopVelJoint(int nd, int type) {
  return (nd == 1 ? 6 : 12L * nd) + mbs_jntType(type)->flops_bias;
}
#define MBS_FL_VEL_LINK (MBS_FL_XMOTION + 6)                 // v = X v_p + vJ
#define MBS_FL_VEL_C    (MBS_FL_CROSSMOTION + 6)             // c = cJ + v x vJ
#define MBS_FL_VEL_BIAS (MBS_FL_RBIMUL + MBS_FL_CROSSMOTION) // v x* I v
/// Applied joint forces: constant - damper (2), spring (3, scalar joints), + tau (1).
static inline long mbs_flopVelForce(int nd, int type, int has_tau) {
  int scalar = !mbs_jntHasQuat(type);
  return (long)nd * (2 + (scalar ? 3 : 0) + (has_tau ? 1 : 0));
}

// ---- ABA: the reference projection of one joint (aba.c), also the non-specialised joints of
// mbs_aba (mbs_flopAba below)
/// Pass 2 joint projection: k == 1: U, u, D (+ 1/D); k > 1: U, u (78 k) and the block step.
static inline long mbs_flopAbaU(int k, int type) {
  if (k == 1) return mbs_jntIsRevolute(type) ? 30 + 6 + MBS_FL_DOT3 + 1 : 66 + 12 + 11 + 1;
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
  return mbs_jntIsRevolute(m->body_jnttype[b]) && m->jnt_axisk[b] >= 0;
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
    return (mbs_jntRotates(t) ? 240 : 0) + 99;
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

/// Of MBS_FLA_U, the part that reads the bias (u = tau - sg pA_k, axis-specialised joints): the
/// split pass 2 (mbs_abaBodyBackInertia / Bias) counts it in its bias half.
#define MBS_FL_ABA_UBIAS 2
/// mbs_abaBodyRhs. Axis-specialised joints: u = tau - sg pA_k (2); with a parent y = IA c (66,
/// skipped when homogeneous: c = 0), h = dinv (sg u - y_k) (3), pa = pA + y + IA_k h (18),
/// X^T pa (24), added to the parent's pA (6). Any other joint (k dofs, the generic record):
/// u = tau - S^T pA (12 k); with a parent y = IA c (66) and r = u - U^T c (12 k) unless
/// homogeneous, h = Dinv r (k (2k - 1)), pa = pA (+ y: 6) + U h (12 k), X^T pa, the add (6).
static inline long mbs_flopAbaRhs(const mbsModel *m, int b, int homog) {
  int has_parent = m->body_parent[b] >= 0;
  if (mbs_jntSpecial(m, b)) return has_parent ? 2 + (homog ? 0 : 66) + 3 + 18 + 24 + 6 : 2;
  long k = m->body_dofnum[b], f = 12 * k;
  if (!has_parent) return f;
  f += (homog ? 0 : 66 + 12 * k + 6) + k * (2 * k - 1) + 12 * k + MBS_FL_XFORCE + 6;
  return f;
}

// ---- RNEA / CRBA
#define MBS_FL_RNEA_A  (MBS_FL_XMOTION + 6) // a = X a_p + c (+ 12 k with qdd)
#define MBS_FL_RNEA_F  (MBS_FL_RBIMUL + 6)  // f = I a + bias
#define MBS_FL_RNEA_PF (MBS_FL_XFORCE + 6)  // f_p += X^T f

// ---- constraint-force method (cfs.c)
/// mbs_bodyComplement: the perpendicular pair (27) or the universal normal (18), by the joint
/// table.
static inline long mbs_flopComplement(int type) {
  return mbs_jntType(type)->flops_complement;
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
/// mbs_cfsPosition: D^-1 from D's factor (mbsu_cholInverse, mirrored), for the methods that
/// apply the preconditioner (mbsSolverType.precond).
static inline long mbs_flopCfsDinv(int nl) {
  return nl > 0 ? (long)nl * mbs_flopCholSolve(nl) : 0;
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

// ---- exact distributed solver (src/schur/, aba.c spikes, schur_par.c, engine.c kinematics)
// Counted as the code is written (loops over the packed and dense port systems included).
/// mbs_cholPacked(n): column j: 2j (d), sqrt, 1/d; rows below: 2j + 1 each (= mbsu_cholFactor + n).
static inline long mbs_flopCholPacked(int n) {
  return mbs_flopChol(n) + n;
}
/// mbs_fwdPacked / mbs_bwdPacked(n): row i: 2i + 1.
static inline long mbs_flopTriPacked(int n) {
  return (long)n * n;
}
/// mbs_fwdPackedRows(n, k): row i: i k (mul + sub), 1/L_ii, k mul.
static inline long mbs_flopTriRows(int n, int k) {
  return (long)k * n * (n - 1) + n + (long)k * n;
}
/// mbs_schurKnownWrench(nd): F tau = S (S^T S)^-1 tau.
static inline long mbs_flopSchurKnown(int nd) {
  if (nd <= 0) return 0;
  if (nd == 1) return MBS_FL_DOT6 + 1 + 6;
  return 11L * nd * nd + mbs_flopChol(nd) + mbs_flopCholSolve(nd) + 12L * nd;
}
/// mbs_schurPivotRevolute: G (27 + 30), Y = Phi_b G (60 + 3 mul6), T^T Phi_c T (75), D (15
/// entries: 3 x 6 + 12 x 12), d (6), rho (2 x 11 + 3 x 12).
#define MBS_FL_SCHUR_PIVREV 616
/// mbs_schurPivotGeneric(nl) without T: G, Y = Phi_b G, Phi_c T (42 + 66 + 66 per column), D
/// (lower triangle, 2 dot6 + 1), d (6), rho (2 dot6 + 1 per row).
static inline long mbs_flopSchurPivGen(int nl) {
  return 174L * nl + 23L * nl * (nl + 1) / 2 + 6 + 23L * nl;
}
/// mbs_schurUpdate(nl): Phi upper triangle (21 entries) and beta, 2 nl + 1 each.
static inline long mbs_flopSchurUpdate(int nl) {
  return 27L * (2 * nl + 1);
}
/// mbs_schurAbsorb of child c (nl constraints, generic: T costs tcost; wb: the parent's port
/// columns so far, ncc: the child's, vw = wb + ncc): pivot, its Cholesky, y, W, the update of
/// Phi_b and beta_b; with ports V, L^-1 V, Psi_b, Theta_b and gam_b.
static inline long mbs_flopSchurAbsorb(int nl, int revk, long tcost, int wb, int ncc, int vw) {
  if (nl == 0) return 0;
  long f = (revk ? MBS_FL_SCHUR_PIVREV : tcost + mbs_flopSchurPivGen(nl)) + mbs_flopCholPacked(nl) +
           mbs_flopTriPacked(nl) + mbs_flopTriRows(nl, 6) + mbs_flopSchurUpdate(nl);
  if (vw == 0) return f;
  return f + (long)MBS_FL_DOT6 * nl * (wb + ncc) + mbs_flopTriRows(nl, vw) +
         6L * vw * (2 * nl + 1) + ((long)vw * vw + vw) * (2 * nl + 1);
}
/// mbs_schurAttach of a lower port (nl, T tcost) with wb port columns before it.
static inline long mbs_flopSchurAttach(int nl, long tcost, int wb) {
  return tcost + 108L * nl + 11L * nl * nl + 11L * nl * wb + 11L * nl;
}
/// mbs_schurFinishComp: T (tcost) and Phi T; d; with an upper port the port system; at the ground
/// the root's pivot with its port columns (vw).
static inline long mbs_flopSchurFinish(int nl, long tcost, int nc, int up, int ground, int vw) {
  long f = (nl > 0 ? tcost + 66L * nl : 0) + 6;
  if (up) return f + 11L * nl * nl + 11L * nl * nc + 11L * nl;
  if (nl <= 0 || !ground) return f;
  f += 42L * nl + 11L * nl * (nl + 1) / 2 + mbs_flopCholPacked(nl) + 23L * nl +
       mbs_flopTriPacked(nl);
  if (vw > 0) f += 11L * nl * vw + mbs_flopTriRows(nl, vw) + ((long)vw * vw + vw) * (2 * nl + 1);
  return f;
}
/// mbs_schurFactor, a compliance-form body: (I^A)^-1 when it has inertia-form children (phi0),
/// its own known wrench (nd dofs), F tau - bias and a0 = M w; per compliance-form or outside
/// child X^T F_c tau_c subtracted (MBS_FL_SCHUR_KID, plus F_c tau_c for an outside child).
static inline long mbs_flopSchurStart(int phi0, int nd) {
  return (phi0 ? mbs_flopSpdInverse(6) : 0) + mbs_flopSchurKnown(nd) + 6 + MBS_FL_MUL6;
}
#define MBS_FL_SCHUR_KID (MBS_FL_XFORCE + 6)
/// spath: the start at the last body (port's G, its known force into pA), the ground's
/// right side (n port columns), the system at a root below an upper port (nc columns).
static inline long mbs_flopSpathStart(int nl, long tcost, int nd) {
  return tcost + 42L * nl + mbs_flopSchurKnown(nd) + MBS_FL_XFORCE + 6;
}
static inline long mbs_flopSpathGround(int n) {
  return 12L * n;
}
static inline long mbs_flopSpathUp(int nc) {
  return 78L * nc + 25L * nc * (nc + 1) / 2;
}
/// aba.c mbs_abaSpike (nq live columns): e (10: U^T c over c's four nonzero entries), per
/// column h, g (without e's zero entry 3 + k), pa (without its entry k, zero), gam (22) and
/// P = X^T pa (23: xTForceK without the add of pa_k), Theta += h pk^T on its lower triangle
/// (2 per entry).
static inline long mbs_flopSpikeSpec(int nq) {
  return 10 + 45L * nq + (long)nq * (nq + 1);
}
/// Its bias part alone (mbs_abaSpikeBias: e, and per column g and the add into gam); the rest is
/// its inertia part (mbs_abaSpikeInertia).
static inline long mbs_flopSpikeSpecBias(int nq) {
  return 10 + 11L * nq;
}
/// mbs_abaSpikeVec: h, pa (11: pa_k = 0) and X^T (23); mbs_abaBodyFwdSpike adds u - S^T p (2)
/// and the spike to the joint wrench (6).
#define MBS_FL_SPIKEVEC 34
#define MBS_FL_FWDSPIKE 8
/// The generic spike kernels (any other joint, k = dofnum; nq columns): e (24 k + 2 k^2), per
/// column gam and S^T P (12 + 12 k), D^-1 S^T P (2 k^2), P - U D^-1 S^T P (12 k) and X^T
/// (xTForce); Theta's lower triangle (2 k per entry).
static inline long mbs_flopSpikeGeneric(int k, int nq) {
  return 24L * k + 2L * k * k + (long)nq * (12 + 24L * k + 2L * k * k + MBS_FL_XFORCE) +
         (long)nq * (nq + 1) * k;
}
/// ... the spike vector: S^T p (11 k), D^-1 and U (2 k^2 + 12 k), X^T; pass 3: u - S^T p (12 k)
/// and the joint wrench (6).
static inline long mbs_flopSpikeVecGeneric(int k) {
  return 23L * k + 2L * k * k + MBS_FL_XFORCE;
}
/// The spike kernels of path body b (axis-specialised or generic), nq port columns.
static inline long mbs_flopSpikeBody(const mbsModel *m, int b, int nq) {
  return mbs_jntSpecial(m, b) ? mbs_flopSpikeSpec(nq) : mbs_flopSpikeGeneric(m->body_dofnum[b], nq);
}
static inline long mbs_flopSpikeVecBody(const mbsModel *m, int b) {
  return mbs_jntSpecial(m, b) ? MBS_FL_SPIKEVEC : mbs_flopSpikeVecGeneric(m->body_dofnum[b]);
}
/// aba.c mbs_abaSpikeCols (a tree of paths, nq columns, k = dofnum; spec: an axis-specialised
/// joint, k = 1 and u = sg u): e (24 k + 2 k^2), per column gam (13), S^T P (12 k), D^-1 (2 k^2),
/// P - U D^-1 S^T P (12 k) and X^T; Theta (2 k + 1 per entry, none when k = 0).
static inline long mbs_flopSpikeCols(int spec, int k, int nq) {
  return (spec ? 1 : 0) + 24L * k + 2L * k * k +
         (long)nq * (13 + 24L * k + 2L * k * k + MBS_FL_XFORCE) +
         (k > 0 ? (long)nq * nq * (2 * k + 1) : 0);
}
/// A tree of paths: a port's G in the spike's columns at a component root below an upper port
/// (T tcost, X^T per column).
static inline long mbs_flopTpathPort(int nl, long tcost) {
  return tcost + 42L * nl;
}
/// (jf: with the joint wrench's 6 adds; not in a loop layer's unit solve, mbsWork.homog)
static inline long mbs_flopFwdSpikeBody(const mbsModel *m, int b, int jf) {
  return (mbs_jntSpecial(m, b) ? MBS_FL_FWDSPIKE : 12L * m->body_dofnum[b] + 6) - (jf ? 0 : 6);
}
/// mbs_schurSubParentWrench (T lam: 9 for a cached revolute joint, else T (tcost) + 12 nl;
/// X^T and the subtraction 48).
static inline long mbs_flopSchurSubWrench(int nl, int revk, long tcost) {
  return (revk ? 9 : tcost + 12L * nl) + MBS_FL_XFORCE + 6;
}
/// mbs_schurQdd(nd).
static inline long mbs_flopSchurQdd(int nd) {
  if (nd == 0) return 0;
  long f = MBS_FL_XMOTION + 12;
  if (nd == 1) return f + 2 * MBS_FL_DOT6 + 1;
  return f + 11L * nd + 11L * nd * nd + mbs_flopChol(nd) + mbs_flopCholSolve(nd);
}
/// mbs_schurBack: a compliance-form lambda from its record (nl, vw port columns): y + W f, V pi,
/// L^-T.
static inline long mbs_flopSchurLam(int nl, int vw) {
  return 12L * nl + 2L * nl * vw + mbs_flopTriPacked(nl);
}
/// ... the root's at the ground: y + V pi, L^-T.
static inline long mbs_flopSchurLamRoot(int nl, int vw) {
  return 2L * nl * vw + mbs_flopTriPacked(nl);
}
/// ... the spikes' start p = G pi at a spath port (T tcost).
static inline long mbs_flopSpathVec(int nl, long tcost) {
  return tcost + 42L * nl + 12L * nl;
}
/// ... inertia-form lambda = T^T f (cached revolute 10, else T + 11 nl).
static inline long mbs_flopSchurLamInertia(int nl, int revk, long tcost) {
  return revk ? 10 : (nl > 0 ? tcost + 11L * nl : 0);
}
/// ... compliance-form body: T lam (9 or T + 12 nl), F tau + T lam (6), a = M w + a0 (72).
static inline long mbs_flopSchurAcc(int nl, int revk, long tcost) {
  return (nl > 0 ? (revk ? 9 : tcost + 12L * nl) : 0) + 6 + MBS_FL_MUL6 + 6;
}
/// mbs_schurReduce(nk, ne): Cholesky of C_ee (n = ne), Z, z, S and s.
static inline long mbs_flopSchurReduce(int nk, int ne) {
  return mbs_flopChol(ne) + ne + (long)(nk + 1) * ne * ne + 2L * ne * nk * (nk + 1);
}
/// mbs_schurExpand(nk, ne).
static inline long mbs_flopSchurExpand(int nk, int ne) {
  return 2L * ne * nk + (long)ne * ne;
}
/// Adding an n x n system and its right side into another (n^2 + n).
static inline long mbs_flopSchurAdd(int n) {
  return (long)n * n + n;
}
/// mbs_schurPairMerge of (na | ns) and (ns | nb), both nonempty: both added into the joint
/// system, ns eliminated.
static inline long mbs_flopPairMerge(int na, int ns, int nb) {
  return mbs_flopSchurAdd(na + ns) + mbs_flopSchurAdd(ns + nb) + mbs_flopSchurReduce(na + nb, ns);
}
/// engine.c kinematics across ranks: vJ of the local map (axis-specialised 1, else 12 nd), the
/// local velocity map X vloc_p + vJ (xMotionK + 1: vJ's one nonzero entry; xMotion + 6), the
/// composed transform (mbsp_composeK 18 + 15 + 3, mbsp_compose 45 + 15 + 3), the scan element
/// mbsp_kinThen (pose 45 + 15 + 3, compose 63, X c 42 + 6), the pose from a ghost
/// (mbsp_poseFromGhost 9 x 5 + 3 x 6) and the velocity from a ghost (42 + 6).
#define MBS_FL_KIN_COMPOSE_K 36
#define MBS_FL_KIN_COMPOSE   63
#define MBS_FL_KIN_THEN      174
#define MBS_FL_KIN_GHOSTPOSE 63
#define MBS_FL_KIN_GHOSTVEL  (MBS_FL_XMOTION + 6)
static inline long mbs_flopKinMap(const mbsModel *m, int b, int local_parent, int composed) {
  int spec = mbs_jntSpecial(m, b);
  long f = spec ? 1 : 12L * m->body_dofnum[b];
  if (!local_parent) return f;
  f += spec ? 24 + 1 : MBS_FL_XMOTION + 6; // X v_p + vJ (spec: vJ's one nonzero entry)
  if (composed) f += spec ? MBS_FL_KIN_COMPOSE_K : MBS_FL_KIN_COMPOSE;
  return f;
}
/// 1 if segment s caches body b's constraint directions (a revolute joint of the segment).
static inline int mbs_schurCached(const mbsSchur *s, int b) {
  return b >= s->s0 && b < s->s1 && s->kind[b - s->s0] == 1;
}
/// T of body b as src/schur/ forms it: 0 when cached, else mbs_bodyComplement.
static inline long mbs_flopSchurT(const mbsModel *m, const mbsSchur *s, int b) {
  return mbs_schurCached(s, b) ? 0 : mbs_flopComplement(m->body_jnttype[b]);
}

// ---- closed loops and spring-dampers (loops.c, joint.c; docs/loops.md 8, docs/cpa.md)
/// mbs_fwdForces, one spring-damper (body1, body2: 1 if that end is a body, 0 the ground):
/// geometry u = p2 - p1 (3), l = sqrt(u.u) (6), u /= l (3; a zero length skips it), dv (3),
/// ld = u.dv (5); tension k (l - l0) + c ld (4); p2 = p1 + l u (6); f = T u (3); per body end the
/// point's world position and velocity (mat3vec + 3, cross + 3 + mat3vec: 45) and the wrench
/// (r 3, cross 9, 2 mat3Tvec 30, 6 adds: 48).
static inline long mbs_flopSpring(int body1, int body2) {
  long end = 2 * MBS_FL_MAT3VEC + MBS_FL_CROSS3 + 6 + 3 + MBS_FL_CROSS3 + 2 * MBS_FL_MAT3VEC + 6;
  return 20 + 4 + 9 + (body1 ? end : 0) + (body2 ? end : 0);
}
/// mbs_loopRows (joint.c mbsu_loopClosure) with velocities: per side the frame in the ground
/// (mat3 + mat3vec + 3: 63; a body side adds om, pd and acc0: 2 mat3vec, 2 cross, 3 adds: 51);
/// dp, dv, da (9); per position row 52 (2 cross, c 5, cdot 11, kappa 18), per rotation row 85
/// (4 cross, c 6, cdot 12, kappa 19, moment 9 + 3); per row D2 and D1 (2 x 45); Baumgarte 6 per
/// row when on.
static inline long mbs_flopLoopRows(int npos, int nrot, int body1, int body2, int stab) {
  long world = MBS_FL_MAT3 + MBS_FL_MAT3VEC + 3, wv = 2 * MBS_FL_MAT3VEC + 2 * MBS_FL_CROSS3 + 3;
  return 2 * world + (body1 ? wv : 0) + (body2 ? wv : 0) + 9 + 52L * npos + 85L * nrot +
         (90L + (stab ? 6 : 0)) * (npos + nrot);
}
/// D^T a of one side of a closure equation (dot6 and the add into the sum).
#define MBS_FL_LOOP_DOT (MBS_FL_DOT6 + 1)
/// cfs.c mbs_cfsLoopWrenches, one owned side of a loop of nk closure rows: D x added into the
/// side's wrench (6 mul + 6 add per row).
static inline long mbs_flopLoopRowWrench(int nk) {
  return 12L * nk;
}
/// mbs_loopFreeCompliance, one body side: M^-1 D (mul6; M^-1 inverted once, at the workspace's
/// creation), D^T y and the add.
#define MBS_FL_LOOP_FREE (MBS_FL_MUL6 + MBS_FL_DOT6 + 1)
/// loops.c mbs_loopFactor(n equations, rank r, ref given): symmetrize n(n-1) (add, half), the
/// zero-row thresholds n (1e-20 dmax) + n (tol ref_i, when ref), 1/sqrt(A_ii) of the n - nzero
/// rows kept (2 each); then only those nn = n - nzero rows: the scaled copy 2 nn^2, per accepted
/// pivot k < r a sqrt, nn-k-1 divisions and the rank-one update 2 (nn-k-1)^2; M = L^T L
/// (2 (a+1)(nn-a) for column a < r) and its Cholesky factor (mbs_flopChol(r); a zero pivot of M
/// would skip its divisions).
/// loops.c mbs_loopZeroSums: per dof of the caller's bodies S^g (2 mat3vec, cross, 3 adds) and
/// |S^g|^2 (dot6); per side (a body) and row of the loop the wrench to the ground frame (2 mat3vec,
/// cross, 3 adds) and, after the walk, |F|^2 times the path's sum (dot6, mul, add); per visited
/// body of the path with k dofs and nk rows, per dof the |S|^2 add and nk dot6 + add; per dof of
/// the union of both paths and row the square added (2).
#define MBS_FL_LOOP_ZDOF  (2 * MBS_FL_MAT3VEC + MBS_FL_CROSS3 + 3 + MBS_FL_DOT6)
#define MBS_FL_LOOP_ZSIDE (2 * MBS_FL_MAT3VEC + MBS_FL_CROSS3 + 3)
static inline long mbs_flopLoopZeroVisit(int k, int nk) {
  return (1 + (long)nk * (MBS_FL_DOT6 + 1)) * k;
}
static inline long mbs_flopLoopFactor(int n, int r, int nzero, int ref) {
  long nn = n - nzero; // the elimination leaves the zero rows out
  long f = (long)n * (n - 1) + n + (ref ? n : 0) + 2L * nn + 2L * nn * nn;
  for (int k = 0; k < r; k++) f += 1 + (nn - k - 1) + 2L * (nn - k - 1) * (nn - k - 1);
  if (r == nn) return f; // independent non-zero rows: no L^T L, no M
  for (int a = 0; a < r; a++) f += 2L * (a + 1) * (nn - a);
  return f + mbs_flopChol(r);
}
/// loops.c mbs_loopMinNorm(n, rank r, nzero zero rows): the forward solve with L11 (2 + 2i), the
/// two triangular solves with M (2i + 1 each), nu = L w scaled back (2 min(i + 1, r) + 1 per
/// equation); with r = n - nzero the unique solution instead: forward, backward with L11^T, scale.
static inline long mbs_flopLoopMinNorm(int n, int r, int nzero) {
  long f = 0;
  if (r == n - nzero) { // the unique solution: forward (2 + 2i), backward (2 (r-1-i) + 1), scale 1
    for (int i = 0; i < r; i++) f += 2 + 2L * i + 2L * (r - 1 - i) + 1 + 1;
    return f;
  }
  for (int i = 0; i < r; i++) f += 2 + 2L * i + 2L * i + 1 + 2L * (r - 1 - i) + 1;
  for (int i = 0; i < n; i++) f += 2L * (i + 1 < r ? i + 1 : r) + 1;
  return f;
}
/// loops.c mbs_abaFactor, body with k dofs: k mul6 (U), k^2 dot6 (S^T U), mbs_spdInverse(k),
/// Ia = IA - U Dinv U^T (36 (3 k^2 + 1)); the congruence into the parent.
static inline long mbs_flopLoopAbaFactor(int k, int has_parent) {
  long f = k > 0 ? (long)MBS_FL_MUL6 * k + (long)MBS_FL_DOT6 * k * k + mbs_flopSpdInverse(k) +
                       36L * (3L * k * k + 1)
                 : 0;
  return f + (has_parent ? MBS_FL_CONGRUENCE : 0);
}
/// loops.c mbs_loopSweep, body with k dofs: tip to base on the bodies with a load (u = -S^T p:
/// k dot6; with a parent du and pa += U du: k (2k + 12), xTForce 42, 6 adds); base to tip on the
/// moving ones (X a_p 42 with a parent, r = u - U^T a 12 k, qdd = Dinv r 2 k^2, a += S qdd 12 k).
static inline long mbs_flopLoopSweepBack(int k, int has_parent) {
  return (long)MBS_FL_DOT6 * k + (has_parent ? k * (2L * k + 12) + MBS_FL_XFORCE + 6 : 0);
}
static inline long mbs_flopLoopSweepFwd(int k, int has_parent) {
  return (has_parent ? MBS_FL_XMOTION : 0) + 24L * k + 2L * k * k;
}

#endif
