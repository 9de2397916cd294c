#!/usr/bin/env python3
"""tests/gguf/test_bad_gguf.py — damaged or unsupported GGUF files must make
`atoll generate` exit with a normal non-zero status and an error naming the
file and the problem, never crash, hang or trip a sanitizer.

    python3 test_bad_gguf.py PATH_TO_ATOLL

Files are built byte by byte (ggufraw.py) from a valid tiny Llama and then
damaged one way each: magic, version, counts, string and array lengths,
value and tensor types, dimensions, offsets, alignment, duplicates, nesting,
overflowing shapes, truncation at many points (a GGUFWriter-written file
too), and model-level problems (architecture, missing keys and tensors,
wrong shapes, types atoll cannot compute with). The valid file itself must
load and generate."""
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ggufraw as G  # noqa: E402

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
SANITIZER_MARKERS = ("AddressSanitizer", "LeakSanitizer", "runtime error:", "UndefinedBehaviorSanitizer")


def run(atoll, path):
    cmd = [atoll, "generate", "--model", path, "--prompt-ids", "1,2,3", "--max-tokens", "2", "--threads", "2"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=ENV)


def cases():
    """(name, file bytes, words the error must contain)."""
    good = G.tiny_llama()
    out = []

    def mutate(name, fn, *words, **build_args):
        b = G.tiny_llama()
        fn(b)
        out.append((name, b.build(**build_args), words))

    blob = good.build()
    out.append(("wrong_magic", b"GGUX" + blob[4:], ("not a GGUF file", "GGUX")))
    out.append(("safetensors_as_gguf", struct.pack("<Q", 2) + b"{}" + b"\0" * 64, ("not a GGUF file",)))
    out.append(("empty_file", b"", ("not a GGUF file", "too short")))
    out.append(("three_bytes", b"GGU", ("too short",)))
    out.append(("version_1", good.build(version=1), ("version 1",)))
    out.append(("version_7", good.build(version=7), ("unsupported GGUF version 7",)))
    out.append(("big_endian", good.build(version=3 << 24), ("big-endian",)))
    out.append(("tensor_count_absurd", good.build(n_tensors=1 << 40), ("tensor count", "absurd")))
    out.append(("kv_count_absurd", good.build(n_kv=1 << 40), ("key/value count", "absurd")))
    # Counts that are plausible but wrong: parsing runs into the next section
    # (or the data) and fails there, whatever the bytes happen to say.
    out.append(("tensor_count_lies", good.build(n_tensors=len(good.tensors) + 5), ("tensor",)))
    out.append(("kv_count_lies", good.build(n_kv=len(good.kvs) + 3), ()))

    # Lengths: a key, a string value, an array
    first_key_len_at = 24  # magic, version, tensor count, kv count
    bad = bytearray(blob)
    bad[first_key_len_at:first_key_len_at + 8] = struct.pack("<Q", 1 << 60)
    out.append(("key_length_absurd", bytes(bad), ("length", "larger than")))
    mutate("string_length_absurd",
           lambda b: b.kv_raw("general.name", struct.pack("<I", G.STRING) + struct.pack("<Q", 1 << 62) + b"x"),
           "length", "larger than")
    mutate("array_length_absurd",
           lambda b: b.kv_raw("tokenizer.ggml.scores", struct.pack("<IIQ", G.ARRAY, G.FLOAT32, 1 << 58)),
           "array of", "more than")
    mutate("string_array_length_absurd",
           lambda b: b.kv_raw("tokenizer.ggml.merges", struct.pack("<IIQ", G.ARRAY, G.STRING, 1 << 61)),
           "array of", "more than")
    mutate("unknown_value_type", lambda b: b.kv_raw("general.weird", struct.pack("<I", 13) + b"\0" * 8),
           "unknown value type 13")
    mutate("unknown_array_type", lambda b: b.kv_raw("general.weird", struct.pack("<IIQ", G.ARRAY, 99, 1)),
           "unknown value type 99")
    nested = (G.UINT8, [1])
    for _ in range(20):
        nested = (G.ARRAY, [nested])
    mutate("arrays_nested_too_deep", lambda b: b.kv("general.nested", G.ARRAY, nested), "nests arrays")
    mutate("empty_key", lambda b: b.kv("", G.UINT8, 1), "empty")
    mutate("nul_in_key", lambda b: b.kv("general.a\0b", G.UINT8, 1), "NUL")
    mutate("duplicate_key", lambda b: b.kv("llama.block_count", G.UINT32, 2), "duplicate metadata key",
           "llama.block_count")
    mutate("alignment_not_power_of_two", lambda b: b.kv("general.alignment", G.UINT32, 48),
           "general.alignment", "power of two")
    mutate("alignment_zero", lambda b: b.kv("general.alignment", G.UINT32, 0), "power of two")
    mutate("alignment_wrong_type", lambda b: b.kv("general.alignment", G.STRING, "32"),
           "general.alignment", "expected uint32")

    # Tensor infos
    def set_tensor(tensor, **kw):
        def f(b):
            b.find(tensor).update(kw)
        return f
    mutate("unknown_tensor_type", set_tensor("blk.0.attn_q.weight", type=99), "unknown ggml type 99",
           "blk.0.attn_q.weight")
    mutate("removed_tensor_type", set_tensor("blk.0.attn_q.weight", type=4), "unknown ggml type 4")
    mutate("n_dims_5", set_tensor("blk.1.ffn_up.weight", ne=[64, 128, 1, 1, 1]), "5 dimensions",
           "blk.1.ffn_up.weight")
    mutate("element_count_overflow", set_tensor("blk.0.attn_k.weight", ne=[1 << 40, 1 << 40, 1 << 40]),
           "overflows", "blk.0.attn_k.weight")
    mutate("dimension_negative", set_tensor("blk.0.attn_k.weight", ne=[64, 1 << 63]), "dimension")
    mutate("misaligned_offset", set_tensor("token_embd.weight", offset=8), "not a multiple of the alignment",
           "token_embd.weight")
    mutate("data_past_end", set_tensor("blk.1.ffn_down.weight", offset=1 << 30), "past the end",
           "blk.1.ffn_down.weight")
    mutate("offset_overflows", set_tensor("blk.1.ffn_down.weight", offset=(1 << 64) - 32), "past the end")
    mutate("duplicate_tensor", lambda b: b.tensors.append(dict(b.find("output_norm.weight"), offset=None)),
           "duplicate tensor name", "output_norm.weight")
    mutate("empty_tensor_name", set_tensor("output_norm.weight", name=""), "empty name")
    mutate("tensor_name_too_long", set_tensor("output_norm.weight", name="x" * 300), "length 300")
    mutate("q4_0_row_not_whole_blocks",
           set_tensor("blk.0.attn_v.weight", type=G.GGML_Q4_0, ne=[48, 32], data=b"\0" * (32 * 2 * 18)),
           "not a multiple of the q4_0 block size 32")
    out.append(("data_truncated", blob[:len(blob) - 1000], ("past the end", "truncated")))

    # Model level
    mutate("unsupported_architecture", lambda b: b.set_kv("general.architecture", G.STRING, "gpt2"),
           "general.architecture 'gpt2' is not supported", "llama, qwen2")
    mutate("no_architecture", lambda b: b.drop_kv("general.architecture"), "general.architecture")
    mutate("missing_required_key", lambda b: b.drop_kv("llama.embedding_length"),
           "required key 'llama.embedding_length' is missing")
    mutate("key_wrong_type", lambda b: b.set_kv("llama.block_count", G.STRING, "2"),
           "llama.block_count", "has type string, expected uint32")
    mutate("key_negative", lambda b: b.set_kv("llama.block_count", G.INT32, -2),
           "llama.block_count", "out of range")
    mutate("key_zero", lambda b: b.set_kv("llama.attention.head_count", G.UINT32, 0),
           "llama.attention.head_count", "positive")
    mutate("heads_not_multiple_of_kv", lambda b: b.set_kv("llama.attention.head_count_kv", G.UINT32, 3),
           "not a multiple")
    mutate("block_count_too_large", lambda b: b.set_kv("llama.block_count", G.UINT32, 3),
           "blk.2.attn_norm.weight", "missing")
    mutate("block_count_huge", lambda b: b.set_kv("llama.block_count", G.UINT32, 1 << 29),
           "blk.536870911.attn_norm.weight", "missing")
    mutate("missing_tensor", lambda b: b.tensors.remove(b.find("blk.1.ffn_up.weight")),
           "tensor 'blk.1.ffn_up.weight' is missing")
    mutate("wrong_shape", lambda b: b.set_kv("llama.feed_forward_length", G.UINT32, 96),
           "ffn_gate.weight' has shape [64, 128]", "implies [64, 96]")
    mutate("wrong_vocab", lambda b: b.kv("llama.vocab_size", G.UINT32, 300), "token_embd.weight", "shape")
    mutate("rope_scaling_unsupported", lambda b: b.kv("llama.rope.scaling.type", G.STRING, "yarn"),
           "llama.rope.scaling.type", "yarn", "not supported")
    mutate("rope_dims_odd", lambda b: b.kv("llama.rope.dimension_count", G.UINT32, 15), "even")
    return out


def cannot_compute_case():
    """A tensor of a type atoll parses but has no kernels for (Q2_K), with a
    consistent shape: a 256-wide model so Q2_K rows are whole blocks."""
    b = G.tiny_llama(hidden=256, heads=4, kv_heads=2, ffn=256)
    t = b.find("blk.0.attn_v.weight")
    t.update(type=G.GGML_Q2_K, data=b"\0" * (t["ne"][1] * 84))
    return ("type_q2_k_not_computable", b.build(), ("blk.0.attn_v.weight", "q2_k", "cannot compute"))


def truncation_cases(blob, tag, header_end):
    """The file cut at points through the fixed header, the metadata and
    tensor infos (header_end: where the data section starts) and the data.
    (tests/gguf/test_gguf_parser.py cuts at every byte of the header.)"""
    points = sorted(set([0, 1, 3, 4, 6, 8, 12, 16, 20, 24] + [int(header_end * k / 12) for k in range(1, 12)] +
                        [header_end - 1, header_end + 1] +
                        [header_end + int((len(blob) - header_end) * k / 4) for k in range(1, 4)] +
                        [len(blob) - 1]))
    return [(f"{tag}_truncated_at_{n}", blob[:n], ()) for n in points if 0 <= n < len(blob)]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    atoll = sys.argv[1]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        good = os.path.join(tmp, "good.gguf")
        with open(good, "wb") as f:
            f.write(G.tiny_llama().build())
        p = run(atoll, good)
        first = p.stdout.splitlines()[0].split() if p.stdout else []
        if p.returncode != 0 or len(first) != 2:
            print(f"FAIL the valid tiny file does not generate (exit {p.returncode}):\n{p.stderr}")
            return 1
        print("ok   valid file generates", " ".join(first))

        all_cases = cases() + [cannot_compute_case()]
        raw = G.tiny_llama()
        all_cases += truncation_cases(raw.build(), "raw", len(raw.build(header_only=True)))
        # A file written by the gguf package, truncated too.
        try:
            import gguf
            from gguf import GGMLQuantizationType as Q
            import tinymodel
            gw = os.path.join(tmp, "writer.gguf")
            tinymodel.write_pair(gw, os.path.join(tmp, "writer_hf"), tinymodel.config(),
                                 {"default": Q.Q4_1, "embed": Q.Q8_0})
            with open(gw, "rb") as f:
                all_cases += truncation_cases(f.read(), "writer", gguf.GGUFReader(gw).data_offset)
        except ImportError:
            print("note: gguf package missing; GGUFWriter truncation cases skipped")

        for name, blob, words in all_cases:
            path = os.path.join(tmp, name + ".gguf")
            with open(path, "wb") as f:
                f.write(blob)
            try:
                p = run(atoll, path)
            except subprocess.TimeoutExpired:
                print(f"FAIL {name}: atoll did not finish in 60 s")
                failures += 1
                continue
            err = p.stderr
            problems = []
            if p.returncode <= 0 or p.returncode >= 128:
                problems.append(f"exit status {p.returncode} (want a normal non-zero exit)")
            if any(m in err for m in SANITIZER_MARKERS):
                problems.append("sanitizer report")
            if path not in err:
                problems.append("message does not name the file")
            missing = [w for w in words if w.lower() not in err.lower()]
            if missing:
                problems.append(f"message lacks {missing}")
            last = err.strip().splitlines()[-1] if err.strip() else "(no stderr)"
            if problems:
                print(f"FAIL {name}: {'; '.join(problems)}\n     stderr: {err.strip()[:600]}")
                failures += 1
            else:
                print(f"ok   {name}: {last[:200]}")
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
