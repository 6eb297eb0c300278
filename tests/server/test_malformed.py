"""Hostile and malformed HTTP over raw sockets against a real `workbench-cli
serve`: truncated request lines, headers and bodies; oversized headers;
invalid UTF-8 in the path, a header and the JSON body; wrong JSON types;
bad chunk sizes; pipelined garbage; a slowloris client trickling one header
byte a second; many idle connections. Each must be answered 4xx or closed by
the server, never kept open past the server's timeouts, never crash it.
Afterwards a normal chat request still answers 200, and the process exits 0
on SIGTERM with no sanitizer report (run it against an ASan build too).

Usage: test_malformed.py WORKBENCH_CLI MODEL TMPDIR
The server runs with --read-timeout-s 2 --keep-alive-timeout-s 2, so every
case ends in seconds; a connection still open HANG_S after its last byte
was sent is a hang (a bound generous enough for an ASan build, not a timing
measurement). Expected statuses are from RFC 9110/9112/6585 and
docs/server.md.
"""

import json
import os
import re
import select
import socket
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from serverlib import MODEL_NAME, Server, check, fail

cli, model, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(tmp, exist_ok=True)

READ_TIMEOUT_S = 2
KEEP_ALIVE_S = 2
HANG_S = READ_TIMEOUT_S + KEEP_ALIVE_S + 20
STATUS = re.compile(rb"HTTP/1\.1 (\d{3}) ")


def connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=HANG_S)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def read_until_closed(s, name):
    """Everything the server sends until it closes; a hang fails the test."""
    out = b""
    deadline = time.monotonic() + HANG_S
    while True:
        left = deadline - time.monotonic()
        check(left > 0, "%s: the server kept the connection open %d s after the last byte "
              "(it must answer or close on its read timeout)" % (name, HANG_S))
        s.settimeout(left)
        try:
            d = s.recv(65536)
        except socket.timeout:
            continue
        except (ConnectionResetError, BrokenPipeError):
            return out
        if not d:
            return out
        out += d


def exchange(port, name, data, shut_wr=False):
    """Sends `data` on a new connection (half-closing it when `shut_wr`),
    returns (statuses of the answers, bytes received)."""
    s = connect(port)
    try:
        try:
            s.sendall(data)
            if shut_wr:
                s.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server refused early and closed: allowed
        out = read_until_closed(s, name)
    finally:
        s.close()
    return [int(m) for m in STATUS.findall(out)], out


def check_error_bodies(name, out):
    """Every JSON body the server sent is valid UTF-8 JSON with an OpenAI
    error object (bodies are found after each blank line)."""
    for part in out.split(b"\r\n\r\n")[1:]:
        body = STATUS.split(part)[0]
        if not body.startswith(b"{"):
            continue
        try:
            err = json.loads(body.decode("utf-8"))["error"]
        except (UnicodeDecodeError, ValueError, KeyError, TypeError):
            fail("%s: an answer body is not an OpenAI error object: %r" % (name, body[:200]))
        check(isinstance(err.get("message"), str) and err["message"], name + ": empty message")


def post(path, body, extra=b""):
    return (b"POST " + path + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Connection: close\r\n" + extra + b"Content-Length: " + str(len(body)).encode() +
            b"\r\n\r\n" + body)


def chat_body(**fields):
    b = {"model": MODEL_NAME, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4}
    b.update(fields)
    return json.dumps(b).encode()


CHAT = b"/v1/chat/completions"
HEAD_CL = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
           b"Content-Length: 1000\r\n\r\n")
HEAD_CHUNKED = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                b"\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")

# (name, bytes, half-close after sending, statuses allowed besides 4xx)
CASES = [
    ("truncated request line", b"POST /v1/chat/comp", False),
    ("truncated request line, client closes", b"POST /v1/chat/comp", True),
    ("truncated headers", b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Le", False),
    ("truncated headers, client closes", b"GET /health HTTP/1.1\r\nHost", True),
    ("body shorter than Content-Length", HEAD_CL + b'{"model": "stories', False),
    ("body shorter than Content-Length, client closes", HEAD_CL + b'{"model": "st', True),
    ("100 KB header", b"GET /health HTTP/1.1\r\nX-Big: " + b"a" * 100000 + b"\r\n\r\n", False),
    ("10k headers", b"GET /health HTTP/1.1\r\n" +
     b"".join(b"X-H%d: v\r\n" % i for i in range(10000)) + b"Connection: close\r\n\r\n", False),
    ("20 KB request target", b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\n\r\n", False),
    ("invalid UTF-8 in the path", b"GET /v1/\xff\xfe\xc3 HTTP/1.1\r\nConnection: close\r\n\r\n",
     False),
    ("invalid UTF-8 in a header and the body",
     post(CHAT, b'{"model": "stories260K", "messages": [{"role": "user", "content": "\xff\xc3"}]}',
          b"X-Bad: \xff\xfe\xc3\x28\r\n"), False),
    ("invalid UTF-8 in the model name", post(CHAT, b'{"model": "\xc3\x28", "messages": []}'), False),
    ("not JSON", post(CHAT, b"{\"model\": "), False),
    ("JSON not an object", post(CHAT, b"[1, 2, 3]"), False),
    ("model a number", post(CHAT, chat_body(model=5)), False),
    ("messages a string", post(CHAT, chat_body(messages="Hi")), False),
    ("message content a number", post(CHAT, chat_body(messages=[{"role": "user", "content": 7}])),
     False),
    ("max_tokens a string", post(CHAT, chat_body(max_tokens="8")), False),
    ("max_tokens huge", post(CHAT, chat_body(max_tokens=2 ** 70)), False),
    ("temperature an array", post(CHAT, chat_body(temperature=[1])), False),
    ("stream a string", post(CHAT, chat_body(stream="yes")), False),
    ("stop a number", post(CHAT, chat_body(stop=3)), False),
    ("completion prompt an object", post(b"/v1/completions", json.dumps(
        {"model": MODEL_NAME, "prompt": {"a": 1}}).encode()), False),
    ("completion prompt negative token", post(b"/v1/completions", json.dumps(
        {"model": MODEL_NAME, "prompt": [1, -2]}).encode()), False),
    ("deeply nested JSON", post(CHAT, b"[" * 100000 + b"]" * 100000), False),
    ("chunk size not hex", HEAD_CHUNKED + b"zz\r\nabc\r\n0\r\n\r\n", False),
    ("chunk size overflows", HEAD_CHUNKED + b"ffffffffffffffffffffffff\r\nabc\r\n0\r\n\r\n", False),
    ("chunk size negative", HEAD_CHUNKED + b"-5\r\nabc\r\n0\r\n\r\n", False),
    ("chunk shorter than its size, client closes", HEAD_CHUNKED + b"100\r\nabc", True),
    ("Content-Length negative",
     b"POST /v1/completions HTTP/1.1\r\nContent-Length: -5\r\nConnection: close\r\n\r\n", False),
    ("Content-Length huge", b"POST /v1/completions HTTP/1.1\r\nContent-Length: "
     b"99999999999999999999999\r\nConnection: close\r\n\r\n", False),
    ("binary garbage", bytes(range(256)) * 8 + b"\r\n\r\n", False),
    ("garbage request line", b"\x00\x01 hello \x02\r\n\r\n", False),
    ("unknown method", b"BREW /v1/models HTTP/1.1\r\nConnection: close\r\n\r\n", False),
    ("HTTP/9", b"GET /health HTTP/9.9\r\nConnection: close\r\n\r\n", False),
]


def run_case(port, case):
    name, data, shut_wr = case
    statuses, out = exchange(port, name, data, shut_wr)
    for st in statuses:
        check(400 <= st < 500, "%s: answered %d, expected 4xx or a closed connection" % (name, st))
    check_error_bodies(name, out)
    return name, statuses


def pipelined_garbage(port):
    """A good request, then garbage on the same connection: 200, then 4xx or close."""
    name = "pipelined garbage"
    good = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
    statuses, out = exchange(port, name, good + b"\x16\x03\x01 not http\r\n\r\n")
    check(statuses[:1] == [200], "%s: the good request got %r" % (name, statuses))
    for st in statuses[1:]:
        check(400 <= st < 500, "%s: the garbage got %d" % (name, st))
    return name, statuses


def slowloris(port):
    """One header byte a second, for longer than HANG_S: only the server can end it."""
    name = "slowloris (one header byte a second)"
    s = connect(port)
    s.sendall(b"GET /health HTTP/1.1\r\nX-Slow: ")
    start = time.monotonic()
    out = b""
    try:
        while True:
            check(time.monotonic() - start < HANG_S, "%s: still connected after %d s: the server "
                  "waits forever for a slow client" % (name, HANG_S))
            try:
                s.sendall(b"a")
            except (BrokenPipeError, ConnectionResetError):
                break
            r, _, _ = select.select([s], [], [], 1.0)
            if r:
                try:
                    d = s.recv(65536)
                except ConnectionResetError:
                    break
                if not d:
                    break
                out += d
    finally:
        s.close()
    statuses = [int(m) for m in STATUS.findall(out)]
    for st in statuses:
        check(400 <= st < 500, "%s: answered %d" % (name, st))
    return name, statuses


def idle_connections(port, n=100):
    """n connections that send nothing, or half a request line: each closed by the server."""
    name = "%d idle connections" % n
    socks = [connect(port) for _ in range(n)]
    for i, s in enumerate(socks):
        if i % 2:
            s.sendall(b"GET /hea")
    # The worker pool (parallel + max-queue + 4 = 72 threads) takes them in
    # two rounds of a keep-alive or read timeout each.
    deadline = time.monotonic() + 2 * HANG_S
    open_ = set(socks)
    while open_:
        check(time.monotonic() < deadline,
              "%s: %d still open past the server's timeouts" % (name, len(open_)))
        r, _, _ = select.select(list(open_), [], [], 1.0)
        for s in r:
            try:
                d = s.recv(65536)
            except ConnectionResetError:
                d = b""
            for st in STATUS.findall(d):
                check(400 <= int(st) < 500, "%s: answered %s" % (name, st))
            if not d:
                open_.discard(s)
                s.close()
    return name, []


def chat_ok(port):
    statuses, out = exchange(port, "chat after the hostile clients", post(CHAT, chat_body()))
    check(statuses == [200], "a normal chat request after the hostile clients got %r: %r" %
          (statuses, out[:300]))
    body = json.loads(out.split(b"\r\n\r\n", 1)[1])
    check(body["object"] == "chat.completion", "not a chat completion: %r" % body)


with Server(cli, model, ["--read-timeout-s", str(READ_TIMEOUT_S),
                         "--keep-alive-timeout-s", str(KEEP_ALIVE_S)]) as srv:
    port = int(srv.url.rsplit(":", 1)[1])
    chat_ok(port)
    # The cases at once, as hostile clients would come: each on its own connection.
    with ThreadPoolExecutor(max_workers=16) as pool:
        jobs = [pool.submit(run_case, port, c) for c in CASES]
        jobs += [pool.submit(pipelined_garbage, port), pool.submit(slowloris, port)]
        for j in jobs:
            name, statuses = j.result()
            print("%-50s %s" % (name, statuses or "closed"))
    name, _ = idle_connections(port)
    print("%-50s closed" % name)
    check(srv.proc.poll() is None, "the server died: stderr:\n" + "".join(srv.stderr_lines))
    chat_ok(port)

report = "".join(srv.stderr_lines)
for marker in ("AddressSanitizer", "runtime error:", "LeakSanitizer"):
    check(marker not in report, "sanitizer report in the server's stderr:\n" + report)
print("ok")
