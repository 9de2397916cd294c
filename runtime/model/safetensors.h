// runtime/model/safetensors.h — one safetensors file: the JSON header parsed
// and validated, tensor data mmapped read-only (never copied).
#ifndef ATOLL_MODEL_SAFETENSORS_H
#define ATOLL_MODEL_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/backend.h"
#include "runtime/util/error.h"

#define SAFETENSORS_MAX_DIMS 8

typedef struct {
    char *name;
    dtype type;
    int n_dims;
    int64_t shape[SAFETENSORS_MAX_DIMS];
    const void *data;   // points into the mapping
    size_t bytes;
} safetensors_tensor;

typedef struct {
    char *path;
    void *map;
    size_t map_bytes;
    safetensors_tensor *tensors;
    int n_tensors;
} safetensors_file;

int safetensors_open(safetensors_file *f, const char *path, atoll_error *e);
void safetensors_close(safetensors_file *f);
const safetensors_tensor *safetensors_find(const safetensors_file *f, const char *name);

#endif
