// runtime/model/gguf_model.h — loading a GGUF file into a `model` (the GGUF
// counterpart of model.c's Hugging Face directory loader; model_load picks
// one by what the path is).
#ifndef ATOLL_MODEL_GGUF_MODEL_H
#define ATOLL_MODEL_GGUF_MODEL_H

#include "runtime/model/model.h"

// Architectures: general.architecture "llama" and "qwen2".
int gguf_model_load(model *m, const char *path, backend *be, atoll_error *e);

#endif
