"""A client that opens a stream and closes it after the first chunk, and
one that sends a plain request and closes without reading: each request
ends "cancelled" in the run log and its slot is free (with --parallel 1, a
following request is served). Then SIGTERM with a stream in
flight: the stream ends (error event, [DONE]), its row says "cancelled",
serve exits 0.

Usage: test_disconnect.py WORKBENCH_CLI MODEL TMPDIR
"""

import json
import os
import socket
import sys
import urllib.parse
import urllib.request

from serverlib import MODEL_NAME, Server, check, rows

cli, model, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(tmp, exist_ok=True)
db = os.path.join(tmp, "disconnect.sqlite")
if os.path.exists(db):
    os.remove(db)

# A context far longer than the client stays: the request cannot end by
# itself before the disconnect is seen.
with Server(cli, model, ["--parallel", "1", "--max-queue", "4", "-c", "4096"], db=db) as s:
    parts = urllib.parse.urlsplit(s.url)
    # No max_tokens: up to the slot's context, far longer than the client stays.
    body = json.dumps({"model": MODEL_NAME, "stream": True, "temperature": 0,
                       "prompt": "Once upon a time"}).encode()
    sock = socket.create_connection((parts.hostname, parts.port), timeout=30)
    sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    got = b""
    while b"data: " not in got:
        chunk = sock.recv(4096)
        check(chunk, "the stream ended before its first chunk: %r" % got)
        got += chunk
    check(got.startswith(b"HTTP/1.1 200"), "stream status: %r" % got[:40])
    sock.close()

    # A plain (non-streamed) request whose client closes the connection
    # without waiting for the answer: the server sees the close while it
    # waits and cancels the request, as for a stream.
    plain = json.dumps({"model": MODEL_NAME, "temperature": 0,
                        "prompt": "Once upon a time"}).encode()
    sock = socket.create_connection((parts.hostname, parts.port), timeout=30)
    sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: " + str(len(plain)).encode() + b"\r\n\r\n" + plain)
    sock.close()

    # The slot is free again: the next request (one slot only) is served.
    req = urllib.request.Request(s.url + "/v1/chat/completions", data=json.dumps({
        "model": MODEL_NAME, "max_tokens": 4, "messages": [{"role": "user", "content": "Hi"}]
    }).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        check(resp.status == 200, "the request after the disconnect: %d" % resp.status)

    # Stopping (SIGTERM, when the block ends) with a stream in flight: the
    # stream ends with an error event and [DONE], serve exits 0.
    sock = socket.create_connection((parts.hostname, parts.port), timeout=30)
    sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    got = b""
    while b"data: " not in got:
        chunk = sock.recv(4096)
        check(chunk, "the third stream ended before its first chunk: %r" % got)
        got += chunk
rest = b""
while True:
    chunk = sock.recv(65536)
    if not chunk:
        break
    rest += chunk
sock.close()
check(b"server_stopping" in rest and b"data: [DONE]" in rest,
      "the stream in flight at SIGTERM did not end cleanly: %r" % rest[-300:])

logged = rows(db)
check(len(logged) == 4, "%d rows, expected 4" % len(logged))
# By what they were (the rows of the first two requests may be written in
# either order: both are cancelled around the same time).
streams = [r for r in logged if r["settings"].get("stream")]
plains = [r for r in logged if not r["settings"].get("stream")]
check(len(streams) == 2 and len(plains) == 2, "streams %d, plain %d" % (len(streams), len(plains)))
first, third = streams
plain_row = [r for r in plains if r["settings"].get("api_route") == "/v1/completions"]
second = [r for r in plains if r["settings"].get("api_route") == "/v1/chat/completions"]
check(len(plain_row) == 1 and len(second) == 1, "routes: %r" %
      [r["settings"].get("api_route") for r in plains])
plain_row, second = plain_row[0], second[0]
check(plain_row["finish_reason"] == "cancelled",
      "the plain request whose client left finished %r (%s), expected cancelled" %
      (plain_row["finish_reason"], plain_row["error"]))
check(third["finish_reason"] == "cancelled", "the stream at SIGTERM: %r" % third["finish_reason"])
check(first["finish_reason"] == "cancelled",
      "the disconnected stream finished %r (%s), expected cancelled" % (first["finish_reason"],
                                                                      first["error"]))
check(second["finish_reason"] in ("stop", "length"), "the next request: %r" % second["finish_reason"])
print("server_disconnect: ok (%d tokens before the cancel)" % (first["output_tokens"] or 0))
