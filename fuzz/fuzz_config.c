/// \file fuzz_config.c
/// libFuzzer target: the config reader from a byte buffer, as every verb runs it before anything
/// else (parallel/main.c): mbs_configParse (with --set overrides), the size check
/// mbs_configCheckMemory, mbs_configBuildModel, and the JSON echo of the resolved config.
///
/// Input: the bytes are the config text (cut at the first NUL). Leading lines
/// `#set KEY=VALUE` (libconfig comments, so a seed stays a valid config) are also passed as
/// --set overrides, at most 8, in order.
///
/// Beyond "no crash, no sanitizer report", the target checks the promises of docs/cli.md and
/// aborts (a finding) when one is broken:
///  - an error is MBS_ERR_INPUT or MBS_ERR_USAGE (exit code 2), never out-of-memory or internal;
///  - its message is one non-empty line that starts with "fuzz.cfg:LINE: " (LINE >= 1) or,
///    for input and usage errors of an override, "--set KEY=VALUE" / "mbspar: --set";
///  - a model that builds has bodies and finite masses, and its JSON echo can be written.
/// The memory budget is 64 MB at ~2 kB per body (about 32,000 bodies), so larger models are
/// refused by the size check, as mbspar refuses models larger than the host.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_report.h"

#define FUZZ_MAXSET      8
#define FUZZ_MAXLOOPWORK 20000 // bodies x loops built (the work budget below)

static void fuzz_fail(const char *what, const char *msg) {
  fprintf(stderr, "fuzz_config: broken promise: %s\n  message: \"%s\"\n", what, msg);
  abort();
}

// one line, non-empty, located: "fuzz.cfg:N: ...", "--set K=V: ..." or "mbspar: --set ..."
static void fuzz_checkMessage(mbsErr e) {
  const char *msg = mbs_errMsg();
  if (e != MBS_ERR_INPUT && e != MBS_ERR_USAGE) fuzz_fail("error is not an input error", msg);
  if (!msg[0]) fuzz_fail("empty message", msg);
  if (strchr(msg, '\n') || strchr(msg, '\r')) fuzz_fail("message spans several lines", msg);
  if (!strncmp(msg, "--set ", 6) || !strncmp(msg, "mbspar: --set ", 14)) return;
  const char *p = "fuzz.cfg:";
  if (strncmp(msg, p, strlen(p))) fuzz_fail("message does not start with FILE:", msg);
  char *end = NULL;
  long line = strtol(msg + strlen(p), &end, 10);
  if (end == msg + strlen(p) || line < 1 || strncmp(end, ": ", 2))
    fuzz_fail("message does not start with FILE:LINE: (LINE >= 1)", msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;

  // leading "#set KEY=VALUE" lines are overrides too
  char *sets[FUZZ_MAXSET];
  int nset = 0;
  for (char *p = text; nset < FUZZ_MAXSET && !strncmp(p, "#set ", 5);) {
    char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    sets[nset] = malloc(n - 5 + 1);
    if (!sets[nset]) break;
    memcpy(sets[nset], p + 5, n - 5);
    sets[nset][n - 5] = 0;
    nset++;
    if (!nl) break;
    p = nl + 1;
  }

  mbsConfig *cfg = NULL;
  mbsModel *m = NULL;
  long long nbody = 0;
  int skip = 0; // beyond the work budget: checked up to the build only
  mbs_errClear();
  mbsErr e = mbs_configParse(text, "fuzz.cfg", (const char *const *)sets, nset, &cfg);
  // model.urdf: read as parallel/main.c does (by rank 0, then mbs_configSetUrdf); a missing
  // or unreadable file is an input error naming the config line
  if (!e && cfg->urdf_path) {
    struct stat st; // regular files only: a fuzzed path must not name a FIFO or a device
    FILE *f =
        !stat(cfg->urdf_path, &st) && S_ISREG(st.st_mode) ? fopen(cfg->urdf_path, "rb") : NULL;
    char *utext = NULL;
    size_t ulen = 0;
    if (f) {
      utext = malloc(1 << 20);
      ulen = utext ? fread(utext, 1, 1 << 20, f) : 0;
      fclose(f);
    }
    if (!utext)
      e = mbs_errSet(MBS_ERR_INPUT, "%s:%d: model.urdf: cannot read %s", cfg->filename,
                     cfg->urdf_line, cfg->urdf_path);
    else
      e = mbs_configSetUrdf(cfg, utext, ulen);
    free(utext);
  }
  if (!e) {
    mbsMemBudget b = {2048, 0, 1, 64e6, "the fuzz target", "a 64 MB budget"};
    e = mbs_configCheckMemory(cfg, &b, &nbody);
  }
  // a work budget too: building a loop model assembles q0 (Newton steps over the closure
  // equations, O(loops x bodies) each, and a dense factorization), which for configs/ladder.cfg
  // (2100 bodies, 100 loops) takes ~50 s under ASan; such inputs would time out on the work,
  // not on a bug, so they stop after the checks that precede the build
  if (!e && cfg->nloops > 0 && nbody * (long long)cfg->nloops > FUZZ_MAXLOOPWORK) skip = 1;
  if (!e && !skip) e = mbs_configBuildModel(cfg, &m);
  if (e) {
    fuzz_checkMessage(e);
  } else if (!skip) {
    if (m->nbody < 1 || m->nq < 0 || m->nv < 0) fuzz_fail("built an empty model", "");
    if (!(mbs_modelTotalMass(m) > 0)) fuzz_fail("built a model without mass", "");
    mbsJson *j = NULL;
    if (mbs_jsonOpenMemory(&j) == MBS_OK) {
      mbs_jsonBeginObject(j, "config");
      mbs_configWriteJson(cfg, j);
      mbs_jsonEndObject(j);
      if (mbs_jsonClose(&j) != MBS_OK) fuzz_fail("the JSON echo failed", mbs_errMsg());
    }
    // the inverse motion's lists are checked against the model only here (inverse verb)
    if (cfg->inverse.present) {
      mbsReal *qs = malloc(((size_t)m->nq + 1) * sizeof *qs);
      mbsReal *qe = malloc(((size_t)m->nq + 1) * sizeof *qe);
      if (qs && qe) {
        mbsErr ei = mbs_configInverse(cfg, m, qs, qe);
        if (ei) fuzz_checkMessage(ei);
      }
      free(qs);
      free(qe);
    }
  }
  mbs_modelDestroy(&m);
  mbs_configDestroy(&cfg);
  for (int k = 0; k < nset; k++) free(sets[k]);
  free(text);
  return 0;
}
