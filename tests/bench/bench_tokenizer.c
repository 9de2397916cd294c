// tests/bench/bench_tokenizer.c — encode, decode and stream-decode (one id
// at a time) throughput of the tokenizer on about 1 MB of English text: the
// median of several runs.
//   bench_tokenizer [--tokenizer-json FILE] [--text FILE] [--mb N] [--reps R]
// Default tokenizer: the byte-level BPE fixture; default text: generated
// English-like prose (words, numbers, punctuation, line breaks) from a fixed
// seed. A --text file is repeated up to the size.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/tokenizer/tokenizer.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static char *make_text(size_t size) {
    static const char *words[] = {
        "the", "of", "and", "to", "in", "is", "was", "for", "that", "with", "as", "on", "by", "it", "at", "from",
        "this", "be", "are", "or", "an", "which", "not", "have", "but", "they", "were", "had", "her", "one", "all",
        "their", "there", "been", "has", "more", "when", "will", "would", "who", "into", "time", "only", "first",
        "people", "over", "such", "most", "also", "than", "through", "where", "much", "before", "years", "world",
        "between", "city", "under", "language", "model", "inference", "runtime", "distributed", "memory", "kernel",
        "bandwidth", "throughput", "latency", "government", "question", "family", "children", "American", "London",
        "however", "although", "understanding", "development", "information", "significant", "particularly",
        "Mr.", "Dr.", "It's", "don't", "we're", "they've", "I'll", "(see", "above)", "e.g.", "i.e.,", "—", "“quoted”"};
    const size_t nw = sizeof words / sizeof words[0];
    char *t = malloc(size + 64);
    size_t n = 0;
    unsigned long long s = 88172645463325252ull;
    int in_sentence = 0;
    while (n < size) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        unsigned r = (unsigned)(s % 1000);
        char w[64];
        if (r < 30)
            snprintf(w, sizeof w, "%llu", (s >> 20) % 100000);
        else {
            // Zipf-like: low indexes are much more frequent.
            size_t i = (size_t)((s >> 12) % nw);
            i = i * i / nw;
            snprintf(w, sizeof w, "%s", words[i]);
            if (!in_sentence) w[0] = (char)(w[0] >= 'a' && w[0] <= 'z' ? w[0] - 32 : w[0]);
        }
        size_t len = strlen(w);
        if (n + len + 3 > size) break;
        if (n && t[n - 1] != '\n') t[n++] = ' ';
        memcpy(t + n, w, len);
        n += len;
        in_sentence = 1;
        if (r % 17 == 0) t[n++] = ',';
        if (r % 13 == 0) {
            t[n++] = '.';
            in_sentence = 0;
            if (r % 5 == 0) t[n++] = '\n';
        }
    }
    t[n] = 0;
    return t;
}

int main(int argc, char **argv) {
    const char *tj = ATOLL_SOURCE_DIR "/tests/reference/tokenizers/bytelevel_bpe/tokenizer.json", *tf = NULL;
    double mb = 1.0;
    int reps = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--tokenizer-json")) tj = argv[i + 1];
        else if (!strcmp(argv[i], "--text")) tf = argv[i + 1];
        else if (!strcmp(argv[i], "--mb")) mb = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "usage: bench_tokenizer [--tokenizer-json FILE] [--text FILE] [--mb N] [--reps R]\n");
            return 2;
        }
    }
    size_t size = (size_t)(mb * 1024 * 1024);
    char *text;
    if (tf) {
        FILE *f = fopen(tf, "rb");
        if (!f) {
            perror(tf);
            return 1;
        }
        fseek(f, 0, SEEK_END);
        long fl = ftell(f);
        fseek(f, 0, SEEK_SET);
        char *src = malloc(fl + 1);
        if (fread(src, 1, fl, f) != (size_t)fl) return 1;
        fclose(f);
        text = malloc(size + 1);
        size_t n = 0;
        while (n < size && fl > 0) {
            size_t k = (size_t)fl < size - n ? (size_t)fl : size - n;
            memcpy(text + n, src, k);
            n += k;
        }
        while (n > 0 && ((unsigned char)text[n - 1] & 0xC0) == 0x80) n--;  // whole characters
        if (n > 0 && (unsigned char)text[n - 1] >= 0xC0) n--;
        text[n] = 0;
        size = n;
        free(src);
    } else {
        text = make_text(size);
        size = strlen(text);
    }
    atoll_error e;
    tokenizer *t;
    double t0 = now();
    if (tokenizer_load_hf(&t, tj, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    printf("tokenizer %s: loaded in %.1f ms, vocabulary %d\n", tj, (now() - t0) * 1e3, tokenizer_vocab_size(t));
    double *enc = malloc(reps * sizeof *enc), *dec = malloc(reps * sizeof *dec), *str = malloc(reps * sizeof *str);
    size_t n_ids = 0;
    for (int r = 0; r < reps; r++) {
        int32_t *ids;
        t0 = now();
        if (tokenizer_encode(t, text, size, 0, &ids, &n_ids, &e)) {
            fprintf(stderr, "%s\n", e.msg);
            return 1;
        }
        enc[r] = now() - t0;
        char *out;
        size_t len;
        t0 = now();
        if (tokenizer_decode(t, ids, n_ids, 0, &out, &len, &e)) {
            fprintf(stderr, "%s\n", e.msg);
            return 1;
        }
        dec[r] = now() - t0;
        if (len != size || memcmp(out, text, size) != 0) fprintf(stderr, "warning: decode(encode(text)) != text\n");
        free(out);
        t0 = now();
        tokenizer_stream *st = tokenizer_stream_new(t, 0);
        size_t total = 0;
        for (size_t i = 0; i <= n_ids; i++) {
            char *piece;
            long r = i < n_ids ? tokenizer_stream_push(st, ids[i], &piece, &e) : tokenizer_stream_flush(st, &piece, &e);
            if (r < 0) {
                fprintf(stderr, "%s\n", e.msg);
                return 1;
            }
            total += (size_t)r;
            free(piece);
        }
        tokenizer_stream_free(st);
        str[r] = now() - t0;
        if (total != size) fprintf(stderr, "warning: stream decode gave %zu bytes, not %zu\n", total, size);
        free(ids);
    }
    qsort(enc, reps, sizeof *enc, cmp);
    qsort(dec, reps, sizeof *dec, cmp);
    qsort(str, reps, sizeof *str, cmp);
    double me = enc[reps / 2], md = dec[reps / 2], ms = str[reps / 2];
    printf("text: %.2f MB (%s), %zu tokens (%.2f bytes/token)\n", size / 1048576.0, tf ? tf : "generated English",
           n_ids, (double)size / n_ids);
    printf("encode: %.1f ms  %.1f MB/s  (median of %d)\n", me * 1e3, size / 1048576.0 / me, reps);
    printf("decode: %.1f ms  %.1f MB/s\n", md * 1e3, size / 1048576.0 / md);
    printf("stream decode (one id at a time): %.1f ms  %.2f us/token\n", ms * 1e3, ms * 1e6 / n_ids);
    free(enc);
    free(dec);
    free(str);
    free(text);
    tokenizer_free(t);
    return 0;
}
