// runtime/cmd_common.h — pieces the model-running commands share: loading
// the model on every rank with one agreed verdict, and parsing id lists.
#ifndef ATOLL_CMD_COMMON_H
#define ATOLL_CMD_COMMON_H

#include <jansson.h>
#include <stdint.h>

#include "runtime/config.h"
#include "runtime/model/model.h"

// 1 when ok is true on every rank (a collective: every rank calls it).
int all_ranks_ok(int ok);
// Creates the backend and loads --model on every rank. Returns 0 on every
// rank when all succeeded, else 1 everywhere (errors logged where they happened).
int cmd_load_model(const atoll_config *c, backend **be, model *m);
void cmd_unload_model(backend *be, model *m);
// "1,2,3" -> ids, each in [0, limit). `flag` names the option in messages.
int parse_id_list(const char *text, const char *flag, int limit, int32_t **ids, int *n, atoll_error *e);

// A messages array holding the system message (when not empty) and, when
// user is not NULL, one user message.
json_t *chat_messages(const char *system, const char *user);

#endif
