// tests/model/test_fixtures.c — atoll's forward pass against goldens that
// Hugging Face transformers recorded (tests/reference/make_fixtures.py).
//
// For one fixture directory:
//  1. every prompt alone, logits at every position vs transformers;
//  2. all prompts in one batched plan: the same logits as each alone;
//  3. greedy decoding of all prompts batched: the 32 golden tokens, and the
//     logits of each chosen token vs transformers.
// F32 weights: max |delta| <= 1e-4 * max |logit| (the bound).
// BF16 weights: compared with transformers running the same BF16 weights in
// F32 (prompt{i}_logits_f32compute.npy) under the same bound, because atoll
// keeps activations in F32; the BF16-compute goldens carry ~1e-2 relative
// rounding from BF16 activations and are checked for identical greedy tokens.
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/engine/forward.h"
#include "runtime/engine/generation.h"
#include "runtime/model/model.h"
#include "runtime/util/npy.h"

enum { N_PROMPTS = 3, N_GREEDY = 32 };

static int failures = 0;
static const char *fixture_dir;

static void fail(const char *fmt, const char *what, double a, double b) {
    fprintf(stderr, "FAIL %s: ", fixture_dir);
    fprintf(stderr, fmt, what, a, b);
    fprintf(stderr, "\n");
    failures++;
}

static int load_npy(const char *name, npy_array *a) {
    char path[4096];
    snprintf(path, sizeof path, "%s/golden/%s", fixture_dir, name);
    atoll_error e;
    if (npy_read(path, a, &e)) {
        fprintf(stderr, "FAIL %s\n", e.msg);
        failures++;
        return -1;
    }
    return 0;
}

static double max_abs(const float *x, size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; i++) m = fmax(m, fabs(x[i]));
    return m;
}

static void compare_logits(const char *what, const float *got, const float *want, size_t n) {
    double worst = 0, scale = max_abs(want, n);
    for (size_t i = 0; i < n; i++) worst = fmax(worst, fabs((double)got[i] - want[i]));
    if (!(worst <= 1e-4 * scale)) fail("%s: max |delta| %.3g exceeds 1e-4 * max|logit| = %.3g", what, worst, 1e-4 * scale);
    else printf("ok   %s: max |delta| %.3g (bound %.3g)\n", what, worst, 1e-4 * scale);
}

// Runs the given prompts as one plan with logits for every token.
static float *run_all_logits(model *m, int n, int32_t **ids, const int *lens) {
    int total = 0, max_blocks = 0;
    const int block_size = 4;  // small blocks: every prompt spans several
    for (int i = 0; i < n; i++) {
        total += lens[i];
        if ((lens[i] + block_size - 1) / block_size > max_blocks) max_blocks = (lens[i] + block_size - 1) / block_size;
    }
    atoll_error e;
    kv_cache kv;
    if (kv_cache_create(&kv, m->be, &m->desc, n * max_blocks, block_size, &e)) {
        fprintf(stderr, "FAIL %s\n", e.msg);
        exit(1);
    }
    step_plan p;
    step_plan_init(&p, total, n, max_blocks, &e);
    p.all_logits = 1;
    kv_sequence seqs[N_PROMPTS] = {{0}};
    // Hand blocks out in reverse so block tables are not the identity.
    for (int i = n - 1; i >= 0; i--) kv_cache_reserve(&kv, &seqs[i], lens[i], &e);
    for (int i = 0, t = 0; i < n; i++) {
        p.seq_ids[i] = i;
        for (int b = 0; b < max_blocks; b++)
            p.block_tables[i * max_blocks + b] = b < seqs[i].n_blocks ? seqs[i].blocks[b] : -1;
        for (int k = 0; k < lens[i]; k++, t++) {
            p.token_ids[t] = ids[i][k];
            p.positions[t] = k;
            p.token_seq[t] = i;
        }
    }
    if (step_plan_validate(&p, m->desc.vocab_size, block_size, kv.n_blocks, &e)) {
        fprintf(stderr, "FAIL plan: %s\n", e.msg);
        exit(1);
    }
    float *logits = malloc((size_t)total * m->desc.vocab_size * sizeof *logits);
    forward_state f;
    forward_init(&f, m, &kv);
    if (forward_step(&f, &p, logits, &e)) {
        fprintf(stderr, "FAIL forward: %s\n", e.msg);
        exit(1);
    }
    forward_free(&f);
    for (int i = 0; i < n; i++) kv_cache_release(&kv, &seqs[i]);
    kv_cache_destroy(&kv);
    step_plan_free(&p);
    return logits;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: test_fixtures FIXTURE_DIR N_THREADS\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    fixture_dir = argv[1];
    backend *be = backend_cpu_create(atoi(argv[2]));
    model m;
    atoll_error e;
    if (model_load(&m, fixture_dir, be, &e)) {
        fprintf(stderr, "FAIL %s\n", e.msg);
        return 1;
    }
    const int vocab = m.desc.vocab_size;
    const int bf16 = m.embed.type == DTYPE_BF16;
    int32_t *ids[N_PROMPTS];
    int lens[N_PROMPTS];
    npy_array want_logits[N_PROMPTS], greedy[N_PROMPTS], greedy_logits[N_PROMPTS];
    for (int i = 0; i < N_PROMPTS; i++) {
        char name[96];
        npy_array a;
        snprintf(name, sizeof name, "prompt%d_ids.npy", i);
        if (load_npy(name, &a)) return 1;
        lens[i] = (int)a.count;
        ids[i] = malloc(a.count * sizeof *ids[i]);
        for (size_t k = 0; k < a.count; k++) ids[i][k] = (int32_t)a.i64[k];
        npy_free(&a);
        snprintf(name, sizeof name, bf16 ? "prompt%d_logits_f32compute.npy" : "prompt%d_logits.npy", i);
        if (load_npy(name, &want_logits[i])) return 1;
        snprintf(name, sizeof name, "prompt%d_greedy.npy", i);
        if (load_npy(name, &greedy[i])) return 1;
        snprintf(name, sizeof name, "prompt%d_greedy_logits.npy", i);
        if (load_npy(name, &greedy_logits[i])) return 1;
    }

    // 1. Each prompt alone, every position.
    float *alone[N_PROMPTS];
    for (int i = 0; i < N_PROMPTS; i++) {
        char what[64];
        snprintf(what, sizeof what, "prompt %d logits at all %d positions", i, lens[i]);
        alone[i] = run_all_logits(&m, 1, &ids[i], &lens[i]);
        compare_logits(what, alone[i], want_logits[i].f32, (size_t)lens[i] * vocab);
    }
    // 2. All prompts in one plan: same as alone (bit-exact is not promised
    // across batch shapes, so the same bound as against transformers).
    float *batched = run_all_logits(&m, N_PROMPTS, ids, lens);
    for (int i = 0, off = 0; i < N_PROMPTS; off += lens[i], i++) {
        char what[64];
        snprintf(what, sizeof what, "prompt %d batched with the others vs alone", i);
        compare_logits(what, batched + (size_t)off * vocab, alone[i], (size_t)lens[i] * vocab);
    }
    // 3. Greedy decoding of all prompts together.
    generation_request r = {
        .n_seqs = N_PROMPTS, .prompts = (const int32_t *const *)ids, .prompt_lens = lens,
        .max_new_tokens = N_GREEDY, .ignore_eos = 1, .eos_id = -1, .block_size = 16, .keep_logits = 1,
    };
    if (generation_run(&m, &r, &e)) {
        fprintf(stderr, "FAIL generation: %s\n", e.msg);
        return 1;
    }
    for (int i = 0; i < N_PROMPTS; i++) {
        int first_diff = -1;
        for (int t = 0; t < N_GREEDY && first_diff < 0; t++)
            if (r.tokens[i][t] != greedy[i].i64[t]) first_diff = t;
        if (first_diff >= 0)
            fail("%s: greedy token %g differs from transformers (got %g)", "batched decode", first_diff,
                 r.tokens[i][first_diff]);
        else
            printf("ok   prompt %d: %d greedy tokens identical to transformers\n", i, N_GREEDY);
        if (!bf16) {
            char what[64];
            snprintf(what, sizeof what, "prompt %d logits of the %d greedy steps", i, N_GREEDY);
            compare_logits(what, r.logits[i], greedy_logits[i].f32, (size_t)N_GREEDY * vocab);
        }
    }
    generation_free(&r);
    for (int i = 0; i < N_PROMPTS; i++) {
        free(alone[i]);
        free(ids[i]);
        npy_free(&want_logits[i]);
        npy_free(&greedy[i]);
        npy_free(&greedy_logits[i]);
    }
    free(batched);
    model_free(&m);
    backend_destroy(be);
    MPI_Finalize();
    printf("%s: %d failure(s)\n", fixture_dir, failures);
    return failures ? 1 : 0;
}
