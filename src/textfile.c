/// \file textfile.c
/// Reading input files: regular files only, checked before reading and without blocking, and
/// the text check (see mbs_textfile.h).
#define _POSIX_C_SOURCE 200809L
#include "mbspar/mbs_textfile.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// what a non-regular file is, for the message
static const char *mbs_fileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

const char *mbs_fileNotRegular(const char *path) {
  struct stat st;
  if (!path || stat(path, &st) != 0 || S_ISREG(st.st_mode)) return NULL;
  return mbs_fileKind(st.st_mode);
}

mbsErr mbs_fileOpen(const char *path, int *pfd, size_t *size) {
  *pfd = -1;
  // O_NONBLOCK: opening a FIFO for reading returns at once (a blocking open waits for a writer)
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    return mbs_errSet(MBS_ERR_INPUT, "%s:0: cannot open file for reading: %s", path,
                      strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    return mbs_errSet(MBS_ERR_INPUT, "%s:0: cannot read: %s", path, strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return mbs_errSet(MBS_ERR_INPUT, "%s:0: cannot read: is %s, not a regular file", path,
                      mbs_fileKind(st.st_mode));
  }
  *pfd = fd, *size = (size_t)st.st_size;
  return MBS_OK;
}

mbsErr mbs_fileReadSome(int fd, const char *path, char *buf, size_t cap, size_t *n) {
  *n = 0;
  while (*n < cap) {
    ssize_t k = read(fd, buf + *n, cap - *n);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return mbs_errSet(MBS_ERR_INPUT, "%s:0: read error: %s", path, strerror(errno));
    if (k == 0) break;
    *n += (size_t)k;
  }
  return MBS_OK;
}

mbsErr mbs_fileRead(const char *path, char **text, size_t *len) {
  *text = NULL;
  if (len) *len = 0;
  int fd;
  size_t size;
  mbsErr oe = mbs_fileOpen(path, &fd, &size);
  if (oe) return oe;
  // the size fstat gives, then to the end (a file that grows meanwhile is read as it is then)
  size_t cap = size + 1, n = 0;
  char *buf = malloc(cap);
  mbsErr e = buf ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "%s: out of memory reading file", path);
  while (!e) {
    if (n + 1 >= cap) {
      char *b = cap < ((size_t)-1) / 2 ? realloc(buf, 2 * cap) : NULL;
      if (!b) {
        e = mbs_errSet(MBS_ERR_NOMEM, "%s: out of memory reading file", path);
        break;
      }
      buf = b, cap *= 2;
    }
    ssize_t k = read(fd, buf + n, cap - 1 - n);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) e = mbs_errSet(MBS_ERR_INPUT, "%s:0: read error: %s", path, strerror(errno));
    if (k <= 0) break;
    n += (size_t)k;
  }
  close(fd);
  if (e) {
    free(buf);
    return e;
  }
  buf[n] = 0;
  *text = buf;
  if (len) *len = n;
  return MBS_OK;
}

// length of the UTF-8 sequence at p (at most n bytes), 0 if it is not well-formed UTF-8
static size_t mbs_utf8Len(const unsigned char *p, size_t n) {
  unsigned c = p[0];
  size_t k;
  unsigned min;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF)
    k = 2, min = 0x80;
  else if (c >= 0xE0 && c <= 0xEF)
    k = 3, min = 0x800;
  else if (c >= 0xF0 && c <= 0xF4)
    k = 4, min = 0x10000;
  else
    return 0;
  if (k > n) return 0;
  unsigned v = c & (0x7Fu >> k);
  for (size_t i = 1; i < k; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    v = (v << 6) | (p[i] & 0x3Fu);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0; // overlong, surrogate
  return k;
}

mbsErr mbs_textCheck(const char *text, size_t len, const char *path) {
  const unsigned char *p = (const unsigned char *)text;
  if (len >= 4 && ((p[0] == 0xFF && p[1] == 0xFE && p[2] == 0 && p[3] == 0) ||
                   (p[0] == 0 && p[1] == 0 && p[2] == 0xFE && p[3] == 0xFF)))
    return mbs_errSet(MBS_ERR_INPUT,
                      "%s:1: the file is UTF-32 text (byte-order mark): save it as UTF-8 or ASCII",
                      path);
  if (len >= 2 && ((p[0] == 0xFF && p[1] == 0xFE) || (p[0] == 0xFE && p[1] == 0xFF)))
    return mbs_errSet(MBS_ERR_INPUT,
                      "%s:1: the file is UTF-16 text (byte-order mark): save it as UTF-8 or ASCII",
                      path);
  long line = 1;
  for (size_t i = 0; i < len;) {
    unsigned c = p[i];
    if (c == 0) {
      // UTF-16 without a byte-order mark: every other byte of ASCII text is NUL
      if (len >= 4 && ((p[0] && !p[1] && p[2] && !p[3]) || (!p[0] && p[1] && !p[2] && p[3])))
        return mbs_errSet(MBS_ERR_INPUT,
                          "%s:1: the file looks like UTF-16 text (NUL bytes between the "
                          "characters): save it as UTF-8 or ASCII",
                          path);
      return mbs_errSet(MBS_ERR_INPUT,
                        "%s:%ld: NUL byte at offset %zu: not a text file (everything after it "
                        "would be lost)",
                        path, line, i);
    }
    if (c == '\n') line++;
    if ((c < 0x20 && c != '\n' && c != '\t' && c != '\r' && c != '\f') || c == 0x7F)
      return mbs_errSet(MBS_ERR_INPUT,
                        "%s:%ld: control character 0x%02X at offset %zu: not a text file", path,
                        line, c, i);
    size_t k = mbs_utf8Len(p + i, len - i);
    if (!k)
      return mbs_errSet(MBS_ERR_INPUT,
                        "%s:%ld: byte 0x%02X at offset %zu is not UTF-8 text (save the file as "
                        "UTF-8 or ASCII)",
                        path, line, c, i);
    i += k;
  }
  return MBS_OK;
}
