/// \file loops_report.c
/// Statistics and reports of the loops (mbs_loops.h): the last solve's statistics, the redundant
/// equations, the JSON model and result sections and the summary lines of `mbspar check`.
#include "loops_private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_joint.h"
#include "mbspar/mbs_solvertype.h"

void mbs_loopStat(const mbsWork *w, mbsLoopStat *st) {
  memset(st, 0, sizeof *st);
  if (!w->loop) return;
  st->rank = w->loop->rank;
  st->nzero = w->loop->nzero;
  st->nredundant = w->loop->n - w->loop->rank;
  st->min_pivot = w->loop->min_pivot;
  st->nskip = w->loop->nskip;
  st->residual = w->loop->resid;
}

int mbs_loopSkipped(const mbsWork *w, unsigned char *mask) {
  const struct mbsLoopWork *lw = w->loop;
  if (!lw) return 0;
  if (mask) memcpy(mask, lw->skip, (size_t)lw->n);
  return lw->nskip;
}

int mbs_loopRedundant(const mbsWork *w, int *idx) {
  const struct mbsLoopWork *lw = w->loop;
  if (!lw) return 0;
  int k = 0;
  for (int i = lw->rank; i < lw->n; i++) idx[k++] = lw->piv[i];
  // ascending order for reports
  for (int i = 1; i < k; i++)
    for (int j = i; j > 0 && idx[j - 1] > idx[j]; j--) {
      int t = idx[j];
      idx[j] = idx[j - 1];
      idx[j - 1] = t;
    }
  return k;
}

// how solver.method takes the loop forces: 0 the serial baseline's range space (aba, crba), 1
// unit solves (section 8.1), 2 closure rows in the system (8.4), 3 schur's separators (8.1)
static int mbs_loopSolveKind(const mbsModel *m) {
  int sv = m->opt.solver;
  if (mbs_solverIsBaseline(sv)) return 0;
  return mbs_loopUseRows(m, sv) ? 2 : mbs_loopSeparators(m, sv) ? 3 : 1;
}
static const char *mbs_loopSolveName(const mbsModel *m) {
  static const char *const nm[] = {"range_space", "unit", "rows", "separators"};
  return nm[mbs_loopSolveKind(m)];
}

// ---------------------------------------------------------------- reports

char *mbs_loopEqLabel(const mbsModel *m, int i, char *buf, size_t n) {
  int k = 0;
  while (k + 1 < m->nloop && m->loop_lamadr[k + 1] - m->nlam <= i) k++;
  int r = i - (m->loop_lamadr[k] - m->nlam);
  snprintf(buf, n, "%s.%s", m->loop_name[k], mbs_loopEqName(m->loop_type[k], r));
  return buf;
}

// a dof's label: its body's name, and the coordinate's for joints of several dofs (crank,
// wrist.wx)
static char *mbs_loopDofLabel(const mbsModel *m, int d, char *buf, size_t n) {
  int b = 0;
  while (b + 1 < m->nbody && m->body_dofadr[b + 1] <= d) b++;
  const char *c = mbs_jntCoordName(m->body_jnttype[b], d - m->body_dofadr[b], 1);
  snprintf(buf, n, "%s%s%s", m->body_name[b], c ? "." : "", c ? c : "");
  return buf;
}

// the velocity transformation qd_dep = E qd_ind at the assembled q0 (mbsLoopAssembly.vmap)
static void mbs_loopJsonVmap(mbsJson *j, const mbsModel *m) {
  const mbsLoopAssembly *as = &m->loop_asm;
  if (!as->vdep) return;
  int ni = m->nv - as->nvdep;
  char lab[300];
  mbs_jsonBeginObject(j, "velocity_map");
  mbs_jsonBeginArray(j, "independent");
  for (int c = 0; c < ni; c++)
    mbs_jsonString(j, NULL, mbs_loopDofLabel(m, as->vind[c], lab, sizeof lab));
  mbs_jsonEndArray(j);
  mbs_jsonBeginArray(j, "dependent");
  for (int a = 0; a < as->nvdep; a++)
    mbs_jsonString(j, NULL, mbs_loopDofLabel(m, as->vdep[a], lab, sizeof lab));
  mbs_jsonEndArray(j);
  mbs_jsonBeginArray(j, "E"); // rows: dependent, columns: independent
  for (int a = 0; a < as->nvdep; a++) mbs_jsonNumberArray(j, NULL, as->vmap + (size_t)a * ni, ni);
  mbs_jsonEndArray(j);
  mbs_jsonEndObject(j);
}

static void mbs_loopJsonRedundant(mbsJson *j, const mbsModel *m, const int *idx, int n) {
  mbs_jsonBeginArray(j, "redundant");
  for (int i = 0; i < n; i++) {
    char lab[300];
    mbs_jsonString(j, NULL, mbs_loopEqLabel(m, idx[i], lab, sizeof lab));
  }
  mbs_jsonEndArray(j);
}

void mbs_loopJsonModel(mbsJson *j, const mbsModel *m) {
  if (m->nforce) mbs_jsonInt(j, "forces", m->nforce);
  if (!m->nloop) return;
  const mbsLoopAssembly *as = &m->loop_asm;
  mbs_jsonBeginObject(j, "loops");
  mbs_jsonInt(j, "count", m->nloop);
  mbs_jsonInt(j, "closure_equations", m->nlam_loop);
  mbs_jsonInt(j, "rank", as->rank);
  mbs_loopJsonRedundant(j, m, as->redundant, as->nredundant);
  mbs_jsonInt(j, "zero_rows", as->nskip); // G_i = 0 at q0: no unit solve (docs/loops.md 8.1)
  mbs_jsonInt(j, "mobility", (m->local ? m->nv_g : m->nv) - as->rank);
  mbs_jsonString(j, "solve", mbs_loopSolveName(m)); // with solver.method (docs/loops.md 8.4)
  mbs_loopJsonVmap(j, m);
  mbs_jsonBeginObject(j, "assembly");
  mbs_jsonInt(j, "iterations", as->iterations);
  mbs_jsonNumber(j, "closure_pos_before", as->c0_pos);
  mbs_jsonNumber(j, "closure_rot_before", as->c0_rot);
  mbs_jsonNumber(j, "closure_pos_after", as->c_pos);
  mbs_jsonNumber(j, "closure_rot_after", as->c_rot);
  mbs_jsonNumber(j, "dq_max", as->dq_max);
  mbs_jsonNumber(j, "dqd_max", as->dqd_max);
  mbs_jsonEndObject(j);
  mbs_jsonEndObject(j);
}

void mbs_loopJsonResult(mbsJson *j, const mbsModel *m, const mbsWork *w) {
  if (!m->nloop || !w->loop) return;
  // no allocation here: a report cannot come out half-written
  const struct mbsLoopWork *lw = w->loop;
  mbs_jsonNumberArray(j, "loop_lambda", w->lam + m->nlam, m->nlam_loop);
  mbs_jsonBeginArray(j, "loop_wrench");
  for (int k = 0, i = 0; k < m->nloop; i += m->loop_lamnum[k], k++) {
    mbsReal wr[6];
    mbs_loopWrenchOne(m, w, k, i, wr);
    mbs_jsonNumberArray(j, NULL, wr, 6);
  }
  mbs_jsonEndArray(j);
  mbsLoopStat st;
  mbs_loopStat(w, &st);
  mbsReal pos, rot, vel;
  mbs_loopViolation(m, w, &pos, &rot, &vel);
  mbs_jsonBeginObject(j, "loops");
  // how the loop forces were solved: the serial baseline's range space (aba, crba), the engine's
  // unit solves, or the closure equations as rows of the constraint-force system (section 8.4)
  mbs_jsonString(j, "solve", mbs_loopSolveName(m));
  mbs_jsonInt(j, "rank", st.rank);
  mbs_jsonBeginArray(j, "redundant"); // ascending: the equations past the rank in pivot order
  for (int i = 0; i < lw->n; i++)
    for (int q = lw->rank; q < lw->n; q++)
      if (lw->piv[q] == i) {
        char lab[300];
        mbs_jsonString(j, NULL, mbs_loopEqLabel(m, i, lab, sizeof lab));
      }
  mbs_jsonEndArray(j);
  mbs_jsonNumber(j, "min_pivot", st.min_pivot);
  // zero rows known before the unit solves (G_i = 0): the solves left out (docs/loops.md 8.1)
  mbs_jsonInt(j, "zero_rows_skipped", st.nskip);
  mbs_jsonNumber(j, "closure_residual", st.residual);
  mbs_jsonNumber(j, "violation_pos", pos);
  mbs_jsonNumber(j, "violation_rot", rot);
  mbs_jsonNumber(j, "violation_vel", vel);
  mbs_jsonEndObject(j);
}

mbsErr mbs_loopSnapTake(const mbsModel *m, const mbsWork *w, mbsLoopSnap *s) {
  memset(s, 0, sizeof *s);
  if (!m->nloop || !w->loop) return MBS_OK;
  const struct mbsLoopWork *lw = w->loop;
  s->lam = malloc(((size_t)m->nlam_loop + 1) * sizeof *s->lam);
  s->wr = malloc(6 * (size_t)m->nloop * sizeof *s->wr);
  s->red = malloc(((size_t)lw->n + 1) * sizeof *s->red);
  if (!s->lam || !s->wr || !s->red) {
    mbs_loopSnapFree(s);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (loop results)");
  }
  memcpy(s->lam, w->lam + m->nlam, (size_t)m->nlam_loop * sizeof *s->lam);
  for (int k = 0, i = 0; k < m->nloop; i += m->loop_lamnum[k], k++)
    mbs_loopWrenchOne(m, w, k, i, s->wr + 6 * k);
  for (int i = 0; i < lw->n; i++) // ascending, as mbs_loopJsonResult lists them
    for (int q = lw->rank; q < lw->n; q++)
      if (lw->piv[q] == i) s->red[s->nred++] = i;
  mbs_loopStat(w, &s->st);
  mbs_loopViolation(m, w, s->viol, s->viol + 1, s->viol + 2);
  return MBS_OK;
}

void mbs_loopSnapJson(mbsJson *j, const mbsModel *m, const mbsLoopSnap *s) {
  if (!m->nloop || !s->lam) return;
  mbs_jsonNumberArray(j, "loop_lambda", s->lam, m->nlam_loop);
  mbs_jsonBeginArray(j, "loop_wrench");
  for (int k = 0; k < m->nloop; k++) mbs_jsonNumberArray(j, NULL, s->wr + 6 * k, 6);
  mbs_jsonEndArray(j);
  mbs_jsonBeginObject(j, "loops");
  mbs_jsonString(j, "solve", mbs_loopSolveName(m));
  mbs_jsonInt(j, "rank", s->st.rank);
  mbs_jsonBeginArray(j, "redundant");
  for (int q = 0; q < s->nred; q++) {
    char lab[300];
    mbs_jsonString(j, NULL, mbs_loopEqLabel(m, s->red[q], lab, sizeof lab));
  }
  mbs_jsonEndArray(j);
  mbs_jsonNumber(j, "min_pivot", s->st.min_pivot);
  mbs_jsonInt(j, "zero_rows_skipped", s->st.nskip);
  mbs_jsonNumber(j, "closure_residual", s->st.residual);
  mbs_jsonNumber(j, "violation_pos", s->viol[0]);
  mbs_jsonNumber(j, "violation_rot", s->viol[1]);
  mbs_jsonNumber(j, "violation_vel", s->viol[2]);
  mbs_jsonEndObject(j);
}

void mbs_loopSnapFree(mbsLoopSnap *s) {
  free(s->lam), free(s->wr), free(s->red);
  s->lam = s->wr = NULL, s->red = NULL, s->nred = 0;
}

void mbs_loopPrint(FILE *f, const mbsModel *m) {
  if (m->nforce) fprintf(f, "  %-26s %d\n", "spring-dampers", m->nforce);
  if (!m->nloop) return;
  const mbsLoopAssembly *as = &m->loop_asm;
  fprintf(f, "  %-26s %d (", "loops (cut joints)", m->nloop);
  for (int k = 0; k < m->nloop && k < 8; k++)
    fprintf(f, "%s%s %s", k ? ", " : "", m->loop_name[k], mbs_jntName(m->loop_type[k]));
  fprintf(f, "%s)\n", m->nloop > 8 ? ", ..." : "");
  fprintf(f, "  %-26s %d, rank %d at q0\n", "closure equations", m->nlam_loop, as->rank);
  fprintf(f, "  %-26s %d", "redundant equations", as->nredundant);
  for (int i = 0; i < as->nredundant && i < 12; i++) {
    char lab[300];
    fprintf(f, "%s%s", i ? ", " : " (", mbs_loopEqLabel(m, as->redundant[i], lab, sizeof lab));
  }
  fprintf(f, "%s\n", as->nredundant > 12 ? ", ...)" : as->nredundant ? ")" : "");
  fprintf(f, "  %-26s %d of them zero rows (no motion violates them: no unit solve)\n", "",
          as->nskip);
  fprintf(f, "  %-26s %d (nv %d - rank %d)\n", "mobility (dofs)", m->nv - as->rank, m->nv,
          as->rank);
  if (as->vdep && as->nvdep <= 12) { // the velocity transformation, one dependent rate a line
    int ni = m->nv - as->nvdep;
    for (int a = 0; a < as->nvdep; a++) {
      char lab[300];
      fprintf(f, "  %-26s qd(%s) =", a ? "" : "velocity map at q0",
              mbs_loopDofLabel(m, as->vdep[a], lab, sizeof lab));
      int terms = 0;
      mbsReal emax = 0;
      for (int c = 0; c < ni; c++) emax = fmax(emax, fabs(as->vmap[(size_t)a * ni + c]));
      for (int c = 0; c < ni; c++) {
        mbsReal x = as->vmap[(size_t)a * ni + c];
        if (!(fabs(x) > 1e-12 * fmax(emax, 1))) continue; // roundoff of a zero coefficient
        fprintf(f, "%s%.6g qd(%s)", terms ? (x < 0 ? " - " : " + ") : (x < 0 ? " -" : " "), fabs(x),
                mbs_loopDofLabel(m, as->vind[c], lab, sizeof lab));
        terms++;
      }
      fprintf(f, "%s\n", terms ? "" : " 0");
    }
  } else if (as->vdep) {
    fprintf(f, "  %-26s %d dependent rates (in the JSON: loops.velocity_map)\n",
            "velocity map at q0", as->nvdep);
  }
  static const char *const how[] = {"the serial baseline's range space (section 3)",
                                    "one unit tree solve per closure equation (section 8.1)",
                                    "closure equations as rows of the system (section 8.4)",
                                    "closure equations and cut joints as separators, local "
                                    "solves (section 8.1)"};
  fprintf(f, "  %-26s %s: %s, solver.loops = %s\n", "loop forces", mbs_solverName(m->opt.solver),
          how[mbs_loopSolveKind(m)], mbs_loopModeName(m->opt.loops));
  fprintf(f,
          "  %-26s %d Newton-Raphson iteration(s): closure %.3g m / %.3g rad -> %.3g m / "
          "%.3g rad, max |dq| %.3g, max |dqd| %.3g\n",
          "assembly of q0", as->iterations, as->c0_pos, as->c0_rot, as->c_pos, as->c_rot,
          as->dq_max, as->dqd_max);
}
