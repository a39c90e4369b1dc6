/// \file sim_ckpt.c
/// `mbspar run`: gathering the state, flushing the rows, checkpoints and --restart, the command
/// that continues a run.
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sim_impl.h"

// a vector laid out as the integrator's ([q_own; qd_own] on each rank) into rank 0's q (nq) and
// qd (nv) of the whole model. Collective.
static mbsErr mbsp_simGatherVec(mbspSim *S, const double *y, double *q, double *qd) {
  int nqo = S->q1 - S->q0, nvo = S->v1 - S->v0;
  double dummy = 0;
  MBS_CALL(
      mbsp_gatherv(S->comm, nqo ? y : &dummy, nqo, S->rank == 0 ? q : &dummy, S->qcnt, S->qdsp));
  MBS_CALL(mbsp_gatherv(S->comm, nvo ? y + nqo : &dummy, nvo, S->rank == 0 ? qd : &dummy, S->vcnt,
                        S->vdsp));
  return MBS_OK;
}

// the inverse for a vector every rank holds whole (q then qd): this rank's slices. Local.
static void mbsp_simSliceVec(const mbspSim *S, const double *all, double *y) {
  int nqo = S->q1 - S->q0, nvo = S->v1 - S->v0;
  if (nqo) memcpy(y, all + S->q0, (size_t)nqo * sizeof(double));
  if (nvo) memcpy(y + nqo, all + S->m->nq + S->v0, (size_t)nvo * sizeof(double));
}

mbsErr mbsp_simGatherState(mbspSim *S) {
  return mbsp_simGatherVec(S, S->y, S->rank == 0 ? S->sout->q : NULL,
                           S->rank == 0 ? S->sout->qd : NULL);
}

// integrator.method = abm: its scalars, f and every row of phi into the checkpoint buffer
// (rank 0's \p sec, the section of mbs_ckptAbmDoubles). Collective.
static mbsErr mbsp_simGatherAbm(mbspSim *S, double *sec) {
  const mbsAbm *a = mbsp_tsAbm(S->ts);
  size_t nst = (size_t)S->m->nq + (size_t)S->m->nv;
  if (S->rank == 0) mbs_abmSave(a, sec);
  double *v = S->rank == 0 ? sec + MBS_ABM_NSCALAR : NULL;
  MBS_CALL(mbsp_simGatherVec(S, a->f, v, v ? v + S->m->nq : NULL));
  for (int r = 0; r < MBS_ABM_KMAX + 2; r++) {
    v = S->rank == 0 ? sec + MBS_ABM_NSCALAR + (size_t)(r + 1) * nst : NULL;
    MBS_CALL(
        mbsp_simGatherVec(S, a->phi + (size_t)r * (size_t)S->nloc, v, v ? v + S->m->nq : NULL));
  }
  return MBS_OK;
}

// the inverse on restore: every rank takes its slices of the section \p sec. Local.
static mbsErr mbsp_simRestoreAbm(mbspSim *S, const double *sec) {
  mbsAbm *a = mbsp_tsAbm(S->ts);
  size_t nst = (size_t)S->m->nq + (size_t)S->m->nv;
  MBS_CALL(mbs_abmLoad(a, sec));
  if (S->nloc) memcpy(a->y, S->y, (size_t)S->nloc * sizeof(double));
  mbsp_simSliceVec(S, sec + MBS_ABM_NSCALAR, a->f);
  for (int r = 0; r < MBS_ABM_KMAX + 2; r++)
    mbsp_simSliceVec(S, sec + MBS_ABM_NSCALAR + (size_t)(r + 1) * nst,
                     a->phi + (size_t)r * (size_t)S->nloc);
  return MBS_OK;
}

// ---------------------------------------------------------------- checkpoints

// the format and its reader: src/checkpoint.c (mbs_checkpoint.h)

// every output row so far to the files (\p sync: to the disk, before a checkpoint names its
// step, so a restart from it finds them all, issue 12.2): CSV files (rank 0), the HDF5 file
// (collective), then the XDMF grids of the flushed rows (rank 0). Collective.
mbsErr mbsp_simFlushRows(mbspSim *S, int sync) {
  mbsErr e = mbsp_outFlush0(&S->out, sync);
  if (S->rank == 0) S->last_flush = mbsp_wtime();
  MBS_CALL(mbsp_agreeErr(S->comm, e));
  MBS_CALL(mbsp_outFlush(&S->out));
  S->unflushed = 0;
  return MBS_OK;
}

// output.flush_every: are the rows due to be flushed? Rank 0 decides (the clock is its own);
// the step's signal allreduce carries the decision to every rank
int mbsp_simFlushDue(const mbspSim *S) {
  if (S->rank != 0 || S->unflushed == 0) return 0;
  const mbsConfig *c = S->a->cfg;
  if (c->out_flush_rows > 0) return S->unflushed >= c->out_flush_rows;
  return mbsp_wtime() - S->last_flush >= c->out_flush_sec;
}

static mbsErr mbsp_simFlush(mbspSim *S) {
  return mbsp_simFlushRows(S, 1);
}

mbsErr mbsp_simCheckpoint(mbspSim *S, char *path_out, size_t pathlen) {
  const mbsModel *m = S->m;
  MBS_TIC(S->tim, MBS_TIMER_OUTPUT);
  MBS_CALL(mbsp_simFlush(S));
  MBS_CALL(mbsp_simGatherState(S));
  double wsum = S->work; // the same on every rank
  // the warm-start history of the owned constraint components
  size_t bytes = mbs_ckptSize(m, S->s->nstage);
  unsigned char *buf = NULL;
  mbsErr e = MBS_OK;
  if (S->rank == 0) {
    buf = calloc(1, bytes);
    if (!buf) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (checkpoint)");
  }
  MBS_CALL(mbsp_agreeErr(S->comm, e));
  double *hl = S->rank == 0 ? (double *)(buf + sizeof(mbsCkptHeader)) + m->nq + m->nv : NULL;
  int nlo = S->l1 - S->l0;
  size_t nlh = (size_t)mbs_stateHistWidth(m);
  double dummy = 0;
  for (int k = 0; k < S->s->nstage * MBS_WARM_HIST; k++) {
    const double *src = S->s->hist_lam + (size_t)k * nlh + S->l0;
    e = mbsp_gatherv(S->comm, nlo ? src : &dummy, nlo, S->rank == 0 ? hl + (size_t)k * nlh : &dummy,
                     S->lcnt, S->ldsp);
    if (e) break;
  }
  double *abm_sec = NULL; // the Adams section, in place in rank 0's buffer
  if (!e && mbs_ckptAbmDoubles(m)) {
    double dd[MBS_ABM_NSCALAR + 1];
    abm_sec = S->rank == 0 ? (double *)(buf + mbs_ckptAbmOffset(m, S->s->nstage)) : dd;
    e = mbsp_simGatherAbm(S, abm_sec);
  }
  if (!e && S->rank == 0) {
    mbsCkptHeader h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, MBS_CKPT_MAGIC, 8);
    h.version = MBS_CKPT_VERSION;
    h.nbody = m->nbody, h.nq = m->nq, h.nv = m->nv, h.nlam = m->nlam, h.ranks = S->size;
    h.solver = m->opt.solver, h.integrator = m->opt.integrator;
    h.fingerprint = mbs_ckptFingerprint(m);
    long step;
    mbsp_tsGetState(S->ts, &h.t, &step, &h.dt_next);
    h.step = step;
    h.work = wsum;
    h.evals = S->evals, h.iters = S->iters, h.nonconv = S->nonconv;
    h.restarts = (int32_t)(S->restarts < INT32_MAX ? S->restarts : INT32_MAX); // saturates
    h.stagnated = (int32_t)(S->stagnated < INT32_MAX ? S->stagnated : INT32_MAX);
    h.nstage = S->s->nstage;
    memcpy(h.nhist, S->s->nhist, sizeof h.nhist);
    memcpy(h.hist_head, S->s->hist_head, sizeof h.hist_head);
    memcpy(h.hist_t, S->s->hist_t, sizeof h.hist_t);
    if (S->eng) {
      mbsSolverCache sc;
      mbs_cfsCacheSave(mbsp_engineCfs(S->eng), &sc);
      h.have_spec = sc.have_spec, h.lmin = sc.lmin, h.lmax = sc.lmax, h.jacobi_omega = sc.omega;
    }
    memcpy(buf, &h, sizeof h);
    double *body = (double *)(buf + sizeof h);
    memcpy(body, S->sout->q, (size_t)m->nq * sizeof(double));
    memcpy(body + m->nq, S->sout->qd, (size_t)m->nv * sizeof(double));
    mbs_ckptSeal(buf, bytes);
    // write a temporary, then rename into place
    char tmp[4200];
    snprintf(path_out, pathlen, "%s/checkpoint.bin", S->dir);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path_out, (long)getpid());
    FILE *f = MBS_FAULT_WRITE_POINT() ? NULL : fopen(tmp, "wb");
    if (!f) {
      e = mbs_errSet(MBS_ERR_IO, "%s: cannot write checkpoint: %s", tmp,
                     errno ? strerror(errno) : "injected fault");
    } else {
      size_t nw = fwrite(buf, 1, bytes, f);
      int bad = nw != bytes || fflush(f) != 0 || fsync(fileno(f)) != 0;
      bad |= fclose(f) != 0;
      bad |= MBS_FAULT_WRITE_POINT();
      if (bad) {
        remove(tmp);
        e = mbs_errSet(MBS_ERR_IO, "%s: checkpoint write failed (disk full?)", tmp);
      } else if (MBS_FAULT_WRITE_POINT() || rename(tmp, path_out) != 0) {
        remove(tmp);
        e = mbs_errSet(MBS_ERR_IO, "%s: cannot rename checkpoint: %s", path_out, strerror(errno));
      }
    }
  }
  free(buf);
  MBS_TOC(S->tim, MBS_TIMER_OUTPUT);
  return mbsp_agreeErr(S->comm, e);
}

// read and validate a checkpoint on every rank (the same bytes everywhere: same verdict)
mbsErr mbsp_simRestore(mbspSim *S, const char *path) {
  const mbsModel *m = S->m;
  char *text = NULL;
  size_t len = 0;
  MBS_CALL(mbsp_bcastFile(S->comm, path, &text, &len));
  mbsCkptHeader h;
  mbsErr e = mbs_ckptParse(text, len, path, m, S->s->nstage, &h);
  if (e) {
    free(text);
    return mbsp_agreeErr(S->comm, e);
  }
  mbs_ckptApply(text, &h, m, S->s);
  if (S->eng) {
    mbsSolverCache sc = {h.have_spec, h.lmin, h.lmax, h.jacobi_omega};
    e = mbs_cfsCacheRestore(m, mbsp_engineCfs(S->eng), &sc);
  }
  S->evals = S->evals_out = h.evals;
  S->iters = S->iters_out = h.iters;
  S->nonconv = h.nonconv;
  S->restarts = h.restarts, S->stagnated = h.stagnated;
  S->work = h.work; // every rank: the work is global (summed power per step)
  int nqo = S->q1 - S->q0, nvo = S->v1 - S->v0;
  memcpy(S->y, S->s->q + S->q0, (size_t)nqo * sizeof(double));
  memcpy(S->y + nqo, S->s->qd + S->v0, (size_t)nvo * sizeof(double));
  if (!e) e = mbsp_tsSetState(S->ts, h.t, (long)h.step, h.dt_next, S->y);
  if (!e && mbs_ckptAbmDoubles(m)) { // (a copy: the file's bytes need not be aligned)
    size_t nsec = mbs_ckptAbmDoubles(m);
    double *sec = malloc(nsec * sizeof(double));
    if (!sec) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (checkpoint)");
    if (sec) memcpy(sec, text + mbs_ckptAbmOffset(m, S->s->nstage), nsec * sizeof(double));
    if (!e) e = mbsp_simRestoreAbm(S, sec);
    free(sec);
  }
  if (!e && S->rank == 0 &&
      (h.ranks != S->size || h.solver != m->opt.solver || h.integrator != m->opt.integrator))
    fprintf(stderr,
            "mbspar: note: checkpoint written with %d rank(s), solver %s, integrator %d; "
            "continuing with %d rank(s), solver %s: the result matches an uninterrupted run to "
            "the solver tolerance, bitwise only with the same settings\n",
            h.ranks, mbs_solverName(h.solver), h.integrator, S->size,
            mbs_solverName(m->opt.solver));
  free(text);
  return mbsp_agreeErr(S->comm, e);
}

// ---------------------------------------------------------------- setup and report

void mbsp_simUnmake(const char *dir, const char *made) {
  if (!made[0]) return;
  char p[4096];
  snprintf(p, sizeof p, "%s", dir);
  size_t lm = strlen(made);
  for (;;) {
    if (rmdir(p) != 0) return; // not empty (or gone): leave it and its parents
    if (strlen(p) <= lm) return;
    char *s = strrchr(p, '/');
    if (!s || s == p) return;
    *s = 0;
  }
}

// one word of a shell command: as it is if it is made of safe characters, else single-quoted
static void mbsp_shellWord(char *buf, size_t n, size_t *len, const char *w) {
  int safe = w[0] != 0;
  for (const char *c = w; *c; c++)
    if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-", *c))
      safe = 0;
  size_t k = *len;
  if (k && k < n) buf[k++] = ' ';
  if (safe) {
    for (const char *c = w; *c && k < n; c++) buf[k++] = *c;
  } else {
    if (k < n) buf[k++] = '\'';
    for (const char *c = w; *c && k < n; c++) {
      if (*c == '\'')
        for (const char *q = "'\\''"; *q && k < n; q++) buf[k++] = *q;
      else
        buf[k++] = *c;
    }
    if (k < n) buf[k++] = '\'';
  }
  if (k >= n) k = n - 1;
  buf[k] = 0;
  *len = k;
}

// the command that continues this run from checkpoint \p ck, as the user can paste it: the
// command line of this run with --restart CK instead of any --restart it had (under an MPI
// launcher, prefixed with "mpiexec -n SIZE")
void mbsp_continueCmd(int argc, char *const *argv, int size, const char *ck, char *buf, size_t n) {
  size_t len = 0;
  buf[0] = 0;
  if (size > 1) {
    char pre[32];
    mbsp_shellWord(buf, n, &len, "mpiexec");
    mbsp_shellWord(buf, n, &len, "-n");
    snprintf(pre, sizeof pre, "%d", size);
    mbsp_shellWord(buf, n, &len, pre);
  }
  for (int i = 0; i < argc && argv; i++) {
    const char *w = argv[i];
    if (i > 0 && !strcmp(w, "--restart")) {
      i++; // and its value
      continue;
    }
    if (i > 0 && !strncmp(w, "--restart=", 10)) continue;
    mbsp_shellWord(buf, n, &len, w);
  }
  mbsp_shellWord(buf, n, &len, "--restart");
  mbsp_shellWord(buf, n, &len, ck);
}

void mbsp_simContinueCmd(const mbspSim *S, const char *ck, char *buf, size_t n) {
  mbsp_continueCmd(S->a->argc, S->a->argv, S->size, ck, buf, n);
}

mbsErr mbsp_simMkdirs(const char *dir, char *made, size_t n) {
  char p[4096];
  snprintf(p, sizeof p, "%s", dir);
  made[0] = 0;
  for (char *c = p + 1; *c; c++)
    if (*c == '/') {
      *c = 0;
      if (mkdir(p, 0777) == 0 && !made[0])
        snprintf(made, n, "%s", p);
      else if (errno != EEXIST)
        return mbs_errSet(MBS_ERR_IO, "%s: cannot create directory: %s", p, strerror(errno));
      *c = '/';
    }
  if (MBS_FAULT_WRITE_POINT())
    return mbs_errSet(MBS_ERR_IO, "%s: cannot create directory: injected fault", p);
  if (mkdir(p, 0777) == 0) {
    if (!made[0]) snprintf(made, n, "%s", p);
  } else if (errno != EEXIST) {
    return mbs_errSet(MBS_ERR_IO, "%s: cannot create directory: %s", p, strerror(errno));
  }
  struct stat st;
  if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode))
    return mbs_errSet(MBS_ERR_IO, "%s: exists and is not a directory", p);
  return MBS_OK;
}
