/// \file flex_out.c
/// The trajectory of a flexible run (issue 34; docs/flexible.md 6, docs/outputs.md "Flexible
/// runs"): `trajectory.csv` (output.format = csv) or `trajectory.h5` with `trajectory.xmf`
/// (hdf5). Every row holds the state (q, qd, eta, etad), the named nodes' world positions, every
/// body frame's world pose and the drawing points: for a rigid body its origin, centre of mass
/// and shape end (as the rigid runs' /bodies/points), for a flexible body the world positions of
/// its beam's FE nodes (the deformed shape, mbs_flexShape), so the XDMF's polylines bend with
/// the beam. One rank (flexible runs are serial): the HDF5 file is written with the default
/// (serial) driver as PATH.tmp and renamed when the run ends, the XDMF then written from its /t.
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "flex_run.h"
#include "spatial.h"
#include "mbspar/mbs_poses.h"
#ifdef MBS_HAVE_HDF5
#include <hdf5.h>
#endif

// the row datasets of the HDF5 file, in this order
enum { FO_T, FO_Q, FO_QD, FO_ETA, FO_ETAD, FO_E, FO_POS, FO_QUAT, FO_PTS, FO_NODES, FO_NDS };

struct mbspFlexOut {
  mbspFlexRun *R;
  int hdf5;
  FILE *f; ///< trajectory.csv
  char path[4200], tmp[4210], xmf[4200];
  int nbody, npt, nseg, nnode, nev;
  int *pt0;     ///< (nbody + 1) first drawing point of each body
  int *seg;     ///< (nseg x 2) the polylines' segments, point indices
  int *segbody; ///< (nseg) their bodies
  int *eoff;    ///< (nflex) offset of each flexible body's eta in x
  double *Rw, *pw, *pts, *quat, *pos, *nodes, *scratch;
#ifdef MBS_HAVE_HDF5
  hid_t file, d[FO_NDS];
  hsize_t nrow;
#endif
};

// the drawing points and segments: a rigid body has 3 points (origin, com, shape end) and 2
// segments, a flexible body its nfe FE nodes and nfe - 1 segments (a lumped body: its points and
// no segments, a point cloud); a body with a parent also the segment from the point it hangs
// from (the parent's origin, or the FE node of its node) to its first point
static mbsErr mbsp_foLayout(mbspFlexOut *o) {
  const mbsModel *m = o->R->m;
  const mbsFlexSet *set = m->flex;
  int nb = m->nbody, np = 0, ns = 0, mmax = 1;
  MBS_ALLOC(o->pt0, (size_t)nb + 1);
  MBS_ALLOC(o->eoff, (size_t)set->n + 1);
  for (int k = 0, off = o->R->nq; k < set->n; k++) {
    o->eoff[k] = off, off += set->b[k].modal.m;
    if (set->b[k].modal.m > mmax) mmax = set->b[k].modal.m;
    o->nnode += set->b[k].nnodes;
  }
  for (int b = 0; b < nb; b++) {
    const mbsFlexBody *fb = mbs_flexSetFind(set, b);
    int n = fb ? fb->modal.nfe : 3, cloud = fb && fb->modal.pos; // lumped: a point cloud
    o->pt0[b] = np, np += n, ns += (cloud ? 0 : n - 1) + (m->body_parent[b] >= 0);
  }
  o->pt0[nb] = np, o->npt = np, o->nseg = ns, o->nbody = nb;
  MBS_ALLOC(o->seg, 2 * (size_t)ns + 2);
  MBS_ALLOC(o->segbody, (size_t)ns + 1);
  ns = 0;
  for (int b = 0; b < nb; b++) {
    int p = m->body_parent[b];
    if (p >= 0) {
      int at = o->pt0[p], node = mbs_flexSetAttachedNode(set, b);
      const mbsFlexBody *fp = mbs_flexSetFind(set, p);
      if (fp && node >= 0) at += mbs_flexNodeFe(fp, node);
      o->seg[2 * ns] = at, o->seg[2 * ns + 1] = o->pt0[b], o->segbody[ns++] = b;
    }
    const mbsFlexBody *fb = mbs_flexSetFind(set, b);
    for (int i = o->pt0[b]; !(fb && fb->modal.pos) && i + 1 < o->pt0[b + 1]; i++)
      o->seg[2 * ns] = i, o->seg[2 * ns + 1] = i + 1, o->segbody[ns++] = b;
  }
  MBS_ALLOC(o->Rw, 9 * (size_t)nb);
  MBS_ALLOC(o->pw, 3 * (size_t)nb);
  MBS_ALLOC(o->pos, 3 * (size_t)nb);
  MBS_ALLOC(o->quat, 4 * (size_t)nb);
  MBS_ALLOC(o->pts, 3 * (size_t)np);
  MBS_ALLOC(o->nodes, 3 * (size_t)o->nnode + 3);
  MBS_ALLOC(o->scratch, 2 * (size_t)mmax);
  return MBS_OK;
}

// the row's poses, drawing points and named nodes at state x
static mbsErr mbsp_foCompute(mbspFlexOut *o, const double *x) {
  mbspFlexRun *R = o->R;
  const mbsModel *m = R->m;
  MBS_CALL(mbsp_flexBodyPoses(R, x, o->Rw, o->pw));
  for (int b = 0; b < m->nbody; b++) {
    const double *Rb = o->Rw + 9 * b, *pb = o->pw + 3 * b;
    double F[9], Rf[9], c[3], *P = o->pts + 3 * o->pt0[b];
    mbsu_quat2Mat(m->body_framequat + 4 * b, F);
    mbsu_mulMat3(Rb, F, Rf);
    mbsu_mat2Quat(Rf, o->quat + 4 * b);
    memcpy(o->pos + 3 * b, pb, 3 * sizeof(double));
    const mbsFlexBody *fb = mbs_flexSetFind(m->flex, b);
    if (fb) {
      mbs_flexShape(fb, x + o->eoff[fb - m->flex->b], Rb, pb, o->scratch, P);
      continue;
    }
    const double *tip = m->body_tip + 3 * b;
    mbsu_mulMat3Vec(Rb, m->body_com + 3 * b, c);
    for (int k = 0; k < 3; k++) P[k] = pb[k], P[3 + k] = pb[k] + c[k];
    mbsu_mulMat3Vec(Rb, tip, c);
    int notip = tip[0] == 0 && tip[1] == 0 && tip[2] == 0;
    for (int k = 0; k < 3; k++) P[6 + k] = notip ? P[3 + k] : pb[k] + c[k];
  }
  for (int k = 0, i = 0; k < m->flex->n; k++)
    for (int n = 0; n < m->flex->b[k].nnodes; n++, i++) {
      double Rn[9];
      MBS_CALL(mbsp_flexNodePose(R, x, k, n, o->nodes + 3 * i, Rn));
    }
  return MBS_OK;
}

// ---------------------------------------------------------------- CSV

static void mbsp_foCsvHeader(mbspFlexOut *o) {
  const mbsModel *m = o->R->m;
  const mbsFlexSet *set = m->flex;
  FILE *f = o->f;
  char nm[400];
  fputs("t", f);
  for (int b = 0; b < m->nbody; b++)
    for (int k = 0; k < m->body_qnum[b]; k++)
      fprintf(f, ",%s", mbs_coordName(m, "q", b, k, 0, nm, sizeof nm));
  for (int b = 0; b < m->nbody; b++)
    for (int k = 0; k < m->body_dofnum[b]; k++)
      fprintf(f, ",%s", mbs_coordName(m, "qd", b, k, 1, nm, sizeof nm));
  for (int r = 0; r < 2; r++)
    for (int k = 0; k < set->n; k++)
      for (int i = 0; i < set->b[k].modal.m; i++)
        fprintf(f, ",%s_%s_%d", r ? "etad" : "eta", set->b[k].name, i);
  for (int k = 0; k < set->n; k++)
    for (int n = 0; n < set->b[k].nnodes; n++)
      for (int c = 0; c < 3; c++)
        fprintf(f, ",node_%s_%s_%c", set->b[k].name, set->b[k].node_name[n], "xyz"[c]);
  for (int b = 0; b < m->nbody; b++) {
    for (int c = 0; c < 3; c++) fprintf(f, ",pos_%s_%c", m->body_name[b], "xyz"[c]);
    for (int c = 0; c < 4; c++) fprintf(f, ",quat_%s_q%c", m->body_name[b], "wxyz"[c]);
  }
  for (int k = 0; k < set->n; k++)
    for (int i = 0; i < set->b[k].modal.nfe; i++)
      for (int c = 0; c < 3; c++) fprintf(f, ",shape_%s_%d_%c", set->b[k].name, i, "xyz"[c]);
  fputc('\n', f);
}

// t, q, qd, eta, etad (the state is [q; eta; qd; etad]), the named nodes, the body poses, the
// flexible bodies' FE nodes
static void mbsp_foCsvRow(mbspFlexOut *o, const double *x) {
  const mbspFlexRun *R = o->R;
  const mbsModel *m = R->m;
  FILE *f = o->f;
  int nq = R->nq, ne = R->ne, nv = R->nv;
  fprintf(f, "%.17g", R->t);
  for (int i = 0; i < nq; i++) fprintf(f, ",%.17g", x[i]);
  for (int i = 0; i < nv; i++) fprintf(f, ",%.17g", x[nq + ne + i]);
  for (int i = 0; i < ne; i++) fprintf(f, ",%.17g", x[nq + i]);
  for (int i = 0; i < ne; i++) fprintf(f, ",%.17g", x[nq + ne + nv + i]);
  for (int i = 0; i < 3 * o->nnode; i++) fprintf(f, ",%.17g", o->nodes[i]);
  for (int b = 0; b < m->nbody; b++) {
    for (int c = 0; c < 3; c++) fprintf(f, ",%.17g", o->pos[3 * b + c]);
    for (int c = 0; c < 4; c++) fprintf(f, ",%.17g", o->quat[4 * b + c]);
  }
  for (int b = 0; b < m->nbody; b++)
    if (mbs_flexSetFind(m->flex, b))
      for (int i = 3 * o->pt0[b]; i < 3 * o->pt0[b + 1]; i++) fprintf(f, ",%.17g", o->pts[i]);
  fputc('\n', f);
}

// ---------------------------------------------------------------- HDF5

#ifdef MBS_HAVE_HDF5
static const struct {
  const char *name, *units, *desc;
} mbsp_fo_ds[FO_NDS] = {
    {"t", "s", "time of each row"},
    {"q", "rad, m", "joint coordinates, dof order (/q_names)"},
    {"qd", "rad/s, m/s", "joint rates, dof order (/qd_names)"},
    {"eta", "1", "modal coordinates of every flexible body, model order (/eta_names)"},
    {"etad", "1/s", "modal rates"},
    {"energy", "J", "the energy.csv columns but t and the driving forces (attribute columns)"},
    {"bodies/pos", "m", "world position of each body frame origin (flexible: floating frame)"},
    {"bodies/quat", "1", "world orientation of each body frame (w, x, y, z), w >= 0"},
    {"points", "m",
     "drawing points (world): per body /model/point_offset; rigid: origin, centre of mass, shape "
     "end; flexible: the deformed FE nodes of its beam, root first"},
    {"nodes/pos", "m", "world position of every named node of the flexible bodies (/nodes/names)"},
};

static mbsErr mbsp_foH5Fail(const mbspFlexOut *o, const char *what) {
  return mbs_errSet(MBS_ERR_IO, "%s: HDF5 %s failed", o->tmp, what);
}

static herr_t mbsp_foAttr(hid_t obj, const char *name, const char *val) {
  hid_t st = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR), a = H5I_INVALID_HID;
  herr_t rc = -1;
  if (st >= 0 && sp >= 0 && H5Tset_size(st, strlen(val) + 1) >= 0)
    a = H5Acreate2(obj, name, st, sp, H5P_DEFAULT, H5P_DEFAULT);
  if (a >= 0) rc = H5Awrite(a, st, val), H5Aclose(a);
  if (sp >= 0) H5Sclose(sp);
  if (st >= 0) H5Tclose(st);
  return rc;
}

// the shape of row dataset k after its row dimension: (ncol) or (n, ncomp)
static int mbsp_foShape(const mbspFlexOut *o, int k, hsize_t *d) {
  const mbspFlexRun *R = o->R;
  int c[FO_NDS][2] = {{0, 0},      {R->nq, 0},    {R->nv, 0},    {R->ne, 0},  {R->ne, 0},
                      {o->nev, 0}, {o->nbody, 3}, {o->nbody, 4}, {o->npt, 3}, {o->nnode, 3}};
  d[0] = (hsize_t)c[k][0], d[1] = (hsize_t)c[k][1];
  return k == FO_T ? 1 : c[k][1] ? 3 : 2;
}

// an extendible dataset of 0 rows; every dimension unlimited so empty ones (nq = 0) can chunk
static hid_t mbsp_foDataset(mbspFlexOut *o, int k) {
  hsize_t s[2], dims[3] = {0, 0, 0}, maxd[3], chunk[3];
  int rank = mbsp_foShape(o, k, s);
  hsize_t per = 1;
  for (int i = 1; i < rank; i++) {
    dims[i] = s[i - 1], chunk[i] = s[i - 1] > 0 ? s[i - 1] : 1, per *= chunk[i];
  }
  for (int i = 0; i < rank; i++) maxd[i] = H5S_UNLIMITED;
  chunk[0] = 32768 / per > 1024 ? 1024 : (32768 / per > 0 ? 32768 / per : 1);
  hid_t sp = H5Screate_simple(rank, dims, maxd), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE), d = H5I_INVALID_HID;
  if (sp >= 0 && dcpl >= 0 && lcpl >= 0 && H5Pset_chunk(dcpl, rank, chunk) >= 0 &&
      H5Pset_create_intermediate_group(lcpl, 1) >= 0)
    d = H5Dcreate2(o->file, mbsp_fo_ds[k].name, H5T_NATIVE_DOUBLE, sp, lcpl, dcpl, H5P_DEFAULT);
  if (d >= 0 && (mbsp_foAttr(d, "units", mbsp_fo_ds[k].units) < 0 ||
                 mbsp_foAttr(d, "description", mbsp_fo_ds[k].desc) < 0)) {
    H5Dclose(d);
    d = H5I_INVALID_HID;
  }
  if (lcpl >= 0) H5Pclose(lcpl);
  if (dcpl >= 0) H5Pclose(dcpl);
  if (sp >= 0) H5Sclose(sp);
  return d;
}

// a static dataset: ints (n x ncomp; ncomp 0: 1-D) or n fixed-length strings (names)
static mbsErr mbsp_foStatic(mbspFlexOut *o, const char *name, const int *iv, int n, int ncomp,
                            const char *const *names, const char *desc) {
  if (n <= 0) return MBS_OK;
  hsize_t dims[2] = {(hsize_t)n, (hsize_t)ncomp};
  hid_t sp = H5Screate_simple(ncomp ? 2 : 1, dims, NULL), st = H5I_INVALID_HID;
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE), d = H5I_INVALID_HID;
  char *buf = NULL;
  size_t w = 1;
  herr_t rc = -1;
  if (names) {
    for (int i = 0; i < n; i++)
      if (strlen(names[i]) + 1 > w) w = strlen(names[i]) + 1;
    buf = calloc((size_t)n, w);
    st = H5Tcopy(H5T_C_S1);
    if (buf && st >= 0 && H5Tset_size(st, w) >= 0 && H5Tset_strpad(st, H5T_STR_NULLTERM) >= 0)
      for (int i = 0; i < n; i++) memcpy(buf + (size_t)i * w, names[i], strlen(names[i]));
    else
      st = st >= 0 ? (H5Tclose(st), H5I_INVALID_HID) : st;
  }
  if (sp >= 0 && lcpl >= 0 && H5Pset_create_intermediate_group(lcpl, 1) >= 0 && (!names || st >= 0))
    d = H5Dcreate2(o->file, name, names ? st : H5T_NATIVE_INT, sp, lcpl, H5P_DEFAULT, H5P_DEFAULT);
  if (d >= 0)
    rc = H5Dwrite(d, names ? st : H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                  names ? (const void *)buf : (const void *)iv);
  if (rc >= 0) rc = mbsp_foAttr(d, "description", desc);
  if (d >= 0) H5Dclose(d);
  if (st >= 0) H5Tclose(st);
  if (lcpl >= 0) H5Pclose(lcpl);
  if (sp >= 0) H5Sclose(sp);
  free(buf);
  return rc < 0 ? mbsp_foH5Fail(o, name) : MBS_OK;
}

// names of a new file: /q_names, /qd_names, /eta_names, /model/*, /nodes/names
static mbsErr mbsp_foH5Names(mbspFlexOut *o) {
  const mbsModel *m = o->R->m;
  const mbsFlexSet *set = m->flex;
  int nmax = m->nq + m->nv + o->R->ne + m->nbody + o->nnode + 1;
  char **nm = calloc((size_t)nmax, sizeof *nm);
  int *iv = malloc(sizeof(int) * ((size_t)m->nbody + 1));
  mbsErr e = nm && iv ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory (HDF5 names)");
  for (int i = 0; !e && i < nmax; i++)
    if (!(nm[i] = malloc(400))) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (HDF5 names)");
  int n = 0;
  for (int b = 0; !e && b < m->nbody; b++)
    for (int k = 0; k < m->body_qnum[b]; k++) mbs_coordName(m, "q", b, k, 0, nm[n++], 400);
  if (!e) e = mbsp_foStatic(o, "q_names", NULL, n, 0, (const char *const *)nm, "names of /q");
  n = 0;
  for (int b = 0; !e && b < m->nbody; b++)
    for (int k = 0; k < m->body_dofnum[b]; k++) mbs_coordName(m, "qd", b, k, 1, nm[n++], 400);
  if (!e) e = mbsp_foStatic(o, "qd_names", NULL, n, 0, (const char *const *)nm, "names of /qd");
  n = 0;
  for (int k = 0; !e && k < set->n; k++)
    for (int i = 0; i < set->b[k].modal.m; i++)
      snprintf(nm[n++], 400, "eta_%s_%d", set->b[k].name, i);
  if (!e) e = mbsp_foStatic(o, "eta_names", NULL, n, 0, (const char *const *)nm, "names of /eta");
  n = 0;
  for (int k = 0; !e && k < set->n; k++)
    for (int i = 0; i < set->b[k].nnodes; i++)
      snprintf(nm[n++], 400, "%s.%s", set->b[k].name, set->b[k].node_name[i]);
  if (!e) e = mbsp_foStatic(o, "nodes/names", NULL, n, 0, (const char *const *)nm, "BODY.NODE");
  for (int b = 0; !e && b < m->nbody; b++) snprintf(nm[b], 400, "%s", m->body_name[b]);
  if (!e) e = mbsp_foStatic(o, "model/names", NULL, m->nbody, 0, (const char *const *)nm, "bodies");
  if (!e)
    e = mbsp_foStatic(o, "model/parent", m->body_parent, m->nbody, 0, NULL, "parent, -1: ground");
  for (int b = 0; !e && b < m->nbody; b++) iv[b] = mbs_flexSetFind(set, b) != NULL;
  if (!e) e = mbsp_foStatic(o, "model/flexible", iv, m->nbody, 0, NULL, "1: a flexible body");
  if (!e)
    e = mbsp_foStatic(o, "model/point_offset", o->pt0, m->nbody + 1, 0, NULL,
                      "first drawing point of each body in /points (and the total)");
  if (!e)
    e = mbsp_foStatic(o, "model/segments", o->seg, o->nseg, 2, NULL,
                      "the XDMF topology: line segments between points of /points");
  if (!e)
    e = mbsp_foStatic(o, "model/segment_body", o->segbody, o->nseg, 0, NULL,
                      "the body of each segment (the XDMF cell data body)");
  for (int i = 0; nm && i < nmax; i++) free(nm[i]);
  free(nm), free(iv);
  return e;
}

static mbsErr mbsp_foH5Open(mbspFlexOut *o, int restart) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  FILE *chk = fopen(o->path, "rb"); // a restart continues trajectory.h5 (or, after a kill, .tmp)
  if (chk) fclose(chk);
  if (restart && chk && rename(o->path, o->tmp))
    return mbs_errSet(MBS_ERR_IO, "%s: cannot rename: %s", o->path, strerror(errno));
  FILE *tf = restart ? fopen(o->tmp, "rb") : NULL;
  if (tf) fclose(tf);
  if (!tf) {
    o->file = H5Fcreate(o->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (o->file < 0) return mbsp_foH5Fail(o, "file create");
    for (int k = 0; k < FO_NDS; k++)
      if ((o->d[k] = mbsp_foDataset(o, k)) < 0) return mbsp_foH5Fail(o, mbsp_fo_ds[k].name);
    if (mbsp_foAttr(o->file, "format", "mbspar flexible trajectory") < 0 ||
        mbsp_foAttr(o->file, "version", "1") < 0 ||
        mbsp_foAttr(o->d[FO_E], "columns",
                    o->nev > 4 ? "kinetic,potential,elastic,total,work,total_minus_work"
                               : "kinetic,potential,elastic,total") < 0)
      return mbsp_foH5Fail(o, "attributes");
    return mbsp_foH5Names(o);
  }
  o->file = H5Fopen(o->tmp, H5F_ACC_RDWR, H5P_DEFAULT);
  if (o->file < 0) return mbsp_foH5Fail(o, "file open");
  hsize_t keep = 0, nrow = 0;
  for (int k = 0; k < FO_NDS; k++) {
    hsize_t s[2], dims[3] = {0, 0, 0};
    int rank = mbsp_foShape(o, k, s);
    o->d[k] = H5Dopen2(o->file, mbsp_fo_ds[k].name, H5P_DEFAULT);
    hid_t sp = o->d[k] >= 0 ? H5Dget_space(o->d[k]) : H5I_INVALID_HID;
    int ok = sp >= 0 && H5Sget_simple_extent_ndims(sp) == rank &&
             H5Sget_simple_extent_dims(sp, dims, NULL) >= 0 && (rank < 2 || dims[1] == s[0]) &&
             (rank < 3 || dims[2] == s[1]) && (k == FO_T || dims[0] == nrow);
    if (k == FO_T) nrow = dims[0];
    if (sp >= 0) H5Sclose(sp);
    if (!ok)
      return mbs_errSet(MBS_ERR_INPUT,
                        "%s: not the trajectory of this flexible model (dataset /%s; --restart "
                        "continues the run's own directory)",
                        o->tmp, mbsp_fo_ds[k].name);
  }
  double *t = malloc(sizeof(double) * ((size_t)nrow + 1));
  if (!t) return mbs_errSet(MBS_ERR_NOMEM, "out of memory (HDF5 restart)");
  herr_t rc = nrow ? H5Dread(o->d[FO_T], H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t) : 0;
  while (rc >= 0 && keep < nrow && t[keep] <= o->R->t) keep++; // rows after the checkpoint go
  free(t);
  if (rc < 0) return mbsp_foH5Fail(o, "read /t");
  for (int k = 0; k < FO_NDS; k++) {
    hsize_t s[2], dims[3] = {keep, 0, 0};
    int rank = mbsp_foShape(o, k, s);
    dims[1] = s[0], dims[2] = s[1];
    if (H5Dset_extent(o->d[k], dims) < 0) return mbsp_foH5Fail(o, "set extent");
    (void)rank;
  }
  o->nrow = keep;
  return MBS_OK;
}

static mbsErr mbsp_foH5Row(mbspFlexOut *o, const double *x, const double *ev) {
  const mbspFlexRun *R = o->R;
  const double *data[FO_NDS] = {
      &R->t, x,      x + R->nq + R->ne, x + R->nq, x + R->nq + R->ne + R->nv,
      ev,    o->pos, o->quat,           o->pts,    o->nodes};
  for (int k = 0; k < FO_NDS; k++) {
    hsize_t s[2], dims[3], start[3] = {o->nrow, 0, 0}, count[3];
    int rank = mbsp_foShape(o, k, s);
    dims[0] = o->nrow + 1, dims[1] = s[0], dims[2] = s[1];
    count[0] = 1, count[1] = s[0], count[2] = s[1];
    if (H5Dset_extent(o->d[k], dims) < 0) return mbsp_foH5Fail(o, "extend");
    hsize_t n = 1;
    for (int i = 1; i < rank; i++) n *= count[i];
    if (!n) continue;
    hid_t fs = H5Dget_space(o->d[k]), ms = H5Screate_simple(1, &n, NULL);
    herr_t rc =
        fs >= 0 && ms >= 0 ? H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) : -1;
    if (rc >= 0) rc = H5Dwrite(o->d[k], H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, data[k]);
    if (fs >= 0) H5Sclose(fs);
    if (ms >= 0) H5Sclose(ms);
    if (rc < 0) return mbsp_foH5Fail(o, mbsp_fo_ds[k].name);
  }
  o->nrow++;
  return MBS_OK;
}

// trajectory.xmf (XDMF 3, ParaView's default reader): a temporal collection, one grid per row:
// the segments of /model/segments over row i of /points, the cell data body; the row selection
// in Xdmf3's "FILE:/DS|START:STRIDE:COUNT:DATASPACE" form (parallel/xdmf.c says why)
static mbsErr mbsp_foXdmf(mbspFlexOut *o) {
  long n = (long)o->nrow, np = o->npt, ns = o->nseg;
  double *t = malloc(sizeof(double) * ((size_t)n + 1));
  if (!t) return mbs_errSet(MBS_ERR_NOMEM, "out of memory (XDMF)");
  if (n && H5Dread(o->d[FO_T], H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t) < 0) {
    free(t);
    return mbsp_foH5Fail(o, "read /t");
  }
  char tmp[4220];
  snprintf(tmp, sizeof tmp, "%s.tmp", o->xmf);
  FILE *f = fopen(tmp, "w");
  if (!f) {
    free(t);
    return mbs_errSet(MBS_ERR_IO, "%s: cannot write: %s", tmp, strerror(errno));
  }
  const char *h5 = "trajectory.h5";
  fprintf(f, "<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
             "<!-- mbspar flexible trajectory: line segments through the drawing points (rigid "
             "bodies: origin,\n     centre of mass, shape end; flexible bodies: the deformed FE "
             "nodes); docs/outputs.md -->\n"
             "<Xdmf Version=\"3.0\">\n  <Domain>\n"
             "    <Grid Name=\"mbspar\" GridType=\"Collection\" CollectionType=\"Temporal\">\n");
  for (long i = 0; i < n; i++) {
    fprintf(f,
            "      <Grid Name=\"row %ld\" GridType=\"Uniform\">\n      <Time Value=\"%.17g\"/>\n",
            i, t[i]);
    fprintf(f,
            "      <Topology TopologyType=\"Polyline\" NodesPerElement=\"2\" "
            "NumberOfElements=\"%ld\">\n        <DataItem Dimensions=\"%ld 2\" NumberType=\"Int\" "
            "Precision=\"4\" Format=\"HDF\">%s:/model/segments</DataItem>\n      </Topology>\n",
            ns, ns, h5);
    fprintf(f,
            "      <Geometry GeometryType=\"XYZ\">\n        <DataItem Dimensions=\"1 %ld 3\" "
            "NumberType=\"Float\" Precision=\"8\" Format=\"HDF\">%s:/points|%ld 0 0:1 1 1:1 %ld "
            "3:%ld %ld 3</DataItem>\n      </Geometry>\n",
            np, h5, i, np, n, np);
    fprintf(f,
            "      <Attribute Name=\"body\" AttributeType=\"Scalar\" Center=\"Cell\">\n"
            "        <DataItem Dimensions=\"%ld\" NumberType=\"Int\" Precision=\"4\" "
            "Format=\"HDF\">%s:/model/segment_body</DataItem>\n      </Attribute>\n      </Grid>\n",
            ns, h5);
  }
  fprintf(f, "    </Grid>\n  </Domain>\n</Xdmf>\n");
  free(t);
  if (fclose(f) || rename(tmp, o->xmf))
    return mbs_errSet(MBS_ERR_IO, "%s: cannot write: %s", o->xmf, strerror(errno));
  return MBS_OK;
}

static mbsErr mbsp_foH5Close(mbspFlexOut *o, int ok) {
  mbsErr e = MBS_OK;
  if (ok && o->file >= 0) e = mbsp_foXdmf(o);
  for (int k = 0; k < FO_NDS; k++)
    if (o->d[k] >= 0) H5Dclose(o->d[k]);
  if (o->file >= 0 && H5Fclose(o->file) < 0 && !e) e = mbsp_foH5Fail(o, "close");
  o->file = H5I_INVALID_HID;
  if (ok && !e && rename(o->tmp, o->path))
    e = mbs_errSet(MBS_ERR_IO, "%s: cannot rename: %s", o->tmp, strerror(errno));
  return e;
}
#endif

// ---------------------------------------------------------------- the interface

static void mbsp_foFree(mbspFlexOut *o) {
  free(o->pt0), free(o->seg), free(o->segbody), free(o->eoff), free(o->Rw), free(o->pw);
  free(o->pts), free(o->quat), free(o->pos), free(o->nodes), free(o->scratch);
  free(o);
}

mbsErr mbsp_flexOutOpen(mbspFlexRun *R, const char *dir, int restart, mbspFlexOut **po) {
  *po = NULL;
  mbspFlexOut *o = calloc(1, sizeof *o);
  if (!o) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  o->R = R, o->hdf5 = R->cfg->out_format == MBS_OUTFMT_HDF5, o->nev = R->dr.k ? 6 : 4;
#ifdef MBS_HAVE_HDF5
  o->file = H5I_INVALID_HID;
  for (int k = 0; k < FO_NDS; k++) o->d[k] = H5I_INVALID_HID;
#endif
  mbsErr e = mbsp_foLayout(o);
  snprintf(o->path, sizeof o->path, "%s/trajectory.%s", dir, o->hdf5 ? "h5" : "csv");
  snprintf(o->tmp, sizeof o->tmp, "%s.tmp", o->path);
  snprintf(o->xmf, sizeof o->xmf, "%s/trajectory.xmf", dir);
  if (!e && !o->hdf5) {
    o->f = fopen(o->path, restart ? "a" : "w");
    if (!o->f) e = mbs_errSet(MBS_ERR_IO, "%s: cannot write: %s", o->path, strerror(errno));
    if (!e && !restart) mbsp_foCsvHeader(o);
  } else if (!e) {
#ifdef MBS_HAVE_HDF5
    e = mbsp_foH5Open(o, restart);
    if (e) mbsp_foH5Close(o, 0);
#else
    e = mbs_errSet(MBS_ERR_UNSUPPORTED,
                   "output.format = hdf5: this mbspar was built without HDF5 (Debian "
                   "libhdf5-openmpi-dev; CMake option MBS_ENABLE_HDF5)");
#endif
  }
  if (e) {
    if (o->f) fclose(o->f);
    mbsp_foFree(o);
    return e;
  }
  *po = o;
  return MBS_OK;
}

mbsErr mbsp_flexOutRow(mbspFlexOut *o, const double *x, const double *ev, int nev) {
  (void)nev;
  MBS_CALL(mbsp_foCompute(o, x));
  if (!o->hdf5) {
    mbsp_foCsvRow(o, x);
    fflush(o->f); // every output row reaches the file (a kill loses no complete row)
    return MBS_OK;
  }
#ifdef MBS_HAVE_HDF5
  return mbsp_foH5Row(o, x, ev);
#else
  return MBS_ERR_UNSUPPORTED;
#endif
}

mbsErr mbsp_flexOutFlush(mbspFlexOut *o) {
  if (!o->hdf5) return fflush(o->f) ? mbs_errSet(MBS_ERR_IO, "%s: write failed", o->path) : MBS_OK;
#ifdef MBS_HAVE_HDF5
  if (H5Fflush(o->file, H5F_SCOPE_LOCAL) < 0) return mbsp_foH5Fail(o, "flush");
#endif
  return MBS_OK;
}

mbsErr mbsp_flexOutClose(mbspFlexOut **po, int ok) {
  if (!po || !*po) return MBS_OK;
  mbspFlexOut *o = *po;
  mbsErr e = MBS_OK;
  if (o->f && fclose(o->f) && ok) e = mbs_errSet(MBS_ERR_IO, "%s: write failed", o->path);
#ifdef MBS_HAVE_HDF5
  if (o->hdf5) {
    mbsErr eh = mbsp_foH5Close(o, ok);
    if (!e) e = eh;
  }
#endif
  mbsp_foFree(o);
  *po = NULL;
  return e;
}
