// runtime/engine/sampler.c — greedy and temperature sampling (see sampler.h).
#include "runtime/engine/sampler.h"

#include <math.h>

void sampler_init(sampler *s, double temperature, uint64_t seed) {
    s->temperature = temperature;
    s->state = seed;
}

// splitmix64: small, fast and well distributed.
static uint64_t sampler_random(sampler *s) {
    uint64_t z = (s->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int sampler_argmax(const float *logits, int n) {
    int best = 0;
    for (int i = 1; i < n; i++)
        if (logits[i] > logits[best]) best = i;
    return best;
}

int sampler_next(sampler *s, const float *logits, int vocab_size) {
    int best = sampler_argmax(logits, vocab_size);
    if (s->temperature <= 0) return best;
    const double inv_t = 1.0 / s->temperature, top = logits[best];
    double total = 0;
    for (int i = 0; i < vocab_size; i++) total += exp((logits[i] - top) * inv_t);
    double target = (double)(sampler_random(s) >> 11) / 9007199254740992.0 * total;
    double acc = 0;
    for (int i = 0; i < vocab_size; i++) {
        acc += exp((logits[i] - top) * inv_t);
        if (acc > target) return i;
    }
    return best;
}
