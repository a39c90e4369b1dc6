/// \file flex_beam.c
/// The built-in modal source of a flexible body (mbs_flex.h, docs/flexible.md): an Euler–Bernoulli
/// finite-element beam along x, clamped at x = 0 to the body frame, reduced by Craig–Bampton; and
/// the symmetric-definite eigensolvers it needs: the k lowest modes of the banded FE matrices by
/// LAPACK's dsbgvx (O(n kd^2) reduction, bisection and inverse iteration), and a dense one
/// (Cholesky, cyclic Jacobi) for small reduced matrices and as the tests' independent reference.
///
/// Element of length l, nodal dofs [u v w thx thy thz] (thz = dv/dx, thy = -dw/dx):
///   axial    EA/l [1 -1; -1 1],   rho A l/6 [2 1; 1 2]                       on (u1, u2)
///   torsion  GJ/l [1 -1; -1 1],   rho (Iy + Iz) l/6 [2 1; 1 2]               on (thx1, thx2)
///   bending  EI/l^3 [12 6l -12 6l; 6l 4l^2 -6l 2l^2; -12 -6l 12 -6l; 6l 2l^2 -6l 4l^2],
///            rho A l/420 [156 22l 54 -13l; 22l 4l^2 13l -3l^2; 54 13l 156 -22l;
///                         -13l -3l^2 -22l 4l^2]                              on (v1, thz1, v2,
///                         thz2)
///   and the same with EIy on (w1, -thy1, w2, -thy2) (the sign of the rotations flipped).
/// Craig–Bampton with boundary set B (the six dofs of each attachment node) and interior I:
/// T = [I_B 0; -K_II^-1 K_IB  Phi_k], Phi_k the k lowest modes of (K_II, M_II); M_r = T^T M T,
/// K_r = T^T K T.
#include "mbspar/mbs_flex.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------- dense symmetric algebra

// Cholesky A = L L^T in place (lower triangle, row-major n x n); 0 ok, -1 not positive definite
static int mbs_flexChol(int n, mbsReal *A) {
  for (int j = 0; j < n; j++) {
    mbsReal d = A[(size_t)j * n + j];
    for (int k = 0; k < j; k++) d -= A[(size_t)j * n + k] * A[(size_t)j * n + k];
    if (!(d > 0)) return -1;
    d = sqrt(d);
    A[(size_t)j * n + j] = d;
    for (int i = j + 1; i < n; i++) {
      mbsReal s = A[(size_t)i * n + j];
      for (int k = 0; k < j; k++) s -= A[(size_t)i * n + k] * A[(size_t)j * n + k];
      A[(size_t)i * n + j] = s / d;
    }
  }
  return 0;
}

int mbs_flexCholSolve(int n, mbsReal *A, mbsReal *b) {
  if (mbs_flexChol(n, A)) return -1;
  for (int i = 0; i < n; i++) {
    mbsReal s = b[i];
    for (int k = 0; k < i; k++) s -= A[(size_t)i * n + k] * b[k];
    b[i] = s / A[(size_t)i * n + i];
  }
  for (int i = n - 1; i >= 0; i--) {
    mbsReal s = b[i];
    for (int k = i + 1; k < n; k++) s -= A[(size_t)k * n + i] * b[k];
    b[i] = s / A[(size_t)i * n + i];
  }
  return 0;
}

int mbs_symGenEig(int n, mbsReal *A, mbsReal *B, mbsReal *lam, mbsReal *V) {
  if (n <= 0) return 0;
  size_t nn = (size_t)n * (size_t)n;
  if (mbs_flexChol(n, B)) return -1;
  mbsReal *Q = calloc(nn, sizeof(mbsReal));
  int *ord = malloc(sizeof(int) * (size_t)n);
  if (!Q || !ord) {
    free(Q), free(ord);
    return -2;
  }
  // C = L^-1 A L^-T (in A): rows by forward substitution, then columns
  for (int c = 0; c < n; c++) // A <- L^-1 A, column c
    for (int i = 0; i < n; i++) {
      mbsReal s = A[(size_t)i * n + c];
      for (int k = 0; k < i; k++) s -= B[(size_t)i * n + k] * A[(size_t)k * n + c];
      A[(size_t)i * n + c] = s / B[(size_t)i * n + i];
    }
  for (int r = 0; r < n; r++) // A <- A L^-T, row r
    for (int j = 0; j < n; j++) {
      mbsReal s = A[(size_t)r * n + j];
      for (int k = 0; k < j; k++) s -= A[(size_t)r * n + k] * B[(size_t)j * n + k];
      A[(size_t)r * n + j] = s / B[(size_t)j * n + j];
    }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++) { // symmetrize the rounding
      mbsReal a = 0.5 * (A[(size_t)i * n + j] + A[(size_t)j * n + i]);
      A[(size_t)i * n + j] = A[(size_t)j * n + i] = a;
    }
  for (int i = 0; i < n; i++) Q[(size_t)i * n + i] = 1;
  // cyclic Jacobi: rotate away every off-diagonal entry until they are rounding
  for (int sweep = 0; sweep < 100; sweep++) {
    mbsReal off = 0, dia = 0;
    for (int i = 0; i < n; i++) {
      dia += A[(size_t)i * n + i] * A[(size_t)i * n + i];
      for (int j = i + 1; j < n; j++) off += A[(size_t)i * n + j] * A[(size_t)i * n + j];
    }
    if (!(off > 1e-32 * dia)) break;
    for (int p = 0; p < n - 1; p++)
      for (int q = p + 1; q < n; q++) {
        mbsReal apq = A[(size_t)p * n + q];
        if (apq == 0) continue;
        mbsReal app = A[(size_t)p * n + p], aqq = A[(size_t)q * n + q];
        mbsReal th = (aqq - app) / (2 * apq);
        mbsReal t = (th >= 0 ? 1 : -1) / (fabs(th) + sqrt(th * th + 1));
        mbsReal c = 1 / sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < n; k++) { // columns p, q
          mbsReal akp = A[(size_t)k * n + p], akq = A[(size_t)k * n + q];
          A[(size_t)k * n + p] = c * akp - s * akq;
          A[(size_t)k * n + q] = s * akp + c * akq;
        }
        for (int k = 0; k < n; k++) { // rows p, q
          mbsReal apk = A[(size_t)p * n + k], aqk = A[(size_t)q * n + k];
          A[(size_t)p * n + k] = c * apk - s * aqk;
          A[(size_t)q * n + k] = s * apk + c * aqk;
        }
        A[(size_t)p * n + q] = A[(size_t)q * n + p] = 0;
        for (int k = 0; k < n; k++) {
          mbsReal qkp = Q[(size_t)k * n + p], qkq = Q[(size_t)k * n + q];
          Q[(size_t)k * n + p] = c * qkp - s * qkq;
          Q[(size_t)k * n + q] = s * qkp + c * qkq;
        }
      }
  }
  for (int i = 0; i < n; i++) ord[i] = i;
  for (int i = 1; i < n; i++) // ascending eigenvalues (insertion sort: n is small)
    for (int j = i;
         j > 0 && A[(size_t)ord[j - 1] * n + ord[j - 1]] > A[(size_t)ord[j] * n + ord[j]]; j--) {
      int t = ord[j];
      ord[j] = ord[j - 1];
      ord[j - 1] = t;
    }
  for (int i = 0; i < n; i++) lam[i] = A[(size_t)ord[i] * n + ord[i]];
  if (V) // v = L^-T q (back substitution), B-normal
    for (int c = 0; c < n; c++)
      for (int i = n - 1; i >= 0; i--) {
        mbsReal s = Q[(size_t)i * n + ord[c]];
        for (int k = i + 1; k < n; k++) s -= B[(size_t)k * n + i] * V[(size_t)k * n + c];
        V[(size_t)i * n + c] = s / B[(size_t)i * n + i];
      }
  free(Q), free(ord);
  return 0;
}

// ---------------------------------------------------------------- banded (the FE matrices)

// LAPACK (Fortran calling convention, as in src/modes.c: arguments by reference, then the hidden
// lengths of the character arguments)
extern void dsbgvx_(const char *jobz, const char *range, const char *uplo, const int *n,
                    const int *ka, const int *kb, double *ab, const int *ldab, double *bb,
                    const int *ldbb, double *q, const int *ldq, const double *vl, const double *vu,
                    const int *il, const int *iu, const double *abstol, int *m, double *w,
                    double *z, const int *ldz, double *work, int *iwork, int *ifail, int *info,
                    size_t ljobz, size_t lrange, size_t luplo);

// the half-bandwidth of a symmetric n x n row-major matrix: the largest |i - j| of a nonzero
static int mbs_flexBandwidth(int n, const mbsReal *A) {
  int kd = 0;
  for (int i = 0; i < n; i++)
    for (int j = i + kd + 1; j < n; j++)
      if (A[(size_t)i * n + j] != 0 || A[(size_t)j * n + i] != 0) kd = j - i;
  return kd;
}

// Cholesky A = L L^T in place of a matrix of half-bandwidth kd (lower triangle, row-major n x n;
// L has A's band): O(n kd^2). 0 ok, -1 not positive definite
static int mbs_flexBandChol(int n, int kd, mbsReal *A) {
  for (int j = 0; j < n; j++) {
    int k0 = j - kd > 0 ? j - kd : 0, i1 = j + kd < n - 1 ? j + kd : n - 1;
    mbsReal d = A[(size_t)j * n + j];
    for (int k = k0; k < j; k++) d -= A[(size_t)j * n + k] * A[(size_t)j * n + k];
    if (!(d > 0)) return -1;
    d = sqrt(d);
    A[(size_t)j * n + j] = d;
    for (int i = j + 1; i <= i1; i++) {
      mbsReal t = A[(size_t)i * n + j];
      for (int k = i - kd > k0 ? i - kd : k0; k < j; k++)
        t -= A[(size_t)i * n + k] * A[(size_t)j * n + k];
      A[(size_t)i * n + j] = t / d;
    }
  }
  return 0;
}

// L L^T x = b for the factor of mbs_flexBandChol (b overwritten by x)
static void mbs_flexBandSolve(int n, int kd, const mbsReal *L, mbsReal *b) {
  for (int i = 0; i < n; i++) {
    mbsReal t = b[i];
    for (int k = i - kd > 0 ? i - kd : 0; k < i; k++) t -= L[(size_t)i * n + k] * b[k];
    b[i] = t / L[(size_t)i * n + i];
  }
  for (int i = n - 1; i >= 0; i--) {
    mbsReal t = b[i];
    for (int k = i + 1; k <= i + kd && k < n; k++) t -= L[(size_t)k * n + i] * b[k];
    b[i] = t / L[(size_t)i * n + i];
  }
}

// The k lowest eigenpairs of K v = lambda M v (K and M symmetric positive definite, n x n
// row-major, half-bandwidth kd): lam ascending, Z (n x k, column c at Z + c n) M-normal, each
// vector's largest component positive (one sign whatever the LAPACK). Solved as the k largest
// of M v = mu K v, mu = 1/lambda, equilibrated by diag(K)^-1/2: LAPACK's banded reduction is
// accurate to eps mu_max = eps / lambda_1 absolutely, so the lowest lambda keep their relative
// accuracy (solved for the lowest directly, the errors are eps lambda_max: 2e-4 in the first
// bending frequency of a 400-element beam, whose lambda_max / lambda_1 ~ 1e12).
// 0 ok, -1 K not positive definite, -2 out of memory, -3 LAPACK failed otherwise.
static int mbs_flexBandEigLow(int n, int kd, const mbsReal *K, const mbsReal *M, int k,
                              mbsReal *lam, mbsReal *Z) {
  int ld = kd + 1, il = n - k + 1, iu = n, found = 0, info = 0;
  double vl = 0, vu = 0, abstol = 2 * DBL_MIN; // twice the underflow threshold: most accurate
  double *ab = calloc((size_t)ld * n, sizeof(double)), *bb = calloc((size_t)ld * n, sizeof(double));
  double *q = malloc(sizeof(double) * (size_t)n * n), *w = malloc(sizeof(double) * (size_t)n);
  double *work = malloc(sizeof(double) * 7 * (size_t)n), *sc = malloc(sizeof(double) * (size_t)n);
  double *zz = malloc(sizeof(double) * (size_t)n * (size_t)k);
  int *iwork = malloc(sizeof(int) * 5 * (size_t)n), *ifail = malloc(sizeof(int) * (size_t)n);
  int rc = -2;
  if (ab && bb && q && w && work && sc && zz && iwork && ifail) {
    rc = 0;
    for (int i = 0; i < n; i++) {
      if (!(K[(size_t)i * n + i] > 0)) rc = -1;
      sc[i] = rc ? 1 : 1 / sqrt(K[(size_t)i * n + i]);
    }
    for (int j = 0; j < n; j++) // upper band, column-major: AB(kd + i - j, j); A = S M S, B = S K S
      for (int i = j - kd > 0 ? j - kd : 0; i <= j; i++) {
        ab[(size_t)j * ld + (size_t)(kd + i - j)] = sc[i] * M[(size_t)i * n + j] * sc[j];
        bb[(size_t)j * ld + (size_t)(kd + i - j)] = sc[i] * K[(size_t)i * n + j] * sc[j];
      }
    if (!rc)
      dsbgvx_("V", "I", "U", &n, &kd, &kd, ab, &ld, bb, &ld, q, &n, &vl, &vu, &il, &iu, &abstol,
              &found, w, zz, &n, work, iwork, ifail, &info, 1, 1, 1);
    if (!rc) rc = info > n ? -1 : info != 0 || found != k || !(w[0] > 0) ? -3 : 0;
  }
  // mu ascending: lambda_c = 1 / mu_(k-1-c); z = S z' is K-normal (z^T K z = 1, z^T M z = mu),
  // so z / sqrt(mu) is M-normal
  for (int c = 0; !rc && c < k; c++) {
    const double mu = w[k - 1 - c], *zc = zz + (size_t)(k - 1 - c) * n;
    mbsReal *z = Z + (size_t)c * n, big = 0, f = 1 / sqrt(mu);
    lam[c] = 1 / mu;
    for (int i = 0; i < n; i++) {
      z[i] = zc[i] * sc[i] * f;
      if (fabs(z[i]) > fabs(big)) big = z[i];
    }
    if (big < 0)
      for (int i = 0; i < n; i++) z[i] = -z[i];
  }
  free(ab), free(bb), free(q), free(w), free(work), free(sc), free(zz), free(iwork), free(ifail);
  return rc;
}

// ---------------------------------------------------------------- the beam

void mbs_flexBeamDefault(mbsFlexBeamSpec *s) {
  memset(s, 0, sizeof *s);
  s->elements = 10;
  s->modes = 4;
}

void mbs_flexModalFree(mbsFlexModal *f) {
  free(f->M), free(f->K), free(f->Phi), free(f->x), free(f->omega_fixed), free(f->Sbar);
  free(f->rhoA), free(f->rhoJ), free(f->pos), free(f->pmass), free(f->pJ);
  memset(f, 0, sizeof *f);
}

// add the 2 x 2 or 4 x 4 block k (scaled by c) at the dofs idx (sign sg per dof) of an N x N matrix
static void mbs_flexAdd(mbsReal *A, int N, const int *idx, const mbsReal *sg, int nb,
                        const mbsReal *k, mbsReal c) {
  for (int a = 0; a < nb; a++)
    for (int b = 0; b < nb; b++)
      A[(size_t)idx[a] * N + idx[b]] += c * sg[a] * sg[b] * k[a * nb + b];
}

// the assembled stiffness and mass of the whole mesh, root included (N = 6 nfe)
static void mbs_flexAssemble(const mbsFlexBeamSpec *s, mbsReal G, mbsReal J, mbsReal *K, mbsReal *M,
                             int N) {
  int ne = s->elements;
  mbsReal l = s->length / ne, l2 = l * l;
  const mbsReal bar_k[4] = {1, -1, -1, 1}, bar_m[4] = {2, 1, 1, 2};
  const mbsReal bk[16] = {12,  6 * l,  -12, 6 * l,  6 * l, 4 * l2, -6 * l, 2 * l2,
                          -12, -6 * l, 12,  -6 * l, 6 * l, 2 * l2, -6 * l, 4 * l2};
  const mbsReal bm[16] = {156, 22 * l, 54,  -13 * l, 22 * l,  4 * l2,  13 * l,  -3 * l2,
                          54,  13 * l, 156, -22 * l, -13 * l, -3 * l2, -22 * l, 4 * l2};
  const mbsReal one[4] = {1, 1, 1, 1}, flip[4] = {1, -1, 1, -1};
  for (int e = 0; e < ne; e++) {
    int a = 6 * e, b = 6 * (e + 1);
    int ax[2] = {a + 0, b + 0}, tx[2] = {a + 3, b + 3};
    int xy[4] = {a + 1, a + 5, b + 1, b + 5}, xz[4] = {a + 2, a + 4, b + 2, b + 4};
    mbs_flexAdd(K, N, ax, one, 2, bar_k, s->E * s->area / l);
    mbs_flexAdd(M, N, ax, one, 2, bar_m, s->rho * s->area * l / 6);
    mbs_flexAdd(K, N, tx, one, 2, bar_k, G * J / l);
    mbs_flexAdd(M, N, tx, one, 2, bar_m, s->rho * (s->Iy + s->Iz) * l / 6);
    mbs_flexAdd(K, N, xy, one, 4, bk, s->E * s->Iz / (l * l2));
    mbs_flexAdd(M, N, xy, one, 4, bm, s->rho * s->area * l / 420);
    mbs_flexAdd(K, N, xz, flip, 4, bk, s->E * s->Iy / (l * l2));
    mbs_flexAdd(M, N, xz, flip, 4, bm, s->rho * s->area * l / 420);
  }
}

#define MBS_FLEX_FAIL(...) return mbs_errSet(MBS_ERR_INPUT, __VA_ARGS__)

mbsErr mbs_flexBeamReduce(const mbsFlexBeamSpec *s, mbsFlexModal *out) {
  memset(out, 0, sizeof *out);
  const mbsReal pos[] = {s->length, s->E, s->rho, s->area, s->Iy, s->Iz};
  const char *nm[] = {"length", "E", "rho", "area", "Iy", "Iz"};
  for (int k = 0; k < 6; k++)
    if (!(pos[k] > 0 && isfinite(pos[k])))
      MBS_FLEX_FAIL("flexible.beam.%s must be positive and finite (got %g)", nm[k], pos[k]);
  if (!(s->G >= 0 && isfinite(s->G)) || !(s->J >= 0 && isfinite(s->J)))
    MBS_FLEX_FAIL("flexible.beam: G and J must be >= 0 and finite (0: the default)");
  if (s->elements < 1 || s->elements > MBS_FLEX_MAX_ELEMENTS)
    MBS_FLEX_FAIL("flexible.beam.elements must be in [1, %d] (got %d)", MBS_FLEX_MAX_ELEMENTS,
                  s->elements);
  if (s->nnodes < 0 || s->nnodes > MBS_FLEX_MAX_NODES)
    MBS_FLEX_FAIL("flexible.nodes: at most %d nodes (got %d)", MBS_FLEX_MAX_NODES, s->nnodes);
  mbsReal G = s->G > 0 ? s->G : s->E / 2.6, J = s->J > 0 ? s->J : s->Iy + s->Iz;
  int ne = s->elements, nfe = ne + 1, N = 6 * nfe, n = N - 6; // n: the dofs besides the root
  int node[MBS_FLEX_MAX_NODES];
  for (int k = 0; k < s->nnodes; k++) {
    mbsReal f = s->node_x[k] / s->length * ne;
    int i = (int)lround(f);
    if (!isfinite(f) || fabs(f - i) > 1e-9 * ne || i < 0 || i > ne)
      MBS_FLEX_FAIL("flexible.nodes: node %d at x = %g m is not on a node of the %d-element mesh "
                    "of the %g m beam (nodes every %g m)",
                    k + 1, s->node_x[k], ne, s->length, s->length / ne);
    if (i == 0)
      MBS_FLEX_FAIL("flexible.nodes: node %d is at the root (x = 0), which is the body frame",
                    k + 1);
    for (int j = 0; j < k; j++)
      if (node[j] == i)
        MBS_FLEX_FAIL("flexible.nodes: nodes %d and %d are at one place", j + 1, k + 1);
    node[k] = i;
  }
  int nB = 6 * s->nnodes, nI = n - nB, kk = s->modes, m = nB + kk;
  if (kk < 0 || kk > nI)
    MBS_FLEX_FAIL("flexible.modes = %d: the %d-element mesh has %d interior dofs (at most that "
                  "many modes; more elements for more)",
                  kk, ne, nI);
  size_t NN = (size_t)N * N;
  mbsReal *Ka = calloc(NN, sizeof(mbsReal)), *Ma = calloc(NN, sizeof(mbsReal));
  int *cls = malloc(sizeof(int) * (size_t)(N + 1)), *loc = malloc(sizeof(int) * (size_t)(N + 1));
  mbsReal *KII = calloc((size_t)nI * nI + 1, sizeof(mbsReal));
  mbsReal *MII = calloc((size_t)nI * nI + 1, sizeof(mbsReal));
  mbsReal *lam = calloc((size_t)nI + 1, sizeof(mbsReal));
  mbsReal *V = calloc((size_t)nI * (size_t)kk + 1, sizeof(mbsReal)); // (nI x kk) by columns
  mbsReal *T = calloc((size_t)N * (size_t)(m + 1), sizeof(mbsReal)); // (N x m), root rows 0
  mbsReal *W = calloc((size_t)N * (size_t)(m + 1), sizeof(mbsReal));
  mbsErr e = MBS_OK;
  out->M = calloc((size_t)m * m + 1, sizeof(mbsReal));
  out->K = calloc((size_t)m * m + 1, sizeof(mbsReal));
  out->Phi = calloc((size_t)N * (size_t)(m + 1), sizeof(mbsReal));
  out->x = calloc((size_t)nfe, sizeof(mbsReal));
  out->omega_fixed = calloc((size_t)kk + 1, sizeof(mbsReal));
  out->Sbar = calloc(3 * (size_t)(m + 1), sizeof(mbsReal));
  out->rhoA = calloc((size_t)ne, sizeof(mbsReal));
  out->rhoJ = calloc((size_t)ne, sizeof(mbsReal));
  if (!out->rhoA || !out->rhoJ || !Ka || !Ma || !cls || !loc || !KII || !MII || !lam || !V || !T ||
      !W || !out->M || !out->K || !out->Phi || !out->x || !out->omega_fixed || !out->Sbar) {
    e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (flexible beam of %d elements)", ne);
    goto done;
  }
  mbs_flexAssemble(s, G, J, Ka, Ma, N);
  // dof classes: -1 root (clamped), 0.. boundary column, interior
  for (int d = 0; d < N; d++) cls[d] = d < 6 ? -1 : -2;
  for (int k = 0; k < s->nnodes; k++)
    for (int c = 0; c < 6; c++) cls[6 * node[k] + c] = 6 * k + c;
  for (int d = 0, i = 0; d < N; d++)
    if (cls[d] == -2) loc[d] = i++;
  for (int a = 0; a < N; a++)
    for (int b = 0; b < N; b++)
      if (cls[a] == -2 && cls[b] == -2) {
        KII[(size_t)loc[a] * nI + loc[b]] = Ka[(size_t)a * N + b];
        MII[(size_t)loc[a] * nI + loc[b]] = Ma[(size_t)a * N + b];
      }
  // the interior matrices are banded (2-node elements: kd <= 11 in node order)
  int kd = mbs_flexBandwidth(nI, KII), kdm = mbs_flexBandwidth(nI, MII);
  if (kdm > kd) kd = kdm;
  // constraint modes: K_II psi = -K_IB e_j (K_II factored once, in a copy, in its band)
  if (nB) {
    mbsReal *L = malloc(sizeof(mbsReal) * ((size_t)nI * nI + 1)),
            *r = malloc(sizeof(mbsReal) * ((size_t)nI + 1));
    if (!L || !r) {
      free(L), free(r);
      e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (flexible beam of %d elements)", ne);
      goto done;
    }
    memcpy(L, KII, sizeof(mbsReal) * (size_t)nI * nI);
    if (mbs_flexBandChol(nI, kd, L)) {
      free(L), free(r);
      e = mbs_errSet(MBS_ERR_NUMERIC,
                     "flexible beam: the interior stiffness is not positive definite");
      goto done;
    }
    for (int j = 0; j < nB; j++) {
      int bj = 0;
      while (cls[bj] != j) bj++;
      for (int d = 0; d < N; d++)
        if (cls[d] == -2) r[loc[d]] = -Ka[(size_t)d * N + bj];
      mbs_flexBandSolve(nI, kd, L, r); // L y = r, then L^T psi = y
      for (int d = 0; d < N; d++)
        T[(size_t)d * m + j] = cls[d] == j ? 1 : cls[d] == -2 ? r[loc[d]] : 0;
    }
    free(L), free(r);
  }
  // fixed-interface normal modes: the kk lowest of (K_II, M_II), M_II-normal
  if (kk) {
    int rc = mbs_flexBandEigLow(nI, kd, KII, MII, kk, lam, V);
    if (rc) {
      e = rc == -2 ? mbs_errSet(MBS_ERR_NOMEM, "out of memory (flexible beam of %d elements)", ne)
          : rc == -1
              ? mbs_errSet(MBS_ERR_NUMERIC,
                           "flexible beam: the interior stiffness or mass is not positive definite")
              : mbs_errSet(MBS_ERR_NUMERIC,
                           "flexible beam: LAPACK dsbgvx found not all of the %d lowest modes", kk);
      goto done;
    }
    for (int c = 0; c < kk; c++) {
      out->omega_fixed[c] = sqrt(fmax(lam[c], 0));
      for (int d = 0; d < N; d++)
        if (cls[d] == -2) T[(size_t)d * m + nB + c] = V[(size_t)c * nI + loc[d]];
    }
  }
  // M_r = T^T M T, K_r = T^T K T (W = M T, then K T)
  for (int pass = 0; pass < 2; pass++) {
    const mbsReal *A = pass ? Ka : Ma;
    mbsReal *R = pass ? out->K : out->M;
    for (int a = 0; a < N; a++)
      for (int c = 0; c < m; c++) {
        mbsReal t = 0;
        for (int b = 0; b < N; b++) t += A[(size_t)a * N + b] * T[(size_t)b * m + c];
        W[(size_t)a * m + c] = t;
      }
    for (int i = 0; i < m; i++)
      for (int j = 0; j < m; j++) {
        mbsReal t = 0;
        for (int a = 0; a < N; a++) t += T[(size_t)a * m + i] * W[(size_t)a * m + j];
        R[(size_t)i * m + j] = t;
      }
    for (int i = 0; i < m; i++)
      for (int j = 0; j < i; j++) {
        mbsReal t = 0.5 * (R[(size_t)i * m + j] + R[(size_t)j * m + i]);
        R[(size_t)i * m + j] = R[(size_t)j * m + i] = t;
      }
    if (!pass) // Sbar: the rigid translation fields r_k (u, v or w = 1 at every node) against M T
      for (int k = 0; k < 3; k++)
        for (int c = 0; c < m; c++) {
          mbsReal t = 0;
          for (int i = 0; i < nfe; i++) t += W[(size_t)(6 * i + k) * m + c];
          out->Sbar[(size_t)k * m + c] = t;
        }
  }
  memcpy(out->Phi, T, sizeof(mbsReal) * (size_t)N * m);
  for (int i = 0; i < nfe; i++) out->x[i] = s->length * i / ne;
  out->m = m, out->nfe = nfe;
  out->mass = s->rho * s->area * s->length;
  out->nbound = 6 * s->nnodes, out->nmodes = kk;
  for (int k = 0; k < ne; k++)
    out->rhoA[k] = s->rho * s->area, out->rhoJ[k] = s->rho * (s->Iy + s->Iz);
  (void)n;
done:
  free(Ka), free(Ma), free(cls), free(loc), free(KII), free(MII), free(lam), free(V), free(T),
      free(W);
  if (e) mbs_flexModalFree(out);
  return e;
}

int mbs_flexModalFrequencies(const mbsFlexModal *f, int k, mbsReal *omega) {
  int m = f->m;
  if (k > m) k = m;
  size_t mm = (size_t)m * m + 1;
  mbsReal *A = malloc(sizeof(mbsReal) * mm), *B = malloc(sizeof(mbsReal) * mm);
  mbsReal *lam = malloc(sizeof(mbsReal) * ((size_t)m + 1));
  int rc = -2;
  if (A && B && lam) {
    memcpy(A, f->K, sizeof(mbsReal) * (size_t)m * m);
    memcpy(B, f->M, sizeof(mbsReal) * (size_t)m * m);
    rc = mbs_symGenEig(m, A, B, lam, NULL);
    for (int i = 0; !rc && i < k; i++) omega[i] = sqrt(fmax(lam[i], 0));
  }
  free(A), free(B), free(lam);
  return rc;
}
