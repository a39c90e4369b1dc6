/// \file config_private.h
/// Shared inside the config parser only (src/config*.c): the libconfig setting type, the typed
/// readers and messages (config_read.c), the option groups (config_opts.c), the model builders
/// (config_model.c) and the generators (config_gen.c). Not installed.
#ifndef MBS_CONFIG_PRIVATE_H
#define MBS_CONFIG_PRIVATE_H
#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_flex.h"
#include "mbspar/mbs_loops.h"
#include "mbspar/mbs_solver.h"
#include "mbspar/mbs_solvertype.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

typedef config_setting_t mbsCs;

typedef struct {
  mbsReal mass, com[3], inertia[6], length, dir[3];
  int has_mass, has_inertia, shape; // shape -1: none
  const mbsCs *inertia_src;         // the setting that determined the inertia
} mbsGeom;

typedef struct {
  int *gid;   // (n) explicit bodies with a tip, increasing
  mbsReal *p; // (n x 3)
  int n, cap;
  int *gbase, *gnum; // (ng) generators: bodies gbase .. gbase + gnum - 1
  mbsReal *gp;       // (ng x 3)
  int ng, gcap;
} mbsTips;

// record "FILE:LINE: msg" (or "--set K=V: msg") for setting s and return the code
mbsErr mbs_cfgFail(const mbsConfig *c, const mbsCs *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
char *mbs_strdup(const char *s);
// *out (freed first) = \p file resolved against the config's directory (absolute names kept)
mbsErr mbs_cfgResolve(const mbsConfig *c, const char *file, char **out);
void mbs_cfgPath(const mbsCs *s, char *buf, size_t n);
const char *mbs_cfgSetOf(const mbsCs *s);
int mbs_cfgLine(const mbsCs *s);
const char *mbs_cfgTypeName(const mbsCs *s);
int mbs_cfgIsList(const mbsCs *s);
mbsErr mbs_cfgCheckKeys(const mbsConfig *c, const mbsCs *g, const char *const *keys);
mbsErr mbs_cfgNumber(const mbsConfig *c, const mbsCs *s, mbsReal *v);
mbsErr mbs_cfgGetReal(const mbsConfig *c, const mbsCs *g, const char *key, mbsReal *v);
mbsErr mbs_cfgInt(const mbsConfig *c, const mbsCs *s, long long lo, long long hi, long long *v);
mbsErr mbs_cfgGetInt(const mbsConfig *c, const mbsCs *g, const char *key, int lo, int hi, int *v);
mbsErr mbs_cfgGetString(const mbsConfig *c, const mbsCs *g, const char *key, const char **v);
mbsErr mbs_cfgGetEnum(const mbsConfig *c, const mbsCs *g, const char *key, const char *const *names,
                      int *v);
mbsErr mbs_cfgGetVec(const mbsConfig *c, const mbsCs *g, const char *key, int n, mbsReal *v);
mbsErr mbs_cfgGetValues(const mbsConfig *c, const mbsCs *g, const char *key, mbsReal **v,
                        int *count);
mbsErr mbs_cfgGetGroup(const mbsConfig *c, const mbsCs *g, const char *key, const mbsCs **out);
mbsErr mbs_cfgPreprocess(const char *text, const char *filename, const char *set, char **out);
mbsErr mbs_cfgApplySet(config_t *tree, char *set);
mbsErr mbs_cfgReadSolver(mbsConfig *c, const mbsCs *root);
mbsErr mbs_cfgReadIntegrator(mbsConfig *c, const mbsCs *root);
mbsErr mbs_cfgReadOutput(mbsConfig *c, const mbsCs *root);
mbsErr mbs_cfgReadInverse(mbsConfig *c, const mbsCs *root);
mbsErr mbs_cfgReadStatic(mbsConfig *c, const mbsCs *root);
mbsErr mbs_cfgReadCpa(mbsConfig *c, const mbsCs *root);
mbsErr mbs_cfgReadDrives(mbsConfig *c, const mbsCs *root);
extern const char *const mbs_shape_names[];
void mbs_cfgUrdfForces(const mbsConfig *c, mbsModel *m);
mbsErr mbs_cfgReadGeom(const mbsConfig *c, const mbsCs *g, int generator, const char *what,
                       mbsGeom *geo);
mbsErr mbs_cfgAdd(const mbsConfig *c, mbsModel *m, const mbsBodySpec *sp, const mbsCs *body,
                  const mbsCs *joint, const mbsGeom *geo, const char *what, int *id);
mbsErr mbs_cfgParent(const mbsConfig *c, const mbsModel *m, const mbsCs *g, const char *what,
                     const mbsCs *later_list, int *parent);
mbsErr mbs_cfgDofValues(const mbsConfig *c, const mbsCs *g, const char *key, int n,
                        const char *what, mbsReal *out);
mbsErr mbs_cfgCheckName(const mbsConfig *c, const mbsCs *s, const char *what, const char *name);
mbsErr mbs_tipSetRange(mbsTips *t, int base, int n, const mbsReal *tip);
const mbsReal *mbs_tipGet(const mbsTips *t, int gid);
mbsErr mbs_cfgGenerators(const mbsConfig *c, mbsModel *m, const mbsCs *s, int tree, mbsTips *tips);
/// model.ladder (src/config_ladder.c): its bodies (*base: the first one's global index), then,
/// after every body, its loops; mbs_cfgLadderCount: bodies and loops without building
mbsErr mbs_cfgLadder(const mbsConfig *c, mbsModel *m, const mbsCs *g, int *base);
mbsErr mbs_cfgLadderLoops(const mbsConfig *c, mbsModel *m, const mbsCs *g, int base);
void mbs_cfgLadderCount(const mbsCs *g, long long *nbody, int *nloop);
/// model.loops (list) and model.forces (list) into the model being built (src/config_loops.c)
mbsErr mbs_cfgLoops(const mbsConfig *c, mbsModel *m, const mbsCs *list);
mbsErr mbs_cfgForces(const mbsConfig *c, mbsModel *m, const mbsCs *list);
/// flexible = { ... } (fl) of body b (src/flex_config.c): read, checked and reduced into *fb
mbsErr mbs_cfgFlexible(const mbsConfig *c, const mbsCs *b, const mbsCs *fl, const char *what,
                       mbsFlexBody *fb);

/// One option of a config group, by descriptor: a row drives the key check, the typed read with
/// its bounds and FILE:LINE messages (mbs_cfgReadDescs), the JSON echo (mbs_cfgEchoDescs),
/// equality (mbs_cfgDescsEqual: the solver group's decides when a bound solver is re-created) and
/// `mbspar help config` (mbs_configHelp). The default is not in the row: it is the field's value
/// after mbs_cfgDefaults (mbs_optionDefault for mbsOption), so it has one home.
typedef enum {
  MBS_OPT_REAL,   ///< mbsReal
  MBS_OPT_INT,    ///< int in [ilo, ihi]
  MBS_OPT_ENUM,   ///< int: an index into names
  MBS_OPT_BOOL,   ///< int: true or false
  MBS_OPT_VEC2,   ///< mbsReal[2], each in the real bounds
  MBS_OPT_STRING, ///< char * (owned, not empty)
  MBS_OPT_CUSTOM  ///< read, echo and show hooks
} mbsOptType;
typedef struct mbsOptDesc mbsOptDesc;
struct mbsOptDesc {
  const char *key;      ///< name in its group
  mbsOptType type;      ///< where it goes: the field at offset in the group's struct
  size_t offset;        ///< offsetof in the group's struct
  double lo, hi;        ///< REAL, VEC2: bounds checked after every key is read (+-INFINITY: none)
  int lo_open, hi_open; ///< REAL, VEC2: 1: strict (lo < v), 0: closed (lo <= v)
  int ilo, ihi;         ///< INT: bounds, checked as the key is read
  const char *const *names; ///< ENUM: the value names, NULL-terminated
  const char *msg;          ///< REAL, VEC2: the bounds message (%g: the value(s)); NULL: generic
  /// a cross-key rule, checked in row order after the bounds (g: the group)
  mbsErr (*check)(const mbsConfig *c, const mbsCs *g, const void *base);
  mbsErr (*read)(mbsConfig *c, const mbsCs *s, void *base); ///< CUSTOM (s: NULL if absent)
  void (*echo)(mbsJson *j, const mbsConfig *c, const mbsOptDesc *d, const void *base); ///< CUSTOM
  void (*show)(char *buf, size_t n, const mbsConfig *c, const void *base); ///< CUSTOM: value
  void (*range)(char *buf, size_t n); ///< CUSTOM: the accepted values
  const char *example; ///< a value the reader accepts, when the default cannot be written
  const char *help;    ///< one line: what it is and its unit
  /// CUSTOM: 1 if the fields at offset of two structs are equal (mbs_cfgDescsEqual; NULL: never
  /// equal, so a change is never missed)
  int (*equal)(const void *a, const void *b);
  /// 1: left out of the group's equality (mbs_cfgDescsEqual). Solver group: a key the bound
  /// solver does not read (the loop layer reads it from the model at each evaluation), so a
  /// change keeps the solver (mbs_configSolverOptEqual).
  int no_equal;
};
/// an option group: its name, its rows and the struct they point into
typedef struct {
  const char *name;
  const mbsOptDesc *rows;
  int n;
  void *(*base)(mbsConfig *c);
} mbsOptGroup;
/// Rows of a descriptor table; a real row without a lower or upper bound.
#define MBS_NROWS(t) ((int)(sizeof t / sizeof t[0]))
#define MBS_NOLO     .lo = -INFINITY
#define MBS_NOHI     .hi = INFINITY
extern const mbsOptGroup *const mbs_opt_groups[];
/// The verbs' groups (config_verbopts.c), entries of mbs_opt_groups.
extern const mbsOptGroup mbs_opt_group_inverse, mbs_opt_group_static, mbs_opt_group_cpa;
extern const int mbs_opt_ngroups;
/// the defaults of every option (mbs_configParse starts from them; help prints them)
void mbs_cfgDefaults(mbsConfig *c);

/// model.formulation (src/config_opts.c): after model.loops/forces are counted
mbsErr mbs_cfgReadFormulation(mbsConfig *c, const mbsCs *model);
mbsErr mbs_cfgReadDescs(mbsConfig *c, const mbsCs *root, const mbsOptGroup *grp);
void mbs_cfgEchoDescs(mbsJson *j, const mbsConfig *c, const mbsOptGroup *grp);
/// 1 if the structs a and b of the group (as grp->base points into) hold equal values in every row
/// without no_equal: reals and ints by ==, strings by content, CUSTOM rows by their equal.
int mbs_cfgDescsEqual(const mbsOptGroup *grp, const void *a, const void *b);
/// the group named name (NULL: none)
const mbsOptGroup *mbs_cfgOptGroup(const char *name);

#endif
