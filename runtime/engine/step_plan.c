// runtime/engine/step_plan.c — step plan storage, checks and packing.
#include "runtime/engine/step_plan.h"

#include <stdlib.h>
#include <string.h>

enum { STEP_PLAN_HEADER = 4 };

static size_t step_plan_array_count(int n_tokens, int n_seqs, int max_blocks) {
    return 3 * (size_t)n_tokens + (size_t)n_seqs + (size_t)n_seqs * max_blocks;
}

int step_plan_init(step_plan *p, int n_tokens, int n_seqs, int max_blocks_per_seq, atoll_error *e) {
    memset(p, 0, sizeof *p);
    if (n_tokens <= 0 || n_seqs <= 0 || n_seqs > n_tokens || max_blocks_per_seq <= 0)
        return error_set(e, "step plan of %d tokens in %d sequences with %d blocks each is invalid",
                         n_tokens, n_seqs, max_blocks_per_seq);
    int32_t *storage = calloc(step_plan_array_count(n_tokens, n_seqs, max_blocks_per_seq), sizeof *storage);
    if (!storage) return error_set(e, "out of memory for a step plan of %d tokens", n_tokens);
    p->n_tokens = n_tokens;
    p->n_seqs = n_seqs;
    p->max_blocks_per_seq = max_blocks_per_seq;
    p->token_ids = storage;
    p->positions = p->token_ids + n_tokens;
    p->token_seq = p->positions + n_tokens;
    p->seq_ids = p->token_seq + n_tokens;
    p->block_tables = p->seq_ids + n_seqs;
    return 0;
}

void step_plan_free(step_plan *p) {
    free(p->token_ids);
    memset(p, 0, sizeof *p);
}

int step_plan_logit_rows(const step_plan *p) { return p->all_logits ? p->n_tokens : p->n_seqs; }

void step_plan_logit_tokens(const step_plan *p, int32_t *rows) {
    if (p->all_logits) {
        for (int t = 0; t < p->n_tokens; t++) rows[t] = t;
        return;
    }
    for (int t = 0; t < p->n_tokens; t++) rows[p->token_seq[t]] = t;  // last token wins
}

int step_plan_validate(const step_plan *p, int vocab_size, int block_size, int n_blocks, atoll_error *e) {
    for (int t = 0; t < p->n_tokens; t++) {
        int s = p->token_seq[t];
        if (p->token_ids[t] < 0 || p->token_ids[t] >= vocab_size)
            return error_set(e, "token id %d at step position %d is outside the vocabulary [0, %d)",
                             p->token_ids[t], t, vocab_size);
        int prev = t == 0 ? -1 : p->token_seq[t - 1];
        if (s < 0 || s >= p->n_seqs || (s != prev && s != prev + 1))
            return error_set(e, "token %d belongs to sequence %d: sequences must be contiguous and in order",
                             t, s);
        int first = t == 0 || p->token_seq[t - 1] != s;
        if (p->positions[t] < 0 || (!first && p->positions[t] != p->positions[t - 1] + 1))
            return error_set(e, "token %d of sequence %d has position %d out of order", t, s, p->positions[t]);
        int block = p->positions[t] / block_size;
        if (block >= p->max_blocks_per_seq)
            return error_set(e, "position %d of sequence %d needs block %d, the table has %d",
                             p->positions[t], p->seq_ids[s], block, p->max_blocks_per_seq);
        for (int b = 0; b <= block; b++) {
            int id = p->block_tables[(size_t)s * p->max_blocks_per_seq + b];
            if (id < 0 || id >= n_blocks)
                return error_set(e, "sequence %d has no valid KV block %d (got %d, cache has %d)",
                                 p->seq_ids[s], b, id, n_blocks);
        }
    }
    if (p->token_seq[p->n_tokens - 1] != p->n_seqs - 1)
        return error_set(e, "the plan names %d sequences but its tokens cover %d", p->n_seqs,
                         p->token_seq[p->n_tokens - 1] + 1);
    return 0;
}

int32_t *step_plan_pack(const step_plan *p, size_t *count) {
    size_t n = STEP_PLAN_HEADER + step_plan_array_count(p->n_tokens, p->n_seqs, p->max_blocks_per_seq);
    int32_t *buf = malloc(n * sizeof *buf);
    if (!buf) return NULL;
    buf[0] = p->n_tokens;
    buf[1] = p->n_seqs;
    buf[2] = p->max_blocks_per_seq;
    buf[3] = p->all_logits;
    memcpy(buf + STEP_PLAN_HEADER, p->token_ids, (n - STEP_PLAN_HEADER) * sizeof *buf);
    *count = n;
    return buf;
}

int step_plan_unpack(step_plan *p, const int32_t *buf, size_t count, atoll_error *e) {
    if (count < STEP_PLAN_HEADER) return error_set(e, "step plan message of %zu words is truncated", count);
    if (step_plan_init(p, buf[0], buf[1], buf[2], e)) return -1;
    size_t arrays = step_plan_array_count(p->n_tokens, p->n_seqs, p->max_blocks_per_seq);
    if (count != STEP_PLAN_HEADER + arrays) {
        step_plan_free(p);
        return error_set(e, "step plan message has %zu words, its header implies %zu", count,
                         STEP_PLAN_HEADER + arrays);
    }
    p->all_logits = buf[3];
    memcpy(p->token_ids, buf + STEP_PLAN_HEADER, arrays * sizeof *buf);
    return 0;
}
