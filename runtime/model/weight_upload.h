// runtime/model/weight_upload.h — putting tensors found in a model file on
// the backend, the same way for every file format: matrices as device views
// of the file's bytes in their own dtype, vectors (norms, biases) converted
// to F32.
#ifndef ATOLL_MODEL_WEIGHT_UPLOAD_H
#define ATOLL_MODEL_WEIGHT_UPLOAD_H

#include <stddef.h>

#include "kernels/backend.h"
#include "runtime/util/error.h"

// A device view of host bytes: no copy where the backend reads host memory
// (view_host), else a device copy. NULL when out of device memory.
const void *weight_device_view(backend *be, const void *host, size_t bytes);
// Binds *out to the bytes of a [rows, cols] matrix of `type`.
int weight_bind_matrix(backend *be, const void *host, size_t bytes, dtype type, int rows, int cols,
                       weight_matrix *out, const char *name, atoll_error *e);
// *out = a new F32 device vector holding the len elements of `type` at host,
// converted by the backend's embedding op (a one-row table).
int weight_upload_vector(backend *be, const void *host, size_t bytes, dtype type, int len, float **out,
                         const char *name, atoll_error *e);

#endif
