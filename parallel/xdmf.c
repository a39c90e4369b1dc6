/// \file xdmf.c
/// `trajectory.xmf` (XDMF 3, ParaView's default reader) and `trajectory.xdmf2` (XDMF 2, the
/// legacy "XDMF Reader") for the HDF5 trajectory.
///
/// No communication: rank 0 writes the XML, a temporal collection with one uniform grid per
/// output row. Every grid selects its row of the HDF5 datasets:
///   topology  Polyline, 4 nodes per element, one element per body: /model/cells (the parent's
///             origin, the body's origin, centre of mass, shape end)
///   geometry  XYZ: row i of /bodies/points (3 points per body)
///   cell data body (from /model/lines[:, 1]), speed, velocity, angular_velocity, force and
///             torque (|joints/wrench|) when written
/// The two readers share no way of selecting a row: the Xdmf3 library reads a HyperSlab item as
/// a reference whose number type VTK sees as None ("Skipping unrecognized array type [None]":
/// no points, no arrays), and the legacy reader does not parse Xdmf3's "FILE:/DS|SELECTION"
/// content. So the .xmf takes the Xdmf3 form and the .xdmf2 (an extension only the legacy reader
/// claims) the HyperSlab form, with the same grids. In the legacy form each grid's geometry
/// starts with an XML comment naming its row: that reader caches a grid's geometry by the text
/// of its first DataItem child, and the comment makes that key differ per row.
/// Trade-offs: when rows are flushed to the HDF5 file the whole file is written again through
/// PATH.tmp renamed over PATH (mbsp_xdmfCommit), once the new rows are an eighth of those listed:
/// valid XDMF at every moment of the run and after a kill, never listing a row the HDF5
/// file lacks, O(rows) bytes in all, lagging the HDF5 file by at most an eighth of its rows until
/// the end (until 2026-11-29 the tail was rewritten in place, which a SIGKILL could cut between
/// the new grids and the closing tags); while the run goes
/// on, the grids name the HDF5 file by its temporary name (trajectory.h5.tmp, which h5out.c
/// renames at the end) and declare the dataset's row count at the time they were written
/// (readers take the selection, which is inside); mbsp_xdmfClose rewrites the whole file once
/// with the final name and row count, so strict readers see matching dimensions, and writes the
/// .xdmf2 then (only then: an interrupted run has the .xmf alone). Nothing per body.
#define _POSIX_C_SOURCE 200809L
#include "xdmf.h"
#include "mbspar/mbs_fault.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mbspXdmf {
  char *path, *h5; // h5: the name in the grids (the .tmp name while the run goes on)
  char *legacy;    // STEM.xdmf2: the XDMF 2 form (legacy reader), written by mbsp_xdmfClose
  char *h5final;   // the HDF5 file's name after the run (mbsp_h5Close renames it)
  int nbody, wrench;
  FILE *f;
  long tail;  // offset of the closing tags
  long nrow;  // rows described (mbsp_xdmfAppend)
  long ngrid; // grids written into the file (mbsp_xdmfCommit: rows flushed to the HDF5 file)
  double *t;  // (cap) time of each row
  long cap;
};

static const char mbsp_xdmf_head[] =
    "<?xml version=\"1.0\" ?>\n"
    "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
    "<!-- mbspar trajectory: one polyline per body (parent's origin, origin, centre of mass,\n"
    "     shape end); heavy data in the HDF5 file, layout in docs/outputs.md -->\n"
    "<Xdmf Version=\"2.0\">\n"
    "  <Domain>\n"
    "    <Grid Name=\"mbspar\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
static const char mbsp_xdmf_tail[] = "    </Grid>\n  </Domain>\n</Xdmf>\n";

// a selection of an HDF5 dataset of \p ndim dimensions, \p full of them, in a dialect:
//   3 (XDMF 3, ParaView's default reader Xdmf3ReaderS): one HDF item whose content carries
//     the selection, "FILE:/DS|START:STRIDE:COUNT:DATASPACE" (the Xdmf3 library reads only this
//     form; its HyperSlab items are references whose number type it reports as None)
//   2 (XDMF 2, the legacy "XDMF Reader"): a HyperSlab item around the HDF item
// \p comment (dialect 2): an XML comment after the HyperSlab tag (the legacy reader caches a
// grid's geometry by the text of its first DataItem child: the comment makes it differ per row)
static void mbsp_xdmfSel(FILE *f, const mbspXdmf *x, int dialect, int ndim, const long *start,
                         const long *count, const long *full, const char *type, const char *ds,
                         const char *comment) {
  char cnt[64] = "", st[64] = "", one[64] = "", dsp[64] = "";
  for (int k = 0; k < ndim; k++) {
    const char *sp = k ? " " : "";
    size_t l = strlen(cnt);
    snprintf(cnt + l, sizeof cnt - l, "%s%ld", sp, count[k]);
    l = strlen(st), snprintf(st + l, sizeof st - l, "%s%ld", sp, start[k]);
    l = strlen(one), snprintf(one + l, sizeof one - l, "%s1", sp);
    l = strlen(dsp), snprintf(dsp + l, sizeof dsp - l, "%s%ld", sp, full[k]);
  }
  if (dialect == 3) {
    fprintf(f,
            "        <DataItem Dimensions=\"%s\" %s Format=\"HDF\">%s:/%s|%s:%s:%s:%s</DataItem>\n",
            cnt, type, x->h5, ds, st, one, cnt, dsp);
    return;
  }
  fprintf(f, "        <DataItem ItemType=\"HyperSlab\" Dimensions=\"%s\" Type=\"HyperSlab\">", cnt);
  if (comment) fprintf(f, "<!-- %s -->", comment);
  fprintf(f,
          "\n          <DataItem Dimensions=\"3 %d\" Format=\"XML\">%s %s %s</DataItem>\n"
          "          <DataItem Dimensions=\"%s\" %s Format=\"HDF\">%s:/%s</DataItem>\n"
          "        </DataItem>\n",
          ndim, st, one, cnt, dsp, type, x->h5, ds);
}

static const char mbsp_xdmf_real[] = "NumberType=\"Float\" Precision=\"8\"";
static const char mbsp_xdmf_int[] = "NumberType=\"Int\" Precision=\"4\"";

// row i of the per-body dataset ds (nrow rows, nbody bodies, ncomp components; 0: 2-D)
static void mbsp_xdmfRow(FILE *f, const mbspXdmf *x, int dialect, long i, long nrow, const char *ds,
                         int ncomp, const char *comment) {
  long start[3] = {i, 0, 0}, count[3] = {1, x->nbody, ncomp}, full[3] = {nrow, x->nbody, ncomp};
  mbsp_xdmfSel(f, x, dialect, ncomp > 0 ? 3 : 2, start, count, full, mbsp_xdmf_real, ds, comment);
}

static void mbsp_xdmfGrid(FILE *f, const mbspXdmf *x, int dialect, long i, double t, long nrow) {
  char row[32];
  snprintf(row, sizeof row, "row %ld", i);
  fprintf(f, "      <Grid Name=\"row %ld\" GridType=\"Uniform\">\n", i);
  fprintf(f, "      <Time Value=\"%.17g\"/>\n", t);
  // one polyline per body: parent's origin, origin, centre of mass, shape end (/model/cells
  // indexes the points of /bodies/points, three per body)
  fprintf(f,
          "      <Topology TopologyType=\"Polyline\" NodesPerElement=\"4\" "
          "NumberOfElements=\"%d\">\n"
          "        <DataItem Dimensions=\"%d 4\" %s Format=\"HDF\">%s:/model/cells</DataItem>\n"
          "      </Topology>\n",
          x->nbody, x->nbody, mbsp_xdmf_int, x->h5);
  fprintf(f, "      <Geometry GeometryType=\"XYZ\">\n");
  mbsp_xdmfRow(f, x, dialect, i, nrow, "bodies/points", 9, row);
  fprintf(f, "      </Geometry>\n");
  // the body index: column 1 of /model/lines
  long s0[2] = {0, 1}, c0[2] = {x->nbody, 1}, f0[2] = {x->nbody, 2};
  fprintf(f, "      <Attribute Name=\"body\" AttributeType=\"Scalar\" Center=\"Cell\">\n");
  mbsp_xdmfSel(f, x, dialect, 2, s0, c0, f0, mbsp_xdmf_int, "model/lines", NULL);
  fprintf(f, "      </Attribute>\n");
  static const char *const attr[][3] = {{"speed", "Scalar", "bodies/speed"},
                                        {"velocity", "Vector", "bodies/vel"},
                                        {"angular_velocity", "Vector", "bodies/omega"},
                                        {"force", "Scalar", "joints/force_norm"},
                                        {"torque", "Scalar", "joints/torque_norm"}};
  for (int k = 0; k < 5; k++) {
    if (!x->wrench && attr[k][2][0] == 'j') continue;
    fprintf(f, "      <Attribute Name=\"%s\" AttributeType=\"%s\" Center=\"Cell\">\n", attr[k][0],
            attr[k][1]);
    mbsp_xdmfRow(f, x, dialect, i, nrow, attr[k][2], attr[k][1][0] == 'V' ? 3 : 0, NULL);
    fprintf(f, "      </Attribute>\n");
  }
  fprintf(f, "      </Grid>\n");
}

static mbsErr mbsp_xdmfTail(mbspXdmf *x) {
  fputs(mbsp_xdmf_tail, x->f);
  MBS_CHECK(fflush(x->f) == 0 && !ferror(x->f) && !MBS_FAULT_WRITE_POINT(), MBS_ERR_IO,
            "%s: write error (disk full?): %s", x->path, strerror(errno));
  return MBS_OK;
}

static mbsErr mbsp_xdmfPush(mbspXdmf *x, double t) {
  if (x->nrow == x->cap) {
    long cap = x->cap ? 2 * x->cap : 1024;
    double *nt = realloc(x->t, sizeof(double) * (size_t)cap);
    MBS_CHECK(nt, MBS_ERR_NOMEM, "out of memory (XDMF times)");
    x->t = nt, x->cap = cap;
  }
  x->t[x->nrow++] = t;
  return MBS_OK;
}

// the t column (column 2) of the first n data rows of energy.csv
static mbsErr mbsp_xdmfTimes(mbspXdmf *x, const char *csv, long n) {
  FILE *f = fopen(csv, "r");
  MBS_CHECK(f, MBS_ERR_IO, "%s: cannot read (times of the XDMF rows): %s", csv, strerror(errno));
  char line[512];
  long got = 0;
  mbsErr e = MBS_OK;
  if (!fgets(line, sizeof line, f)) got = -1; // header
  while (!e && got >= 0 && got < n && fgets(line, sizeof line, f)) {
    const char *c = strchr(line, ',');
    // a long line (many columns) is not possible here: energy.csv has nine short columns
    e = c ? mbsp_xdmfPush(x, strtod(c + 1, NULL)) : MBS_OK;
    got += c != NULL;
  }
  fclose(f);
  MBS_CALL(e);
  MBS_CHECK(got == n, MBS_ERR_INPUT, "%s: has %ld rows, the HDF5 trajectory %ld", csv,
            got < 0 ? 0 : got, n);
  return MBS_OK;
}

// write the whole file: every grid known so far, with \p nrow rows declared in each
// (through PATH.tmp, renamed over PATH: a failure leaves the previous file; later appends go on
// in the renamed file)
static mbsErr mbsp_xdmfRewrite(mbspXdmf *x, int final) {
  if (x->f) fclose(x->f);
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp", x->path);
  x->f = MBS_FAULT_WRITE_POINT() ? NULL : fopen(tmp, "w");
  MBS_CHECK(x->f, MBS_ERR_IO, "%s: cannot open for writing: %s", tmp, strerror(errno));
  fputs(mbsp_xdmf_head, x->f);
  for (long i = 0; i < x->nrow; i++) mbsp_xdmfGrid(x->f, x, 3, i, x->t[i], final ? x->nrow : i + 1);
  x->ngrid = x->nrow;
  x->tail = ftell(x->f);
  mbsErr e = mbsp_xdmfTail(x);
  if (!e && (MBS_FAULT_WRITE_POINT() || rename(tmp, x->path) != 0))
    e = mbs_errSet(MBS_ERR_IO, "%s: cannot rename %s into place: %s", x->path, tmp,
                   strerror(errno));
  if (e) remove(tmp);
  return e;
}

// the same grids in the legacy dialect (XDMF 2 HyperSlab items) to \p x->legacy, once, with the
// final names and row count (through PATH.tmp, renamed over PATH)
static mbsErr mbsp_xdmfLegacy(mbspXdmf *x) {
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp", x->legacy);
  FILE *f = MBS_FAULT_WRITE_POINT() ? NULL : fopen(tmp, "w");
  MBS_CHECK(f, MBS_ERR_IO, "%s: cannot open for writing: %s", tmp, strerror(errno));
  fputs(mbsp_xdmf_head, f);
  for (long i = 0; i < x->nrow; i++) mbsp_xdmfGrid(f, x, 2, i, x->t[i], x->nrow);
  fputs(mbsp_xdmf_tail, f);
  int bad = ferror(f) != 0;
  if (fclose(f) != 0 || MBS_FAULT_WRITE_POINT()) bad = 1;
  mbsErr e = MBS_OK;
  if (bad)
    e = mbs_errSet(MBS_ERR_IO, "%s: write error (disk full?): %s", tmp, strerror(errno));
  else if (rename(tmp, x->legacy) != 0)
    e = mbs_errSet(MBS_ERR_IO, "%s: cannot rename %s into place: %s", x->legacy, tmp,
                   strerror(errno));
  if (e) remove(tmp);
  return e;
}

mbsErr mbsp_xdmfOpen(const char *path, const char *h5name, int nbody, int wrench, long nrow,
                     const char *energy_csv, mbspXdmf **out) {
  mbspXdmf *x = calloc(1, sizeof *x);
  *out = NULL;
  MBS_CHECK(x, MBS_ERR_NOMEM, "out of memory (XDMF)");
  size_t hl = strlen(h5name);
  size_t pl = strlen(path), stem = pl > 4 && !strcmp(path + pl - 4, ".xmf") ? pl - 4 : pl;
  x->path = malloc(pl + 1), x->h5 = malloc(hl + 5), x->h5final = malloc(hl + 1);
  x->legacy = malloc(stem + sizeof ".xdmf2");
  x->nbody = nbody, x->wrench = wrench;
  *out = x;
  MBS_CHECK(x->path && x->h5 && x->h5final && x->legacy, MBS_ERR_NOMEM, "out of memory (XDMF)");
  memcpy(x->path, path, pl + 1), memcpy(x->h5final, h5name, hl + 1);
  memcpy(x->legacy, path, stem), memcpy(x->legacy + stem, ".xdmf2", sizeof ".xdmf2");
  // while the run goes on the HDF5 file is NAME.tmp (h5out.c renames it at the end)
  memcpy(x->h5, h5name, hl), memcpy(x->h5 + hl, ".tmp", 5);
  if (nrow > 0) MBS_CALL(mbsp_xdmfTimes(x, energy_csv, nrow));
  return mbsp_xdmfRewrite(x, 0);
}

mbsErr mbsp_xdmfAppend(mbspXdmf *x, long row, double t) {
  MBS_CHECK(row == x->nrow, MBS_ERR_INTERNAL, "XDMF: row %ld appended after %ld rows", row,
            x->nrow);
  return mbsp_xdmfPush(x, t);
}

mbsErr mbsp_xdmfCommit(mbspXdmf *x, long nrow) {
  if (nrow > x->nrow) nrow = x->nrow;
  if (nrow <= x->ngrid) return MBS_OK;
  // the whole file again, through PATH.tmp renamed over PATH, so a kill at any moment leaves a
  // complete file (a rewrite of the tail in place could be cut between its grids and the closing
  // tags: an unclosed XML file after SIGKILL, seen in the interrupt test); only once the rows
  // flushed since the last rewrite are an eighth of those listed, so the bytes written stay
  // O(rows) in all (at most 9 times the final file) and the file lags the HDF5 file by at most an
  // eighth of its rows until the close rewrites it with all of them
  if (8 * (nrow - x->ngrid) < x->ngrid) return MBS_OK;
  long keep = x->nrow;
  x->nrow = nrow;
  mbsErr e = mbsp_xdmfRewrite(x, 0);
  x->nrow = keep;
  return e;
}

mbsErr mbsp_xdmfClose(mbspXdmf **px) {
  if (!px || !*px) return MBS_OK;
  mbspXdmf *x = *px;
  mbsErr e = MBS_OK;
  if (x->path && x->h5 && x->h5final && x->legacy) { // the final names and row counts
    strcpy(x->h5, x->h5final);
    e = mbsp_xdmfRewrite(x, 1);
    if (!e) e = mbsp_xdmfLegacy(x);
  }
  if (x->f && fclose(x->f) != 0 && !e) e = mbs_errSet(MBS_ERR_IO, "%s: close failed", x->path);
  free(x->path), free(x->h5), free(x->h5final), free(x->legacy), free(x->t), free(x);
  *px = NULL;
  return e;
}
