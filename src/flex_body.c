/// \file flex_body.c
/// Flexible bodies of a model (issue 34 part 2a; docs/flexible.md): the set the model owns
/// (mbsModel.flex) with each body's modal data and named nodes, the children attached to nodes,
/// and the rigid body an undeformed beam is.

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_flex.h"
#include "mbspar/mbs_report.h"

mbsErr mbs_flexSetAdd(mbsFlexSet **set, mbsFlexBody *fb) {
  if (!*set) {
    *set = calloc(1, sizeof **set);
    if (!*set) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  }
  mbsFlexSet *s = *set;
  if (s->n == s->cap) {
    int cap = s->cap ? 2 * s->cap : 4;
    mbsFlexBody *nb = realloc(s->b, (size_t)cap * sizeof *nb);
    if (!nb) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    s->b = nb, s->cap = cap;
  }
  s->b[s->n++] = *fb;
  memset(fb, 0, sizeof *fb);
  return MBS_OK;
}

mbsErr mbs_flexSetAttach(mbsFlexSet *s, int child, int node) {
  if (!s) return mbs_errSet(MBS_ERR_INTERNAL, "flexible: attachment without a flexible body");
  if (s->natt == s->attcap) {
    int cap = s->attcap ? 2 * s->attcap : 4;
    int *c = realloc(s->att_child, (size_t)cap * sizeof *c);
    if (!c) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    s->att_child = c;
    int *n = realloc(s->att_node, (size_t)cap * sizeof *n);
    if (!n) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    s->att_node = n, s->attcap = cap;
  }
  s->att_child[s->natt] = child, s->att_node[s->natt] = node, s->natt++;
  return MBS_OK;
}

const mbsFlexBody *mbs_flexSetFind(const mbsFlexSet *s, int body) {
  for (int k = 0; s && k < s->n; k++)
    if (s->b[k].body == body) return s->b + k;
  return NULL;
}

const mbsFlexBody *mbs_flexSetFindName(const mbsFlexSet *s, const char *name) {
  for (int k = 0; s && name && k < s->n; k++)
    if (!strcmp(s->b[k].name, name)) return s->b + k;
  return NULL;
}

int mbs_flexSetAttachedNode(const mbsFlexSet *s, int child) {
  for (int k = 0; s && k < s->natt; k++)
    if (s->att_child[k] == child) return s->att_node[k];
  return -1;
}

mbsErr mbs_flexSetLoopNode(mbsFlexSet *s, int loop, int side, int node) {
  if (!s || loop < 0 || side < 0 || side > 1)
    return mbs_errSet(MBS_ERR_INTERNAL, "flexible: loop node without a flexible body");
  if (loop >= s->nloop_node) {
    int *n = realloc(s->loop_node, sizeof *n * 2 * (size_t)(loop + 1));
    if (!n) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
    for (int k = 2 * s->nloop_node; k < 2 * (loop + 1); k++) n[k] = -1;
    s->loop_node = n, s->nloop_node = loop + 1;
  }
  s->loop_node[2 * loop + side] = node;
  return MBS_OK;
}

int mbs_flexSetLoopNodeOf(const mbsFlexSet *s, int loop, int side) {
  return s && loop >= 0 && loop < s->nloop_node ? s->loop_node[2 * loop + side] : -1;
}

void mbs_flexSetFree(mbsFlexSet *s) {
  if (!s) return;
  for (int k = 0; k < s->n; k++) mbs_flexModalFree(&s->b[k].modal), free(s->b[k].file);
  free(s->b), free(s->att_child), free(s->att_node), free(s->loop_node);
  free(s);
}

void mbs_flexRigidEquivalent(const mbsFlexBeamSpec *s, mbsReal *mass, mbsReal com[3],
                             mbsReal inertia[6]) {
  mbsReal L = s->length, mA = s->rho * s->area * L;
  *mass = mA;
  com[0] = 0.5 * L, com[1] = com[2] = 0;
  inertia[0] = s->rho * L * (s->Iy + s->Iz);
  inertia[1] = inertia[2] = mA * L * L / 12.0;
  inertia[3] = inertia[4] = inertia[5] = 0;
}

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

void mbs_flexReport(FILE *f, const mbsFlexSet *s) {
  for (int k = 0; s && k < s->n; k++) {
    const mbsFlexBody *b = s->b + k;
    const mbsFlexModal *md = &b->modal;
    fprintf(f,
            "  flexible body %-12s %d modal coordinates (%d constraint modes of %d node(s), %d "
            "fixed-interface modes), ",
            b->name, md->m, md->nbound, b->nnodes, md->nmodes);
    if (b->file && md->pos)
      fprintf(f, "file %s (%d points)", b->file, md->nfe);
    else if (b->file)
      fprintf(f, "file %s (%g m, %d elements)", b->file, md->x[md->nfe - 1], md->nfe - 1);
    else
      fprintf(f, "beam %g m of %d elements", b->spec.length, b->spec.elements);
    fprintf(f, ", damping %g, stiffening %s\n", b->damping, b->stiffening ? "on" : "off");
    fprintf(f, "    fixed-interface frequencies (Hz):");
    for (int i = 0; i < md->nmodes; i++) fprintf(f, " %.6g", md->omega_fixed[i] / (2 * M_PI));
    if (!md->nmodes) fprintf(f, " none");
    fprintf(f, "\n");
    for (int i = 0; i < b->nnodes; i++)
      if (md->pos)
        fprintf(f, "    node %-12s at [%g, %g, %g] m\n", b->node_name[i], b->spec.node_x[i],
                b->node_yz[i][0], b->node_yz[i][1]);
      else
        fprintf(f, "    node %-12s x = %g m\n", b->node_name[i], b->spec.node_x[i]);
  }
}

void mbs_flexJson(mbsJson *j, const mbsFlexSet *s) {
  if (!s || !s->n) return;
  mbs_jsonBeginArray(j, "flexible");
  for (int k = 0; k < s->n; k++) {
    const mbsFlexBody *b = s->b + k;
    mbs_jsonBeginObject(j, NULL);
    mbs_jsonString(j, "body", b->name);
    mbs_jsonInt(j, "modal_coordinates", b->modal.m);
    mbs_jsonInt(j, "constraint_modes", b->modal.nbound);
    mbs_jsonInt(j, "fixed_interface_modes", b->modal.nmodes);
    mbs_jsonNumberArray(j, "omega_fixed", b->modal.omega_fixed, b->modal.nmodes);
    if (b->file) mbs_jsonString(j, "file", b->file);
    // the body's own frequencies, K w = omega^2 M w (root clamped), the 10 lowest (rad/s)
    mbsReal om[10];
    int no = b->modal.m < 10 ? b->modal.m : 10;
    if (no > 0 && !mbs_flexModalFrequencies(&b->modal, no, om))
      mbs_jsonNumberArray(j, "omega_body", om, no);
    mbs_jsonBool(j, "stiffening", b->stiffening);
    mbs_jsonBeginArray(j, "nodes");
    for (int i = 0; i < b->nnodes; i++) {
      mbs_jsonBeginObject(j, NULL);
      mbs_jsonString(j, "name", b->node_name[i]);
      mbs_jsonNumber(j, "x", b->spec.node_x[i]);
      if (b->modal.pos) { // a lumped body's nodes are anywhere
        mbs_jsonNumber(j, "y", b->node_yz[i][0]);
        mbs_jsonNumber(j, "z", b->node_yz[i][1]);
      }
      mbs_jsonEndObject(j);
    }
    mbs_jsonEndArray(j);
    mbs_jsonEndObject(j);
  }
  mbs_jsonEndArray(j);
}
