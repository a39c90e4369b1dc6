/// \file bench_peers.h
/// C interface of the peer engines used by the serial benchmark (each compiled only when its
/// package is present). A peer object holds one chain model at its initial state; eval runs the
/// engine's full forward dynamics once; qacc copies the joint accelerations of the last eval.
#ifndef BENCH_PEERS_H
#define BENCH_PEERS_H

#include <stddef.h>
#include "bench_chain.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct benchPeer benchPeer;

// MuJoCo: mj_forward with contacts disabled. format 0 = nested MJCF, 1 = URDF.
// Returns NULL and a message in err on failure.
benchPeer *bench_mujocoCreate(const benchChain *c, int format, char *err, size_t errlen);
void bench_mujocoEval(void *peer);
void bench_mujocoQacc(const benchPeer *p, double *qacc);
void bench_mujocoDestroy(benchPeer *p);
const char *bench_mujocoVersion(void);

// Simbody: chain of MobilizedBody::Pin, realize(Stage::Acceleration) after touching q.
benchPeer *bench_simbodyCreate(const benchChain *c, char *err, size_t errlen);
void bench_simbodyEval(void *peer);
void bench_simbodyQacc(const benchPeer *p, double *qacc);
void bench_simbodyDestroy(benchPeer *p);
const char *bench_simbodyVersion(void);

#ifdef __cplusplus
}
#endif

#endif
