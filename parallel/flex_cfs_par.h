/// \file flex_cfs_par.h
/// The constraint-force system with flexible bodies over the ranks (src/flex_cfs.c;
/// docs/flexible.md 12): every rank holds the whole model and owns a contiguous body range; the
/// operator's exchanges and the dots are sums over the ranks.
#ifndef MBSP_FLEX_CFS_PAR_H
#define MBSP_FLEX_CFS_PAR_H

#include "mbspar/mbs_parallel.h"
#include "flex_cfs.h"

/// Give f this rank's range of the bodies (equal counts, in topological order) and the sums
/// over comm. Collective.
mbsErr mbsp_flexCfsBind(mbspComm *comm, mbsFlexCfs *f, const mbsModel *m);

#endif
