/// \file torques.c
/// Joint forces over time for URDF robots: the CSV table of model.urdf.torques and its linear
/// interpolation (include/mbspar/mbs_torques.h, docs/urdf.md).
#define _POSIX_C_SOURCE 200809L
#include "mbspar/mbs_torques.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static mbsErr mbs_torquesFail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static mbsErr mbs_torquesFail(const char *file, int line, const char *fmt, ...) {
  char msg[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return mbs_errSet(MBS_ERR_INPUT, "%s:%d: %s", file, line, msg);
}

static char *mbs_torquesDup(const char *s) {
  size_t n = strlen(s) + 1;
  char *c = malloc(n);
  if (c) memcpy(c, s, n);
  return c;
}

// the next field of a CSV line at *p (trimmed, NUL-terminated in place); *p moves past it
static char *mbs_torquesField(char **p, int *last) {
  char *f = *p, *c = strchr(f, ',');
  *last = c == NULL;
  if (c) *c = 0, *p = c + 1;
  while (*f == ' ' || *f == '\t') f++;
  size_t l = strlen(f);
  while (l > 0 && (f[l - 1] == ' ' || f[l - 1] == '\t' || f[l - 1] == '\r')) f[--l] = 0;
  return f;
}

// joint of the robot named \p name: its index, or -1
static int mbs_torquesJoint(const mbsUrdf *u, const char *name) {
  int n = mbs_urdfJointCount(u);
  for (int i = 0; i < n; i++) {
    const char *jn;
    mbs_urdfJointInfo(u, i, &jn, NULL, NULL, NULL);
    if (!strcmp(jn, name)) return i;
  }
  return -1;
}

// the header: t, then joint names (or inverse.csv's tau_LINK; its q_*, qd_*, qdd_* are skipped)
static mbsErr mbs_torquesHeader(const mbsUrdf *u, mbsTorques *tq, char *line, int ln) {
  const char *file = tq->file;
  int ncap = 1;
  for (const char *c = line; *c; c++) ncap += *c == ',';
  tq->joint = calloc((size_t)ncap, sizeof *tq->joint);
  tq->link = calloc((size_t)ncap, sizeof *tq->link);
  tq->fcol = malloc(sizeof(int) * (size_t)ncap);
  MBS_CHECK(tq->joint && tq->link && tq->fcol, MBS_ERR_NOMEM, "out of memory (%s)", file);
  char *p = line;
  int last = 0;
  const char *f = mbs_torquesField(&p, &last);
  if (strcmp(f, "t") != 0)
    return mbs_torquesFail(file, ln,
                           "the first column must be t (time, s), then URDF joint names; got "
                           "\"%s\"",
                           f);
  tq->fcol[0] = -1, tq->nfield = 1;
  while (!last) {
    f = mbs_torquesField(&p, &last);
    int col = tq->nfield++, j = mbs_torquesJoint(u, f), nv = 0;
    const char *child = NULL, *jn = NULL;
    tq->fcol[col] = -1;
    if (j < 0 && !strncmp(f, "tau_", 4)) { // inverse.csv: tau_LINK of the joint moving LINK
      int n = mbs_urdfJointCount(u);
      for (int i = 0; i < n && j < 0; i++) {
        mbs_urdfJointInfo(u, i, NULL, &child, NULL, NULL);
        if (!strcmp(child, f + 4)) j = i;
      }
    }
    if (j < 0 && (!strncmp(f, "q_", 2) || !strncmp(f, "qd_", 3) || !strncmp(f, "qdd_", 4)))
      continue; // inverse.csv's motion columns
    if (j < 0)
      return mbs_torquesFail(file, ln,
                             "column %d: \"%s\" is not a joint of the robot (columns: t, then "
                             "URDF joint names or inverse.csv's tau_LINK; `mbspar check` lists "
                             "the joints)",
                             col + 1, f);
    mbs_urdfJointInfo(u, j, &jn, &child, &nv, NULL);
    if (nv != 1)
      return mbs_torquesFail(file, ln,
                             "column %d: joint \"%s\" is %s: a column drives a revolute, "
                             "continuous or prismatic joint (give a floating joint's forces as "
                             "model.urdf.joints force)",
                             col + 1, jn, nv == 0 ? "fixed" : "floating");
    for (int k = 0; k < tq->ncol; k++)
      if (!strcmp(tq->joint[k], jn))
        return mbs_torquesFail(file, ln, "column %d: joint \"%s\" has a column already", col + 1,
                               jn);
    tq->joint[tq->ncol] = mbs_torquesDup(jn);
    tq->link[tq->ncol] = mbs_torquesDup(child);
    tq->fcol[col] = tq->ncol++;
    MBS_CHECK(tq->joint[tq->ncol - 1] && tq->link[tq->ncol - 1], MBS_ERR_NOMEM,
              "out of memory (%s)", file);
  }
  if (!tq->ncol)
    return mbs_torquesFail(file, ln, "no joint columns: after t, name the URDF joints");
  return MBS_OK;
}

// one row: t and the joint columns into row \p r
static mbsErr mbs_torquesRow(mbsTorques *tq, char *line, int ln, int r) {
  const char *file = tq->file;
  char *p = line;
  int last = 0, k = 0;
  mbsReal *dst = tq->val + (size_t)r * (size_t)tq->ncol;
  for (; !last; k++) {
    const char *f = mbs_torquesField(&p, &last);
    if (k >= tq->nfield)
      return mbs_torquesFail(file, ln, "more fields than the header's %d", tq->nfield);
    char *end;
    double x = strtod(f, &end);
    if (!f[0] || *end || !isfinite(x))
      return mbs_torquesFail(file, ln, "field %d: \"%s\" is not a finite number", k + 1, f);
    if (k == 0)
      tq->t[r] = x;
    else if (tq->fcol[k] >= 0)
      dst[tq->fcol[k]] = x;
  }
  if (k != tq->nfield)
    return mbs_torquesFail(file, ln, "%d fields, the header has %d", k, tq->nfield);
  if (r > 0 && !(tq->t[r] > tq->t[r - 1]))
    return mbs_torquesFail(file, ln, "t = %.17g does not increase (the row before has %.17g)",
                           tq->t[r], tq->t[r - 1]);
  return MBS_OK;
}

mbsErr mbs_torquesRead(const mbsUrdf *u, const char *text, size_t len, const char *filename,
                       mbsTorques **out) {
  *out = NULL;
  const char *name = filename ? filename : "torques.csv";
  if (memchr(text, 0, len))
    return mbs_torquesFail(name, 1, "a NUL byte: not a text file (CSV of t and joint forces)");
  mbsTorques *tq = calloc(1, sizeof *tq);
  char *buf = malloc(len + 1);
  if (!tq || !buf) {
    free(tq), free(buf);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (%s)", name);
  }
  *out = tq;
  memcpy(buf, text, len);
  buf[len] = 0;
  tq->file = mbs_torquesDup(name);
  int nline = 1;
  for (size_t i = 0; i < len; i++) nline += buf[i] == '\n';
  tq->t = malloc(sizeof(mbsReal) * (size_t)nline);
  mbsErr e = tq->file && tq->t ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory (%s)", name);
  int ln = 0, header = 0;
  for (char *p = buf; !e && p;) {
    char *line = p, *nl = strchr(p, '\n');
    if (nl) *nl = 0;
    p = nl ? nl + 1 : NULL;
    ln++;
    const char *c = line;
    while (*c == ' ' || *c == '\t' || *c == '\r') c++;
    if (!*c || *c == '#') continue;
    if (!header) {
      e = mbs_torquesHeader(u, tq, line, ln);
      header = ln;
      if (!e) {
        tq->val = malloc(sizeof(mbsReal) * (size_t)nline * (size_t)tq->ncol);
        if (!tq->val) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (%s)", name);
      }
      continue;
    }
    e = mbs_torquesRow(tq, line, ln, tq->ns);
    tq->ns++;
  }
  if (!e && !header) e = mbs_torquesFail(name, 1, "empty: expected a header t,JOINT,... and rows");
  if (!e && tq->ns == 0) e = mbs_torquesFail(name, header, "no rows after the header");
  free(buf);
  return e;
}

void mbs_torquesAt(const mbsTorques *tq, const mbsModel *m, double t, mbsReal *tau) {
  int ns = tq->ns, i = 0;
  double a = 0; // tau = (1 - a) row i + a row i+1
  if (ns > 1 && t >= tq->t[ns - 1]) {
    i = ns - 1;
  } else if (ns > 1 && t > tq->t[0]) {
    int lo = 0, hi = ns - 1; // t[lo] < t < t[hi]... bisection to adjacent samples
    while (hi - lo > 1) {
      int mid = (lo + hi) / 2;
      if (tq->t[mid] <= t)
        lo = mid;
      else
        hi = mid;
    }
    i = lo, a = (t - tq->t[lo]) / (tq->t[hi] - tq->t[lo]);
  }
  const mbsReal *r0 = tq->val + (size_t)i * (size_t)tq->ncol;
  const mbsReal *r1 = a > 0 ? r0 + tq->ncol : r0;
  for (int k = 0; k < tq->ncol; k++) {
    int b = mbs_modelFindBody(m, tq->link[k]);
    if (b < 0 || m->body_dofnum[b] != 1) continue;
    tau[m->body_dofadr[b]] = a > 0 ? (1 - a) * r0[k] + a * r1[k] : r0[k];
  }
}

void mbs_torquesDestroy(mbsTorques **ptq) {
  if (!ptq || !*ptq) return;
  mbsTorques *tq = *ptq;
  for (int k = 0; k < tq->ncol; k++) free(tq->joint[k]), free(tq->link[k]);
  free(tq->joint), free(tq->link), free(tq->fcol), free(tq->t), free(tq->val), free(tq->file),
      free(tq);
  *ptq = NULL;
}
