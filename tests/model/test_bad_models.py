#!/usr/bin/env python3
"""tests/model/test_bad_models.py — damaged model directories and bad
command-line values must make `atoll generate` exit with a normal non-zero
status and an error naming the offending file (or directory, or flag) and
the problem, never crash or trip a sanitizer.

    python3 test_bad_models.py PATH_TO_ATOLL GOOD_FIXTURE_DIR

GOOD_FIXTURE_DIR is a single-file checkpoint (config.json +
model.safetensors), e.g. tests/reference/fixtures/llama_f32. Each case copies
it into a fresh temporary directory and damages the copy. Standard library
only."""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
TIMEOUT_S = 60
PROMPT_ARGS = ["--prompt-ids", "1,2,3", "--max-tokens", "2"]
SANITIZER_MARKERS = ("AddressSanitizer", "LeakSanitizer", "runtime error:")


# --- safetensors: u64 LE header length, JSON header, data area -------------

def st_read(path):
    """Returns (header dict in file order, data area bytes)."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    return json.loads(blob[8:8 + n]), blob[8 + n:]


def st_pack(header_bytes, data, header_len=None):
    """Raw file bytes; header_len overrides the length field."""
    n = len(header_bytes) if header_len is None else header_len
    return struct.pack("<Q", n) + header_bytes + data


def st_header_bytes(header):
    """JSON header padded with spaces so the data area starts 8-aligned, as
    the safetensors library writes it."""
    text = json.dumps(header, separators=(",", ":")).encode()
    return text + b" " * (-(8 + len(text)) % 8)


def st_write(path, header, data):
    with open(path, "wb") as f:
        f.write(st_pack(st_header_bytes(header), data))


def st_write_raw(path, blob):
    with open(path, "wb") as f:
        f.write(blob)


def st_edit(path, edit):
    """Reads the file, lets edit(header, data) change the header in place
    (returning new data bytes, or anything else to keep the data), writes
    it back."""
    header, data = st_read(path)
    new_data = edit(header, data)
    st_write(path, header, new_data if isinstance(new_data, (bytes, bytearray)) else data)


def st_tensors(header):
    return [k for k in header if k != "__metadata__"]


def st_split(model_dir, n_shards):
    """Rewrites model.safetensors as n_shards shards plus an index, the way
    transformers saves large checkpoints. Returns the shard file names."""
    src = os.path.join(model_dir, "model.safetensors")
    header, data = st_read(src)
    names = st_tensors(header)
    files = [f"model-{i + 1:05d}-of-{n_shards:05d}.safetensors" for i in range(n_shards)]
    weight_map = {}
    for i, fname in enumerate(files):
        part, blob = {"__metadata__": {"format": "pt"}}, bytearray()
        for name in names[i::n_shards]:
            info = dict(header[name])
            b, e = info["data_offsets"]
            info["data_offsets"] = [len(blob), len(blob) + (e - b)]
            blob += data[b:e]
            part[name] = info
            weight_map[name] = fname
        st_write(os.path.join(model_dir, fname), part, bytes(blob))
    os.remove(src)
    write_json(os.path.join(model_dir, "model.safetensors.index.json"),
               {"metadata": {"total_size": len(data)}, "weight_map": weight_map})
    return files


def truncate(path, n):
    with open(path, "r+b") as f:
        f.truncate(n)


def read_json(path):
    with open(path) as f:
        return json.load(f)


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)


def edit_config(model_dir, edit):
    path = os.path.join(model_dir, "config.json")
    cfg = read_json(path)
    edit(cfg)
    write_json(path, cfg)
    return path


# --- cases ------------------------------------------------------------------
# A case function damages the directory d (and may write files under tmp) and
# returns (where, pattern[, args]): `where` must appear verbatim in stderr,
# `pattern` is a case-insensitive regex that must match stderr, and args (if
# given) replace the arguments after `generate --model d`.

CASES = []


def case(name):
    def register(fn):
        CASES.append((name, fn))
        return fn
    return register


def st(d):
    return os.path.join(d, "model.safetensors")


def cfg_path(d):
    return os.path.join(d, "config.json")


Q0 = "model.layers.0.self_attn.q_proj.weight"
DOWN1 = "model.layers.1.mlp.down_proj.weight"
NORM = "model.norm.weight"


def q(name):
    return re.escape(f"tensor '{name}'")


# Truncated files.

@case("truncated safetensors: 4 bytes")
def _(d, tmp):
    truncate(st(d), 4)
    return st(d), r"file is 4 bytes, too short for a safetensors header"


@case("truncated safetensors: empty file")
def _(d, tmp):
    truncate(st(d), 0)
    return st(d), r"file is 0 bytes, too short"


@case("truncated safetensors: mid-header")
def _(d, tmp):
    header, _ = st_read(st(d))
    truncate(st(d), 8 + len(st_header_bytes(header)) // 2)
    return st(d), r"header length \d+ runs past the end of the file"


@case("truncated safetensors: mid-data")
def _(d, tmp):
    truncate(st(d), os.path.getsize(st(d)) // 2 + 8)
    return st(d), r"data_offsets \[\d+, \d+\] run past the end of the data .*truncated"


@case("truncated safetensors: last byte missing")
def _(d, tmp):
    truncate(st(d), os.path.getsize(st(d)) - 1)
    return st(d), q(NORM) + r" data_offsets \[\d+, \d+\] run past the end of the data"


# Broken headers.

@case("header is not JSON")
def _(d, tmp):
    _, data = st_read(st(d))
    st_write_raw(st(d), st_pack(b'{"lm_head.weight": {"dtype": "F32",, garbage', data))
    return st(d), r"header is not valid JSON"


@case("header is binary garbage")
def _(d, tmp):
    _, data = st_read(st(d))
    st_write_raw(st(d), st_pack(bytes(range(256)) * 4, data))
    return st(d), r"header is not valid JSON"


@case("header length 0")
def _(d, tmp):
    _, data = st_read(st(d))
    st_write_raw(st(d), st_pack(b"", data))
    return st(d), r"header is not valid JSON"


@case("header JSON is a list, not an object")
def _(d, tmp):
    _, data = st_read(st(d))
    st_write_raw(st(d), st_pack(b"[1, 2, 3]      ", data))
    return st(d), r"header is JSON but not an object"


@case("header JSON is a string, not an object")
def _(d, tmp):
    _, data = st_read(st(d))
    st_write_raw(st(d), st_pack(b'"tensors"      ', data))
    # jansson refuses a non-container top level as invalid JSON.
    return st(d), r"header is JSON but not an object|header is not valid JSON.*'\{' expected"


@case("header length past end of file")
def _(d, tmp):
    header, data = st_read(st(d))
    hb = st_header_bytes(header)
    st_write_raw(st(d), st_pack(hb, data, header_len=8 + len(hb) + len(data)))
    return st(d), r"header length \d+ runs past the end of the file"


@case("header length 2^64-1")
def _(d, tmp):
    header, data = st_read(st(d))
    st_write_raw(st(d), st_pack(st_header_bytes(header), data, header_len=2**64 - 1))
    return st(d), r"header length 18446744073709551615 runs past the end of the file"


@case("tensor entry is not an object")
def _(d, tmp):
    st_edit(st(d), lambda h, data: h.__setitem__(Q0, [1, 2]))
    return st(d), q(Q0) + r" needs dtype, shape and data_offsets"


@case("tensor entry without data_offsets")
def _(d, tmp):
    st_edit(st(d), lambda h, data: h[Q0].pop("data_offsets"))
    return st(d), q(Q0) + r" needs dtype, shape and data_offsets"


# data_offsets.

@case("data_offsets end past the data")
def _(d, tmp):
    def edit(h, data):
        h[Q0]["data_offsets"][1] = len(data) + 4
    st_edit(st(d), edit)
    return st(d), q(Q0) + r" data_offsets \[\d+, \d+\] run past the end of the data"


@case("data_offsets both far past the data")
def _(d, tmp):
    def edit(h, data):
        h[Q0]["data_offsets"] = [2**62, 2**62 + 64 * 64 * 4]
    st_edit(st(d), edit)
    return st(d), q(Q0) + r" data_offsets .* run past the end of the data"


@case("data_offsets negative")
def _(d, tmp):
    st_edit(st(d), lambda h, data: h[Q0].__setitem__("data_offsets", [-16384, 0]))
    return st(d), q(Q0) + r" has invalid data_offsets"


@case("data_offsets end before begin")
def _(d, tmp):
    def edit(h, data):
        b, e = h[Q0]["data_offsets"]
        h[Q0]["data_offsets"] = [e, b]
    st_edit(st(d), edit)
    return st(d), q(Q0) + r" has invalid data_offsets"


@case("data_offsets span shorter than shape*dtype")
def _(d, tmp):
    def edit(h, data):
        h[Q0]["data_offsets"][1] -= 4
    st_edit(st(d), edit)
    return st(d), q(Q0) + r" spans 16380 bytes but its shape and dtype need 16384"


@case("data_offsets span longer than shape*dtype")
def _(d, tmp):
    def edit(h, data):
        h[NORM]["data_offsets"][0] -= 256
    st_edit(st(d), edit)
    return st(d), q(NORM) + r" spans 512 bytes but its shape and dtype need 256"


@case("dtype changed to F16 (span now twice the need)")
def _(d, tmp):
    st_edit(st(d), lambda h, data: h[Q0].__setitem__("dtype", "F16"))
    return st(d), q(Q0) + r" spans 16384 bytes but its shape and dtype need 8192"


# Shapes.

@case("shape disagrees with config.json (same byte count)")
def _(d, tmp):
    st_edit(st(d), lambda h, data: h[Q0].__setitem__("shape", [32, 128]))
    return st(d), q(Q0) + r" has shape \[32, 128\] but config\.json implies \[64, 64\]"


@case("vector stored as a matrix")
def _(d, tmp):
    st_edit(st(d), lambda h, data: h[NORM].__setitem__("shape", [8, 8]))
    return st(d), q(NORM) + r" has shape \[8, 8\] but config\.json implies \[64\]"


@case("shape with a negative dimension")
def _(d, tmp):
    st_edit(st(d), lambda h, data: h[Q0].__setitem__("shape", [-64, -64]))
    return st(d), q(Q0) + r" has an invalid shape"


@case("shape with a non-integer dimension")
def _(d, tmp):
    st_edit(st(d), lambda h, data: h[Q0].__setitem__("shape", [64, "64"]))
    return st(d), q(Q0) + r" has an invalid shape"


@case("shape with too many dimensions")
def _(d, tmp):
    st_edit(st(d), lambda h, data: h[Q0].__setitem__("shape", [1] * 62 + [64, 64]))
    return st(d), q(Q0) + r" has 64 dimensions \(at most \d+\)"


@case("shape whose element count overflows")
def _(d, tmp):
    st_edit(st(d), lambda h, data: h[Q0].__setitem__("shape", [2**40, 2**40]))
    return st(d), q(Q0) + r" (shape overflows|spans \d+ bytes but its shape and dtype need)"


# Missing tensors, dtypes.

@case("missing tensor (renamed in the header)")
def _(d, tmp):
    def edit(h, data):
        h[DOWN1 + ".renamed"] = h.pop(DOWN1)
    st_edit(st(d), edit)
    return d, q(DOWN1) + r" is missing"


@case("header with only __metadata__")
def _(d, tmp):
    st_write(st(d), {"__metadata__": {"format": "pt"}}, b"")
    return d, q("model.embed_tokens.weight") + r" is missing"


@case("config has more layers than the checkpoint")
def _(d, tmp):
    edit_config(d, lambda c: c.__setitem__("num_hidden_layers", 3))
    return d, r"tensor 'model\.layers\.2\.[a-z_.]+' is missing"


@case("config num_hidden_layers absurdly large (2^30)")
def _(d, tmp):
    edit_config(d, lambda c: c.__setitem__("num_hidden_layers", 2**30))
    return d, r"tensor 'model\.layers\.\d+\.[a-z_.]+' is missing"


@case("config vocab_size disagrees with embed_tokens")
def _(d, tmp):
    edit_config(d, lambda c: c.__setitem__("vocab_size", 1024))
    return st(d), r"has shape \[512, 64\] but config\.json implies \[1024, 64\]"


@case("unsupported dtype I8")
def _(d, tmp):
    st_edit(st(d), lambda h, data: h[Q0].__setitem__("dtype", "I8"))
    return st(d), q(Q0) + r" has unsupported dtype I8 \(supported: .*F32"


@case("unsupported dtype F64")
def _(d, tmp):
    def edit(h, data):
        h[NORM]["dtype"] = "F64"
        h[NORM]["shape"] = [32]
    st_edit(st(d), edit)
    return st(d), q(NORM) + r" has unsupported dtype F64"


@case("dtype is not a string")
def _(d, tmp):
    st_edit(st(d), lambda h, data: h[Q0].__setitem__("dtype", 4))
    return st(d), q(Q0) + r" needs dtype"


# config.json.

@case("missing config.json")
def _(d, tmp):
    os.remove(cfg_path(d))
    return cfg_path(d), r"cannot read|no such file"


@case("config.json not JSON")
def _(d, tmp):
    with open(cfg_path(d), "w") as f:
        f.write('{"architectures": ["LlamaForCausalLM"], "hidden_size": 64,,}\n')
    return cfg_path(d), r"not valid JSON"


@case("config.json empty")
def _(d, tmp):
    open(cfg_path(d), "w").close()
    return cfg_path(d), r"not valid JSON"


@case("config.json is a list")
def _(d, tmp):
    write_json(cfg_path(d), [read_json(cfg_path(d))])
    return cfg_path(d), r"must be a JSON object"


@case("unknown architecture")
def _(d, tmp):
    edit_config(d, lambda c: c.__setitem__("architectures", ["GPT2LMHeadModel"]))
    return cfg_path(d), r"architecture 'GPT2LMHeadModel' is not supported \(supported: .*LlamaForCausalLM"


@case("architectures missing")
def _(d, tmp):
    edit_config(d, lambda c: c.pop("architectures"))
    return cfg_path(d), r"'architectures' must be a list .*LlamaForCausalLM"


@case("missing required key hidden_size")
def _(d, tmp):
    edit_config(d, lambda c: c.pop("hidden_size"))
    return cfg_path(d), r"required key 'hidden_size' is missing"


@case("missing required key num_attention_heads (head_dim absent too)")
def _(d, tmp):
    edit_config(d, lambda c: (c.pop("num_attention_heads"), c.pop("head_dim")))
    return cfg_path(d), r"required key 'num_attention_heads' is missing"


@case("hidden_size is a string")
def _(d, tmp):
    edit_config(d, lambda c: c.__setitem__("hidden_size", "64"))
    return cfg_path(d), r"'hidden_size' must be a positive integer"


@case("num_key_value_heads is 0")
def _(d, tmp):
    edit_config(d, lambda c: c.__setitem__("num_key_value_heads", 0))
    return cfg_path(d), r"'num_key_value_heads' must be a positive integer"


@case("num_attention_heads not a multiple of num_key_value_heads")
def _(d, tmp):
    edit_config(d, lambda c: c.__setitem__("num_key_value_heads", 3))
    return cfg_path(d), r"num_attention_heads \(4\) is not a multiple of num_key_value_heads \(3\)"


@case("odd head_dim")
def _(d, tmp):
    edit_config(d, lambda c: c.__setitem__("head_dim", 15))
    return cfg_path(d), r"head_dim 15 .* rotary dims"


@case("rms_norm_eps negative")
def _(d, tmp):
    edit_config(d, lambda c: c.__setitem__("rms_norm_eps", -1e-5))
    return cfg_path(d), r"'rms_norm_eps' must be a positive number"


@case("unsupported rope type yarn (rope_parameters)")
def _(d, tmp):
    edit_config(d, lambda c: c.__setitem__(
        "rope_parameters", {"rope_type": "yarn", "factor": 2.0, "rope_theta": 10000.0}))
    return cfg_path(d), r"rope_scaling type 'yarn' is not supported \(supported: .*linear"


@case("unsupported rope type dynamic (legacy rope_scaling)")
def _(d, tmp):
    def edit(c):
        c.pop("rope_parameters")
        c["rope_theta"] = 10000.0
        c["rope_scaling"] = {"type": "dynamic", "factor": 2.0}
    edit_config(d, edit)
    return cfg_path(d), r"rope_scaling type 'dynamic' is not supported"


@case("rope_scaling is not an object")
def _(d, tmp):
    def edit(c):
        c.pop("rope_parameters")
        c["rope_scaling"] = "linear"
    edit_config(d, edit)
    return cfg_path(d), r"rope_scaling must be an object"


@case("linear rope without factor")
def _(d, tmp):
    edit_config(d, lambda c: c.__setitem__("rope_parameters", {"rope_type": "linear", "rope_theta": 10000.0}))
    return cfg_path(d), r"rope_scaling of type linear needs a positive 'factor'"


@case("llama3 rope with low_freq_factor >= high_freq_factor")
def _(d, tmp):
    edit_config(d, lambda c: c.__setitem__("rope_parameters", {
        "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 4.0, "high_freq_factor": 1.0,
        "original_max_position_embeddings": 64, "rope_theta": 10000.0}))
    return cfg_path(d), r"llama3 rope_scaling needs low_freq_factor < high_freq_factor"


# Weight files: missing, sharded.

@case("missing model.safetensors entirely")
def _(d, tmp):
    os.remove(st(d))
    return d, r"no model\.safetensors or model\.safetensors\.index\.json"


@case("sharded: index points to a missing shard")
def _(d, tmp):
    files = st_split(d, 2)
    os.remove(os.path.join(d, files[1]))
    return os.path.join(d, files[1]), r"cannot open .*no such file"


@case("sharded: truncated shard")
def _(d, tmp):
    files = st_split(d, 3)
    shard = os.path.join(d, files[2])
    truncate(shard, os.path.getsize(shard) - 64)
    return shard, r"run past the end of the data"


@case("sharded: index not JSON")
def _(d, tmp):
    st_split(d, 2)
    index = os.path.join(d, "model.safetensors.index.json")
    with open(index, "w") as f:
        f.write('{"weight_map": {')
    return index, r"not valid JSON"


@case("sharded: index without weight_map")
def _(d, tmp):
    st_split(d, 2)
    index = os.path.join(d, "model.safetensors.index.json")
    write_json(index, {"metadata": {}})
    return index, r"no 'weight_map' object"


@case("sharded: weight_map names a file outside the directory")
def _(d, tmp):
    st_split(d, 2)
    index = os.path.join(d, "model.safetensors.index.json")
    idx = read_json(index)
    idx["weight_map"][Q0] = "../../etc/passwd"
    write_json(index, idx)
    return index, re.escape(f"weight_map entry for '{Q0}' must be a file name in the model directory")


@case("sharded: tensor missing from the shard the index names")
def _(d, tmp):
    files = st_split(d, 2)
    shard = os.path.join(d, files[0])
    st_edit(shard, lambda h, data: h.__setitem__("renamed", h.pop(st_tensors(h)[0])))
    return d, r"tensor '[a-z0-9_.]+' is missing"


# Bad command-line values (the model itself is fine).

@case("--prompt-ids with a token id >= vocab")
def _(d, tmp):
    return "--prompt-ids", r"entry 3 \('512'\) is not a token id in \[0, 512\)", \
        ["--prompt-ids", "1,2,512", "--max-tokens", "2"]


@case("--prompt-ids with a negative id")
def _(d, tmp):
    return "--prompt-ids", r"entry 2 \('-1'\) is not a token id", \
        ["--prompt-ids", "1,-1", "--max-tokens", "2"]


@case("--prompt-ids '1,x'")
def _(d, tmp):
    return "--prompt-ids", r"entry 2 \('x'\) is not a token id", ["--prompt-ids", "1,x", "--max-tokens", "2"]


@case("--prompt-ids with an empty entry")
def _(d, tmp):
    return "--prompt-ids", r"entry 2 \(''\) is not a token id", ["--prompt-ids", "1,,2", "--max-tokens", "2"]


@case("--prompt-ids with a huge number")
def _(d, tmp):
    return "--prompt-ids", r"entry 1 \('99999999999999999999999'\) is not a token id", \
        ["--prompt-ids", "99999999999999999999999", "--max-tokens", "2"]


@case("--prompt-ids missing")
def _(d, tmp):
    return "--prompt-ids", r"--prompt-ids is required", ["--max-tokens", "2"]


@case("--max-tokens 0")
def _(d, tmp):
    return "--max-tokens", r"max_tokens must be in \[1, \d+\], got 0", ["--prompt-ids", "1,2,3", "--max-tokens", "0"]


@case("--max-tokens not a number")
def _(d, tmp):
    return "--max-tokens", r"max_tokens must be an integer, got '2x'", ["--prompt-ids", "1,2,3", "--max-tokens", "2x"]


@case("--temperature -1")
def _(d, tmp):
    return "--temperature", r"temperature must be in \[0, .*\], got -1", PROMPT_ARGS + ["--temperature", "-1"]


@case("--temperature nan")
def _(d, tmp):
    return "--temperature", r"temperature must be a number, got 'nan'", PROMPT_ARGS + ["--temperature", "nan"]


@case("prompt + max_tokens beyond max_model_len")
def _(d, tmp):
    return "max_model_len", r"prompt \(3 tokens\) \+ max_tokens \(2\) = 5 exceeds max_model_len 4", \
        PROMPT_ARGS + ["--max-model-len", "4"]


@case("unknown flag")
def _(d, tmp):
    return "--no-such-flag", r"unknown option '--no-such-flag'", PROMPT_ARGS + ["--no-such-flag", "3"]


@case("--config ini file with an unknown key")
def _(d, tmp):
    ini = os.path.join(tmp, "bad.ini")
    with open(ini, "w") as f:
        f.write(f"; atoll settings\n[atoll]\nmodel = {d}\nprompt_ids = 1,2,3\nmax_tokenz = 2\n")
    return f"{ini}:5", r"unknown configuration key 'max_tokenz'", ["--config", ini]


@case("--config ini file with an out-of-range value")
def _(d, tmp):
    ini = os.path.join(tmp, "bad.ini")
    with open(ini, "w") as f:
        f.write(f"model = {d}\nprompt_ids = 1,2,3\nmax_tokens = 0\n")
    return f"{ini}:3", r"max_tokens must be in \[1,", ["--config", ini]


# --- runner -----------------------------------------------------------------

def run_atoll(atoll, model_dir, args):
    return subprocess.run([atoll, "generate", "--model", model_dir, *args], capture_output=True,
                          text=True, errors="replace", timeout=TIMEOUT_S, env=ENV)


def crash_reason(p):
    """Why p's exit is not a clean failure (None if it is)."""
    if p.returncode < 0:
        return f"killed by signal {-p.returncode}"
    if p.returncode >= 128:
        return f"exit code {p.returncode} (crash/abort)"
    for marker in SANITIZER_MARKERS:
        if marker in p.stderr:
            return f"sanitizer report ({marker!r})"
    return None


def fresh_copy(good, tmp):
    d = os.path.join(tmp, "model")
    shutil.copytree(good, d, ignore=shutil.ignore_patterns("golden"))
    return d


def check_case(atoll, good, name, fn):
    """Returns None on success or the failure reason."""
    with tempfile.TemporaryDirectory(prefix="atoll_bad_") as tmp:
        d = fresh_copy(good, tmp)
        try:
            where, pattern, *rest = fn(d, tmp)
        except Exception as exc:  # a broken case must not hide the others
            return f"could not prepare the case: {exc!r}"
        args = rest[0] if rest else PROMPT_ARGS
        try:
            p = run_atoll(atoll, d, args)
        except subprocess.TimeoutExpired:
            return f"timed out after {TIMEOUT_S} s"
        why = crash_reason(p)
        if why is None and p.returncode == 0:
            why = "exit code 0 (the damage was not detected)"
        if why is None and where not in p.stderr:
            why = f"stderr does not name {where!r}"
        if why is None and not re.search(pattern, p.stderr, re.IGNORECASE):
            why = f"stderr does not match /{pattern}/"
        return None if why is None else f"{why}; exit {p.returncode}; stderr:\n{p.stderr.rstrip()}"


def check_control(atoll, good, name, prepare):
    """The helpers themselves: an undamaged rewrite must still generate."""
    with tempfile.TemporaryDirectory(prefix="atoll_ok_") as tmp:
        d = fresh_copy(good, tmp)
        prepare(d)
        p = run_atoll(atoll, d, PROMPT_ARGS)
        why = crash_reason(p)
        if why is None and p.returncode != 0:
            why = f"exit code {p.returncode}"
        if why is None and (not p.stdout or len(p.stdout.splitlines()[0].split()) != 2):
            why = f"expected 2 token ids on stdout, got {p.stdout!r}"
        return None if why is None else f"{why}; stderr:\n{p.stderr.rstrip()}"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: test_bad_models.py PATH_TO_ATOLL GOOD_FIXTURE_DIR")
    atoll, good = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    passed = failed = 0

    def report(name, reason):
        nonlocal passed, failed
        if reason is None:
            passed += 1
            print(f"ok {name}", flush=True)
        else:
            failed += 1
            print(f"FAIL {name}: {reason}", flush=True)

    controls = [
        ("control: untouched copy generates", lambda d: None),
        ("control: header rewritten unchanged generates", lambda d: st_edit(st(d), lambda h, data: None)),
        ("control: split into 3 shards generates", lambda d: st_split(d, 3)),
    ]
    for name, prepare in controls:
        report(name, check_control(atoll, good, name, prepare))
    for name, fn in CASES:
        report(name, check_case(atoll, good, name, fn))
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
