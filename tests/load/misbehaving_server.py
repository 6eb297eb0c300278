"""A small OpenAI-compatible HTTP server that misbehaves on purpose, for the
load-test client's tests. The first path segment picks the behaviour:
POST /<mode>/v1/chat/completions with mode one of

  ok        a normal SSE stream: 3 content chunks, a usage chunk, [DONE]
  stall     one chunk, then nothing for STALL_S seconds (a stalled stream)
  http500   HTTP 500 with an OpenAI-style error body, before any stream
  midstream two chunks, then an error event, then the connection closes
  truncated two chunks, then the connection closes without [DONE]
  invalid   a data line that is not JSON
  nostream  ignores "stream": one JSON body (application/json) with usage
  huge      one 10 MB data line
  flaky     every other request HTTP 500, the others as ok
  nousage   3 chunks of 2 words each, no usage chunk
  auth      as ok with "Authorization: Bearer <AUTH_KEY>", else HTTP 401

GET /<mode>/scheduler/passes (scheduler telemetry) is 404 for every mode
but badtel, which answers 200 with a body 100 000 arrays deep (not the
documented shape); its completions are as ok.

Binds 127.0.0.1 on an ephemeral port; serve() returns (server, base URL).
Responses are HTTP/1.0 style (no Content-Length, closed at the end), which
every client must read until EOF.
"""

import http.server
import json
import ssl
import threading
import time

STALL_S = 4
AUTH_KEY = "sk-load-test-secret-1234567890"
# Nesting depth of the "deep" answers: far past any recursion the stack allows.
DEEP = 300000


def chunk(text, finish=None):
    return {"id": "chatcmpl-t", "object": "chat.completion.chunk", "model": "m",
            "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}]}


def sse(obj):
    return ("data: " + (obj if isinstance(obj, str) else json.dumps(obj)) + "\n\n").encode()


class Handler(http.server.BaseHTTPRequestHandler):
    counter = 0
    lock = threading.Lock()

    def log_message(self, *args):  # quiet
        pass

    def start(self, status=200, ctype="text/event-stream"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Server", "misbehaving/1.0")
        self.send_header("X-Engine-Version", "9.9.9")
        self.end_headers()

    def ok_stream(self, usage=True):
        self.start()
        # Without usage, chunks of two words: chunk and token counts differ.
        for t in (["Once", " upon", " a"] if usage else ["Once upon", " a time", " there was"]):
            self.wfile.write(sse(chunk(t)))
            self.wfile.flush()
            time.sleep(0.01)
        if usage:
            self.wfile.write(sse({"id": "chatcmpl-t", "choices": [],
                                  "usage": {"prompt_tokens": 5, "completion_tokens": 3,
                                            "total_tokens": 8}}))
        self.wfile.write(sse("[DONE]"))

    def do_GET(self):
        if self.path.startswith("/badtel/scheduler/passes"):
            self.start(200, "application/json")
            self.wfile.write(b'{"columns":' + b"[" * 100000 + b"]" * 100000 + b"}")
        elif self.path.endswith("/v1/models"):
            self.start(200, "application/json")
            self.wfile.write(json.dumps({"object": "list", "data": [{"id": "m"}]}).encode())
        else:
            self.start(404, "application/json")

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(n) or b"{}")
        assert body.get("stream") is True
        mode = self.path.strip("/").split("/")[0]
        with Handler.lock:
            Handler.counter += 1
            k = Handler.counter
        try:
            if mode == "auth" and self.headers.get("Authorization") != "Bearer " + AUTH_KEY:
                self.start(401, "application/json")
                self.wfile.write(json.dumps({"error": {"message": "bad key"}}).encode())
            elif mode in ("ok", "auth", "badtel") or (mode == "flaky" and k % 2 == 0):
                self.ok_stream()
            elif mode == "nousage":
                self.ok_stream(usage=False)
            elif mode in ("http500", "flaky"):
                self.start(500, "application/json")
                self.wfile.write(json.dumps({"error": {"message": "internal failure",
                                                       "type": "server_error"}}).encode())
            elif mode == "stall":
                self.start()
                self.wfile.write(sse(chunk("Once")))
                self.wfile.flush()
                time.sleep(STALL_S)
            elif mode == "midstream":
                self.start()
                self.wfile.write(sse(chunk("Once")) + sse(chunk(" upon")))
                self.wfile.write(sse({"error": {"message": "the engine crashed"}}))
            elif mode == "truncated":
                self.start()
                self.wfile.write(sse(chunk("Once")) + sse(chunk(" upon")))
            elif mode == "invalid":
                self.start()
                self.wfile.write(sse(chunk("Once")) + b"data: this is not json\n\n")
            elif mode == "nostream":
                self.start(200, "application/json")
                self.wfile.write(json.dumps({
                    "id": "chatcmpl-one", "object": "chat.completion", "model": "m",
                    "choices": [{"index": 0, "finish_reason": "length",
                                 "message": {"role": "assistant", "content": "Once upon a"}}],
                    "usage": {"prompt_tokens": 5, "completion_tokens": 3,
                              "total_tokens": 8}}).encode())
            elif mode == "endless":
                # Content chunks with no end (ignoring max_tokens): the
                # client must cut it off, not buffer it.
                self.start()
                block = sse(chunk("x")) * 1000
                while True:
                    self.wfile.write(block)
            elif mode in ("deep", "deep500"):
                # A valid JSON error value nested DEEP arrays deep (under the
                # client's 1 MiB line limit): quoting it must not recurse.
                nested = b'{"error": ' + b"[" * DEEP + b"]" * DEEP + b"}"
                if mode == "deep":
                    self.start()
                    self.wfile.write(sse(chunk("Once")) + b"data: " + nested + b"\n\n")
                else:
                    self.start(500, "application/json")
                    self.wfile.write(nested)
            elif mode == "huge":
                self.start()
                self.wfile.write(b"data: " + b"x" * (10 * 1024 * 1024) + b"\n\n")
            else:
                self.start(404, "application/json")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up, as it should for huge and stall


def serve(tls=None):
    """tls = (certfile, keyfile): serve https with that certificate."""
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(*tls)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    scheme = "https" if tls else "http"
    return srv, "%s://127.0.0.1:%d" % (scheme, srv.server_address[1])
