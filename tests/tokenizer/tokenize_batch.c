// tests/tokenizer/tokenize_batch.c — test driver: loads a tokenizer from a
// tokenizer.json (--tokenizer-json FILE) or from GGUF tokenizer fields stored
// as JSON (--gguf-vocab-json FILE: the tokenizer.ggml.* keys without the
// prefix), reads JSON lines from stdin and writes one JSON line per input:
//   {"text": T} -> {"ids": encode(T), "ids_special": encode(T, add_special),
//                   "decoded": decode(ids_special), "decoded_skip": decode(ids_special, skip_special),
//                   "stream": concatenated stream decode of ids_special, "stream_skip": the same skipping specials}
//   {"ids": [...]} -> the four decodes of those ids
// An error is {"error": message}.
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/tokenizer/tokenizer.h"

static int load_gguf_json(const char *path, tokenizer **t, atoll_error *e) {
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) return error_set(e, "%s: %s", path, je.text);
    tokenizer_gguf_vocab v;
    memset(&v, 0, sizeof v);
    json_t *tokens = json_object_get(root, "tokens"), *merges = json_object_get(root, "merges");
    json_t *types = json_object_get(root, "token_type"), *scores = json_object_get(root, "scores");
    v.model = json_string_value(json_object_get(root, "model"));
    v.pre = json_string_value(json_object_get(root, "pre"));
    v.n_tokens = (int)json_array_size(tokens);
    const char **tok = calloc(v.n_tokens + 1, sizeof *tok);
    for (int i = 0; i < v.n_tokens; i++) tok[i] = json_string_value(json_array_get(tokens, i));
    v.tokens = tok;
    v.n_merges = (int)json_array_size(merges);
    const char **mer = calloc(v.n_merges + 1, sizeof *mer);
    for (int i = 0; i < v.n_merges; i++) mer[i] = json_string_value(json_array_get(merges, i));
    v.merges = mer;
    int32_t *ty = NULL;
    float *sc = NULL;
    if (json_is_array(types)) {
        ty = calloc(v.n_tokens + 1, sizeof *ty);
        for (int i = 0; i < v.n_tokens; i++) ty[i] = (int32_t)json_integer_value(json_array_get(types, i));
        v.token_types = ty;
    }
    if (json_is_array(scores)) {
        sc = calloc(v.n_tokens + 1, sizeof *sc);
        for (int i = 0; i < v.n_tokens; i++) sc[i] = (float)json_number_value(json_array_get(scores, i));
        v.scores = sc;
    }
    json_t *x;
    v.bos_id = json_is_integer(x = json_object_get(root, "bos_token_id")) ? (int)json_integer_value(x) : -1;
    v.eos_id = json_is_integer(x = json_object_get(root, "eos_token_id")) ? (int)json_integer_value(x) : -1;
    v.unk_id = json_is_integer(x = json_object_get(root, "unknown_token_id")) ? (int)json_integer_value(x) : -1;
    v.pad_id = json_is_integer(x = json_object_get(root, "padding_token_id")) ? (int)json_integer_value(x) : -1;
    v.add_bos = json_is_true(json_object_get(root, "add_bos_token"));
    v.add_eos = json_is_true(json_object_get(root, "add_eos_token"));
    x = json_object_get(root, "add_space_prefix");
    v.add_space_prefix = json_is_boolean(x) ? json_is_true(x) : -1;
    int rc = tokenizer_load_gguf_vocab(t, &v, e);
    free(tok);
    free(mer);
    free(ty);
    free(sc);
    json_decref(root);
    return rc;
}

static json_t *ids_json(const int32_t *ids, size_t n) {
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(a, json_integer(ids[i]));
    return a;
}

static int stream_decode(const tokenizer *t, const int32_t *ids, size_t n, int skip, json_t **out, atoll_error *e) {
    tokenizer_stream *s = tokenizer_stream_new(t, skip);
    size_t cap = 64, len = 0;
    char *acc = malloc(cap);
    for (size_t i = 0; i <= n; i++) {
        char *piece;
        long r = i < n ? tokenizer_stream_push(s, ids[i], &piece, e) : tokenizer_stream_flush(s, &piece, e);
        if (r < 0) {
            free(acc);
            tokenizer_stream_free(s);
            return -1;
        }
        if (len + r + 1 > cap) {
            while (len + r + 1 > cap) cap *= 2;
            acc = realloc(acc, cap);
        }
        memcpy(acc + len, piece, r);
        len += r;
        free(piece);
    }
    *out = json_stringn(acc, len);
    free(acc);
    tokenizer_stream_free(s);
    return 0;
}

static int decodes(const tokenizer *t, const int32_t *ids, size_t n, json_t *o, atoll_error *e) {
    for (int skip = 0; skip < 2; skip++) {
        char *text;
        size_t len;
        if (tokenizer_decode(t, ids, n, skip, &text, &len, e)) return -1;
        json_object_set_new(o, skip ? "decoded_skip" : "decoded", json_stringn(text, len));
        free(text);
        json_t *st;
        if (stream_decode(t, ids, n, skip, &st, e)) return -1;
        json_object_set_new(o, skip ? "stream_skip" : "stream", st);
    }
    return 0;
}

int main(int argc, char **argv) {
    const char *hf = NULL, *gg = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--tokenizer-json")) hf = argv[i + 1];
        else if (!strcmp(argv[i], "--gguf-vocab-json")) gg = argv[i + 1];
    }
    if (!!hf == !!gg) {
        fprintf(stderr, "usage: tokenize_batch --tokenizer-json FILE | --gguf-vocab-json FILE < lines.jsonl\n");
        return 2;
    }
    atoll_error e = {{0}};
    tokenizer *t = NULL;
    if (hf ? tokenizer_load_hf(&t, hf, &e) : load_gguf_json(gg, &t, &e)) {
        fprintf(stderr, "tokenize_batch: %s\n", e.msg);
        return 1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        json_error_t je;
        json_t *in = json_loadb(line, n, JSON_ALLOW_NUL, &je), *out = json_object();
        json_t *text = json_object_get(in, "text"), *idsj = json_object_get(in, "ids");
        int rc = 0;
        if (!in) {
            rc = error_set(&e, "bad input line: %s", je.text);
        } else if (json_is_string(text)) {
            int32_t *ids = NULL, *ids2 = NULL;
            size_t n1 = 0, n2 = 0;
            rc = tokenizer_encode(t, json_string_value(text), json_string_length(text), 0, &ids, &n1, &e);
            if (!rc) rc = tokenizer_encode(t, json_string_value(text), json_string_length(text), 1, &ids2, &n2, &e);
            if (!rc) {
                json_object_set_new(out, "ids", ids_json(ids, n1));
                json_object_set_new(out, "ids_special", ids_json(ids2, n2));
                rc = decodes(t, ids2, n2, out, &e);
            }
            free(ids);
            free(ids2);
        } else if (json_is_array(idsj)) {
            size_t k = json_array_size(idsj);
            int32_t *ids = malloc((k + 1) * sizeof *ids);
            for (size_t i = 0; i < k; i++) ids[i] = (int32_t)json_integer_value(json_array_get(idsj, i));
            rc = decodes(t, ids, k, out, &e);
            free(ids);
        } else {
            rc = error_set(&e, "input line has neither 'text' nor 'ids'");
        }
        if (rc) {
            json_decref(out);
            out = json_object();
            json_object_set_new(out, "error", json_string(e.msg));
        }
        char *s = json_dumps(out, JSON_COMPACT | JSON_ENSURE_ASCII);
        puts(s);
        free(s);
        json_decref(out);
        json_decref(in);
    }
    free(line);
    tokenizer_free(t);
    return 0;
}
