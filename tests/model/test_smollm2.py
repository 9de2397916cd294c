#!/usr/bin/env python3
"""tests/model/test_smollm2.py — the default model end to end against
transformers (tests/reference/smollm2/, made by make_smollm2_goldens.py from
the same GGUF file): `atoll generate --chat` on 5 prompts must give the
32 greedy tokens of transformers on at least 4 of them, the logits of the
first decode step must agree to cosine similarity >= 0.999, and the French
capital question must be answered with Paris."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def generate(atoll, model, prompt, n, logits_out=None, ignore_eos=True):
    cmd = [atoll, "generate", "--model", model, "--chat", "--prompt", prompt, "--max-tokens", str(n),
           "--temperature", "0", "--threads", "1"]
    if ignore_eos:
        cmd.append("--ignore-eos")
    if logits_out:
        cmd += ["--logits-out", logits_out]
    p = subprocess.run(cmd, capture_output=True, timeout=300, env=ENV)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {p.returncode}\n{p.stderr.decode(errors='replace')}")
    lines = p.stdout.decode().split("\n", 1)
    return [int(t) for t in lines[0].split()], lines[1] if len(lines) > 1 else ""


def main():
    atoll, model, golden_dir = sys.argv[1:4]
    with open(os.path.join(golden_dir, "goldens.json")) as f:
        goldens = json.load(f)
    first_logits = np.load(os.path.join(golden_dir, "first_logits.npy"))
    failures, matched = 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, g in enumerate(goldens["prompts"]):
            out = os.path.join(tmp, f"{i}.npy")
            tokens, _ = generate(atoll, model, g["prompt"], len(g["greedy"]), out)
            logits = np.load(out)[0].astype(np.float64)
            want = first_logits[i].astype(np.float64)
            cos = float(logits @ want / (np.linalg.norm(logits) * np.linalg.norm(want)))
            same = tokens == g["greedy"]
            matched += same
            print(f"{'ok  ' if same else 'diff'} prompt {i}: greedy tokens {'identical' if same else 'differ'}; "
                  f"first-step logits cosine {cos:.6f}")
            if not same:
                print(f"     got  {tokens}\n     want {g['greedy']}")
            if cos < 0.999:
                print(f"FAIL prompt {i}: cosine {cos:.6f} < 0.999")
                failures += 1
    if matched < 4:
        print(f"FAIL greedy continuations match on {matched} of {len(goldens['prompts'])} prompts (need 4)")
        failures += 1
    _, text = generate(atoll, model, "What is the capital of France?", 40, ignore_eos=False)
    print(f"answer: {text.strip()!r}")
    if "Paris" not in text:
        print("FAIL the answer does not name Paris")
        failures += 1
    print(f"{0 if failures else 1} passed, {1 if failures else 0} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
