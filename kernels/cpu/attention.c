// kernels/cpu/attention.c — the paged KV cache ops: kv_store (write each
// token's k/v to its block slot) and causal GQA attention that reads K/V
// through the block tables. Cache layout [n_blocks, block_size, n_kv_heads,
// head_dim]; work is split over (token, head) pairs.
#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "kernels/cpu/cpu_internal.h"

// Index of the cache row (block * block_size + slot) of position p of seq.
static inline size_t cache_row(const kv_layer *c, const attention_batch *bt, int seq, int p) {
    const int blk = bt->block_tables[(size_t)seq * bt->max_blocks_per_seq + p / c->block_size];
    assert(blk >= 0 && blk < c->n_blocks);
    return (size_t)blk * c->block_size + p % c->block_size;
}

void cpu_kv_store(backend *b, const kv_layer *cache, const attention_batch *batch,
                  const float *k, const float *v) {
    const size_t row = (size_t)cache->n_kv_heads * cache->head_dim;
    const int nt = (double)batch->n_tokens * row >= CPU_PAR_MIN_ELEMS ? cpu_of(b)->n_threads : 1;
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int t = 0; t < batch->n_tokens; t++) {
        const int seq = batch->token_seq[t], pos = batch->positions[t];
        assert(seq >= 0 && seq < batch->n_seqs && pos >= 0 &&
               pos / cache->block_size < batch->max_blocks_per_seq);
        const size_t r = cache_row(cache, batch, seq, pos);
        memcpy(cache->k + r * row, k + (size_t)t * row, row * sizeof(float));
        memcpy(cache->v + r * row, v + (size_t)t * row, row * sizeof(float));
    }
}

void cpu_attention(backend *b, float *out, const float *q, const kv_layer *cache,
                   const attention_batch *batch, int n_heads, float scale) {
    const cpu_impl *c = cpu_of(b);
    const int hd = cache->head_dim, nkv = cache->n_kv_heads, bs = cache->block_size;
    const int nt_tok = batch->n_tokens;
    if (nt_tok <= 0 || n_heads <= 0) return;
    assert(nkv > 0 && n_heads % nkv == 0);
    const int group = n_heads / nkv;
    float (*dot)(const float *, const float *, int) =
        c->isa == CPU_ISA_AVX2 ? cpu_dot_avx2 : cpu_dot_scalar;
    void (*axpy)(float *, float, const float *, int) =
        c->isa == CPU_ISA_AVX2 ? cpu_axpy_avx2 : cpu_axpy_scalar;

    int max_pos = 0;
    double work = 0;
    for (int t = 0; t < nt_tok; t++) {
        if (batch->positions[t] > max_pos) max_pos = batch->positions[t];
        work += (double)(batch->positions[t] + 1) * hd * 2 * n_heads;
    }
    // One work item per (token, KV head): the query heads of a GQA group
    // share each K and V row while it is in L1.
    const int items = nt_tok * nkv;
    int nt = work >= CPU_PAR_MIN_ELEMS ? c->n_threads : 1;
    if (nt > items) nt = items;
    const size_t rowstride = (size_t)nkv * hd;
    const size_t span = (size_t)max_pos + 1;  // scores of one query head

#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        float *scores = malloc((span * group + (size_t)hd * group + 2 * (size_t)group) * sizeof(float));
        if (!scores) abort();
        float *acc = scores + span * group;       // [group, hd]
        float *mx = acc + (size_t)hd * group;      // [group] running max
        float *sum = mx + group;                   // [group]
#pragma omp for schedule(dynamic, 1)
        for (int it = 0; it < items; it++) {
            const int t = it / nkv, kvh = it % nkv;
            const int seq = batch->token_seq[t], pos = batch->positions[t];
            assert(seq >= 0 && seq < batch->n_seqs && pos >= 0 &&
                   pos / bs < batch->max_blocks_per_seq);
            const float *q0 = q + ((size_t)t * n_heads + (size_t)kvh * group) * hd;
            const int32_t *table = batch->block_tables + (size_t)seq * batch->max_blocks_per_seq;
            const int npos = pos + 1;

            for (int g = 0; g < group; g++) mx[g] = -INFINITY;
            for (int p0 = 0; p0 < npos; p0 += bs) {
                const int blk = table[p0 / bs];
                assert(blk >= 0 && blk < cache->n_blocks);
                const float *kb = cache->k + (size_t)blk * bs * rowstride + (size_t)kvh * hd;
                const int np = npos - p0 < bs ? npos - p0 : bs;
                for (int s = 0; s < np; s++) {
                    const float *krow = kb + (size_t)s * rowstride;
                    for (int g = 0; g < group; g++) {
                        const float sc = dot(q0 + (size_t)g * hd, krow, hd) * scale;
                        scores[g * span + p0 + s] = sc;
                        mx[g] = sc > mx[g] ? sc : mx[g];
                    }
                }
            }
            for (int g = 0; g < group; g++) {
                float *sg = scores + g * span, total = 0.0f;
                for (int p = 0; p < npos; p++) {
                    sg[p] = expf(sg[p] - mx[g]);
                    total += sg[p];
                }
                sum[g] = total;
            }
            memset(acc, 0, (size_t)hd * group * sizeof(float));
            for (int p0 = 0; p0 < npos; p0 += bs) {
                const int blk = table[p0 / bs];
                const float *vb = cache->v + (size_t)blk * bs * rowstride + (size_t)kvh * hd;
                const int np = npos - p0 < bs ? npos - p0 : bs;
                for (int s = 0; s < np; s++) {
                    const float *vrow = vb + (size_t)s * rowstride;
                    for (int g = 0; g < group; g++)
                        axpy(acc + (size_t)g * hd, scores[g * span + p0 + s], vrow, hd);
                }
            }
            for (int g = 0; g < group; g++) {
                const float inv = 1.0f / sum[g];
                float *o = out + ((size_t)t * n_heads + (size_t)kvh * group + g) * hd;
                for (int d = 0; d < hd; d++) o[d] = acc[(size_t)g * hd + d] * inv;
            }
        }
        free(scores);
    }
}
