// runtime/engine/generation.h — generating from a batch of prompts through
// step plans, on every rank of a replica (SPMD): rank 0 builds each plan and
// samples; the plan is broadcast and every rank runs the same forward step.
// An empty plan ends the loop on every rank.
#ifndef ATOLL_ENGINE_GENERATION_H
#define ATOLL_ENGINE_GENERATION_H

#include <stdint.h>

#include "runtime/model/model.h"
#include "runtime/util/error.h"

typedef struct {
    int n_seqs;
    const int32_t *const *prompts;  // [n_seqs][prompt_lens[i]]
    const int *prompt_lens;
    int max_new_tokens;
    int ignore_eos;                 // keep going past eos_id
    int eos_id;                     // end-of-sequence token, -1 for none
    double temperature;
    uint64_t seed;
    int block_size;                 // tokens per KV block
    // Results (rank 0), allocated by generation_run, freed by generation_free.
    int32_t **tokens;               // [n_seqs][max_new_tokens]
    int *n_generated;               // [n_seqs]
    float **logits;                 // [n_seqs][max_new_tokens * vocab] if keep_logits
    int keep_logits;
    // Called on rank 0 after each step with the tokens just chosen (or NULL).
    void (*on_token)(void *user, int seq, int32_t token);
    void *user;
    // Timings (rank 0).
    double prefill_seconds, decode_seconds;
    int decode_steps;
} generation_request;

// On rank 0, r describes the work; other ranks pass r = NULL and follow.
int generation_run(model *m, generation_request *r, atoll_error *e);
void generation_free(generation_request *r);

#endif
