// runtime/engine/step_plan.h — one forward step of a replica, as data.
//
// Every rank of a replica receives the same plan and makes the same decisions
// from it; nothing else crosses ranks implicitly. The plan is flat int32 so it
// packs into one buffer for MPI_Bcast. Tokens of one sequence are contiguous
// and in position order.
#ifndef ATOLL_ENGINE_STEP_PLAN_H
#define ATOLL_ENGINE_STEP_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/util/error.h"

typedef struct {
    int32_t n_tokens;
    int32_t n_seqs;
    int32_t max_blocks_per_seq;
    int32_t all_logits;       // 1: logits for every token; 0: the last token of each sequence
    int32_t *token_ids;       // [n_tokens]
    int32_t *positions;       // [n_tokens]
    int32_t *token_seq;       // [n_tokens] index into the sequences of this plan
    int32_t *seq_ids;         // [n_seqs] engine-wide sequence ids
    int32_t *block_tables;    // [n_seqs, max_blocks_per_seq]; -1 where unused
} step_plan;

// Allocates the arrays for the given sizes (zeroed); fields are then filled.
int step_plan_init(step_plan *p, int n_tokens, int n_seqs, int max_blocks_per_seq, atoll_error *e);
void step_plan_free(step_plan *p);
// Rows of logits the step produces: n_tokens when all_logits, else n_seqs.
int step_plan_logit_rows(const step_plan *p);
// Fills rows[i] with the token index whose logits form output row i.
void step_plan_logit_tokens(const step_plan *p, int32_t *rows);
// Checks the invariants above; a plan that fails is never executed.
int step_plan_validate(const step_plan *p, int vocab_size, int block_size, int n_blocks, atoll_error *e);
// One contiguous int32 buffer holding the whole plan, and back.
int32_t *step_plan_pack(const step_plan *p, size_t *count);
int step_plan_unpack(step_plan *p, const int32_t *buf, size_t count, atoll_error *e);

#endif
