/// \file checkpoint.c
/// The checkpoint reader and the format helpers (mbs_checkpoint.h). No MPI and no I/O: the
/// caller brings the bytes (parallel/sim.c broadcasts the file; fuzz/ feeds mutated bytes).
/// Every check runs before anything is copied, and every copy out of the buffer is a memcpy (no
/// aligned loads from the caller's bytes).
#include "mbspar/mbs_checkpoint.h"
#include <math.h>
#include <string.h>
#include "mbspar/mbs_abm.h"
#include "mbspar/mbs_solver.h"

_Static_assert(sizeof(mbsCkptHeader) == 464, "the checkpoint header layout is part of the format");

size_t mbs_ckptAbmDoubles(const mbsModel *m) {
  if (m->opt.integrator != MBS_INT_ABM) return 0;
  return MBS_ABM_NSCALAR + (size_t)(MBS_ABM_KMAX + 3) * ((size_t)m->nq + (size_t)m->nv);
}

size_t mbs_ckptAbmOffset(const mbsModel *m, int nstage) {
  return sizeof(mbsCkptHeader) +
         sizeof(double) * ((size_t)m->nq + (size_t)m->nv +
                           (size_t)nstage * MBS_WARM_HIST * (size_t)mbs_stateHistWidth(m));
}

size_t mbs_ckptSize(const mbsModel *m, int nstage) {
  return mbs_ckptAbmOffset(m, nstage) + sizeof(double) * mbs_ckptAbmDoubles(m) + sizeof(uint64_t);
}

uint64_t mbs_ckptHash(uint64_t h, const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t k = 0; k < n; k++) h = (h ^ c[k]) * 1099511628211ULL;
  return h;
}

uint64_t mbs_ckptFingerprint(const mbsModel *m) {
  uint64_t h = MBS_CKPT_FNV_BASIS;
  size_t nb = (size_t)m->nbody, nv = (size_t)m->nv;
  h = mbs_ckptHash(h, &m->nbody, sizeof m->nbody);
  h = mbs_ckptHash(h, m->gravity, sizeof m->gravity);
  h = mbs_ckptHash(h, m->body_parent, nb * sizeof(int));
  h = mbs_ckptHash(h, m->body_jnttype, nb * sizeof(int));
  h = mbs_ckptHash(h, m->body_sinert, 10 * nb * sizeof(mbsReal));
  h = mbs_ckptHash(h, m->jnt_origin, 3 * nb * sizeof(mbsReal));
  h = mbs_ckptHash(h, m->jnt_axis, 3 * nb * sizeof(mbsReal));
  h = mbs_ckptHash(h, m->jnt_axis2, 3 * nb * sizeof(mbsReal));
  h = mbs_ckptHash(h, m->dof_stiffness, nv * sizeof(mbsReal));
  h = mbs_ckptHash(h, m->dof_springref, nv * sizeof(mbsReal));
  h = mbs_ckptHash(h, m->dof_damping, nv * sizeof(mbsReal));
  h = mbs_ckptHash(h, m->dof_force, nv * sizeof(mbsReal));
  // closed loops and spring-dampers (only when present: tree models keep their fingerprints)
  if (m->nloop) {
    size_t nl = (size_t)m->nloop;
    h = mbs_ckptHash(h, &m->nloop, sizeof m->nloop);
    h = mbs_ckptHash(h, m->loop_type, nl * sizeof(int));
    h = mbs_ckptHash(h, m->loop_body, 2 * nl * sizeof(int));
    h = mbs_ckptHash(h, m->loop_frame, 24 * nl * sizeof(mbsReal));
  }
  if (m->nforce) {
    size_t nf = (size_t)m->nforce;
    h = mbs_ckptHash(h, &m->nforce, sizeof m->nforce);
    h = mbs_ckptHash(h, m->force_body, 2 * nf * sizeof(int));
    h = mbs_ckptHash(h, m->force_point, 6 * nf * sizeof(mbsReal));
    h = mbs_ckptHash(h, m->force_prm, 3 * nf * sizeof(mbsReal));
  }
  return h;
}

void mbs_ckptSeal(unsigned char *buf, size_t bytes) {
  uint64_t sum = mbs_ckptHash(MBS_CKPT_FNV_BASIS, buf, bytes - sizeof sum);
  memcpy(buf + bytes - sizeof sum, &sum, sizeof sum);
}

// every double of the body (q, qd, history) is finite
static int mbs_ckptFinite(const unsigned char *p, size_t n) {
  for (size_t k = 0; k < n; k++) {
    double v;
    memcpy(&v, p + k * sizeof v, sizeof v);
    if (!isfinite(v)) return 0;
  }
  return 1;
}

mbsErr mbs_ckptParse(const void *bytes, size_t len, const char *path, const mbsModel *m, int nstage,
                     mbsCkptHeader *h) {
  const unsigned char *text = bytes;
  size_t want = mbs_ckptSize(m, nstage);
  if (len < 8 || memcmp(text, MBS_CKPT_MAGIC, 8) != 0)
    return mbs_errSet(MBS_ERR_INPUT, "%s:0: not an mbspar checkpoint (bad magic bytes)", path);
  if (len < sizeof *h)
    return mbs_errSet(MBS_ERR_INPUT, "%s:0: checkpoint is truncated (%zu bytes)", path, len);
  memcpy(h, text, sizeof *h);
  if (h->version != MBS_CKPT_VERSION)
    return mbs_errSet(MBS_ERR_INPUT,
                      "%s:0: unsupported checkpoint version %u (this mbspar reads %u)", path,
                      h->version, MBS_CKPT_VERSION);
  if (h->nstage != nstage)
    return mbs_errSet(MBS_ERR_INPUT,
                      "%s:0: checkpoint was written with another integrator (%d stages; "
                      "integrator.method here has %d)",
                      path, h->nstage, nstage);
  if ((h->integrator == MBS_INT_ABM) != (m->opt.integrator == MBS_INT_ABM))
    return mbs_errSet(MBS_ERR_INPUT,
                      "%s:0: checkpoint was written with another integrator (%s; "
                      "integrator.method here is %s): the Adams history cannot be carried over",
                      path, h->integrator == MBS_INT_ABM ? "abm" : "a Runge-Kutta method",
                      mbs_integratorType(m->opt.integrator)->name);
  if (h->nbody != m->nbody || h->nq != m->nq || h->nv != m->nv || h->nlam != m->nlam)
    return mbs_errSet(MBS_ERR_INPUT,
                      "%s:0: checkpoint was written for another model (%d bodies, %d dofs; this "
                      "model has %d bodies, %d dofs)",
                      path, h->nbody, h->nv, m->nbody, m->nv);
  if (len != want)
    return mbs_errSet(MBS_ERR_INPUT,
                      "%s:0: checkpoint is truncated or padded (%zu bytes, expected %zu)", path,
                      len, want);
  uint64_t sum;
  memcpy(&sum, text + want - sizeof sum, sizeof sum);
  if (sum != mbs_ckptHash(MBS_CKPT_FNV_BASIS, text, want - sizeof sum))
    return mbs_errSet(MBS_ERR_INPUT, "%s:0: checkpoint is corrupt (checksum mismatch)", path);
  if (h->fingerprint != mbs_ckptFingerprint(m))
    return mbs_errSet(MBS_ERR_INPUT,
                      "%s:0: checkpoint was written for another model (same sizes, different "
                      "masses, geometry, joints or gravity)",
                      path);
  if (!(h->t <= m->opt.t_end))
    return mbs_errSet(MBS_ERR_INPUT, "%s:0: checkpoint time %.9g is beyond integrator.t_end = %.9g",
                      path, h->t, m->opt.t_end);
  if (!isfinite(h->t) || !isfinite(h->dt_next) || h->dt_next <= 0)
    return mbs_errSet(MBS_ERR_INPUT, "%s:0: checkpoint header has invalid values", path);
  for (int k = 0; k < MBS_MAX_STAGE; k++)
    if (h->nhist[k] < 0 || h->nhist[k] > MBS_WARM_HIST || h->hist_head[k] < 0 ||
        h->hist_head[k] >= MBS_WARM_HIST)
      return mbs_errSet(MBS_ERR_INPUT, "%s:0: checkpoint header has invalid values", path);
  // beyond what the first reader checked: counters, engine values and the state itself (a
  // checksum only proves the bytes are the ones written, not that a writer wrote sane ones)
  int bad = !(h->t >= 0) || h->step < 0 || h->step > INT32_MAX || h->evals < 0 || h->iters < 0 ||
            h->nonconv < 0 || h->restarts < 0 || h->stagnated < 0 || h->stagnated > h->nonconv ||
            (h->have_spec != 0 && h->have_spec != 1) || !isfinite(h->work) || !isfinite(h->lmin) ||
            !isfinite(h->lmax) || !isfinite(h->jacobi_omega);
  for (int k = 0; k < MBS_MAX_STAGE && !bad; k++)
    for (int i = 0; i < MBS_WARM_HIST; i++)
      if (!isfinite(h->hist_t[k][i])) bad = 1;
  if (bad) return mbs_errSet(MBS_ERR_INPUT, "%s:0: checkpoint header has invalid values", path);
  size_t nd = (want - sizeof *h - sizeof sum) / sizeof(double);
  if (!mbs_ckptFinite(text + sizeof *h, nd))
    return mbs_errSet(MBS_ERR_INPUT,
                      "%s:0: checkpoint holds non-finite values (q, qd, the warm-start "
                      "history or the Adams history)",
                      path);
  if (mbs_ckptAbmDoubles(m)) { // the Adams integrator's scalars (its vectors are finite above)
    double s[MBS_ABM_NSCALAR];
    memcpy(s, text + mbs_ckptAbmOffset(m, nstage), sizeof s);
    const char *why = mbs_abmSavedInvalid(s, MBS_ABM_KMAX);
    if (!why && !(s[MBS_ABM_SAVED_T] == h->t && s[MBS_ABM_SAVED_H] == h->dt_next))
      why = "time or step differ from the header";
    if (why)
      return mbs_errSet(MBS_ERR_INPUT, "%s:0: checkpoint's Adams integrator state is invalid (%s)",
                        path, why);
  }
  return MBS_OK;
}

void mbs_ckptApply(const void *bytes, const mbsCkptHeader *h, const mbsModel *m, mbsState *s) {
  const unsigned char *body = (const unsigned char *)bytes + sizeof *h;
  size_t nq = (size_t)m->nq, nv = (size_t)m->nv;
  memcpy(s->q, body, nq * sizeof(double));
  memcpy(s->qd, body + nq * sizeof(double), nv * sizeof(double));
  memcpy(s->hist_lam, body + (nq + nv) * sizeof(double),
         (size_t)h->nstage * MBS_WARM_HIST * (size_t)mbs_stateHistWidth(m) * sizeof(double));
  memcpy(s->nhist, h->nhist, sizeof h->nhist);
  memcpy(s->hist_head, h->hist_head, sizeof h->hist_head);
  memcpy(s->hist_t, h->hist_t, sizeof h->hist_t);
  s->time = h->t;
}
