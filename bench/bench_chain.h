/// \file bench_chain.h
/// The benchmark model, shared by mbspar and the peers (C and C++): a revolute chain of N
/// uniform rods hanging from the ground. Link i's frame sits at its joint; the rod runs from the
/// joint to the next joint at [0, 0, -len]. Joint axes alternate y, x, y, x, ... (a 3-D chain),
/// so every peer has to handle a non-planar motion. Initial angles and rates are smooth, nonzero
/// functions of the link index.
#ifndef BENCH_CHAIN_H
#define BENCH_CHAIN_H

#include <math.h>

typedef struct {
  int n;         // number of links
  double len;    // link length (m)
  double radius; // rod radius (m), for the inertia and the peers' geometry
  double mass;   // link mass (kg)
  double g;      // gravity magnitude along -z (m/s^2)
} benchChain;

static inline benchChain bench_chainDefault(int n) {
  benchChain c = {n, 0.1, 0.01, 0.1, 9.81};
  return c;
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
