/// \file h5out_bodies.c
/// The HDF5 writer's per-body datasets (`mbsp_h5Bodies`, `mbsp_h5BodyRow`, `mbsp_h5BodyStatic`):
/// /bodies and /joints (nrow, nbody[, ncomp]) rows written by the owners of the bodies, /model
/// (names, parents). Collective like the rest of h5out.c.
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "h5out.h"
#include "mbspar/mbs_fault.h"

#ifdef MBS_HAVE_HDF5
#include "comm_private.h"
#include "h5out_impl.h"

// an int dataset (n0) or (n0, n1) of which this rank writes rows [off, off + n) from buf
static mbsErr mbsp_h5IntSlice(mbspH5 *h, const char *name, int n0, int n1, int off, int n,
                              const int *buf, const char *desc) {
  int rank = n1 > 0 ? 2 : 1;
  hsize_t nc = n1 > 0 ? (hsize_t)n1 : 1;
  hsize_t dims[2] = {(hsize_t)n0, nc}, start[2] = {(hsize_t)off, 0}, count[2] = {(hsize_t)n, nc};
  hsize_t mdim = (hsize_t)n * nc > 0 ? (hsize_t)n * nc : 1;
  int dummy = 0;
  hid_t fsp = H5Screate_simple(rank, dims, NULL), msp = H5Screate_simple(1, &mdim, NULL);
  hid_t d = H5I_INVALID_HID;
  herr_t rc = -1;
  if (fsp >= 0 && msp >= 0)
    d = H5Dcreate2(h->file, name, H5T_NATIVE_INT, fsp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (d >= 0) {
    rc = n > 0 ? H5Sselect_hyperslab(fsp, H5S_SELECT_SET, start, NULL, count, NULL)
               : H5Sselect_none(fsp);
    if (rc >= 0 && n == 0) rc = H5Sselect_none(msp);
    if (rc >= 0) rc = H5Dwrite(d, H5T_NATIVE_INT, msp, fsp, h->dxpl, n > 0 ? buf : &dummy);
    herr_t ra = mbsp_h5AttrString(d, "description", desc); // collective: also after a failure
    if (rc >= 0) rc = ra;
  }
  if (rc < 0) mbsp_h5Save();
  if (d >= 0) H5Dclose(d);
  if (msp >= 0) H5Sclose(msp);
  if (fsp >= 0) H5Sclose(fsp);
  if (rc >= 0 && MBS_FAULT_WRITE_POINT()) rc = -1; // injected (mbs_fault.h)
  return rc < 0 ? mbsp_h5Fail(h->tmp, name) : MBS_OK;
}

// create group \p name unless it exists (collective)
static mbsErr mbsp_h5Group(mbspH5 *h, const char *name) {
  htri_t ex = H5Lexists(h->file, name, H5P_DEFAULT);
  if (ex > 0) return MBS_OK;
  H5Eclear2(H5E_DEFAULT);
  hid_t g = H5Gcreate2(h->file, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  MBSP_H5_COLL(h, g);
  H5Gclose(g);
  return MBS_OK;
}

// new file: the row datasets and the static model datasets; resumed file: open and check them
static mbsErr mbsp_h5BodiesSetup(mbspH5 *h, const int *parent, const char *const *names) {
  htri_t ex = H5Lexists(h->file, "model", H5P_DEFAULT);
  H5Eclear2(H5E_DEFAULT);
  if (ex > 0) { // a resumed file: the datasets must be there with this model's shapes
    for (int k = 0; k < h->nbset; k++) {
      const mbspH5BodySet *b = &h->bset[k];
      h->bdset[k] = H5Dopen2(h->file, b->name, H5P_DEFAULT);
      if (h->bdset[k] < 0) H5Eclear2(H5E_DEFAULT);
      MBSP_H5_AGREE(h, h->bdset[k] >= 0 ? MBS_OK
                                        : mbs_errSet(MBS_ERR_INPUT,
                                                     "%s: no dataset /%s (written by another "
                                                     "mbspar version)",
                                                     h->path, b->name));
      hid_t sp = H5Dget_space(h->bdset[k]);
      hsize_t dims[3] = {0, 0, 0};
      int r = sp >= 0 ? H5Sget_simple_extent_dims(sp, dims, NULL) : -1;
      if (sp >= 0) H5Sclose(sp);
      MBS_CHECK(r == (b->ncomp > 0 ? 3 : 2) && dims[0] == h->nrow && dims[1] == (hsize_t)h->nbody &&
                    (b->ncomp == 0 || dims[2] == (hsize_t)b->ncomp),
                MBS_ERR_INPUT, "%s: /%s has an unexpected shape (another model?)", h->path,
                b->name);
    }
    return MBS_OK;
  }
  MBS_CHECK(h->nrow == 0, MBS_ERR_INPUT,
            "%s: has %llu rows but no per-body datasets (written by an older mbspar); continue it "
            "with that version or start a new run",
            h->path, (unsigned long long)h->nrow);
  MBSP_H5_AGREE(h, mbsp_h5Group(h, "model"));
  for (int k = 0; k < h->nbset; k++) {
    const mbspH5BodySet *b = &h->bset[k];
    const char *slash = strchr(b->name, '/');
    if (slash) {
      char grp[64];
      snprintf(grp, sizeof grp, "%.*s", (int)(slash - b->name), b->name);
      MBSP_H5_AGREE(h, mbsp_h5Group(h, grp));
    }
    h->bdset[k] = mbsp_h5BodyDataset(h->file, b->name, h->nbody, b->ncomp);
    MBSP_H5_COLL(h, h->bdset[k]);
    MBSP_H5_COLL(h, mbsp_h5AttrString(h->bdset[k], "units", b->units ? b->units : ""));
    MBSP_H5_COLL(h, mbsp_h5AttrString(h->bdset[k], "description", b->desc ? b->desc : ""));
  }
  // static: parent index, line cells (parent, body) for viewers, body names
  int *lines = malloc(sizeof(int) * 2 * (size_t)(h->nbo > 0 ? h->nbo : 1));
  mbsErr el = mbsp_agreeErr(
      h->comm, lines ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory (HDF5 lines)"));
  if (el) {
    free(lines);
    return el;
  }
  for (int i = 0; i < h->nbo; i++) {
    int b = h->b0 + i;
    lines[2 * i] = parent[i] >= 0 ? parent[i] : b, lines[2 * i + 1] = b;
  }
  mbsErr e =
      mbsp_agreeErr(h->comm, mbsp_h5IntSlice(h, "model/parent", h->nbody, 0, h->b0, h->nbo, parent,
                                             "parent body index of each body, -1: the "
                                             "ground"));
  if (!e)
    e = mbsp_h5IntSlice(h, "model/lines", h->nbody, 2, h->b0, h->nbo, lines,
                        "one line cell per joint: (parent body, body); a body on the ground: "
                        "(body, body)");
  free(lines);
  MBSP_H5_AGREE(h, e);
  if (names)
    MBSP_H5_AGREE(h, mbsp_h5NameSlice(h, "model/names", names, h->nbody, h->b0, h->nbo,
                                      "writing the body names"));
  MBSP_H5_COLL(h, mbsp_h5AttrInt(h->file, "nbody", h->nbody));
  return MBS_OK;
}

mbsErr mbsp_h5Bodies(mbspH5 *h, int nbody, int b0, int nbo, const mbspH5BodySet *sets, int nset,
                     const int *parent, const char *const *names) {
  MBS_CHECK(h, MBS_ERR_INTERNAL, "mbsp_h5Bodies: no HDF5 writer");
  mbsErr e = MBS_OK;
  if (nset < 0 || nset > MBSP_H5_MAXBODYSET || h->nbset || nbody < 1 || b0 < 0 || nbo < 0 ||
      b0 + nbo > nbody)
    e = mbs_errSet(MBS_ERR_INTERNAL, "mbsp_h5Bodies: bad arguments on rank %d", h->rank);
  e = mbsp_agreeErr(h->comm, e);
  if (!e) {
    double n = nbo;
    e = mbsp_allreduceSum(h->comm, &n, 1);
    if (!e && n != nbody)
      e = mbs_errSet(MBS_ERR_INPUT, "HDF5 output: the ranks' body ranges hold %.0f of %d bodies", n,
                     nbody);
  }
  MBS_CALL(mbsp_agreeErr(h->comm, e));
  h->nbody = nbody, h->b0 = b0, h->nbo = nbo, h->nbset = nset;
  for (int k = 0; k < nset; k++) h->bset[k] = sets[k], h->bdset[k] = H5I_INVALID_HID;
  return mbsp_agreeErr(h->comm, mbsp_h5BodiesSetup(h, parent, names));
}

// a static (nbody) or (nbody, ncomp) double dataset of which this rank writes its bodies
static mbsErr mbsp_h5RealSlice(mbspH5 *h, const char *name, int ncomp, const double *buf,
                               const char *units, const char *desc) {
  int rank = ncomp > 0 ? 2 : 1;
  hsize_t nc = ncomp > 0 ? (hsize_t)ncomp : 1;
  hsize_t dims[2] = {(hsize_t)h->nbody, nc}, start[2] = {(hsize_t)h->b0, 0};
  hsize_t count[2] = {(hsize_t)h->nbo, nc}, mdim = count[0] * nc > 0 ? count[0] * nc : 1;
  double dummy = 0;
  hid_t fsp = H5Screate_simple(rank, dims, NULL), msp = H5Screate_simple(1, &mdim, NULL);
  hid_t d = H5I_INVALID_HID;
  herr_t rc = -1;
  if (fsp >= 0 && msp >= 0)
    d = H5Dcreate2(h->file, name, H5T_NATIVE_DOUBLE, fsp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (d >= 0) {
    rc = h->nbo > 0 ? H5Sselect_hyperslab(fsp, H5S_SELECT_SET, start, NULL, count, NULL)
                    : H5Sselect_none(fsp);
    if (rc >= 0 && h->nbo == 0) rc = H5Sselect_none(msp);
    if (rc >= 0) rc = H5Dwrite(d, H5T_NATIVE_DOUBLE, msp, fsp, h->dxpl, h->nbo ? buf : &dummy);
    // the attributes are collective: written also after a failure on this rank
    herr_t ra = mbsp_h5AttrString(d, "units", units ? units : "");
    herr_t rb = mbsp_h5AttrString(d, "description", desc ? desc : "");
    if (rc >= 0) rc = ra < 0 ? ra : rb;
  }
  if (rc < 0) mbsp_h5Save();
  if (d >= 0) H5Dclose(d);
  if (msp >= 0) H5Sclose(msp);
  if (fsp >= 0) H5Sclose(fsp);
  if (rc >= 0 && MBS_FAULT_WRITE_POINT()) rc = -1; // injected (mbs_fault.h)
  return rc < 0 ? mbsp_h5Fail(h->tmp, name) : MBS_OK;
}

mbsErr mbsp_h5BodyStatic(mbspH5 *h, const char *name, int ncomp, const double *owned,
                         const int *owned_int, const char *units, const char *desc) {
  MBS_CHECK(h && h->nbset, MBS_ERR_INTERNAL, "mbsp_h5BodyStatic before mbsp_h5Bodies");
  // a resumed file has it already
  htri_t ex = H5Lexists(h->file, name, H5P_DEFAULT);
  H5Eclear2(H5E_DEFAULT);
  if (ex > 0) return MBS_OK;
  mbsErr e = owned_int ? mbsp_h5IntSlice(h, name, h->nbody, ncomp, h->b0, h->nbo, owned_int, desc)
                       : mbsp_h5RealSlice(h, name, ncomp, owned, units, desc);
  return mbsp_agreeErr(h->comm, e);
}

void mbsp_h5BodyRow(mbspH5 *h, const double *const *data) {
  for (int k = 0; h && k < h->nbset; k++) h->brow[k] = data ? data[k] : NULL;
}

#else // no HDF5: every entry point says so (h5out.c)

mbsErr mbsp_h5Bodies(mbspH5 *h, int nbody, int b0, int nbo, const mbspH5BodySet *sets, int nset,
                     const int *parent, const char *const *names) {
  (void)h, (void)nbody, (void)b0, (void)nbo, (void)sets, (void)nset, (void)parent, (void)names;
  return mbsp_h5Unsupported(NULL);
}

void mbsp_h5BodyRow(mbspH5 *h, const double *const *data) {
  (void)h, (void)data;
}

mbsErr mbsp_h5BodyStatic(mbspH5 *h, const char *name, int ncomp, const double *owned,
                         const int *owned_int, const char *units, const char *desc) {
  (void)h, (void)name, (void)ncomp, (void)owned, (void)owned_int, (void)units, (void)desc;
  return mbsp_h5Unsupported(NULL);
}

#endif
