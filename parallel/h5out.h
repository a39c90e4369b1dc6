/// \file h5out.h
/// Parallel HDF5 trajectory output (`output.format = "hdf5"`): one file, one dataset per
/// quantity, every rank writing its own slice of q and qd with collective MPI-IO. The header
/// exposes no HDF5 type; without HDF5 (configure -DMBS_ENABLE_HDF5=OFF) every function returns
/// MBS_ERR_UNSUPPORTED with a message that says so.
///
/// File layout (docs/outputs.md):
///   /t          (nrow)       time, s
///   /q          (nrow x nq)  joint coordinates, dof order (rad, m; quaternions unitless)
///   /qd         (nrow x nv)  joint rates (rad/s, m/s)
///   /energy     (nrow x 4)   kinetic, potential, total, work (J)
///   /iterations (nrow)       average constraint-solver iterations per evaluation since the
///                            previous output row
///   /q_names    (nq), /qd_names (nv)  fixed-length strings, the CSV column names
/// The file is written as PATH.tmp and renamed to PATH by a successful mbsp_h5Close, so a
/// PATH that exists is always complete.
#ifndef MBS_H5OUT_H
#define MBS_H5OUT_H

#include "mbspar/mbs_parallel.h"

typedef struct mbspH5 mbspH5;

/// Create the trajectory file \p path (written as "<path>.tmp" until mbsp_h5Close). Collective.
/// \param[in] comm     the communicator of the run
/// \param[in] path     final file name, e.g. "DIR/trajectory.h5" (same on every rank)
/// \param[in] nq,nv    global sizes of q and qd
/// \param[in] q0,nqo   offset and length of this rank's slice of q (nqo may be 0)
/// \param[in] v0,nvo   offset and length of this rank's slice of qd (nvo may be 0)
/// \param[in] qnames   NULL, or nq + nv names (q columns, then qd columns), the same on every
///                     rank; each rank writes the names of its own slice
/// \param[out] h       the writer (NULL on failure)
/// \return MBS_OK, MBS_ERR_INPUT (bad slices), MBS_ERR_IO (file cannot be created; agreed by all
///         ranks, nothing left behind), MBS_ERR_NOMEM, MBS_ERR_UNSUPPORTED (built without HDF5)
mbsErr mbsp_h5Create(mbspComm *comm, const char *path, int nq, int nv, int q0, int nqo, int v0,
                     int nvo, const char *const *qnames, mbspH5 **h);

/// Continue the trajectory file of an interrupted run (`--restart`): \p path (or, after a crash,
/// "<path>.tmp") is moved back to the temporary name, rows with t > \p t_cut are dropped and
/// later mbsp_h5Append calls continue it. The sizes must match the file. If neither file exists a
/// new one is created (as mbsp_h5Create with \p qnames), like the CSV files. Collective.
/// \return as mbsp_h5Create; MBS_ERR_INPUT if the file does not match nq/nv or is not an mbspar
///         trajectory
mbsErr mbsp_h5Resume(mbspComm *comm, const char *path, int nq, int nv, int q0, int nqo, int v0,
                     int nvo, const char *const *qnames, double t_cut, mbspH5 **h);

/// Append one output row. Collective: every rank passes its owned slices (\p q_owned: nqo values,
/// \p qd_owned: nvo values); \p t, \p energy (kinetic, potential, total, work) and
/// \p avg_iterations are taken from rank 0 (others may pass NULL for energy).
/// \return MBS_OK or MBS_ERR_IO (agreed by all ranks)
mbsErr mbsp_h5Append(mbspH5 *h, double t, const double *q_owned, const double *qd_owned,
                     const double energy[4], double avg_iterations);

/// Number of rows written so far. Local.
long mbsp_h5Rows(const mbspH5 *h);

/// Close the file and rename it into place; frees and NULLs *h (NULL is a no-op). Collective.
/// \return MBS_OK or MBS_ERR_IO (the temporary file is removed on failure)
mbsErr mbsp_h5Close(mbspH5 **h);

/// Error path: close without renaming and remove the temporary file; frees and NULLs *h (NULL is
/// a no-op). Collective (parallel HDF5 closes a file collectively): call it on every rank, e.g.
/// after an error agreed with mbsp_agreeErr.
void mbsp_h5Abandon(mbspH5 **h);

#endif
