#!/usr/bin/env python3
"""tests/fuzz/run_fuzz.py — runs a libFuzzer harness for a bounded time from a
small seed corpus generated here (valid files of the format, so the fuzzer
starts from deep inside the parser), and fails if the fuzzer finds a crash,
a sanitizer report, a leak or a timeout.

    python3 run_fuzz.py FUZZER gguf|safetensors SECONDS

Needs numpy (tests/gguf/ggufraw.py builds the GGUF seeds)."""
import json
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "gguf"))
import ggufraw as G  # noqa: E402


def gguf_seeds():
    seeds = {"tiny_llama": G.tiny_llama(layers=1, hidden=32, heads=2, kv_heads=1, ffn=32, vocab=16).build()}
    b = G.Builder(version=2, alignment=64)
    b.kv("general.alignment", G.UINT32, 64)
    for vtype, value in ((G.UINT8, 7), (G.INT8, -7), (G.UINT16, 700), (G.INT16, -700), (G.UINT32, 70000),
                         (G.INT32, -70000), (G.FLOAT32, 1.5), (G.BOOL, True), (G.STRING, "s"),
                         (G.UINT64, 1 << 40), (G.INT64, -(1 << 40)), (G.FLOAT64, 0.25)):
        b.kv(f"k.{vtype}", vtype, value)
    b.kv("k.strs", G.ARRAY, (G.STRING, ["a", "", "bc"]))
    b.kv("k.f32s", G.ARRAY, (G.FLOAT32, [1.0, 2.0]))
    b.kv("k.nested", G.ARRAY, (G.ARRAY, [(G.INT32, [1, 2]), (G.ARRAY, [(G.UINT8, [3])])]))
    b.tensor("q4_0", [64, 2], G.GGML_Q4_0, bytes(range(72)) * 1)
    b.tensor("q8_0", [32, 1], G.GGML_Q8_0, bytes(34))
    b.tensor("q4_k", [256, 1], 12, bytes(range(144)))
    b.tensor("q6_k", [256, 1], 14, bytes(210))
    b.tensor("f16", [3, 2, 2], G.GGML_F16, bytes(24))
    seeds["all_types_v2"] = b.build()
    seeds["empty_v3"] = G.Builder().build()
    return seeds


def safetensors_file(tensors, metadata=None):
    header, data = {}, b""
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * (-(8 + len(text)) % 8)
    return struct.pack("<Q", len(text)) + text + data


def safetensors_seeds():
    return {
        "three_dtypes": safetensors_file({"a.weight": ("F32", [2, 3], bytes(24)),
                                          "b.weight": ("F16", [4], bytes(8)),
                                          "c.weight": ("BF16", [1, 2, 2], bytes(8))}, {"format": "pt"}),
        "scalar_and_empty": safetensors_file({"s": ("F32", [], bytes(4)), "e": ("F32", [0, 5], b"")}),
        "empty_header": safetensors_file({}),
    }


def main():
    if len(sys.argv) != 4 or sys.argv[2] not in ("gguf", "safetensors"):
        sys.exit(__doc__)
    fuzzer, kind, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    seeds = gguf_seeds() if kind == "gguf" else safetensors_seeds()
    with tempfile.TemporaryDirectory() as tmp:
        corpus, artifacts = os.path.join(tmp, "corpus"), os.path.join(tmp, "artifacts") + "/"
        os.mkdir(corpus)
        os.mkdir(artifacts)
        for name, blob in seeds.items():
            with open(os.path.join(corpus, name), "wb") as f:
                f.write(blob)
        cmd = [fuzzer, f"-max_total_time={seconds}", "-timeout=10", "-rss_limit_mb=2048",
               "-max_len=65536", f"-artifact_prefix={artifacts}", "-print_final_stats=1", corpus]
        env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1",
                   UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 240, env=env)
        tail = "\n".join(p.stderr.splitlines()[-40:])
        found = os.listdir(artifacts)
        if p.returncode != 0 or found:
            print(f"FAIL {os.path.basename(fuzzer)}: exit {p.returncode}, artifacts {found}\n{tail}")
            for name in found:
                with open(os.path.join(artifacts, name), "rb") as f:
                    print(f"{name}: {f.read()[:256]!r}")
            return 1
        stats = [l for l in p.stderr.splitlines() if l.startswith("stat::number_of_executed_units")]
        print(f"ok   {os.path.basename(fuzzer)}: {seconds} s, {len(seeds)} seeds, "
              f"{stats[0].split(':')[-1].strip() if stats else '?'} runs, no crash")
    return 0


if __name__ == "__main__":
    sys.exit(main())
