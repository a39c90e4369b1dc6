/// \file petsc_log.h
/// mbspar's phases as PETSc log events and stages, so `-log_view` (and every other PETSc
/// profiling option) shows them. Private to the parallel layer; no PETSc types leak out.
#ifndef MBSP_PETSC_LOG_H
#define MBSP_PETSC_LOG_H

#include "mbspar/mbs_error.h"

/// After PetscInitialize: when PETSc logging is active (-log_view, -log_summary, ...) register one
/// log event per phase timer (mbs_timer.h: mbsEval, mbsPosition, mbsVelocity, mbsAssembly,
/// mbsFactor, mbsSolve, mbsLocalSolve, mbsAccel, mbsHalo, mbsAllreduce, mbsPrefix, mbsInterface,
/// mbsStep, mbsOutput), hook them to MBS_TIC/MBS_TOC and push a stage named "mbspar VERB". Does
/// nothing without logging or without PETSc. Collective (event registration is).
mbsErr mbsp_petscLogBegin(const char *verb);
/// Pop the stage and remove the hook (before PetscFinalize, which prints -log_view). Collective.
void mbsp_petscLogEnd(void);

#endif
