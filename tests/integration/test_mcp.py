"""agent-sandbox-mcp over stdio against a real server (API.md §13): the
MCP handshake and version negotiation, the fourteen tools, the tool flow of
create, exec, files, snapshot, rollback, fork and destroy, API errors as
tool errors, and JSON-RPC errors for input that is not a request."""

import http.server
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

MCP = os.path.join(harness.BUILDDIR, "client", "agent-sandbox-mcp")
TOOLS = {
    "sandbox_create", "sandbox_list", "sandbox_exec", "sandbox_read_file",
    "sandbox_write_file", "sandbox_list_files", "sandbox_snapshot",
    "sandbox_rollback", "sandbox_fork", "sandbox_destroy",
    "sandbox_process_start", "sandbox_process_output",
    "sandbox_process_kill", "sandbox_process_list", "sandbox_stats",
    "sandbox_network",
}
SUMMARY_KEYS = ["expires_at", "id", "image", "network",
                "source_snapshot_id", "status"]
EXEC_KEYS = ["duration_ms", "exit_code", "stderr", "stdout", "timed_out",
             "truncated"]
SNAPSHOT_KEYS = ["created_at", "id", "image", "name", "sandbox_id",
                 "size_bytes"]
UNKNOWN_SB = "sb_0000000000000000"
MAX_LINE = 16 * 1024 * 1024
SERVER = None


class Mcp:
    """One agent-sandbox-mcp process; replies are read by a thread so a
    missing reply is a timeout, not a hang."""

    def __init__(self, url=None, key=harness.TEST_KEY):
        # The default, said here: a forbidden call kills the server.
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
               "AGENT_SANDBOX_SECCOMP": "kill"}
        if url is None and SERVER is not None:
            url = "http://127.0.0.1:%d" % SERVER.port
        if url is not None:
            env["AGENT_SANDBOX_URL"] = url
        if key is not None:
            env["AGENT_SANDBOX_API_KEY"] = key
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([MCP], env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE,
                                     stderr=self.stderr)
        self.lines = queue.Queue()
        self.reader = threading.Thread(target=self.read, daemon=True)
        self.reader.start()
        self.next_id = 0

    def read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send_raw(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, msg):
        self.send_raw(json.dumps(msg).encode() + b"\n")

    def recv(self, timeout=60):
        line = self.lines.get(timeout=timeout)
        if line is None:
            return None
        assert line.endswith(b"\n") and b"\n" not in line[:-1], line
        return json.loads(line)

    def no_reply(self, timeout=0.3):
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            return True
        raise AssertionError("unexpected reply %r" % line)

    def request(self, method, params=None):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        reply = self.recv()
        assert reply is not None and reply["id"] == self.next_id, reply
        return reply

    def initialize(self, version="2025-06-18"):
        reply = self.request("initialize", {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    def call(self, tool, /, **arguments):
        """(isError, text) of a tools/call."""
        reply = self.request("tools/call", {"name": tool,
                                            "arguments": arguments})
        assert "result" in reply, reply
        res = reply["result"]
        assert len(res["content"]) == 1 and \
            res["content"][0]["type"] == "text", res
        return res["isError"], res["content"][0]["text"]

    def ok(self, tool, /, **arguments):
        error, text = self.call(tool, **arguments)
        assert not error, "%s failed: %s" % (tool, text)
        return text

    def close(self):
        """Close stdin; the exit status."""
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            rc = self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise
        self.reader.join(10)
        self.proc.stdout.close()
        self.stderr.close()
        return rc


class McpCase(unittest.TestCase):
    def setUp(self):
        self.mcp = Mcp()

    def tearDown(self):
        self.mcp.close()


class Handshake(McpCase):
    def test_initialize_echoes_a_supported_version(self):
        for version in ("2025-06-18", "2025-03-26", "2024-11-05"):
            res = self.mcp.initialize(version)["result"]
            self.assertEqual(res["protocolVersion"], version)
        res = self.mcp.initialize("2099-01-01")["result"]
        self.assertEqual(res["protocolVersion"], "2025-06-18")
        self.assertEqual(res["capabilities"], {"tools": {}})
        status, _, body = SERVER.request("GET", "/healthz")
        self.assertEqual(res["serverInfo"], {
            "name": "agent-sandbox",
            "version": json.loads(body)["version"]})
        text = res["instructions"]
        for word in ("disposable", "isolated", "snapshot", "roll back",
                     "fork", "parallel", "destroy", "/workspace",
                     "network=true"):
            self.assertIn(word, text)

    def test_ping(self):
        self.assertEqual(self.mcp.request("ping")["result"], {})

    def test_runs_under_seccomp(self):
        self.assertEqual(self.mcp.request("ping")["result"], {})
        with open("/proc/%d/status" % self.mcp.proc.pid) as f:
            fields = dict(line.split(":", 1) for line in f)
        self.assertEqual(fields["Seccomp"].strip(), "2")

    def test_localhost_by_name(self):
        # Looked up before the filter, which allows no name lookup.
        m = Mcp(url="http://localhost:%d" % SERVER.port)
        try:
            m.initialize()
            error, text = m.call("sandbox_list")
            self.assertFalse(error, text)
            self.assertIsInstance(json.loads(text), list)
        finally:
            self.assertEqual(m.close(), 0)

    def test_tools_list(self):
        self.mcp.initialize()
        tools = self.mcp.request("tools/list")["result"]["tools"]
        self.assertEqual(len(tools), 16)
        self.assertEqual({t["name"] for t in tools}, TOOLS)
        by_name = {t["name"]: t for t in tools}
        for t in tools:
            self.assertTrue(t["description"].strip(), t)
            schema = t["inputSchema"]
            self.assertEqual(schema["type"], "object")
            self.assertIsInstance(schema["properties"], dict)
            for arg in schema.get("required", []):
                self.assertIn(arg, schema["properties"])
        exec_schema = by_name["sandbox_exec"]["inputSchema"]
        self.assertEqual(sorted(exec_schema["properties"]),
                         ["command", "sandbox_id", "timeout_seconds",
                          "workdir"])
        self.assertEqual(sorted(exec_schema["required"]),
                         ["command", "sandbox_id"])
        create = by_name["sandbox_create"]["inputSchema"]
        self.assertEqual(create["required"], [])
        self.assertIs(create["properties"]["network"]["default"], False)
        self.assertIsNone(create["properties"]["image"]["default"])
        ls = by_name["sandbox_list_files"]["inputSchema"]
        self.assertEqual(ls["properties"]["path"]["default"], "/workspace")
        self.assertEqual(list(by_name["sandbox_list"]["inputSchema"]
                              ["properties"]), ["labels"])
        self.assertEqual(create["properties"]["labels"]["type"],
                         ["object", "null"])
        for name in ("sandbox_stats", "sandbox_network"):
            self.assertEqual(by_name[name]["inputSchema"]["required"],
                             ["sandbox_id"])
            self.assertEqual(list(by_name[name]["inputSchema"]
                                  ["properties"]), ["sandbox_id"])
        self.assertEqual(sorted(by_name["sandbox_fork"]["inputSchema"]
                                ["properties"]),
                         ["snapshot_id", "timeout_seconds"])


class ToolFlow(McpCase):
    def test_labels_and_stats(self):
        m = self.mcp
        m.initialize()
        a = json.loads(m.ok("sandbox_create", labels={"team": "ml",
                                                       "run": "a b=c"}))
        b = json.loads(m.ok("sandbox_create"))
        try:
            self.assertEqual(sorted(a), SUMMARY_KEYS)
            listed = json.loads(m.ok("sandbox_list", labels={"team": "ml"}))
            self.assertEqual([s["id"] for s in listed], [a["id"]])
            listed = json.loads(m.ok("sandbox_list",
                                     labels={"team": "ml", "run": "a b=c"}))
            self.assertEqual([s["id"] for s in listed], [a["id"]])
            self.assertEqual(json.loads(m.ok("sandbox_list", labels={
                "team": "other"})), [])
            self.assertEqual({s["id"] for s in json.loads(
                m.ok("sandbox_list", labels=None))}, {a["id"], b["id"]})
            error, text = m.call("sandbox_create", labels={"-bad": "x"})
            self.assertTrue(error)
            self.assertIn("400 invalid_request", text)
            error, text = m.call("sandbox_list", labels={"a": 1})
            self.assertTrue(error)
            m.ok("sandbox_exec", sandbox_id=a["id"],
                 command="head -c 1048576 /dev/zero > f")
            st = json.loads(m.ok("sandbox_stats", sandbox_id=a["id"]))
            self.assertEqual(st["status"], "running")
            self.assertGreaterEqual(st["workspace"]["bytes"], 1048576)
            self.assertEqual(st["memory"]["limit_bytes"], 128 * 1024 * 1024)
            error, text = m.call("sandbox_stats", sandbox_id=UNKNOWN_SB)
            self.assertTrue(error)
            self.assertIn("404 not_found", text)
        finally:
            m.ok("sandbox_destroy", sandbox_id=a["id"])
            m.ok("sandbox_destroy", sandbox_id=b["id"])

    def test_flow(self):
        """REFERENCE-TESTS item 73, through tools/call."""
        m = self.mcp
        m.initialize()
        sb = json.loads(m.ok("sandbox_create", timeout_seconds=60))
        self.assertEqual(sorted(sb), SUMMARY_KEYS)
        self.assertTrue(sb["id"].startswith("sb_"))
        self.assertEqual((sb["status"], sb["network"],
                          sb["source_snapshot_id"]), ("running", False, None))
        sid = sb["id"]
        try:
            res = json.loads(m.ok("sandbox_exec", sandbox_id=sid,
                                  command="echo mcp"))
            self.assertEqual(sorted(res), EXEC_KEYS)
            self.assertEqual((res["stdout"], res["exit_code"]),
                             ("mcp\n", 0))
            info = json.loads(m.ok("sandbox_write_file", sandbox_id=sid,
                                   path="plan.txt", content="v1"))
            self.assertEqual((info["path"], info["size"], info["type"]),
                             ("/workspace/plan.txt", 2, "file"))
            self.assertEqual(m.ok("sandbox_read_file", sandbox_id=sid,
                                  path="plan.txt"), "v1")
            entries = json.loads(m.ok("sandbox_list_files", sandbox_id=sid))
            self.assertEqual([e["name"] for e in entries], ["plan.txt"])
            snap = json.loads(m.ok("sandbox_snapshot", sandbox_id=sid,
                                   name="v1"))
            self.assertEqual(sorted(snap), SNAPSHOT_KEYS)
            self.assertEqual((snap["sandbox_id"], snap["name"]), (sid, "v1"))
            m.ok("sandbox_write_file", sandbox_id=sid, path="plan.txt",
                 content="v2")
            self.assertEqual(m.ok("sandbox_read_file", sandbox_id=sid,
                                  path="/workspace/plan.txt"), "v2")
            back = json.loads(m.ok("sandbox_rollback", sandbox_id=sid,
                                   snapshot_id=snap["id"]))
            self.assertEqual(sorted(back), SUMMARY_KEYS)
            self.assertEqual(back["source_snapshot_id"], snap["id"])
            self.assertEqual(m.ok("sandbox_read_file", sandbox_id=sid,
                                  path="plan.txt"), "v1")
            fork = json.loads(m.ok("sandbox_fork", snapshot_id=snap["id"]))
            self.assertEqual(sorted(fork), SUMMARY_KEYS)
            self.assertEqual(fork["source_snapshot_id"], snap["id"])
            self.assertEqual(m.ok("sandbox_read_file", sandbox_id=fork["id"],
                                  path="plan.txt"), "v1")
            listed = json.loads(m.ok("sandbox_list"))
            self.assertEqual({s["id"] for s in listed}, {sid, fork["id"]})
            for s in listed:
                self.assertEqual(sorted(s), SUMMARY_KEYS)
            self.assertEqual(m.ok("sandbox_destroy", sandbox_id=fork["id"]),
                             "destroyed " + fork["id"])

            # Bytes that are not UTF-8 read as U+FFFD; nothing else moves.
            m.ok("sandbox_exec", sandbox_id=sid,
                 command="mkdir d && printf 'a\\377b\\303' > d/bin.dat")
            self.assertEqual(m.ok("sandbox_read_file", sandbox_id=sid,
                                  path="/workspace/d/bin.dat"),
                             "a\ufffdb\ufffd")
            # Another directory, the workdir and an exec timeout.
            entries = json.loads(m.ok("sandbox_list_files", sandbox_id=sid,
                                      path="d"))
            self.assertEqual([(e["name"], e["path"], e["size"])
                              for e in entries],
                             [("bin.dat", "/workspace/d/bin.dat", 4)])
            res = json.loads(m.ok("sandbox_exec", sandbox_id=sid,
                                  command="pwd", workdir="/tmp",
                                  timeout_seconds=5))
            self.assertEqual(res["stdout"], "/tmp\n")
            # Text with non-ASCII characters and newlines, both ways.
            text = "é\n\u2603 line\n"
            m.ok("sandbox_write_file", sandbox_id=sid, path="d/u.txt",
                 content=text)
            self.assertEqual(m.ok("sandbox_read_file", sandbox_id=sid,
                                  path="d/u.txt"), text)
        finally:
            self.assertEqual(m.ok("sandbox_destroy", sandbox_id=sid),
                             "destroyed " + sid)
        self.assertEqual(json.loads(m.ok("sandbox_list")), [])
        status, doc = SERVER.api("GET", "/v1/snapshots")
        self.assertEqual([s["id"] for s in doc["snapshots"]], [snap["id"]])


class ToolErrors(McpCase):
    def test_api_errors_are_tool_errors(self):
        m = self.mcp
        m.initialize()
        for name, args in (
                ("sandbox_exec", {"sandbox_id": UNKNOWN_SB,
                                  "command": "true"}),
                ("sandbox_read_file", {"sandbox_id": UNKNOWN_SB,
                                       "path": "x"}),
                ("sandbox_write_file", {"sandbox_id": UNKNOWN_SB,
                                        "path": "x", "content": ""}),
                ("sandbox_list_files", {"sandbox_id": UNKNOWN_SB}),
                ("sandbox_snapshot", {"sandbox_id": UNKNOWN_SB}),
                ("sandbox_rollback", {"sandbox_id": UNKNOWN_SB,
                                      "snapshot_id": "snap_0"}),
                ("sandbox_network", {"sandbox_id": UNKNOWN_SB}),
                ("sandbox_destroy", {"sandbox_id": UNKNOWN_SB})):
            error, text = m.call(name, **args)
            self.assertTrue(error, (name, text))
            self.assertEqual(text, "404 not_found: sandbox %s not found" %
                             UNKNOWN_SB, name)
        error, text = m.call("sandbox_fork",
                             snapshot_id="snap_0000000000000000")
        self.assertTrue(error)
        self.assertIn("404 not_found: snapshot snap_0000000000000000", text)
        error, text = m.call("sandbox_create", memory_mb=999999)
        self.assertTrue(error)
        self.assertEqual(text, "400 invalid_request: memory_mb must be in "
                         "[16, 4096]")
        error, text = m.call("sandbox_create", cpus=-1)
        self.assertTrue(error)
        self.assertIn("422 validation_error: ", text)
        # Still serving.
        self.assertEqual(m.request("ping")["result"], {})

    def test_bad_arguments(self):
        m = self.mcp
        for name, args, expect in (
                ("sandbox_nope", {}, "unknown tool 'sandbox_nope'"),
                ("sandbox_exec", {"sandbox_id": UNKNOWN_SB},
                 "missing required argument 'command'"),
                ("sandbox_exec", {"sandbox_id": UNKNOWN_SB, "command": 1},
                 "argument 'command' must be a string"),
                ("sandbox_create", {"network": "yes"},
                 "argument 'network' must be a boolean"),
                ("sandbox_create", {"timeout_seconds": 1.5},
                 "argument 'timeout_seconds' must be an integer"),
                ("sandbox_list", {"all": True}, "unknown argument 'all'"),
                ("sandbox_destroy", {"sandbox_id": ""},
                 "argument 'sandbox_id' must not be empty"),
                ("sandbox_destroy", {"sandbox_id": None},
                 "argument 'sandbox_id' must be a string, not null")):
            error, text = m.call(name, **args)
            self.assertTrue(error, (name, args))
            self.assertEqual(text, expect)
        for params in ({}, {"name": 3},
                       {"name": "sandbox_list", "arguments": [1]}):
            reply = m.request("tools/call", params)
            self.assertEqual(reply["error"]["code"], -32602, reply)

    def test_server_unreachable(self):
        # Nothing listens on port 9 of localhost (discard).
        m = Mcp(url="http://127.0.0.1:9")
        try:
            error, text = m.call("sandbox_list")
            self.assertTrue(error)
            self.assertTrue(text.startswith("0 connection_error: "), text)
        finally:
            self.assertEqual(m.close(), 0)
        m = Mcp(url="ftp://example.invalid/")
        try:
            error, text = m.call("sandbox_list")
            self.assertTrue(error)
            self.assertIn("AGENT_SANDBOX_URL", text)
        finally:
            self.assertEqual(m.close(), 0)


class Malformed(McpCase):
    def expect_error(self, raw, code, rid=None):
        self.mcp.send_raw(raw)
        reply = self.mcp.recv()
        self.assertEqual(reply["jsonrpc"], "2.0")
        self.assertEqual(reply["id"], rid)
        self.assertEqual(reply["error"]["code"], code, reply)
        self.assertNotIn("result", reply)

    def test_json_rpc_errors(self):
        self.expect_error(b"this is not json\n", -32700)
        self.expect_error(b'{"jsonrpc": "2.0", "id": 1,\n', -32700)
        self.expect_error(b'{"jsonrpc":"2.0","id":1,"method":"ping"} x\n',
                          -32700)
        self.expect_error(b'{"jsonrpc":"2.0","id":"\xff","method":"ping"}\n',
                          -32700)
        self.expect_error(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n',
                          -32600)
        self.expect_error(b'42\n', -32600)
        self.expect_error(b'{"jsonrpc":"2.0","id":7}\n', -32600, 7)
        self.expect_error(b'{"jsonrpc":"2.0"}\n', -32600)
        self.expect_error(b'{"jsonrpc":"2.0","id":8,"method":3}\n',
                          -32600, 8)
        self.expect_error(b'{"id":9,"method":"ping"}\n', -32600, 9)
        self.expect_error(b'{"jsonrpc":"2.0","id":null,"method":"ping"}\n',
                          -32600)
        self.expect_error(b'{"jsonrpc":"2.0","id":"a","method":"nope"}\n',
                          -32601, "a")
        self.expect_error(b'{"jsonrpc":"2.0","id":2,"method":"ping",'
                          b'"params":[1]}\n', -32602, 2)
        self.assertEqual(self.mcp.request("ping")["result"], {})

    def test_oversized_line(self):
        big = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + \
            b"a" * MAX_LINE + b'"}}\n'
        self.expect_error(big, -32700)
        # Right at the bound is still read.
        head = b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"'
        tail = b'"}}'
        fits = head + b"a" * (MAX_LINE - len(head) - len(tail)) + tail
        self.assertEqual(len(fits), MAX_LINE)
        self.mcp.send_raw(fits + b"\r\n")
        self.assertEqual(self.mcp.recv(), {"jsonrpc": "2.0", "id": 2,
                                           "result": {}})
        self.assertEqual(self.mcp.request("ping")["result"], {})

    def test_notifications_get_no_reply(self):
        m = self.mcp
        m.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        m.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 1}})
        m.send({"jsonrpc": "2.0", "method": "no/such/notification"})
        m.send({"jsonrpc": "2.0", "method": "tools/call",
                "params": {"name": "sandbox_list"}})
        # A reply from the client is not answered either.
        m.send({"jsonrpc": "2.0", "id": 99, "result": {}})
        m.send({"id": 98, "error": {"code": -1, "message": "no"}})
        m.send_raw(b"\n   \n")
        m.no_reply()
        self.assertEqual(m.request("ping")["result"], {})

    def test_pipelined_requests_answered_in_order(self):
        batch = b"".join(json.dumps({"jsonrpc": "2.0", "id": i,
                                     "method": "ping"}).encode() + b"\n"
                         for i in range(50))
        self.mcp.send_raw(batch)
        self.assertEqual([self.mcp.recv()["id"] for _ in range(50)],
                         list(range(50)))

    def test_eof_exits_zero(self):
        self.mcp.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
        self.mcp.proc.stdin.close()
        # The last line counts even without its newline.
        self.assertEqual(self.mcp.recv()["id"], 1)
        self.assertIsNone(self.mcp.recv())
        self.assertEqual(self.mcp.close(), 0)


SB = {"id": "sb_1111111111111111", "status": "running",
      "image": "agent-sandbox/busybox:test", "cpus": 1.0, "memory_mb": 128,
      "pids_limit": 256, "network": False, "read_only_rootfs": True,
      "created_at": "2026-01-01T00:00:00Z",
      "expires_at": "2026-01-01T00:15:00Z", "source_snapshot_id": None}
SNAP = {"id": "snap_2222222222222222", "sandbox_id": SB["id"], "name": None,
        "image": SB["image"], "size_bytes": 10240,
        "created_at": "2026-01-01T00:01:00Z"}


class Recorder(http.server.BaseHTTPRequestHandler):
    """Answers like the API and records every request it gets."""
    protocol_version = "HTTP/1.1"

    def answer(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n)
        self.server.calls.append((self.command, self.path,
                                  self.headers.get("Authorization"),
                                  self.headers.get("Content-Type"), body))
        path = self.path.split("?")[0]
        status, doc, raw = 200, None, None
        if self.command == "DELETE":
            status = 204
        elif path.endswith("/exec"):
            doc = {"stdout": "hi\n", "stderr": "", "exit_code": 0,
                   "timed_out": False, "truncated": False, "duration_ms": 3}
        elif path.endswith("/files/list"):
            doc = {"path": "/workspace", "entries": []}
        elif path.endswith("/files") and self.command == "GET":
            raw = b"bytes"
        elif path.endswith("/files"):
            doc = {"name": "f", "path": "/workspace/f", "type": "file",
                   "size": len(body), "modified_at": "2026-01-01T00:00:00Z"}
        elif path.endswith("/snapshots"):
            status, doc = 201, SNAP
        elif path == "/v1/sandboxes" and self.command == "GET":
            doc = {"sandboxes": [SB]}
        elif self.command == "POST" and not path.endswith("/rollback"):
            status, doc = 201, SB
        else:
            doc = SB
        if doc is not None:
            raw = json.dumps(doc).encode()
        self.send_response(status)
        if raw is not None:
            self.send_header("Content-Type", "application/json" if doc
                             is not None else "application/octet-stream")
            self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        if raw is not None:
            self.wfile.write(raw)

    do_GET = do_POST = do_PUT = do_DELETE = answer

    def log_message(self, *args):
        pass


class HttpCalls(unittest.TestCase):
    """The REST calls each tool makes, against a recording stand-in."""

    def setUp(self):
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                                     Recorder)
        self.httpd.calls = []
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       daemon=True)
        self.thread.start()
        self.mcp = Mcp(url="http://127.0.0.1:%d" %
                       self.httpd.server_address[1], key="k" * 16)

    def tearDown(self):
        self.mcp.close()
        self.httpd.shutdown()
        self.httpd.server_close()

    def calls(self, tool, **args):
        del self.httpd.calls[:]
        text = self.mcp.ok(tool, **args)
        got = [(m, p, json.loads(b) if b and t == "application/json"
                else b) for m, p, auth, t, b in self.httpd.calls]
        for call in self.httpd.calls:
            self.assertEqual(call[2], "Bearer " + "k" * 16)
        return text, got

    def test_calls(self):
        sb, sid = "/v1/sandboxes/" + SB["id"], SB["id"]
        summary = {k: SB[k] for k in SUMMARY_KEYS}
        text, got = self.calls("sandbox_create")
        self.assertEqual(got, [("POST", "/v1/sandboxes",
                                {"network": False, "read_only_rootfs": True,
                                 "env": {}})])
        self.assertEqual(json.loads(text), summary)
        text, got = self.calls("sandbox_create", image="x:1", network=True,
                               timeout_seconds=60.0, cpus=0.5,
                               memory_mb=64)
        self.assertEqual(got[0][2], {"image": "x:1", "network": True,
                                     "read_only_rootfs": True, "env": {},
                                     "timeout_seconds": 60, "cpus": 0.5,
                                     "memory_mb": 64})
        text, got = self.calls("sandbox_list")
        self.assertEqual(got, [("GET", "/v1/sandboxes", b"")])
        self.assertEqual(json.loads(text), [summary])
        text, got = self.calls("sandbox_exec", sandbox_id=sid,
                               command="echo hi")
        self.assertEqual(got, [("GET", sb, b""),
                               ("POST", sb + "/exec",
                                {"command": "echo hi"})])
        self.assertEqual(sorted(json.loads(text)), EXEC_KEYS)
        text, got = self.calls("sandbox_exec", sandbox_id=sid, command="x",
                               workdir="w", timeout_seconds=1.5)
        self.assertEqual(got[1][2], {"command": "x", "workdir": "w",
                                     "timeout_seconds": 1.5})
        text, got = self.calls("sandbox_read_file", sandbox_id=sid,
                               path="a b/c&d.txt")
        self.assertEqual(got, [("GET", sb, b""),
                               ("GET", sb + "/files?path=a%20b%2Fc%26d.txt",
                                b"")])
        self.assertEqual(text, "bytes")
        text, got = self.calls("sandbox_write_file", sandbox_id=sid,
                               path="f", content="é\x00z")
        self.assertEqual(got, [("GET", sb, b""),
                               ("PUT", sb + "/files?path=f&mode=644",
                                "é\x00z".encode())])
        self.assertEqual(json.loads(text)["size"], 4)
        text, got = self.calls("sandbox_list_files", sandbox_id=sid)
        self.assertEqual(got, [("GET", sb, b""),
                               ("GET", sb + "/files/list?path=%2Fworkspace",
                                b"")])
        self.assertEqual(json.loads(text), [])
        text, got = self.calls("sandbox_snapshot", sandbox_id=sid)
        self.assertEqual(got, [("GET", sb, b""),
                               ("POST", sb + "/snapshots", {"name": None})])
        self.assertEqual(json.loads(text), SNAP)
        text, got = self.calls("sandbox_snapshot", sandbox_id=sid, name="n")
        self.assertEqual(got[1][2], {"name": "n"})
        text, got = self.calls("sandbox_rollback", sandbox_id=sid,
                               snapshot_id=SNAP["id"])
        self.assertEqual(got, [("GET", sb, b""),
                               ("POST", sb + "/rollback",
                                {"snapshot_id": SNAP["id"]})])
        text, got = self.calls("sandbox_fork", snapshot_id=SNAP["id"])
        self.assertEqual(got, [("POST", "/v1/snapshots/%s/fork" % SNAP["id"],
                                {})])
        self.assertEqual(json.loads(text), summary)
        text, got = self.calls("sandbox_fork", snapshot_id=SNAP["id"],
                               timeout_seconds=30)
        self.assertEqual(got[0][2], {"timeout_seconds": 30})
        text, got = self.calls("sandbox_destroy", sandbox_id="sb_a/b")
        self.assertEqual(got, [("GET", "/v1/sandboxes/sb_a%2Fb", b""),
                               ("DELETE", "/v1/sandboxes/sb_a%2Fb", b"")])
        self.assertEqual(text, "destroyed sb_a/b")


def setUpModule():
    global SERVER
    SERVER = harness.SandboxServer()
    try:
        SERVER.start()
    except Exception:
        SERVER.cleanup()
        raise


def tearDownModule():
    SERVER.cleanup()


if __name__ == "__main__":
    harness.require_root_and_docker()
    unittest.main(verbosity=2)
