/// \file flex_chain_text.h
/// The config text of a chain of n flexible links (revolute joints about y, each link a 4-element
/// aluminium beam of 0.25 m with m = 4 fixed-interface modes, the next link on its undeformed
/// tip; as configs/flex_chain.cfg), shared by bench/flex_chain.c and bench/flex_chain_ranks.c.
#ifndef MBS_BENCH_FLEX_CHAIN_TEXT_H
#define MBS_BENCH_FLEX_CHAIN_TEXT_H
#include <stdio.h>
#include <stdlib.h>

static char *chainText(int n) {
  size_t cap = (size_t)n * 400 + 256, len = 0;
  char *t = malloc(cap);
  if (!t) return NULL;
  len += (size_t)snprintf(t, cap, "model = { gravity = [0.0, 0.0, -9.81]; bodies = (\n");
  for (int i = 0; i < n; i++) {
    char par[32];
    snprintf(par, sizeof par, i ? "l%d" : "ground", i - 1);
    len += (size_t)snprintf(
        t + len, cap - len,
        "{ name = \"l%d\"; parent = \"%s\"; joint = { type = \"revolute\"; axis = [0.0, 1.0, "
        "0.0]; origin = [%s, 0.0, 0.0]; }; flexible = { beam = { length = 0.25; E = 7.0e10; "
        "rho = 2700.0; area = 2.0e-5; Iy = 3.0e-11; Iz = 3.0e-11; elements = 4; }; modes = 4; "
        "}; }%s\n",
        i, par, i ? "0.25" : "0.0", i + 1 < n ? "," : "");
  }
  snprintf(t + len, cap - len, "); };\n");
  return t;
}

#endif
