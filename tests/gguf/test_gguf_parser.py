#!/usr/bin/env python3
"""tests/gguf/test_gguf_parser.py — atoll's GGUF parser (runtime/model/gguf.c)
against the gguf Python package: what it reads from files GGUFWriter wrote,
its typed accessors, version 2 files, and its behaviour on every truncation
of a file's header and on random byte corruption.

    python3 test_gguf_parser.py PATH_TO_GGUF_TOOL

- Metadata of every value type (all integer widths, float32/64, bool,
  strings incl. empty and non-ASCII, arrays of each, arrays of strings,
  arrays of arrays three deep), a custom general.alignment and tensors of
  several types: gguf_tool dump must report the values written and the
  tensor infos GGUFReader reports (types, shapes, absolute data offsets,
  sizes, data section start).
- The typed accessors (gguf_tool get): values, integer range checks,
  type mismatches (message naming the key and both types), absent keys.
- A version 2 file (ggufraw.py) parses like version 3.
- Every cut of the file up to its data section, and cuts in the data, fail
  cleanly with exit 1 and a message naming the file unless the cut only
  drops trailing padding; 400 random corruptions of the header bytes never
  crash (exit 0 or 1; under the sanitizer build, no report)."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q, GGUFValueType as V

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ggufraw as G  # noqa: E402

SANITIZER_MARKERS = ("AddressSanitizer", "LeakSanitizer", "runtime error:", "UndefinedBehaviorSanitizer")
failures = 0


def check(ok, what, detail=""):
    global failures
    if not ok:
        failures += 1
        print(f"FAIL {what}{': ' + detail if detail else ''}")
    return ok


def tool(*args):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=60)


# key -> (GGUFValueType name as atoll reports it, value as dump reports it)
def write_file(path):
    w = gguf.GGUFWriter(path, "llama")
    w.add_custom_alignment(64)
    expect = {"general.architecture": ("string", "llama"), "general.alignment": ("uint32", 64)}

    def put(key, tname, value, dumped=None):
        expect[key] = (tname, value if dumped is None else dumped)

    w.add_uint8("t.u8", 200); put("t.u8", "uint8", 200)
    w.add_int8("t.i8", -100); put("t.i8", "int8", -100)
    w.add_uint16("t.u16", 60000); put("t.u16", "uint16", 60000)
    w.add_int16("t.i16", -30000); put("t.i16", "int16", -30000)
    w.add_uint32("t.u32", 4000000000); put("t.u32", "uint32", 4000000000)
    w.add_int32("t.i32", -2000000000); put("t.i32", "int32", -2000000000)
    w.add_float32("t.f32", 3.25); put("t.f32", "float32", 3.25)
    w.add_uint64("t.u64", 2**63 + 5); put("t.u64", "uint64", str(2**63 + 5))
    w.add_int64("t.i64", -2**62); put("t.i64", "int64", -2**62)
    w.add_float64("t.f64", 1 / 3); put("t.f64", "float64", 1 / 3)
    w.add_bool("t.bool_t", True); put("t.bool_t", "bool", True)
    w.add_bool("t.bool_f", False); put("t.bool_f", "bool", False)
    w.add_string("t.str", "héllo wörld ✓"); put("t.str", "string", "héllo wörld ✓")

    def arr(of, items):
        return {"array_of": of, "items": items}

    w.add_array("t.strs", ["a", "bc", "", "ü"]); put("t.strs", "array", arr("string", ["a", "bc", "", "ü"]))
    w.add_array("t.ints", [1, -2, 3]); put("t.ints", "array", arr("int32", [1, -2, 3]))
    w.add_array("t.floats", [0.5, -1.25]); put("t.floats", "array", arr("float32", [0.5, -1.25]))
    w.add_array("t.bools", [True, False]); put("t.bools", "array", arr("bool", [True, False]))
    w.add_key_value("t.u8s", [1, 2, 255], V.ARRAY, sub_type=V.UINT8)
    put("t.u8s", "array", arr("uint8", [1, 2, 255]))
    w.add_key_value("t.f64s", [0.1, 0.2], V.ARRAY, sub_type=V.FLOAT64)
    put("t.f64s", "array", arr("float64", [0.1, 0.2]))
    w.add_key_value("t.u64s", [2**40, 7], V.ARRAY, sub_type=V.UINT64)
    put("t.u64s", "array", arr("uint64", [2**40, 7]))
    w.add_array("t.nested", [[1, 2], [3, 4, 5]])
    put("t.nested", "array", arr("array", [arr("int32", [1, 2]), arr("int32", [3, 4, 5])]))
    w.add_array("t.nested_strs", [["a", "b"], ["c"]])
    put("t.nested_strs", "array", arr("array", [arr("string", ["a", "b"]), arr("string", ["c"])]))
    w.add_array("t.deep", [[[1], [2, 3]], [[4]]])
    put("t.deep", "array", arr("array", [arr("array", [arr("int32", [1]), arr("int32", [2, 3])]),
                                         arr("array", [arr("int32", [4])])]))

    rng = np.random.default_rng(7)
    w.add_tensor("a.f32", rng.standard_normal((3, 5)).astype(np.float32))
    w.add_tensor("b.f16", rng.standard_normal(7).astype(np.float16))
    w.add_tensor("c.q4_0", gguf.quants.quantize(rng.standard_normal((2, 64)).astype(np.float32), Q.Q4_0),
                 raw_dtype=Q.Q4_0)
    w.add_tensor("d.i32", np.arange(4, dtype=np.int32))
    w.add_tensor("e.q8_0", gguf.quants.quantize(rng.standard_normal((3, 32)).astype(np.float32), Q.Q8_0),
                 raw_dtype=Q.Q8_0)
    w.add_tensor("f.bf16", gguf.quants.quantize(rng.standard_normal((2, 3, 4)).astype(np.float32), Q.BF16),
                 raw_dtype=Q.BF16)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return expect


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and float(a) == float(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b and type(a) is type(b)


def f32(v):
    return float(np.float32(v))


def test_roundtrip(gt, path):
    expect = write_file(path)
    p = tool(gt, "dump", path)
    if not check(p.returncode == 0, "dump of a GGUFWriter file", p.stderr):
        return
    d = json.loads(p.stdout)
    check(d["version"] == 3, "version", str(d["version"]))
    check(d["alignment"] == 64, "general.alignment", str(d["alignment"]))
    for key, (tname, value) in expect.items():
        got = d["kv"].get(key)
        if got is None:
            check(False, f"key {key}", "missing from the dump")
            continue
        if tname == "float32" or (isinstance(value, dict) and value.get("array_of") == "float32"):
            value = f32(value) if not isinstance(value, dict) else dict(value, items=[f32(x) for x in value["items"]])
        check(got["type"] == tname and same(got["value"], value), f"key {key}",
              f"got {got}, wrote {tname} {value!r}")
    extra = set(d["kv"]) - set(expect)
    check(not extra, "keys", f"unexpected keys {sorted(extra)}")

    r = gguf.GGUFReader(path)
    check(d["data_offset"] == r.data_offset, "data section start", f"{d['data_offset']} vs {r.data_offset}")
    want_dtype = {Q.F32: "f32", Q.F16: "f16", Q.Q4_0: "q4_0", Q.I32: "none", Q.Q8_0: "q8_0", Q.BF16: "bf16"}
    tensors = {t["name"]: t for t in d["tensors"]}
    check(len(tensors) == len(r.tensors), "tensor count")
    for t in r.tensors:
        g = tensors.get(t.name)
        if not check(g is not None, f"tensor {t.name}", "missing"):
            continue
        check(g["ggml_type"] == int(t.tensor_type) and g["ne"] == [int(x) for x in t.shape] and
              g["file_offset"] == t.data_offset and g["bytes"] == t.n_bytes and
              g["dtype"] == want_dtype[t.tensor_type], f"tensor {t.name}",
              f"atoll {g}, gguf type {t.tensor_type.name} ne {list(t.shape)} at {t.data_offset} "
              f"({t.n_bytes} bytes)")
    print(f"ok   dump: {len(expect)} keys, {len(tensors)} tensors as written")


def test_accessors(gt, path):
    cases = [  # key, kind, expected output (JSON value, "absent", or "error: ...words")
        ("t.u32", "u32", 4000000000), ("t.u8", "u32", 200), ("t.u16", "i32", 60000),
        ("t.i32", "i32", -2000000000), ("t.i8", "i32", -100),
        ("t.u32", "i32", "error: out of range"), ("t.i32", "u32", "error: out of range"),
        ("t.u64", "u32", "error: out of range"), ("t.i64", "i32", "error: out of range"),
        ("t.str", "u32", "error: key 't.str' has type string, expected uint32"),
        ("t.f32", "i32", "error: has type float32"),
        ("t.nope", "u32", "absent"), ("t.nope", "strings", "absent"),
        ("t.f32", "f32", 3.25), ("t.f64", "f32", f32(1 / 3)), ("t.u8", "f32", "error: expected float32"),
        ("t.bool_t", "bool", True), ("t.bool_f", "bool", False), ("t.u8", "bool", "error: expected bool"),
        ("t.str", "string", "héllo wörld ✓"),
        ("general.architecture", "string", "llama"), ("t.strs", "string", "error: is an array of string"),
        ("t.strs", "strings", ["a", "bc", "", "ü"]),
        ("t.ints", "strings", "error: key 't.ints' is an array of int32, expected an array of strings"),
        ("t.nested_strs", "strings", "error: is an array of array"),
        ("t.floats", "f32s", [0.5, -1.25]), ("t.f64s", "f32s", [f32(0.1), f32(0.2)]),
        ("t.ints", "f32s", "error: expected an array of float32"),
        ("t.ints", "i32s", [1, -2, 3]), ("t.u8s", "i32s", [1, 2, 255]),
        ("t.u64s", "i32s", "error: out of range"), ("t.strs", "i32s", "error: expected an array of int32"),
        ("t.u8", "i32s", "error: expected an array of int32"),
    ]
    bad = 0
    for key, kind, want in cases:
        p = tool(gt, "get", path, key, kind)
        out = p.stdout.strip()
        if isinstance(want, str) and want.startswith("error:"):
            ok = p.returncode == 1 and out.startswith("error:") and path in out and \
                all(w in out for w in want[len("error: "):].split(" ... "))
        elif want == "absent":
            ok = p.returncode == 0 and out == "absent"
        else:
            try:
                ok = p.returncode == 0 and same(json.loads(out), want)
            except json.JSONDecodeError:
                ok = False
        bad += not check(ok, f"get {key} as {kind}", f"got {out!r} (exit {p.returncode}), want {want!r}")
    if not bad:
        print(f"ok   accessors: {len(cases)} typed reads")


def test_version2(gt, tmp):
    b = G.tiny_llama()
    b.version = 2
    b.kv("t.empty", G.STRING, "")  # (GGUFWriter does not write empty strings)
    path = os.path.join(tmp, "v2.gguf")
    with open(path, "wb") as f:
        f.write(b.build())
    p = tool(gt, "dump", path)
    if check(p.returncode == 0, "version 2 file", p.stderr):
        d = json.loads(p.stdout)
        ok = d["version"] == 2 and d["kv"]["llama.block_count"]["value"] == 2 and \
            d["kv"]["t.empty"] == {"type": "string", "value": ""} and len(d["tensors"]) == len(b.tensors)
        if check(ok, "version 2 contents", p.stdout[:300]):
            print("ok   version 2 file parses")


def test_truncation_and_corruption(gt, path, tmp):
    with open(path, "rb") as f:
        blob = f.read()
    d = json.loads(tool(gt, "dump", path).stdout)
    data_end = max(t["file_offset"] + t["bytes"] for t in d["tensors"])
    cuts = list(range(0, d["data_offset"] + 8)) + list(range(d["data_offset"] + 8, len(blob), 97)) + \
        list(range(data_end - 2, len(blob)))
    cut_path = os.path.join(tmp, "cut.gguf")
    bad = 0
    for n in sorted(set(c for c in cuts if 0 <= c < len(blob))):
        with open(cut_path, "wb") as f:
            f.write(blob[:n])
        p = tool(gt, "dump", cut_path)
        should_fail = n < data_end
        ok = (p.returncode == 1 and cut_path in p.stderr) if should_fail else p.returncode == 0
        ok = ok and not any(m in p.stderr for m in SANITIZER_MARKERS)
        bad += not check(ok, f"file cut at byte {n} of {len(blob)}",
                         f"exit {p.returncode}, stderr {p.stderr.strip()[:300]!r}")
    if not bad:
        print(f"ok   truncation: {len(set(cuts))} cuts fail cleanly (the data ends at byte {data_end}; "
              f"cuts in the trailing padding parse)")

    rng = np.random.default_rng(1234)
    bad = 0
    for i in range(400):
        b = bytearray(blob)
        for _ in range(int(rng.integers(1, 4))):
            pos = int(rng.integers(4, d["data_offset"]))
            b[pos] = int(rng.integers(0, 256)) if rng.random() < 0.7 else b[pos] ^ (1 << int(rng.integers(0, 8)))
        with open(cut_path, "wb") as f:
            f.write(b)
        p = tool(gt, "dump", cut_path)
        ok = p.returncode in (0, 1) and not any(m in p.stderr for m in SANITIZER_MARKERS)
        ok = ok and (p.returncode == 0 or cut_path in p.stderr)
        bad += not check(ok, f"corruption {i}", f"exit {p.returncode}, stderr {p.stderr.strip()[:300]!r}")
    if not bad:
        print("ok   400 random header corruptions: clean exit 0 or 1")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    gt = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "all_types.gguf")
        test_roundtrip(gt, path)
        test_accessors(gt, path)
        test_version2(gt, tmp)
        test_truncation_and_corruption(gt, path, tmp)
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
