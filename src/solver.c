/// \file solver.c
/// The solver table (mbs_solvertype.h): one entry per solver.method id, the core's entries
/// static, the parallel layer's registered at start-up; names, lookup, and the binding of a
/// solver to an mbsCfs (create on first use, re-create when the options change).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "solver_private.h"
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_critpath.h"

// the parallel layer's solvers: names and flags (so every program parses their configs and
// asks their capabilities) until mbsp_init registers the real entries (parallel/petsc_ref.c,
// parallel/schur_par.c, which keep the same flags)
static const mbsSolverType mbs_solverPetscName = {.name = "petsc",
                                                  .method = MBS_SOLVER_PETSC,
                                                  .distributed = 1,
                                                  .iterative = 1,
                                                  .restarts = 1,
                                                  .engine_only = 1,
                                                  .petsc = 1};
static const mbsSolverType mbs_solverSchurName = {.name = "schur",
                                                  .method = MBS_SOLVER_SCHUR,
                                                  .distributed = 1,
                                                  .cpa_graph = MBS_CPA_GRAPH_SCHUR,
                                                  .cpa_build = mbs_cpaSchurGraph,
                                                  .cpa_loops = mbs_cpaSchurLoops,
                                                  .floored = 1,
                                                  .local_model = 1,
                                                  .engine_only = 1,
                                                  .separators = 1};

// the rows of the core's solvers (the CORE lines of MBS_SOLVERS, include/mbspar/mbs_solverlist.h)
#define MBS_SOLVER_DECL_(ID, NUMBER, ROW) extern const mbsSolverType ROW;
MBS_SOLVERS(MBS_SOLVER_DECL_, MBS_SOLVERS_SKIP)
#undef MBS_SOLVER_DECL_

// the ids are the lines' numbers: in order from 0, without gaps (none renumbered or reused)
enum {
#define MBS_SOLVER_POS_(ID, NUMBER, ROW) MBS_SOLVER_POS_##ID,
  MBS_SOLVERS(MBS_SOLVER_POS_, MBS_SOLVER_POS_)
#undef MBS_SOLVER_POS_
};
#define MBS_SOLVER_ORDER_(ID, NUMBER, ROW)                                                         \
  _Static_assert(MBS_SOLVER_POS_##ID == NUMBER,                                                    \
                 "MBS_SOLVERS: the line of " #ID                                                   \
                 " is not numbered by its place (from 0, no gaps)");
MBS_SOLVERS(MBS_SOLVER_ORDER_, MBS_SOLVER_ORDER_)
#undef MBS_SOLVER_ORDER_

// indexed by id; the order of the ids is the order names are listed in. The parallel layer's
// lines have their name rows above until mbsp_init registers them.
static const mbsSolverType *mbs_solver_table[MBS_SOLVER_COUNT] = {
#define MBS_SOLVER_ROW_(ID, NUMBER, ROW) [MBS_SOLVER_##ID] = &ROW,
    MBS_SOLVERS(MBS_SOLVER_ROW_, MBS_SOLVERS_SKIP)
#undef MBS_SOLVER_ROW_
        [MBS_SOLVER_PETSC] = &mbs_solverPetscName,
    [MBS_SOLVER_SCHUR] = &mbs_solverSchurName,
};

// ---------------------------------------------------------------- the table

mbsErr mbs_solverRegister(const mbsSolverType *t) {
  MBS_CHECK(t && t->name && t->method >= 0 && t->method < MBS_SOLVER_COUNT, MBS_ERR_INTERNAL,
            "solver registration: bad entry");
  MBS_CHECK(t->baseline || (t->create && (t->solve || t->forward) && t->destroy), MBS_ERR_INTERNAL,
            "solver registration: %s lacks create, solve/forward or destroy", t->name);
  for (int k = 0; k < MBS_SOLVER_COUNT; k++)
    MBS_CHECK(k == t->method || !mbs_solver_table[k] || strcmp(mbs_solver_table[k]->name, t->name),
              MBS_ERR_INTERNAL, "solver registration: the name %s is taken", t->name);
  mbs_solver_table[t->method] = t;
  return MBS_OK;
}

const mbsSolverType *mbs_solverFind(int method) {
  return method >= 0 && method < MBS_SOLVER_COUNT ? mbs_solver_table[method] : NULL;
}

const char *mbs_solverName(int method) {
  const mbsSolverType *t = mbs_solverFind(method);
  return t ? t->name : "?";
}

int mbs_solverFromName(const char *name) {
  for (int k = 0; k < MBS_SOLVER_COUNT; k++)
    if (mbs_solver_table[k] && !strcmp(name, mbs_solver_table[k]->name)) return k;
  return -1;
}

const mbsSolverType *mbs_solverCaps(int method) {
  static const mbsSolverType none = {.name = "?", .method = -1};
  const mbsSolverType *t = mbs_solverFind(method);
  return t ? t : &none;
}

int mbs_solverIsBaseline(int method) {
  const mbsSolverType *t = mbs_solverFind(method);
  return t && t->baseline;
}

void mbs_solverNames(char *buf, size_t n) {
  mbs_solverNamesIf(buf, n, NULL);
}

void mbs_solverNamesIf(char *buf, size_t n, int (*pick)(const mbsSolverType *)) {
  size_t len = 0;
  if (n) buf[0] = 0;
  for (int k = 0; k < MBS_SOLVER_COUNT && len < n; k++) {
    if (!mbs_solver_table[k] || (pick && !pick(mbs_solver_table[k]))) continue;
    int w = snprintf(buf + len, n - len, "%s%s", len ? ", " : "", mbs_solver_table[k]->name);
    if (w < 0) break;
    len += (size_t)w;
  }
}

// ---------------------------------------------------------------- binding to a system

void mbs_solverOptions(const mbsModel *m, mbsSolverOpt *o) {
  memset(o, 0, sizeof *o);
  o->method = m->opt.solver;
  o->tol = m->opt.tol;
  o->max_iter = m->opt.max_iter;
  o->check_every = m->opt.check_every;
  o->criterion = m->opt.criterion;
  o->omega = m->opt.omega;
  o->rho = m->opt.rho;
  o->warm_start = m->opt.warm_start;
  o->iface = m->opt.iface;
}

const mbsSolverType *mbs_cfsSolverBound(const mbsCfs *c, void **self) {
  *self = c->solver ? c->solver->self : NULL;
  return c->solver ? c->solver->type : NULL;
}

void *mbs_cfsSolverSelf(const mbsCfs *c, const mbsSolverType *t) {
  return c->solver && c->solver->type == t ? c->solver->self : NULL;
}

mbsErr mbs_solverBind(const mbsModel *m, mbsCfs *c) {
  mbsSolverOpt o;
  mbs_solverOptions(m, &o);
  // the solver group's descriptors decide which options re-create the solver
  if (c->solver && mbs_configSolverOptEqual(&c->solver->from, &m->opt)) return MBS_OK;
  const mbsSolverType *t = mbs_solverFind(o.method);
  MBS_CHECK(t && (t->solve || t->forward || !t->baseline), MBS_ERR_UNSUPPORTED,
            "solver.method \"%s\" is not a constraint-force solver", mbs_solverName(o.method));
  MBS_CHECK(t->solve || t->forward, MBS_ERR_UNSUPPORTED,
            "solver.method = %s runs on the distributed engine of mbspar only", t->name);
  MBS_CHECK(t->distributed || (c->b0 == 0 && c->b1 == m->nbody), MBS_ERR_UNSUPPORTED,
            "solver.method = %s runs on one rank only", t->name);
  MBS_CHECK(!c->own_forward || t->forward, MBS_ERR_INTERNAL,
            "solver.method = %s: the constraint-force system was made for a method with its own "
            "forward (mbs_cfsCreate)",
            t->name);
  mbs_solverFree(&c->solver);
  // create first, then the table entry: a parallel solver's create is collective (it agrees on
  // its own failures), so a local allocation failure must not skip it on one rank only
  void *self = NULL;
  MBS_CALL(t->create(m, c, &o, c->ctx, &self));
  mbsSolver *sv = calloc(1, sizeof *sv);
  if (!sv) {
    if (self) t->destroy(&self);
    return mbs_errSet(MBS_ERR_NOMEM, "out of memory (solver %s)", t->name);
  }
  sv->type = t, sv->opt = o, sv->from = m->opt, sv->self = self;
  c->solver = sv;
  return MBS_OK;
}

mbsErr mbs_cfsBindSolver(const mbsModel *m, mbsCfs *c) {
  return mbs_solverBind(m, c);
}

void mbs_solverFree(mbsSolver **psv) {
  if (!psv || !*psv) return;
  mbsSolver *sv = *psv;
  if (sv->self) sv->type->destroy(&sv->self);
  free(sv);
  *psv = NULL;
}

void mbs_solverFreeSelf(void **self) {
  free(*self);
  *self = NULL;
}

void mbs_cfsCacheSave(const mbsCfs *c, mbsSolverCache *cache) {
  memset(cache, 0, sizeof *cache);
  cache->omega = 1;
  if (c->solver && c->solver->type->save) c->solver->type->save(c->solver->self, cache);
}

mbsErr mbs_cfsCacheRestore(const mbsModel *m, mbsCfs *c, const mbsSolverCache *cache) {
  const mbsSolverType *t = mbs_solverFind(m->opt.solver);
  if (!t || !t->restore) return MBS_OK; // nothing to restore
  MBS_CALL(mbs_solverBind(m, c));
  t->restore(c->solver->self, cache);
  return MBS_OK;
}
