// runtime/cmd_common.c — shared helpers of the commands (see cmd_common.h).
#include "runtime/cmd_common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/comm/world.h"

int all_ranks_ok(int ok) {
    int all = 0;
    CHECK_MPI(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    return all;
}

int cmd_load_model(const atoll_config *c, backend **be, model *m) {
    atoll_error e = {{0}};
    if (!c->model[0]) {
        LOG_RANK0(LOG_LEVEL_ERROR, "--model is required (a GGUF file or a Hugging Face model directory)");
        return 1;
    }
    *be = backend_cpu_create((int)c->threads);
    int ok = model_load(m, c->model, *be, &e) == 0;
    if (!ok) LOG_ERROR("%s", e.msg);
    if (!all_ranks_ok(ok)) {
        if (ok) model_free(m);
        backend_destroy(*be);
        return 1;
    }
    LOG_RANK0(LOG_LEVEL_INFO, "loaded %s (%s): %d layers, hidden %d, %d heads / %d KV heads, vocab %d",
              c->model, m->desc.hf_architecture, m->desc.n_layers, m->desc.hidden_size, m->desc.n_heads,
              m->desc.n_kv_heads, m->desc.vocab_size);
    return 0;
}

void cmd_unload_model(backend *be, model *m) {
    model_free(m);
    backend_destroy(be);
}

int parse_id_list(const char *text, const char *flag, int limit, int32_t **ids, int *n, atoll_error *e) {
    *ids = NULL;
    *n = 0;
    if (!text[0]) return error_set(e, "%s is required (comma-separated token ids, e.g. 1,2,3)", flag);
    int cap = 1;
    for (const char *p = text; *p; p++) cap += *p == ',';
    *ids = malloc(cap * sizeof **ids);
    if (!*ids) return error_set(e, "out of memory");
    const char *p = text;
    for (;;) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < 0 || v >= limit || (*end && *end != ',')) {
            free(*ids);
            *ids = NULL;
            return error_set(e, "%s entry %d ('%.*s') is not a token id in [0, %d)", flag, *n + 1,
                             (int)strcspn(p, ","), p, limit);
        }
        (*ids)[(*n)++] = (int32_t)v;
        if (!*end) return 0;
        p = end + 1;
    }
}

json_t *chat_messages(const char *system, const char *user) {
    json_t *messages = json_array();
    if (system && system[0])
        json_array_append_new(messages, json_pack("{s:s, s:s}", "role", "system", "content", system));
    if (user) json_array_append_new(messages, json_pack("{s:s, s:s}", "role", "user", "content", user));
    return messages;
}
