"""`workbench-cli serve --draft ngram` against a real client over 127.0.0.1:
a chat completion and a completion at temperature 0 answer the same text as
the plain server's (greedy speculation keeps the target's tokens), and each
request's run-log row carries its speculative settings and stats.

Usage: test_speculative.py WORKBENCH_CLI MODEL TMPDIR
"""

import json
import os
import sys
import urllib.request

from serverlib import MODEL_NAME, Server, check, rows

cli, model, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(tmp, exist_ok=True)

# Text that repeats, so n-gram drafts find earlier matches.
TEXT = "Lily had a red ball. Lily had a red ball. Lily had a red ball. Lily had"


def post(url, path, body):
    req = urllib.request.Request(url + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        check(r.status == 200, "%s: status %d" % (path, r.status))
        return json.loads(r.read())


def answers(url):
    chat = post(url, "/v1/chat/completions", {
        "model": MODEL_NAME, "messages": [{"role": "user", "content": TEXT}],
        "max_tokens": 40, "temperature": 0})
    comp = post(url, "/v1/completions", {
        "model": MODEL_NAME, "prompt": TEXT, "max_tokens": 40, "temperature": 0})
    return chat["choices"][0]["message"]["content"], comp["choices"][0]["text"]


# --parallel 1: a request runs alone, so speculation runs.
with Server(cli, model, ["--parallel", "1"]) as s:
    plain_chat, plain_comp = answers(s.url)

db = os.path.join(tmp, "runlog.sqlite")
if os.path.exists(db):
    os.remove(db)
with Server(cli, model, ["--parallel", "1", "--draft", "ngram", "--draft-k", "4"], db=db) as s:
    spec_chat, spec_comp = answers(s.url)

check(spec_chat == plain_chat, "chat: %r with --draft ngram, %r without" % (spec_chat, plain_chat))
check(spec_comp == plain_comp, "completion: %r with --draft ngram, %r without" %
      (spec_comp, plain_comp))
check(len(plain_comp) > 0, "empty completion")

logged = rows(db)
check(len(logged) == 2, "%d response rows, expected 2" % len(logged))
for r in logged:
    st = r["settings"]
    check(st.get("speculative", {}).get("kind") == "ngram", "row settings: %r" % st)
    check(st["speculative"].get("k") == 4, "row k: %r" % st["speculative"])
    stats = st.get("speculative_stats")
    check(stats is not None and stats["drafter"] == "ngram", "row stats: %r" % stats)
    check(stats["shared_passes"] == 0, "a lone request shared passes: %r" % stats)
    check(0 <= stats["accepted"] <= stats["drafted"], "stats: %r" % stats)
    # Each decode pass emits its kept draft tokens and one token of its own;
    # the first output token comes from the prefill.
    check(r["output_tokens"] - 1 == stats["target_passes"] + stats["accepted"],
          "tokens %d vs passes %d + accepted %d" % (r["output_tokens"], stats["target_passes"],
                                                      stats["accepted"]))
check(any(r["settings"]["speculative_stats"]["accepted"] > 0 for r in logged),
      "no draft token was ever kept on repeated text")
print("ok")
