// tests/fuzz/fuzz_safetensors.c — libFuzzer harness of the safetensors parser
// (runtime/model/safetensors.c): each input is written to an anonymous
// memory file (memfd) that safetensors_open reads through /proc/self/fd, then
// every tensor is looked up by name and the first and last byte of its data
// are touched, so that a wrong bound is an AddressSanitizer report.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/model/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int fd = memfd_create("fuzz.safetensors", 0);
    if (fd < 0) abort();
    for (size_t done = 0; done < size;) {
        const ssize_t w = write(fd, data + done, size - done);
        if (w <= 0) abort();
        done += (size_t)w;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    safetensors_file f;
    atoll_error e;
    if (safetensors_open(&f, path, &e) == 0) {
        volatile unsigned sink = 0;
        for (int i = 0; i < f.n_tensors; i++) {
            const safetensors_tensor *t = &f.tensors[i];
            sink += safetensors_find(&f, t->name) != NULL;
            if (t->bytes) sink += ((const uint8_t *)t->data)[0] + ((const uint8_t *)t->data)[t->bytes - 1];
        }
        (void)sink;
        safetensors_close(&f);
    }
    close(fd);
    return 0;
}
