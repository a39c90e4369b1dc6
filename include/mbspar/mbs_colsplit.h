/// \file mbs_colsplit.h
/// The columns of a dense tangent (the linearised K and M of `modes`, the Newton polish's K of
/// the flexible `static`) split over the parts of a job (docs/flexible.md 7, 8): part p evaluates
/// the columns [j0, j1) of mbs_colRange with the serial code, then a gather gives every part every
/// column. Each column is the same serial computation whichever part does it, so the gathered
/// matrix is bitwise the one-part matrix. The core never communicates: the parallel layer fills
/// the hooks (parallel/flex_verbs.c); NULL everywhere means one part.
#ifndef MBS_COLSPLIT_H
#define MBS_COLSPLIT_H

#include "mbs_error.h"
#include "mbs_types.h"

typedef struct mbsColSplit {
  int parts; ///< parts of the job (ranks)
  int part;  ///< this part
  /// \p rows: n rows of \p len values (row-major); this part filled the rows of its range
  /// (mbs_colRange(n, ...)). Agrees \p e over the parts first (nothing exchanged on an error),
  /// then every part holds every row. Returns the agreed code. Collective.
  mbsErr (*gather)(void *ctx, mbsErr e, mbsReal *rows, int n, int len);
  /// Agrees \p e over the parts (the failure paths of replicated work between two gathers).
  /// Collective.
  mbsErr (*agree)(void *ctx, mbsErr e);
  void *ctx;
} mbsColSplit;

/// The columns [*j0, *j1) of \p part of \p parts over n columns: contiguous, the sizes differing
/// by at most one, the larger ones first. \p cs NULL: [0, n). Local.
void mbs_colRange(const mbsColSplit *cs, int n, int *j0, int *j1);

#endif
