/// \file flex_modalfile.c
/// Modal files of flexible bodies (issue 34 item 1; docs/flexible.md 14), HDF5, in the line form
/// (version 1: /x, /rhoA, /rhoJ) or the lumped form (version 2: /points/...): the reader the
/// config's `flexible.file` calls (registered with the core by mbsp_init; the core has no HDF5)
/// and the writer of `mbspar check CONFIG --modal-out DIR`. Serial HDF5 (the default file access
/// property list) on whichever rank calls: every rank reads the file while it builds the model,
/// as every rank builds the whole model of a flexible config (main.c). HDF5's own error stack is
/// switched off while they run; a problem is one message naming the file and the dataset.
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "flex_modalfile.h"
#include "mbspar/mbs_flex.h"

#ifdef MBS_HAVE_HDF5
#include <hdf5.h>

#define MBSP_MF_VERSION_ATTR "mbspar_modal_version"

// HDF5's automatic error printing off for the scope of a read or write, restored after
typedef struct {
  H5E_auto2_t fn;
  void *data;
} mbspMfQuiet;

static void mbsp_mfQuiet(mbspMfQuiet *q) {
  H5Eget_auto2(H5E_DEFAULT, &q->fn, &q->data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static void mbsp_mfLoud(const mbspMfQuiet *q) {
  H5Eset_auto2(H5E_DEFAULT, q->fn, q->data);
}

static void mbsp_mfDims(char *s, size_t n, int rank, const hsize_t *d) {
  size_t k = (size_t)snprintf(s, n, "(");
  for (int i = 0; i < rank && k < n; i++)
    k += (size_t)snprintf(s + k, n - k, "%s%llu", i ? ", " : "", (unsigned long long)d[i]);
  if (k < n) snprintf(s + k, n - k, ")");
}

// dataset NAME of rank `rank` (0: a scalar, also accepted as (1)) with the dims `want` (0 in a
// slot: any size, returned in got), read as doubles into a new *buf
static mbsErr mbsp_mfDouble(hid_t f, const char *path, const char *name, int rank,
                            const hsize_t *want, hsize_t *got, mbsReal **buf) {
  *buf = NULL;
  if (H5Lexists(f, name, H5P_DEFAULT) <= 0)
    return mbs_errSet(MBS_ERR_INPUT, "%s: %s: missing dataset", path, name);
  hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
  if (ds < 0) return mbs_errSet(MBS_ERR_INPUT, "%s: %s: not a dataset", path, name);
  hid_t sp = H5Dget_space(ds), ty = H5Dget_type(ds);
  int r = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
  hsize_t d[4] = {0, 0, 0, 0};
  mbsErr e = MBS_OK;
  H5T_class_t cl = ty >= 0 ? H5Tget_class(ty) : H5T_NO_CLASS;
  if (cl != H5T_FLOAT && cl != H5T_INTEGER)
    e = mbs_errSet(MBS_ERR_INPUT, "%s: %s: not numbers (expected a dataset of floats)", path, name);
  if (!e && (r < 0 || r > 4))
    e = mbs_errSet(MBS_ERR_INPUT, "%s: %s: cannot read its shape", path, name);
  if (!e) H5Sget_simple_extent_dims(sp, d, NULL);
  int ok = !e && (r == rank || (rank == 0 && r == 1 && d[0] == 1));
  for (int i = 0; ok && i < rank; i++) ok = !want[i] || want[i] == d[i];
  if (!e && !ok) {
    char g[96], w[96] = "()";
    hsize_t ww[4];
    for (int i = 0; i < rank; i++) ww[i] = want[i];
    mbsp_mfDims(g, sizeof g, r, d);
    if (rank) mbsp_mfDims(w, sizeof w, rank, ww);
    for (char *c = w; *c; c++) // an unconstrained slot shows as "any"
      if (c[0] == '0' && (c[-1] == '(' || c[-1] == ' ') && (c[1] == ',' || c[1] == ')')) *c = '*';
    e = mbs_errSet(MBS_ERR_INPUT, "%s: %s: shape %s, expected %s", path, name, g, w);
  }
  size_t n = 1;
  for (int i = 0; !e && i < r; i++) n *= (size_t)d[i], got[i] = d[i];
  if (!e) {
    *buf = malloc(sizeof(mbsReal) * (n + 1));
    if (!*buf) e = mbs_errSet(MBS_ERR_NOMEM, "out of memory (%s: %s)", path, name);
  }
  if (!e && n && H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, *buf) < 0)
    e = mbs_errSet(MBS_ERR_INPUT, "%s: %s: cannot be read as doubles", path, name);
  if (e) free(*buf), *buf = NULL;
  if (ty >= 0) H5Tclose(ty);
  if (sp >= 0) H5Sclose(sp);
  H5Dclose(ds);
  return e;
}

// the optional node table: /node_names (fixed-length strings) and /node_fe (integers)
static mbsErr mbsp_mfNodes(hid_t f, const char *path, int nfe, mbsFlexFileData *d) {
  int hn = H5Lexists(f, "/node_names", H5P_DEFAULT) > 0,
      hf = H5Lexists(f, "/node_fe", H5P_DEFAULT) > 0;
  if (!hn && !hf) return MBS_OK;
  if (hn != hf)
    return mbs_errSet(MBS_ERR_INPUT,
                      "%s: %s: missing dataset (/node_names and /node_fe go together)", path,
                      hn ? "/node_fe" : "/node_names");
  hsize_t want[1] = {0}, got[1] = {0};
  mbsReal *fe = NULL;
  MBS_CALL(mbsp_mfDouble(f, path, "/node_fe", 1, want, got, &fe));
  if (got[0] > MBS_FLEX_MAX_NODES) {
    free(fe);
    return mbs_errSet(MBS_ERR_INPUT, "%s: /node_fe: %llu nodes, at most %d", path,
                      (unsigned long long)got[0], MBS_FLEX_MAX_NODES);
  }
  int nn = (int)got[0];
  for (int k = 0; k < nn; k++) {
    if (!(fe[k] >= 0 && fe[k] < nfe && fe[k] == (int)fe[k])) {
      mbsErr e = mbs_errSet(
          MBS_ERR_INPUT,
          "%s: /node_fe: entry %d is %g, not an FE node index (0 .. %d; lumped: a point)", path, k,
          fe[k], nfe - 1);
      free(fe);
      return e;
    }
    d->node_fe[k] = (int)fe[k];
  }
  free(fe);
  hid_t ds = H5Dopen2(f, "/node_names", H5P_DEFAULT);
  if (ds < 0) return mbs_errSet(MBS_ERR_INPUT, "%s: /node_names: not a dataset", path);
  hid_t ty = H5Dget_type(ds), sp = H5Dget_space(ds);
  hsize_t n = 0;
  mbsErr e = MBS_OK;
  if (ty < 0 || H5Tget_class(ty) != H5T_STRING || H5Tis_variable_str(ty) > 0)
    e = mbs_errSet(MBS_ERR_INPUT,
                   "%s: /node_names: expected fixed-length strings (numpy dtype \"S64\")", path);
  else if (H5Tget_size(ty) > MBS_FLEX_NAME)
    e = mbs_errSet(MBS_ERR_INPUT, "%s: /node_names: strings of %zu bytes, at most %d", path,
                   H5Tget_size(ty), MBS_FLEX_NAME);
  else if (sp < 0 || H5Sget_simple_extent_ndims(sp) != 1 ||
           H5Sget_simple_extent_dims(sp, &n, NULL) < 0 || n != (hsize_t)nn)
    e = mbs_errSet(MBS_ERR_INPUT, "%s: /node_names: expected %d names (as /node_fe)", path, nn);
  char buf[MBS_FLEX_MAX_NODES * (MBS_FLEX_NAME + 1)]; // a name of 64 bytes gains its NUL here
  memset(buf, 0, sizeof buf);
  if (!e && nn) {
    hid_t mt = H5Tcopy(H5T_C_S1);
    H5Tset_size(mt, MBS_FLEX_NAME + 1);
    H5Tset_strpad(mt, H5T_STR_NULLTERM);
    if (H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
      e = mbs_errSet(MBS_ERR_INPUT, "%s: /node_names: cannot be read as strings", path);
    H5Tclose(mt);
  }
  for (int k = 0; !e && k < nn; k++) {
    const char *nm = buf + (size_t)k * (MBS_FLEX_NAME + 1);
    if (strlen(nm) >= MBS_FLEX_NAME)
      e = mbs_errSet(MBS_ERR_INPUT, "%s: /node_names: name %d is longer than %d characters", path,
                     k, MBS_FLEX_NAME - 1);
    else
      memcpy(d->node_name[k], nm, strlen(nm) + 1);
  }
  d->nnodes = e ? 0 : nn;
  if (ty >= 0) H5Tclose(ty);
  if (sp >= 0) H5Sclose(sp);
  H5Dclose(ds);
  return e;
}

static mbsErr mbsp_mfReadOpen(hid_t f, const char *path, mbsFlexFileData *d) {
  // the format version (a root attribute)
  if (H5Aexists(f, MBSP_MF_VERSION_ATTR) <= 0)
    return mbs_errSet(MBS_ERR_INPUT, "%s: /: no attribute %s (not an mbspar modal file)", path,
                      MBSP_MF_VERSION_ATTR);
  hid_t a = H5Aopen(f, MBSP_MF_VERSION_ATTR, H5P_DEFAULT);
  long long ver = -1;
  herr_t rc = a >= 0 ? H5Aread(a, H5T_NATIVE_LLONG, &ver) : -1;
  if (a >= 0) H5Aclose(a);
  if (rc < 0)
    return mbs_errSet(MBS_ERR_INPUT, "%s: /%s: not an integer", path, MBSP_MF_VERSION_ATTR);
  if (ver != MBS_FLEX_FILE_VERSION && ver != MBS_FLEX_FILE_VERSION_LUMPED)
    return mbs_errSet(
        MBS_ERR_INPUT, "%s: /%s = %lld: this mbspar reads versions %d (line) and %d (lumped)", path,
        MBSP_MF_VERSION_ATTR, ver, MBS_FLEX_FILE_VERSION, MBS_FLEX_FILE_VERSION_LUMPED);
  int lumped = ver == MBS_FLEX_FILE_VERSION_LUMPED;
  mbsFlexModal *md = &d->modal;
  hsize_t w[2] = {0, 0}, g[2] = {0, 0};
  int nfe;
  if (lumped) { // the points: positions, masses, optional rotary inertias (docs/flexible.md 14)
    hsize_t w3[2] = {0, 3};
    MBS_CALL(mbsp_mfDouble(f, path, "/points/pos", 2, w3, g, &md->pos));
    nfe = (int)g[0];
    if (nfe < 1) return mbs_errSet(MBS_ERR_INPUT, "%s: /points/pos: at least one point", path);
    hsize_t pn[1] = {(hsize_t)nfe}, p6[2] = {(hsize_t)nfe, 6};
    MBS_CALL(mbsp_mfDouble(f, path, "/points/mass", 1, pn, g, &md->pmass));
    if (H5Lexists(f, "/points/inertia", H5P_DEFAULT) > 0)
      MBS_CALL(mbsp_mfDouble(f, path, "/points/inertia", 2, p6, g, &md->pJ));
    md->x = malloc(sizeof(mbsReal) * (size_t)nfe);
    if (!md->x) return mbs_errSet(MBS_ERR_NOMEM, "out of memory (%s)", path);
    for (int i = 0; i < nfe; i++) md->x[i] = md->pos[3 * i];
  } else {
    MBS_CALL(mbsp_mfDouble(f, path, "/x", 1, w, g, &md->x));
    nfe = (int)g[0];
    if (nfe < 2)
      return mbs_errSet(MBS_ERR_INPUT, "%s: /x: at least 2 FE nodes (one element), got %d", path,
                        nfe);
  }
  md->nfe = nfe;
  MBS_CALL(mbsp_mfDouble(f, path, "/M", 2, w, g, &md->M));
  int m = (int)g[0];
  if (g[1] != g[0])
    return mbs_errSet(MBS_ERR_INPUT, "%s: /M: shape (%d, %d), expected a square matrix", path, m,
                      (int)g[1]);
  md->m = m;
  hsize_t mm[2] = {(hsize_t)m, (hsize_t)m}, ph[2] = {6 * (hsize_t)nfe, (hsize_t)m};
  hsize_t el[1] = {(hsize_t)nfe - 1}, sb[2] = {3, (hsize_t)m}, v3[1] = {3}, v6[1] = {6};
  MBS_CALL(mbsp_mfDouble(f, path, "/K", 2, mm, g, &md->K));
  MBS_CALL(mbsp_mfDouble(f, path, "/Phi", 2, ph, g, &md->Phi));
  if (!lumped) {
    MBS_CALL(mbsp_mfDouble(f, path, "/rhoA", 1, el, g, &md->rhoA));
    MBS_CALL(mbsp_mfDouble(f, path, "/rhoJ", 1, el, g, &md->rhoJ));
  }
  MBS_CALL(mbsp_mfDouble(f, path, "/Sbar", 2, sb, g, &md->Sbar));
  hsize_t any[1] = {0};
  MBS_CALL(mbsp_mfDouble(f, path, "/omega_fixed", 1, any, g, &md->omega_fixed));
  if (g[0] > (hsize_t)m)
    return mbs_errSet(MBS_ERR_INPUT,
                      "%s: /omega_fixed: %llu fixed-interface modes, more than the %d modal "
                      "coordinates",
                      path, (unsigned long long)g[0], m);
  md->nmodes = (int)g[0], md->nbound = m - md->nmodes;
  mbsReal *t = NULL;
  MBS_CALL(mbsp_mfDouble(f, path, "/mass", 0, NULL, g, &t));
  md->mass = t[0], free(t), t = NULL;
  MBS_CALL(mbsp_mfDouble(f, path, "/rigid/mass", 0, NULL, g, &t));
  d->mass = t[0], free(t), t = NULL;
  MBS_CALL(mbsp_mfDouble(f, path, "/rigid/com", 1, v3, g, &t));
  memcpy(d->com, t, sizeof d->com), free(t), t = NULL;
  MBS_CALL(mbsp_mfDouble(f, path, "/rigid/inertia", 1, v6, g, &t));
  memcpy(d->inertia, t, sizeof d->inertia), free(t);
  return mbsp_mfNodes(f, path, nfe, d);
}

static mbsErr mbsp_flexFileRead(const char *path, mbsFlexFileData *d) {
  memset(d, 0, sizeof *d);
  struct stat st;
  if (stat(path, &st) != 0)
    return mbs_errSet(MBS_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
  if (!S_ISREG(st.st_mode))
    return mbs_errSet(MBS_ERR_INPUT, "%s: not a regular file (%s)", path,
                      S_ISDIR(st.st_mode)    ? "a directory"
                      : S_ISFIFO(st.st_mode) ? "a FIFO"
                                             : "a device or socket");
  mbspMfQuiet q;
  mbsp_mfQuiet(&q);
  mbsErr e = MBS_OK;
  if (H5Fis_hdf5(path) <= 0) e = mbs_errSet(MBS_ERR_INPUT, "%s: not an HDF5 file", path);
  hid_t f = e ? -1 : H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (!e && f < 0) e = mbs_errSet(MBS_ERR_INPUT, "%s: cannot open as HDF5", path);
  if (!e) e = mbsp_mfReadOpen(f, path, d);
  if (f >= 0) H5Fclose(f);
  mbsp_mfLoud(&q);
  if (e) mbs_flexFileFree(d);
  return e;
}

// dataset NAME (rank 0: a scalar) of doubles
static int mbsp_mfPut(hid_t f, const char *name, int rank, const hsize_t *dims, const mbsReal *a) {
  hid_t sp = rank ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR);
  hid_t ds =
      sp >= 0 ? H5Dcreate2(f, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) : -1;
  size_t n = 1;
  for (int i = 0; i < rank; i++) n *= (size_t)dims[i];
  int bad = ds < 0 || (n && H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, a) < 0);
  if (ds >= 0) H5Dclose(ds);
  if (sp >= 0) H5Sclose(sp);
  return bad;
}

static int mbsp_mfWriteOpen(hid_t f, const mbsFlexBody *fb) {
  const mbsFlexModal *md = &fb->modal;
  int bad = 0, m = md->m, nfe = md->nfe;
  long long ver = md->pos ? MBS_FLEX_FILE_VERSION_LUMPED : MBS_FLEX_FILE_VERSION;
  hid_t as = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(f, MBSP_MF_VERSION_ATTR, H5T_STD_I64LE, as, H5P_DEFAULT, H5P_DEFAULT);
  bad |= a < 0 || H5Awrite(a, H5T_NATIVE_LLONG, &ver) < 0;
  if (a >= 0) H5Aclose(a);
  H5Sclose(as);
  hsize_t mm[2] = {(hsize_t)m, (hsize_t)m}, ph[2] = {6 * (hsize_t)nfe, (hsize_t)m};
  hsize_t nx[1] = {(hsize_t)nfe}, el[1] = {(hsize_t)nfe - 1}, sb[2] = {3, (hsize_t)m};
  hsize_t nm[1] = {(hsize_t)md->nmodes}, v3[1] = {3}, v6[1] = {6};
  if (md->pos) { // the lumped form
    hsize_t p3[2] = {(hsize_t)nfe, 3}, p6[2] = {(hsize_t)nfe, 6};
    hid_t pg = H5Gcreate2(f, "/points", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    bad |= pg < 0;
    if (pg >= 0) H5Gclose(pg);
    bad |= mbsp_mfPut(f, "/points/pos", 2, p3, md->pos) ||
           mbsp_mfPut(f, "/points/mass", 1, nx, md->pmass) ||
           (md->pJ && mbsp_mfPut(f, "/points/inertia", 2, p6, md->pJ));
  } else
    bad |= mbsp_mfPut(f, "/x", 1, nx, md->x) || mbsp_mfPut(f, "/rhoA", 1, el, md->rhoA) ||
           mbsp_mfPut(f, "/rhoJ", 1, el, md->rhoJ);
  bad |= mbsp_mfPut(f, "/M", 2, mm, md->M) || mbsp_mfPut(f, "/K", 2, mm, md->K) ||
         mbsp_mfPut(f, "/Phi", 2, ph, md->Phi) || mbsp_mfPut(f, "/Sbar", 2, sb, md->Sbar) ||
         mbsp_mfPut(f, "/omega_fixed", 1, nm, md->omega_fixed) ||
         mbsp_mfPut(f, "/mass", 0, NULL, &md->mass);
  hid_t g = H5Gcreate2(f, "/rigid", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  bad |= g < 0;
  if (g >= 0) H5Gclose(g);
  bad |= mbsp_mfPut(f, "/rigid/mass", 0, NULL, &fb->rigid_mass) ||
         mbsp_mfPut(f, "/rigid/com", 1, v3, fb->rigid_com) ||
         mbsp_mfPut(f, "/rigid/inertia", 1, v6, fb->rigid_inertia);
  if (fb->nnodes) { // the named nodes: names and FE nodes
    mbsReal fe[MBS_FLEX_MAX_NODES];
    char names[MBS_FLEX_MAX_NODES * MBS_FLEX_NAME];
    memset(names, 0, sizeof names);
    for (int k = 0; k < fb->nnodes; k++) {
      fe[k] = mbs_flexNodeFe(fb, k);
      memcpy(names + (size_t)k * MBS_FLEX_NAME, fb->node_name[k], MBS_FLEX_NAME);
    }
    hsize_t nn[1] = {(hsize_t)fb->nnodes};
    hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, MBS_FLEX_NAME);
    H5Tset_strpad(st, H5T_STR_NULLPAD);
    hid_t sp = H5Screate_simple(1, nn, NULL);
    hid_t ds = H5Dcreate2(f, "/node_names", st, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    bad |= ds < 0 || H5Dwrite(ds, st, H5S_ALL, H5S_ALL, H5P_DEFAULT, names) < 0;
    if (ds >= 0) H5Dclose(ds);
    H5Sclose(sp), H5Tclose(st);
    hid_t is = H5Screate_simple(1, nn, NULL);
    ds = H5Dcreate2(f, "/node_fe", H5T_STD_I32LE, is, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    bad |= ds < 0 || H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, fe) < 0;
    if (ds >= 0) H5Dclose(ds);
    H5Sclose(is);
  }
  return bad;
}

mbsErr mbsp_flexModalWrite(const mbsFlexBody *fb, const char *path) {
  size_t n = strlen(path) + 8;
  char *tmp = malloc(n);
  if (!tmp) return mbs_errSet(MBS_ERR_NOMEM, "out of memory");
  snprintf(tmp, n, "%s.tmp", path);
  mbspMfQuiet q;
  mbsp_mfQuiet(&q);
  hid_t f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  int bad = f < 0 || mbsp_mfWriteOpen(f, fb);
  if (f >= 0) bad |= H5Fclose(f) < 0;
  mbsp_mfLoud(&q);
  mbsErr e = MBS_OK;
  if (bad || rename(tmp, path) != 0) {
    e = mbs_errSet(MBS_ERR_IO, "mbspar: --modal-out: cannot write %s", path);
    remove(tmp);
  }
  free(tmp);
  return e;
}

void mbsp_flexFileRegister(void) {
  mbs_flexFileSetReader(mbsp_flexFileRead);
}

#else // no HDF5: no reader (the config says so), and the writer refuses

mbsErr mbsp_flexModalWrite(const mbsFlexBody *fb, const char *path) {
  (void)fb;
  return mbs_errSet(MBS_ERR_UNSUPPORTED, "mbspar: --modal-out %s: built without HDF5", path);
}

void mbsp_flexFileRegister(void) {}

#endif
