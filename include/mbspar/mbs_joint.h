/// \file mbs_joint.h
/// The joint module: everything that depends on the joint type, for the tree joints (a body and
/// its parent) and for the cut joints that close loops (docs/loops.md).
///
/// Tree joints (docs/formulation.md 1.4): the joint table, one mbsJointType row per type
/// (coordinates, dofs, names, flags, flop counts) with its functions: the joint transform and
/// motion subspace S, the velocity-product term c_J, the orthonormal constraint-force directions
/// T (T^T S = 0) and the position update.
///
/// Cut joints: a loop k closes a joint of type loop_type[k] between frame 1 fixed in body1 and
/// frame 2 fixed in body2 (either may be the ground). Its m_k = 6 - nv(type) closure equations
/// c(q) = 0 are scalar functions of the two frames (docs/loops.md 2): rotation rows first (rx, ry,
/// rz, perp), then the position rows (x, y, z: the displacement of origin 2 from origin 1 along
/// the axes of frame 1). Their exact time derivatives define
///   * the constraint wrench directions D1, D2 (6 x m_k each, columns of 6 reals [moment; force]
///     in each body's own coordinates at its origin): dc/dt = D1^T v1 + D2^T v2 with v the body
///     spatial velocities in body coordinates. Column r of D2 is the wrench that a unit lambda_r
///     exerts on body2 (from body1: body1 plays the parent), column r of D1 the equal and opposite
///     wrench on body1 (the pair has zero resultant at every configuration);
///   * the closure right side kappa = -(d/dt D1)^T v1 - (d/dt D2)^T v2 (the velocity-product
///     term), so that the acceleration-level closure reads
///         D1^T a1 + D2^T a2 = kappa - 2 alpha dc/dt - beta^2 c       (Baumgarte if enabled)
///     with a the body spatial accelerations in body coordinates. A ground side has a = 0 (true
///     accelerations) or, with the gravity offset of the workspace accelerations, a = [0; -g]
///     in ground coordinates; both give the same equations because the pair D1, D2 has zero
///     resultant and the offset is one rigid acceleration field.
/// A constraint-force solver adds D1 lambda_k to body1's wrench and D2 lambda_k to body2's wrench
/// (as a tree joint adds T lambda to its child and -X^T T lambda to its parent) and one block row
/// per loop: the closure equations above.
#ifndef MBS_JOINT_H
#define MBS_JOINT_H

#include "mbs_types.h"

/// One row of the joint table (`mbs_jnt_types`, src/joint.c, indexed by the MBS_JNT_* id): all a
/// tree or cut joint of the type is: its sizes and flags, its kinematics as functions, its
/// closure rows and its flop counts. A new joint type is an id (mbs_types.h) and a row with its
/// functions; the rest of the code asks the row (mbs_jntType) or the predicates below, never the
/// id by hand (scripts/check_structure.py).
typedef struct mbsJointType {
  const char *name; ///< the name in configs and reports ("revolute", ...)
  int nq;           ///< position coordinates
  int nv;           ///< degrees of freedom (rates)
  int axis;         ///< 1: uses `axis`
  int axis2;        ///< 1: uses `axis2`; S then depends on q, and so do T and c_J
  int quat;         ///< offset of the orientation quaternion in q, -1 if none
  int rotates;      ///< 1: the child turns relative to the parent (the transform rotates)
  unsigned angles;  ///< bit k: scalar coordinate k is an angle (what `degrees` converts)
  /// Suffixes of the CSV columns of the q components and of the rate components (nq and nv
  /// names; NULL for a one-coordinate type: its column is PREFIX_BODY), docs/outputs.md.
  const char *const *qnames, *const *vnames;
  /// Its closure rows as a cut joint: n_loop_rows ids of src/joint.c's row kinds (rotation rows
  /// first, then position rows; docs/loops.md 2); 0 rows: may not close a loop (free).
  const int *loop_rows;
  int n_loop_rows;
  /// Joint transform of a tree joint: rotation R (child axes in parent coordinates, 9
  /// row-major), translation r (child origin in parent coordinates) and motion subspace S (nv
  /// columns of 6 reals, child coordinates) at position coordinates q. Pure.
  void (*pose)(const mbsReal *origin, const mbsReal *axis, const mbsReal *axis2, const mbsReal *q,
               mbsReal *R, mbsReal *r, mbsReal *S);
  /// Velocity-product term c_J = (dS/dt) qd in child coordinates (6 reals; zero unless S moves
  /// with q) from its subspace S, rates qd and joint velocity vJ = S qd. Pure.
  void (*bias)(const mbsReal *axis2, const mbsReal *S, const mbsReal *qd, const mbsReal *vJ,
               mbsReal *cJ);
  /// Orthonormal constraint-force directions T: 6 - nv columns of 6 reals with T^T S = 0
  /// (docs/formulation.md 1.4, table of T); S is read only by an axis2 type. Pure.
  void (*complement)(const mbsReal *axis, const mbsReal *S, mbsReal *T);
  /// Position update of the joint's nq coordinates by a step h with its nv rates qd: scalar
  /// coordinates q_k += h qd_k, a quaternion turned by the rotation vector h omega. Pure.
  void (*integrate)(mbsReal *q, const mbsReal *qd, mbsReal h);
  /// Flops as written, for src/flops.h: pose; the c_J part of the velocity stage (beyond
  /// vJ = S qd); complement.
  long flops_pose, flops_bias, flops_complement;
} mbsJointType;

/// The joint table: one row per MBS_JNT_* id (src/joint.c).
extern const mbsJointType mbs_jnt_types[MBS_JNT_COUNT];

/// The row of a joint type (0 <= type < MBS_JNT_COUNT: a model's types are checked when built).
static inline const mbsJointType *mbs_jntType(int type) {
  return &mbs_jnt_types[type];
}

/// Number of position coordinates of a joint type.
int mbs_jntNq(int type);
/// Number of degrees of freedom of a joint type.
int mbs_jntNv(int type);
/// Name of a joint type ("revolute", ...).
const char *mbs_jntName(int type);
/// Joint type from its name (aliases hinge, slide, ball, weld); returns -1 if unknown.
int mbs_jntFromName(const char *name);
/// The accepted joint type names for messages: "revolute, prismatic, ..., fixed".
const char *mbs_jntNameList(void);
/// 1 if the type uses `axis` (revolute, prismatic, cylindrical, universal).
int mbs_jntHasAxis(int type);
/// Offset of the orientation quaternion in the joint's q (spherical 0, free 3), -1 if none.
int mbs_jntQuatAdr(int type);
/// 1 if every coordinate is a plain scalar with its own rate (nq == nv > 0: revolute,
/// prismatic, cylindrical, universal): springs, the inverse profile and spread apply.
int mbs_jntScalar(int type);
// Predicates: what the rest of the code asks about a joint type. Code outside the joint module
// asks these (or the row) instead of comparing the type with MBS_JNT_* by hand
// (scripts/check_structure.py checks it). The identity tests (fixed, free, revolute: the
// specialised kernels) compare the id; the others read the row, so a new type answers them there.
// Inline: some are asked in the ABA hot loops.

/// 1 for the fixed (weld) joint: no coordinates, no dofs.
static inline int mbs_jntIsFixed(int type) {
  return type == MBS_JNT_FIXED;
}
/// 1 for the free (6-dof floating) joint: allowed only at the root of a tree, never as a cut joint.
static inline int mbs_jntIsFree(int type) {
  return type == MBS_JNT_FREE;
}
/// 1 for the revolute joint: one rotation about `axis`, S = [axis; 0] (the specialised kernels).
static inline int mbs_jntIsRevolute(int type) {
  return type == MBS_JNT_REVOLUTE;
}
/// 1 if q holds an orientation quaternion (spherical, free; its offset is mbs_jntQuatAdr): q' is
/// not qd, and the quaternion is renormalised after a step.
static inline int mbs_jntHasQuat(int type) {
  return type >= 0 && type < MBS_JNT_COUNT && mbs_jnt_types[type].quat >= 0;
}
/// 1 if the joint uses `axis2` (universal); its subspace S then depends on q (the first column is
/// axis rotated back by the second angle) and so do its constraint directions T.
static inline int mbs_jntHasAxis2(int type) {
  return type >= 0 && type < MBS_JNT_COUNT && mbs_jnt_types[type].axis2;
}
/// 1 if the joint lets the child turn relative to the parent (all but prismatic and fixed): its
/// transform has a rotation part; a cut joint that does not needs a reference direction.
static inline int mbs_jntRotates(int type) {
  return type >= 0 && type < MBS_JNT_COUNT && mbs_jnt_types[type].rotates;
}
/// 1 if scalar coordinate k of a joint is an angle (revolute, universal 0 and 1, cylindrical 0):
/// the coordinates that `degrees` converts. 0 for quaternions and displacements.
static inline int mbs_jntCoordIsAngle(int type, int k) {
  return type >= 0 && type < MBS_JNT_COUNT && k >= 0 && k < 32 &&
         ((mbs_jnt_types[type].angles >> k) & 1u);
}

/// Default q0 of a joint type (zeros, identity quaternion) into q0 (nq values).
void mbs_jntDefaultQ0(int type, mbsReal *q0);

/// Name of component k of a joint's position coordinates (rate = 0) or rates (rate = 1), the
/// suffix of the CSV column names (docs/outputs.md): NULL for one-coordinate joints (revolute,
/// prismatic: the column is PREFIX_BODY); cylindrical "angle", "disp"; universal "angle1",
/// "angle2"; spherical q "qw", "qx", "qy", "qz", rates "wx", "wy", "wz"; free q "x", "y", "z",
/// "qw", "qx", "qy", "qz", rates "vx", "vy", "vz", "wx", "wy", "wz".
const char *mbs_jntCoordName(int type, int k, int rate);

/// Two unit vectors n1, n2 completing the unit vector a to a right-handed orthonormal basis
/// (a continuous choice per axis: n1 = a x e_i / |.| with e_i the axis least aligned with a).
void mbsu_perpPair(const mbsReal *a, mbsReal *n1, mbsReal *n2);
// ------------------------------------------------------------------ cut joints (closed loops)

/// Number of closure equations m = 6 - nv of a cut joint of \p type (0 for free: not allowed).
int mbs_loopNumEq(int type);
/// Name of closure equation r of a cut joint of \p type: "rx", "ry", "rz" (rotation of frame 2
/// relative to frame 1 about frame 1's x, y, z, to first order), "perp" (universal: axis1 . axis2)
/// and "x", "y", "z" (displacement of origin 2 from origin 1 along frame 1's axes).
const char *mbs_loopEqName(int type, int r);
/// 1 if equation r of \p type is a position row (units m), 0 for a rotation row (dimensionless).
int mbs_loopEqIsPosition(int type, int r);

/// A frame fixed in a body: origin (3) then rotation (9, row-major; columns x = ref, y = axis x
/// ref, z = axis in body coordinates). Built from a unit-length-or-not axis and a reference
/// direction (its component normal to the axis is used; \p ref NULL: mbsu_perpPair's n1).
/// Returns 0 if the axis has zero length or ref is parallel to it.
int mbsu_loopFrame(const mbsReal *origin, const mbsReal *axis, const mbsReal *ref, mbsReal *F);

/// One side of a cut joint: the body's pose and velocity (NULL pointers: the ground, at rest at
/// the ground frame).
typedef struct {
  const mbsReal *R; ///< (9) body orientation, body -> ground (w->xmat); NULL: identity
  const mbsReal *x; ///< (3) body origin in the ground frame (w->xpos); NULL: zero
  const mbsReal *v; ///< (6) body spatial velocity, body coordinates (w->cvel); NULL: zero
} mbsLoopSide;

/// The closure equations of one cut joint of \p type between frame \p F1 on side 1 and frame
/// \p F2 on side 2 (frames as mbsu_loopFrame, in their bodies' coordinates). Writes (any output
/// may be NULL): D1, D2 (m columns of 6 reals each, see the file comment), c (m: the closure
/// error), cdot (m: dc/dt = D1^T v1 + D2^T v2), kappa (m: the velocity-product right side, no
/// Baumgarte terms). Pure.
void mbsu_loopClosure(int type, const mbsReal *F1, const mbsReal *F2, const mbsLoopSide *s1,
                      const mbsLoopSide *s2, mbsReal *D1, mbsReal *D2, mbsReal *c, mbsReal *cdot,
                      mbsReal *kappa);

struct mbsModel;
struct mbsWork;
/// The closure equations of loop \p k of the model at the current position and velocity stages
/// (w->xmat, w->xpos and, for cdot and kappa, w->cvel): D1, D2, c, cdot as mbsu_loopClosure;
/// kappa includes the Baumgarte terms -2 alpha cdot - beta^2 c when m->opt.baumgarte is on.
/// A ground side gets the directions of the ground at the ground origin (they multiply
/// a_ground). Outputs may be NULL; cdot and kappa need the velocity stage. Local.
void mbs_loopRows(const struct mbsModel *m, const struct mbsWork *w, int k, mbsReal *D1,
                  mbsReal *D2, mbsReal *c, mbsReal *cdot, mbsReal *kappa);

#endif
