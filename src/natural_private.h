/// \file natural_private.h
/// Internal interface of the natural-coordinate formulation (docs/natural.md): the state of one
/// assembly (dense or per joint) and the builders of its rows, forces and the recovery of q̈,
/// shared by the dense reference (natural.c) and the O(n) tree solver (natural_tree.c).
#ifndef MBSPAR_NATURAL_PRIVATE_H
#define MBSPAR_NATURAL_PRIVATE_H

#include "mbspar/mbs_natural.h"

/// A joint row recorded at the assembled state (docs/natural.md 6): its kind, bodies, vectors
/// (point: a = parent point, b = child point; dot: a = parent vector, b = child vector; slide:
/// a = parent point, b = parent vector, c = child point) and its value there (dot, slide).
enum { MBS_NATROW_POINT, MBS_NATROW_DOT, MBS_NATROW_SLIDE };
typedef struct {
  int kind, pb, cb;
  double a[3], b[3], c[3];
  double c0;
} mbsNatRec;

/// One assembly. Dense mode (blk = 0): the rows go into A (tree) and L (loops), γ into b and gl.
/// Joint mode (blk = 1): the rows row0.. of one joint go into Jc (on body bc) and Jp (on bp),
/// k x 12 each, γ into gj.
typedef struct {
  int n;                ///< order of the dense tree system: np + nrt
  int np;               ///< natural coordinates
  int nrt;              ///< tree constraint rows (rigid bodies, tree joints); loop rows follow them
  int row;              ///< next constraint row (counted from 0)
  double *A;            ///< dense: n x n, row-major, [M Gᵀ; G 0] of the tree
  double *b;            ///< dense: n, [f; γ] of the tree
  double *L;            ///< dense: (nl x np) the loop rows' G, row-major
  double *gl;           ///< (nl) the loop rows' γ
  double *f;            ///< (np) generalised forces (dense: the first np entries of b)
  double *p;            ///< (np) natural coordinates of the current state
  double *pd;           ///< (np) their rates
  int blk;              ///< joint mode
  int bc, bp;           ///< joint mode: the child and parent body (-1: the ground)
  int row0;             ///< joint mode: the joint's first row
  double *Jc, *Jp, *gj; ///< joint mode: (6 x 12), (6 x 12), (6)
  mbsNatRec *rec;       ///< record mode (not NULL): the builders append here instead
  int nrec;             ///< records so far
} mbsNat;

void mbs_natBody(const mbsNat *s, int b, double o[3], double e[9], double od[3], double ed[9]);
void mbs_natVec(const double e[9], const double v[3], double x[3]);
void mbs_natLocal(const double e[9], const double x[3], double v[3]);
void mbs_natG(mbsNat *s, int r, int col, double v);
void mbs_natGamma(mbsNat *s, int r, double v);
void mbs_natPoint(mbsNat *s, int pb, const double rp[3], int cb, const double rc[3]);
void mbs_natDot(mbsNat *s, int pb, const double h[3], int cb, const double d[3]);
void mbs_natSlide(mbsNat *s, int pb, const double a[3], const double h[3], int cb,
                  const double c[3]);
void mbs_natWrench(mbsNat *s, int b, const double x[3], const double n[3], const double f[3]);
int mbs_natFactor(double *A, int *piv, int n);
void mbs_natSolve(const double *A, const int *piv, int n, double *x);
int mbs_natPivChol(double *S, int k, double tol, double *r, double *y);
/// The same with the permutation's scratch perm (k ints) given: no allocation (the step loop).
int mbs_natPivCholP(double *S, int k, double tol, double *r, double *y, int *perm);
void mbs_natJoint(const mbsModel *m, const mbsWork *w, mbsNat *s, int c);
void mbs_natLoop(const mbsModel *m, mbsNat *s, int k);

/// The cut joints' rows L (nl) added to the solved tree system (s->A factored with piv, s->b the
/// tree's solution) in the range space with constraint partitioning below rank_tol: Z (nl x n),
/// S (nl x nl), r, mu (nl) are scratch. Returns the rank of the closure rows, -1 without memory.
int mbs_natLoopSolve(mbsNat *s, int nl, double rank_tol, const int *piv, double *Z, double *S,
                     double *r, double *mu);
/// The recorded rows again, assembled at the current p, ṗ (dense or joint mode).
void mbs_natReplay(mbsNat *s, const mbsNatRec *rec, int n);
/// The position-level value of a recorded row at the current p (3 values for a point, else 1);
/// returns their number.
int mbs_natRecValue(const mbsNat *s, const mbsNatRec *r, double *g);

/// p and ṗ of every body from the position and velocity stages in w (docs/natural.md 1).
void mbs_natCoords(const mbsModel *m, const mbsWork *w, mbsNat *s);
/// The 4 x 4 K of body b's mass matrix K ⊗ I3 (2.1).
void mbs_natMassK(const mbsModel *m, int b, double K[16]);
/// The rigid-body rows of body b (2.3): G (6 x 12, on the e blocks) and γ (6).
void mbs_natRigid(const mbsNat *s, int b, double G[72], double g[6]);
/// s->f += gravity at each body's centre of mass (2.2).
void mbs_natGravity(const mbsModel *m, mbsNat *s);
/// Dense mode: the mass blocks, the rigid-body rows (rows 0 .. 6 nb - 1, s->row after them) and
/// gravity of every body at the current p, ṗ (s->A and s->b zero before).
void mbs_natDenseBodies(const mbsModel *m, mbsNat *s);
/// s->f += external wrenches (w->fext) and joint forces (w->qfrc) (2.2); gravity is
/// mbs_natGravity's. MBS_ERR_NUMERIC for a joint with a singular motion subspace.
mbsErr mbs_natForces(const mbsModel *m, const mbsWork *w, mbsNat *s);
/// s->f += the joint forces w->qfrc alone (the second half of mbs_natForces): at each joint the
/// wrench F = S y with SᵀS y = τ on the child at its origin, −F on the parent (2.2).
mbsErr mbs_natJointForces(const mbsModel *m, const mbsWork *w, mbsNat *s);
/// The per-body pieces of mbs_natCoords, mbs_natGravity, the external wrenches of mbs_natForces
/// and mbs_natJointForces (the joint of body b: on b and its parent), for an assembly restricted
/// to some bodies (natural_part.c).
void mbs_natCoordsBody(const mbsModel *m, const mbsWork *w, mbsNat *s, int b);
void mbs_natGravityBody(const mbsModel *m, mbsNat *s, int b);
void mbs_natFextBody(const mbsModel *m, const mbsWork *w, mbsNat *s, int b);
mbsErr mbs_natJointForceBody(const mbsModel *m, const mbsWork *w, mbsNat *s, int b);
/// q̈ from p̈ (4); writes w->acc (true accelerations) and returns the tree-motion residual.
double mbs_natQdd(const mbsModel *m, mbsWork *w, const mbsNat *s, const double *pdd, mbsReal *qdd);

#define NB 18 // unknowns per body of the O(n) solver: p̈ (12), rigid-body multipliers (6)

/// The O(n) solver's workspace (natural_tree.c; the distribution: natural_part.c)
struct mbsNaturalWork {
  int nb, nl;
  mbsNat s;    // joint-mode assembly state (p, ṗ, f; Jc, Jp, gj point into the arrays below)
  double *K;   // (nb x 16) mass matrices K (constant)
  double *Ich; // (nb x 36) Cholesky factor of Nᵀ M'_b N (the tangent-space inertia with the
               // children's joints absorbed)
  double *Jc;  // (nb x 6 x 12) the rows of each body's joint on the body
  double *Jp;  // (nb x 6 x 12) ... on the parent
  double *gj;  // (nb x 6) their γ
  double *rg;  // (nb x 6) the rigid-body rows' γ
  double *V;   // (nb x 6 x 6) (Nᵀ M' N)⁻¹ (J_c N)ᵀ, column i: 6 values (B⁻¹ E_cᵀ = N V)
  double *D;   // (nb x 36) Cholesky factors of D_j
  double *r;   // (nb x 18) right sides (modified by the elimination), then x
  double *z;   // (nb x 18) B⁻¹ r
  double *lam; // (nb x 6) joint multipliers
  double *pdd; // (12 nb) p̈
  double *Lr;  // (nl x 12 nb) the cut joints' rows
  double *Zl;  // (nl x 12 nb) their unit responses (p̈ part)
  double *S;   // (nl x nl)
  double *rl, *mu; // (nl)
  int *perm;       // (nl) the pivoted Cholesky's permutation
  double *tmp;     // (12 nb) scratch
  // the distribution over parts (src/natural_part.c, docs/natural.md 13): this part eliminates
  // the bodies [b0, b1) with the joints to parents outside the range removed (its roots float);
  // a whole-model solve is the one part [0, nb)
  int b0, b1;
  int nparts, part;      // (nparts 0: not distributed)
  int *starts;           // (nparts + 1) the parts' first bodies
  int given;             // 1: pdd holds the p̈ of a distributed solve (mbs_naturalPartGiven)
  double ptol;           // the interface pivots' tolerance (0: solver.rank_tol, else 1e-10)
  struct mbsNatPart *pt; // the interface rows and their responses (natural_part.c)
};

/// The O(n) solver's steps (natural_tree.c), on the bodies [nw->b0, nw->b1): the assembly at the
/// stages in w (p, ṗ, forces, every joint's rows, the cut joints' dense rows), the factorisation,
/// and a solve of K x = rhs with the right sides nw->r (NB per body) and gj (6 per joint) into
/// nw->pdd and nw->lam (rigid: the rigid rows' right sides may be nonzero).
mbsErr mbs_ntAssemble(const mbsModel *m, const mbsWork *w, mbsNaturalWork *nw);
mbsErr mbs_ntFactor(const mbsModel *m, mbsNaturalWork *nw);
void mbs_ntSolve(const mbsModel *m, mbsNaturalWork *nw, const double *gj, int rigid);
/// The cut joints' rows (nw->Lr) added to the tree's solution in nw->pdd in the range space
/// (docs/natural.md 3.2): the unit responses K⁻¹ l_iᵀ (fresh: solved now with the current factors;
/// else those of the last fresh call, the factors unchanged since), S = L K⁻¹ Lᵀ factored by the
/// pivoted Cholesky below tol, μ from L p̈ − gl, p̈ corrected. Returns the rank (allocates nothing).
int mbs_ntLoops(const mbsModel *m, mbsNaturalWork *nw, const double *gl, double tol, int fresh);
/// x (12) = p̈ of the forest root b (its parent before b0, or the ground) of K⁻¹ applied to a right
/// side r1 (12) on b alone (zero γ): O(1), the only body of the solve whose value it needs.
void mbs_ntRootSolve(const mbsModel *m, const mbsNaturalWork *nw, int b, const double *r1,
                     double *x);
/// 1 when the joint of body c is removed from this part's forest (its parent lies before b0)
int mbs_ntCutJoint(const mbsModel *m, const mbsNaturalWork *nw, int c);
/// natural_runon.c, a natural run in O(n) (docs/natural.md 7, 12). The recorded rows (rec: each
/// body's joint's rows rec[rec0[c] .. rec0[c + 1]), then the cut joints' up to nrec) assembled at
/// nw->s.p, nw->s.pd into nw (Jc, Jp, gj by joint; Lr, s.gl the cut joints').
void mbs_ntReplay(const mbsModel *m, mbsNaturalWork *nw, const mbsNatRec *rec, const int *rec0,
                  int nrec);
/// The rows' values g(p) at nw->s.p into g (12 nb + nl: rigid 6 per body, the joint's rows in 6
/// slots per body, the cut joints'); returns max |g|.
double mbs_ntValues(const mbsModel *m, const mbsNaturalWork *nw, const mbsNatRec *rec,
                    const int *rec0, int nrec, double *g);
/// G v (the same layout) for the rows of the last mbs_ntReplay; returns max |G v|.
double mbs_ntJacMul(const mbsModel *m, const mbsNaturalWork *nw, const double *v, double *gv);
/// With nw factored (mbs_ntFactor) for the identity in place of the mass matrices (K = I₄):
/// x (12 nb) −= Gᵀ (G Gᵀ)⁺ v, v in the layout above; the cut joints' rows by mbs_ntLoops (fresh,
/// pivots below tol dropped). Returns the closure rows' rank, -1 without memory.
int mbs_ntCorrect(const mbsModel *m, mbsNaturalWork *nw, const double *v, int fresh, double tol,
                  double *x);
/// natural_part.c: frees nw->pt and nw->starts
void mbs_naturalPartFree(mbsNaturalWork *nw);

#endif
