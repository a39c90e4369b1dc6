/// \file natural_cpa.c
/// The critical-path graph of one evaluation of the natural-coordinate formulation's O(n) solver
/// (src/natural_tree.c, docs/natural.md 5 and docs/cpa.md "natural"), one rank, trees only: the
/// joint formulation's position and velocity stages (the natural coordinates come from them),
/// then per body the assembly (its p, ṗ, forces, rigid-body and joint rows), the backward pass
/// leaves first (a body's block factored and solved after its children's joints have been
/// absorbed: the seed's block-oriented rational Cholesky), the forward pass parents first (λ of
/// the joint, x of the body), and the recovery of q̈ from p̈ (docs/natural.md 4). The flop counts
/// are estimates from the kernels' operation structure (k: the joint's rows, at most 6), not
/// counted by the flop harness.
#include "cpa_private.h"

// assembly of body b: p, ṗ from the stages (12 + 36), gravity (12), the rigid rows and γ (6 x 3
// dots), the joint's k rows (a point: 3 rows of C_r, a dot: 2 vectors of 9 flops and γ)
static long long mbs_cpaNatAsm(int k) {
  return 150 + 45LL * k;
}

// the block of body b: the tangent inertia Nᵀ M N (about 200), each child's joint absorbed
// ((J_p N)ᵀ D⁻¹ (J_p N): k × 6 products and the k × k solve), the 6 × 6 Cholesky (~90), then for
// its own joint V = (Nᵀ M' N)⁻¹ (J_c N)ᵀ (k 6 × 6 solves), D = (J_c N) V and its Cholesky, and the
// backward solve of its right side (z = B⁻¹ r, the parent's right side updated)
static long long mbs_cpaNatFactor(const mbsModel *m, int b) {
  long long f = 200 + 90 + 150;
  for (int q = 0; q < m->body_childnum[b]; q++) {
    long long kc = m->body_lamnum[m->child_list[m->body_childadr[b] + q]];
    f += 144 * kc + 72 * kc * kc / 6 + 2 * kc * kc + 24 * kc;
  }
  long long k = m->body_lamnum[b];
  return f + 144 * k + 12 * k * k + k * k * k / 3 + 36 * k;
}

// forward: λ_j from D (k × k triangular solves and the parent's x), x_b = z_b − N V λ_j
static long long mbs_cpaNatFwd(int k) {
  return 60 + 2LL * k * k + 24LL * k + 72LL * k + 36;
}

mbsErr mbs_cpaNaturalGraph(mbsCpaB *B, mbsCpaKin *K) {
  const mbsModel *m = B->m;
  int n = m->nbody;
  mbs_cpaKinStage(B, K);
  int *asmn = K->scr, *fac = K->scr + n, *fwd = K->scr + 2 * n;
  for (int b = 0; b < n; b++) { // the assembly reads the body's and its parent's stages
    int p = m->body_parent[b];
    asmn[b] = mbs_cpaNode(B, MBS_CPA_NAT_ASM, b, mbs_cpaNatAsm(m->body_lamnum[b]), PH_P2, PH_P2);
    mbs_cpaDep(B, K->pose[b], asmn[b]);
    mbs_cpaDep(B, K->v[b], asmn[b]);
    mbs_cpaDep(B, K->force[b], asmn[b]);
    if (p >= 0) mbs_cpaDep(B, K->pose[p], asmn[b]), mbs_cpaDep(B, K->v[p], asmn[b]);
  }
  for (int b = n - 1; b >= 0; b--) { // backward: after the children (a parent precedes them)
    fac[b] = mbs_cpaNode(B, MBS_CPA_NAT_FACTOR, b, mbs_cpaNatFactor(m, b), PH_P2, PH_P2);
    mbs_cpaDep(B, asmn[b], fac[b]);
    for (int q = 0; q < m->body_childnum[b]; q++) {
      int c = m->child_list[m->body_childadr[b] + q];
      mbs_cpaDep(B, fac[c], fac[b]);
      mbs_cpaDep(B, asmn[c], fac[b]); // (the child's joint rows on b)
    }
  }
  for (int b = 0; b < n; b++) { // forward: parents first
    int p = m->body_parent[b];
    fwd[b] = mbs_cpaNode(B, MBS_CPA_NAT_FWD, b, mbs_cpaNatFwd(m->body_lamnum[b]), PH_P3, PH_P3);
    mbs_cpaDep(B, fac[b], fwd[b]);
    if (p >= 0) mbs_cpaDep(B, fwd[p], fwd[b]);
  }
  for (int b = 0; b < n; b++) { // q̈ from p̈ (the body's and its parent's): ~250 flops a body
    int p = m->body_parent[b];
    int q = mbs_cpaNode(B, MBS_CPA_NAT_QDD, b, 250 + 12LL * m->body_dofnum[b], PH_FIN, PH_FIN);
    mbs_cpaDep(B, fwd[b], q);
    if (p >= 0) mbs_cpaDep(B, fwd[p], q);
  }
  return MBS_OK;
}
