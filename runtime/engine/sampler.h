// runtime/engine/sampler.h — picks the next token from a row of logits:
// greedy (argmax, first on ties) at temperature 0, otherwise a draw from
// softmax(logits / temperature) with a seeded, reproducible generator.
#ifndef ATOLL_ENGINE_SAMPLER_H
#define ATOLL_ENGINE_SAMPLER_H

#include <stdint.h>

typedef struct {
    double temperature;
    uint64_t state;
} sampler;

void sampler_init(sampler *s, double temperature, uint64_t seed);
int sampler_next(sampler *s, const float *logits, int vocab_size);

#endif
