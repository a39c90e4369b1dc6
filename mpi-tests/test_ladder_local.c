/// \file test_ladder_local.c
/// The distributed-memory build of a loop model (mbs_configBuildLocal with mbs_modelTrackLoops,
/// docs/scaling.md "Memory"), one process playing every rank: the generated ladder of 2 x 64
/// links with a rung every 8 (8 loops), and the same ladder with a chain-generated right side
/// and explicit loops (scripts/gen_ladder.py's explicit form), at 2, 3, 4, 8 and 16 ranks. Each
/// rank's model must hold every loop (names, types, frames as the whole model's) and every loop
/// body (its local index; one that is neither owned nor a relative of an owned body on a remote
/// parent, -1), each side's global body, its depth and the nearest owned ancestor-or-self, all
/// against the whole model walked up body_parent (the oracle). The loop workspace of a rank's model
/// has none of the whole model's loop arrays (the whole-model loop solve refuses it), and the whole
/// model's loop solve is refused after mbs_loopWorkRelease.
#include "mbs_test.h"
#include "mbspar/mbs_loops.h"

static const char *ladder_gen =
    "model = { ladder = { links = 64; every = 8; tilt = 0.3;\n"
    "  link = { mass = 0.01; shape = \"rod\"; length = 0.01; direction = [0.0, 0.0, -1.0]; "
    "radius = 0.002; };\n"
    "  rung = { mass = 0.05; shape = \"rod\"; length = 1.0; direction = [1.0, 0.0, 0.0]; "
    "radius = 0.005; }; }; };\n";

// a left chain with rungs from the ladder generator of 16 links every 4, then a chain of 16
// and explicit loops between the ladder and that chain (generated and listed names mixed; left14
// is found in subset builds by the prefix that skips the rungs)
static const char *ladder_mixed =
    "model = { ladder = { links = 16; every = 4; tilt = 0.2;\n"
    "  link = { mass = 0.01; length = 0.01; };\n"
    "  rung = { mass = 0.05; length = 1.0; direction = [1.0, 0.0, 0.0]; }; };\n"
    "  chain = { name = \"side\"; n = 16; length = 0.01; mass = 0.01; origin = [2.0, 0.0, 0.0];\n"
    "            q0 = [0.2, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,"
    " 0.0]; };\n"
    "  loops = ( { name = \"X4\"; type = \"spherical\"; body1 = \"right4\"; body2 = \"side4\";"
    " frame1 = { origin = [0.0, 0.0, -0.01]; }; frame2 = { origin = [-1.0, 0.0, -0.01]; }; },\n"
    "            { name = \"X12\"; type = \"spherical\"; body1 = \"rung12\"; body2 = \"side12\";"
    " frame1 = { origin = [2.0, 0.0, 0.0]; }; frame2 = { origin = [0.0, 0.0, -0.01]; }; },\n"
    "            { name = \"X14\"; type = \"spherical\"; body1 = \"left14\"; body2 = \"side14\";"
    " frame1 = { origin = [0.0, 0.0, -0.01]; }; frame2 = { origin = [-2.0, 0.0, -0.01]; }; } ); "
    "};\n";

static int depth_of(const mbsModel *m, int b) {
  int d = 0;
  for (int c = m->body_parent[b]; c >= 0; c = m->body_parent[c]) d++;
  return d;
}

static void check(const char *what, const char *text) {
  mbsConfig *c = NULL;
  MBS_EXPECT_OK(mbs_configParse(text, "t.cfg", NULL, 0, &c));
  if (!c) return;
  mbsModel *mf = NULL;
  MBS_EXPECT_OK(mbs_configBuildModel(c, &mf));
  if (!mf) {
    mbs_configDestroy(&c);
    return;
  }
  MBS_EXPECT(mf->nloop > 0, "%s: no loops", what);
  for (int s = 0; s < 2 * mf->nloop; s++) { // full model: the identity
    int b = mf->loop_body[s];
    MBS_EXPECT(mf->loop_gbody[s] == b && mf->loop_anc[s] == b, "%s: full model side %d", what, s);
    MBS_EXPECT(mf->loop_depth[s] == (b < 0 ? -1 : depth_of(mf, b)), "%s: full depth %d", what, s);
  }
  static const int Ps[] = {2, 3, 4, 8, 16};
  for (size_t pi = 0; pi < sizeof Ps / sizeof Ps[0]; pi++) {
    int P = Ps[pi], held = 0, remote = 0, withanc = 0, apart = 0;
    for (int r = 0; r < P; r++) {
      mbsModel *ml = NULL;
      MBS_EXPECT_OK(mbs_configBuildLocal(c, P, r, &ml));
      if (!ml) continue;
      int b0 = ml->part_start[r], b1 = ml->part_start[r + 1];
      MBS_EXPECT(ml->local && ml->nbody < mf->nbody, "%s P %d r %d: %d of %d bodies held", what, P,
                 r, ml->nbody, mf->nbody);
      MBS_EXPECT(ml->nloop == mf->nloop && ml->nlam_loop == mf->nlam_loop,
                 "%s P %d r %d: %d loops, whole %d", what, P, r, ml->nloop, mf->nloop);
      if (P == 2) { // its loop workspace holds none of the whole model's loop arrays: refused
        mbsWork *w = NULL;
        MBS_EXPECT_OK(mbs_workCreate(ml, &w));
        if (w) MBS_EXPECT(mbs_loopSolve(ml, w) == MBS_ERR_INTERNAL, "%s: local loop solve", what);
        mbs_workDestroy(&w);
      }
      for (int k = 0; k < ml->nloop && k < mf->nloop; k++) {
        MBS_EXPECT(
            !strcmp(ml->loop_name[k], mf->loop_name[k]) && ml->loop_type[k] == mf->loop_type[k] &&
                ml->loop_lamnum[k] == mf->loop_lamnum[k] &&
                !memcmp(ml->loop_frame + 24 * k, mf->loop_frame + 24 * k, 24 * sizeof(mbsReal)),
            "%s P %d r %d: loop %d differs", what, P, r, k);
        for (int side = 0; side < 2; side++) {
          int s = 2 * k + side, g = mf->loop_body[s], lb = ml->loop_body[s];
          MBS_EXPECT(ml->loop_gbody[s] == g, "%s P %d r %d: side %d global %d, expected %d", what,
                     P, r, s, ml->loop_gbody[s], g);
          MBS_EXPECT(ml->loop_depth[s] == mf->loop_depth[s], "%s P %d r %d: side %d depth %d/%d",
                     what, P, r, s, ml->loop_depth[s], mf->loop_depth[s]);
          if (g < 0) {
            MBS_EXPECT(lb == -1, "%s: ground side", what);
            continue;
          }
          int loc = mbs_modelLocal(ml, g);
          held += loc >= 0, remote += loc < 0;
          MBS_EXPECT(loc >= 0 && lb == loc && ml->body_gid[lb] == g,
                     "%s P %d r %d: side %d (global %d) held at %d, loop_body %d", what, P, r, s, g,
                     loc, lb);
          if (loc >= 0) { // its parent: held, or remote (-1 locally)
            int p = ml->body_parent[loc], gp = mf->body_parent[g];
            MBS_EXPECT(p < 0 ? gp < 0 || mbs_modelLocal(ml, gp) < 0 : ml->body_gid[p] == gp,
                       "%s P %d r %d: loop body %d parent %d", what, P, r, g, p);
            apart += p < 0 && gp >= 0 && (loc < ml->own0 || loc >= ml->own1);
          }
          int want = g; // the oracle: up the whole model's parents to the owned range
          while (want >= 0 && !(want >= b0 && want < b1)) want = mf->body_parent[want];
          int a = ml->loop_anc[s];
          if (want >= 0) withanc++;
          MBS_EXPECT(want < 0 ? a == -1
                              : (a >= ml->own0 && a < ml->own1 && ml->body_gid[a] == want),
                     "%s P %d r %d: side %d nearest owned ancestor %d (global %d), expected %d",
                     what, P, r, s, a, a >= 0 ? ml->body_gid[a] : -1, want);
        }
      }
      mbs_modelDestroy(&ml);
    }
    // the cases the checks must have met: every side held, some only as a loop body (its parent
    // elsewhere), with an owned ancestor
    MBS_EXPECT(held > 0 && remote == 0 && apart > 0 && withanc > 0,
               "%s P %d: held %d not held %d apart %d with anc %d", what, P, held, remote, apart,
               withanc);
  }
  // the whole model's loop solve, then refused once the workspace's dense matrices are freed
  // (mbs_loopWorkRelease: accel on a distributed loop model, after its last evaluation)
  {
    mbsState *s = NULL;
    mbsWork *w = NULL;
    MBS_EXPECT_OK(mbs_stateCreate(mf, &s));
    MBS_EXPECT_OK(mbs_workCreate(mf, &w));
    mf->opt.solver = MBS_SOLVER_ABA;
    if (s && w) {
      MBS_EXPECT_OK(mbs_forward(mf, s, w));
      mbs_loopWorkRelease(w);
      MBS_EXPECT(mbs_forward(mf, s, w) == MBS_ERR_INTERNAL, "%s: loop solve after release", what);
    }
    mbs_workDestroy(&w);
    mbs_stateDestroy(&s);
  }
  mbs_modelDestroy(&mf);
  mbs_configDestroy(&c);
}

int main(void) {
  check("generated ladder", ladder_gen);
  check("ladder with a chain and listed loops", ladder_mixed);
  return mbs_test_finish("test_ladder_local");
}
