/// \file config_inverse.c
/// The inverse verb's prescribed motion from the config's inverse group: the coordinates it
/// drives, the actuated ones and the start and end poses.

#define _POSIX_C_SOURCE 200809L
#include "config_private.h"

// ---------------------------------------------------------------- inverse motion

int mbs_configInverseCoords(const mbsModel *m) {
  int n = 0;
  for (int b = 0; b < m->nbody; b++)
    if (m->body_qnum[b] == m->body_dofnum[b]) n += m->body_qnum[b];
  return n;
}

mbsErr mbs_configInverseActuated(const mbsConfig *c, const mbsModel *m, int *act) {
  const mbsInverseSpec *iv = &c->inverse;
  const config_t *tree = (const config_t *)c->priv;
  const mbsCs *g = config_setting_get_member(config_root_setting(tree), "inverse");
  const mbsCs *as = g ? config_setting_get_member(g, "actuated") : NULL;
  for (int d = 0; d < m->nv; d++) act[d] = 0;
  if (iv->nactuated && !m->nloop)
    return mbs_cfgFail(c, as,
                       "inverse.actuated applies to models with loops (a tree needs a force on "
                       "every joint)");
  if (!iv->nactuated && m->nloop)
    return mbs_cfgFail(c, g ? g : config_setting_get_member(config_root_setting(tree), "model"),
                       "inverse on a model with loops needs inverse.actuated = [\"BODY\", ...]: "
                       "the bodies whose joints are driven (the others follow from the loops)");
  for (int k = 0; k < iv->nactuated; k++) {
    const mbsCs *e = mbs_cfgIsList(as) ? config_setting_get_elem(as, (unsigned)k) : as;
    int b = mbs_modelFindBody(m, iv->actuated[k]);
    if (b < 0) return mbs_cfgFail(c, e, "inverse.actuated: unknown body \"%s\"", iv->actuated[k]);
    if (!mbs_jntScalar(m->body_jnttype[b]))
      return mbs_cfgFail(c, e,
                         "inverse.actuated: the %s joint of \"%s\" cannot follow a profile "
                         "(revolute, prismatic, cylindrical or universal joints only)",
                         mbs_jntName(m->body_jnttype[b]), iv->actuated[k]);
    for (int j = 0; j < m->body_dofnum[b]; j++) act[m->body_dofadr[b] + j] = 1;
  }
  return MBS_OK;
}

mbsErr mbs_configInverse(const mbsConfig *c, const mbsModel *m, mbsReal *qs, mbsReal *qe) {
  const mbsInverseSpec *iv = &c->inverse;
  const config_t *tree = (const config_t *)c->priv;
  const mbsCs *g = config_setting_get_member(config_root_setting(tree), "inverse");
  int n = mbs_configInverseCoords(m);
  // loop models: q_start / q_end may list the actuated coordinates only
  int *act = NULL, na = 0;
  if (m->nloop && iv->nactuated) {
    act = calloc((size_t)m->nv + 1, sizeof *act);
    if (!act) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    mbsErr e = mbs_configInverseActuated(c, m, act);
    if (e) {
      free(act);
      return e;
    }
    for (int d = 0; d < m->nv; d++) na += act[d];
  }
  memcpy(qs, m->q0, (size_t)m->nq * sizeof *qs);
  memcpy(qe, m->q0, (size_t)m->nq * sizeof *qe);
  const int cnts[2] = {iv->nstart, iv->nend};
  const mbsReal *vals[2] = {iv->q_start, iv->q_end};
  static const char *const names[2] = {"q_start", "q_end"};
  mbsReal *dst[2] = {qs, qe};
  for (int w = 0; w < 2; w++) {
    if (!cnts[w]) continue;
    int only_act = act && cnts[w] == na && na != n;
    if (cnts[w] != 1 && cnts[w] != n && !only_act) {
      free(act);
      return mbs_cfgFail(c, g ? config_setting_get_member(g, names[w]) : NULL,
                         "inverse.%s: wrong array length: %d value(s), but the model has %d "
                         "scalar joint coordinates (revolute, prismatic, cylindrical, universal)%s",
                         names[w], cnts[w], n, act ? " (or give the actuated ones only)" : "");
    }
    int i = 0;
    for (int b = 0; b < m->nbody; b++) {
      int t = m->body_jnttype[b];
      if (m->body_qnum[b] != m->body_dofnum[b]) continue;
      if (only_act && !act[m->body_dofadr[b]]) continue;
      for (int k = 0; k < m->body_qnum[b]; k++, i++) {
        mbsReal v = vals[w][cnts[w] == 1 ? 0 : i];
        int rot = mbs_jntCoordIsAngle(t, k);
        if (iv->degrees && rot) v *= M_PI / 180;
        dst[w][m->body_qadr[b] + k] = v;
      }
    }
  }
  free(act);
  return MBS_OK;
}
