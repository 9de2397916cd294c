// runtime/engine/forward.h — the forward pass of one step plan through a
// model on its backend: embeddings, decoder layers with attention over the
// paged KV cache, final norm and LM head for the rows the plan asks for.
#ifndef ATOLL_ENGINE_FORWARD_H
#define ATOLL_ENGINE_FORWARD_H

#include "runtime/engine/kv_cache.h"
#include "runtime/engine/step_plan.h"
#include "runtime/model/model.h"

typedef struct {
    model *m;
    kv_cache *kv;
    int token_capacity;          // activation buffers hold this many tokens
    int table_capacity;          // int32 entries of the device block table
    float *x;                    // [T, hidden] residual stream
    float *xn;                   // [T, hidden] normed input / sublayer output
    float *q;                    // [T, n_heads*head_dim]
    float *k, *v;                // [T, n_kv_heads*head_dim]
    float *attn;                 // [T, n_heads*head_dim]
    float *gate_up;              // [T, 2*ffn]
    float *act;                  // [T, ffn]
    float *logits;               // [T, vocab]
    int32_t *tokens;             // [T] device copies of the plan
    int32_t *positions;          // [T]
    int32_t *token_seq;          // [T]
    int32_t *rows;               // [T] tokens whose logits are produced
    int32_t *block_tables;       // [table_capacity]
} forward_state;

void forward_init(forward_state *f, model *m, kv_cache *kv);
void forward_free(forward_state *f);
// Runs the plan; writes step_plan_logit_rows(p) rows of vocab logits to
// logits_host. The plan must have passed step_plan_validate.
int forward_step(forward_state *f, const step_plan *p, float *logits_host, atoll_error *e);

#endif
