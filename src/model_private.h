/// \file model_private.h
/// What model.c shares with model_build.c (private to src/model*.c).
#ifndef MBS_MODEL_PRIVATE_H
#define MBS_MODEL_PRIVATE_H

#include "mbspar/mbs_model.h"

/// A generator's names: prefix + 1..n from the global id base (mbsModel.prefix).
struct mbsModelPrefix {
  char *prefix;
  int base, n;
  int every; ///< > 0: after every every-th body one more (a ladder's rungs) is not of the prefix
};

/// 1 if the n values of x are all finite.
int mbs_finite(const mbsReal *x, int n);
/// The global id of the virtual (not built) body \p name of a local build, or -1.
int mbs_vnameGid(const mbsModel *m, const char *name);
/// Note \p count bodies of joint type \p type in the runs of equal joint types.
mbsErr mbs_modelRun(mbsModel *m, int type, int count);
/// Note that body \p gid hangs on \p parent (a cut of a local build's runs).
mbsErr mbs_modelCutNote(mbsModel *m, int gid, int parent);
/// Subset builds with loops (mbs_modelTrackLoops): note the depth and nearest owned ancestor of
/// \p count bodies from \p gid (the first on \p parent; a chain if \p chain, else a skipped
/// subtree).
void mbs_modelTrackBodies(mbsModel *m, int gid, int parent, int count, int chain);

#endif
