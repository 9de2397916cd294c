// runtime/tokenizer/model_text.h — the text side of a model: its tokenizer,
// chat template and special token strings, loaded from a Hugging Face
// directory (tokenizer.json, tokenizer_config.json, chat_template.jinja) or
// from a GGUF file's tokenizer.* metadata. Also renders a conversation into
// prompt token ids.
#ifndef ATOLL_TOKENIZER_MODEL_TEXT_H
#define ATOLL_TOKENIZER_MODEL_TEXT_H

#include <jansson.h>
#include <stdint.h>

#include "runtime/template/chat_template.h"
#include "runtime/tokenizer/tokenizer.h"
#include "runtime/util/error.h"

typedef struct {
    tokenizer *tok;
    chat_template *chat;     // NULL when the model has no chat template
    char *bos_token;         // "" when absent
    char *eos_token;         // "" when absent
    int eos_id;              // -1 when absent
} model_text;

int model_text_load(model_text *t, const char *model_path, atoll_error *e);
void model_text_free(model_text *t);

// Renders messages (a JSON array of {"role", "content"}) through the chat
// template with add_generation_prompt and tokenizes the result without
// adding special tokens (the template writes them), as transformers'
// apply_chat_template(tokenize=True) does.
int model_text_chat_ids(const model_text *t, json_t *messages, int32_t **ids, size_t *n,
                        atoll_error *e);

#endif
