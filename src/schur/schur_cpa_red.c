/// \file schur_cpa_red.c
/// The critical-path graph of schur's contraction over rank intervals (parallel/schur_par_red.c,
/// docs/formulation.md 4.4) and the solver's choice between it and the component-tree passes.
#include <stdlib.h>
#include <string.h>
#include "cpa_private.h"
#include "schur_cpa_private.h"
#include "schur_private.h"

// the component-tree passes' depth (schur_par_merge.c mbsp_schurPassDepth)
int mbs_cpaSchPassDepth(const mbsCpaB *B, const mbsCpaRank *R, int P) {
  int *dep = calloc((size_t)B->m->nbody + 1, sizeof(int)), depth = 0;
  if (!dep) return -1;
  for (int r = P - 1; r >= 0; r--) { // children's components live on higher ranks
    const mbsSchur *v = &R[r].rk->view;
    for (int c = v->ncomp - 1; c >= 0; c--) {
      const mbsSchurComp *cp = v->comp + c;
      int d = 0;
      for (int q = cp->p0; q < cp->p0 + cp->np; q++)
        d = dep[v->port_body[q]] > d ? dep[v->port_body[q]] : d;
      if (cp->up) dep[cp->root] = d + 1, depth = d + 1 > depth ? d + 1 : depth;
    }
  }
  free(dep);
  return depth;
}

// the solver's choice for a decomposition that is not a chain (parallel/schur_par.c): the
// component-tree passes where they are at most ceil(log2 P) messages deep, else the contraction;
// MBSPAR_SCHUR_MERGE=pass / tree force one. -1: out of memory
int mbs_cpaSchUseRed(const mbsCpaB *B, const mbsCpaRank *R, int P) {
  const char *sm = getenv("MBSPAR_SCHUR_MERGE");
  if (sm && !strcmp(sm, "pass")) return 0;
  if (sm && !strcmp(sm, "tree")) return 1;
  int K = 0, depth = mbs_cpaSchPassDepth(B, R, P);
  while ((1 << K) < P) K++;
  return depth < 0 ? -1 : depth > K;
}

// ---- the contraction over rank intervals (parallel/schur_par_red.c): the clusters' cut joints
// (child body, lambdas, child rank, parent rank) combined round by round as the solver does at
// its setup, for the sizes of the merges and messages
typedef struct {
  int b, l, cr, pr;
} mbsCpaRj;

// combine a cluster's joints (*pa, *na) with (b, nb) over the interval [lo, hi): the kept joints
// stay in *pa (*na of them), *nk and *ne their unknowns and the eliminated ones'
static int mbs_cpaRedCombine(mbsCpaRj **pa, int *na, const mbsCpaRj *b, int nb, int lo, int hi,
                             int *nk, int *ne) {
  int n = *na + nb, nu = 0;
  mbsCpaRj *u = malloc(sizeof *u * (size_t)(n ? n : 1));
  if (!u) return 0;
  for (int i = 0; i < n; i++) {
    const mbsCpaRj *j = i < *na ? *pa + i : b + (i - *na);
    int k = 0;
    while (k < nu && u[k].b != j->b) k++;
    if (k == nu) u[nu++] = *j;
  }
  int m = 0;
  *nk = *ne = 0;
  for (int k = 0; k < nu; k++) {
    if (u[k].cr >= lo && u[k].cr < hi && u[k].pr >= lo && u[k].pr < hi) {
      *ne += u[k].l;
      continue;
    }
    *nk += u[k].l;
    u[m++] = u[k];
  }
  free(*pa);
  *pa = u, *na = m;
  return 1;
}

mbsErr mbs_cpaSchRed(mbsCpaB *B, mbsCpaRank *R, int P) {
  const mbsModel *m = B->m;
  int K = 0;
  while ((1 << K) < P) K++;
  B->iface_rounds = K;
  mbsCpaRj **J = calloc((size_t)P, sizeof *J);
  int *nj = calloc((size_t)P, sizeof(int)), *up = malloc(sizeof(int) * (size_t)P);
  int *down = malloc(sizeof(int) * (size_t)P);
  int *dim = malloc(sizeof(int) * 3 * (size_t)P * (size_t)(K + 1)); // per rank, level: nk ne nb
  int ok = J && nj && up && down && dim;
  for (int r = 0; r < P && ok; r++) { // the own components: level 0
    const mbsSchur *v = &R[r].rk->view;
    int cnt = 0, lo = R[r].b0;
    for (int c = 0; c < v->ncomp; c++) cnt += 1 + v->comp[c].np;
    J[r] = malloc(sizeof(mbsCpaRj) * (size_t)(cnt ? cnt : 1));
    if (!J[r]) {
      ok = 0;
      break;
    }
    long long f = 0;
    int nin = 0;
    for (int c = 0; c < v->ncomp; c++) {
      const mbsSchurComp *cp = v->comp + c;
      f += mbs_flopSchurAdd(cp->n);
      if (cp->up)
        J[r][nin++] = (mbsCpaRj){cp->root, cp->nup, r, B->owner[m->body_parent[cp->root]]};
      for (int q = cp->p0; q < cp->p0 + cp->np; q++) {
        int l = v->port_body[q];
        J[r][nin++] = (mbsCpaRj){l, m->body_lamnum[l], B->owner[l], r};
      }
    }
    int *d = dim + 3 * ((size_t)r * (K + 1));
    nj[r] = nin;
    ok = mbs_cpaRedCombine(&J[r], &nj[r], NULL, 0, r, r + 1, &d[0], &d[1]);
    d[2] = 0;
    int x =
        mbs_cpaNodeOn(B, MBS_CPA_SCH_MERGE, lo, f + mbs_flopSchurReduce(d[0], d[1]), -1, -1, -1);
    for (int c = 0; c < v->ncomp; c++) mbs_cpaDep(B, R[r].vsys[c], x);
    mbs_cpaDep(B, R[r].fac_end, x);
    up[r] = x;
  }
  // contraction: round k, rank r (r mod 2^(k+1) = 0) merges rank r + 2^k's cluster
  for (int k = 0; k < K && ok; k++) {
    int dd = 1 << k;
    for (int r = 0; r + dd < P && ok; r += 2 * dd) {
      int s = r + dd, hi = r + 2 * dd < P ? r + 2 * dd : P;
      int *ds = dim + 3 * ((size_t)s * (K + 1) + k), *d = dim + 3 * ((size_t)r * (K + 1) + k + 1);
      int nks = ds[0], nka = dim[3 * ((size_t)r * (K + 1) + k)];
      int msg = mbs_cpaMsg(B, (double)(nks * nks + nks) * sizeof(double), up[s]);
      ok = mbs_cpaRedCombine(&J[r], &nj[r], J[s], nj[s], r, hi, &d[0], &d[1]);
      d[2] = nks;
      long long f = mbs_flopSchurAdd(nka) + mbs_flopSchurAdd(nks) + mbs_flopSchurReduce(d[0], d[1]);
      int x = mbs_cpaNodeOn(B, MBS_CPA_SCH_MERGE, R[r].b0, f, -1, -1, -1);
      mbs_cpaDep(B, up[r], x);
      mbs_cpaDep(B, msg, x);
      up[r] = x;
    }
    // a rank that sends in round k keeps its level-k dims; ranks idle this round carry them up
    for (int r = 0; r < P; r++)
      if (r % (2 * dd) == 0 && r + dd >= P)
        memcpy(dim + 3 * ((size_t)r * (K + 1) + k + 1), dim + 3 * ((size_t)r * (K + 1) + k),
               3 * sizeof(int)),
            dim[3 * ((size_t)r * (K + 1) + k + 1) + 1] = 0;
  }
  // expansion: the rounds backwards, the lambdas of the partner's joints sent after each
  for (int r = 0; r < P; r++) down[r] = r == 0 ? up[0] : -1;
  for (int k = K - 1; k >= 0 && ok; k--) {
    int dd = 1 << k;
    for (int r = 0; r + dd < P; r += 2 * dd) {
      const int *d = dim + 3 * ((size_t)r * (K + 1) + k + 1);
      int x =
          mbs_cpaNodeOn(B, MBS_CPA_SCH_SOLVE, R[r].b0, mbs_flopSchurExpand(d[0], d[1]), -1, -1, -1);
      mbs_cpaDep(B, down[r], x);
      mbs_cpaDep(B, up[r], x);
      down[r + dd] = mbs_cpaMsg(B, (double)d[2] * sizeof(double), x);
      down[r] = x;
    }
  }
  for (int r = 0; r < P && ok; r++) { // the own level: the components' port lambdas
    const int *d = dim + 3 * ((size_t)r * (K + 1));
    int x =
        mbs_cpaNodeOn(B, MBS_CPA_SCH_SOLVE, R[r].b0, mbs_flopSchurExpand(d[0], d[1]), -1, -1, -1);
    mbs_cpaDep(B, down[r], x);
    mbs_cpaDep(B, up[r], x);
    R[r].if_end = x;
  }
  for (int r = 0; J && r < P; r++) free(J[r]);
  free(J), free(nj), free(up), free(down), free(dim);
  return ok ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
}
