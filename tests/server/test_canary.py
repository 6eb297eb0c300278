"""Canary rollout through a real `workbench-cli serve -m A --canary B`:
- share: 1000 requests from 1000 distinct `user`s at a 25 % step are split
  within 3 points of 25 % (the run log's rollout_arm of each row), and a
  user asked again stays on its version;
- promote: the same model file as its own canary, strict drift bounds
  (token agreement >= 0.99, mean KLD <= 0.001 nats on shadow pairs) and
  loose latency bounds (latency on a shared 2-core machine is noise at this
  size): every step passes and the canary is promoted;
- roll back: a Q4_0 copy as the canary under the same bounds: its answers
  drift (a 4-bit copy of a 260K-parameter model is far from it token by
  token), two steps fail, the share goes back to 0 and later requests are
  all served by the stable version.
Decisions are read from GET /canary and the --canary-log JSON lines; after
the rollback, the run log's run_events hold server_start, one event per
decision (canary_step ... rollback) with its figures, and server_stop.

Usage: test_canary.py WORKBENCH_CLI MODEL TMPDIR
"""

import concurrent.futures
import json
import os
import subprocess
import sys
import time
import urllib.request

from serverlib import MODEL_NAME, Server, check, events, rows

cli, model, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(tmp, exist_ok=True)


def post(url, user, max_tokens=8, prompt="Once upon a time"):
    body = json.dumps({"model": MODEL_NAME, "prompt": prompt, "max_tokens": max_tokens,
                       "temperature": 0, "user": user}).encode()
    req = urllib.request.Request(url + "/v1/completions", data=body,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return r.status


def status(url):
    with urllib.request.urlopen(url + "/canary", timeout=30) as r:
        return json.loads(r.read())


def fresh(name):
    p = os.path.join(tmp, name)
    if os.path.exists(p):
        os.remove(p)
    return p


STRICT = ["--canary-min-agreement", "0.99", "--canary-max-kld", "0.001",
          "--canary-max-ttft-ratio", "1000", "--canary-max-itl-ratio", "1000",
          "--canary-max-error-increase", "0.5", "--canary-min-requests", "4",
          "--canary-min-shadow", "2", "--canary-shadow", "0.5", "--canary-max-failures", "2",
          "--canary-steps", "50,100", "--canary-step-s", "1.5", "--parallel", "2"]


def drive_until_done(url, deadline_s=90):
    """Requests from 4 clients with changing users until the rollout ends."""
    end = time.monotonic() + deadline_s
    n = 0
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        while time.monotonic() < end:
            list(pool.map(lambda i: post(url, "u%d" % i), range(n, n + 8)))
            n += 8
            st = status(url)
            if st["phase"] != "rolling":
                return st
    return status(url)


# 1. The share over 1000 users at a 25 % step (no decision within the run).
db = fresh("share.sqlite")
with Server(cli, model, ["--canary", model, "--canary-steps", "25,100", "--canary-step-s", "3600",
                         "--canary-min-shadow", "0", "--canary-shadow", "0", "--parallel", "4"],
            db=db) as s:
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(lambda i: post(s.url, "user-%d" % i, max_tokens=1), range(1000)))
    check(all(c == 200 for c in codes), "not every request answered 200")
    st = status(s.url)
    check(st["phase"] == "rolling" and st["share"] == 0.25, "rollout state %r" % st)
    for i in (3, 500, 999):  # asked again: the same version
        post(s.url, "user-%d" % i, max_tokens=1)
logged = rows(db)
check(len(logged) == 1003, "%d rows" % len(logged))
arms = {}
for r in logged:
    if r["settings"]["user"] in ("user-3", "user-500", "user-999") and \
            r["id"] == max(x["id"] for x in logged if x["settings"]["user"] == r["settings"]["user"]):
        continue  # the repeats
    arms.setdefault(r["settings"]["rollout_arm"], 0)
    arms[r["settings"]["rollout_arm"]] += 1
share = 100.0 * arms.get("canary", 0) / 1000
check(abs(share - 25) <= 3, "canary share %.1f%% of 1000 users, configured 25%%" % share)
by_user = {}
for r in logged:
    by_user.setdefault(r["settings"]["user"], []).append(r["settings"]["rollout_arm"])
for i in (3, 500, 999):
    arms_of = by_user["user-%d" % i]
    check(len(arms_of) == 2 and arms_of[0] == arms_of[1], "user-%d served by %r" % (i, arms_of))

# 2. Promote: the model as its own canary.
log_path = fresh("promote.jsonl")
with Server(cli, model, ["--canary", model, "--canary-log", log_path] + STRICT) as s:
    st = drive_until_done(s.url)
check(st["phase"] == "promoted", "same model as canary: %r" % st)
verdicts = [d["verdict"] for d in st["decisions"]]
check(verdicts[-1] == "promote" and "fail" not in verdicts and "rollback" not in verdicts,
      "verdicts %r" % verdicts)
last = st["decisions"][-1]
agreement = [c for c in last["checks"] if c["name"] == "token_agreement"][0]
check(agreement["result"] == "pass" and agreement["value"] >= 0.99, "agreement %r" % agreement)
with open(log_path) as f:
    logged_decisions = [json.loads(line) for line in f]
check([d["verdict"] for d in logged_decisions] == verdicts, "--canary-log %r" % logged_decisions)

# 3. Roll back: a Q4_0 copy as the canary.
q4 = os.path.join(tmp, "stories260K-q4_0.gguf")
q = subprocess.run([cli, "quantize", model, q4, "--type", "q4_0"], capture_output=True, text=True,
                   timeout=120)
check(q.returncode == 0, "quantize failed: %s" % q.stderr)
db = fresh("rollback.sqlite")
with Server(cli, model, ["--canary", q4] + STRICT, db=db) as s:
    st = drive_until_done(s.url)
    check(st["phase"] == "rolled_back", "Q4_0 canary: %r" % st)
    after = [post(s.url, "after-%d" % i) for i in range(10)]
verdicts = [d["verdict"] for d in st["decisions"]]
check(verdicts.count("fail") == 1 and verdicts[-1] == "rollback", "verdicts %r" % verdicts)
failed = [c for c in st["decisions"][-1]["checks"] if c["result"] == "fail"]
check(failed and all(c["name"] in ("token_agreement", "mean_kld") for c in failed),
      "the rollback's failed checks %r" % failed)
logged = rows(db)
tail = logged[-10:]
check(all(r["settings"]["rollout_arm"] == "stable" for r in tail),
      "after the rollback: %r" % [r["settings"]["rollout_arm"] for r in tail])
# Every decision is a run_events row of the server's run, in order, with the
# figures GET /canary showed; the server's start and stop bracket them.
ev = events(db)
kinds = [e["kind"] for e in ev]
want = ["server_start"] + ["rollback" if v == "rollback" else "canary_step" for v in verdicts] + \
    ["server_stop"]
check(kinds == want, "run_events kinds %r, want %r" % (kinds, want))
run_ids = {e["run_id"] for e in ev} | {r["run_id"] for r in logged}
check(len(run_ids) == 1, "events and responses in runs %r" % run_ids)
decided = [e["details"] for e in ev[1:-1]]
check([d["verdict"] for d in decided] == verdicts, "logged verdicts %r" % decided)
check(decided[-1]["share_after"] == 0 and decided[-1]["checks"] == st["decisions"][-1]["checks"],
      "the rollback event's figures %r" % decided[-1])
check(ev[0]["details"]["canary_max_failures"] == 2 and ev[0]["details"]["port"] > 0,
      "server_start details %r" % ev[0]["details"])
check(ev[-1]["details"]["canary_phase"] == "rolled_back", "server_stop %r" % ev[-1]["details"])

# `workbench-cli log events RUN_ID` lists them, oldest first.
run_id = ev[0]["run_id"]
out = subprocess.run([cli, "log", "events", str(run_id), "--db", db], capture_output=True,
                     text=True, timeout=60)
check(out.returncode == 0, "log events failed: %s" % out.stderr)
listed = [line.split()[2] for line in out.stdout.splitlines()[1:]]
check(listed == kinds, "log events listed %r, want %r" % (listed, kinds))

print("server_canary: ok (share %.1f%%, promote %r, rollback %r)" % (
    share, [d["verdict"] for d in logged_decisions], verdicts))
