/// \file mbs_urdf.h
/// URDF robot descriptions as mbspar model input (docs/urdf.md): links with inertials, joints
/// revolute, continuous, prismatic, fixed and floating with origins (xyz, rpy), axes, damping;
/// limits, effort and velocity are read and reported, not enforced. Parsed with libxml2.
///
/// Frames: mbspar's body frames keep the parent's orientation at q = 0 (docs/model.md), URDF's
/// link frames are turned by each joint's rpy. The conversion expresses everything in mbspar
/// frames: a link's joint origin and axis, its centre of mass and inertia are rotated by the
/// accumulated rpy of the links above it, so the dynamics (q, qd, qdd of every joint) are the
/// URDF's; the link frame's orientation in its body frame is kept as the body's framequat, so
/// the poses in the outputs are those of the URDF link frames. Floating joints become free
/// joints whose quaternion and angular velocity refer to the body frame (docs/urdf.md gives the
/// map). Massless links on fixed joints are merged into their parent (a massless root, or a
/// root named "world", is the ground).
#ifndef MBS_URDF_H
#define MBS_URDF_H

#include <stdio.h>
#include "mbs_model.h"
#include "mbs_report.h"

typedef struct mbsUrdf mbsUrdf;

/// Parse URDF text (\p len bytes) read from \p filename (the name in messages). Errors are
/// MBS_ERR_INPUT "FILE:LINE: message" (XML syntax, a missing or bad attribute, an unknown link,
/// a link with two parents, no or several roots, an unsupported joint type such as planar, a
/// moving joint whose body (its link and the links welded to it) has no mass, a duplicate link or
/// joint name, a name that breaks mbs_nameProblem's rule); MBS_ERR_UNSUPPORTED in builds without
/// libxml2. Local.
mbsErr mbs_urdfParse(const char *text, size_t len, const char *filename, mbsUrdf **u);

/// A reader of URDF text: up to \p len bytes into \p buf; the number read, 0 at the end, -1 on
/// a read error (libxml2's xmlInputReadCallback).
typedef int (*mbsUrdfReadFn)(void *ctx, char *buf, int len);
/// mbs_urdfParse of the text \p rd reads (\p len: the file's size, for the size limit), a piece
/// at a time: the caller need not hold the text (parallel/urdf_stream.c: the ranks receive it in
/// pieces from rank 0). The same robot and the same errors as mbs_urdfParse of the whole text.
/// Local.
mbsErr mbs_urdfParseStream(mbsUrdfReadFn rd, void *ctx, size_t len, const char *filename,
                           mbsUrdf **u);

/// Position coordinates and degrees of freedom the robot adds to a model. Local.
void mbs_urdfSizes(const mbsUrdf *u, int *nq, int *nv);

/// Append the robot's bodies to \p m (not finalized) in depth-first order from the root, the
/// root hanging from body \p parent (-1: the ground). \p q0 / \p qd0: NULL (zero, identity
/// quaternions) or nq / nv initial values in the robot's coordinate order. Errors of the model
/// (e.g. an inertia that is not positive definite) come back as "FILE:LINE: link "x": ...".
/// Local.
mbsErr mbs_urdfAddBodies(const mbsUrdf *u, mbsModel *m, int parent, const mbsReal *q0,
                         const mbsReal *qd0);

/// After the model is built: drop what only mbs_urdfAddBodies reads (the links' inertials,
/// frames and children, the name index), keeping what the reports read (names, joints, merged
/// links' frames): ~0.4 kB per link less (issue 35 item 4; parallel/main.c calls it after a
/// distributed-memory build). mbs_urdfAddBodies refuses the robot afterwards. Local.
void mbs_urdfCompact(mbsUrdf *u);

/// Number of joints of the robot (every type, fixed included). Local.
int mbs_urdfJointCount(const mbsUrdf *u);
/// Joint \p i in FILE order: its name, its child link's name (the mbspar body of a moving joint
/// carries that name), its degrees of freedom (0 fixed, 1 revolute, continuous, prismatic, 6
/// floating) and its line in the file; NULL outputs are skipped. Local.
void mbs_urdfJointInfo(const mbsUrdf *u, int i, const char **name, const char **child, int *nv,
                       int *line);

/// Joint \p i in FILE order: 1 and its <limit lower upper> if it is a revolute or prismatic joint
/// with limits (mbspar does not model them; `run` counts their crossings, docs/urdf.md), else 0.
/// Local.
int mbs_urdfJointLimit(const mbsUrdf *u, int i, double *lower, double *upper);

/// The one-line note of what the robot uses that mbspar does not model (limits, effort,
/// velocity, friction, mimic joints, transmissions, geometry, ...), "" if nothing. Local.
const char *mbs_urdfNotModelled(const mbsUrdf *u);

/// The robot for reports: name, file, links, joints with type, limits, effort, velocity,
/// damping, friction (members of the currently open JSON object). Local.
void mbs_urdfJson(const mbsUrdf *u, mbsJson *j);

/// A table of the joints with their limits for `mbspar check`. Local.
void mbs_urdfPrint(const mbsUrdf *u, FILE *f);

/// Free and NULL (NULL is a no-op).
void mbs_urdfDestroy(mbsUrdf **u);

#endif
