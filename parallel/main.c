/// \file main.c
/// The mbspar driver: `mbspar [VERB] CONFIG [options]` (docs/cli.md). The verbs live in
/// verb_*.c and are dispatched through the table below; cli.c parses the options.
///
/// Communication pattern: rank 0 reads the config file and broadcasts its bytes
/// (mbsp_bcastFile); every rank parses the same text with the same --set overrides and builds the
/// same model, so no further setup traffic is needed. Every fallible phase ends in mbsp_agreeErr,
/// so all ranks leave together with the same exit code and only rank 0 prints the one-line
/// message. The serial methods (aba, crba) and inverse dynamics run on rank 0 while the other
/// ranks wait at the next agreement; the parallel constraint-force methods run on every rank. MPI
/// is reached only through the mbsp_* wrappers.
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "build_info.h"
#include "affinity.h"
#include "cli.h"
#include "loops_local.h"
#include "fmtoff.h"
#include "memcheck.h"
#include "mbspar/mbs_flex.h"
#include "petsc_log.h"
#include "threads.h"
#include "urdf_stream.h"
#include "petsc_ref.h"
#include "solver_auto.h"
#include "mbspar/mbs_fault.h"
#include "mbspar/mbs_loops.h"
#include "mbspar/mbs_solvertype.h"
#include "mbspar/mbs_textfile.h"
#include "mbspar/mbspar.h"
#if defined(__GLIBC__) && !defined(SMPI_HELPERS_H) // SimGrid's smpicc redefines malloc
#define MBS_MALLOPT 1
#include <malloc.h>
#endif

// the verbs: name, handler, usage line, PETSc needed, distributed-memory models, forward
// dynamics with solver.method (row 0 is the default verb)
static const mbspVerb mbs_verbs[] = {
    {"run", mbsp_verbRun,
     "simulate (default verb): PETSc TS over the distributed state, outputs in --out", 1, 0, 1},
    {"accel", mbsp_verbAccel, "one forward-dynamics evaluation at the initial state", 0, 1, 1},
    {"inverse", mbsp_verbInverse,
     "joint forces along the prescribed motion of the config's inverse group", 0, 0, 0},
    {"static", mbsp_verbStatic, "static equilibrium by energy drainage (docs/static.md)", 0, 0, 1},
    {"modes", mbsp_verbModes,
     "natural frequencies and mode shapes, linearised at q0 or the static equilibrium", 0, 0, 0},
    {"cpa", mbsp_verbCpa, "critical-path analysis of one evaluation (docs/cpa.md)", 0, 0, 0},
    {"check", mbsp_verbCheck, "validate the input and summarise the model", 0, 0, 0},
};
#define MBS_NVERB ((int)(sizeof mbs_verbs / sizeof mbs_verbs[0]))

static void mbs_printError(void) {
  // exactly one line: flatten any newline in the message
  char msg[2048];
  snprintf(msg, sizeof msg, "%s", mbs_errMsg());
  for (char *p = msg; *p; p++)
    if (*p == '\n' || *p == '\r') *p = ' ';
  fprintf(stderr, "%s\n", msg[0] ? msg : "mbspar: error");
  if (getenv("MBS_TRACEBACK") && mbs_errTraceback()[0])
    fprintf(stderr, "traceback:\n%s", mbs_errTraceback());
}

int main(int argc, char **argv) {
  mbspComm *comm = NULL;
  mbsErr e = mbsp_init(&argc, &argv, &comm);
#ifdef MBS_MALLOPT
  // large arrays straight from the kernel and back to it when freed: Open MPI's initialisation
  // turns glibc's mmap off (M_MMAP_MAX = 0) for its memory-registration cache, so freed model and
  // engine arrays stayed on the heap and every later allocation added to the peak (the
  // registration cache follows munmap through its own hooks)
  mallopt(M_MMAP_MAX, 65536);
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 20);
#endif
  if (e) {
    mbs_printError();
    return mbs_errExitCode(e);
  }
  int rank = mbsp_rank(comm);
  mbsCli cli;
  mbsConfig *cfg = NULL;
  mbsModel *m = NULL;
  char *text = NULL;

  // the command line is the same on every rank; agree anyway
  e = mbsp_agreeErr(comm, mbsp_cliParse(argc, argv, mbs_verbs, MBS_NVERB, &cli));
  // run: SIGTERM/SIGUSR1/SIGINT from now on only set a flag, honoured after the first step (a
  // signal during the setup is not lost; sim.c installs them again after PETSc's own handlers)
  if (!e && cli.verb && cli.verb->run == mbsp_verbRun) mbsp_simInstallSignals();
  mbspThreadChoice tc = {1, 0, 1, 1};
  if (!e) e = mbsp_threadsInit(comm, &tc); // OpenMP threads per rank: never oversubscribe
  if (!e && (cli.help || cli.version)) {
    if (rank == 0 && cli.help_config)
      mbs_configHelp(stdout);
    else if (rank == 0 && cli.help)
      mbsp_cliUsage(stdout, mbs_verbs, MBS_NVERB, cli.verb);
    fflush(stdout);
    // mbspar -help: then PETSc's general options (PetscInitialize prints them)
    if (cli.help && cli.petsc_help) {
      int pargc = cli.pargc;
      char **pargv = cli.pargv;
      e = mbsp_agreeErr(comm, mbsp_petscInitialize(&pargc, &pargv));
      mbsp_petscFinalize();
    }
    if (rank == 0 && cli.version && !cli.help) {
      printf("mbspar %s (git %s)\n", MBS_VERSION, MBS_GIT_SHA);
      printf("MPI library: %s\n", mbsp_libraryVersion());
      printf("compiler: %s, build type %s\n", MBS_COMPILER, MBS_BUILD_TYPE);
      printf("libconfig %s, PETSc %s, hwloc %s\n", MBS_LIBCONFIG_VERSION,
             MBS_PETSC_VERSION[0] ? MBS_PETSC_VERSION : "-",
             MBS_HWLOC_VERSION[0] ? MBS_HWLOC_VERSION : "-");
    }
    mbsp_cliFree(&cli);
    if (e && rank == 0) mbs_printError();
    mbsp_finalize(&comm);
    return mbs_errExitCode(e);
  }

  // rank 0 reads, everyone parses the same bytes
  if (!e && rank == 0) {
    struct stat st;
    if (stat(cli.config, &st) == 0 && S_ISDIR(st.st_mode))
      e = mbs_errSet(MBS_ERR_INPUT, "%s:0: cannot read: is a directory, not a config file",
                     cli.config);
  }
  e = mbsp_agreeErr(comm, e); // every rank, always (rank 0 alone may have failed)
  // `mbspar VERB robot.urdf`: a config of its own with the defaults and model.urdf
  size_t cl = !e && cli.config ? strlen(cli.config) : 0;
  int urdf_only = cl > 5 && !strcmp(cli.config + cl - 5, ".urdf");
  if (!e && urdf_only) {
    const char *base = strrchr(cli.config, '/');
    base = base ? base + 1 : cli.config;
    text = malloc(2 * strlen(base) + 32);
    if (!text) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    for (char *t = text ? text + sprintf(text, "model = { urdf = \"") : NULL; t; t = NULL) {
      for (const char *c = base; *c; c++) { // libconfig string: escape quotes and backslashes
        if (*c == '"' || *c == '\\') *t++ = '\\';
        *t++ = *c;
      }
      strcpy(t, "\"; };\n");
    }
  } else if (!e) {
    size_t tlen = 0;
    e = mbsp_bcastFile(comm, cli.config, &text, &tlen);
    if (!e) e = mbsp_agreeErr(comm, mbs_textCheck(text, tlen, cli.config)); // NUL, UTF-16, ...
  }
  if (!e)
    e = mbsp_agreeErr(
        comm, mbsp_cliBlameTs(&cli, mbs_configParse(text, cli.config, cli.sets, cli.nset, &cfg)));
  free(text); // the config's text is parsed: not held through the build (issue 35 item 4)
  text = NULL;
  // model.urdf: rank 0 reads the robot in pieces, every rank parses the same bytes as they come
  // (no rank holds the whole file: urdf_stream.h)
  if (!e && cfg->urdf_path) {
    int unread = 0;
    e = mbsp_urdfStream(comm, cfg, &unread);
    if (e == MBS_ERR_INPUT && unread && !urdf_only) { // say which line of the config wants it
      char msg[1024];
      snprintf(msg, sizeof msg, "%s", mbs_errMsg());
      e = mbs_errSet(MBS_ERR_INPUT, "%s:%d: model.urdf: cannot read %s (%s)", cfg->filename,
                     cfg->urdf_line, cfg->urdf_path, msg);
    }
  }
  // model.urdf.torques: the joint forces over time, read the same way
  if (!e && cfg->urdf_torques) {
    char *ttext = NULL;
    size_t tlen = 0;
    e = mbsp_bcastFile(comm, cfg->urdf_torques, &ttext, &tlen);
    if (e == MBS_ERR_INPUT) {
      char msg[1024];
      snprintf(msg, sizeof msg, "%s", mbs_errMsg());
      e = mbs_errSet(MBS_ERR_INPUT, "%s:%d: model.urdf.torques: cannot read %s (%s)", cfg->filename,
                     cfg->urdf_torques_line, cfg->urdf_torques, msg);
    }
    if (!e) e = mbsp_agreeErr(comm, mbs_textCheck(ttext, tlen, cfg->urdf_torques)); // NUL, ...
    if (!e) e = mbsp_agreeErr(comm, mbs_configSetTorques(cfg, ttext, tlen));
    free(ttext);
  }
  // solver.method = auto: the method the cost model predicts fastest for this job
  if (!e && cli.verb->forward)
    e = mbsp_solverAuto(comm, cfg, &tc,
                        cli.verb->run == mbsp_verbAccel || cli.verb->run == mbsp_verbRun);
  // ... a distributed method where ranks share cores: it runs on one rank per core (the ranks of
  // `sub`), the others build nothing and wait asleep until the verb ends (below)
  mbspComm *sub = NULL, *vc = comm; // vc: the ranks that build the model and run the verb
  int split = !e && cfg->sauto.active > 0, waiting = 0;
  if (split) {
    e = mbsp_agreeErr(comm, mbsp_commSplit(comm, cfg->sauto.mine, &sub));
    waiting = !sub;
    vc = sub ? sub : comm;
  }
  int local_model = 0; // distributed-memory model (see below)
  mbspLoopsPlan lplan = MBSP_LOOPS_WHOLE;
  if (!e && !waiting) {
    int size = mbsp_size(vc);
    local_model = size > 1 && cli.verb->local && mbs_solverCaps(cfg->opt.solver)->local_model;
    const char *env = getenv("MBSPAR_MODEL"); // "full": the replicated model (measurements)
    if (env && strcmp(env, "full") == 0) local_model = 0; // URDF robots too (issue 35 item 4)
    if (cfg->nforces) local_model = 0;                    // spring-dampers: whole
    if (mbs_configHasFlexible(cfg)) local_model = 0;      // flexible: whole (docs/flexible.md 11)
    // loop models: distributed for accel with schur if q0 and qd0 close the loops (the verb
    // checks before its first evaluation; else built whole and the verb run again, below),
    // MBSPAR_LOOPS_LOCAL=0/1 forces (loops_local.h, docs/loops.md 9)
    if (local_model && cfg->nloops) lplan = mbsp_loopsLocalPlan(&cli, cfg);
    if (local_model && cfg->nloops && lplan == MBSP_LOOPS_WHOLE) local_model = 0;
  }
  if (!e && !waiting) e = mbsp_memCheck(vc, cfg, cli.verb->name, local_model); // too big?
  // a loop model that may be built distributed: an input error of that try (its memory check,
  // its build) makes it whole, whose build then decides as it did before the try existed
  int ltry = local_model && lplan == MBSP_LOOPS_TRY;
  if (ltry && (e == MBS_ERR_INPUT || e == MBS_ERR_USAGE)) {
    local_model = ltry = 0;
    e = mbsp_memCheck(vc, cfg, cli.verb->name, 0);
  }
  if (!e && !waiting) {
    // distributed-memory model: each rank builds only its bodies, their remote parents and
    // children (O(N/P)); rank 0 validates every body first (names, values) so every error is
    // found whatever the rank count. For verbs and methods that need the whole model on every
    // rank (or on rank 0) everybody builds the full model.
    int size = mbsp_size(vc), vrank = mbsp_rank(vc);
    if (local_model) {
      e = mbsp_agreeErr(vc, vrank == 0 ? mbs_configValidate(cfg) : MBS_OK);
      if (!e) e = mbsp_agreeErr(vc, mbs_configBuildLocal(cfg, size, vrank, &m));
      // the robot's inertials and frames were for the build: the reports need only names and
      // joints (the links' 23 MB of a 2^16-link tree go back before the verb's own allocations)
      if (!e) mbs_urdfCompact(cfg->urdf);
      if (!e) { // totals over all ranks for the reports
        double t[1 + MBS_JNT_COUNT] = {0};
        for (int b = m->own0; b < m->own1; b++)
          t[0] += m->body_mass[b], t[1 + m->body_jnttype[b]]++;
        e = mbsp_allreduceSum(vc, t, 1 + MBS_JNT_COUNT);
        m->sum_mass = t[0];
        for (int k = 0; k < MBS_JNT_COUNT; k++) m->sum_jnt[k] = (int)t[1 + k];
      }
      if (!e && m->nloop && lplan == MBSP_LOOPS_FORCED &&
          (cli.verb->run != mbsp_verbAccel || strcmp(mbs_solverName(m->opt.solver), "schur")))
        e = mbsp_loopsLocalStop(vc, m, cli.verb->name);
      if (ltry && (e == MBS_ERR_INPUT || e == MBS_ERR_USAGE)) { // (agreed: every rank)
        mbs_modelDestroy(&m);
        local_model = ltry = 0;
        e = mbsp_memCheck(vc, cfg, cli.verb->name, 0);
      }
    }
    if (!e && !local_model) e = mbsp_agreeErr(vc, mbs_configBuildModel(cfg, &m));
  }
  if (split) e = mbsp_agreeErr(comm, e); // the waiting ranks learn how the build went
  // flexible bodies (issue 34): check, modes, and accel/run/static at one rank on the serial
  // oracle (parallel/flex_run.c, docs/flexible.md); the rest refused, every rank agreeing (a
  // distributed build may hold none of them)
  // ... where the serial oracles run at several ranks: rank 0 alone (accel, run, inverse with an
  // explicit aba or crba, as auto's serial choice) or every rank (static; parallel/flex_verbs.c)
  if (!e) mbsp_flexRanks(&cli, comm, cfg, m);
  if (!e) {
    mbsErr fe = MBS_OK;
    if (m && m->nflex_g && cli.verb->run != mbsp_verbCheck) // m: NULL on auto's waiting ranks
      fe = mbsp_flexRoute(&cli, comm, cfg, m);
    e = mbsp_agreeErr(comm, fe);
  }
  // what the robot has that mbspar does not model: one warning
  if (!e && rank == 0 && cfg->urdf && mbs_urdfNotModelled(cfg->urdf)[0])
    fprintf(stderr, "mbspar: warning: %s: not modelled: %s\n", cfg->urdf_path,
            mbs_urdfNotModelled(cfg->urdf));
  if (!e && cfg->ndrive && !local_model && !waiting) { // the drives' bodies and joints, any verb
    int dof[MBS_DRIVE_MAX], qa[MBS_DRIVE_MAX];
    e = mbsp_agreeErr(vc, mbs_configDrives(cfg, m, dof, qa));
  }
  if (split) e = mbsp_agreeErr(comm, e);
  if (!e && rank == 0 && cfg->ndrive && cli.verb->run != mbsp_verbRun && !cli.quiet)
    fprintf(stderr, "mbspar: note: %s:%d: drive applies to `run` only; %s ignores it\n",
            cfg->filename, cfg->drives[0].line, cli.verb->name);
  if (!e && rank == 0 && cfg->natural_over)
    fprintf(stderr,
            "mbspar: note: %s:%d: solver.method = %s is for the joint formulation; "
            "model.formulation = natural solves its own system\n",
            cfg->filename, cfg->natural_over_line, mbs_solverName(cfg->natural_over - 1));
  // PETSc is started for the verbs that need it, for solver.method = petsc, and whenever a
  // PETSc option (single dash, e.g. -log_view) is given; it sees only its own options, collected
  // by mbsp_cliParse wherever they stood
  if (!e && (mbs_solverCaps(m ? m->opt.solver : cfg->opt.solver)->petsc || cli.verb->petsc ||
             cli.pargc > 1)) {
    // -help: mbspar's own options first, then PETSc's as its objects ask for them
    if (cli.petsc_help && rank == 0) {
      mbsp_cliUsage(stdout, mbs_verbs, MBS_NVERB, cli.verb);
      fputs("\n", stdout);
      fflush(stdout);
    }
    char **pargv = calloc((size_t)cli.pargc + 1, sizeof *pargv);
    int pargc = cli.pargc;
    if (!pargv)
      e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    else
      memcpy(pargv, cli.pargv, (size_t)pargc * sizeof *pargv);
    e = mbsp_agreeErr(comm, e); // PetscInitialize is collective: nobody enters it alone
    if (!e) e = mbsp_agreeErr(comm, mbsp_petscInitialize(&pargc, &pargv));
    // -log_view: mbspar's phases as PETSc events in a stage named after the verb
    if (!e) e = mbsp_agreeErr(comm, mbsp_petscLogBegin(cli.verb->name));
    free(pargv);
  }
  if (!e && cli.bind) {
    int lr = 0, nl = 1;
    e = mbsp_localRank(comm, &lr, &nl);
    if (!e) e = mbsp_affinityBind(cli.bind, lr, nl);
    e = mbsp_agreeErr(comm, e);
  }
  mbs_faultMark("verb"); // fault injection: what came before is every verb's common setup
  // an iterative method on a model with many closure equations: one tree solve per equation in
  // every evaluation (docs/loops.md 8): say so before a long silence
  const mbsSolverType *st = !e && m && cli.verb->forward ? mbs_solverFind(m->opt.solver) : NULL;
  if (st && st->iterative && m->nlam_loop >= MBS_LOOP_NOTE_EQ &&
      !mbs_loopUseRows(m, m->opt.solver) && rank == 0 && !cli.quiet)
    fprintf(
        stderr,
        "mbspar: note: solver.method = %s on this model with %d closure equations (%d zero "
        "rows need no solve) runs %d tree solves per evaluation, each to tol %g; aba, direct or "
        "schur solve it exactly and much faster; solver.loops = \"rows\" solves the closure "
        "equations with the joints' in one solve (docs/loops.md 8)\n",
        st->name, m->nlam_loop, m->loop_asm.nskip, m->nlam_loop - m->loop_asm.nskip + 2,
        m->opt.tol);
  // auto chose a serial method at several ranks: rank 0 runs the verb alone (a communicator of
  // its own: no per-step collectives), the other ranks wait asleep, leaving it their cores; or a
  // distributed method where ranks share cores: the ranks of `sub` run it, the others wait
  if (!e && (cfg->sauto.idle || split)) {
    mbspComm *self = NULL;
    e = mbsp_agreeErr(comm, mbsp_relayBegin(comm)); // a waiting rank's signal reaches rank 0
    // run with CSV outputs: rank 1 formats rank 0's trajectory rows while rank 0 computes on
    // (fmtoff.h; MBSPAR_FMT_RANK=0 turns it off, for measurements)
    const char *fenv = getenv("MBSPAR_FMT_RANK");
    double fon = cfg->sauto.idle && cli.verb->run == mbsp_verbRun &&
                 cfg->out_format == MBS_OUTFMT_CSV && !(fenv && strcmp(fenv, "0") == 0);
    if (!e) e = mbsp_agreeErr(comm, mbsp_allreduceMin(comm, &fon, 1)); // the same on every rank
    if (!e) e = mbsp_agreeErr(comm, mbsp_fmtBegin(comm, fon > 0));
    if (!e && cfg->sauto.idle && rank == 0) e = mbsp_commIdle(comm, &self);
    mbspComm *vcomm = self ? self : sub;
    if (!e && vcomm)
      e = m && m->nflex_g ? mbsp_flexVerb(&cli, vcomm, cfg, m) : cli.verb->run(&cli, vcomm, cfg, m);
    mbsp_commFree(&self);
    mbsp_fmtDrain(); // rank 0: nothing of it left in flight, also after a failure
    e = mbsp_agreeErrIdle(comm, e, mbsp_simPendingSignal);
    mbsp_fmtEnd();
    mbsp_relayEnd();
  } else if (!e) {
    mbsp_loopsLocalTry(ltry); // the verb checks q0 and qd0 on the distributed loop model
    e = m && m->nflex_g ? mbsp_flexVerb(&cli, comm, cfg, m) : cli.verb->run(&cli, comm, cfg, m);
    if (ltry && e == MBS_ERR_UNSUPPORTED && mbsp_loopsLocalRejected()) {
      // off the loops: the model whole (memory check, assembly of q0) and the verb again, the
      // replicated run of before (loops_local.h)
      mbsp_loopsLocalTry(0);
      mbs_modelDestroy(&m);
      e = mbsp_memCheck(comm, cfg, cli.verb->name, 0);
      if (!e) e = mbsp_agreeErr(comm, mbs_configBuildModel(cfg, &m));
      if (!e) e = cli.verb->run(&cli, comm, cfg, m);
    }
  }
  // loop models without solver.method solved with aba (docs/loops.md): say so once, after a
  // successful verb (an error stays the only line on stderr)
  if (!e && rank == 0 && cfg->loop_default_aba && !cli.quiet && m && m->nflex_g)
    fprintf(stderr,
            "mbspar: note: solver.method = aba for this model with closed loops and "
            "flexible bodies: the dense oracle with the loops' rows (docs/flexible.md 15)\n");
  else if (!e && rank == 0 && cfg->loop_default_aba && !cli.quiet)
    fprintf(stderr,
            "mbspar: note: solver.method = aba for this model with %s (the default for such "
            "models: the serial baseline, exact and the fastest at one rank; docs/loops.md 8)\n",
            m->nloop ? "closed loops" : "spring-dampers");

  if (e && rank == 0) mbs_printError();
  mbsp_commFree(&sub);
  mbs_modelDestroy(&m);
  mbs_configDestroy(&cfg);
  free(text);
  mbsp_cliFree(&cli);
  mbsp_petscLogEnd();
  mbsp_petscFinalize();
  mbsp_finalize(&comm);
  return mbs_errExitCode(e);
}
