// runtime/model/hf_config.h — reads a Hugging Face config.json into a
// model_desc, with the defaults transformers uses for each architecture.
#ifndef ATOLL_MODEL_HF_CONFIG_H
#define ATOLL_MODEL_HF_CONFIG_H

#include "runtime/model/model_desc.h"
#include "runtime/util/error.h"

int hf_config_load(model_desc *d, const char *config_path, atoll_error *e);

#endif
