/// \file schur_setup.c
/// A segment of the exact solver (solver.method = schur): its components, ports, the bodies'
/// forms (inertia, compliance, spike paths) and its workspace (mbs_schurCreate). The method:
/// schur_factor.c and docs/formulation.md Part 4.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "schur_private.h"
#include "body.h"
#ifdef _OPENMP
#include <omp.h>
#endif

int mbs_maxThreads(void) {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

// ---------------------------------------------------------------- setup

void mbs_schurDestroy(mbsSchur **ps) {
  if (!ps || !*ps) return;
  mbsSchur *s = *ps;
  void *arrs[] = {s->comp,     s->port_body, s->port_cadr, s->body_c0,  s->body_nc, s->body_comp,
                  s->Minv,     s->tn,        s->kind,      s->rec_adr,  s->rec,     s->Phi,
                  s->beta,     s->psi_adr,   s->th_adr,    s->gam_adr,  s->v_adr,   s->Psi,
                  s->Theta,    s->gam,       s->V,         s->v_w,      s->v_c0,    s->cur,
                  s->cpool,    s->mode,      s->initp,     s->phi0_adr, s->Phi0,    s->onpath,
                  s->selfinit, s->spk,       s->spP,       s->tp_adr,   s->tpool,   s->tpwork,
                  s->light,    s->lroot,     s->pre};
  for (size_t k = 0; k < sizeof arrs / sizeof arrs[0]; k++) free(arrs[k]);
  free(s->minv_adr);
  free(s);
  *ps = NULL;
}

mbsErr mbs_schurCreate(const mbsModel *m, int s0, int s1, mbsSchur **out) {
  *out = NULL;
  MBS_CHECK(s0 >= 0 && s1 <= m->nbody && s0 < s1, MBS_ERR_INTERNAL, "schur: bad segment");
  mbsSchur *s = calloc(1, sizeof *s);
  MBS_CHECK(s, MBS_ERR_NOMEM, "out of memory (schur segment)");
  mbsErr e = MBS_OK;
  s->s0 = s0, s->s1 = s1, s->nbody = s1 - s0;
  int n = s->nbody;
#define MBS_SALLOC(f, cnt)                                                                         \
  if (!e && !(s->f = calloc((size_t)(cnt) > 0 ? (size_t)(cnt) : 1, sizeof(*s->f))))                \
  e = mbs_errSet(MBS_ERR_NOMEM, "out of memory allocating the schur workspace")
  MBS_SALLOC(body_c0, n);
  MBS_SALLOC(body_nc, n);
  MBS_SALLOC(body_comp, n);
  MBS_SALLOC(psi_adr, n);
  MBS_SALLOC(th_adr, n);
  MBS_SALLOC(gam_adr, n);
  MBS_SALLOC(v_adr, n);
  MBS_SALLOC(v_w, n);
  MBS_SALLOC(v_c0, n);
  MBS_SALLOC(cur, n);
  MBS_SALLOC(minv_adr, n);
  MBS_SALLOC(tn, 6 * (size_t)n);
  MBS_SALLOC(kind, n);
  MBS_SALLOC(rec_adr, n);
  MBS_SALLOC(Phi, 36 * (size_t)n);
  MBS_SALLOC(beta, 6 * (size_t)n);
  MBS_SALLOC(mode, n);
  MBS_SALLOC(initp, n);
  MBS_SALLOC(phi0_adr, n);
  MBS_SALLOC(onpath, n);
  MBS_SALLOC(selfinit, n);
  MBS_SALLOC(spk, 6 * (size_t)n);
  if (e) {
    mbs_schurDestroy(&s);
    return e;
  }

  // port columns of each subtree, bottom-up: internal children's columns, then own ports
  int nport = 0;
  for (int b = s1 - 1; b >= s0; b--) {
    int nc = 0;
    const int *ch = m->child_list + m->body_childadr[b];
    for (int k = 0; k < m->body_childnum[b]; k++) {
      int c = ch[k];
      if (c < s1)
        nc += s->body_nc[c - s0];
      else if (m->body_lamnum[c] > 0)
        nc += m->body_lamnum[c], nport++;
    }
    s->body_nc[b - s0] = nc;
  }
  // components (roots in increasing order) and column starts, top-down
  int ncomp = 0;
  for (int b = s0; b < s1; b++)
    if (m->body_parent[b] < s0) ncomp++;
  s->ncomp = ncomp, s->nport = nport;
  MBS_SALLOC(comp, ncomp);
  MBS_SALLOC(port_body, nport);
  MBS_SALLOC(port_cadr, nport + 1);
  MBS_SALLOC(spP, MBS_SPW * (size_t)ncomp);
  if (e) {
    mbs_schurDestroy(&s);
    return e;
  }
  int col = 0, k = 0;
  size_t csize = 0;
  for (int b = s0; b < s1; b++) {
    int lb = b - s0, p = m->body_parent[b];
    if (p < s0) {
      mbsSchurComp *cp = s->comp + k;
      cp->root = b;
      cp->up = p >= 0 && m->body_lamnum[b] > 0;
      cp->nup = cp->up ? m->body_lamnum[b] : 0;
      cp->c0 = col, cp->nc = s->body_nc[lb];
      cp->n = cp->nup + cp->nc;
      csize += (size_t)cp->n * (size_t)(cp->n + 1);
      s->body_c0[lb] = col, s->body_comp[lb] = k;
      col += s->body_nc[lb];
      k++;
    } else {
      s->body_comp[lb] = s->body_comp[p - s0];
    }
    // children's column starts in child order, own ports after them
    int at = s->body_c0[lb];
    const int *ch = m->child_list + m->body_childadr[b];
    for (int j = 0; j < m->body_childnum[b]; j++) {
      int c = ch[j];
      if (c < s1) {
        s->body_c0[c - s0] = at;
        at += s->body_nc[c - s0];
      }
    }
  }
  s->ncol = col;
  // the port list in column order: own ports follow the internal children's columns
  {
    int *tmpc = calloc((size_t)(nport > 0 ? nport : 1), sizeof(int));
    if (!tmpc) {
      mbs_schurDestroy(&s);
      return mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur ports)");
    }
    int q = 0;
    for (int b = s0; b < s1; b++) {
      int lb = b - s0, at = s->body_c0[lb];
      const int *ch = m->child_list + m->body_childadr[b];
      for (int j = 0; j < m->body_childnum[b]; j++)
        if (ch[j] < s1) at += s->body_nc[ch[j] - s0];
      for (int j = 0; j < m->body_childnum[b]; j++)
        if (mbs_schurIsPort(m, s, ch[j])) {
          s->port_body[q] = ch[j], tmpc[q] = at, q++;
          at += m->body_lamnum[ch[j]];
        }
    }
    for (int i = 1; i < nport; i++) // insertion sort by column: ports are few
      for (int j = i; j > 0 && tmpc[j - 1] > tmpc[j]; j--) {
        int t = tmpc[j];
        tmpc[j] = tmpc[j - 1], tmpc[j - 1] = t;
        t = s->port_body[j];
        s->port_body[j] = s->port_body[j - 1], s->port_body[j - 1] = t;
      }
    for (int i = 0; i < nport; i++) s->port_cadr[i] = tmpc[i];
    s->port_cadr[nport] = col;
    free(tmpc);
    for (int c = 0, q2 = 0; c < ncomp; c++) {
      mbsSchurComp *cp = s->comp + c;
      while (q2 < nport && s->port_cadr[q2] < cp->c0) q2++;
      cp->p0 = q2;
      while (q2 < nport && s->port_cadr[q2] < cp->c0 + cp->nc) q2++;
      cp->np = q2 - cp->p0;
    }
  }
  // inertia form: bodies whose subtree has no child outside the segment, below a parent in the
  // segment or the ground (the mode array holds "port-free" first)
  for (int b = s1 - 1; b >= s0; b--) {
    int pf = 1;
    const int *ch = m->child_list + m->body_childadr[b];
    for (int j = 0; j < m->body_childnum[b]; j++)
      if (ch[j] >= s1 || !s->mode[ch[j] - s0]) pf = 0;
    s->mode[b - s0] = (unsigned char)pf;
  }
  for (int b = s0; b < s1; b++) {
    int p = m->body_parent[b];
    if (p >= 0 && p < s0) s->mode[b - s0] = 0; // a root below another segment: its upper port
  }
  // spath: a path from a grounded root or a root below an upper port to the parent of the one
  // lower port runs in inertia form with the port's spikes
  for (int c = 0; c < ncomp; c++) {
    mbsSchurComp *cp = s->comp + c;
    int r = cp->root, pr = m->body_parent[r];
    if (cp->np != 1 || !(pr < 0 || cp->up)) continue;
    int last = m->body_parent[s->port_body[cp->p0]];
    if (cp->up && last == r) continue; // one body between two ports: the compliance form
    cp->spath = 1, cp->last = last;
    for (int b = last;; b = m->body_parent[b]) {
      if (b != r || pr < 0) s->mode[b - s0] = 1, s->onpath[b - s0] = 1;
      if (b == r) break;
    }
  }
  // a tree of paths (docs/formulation.md 4.9): several lower ports, the same root; the paths from
  // the root to every port's parent run in inertia form with the ports' spikes (6 x nc, one
  // column per port unknown), the port block accumulated from positive semidefinite terms. Not
  // when a body of the component has an outside child without constraints (a free joint)
  {
    int *bad = calloc((size_t)ncomp + 1, sizeof(int));
    if (!bad) {
      mbs_schurDestroy(&s);
      return mbs_errSet(MBS_ERR_NOMEM, "out of memory (schur ports)");
    }
    for (int b = s0; b < s1; b++) {
      const int *ch = m->child_list + m->body_childadr[b];
      for (int j = 0; j < m->body_childnum[b]; j++)
        if (ch[j] >= s1 && m->body_lamnum[ch[j]] == 0) bad[s->body_comp[b - s0]] = 1;
    }
    size_t tps = 0;
    for (int c = 0; c < ncomp; c++) {
      mbsSchurComp *cp = s->comp + c;
      int r = cp->root, pr = m->body_parent[r];
      if (cp->np < 2 || bad[c] || !(pr < 0 || cp->up)) continue;
      cp->spath = 2, cp->last = -1;
      for (int q = cp->p0; q < cp->p0 + cp->np; q++)
        for (int b = m->body_parent[s->port_body[q]];; b = m->body_parent[b]) {
          if (b != r || pr < 0) s->mode[b - s0] = 1, s->onpath[b - s0] = 1;
          if (b == r) break;
        }
      tps += (size_t)MBS_TPW(cp->nc);
      if (12 * cp->nc > s->ntpwork) s->ntpwork = 12 * cp->nc;
    }
    free(bad);
    MBS_SALLOC(tp_adr, ncomp);
    MBS_SALLOC(tpool, tps);
    MBS_SALLOC(tpwork, s->ntpwork);
    if (e) {
      mbs_schurDestroy(&s);
      return e;
    }
    tps = 0;
    for (int c = 0; c < ncomp; c++) {
      s->tp_adr[c] = (int)tps;
      if (s->comp[c].spath == 2) tps += (size_t)MBS_TPW(s->comp[c].nc);
    }
  }
  for (int b = s0; b < s1; b++) {
    int lb = b - s0, own = s->mode[lb];
    const int *ch = m->child_list + m->body_childadr[b];
    for (int j = 0; j < m->body_childnum[b]; j++)
      if (ch[j] < s1 && s->mode[ch[j] - s0]) own = 0;
    s->selfinit[lb] = (unsigned char)own;
  }
  int nphi0 = 0;
  for (int b = s0; b < s1; b++) {
    int lb = b - s0, big = -1;
    const int *ch = m->child_list + m->body_childadr[b];
    for (int j = 0; j < m->body_childnum[b]; j++)
      if (ch[j] < s1 && s->mode[ch[j] - s0] && ch[j] > big) big = ch[j];
    if (big >= 0) s->initp[big - s0] = 1;
    s->phi0_adr[lb] = (!s->mode[lb] && big >= 0) ? 36 * nphi0++ : -1;
  }
  int nminv = 0; // the bodies that start from M^-1: compliance form without inertia-form children
  for (int lb = 0; lb < n; lb++)
    s->minv_adr[lb] = !s->mode[lb] && s->phi0_adr[lb] < 0 ? 36 * nminv++ : -1;
  // pool offsets: records, Psi (6 x nc), Theta (nc^2), gam (nc), V (lamnum x width)
  size_t rec = 0, psi = 0, th = 0, ga = 0, v = 0;
  for (int b = s0; b < s1; b++) {
    int lb = b - s0, nc = s->body_nc[lb], p = m->body_parent[b], l = m->body_lamnum[b];
    s->rec_adr[lb] = (int)rec;
    if (!s->mode[lb]) rec += (size_t)mbs_schurRecSize(l); // inertia form: the ABA record
    s->psi_adr[lb] = (int)psi, s->th_adr[lb] = (int)th, s->gam_adr[lb] = (int)ga;
    s->v_adr[lb] = (int)v;
    if (s->mode[lb]) { // inertia form (spath bodies too): no compliance-form port data
      s->v_c0[lb] = s->body_c0[lb], s->v_w[lb] = 0;
      continue;
    }
    psi += 6 * (size_t)nc, th += (size_t)nc * nc, ga += (size_t)nc;
    // V columns: from the parent's first column (internal) or the own subtree (ground root)
    int c0 = (p >= s0) ? s->body_c0[p - s0] : s->body_c0[lb];
    s->v_c0[lb] = c0;
    s->v_w[lb] = s->body_c0[lb] + nc - c0;
    v += (size_t)l * (size_t)s->v_w[lb];
  }
  MBS_SALLOC(rec, rec);
  MBS_SALLOC(Psi, psi);
  MBS_SALLOC(Theta, th);
  MBS_SALLOC(gam, ga);
  MBS_SALLOC(V, v);
  MBS_SALLOC(cpool, csize);
  MBS_SALLOC(Phi0, 36 * (size_t)nphi0);
  MBS_SALLOC(Minv, 36 * (size_t)nminv);
#undef MBS_SALLOC
  if (e) {
    mbs_schurDestroy(&s);
    return e;
  }
  size_t at = 0;
  for (int c = 0; c < ncomp; c++) {
    mbsSchurComp *cp = s->comp + c;
    cp->C = s->cpool + at;
    at += (size_t)cp->n * cp->n;
    cp->g = s->cpool + at;
    at += (size_t)cp->n;
  }
  // model constants: inverse spatial inertias (where read), the revolute joints' constraint
  // directions
  for (int b = s0; b < s1; b++) {
    int lb = b - s0;
    mbsReal I6[36];
    mbs_bodyInertiaFull(m, b, I6);
    if (!mbsu_cholFactor(I6, 6)) {
      mbs_schurDestroy(&s);
      return mbs_errSet(MBS_ERR_INPUT, "body %s: spatial inertia is not positive definite",
                        m->body_name[b]);
    }
    if (s->minv_adr[lb] >= 0) mbsu_cholInverse(I6, 6, s->Minv + s->minv_adr[lb]);
    if (mbs_jntIsRevolute(m->body_jnttype[b])) {
      mbsReal T[36];
      mbs_bodyComplement(m, NULL, b, T); // constant for revolute joints
      memcpy(s->tn + 6 * lb, T, 3 * sizeof(mbsReal));
      memcpy(s->tn + 6 * lb + 3, T + 6, 3 * sizeof(mbsReal));
      s->kind[lb] = 1;
    }
  }
  *out = s;
  return MBS_OK;
}
