// runtime/tokenizer/gguf_tokenizer.h — a tokenizer from a GGUF file's
// tokenizer.ggml.* metadata.
#ifndef ATOLL_TOKENIZER_GGUF_TOKENIZER_H
#define ATOLL_TOKENIZER_GGUF_TOKENIZER_H

#include "runtime/model/gguf.h"
#include "runtime/tokenizer/tokenizer.h"

int gguf_tokenizer_load(const gguf_file *g, tokenizer **t, atoll_error *e);

#endif
