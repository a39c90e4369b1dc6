/// \file mbs_flex.h
/// Flexible (modal) bodies, part 1: the modal source (../shared/design.md section 9, issue 34;
/// docs/flexible.md). A built-in Euler–Bernoulli finite-element beam along the body's x axis
/// (axial, torsion, bending in the x-y and x-z planes), clamped to the body frame at x = 0 (the
/// body frame is the floating frame of reference), reduced by Craig–Bampton with its attachment
/// nodes as the interface: six static constraint modes per node besides the root, and the `modes`
/// lowest fixed-interface normal modes. The result is the body's modal data: the reduced mass and
/// stiffness matrices, and the shapes (translation and rotation) at every FE node, from which the
/// dynamics (part 2) forms its inertia shape invariants.
#ifndef MBS_FLEX_H
#define MBS_FLEX_H

#include <stddef.h>
#include <stdio.h>
#include "mbspar/mbs_error.h"
#include "mbspar/mbs_types.h"

/// Largest number of beam elements (dense reduction: O((6 elements)^3) once per body).
#define MBS_FLEX_MAX_ELEMENTS 400
/// Largest number of attachment nodes besides the root.
#define MBS_FLEX_MAX_NODES 16

/// A uniform beam along the body's x axis from x = 0 to length.
typedef struct {
  mbsReal length; ///< m
  mbsReal E;      ///< Young's modulus, Pa
  mbsReal G;      ///< shear modulus, Pa (torsion; 0: E / 2.6)
  mbsReal rho;    ///< density, kg/m^3
  mbsReal area;   ///< cross-section area, m^2
  mbsReal Iy, Iz; ///< second moments of area about y and z, m^4 (bending in x-z and x-y)
  mbsReal J;      ///< torsion constant, m^4 (0: Iy + Iz)
  int elements;   ///< finite elements
  int modes;      ///< fixed-interface normal modes kept (Craig–Bampton)
  int nnodes;     ///< attachment nodes besides the root (the interface)
  mbsReal node_x[MBS_FLEX_MAX_NODES]; ///< their positions along x (each at an FE node)
} mbsFlexBeamSpec;

/// The modal data of a reduced beam. Coordinates: first 6 per attachment node (the constraint
/// modes: unit displacement [u v w thx thy thz] of that node, the others held), then the normal
/// modes (mass-normalised on the fixed interface).
typedef struct {
  int m;        ///< modal coordinates: 6 nnodes + modes
  int nfe;      ///< FE nodes (elements + 1), node 0 the root at x = 0
  mbsReal *M;   ///< (m x m) reduced mass matrix (symmetric positive definite)
  mbsReal *K;   ///< (m x m) reduced stiffness matrix (symmetric positive semidefinite)
  mbsReal *Phi; ///< (6 nfe x m) shapes: row 6 i + k is dof k of FE node i, [u v w thx thy thz]
  mbsReal *x;   ///< (nfe) FE node positions along x
  mbsReal *omega_fixed; ///< (modes) fixed-interface natural frequencies, rad/s, ascending
  mbsReal *Sbar; ///< (3 x m) inertia shape invariant: integral of rho times the translation of each
                 ///< mode (row k: direction k), so a uniform acceleration a loads the modes with
                 ///< Sbar^T a
  mbsReal mass;  ///< rho A length
  int nbound;    ///< constraint modes (the first nbound coordinates; undamped): 6 nnodes for a beam
  int nmodes; ///< fixed-interface normal modes (coordinates nbound.., omega_fixed each): m - nbound
  mbsReal *rhoA; ///< (nfe - 1) mass per length of each element, kg/m (a beam: rho A)
  mbsReal
      *rhoJ; ///< (nfe - 1) polar rotary inertia per length of each element, kg m (rho (Iy + Iz))
  /// The lumped form of a modal file (docs/flexible.md 14; NULL: the line form above, rhoA and
  /// rhoJ set): the nfe "FE nodes" are points anywhere in the body frame, x their x coordinates.
  mbsReal *pos;   ///< (nfe x 3) the points' positions in the body frame, m
  mbsReal *pmass; ///< (nfe) their masses, kg (>= 0)
  mbsReal *pJ;    ///< (nfe x 6) their rotary inertias [Jxx Jyy Jzz Jxy Jxz Jyz] (the tensor's
                  ///< entries, kg m^2; NULL: none)
} mbsFlexModal;

/// Defaults: no geometry (length 0), modes 4, elements 10, nnodes 0.
void mbs_flexBeamDefault(mbsFlexBeamSpec *s);
/// Reduce the beam. Refuses (MBS_ERR_INPUT, with the cause) a non-positive or non-finite
/// property, elements outside [1, MBS_FLEX_MAX_ELEMENTS], a node off the FE mesh or at the root,
/// two nodes at one place, and more modes than the interior of the mesh has.
mbsErr mbs_flexBeamReduce(const mbsFlexBeamSpec *s, mbsFlexModal *out);
/// Free the arrays (NULL fields are fine) and zero the struct.
void mbs_flexModalFree(mbsFlexModal *f);
/// Natural frequencies of the reduced body (K w = omega^2 M w, clamped root): the \p k lowest,
/// ascending, in rad/s. 0 on success; -1 if M is not positive definite, -2 out of memory.
int mbs_flexModalFrequencies(const mbsFlexModal *f, int k, mbsReal *omega);
/// Symmetric-definite generalized eigenproblem A v = lambda B v (n x n, row-major; A and B are
/// overwritten): all eigenvalues ascending in lam, eigenvectors as columns of V (n x n, B-normal)
/// if V is not NULL. Cholesky of B and cyclic Jacobi rotations: O(n^3) per sweep, for the small
/// reduced matrices and as the tests' independent reference (the beam's reduction takes its
/// lowest modes from LAPACK dsbgvx on the banded FE matrices). 0 on success, -1 if B is not
/// positive definite, -2 out of memory.
int mbs_symGenEig(int n, mbsReal *A, mbsReal *B, mbsReal *lam, mbsReal *V);

/// Longest node name (with its terminating NUL).
#define MBS_FLEX_NAME 64

/// A flexible body of a model (part 2a: the input; docs/flexible.md): the beam it was built
/// from, its reduced modal data, its modal damping ratio and its named attachment nodes. The
/// model (immutable after build) owns it through mbsModel.flex.
typedef struct {
  int body;                 ///< the model's (local) body index as added (-1: not in this build)
  char name[MBS_FLEX_NAME]; ///< the body's name
  int line;                 ///< line of its flexible group in the config (messages)
  mbsFlexBeamSpec spec;     ///< the beam and its reduction settings, as given
  mbsFlexModal modal;       ///< the reduced data (mbs_flexBeamReduce)
  mbsReal damping;          ///< modal damping ratio (of the fixed-interface modes), >= 0
  int stiffening; ///< 1: the axial shortening of the transverse modes in the kinematics (geometric
                  ///< stiffening, docs/flexible.md 5.3; flexible.stiffening, default true)
  int nnodes;     ///< named nodes (= spec.nnodes), node k at spec.node_x[k] on the x axis
  char node_name[MBS_FLEX_MAX_NODES][MBS_FLEX_NAME];
  mbsReal node_yz[MBS_FLEX_MAX_NODES][2]; ///< node k's y and z (0 on a beam; a lumped file's
                                          ///< nodes are points anywhere: [node_x, y, z])
  char *file; ///< the modal file it was read from (NULL: the built-in beam; owned)
  mbsReal rigid_mass, rigid_com[3], rigid_inertia[6]; ///< the undeformed body as a rigid one
                                                      ///< (the model's body; about the com)
} mbsFlexBody;

/// Modal files (docs/flexible.md 14): version of the format this build reads and writes.
#define MBS_FLEX_FILE_VERSION 1
/// The lumped form (points anywhere in the body with masses, rotary inertias and shapes).
#define MBS_FLEX_FILE_VERSION_LUMPED 2
/// A modal file's contents as read (the parallel layer's HDF5 reader fills it; src/ has no HDF5).
typedef struct {
  mbsFlexModal modal;               ///< M, K, Phi, x, omega_fixed, Sbar, mass, rhoA, rhoJ
  mbsReal mass, com[3], inertia[6]; ///< /rigid: the undeformed body as a rigid one
  int nnodes;                       ///< named nodes in the file
  char node_name[MBS_FLEX_MAX_NODES][MBS_FLEX_NAME];
  int node_fe[MBS_FLEX_MAX_NODES]; ///< their FE nodes (1 .. nfe - 1; lumped form: points 0 ..)
} mbsFlexFileData;
/// Reads \p path into \p d (zeroed first); MBS_ERR_INPUT with "PATH: /DATASET: problem" set by
/// mbs_errSet. Registered by the parallel layer (mbsp_init); NULL until then.
typedef mbsErr (*mbsFlexFileReader)(const char *path, mbsFlexFileData *d);
void mbs_flexFileSetReader(mbsFlexFileReader r);
mbsFlexFileReader mbs_flexFileGetReader(void);
/// The value checks of a read file (src/flex_file.c): finite entries, the mesh (the line form) or
/// the points' masses and rotary inertias (the lumped form), M symmetric positive definite, K
/// symmetric positive semidefinite, the root at rest (line form), M, Sbar, mass and the rigid
/// properties consistent with the elements' or points' mass (the dynamics integrate that), the
/// nodes.
/// MBS_ERR_INPUT "PATH: /DATASET: problem".
mbsErr mbs_flexFileCheck(const char *path, const mbsFlexFileData *d);
/// Free the arrays of \p d.
void mbs_flexFileFree(mbsFlexFileData *d);

/// The flexible bodies of a model and the children that hang from their nodes.
typedef struct mbsFlexSet {
  mbsFlexBody *b; ///< (n) in the order of their bodies
  int n, cap;
  int *att_child; ///< (natt) a child body attached to a node of its (flexible) parent
  int *att_node;  ///< (natt) that node's index in its parent's mbsFlexBody
  int natt, attcap;
  int *loop_node; ///< (2 nloop_node) per closed loop and side, the node of a flexible body the cut
                  ///< joint's frame is on (-1: the body frame; docs/flexible.md 15)
  int nloop_node; ///< loops recorded (later loops: -1 on both sides)
} mbsFlexSet;

/// Append flexible body \p fb (its modal data moves into the set: \p fb is zeroed) to *set
/// (created when NULL).
mbsErr mbs_flexSetAdd(mbsFlexSet **set, mbsFlexBody *fb);
/// Record that body \p child hangs from node \p node of its parent's flexible body.
mbsErr mbs_flexSetAttach(mbsFlexSet *set, int child, int node);
/// The flexible body of model body \p body, or NULL.
const mbsFlexBody *mbs_flexSetFind(const mbsFlexSet *set, int body);
/// The flexible body named \p name, or NULL.
const mbsFlexBody *mbs_flexSetFindName(const mbsFlexSet *set, const char *name);
/// Record that side \p side (0, 1) of closed loop \p loop sits on node \p node of its flexible
/// body.
mbsErr mbs_flexSetLoopNode(mbsFlexSet *set, int loop, int side, int node);
/// The node side \p side of loop \p loop sits on (-1: the body frame, or no flexible body).
int mbs_flexSetLoopNodeOf(const mbsFlexSet *set, int loop, int side);
/// The node of \p set a child body hangs from (-1: none, or the body's joint frame).
int mbs_flexSetAttachedNode(const mbsFlexSet *set, int child);
/// Free the set and everything in it (NULL is fine).
void mbs_flexSetFree(mbsFlexSet *set);
/// The rigid body the undeformed beam is (its finite-element mass matrix's rigid-body part):
/// mass rho A L, com (L/2, 0, 0), inertia about the com [Ixx Iyy Izz Ixy Ixz Iyz] with
/// Ixx = rho L (Iy + Iz) and Iyy = Izz = rho A L^3 / 12 (the elements carry the cross-section's
/// rotary inertia in torsion only).
/// The check verb's lines for every flexible body: its modal coordinates, fixed-interface
/// frequencies (Hz) and nodes.
void mbs_flexReport(FILE *f, const mbsFlexSet *set);
struct mbsJson;
/// The same as JSON: "flexible": [{body, modal_coordinates, constraint_modes,
/// fixed_interface_modes, omega_fixed (rad/s), nodes: [{name, x}]}] (nothing without any).
void mbs_flexJson(struct mbsJson *j, const mbsFlexSet *set);
void mbs_flexRigidEquivalent(const mbsFlexBeamSpec *s, mbsReal *mass, mbsReal com[3],
                             mbsReal inertia[6]);

/// The serial oracle of a tree of rigid and flexible bodies (src/flex_oracle.c, docs/flexible.md
/// 5). Generalized velocities y = [v (nv); etad (each flexible body's m, in mbsModel.flex
/// order)]; positions q (nq) and eta. Children on a node hang from the node frame (docs/flexible.md
/// 5.5). Not yet: subset builds (MBS_ERR_UNSUPPORTED).
struct mbsModel;
typedef struct mbsFlexOracle mbsFlexOracle;
mbsErr mbs_flexOracleCreate(const struct mbsModel *m, mbsFlexOracle **o);
void mbs_flexOracleDestroy(mbsFlexOracle **o);
/// N = nv + the modal coordinates of every flexible body.
int mbs_flexOracleSize(const mbsFlexOracle *o);
/// The column of flexible body k's first modal coordinate in y.
int mbs_flexOracleCol(const mbsFlexOracle *o, int k);
/// The system M(q, eta) ydd = f(q, y, eta): *M (N x N, row-major) and *f (N) point into the
/// oracle (valid until its next call). f = applied joint forces - K eta - D etad - the
/// velocity-product and gravity terms. M = NULL: f alone (M is not formed: O(N) a mass point
/// instead of O(N^2); the static solve and the finite differences of modes use that).
mbsErr mbs_flexOracleSystem(mbsFlexOracle *o, const mbsReal *q, const mbsReal *y,
                            const mbsReal *eta, mbsReal **M, mbsReal **f);
/// ydd (N) by Cholesky of M (MBS_ERR_NUMERIC if not positive definite).
mbsErr mbs_flexOracleAccel(mbsFlexOracle *o, const mbsReal *q, const mbsReal *y, const mbsReal *eta,
                           mbsReal *ydd);
/// The closed loops' state of the oracle's last mbs_flexOracleAccel on a model with loops
/// (docs/flexible.md 15): pointers into the oracle, valid until its next call.
typedef struct {
  int n;                   ///< closure equations (nlam_loop)
  const mbsReal *lam;      ///< (n) their multipliers (minimum norm when redundant)
  const mbsReal *c, *cdot; ///< (n) closure error and its rate
  const mbsReal *G;        ///< (n x N) the closure Jacobian in y = [v; etad]
  int rank;                ///< rank of G M^-1 G^T (Jacobi-scaled pivoted Cholesky)
  mbsReal min_pivot;       ///< smallest accepted pivot
  mbsReal resid;           ///< max |G ydd - kappa' + D^T abar| after the solve
} mbsFlexLoopInfo;
mbsErr mbs_flexOracleLoopInfo(const mbsFlexOracle *o, mbsFlexLoopInfo *info);
/// The closure rank of a model with loops through flexible bodies at q0, qd0 with eta = 0 (the
/// oracle's G M^-1 G^T, as mbs_flexOracleLoopInfo): rank, equations and the smallest accepted
/// pivot; all zero without such loops. For `check` and the route of the methods that need
/// independent closure rows (jacobi, chebyshev; docs/flexible.md 15).
mbsErr mbs_flexLoopRankQ0(const struct mbsModel *m, int *rank, int *neq, mbsReal *min_pivot);
/// What mbs_flexOracleLoopProject did.
typedef struct {
  int iterations;      ///< Newton steps on the positions
  mbsReal c_before;    ///< max |c| before (m, rad)
  mbsReal c_after;     ///< and after
  mbsReal cdot_before; ///< max |G y| before the rate projection
} mbsFlexLoopProj;
/// Put a state of a model with loops back on them (docs/flexible.md 15, docs/loops.md 5): the
/// positions (q, eta) by Newton-Raphson on c = 0 with the minimum-kinetic-energy correction
/// dy = -M^-1 G^T (G M^-1 G^T)^+ c (quaternions on the manifold, mbs_integratePos) until max |c|
/// <= tol or maxit steps, then the rates y -= M^-1 G^T (G M^-1 G^T)^+ G y (the M-orthogonal
/// projection: it never adds kinetic energy). maxit = 0: nothing changed, info->c_before measured.
mbsErr mbs_flexOracleLoopProject(mbsFlexOracle *o, mbsReal *q, mbsReal *eta, mbsReal *y,
                                 mbsReal tol, int maxit, mbsFlexLoopProj *info);
/// Kinetic energy y^T M y / 2 and potential energy: gravity, joint springs (and constant joint
/// forces), elastic eta^T K eta / 2.
mbsErr mbs_flexOracleEnergy(mbsFlexOracle *o, const mbsReal *q, const mbsReal *y,
                            const mbsReal *eta, mbsReal *kin, mbsReal *pot);
/// World position and rotation (3 x 3, row-major) of node \p j of flexible body \p k (mbsModel.flex
/// order) at (q, y, eta): the node frame of docs/flexible.md 5.5.
mbsErr mbs_flexOracleNodePose(mbsFlexOracle *o, const mbsReal *q, const mbsReal *y,
                              const mbsReal *eta, int k, int j, mbsReal *pos, mbsReal *R);
/// World rotation (nbody x 9, row-major) and frame origin (nbody x 3) of every body at
/// (q, y, eta): the floating frame of a flexible body, the body frame of a rigid one.
mbsErr mbs_flexOracleBodyPoses(mbsFlexOracle *o, const mbsReal *q, const mbsReal *y,
                               const mbsReal *eta, mbsReal *R, mbsReal *pos);
/// The deformed shape of flexible body \p fb with modal coordinates \p eta (its m) and its frame
/// at (\p Rw, \p pw): the world positions of its modal.nfe FE nodes (\p pts, nfe x 3; node 0 the
/// root), s_i = x_i e_x + Phi_t,i eta plus the axial shortening -eta^T G(x_i) eta / 2 when
/// stiffening is on (docs/flexible.md 5.3; the named nodes' positions are these points).
/// \p scratch: 2 m values. O(nfe m) (src/flex_shape.c).
void mbs_flexShape(const mbsFlexBody *fb, const mbsReal *eta, const mbsReal *Rw, const mbsReal *pw,
                   mbsReal *scratch, mbsReal *pts);
/// The FE node (index into modal.x) of named node \p node of \p fb.
int mbs_flexNodeFe(const mbsFlexBody *fb, int node);
/// The recursive O(n) algorithm of the same equations (src/flex_aba.c, docs/flexible.md 10): an
/// articulated-body algorithm whose flexible bodies carry (6 + m) x (6 + m) articulated
/// quantities, their modal coordinates condensed into the 6 x 6 inertia their parent sees. Same
/// y layout and the same terms as the oracle (geometric stiffening included); O(bodies (6 + m)^3)
/// per evaluation and O(bodies (6 + m)^2) memory. Not yet: subset builds (MBS_ERR_UNSUPPORTED).
typedef struct mbsFlexAba mbsFlexAba;
mbsErr mbs_flexAbaCreate(const struct mbsModel *m, mbsFlexAba **a);
void mbs_flexAbaDestroy(mbsFlexAba **a);
/// N = nv + the modal coordinates (as mbs_flexOracleSize).
int mbs_flexAbaSize(const mbsFlexAba *a);
/// ydd (N) at (q, y, eta), as mbs_flexOracleAccel (MBS_ERR_NUMERIC if an articulated inertia is
/// not positive definite).
mbsErr mbs_flexAbaAccel(mbsFlexAba *a, const mbsReal *q, const mbsReal *y, const mbsReal *eta,
                        mbsReal *ydd);
/// The energies of mbs_flexOracleEnergy in O(bodies): the kinetic energy as the sum of the
/// bodies' z^T M_body z / 2.
mbsErr mbs_flexAbaEnergy(mbsFlexAba *a, const mbsReal *q, const mbsReal *y, const mbsReal *eta,
                         mbsReal *kin, mbsReal *pot);
/// As mbs_flexOracleBodyPoses.
mbsErr mbs_flexAbaBodyPoses(mbsFlexAba *a, const mbsReal *q, const mbsReal *y, const mbsReal *eta,
                            mbsReal *R, mbsReal *pos);
/// As mbs_flexOracleNodePose.
mbsErr mbs_flexAbaNodePose(mbsFlexAba *a, const mbsReal *q, const mbsReal *y, const mbsReal *eta,
                           int k, int j, mbsReal *pos, mbsReal *R);
/// Driven joints in the recursive algorithm and its parts (hybrid dynamics; src/flex_hybrid.c,
/// docs/flexible.md 9): the joints of the \p k dofs \p dof (velocity indices; every dof of such a
/// joint must be listed, else MBS_ERR_UNSUPPORTED) follow the accelerations the caller writes
/// into mbs_flexAbaDriveAcc (nv, by dof) before each evaluation; they leave the bodies' free
/// directions (only their modal coordinates are condensed), the prescribed acceleration joins
/// the joint's bias, and the evaluation writes each driven dof's acceleration into ydd and its
/// driving force (the joint force beyond the applied, spring and damper forces) into
/// mbs_flexAbaDriveForce (nv, by dof; a part writes those of its own bodies). k = 0: undriven.
mbsErr mbs_flexAbaDrive(mbsFlexAba *a, const int *dof, int k);
mbsReal *mbs_flexAbaDriveAcc(mbsFlexAba *a);
const mbsReal *mbs_flexAbaDriveForce(const mbsFlexAba *a);
/// The recursive algorithm split over contiguous body ranges, "parts" (src/flex_part.c,
/// docs/flexible.md 11): part \p part of \p nparts eliminates its bodies as a forest; each cut
/// joint (child and parent on two parts) has 12 interface unknowns (the parent frame's
/// acceleration, the transmitted force). mbs_flexPartLocal gives this part's rows of the
/// interface system (nif^2 matrix, row-major, then nif right side; the parts' rows are disjoint,
/// so the system is their sum), mbs_flexPartFinish solves the summed system (LU, partial
/// pivoting) and writes this part's entries of ydd. Every part holds the whole model. No MPI.
typedef struct mbsFlexPart mbsFlexPart;
mbsErr mbs_flexPartCreate(const struct mbsModel *m, int nparts, int part, mbsFlexPart **p);
void mbs_flexPartDestroy(mbsFlexPart **p);
/// nif: 12 per cut joint.
int mbs_flexPartIfSize(const mbsFlexPart *p);
/// The whole model's recursive workspace the part uses (node poses).
mbsFlexAba *mbs_flexPartAba(mbsFlexPart *p);
/// Its range [b0, b1), the cut joints of the split and the unit-response columns so far.
void mbs_flexPartInfo(const mbsFlexPart *p, int *b0, int *b1, int *ncut, long *unit);
/// This part's contribution *buf (owned by p, n = nif^2 + nif doubles) at (q, y, eta); the
/// caller sums the parts' contributions into it before mbs_flexPartFinish.
mbsErr mbs_flexPartLocal(mbsFlexPart *p, const mbsReal *q, const mbsReal *y, const mbsReal *eta,
                         mbsReal **buf, int *n);
/// With the summed system in the buffer: this part's q'' and eta'' into ydd (N, its entries only).
mbsErr mbs_flexPartFinish(mbsFlexPart *p, const mbsReal *q, const mbsReal *y, mbsReal *ydd);
/// Part r's entries of ydd (its dofs, then its flexible bodies' modal accelerations, body by
/// body): their count, packed from ydd, unpacked into ydd.
int mbs_flexPartCount(const mbsFlexPart *p, int r);
void mbs_flexPartPack(const mbsFlexPart *p, int r, const mbsReal *ydd, mbsReal *buf);
void mbs_flexPartUnpack(const mbsFlexPart *p, int r, const mbsReal *buf, mbsReal *ydd);
/// Closed loops on the parts (src/flex_part_loops.c, docs/flexible.md 15.4), one evaluation:
/// mbs_flexPartLoopRows (every part alike: the closure rows at (q, y, eta); *Ab the buffer of
/// this part's share of A = G M^-1 G^T and G ydd0, its length returned, 0 without loops); tree
/// solve 0 (mbs_flexPartLoopUnit(p, -1), Local, sum, Finish into ydd) and
/// mbs_flexPartLoopDots(p, ydd); for each row j a unit solve where mbs_flexPartLoopUnit(p, j)
/// returns its scratch (NULL: a zero row, skipped) and mbs_flexPartLoopDots with it; the parts'
/// *Ab summed; mbs_flexPartLoopSolve writes this part's entries of ydd.
int mbs_flexPartLoopRows(mbsFlexPart *p, const mbsReal *q, const mbsReal *y, const mbsReal *eta,
                         mbsReal **Ab);
mbsReal *mbs_flexPartLoopUnit(mbsFlexPart *p, int j);
void mbs_flexPartLoopDots(mbsFlexPart *p, const mbsReal *ydd);
mbsErr mbs_flexPartLoopSolve(mbsFlexPart *p, mbsReal *ydd);
/// This part's bodies' kinetic and potential energies (as mbs_flexAbaEnergy; the parts' sum is
/// the whole model's).
mbsErr mbs_flexPartEnergy(mbsFlexPart *p, const mbsReal *q, const mbsReal *y, const mbsReal *eta,
                          mbsReal *kin, mbsReal *pot);
/// Cholesky solve of the symmetric positive definite A x = b (A overwritten, b becomes x); -1 if
/// A is not positive definite.
int mbs_flexCholSolve(int n, mbsReal *A, mbsReal *b);

#endif
