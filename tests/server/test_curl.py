"""curl against a real `workbench-cli serve`: /health, /v1/models, a plain
chat and completion, and every error case answered 4xx with an OpenAI error
object while the server keeps answering; the API key rules.

Usage: test_curl.py WORKBENCH_CLI MODEL TMPDIR
Expected values are written by hand from OpenAI's API reference.
"""

import json
import os
import subprocess
import sys

from serverlib import MODEL_NAME, Server, check, fail, rows, run_kinds

cli, model, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(tmp, exist_ok=True)


def curl(url, path, body=None, headers=(), method=None, raw=None):
    """(status, body text) of one request made by curl."""
    args = ["curl", "-sS", "--max-time", "20", "-o", "-", "-w", "\n%{http_code}"]
    for h in headers:
        args += ["-H", h]
    data = raw if raw is not None else (json.dumps(body) if body is not None else None)
    if data is not None:
        args += ["-H", "Content-Type: application/json", "--data-binary", "@-"]
    if method:
        args += ["-X", method]
    args.append(url + path)
    p = subprocess.run(args, input=data, capture_output=True, text=True)
    check(p.returncode == 0, "curl %s failed: %s" % (path, p.stderr))
    text, _, code = p.stdout.rpartition("\n")
    return int(code), text


def expect_error(url, path, status, body=None, raw=None, headers=(), param=None, code=None):
    got, text = curl(url, path, body=body, raw=raw, headers=headers)
    check(got == status, "%s %r: status %d, expected %d (%s)" % (path, body or raw, got, status,
                                                                  text))
    try:
        err = json.loads(text)["error"]
    except (ValueError, KeyError, TypeError):
        fail("%s: no OpenAI error object in %r" % (path, text))
    for key in ("message", "type", "param", "code"):
        check(key in err, "error object lacks %r: %r" % (key, err))
    check(isinstance(err["message"], str) and err["message"], "empty error message")
    if param is not None:
        check(err["param"] == param, "param %r, expected %r" % (err["param"], param))
    if code is not None:
        check(err["code"] == code, "code %r, expected %r" % (err["code"], code))
    return err


def chat_ok(url, headers=()):
    status, text = curl(url, "/v1/chat/completions", headers=headers, body={
        "model": MODEL_NAME, "messages": [{"role": "user", "content": "Hello"}],
        "max_tokens": 8, "temperature": 0, "unknown_field": {"ignored": True}})
    check(status == 200, "chat: status %d (%s)" % (status, text))
    j = json.loads(text)
    check(j["object"] == "chat.completion", "object %r" % j["object"])
    check(j["model"] == MODEL_NAME, "model %r" % j["model"])
    c = j["choices"][0]
    check(c["message"]["role"] == "assistant", "role %r" % c["message"]["role"])
    check(isinstance(c["message"]["content"], str), "content not a string")
    check(c["finish_reason"] in ("stop", "length"), "finish %r" % c["finish_reason"])
    u = j["usage"]
    check(u["completion_tokens"] <= 8, "more than max_tokens: %r" % u)
    check(u["prompt_tokens"] > 0, "no prompt tokens: %r" % u)
    check(u["total_tokens"] == u["prompt_tokens"] + u["completion_tokens"], "total %r" % u)
    check("cached_tokens" in u["prompt_tokens_details"], "no cached_tokens: %r" % u)
    return j


db = os.path.join(tmp, "curl.sqlite")
if os.path.exists(db):
    os.remove(db)
with Server(cli, model, ["--parallel", "2", "--max-body-bytes", "4096"], db=db) as s:
    u = s.url
    status, text = curl(u, "/health")
    check(status == 200 and json.loads(text) == {"status": "ok"}, "/health: %d %s" % (status, text))
    status, text = curl(u, "/v1/models")
    check(status == 200, "/v1/models: %d" % status)
    models = json.loads(text)
    check(models["object"] == "list" and [m["id"] for m in models["data"]] == [MODEL_NAME],
          "/v1/models: %r" % models)
    chat_ok(u)
    status, text = curl(u, "/v1/completions", body={"model": MODEL_NAME, "prompt": "Once upon",
                                                    "max_tokens": 4, "temperature": 0,
                                                    "logprobs": 2})
    check(status == 200, "completions: %d %s" % (status, text))
    j = json.loads(text)
    check(j["object"] == "text_completion" and isinstance(j["choices"][0]["text"], str),
          "completions body %r" % j)
    # Legacy logprobs (OpenAI's completion object): one entry per token, the
    # top 2 as {token: logprob}, offsets of each token's text, greedy: the
    # chosen token is the most likely one.
    lp = j["choices"][0]["logprobs"]
    n_out = j["usage"]["completion_tokens"]
    check(lp is not None and len(lp["tokens"]) == len(lp["token_logprobs"]) == n_out ==
          len(lp["top_logprobs"]) == len(lp["text_offset"]), "completions logprobs %r" % lp)
    for i in range(n_out):
        check(lp["token_logprobs"][i] <= 0, "logprob %r > 0" % lp["token_logprobs"][i])
        top = lp["top_logprobs"][i]
        check(len(top) <= 2 and lp["tokens"][i] in top and
              abs(top[lp["tokens"][i]] - lp["token_logprobs"][i]) < 1e-6 and
              top[lp["tokens"][i]] == max(top.values()), "step %d: top %r" % (i, top))
        if i > 0 and "\ufffd" not in lp["tokens"][i - 1]:  # a lone byte token shows as U+FFFD
            check(lp["text_offset"][i] == lp["text_offset"][i - 1] + len(
                lp["tokens"][i - 1].encode("utf-8")), "text_offset %r" % lp["text_offset"])

    chat = "/v1/chat/completions"
    msgs = [{"role": "user", "content": "Hi"}]
    expect_error(u, chat, 400, raw='{"model": "stories260K", "messages": [', code="invalid_json")
    expect_error(u, chat, 400, raw="[1, 2]")
    expect_error(u, chat, 400, body={"model": MODEL_NAME, "messages": msgs, "max_tokens": "ten"},
                 param="max_tokens")
    expect_error(u, chat, 400, body={"model": MODEL_NAME, "messages": msgs, "temperature": "hot"},
                 param="temperature")
    expect_error(u, chat, 400, body={"model": MODEL_NAME, "messages": "Hi"}, param="messages")
    expect_error(u, chat, 400, body={"model": MODEL_NAME, "messages": [{"role": 1}]},
                 param="messages[0].role")
    expect_error(u, chat, 400, body={"model": MODEL_NAME}, param="messages")
    expect_error(u, chat, 400, body={"model": MODEL_NAME, "messages": msgs, "stop": [1]},
                 param="stop[0]")
    expect_error(u, chat, 400, body={"model": MODEL_NAME, "messages": msgs, "top_logprobs": 3},
                 param="top_logprobs")
    expect_error(u, chat, 400, body={"model": MODEL_NAME, "messages": msgs, "logprobs": True,
                                     "top_logprobs": 21}, param="top_logprobs")
    expect_error(u, chat, 404, body={"model": "gpt-4o", "messages": msgs}, param="model",
                 code="model_not_found")
    expect_error(u, chat, 400, body={"model": MODEL_NAME, "messages": msgs, "n": 2}, param="n")
    expect_error(u, chat, 413, raw=json.dumps({"model": MODEL_NAME, "messages": [
        {"role": "user", "content": "x" * 10000}]}), code="request_too_large")
    expect_error(u, "/v1/completions", 400, body={"model": MODEL_NAME, "prompt": 5},
                 param="prompt")
    expect_error(u, "/v1/nothing", 404)
    # Still answering after every error.
    chat_ok(u)
    status, text = curl(u, "/health")
    check(status == 200, "/health after the errors: %d" % status)

# The run: one of kind "server"; one row per request that reached the engine
# (the two chats and the completion), each with its route, address and status.
check(run_kinds(db) == ["server"], "runs %r" % run_kinds(db))
logged = rows(db)
check(len(logged) == 3, "%d rows, expected 3" % len(logged))
check([r["settings"]["api_route"] for r in logged] ==
      ["/v1/chat/completions", "/v1/completions", "/v1/chat/completions"],
      "routes %r" % [r["settings"].get("api_route") for r in logged])
for r in logged:
    check(r["settings"]["http_status"] == 200, "http_status %r" % r["settings"])
    check(r["settings"]["client_addr"].startswith("127.0.0.1:"), "client %r" % r["settings"])

# With an API key: /health stays open, everything else needs the bearer key.
key = "s3cret-key"
with Server(cli, model, ["--api-key", key, "--no-log"]) as s:
    u = s.url
    status, _ = curl(u, "/health")
    check(status == 200, "/health with a key set: %d" % status)
    expect_error(u, "/v1/models", 401, code="invalid_api_key")
    expect_error(u, "/v1/models", 401, headers=["Authorization: Bearer wrong-key"],
                 code="invalid_api_key")
    expect_error(u, "/v1/models", 401, headers=["Authorization: Bearer " + key + "x"])
    expect_error(u, "/v1/chat/completions", 401, body={"model": MODEL_NAME, "messages": [
        {"role": "user", "content": "Hi"}]})
    status, _ = curl(u, "/v1/models", headers=["Authorization: Bearer " + key])
    check(status == 200, "/v1/models with the key: %d" % status)
    chat_ok(u, headers=["Authorization: Bearer " + key])

# Any address but loopback needs a key: refused before anything starts.
p = subprocess.run([cli, "serve", "-m", model, "--backend", "cpu", "--host", "0.0.0.0",
                    "--port", "0", "--no-log"], capture_output=True, text=True, timeout=30)
check(p.returncode != 0, "serve on 0.0.0.0 without a key started")
check("--api-key" in p.stderr, "no clear error: %r" % p.stderr)
print("server_curl: ok")
