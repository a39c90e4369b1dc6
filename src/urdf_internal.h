/// \file urdf_internal.h
/// What the URDF reader's files share (urdf_xml.c: libxml2; urdf.c: the parse; urdf_build.c:
/// merging, the conversion into mbspar bodies and the reports): the robot as links and joints.
/// Local.
#ifndef MBS_URDF_INTERNAL_H
#define MBS_URDF_INTERNAL_H
#ifdef MBS_HAVE_URDF

#include "mbspar/mbs_urdf.h"

enum {
  MBS_URDF_REVOLUTE,
  MBS_URDF_CONTINUOUS,
  MBS_URDF_PRISMATIC,
  MBS_URDF_FIXED,
  MBS_URDF_FLOATING
};
extern const char *const mbs_urdf_types[]; // the names of the enum above

typedef struct {
  char *name;
  int line;
  int massive;                  // an inertial with mass > 0
  int iline;                    // line of <inertial>
  int parent_joint;             // joint whose child this is, -1: a root
  int *child, nchild, capchild; // joints whose parent this is, in file order
  // merging (mbs_urdfMerge): the link heading the body this link belongs to (itself, -1: the
  // ground)
  int owner;
  // One of three, ~0.1 kB per link each (issue 35 item 4): the parse's inertial (mass, centre of
  // mass and inertial frame rpy in the link frame, tensor elements ixx iyy izz ixy ixz iyz); after
  // mbs_urdfMerge, for the links heading a body (their frame: the identity) the body's mass,
  // centre of mass and inertia about it (own link frame), for the other links their frame in the
  // head's frame (the ground's: the root's). The merge reads a body's inertials before it writes.
  union {
    struct {
      double mass, com[3], rpy[3], I[6];
    };
    struct {
      double fR[9], fp[3];
    };
    struct {
      double bm, bc[3], bI[9];
    };
  };
} mbsUrdfLink;

typedef struct {
  char *name;
  int line, type, parent, child; // links
  int qa, va;                    // first q0 / qd0 entry: file order of the moving joints
  int has_limit;
  double lower, upper, effort, velocity;
  double damping, friction;
} mbsUrdfJoint;

// a link after mbs_urdfCompact: what the reports read (its name, the link heading its body, the
// index of its frame in mbsUrdf.mframe if it is merged into another link's body, else -1)
typedef struct {
  char *name;
  int owner, mframe;
} mbsUrdfLinkName;

// names -> indices: open addressing, at most half full (a linear build, docs/urdf.md)
typedef struct {
  int *slot; // -1: empty
  unsigned mask;
} mbsUrdfIndex;

struct mbsUrdf {
  char *file, *robot;
  int nlink, njoint, root;
  mbsUrdfLink *link; // NULL after mbs_urdfCompact: then lname
  mbsUrdfJoint *joint;
  // (9 per joint: origin xyz, rpy, axis) what the merge and the build read of the joints, apart
  // from what the reports read: mbs_urdfCompact frees it (72 B per joint, issue 35 item 4)
  double *jgeo;
  int capjgeo;
  mbsUrdfLinkName *lname; // (nlink) after mbs_urdfCompact
  double *mframe;         // (12 per merged link) after mbs_urdfCompact: fR then fp
  mbsUrdfIndex link_index, joint_index;
  // the names of the links and joints, packed in blocks (mbs_urdfName)
  char **nblk, *nat;
  int nnblk, capnblk;
  size_t nleft;
  int nq, nv;
  // what mbspar reads but does not model (counts) and the note made of them
  int n_limit, n_effort, n_velocity, n_friction, n_mimic, n_safety, n_calib;
  int n_visual, n_collision, n_transmission, n_gazebo, n_material, n_other;
  char note[1024];
};

// joint k's origin (xyz, then rpy) and axis in mbsUrdf.jgeo
#define MBS_URDF_JXYZ(u, k)  ((u)->jgeo + 9 * (size_t)(k))
#define MBS_URDF_JRPY(u, k)  ((u)->jgeo + 9 * (size_t)(k) + 3)
#define MBS_URDF_JAXIS(u, k) ((u)->jgeo + 9 * (size_t)(k) + 6)

/// MBS_ERR_INPUT "FILE:LINE: message" (\p line 0: "FILE: message").
mbsErr mbs_urdfFail(const mbsUrdf *u, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/// Fixed-joint links merged into their parent's body (urdf_build.c), after the topology.
mbsErr mbs_urdfMerge(mbsUrdf *u);

#include <libxml/tree.h>
/// The document of the text \p rd reads (urdf_xml.c), or NULL with *line and \p msg set (XML syntax
/// errors, entities, the depth cap); \p visit (if not NULL) sees every child of the root element as
/// it ends, in file order, after which it is freed: the document returned holds the root element
/// alone. Free with xmlFreeDoc.
xmlDoc *mbs_urdfXmlRead(mbsUrdfReadFn rd, void *rctx, const char *file, int *line, char *msg,
                        size_t msglen, void (*visit)(void *, const xmlNode *), void *arg);

#endif
#endif
