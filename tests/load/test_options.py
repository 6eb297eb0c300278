"""workbench-cli load's options against the well-behaved mode of the test
server (tests/load/misbehaving_server.py, mode "ok": 3 content chunks, usage
5 prompt / 3 completion tokens): warm-up excluded from the figures but
logged, a prompt file's prompts sent, --duration, gamma arrivals with a cap
in flight, the CSV file, cost at a price (hand-worked), and bad command
lines refused with a clear message and exit status 2.

Usage: test_options.py WORKBENCH_CLI MODEL TMPDIR
"""

import csv
import json
import os
import shutil
import sqlite3
import subprocess
import sys

from misbehaving_server import serve

CLI, MODEL, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(TMP, exist_ok=True)
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL: " + msg, file=sys.stderr)


def fresh(path):
    for f in (path, path + "-wal", path + "-shm"):
        if os.path.exists(f):
            os.remove(f)
    return path


def run(args):
    return subprocess.run([CLI, "load"] + args, capture_output=True, text=True, timeout=60)


srv, base = serve()
url = base + "/ok"

# Warm-up and a prompt file; the run log holds warm-up rows marked as such.
prompts = os.path.join(TMP, "prompts.jsonl")
with open(prompts, "w") as f:
    f.write('{"prompt": "first prompt"}\n\nsecond prompt\n')
db = fresh(os.path.join(TMP, "opts.sqlite"))
p = run(["--target", url, "--concurrency", "2", "--requests", "4", "--warmup", "2",
         "--prompts", prompts, "--json", "--db", db])
check(p.returncode == 0, "warmup: exit %d %s" % (p.returncode, p.stderr))
if p.returncode == 0:
    s = json.loads(p.stdout)
    check(s["model"] == "m", "the model from GET /v1/models expected: %s" % s["model"])
    st = s["steps"][0]
    check(st["requests"] == 4 and st["completed"] == 4, "warmup: %s" % st)
    # 4 answers x 3 usage tokens; output tokens/s = 12 / duration.
    check(abs(st["output_throughput"] * st["duration_s"] - 12) < 1e-6, "output tokens: %s" % st)
    check(abs(st["input_throughput"] * st["duration_s"] - 20) < 1e-6, "input tokens: %s" % st)
    check(st["ttft_ms"]["count"] == 4 and st["itl_ms"]["count"] == 8, "counts: %s" % st)
    con = sqlite3.connect(db)
    rows = con.execute("SELECT prompt, json_extract(settings, '$.warmup'), output_tokens "
                       "FROM responses").fetchall()
    con.close()
    check(len(rows) == 6 and sum(1 for r in rows if r[1] == 1) == 2, "warmup rows: %s" % rows)
    check({r[0] for r in rows} == {"first prompt", "second prompt"}, "prompts: %s" % rows)

# Without a usage block: 3 content chunks counted (approximate), or with
# --local-model the tokens of "Once upon a time there was" by that model's tokenizer (the
# count `workbench-cli tokenize --no-bos` prints; the tokenizer is checked
# against llama.cpp in tests/tokenizer).
def tokens_per_s(extra):
    p = run(["--target", base + "/nousage", "--model", "m", "--concurrency", "1",
             "--requests", "2", "--json", "--no-log"] + extra)
    check(p.returncode == 0, "nousage: %s" % p.stderr)
    st = json.loads(p.stdout)["steps"][0]
    return st["output_throughput"] * st["duration_s"] / 2, st["output_tokens_approximate"]


n_tok = len(subprocess.run([CLI, "tokenize", "-m", MODEL, "--no-bos", "-p",
                            "Once upon a time there was"],
                           capture_output=True, text=True).stdout.split())
check(n_tok > 0, "tokenize printed nothing")
per, approx = tokens_per_s([])
check(abs(per - 3) < 1e-6 and approx, "chunks: %s tokens, approximate %s" % (per, approx))
per, approx = tokens_per_s(["--local-model", MODEL])
check(abs(per - n_tok) < 1e-6 and not approx, "tokenizer: %s tokens, expected %d" % (per, n_tok))

# With --local-model, synthetic prompts are sized in that model's tokens
# (stories260K's 512-token vocabulary spends several tokens on most words):
# each logged prompt is 40 tokens by `workbench-cli tokenize` (whole words,
# then " a", one token in this vocabulary, while one more fits). By words,
# 40 words would be far more than 40 tokens.
db = fresh(os.path.join(TMP, "sized.sqlite"))
# Warm-up requests get prompts of their own: none of the 2 warm-up prompts is
# a counted request's (a counted request would find it in the prefix cache).
p = run(["--target", url, "--concurrency", "1", "--requests", "4", "--json", "--db", db,
         "--synthetic-prompt-tokens", "40", "--shared-prefix-share", "0.5",
         "--local-model", MODEL, "--warmup", "2"])
check(p.returncode == 0, "sized prompts: exit %d %s" % (p.returncode, p.stderr))
if p.returncode == 0:
    con = sqlite3.connect(db)
    sent = [r[0] for r in con.execute("SELECT prompt FROM responses")]
    warm = [r[0] for r in con.execute(
        "SELECT prompt FROM responses WHERE json_extract(settings, '$.warmup') = 1")]
    con.close()
    check(len(warm) == 2 and len(set(warm)) == 2 and
          not set(warm) & (set(sent) - set(warm)) and len(set(sent)) == 6,
          "warm-up prompts %s among %s" % (warm, sent))
    counts = [len(subprocess.run([CLI, "tokenize", "-m", MODEL, "--no-bos", "-p", t],
                                 capture_output=True, text=True).stdout.split()) for t in sent]
    check(len(sent) == 6 and all(c == 40 for c in counts),
          "sized prompts: %s tokens for %s" % (counts, sent))
    words = [len(t.split()) for t in sent]
    check(all(w < c for w, c in zip(words, counts)), "words %s vs tokens %s" % (words, counts))

# Cost at a per-token price, worked by hand: 4 answers of 5 prompt and 3
# completion tokens (the server's usage), 1 USD/M input and 2 USD/M output:
# (20 + 2 x 12) / 1e6 = 4.4e-5 USD, 1.1e-5 a request, 0.011 per 1k, 3.6667
# per M output tokens; the CSV has the same four figures.
priced_csv = os.path.join(TMP, "priced.csv")
p = run(["--target", url, "--concurrency", "2", "--requests", "4", "--json", "--no-log",
         "--price-per-m-input", "1", "--price-per-m-output", "2", "--csv", priced_csv])
check(p.returncode == 0, "priced: exit %d %s" % (p.returncode, p.stderr))
if p.returncode == 0:
    doc = json.loads(p.stdout)
    c = doc["steps"][0].get("cost") or {}
    want = {"total": 4.4e-5, "per_request": 1.1e-5, "per_1k_requests": 0.011,
            "per_m_output_tokens": 44.0 / 12}
    check(all(abs((c.get(k) or -1) - v) <= 1e-9 * max(1, v) for k, v in want.items()) and
          "1 USD/M x 20 input tokens" in c.get("formula", "") and
          doc["price"] == {"basis": "per_m_tokens", "per_m_input": 1.0, "per_m_output": 2.0,
                           "currency": "USD"}, "priced: %s %s" % (c, doc.get("price")))
    with open(priced_csv) as f:
        row = list(csv.DictReader(f))[0]
    check(abs(float(row["cost_per_request"]) - 1.1e-5) < 1e-12 and
          abs(float(row["cost_per_m_output_tokens"]) - 44.0 / 12) < 1e-6, "priced CSV: %s" % row)
p = run(["--target", url, "--concurrency", "1", "--requests", "1", "--no-log",
         "--price-per-hour", "3.6"])
check(p.returncode == 0 and "per 1k requests" in p.stdout and "USD/h x" in p.stdout,
      "hourly price in the table: %s %s" % (p.stdout, p.stderr))

# A model the endpoint does not list (the server lists "m"): said before
# the test, which still runs; a listed one, or none named, says nothing.
for model, warned in (("no-such-model", True), ("m", False)):
    for flag in ("--model", "--compare-model"):
        extra = ["--compare-target", url] if flag == "--compare-model" else []
        p = run(["--target", url, "--concurrency", "1", "--requests", "1", "--no-log", flag,
                 model] + extra)
        said = "'%s' is not one of them" % model in p.stderr and "lists the models m" in p.stderr
        check(p.returncode == 0 and said == warned,
              "%s %s: warned=%s, exit %d: %s" % (flag, model, said, p.returncode, p.stderr))

# A prompt file with invalid UTF-8: sent (as U+FFFD) and logged, no crash.
bad = os.path.join(TMP, "bad-utf8.txt")
with open(bad, "wb") as f:
    f.write(b"bad \xff\xfe bytes\n")
p = run(["--target", url, "--concurrency", "1", "--requests", "2", "--prompts", bad, "--json",
         "--db", fresh(os.path.join(TMP, "bad.sqlite"))])
check(p.returncode == 0 and json.loads(p.stdout)["steps"][0]["completed"] == 2,
      "invalid UTF-8 prompt: exit %d %s" % (p.returncode, p.stderr))

# --duration bounds an open-loop step: 0.5 s at 20/s is 11 sends (t = 0 .. 0.5).
p = run(["--target", url, "--rate", "20", "--requests", "1000", "--duration", "0.5",
         "--arrival", "constant", "--json", "--no-log"])
check(p.returncode == 0 and json.loads(p.stdout)["steps"][0]["requests"] == 11,
      "duration: %s %s" % (p.stdout[:300], p.stderr))

# Gamma arrivals with a cap of 1 in flight, and the CSV file.
out_csv = os.path.join(TMP, "steps.csv")
p = run(["--target", url, "--arrival", "gamma", "--burstiness", "0.5", "--rate", "50",
         "--max-in-flight", "1", "--requests", "10", "--csv", out_csv, "--no-log",
         "--synthetic-prompt-tokens", "20:5", "--shared-prefix-share", "0.5"])
check(p.returncode == 0 and "gamma" in p.stdout, "gamma: %s %s" % (p.stdout, p.stderr))
# With 1 in flight, each answer takes >= 30 ms (the server sleeps 3 x 10 ms),
# so 10 sends span >= 9 x 30 ms: at most 33.3 requests/s go out of the 50
# offered (a bound from the server's sleeps, not a timing guess).
p = run(["--target", url, "--arrival", "gamma", "--burstiness", "0.5", "--rate", "50",
         "--max-in-flight", "1", "--requests", "10", "--json", "--no-log"])
if p.returncode == 0:
    st = json.loads(p.stdout)["steps"][0]
    check(st["achieved_rate"] <= 1000.0 / 30 and st["completed"] == 10,
          "cap: achieved %s requests/s with 1 in flight" % st["achieved_rate"])
if os.path.exists(out_csv):
    with open(out_csv) as f:
        table = list(csv.DictReader(f))
    check(len(table) == 1 and table[0]["completed"] == "10" and table[0]["offered_rate"] != "" and
          float(table[0]["ttft_p99_ms"]) > 0, "csv: %s" % table)
else:
    check(False, "no CSV written")

# Bad command lines: exit 2 and a message naming the problem.
for args, words in [
    ([], "--target URL is required"),
    (["--target", "ftp://x"], "expected a base URL"),
    (["--target", url, "--arrival", "uniform"], "expected constant, poisson or gamma"),
    (["--target", url, "--concurrency", "2", "--rate", "3"], "excludes --rate"),
    (["--target", url, "--api-key-env", "WB_SURELY_UNSET_VAR"], "is not set"),
    (["--target", url, "--synthetic-prompt-tokens", "x:1"], "expected MEAN[:STDDEV]"),
    (["--target", url, "--db", "a", "--no-log"], "exclude each other"),
    (["--target", url, "--price-per-hour", "2", "--price-per-m-output", "1"], "excludes"),
    (["--target", url, "--price-per-hour", "nan"], "--price-per-hour"),
]:
    p = run(args)
    check(p.returncode == 2 and words in p.stderr, "%s: exit %d, stderr %r" %
          (args, p.returncode, p.stderr))

srv.shutdown()

# https (Debian's cpp-httplib has OpenSSL): a self-signed server is refused
# against the system's CA store, and accepted with --ca-cert.
key, cert = os.path.join(TMP, "key.pem"), os.path.join(TMP, "cert.pem")
g = subprocess.run(["openssl" if shutil.which("openssl") else "true", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], capture_output=True, text=True)
if g.returncode != 0 or not os.path.exists(cert):
    print("skipping https: openssl is missing or failed: " + g.stderr, file=sys.stderr)
else:
    tsrv, tbase = serve((cert, key))
    common = ["--target", tbase + "/ok", "--model", "m", "--requests", "2", "--concurrency", "1",
              "--json", "--no-log"]
    p = run(common)
    st = json.loads(p.stdout)["steps"][0] if p.returncode == 0 else {}
    check(st.get("errors") == 2 and any("TLS" in r for r in st.get("error_reasons", {})),
          "https, self-signed: %s %s" % (st, p.stderr))
    p = run(common + ["--ca-cert", cert])
    st = json.loads(p.stdout)["steps"][0] if p.returncode == 0 else {}
    check(st.get("completed") == 2, "https with --ca-cert: %s %s" % (st, p.stderr))
    tsrv.shutdown()

if failures:
    sys.exit(1)
print("ok")
