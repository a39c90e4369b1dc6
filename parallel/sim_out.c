/// \file sim_out.c
/// `mbspar run`'s outputs: the table of output formats (mbsp_writers[]), energy.csv (written in
/// every format, rank 0) and the calls that drive the writer of output.format, so that sim.c
/// never names a format (docs/outputs.md, docs/code.md "How to add an output format").
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "fmtoff.h"
#include "mbspar/mbs_fault.h"
#include "simout.h"

extern const mbspWriterOps mbsp_writerCsv, mbsp_writerH5;

// one row per output format (output.format)
static const mbspWriterOps *const mbsp_writers[] = {&mbsp_writerCsv, &mbsp_writerH5};
enum { MBSP_NWRITER = sizeof mbsp_writers / sizeof mbsp_writers[0] };

const mbspWriterOps *mbsp_writerOps(mbsOutFormat fmt) {
  for (int k = 0; k < MBSP_NWRITER; k++)
    if (mbsp_writers[k]->format == fmt) return mbsp_writers[k];
  return NULL;
}

// every format's files, then the ones of every run
const char *const *mbsp_outFileNames(void) {
  static const char *names[64];
  if (!names[0]) {
    int n = 0;
    for (int k = 0; k < MBSP_NWRITER; k++)
      for (const char *const *f = mbsp_writers[k]->files; *f && n < 60; f++) names[n++] = *f;
    names[n++] = "energy.csv", names[n++] = "run.json", names[n++] = "checkpoint.bin";
  }
  return names;
}

mbsErr mbsp_outCreate(mbspOut *o, const mbspOutEnv *env) {
  memset(o, 0, sizeof *o);
  o->env = *env;
  o->energy.name = "energy.csv";
  o->ops = mbsp_writerOps(env->cfg->out_format);
  MBS_CHECK(o->ops, MBS_ERR_INTERNAL, "output format %d has no writer", (int)env->cfg->out_format);
  if (env->rank == 0 && o->ops->gather_poses)
    MBS_ALLOC(o->poses, (size_t)env->m->nbody * MBS_POSE_NCOMP);
  return o->ops->create(&o->env, &o->w);
}

const char *mbsp_outSummary(const mbspOut *o) {
  return o->ops->summary;
}

static void mbsp_outEnergyHeader(const mbspOutEnv *env, FILE *f) {
  fprintf(f,
          "step,t,kinetic,potential,total,work,total_minus_work,evaluations,"
          "avg_iterations%s",
          env->m->nloop ? ",closure_pos,closure_rot,closure_vel" : "");
  for (int k = 0; env->cfg && k < env->cfg->ndrive; k++) // driven joints: their forces
    fprintf(f, ",drive_%s", env->cfg->drives[k].body);
  fputc('\n', f);
}

// the fields of an energy.csv row: 9, the closure errors of a loop model, the driving forces
static int mbsp_outEnergyFields(const mbspOutEnv *env) {
  return 9 + (env->m->nloop ? 3 : 0) + (env->cfg ? env->cfg->ndrive : 0);
}

// --restart, rank 0 (issue 30): the writer's files, energy.csv's header and its row at the
// checkpoint's step, then the writer's file check; read-only
mbsErr mbsp_outCheckRoot(mbspOut *o, long step, const char *row, const char **why, char *what,
                         size_t nwhat) {
  const char *dir = o->env.dir;
  char p[4200];
  if (!*why && o->ops->check_head) o->ops->check_head(o->w, why);
  char *want = NULL, *have = NULL;
  size_t wlen = 0, hcap = 0;
  FILE *me = open_memstream(&want, &wlen);
  if (me) {
    mbsp_outEnergyHeader(&o->env, me);
    fclose(me);
  }
  mbsErr e = want ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory (restart)");
  snprintf(p, sizeof p, "%s/energy.csv", dir);
  if (!e && !*why) {
    mbsp_csvFirstLine(p, &have, &hcap);
    if (have && have[0] && strcmp(have, want) != 0) *why = "energy.csv has another header";
  }
  // the energies of the checkpoint's state against the row of its step
  FILE *f = !e && !*why ? fopen(p, "r") : NULL;
  if (f) {
    char fld[64];
    snprintf(fld, sizeof fld, "%ld,", step);
    while (getline(&have, &hcap, f) > 0)
      if (!strncmp(have, fld, strlen(fld))) {
        if (strncmp(have, row, strlen(row)) != 0) {
          *why = "energy.csv holds other energies at the checkpoint's step";
          snprintf(what, nwhat, " (%.*s... against %s...)", 60, have, row);
        }
        break;
      }
    fclose(f);
  }
  if (!e && !*why && o->ops->check_file) e = o->ops->check_file(o->w);
  free(want), free(have);
  return e;
}

// rank 0: energy.csv, cut back on a restart (with the writer's files) and opened
static mbsErr mbsp_outOpenEnergy(mbspOut *o, int append, long step) {
  char pe[4200];
  snprintf(pe, sizeof pe, "%s/energy.csv", o->env.dir);
  if (append) {
    long nkeep = 0;
    MBS_CALL(mbsp_csvTruncate(pe, &nkeep, mbsp_outEnergyFields(&o->env), step, NULL, 0));
    if (o->ops->truncate) MBS_CALL(o->ops->truncate(o->w, step, nkeep));
  }
  // a restart continues the file it found (cut back above), else it starts with its header
  struct stat st;
  int enew = !append || stat(pe, &st) != 0;
  errno = 0;
  if (!MBS_FAULT_WRITE_POINT()) o->energy.f = fopen(pe, enew ? "w" : "a");
  MBS_CHECK(o->energy.f, MBS_ERR_IO, "%s: cannot open output files: %s", o->env.dir,
            strerror(errno));
  MBS_CALL(mbsp_csvBuffer(&o->energy, mbsp_outEnergyFields(&o->env)));
  if (enew) mbsp_outEnergyHeader(&o->env, o->energy.f);
  return mbsp_csvSync(&o->energy, 0, o->env.dir);
}

// rank 0: the writer's rows formatted by another rank, if there is one (fmtoff.h)
static mbsErr mbsp_outOffload(mbspOut *o) {
  if (!mbsp_fmtActive() || !o->ops->rowpack || !o->ops->rowtext) return MBS_OK;
  o->offn = o->ops->rowpack(o->w, NULL, NULL);
  o->en_cap = mbsp_csvRowMax(mbsp_outEnergyFields(&o->env));
  MBS_ALLOC(o->offrow, (size_t)o->offn);
  o->en_line = malloc(o->en_cap);
  o->pre = malloc(mbsp_fmtTextMax(o->offn));
  MBS_CHECK(o->en_line && o->pre, MBS_ERR_NOMEM, "out of memory (output rows)");
  o->offp = 0, o->prelen = 0, o->offfix = 0, o->nwin = 0;
  const char *split = getenv("MBSPAR_FMT_SPLIT"); // a fixed share of rank 0 (tests)
  if (split && split[0]) {
    double f = atof(split);
    o->offp = (long)((f < 0 ? 0 : f > 1 ? 1 : f) * (double)(o->offn - 1));
    o->offfix = 1;
  }
  MBS_CALL(mbsp_fmtReserve(o->offn));
  o->off = 1;
  return MBS_OK;
}

mbsErr mbsp_outOpen(mbspOut *o, int append, long step, double t) {
  mbsErr e = o->env.rank == 0 ? mbsp_outOpenEnergy(o, append, step) : MBS_OK;
  if (!e && o->env.rank == 0) e = mbsp_outOffload(o);
  MBS_CALL(mbsp_agreeErr(o->env.comm, e));
  return o->ops->open(o->w, append, step, t);
}

// rank 0, rows formatted by another rank: the row that is out to the files, as row() below
// writes a row (whole rows, the same rows in every file)
static mbsErr mbsp_outSettle(mbspOut *o) {
  if (!o->pend) return MBS_OK;
  const mbspWriterOps *W = o->ops;
  const char *text = NULL;
  size_t len = 0;
  int waited = 0;
  o->pend = 0;
  MBS_CALL(mbsp_fmtCollect(&text, &len, &waited));
  if (!len) { // rank 1 could not format it (out of memory): rank 0 formats it and the next rows
    o->prelen += mbsp_fmtRow(o->offrow + o->offsent, o->offn - o->offsent, o->pre + o->prelen);
    o->off = 0;
  }
  // balance: rank 0 takes a 64th more of the next rows while it waits for rank 1, less while
  // rank 1 is done first (the bytes do not depend on the split)
  long d = o->offfix ? 0 : o->offn / 64 > 0 ? o->offn / 64 : 1;
  o->offp = waited ? o->offp + d : o->offp - d;
  o->offp = o->offp < 0 ? 0 : o->offp > o->offn - 1 ? o->offn - 1 : o->offp;
  if ((W->room && !W->room(o->w)) || !mbsp_csvRoom(&o->energy)) {
    if (W->pass) W->pass(o->w);
    mbsp_csvPass(&o->energy);
  }
  if (o->prelen) W->rowtext(o->w, o->pre, o->prelen);
  if (len) W->rowtext(o->w, text, len);
  fputs(o->en_line, o->energy.f);
  if ((W->failed && W->failed(o->w)) || ferror(o->energy.f) || MBS_FAULT_WRITE_POINT())
    return mbs_errSet(MBS_ERR_IO, "%s: write error at the output row of t = %.9g s (disk full?)",
                      o->env.dir, o->pend_t);
  return MBS_OK;
}

// rank 0, rows formatted by another rank: the previous row to the files, this one out
static mbsErr mbsp_outRowOff(mbspOut *o, const mbspOutRow *r, long step, long evals,
                             const double *loopviol, const double *drive) {
  MBS_CALL(mbsp_outSettle(o));
  const double *en = r->en;
  char *p = o->en_line, *end = o->en_line + o->en_cap;
  p += snprintf(p, (size_t)(end - p), "%ld,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%ld,%.6g", step,
                r->t, en[0], en[1], en[0] + en[1], en[3], en[0] + en[1] - en[3], evals, r->avg);
  if (loopviol)
    p += snprintf(p, (size_t)(end - p), ",%.3e,%.3e,%.3e", loopviol[0], loopviol[1], loopviol[2]);
  for (int k = 0; drive && k < o->env.cfg->ndrive; k++)
    p += snprintf(p, (size_t)(end - p), ",%.17g", drive[k]);
  snprintf(p, (size_t)(end - p), "\n");
  o->ops->rowpack(o->w, r, o->offrow);
  long p0 = o->offp; // rank 1 formats the values from p0 on, rank 0 the ones before meanwhile
  MBS_CALL(mbsp_fmtSubmit(o->offrow + p0, o->offn - p0));
  o->pend = 1, o->pend_t = r->t;
  o->offsent = p0;
  o->prelen = p0 ? mbsp_fmtRow(o->offrow, p0, o->pre) : 0;
  if (o->prelen) o->pre[o->prelen - 1] = ','; // its newline: the comma before rank 1's part
  return MBS_OK;
}

// rank 0, rows formatted by another rank: does rank 0 have its core to itself? Over every 16
// rows its thread's CPU time against the wall-clock time; below 0.8 the cores are all busy (other
// jobs, or rank 1 itself on rank 0's core), and formatting on rank 1 only takes rank 0's time
// with messages and wake-ups on top: rank 0 then formats the rows itself for the rest of the run
static int mbsp_outShared(mbspOut *o) {
  struct timespec c, w;
  if (o->offfix || clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c) != 0 ||
      clock_gettime(CLOCK_MONOTONIC, &w) != 0)
    return 0;
  double cpu = (double)c.tv_sec + 1e-9 * (double)c.tv_nsec;
  double wall = (double)w.tv_sec + 1e-9 * (double)w.tv_nsec;
  if (o->nwin++ == 0) o->cpu0 = cpu, o->wall0 = wall;
  if (o->nwin <= 16) return 0;
  o->nwin = 0;
  return wall - o->wall0 > 0 && cpu - o->cpu0 < 0.8 * (wall - o->wall0);
}

mbsErr mbsp_outRow(mbspOut *o, const mbspOutRow *r, long step, long evals, const double *loopviol,
                   const double *drive) {
  const mbspWriterOps *W = o->ops;
  mbsErr e = MBS_OK;
  if (o->env.rank == 0 && o->off && mbsp_outShared(o)) { // the row out first, then rank 0 alone
    e = mbsp_outSettle(o);
    o->off = 0;
  }
  if (e) {
  } else if (o->env.rank == 0 && o->off) {
    e = mbsp_outRowOff(o, r, step, evals, loopviol, drive);
  } else if (o->env.rank == 0) {
    // whole rows only reach the files: pass the buffered rows on first if this one might not
    // fit, in every file alike (so that they hold the same rows but within a write)
    if ((W->room && !W->room(o->w)) || !mbsp_csvRoom(&o->energy)) {
      if (W->pass) W->pass(o->w);
      mbsp_csvPass(&o->energy);
    }
    if (W->row0) W->row0(o->w, r);
    FILE *f = o->energy.f;
    const double *en = r->en;
    fprintf(f, "%ld,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%ld,%.6g", step, r->t, en[0], en[1],
            en[0] + en[1], en[3], en[0] + en[1] - en[3], evals, r->avg);
    if (loopviol) fprintf(f, ",%.3e,%.3e,%.3e", loopviol[0], loopviol[1], loopviol[2]);
    for (int k = 0; drive && k < o->env.cfg->ndrive; k++) fprintf(f, ",%.17g", drive[k]);
    fprintf(f, "\n");
    if ((W->failed && W->failed(o->w)) || ferror(f) || MBS_FAULT_WRITE_POINT())
      e = mbs_errSet(MBS_ERR_IO, "%s: write error at the output row of t = %.9g s (disk full?)",
                     o->env.dir, r->t);
  }
  MBS_CALL(mbsp_agreeErr(o->env.comm, e)); // rank 0 alone may have failed
  return W->row ? W->row(o->w, r) : MBS_OK;
}

mbsErr mbsp_outFlush0(mbspOut *o, int sync) {
  if (o->env.rank != 0) return MBS_OK;
  mbsErr e = mbsp_outSettle(o);
  if (!e && o->ops->flush0) e = o->ops->flush0(o->w, sync);
  if (!e) e = mbsp_csvSync(&o->energy, sync, o->env.dir);
  return e;
}

mbsErr mbsp_outFlush(mbspOut *o) {
  return o->ops->flush ? o->ops->flush(o->w) : MBS_OK;
}

// the collective close first (its error in *e_collective), then rank 0's last rows; returns
// rank 0's error, agreed
mbsErr mbsp_outClose(mbspOut *o, mbsErr *e_collective) {
  *e_collective = o->w && o->ops->close ? o->ops->close(o->w) : MBS_OK;
  mbsErr ec = o->env.rank == 0 ? mbsp_outSettle(o) : MBS_OK;
  if (o->w && o->ops->close0) {
    mbsErr e0 = o->ops->close0(o->w);
    if (!ec) ec = e0;
  }
  if (!ec) ec = mbsp_csvSync(&o->energy, 1, o->env.dir);
  return mbsp_agreeErr(o->env.comm, ec);
}

void mbsp_outDestroy(mbspOut *o) {
  if (o->ops && o->w) o->ops->destroy(&o->w);
  mbsp_csvClose(&o->energy);
  free(o->poses);
  free(o->offrow);
  free(o->en_line);
  free(o->pre);
  o->poses = NULL, o->offrow = NULL, o->en_line = NULL, o->pre = NULL;
}
