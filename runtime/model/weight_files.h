// runtime/model/weight_files.h — the safetensors files of a model directory:
// a single model.safetensors, or shards listed by model.safetensors.index.json.
#ifndef ATOLL_MODEL_WEIGHT_FILES_H
#define ATOLL_MODEL_WEIGHT_FILES_H

#include "runtime/model/safetensors.h"

typedef struct {
    safetensors_file *files;
    int n_files;
} weight_files;

int weight_files_open(weight_files *w, const char *dir, atoll_error *e);
void weight_files_close(weight_files *w);
// The tensor and the file it lives in, or NULL.
const safetensors_tensor *weight_files_find(const weight_files *w, const char *name,
                                            const safetensors_file **file);

#endif
