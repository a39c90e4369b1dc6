/// \file peer_mujoco.c
/// MuJoCo peer of the serial benchmark: the benchmark chain or tree written as MJCF (nested
/// bodies) or URDF (flat, for chains deeper than MJCF's nesting limit), loaded with mj_loadXML
/// from a temporary file, contacts disabled; eval = mj_forward. Inertias are given explicitly so
/// the physics equals mbspar's model. MuJoCo numbers the joints in depth-first order of the file
/// (not mbspar's heap order for trees): link i's joint is found by its name.
#define _POSIX_C_SOURCE 200809L
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bench_peers.h"

struct benchPeer {
  mjModel *m;
  mjData *d;
  int *jnt; // (n) MuJoCo joint id of link i
};

// nested MJCF: link i and, inside it, its subtree (a chain: body i inside body i-1). Iterative
// (an explicit stack), since a chain is thousands of levels deep.
static void bench_writeMjcf(FILE *f, const benchChain *c) {
  double I[3], a[3];
  bench_chainInertia(c, I);
  fprintf(f, "<mujoco model=\"chain\">\n <compiler angle=\"radian\" inertiafromgeom=\"false\"/>\n");
  fprintf(f, " <option gravity=\"0 0 %.17g\"><flag contact=\"disable\"/></option>\n <worldbody>\n",
          -c->g);
  // stack of (link, state): state 0 = open the body, 1 = close it
  int *st = malloc(2 * (size_t)(c->n + 1) * sizeof *st), top = 0;
  if (!st) return;
  st[top++] = 0, st[top++] = 0;
  while (top > 0) {
    int state = st[--top], i = st[--top];
    if (state == 1) {
      fputs("</body>\n", f);
      continue;
    }
    bench_chainAxis(i, a);
    fprintf(f, "<body name=\"b%d\" pos=\"0 0 %.17g\">\n", i, i == 0 ? 0.0 : -c->len);
    fprintf(f, " <joint name=\"j%d\" type=\"hinge\" axis=\"%g %g %g\"/>\n", i, a[0], a[1], a[2]);
    fprintf(f, " <inertial pos=\"0 0 %.17g\" mass=\"%.17g\" diaginertia=\"%.17g %.17g %.17g\"/>\n",
            -c->len / 2, c->mass, I[0], I[1], I[2]);
    fprintf(f,
            " <geom type=\"capsule\" fromto=\"0 0 0 0 0 %.17g\" size=\"%.17g\" contype=\"0\" "
            "conaffinity=\"0\"/>\n",
            -c->len, c->radius);
    st[top++] = i, st[top++] = 1; // close after the children
    int first = c->tree ? 2 * i + 1 : i + 1, last = c->tree ? 2 * i + 2 : i + 1;
    for (int k = last; k >= first; k--)
      if (k < c->n) st[top++] = k, st[top++] = 0;
  }
  free(st);
  fputs(" </worldbody>\n</mujoco>\n", f);
}

// flat URDF: links and continuous joints
static void bench_writeUrdf(FILE *f, const benchChain *c) {
  double I[3], a[3];
  bench_chainInertia(c, I);
  fputs("<robot name=\"chain\">\n <mujoco><compiler angle=\"radian\" inertiafromgeom=\"false\" "
        "fusestatic=\"false\" discardvisual=\"true\"/></mujoco>\n <link name=\"base\"/>\n",
        f);
  for (int i = 0; i < c->n; i++) {
    bench_chainAxis(i, a);
    fprintf(f, " <link name=\"b%d\"><inertial><origin xyz=\"0 0 %.17g\" rpy=\"0 0 0\"/>", i,
            -c->len / 2);
    fprintf(f, "<mass value=\"%.17g\"/>", c->mass);
    fprintf(f, "<inertia ixx=\"%.17g\" iyy=\"%.17g\" izz=\"%.17g\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/>",
            I[0], I[1], I[2]);
    fprintf(f, "</inertial><collision><origin xyz=\"0 0 %.17g\" rpy=\"0 0 0\"/>", -c->len / 2);
    fprintf(f, "<geometry><cylinder radius=\"%.17g\" length=\"%.17g\"/></geometry></collision>",
            c->radius, c->len);
    fputs("</link>\n", f);
    char parent[32] = "base";
    if (i > 0) snprintf(parent, sizeof parent, "b%d", bench_chainParent(c, i));
    fprintf(f, " <joint name=\"j%d\" type=\"continuous\"><parent link=\"%s\"/>", i, parent);
    fprintf(f, "<child link=\"b%d\"/><origin xyz=\"0 0 %.17g\" rpy=\"0 0 0\"/>", i,
            i == 0 ? 0.0 : -c->len);
    fprintf(f, "<axis xyz=\"%g %g %g\"/></joint>\n", a[0], a[1], a[2]);
  }
  fputs("</robot>\n", f);
}

benchPeer *bench_mujocoCreate(const benchChain *c, int format, char *err, size_t errlen) {
  char path[] = "/tmp/mbspar_bench_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) {
    snprintf(err, errlen, "cannot create a temporary file");
    return NULL;
  }
  FILE *f = fdopen(fd, "w");
  if (!f) {
    close(fd);
    unlink(path);
    snprintf(err, errlen, "cannot open the temporary file");
    return NULL;
  }
  if (format == 1)
    bench_writeUrdf(f, c);
  else
    bench_writeMjcf(f, c);
  fclose(f);

  // load, keep the loader's message on failure
  char lerr[1000] = "";
  mjModel *m = mj_loadXML(path, NULL, lerr, sizeof lerr);
  unlink(path);
  if (!m) {
    snprintf(err, errlen, "mj_loadXML (%s, N=%d) failed: %s", format == 1 ? "URDF" : "MJCF", c->n,
             lerr);
    return NULL;
  }
  if (m->nv != c->n) {
    snprintf(err, errlen, "MuJoCo model has nv=%d, expected %d", m->nv, c->n);
    mj_deleteModel(m);
    return NULL;
  }
  m->opt.disableflags |= mjDSBL_CONTACT;
  m->opt.gravity[0] = m->opt.gravity[1] = 0;
  m->opt.gravity[2] = -c->g;

  // state: link i's joint by name, one dof each
  mjData *d = mj_makeData(m);
  benchPeer *p = malloc(sizeof *p);
  int *jnt = malloc((size_t)c->n * sizeof *jnt);
  if (!d || !p || !jnt) {
    snprintf(err, errlen, "out of memory");
    free(p), free(jnt);
    if (d) mj_deleteData(d);
    mj_deleteModel(m);
    return NULL;
  }
  for (int i = 0; i < c->n; i++) {
    char name[32];
    snprintf(name, sizeof name, "j%d", i);
    jnt[i] = mj_name2id(m, mjOBJ_JOINT, name);
    if (jnt[i] < 0) {
      snprintf(err, errlen, "MuJoCo model has no joint %s", name);
      free(p), free(jnt);
      mj_deleteData(d);
      mj_deleteModel(m);
      return NULL;
    }
    d->qpos[m->jnt_qposadr[jnt[i]]] = bench_chainQ0(i);
    d->qvel[m->jnt_dofadr[jnt[i]]] = bench_chainQd0(i);
  }
  p->m = m;
  p->d = d;
  p->jnt = jnt;
  return p;
}

void bench_mujocoEval(void *peer) {
  benchPeer *p = peer;
  mj_forward(p->m, p->d);
}

void bench_mujocoQacc(const benchPeer *p, double *qacc) {
  for (int i = 0; i < p->m->njnt; i++) qacc[i] = p->d->qacc[p->m->jnt_dofadr[p->jnt[i]]];
}

void bench_mujocoDestroy(benchPeer *p) {
  if (!p) return;
  mj_deleteData(p->d);
  mj_deleteModel(p->m);
  free(p->jnt);
  free(p);
}

const char *bench_mujocoVersion(void) {
  return mj_versionString();
}
