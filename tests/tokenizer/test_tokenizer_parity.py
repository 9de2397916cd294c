#!/usr/bin/env python3
"""Tokenizer parity: atoll's tokenizer (through the tokenize_batch driver)
against Hugging Face `tokenizers` on a corpus and on random input.

  test_tokenizer_parity.py --driver BUILD/tests/tokenizer/tokenize_batch
      (--tokenizer-json FILE | --gguf FILE) [--corpus corpus.jsonl] [--random N] [--seed S]

--tokenizer-json: the oracle is tokenizers.Tokenizer.from_file(FILE); atoll
loads the same file. --gguf: the tokenizer.ggml.* fields of a GGUF file
(read here, no GGUF library needed) go to atoll as JSON (--gguf-vocab-json)
and the oracle is built with `tokenizers` from the same vocabulary and
merges, as the model's tokenizer.json does it (byte-level models, model
"gpt2": pre-tokenizer per tokenizer.ggml.pre, ByteLevel decoder, control
tokens as special added tokens).

For every text: encode without and with special tokens, decode of the
latter with and without skip_special_tokens, and the concatenated stream
decode must all be identical. --random N adds N random strings (random
bytes decoded with errors='replace', random code points from many Unicode
blocks, random mixtures of special tokens and text) and N/4 random id
sequences (decode only), from a fixed seed.
"""
import argparse
import json
import os
import random
import struct
import subprocess
import sys
import tempfile

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, processors

GPT2_REGEX = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                r"\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
               r"\s*[\r\n]+|\s+(?!\S)|\s+")


# ---------------------------------------------------------------- GGUF

def read_gguf_tokenizer(path):
    """The tokenizer.* key/values of a GGUF file (v2/v3), as Python values."""
    scalar = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
    with open(path, "rb") as f:
        data = f.read(64 << 20)  # metadata sits at the front; 64 MiB is plenty for a tokenizer
    pos = 0

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from(fmt, data, pos)[0]
        pos += struct.calcsize(fmt)
        return v

    def string():
        nonlocal pos
        n = take("<Q")
        s = data[pos:pos + n]
        pos += n
        return s.decode("utf-8")

    def value(t):
        if t in scalar:
            return take(scalar[t])
        if t == 8:
            return string()
        if t == 9:
            et, n = take("<I"), take("<Q")
            if et in scalar:
                fmt = scalar[et]
                size = struct.calcsize(fmt)
                nonlocal pos
                out = list(struct.unpack_from("<%d%s" % (n, fmt[1]), data, pos))
                pos += n * size
                return out
            return [value(et) for _ in range(n)]
        raise ValueError("%s: unknown GGUF value type %d" % (path, t))

    if data[:4] != b"GGUF":
        raise ValueError("%s: not a GGUF file" % path)
    pos = 4
    version = take("<I")
    if version < 2:
        raise ValueError("%s: GGUF version %d is not supported" % (path, version))
    take("<Q")  # tensors
    n_kv = take("<Q")
    kv = {}
    for _ in range(n_kv):
        key = string()
        kv[key] = value(take("<I"))
    return {k: v for k, v in kv.items() if k.startswith("tokenizer.")}


def gguf_setup(path, tmpdir):
    return gguf_setup_from_fields(read_gguf_tokenizer(path), tmpdir, path)


def gguf_setup_from_fields(kv, tmpdir, path):
    """The oracle and tokenize_batch's arguments for GGUF tokenizer fields."""
    g = lambda k, d=None: kv.get("tokenizer.ggml." + k, d)
    model, pre = g("model"), g("pre", "default")
    vocab_json = {
        "model": model, "pre": pre, "tokens": g("tokens"), "merges": g("merges", []),
        "token_type": g("token_type"), "scores": g("scores"),
        "bos_token_id": g("bos_token_id"), "eos_token_id": g("eos_token_id"),
        "unknown_token_id": g("unknown_token_id"), "padding_token_id": g("padding_token_id"),
        "add_bos_token": g("add_bos_token", False), "add_eos_token": g("add_eos_token", False),
        "add_space_prefix": g("add_space_prefix"),
    }
    vj = os.path.join(tmpdir, "gguf_vocab.json")
    with open(vj, "w", encoding="utf-8") as f:
        json.dump(vocab_json, f, ensure_ascii=False)
    if model != "gpt2":
        raise SystemExit("%s: the oracle is built for byte-level (gpt2) vocabularies only, not '%s'" % (path, model))
    tokens, types = vocab_json["tokens"], vocab_json["token_type"] or []
    vocab = {t: i for i, t in enumerate(tokens)}
    merges = [tuple(m.split(" ", 1)) for m in vocab_json["merges"]]
    ignore_merges = pre in ("llama-bpe", "llama3", "llama-v3")
    hf = Tokenizer(models.BPE(vocab, merges, ignore_merges=ignore_merges))
    if pre in ("default", "gpt-2", "gpt2"):
        hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    elif pre in ("llama-bpe", "llama3", "llama-v3", "qwen2"):
        rx = QWEN2_REGEX if pre == "qwen2" else LLAMA3_REGEX
        hf.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(rx), behavior="isolated"),
                                                    pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    elif pre == "smollm":
        hf.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                    pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    else:
        raise SystemExit("%s: no oracle for tokenizer.ggml.pre '%s'" % (path, pre))
    hf.decoder = decoders.ByteLevel()
    hf.add_special_tokens([AddedToken(tokens[i], special=True, normalized=False) for i, t in enumerate(types) if t == 3])
    hf.add_tokens([AddedToken(tokens[i], special=False, normalized=False) for i, t in enumerate(types) if t == 4])
    single, specials = [], []
    if vocab_json["add_bos_token"] and vocab_json["bos_token_id"] is not None:
        b = tokens[vocab_json["bos_token_id"]]
        single.append(b)
        specials.append((b, vocab_json["bos_token_id"]))
    single.append("$A")
    if vocab_json["add_eos_token"] and vocab_json["eos_token_id"] is not None:
        s = tokens[vocab_json["eos_token_id"]]
        single.append(s)
        specials.append((s, vocab_json["eos_token_id"]))
    if specials:
        hf.post_processor = processors.TemplateProcessing(single=" ".join(single), special_tokens=specials)
    return hf, ["--gguf-vocab-json", vj]


# ---------------------------------------------------------------- random input

BLOCKS = [
    (0x20, 0x7E), (0xA0, 0x24F), (0x250, 0x2FF), (0x300, 0x36F), (0x370, 0x3FF), (0x400, 0x4FF), (0x530, 0x58F),
    (0x590, 0x5FF), (0x600, 0x6FF), (0x700, 0x74F), (0x900, 0x97F), (0x980, 0x9FF), (0xB80, 0xBFF), (0xC00, 0xC7F),
    (0xD00, 0xD7F), (0xE00, 0xE7F), (0xF00, 0xFFF), (0x10A0, 0x10FF), (0x1100, 0x11FF), (0x1200, 0x137F),
    (0x1780, 0x17FF), (0x1800, 0x18AF), (0x1AB0, 0x1AFF), (0x1D00, 0x1DFF), (0x1E00, 0x1FFF), (0x2000, 0x206F),
    (0x2070, 0x209F), (0x20A0, 0x20CF), (0x2100, 0x214F), (0x2150, 0x218F), (0x2190, 0x23FF), (0x2460, 0x24FF),
    (0x2500, 0x27BF), (0x2E80, 0x2FDF), (0x3000, 0x303F), (0x3040, 0x30FF), (0x3130, 0x318F), (0x3200, 0x33FF),
    (0x4E00, 0x9FFF), (0xA000, 0xA4CF), (0xA640, 0xA6FF), (0xA720, 0xA7FF), (0xAC00, 0xD7A3), (0xE000, 0xE0FF),
    (0xF900, 0xFAFF), (0xFB00, 0xFB4F), (0xFE00, 0xFE6F), (0xFF00, 0xFFEF), (0xFFF0, 0xFFFF), (0x10000, 0x1007F),
    (0x10780, 0x107BF), (0x10D00, 0x10D8F), (0x11000, 0x1107F), (0x11900, 0x1195F), (0x1D400, 0x1D7FF),
    (0x1E030, 0x1E08F), (0x1F000, 0x1F0FF), (0x1F100, 0x1F1FF), (0x1F300, 0x1F5FF), (0x1F600, 0x1F64F),
    (0x1F900, 0x1F9FF), (0x1FB00, 0x1FBFF), (0x20000, 0x2A6DF), (0xE0000, 0xE007F), (0xF0000, 0xF00FF),
]
FRAGMENTS = [" ", "  ", "\n", "\t", "\r\n", "the", " world", "'s", "'LL", "123", "4567", "3.14", "你好", "こんにちは",
             "😀", "👍🏽", "\u200d", "e\u0301", "ﬁ", "①", "Ｗ", "<|im_start|>", "<|im_end|>", "<s>", "</s>",
             "<|begin_of_text|>", "<tool_call>", "[[sep]]", "<unk>", "<0x41>", "▁", "Ġ", "\u00a0", "\u3000", "\x00"]


def random_texts(rng, n):
    out = []
    for i in range(n):
        kind = i % 3
        if kind == 0:
            b = bytes(rng.randrange(256) if rng.random() < 0.5 else rng.randrange(0x20, 0x7F)
                      for _ in range(rng.randint(0, 64)))
            out.append(b.decode("utf-8", errors="replace"))
        elif kind == 1:
            s = []
            for _ in range(rng.randint(1, 40)):
                if rng.random() < 0.15:
                    s.append(rng.choice(" \n\t"))
                    continue
                lo, hi = rng.choice(BLOCKS)
                s.append(chr(rng.randint(lo, hi)))
            out.append("".join(s))
        else:
            out.append("".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 20))))
    return out


def random_id_lists(rng, n, hf):
    size = hf.get_vocab_size(with_added_tokens=True)
    vocab = hf.get_vocab(with_added_tokens=True)
    byte_ids = [vocab[t] for t in ("<0x%02X>" % b for b in range(256)) if t in vocab]
    out = []
    for _ in range(n):
        ids = []
        for _ in range(rng.randint(0, 30)):
            r = rng.random()
            if byte_ids and r < 0.3:
                ids.append(rng.choice(byte_ids))
            elif r < 0.33:
                ids.append(size + rng.randint(0, 5))  # out of range: skipped
            else:
                ids.append(rng.randrange(size))
        out.append(ids)
    return out


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--driver", required=True)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--tokenizer-json")
    src.add_argument("--gguf")
    ap.add_argument("--corpus", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus.jsonl"))
    ap.add_argument("--random", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--show", type=int, default=10, help="mismatches to print")
    ap.add_argument("--save-oracle", metavar="FILE", help="also write the oracle as a tokenizer.json (e.g. for bench_tokenizer)")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        if args.tokenizer_json:
            hf = Tokenizer.from_file(args.tokenizer_json)
            driver_args = ["--tokenizer-json", args.tokenizer_json]
            name = args.tokenizer_json
        else:
            hf, driver_args = gguf_setup(args.gguf, tmp)
            name = args.gguf
        if args.save_oracle:
            hf.save(args.save_oracle)

        texts = []
        if args.corpus:
            with open(args.corpus, encoding="utf-8") as f:
                texts += [json.loads(line)["text"] for line in f if line.strip()]
        rng = random.Random(args.seed)
        texts += random_texts(rng, args.random)
        id_lists = random_id_lists(rng, args.random // 4, hf) if args.random else []

        inputs = [{"text": t} for t in texts] + [{"ids": ids} for ids in id_lists]
        payload = "".join(json.dumps(x) + "\n" for x in inputs)
        proc = subprocess.run([args.driver] + driver_args, input=payload.encode(), capture_output=True)
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr.decode(errors="replace"))
            print("FAIL: %s exited with %d" % (args.driver, proc.returncode))
            return 1
        results = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    if len(results) != len(inputs):
        print("FAIL: %d inputs but %d results" % (len(inputs), len(results)))
        return 1

    enc = hf.encode_batch(texts, add_special_tokens=False)
    enc_sp = hf.encode_batch(texts, add_special_tokens=True)
    failures = 0
    for k, (inp, got) in enumerate(zip(inputs, results)):
        if "text" in inp:
            ids_sp = enc_sp[k].ids
            want = {"ids": enc[k].ids, "ids_special": ids_sp}
        else:
            ids_sp = inp["ids"]
            want = {}
        want["decoded"] = hf.decode(ids_sp, skip_special_tokens=False)
        want["decoded_skip"] = hf.decode(ids_sp, skip_special_tokens=True)
        want["stream"] = want["decoded"]
        want["stream_skip"] = want["decoded_skip"]
        bad = [key for key in want if got.get(key) != want[key]]
        if bad:
            failures += 1
            if failures <= args.show:
                print("MISMATCH %s on %r" % (",".join(bad), inp.get("text", inp.get("ids"))))
                if "error" in got:
                    print("  atoll error: %s" % got["error"])
                for key in bad:
                    print("  %s: atoll %r" % (key, got.get(key)))
                    print("  %s: HF    %r" % (key, want[key]))
    n_text = len(texts)
    print("%s: %d texts (%d from the corpus, %d random), %d random id lists: %d mismatches"
          % (name, n_text, n_text - args.random, args.random, len(id_lists), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
