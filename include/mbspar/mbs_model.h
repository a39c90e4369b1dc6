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

#include <stddef.h>
#include "mbs_error.h"
#include "mbs_joint.h"
#include "mbs_types.h"

/// Options that belong to the model (solver and integrator settings).
typedef struct {
  int solver;      ///< mbsSolverMethod
  mbsReal tol;     ///< constraint-force solver tolerance
  int max_iter;    ///< iteration cap of the iterative solvers
  int check_every; ///< jacobi, gs, sor, chebyshev: test convergence every this many iterations
  int criterion;   ///< mbsSolverCriterion
  mbsReal omega;   ///< SOR relaxation factor
  mbsReal rho;     ///< spectral radius for Chebyshev (<= 0: estimate)
  int warm_start;  ///< mbsWarmStart
  int iface;       ///< cut-joint system of solver.method = schur: 0 merge ("cr"), 1 J-CG ("jcg")
  int integrator;  ///< mbsIntegrator
  mbsReal dt;      ///< time step (fixed-step) or initial step (adaptive)
  mbsReal t_end;   ///< end time of a run
  mbsReal int_tol; ///< adaptive integrator tolerance
  // closed loops (docs/loops.md)
  mbsReal baumgarte[2]; ///< solver.baumgarte [alpha, beta]: c'' + 2 alpha c' + beta^2 c = 0
  mbsReal rank_tol;     ///< solver.rank_tol: relative pivot below which a closure equation is
                        ///< redundant (pivoted Cholesky of the Jacobi-scaled G H^-1 G^T)
  mbsReal closure_tol;  ///< solver.closure_tol: Newton-Raphson stops at max |c| below this (m, rad)
  int projection;       ///< integrator.projection: project q and qd onto the loops after each step
  mbsReal proj_tol;     ///< integrator.projection_tol: model.formulation = natural with dp5,
                    ///< project (p, ṗ) when a constraint residual exceeds it (docs/natural.md 12)
  int loops; ///< solver.loops (mbsLoopMode): how the constraint-force methods take
             ///< the closure equations (docs/loops.md 8.4)
} mbsOption;

/// solver.loops: the closure equations in the constraint-force methods (docs/loops.md 8.4).
typedef enum {
  MBS_LOOPS_AUTO = 0, ///< rows for jacobi, gs, sor, chebyshev and jcg when the non-zero closure
                      ///< equations are independent at the assembled q0; unit otherwise
  MBS_LOOPS_UNIT = 1, ///< range space: one tree solve per closure equation (section 8)
  MBS_LOOPS_ROWS = 2  ///< rows of the constraint-force system, iterated with the tree's
} mbsLoopMode;

/// Description of one body and the joint to its parent, the input to mbs_modelAddBody.
typedef struct {
  const char *name;     ///< unique name (copied)
  int parent;           ///< index of an earlier body, or -1 for the ground
  int jnttype;          ///< mbsJointId
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
  int keep_name;        ///< subset builds: remember the name even if the body is not kept
  mbsReal framequat[4]; ///< orientation [w x y z] of the frame reported in outputs, relative to
                        ///< the body frame (identity; URDF: the link frame, docs/urdf.md)
  int any_name;         ///< 1: "ground" and "world" are ordinary names (URDF links; a cfg's
                        ///< references to them still mean the ground)
  mbsReal tip[3];       ///< end of the body's shape in the body frame, length * direction (outputs
                        ///< only: drawing; zero: not known, drawn to the centre of mass)
} mbsBodySpec;

/// The one rule for names that become CSV column names and report keys (bodies, generator
/// prefixes, URDF links and joints): no control characters (a newline would split the CSV
/// header) and no commas (they would shift columns). NULL if \p name obeys it, else what breaks
/// it ("a comma", "a control character"). Local.
const char *mbs_nameProblem(const char *name);

/// Most loops and spring-dampers of a model (absurd input is bad input; the serial loop solver is
/// dense in the closure equations).
#define MBS_MAX_LOOPS  10000
#define MBS_MAX_FORCES 1000000

/// loop_body of a side whose body another rank holds (local models with loops)
#define MBS_LOOP_REMOTE (-2)

/// One cut joint that closes a loop (mbs_modelAddLoop).
typedef struct {
  const char *name;               ///< unique among the loops (copied)
  int type;                       ///< mbsJointId, not free
  int body1, body2;               ///< body indices, -1 for the ground (not both)
  mbsReal frame1[12], frame2[12]; ///< frames in their bodies (mbsu_loopFrame: origin, rotation)
} mbsLoopSpec;

/// One point-to-point spring-damper between two bodies (mbs_modelAddForce).
typedef struct {
  const char *name;             ///< name in reports (copied)
  int body1, body2;             ///< body indices, -1 for the ground (not both)
  mbsReal point1[3], point2[3]; ///< attachment points in their bodies' frames
  mbsReal stiffness;            ///< N/m, >= 0
  mbsReal rest_length;          ///< m, >= 0
  mbsReal damping;              ///< N s/m, >= 0
} mbsForceSpec;

/// What the assembly of q0 onto the loops did (mbs_loopAssemble) and the rank of the closure
/// equations there.
typedef struct {
  int done;             ///< assembly ran (the model has loops)
  int iterations;       ///< Newton-Raphson iterations
  mbsReal c0_pos;       ///< max |c| of the position rows before (m)
  mbsReal c0_rot;       ///< max |c| of the rotation rows before
  mbsReal c_pos, c_rot; ///< the same after
  mbsReal dq_max;       ///< largest coordinate change (rad or m, tangent space)
  mbsReal dqd_max;      ///< largest rate change of the velocity projection
  int rank;             ///< rank of the closure equations at the assembled q0
  int nredundant;       ///< nlam_loop - rank
  int *redundant;       ///< (nredundant) closure equations found redundant (indices 0..nlam_loop-1)
  unsigned char *skip;  ///< (nlam_loop) zero rows known in advance there (G_i = 0: no unit solve)
  int nskip;            ///< their number
  /// The velocity transformation at the assembled q0 (seed 000 eq. 16: the dependent joint rates
  /// from the independent ones, qd_dep = E qd_ind; docs/loops.md 5): the dependent dofs are
  /// chosen from the last dof backwards (those nearest the cut joints), a dof joining them when
  /// its column of the closure Jacobian G is independent of theirs. Computed for nv <=
  /// MBS_LOOP_VMAP_MAX (else nvdep = 0 and the pointers are NULL).
  int nvdep;     ///< dependent dofs (= rank where computed)
  int *vdep;     ///< (nvdep) dependent dofs, ascending
  int *vind;     ///< (nv - nvdep) independent dofs, ascending
  mbsReal *vmap; ///< (nvdep x (nv - nvdep)) E, row-major, rows as vdep, columns as vind
} mbsLoopAssembly;

/// Largest nv for which mbs_loopAssemble forms the velocity transformation (O(nv^2) memory).
#define MBS_LOOP_VMAP_MAX 256

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
  int *body_jnttype;    ///< (nbody) mbsJointId
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
  /// (nbody) kind of each body (src/body.h: kernels ask the body through it); NULL: all rigid
  unsigned char *body_kind;

  mbsReal *jnt_origin;     ///< (nbody x 3) joint origin in the parent frame
  mbsReal *jnt_axis;       ///< (nbody x 3) unit joint axis
  mbsReal *jnt_axis2;      ///< (nbody x 3) unit second axis (universal)
  mbsReal *body_framequat; ///< (nbody x 4) reported frame [w x y z] in the body frame (outputs
                           ///< only: poses give that frame's orientation; identity by default)
  mbsReal *body_tip;       ///< (nbody x 3) end of the shape in the body frame (outputs only:
                           ///< the drawn extent; zero when not known)
  int *jnt_axisk;          ///< (nbody) k if jnt_axis is exactly +e_k or -e_k (k = 0, 1, 2), else
                           ///< -1: selects the axis-specialised kernels of revolute joints

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

  // distribution: a local model holds a subset of the global model's bodies (the bodies a rank
  // owns, their remote parents and their remote children) in increasing global order; a full
  // model holds every body (then the global arrays are the identity and own0..own1 = all)
  int nbody_g, nq_g, nv_g, nlam_g; ///< sizes of the global model
  int local;                       ///< 1: a subset (mbs_modelSubset), 0: every body
  int own0, own1;                  ///< the owned bodies (local indices), set by the caller
  int *body_gid;                   ///< (nbody) global index of each body
  int *body_gqadr;                 ///< (nbody) global first position coordinate
  int *body_gdofadr;               ///< (nbody) global first degree of freedom
  int *body_glamadr;               ///< (nbody) global first constraint-force component
  mbsReal sum_mass;                ///< local models: total mass over all ranks (set collectively)
  int sum_jnt[MBS_JNT_COUNT];      ///< local models: joints of each type over all ranks
  int *part_start;                 ///< local models: the decomposition they were built for
  int part_n;                      ///< (part_n + 1 entries: first global body of each rank)

  // closed loops: cut joints, stored apart from the tree (docs/loops.md). Their constraint
  // components follow the tree's: loop k owns lambda[loop_lamadr[k] .. + loop_lamnum[k]) of a
  // vector of nlam + nlam_loop entries. Local models hold every loop (its type, frames, names:
  // O(#loops)) when built with mbs_modelTrackLoops (docs/scaling.md "Memory", (i), (iii), (iv));
  // a side's body may then be held by another rank only (MBS_LOOP_REMOTE).
  int nloop;                ///< number of cut joints
  int nlam_loop;            ///< closure equations, sum of loop_lamnum
  char **loop_name;         ///< (nloop)
  int *loop_type;           ///< (nloop) mbsJointId of the cut joint (not free)
  int *loop_body;           ///< (nloop x 2) body1, body2 (local); -1: the ground;
                            ///< MBS_LOOP_REMOTE: not held here (a local model of
                            ///< mbs_configBuildLocal holds every loop body: never)
  int *loop_gbody;          ///< (nloop x 2) global index of each side's body, -1: the ground
  int *loop_depth;          ///< (nloop x 2) depth of each side's body (a root: 0), -1: ground
  int *loop_anc;            ///< (nloop x 2) local index of the side's body or of its nearest
                            ///< ancestor among the owned bodies own0..own1-1, -1 if its path to
                            ///< the ground holds none of them (full models: loop_body)
  int *loop_lamadr;         ///< (nloop) first component: nlam + sum of the earlier loop_lamnum
  int *loop_lamnum;         ///< (nloop) closure equations m_k = 6 - nv(type)
  mbsReal *loop_frame;      ///< (nloop x 24) frame1 then frame2, 12 reals each: origin (3) and
                            ///< rotation (9, row-major, columns x = ref, y, z = axis) in the body
  mbsLoopAssembly loop_asm; ///< assembly of q0 and rank there (set by mbs_loopAssemble)
  // point-to-point spring-dampers (external wrenches on bodies, docs/loops.md 6)
  int nforce;           ///< number of spring-dampers
  char **force_name;    ///< (nforce)
  int *force_body;      ///< (nforce x 2) body1, body2; -1: the ground
  mbsReal *force_point; ///< (nforce x 6) point1, point2 in their bodies' frames
  mbsReal *force_prm;   ///< (nforce x 3) stiffness, rest_length, damping

  // builder bookkeeping
  const int *sub;   ///< subset builds: sorted global ids to keep (mbs_modelSubset)
  int nsub, sub_at; ///< their number and the next one expected
  int names_only;   ///< validation builds: keep the names of every body (duplicates), no bodies
  char **vname;     ///< (nvname) names of bodies not kept (validation builds: all of them;
                    ///< subset builds: those with keep_name) and their global indices
  int *vname_gid;
  int nvname, vnamecap, *vname_table, vname_tablecap;
  struct mbsModelPrefix *prefix; ///< (nprefix) generators: names prefix + 1..n from gid base
  int nprefix;
  // subset builds: what the structure pass records
  int trk_on;         ///< subset builds with loops (mbs_modelTrackLoops): per global body below
  int *trk;           ///< (2 x trk_cap) depth and nearest owned ancestor-or-self (global, -1 none)
  int trk_cap;        ///< of every body built so far; freed by mbs_modelFinalize
  int trk_g0, trk_g1; ///< the owned global range
  int rec0, rec1;     ///< owned global range whose remote relatives are recorded
  int *rec_par;       ///< (nrec_par) remote parents of owned bodies (global, unsorted)
  int nrec_par, rec_parcap;
  int *rec_child; ///< (nrec_child) bodies outside [rec0, rec1) whose parent is inside
  int nrec_child, rec_childcap;
  int *run_type, *run_len; ///< (nrun) joint types of the global model, run-length coded
  int nrun, runcap;
  int run_branched; ///< 1 once some body's parent is not the body before it (the global model is
                    ///< not one chain in body order; mbs_partitionRuns)
  int *run_cut;     ///< (nrun_cut) clean cuts in global order: bodies on the ground that no
                    ///< joint reaches across (mbs_partitionRuns snaps rank boundaries to them)
  int nrun_cut, run_cutcap;
  int *run_mfirst;      ///< (nrun_m) masses of the global model as runs: first body of each run
  double *run_mass;     ///< (nrun_m) the mass of the bodies of that run, negative on fixed
                        ///< joints (mbs_partitionNoteMass)
  int nrun_m, run_mcap; ///< -1: out of memory (no light joints recorded)
  int *run_light;       ///< (2 x nrun_light) light joints: (child, parent) whose masses are
                        ///< MBS_PARTITION_LIGHT apart, ascending by child (mbs_partitionRunsLight;
  ///< parent as mbs_partitionLightParent: -1 - parent if the child is lighter)
  int nrun_light, run_lightcap;
  int cap;           ///< capacity of the per-body arrays
  int *name_table;   ///< (name_tablecap) open-addressing hash of body names, -1 = empty
  int name_tablecap; ///< power of two
  int finalized;
  /// bodies (global, every build) whose own inertia is only positive semidefinite (a thin rod),
  /// accepted where their joint's motion meets inertia; the constraint-force methods cannot run
  /// them (mbsSolverType.semidef_bodies). semidef_name: the first of them.
  int nsemidef_g;
  char semidef_name[64];
  /// flexible bodies (issue 34, mbs_flex.h; docs/flexible.md): their modal data and nodes, NULL
  /// when none; nflex_g counts them in every build (the verbs that cannot run them refuse)
  struct mbsFlexSet *flex;
  int nflex_g;
} mbsModel;

/// The column name PREFIX_BODY or PREFIX_BODY_COMPONENT of coordinate (rate = 0) or rate
/// (rate = 1) k of body b into buf (truncated to n bytes). Returns buf.
char *mbs_coordName(const mbsModel *m, const char *prefix, int b, int k, int rate, char *buf,
                    size_t n);

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

/// Append a cut joint (after the bodies, before mbs_modelFinalize): validates the type, the
/// bodies and the frames. MBS_ERR_INPUT with a message naming the field (the caller adds where).
mbsErr mbs_modelAddLoop(mbsModel *m, const mbsLoopSpec *spec);
/// Append a spring-damper (after the bodies, before mbs_modelFinalize). MBS_ERR_INPUT as above.
mbsErr mbs_modelAddForce(mbsModel *m, const mbsForceSpec *spec);

/// Finish the model: derived arrays (children, dof tree, spatial inertias). Fails on an empty
/// model.
mbsErr mbs_modelFinalize(mbsModel *m);

/// Look up a body by name; returns -1 if absent. "ground" and "world" give -1 too via \p found=0.
int mbs_modelFindBody(const mbsModel *m, const char *name);

/// Make \p m (created, still empty) a subset build: mbs_modelAddBody then takes the parent as a
/// GLOBAL index, returns the global index in *id, validates every body, and stores only the
/// bodies whose global index is in \p gids (sorted ascending, \p n entries; the caller keeps
/// the array alive until mbs_modelFinalize). A stored body whose parent is not stored gets parent
/// -1 locally (a remote parent; its pose comes from the owner). \p n = 0 with \p names_only:
/// store no body but keep every name (a validation pass that detects duplicate names).
void mbs_modelSubset(mbsModel *m, const int *gids, int n, int names_only);
/// Subset builds: advance over \p count bodies of joint type \p type that are not wanted (no
/// validation, no storage; global addresses advance). \p chain: 1 if each of them is the child
/// of the body before it, the first the child of \p parent. \p mass: theirs (all equal; the
/// light-joint rule of mbs_partitionRunsLight). Returns the global index of the first.
int mbs_modelSkipBodies(mbsModel *m, int type, int count, int chain, int parent, double mass);
/// Local index of global body \p gid, or -1 if this model does not hold it. Local.
int mbs_modelLocal(const mbsModel *m, int gid);
/// Global index of a body by name (-1 if unknown): stored bodies, remembered names and the
/// generators' name ranges (mbs_modelAddPrefix). Local.
int mbs_modelFindGlobal(const mbsModel *m, const char *name);
/// Subset builds: the bodies base .. base + n - 1 are named prefix1 .. prefix<n>. Local.
mbsErr mbs_modelAddPrefix(mbsModel *m, const char *prefix, int base, int n);
/// Subset builds: as mbs_modelAddPrefix, with one more body (not of the prefix) after every
/// \p every-th (a ladder's left chain and its rungs: prefix<v> is base + v - 1 + (v - 1) / every).
/// Local.
mbsErr mbs_modelAddPrefixEvery(mbsModel *m, const char *prefix, int base, int n, int every);
/// Subset builds with loops: track every body's depth and nearest ancestor-or-self in the owned
/// global range [g0, g1) (2 ints per body of the whole model while building, freed by
/// mbs_modelFinalize), so that mbs_modelAddLoop (which then takes global body indices) can set
/// loop_depth and loop_anc. Without it subset builds add no loop. Local.
void mbs_modelTrackLoops(mbsModel *m, int g0, int g1);
/// Subset builds: record, while building, the remote parents of the bodies [g0, g1) and the
/// bodies outside it whose parent is inside (the structure pass of a local model). Local.
void mbs_modelRecord(mbsModel *m, int g0, int g1);
/// Subset builds: the first global index >= g that is wanted (kept, or recorded), INT_MAX if
/// none; full and validation builds: g. Local.
int mbs_modelNextWanted(const mbsModel *m, int g);
/// Subset builds: 1 if a body in [g0, g1) is wanted (kept or recorded) or a body whose parent is
/// \p parent could be (generators skip whole subtrees otherwise). Local.
int mbs_modelWants(const mbsModel *m, int g0, int g1, int parent);

/// 1 if some body has two or more children (a branched tree; the constraint-force matrix is then
/// not 2-cyclic), 0 for chains (and sets of chains).
int mbs_modelBranched(const mbsModel *m);

/// Total mass of all bodies.
mbsReal mbs_modelTotalMass(const mbsModel *m);

/// The decomposition of every global model: contiguous body ranges balanced by a per-joint cost
/// weight, every rank at least one body; the joint types in global order as runs (type, length).
/// \p chain: the bodies form one chain in order; every rank but the last then carries the spikes
/// of its lower port (docs/formulation.md 4.6) and gets MBS_PARTITION_SPIKE less weight
/// (MBSPAR_PARTITION_SPIKE in the environment overrides it, a measurement switch).
/// \p cut (ncut, ascending): clean cuts, bodies on the ground whose position no joint reaches
/// across (a forest's trees listed one after another); a rank boundary within
/// MBS_PARTITION_SNAP of a part's weight from one moves to it, so that no joint is cut there (no
/// spike, no cut-joint system; docs/model.md). NULL / 0: none.
/// A boundary at a body on a fixed joint moves down past it (at most MBS_PARTITION_FIXED_SKIP
/// bodies, keeping one body per rank): a rank root on a fixed joint keeps the body's own
/// compliance in its cut-joint system, which loses digits when the body is light
/// (docs/formulation.md 4.9); the next joint has fewer constraint components anyway.
/// The engine, the local model builder and cpa all call this. Writes start (nranks + 1). Local.
/// mbs_partitionRunsLight also keeps boundaries off light joints, the joints whose two bodies'
/// masses are MBS_PARTITION_LIGHT or more apart (\p light: nlight pairs child, parent, ascending
/// by child): a boundary that such a joint crosses (parent before it, child at or after it), or
/// at a body on a fixed joint, moves to the nearest place within MBS_PARTITION_FIXED_SKIP bodies
/// (down first, either side) that is neither, pushing later boundaries down if needed; with none
/// there, down past fixed joints as above. A light body on a moving joint whose heavy child is on
/// another rank ends its segment with a pivot D of its own inertia only (1e-16 and the like); as
/// the root of a rank its articulated inertia has such an eigenvalue. Both cost schur all its
/// digits (docs/formulation.md 4.9).
#define MBS_PARTITION_SPIKE      0.25
#define MBS_PARTITION_SNAP       0.1
#define MBS_PARTITION_FIXED_SKIP 8
#define MBS_PARTITION_LIGHT      1e3
mbsErr mbs_partitionRuns(const int *run_type, const int *run_len, int nrun, int chain,
                         const int *cut, int ncut, int nranks, int *start);
mbsErr mbs_partitionRunsLight(const int *run_type, const int *run_len, int nrun, int chain,
                              const int *cut, int ncut, const int *light, int nlight, int nranks,
                              int *start);
/// 1 if the joint from a parent of mass \p mp (\p pfixed: on a fixed joint itself) to a child of
/// mass \p mc (\p cfixed) is light: one mass MBS_PARTITION_LIGHT or more times the other, the
/// lighter body on a moving joint (a light body on a fixed joint is eliminated into its parent in
/// inertia form wherever the cut is: the fixed-joint rule covers it as a rank root).
/// A light joint's parent entry in the light lists of mbs_partitionRunsLight: the parent, or
/// -1 - parent when the child is the lighter body (a light root: a boundary there starts a rank
/// at the light body). mbs_partitionLightParentOf decodes it.
static inline int mbs_partitionLightParent(int parent, double mchild, double mparent) {
  return mchild < mparent ? -1 - parent : parent;
}
static inline int mbs_partitionLightParentOf(int entry) {
  return entry < 0 ? -1 - entry : entry;
}
static inline int mbs_partitionIsLight(double mp, int pfixed, double mc, int cfixed) {
  return (mc >= MBS_PARTITION_LIGHT * mp && !pfixed) || (mp >= MBS_PARTITION_LIGHT * mc && !cfixed);
}
/// A test-only switch (docs/formulation.md 4.9, "A rank that must start at a light body"): 1 when
/// MBSPAR_TEST_LIGHT_ROOTS=1 is in the environment. The partition (full models and the structure
/// pass) and the thread segmentation then count only the light joints whose parent is the lighter
/// body, so their boundaries may start a rank or a thread segment at a light body (a light root).
int mbs_partitionTestLightRoots(void);
/// Structure pass (subset builds): note \p count bodies of mass \p mass on joints of type
/// \p type from global index \p first (the first one's parent \p parent, the others each the
/// child of one of the run or of \p parent) and record the first's joint if it is light
/// (run_light). Local.
void mbs_partitionNoteMass(mbsModel *m, int first, int count, int parent, double mass, int type);
/// The clean cuts of a full model (see mbs_partitionRuns) into cut (nbody), their count. Local.
int mbs_partitionCuts(const mbsModel *m, int *cut);
/// The clean-cut rule, shared with the structure pass (model.c): a body on the ground is a
/// candidate; a joint from parent p >= 0 to a later body removes every candidate after p. Returns
/// the count of the ascending list cut[0 .. nc) that stays.
static inline int mbs_partitionCutDrop(const int *cut, int nc, int parent) {
  while (nc > 0 && cut[nc - 1] > parent) nc--;
  return nc;
}
/// The same for a full model. Local.
mbsErr mbs_partitionModel(const mbsModel *m, int nranks, int *start);
/// The first body b of [start[0], start[n]) whose joint is light and crosses a boundary start[k]
/// (0 < k < n: its parent p >= start[0] in an earlier piece), or -1; \p parent gets p. Such a
/// boundary had no clean place within MBS_PARTITION_FIXED_SKIP bodies: schur loses its accuracy
/// there (docs/formulation.md 4.9). The bodies and parents of the range must be held. Local.
int mbs_partitionLightCut(const mbsModel *m, const int *start, int n, int *parent);
/// Cost weight of one joint of \p type in the decomposition.
double mbs_partitionWeight(int type);

/// Free the model and set *m to NULL (NULL is a no-op).
void mbs_modelDestroy(mbsModel **m);

#endif
