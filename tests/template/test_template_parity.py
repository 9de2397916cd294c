#!/usr/bin/env python3
"""Chat-template parity: atoll's template engine against Python jinja2.

For every template in templates/ and every conversation in conversations.json,
renders the prompt with jinja2 set up exactly as transformers'
apply_chat_template sets it up (ImmutableSandboxedEnvironment, trim_blocks,
lstrip_blocks, loopcontrols, the generation tag, raise_exception,
strftime_now, dict, namespace and transformers' tojson) and with the
render_batch driver, then compares: the bytes must be identical, or both must
fail. Then does the same for SNIPPETS, small templates that exercise the
constructs, filters, tests and methods one by one.

usage: test_template_parity.py RENDER_BATCH [--only NAME]
"""
import datetime
import json
import os
import subprocess
import sys
import tempfile

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))
# strftime_now is deterministic in the tests: both sides use this time
NOW = "2025-02-03T04:05:06"


def make_env():
    """transformers.utils.chat_template_utils._cached_compile_jinja_template, without transformers."""

    class AssistantTracker(jinja2.ext.Extension):
        tags = {"generation"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method("_generation_support"), [], [], body).set_lineno(lineno)

        @jinja2.pass_eval_context
        def _generation_support(self, context, caller):
            return caller()

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return datetime.datetime.fromisoformat(NOW).strftime(format)

    class TemplateDict:
        def __call__(self, *args, **kwargs):
            return dict(*args, **kwargs)

        def fromkeys(self, *args, **kwargs):
            return dict.fromkeys(*args, **kwargs)

    class TemplateNamespace(jinja2.utils.Namespace):
        def __init__(*args, **kwargs):
            self, args = args[0], args[1:]
            attrs = dict(*args, **kwargs)
            for name in attrs:
                TemplateNamespace._check_name(name)
            jinja2.utils.Namespace.__init__(self, attrs)

        def __setitem__(self, name, value):
            TemplateNamespace._check_name(name)
            jinja2.utils.Namespace.__setitem__(self, name, value)

        @staticmethod
        def _check_name(name):
            if isinstance(name, str) and name.startswith("_"):
                raise jinja2.exceptions.SecurityError(f"underscore-prefixed namespace attribute {name!r}")

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[AssistantTracker, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    env.globals["dict"] = TemplateDict()
    env.globals["namespace"] = TemplateNamespace
    return env


ENV = make_env()


def render_py(source, context):
    try:
        template = ENV.from_string(source)
    except Exception as e:  # a template jinja2 cannot compile fails every render
        return False, f"{type(e).__name__}: {e}"
    try:
        return True, template.render(**context)
    except Exception as e:
        return False, f"{type(e).__name__}: {e}"


def render_c(driver, template_path, contexts):
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as f:
        for c in contexts:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
        path = f.name
    try:
        env = dict(os.environ, ATOLL_TEMPLATE_NOW=NOW)
        p = subprocess.run([driver, template_path, path], capture_output=True, env=env, timeout=120)
    finally:
        os.unlink(path)
    if p.returncode != 0:
        return [(False, f"driver exited with {p.returncode}: {p.stderr.decode(errors='replace')}")] * len(contexts)
    lines = p.stdout.decode("utf-8").splitlines()
    out = []
    for line in lines:
        r = json.loads(line)
        out.append((r["ok"], r["text"] if r["ok"] else r["error"]))
    if len(out) != len(contexts):
        return [(False, f"driver printed {len(out)} lines for {len(contexts)} contexts")] * len(contexts)
    return out


# special tokens transformers passes (special_tokens_map) for each model's tokenizer
SPECIAL = {
    "meta-llama": {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"},
    "google-gemma": {"bos_token": "<bos>", "eos_token": "<eos>", "pad_token": "<pad>"},
    "mistralai": {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"},
    "microsoft-Phi": {"bos_token": "<s>", "eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>"},
    "deepseek-ai": {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"},
    "Qwen": {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"},
    "GLM": {"eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>"},
    "HuggingFaceTB": {"bos_token": "<|im_start|>", "eos_token": "<|im_end|>", "pad_token": "<|im_end|>"},
}


def context_for(template_name, conv):
    ctx = {"messages": conv["messages"]}
    if not conv.get("omit_tools"):
        ctx["tools"] = conv.get("tools")
        ctx["documents"] = None
    ctx["add_generation_prompt"] = conv.get("add_generation_prompt", False)
    for prefix, toks in SPECIAL.items():
        if template_name.startswith(prefix):
            ctx.update(toks)
    ctx.update(conv.get("extra", {}))
    return ctx


def first_diff(a, b):
    n = min(len(a), len(b))
    i = next((k for k in range(n) if a[k] != b[k]), n)
    return i, a[max(0, i - 40):i + 40], b[max(0, i - 40):i + 40]


class Tally:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, label, py, c, verbose_ok=True):
        (pok, ptext), (cok, ctext) = py, c
        if pok != cok:
            self.failed += 1
            print(f"FAIL {label}: jinja2 {'rendered' if pok else 'failed'}, atoll {'rendered' if cok else 'failed'}")
            print(f"     jinja2: {ptext[:300]!r}\n     atoll:  {ctext[:300]!r}")
        elif pok and ptext != ctext:
            self.failed += 1
            i, pa, ca = first_diff(ptext, ctext)
            print(f"FAIL {label}: output differs at character {i}\n     jinja2: {pa!r}\n     atoll:  {ca!r}")
        else:
            self.passed += 1
            if verbose_ok:
                print(f"ok   {label}" + ("" if pok else f"  (both fail: {ctext[:100]})"))


# Small templates rendered with SNIPPET_CONTEXT: the constructs one at a time.
SNIPPET_CONTEXT = {
    "s": "  Hello, World!  ", "u": "Ünïcödé ΣΑΣ straße ǅ", "n": 7, "f": 2.5, "z": 0, "neg": -7, "t": True, "no": None,
    "l": [3, 1, 2], "words": ["b", "A", "c", "a"], "e": [], "d": {"b": 2, "a": 1, "items": "x", "nested": {"k": [1, 2]}},
    "msgs": [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"},
             {"role": "assistant", "content": "yo", "extra": 1}, {"role": "user", "content": "bye"}],
    "nums": [1.5, 2, 0.1, 1e16, 1e-5, 123456789.125, -0.0, 3.0], "text": "a\nb\r\nc\n\nd",
}
SNIPPETS = [
    # output and literals
    "{{ s }}|{{ n }}|{{ f }}|{{ t }}|{{ no }}|{{ undefined_name }}|{{ l }}|{{ d }}|{{ nums }}",
    "{{ (1, 'a') }}{{ (1,) }}{{ () }}{{ [] }}{{ {} }}{{ {'x': [1, {'y': none}]} }}{{ 'it''s' }}{{ \"a\" 'b' }}",
    "{{ '\\n\\t\\\\ \\x41 \\u00e9 \\U0001F600 \\101' }}|{{ 'tab\\there' }}|{{ \"q\\\"q\" }}",
    "{{ 1_000 }} {{ 0x1F }} {{ 0o17 }} {{ 0b101 }} {{ 1.5e3 }} {{ 2e-7 }} {{ 10.0 }} {{ 1e100 }}",
    # arithmetic
    "{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 6 / 3 }} {{ 2 ** 10 }} {{ 2 ** -1 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }}",
    "{{ 7.5 // 2 }} {{ -7.5 % 2 }} {{ 0.1 + 0.2 }} {{ 1 + 2.0 }} {{ true + 1 }} {{ 3 * 'ab' }} {{ [1] * 3 }} {{ 'a' + 'b' }} {{ [1] + [2] }}",
    "{{ n ~ f ~ no ~ t ~ l ~ undefined_name }}|{{ 1 ~ 2 }}|{{ -n }}|{{ +f }}|{{ not n }}",
    "{{ 1 / 0 }}", "{{ 'a' + 1 }}", "{{ undefined_name + 1 }}", "{{ 'x' * 'y' }}", "{{ 5 % 0 }}",
    # comparisons and logic
    "{{ 1 == 1.0 }} {{ 1 == true }} {{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }} {{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ l == [3, 1, 2] }} {{ (1, 2) == [1, 2] }} {{ d == {'a': 1, 'b': 2, 'items': 'x', 'nested': {'k': [1, 2]}} }}",
    "{{ 'a' in 'cat' }} {{ 2 in l }} {{ 'a' in d }} {{ 'z' not in d }} {{ 'x' in undefined_name }} {{ none == none }} {{ undefined_name == undefined_other }}",
    "{{ 1 < 'a' }}", "{{ 1 in 5 }}", "{{ 1 in 'abc' }}",
    "{{ n and s }}|{{ z and s }}|{{ z or no }}|{{ no or 'dflt' }}|{{ 'a' if t else 'b' }}|{{ 'a' if z }}|{{ 'x' if no else 'y' if n else 'z' }}",
    # attribute and item access
    "{{ d.a }} {{ d['b'] }} {{ d.items is defined }}{{ d['nested']['k'][1] }} {{ d.nested.k.0 }} {{ d.missing }} {{ d['missing'] }} {{ l[-1] }} {{ l[5] }} {{ s[2] }} {{ no.x }}",
    "{{ d.missing.deeper }}", "{{ undefined_name.attr }}", "{{ undefined_name[0] }}", "{{ undefined_name() }}",
    "{{ l[1:] }} {{ l[:-1] }} {{ l[::-1] }} {{ s[2:7] }} {{ u[::-1] }} {{ u[1:4] }} {{ l[::2] }} {{ l[5:] }} {{ s[-3:] }} {{ msgs[1:3] | length }}",
    "{{ l[::0] }}", "{{ d[1:2] }}|{{ n[0] }}|{{ l['x'] }}",
    # statements
    "{% set x = 1 %}{% set y, z = [2, 3] %}{{ x }}{{ y }}{{ z }}{% set a, b = 'xy' %}{{ a }}{{ b }}",
    "{% set a, b = [1] %}", "{% set a, b = 5 %}",
    "{% set ns = namespace(c=0, l=[]) %}{% for i in l %}{% set ns.c = ns.c + i %}{% endfor %}{{ ns.c }}{{ ns.missing }}",
    "{% set ns = namespace() %}{% set ns.x = 1 %}{{ ns.x }}{% set ns2 = namespace({'a': 1}, b=2) %}{{ ns2.a }}{{ ns2.b }}",
    "{% set v = 5 %}{% set v.x = 1 %}", "{% set ns = namespace(_x=1) %}",
    "{% set x %}block {{ n }} text{% endset %}[{{ x }}]{% set y | upper | trim %}  shout  {% endset %}[{{ y }}]",
    "{% for m in msgs %}{{ loop.index }}/{{ loop.index0 }}/{{ loop.revindex }}/{{ loop.revindex0 }}/{{ loop.length }}/{{ loop.first }}/{{ loop.last }}/{{ loop.previtem.role if loop.previtem is defined else '-' }}/{{ loop.nextitem.role if not loop.last else '-' }}/{{ loop.cycle('a', 'b') }}/{{ loop.depth }} {% endfor %}",
    "{% for m in msgs if m.role != 'system' %}{{ loop.index }}:{{ m.role }}:{{ loop.last }}:{{ loop.length }} {% endfor %}",
    "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}{% for k in d %}{{ k }},{% endfor %}{% for c in 'abc' %}{{ c }}{% endfor %}",
    "{% for x in e %}{{ x }}{% else %}empty{% endfor %}{% for x in l if x > 5 %}{{ x }}{% else %}none-left{% endfor %}",
    "{% for x in l %}{% if x == 1 %}{% continue %}{% endif %}{% if x == 2 %}{% break %}{% endif %}{{ x }}{% endfor %}",
    "{% for x in [[1, 2], [3, 4]] %}{% for y in x %}{{ loop.index }}{{ y }}{% endfor %}|{{ loop.index }}{% endfor %}",
    "{% for a, b in [[1, 2], [3]] %}{{ a }}{% endfor %}", "{% for x in n %}{% endfor %}", "{% for x in no %}{% endfor %}",
    "{% for x in undefined_name %}never{% else %}else-branch{% endfor %}",
    "{% set x = 1 %}{% for i in l %}{{ x }}{% set x = i %}{{ x }}{% endfor %}{{ x }}",
    "{% for i in l %}{{ q }}{% endfor %}{% set q = 3 %}{{ q }}",
    "{% if n > 5 %}big{% elif n > 2 %}mid{% else %}small{% endif %}{% if z %}no{% elif no %}no{% endif %}",
    "{% macro greet(name, greeting='Hello', punct='!') %}{{ greeting }}, {{ name }}{{ punct }}{% endmacro %}{{ greet('Ann') }} {{ greet('Bob', 'Hi') }} {{ greet(name='Cy', punct='?') }} {{ greet() }}",
    "{% macro m(a) %}{{ a }}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, 3, k=4) }}",
    "{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, 2) }}", "{% macro m(a) %}{{ a }}{% endmacro %}{{ m(b=1) }}",
    "{% macro rec(k) %}{{ k }}{% if k > 0 %}{{ rec(k - 1) }}{% endif %}{% endmacro %}{{ rec(5) }}",
    "{% macro outer() %}{{ n }}{% endmacro %}{% set n = 99 %}{{ outer() }}",
    "{% with a = 1, b = n %}{{ a }}{{ b }}{% set c = 3 %}{{ c }}{% endwith %}{{ c }}",
    "{% print 'p', n %}{% raw %}{{ not rendered }} {% if %}{% endraw %}",
    "{% generation %}gen {{ n }}{% set inner = 1 %}{% endgeneration %}{{ inner }}",
    # whitespace control
    "a  {{- n -}}  b\n  {%- if t %}  c  {% endif -%}\n  d {#- comment -#} e\n{# c2 #}\n  f\n    {% if t %}\n    g\n    {% endif %}\n  h {%+ if t %}i{% endif +%}\nj",
    "x\n{% for i in l %}\n  - {{ i }}\n{% endfor %}\ny\n",
    "  {% if t -%}\n   a\n  {%- endif %}  \n{{ '  v  ' }}\n  {#- c #}\nz",
    "\r\nwin\r\n{% if t %}\r\nline\r\n{% endif %}\r\n",
    # filters
    "{{ s | trim }}|{{ s | lower }}|{{ s | upper }}|{{ s | title }}|{{ 'hello wORLD-foo(bar' | title }}|{{ s | capitalize }}|{{ u | upper }}|{{ u | lower }}|{{ u.title() }}|{{ u.swapcase() }}",
    "{{ l | length }} {{ d | count }} {{ s | length }} {{ u | length }} {{ undefined_name | length }} {{ l | first }} {{ l | last }} {{ e | first }} {{ 'abc' | first }} {{ d | first }}",
    "{{ words | join(', ') }}|{{ l | join }}|{{ msgs | join('/', attribute='role') }}|{{ [1, none, 'x'] | join('-') }}",
    "{{ undefined_name | default('dflt') }} {{ z | default('dflt') }} {{ z | default('dflt', true) }} {{ '' | d('empty') }} {{ no | default('x') }}",
    "{{ d | items | list }} {{ d | list }} {{ 'abc' | list }} {{ l | reverse | list }} {{ 'abc' | reverse }} {{ l | sort }} {{ words | sort }} {{ words | sort(case_sensitive=true) }} {{ words | sort(reverse=true) }}",
    "{{ msgs | selectattr('role', 'equalto', 'user') | map(attribute='content') | list }} {{ msgs | rejectattr('role', 'eq', 'user') | list | length }} {{ msgs | map(attribute='extra', default=0) | list }}",
    "{{ l | select('odd') | list }} {{ l | reject('even') | list }} {{ [0, 1, '', 'a'] | select | list }} {{ words | map('upper') | join }} {{ msgs | selectattr('extra') | list | length }} {{ msgs | selectattr('extra', 'defined') | list | length }}",
    "{{ msgs | map(attribute='content') | length }}",
    "{{ words | unique | list }} {{ words | unique(case_sensitive=true) | list }} {{ l | max }} {{ l | min }} {{ words | max }} {{ msgs | max(attribute='content') }} {{ l | sum }} {{ nums | sum }} {{ e | max }}",
    "{{ '42' | int }} {{ '42.7' | int }} {{ 'x' | int }} {{ 'x' | int(-1) }} {{ 3.99 | int }} {{ ' 7 ' | int }} {{ '0x1A' | int(0, 16) }} {{ '1_000' | int }} {{ true | int }} {{ no | int }}",
    "{{ '2.5' | float }} {{ 3 | float }} {{ 'nan' | float }} {{ 'x' | float }} {{ '1e3' | float }} {{ -3 | abs }} {{ -2.5 | abs }} {{ 2.5 | round }} {{ 3.5 | round }} {{ 2.675 | round(2) }} {{ 2.1 | round(0, 'ceil') }} {{ 2.9 | round(1, 'floor') }} {{ 7 | round }}",
    "{{ 'a-b-c' | replace('-', '+') }} {{ 'aaa' | replace('a', 'b', 2) }} {{ 'abc' | replace('', '.') }} {{ n | string }}{{ l | string }}{{ no | string }} {{ '<b>&\"' | escape }} {{ '<i>' | safe }} {{ ('<i>' | safe) + '<b>' }}",
    "{{ text | indent }}|{{ text | indent(2, true) }}|{{ text | indent('> ', blank=true) }}|{{ 'x' | center(7) }}|{{ d | dictsort }}|{{ d | dictsort(by='value', reverse=true) | length }}",
    "{{ d | dictsort(by='value') }}",
    "{{ l | batch(2) | list }} {{ l | batch(2, 0) | list }} {{ d | attr('items') is callable }} {{ d | attr('a') }}",
    # tojson
    "{{ d | tojson }}|{{ msgs[2] | tojson(indent=2) }}|{{ nums | tojson }}|{{ u | tojson }}|{{ u | tojson(ensure_ascii=true) }}|{{ d | tojson(sort_keys=true) }}|{{ l | tojson(separators=(',', ':')) }}|{{ 'a\"\\\\\\n\\x7f\\x01' | tojson }}",
    "{{ {'k': {'n': [1, {}], 'e': []}} | tojson(indent=4) }}|{{ {'t': true, 'f': false, 'n': none} | tojson(indent='\\t') }}|{{ {1: 'int key', 2.5: 'float key', true: 'bool key', none: 'none key'} | tojson }}",
    "{{ undefined_name | tojson }}", "{{ msgs | map(attribute='role') | tojson }}",
    # tests
    "{{ s is string }} {{ n is number }} {{ f is float }} {{ n is integer }} {{ t is integer }} {{ t is number }} {{ t is boolean }} {{ l is sequence }} {{ d is mapping }} {{ l is mapping }} {{ s is iterable }} {{ n is iterable }} {{ undefined_name is iterable }} {{ no is none }} {{ z is false }} {{ t is true }}",
    "{{ n is odd }} {{ n is even }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(4) }} {{ 'a' is in 'abc' }} {{ 2 is in l }} {{ n is eq 7 }} {{ n is equalto 7 }} {{ n is ne 7 }} {{ n is gt 3 }} {{ n is lt 3 }} {{ n is ge 7 }} {{ n is le 6 }} {{ 'abc' is lower }} {{ 'ABC' is upper }} {{ 'upper' is filter }} {{ 'odd' is test }} {{ no is sameas none }}",
    "{{ d.a is defined }} {{ d.zz is defined }} {{ d.zz is undefined }} {{ undefined_name is not defined }} {{ d is not none }} {{ msgs[0].role is not string }} {{ d.items is callable }}",
    # string methods
    "{{ s.strip() }}|{{ s.lstrip() }}|{{ s.rstrip() }}|{{ 'xxhixx'.strip('x') }}|{{ '\\n\\nhi\\n'.lstrip('\\n') }}|{{ s.split() }}|{{ 'a,b,,c'.split(',') }}|{{ 'a,b,c'.split(',', 1) }}|{{ 'a,b,c'.rsplit(',', 1) }}|{{ '  a  b  '.split(none, 1) }}|{{ '  a  b  '.rsplit(none, 1) }}|{{ text.splitlines() }}|{{ text.splitlines(true) }}",
    "{{ s.startswith('  He') }} {{ s.endswith('!  ') }} {{ s.startswith(('x', '  H')) }} {{ 'abc'.startswith('b', 1) }} {{ s.upper() }} {{ s.lower() }} {{ s.title() }} {{ 'hello'.capitalize() }} {{ s.replace('l', 'L') }} {{ s.replace('l', 'L', 1) }} {{ s.find('o') }} {{ s.rfind('o') }} {{ s.find('zz') }} {{ u.find('ö') }} {{ s.count('l') }} {{ '-'.join(words) }} {{ s.index('W') }}",
    "{{ 'abc'.index('z') }}", "{{ 'a'.join([1, 2]) }}", "{{ 'x'.split('') }}", "{{ 'abc'.format(1) }}|{{ '{} and {}!'.format(n, l) }}|{{ '{0}{1}{0}'.format('a', 'b') }}|{{ '{x}={y!r}'.format(x=1, y='q') }}|{{ '{{}}'.format() }}",
    "{{ '123'.isdigit() }} {{ 'ab'.isalpha() }} {{ ' \\n'.isspace() }} {{ 'ABC'.isupper() }} {{ 'abc'.islower() }} {{ 'v1.2'.removeprefix('v') }} {{ 'file.txt'.removesuffix('.txt') }} {{ s.strip().endswith('!') }}",
    "{{ d.get('a') }} {{ d.get('zz') }} {{ d.get('zz', 'dflt') }} {{ d.keys() | list }} {{ d.values() | list }} {{ d.items() | list }} {{ d.keys() }} {{ d.items() }} {{ l.index(1) }} {{ l.count(3) }} {{ d.copy() == d }}",
    "{{ l.append(4) }}", "{{ d.update({'x': 1}) }}", "{{ d.pop('a') }}", "{{ l.append }}|{{ d.__class__ }}|{{ s.__len__ }}",
    # globals
    "{{ range(3) | list }} {{ range(1, 10, 3) | list }} {% for i in range(2) %}{{ i }}{% endfor %} {{ range(3) | length }} {{ dict(a=1, b=[2]) }} {{ dict({'x': 1}, y=2) }} {{ raise_exception is defined }} {{ strftime_now('%Y-%m-%d %H:%M:%S %a %b %j %f|%z|%Z') }}",
    "{{ raise_exception('custom failure: ' ~ n) }}", "{{ range(200000) | length }}", "{{ strftime_now('%d %B %Y') }}",
    # unknown filters and tests fail at compile time, except inside if statements and
    # conditional expressions, where jinja2 only fails when they run
    "{% if false %}{{ x | nosuchfilter }}{% endif %}{{ 1 if true else x | nosuchfilter }}{% if x is nosuchtest %}{% endif %}ok",
    "{% if false %}{% for i in l %}{{ i | nosuchfilter }}{% endfor %}{% endif %}",
    "{% if true %}{{ x | nosuchfilter }}{% endif %}", "{{ x | nosuchfilter }}",
    "{{ range(3) == [0, 1, 2] }} {{ range(3)[1] }} {{ 2 in range(3) }} {{ range(0) | list }} {{ range(5, 0, -2) | list }}",
    # scoping corner cases from jinja2's symbol tracking
    "{% for i in l %}{% set acc = i %}{% endfor %}[{{ acc }}]",
    "{% if t %}{% set inner = 'set in if' %}{% endif %}{{ inner }}",
    "{{ shadow }}{% set shadow = 'local' %}{{ shadow }}",
    "{% macro m() %}{{ late }}{% endmacro %}{{ m() }}{% set late = 'now set' %}{{ m() }}",
    "{% for m in msgs %}{% set role = m.role %}{% if loop.last %}{{ role }}{% endif %}{% endfor %}{{ role }}",
]


def snippet_tests(driver, tally):
    ctx = dict(SNIPPET_CONTEXT, shadow="from context", q="ctx-q", late="ctx-late")
    with tempfile.TemporaryDirectory() as tmp:
        for i, src in enumerate(SNIPPETS):
            path = os.path.join(tmp, f"s{i}.jinja")
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(src)
            py = render_py(src, ctx)
            c = render_c(driver, path, [ctx])[0]
            tally.check(f"snippet {i}: {src[:60]!r}", py, c)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    driver = sys.argv[1]
    only = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--only" else None
    with open(os.path.join(HERE, "conversations.json"), encoding="utf-8") as f:
        convs = json.load(f)
    tdir = os.path.join(HERE, "templates")
    tally = Tally()
    for name in sorted(os.listdir(tdir)):
        if not name.endswith(".jinja") or (only and only not in name):
            continue
        path = os.path.join(tdir, name)
        with open(path, encoding="utf-8", newline="") as f:
            source = f.read()
        contexts = [context_for(name, c) for c in convs]
        c_results = render_c(driver, path, contexts)
        for conv, ctx, cres in zip(convs, contexts, c_results):
            tally.check(f"{name[:-6]} × {conv['name']}", render_py(source, ctx), cres)
    if not only:
        snippet_tests(driver, tally)
    print(f"{tally.passed} passed, {tally.failed} failed")
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main())
