"""workbench-cli load against servers that misbehave: every request ends with
a per-request error naming the reason (or, for a server that ignores
"stream", a success with TTFT = e2e), the test keeps going, and every
request is in the run log.

Usage: test_misbehaving.py WORKBENCH_CLI TMPDIR
"""

import json
import os
import socket
import sqlite3
import subprocess
import sys

from misbehaving_server import AUTH_KEY, serve

CLI, TMP = sys.argv[1], sys.argv[2]
os.makedirs(TMP, exist_ok=True)
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL: " + msg, file=sys.stderr)


def load(url, n=3, extra=(), db=None):
    args = [CLI, "load", "--target", url, "--model", "m", "--concurrency", "1",
            "--requests", str(n), "--max-tokens", "4", "--timeout-s", "1", "--json"]
    args += ["--db", db] if db else ["--no-log"]
    p = subprocess.run(args + list(extra), capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        check(False, "%s: exit %d: %s" % (url, p.returncode, p.stderr))
        return None
    return json.loads(p.stdout)["steps"][0]


def expect_errors(url, reason, n=3, timeouts=0):
    s = load(url, n)
    if s is None:
        return
    check(s["requests"] == n and s["errors"] == n and s["completed"] == 0,
          "%s: expected %d errors, got %s" % (url, n, s))
    check(s["timeouts"] == timeouts, "%s: expected %d timeouts, got %d" %
          (url, timeouts, s["timeouts"]))
    reasons = s["error_reasons"]
    check(any(reason in r for r in reasons), "%s: no error mentions %r: %s" %
          (url, reason, list(reasons)))


srv, base = serve()

# A port nothing listens on: bind, read the port, close.
sock = socket.socket()
sock.bind(("127.0.0.1", 0))
dead_port = sock.getsockname()[1]
sock.close()
expect_errors("http://127.0.0.1:%d" % dead_port, "could not connect")

expect_errors(base + "/stall", "stream stalled", n=2, timeouts=2)
expect_errors(base + "/http500", "HTTP 500: internal failure")
expect_errors(base + "/midstream", "error mid-stream (event 3): the engine crashed")
expect_errors(base + "/truncated", "ended before 'data: [DONE]'")
expect_errors(base + "/invalid", "invalid SSE at event 2")
expect_errors(base + "/huge", "line longer than 1048576 bytes", n=2)
# A stream with no end: cut off at 1 KiB a token of max_tokens plus a line.
expect_errors(base + "/endless", "the server does not stop at max_tokens", n=1)

# An error value nested 300 000 deep, mid-stream and as an HTTP 500 body:
# reported with the text quoted, not walked (a recursive walk overflows).
expect_errors(base + "/deep", "error mid-stream (event 2): {\"error\": [[[[", n=1)
expect_errors(base + "/deep500", "HTTP 500: {\"error\": [[[[", n=1)

# A server that ignores "stream": accepted, TTFT = e2e, tokens from usage.
s = load(base + "/nostream")
if s:
    check(s["completed"] == 3 and s["errors"] == 0, "nostream: %s" % s)
    check(s["ttft_ms"]["p50"] == s["e2e_ms"]["p50"], "nostream: TTFT != e2e")
    check(s["output_throughput"] > 0 and not s["output_tokens_approximate"],
          "nostream: tokens from usage expected")

# Half the requests fail: the test goes on, and the run log has every request
# with the reason, the target URL and the server's version headers.
db = os.path.join(TMP, "flaky.sqlite")
for f in (db, db + "-wal", db + "-shm"):
    if os.path.exists(f):
        os.remove(f)
s = load(base + "/flaky", n=6, db=db)
if s:
    check(s["completed"] == 3 and s["errors"] == 3, "flaky: %s" % s)
    con = sqlite3.connect(db)
    runs = con.execute("SELECT id, kind, name, settings FROM runs").fetchall()
    check(len(runs) == 1 and runs[0][1] == "load_test" and runs[0][2] == base + "/flaky",
          "flaky: one load_test run named by the URL expected: %s" % runs)
    rows = con.execute("SELECT finish_reason, error, output, output_tokens, settings "
                       "FROM responses ORDER BY id").fetchall()
    check(len(rows) == 6, "flaky: 6 rows expected, got %d" % len(rows))
    errs = [r for r in rows if r[0] == "error"]
    oks = [r for r in rows if r[0] == "stop"]
    check(len(errs) == 3 and all("HTTP 500" in r[1] for r in errs), "flaky: error rows %s" % errs)
    check(len(oks) == 3 and all(r[2] == "Once upon a" and r[3] == 3 for r in oks),
          "flaky: ok rows %s" % oks)
    st = json.loads(oks[0][4])
    check(st.get("server_headers", {}).get("server") == "misbehaving/1.0" and
          st["server_headers"].get("x-engine-version") == "9.9.9" and
          st.get("target") == base + "/flaky" and st.get("model") == "m" and
          st.get("served_model") == "m" and st.get("response_id") == "chatcmpl-t",
          "flaky: settings lack the target, model or server headers: %s" % st)
    con.close()

# The API key comes from the environment, is sent, and is never printed or logged.
db2 = os.path.join(TMP, "key.sqlite")
for f in (db2, db2 + "-wal", db2 + "-shm"):
    if os.path.exists(f):
        os.remove(f)
secret = AUTH_KEY
env = dict(os.environ, WB_TEST_KEY=secret)
p = subprocess.run([CLI, "load", "--target", base + "/auth", "--json", "--model", "m", "--requests", "2",
                    "--concurrency", "1", "--api-key-env", "WB_TEST_KEY", "--db", db2],
                   capture_output=True, text=True, env=env, timeout=60)
check(p.returncode == 0, "key: exit %d %s" % (p.returncode, p.stderr))
if p.returncode == 0:
    check(json.loads(p.stdout)["steps"][0]["completed"] == 2, "key: the key was not sent")
check(secret not in p.stdout and secret not in p.stderr, "key printed")
for f in (db2, db2 + "-wal"):
    if os.path.exists(f):
        check(secret.encode() not in open(f, "rb").read(), "key found in " + f)

# Scheduler telemetry: a target without it (404) or with a body that is not
# the documented shape is reported as unavailable, with the reason; the
# test itself goes on.
for mode, reason in (("ok", "404"), ("badtel", "'columns' is not the 10 known columns")):
    p = subprocess.run([CLI, "load", "--target", base + "/" + mode, "--json", "--model", "m",
                        "--requests", "2", "--concurrency", "1", "--no-log",
                        "--telemetry-csv", os.path.join(TMP, "tel.csv")],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, "telemetry %s: exit %d %s" % (mode, p.returncode, p.stderr))
    if p.returncode == 0:
        doc = json.loads(p.stdout)
        t = doc["telemetry"]
        check(not t["available"] and reason in (t["reason"] or ""),
              "telemetry %s: expected unavailable for '%s', got %s" % (mode, reason, t))
        check(doc["steps"][0]["completed"] == 2 and "scheduler" not in doc["steps"][0],
              "telemetry %s: step %s" % (mode, doc["steps"][0]))
        check("no file written" in p.stderr, "telemetry %s: no warning about --telemetry-csv: %s"
              % (mode, p.stderr))

srv.shutdown()
if failures:
    sys.exit(1)
print("ok")
