// tests/bench/bench_decode.c — prompt processing and decode speed through the
// real forward pass, of a synthetic model with SmolLM2-135M's shape (30
// layers, hidden 576, 9 heads / 3 KV heads, FFN 1536, vocab 49152, tied
// embeddings; BF16 and F32 weights) or of a model file (--model PATH).
// Prints tokens/s and the fraction of the memory bandwidth measured in the
// same run: decode reads every weight once per token, so
// tokens/s x weight bytes / bandwidth is the share of the physical limit.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bandwidth.h"
#include "runtime/engine/forward.h"
#include "runtime/model/model.h"

typedef struct {
    int threads;
    int prompt;   // tokens already in the context when decoding starts
    int steps;    // decode steps per repetition
    int reps;
    int pp;       // prompt length for the prompt-processing figure
    dtype type;   // synthetic model's weight dtype
    const char *model_path;  // or NULL for the synthetic model
} bench_options;

static uint64_t rng_state = 42;
static uint16_t random_bf16(float scale) {
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    float f = ((float)(rng_state >> 40) / (float)(1 << 24) - 0.5f) * scale;
    uint32_t bits;
    memcpy(&bits, &f, 4);
    return (uint16_t)(bits >> 16);
}

static weight_matrix synthetic_matrix(backend *be, int rows, int cols, dtype type, size_t *bytes) {
    size_t n = (size_t)rows * cols;
    weight_matrix w = {be->ops->alloc(be, n * dtype_size(type)), type, rows, cols};
    uint16_t *host = malloc(n * sizeof *host);
    for (size_t i = 0; i < n; i++) host[i] = random_bf16(0.1f);
    if (type == DTYPE_BF16) {
        be->ops->copy_to_device(be, (void *)w.data, host, n * 2);
    } else {  // F32: widen the same BF16 values
        float *wide = malloc(n * sizeof *wide);
        for (size_t i = 0; i < n; i++) {
            uint32_t bits = (uint32_t)host[i] << 16;
            memcpy(&wide[i], &bits, 4);
        }
        be->ops->copy_to_device(be, (void *)w.data, wide, n * 4);
        free(wide);
    }
    free(host);
    *bytes += n * dtype_size(type);
    return w;
}

static float *ones(backend *be, int n) {
    float *host = malloc(n * sizeof *host), *dev = be->ops->alloc(be, n * sizeof *dev);
    for (int i = 0; i < n; i++) host[i] = 1.0f;
    be->ops->copy_to_device(be, dev, host, n * sizeof *host);
    free(host);
    return dev;
}

// Returns the bytes of weights read per decoded token.
static size_t synthetic_smollm2(model *m, backend *be, dtype type) {
    memset(m, 0, sizeof *m);
    model_desc *d = &m->desc;
    *d = (model_desc){.arch = ARCH_LLAMA, .vocab_size = 49152, .hidden_size = 576, .n_layers = 30,
                      .n_heads = 9, .n_kv_heads = 3, .head_dim = 64, .intermediate_size = 1536,
                      .max_position_embeddings = 8192, .rms_norm_eps = 1e-5f, .rope_theta = 100000,
                      .rope_dim = 64, .tie_word_embeddings = 1, .eos_token_id = -1};
    snprintf(d->hf_architecture, sizeof d->hf_architecture, "LlamaForCausalLM");
    m->be = be;
    size_t bytes = 0, embed_bytes = 0;
    m->embed = synthetic_matrix(be, d->vocab_size, d->hidden_size, type, &embed_bytes);
    m->lm_head = m->embed;
    m->final_norm = ones(be, d->hidden_size);
    m->layers = calloc(d->n_layers, sizeof *m->layers);
    const int q = d->n_heads * d->head_dim, kv = d->n_kv_heads * d->head_dim;
    for (int l = 0; l < d->n_layers; l++) {
        layer_weights *w = &m->layers[l];
        w->attn_norm = ones(be, d->hidden_size);
        w->ffn_norm = ones(be, d->hidden_size);
        w->wq = synthetic_matrix(be, q, d->hidden_size, type, &bytes);
        w->wk = synthetic_matrix(be, kv, d->hidden_size, type, &bytes);
        w->wv = synthetic_matrix(be, kv, d->hidden_size, type, &bytes);
        w->wo = synthetic_matrix(be, d->hidden_size, q, type, &bytes);
        w->n_gate_up = 2;
        w->gate_up[0] = synthetic_matrix(be, d->intermediate_size, d->hidden_size, type, &bytes);
        w->gate_up[1] = synthetic_matrix(be, d->intermediate_size, d->hidden_size, type, &bytes);
        w->w_down = synthetic_matrix(be, d->hidden_size, d->intermediate_size, type, &bytes);
    }
    m->rope_inv_freq = be->ops->alloc(be, d->rope_dim / 2 * sizeof(float));
    float inv[64];
    model_desc_rope_inv_freq(d, inv);
    be->ops->copy_to_device(be, m->rope_inv_freq, inv, d->rope_dim / 2 * sizeof(float));
    return bytes + embed_bytes;  // the LM head reads the whole (tied) embedding
}

static size_t matrix_bytes(const weight_matrix *w) {
    return w->data ? (size_t)w->rows * dtype_row_bytes(w->type, w->cols) : 0;
}

// Bytes of weights one decode step reads: every layer matrix and the LM head.
static size_t model_weight_bytes(const model *m) {
    size_t bytes = matrix_bytes(&m->lm_head);
    for (int l = 0; l < m->desc.n_layers; l++) {
        const layer_weights *w = &m->layers[l];
        const weight_matrix *mats[] = {&w->wq, &w->wk, &w->wv, &w->wo, &w->gate_up[0], &w->gate_up[1], &w->w_down};
        for (size_t i = 0; i < sizeof mats / sizeof mats[0]; i++) bytes += matrix_bytes(mats[i]);
    }
    return bytes;
}

// Prompt processing: one plan of n tokens from position 0 (the cache is reset).
static double prefill_rate(forward_state *f, int n, float *logits) {
    atoll_error e;
    kv_sequence seq = {0};
    if (kv_cache_reserve(f->kv, &seq, n, &e)) { fprintf(stderr, "%s\n", e.msg); exit(1); }
    step_plan p;
    step_plan_init(&p, n, 1, seq.n_blocks, &e);
    for (int t = 0; t < n; t++) {
        p.token_ids[t] = (t * 7919 + 13) % f->m->desc.vocab_size;
        p.positions[t] = t;
    }
    memcpy(p.block_tables, seq.blocks, seq.n_blocks * sizeof(int32_t));
    double t0 = bench_now_s();
    if (forward_step(f, &p, logits, &e)) { fprintf(stderr, "%s\n", e.msg); exit(1); }
    double rate = n / (bench_now_s() - t0);
    step_plan_free(&p);
    kv_cache_release(f->kv, &seq);
    return rate;
}

static void run_steps(forward_state *f, kv_sequence *seq, int start, int n, float *logits) {
    step_plan p;
    atoll_error e;
    for (int pos = start; pos < start + n; pos++) {
        if (kv_cache_reserve(f->kv, seq, pos + 1, &e)) { fprintf(stderr, "%s\n", e.msg); exit(1); }
        step_plan_init(&p, 1, 1, seq->n_blocks, &e);
        p.token_ids[0] = (pos * 7919) % f->m->desc.vocab_size;
        p.positions[0] = pos;
        memcpy(p.block_tables, seq->blocks, seq->n_blocks * sizeof(int32_t));
        if (forward_step(f, &p, logits, &e)) { fprintf(stderr, "%s\n", e.msg); exit(1); }
        step_plan_free(&p);
    }
}

static void bench(const bench_options *o, double bandwidth_gbs) {
    backend *be = backend_cpu_create(o->threads);
    model m;
    atoll_error e;
    size_t weight_bytes;
    if (o->model_path) {
        if (model_load(&m, o->model_path, be, &e)) { fprintf(stderr, "%s\n", e.msg); exit(1); }
        weight_bytes = model_weight_bytes(&m);
    } else {
        weight_bytes = synthetic_smollm2(&m, be, o->type);
    }
    kv_cache kv;
    int max_len = o->prompt + o->steps * o->reps + o->pp + 16;
    if (kv_cache_create(&kv, be, &m.desc, (max_len + 15) / 16, 16, &e)) { fprintf(stderr, "%s\n", e.msg); exit(1); }
    forward_state f;
    forward_init(&f, &m, &kv);
    float *logits = malloc((size_t)m.desc.vocab_size * sizeof *logits);
    double pp_rates[64];
    for (int r = 0; r < 3; r++) pp_rates[r] = prefill_rate(&f, o->pp, logits);
    kv_sequence seq = {0};
    run_steps(&f, &seq, 0, o->prompt, logits);  // context (and warm-up)
    double rates[64];
    int pos = o->prompt;
    for (int r = 0; r < o->reps; r++, pos += o->steps) {
        double t0 = bench_now_s();
        run_steps(&f, &seq, pos, o->steps, logits);
        rates[r] = o->steps / (bench_now_s() - t0);
    }
    double tps = median_of(rates, o->reps), pp = median_of(pp_rates, 3);
    double gbs = tps * weight_bytes / 1e9;
    printf("| %-7s | %7d | %8.1f | %8.1f | %8.2f | %11.1f | %6.1f | %5.0f%% |\n",
           o->model_path ? "model" : dtype_name(o->type), o->threads, pp, tps, 1e3 / tps,
           (double)weight_bytes / (1 << 20), gbs, 100 * gbs / bandwidth_gbs);
    free(logits);
    kv_cache_release(&kv, &seq);
    forward_free(&f);
    kv_cache_destroy(&kv);
    if (o->model_path) {
        model_free(&m);
    } else {
        free(m.layers);  // the synthetic weights go with the backend's memory
    }
    backend_destroy(be);
}

int main(int argc, char **argv) {
    bench_options o = {.prompt = 64, .steps = 16, .reps = 7, .pp = 512, .type = DTYPE_BF16};
    int max_threads = 2;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--threads")) max_threads = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps")) o.reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--steps")) o.steps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--model")) o.model_path = argv[i + 1];
        else {
            fprintf(stderr, "usage: bench_decode [--model PATH] [--threads N] [--reps R] [--steps S]\n");
            return 2;
        }
    }
    if (o.reps < 1 || o.reps > 64) o.reps = 7;
    printf("%s: prompt processing of %d tokens (median of 3); decode at context %d (median of %d x %d steps)\n",
           o.model_path ? o.model_path : "synthetic SmolLM2-135M shape (30 layers, hidden 576, FFN 1536, vocab 49152, tied)",
           o.pp, o.prompt, o.reps, o.steps);
    printf("| weights | threads | pp tok/s | tg tok/s | ms/token | weights MiB | GB/s | of bandwidth |\n");
    printf("|---------|---------|----------|----------|----------|-------------|------|--------------|\n");
    const dtype types[] = {DTYPE_BF16, DTYPE_F32};
    const int n_types = o.model_path ? 1 : 2;
    for (int t = 1; t <= max_threads; t++) {
        double bw = bandwidth_measure_gbs(t);
        printf("(measured read bandwidth with %d thread%s: %.1f GB/s)\n", t, t > 1 ? "s" : "", bw);
        for (int k = 0; k < n_types; k++) {
            o.threads = t;
            o.type = types[k];
            bench(&o, bw);
        }
    }
    return 0;
}
