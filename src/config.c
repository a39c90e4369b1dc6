/// \file config.c
/// The config parser (see mbs_config.h and docs/model.md). libconfig parses the text; everything
/// after that is ours: --set overrides edit the libconfig tree in place (keeping member order,
/// because the model is built in file order), then strict readers check every key, type, length
/// and value and report "FILE:LINE: message" (or "--set KEY=VALUE: message" for values that came
/// from the command line).
///
/// Before parsing, square brackets outside strings and comments become parentheses: libconfig
/// arrays must be homogeneous ("[0, 0, -9.81]" is a syntax error there), lists are not, and the
/// readers treat arrays and lists alike. The rewrite keeps every character position, so the
/// line numbers are unchanged.

#define _POSIX_C_SOURCE 200809L
#include "config_private.h"

// ---------------------------------------------------------------- parse

// model.loops and model.forces: lists (their entries are checked when the model is built). Every
// method solves such models (the constraint-force methods through the loop solve of
// docs/loops.md 8); without solver.method the serial baseline aba is the default for them (it
// needs no tree solve per closure equation)
static mbsErr mbs_cfgLoopMethod(mbsConfig *c, const mbsCs *model) {
  static const char *const lists[] = {"loops", "forces"};
  int *cnt[] = {&c->nloops, &c->nforces};
  for (int k = 0; k < 2; k++) {
    const mbsCs *s = config_setting_get_member(model, lists[k]);
    if (!s) continue;
    if (!mbs_cfgIsList(s))
      return mbs_cfgFail(c, s, "model.%s: wrong type: expected a list ( {...}, {...} ), got %s",
                         lists[k], mbs_cfgTypeName(s));
    *cnt[k] = config_setting_length(s);
  }
  // the ladder generator's rungs are loops too (0 when malformed: the build says why)
  const mbsCs *lad = config_setting_get_member(model, "ladder");
  if (lad) {
    long long nb;
    int nl;
    mbs_cfgLadderCount(lad, &nb, &nl);
    c->nloops += nl;
  }
  if (!c->nloops && !c->nforces) return MBS_OK;
  if (c->sauto.on) { // auto (docs/model.md): aba for these models
    c->opt.solver = MBS_SOLVER_ABA;
    c->loop_default_aba = 1;
  }
  return MBS_OK;
}

// a file named in the config, relative to the config's directory (config_private.h)
mbsErr mbs_cfgResolve(const mbsConfig *c, const char *file, char **out) {
  const char *slash = strrchr(c->filename, '/');
  size_t dl = file[0] == '/' || !slash ? 0 : (size_t)(slash - c->filename + 1);
  free(*out);
  *out = malloc(dl + strlen(file) + 1);
  if (!*out) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  memcpy(*out, c->filename, dl);
  memcpy(*out + dl, file, strlen(file) + 1);
  return MBS_OK;
}

// model.urdf = "FILE" or { file = "FILE"; q0 = [...]; qd0 = [...]; }: the file name resolved
// against the config's directory; the text is read by the caller (mbs_configSetUrdf)
static mbsErr mbs_cfgReadUrdf(mbsConfig *c, const mbsCs *model) {
  const mbsCs *s = config_setting_get_member(model, "urdf");
  if (!s) return MBS_OK;
  const char *file = NULL;
  if (config_setting_type(s) == CONFIG_TYPE_STRING) {
    file = config_setting_get_string(s);
  } else if (config_setting_type(s) == CONFIG_TYPE_GROUP) {
    static const char *const keys[] = {"file", "q0", "qd0", "joints", "torques", NULL};
    MBS_CALL(mbs_cfgCheckKeys(c, s, keys));
    MBS_CALL(mbs_cfgGetString(c, s, "file", &file));
    if (!file) return mbs_cfgFail(c, s, "model.urdf: missing file = \"robot.urdf\"");
    MBS_CALL(mbs_cfgGetValues(c, s, "q0", &c->urdf_q0, &c->nurdf_q0));
    MBS_CALL(mbs_cfgGetValues(c, s, "qd0", &c->urdf_qd0, &c->nurdf_qd0));
    const mbsCs *js = config_setting_get_member(s, "joints");
    if (js && !mbs_cfgIsList(js))
      return mbs_cfgFail(c, js,
                         "model.urdf.joints: wrong type: expected a list ( { name = \"JOINT\"; "
                         "force = ...; }, ... ), got %s",
                         mbs_cfgTypeName(js));
    const char *tfile = NULL;
    MBS_CALL(mbs_cfgGetString(c, s, "torques", &tfile));
    if (tfile && !tfile[0])
      return mbs_cfgFail(c, config_setting_get_member(s, "torques"),
                         "model.urdf.torques: empty file name");
    if (tfile) {
      MBS_CALL(mbs_cfgResolve(c, tfile, &c->urdf_torques));
      c->urdf_torques_line = mbs_cfgLine(config_setting_get_member(s, "torques"));
    }
  } else {
    return mbs_cfgFail(c, s,
                       "model.urdf: wrong type: expected a file name or { file = ...; q0 = ...; "
                       "qd0 = ...; }, got %s",
                       mbs_cfgTypeName(s));
  }
  if (!file[0]) return mbs_cfgFail(c, s, "model.urdf: empty file name");
  c->urdf_line = mbs_cfgLine(s);
  return mbs_cfgResolve(c, file, &c->urdf_path);
}

// model.urdf.joints entry \p k (group \p g) against the robot: the joint by its URDF name, the
// values per degree of freedom (one for all or one each), checked as a cfg body's are
static mbsErr mbs_cfgUrdfJoint(mbsConfig *c, const mbsCs *g, int k, mbsUrdfJointForce *jf) {
  char what[160];
  snprintf(what, sizeof what, "model.urdf.joints[%d]", k);
  if (config_setting_type(g) != CONFIG_TYPE_GROUP)
    return mbs_cfgFail(c, g,
                       "%s: wrong type: expected a group { name = \"JOINT\"; force = ...; "
                       "stiffness = ...; springref = ...; damping = ...; }, got %s",
                       what, mbs_cfgTypeName(g));
  static const char *const keys[] = {"name", "force", "stiffness", "springref", "damping", NULL};
  MBS_CALL(mbs_cfgCheckKeys(c, g, keys));
  const char *name = NULL;
  MBS_CALL(mbs_cfgGetString(c, g, "name", &name));
  if (!name) return mbs_cfgFail(c, g, "%s: missing name = \"JOINT\" (a URDF joint name)", what);
  const mbsCs *ns = config_setting_get_member(g, "name");
  int n = mbs_urdfJointCount(c->urdf), j = -1;
  for (int i = 0; i < n && j < 0; i++) {
    const char *jn;
    mbs_urdfJointInfo(c->urdf, i, &jn, NULL, NULL, NULL);
    if (!strcmp(jn, name)) j = i;
  }
  if (j < 0)
    return mbs_cfgFail(c, ns, "%s: \"%s\" is not a joint of %s (`mbspar check` lists them)", what,
                       name, c->urdf_path);
  mbs_urdfJointInfo(c->urdf, j, &jf->name, &jf->link, &jf->nv, NULL);
  if (jf->nv == 0)
    return mbs_cfgFail(c, ns, "%s: joint \"%s\" is fixed: it has no degree of freedom to act on",
                       what, name);
  static const char *const vk[4] = {"force", "stiffness", "springref", "damping"};
  mbsReal *dst[4] = {jf->force, jf->stiffness, jf->springref, jf->damping};
  for (int q = 0; q < 4; q++) {
    const mbsCs *vs = config_setting_get_member(g, vk[q]);
    if (!vs) continue;
    if (q == 1 || q == 2) {
      if (jf->nv != 1)
        return mbs_cfgFail(c, vs, "%s: %s is not supported for the floating joint \"%s\"", what,
                           vk[q], name);
    }
    MBS_CALL(mbs_cfgDofValues(c, g, vk[q], jf->nv, what, dst[q]));
    jf->given |= 1 << q;
    for (int d = 0; (q == 1 || q == 3) && d < jf->nv; d++)
      if (dst[q][d] < 0)
        return mbs_cfgFail(c, vs, "%s: joint %s must be >= 0 (got %g)", what, vk[q], dst[q][d]);
  }
  for (int i = 0; i < k; i++)
    if (c->urdf_jf[i].link == jf->link)
      return mbs_cfgFail(c, ns, "%s: joint \"%s\" is listed twice (also entry %d)", what, name, i);
  return MBS_OK;
}

static mbsErr mbs_cfgUrdfCheck(mbsConfig *c);

mbsErr mbs_configSetUrdf(mbsConfig *c, const char *text, size_t len) {
  MBS_CHECK(c->urdf_path, MBS_ERR_INTERNAL, "mbs_configSetUrdf: the config has no model.urdf");
  mbs_urdfDestroy(&c->urdf);
  MBS_CALL(mbs_urdfParse(text, len, c->urdf_path, &c->urdf));
  return mbs_cfgUrdfCheck(c);
}

mbsErr mbs_configSetUrdfStream(mbsConfig *c, mbsUrdfReadFn rd, void *ctx, size_t len) {
  MBS_CHECK(c->urdf_path, MBS_ERR_INTERNAL, "mbs_configSetUrdf: the config has no model.urdf");
  mbs_urdfDestroy(&c->urdf);
  MBS_CALL(mbs_urdfParseStream(rd, ctx, len, c->urdf_path, &c->urdf));
  return mbs_cfgUrdfCheck(c);
}

// model.urdf.q0, qd0 against the robot; model.urdf.joints
static mbsErr mbs_cfgUrdfCheck(mbsConfig *c) {
  int nq, nv;
  mbs_urdfSizes(c->urdf, &nq, &nv);
  const mbsCs *s = config_setting_get_member(
      config_setting_get_member(config_root_setting((const config_t *)c->priv), "model"), "urdf");
  if (c->nurdf_q0 && c->nurdf_q0 != nq)
    return mbs_cfgFail(c, config_setting_get_member(s, "q0"),
                       "model.urdf: wrong array length: q0 needs %d values (the robot's position "
                       "coordinates in joint order), got %d",
                       nq, c->nurdf_q0);
  if (c->nurdf_qd0 && c->nurdf_qd0 != nv)
    return mbs_cfgFail(c, config_setting_get_member(s, "qd0"),
                       "model.urdf: wrong array length: qd0 needs %d values, got %d", nv,
                       c->nurdf_qd0);
  // model.urdf.joints: forces on joints named as in the file
  const mbsCs *js = config_setting_get_member(s, "joints");
  free(c->urdf_jf);
  c->urdf_jf = NULL, c->nurdf_jf = 0;
  int nj = js ? config_setting_length(js) : 0;
  if (nj > 0) {
    c->urdf_jf = calloc((size_t)nj, sizeof *c->urdf_jf);
    MBS_CHECK(c->urdf_jf, MBS_ERR_NOMEM, "out of memory");
    for (int k = 0; k < nj; k++) {
      MBS_CALL(mbs_cfgUrdfJoint(c, config_setting_get_elem(js, (unsigned)k), k, &c->urdf_jf[k]));
      c->nurdf_jf = k + 1;
    }
  }
  return MBS_OK;
}

mbsErr mbs_configSetTorques(mbsConfig *c, const char *text, size_t len) {
  MBS_CHECK(c->urdf && c->urdf_torques, MBS_ERR_INTERNAL,
            "mbs_configSetTorques: the config has no model.urdf.torques or no robot yet");
  mbs_torquesDestroy(&c->torques);
  return mbs_torquesRead(c->urdf, text, len, c->urdf_torques, &c->torques);
}

// model.urdf.joints into the robot's bodies (built just before; a subset build skips the bodies
// it does not hold)
void mbs_cfgUrdfForces(const mbsConfig *c, mbsModel *m) {
  for (int k = 0; k < c->nurdf_jf; k++) {
    const mbsUrdfJointForce *jf = &c->urdf_jf[k];
    int b = mbs_modelFindBody(m, jf->link);
    if (b < 0 || m->body_dofnum[b] != jf->nv) continue;
    for (int i = 0; i < jf->nv; i++) {
      int d = m->body_dofadr[b] + i;
      if (jf->given & MBS_UJF_FORCE) m->dof_force[d] = jf->force[i];
      if (jf->given & MBS_UJF_STIFFNESS) m->dof_stiffness[d] = jf->stiffness[i];
      if (jf->given & MBS_UJF_SPRINGREF) m->dof_springref[d] = jf->springref[i];
      if (jf->given & MBS_UJF_DAMPING) m->dof_damping[d] = jf->damping[i];
    }
  }
}

// the defaults of every option but output.dir (mbs_configParse allocates it)
void mbs_cfgDefaults(mbsConfig *c) {
  mbs_optionDefault(&c->opt);
  c->gravity[0] = 0, c->gravity[1] = 0, c->gravity[2] = -9.81;
  c->out_every = 1;
  c->out_checkpoint_every = 0;
  c->out_format = MBS_OUTFMT_CSV;
  c->out_joint_wrench = 1;
  c->out_flush_sec = 1, c->out_flush_rows = 0;
  c->inverse.T = 1;
  c->inverse.steps = 100;
  mbs_staticOptDefault(&c->statics);
  c->cpa.latency = 1.5e-6, c->cpa.bandwidth = 5e9, c->cpa.flop_time = 1e-9;
}

mbsErr mbs_configParse(const char *text, const char *filename, const char *const *sets, int nsets,
                       mbsConfig **out) {
  *out = NULL;
  mbsConfig *c;
  MBS_ALLOC(c, 1);
  mbsErr e = MBS_OK;
  config_t *tree = NULL;
  char *pre = NULL;

  mbs_cfgDefaults(c);
  c->filename = mbs_strdup(filename ? filename : "(config)");
  c->out_dir = mbs_strdup("out");
  c->sets = calloc((size_t)(nsets > 0 ? nsets : 1), sizeof *c->sets);
  tree = malloc(sizeof *tree);
  if (!c->filename || !c->out_dir || !c->sets || !tree) {
    free(tree);
    mbs_configDestroy(&c);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory creating the config");
  }
  config_init(tree);
  c->priv = tree;
  for (int k = 0; k < nsets; k++) {
    c->sets[k] = mbs_strdup(sets[k]);
    if (!c->sets[k]) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    c->nset = k + 1;
  }

  // syntax
  if (!e) e = mbs_cfgPreprocess(text ? text : "", c->filename, NULL, &pre);
  if (!e && !config_read_string(tree, pre)) {
    const char *msg = config_error_text(tree);
    if (!msg || !strcmp(msg, "syntax error"))
      e = mbs_errSet(MBS_ERR_INPUT,
                     "%s:%d: syntax error (libconfig syntax: key = value; groups "
                     "{ }, lists ( ) or [ ], strings \"...\", no NaN literal)",
                     c->filename, config_error_line(tree));
    else
      e = mbs_errSet(MBS_ERR_INPUT, "%s:%d: syntax error: %s", c->filename, config_error_line(tree),
                     msg);
  }
  free(pre);

  // overrides, in command-line order
  for (int k = 0; k < nsets && !e; k++) e = mbs_cfgApplySet(tree, c->sets[k]);

  // top level and options
  const mbsCs *root = config_root_setting(tree);
  static const char *const top[] = {"model",  "solver",      "integrator", "output", "inverse",
                                    "static", "description", "cpa",        "drive",  NULL};
  if (!e) e = mbs_cfgCheckKeys(c, root, top);
  if (!e) {
    const char *desc = NULL;
    e = mbs_cfgGetString(c, root, "description", &desc);
  }
  if (!e) e = mbs_cfgReadSolver(c, root);
  if (!e) e = mbs_cfgReadIntegrator(c, root);
  if (!e) e = mbs_cfgReadOutput(c, root);
  if (!e) e = mbs_cfgReadInverse(c, root);
  if (!e) e = mbs_cfgReadStatic(c, root);
  if (!e) e = mbs_cfgReadCpa(c, root);
  if (!e) e = mbs_cfgReadDrives(c, root);
  if (!e) {
    static const char *const mkeys[] = {"gravity", "bodies", "chain",       "tree",   "urdf",
                                        "loops",   "forces", "formulation", "ladder", NULL};
    const mbsCs *model = NULL;
    e = mbs_cfgGetGroup(c, root, "model", &model);
    if (!e && !model)
      e = mbs_errSet(MBS_ERR_INPUT, "%s:1: empty model: there is no model group", c->filename);
    if (!e) e = mbs_cfgCheckKeys(c, model, mkeys);
    if (!e) e = mbs_cfgGetVec(c, model, "gravity", 3, c->gravity);
    if (!e) e = mbs_cfgReadUrdf(c, model);
    if (!e) e = mbs_cfgLoopMethod(c, model);
    if (!e) e = mbs_cfgReadFormulation(c, model);
  }
  if (e) {
    mbs_configDestroy(&c);
    return e;
  }
  *out = c;
  return MBS_OK;
}

void mbs_configDestroy(mbsConfig **pc) {
  if (!pc || !*pc) return;
  mbsConfig *c = *pc;
  if (c->priv) {
    config_destroy((config_t *)c->priv);
    free(c->priv);
  }
  for (int k = 0; k < c->nset; k++) free(c->sets[k]);
  free(c->sets);
  free(c->filename);
  free(c->out_dir);
  free(c->inverse.q_start);
  free(c->inverse.q_end);
  free(c->inverse.motion);
  for (int k = 0; k < c->inverse.nactuated; k++) free(c->inverse.actuated[k]);
  free(c->inverse.actuated);
  for (int k = 0; k < c->ndrive; k++) free(c->drives[k].body), free(c->drives[k].file);
  free(c->drives);
  free(c->urdf_path);
  free(c->urdf_q0);
  free(c->urdf_qd0);
  free(c->urdf_jf);
  free(c->urdf_torques);
  mbs_torquesDestroy(&c->torques);
  mbs_urdfDestroy(&c->urdf);
  free(c);
  *pc = NULL;
}

// ---------------------------------------------------------------- JSON echo

static void mbs_cfgJsonValue(mbsJson *j, const char *key, const mbsCs *s) {
  switch (config_setting_type(s)) {
  case CONFIG_TYPE_GROUP:
    mbs_jsonBeginObject(j, key);
    for (int k = 0; k < config_setting_length(s); k++) {
      const mbsCs *e = config_setting_get_elem(s, (unsigned)k);
      mbs_cfgJsonValue(j, config_setting_name(e), e);
    }
    mbs_jsonEndObject(j);
    break;
  case CONFIG_TYPE_LIST:
  case CONFIG_TYPE_ARRAY: {
    // lists of numbers on one line
    int n = config_setting_length(s), numeric = n > 0;
    for (int k = 0; k < n && numeric; k++) {
      int t = config_setting_type(config_setting_get_elem(s, (unsigned)k));
      numeric = t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64 || t == CONFIG_TYPE_FLOAT;
    }
    if (numeric) {
      double *v = malloc((size_t)n * sizeof *v);
      if (v) {
        for (int k = 0; k < n; k++) {
          const mbsCs *e = config_setting_get_elem(s, (unsigned)k);
          int t = config_setting_type(e);
          v[k] = t == CONFIG_TYPE_FLOAT
                     ? config_setting_get_float(e)
                     : (double)(t == CONFIG_TYPE_INT ? config_setting_get_int(e)
                                                     : config_setting_get_int64(e));
        }
        mbs_jsonNumberArray(j, key, v, n);
        free(v);
        break;
      }
    }
    mbs_jsonBeginArray(j, key);
    for (int k = 0; k < n; k++) mbs_cfgJsonValue(j, NULL, config_setting_get_elem(s, (unsigned)k));
    mbs_jsonEndArray(j);
    break;
  }
  case CONFIG_TYPE_INT:
    mbs_jsonInt(j, key, config_setting_get_int(s));
    break;
  case CONFIG_TYPE_INT64:
    mbs_jsonInt(j, key, (long)config_setting_get_int64(s));
    break;
  case CONFIG_TYPE_FLOAT:
    mbs_jsonNumber(j, key, config_setting_get_float(s));
    break;
  case CONFIG_TYPE_STRING:
    mbs_jsonString(j, key, config_setting_get_string(s));
    break;
  case CONFIG_TYPE_BOOL:
    mbs_jsonBool(j, key, config_setting_get_bool(s));
    break;
  default:
    mbs_jsonNull(j, key);
  }
}

void mbs_configWriteJson(const mbsConfig *c, mbsJson *j) {
  const config_t *tree = (const config_t *)c->priv;
  const mbsCs *root = config_root_setting(tree);
  mbs_jsonString(j, "file", c->filename);
  mbs_jsonBeginArray(j, "set");
  for (int k = 0; k < c->nset; k++) mbs_jsonString(j, NULL, c->sets[k]);
  mbs_jsonEndArray(j);
  const mbsCs *desc = config_setting_get_member(root, "description");
  if (desc) mbs_cfgJsonValue(j, "description", desc);

  // the model as written (generators are not expanded), gravity resolved
  mbs_jsonBeginObject(j, "model");
  mbs_jsonNumberArray(j, "gravity", c->gravity, 3);
  const mbsCs *model = config_setting_get_member(root, "model");
  for (int k = 0; model && k < config_setting_length(model); k++) {
    const mbsCs *e = config_setting_get_elem(model, (unsigned)k);
    if (strcmp(config_setting_name(e), "gravity") != 0)
      mbs_cfgJsonValue(j, config_setting_name(e), e);
  }
  mbs_jsonEndObject(j);

  // the option groups from their descriptors (src/config_opts.c)
  mbs_cfgEchoDescs(j, c, mbs_cfgOptGroup("solver"));
  mbs_cfgEchoDescs(j, c, mbs_cfgOptGroup("integrator"));
  mbs_cfgEchoDescs(j, c, mbs_cfgOptGroup("output"));

  if (c->inverse.present) mbs_cfgEchoDescs(j, c, mbs_cfgOptGroup("inverse"));
  mbs_cfgEchoDescs(j, c, mbs_cfgOptGroup("static"));
  mbs_cfgEchoDescs(j, c, mbs_cfgOptGroup("cpa"));
  if (c->ndrive) { // the driven joints of run, as read
    mbs_jsonBeginArray(j, "drive");
    for (int k = 0; k < c->ndrive; k++) {
      const mbsDriveSpec *d = &c->drives[k];
      mbs_jsonBeginObject(j, NULL);
      mbs_jsonString(j, "body", d->body);
      mbs_jsonString(j, "profile", mbs_drive_profile_names[d->profile]);
      if (d->profile == MBS_DRIVE_SPINUP) mbs_jsonNumber(j, "speed", d->speed);
      if (d->profile == MBS_DRIVE_CYCLOIDAL) mbs_jsonNumber(j, "q_end", d->q_end);
      if (d->profile < MBS_DRIVE_SINE) mbs_jsonNumber(j, "T", d->T);
      if (d->profile == MBS_DRIVE_SINE) mbs_jsonNumber(j, "amplitude", d->amp);
      if (d->profile == MBS_DRIVE_SINE) mbs_jsonNumber(j, "frequency", d->freq);
      if (d->profile == MBS_DRIVE_MOTION) mbs_jsonString(j, "file", d->file);
      mbs_jsonEndObject(j);
    }
    mbs_jsonEndArray(j);
  }
}

int mbs_configIsSet(const mbsConfig *cfg, const char *path) {
  const config_t *tree = (const config_t *)cfg->priv;
  return tree && config_lookup(tree, path) != NULL;
}

// ---------------------------------------------------------------- errors found after parsing

mbsErr mbs_configBlame(const mbsConfig *cfg, const char *path, mbsErr e) {
  const config_t *tree = (const config_t *)cfg->priv;
  const mbsCs *s = tree ? config_lookup(tree, path) : NULL;
  const char *set = s ? mbs_cfgSetOf(s) : NULL;
  // an aggregate (say "model") is blamed on the last --set inside it
  size_t n = strlen(path);
  for (int k = cfg->nset - 1; k >= 0 && !set; k--) {
    const char *key = cfg->sets[k];
    if (!strncmp(key, path, n) && (key[n] == '=' || key[n] == '.' || key[n] == '[')) set = key;
  }
  if (set) {
    mbs_errPrefix("--set %s", set);
    return e == MBS_ERR_INPUT ? MBS_ERR_USAGE : e;
  }
  // else the setting's line, or that of its nearest ancestor in the file
  char buf[256];
  snprintf(buf, sizeof buf, "%s", path);
  while (!s && buf[0]) {
    char *dot = strrchr(buf, '.');
    if (!dot) break;
    *dot = 0;
    s = config_lookup(tree, buf);
  }
  mbs_errPrefix("%s:%d", cfg->filename, s ? mbs_cfgLine(s) : 1);
  return e;
}

// ---------------------------------------------------------------- size before building

// bodies of one generator group, counted without building it; 0 if it is malformed or out of
// its own range (mbs_configBuildModel reports those with their specific message). *at: the
// setting that sets the count.
static long long mbs_cfgGenCount(const mbsCs *g, int tree, const mbsCs **at) {
  *at = g;
  if (config_setting_type(g) != CONFIG_TYPE_GROUP) return 0;
  if (!tree) {
    const mbsCs *s = config_setting_get_member(g, "n");
    if (!s) return 0;
    int t = config_setting_type(s);
    long long n = 0;
    if (t == CONFIG_TYPE_INT) n = config_setting_get_int(s);
    if (t == CONFIG_TYPE_INT64) n = config_setting_get_int64(s);
    *at = s;
    return n >= 1 && n <= MBS_CFG_MAXBODIES ? n : 0;
  }
  const mbsCs *ps = config_setting_get_member(g, "parents");
  if (ps) {
    *at = ps;
    return mbs_cfgIsList(ps) ? config_setting_length(ps) : 0;
  }
  const mbsCs *ks = config_setting_get_member(g, "branching"),
              *ds = config_setting_get_member(g, "depth");
  long long k = 0, d = 0, n = 0, pw = 1;
  for (int w = 0; w < 2; w++) {
    const mbsCs *x = w ? ds : ks;
    long long *v = w ? &d : &k;
    int t = x ? config_setting_type(x) : CONFIG_TYPE_NONE;
    if (t == CONFIG_TYPE_INT) *v = config_setting_get_int(x);
    if (t == CONFIG_TYPE_INT64) *v = config_setting_get_int64(x);
  }
  if (k < 1 || d < 1 || k > MBS_CFG_MAXBODIES) return 0;
  *at = ds;
  for (long long l = 0; l < d && n <= MBS_CFG_MAXBODIES; l++, pw *= k) {
    n += pw;
    if (pw > MBS_CFG_MAXBODIES) break; // k^l alone is past the cap: stop before it overflows
  }
  return n <= MBS_CFG_MAXBODIES ? n : 0;
}

mbsErr mbs_configCountBodies(const mbsConfig *cfg, long long *nbody, const void **largest) {
  const config_t *tree = (const config_t *)cfg->priv;
  const mbsCs *model = config_setting_get_member(config_root_setting(tree), "model");
  long long total = 0, best = -1;
  *nbody = 0;
  if (largest) *largest = model;
  if (!model || config_setting_type(model) != CONFIG_TYPE_GROUP) return MBS_OK;
  for (int k = 0; k < config_setting_length(model); k++) {
    const mbsCs *s = config_setting_get_elem(model, (unsigned)k);
    const char *name = config_setting_name(s);
    int isbody = !strcmp(name, "bodies"), istree = !strcmp(name, "tree");
    int isladder = !strcmp(name, "ladder");
    if (!isbody && !istree && !isladder && strcmp(name, "chain")) continue;
    // a generator key holds one group or a list of groups (the ladder: one group)
    int ng = (!isbody && !isladder && mbs_cfgIsList(s)) ? config_setting_length(s) : 1;
    for (int i = 0; i < ng; i++) {
      const mbsCs *at = s;
      long long n;
      int nl;
      if (isbody)
        n = mbs_cfgIsList(s) ? config_setting_length(s) : 0;
      else if (isladder) // 2 links + links / every rungs
        mbs_cfgLadderCount(s, &n, &nl);
      else
        n = mbs_cfgGenCount(mbs_cfgIsList(s) ? config_setting_get_elem(s, (unsigned)i) : s, istree,
                            &at);
      total += n;
      if (n > best && largest) best = n, *largest = at;
      if (total > MBS_CFG_MAXBODIES)
        return mbs_cfgFail(
            cfg, at, "model: more than %d bodies in all (the cap of one model; docs/model.md)",
            MBS_CFG_MAXBODIES);
    }
  }
  *nbody = total;
  return MBS_OK;
}

mbsErr mbs_configCheckMemory(const mbsConfig *cfg, const mbsMemBudget *b, long long *nbody) {
  const void *largest = NULL;
  long long n;
  MBS_CALL(mbs_configCountBodies(cfg, &n, &largest));
  if (nbody) *nbody = n;
  double per_rank = (double)n * b->bytes_per_body + b->bytes_fixed;
  double need = per_rank * (b->ranks_here > 0 ? b->ranks_here : 1);
  if (!(need > b->avail)) return MBS_OK;
  return mbs_cfgFail(cfg, (const mbsCs *)largest,
                     "model too large for the memory here: %lld bodies need about %.3g GB per "
                     "rank for %s (%.0f bytes per body), %d rank(s) on this host about %.3g GB, "
                     "but %.3g GB is available (%s); use fewer bodies, fewer ranks per host or "
                     "more hosts",
                     n, per_rank / 1e9, b->what ? b->what : "this verb", b->bytes_per_body,
                     b->ranks_here > 0 ? b->ranks_here : 1, need / 1e9, b->avail / 1e9,
                     b->source ? b->source : "estimate");
}
