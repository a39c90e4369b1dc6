/// \file mbs_poses.h
/// Per-body output quantities from the position and velocity stages: the world pose of every
/// body's reported frame (position, orientation quaternion), its centre of mass, linear and
/// angular velocity in the ground frame, and the joint wrench in the ground frame. Pure functions
/// of one body's workspace entries, so the rank that owns a body computes them (docs/outputs.md).
#ifndef MBS_POSES_H
#define MBS_POSES_H

#include "mbs_dynamics.h"

/// Components of one pose row: position (3), quaternion w, x, y, z (4), centre of mass (3).
#define MBS_POSE_NCOMP 10

/// Unit quaternion [w x y z] (w >= 0) of a rotation matrix (row-major). Local.
void mbsu_mat2Quat(const mbsReal *R, mbsReal *q);

/// Pose row of body b: world position of the body origin, world orientation of its reported frame
/// (the body frame turned by m->body_framequat), world position of the centre of mass. Needs the
/// position stage of body b. Writes \p out (MBS_POSE_NCOMP values).
void mbs_bodyPoseWorld(const mbsModel *m, const mbsWork *w, int b, mbsReal *out);

/// Velocity of body b in the ground frame: linear velocity of the body origin (vel) and angular
/// velocity (omega). Needs the position and velocity stages of body b.
void mbs_bodyVelocityWorld(const mbsModel *m, const mbsWork *w, int b, mbsReal vel[3],
                           mbsReal omega[3]);

/// Joint wrench of body b in the ground frame, [torque about the joint origin, force] (6), from
/// w->jfrc (needs a forward-dynamics evaluation).
void mbs_bodyJointWrenchWorld(const mbsModel *m, const mbsWork *w, int b, mbsReal out[6]);

#endif
