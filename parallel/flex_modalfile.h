/// \file flex_modalfile.h
/// Modal files of flexible bodies (HDF5; docs/flexible.md 14): the reader registered with the
/// core and the writer of `check --modal-out`.
#ifndef MBSP_FLEX_MODALFILE_H
#define MBSP_FLEX_MODALFILE_H

#include "mbspar/mbs_flex.h"

/// Register the HDF5 reader of `flexible.file` with the core (mbsp_init; Local). Without HDF5:
/// nothing (the config then refuses a file with one line).
void mbsp_flexFileRegister(void);
/// Write flexible body \p fb's modal data to \p path (through path.tmp renamed into place;
/// Local, rank 0). MBS_ERR_IO if it cannot.
mbsErr mbsp_flexModalWrite(const mbsFlexBody *fb, const char *path);

#endif
