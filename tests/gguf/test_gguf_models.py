#!/usr/bin/env python3
"""tests/gguf/test_gguf_models.py — a GGUF file and the same weights as a
Hugging Face directory must give atoll the same logits.

    python3 test_gguf_models.py PATH_TO_ATOLL

For each variant (tiny Llama/Qwen2 models with 2 layers and GQA; weights in
F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0/Q5_1, K-quants; tied and untied
embeddings; Qwen2 biases; linear rope scaling) tinymodel.py writes the GGUF
file with gguf's GGUFWriter and an F32 safetensors directory holding exactly
the values the GGUF tensors decode to (gguf.quants.dequantize: the oracle),
with the Q/K rows that llama.cpp's converter permutes permuted back. atoll
generates greedily from both (--logits-out) and the logits are compared,
every step, as max|gguf - hf| <= tol * max|hf|:

- tol = 1e-4 whenever atoll keeps activations in F32: the scalar kernels
  (ATOLL_CPU_ISA=scalar) for every type, and the AVX2 kernels for F32, F16,
  BF16, Q5_*, and K-quants (exact dequantization to F32, then F32 dot
  products: the two runs differ only in F32 summation order, ~1e-6).
- tol = 1e-3 for the AVX2 run of models with Q4_0/Q4_1/Q8_0 matrices, whose
  kernels round x to int16 per block of 32 values
  (kernels/cpu/matmul_quant_avx2.c): each element moves by at most 2^-16 of
  its block's largest |x|, i.e. <= 2^-16 * sqrt(32) ~ 8.6e-5 of the block's
  RMS. A forward pass rounds 4 distinct inputs per layer (QKV, O, gate/up,
  down) plus the LM head input: 9 roundings for 2 layers, whose worst-case
  sum is ~7.8e-4 of the activations' scale; measured differences are ~1e-5
  to 1e-4 of max|logit|. On top of that, the greedy tokens must be
  identical, on a prompt whose reference top-1/top-2 logit gap exceeds twice
  the tolerance at every step (checked: a closer race would make identical
  tokens a matter of luck, not of correctness).
Exit code 0 when every variant passes."""
import os
import subprocess
import sys
import tempfile

import numpy as np
from gguf import GGMLQuantizationType as Q

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tinymodel  # noqa: E402

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
N_TOKENS = 8
TOL_F32 = 1e-4
TOL_X16 = 1e-3
ROUNDS_X = {Q.Q4_0, Q.Q4_1, Q.Q8_0}  # types whose AVX2 kernels round x to int16

VARIANTS = [
    # name, config overrides, tensor types by role
    ("llama_f32", dict(tie=False), {"default": Q.F32}),
    ("llama_f16", dict(tie=False), {"default": Q.F16, "norm": Q.F16}),
    ("llama_bf16_tied", dict(tie=True), {"default": Q.BF16}),
    ("llama_q8_0", dict(tie=False), {"default": Q.Q8_0}),
    ("llama_q4_0", dict(tie=False), {"default": Q.Q4_0, "embed": Q.Q8_0}),
    ("llama_q4_1_tied_q8_0", dict(tie=True), {"default": Q.Q4_1, "embed": Q.Q8_0}),
    ("llama_q5", dict(tie=False), {"default": Q.Q5_0, "ffn_gate": Q.Q5_1, "ffn_up": Q.Q5_1,
                                   "ffn_down": Q.Q5_1, "output": Q.Q5_1, "embed": Q.F16}),
    ("llama_kquants_256", dict(hidden=256, ffn=512, tie=False),
     {"default": Q.Q4_K, "attn_v": Q.Q6_K, "ffn_down": Q.Q6_K, "attn_output": Q.Q5_K,
      "embed": Q.Q6_K, "output": Q.Q6_K}),
    ("llama_rope_linear", dict(tie=False, rope_linear=2.0), {"default": Q.F32}),
    ("qwen2_q8_0_bias", dict(arch="qwen2", tie=False, kv_heads=1), {"default": Q.Q8_0}),
]


def have_avx2():
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((l for l in f if l.startswith("flags")), "").split()
        return all(x in flags for x in ("avx2", "fma", "f16c"))
    except OSError:
        return False


def generate(atoll, model, prompt, npy, isa):
    cmd = [atoll, "generate", "--model", model, "--prompt-ids", ",".join(map(str, prompt)),
           "--max-tokens", str(N_TOKENS), "--ignore-eos", "--logits-out", npy, "--threads", "2"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                       env=dict(ENV, ATOLL_CPU_ISA=isa))
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} (ATOLL_CPU_ISA={isa}) exited {p.returncode}:\n{p.stderr}")
    return [int(t) for t in p.stdout.splitlines()[0].split()], np.load(npy)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    atoll = sys.argv[1]
    avx2 = have_avx2()
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for vi, (name, overrides, types) in enumerate(VARIANTS):
            cfg = tinymodel.config(**overrides)
            gpath, hdir = os.path.join(tmp, name + ".gguf"), os.path.join(tmp, name + "_hf")
            tinymodel.write_pair(gpath, hdir, cfg, types, seed=vi)
            used = set(types.values())
            x16 = avx2 and bool(used & ROUNDS_X)
            tol_auto = TOL_X16 if x16 else TOL_F32
            # A prompt whose greedy steps are all clear wins in the reference.
            rng = np.random.default_rng(100 + vi)
            for attempt in range(20):
                prompt = [int(t) for t in rng.integers(3, cfg["vocab"], size=5 + attempt % 5)]
                ref_tokens, ref = generate(atoll, hdir, prompt, os.path.join(tmp, "ref.npy"), "auto")
                top2 = np.sort(ref, axis=1)[:, -2:]
                margin = float(((top2[:, 1] - top2[:, 0]) / np.abs(ref).max()).min())
                if margin > 2 * tol_auto:
                    break
            else:
                print(f"FAIL {name}: no prompt with a greedy margin above {2 * tol_auto:g}")
                failures += 1
                continue
            scale = float(np.abs(ref).max())
            for isa, tol in (("scalar", TOL_F32), ("auto", tol_auto)):
                tokens, got = generate(atoll, gpath, prompt, os.path.join(tmp, "got.npy"), isa)
                err = float(np.abs(got - ref).max() / scale) if got.shape == ref.shape else float("inf")
                ok = err <= tol and tokens == ref_tokens
                label = f"{name} isa={isa}{' (x rounded to int16)' if isa == 'auto' and x16 else ''}"
                print(f"{'ok  ' if ok else 'FAIL'} {label}: max|diff| / max|logit| = {err:.2e} "
                      f"(tol {tol:g}), margin {margin:.3f}, tokens {tokens}"
                      f"{'' if tokens == ref_tokens else f' != reference {ref_tokens}'}")
                failures += not ok
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
