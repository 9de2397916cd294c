// runtime/model/model.h — a loaded model: its description and its weights on
// a backend. Matrices stay in the file's dtype and are read straight from the
// mmapped safetensors or GGUF file; norms and biases are converted to F32 at
// load.
#ifndef ATOLL_MODEL_MODEL_H
#define ATOLL_MODEL_MODEL_H

#include "kernels/backend.h"
#include "runtime/model/gguf.h"
#include "runtime/model/model_desc.h"
#include "runtime/model/weight_files.h"
#include "runtime/util/error.h"

typedef struct {
    float *attn_norm;            // [hidden]
    weight_matrix wq;            // [n_heads*head_dim, hidden]
    weight_matrix wk;            // [n_kv_heads*head_dim, hidden]
    weight_matrix wv;            // [n_kv_heads*head_dim, hidden]
    float *bq, *bk, *bv;         // [rows of wq/wk/wv] or NULL
    float *q_norm, *k_norm;      // [head_dim] or NULL (qk_norm)
    weight_matrix wo;            // [hidden, n_heads*head_dim]
    float *bo;                   // [hidden] or NULL
    float *post_attn_norm;       // [hidden] or NULL (post_norms)
    float *ffn_norm;             // [hidden]
    // gate and up: one fused [2*ffn, hidden] matrix, or two [ffn, hidden]
    // ones written side by side into one [n, 2*ffn] output.
    weight_matrix gate_up[2];
    int n_gate_up;
    float *gate_up_bias[2];      // [rows of gate_up[i]] or NULL
    weight_matrix w_down;        // [hidden, ffn]
    float *b_down;               // [hidden] or NULL
    float *post_ffn_norm;        // [hidden] or NULL (post_norms)
} layer_weights;

typedef struct {
    model_desc desc;
    backend *be;
    weight_files files;          // Hugging Face directory (empty for GGUF)
    gguf_file *gguf;             // GGUF file, or NULL
    weight_matrix embed;         // [vocab, hidden]
    layer_weights *layers;       // [n_layers]
    float *final_norm;           // [hidden]
    weight_matrix lm_head;       // [vocab, hidden]; the embedding when tied
    float *rope_inv_freq;        // [rope_dim/2], on the device
} model;

// Loads a Hugging Face model directory (config.json + safetensors) or, when
// `path` is a file, a GGUF file (runtime/model/gguf_model.c).
int model_load(model *m, const char *path, backend *be, atoll_error *e);
void model_free(model *m);

#endif
