// runtime/model/model_desc.h — what a model is, independent of its file
// format: architecture and hyperparameters, filled from config.json (and
// later GGUF metadata), read by the loader, the forward pass and the planner.
#ifndef ATOLL_MODEL_MODEL_DESC_H
#define ATOLL_MODEL_MODEL_DESC_H

#include "kernels/backend.h"

typedef enum {
    ARCH_LLAMA = 0,   // LlamaForCausalLM, MistralForCausalLM
    ARCH_QWEN2 = 1,   // q/k/v bias
    ARCH_QWEN3 = 2,   // per-head q/k RMSNorm
    ARCH_GLM = 3,     // GlmForCausalLM: fused gate_up, partial interleaved rotary
    ARCH_GLM4 = 4,    // Glm4ForCausalLM: GLM plus post-attention and post-MLP norms
    ARCH_COUNT
} arch_id;

const char *arch_name(arch_id a);

typedef enum {
    ROPE_SCALING_NONE = 0,
    ROPE_SCALING_LINEAR = 1,
    ROPE_SCALING_LLAMA3 = 2,
    ROPE_SCALING_COUNT
} rope_scaling_type;

const char *rope_scaling_name(rope_scaling_type t);

typedef struct {
    rope_scaling_type type;
    double factor;
    double low_freq_factor;                   // llama3
    double high_freq_factor;                  // llama3
    double original_max_position_embeddings;  // llama3
} rope_scaling;

typedef struct {
    arch_id arch;
    char hf_architecture[64];   // architectures[0] as written in config.json (GGUF:
                                // the class matching general.architecture)
    int vocab_size;
    int hidden_size;
    int n_layers;
    int n_heads;
    int n_kv_heads;
    int head_dim;
    int intermediate_size;
    int max_position_embeddings;
    float rms_norm_eps;
    double rope_theta;
    int rope_dim;               // rotated dims per head (head_dim * partial_rotary_factor)
    int rope_interleaved;       // pairs (2j, 2j+1) instead of (j, j + rope_dim/2)
    rope_scaling scaling;
    int tie_word_embeddings;
    int qkv_bias;
    int o_bias;
    int mlp_bias;
    int qk_norm;                // per-head RMSNorm on q and k before RoPE
    int post_norms;             // RMSNorm on attention output and MLP output
    int fused_gate_up;          // one [2*intermediate, hidden] gate_up_proj
    int bos_token_id;           // -1 when absent
    int eos_token_id;           // -1 when absent
} model_desc;

// Fills inv_freq[0 .. rope_dim/2) with the rotary frequencies, scaling applied.
void model_desc_rope_inv_freq(const model_desc *d, float *inv_freq);

#endif
