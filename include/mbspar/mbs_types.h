/// \file mbs_types.h
/// Basic types shared by every layer.
#ifndef MBS_TYPES_H
#define MBS_TYPES_H

#include <stddef.h>

typedef double mbsReal;

/// Joint type ids: the index of the type's row in the joint table (`mbs_jnt_types`, src/joint.c;
/// the row type mbsJointType and its accessors are in mbs_joint.h). A new type is an id here and
/// a row there.
typedef enum {
  MBS_JNT_FIXED,
  MBS_JNT_REVOLUTE,
  MBS_JNT_PRISMATIC,
  MBS_JNT_CYLINDRICAL,
  MBS_JNT_UNIVERSAL,
  MBS_JNT_SPHERICAL,
  MBS_JNT_FREE,
  MBS_JNT_COUNT
} mbsJointId;

#endif
