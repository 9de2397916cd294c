"""tests/gguf/ggufraw.py — a byte-level GGUF builder for tests that need
files no well-behaved writer produces: every count, length, type id,
dimension and offset can be overridden. Standard library + numpy only.

    b = Builder(version=3)
    b.kv("general.architecture", STRING, "llama")
    b.tensor("token_embd.weight", [64, 256], GGML_F32, data_bytes)
    blob = b.build()                       # a valid file
    blob = b.build(n_tensors=1 << 40)      # the same with a lying count
"""
import struct

import numpy as np

UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, FLOAT64 = range(13)
SCALAR_FMT = {UINT8: "<B", INT8: "<b", UINT16: "<H", INT16: "<h", UINT32: "<I", INT32: "<i",
              FLOAT32: "<f", BOOL: "<?", UINT64: "<Q", INT64: "<q", FLOAT64: "<d"}
GGML_F32, GGML_F16, GGML_Q4_0, GGML_Q8_0, GGML_Q2_K = 0, 1, 2, 8, 10


def enc_string(s, length=None):
    b = s.encode() if isinstance(s, str) else bytes(s)
    return struct.pack("<Q", len(b) if length is None else length) + b


def enc_value(vtype, value):
    """Encodes a value without its type tag. ARRAY values are
    (element type, [items]) with items encoded recursively."""
    if vtype in SCALAR_FMT:
        return struct.pack(SCALAR_FMT[vtype], value)
    if vtype == STRING:
        return enc_string(value)
    if vtype == ARRAY:
        etype, items = value
        return struct.pack("<IQ", etype, len(items)) + b"".join(enc_value(etype, v) for v in items)
    raise ValueError(vtype)


class Builder:
    def __init__(self, version=3, alignment=32):
        self.version = version
        self.alignment = alignment
        self.kvs = []       # (key, raw bytes: type tag + value)
        self.tensors = []   # dicts: name, ne, type, data (bytes), offset (None: next aligned)

    def kv(self, key, vtype, value):
        self.kvs.append((key, struct.pack("<I", vtype) + enc_value(vtype, value)))

    def kv_raw(self, key, raw):
        self.kvs.append((key, raw))

    def tensor(self, name, ne, gtype, data):
        self.tensors.append(dict(name=name, ne=list(ne), type=gtype, data=bytes(data), offset=None))

    def drop_kv(self, key):
        self.kvs = [kv for kv in self.kvs if kv[0] != key]

    def set_kv(self, key, vtype, value):
        raw = struct.pack("<I", vtype) + enc_value(vtype, value)
        for i, (k, _) in enumerate(self.kvs):
            if k == key:
                self.kvs[i] = (key, raw)
                return
        self.kvs.append((key, raw))

    def find(self, name):
        return next(t for t in self.tensors if t["name"] == name)

    def build(self, magic=b"GGUF", version=None, n_tensors=None, n_kv=None, header_only=False):
        """The file's bytes. Counts default to the real ones; tensor offsets
        not set explicitly are laid out in order, aligned."""
        a = self.alignment
        off = 0
        for t in self.tensors:  # explicit offsets do not grow the data area
            if t["offset"] is None:
                t["_off"] = off
                off = (off + len(t["data"]) + a - 1) // a * a
            else:
                t["_off"] = t["offset"]
        out = bytearray(magic)
        out += struct.pack("<I", self.version if version is None else version)
        out += struct.pack("<QQ", len(self.tensors) if n_tensors is None else n_tensors,
                           len(self.kvs) if n_kv is None else n_kv)
        for key, raw in self.kvs:
            out += enc_string(key) + raw
        for t in self.tensors:
            out += enc_string(t["name"]) + struct.pack("<I", len(t["ne"]))
            out += b"".join(struct.pack("<Q", n) for n in t["ne"])
            out += struct.pack("<IQ", t["type"], t["_off"] % (1 << 64))
        if header_only:
            return bytes(out)
        out += b"\0" * (-len(out) % a)
        data = bytearray(off)
        for t in self.tensors:
            if t["_off"] + len(t["data"]) <= len(data):
                data[t["_off"]:t["_off"] + len(t["data"])] = t["data"]
        return bytes(out + data)


def tiny_llama(layers=2, hidden=64, heads=4, kv_heads=2, ffn=128, vocab=256, seed=0):
    """A valid tiny llama GGUF (F32 weights, tied embedding) as a Builder."""
    rng = np.random.default_rng(seed)
    hd = hidden // heads
    b = Builder()
    b.kv("general.architecture", STRING, "llama")
    b.kv("general.name", STRING, "tiny")
    b.kv("llama.block_count", UINT32, layers)
    b.kv("llama.context_length", UINT32, 256)
    b.kv("llama.embedding_length", UINT32, hidden)
    b.kv("llama.feed_forward_length", UINT32, ffn)
    b.kv("llama.attention.head_count", UINT32, heads)
    b.kv("llama.attention.head_count_kv", UINT32, kv_heads)
    b.kv("llama.rope.freq_base", FLOAT32, 10000.0)
    b.kv("llama.attention.layer_norm_rms_epsilon", FLOAT32, 1e-5)
    b.kv("tokenizer.ggml.model", STRING, "gpt2")
    b.kv("tokenizer.ggml.tokens", ARRAY, (STRING, [f"t{i}" for i in range(vocab)]))
    b.kv("tokenizer.ggml.eos_token_id", UINT32, 2)

    def f32(*shape):  # numpy shape [rows, cols] -> ne [cols, rows]
        arr = (rng.standard_normal(shape) / np.sqrt(shape[-1])).astype(np.float32)
        return list(reversed(shape)), arr.tobytes()

    def add(name, *shape):
        ne, data = f32(*shape)
        b.tensor(name, ne, GGML_F32, data)

    add("token_embd.weight", vocab, hidden)
    add("output_norm.weight", hidden)
    for i in range(layers):
        add(f"blk.{i}.attn_norm.weight", hidden)
        add(f"blk.{i}.attn_q.weight", heads * hd, hidden)
        add(f"blk.{i}.attn_k.weight", kv_heads * hd, hidden)
        add(f"blk.{i}.attn_v.weight", kv_heads * hd, hidden)
        add(f"blk.{i}.attn_output.weight", hidden, heads * hd)
        add(f"blk.{i}.ffn_norm.weight", hidden)
        add(f"blk.{i}.ffn_gate.weight", ffn, hidden)
        add(f"blk.{i}.ffn_up.weight", ffn, hidden)
        add(f"blk.{i}.ffn_down.weight", hidden, ffn)
    return b
