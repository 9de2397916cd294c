// runtime/cmd_tokenize.c — `atoll tokenize` (text or a file's bytes → the ids
// as a JSON array on one line) and `atoll detokenize` (ids → exactly the
// decoded bytes on stdout, nothing else). Only the tokenizer is loaded; rank
// 0 does the work.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cmd_common.h"
#include "runtime/commands.h"
#include "runtime/tokenizer/model_text.h"

static char *read_file(const char *path, size_t *len, atoll_error *e) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        error_set(e, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *grown = realloc(buf, cap *= 2);
            if (!grown) free(buf);
            buf = grown;
        }
    }
    int failed = ferror(f);
    fclose(f);
    if (!buf || failed) {
        free(buf);
        error_set(e, "cannot read %s", path);
        return NULL;
    }
    *len = n;
    return buf;
}

static int tokenize_run(const atoll_config *c, const model_text *t, atoll_error *e) {
    if (c->text[0] && c->file[0]) return error_set(e, "give --text or --file, not both");
    size_t len = strlen(c->text);
    char *owned = NULL;
    const char *text = c->text;
    if (c->file[0]) {
        if (!(owned = read_file(c->file, &len, e))) return -1;
        text = owned;
    }
    int32_t *ids = NULL;
    size_t n = 0;
    int rc = tokenizer_encode(t->tok, text, len, c->special, &ids, &n, e);
    if (rc == 0) {
        putchar('[');
        for (size_t i = 0; i < n; i++) printf(i ? ", %d" : "%d", ids[i]);
        printf("]\n");
    }
    free(ids);
    free(owned);
    return rc;
}

static int detokenize_run(const atoll_config *c, const model_text *t, atoll_error *e) {
    int32_t *ids = NULL;
    int n = 0;
    if (parse_id_list(c->ids, "--ids", tokenizer_vocab_size(t->tok), &ids, &n, e)) return -1;
    char *text = NULL;
    size_t len = 0;
    int rc = tokenizer_decode(t->tok, ids, (size_t)n, 0, &text, &len, e);
    if (rc == 0) fwrite(text, 1, len, stdout);
    free(text);
    free(ids);
    return rc;
}

static int tokenizer_command(const world_info *w, const atoll_config *c,
                             int (*run)(const atoll_config *, const model_text *, atoll_error *)) {
    if (w->rank != 0) return 0;
    atoll_error e = {{0}};
    if (!c->model[0]) {
        LOG_ERROR("--model is required (a GGUF file or a Hugging Face model directory)");
        return 2;
    }
    model_text t;
    if (model_text_load(&t, c->model, &e)) {
        LOG_ERROR("%s", e.msg);
        return 1;
    }
    int rc = run(c, &t, &e);
    if (rc) LOG_ERROR("%s", e.msg);
    fflush(stdout);
    model_text_free(&t);
    return rc ? 1 : 0;
}

int cmd_tokenize(const world_info *w, const atoll_config *c) { return tokenizer_command(w, c, tokenize_run); }

int cmd_detokenize(const world_info *w, const atoll_config *c) {
    return tokenizer_command(w, c, detokenize_run);
}
