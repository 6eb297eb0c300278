"""The official `openai` npm client streams a chat completion (temperature 0,
stream_options.include_usage) from a real `workbench-cli serve`: its text
equals `workbench-cli generate --temp 0 --chat --user` for the same prompt and
max tokens, and its usage counts equal generate's token counts and the run
log's row. It asks for logprobs (top 5): each streamed token's logprob and
its top 5 equal `generate --top-logprobs 5`'s (the log-softmax of the
model's raw logits, which the logprobs tests check against llama.cpp's
golden logits and the CPU reference forward pass).

Usage: test_openai.py WORKBENCH_CLI MODEL TMPDIR
Skipped (exit 77) when tests/server/node/node_modules is not installed
(installer/setup-debian.sh runs `npm ci` there).
"""

import json
import os
import subprocess
import sys

from serverlib import MODEL_NAME, Server, check, rows

cli, model, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
here = os.path.dirname(os.path.abspath(__file__))
node_dir = os.path.join(here, "node")
if not os.path.isdir(os.path.join(node_dir, "node_modules", "openai")):
    print("SKIP: tests/server/node/node_modules is missing; run installer/setup-debian.sh "
          "(npm ci in tests/server/node)")
    sys.exit(77)
os.makedirs(tmp, exist_ok=True)

PROMPT = "Tell me a story about a little dog."
MAX_TOKENS = 40

gen = subprocess.run([cli, "generate", "-m", model, "--backend", "cpu", "--temp", "0", "--chat",
                      "--user", PROMPT, "-n", str(MAX_TOKENS), "--top-logprobs", "5", "--json", "--no-log"],
                     capture_output=True, text=True, timeout=60)
check(gen.returncode == 0, "generate failed: %s" % gen.stderr)
expected = json.loads(gen.stdout)

db = os.path.join(tmp, "openai.sqlite")
if os.path.exists(db):
    os.remove(db)
with Server(cli, model, ["--parallel", "2"], db=db) as s:
    p = subprocess.run(["node", os.path.join(node_dir, "stream_chat.mjs"), s.url, MODEL_NAME,
                        PROMPT, str(MAX_TOKENS)], capture_output=True, text=True, timeout=60,
                       cwd=node_dir)
    check(p.returncode == 0, "the openai client failed: %s" % p.stderr)
    got = json.loads(p.stdout)

check(got["chunks"] >= 2, "expected a stream of chunks, got %r" % got)
check(got["text"] == expected["text"],
      "streamed text differs from generate's:\n  %r\n  %r" % (got["text"], expected["text"]))
usage = got["usage"]
check(usage is not None, "no usage chunk with include_usage")
n_prompt = len(expected["prompt_token_ids"])
n_out = len(expected["generated_token_ids"])
check(usage["prompt_tokens"] == n_prompt, "prompt_tokens %r, generate ran %d" % (usage, n_prompt))
check(usage["completion_tokens"] == n_out, "completion_tokens %r, generate made %d" % (usage, n_out))
check(usage["total_tokens"] == n_prompt + n_out, "total_tokens %r" % usage)
want_finish = "length" if expected["finish_reason"] in ("length", "context") else "stop"
check(got["finish_reason"] == want_finish, "finish %r, generate %r" % (got["finish_reason"],
                                                                       expected["finish_reason"]))
lp = got["logprobs"]
want = expected["logprobs"]
check(len(lp) == n_out == len(want), "%d logprobs entries for %d tokens (generate %d)" % (
    len(lp), n_out, len(want)))
for i, (a, b) in enumerate(zip(lp, want)):
    check(a["token"] == b["text"], "token %d: %r vs generate's %r" % (i, a["token"], b["text"]))
    check(abs(a["logprob"] - b["logprob"]) < 1e-4, "token %d logprob %r vs %r" % (
        i, a["logprob"], b["logprob"]))
    try:  # a byte-fallback token's piece alone is not UTF-8; "bytes" keeps it exact
        check(bytes(a["bytes"]).decode("utf-8") == a["token"], "token %d bytes %r" % (i, a["bytes"]))
    except UnicodeDecodeError:
        pass
    check(len(a["top_logprobs"]) == 5 == len(b["top"]), "token %d: top %r" % (i, a["top_logprobs"]))
    check(a["top_logprobs"][0]["token"] == a["token"], "greedy: token %d is not the top-1" % i)
    for x, y in zip(a["top_logprobs"], b["top"]):
        check(x["token"] == y["text"] and abs(x["logprob"] - y["logprob"]) < 1e-4,
              "token %d top %r vs generate's %r" % (i, x, y))
logged = rows(db)
check(len(logged) == 1, "%d rows" % len(logged))
r = logged[0]
check(r["prompt_tokens"] == usage["prompt_tokens"] and
      r["output_tokens"] == usage["completion_tokens"], "row counts %r vs usage %r" % (
          (r["prompt_tokens"], r["output_tokens"]), usage))
check(r["output"] == got["text"], "row text differs from the stream")
check(r["settings"]["stream"] is True and r["settings"]["http_status"] == 200,
      "row settings %r" % r["settings"])
print("server_openai: ok (%d tokens)" % n_out)
