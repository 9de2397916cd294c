// runtime/engine/kv_cache.c — KV block pools and the block allocator.
#include "runtime/engine/kv_cache.h"

#include <stdlib.h>
#include <string.h>

size_t kv_cache_bytes_per_block(const model_desc *d, int block_size) {
    return 2 * (size_t)d->n_layers * block_size * d->n_kv_heads * d->head_dim * sizeof(float);
}

int kv_cache_create(kv_cache *c, backend *be, const model_desc *d, int n_blocks, int block_size,
                    atoll_error *e) {
    memset(c, 0, sizeof *c);
    c->be = be;
    c->n_blocks = n_blocks;
    c->block_size = block_size;
    c->n_layers = d->n_layers;
    c->layers = calloc(d->n_layers, sizeof *c->layers);
    c->free_blocks = malloc((size_t)n_blocks * sizeof *c->free_blocks);
    if (!c->layers || !c->free_blocks) {
        kv_cache_destroy(c);
        return error_set(e, "out of memory for the KV cache tables");
    }
    size_t per_layer = (size_t)n_blocks * block_size * d->n_kv_heads * d->head_dim * sizeof(float);
    double need_mib = (double)per_layer * 2 * d->n_layers / (1 << 20);
    double free_mib = (double)be->ops->free_memory(be) / (1 << 20);
    if (need_mib > free_mib) {
        kv_cache_destroy(c);
        return error_set(e, "KV cache of %d blocks x %d tokens needs %.1f MiB, the device has %.1f MiB free",
                         n_blocks, block_size, need_mib, free_mib);
    }
    for (int l = 0; l < d->n_layers; l++) {
        kv_layer *kv = &c->layers[l];
        kv->k = be->ops->alloc(be, per_layer);
        kv->v = be->ops->alloc(be, per_layer);
        kv->n_blocks = n_blocks;
        kv->block_size = block_size;
        kv->n_kv_heads = d->n_kv_heads;
        kv->head_dim = d->head_dim;
        if (!kv->k || !kv->v) {
            kv_cache_destroy(c);
            return error_set(e, "KV cache of %d blocks x %d tokens (%.1f MiB) does not fit in device memory",
                             n_blocks, block_size,
                             (double)kv_cache_bytes_per_block(d, block_size) * n_blocks / (1 << 20));
        }
    }
    for (int b = 0; b < n_blocks; b++) c->free_blocks[b] = n_blocks - 1 - b;
    c->n_free = n_blocks;
    return 0;
}

void kv_cache_destroy(kv_cache *c) {
    for (int l = 0; c->layers && l < c->n_layers; l++) {
        if (c->layers[l].k) c->be->ops->free(c->be, c->layers[l].k);
        if (c->layers[l].v) c->be->ops->free(c->be, c->layers[l].v);
    }
    free(c->layers);
    free(c->free_blocks);
    memset(c, 0, sizeof *c);
}

int kv_cache_reserve(kv_cache *c, kv_sequence *seq, int n_positions, atoll_error *e) {
    int need = (n_positions + c->block_size - 1) / c->block_size;
    if (need <= seq->n_blocks) return 0;
    if (need - seq->n_blocks > c->n_free)
        return error_set(e, "KV cache is full: %d positions need %d more blocks, %d of %d are free",
                         n_positions, need - seq->n_blocks, c->n_free, c->n_blocks);
    if (need > seq->capacity) {
        int32_t *grown = realloc(seq->blocks, (size_t)need * sizeof *grown);
        if (!grown) return error_set(e, "out of memory for a block table");
        seq->blocks = grown;
        seq->capacity = need;
    }
    while (seq->n_blocks < need) seq->blocks[seq->n_blocks++] = c->free_blocks[--c->n_free];
    return 0;
}

void kv_cache_release(kv_cache *c, kv_sequence *seq) {
    for (int b = 0; b < seq->n_blocks; b++) c->free_blocks[c->n_free++] = seq->blocks[b];
    free(seq->blocks);
    memset(seq, 0, sizeof *seq);
}
