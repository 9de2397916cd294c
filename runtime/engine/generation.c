// runtime/engine/generation.c — the SPMD generate loop (see generation.h).
#include "runtime/engine/generation.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/comm/world.h"
#include "runtime/engine/forward.h"
#include "runtime/engine/kv_cache.h"
#include "runtime/engine/sampler.h"

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct {
    generation_request *r;
    kv_cache *kv;
    kv_sequence *seqs;     // [n_seqs]
    int *length;           // [n_seqs] positions already in the cache
    int *done;             // [n_seqs]
    int32_t *last;         // [n_seqs] last sampled token
} generation_state;

// Builds the next plan on rank 0: the prompts first, then one token for
// every sequence still running. Returns 0 with p->n_tokens == 0 when done.
static int generation_next_plan(generation_state *g, step_plan *p, atoll_error *e) {
    generation_request *r = g->r;
    int n_tokens = 0, n_seqs = 0, max_len = 0;
    for (int s = 0; s < r->n_seqs; s++) {
        if (g->done[s]) continue;
        int add = g->length[s] == 0 ? r->prompt_lens[s] : 1;
        n_tokens += add;
        n_seqs++;
        if (kv_cache_reserve(g->kv, &g->seqs[s], g->length[s] + add, e)) return -1;
        if (g->seqs[s].n_blocks > max_len) max_len = g->seqs[s].n_blocks;
    }
    memset(p, 0, sizeof *p);
    if (n_tokens == 0) return 0;
    if (step_plan_init(p, n_tokens, n_seqs, max_len, e)) return -1;
    int t = 0, i = 0;
    for (int s = 0; s < r->n_seqs; s++) {
        if (g->done[s]) continue;
        const int32_t *ids = g->length[s] == 0 ? r->prompts[s] : &g->last[s];
        int add = g->length[s] == 0 ? r->prompt_lens[s] : 1;
        for (int k = 0; k < add; k++, t++) {
            p->token_ids[t] = ids[k];
            p->positions[t] = g->length[s] + k;
            p->token_seq[t] = i;
        }
        p->seq_ids[i] = s;
        for (int b = 0; b < max_len; b++)
            p->block_tables[(size_t)i * max_len + b] = b < g->seqs[s].n_blocks ? g->seqs[s].blocks[b] : -1;
        i++;
    }
    return 0;
}

static void generation_accept(generation_state *g, const model *m, const step_plan *p,
                              const float *logits, sampler *smp) {
    generation_request *r = g->r;
    const int vocab = m->desc.vocab_size;
    for (int i = 0; i < p->n_seqs; i++) {
        int s = p->seq_ids[i];
        const float *row = logits + (size_t)i * vocab;
        int32_t token = sampler_next(smp, row, vocab);
        int n = r->n_generated[s];
        if (r->keep_logits) memcpy(r->logits[s] + (size_t)n * vocab, row, vocab * sizeof(float));
        r->tokens[s][n] = token;
        r->n_generated[s] = n + 1;
        g->length[s] += g->length[s] == 0 ? r->prompt_lens[s] : 1;
        g->last[s] = token;
        if (r->on_token) r->on_token(r->user, s, token);
        if (r->n_generated[s] >= r->max_new_tokens ||
            (!r->ignore_eos && token == r->eos_id)) {
            g->done[s] = 1;
            kv_cache_release(g->kv, &g->seqs[s]);
        }
    }
}

static int generation_alloc_results(generation_request *r, int vocab, atoll_error *e) {
    r->tokens = calloc(r->n_seqs, sizeof *r->tokens);
    r->n_generated = calloc(r->n_seqs, sizeof *r->n_generated);
    r->logits = calloc(r->n_seqs, sizeof *r->logits);
    if (!r->tokens || !r->n_generated || !r->logits) return error_set(e, "out of memory");
    for (int s = 0; s < r->n_seqs; s++) {
        r->tokens[s] = calloc(r->max_new_tokens, sizeof **r->tokens);
        if (r->keep_logits) r->logits[s] = malloc((size_t)r->max_new_tokens * vocab * sizeof(float));
        if (!r->tokens[s] || (r->keep_logits && !r->logits[s]))
            return error_set(e, "out of memory for %d generated tokens", r->max_new_tokens);
    }
    return 0;
}

void generation_free(generation_request *r) {
    for (int s = 0; s < r->n_seqs; s++) {
        if (r->tokens) free(r->tokens[s]);
        if (r->logits) free(r->logits[s]);
    }
    free(r->tokens);
    free(r->n_generated);
    free(r->logits);
    r->tokens = NULL;
    r->n_generated = NULL;
    r->logits = NULL;
}

// Every rank: the KV cache holds the longest case of every sequence at once.
static int generation_blocks_needed(generation_request *r, int block_size) {
    long long total = 0;
    for (int s = 0; s < r->n_seqs; s++)
        total += (r->prompt_lens[s] + r->max_new_tokens + block_size - 1) / block_size;
    return total > (1 << 30) ? (1 << 30) : (int)total;
}

int generation_run(model *m, generation_request *r, atoll_error *e) {
    int rank = 0;
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    // Rank 0 decides the cache shape; every rank allocates the same one.
    int shape[2] = {0, 0};
    if (rank == 0) {
        shape[0] = r->block_size;
        shape[1] = generation_blocks_needed(r, r->block_size);
    }
    CHECK_MPI(MPI_Bcast(shape, 2, MPI_INT, 0, MPI_COMM_WORLD));
    kv_cache kv;
    int rc = kv_cache_create(&kv, m->be, &m->desc, shape[1], shape[0], e);
    int any_failed = 0;
    CHECK_MPI(MPI_Allreduce(&rc, &any_failed, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (any_failed) {
        if (!rc) kv_cache_destroy(&kv);
        return rc ? rc : error_set(e, "another rank could not allocate its KV cache");
    }
    forward_state fwd;
    forward_init(&fwd, m, &kv);

    generation_state g = {r, &kv, NULL, NULL, NULL, NULL};
    sampler smp;
    float *logits = NULL;
    if (rank == 0) {
        g.seqs = calloc(r->n_seqs, sizeof *g.seqs);
        g.length = calloc(r->n_seqs, sizeof *g.length);
        g.done = calloc(r->n_seqs, sizeof *g.done);
        g.last = calloc(r->n_seqs, sizeof *g.last);
        logits = malloc((size_t)r->n_seqs * m->desc.vocab_size * sizeof *logits);
        sampler_init(&smp, r->temperature, r->seed);
        if (!g.seqs || !g.length || !g.done || !g.last || !logits)
            rc = error_set(e, "out of memory");
        else
            rc = generation_alloc_results(r, m->desc.vocab_size, e);
    }
    for (int step = 0;; step++) {
        step_plan plan = {0};
        int32_t *packed = NULL;
        size_t count = 0;
        if (rank == 0 && rc == 0) {
            rc = generation_next_plan(&g, &plan, e);
            if (rc == 0 && plan.n_tokens > 0) {
                packed = step_plan_pack(&plan, &count);
                if (!packed) rc = error_set(e, "out of memory packing a step plan");
            }
        }
        // A packed plan from rank 0 to every rank; an empty one means "stop".
        size_t bytes = count * sizeof *packed;
        world_bcast_bytes((void **)&packed, &bytes);
        count = bytes / sizeof *packed;
        if (count == 0) {
            free(packed);
            step_plan_free(&plan);
            break;
        }
        if (rank != 0 && step_plan_unpack(&plan, packed, count, e)) fatal("%s", e->msg);
        free(packed);
        if (step_plan_validate(&plan, m->desc.vocab_size, kv.block_size, kv.n_blocks, e))
            fatal("step %d: invalid plan: %s", step, e->msg);
        double t0 = now_seconds();
        if (forward_step(&fwd, &plan, rank == 0 ? logits : NULL, e))
            fatal("step %d: forward pass failed: %s", step, e->msg);
        if (rank == 0) {
            double dt = now_seconds() - t0;
            if (step == 0) r->prefill_seconds += dt;
            else { r->decode_seconds += dt; r->decode_steps++; }
            generation_accept(&g, m, &plan, logits, &smp);
        }
        step_plan_free(&plan);
    }
    if (rank == 0) {
        for (int s = 0; g.seqs && s < r->n_seqs; s++) kv_cache_release(&kv, &g.seqs[s]);
        free(g.seqs);
        free(g.length);
        free(g.done);
        free(g.last);
        free(logits);
    }
    forward_free(&fwd);
    kv_cache_destroy(&kv);
    return rc;
}
