/// \file mbs_textfile.h
/// Reading input files (issue 30): one reader for every file mbspar is given (config, URDF,
/// checkpoint, inverse.motion), which accepts regular files only and never blocks on a FIFO or
/// device, and one check that a file meant as text is text (no NUL byte, no UTF-16/32, valid
/// UTF-8, no control characters but tab, CR, LF and form feed). Messages are one line,
/// "PATH:LINE: ..." (LINE 0 for the file as a whole), code MBS_ERR_INPUT. Local (no MPI): the
/// parallel layer reads on rank 0 and broadcasts (mbsp_bcastFile).
#ifndef MBS_TEXTFILE_H
#define MBS_TEXTFILE_H

#include <stddef.h>
#include "mbs_error.h"

/// Read the whole file \p path into *text (malloc'ed, NUL-terminated after *len bytes; the caller
/// frees it). Refuses anything but a regular file (a directory, FIFO, socket or device) before
/// reading, without blocking: the file is opened with O_NONBLOCK and checked with fstat.
mbsErr mbs_fileRead(const char *path, char **text, size_t *len);

/// Open \p path for mbs_fileReadSome with mbs_fileRead's checks and messages (regular files only,
/// never blocking); *fd (close it) and the size fstat gives.
mbsErr mbs_fileOpen(const char *path, int *fd, size_t *size);
/// Read up to \p cap bytes of \p fd into \p buf (fewer only at the end of the file): *n read.
mbsErr mbs_fileReadSome(int fd, const char *path, char *buf, size_t cap, size_t *n);

/// What \p path is if it exists and is not a regular file ("a directory", "a FIFO (named pipe)",
/// ...; for messages that refuse it before anything is created), else NULL. Never blocks (stat).
const char *mbs_fileNotRegular(const char *path);

/// Check that the \p len bytes at \p text are text: a NUL byte, a UTF-16 or UTF-32 byte-order mark,
/// a byte sequence that is not UTF-8 or a control character is an MBS_ERR_INPUT naming the line.
/// A UTF-8 byte-order mark at the start is allowed (the readers skip it).
mbsErr mbs_textCheck(const char *text, size_t len, const char *path);

#endif
