// runtime/util/npy.h — NumPy .npy files (format 1.0): writing float32
// matrices, and reading float32/int32/int64 arrays (for tests and tools).
#ifndef ATOLL_UTIL_NPY_H
#define ATOLL_UTIL_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/util/error.h"

int npy_write_f32(const char *path, const float *data, size_t rows, size_t cols, atoll_error *e);

typedef struct {
    int n_dims;
    size_t shape[4];
    size_t count;
    float *f32;      // set for '<f4' files
    int64_t *i64;    // set for '<i4' and '<i8' files (widened)
} npy_array;

int npy_read(const char *path, npy_array *a, atoll_error *e);
void npy_free(npy_array *a);

#endif
