/// \file flex_gen.h
/// Random trees and chains of rigid and flexible bodies as config text, shared by test_flex_aba
/// (the recursive algorithm against mbs_aba and the dense oracle) and test_flex_par (the
/// distributed elimination against the dense oracle): every joint type, 4- or 6-element beams
/// (A = 4e-4 m^2, Iy, Iz = 1e-6, 2e-6 m^4) with 0-3 modes, tip and mid nodes, children on nodes,
/// damping, stiffening on and off (docs/flexible.md 10).
#ifndef MBS_TEST_FLEX_GEN_H
#define MBS_TEST_FLEX_GEN_H
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "mbspar/mbs_flex.h"

// worst of the joint block's and the modal block's differences (the first nv of N entries and
// the rest), each relative to its largest entry of the reference yo
static double blockDiff(const double *ya, const double *yo, int N, int nv) {
  double sj = 1e-300, se = 1e-300, ej = 0, ee = 0;
  for (int k = 0; k < N; k++) {
    double d = fabs(ya[k] - yo[k]);
    if (k < nv)
      sj = fmax(sj, fabs(yo[k])), ej = fmax(ej, d);
    else
      se = fmax(se, fabs(yo[k])), ee = fmax(ee, d);
  }
  return fmax(ej / sj, N > nv ? ee / se : 0);
}

static unsigned long long rng = 88172645463325252ULL;
static double rnd(void) { // uniform in [0, 1)
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0;
}
static double sym(double a) {
  return a * (2 * rnd() - 1);
}

static const char *const JT[] = {"revolute",  "prismatic", "cylindrical", "universal",
                                 "spherical", "free",      "fixed"};

typedef struct {
  int parent, jt, flex, elements, modes, nodes, stiff, onnode;
  double L, ax[3], ax2[3], org[3], q[7], qd[6], mass, com[3], in[3];
} Body;

static int cat(char *buf, size_t cap, size_t *len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(buf + *len, cap - *len, fmt, ap);
  va_end(ap);
  if (k < 0 || (size_t)k >= cap - *len) return -1;
  *len += (size_t)k;
  return 0;
}

static void unit(double *v) {
  double n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  for (int i = 0; i < 3; i++) v[i] /= n;
}

// nb bodies; chain or random tree; flexmode 0: rigid only, 1: flexible with m = 0, 2: flexible
static void gen(Body *B, int nb, int chain, int flexmode) {
  for (int b = 0; b < nb; b++) {
    Body *x = B + b;
    memset(x, 0, sizeof *x);
    x->parent = b == 0 ? -1 : chain ? b - 1 : (int)(rnd() * b);
    x->jt = (int)(rnd() * 7);
    x->flex = flexmode && rnd() < 0.6;
    x->elements = 4 + 2 * (int)(rnd() * 2); // 4 or 6: the mid node is an FE node
    x->modes = flexmode == 2 ? (int)(rnd() * 4) : 0;
    x->nodes = flexmode == 2 ? (int)(rnd() * 3) : 0; // 0, tip, tip + mid
    x->stiff = rnd() < 0.7;
    x->L = 0.4 + 0.6 * rnd();
    for (int i = 0; i < 3; i++) x->ax[i] = sym(1), x->org[i] = sym(0.5), x->com[i] = sym(0.2);
    unit(x->ax);
    double e[3] = {sym(1), sym(1), sym(1)};
    x->ax2[0] = x->ax[1] * e[2] - x->ax[2] * e[1], x->ax2[1] = x->ax[2] * e[0] - x->ax[0] * e[2];
    x->ax2[2] = x->ax[0] * e[1] - x->ax[1] * e[0];
    unit(x->ax2);
    for (int i = 0; i < 7; i++) x->q[i] = sym(0.8);
    for (int i = 0; i < 6; i++) x->qd[i] = sym(1.5);
    x->mass = 0.3 + rnd();
    for (int i = 0; i < 3; i++) x->in[i] = 0.05 + 0.02 * rnd();
    const Body *p = x->parent >= 0 ? B + x->parent : NULL;
    if (p && p->flex && p->nodes > 0 && rnd() < 0.7) x->onnode = 1 + (int)(rnd() * p->nodes);
  }
}

// the config text; rigideq: flexible bodies written as their rigid equivalents
static int text(const Body *B, int nb, int rigideq, char *buf, size_t cap) {
  size_t n = 0;
  if (cat(buf, cap, &n,
          "solver = { method = \"aba\"; }; model = { gravity = [0.4, -1.1, -9.81]; bodies = (\n"))
    return -1;
  for (int b = 0; b < nb; b++) {
    const Body *x = B + b;
    const char *t = JT[x->jt];
    int nq = x->jt == 4 ? 4 : x->jt == 5 ? 7 : x->jt == 2 || x->jt == 3 ? 2 : x->jt == 6 ? 0 : 1;
    int nv = x->jt == 4 ? 3 : x->jt == 5 ? 6 : nq;
    double q[7];
    memcpy(q, x->q, sizeof q);
    if (x->jt == 4 || x->jt == 5) { // a unit quaternion
      double *u = x->jt == 4 ? q : q + 3, s = 0;
      u[0] += 1.5;
      for (int i = 0; i < 4; i++) s += u[i] * u[i];
      for (int i = 0; i < 4; i++) u[i] /= sqrt(s);
    }
    char par[32];
    if (x->parent < 0)
      snprintf(par, sizeof par, "ground");
    else
      snprintf(par, sizeof par, "b%d", x->parent);
    if (cat(buf, cap, &n, "{ name = \"b%d\"; parent = \"%s\"; joint = { type = \"%s\"; ", b, par,
            t))
      return -1;
    if (x->jt <= 3 &&
        cat(buf, cap, &n, "axis = [%.17g, %.17g, %.17g]; ", x->ax[0], x->ax[1], x->ax[2]))
      return -1;
    if (x->jt == 3 &&
        cat(buf, cap, &n, "axis2 = [%.17g, %.17g, %.17g]; ", x->ax2[0], x->ax2[1], x->ax2[2]))
      return -1;
    if (x->onnode && cat(buf, cap, &n, "node = \"n%d\"; ", x->onnode)) return -1;
    if (cat(buf, cap, &n, "origin = [%.17g, %.17g, %.17g]; ", x->org[0], x->org[1], x->org[2]))
      return -1;
    if (nq) {
      if (cat(buf, cap, &n, "q0 = [")) return -1;
      for (int i = 0; i < nq; i++)
        if (cat(buf, cap, &n, "%s%.17g", i ? ", " : "", q[i])) return -1;
      if (cat(buf, cap, &n, "]; qd0 = [")) return -1;
      for (int i = 0; i < nv; i++)
        if (cat(buf, cap, &n, "%s%.17g", i ? ", " : "", x->qd[i])) return -1;
      if (cat(buf, cap, &n, "]; ")) return -1;
      if (x->jt <= 3 && cat(buf, cap, &n, "stiffness = 1.5; damping = 0.2; ")) return -1;
    }
    if (cat(buf, cap, &n, "}; ")) return -1;
    mbsFlexBeamSpec s;
    mbs_flexBeamDefault(&s);
    s.length = x->L, s.E = 7e9, s.rho = 2700, s.area = 4e-4, s.Iy = 1e-6, s.Iz = 2e-6;
    if (x->flex && !rigideq) {
      if (cat(buf, cap, &n,
              "flexible = { beam = { length = %.17g; E = 7e9; rho = 2700.0; area = 4e-4; "
              "Iy = 1e-6; Iz = 2e-6; elements = %d; }; modes = %d; damping = 0.03; "
              "stiffening = %s; nodes = (",
              x->L, x->elements, x->modes, x->stiff ? "true" : "false"))
        return -1;
      for (int k = 1; k <= x->nodes; k++)
        if (cat(buf, cap, &n, "%s{ name = \"n%d\"; position = [%.17g, 0.0, 0.0]; }",
                k > 1 ? ", " : "", k, k == 1 ? x->L : x->L / 2))
          return -1;
      if (cat(buf, cap, &n, "); }; },\n")) return -1;
    } else {
      double mass = x->mass, com[3] = {x->com[0], x->com[1], x->com[2]}, in[6] = {0};
      in[0] = x->in[0], in[1] = x->in[1], in[2] = x->in[2];
      if (x->flex) mbs_flexRigidEquivalent(&s, &mass, com, in);
      if (cat(buf, cap, &n,
              "mass = %.17g; com = [%.17g, %.17g, %.17g]; inertia = [%.17g, %.17g, %.17g, "
              "0.0, 0.0, 0.0]; },\n",
              mass, com[0], com[1], com[2], in[0], in[1], in[2]))
        return -1;
    }
  }
  n -= 2; // the last ",\n"
  return cat(buf, cap, &n, "\n); };\n");
}

#endif
