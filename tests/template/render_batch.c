// tests/template/render_batch.c — test driver for the chat-template engine.
//   render_batch TEMPLATE CONTEXTS.jsonl
//     renders TEMPLATE with each JSON object of CONTEXTS.jsonl (one per line) and prints one
//     JSON line per context: {"ok": true, "text": "..."} or {"ok": false, "error": "..."}.
//     A template that does not parse gives the parse error on every line.
//   render_batch --mutate N SEED TEMPLATE CONTEXTS.jsonl
//     renders N randomly damaged copies of TEMPLATE (deleted, duplicated, swapped and
//     inserted bytes, inserted tag delimiters) with every context: each must render or fail
//     with a message, never crash (run it under the sanitizers). Prints a summary line.
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/template/chat_template.h"

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *p = malloc(cap + 1);
    size_t r;
    while ((r = fread(p + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) p = realloc(p, (cap *= 2) + 1);
    }
    fclose(f);
    p[n] = 0;
    *len = n;
    return p;
}

static json_t **read_contexts(const char *path, size_t *count) {
    size_t len;
    char *text = read_file(path, &len);
    if (!text) {
        fprintf(stderr, "render_batch: cannot read %s\n", path);
        exit(2);
    }
    json_t **ctx = NULL;
    size_t n = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (!*line) continue;
        json_error_t je;
        json_t *j = json_loads(line, JSON_ALLOW_NUL, &je);
        if (!j) {
            fprintf(stderr, "render_batch: %s: line %d: %s\n", path, je.line, je.text);
            exit(2);
        }
        ctx = realloc(ctx, (n + 1) * sizeof *ctx);
        ctx[n++] = j;
    }
    free(text);
    *count = n;
    return ctx;
}

static void print_result(int ok, const char *text, size_t len) {
    json_t *o = json_object();
    json_object_set_new(o, "ok", json_boolean(ok));
    json_object_set_new(o, ok ? "text" : "error", json_stringn(text, len));
    char *s = json_dumps(o, JSON_COMPACT);
    puts(s);
    free(s);
    json_decref(o);
}

static unsigned long long rng_state;
static unsigned rnd(void) {
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(rng_state >> 33);
}

static char *mutate(const char *src, size_t n) {
    static const char *const frags[] = {"{{", "}}", "{%", "%}", "{#", "#}", "-", "+", "(", ")",
                                        "[", "]", "'", "\"", "|", ".", ",", " if ", " else ",
                                        "{% endif %}", "{% endfor %}", "{% for x in y %}",
                                        "{% set x = 1 %}", "\\", "\n", "é", "\xff"};
    size_t cap = n * 2 + 64, m = n;
    char *p = malloc(cap + 1);
    memcpy(p, src, n);
    int edits = 1 + (int)(rnd() % 4);
    for (int k = 0; k < edits; k++) {
        size_t at = m ? rnd() % m : 0;
        switch (rnd() % 4) {
        case 0: {  // delete a run
            size_t len = 1 + rnd() % 8;
            if (at + len > m) len = m - at;
            memmove(p + at, p + at + len, m - at - len);
            m -= len;
            break;
        }
        case 1: {  // insert a fragment
            const char *f = frags[rnd() % (sizeof frags / sizeof frags[0])];
            size_t len = strlen(f);
            if (m + len > cap) break;
            memmove(p + at + len, p + at, m - at);
            memcpy(p + at, f, len);
            m += len;
            break;
        }
        case 2:  // overwrite a byte
            if (m) p[at] = (char)(32 + rnd() % 95);
            break;
        default: {  // duplicate a run
            size_t len = 1 + rnd() % 16;
            if (at + len > m) len = m - at;
            if (m + len > cap) break;
            memmove(p + at + len, p + at, m - at);
            m += len;
            break;
        }
        }
    }
    p[m] = 0;
    return p;
}

int main(int argc, char **argv) {
    if (argc == 6 && !strcmp(argv[1], "--mutate")) {
        long iters = atol(argv[2]);
        rng_state = strtoull(argv[3], NULL, 10);
        size_t len, nctx;
        char *src = read_file(argv[4], &len);
        if (!src) {
            fprintf(stderr, "render_batch: cannot read %s\n", argv[4]);
            return 2;
        }
        json_t **ctx = read_contexts(argv[5], &nctx);
        long parsed = 0, rendered = 0, failed = 0;
        for (long i = 0; i < iters; i++) {
            char *m = mutate(src, len);
            chat_template *t;
            atoll_error e;
            if (chat_template_parse(&t, m, &e) == 0) {
                parsed++;
                for (size_t c = 0; c < nctx; c++) {
                    char *out;
                    size_t olen;
                    if (chat_template_render(t, ctx[c], &out, &olen, &e) == 0) {
                        rendered++;
                        free(out);
                    } else {
                        failed++;
                        if (!e.msg[0]) {
                            fprintf(stderr, "render failed without a message\n");
                            return 1;
                        }
                    }
                }
                chat_template_free(t);
            } else if (!e.msg[0]) {
                fprintf(stderr, "parse failed without a message\n");
                return 1;
            }
            free(m);
        }
        printf("%s: %ld mutations, %ld parsed, %ld renders ok, %ld render errors\n", argv[4], iters,
               parsed, rendered, failed);
        for (size_t c = 0; c < nctx; c++) json_decref(ctx[c]);
        free(ctx);
        free(src);
        return 0;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: render_batch TEMPLATE CONTEXTS.jsonl\n"
                        "       render_batch --mutate N SEED TEMPLATE CONTEXTS.jsonl\n");
        return 2;
    }
    size_t len, nctx;
    char *src = read_file(argv[1], &len);
    if (!src) {
        fprintf(stderr, "render_batch: cannot read %s\n", argv[1]);
        return 2;
    }
    json_t **ctx = read_contexts(argv[2], &nctx);
    chat_template *t;
    atoll_error e;
    int parsed = chat_template_parse(&t, src, &e) == 0;
    for (size_t c = 0; c < nctx; c++) {
        if (!parsed) {
            print_result(0, e.msg, strlen(e.msg));
            continue;
        }
        char *out;
        size_t olen;
        if (chat_template_render(t, ctx[c], &out, &olen, &e) == 0) {
            print_result(1, out, olen);
            free(out);
        } else {
            print_result(0, e.msg, strlen(e.msg));
        }
        json_decref(ctx[c]);
    }
    if (!parsed)
        for (size_t c = 0; c < nctx; c++) json_decref(ctx[c]);
    if (parsed) chat_template_free(t);
    free(ctx);
    free(src);
    return 0;
}
