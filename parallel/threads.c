/// \file threads.c
/// The OpenMP thread count of each rank. Left alone, an OpenMP runtime starts one thread per cpu
/// of the process in every rank, so P ranks sharing C cores (mpirun --bind-to none, or ranks
/// without binding) run P x C threads, whose busy-waiting at every barrier competes with the
/// other ranks' work (issue 9 reported a 2-rank J-CG evaluation on 2 cores hundreds of times
/// slower; docs/cluster.md has what was measured since). mbspar's default, used when
/// OMP_NUM_THREADS is not set, is
/// max(1, cores of the rank's cpu set / ranks on its node whose cpu sets overlap it): ranks bound
/// to distinct cores keep all of theirs, ranks sharing every core split them. A user's
/// OMP_NUM_THREADS always wins; if it oversubscribes some rank's cores, rank 0 says so once.
///
/// Communication: one allgather of the cpu masks among the ranks of each node
/// (mbsp_localOverlap), one gather of four numbers per rank to rank 0 for the warning, and the
/// error agreement. No MPI and no hwloc here (comm.c, affinity.c).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "threads.h"

// bytes of the cpu masks compared between ranks: cpus 0 .. 4095
#define MBSP_MASK_BYTES 512

int mbsp_threadsParseEnv(const char *value) {
  if (!value) return 0;
  while (*value == ' ') value++;
  char *end;
  long v = strtol(value, &end, 10);
  if (end == value || v <= 0 || v > 1048576) return 0;
  while (*end == ' ') end++;
  return (*end == '\0' || *end == ',') ? (int)v : 0;
}

int mbsp_threadsDefault(int cores, int ranks_sharing) {
  if (ranks_sharing < 1) ranks_sharing = 1;
  int t = cores / ranks_sharing;
  return t < 1 ? 1 : t;
}

mbsErr mbsp_threadsInit(mbspComm *comm, mbspThreadChoice *out) {
  unsigned char mask[MBSP_MASK_BYTES];
  mbspThreadChoice c = {1, 0, 1, 1};
  int rank = mbsp_rank(comm), size = mbsp_size(comm), cores = 0, share = 1;
  MBS_CALL(mbsp_agreeErr(comm, mbsp_affinityCpuMask(mask, MBSP_MASK_BYTES, &cores)));
  // agreed over all ranks (the overlap agrees within a node only)
  MBS_CALL(mbsp_agreeErr(comm, mbsp_localOverlap(comm, mask, MBSP_MASK_BYTES, &share)));
  c.cores = cores > 0 ? cores : 1;
  c.ranks_sharing = share > 0 ? share : 1; // 0 only for cpus beyond the mask

  // OMP_NUM_THREADS wins; otherwise the default, set before the first parallel region
  int env = mbsp_threadsParseEnv(getenv("OMP_NUM_THREADS"));
  c.from_env = env > 0;
#ifdef _OPENMP
  omp_set_num_threads(c.from_env ? env : mbsp_threadsDefault(c.cores, c.ranks_sharing));
  c.threads = omp_get_max_threads();
#else
  c.threads = 1;
#endif
  mbsp_affinitySetThreadChoice(&c);
  if (out) *out = c;

  // one warning on rank 0 if OMP_NUM_THREADS oversubscribes the cores of any rank (ranks alone
  // outnumbering the cores, at one thread each, is MPI's oversubscription: not warned about)
  double mine[4] = {c.from_env && c.threads > 1 && (long)c.threads * c.ranks_sharing > c.cores,
                    c.threads, c.ranks_sharing, c.cores};
  double *all = rank == 0 ? malloc((size_t)size * sizeof mine) : NULL;
  MBS_CALL(
      mbsp_agreeErr(comm, rank == 0 && !all ? mbs_errSet(MBS_ERR_NOMEM, "out of memory") : MBS_OK));
  mbsErr e = mbsp_gather(comm, mine, 4, rank == 0 ? all : mine);
  for (int r = 0; !e && rank == 0 && r < size; r++) {
    const double *v = all + 4 * r;
    if (v[0] == 0) continue;
    int t = (int)v[1], sh = (int)v[2], co = (int)v[3];
    fprintf(stderr,
            "mbspar: warning: OMP_NUM_THREADS=%d with %d rank%s sharing %d core%s (rank %d): %d "
            "threads on %d core%s oversubscribe them; without OMP_NUM_THREADS each rank would "
            "run %d\n",
            t, sh, sh == 1 ? "" : "s", co, co == 1 ? "" : "s", r, t * sh, co, co == 1 ? "" : "s",
            mbsp_threadsDefault(co, sh));
    break;
  }
  free(all);
  return mbsp_agreeErr(comm, e);
}
