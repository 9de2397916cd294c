#!/usr/bin/env python3
"""tests/model/check_generate.py — `atoll generate` end to end against the
transformers goldens of a fixture: the token ids on stdout's first line and
the --logits-out .npy. With --np N it runs under `mpirun -np N` and also
checks that the tokens equal those of a plain single-process run. With --legacy-config it first rewrites config.json
the way transformers 4.x wrote it (top-level rope_theta, rope_scaling,
partial_rotary_factor and torch_dtype instead of rope_parameters and dtype)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}


def run_generate(atoll, fixture, prompt, n_tokens, logits_out, np_ranks):
    cmd = [atoll, "generate", "--model", fixture, "--prompt-ids", ",".join(map(str, prompt)),
           "--max-tokens", str(n_tokens), "--ignore-eos", "--logits-out", logits_out, "--threads", "1"]
    if np_ranks:
        cmd = ["mpirun", "--oversubscribe", "-np", str(np_ranks)] + cmd
    env = dict(os.environ, **MPI_ENV)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {p.returncode}\n{p.stderr}")
    first = p.stdout.splitlines()[0] if p.stdout else ""
    return [int(t) for t in first.split()], np.load(logits_out)


def legacy_copy(fixture, tmp):
    """The fixture in tmp with a transformers 4.x style config.json."""
    out = os.path.join(tmp, "legacy")
    os.mkdir(out)
    for name in os.listdir(fixture):
        if name != "config.json":
            os.symlink(os.path.abspath(os.path.join(fixture, name)), os.path.join(out, name))
    with open(os.path.join(fixture, "config.json")) as f:
        config = json.load(f)
    rope = config.pop("rope_parameters")
    config["rope_theta"] = rope.pop("rope_theta")
    if "partial_rotary_factor" in rope:
        config["partial_rotary_factor"] = rope.pop("partial_rotary_factor")
    kind = rope.pop("rope_type")
    config["rope_scaling"] = None if kind == "default" else dict(rope, type=kind)
    config["torch_dtype"] = config.pop("dtype")
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("atoll")
    ap.add_argument("fixture")
    ap.add_argument("--prompt", type=int, default=1, help="golden prompt index")
    ap.add_argument("--np", type=int, default=0, help="ranks for mpirun; 0 runs without mpirun")
    ap.add_argument("--legacy-config", action="store_true", help="rewrite config.json as transformers 4.x did")
    args = ap.parse_args()
    golden = os.path.join(args.fixture, "golden")
    prompt = np.load(f"{golden}/prompt{args.prompt}_ids.npy").tolist()
    want_tokens = np.load(f"{golden}/prompt{args.prompt}_greedy.npy").tolist()
    want_logits = np.load(f"{golden}/prompt{args.prompt}_greedy_logits.npy")
    bf16 = "bf16" in os.path.basename(args.fixture.rstrip("/"))
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = legacy_copy(args.fixture, tmp) if args.legacy_config else args.fixture
        tokens, logits = run_generate(args.atoll, model_dir, prompt, len(want_tokens),
                                      f"{tmp}/logits.npy", args.np)
        if tokens != want_tokens:
            print(f"FAIL tokens differ from transformers:\n got  {tokens}\n want {want_tokens}")
            failures += 1
        if logits.shape != want_logits.shape:
            print(f"FAIL logits shape {logits.shape}, want {want_logits.shape}")
            failures += 1
        elif not bf16:
            # The bound for F32 weights. BF16 goldens come from BF16
            # activations and are compared by tokens only (see test_fixtures.c).
            delta = float(np.abs(logits - want_logits).max())
            bound = 1e-4 * float(np.abs(want_logits).max())
            if delta > bound:
                print(f"FAIL logits max |delta| {delta:.3g} > {bound:.3g}")
                failures += 1
        if args.np:
            plain, _ = run_generate(args.atoll, args.fixture, prompt, len(want_tokens),
                                    f"{tmp}/plain.npy", 0)
            if plain != tokens:
                print(f"FAIL mpirun -np {args.np} tokens {tokens} != plain run {plain}")
                failures += 1
    print(f"{1 - min(failures, 1)} passed, {min(failures, 1)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
