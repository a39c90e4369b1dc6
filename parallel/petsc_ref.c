/// \file petsc_ref.c
/// PETSc backend: the same A as the native solvers, assembled as a distributed MPIAIJ matrix
/// with variable point-blocks (one block per joint, its constraint components), solved by KSP.
/// Defaults: KSPCG + PCVPBJACOBI (the seed's J-CG with exact block-diagonal preconditioning),
/// unpreconditioned residual norm and rtol = solver.tol so that convergence means the same as
/// for the native J-CG; every -ksp_* / -pc_* option overrides. Rows are owned as the native
/// solver owns them (contiguous lambda ranges), so no data moves at assembly. With the closure
/// equations as rows of the system (solver.loops = rows, docs/loops.md 8.4) the matrix has
/// nlam + nlam_loop rows, the closure rows on their owner (the last body's rank), and the
/// tree-loop blocks are added by the joints' owners into both their rows and the closure rows.
/// Communication: PETSc's own (MatMult halo, VecDot allreduce), on the engine's communicator.
/// Registered in the solver table as solver.method = petsc (mbsp_solverPetsc); its solver state
/// reaches the engine through the context the engine attaches to its mbsCfs. This file and
/// petsc_ts.c and flex_cfs_petsc.c are the only ones that include PETSc.
#include "petsc_ref.h"
#include <stdlib.h>
#include "mbspar/mbs_engine.h"
#include "mbspar/mbs_solvertype.h"
#ifdef MBS_HAVE_PETSC
#include <petscksp.h>
#include <stdlib.h>
#include <string.h>
#include "comm_private.h"
#include "petsc_private.h"

_Static_assert(sizeof(PetscInt) == sizeof(int), "mbspar expects 32-bit PETSc indices");
_Static_assert(sizeof(PetscScalar) == sizeof(double), "mbspar expects real double PETSc");

static int mbs_petsc_inited = 0;

struct mbspPetsc {
  Mat A;
  Vec x, b, r; // r: b - A x, recomputed after a solve
  KSP ksp;
  int *cols;
  double *vals;
  int assembled; // A holds the current blocks (kept under w->reuse)
};

mbsErr mbsp_petscInitialize(int *argc, char ***argv) {
  if (mbs_petsc_inited) return MBS_OK;
  MBS_CALL_PETSC(PetscInitialize(argc, argv, NULL, NULL));
  // errors come back as codes; mbspar reports them once
  // (MBS_PETSC_TRACE=1 keeps PETSc's own traceback printer, for debugging)
  if (!getenv("MBS_PETSC_TRACE"))
    MBS_CALL_PETSC(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  mbs_petsc_inited = 1;
  return MBS_OK;
}

void mbsp_petscFinalize(void) {
  if (mbs_petsc_inited) PetscFinalize();
  mbs_petsc_inited = 0;
}

mbsErr mbsp_petscSetOption(const char *name, const char *value) {
  MBS_CHECK(mbs_petsc_inited, MBS_ERR_INTERNAL, "PETSc is not initialised");
  if (value)
    MBS_CALL_PETSC(PetscOptionsSetValue(NULL, name, value[0] ? value : NULL));
  else
    MBS_CALL_PETSC(PetscOptionsClearValue(NULL, name));
  return MBS_OK;
}

const char *mbsp_petscVersion(void) {
  static char v[128];
  if (!v[0]) PetscGetVersion(v, sizeof v);
  return v;
}

// ---------------------------------------------------------------- closure rows (loops.md 8.4)

// a^T M^-1 b for 6-vectors and a 6x6 row-major M^-1 (src/spatial.h does not mix with PETSc's
// headers)
static double mbsp_petscCongr6(const double *a, const double *Mi, const double *b) {
  double s = 0;
  for (int r = 0; r < 6; r++) {
    double y = 0;
    for (int q = 0; q < 6; q++) y += Mi[6 * r + q] * b[q];
    s += a[r] * y;
  }
  return s;
}

// the tree joint of body b couples with closure row i (loop k) through a body both act on: the
// joint's wrench is T_b on b and -G_b on its parent p, the row's D1 on body1 and D2 on body2
static int mbsp_petscLoopTouches(const mbsModel *m, int b, int k) {
  int p = m->body_parent[b], b1 = m->loop_body[2 * k], b2 = m->loop_body[2 * k + 1];
  return (b1 >= 0 && (b1 == b || b1 == p)) || (b2 >= 0 && (b2 == b || b2 == p));
}

// loops k and q couple (a body they both act on; k couples with itself)
static int mbsp_petscLoopsShare(const mbsModel *m, int k, int q) {
  for (int a = 0; a < 2; a++)
    for (int d = 0; d < 2; d++)
      if (m->loop_body[2 * k + a] >= 0 && m->loop_body[2 * k + a] == m->loop_body[2 * q + d])
        return 1;
  return k == q;
}

// the coupling blocks of the owned joint b (nl rows) with every closure row it touches: columns
// nlam + i into cols (from at), values row-major with row length len into vals; zero rows
// (c->Lskip) get zeros; returns the new at
static int mbsp_petscTreeLoopCols(const mbsModel *m, const mbsCfs *c, int b, int len, int at,
                                  int *cols, double *vals) {
  int nl = m->body_lamnum[b], la = m->body_lamadr[b], p = m->body_parent[b];
  const mbsReal *T = c->T + 6 * la, *G = c->G + 6 * la;
  for (int k = 0; k < m->nloop; k++) {
    if (!mbsp_petscLoopTouches(m, b, k)) continue;
    for (int r = 0; r < m->loop_lamnum[k]; r++, at++) {
      int i = m->loop_lamadr[k] - m->nlam + r;
      cols[at] = m->nlam + i;
      for (int q = 0; q < nl; q++) vals[(size_t)len * q + at] = 0;
      if (c->Lskip[i]) continue;
      for (int side = 0; side < 2; side++) {
        int s = m->loop_body[2 * k + side];
        if (s < 0 || (s != b && s != p)) continue;
        const double *Mi = c->Minv + 36 * s, *D = c->LD + 12 * i + 6 * side;
        for (int q = 0; q < nl; q++)
          vals[(size_t)len * q + at] +=
              s == b ? mbsp_petscCongr6(T + 6 * q, Mi, D) : -mbsp_petscCongr6(G + 6 * q, Mi, D);
      }
    }
  }
  return at;
}

// the closure rows' entries this rank adds (ADD_VALUES after MatZeroEntries): for each owned
// joint the tree-loop blocks in its own rows and, transposed, in the rows of the closure
// equations (the owner's, PETSc moves them); on the owner the loop-loop blocks
static mbsErr mbsp_petscLoopAssemble(const mbsModel *m, const mbsCfs *c, mbspPetsc *p) {
  for (int b = c->b0; b < c->b1; b++) {
    int nl = m->body_lamnum[b], rows[6], n0 = 0;
    if (!nl) continue;
    for (int k = 0; k < m->nloop; k++)
      if (mbsp_petscLoopTouches(m, b, k)) n0 += m->loop_lamnum[k];
    if (!n0) continue;
    for (int q = 0; q < nl; q++) rows[q] = m->body_lamadr[b] + q;
    mbsp_petscTreeLoopCols(m, c, b, n0, 0, p->cols, p->vals);
    MBS_CALL_PETSC(MatSetValues(p->A, nl, rows, n0, p->cols, p->vals, ADD_VALUES));
    // the same blocks transposed into the closure rows: vals read column by column
    MBS_CALL_PETSC(MatSetOption(p->A, MAT_ROW_ORIENTED, PETSC_FALSE));
    MBS_CALL_PETSC(MatSetValues(p->A, n0, p->cols, nl, rows, p->vals, ADD_VALUES));
    MBS_CALL_PETSC(MatSetOption(p->A, MAT_ROW_ORIENTED, PETSC_TRUE));
  }
  if (!c->lowner) return MBS_OK;
  for (int k = 0; k < m->nloop; k++)
    for (int q = 0; q < m->nloop; q++) {
      if (!mbsp_petscLoopsShare(m, k, q)) continue;
      int nk = m->loop_lamnum[k], nq = m->loop_lamnum[q], rows[6], cl[6];
      double v[36];
      for (int a = 0; a < nk; a++) rows[a] = m->loop_lamadr[k] + a;
      for (int d = 0; d < nq; d++) cl[d] = m->loop_lamadr[q] + d;
      for (int a = 0; a < nk; a++)
        for (int d = 0; d < nq; d++) {
          int i = rows[a] - m->nlam, j = cl[d] - m->nlam;
          double s = 0;
          if (c->Lskip[i] || c->Lskip[j]) { // a zero row: the identity
            v[nq * a + d] = i == j ? 1 : 0;
            continue;
          }
          for (int sk = 0; sk < 2; sk++)
            for (int sq = 0; sq < 2; sq++) {
              int bk = m->loop_body[2 * k + sk];
              if (bk < 0 || bk != m->loop_body[2 * q + sq]) continue;
              s += mbsp_petscCongr6(c->LD + 12 * i + 6 * sk, c->Minv + 36 * bk,
                                    c->LD + 12 * j + 6 * sq);
            }
          v[nq * a + d] = s;
        }
      MBS_CALL_PETSC(MatSetValues(p->A, nk, rows, nq, cl, v, ADD_VALUES));
    }
  return MBS_OK;
}

static mbsErr mbsp_petscCreate(mbspComm *comm, const mbsSolverOpt *o, const mbsModel *m,
                               const mbsState *s, mbsWork *w, mbsCfs *c, mbspPetsc **out) {
  MBS_CHECK(mbs_petsc_inited, MBS_ERR_INTERNAL, "PETSc is not initialised");
  mbspPetsc *p = calloc(1, sizeof *p);
  *out = p;
  // the PETSc objects are created collectively: agree on the allocations first
  MBS_CALL(
      mbsp_agreeErr(comm, p ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory (PETSc context)")));
  MPI_Comm mc = mbsp_commRaw(comm);
  int nloc = c->l1 - c->l0, maxlen = 1, nglob = m->nlam + c->nlr;
  for (int b = c->b0; b < c->b1; b++) {
    int len = mbs_cfsRowLength(m, b);
    for (int k = 0; c->nlr && k < m->nloop; k++) // closure rows in the system (loops.md 8.4)
      if (mbsp_petscLoopTouches(m, b, k)) len += m->loop_lamnum[k];
    if (len > maxlen) maxlen = len;
  }
  p->cols = malloc(sizeof(int) * (size_t)maxlen);
  p->vals = malloc(sizeof(double) * 6 * (size_t)maxlen);
  int *dnz = calloc((size_t)nloc + 1, sizeof(int)), *onz = calloc((size_t)nloc + 1, sizeof(int));
  int *bs = calloc((size_t)(c->b1 - c->b0 + m->nloop) + 1, sizeof(int));
  mbsErr ea = mbsp_agreeErr(comm, p->cols && p->vals && dnz && onz && bs
                                      ? MBS_OK
                                      : mbs_errSet(MBS_ERR_NOMEM, "out of memory (PETSc)"));
  if (ea) {
    free(dnz), free(onz), free(bs);
    return ea;
  }
  // nonzero pattern per row (diagonal / off-diagonal part) and the variable block sizes
  int nblk = 0;
  for (int b = c->b0; b < c->b1; b++) {
    int nl = m->body_lamnum[b], la = m->body_lamadr[b], nc;
    if (!nl) continue;
    bs[nblk++] = nl;
    mbs_cfsRow(m, s, w, c, b, p->cols, p->vals, &nc);
    for (int j = 0; j < nc; j++)
      for (int i = 0; i < nl; i++) {
        if (p->cols[j] >= c->l0 && p->cols[j] < c->l1)
          dnz[la - c->l0 + i]++;
        else
          onz[la - c->l0 + i]++;
      }
    for (int k = 0; c->nlr && k < m->nloop; k++) // its couplings with closure rows
      if (mbsp_petscLoopTouches(m, b, k))
        for (int i = 0; i < nl; i++) (c->lowner ? dnz : onz)[la - c->l0 + i] += m->loop_lamnum[k];
  }
  // the closure rows (their owner): the joints that touch them, the loops sharing a body
  for (int k = 0; c->nlr && c->lowner && k < m->nloop; k++) {
    int nd = 0, no = 0;
    for (int b = 0; b < m->nbody; b++)
      if (m->body_lamnum[b] && mbsp_petscLoopTouches(m, b, k))
        *(b >= c->b0 && b < c->b1 ? &nd : &no) += m->body_lamnum[b];
    for (int q = 0; q < m->nloop; q++)
      if (mbsp_petscLoopsShare(m, k, q)) nd += m->loop_lamnum[q];
    for (int r = 0; r < m->loop_lamnum[k]; r++) {
      dnz[m->loop_lamadr[k] + r - c->l0] = nd;
      onz[m->loop_lamadr[k] + r - c->l0] = no;
    }
    bs[nblk++] = m->loop_lamnum[k];
  }
  MBS_CALL_PETSC(MatCreate(mc, &p->A));
  MBS_CALL_PETSC(MatSetSizes(p->A, nloc, nloc, nglob, nglob));
  MBS_CALL_PETSC(MatSetType(p->A, MATAIJ));
  MBS_CALL_PETSC(MatSeqAIJSetPreallocation(p->A, 0, dnz));
  MBS_CALL_PETSC(MatMPIAIJSetPreallocation(p->A, 0, dnz, 0, onz));
  MBS_CALL_PETSC(MatSetVariableBlockSizes(p->A, nblk, bs));
  MBS_CALL_PETSC(MatSetOption(p->A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  MBS_CALL_PETSC(MatSetOption(p->A, MAT_SYMMETRIC, PETSC_TRUE));
  free(dnz), free(onz), free(bs);
  // vectors wrap the native solver's arrays: no copies in or out
  MBS_CALL_PETSC(VecCreateMPIWithArray(mc, 1, nloc, nglob, c->rhs + c->l0, &p->b));
  MBS_CALL_PETSC(VecCreateMPIWithArray(mc, 1, nloc, nglob, c->x + c->l0, &p->x));
  MBS_CALL_PETSC(VecDuplicate(p->b, &p->r));
  MBS_CALL_PETSC(KSPCreate(mc, &p->ksp));
  MBS_CALL_PETSC(KSPSetType(p->ksp, KSPCG));
  PC pc;
  MBS_CALL_PETSC(KSPGetPC(p->ksp, &pc));
  MBS_CALL_PETSC(PCSetType(pc, PCVPBJACOBI));
  MBS_CALL_PETSC(KSPSetNormType(p->ksp, KSP_NORM_UNPRECONDITIONED));
  MBS_CALL_PETSC(KSPSetTolerances(p->ksp, o->tol, 1e-300, PETSC_DEFAULT, o->max_iter));
  MBS_CALL_PETSC(KSPSetFromOptions(p->ksp));
  // the warm start as initial guess, except for -ksp_type preonly (a direct solve by the PC, e.g.
  // -pc_type lu or cholesky: PETSc refuses a nonzero guess there)
  KSPType kt;
  MBS_CALL_PETSC(KSPGetType(p->ksp, &kt));
  MBS_CALL_PETSC(
      KSPSetInitialGuessNonzero(p->ksp, strcmp(kt, KSPPREONLY) ? PETSC_TRUE : PETSC_FALSE));
  return MBS_OK;
}

// solve A x = rhs (c->rhs, initial guess c->x) with KSP; the matrix is assembled from the block
// rows of the owned bodies (created with its nonzero pattern on the first call)
static mbsErr mbsp_petscSolve(mbspComm *comm, const mbsSolverOpt *o, mbspPetsc **ctx,
                              const mbsModel *m, const mbsState *s, mbsWork *w, mbsCfs *c,
                              mbsSolveInfo *info) {
  if (!*ctx) MBS_CALL(mbsp_petscCreate(comm, o, m, s, w, c, ctx));
  mbspPetsc *p = *ctx;
  // assemble the owned block rows, unless the loop layer solves again at the same positions
  // (w->reuse: the matrix and the preconditioner's setup are kept, docs/loops.md 8.1); with
  // closure rows in the system (loops.md 8.4) every rank adds to them: zeroed, then added
  int fresh = !(w->reuse && p->assembled);
  if (fresh && c->nlr) MBS_CALL_PETSC(MatZeroEntries(p->A));
  for (int b = c->b0; b < c->b1 && fresh; b++) {
    int nl = m->body_lamnum[b], nc;
    if (!nl) continue;
    int rows[6];
    for (int i = 0; i < nl; i++) rows[i] = m->body_lamadr[b] + i;
    mbs_cfsRow(m, s, w, c, b, p->cols, p->vals, &nc);
    MBS_CALL_PETSC(
        MatSetValues(p->A, nl, rows, nc, p->cols, p->vals, c->nlr ? ADD_VALUES : INSERT_VALUES));
  }
  if (fresh && c->nlr) MBS_CALL(mbsp_petscLoopAssemble(m, c, p));
  if (fresh) {
    MBS_CALL_PETSC(MatAssemblyBegin(p->A, MAT_FINAL_ASSEMBLY));
    MBS_CALL_PETSC(MatAssemblyEnd(p->A, MAT_FINAL_ASSEMBLY));
    MBS_CALL_PETSC(KSPSetOperators(p->ksp, p->A, p->A));
    p->assembled = 1;
  }
  // the wrapped arrays may have been written natively since the last call
  PetscScalar *arr;
  MBS_CALL_PETSC(VecGetArray(p->x, &arr)); // get/restore bumps the object state
  MBS_CALL_PETSC(VecRestoreArray(p->x, &arr));
  MBS_CALL_PETSC(VecGetArray(p->b, &arr));
  MBS_CALL_PETSC(VecRestoreArray(p->b, &arr));
  // CG's residual is updated by recursion and drifts from b - A x (docs/formulation.md 3.2.1):
  // the reported residual is b - A x recomputed with the assembled matrix, and a solve that met
  // the tolerance by recursion only is solved again from its answer (KSP's nonzero guess), at
  // most MBS_CFS_CG_RESTARTS times while each halves the true residual (else: stagnated). Not for
  // -ksp_type preonly (a direct solve by the PC: solving again repeats it).
  KSPType kt;
  MBS_CALL_PETSC(KSPGetType(p->ksp, &kt));
  int again = strcmp(kt, KSPPREONLY) != 0, total = 0;
  double prev = INFINITY;
  PetscReal bn;
  MBS_CALL_PETSC(VecNorm(p->b, NORM_2, &bn));
  info->cg.n = 0;
  for (;;) {
    MBS_CALL_PETSC(KSPSolve(p->ksp, p->b, p->x));
    PetscInt its;
    KSPConvergedReason kr;
    PetscReal tn;
    MBS_CALL_PETSC(KSPGetIterationNumber(p->ksp, &its));
    MBS_CALL_PETSC(KSPGetConvergedReason(p->ksp, &kr));
    MBS_CALL_PETSC(MatMult(p->A, p->x, p->r));
    MBS_CALL_PETSC(VecAYPX(p->r, -1.0, p->b));
    MBS_CALL_PETSC(VecNorm(p->r, NORM_2, &tn));
    total += (int)its;
    info->it = total;
    info->res = bn > 0 ? tn / bn : tn;
    info->reason = kr > 0                        ? MBS_REASON_CONVERGED
                   : kr == KSP_DIVERGED_ITS      ? MBS_REASON_DIVERGED_MAXIT
                   : kr == KSP_DIVERGED_NANORINF ? MBS_REASON_DIVERGED_NAN
                                                 : MBS_REASON_DIVERGED_BREAKDOWN;
    if (kr <= 0 || !again || info->res <= o->tol) break;
    if (total >= o->max_iter) { // solver.max_iter caps the solves together
      info->reason = MBS_REASON_DIVERGED_MAXIT;
      break;
    }
    if (!(info->res < 0.5 * prev) || info->cg.n == MBS_CFS_CG_RESTARTS) {
      info->reason = MBS_REASON_DIVERGED_STAGNATED;
      break;
    }
    prev = info->res;
    info->cg.seg[info->cg.n] = 0, info->cg.it[info->cg.n++] = total;
  }
  return MBS_OK;
}

static void mbsp_petscDestroy(mbspPetsc **ctx) {
  if (!ctx || !*ctx) return;
  mbspPetsc *p = *ctx;
  if (mbs_petsc_inited) {
    KSPDestroy(&p->ksp);
    MatDestroy(&p->A);
    VecDestroy(&p->x);
    VecDestroy(&p->b);
    VecDestroy(&p->r);
  }
  free(p->cols), free(p->vals);
  free(p);
  *ctx = NULL;
}

#else // built without PETSc

mbsErr mbsp_petscInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  return mbs_errSet(MBS_ERR_UNSUPPORTED,
                    "this mbspar was built without PETSc (MBS_ENABLE_PETSC=OFF)");
}
void mbsp_petscFinalize(void) {}
mbsErr mbsp_petscSetOption(const char *name, const char *value) {
  (void)name, (void)value;
  return mbs_errSet(MBS_ERR_UNSUPPORTED, "this mbspar was built without PETSc");
}
static mbsErr mbsp_petscSolve(mbspComm *comm, const mbsSolverOpt *o, mbspPetsc **ctx,
                              const mbsModel *m, const mbsState *s, mbsWork *w, mbsCfs *c,
                              mbsSolveInfo *info) {
  (void)comm, (void)o, (void)ctx, (void)m, (void)s, (void)w, (void)c, (void)info;
  return mbs_errSet(MBS_ERR_UNSUPPORTED, "solver.method = petsc needs a build with PETSc");
}
static void mbsp_petscDestroy(mbspPetsc **ctx) {
  (void)ctx;
}
const char *mbsp_petscVersion(void) {
  return "";
}
#endif

// ---------------------------------------------------------------- the solver table entry

typedef struct {
  mbsSolverOpt opt;
  mbspEngine *eng; // the engine this solver serves (its communicator)
  mbspPetsc *ksp;  // matrix, vectors and KSP, created at the first solve (needs the state)
} mbspPetscSolver;

static mbsErr mbsp_petscSolverCreate(const mbsModel *m, const mbsCfs *c, const mbsSolverOpt *opt,
                                     void *ctx, void **self) {
  (void)m, (void)c;
  MBS_CHECK(ctx, MBS_ERR_UNSUPPORTED, "solver.method = petsc runs on the distributed engine only");
  mbspPetscSolver *s;
  MBS_ALLOC(s, 1);
  s->opt = *opt;
  s->eng = ctx;
  *self = s;
  return MBS_OK;
}

static mbsErr mbsp_petscSolverSolve(void *self, const mbsModel *m, const mbsState *st, mbsWork *w,
                                    mbsCfs *c, const mbsCfsComm *comm, mbsSolveInfo *info) {
  mbspPetscSolver *s = self;
  mbspComm *pc = mbsp_engineComm(s->eng);
  (void)comm; // PETSc communicates by itself
  return mbsp_agreeErr(pc, mbsp_petscSolve(pc, &s->opt, &s->ksp, m, st, w, c, info));
}

static void mbsp_petscSolverDestroy(void **self) {
  mbspPetscSolver *s = *self;
  if (!s) return;
  mbsp_petscDestroy(&s->ksp);
  free(s);
  *self = NULL;
}

const mbsSolverType mbsp_solverPetsc = {
    .name = "petsc",
    .method = MBS_SOLVER_PETSC,
    .distributed = 1,
    .iterative = 1,
    .cpa_graph = MBS_CPA_GRAPH_NONE, // PETSc's own kernels: no graph
    .restarts = 1,
    .engine_only = 1,
    .petsc = 1,
    .mem_per_body = 1300.0, // the assembled matrix, split (docs/model.md, memory), measured
    .create = mbsp_petscSolverCreate,
    .solve = mbsp_petscSolverSolve,
    .destroy = mbsp_petscSolverDestroy,
};
