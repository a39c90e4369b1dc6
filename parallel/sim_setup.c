/// \file sim_setup.c
/// `mbspar run`: the setup (allocations, gather layout, per-body outputs, the output directory
/// and its clobber checks) and the read-only checks of a --restart.
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

// the setup's local allocations (every rank; rank 0 also the gather layout \p all); the caller
// agrees before the next collective call
static mbsErr mbsp_simSetupLocal(mbspSim *S, double **all) {
  const mbsModel *m = S->m;
  int rank = S->rank;
  MBS_CALL(mbs_stateCreate(m, &S->s));
  // one warm-start history per Runge–Kutta stage
  int nst = mbs_integratorType(m->opt.integrator)->nstage;
  MBS_CALL(mbs_stateSetStages(m, S->s, nst));
  if (S->serial) {
    if (rank == 0) {
      MBS_CALL(mbs_workCreate(m, &S->w));
      MBS_CALL(mbs_workEnableMethod(m, S->w));
      S->b0 = 0, S->b1 = m->nbody, S->l0 = 0, S->l1 = m->nlam;
    }
  } else {
    mbspDecompInfo di;
    mbsp_engineDecomp(S->eng, &di);
    S->b0 = di.b0, S->b1 = di.b1;
    S->w = mbsp_engineWork(S->eng);
    S->l0 = mbsp_engineCfs(S->eng)->l0, S->l1 = mbsp_engineCfs(S->eng)->l1;
  }
  if (S->b1 > S->b0) {
    S->q0 = m->body_qadr[S->b0], S->q1 = m->body_qadr[S->b1 - 1] + m->body_qnum[S->b1 - 1];
    S->v0 = m->body_dofadr[S->b0], S->v1 = m->body_dofadr[S->b1 - 1] + m->body_dofnum[S->b1 - 1];
  }
  S->tim = S->w ? S->w->timer : S->tdummy;
  S->nloc = (S->q1 - S->q0) + (S->v1 - S->v0);
  MBS_ALLOC(S->y, S->nloc + 1);
  if (rank == 0) MBS_ALLOC(*all, 6 * (size_t)S->size);
  if (!S->serial && (m->nloop || m->nforce)) {
    MBS_CALL(mbs_stateCreate(m, &S->sfull));
    MBS_CALL(mbs_workCreate(m, &S->wfull));
    MBS_ALLOC(S->fbuf, (size_t)(m->nq + m->nv) + 1);
  }
  return MBS_OK;
}

// rank 0: the gather layout and the gathered state's workspace
static mbsErr mbsp_simSetupRoot(mbspSim *S, const double *all) {
  const mbsModel *m = S->m;
  {
    MBS_ALLOC(S->qcnt, S->size);
    MBS_ALLOC(S->qdsp, S->size);
    MBS_ALLOC(S->vcnt, S->size);
    MBS_ALLOC(S->vdsp, S->size);
    MBS_ALLOC(S->lcnt, S->size);
    MBS_ALLOC(S->ldsp, S->size);
    for (int r = 0; r < S->size; r++) {
      S->qdsp[r] = (int)all[6 * r], S->qcnt[r] = (int)all[6 * r + 1];
      S->vdsp[r] = (int)all[6 * r + 2], S->vcnt[r] = (int)all[6 * r + 3];
      S->ldsp[r] = (int)all[6 * r + 4], S->lcnt[r] = (int)all[6 * r + 5];
    }
    MBS_CALL(mbs_stateCreate(m, &S->sout));
    MBS_CALL(mbs_workCreate(m, &S->wout));
    // URDF joint limits: their crossings are counted at the output rows (mbsp_simLimits)
    const mbsUrdf *u = S->a->cfg ? S->a->cfg->urdf : NULL;
    int nj = u ? mbs_urdfJointCount(u) : 0;
    if (nj > 0) {
      MBS_ALLOC(S->lim_q, nj);
      MBS_ALLOC(S->lim_lo, nj);
      MBS_ALLOC(S->lim_hi, nj);
      MBS_ALLOC(S->lim_name, nj);
      MBS_ALLOC(S->lim_out, nj);
      MBS_ALLOC(S->lim_cross, nj);
    }
    for (int i = 0; i < nj; i++) {
      double lo, hi;
      const char *name = NULL, *child = NULL;
      if (!mbs_urdfJointLimit(u, i, &lo, &hi)) continue;
      mbs_urdfJointInfo(u, i, &name, &child, NULL, NULL);
      int b = mbs_modelFindBody(m, child);
      if (b < 0) continue;
      int k = S->nlim++;
      S->lim_q[k] = m->body_qadr[b], S->lim_lo[k] = lo, S->lim_hi[k] = hi;
      S->lim_name[k] = name, S->lim_out[k] = 0, S->lim_cross[k] = 0;
    }
  }
  return MBS_OK;
}

// every rank: allocations, the gather layout, per-body outputs, the output directory; each
// phase's local failures are agreed before the next collective call (issue 12.1)
mbsErr mbsp_simSetup(mbspSim *S) {
  const mbsModel *m = S->m;
  const mbspSimArgs *a = S->a;
  int rank = S->rank;
  double *all = NULL;
  mbsErr ea = mbsp_agreeErr(S->comm, mbsp_simDriveSetup(S)); // before any file is touched
  if (ea) return ea;
  ea = mbsp_agreeErr(S->comm, mbsp_simSetupLocal(S, &all));
  // gather layout on rank 0
  double mine[6] = {S->q0, S->q1 - S->q0, S->v0, S->v1 - S->v0, S->l0, S->l1 - S->l0};
  if (!ea) ea = mbsp_gather(S->comm, mine, 6, rank == 0 ? all : mine);
  if (!ea) ea = mbsp_agreeErr(S->comm, rank == 0 ? mbsp_simSetupRoot(S, all) : MBS_OK);
  free(all);
  MBS_CALL(ea);
  // per-body outputs of the owned bodies; HDF5 rows also hold the joint wrenches (collective,
  // agreed inside)
  const mbspWriterOps *W = mbsp_writerOps(a->cfg->out_format);
  MBS_CALL(mbsp_bodyOutCreate(S->comm, m, S->eng, S->b0, S->b1,
                              W && W->joint_wrench && a->cfg->out_joint_wrench, &S->bo));
  int nqo = S->q1 - S->q0;
  snprintf(S->dir, sizeof S->dir, "%s", a->out_dir);
  mbspOutEnv env = {m, a->cfg, S->comm, rank, S->dir, S->bo, S->q0, nqo, S->v0, S->v1 - S->v0};
  MBS_CALL(mbsp_agreeErr(S->comm, mbsp_outCreate(&S->out, &env)));
  memcpy(S->y, S->s->q + S->q0, (size_t)nqo * sizeof(double));
  memcpy(S->y + nqo, S->s->qd + S->v0, (size_t)(S->v1 - S->v0) * sizeof(double));
  mbsp_simDriveStart(S); // driven joints start on their profiles

  // the output directory: never overwrite an earlier run's files unless --force (a restart
  // continues the files of its own run)
  mbsErr e = MBS_OK;
  if (rank == 0) {
    e = mbsp_simMkdirs(S->dir, S->made, sizeof S->made);
    const char *const *names = mbsp_outFileNames();
    char p[4200];
    // what to suggest: continuing the earlier run if it left a checkpoint (the command as it
    // can be pasted), else another --out or --force
    char ck[4200], hint[8192] = "use --force or another --out";
    struct stat stc;
    snprintf(ck, sizeof ck, "%s/checkpoint.bin", S->dir);
    if (!a->force && !a->restart && stat(ck, &stc) == 0 && S_ISREG(stc.st_mode)) {
      char cmd[7000];
      mbsp_simContinueCmd(S, ck, cmd, sizeof cmd);
      snprintf(hint, sizeof hint, "continue it with: %s; or use --force or another --out", cmd);
    }
    // a file name of the run that is not a regular file (a FIFO, a device, a directory, a
    // symbolic link) is never opened or renamed over, also with --force or --restart
    for (int k = 0; names[k] && !e; k++) {
      struct stat st;
      snprintf(p, sizeof p, "%s/%s", S->dir, names[k]);
      if (lstat(p, &st) == 0 && !S_ISREG(st.st_mode))
        e = mbs_errSet(MBS_ERR_IO,
                       "%s exists and is not a regular file; not writing it (move it "
                       "away or use another --out)",
                       p);
    }
    for (int k = 0; names[k] && !e && !a->force && !a->restart; k++) {
      struct stat st;
      snprintf(p, sizeof p, "%s/%s", S->dir, names[k]);
      if (stat(p, &st) == 0)
        e = mbs_errSet(MBS_ERR_IO, "%s exists; not overwriting an earlier run's output (%s)", p,
                       hint);
    }
    // claim the directory atomically: every run writes energy.csv, and only one of two runs
    // given the same --out can create it (O_EXCL; the stat above only makes the common case
    // fail early with a clear message)
    snprintf(p, sizeof p, "%s/energy.csv", S->dir);
    if (!e && !a->force && !a->restart) {
      int fd = MBS_FAULT_WRITE_POINT() ? -1 : open(p, O_WRONLY | O_CREAT | O_EXCL, 0666);
      if (fd < 0 && errno == EEXIST)
        e = mbs_errSet(MBS_ERR_IO,
                       "%s exists; not overwriting an earlier run's output (another run claimed "
                       "%s first; use --force or another --out)",
                       p, S->dir);
      else if (fd < 0)
        e = mbs_errSet(MBS_ERR_IO, "%s: cannot create: %s", p, strerror(errno));
      else
        close(fd);
    }
    S->claimed = !e && !a->restart; // the directory's run files are this run's from here on
  }
  return mbsp_agreeErr(S->comm, e);
}

// --restart, rank 0: are the files in the directory this run's? Read-only, before anything in the
// directory is changed (issue 30: a restart into another model's directory overwrote its CSV
// files, or cut its energy.csv before HDF5 refused). The directory's own checkpoint must be of
// this model, the CSV headers this model's, the HDF5 file of its sizes, and the energy.csv row
// at the checkpoint's step (if there is one) must hold the energies of the checkpoint's state
// (sout, gathered), to the last digit.
static mbsErr mbsp_simCheckDirRoot(mbspSim *S) {
  const mbsModel *m = S->m;
  const char *dir = S->dir, *why = NULL;
  char p[4200], what[400] = "";
  struct stat st, sck;
  snprintf(p, sizeof p, "%s/checkpoint.bin", dir);
  if (stat(p, &st) == 0 &&
      !(stat(S->a->restart, &sck) == 0 && st.st_dev == sck.st_dev && st.st_ino == sck.st_ino)) {
    mbsCkptHeader h;
    FILE *f = fopen(p, "rb");
    int ok = f && fread(&h, sizeof h, 1, f) == 1 && !memcmp(h.magic, MBS_CKPT_MAGIC, 8) &&
             h.fingerprint == mbs_ckptFingerprint(m) && h.nq == m->nq && h.nv == m->nv;
    if (f) fclose(f);
    if (!ok) why = "checkpoint.bin is of another model";
  }
  double t;
  long step;
  mbsp_tsGetState(S->ts, &t, &step, &(double){0});
  mbs_fwdPosition(m, S->sout, S->wout);
  mbs_fwdVelocity(m, S->sout, S->wout);
  char row[200];
  snprintf(row, sizeof row, "%ld,%.17g,%.17g,%.17g,", step, t, mbs_kineticEnergy(m, S->wout),
           mbs_potentialEnergy(m, S->sout, S->wout));
  mbsErr e = mbsp_outCheckRoot(&S->out, step, row, &why, what, sizeof what);
  if (!e && why)
    e = mbs_errSet(MBS_ERR_INPUT,
                   "mbspar: --restart %s: %s holds another run's outputs (%s%s); nothing was "
                   "changed: continue into the checkpoint's own directory or give another --out",
                   S->a->restart, dir, why, what);
  return e;
}

// --restart: the check above before the files are touched (collective: the state is gathered)
mbsErr mbsp_simCheckDir(mbspSim *S) {
  MBS_CALL(mbsp_simGatherState(S));
  return mbsp_agreeErr(S->comm, S->rank == 0 ? mbsp_simCheckDirRoot(S) : MBS_OK);
}
