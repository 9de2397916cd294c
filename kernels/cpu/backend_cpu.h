// kernels/cpu/backend_cpu.h — CPU-backend-specific queries beyond backend.h.
#ifndef ATOLL_KERNELS_CPU_BACKEND_CPU_H
#define ATOLL_KERNELS_CPU_BACKEND_CPU_H

#include "kernels/backend.h"

// Instruction set the CPU backend `b` chose at creation: "avx2" or "scalar".
// ATOLL_CPU_ISA=scalar (read at each backend_cpu_create) forces "scalar".
const char *backend_cpu_isa(const backend *b);
// Worker threads the CPU backend `b` uses (0 at creation resolved to cores).
int backend_cpu_threads(const backend *b);

#endif
