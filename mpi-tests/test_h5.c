/// \file test_h5.c
/// Parallel HDF5 trajectory writer (parallel/h5out.c): every rank writes index-encoded values of
/// its own slice of q and qd; rank 0 reopens the closed file serially (H5Fopen, sec2 driver) and
/// checks every value, every dataset shape, the names and the attributes exactly. Also: a narrow
/// and a wide model (chunks split across columns), an empty slice on rank 1 (3+ ranks), resume
/// after a cut (restart), abandon, and failing creates (missing directory, a file as directory,
/// a read-only directory, slices that do not tile) that return the same error on every rank.
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "h5out.h"
#include "mbs_test.h"
#include "mbspar/mbs_parallel.h"
#ifdef MBS_HAVE_HDF5
#include <hdf5.h>
#endif

#ifdef MBS_HAVE_HDF5
// index-encoded values: row r, column i
static double qval(int r, int i) {
  return 1000.0 * r + i + 0.25;
}
static double qdval(int r, int i) {
  return -1000.0 * r - i - 0.5;
}
static double tval(int r) {
  return 0.1 * r;
}

// contiguous slices; with 3+ ranks rank 1 owns nothing
static void slice(int n, int rank, int size, int *off, int *len) {
  int act = size >= 3 ? size - 1 : size, ar = size >= 3 ? (rank == 0 ? 0 : rank - 1) : rank;
  if (size >= 3 && rank == 1) {
    *off = (int)((long)1 * n / act), *len = 0;
    return;
  }
  int a = (int)((long)ar * n / act), b = (int)((long)(ar + 1) * n / act);
  *off = a, *len = b - a;
}

static int exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0;
}

static char **makeNames(int nq, int nv) {
  char **nm = malloc(sizeof(char *) * (size_t)(nq + nv));
  for (int i = 0; i < nq + nv; i++) {
    nm[i] = malloc(32);
    snprintf(nm[i], 32, i < nq ? "q_b%d_0" : "qd_b%d_0", i < nq ? i : i - nq);
  }
  return nm;
}

static void freeNames(char **nm, int n) {
  for (int i = 0; i < n; i++) free(nm[i]);
  free(nm);
}

// append rows r0 .. r1-1 with index-encoded values (every rank its slice)
static void appendRows(mbspH5 *h, int r0, int r1, int q0, int nqo, int v0, int nvo) {
  double *q = malloc(sizeof(double) * (size_t)(nqo + 1));
  double *qd = malloc(sizeof(double) * (size_t)(nvo + 1));
  for (int r = r0; r < r1; r++) {
    for (int i = 0; i < nqo; i++) q[i] = qval(r, q0 + i);
    for (int i = 0; i < nvo; i++) qd[i] = qdval(r, v0 + i);
    double e[4] = {r, r + 0.5, 2.0 * r + 0.5, -r};
    MBS_EXPECT_OK(mbsp_h5Append(h, tval(r), q, qd, e, r + 0.125));
  }
  free(q), free(qd);
}

#ifdef MBS_HAVE_HDF5
// rank 0: the shape of a dataset must be exactly {d0} or {d0, d1}
static void checkShape(hid_t f, const char *name, int rank, hsize_t d0, hsize_t d1) {
  hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
  MBS_EXPECT(d >= 0, "dataset %s missing", name);
  if (d < 0) return;
  hid_t sp = H5Dget_space(d);
  hsize_t dims[2] = {0, 0};
  int r = H5Sget_simple_extent_ndims(sp);
  if (r >= 1 && r <= 2) H5Sget_simple_extent_dims(sp, dims, NULL);
  MBS_EXPECT(r == rank && dims[0] == d0 && (rank == 1 || dims[1] == d1),
             "%s: shape rank %d {%llu, %llu}, expected %d {%llu, %llu}", name, r,
             (unsigned long long)dims[0], (unsigned long long)dims[1], rank, (unsigned long long)d0,
             (unsigned long long)d1);
  H5Sclose(sp);
  H5Dclose(d);
}

static double *readAll(hid_t f, const char *name, size_t n) {
  double *buf = calloc(n ? n : 1, sizeof(double));
  hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
  herr_t rc = d >= 0 ? H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) : -1;
  MBS_EXPECT(rc >= 0, "cannot read %s", name);
  if (d >= 0) H5Dclose(d);
  return buf;
}

static void checkNames(hid_t f, const char *name, const char *fmt, int n) {
  hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
  MBS_EXPECT(d >= 0, "dataset %s missing", name);
  if (d < 0) return;
  hid_t st = H5Dget_type(d);
  size_t w = H5Tget_size(st);
  char *buf = calloc((size_t)n, w);
  MBS_EXPECT(H5Dread(d, st, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0, "cannot read %s", name);
  int bad = 0;
  for (int i = 0; i < n; i++) {
    char want[32];
    snprintf(want, sizeof want, fmt, i);
    if (strncmp(buf + (size_t)i * w, want, w) != 0 && bad++ < 3)
      MBS_EXPECT(0, "%s[%d] = '%.*s', expected '%s'", name, i, (int)w, buf + (size_t)i * w, want);
  }
  free(buf);
  H5Tclose(st);
  H5Dclose(d);
}

static void checkStringAttr(hid_t obj, const char *name, const char *want) {
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  MBS_EXPECT(a >= 0, "attribute %s missing", name);
  if (a < 0) return;
  hid_t st = H5Aget_type(a);
  size_t w = H5Tget_size(st);
  char *buf = calloc(w + 1, 1);
  H5Aread(a, st, buf);
  MBS_EXPECT(strcmp(buf, want) == 0, "attribute %s = '%s', expected '%s'", name, buf, want);
  free(buf);
  H5Tclose(st);
  H5Aclose(a);
}

// rank 0: reopen serially and check every value of rows 0 .. nrow-1
static void checkFile(const char *path, int nq, int nv, int nrow) {
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  MBS_EXPECT(f >= 0, "cannot reopen %s", path);
  if (f < 0) return;
  checkShape(f, "t", 1, (hsize_t)nrow, 0);
  checkShape(f, "q", 2, (hsize_t)nrow, (hsize_t)nq);
  checkShape(f, "qd", 2, (hsize_t)nrow, (hsize_t)nv);
  checkShape(f, "energy", 2, (hsize_t)nrow, 4);
  checkShape(f, "iterations", 1, (hsize_t)nrow, 0);
  checkShape(f, "q_names", 1, (hsize_t)nq, 0);
  checkShape(f, "qd_names", 1, (hsize_t)nv, 0);
  double *t = readAll(f, "t", (size_t)nrow), *it = readAll(f, "iterations", (size_t)nrow);
  double *q = readAll(f, "q", (size_t)nrow * nq), *qd = readAll(f, "qd", (size_t)nrow * nv);
  double *e = readAll(f, "energy", (size_t)nrow * 4);
  long bad = 0;
  for (int r = 0; r < nrow; r++) {
    double ew[4] = {r, r + 0.5, 2.0 * r + 0.5, -r};
    if ((t[r] != tval(r) || it[r] != r + 0.125 || e[4 * r] != ew[0] ||
         qd[(size_t)r * nv] != qdval(r, 0)) &&
        bad < 3)
      fprintf(stderr, "  row %d: t %.17g it %.17g e0 %.17g qd0 %.17g\n", r, t[r], it[r], e[4 * r],
              qd[(size_t)r * nv]);
    bad += t[r] != tval(r);
    bad += it[r] != r + 0.125;
    for (int k = 0; k < 4; k++) bad += e[4 * r + k] != ew[k];
    for (int i = 0; i < nq; i++) {
      if (q[(size_t)r * nq + i] != qval(r, i) && bad < 3)
        fprintf(stderr, "  q[%d][%d] = %.17g, expected %.17g\n", r, i, q[(size_t)r * nq + i],
                qval(r, i));
      bad += q[(size_t)r * nq + i] != qval(r, i);
    }
    for (int i = 0; i < nv; i++) bad += qd[(size_t)r * nv + i] != qdval(r, i);
  }
  MBS_EXPECT(bad == 0, "%s: %ld values differ (nq %d, nv %d, %d rows)", path, bad, nq, nv, nrow);
  free(t), free(it), free(q), free(qd), free(e);
  checkNames(f, "q_names", "q_b%d_0", nq);
  checkNames(f, "qd_names", "qd_b%d_0", nv);
  checkStringAttr(f, "format", "mbspar trajectory");
  hid_t d = H5Dopen2(f, "energy", H5P_DEFAULT);
  checkStringAttr(d, "columns", "kinetic,potential,total,work");
  checkStringAttr(d, "units", "J");
  H5Dclose(d);
  d = H5Dopen2(f, "t", H5P_DEFAULT);
  checkStringAttr(d, "units", "s");
  H5Dclose(d);
  H5Fclose(f);
}
#endif

// write nrow rows, close, check; then resume at a cut and continue
static void roundTrip(mbspComm *comm, const char *dir, const char *tag, int nq, int nv, int nrow) {
  int rank = mbsp_rank(comm), size = mbsp_size(comm), q0, nqo, v0, nvo;
  slice(nq, rank, size, &q0, &nqo);
  slice(nv, rank, size, &v0, &nvo);
  char path[512], tmp[520];
  snprintf(path, sizeof path, "%s/%s.h5", dir, tag);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  char **nm = makeNames(nq, nv);
  mbspH5 *h = NULL;
  MBS_EXPECT_OK(mbsp_h5Create(comm, path, nq, nv, q0, nqo, v0, nvo, (const char *const *)nm, &h));
  if (!h) {
    freeNames(nm, nq + nv);
    return;
  }
  appendRows(h, 0, nrow, q0, nqo, v0, nvo);
  MBS_EXPECT(mbsp_h5Rows(h) == nrow, "rows %ld", mbsp_h5Rows(h));
  // before close only the temporary file exists
  if (rank == 0) MBS_EXPECT(exists(tmp) && !exists(path), "%s: temporary name not used", path);
  MBS_EXPECT_OK(mbsp_h5Close(&h));
  MBS_EXPECT(h == NULL, "close did not NULL the handle");
  MBS_EXPECT_OK(mbsp_barrier(comm));
  if (rank == 0) MBS_EXPECT(exists(path) && !exists(tmp), "%s: not renamed into place", path);
#ifdef MBS_HAVE_HDF5
  if (rank == 0) checkFile(path, nq, nv, nrow);
#endif
  // restart: keep rows with t <= t(cut), continue with the same index encoding
  int cut = nrow / 2;
  MBS_EXPECT_OK(
      mbsp_h5Resume(comm, path, nq, nv, q0, nqo, v0, nvo, (const char *const *)nm, tval(cut), &h));
  if (h) {
    MBS_EXPECT(mbsp_h5Rows(h) == cut + 1, "resume kept %ld rows, expected %d", mbsp_h5Rows(h),
               cut + 1);
    appendRows(h, cut + 1, nrow + 2, q0, nqo, v0, nvo);
    MBS_EXPECT_OK(mbsp_h5Close(&h));
  }
  MBS_EXPECT_OK(mbsp_barrier(comm));
#ifdef MBS_HAVE_HDF5
  if (rank == 0) checkFile(path, nq, nv, nrow + 2);
#endif
  // a resume for another model is refused and leaves the file in place
  mbsErr e = mbsp_h5Resume(comm, path, nq + size, nv, q0, nqo + (rank == 0 ? size : 0), v0, nvo,
                           NULL, 1e9, &h);
  MBS_EXPECT(e == MBS_ERR_INPUT && h == NULL, "resume of another model: %s", mbs_errString(e));
  if (rank == 0) MBS_EXPECT(exists(path) && !exists(tmp), "refused resume moved %s", path);
  freeNames(nm, nq + nv);
}

// a create that must fail with \p want on every rank, leaving no handle
static void expectFail(mbspComm *comm, const char *path, int nqo_extra, mbsErr want) {
  int rank = mbsp_rank(comm), size = mbsp_size(comm), q0, nqo, v0, nvo;
  slice(10, rank, size, &q0, &nqo);
  slice(8, rank, size, &v0, &nvo);
  if (nqo_extra && nqo > 0) nqo--;
  mbspH5 *h = (mbspH5 *)&h; // garbage on entry: must come back NULL
  mbsErr e = mbsp_h5Create(comm, path, 10, 8, q0, nqo, v0, nvo, NULL, &h);
  MBS_EXPECT(e == want && h == NULL, "create %s: got %s (%s), expected %s", path, mbs_errString(e),
             mbs_errMsg(), mbs_errString(want));
  if (rank == 0) printf("  expected failure: %s\n", mbs_errMsg());
  // every rank must report the same code
  double c[2] = {e, -(double)e};
  MBS_EXPECT_OK(mbsp_allreduceMax(comm, c, 2));
  MBS_EXPECT(c[0] == -c[1], "ranks disagree on the error of %s", path);
  mbs_errClear();
}
#endif

int main(int argc, char **argv) {
  mbspComm *comm;
  if (mbsp_init(&argc, &argv, &comm)) return 1;
  int rank = mbsp_rank(comm);
  char dir[256] = "/tmp/mbsp_h5_XXXXXX";
  if (rank == 0 && !mkdtemp(dir)) dir[0] = 0;
  mbsp_bcastBytes(comm, dir, sizeof dir, 0);
  if (!dir[0]) {
    fprintf(stderr, "test_h5: cannot make a temporary directory\n");
    mbsp_finalize(&comm);
    return 1;
  }
#ifdef MBS_HAVE_HDF5
  // narrow (many rows per chunk) and wide (chunks split across columns, several ranks per chunk)
  roundTrip(comm, dir, "narrow", 11, 9, 6);
  roundTrip(comm, dir, "wide", 40000, 33000, 3);

  // abandon: nothing is left behind
  {
    int q0, nqo, v0, nvo;
    slice(5, rank, mbsp_size(comm), &q0, &nqo);
    slice(5, rank, mbsp_size(comm), &v0, &nvo);
    char path[512], tmp[520];
    snprintf(path, sizeof path, "%s/abandoned.h5", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    mbspH5 *h = NULL;
    MBS_EXPECT_OK(mbsp_h5Create(comm, path, 5, 5, q0, nqo, v0, nvo, NULL, &h));
    appendRows(h, 0, 2, q0, nqo, v0, nvo);
    mbsp_h5Abandon(&h);
    MBS_EXPECT(h == NULL, "abandon did not NULL the handle");
    mbsp_h5Abandon(&h); // NULL is a no-op
    MBS_EXPECT_OK(mbsp_barrier(comm));
    if (rank == 0) MBS_EXPECT(!exists(path) && !exists(tmp), "abandon left %s behind", path);
  }

  // resume: no file yet creates one; a file that is not HDF5 is refused and left in place
  {
    int q0, nqo, v0, nvo;
    slice(5, rank, mbsp_size(comm), &q0, &nqo);
    slice(5, rank, mbsp_size(comm), &v0, &nvo);
    char path[512];
    snprintf(path, sizeof path, "%s/fresh.h5", dir);
    mbspH5 *h = NULL;
    MBS_EXPECT_OK(mbsp_h5Resume(comm, path, 5, 5, q0, nqo, v0, nvo, NULL, 1.0, &h));
    MBS_EXPECT(mbsp_h5Rows(h) == 0, "fresh resume has %ld rows", mbsp_h5Rows(h));
    appendRows(h, 0, 1, q0, nqo, v0, nvo);
    MBS_EXPECT_OK(mbsp_h5Close(&h));
    snprintf(path, sizeof path, "%s/garbage.h5", dir);
    if (rank == 0) {
      FILE *f = fopen(path, "w");
      if (f) fputs("not an HDF5 file\n", f), fclose(f);
    }
    MBS_EXPECT_OK(mbsp_barrier(comm));
    mbsErr e = mbsp_h5Resume(comm, path, 5, 5, q0, nqo, v0, nvo, NULL, 1.0, &h);
    MBS_EXPECT(e == MBS_ERR_IO && h == NULL, "resume of a non-HDF5 file: %s", mbs_errString(e));
    if (rank == 0) {
      printf("  expected failure: %s\n", mbs_errMsg());
      MBS_EXPECT(exists(path), "refused resume lost %s", path);
    }
    mbs_errClear();
  }

  // failing creates: the same error on every rank, no hang
  char p[512];
  expectFail(comm, "/nonexistent-mbspar-dir/out/trajectory.h5", 0, MBS_ERR_IO);
  snprintf(p, sizeof p, "%s/afile", dir);
  if (rank == 0) {
    FILE *f = fopen(p, "w");
    if (f) fclose(f);
  }
  MBS_EXPECT_OK(mbsp_barrier(comm));
  snprintf(p, sizeof p, "%s/afile/trajectory.h5", dir);
  expectFail(comm, p, 0, MBS_ERR_IO);
  if (geteuid() != 0) { // root writes into read-only directories
    snprintf(p, sizeof p, "%s/ro", dir);
    if (rank == 0) mkdir(p, 0500);
    MBS_EXPECT_OK(mbsp_barrier(comm));
    snprintf(p, sizeof p, "%s/ro/trajectory.h5", dir);
    expectFail(comm, p, 0, MBS_ERR_IO);
  }
  snprintf(p, sizeof p, "%s/gap.h5", dir);
  expectFail(comm, p, 1, MBS_ERR_INPUT);
  expectFail(comm, "", 0, MBS_ERR_INPUT);
#else
  mbspH5 *h = NULL;
  mbsErr e = mbsp_h5Create(comm, "x.h5", 1, 1, 0, rank == 0, 0, rank == 0, NULL, &h);
  MBS_EXPECT(e == MBS_ERR_UNSUPPORTED && h == NULL, "no-HDF5 build: %s", mbs_errString(e));
#endif

  // clean up
  MBS_EXPECT_OK(mbsp_barrier(comm));
  if (rank == 0) {
    const char *files[] = {"narrow.h5",  "wide.h5",  "afile",     "ro",
                           "gap.h5.tmp", "fresh.h5", "garbage.h5"};
    for (int k = 0; k < 7; k++) {
      char f[512];
      snprintf(f, sizeof f, "%s/%s", dir, files[k]);
      remove(f);
    }
    if (rmdir(dir) != 0) fprintf(stderr, "test_h5: %s not empty\n", dir);
  }
  double fails = mbs_test_fail;
  mbsp_allreduceSum(comm, &fails, 1);
  if (rank == 0) printf("test_h5: %s (%d ranks)\n", fails ? "FAILED" : "ok", mbsp_size(comm));
  mbsp_finalize(&comm);
  return fails ? 1 : 0;
}
