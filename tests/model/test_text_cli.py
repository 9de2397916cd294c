#!/usr/bin/env python3
"""tests/model/test_text_cli.py — the text commands end to end: `atoll
tokenize` and `atoll detokenize` against Hugging Face `tokenizers` on a
fixture tokenizer.json, and `atoll chat` driven through stdin on the default
model (streamed answer, /reset, /quit)."""
import json
import os
import subprocess
import sys
import tempfile

from tokenizers import Tokenizer

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
results = []


def run(*args, stdin=None):
    return subprocess.run([ATOLL, *args], input=stdin, capture_output=True, timeout=300, env=ENV)


def check(name, ok, detail=""):
    results.append(ok)
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))


ATOLL, TOKENIZER_DIR, DEFAULT_MODEL = sys.argv[1:4]
oracle = Tokenizer.from_file(os.path.join(TOKENIZER_DIR, "tokenizer.json"))
texts = ["Hello world", "naïve café, 12345 — 你好世界 🙂👩‍👩‍👧\n\ttabs  and  spaces  ",
         "<|im_start|>user\nhi<|im_end|>"]
for text in texts:
    p = run("tokenize", "--model", TOKENIZER_DIR, "--text", text)
    lines = p.stdout.decode().splitlines()
    want = oracle.encode(text, add_special_tokens=False).ids
    check(f"tokenize {text[:12]!r}: one JSON line equal to tokenizers",
          p.returncode == 0 and len(lines) == 1 and json.loads(lines[0]) == want, p.stdout + p.stderr)
    p = run("tokenize", "--model", TOKENIZER_DIR, "--text", text, "--special")
    want_special = oracle.encode(text, add_special_tokens=True).ids
    check(f"tokenize --special {text[:12]!r} adds what the post-processor adds",
          p.returncode == 0 and json.loads(p.stdout) == want_special and want_special != want,
          p.stdout + p.stderr)
    p = run("detokenize", "--model", TOKENIZER_DIR, "--ids", ",".join(map(str, want_special)))
    check(f"detokenize {text[:12]!r} writes exactly the decoded bytes",
          p.returncode == 0 and p.stdout == oracle.decode(want_special, skip_special_tokens=False).encode(),
          p.stdout + p.stderr)

with tempfile.NamedTemporaryFile("wb", suffix=".txt", delete=False) as f:
    f.write(texts[1].encode())
p = run("tokenize", "--model", TOKENIZER_DIR, "--file", f.name)
check("tokenize --file", p.returncode == 0 and json.loads(p.stdout) == oracle.encode(texts[1], add_special_tokens=False).ids,
      p.stdout + p.stderr)
p = run("tokenize", "--model", TOKENIZER_DIR, "--file", f.name, "--text", "x")
check("--text with --file is refused", p.returncode != 0 and b"not both" in p.stderr, p.stderr)
os.unlink(f.name)
p = run("detokenize", "--model", TOKENIZER_DIR, "--ids", "1,999999")
check("detokenize of an id outside the vocabulary", p.returncode != 0 and b"--ids entry 2" in p.stderr, p.stderr)

conversation = b"What is the capital of France?\n/reset\n\nWhat is 2 plus 2?\n/quit\nnever read\n"
p = run("chat", "--model", DEFAULT_MODEL, "--max-tokens", "48", "--threads", "1", stdin=conversation)
out = p.stdout.decode()
check("chat answers, resets and quits", p.returncode == 0 and "Paris" in out and "(conversation reset)" in out
      and out.index("Paris") < out.index("(conversation reset)"), out + p.stderr.decode())
check("chat answers the turn after /reset", len(out.split("(conversation reset)")[1].strip()) > 0, out)
p = run("chat", "--model", DEFAULT_MODEL, "--max-tokens", "8", "--threads", "1", stdin=b"")
check("chat leaves at end of input", p.returncode == 0, p.stderr)

failed = results.count(False)
print(f"{len(results) - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
