/// \file fuzz_checkpoint.c
/// libFuzzer target: the checkpoint reader (mbs_ckptParse + mbs_ckptApply, what
/// `mbspar run --restart FILE` runs on every rank) against the fixed model of
/// fuzz/ckpt_model.cfg (embedded at build time), twice: as written (rk4) and with
/// integrator.method = abm, whose checkpoints carry the Adams history (every input is read
/// against both).
///
/// A checksum guards every checkpoint, so random bytes rarely get past it. Each input is
/// therefore read three times: as given; with the checksum recomputed (when the length is
/// right); and with the model fingerprint and the checksum made right, which takes the fuzzer to
/// the checks behind them (time, step, warm-start bookkeeping, finiteness) and to the copy into
/// the state.
///
/// Promises checked (a broken one aborts, i.e. is a finding): a refused checkpoint gives
/// MBS_ERR_INPUT and one non-empty line starting "fuzz.ckpt:0: "; an accepted one leaves a
/// finite state with 0 <= t <= t_end and warm-start bookkeeping inside its ring buffers.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ckpt_model.h" // fuzz_ckpt_model: the text of fuzz/ckpt_model.cfg
#include "mbspar/mbs_checkpoint.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_solver.h"

// the two readings: [0] the model as written (rk4), [1] with integrator.method = abm
static mbsModel *fuzz_mm[2];
static mbsState *fuzz_ss[2];
static int fuzz_ns[2];
static mbsModel *fuzz_m;
static mbsState *fuzz_s;
static int fuzz_nstage;

static void fuzz_fail(const char *what, const char *msg) {
  fprintf(stderr, "fuzz_checkpoint: broken promise: %s\n  message: \"%s\"\n", what, msg);
  abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  for (int k = 0; k < 2; k++) {
    mbsConfig *cfg = NULL;
    const char *abm[] = {"integrator.method=abm"};
    if (mbs_configParse(fuzz_ckpt_model, "ckpt_model.cfg", k ? abm : NULL, k, &cfg) ||
        mbs_configBuildModel(cfg, &fuzz_mm[k]) || mbs_stateCreate(fuzz_mm[k], &fuzz_ss[k])) {
      fprintf(stderr, "fuzz_checkpoint: cannot build the model: %s\n", mbs_errMsg());
      exit(1);
    }
    // as parallel/sim.c: the integrator's warm-start slots
    fuzz_ns[k] = mbs_integratorType(fuzz_mm[k]->opt.integrator)->nstage;
    if (mbs_stateSetStages(fuzz_mm[k], fuzz_ss[k], fuzz_ns[k])) exit(1);
    mbs_configDestroy(&cfg);
  }
  return 0;
}

static void fuzz_one(const uint8_t *bytes, size_t len) {
  const mbsModel *m = fuzz_m;
  mbsCkptHeader h;
  mbs_errClear();
  mbsErr e = mbs_ckptParse(bytes, len, "fuzz.ckpt", m, fuzz_nstage, &h);
  if (e) {
    const char *msg = mbs_errMsg();
    if (e != MBS_ERR_INPUT) fuzz_fail("error is not an input error", msg);
    if (strncmp(msg, "fuzz.ckpt:0: ", 13) || !msg[13]) fuzz_fail("message not PATH:0: ...", msg);
    if (strchr(msg, '\n')) fuzz_fail("message spans several lines", msg);
    return;
  }
  mbs_stateReset(m, fuzz_s);
  mbs_ckptApply(bytes, &h, m, fuzz_s);
  const mbsState *s = fuzz_s;
  for (int i = 0; i < m->nq; i++)
    if (!isfinite(s->q[i])) fuzz_fail("accepted a non-finite q", "");
  for (int i = 0; i < m->nv; i++)
    if (!isfinite(s->qd[i])) fuzz_fail("accepted a non-finite qd", "");
  size_t nh = (size_t)fuzz_nstage * MBS_WARM_HIST * (size_t)m->nlam;
  for (size_t i = 0; i < nh; i++)
    if (!isfinite(s->hist_lam[i])) fuzz_fail("accepted a non-finite warm-start history", "");
  if (!(s->time >= 0 && s->time <= m->opt.t_end))
    fuzz_fail("accepted a time outside [0, t_end]", "");
  if (!(h.dt_next > 0) || h.step < 0) fuzz_fail("accepted a bad step or step size", "");
  for (int k = 0; k < MBS_MAX_STAGE; k++)
    if (s->nhist[k] < 0 || s->nhist[k] > MBS_WARM_HIST || s->hist_head[k] < 0 ||
        s->hist_head[k] >= MBS_WARM_HIST)
      fuzz_fail("accepted warm-start bookkeeping outside the ring buffer", "");
}

static int fuzz_model(const uint8_t *data, size_t size) {
  fuzz_one(data, size);
  size_t want = mbs_ckptSize(fuzz_m, fuzz_nstage);
  if (size < sizeof(mbsCkptHeader)) return 0;
  unsigned char *buf = malloc(size);
  if (!buf) return 0;
  // the checksum made right
  memcpy(buf, data, size);
  if (size == want) {
    mbs_ckptSeal(buf, size);
    fuzz_one(buf, size);
  }
  // the model fingerprint and the checksum made right
  uint64_t fp = mbs_ckptFingerprint(fuzz_m);
  memcpy(buf + offsetof(mbsCkptHeader, fingerprint), &fp, sizeof fp);
  if (size == want) mbs_ckptSeal(buf, size);
  fuzz_one(buf, size);
  free(buf);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  for (int k = 0; k < 2; k++) {
    fuzz_m = fuzz_mm[k], fuzz_s = fuzz_ss[k], fuzz_nstage = fuzz_ns[k];
    fuzz_model(data, size);
  }
  return 0;
}
