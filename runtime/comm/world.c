// runtime/comm/world.c — MPI start-up, rank identity and small broadcasts.
#include "runtime/comm/world.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void world_init(int *argc, char ***argv, world_info *w) {
    int provided = 0;
    CHECK_MPI(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided));
    if (provided < MPI_THREAD_FUNNELED)
        fatal("MPI provides thread level %d, atoll needs MPI_THREAD_FUNNELED", provided);
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &w->rank));
    CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &w->size));
    int len = 0;
    char name[MPI_MAX_PROCESSOR_NAME];
    CHECK_MPI(MPI_Get_processor_name(name, &len));
    snprintf(w->host, sizeof w->host, "%.63s", name);
    log_set_identity(w->rank, w->host);
}

void world_finalize(void) { MPI_Finalize(); }

const char *world_mpi_error_string(int rc) {
    static char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "MPI error %d", rc);
    return text;
}

void world_bcast_bytes(void **buf, size_t *len) {
    int rank = 0;
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    long long n = rank == 0 ? (long long)*len : 0;
    CHECK_MPI(MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD));
    if (n > INT_MAX) fatal("broadcast of %lld bytes is larger than one MPI message", n);
    if (rank != 0) {
        *len = (size_t)n;
        *buf = malloc((size_t)n + 1);
        if (!*buf) fatal("out of memory receiving a broadcast of %lld bytes", n);
        ((char *)*buf)[n] = 0;
    }
    if (n > 0) CHECK_MPI(MPI_Bcast(*buf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD));
}
