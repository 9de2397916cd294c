// runtime/tokenizer/tokenizer.h — text <-> token ids, exactly as Hugging Face
// `tokenizers` does it, for the models atoll loads: byte-level BPE (GPT-2,
// Llama-3, Qwen2, SmolLM pre-tokenizers) and SentencePiece-style BPE
// (Metaspace, byte fallback), with added/special tokens, normalizers and
// decoders. Built from a tokenizer.json or from GGUF tokenizer metadata;
// both fill the same description.
#ifndef ATOLL_TOKENIZER_TOKENIZER_H
#define ATOLL_TOKENIZER_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/util/error.h"

typedef struct tokenizer tokenizer;

// Loads a Hugging Face tokenizer.json.
int tokenizer_load_hf(tokenizer **t, const char *tokenizer_json_path, atoll_error *e);

// The tokenizer part of a GGUF file's metadata (tokenizer.ggml.*).
typedef struct {
    const char *model;              // tokenizer.ggml.model: "gpt2" or "llama"
    const char *pre;                // tokenizer.ggml.pre (NULL: "default")
    int n_tokens;
    const char *const *tokens;      // [n_tokens] tokenizer.ggml.tokens
    const float *scores;            // [n_tokens] or NULL (tokenizer.ggml.scores)
    const int32_t *token_types;     // [n_tokens] or NULL (1 normal, 2 unknown, 3 control, 4 user defined, 5 unused, 6 byte)
    int n_merges;
    const char *const *merges;      // [n_merges] "a b" (tokenizer.ggml.merges)
    int bos_id, eos_id, unk_id, pad_id;  // -1 when absent
    int add_bos, add_eos;           // tokenizer.ggml.add_bos_token / add_eos_token
    int add_space_prefix;           // tokenizer.ggml.add_space_prefix (llama); -1 absent
} tokenizer_gguf_vocab;

int tokenizer_load_gguf_vocab(tokenizer **t, const tokenizer_gguf_vocab *v, atoll_error *e);
void tokenizer_free(tokenizer *t);

int tokenizer_vocab_size(const tokenizer *t);
// Special token ids the model declares, -1 when absent.
int tokenizer_bos_id(const tokenizer *t);
int tokenizer_eos_id(const tokenizer *t);
// The token's text as stored in the vocabulary ("Ġthe", "<|im_end|>"), or NULL.
const char *tokenizer_token_text(const tokenizer *t, int id);
// Id of an exact vocabulary or added-token string, or -1.
int tokenizer_token_id(const tokenizer *t, const char *text);
// 1 if the id is an added token marked special (skipped by skip_special).
int tokenizer_is_special(const tokenizer *t, int id);

// Encodes text (len bytes, need not be NUL-terminated). Added tokens in the
// text are matched as HF does. add_special: also add what the post-processor
// (tokenizer.json) or add_bos/add_eos (GGUF) adds, as HF's
// add_special_tokens=True. *ids is malloc'ed.
int tokenizer_encode(const tokenizer *t, const char *text, size_t len, int add_special,
                     int32_t **ids, size_t *n_ids, atoll_error *e);

// Decodes ids to text as HF's decode(ids, skip_special_tokens=skip_special).
// *text is malloc'ed and NUL-terminated; *len excludes the NUL.
int tokenizer_decode(const tokenizer *t, const int32_t *ids, size_t n_ids, int skip_special,
                     char **text, size_t *len, atoll_error *e);

// Incremental decoding for streaming: push one id at a time and get the new
// text it completes. Bytes of a UTF-8 character split across tokens are held
// back until the character is whole; the concatenation of every push and the
// final flush equals tokenizer_decode of all ids.
typedef struct tokenizer_stream tokenizer_stream;
tokenizer_stream *tokenizer_stream_new(const tokenizer *t, int skip_special);
// Appends the newly completed text to *out (malloc'ed, NUL-terminated) and
// returns its length, or -1 on error.
long tokenizer_stream_push(tokenizer_stream *s, int32_t id, char **out, atoll_error *e);
long tokenizer_stream_flush(tokenizer_stream *s, char **out, atoll_error *e);
void tokenizer_stream_free(tokenizer_stream *s);

#endif
