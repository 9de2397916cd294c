// runtime/tokenizer/hf_json.c — loads a Hugging Face tokenizer.json into the
// tokenizer description: model (BPE), added_tokens, normalizer,
// pre_tokenizer, post_processor and decoder. A component type atoll does
// not implement is an error naming the component, its type and the file.
// BOS/EOS come from a tokenizer_config.json next to the file when there is
// one, else from the post-processor's template.
#include <jansson.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/tokenizer/tok_internal.h"

typedef struct {
    tokenizer *t;
    const char *path;
    atoll_error *e;
} loader;

static const char *jtype(json_t *o) {
    json_t *ty = json_object_get(o, "type");
    return json_is_string(ty) ? json_string_value(ty) : NULL;
}

static int jbool(json_t *o, const char *key, int def) {
    json_t *v = json_object_get(o, key);
    if (json_is_boolean(v)) return json_is_true(v);
    return def;
}

static const char *jstr(json_t *o, const char *key) {
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static int unsupported(loader *L, const char *what, json_t *o) {
    const char *ty = jtype(o);
    return error_set(L->e, "%s: unsupported %s type '%s' (atoll implements: %s)", L->path,
                     what, ty ? ty : "(none)",
                     !strcmp(what, "normalizer")      ? "NFC, NFD, NFKC, NFKD, Lowercase, Prepend, Replace, Strip, StripAccents, ByteLevel, Sequence"
                     : !strcmp(what, "pre_tokenizer") ? "ByteLevel, Split, Digits, Metaspace, Whitespace, WhitespaceSplit, Punctuation, CharDelimiterSplit, BertPreTokenizer, Sequence"
                     : !strcmp(what, "decoder")       ? "ByteLevel, Metaspace, ByteFallback, Fuse, Strip, Replace, Sequence"
                     : !strcmp(what, "post_processor") ? "TemplateProcessing, ByteLevel, RobertaProcessing, BertProcessing, Sequence"
                                                       : "BPE");
}

// A single character from a JSON string (Metaspace replacement, Strip content).
static int one_char(loader *L, const char *what, const char *s, uint32_t *cp) {
    if (!s || !*s) return error_set(L->e, "%s: %s must be a one-character string", L->path, what);
    int len;
    *cp = tok_utf8_decode(s, &len);
    if (s[len]) return error_set(L->e, "%s: %s must be a one-character string, got '%s'", L->path, what, s);
    return 0;
}

// {"String": "..."} or {"Regex": "..."}
static tok_regex *pattern(loader *L, const char *what, json_t *p) {
    json_t *s = json_object_get(p, "String"), *r = json_object_get(p, "Regex");
    tok_regex *re = NULL;
    if (json_is_string(s))
        re = tok_regex_new(json_string_value(s), json_string_length(s), TOK_RE_LITERAL, L->e);
    else if (json_is_string(r))
        re = tok_regex_new(json_string_value(r), json_string_length(r), TOK_RE_ONIG, L->e);
    else
        return error_set(L->e, "%s: %s: pattern must be {\"String\": ...} or {\"Regex\": ...}", L->path, what), NULL;
    if (!re) error_prefix(L->e, "%s: %s", L->path, what);
    return re;
}

static int behavior(loader *L, json_t *o, tok_split_behavior def, tok_split_behavior *b) {
    const char *s = jstr(o, "behavior");
    if (!s) {
        *b = def;
        return 0;
    }
    if (!strcmp(s, "Removed")) *b = TOK_SPLIT_REMOVED;
    else if (!strcmp(s, "Isolated")) *b = TOK_SPLIT_ISOLATED;
    else if (!strcmp(s, "MergedWithPrevious")) *b = TOK_SPLIT_MERGED_PREV;
    else if (!strcmp(s, "MergedWithNext")) *b = TOK_SPLIT_MERGED_NEXT;
    else if (!strcmp(s, "Contiguous")) *b = TOK_SPLIT_CONTIGUOUS;
    else return error_set(L->e, "%s: unknown split behavior '%s'", L->path, s);
    return 0;
}

static int prepend_scheme(loader *L, json_t *o, tok_prepend_scheme *ps) {
    const char *s = jstr(o, "prepend_scheme");
    if (!s) {  // older files: add_prefix_space
        *ps = jbool(o, "add_prefix_space", 1) ? TOK_PREPEND_ALWAYS : TOK_PREPEND_NEVER;
        return 0;
    }
    if (!strcmp(s, "always")) *ps = TOK_PREPEND_ALWAYS;
    else if (!strcmp(s, "first")) *ps = TOK_PREPEND_FIRST;
    else if (!strcmp(s, "never")) *ps = TOK_PREPEND_NEVER;
    else return error_set(L->e, "%s: unknown Metaspace prepend_scheme '%s'", L->path, s);
    return 0;
}

static uint32_t metaspace_replacement(loader *L, json_t *o, int *err) {
    const char *r = jstr(o, "replacement");
    uint32_t cp = 0x2581;
    *err = r ? one_char(L, "Metaspace replacement", r, &cp) : 0;
    return cp;
}

// ---------------------------------------------------------------- normalizers

static tok_normalizer *add_norm(tokenizer *t) {
    t->norm = realloc(t->norm, (t->n_norm + 1) * sizeof *t->norm);
    if (!t->norm) abort();
    tok_normalizer *n = &t->norm[t->n_norm++];
    memset(n, 0, sizeof *n);
    return n;
}

static int load_normalizer(loader *L, json_t *o) {
    if (!o || json_is_null(o)) return 0;
    const char *ty = jtype(o);
    if (!ty) return unsupported(L, "normalizer", o);
    if (!strcmp(ty, "Sequence")) {
        json_t *arr = json_object_get(o, "normalizers"), *it;
        size_t i;
        json_array_foreach(arr, i, it) if (load_normalizer(L, it)) return -1;
        return 0;
    }
    tok_normalizer nm = {0};
    if (!strcmp(ty, "NFC")) nm.type = TOK_NORM_NFC;
    else if (!strcmp(ty, "NFD")) nm.type = TOK_NORM_NFD;
    else if (!strcmp(ty, "NFKC")) nm.type = TOK_NORM_NFKC;
    else if (!strcmp(ty, "NFKD")) nm.type = TOK_NORM_NFKD;
    else if (!strcmp(ty, "Lowercase")) nm.type = TOK_NORM_LOWERCASE;
    else if (!strcmp(ty, "StripAccents")) nm.type = TOK_NORM_STRIP_ACCENTS;
    else if (!strcmp(ty, "ByteLevel")) nm.type = TOK_NORM_BYTELEVEL;
    else if (!strcmp(ty, "Strip")) {
        nm.type = TOK_NORM_STRIP;
        nm.left = jbool(o, "strip_left", 1);
        nm.right = jbool(o, "strip_right", 1);
    } else if (!strcmp(ty, "Prepend")) {
        json_t *p = json_object_get(o, "prepend");
        if (!json_is_string(p)) return error_set(L->e, "%s: Prepend normalizer without a 'prepend' string", L->path);
        nm.type = TOK_NORM_PREPEND;
        nm.str = tok_strndup(json_string_value(p), json_string_length(p));
        nm.str_len = json_string_length(p);
    } else if (!strcmp(ty, "Replace")) {
        json_t *c = json_object_get(o, "content");
        if (!json_is_string(c)) return error_set(L->e, "%s: Replace normalizer without a 'content' string", L->path);
        nm.type = TOK_NORM_REPLACE;
        nm.pattern = pattern(L, "Replace normalizer", json_object_get(o, "pattern"));
        if (!nm.pattern) return -1;
        nm.str = tok_strndup(json_string_value(c), json_string_length(c));
        nm.str_len = json_string_length(c);
    } else {
        return unsupported(L, "normalizer", o);
    }
    *add_norm(L->t) = nm;
    return 0;
}

// ---------------------------------------------------------------- pre-tokenizers

static tok_pretokenizer *add_pre(tokenizer *t) {
    t->pre = realloc(t->pre, (t->n_pre + 1) * sizeof *t->pre);
    if (!t->pre) abort();
    tok_pretokenizer *p = &t->pre[t->n_pre++];
    memset(p, 0, sizeof *p);
    return p;
}

static int load_pretokenizer(loader *L, json_t *o) {
    if (!o || json_is_null(o)) return 0;
    const char *ty = jtype(o);
    if (!ty) return unsupported(L, "pre_tokenizer", o);
    if (!strcmp(ty, "Sequence")) {
        json_t *arr = json_object_get(o, "pretokenizers"), *it;
        size_t i;
        json_array_foreach(arr, i, it) if (load_pretokenizer(L, it)) return -1;
        return 0;
    }
    tok_pretokenizer p = {0};
    if (!strcmp(ty, "ByteLevel")) {
        p.type = TOK_PRE_BYTELEVEL;
        p.add_prefix_space = jbool(o, "add_prefix_space", 1);
        if (jbool(o, "use_regex", 1)) {
            p.re = tok_regex_new(tok_pattern_gpt2, strlen(tok_pattern_gpt2), TOK_RE_ONIG, L->e);
            if (!p.re) return -1;
        }
    } else if (!strcmp(ty, "Split")) {
        p.type = TOK_PRE_SPLIT;
        if (behavior(L, o, TOK_SPLIT_REMOVED, &p.behavior)) return -1;
        p.invert = jbool(o, "invert", 0);
        p.re = pattern(L, "Split pre_tokenizer", json_object_get(o, "pattern"));
        if (!p.re) return -1;
    } else if (!strcmp(ty, "Digits")) {
        p.type = TOK_PRE_DIGITS;
        p.individual_digits = jbool(o, "individual_digits", 0);
    } else if (!strcmp(ty, "Metaspace")) {
        int err;
        p.type = TOK_PRE_METASPACE;
        p.replacement = metaspace_replacement(L, o, &err);
        if (err || prepend_scheme(L, o, &p.prepend_scheme)) return -1;
        p.split = jbool(o, "split", 1);
    } else if (!strcmp(ty, "Whitespace")) {
        p.type = TOK_PRE_WHITESPACE;
        p.behavior = TOK_SPLIT_REMOVED;
        p.invert = 1;
        p.re = tok_regex_new(tok_pattern_rust_whitespace, strlen(tok_pattern_rust_whitespace), TOK_RE_PCRE2, L->e);
        if (!p.re) return -1;
    } else if (!strcmp(ty, "WhitespaceSplit")) {
        p.type = TOK_PRE_WHITESPACE_SPLIT;
    } else if (!strcmp(ty, "Punctuation")) {
        p.type = TOK_PRE_PUNCTUATION;
        if (behavior(L, o, TOK_SPLIT_ISOLATED, &p.behavior)) return -1;
    } else if (!strcmp(ty, "CharDelimiterSplit")) {
        p.type = TOK_PRE_CHAR_DELIMITER;
        if (one_char(L, "CharDelimiterSplit delimiter", jstr(o, "delimiter"), &p.delimiter)) return -1;
    } else if (!strcmp(ty, "BertPreTokenizer")) {
        add_pre(L->t)->type = TOK_PRE_WHITESPACE_SPLIT;
        p.type = TOK_PRE_PUNCTUATION;
        p.behavior = TOK_SPLIT_ISOLATED;
    } else {
        return unsupported(L, "pre_tokenizer", o);
    }
    *add_pre(L->t) = p;
    return 0;
}

// ---------------------------------------------------------------- decoders

static tok_decoder *add_dec(tokenizer *t) {
    t->dec = realloc(t->dec, (t->n_dec + 1) * sizeof *t->dec);
    if (!t->dec) abort();
    tok_decoder *d = &t->dec[t->n_dec++];
    memset(d, 0, sizeof *d);
    return d;
}

static int load_decoder(loader *L, json_t *o) {
    if (!o || json_is_null(o)) return 0;
    const char *ty = jtype(o);
    if (!ty) return unsupported(L, "decoder", o);
    L->t->has_decoder = 1;
    if (!strcmp(ty, "Sequence")) {
        json_t *arr = json_object_get(o, "decoders"), *it;
        size_t i;
        json_array_foreach(arr, i, it) if (load_decoder(L, it)) return -1;
        return 0;
    }
    tok_decoder d = {0};
    if (!strcmp(ty, "ByteLevel")) d.type = TOK_DEC_BYTELEVEL;
    else if (!strcmp(ty, "ByteFallback")) d.type = TOK_DEC_BYTEFALLBACK;
    else if (!strcmp(ty, "Fuse")) d.type = TOK_DEC_FUSE;
    else if (!strcmp(ty, "Metaspace")) {
        int err;
        d.type = TOK_DEC_METASPACE;
        d.replacement = metaspace_replacement(L, o, &err);
        if (err || prepend_scheme(L, o, &d.prepend_scheme)) return -1;
    } else if (!strcmp(ty, "Strip")) {
        d.type = TOK_DEC_STRIP;
        if (one_char(L, "Strip decoder content", jstr(o, "content"), &d.content)) return -1;
        json_t *a = json_object_get(o, "start"), *b = json_object_get(o, "stop");
        d.start = json_is_integer(a) ? (int)json_integer_value(a) : 0;
        d.stop = json_is_integer(b) ? (int)json_integer_value(b) : 0;
    } else if (!strcmp(ty, "Replace")) {
        json_t *c = json_object_get(o, "content");
        if (!json_is_string(c)) return error_set(L->e, "%s: Replace decoder without a 'content' string", L->path);
        d.type = TOK_DEC_REPLACE;
        d.pattern = pattern(L, "Replace decoder", json_object_get(o, "pattern"));
        if (!d.pattern) return -1;
        d.str = tok_strndup(json_string_value(c), json_string_length(c));
        d.str_len = json_string_length(c);
    } else {
        return unsupported(L, "decoder", o);
    }
    *add_dec(L->t) = d;
    return 0;
}

// ---------------------------------------------------------------- post-processor

typedef struct {
    tok_ivec pre, suf;
} post_ids;

// ["<s>", 1] (Roberta/Bert cls/sep)
static int pair_id(loader *L, json_t *o, const char *key, int32_t *id) {
    json_t *p = json_object_get(o, key);
    if (!json_is_array(p) || json_array_size(p) != 2 || !json_is_integer(json_array_get(p, 1)))
        return error_set(L->e, "%s: post_processor '%s' must be [token, id]", L->path, key);
    *id = (int32_t)json_integer_value(json_array_get(p, 1));
    return 0;
}

// Wraps what is there: new prefix + old prefix, old suffix + new suffix.
static void wrap(post_ids *p, const int32_t *pre, size_t npre, const int32_t *suf, size_t nsuf) {
    tok_ivec np = {0};
    for (size_t i = 0; i < npre; i++) tok_ivec_push(&np, pre[i]);
    for (size_t i = 0; i < p->pre.n; i++) tok_ivec_push(&np, p->pre.v[i]);
    tok_ivec_free(&p->pre);
    p->pre = np;
    for (size_t i = 0; i < nsuf; i++) tok_ivec_push(&p->suf, suf[i]);
}

static int load_post(loader *L, json_t *o, post_ids *p) {
    if (!o || json_is_null(o)) return 0;
    const char *ty = jtype(o);
    if (!ty) return unsupported(L, "post_processor", o);
    if (!strcmp(ty, "Sequence")) {
        json_t *arr = json_object_get(o, "processors"), *it;
        size_t i;
        json_array_foreach(arr, i, it) if (load_post(L, it, p)) return -1;
        return 0;
    }
    if (!strcmp(ty, "ByteLevel")) return 0;
    if (!strcmp(ty, "RobertaProcessing") || !strcmp(ty, "BertProcessing")) {
        int32_t cls, sep;
        if (pair_id(L, o, "cls", &cls) || pair_id(L, o, "sep", &sep)) return -1;
        wrap(p, &cls, 1, &sep, 1);
        return 0;
    }
    if (!strcmp(ty, "TemplateProcessing")) {
        json_t *single = json_object_get(o, "single"), *specials = json_object_get(o, "special_tokens"), *it;
        if (!json_is_array(single)) return error_set(L->e, "%s: TemplateProcessing without a 'single' template", L->path);
        tok_ivec pre = {0}, suf = {0};
        int seen_a = 0;
        size_t i;
        json_array_foreach(single, i, it) {
            json_t *st = json_object_get(it, "SpecialToken");
            if (json_object_get(it, "Sequence")) {
                seen_a = 1;
                continue;
            }
            const char *name = jstr(st, "id");
            json_t *spec = name ? json_object_get(specials, name) : NULL;
            json_t *ids = json_object_get(spec, "ids"), *idv;
            if (!json_is_array(ids)) {
                tok_ivec_free(&pre);
                tok_ivec_free(&suf);
                return error_set(L->e, "%s: TemplateProcessing uses special token '%s' that special_tokens does not define",
                                 L->path, name ? name : "?");
            }
            size_t k;
            json_array_foreach(ids, k, idv) tok_ivec_push(seen_a ? &suf : &pre, (int32_t)json_integer_value(idv));
        }
        wrap(p, pre.v, pre.n, suf.v, suf.n);
        tok_ivec_free(&pre);
        tok_ivec_free(&suf);
        return 0;
    }
    return unsupported(L, "post_processor", o);
}

// ---------------------------------------------------------------- model

static int load_model(loader *L, json_t *m) {
    tokenizer *t = L->t;
    const char *ty = jtype(m);
    json_t *vocab = json_object_get(m, "vocab"), *merges = json_object_get(m, "merges");
    if (ty ? strcmp(ty, "BPE") != 0 : !(vocab && merges)) return unsupported(L, "model", m);
    if (!json_is_object(vocab)) return error_set(L->e, "%s: model.vocab is not an object", L->path);
    json_t *dropout = json_object_get(m, "dropout");
    if (json_is_number(dropout) && json_number_value(dropout) > 0)
        return error_set(L->e, "%s: BPE dropout %g is not supported (encoding would be random)", L->path,
                         json_number_value(dropout));
    tok_model *md = &t->model;
    md->kind = TOK_MODEL_BPE;
    for (void *it = json_object_iter(vocab); it; it = json_object_iter_next(vocab, it)) {
        json_t *v = json_object_iter_value(it);
        if (!json_is_integer(v)) return error_set(L->e, "%s: model.vocab['%s'] is not an integer", L->path, json_object_iter_key(it));
        json_int_t id = json_integer_value(v);
        if (id < 0 || id > 0x7FFFFFFF) return error_set(L->e, "%s: model.vocab['%s'] = %lld is out of range", L->path, json_object_iter_key(it), (long long)id);
        tok_strmap_put(&md->vocab, json_object_iter_key(it), json_object_iter_key_len(it), (int32_t)id);
    }
    md->fuse_unk = jbool(m, "fuse_unk", 0);
    md->byte_fallback = jbool(m, "byte_fallback", 0);
    md->ignore_merges = jbool(m, "ignore_merges", 0);
    const char *unk = jstr(m, "unk_token");
    if (unk) {
        int32_t id;
        md->unk_id = tok_strmap_get(&md->vocab, unk, strlen(unk), &id) ? id : -2;
    }
    const char *cp = jstr(m, "continuing_subword_prefix"), *sf = jstr(m, "end_of_word_suffix");
    if (cp && *cp) md->cont_prefix = tok_strndup(cp, strlen(cp));
    if (sf && *sf) md->eow_suffix = tok_strndup(sf, strlen(sf));
    size_t plen = md->cont_prefix ? strlen(md->cont_prefix) : 0;
    if (!json_is_array(merges)) return error_set(L->e, "%s: model.merges is not an array", L->path);
    tok_u64map_init(&md->merges, json_array_size(merges));
    tok_buf nt = {0};
    size_t i;
    json_t *it;
    json_array_foreach(merges, i, it) {
        const char *a, *b;
        size_t al, bl;
        if (json_is_string(it)) {
            const char *s = json_string_value(it);
            const char *sp = strchr(s, ' ');
            if (!sp) {
                tok_buf_free(&nt);
                return error_set(L->e, "%s: merge %zu '%s' is not two tokens separated by a space", L->path, i, s);
            }
            a = s;
            al = sp - s;
            b = sp + 1;
            bl = strlen(b);
        } else if (json_is_array(it) && json_array_size(it) == 2 && json_is_string(json_array_get(it, 0)) &&
                   json_is_string(json_array_get(it, 1))) {
            a = json_string_value(json_array_get(it, 0));
            al = json_string_length(json_array_get(it, 0));
            b = json_string_value(json_array_get(it, 1));
            bl = json_string_length(json_array_get(it, 1));
        } else {
            tok_buf_free(&nt);
            return error_set(L->e, "%s: merge %zu is neither \"a b\" nor [a, b]", L->path, i);
        }
        int32_t ai, bi, ni;
        if (!tok_strmap_get(&md->vocab, a, al, &ai) || !tok_strmap_get(&md->vocab, b, bl, &bi)) {
            tok_buf_free(&nt);
            return error_set(L->e, "%s: merge %zu uses a token that is not in the vocabulary ('%.*s' '%.*s')", L->path, i,
                             (int)al, a, (int)bl, b);
        }
        nt.len = 0;
        tok_buf_append(&nt, a, al);
        if (bl >= plen) tok_buf_append(&nt, b + plen, bl - plen);
        if (!tok_strmap_get(&md->vocab, nt.data, nt.len, &ni)) {
            tok_buf_free(&nt);
            return error_set(L->e, "%s: merge %zu makes '%s', which is not in the vocabulary", L->path, i, nt.data);
        }
        tok_u64map_put(&md->merges, ((uint64_t)(uint32_t)ai << 32) | (uint32_t)bi, (int32_t)i, ni);
    }
    tok_buf_free(&nt);
    return 0;
}

static int load_added(loader *L, json_t *arr) {
    tokenizer *t = L->t;
    if (!arr || json_is_null(arr)) return 0;
    if (!json_is_array(arr)) return error_set(L->e, "%s: added_tokens is not an array", L->path);
    size_t i;
    json_t *it;
    t->added = calloc(json_array_size(arr) + 1, sizeof *t->added);
    json_array_foreach(arr, i, it) {
        json_t *c = json_object_get(it, "content"), *id = json_object_get(it, "id");
        if (!json_is_string(c) || !json_is_integer(id))
            return error_set(L->e, "%s: added_tokens[%zu] needs a string 'content' and an integer 'id'", L->path, i);
        tok_added *a = &t->added[t->n_added++];
        a->content = tok_strndup(json_string_value(c), json_string_length(c));
        a->len = json_string_length(c);
        a->id = (int32_t)json_integer_value(id);
        a->special = jbool(it, "special", 0);
        a->lstrip = jbool(it, "lstrip", 0);
        a->rstrip = jbool(it, "rstrip", 0);
        a->single_word = jbool(it, "single_word", 0);
        a->normalized = jbool(it, "normalized", !a->special);
    }
    return 0;
}

// bos_token / eos_token of tokenizer_config.json in the same folder.
static void config_tokens(tokenizer *t, const char *path) {
    char *dup = tok_strndup(path, strlen(path));
    const char *dir = dirname(dup);
    size_t n = strlen(dir) + 32;
    char *cfg = malloc(n);
    snprintf(cfg, n, "%s/tokenizer_config.json", dir);
    json_error_t je;
    json_t *root = json_load_file(cfg, 0, &je);
    free(cfg);
    free(dup);
    if (!root) return;
    const char *keys[2] = {"bos_token", "eos_token"};
    int *dst[2] = {&t->bos_id, &t->eos_id};
    for (int k = 0; k < 2; k++) {
        json_t *v = json_object_get(root, keys[k]);
        const char *s = json_is_string(v) ? json_string_value(v) : jstr(v, "content");
        if (s) *dst[k] = tokenizer_token_id(t, s);
    }
    json_decref(root);
}

int tokenizer_load_hf(tokenizer **out, const char *path, atoll_error *e) {
    *out = NULL;
    json_error_t je;
    json_t *root = json_load_file(path, JSON_ALLOW_NUL, &je);
    if (!root) {
        if (je.line > 0) return error_set(e, "%s: %s (line %d)", path, je.text, je.line);
        return error_set(e, "%s: %s", path, je.text);
    }
    tokenizer *t = tok_alloc(path);
    loader L = {t, path, e};
    int rc = 0;
    json_t *model = json_object_get(root, "model");
    if (!json_is_object(model)) rc = error_set(e, "%s: no 'model' object", path);
    if (!rc) rc = load_model(&L, model);
    if (!rc) rc = load_added(&L, json_object_get(root, "added_tokens"));
    if (!rc) rc = load_normalizer(&L, json_object_get(root, "normalizer"));
    if (!rc) rc = load_pretokenizer(&L, json_object_get(root, "pre_tokenizer"));
    if (!rc) rc = load_decoder(&L, json_object_get(root, "decoder"));
    post_ids post = {0};
    if (!rc) rc = load_post(&L, json_object_get(root, "post_processor"), &post);
    t->post_prefix = post.pre.v;
    t->n_prefix = (int)post.pre.n;
    t->post_suffix = post.suf.v;
    t->n_suffix = (int)post.suf.n;
    json_decref(root);
    if (!rc) rc = tok_finish(t, e);
    if (rc) {
        tokenizer_free(t);
        return -1;
    }
    config_tokens(t, path);
    if (t->bos_id < 0 && t->n_prefix > 0) t->bos_id = t->post_prefix[0];
    *out = t;
    return 0;
}
