/// \file report.c
/// Streaming JSON writer (see mbs_report.h): the one place that formats machine-readable output.
/// Objects are written one member per line with two-space indentation; numeric arrays written by
/// mbs_jsonNumberArray / mbs_jsonIntArray stay on one line so large vectors remain readable.
/// A file target goes to "PATH.tmp.PID" and is renamed over PATH only by a successful
/// mbs_jsonClose, so a failed run never clobbers an earlier report. mbs_jsonEndObject on the
/// top-level object closes the document early (memory writers: mbs_jsonBuffer is then complete).
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "mbspar/mbs_fault.h"
#include "mbspar/mbs_report.h"

#define MBS_JSON_MAXDEPTH 64

struct mbsJson {
  FILE *f;       // file or stdout target (NULL for memory writers)
  int is_stdout; // f is stdout: never closed or renamed
  char *path;    // final path (file targets)
  char *tmp;     // temporary path (file targets)
  char *buf;     // memory target
  size_t len, cap;
  int depth;                    // open containers, including the top-level object
  int count[MBS_JSON_MAXDEPTH]; // members written in each open container
  char kind[MBS_JSON_MAXDEPTH]; // 'o' object, 'a' array
  int failed;                   // a write failed or the writer was misused
  int mode;                     // MBS_JSON_RENAME, _EXCLUSIVE (link, not rename), _DIRECT
};

// append raw bytes to the target
static void mbs_jsonPut(mbsJson *j, const char *s, size_t n) {
  if (j->failed) return;
  if (j->f) {
    if (fwrite(s, 1, n, j->f) != n) j->failed = 1;
    return;
  }
  if (j->len + n + 1 > j->cap) {
    size_t cap = j->cap ? j->cap : 256;
    while (j->len + n + 1 > cap) cap *= 2;
    char *p = realloc(j->buf, cap);
    if (!p) {
      j->failed = 1;
      return;
    }
    j->buf = p;
    j->cap = cap;
  }
  memcpy(j->buf + j->len, s, n);
  j->len += n;
  j->buf[j->len] = 0;
}

static void mbs_jsonPuts(mbsJson *j, const char *s) {
  mbs_jsonPut(j, s, strlen(s));
}

static void mbs_jsonIndent(mbsJson *j, int depth) {
  static const char sp[] = "                                                                ";
  mbs_jsonPut(j, "\n", 1);
  int n = 2 * depth;
  while (n > 0) {
    int k = n > (int)(sizeof sp - 1) ? (int)(sizeof sp - 1) : n;
    mbs_jsonPut(j, sp, (size_t)k);
    n -= k;
  }
}

// a JSON string literal with escapes: quote, backslash, control characters
static void mbs_jsonQuoted(mbsJson *j, const char *s) {
  mbs_jsonPut(j, "\"", 1);
  if (!s) s = "";
  const char *run = s;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    const char *esc = NULL;
    char ubuf[8];
    switch (*p) {
    case '"':
      esc = "\\\"";
      break;
    case '\\':
      esc = "\\\\";
      break;
    case '\b':
      esc = "\\b";
      break;
    case '\f':
      esc = "\\f";
      break;
    case '\n':
      esc = "\\n";
      break;
    case '\r':
      esc = "\\r";
      break;
    case '\t':
      esc = "\\t";
      break;
    default:
      if (*p < 0x20 || *p == 0x7f) {
        snprintf(ubuf, sizeof ubuf, "\\u%04x", (unsigned)*p);
        esc = ubuf;
      }
    }
    if (esc) {
      mbs_jsonPut(j, run, (size_t)((const char *)p - run));
      mbs_jsonPuts(j, esc);
      run = (const char *)p + 1;
    }
  }
  mbs_jsonPuts(j, run);
  mbs_jsonPut(j, "\"", 1);
}

// separator, indentation and key of the next member; inline = stay on the current line
static void mbs_jsonMember(mbsJson *j, const char *key, int inline_) {
  if (j->depth <= 0) {
    j->failed = 1; // writing after the top-level object was closed
    return;
  }
  int d = j->depth - 1;
  if (j->count[d]++ > 0) mbs_jsonPut(j, ",", 1);
  if (inline_)
    mbs_jsonPut(j, " ", 1);
  else
    mbs_jsonIndent(j, j->depth);
  if (j->kind[d] == 'o') {
    if (!key) j->failed = 1; // object members need a key
    mbs_jsonQuoted(j, key ? key : "");
    mbs_jsonPut(j, ": ", 2);
  } else if (key) {
    j->failed = 1; // array elements have no key
  }
}

static void mbs_jsonNumberRaw(mbsJson *j, double v) {
  char b[32];
  if (!isfinite(v)) {
    mbs_jsonPut(j, "null", 4);
    return;
  }
  int n = snprintf(b, sizeof b, "%.17g", v);
  mbs_jsonPut(j, b, (size_t)n);
}

static mbsJson *mbs_jsonNew(void) {
  mbsJson *j = calloc(1, sizeof *j);
  if (!j) return NULL;
  j->depth = 1;
  j->kind[0] = 'o';
  return j;
}

mbsErr mbs_jsonOpen(const char *path, mbsJson **out) {
  return mbs_jsonOpenNew(path, MBS_JSON_RENAME, out);
}

mbsErr mbs_jsonOpenNew(const char *path, int mode, mbsJson **out) {
  *out = NULL;
  MBS_CHECK(path && path[0], MBS_ERR_USAGE, "empty JSON output path");
  mbsJson *j = mbs_jsonNew();
  if (!j) return mbs_errSet(MBS_ERR_NOMEM, "out of memory opening a JSON writer");
  if (strcmp(path, "-") == 0) {
    j->f = stdout;
    j->is_stdout = 1;
  } else {
    size_t n = strlen(path);
    j->path = malloc(n + 1);
    j->tmp = malloc(n + 32);
    if (!j->path || !j->tmp) {
      free(j->path);
      free(j->tmp);
      free(j);
      return mbs_errSet(MBS_ERR_NOMEM, "out of memory opening a JSON writer");
    }
    memcpy(j->path, path, n + 1);
    if (mode == MBS_JSON_DIRECT) // the caller's path is its temporary already
      memcpy(j->tmp, path, n + 1);
    else
      snprintf(j->tmp, n + 32, "%s.tmp.%ld", path, (long)getpid());
    j->mode = mode;
    if (mode == MBS_JSON_STREAM) { // the device or FIFO itself: no creation, no truncation
      int fd = MBS_FAULT_WRITE_POINT() ? -1 : open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY);
      struct stat st;
      if (fd >= 0 && (fstat(fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)))) {
        close(fd);
        fd = -1;
        errno = EINVAL;
      }
      if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      j->f = fd >= 0 ? fdopen(fd, "w") : NULL;
      if (fd >= 0 && !j->f) close(fd);
    } else {
      j->f = MBS_FAULT_WRITE_POINT() ? NULL : fopen(j->tmp, "w");
    }
    if (!j->f) {
      mbsErr e = mbs_errSet(MBS_ERR_IO, "%s: cannot open for writing (%s)", path,
                            errno == ENXIO ? "a FIFO without a reader" : strerror(errno));
      free(j->path);
      free(j->tmp);
      free(j);
      return e;
    }
  }
  mbs_jsonPut(j, "{", 1);
  *out = j;
  return MBS_OK;
}

mbsErr mbs_jsonOpenMemory(mbsJson **out) {
  *out = NULL;
  mbsJson *j = mbs_jsonNew();
  if (!j) return mbs_errSet(MBS_ERR_NOMEM, "out of memory opening a JSON writer");
  mbs_jsonPut(j, "{", 1);
  if (j->failed) {
    free(j);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory opening a JSON writer");
  }
  *out = j;
  return MBS_OK;
}

const char *mbs_jsonBuffer(const mbsJson *j) {
  return (j && j->buf) ? j->buf : "";
}

static void mbs_jsonBegin(mbsJson *j, const char *key, char kind) {
  if (!j) return;
  mbs_jsonMember(j, key, 0);
  if (j->depth >= MBS_JSON_MAXDEPTH) {
    j->failed = 1;
    return;
  }
  mbs_jsonPut(j, kind == 'o' ? "{" : "[", 1);
  j->kind[j->depth] = kind;
  j->count[j->depth] = 0;
  j->depth++;
}

static void mbs_jsonEnd(mbsJson *j, char kind) {
  if (!j) return;
  if (j->depth == 1 && kind == 'o') {
    // closing the top-level object early (memory writers: the buffer is then a whole document)
    j->depth = 0;
    mbs_jsonPuts(j, j->count[0] > 0 ? "\n}\n" : "}\n");
    return;
  }
  if (j->depth <= 1 || j->kind[j->depth - 1] != kind) {
    j->failed = 1; // unbalanced begin/end
    return;
  }
  j->depth--;
  if (j->count[j->depth] > 0) mbs_jsonIndent(j, j->depth);
  mbs_jsonPut(j, kind == 'o' ? "}" : "]", 1);
}

void mbs_jsonBeginObject(mbsJson *j, const char *key) {
  mbs_jsonBegin(j, key, 'o');
}
void mbs_jsonEndObject(mbsJson *j) {
  mbs_jsonEnd(j, 'o');
}
void mbs_jsonBeginArray(mbsJson *j, const char *key) {
  mbs_jsonBegin(j, key, 'a');
}
void mbs_jsonEndArray(mbsJson *j) {
  mbs_jsonEnd(j, 'a');
}

void mbs_jsonNumber(mbsJson *j, const char *key, double v) {
  if (!j) return;
  mbs_jsonMember(j, key, 0);
  mbs_jsonNumberRaw(j, v);
}

void mbs_jsonInt(mbsJson *j, const char *key, long v) {
  if (!j) return;
  char b[32];
  mbs_jsonMember(j, key, 0);
  int n = snprintf(b, sizeof b, "%ld", v);
  mbs_jsonPut(j, b, (size_t)n);
}

void mbs_jsonBool(mbsJson *j, const char *key, int v) {
  if (!j) return;
  mbs_jsonMember(j, key, 0);
  mbs_jsonPuts(j, v ? "true" : "false");
}

void mbs_jsonString(mbsJson *j, const char *key, const char *v) {
  if (!j) return;
  mbs_jsonMember(j, key, 0);
  if (v)
    mbs_jsonQuoted(j, v);
  else
    mbs_jsonPut(j, "null", 4);
}

void mbs_jsonNull(mbsJson *j, const char *key) {
  if (!j) return;
  mbs_jsonMember(j, key, 0);
  mbs_jsonPut(j, "null", 4);
}

void mbs_jsonNumberArrayOpen(mbsJson *j, const char *key) {
  if (!j) return;
  mbs_jsonMember(j, key, 0);
  mbs_jsonPut(j, "[", 1);
}

void mbs_jsonNumberArrayPart(mbsJson *j, const double *v, long n, long at) {
  if (!j) return;
  for (long i = 0; i < n; i++) {
    if (at + i) mbs_jsonPut(j, ", ", 2);
    mbs_jsonNumberRaw(j, v[i]);
  }
}

void mbs_jsonNumberArrayClose(mbsJson *j) {
  if (!j) return;
  mbs_jsonPut(j, "]", 1);
}

void mbs_jsonNumberArray(mbsJson *j, const char *key, const double *v, long n) {
  mbs_jsonNumberArrayOpen(j, key);
  mbs_jsonNumberArrayPart(j, v, n, 0);
  mbs_jsonNumberArrayClose(j);
}

void mbs_jsonIntArray(mbsJson *j, const char *key, const int *v, long n) {
  if (!j) return;
  char b[16];
  mbs_jsonMember(j, key, 0);
  mbs_jsonPut(j, "[", 1);
  for (long i = 0; i < n; i++) {
    if (i) mbs_jsonPut(j, ", ", 2);
    int k = snprintf(b, sizeof b, "%d", v[i]);
    mbs_jsonPut(j, b, (size_t)k);
  }
  mbs_jsonPut(j, "]", 1);
}

static void mbs_jsonFree(mbsJson *j) {
  free(j->path);
  free(j->tmp);
  free(j->buf);
  free(j);
}

mbsErr mbs_jsonClose(mbsJson **pj) {
  if (!pj || !*pj) return MBS_OK;
  mbsJson *j = *pj;
  *pj = NULL;
  mbsErr e = MBS_OK;
  if (j->depth > 1) j->failed = 1; // unbalanced containers
  // close the top-level object (unless mbs_jsonEndObject already did)
  if (!j->failed && j->depth == 1) {
    j->depth = 0;
    mbs_jsonPuts(j, j->count[0] > 0 ? "\n}\n" : "}\n");
  }
  if (j->is_stdout) {
    if (fflush(stdout) != 0 || ferror(stdout)) j->failed = 1;
    if (j->failed) e = mbs_errSet(MBS_ERR_IO, "error writing JSON to standard output");
  } else if (j->f) {
    if (fflush(j->f) != 0 || ferror(j->f)) j->failed = 1;
    if (fclose(j->f) != 0) j->failed = 1;
    if (MBS_FAULT_WRITE_POINT()) j->failed = 1;
    // exclusive: link() fails if PATH exists, so two runs cannot both claim it
    int rc = j->failed || j->mode == MBS_JSON_DIRECT || j->mode == MBS_JSON_STREAM ? 0
             : MBS_FAULT_WRITE_POINT()                                             ? -1
             : j->mode == MBS_JSON_EXCLUSIVE ? link(j->tmp, j->path)
                                             : rename(j->tmp, j->path);
    if (!j->failed && rc != 0) {
      e = errno == EEXIST && j->mode == MBS_JSON_EXCLUSIVE
              ? mbs_errSet(MBS_ERR_IO, "%s exists; not overwriting it (use --force)", j->path)
              : mbs_errSet(MBS_ERR_IO, "%s: cannot rename the temporary report into place: %s",
                           j->path, strerror(errno));
      remove(j->tmp);
    } else if (!j->failed && j->mode == MBS_JSON_EXCLUSIVE) {
      remove(j->tmp); // the report is in place under its name (a second link)
    } else if (j->failed) {
      e = mbs_errSet(MBS_ERR_IO, "%s: error writing JSON (nothing written)", j->path);
      if (j->mode != MBS_JSON_STREAM) remove(j->tmp);
    }
  } else if (j->failed) {
    e = mbs_errSet(MBS_ERR_IO, "error writing JSON to memory (out of memory or misuse)");
  }
  mbs_jsonFree(j);
  return e;
}

void mbs_jsonAbandon(mbsJson **pj) {
  if (!pj || !*pj) return;
  mbsJson *j = *pj;
  *pj = NULL;
  if (j->f && !j->is_stdout) {
    fclose(j->f);
    if (j->mode != MBS_JSON_STREAM) remove(j->tmp);
  }
  if (j->is_stdout) fflush(stdout);
  mbs_jsonFree(j);
}
