// runtime/cmd_generate.c — `atoll generate`: one prompt in (token ids, text,
// or text through the chat template), generated token ids out on the first
// line of stdout and their text after it; optionally the logits of each
// chosen token as a .npy file. Logs and timings go to stderr.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cmd_common.h"
#include "runtime/commands.h"
#include "runtime/engine/generation.h"
#include "runtime/tokenizer/model_text.h"
#include "runtime/util/npy.h"

// Rank 0: the prompt ids from --prompt-ids, or --prompt (through the chat
// template with --chat). text is NULL when the model's tokenizer did not load
// (text_error says why).
static int build_prompt(const atoll_config *c, const model *m, const model_text *text,
                        const char *text_error, int32_t **ids, int *n, atoll_error *e) {
    if (c->prompt[0] && c->prompt_ids[0]) return error_set(e, "give --prompt or --prompt-ids, not both");
    if (c->chat && !c->prompt[0]) return error_set(e, "--chat needs --prompt (the user message)");
    if (!c->prompt[0]) return parse_id_list(c->prompt_ids, "--prompt-ids", m->desc.vocab_size, ids, n, e);
    if (!text) return error_set(e, "--prompt needs the model's tokenizer: %s", text_error);
    size_t count = 0;
    int rc;
    if (c->chat) {
        json_t *messages = chat_messages(c->system, c->prompt);
        rc = model_text_chat_ids(text, messages, ids, &count, e);
        json_decref(messages);
    } else {
        rc = tokenizer_encode(text->tok, c->prompt, strlen(c->prompt), 1, ids, &count, e);
    }
    *n = (int)count;
    if (rc == 0 && count == 0) return error_set(e, "the prompt encodes to no tokens");
    return rc;
}

static int generate_report(const atoll_config *c, const model *m, const model_text *text,
                           generation_request *r, atoll_error *e) {
    const int n = r->n_generated[0];
    for (int i = 0; i < n; i++) printf("%s%d", i ? " " : "", r->tokens[0][i]);
    printf("\n");
    if (text) {
        char *out = NULL;
        size_t len = 0;
        if (tokenizer_decode(text->tok, r->tokens[0], n, 1, &out, &len, e)) return -1;
        fwrite(out, 1, len, stdout);
        printf("\n");
        free(out);
    }
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
    backend *be;
    model m;
    if (cmd_load_model(c, &be, &m)) return 1;

    atoll_error e = {{0}};
    model_text text_storage, *text = NULL;
    int32_t *ids = NULL;
    int n_ids = 0, rc = 0;
    if (w->rank == 0) {
        atoll_error text_error = {{0}};
        if (model_text_load(&text_storage, c->model, &text_error) == 0) text = &text_storage;
        else if (c->prompt[0]) LOG_DEBUG("no tokenizer: %s", text_error.msg);
        int limit = c->max_model_len ? (int)c->max_model_len : m.desc.max_position_embeddings;
        if (build_prompt(c, &m, text, text_error.msg, &ids, &n_ids, &e) == 0 &&
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
        generation_request req = {
            .n_seqs = 1, .prompts = prompts, .prompt_lens = lens,
            .max_new_tokens = (int)c->max_tokens, .ignore_eos = c->ignore_eos,
            .eos_id = text && text->eos_id >= 0 ? text->eos_id : m.desc.eos_token_id,
            .temperature = c->temperature, .seed = (uint64_t)c->seed,
            .block_size = (int)c->kv_block_size, .keep_logits = c->logits_out[0] != 0,
        };
        int ok = generation_run(&m, w->rank == 0 ? &req : NULL, &e) == 0;
        if (ok && w->rank == 0) ok = generate_report(c, &m, text, &req, &e) == 0;
        if (!ok) LOG_ERROR("%s", e.msg);
        rc = all_ranks_ok(ok) ? 0 : 1;
        if (w->rank == 0) generation_free(&req);
    }
    if (text) model_text_free(text);
    free(ids);
    cmd_unload_model(be, &m);
    return rc;
}
