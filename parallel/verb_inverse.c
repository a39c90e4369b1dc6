/// \file verb_inverse.c
/// `mbspar inverse`: joint forces along the prescribed motion of the config's inverse group (the
/// built-in cycloid profile, or a user motion read from inverse.motion, mbs_motion.h), by RNEA
/// on rank 0 (the other ranks wait at the agreement); CSV and JSON outputs.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "mbspar/mbs_finite.h"
#include "mbspar/mbs_loops.h"
#include "mbspar/mbs_motion.h"
#include "mbspar/mbs_textfile.h"
#include "mbspar/mbs_trajectory.h"
#include "mbspar/mbspar.h"

typedef struct {
  const mbsModel *m;
  const mbsConfig *cfg;
  int ns;              // samples
  const mbsReal *t;    // (ns)
  const mbsReal *q;    // (ns x nq)
  const mbsReal *qd;   // (ns x nv)
  const mbsReal *qdd;  // (ns x nv)
  const mbsReal *tau;  // (ns x nv)
  const mbsMotion *mo; // user motion, or NULL (the profile)
  const mbsReal *tmax; // (nv) max |tau| per dof
  const mbsReal *llam; // (ns x nlam_loop) loop models: the loop forces of every sample
  double lresid;       // loop models: largest relative part the actuators cannot produce
  const mbsReal *eta;  // (ns x ne) flexible models: the modal coordinates of every sample
  int ne;
  const char *fmethod; // flexible models: flex_oracle, flex_aba or flex_part
} mbsInverseOut;

static void mbs_inverseJson(mbsJson *j, const void *ctx) {
  const mbsInverseOut *r = ctx;
  const mbsModel *m = r->m;
  mbs_jsonBeginObject(j, "inverse");
  if (r->mo) { // a user motion: its file, length and what it gave
    mbs_jsonString(j, "motion", r->cfg->inverse.motion);
    mbs_jsonNumber(j, "T", r->t[r->ns - 1] - r->t[0]);
    mbs_jsonInt(j, "steps", r->ns - 1);
    mbs_jsonInt(j, "prescribed_coordinates", r->mo->given_q);
    mbs_jsonInt(j, "given_rates", r->mo->given_qd);
    mbs_jsonInt(j, "given_accelerations", r->mo->given_qdd);
  } else {
    mbs_jsonNumber(j, "T", r->cfg->inverse.T);
    mbs_jsonInt(j, "steps", r->cfg->inverse.steps);
    mbs_jsonInt(j, "prescribed_coordinates", mbs_configInverseCoords(m));
  }
  mbs_jsonNumberArray(j, "t", r->t, r->ns);
  const char *names[4] = {"q", "qd", "qdd", "tau"};
  const mbsReal *data[4] = {r->q, r->qd, r->qdd, r->tau};
  for (int k = 0; k < 4; k++) {
    int n = k == 0 ? m->nq : m->nv;
    mbs_jsonBeginArray(j, names[k]);
    for (int i = 0; i < r->ns; i++) mbs_jsonNumberArray(j, NULL, data[k] + (size_t)i * n, n);
    mbs_jsonEndArray(j);
  }
  mbs_jsonNumberArray(j, "tau_max_abs", r->tmax, m->nv);
  if (r->eta) { // flexible models (docs/flexible.md 11): the free modal coordinates
    mbs_jsonString(j, "method", r->fmethod ? r->fmethod : "flex_oracle");
    mbs_jsonBeginArray(j, "eta");
    for (int i = 0; i < r->ns; i++) mbs_jsonNumberArray(j, NULL, r->eta + (size_t)i * r->ne, r->ne);
    mbs_jsonEndArray(j);
  }
  if (r->llam) { // closed loops: actuated joints, loop forces (docs/loops.md)
    mbs_jsonBeginArray(j, "actuated");
    for (int k = 0; k < r->cfg->inverse.nactuated; k++)
      mbs_jsonString(j, NULL, r->cfg->inverse.actuated[k]);
    mbs_jsonEndArray(j);
    mbs_jsonNumber(j, "unactuated_residual", r->lresid);
    mbs_jsonBeginArray(j, "loop_lambda");
    for (int i = 0; i < r->ns; i++)
      mbs_jsonNumberArray(j, NULL, r->llam + (size_t)i * m->nlam_loop, m->nlam_loop);
    mbs_jsonEndArray(j);
  }
  mbs_jsonEndObject(j);
}

// column name of coordinate (rate = 0) or rate (rate = 1) k of body b: PREFIX_BODY or
// PREFIX_BODY_COMPONENT, the names of trajectory.csv (mbs_coordName)
static void mbs_csvName(FILE *f, const char *pre, const mbsModel *m, int b, int k, int rate) {
  char nm[400];
  fprintf(f, ",%s", mbs_coordName(m, pre, b, k, rate, nm, sizeof nm));
}

static mbsErr mbs_inverseCsv(const char *path, const mbsInverseOut *r, int exclusive,
                             mbspOutSet *set) {
  const mbsModel *m = r->m;
  char tmp[4200];
  FILE *f;
  MBS_CALL(mbsp_tmpOpen(path, tmp, sizeof tmp, &f));
  fprintf(f, "t");
  for (int b = 0; b < m->nbody; b++)
    for (int k = 0; k < m->body_qnum[b]; k++) mbs_csvName(f, "q", m, b, k, 0);
  const char *pre[3] = {"qd", "qdd", "tau"};
  for (int p = 0; p < 3; p++)
    for (int b = 0; b < m->nbody; b++)
      for (int k = 0; k < m->body_dofnum[b]; k++) mbs_csvName(f, pre[p], m, b, k, 1);
  fprintf(f, "\n");
  for (int i = 0; i < r->ns; i++) {
    fprintf(f, "%.17g", r->t[i]);
    for (int k = 0; k < m->nq; k++) fprintf(f, ",%.17g", r->q[(size_t)i * m->nq + k]);
    const mbsReal *cols[3] = {r->qd, r->qdd, r->tau};
    for (int p = 0; p < 3; p++)
      for (int d = 0; d < m->nv; d++) fprintf(f, ",%.17g", cols[p][(size_t)i * m->nv + d]);
    fprintf(f, "\n");
  }
  MBS_CALL(mbsp_tmpClose(f, tmp, path));
  return mbsp_outStage(set, tmp, path, exclusive);
}

// no silent NaN (issue 12.3): the accelerations and joint forces of sample i; the running
// max |tau| per dof
static mbsErr mbs_inverseCheck(const mbsModel *m, int i, double t, const mbsReal *qdd,
                               const mbsReal *tau, mbsReal *tmax) {
  char phase[128];
  snprintf(phase, sizeof phase, "inverse: sample %d (t = %.9g s)", i, t);
  MBS_CALL(mbs_checkFinite(m, MBS_FIN_QDD, qdd, 0, m->nv, phase));
  MBS_CALL(mbs_checkFinite(m, MBS_FIN_TAU, tau, 0, m->nv, phase));
  for (int d = 0; d < m->nv; d++) tmax[d] = fmax(tmax[d], fabs(tau[d]));
  return MBS_OK;
}

// a user motion: rank 0 reads inverse.motion (a CSV of t, q and optionally qd, qdd)
mbsErr mbsp_inverseMotion(const mbsConfig *cfg, const mbsModel *m, mbsMotion **mo) {
  const char *path = cfg->inverse.motion;
  char *text = NULL;
  size_t n = 0;
  mbsErr e = mbs_fileRead(path, &text, &n); // regular files only, never blocks (mbs_textfile.h)
  if (e == MBS_ERR_INPUT) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", mbs_errMsg());
    return mbs_errSet(MBS_ERR_INPUT, "%s:%d: inverse.motion: cannot read %s (%s)", cfg->filename,
                      cfg->inverse.motion_line, path, msg);
  }
  if (!e) e = mbs_textCheck(text, n, path);
  if (!e) e = mbs_motionRead(m, text, path, mo);
  free(text);
  return e;
}

// the table, inverse.csv and inverse.json of a finished inverse run
static mbsErr mbsp_inverseWrite(const mbsCli *cli, mbspComm *comm, const mbsInverseOut *rp) {
  const mbsInverseOut r = *rp;
  const mbsModel *m = r.m;
  const mbsConfig *cfg = r.cfg;
  const mbsInverseSpec *iv = &cfg->inverse;
  int ns = r.ns, nv = m->nv;
  const mbsReal *t = r.t, *tau = r.tau;
  const mbsMotion *mo = r.mo;
  mbsErr e = MBS_OK;
  if (mbsp_cliTable(cli)) {
    printf("mbspar inverse %s: %d bodies, %d dofs, %d samples over T = %g s%s%s%s\n", cfg->filename,
           m->nbody, nv, ns, t[ns - 1] - t[0], mo ? ", motion " : "", mo ? iv->motion : "",
           r.eta ? " (flexible: joints on the motion, modal coordinates free)" : "");
    printf("  %-12s %14s %14s %14s\n", "dof", "tau(0)", "tau(T/4)", "max |tau|");
    int show = nv < 16 ? nv : 16;
    for (int d = 0; d < show; d++) {
      double mx = 0;
      for (int i = 0; i < ns; i++) mx = fmax(mx, fabs(tau[(size_t)i * nv + d]));
      int b = m->dof_body[d];
      printf("  %-12s %14.6g %14.6g %14.6g\n", m->body_name[b], tau[d],
             tau[(size_t)(ns / 4) * nv + d], mx);
    }
    if (show < nv) printf("  ... (%d more)\n", nv - show);
  }
  // inverse.csv and inverse.json (and --json PATH) are put in place together or not at all
  mbspOutSet set;
  mbsp_outInit(&set);
  if (cli->out) {
    char p[4096];
    e = mbsp_outPath(cli, "inverse.csv", p, sizeof p);
    if (!e) e = mbs_inverseCsv(p, &r, !cli->force, &set);
  }
  if (!e) e = mbsp_emitStaged(cli, comm, cfg, m, mbs_inverseJson, &r, &set);
  if (!e) e = mbsp_outCommit(&set);
  mbsp_outDiscard(&set);
  return e;
}

mbsErr mbsp_inverseFlexWrite(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg,
                             const mbsModel *m, int ns, const mbsReal *t, const mbsReal *q,
                             const mbsReal *qd, const mbsReal *qdd, const mbsReal *tau,
                             const mbsMotion *mo, const mbsReal *eta, int ne, const char *method) {
  mbsReal *tmax = calloc((size_t)m->nv + 1, sizeof *tmax);
  if (!tmax) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  mbsErr e = MBS_OK;
  for (int i = 0; i < ns && !e; i++)
    e = mbs_inverseCheck(m, i, t[i], qdd + (size_t)i * m->nv, tau + (size_t)i * m->nv, tmax);
  mbsInverseOut r = {m, cfg, ns, t, q, qd, qdd, tau, mo, tmax, NULL, 0, eta, ne, method};
  if (!e) e = mbsp_inverseWrite(cli, comm, &r);
  free(tmax);
  return e;
}

static mbsErr mbs_inverseRun(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg,
                             const mbsModel *m) {
  const mbsInverseSpec *iv = &cfg->inverse;
  int nq = m->nq, nv = m->nv;
  mbsState *s = NULL;
  mbsWork *w = NULL;
  mbsMotion *mo = NULL;
  mbsReal *qs = NULL, *qe = NULL, *t = NULL, *q = NULL, *qd = NULL, *qdd = NULL, *tau = NULL;
  mbsReal *tmax = NULL;
  mbsReal *llam = NULL; // loop models: the loop forces of every sample
  int *act = NULL;      // loop models: the actuated dofs
  double lres = 0;
  mbsErr e = MBS_OK;
  static const char *const files[] = {"inverse.csv", "inverse.json"};
  if (iv->motion) e = mbsp_inverseMotion(cfg, m, &mo);
  int ns = mo ? mo->ns : iv->steps + 1;
  if (!e) e = mbs_stateCreate(m, &s);
  if (!e) e = mbs_workCreate(m, &w);
  if (!e) {
    size_t nsz = (size_t)ns;
    qs = malloc((size_t)(nq + 1) * sizeof *qs);
    qe = malloc((size_t)(nq + 1) * sizeof *qe);
    t = malloc(nsz * sizeof *t);
    q = malloc(nsz * (size_t)(nq + 1) * sizeof *q);
    qd = malloc(nsz * (size_t)(nv + 1) * sizeof *qd);
    qdd = malloc(nsz * (size_t)(nv + 1) * sizeof *qdd);
    tau = malloc(nsz * (size_t)(nv + 1) * sizeof *tau);
    tmax = calloc((size_t)(nv + 1), sizeof *tmax);
    if (!qs || !qe || !t || !q || !qd || !qdd || !tau || !tmax)
      e = mbs_errSet(MBS_ERR_NOMEM, "mbspar inverse: out of memory for %d samples", ns);
  }
  if (!e && !mo) e = mbs_configInverse(cfg, m, qs, qe);
  if (!e && m->nloop) { // closed loops: the actuated joints are given, the others follow
    act = calloc((size_t)nv + 1, sizeof *act);
    llam = malloc((size_t)ns * (size_t)m->nlam_loop * sizeof *llam);
    if (!act || !llam) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    if (!e) e = mbs_configInverseActuated(cfg, m, act);
  }
  // the output directory once the input is known good (a refused input leaves nothing behind)
  if (!e) e = mbsp_outPrepare(cli, files, 2);
  for (int i = 0; i < ns && !e && m->nloop; i++) {
    // the sample: actuated coordinates from the motion; the others start from the motion (user
    // file) or the previous sample (the profile; the assembled q0 first) and follow the loops
    mbsReal *qddi = qdd + (size_t)i * nv;
    if (mo) {
      t[i] = mo->t[i];
      memcpy(s->q, mo->q + (size_t)i * nq, (size_t)nq * sizeof *q);
      memcpy(s->qd, mo->qd + (size_t)i * nv, (size_t)nv * sizeof *qd);
      memcpy(qddi, mo->qdd + (size_t)i * nv, (size_t)nv * sizeof *qdd);
    } else {
      t[i] = iv->T * i / iv->steps;
      if (i == 0) memcpy(s->q, m->q0, (size_t)nq * sizeof *q);
      for (int b = 0; b < m->nbody; b++)
        for (int k = 0; k < m->body_dofnum[b] && act[m->body_dofadr[b]]; k++) {
          int iq = m->body_qadr[b] + k, iv2 = m->body_dofadr[b] + k;
          mbsu_cycloid(qs[iq], qe[iq], iv->T, t[i], &s->q[iq], &s->qd[iv2], &qddi[iv2]);
        }
    }
    s->time = t[i];
    double r = 0;
    e = mbs_loopInverse(m, s, w, act, qddi, tau + (size_t)i * nv, llam + (size_t)i * m->nlam_loop,
                        &r);
    if (e == MBS_ERR_INPUT) e = mbs_configBlame(cfg, "inverse", e);
    lres = fmax(lres, r);
    memcpy(q + (size_t)i * nq, s->q, (size_t)nq * sizeof *q);
    memcpy(qd + (size_t)i * nv, s->qd, (size_t)nv * sizeof *qd);
    if (!e) e = mbs_inverseCheck(m, i, t[i], qddi, tau + (size_t)i * nv, tmax);
  }
  if (!e && m->nloop && lres > 1e-6)
    fprintf(stderr,
            "mbspar: warning: inverse: the actuators and loops leave %.3g of the inverse dynamics "
            "unbalanced (the motion is not one the mechanism can make)\n",
            lres);
  for (int i = 0; i < ns && !e && !m->nloop; i++) {
    if (mo) { // the user motion's sample i: tau = RNEA(q, qd, qdd) - applied joint forces
      t[i] = mo->t[i];
      memcpy(s->q, mo->q + (size_t)i * nq, (size_t)nq * sizeof *q);
      memcpy(s->qd, mo->qd + (size_t)i * nv, (size_t)nv * sizeof *qd);
      memcpy(qdd + (size_t)i * nv, mo->qdd + (size_t)i * nv, (size_t)nv * sizeof *qdd);
      s->time = t[i];
      mbs_fwdPosition(m, s, w);
      mbs_fwdVelocity(m, s, w);
      if (m->nforce) mbs_fwdForces(m, w); // spring-dampers
      mbs_rnea(m, w, qdd + (size_t)i * nv);
      for (int d = 0; d < nv; d++) tau[(size_t)i * nv + d] = w->qfrc_inv[d] - w->qfrc[d];
    } else { // samples t_k = k T / steps of the profile
      t[i] = iv->T * i / iv->steps;
      mbs_inverseSample(m, s, w, qs, qe, iv->T, t[i], qdd + (size_t)i * nv, tau + (size_t)i * nv);
    }
    memcpy(q + (size_t)i * nq, s->q, (size_t)nq * sizeof *q);
    memcpy(qd + (size_t)i * nv, s->qd, (size_t)nv * sizeof *qd);
    e = mbs_inverseCheck(m, i, t[i], qdd + (size_t)i * nv, tau + (size_t)i * nv, tmax);
  }
  if (!e) {
    mbsInverseOut r = {m, cfg, ns, t, q, qd, qdd, tau, mo, tmax, llam, lres, NULL, 0, NULL};
    e = mbsp_inverseWrite(cli, comm, &r);
  }
  free(qs);
  free(qe);
  free(t);
  free(q);
  free(qd);
  free(qdd);
  free(tau);
  free(tmax);
  free(llam);
  free(act);
  mbs_motionDestroy(&mo);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  return e;
}

mbsErr mbsp_verbInverse(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg,
                        const mbsModel *m) {
  mbsErr e = mbsp_agreeErr(comm, mbsp_cliGatherRss(comm));
  if (e) return e;
  return mbsp_agreeErr(comm, mbsp_rank(comm) == 0 ? mbs_inverseRun(cli, comm, cfg, m) : MBS_OK);
}
