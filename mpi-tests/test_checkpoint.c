/// \file test_checkpoint.c
/// The checkpoint reader (src/checkpoint.c) on a real checkpoint and on crafted damage, and the
/// size admission of the config (mbs_configCountBodies, mbs_configCheckMemory,
/// mbs_configBlame). usage: test_checkpoint FUZZ_DIR (fuzz/: ckpt_model.cfg and the seed
/// checkpoints written by `mbspar run fuzz/ckpt_model.cfg`).
#include <stddef.h>
#include <stdint.h>
#include "mbs_test.h"
#include "mbspar/mbs_checkpoint.h"
#include "mbspar/mbs_config.h"

static const char *fuzz_dir = "fuzz";

static unsigned char *read_bytes(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  *len = 0;
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc(n > 0 ? (size_t)n : 1);
  if (b && n > 0 && fread(b, 1, (size_t)n, f) == (size_t)n) *len = (size_t)n;
  fclose(f);
  return b;
}

// parse a damaged copy (damage applied, then resealed if asked): expect a refusal with frag
static void expect_refused(const unsigned char *good, size_t len, const mbsModel *m,
                           void (*damage)(unsigned char *), int reseal, const char *frag) {
  unsigned char *b = malloc(len);
  memcpy(b, good, len);
  damage(b);
  if (reseal) mbs_ckptSeal(b, len);
  mbsCkptHeader h;
  mbsErr e = mbs_ckptParse(b, len, "ck.bin", m, 4, &h);
  MBS_EXPECT(e == MBS_ERR_INPUT, "damage for '%s' accepted", frag);
  MBS_EXPECT(!strncmp(mbs_errMsg(), "ck.bin:0: ", 10) && strstr(mbs_errMsg(), frag),
             "message '%s' lacks 'ck.bin:0: ...%s'", mbs_errMsg(), frag);
  free(b);
}

static void put_double(unsigned char *b, size_t off, double v) {
  memcpy(b + off, &v, sizeof v);
}
static void d_nan_q(unsigned char *b) {
  put_double(b, sizeof(mbsCkptHeader) + 3 * sizeof(double), NAN);
}
static size_t g_len; // the checkpoint's length
// the last double before the checksum: warm-start history
static void d_inf_last(unsigned char *b) {
  put_double(b, g_len - 2 * sizeof(double), INFINITY);
}
static void d_neg_step(unsigned char *b) {
  int64_t s = -1;
  memcpy(b + offsetof(mbsCkptHeader, step), &s, sizeof s);
}
static void d_spec(unsigned char *b) {
  int32_t v = 2;
  memcpy(b + offsetof(mbsCkptHeader, have_spec), &v, sizeof v);
}
static void d_time(unsigned char *b) {
  put_double(b, offsetof(mbsCkptHeader, t), 1e9);
}
static void d_neg_time(unsigned char *b) {
  put_double(b, offsetof(mbsCkptHeader, t), -1);
}
static void d_nhist(unsigned char *b) {
  int32_t v = MBS_WARM_HIST + 1;
  memcpy(b + offsetof(mbsCkptHeader, nhist), &v, sizeof v);
}
static void d_neg_restarts(unsigned char *b) {
  int32_t v = -1;
  memcpy(b + offsetof(mbsCkptHeader, restarts), &v, sizeof v);
}
static void d_stagnated(unsigned char *b) { // more stagnated than non-converged solves
  int64_t nonconv;
  memcpy(&nonconv, b + offsetof(mbsCkptHeader, nonconv), sizeof nonconv);
  int32_t v = (int32_t)nonconv + 1;
  memcpy(b + offsetof(mbsCkptHeader, stagnated), &v, sizeof v);
}
static void d_fingerprint(unsigned char *b) {
  b[offsetof(mbsCkptHeader, fingerprint)] ^= 1;
}
static void d_flip(unsigned char *b) {
  b[sizeof(mbsCkptHeader) + 5] ^= 0x10;
}
static void d_version(unsigned char *b) {
  b[offsetof(mbsCkptHeader, version)] = 7;
}
static void d_magic(unsigned char *b) {
  b[0] = 'X';
}

static void test_reader(void) {
  char path[1024];
  snprintf(path, sizeof path, "%s/ckpt_model.cfg", fuzz_dir);
  char *text = mbs_test_slurp(path);
  MBS_EXPECT(text, "cannot read %s", path);
  if (!text) return;
  mbsConfig *c = NULL;
  mbsModel *m = NULL;
  MBS_EXPECT_OK(mbs_configParse(text, path, NULL, 0, &c));
  if (c) MBS_EXPECT_OK(mbs_configBuildModel(c, &m));
  free(text);
  if (!m) {
    mbs_configDestroy(&c);
    return;
  }
  snprintf(path, sizeof path, "%s/corpus/checkpoint/rk4_t0.02.bin", fuzz_dir);
  size_t len;
  unsigned char *good = read_bytes(path, &len);
  MBS_EXPECT(good && len == mbs_ckptSize(m, 4), "%s: %zu bytes, expected %zu", path, len,
             mbs_ckptSize(m, 4));
  if (good && len == mbs_ckptSize(m, 4)) {
    g_len = len;
    // the real checkpoint: accepted, and copied into a state
    mbsCkptHeader h;
    MBS_EXPECT_OK(mbs_ckptParse(good, len, "ck.bin", m, 4, &h));
    mbsState *s = NULL;
    MBS_EXPECT_OK(mbs_stateCreate(m, &s));
    if (s && !mbs_stateSetStages(m, s, 4)) {
      mbs_ckptApply(good, &h, m, s);
      MBS_EXPECT_NEAR(s->time, 0.02, 1e-12);
      double q;
      memcpy(&q, good + sizeof h, sizeof q);
      MBS_EXPECT(s->q[0] == q, "q[0] not copied");
      MBS_EXPECT(h.step == 20, "step %lld, expected 20", (long long)h.step);
    }
    mbs_stateDestroy(&s);
    // the first reader's refusals, messages unchanged
    expect_refused(good, len, m, d_magic, 0, "not an mbspar checkpoint (bad magic bytes)");
    expect_refused(good, len, m, d_version, 0, "unsupported checkpoint version 7");
    expect_refused(good, len, m, d_flip, 0, "checkpoint is corrupt (checksum mismatch)");
    expect_refused(good, len, m, d_fingerprint, 1, "written for another model (same sizes");
    expect_refused(good, len, m, d_time, 1, "beyond integrator.t_end");
    expect_refused(good, len, m, d_nhist, 1, "checkpoint header has invalid values");
    MBS_EXPECT(mbs_ckptParse(good, len - 1, "ck.bin", m, 4, &h) == MBS_ERR_INPUT &&
                   strstr(mbs_errMsg(), "truncated or padded (2983 bytes, expected 2984)"),
               "short file: %s", mbs_errMsg());
    MBS_EXPECT(mbs_ckptParse(good, 100, "ck.bin", m, 4, &h) == MBS_ERR_INPUT &&
                   strstr(mbs_errMsg(), "checkpoint is truncated (100 bytes)"),
               "header cut: %s", mbs_errMsg());
    MBS_EXPECT(mbs_ckptParse(good, len, "ck.bin", m, 1, &h) == MBS_ERR_INPUT &&
                   strstr(mbs_errMsg(), "another integrator (4 stages; integrator.method here "
                                        "has 1)"),
               "other integrator: %s", mbs_errMsg());
    // what a checksum cannot prove (issue 12): values no writer produces, sealed again
    expect_refused(good, len, m, d_nan_q, 1, "holds non-finite values");
    expect_refused(good, len, m, d_inf_last, 1, "holds non-finite values");
    expect_refused(good, len, m, d_neg_step, 1, "header has invalid values");
    expect_refused(good, len, m, d_spec, 1, "header has invalid values");
    expect_refused(good, len, m, d_neg_time, 1, "header has invalid values");
    expect_refused(good, len, m, d_neg_restarts, 1, "header has invalid values");
    expect_refused(good, len, m, d_stagnated, 1, "header has invalid values");
  }
  free(good);
  mbs_modelDestroy(&m);
  mbs_configDestroy(&c);
}

// a chain config with n links and the given overrides
static mbsConfig *parse_chain(const char *body, const char *const *sets, int nsets) {
  mbsConfig *c = NULL;
  mbsErr e = mbs_configParse(body, "size.cfg", sets, nsets, &c);
  MBS_EXPECT(e == MBS_OK, "parse: %s", mbs_errMsg());
  return c;
}

static void test_size(void) {
  static const char text[] =
      "model = {\n"
      "  bodies = ( { name = \"base\"; joint = { type = \"free\"; }; mass = 1; shape = \"sphere\";"
      " radius = 0.1; } );\n"
      "  chain = ( { parent = \"base\"; n = 1000; length = 0.1; mass = 0.1; },\n"
      "            { name = \"arm\"; n = 20; length = 0.1; mass = 0.1; } );\n"
      "  tree = { branching = 2; depth = 10; length = 0.1; mass = 0.1; };\n"
      "};\n";
  mbsConfig *c = parse_chain(text, NULL, 0);
  if (!c) return;
  long long n = 0;
  const void *largest = NULL;
  MBS_EXPECT_OK(mbs_configCountBodies(c, &n, &largest));
  MBS_EXPECT(n == 1 + 1000 + 20 + 1023, "counted %lld bodies, expected 2044", n);
  mbsModel *m = NULL;
  MBS_EXPECT_OK(mbs_configBuildModel(c, &m));
  MBS_EXPECT(m && m->nbody == n, "the count differs from the built model");
  mbs_modelDestroy(&m);
  // a budget: fits at 1000 bytes per body in 3 MB, not in 2 MB; the message names the
  // largest part, the tree (its depth, line 5)
  mbsMemBudget b = {1000, 0, 1, 3e6, "a test", "a test budget"};
  MBS_EXPECT_OK(mbs_configCheckMemory(c, &b, NULL));
  b.avail = 2e6;
  MBS_EXPECT(mbs_configCheckMemory(c, &b, NULL) == MBS_ERR_INPUT, "2044 bodies fit in 2 MB");
  const char *want = "size.cfg:5: model too large for the memory here: 2044 bodies";
  MBS_EXPECT(!strncmp(mbs_errMsg(), want, strlen(want)), "message: %s", mbs_errMsg());
  // two ranks on the host need twice as much
  b.avail = 3e6, b.ranks_here = 2;
  MBS_EXPECT(mbs_configCheckMemory(c, &b, NULL) == MBS_ERR_INPUT, "2 ranks x 2 MB fit in 3 MB");
  mbs_configDestroy(&c);

  // over the cap in all, each generator within it; and a --set blamed by name
  static const char cap[] = "model = { chain = ( { n = 30000000; length = 1; mass = 1; },\n"
                            "                    { n = 30000000; length = 1; mass = 1; } ); };\n";
  c = parse_chain(cap, NULL, 0);
  if (c) {
    MBS_EXPECT(mbs_configCountBodies(c, &n, NULL) == MBS_ERR_INPUT &&
                   strstr(mbs_errMsg(), "size.cfg:2: model: more than 50000000 bodies in all"),
               "cap: %s", mbs_errMsg());
    mbs_configDestroy(&c);
  }
  const char *sets[] = {"model.chain.n=40000"};
  static const char one[] = "model = { chain = { n = 4; length = 1; mass = 1; }; };\n";
  c = parse_chain(one, sets, 1);
  if (c) {
    mbsMemBudget b2 = {1000, 0, 1, 1e6, "a test", "a test budget"};
    MBS_EXPECT(mbs_configCheckMemory(c, &b2, &n) == MBS_ERR_USAGE && n == 40000 &&
                   strstr(mbs_errMsg(), "--set model.chain.n=40000: model too large") ==
                       mbs_errMsg(),
               "--set not named: %s", mbs_errMsg());
    // mbs_configBlame: a setting from the file, an aggregate changed by a --set
    mbs_errSet(MBS_ERR_INPUT, "something about the model");
    MBS_EXPECT(mbs_configBlame(c, "model", MBS_ERR_INPUT) == MBS_ERR_USAGE &&
                   !strcmp(mbs_errMsg(), "--set model.chain.n=40000: something about the model"),
               "blame model: %s", mbs_errMsg());
    mbs_errSet(MBS_ERR_INPUT, "t_end is wrong");
    MBS_EXPECT(mbs_configBlame(c, "integrator.t_end", MBS_ERR_INPUT) == MBS_ERR_INPUT &&
                   !strcmp(mbs_errMsg(), "size.cfg:1: t_end is wrong"),
               "blame a default: %s", mbs_errMsg());
    mbs_configDestroy(&c);
  }
}

// messages are one printable line whatever the input holds
static void test_escape(void) {
  mbs_errSet(MBS_ERR_INPUT, "a%sb", "\n\r\t\x1b[31m");
  MBS_EXPECT(!strcmp(mbs_errMsg(), "a\\n\\r\\t\\x1b[31mb"), "escaped: %s", mbs_errMsg());
}

int main(int argc, char **argv) {
  if (argc > 1) fuzz_dir = argv[1];
  test_reader();
  test_size();
  test_escape();
  return mbs_test_finish("test_checkpoint");
}
