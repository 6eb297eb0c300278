#!/usr/bin/python3
"""Renders every template in templates/ with Python's Jinja2, set up the way
Hugging Face transformers renders chat templates (README.md in this folder),
for a fixed set of conversations, and writes expected/<template>.json.

The C++ template renderer's tests compare against these files; they are the
independent oracle. Run with Debian's python3-jinja2 (3.1.2):

    /usr/bin/python3 tests/data/chat/render_expected.py

then `bash tests/data/update_checksums.sh`. Setup, as transformers'
_compile_jinja_template: ImmutableSandboxedEnvironment(trim_blocks=True,
lstrip_blocks=True, extensions=[loopcontrols, the {% generation %} tag]);
a tojson filter calling json.dumps(ensure_ascii=False, ...);
raise_exception(msg) raising TemplateError; strftime_now(fmt) formatting the
fixed date 2024-07-26; variables messages, add_generation_prompt, bos_token,
eos_token and nothing else.
"""
import datetime
import hashlib
import json
import os
import sys

import jinja2
from jinja2 import nodes
from jinja2.exceptions import TemplateError
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))


class GenerationTag(Extension):
    """transformers' AssistantTracker tag: {% generation %} renders its body."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def make_env():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[loopcontrols, GenerationTag])

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    def raise_exception(message):
        raise TemplateError(message)

    def strftime_now(fmt):
        return datetime.datetime(2024, 7, 26).strftime(fmt)

    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


SYSTEM = {"role": "system", "content": "You are a helpful assistant"}
TURNS = [
    {"role": "user", "content": "Hello"},
    {"role": "assistant", "content": "   Hi there, I am an assistant.   "},
    {"role": "user", "content": "What's 2+2? Gr\u00fc\u00dfe \U0001F600 \"quoted\"\nline two"},
]
CONVERSATIONS = {
    "user1": TURNS[:1],
    "system_user1": [SYSTEM] + TURNS[:1],
    "user3": TURNS,
    "system_user3": [SYSTEM] + TURNS,
}

# bos_token / eos_token passed with each template (what the model's
# tokenizer would pass; the value only has to be the same on both sides).
SPECIALS = [
    ("Llama-3", "<|begin_of_text|>", "<|eot_id|>"),
    ("llama-3", "<|begin_of_text|>", "<|eot_id|>"),
    ("Hermes", "<|begin_of_text|>", "<|im_end|>"),
    ("Qwen", "", "<|im_end|>"),
    ("deepseek", "<\uff5cbegin\u2581of\u2581sentence\uff5c>", "<\uff5cend\u2581of\u2581sentence\uff5c>"),
    ("gemma", "<bos>", "<eos>"),
    ("mistral", "<s>", "</s>"),
    ("Mistral", "<s>", "</s>"),
    ("Phi-3", "<s>", "<|endoftext|>"),
    ("phi3", "<s>", "<|endoftext|>"),
    ("SmolLM3", "", "<|im_end|>"),
    ("granite", "", "<|end_of_text|>"),
]


def specials_for(name):
    for key, bos, eos in SPECIALS:
        if key in name:
            return bos, eos
    return "<s>", "</s>"


# Small templates that pin down one rule each (scoping, Python output
# formats, filters, tests, whitespace control); rendered with VARIABLES.
VARIABLES = {
    "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo", "tool_calls": []}],
    "d": {"a": 1, "b": [1, "x"], "c": None},
    "s": "  Hello, World  ",
    "n": 7,
    "f": 2.5,
    "u": "Gr\u00fc\u00dfe \U0001F600",
}
SNIPPETS = [
    "{% set count = 0 %}{% for i in [1,2,3] %}{% set count = count + 1 %}{{ count }}{% endfor %}|{{ count }}",
    "{{ [1, 'a', none, true, 1.5, {'k': [1]}, (1,), (1, 2)] }}",
    "{{ 1e16 }} {{ 1e15 }} {{ 0.00001 }} {{ 0.1 + 0.2 }} {{ 10 / 4 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 7.5 // 2 }} {{ -7.5 % 2 }}",
    "{{ none.x }}|{{ d.zz }}|{{ d['zz'] }}|{{ messages[5] }}|{{ d.b[1] }}|{{ d.b.0 }}",
    "{{ 'abc'[::-1] }} {{ u|length }} {{ u[1:3] }} {{ [1,2,3][-1] }} {{ [1,2,3,4,5][1:4:2] }} {{ 'abcdef'[-2:] }} {{ [1,2,3][::-2] }}",
    "{{ d|tojson }}|{{ [1, 'x', none]|tojson(indent=2) }}|{{ u|tojson }}|{{ {'b': 1, 'a': 2}|tojson(sort_keys=true) }}|{{ 'a\"b\\c\n\t\u0001'|tojson }}|{{ 1.0|tojson }}|{{ [[], {}]|tojson(indent=1) }}",
    "{% for k, v in d.items() %}{{ k }}={{ v }};{{ loop.index }}{{ loop.first }}{{ loop.last }}{{ loop.revindex }} {% endfor %}",
    "{{ 'a' ~ 1 ~ none ~ missing ~ true }}",
    "{{ 'x' if false }}|{{ (1, 2) }}|{{ d|items|list }}|{{ d|dictsort }}",
    "{{ true == 1 }} {{ 1 == 1.0 }} {{ 'a' in 'abc' }} {{ 'b' in d }} {{ 'a' in d }} {{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 2 not in [1] }} {{ [1] == [1] }} {{ (1,) == [1] }}",
    "  {% if true %}\n  yes\n  {% endif %}\nafter {# c #}\n  {# c2 #}\nend",
    "{% macro m(a, b=2) %}[{{ a }}{{ b }}]{% endmacro %}{{ m(1) }}{{ m(1, b=3) }}{{ m(b=4, a=5) }}",
    "{{ '%s-%d|%r' % ('a', 3, 'q') }} {{ '%.2f' % 2.5 }} {{ '%%' % () }}",
    "{{ messages|selectattr('role', 'equalto', 'user')|list|length }} {{ messages|rejectattr('role', 'equalto', 'user')|map(attribute='content')|join(',') }} {{ messages|selectattr('tool_calls', 'defined')|list|length }} {{ messages|selectattr('tool_calls')|list|length }}",
    "{{ [3, 1, 2]|sort }} {{ ['b', 'A', 'a']|sort }} {{ [1, 2, 2, 1]|unique|list }} {{ s|trim }}| {{ s.split() }} {{ 'a,b,,c'.split(',') }} {{ 'a b c'.split(' ', 1) }} {{ 'a b c'.rsplit(' ', 1) }}",
    "{{ 'hello world'.title() }} {{ 'x'.upper() }} {{ s.strip() }}|{{ s.lstrip() }}|{{ s.rstrip() }}|{{ 'xxhixx'.strip('x') }} {{ 'ab'.startswith('a') }} {{ 'ab'.endswith(('x', 'b')) }} {{ 'aXbX'.replace('X', '-') }} {{ 'hello'.capitalize() }} {{ 'ab'.find('b') }} {{ 'a-b-c'.count('-') }}",
    "{{ d.get('a') }} {{ d.get('z', 3) }} {{ d.get('z') }} {{ d.keys()|list }} {{ d.values()|list }} {{ d.items()|list }}",
    "{% set ns = namespace(a=1, found=false) %}{% for i in [1, 2] %}{% set ns.a = ns.a + i %}{% if i == 2 %}{% set ns.found = true %}{% endif %}{% endfor %}{{ ns.a }} {{ ns.found }}",
    "{% for i in [1, 2, 3] if i > 1 %}{{ loop.index }}/{{ loop.length }}{{ loop.first }}{% else %}none{% endfor %}|{% for i in [] %}x{% else %}empty{% endfor %}",
    "{% for i in range(5) %}{% if i == 1 %}{% continue %}{% endif %}{% if i == 3 %}{% break %}{% endif %}{{ i }}{% endfor %}",
    "{% set a, b = 1, 2 %}{{ a }}{{ b }}{% set x %}  block {{ a }}  {% endset %}[{{ x }}]{% set y | trim | upper %}  z  {% endset %}[{{ y }}]",
    "{% filter upper %}abc{{ 'd' }}{% endfilter %}",
    "{{ messages[0]['role'] }} {{ messages[0].role }} {{ messages[-1].content }}",
    "{{ missing is defined }} {{ messages is iterable }} {{ 'a' is iterable }} {{ missing is iterable }} {{ {} is sequence }} {{ 1 is number }} {{ true is number }} {{ true is integer }} {{ 1.0 is float }} {{ none is none }} {{ d is mapping }} {{ 'x' is string }} {{ n is odd }} {{ n is even }} {{ 9 is divisibleby 3 }} {{ 'abc' is lower }} {{ d.c is none }} {{ d.zz is undefined }}",
    "{{ [1, 2, 3]|join(', ') }} {{ ['a', 'b']|map('upper')|list }} {{ messages|map(attribute='role')|join }} {{ [1, 2]|first }} {{ [1, 2]|last }} {{ []|first }}|",
    "{{ 'abc'|replace('b', 'x') }} {{ 3|string ~ 'x' }} {{ '5'|int + 1 }} {{ '4.7'|int }} {{ 'z'|int }} {{ 'z'|int(9) }} {{ '2.5'|float }} {{ 3|float }} {{ -3|abs }} {{ 2.567|round(2) }} {{ 2.5|round }} {{ [1, 2, 3]|sum }} {{ [3, 1]|max }} {{ [3, 1]|min }}",
    "{{ none|default('d') }} {{ missing|default('d') }} {{ ''|default('d', true) }} {{ missing|d('e') }}",
    "{{ loop }}|{{ range(3)|list }} {{ range(1, 10, 3)|list }} {{ range(5, 0, -2)|list }}",
    "{{ messages|selectattr('role', 'equalto', 'user')|first }}",
    "{%- for m in messages -%}\n  {{ m.role }}\n{%- endfor %}",
    "{{ 'x' }}\n{{ 'y' }}\n{% if true %}\nline\n{% endif %}\nend",
    "{{ 'a' if true else 'b' }} {{ not true }} {{ not none }} {{ 1 and 2 }} {{ 0 or 'x' }} {{ none or [] }} {{ 0 and 1 }}",
    "{{ u|upper }} {{ 'text'|center(10) }}| {{ 'a\nb\n\nc'|indent(2) }} {{ 'a\nb'|indent(2, true) }} {{ 'a b c d e f g'|truncate(9) }} {{ 'abc'|reverse }} {{ [1, 2]|reverse|list }}",
    "{{ messages|length }} {{ d|length }} {{ s|length }} {{ missing|length }} {{ messages|list|count }}",
    "{% macro r(n) %}{% if n > 0 %}{{ n }}{{ r(n - 1) }}{% endif %}{% endmacro %}{{ r(3) }}",
    "{% macro outer() %}<{{ caller() }}>{% endmacro %}{% call outer() %}inside{% endcall %}",
    "{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}{{ a }}",
    "{% set x = 1 %}{% macro m() %}{{ x }}{% endmacro %}{% set x = 2 %}{{ m() }}",
    "{% for m in messages %}{{ loop.previtem.role if loop.previtem is defined else '-' }}{{ loop.nextitem is defined }}{{ loop.cycle('a', 'b') }}{% endfor %}",
    "{{ 'a' + 'b' }} {{ [1] + [2] }} {{ 'ab' * 2 }} {{ 2 * [0] }} {{ f * 2 }} {{ n / 2 }} {{ n - f }}",
    "{{ '\u00fc\n' }}{{ \"dq'\" }} {{ ['it\\'s', \"q\\\"\"] }} {{ {'k': 'v', 1: none} }}",
    "{{ 'x' ~ ('a' if false) ~ 'y' }}|{{ messages|tojson(ensure_ascii=true) }}",
    "{{ messages[0] is mapping and messages[0].content is string }} {{ messages[1].tool_calls is defined and messages[1].tool_calls }}",
    "{% if messages[0].role == 'user' %}U{% elif messages[0].role == 'system' %}S{% else %}O{% endif %}",
    "{{ s.strip().split(',')[1].strip() }} {{ ('a' ~ 'b').upper() }} {{ ['x', 'y'][1:] | join }}",
    "{{ d|dictsort(reverse=true) }} {{ {'b': 2, 'a': 1}|dictsort(by='value') }}",
    "{{ 'Grüße'|length }} {{ 'Grüße'[2] }} {{ 'Grüße'|reverse }} {{ 'ß'|upper }}",
]
# Templates that must fail; the error type must match.
ERROR_SNIPPETS = [
    "{{ missing.attr }}",
    "{{ raise_exception('custom message') }}",
    "{{ 1 + 'a' }}",
    "{{ messages.append(1) }}",
    "{{ d.update({}) }}",
    "{{ missing() }}",
    "{{ 1 < 'a' }}",
    "{% for i in range(1000000) %}{% endfor %}",
    "{{ 'a'|tojson(indent=missing.x) }}",
    "{{ 5 // 0 }}",
    "{% set x = 1 %}{{ x.y.z }}",
]


def render_snippets(env):
    out = {"generator": "python jinja2 %s, render_expected.py" % jinja2.__version__,
           "variables": VARIABLES, "cases": [], "errors": []}
    for src in SNIPPETS:
        out["cases"].append({"template": src, "output": env.from_string(src).render(**VARIABLES)})
    for src in ERROR_SNIPPETS:
        try:
            env.from_string(src).render(**VARIABLES)
            raise SystemExit("expected an error from %r" % src)
        except Exception as e:
            out["errors"].append({"template": src, "error_type": type(e).__name__, "error": str(e)})
    with open(os.path.join(HERE, "expressions.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")


def main():
    env = make_env()
    render_snippets(env)
    tdir = os.path.join(HERE, "templates")
    odir = os.path.join(HERE, "expected")
    os.makedirs(odir, exist_ok=True)
    for fname in sorted(os.listdir(tdir)):
        if not fname.endswith(".jinja"):
            continue
        with open(os.path.join(tdir, fname), "rb") as f:
            raw = f.read()
        source = raw.decode("utf-8")
        bos, eos = specials_for(fname)
        result = {
            "template_file": fname,
            "template_sha256": hashlib.sha256(raw).hexdigest(),
            "generator": "python jinja2 %s, render_expected.py" % jinja2.__version__,
            "bos_token": bos,
            "eos_token": eos,
            "conversations": CONVERSATIONS,
            "cases": [],
        }
        try:
            template = env.from_string(source)
        except TemplateError as e:
            result["syntax_error"] = "%s: %s" % (type(e).__name__, e)
            template = None
        if template is not None:
            for conv_name, messages in CONVERSATIONS.items():
                for agp in (False, True):
                    case = {"conversation": conv_name, "add_generation_prompt": agp}
                    try:
                        case["output"] = template.render(messages=messages,
                                                         add_generation_prompt=agp,
                                                         bos_token=bos, eos_token=eos)
                    except Exception as e:  # the renderer must fail too
                        case["error"] = "%s: %s" % (type(e).__name__, e)
                        case["error_type"] = type(e).__name__
                    result["cases"].append(case)
        out = os.path.join(odir, fname[: -len(".jinja")] + ".json")
        with open(out, "w", encoding="utf-8") as f:
            json.dump(result, f, ensure_ascii=False, indent=1)
            f.write("\n")
    print("render_expected: wrote %d files with jinja2 %s" % (len(os.listdir(odir)), jinja2.__version__))


if __name__ == "__main__":
    sys.exit(main())
