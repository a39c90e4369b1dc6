/// \file xdmf.h
/// The XDMF description of an HDF5 trajectory, so ParaView (and other XDMF readers) open
/// `mbspar run` output as a time series: `trajectory.xmf` for ParaView's default reader (XDMF 3)
/// and `trajectory.xdmf2` for the legacy one (XDMF 2). One polyline per body (parent's origin,
/// origin, centre of mass, shape end) with cell data body index, speed, velocity, angular
/// velocity, joint force and torque magnitudes (docs/visualisation.md). Written by rank 0 only:
/// one small grid per output row (no per-body data: everything heavy stays in the HDF5 file).
#ifndef MBSP_XDMF_H
#define MBSP_XDMF_H

#include "mbspar/mbs_error.h"

typedef struct mbspXdmf mbspXdmf;

/// Create \p path describing the HDF5 file \p h5name (a name relative to the XDMF file's
/// directory) of \p nbody bodies; \p wrench: the file holds /joints/*. A continued run
/// (`--restart`) passes the \p nrow rows the HDF5 file kept and \p energy_csv, whose t column
/// gives their times (its rows are the HDF5 rows). The file is valid XDMF after every append.
/// Local (rank 0).
mbsErr mbsp_xdmfOpen(const char *path, const char *h5name, int nbody, int wrench, long nrow,
                     const char *energy_csv, mbspXdmf **x);
/// Describe HDF5 row \p row at time \p t (rows in order); its grid is written into the file by
/// mbsp_xdmfCommit, once the row is flushed to the HDF5 file. Local.
mbsErr mbsp_xdmfAppend(mbspXdmf *x, long row, double t);
/// Write the grids of the rows described so far, up to \p nrow rows in all: the rows the HDF5
/// file holds on disk (after mbsp_h5Flush). The file is valid XDMF after every commit. Local.
mbsErr mbsp_xdmfCommit(mbspXdmf *x, long nrow);
/// Rewrite the file with the final file name (until then the grids name "<h5name>.tmp", the
/// HDF5 file's name while it is written) and the final row count in every dataset reference,
/// write the XDMF 2 form next to it (\p path with .xdmf2 for .xmf), close, free and NULL (NULL
/// is a no-op). Local.
mbsErr mbsp_xdmfClose(mbspXdmf **x);

#endif
