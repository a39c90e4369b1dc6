/// \file mbs_solverlist.h
/// The rows of the solver table (docs/code.md "Adding a solver"): one line per value of
/// solver.method. From this list are generated the method ids MBS_SOLVER_* (mbs_solver.h), the
/// core's table with the declarations of its rows (src/solver.c) and the parallel layer's
/// registrations (parallel/solvers.c). A solver is its file(s) plus one line here.
///
///   CORE(ID, NUMBER, ROW): a solver of the serial core (src/, no MPI): the constant
///       `const mbsSolverType ROW = {...}` in its file, in every program's table statically;
///   PAR(ID, NUMBER, ROW): a solver of the parallel layer (parallel/): its row, registered by
///       mbsp_init (mbsp_solversRegister).
///
/// ID makes the method id MBS_SOLVER_ID; NUMBER is its value, stable because checkpoints store it:
/// never renumbered or reused, the lines in increasing NUMBER from 0 without gaps (src/solver.c
/// checks it when compiling). The order is the order the names are listed in.
#ifndef MBS_SOLVERLIST_H
#define MBS_SOLVERLIST_H

// clang-format off
#define MBS_SOLVERS(CORE, PAR)                                                                     \
  CORE(ABA,       0, mbs_solverAba)       /* serial baseline: ABA (src/aba.c)                 */   \
  CORE(CRBA,      1, mbs_solverCrba)      /* serial baseline: CRBA + LDL^T (src/dynamics.c)   */   \
  CORE(JACOBI,    2, mbs_solverJacobi)    /* src/solver_jacobi.c                              */   \
  CORE(GS,        3, mbs_solverGs)        /* src/solver_sor.c (omega = 1)                     */   \
  CORE(SOR,       4, mbs_solverSor)       /* src/solver_sor.c                                 */   \
  CORE(CHEBYSHEV, 5, mbs_solverChebyshev) /* src/solver_chebyshev.c                           */   \
  CORE(JCG,       6, mbs_solverJcg)       /* src/solver_jcg.c                                 */   \
  CORE(DIRECT,    7, mbs_solverDirect)    /* src/solver_direct.c (one rank)                   */   \
  PAR(PETSC,      8, mbsp_solverPetsc)    /* parallel/petsc_ref.c                             */   \
  PAR(SCHUR,      9, mbsp_solverSchur)    /* parallel/schur_par.c (+ src/schur/)              */   \
  CORE(NATURAL,  10, mbs_solverNatural)   /* model.formulation = natural (src/natural_tree.c) */
// clang-format on

/// For a column of MBS_SOLVERS that a use leaves out.
#define MBS_SOLVERS_SKIP(ID, NUMBER, ROW)

#endif
