#!/usr/bin/env python3
"""Writes the seed corpora for the fuzzers into OUT/<fuzzer>/.

usage: make_seeds.py SHARED_DIR OUT

gguf/vocab: the real models (whole when small, and their first 64 KiB),
plus a hand-made complete llama file of a few hundred bytes (1 layer,
n_embd 4, f32 tensors) so mutations start from a file that passes every
load-time check. prompt_file/testset: small JSONL and plain-text sets.
tokenize: a few texts (first byte = flags, see fuzz_tokenize.cpp).
request_parse: request bodies of the server's two routes, valid and not.
http: raw HTTP requests for the server's connection layer.
answer: what a server answers the load-test client (first byte = mode, see
fuzz_answer.cpp): SSE streams as vLLM and llama-server send them, JSON
bodies and error bodies.
"""
import os
import struct
import sys

shared, out = sys.argv[1], sys.argv[2]


def put(fuzzer, name, data):
    d = os.path.join(out, fuzzer)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def gstr(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def kv_u32(k, v):
    return gstr(k) + struct.pack("<II", 4, v)


def kv_f32(k, v):
    return gstr(k) + struct.pack("<If", 6, v)


def kv_str(k, v):
    return gstr(k) + struct.pack("<I", 8) + gstr(v)


def kv_arr(k, elem, items, fmt=None):
    b = gstr(k) + struct.pack("<IIQ", 9, elem, len(items))
    for it in items:
        b += gstr(it) if elem == 8 else struct.pack(fmt, it)
    return b


def tiny_llama():
    """GGUF v3, llama, n_embd 4, 1 block, 2 heads, n_ff 8, 8 tokens, f32."""
    toks = ["<unk>", "<s>", "</s>", "\u2581a", "\u2581", "a", "<0x0A>", "b"]
    kvs = [kv_str("general.architecture", "llama"), kv_str("general.name", "tiny"),
           kv_u32("llama.context_length", 32), kv_u32("llama.embedding_length", 4),
           kv_u32("llama.block_count", 1), kv_u32("llama.feed_forward_length", 8),
           kv_u32("llama.attention.head_count", 2), kv_u32("llama.attention.head_count_kv", 1),
           kv_f32("llama.attention.layer_norm_rms_epsilon", 1e-5),
           kv_str("tokenizer.ggml.model", "llama"), kv_arr("tokenizer.ggml.tokens", 8, toks),
           kv_arr("tokenizer.ggml.scores", 6, [0.0, 0.0, 0.0, -1.0, -2.0, -3.0, 0.0, -3.0], "<f"),
           kv_arr("tokenizer.ggml.token_type", 5, [2, 3, 3, 1, 1, 1, 6, 1], "<i")]
    n_embd, n_ff, n_vocab, kv_dim = 4, 8, len(toks), 2
    shapes = [("token_embd.weight", [n_embd, n_vocab]), ("output_norm.weight", [n_embd]),
              ("output.weight", [n_embd, n_vocab]), ("blk.0.attn_norm.weight", [n_embd]),
              ("blk.0.attn_q.weight", [n_embd, n_embd]), ("blk.0.attn_k.weight", [n_embd, kv_dim]),
              ("blk.0.attn_v.weight", [n_embd, kv_dim]),
              ("blk.0.attn_output.weight", [n_embd, n_embd]), ("blk.0.ffn_norm.weight", [n_embd]),
              ("blk.0.ffn_gate.weight", [n_embd, n_ff]), ("blk.0.ffn_up.weight", [n_embd, n_ff]),
              ("blk.0.ffn_down.weight", [n_ff, n_embd])]
    infos, off = b"", 0
    for name, ne in shapes:
        infos += gstr(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", d) for d in ne)
        infos += struct.pack("<IQ", 0, off)
        n = 1
        for d in ne:
            n *= d
        off += (n * 4 + 31) // 32 * 32
    head = b"GGUF" + struct.pack("<IQQ", 3, len(shapes), len(kvs)) + b"".join(kvs) + infos
    head += b"\0" * ((-len(head)) % 32)
    return head + bytes(off)


models = [os.path.join(shared, "models", "stories260K.gguf"),
          os.path.join(shared, "models", "llama-2-tiny-random.gguf"),
          os.path.join(shared, "golden", "quant", "stories260K-q4_0.gguf"),
          os.path.join(shared, "golden", "quant", "stories260K-q8_0.gguf"),
          os.path.join(shared, "golden", "quant", "stories260K-f16.gguf")]
for m in models:
    data = open(m, "rb").read()
    base = os.path.basename(m)
    for fz in ("gguf", "vocab"):
        put(fz, base + ".64k", data[:65536])
    if len(data) <= 300 * 1024:
        put("gguf", base, data)
tiny = tiny_llama()
put("gguf", "tiny_llama.gguf", tiny)
put("vocab", "tiny_llama.gguf", tiny)

for i, t in enumerate([b"\x01Once upon a time, there was a little girl.",
                       b"\x03<s>Hello</s> world <unk>\n\n  spaces  ",
                       b"\x0f caf\xc3\xa9 \xe2\x96\x81 \xf0\x9f\x98\x80 \xff\xfe bad \xc3",
                       b"\x00"]):
    put("tokenize", "text%d" % i, t)

prompt_sets = [
    b'{"prompt": "Once upon a time", "id": "a", "max_tokens": 16, "stop": ["\\n"]}\n'
    b'{"prompt": "The cat", "id": 7, "stop": "."}\n\n{"prompt": "x"}\n',
    b"\xef\xbb\xbf{\"prompt\": \"bom\"}\r\n{\"prompt\": \"crlf\", \"max_tokens\": 1000000}\r\n",
    b"Once upon a time\nThe cat sat\r\n\n  indented\n",
    b'{"prompt": 1}\n{bad json\n[1,2]\n{"prompt": "a", "id": "a"}\n{"prompt": "b", "id": "a"}\n',
]
for i, t in enumerate(prompt_sets):
    put("prompt_file", "set%d" % i, t)
testsets = [
    b'# comment\n{"prompt": "2+2=", "answer": "4", "match": "exact", "max_tokens": 8, "id": "q1"}\n'
    b'{"prompt": "Once", "expected": "upon"}\n',
    b'{"prompt": "p", "answer": "a", "id": 5, "match": "contains"}\r\n\r\n',
    b"plain prompt line\n{\"prompt\": \"json prompt\"}\n",
]
for i, t in enumerate(testsets):
    put("testset", "set%d" % i, t)

# chat_template: the published templates, and a few small ones that reach
# macros, namespaces, filters and the error paths.
tdir = os.path.join(shared, "chat", "templates")
for name in sorted(os.listdir(tdir)):
    with open(os.path.join(tdir, name), "rb") as f:
        put("chat_template", name, f.read())
for i, t in enumerate([
        b"{% for m in messages %}{{ m.role|upper }}: {{ m.content|trim }}\n{% endfor %}",
        b"{% macro f(n) %}{% if n %}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(5) }}",
        b"{% set ns = namespace(x=0) %}{% for i in range(3) %}{% set ns.x = ns.x + i %}{% endfor %}"
        b"{{ ns.x }}{{ messages|selectattr('role', 'equalto', 'user')|list|tojson(indent=2) }}",
        b"{%- if x is defined -%}{{ raise_exception('no') }}{%- endif -%}{{ 'a'[::-1] ~ (1, 2)|string }}"]):
    put("chat_template", "small%d" % i, t)

# request_parse: bodies of /v1/chat/completions and /v1/completions (each is
# parsed for both routes), valid ones with every field read, and wrong ones.
bodies = [
    b'{"model": "stories260K", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 8}',
    b'{"model": "stories260K", "messages": [{"role": "system", "content": null}, {"role": "developer",'
    b' "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}, {"role": "user",'
    b' "content": "caf\\u00e9 \\ud83d\\ude00"}], "temperature": 0, "top_p": 0.5, "seed": -3,'
    b' "stop": ["\\n", "."], "n": 1, "stream": true, "stream_options": {"include_usage": true},'
    b' "logprobs": true, "top_logprobs": 3, "max_completion_tokens": 16, "user": "x"}',
    b'{"model": "stories260K", "prompt": "Once upon a time", "max_tokens": 4, "logprobs": 5,'
    b' "stop": "x", "stream": false}',
    b'{"model": "stories260K", "prompt": [1, 2, 3, 4000, 0], "logprobs": 0, "temperature": 2}',
    b'{"model": "stories260K", "prompt": ["one"], "seed": 18446744073709551615}',
    b'{"model": "other", "prompt": "x"}',
    b'{"model": "stories260K", "messages": [], "max_tokens": 0, "n": 2, "top_p": 0}',
    b'{"model": "stories260K", "messages": [{"role": 1}], "temperature": "1", "stop": [1]}',
    b'{"model": "stories260K", "messages": "Hi", "stream_options": {"include_usage": 1}}',
    b'{"model": "stories260K", "messages": [{"role": "user", "content": [{"type": "image_url"}]}],'
    b' "top_logprobs": 21, "logprobs": false, "max_tokens": 1e3}',
    b'{"model": "stories260K", "prompt": "\xff\xfe bad utf-8 \xc3"}',
    b'{"model": "stories260K", "prompt": [[1]], "max_tokens": 9999999999999999999999}',
    b'[1, 2, 3]',
    b'{"model": "stories260K", "messages": [{"role": "user", "content": "a"}',
    b'',
]
for i, t in enumerate(bodies):
    put("request_parse", "body%d" % i, t)

# http: raw requests for the server's connection layer (fuzz_http.cpp),
# well-formed (plain, keep-alive pairs, chunked) and cut short.
for i, body in enumerate(bodies[:4]):
    put("http", "post%d" % i, b"POST /v1/%s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n" % (b"chat/completions" if i < 2 else b"completions", len(body))
        + body)
put("http", "health2", b"GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/models HTTP/1.1\r\n\r\n")
put("http", "chunked", b"POST /v1/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"a\r\n{\"model\": \r\n1b\r\n\"stories260K\", \"prompt\": \"x\"}\r\n0\r\n\r\n")
put("http", "short_body", b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 100\r\n\r\n{\"mo")
put("http", "garbage", b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03 GET / HTTP/1.0\r\n\r\n")

# answer: byte 0 = mode (0 SSE stream, 128 JSON body, 192 error body, 224
# scheduler telemetry), byte 1
# = read size; then what the server sent (fuzz_answer.cpp).
def chunk(obj):
    import json
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


stream = (b": keep-alive\r\n\r\n"
          + chunk({"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"role": "assistant"}}]})
          + chunk({"id": "c1", "choices": [{"index": 0, "delta": {"content": "Once"}}]})
          + chunk({"id": "c1", "choices": [{"index": 0, "delta": {"content": " upon"},
                                            "finish_reason": "length"}]})
          + chunk({"id": "c1", "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2}})
          + b"data: [DONE]\n\n")
put("answer", "chat_stream", b"\x00\x07" + stream)
put("answer", "chat_stream_crlf", b"\x00\x01" + stream.replace(b"\n", b"\r\n"))
put("answer", "completion_stream", b"\x00\x20"
    + chunk({"id": "t1", "choices": [{"index": 0, "text": "Once"}]})
    + b"event: x\nid: 3\nretry: 10\ndata: {\"choices\": [{\"text\": \" a\"}]}\n\ndata: [DONE]\n\n")
put("answer", "midstream_error", b"\x00\x05" + chunk({"choices": [{"delta": {"content": "a"}}]})
    + chunk({"error": {"message": "the engine crashed"}}))
put("answer", "body", b"\x80\x00" + b'{"id": "x", "model": "m", "choices": [{"index": 0, '
    b'"finish_reason": "stop", "message": {"role": "assistant", "content": "Once upon"}}], '
    b'"usage": {"prompt_tokens": 3, "completion_tokens": 2}}')
put("answer", "error_body", b"\xc0\x00" + b'{"error": {"message": "bad key", "type": "auth"}}')
put("answer", "error_string", b"\xc0\x00" + b'{"error": "overloaded"}')
put("answer", "timings", b"\x00\x09" + chunk({"id": "c", "choices": [{"delta": {"content": "a"},
    "finish_reason": "stop"}], "timings": {"queue_ms": 1.5, "ttft_ms": 9, "prompt_n": 4}})
    + b"data: [DONE]\n\n")
put("answer", "passes", b"\xe0\x00" + b'{"columns":["index","end_ms","duration_ms","batch",'
    b'"prefill_tokens","decode_tokens","queued","kv_blocks_used","kv_blocks_total","preemptions"],'
    b'"end":3,"model":"m","next":3,"now_ms":2999.2,"object":"scheduler.passes","passes":'
    b'[[1,10.5,2.7,1,56,1,0,4,512,0],[2,16.9,6.3,4,148,4,2,15,512,1]]}')
