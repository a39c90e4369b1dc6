/// \file mbs_schur.h
/// The exact constraint-force solver by block elimination (solver.method = "schur"), serial core.
///
/// A segment is a contiguous range [s0, s1) of bodies (one MPI rank, or one thread of a rank).
/// Its joints are eliminated leaf-first by block Cholesky in "compliance form": each body carries
/// the articulated compliance Phi (6x6, the Schur complement of its subtree's joints onto its
/// wrench) and free acceleration beta, so the fill among siblings and parent never needs explicit
/// off-diagonal blocks (docs/formulation.md, "The exact solver"). Joints that cross the segment
/// boundary (cut joints) are kept as ports: the upper port of a component is its root's joint
/// when the parent is outside the segment, its lower ports are the joints of outside children.
/// Elimination leaves, per component, a small dense SPD-or-PSD system C pi = g on its ports whose
/// sum over all segments is the cut-joint (interface) system. Once the ports' lambda are known,
/// mbs_schurBack recovers every lambda, body acceleration, qdd and joint wrench of the segment.
///
/// No MPI here: the parallel layer (parallel/schur_par.c) merges the condensed systems.
#ifndef MBS_SCHUR_H
#define MBS_SCHUR_H

#include "mbs_dynamics.h"

/// One connected component of a segment's bodies and its condensed port system.
typedef struct {
  int root;   ///< root body (its parent is outside the segment or the ground)
  int up;     ///< 1: the root's joint is an upper port (remote parent, lamnum > 0)
  int spath;  ///< 1: a path root .. last with one lower port at last: the path runs in inertia
              ///< form with the port's force as spikes (docs/formulation.md 4.6); 2: a tree of
              ///< such paths to several lower ports (4.9; last = -1)
  int last;   ///< spath: the body at the end of the path (the port's parent)
  int nup;    ///< components of the upper port (0 or lamnum of the root)
  int p0, np; ///< lower ports [p0, p0 + np) of the segment's port list
  int c0, nc; ///< their columns [c0, c0 + nc) in the segment's port column space
  int n;      ///< system size nup + nc
  mbsReal *C; ///< (n x n) condensed matrix, order [upper port; lower ports]
  mbsReal *g; ///< (n) condensed right side
} mbsSchurComp;

typedef struct mbsSchur {
  int s0, s1; ///< segment body range
  int nbody;  ///< s1 - s0

  // components and ports (model constants, written by mbs_schurCreate)
  int ncomp;
  mbsSchurComp *comp; ///< (ncomp) in increasing root order
  int nport;          ///< lower ports (cut joints to children outside the segment)
  int *port_body;     ///< (nport) the outside child body (its joint is the port)
  int *port_cadr;     ///< (nport + 1) first column of each port
  int ncol;           ///< total lower-port columns
  int *body_c0;       ///< (nbody) first port column of the subtree of each body
  int *body_nc;       ///< (nbody) port columns of the subtree of each body
  int *body_comp;     ///< (nbody) component of each body

  // per-body data (allocated once; local index b - s0)
  /// inverse spatial inertias (model constants) of the compliance-form bodies without
  /// inertia-form children, the only ones that read them (36 each at minv_adr; -1: none; the
  /// other bodies' blocks would be touched for nothing: docs/scaling.md "Memory")
  mbsReal *Minv;
  int *minv_adr; ///< (nbody) offset of the body's block in Minv, -1: none
  mbsReal *tn;   ///< (nbody x 6) revolute joints: the two moment directions n1, n2 of T
  int *kind;     ///< (nbody) kernel of the joint: 1 revolute fast path, 0 generic
  int *rec_adr;  ///< (nbody) offset of the body's record in rec
  mbsReal *rec;  ///< per body: a0 (6), known joint wrench (6), y (l), packed L (l(l+1)/2),
                 ///< W = L^{-1} (Phi_parent G)^T (l x 6)
  mbsReal *Phi;  ///< (nbody x 36) articulated compliance (live until absorbed by the parent)
  mbsReal *beta; ///< (nbody x 6) free acceleration (live until absorbed)
  int *psi_adr, *th_adr, *gam_adr, *v_adr; ///< (nbody) offsets into Psi, Theta, gam, V
  mbsReal *Psi;   ///< 6 x body_nc per body: acceleration per unit port lambda
  mbsReal *Theta; ///< body_nc^2 per body: port-port block
  mbsReal *gam;   ///< body_nc per body: port right side
  mbsReal *V;     ///< lamnum x v_w per body: L^{-1} R
  int *v_w;       ///< (nbody) columns of V of each body
  int *v_c0;      ///< (nbody) first port column of V of each body
  int *cur;       ///< (nbody) port columns absorbed so far (during the elimination)
  // port-free subtrees (no lower port below them) run in inertia form: ABA's passes, which are
  // the same elimination (docs/formulation.md 4.2); the other bodies start from the articulated
  // compliance of the body with those subtrees, (I^A)^{-1}, instead of M
  unsigned char *mode;     ///< (nbody) 1: inertia form (port-free subtree, parent in the segment
                           ///< or the ground), 0: compliance form
  unsigned char *initp;    ///< (nbody) 1: the largest inertia-form child of its parent: starts the
                           ///< parent's ABA record before handing on to it
  int *phi0_adr;           ///< (nbody) offset of the body's starting compliance in Phi0, -1: Minv
  mbsReal *Phi0;           ///< (I^A)^{-1} of compliance-form bodies with inertia-form children
  unsigned char *onpath;   ///< (nbody) 1: an inertia-form body of a spath path (the root too when
                           ///< grounded)
  unsigned char *selfinit; ///< (nbody) 1: an inertia-form body without inertia-form children in
                           ///< the segment starts its own ABA record
  mbsReal *spk;            ///< (nbody x 6) spath bodies: the spike P pi of the back-substitution
  mbsReal *spP;            ///< (ncomp x 36) spath components: the spike P (6 x nl) while factoring
  int *tp_adr;             ///< (ncomp) trees of paths: offset of the component's P, Theta, gam
  mbsReal *tpool;          ///< ... their storage
  mbsReal *tpwork;         ///< (ntpwork) scratch of mbs_abaSpikeCols
  int ntpwork;
  mbsReal *cpool; ///< condensed systems of the components
  mbsReal *light; ///< (nport x MBS_SCHUR_LW) or NULL: light-leaf cut joints
                  ///< (src/schur/schur_light.c): state (0 none, 1 cut, 2 leaf term left out by the
                  ///< factor), 1/D, phi, sqrt(Ds), t; set by the parallel layer
  mbsReal *lroot; ///< (ncomp x MBS_SCHUR_LRW) or NULL: light roots (src/schur/schur_lightroot.c):
                  ///< state (0 none, 1 marked by the parallel layer, 2 soft part left out by the
                  ///< factor), sigma, phi, sqrt(sigma), t, m (6), v = T_u^T m (nup <= 6 at 11),
                  ///< q = Y K^{-1} b (6 at 17; m = z - q), the lower ports' part of the soft
                  ///< direction -P_r^T m = P_r^T q (nc <= 6 at 23)
  // the overlapped factor (src/schur/schur_pre.c, docs/formulation.md 4.4): the inertia part of
  // pass 2 (and of the spikes) of the bodies s1 - 1 down to s1 - pre_n, run while the kinematics
  // prefix's messages travel; pre (pre_cap x MBS_SCHUR_PREW, NULL: not enabled) keeps per body
  // what the bias part reads; pre_end: a body the split does not take was reached
  int pre_n, pre_cap, pre_end;
  mbsReal *pre;
} mbsSchur;

/// Values per component in mbsSchur.lroot.
#define MBS_SCHUR_LRW 32

/// Values per port in mbsSchur.light; most cut-joint unknowns below one light leaf.
#define MBS_SCHUR_LW       6
#define MBS_SCHUR_LIGHTMAX 24
/// 1 if body \p b (its parent in the rank, whose bodies end before \p b1) is a light leaf: a light
/// body (mbs_partitionIsLight, lighter than each child) on a one-dof joint (revolute about any
/// axis, prismatic) whose children all lie on other ranks (at most MBS_SCHUR_LIGHTMAX
/// cut-joint unknowns; docs/formulation.md 4.9). Local.
int mbs_schurLightLeaf(const mbsModel *m, int b, int b1);
/// mbs_partitionLightCut (the first body after a boundary of \p start[0..n] whose joint to a
/// parent before it is light, *parent that parent; -1 if none) without the light joints that the
/// light-leaf change of variables makes exact when \p exact: a light parent that is a light leaf
/// of its range (mbs_schurLightLeaf, its own parent in the range). What remains: light roots (a
/// range starting at a light body), light leaves on other joints or with their parent on another
/// range (docs/formulation.md 4.9). \p exact = 0: mbs_partitionLightCut itself; 2: light roots
/// skipped too (the caller knows that every rank takes its light roots, mbsp_schurLightWarn).
/// Local.
int mbs_schurLightCut(const mbsModel *m, const int *start, int n, int exact, int *parent);
/// The change of variables of the light leaf \p b's children's cut joints (*ncol unknowns, child
/// order): R (ncol x ncol, row-major), lambda = R (y; t); returns sqrt(Ds) (0: R = identity, v or
/// Ds vanish). Needs w->xpar of b's children. Local.
mbsReal mbs_schurLightBasis(const mbsModel *m, const mbsWork *w, int b, mbsReal *R, int *ncol);
/// C <- R^T C R, g <- R^T g on the unknowns [o, o + nl) of an n x n system. Local.
void mbs_schurLightApply(int n, int o, int nl, const mbsReal *R, mbsReal *C, mbsReal *g);
/// x <- R x (nl values). Local.
void mbs_schurLightVec(int nl, const mbsReal *R, mbsReal *x);
/// 1 if body \p b is a light root of segment \p s (src/schur/schur_lightroot.c): a root whose
/// parent lies before the segment and whose one child, in the segment in inertia form on a
/// one-dof joint, is MBS_PARTITION_LIGHT times heavier (a rigid body). Local.
int mbs_schurLightRoot(const mbsModel *m, const mbsSchur *s, int b);
/// R = Q diag(1, .., 1, -sqrt(Ds)/|v|) (n x n, row-major; Q a Householder reflector whose last
/// column is v/|v| up to sign): v^T R (y; t) = -sd t. 0 (and R = 1) if |v| or sd is not positive.
int mbs_schurLightR(const mbsReal *v, int n, mbsReal sd, mbsReal *R);

/// Set up a segment [s0, s1) of model \p m: components, ports, workspace. Local.
mbsErr mbs_schurCreate(const mbsModel *m, int s0, int s1, mbsSchur **s);
/// Free and NULL (NULL is a no-op).
void mbs_schurDestroy(mbsSchur **s);

/// Eliminate the segment's joints. Needs the position and velocity stages of the segment's bodies
/// and of the outside children at its lower ports (w->xpar, w->sdof, w->qfrc of those bodies), the
/// parent's transform of every root, and the velocity-product terms. Writes the components'
/// condensed systems (comp[k].C, comp[k].g). Returns MBS_ERR_NUMERIC if a pivot block is not
/// positive definite. Writes the ABA records (w->abar, U, u, Dinv) of the inertia-form bodies.
/// Local.
mbsErr mbs_schurFactor(const mbsModel *m, mbsWork *w, mbsSchur *s);

/// Back-substitute: given the lambda of every port (\p lam_up: per component its upper port's
/// nup values, concatenated in component order; \p lam_low: ncol values in port column order),
/// writes w->lam, w->acc, w->jfrc of the segment's bodies and w->qdd of every body whose parent
/// acceleration is available: bodies with a parent inside the segment or the ground. For the
/// roots with an upper port, call mbs_schurRootQdd once the parent's acceleration is known.
/// \p first (NULL: every body): a body b with first[b] > \p lim is left out with its subtree
/// (first grows from parent to child; its records keep stale values), as the loop layer's
/// columns need (mbs_loopColumnOrder, docs/loops.md 9). Local.
void mbs_schurBack(const mbsModel *m, mbsWork *w, mbsSchur *s, const mbsReal *lam_up,
                   const mbsReal *lam_low, const int *first, int lim);
/// qdd of body b from its acceleration and its parent's (\p a_parent, 6). Local.
void mbs_schurQdd(const mbsModel *m, mbsWork *w, int b, const mbsReal *a_parent);

/// Serial driver over a partition of the whole model into \p nseg segments (start: nseg + 1
/// body indices): eliminates every segment, merges the condensed systems into the dense
/// cut-joint system, solves it, back-substitutes. The oracle of the parallel merge; also used
/// by tests. Needs the position and velocity stages of every body. Local.
mbsErr mbs_schurSolveSegments(const mbsModel *m, mbsWork *w, mbsSchur **seg, int nseg);

/// Threads an OpenMP parallel region of this process would use (1 without OpenMP). Local.
int mbs_maxThreads(void);

/// One segment-component of a rank (see mbsSchurRank).
typedef struct {
  int seg, comp; ///< segment and component index in it
  int root;      ///< root body
  int parent_sc; ///< segment-component holding the root's parent, -1: other rank or ground
  int view;      ///< index of the rank-level component (when parent_sc < 0), else -1
  int nup;       ///< upper port size (0: none)
  int nk, ne;    ///< kept ports (remote lower ports) and eliminated ports (internal lower ports)
  int *kport;    ///< (nkp) kept ports (child bodies), in order
  int nkp;
  int *eport; ///< (nep) eliminated ports
  int nep;
  mbsReal *W;   ///< (n x n) working system over [up; kept; eliminated], n = nup + nk + ne
  mbsReal *gw;  ///< (n)
  mbsReal *R;   ///< ((nup + nk)^2) reduced system, then (nup + nk) right side after it
  mbsReal *aug; ///< NULL, or a light root with internal lower ports (src/schur/schur_rank.c):
                ///< ((n + 1)^2 + (n + 1)) its system with the soft unknown mu after the upper
                ///< port, then ((nup + 1)^2 + nup + 1) its reduction
} mbsSchurSc;

/// A rank's bodies [b0, b1) cut into contiguous segments (one per OpenMP thread), each eliminated
/// by mbs_schurFactor, their cut joints inside the rank then eliminated by the same merge, which
/// leaves the rank-level components (view) on the joints to other ranks only.
typedef struct {
  int b0, b1, nseg;
  mbsSchur **seg; ///< (nseg)
  int nsc;        ///< segment-components of all segments, in increasing root order
  mbsSchurSc *sc;
  mbsSchur view; ///< rank-level components and remote ports (comp, port_body, port_cadr,
                 ///< ncomp, nport, ncol only)
  mbsReal *pool; ///< storage of the working systems
  int *ipool;    ///< storage of the port lists
  mbsReal **lam_up, **lam_low; ///< (nseg) per-segment port values for mbs_schurBack
  int nfloor;                  ///< port-system pivots raised to the floor by the last factor
  int rhs_only; ///< mbs_schurRhsOnly (fixed by the decomposition: set by mbs_schurRankCreate)
  // mbs_schurRankFactorPath: per body (local index) the path stamp and the record-init stamp of
  // the current pass, the last pass's path (its u are zeroed before the next), and whether a
  // full factor has run since (then every u is)
  int *pmark, *pinit, *plist, nplist, pcur, pdirty;
} mbsSchurRank;

/// Extra weight of a thread segment with spikes against the spike-free last segment of a chain's
/// end (mbs_schurRankCreate).
#define MBS_SCHUR_THREAD_SPIKE 0.8
/// Most segments (OpenMP threads) of one rank.
#define MBS_SCHUR_MAXSEG 256
/// Cut [b0, b1) into \p nseg segments (fewer if the range is shorter) and plan their join.
/// Local.
mbsErr mbs_schurRankCreate(const mbsModel *m, int b0, int b1, int nseg, mbsSchurRank **r);
/// The bias passes of a homogeneous solve with external wrenches on \p load (nload bodies; others
/// of the model are ignored) alone: only the loaded bodies' root paths on this rank, where the
/// bias is nonzero, and u = 0 for every other body (docs/loops.md 8.1a). Needs w->reuse, w->homog
/// and mbs_schurRhsOnly; returns 0 (nothing done) otherwise, or when load is NULL. Flops: the
/// path's mbs_flopAbaRhs and 6 f_ext flops per path body. Local.
#define MBS_SCHUR_PATH_LOADS 8 ///< loads taken piece by piece (more: one sorted piece)
int mbs_schurRankFactorPath(const mbsModel *m, mbsWork *w, mbsSchurRank *r, const int *load,
                            int nload);
/// 1 if the rank's factor can be redone for a new right side alone (w->reuse): no ports
/// (every component on the ground, and with several segments every component's root a root of
/// the model), every body in inertia form; then mbs_schurRankFactor runs only ABA's bias passes
/// (mbs_abaBodyRhs), one segment per thread. Local.
int mbs_schurRhsOnly(const mbsSchurRank *r);
void mbs_schurRankDestroy(mbsSchurRank **r);
/// The overlapped factor (docs/formulation.md 4.4). mbs_schurPreEnable: room for the split pass
/// of at most \p cap bodies per segment (allocates; once, at set-up). mbs_schurRankPre: with
/// \p n > 0, the inertia part of pass 2 (articulated inertias, 1/D, the spikes' P and Theta:
/// positions alone) of up to n more bodies of the rank's one segment, from its last body down,
/// for axis-specialised revolute joints in inertia form below the component's root (it stops at
/// the first other body, at cap, or where a pivot would fail: mbs_schurRankFactor then redoes that
/// body whole and reports it); the number done. \p n < 0: forget what was done (the next factor
/// runs whole). mbs_schurRankFactor runs the bias parts of the bodies done, then the rest as
/// before: results bitwise equal, the same flops. Needs the joints (w->xpar, sdof) of the segment
/// and of its lower ports' bodies; one segment per rank (else nothing is done). Local.
#define MBS_SCHUR_PREW       (MBS_ABA_STASH + 6 * MBS_SPIKE_LD)
#define MBS_SCHUR_PRE_CAP    512 ///< bodies per segment the parallel layer makes room for
#define MBS_SCHUR_PRE_BODIES 48  ///< bodies per slice by default (MBSPAR_OVERLAP_BODIES)
mbsErr mbs_schurPreEnable(mbsSchurRank *r, int cap);
int mbs_schurRankPre(const mbsModel *m, mbsWork *w, mbsSchurRank *r, int n);
/// The bodies of segment \p s the split takes when asked for \p n (critical-path graphs). Local.
int mbs_schurPreCount(const mbsModel *m, const mbsSchur *s, int n);
/// Eliminate every segment (OpenMP threads, one segment each) and join them: writes the
/// rank-level systems r->view.comp[k].C, g. Local.
mbsErr mbs_schurRankFactor(const mbsModel *m, mbsWork *w, mbsSchurRank *r);
/// Back-substitute every segment (threads) given the rank-level ports' lambdas (in the view's
/// order: per component its upper port, and its lower ports in view column order). Writes
/// w->lam, acc, jfrc and qdd like mbs_schurBack (roots with a parent on another rank: later,
/// mbs_schurQdd); \p first, \p lim as in mbs_schurBack. Local.
void mbs_schurRankBack(const mbsModel *m, mbsWork *w, mbsSchurRank *r, const mbsReal *lam_up,
                       const mbsReal *lam_low, const int *first, int lim);

/// Dense reduction of a symmetric system [C_kk C_ke; C_ek C_ee] (x_k; x_e) = (g_k; g_e) of
/// nk kept and ne eliminated unknowns (row-major, leading dimension nk + ne, the kept first):
/// overwrites C_ee by its Cholesky factor L, C_ek by Z = L^{-1} C_ek, g_e by z = L^{-1} g_e, and
/// writes the reduced system S = C_kk - Z^T Z (nk x nk, into \p S) and s = g_k - Z^T z. Pivots
/// at or below MBS_SCHUR_PIVOT_FLOOR times the largest diagonal entry of C_ee (rounding of a
/// semidefinite port system) are raised to it and counted in *nfloor (if not NULL). Returns 0 if
/// C_ee is not finite or zero. Local.
#define MBS_SCHUR_PIVOT_FLOOR 1e-13
int mbs_schurReduce(int nk, int ne, mbsReal *C, mbsReal *g, mbsReal *S, mbsReal *sg, int *nfloor);
/// mbs_schurReduce with the pivot floor per block of the eliminated unknowns (\p blk: ne block
/// labels, equal within a block, blocks contiguous): 1e-13 times the block's largest diagonal
/// (the schur passes on models with light leaves, docs/formulation.md 4.9). Local.
int mbs_schurReduceBlk(int nk, int ne, mbsReal *C, mbsReal *g, mbsReal *S, mbsReal *sg, int *nfloor,
                       const int *blk);
/// After mbs_schurReduce: x_e = L^{-T} (z - Z x_k). Local.
void mbs_schurExpand(int nk, int ne, const mbsReal *C, const mbsReal *g, const mbsReal *xk,
                     mbsReal *xe);

/// A condensed system over two port sets, A (the upper side, na unknowns) and B (the lower side,
/// nb), each at most 6: the element of the radix-k scan of chain decompositions.
/// na < 0 marks the empty system (the identity of the merge).
#define MBS_SCHUR_PAIR_MAX 12
typedef struct {
  int na, nb;
  mbsReal C[MBS_SCHUR_PAIR_MAX * MBS_SCHUR_PAIR_MAX]; ///< (na + nb)^2, order [A; B]
  mbsReal g[MBS_SCHUR_PAIR_MAX];
} mbsSchurPair;
/// Size of a packed pair in doubles.
#define MBS_SCHUR_PAIR_DOUBLES (2 + MBS_SCHUR_PAIR_MAX * MBS_SCHUR_PAIR_MAX + MBS_SCHUR_PAIR_MAX)
/// out = the systems a (over A | S) and b (over S | B) joined on their shared ports S (a.nb ==
/// b.na) with S eliminated: a system over (A | B). Either may be empty. Returns 0 if the shared
/// block is not finite; floored pivots (mbs_schurReduce) are counted in *nfloor. Associative.
/// Local.
int mbs_schurPairMerge(const mbsSchurPair *a, const mbsSchurPair *b, mbsSchurPair *out,
                       int *nfloor);
void mbs_schurPairPack(const mbsSchurPair *p, double *buf);
void mbs_schurPairUnpack(const double *buf, mbsSchurPair *p);

/// Radix k of the two log-depth scans over the ranks of a chain, the kinematics prefix
/// (parallel/comm.c mbsp_exscan) and the cut-joint scan (parallel/schur_par_merge.c
/// mbsp_schurScan), and of their graphs in cpa (docs/formulation.md 3.3, 4.4): in round i (d =
/// k^i) every rank receives the windows of the ranks d, 2d, ..., (k - 1)d below it (and, in the
/// cut-joint scan, above it), ceil(log_k P) rounds; k = 2 is recursive doubling. The default was
/// chosen by the 64-host SMPI flops point (docs/scaling.md "Radix-k scans").
#define MBS_SCAN_RADIX     8
#define MBS_SCAN_RADIX_MAX 16
/// MBS_SCAN_RADIX, or MBSPAR_SCAN_RADIX from the environment when it is an integer in
/// [2, MBS_SCAN_RADIX_MAX] (a measurement switch: other values are ignored; mpirun gives every
/// rank the same environment). Read once at setup (mbsp_init, the cpa builder). Local.
int mbs_scanRadix(void);

#endif
