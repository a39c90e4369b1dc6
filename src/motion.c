/// \file motion.c
/// User motions for inverse dynamics: CSV reading and cubic splines (include/mbspar/mbs_motion.h).
#define _POSIX_C_SOURCE 200809L
#include "mbspar/mbs_motion.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mbsu_splineKnots(int n, const mbsReal *t, const mbsReal *y, mbsReal *dy, mbsReal *d2y,
                      mbsReal *work) {
  if (n == 2) { // the line
    dy[0] = dy[1] = (y[1] - y[0]) / (t[1] - t[0]);
    d2y[0] = d2y[1] = 0;
    return;
  }
  mbsReal *h = work, *di = work + n, *r = work + 2 * n, *U = work + 3 * n, *L = work + 4 * n;
  mbsReal *M = d2y;
  for (int i = 0; i + 1 < n; i++) h[i] = t[i + 1] - t[i];
  if (n == 3) { // the parabola: M constant, twice the second divided difference
    mbsReal c = 2 * ((y[2] - y[1]) / h[1] - (y[1] - y[0]) / h[0]) / (h[0] + h[1]);
    M[0] = M[1] = M[2] = c;
  } else {
    // interior equations k = i - 1, i = 1 .. n-2, in M_1 .. M_{n-2}:
    //   h_{i-1} M_{i-1} + 2 (h_{i-1} + h_i) M_i + h_i M_{i+1} = 6 (slope_i - slope_{i-1})
    // with the not-a-knot ends substituted: M_0 = ((h0 + h1) M_1 - h0 M_2) / h1 and its mirror
    int m = n - 2;
    for (int k = 0; k < m; k++) {
      int i = k + 1;
      L[k] = h[i - 1], di[k] = 2 * (h[i - 1] + h[i]), U[k] = h[i];
      r[k] = 6 * ((y[i + 1] - y[i]) / h[i] - (y[i] - y[i - 1]) / h[i - 1]);
    }
    di[0] += h[0] * (h[0] + h[1]) / h[1];
    U[0] -= h[0] * h[0] / h[1];
    di[m - 1] += h[n - 2] * (h[n - 2] + h[n - 3]) / h[n - 3];
    L[m - 1] -= h[n - 2] * h[n - 2] / h[n - 3];
    // Thomas algorithm
    for (int k = 1; k < m; k++) {
      mbsReal f = L[k] / di[k - 1];
      di[k] -= f * U[k - 1];
      r[k] -= f * r[k - 1];
    }
    M[m] = r[m - 1] / di[m - 1];
    for (int k = m - 2; k >= 0; k--) M[k + 1] = (r[k] - U[k] * M[k + 2]) / di[k];
    M[0] = ((h[0] + h[1]) * M[1] - h[0] * M[2]) / h[1];
    M[n - 1] = ((h[n - 2] + h[n - 3]) * M[n - 2] - h[n - 2] * M[n - 3]) / h[n - 3];
  }
  // S'(t_i) from the segment to the right, the last knot from the segment to its left
  for (int i = 0; i + 1 < n; i++)
    dy[i] = (y[i + 1] - y[i]) / h[i] - h[i] * (2 * M[i] + M[i + 1]) / 6;
  dy[n - 1] = (y[n - 1] - y[n - 2]) / h[n - 2] + h[n - 2] * (M[n - 2] + 2 * M[n - 1]) / 6;
}

// ---------------------------------------------------------------- CSV

static mbsErr mbs_motionFail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static mbsErr mbs_motionFail(const char *file, int line, const char *fmt, ...) {
  char msg[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return mbs_errSet(MBS_ERR_INPUT, "%s:%d: %s", file, line, msg);
}

// column kinds: where a CSV column goes
enum { MBS_COL_T, MBS_COL_Q, MBS_COL_QD, MBS_COL_QDD, MBS_COL_SKIP };

// split line (modified in place) at commas; returns the number of fields (at most cap)
static int mbs_motionSplit(char *line, char **f, int cap) {
  int n = 0;
  char *p = line;
  for (;;) {
    if (n < cap) f[n] = p;
    n++;
    char *c = strchr(p, ',');
    if (!c) break;
    *c = 0, p = c + 1;
  }
  for (int k = 0; k < n && k < cap; k++) { // trim blanks and the line end
    while (*f[k] == ' ' || *f[k] == '\t') f[k]++;
    size_t l = strlen(f[k]);
    while (l > 0 && (f[k][l - 1] == ' ' || f[k][l - 1] == '\t' || f[k][l - 1] == '\r' ||
                     f[k][l - 1] == '\n'))
      f[k][--l] = 0;
  }
  return n;
}

static void mbs_quatMulConj(const mbsReal *q, const mbsReal *p, mbsReal *v) {
  // v = vec(conj(q) (x) p)
  v[0] = q[0] * p[1] - q[1] * p[0] - q[2] * p[3] + q[3] * p[2];
  v[1] = q[0] * p[2] + q[1] * p[3] - q[2] * p[0] - q[3] * p[1];
  v[2] = q[0] * p[3] - q[1] * p[2] + q[2] * p[1] - q[3] * p[0];
}

mbsErr mbs_motionRead(const mbsModel *m, const char *text, const char *filename, mbsMotion **out) {
  *out = NULL;
  const char *file = filename ? filename : "motion.csv";
  // the column names of every coordinate and rate
  int nq = m->nq, nv = m->nv;
  char *buf = malloc(strlen(text) + 1);
  mbsMotion *mo = calloc(1, sizeof *mo);
  MBS_CHECK(buf && mo, MBS_ERR_NOMEM, "out of memory (motion)");
  memcpy(buf, text, strlen(text) + 1);
  *out = mo;
  // lines
  int nline = 0;
  for (const char *c = buf; *c; c++) nline += *c == '\n';
  nline++;
  char **line = malloc(sizeof(char *) * (size_t)nline);
  MBS_CHECK(line, MBS_ERR_NOMEM, "out of memory (motion)");
  int nl = 0;
  line[0] = buf; // an empty text: one empty line
  for (char *p = buf; p && *p;) {
    line[nl++] = p;
    char *nlc = strchr(p, '\n');
    if (nlc)
      *nlc = 0, p = nlc + 1;
    else
      p = NULL;
  }
  mbsErr e = MBS_OK;
  int ncol = 0, *kind = NULL, *idx = NULL;
  char **f = NULL;
  if (nl == 0 || !line[0][0]) e = mbs_motionFail(file, 1, "empty file: expected a header t,q_...");
  if (!e) {
    // header
    int cap = 1;
    for (const char *c = line[0]; *c; c++) cap += *c == ',';
    f = malloc(sizeof(char *) * (size_t)cap);
    kind = malloc(sizeof(int) * (size_t)cap), idx = malloc(sizeof(int) * (size_t)cap);
    if (!f || !kind || !idx) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (motion)");
    if (!e) ncol = mbs_motionSplit(line[0], f, cap);
    char nm[400];
    int has_t = 0;
    for (int k = 0; !e && k < ncol; k++) {
      kind[k] = -1;
      if (!strcmp(f[k], "t")) kind[k] = MBS_COL_T, has_t = 1;
      if (!strncmp(f[k], "tau_", 4)) kind[k] = MBS_COL_SKIP;
      for (int b = 0; kind[k] < 0 && b < m->nbody; b++) {
        for (int c = 0; kind[k] < 0 && c < m->body_qnum[b]; c++)
          if (!strcmp(f[k], mbs_coordName(m, "q", b, c, 0, nm, sizeof nm)))
            kind[k] = MBS_COL_Q, idx[k] = m->body_qadr[b] + c;
        for (int c = 0; kind[k] < 0 && c < m->body_dofnum[b]; c++) {
          if (!strcmp(f[k], mbs_coordName(m, "qd", b, c, 1, nm, sizeof nm)))
            kind[k] = MBS_COL_QD, idx[k] = m->body_dofadr[b] + c;
          else if (!strcmp(f[k], mbs_coordName(m, "qdd", b, c, 1, nm, sizeof nm)))
            kind[k] = MBS_COL_QDD, idx[k] = m->body_dofadr[b] + c;
        }
      }
      if (kind[k] < 0)
        e = mbs_motionFail(file, 1,
                           "column %d \"%s\" is not t, a coordinate of the model (q_BODY or "
                           "q_BODY_COMPONENT, as in trajectory.csv), qd_*, qdd_* or tau_*",
                           k + 1, f[k]);
      for (int j = 0; !e && j < k; j++)
        if (kind[j] == kind[k] && kind[k] != MBS_COL_SKIP &&
            (kind[k] == MBS_COL_T || idx[j] == idx[k]))
          e = mbs_motionFail(file, 1, "column \"%s\" appears twice", f[k]);
    }
    if (!e && !has_t) e = mbs_motionFail(file, 1, "no t column (the time of each row, s)");
  }
  // rows
  int ns = 0;
  for (int i = 1; i < nl; i++) ns += line[i][0] != 0;
  if (!e && ns < 2) e = mbs_motionFail(file, nl, "%d row(s): a motion needs at least two", ns);
  char *qgiven = calloc((size_t)nq + 1, 1), *vgiven = calloc((size_t)nv + 1, 1),
       *agiven = calloc((size_t)nv + 1, 1);
  if (!e) {
    mo->ns = ns;
    mo->t = malloc(sizeof(mbsReal) * (size_t)ns);
    mo->q = malloc(sizeof(mbsReal) * (size_t)ns * (size_t)(nq + 1));
    mo->qd = calloc((size_t)ns * (size_t)(nv + 1), sizeof(mbsReal));
    mo->qdd = calloc((size_t)ns * (size_t)(nv + 1), sizeof(mbsReal));
    if (!mo->t || !mo->q || !mo->qd || !mo->qdd || !qgiven || !vgiven || !agiven)
      e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (motion: %d samples)", ns);
  }
  for (int i = 1, r = 0; !e && i < nl; i++) {
    if (!line[i][0]) continue;
    int n = mbs_motionSplit(line[i], f, ncol);
    if (n != ncol) {
      e = mbs_motionFail(file, i + 1, "%d values, the header has %d columns", n, ncol);
      break;
    }
    memcpy(mo->q + (size_t)r * nq, m->q0, sizeof(mbsReal) * (size_t)nq);
    for (int k = 0; k < ncol && !e; k++) {
      char *end;
      double x = strtod(f[k], &end);
      if (kind[k] == MBS_COL_SKIP) continue;
      if (end == f[k] || *end || !isfinite(x)) {
        e = mbs_motionFail(file, i + 1, "column %d: \"%s\" is not a finite number", k + 1, f[k]);
        break;
      }
      if (kind[k] == MBS_COL_T) mo->t[r] = x;
      if (kind[k] == MBS_COL_Q) mo->q[(size_t)r * nq + idx[k]] = x, qgiven[idx[k]] = 1;
      if (kind[k] == MBS_COL_QD) mo->qd[(size_t)r * nv + idx[k]] = x, vgiven[idx[k]] = 1;
      if (kind[k] == MBS_COL_QDD) mo->qdd[(size_t)r * nv + idx[k]] = x, agiven[idx[k]] = 1;
    }
    if (!e && r > 0 && !(mo->t[r] > mo->t[r - 1]))
      e = mbs_motionFail(file, i + 1, "t = %.17g does not increase (previous row: %.17g)", mo->t[r],
                         mo->t[r - 1]);
    r++;
  }
  // splines where rates or accelerations are not given
  mbsReal *y = NULL, *dy = NULL, *d2y = NULL, *wk = NULL;
  if (!e) {
    y = malloc(sizeof(mbsReal) * (size_t)ns * 4), dy = malloc(sizeof(mbsReal) * (size_t)ns * 4);
    d2y = malloc(sizeof(mbsReal) * (size_t)ns * 4), wk = malloc(sizeof(mbsReal) * 5 * (size_t)ns);
    if (!y || !dy || !d2y || !wk) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (motion)");
  }
  for (int b = 0; !e && b < m->nbody; b++) {
    int t = m->body_jnttype[b], qa = m->body_qadr[b], va = m->body_dofadr[b];
    int quat = mbs_jntHasQuat(t), q0 = mbs_jntIsFree(t) ? 3 : 0;
    // scalar coordinates (and the linear part of a free joint)
    for (int c = 0; c < (quat ? q0 : m->body_qnum[b]); c++) {
      int iq = qa + c, iv = va + c;
      if (vgiven[iv] && agiven[iv]) continue;
      const mbsReal *src = NULL;
      for (int r = 0; r < ns; r++) y[r] = mo->q[(size_t)r * nq + iq];
      src = y;
      if (vgiven[iv]) // accelerations from the spline of the given rates
        for (int r = 0; r < ns; r++) y[r] = mo->qd[(size_t)r * nv + iv];
      mbsu_splineKnots(ns, mo->t, src, dy, d2y, wk);
      for (int r = 0; r < ns; r++) {
        if (!vgiven[iv]) mo->qd[(size_t)r * nv + iv] = dy[r];
        if (!agiven[iv]) mo->qdd[(size_t)r * nv + iv] = vgiven[iv] ? dy[r] : d2y[r];
      }
    }
    if (!quat) continue;
    // quaternion: normalised samples, w = 2 vec(conj q q'), w' = 2 vec(conj q q'')
    for (int r = 0; r < ns; r++) {
      mbsReal *qq = mo->q + (size_t)r * nq + qa + q0, n2 = 0;
      for (int k = 0; k < 4; k++) n2 += qq[k] * qq[k];
      if (!(n2 > 0)) {
        e = mbs_motionFail(file, r + 2, "body \"%s\": zero quaternion", m->body_name[b]);
        break;
      }
      for (int k = 0; k < 4; k++) qq[k] /= sqrt(n2);
    }
    int wv = va + q0;
    int need = !(vgiven[wv] && vgiven[wv + 1] && vgiven[wv + 2] && agiven[wv] && agiven[wv + 1] &&
                 agiven[wv + 2]);
    if (e || !need) continue;
    for (int k = 0; k < 4; k++) {
      for (int r = 0; r < ns; r++) y[r] = mo->q[(size_t)r * nq + qa + q0 + k];
      mbsu_splineKnots(ns, mo->t, y, dy + (size_t)k * ns, d2y + (size_t)k * ns, wk);
    }
    for (int r = 0; r < ns; r++) {
      const mbsReal *qq = mo->q + (size_t)r * nq + qa + q0;
      mbsReal qd4[4], qdd4[4], w[3], a[3];
      for (int k = 0; k < 4; k++)
        qd4[k] = dy[(size_t)k * ns + r], qdd4[k] = d2y[(size_t)k * ns + r];
      mbs_quatMulConj(qq, qd4, w);
      mbs_quatMulConj(qq, qdd4, a);
      for (int k = 0; k < 3; k++) {
        if (!vgiven[wv + k]) mo->qd[(size_t)r * nv + wv + k] = 2 * w[k];
        if (!agiven[wv + k]) mo->qdd[(size_t)r * nv + wv + k] = 2 * a[k];
      }
    }
  }
  for (int i = 0; !e && i < nq; i++) mo->given_q += qgiven[i];
  for (int i = 0; !e && i < nv; i++) mo->given_qd += vgiven[i], mo->given_qdd += agiven[i];
  free(y), free(dy), free(d2y), free(wk), free(qgiven), free(vgiven), free(agiven);
  free(f), free(kind), free(idx), free(line), free(buf);
  return e;
}

void mbs_motionDestroy(mbsMotion **pmo) {
  if (!pmo || !*pmo) return;
  mbsMotion *mo = *pmo;
  free(mo->t), free(mo->q), free(mo->qd), free(mo->qdd), free(mo);
  *pmo = NULL;
}
