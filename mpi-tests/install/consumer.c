/// A program built against an installed mbspar (test `install`): the pendulum of
/// configs/pendulum.cfg through the public API, inside the parallel layer's MPI start and end.
/// Prints qdd and exits 0 when it is the closed form -(3 g / 2 l) sin(q0) (docs/cluster.md).
#include <math.h>
#include <stdio.h>
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_parallel.h"
#include "mbspar/mbspar.h"

static const char cfg_text[] =
    "model = { gravity = [0, 0, -9.81]; bodies = ( { name = \"rod\"; parent = \"ground\";\n"
    "  joint = { type = \"revolute\"; axis = [0, 1, 0]; origin = [0, 0, 0]; q0 = [0.5]; };\n"
    "  mass = 1.0; com = [0, 0, -0.5];\n"
    "  inertia = [0.083358333333333, 0.083358333333333, 0.00005, 0, 0, 0]; } ); };\n"
    "solver = { method = \"aba\"; };\n";

int main(int argc, char **argv) {
  mbspComm *comm = NULL;
  mbsConfig *cfg = NULL;
  mbsModel *m = NULL;
  mbsState *s = NULL;
  mbsWork *w = NULL;
  mbsErr e = mbsp_init(&argc, &argv, &comm);
  if (!e) e = mbs_configParse(cfg_text, "consumer.cfg", NULL, 0, &cfg);
  if (!e) e = mbs_configBuildModel(cfg, &m);
  if (!e) e = mbs_stateCreate(m, &s);
  if (!e) e = mbs_workCreate(m, &w);
  if (!e) e = mbs_forward(m, s, w);
  int ok = 0;
  if (!e) {
    double want = -1.5 * 9.81 * sin(0.5); // thin rod; the radius changes it by 1e-4
    ok = fabs(w->qdd[0] - want) < 2e-3 * fabs(want);
    if (mbsp_rank(comm) == 0)
      printf("consumer: qdd = %.6f (closed form %.6f) on %d rank(s): %s\n", w->qdd[0], want,
             mbsp_size(comm), ok ? "ok" : "WRONG");
  } else {
    fprintf(stderr, "consumer: %s\n", mbs_errMsg());
  }
  mbs_workDestroy(&w);
  mbs_stateDestroy(&s);
  mbs_modelDestroy(&m);
  mbs_configDestroy(&cfg);
  mbsp_finalize(&comm);
  return ok ? 0 : 1;
}
