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
/// and, after mbsp_h5Bodies, per-body row datasets (nrow x nbody [x ncomp]) such as /bodies/pos
/// and the static /model/parent (nbody), /model/lines (nbody x 2), /model/names (nbody).
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

/// Read-only check before a restart changes anything: if \p path (or "<path>.tmp") exists it must
/// be an HDF5 file whose /q and /qd have \p nq and \p nv columns. Local (one rank, serial
/// access). \return MBS_OK (also without a file), MBS_ERR_INPUT naming the file
mbsErr mbsp_h5Probe(const char *path, int nq, int nv);

/// Append one output row. Collective: every rank passes its owned slices (\p q_owned: nqo values,
/// \p qd_owned: nvo values); \p t, \p energy (kinetic, potential, total, work) and
/// \p avg_iterations are taken from rank 0 (others may pass NULL for energy).
/// \return MBS_OK or MBS_ERR_IO (agreed by all ranks)
mbsErr mbsp_h5Append(mbspH5 *h, double t, const double *q_owned, const double *qd_owned,
                     const double energy[4], double avg_iterations);

/// One per-body row dataset: (nrow, nbody) for ncomp == 0, (nrow, nbody, ncomp) otherwise.
typedef struct {
  const char *name;  ///< path in the file, e.g. "bodies/pos" (at most one group level)
  int ncomp;         ///< components per body (0: a scalar per body, stored 2-D)
  const char *units; ///< the "units" attribute
  const char *desc;  ///< the "description" attribute
} mbspH5BodySet;

/// Declare per-body datasets, written by the ranks that own the bodies: rank r owns bodies
/// [b0, b0 + nbo) (the ranges tile 0 .. nbody-1). In a new file it creates the \p nset row
/// datasets and the static ones (/model/parent, /model/lines = (parent, body) per body or
/// (body, body) at the ground, /model/names), each rank writing its own slice (\p parent and
/// \p names: nbo entries, this rank's bodies). In a resumed file it opens them and checks their
/// shapes. Call once after mbsp_h5Create / mbsp_h5Resume and before the first append; every
/// later mbsp_h5Append also writes one row of each (mbsp_h5BodyRow). Collective.
/// \return MBS_OK, MBS_ERR_INPUT (ranges do not tile, resumed file of another model or version),
///         MBS_ERR_IO, MBS_ERR_NOMEM
mbsErr mbsp_h5Bodies(mbspH5 *h, int nbody, int b0, int nbo, const mbspH5BodySet *sets, int nset,
                     const int *parent, const char *const *names);

/// The data of the next mbsp_h5Append for the per-body datasets: data[k] holds nbo * max(ncomp, 1)
/// values of set k (this rank's bodies, body-major). The pointers must stay valid until then.
/// Local.
void mbsp_h5BodyRow(mbspH5 *h, const double *const *data);

/// A static per-body dataset (nbody) (ncomp == 0) or (nbody, ncomp) of doubles (\p owned) or
/// ints (\p owned_int, then \p owned is ignored), this rank writing its bodies' nbo rows; after
/// mbsp_h5Bodies; a resumed file keeps the one it has. Collective.
mbsErr mbsp_h5BodyStatic(mbspH5 *h, const char *name, int ncomp, const double *owned,
                         const int *owned_int, const char *units, const char *desc);

/// Number of rows written so far. Local.
long mbsp_h5Rows(const mbspH5 *h);

/// Write everything appended so far to the file (H5Fflush): the rows a checkpoint refers to are
/// then on disk. Collective. \return MBS_OK or MBS_ERR_IO (agreed by all ranks)
mbsErr mbsp_h5Flush(mbspH5 *h);

/// Close the file and rename it into place; frees and NULLs *h (NULL is a no-op). Collective.
/// \return MBS_OK or MBS_ERR_IO (the temporary file is removed on failure)
mbsErr mbsp_h5Close(mbspH5 **h);

/// Error path: close without renaming and remove the temporary file; frees and NULLs *h (NULL is
/// a no-op). Collective (parallel HDF5 closes a file collectively): call it on every rank, e.g.
/// after an error agreed with mbsp_agreeErr.
void mbsp_h5Abandon(mbspH5 **h);

#ifndef MBS_HAVE_HDF5
/// a build without HDF5: the error every entry point returns (h5out.c)
mbsErr mbsp_h5Unsupported(const char *path);
#endif

#endif
