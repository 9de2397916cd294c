// runtime/tokenizer/gguf_tokenizer.c — reads tokenizer.ggml.* from a GGUF
// file into a tokenizer_gguf_vocab and builds the tokenizer from it.
#include "runtime/tokenizer/gguf_tokenizer.h"

#include <stdlib.h>
#include <string.h>

// An optional integer key: -1 when absent.
static int read_optional_i32(const gguf_file *g, const char *key, int *out, atoll_error *e) {
    int32_t v = -1;
    int rc = gguf_read_i32(g, key, &v, e);
    if (rc < 0) return -1;
    *out = rc == GGUF_ABSENT ? -1 : v;
    return 0;
}

static int read_optional_bool(const gguf_file *g, const char *key, int absent, int *out, atoll_error *e) {
    int rc = gguf_read_bool(g, key, out, e);
    if (rc == GGUF_ABSENT) *out = absent;
    return rc < 0 ? -1 : 0;
}

int gguf_tokenizer_load(const gguf_file *g, tokenizer **t, atoll_error *e) {
    tokenizer_gguf_vocab v = {0};
    size_t n_tokens = 0, n_merges = 0, n_scores = 0, n_types = 0;
    float *scores = NULL;
    int32_t *types = NULL;
    int rc = -1;
    if (gguf_read_string(g, "tokenizer.ggml.model", &v.model, e) != 0) {
        if (!e->msg[0] || gguf_find(g, "tokenizer.ggml.model") == NULL)
            error_set(e, "%s: no tokenizer.ggml.model: the file carries no tokenizer", g->path);
        return -1;
    }
    if (gguf_read_string(g, "tokenizer.ggml.pre", &v.pre, e) < 0 ||
        gguf_read_string_array(g, "tokenizer.ggml.tokens", &v.tokens, &n_tokens, e) != 0 ||
        gguf_read_string_array(g, "tokenizer.ggml.merges", &v.merges, &n_merges, e) < 0 ||
        gguf_read_f32_array(g, "tokenizer.ggml.scores", &scores, &n_scores, e) < 0 ||
        gguf_read_i32_array(g, "tokenizer.ggml.token_type", &types, &n_types, e) < 0 ||
        read_optional_i32(g, "tokenizer.ggml.bos_token_id", &v.bos_id, e) ||
        read_optional_i32(g, "tokenizer.ggml.eos_token_id", &v.eos_id, e) ||
        read_optional_i32(g, "tokenizer.ggml.unknown_token_id", &v.unk_id, e) ||
        read_optional_i32(g, "tokenizer.ggml.padding_token_id", &v.pad_id, e) ||
        // Absent add_bos_token: llama.cpp adds BOS for SentencePiece vocabularies.
        read_optional_bool(g, "tokenizer.ggml.add_bos_token", strcmp(v.model, "llama") == 0, &v.add_bos, e) ||
        read_optional_bool(g, "tokenizer.ggml.add_eos_token", 0, &v.add_eos, e) ||
        read_optional_bool(g, "tokenizer.ggml.add_space_prefix", -1, &v.add_space_prefix, e)) {
        if (!e->msg[0]) error_set(e, "%s: tokenizer.ggml.tokens is missing", g->path);
        goto done;
    }
    if ((scores && n_scores != n_tokens) || (types && n_types != n_tokens)) {
        error_set(e, "%s: tokenizer.ggml.scores/token_type have %zu/%zu entries for %zu tokens", g->path,
                  n_scores, n_types, n_tokens);
        goto done;
    }
    v.n_tokens = (int)n_tokens;
    v.n_merges = (int)n_merges;
    v.scores = scores;
    v.token_types = types;
    rc = tokenizer_load_gguf_vocab(t, &v, e);
    if (rc) error_prefix(e, "%s", g->path);
done:
    free(scores);
    free(types);
    return rc;
}
