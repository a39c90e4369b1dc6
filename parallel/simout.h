/// \file simout.h
/// `mbspar run`'s output files: energy.csv (every format) and the trajectory writer of
/// output.format, one row of mbsp_writers[] per format (docs/code.md "How to add an output
/// format"). sim.c calls the mbsp_out* functions and never names a format.
///
/// A writer's functions are called on every rank; "rank 0" ones only act there, "collective"
/// ones agree their errors on every rank. The CSV writer is sim_csv.c, the HDF5+XDMF writer
/// sim_h5w.c; the CSV file helpers (whole rows per write, restart truncation) are sim_csv.c's.
#ifndef MBSP_SIMOUT_H
#define MBSP_SIMOUT_H
#include <stdio.h>
#include <sys/types.h>
#include "bodyout.h"
#include "mbspar/mbs_parallel.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_model.h"

/// what a writer is given: the run's model, communicator, directory, options and its slices
typedef struct {
  const mbsModel *m;
  const mbsConfig *cfg;
  mbspComm *comm;
  int rank;
  const char *dir;
  mbspBodyOut *bo; // per-body outputs of the owned bodies
  int q0, nqo, v0, nvo;
} mbspOutEnv;

/// one output row as every rank sees it: the owned slices (every rank) and, on rank 0, the
/// gathered state, the gathered pose rows (if the writer asked for them) and the energies
typedef struct {
  double t;
  const double *q_own, *qd_own;
  const double *q, *qd, *poses; // rank 0
  const double *en;             // kinetic, potential, total, work (rank 0)
  double avg;                   // average iterations per evaluation since the last row
} mbspOutRow;

typedef struct mbspWriter mbspWriter; // a writer's own state (its .c file)

/// one output format: its files and its functions (a row of mbsp_writers[])
typedef struct {
  mbsOutFormat format;
  const char *summary;      ///< its files for the run's summary line
  const char *const *files; ///< its files in DIR, NULL-terminated (clobber checks)
  int gather_poses;         ///< rank 0 needs the pose rows of every body
  int joint_wrench;         ///< the rows hold the joint wrenches if output.joint_wrench
  mbsErr (*create)(const mbspOutEnv *env, mbspWriter **w); ///< allocate (every rank, local)
  /// --restart, rank 0, read-only, before the energy.csv checks: *why if its files are another
  /// model's (NULL: no such check)
  void (*check_head)(mbspWriter *w, const char **why);
  /// --restart, rank 0, read-only, after the energy.csv checks: an error if its files cannot be
  /// continued by this model (NULL: no such check)
  mbsErr (*check_file)(mbspWriter *w);
  /// --restart, rank 0: cut its files back to the \p nkeep rows kept in energy.csv (-1: there
  /// is no energy.csv) at the checkpoint's \p step (NULL: the writer cuts them in open)
  mbsErr (*truncate)(mbspWriter *w, long step, long nkeep);
  /// open or continue (\p append) its files at step \p step, time \p t (collective)
  mbsErr (*open)(mbspWriter *w, int append, long step, double t);
  /// rank 0: does one more row fit the buffers; pass the buffered rows on (NULL: unbuffered)
  int (*room)(const mbspWriter *w);
  void (*pass)(mbspWriter *w);
  /// rank 0: the row to its buffers, before the errors are agreed (NULL: none); an error stays
  /// in the stream until check
  void (*row0)(mbspWriter *w, const mbspOutRow *r);
  /// rank 0, rows formatted by another rank (fmtoff.h; NULL: the writer cannot): the row as
  /// the values of its text ("%.17g" each, commas, a newline) into \p dst (NULL: only their
  /// number, returned), and the text into its buffers in place of row0
  long (*rowpack)(const mbspWriter *w, const mbspOutRow *r, double *dst);
  void (*rowtext)(mbspWriter *w, const char *text, size_t len);
  int (*failed)(const mbspWriter *w);                ///< rank 0: did a write fail (NULL: never)
  mbsErr (*row)(mbspWriter *w, const mbspOutRow *r); ///< the collective part of a row (or NULL)
  /// every row so far to the file (\p sync: to the disk) (rank 0 part; before the collective)
  mbsErr (*flush0)(mbspWriter *w, int sync);
  mbsErr (*flush)(mbspWriter *w); ///< the collective part of a flush (or NULL)
  /// close the files after a run or an error (collective); close0: rank 0's part, after it
  mbsErr (*close)(mbspWriter *w);
  mbsErr (*close0)(mbspWriter *w);
  void (*destroy)(mbspWriter **w); ///< free (every rank, after close)
} mbspWriterOps;

/// the writer of \p fmt (NULL: not in the table)
const mbspWriterOps *mbsp_writerOps(mbsOutFormat fmt);
/// every output file name of every format and of the run (NULL-terminated, static)
const char *const *mbsp_outFileNames(void);

// ---- a CSV file of rank 0 whose rows reach the file whole (sim_csv.c)
typedef struct {
  FILE *f;
  const char *name; // in the run's directory
  char *buf;        // our stdio buffer: capacity, the longest row, the file position written
  size_t cap, rowmax;
  long done;
} mbspCsv;

/// the longest CSV row of \p nfield fields
size_t mbsp_csvRowMax(long nfield);
/// give c->f (just opened) a fully buffered stdio buffer for rows of \p nfield fields
mbsErr mbsp_csvBuffer(mbspCsv *c, long nfield);
/// does one more row fit into the buffer (else stdio would write a part of it)?
int mbsp_csvRoom(const mbspCsv *c);
/// pass the buffered (whole) rows to the file; an error stays in ferror
void mbsp_csvPass(mbspCsv *c);
/// the rows to the file (\p sync: to the disk, fsync)
mbsErr mbsp_csvSync(mbspCsv *c, int sync, const char *dir);
/// fclose and free the buffer
void mbsp_csvClose(mbspCsv *c);
/// a complete CSV line (a newline, \p nfield fields); the \p k-th field of a line into buf
int mbsp_csvComplete(const char *line, ssize_t n, int nfield);
void mbsp_csvField(const char *line, int k, char *buf, size_t n);
/// --restart: cut a CSV file back to the checkpoint's step (see sim_csv.c)
mbsErr mbsp_csvTruncate(const char *path, long *nkeep, int nfield, long step, char **times,
                        long ntimes);
/// the t column of the first \p nrow rows of energy.csv (malloc'ed strings)
mbsErr mbsp_csvEnergyTimes(const char *path, long nrow, char ***times);
/// the first line of \p path into \p buf (empty if the file is absent or empty)
void mbsp_csvFirstLine(const char *path, char **buf, size_t *cap);

// ---- the run's outputs (sim_out.c): energy.csv and the writer of output.format
typedef struct {
  const mbspWriterOps *ops;
  mbspWriter *w;
  mbspOutEnv env;
  mbspCsv energy; // rank 0
  double *poses;  // rank 0, if the writer gathers them: nbody x MBS_POSE_NCOMP
  // rank 0, the writer's rows formatted by another rank (fmtoff.h): each row reaches the files
  // when the next one is sent, or at a flush or the close
  int off, pend; // offloading; a row is out (its energy.csv line waits in en_line)
  long offn;     // values per row
  long offp;     // rank 0 formats the first offp of them itself (grown while it waits)
  int offfix;    // offp fixed (MBSPAR_FMT_SPLIT)
  long offsent;  // the row that is out: rank 1 formats its values from this one on
  int nwin;      // rows in the current window of rank 0's CPU/wall check (mbsp_outShared)
  double cpu0, wall0;
  double *offrow; // the row's values
  char *pre;      // the text of rank 0's part of the row that is out (fields and commas)
  size_t prelen;
  char *en_line; // its energy.csv line
  size_t en_cap;
  double pend_t; // its time (for an error message)
} mbspOut;

/// set up the outputs of format output.format (every rank; local failures, agree them)
mbsErr mbsp_outCreate(mbspOut *o, const mbspOutEnv *env);
/// the summary's list of the trajectory files
const char *mbsp_outSummary(const mbspOut *o);
/// --restart, rank 0, read-only: are the files in the directory this model's? The energy.csv
/// row at the checkpoint's \p step must start with \p row; *why, *what: the reason if not
mbsErr mbsp_outCheckRoot(mbspOut *o, long step, const char *row, const char **why, char *what,
                         size_t nwhat);
/// open (or, \p append, continue from step \p step, time \p t) every file (collective)
mbsErr mbsp_outOpen(mbspOut *o, int append, long step, double t);
/// one row: \p r's rank-0 fields; \p step, \p evals, \p loopviol (NULL: no loops) for
/// energy.csv. Collective.
mbsErr mbsp_outRow(mbspOut *o, const mbspOutRow *r, long step, long evals, const double *loopviol,
                   const double *drive);
/// every row so far to the files (\p sync: to the disk): rank 0's part, then the collective one
mbsErr mbsp_outFlush0(mbspOut *o, int sync);
mbsErr mbsp_outFlush(mbspOut *o);
/// the last rows to the disk and the files closed (also after an error; collective)
mbsErr mbsp_outClose(mbspOut *o, mbsErr *e_collective);
void mbsp_outDestroy(mbspOut *o);

#endif
