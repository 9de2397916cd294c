// runtime/tokenizer/tokenizer.c — the public API of tokenizer.h: lookups,
// encode (added tokens on the raw text, normalizer, normalized added tokens,
// pre-tokenizers, model, post-processor: HF's pipeline) and decode; plus
// tok_alloc/tok_finish, which both loaders use to complete the description.
#include "runtime/tokenizer/tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/tokenizer/tok_internal.h"

tokenizer *tok_alloc(const char *source) {
    tokenizer *t = calloc(1, sizeof *t);
    if (!t) abort();
    t->source = tok_strndup(source, strlen(source));
    t->bos_id = t->eos_id = -1;
    t->model.unk_id = -1;
    for (int b = 0; b < 256; b++) t->model.byte_ids[b] = -1;
    tok_strmap_init(&t->model.vocab);
    tok_strmap_init(&t->added_map);
    tok_strmap_init(&t->special_set);
    tok_matcher_init(&t->match_raw);
    tok_matcher_init(&t->match_norm);
    return t;
}

void tokenizer_free(tokenizer *t) {
    if (!t) return;
    free(t->source);
    if (t->id_text)
        for (int i = 0; i < t->n_ids; i++) free(t->id_text[i]);
    free(t->id_text);
    free(t->id_len);
    free(t->id_flags);
    tok_model_free(&t->model);
    free(t->scores);
    for (int i = 0; i < t->n_added; i++) free(t->added[i].content);
    free(t->added);
    tok_strmap_free(&t->added_map);
    tok_strmap_free(&t->special_set);
    tok_matcher_free(&t->match_raw);
    tok_matcher_free(&t->match_norm);
    for (int i = 0; i < t->n_norm; i++) tok_normalizer_free(&t->norm[i]);
    free(t->norm);
    for (int i = 0; i < t->n_pre; i++) tok_pretokenizer_free(&t->pre[i]);
    free(t->pre);
    for (int i = 0; i < t->n_dec; i++) tok_decoder_free(&t->dec[i]);
    free(t->dec);
    free(t->post_prefix);
    free(t->post_suffix);
    free(t);
}

int tok_finish(tokenizer *t, atoll_error *e) {
    const tok_strmap *v = &t->model.vocab;
    int max_id = -1;
    for (size_t i = 0; i < v->n; i++)
        if (v->val[i] > max_id) max_id = v->val[i];
    for (int i = 0; i < t->n_added; i++)
        if (t->added[i].id > max_id) max_id = t->added[i].id;
    for (int i = 0; i < t->n_added; i++)
        if (t->added[i].id < 0) return error_set(e, "%s: added token '%s' has a negative id", t->source, t->added[i].content);
    if (max_id >= (1 << 26)) return error_set(e, "%s: token id %d is implausibly large", t->source, max_id);
    t->n_ids = max_id + 1;
    t->id_text = calloc(t->n_ids ? t->n_ids : 1, sizeof *t->id_text);
    t->id_len = calloc(t->n_ids ? t->n_ids : 1, sizeof *t->id_len);
    t->id_flags = calloc(t->n_ids ? t->n_ids : 1, 1);
    if (!t->id_text || !t->id_len || !t->id_flags) abort();
    for (size_t i = 0; i < v->n; i++) {
        int id = v->val[i];
        if (id < 0) return error_set(e, "%s: vocabulary entry '%s' has a negative id", t->source, v->arena.data + v->key_off[i]);
        free(t->id_text[id]);
        t->id_text[id] = tok_strndup(v->arena.data + v->key_off[i], v->key_len[i]);
        t->id_len[id] = v->key_len[i];
    }
    for (int i = 0; i < t->n_added; i++) {
        tok_added *a = &t->added[i];
        free(t->id_text[a->id]);
        t->id_text[a->id] = tok_strndup(a->content, a->len);
        t->id_len[a->id] = (uint32_t)a->len;
        t->id_flags[a->id] |= TOK_FLAG_ADDED;
        tok_strmap_put(&t->added_map, a->content, a->len, a->id);
        if (a->special) tok_strmap_put(&t->special_set, a->content, a->len, a->id);
    }
    for (int b = 0; b < 256; b++) {
        char name[8];
        snprintf(name, sizeof name, "<0x%02X>", b);
        int32_t id;
        if (tok_strmap_get(v, name, 6, &id)) t->model.byte_ids[b] = id;
    }
    for (int id = 0; id < t->n_ids; id++) {
        if (!t->id_text[id]) continue;
        if (tok_strmap_get(&t->special_set, t->id_text[id], t->id_len[id], NULL)) t->id_flags[id] |= TOK_FLAG_SPECIAL;
        const char *s = t->id_text[id];
        if (t->id_len[id] == 6 && !memcmp(s, "<0x", 3) && s[5] == '>') t->id_flags[id] |= TOK_FLAG_BYTE;
    }
    // Long BPE words (Metaspace with split=false makes the whole text one
    // word) can be cut before a "▁" that follows another character when no
    // token contains such a pair: no merge can cross the cut.
    if (t->model.kind == TOK_MODEL_BPE && !t->model.ignore_merges && !t->model.cont_prefix && !t->model.eow_suffix &&
        tok_strmap_get(v, "\xE2\x96\x81", 3, NULL)) {
        int ok = 1;
        for (size_t i = 0; i < v->n && ok; i++) {
            const char *s = v->arena.data + v->key_off[i];
            size_t n = v->key_len[i];
            for (size_t q = 1; q + 3 <= n && ok; q++)
                if (!memcmp(s + q, "\xE2\x96\x81", 3) && !(q >= 3 && !memcmp(s + q - 3, "\xE2\x96\x81", 3))) ok = 0;
        }
        t->model.split_at_metaspace = ok;
    }
    // Matchers: HF's order is special tokens, then the others.
    tok_match_ctx *mctx = tok_match_ctx_new();
    tok_buf nb = {0};
    int rc = 0;
    for (int pass = 0; pass < 2 && rc == 0; pass++) {
        for (int i = 0; i < t->n_added; i++) {
            tok_added *a = &t->added[i];
            if ((pass == 0) != (a->special != 0) || a->len == 0) continue;
            if (!a->normalized) {
                tok_matcher_add(&t->match_raw, a->content, a->len, i);
            } else {
                if (tok_normalize(t, mctx, a->content, a->len, &nb, e)) {
                    rc = error_prefix(e, "%s: normalizing added token '%s'", t->source, a->content);
                    break;
                }
                tok_matcher_add(&t->match_norm, nb.data ? nb.data : "", nb.len, i);
            }
        }
    }
    tok_buf_free(&nb);
    tok_match_ctx_free(mctx);
    if (rc) return rc;
    // What the stream decoder must hold back (see stream.c).
    int joined = 0;
    for (int k = 0; k < t->n_dec; k++) {
        const tok_decoder *d = &t->dec[k];
        if (d->type == TOK_DEC_BYTEFALLBACK) t->dec_has_bytefallback = 1;
        if (d->type == TOK_DEC_FUSE || d->type == TOK_DEC_BYTELEVEL) joined = 1;
        if (d->type == TOK_DEC_STRIP && d->stop > 0 && joined) {
            t->dec_strip_after_join = 1;
            t->dec_strip_content = d->content;
        }
    }
    if (t->bos_id < 0 && t->n_prefix > 0) t->bos_id = t->post_prefix[0];
    if (t->eos_id < 0 && t->n_suffix > 0) t->eos_id = t->post_suffix[t->n_suffix - 1];
    return 0;
}

int tokenizer_vocab_size(const tokenizer *t) { return t->n_ids; }
int tokenizer_bos_id(const tokenizer *t) { return t->bos_id; }
int tokenizer_eos_id(const tokenizer *t) { return t->eos_id; }

const char *tokenizer_token_text(const tokenizer *t, int id) {
    if (id < 0 || id >= t->n_ids) return NULL;
    return t->id_text[id];
}

int tokenizer_token_id(const tokenizer *t, const char *text) {
    int32_t id;
    size_t n = strlen(text);
    if (tok_strmap_get(&t->added_map, text, n, &id)) return id;
    if (tok_strmap_get(&t->model.vocab, text, n, &id)) return id;
    return -1;
}

int tokenizer_is_special(const tokenizer *t, int id) {
    if (id < 0 || id >= t->n_ids) return 0;
    return (t->id_flags[id] & TOK_FLAG_SPECIAL) != 0;
}

// ---------------------------------------------------------------- encode

typedef struct {
    tok_match_ctx *mctx;
    tok_model_ctx *model;
    tok_segments seg2;
    tok_buf norm, arena;
    tok_pieces pieces, tmp;
} encode_ctx;

// A piece of text between added tokens (original offset `start`).
static int encode_text(const tokenizer *t, encode_ctx *c, const char *s, size_t n, size_t start, tok_ivec *out,
                       atoll_error *e) {
    const char *ns = s;
    size_t nn = n;
    if (t->n_norm) {
        if (tok_normalize(t, c->mctx, s, n, &c->norm, e)) return -1;
        ns = c->norm.data ? c->norm.data : "";
        nn = c->norm.len;
    }
    tok_added_split(t, &t->match_norm, ns, nn, &c->seg2);
    for (size_t k = 0; k < c->seg2.n; k++) {
        const tok_segment *sg = &c->seg2.v[k];
        if (sg->added >= 0) {
            tok_ivec_push(out, t->added[sg->added].id);
            continue;
        }
        c->arena.len = 0;
        tok_buf_append(&c->arena, ns + sg->start, sg->end - sg->start);
        c->pieces.n = 0;
        tok_pieces_push(&c->pieces, 0, sg->end - sg->start, start == 0 && sg->start == 0);
        if (t->n_pre && tok_pretokenize(t, c->mctx, &c->arena, &c->pieces, &c->tmp, e)) return -1;
        for (size_t i = 0; i < c->pieces.n; i++) {
            const tok_piece *p = &c->pieces.v[i];
            if (tok_model_tokenize(&t->model, c->model, c->arena.data + p->off, p->len, out, e)) return -1;
        }
    }
    return 0;
}

int tokenizer_encode(const tokenizer *t, const char *text, size_t len, int add_special, int32_t **ids,
                     size_t *n_ids, atoll_error *e) {
    *ids = NULL;
    *n_ids = 0;
    if (!text && len) return error_set(e, "tokenizer_encode: NULL text");
    if (!tok_utf8_valid(text, len)) return error_set(e, "tokenizer_encode: the text is not valid UTF-8");
    tok_ivec out = {0};
    if (add_special)
        for (int i = 0; i < t->n_prefix; i++) tok_ivec_push(&out, t->post_prefix[i]);
    encode_ctx c = {0};
    c.mctx = tok_match_ctx_new();
    c.model = tok_model_ctx_new();
    tok_segments seg1 = {0};
    int rc = 0;
    tok_added_split(t, &t->match_raw, text, len, &seg1);
    for (size_t k = 0; k < seg1.n && rc == 0; k++) {
        const tok_segment *sg = &seg1.v[k];
        if (sg->added >= 0)
            tok_ivec_push(&out, t->added[sg->added].id);
        else
            rc = encode_text(t, &c, text + sg->start, sg->end - sg->start, sg->start, &out, e);
    }
    if (add_special)
        for (int i = 0; i < t->n_suffix; i++) tok_ivec_push(&out, t->post_suffix[i]);
    tok_segments_free(&seg1);
    tok_segments_free(&c.seg2);
    tok_buf_free(&c.norm);
    tok_buf_free(&c.arena);
    tok_pieces_free(&c.pieces);
    tok_pieces_free(&c.tmp);
    tok_match_ctx_free(c.mctx);
    tok_model_ctx_free(c.model);
    if (rc) {
        tok_ivec_free(&out);
        return error_prefix(e, "%s", t->source);
    }
    if (!out.v) out.v = malloc(sizeof *out.v);
    *ids = out.v;
    *n_ids = out.n;
    return 0;
}

// ---------------------------------------------------------------- decode

int tokenizer_decode(const tokenizer *t, const int32_t *ids, size_t n_ids, int skip_special, char **text,
                     size_t *len, atoll_error *e) {
    *text = NULL;
    *len = 0;
    const char **toks = malloc((n_ids ? n_ids : 1) * sizeof *toks);
    uint32_t *lens = malloc((n_ids ? n_ids : 1) * sizeof *lens);
    if (!toks || !lens) abort();
    size_t n = 0;
    for (size_t i = 0; i < n_ids; i++) {
        int id = ids[i];
        if (id < 0 || id >= t->n_ids || !t->id_text[id]) continue;
        if (skip_special && (t->id_flags[id] & TOK_FLAG_SPECIAL)) continue;
        toks[n] = t->id_text[id];
        lens[n++] = t->id_len[id];
    }
    tok_buf out = {0};
    int rc = tok_decode_texts(t, toks, lens, n, 1, 1, &out, e);
    free(toks);
    free(lens);
    if (rc) {
        tok_buf_free(&out);
        return error_prefix(e, "%s: decode", t->source);
    }
    *text = out.data;
    *len = out.len;
    return 0;
}
