/// \file fuzz_urdf.c
/// libFuzzer target: the URDF reader from a byte buffer, as mbspar runs it for a config with
/// `model.urdf` (parallel/main.c): the file's bytes go to mbs_configSetUrdf (libxml2 with the
/// hardening of src/urdf.c, then the robot's topology and the config's URDF entries), then the
/// size check mbs_configCheckMemory, mbs_configBuildModel and the JSON echo.
///
/// Input: the bytes are the URDF text, as read from a file (NUL bytes included: the reader must
/// refuse them itself). The config around it is fixed and names `fuzz.urdf`.
///
/// Beyond "no crash, no sanitizer report", the target checks the promises of docs/urdf.md and
/// docs/cli.md and aborts (a finding) when one is broken:
///  - an error is MBS_ERR_INPUT (exit code 2), never out-of-memory, usage or internal;
///  - its message is one non-empty line that starts with "fuzz.urdf:LINE: " (LINE >= 1) or
///    "fuzz.urdf: " (a defect of the whole file: encoding, empty file, no root);
///  - a model that builds has bodies, finite masses and a JSON echo that can be written.
/// The memory budget is 64 MB at ~2 kB per body, as in fuzz_config.c.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_report.h"

static const char fuzz_urdfConfig[] = "model = { urdf = \"fuzz.urdf\"; };\n"
                                      "solver = { method = \"aba\"; };\n";

static void fuzz_fail(const char *what, const char *msg) {
  fprintf(stderr, "fuzz_urdf: broken promise: %s\n  message: \"%s\"\n", what, msg);
  abort();
}

// one line, non-empty, located: "fuzz.urdf:N: ..." or "fuzz.urdf: ..."
static void fuzz_checkMessage(mbsErr e) {
  const char *msg = mbs_errMsg();
  if (e != MBS_ERR_INPUT) fuzz_fail("error is not an input error", msg);
  if (!msg[0]) fuzz_fail("empty message", msg);
  if (strchr(msg, '\n') || strchr(msg, '\r')) fuzz_fail("message spans several lines", msg);
  const char *p = strstr(msg, "fuzz.urdf:");
  if (p != msg) fuzz_fail("message does not start with the URDF file's name", msg);
  p += strlen("fuzz.urdf:");
  if (*p == ' ') return; // a defect of the whole file
  char *end = NULL;
  long line = strtol(p, &end, 10);
  if (end == p || line < 1 || strncmp(end, ": ", 2))
    fuzz_fail("message does not start with FILE:LINE: (LINE >= 1)", msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mbsConfig *cfg = NULL;
  mbsModel *m = NULL;
  long long nbody = 0;
  mbs_errClear();
  mbsErr e = mbs_configParse(fuzz_urdfConfig, "fuzz.cfg", NULL, 0, &cfg);
  if (e) fuzz_fail("the fixed config does not parse", mbs_errMsg());
  // the path is resolved against the config's directory; the message names what the user wrote
  e = mbs_configSetUrdf(cfg, (const char *)data, size);
  if (!e) {
    mbsMemBudget b = {2048, 0, 1, 64e6, "the fuzz target", "a 64 MB budget"};
    e = mbs_configCheckMemory(cfg, &b, &nbody);
  }
  if (!e) e = mbs_configBuildModel(cfg, &m);
  if (e) {
    fuzz_checkMessage(e);
  } else {
    if (m->nbody < 1 || m->nq < 0 || m->nv < 0) fuzz_fail("built an empty model", "");
    if (!(mbs_modelTotalMass(m) > 0)) fuzz_fail("built a model without mass", "");
    mbsJson *j = NULL;
    if (mbs_jsonOpenMemory(&j) == MBS_OK) {
      mbs_jsonBeginObject(j, "config");
      mbs_configWriteJson(cfg, j);
      mbs_jsonEndObject(j);
      if (mbs_jsonClose(&j) != MBS_OK) fuzz_fail("the JSON echo failed", mbs_errMsg());
    }
  }
  mbs_modelDestroy(&m);
  mbs_configDestroy(&cfg);
  return 0;
}
