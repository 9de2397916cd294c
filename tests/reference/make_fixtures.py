#!/usr/bin/env python3
"""Generate tiny random-weight reference models and transformers goldens for atoll.

Usage:
    /tmp/refvenv/bin/python tests/reference/make_fixtures.py [OUT_DIR]

OUT_DIR defaults to tests/reference/fixtures (relative to the repository root).
Each fixture is a Hugging Face model directory (config.json + safetensors) with
golden outputs under <fixture>/golden/ as NumPy .npy files. See README.md.

Everything runs on the CPU and is deterministic for a given torch/transformers
version: weights come from a fixed seed per model; if that seed's greedy
trajectories are not robust (top-1/top-2 logit gap too small, or the EOS id
is generated), the next seed is tried, in a fixed order.
"""

import copy
import inspect
import json
import os
import shutil
import sys

import numpy as np
import torch
import transformers
from transformers import (
    AutoModelForCausalLM,
    GenerationConfig,
    Glm4Config,
    LlamaConfig,
    Qwen2Config,
    Qwen3Config,
)

VOCAB = 512
PROMPT_LENS = (5, 11, 17)
PROMPT_SEED = 20240611
N_NEW = 32
EOS_ID = VOCAB - 1          # written to config.json; never generated (checked)
GAP_REL = 1e-3              # required min (top1 - top2) / max|logit| per greedy step
MAX_SEED_TRIES = 200

torch.set_num_threads(min(2, os.cpu_count() or 1))
torch.use_deterministic_algorithms(True)


def rope(theta, scaling=None):
    """RoPE settings as a transformers-5 `rope_parameters` dict (also accepted by
    transformers 4.x configs as rope_scaling + rope_theta, see build_config)."""
    p = {"rope_type": "default", "rope_theta": float(theta)}
    if scaling:
        p.update(scaling)
    return p


COMMON = dict(
    vocab_size=VOCAB,
    hidden_size=64,
    intermediate_size=128,
    max_position_embeddings=256,
    hidden_act="silu",
    bos_token_id=1,
    eos_token_id=EOS_ID,
    pad_token_id=None,
)

# name -> spec
MODELS = {
    "llama_f32": dict(
        cfg_cls=LlamaConfig, dtype="float32", seed=1000,
        cfg=dict(num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                 tie_word_embeddings=False, rms_norm_eps=1e-5, initializer_range=0.2,
                 rope=rope(10000.0)),
        features="Llama, GQA 4q/2kv heads, head_dim 16, untied lm_head, default RoPE theta 1e4, eps 1e-5",
    ),
    "llama_tied_rope_llama3_f32": dict(
        cfg_cls=LlamaConfig, dtype="float32", seed=2000,
        cfg=dict(num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2,
                 tie_word_embeddings=True, rms_norm_eps=1e-6, initializer_range=0.2,
                 rope=rope(10000.0, {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                     "high_freq_factor": 4.0,
                                     "original_max_position_embeddings": 64})),
        features="Llama, 3 layers, tied embeddings (no lm_head.weight in file), llama3 RoPE scaling "
                 "(factor 8, low 1, high 4, original ctx 64 -> head_dim 16 hits all three "
                 "frequency bands), eps 1e-6",
    ),
    "llama_rope_linear_bf16_sharded": dict(
        cfg_cls=LlamaConfig, dtype="bfloat16", seed=3000, shard="100KB",
        cfg=dict(num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                 tie_word_embeddings=False, rms_norm_eps=1e-5, initializer_range=0.2,
                 rope=rope(10000.0, {"rope_type": "linear", "factor": 2.0})),
        features="Llama, BF16 weights, linear RoPE scaling factor 2, sharded safetensors "
                 "with model.safetensors.index.json, eps 1e-5",
    ),
    "qwen2_f32": dict(
        cfg_cls=Qwen2Config, dtype="float32", seed=4000,
        cfg=dict(num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                 tie_word_embeddings=True, rms_norm_eps=1e-6, initializer_range=0.2,
                 use_sliding_window=False, rope=rope(1000000.0)),
        features="Qwen2, q/k/v biases (random, non-zero), tied embeddings, RoPE theta 1e6, eps 1e-6",
    ),
    "qwen3_f32": dict(
        cfg_cls=Qwen3Config, dtype="float32", seed=5000,
        cfg=dict(num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=1, head_dim=32,
                 tie_word_embeddings=False, rms_norm_eps=1e-6, initializer_range=0.2,
                 attention_bias=False, use_sliding_window=False, rope=rope(1000000.0)),
        features="Qwen3, per-head q_norm/k_norm (RMSNorm over head_dim, before RoPE), explicit "
                 "head_dim 32 with hidden 64 (4*32 = 128 != 64), MQA (1 KV head), untied, eps 1e-6",
    ),
    "glm4_f32": dict(
        cfg_cls=Glm4Config, dtype="float32", seed=6000,
        cfg=dict(num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                 tie_word_embeddings=False, rms_norm_eps=1e-5, initializer_range=0.2,
                 attention_bias=True, partial_rotary_factor=0.5, rope=rope(10000.0)),
        features="GLM-4 (Glm4ForCausalLM): partial rotary 0.5 (first 8 of 16 dims), interleaved "
                 "(GPT-J style) rotary pairs, sandwich norms (post_self_attn_layernorm, "
                 "post_mlp_layernorm), fused gate_up_proj, q/k/v biases, eps 1e-5",
    ),
    "glm4_bf16": dict(
        cfg_cls=Glm4Config, dtype="bfloat16", seed=7000,
        cfg=dict(num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                 tie_word_embeddings=False, rms_norm_eps=1e-6, initializer_range=0.2,
                 attention_bias=True, partial_rotary_factor=0.5, rope=rope(10000.0)),
        features="as glm4_f32 but BF16 weights, different seed, eps 1e-6",
    ),
}


def build_config(spec):
    kw = dict(COMMON)
    kw.update(spec["cfg"])
    rp = dict(kw.pop("rope"))
    cls = spec["cfg_cls"]
    params = inspect.signature(cls.__init__).parameters
    if "rope_parameters" in params or hasattr(cls, "__dataclass_fields__") and "rope_parameters" in cls.__dataclass_fields__:
        kw["rope_parameters"] = rp
    else:  # transformers 4.x
        kw["rope_theta"] = rp.pop("rope_theta")
        if rp.get("rope_type", "default") != "default":
            kw["rope_scaling"] = rp
    cfg = cls(**kw)
    return cfg


def perturb_(model, seed, std):
    """Give RMSNorm weights and biases non-trivial values (HF init sets them to
    1 and 0, which would leave those code paths untested)."""
    g = torch.Generator().manual_seed(seed + 99991)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(".bias"):
                p.copy_(torch.randn(p.shape, generator=g) * std)
            elif p.dim() == 1 and "norm" in name:
                p.copy_(1.0 + 0.25 * (2 * torch.rand(p.shape, generator=g) - 1))


def make_prompts():
    rng = np.random.default_rng(PROMPT_SEED)
    return [rng.integers(1, VOCAB, size=n, dtype=np.int64).astype(np.int32) for n in PROMPT_LENS]


@torch.no_grad()
def prompt_logits(model, ids):
    x = torch.from_numpy(ids.astype(np.int64))[None]
    out = model(input_ids=x, use_cache=False)
    return out.logits[0].float().numpy()


@torch.no_grad()
def greedy(model, ids):
    x = torch.from_numpy(ids.astype(np.int64))[None]
    gc = GenerationConfig(do_sample=False, max_new_tokens=N_NEW, min_new_tokens=N_NEW,
                          eos_token_id=None, pad_token_id=0, bos_token_id=None,
                          output_logits=True, return_dict_in_generate=True, use_cache=True)
    out = model.generate(input_ids=x, attention_mask=torch.ones_like(x), generation_config=gc)
    toks = out.sequences[0, len(ids):].numpy().astype(np.int32)
    logits = torch.stack([l[0] for l in out.logits]).float().numpy()
    assert toks.shape == (N_NEW,), toks.shape
    assert logits.shape == (N_NEW, VOCAB), logits.shape
    return toks, logits


@torch.no_grad()
def teacher_forced(model, ids, toks):
    """Logits for the greedy steps recomputed by one cache-free forward pass."""
    full = np.concatenate([ids, toks[:-1]]).astype(np.int64)
    out = model(input_ids=torch.from_numpy(full)[None], use_cache=False)
    return out.logits[0, len(ids) - 1:].float().numpy()


def rel_gaps(logits):
    """Per row: (top1 - top2) / max|logit|, and the absolute gap."""
    s = np.sort(logits, axis=-1)
    gap = s[:, -1] - s[:, -2]
    return gap / np.abs(logits).max(axis=-1), gap


def evaluate(model, prompts):
    """Run all goldens on one model; return dict of arrays + robustness stats."""
    res = {"logits": [], "greedy": [], "greedy_logits": [], "tf_diff": 0.0, "row0_diff": 0.0}
    min_rel, min_abs, eos_hit, argmax_ok = np.inf, np.inf, False, True
    for ids in prompts:
        lg = prompt_logits(model, ids)
        toks, glg = greedy(model, ids)
        tf = teacher_forced(model, ids, toks)
        rel, gap = rel_gaps(glg)
        min_rel = min(min_rel, float(rel.min()))
        min_abs = min(min_abs, float(gap.min()))
        eos_hit |= bool((toks == EOS_ID).any())
        argmax_ok &= bool((glg.argmax(-1) == toks).all())
        res["tf_diff"] = max(res["tf_diff"], float(np.abs(tf - glg).max()))
        res["row0_diff"] = max(res["row0_diff"], float(np.abs(lg[-1] - glg[0]).max()))
        res["logits"].append(lg)
        res["greedy"].append(toks)
        res["greedy_logits"].append(glg)
    res.update(min_rel=min_rel, min_abs=min_abs, eos_hit=eos_hit, argmax_ok=argmax_ok,
               max_abs_logit=float(max(np.abs(g).max() for g in res["greedy_logits"])))
    return res


def robust(r):
    return r["min_rel"] > GAP_REL and not r["eos_hit"] and r["argmax_ok"]


def build_model(spec, seed):
    cfg = build_config(spec)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation="eager")
    model = model.float()
    perturb_(model, seed, cfg.initializer_range)
    model.eval()
    if spec["dtype"] == "bfloat16":
        model = cast_params(model, torch.bfloat16)
    return model


def cast_params(model, dtype):
    """Cast parameters only. The RoPE inv_freq buffers stay float32, as they are
    when transformers loads a BF16 checkpoint with from_pretrained(dtype=bfloat16)
    (model.to(bfloat16) would round them to BF16 too)."""
    for p in model.parameters():
        p.data = p.data.to(dtype)
    model.config.dtype = dtype
    return model


def save_model(model, spec, d):
    kw = {}
    sig = inspect.signature(model.save_pretrained).parameters
    if "safe_serialization" in sig:
        kw["safe_serialization"] = True
    if "shard" in spec:
        kw["max_shard_size"] = spec["shard"]
    model.save_pretrained(d, **kw)


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "fixtures")
    os.makedirs(out_dir, exist_ok=True)
    prompts = make_prompts()
    summary = {}
    for name, spec in MODELS.items():
        bf16 = spec["dtype"] == "bfloat16"
        chosen = None
        for k in range(MAX_SEED_TRIES):
            seed = spec["seed"] + k
            model = build_model(spec, seed)
            if bf16:
                # atoll computes in F32 from BF16 weights: the F32 trajectory must be robust,
                # and (preferably) the BF16-compute greedy tokens agree with it.
                m32 = cast_params(copy.deepcopy(model), torch.float32)
                r32 = evaluate(m32, prompts)
                if not robust(r32):
                    continue
                r = evaluate(model, prompts)
                same = all((a == b).all() for a, b in zip(r["greedy"], r32["greedy"]))
                if (same or k >= MAX_SEED_TRIES // 2) and not r["eos_hit"]:
                    chosen = (seed, model, r, r32, same)
                    break
            else:
                r = evaluate(model, prompts)
                if robust(r):
                    chosen = (seed, model, r, None, None)
                    break
        if chosen is None:
            raise SystemExit(f"{name}: no robust seed in {MAX_SEED_TRIES} tries")
        seed, model, r, r32, same = chosen

        d = os.path.join(out_dir, name)
        if os.path.exists(d):
            shutil.rmtree(d)
        save_model(model, spec, d)
        gdir = os.path.join(d, "golden")
        os.makedirs(gdir)
        for i, ids in enumerate(prompts):
            np.save(os.path.join(gdir, f"prompt{i}_ids.npy"), ids.astype(np.int32))
            np.save(os.path.join(gdir, f"prompt{i}_logits.npy"), r["logits"][i].astype(np.float32))
            np.save(os.path.join(gdir, f"prompt{i}_greedy.npy"), r["greedy"][i].astype(np.int32))
            np.save(os.path.join(gdir, f"prompt{i}_greedy_logits.npy"),
                    r["greedy_logits"][i].astype(np.float32))
            if bf16:
                np.save(os.path.join(gdir, f"prompt{i}_logits_f32compute.npy"),
                        r32["logits"][i].astype(np.float32))
                np.save(os.path.join(gdir, f"prompt{i}_greedy_f32compute.npy"),
                        r32["greedy"][i].astype(np.int32))

        for root, _, files in os.walk(d):  # save_pretrained writes some files 0600
            for fn in files:
                os.chmod(os.path.join(root, fn), 0o644)

        # Sanity: the saved directory reloads and reproduces the goldens.
        re = AutoModelForCausalLM.from_pretrained(d, attn_implementation="eager",
                                                  dtype=model.dtype).eval()
        reload_diff = max(float(np.abs(prompt_logits(re, ids) - r["logits"][i]).max())
                          for i, ids in enumerate(prompts))
        assert reload_diff == 0.0, (name, reload_diff)
        if "shard" in spec:
            assert os.path.exists(os.path.join(d, "model.safetensors.index.json")), name

        info = dict(seed=seed, dtype=spec["dtype"], features=spec["features"],
                    min_gap_rel=r["min_rel"], min_gap_abs=r["min_abs"],
                    max_abs_logit=r["max_abs_logit"],
                    cache_vs_nocache_max_diff=r["tf_diff"], row0_vs_prompt_max_diff=r["row0_diff"])
        if bf16:
            info.update(f32compute_min_gap_rel=r32["min_rel"], f32compute_min_gap_abs=r32["min_abs"],
                        bf16_greedy_equals_f32compute_greedy=bool(same),
                        bf16_vs_f32compute_prompt_logits_max_diff=float(max(
                            np.abs(a - b).max() for a, b in zip(r["logits"], r32["logits"]))))
        summary[name] = info
        print(f"{name}: seed {seed}  min gap {r['min_abs']:.4g} (rel {r['min_rel']:.4g}, "
              f"max|logit| {r['max_abs_logit']:.3g})  cache-vs-nocache {r['tf_diff']:.2g}"
              + (f"  | f32compute min gap {r32['min_abs']:.4g} (rel {r32['min_rel']:.4g}), "
                 f"bf16 greedy == f32compute greedy: {same}" if bf16 else ""), flush=True)

    versions = {"torch": torch.__version__, "transformers": transformers.__version__,
                "numpy": np.__version__}
    try:
        import safetensors
        versions["safetensors"] = safetensors.__version__
    except Exception:  # pragma: no cover
        pass
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump({"versions": versions, "vocab": VOCAB, "prompt_lens": list(PROMPT_LENS),
                   "new_tokens": N_NEW, "eos_token_id": EOS_ID, "gap_rel_threshold": GAP_REL,
                   "models": summary}, f, indent=2, sort_keys=True)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(out_dir) for f in fs)
    print(f"wrote {out_dir}: {total / 2**20:.2f} MiB (apparent size)")


if __name__ == "__main__":
    main()
