#!/usr/bin/env python3
"""apid's HTTP/1.1 layer against the real daemons (under their seccomp
filters) and the real dockerd: keep-alive across every route with a
streamed exec in the middle, pipelining, HTTP/1.0, the framing rules
that keep a request from being smuggled past a proxy, the error
envelope of every refusal, and an upload body that stalls or trickles."""

import hashlib
import json
import os
import socket
import sys
import time
import unittest
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import rawhttp  # noqa: E402

harness.require_root_and_docker()


class KeepAlive(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = harness.SandboxServer().start()
        cls.port = cls.server.port

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def ok(self, conn, expect, *args, **kw):
        r = conn.exchange(*args, **kw)
        self.assertEqual(r.status, expect, r)
        self.assertNotEqual(r.headers.get("connection"), "close", r)
        return r

    def stream(self, conn, sb, command):
        r = self.ok(conn, 200, "POST", "/v1/sandboxes/%s/exec/stream" % sb,
                    body={"command": command})
        self.assertEqual(r.headers["content-type"], "application/x-ndjson")
        events = [json.loads(line) for line in r.body.splitlines() if line]
        self.assertEqual(events[-1]["type"], "exit")
        return events

    def test_every_route_on_one_connection(self):
        data = os.urandom(100000)
        with rawhttp.Connection(self.port) as c:
            self.ok(c, 200, "GET", "/healthz", key=False)
            self.ok(c, 200, "GET", "/openapi.json", key=False)
            sb = self.ok(c, 201, "POST", "/v1/sandboxes", body={}).json()["id"]
            base = "/v1/sandboxes/" + sb
            self.ok(c, 200, "GET", "/v1/sandboxes")
            self.ok(c, 200, "GET", base)
            self.ok(c, 200, "POST", base + "/timeout",
                    body={"timeout_seconds": 600})
            r = self.ok(c, 200, "POST", base + "/exec",
                        body={"command": "echo one"})
            self.assertEqual(r.json()["stdout"], "one\n")
            events = self.stream(c, sb, "for i in 1 2 3; do echo $i; done")
            self.assertEqual("".join(e.get("data", "") for e in events),
                             "1\n2\n3\n")
            # Right after the stream, on the same connection.
            self.ok(c, 200, "PUT", base + "/files?path=d/f.bin", body=data)
            r = self.ok(c, 200, "GET", base + "/files?path=d/f.bin")
            self.assertEqual(r.body, data)
            self.assertEqual(r.headers["content-type"],
                             "application/octet-stream")
            self.ok(c, 200, "GET", base + "/files/list?path=d")
            snap = self.ok(c, 201, "POST", base + "/snapshots",
                           body={"name": "k"}).json()["id"]
            self.ok(c, 200, "GET", "/v1/snapshots?sandbox_id=" + sb)
            self.ok(c, 200, "GET", "/v1/snapshots/" + snap)
            self.ok(c, 200, "POST", base + "/rollback",
                    body={"snapshot_id": snap})
            fork = self.ok(c, 201, "POST", "/v1/snapshots/%s/fork" % snap,
                           body={}).json()["id"]
            # Errors keep the connection too.
            self.ok(c, 404, "GET", "/v1/sandboxes/sb_0000000000000000")
            self.ok(c, 404, "GET", "/nowhere")
            self.ok(c, 405, "PUT", base)
            r = self.ok(c, 200, "PATCH", base, body={"labels": {"k": "v"}})
            self.assertEqual(r.json()["labels"], {"k": "v"})
            self.ok(c, 422, "PATCH", base)
            r = self.ok(c, 200, "GET", base + "/stats")
            self.assertEqual(r.json()["status"], "running")
            self.ok(c, 200, "GET", "/v1/sandboxes?label=k=v")
            self.ok(c, 422, "POST", base + "/exec", body={})
            self.ok(c, 401, "GET", "/v1/sandboxes", key=False)
            self.stream(c, fork, "echo again")
            self.ok(c, 204, "DELETE", "/v1/sandboxes/" + fork)
            self.ok(c, 204, "DELETE", "/v1/snapshots/" + snap)
            self.ok(c, 204, "DELETE", base)
            self.ok(c, 200, "GET", "/healthz", key=False)

    def test_big_downloads_then_more_on_the_connection(self):
        # Spliced from the tar job's pipe past its first bytes: each whole,
        # the connection kept, one pipelined behind another too.
        data = os.urandom(3 * 1024 * 1024 + 17)
        name = "d\u00e9j\u00e0 vu.bin"
        quoted = urllib.parse.quote(name)
        with rawhttp.Connection(self.port) as c:
            sb = self.ok(c, 201, "POST", "/v1/sandboxes", body={}).json()["id"]
            path = "/v1/sandboxes/%s/files?path=%s" % (sb, quoted)
            self.ok(c, 200, "PUT", path, body=data)
            for _ in range(2):
                r = self.ok(c, 200, "GET", path)
                self.assertEqual(r.headers["content-length"], str(len(data)))
                self.assertEqual(r.body, data)
            c.send(rawhttp.request("GET", path) + rawhttp.request("GET", path)
                   + rawhttp.request("GET", "/healthz", key=False))
            for _ in range(2):
                r = c.response()
                self.assertEqual(r.status, 200)
                self.assertEqual(r.body, data)
            self.assertEqual(c.response().status, 200)
            self.ok(c, 204, "DELETE", "/v1/sandboxes/" + sb)

    def test_pipelined_requests_answered_in_order(self):
        with rawhttp.Connection(self.port) as c:
            c.send(rawhttp.request("GET", "/healthz") +
                   rawhttp.request("GET", "/v1/nothing") +
                   rawhttp.request("GET", "/openapi.json") +
                   rawhttp.request("GET", "/v1/sandboxes"))
            self.assertEqual(c.response().status, 200)
            self.assertEqual(c.response().status, 404)
            r = c.response()
            self.assertEqual(r.status, 200)
            self.assertEqual(r.json()["info"]["title"], "agent-sandbox")
            self.assertIn("sandboxes", c.response().json())

    def test_pipelined_behind_a_stream_and_a_body(self):
        with rawhttp.Connection(self.port) as c:
            sb = c.exchange("POST", "/v1/sandboxes", body={}).json()["id"]
            base = "/v1/sandboxes/" + sb
            c.send(rawhttp.request("POST", base + "/exec/stream",
                                   body={"command": "echo s"}) +
                   rawhttp.request("PUT", base + "/files?path=p", body=b"xy") +
                   rawhttp.request("GET", base + "/files?path=p") +
                   rawhttp.request("DELETE", base))
            r = c.response()
            self.assertIn(b'"exit"', r.body)
            self.assertEqual(c.response().status, 200)
            self.assertEqual(c.response().body, b"xy")
            self.assertEqual(c.response().status, 204)

    def test_concurrent_health_checks_share_pings(self):
        # Every one answered, whatever round of pings it joins.
        conns = [rawhttp.Connection(self.port) for _ in range(32)]
        try:
            for _ in range(3):
                for c in conns:
                    c.send(rawhttp.request("GET", "/healthz", key=False))
                for c in conns:
                    r = c.response()
                    self.assertEqual(r.status, 200)
                    self.assertEqual(r.json()["status"], "ok")
        finally:
            for c in conns:
                c.close()

    def test_http_1_0(self):
        # No Host needed; the connection closes unless kept alive.
        with rawhttp.Connection(self.port) as c:
            r = c.exchange("GET", "/healthz", version="HTTP/1.0",
                           host=False, key=False)
            self.assertEqual(r.status, 200)
            self.assertEqual(r.headers["connection"], "close")
            self.assertTrue(c.closed())
        with rawhttp.Connection(self.port) as c:
            for _ in range(3):
                r = c.exchange("GET", "/healthz", version="HTTP/1.0",
                               headers={"Connection": "keep-alive"})
                self.assertEqual(r.status, 200)
                self.assertEqual(r.headers["connection"], "keep-alive")
            sb = c.exchange("POST", "/v1/sandboxes", body={},
                            version="HTTP/1.0",
                            headers={"Connection": "keep-alive"}).json()["id"]
            # A stream to a 1.0 client is delimited by the close.
            r = c.exchange("POST", "/v1/sandboxes/%s/exec/stream" % sb,
                           body={"command": "echo ten"}, version="HTTP/1.0",
                           headers={"Connection": "keep-alive"})
            self.assertEqual(r.status, 200)
            self.assertNotIn("transfer-encoding", r.headers)
            self.assertIn(b'"data": "ten\\n"', r.body)
        self.server.api("DELETE", "/v1/sandboxes/" + sb)

    def test_expect_100_continue_on_a_json_route(self):
        body = json.dumps({"command": "echo c"}).encode()
        with rawhttp.Connection(self.port) as c:
            sb = c.exchange("POST", "/v1/sandboxes", body={}).json()["id"]
            c.send(rawhttp.request(
                "POST", "/v1/sandboxes/%s/exec" % sb,
                headers={"Expect": "100-continue",
                         "Content-Type": "application/json",
                         "Content-Length": str(len(body))}))
            self.assertEqual(c.response().status, 100)
            c.send(body)
            r = c.response()
            self.assertEqual(r.json()["stdout"], "c\n")
            # Refused before the body: no 100, and the connection closes.
            c.send(rawhttp.request(
                "POST", "/v1/sandboxes/%s/exec" % sb, key=False,
                headers={"Expect": "100-continue",
                         "Content-Length": str(len(body))}))
            self.assertEqual(c.response().status, 401)
            self.assertTrue(c.closed())
        self.server.api("DELETE", "/v1/sandboxes/" + sb)


class Framing(unittest.TestCase):
    """RFC 9112's framing rules: a request a proxy in front could read
    differently is refused with 400 (501 for a coding we do not
    implement), the connection closes, and nothing after it runs."""

    @classmethod
    def setUpClass(cls):
        cls.server = harness.SandboxServer().start()
        cls.port = cls.server.port
        cls.sb = cls.server.create()["id"]

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def refused(self, raw, status, code="http_error"):
        # Whatever follows would delete the sandbox if it ran.
        smuggled = rawhttp.request("DELETE", "/v1/sandboxes/" + self.sb)
        with rawhttp.Connection(self.port) as c:
            c.send(raw + smuggled)
            r = c.response()
            self.assertEqual(r.status, status, (raw, r))
            self.assertEqual(r.headers["content-type"], "application/json")
            self.assertEqual(r.error_code(), code, r)
            self.assertEqual(r.headers.get("connection"), "close")
            self.assertTrue(c.closed(), raw)
        status, _ = self.server.api("GET", "/v1/sandboxes/" + self.sb)
        self.assertEqual(status, 200, "a request after a refused one ran")

    def head(self, *lines, method="POST", path="/v1/sandboxes"):
        # With the key, so that a body is read at all.
        first = "%s %s HTTP/1.1" % (method, path)
        key = "Authorization: Bearer " + harness.TEST_KEY
        return ("\r\n".join((first, "Host: x", key) + lines) +
                "\r\n\r\n").encode("latin-1")

    def test_content_length_with_transfer_encoding(self):
        self.refused(self.head("Content-Length: 5",
                               "Transfer-Encoding: chunked") +
                     b"0\r\n\r\n", 400)
        self.refused(self.head("Transfer-Encoding: chunked",
                               "Content-Length: 5") + b"0\r\n\r\n", 400)

    def test_two_content_lengths(self):
        self.refused(self.head("Content-Length: 2", "Content-Length: 3") +
                     b"{}", 400)
        self.refused(self.head("Content-Length: 2", "Content-Length: 2") +
                     b"{}", 400)
        self.refused(self.head("Content-Length: 2, 2") + b"{}", 400)
        self.refused(self.head("Content-Length: +2") + b"{}", 400)

    def test_codings_other_than_chunked(self):
        self.refused(self.head("Transfer-Encoding: gzip") + b"x", 400)
        self.refused(self.head("Transfer-Encoding: gzip, chunked") +
                     b"0\r\n\r\n", 400)
        self.refused(self.head("Transfer-Encoding: chunked, gzip"), 400)
        self.refused(self.head("Transfer-Encoding: chunked",
                               "Transfer-Encoding: chunked") +
                     b"0\r\n\r\n", 400)

    def test_bad_chunks(self):
        te = "Transfer-Encoding: chunked"
        self.refused(self.head(te) + b"zz\r\n{}\r\n0\r\n\r\n", 400)
        self.refused(self.head(te) + b"1" * 30 + b"\r\n", 400)
        self.refused(self.head(te) + b"2\r\n{}XX0\r\n\r\n", 400)

    def test_malformed_heads(self):
        self.refused(self.head("Content-Length : 2") + b"{}", 400)
        self.refused(self.head("X-A: a", " folded") + b"", 400)
        self.refused(b"GET /healthz HTTP/1.1\nHost: x\n\n", 400)
        self.refused(b"GET /healthz HTTP/1.1\r\nHost: x\rY: z\r\n\r\n", 400)
        self.refused(self.head("X-A: a\x00b"), 400)
        self.refused(self.head("X-A: a\x01b"), 400)
        self.refused(b"GET  /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 400)
        self.refused(self.head(method="GET", path="/healthz")
                     .replace(b"Host: x\r\n", b""), 400)
        self.refused(self.head("Host: y", method="GET", path="/healthz"),
                     400)

    def test_versions_methods_and_sizes(self):
        self.refused(b"GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n", 505)
        self.refused(b"GET /healthz HTTP/1.2\r\nHost: x\r\n\r\n", 505)
        self.refused(b"BREW /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 501)
        self.refused(b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\nHost: x"
                     b"\r\n\r\n", 414)
        self.refused(self.head(*("X-%d: v" % i for i in range(200))), 431)
        self.refused(self.head("X-Big: " + "v" * 70000), 431)
        self.refused(self.head("Expect: 200-ok", method="GET",
                               path="/healthz"), 417)

    def test_a_32_mib_json_body_gets_a_readable_413(self):
        body = b" " * (32 << 20)
        with rawhttp.Connection(self.port, timeout=60) as c:
            c.send(rawhttp.request("POST", "/v1/sandboxes", headers={
                "Content-Type": "application/json",
                "Content-Length": str(len(body))}))
            # A client that writes all of it before it reads.
            c.send(body)
            r = c.response()
        self.assertEqual(r.status, 413)
        self.assertEqual(r.error_code(), "payload_too_large")

    def test_a_chunked_json_body_over_the_limit(self):
        chunk = b" " * 65536
        data = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk)
                        for _ in range(20)) + b"0\r\n\r\n"
        with rawhttp.Connection(self.port, timeout=60) as c:
            c.send(rawhttp.request("POST", "/v1/sandboxes", body=data,
                                   headers={"Transfer-Encoding": "chunked"}))
            r = c.response()
        self.assertEqual(r.status, 413)
        self.assertEqual(r.error_code(), "payload_too_large")

    def test_chunked_json_body(self):
        body = json.dumps({"command": "echo chunks"}).encode()
        data = b"".join(b"%x\r\n%s\r\n" % (1, body[i:i + 1])
                        for i in range(len(body))) + b"0\r\nX-T: 1\r\n\r\n"
        with rawhttp.Connection(self.port) as c:
            r = c.exchange("POST", "/v1/sandboxes/%s/exec" % self.sb,
                           body=data,
                           headers={"Transfer-Encoding": "chunked",
                                    "Content-Type": "application/json"})
            self.assertEqual(r.json()["stdout"], "chunks\n")
            self.assertEqual(c.exchange("GET", "/healthz").status, 200)


class Uploads(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = harness.SandboxServer().start()
        cls.port = cls.server.port
        cls.sb = cls.server.create()["id"]
        cls.base = "/v1/sandboxes/%s/files" % cls.sb

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def read(self, path):
        status, data = self.server.api("GET", self.base + "?path=" + path)
        return status, data

    def test_a_20_mib_chunked_upload_is_stored_whole(self):
        data = os.urandom(20 << 20)
        with rawhttp.Connection(self.port, timeout=120) as c:
            c.send(rawhttp.request("PUT", self.base + "?path=big.bin",
                                   headers={"Transfer-Encoding": "chunked"}))
            for i in range(0, len(data), 100000):
                piece = data[i:i + 100000]
                c.send(b"%x\r\n%s\r\n" % (len(piece), piece))
            c.send(b"0\r\n\r\n")
            r = c.response()
            self.assertEqual(r.status, 200, r)
            self.assertEqual(r.json()["size"], len(data))
        status, back = self.read("big.bin")
        self.assertEqual(status, 200)
        self.assertEqual(hashlib.sha256(back).hexdigest(),
                         hashlib.sha256(data).hexdigest())

    def test_a_client_gone_mid_upload_leaves_the_old_file(self):
        self.server.api("PUT", self.base + "?path=keep.txt", body=b"old")
        for chunked in (False, True):
            sock = socket.create_connection(("127.0.0.1", self.port))
            hdr = {"Transfer-Encoding": "chunked"} if chunked else \
                {"Content-Length": str(4 << 20)}
            sock.sendall(rawhttp.request("PUT", self.base + "?path=keep.txt",
                                         headers=hdr))
            piece = os.urandom(1 << 20)
            sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece)
                         if chunked else piece)
            time.sleep(0.5)
            sock.close()
            time.sleep(1)
            self.assertEqual(self.read("keep.txt"), (200, b"old"))


class UploadTimeout(unittest.TestCase):
    """An upload body that stops coming, against the real daemons under
    their kill filters with a 1 s body timeout: a spliced body (a
    Content-Length, apid/http_splice.c) and a chunked one each get 408
    and a closed connection, the old file stays whole; a body that
    trickles slower than that in all but never stops for 1 s lands
    whole, and the connection is used again after it."""

    NAME = "stall-\u00e9\u6f22.txt"

    @classmethod
    def setUpClass(cls):
        cls.server = harness.SandboxServer(
            AGENT_SANDBOX_HTTP_BODY_TIMEOUT_SECONDS="1").start()
        cls.port = cls.server.port
        cls.sb = cls.server.create()["id"]
        cls.url = "/v1/sandboxes/%s/files?path=%s" % (
            cls.sb, urllib.parse.quote(cls.NAME))

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def read(self):
        return self.server.api("GET", self.url)

    def test_a_stalled_body_is_408_and_the_old_file_stays(self):
        self.assertEqual(self.server.api("PUT", self.url, body=b"old")[0],
                         200)
        for chunked in (False, True):
            hdr = {"Transfer-Encoding": "chunked"} if chunked else \
                {"Content-Length": str(4 << 20)}
            piece = os.urandom(256 << 10)
            with rawhttp.Connection(self.port, timeout=10) as c:
                c.send(rawhttp.request("PUT", self.url, headers=hdr))
                c.send(b"%x\r\n%s\r\n" % (len(piece), piece)
                       if chunked else piece)
                r = c.response()
                self.assertEqual(r.status, 408, (chunked, r))
                self.assertIn(b"stopped coming", r.body)
                self.assertTrue(c.closed(), chunked)
            self.assertEqual(self.read(), (200, b"old"), chunked)

    def test_a_trickling_body_is_not_cut_off(self):
        data = os.urandom(6)
        with rawhttp.Connection(self.port, timeout=20) as c:
            c.send(rawhttp.request("PUT", self.url, headers={
                "Content-Length": str(len(data))}))
            for i in range(len(data)):
                time.sleep(0.5)
                c.send(data[i:i + 1])
            r = c.response()
            self.assertEqual(r.status, 200, r)
            self.assertEqual(r.json()["size"], len(data))
            self.assertEqual(c.exchange("GET", self.url).body, data)
            self.assertEqual(c.exchange("GET", "/healthz").status, 200)


if __name__ == "__main__":
    unittest.main(verbosity=2)
