// runtime/model/arch.h — the architecture table: the Hugging Face
// `architectures[0]` names atoll runs and how each differs from the common
// Llama-style decoder. Adding an architecture is one row here (and, if it
// needs a new feature, one flag in model_desc).
#ifndef ATOLL_MODEL_ARCH_H
#define ATOLL_MODEL_ARCH_H

#include "runtime/model/model_desc.h"

typedef struct {
    const char *hf_name;
    arch_id arch;
    int qkv_bias;               // q/k/v projections always have a bias
    int attention_bias_default; // default of config.json "attention_bias"
    int qk_norm;
    int post_norms;
    int fused_gate_up;
    int rope_interleaved;
    double partial_rotary_default;
} arch_info;

// The row for an architecture name, or NULL.
const arch_info *arch_find(const char *hf_name);
// "LlamaForCausalLM, MistralForCausalLM, ..." for error messages.
const char *arch_supported_list(void);

#endif
