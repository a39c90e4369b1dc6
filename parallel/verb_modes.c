/// \file verb_modes.c
/// `mbspar modes`: natural frequencies and mode shapes of the model linearised at q0 or at the
/// static equilibrium (src/modes.c, docs/modes.md). The linearisation's columns (one RNEA or
/// oracle evaluation pair each) are split over the ranks (mbs_colsplit.h, parallel/flex_verbs.c:
/// one broadcast per rank gathers them), so every rank holds M and K with the bits of one rank;
/// rank 0 solves the eigenproblem (LAPACK dsygv) and reports. `--at static`: the rigid drainage
/// on rank 0 (its q broadcast), the flexible one replicated with its Newton columns split.
/// Collective.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "mbspar/mbs_flexmodes.h"
#include "mbspar/mbs_modes.h"
#include "mbspar/mbs_solvertype.h"
#include "mbspar/mbs_static.h"
#include "mbspar/mbspar.h"

/// Warn that q* is not an equilibrium when the Newton step to it is longer than this (rad or m)
/// or a zero mode is driven harder than this (rad/s² or m/s²).
#define MBS_MODES_EQ_TOL 1e-6
#define MBS_MODES_TWO_PI 6.283185307179586476925

typedef struct {
  int count; // --count K: modes reported (default 10, at most nv)
  int at;    // 0: q0, 1: static equilibrium (--at q0|static)
} mbsModesArgs;

static mbsErr mbs_modesArgs(const mbsCli *cli, mbsModesArgs *o) {
  o->count = 10;
  o->at = 0;
  const char *a;
  if ((a = mbsp_cliArg(cli, "--count"))) {
    char *end = NULL;
    long k = strtol(a, &end, 10);
    if (end == a || *end || k < 1 || k > 1000000000L)
      return mbs_errSet(MBS_ERR_USAGE,
                        "mbspar modes: --count %s: expected an integer number of modes in [1, "
                        "1000000000]",
                        a);
    o->count = (int)k;
  }
  if ((a = mbsp_cliArg(cli, "--at"))) {
    if (!strcmp(a, "q0"))
      o->at = 0;
    else if (!strcmp(a, "static"))
      o->at = 1;
    else
      return mbs_errSet(MBS_ERR_USAGE, "mbspar modes: --at %s: expected q0 or static", a);
  }
  return MBS_OK;
}

// what rank 0 found, for the table, the JSON and the CSV
typedef struct {
  const mbsModel *m;
  const mbsModes *md;
  const mbsModesArgs *o;
  const mbsStatic *st; // NULL at q0
  const mbsReal *q;    // (nq) the linearisation point
  int nshow;           // modes reported
  mbsReal dist;        // Newton step to the equilibrium, max |δq|
  mbsReal zacc;        // largest acceleration of a zero mode
  int at_eq;           // dist and zacc within MBS_MODES_EQ_TOL
  double *buf;         // (nv) scratch of the JSON writer (allocated by the verb)
  int ranks;           // the ranks the columns were split over
  double lin_s;        // wall time of the linearisation on rank 0 (seconds)
} mbsModesOut;

// the label of dof d: its body's name, with .k for a joint of several dofs
static void mbs_modesDofName(const mbsModel *m, int d, char *buf, size_t n) {
  for (int k = 0, c = m->nv; d >= m->nv && m->flex && k < m->flex->n; c += m->flex->b[k++].modal.m)
    if (d < c + m->flex->b[k].modal.m) { // a modal coordinate of a flexible body
      snprintf(buf, n, "%s.eta%d", m->flex->b[k].name, d - c);
      return;
    }
  int b = 0;
  while (b + 1 < m->nbody && m->body_dofadr[b + 1] <= d) b++;
  while (b < m->nbody && m->body_dofnum[b] == 0) b++; // fixed joints own no dof
  if (m->body_dofnum[b] > 1)
    snprintf(buf, n, "%s.%d", m->body_name[b], d - m->body_dofadr[b]);
  else
    snprintf(buf, n, "%s", m->body_name[b]);
}

static void mbs_modesJson(mbsJson *j, const void *ctx) {
  const mbsModesOut *r = ctx;
  const mbsModes *md = r->md;
  const mbsModel *m = r->m;
  const int n = md->n, k = r->nshow;
  mbs_jsonBeginObject(j, "results");
  mbs_jsonString(j, "at", r->o->at ? "static" : "q0");
  mbs_jsonNumberArray(j, "q", r->q, m->nq);
  if (r->st) {
    mbs_jsonBeginObject(j, "static");
    mbs_jsonBool(j, "converged", r->st->reason == MBS_STATIC_CONVERGED);
    mbs_jsonInt(j, "iterations", r->st->iterations);
    mbs_jsonNumber(j, "qdd_residual", r->st->qdd_res);
    mbs_jsonEndObject(j);
  }
  mbs_jsonBeginObject(j, "linearisation");
  mbs_jsonInt(j, "n", n);
  mbs_jsonNumber(j, "fd_step", md->h);
  mbs_jsonInt(j, "column_parts", r->ranks); // the ranks that evaluated its columns
  mbs_jsonNumber(j, "time_s", r->lin_s);
  mbs_jsonNumber(j, "k_max", md->k_max);
  mbs_jsonNumber(j, "k_asymmetry", md->k_asym);
  mbs_jsonNumber(j, "m_asymmetry", md->m_asym);
  mbs_jsonNumber(j, "residual_max", md->r_max);
  mbs_jsonNumber(j, "qdd_max", md->qdd_max);
  mbs_jsonNumber(j, "equilibrium_distance", r->dist);
  mbs_jsonNumber(j, "zero_mode_acceleration", r->zacc);
  mbs_jsonBool(j, "at_equilibrium", r->at_eq);
  mbs_jsonEndObject(j);
  mbs_jsonInt(j, "count", k);
  double *buf = r->buf;
  for (int i = 0; i < k; i++) buf[i] = md->lambda[i];
  mbs_jsonNumberArray(j, "eigenvalue", buf, k);
  for (int i = 0; i < k; i++) buf[i] = mbs_modesOmega(md->lambda[i]);
  mbs_jsonNumberArray(j, "omega", buf, k);
  for (int i = 0; i < k; i++) buf[i] = mbs_modesOmega(md->lambda[i]) / MBS_MODES_TWO_PI;
  mbs_jsonNumberArray(j, "frequency_hz", buf, k);
  mbs_jsonIntArray(j, "zero", md->zero, k);
  mbs_jsonBeginArray(j, "dofs");
  for (int d = 0; d < n; d++) {
    char name[160];
    mbs_modesDofName(m, d, name, sizeof name);
    mbs_jsonString(j, NULL, name);
  }
  mbs_jsonEndArray(j);
  mbs_jsonBeginArray(j, "shapes");
  for (int i = 0; i < k; i++) {
    for (int d = 0; d < n; d++) buf[d] = md->V[(size_t)d * n + i];
    mbs_jsonNumberArray(j, NULL, buf, n);
  }
  mbs_jsonEndArray(j);
  mbs_jsonEndObject(j);
}

// DIR/modes.csv: one row per mode (written through a temporary)
static mbsErr mbs_modesCsv(const char *path, const mbsModesOut *r, int exclusive, mbspOutSet *set) {
  const mbsModes *md = r->md;
  const int n = md->n;
  char tmp[4200];
  FILE *f;
  MBS_CALL(mbsp_tmpOpen(path, tmp, sizeof tmp, &f));
  fprintf(f, "mode,omega_rad_s,frequency_hz,eigenvalue,zero");
  for (int d = 0; d < n; d++) {
    char name[160];
    mbs_modesDofName(r->m, d, name, sizeof name);
    fprintf(f, ",%s", name);
  }
  fprintf(f, "\n");
  for (int i = 0; i < r->nshow; i++) {
    mbsReal om = mbs_modesOmega(md->lambda[i]);
    fprintf(f, "%d,%.17g,%.17g,%.17g,%d", i + 1, om, om / MBS_MODES_TWO_PI, md->lambda[i],
            md->zero[i]);
    for (int d = 0; d < n; d++) fprintf(f, ",%.17g", md->V[(size_t)d * n + i]);
    fprintf(f, "\n");
  }
  MBS_CALL(mbsp_tmpClose(f, tmp, path));
  return mbsp_outStage(set, tmp, path, exclusive);
}

// the Newton step to the equilibrium in modal coordinates: δq = −Σ v_k (v_k^T r) / λ_k over the
// nonzero modes (v_k M-orthonormal: the raw dsygv vectors, md->V rescaled), and the largest
// acceleration |v_k^T r| max|v_k| of a zero mode (a rigid mode driven by the residual)
static void mbs_modesDistance(const mbsModes *md, mbsModesOut *r, mbsReal *dq) {
  const int n = md->n;
  memset(dq, 0, (size_t)n * sizeof *dq);
  r->zacc = 0;
  for (int k = 0; k < n; k++) {
    // md->V[:, k] = v_k / v_k[imax]: recover the M-normalised vector by its M-norm
    mbsReal vmv = 0, vr = 0;
    for (int i = 0; i < n; i++) {
      mbsReal mv = 0;
      for (int l = 0; l < n; l++) mv += md->M[(size_t)i * n + l] * md->V[(size_t)l * n + k];
      vmv += md->V[(size_t)i * n + k] * mv;
      vr += md->V[(size_t)i * n + k] * md->r[i];
    }
    mbsReal s = vmv > 0 ? 1 / sqrt(vmv) : 0; // v_k = s V[:, k]; max |v_k| = s
    if (md->zero[k]) {
      mbsReal a = fabs(s * vr) * s;
      if (a > r->zacc) r->zacc = a;
    } else {
      for (int i = 0; i < n; i++) dq[i] -= s * md->V[(size_t)i * n + k] * s * vr / md->lambda[k];
    }
  }
  r->dist = 0;
  for (int i = 0; i < n; i++)
    if (fabs(dq[i]) > r->dist) r->dist = fabs(dq[i]);
  r->at_eq = r->dist <= MBS_MODES_EQ_TOL && r->zacc <= MBS_MODES_EQ_TOL;
}

/// `mbspar modes`: linearise at q0 (or the static equilibrium with --at static), the columns
/// split over the ranks, and solve the eigenproblem on rank 0. Collective.
mbsErr mbsp_verbModes(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, const mbsModel *m) {
  int rank = mbsp_rank(comm), size = mbsp_size(comm);
  mbsModesArgs o;
  mbsState *s = NULL;
  mbsWork *w = NULL;
  mbsModes *md = NULL;
  mbsStatic *st = NULL;
  mbsReal *dq = NULL;
  mbsColSplit cs;
  mbsp_colSplitInit(&cs, comm);
  const mbsColSplit *csp = size > 1 ? &cs : NULL;
  // the drainage needs a serial forward-dynamics method: the configured one if it is aba or
  // crba, else aba (a view of the model: the model is not written)
  mbsModel view = *m;
  if (!mbs_solverIsBaseline(view.opt.solver)) view.opt.solver = MBS_SOLVER_ABA;
  static const char *const files[] = {"modes.json", "modes.csv"};
  mbsErr e = mbs_modesArgs(cli, &o); // the same argv on every rank
  if (!e && rank == 0) e = mbsp_outPrepare(cli, files, 2);
  mbsFlexOracle *fo = NULL; // flexible bodies: the oracle's system (docs/flexible.md 7)
  mbsReal *eta0 = NULL;
  // every rank: the model's system (its columns); rank 0: the rigid drainage, the report
  if (!e && m->nflex_g) e = mbs_flexOracleCreate(m, &fo);
  if (!e && fo) e = mbs_flexModesCreate(m, fo, &md);
  if (!e && fo && !(eta0 = calloc((size_t)md->n + 1, sizeof *eta0)))
    e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  if (!e && !fo) e = mbs_modesCreate(m, &md);
  if (!e) e = mbs_stateCreate(m, &s);
  if (!e) e = mbs_workCreate(&view, &w);
  if (!e) e = mbs_workEnableMethod(&view, w);
  if (!e && rank != 0) mbs_modesTrim(md); // the others evaluate columns only: M, K, B (3 n^2)
  if (!e && rank == 0 && o.at && !fo) e = mbs_staticCreate(&view, &cfg->statics, &st);
  if (!e && rank == 0) dq = malloc(2 * (size_t)md->n * sizeof *dq); // Newton step, JSON scratch
  if (!e && rank == 0 && !dq) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  e = mbsp_agreeErr(comm, e);
  if (e == MBS_ERR_INPUT) e = mbs_configBlame(cfg, "model", e);

  mbsModesOut r = {m, md, &o, st, NULL, 0, 0, 0, 1, dq ? dq + md->n : NULL, size, 0};
  if (!e && rank == 0 && st) { // the equilibrium of `mbspar static` (src/static.c), serially
    mbsStaticSerial sc = {&view, w};
    e = mbs_staticSolve(st, s, mbs_staticForwardSerial, &sc);
    if (!e && st->reason != MBS_STATIC_CONVERGED)
      fprintf(stderr,
              "mbspar: warning: modes: the static solve did not converge in static.max_iter = "
              "%d evaluations (kinetic energy %.3e J): linearising where it stopped\n",
              st->opt.max_iter, st->ke);
  }
  // (the decisions on replicated data, m->nflex_g, not on fo: a failed create leaves it NULL on
  // one rank only)
  if (o.at && !m->nflex_g && size > 1) { // rank 0's equilibrium to the others
    e = mbsp_agreeErr(comm, e);
    if (!e) e = mbsp_bcastBytes(comm, s->q, sizeof *s->q * (size_t)m->nq, 0);
  }
  e = mbsp_agreeErr(comm, e);
  if (!e && m->nflex_g && o.at)
    e = mbs_flexStaticAt(m, fo, &cfg->statics, s->q, eta0, csp); // flexible 8
  e = mbsp_agreeErr(comm, e);
  double t0 = mbs_wtime();
  if (!e)
    e = fo ? mbs_flexModesLinearisePart(m, fo, s->q, eta0, md, csp)
           : mbs_modesLinearisePart(m, s, w, md, csp);
  r.lin_s = mbs_wtime() - t0; // rank 0's wall time of the linearisation (its gather included)
  e = mbsp_agreeErr(comm, e);
  if (!e && rank == 0) e = mbs_modesSolve(md);
  e = mbsp_agreeErr(comm, e);
  if (!e) e = mbsp_agreeErr(comm, mbsp_cliGatherRss(comm)); // the report head's memory
  if (!e && rank == 0) {
    r.q = s->q;
    r.nshow = o.count < md->n ? o.count : md->n;
    mbs_modesDistance(md, &r, dq);
    if (!r.at_eq)
      fprintf(stderr,
              "mbspar: warning: modes: %s is not an equilibrium (max |C(q,0) - tau| = %.3g, max "
              "|qdd| at rest = %.3g, Newton step to the equilibrium %.3g, K asymmetry %.3g): the "
              "frequencies describe small motions about a moving state only approximately%s\n",
              o.at ? "the static solution" : "q0", md->r_max, md->qdd_max, r.dist, md->k_asym,
              o.at ? "" : "; --at static linearises at the equilibrium");
    if (mbsp_cliTable(cli)) {
      printf("mbspar modes %s: %d bodies, %d dofs, at %s\n", cfg->filename, m->nbody, m->nv,
             o.at ? "the static equilibrium" : "q0");
      if (st)
        printf("  %-22s %s after %d evaluations\n", "static",
               st->reason == MBS_STATIC_CONVERGED ? "converged" : "NOT converged", st->iterations);
      printf("  %-22s max |C - tau| %.3e, max |qdd| %.3e, K asymmetry %.2e, step h %g, columns "
             "over %d rank%s\n",
             "linearisation", md->r_max, md->qdd_max, md->k_asym, md->h, r.ranks,
             r.ranks == 1 ? "" : "s");
      printf("  %4s  %22s  %22s\n", "mode", "omega [rad/s]", "f [Hz]");
      for (int k = 0; k < r.nshow; k++) {
        mbsReal om = mbs_modesOmega(md->lambda[k]);
        printf("  %4d  %22.15g  %22.15g%s\n", k + 1, om, om / MBS_MODES_TWO_PI,
               md->zero[k]         ? "  zero (rigid) mode"
               : md->lambda[k] < 0 ? "  unstable"
                                   : "");
      }
    }
    // modes.csv and modes.json (and --json PATH) are put in place together or not at all
    mbspOutSet set;
    mbsp_outInit(&set);
    if (cli->out) {
      char p[4096];
      e = mbsp_outPath(cli, "modes.csv", p, sizeof p);
      if (!e) e = mbs_modesCsv(p, &r, !cli->force, &set);
    }
    if (!e) e = mbsp_emitStaged(cli, comm, cfg, m, mbs_modesJson, &r, &set);
    if (!e) e = mbsp_outCommit(&set);
    mbsp_outDiscard(&set);
  }
  e = mbsp_agreeErr(comm, e);
  free(dq), free(eta0);
  mbs_flexOracleDestroy(&fo);
  mbs_staticDestroy(&st);
  mbs_modesDestroy(&md);
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  return e;
}
