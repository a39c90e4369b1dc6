/// \file mbs_config.h
/// The input file: one parser for the libconfig (.cfg) text of a run, with `--set KEY=VALUE`
/// overrides, strict checking (unknown keys, wrong types and bad values are errors that carry
/// "FILE:LINE: " or "--set KEY=VALUE: ") and defaults for every key. docs/model.md documents
/// every key.
///
/// Use: rank 0 reads the file and broadcasts its bytes (mbsp_bcastFile); every rank then calls
///   mbs_configParse(text, path, sets, nsets, &cfg)   -> resolved options in *cfg
///   mbs_configBuildModel(cfg, &m)                    -> the finalized model (opt, gravity filled)
///   mbs_configWriteJson(cfg, j)                      -> the resolved parameters as JSON
///   mbs_configDestroy(&cfg)
/// All functions are Local: they never communicate, so every rank that parses the same text with
/// the same overrides gets the same result and the same error.
#ifndef MBS_CONFIG_H
#define MBS_CONFIG_H

#include <stdio.h>
#include "mbs_drive.h"
#include "mbs_error.h"
#include "mbs_model.h"
#include "mbs_report.h"
#include "mbs_static.h"
#include "mbs_torques.h"
#include "mbs_urdf.h"

/// One entry of model.urdf.joints: forces on a URDF joint named by its URDF name (docs/urdf.md),
/// applied to the body of its child link; the keys given replace the file's (damping).
typedef struct {
  const char *name;     ///< the URDF joint (owned by cfg->urdf)
  const char *link;     ///< the joint's child link (owned by cfg->urdf)
  int nv;               ///< the joint's degrees of freedom (1, or 6 floating)
  int given;            ///< MBS_UJF_* bits: the keys given
  mbsReal force[6];     ///< constant joint force per dof
  mbsReal stiffness[6]; ///< joint spring per dof (scalar joints)
  mbsReal springref[6]; ///< spring rest position per dof
  mbsReal damping[6];   ///< viscous damping per dof
} mbsUrdfJointForce;
enum { MBS_UJF_FORCE = 1, MBS_UJF_STIFFNESS = 2, MBS_UJF_SPRINGREF = 4, MBS_UJF_DAMPING = 8 };

/// Output file format (output.format).
typedef enum { MBS_OUTFMT_CSV = 0, MBS_OUTFMT_HDF5 = 1 } mbsOutFormat;

/// The prescribed motion of `mbspar inverse` (config group `inverse`, seed 003 eq. 15):
/// theta(t) = theta0 + (thetaT - theta0)/T * [t - T/(2 pi) sin(2 pi t / T)] for every coordinate of
/// a scalar-coordinate joint (revolute, prismatic, cylindrical, universal), sampled at
/// t = k T / steps, k = 0..steps. Other joints stay at q0 with zero velocity.
typedef struct {
  int present;      ///< the config has an `inverse` group
  mbsReal T;        ///< duration of the motion [s] (default 1)
  int steps;        ///< number of intervals; steps + 1 samples (default 100)
  int degrees;      ///< angle_unit = "deg": rotation coordinates of q_start/q_end in degrees
  int nstart, nend; ///< number of values given in q_start / q_end (0 = default to q0)
  mbsReal *q_start; ///< (nstart) as given (1 value = broadcast)
  mbsReal *q_end;   ///< (nend) as given (1 value = broadcast)
  char *motion;     ///< inverse.motion: a CSV of t and q (mbs_motion.h) instead of the profile,
                    ///< resolved against the config's directory (NULL: the profile)
  int motion_line;  ///< line of inverse.motion in the config
  char **actuated;  ///< (nactuated) inverse.actuated: bodies whose joints are driven (loop
                    ///< models: the others follow from the loops, docs/loops.md)
  int nactuated;
} mbsInverseSpec;

/// The `cpa` group: the cost model of `mbspar cpa` (docs/cpa.md); defaults if absent.
typedef struct {
  mbsReal latency;   ///< message latency alpha [s] (default 1.5e-6)
  mbsReal bandwidth; ///< message bandwidth [bytes/s] (default 5e9)
  mbsReal flop_time; ///< seconds per flop (default 1e-9)
} mbsCpaSpec;

/// solver.method = "auto" (the default; docs/model.md "Choosing the method"): the method chosen
/// before the first evaluation by the critical-path analyser's cost model (src/solver_auto.c,
/// parallel/solver_auto.c) and what the model predicted.
#define MBS_AUTO_MAXCAND 4
typedef struct {
  int on;                        ///< 1: solver.method = "auto" or not given
  int decided;                   ///< 1: mbsp_solverAuto chose cfg->opt.solver
  const char *rule;              ///< "model", "loops" (closed loops, spring-dampers: aba), "size"
  int ranks, threads, cores;     ///< the job the prediction is for (cores: of the busiest node)
  double slow;                   ///< compute slowdown of ranks sharing cores (>= 1)
  int ncand;                     ///< methods predicted
  int cand[MBS_AUTO_MAXCAND];    ///< their ids
  double pred[MBS_AUTO_MAXCAND]; ///< predicted seconds per evaluation
  int idle;                      ///< a serial method at several ranks: rank 0 runs, others wait
  int active;                    ///< > 0: ranks share cores and the distributed method runs on
                                 ///< this many of them (one per core), the others wait
  int mine;                      ///< local: this rank is one of those \p active
  int job;                       ///< the job's ranks
} mbsSolverAuto;

/// Resolved configuration. The libconfig tree itself is private.
typedef struct mbsConfig {
  char *filename;           ///< the name used in messages ("FILE" of "FILE:LINE: ")
  mbsOption opt;            ///< solver.* and integrator.* with defaults applied
  mbsReal gravity[3];       ///< model.gravity [m/s^2] in the ground frame (default [0, 0, -9.81])
  char *out_dir;            ///< output.dir (default "out")
  int out_every;            ///< output.every: write every k-th step (default 1)
  int out_checkpoint_every; ///< output.checkpoint_every: steps between checkpoints, 0 = never
  int out_format;           ///< output.format: mbsOutFormat (default csv)
  int out_joint_wrench;     ///< output.joint_wrench: HDF5 rows hold joint wrenches (default 1)
  double out_flush_sec;     ///< output.flush_every in seconds of wall-clock time (default 1;
                            ///< 0: after every row); unused when out_flush_rows > 0
  int out_flush_rows;       ///< output.flush_every = "N rows": after every N-th row (0: by time)
  mbsInverseSpec inverse;   ///< the `inverse` group
  mbsDriveSpec *drives;     ///< (ndrive) the top-level list `drive`: driven joints of `run`
  int ndrive;
  mbsStaticOpt statics;    ///< the `static` group (the `static` verb; defaults if absent)
  mbsCpaSpec cpa;          ///< the `cpa` group (the `cpa` verb's cost model)
  char *urdf_path;         ///< model.urdf: the URDF file, relative to the config's directory
                           ///< resolved (NULL: none); its text comes with mbs_configSetUrdf
  int urdf_line;           ///< line of model.urdf in the config
  mbsUrdf *urdf;           ///< the parsed URDF robot (after mbs_configSetUrdf)
  int nurdf_q0, nurdf_qd0; ///< values given in model.urdf.q0 / qd0 (0: defaults)
  mbsReal *urdf_q0, *urdf_qd0;
  mbsUrdfJointForce *urdf_jf; ///< (nurdf_jf) model.urdf.joints, resolved by mbs_configSetUrdf
  int nurdf_jf;
  char *urdf_torques;    ///< model.urdf.torques: the CSV file resolved (NULL: none); its text
                         ///< comes with mbs_configSetTorques
  int urdf_torques_line; ///< line of model.urdf.torques in the config
  mbsTorques *torques;   ///< the table (after mbs_configSetTorques)
  int nloops, nforces;   ///< entries of model.loops and model.forces (checked when building)
  int natural_over;      ///< model.formulation = natural replaced this solver.method + 1 (0: none);
                         ///< main.c notes it, with the line natural_over_line
  int natural_over_line;
  int loop_default_aba; ///< solver.method was not given and the model has loops or forces: aba
  mbsSolverAuto sauto;  ///< solver.method = "auto": the choice (parallel/solver_auto.c)
  int nset;             ///< number of --set overrides applied
  char **sets;          ///< (nset) the overrides "KEY=VALUE" as given
  void *priv;           ///< private: the libconfig tree after the overrides
} mbsConfig;

/// One key of the option groups (solver, integrator, output, inverse, static, cpa), as `mbspar help
/// config` prints it: made from the group's descriptor table (src/config_opts.c).
typedef struct {
  char key[64];     ///< "group.key"
  char type[16];    ///< real, int, enum, bool, vec2, string, text
  char range[256];  ///< the accepted values, e.g. "(0, 2)", "csv|hdf5", ">= 1"
  char def[64];     ///< the default, as a --set value ("none": no value)
  char sample[64];  ///< a value the reader accepts (the default, or an example)
  const char *help; ///< one line
} mbsConfigKeyInfo;

/// The number of keys of the option groups; with 0 <= k < that number, fills *info with the k-th
/// (info may be NULL). Local, no allocation but a temporary default config.
int mbs_configKeyInfo(int k, mbsConfigKeyInfo *info);

/// 1 if \p a and \p b agree on every key of the solver group that a bound solver reads: the rows
/// of its descriptor table (src/config_opts.c) without no_equal (the loop layer's keys, read
/// from the model at each evaluation). mbs_solverBind re-creates the bound solver when they do
/// not. Local.
int mbs_configSolverOptEqual(const mbsOption *a, const mbsOption *b);

/// `mbspar help config`: every key of the option groups, one line each (key, type, range,
/// default, help). Local.
void mbs_configHelp(FILE *f);

/// Parse the text of a config file and apply `--set KEY=VALUE` overrides. Checks syntax, unknown
/// keys (at every level, model included), value types, array lengths and every option value.
/// The model itself is validated by mbs_configBuildModel. Local.
/// \param[in] text      NUL-terminated file contents
/// \param[in] filename  name for messages
/// \param[in] sets      (nsets) overrides "group.key=value"; value in libconfig syntax, a bare
///                      word is a string; list elements by `name[i]`, e.g. model.bodies[0].mass=2
/// \param[out] cfg      the configuration (NULL on error)
/// \return MBS_OK; MBS_ERR_INPUT ("FILE:LINE: message") or MBS_ERR_USAGE (a bad --set:
///         "--set KEY=VALUE: message"); MBS_ERR_NOMEM.
mbsErr mbs_configParse(const char *text, const char *filename, const char *const *sets, int nsets,
                       mbsConfig **cfg);

/// Parse the URDF text of cfg->urdf_path (read by the caller: rank 0 reads, every rank gets
/// the bytes) into cfg->urdf and check model.urdf.q0 / qd0 against it. Errors: "FILE:LINE:
/// message" of the URDF file or of the config. Local.
mbsErr mbs_configSetUrdf(mbsConfig *cfg, const char *text, size_t len);
/// mbs_configSetUrdf of the text \p rd reads a piece at a time (\p len: the file's size;
/// mbs_urdfParseStream): nobody holds the whole text. Local.
mbsErr mbs_configSetUrdfStream(mbsConfig *cfg, mbsUrdfReadFn rd, void *ctx, size_t len);

/// Read the joint-force table of cfg->urdf_torques (after mbs_configSetUrdf; the caller reads
/// the file: rank 0 reads, every rank gets the bytes) into cfg->torques (mbs_torques.h). Errors:
/// "FILE:LINE: message" of the CSV file. Local.
mbsErr mbs_configSetTorques(mbsConfig *cfg, const char *text, size_t len);

/// Build and finalize the model the config describes (explicit bodies and chain/tree generators
/// in file order), with cfg->opt and cfg->gravity filled in. Local.
/// \return MBS_OK; MBS_ERR_INPUT with "FILE:LINE: message" naming the offending setting.
mbsErr mbs_configBuildModel(const mbsConfig *cfg, mbsModel **m);
/// Validate every body of the model without storing the bodies (names are kept to find
/// duplicates): the same errors as mbs_configBuildModel, O(#bodies) time, names only. Local.
mbsErr mbs_configValidate(const mbsConfig *cfg);
/// The local model of rank \p rank of \p nranks: the bodies it owns under mbs_partitionRuns,
/// their remote parents and their remote children, in global order (model.own0..own1 are the
/// owned ones, model.part_start the decomposition). Generators build only what is needed; errors
/// in bodies this rank does not hold are found by mbs_configValidate (call it on one rank). With
/// closed loops (no forces) every rank also holds the bodies of every loop (those neither owned nor
/// relatives of owned ones hang from a remote parent, -1 locally) and every loop with its sides'
/// global bodies, depths and nearest owned ancestors (mbs_modelTrackLoops; no assembly of q0: the
/// config's q0 is taken as it is). Local.
mbsErr mbs_configBuildLocal(const mbsConfig *cfg, int nranks, int rank, mbsModel **m);

/// Resolve the inverse motion for model \p m: start and end values of every position coordinate
/// (nq each). Coordinates of scalar-coordinate joints come from q_start / q_end (in radians after
/// conversion), all others from q0; for a model with loops and inverse.actuated the lists may
/// hold the actuated coordinates only. Local.
/// \return MBS_OK; MBS_ERR_INPUT ("FILE:LINE: ...") if a list length does not match the model.
mbsErr mbs_configInverse(const mbsConfig *cfg, const mbsModel *m, mbsReal *q_start, mbsReal *q_end);

/// inverse.actuated of a model with loops as dof flags: act[d] = 1 for the dofs of the named
/// bodies' joints (nv entries). MBS_ERR_INPUT ("FILE:LINE: ...") for unknown bodies, joints that
/// cannot follow a profile, actuated joints on a model without loops, or a loop model without
/// inverse.actuated. Local.
mbsErr mbs_configInverseActuated(const mbsConfig *cfg, const mbsModel *m, int *act);
/// The driven joints of the config's `drive` list on model \p m (a whole model): their dof and
/// position coordinate. MBS_ERR_INPUT with FILE:LINE for an unknown body or a joint that is not
/// revolute or prismatic.
mbsErr mbs_configDrives(const mbsConfig *cfg, const mbsModel *m, int *dof, int *qadr);

/// Number of coordinates the inverse motion prescribes: the sum of nq over joints with nq == nv
/// > 0 (revolute, prismatic, cylindrical, universal).
int mbs_configInverseCoords(const mbsModel *m);

/// Write every resolved parameter as members of the currently open JSON object (the caller opens
/// e.g. "config"): file, set, model (as written, gravity resolved), solver, integrator, output
/// and inverse with all defaults filled in. Local.
void mbs_configWriteJson(const mbsConfig *cfg, mbsJson *j);

/// Free and NULL (NULL is a no-op).
void mbs_configDestroy(mbsConfig **cfg);

/// Enum names used by the config (for reports).
const char *mbs_criterionName(int c);
const char *mbs_warmStartName(int w);
/// Name of a solver.interface value ("cr", "jcg").
const char *mbs_interfaceName(int i);
const char *mbs_integratorName(int i);
/// Name of a solver.loops value ("auto", "unit", "rows").
const char *mbs_loopModeName(int k);
const char *mbs_outFormatName(int f);

/// 1 if the dotted key (e.g. "solver.tol") was given in the file or by --set, else 0.
int mbs_configIsSet(const mbsConfig *cfg, const char *path);

/// Most bodies one model may have (chain n, tree sizes, and all generators and bodies together):
/// 32-bit indices of coordinates and constraint components stay below INT_MAX with room.
#define MBS_CFG_MAXBODIES 50000000

/// Smallest solver.tol and integrator.tol: relative residuals and errors below this are beyond
/// what double precision delivers (Gauss-Seidel stalls near 5e-15 on configs/tree.cfg; PETSc's
/// adaptive dp5 fails outright at 1e-300 and crawls below 1e-16).
#define MBS_CFG_MINTOL 1e-14

/// Most degrees of freedom for solver.method = crba (its dense nv x nv inertia: 17 GB at the
/// limit); the same limit as mbs_workEnableCrba in src/dynamics.c.
#define MBS_CFG_CRBA_MAXNV 46000

/// Most steps of a fixed-step integrator (euler, rk4): t_end / dt above this is refused (PETSc
/// counts steps in a 32-bit integer; 1e9 steps of even a one-body model take hours).
#define MBS_CFG_MAXSTEPS 1e9

/// Locate an error found after parsing (by the run, the engine, ...) at the setting \p path
/// (dotted, e.g. "integrator.t_end" or "model"): prefix the recorded message with
/// "--set KEY=VALUE" when that setting, or for an aggregate the last --set inside it, came
/// from the command line, else with "FILE:LINE" of the setting (or of its nearest ancestor in
/// the file). Local.
/// \return \p e, or MBS_ERR_USAGE for an MBS_ERR_INPUT blamed on a --set (both exit with 2)
mbsErr mbs_configBlame(const mbsConfig *cfg, const char *path, mbsErr e);

/// Count the bodies the model will have without building it: explicit bodies plus each
/// generator's size (a generator that is malformed or out of its own range counts 0 here:
/// mbs_configBuildModel reports it). Local.
/// \param[out] nbody    the count
/// \param[out] largest  (may be NULL) the setting behind the largest contribution, for messages
/// \return MBS_OK; MBS_ERR_INPUT/USAGE when all together exceed MBS_CFG_MAXBODIES.
mbsErr mbs_configCountBodies(const mbsConfig *cfg, long long *nbody, const void **largest);
/// 1 when a body of model.bodies has a `flexible` group (docs/flexible.md): such models are
/// built whole on every rank (parallel/flex_run.c).
int mbs_configHasFlexible(const mbsConfig *cfg);

/// What a model may cost on one host, for mbs_configCheckMemory.
typedef struct {
  double bytes_per_body; ///< per rank and body (the replicated model plus this rank's share)
  double bytes_fixed;    ///< per rank, independent of the model
  int ranks_here;        ///< ranks that share this host's memory
  double avail;          ///< bytes available on this host
  const char *what;      ///< what the estimate is for, e.g. "accel with jcg on 2 ranks"
  const char *source;    ///< where avail comes from, e.g. "MemAvailable in /proc/meminfo"
} mbsMemBudget;

/// Refuse, before anything is allocated for it, a model whose estimated memory on this host
/// (bodies x bytes_per_body + bytes_fixed, times ranks_here) exceeds b->avail: an input error
/// at the setting behind the largest part of the model (chain n, tree depth or parents, the
/// bodies list), or at the --set that gave it. Local.
/// \param[out] nbody  (may be NULL) the body count
/// \return MBS_OK; MBS_ERR_INPUT ("FILE:LINE: model too large for the memory here: ...") or
///         MBS_ERR_USAGE ("--set KEY=VALUE: ...").
mbsErr mbs_configCheckMemory(const mbsConfig *cfg, const mbsMemBudget *b, long long *nbody);

#endif
