/// \file test_report.c
/// Tests of the JSON writer (src/report.c): the output is strict JSON, strings are escaped,
/// doubles round-trip through %.17g, NaN/Inf become null, misuse is reported, and a file target
/// is replaced only by a successful close.
/// Also a tool for the CLI tests: `test_report --validate FILE [KEY ...]` checks that FILE is
/// valid JSON with the given top-level keys.
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "mbs_json_check.h"
#include "mbs_test.h"
#include "mbspar/mbs_report.h"

static int validate(int argc, char **argv) {
  char *text = mbs_test_slurp(argv[2]);
  if (!text) {
    fprintf(stderr, "%s: cannot read\n", argv[2]);
    return 1;
  }
  const char *why;
  int bad = 0;
  if (!mbs_jsonValid(text, &why)) {
    fprintf(stderr, "%s: invalid JSON: %s\n", argv[2], why);
    bad = 1;
  }
  for (int k = 3; k < argc && !bad; k++)
    if (!mbs_jsonHasTopKey(text, argv[k])) {
      fprintf(stderr, "%s: missing top-level key \"%s\"\n", argv[2], argv[k]);
      bad = 1;
    }
  free(text);
  if (!bad) printf("%s: valid JSON with %d required key(s)\n", argv[2], argc - 3);
  return bad;
}

// the validator itself must reject what is not JSON
static void test_validator(void) {
  static const char *good[] = {"{}", "[]", "{\"a\": [1, -2.5e-3, 0, true, null, \"x\\n\\u00e9\"]}",
                               " {\"a\":{\"b\":[]}} "};
  static const char *bad[] = {"{",      "{\"a\" 1}", "[1,]", "{\"a\":nan}", "[01]",     "[1.]",
                              "\"\t\"", "[\"\\x\"]", "{} x", "[inf]",       "{'a': 1}", "[-]"};
  for (size_t k = 0; k < sizeof good / sizeof good[0]; k++)
    MBS_EXPECT(mbs_jsonValid(good[k], NULL), "valid JSON rejected: %s", good[k]);
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
    MBS_EXPECT(!mbs_jsonValid(bad[k], NULL), "invalid JSON accepted: %s", bad[k]);
}

static void test_memory_document(void) {
  mbsJson *j;
  MBS_EXPECT_OK(mbs_jsonOpenMemory(&j));
  mbs_jsonString(j, "schema", "test");
  mbs_jsonString(j, "esc",
                 "quote\" back\\ nl\n cr\r tab\t bs\b ff\f ctl\x01 del\x7f utf8 \xc3\xa9");
  mbs_jsonString(j, "we\"ird\nkey", "v");
  mbs_jsonNumber(j, "tenth", 0.1);
  mbs_jsonNumber(j, "third", 1.0 / 3.0);
  mbs_jsonNumber(j, "tiny", 4.9406564584124654e-324);
  mbs_jsonNumber(j, "big", -1.7976931348623157e308);
  mbs_jsonNumber(j, "nan", NAN);
  mbs_jsonNumber(j, "inf", INFINITY);
  mbs_jsonInt(j, "int", -42);
  mbs_jsonBool(j, "yes", 1);
  mbs_jsonNull(j, "nothing");
  mbs_jsonString(j, "nullstr", NULL);
  double v[4] = {1.5, NAN, -INFINITY, 1e-300};
  int iv[3] = {1, -2, 3};
  mbs_jsonNumberArray(j, "arr", v, 4);
  mbs_jsonIntArray(j, "iarr", iv, 3);
  mbs_jsonNumberArray(j, "empty", v, 0);
  mbs_jsonBeginObject(j, "obj");
  mbs_jsonBeginArray(j, "rows");
  for (int r = 0; r < 3; r++) mbs_jsonNumberArray(j, NULL, v, 2);
  mbs_jsonBeginObject(j, NULL);
  mbs_jsonEndObject(j);
  mbs_jsonString(j, NULL, "s");
  mbs_jsonEndArray(j);
  mbs_jsonBeginObject(j, "emptyobj");
  mbs_jsonEndObject(j);
  mbs_jsonEndObject(j);
  mbs_jsonEndObject(j); // closes the document
  const char *s = mbs_jsonBuffer(j);
  const char *why = "";
  MBS_EXPECT(mbs_jsonValid(s, &why), "writer output is not JSON (%s):\n%s", why, s);
  MBS_EXPECT(strstr(s, "\"quote\\\" back\\\\ nl\\n cr\\r tab\\t bs\\b ff\\f ctl\\u0001 del\\u007f "
                       "utf8 \xc3\xa9\""),
             "string escaping wrong:\n%s", s);
  MBS_EXPECT(strstr(s, "\"we\\\"ird\\nkey\": \"v\""), "key escaping wrong");
  MBS_EXPECT(strstr(s, "\"nan\": null") && strstr(s, "\"inf\": null"), "NaN/Inf not null");
  MBS_EXPECT(strstr(s, "\"arr\": [1.5, null, null, 1e-300]"), "array wrong:\n%s", s);
  MBS_EXPECT(strstr(s, "\"iarr\": [1, -2, 3]"), "int array wrong");
  MBS_EXPECT(strstr(s, "\"empty\": []"), "empty array wrong");
  MBS_EXPECT(strstr(s, "\"nullstr\": null"), "NULL string not null");
  MBS_EXPECT(mbs_jsonHasTopKey(s, "obj") && mbs_jsonHasTopKey(s, "schema") &&
                 !mbs_jsonHasTopKey(s, "rows"),
             "top-level key lookup wrong");
  // %.17g round trip
  const char *t = strstr(s, "\"third\": ");
  MBS_EXPECT(t && strtod(t + 9, NULL) == 1.0 / 3.0, "1/3 does not round-trip");
  t = strstr(s, "\"tenth\": ");
  MBS_EXPECT(t && strtod(t + 9, NULL) == 0.1, "0.1 does not round-trip");
  t = strstr(s, "\"tiny\": ");
  MBS_EXPECT(t && strtod(t + 8, NULL) == 4.9406564584124654e-324, "denormal does not round-trip");
  MBS_EXPECT_OK(mbs_jsonClose(&j));
  MBS_EXPECT(j == NULL, "close did not NULL the handle");
}

// an array written in parts (accel's results streamed from the ranks, parallel/accel_stream.c)
// has the bytes of the array written whole, an empty part anywhere included
static void test_array_parts(void) {
  double v[7] = {1.5, NAN, -2.25, 1e-300, 0.1, 7, -0.0};
  mbsJson *a, *b;
  MBS_EXPECT_OK(mbs_jsonOpenMemory(&a));
  MBS_EXPECT_OK(mbs_jsonOpenMemory(&b));
  mbs_jsonInt(a, "before", 1);
  mbs_jsonInt(b, "before", 1);
  mbs_jsonNumberArray(a, "whole", v, 7);
  mbs_jsonNumberArrayOpen(b, "whole");
  mbs_jsonNumberArrayPart(b, v, 0, 0); // an empty slice first (a rank without dofs)
  mbs_jsonNumberArrayPart(b, v, 3, 0);
  mbs_jsonNumberArrayPart(b, v + 3, 0, 3);
  mbs_jsonNumberArrayPart(b, v + 3, 4, 3);
  mbs_jsonNumberArrayClose(b);
  mbs_jsonNumberArray(a, "none", v, 0);
  mbs_jsonNumberArrayOpen(b, "none");
  mbs_jsonNumberArrayPart(b, v, 0, 0);
  mbs_jsonNumberArrayClose(b);
  mbs_jsonInt(a, "after", 2);
  mbs_jsonInt(b, "after", 2);
  mbs_jsonEndObject(a);
  mbs_jsonEndObject(b);
  const char *sa = mbs_jsonBuffer(a), *sb = mbs_jsonBuffer(b);
  MBS_EXPECT(!strcmp(sa, sb), "array in parts:\n%s\nwhole:\n%s", sb, sa);
  MBS_EXPECT(strstr(sb, "\"whole\": [1.5, null, -2.25, 1e-300, 0.10000000000000001, 7, -0]"),
             "parts wrong:\n%s", sb);
  MBS_EXPECT_OK(mbs_jsonClose(&a));
  MBS_EXPECT_OK(mbs_jsonClose(&b));
}

static void test_misuse(void) {
  mbsJson *j;
  // unbalanced: an array closed as an object
  MBS_EXPECT_OK(mbs_jsonOpenMemory(&j));
  mbs_jsonBeginArray(j, "a");
  mbs_jsonEndObject(j);
  MBS_EXPECT(mbs_jsonClose(&j) == MBS_ERR_IO, "unbalanced document not reported");
  // a key inside an array, no key inside an object
  MBS_EXPECT_OK(mbs_jsonOpenMemory(&j));
  mbs_jsonBeginArray(j, "a");
  mbs_jsonInt(j, "k", 1);
  mbs_jsonEndArray(j);
  MBS_EXPECT(mbs_jsonClose(&j) == MBS_ERR_IO, "keyed array element not reported");
  MBS_EXPECT_OK(mbs_jsonOpenMemory(&j));
  mbs_jsonInt(j, NULL, 1);
  MBS_EXPECT(mbs_jsonClose(&j) == MBS_ERR_IO, "keyless object member not reported");
  // an empty document is {}
  MBS_EXPECT_OK(mbs_jsonOpenMemory(&j));
  mbs_jsonEndObject(j);
  MBS_EXPECT(strcmp(mbs_jsonBuffer(j), "{}\n") == 0, "empty document is \"%s\"", mbs_jsonBuffer(j));
  MBS_EXPECT_OK(mbs_jsonClose(&j));
  mbs_jsonAbandon(&j); // NULL is a no-op
  MBS_EXPECT_OK(mbs_jsonClose(&j));
}

static void test_file_target(void) {
  char dir[] = "/tmp/mbs_test_report.XXXXXX";
  if (!mkdtemp(dir)) {
    MBS_EXPECT(0, "mkdtemp failed");
    return;
  }
  char path[256], path2[300];
  snprintf(path, sizeof path, "%s/r.json", dir);
  mbsJson *j;
  // a successful close renames into place
  MBS_EXPECT_OK(mbs_jsonOpen(path, &j));
  mbs_jsonInt(j, "version", 1);
  MBS_EXPECT_OK(mbs_jsonClose(&j));
  char *s = mbs_test_slurp(path);
  MBS_EXPECT(s && mbs_jsonValid(s, NULL) && strstr(s, "\"version\": 1"), "first report wrong");
  free(s);
  // an abandoned writer leaves the earlier file intact and no temporary behind
  MBS_EXPECT_OK(mbs_jsonOpen(path, &j));
  mbs_jsonInt(j, "version", 2);
  mbs_jsonAbandon(&j);
  s = mbs_test_slurp(path);
  MBS_EXPECT(s && strstr(s, "\"version\": 1"), "abandon clobbered the earlier report");
  free(s);
  // a misused (failed) writer does not replace the file either
  MBS_EXPECT_OK(mbs_jsonOpen(path, &j));
  mbs_jsonInt(j, "version", 3);
  mbs_jsonBeginArray(j, "open");
  MBS_EXPECT(mbs_jsonClose(&j) == MBS_ERR_IO, "unbalanced file document not reported");
  s = mbs_test_slurp(path);
  MBS_EXPECT(s && strstr(s, "\"version\": 1"), "a failed close clobbered the earlier report");
  free(s);
  // the directory holds only r.json
  snprintf(path2, sizeof path2, "ls -A %s | wc -l", dir);
  FILE *p = popen(path2, "r");
  int nfiles = -1;
  if (p) {
    if (fscanf(p, "%d", &nfiles) != 1) nfiles = -1;
    pclose(p);
  }
  MBS_EXPECT(nfiles == 1, "temporary files left behind (%d entries)", nfiles);
  // an unwritable target is an I/O error at open
  snprintf(path2, sizeof path2, "%s/missing/dir/r.json", dir);
  MBS_EXPECT(mbs_jsonOpen(path2, &j) == MBS_ERR_IO && j == NULL, "open in a missing dir succeeded");
  remove(path);
  rmdir(dir);
}

int main(int argc, char **argv) {
  if (argc >= 3 && strcmp(argv[1], "--validate") == 0) return validate(argc, argv);
  test_validator();
  test_memory_document();
  test_array_parts();
  test_misuse();
  test_file_target();
  return mbs_test_finish("test_report");
}
