/// \file mbs_checkpoint.h
/// The checkpoint format of `mbspar run` (docs/outputs.md) and its reader, without MPI: a fixed
/// header (magic, version, sizes, model fingerprint, integrator state, warm-start bookkeeping),
/// then q (nq), qd (nv), the warm-start history (nstage x MBS_WARM_HIST x nlam doubles), with
/// integrator.method = abm the Adams history (mbs_ckptAbmDoubles), and a 64-bit FNV-1a checksum
/// of everything before it. Native byte order (a checkpoint is read back
/// on the machine kind that wrote it).
///
/// parallel/sim.c writes checkpoints (rank 0, after gathering) and reads them on every rank with
/// mbs_ckptParse + mbs_ckptApply: the same bytes give the same verdict on every rank. The reader
/// is a pure function of the bytes and the model, so fuzz/ fuzzes it directly.
#ifndef MBS_CHECKPOINT_H
#define MBS_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>
#include "mbs_error.h"
#include "mbs_model.h"
#include "mbs_state.h"

#define MBS_CKPT_MAGIC     "MBSPCKP1"
#define MBS_CKPT_VERSION   1u
#define MBS_CKPT_FNV_BASIS 14695981039346656037ULL ///< FNV-1a 64-bit offset basis

/// The fixed-size head of a checkpoint file (464 bytes, no padding on LP64).
typedef struct {
  char magic[8];                       ///< MBS_CKPT_MAGIC
  uint32_t version;                    ///< MBS_CKPT_VERSION
  int32_t stagnated;                   ///< counter: solves that stopped stagnated (in nonconv)
  int32_t nbody, nq, nv, nlam;         ///< model sizes
  int32_t ranks, solver, integrator;   ///< how the run was made (informational)
  int32_t have_spec;                   ///< engine: spectrum estimate valid (0/1)
  uint64_t fingerprint;                ///< mbs_ckptFingerprint of the model
  double t, dt_next, work;             ///< time, next step, work of the nonconservative forces
  double lmin, lmax, jacobi_omega;     ///< engine: spectrum bounds, Jacobi relaxation
  int64_t step, evals, iters, nonconv; ///< counters
  int32_t nstage;                      ///< warm-start slots (integrator stages)
  int32_t restarts;                    ///< counter: restarts from b - A x (jcg, chebyshev, petsc)
  int32_t nhist[MBS_MAX_STAGE];        ///< valid entries per slot
  int32_t hist_head[MBS_MAX_STAGE];    ///< newest entry per slot
  double hist_t[MBS_MAX_STAGE][MBS_WARM_HIST]; ///< times of the stored solutions
} mbsCkptHeader;

/// Bytes of a checkpoint of model \p m with \p nstage warm-start slots (header, q, qd, history,
/// the Adams history when m's integrator is abm, checksum).
size_t mbs_ckptSize(const mbsModel *m, int nstage);
/// Doubles of the Adams integrator's section (0 unless m's integrator.method is abm):
/// MBS_ABM_NSCALAR scalars (mbs_abmSave), then f and the MBS_ABM_KMAX + 2 rows of phi, each a
/// vector of the whole state in the order q (nq), qd (nv).
size_t mbs_ckptAbmDoubles(const mbsModel *m);
/// Byte offset of that section (after the warm-start history).
size_t mbs_ckptAbmOffset(const mbsModel *m, int nstage);

/// One FNV-1a 64-bit step over \p n bytes, starting from \p h (MBS_CKPT_FNV_BASIS at first).
uint64_t mbs_ckptHash(uint64_t h, const void *p, size_t n);

/// Fingerprint of everything in the model that changes the dynamics (not the initial state).
uint64_t mbs_ckptFingerprint(const mbsModel *m);

/// Write the checksum of the first \p bytes - 8 bytes of \p buf into its last 8 bytes.
void mbs_ckptSeal(unsigned char *buf, size_t bytes);

/// Validate the bytes of a checkpoint for model \p m (integrator with \p nstage warm-start slots;
/// its t_end bounds the checkpoint time) and copy out the header. Pure: no I/O, no MPI, no
/// allocation; any byte string is safe. Local.
/// \param[in] bytes  (len) the file contents
/// \param[in] path   the file name for messages ("PATH:0: ...")
/// \param[out] h     the header (valid on MBS_OK)
/// \return MBS_OK; MBS_ERR_INPUT with "PATH:0: message" (bad magic, truncated, version,
///         integrator, model sizes, size, checksum, model fingerprint, time beyond t_end, invalid
///         header values, non-finite state).
mbsErr mbs_ckptParse(const void *bytes, size_t len, const char *path, const mbsModel *m, int nstage,
                     mbsCkptHeader *h);

/// Copy a checkpoint that mbs_ckptParse accepted into the state \p s (q, qd, warm-start history
/// and its bookkeeping, time); \p s must have h->nstage slots. Local.
void mbs_ckptApply(const void *bytes, const mbsCkptHeader *h, const mbsModel *m, mbsState *s);

#endif
