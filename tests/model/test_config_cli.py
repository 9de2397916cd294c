#!/usr/bin/env python3
"""tests/model/test_config_cli.py — the command line and ini configuration:
subcommand dispatch, --help, --config files, and flags overriding the file."""
import os
import re
import subprocess
import sys
import tempfile

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
results = []


def run(*args):
    return subprocess.run([ATOLL, *args], capture_output=True, text=True, timeout=120, env=ENV)


def check(name, ok, detail=""):
    results.append(ok)
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))


def n_tokens(p):
    return len(p.stdout.splitlines()[0].split()) if p.returncode == 0 and p.stdout else -1


ATOLL, FIXTURE = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory() as tmp:
    p = run("--help")
    check("atoll --help lists the commands", p.returncode == 0 and "generate" in p.stdout and "version" in p.stdout, p.stdout)
    p = run("frobnicate")
    check("unknown command exits 2 naming it", p.returncode == 2 and "unknown command 'frobnicate'" in p.stderr, p.stderr)
    p = run("version")
    check("version", p.returncode == 0 and re.fullmatch(r"atoll \d+\.\d+\.\d+\n", p.stdout) is not None, p.stdout)
    p = run("generate", "--help")
    check("generate --help lists its flags", p.returncode == 0 and "--max-tokens" in p.stdout and "--logits-out" in p.stdout, p.stdout)

    ini = os.path.join(tmp, "atoll.ini")
    with open(ini, "w") as f:
        f.write(f"; a serving config\n[atoll]\nmodel = {FIXTURE}\nprompt_ids = 5,6,7\nmax_tokens = 3\nignore_eos = true\n")
    p = run("generate", "--config", ini)
    check("values come from the ini file", n_tokens(p) == 3, p.stderr)
    p = run("generate", "--max-tokens", "5", "--config", ini)
    check("a flag overrides the file (wherever it stands)", n_tokens(p) == 5, p.stderr)
    p = run("generate", "--config", ini, "--max-tokens=4")
    check("--flag=value form", n_tokens(p) == 4, p.stderr)
    p = run("generate", "--config", ini, "--max-tokens", "0")
    check("out-of-range flag is refused with its range", p.returncode == 2 and "max_tokens must be in [1," in p.stderr, p.stderr)
    p = run("generate", "--config", ini, "--seed")
    check("flag without a value", p.returncode == 2 and "needs a value" in p.stderr, p.stderr)
    with open(ini, "a") as f:
        f.write("max_tokenz = 3\n")
    p = run("generate", "--config", ini)
    check("unknown ini key names file and line", p.returncode == 2 and f"{ini}:7" in p.stderr and "max_tokenz" in p.stderr, p.stderr)
    p = run("generate", "--config", os.path.join(tmp, "missing.ini"))
    check("missing config file", p.returncode == 2 and "missing.ini" in p.stderr, p.stderr)

failed = results.count(False)
print(f"{len(results) - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
