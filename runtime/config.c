// runtime/config.c — the key table and its readers (ini, flags, broadcast).
#include "runtime/config.h"

#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/util/log.h"

#define KEY(name, type, def, cmds, lo, hi, help) \
    {#name, type, def, help, cmds, offsetof(atoll_config, name), lo, hi}

const config_key config_keys[] = {
    KEY(config, CONFIG_STRING, "", CMD_ALL, 0, 0, "ini file with keys of this table; flags override it"),
    KEY(model, CONFIG_STRING, "", CMD_GENERATE | CMD_CHAT | CMD_TOKENIZE | CMD_DETOKENIZE, 0, 0,
        "model: a GGUF file or a Hugging Face directory (config.json, safetensors, tokenizer.json); default: models/SmolLM2-135M-Instruct.Q4_1.gguf beside the build folder"),
    KEY(prompt, CONFIG_STRING, "", CMD_GENERATE, 0, 0, "prompt text"),
    KEY(prompt_ids, CONFIG_STRING, "", CMD_GENERATE, 0, 0, "prompt as comma-separated token ids, e.g. 1,2,3"),
    KEY(chat, CONFIG_BOOL, "false", CMD_GENERATE, 0, 0, "send --prompt through the model's chat template"),
    KEY(system, CONFIG_STRING, "", CMD_GENERATE | CMD_CHAT, 0, 0, "system message for the chat template"),
    KEY(text, CONFIG_STRING, "", CMD_TOKENIZE, 0, 0, "text to tokenize"),
    KEY(file, CONFIG_STRING, "", CMD_TOKENIZE, 0, 0, "file whose bytes to tokenize"),
    KEY(special, CONFIG_BOOL, "false", CMD_TOKENIZE, 0, 0,
        "add the model's special tokens (BOS/EOS) as Hugging Face's add_special_tokens=True does"),
    KEY(ids, CONFIG_STRING, "", CMD_DETOKENIZE, 0, 0, "comma-separated token ids to decode"),
    KEY(max_tokens, CONFIG_INT, "128", CMD_GENERATE | CMD_CHAT, 1, 1e9, "most tokens to generate (per turn in chat)"),
    KEY(temperature, CONFIG_FLOAT, "0", CMD_GENERATE | CMD_CHAT, 0, 1e6, "sampling temperature; 0 is greedy"),
    KEY(seed, CONFIG_INT, "0", CMD_GENERATE | CMD_CHAT, 0, 9.2e18, "random seed for sampling"),
    KEY(logits_out, CONFIG_STRING, "", CMD_GENERATE, 0, 0, "write the logits of each generated token to this .npy file (float32 [tokens, vocab])"),
    KEY(ignore_eos, CONFIG_BOOL, "false", CMD_GENERATE, 0, 0, "keep generating past the model's end-of-sequence token"),
    KEY(threads, CONFIG_INT, "0", CMD_GENERATE | CMD_CHAT, 0, 4096, "CPU threads per rank; 0 uses every core"),
    KEY(kv_block_size, CONFIG_INT, "16", CMD_GENERATE | CMD_CHAT, 1, 4096, "tokens per KV cache block"),
    KEY(max_model_len, CONFIG_INT, "0", CMD_GENERATE | CMD_CHAT, 0, 1e9, "context length limit; 0 uses the model's max_position_embeddings"),
    KEY(log_level, CONFIG_STRING, "info", CMD_ALL, 0, 0, "error, warning, info or debug"),
};
const int config_key_count = sizeof config_keys / sizeof config_keys[0];

static const char *const config_type_names[CONFIG_TYPE_COUNT] = {
    [CONFIG_STRING] = "string", [CONFIG_INT] = "integer",
    [CONFIG_FLOAT] = "number", [CONFIG_BOOL] = "boolean",
};

static const config_key *config_find(const char *name) {
    for (int i = 0; i < config_key_count; i++)
        if (strcmp(config_keys[i].name, name) == 0) return &config_keys[i];
    return NULL;
}

static void *config_field(atoll_config *c, const config_key *k) { return (char *)c + k->offset; }

static int config_parse_bool(const char *v, int *out) {
    static const char *const yes[] = {"1", "true", "yes", "on"};
    static const char *const no[] = {"0", "false", "no", "off"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(v, yes[i]) == 0) { *out = 1; return 0; }
        if (strcasecmp(v, no[i]) == 0) { *out = 0; return 0; }
    }
    return -1;
}

int config_set(atoll_config *c, const char *name, const char *value, atoll_error *e) {
    const config_key *k = config_find(name);
    if (!k) return error_set(e, "unknown configuration key '%s'", name);
    void *field = config_field(c, k);
    char *end = NULL;
    errno = 0;
    switch (k->type) {
    case CONFIG_STRING: {
        char *copy = strdup(value);
        if (!copy) return error_set(e, "out of memory setting '%s'", name);
        free(*(char **)field);
        *(char **)field = copy;
        return 0;
    }
    case CONFIG_INT: {
        long v = strtol(value, &end, 10);
        if (errno || end == value || *end)
            return error_set(e, "%s must be an integer, got '%s'", name, value);
        if (v < k->min || v > k->max)
            return error_set(e, "%s must be in [%.0f, %.0f], got %ld", name, k->min, k->max, v);
        *(long *)field = v;
        return 0;
    }
    case CONFIG_FLOAT: {
        double v = strtod(value, &end);
        if (errno || end == value || *end || !isfinite(v))
            return error_set(e, "%s must be a number, got '%s'", name, value);
        if (v < k->min || v > k->max)
            return error_set(e, "%s must be in [%g, %g], got %g", name, k->min, k->max, v);
        *(double *)field = v;
        return 0;
    }
    case CONFIG_BOOL:
        if (config_parse_bool(value, (int *)field))
            return error_set(e, "%s must be true or false, got '%s'", name, value);
        return 0;
    default:
        return error_set(e, "key '%s' has an unknown type", name);
    }
}

void config_defaults(atoll_config *c) {
    memset(c, 0, sizeof *c);
    for (int i = 0; i < config_key_count; i++)
        if (config_set(c, config_keys[i].name, config_keys[i].default_value, NULL))
            fatal("default of configuration key '%s' is invalid", config_keys[i].name);
}

void config_free(atoll_config *c) {
    for (int i = 0; i < config_key_count; i++)
        if (config_keys[i].type == CONFIG_STRING) {
            char **field = config_field(c, &config_keys[i]);
            free(*field);
            *field = NULL;
        }
}

static void config_value_text(const atoll_config *c, const config_key *k, char *out, size_t n) {
    const void *field = (const char *)c + k->offset;
    switch (k->type) {
    case CONFIG_STRING: snprintf(out, n, "%s", *(char *const *)field); break;
    case CONFIG_INT: snprintf(out, n, "%ld", *(const long *)field); break;
    case CONFIG_FLOAT: snprintf(out, n, "%.17g", *(const double *)field); break;
    case CONFIG_BOOL: snprintf(out, n, "%s", *(const int *)field ? "true" : "false"); break;
    default: snprintf(out, n, "?"); break;
    }
}

typedef struct {
    atoll_config *config;
    atoll_error *error;
    const char *path;
    int failed;
} ini_context;

// inih reports the line of the first handler failure as the parse result.
static int config_ini_handler(void *user, const char *section, const char *name, const char *value) {
    ini_context *ctx = user;
    if (ctx->failed) return 0;
    if (section[0] && strcmp(section, "atoll") != 0)
        error_set(ctx->error, "unknown section [%s] (keys go at the top or in [atoll])", section);
    else if (strcmp(name, "config") == 0)
        error_set(ctx->error, "'config' cannot be set inside a config file");
    else if (config_set(ctx->config, name, value, ctx->error) == 0)
        return 1;
    ctx->failed = 1;
    return 0;
}

int config_read_ini(atoll_config *c, const char *path, atoll_error *e) {
    FILE *f = fopen(path, "r");
    if (!f) return error_set(e, "cannot open config file %s: %s", path, strerror(errno));
    ini_context ctx = {c, e, path, 0};
    int rc = ini_parse_file(f, config_ini_handler, &ctx);
    fclose(f);
    if (ctx.failed) return error_prefix(e, "%s:%d", path, rc);
    if (rc > 0) return error_set(e, "%s:%d: not an ini line (expected key = value)", path, rc);
    if (rc < 0) return error_set(e, "cannot read config file %s", path);
    return 0;
}

// Flag name "--max-tokens" -> key "max_tokens" (into buf).
static const config_key *config_flag_key(const char *flag, char *buf, size_t n) {
    snprintf(buf, n, "%s", flag);
    for (char *p = buf; *p; p++)
        if (*p == '-') *p = '_';
    return config_find(buf);
}

int config_parse_args(atoll_config *c, unsigned command, int argc, char **argv,
                      int *help, atoll_error *e) {
    *help = 0;
    // Pass 1: --help and --config; pass 2: every other flag over the file.
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < argc; i++) {
            const char *arg = argv[i];
            if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
                *help = 1;
                return 0;
            }
            if (strncmp(arg, "--", 2) != 0)
                return error_set(e, "unexpected argument '%s' (options start with --)", arg);
            char name[128];
            const char *eq = strchr(arg, '=');
            size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
            if (len >= sizeof name) return error_set(e, "unknown option '%s'", arg);
            memcpy(name, arg + 2, len);
            name[len] = 0;
            char keybuf[128];
            const config_key *k = config_flag_key(name, keybuf, sizeof keybuf);
            const char *value = eq ? eq + 1 : NULL;
            if (!k && !eq && strncmp(name, "no-", 3) == 0) {
                k = config_flag_key(name + 3, keybuf, sizeof keybuf);
                if (k && k->type == CONFIG_BOOL) value = "false";
                else k = NULL;
            }
            if (!k || !(k->commands & command))
                return error_set(e, "unknown option '--%s' (see --help)", name);
            if (!value) {
                if (k->type == CONFIG_BOOL) value = "true";
                else if (i + 1 < argc) value = argv[++i];
                else return error_set(e, "option '--%s' needs a value", name);
            }
            int is_config = strcmp(k->name, "config") == 0;
            if (pass == 0 && is_config) {
                if (config_set(c, "config", value, e)) return -1;
                if (config_read_ini(c, value, e)) return -1;
            } else if (pass == 1 && !is_config) {
                if (config_set(c, k->name, value, e)) return error_prefix(e, "--%s", name);
            }
        }
    }
    return 0;
}

char *config_serialize(const atoll_config *c, size_t *len) {
    size_t cap = 1024, n = 0;
    char *buf = malloc(cap);
    for (int i = 0; buf && i < config_key_count; i++) {
        const config_key *k = &config_keys[i];
        char num[64];
        const char *value = num;
        if (k->type == CONFIG_STRING) value = *(char *const *)((const char *)c + k->offset);
        else config_value_text(c, k, num, sizeof num);
        size_t need = strlen(k->name) + strlen(value) + 2;
        if (n + need > cap) {
            while (n + need > cap) cap *= 2;
            char *grown = realloc(buf, cap);
            if (!grown) { free(buf); return NULL; }
            buf = grown;
        }
        memcpy(buf + n, k->name, strlen(k->name) + 1);
        n += strlen(k->name) + 1;
        memcpy(buf + n, value, strlen(value) + 1);
        n += strlen(value) + 1;
    }
    *len = n;
    return buf;
}

int config_deserialize(atoll_config *c, const char *buf, size_t len, atoll_error *e) {
    size_t i = 0;
    while (i < len) {
        const char *name = buf + i;
        size_t name_len = strnlen(name, len - i);
        if (i + name_len + 1 >= len) return error_set(e, "truncated configuration message");
        const char *value = name + name_len + 1;
        size_t value_len = strnlen(value, len - i - name_len - 1);
        if (i + name_len + 1 + value_len >= len) return error_set(e, "truncated configuration message");
        if (config_set(c, name, value, e)) return -1;
        i += name_len + value_len + 2;
    }
    return 0;
}

void config_print_help(FILE *f, unsigned command) {
    fprintf(f, "options (each also an ini key with '_' for '-'; flags override --config):\n");
    for (int i = 0; i < config_key_count; i++) {
        const config_key *k = &config_keys[i];
        if (!(k->commands & command)) continue;
        char flag[128];
        snprintf(flag, sizeof flag, "%s", k->name);
        for (char *p = flag; *p; p++)
            if (*p == '_') *p = '-';
        fprintf(f, "  --%-18s %s (%s", flag, k->help, config_type_names[k->type]);
        if (k->default_value[0]) fprintf(f, ", default %s", k->default_value);
        fprintf(f, ")\n");
    }
}

void config_log_effective(const atoll_config *c, unsigned command) {
    for (int i = 0; i < config_key_count; i++) {
        const config_key *k = &config_keys[i];
        if (!(k->commands & command)) continue;
        char value[160];
        config_value_text(c, k, value, sizeof value);
        LOG_DEBUG("config %s = %s", k->name, value);
    }
}
