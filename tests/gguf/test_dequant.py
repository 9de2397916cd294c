#!/usr/bin/env python3
"""tests/gguf/test_dequant.py — atoll's dequantization (kernels/quant.c) must
equal the gguf Python package's gguf.quants.dequantize bit for bit, for every
block type atoll supports.

    python3 test_dequant.py PATH_TO_GGUF_TOOL

Blocks are random bytes, except that every scale field is set to a random
FINITE value: all f16 exponents but the inf/nan one (so +-0, subnormals and
the largest halves occur), and for Q8_K's f32 scale all finite exponents
within a range that keeps d * q finite. (NaN scales are left out on purpose:
the payload a NaN keeps through f16 -> f32 conversion and multiplication is
not something the formats define.) Results are compared as uint32 bit
patterns, so -0.0 vs +0.0 or a 1-ulp difference fails.

gguf has no Q8_K dequantization (Q8_K is ggml's intermediate format for
K-quant dot products); its reference here is ggml's dequantize_row_q8_K,
y = d * q in float32, written with numpy."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q

# type name in atoll -> (gguf type, byte offsets of f16 scale fields)
TYPES = {
    "q4_0": (Q.Q4_0, [0]),
    "q4_1": (Q.Q4_1, [0, 2]),
    "q5_0": (Q.Q5_0, [0]),
    "q5_1": (Q.Q5_1, [0, 2]),
    "q8_0": (Q.Q8_0, [0]),
    "q4_k": (Q.Q4_K, [0, 2]),
    "q5_k": (Q.Q5_K, [0, 2]),
    "q6_k": (Q.Q6_K, [208]),
    "q8_k": (Q.Q8_K, []),
}
N_BLOCKS = 3000


def random_finite_f16(rng, n):
    sign = rng.integers(0, 2, n, dtype=np.uint16) << 15
    exp = rng.integers(0, 31, n, dtype=np.uint16) << 10  # 0..30: never inf/nan
    man = rng.integers(0, 1024, n, dtype=np.uint16)
    h = sign | exp | man
    h[:4] = [0x0000, 0x8000, 0x0001, 0x7bff]  # +0, -0, smallest subnormal, largest finite
    return h


def make_blocks(qtype, offsets, rng):
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    raw = rng.integers(0, 256, size=(N_BLOCKS, size), dtype=np.uint8)
    raw[0, :] = 0
    raw[1, :] = 0xFF
    for off in offsets:
        raw[:, off:off + 2] = random_finite_f16(rng, N_BLOCKS).view(np.uint8).reshape(N_BLOCKS, 2)
    if qtype == Q.Q8_K:  # f32 d: |d| < 2^100 so that d * 128 stays finite
        sign = rng.integers(0, 2, N_BLOCKS, dtype=np.uint32) << 31
        exp = rng.integers(0, 227, N_BLOCKS, dtype=np.uint32) << 23
        man = rng.integers(0, 1 << 23, N_BLOCKS, dtype=np.uint32)
        raw[:, 0:4] = (sign | exp | man).view(np.uint8).reshape(N_BLOCKS, 4)
    return raw


def reference(qtype, raw):
    if qtype == Q.Q8_K:  # ggml dequantize_row_q8_K: y[j] = x.d * x.qs[j]
        d = raw[:, 0:4].copy().view(np.float32)
        q = raw[:, 4:4 + 256].copy().view(np.int8).astype(np.float32)
        return (d * q).astype(np.float32)
    return gguf.quants.dequantize(raw, qtype).astype(np.float32)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    tool = sys.argv[1]
    rng = np.random.default_rng(20240601)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, (qtype, offsets) in TYPES.items():
            raw = make_blocks(qtype, offsets, rng)
            want = reference(qtype, raw).reshape(-1)
            src, dst = os.path.join(tmp, name + ".bin"), os.path.join(tmp, name + ".f32")
            raw.tofile(src)
            p = subprocess.run([tool, "dequant", name, src, dst], capture_output=True, text=True)
            if p.returncode != 0:
                print(f"FAIL {name}: gguf_tool exited {p.returncode}: {p.stderr.strip()}")
                failures += 1
                continue
            got = np.fromfile(dst, dtype=np.float32)
            if got.shape != want.shape:
                print(f"FAIL {name}: {got.size} values, expected {want.size}")
                failures += 1
                continue
            if not np.all(np.isfinite(want)):
                print(f"FAIL {name}: the reference has non-finite values (test bug)")
                failures += 1
                continue
            diff = np.nonzero(got.view(np.uint32) != want.view(np.uint32))[0]
            if diff.size:
                i = int(diff[0])
                block = i // gguf.GGML_QUANT_SIZES[qtype][0]
                print(f"FAIL {name}: {diff.size} of {want.size} values differ; first at element {i} "
                      f"(block {block}): got {got[i]!r} ({got.view(np.uint32)[i]:#010x}), "
                      f"gguf {want[i]!r} ({want.view(np.uint32)[i]:#010x})")
                failures += 1
            else:
                print(f"ok   {name}: {N_BLOCKS} blocks, {want.size} values bit-identical")
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
