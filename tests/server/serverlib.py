"""Starts a real `workbench-cli serve` on 127.0.0.1 for the server tests.

Usage:
    with Server(cli, ["--parallel", "1"], db=path) as s:
        s.url  # "http://127.0.0.1:PORT"
The server picks a free port (--port 0); its "listening on" line gives it.
Leaving the block sends SIGTERM and checks the process exits 0.
"""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time

MODEL_NAME = "stories260K"


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


class Server:
    def __init__(self, cli, model, extra_args, db=None, timeout_s=60):
        self.cli = cli
        args = [cli, "serve", "-m", model, "--backend", "cpu", "--host", "127.0.0.1",
                "--port", "0"]
        args += ["--db", db] if db else ["--no-log"]
        self.args = args + list(extra_args)
        self.timeout_s = timeout_s
        self.proc = None
        self.url = None
        self.stderr_lines = []

    def __enter__(self):
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        # stderr is drained so the server never blocks on a full pipe.
        threading.Thread(target=self._drain, daemon=True).start()
        deadline = time.monotonic() + self.timeout_s
        line = self.proc.stdout.readline()
        if not line.startswith("listening on http://"):
            self.proc.kill()
            self.proc.wait()
            fail("serve did not start: %r\nstderr:\n%s" % (line, "".join(self.stderr_lines)))
        self.url = line.strip().split(" ")[-1]
        check(time.monotonic() < deadline, "serve took too long to start")
        return self

    def _drain(self):
        for line in self.proc.stderr:
            self.stderr_lines.append(line)

    def __exit__(self, exc_type, exc, tb):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            fail("serve did not exit within 30 s of SIGTERM")
        if exc_type is None:
            check(rc == 0, "serve exited %d after SIGTERM; stderr:\n%s" %
                  (rc, "".join(self.stderr_lines)))
        return False


def events(db):
    """Every run_events row (schema 6) of the run log at `db`, oldest first,
    as dicts with the details JSON parsed."""
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    try:
        out = []
        for r in con.execute("SELECT * FROM run_events ORDER BY t_ms, id"):
            d = dict(r)
            d["details"] = json.loads(d["details"])
            out.append(d)
    finally:
        con.close()
    return out


def rows(db):
    """Every response row of the run log at `db`, oldest first, as dicts with
    the settings JSON parsed."""
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    try:
        out = []
        for r in con.execute("SELECT * FROM responses ORDER BY id"):
            d = dict(r)
            d["settings"] = json.loads(d["settings"])
            out.append(d)
    finally:
        con.close()
    return out


def run_kinds(db):
    """The kind of every run in the run log at `db`."""
    con = sqlite3.connect(db)
    try:
        return [r[0] for r in con.execute("SELECT kind FROM runs ORDER BY id")]
    finally:
        con.close()
