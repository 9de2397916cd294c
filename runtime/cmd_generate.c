// runtime/cmd_generate.c — `atoll generate`: one prompt in, generated token
// ids out (first line of stdout), optional logits of each chosen token as a
// .npy file. Logs and timings go to stderr.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/commands.h"
#include "runtime/engine/generation.h"
#include "runtime/model/model.h"
#include "runtime/util/npy.h"

// "1,2,3" -> ids. Every entry must be a non-negative integer below vocab.
static int parse_prompt_ids(const char *text, int vocab, int32_t **ids, int *n, atoll_error *e) {
    *ids = NULL;
    *n = 0;
    if (!text[0]) return error_set(e, "--prompt-ids is required (comma-separated token ids, e.g. 1,2,3)");
    int cap = 1;
    for (const char *p = text; *p; p++) cap += *p == ',';
    *ids = malloc(cap * sizeof **ids);
    if (!*ids) return error_set(e, "out of memory");
    const char *p = text;
    for (;;) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < 0 || v >= vocab || (*end && *end != ',')) {
            free(*ids);
            *ids = NULL;
            return error_set(e, "--prompt-ids entry %d ('%.*s') is not a token id in [0, %d)", *n + 1,
                             (int)strcspn(p, ","), p, vocab);
        }
        (*ids)[(*n)++] = (int32_t)v;
        if (!*end) return 0;
        p = end + 1;
    }
}

// Every rank reports whether it succeeded; rank 0 learns if any failed.
static int all_ranks_ok_local(int ok) {
    int all = 0;
    CHECK_MPI(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    return all;
}

static int generate_report(const world_info *w, const atoll_config *c, const model *m,
                           generation_request *r, atoll_error *e) {
    const int n = r->n_generated[0];
    for (int i = 0; i < n; i++) printf("%s%d", i ? " " : "", r->tokens[0][i]);
    printf("\n");
    fflush(stdout);
    if (c->logits_out[0] && npy_write_f32(c->logits_out, r->logits[0], n, m->desc.vocab_size, e))
        return -1;
    LOG_INFO("prompt: %d tokens in %.3f s (%.1f tokens/s); decode: %d tokens in %.3f s (%.1f tokens/s)",
             r->prompt_lens[0], r->prefill_seconds, r->prompt_lens[0] / r->prefill_seconds,
             r->decode_steps, r->decode_seconds,
             r->decode_steps ? r->decode_steps / r->decode_seconds : 0.0);
    return 0;
}

int cmd_generate(const world_info *w, const atoll_config *c) {
    atoll_error e = {{0}};
    if (!c->model[0]) {
        LOG_RANK0(LOG_LEVEL_ERROR, "--model is required (a Hugging Face model directory)");
        return 2;
    }
    backend *be = backend_cpu_create((int)c->threads);
    model m;
    int ok = model_load(&m, c->model, be, &e) == 0;
    if (!ok) LOG_ERROR("%s", e.msg);
    if (!all_ranks_ok_local(ok)) {
        if (ok) model_free(&m);
        backend_destroy(be);
        return 1;
    }
    LOG_RANK0(LOG_LEVEL_INFO, "loaded %s (%s): %d layers, hidden %d, %d heads / %d KV heads, vocab %d",
              c->model, m.desc.hf_architecture, m.desc.n_layers, m.desc.hidden_size, m.desc.n_heads,
              m.desc.n_kv_heads, m.desc.vocab_size);

    int32_t *ids = NULL;
    int n_ids = 0, rc = 0;
    generation_request req = {0};
    if (w->rank == 0) {
        int limit = c->max_model_len ? (int)c->max_model_len : m.desc.max_position_embeddings;
        if (parse_prompt_ids(c->prompt_ids, m.desc.vocab_size, &ids, &n_ids, &e) == 0 &&
            (long)n_ids + c->max_tokens > limit)
            error_set(&e, "prompt (%d tokens) + max_tokens (%ld) = %ld exceeds max_model_len %d", n_ids,
                      c->max_tokens, n_ids + c->max_tokens, limit);
        if (e.msg[0]) {
            LOG_ERROR("%s", e.msg);
            rc = 2;
        }
    }
    CHECK_MPI(MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD));
    if (rc == 0) {
        const int32_t *prompts[1] = {ids};
        int lens[1] = {n_ids};
        req = (generation_request){
            .n_seqs = 1, .prompts = prompts, .prompt_lens = lens,
            .max_new_tokens = (int)c->max_tokens, .ignore_eos = c->ignore_eos, .eos_id = m.desc.eos_token_id,
            .temperature = c->temperature, .seed = (uint64_t)c->seed,
            .block_size = (int)c->kv_block_size, .keep_logits = c->logits_out[0] != 0,
        };
        ok = generation_run(&m, w->rank == 0 ? &req : NULL, &e) == 0;
        if (ok && w->rank == 0) ok = generate_report(w, c, &m, &req, &e) == 0;
        if (!ok) LOG_ERROR("%s", e.msg);
        rc = all_ranks_ok_local(ok) ? 0 : 1;
        if (w->rank == 0) generation_free(&req);
    }
    free(ids);
    model_free(&m);
    backend_destroy(be);
    return rc;
}
