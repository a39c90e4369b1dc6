/// \file urdf_stream.c
/// model.urdf read in pieces and broadcast as the parsers ask for them (urdf_stream.h).
///
/// Every rank runs the same parser on the same bytes, so every rank asks for the next piece at
/// the same point; a rank whose parse stopped early (an error every rank meets at the same byte,
/// or one of its own such as out of memory) takes the remaining pieces without parsing them, so
/// every rank takes part in the same number of broadcasts: one per piece and one for the end.
#include "urdf_stream.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "mbspar/mbs_textfile.h"

enum { MBSP_PIECE = 1 << 20 }; // bytes per broadcast

typedef struct {
  mbspComm *comm;
  const char *path;
  int fd;         // rank 0: the file
  char *buf;      // the current piece
  long have, at;  // its bytes, the next one to hand out
  int end;        // the end has come (a piece of 0 bytes)
  int rerr;       // rank 0 could not read (every rank learns it with the end)
  mbsErr cerr;    // a broadcast failed
  char rmsg[512]; // rank 0: why it could not read
} mbspPieces;

// the next piece from rank 0 (collective): {bytes, read error} then the bytes
static mbsErr mbsp_piece(mbspPieces *p) {
  long hdr[2] = {0, 0};
  if (mbsp_rank(p->comm) == 0 && !p->rerr) {
    size_t n = 0;
    if (mbs_fileReadSome(p->fd, p->path, p->buf, MBSP_PIECE, &n)) {
      snprintf(p->rmsg, sizeof p->rmsg, "%s", mbs_errMsg());
      hdr[1] = 1, n = 0;
    }
    hdr[0] = (long)n;
  }
  mbsErr e = mbsp_bcastBytes(p->comm, hdr, sizeof hdr, 0);
  if (!e && hdr[0] > 0) e = mbsp_bcastBytes(p->comm, p->buf, (size_t)hdr[0], 0);
  if (e) return p->cerr = e, p->end = 1, e;
  p->have = hdr[0], p->at = 0;
  if (hdr[1]) p->rerr = 1;
  if (hdr[0] == 0) p->end = 1;
  return MBS_OK;
}

// libxml2's reader (mbsUrdfReadFn)
static int mbsp_pieceRead(void *ctx, char *buf, int len) {
  mbspPieces *p = ctx;
  if (len <= 0) return 0;
  if (p->at == p->have) {
    if (p->end) return 0;
    if (mbsp_piece(p)) return -1;
    if (p->end) return 0;
  }
  long n = p->have - p->at;
  if (n > len) n = len;
  memcpy(buf, p->buf + p->at, (size_t)n);
  p->at += n;
  return (int)n;
}

mbsErr mbsp_urdfStream(mbspComm *comm, mbsConfig *cfg, int *unread) {
  mbspPieces p = {comm, cfg->urdf_path, -1, NULL, 0, 0, 0, 0, MBS_OK, ""};
  size_t size = 0;
  mbsErr e = MBS_OK;
  if (mbsp_rank(comm) == 0) e = mbs_fileOpen(cfg->urdf_path, &p.fd, &size);
  e = mbsp_agreeErr(comm, e);
  *unread = e != MBS_OK;
  long sz = (long)size;
  if (!e) e = mbsp_bcastBytes(comm, &sz, sizeof sz, 0);
  if (!e) {
    p.buf = malloc(MBSP_PIECE);
    e = mbsp_agreeErr(comm, p.buf ? MBS_OK : mbs_errSet(MBS_ERR_NOMEM, "out of memory"));
  }
  if (!e) {
    mbsErr pe = mbs_configSetUrdfStream(cfg, mbsp_pieceRead, &p, (size_t)sz);
    while (!p.end) mbsp_piece(&p); // the pieces this rank's parse did not take
    if (p.cerr) pe = p.cerr;
    // rank 0 could not read the file to its end: that, not what the parse made of the rest
    if (p.rerr) {
      pe = mbs_errSet(MBS_ERR_INPUT, "%s", p.rmsg[0] ? p.rmsg : "read error");
      *unread = 1;
    }
    e = mbsp_agreeErr(comm, pe);
  }
  if (p.fd >= 0) close(p.fd);
  free(p.buf);
  return e;
}
