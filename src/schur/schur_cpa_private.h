/// \file schur_cpa_private.h
/// What schur's critical-path graph files share (private to src/schur/schur_cpa*.c): the
/// helpers of schur_cpa.c that the tree solve of schur_cpa_solve.c uses.
#ifndef MBS_SCHUR_CPA_PRIVATE_H
#define MBS_SCHUR_CPA_PRIVATE_H

#include "cpa_private.h"

/// The node of body l's joint transform / joint force as seen from rank r.
int mbs_cpaSeen(const mbsCpaB *B, const int *own, const int *ghost, int l, int r);
/// The remote children's stages on their parent's rank (in every tree solve).
void mbs_cpaSchGhosts(mbsCpaB *B, const mbsCpaKin *K, mbsCpaSch *X);

/// The overlapped factor's nodes of body b of rank r (segment s; spk: the spike chain per
/// component) if b is in the rank's slices (else 0, nothing built): its inertia part after the
/// rank's local maps, its bias part after the kinematics.
int mbs_cpaPreBody(mbsCpaB *B, const mbsCpaKin *K, mbsCpaSch *X, int r, const mbsSchur *s, int b,
                   int *spk);

/// schur's choice for a decomposition that is not a chain: 1 the contraction over rank
/// intervals, 0 the component-tree passes, -1 out of memory (schur_cpa_red.c).
int mbs_cpaSchUseRed(const mbsCpaB *B, const mbsCpaRank *R, int P);
/// The component-tree passes' depth (cross-rank hops of the longest message chain; -1: out of
/// memory).
int mbs_cpaSchPassDepth(const mbsCpaB *B, const mbsCpaRank *R, int P);
/// The contraction's nodes and messages after the rank systems (R[r].vsys, fac_end); sets
/// R[r].if_end and B->iface_rounds.
mbsErr mbs_cpaSchRed(mbsCpaB *B, mbsCpaRank *R, int P);
/// The kinematics prefix of a chain with radix k (comm.c mbsp_exscan; schur_cpa_scan.c): inc[r]
/// the node of rank r's record on entry (its inclusive value's on return), pre[r] -1 on entry,
/// the node of its exclusive prefix on return (-1 on rank 0).
mbsErr mbs_cpaKinScan(mbsCpaB *B, const mbsCpaRank *R, int P, int k, int *inc, int *pre);
/// The cut-joint scan of a chain with radix k (mbsp_schurScan; schur_cpa_scan.c) after the rank
/// systems (R[r].vsys, fac_end); sets R[r].if_end and B->iface_rounds (ceil(log_k P)).
mbsErr mbs_cpaSchScan(mbsCpaB *B, mbsCpaRank *R, int P, int k);

#endif
