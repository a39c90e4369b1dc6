/// \file config_drive.c
/// The config's top-level list `drive` (mbs_drive.h, docs/model.md "Driven joints"): per driven
/// joint a group { body = "NAME"; profile = "spinup" | "cycloidal" | "sine"; and the profile's
/// numbers }, read strictly: every key the profile needs, none it does not know, finite values,
/// positive durations and frequencies, each body once. Whether the body exists and has a
/// revolute or prismatic joint is checked against the model (mbs_configDrives).
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "config_private.h"
#include "mbspar/mbs_drive.h"
#include "mbspar/mbs_joint.h"

// a required real of a drive group, finite; positive if \p pos
static mbsErr mbs_cfgDriveReal(const mbsConfig *c, const mbsCs *g, const char *key, int pos,
                               const char *prof, mbsReal *v) {
  const mbsCs *s = config_setting_get_member(g, key);
  if (!s) return mbs_cfgFail(c, g, "drive: profile \"%s\" needs %s", prof, key);
  MBS_CALL(mbs_cfgNumber(c, s, v));
  if (!isfinite(*v) || (pos && !(*v > 0)))
    return mbs_cfgFail(c, s, "drive.%s must be %s (got %g)", key,
                       pos ? "a finite number > 0" : "finite", *v);
  return MBS_OK;
}

mbsErr mbs_cfgReadDrives(mbsConfig *c, const mbsCs *root) {
  const mbsCs *l = config_setting_get_member(root, "drive");
  if (!l) return MBS_OK;
  int group = config_setting_type(l) == CONFIG_TYPE_GROUP;
  if (!group && !mbs_cfgIsList(l))
    return mbs_cfgFail(c, l,
                       "drive: expected a list of groups ( { body = \"NAME\"; profile = ...; }, "
                       "... ) or one group, got %s",
                       mbs_cfgTypeName(l));
  int n = group ? 1 : config_setting_length(l);
  if (n > MBS_DRIVE_MAX)
    return mbs_cfgFail(c, l, "drive: %d driven joints, at most %d", n, MBS_DRIVE_MAX);
  if (n == 0) return MBS_OK;
  c->drives = calloc((size_t)n, sizeof *c->drives);
  if (!c->drives) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  c->ndrive = n;
  static const char *const keys[MBS_DRIVE_NPROFILE][5] = {
      {"body", "profile", "speed", "T", NULL},
      {"body", "profile", "q_end", "T", NULL},
      {"body", "profile", "amplitude", "frequency", NULL},
      {"body", "profile", "file", NULL, NULL}};
  for (int k = 0; k < n; k++) {
    const mbsCs *g = group ? l : config_setting_get_elem(l, (unsigned)k);
    mbsDriveSpec *d = &c->drives[k];
    if (config_setting_type(g) != CONFIG_TYPE_GROUP)
      return mbs_cfgFail(c, g,
                         "drive: entry %d: expected a group { body = ...; profile = ...; }, "
                         "got %s",
                         k + 1, mbs_cfgTypeName(g));
    d->line = mbs_cfgLine(g);
    const char *body = NULL;
    d->profile = -1;
    MBS_CALL(mbs_cfgGetString(c, g, "body", &body));
    if (!body) return mbs_cfgFail(c, g, "drive: entry %d has no body = \"NAME\"", k + 1);
    MBS_CALL(mbs_cfgGetEnum(c, g, "profile", mbs_drive_profile_names, &d->profile));
    if (d->profile < 0)
      return mbs_cfgFail(c, g, "drive: entry %d has no profile (spinup, cycloidal, sine or motion)",
                         k + 1);
    MBS_CALL(mbs_cfgCheckKeys(c, g, keys[d->profile]));
    for (int j = 0; j < k; j++)
      if (!strcmp(c->drives[j].body, body))
        return mbs_cfgFail(c, g, "drive: body \"%s\" is driven twice (also at line %d)", body,
                           c->drives[j].line);
    if (!(d->body = mbs_strdup(body))) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    const char *prof = mbs_drive_profile_names[d->profile];
    if (d->profile == MBS_DRIVE_SPINUP) {
      MBS_CALL(mbs_cfgDriveReal(c, g, "speed", 0, prof, &d->speed));
      MBS_CALL(mbs_cfgDriveReal(c, g, "T", 1, prof, &d->T));
    } else if (d->profile == MBS_DRIVE_CYCLOIDAL) {
      MBS_CALL(mbs_cfgDriveReal(c, g, "q_end", 0, prof, &d->q_end));
      MBS_CALL(mbs_cfgDriveReal(c, g, "T", 1, prof, &d->T));
    } else if (d->profile == MBS_DRIVE_SINE) {
      MBS_CALL(mbs_cfgDriveReal(c, g, "amplitude", 0, prof, &d->amp));
      MBS_CALL(mbs_cfgDriveReal(c, g, "frequency", 1, prof, &d->freq));
    } else { // motion: a CSV relative to the config's directory
      const char *f = NULL;
      MBS_CALL(mbs_cfgGetString(c, g, "file", &f));
      if (!f || !f[0]) return mbs_cfgFail(c, g, "drive: profile \"motion\" needs file = \"CSV\"");
      MBS_CALL(mbs_cfgResolve(c, f, &d->file));
    }
  }
  return MBS_OK;
}

mbsErr mbs_configDrives(const mbsConfig *c, const mbsModel *m, int *dof, int *qadr) {
  for (int k = 0; k < c->ndrive; k++) {
    const mbsDriveSpec *d = &c->drives[k];
    int b = mbs_modelFindBody(m, d->body);
    if (b < 0)
      return mbs_errSet(MBS_ERR_INPUT, "%s:%d: drive: unknown body \"%s\"", c->filename, d->line,
                        d->body);
    int t = m->body_jnttype[b];
    if (!mbs_jntScalar(t) || mbs_jntNv(t) != 1) // revolute, prismatic
      return mbs_errSet(MBS_ERR_INPUT,
                        "%s:%d: drive: the %s joint of \"%s\" cannot be driven (revolute and "
                        "prismatic joints only)",
                        c->filename, d->line, mbs_jntName(t), d->body);
    dof[k] = m->body_dofadr[b], qadr[k] = m->body_qadr[b];
  }
  return MBS_OK;
}
