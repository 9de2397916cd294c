// runtime/model/hf_config.c — config.json → model_desc.
//
// Accepts both spellings of the rotary settings: `rope_theta` +
// `rope_scaling` (most published models) and the `rope_parameters` object
// that newer transformers releases write.
#include "runtime/model/hf_config.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

#include "runtime/model/arch.h"

typedef struct {
    json_t *root;
    const char *path;
    atoll_error *e;
} config_reader;

static int read_int(config_reader *r, const char *key, int required, int def, int *out) {
    json_t *v = json_object_get(r->root, key);
    if (!v || json_is_null(v)) {
        if (required) return error_set(r->e, "%s: required key '%s' is missing", r->path, key);
        *out = def;
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) <= 0 || json_integer_value(v) > (1 << 30))
        return error_set(r->e, "%s: '%s' must be a positive integer", r->path, key);
    *out = (int)json_integer_value(v);
    return 0;
}

static int read_number(json_t *obj, config_reader *r, const char *key, double def, double *out) {
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) {
        *out = def;
        return 0;
    }
    if (!json_is_number(v) || !(json_number_value(v) > 0))
        return error_set(r->e, "%s: '%s' must be a positive number", r->path, key);
    *out = json_number_value(v);
    return 0;
}

static int read_bool(config_reader *r, const char *key, int def, int *out) {
    json_t *v = json_object_get(r->root, key);
    if (!v || json_is_null(v)) {
        *out = def;
        return 0;
    }
    if (!json_is_boolean(v)) return error_set(r->e, "%s: '%s' must be true or false", r->path, key);
    *out = json_is_true(v);
    return 0;
}

// bos/eos ids may be an integer, a list (first wins) or absent.
static int read_token_id(config_reader *r, const char *key) {
    json_t *v = json_object_get(r->root, key);
    if (json_is_array(v)) v = json_array_get(v, 0);
    return json_is_integer(v) ? (int)json_integer_value(v) : -1;
}

static int read_rope_scaling(config_reader *r, json_t *s, rope_scaling *out) {
    memset(out, 0, sizeof *out);
    if (!s || json_is_null(s)) return 0;
    if (!json_is_object(s)) return error_set(r->e, "%s: rope_scaling must be an object", r->path);
    json_t *t = json_object_get(s, "rope_type");
    if (!t) t = json_object_get(s, "type");
    const char *type = json_is_string(t) ? json_string_value(t) : "default";
    if (strcmp(type, "default") == 0) return 0;
    if (read_number(s, r, "factor", 0, &out->factor)) return -1;
    if (out->factor <= 0)
        return error_set(r->e, "%s: rope_scaling of type %s needs a positive 'factor'", r->path, type);
    if (strcmp(type, "linear") == 0) {
        out->type = ROPE_SCALING_LINEAR;
        return 0;
    }
    if (strcmp(type, "llama3") == 0) {
        out->type = ROPE_SCALING_LLAMA3;
        if (read_number(s, r, "low_freq_factor", 0, &out->low_freq_factor) ||
            read_number(s, r, "high_freq_factor", 0, &out->high_freq_factor) ||
            read_number(s, r, "original_max_position_embeddings", 0,
                        &out->original_max_position_embeddings))
            return -1;
        if (out->low_freq_factor <= 0 || out->high_freq_factor <= out->low_freq_factor ||
            out->original_max_position_embeddings <= 0)
            return error_set(r->e, "%s: llama3 rope_scaling needs low_freq_factor < high_freq_factor "
                             "and original_max_position_embeddings", r->path);
        return 0;
    }
    return error_set(r->e, "%s: rope_scaling type '%s' is not supported (supported: default, linear, llama3)",
                     r->path, type);
}

static int hf_config_read(model_desc *d, config_reader *r) {
    json_t *archs = json_object_get(r->root, "architectures");
    json_t *first = json_is_array(archs) ? json_array_get(archs, 0) : NULL;
    if (!json_is_string(first))
        return error_set(r->e, "%s: 'architectures' must be a list naming the model class (supported: %s)",
                         r->path, arch_supported_list());
    const arch_info *info = arch_find(json_string_value(first));
    if (!info)
        return error_set(r->e, "%s: architecture '%s' is not supported (supported: %s)", r->path,
                         json_string_value(first), arch_supported_list());
    d->arch = info->arch;
    snprintf(d->hf_architecture, sizeof d->hf_architecture, "%s", info->hf_name);
    d->qk_norm = info->qk_norm;
    d->post_norms = info->post_norms;
    d->fused_gate_up = info->fused_gate_up;
    d->rope_interleaved = info->rope_interleaved;

    if (read_int(r, "vocab_size", 1, 0, &d->vocab_size) ||
        read_int(r, "hidden_size", 1, 0, &d->hidden_size) ||
        read_int(r, "num_hidden_layers", 1, 0, &d->n_layers) ||
        read_int(r, "num_attention_heads", 1, 0, &d->n_heads) ||
        read_int(r, "num_key_value_heads", 0, d->n_heads, &d->n_kv_heads) ||
        read_int(r, "head_dim", 0, d->hidden_size / d->n_heads, &d->head_dim) ||
        read_int(r, "intermediate_size", 1, 0, &d->intermediate_size) ||
        read_int(r, "max_position_embeddings", 0, 2048, &d->max_position_embeddings))
        return -1;
    double eps = 0;
    if (read_number(r->root, r, "rms_norm_eps", 1e-6, &eps)) return -1;
    d->rms_norm_eps = (float)eps;
    int attention_bias = 0;
    if (read_bool(r, "tie_word_embeddings", 0, &d->tie_word_embeddings) ||
        read_bool(r, "attention_bias", info->attention_bias_default, &attention_bias) ||
        read_bool(r, "mlp_bias", 0, &d->mlp_bias))
        return -1;
    d->qkv_bias = info->qkv_bias || attention_bias;
    d->o_bias = info->arch == ARCH_LLAMA && attention_bias;
    d->bos_token_id = read_token_id(r, "bos_token_id");
    d->eos_token_id = read_token_id(r, "eos_token_id");

    // Rotary settings: top-level keys, or the rope_parameters object.
    json_t *params = json_object_get(r->root, "rope_parameters");
    json_t *scaling = json_object_get(r->root, "rope_scaling");
    json_t *rope_src = json_is_object(params) ? params : r->root;
    if (read_number(rope_src, r, "rope_theta", 10000.0, &d->rope_theta)) return -1;
    if (read_rope_scaling(r, json_is_object(params) ? params : scaling, &d->scaling)) return -1;
    double partial = info->partial_rotary_default;
    json_t *partial_src = json_object_get(rope_src, "partial_rotary_factor") ? rope_src : r->root;
    if (read_number(partial_src, r, "partial_rotary_factor", info->partial_rotary_default, &partial))
        return -1;
    d->rope_dim = (int)(d->head_dim * partial);

    if (d->n_heads % d->n_kv_heads)
        return error_set(r->e, "%s: num_attention_heads (%d) is not a multiple of num_key_value_heads (%d)",
                         r->path, d->n_heads, d->n_kv_heads);
    if (d->head_dim % 2 || d->rope_dim % 2 || d->rope_dim <= 0 || d->rope_dim > d->head_dim)
        return error_set(r->e, "%s: head_dim %d with partial_rotary_factor %g gives %d rotary dims "
                         "(must be even and at most head_dim)", r->path, d->head_dim, partial, d->rope_dim);
    return 0;
}

int hf_config_load(model_desc *d, const char *config_path, atoll_error *e) {
    memset(d, 0, sizeof *d);
    json_error_t jerr;
    json_t *root = json_load_file(config_path, 0, &jerr);
    if (!root) {
        if (jerr.line < 0) return error_set(e, "%s: cannot read: %s", config_path, jerr.text);
        return error_set(e, "%s: not valid JSON (line %d, column %d: %s)", config_path, jerr.line,
                         jerr.column, jerr.text);
    }
    if (!json_is_object(root)) {
        json_decref(root);
        return error_set(e, "%s: must be a JSON object", config_path);
    }
    config_reader r = {root, config_path, e};
    int rc = hf_config_read(d, &r);
    json_decref(root);
    return rc;
}
