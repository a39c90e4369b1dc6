/// \file h5out_impl.h
/// What the HDF5 writer's files share (h5out.c: the file, its rows, restarts; h5out_bodies.c:
/// the per-body datasets): the writer's state and the helpers. Private to them; only with
/// MBS_HAVE_HDF5.
#ifndef MBSP_H5OUT_IMPL_H
#define MBSP_H5OUT_IMPL_H
#include <hdf5.h>
#include "h5out.h"

// datasets in the order of the ids below
enum { MBSP_H5_T, MBSP_H5_Q, MBSP_H5_QD, MBSP_H5_E, MBSP_H5_IT, MBSP_H5_NDSET };

// the per-body row datasets of mbsp_h5Bodies: groups holding (nrow, nbody[, ncomp]) datasets
#define MBSP_H5_MAXBODYSET 16

struct mbspH5 {
  mbspComm *comm;
  int rank;
  int nq, nv, q0, nqo, v0, nvo;
  hid_t file, dset[MBSP_H5_NDSET], dxpl;
  hsize_t nrow;
  char *path, *tmp;
  // per-body datasets (mbsp_h5Bodies): this rank writes bodies [b0, b0 + nbo) of every row
  int nbody, b0, nbo, nbset;
  mbspH5BodySet bset[MBSP_H5_MAXBODYSET];
  hid_t bdset[MBSP_H5_MAXBODYSET];
  const double *brow[MBSP_H5_MAXBODYSET]; // data of the next append (mbsp_h5BodyRow)
};

// one step of a collective sequence (creating, extending, writing, closing): its outcome is agreed
// by every rank before the next collective call, so a rank that failed alone (a full disk on one
// MPI-IO aggregator, an injected fault) cannot leave the others waiting in it; one small
// allreduce per HDF5 call of a sequence
#define MBSP_H5_AGREE(h, e)   MBS_CALL(mbsp_agreeErr((h)->comm, (e)))
#define MBSP_H5_COLL(h, expr) MBSP_H5_AGREE(h, (expr) < 0 ? mbsp_h5Fail((h)->tmp, #expr) : MBS_OK)

/// save HDF5's error stack; an HDF5 failure of \p file as MBS_ERR_IO with its innermost message
void mbsp_h5Save(void);
mbsErr mbsp_h5Fail(const char *file, const char *what);
herr_t mbsp_h5AttrString(hid_t obj, const char *name, const char *val);
herr_t mbsp_h5AttrInt(hid_t obj, const char *name, int val);
hid_t mbsp_h5BodyDataset(hid_t loc, const char *name, int nbody, int ncomp);
mbsErr mbsp_h5NameSlice(mbspH5 *h, const char *name, const char *const *names, int ntot, int off,
                        int n, const char *what);

#endif
