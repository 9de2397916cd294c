// runtime/template/chat_template.h — chat templates: the subset of Jinja2
// that published model templates use, rendered byte-for-byte as
// transformers' apply_chat_template does (jinja2 with trim_blocks and
// lstrip_blocks, raise_exception, strftime_now, tojson). A construct outside
// the subset is a parse error naming it and its line and column — never a
// silently different prompt.
#ifndef ATOLL_TEMPLATE_CHAT_TEMPLATE_H
#define ATOLL_TEMPLATE_CHAT_TEMPLATE_H

#include <jansson.h>
#include <stddef.h>

#include "runtime/util/error.h"

typedef struct chat_template chat_template;

int chat_template_parse(chat_template **t, const char *source, atoll_error *e);
void chat_template_free(chat_template *t);

// Renders with the variables of `context`, a JSON object such as
// {"messages": [...], "tools": [...], "add_generation_prompt": true,
//  "bos_token": "<s>", "eos_token": "</s>"}. Keys absent from it are
// undefined in the template. *out is malloc'ed and NUL-terminated.
int chat_template_render(const chat_template *t, json_t *context, char **out, size_t *len,
                         atoll_error *e);

#endif
