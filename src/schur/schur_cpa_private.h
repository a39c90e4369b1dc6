/// \file schur_cpa_private.h
/// What schur's critical-path graph files share (private to src/schur/schur_cpa*.c): the
/// helpers of schur_cpa.c that the tree solve of schur_cpa_solve.c uses.
#ifndef MBS_SCHUR_CPA_PRIVATE_H
#define MBS_SCHUR_CPA_PRIVATE_H

#include "cpa_private.h"

/// A point-to-point message of \p bytes after node \p from (time alpha + bytes beta, no
/// processor).
int mbs_cpaMsg(mbsCpaB *B, double bytes, int from);
/// The node of body l's joint transform / joint force as seen from rank r.
int mbs_cpaSeen(const mbsCpaB *B, const int *own, const int *ghost, int l, int r);
/// The remote children's stages on their parent's rank (in every tree solve).
void mbs_cpaSchGhosts(mbsCpaB *B, const mbsCpaKin *K, mbsCpaSch *X);

#endif
