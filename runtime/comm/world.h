// runtime/comm/world.h — the SPMD world: MPI start-up and shut-down, this
// rank's identity, and the checked MPI call macro. Every mode of atoll,
// a singleton run included, goes through world_init.
#ifndef ATOLL_COMM_WORLD_H
#define ATOLL_COMM_WORLD_H

#include <mpi.h>
#include <stddef.h>

#include "runtime/util/log.h"

typedef struct {
    int rank;
    int size;
    char host[64];
} world_info;

void world_init(int *argc, char ***argv, world_info *w);
void world_finalize(void);

// CHECK_MPI(expr): on failure names the call, file, line and rank, and
// aborts the job through fatal().
#define ATOLL_CHECK_GENERATOR(kind, expr, ok, describe)                        \
    do {                                                                       \
        int check_rc_ = (expr);                                                \
        if (check_rc_ != (ok))                                                 \
            fatal("%s call %s failed at %s:%d: %s", kind, #expr, __FILE__,     \
                  __LINE__, describe(check_rc_));                              \
    } while (0)
const char *world_mpi_error_string(int rc);
#define CHECK_MPI(expr) ATOLL_CHECK_GENERATOR("MPI", expr, MPI_SUCCESS, world_mpi_error_string)

// Broadcasts a byte buffer from rank 0: on rank 0 *buf and *len are sent;
// on the other ranks *buf becomes a malloc'ed copy (NUL-terminated) and *len
// its length. A length of 0 is a valid message (nothing else is sent).
void world_bcast_bytes(void **buf, size_t *len);

#endif
