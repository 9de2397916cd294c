// runtime/tokenizer/tok_internal.h — the tokenizer's internal description,
// shared by its files: byte buffers and hash maps (util.c), the regex wrapper
// (regex.c), the model (bpe.c), added tokens (added_tokens.c), normalizers
// (normalizer.c), pre-tokenizers (pretokenizer.c), decoders (decoder.c) and
// the struct tokenizer that tokenizer.c drives. Both loaders (hf_json.c,
// gguf_vocab.c) fill this description; nothing here is public API.
#ifndef ATOLL_TOKENIZER_TOK_INTERNAL_H
#define ATOLL_TOKENIZER_TOK_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/tokenizer/tokenizer.h"
#include "runtime/util/error.h"

// ---------------------------------------------------------------- util.c

// Growable byte buffer; data is always NUL-terminated when non-NULL.
typedef struct {
    char *data;
    size_t len, cap;
} tok_buf;

void tok_buf_reserve(tok_buf *b, size_t extra);
void tok_buf_append(tok_buf *b, const void *p, size_t n);
void tok_buf_putc(tok_buf *b, char c);
void tok_buf_put_cp(tok_buf *b, uint32_t cp);  // code point as UTF-8
void tok_buf_free(tok_buf *b);
char *tok_strndup(const char *s, size_t n);

// Growable int32 vector.
typedef struct {
    int32_t *v;
    size_t n, cap;
} tok_ivec;

void tok_ivec_push(tok_ivec *a, int32_t x);
void tok_ivec_free(tok_ivec *a);

uint64_t tok_hash(const void *p, size_t n);

// String -> int32 map (keys copied into the map's own arena).
typedef struct {
    uint32_t *slots;  // entry index + 1, 0 = empty
    size_t cap;       // power of two
    size_t n;
    size_t *key_off;  // per entry: offset of the key in arena
    uint32_t *key_len;
    int32_t *val;
    size_t ecap;
    tok_buf arena;
} tok_strmap;

void tok_strmap_init(tok_strmap *m);
void tok_strmap_free(tok_strmap *m);
// Inserts or overwrites.
void tok_strmap_put(tok_strmap *m, const char *k, size_t n, int32_t v);
// Returns 1 and sets *v when found.
int tok_strmap_get(const tok_strmap *m, const char *k, size_t n, int32_t *v);

// uint64 -> (int32, int32) map.
typedef struct {
    uint64_t *keys;
    int32_t *a, *b;
    uint8_t *used;
    size_t cap, n;
} tok_u64map;

void tok_u64map_init(tok_u64map *m, size_t expected);
void tok_u64map_free(tok_u64map *m);
void tok_u64map_put(tok_u64map *m, uint64_t k, int32_t a, int32_t b);
int tok_u64map_get(const tok_u64map *m, uint64_t k, int32_t *a, int32_t *b);

// UTF-8 helpers. tok_utf8_valid: 1 if s[0..n) is valid UTF-8 (as Rust's str).
int tok_utf8_valid(const char *s, size_t n);
// Length of the UTF-8 character starting at s (valid input assumed), 1..4.
static inline int tok_utf8_len(unsigned char c) {
    return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
}
uint32_t tok_utf8_decode(const char *s, int *len);  // valid input assumed
// Appends Rust String::from_utf8_lossy(bytes) to out.
void tok_utf8_lossy(tok_buf *out, const unsigned char *s, size_t n);
// Unicode White_Space (Rust char::is_whitespace, regex \s).
int tok_is_whitespace(uint32_t cp);

// GPT-2's bytes_to_unicode: byte -> printable code point, and back.
static inline uint32_t tok_byte_cp(unsigned b) {
    if (b <= 32) return 256 + b;
    if (b >= 127 && b <= 160) return 256 + 33 + (b - 127);
    if (b == 173) return 256 + 33 + 34;
    return b;
}
static inline int tok_cp_byte(uint32_t cp) {  // -1 when cp is not one of the 256
    if (cp < 256) return (cp <= 32 || (cp >= 127 && cp <= 160) || cp == 173) ? -1 : (int)cp;
    if (cp < 256 + 33) return (int)(cp - 256);
    if (cp < 256 + 67) return (int)(cp - 256 - 33 + 127);
    if (cp == 256 + 67) return 173;
    return -1;
}

// ---------------------------------------------------------------- regex.c

typedef struct tok_regex tok_regex;
enum {
    TOK_RE_ONIG = 0,     // an Oniguruma regex as in tokenizer.json, translated so PCRE2 matches the same
    TOK_RE_LITERAL = 1,  // a literal string
    TOK_RE_PCRE2 = 2,    // PCRE2 syntax as is (UTF, UCP)
};
tok_regex *tok_regex_new(const char *pattern, size_t len, int kind, atoll_error *e);
extern const char *const tok_pattern_rust_whitespace;
void tok_regex_free(tok_regex *re);

// Match data reused across calls within one encode.
typedef struct tok_match_ctx tok_match_ctx;
tok_match_ctx *tok_match_ctx_new(void);
void tok_match_ctx_free(tok_match_ctx *c);

// One entry of find_matches: a range of the input and whether it matched.
typedef struct {
    size_t start, end;
    int is_match;
} tok_span;

typedef struct {
    tok_span *v;
    size_t n, cap;
} tok_spans;

void tok_spans_push(tok_spans *s, size_t a, size_t b, int m);
void tok_spans_free(tok_spans *s);

// HF's Pattern::find_matches for a regex: the whole of s[0..n) as
// alternating non-match / match spans (onig find_iter semantics).
int tok_regex_find_matches(const tok_regex *re, tok_match_ctx *ctx, const char *s, size_t n,
                           tok_spans *out, atoll_error *e);

// Single-use helpers for the Rust-regex checks of added tokens.
int tok_is_word_char(uint32_t cp);  // Rust regex \w

// ---------------------------------------------------------------- bpe.c

typedef enum { TOK_MODEL_BPE = 0, TOK_MODEL_SPM = 1 } tok_model_kind;

typedef struct {
    tok_model_kind kind;
    tok_strmap vocab;       // model vocabulary text -> id
    tok_u64map merges;      // (left id << 32 | right id) -> (rank, new id)
    int unk_id;             // -1: no unk_token; -2: named but not in the vocabulary
    int fuse_unk, byte_fallback, ignore_merges;
    char *cont_prefix;      // continuing_subword_prefix or NULL
    char *eow_suffix;       // end_of_word_suffix or NULL
    int32_t byte_ids[256];  // "<0xNN>" ids, -1 when absent
    const float *scores;    // SPM: per id (owned by the tokenizer)
    int n_scores;
    // BPE: long words may be cut before each "▁" that follows another
    // character, because no vocabulary token spans such a boundary (set by
    // tok_finish after checking every token; the result is the same).
    int split_at_metaspace;
} tok_model;

// Per-encode scratch for the model (word cache, heap, symbols).
typedef struct tok_model_ctx tok_model_ctx;
tok_model_ctx *tok_model_ctx_new(void);
void tok_model_ctx_free(tok_model_ctx *c);

int tok_model_tokenize(const tok_model *m, tok_model_ctx *ctx, const char *s, size_t n,
                       tok_ivec *out, atoll_error *e);
void tok_model_free(tok_model *m);

// ---------------------------------------------------------------- added_tokens.c

typedef struct {
    char *content;
    size_t len;
    int32_t id;
    uint8_t special, lstrip, rstrip, single_word, normalized;
} tok_added;

// Leftmost-longest matcher over a set of byte strings (a trie).
typedef struct {
    tok_u64map edges;        // (node << 8 | byte) -> (child, unused)
    int32_t *terminal;       // node -> pattern index or -1
    size_t n_nodes, cap_nodes;
    uint8_t first[256];      // bytes that start some pattern
    int n_patterns;
    int32_t *pattern_token;  // pattern index -> index into tokenizer->added
} tok_matcher;

void tok_matcher_init(tok_matcher *m);
void tok_matcher_free(tok_matcher *m);
void tok_matcher_add(tok_matcher *m, const char *s, size_t n, int32_t token_index);

// One segment of a split on added tokens: text (added < 0) or an added token.
typedef struct {
    size_t start, end;
    int32_t added;  // index into tokenizer->added, or -1
} tok_segment;

typedef struct {
    tok_segment *v;
    size_t n, cap;
} tok_segments;

void tok_segments_free(tok_segments *s);
// AddedVocabulary::find_matches: splits s[0..n) into text and added tokens,
// honouring single_word, lstrip and rstrip. Empty text segments are kept out.
void tok_added_split(const tokenizer *t, const tok_matcher *m, const char *s, size_t n,
                     tok_segments *out);

// ---------------------------------------------------------------- normalizer.c

typedef enum {
    TOK_NORM_NFC, TOK_NORM_NFD, TOK_NORM_NFKC, TOK_NORM_NFKD,
    TOK_NORM_LOWERCASE, TOK_NORM_PREPEND, TOK_NORM_REPLACE, TOK_NORM_STRIP,
    TOK_NORM_STRIP_ACCENTS, TOK_NORM_BYTELEVEL,
} tok_norm_type;

typedef struct {
    tok_norm_type type;
    char *str;            // Prepend text / Replace content
    size_t str_len;
    tok_regex *pattern;   // Replace pattern
    int left, right;      // Strip
} tok_normalizer;

// Applies the chain to s[0..n) and writes the result to out (cleared first).
int tok_normalize(const tokenizer *t, tok_match_ctx *mctx, const char *s, size_t n, tok_buf *out,
                  atoll_error *e);
// Unicode normalization as HF tokenizers does it (see normalizer.c).
int tok_unicode_normalize(tok_norm_type form, const char *s, size_t n, tok_buf *out, atoll_error *e);
void tok_normalizer_free(tok_normalizer *n);

// ---------------------------------------------------------------- pretokenizer.c

typedef enum {
    TOK_SPLIT_REMOVED, TOK_SPLIT_ISOLATED, TOK_SPLIT_MERGED_PREV, TOK_SPLIT_MERGED_NEXT,
    TOK_SPLIT_CONTIGUOUS,
} tok_split_behavior;

typedef enum {
    TOK_PRE_BYTELEVEL, TOK_PRE_SPLIT, TOK_PRE_DIGITS, TOK_PRE_METASPACE, TOK_PRE_WHITESPACE,
    TOK_PRE_WHITESPACE_SPLIT, TOK_PRE_PUNCTUATION, TOK_PRE_CHAR_DELIMITER,
} tok_pre_type;

typedef enum { TOK_PREPEND_ALWAYS, TOK_PREPEND_FIRST, TOK_PREPEND_NEVER } tok_prepend_scheme;

typedef struct {
    tok_pre_type type;
    tok_regex *re;          // Split, Whitespace, ByteLevel(use_regex)
    tok_split_behavior behavior;
    int invert;
    int add_prefix_space;   // ByteLevel
    int individual_digits;  // Digits
    uint32_t replacement;   // Metaspace (code point)
    tok_prepend_scheme prepend_scheme;
    int split;              // Metaspace
    uint32_t delimiter;     // CharDelimiterSplit
} tok_pretokenizer;

// A piece of text during pre-tokenization: a range of an arena and whether
// it starts at offset 0 of the original input (Metaspace prepend "first").
typedef struct {
    size_t off, len;
    int first;
} tok_piece;

typedef struct {
    tok_piece *v;
    size_t n, cap;
} tok_pieces;

void tok_pieces_push(tok_pieces *p, size_t off, size_t len, int first);
void tok_pieces_free(tok_pieces *p);

// Runs the pre-tokenizer chain on the pieces in *in (whose text lives in
// *arena), leaving the resulting words in *in. *tmp is scratch.
int tok_pretokenize(const tokenizer *t, tok_match_ctx *mctx, tok_buf *arena, tok_pieces *in,
                    tok_pieces *tmp, atoll_error *e);
void tok_pretokenizer_free(tok_pretokenizer *p);
// The GPT-2 pattern of HF's ByteLevel pre-tokenizer, Llama-3's and Qwen2's.
extern const char *const tok_pattern_gpt2;
extern const char *const tok_pattern_llama3;
extern const char *const tok_pattern_qwen2;

// ---------------------------------------------------------------- decoder.c

typedef enum {
    TOK_DEC_BYTELEVEL, TOK_DEC_METASPACE, TOK_DEC_BYTEFALLBACK, TOK_DEC_FUSE, TOK_DEC_STRIP,
    TOK_DEC_REPLACE,
} tok_dec_type;

typedef struct {
    tok_dec_type type;
    uint32_t replacement;   // Metaspace
    tok_prepend_scheme prepend_scheme;
    uint32_t content;       // Strip
    int start, stop;        // Strip
    tok_regex *pattern;     // Replace
    char *str;              // Replace content
    size_t str_len;
} tok_decoder;

// Decodes the token texts toks[0..n) through the decoder chain (or joins
// them with spaces when there is none). at_start: toks[0] is the first token
// of the text; at_end: the last token ends it (see stream.c).
int tok_decode_texts(const tokenizer *t, const char *const *toks, const uint32_t *lens, size_t n,
                     int at_start, int at_end, tok_buf *out, atoll_error *e);
void tok_decoder_free(tok_decoder *d);

// ---------------------------------------------------------------- tokenizer

#define TOK_FLAG_SPECIAL 1u
#define TOK_FLAG_ADDED 2u
#define TOK_FLAG_BYTE 4u  // "<0xNN>" (ByteFallback decodes it)

struct tokenizer {
    char *source;  // file path or description, for messages

    // Id -> text as HF's id_to_token gives it (added content first).
    int n_ids;
    char **id_text;
    uint32_t *id_len;
    uint8_t *id_flags;

    tok_model model;
    float *scores;  // SPM scores (owned)

    tok_added *added;
    int n_added;
    tok_strmap added_map;    // content -> id
    tok_strmap special_set;  // contents of special added tokens
    tok_matcher match_raw;   // non-normalized added tokens
    tok_matcher match_norm;  // normalized added tokens (normalized contents)

    tok_normalizer *norm;
    int n_norm;
    tok_pretokenizer *pre;
    int n_pre;
    tok_decoder *dec;
    int n_dec;
    int has_decoder;
    int dec_has_bytefallback;
    int dec_strip_after_join;   // a Strip with stop > 0 after Fuse/ByteLevel
    uint32_t dec_strip_content;

    int32_t *post_prefix, *post_suffix;  // what add_special adds
    int n_prefix, n_suffix;

    int bos_id, eos_id;
};

// Builds id_text/id_flags, the added-token maps and matchers once the model,
// added tokens and normalizers are set (shared by both loaders).
int tok_finish(tokenizer *t, atoll_error *e);
tokenizer *tok_alloc(const char *source);

#endif
