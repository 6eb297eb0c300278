"""workbench-cli load against our own `workbench-cli serve` (stories260K,
CPU backend, 127.0.0.1):
  - a Poisson load at 25 requests/s over 500 requests achieves that rate
    within 5%, measured independently from the server's run log (when the
    server received each request);
  - the client-side TTFT of every request is >= the server's own TTFT for
    that request (matched through the OpenAI "user" field each request
    carries, which the server logs);
  - a short sweep has a synchronous step, a throughput step and N rates
    strictly between their rates, goodput <= throughput at every step, and
    calls out the highest rate within the SLOs (every step with a loose SLO,
    none with an impossible one);
  - scheduler telemetry (GET /scheduler/passes) of a closed-loop step:
    its passes' decode tokens equal the output tokens the client counted
    from the usage blocks, prefill + cached tokens the prompt tokens, the
    batch never exceeds --parallel, and the CSV has a row per pass;
  - compare under load: the same sweep against a second server with one
    slot runs the second at the first's rates, and each target's telemetry
    is its own (batch size 1 on the second, up to 4 on the first);
  - the queue wait the server reports in each answer (its "timings"
    extension), which the client logs and summarizes, equals the queue wait
    the server logged for that request, and is <= the client's TTFT.

Usage: test_own_server.py WORKBENCH_CLI MODEL TMPDIR [RATE REQUESTS]
(RATE and REQUESTS default to 25 and 500; a sanitizer build, whose server
sustains about 11 requests/s on 2 cores, passes 6 and 150.)
"""

import json
import os
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "server"))
from serverlib import Server, check  # noqa: E402

CLI, MODEL, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(TMP, exist_ok=True)


def fresh(path):
    for f in (path, path + "-wal", path + "-shm"):
        if os.path.exists(f):
            os.remove(f)
    return path


def load(url, *extra):
    p = subprocess.run([CLI, "load", "--target", url, "--json"] + list(extra),
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "load exited %d: %s" % (p.returncode, p.stderr))
    return json.loads(p.stdout)


def by_user(db):
    """user field -> (ttft_ms, started_ms, finish_reason, queue_wait_ms) of every row."""
    con = sqlite3.connect(db)
    try:
        return {u: (t, s, f, q) for u, t, s, f, q in con.execute(
            "SELECT json_extract(settings, '$.user'), ttft_ms, started_ms, finish_reason, "
            "queue_wait_ms FROM responses")}
    finally:
        con.close()


server_db = fresh(os.path.join(TMP, "server.sqlite"))
client_db = fresh(os.path.join(TMP, "client.sqlite"))
RATE, N = (float(sys.argv[4]), int(sys.argv[5])) if len(sys.argv) > 5 else (25.0, 500)

with Server(CLI, MODEL, ["--parallel", "4"], db=server_db) as s:
    out = load(s.url, "--arrival", "poisson", "--rate", str(RATE), "--requests", str(N),
               "--max-tokens", "4", "--seed", "1", "--db", client_db)
    step = out["steps"][0]
    check(step["completed"] == N and step["errors"] == 0, "poisson: %s" % step)
    check(abs(step["achieved_rate"] - RATE) / RATE < 0.05,
          "poisson: achieved %.3f requests/s, offered %.1f" % (step["achieved_rate"], RATE))
    check(step["goodput"] <= step["request_throughput"], "poisson: goodput > throughput")

    # Scheduler telemetry of a closed loop of 6 against 4 slots.
    tel_csv = os.path.join(TMP, "telemetry.csv")
    tel = load(s.url, "--concurrency", "6", "--requests", "30", "--max-tokens", "6",
               "--no-log", "--telemetry-csv", tel_csv)
    tstep = tel["steps"][0]
    sched = tstep.get("scheduler")
    check(tel["telemetry"]["available"] and sched, "telemetry: %s" % tel["telemetry"])
    out_tokens = round(tstep["output_throughput"] * tstep["duration_s"])
    in_tokens = round(tstep["input_throughput"] * tstep["duration_s"])
    check(sched["decode_tokens"] == out_tokens,
          "telemetry: %d decode tokens in the passes, %d output tokens by usage" %
          (sched["decode_tokens"], out_tokens))
    with open(tel_csv) as f:
        rows = [line.rstrip("\n").split(",") for line in f][1:]
    check(len(rows) == sched["passes"], "telemetry CSV: %d rows, %d passes" %
          (len(rows), sched["passes"]))
    check(sched["batch_max"] <= 4 and all(1 <= int(r[4]) <= 4 for r in rows),
          "telemetry: a pass with a batch outside 1..4 (--parallel 4): %s" % sched)
    check(sum(int(r[6]) for r in rows) == out_tokens, "telemetry CSV: decode tokens")
    # Prompt tokens: computed by the passes, or taken from the prefix cache
    # (all 30 prompts are distinct synthetic ones, so few are cached).
    check(sched["prefill_tokens"] <= in_tokens, "telemetry: %d prefill tokens > %d prompt tokens"
          % (sched["prefill_tokens"], in_tokens))

    # Compare under load: a second server with a single slot.
    with Server(CLI, MODEL, ["--parallel", "1"]) as s1:
        cmp = load(s.url, "--compare-target", s1.url, "--sweep", "1", "--requests", "12",
                   "--max-tokens", "4", "--sweep-concurrency", "4", "--no-log")
    other = cmp.get("compare") or {}
    check(other.get("target") == s1.url + "/v1" or other.get("target") == s1.url,
          "compare: target %s, expected %s" % (other.get("target"), s1.url))
    check([x["offered_rate"] for x in other.get("steps", [])][2:] ==
          [x["offered_rate"] for x in cmp["steps"]][2:],
          "compare: the second target's rates are not the first's")
    for x in cmp["steps"] + other.get("steps", []):
        check(x["completed"] == 12 and x["errors"] == 0, "compare step %s: %s" % (x["label"], x))
    check(all(x["scheduler"]["batch_max"] == 1 for x in other["steps"]),
          "compare: a pass of the one-slot server ran more than one sequence")
    check(cmp["steps"][1]["scheduler"]["batch_max"] > 1,
          "compare: the throughput step on 4 slots never batched")

    # The sweep (runs while the server is up; its requests are not logged).
    sweep = load(s.url, "--sweep", "3", "--requests", "40", "--max-tokens", "8",
                 "--sweep-concurrency", "16", "--slo-ttft-p99-ms", "60000", "--no-log")
    strict = load(s.url, "--sweep", "1", "--requests", "20", "--max-tokens", "4",
                  "--sweep-concurrency", "8", "--slo-ttft-p99-ms", "0.000001", "--no-log")

# The rate the server saw: 499 gaps between the first and last request it
# received, from its own run log (ms resolution over ~20 s).
server = by_user(server_db)
client = by_user(client_db)
check(len(client) == N, "client log: %d rows, expected %d" % (len(client), N))
mine = {u: v for u, v in server.items() if u in client}
check(len(mine) == N, "server log: %d of %d requests found by user" % (len(mine), N))
starts = sorted(v[1] for v in mine.values())
seen_rate = (N - 1) / ((starts[-1] - starts[0]) / 1000.0)
check(abs(seen_rate - RATE) / RATE < 0.05,
      "the server saw %.3f requests/s, offered %.1f" % (seen_rate, RATE))
bad = [(u, client[u][0], mine[u][0]) for u in mine
       if mine[u][0] is None or client[u][0] is None or client[u][0] < mine[u][0]]
check(not bad, "client TTFT < server TTFT (or missing) for %d requests, e.g. %s" %
      (len(bad), bad[:3]))
# Queue wait: reported per answer, logged by the client, equal to the
# server's own log (both ms; the server's row builder does not go through
# the answer's JSON).
bad = [(u, client[u][3], mine[u][3]) for u in mine
       if client[u][3] is None or mine[u][3] is None or abs(client[u][3] - mine[u][3]) > 1e-6
       or client[u][3] > client[u][0]]
check(not bad, "reported queue wait differs from the server's log (or > client TTFT) for %d "
      "requests, e.g. %s" % (len(bad), bad[:3]))
check(step["queue_wait_ms"]["count"] == N, "poisson: queue wait of %s requests, expected %d" %
      (step["queue_wait_ms"]["count"], N))

steps = sweep["steps"]
check([x["label"] for x in steps[:2]] == ["synchronous", "throughput"] and len(steps) == 5,
      "sweep: steps %s" % [x["label"] for x in steps])
sync_rate, max_rate = steps[0]["request_throughput"], steps[1]["request_throughput"]
lo, hi = min(sync_rate, max_rate), max(sync_rate, max_rate)
for x in steps[2:]:
    check(lo < x["offered_rate"] < hi, "sweep: rate %s outside (%s, %s)" %
          (x["offered_rate"], lo, hi))
for x in steps + strict["steps"]:
    check(x["errors"] == 0, "sweep step %s had errors: %s" % (x["label"], x["error_reasons"]))
    check(x["queue_wait_ms"]["count"] == x["completed"],
          "sweep step %s: queue wait of %s of %s requests" %
          (x["label"], x["queue_wait_ms"]["count"], x["completed"]))
    check(x["goodput"] <= x["request_throughput"] + 1e-9,
          "sweep step %s: goodput %s > throughput %s" %
          (x["label"], x["goodput"], x["request_throughput"]))
best = max(range(len(steps)), key=lambda i: steps[i]["request_throughput"])
check(sweep["best_step"] == best, "sweep: best step %s, expected %d (the highest rate)" %
      (sweep["best_step"], best))
check(strict["best_step"] is None, "an impossible SLO met: %s" % strict["best_step"])
check(all(x["goodput"] == 0 for x in strict["steps"]), "goodput under an impossible SLO")
print("ok: achieved %.2f, server saw %.2f requests/s; saturation %.1f requests/s" %
      (step["achieved_rate"], seen_rate, max_rate))
