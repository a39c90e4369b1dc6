/// \file flex_inverse.c
/// `mbspar inverse` on a model with flexible bodies (issue 34 item 3; docs/flexible.md 12): every
/// joint follows the inverse group's motion (the cycloid from q_start to q_end over T, or the
/// user motion of inverse.motion), the modal coordinates are free: integrated forward from the
/// undeformed beams at rest (eta = etad = 0 at the first sample) by rk4 with steps of at most
/// integrator.dt, the joints on the motion at every stage (the driven-joint machinery of
/// flex_drive.c with every joint dof driven: a solve on the modal block of the oracle's M, the
/// joint forces from the joint rows). The joint forces tau of each sample are the ones that make
/// the joints follow the motion while the beams vibrate under it. Rigid limit: with no modal
/// coordinates nothing is integrated and tau = M qdd - f is the rigid inverse dynamics.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "flex_run.h"
#include "mbspar/mbs_flex.h"

mbsErr mbsp_flexInverse(const mbsCli *cli, mbspComm *comm, const mbsConfig *cfg, mbspFlexRun *R,
                        double *x) {
  const mbsModel *m = R->m;
  const mbsInverseSpec *iv = &cfg->inverse;
  int nq = R->nq, nv = R->nv, ne = R->ne;
  static const char *const files[] = {"inverse.csv", "inverse.json"};
  MBS_CALL(mbsp_outPrepare(cli, files, 2)); // before any computation
  mbsMotion *mo = NULL;
  mbsErr e = iv->motion ? mbsp_inverseMotion(cfg, m, &mo) : MBS_OK;
  int ns = mo ? mo->ns : iv->steps + 1;
  double *qs = malloc(sizeof(double) * ((size_t)nq + 1));
  double *qe = malloc(sizeof(double) * ((size_t)nq + 1));
  double *t = malloc(sizeof(double) * (size_t)ns);
  double *q = malloc(sizeof(double) * (size_t)ns * ((size_t)nq + 1));
  double *qd = malloc(sizeof(double) * (size_t)ns * ((size_t)nv + 1));
  double *qdd = malloc(sizeof(double) * (size_t)ns * ((size_t)nv + 1));
  double *tau = malloc(sizeof(double) * (size_t)ns * ((size_t)nv + 1));
  double *eta = malloc(sizeof(double) * (size_t)ns * ((size_t)ne + 1));
  if (!e && (!qs || !qe || !t || !q || !qd || !qdd || !tau || !eta))
    e = mbs_errSet(MBS_ERR_NOMEM, "mbspar inverse: out of memory for %d samples", ns);
  if (!e && !mo) e = mbs_configInverse(cfg, m, qs, qe);
  if (!e) e = mbsp_flexDriveInverse(&R->dr, cfg, m, nv + ne, mo, qs, qe, iv->T);
  // schur: the ranges over the ranks (flex_par.h); above the dense limit the recursive algorithm
  if (!e) e = mbsp_flexDriveUse(&R->dr, R->par, R->a);
  if (!e) R->nx++; // the work of the joint forces joins the state (its rate is their power)
  double dtmax = m->opt.dt > 0 ? m->opt.dt : 1e-3, P;
  double *y = x + nq + ne;
  if (!e) { // the first sample's joint state, the beams undeformed and at rest
    memset(x, 0, sizeof(double) * (size_t)R->nx);
    R->t = mo ? mo->t[0] : 0;
    mbsp_flexDriveState(&R->dr, cfg, R->t, x, y);
  }
  // the profile's samples are equally spaced: nsub steps of h each, at times g h (g counts the
  // steps since t = 0, as a fixed-step run's t = step dt); a user motion's per interval
  long g = 0, nsub = 1;
  double h = 0;
  if (!mo) {
    double span = iv->T / iv->steps;
    nsub = (long)ceil(span / dtmax - 1e-9);
    if (nsub < 1) nsub = 1;
    h = span / (double)nsub;
  }
  for (int i = 0; i < ns && !e; i++) {
    double ti = mo ? mo->t[i] : iv->T * i / iv->steps;
    if (i > 0 && ne > 0) { // the modal coordinates from the previous sample to this one
      double t0 = R->t;
      if (mo) {
        nsub = (long)ceil((ti - t0) / dtmax - 1e-9);
        if (nsub < 1) nsub = 1;
        h = (ti - t0) / (double)nsub;
      }
      for (long j = 0; j < nsub && !e; j++, g++) {
        R->t = mo ? t0 + (double)j * h : (double)g * h;
        e = mbsp_flexFixed(R, MBS_INT_RK4, x, h);
        if (!e) memcpy(x, R->xn, sizeof(double) * (size_t)R->nx);
        R->steps++;
      }
    }
    R->t = ti;
    if (e) break;
    mbsp_flexDriveState(&R->dr, cfg, ti, x, y);
    // the sample: the motion's qdd there (a user motion's given or spline q'', the cycloid's)
    R->dr.acc_at = mo ? mo->qdd + (size_t)i * nv : NULL;
    e = mbsp_flexDriveAccel(&R->dr, cfg, R->o, ti, x, y, x + nq, R->ydd, &P);
    R->dr.acc_at = NULL;
    R->evals++;
    if (e) {
      char msg[1024];
      snprintf(msg, sizeof msg, "%s", mbs_errMsg());
      e = mbs_errSet(e, "inverse: sample %d (t = %.9g s): %s", i, ti, msg);
      break;
    }
    t[i] = ti;
    memcpy(q + (size_t)i * nq, x, sizeof(double) * (size_t)nq);
    memcpy(qd + (size_t)i * nv, y, sizeof(double) * (size_t)nv);
    memcpy(qdd + (size_t)i * nv, R->ydd, sizeof(double) * (size_t)nv);
    memcpy(eta + (size_t)i * ne, x + nq, sizeof(double) * (size_t)ne);
    for (int j = 0; j < R->dr.k; j++) tau[(size_t)i * nv + R->dr.dof[j]] = R->dr.tau[j];
  }
  if (!e && mbsp_cliTable(cli) && ne > 0)
    printf("flexible inverse (%s): %ld rk4 steps of the modal coordinates (at most "
           "integrator.dt = %g s), %ld evaluations; work of the joint forces %.12g J\n",
           R->par ? "flex_part, ranges over the ranks"
           : R->a ? "flex_aba"
                  : "serial oracle",
           R->steps, dtmax, R->evals, x[R->nx - 1]);
  if (!e)
    e = mbsp_inverseFlexWrite(cli, comm, cfg, m, ns, t, q, qd, qdd, tau, mo, eta, ne,
                              R->par ? "flex_part"
                              : R->a ? "flex_aba"
                                     : "flex_oracle");
  free(qs), free(qe), free(t), free(q), free(qd), free(qdd), free(tau), free(eta);
  mbs_motionDestroy(&mo);
  return e;
}
