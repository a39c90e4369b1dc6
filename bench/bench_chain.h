/// \file bench_chain.h
/// The benchmark models, shared by mbspar and the peers (C and C++): a revolute chain of N
/// uniform rods hanging from the ground, or a binary tree of the same rods (link i hangs from
/// the tip of link (i-1)/2: heap order, so a parent precedes its children). Link i's frame sits at
/// its joint; the rod runs from the joint to its tip at [0, 0, -len], where its children's joints
/// are. Joint axes alternate y, x, y, x, ... with the link index (a 3-D motion; siblings turn
/// about different axes). Initial angles and rates are smooth, nonzero functions of the index.
#ifndef BENCH_CHAIN_H
#define BENCH_CHAIN_H

#include <math.h>

typedef struct {
  int n;         // number of links
  double len;    // link length (m)
  double radius; // rod radius (m), for the inertia and the peers' geometry
  double mass;   // link mass (kg)
  double g;      // gravity magnitude along -z (m/s^2)
  int tree;      // 0: chain, 1: binary tree
} benchChain;

static inline benchChain bench_chainDefault(int n) {
  benchChain c = {n, 0.1, 0.01, 0.1, 9.81, 0};
  return c;
}

// parent link of link i (-1: the ground)
static inline int bench_chainParent(const benchChain *c, int i) {
  if (i == 0) return -1;
  return c->tree ? (i - 1) / 2 : i - 1;
}

// unit joint axis of link i (y for even i, x for odd i)
static inline void bench_chainAxis(int i, double *a) {
  a[0] = (i % 2) ? 1.0 : 0.0;
  a[1] = (i % 2) ? 0.0 : 1.0;
  a[2] = 0.0;
}

// initial joint angle (rad) and rate (rad/s) of link i
static inline double bench_chainQ0(int i) {
  return 0.3 * sin(0.7 * i + 0.2);
}
static inline double bench_chainQd0(int i) {
  return 0.5 * cos(1.1 * i);
}

// principal inertia of a solid rod about its centre [Ixx, Iyy, Izz] (axis along z)
static inline void bench_chainInertia(const benchChain *c, double *I) {
  double r2 = c->radius * c->radius;
  I[0] = I[1] = c->mass * (3 * r2 + c->len * c->len) / 12;
  I[2] = c->mass * r2 / 2;
}

#endif
