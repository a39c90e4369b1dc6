/// \file schur_cpa_scan.c
/// The two log-depth scans of a chain decomposition in schur's critical-path graph, as the
/// engine runs them with radix k (mbs_scanRadix; docs/formulation.md 3.3, 4.4): the kinematics
/// prefix (parallel/comm.c mbsp_exscan) and the cut-joint scan (parallel/schur_par_merge.c
/// mbsp_schurScan). In round i (d = k^i) rank r receives the windows of r - jd (and, in the
/// cut-joint scan, of r + jd), j = 1 .. k - 1, one message each, joins them with each other in
/// rank order and merges the result into its values; ceil(log_k P) rounds. k = 2 gives the
/// recursive-doubling graphs of before (the same nodes, edges and node order).
#include <stdlib.h>
#include "cpa_private.h"
#include "flops.h"
#include "schur_cpa_private.h"

mbsErr mbs_cpaKinScan(mbsCpaB *B, const mbsCpaRank *R, int P, int k, int *inc, int *pre) {
  int *nxt = malloc((size_t)P * sizeof(int));
  if (!nxt) return mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  for (int d = 1; d < P; d *= k) {
    for (int r = 0; r < P; r++) nxt[r] = inc[r];
    for (int r = d; r < P; r++) {
      // the windows of r - d, r - 2d, ...: one message each, joined in rank order
      // (mbsp_kinThen: in_0 <- in_j then in_0)
      int win = -1;
      for (int j = 1; j < k && r - j * d >= 0; j++) {
        int msg = mbs_cpaMsg(B, 30 * sizeof(double), inc[r - j * d]);
        if (j == 1) {
          win = msg;
          continue;
        }
        int c = mbs_cpaNodeOn(B, MBS_CPA_KIN_SCAN, R[r].b0, MBS_FL_KIN_THEN, -1, -1, -1);
        mbs_cpaDep(B, msg, c);
        mbs_cpaDep(B, win, c);
        win = c;
      }
      // ... in front of the prefix and the inclusive value
      if (pre[r] >= 0) {
        int c2 = mbs_cpaNodeOn(B, MBS_CPA_KIN_SCAN, R[r].b0, MBS_FL_KIN_THEN, -1, -1, -1);
        mbs_cpaDep(B, win, c2);
        mbs_cpaDep(B, pre[r], c2);
        pre[r] = c2;
      } else {
        pre[r] = win;
      }
      int c1 = mbs_cpaNodeOn(B, MBS_CPA_KIN_SCAN, R[r].b0, MBS_FL_KIN_THEN, -1, -1, -1);
      mbs_cpaDep(B, win, c1);
      mbs_cpaDep(B, inc[r], c1);
      nxt[r] = c1;
    }
    for (int r = 0; r < P; r++) inc[r] = nxt[r];
  }
  free(nxt);
  return MBS_OK;
}

// a pair system's dimensions (na < 0: empty)
typedef struct {
  int na, nb;
} mbsCpaDim;

mbsErr mbs_cpaSchScan(mbsCpaB *B, mbsCpaRank *R, int P, int k) {
  const int k1 = k - 1;
  B->iface_rounds = mbs_cpaLogK(P, k);
  // per rank the nodes of acc, excl, sacc, sexcl and their dimensions (4 each), those of acc and
  // sacc before the round, and per rank and j its messages down (to r + jd) and up (to r - jd)
  int *nd = malloc(4 * (size_t)P * sizeof(int)), *msg = malloc(2 * (size_t)k1 * P * sizeof(int));
  mbsCpaDim *dim = malloc(6 * (size_t)P * sizeof *dim);
  if (!nd || !msg || !dim) {
    free(nd), free(msg), free(dim);
    return mbs_errSet(MBS_ERR_NOMEM, "cpa: out of memory");
  }
  int *an = nd, *xn = nd + P, *sn = nd + 2 * P, *sxn = nd + 3 * P;
  int *mdn = msg, *mup = msg + (size_t)k1 * P;
  mbsCpaDim *acc = dim, *excl = dim + P, *sacc = dim + 2 * P, *sexcl = dim + 3 * P;
  mbsCpaDim *oacc = dim + 4 * P, *osacc = dim + 5 * P;
  for (int r = 0; r < P; r++) {
    const mbsSchurComp *vc = R[r].rk->view.comp;
    acc[r] = sacc[r] = (mbsCpaDim){vc->nup, vc->nc};
    excl[r] = sexcl[r] = (mbsCpaDim){-1, 0};
    int x = mbs_cpaNodeOn(B, MBS_CPA_SCH_MERGE, R[r].b0, 0, -1, -1, -1);
    mbs_cpaDep(B, R[r].vsys[0], x);
    mbs_cpaDep(B, R[r].fac_end, x);
    an[r] = sn[r] = x, xn[r] = sxn[r] = -1;
  }
  for (int d = 1; d < P; d *= k) {
    const int last = d >= (P + k - 1) / k; // acc and sacc not merged: nothing reads them
    for (int r = 0; r < P; r++) {          // a packed pair's data: na, nb, C, g (mbsp_schurScan)
      double bdn = sizeof(double) * (2 + (acc[r].na + acc[r].nb) * (acc[r].na + acc[r].nb + 1));
      double bup = sizeof(double) * (2 + (sacc[r].na + sacc[r].nb) * (sacc[r].na + sacc[r].nb + 1));
      for (int j = 1; j <= k1; j++)
        mdn[(size_t)k1 * r + j - 1] = r + j * d < P ? mbs_cpaMsg(B, bdn, an[r]) : -1;
      for (int j = 1; j <= k1; j++)
        mup[(size_t)k1 * r + j - 1] = r - j * d >= 0 ? mbs_cpaMsg(B, bup, sn[r]) : -1;
      oacc[r] = acc[r], osacc[r] = sacc[r];
    }
    for (int r = 0; r < P; r++) {
      if (r - d >= 0) { // the windows of r - jd joined (tmp <- window . tmp), then in front
        mbsCpaDim t = oacc[r - d];
        int w = mdn[(size_t)k1 * (r - d)];
        for (int j = 2; j <= k1 && r - j * d >= 0; j++) {
          mbsCpaDim u = oacc[r - j * d];
          int c = mbs_cpaNodeOn(B, MBS_CPA_SCH_MERGE, R[r].b0, mbs_flopPairMerge(u.na, u.nb, t.nb),
                                -1, -1, -1);
          mbs_cpaDep(B, mdn[(size_t)k1 * (r - j * d) + j - 1], c);
          mbs_cpaDep(B, w, c);
          w = c, t.na = u.na;
        }
        // excl = tmp . excl (a copy when excl is empty), acc = tmp . acc
        long long fx = excl[r].na < 0 ? 0 : mbs_flopPairMerge(t.na, t.nb, excl[r].nb);
        int x1 = mbs_cpaNodeOn(B, MBS_CPA_SCH_MERGE, R[r].b0, fx, -1, -1, -1);
        mbs_cpaDep(B, w, x1);
        mbs_cpaDep(B, xn[r], x1);
        excl[r] = excl[r].na < 0 ? t : (mbsCpaDim){t.na, excl[r].nb};
        xn[r] = x1;
        if (!last) {
          int x2 = mbs_cpaNodeOn(B, MBS_CPA_SCH_MERGE, R[r].b0,
                                 mbs_flopPairMerge(t.na, t.nb, acc[r].nb), -1, -1, -1);
          mbs_cpaDep(B, w, x2);
          mbs_cpaDep(B, an[r], x2);
          acc[r].na = t.na;
          an[r] = x2;
        }
      }
      if (r + d < P) { // the windows of r + jd joined (tmp <- tmp . window), then behind
        mbsCpaDim t = osacc[r + d];
        int w = mup[(size_t)k1 * (r + d)];
        for (int j = 2; j <= k1 && r + j * d < P; j++) {
          mbsCpaDim u = osacc[r + j * d];
          int c = mbs_cpaNodeOn(B, MBS_CPA_SCH_MERGE, R[r].b0, mbs_flopPairMerge(t.na, t.nb, u.nb),
                                -1, -1, -1);
          mbs_cpaDep(B, mup[(size_t)k1 * (r + j * d) + j - 1], c);
          mbs_cpaDep(B, w, c);
          w = c, t.nb = u.nb;
        }
        // sexcl = sexcl . tmp, sacc = sacc . tmp
        long long fx = sexcl[r].na < 0 ? 0 : mbs_flopPairMerge(sexcl[r].na, t.na, t.nb);
        int x1 = mbs_cpaNodeOn(B, MBS_CPA_SCH_MERGE, R[r].b0, fx, -1, -1, -1);
        mbs_cpaDep(B, w, x1);
        mbs_cpaDep(B, sxn[r], x1);
        sexcl[r] = sexcl[r].na < 0 ? t : (mbsCpaDim){sexcl[r].na, t.nb};
        sxn[r] = x1;
        if (!last) {
          int x2 = mbs_cpaNodeOn(B, MBS_CPA_SCH_MERGE, R[r].b0,
                                 mbs_flopPairMerge(sacc[r].na, t.na, t.nb), -1, -1, -1);
          mbs_cpaDep(B, w, x2);
          mbs_cpaDep(B, sn[r], x2);
          sacc[r].nb = t.nb;
          sn[r] = x2;
        }
      }
    }
  }
  for (int r = 0; r < P; r++) { // own system with both sides added, solved
    const mbsSchurComp *vc = R[r].rk->view.comp;
    long long f = (excl[r].na >= 0 ? mbs_flopSchurAdd(excl[r].nb) : 0) +
                  (sexcl[r].na >= 0 ? mbs_flopSchurAdd(sexcl[r].na) : 0) +
                  (vc->n > 0 ? mbs_flopSchurReduce(0, vc->n) + mbs_flopSchurExpand(0, vc->n) : 0);
    int sv = mbs_cpaNodeOn(B, MBS_CPA_SCH_SOLVE, R[r].b0, f, -1, -1, -1);
    mbs_cpaDep(B, R[r].vsys[0], sv);
    mbs_cpaDep(B, xn[r], sv);
    mbs_cpaDep(B, sxn[r], sv);
    mbs_cpaDep(B, R[r].fac_end, sv);
    R[r].if_end = sv;
  }
  free(nd), free(msg), free(dim);
  return MBS_OK;
}
