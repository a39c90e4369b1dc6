/// \file mbs_model.h
/// The immutable model: a tree of rigid bodies connected to their parents by joints, stored as
/// flat arrays in topological order (parent index < child index). Built with
/// mbs_modelCreate -> mbs_modelAddBody (repeated) -> mbs_modelFinalize, destroyed with
/// mbs_modelDestroy. After mbs_modelFinalize nothing in it changes.
///
/// Frames (same conventions as MuJoCo): body b's frame sits at jnt_origin[b] in its parent's
/// frame and has the parent's orientation at q = 0; joint axes are expressed in that frame.
/// Spatial vectors are Featherstone's, [angular; linear], in body coordinates at the body origin.
#ifndef MBS_MODEL_H
#define MBS_MODEL_H

#include "mbs_error.h"
#include "mbs_types.h"

/// Options that belong to the model (solver and integrator settings).
typedef struct {
  int solver;      ///< mbsSolverMethod
  mbsReal tol;     ///< constraint-force solver tolerance
  int max_iter;    ///< iteration cap of the iterative solvers
  int criterion;   ///< mbsSolverCriterion
  mbsReal omega;   ///< SOR relaxation factor
  mbsReal rho;     ///< spectral radius for Chebyshev (<= 0: estimate)
  int warm_start;  ///< mbsWarmStart
  int integrator;  ///< mbsIntegrator
  mbsReal dt;      ///< time step (fixed-step) or initial step (adaptive)
  mbsReal t_end;   ///< end time of a run
  mbsReal int_tol; ///< adaptive integrator tolerance
} mbsOption;

/// Description of one body and the joint to its parent, the input to mbs_modelAddBody.
typedef struct {
  const char *name;     ///< unique name (copied)
  int parent;           ///< index of an earlier body, or -1 for the ground
  int jnttype;          ///< mbsJointType
  mbsReal origin[3];    ///< joint (child frame) origin in the parent frame
  mbsReal axis[3];      ///< joint axis (revolute, prismatic, cylindrical, universal)
  mbsReal axis2[3];     ///< second axis of a universal joint, in the once-rotated frame
  mbsReal mass;         ///< body mass (> 0)
  mbsReal com[3];       ///< centre of mass in the body frame
  mbsReal inertia[6];   ///< [Ixx, Iyy, Izz, Ixy, Ixz, Iyz] about the COM, body axes
  mbsReal q0[7];        ///< initial joint position coordinates (nq of the type)
  mbsReal qd0[6];       ///< initial joint velocities (nv of the type)
  mbsReal stiffness[6]; ///< joint spring per dof (scalar-coordinate joints only)
  mbsReal springref[6]; ///< spring rest position per dof
  mbsReal damping[6];   ///< joint viscous damping per dof
  mbsReal force[6];     ///< constant applied joint force per dof
} mbsBodySpec;

typedef struct mbsModel {
  // sizes
  int nbody;          ///< number of bodies (the ground is not counted)
  int nq;             ///< number of position coordinates
  int nv;             ///< number of degrees of freedom
  int nlam;           ///< number of constraint-force components (sum of 6 - nv per joint)
  int maxdepth;       ///< longest path from the ground, in bodies
  mbsReal gravity[3]; ///< gravitational acceleration in the ground frame
  mbsOption opt;      ///< solver and integrator options

  // bodies and their joints (nbody)
  int *body_parent;     ///< (nbody) parent index, -1 for the ground
  int *body_jnttype;    ///< (nbody) mbsJointType
  int *body_qadr;       ///< (nbody) first position coordinate
  int *body_qnum;       ///< (nbody) number of position coordinates
  int *body_dofadr;     ///< (nbody) first degree of freedom
  int *body_dofnum;     ///< (nbody) number of degrees of freedom
  int *body_lamadr;     ///< (nbody) first constraint-force component
  int *body_lamnum;     ///< (nbody) number of constraint-force components (6 - dofnum)
  int *body_childadr;   ///< (nbody) first entry in child_list
  int *body_childnum;   ///< (nbody) number of children
  int *child_list;      ///< (nbody) children of each body, grouped by parent
  int *body_depth;      ///< (nbody) 1 for children of the ground
  int *body_subtreeend; ///< (nbody) one past the last body of the subtree rooted at b (DFS order)
  char **body_name;     ///< (nbody) names

  mbsReal *body_mass;    ///< (nbody) mass
  mbsReal *body_com;     ///< (nbody x 3) centre of mass, body frame
  mbsReal *body_inertia; ///< (nbody x 6) inertia about the COM [xx yy zz xy xz yz]
  mbsReal *body_sinert;  ///< (nbody x 10) spatial inertia at the body origin: m, h=m*com (3),
                         ///< rotational inertia about the origin [xx yy zz xy xz yz]

  mbsReal *jnt_origin; ///< (nbody x 3) joint origin in the parent frame
  mbsReal *jnt_axis;   ///< (nbody x 3) unit joint axis
  mbsReal *jnt_axis2;  ///< (nbody x 3) unit second axis (universal)
  int *jnt_axisk;      ///< (nbody) k if jnt_axis is exactly +e_k or -e_k (k = 0, 1, 2), else -1:
                       ///< selects the axis-specialised kernels of revolute joints

  // degrees of freedom (nv)
  int *dof_body;          ///< (nv) body of each dof
  int *dof_parent;        ///< (nv) previous dof on the path to the ground, -1 if none
  mbsReal *dof_stiffness; ///< (nv)
  mbsReal *dof_springref; ///< (nv)
  mbsReal *dof_damping;   ///< (nv)
  mbsReal *dof_force;     ///< (nv) constant applied joint force

  // initial state
  mbsReal *q0;  ///< (nq)
  mbsReal *qd0; ///< (nv)

  // builder bookkeeping
  int cap;           ///< capacity of the per-body arrays
  int *name_table;   ///< (name_tablecap) open-addressing hash of body names, -1 = empty
  int name_tablecap; ///< power of two
  int finalized;
} mbsModel;

/// Number of position coordinates of a joint type.
int mbs_jntNq(int type);
/// Number of degrees of freedom of a joint type.
int mbs_jntNv(int type);
/// Name of a joint type ("revolute", ...).
const char *mbs_jntName(int type);
/// Joint type from its name; returns -1 if unknown.
int mbs_jntFromName(const char *name);

/// Fill a body specification with defaults (revolute about z, unit mass, zero inertia, q0 = 0).
void mbs_bodySpecDefault(mbsBodySpec *spec);

/// Default solver/integrator options.
void mbs_optionDefault(mbsOption *opt);

/// Create an empty model with capacity for \p capacity bodies (grows as needed).
mbsErr mbs_modelCreate(mbsModel **m, int capacity);

/// Validate and append one body. On invalid data returns MBS_ERR_INPUT with a message that names
/// the offending field (without file/line; the caller adds that).
/// \param[out] id index of the new body (may be NULL)
mbsErr mbs_modelAddBody(mbsModel *m, const mbsBodySpec *spec, int *id);

/// Finish the model: derived arrays (children, dof tree, spatial inertias). Fails on an empty
/// model.
mbsErr mbs_modelFinalize(mbsModel *m);

/// Look up a body by name; returns -1 if absent. "ground" and "world" give -1 too via \p found=0.
int mbs_modelFindBody(const mbsModel *m, const char *name);

/// 1 if some body has two or more children (a branched tree; the constraint-force matrix is then
/// not 2-cyclic), 0 for chains (and sets of chains).
int mbs_modelBranched(const mbsModel *m);

/// Total mass of all bodies.
mbsReal mbs_modelTotalMass(const mbsModel *m);

/// Free the model and set *m to NULL (NULL is a no-op).
void mbs_modelDestroy(mbsModel **m);

#endif
