/// \file peer_simbody.cpp
/// Simbody peer of the serial benchmark: the benchmark chain or tree as MobilizedBody::Pin bodies
/// (the pin's z axis rotated onto the joint axis on both sides, so the child frame coincides with
/// the parent's orientation at q = 0, as in mbspar), uniform gravity. eval touches q (invalidating
/// every stage from Position on) and realizes Stage::Acceleration: a full forward-dynamics
/// evaluation, like mbspar's fwdPosition + fwdVelocity + aba.
#include <Simbody.h>
#include <cstdio>
#include <exception>
#include <vector>
#include "bench_peers.h"

using namespace SimTK;

struct benchPeer {
  MultibodySystem sys;
  SimbodyMatterSubsystem matter;
  GeneralForceSubsystem forces;
  State state;
  benchPeer() : matter(sys), forces(sys) {}
};

extern "C" benchPeer *bench_simbodyCreate(const benchChain *c, char *err, size_t errlen) {
  benchPeer *p = nullptr;
  try {
    p = new benchPeer();
    Force::UniformGravity gravity(p->forces, p->matter, Vec3(0, 0, -c->g));
    double I[3];
    bench_chainInertia(c, I);
    // inertia about the body origin (the joint): parallel-axis shift by len/2 along z
    double h = c->len / 2;
    Body::Rigid body(MassProperties(c->mass, Vec3(0, 0, -h),
                                    Inertia(I[0] + c->mass * h * h, I[1] + c->mass * h * h, I[2])));
    // pin z -> y (even links) and z -> x (odd links)
    const Rotation zToY(-Pi / 2, XAxis), zToX(Pi / 2, YAxis);
    std::vector<MobilizedBody::Pin> links;
    links.reserve(c->n);
    for (int i = 0; i < c->n; i++) {
      const Rotation &R = (i % 2) ? zToX : zToY;
      int pi = bench_chainParent(c, i);
      MobilizedBody &parent =
          pi < 0 ? static_cast<MobilizedBody &>(p->matter.Ground()) : links[(size_t)pi];
      links.emplace_back(parent, Transform(R, Vec3(0, 0, i == 0 ? 0.0 : -c->len)), body,
                         Transform(R, Vec3(0)));
    }
    p->sys.realizeTopology();
    p->state = p->sys.getDefaultState();
    for (int i = 0; i < c->n; i++) {
      links[i].setOneQ(p->state, 0, bench_chainQ0(i));
      links[i].setOneU(p->state, 0, bench_chainQd0(i));
    }
    p->sys.realize(p->state, Stage::Acceleration);
  } catch (const std::exception &e) {
    std::snprintf(err, errlen, "Simbody setup failed: %s", e.what());
    delete p;
    return nullptr;
  }
  return p;
}

extern "C" void bench_simbodyEval(void *peer) {
  benchPeer *p = static_cast<benchPeer *>(peer);
  // writing q invalidates the Position stage and everything above it
  Vector &q = p->state.updQ();
  q[0] = q[0];
  p->sys.realize(p->state, Stage::Acceleration);
}

extern "C" void bench_simbodyQacc(const benchPeer *p, double *qacc) {
  const Vector &udot = p->state.getUDot();
  for (int i = 0; i < udot.size(); i++) qacc[i] = udot[i];
}

extern "C" void bench_simbodyDestroy(benchPeer *p) {
  delete p;
}

extern "C" const char *bench_simbodyVersion(void) {
  static char v[64];
  int major = 0, minor = 0, build = 0;
  SimTK_version_simbody(&major, &minor, &build);
  std::snprintf(v, sizeof v, "%d.%d.%d", major, minor, build);
  return v;
}
