"""200 concurrent streaming chat requests against `serve --parallel 4
--max-queue 16`: no crash, every request answered 200 (a whole stream
ending in [DONE]) or 429 (with Retry-After and an error object), and the
run log holds exactly one row per 200 (and one "rejected" row per 429).
Then /metrics, read by Prometheus' own parser (prometheus_client): the
request counters by status equal the answers, and the histogram counts
equal the run log's counts (TTFT: rows with a first token; end-to-end: rows
not refused).

Usage: test_concurrency.py WORKBENCH_CLI MODEL TMPDIR
"""

import http.client
import json
import os
import sys
import threading
import urllib.parse
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from serverlib import MODEL_NAME, Server, check, rows

cli, model, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(tmp, exist_ok=True)
N = 200
db = os.path.join(tmp, "concurrency.sqlite")
if os.path.exists(db):
    os.remove(db)

results = [None] * N
start = threading.Barrier(N)


def one(i, host, port):
    try:
        con = http.client.HTTPConnection(host, port, timeout=60)
        body = json.dumps({"model": MODEL_NAME, "stream": True, "max_tokens": 16,
                           "temperature": 0.7, "seed": i,
                           "messages": [{"role": "user", "content": "Story %d:" % i}]})
        start.wait()
        con.request("POST", "/v1/chat/completions", body=body,
                    headers={"Content-Type": "application/json"})
        resp = con.getresponse()
        data = resp.read().decode("utf-8", "replace")
        results[i] = (resp.status, resp.getheader("Retry-After"), data)
        con.close()
    except Exception as e:  # reported below: every request must be answered
        results[i] = ("exception", None, repr(e))


with Server(cli, model, ["--parallel", "4", "--max-queue", "16"], db=db) as s:
    parts = urllib.parse.urlsplit(s.url)
    threads = [threading.Thread(target=one, args=(i, parts.hostname, parts.port))
               for i in range(N)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check(s.proc.poll() is None, "the server died")
    with urllib.request.urlopen(s.url + "/metrics", timeout=30) as m:
        check(m.status == 200, "/metrics answered %d" % m.status)
        check(m.headers["Content-Type"].startswith("text/plain; version=0.0.4"),
              "/metrics content type %r" % m.headers["Content-Type"])
        metrics_text = m.read().decode("utf-8")

n200 = n429 = 0
for i, (status, retry_after, data) in enumerate(results):
    if status == 200:
        n200 += 1
        check(data.endswith("data: [DONE]\n\n"), "request %d: stream not ended: %r" % (i, data[-200:]))
    elif status == 429:
        n429 += 1
        check(retry_after is not None and int(retry_after) >= 1, "429 without Retry-After")
        check(json.loads(data)["error"]["code"] == "rate_limit_exceeded", "429 body %r" % data)
    else:
        check(False, "request %d answered %r: %s" % (i, status, data[:300]))
check(n200 + n429 == N, "answered %d of %d" % (n200 + n429, N))
check(n200 >= 20, "only %d requests served" % n200)

logged = rows(db)
ok_rows = [r for r in logged if r["settings"].get("http_status") == 200]
busy_rows = [r for r in logged if r["settings"].get("http_status") == 429]
check(len(ok_rows) == n200, "%d rows with status 200, %d answers 200" % (len(ok_rows), n200))
check(len(busy_rows) == n429, "%d rows with status 429, %d answers 429" % (len(busy_rows), n429))
check(len(logged) == N, "%d rows for %d requests" % (len(logged), N))
for r in ok_rows:
    check(r["finish_reason"] in ("stop", "length"), "a 200 row finished %r" % r["finish_reason"])
for r in busy_rows:
    check(r["finish_reason"] == "rejected", "a 429 row finished %r" % r["finish_reason"])
# The scrape: sums over every label set of one sample name.
samples = {}
for family in text_string_to_metric_families(metrics_text):
    for sample in family.samples:
        samples.setdefault(sample.name, []).append(sample)


def total(name, **labels):
    return sum(x.value for x in samples.get(name, [])
               if all(x.labels.get(k) == v for k, v in labels.items()))


check(total("workbench_requests_total", status="200") == n200,
      "requests_total{status=200} %r, answers 200: %d" % (total("workbench_requests_total", status="200"), n200))
check(total("workbench_requests_total", status="429") == n429,
      "requests_total{status=429} %r, answers 429: %d" % (total("workbench_requests_total", status="429"), n429))
with_first_token = [r for r in logged if r["ttft_ms"] is not None]
check(total("workbench_time_to_first_token_seconds_count") == len(with_first_token),
      "TTFT histogram count %r, rows with a TTFT %d" % (
          total("workbench_time_to_first_token_seconds_count"), len(with_first_token)))
not_refused = [r for r in logged if r["finish_reason"] != "rejected"]
check(total("workbench_e2e_request_latency_seconds_count") == len(not_refused),
      "e2e histogram count %r, rows not refused %d" % (
          total("workbench_e2e_request_latency_seconds_count"), len(not_refused)))
print("server_concurrency: ok (%d served, %d answered 429)" % (n200, n429))
