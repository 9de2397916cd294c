#!/usr/bin/env python3
"""Unsupported or malformed chat templates: each must fail (never render
silently) with a message that names the construct and its line:column.

usage: test_template_errors.py RENDER_BATCH
"""
import json
import os
import subprocess
import sys
import tempfile

# (template, substrings the error must contain: the construct, then "line L:C")
CASES = [
    ("{% include 'other.jinja' %}", ["unsupported tag 'include'", "line 1:4"]),
    ("text\n{% extends 'base.jinja' %}", ["unsupported tag 'extends'", "line 2:4"]),
    ("{% import 'm.jinja' as m %}", ["unsupported tag 'import'", "line 1:4"]),
    ("{% from 'm.jinja' import x %}", ["unsupported tag 'from'", "line 1:4"]),
    ("{% block body %}x{% endblock %}", ["unsupported tag 'block'", "line 1:4"]),
    ("a\n  {% filter upper %}x{% endfilter %}", ["unsupported tag 'filter'", "line 2:6"]),
    ("{% call m() %}x{% endcall %}", ["unsupported tag 'call'", "line 1:4"]),
    ("{% autoescape true %}x{% endautoescape %}", ["unsupported tag 'autoescape'", "line 1:4"]),
    ("{% do x.append(1) %}", ["unknown tag 'do'", "line 1:4"]),
    ("{% frobnicate %}", ["unknown tag 'frobnicate'", "line 1:4"]),
    ("{{ x | frobnicate }}", ["no filter named 'frobnicate'", "line 1:8"]),
    ("line1\n{{ x | urlize }}", ["unsupported filter 'urlize'", "line 2:8"]),
    ("{{ x | wordwrap(10) }}", ["unsupported filter 'wordwrap'", "line 1:8"]),
    ("{% if x is frobnicated %}y{% endif %}", ["no test named 'frobnicated'", "line 1:12"]),
    ("{% if true %}{{ x | frobnicate }}{% endif %}", ["no filter named 'frobnicate'", "line 1:21"]),
    ("{{ x ", ["unterminated '{{'", "line 1:1"]),
    ("ok\n{% if x", ["unterminated '{%'", "line 2:1"]),
    ("{% if x %}never closed", ["unclosed block", "'endif'", "line 1:11"]),
    ("{% for x in y %}\n{% if x %}\n{% endfor %}", ["unexpected tag 'endfor'", "line 3:4"]),
    ("{% endif %}", ["unexpected tag 'endif'", "line 1:4"]),
    ("{# comment never closed", ["missing end of comment tag", "line 1:1"]),
    ("{{ 'unterminated }}", ["unterminated string literal", "line 1:4"]),
    ("{{ x ! y }}", ["unexpected character '!'", "line 1:6"]),
    ("{{ (1, 2 }}", ["unexpected '}'", "line 1:10"]),
    ("{{ x + }}", ["unexpected end of print statement", "line 1:8"]),
    ("{% for x in y recursive %}{% endfor %}", ["recursive for loops", "line 1:15"]),
    ("{% break %}", ["'break' outside of a for loop", "line 1:4"]),
    ("{{ f(*args) }}", ["*args", "line 1:6"]),
    ("{{ 'a' % 1 }}", ["printf-style string formatting", "line 1:4"]),
    ("{{ 2 ** 64 }}", ["integer result beyond 64 bits", "line 1:4"]),
    ("{{ 99999999999999999999 }}", ["integer literal larger than 64 bits", "line 1:4"]),
    ("{{ 'x'.zfill(3) }}", ["unsupported: str.zfill", "line 1:7"]),
    ("{{ {'a': 1}.items }}", ["printing a builtin_function_or_method", "line 1:12"]),
    ("{{ [1, 2] | map('string') }}", ["printing a generator", "line 1:13"]),
    ("{{ range(3) }}", ["printing a range()", "line 1:4"]),
    ("{{ lipsum() }}", ["lipsum", "line 1:4"]),
    ("{{ raise_exception('boom') }}", ["raise_exception: boom", "line 1:4"]),
    ("{{ 1 is sameas 1.0 }}", ["'sameas'", "line 1:9"]),
    ("{{ x.y }}", ["'x' is undefined", "line 1:5"]),
    ("{{ '\\N{BULLET}' }}", ["\\N{...} escape", "line 1:4"]),
    ("\xff", ["not valid UTF-8"]),
]


def main():
    driver = sys.argv[1]
    failed = passed = 0
    with tempfile.TemporaryDirectory() as tmp:
        ctx = os.path.join(tmp, "ctx.jsonl")
        with open(ctx, "w") as f:
            f.write(json.dumps({"y": [1, 2]}) + "\n")
        for i, (src, needles) in enumerate(CASES):
            path = os.path.join(tmp, f"t{i}.jinja")
            with open(path, "wb") as f:
                f.write(src.encode("utf-8", "surrogateescape") if "\xff" not in src else b"\xff")
            p = subprocess.run([driver, path, ctx], capture_output=True, timeout=60)
            if p.returncode != 0:
                print(f"FAIL {src!r}: driver exited with {p.returncode}: {p.stderr.decode(errors='replace')}")
                failed += 1
                continue
            r = json.loads(p.stdout.decode().splitlines()[0])
            missing = [n for n in needles if r["ok"] or n not in r["error"]]
            if r["ok"] or missing:
                print(f"FAIL {src!r}: {'rendered ' + repr(r['text']) if r['ok'] else repr(r['error'])}; expected {missing}")
                failed += 1
            else:
                print(f"ok   {src!r}: {r['error']}")
                passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
