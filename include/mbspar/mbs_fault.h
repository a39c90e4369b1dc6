/// \file mbs_fault.h
/// Fault injection for tests (issue 12): makes the n-th write, allocation or evaluation result on
/// rank r fail, so that tests reach every failure path (docs/hardening.md "Fault injection").
///
///   MBS_FAULT="KIND:N[+][@RANK][,KIND:N[+][@RANK]...]"
///     KIND  alloc  the N-th allocation of mbspar's own code (malloc, calloc, realloc: the mbspar
///                  binary wraps them at link time; MPI, PETSc, HDF5 and libconfig allocate
///                  through their own, unwrapped references) returns NULL with errno ENOMEM;
///           write  the N-th checked output operation (a row, a file open, a close, a rename,
///                  an HDF5 call ...: each place that tests the result of a write) fails as
///                  if the disk were full;
///           nan    the N-th check of an evaluation's results (q̈, λ, energies) finds a NaN in the
///                  first entry it checks on this rank;
///     N     counts from 1, per kind and per rank; "N+" fails the N-th and every later point of
///           that kind (a disk that stays full);
///     RANK  the MPI rank (default: every rank).
///   MBS_FAULT_LOG=PREFIX  at exit every rank writes PREFIX.RANK: one line per kind with the
///           number of points passed ("count KIND N"), then one line per distinct point in the
///           order first reached ("site KIND INDEX LABEL PHASE": INDEX is the value of N that
///           fails it first, LABEL the source location or, for allocations and NaN checks, the
///           caller's address relative to the binary (for addr2line), PHASE the number of
///           agreements of the ranks before it), the agreements ("count phase N") and the marks
///           ("mark NAME ALLOC WRITE NAN": the counts when the verb started). Tests count in a
///           dry run, then inject.
///
/// Without MBS_FAULT and MBS_FAULT_LOG every point costs one test of a flag. Counting starts when
/// the parallel layer names the rank (mbs_faultSetRank, called by mbsp_init); before that no
/// point fails.
#ifndef MBS_FAULT_H
#define MBS_FAULT_H

typedef enum { MBS_FAULT_ALLOC = 0, MBS_FAULT_WRITE, MBS_FAULT_NAN, MBS_FAULT_NKIND } mbsFaultKind;

/// Read MBS_FAULT / MBS_FAULT_LOG and start counting on rank \p rank. Local.
void mbs_faultSetRank(int rank);

/// Pass one fault point of \p kind; returns 1 if it must fail. \p key identifies the point (a
/// string literal "file:line", or for allocations the caller's address), \p label names it in
/// the log (NULL: the address \p key). Thread-safe. Local.
int mbs_faultHit(mbsFaultKind kind, const void *key, const char *label);

/// Count one agreement of the ranks (mbsp_agreeErr): the log records for each point how many
/// agreements came before it, so tests can pick one point per stretch between agreements. Local.
void mbs_faultPhase(void);

/// Record in the log the counts reached at a named moment (e.g. "verb": the verb starts; points
/// before it are the common setup of every verb). Local.
void mbs_faultMark(const char *name);

/// 1 while fault injection or counting is on (MBS_FAULT or MBS_FAULT_LOG set). Local.
int mbs_faultActive(void);

#define MBS_FAULT_STR2_(x) #x
#define MBS_FAULT_STR_(x)  MBS_FAULT_STR2_(x)
#define MBS_FAULT_HERE_    __FILE__ ":" MBS_FAULT_STR_(__LINE__)

/// A write point: 1 if the output operation checked here must be treated as failed.
#define MBS_FAULT_WRITE_POINT() mbs_faultHit(MBS_FAULT_WRITE, MBS_FAULT_HERE_, MBS_FAULT_HERE_)
/// A NaN point: 1 if the results checked here must be treated as non-finite.
#define MBS_FAULT_NAN_POINT() mbs_faultHit(MBS_FAULT_NAN, MBS_FAULT_HERE_, MBS_FAULT_HERE_)

#endif
