/// \file body.h
/// The body interface (docs/code.md "Adding a body kind"): what a kernel needs to know of a body
/// — its mass, centre of mass and inertia, the product of its spatial inertia with a motion, and
/// where a point fixed to it is — is asked of the body here, never computed from a rigid-body
/// formula at the call site. A kind of body is one row of mbs_bodyKinds (body.c). One kind
/// today, rigid (the model's arrays body_mass, body_com, body_inertia and body_sinert, the
/// spatial inertia at the body origin from mbs_modelFinalize); a flexible (modal) body
/// (../shared/design.md section 9) is a second row with its own functions and 6 + nmodes
/// unknowns. The rigid kind is inlined (the kernels' hot loops); other kinds go through the row.
#ifndef MBS_BODY_H
#define MBS_BODY_H

#include "mbspar/mbs_dynamics.h"
#include "mbspar/mbs_model.h"
#include "spatial.h"

/// The kinds of body (the values of mbsModel.body_kind).
enum { MBS_BODY_RIGID = 0, MBS_BODY_NKIND };

/// One kind of body: its name, its unknowns beyond a rigid body's 6, and its faces.
typedef struct mbsBodyKind {
  const char *name;
  int nmodes; ///< unknowns beyond the 6 of a rigid body (a flexible body's modal coordinates)
  /// f = I a: the spatial inertia at the body origin (body coordinates) times a motion
  void (*inertia_mul)(const mbsModel *m, int b, const mbsReal *a, mbsReal *f);
  /// the 6 x 6 spatial inertia at the body origin, row-major [Io h^; -h^ m 1]
  void (*inertia_full)(const mbsModel *m, int b, mbsReal *I6);
  /// the same, packed symmetric (spatial.h sym6: A 6, B 9, C 6)
  void (*inertia_sym6)(const mbsModel *m, int b, mbsReal *P);
  /// world position (and velocity if vel) of the point pt given in the body frame
  void (*point_world)(const mbsModel *m, const mbsWork *w, int b, const mbsReal *pt, int vel,
                      mbsReal *p, mbsReal *pd);
} mbsBodyKind;

/// The table of body kinds, indexed by mbsModel.body_kind.
extern const mbsBodyKind mbs_bodyKinds[MBS_BODY_NKIND];
/// Row \p kind of the table (out of line: the kernels inline the rigid kind and call this for the
/// others).
const mbsBodyKind *mbs_bodyKindRow(int kind);

/// The kind of body b (every body is rigid while the model has no body_kind array).
static inline int mbs_bodyKindOf(const mbsModel *m, int b) {
  return m->body_kind ? m->body_kind[b] : MBS_BODY_RIGID;
}
/// The body's mass (kg).
static inline mbsReal mbs_bodyMass(const mbsModel *m, int b) {
  return m->body_mass[b];
}
/// Its centre of mass in its frame (3; a flexible body's undeformed one).
static inline const mbsReal *mbs_bodyCom(const mbsModel *m, int b) {
  return m->body_com + 3 * b;
}
/// Its rotational inertia about the centre of mass, [xx yy zz xy xz yz] (body frame).
static inline const mbsReal *mbs_bodyInertiaCom(const mbsModel *m, int b) {
  return m->body_inertia + 6 * b;
}
/// f = I_b a (6-vectors, body coordinates at the body origin).
static inline void mbs_bodyInertiaMul(const mbsModel *m, int b, const mbsReal *a, mbsReal *f) {
  if (mbs_bodyKindOf(m, b) == MBS_BODY_RIGID)
    mbsu_rbiMul(m->body_sinert + 10 * b, a, f);
  else
    mbs_bodyKindRow(mbs_bodyKindOf(m, b))->inertia_mul(m, b, a, f);
}
/// The radius of gyration (squared, m^2) below which a rigid body's velocity product drops its
/// rounded zero term (mbs_bodyBias).
#define MBS_BIAS_RG2 1e-6
/// f = v x* (I_b v), the velocity-product force. With I v = [Io w + h x v_o; m v_o - h x w]
/// (h = m c) its moment holds v_o x (m v_o), exactly zero but rounded to ~eps m |v_o|^2, which a
/// body of small radius of gyration r (trace Io < 3 r^2 m) divides by its own inertia m r^2
/// about its joint: q̈ off by ~eps |v_o|^2 / r^2 (1e-8 at r = 1e-4 m, the light bodies of
/// docs/formulation.md 4.9). Rigid bodies with r^2 below MBS_BIAS_RG2 take the moment as
/// w x (Io w + h x v_o) - v_o x (h x w), the same quantity without that term; every other body
/// as before, to the bit (docs/formulation.md 1.6).
static inline void mbs_bodyBias(const mbsModel *m, int b, const mbsReal *v, mbsReal *f) {
  mbsReal t6[6];
  mbs_bodyInertiaMul(m, b, v, t6);
  if (mbs_bodyKindOf(m, b) == MBS_BODY_RIGID) {
    const mbsReal *si = m->body_sinert + 10 * b;
    if (si[4] + si[5] + si[6] < 3 * MBS_BIAS_RG2 * si[0]) {
      mbsReal hw[3], vh[3];
      mbsu_cross3(si + 1, v, hw); // h x w
      mbsu_cross3(v + 3, hw, vh);
      mbsu_cross3(v, t6, f);
      mbsu_cross3(v, t6 + 3, f + 3);
      f[0] -= vh[0], f[1] -= vh[1], f[2] -= vh[2];
      return;
    }
  }
  mbsu_crossForce(v, t6, f);
}
/// I_b as a full row-major 6 x 6.
static inline void mbs_bodyInertiaFull(const mbsModel *m, int b, mbsReal *I6) {
  if (mbs_bodyKindOf(m, b) == MBS_BODY_RIGID)
    mbsu_rbiFull(m->body_sinert + 10 * b, I6);
  else
    mbs_bodyKindRow(mbs_bodyKindOf(m, b))->inertia_full(m, b, I6);
}
/// I_b packed symmetric (ABA's articulated inertia starts from it).
static inline void mbs_bodyInertiaSym6(const mbsModel *m, int b, mbsReal *P) {
  if (mbs_bodyKindOf(m, b) == MBS_BODY_RIGID)
    mbsu_sym6FromRbi(m->body_sinert + 10 * b, P);
  else
    mbs_bodyKindRow(mbs_bodyKindOf(m, b))->inertia_sym6(m, b, P);
}
/// World position p (and velocity pd if vel; else pd = 0) of the point pt fixed in body b's frame,
/// from the workspace's poses and velocities; b = -1 is the ground (pt is then a world point).
void mbs_bodyPointWorld(const mbsModel *m, const mbsWork *w, int b, const mbsReal *pt, int vel,
                        mbsReal *p, mbsReal *pd);
/// The body's potential energy in gravity at the workspace's pose: -m g . (x + R c).
static inline mbsReal mbs_bodyGravityEnergy(const mbsModel *m, const mbsWork *w, int b) {
  mbsReal c[3], z[3] = {0, 0, 0};
  mbs_bodyPointWorld(m, w, b, mbs_bodyCom(m, b), 0, c, z);
  return -mbs_bodyMass(m, b) * mbsu_dot3(m->gravity, c);
}

#endif
