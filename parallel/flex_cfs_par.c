/// \file flex_cfs_par.c
/// The MPI half of src/flex_cfs.c (docs/flexible.md 12): the body ranges and the sum over the
/// ranks that joins them.
#include "flex_cfs_par.h"

static mbsErr mbsp_fcsSum(void *ctx, double *v, int n) {
  return mbsp_allreduceSum((mbspComm *)ctx, v, n);
}

mbsErr mbsp_flexCfsBind(mbspComm *comm, mbsFlexCfs *f, const mbsModel *m) {
  int P = mbsp_size(comm), r = mbsp_rank(comm);
  long nb = m->nbody;
  int b0 = (int)(nb * r / P), b1 = (int)(nb * (r + 1) / P);
  mbsCfsComm c = {.ctx = comm, .reduce = P > 1 ? mbsp_fcsSum : NULL};
  return mbsp_agreeErr(comm, mbs_flexCfsSetRange(f, b0, b1, &c));
}
