// runtime/tokenizer/stream.c — incremental decoding. The stream decodes a
// window of the ids pushed since the last point where everything decoded
// had been emitted, and emits what is new. It holds back text that later
// ids can still change: a trailing U+FFFD (an incomplete UTF-8 character,
// ByteLevel), an open run of <0xNN> tokens (ByteFallback: the whole run
// waits for the token that ends it, since one invalid byte anywhere in it
// turns all of it into U+FFFD) and trailing characters a final Strip would
// remove. Steps that only apply at the start
// of the text (Metaspace's first token, a Strip after Fuse) run only in the
// first window, so the pushes and the flush add up to tokenizer_decode.
#include <stdlib.h>
#include <string.h>

#include "runtime/tokenizer/tok_internal.h"

struct tokenizer_stream {
    const tokenizer *t;
    int skip_special;
    tok_ivec win;      // ids of the current window (already filtered)
    int at_start;      // the window starts at the beginning of the text
    tok_buf emitted;   // what was emitted of the window's decode
};

tokenizer_stream *tokenizer_stream_new(const tokenizer *t, int skip_special) {
    tokenizer_stream *s = calloc(1, sizeof *s);
    if (!s) abort();
    s->t = t;
    s->skip_special = skip_special;
    s->at_start = 1;
    return s;
}

void tokenizer_stream_free(tokenizer_stream *s) {
    if (!s) return;
    tok_ivec_free(&s->win);
    tok_buf_free(&s->emitted);
    free(s);
}

static int decode_window(tokenizer_stream *s, int at_end, tok_buf *out, atoll_error *e) {
    const tokenizer *t = s->t;
    size_t n = s->win.n;
    const char **toks = malloc((n ? n : 1) * sizeof *toks);
    uint32_t *lens = malloc((n ? n : 1) * sizeof *lens);
    if (!toks || !lens) abort();
    for (size_t i = 0; i < n; i++) {
        toks[i] = t->id_text[s->win.v[i]];
        lens[i] = t->id_len[s->win.v[i]];
    }
    int rc = tok_decode_texts(t, toks, lens, n, s->at_start, at_end, out, e);
    free(toks);
    free(lens);
    if (rc) return -1;
    if (out->len < s->emitted.len || (s->emitted.len && memcmp(out->data, s->emitted.data, s->emitted.len) != 0))
        return error_set(e, "%s: stream decode: the decoder changed text it had already produced", t->source);
    return 0;
}

static long give(const char *p, size_t n, char **out) {
    *out = tok_strndup(p ? p : "", n);
    return (long)n;
}

long tokenizer_stream_push(tokenizer_stream *s, int32_t id, char **out, atoll_error *e) {
    const tokenizer *t = s->t;
    *out = NULL;
    if (id < 0 || id >= t->n_ids || !t->id_text[id] || (s->skip_special && (t->id_flags[id] & TOK_FLAG_SPECIAL)))
        return give("", 0, out);
    tok_ivec_push(&s->win, id);
    // An open run of <0xNN> tokens decodes as a whole (as its text if it is
    // valid UTF-8, else one U+FFFD per byte): nothing can be emitted, and
    // nothing needs decoding, until a token ends the run.
    if (t->dec_has_bytefallback && (t->id_flags[id] & TOK_FLAG_BYTE)) return give("", 0, out);
    tok_buf d = {0};
    if (decode_window(s, 0, &d, e)) {
        tok_buf_free(&d);
        return -1;
    }
    size_t done = s->emitted.len, safe = d.len;
    // A final U+FFFD may be an incomplete UTF-8 character that the next
    // bytes complete (only the last one: earlier bytes are settled).
    if (safe >= done + 3 && !memcmp(d.data + safe - 3, "\xEF\xBF\xBD", 3)) safe -= 3;
    // Characters a Strip(stop > 0) after Fuse/ByteLevel removes at the very end.
    while (t->dec_strip_after_join && safe > done) {
        size_t p = safe - 1;
        while (p > done && ((unsigned char)d.data[p] & 0xC0) == 0x80) p--;
        int len;
        if (tok_utf8_decode(d.data + p, &len) != t->dec_strip_content) break;
        safe = p;
    }
    long r = give(d.data + done, safe - done, out);
    if (safe == d.len) {  // nothing held back: start a new window
        s->win.n = 0;
        s->at_start = 0;
        s->emitted.len = 0;
    } else {
        tok_buf_append(&s->emitted, d.data + done, safe - done);
    }
    tok_buf_free(&d);
    return r;
}

long tokenizer_stream_flush(tokenizer_stream *s, char **out, atoll_error *e) {
    *out = NULL;
    if (!s->win.n) return give("", 0, out);
    tok_buf d = {0};
    if (decode_window(s, 1, &d, e)) {
        tok_buf_free(&d);
        return -1;
    }
    long r = give(d.data + s->emitted.len, d.len - s->emitted.len, out);
    s->win.n = 0;
    s->at_start = 0;
    s->emitted.len = 0;
    tok_buf_free(&d);
    return r;
}
