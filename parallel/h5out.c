/// \file h5out.c
/// Parallel HDF5 trajectory writer (`output.format = "hdf5"`).
///
/// Communication pattern: the file is opened with the MPI-IO driver (H5Pset_fapl_mpio on the
/// run's raw communicator, from comm_private.h) and every append is one collective extend of the
/// five datasets plus one collective write per dataset (H5Pset_dxpl_mpio COLLECTIVE): rank r
/// selects the hyperslab [row, q0 .. q0+nqo) of /q and [row, v0 .. v0+nvo) of /qd, rank 0 alone
/// selects the row of /t, /energy and /iterations (the other ranks take part with an empty
/// selection). Nothing is gathered to rank 0, so the output of an n-body model costs O(n/P)
/// memory per rank and the MPI-IO layer aggregates the slices into large file accesses
/// (two-phase I/O). Trade-offs: one row per append keeps the writer stateless between output
/// steps (no buffering, nothing lost but the current row on a crash) at the price of one
/// collective per dataset per output step; chunks span many rows for small models and one
/// row of 32768 columns for large ones, so each chunk is written by few ranks.
///
/// Errors: HDF5's automatic error printing is off; a failing call becomes MBS_ERR_IO with the
/// innermost message of HDF5's error stack, and every public function agrees on the result
/// (mbsp_agreeErr) before returning, so no rank is left inside a collective. The file is written
/// as "<path>.tmp" and renamed by rank 0 after a successful collective close.
#define _POSIX_C_SOURCE 200809L
#include "h5out.h"
#include <stdio.h>
#include "mbspar/mbs_fault.h"
#include <stdlib.h>
#include <string.h>

#ifdef MBS_HAVE_HDF5
#include <errno.h>
#include <hdf5.h>
#include <sys/stat.h>
#include "comm_private.h"

#include "h5out_impl.h"

static const char *const mbsp_h5_dname[MBSP_H5_NDSET] = {"t", "q", "qd", "energy", "iterations"};
static const char *const mbsp_h5_units[MBSP_H5_NDSET] = {
    "s", "rad (revolute, universal, spherical quaternion: 1), m (prismatic, free translation)",
    "rad/s (angular), m/s (linear)", "J", "1"};
// the groups of the per-body row datasets (h5out_bodies.c)
static const char *const mbsp_h5_rowgroups[] = {"bodies", "joints"};

// ---------------------------------------------------------------- errors

typedef struct {
  char desc[256];
  char func[64];
} mbspH5ErrInfo;

// walk upward from the innermost error: keep the first (most specific) description
static herr_t mbsp_h5Walk(unsigned n, const H5E_error2_t *err, void *data) {
  mbspH5ErrInfo *info = data;
  if (n == 0) {
    snprintf(info->desc, sizeof info->desc, "%s", err->desc ? err->desc : "");
    snprintf(info->func, sizeof info->func, "%s", err->func_name ? err->func_name : "");
  }
  return 0;
}

// the innermost message of the last failure ("" if none), kept across the cleanup calls that
// follow a failure (every HDF5 API call clears the error stack)
static char mbsp_h5_saved[400];

// save the current error stack's innermost message (if there is one) and clear the stack
void mbsp_h5Save(void) {
  mbspH5ErrInfo info;
  memset(&info, 0, sizeof info);
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, mbsp_h5Walk, &info);
  H5Eclear2(H5E_DEFAULT);
  if (info.desc[0])
    snprintf(mbsp_h5_saved, sizeof mbsp_h5_saved, "%s (in %s)", info.desc, info.func);
}

// turn the last HDF5 failure into an mbsErr with a user-facing message
mbsErr mbsp_h5Fail(const char *file, const char *what) {
  mbsp_h5Save();
  mbsErr e = mbsp_h5_saved[0]
                 ? mbs_errSet(MBS_ERR_IO, "%s: HDF5 %s failed: %s", file, what, mbsp_h5_saved)
                 : mbs_errSet(MBS_ERR_IO, "%s: HDF5 %s failed", file, what);
  mbsp_h5_saved[0] = 0;
  return e;
}

// a negative HDF5 result becomes MBS_ERR_IO naming the call
#define MBS_CALL_H5(h, expr)                                                                       \
  do {                                                                                             \
    if ((expr) < 0) return mbsp_h5Fail((h)->tmp, #expr);                                           \
  } while (0)

// ---------------------------------------------------------------- small helpers

static char *mbsp_h5Strdup(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  char *c = malloc(n + k + 1);
  if (c) memcpy(c, s, n), memcpy(c + n, suffix, k + 1);
  return c;
}

// a string attribute on an object (collective: same value on every rank)
herr_t mbsp_h5AttrString(hid_t obj, const char *name, const char *val) {
  hid_t st = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR), a = H5I_INVALID_HID;
  herr_t rc = -1;
  if (st >= 0 && sp >= 0 && H5Tset_size(st, strlen(val) + 1) >= 0 &&
      H5Tset_strpad(st, H5T_STR_NULLTERM) >= 0) {
    a = H5Acreate2(obj, name, st, sp, H5P_DEFAULT, H5P_DEFAULT);
    if (a >= 0) rc = H5Awrite(a, st, val);
  }
  if (rc < 0) mbsp_h5Save();
  if (a >= 0) H5Aclose(a);
  if (sp >= 0) H5Sclose(sp);
  if (st >= 0) H5Tclose(st);
  return rc;
}

herr_t mbsp_h5AttrInt(hid_t obj, const char *name, int val) {
  hid_t sp = H5Screate(H5S_SCALAR), a = H5I_INVALID_HID;
  herr_t rc = -1;
  if (sp >= 0) a = H5Acreate2(obj, name, H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT);
  if (a >= 0) rc = H5Awrite(a, H5T_NATIVE_INT, &val);
  if (rc < 0) mbsp_h5Save();
  if (a >= 0) H5Aclose(a);
  if (sp >= 0) H5Sclose(sp);
  return rc;
}

// an extendible 2-D (ncol > 0) or 1-D (ncol == 0) dataset of doubles with 0 rows
static hid_t mbsp_h5Dataset(hid_t file, const char *name, int ncol) {
  int rank = ncol > 0 ? 2 : 1;
  hsize_t dims[2] = {0, (hsize_t)ncol}, maxd[2] = {H5S_UNLIMITED, (hsize_t)ncol}, chunk[2];
  // chunks of about 256 KiB: many rows for narrow data, one row of 32768 columns for wide data
  hsize_t cols = ncol > 0 ? (ncol < 32768 ? (hsize_t)ncol : 32768) : 1;
  chunk[1] = cols;
  chunk[0] = 32768 / cols > 1024 ? 1024 : (32768 / cols > 0 ? 32768 / cols : 1);
  hid_t sp = H5Screate_simple(rank, dims, maxd), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  hid_t d = H5I_INVALID_HID;
  if (sp >= 0 && dcpl >= 0 && H5Pset_chunk(dcpl, rank, chunk) >= 0 &&
      H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) >= 0)
    d = H5Dcreate2(file, name, H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (d < 0) mbsp_h5Save();
  if (dcpl >= 0) H5Pclose(dcpl);
  if (sp >= 0) H5Sclose(sp);
  return d;
}

// an extendible (0, nbody) (ncomp == 0) or (0, nbody, ncomp) dataset of doubles; chunks of
// about 256 KiB: many rows of narrow data, one row of at most 32768 values for wide data
hid_t mbsp_h5BodyDataset(hid_t loc, const char *name, int nbody, int ncomp) {
  int rank = ncomp > 0 ? 3 : 2;
  hsize_t nc = ncomp > 0 ? (hsize_t)ncomp : 1;
  hsize_t dims[3] = {0, (hsize_t)nbody, nc}, maxd[3] = {H5S_UNLIMITED, (hsize_t)nbody, nc};
  hsize_t chunk[3], bcols = (hsize_t)nbody * nc < 32768 ? (hsize_t)nbody : 32768 / nc;
  if (bcols < 1) bcols = 1;
  chunk[1] = bcols, chunk[2] = nc;
  chunk[0] =
      32768 / (bcols * nc) > 1024 ? 1024 : (32768 / (bcols * nc) > 0 ? 32768 / (bcols * nc) : 1);
  hid_t sp = H5Screate_simple(rank, dims, maxd), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  hid_t d = H5I_INVALID_HID;
  if (sp >= 0 && dcpl >= 0 && H5Pset_chunk(dcpl, rank, chunk) >= 0 &&
      H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) >= 0)
    d = H5Dcreate2(loc, name, H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (d < 0) mbsp_h5Save();
  if (dcpl >= 0) H5Pclose(dcpl);
  if (sp >= 0) H5Sclose(sp);
  return d;
}

// a fixed-length string dataset of ntot names of which this rank holds and writes [off, off + n)
// (names: this rank's n names); the width is agreed over the ranks, whose slices cover [0, ntot)
// (collective; parallel HDF5 cannot write variable-length data collectively). \p what names the
// data in a failure's message
mbsErr mbsp_h5NameSlice(mbspH5 *h, const char *name, const char *const *names, int ntot, int off,
                        int n, const char *what) {
  double wmax = 1;
  for (int i = 0; i < n; i++)
    if (names[i] && strlen(names[i]) + 1 > wmax) wmax = (double)(strlen(names[i]) + 1);
  MBS_CALL(mbsp_allreduceMax(h->comm, &wmax, 1));
  size_t width = (size_t)wmax;
  char *buf = calloc((size_t)(n > 0 ? n : 1), width);
  mbsErr ea = mbsp_agreeErr(h->comm,
                            buf ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory (HDF5 names)"));
  if (ea) {
    free(buf);
    return ea;
  }
  for (int i = 0; i < n; i++)
    if (names[i]) memcpy(buf + (size_t)i * width, names[i], strlen(names[i]));
  hsize_t dims = (hsize_t)ntot, start = (hsize_t)off, count = (hsize_t)n,
          mdim = (hsize_t)(n > 0 ? n : 1);
  hid_t st = H5Tcopy(H5T_C_S1), fsp = H5Screate_simple(1, &dims, NULL);
  hid_t msp = H5Screate_simple(1, &mdim, NULL), d = H5I_INVALID_HID;
  herr_t rc = -1;
  if (st >= 0 && fsp >= 0 && msp >= 0 && H5Tset_size(st, width) >= 0 &&
      H5Tset_strpad(st, H5T_STR_NULLTERM) >= 0)
    d = H5Dcreate2(h->file, name, st, fsp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (d >= 0) {
    rc = n > 0 ? H5Sselect_hyperslab(fsp, H5S_SELECT_SET, &start, NULL, &count, NULL)
               : H5Sselect_none(fsp);
    if (rc >= 0 && n == 0) rc = H5Sselect_none(msp);
    if (rc >= 0) rc = H5Dwrite(d, st, msp, fsp, h->dxpl, buf);
  }
  if (rc < 0) mbsp_h5Save();
  free(buf);
  if (d >= 0) H5Dclose(d);
  if (msp >= 0) H5Sclose(msp);
  if (fsp >= 0) H5Sclose(fsp);
  if (st >= 0) H5Tclose(st);
  if (rc >= 0 && MBS_FAULT_WRITE_POINT()) rc = -1; // injected (mbs_fault.h)
  return rc < 0 ? mbsp_h5Fail(h->tmp, what) : MBS_OK;
}

// ---------------------------------------------------------------- lifecycle

// allocate the handle and check the slices (local)
static mbsErr mbsp_h5New(mbspComm *comm, const char *path, int nq, int nv, int q0, int nqo, int v0,
                         int nvo, mbspH5 **out) {
  MBS_CHECK(path && path[0], MBS_ERR_INPUT, "HDF5 output: empty file name");
  MBS_CHECK(nq > 0 && nv > 0, MBS_ERR_INPUT, "%s: HDF5 output needs nq > 0 and nv > 0 (%d, %d)",
            path, nq, nv);
  MBS_CHECK(q0 >= 0 && nqo >= 0 && q0 + nqo <= nq && v0 >= 0 && nvo >= 0 && v0 + nvo <= nv,
            MBS_ERR_INPUT, "%s: bad slice q[%d..%d) of %d / qd[%d..%d) of %d on rank %d", path, q0,
            q0 + nqo, nq, v0, v0 + nvo, nv, mbsp_rank(comm));
  mbspH5 *h = calloc(1, sizeof *h);
  MBS_CHECK(h, MBS_ERR_NOMEM, "out of memory (HDF5 writer)");
  *out = h;
  h->comm = comm, h->rank = mbsp_rank(comm);
  // errors come back as codes; mbspar prints them once
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  h->nq = nq, h->nv = nv, h->q0 = q0, h->nqo = nqo, h->v0 = v0, h->nvo = nvo;
  h->file = h->dxpl = H5I_INVALID_HID;
  for (int k = 0; k < MBSP_H5_NDSET; k++) h->dset[k] = H5I_INVALID_HID;
  h->path = mbsp_h5Strdup(path, "");
  h->tmp = mbsp_h5Strdup(path, ".tmp");
  MBS_CHECK(h->path && h->tmp, MBS_ERR_NOMEM, "out of memory (HDF5 writer)");
  return MBS_OK;
}

// open (create or read-write) the temporary file with the MPI-IO driver (collective)
static mbsErr mbsp_h5OpenFile(mbspH5 *h, int create) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  MBS_CALL_H5(h, fapl);
  herr_t rc = H5Pset_fapl_mpio(fapl, mbsp_commRaw(h->comm), MPI_INFO_NULL);
  if (rc >= 0) rc = H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
  if (rc >= 0)
    h->file = create ? H5Fcreate(h->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)
                     : H5Fopen(h->tmp, H5F_ACC_RDWR, fapl);
  if (rc < 0 || h->file < 0) mbsp_h5Save();
  H5Pclose(fapl);
  if (rc < 0 || h->file < 0) return mbsp_h5Fail(h->tmp, create ? "file create" : "file open");
  // injected (mbs_fault.h) after the collective call; the caller's abandon closes the file
  if (MBS_FAULT_WRITE_POINT())
    return mbs_errSet(MBS_ERR_IO, "%s: HDF5 file %s failed: %s", h->tmp, create ? "create" : "open",
                      strerror(errno));
  h->dxpl = H5Pcreate(H5P_DATASET_XFER);
  MBS_CALL_H5(h, h->dxpl);
  MBS_CALL_H5(h, H5Pset_dxpl_mpio(h->dxpl, H5FD_MPIO_COLLECTIVE));
  return MBS_OK;
}

// datasets, attributes and names of a new file (collective)
static mbsErr mbsp_h5Layout(mbspH5 *h, const char *const *qnames) {
  static const int ncol[MBSP_H5_NDSET] = {0, -1, -2, 4, 0};
  for (int k = 0; k < MBSP_H5_NDSET; k++) {
    int nc = ncol[k] == -1 ? h->nq : ncol[k] == -2 ? h->nv : ncol[k];
    h->dset[k] = mbsp_h5Dataset(h->file, mbsp_h5_dname[k], nc);
    MBSP_H5_COLL(h, h->dset[k]);
    MBSP_H5_COLL(h, mbsp_h5AttrString(h->dset[k], "units", mbsp_h5_units[k]));
  }
  MBSP_H5_COLL(h, mbsp_h5AttrString(h->dset[MBSP_H5_E], "columns", "kinetic,potential,total,work"));
  MBSP_H5_COLL(h, mbsp_h5AttrString(h->dset[MBSP_H5_IT], "description",
                                    "average constraint-solver iterations per evaluation since "
                                    "the previous output row"));
  MBSP_H5_COLL(h, mbsp_h5AttrString(h->file, "format", "mbspar trajectory"));
  MBSP_H5_COLL(h, mbsp_h5AttrInt(h->file, "version", 1));
  MBSP_H5_COLL(h, mbsp_h5AttrInt(h->file, "nq", h->nq));
  MBSP_H5_COLL(h, mbsp_h5AttrInt(h->file, "nv", h->nv));
  MBSP_H5_COLL(h, mbsp_h5AttrString(h->file, "layout",
                                    "row i of /q, /qd, /energy, /iterations belongs to /t[i]; "
                                    "q and qd in dof order (docs/outputs.md)"));
  if (qnames) {
    MBSP_H5_AGREE(h, mbsp_h5NameSlice(h, "q_names", qnames + h->q0, h->nq, h->q0, h->nqo,
                                      "writing the coordinate names"));
    MBSP_H5_AGREE(h, mbsp_h5NameSlice(h, "qd_names", qnames + h->nq + h->v0, h->nv, h->v0, h->nvo,
                                      "writing the coordinate names"));
  }
  return MBS_OK;
}

// close every HDF5 object (collective when the file is open)
static mbsErr mbsp_h5CloseObjects(mbspH5 *h) {
  mbsErr e = MBS_OK;
  for (int k = 0; k < MBSP_H5_NDSET; k++) {
    if (h->dset[k] >= 0 && H5Dclose(h->dset[k]) < 0 && !e) e = mbsp_h5Fail(h->tmp, "H5Dclose");
    h->dset[k] = H5I_INVALID_HID;
  }
  for (int k = 0; k < h->nbset; k++) {
    if (h->bdset[k] >= 0 && H5Dclose(h->bdset[k]) < 0 && !e) e = mbsp_h5Fail(h->tmp, "H5Dclose");
    h->bdset[k] = H5I_INVALID_HID;
  }
  if (h->dxpl >= 0) H5Pclose(h->dxpl);
  h->dxpl = H5I_INVALID_HID;
  if (h->file >= 0 && H5Fclose(h->file) < 0 && !e) e = mbsp_h5Fail(h->tmp, "H5Fclose");
  h->file = H5I_INVALID_HID;
  return e;
}

static void mbsp_h5Free(mbspH5 **h) {
  free((*h)->path), free((*h)->tmp), free(*h);
  *h = NULL;
}

void mbsp_h5Abandon(mbspH5 **h) {
  if (!h || !*h) return;
  mbsp_h5CloseObjects(*h);
  if ((*h)->rank == 0 && (*h)->tmp) remove((*h)->tmp);
  mbsp_h5Free(h);
}

// agree on \p e; on failure abandon the half-made writer on every rank
static mbsErr mbsp_h5Agree(mbspComm *comm, mbsErr e, mbspH5 **h) {
  e = mbsp_agreeErr(comm, e);
  if (e) mbsp_h5Abandon(h);
  return e;
}

// the slices must tile q and qd (collective)
static mbsErr mbsp_h5CheckTiling(mbspComm *comm, int nq, int nv, int nqo, int nvo) {
  double n[2] = {nqo, nvo};
  MBS_CALL(mbsp_allreduceSum(comm, n, 2));
  MBS_CHECK(n[0] == nq && n[1] == nv, MBS_ERR_INPUT,
            "HDF5 output: the ranks' slices hold %.0f of %d q and %.0f of %d qd entries", n[0], nq,
            n[1], nv);
  return MBS_OK;
}

mbsErr mbsp_h5Create(mbspComm *comm, const char *path, int nq, int nv, int q0, int nqo, int v0,
                     int nvo, const char *const *qnames, mbspH5 **h) {
  *h = NULL;
  mbsErr e = mbsp_h5New(comm, path, nq, nv, q0, nqo, v0, nvo, h);
  MBS_CALL(mbsp_h5Agree(comm, e, h));
  MBS_CALL(mbsp_h5Agree(comm, mbsp_h5CheckTiling(comm, nq, nv, nqo, nvo), h));
  MBS_CALL(mbsp_h5Agree(comm, mbsp_h5OpenFile(*h, 1), h));
  MBS_CALL(mbsp_h5Agree(comm, mbsp_h5Layout(*h, qnames), h));
  return MBS_OK;
}

// open the datasets of an existing file (collective when the file is open in parallel)
static mbsErr mbsp_h5OpenDatasets(mbspH5 *h) {
  for (int k = 0; k < MBSP_H5_NDSET; k++) {
    h->dset[k] = H5Dopen2(h->file, mbsp_h5_dname[k], H5P_DEFAULT);
    if (h->dset[k] < 0) {
      H5Eclear2(H5E_DEFAULT);
      return mbs_errSet(MBS_ERR_INPUT, "%s: not an mbspar trajectory (no dataset /%s)", h->path,
                        mbsp_h5_dname[k]);
    }
  }
  return MBS_OK;
}

// rank 0, serially: every dataset of group \p name (if the group exists) keeps \p keep rows
static mbsErr mbsp_h5TruncateGroup(mbspH5 *h, const char *name, hsize_t keep) {
  if (H5Lexists(h->file, name, H5P_DEFAULT) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return MBS_OK;
  }
  hid_t g = H5Gopen2(h->file, name, H5P_DEFAULT);
  MBS_CALL_H5(h, g);
  H5G_info_t info;
  herr_t rc = H5Gget_info(g, &info);
  for (hsize_t i = 0; rc >= 0 && i < info.nlinks; i++) {
    char dn[256];
    if (H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, dn, sizeof dn, H5P_DEFAULT) < 0) {
      rc = -1;
      break;
    }
    hid_t d = H5Dopen2(g, dn, H5P_DEFAULT), sp = d >= 0 ? H5Dget_space(d) : H5I_INVALID_HID;
    hsize_t dims[3] = {0, 0, 0};
    int r = sp >= 0 ? H5Sget_simple_extent_dims(sp, dims, NULL) : -1;
    if (r >= 2 && r <= 3 && dims[0] > keep) {
      dims[0] = keep;
      rc = H5Dset_extent(d, dims);
    } else if (r < 0) {
      rc = -1;
    }
    if (sp >= 0) H5Sclose(sp);
    if (d >= 0) H5Dclose(d);
  }
  if (rc < 0) mbsp_h5Save();
  H5Gclose(g);
  if (rc < 0) return mbsp_h5Fail(h->path, "truncating the per-body datasets");
  return MBS_OK;
}

// rank 0, serially (sec2 driver): check the shapes of an existing file and drop the rows after
// t_cut. Shrinking is done here and not in parallel because parallel HDF5 prunes the partial
// chunks through its chunk cache and a later flush could overwrite collectively written rows.
static mbsErr mbsp_h5TruncateRows(mbspH5 *h, double t_cut) {
  MBS_CALL(mbsp_h5OpenDatasets(h));
  hsize_t dims[MBSP_H5_NDSET][2];
  for (int k = 0; k < MBSP_H5_NDSET; k++) {
    hid_t sp = H5Dget_space(h->dset[k]);
    MBS_CALL_H5(h, sp);
    int r = H5Sget_simple_extent_ndims(sp);
    dims[k][1] = 0;
    if (r >= 1 && r <= 2) r = H5Sget_simple_extent_dims(sp, dims[k], NULL);
    H5Sclose(sp);
    MBS_CHECK(r == (k == MBSP_H5_T || k == MBSP_H5_IT ? 1 : 2) && dims[k][0] == dims[0][0],
              MBS_ERR_INPUT, "%s: /%s has an unexpected shape", h->path, mbsp_h5_dname[k]);
  }
  MBS_CHECK(dims[MBSP_H5_Q][1] == (hsize_t)h->nq && dims[MBSP_H5_QD][1] == (hsize_t)h->nv &&
                dims[MBSP_H5_E][1] == 4,
            MBS_ERR_INPUT, "%s: written for another model (nq = %llu, nv = %llu; this run: %d, %d)",
            h->path, (unsigned long long)dims[MBSP_H5_Q][1],
            (unsigned long long)dims[MBSP_H5_QD][1], h->nq, h->nv);
  // keep the rows up to t_cut
  hsize_t n = dims[0][0], keep = 0;
  double *t = malloc(sizeof(double) * (size_t)(n ? n : 1));
  MBS_CHECK(t, MBS_ERR_NOMEM, "out of memory (HDF5 /t)");
  herr_t rc =
      n ? H5Dread(h->dset[MBSP_H5_T], H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t) : 0;
  while (rc >= 0 && keep < n && t[keep] <= t_cut * (1 + 1e-15) + 1e-300) keep++;
  free(t);
  MBS_CALL_H5(h, rc);
  for (int k = 0; k < MBSP_H5_NDSET && keep < n; k++) {
    hsize_t nd[2] = {keep, dims[k][1]};
    MBS_CALL_H5(h, H5Dset_extent(h->dset[k], nd));
  }
  // the per-body row datasets (mbsp_h5Bodies) lose the same rows
  for (size_t g = 0; g < sizeof mbsp_h5_rowgroups / sizeof *mbsp_h5_rowgroups && keep < n; g++)
    MBS_CALL(mbsp_h5TruncateGroup(h, mbsp_h5_rowgroups[g], keep));
  h->nrow = keep;
  return MBS_OK;
}

mbsErr mbsp_h5Resume(mbspComm *comm, const char *path, int nq, int nv, int q0, int nqo, int v0,
                     int nvo, const char *const *qnames, double t_cut, mbspH5 **h) {
  *h = NULL;
  mbsErr e = mbsp_h5New(comm, path, nq, nv, q0, nqo, v0, nvo, h);
  MBS_CALL(mbsp_h5Agree(comm, e, h));
  MBS_CALL(mbsp_h5Agree(comm, mbsp_h5CheckTiling(comm, nq, nv, nqo, nvo), h));
  // rank 0 moves the finished file back to the temporary name (after a crash only the temporary
  // one exists); found = 0 means there is nothing to continue
  int found = 0, moved = 0;
  e = MBS_OK;
  if ((*h)->rank == 0) {
    struct stat st;
    if (stat((*h)->path, &st) == 0) {
      found = moved = 1;
      if (MBS_FAULT_WRITE_POINT() || rename((*h)->path, (*h)->tmp) != 0)
        e = mbs_errSet(MBS_ERR_IO, "%s: cannot rename to %s: %s", (*h)->path, (*h)->tmp,
                       strerror(errno));
    } else if (stat((*h)->tmp, &st) == 0) {
      found = 1;
    }
  }
  MBS_CALL(mbsp_h5Agree(comm, e, h));
  MBS_CALL(mbsp_h5Agree(comm, mbsp_bcastBytes(comm, &found, sizeof found, 0), h));
  if (!found) {
    mbsp_h5Free(h);
    return mbsp_h5Create(comm, path, nq, nv, q0, nqo, v0, nvo, qnames, h);
  }
  // rank 0 checks and cuts the file serially, then every rank opens it
  if ((*h)->rank == 0) {
    // sec2 driver; file systems without flock (some cluster file systems) are tolerated
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
#if H5_VERSION_GE(1, 10, 7)
    if (fapl >= 0) H5Pset_file_locking(fapl, 1, 1);
#endif
    (*h)->file = H5Fopen((*h)->tmp, H5F_ACC_RDWR, fapl >= 0 ? fapl : H5P_DEFAULT);
    if ((*h)->file < 0) mbsp_h5Save();
    if (fapl >= 0) H5Pclose(fapl);
    e = (*h)->file < 0 ? mbsp_h5Fail((*h)->path, "file open") : mbsp_h5TruncateRows(*h, t_cut);
    mbsErr ec = mbsp_h5CloseObjects(*h);
    if (!e) e = ec;
  }
  e = mbsp_agreeErr(comm, e);
  double nrow = (double)(*h)->nrow;
  if (!e) e = mbsp_agreeErr(comm, mbsp_bcastBytes(comm, &nrow, sizeof nrow, 0));
  (*h)->nrow = (hsize_t)nrow;
  if (!e) e = mbsp_agreeErr(comm, mbsp_h5OpenFile(*h, 0));
  if (!e) e = mbsp_agreeErr(comm, mbsp_h5OpenDatasets(*h));
  if (e) {
    // keep the user's file: close it and move it back under its own name
    mbsp_h5CloseObjects(*h);
    if (moved) rename((*h)->tmp, (*h)->path);
    mbsp_h5Free(h);
    MBS_CALL(e);
  }
  return MBS_OK;
}

mbsErr mbsp_h5Probe(const char *path, int nq, int nv) {
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  struct stat st;
  const char *f = stat(path, &st) == 0 ? path : stat(tmp, &st) == 0 ? tmp : NULL;
  if (!f) return MBS_OK;
  hid_t file = H5Fopen(f, H5F_ACC_RDONLY, H5P_DEFAULT);
  long cols[2] = {-1, -1};
  for (int k = 0; k < 2 && file >= 0; k++) {
    hid_t d = H5Dopen2(file, k ? "qd" : "q", H5P_DEFAULT);
    hid_t sp = d >= 0 ? H5Dget_space(d) : H5I_INVALID_HID;
    hsize_t dims[2] = {0, 0};
    if (sp >= 0 && H5Sget_simple_extent_ndims(sp) == 2 &&
        H5Sget_simple_extent_dims(sp, dims, NULL) == 2)
      cols[k] = (long)dims[1];
    if (sp >= 0) H5Sclose(sp);
    if (d >= 0) H5Dclose(d);
  }
  if (file >= 0) H5Fclose(file);
  H5Eclear2(H5E_DEFAULT);
  if (file < 0)
    return mbs_errSet(MBS_ERR_INPUT, "%s: cannot be opened as an HDF5 file: not this run's", f);
  if (cols[0] != nq || cols[1] != nv)
    return mbs_errSet(MBS_ERR_INPUT,
                      "%s: holds %ld coordinates and %ld rates, this model %d and %d: another "
                      "model's trajectory",
                      f, cols[0], cols[1], nq, nv);
  return MBS_OK;
}

long mbsp_h5Rows(const mbspH5 *h) {
  return h ? (long)h->nrow : 0;
}

// write \p n values of \p buf at [row, off .. off+n) of dataset \p d (n < 0: a 1-D dataset
// row; mine == 0: take part with an empty selection)
static mbsErr mbsp_h5WriteRow(mbspH5 *h, int k, int off, int n, int mine, const double *buf) {
  hid_t d = h->dset[k];
  int twod = n >= 0;
  hsize_t start[2] = {h->nrow, (hsize_t)(off > 0 ? off : 0)};
  hsize_t count[2] = {1, (hsize_t)(twod ? n : 1)};
  hsize_t mdim = count[1] > 0 ? count[1] : 1;
  double dummy = 0;
  hid_t fsp = H5Dget_space(d), msp = H5Screate_simple(1, &mdim, NULL);
  herr_t rc = fsp >= 0 && msp >= 0 ? 0 : -1;
  if (rc >= 0 && mine && count[1] > 0)
    rc = H5Sselect_hyperslab(fsp, H5S_SELECT_SET, start, NULL, count, NULL);
  else if (rc >= 0) {
    rc = H5Sselect_none(fsp);
    if (rc >= 0) rc = H5Sselect_none(msp);
  }
  if (rc >= 0) rc = H5Dwrite(d, H5T_NATIVE_DOUBLE, msp, fsp, h->dxpl, buf ? buf : &dummy);
  if (rc >= 0 && MBS_FAULT_WRITE_POINT()) rc = -1; // injected (mbs_fault.h)
  if (rc < 0) mbsp_h5Save();
  if (msp >= 0) H5Sclose(msp);
  if (fsp >= 0) H5Sclose(fsp);
  if (rc < 0) {
    char what[64];
    snprintf(what, sizeof what, "write of /%s row %llu", mbsp_h5_dname[k],
             (unsigned long long)h->nrow);
    return mbsp_h5Fail(h->tmp, what);
  }
  return MBS_OK;
}

// extend per-body dataset k by one row and write this rank's bodies [b0, b0 + nbo) of it
static mbsErr mbsp_h5WriteBodyRow(mbspH5 *h, int k, const double *buf) {
  hid_t d = h->bdset[k];
  int nc = h->bset[k].ncomp, rank = nc > 0 ? 3 : 2;
  hsize_t ncc = nc > 0 ? (hsize_t)nc : 1;
  hsize_t nd[3] = {h->nrow + 1, (hsize_t)h->nbody, ncc};
  MBSP_H5_COLL(h, H5Dset_extent(d, nd));
  hsize_t start[3] = {h->nrow, (hsize_t)h->b0, 0}, count[3] = {1, (hsize_t)h->nbo, ncc};
  hsize_t mdim = (hsize_t)h->nbo * ncc > 0 ? (hsize_t)h->nbo * ncc : 1;
  double dummy = 0;
  hid_t fsp = H5Dget_space(d), msp = H5Screate_simple(1, &mdim, NULL);
  herr_t rc = fsp >= 0 && msp >= 0 ? 0 : -1;
  if (rc >= 0 && h->nbo > 0 && buf)
    rc = H5Sselect_hyperslab(fsp, H5S_SELECT_SET, start, NULL, count, NULL);
  else if (rc >= 0) {
    rc = H5Sselect_none(fsp);
    if (rc >= 0) rc = H5Sselect_none(msp);
  }
  (void)rank;
  if (rc >= 0) rc = H5Dwrite(d, H5T_NATIVE_DOUBLE, msp, fsp, h->dxpl, buf ? buf : &dummy);
  if (rc >= 0 && MBS_FAULT_WRITE_POINT()) rc = -1; // injected (mbs_fault.h)
  if (rc < 0) mbsp_h5Save();
  if (msp >= 0) H5Sclose(msp);
  if (fsp >= 0) H5Sclose(fsp);
  if (rc < 0) {
    char what[96];
    snprintf(what, sizeof what, "write of /%s row %llu", h->bset[k].name,
             (unsigned long long)h->nrow);
    return mbsp_h5Fail(h->tmp, what);
  }
  return MBS_OK;
}

static mbsErr mbsp_h5AppendRow(mbspH5 *h, double t, const double *q, const double *qd,
                               const double *energy, double avg_it) {
  // extend every dataset by one row (collective, same sizes everywhere)
  for (int k = 0; k < MBSP_H5_NDSET; k++) {
    hsize_t nd[2] = {h->nrow + 1, k == MBSP_H5_Q    ? (hsize_t)h->nq
                                  : k == MBSP_H5_QD ? (hsize_t)h->nv
                                                    : 4};
    MBSP_H5_COLL(h, H5Dset_extent(h->dset[k], nd));
  }
  // q and qd: every rank its own hyperslab
  MBSP_H5_AGREE(h, mbsp_h5WriteRow(h, MBSP_H5_Q, h->q0, h->nqo, 1, q));
  MBSP_H5_AGREE(h, mbsp_h5WriteRow(h, MBSP_H5_QD, h->v0, h->nvo, 1, qd));
  // t, energy, iterations: rank 0's values
  int r0 = h->rank == 0;
  MBSP_H5_AGREE(h, mbsp_h5WriteRow(h, MBSP_H5_T, 0, -1, r0, &t));
  MBSP_H5_AGREE(h, mbsp_h5WriteRow(h, MBSP_H5_E, 0, 4, r0 && energy, energy));
  MBSP_H5_AGREE(h, mbsp_h5WriteRow(h, MBSP_H5_IT, 0, -1, r0, &avg_it));
  // per-body datasets: every rank the rows of its own bodies
  for (int k = 0; k < h->nbset; k++) MBSP_H5_AGREE(h, mbsp_h5WriteBodyRow(h, k, h->brow[k]));
  h->nrow++;
  return MBS_OK;
}

mbsErr mbsp_h5Append(mbspH5 *h, double t, const double *q_owned, const double *qd_owned,
                     const double energy[4], double avg_iterations) {
  MBS_CHECK(h, MBS_ERR_INTERNAL, "mbsp_h5Append: no HDF5 writer");
  mbsErr e = MBS_OK;
  if ((h->nqo > 0 && !q_owned) || (h->nvo > 0 && !qd_owned))
    e = mbs_errSet(MBS_ERR_INTERNAL, "mbsp_h5Append: missing state slice on rank %d", h->rank);
  e = mbsp_agreeErr(h->comm, e);
  if (!e)
    e = mbsp_agreeErr(h->comm, mbsp_h5AppendRow(h, t, q_owned, qd_owned, energy, avg_iterations));
  return e;
}

mbsErr mbsp_h5Flush(mbspH5 *h) {
  mbsErr e = MBS_OK;
  if (H5Fflush(h->file, H5F_SCOPE_GLOBAL) < 0)
    e = mbsp_h5Fail(h->tmp, "flush");
  else if (MBS_FAULT_WRITE_POINT())
    e = mbs_errSet(MBS_ERR_IO, "%s: HDF5 flush failed: %s", h->tmp, strerror(errno));
  return mbsp_agreeErr(h->comm, e);
}

mbsErr mbsp_h5Close(mbspH5 **h) {
  if (!h || !*h) return MBS_OK;
  mbspComm *comm = (*h)->comm;
  mbsErr e = mbsp_h5CloseObjects(*h);
  if (!e && MBS_FAULT_WRITE_POINT()) e = mbs_errSet(MBS_ERR_IO, "%s: HDF5 close failed", (*h)->tmp);
  e = mbsp_agreeErr(comm, e);
  // the file is complete on disk once the collective close returned everywhere
  if (!e && (*h)->rank == 0 && (MBS_FAULT_WRITE_POINT() || rename((*h)->tmp, (*h)->path) != 0))
    e = mbs_errSet(MBS_ERR_IO, "%s: cannot rename to %s: %s", (*h)->tmp, (*h)->path,
                   strerror(errno));
  e = mbsp_agreeErr(comm, e);
  if (e && (*h)->rank == 0) remove((*h)->tmp);
  mbsp_h5Free(h);
  return e;
}

#else // no HDF5: every entry point says so

mbsErr mbsp_h5Unsupported(const char *path) {
  return mbs_errSet(MBS_ERR_UNSUPPORTED,
                    "%s: output.format = \"hdf5\" needs a build with parallel HDF5 (install the "
                    "Debian package libhdf5-openmpi-dev and configure with -DMBS_ENABLE_HDF5=ON); "
                    "use output.format = \"csv\"",
                    path ? path : "trajectory.h5");
}

mbsErr mbsp_h5Create(mbspComm *comm, const char *path, int nq, int nv, int q0, int nqo, int v0,
                     int nvo, const char *const *qnames, mbspH5 **h) {
  (void)comm, (void)nq, (void)nv, (void)q0, (void)nqo, (void)v0, (void)nvo, (void)qnames;
  *h = NULL;
  return mbsp_h5Unsupported(path);
}

mbsErr mbsp_h5Resume(mbspComm *comm, const char *path, int nq, int nv, int q0, int nqo, int v0,
                     int nvo, const char *const *qnames, double t_cut, mbspH5 **h) {
  (void)comm, (void)nq, (void)nv, (void)q0, (void)nqo, (void)v0, (void)nvo, (void)qnames;
  (void)t_cut;
  *h = NULL;
  return mbsp_h5Unsupported(path);
}

mbsErr mbsp_h5Append(mbspH5 *h, double t, const double *q_owned, const double *qd_owned,
                     const double energy[4], double avg_iterations) {
  (void)h, (void)t, (void)q_owned, (void)qd_owned, (void)energy, (void)avg_iterations;
  return mbsp_h5Unsupported(NULL);
}

long mbsp_h5Rows(const mbspH5 *h) {
  (void)h;
  return 0;
}

mbsErr mbsp_h5Probe(const char *path, int nq, int nv) {
  (void)path, (void)nq, (void)nv;
  return MBS_OK;
}

mbsErr mbsp_h5Flush(mbspH5 *h) {
  (void)h;
  return MBS_OK;
}

mbsErr mbsp_h5Close(mbspH5 **h) {
  if (h) *h = NULL;
  return MBS_OK;
}

void mbsp_h5Abandon(mbspH5 **h) {
  if (h) *h = NULL;
}

#endif
