/// \file flex_cfs_petsc.c
/// solver.method = petsc on the constraint-force system with flexible bodies (docs/flexible.md
/// 12.3): KSP (CG by default) on a shell matrix whose product is the matrix-free operator of
/// src/flex_cfs.c and a shell preconditioner applying its diagonal blocks, the rows distributed
/// as the body ranges own them. -ksp_* / -pc_* options override (KSPSetFromOptions). The KSP
/// objects are created per evaluation (a correctness path, not tuned). Besides petsc_ref.c and
/// petsc_ts.c the only file that includes PETSc.
#include <stdlib.h>
#include <string.h>
#include "flex_cfs_par.h"
#ifdef MBS_HAVE_PETSC
#include <petscksp.h>
#include "comm_private.h"
#include "petsc_private.h"

typedef struct {
  mbsFlexCfs *f;
  double *x, *y; ///< (rows) global-index scratch: the owned rows in and out
  int l0, l1;
  mbsErr err;
} mbspFcsShell;

static PetscErrorCode mbsp_fcsMult(Mat A, Vec xv, Vec yv) {
  mbspFcsShell *c = NULL;
  const PetscScalar *xa;
  PetscScalar *ya;
  PetscErrorCode rc = MatShellGetContext(A, &c);
  if (rc) return rc;
  if ((rc = VecGetArrayRead(xv, &xa))) return rc;
  memcpy(c->x + c->l0, xa, sizeof(double) * (size_t)(c->l1 - c->l0));
  if ((rc = VecRestoreArrayRead(xv, &xa))) return rc;
  mbsErr e = mbs_flexCfsOp(c->f, c->x, c->y);
  if (e && !c->err) c->err = e;
  if ((rc = VecGetArray(yv, &ya))) return rc;
  memcpy(ya, c->y + c->l0, sizeof(double) * (size_t)(c->l1 - c->l0));
  return VecRestoreArray(yv, &ya);
}

static PetscErrorCode mbsp_fcsPrec(PC pc, Vec rv, Vec zv) {
  mbspFcsShell *c = NULL;
  const PetscScalar *ra;
  PetscScalar *za;
  PetscErrorCode rc = PCShellGetContext(pc, &c);
  if (rc) return rc;
  if ((rc = VecGetArrayRead(rv, &ra))) return rc;
  memcpy(c->x + c->l0, ra, sizeof(double) * (size_t)(c->l1 - c->l0));
  if ((rc = VecRestoreArrayRead(rv, &ra))) return rc;
  mbs_flexCfsPrec(c->f, c->x, c->y);
  if ((rc = VecGetArray(zv, &za))) return rc;
  memcpy(za, c->y + c->l0, sizeof(double) * (size_t)(c->l1 - c->l0));
  return VecRestoreArray(zv, &za);
}

static mbsErr mbsp_fcsKsp(mbspComm *comm, mbspFcsShell *c, const double *b, double tol, int *it) {
  MPI_Comm mc = mbsp_commRaw(comm);
  int n = mbs_flexCfsRows(c->f), nloc = c->l1 - c->l0;
  Mat A = NULL;
  Vec xv = NULL, bv = NULL;
  KSP ksp = NULL;
  PC pc;
  PetscScalar *ba;
  MBS_CALL_PETSC(MatCreateShell(mc, nloc, nloc, n, n, c, &A));
  MBS_CALL_PETSC(MatShellSetOperation(A, MATOP_MULT, (void (*)(void))mbsp_fcsMult));
  MBS_CALL_PETSC(MatCreateVecs(A, &xv, &bv));
  MBS_CALL_PETSC(VecGetArray(bv, &ba));
  memcpy(ba, b + c->l0, sizeof(double) * (size_t)nloc);
  MBS_CALL_PETSC(VecRestoreArray(bv, &ba));
  MBS_CALL_PETSC(KSPCreate(mc, &ksp));
  MBS_CALL_PETSC(KSPSetOperators(ksp, A, A));
  MBS_CALL_PETSC(KSPSetType(ksp, KSPCG));
  MBS_CALL_PETSC(KSPGetPC(ksp, &pc));
  MBS_CALL_PETSC(PCSetType(pc, PCSHELL));
  MBS_CALL_PETSC(PCShellSetContext(pc, c));
  MBS_CALL_PETSC(PCShellSetApply(pc, mbsp_fcsPrec));
  MBS_CALL_PETSC(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
  MBS_CALL_PETSC(KSPSetTolerances(ksp, tol, 1e-300, PETSC_DEFAULT, 20 * n + 100));
  MBS_CALL_PETSC(KSPSetFromOptions(ksp));
  MBS_CALL_PETSC(KSPSolve(ksp, bv, xv));
  KSPConvergedReason reason;
  PetscInt its;
  MBS_CALL_PETSC(KSPGetConvergedReason(ksp, &reason));
  MBS_CALL_PETSC(KSPGetIterationNumber(ksp, &its));
  *it = (int)its;
  const PetscScalar *xa;
  MBS_CALL_PETSC(VecGetArrayRead(xv, &xa));
  memcpy(c->x + c->l0, xa, sizeof(double) * (size_t)nloc);
  MBS_CALL_PETSC(VecRestoreArrayRead(xv, &xa));
  MBS_CALL_PETSC(KSPDestroy(&ksp));
  MBS_CALL_PETSC(VecDestroy(&xv));
  MBS_CALL_PETSC(VecDestroy(&bv));
  MBS_CALL_PETSC(MatDestroy(&A));
  if (c->err) return c->err;
  if (reason < 0)
    return mbs_errSet(MBS_ERR_NUMERIC, "flexible petsc: KSP did not converge (reason %d)",
                      (int)reason);
  return MBS_OK;
}

static mbsErr mbsp_fcsPetsc(mbspComm *comm, mbsFlexCfs *f, double tol, const double *q,
                            const double *y, const double *eta, double *ydd, int *it) {
  mbspFcsShell c = {.f = f};
  const double *b;
  MBS_CALL(mbs_flexCfsBegin(f, q, y, eta, &b, &c.l0, &c.l1));
  size_t n = (size_t)mbs_flexCfsRows(f) + 1;
  c.x = calloc(n, sizeof(double)), c.y = calloc(n, sizeof(double));
  mbsErr e = c.x && c.y ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  if (!e) e = mbsp_fcsKsp(comm, &c, b, tol, it);
  e = mbsp_agreeErr(comm, e);
  if (!e) e = mbs_flexCfsEnd(f, c.x, ydd);
  free(c.x), free(c.y);
  return e;
}
#else
static mbsErr mbsp_fcsPetsc(mbspComm *comm, mbsFlexCfs *f, double tol, const double *q,
                            const double *y, const double *eta, double *ydd, int *it) {
  (void)comm, (void)f, (void)tol, (void)q, (void)y, (void)eta, (void)ydd, (void)it;
  return mbs_errSet(MBS_ERR_UNSUPPORTED, "solver.method = petsc: built without PETSc");
}
#endif

mbsErr mbsp_flexCfsSolve(mbspComm *comm, mbsFlexCfs *f, int method, double tol, const double *q,
                         const double *y, const double *eta, double *ydd, int *it) {
  if (method == MBS_FCFS_PETSC) return mbsp_fcsPetsc(comm, f, tol, q, y, eta, ydd, it);
  return mbs_flexCfsAccel(f, method, tol, q, y, eta, ydd, it);
}
