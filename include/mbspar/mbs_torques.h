/// \file mbs_torques.h
/// Joint forces over time for a URDF robot (`model.urdf.torques`, docs/urdf.md): a CSV file
/// whose header is `t` and then URDF joint names (revolute, continuous, prismatic joints), one
/// row per sample time; an `inverse.csv` of the robot serves as it is (its `tau_LINK` columns
/// name the joint moving LINK, its q_*, qd_*, qdd_* columns are skipped). Between samples the
/// forces are interpolated linearly; before the first and after the last sample they keep the first
/// / last row's values. They are added to the model's own joint forces (constant force, spring,
/// damper) through the state's tau.
#ifndef MBS_TORQUES_H
#define MBS_TORQUES_H

#include "mbs_model.h"
#include "mbs_urdf.h"

typedef struct {
  char *file;   ///< the file name (messages, reports)
  int ns;       ///< samples (rows)
  int ncol;     ///< joint columns
  mbsReal *t;   ///< (ns) strictly increasing times
  mbsReal *val; ///< (ns x ncol) joint forces, N·m or N
  char **joint; ///< (ncol) URDF joint names
  char **link;  ///< (ncol) their child links: the mbspar bodies the forces act on
  int nfield;   ///< fields per row (t, the joint columns, skipped columns)
  int *fcol;    ///< (nfield) joint column of each field, -1: t or skipped
} mbsTorques;

/// Read the table from \p len bytes of CSV \p text (file \p filename) for robot \p u. Blank
/// lines and lines starting with '#' are skipped. Errors: MBS_ERR_INPUT "FILE:LINE: message"
/// (no `t` column first, a column that names no joint of the robot, a fixed or floating joint,
/// a column twice, a field that is not a finite number, a ragged row, times not increasing, no
/// row, a NUL byte). Local.
mbsErr mbs_torquesRead(const mbsUrdf *u, const char *text, size_t len, const char *filename,
                       mbsTorques **tq);

/// Write the joint forces at time \p t into tau (nv of \p m; only the dofs of the table's joints
/// are written, each column's body found by name: bodies \p m does not hold are skipped). No
/// allocation. Local.
void mbs_torquesAt(const mbsTorques *tq, const mbsModel *m, double t, mbsReal *tau);

/// Free and NULL (NULL is a no-op).
void mbs_torquesDestroy(mbsTorques **tq);

#endif
