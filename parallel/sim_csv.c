/// \file sim_csv.c
/// `mbspar run`'s CSV files: rows that reach the file whole, the restart truncation, and the CSV
/// trajectory writer (output.format = csv: trajectory.csv and bodies.csv; a row of
/// mbsp_writers[], simout.h).
///
/// Flushing (docs/outputs.md "Flushing"): the CSV files have stdio buffers of our own, large
/// enough for the longest row, and are passed to the file (one write of whole rows) before a row
/// that might not fit and at every flush, so a killed run leaves no half row in them.
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "mbspar/mbs_fault.h"
#include "simout.h"

// the longest CSV row of \p nfield fields: "%.17g" needs at most 24 characters, a comma each
size_t mbsp_csvRowMax(long nfield) {
  return 25 * (size_t)nfield + 2;
}

// rank 0: give c->f a fully buffered stdio buffer of ours (before any other operation on it);
// the buffer is freed after fclose
mbsErr mbsp_csvBuffer(mbspCsv *c, long nfield) {
  if (!c->f) return MBS_OK;
  c->rowmax = mbsp_csvRowMax(nfield);
  c->cap = c->rowmax + 65536;
  c->buf = malloc(c->cap);
  MBS_CHECK(c->buf, MBS_ERR_NOMEM, "out of memory (output buffer of %zu bytes)", c->cap);
  MBS_CHECK(setvbuf(c->f, c->buf, _IOFBF, c->cap) == 0, MBS_ERR_IO, "cannot set an output buffer");
  return MBS_OK;
}

// rank 0: does one more row fit into the buffer (else stdio would write a part of it)?
int mbsp_csvRoom(const mbspCsv *c) {
  if (!c->f) return 1;
  long pos = ftell(c->f);
  return pos >= 0 && pos >= c->done && (size_t)(pos - c->done) + c->rowmax <= c->cap;
}

// rank 0: pass the buffered (whole) rows to the file
void mbsp_csvPass(mbspCsv *c) {
  if (!c->f) return;
  fflush(c->f); // an error stays in ferror(f): the output row reports it
  long pos = ftell(c->f);
  c->done = pos >= 0 ? pos : 0;
}

// rank 0: the file's rows to the file (\p sync: also to the disk, fsync)
mbsErr mbsp_csvSync(mbspCsv *c, int sync, const char *dir) {
  if (!c->f) return MBS_OK;
  errno = 0;
  int bad = fflush(c->f) != 0 || ferror(c->f) || (sync && fsync(fileno(c->f)) != 0) ||
            MBS_FAULT_WRITE_POINT();
  MBS_CHECK(!bad, MBS_ERR_IO, "%s/%s: write error (disk full?): %s", dir, c->name,
            errno ? strerror(errno) : "stream error");
  long pos = ftell(c->f);
  c->done = pos >= 0 ? pos : 0;
  return MBS_OK;
}

void mbsp_csvClose(mbspCsv *c) {
  if (c->f) fclose(c->f);
  free(c->buf); // after fclose: it was the stream's buffer
  c->f = NULL, c->buf = NULL;
}

// the first line of \p path into \p buf (empty if the file is absent or empty)
void mbsp_csvFirstLine(const char *path, char **buf, size_t *cap) {
  FILE *f = fopen(path, "r");
  ssize_t n = f ? getline(buf, cap, f) : -1;
  if (f) fclose(f);
  if (n < 0 && *buf) (*buf)[0] = 0;
}

// a complete CSV line: ends in a newline and has \p nfield fields (a row cut by a kill has not)
int mbsp_csvComplete(const char *line, ssize_t n, int nfield) {
  if (n <= 0 || line[n - 1] != '\n') return 0;
  int k = 1;
  for (ssize_t i = 0; i < n; i++) k += line[i] == ',';
  return k == nfield;
}

// the \p k-th field (0-based) of a CSV line, up to the next comma or the end, into buf
void mbsp_csvField(const char *line, int k, char *buf, size_t n) {
  const char *c = line;
  for (int i = 0; i < k && c; i++) {
    c = strchr(c, ',');
    if (c) c++;
  }
  size_t len = 0;
  while (c && c[len] && c[len] != ',' && c[len] != '\n') len++;
  if (len >= n) len = n - 1;
  if (c) memcpy(buf, c, len);
  buf[len] = 0;
}

// --restart: cut energy.csv and trajectory.csv back to the checkpoint's step, keeping the headers.
// energy.csv keeps its header and the complete rows (9 fields, newline) with step <= \p step, in
// order; trajectory.csv keeps its header and as many complete rows, each of which must carry the
// t of the energy row it belongs to (the two files are written together, row by row). Rows after
// the checkpoint, a row cut by a kill and rows of a later, killed continuation all go, so the
// files read as if the run had not been interrupted. Each file is rewritten through a temporary
// and renamed into place. Rank 0.
mbsErr mbsp_csvTruncate(const char *path, long *nkeep, int nfield, long step, char **times,
                        long ntimes) {
  FILE *in = fopen(path, "r");
  if (!in) { // nothing to continue: a new file with its header
    if (nkeep) *nkeep = -1;
    return MBS_OK;
  }
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  FILE *out = MBS_FAULT_WRITE_POINT() ? NULL : fopen(tmp, "w");
  if (!out) {
    fclose(in);
    return mbs_errSet(MBS_ERR_IO, "%s: cannot rewrite: %s", path, strerror(errno));
  }
  char *line = NULL, tf[64];
  size_t cap = 0;
  ssize_t n;
  long row = -1; // -1: the header
  mbsErr e = MBS_OK;
  while (!e && (n = getline(&line, &cap, in)) > 0) {
    if (row < 0) { // the header (a file cut inside its header is refused below)
      if (n < 2 || line[n - 1] != '\n') break;
      if (nfield == 0) { // trajectory.csv: the number of columns is the header's
        nfield = 1;
        for (ssize_t i = 0; i < n; i++) nfield += line[i] == ',';
      }
    } else if (times) { // trajectory.csv: the rows of the kept energy rows, same times
      if (row >= ntimes || !mbsp_csvComplete(line, n, nfield)) break;
      mbsp_csvField(line, 0, tf, sizeof tf);
      if (strcmp(tf, times[row]) != 0)
        e = mbs_errSet(MBS_ERR_INPUT,
                       "%s:%ld: row at t = %s, but energy.csv has t = %s there: the files are "
                       "not of one run (move them away or use another --out)",
                       path, row + 2, tf, times[row]);
    } else { // energy.csv: complete rows up to the checkpoint's step
      if (!mbsp_csvComplete(line, n, nfield)) break;
      mbsp_csvField(line, 0, tf, sizeof tf);
      char *end = NULL;
      long st = strtol(tf, &end, 10);
      if (end == tf || *end || st > step) break;
    }
    if (e) break;
    if (fwrite(line, 1, (size_t)n, out) != (size_t)n)
      e = mbs_errSet(MBS_ERR_IO, "%s: write error", tmp);
    row++;
  }
  free(line);
  fclose(in);
  int bad = ferror(out) != 0;
  bad |= fclose(out) != 0;
  if (!e && row < 0)
    e = mbs_errSet(MBS_ERR_INPUT, "%s: has no complete header line: not a file of this run", path);
  if (!e && times && row < ntimes)
    e = mbs_errSet(MBS_ERR_INPUT,
                   "%s: has %ld complete rows up to the checkpoint, energy.csv %ld: the rows "
                   "before the checkpoint are not all there (move the files away to start their "
                   "outputs anew from the checkpoint)",
                   path, row, ntimes);
  if (!e && (bad || MBS_FAULT_WRITE_POINT()))
    e = mbs_errSet(MBS_ERR_IO, "%s: write error (disk full?): %s", tmp, strerror(errno));
  if (!e && (MBS_FAULT_WRITE_POINT() || rename(tmp, path) != 0))
    e = mbs_errSet(MBS_ERR_IO, "%s: cannot rename %s into place: %s", path, tmp, strerror(errno));
  if (e) remove(tmp);
  if (nkeep) *nkeep = row;
  return e;
}

// the t column of the kept rows of energy.csv (times[k] of row k, malloc'ed strings)
mbsErr mbsp_csvEnergyTimes(const char *path, long nrow, char ***times) {
  *times = calloc((size_t)(nrow > 0 ? nrow : 1), sizeof **times);
  MBS_CHECK(*times, MBS_ERR_NOMEM, "out of memory (restart)");
  FILE *f = fopen(path, "r");
  MBS_CHECK(f, MBS_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
  char *line = NULL;
  size_t cap = 0;
  mbsErr e = MBS_OK;
  for (long k = -1; !e && k < nrow && getline(&line, &cap, f) > 0; k++) {
    if (k < 0) continue; // header
    char tf[64];
    mbsp_csvField(line, 1, tf, sizeof tf);
    size_t len = strlen(tf) + 1;
    (*times)[k] = malloc(len);
    if (!(*times)[k])
      e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (restart)");
    else
      memcpy((*times)[k], tf, len);
  }
  free(line);
  fclose(f);
  return e;
}

// ---------------------------------------------------------------- the CSV trajectory writer
struct mbspWriter {
  mbspOutEnv env;
  mbspCsv traj; // rank 0: trajectory.csv
};

static mbsErr mbsp_csvWCreate(const mbspOutEnv *env, mbspWriter **w) {
  *w = calloc(1, sizeof **w);
  MBS_CHECK(*w, MBS_ERR_NOMEM, "out of memory (CSV writer)");
  (*w)->env = *env;
  (*w)->traj.name = "trajectory.csv";
  return MBS_OK;
}

static long mbsp_csvWFields(const mbsModel *m) {
  return 1 + m->nq + m->nv + (long)m->nbody * MBS_POSE_NCOMP;
}

static void mbsp_csvWHeader(const mbsModel *m, FILE *f) {
  char nm[400];
  fprintf(f, "t");
  for (int b = 0; b < m->nbody; b++)
    for (int k = 0; k < m->body_qnum[b]; k++)
      fprintf(f, ",%s", mbs_coordName(m, "q", b, k, 0, nm, sizeof nm));
  for (int b = 0; b < m->nbody; b++)
    for (int k = 0; k < m->body_dofnum[b]; k++)
      fprintf(f, ",%s", mbs_coordName(m, "qd", b, k, 1, nm, sizeof nm));
  mbsp_bodyOutCsvHeader(m, f); // the pose of every body
  fprintf(f, "\n");
}

// --restart: trajectory.csv's header must be the one this model writes
static void mbsp_csvWCheckHead(mbspWriter *w, const char **why) {
  char *want = NULL, *have = NULL, p[4200];
  size_t wlen = 0, hcap = 0;
  FILE *mt = open_memstream(&want, &wlen);
  if (!mt) return;
  mbsp_csvWHeader(w->env.m, mt);
  fclose(mt);
  snprintf(p, sizeof p, "%s/trajectory.csv", w->env.dir);
  mbsp_csvFirstLine(p, &have, &hcap);
  if (want && have && have[0] && strcmp(have, want) != 0)
    *why = "trajectory.csv has another model's columns";
  free(want), free(have);
}

// --restart: trajectory.csv keeps the rows of the kept energy.csv rows (same times)
static mbsErr mbsp_csvWTruncate(mbspWriter *w, long step, long nkeep) {
  char pt[4200], pe[4200];
  snprintf(pt, sizeof pt, "%s/trajectory.csv", w->env.dir);
  snprintf(pe, sizeof pe, "%s/energy.csv", w->env.dir);
  if (nkeep < 0) { // no energy.csv: nothing to match the trajectory rows against, start anew
    struct stat st;
    if (stat(pt, &st) == 0 && (MBS_FAULT_WRITE_POINT() || remove(pt) != 0))
      return mbs_errSet(MBS_ERR_IO, "%s: cannot remove: %s", pt, strerror(errno));
    return MBS_OK;
  }
  char **times = NULL;
  mbsErr e = mbsp_csvEnergyTimes(pe, nkeep, &times);
  if (!e) e = mbsp_csvTruncate(pt, NULL, 0, step, times, nkeep);
  for (long k = 0; times && k < nkeep; k++) free(times[k]);
  free(times);
  return e;
}

// trajectory.csv (a restart continues the file it found, cut back) and bodies.csv (collective)
static mbsErr mbsp_csvWOpen(mbspWriter *w, int append, long step, double t) {
  (void)step, (void)t;
  const mbsModel *m = w->env.m;
  mbsErr e = MBS_OK;
  if (w->env.rank == 0) {
    char pt[4200];
    snprintf(pt, sizeof pt, "%s/trajectory.csv", w->env.dir);
    struct stat st;
    int tnew = !append || stat(pt, &st) != 0;
    errno = 0;
    if (!MBS_FAULT_WRITE_POINT()) w->traj.f = fopen(pt, tnew ? "w" : "a");
    if (!w->traj.f)
      e = mbs_errSet(MBS_ERR_IO, "%s: cannot open output files: %s", w->env.dir, strerror(errno));
    if (!e) e = mbsp_csvBuffer(&w->traj, mbsp_csvWFields(m));
    if (!e && tnew) mbsp_csvWHeader(m, w->traj.f);
    // the header now (a long header may pass the buffer in parts: only at the start)
    if (!e) e = mbsp_csvSync(&w->traj, 0, w->env.dir);
    // the bodies and their parents beside the trajectory (HDF5 files hold them in /model)
    char pb[4200];
    snprintf(pb, sizeof pb, "%s/bodies.csv", w->env.dir);
    if (!e) e = mbsp_bodyOutTopology(m, pb);
  }
  return mbsp_agreeErr(w->env.comm, e);
}

static int mbsp_csvWRoom(const mbspWriter *w) {
  return mbsp_csvRoom(&w->traj);
}

static void mbsp_csvWPass(mbspWriter *w) {
  mbsp_csvPass(&w->traj);
}

static void mbsp_csvWRow0(mbspWriter *w, const mbspOutRow *r) {
  const mbsModel *m = w->env.m;
  FILE *f = w->traj.f;
  if (!f) return;
  fprintf(f, "%.17g", r->t);
  for (int i = 0; i < m->nq; i++) fprintf(f, ",%.17g", r->q[i]);
  for (int i = 0; i < m->nv; i++) fprintf(f, ",%.17g", r->qd[i]);
  for (size_t i = 0; i < (size_t)m->nbody * MBS_POSE_NCOMP; i++) fprintf(f, ",%.17g", r->poses[i]);
  fprintf(f, "\n");
}

// rows formatted by another rank (fmtoff.h): the values of mbsp_csvWRow0's row, in its order
static long mbsp_csvWPack(const mbspWriter *w, const mbspOutRow *r, double *dst) {
  const mbsModel *m = w->env.m;
  long n = mbsp_csvWFields(m);
  if (!dst) return n;
  size_t np = (size_t)m->nbody * MBS_POSE_NCOMP;
  dst[0] = r->t;
  memcpy(dst + 1, r->q, (size_t)m->nq * sizeof *dst);
  memcpy(dst + 1 + m->nq, r->qd, (size_t)m->nv * sizeof *dst);
  memcpy(dst + 1 + m->nq + m->nv, r->poses, np * sizeof *dst);
  return n;
}

static void mbsp_csvWText(mbspWriter *w, const char *text, size_t len) {
  if (w->traj.f) fwrite(text, 1, len, w->traj.f); // an error stays in ferror: failed
}

static int mbsp_csvWFailed(const mbspWriter *w) {
  return w->traj.f && ferror(w->traj.f);
}

static mbsErr mbsp_csvWFlush0(mbspWriter *w, int sync) {
  return mbsp_csvSync(&w->traj, sync, w->env.dir);
}

static mbsErr mbsp_csvWClose0(mbspWriter *w) {
  return mbsp_csvSync(&w->traj, 1, w->env.dir); // the last rows
}

static void mbsp_csvWDestroy(mbspWriter **w) {
  if (!*w) return;
  mbsp_csvClose(&(*w)->traj);
  free(*w);
  *w = NULL;
}

static const char *const mbsp_csvFiles[] = {"trajectory.csv", "bodies.csv", NULL};

const mbspWriterOps mbsp_writerCsv = {
    .format = MBS_OUTFMT_CSV,
    .summary = "trajectory.csv, bodies.csv",
    .files = mbsp_csvFiles,
    .gather_poses = 1,
    .create = mbsp_csvWCreate,
    .check_head = mbsp_csvWCheckHead,
    .truncate = mbsp_csvWTruncate,
    .open = mbsp_csvWOpen,
    .room = mbsp_csvWRoom,
    .pass = mbsp_csvWPass,
    .row0 = mbsp_csvWRow0,
    .rowpack = mbsp_csvWPack,
    .rowtext = mbsp_csvWText,
    .failed = mbsp_csvWFailed,
    .flush0 = mbsp_csvWFlush0,
    .close0 = mbsp_csvWClose0,
    .destroy = mbsp_csvWDestroy,
};
