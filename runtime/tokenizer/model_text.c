// runtime/tokenizer/model_text.c — loading a model's tokenizer and chat
// template (see model_text.h).
#include "runtime/tokenizer/model_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime/model/gguf.h"
#include "runtime/tokenizer/gguf_tokenizer.h"

// A special token in tokenizer_config.json is a string or {"content": "..."}.
static char *special_token_string(json_t *config, const char *key) {
    json_t *v = json_object_get(config, key);
    if (json_is_object(v)) v = json_object_get(v, "content");
    return strdup(json_is_string(v) ? json_string_value(v) : "");
}

static char *read_text_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf) buf[n] = 0;
    fclose(f);
    return buf;
}

// chat_template in tokenizer_config.json: a string, or a list of
// {"name", "template"} of which "default" is the chat template.
static const char *config_chat_template(json_t *config) {
    json_t *v = json_object_get(config, "chat_template");
    if (json_is_string(v)) return json_string_value(v);
    size_t i;
    json_t *item;
    json_array_foreach(v, i, item) {
        json_t *name = json_object_get(item, "name"), *tpl = json_object_get(item, "template");
        if (json_is_string(name) && strcmp(json_string_value(name), "default") == 0 && json_is_string(tpl))
            return json_string_value(tpl);
    }
    return NULL;
}

static int model_text_set_template(model_text *t, const char *source, const char *where, atoll_error *e) {
    if (!source) return 0;
    if (chat_template_parse(&t->chat, source, e)) return error_prefix(e, "chat template of %s", where);
    return 0;
}

static int model_text_load_hf(model_text *t, const char *dir, atoll_error *e) {
    char path[4096];
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    if (tokenizer_load_hf(&t->tok, path, e)) return -1;
    snprintf(path, sizeof path, "%s/tokenizer_config.json", dir);
    json_error_t jerr;
    json_t *config = json_load_file(path, 0, &jerr);
    if (!config && jerr.line >= 0)
        return error_set(e, "%s: not valid JSON (line %d: %s)", path, jerr.line, jerr.text);
    t->bos_token = special_token_string(config, "bos_token");
    t->eos_token = special_token_string(config, "eos_token");
    snprintf(path, sizeof path, "%s/chat_template.jinja", dir);
    char *file_template = read_text_file(path);
    const char *source = file_template ? file_template : config_chat_template(config);
    int rc = model_text_set_template(t, source, dir, e);
    free(file_template);
    json_decref(config);
    if (rc) return -1;
    t->eos_id = t->eos_token[0] ? tokenizer_token_id(t->tok, t->eos_token) : tokenizer_eos_id(t->tok);
    return 0;
}

static int model_text_load_gguf(model_text *t, const char *path, atoll_error *e) {
    gguf_file g;
    if (gguf_open(&g, path, e)) return -1;
    int rc = gguf_tokenizer_load(&g, &t->tok, e);
    if (rc == 0) {
        const char *source = gguf_get_string(&g, "tokenizer.chat_template");
        rc = model_text_set_template(t, source, path, e);
    }
    gguf_close(&g);
    if (rc) return -1;
    int bos = tokenizer_bos_id(t->tok), eos = tokenizer_eos_id(t->tok);
    const char *b = bos >= 0 ? tokenizer_token_text(t->tok, bos) : NULL;
    const char *s = eos >= 0 ? tokenizer_token_text(t->tok, eos) : NULL;
    t->bos_token = strdup(b ? b : "");
    t->eos_token = strdup(s ? s : "");
    t->eos_id = eos;
    return 0;
}

int model_text_load(model_text *t, const char *model_path, atoll_error *e) {
    memset(t, 0, sizeof *t);
    t->eos_id = -1;
    struct stat st;
    if (stat(model_path, &st) != 0) return error_set(e, "%s: no such file or directory", model_path);
    int rc = S_ISDIR(st.st_mode) ? model_text_load_hf(t, model_path, e) : model_text_load_gguf(t, model_path, e);
    if (rc) model_text_free(t);
    return rc;
}

void model_text_free(model_text *t) {
    if (t->tok) tokenizer_free(t->tok);
    if (t->chat) chat_template_free(t->chat);
    free(t->bos_token);
    free(t->eos_token);
    memset(t, 0, sizeof *t);
}

int model_text_chat_ids(const model_text *t, json_t *messages, int32_t **ids, size_t *n, atoll_error *e) {
    if (!t->chat) return error_set(e, "the model has no chat template (tokenizer.chat_template / chat_template)");
    json_t *context = json_pack("{s:O, s:b, s:s, s:s}", "messages", messages, "add_generation_prompt", 1,
                                "bos_token", t->bos_token, "eos_token", t->eos_token);
    char *prompt = NULL;
    size_t len = 0;
    int rc = chat_template_render(t->chat, context, &prompt, &len, e);
    json_decref(context);
    if (rc) return -1;
    rc = tokenizer_encode(t->tok, prompt, len, 0, ids, n, e);
    free(prompt);
    return rc;
}
