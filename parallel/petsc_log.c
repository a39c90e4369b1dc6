/// \file petsc_log.c
/// mbspar's phase timers as PETSc log events (`-log_view`). Every MBS_TIC/MBS_TOC of the engine,
/// the solvers and the driver (mbs_timer.h) also begins/ends the PETSc event of the same phase
/// through the timer hook, so PETSc's profiling tables list the position, velocity, assembly,
/// solve, halo, allreduce ... phases separately instead of one lump, with PETSc's own min/max
/// over ranks. No communication of its own: event registration happens once at start-up on
/// every rank; PETSc's -log_view reduces the numbers at PetscFinalize. Trade-off: the hook costs
/// one indirect call per tic/toc, so it is installed only when PETSc logging is active.
#include "petsc_log.h"
#ifdef MBS_HAVE_PETSC
#include <petscsys.h>
#include <stdio.h>
#include "petsc_private.h"
#include "mbspar/mbs_timer.h"

static PetscLogEvent mbsp_log_event[MBS_TIMER_COUNT];
static PetscLogStage mbsp_log_stage;
static int mbsp_log_on;

// the PETSc event names of the timer ids (mbs_timer.h order)
static const char *const mbsp_log_name[] = {
    "mbsEval",      "mbsPosition",   "mbsVelocity",  "mbsAssembly", "mbsFactor",
    "mbsSolve",     "mbsLocalSolve", "mbsAccel",     "mbsLoops",    "mbsHalo",
    "mbsAllreduce", "mbsPrefix",     "mbsInterface", "mbsStep",     "mbsOutput"};

_Static_assert(sizeof mbsp_log_name / sizeof mbsp_log_name[0] == MBS_TIMER_COUNT,
               "one PETSc event name per timer of MBS_TIMER_LIST");

static void mbsp_logHook(int id, int begin) {
  if (id < 0 || id >= MBS_TIMER_COUNT) return;
  if (begin)
    (void)PetscLogEventBegin(mbsp_log_event[id], 0, 0, 0, 0);
  else
    (void)PetscLogEventEnd(mbsp_log_event[id], 0, 0, 0, 0);
}

mbsErr mbsp_petscLogBegin(const char *verb) {
  PetscBool active = PETSC_FALSE;
  MBS_CALL_PETSC(PetscLogIsActive(&active));
  if (!active || mbsp_log_on) return MBS_OK;
  PetscClassId cls;
  MBS_CALL_PETSC(PetscClassIdRegister("mbspar", &cls));
  for (int k = 0; k < MBS_TIMER_COUNT; k++)
    MBS_CALL_PETSC(PetscLogEventRegister(mbsp_log_name[k], cls, &mbsp_log_event[k]));
  char name[64];
  snprintf(name, sizeof name, "mbspar %s", verb ? verb : "");
  MBS_CALL_PETSC(PetscLogStageRegister(name, &mbsp_log_stage));
  MBS_CALL_PETSC(PetscLogStagePush(mbsp_log_stage));
  mbs_timerSetHook(mbsp_logHook);
  mbsp_log_on = 1;
  return MBS_OK;
}

void mbsp_petscLogEnd(void) {
  if (!mbsp_log_on) return;
  mbs_timerSetHook(NULL);
  (void)PetscLogStagePop();
  mbsp_log_on = 0;
}

#else
mbsErr mbsp_petscLogBegin(const char *verb) {
  (void)verb;
  return MBS_OK;
}
void mbsp_petscLogEnd(void) {}
#endif
