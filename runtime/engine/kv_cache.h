// runtime/engine/kv_cache.h — the paged KV cache: per layer, a pool of
// fixed-size blocks on the device, and the block allocator that gives each
// sequence its block table. The scheduler sizes it; the forward pass reads
// and writes it through the kv_layer views.
#ifndef ATOLL_ENGINE_KV_CACHE_H
#define ATOLL_ENGINE_KV_CACHE_H

#include <stdint.h>

#include "kernels/backend.h"
#include "runtime/model/model_desc.h"
#include "runtime/util/error.h"

typedef struct {
    backend *be;
    kv_layer *layers;     // [n_layers]
    int n_layers;
    int n_blocks;
    int block_size;
    int32_t *free_blocks; // stack of free block ids
    int n_free;
} kv_cache;

// A sequence's blocks, in position order.
typedef struct {
    int32_t *blocks;
    int n_blocks;
    int capacity;
} kv_sequence;

size_t kv_cache_bytes_per_block(const model_desc *d, int block_size);
int kv_cache_create(kv_cache *c, backend *be, const model_desc *d, int n_blocks, int block_size,
                    atoll_error *e);
void kv_cache_destroy(kv_cache *c);
// Gives seq enough blocks to hold n_positions positions.
int kv_cache_reserve(kv_cache *c, kv_sequence *seq, int n_positions, atoll_error *e);
// Returns all of seq's blocks to the pool.
void kv_cache_release(kv_cache *c, kv_sequence *seq);

#endif
