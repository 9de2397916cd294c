// runtime/tokenizer/gguf_vocab.c — builds a tokenizer from GGUF tokenizer
// metadata (tokenizer_gguf_vocab). "gpt2": byte-level BPE from tokens and
// merges, with the pre-tokenizer that tokenizer.ggml.pre names (as in the
// model's tokenizer.json). "llama": SentencePiece BPE by score as llama.cpp
// does it, with <0xNN> byte fallback, "▁" for spaces and the space prefix.
// Control (and unknown) tokens become special added tokens, user-defined
// tokens plain added tokens.
#include <stdlib.h>
#include <string.h>

#include "runtime/tokenizer/tok_internal.h"

enum { TT_NORMAL = 1, TT_UNKNOWN = 2, TT_CONTROL = 3, TT_USER = 4, TT_UNUSED = 5, TT_BYTE = 6 };

static const char *const supported_pre =
    "default, gpt-2, gpt2, llama-bpe, llama3, llama-v3, qwen2, smollm";

static tok_pretokenizer *pre(tokenizer *t, tok_pre_type type) {
    t->pre = realloc(t->pre, (t->n_pre + 1) * sizeof *t->pre);
    if (!t->pre) abort();
    tok_pretokenizer *p = &t->pre[t->n_pre++];
    memset(p, 0, sizeof *p);
    p->type = type;
    return p;
}

static tok_decoder *dec(tokenizer *t, tok_dec_type type) {
    t->dec = realloc(t->dec, (t->n_dec + 1) * sizeof *t->dec);
    if (!t->dec) abort();
    tok_decoder *d = &t->dec[t->n_dec++];
    memset(d, 0, sizeof *d);
    d->type = type;
    t->has_decoder = 1;
    return d;
}

static tok_normalizer *norm(tokenizer *t, tok_norm_type type) {
    t->norm = realloc(t->norm, (t->n_norm + 1) * sizeof *t->norm);
    if (!t->norm) abort();
    tok_normalizer *n = &t->norm[t->n_norm++];
    memset(n, 0, sizeof *n);
    n->type = type;
    return n;
}

// Split(pattern, Isolated) then ByteLevel(add_prefix_space=false, use_regex=false).
static int split_bytelevel(tokenizer *t, const char *pattern, atoll_error *e) {
    tok_pretokenizer *p = pre(t, TOK_PRE_SPLIT);
    p->behavior = TOK_SPLIT_ISOLATED;
    p->re = tok_regex_new(pattern, strlen(pattern), TOK_RE_ONIG, e);
    if (!p->re) return -1;
    pre(t, TOK_PRE_BYTELEVEL);
    return 0;
}

static int gpt2_pre(tokenizer *t, const char *name, atoll_error *e) {
    if (!name || !strcmp(name, "default") || !strcmp(name, "gpt-2") || !strcmp(name, "gpt2")) {
        tok_pretokenizer *p = pre(t, TOK_PRE_BYTELEVEL);
        p->re = tok_regex_new(tok_pattern_gpt2, strlen(tok_pattern_gpt2), TOK_RE_ONIG, e);
        return p->re ? 0 : -1;
    }
    if (!strcmp(name, "llama-bpe") || !strcmp(name, "llama3") || !strcmp(name, "llama-v3")) {
        t->model.ignore_merges = 1;  // as Llama 3's tokenizer.json (and llama.cpp)
        return split_bytelevel(t, tok_pattern_llama3, e);
    }
    if (!strcmp(name, "qwen2")) return split_bytelevel(t, tok_pattern_qwen2, e);
    if (!strcmp(name, "smollm")) {
        pre(t, TOK_PRE_DIGITS)->individual_digits = 1;
        tok_pretokenizer *p = pre(t, TOK_PRE_BYTELEVEL);
        p->re = tok_regex_new(tok_pattern_gpt2, strlen(tok_pattern_gpt2), TOK_RE_ONIG, e);
        return p->re ? 0 : -1;
    }
    return error_set(e, "%s: unsupported tokenizer.ggml.pre '%s' (supported: %s)", t->source, name, supported_pre);
}

static int check_id(tokenizer *t, const char *what, int id, int n, atoll_error *e) {
    if (id >= n) return error_set(e, "%s: %s %d is not below the vocabulary size %d", t->source, what, id, n);
    return 0;
}

int tokenizer_load_gguf_vocab(tokenizer **out, const tokenizer_gguf_vocab *v, atoll_error *e) {
    *out = NULL;
    const char *src = "GGUF tokenizer metadata";
    if (!v->model) return error_set(e, "%s: tokenizer.ggml.model is missing", src);
    int spm = !strcmp(v->model, "llama");
    if (!spm && strcmp(v->model, "gpt2") != 0)
        return error_set(e, "%s: unsupported tokenizer.ggml.model '%s' (supported: gpt2, llama)", src, v->model);
    if (v->n_tokens <= 0 || !v->tokens) return error_set(e, "%s: tokenizer.ggml.tokens is missing or empty", src);
    if (spm && !v->scores) return error_set(e, "%s: tokenizer.ggml.scores is required for model 'llama'", src);
    tokenizer *t = tok_alloc(src);
    int rc = 0;
    tok_model *m = &t->model;
    m->kind = spm ? TOK_MODEL_SPM : TOK_MODEL_BPE;
    for (int i = 0; i < v->n_tokens; i++) {
        if (!v->tokens[i]) {
            rc = error_set(e, "%s: tokenizer.ggml.tokens[%d] is NULL", src, i);
            break;
        }
        tok_strmap_put(&m->vocab, v->tokens[i], strlen(v->tokens[i]), i);
    }
    int n = v->n_tokens;
    if (!rc) rc = check_id(t, "bos id", v->bos_id, n, e);
    if (!rc) rc = check_id(t, "eos id", v->eos_id, n, e);
    if (!rc && spm) {
        t->scores = malloc(n * sizeof *t->scores);
        memcpy(t->scores, v->scores, n * sizeof *t->scores);
        m->scores = t->scores;
        m->n_scores = n;
        m->byte_fallback = 1;
        if (v->unk_id >= 0 && v->unk_id < n) m->unk_id = v->unk_id;
    }
    if (!rc && !spm) {
        tok_u64map_init(&m->merges, v->n_merges > 0 ? v->n_merges : 16);
        tok_buf nt = {0};
        for (int i = 0; i < v->n_merges && !rc; i++) {
            const char *s = v->merges ? v->merges[i] : NULL;
            const char *sp = s ? strchr(s, ' ') : NULL;
            if (!sp) {
                rc = error_set(e, "%s: tokenizer.ggml.merges[%d] '%s' is not two tokens separated by a space", src, i,
                               s ? s : "(null)");
                break;
            }
            int32_t a, b, c;
            nt.len = 0;
            tok_buf_append(&nt, s, sp - s);
            tok_buf_append(&nt, sp + 1, strlen(sp + 1));
            if (!tok_strmap_get(&m->vocab, s, sp - s, &a) || !tok_strmap_get(&m->vocab, sp + 1, strlen(sp + 1), &b) ||
                !tok_strmap_get(&m->vocab, nt.data, nt.len, &c)) {
                rc = error_set(e, "%s: tokenizer.ggml.merges[%d] '%s' uses or makes a token that is not in the vocabulary",
                               src, i, s);
                break;
            }
            tok_u64map_put(&m->merges, ((uint64_t)(uint32_t)a << 32) | (uint32_t)b, i, c);
        }
        tok_buf_free(&nt);
    }
    // Added tokens from the token types.
    if (!rc && v->token_types) {
        t->added = calloc(n, sizeof *t->added);
        for (int i = 0; i < n; i++) {
            int ty = v->token_types[i];
            int special = ty == TT_CONTROL || (spm && ty == TT_UNKNOWN);
            if (!special && ty != TT_USER) continue;
            tok_added *a = &t->added[t->n_added++];
            a->len = strlen(v->tokens[i]);
            a->content = tok_strndup(v->tokens[i], a->len);
            a->id = i;
            a->special = (uint8_t)special;
        }
    }
    if (!rc && !spm) {
        rc = gpt2_pre(t, v->pre, e);
        dec(t, TOK_DEC_BYTELEVEL);
    }
    if (!rc && spm) {
        // As Llama's tokenizer.json: Prepend("▁") + Replace(" ", "▁");
        // decoder Replace("▁", " "), ByteFallback, Fuse, Strip(" ", 1, 0).
        int prefix = v->add_space_prefix != 0;
        if (prefix) {
            tok_normalizer *p = norm(t, TOK_NORM_PREPEND);
            p->str = tok_strndup("\xE2\x96\x81", 3);
            p->str_len = 3;
        }
        tok_normalizer *r = norm(t, TOK_NORM_REPLACE);
        r->pattern = tok_regex_new(" ", 1, TOK_RE_LITERAL, e);
        r->str = tok_strndup("\xE2\x96\x81", 3);
        r->str_len = 3;
        tok_decoder *d = dec(t, TOK_DEC_REPLACE);
        d->pattern = tok_regex_new("\xE2\x96\x81", 3, TOK_RE_LITERAL, e);
        d->str = tok_strndup(" ", 1);
        d->str_len = 1;
        if (!r->pattern || !d->pattern) rc = -1;
        dec(t, TOK_DEC_BYTEFALLBACK);
        dec(t, TOK_DEC_FUSE);
        if (prefix) {
            tok_decoder *s = dec(t, TOK_DEC_STRIP);
            s->content = ' ';
            s->start = 1;
        }
    }
    if (!rc) {
        t->bos_id = v->bos_id;
        t->eos_id = v->eos_id;
        if (v->add_bos && v->bos_id >= 0) {
            t->post_prefix = malloc(sizeof *t->post_prefix);
            t->post_prefix[0] = v->bos_id;
            t->n_prefix = 1;
        }
        if (v->add_eos && v->eos_id >= 0) {
            t->post_suffix = malloc(sizeof *t->post_suffix);
            t->post_suffix[0] = v->eos_id;
            t->n_suffix = 1;
        }
        rc = tok_finish(t, e);
    }
    if (rc) {
        tokenizer_free(t);
        return -1;
    }
    *out = t;
    return 0;
}
