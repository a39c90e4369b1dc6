/// \file schur_par_private.h
/// Shared by parallel/schur_par.c (setup, evaluation, the solver table entry) and
/// parallel/schur_par_merge.c (the interface solves): the distributed solver's state and tags.
#ifndef MBSP_SCHUR_PAR_PRIVATE_H
#define MBSP_SCHUR_PAR_PRIVATE_H

#include "schur_par.h"
#include "mbspar/mbs_schur.h"

#define MBSP_TAG_SCAN_DOWN 41
#define MBSP_TAG_SCAN_UP   42
// point-to-point tags: MBSP_TAG_BASE + 8 * (index of the cut joint among those between the two
// ranks, by child body) + phase
#define MBSP_TAG_BASE 100
enum { MBSP_PH_SYS = 0, MBSP_PH_LAM, MBSP_PH_ACC, MBSP_PH_JCG, MBSP_PH_STATE };
#define MBSP_TAG(idx, ph) (MBSP_TAG_BASE + 8 * (idx) + (ph))

typedef struct mbspRedLev mbspRedLev; // one combine of the interval reduction (schur_par_red.c)

struct mbspSchur {
  mbspComm *comm;
  const mbsModel *m;
  int rank, size, b0, b1, iface, chain, nthread;
  int *start;       // (size + 1)
  mbsSchurRank *rk; // the rank's segments (one per thread) and their join
  mbsSchur *seg;    // the rank-level view: components and ports to other ranks
  // partners: per component (upper port) the parent's rank and tag; per lower port the child's
  int *comp_rank, *comp_tag, *port_rank, *port_tag;
  int *ghost; // remote children of owned bodies (their position and velocity stages), in order
  int nghost;
  int *ghost_rank, *ghost_tag; // owner of each remote child, tag of its acceleration message
  int *comp_erank, *comp_etag; // per component with a remote parent: the parent's rank and tag
  double *rbuf;                // received child systems, per lower port l*l + l, at port_radr
  int *port_radr;              // (nport + 1)
  int *port_comp;              // (nport) the component of each lower port
  int *comp_uadr;              // (ncomp + 1) each component's upper-port lambdas in lam_up
  int *comp_pend, *up_comp;    // (ncomp) tree passes: ports still awaited; receive -> component
  double *sbuf;                // reduced systems to send, per component nup^2 + nup
  int *comp_sadr;              // (ncomp + 1)
  double *S;                   // scratch nup^2 + nup
  double *lam_up, *lam_low, *acc_s, *acc_r;
  double *st_s, *st_r; // joint states (q, qd: 13 reals) to the parents' ranks / of remote children
  mbspMsg *msg;
  // scan state
  mbsSchurPair x, acc, excl, sacc, sexcl, tmp;
  int radix;    // of the scan (mbsp_scanRadix)
  double *pbuf; // (2 radix) packed pairs: [0] acc to r + jd, [1] sacc to r - jd, then the
                // radix - 1 windows from r - jd (j = 1 ..), the radix - 1 from r + jd
  // J-CG on the interface (solver.interface = jcg): owned cut joints are the upper ports
  double *jx, *jr, *jz, *jp, *jq, *jt, *jd, *jg; // (nup) owned vectors, diagonal factors
  double *lp, *lq;                               // (ncol) lower ports: copies of p, partial A p
  double *dsend;                                 // per lower port l*l + l: diagonal block and g
  int *jd_adr;                                   // (ncomp + 1) offsets of the diagonal blocks
  long messages;                                 // point-to-point messages sent (statistics)
  int nfloor;      // port-system pivots raised to the rounding floor in the last solve (this rank)
  int posted;      // mbsp_schurBegin posted the state messages of the next solve
  mbsErr post_err; // ... with this outcome
  // the overlapped factor (mbsp_schurPre, docs/formulation.md 4.4): bodies per slice (0: off);
  // the remote children's states already in (received by the first slice), with this outcome
  int pre_bodies, states_in;
  mbsErr pre_err;
  int *goff;  // loop models: first global interface unknown of the cut joint of each
              // upper port's root and port body (by child body), -1 elsewhere
              // (mbsp_schurLocal; mbsp_schurGlobalIface)
  int nglob;  // interface unknowns over all ranks; -1: no local solves (no loops)
  int *gmap;  // scratch: a component's system to the global interface unknowns
  int rounds; // interface rounds of the last solve: scan or contraction rounds, the pass's depth
              // (cross-rank hops of its longest message chain seen here), J-CG iterations
  int red;    // 1: non-chain decompositions run the interval contraction (schur_par_red.c)
  mbspRedLev *red_lev; // (red_nlev) the rank's own components, then one per receiving round
  int red_nlev, red_send, red_rounds; // ... the rank it sends to (-1: none), ceil(log2 P)
  int reason;                         // mbsReason of the last solve
  double residual;
  int light;       // light leaves of this rank (schur_par_light.c)
  int light_ok;    // this rank takes its light leaves exactly (no loops, merge, not switched off)
  int *light_b;    // (3 light) per light leaf: body, rank-level component, port of its first child
  int light_all;   // some rank has light leaves: the passes, with a pivot floor per cut joint
  int *light_blk;  // (largest nc) a component's lower-port columns: block labels of that floor
  int lroot;       // light roots of this rank whose soft part the rank above takes
                   // (schur_par_light.c, src/schur/schur_lightroot.c)
  double *lr_lam;  // light_all: the upper ports' lambdas with t (nup + 1 per component)
  double *lr_send; // light_all: the lower ports' lambdas with t (nl + 1 per port)
  double **lr_aug; // (ncomp) or NULL: a light root with lower ports: its system with mu
};

/// Light leaves (parallel/schur_par_light.c, docs/formulation.md 4.9): found once (local); in the
/// passes, the change of variables of a component's light leaves' cut joints before it
/// eliminates them (Up) and back on their lambdas after its expansion (Down).
mbsErr mbsp_schurLightSetup(mbspSchur *sp);
void mbsp_schurLightUp(mbspSchur *sp, const mbsWork *w, int c);
void mbsp_schurLightDown(mbspSchur *sp, const mbsWork *w, int c);
/// The block labels of component c's lower-port columns (one block per cut joint, one per light
/// leaf's joints) for mbs_schurReduceBlk.
const int *mbsp_schurLightBlocks(mbspSchur *sp, int c);
/// Light roots (schur_par_light.c): the soft part of a light root's system that came with the
/// child's message on lower port q (v, sigma, phi after its system and stamp), taken into
/// component c by the change of variables along v (Up, before the elimination), and back on the
/// lambdas with t (Down, after the expansion, into lr_send). The child's side: its message's
/// tail (v, sigma, phi; zeros if component c is no light root) and t from the lambdas received.
void mbsp_schurLightRootUp(mbspSchur *sp, int c);
void mbsp_schurLightRootDown(mbspSchur *sp, int c);
void mbsp_schurLightRootTail(const mbspSchur *sp, int c, double *tail);
void mbsp_schurLightRootT(mbspSchur *sp, int c, double t);
/// 1 if this rank takes every light root at its rank-level components' upper ports (their
/// parents on other ranks) by the change of variables above (light_ok, each such root marked).
int mbsp_schurLightRootsCovered(const mbspSchur *sp);
/// A light root with lower ports (the soft acceleration mu an extra upper unknown): Aug points
/// component c at its augmented system (1; *save the original), Send writes the message's
/// system and tail from the reduction S and restores c, Expand the lower ports' lambdas (1 if
/// it did).
int mbsp_schurLightRootAug(mbspSchur *sp, int c, mbsSchurComp *save);
void mbsp_schurLightRootSend(mbspSchur *sp, int c, const mbsSchurComp *save, const double *S,
                             double *sb);
int mbsp_schurLightRootExpand(mbspSchur *sp, int c, const double *lam_u);

/// The interface (cut-joint) solves of the distributed solver (parallel/schur_par_merge.c): the
/// radix-k scan of chain decompositions, the component-tree passes, and J-CG.
mbsErr mbsp_schurScan(mbspSchur *sp, mbsWork *w);
mbsErr mbsp_schurTree(mbspSchur *sp, mbsWork *w);
mbsErr mbsp_schurJcg(mbspSchur *sp, mbsState *st, mbsWork *w);
/// The log-depth contraction over rank intervals (parallel/schur_par_red.c): its joint lists,
/// maps and buffers (collective, once), its solve, and its memory.
mbsErr mbsp_schurRedSetup(mbspSchur *sp);
/// The component-tree passes' depth over all ranks (setup; collective).
mbsErr mbsp_schurPassDepth(mbspSchur *sp, int *depth);
mbsErr mbsp_schurRed(mbspSchur *sp, mbsWork *w);
void mbsp_schurRedDestroy(mbspSchur *sp);

#endif
