/// \file mbspar.h
/// Umbrella header of the mbspar core library (C11, no MPI).
#ifndef MBSPAR_H
#define MBSPAR_H
#include "mbs_error.h"
#include "mbs_types.h"
#include "mbs_model.h"
#include "mbs_state.h"
#include "mbs_solver.h"
#include "mbs_timer.h"
#include "mbs_dynamics.h"
#endif
