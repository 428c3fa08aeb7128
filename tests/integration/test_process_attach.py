"""Attaching to processes over a real WebSocket client (Debian's
python3-websockets) against the real dockerd (docs/rest-api.md, ".../attach"):
a tty process sees its window size and its resize, stdin goes in as binary
frames and ends with a stdin_close frame after all of them, two
attachments see the same bytes, a re-attach gets the ring first, the exit
frame and close 1000, tokens for browsers, and the refusals (no key, a
wrong or used token, a bad handshake, a text frame that is not a
resize)."""
import asyncio
import http.client
import json
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

# Debian's python3-websockets (scripts/common.sh installs it): without it
# these tests fail rather than pass by skipping.
import websockets  # noqa: E402
import websockets.exceptions  # noqa: E402

KEY_HEADER = [("Authorization", "Bearer " + harness.TEST_KEY)]


def run(coro, timeout=60):
    return asyncio.run(asyncio.wait_for(coro, timeout))


class AttachCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = harness.SandboxServer().start()
        cls.sb = cls.server.create()["id"]

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def start(self, command, **kw):
        body = {"command": command}
        body.update(kw)
        status, doc = self.server.api(
            "POST", "/v1/sandboxes/%s/processes" % self.sb, body)
        self.assertEqual(status, 201, doc)
        self.addCleanup(self.server.api, "DELETE",
                        "/v1/sandboxes/%s/processes/%s" %
                        (self.sb, doc["id"]))
        return doc

    def url(self, pid, query=""):
        return "ws://127.0.0.1:%d/v1/sandboxes/%s/processes/%s/attach%s" % (
            self.server.port, self.sb, pid, query)

    def connect(self, pid, headers=KEY_HEADER, query=""):
        return websockets.connect(self.url(pid, query), extra_headers=headers,
                                  max_size=2 ** 20, open_timeout=20)


async def read_until(ws, needle, limit=1 << 20):
    """Binary frames joined until needle shows up; the text frames seen."""
    data, texts = b"", []
    while needle not in data:
        msg = await ws.recv()
        if isinstance(msg, bytes):
            data += msg
        else:
            texts.append(json.loads(msg))
        if len(data) > limit:
            raise AssertionError("no %r in %r" % (needle, data[-200:]))
    return data, texts


class Terminal(AttachCase):
    def test_tty_sees_its_size_and_resize(self):
        doc = self.start(["/bin/sh"], tty=True, cols=91, rows=27)
        self.assertTrue(doc["tty"])
        self.assertTrue(doc["stdin"])

        async def go():
            async with self.connect(doc["id"]) as ws:
                await ws.send(b"stty size; echo END1\n")
                await read_until(ws, b"27 91\r\nEND1")
                await ws.send(json.dumps({"type": "resize", "cols": 132,
                                          "rows": 43}))
                await asyncio.sleep(0.3)
                await ws.send(b"stty size; echo END2\n")
                await read_until(ws, b"43 132\r\nEND2")
                await ws.send(b"exit 5\n")
                _, texts = await read_until_closed(ws)
                return texts, ws.close_code
        texts, code = run(go())
        self.assertEqual(code, 1000)
        exits = [t for t in texts if t.get("type") == "exit"]
        self.assertEqual(len(exits), 1, texts)
        self.assertEqual(exits[0]["exit_code"], 5)
        status, doc = self.server.api(
            "GET", "/v1/sandboxes/%s/processes/%s" % (self.sb, doc["id"]))
        self.assertEqual((doc["cols"], doc["rows"]), (132, 43))

    def test_two_attachments_see_the_same_bytes(self):
        doc = self.start(["/bin/sh"], tty=True)

        async def go():
            async with self.connect(doc["id"]) as a, \
                    self.connect(doc["id"]) as b:
                await a.send(b"for i in 1 2 3 4 5; do echo tick$i; done\n")
                da, _ = await read_until(a, b"tick5\r\n")
                db, _ = await read_until(b, b"tick5\r\n")
                return da, db
        da, db = run(go())
        # Both get the same stream; each from where it attached.
        tail = lambda d: d[d.index(b"tick1\r\n"):d.index(b"tick5\r\n")]
        self.assertEqual(tail(da), tail(db))

    def test_reattach_gets_the_ring_first(self):
        doc = self.start("echo kept-before-attach; sleep 30")
        # Wait for the line to be in the ring.
        deadline = time.time() + 20
        while True:
            status, info = self.server.api(
                "GET", "/v1/sandboxes/%s/processes/%s" % (self.sb,
                                                         doc["id"]))
            if info["output_bytes"] > 0:
                break
            self.assertLess(time.time(), deadline)
            time.sleep(0.1)

        async def go():
            async with self.connect(doc["id"]) as ws:
                data, _ = await read_until(ws, b"kept-before-attach\n")
                return data
        self.assertIn(b"kept-before-attach\n", run(go()))
        # Closing the attachment left it running.
        status, info = self.server.api(
            "GET", "/v1/sandboxes/%s/processes/%s" % (self.sb, doc["id"]))
        self.assertEqual(info["status"], "running")

    def test_stdin_without_a_tty(self):
        doc = self.start(["cat"], stdin=True)

        async def go():
            async with self.connect(doc["id"]) as ws:
                await ws.send(b"\x00\xffbinary\n")
                data, _ = await read_until(ws, b"binary\n")
                return data
        self.assertIn(b"\x00\xffbinary\n", run(go()))

    def test_stdin_close_after_its_bytes(self):
        doc = self.start(["wc", "-c"], stdin=True)

        async def go():
            async with self.connect(doc["id"]) as ws:
                chunk = b"z" * 60000
                for _ in range(50):
                    await ws.send(chunk)
                await ws.send(json.dumps({"type": "stdin_close"}))
                data, texts = await read_until_closed(ws)
                return data, texts, ws.close_code
        data, texts, code = run(go())
        self.assertIn(b"3000000", data)
        exits = [t for t in texts if t.get("type") == "exit"]
        self.assertEqual(len(exits), 1, texts)
        self.assertEqual(exits[0]["exit_code"], 0)
        self.assertEqual(code, 1000)


async def read_until_closed(ws):
    data, texts = b"", []
    try:
        while True:
            msg = await ws.recv()
            if isinstance(msg, bytes):
                data += msg
            else:
                texts.append(json.loads(msg))
    except websockets.exceptions.ConnectionClosed:
        pass
    return data, texts


class Refusals(AttachCase):
    def test_without_a_key(self):
        doc = self.start(["sleep", "30"])

        async def go():
            async with self.connect(doc["id"], headers=[]):
                pass
        with self.assertRaises(websockets.exceptions.InvalidStatusCode) as cm:
            run(go())
        self.assertEqual(cm.exception.status_code, 401)

    def test_token_for_browsers(self):
        doc = self.start("echo via-token; sleep 30")
        status, tok = self.server.api(
            "POST", "/v1/sandboxes/%s/processes/%s/attach-token" %
            (self.sb, doc["id"]), {})
        self.assertEqual(status, 201, tok)
        self.assertIn("expires_at", tok)

        async def go(token):
            async with self.connect(doc["id"], headers=[],
                                    query="?token=" + token) as ws:
                data, _ = await read_until(ws, b"via-token\n")
                return data
        self.assertIn(b"via-token", run(go(tok["token"])))
        # Used up; and a token is for its process only.
        with self.assertRaises(websockets.exceptions.InvalidStatusCode) as cm:
            run(go(tok["token"]))
        self.assertEqual(cm.exception.status_code, 401)
        other = self.start(["sleep", "30"])
        status, tok2 = self.server.api(
            "POST", "/v1/sandboxes/%s/processes/%s/attach-token" %
            (self.sb, other["id"]), {})
        self.assertEqual(status, 201)
        with self.assertRaises(websockets.exceptions.InvalidStatusCode) as cm:
            run(go(tok2["token"]))
        self.assertEqual(cm.exception.status_code, 401)
        with self.assertRaises(websockets.exceptions.InvalidStatusCode):
            run(go("A" * 43))

    def test_a_plain_get_is_not_a_websocket(self):
        doc = self.start(["sleep", "30"])
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port,
                                          timeout=30)
        conn.request("GET", "/v1/sandboxes/%s/processes/%s/attach" %
                     (self.sb, doc["id"]), headers=dict(KEY_HEADER))
        resp = conn.getresponse()
        self.assertIn(resp.status, (400, 426))
        body = json.loads(resp.read())
        self.assertIn("error", body)
        conn.close()

    def test_unknown_process(self):
        async def go():
            async with self.connect("proc_0000000000000000"):
                pass
        with self.assertRaises(websockets.exceptions.InvalidStatusCode) as cm:
            run(go())
        self.assertEqual(cm.exception.status_code, 404)

    def test_a_text_frame_that_is_not_a_resize(self):
        doc = self.start(["/bin/sh"], tty=True)

        async def go():
            async with self.connect(doc["id"]) as ws:
                await ws.send("not json")
                await read_until_closed(ws)
                return ws.close_code
        self.assertIn(run(go()), (1003, 1007, 1008))
        # The process is untouched.
        status, info = self.server.api(
            "GET", "/v1/sandboxes/%s/processes/%s" % (self.sb, doc["id"]))
        self.assertEqual(info["status"], "running")


if __name__ == "__main__":
    harness.require_root_and_docker()
    unittest.main()
