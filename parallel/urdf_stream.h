/// \file urdf_stream.h
/// model.urdf read in pieces (issue 35 item 4): rank 0 reads the URDF file a piece at a time and
/// broadcasts each piece; every rank's parser (mbs_configSetUrdfStream) takes the pieces as they
/// come, so no rank holds the whole file (a 2^16-link robot's 25.7 MB of XML on every rank
/// before). docs/urdf.md "Memory".
#ifndef MBS_URDF_STREAM_H
#define MBS_URDF_STREAM_H
#include "mbspar/mbs_config.h"
#include "mbspar/mbs_parallel.h"

/// Read cfg->urdf_path on rank 0 and parse it on every rank into cfg->urdf (mbs_configSetUrdf's
/// checks and messages: a file that cannot be read is "PATH:0: ...", the caller adds the
/// config's line: *unread is 1 then), every rank with the same verdict. Collective.
mbsErr mbsp_urdfStream(mbspComm *comm, mbsConfig *cfg, int *unread);

#endif
