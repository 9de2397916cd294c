"""tests/gguf/tinymodel.py — tiny random Llama/Qwen2 models written twice:
as a GGUF file by the gguf package's GGUFWriter (the way llama.cpp's
converter lays them out: llama.cpp tensor names, Q/K rows permuted for
"llama", weights quantized by gguf.quants) and as a Hugging Face directory
(config.json + model.safetensors written by hand) holding exactly the values
the GGUF file decodes to (gguf.quants.dequantize, Q/K rows permuted back).
Loading either into atoll must give the same model.

Needs numpy and gguf only."""
import json
import os
import struct

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q

# Types gguf.quants can quantize to; the K-quants it can only dequantize, so
# those matrices are random blocks (random_kquant_blocks) instead.
QUANTIZABLE = {Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q5_1, Q.Q8_0, Q.BF16}
KQUANTS = {Q.Q4_K, Q.Q5_K, Q.Q6_K}


def config(arch="llama", hidden=64, layers=2, heads=4, kv_heads=2, ffn=128, vocab=256,
           tie=True, rope_theta=10000.0, eps=1e-5, ctx=512, rope_linear=None):
    return dict(arch=arch, hidden=hidden, layers=layers, heads=heads, kv_heads=kv_heads,
                head_dim=hidden // heads, ffn=ffn, vocab=vocab, tie=tie, rope_theta=rope_theta,
                eps=eps, ctx=ctx, rope_linear=rope_linear)


def random_hf_weights(cfg, seed):
    """Hugging Face names -> float32 arrays ([out, in] for matrices)."""
    rng = np.random.default_rng(seed)
    h, f, hd = cfg["hidden"], cfg["ffn"], cfg["head_dim"]
    q_dim, kv_dim = cfg["heads"] * hd, cfg["kv_heads"] * hd

    def mat(rows, cols):
        return (rng.standard_normal((rows, cols)) / np.sqrt(cols)).astype(np.float32)

    def norm(n):
        return (1.0 + 0.2 * rng.standard_normal(n)).astype(np.float32)

    w = {"model.embed_tokens.weight": rng.standard_normal((cfg["vocab"], h)).astype(np.float32),
         "model.norm.weight": norm(h)}
    if not cfg["tie"]:
        w["lm_head.weight"] = mat(cfg["vocab"], h) * 4
    for i in range(cfg["layers"]):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = norm(h)
        w[p + "post_attention_layernorm.weight"] = norm(h)
        w[p + "self_attn.q_proj.weight"] = mat(q_dim, h) * 2
        w[p + "self_attn.k_proj.weight"] = mat(kv_dim, h) * 2
        w[p + "self_attn.v_proj.weight"] = mat(kv_dim, h)
        w[p + "self_attn.o_proj.weight"] = mat(h, q_dim)
        w[p + "mlp.gate_proj.weight"] = mat(f, h)
        w[p + "mlp.up_proj.weight"] = mat(f, h)
        w[p + "mlp.down_proj.weight"] = mat(h, f)
        if cfg["arch"] == "qwen2":
            for n, d in (("q", q_dim), ("k", kv_dim), ("v", kv_dim)):
                w[p + f"self_attn.{n}_proj.bias"] = (0.3 * rng.standard_normal(d)).astype(np.float32)
    return w


# llama.cpp convert_hf_to_gguf.py LlamaModel.permute: per head, rows
# [0, hd/2) and [hd/2, hd) are interleaved so that ggml's adjacent-pair rope
# equals transformers' rotate_half.
def permute(w, n_head):
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def unpermute(w, n_head):
    return w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def gguf_name(hf):
    """llama.cpp's tensor name for a Hugging Face one."""
    fixed = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight",
             "lm_head.weight": "output.weight"}
    if hf in fixed:
        return fixed[hf]
    parts = hf.split(".")
    i, rest = parts[2], ".".join(parts[3:])
    table = {"input_layernorm.weight": "attn_norm.weight", "post_attention_layernorm.weight": "ffn_norm.weight",
             "self_attn.q_proj.weight": "attn_q.weight", "self_attn.k_proj.weight": "attn_k.weight",
             "self_attn.v_proj.weight": "attn_v.weight", "self_attn.o_proj.weight": "attn_output.weight",
             "mlp.gate_proj.weight": "ffn_gate.weight", "mlp.up_proj.weight": "ffn_up.weight",
             "mlp.down_proj.weight": "ffn_down.weight", "self_attn.q_proj.bias": "attn_q.bias",
             "self_attn.k_proj.bias": "attn_k.bias", "self_attn.v_proj.bias": "attn_v.bias"}
    return f"blk.{i}.{table[rest]}"


def random_kquant_blocks(qtype, rows, cols, target_std, rng):
    """Random K-quant blocks whose values have about the given spread (gguf
    cannot quantize to K-quants): random bytes, scales chosen so that the
    dequantized values are centred with std ~ target_std."""
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    nb = rows * cols // block
    raw = rng.integers(0, 256, size=(nb, size), dtype=np.uint8)
    if qtype == Q.Q6_K:  # d * int8 scale * (q - 32): d at the end
        d = np.full(nb, target_std / 1330.0, dtype=np.float16)
        raw[:, size - 2:] = d.view(np.uint8).reshape(nb, 2)
    else:  # Q4_K, Q5_K: d * sc * q - dmin * m, q in [0, 15] / [0, 31]
        mean_q = 7.5 if qtype == Q.Q4_K else 15.5
        d = np.full(nb, target_std / (31.5 * mean_q * 0.9), dtype=np.float16)
        dmin = (d.astype(np.float32) * mean_q).astype(np.float16)
        raw[:, 0:2] = d.view(np.uint8).reshape(nb, 2)
        raw[:, 2:4] = dmin.view(np.uint8).reshape(nb, 2)
    return raw.reshape(rows, cols // block * size)


def encode(arr, qtype, rng):
    """(raw data for the writer, raw_dtype or None, float32 values it decodes to)."""
    rows, cols = arr.shape if arr.ndim == 2 else (1, arr.shape[0])
    if qtype == Q.F32:
        return arr.astype(np.float32), None, arr.astype(np.float32)
    if qtype == Q.F16:
        h = arr.astype(np.float16)
        return h, None, h.astype(np.float32)
    if qtype in KQUANTS:
        raw = random_kquant_blocks(qtype, rows, cols, float(arr.std()), rng)
    else:
        raw = gguf.quants.quantize(arr.reshape(rows, cols), qtype)
    vals = gguf.quants.dequantize(raw, qtype).astype(np.float32).reshape(arr.shape)
    return raw, qtype, vals


def write_safetensors(path, tensors):
    """F32 safetensors by hand: u64 header length, JSON header, data."""
    header, blobs, off = {}, [], 0
    for name, arr in tensors.items():
        b = np.ascontiguousarray(arr, dtype=np.float32).tobytes()
        header[name] = {"dtype": "F32", "shape": list(arr.shape), "data_offsets": [off, off + len(b)]}
        off += len(b)
        blobs.append(b)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-(8 + len(text)) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def write_hf_dir(path, cfg, weights):
    os.makedirs(path, exist_ok=True)
    arch = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM"}[cfg["arch"]]
    c = {"architectures": [arch], "vocab_size": cfg["vocab"], "hidden_size": cfg["hidden"],
         "num_hidden_layers": cfg["layers"], "num_attention_heads": cfg["heads"],
         "num_key_value_heads": cfg["kv_heads"], "head_dim": cfg["head_dim"],
         "intermediate_size": cfg["ffn"], "max_position_embeddings": cfg["ctx"],
         "rms_norm_eps": cfg["eps"], "rope_theta": cfg["rope_theta"],
         "tie_word_embeddings": cfg["tie"], "bos_token_id": 1, "eos_token_id": 2}
    if cfg["rope_linear"]:
        c["rope_scaling"] = {"type": "linear", "factor": cfg["rope_linear"]}
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(c, f, indent=1)
    write_safetensors(os.path.join(path, "model.safetensors"), weights)


def write_pair(gguf_path, hf_dir, cfg, types, seed=0):
    """Writes the GGUF file and the equivalent HF directory. `types` maps a
    role ("embed", "output", "attn_q", ..., "ffn_down", "norm", "bias";
    "default" for the rest) to a GGMLQuantizationType. Returns the HF
    weights."""
    rng = np.random.default_rng(seed + 1000)
    hf = random_hf_weights(cfg, seed)
    llama = cfg["arch"] == "llama"
    w = gguf.GGUFWriter(gguf_path, cfg["arch"])
    a = cfg["arch"]
    w.add_block_count(cfg["layers"])
    w.add_context_length(cfg["ctx"])
    w.add_embedding_length(cfg["hidden"])
    w.add_feed_forward_length(cfg["ffn"])
    w.add_head_count(cfg["heads"])
    w.add_head_count_kv(cfg["kv_heads"])
    w.add_rope_freq_base(cfg["rope_theta"])
    w.add_layer_norm_rms_eps(cfg["eps"])
    w.add_rope_dimension_count(cfg["head_dim"])
    w.add_key_length(cfg["head_dim"])
    w.add_value_length(cfg["head_dim"])
    w.add_vocab_size(cfg["vocab"])
    if cfg["rope_linear"]:
        w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
        w.add_rope_scaling_factor(cfg["rope_linear"])
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_string("general.name", f"tiny-{a}")
    out = {}
    for name, arr in hf.items():
        g = gguf_name(name)
        role = g.split(".")[-2] if g.startswith("blk.") else {"token_embd.weight": "embed",
                                                              "output.weight": "output",
                                                              "output_norm.weight": "norm"}[g]
        if arr.ndim == 1:
            role = "bias" if g.endswith(".bias") else "norm"
        qtype = types.get(role, types.get("default", Q.F32) if arr.ndim == 2 else Q.F32)
        heads = cfg["heads"] if role == "attn_q" else cfg["kv_heads"]
        permuted = llama and role in ("attn_q", "attn_k")
        src = permute(arr, heads) if permuted else arr
        raw, raw_dtype, vals = encode(src, qtype, rng)
        w.add_tensor(g, raw, raw_dtype=raw_dtype)
        out[name] = unpermute(vals, heads) if permuted else vals
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    write_hf_dir(hf_dir, cfg, out)
    return out
