/// \file sim_h5w.c
/// `mbspar run`'s HDF5+XDMF trajectory writer (output.format = hdf5; a row of mbsp_writers[],
/// simout.h): DIR/trajectory.h5 (h5out.c, every rank writes its slices) and DIR/trajectory.xmf
/// for ParaView (xdmf.c, rank 0).
///
/// Flushing (docs/outputs.md "Flushing"): the HDF5 file is flushed (H5Fflush: the datasets'
/// extents and the chunk index on disk, the file opens after a kill) and only then are the rows'
/// grids added to the XDMF file, which so never lists a row the HDF5 file lacks.
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "h5out.h"
#include "simout.h"
#include "xdmf.h"

struct mbspWriter {
  mbspOutEnv env;
  mbspH5 *h5;    // every rank
  mbspXdmf *xmf; // rank 0
};

static mbsErr mbsp_h5wCreate(const mbspOutEnv *env, mbspWriter **w) {
  *w = calloc(1, sizeof **w);
  MBS_CHECK(*w, MBS_ERR_NOMEM, "out of memory (HDF5 writer)");
  (*w)->env = *env;
  return MBS_OK;
}

// --restart, rank 0: trajectory.h5 must be of this model's sizes
static mbsErr mbsp_h5wCheckFile(mbspWriter *w) {
  char p[4200];
  snprintf(p, sizeof p, "%s/trajectory.h5", w->env.dir);
  return mbsp_h5Probe(p, w->env.m->nq, w->env.m->nv);
}

// create (or, on --restart, continue from the time \p t_cut) DIR/trajectory.h5 (collective)
static mbsErr mbsp_h5wOpen(mbspWriter *w, int append, long step, double t_cut) {
  (void)step;
  const mbspOutEnv *E = &w->env;
  const mbsModel *m = E->m;
  char path[4200], **nm = calloc((size_t)(m->nq + m->nv), sizeof(char *));
  snprintf(path, sizeof path, "%s/trajectory.h5", E->dir);
  // the CSV column names, q then qd
  int nomem = !nm;
  for (int b = 0, i = 0, j = m->nq; nm && b < m->nbody; b++) {
    size_t len = strlen(m->body_name[b]) + 16;
    for (int k = 0; k < m->body_qnum[b]; k++, i++)
      if ((nm[i] = malloc(len)))
        mbs_coordName(m, "q", b, k, 0, nm[i], len);
      else
        nomem = 1;
    for (int k = 0; k < m->body_dofnum[b]; k++, j++)
      if ((nm[j] = malloc(len)))
        mbs_coordName(m, "qd", b, k, 1, nm[j], len);
      else
        nomem = 1;
  }
  const char *const *cn = (const char *const *)nm;
  mbsErr e = mbsp_agreeErr(
      E->comm, nomem ? mbs_errSet(MBS_ERR_NOMEM, "out of memory (HDF5 column names)") : MBS_OK);
  if (!e)
    e = append
            ? mbsp_h5Resume(E->comm, path, m->nq, m->nv, E->q0, E->nqo, E->v0, E->nvo, cn, t_cut,
                            &w->h5)
            : mbsp_h5Create(E->comm, path, m->nq, m->nv, E->q0, E->nqo, E->v0, E->nvo, cn, &w->h5);
  for (int i = 0; nm && i < m->nq + m->nv; i++) free(nm[i]);
  free(nm);
  // the per-body datasets (/bodies, /joints, /model)
  if (!e) e = mbsp_bodyOutH5(E->bo, w->h5);
  // rank 0: the XDMF description for ParaView (a restart continues it from the kept rows)
  if (!e && E->rank == 0) {
    char px[4200], pe[4200];
    snprintf(px, sizeof px, "%s/trajectory.xmf", E->dir);
    snprintf(pe, sizeof pe, "%s/energy.csv", E->dir);
    e = mbsp_xdmfOpen(px, "trajectory.h5", m->nbody, E->cfg->out_joint_wrench, mbsp_h5Rows(w->h5),
                      pe, &w->xmf);
  }
  e = mbsp_agreeErr(E->comm, e);
  if (e) mbsp_h5Abandon(&w->h5);
  return e;
}

// every rank its owned slices [q_own; qd_own] (collective, agreed inside); the XDMF grid of the
// row is written once the row is flushed (mbsp_h5wFlush)
static mbsErr mbsp_h5wRow(mbspWriter *w, const mbspOutRow *r) {
  mbsErr e = MBS_OK;
  mbsp_bodyOutH5Row(w->env.bo, w->h5);
  MBS_CALL(mbsp_h5Append(w->h5, r->t, r->q_own, r->qd_own, r->en, r->avg));
  if (w->xmf) e = mbsp_xdmfAppend(w->xmf, mbsp_h5Rows(w->h5) - 1, r->t);
  return mbsp_agreeErr(w->env.comm, e);
}

// the HDF5 file (collective), then the XDMF grids of the flushed rows (rank 0)
static mbsErr mbsp_h5wFlush(mbspWriter *w) {
  mbsErr e = MBS_OK;
  if (w->h5) MBS_CALL(mbsp_h5Flush(w->h5));
  if (w->xmf) e = mbsp_xdmfCommit(w->xmf, mbsp_h5Rows(w->h5));
  return mbsp_agreeErr(w->env.comm, e);
}

// the rows written are complete: close (rename into place) also after an error (collective)
static mbsErr mbsp_h5wClose(mbspWriter *w) {
  return mbsp_h5Close(&w->h5);
}

// rank 0: the final row count in every grid
static mbsErr mbsp_h5wClose0(mbspWriter *w) {
  return w->xmf ? mbsp_xdmfClose(&w->xmf) : MBS_OK;
}

static void mbsp_h5wDestroy(mbspWriter **w) {
  if (!*w) return;
  mbsp_h5Abandon(&(*w)->h5);
  free(*w);
  *w = NULL;
}

static const char *const mbsp_h5wFiles[] = {"trajectory.h5", "trajectory.xmf", NULL};

const mbspWriterOps mbsp_writerH5 = {
    .format = MBS_OUTFMT_HDF5,
    .summary = "trajectory.h5, trajectory.xmf",
    .files = mbsp_h5wFiles,
    .joint_wrench = 1,
    .create = mbsp_h5wCreate,
    .check_file = mbsp_h5wCheckFile,
    .open = mbsp_h5wOpen,
    .row = mbsp_h5wRow,
    .flush = mbsp_h5wFlush,
    .close = mbsp_h5wClose,
    .close0 = mbsp_h5wClose0,
    .destroy = mbsp_h5wDestroy,
};
