// runtime/engine/forward.c — the decoder forward pass (see forward.h).
//
// One layer, as transformers' Llama/Qwen/GLM modeling files compute it:
//   h = rmsnorm(x); q,k,v = h W^T (+b); [qk_norm per head]; rope(q, k)
//   store k,v in the cache; a = attention(q, cache); o = a Wo^T
//   [post_norms: o = rmsnorm(o)]; x += o
//   h = rmsnorm(x); g|u = h [Wg|Wu]^T; m = silu(g)*u; d = m Wd^T
//   [post_norms: d = rmsnorm(d)]; x += d
#include "runtime/engine/forward.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void forward_init(forward_state *f, model *m, kv_cache *kv) {
    memset(f, 0, sizeof *f);
    f->m = m;
    f->kv = kv;
}

static void forward_release_buffers(forward_state *f) {
    backend *be = f->m->be;
    void *buffers[] = {f->x, f->xn, f->q, f->k, f->v, f->attn, f->gate_up, f->act, f->logits,
                       f->tokens, f->positions, f->token_seq, f->rows, f->block_tables};
    for (size_t i = 0; i < sizeof buffers / sizeof buffers[0]; i++)
        if (buffers[i]) be->ops->free(be, buffers[i]);
    model *m = f->m;
    kv_cache *kv = f->kv;
    forward_init(f, m, kv);
}

void forward_free(forward_state *f) {
    if (f->m) forward_release_buffers(f);
}

static int forward_reserve(forward_state *f, int n_tokens, int table_entries, atoll_error *e) {
    if (n_tokens <= f->token_capacity && table_entries <= f->table_capacity) return 0;
    forward_release_buffers(f);
    const model_desc *d = &f->m->desc;
    backend *be = f->m->be;
    size_t T = (size_t)n_tokens;
    size_t q_dim = (size_t)d->n_heads * d->head_dim, kv_dim = (size_t)d->n_kv_heads * d->head_dim;
    struct { void **ptr; size_t bytes; } plan[] = {
        {(void **)&f->x, T * d->hidden_size * sizeof(float)},
        {(void **)&f->xn, T * d->hidden_size * sizeof(float)},
        {(void **)&f->q, T * q_dim * sizeof(float)},
        {(void **)&f->k, T * kv_dim * sizeof(float)},
        {(void **)&f->v, T * kv_dim * sizeof(float)},
        {(void **)&f->attn, T * q_dim * sizeof(float)},
        {(void **)&f->gate_up, T * 2 * d->intermediate_size * sizeof(float)},
        {(void **)&f->act, T * d->intermediate_size * sizeof(float)},
        {(void **)&f->logits, T * d->vocab_size * sizeof(float)},
        {(void **)&f->tokens, T * sizeof(int32_t)},
        {(void **)&f->positions, T * sizeof(int32_t)},
        {(void **)&f->token_seq, T * sizeof(int32_t)},
        {(void **)&f->rows, T * sizeof(int32_t)},
        {(void **)&f->block_tables, (size_t)table_entries * sizeof(int32_t)},
    };
    for (size_t i = 0; i < sizeof plan / sizeof plan[0]; i++) {
        *plan[i].ptr = be->ops->alloc(be, plan[i].bytes);
        if (!*plan[i].ptr) {
            forward_release_buffers(f);
            return error_set(e, "out of device memory for activations of %d tokens", n_tokens);
        }
    }
    f->token_capacity = n_tokens;
    f->table_capacity = table_entries;
    return 0;
}

static void forward_layer(forward_state *f, const layer_weights *w, const kv_layer *cache,
                          const attention_batch *batch, int T) {
    const model *m = f->m;
    const model_desc *d = &m->desc;
    backend *be = m->be;
    const backend_ops *op = be->ops;
    const int hidden = d->hidden_size, ffn = d->intermediate_size;
    const float eps = d->rms_norm_eps;

    op->rmsnorm(be, f->xn, f->x, w->attn_norm, T, hidden, eps);
    op->matmul(be, f->q, w->wq.rows, f->xn, &w->wq, w->bq, T);
    op->matmul(be, f->k, w->wk.rows, f->xn, &w->wk, w->bk, T);
    op->matmul(be, f->v, w->wv.rows, f->xn, &w->wv, w->bv, T);
    if (w->q_norm) {
        op->rmsnorm(be, f->q, f->q, w->q_norm, T * d->n_heads, d->head_dim, eps);
        op->rmsnorm(be, f->k, f->k, w->k_norm, T * d->n_kv_heads, d->head_dim, eps);
    }
    op->rope(be, f->q, f->positions, T, d->n_heads, d->head_dim, d->rope_dim, d->rope_interleaved,
             m->rope_inv_freq);
    op->rope(be, f->k, f->positions, T, d->n_kv_heads, d->head_dim, d->rope_dim, d->rope_interleaved,
             m->rope_inv_freq);
    op->kv_store(be, cache, batch, f->k, f->v);
    op->attention(be, f->attn, f->q, cache, batch, d->n_heads, 1.0f / sqrtf((float)d->head_dim));
    op->matmul(be, f->xn, hidden, f->attn, &w->wo, w->bo, T);
    if (w->post_attn_norm) op->rmsnorm(be, f->xn, f->xn, w->post_attn_norm, T, hidden, eps);
    op->add(be, f->x, f->xn, (size_t)T * hidden);

    op->rmsnorm(be, f->xn, f->x, w->ffn_norm, T, hidden, eps);
    for (int i = 0, col = 0; i < w->n_gate_up; col += w->gate_up[i].rows, i++)
        op->matmul(be, f->gate_up + col, 2 * ffn, f->xn, &w->gate_up[i], w->gate_up_bias[i], T);
    op->silu_mul(be, f->act, f->gate_up, T, ffn);
    op->matmul(be, f->xn, hidden, f->act, &w->w_down, w->b_down, T);
    if (w->post_ffn_norm) op->rmsnorm(be, f->xn, f->xn, w->post_ffn_norm, T, hidden, eps);
    op->add(be, f->x, f->xn, (size_t)T * hidden);
}

int forward_step(forward_state *f, const step_plan *p, float *logits_host, atoll_error *e) {
    const model *m = f->m;
    const model_desc *d = &m->desc;
    backend *be = m->be;
    const backend_ops *op = be->ops;
    const int T = p->n_tokens, table = p->n_seqs * p->max_blocks_per_seq;
    if (forward_reserve(f, T, table, e)) return -1;

    const int n_rows = step_plan_logit_rows(p);
    int32_t *rows_host = malloc((size_t)n_rows * sizeof *rows_host);
    if (!rows_host) return error_set(e, "out of memory");
    step_plan_logit_tokens(p, rows_host);
    op->copy_to_device(be, f->tokens, p->token_ids, T * sizeof(int32_t));
    op->copy_to_device(be, f->positions, p->positions, T * sizeof(int32_t));
    op->copy_to_device(be, f->token_seq, p->token_seq, T * sizeof(int32_t));
    op->copy_to_device(be, f->rows, rows_host, n_rows * sizeof(int32_t));
    op->synchronize(be);
    free(rows_host);
    op->copy_to_device(be, f->block_tables, p->block_tables, (size_t)table * sizeof(int32_t));
    attention_batch batch = {T, p->n_seqs, f->token_seq, f->positions, f->block_tables,
                             p->max_blocks_per_seq};

    op->embedding(be, f->x, &m->embed, f->tokens, T);
    for (int l = 0; l < d->n_layers; l++) forward_layer(f, &m->layers[l], &f->kv->layers[l], &batch, T);

    // Gather the rows that need logits (the embedding op on an F32 table),
    // then the final norm and the LM head on those rows only.
    weight_matrix residual = {f->x, DTYPE_F32, T, d->hidden_size};
    op->embedding(be, f->xn, &residual, f->rows, n_rows);
    op->rmsnorm(be, f->xn, f->xn, m->final_norm, n_rows, d->hidden_size, d->rms_norm_eps);
    op->matmul(be, f->logits, d->vocab_size, f->xn, &m->lm_head, NULL, n_rows);
    if (logits_host)  // ranks that do not sample pass NULL
        op->copy_to_host(be, logits_host, f->logits, (size_t)n_rows * d->vocab_size * sizeof(float));
    op->synchronize(be);
    return 0;
}
