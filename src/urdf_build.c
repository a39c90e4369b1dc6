/// \file urdf_build.c
/// URDF robot into mbspar bodies (include/mbspar/mbs_urdf.h, docs/urdf.md): fixed-joint links
/// merged into their parent's body, the bodies added in depth-first order from the root, and the
/// robot's reports (`check`'s table, the JSON `urdf` section). urdf.c reads the file.
#define _POSIX_C_SOURCE 200809L
#include "mbspar/mbs_urdf.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "spatial.h"
#include "urdf_internal.h"

#ifdef MBS_HAVE_URDF

// R = Rz(yaw) Ry(pitch) Rx(roll): URDF's fixed-axis roll, pitch, yaw
static void mbs_urdfRpy(const double *rpy, double *R) {
  double cr = cos(rpy[0]), sr = sin(rpy[0]), cp = cos(rpy[1]), sp = sin(rpy[1]);
  double cy = cos(rpy[2]), sy = sin(rpy[2]);
  R[0] = cy * cp, R[1] = cy * sp * sr - sy * cr, R[2] = cy * sp * cr + sy * sr;
  R[3] = sy * cp, R[4] = sy * sp * sr + cy * cr, R[5] = sy * sp * cr - cy * sr;
  R[6] = -sp, R[7] = cp * sr, R[8] = cp * cr;
}

// quaternion [w x y z] (w >= 0) of a rotation matrix
static void mbs_urdfQuat(const double *R, double *q) {
  double tr = R[0] + R[4] + R[8];
  if (tr >= R[0] && tr >= R[4] && tr >= R[8]) {
    double s = 2 * sqrt(1 + tr);
    q[0] = 0.25 * s, q[1] = (R[7] - R[5]) / s, q[2] = (R[2] - R[6]) / s, q[3] = (R[3] - R[1]) / s;
  } else if (R[0] >= R[4] && R[0] >= R[8]) {
    double s = 2 * sqrt(1 + R[0] - R[4] - R[8]);
    q[0] = (R[7] - R[5]) / s, q[1] = 0.25 * s, q[2] = (R[1] + R[3]) / s, q[3] = (R[2] + R[6]) / s;
  } else if (R[4] >= R[8]) {
    double s = 2 * sqrt(1 + R[4] - R[0] - R[8]);
    q[0] = (R[2] - R[6]) / s, q[1] = (R[1] + R[3]) / s, q[2] = 0.25 * s, q[3] = (R[5] + R[7]) / s;
  } else {
    double s = 2 * sqrt(1 + R[8] - R[0] - R[4]);
    q[0] = (R[3] - R[1]) / s, q[1] = (R[2] + R[6]) / s, q[2] = (R[5] + R[7]) / s, q[3] = 0.25 * s;
  }
  double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (q[0] < 0) n = -n;
  for (int k = 0; k < 4; k++) q[k] /= n;
}

// One body's links merged in place: \p g (\p ng links) its head first, then the links welded to
// it in depth-first preorder (children in file order), \p gp the position in \p g of each one's
// parent (-1: the head). Their frames in the head's frame (the ground's: the root's) into the
// scratch \p F (12 per link), the body's inertial summed from theirs in that order (the order of
// the whole robot's preorder), and only then written over their inertials (mbsUrdfLink's union).
static void mbs_urdfMergeBody(mbsUrdf *u, const int *g, const int *gp, int ng, double *F) {
  static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, z3[3] = {0, 0, 0};
  int head = g[0], owner = u->link[head].owner;
  for (int i = 0; i < ng; i++) { // frames, parents before children
    const mbsUrdfLink *l = &u->link[g[i]];
    if (l->owner == g[i]) continue; // the head of a body: the identity
    double *fR = F + 12 * i, *fp = fR + 9;
    memcpy(fR, I3, sizeof I3), memset(fp, 0, 3 * sizeof *fp);
    if (l->parent_joint < 0) continue; // the root, merged into the ground
    const mbsUrdfJoint *j = &u->joint[l->parent_joint];
    const mbsUrdfLink *p = &u->link[j->parent];
    // the parent's frame: the identity if it heads a body
    const double *pR = p->owner == j->parent ? I3 : F + 12 * gp[i];
    const double *pp = p->owner == j->parent ? z3 : F + 12 * gp[i] + 9;
    double Ro[9], t[3];
    mbs_urdfRpy(MBS_URDF_JRPY(u, l->parent_joint), Ro);
    mbsu_mulMat3(pR, Ro, fR);
    mbsu_mulMat3Vec(pR, MBS_URDF_JXYZ(u, l->parent_joint), t);
    for (int k = 0; k < 3; k++) fp[k] = pp[k] + t[k];
  }
  // the body's inertial: mass and centre of mass first, then the inertia about that centre
  double bm = 0, bc[3] = {0, 0, 0}, bI[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
  for (int pass = 0; owner >= 0 && pass < 2; pass++) {
    for (int i = 0; i < ng; i++) {
      const mbsUrdfLink *l = &u->link[g[i]];
      if (!l->massive) continue;
      // this link's frame in the owner's: the identity if it is the owner
      const double *lR = i == 0 ? I3 : F + 12 * i, *lp = i == 0 ? z3 : F + 12 * i + 9;
      double c[3];
      mbsu_mulMat3Vec(lR, l->com, c);
      for (int k = 0; k < 3; k++) c[k] += lp[k];
      if (pass == 0) {
        bm += l->mass;
        for (int k = 0; k < 3; k++) bc[k] += l->mass * c[k];
        continue;
      }
      // inertia turned from the inertial frame (fR Rin) into the owner's link frame, moved to
      // the body's centre of mass (parallel axes)
      double Rin[9], M[9], I[9], T[9], d[3];
      mbs_urdfRpy(l->rpy, Rin);
      mbsu_mulMat3(lR, Rin, M);
      I[0] = l->I[0], I[4] = l->I[1], I[8] = l->I[2];
      I[1] = I[3] = l->I[3], I[2] = I[6] = l->I[4], I[5] = I[7] = l->I[5];
      mbsu_mulMat3(M, I, T);
      for (int k = 0; k < 3; k++) d[k] = c[k] - bc[k];
      double dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
      for (int r = 0; r < 3; r++)
        for (int q = 0; q < 3; q++)
          bI[3 * r + q] += T[3 * r] * M[3 * q] + T[3 * r + 1] * M[3 * q + 1] +
                           T[3 * r + 2] * M[3 * q + 2] +
                           l->mass * ((r == q ? dd : 0) - d[r] * d[q]);
    }
    if (pass == 0 && bm > 0) // sum m c / sum m
      for (int k = 0; k < 3; k++) bc[k] /= bm;
  }
  // every inertial read: write the results over them
  for (int i = 0; i < ng; i++) {
    mbsUrdfLink *l = &u->link[g[i]];
    if (l->owner == g[i]) {
      l->bm = bm, memcpy(l->bc, bc, sizeof bc), memcpy(l->bI, bI, sizeof bI);
      continue;
    }
    memcpy(l->fR, F + 12 * i, sizeof l->fR), memcpy(l->fp, F + 12 * i + 9, sizeof l->fp);
  }
}

// Fixed-joint links merged into the body of their parent, recursively (docs/urdf.md "Merging",
// as MuJoCo's and Pinocchio's URDF readers do): a body starts at the root (unless it is the
// ground), at every moving joint, and at a fixed joint to the ground that carries mass; every
// other link joins its parent's body with the composed fixed transforms, and the body takes the
// combined mass, centre of mass and inertia of its links. A body without mass on a moving joint
// is refused. Linear in the number of links; the results replace the links' inertials in place
// (one body at a time, mbs_urdfMergeBody), scratch for the largest body's links.
mbsErr mbs_urdfMerge(mbsUrdf *u) {
  int n = u->nlink, *order = malloc(sizeof(int) * (size_t)n),
      *stack = malloc(sizeof(int) * (size_t)n), top = 0, cnt = 0;
  double *wm = calloc((size_t)n, sizeof(double)); // mass welded at and below each link
  mbsErr e = order && stack && wm ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory (URDF)");
  if (!e) stack[top++] = u->root;
  while (!e && top > 0) { // depth-first preorder, children in file order
    const mbsUrdfLink *l = &u->link[stack[--top]];
    order[cnt++] = (int)(l - u->link);
    for (int c = l->nchild - 1; c >= 0 && top < n; c--) stack[top++] = u->joint[l->child[c]].child;
  }
  for (int i = cnt - 1; !e && i >= 0; i--) { // children before parents
    const mbsUrdfLink *l = &u->link[order[i]];
    wm[order[i]] += l->massive ? l->mass : 0;
    if (l->parent_joint >= 0 && u->joint[l->parent_joint].type == MBS_URDF_FIXED)
      wm[u->joint[l->parent_joint].parent] += wm[order[i]];
  }
  for (int i = 0; !e && i < cnt; i++) { // owners, parents before children
    int L = order[i];
    mbsUrdfLink *l = &u->link[L];
    const mbsUrdfJoint *j = l->parent_joint >= 0 ? &u->joint[l->parent_joint] : NULL;
    const mbsUrdfLink *p = j ? &u->link[j->parent] : NULL;
    if (!j) // the root: the ground when massless or named "world"
      l->owner = l->massive && strcmp(l->name, "world") != 0 ? L : -1;
    else if (j->type != MBS_URDF_FIXED || (p->owner < 0 && wm[L] > 0))
      l->owner = L;
    else
      l->owner = p->owner;
  }
  free(wm), free(stack);
  // one body at a time (the ground's: the root and the massless links welded to it), its links
  // in preorder: g, the position of each one's parent in gp, pairs (link, parent position) on st
  int *g = malloc(sizeof(int) * (size_t)(n + 1)), *gp = malloc(sizeof(int) * (size_t)(n + 1)),
      *st = malloc(2 * sizeof(int) * (size_t)(n + 1)), capf = 0;
  double *F = NULL;
  if (!e && (!g || !gp || !st)) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (URDF)");
  for (int i = 0; !e && i < cnt; i++) {
    int H = order[i], own = u->link[H].owner, ng = 0, ns = 0;
    if (own != H && !(own < 0 && u->link[H].parent_joint < 0)) continue; // not a body's head
    st[ns++] = H, st[ns++] = -1;
    while (ns > 0) {
      const mbsUrdfLink *l = &u->link[st[ns - 2]];
      g[ng] = st[ns - 2], gp[ng] = st[ns - 1], ns -= 2;
      for (int c = l->nchild - 1; c >= 0 && ns < 2 * n; c--) {
        int cl = u->joint[l->child[c]].child;
        if (u->link[cl].owner == own && cl != own) st[ns++] = cl, st[ns++] = ng;
      }
      ng++;
    }
    if (ng > capf) {
      double *f = realloc(F, 12 * sizeof(double) * (size_t)ng);
      if (!f) {
        e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (URDF)");
        break;
      }
      F = f, capf = ng;
    }
    mbs_urdfMergeBody(u, g, gp, ng, F);
  }
  free(g), free(gp), free(st), free(F);
  for (int i = 0; !e && i < cnt; i++) {
    const mbsUrdfLink *l = &u->link[order[i]];
    if (l->owner != order[i] || l->bm > 0) continue;
    const mbsUrdfJoint *j = &u->joint[l->parent_joint]; // the root and welded links have mass
    e = mbs_urdfFail(u, l->line,
                     "link \"%s\" has no mass but joint \"%s\" (%s) moves it (and no link with "
                     "mass is welded to it): mbspar needs a positive mass for every moving body",
                     l->name, j->name, mbs_urdf_types[j->type]);
  }
  free(order);
  return e;
}

void mbs_urdfSizes(const mbsUrdf *u, int *nq, int *nv) {
  if (nq) *nq = u->nq;
  if (nv) *nv = u->nv;
}

// add link \p l as a body: joint \p jt to body \p parent at \p org with axis \p ax (body frame),
// the link frame at rotation RL in the body frame
static mbsErr mbs_urdfBody(const mbsUrdf *u, const mbsUrdfLink *l, const mbsUrdfJoint *j,
                           mbsModel *m, int parent, int jt, const double *org, const double *ax,
                           const double *RL, const mbsReal *q0, const mbsReal *qd0, int *id) {
  mbsBodySpec sp;
  mbs_bodySpecDefault(&sp);
  sp.name = l->name, sp.parent = parent, sp.jnttype = jt, sp.mass = l->bm;
  sp.any_name = 1; // a link may be called "ground" or "world" (mbspar's names for its ground)
  memcpy(sp.origin, org, sizeof sp.origin);
  if (ax) memcpy(sp.axis, ax, sizeof sp.axis);
  mbs_urdfQuat(RL, sp.framequat);
  // the body's inertial (its links merged, mbs_urdfMerge) turned from the link frame into the
  // body frame: com RL c, inertia RL I RL^T
  double T[9], Ib[9];
  mbsu_mulMat3Vec(RL, l->bc, sp.com);
  mbsu_mulMat3(RL, l->bI, T);
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++)
      Ib[3 * r + c] =
          T[3 * r] * RL[3 * c] + T[3 * r + 1] * RL[3 * c + 1] + T[3 * r + 2] * RL[3 * c + 2];
  sp.inertia[0] = Ib[0], sp.inertia[1] = Ib[4], sp.inertia[2] = Ib[8];
  sp.inertia[3] = 0.5 * (Ib[1] + Ib[3]), sp.inertia[4] = 0.5 * (Ib[2] + Ib[6]);
  sp.inertia[5] = 0.5 * (Ib[5] + Ib[7]);
  int nq = mbs_jntNq(jt), nv = mbs_jntNv(jt);
  if (mbs_jntIsFree(jt)) sp.q0[3] = 1;
  if (q0) memcpy(sp.q0, q0, sizeof(mbsReal) * (size_t)nq);
  if (qd0) memcpy(sp.qd0, qd0, sizeof(mbsReal) * (size_t)nv);
  if (j && nv == 1) sp.damping[0] = j->damping;
  if (j && mbs_jntIsFree(jt))
    for (int k = 0; k < 6; k++) sp.damping[k] = 0;
  mbsErr e = mbs_modelAddBody(m, &sp, id);
  if (e == MBS_ERR_INPUT) {
    char msg[768];
    snprintf(msg, sizeof msg, "%s", mbs_errMsg());
    if (j && strstr(msg, "motion has no inertia")) // about the joint: its line and name
      return mbs_urdfFail(u, j->line, "joint \"%s\" (link \"%s\"): %s", j->name, l->name, msg);
    int line = strstr(msg, "inertia") || strstr(msg, "mass") ? (l->iline ? l->iline : l->line)
                                                             : (j ? j->line : l->line);
    return mbs_urdfFail(u, line, "link \"%s\": %s", l->name, msg);
  }
  return e;
}

// a joint waiting to be visited (mbs_urdfAddBodies): its parent link's body and that link's
// frame in the body's frame (rotation, position)
typedef struct {
  int joint, body;
  double R[9], p[3];
} mbsUrdfVisit;

// push the joints below link \p l (their parent: \p body, frame R, p) in reverse file order, so
// they come off the stack in file order
static void mbs_urdfPush(const mbsUrdfLink *l, int body, const double *R, const double *p,
                         mbsUrdfVisit *stack, int *top) {
  for (int c = l->nchild - 1; c >= 0; c--) {
    mbsUrdfVisit *v = &stack[(*top)++];
    v->joint = l->child[c], v->body = body;
    memcpy(v->R, R, sizeof v->R), memcpy(v->p, p, sizeof v->p);
  }
}

mbsErr mbs_urdfAddBodies(const mbsUrdf *u, mbsModel *m, int parent, const mbsReal *q0,
                         const mbsReal *qd0) {
  MBS_CHECK(u->link, MBS_ERR_INTERNAL, "mbs_urdfAddBodies: the robot was compacted");
  // depth first from the root; the frames live on the stack with the joints waiting below them
  // (memory: the pending joints only, not ~0.1 kB per link)
  mbsUrdfVisit *stack = malloc(sizeof *stack * (size_t)(u->njoint > 0 ? u->njoint : 1));
  mbsErr e = stack ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory (URDF)");
  static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, zero[3] = {0, 0, 0};
  int top = 0;
  if (!e) {
    // the root: the ground when it has no mass (or is named "world"), else a body welded to it
    const mbsUrdfLink *r = &u->link[u->root];
    int rb = parent;
    if (r->owner == u->root)
      e = mbs_urdfBody(u, r, NULL, m, parent, MBS_JNT_FIXED, zero, NULL, I3, NULL, NULL, &rb);
    mbs_urdfPush(r, rb, I3, zero, stack, &top);
  }
  while (!e && top > 0) {
    mbsUrdfVisit v = stack[--top];
    const mbsUrdfJoint *j = &u->joint[v.joint];
    const mbsUrdfLink *l = &u->link[j->child];
    int L = j->child, bl;
    // the joint frame in the parent body's frame: RJ = R_P rpy, origin p_P + R_P xyz
    double Ro[9], RJ[9], o[3], ax[3];
    mbs_urdfRpy(MBS_URDF_JRPY(u, v.joint), Ro);
    mbsu_mulMat3(v.R, Ro, RJ);
    mbsu_mulMat3Vec(v.R, MBS_URDF_JXYZ(u, v.joint), o);
    for (int k = 0; k < 3; k++) o[k] += v.p[k];
    mbsu_mulMat3Vec(RJ, MBS_URDF_JAXIS(u, v.joint), ax);
    if (l->owner != L) { // merged into the parent's body (mbs_urdfMerge)
      bl = v.body;
      mbs_urdfPush(l, bl, RJ, o, stack, &top);
    } else {
      int jt = j->type == MBS_URDF_PRISMATIC  ? MBS_JNT_PRISMATIC
               : j->type == MBS_URDF_FIXED    ? MBS_JNT_FIXED
               : j->type == MBS_URDF_FLOATING ? MBS_JNT_FREE
                                              : MBS_JNT_REVOLUTE;
      e = mbs_urdfBody(u, l, j, m, v.body, jt, o, mbs_jntIsFixed(jt) ? NULL : ax, RJ,
                       q0 ? q0 + j->qa : NULL, qd0 ? qd0 + j->va : NULL, &bl);
      mbs_urdfPush(l, bl, RJ, zero, stack, &top);
    }
  }
  free(stack);
  return e;
}

// the name of link i, before and after mbs_urdfCompact
static const char *mbs_urdfLinkName(const mbsUrdf *u, int i) {
  return u->link ? u->link[i].name : u->lname[i].name;
}

void mbs_urdfCompact(mbsUrdf *u) {
  if (!u || !u->link) return;
  int nm = 0;
  for (int i = 0; i < u->nlink; i++) nm += i != u->root && u->link[i].owner != i;
  mbsUrdfLinkName *ln = malloc(sizeof *ln * (size_t)(u->nlink > 0 ? u->nlink : 1));
  double *mf = malloc(sizeof(double) * 12 * (size_t)(nm > 0 ? nm : 1));
  if (!ln || !mf) { // keep the robot as it is (only memory is at stake)
    free(ln), free(mf);
    return;
  }
  for (int i = 0, k = 0; i < u->nlink; i++) {
    const mbsUrdfLink *l = &u->link[i];
    ln[i].name = l->name, ln[i].owner = l->owner, ln[i].mframe = -1;
    if (i != u->root && l->owner != i) {
      memcpy(mf + 12 * k, l->fR, sizeof l->fR), memcpy(mf + 12 * k + 9, l->fp, sizeof l->fp);
      ln[i].mframe = k++;
    }
    free(l->child);
  }
  free(u->link), free(u->link_index.slot), free(u->jgeo);
  u->link = NULL, u->link_index.slot = NULL, u->link_index.mask = 0;
  u->jgeo = NULL, u->capjgeo = 0;
  u->lname = ln, u->mframe = mf;
}

int mbs_urdfJointCount(const mbsUrdf *u) {
  return u->njoint;
}

void mbs_urdfJointInfo(const mbsUrdf *u, int i, const char **name, const char **child, int *nv,
                       int *line) {
  const mbsUrdfJoint *j = &u->joint[i];
  int t = j->type;
  if (name) *name = j->name;
  if (child) *child = mbs_urdfLinkName(u, j->child);
  if (nv) *nv = t == MBS_URDF_FLOATING ? 6 : t == MBS_URDF_FIXED ? 0 : 1;
  if (line) *line = j->line;
}

int mbs_urdfJointLimit(const mbsUrdf *u, int i, double *lower, double *upper) {
  const mbsUrdfJoint *j = &u->joint[i];
  if (!j->has_limit || (j->type != MBS_URDF_REVOLUTE && j->type != MBS_URDF_PRISMATIC)) return 0;
  *lower = j->lower, *upper = j->upper;
  return 1;
}

const char *mbs_urdfNotModelled(const mbsUrdf *u) {
  return u->note;
}

// link \p i merged into a body (mbs_urdfMerge): the body's name ("ground"), the link frame in
// that body link's frame (position, quaternion w x y z); 0 for the links that head a body
static int mbs_urdfMerged(const mbsUrdf *u, int i, const char **body, double *xyz, double *q) {
  int owner = u->link ? u->link[i].owner : u->lname[i].owner;
  if (owner == i) return 0;
  *body = owner >= 0 ? mbs_urdfLinkName(u, owner) : "ground";
  const double *fR = u->link ? u->link[i].fR : u->mframe + 12 * u->lname[i].mframe;
  const double *fp = u->link ? u->link[i].fp : fR + 9;
  memcpy(xyz, fp, 3 * sizeof *fp);
  mbs_urdfQuat(fR, q);
  return 1;
}

void mbs_urdfJson(const mbsUrdf *u, mbsJson *j) {
  mbs_jsonString(j, "file", u->file);
  mbs_jsonString(j, "robot", u->robot ? u->robot : "");
  mbs_jsonInt(j, "links", u->nlink);
  mbs_jsonString(j, "root", mbs_urdfLinkName(u, u->root));
  mbs_jsonString(j, "not_modelled", u->note);
  mbs_jsonBeginArray(j, "joints");
  for (int i = 0; i < u->njoint; i++) {
    const mbsUrdfJoint *jt = &u->joint[i];
    mbs_jsonBeginObject(j, NULL);
    mbs_jsonString(j, "name", jt->name);
    mbs_jsonString(j, "type", mbs_urdf_types[jt->type]);
    mbs_jsonString(j, "parent", mbs_urdfLinkName(u, jt->parent));
    mbs_jsonString(j, "child", mbs_urdfLinkName(u, jt->child));
    if (jt->type != MBS_URDF_FIXED) mbs_jsonInt(j, "q0_index", jt->qa);
    if (jt->has_limit) {
      mbs_jsonNumber(j, "lower", jt->lower);
      mbs_jsonNumber(j, "upper", jt->upper);
    }
    if (jt->effort > 0) mbs_jsonNumber(j, "effort", jt->effort);
    if (jt->velocity > 0) mbs_jsonNumber(j, "velocity", jt->velocity);
    if (jt->damping > 0) mbs_jsonNumber(j, "damping", jt->damping);
    if (jt->friction != 0) mbs_jsonNumber(j, "friction", jt->friction);
    mbs_jsonEndObject(j);
  }
  mbs_jsonEndArray(j);
  mbs_jsonBeginArray(j, "merged"); // links merged into their parent's body (docs/urdf.md)
  for (int i = 0; i < u->nlink; i++) {
    const char *body;
    double xyz[3], q[4];
    if (i == u->root || !mbs_urdfMerged(u, i, &body, xyz, q)) continue;
    mbs_jsonBeginObject(j, NULL);
    mbs_jsonString(j, "link", mbs_urdfLinkName(u, i));
    mbs_jsonString(j, "body", body);
    mbs_jsonNumberArray(j, "xyz", xyz, 3);
    mbs_jsonNumberArray(j, "quat", q, 4);
    mbs_jsonEndObject(j);
  }
  mbs_jsonEndArray(j);
}

void mbs_urdfPrint(const mbsUrdf *u, FILE *f) {
  fprintf(f, "URDF %s: robot \"%s\", %d links, %d joints (root link \"%s\")\n", u->file,
          u->robot ? u->robot : "", u->nlink, u->njoint, mbs_urdfLinkName(u, u->root));
  // q0: the joint's entries of model.urdf.q0 (0-based; qd0 likewise, a floating joint's 6)
  fprintf(f, "  %-24s %-10s %-20s %7s %12s %12s %10s %10s\n", "joint", "type", "child", "q0",
          "lower", "upper", "effort", "velocity");
  for (int i = 0; i < u->njoint; i++) {
    const mbsUrdfJoint *jt = &u->joint[i];
    char lo[32] = "-", hi[32] = "-", ef[32] = "-", ve[32] = "-", qi[32] = "-";
    if (jt->type == MBS_URDF_FLOATING)
      snprintf(qi, sizeof qi, "%d-%d", jt->qa, jt->qa + 6);
    else if (jt->type != MBS_URDF_FIXED)
      snprintf(qi, sizeof qi, "%d", jt->qa);
    if (jt->has_limit) snprintf(lo, sizeof lo, "%.6g", jt->lower);
    if (jt->has_limit) snprintf(hi, sizeof hi, "%.6g", jt->upper);
    if (jt->effort > 0) snprintf(ef, sizeof ef, "%.6g", jt->effort);
    if (jt->velocity > 0) snprintf(ve, sizeof ve, "%.6g", jt->velocity);
    fprintf(f, "  %-24s %-10s %-20s %7s %12s %12s %10s %10s\n", jt->name, mbs_urdf_types[jt->type],
            mbs_urdfLinkName(u, jt->child), qi, lo, hi, ef, ve);
  }
  for (int i = 0; i < u->nlink; i++) { // links merged into their parent's body (docs/urdf.md)
    const char *body;
    double x[3], q[4];
    if (i != u->root && mbs_urdfMerged(u, i, &body, x, q))
      fprintf(f, "  merged %s -> %s xyz %.6g %.6g %.6g quat %.6g %.6g %.6g %.6g\n",
              mbs_urdfLinkName(u, i), body, x[0], x[1], x[2], q[0], q[1], q[2], q[3]);
  }
  if (u->note[0]) fprintf(f, "  not modelled: %s\n", u->note);
}

#else // built without libxml2

void mbs_urdfSizes(const mbsUrdf *u, int *nq, int *nv) {
  (void)u;
  if (nq) *nq = 0;
  if (nv) *nv = 0;
}
mbsErr mbs_urdfAddBodies(const mbsUrdf *u, mbsModel *m, int parent, const mbsReal *q0,
                         const mbsReal *qd0) {
  (void)u, (void)m, (void)parent, (void)q0, (void)qd0;
  return MBS_ERR_UNSUPPORTED;
}
int mbs_urdfJointCount(const mbsUrdf *u) {
  (void)u;
  return 0;
}
void mbs_urdfJointInfo(const mbsUrdf *u, int i, const char **name, const char **child, int *nv,
                       int *line) {
  (void)u, (void)i, (void)name, (void)child, (void)nv, (void)line;
}
int mbs_urdfJointLimit(const mbsUrdf *u, int i, double *lower, double *upper) {
  (void)u, (void)i, (void)lower, (void)upper;
  return 0;
}
const char *mbs_urdfNotModelled(const mbsUrdf *u) {
  (void)u;
  return "";
}
void mbs_urdfCompact(mbsUrdf *u) {
  (void)u;
}
void mbs_urdfJson(const mbsUrdf *u, mbsJson *j) {
  (void)u, (void)j;
}
void mbs_urdfPrint(const mbsUrdf *u, FILE *f) {
  (void)u, (void)f;
}
#endif
