// runtime/cmd_chat.c — `atoll chat`: an interactive, multi-turn conversation
// on the terminal. Rank 0 reads a line per turn from stdin, renders the whole
// conversation through the chat template, and streams the reply as tokens
// arrive; every rank runs the forward passes. /reset starts over, /quit (or
// end of input) leaves.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/cmd_common.h"
#include "runtime/commands.h"
#include "runtime/engine/generation.h"
#include "runtime/tokenizer/model_text.h"

enum { TURN_QUIT = 0, TURN_GENERATE = 1 };

typedef struct {
    tokenizer_stream *stream;
    atoll_error *e;
} chat_printer;

static void chat_print_token(void *user, int seq, int32_t token) {
    chat_printer *p = user;
    char *piece = NULL;
    long n = tokenizer_stream_push(p->stream, token, &piece, p->e);
    if (n > 0) fwrite(piece, 1, (size_t)n, stdout);
    fflush(stdout);
    free(piece);
}

// Rank 0: reads lines until one is a message to answer. Returns TURN_QUIT at
// /quit or end of input; otherwise the user's message is appended.
static int chat_read_turn(const atoll_config *c, json_t **messages) {
    const int interactive = isatty(STDIN_FILENO);
    char *line = NULL;
    size_t cap = 0;
    for (;;) {
        if (interactive) {
            printf("> ");
            fflush(stdout);
        }
        ssize_t n = getline(&line, &cap, stdin);
        if (n < 0) {
            free(line);
            return TURN_QUIT;
        }
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
        if (strcmp(line, "/quit") == 0) {
            free(line);
            return TURN_QUIT;
        }
        if (strcmp(line, "/reset") == 0) {
            json_decref(*messages);
            *messages = chat_messages(c->system, NULL);
            printf("(conversation reset)\n");
            fflush(stdout);
            continue;
        }
        if (n == 0) continue;
        json_array_append_new(*messages, json_pack("{s:s, s:s}", "role", "user", "content", line));
        free(line);
        return TURN_GENERATE;
    }
}

// Rank 0: the prompt ids for the conversation so far, checked against the
// context limit; on failure the last user message is dropped.
static int chat_prompt(const model_text *text, json_t *messages, int limit, long max_tokens,
                       int32_t **ids, int *n, atoll_error *e) {
    size_t count = 0;
    int rc = model_text_chat_ids(text, messages, ids, &count, e);
    *n = (int)count;
    if (rc == 0 && (long)count + max_tokens > limit) {
        rc = error_set(e, "the conversation (%zu tokens) + max_tokens (%ld) exceeds max_model_len %d: "
                       "/reset to start over", count, max_tokens, limit);
        free(*ids);
        *ids = NULL;
    }
    if (rc) json_array_remove(messages, json_array_size(messages) - 1);
    return rc;
}

static int chat_loop(const world_info *w, const atoll_config *c, model *m, model_text *text) {
    json_t *messages = w->rank == 0 ? chat_messages(c->system, NULL) : NULL;
    const int limit = c->max_model_len ? (int)c->max_model_len : m->desc.max_position_embeddings;
    int failed = 0;
    for (;;) {
        atoll_error e = {{0}};
        int32_t *ids = NULL;
        int n_ids = 0, action = TURN_QUIT;
        if (w->rank == 0) {
            while ((action = chat_read_turn(c, &messages)) == TURN_GENERATE &&
                   chat_prompt(text, messages, limit, c->max_tokens, &ids, &n_ids, &e) != 0) {
                fprintf(stderr, "error: %s\n", e.msg);
                e.msg[0] = 0;
            }
        }
        CHECK_MPI(MPI_Bcast(&action, 1, MPI_INT, 0, MPI_COMM_WORLD));
        if (action == TURN_QUIT) break;

        const int32_t *prompts[1] = {ids};
        int lens[1] = {n_ids};
        chat_printer printer = {w->rank == 0 ? tokenizer_stream_new(text->tok, 1) : NULL, &e};
        generation_request req = {
            .n_seqs = 1, .prompts = prompts, .prompt_lens = lens,
            .max_new_tokens = (int)c->max_tokens, .eos_id = w->rank == 0 ? text->eos_id : -1,
            .temperature = c->temperature, .seed = (uint64_t)c->seed,
            .block_size = (int)c->kv_block_size, .on_token = chat_print_token, .user = &printer,
        };
        int ok = generation_run(m, w->rank == 0 ? &req : NULL, &e) == 0;
        if (ok && w->rank == 0) {
            char *tail = NULL, *reply = NULL;
            size_t len = 0;
            long n = tokenizer_stream_flush(printer.stream, &tail, &e);
            if (n > 0) fwrite(tail, 1, (size_t)n, stdout);
            printf("\n");
            fflush(stdout);
            free(tail);
            ok = tokenizer_decode(text->tok, req.tokens[0], req.n_generated[0], 1, &reply, &len, &e) == 0;
            if (ok)
                json_array_append_new(messages, json_pack("{s:s, s:s%}", "role", "assistant", "content",
                                                          reply, len));
            free(reply);
        }
        if (printer.stream) tokenizer_stream_free(printer.stream);
        if (!ok) LOG_ERROR("%s", e.msg);
        if (w->rank == 0) generation_free(&req);
        free(ids);
        if (!all_ranks_ok(ok)) {
            failed = 1;
            break;
        }
    }
    json_decref(messages);
    return failed;
}

int cmd_chat(const world_info *w, const atoll_config *c) {
    backend *be;
    model m;
    if (cmd_load_model(c, &be, &m)) return 1;
    atoll_error e = {{0}};
    model_text text;
    int ok = 1;
    if (w->rank == 0) {
        ok = model_text_load(&text, c->model, &e) == 0;
        if (ok && !text.chat) {
            model_text_free(&text);
            ok = error_set(&e, "%s has no chat template", c->model) == 0;
        }
        if (!ok) LOG_ERROR("%s", e.msg);
    }
    int rc = 1;
    if (all_ranks_ok(ok)) {
        rc = chat_loop(w, c, &m, &text);
        if (w->rank == 0) model_text_free(&text);
    }
    cmd_unload_model(be, &m);
    return rc;
}
