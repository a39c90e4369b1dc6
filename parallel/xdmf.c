/// \file xdmf.c
/// `trajectory.xmf`: XDMF 2 for the HDF5 trajectory (ParaView's "XDMF Reader").
///
/// No communication: rank 0 writes the XML, a temporal collection with one uniform grid per
/// output row. Every grid selects its row of the HDF5 datasets with hyperslabs:
///   topology  Polyline, 2 nodes per element, nbody elements: /model/lines (parent, body)
///   geometry  XYZ: row i of /bodies/pos
///   point data  body (from /model/lines[:, 1]), speed, velocity, angular_velocity
///   cell data   joint (the same index), force and torque (|joints/wrench|) when written
/// Each grid's geometry starts with an XML comment naming its row: ParaView's XDMF reader
/// caches a grid's geometry by the text of its first DataItem child, and the comment makes that
/// key differ per row (without it the reader logs "no caching possible" for every step).
/// Trade-offs: the file is rewritten from the tail when rows are flushed to the HDF5 file
/// (mbsp_xdmfCommit: fseek to the closing tags), so it is valid XDMF at every moment of the run
/// and after a kill, and never lists a row the HDF5 file lacks; while the run goes
/// on, the grids name the HDF5 file by its temporary name (trajectory.h5.tmp, which h5out.c
/// renames at the end) and declare the dataset's row count at the time they were written
/// (readers take the hyperslab, which is inside); mbsp_xdmfClose rewrites the whole file once
/// with the final name and row count, so strict readers see matching dimensions. O(rows) bytes,
/// nothing per body.
#define _POSIX_C_SOURCE 200809L
#include "xdmf.h"
#include "mbspar/mbs_fault.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mbspXdmf {
  char *path, *h5; // h5: the name in the grids (the .tmp name while the run goes on)
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
    "<!-- mbspar trajectory: bodies as points, one line cell per joint (parent, body);\n"
    "     heavy data in the HDF5 file, layout in docs/outputs.md -->\n"
    "<Xdmf Version=\"2.0\">\n"
    "  <Domain>\n"
    "    <Grid Name=\"mbspar\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
static const char mbsp_xdmf_tail[] = "    </Grid>\n  </Domain>\n</Xdmf>\n";

// row i of dataset ds (nrow rows, nbody bodies, ncomp components; 0: 2-D) as a hyperslab
static void mbsp_xdmfSlab(FILE *f, const mbspXdmf *x, long i, long nrow, const char *ds, int ncomp,
                          const char *comment) {
  char c1[16] = "", c0[8] = "";
  if (ncomp > 0) snprintf(c1, sizeof c1, " %d", ncomp), snprintf(c0, sizeof c0, " 0");
  fprintf(f, "        <DataItem ItemType=\"HyperSlab\" Dimensions=\"1 %d%s\" Type=\"HyperSlab\">",
          x->nbody, c1);
  if (comment) fprintf(f, "<!-- %s -->", comment);
  fprintf(
      f,
      "\n          <DataItem Dimensions=\"3 %d\" Format=\"XML\">%ld 0%s 1 1%s 1 %d%s</DataItem>\n",
      ncomp > 0 ? 3 : 2, i, c0, ncomp > 0 ? " 1" : "", x->nbody, c1);
  fprintf(f,
          "          <DataItem Dimensions=\"%ld %d%s\" NumberType=\"Float\" Precision=\"8\" "
          "Format=\"HDF\">%s:/%s</DataItem>\n        </DataItem>\n",
          nrow, x->nbody, c1, x->h5, ds);
}

// column 1 of /model/lines: the body index of each point and the joint index of each cell
static void mbsp_xdmfIndex(FILE *f, const mbspXdmf *x, const char *name, const char *center) {
  fprintf(f,
          "      <Attribute Name=\"%s\" AttributeType=\"Scalar\" Center=\"%s\">\n"
          "        <DataItem ItemType=\"HyperSlab\" Dimensions=\"%d 1\" Type=\"HyperSlab\">\n"
          "          <DataItem Dimensions=\"3 2\" Format=\"XML\">0 1 1 1 %d 1</DataItem>\n"
          "          <DataItem Dimensions=\"%d 2\" NumberType=\"Int\" Format=\"HDF\">"
          "%s:/model/lines</DataItem>\n        </DataItem>\n      </Attribute>\n",
          name, center, x->nbody, x->nbody, x->nbody, x->h5);
}

static void mbsp_xdmfGrid(FILE *f, const mbspXdmf *x, long i, double t, long nrow) {
  char row[32];
  snprintf(row, sizeof row, "row %ld", i);
  fprintf(f, "      <Grid Name=\"row %ld\" GridType=\"Uniform\">\n", i);
  fprintf(f, "      <Time Value=\"%.17g\"/>\n", t);
  fprintf(f,
          "      <Topology TopologyType=\"Polyline\" NodesPerElement=\"2\" "
          "NumberOfElements=\"%d\">\n"
          "        <DataItem Dimensions=\"%d 2\" NumberType=\"Int\" Format=\"HDF\">"
          "%s:/model/lines</DataItem>\n      </Topology>\n",
          x->nbody, x->nbody, x->h5);
  fprintf(f, "      <Geometry GeometryType=\"XYZ\">\n");
  mbsp_xdmfSlab(f, x, i, nrow, "bodies/pos", 3, row);
  fprintf(f, "      </Geometry>\n");
  mbsp_xdmfIndex(f, x, "body", "Node");
  static const char *const attr[][4] = {{"speed", "Scalar", "Node", "bodies/speed"},
                                        {"velocity", "Vector", "Node", "bodies/vel"},
                                        {"angular_velocity", "Vector", "Node", "bodies/omega"},
                                        {"force", "Scalar", "Cell", "joints/force_norm"},
                                        {"torque", "Scalar", "Cell", "joints/torque_norm"}};
  for (int k = 0; k < 5; k++) {
    if (!x->wrench && attr[k][2][0] == 'C') continue;
    fprintf(f, "      <Attribute Name=\"%s\" AttributeType=\"%s\" Center=\"%s\">\n", attr[k][0],
            attr[k][1], attr[k][2]);
    mbsp_xdmfSlab(f, x, i, nrow, attr[k][3], attr[k][1][0] == 'V' ? 3 : 0, NULL);
    fprintf(f, "      </Attribute>\n");
  }
  mbsp_xdmfIndex(f, x, "joint", "Cell");
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
  for (long i = 0; i < x->nrow; i++) mbsp_xdmfGrid(x->f, x, i, x->t[i], final ? x->nrow : i + 1);
  x->ngrid = x->nrow;
  x->tail = ftell(x->f);
  mbsErr e = mbsp_xdmfTail(x);
  if (!e && (MBS_FAULT_WRITE_POINT() || rename(tmp, x->path) != 0))
    e = mbs_errSet(MBS_ERR_IO, "%s: cannot rename %s into place: %s", x->path, tmp,
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
  x->path = malloc(strlen(path) + 1), x->h5 = malloc(hl + 5), x->h5final = malloc(hl + 1);
  x->nbody = nbody, x->wrench = wrench;
  *out = x;
  MBS_CHECK(x->path && x->h5 && x->h5final, MBS_ERR_NOMEM, "out of memory (XDMF)");
  memcpy(x->path, path, strlen(path) + 1), memcpy(x->h5final, h5name, hl + 1);
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
  MBS_CHECK(fseek(x->f, x->tail, SEEK_SET) == 0, MBS_ERR_IO, "%s: seek failed", x->path);
  for (long i = x->ngrid; i < nrow; i++) mbsp_xdmfGrid(x->f, x, i, x->t[i], i + 1);
  x->ngrid = nrow;
  x->tail = ftell(x->f);
  return mbsp_xdmfTail(x);
}

mbsErr mbsp_xdmfClose(mbspXdmf **px) {
  if (!px || !*px) return MBS_OK;
  mbspXdmf *x = *px;
  mbsErr e = MBS_OK;
  if (x->path && x->h5 && x->h5final) { // the final names and row counts
    strcpy(x->h5, x->h5final);
    e = mbsp_xdmfRewrite(x, 1);
  }
  if (x->f && fclose(x->f) != 0 && !e) e = mbs_errSet(MBS_ERR_IO, "%s: close failed", x->path);
  free(x->path), free(x->h5), free(x->h5final), free(x->t), free(x);
  *px = NULL;
  return e;
}
