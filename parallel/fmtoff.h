/// \file fmtoff.h
/// Output rows formatted by a waiting rank (solver.method = auto running a serial method at
/// several ranks, docs/model.md "Choosing the method"): rank 0 runs the verb alone and sends each
/// trajectory row as doubles to rank 1, which formats it ("%.17g" fields, commas, a newline) and
/// sends the text back while rank 0 computes on; rank 0 writes the text into its files one row
/// later (sim_out.c). Rank 1 serves from its waiting loop (mbsp_agreeErrIdle), so it still relays
/// signals and leaves when rank 0 does. The MPI calls are in comm_fmt.c.
#ifndef MBSP_FMTOFF_H
#define MBSP_FMTOFF_H
#include <stddef.h>
#include "mbspar/mbs_parallel.h"

/// Begin (\p on != 0, the same on every rank; needs 2 ranks or more) over the job's \p comm.
/// Collective.
mbsErr mbsp_fmtBegin(mbspComm *comm, int on);
/// Rank 0: is a formatting rank there (between mbsp_fmtBegin and mbsp_fmtDrain)? Local.
int mbsp_fmtActive(void);
/// Rank 0: buffers for rows of \p n doubles (before the first row). Local.
mbsErr mbsp_fmtReserve(long n);
/// Rank 0: the row \p v of \p n doubles to the formatting rank; its text is collected by
/// mbsp_fmtCollect before the next row is sent. Local (a send).
mbsErr mbsp_fmtSubmit(const double *v, long n);
/// Rank 0: the text of the row sent last (*len 0 if none is outstanding, or if the formatting
/// rank could not format it: out of memory; rank 0 then formats it itself); valid until the next
/// submit; also completes the send (\p v of mbsp_fmtSubmit may change after it); *waited (may be
/// NULL): the text was not there yet, rank 0 had to wait for it. Local (waits for the formatting
/// rank).
mbsErr mbsp_fmtCollect(const char **text, size_t *len, int *waited);
/// Rank 0: collect whatever is outstanding and stop offering rows (after the verb, also after a
/// failure, before mbsp_agreeErrIdle). Local.
void mbsp_fmtDrain(void);
/// The formatting rank, while waiting: formats and returns every row pending; the number served.
/// Local.
int mbsp_fmtServe(void);
/// This rank formats rows (it is rank 1 of a channel begun with \p on): it polls every 50 us.
/// Local.
int mbsp_fmtServing(void);
/// Free the channel (after mbsp_agreeErrIdle). Collective.
void mbsp_fmtEnd(void);
/// The text of a row: "%.17g" of each of the \p n values, separated by commas, and a newline,
/// into \p buf (mbsp_fmtTextMax(n) bytes); its length.
size_t mbsp_fmtRow(const double *v, long n, char *buf);
size_t mbsp_fmtTextMax(long n);
#endif
