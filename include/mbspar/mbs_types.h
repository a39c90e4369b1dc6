/// \file mbs_types.h
/// Basic types shared by every layer.
#ifndef MBS_TYPES_H
#define MBS_TYPES_H

#include <stddef.h>

typedef double mbsReal;

/// Joint types. The numbers of position coordinates (nq) and velocity coordinates (nv, the
/// degrees of freedom) per joint are given by mbs_jntNq() and mbs_jntNv().
#define MBS_JNT_LIST(X)                                                                            \
  X(MBS_JNT_FIXED, "fixed", 0, 0)                                                                  \
  X(MBS_JNT_REVOLUTE, "revolute", 1, 1)                                                            \
  X(MBS_JNT_PRISMATIC, "prismatic", 1, 1)                                                          \
  X(MBS_JNT_CYLINDRICAL, "cylindrical", 2, 2)                                                      \
  X(MBS_JNT_UNIVERSAL, "universal", 2, 2)                                                          \
  X(MBS_JNT_SPHERICAL, "spherical", 4, 3)                                                          \
  X(MBS_JNT_FREE, "free", 7, 6)

typedef enum {
#define MBS_JNT_ENUM(id, name, nq, nv) id,
  MBS_JNT_LIST(MBS_JNT_ENUM)
#undef MBS_JNT_ENUM
      MBS_JNT_COUNT
} mbsJointType;

#endif
