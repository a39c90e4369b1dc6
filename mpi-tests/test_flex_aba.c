/// \file test_flex_aba.c
/// The recursive algorithm of flexible bodies (src/flex_aba.c, docs/flexible.md 10; issue 34)
/// against its references:
/// (a) random rigid trees with every joint type (revolute, prismatic, cylindrical, universal,
///     spherical, free, fixed), moving, springs and dampers, gravity off-axis: qdd equals mbs_aba
///     (mbs_forward) to 1e-12, scaled by 1 + |qdd|;
/// (b) the same trees with some bodies flexible with m = 0 (modes = 0, no nodes): equals mbs_aba
///     on the model whose those bodies are their rigid equivalents (mbs_flexRigidEquivalent) to
///     1e-12;
/// (c) random trees and chains of rigid and flexible bodies (4 or 6 elements, 0 to 3 modes, a
///     tip and a mid node, children on nodes, damping, stiffening on and off, random modal
///     coordinates and rates): equals mbs_flexOracleAccel (dense Cholesky) to 1e-9, the joint
///     block and the modal block each relative to its largest entry (measured 1.7e-10: the
///     systems are ill-conditioned — stiff constraint modes, light rotations — and both solutions
///     carry rounding of the order cond(M) eps), and the recursive solution's backward error in
///     the oracle's own system, |M ydd - f| / (|M| |ydd| + |f|), is below 1e-13; the O(n)
///     energies (relative) and every node's pose equal the oracle's to 1e-12.
#include <stdarg.h>
#include "mbs_test.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_flex.h"

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

// flexAba against mbs_aba on the (rigid or rigid-equivalent) model r
static double againstAba(mbsModel *mf, mbsModel *mr) {
  mbsState *st = NULL;
  mbsWork *w = NULL;
  mbsFlexAba *a = NULL;
  double worst = -1, yd[64];
  MBS_EXPECT_OK(mbs_stateCreate(mr, &st));
  MBS_EXPECT_OK(mbs_workCreate(mr, &w));
  MBS_EXPECT_OK(mbs_flexAbaCreate(mf, &a));
  if (st && w && a && mbs_flexAbaSize(a) == mr->nv && mr->nv <= 64) {
    MBS_EXPECT_OK(mbs_forward(mr, st, w));
    MBS_EXPECT_OK(mbs_flexAbaAccel(a, st->q, st->qd, NULL, yd));
    worst = 0;
    for (int k = 0; k < mr->nv; k++)
      worst = fmax(worst, fabs(yd[k] - w->qdd[k]) / (1 + fabs(w->qdd[k])));
  } else {
    MBS_EXPECT(0, "setup (size %d, nv %d)", a ? mbs_flexAbaSize(a) : -1, mr->nv);
  }
  mbs_flexAbaDestroy(&a), mbs_workDestroy(&w), mbs_stateDestroy(&st);
  return worst;
}

// flexAba against the oracle at a random modal state: the largest error of the joint block and
// of the modal block, each relative to the block's largest entry
static double againstOracle(mbsModel *m, double *scale, double *resid, double *edev) {
  mbsState *st = NULL;
  mbsFlexAba *a = NULL;
  mbsFlexOracle *o = NULL;
  double worst = -1;
  MBS_EXPECT_OK(mbs_stateCreate(m, &st));
  MBS_EXPECT_OK(mbs_flexAbaCreate(m, &a));
  MBS_EXPECT_OK(mbs_flexOracleCreate(m, &o));
  if (!st || !a || !o) goto done;
  int N = mbs_flexOracleSize(o), nv = m->nv;
  MBS_EXPECT(mbs_flexAbaSize(a) == N, "sizes %d %d", mbs_flexAbaSize(a), N);
  double *y = calloc((size_t)N, sizeof(double)), *eta = calloc((size_t)N + 1, sizeof(double));
  double *ya = calloc((size_t)N, sizeof(double)), *yo = calloc((size_t)N, sizeof(double));
  if (y && eta && ya && yo && mbs_flexAbaSize(a) == N) {
    memcpy(y, st->qd, sizeof(double) * (size_t)nv);
    for (int k = nv; k < N; k++) y[k] = sym(0.3), eta[k - nv] = sym(0.01);
    MBS_EXPECT_OK(mbs_flexOracleAccel(o, st->q, y, eta, yo));
    MBS_EXPECT_OK(mbs_flexAbaAccel(a, st->q, y, eta, ya));
    double sj = 1e-300, se = 1e-300, ej = 0, ee = 0;
    for (int k = 0; k < N; k++) {
      double d = fabs(ya[k] - yo[k]);
      if (k < nv)
        sj = fmax(sj, fabs(yo[k])), ej = fmax(ej, d);
      else
        se = fmax(se, fabs(yo[k])), ee = fmax(ee, d);
    }
    worst = fmax(ej / sj, N > nv ? ee / se : 0);
    // the backward error: the residual of the oracle's own system at the recursive solution
    double *M, *f, ra = 0, Mm = 0, ym = 0, fm = 0;
    MBS_EXPECT_OK(mbs_flexOracleSystem(o, st->q, y, eta, &M, &f));
    for (int i = 0; i < N; i++) {
      double r = -f[i];
      for (int j = 0; j < N; j++)
        r += M[(size_t)i * N + j] * ya[j], Mm = fmax(Mm, fabs(M[(size_t)i * N + j]));
      ra = fmax(ra, fabs(r)), ym = fmax(ym, fabs(ya[i])), fm = fmax(fm, fabs(f[i]));
    }
    *resid = ra / (Mm * ym + fm);
    // the O(n) energies and node poses against the oracle's
    double ka, pa, ko, po;
    MBS_EXPECT_OK(mbs_flexAbaEnergy(a, st->q, y, eta, &ka, &pa));
    MBS_EXPECT_OK(mbs_flexOracleEnergy(o, st->q, y, eta, &ko, &po));
    double de = fmax(fabs(ka - ko), fabs(pa - po)) / (fabs(ko) + fabs(po));
    for (int k = 0; k < m->flex->n; k++)
      for (int j = 0; j < m->flex->b[k].nnodes; j++) {
        double p1[3], R1[9], p2[3], R2[9];
        MBS_EXPECT_OK(mbs_flexAbaNodePose(a, st->q, y, eta, k, j, p1, R1));
        MBS_EXPECT_OK(mbs_flexOracleNodePose(o, st->q, y, eta, k, j, p2, R2));
        for (int i = 0; i < 9; i++)
          de = fmax(de, fabs(R1[i] - R2[i]) + (i < 3 ? fabs(p1[i] - p2[i]) : 0));
      }
    { // every body frame (the trajectory's poses) and every flexible body's deformed FE nodes
      int nb = m->nbody;
      double *R1 = malloc(sizeof(double) * 24 * (size_t)nb), *R2 = R1 + 9 * nb, *p1 = R2 + 9 * nb,
             *p2 = p1 + 3 * nb, s1[3 * (MBS_FLEX_MAX_ELEMENTS + 1)],
             s2[3 * (MBS_FLEX_MAX_ELEMENTS + 1)];
      double *scr = malloc(sizeof(double) * (2 * (size_t)N + 2));
      if (R1 && scr) {
        MBS_EXPECT_OK(mbs_flexAbaBodyPoses(a, st->q, y, eta, R1, p1));
        MBS_EXPECT_OK(mbs_flexOracleBodyPoses(o, st->q, y, eta, R2, p2));
        for (int i = 0; i < 9 * nb; i++)
          de = fmax(de, fabs(R1[i] - R2[i]) + (i < 3 * nb ? fabs(p1[i] - p2[i]) : 0));
        for (int k = 0; k < m->flex->n; k++) { // the shape's last node at a named node: its pose
          const mbsFlexBody *fb = m->flex->b + k;
          int col = mbs_flexOracleCol(o, k) - m->nv, nfe = fb->modal.nfe;
          mbs_flexShape(fb, eta + col, R1 + 9 * fb->body, p1 + 3 * fb->body, scr, s1);
          mbs_flexShape(fb, eta + col, R2 + 9 * fb->body, p2 + 3 * fb->body, scr, s2);
          for (int i = 0; i < 3 * nfe; i++) de = fmax(de, fabs(s1[i] - s2[i]));
          for (int j = 0; j < fb->nnodes; j++) {
            double pn[3], Rn[9];
            int fe = mbs_flexNodeFe(fb, j);
            MBS_EXPECT_OK(mbs_flexOracleNodePose(o, st->q, y, eta, k, j, pn, Rn));
            for (int i = 0; i < 3; i++) de = fmax(de, fabs(s1[3 * fe + i] - pn[i]));
          }
        }
      }
      free(R1), free(scr);
    }
    *edev = de;
    *scale = fmax(sj, se);
  }
  free(y), free(eta), free(ya), free(yo);
done:
  mbs_flexOracleDestroy(&o), mbs_flexAbaDestroy(&a), mbs_stateDestroy(&st);
  return worst;
}

int main(void) {
  enum { NB = 9, CAP = 1 << 16 };
  Body B[NB];
  char *t1 = malloc(CAP), *t2 = malloc(CAP);
  double wa = 0, wb = 0, wc = 0, sc = 0, wr = 0, we = 0;
  int nflex = 0, nnode = 0, nstiff = 0;
  for (int trial = 0; t1 && t2 && trial < 24; trial++) {
    int chain = trial % 3 == 0, nb = 3 + trial % (NB - 2);
    // (a) rigid
    gen(B, nb, chain, 0);
    MBS_EXPECT(text(B, nb, 0, t1, CAP) == 0, "text");
    mbsModel *m = mbs_test_buildText(t1);
    MBS_EXPECT(m != NULL, "trial %d (a): model", trial);
    if (m) wa = fmax(wa, againstAba(m, m));
    mbs_modelDestroy(&m);
    // (b) flexible with m = 0 against the rigid equivalents
    gen(B, nb, chain, 1);
    MBS_EXPECT(text(B, nb, 0, t1, CAP) == 0 && text(B, nb, 1, t2, CAP) == 0, "text");
    mbsModel *mf = mbs_test_buildText(t1), *mr = mbs_test_buildText(t2);
    MBS_EXPECT(mf && mr, "trial %d (b): models", trial);
    if (mf && mr) wb = fmax(wb, againstAba(mf, mr));
    mbs_modelDestroy(&mf), mbs_modelDestroy(&mr);
    // (c) flexible against the oracle
    gen(B, nb, chain, 2);
    for (int b = 0; b < nb; b++)
      nflex += B[b].flex, nnode += B[b].onnode > 0, nstiff += B[b].flex && B[b].stiff;
    MBS_EXPECT(text(B, nb, 0, t1, CAP) == 0, "text");
    m = mbs_test_buildText(t1);
    MBS_EXPECT(m != NULL, "trial %d (c): model\n%s", trial, t1);
    double s = 0, r = 1, ed = 1;
    if (m) wc = fmax(wc, againstOracle(m, &s, &r, &ed)), sc = fmax(sc, s), wr = fmax(wr, r);
    we = fmax(we, ed);
    mbs_modelDestroy(&m);
  }
  free(t1), free(t2);
  printf("(a) rigid trees, every joint type, against mbs_aba: %.2e (bound 1e-12)\n", wa);
  printf("(b) m = 0 flexible bodies against mbs_aba on the rigid equivalents: %.2e (1e-12)\n", wb);
  printf("(c) %d flexible bodies (%d with stiffening), %d children on nodes, against the oracle: "
         "%.2e (1e-9; largest |ydd| %.3g)\n",
         nflex, nstiff, nnode, wc, sc);
  printf("(c) backward error max |M ydd - f| / (|M| |ydd| + |f|) with the oracle's M, f: %.2e "
         "(1e-13)\n",
         wr);
  MBS_EXPECT(wa >= 0 && wa < 1e-12, "(a) %g", wa);
  MBS_EXPECT(wb >= 0 && wb < 1e-12, "(b) %g", wb);
  MBS_EXPECT(wc >= 0 && wc < 1e-9, "(c) %g", wc);
  MBS_EXPECT(wr < 1e-13, "(c) backward error %g", wr);
  printf("(c) mbs_flexAbaEnergy, mbs_flexAbaNodePose, mbs_flexAbaBodyPoses and the deformed shapes "
         "(mbs_flexShape at the named nodes) against the oracle's: %.2e (1e-12)\n",
         we);
  MBS_EXPECT(we < 1e-12, "(c) energy / node poses %g", we);
  MBS_EXPECT(nnode > 5 && nstiff > 5, "coverage: %d nodes, %d stiffening", nnode, nstiff);
  return mbs_test_finish("test_flex_aba");
}
