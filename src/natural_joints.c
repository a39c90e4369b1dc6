/// \file natural_joints.c
/// The natural-coordinate formulation's joint rows (docs/natural.md 3): for each joint type, the
/// constraints of a tree joint between a body and its parent and the closure rows of a cut joint,
/// as a second table keyed by the joint type id (`mbs_nat_joint_rows`, beside the joint table of
/// src/joint.c; a new joint type adds a row here too). Built from the point, dot and slide rows
/// of src/natural_rows.c.
#include <string.h>
#include "natural_private.h"
#include "spatial.h"

// a tree joint of body c on its parent pb at the current state, where the joint is assembled
typedef struct {
  mbsNat *s;
  int pb, c;
  const double *S;       // the joint's subspace (child coordinates)
  const double *ep, *ec; // parent and child axes
  double a[3];           // the child origin in the parent frame: the joint point
} mbsNatTree;

// a child-fixed vector v seen in the parent frame at this state
static void mbs_natInParent(const mbsNatTree *J, const double v[3], double out[3]) {
  double vw[3];
  mbs_natVec(J->ec, v, vw);
  mbs_natLocal(J->ep, vw, out);
}

static const double mbs_nat_zero[3] = {0, 0, 0};

static void mbs_natTreeSpherical(const mbsNatTree *J) {
  mbs_natPoint(J->s, J->pb, J->a, J->c, mbs_nat_zero);
}

static void mbs_natTreeRevolute(const mbsNatTree *J) {
  double u[3], h1[3], h2[3], h1p[3], h2p[3];
  memcpy(u, J->S, sizeof u);
  mbsu_perpPair(u, h1, h2);
  mbs_natInParent(J, h1, h1p);
  mbs_natInParent(J, h2, h2p);
  mbs_natPoint(J->s, J->pb, J->a, J->c, mbs_nat_zero);
  mbs_natDot(J->s, J->pb, h1p, J->c, u), mbs_natDot(J->s, J->pb, h2p, J->c, u);
}

static void mbs_natTreeUniversal(const mbsNatTree *J) {
  double a1p[3];
  mbs_natInParent(J, J->S, a1p); // the first axis: parent-fixed
  mbs_natPoint(J->s, J->pb, J->a, J->c, mbs_nat_zero);
  mbs_natDot(J->s, J->pb, a1p, J->c, J->S + 6); // the second: child-fixed
}

// prismatic (noturn: no turn about the axis u) and cylindrical
static void mbs_natTreeSlide(const mbsNatTree *J, const double *axis, int noturn) {
  double u[3], h1[3], h2[3], h1p[3], h2p[3];
  memcpy(u, axis, sizeof u);
  mbsu_perpPair(u, h1, h2);
  mbs_natInParent(J, h1, h1p);
  mbs_natInParent(J, h2, h2p);
  mbs_natDot(J->s, J->pb, h1p, J->c, u), mbs_natDot(J->s, J->pb, h2p, J->c, u);
  if (noturn) mbs_natDot(J->s, J->pb, h1p, J->c, h2);
  mbs_natSlide(J->s, J->pb, J->a, h1p, J->c, mbs_nat_zero);
  mbs_natSlide(J->s, J->pb, J->a, h2p, J->c, mbs_nat_zero);
}

static void mbs_natTreePrismatic(const mbsNatTree *J) {
  mbs_natTreeSlide(J, J->S + 3, 1);
}

static void mbs_natTreeCylindrical(const mbsNatTree *J) {
  mbs_natTreeSlide(J, J->S, 0);
}

static void mbs_natTreeFixed(const mbsNatTree *J) {
  static const double ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0}, ez[3] = {0, 0, 1};
  double xp[3], yp[3];
  mbs_natInParent(J, ex, xp);
  mbs_natInParent(J, ey, yp);
  mbs_natPoint(J->s, J->pb, J->a, J->c, mbs_nat_zero);
  mbs_natDot(J->s, J->pb, xp, J->c, ez), mbs_natDot(J->s, J->pb, yp, J->c, ez);
  mbs_natDot(J->s, J->pb, xp, J->c, ey);
}

// a cut joint between frame F1 on body b1 (the parent) and F2 on b2 (the child): axes are the
// frames' columns (z the joint axis)
typedef struct {
  mbsNat *s;
  int b1, b2;
  const double *F1, *F2;
  double x1[3], y1[3], z1[3], y2[3], z2[3];
  double a1[3]; // frame 2's origin seen from body 1 at this state (the slides' parent point)
} mbsNatCut;

static void mbs_natLoopSpherical(const mbsNatCut *L) {
  mbs_natPoint(L->s, L->b1, L->F1, L->b2, L->F2);
}

static void mbs_natLoopRevolute(const mbsNatCut *L) {
  mbs_natPoint(L->s, L->b1, L->F1, L->b2, L->F2);
  mbs_natDot(L->s, L->b1, L->x1, L->b2, L->z2), mbs_natDot(L->s, L->b1, L->y1, L->b2, L->z2);
}

static void mbs_natLoopUniversal(const mbsNatCut *L) {
  mbs_natPoint(L->s, L->b1, L->F1, L->b2, L->F2);
  mbs_natDot(L->s, L->b1, L->z1, L->b2, L->z2);
}

// prismatic (noturn: no turn about z) and cylindrical
static void mbs_natLoopSlide(const mbsNatCut *L, int noturn) {
  mbs_natDot(L->s, L->b1, L->x1, L->b2, L->z2), mbs_natDot(L->s, L->b1, L->y1, L->b2, L->z2);
  if (noturn) mbs_natDot(L->s, L->b1, L->x1, L->b2, L->y2);
  mbs_natSlide(L->s, L->b1, L->a1, L->x1, L->b2, L->F2);
  mbs_natSlide(L->s, L->b1, L->a1, L->y1, L->b2, L->F2);
}

static void mbs_natLoopPrismatic(const mbsNatCut *L) {
  mbs_natLoopSlide(L, 1);
}

static void mbs_natLoopCylindrical(const mbsNatCut *L) {
  mbs_natLoopSlide(L, 0);
}

static void mbs_natLoopFixed(const mbsNatCut *L) {
  mbs_natPoint(L->s, L->b1, L->F1, L->b2, L->F2);
  mbs_natDot(L->s, L->b1, L->x1, L->b2, L->z2), mbs_natDot(L->s, L->b1, L->y1, L->b2, L->z2);
  mbs_natDot(L->s, L->b1, L->x1, L->b2, L->y2);
}

/// The natural formulation's rows of each joint type, keyed by the joint table's id: `tree` the
/// constraints of a tree joint (NULL: none, the free joint), `loop` the closure rows of a cut
/// joint (NULL: may not close a loop). Their number of rows is 6 - nv of the joint table's row.
static const struct {
  void (*tree)(const mbsNatTree *J);
  void (*loop)(const mbsNatCut *L);
} mbs_nat_joint_rows[MBS_JNT_COUNT] = {
    [MBS_JNT_FIXED] = {mbs_natTreeFixed, mbs_natLoopFixed},
    [MBS_JNT_REVOLUTE] = {mbs_natTreeRevolute, mbs_natLoopRevolute},
    [MBS_JNT_PRISMATIC] = {mbs_natTreePrismatic, mbs_natLoopPrismatic},
    [MBS_JNT_CYLINDRICAL] = {mbs_natTreeCylindrical, mbs_natLoopCylindrical},
    [MBS_JNT_UNIVERSAL] = {mbs_natTreeUniversal, mbs_natLoopUniversal},
    [MBS_JNT_SPHERICAL] = {mbs_natTreeSpherical, mbs_natLoopSpherical},
    [MBS_JNT_FREE] = {NULL, NULL},
};

// the joint constraints of body c on its parent (docs/natural.md 3): every vector and point they
// name is taken at the current state, where the joint is assembled
void mbs_natJoint(const mbsModel *m, const mbsWork *w, mbsNat *s, int c) {
  int pb = m->body_parent[c], t = m->body_jnttype[c];
  double op[3], ep[9], opd[3], epd[9], oc[3], ec[9], ocd[3], ecd[9];
  mbs_natBody(s, pb, op, ep, opd, epd);
  mbs_natBody(s, c, oc, ec, ocd, ecd);
  mbsNatTree J = {s, pb, c, w->sdof + 6 * m->body_dofadr[c], ep, ec, {0, 0, 0}};
  double d[3];
  for (int i = 0; i < 3; i++) d[i] = oc[i] - op[i];
  mbs_natLocal(ep, d, J.a);
  if (mbs_nat_joint_rows[t].tree) mbs_nat_joint_rows[t].tree(&J);
}

// the closure rows of cut joint k between the frames F1 (body 1) and F2 (body 2) (docs/natural.md
// 3.2): body 1 plays the parent, body 2 the child; axes are the frames' columns (z the joint axis)
void mbs_natLoop(const mbsModel *m, mbsNat *s, int k) {
  int t = m->loop_type[k];
  mbsNatCut L = {.s = s, .b1 = m->loop_body[2 * k], .b2 = m->loop_body[2 * k + 1]};
  L.F1 = m->loop_frame + 24 * k, L.F2 = L.F1 + 12;
  for (int i = 0; i < 3; i++) {
    L.x1[i] = L.F1[3 + 3 * i], L.y1[i] = L.F1[3 + 3 * i + 1], L.z1[i] = L.F1[3 + 3 * i + 2];
    L.y2[i] = L.F2[3 + 3 * i + 1], L.z2[i] = L.F2[3 + 3 * i + 2];
  }
  double o1[3], e1[9], od1[3], ed1[9], o2[3], e2[9], od2[3], ed2[9], c2[3], d[3];
  mbs_natBody(s, L.b1, o1, e1, od1, ed1);
  mbs_natBody(s, L.b2, o2, e2, od2, ed2);
  mbs_natVec(e2, L.F2, c2);
  for (int i = 0; i < 3; i++) d[i] = o2[i] + c2[i] - o1[i];
  mbs_natLocal(e1, d, L.a1);
  if (mbs_nat_joint_rows[t].loop) mbs_nat_joint_rows[t].loop(&L);
}
