#!/usr/bin/env python3
"""apid under connection pressure and against slow clients, with the real
daemons under their seccomp filters: the timeouts (a head, a body, an
idle kept-alive connection, a reply that does not move), the connection
cap that sheds idle connections first, and a client that keeps working
while 2,000 idle and 200 slow-header connections are held."""

import os
import resource
import socket
import statistics
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import rawhttp  # noqa: E402

harness.require_root_and_docker()


def raise_fd_limit(want):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= want:
        return True
    if hard != resource.RLIM_INFINITY and hard < want:
        return False
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return True


def half_head(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
    return s


def apid_fds(server):
    return len(os.listdir("/proc/%d/fd" % server.children()["apid"]))


def apid_cpu_ticks(server):
    with open("/proc/%d/stat" % server.children()["apid"]) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


class Timeouts(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = harness.SandboxServer(
            AGENT_SANDBOX_HTTP_HEADER_TIMEOUT_SECONDS="1",
            AGENT_SANDBOX_HTTP_BODY_TIMEOUT_SECONDS="1",
            AGENT_SANDBOX_HTTP_IDLE_TIMEOUT_SECONDS="1.5",
            AGENT_SANDBOX_HTTP_SEND_TIMEOUT_SECONDS="2").start()
        cls.port = cls.server.port

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def test_a_head_must_come_in_time(self):
        with rawhttp.Connection(self.port) as c:
            t0 = time.monotonic()
            # A byte every 0.3 s does not keep it alive.
            for b in b"GET /healthz HTTP/1.1\r\nHost":
                c.send(bytes([b]))
                if c.closed(timeout=0.3) or c.buf:
                    break
            r = c.response()
            self.assertEqual(r.status, 408)
            self.assertEqual(r.error_code(), "http_error")
            self.assertLess(time.monotonic() - t0, 3)
            self.assertTrue(c.closed())

    def test_a_new_connection_that_sends_nothing(self):
        with rawhttp.Connection(self.port) as c:
            self.assertTrue(c.closed(timeout=4))
            self.assertEqual(c.buf, b"")

    def test_a_body_must_keep_moving(self):
        sb = self.server.create()["id"]
        with rawhttp.Connection(self.port) as c:
            c.send(rawhttp.request(
                "PUT", "/v1/sandboxes/%s/files?path=x" % sb,
                headers={"Content-Length": "100"}) + b"only part")
            r = c.response()
            self.assertEqual(r.status, 408)
            self.assertTrue(c.closed())
        status, _ = self.server.api("GET",
                                    "/v1/sandboxes/%s/files?path=x" % sb)
        self.assertEqual(status, 404)

    def test_an_idle_kept_alive_connection_is_closed(self):
        with rawhttp.Connection(self.port) as c:
            self.assertEqual(c.exchange("GET", "/healthz").status, 200)
            self.assertFalse(c.closed(timeout=0.8))
            self.assertTrue(c.closed(timeout=3))

    def put(self, sb, path, data):
        status, _, body = self.server.request(
            "PUT", "/v1/sandboxes/%s/files?path=%s" % (sb, path), body=data,
            headers=dict(harness.AUTH,
                         **{"Content-Type": "application/octet-stream"}))
        self.assertEqual(status, 200, body)

    def download_socket(self, sb, path, rcvbuf=16384):
        sock = socket.create_connection(("127.0.0.1", self.port))
        if rcvbuf:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        sock.sendall(rawhttp.request(
            "GET", "/v1/sandboxes/%s/files?path=%s" % (sb, path)))
        return sock

    def test_a_slow_reader_of_a_download_is_not_cut_off(self):
        # 1 MiB through a 16 KiB receive buffer (some 150 KB/s here), past
        # the 2 s send timeout: the spliced file fills the socket, which is
        # writable again only once much of it is read, and that is not a
        # reader gone.
        sb = self.server.create()["id"]
        data = os.urandom(1024 * 1024)
        self.put(sb, "slow.bin", data)
        sock = self.download_socket(sb, "slow.bin")
        got, paced = bytearray(), 0
        t0 = time.monotonic()
        try:
            while len(got) < len(data) + 1024:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                got += chunk
                if len(got) - paced >= 16384:
                    paced = len(got)
                    time.sleep(0.02)
                self.assertLess(time.monotonic() - t0, 120)
        finally:
            sock.close()
        head, _, body = bytes(got).partition(b"\r\n\r\n")
        self.assertGreater(time.monotonic() - t0, 2.5)
        self.assertTrue(head.startswith(b"HTTP/1.1 200"), head)
        self.assertEqual(body, data, "the download was cut off")

    def test_a_download_nobody_reads_is_let_go(self):
        # Not read at all for twice the send timeout: the connection goes,
        # the body short, and apid serves the next download whole.
        sb = self.server.create()["id"]
        # More than the kernel's buffers hold either side (tcp_wmem and
        # tcp_rmem reach 4 and 6 MiB), and read fast once it is read.
        data = os.urandom(32 * 1024 * 1024)
        self.put(sb, "stalled.bin", data)
        sock = self.download_socket(sb, "stalled.bin", rcvbuf=0)
        time.sleep(5)
        got = bytearray()
        sock.settimeout(10)
        try:
            while True:
                chunk = sock.recv(1024 * 1024)
                if not chunk:
                    break
                got += chunk
        except ConnectionError:
            pass
        finally:
            sock.close()
        self.assertTrue(got.startswith(b"HTTP/1.1 200"), got[:100])
        self.assertLess(len(got.partition(b"\r\n\r\n")[2]), len(data))
        status, _, body = self.server.request(
            "GET", "/v1/sandboxes/%s/files?path=stalled.bin" % sb,
            headers=harness.AUTH)
        self.assertEqual(status, 200)
        self.assertEqual(body, data)

    def test_a_slow_reader_of_a_stream_is_not_cut_off(self):
        # 1 MB of output read at about 160 KB/s, well past the 2 s send
        # timeout.
        sb = self.server.create()["id"]
        cmd = "head -c 1000000 /dev/zero | tr '\\0' 'x'"
        sock = socket.create_connection(("127.0.0.1", self.port))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
        sock.sendall(rawhttp.request(
            "POST", "/v1/sandboxes/%s/exec/stream" % sb,
            body={"command": cmd}))
        got = b""
        t0 = time.monotonic()
        while b'"exit"' not in got[-200:]:
            data = sock.recv(8192)
            self.assertTrue(data, "the stream was cut off")
            got += data
            time.sleep(0.05)
            self.assertLess(time.monotonic() - t0, 120)
        self.assertGreater(time.monotonic() - t0, 4)
        body = got.split(b"\r\n\r\n", 1)[1]
        self.assertEqual(body.count(b"x") - body.count(b"exit"), 1000000)
        sock.close()

    def test_a_reader_that_stops_is_cut_off(self):
        sb = self.server.create()["id"]
        sock = socket.create_connection(("127.0.0.1", self.port))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
        sock.sendall(rawhttp.request(
            "POST", "/v1/sandboxes/%s/exec/stream" % sb,
            body={"command": "yes stalled"}))
        time.sleep(6)
        # The command was killed with the connection.
        out = self.server.exec(sb, "ps -o comm | grep -c '^yes$' || true")
        self.assertEqual(out["stdout"].strip(), "0", out)
        sock.close()


class Cap(unittest.TestCase):
    """At most AGENT_SANDBOX_HTTP_MAX_CONNECTIONS clients; beyond that a
    new one takes the place of the oldest idle one."""

    @classmethod
    def setUpClass(cls):
        if not raise_fd_limit(4096):
            raise unittest.SkipTest("descriptor limit too low")
        cls.server = harness.SandboxServer(
            AGENT_SANDBOX_HTTP_MAX_CONNECTIONS="100").start()

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def test_the_oldest_idle_connections_are_shed(self):
        socks = [half_head(self.server.port) for _ in range(300)]
        try:
            time.sleep(1)
            self.assertLessEqual(apid_fds(self.server), 100 + 32)
            # The first were shed (EOF), the last are held.
            socks[0].settimeout(5)
            self.assertEqual(socks[0].recv(100), b"")
            socks[-1].settimeout(0.2)
            with self.assertRaises(socket.timeout):
                socks[-1].recv(100)
            # Not spinning while they are held.
            cpu0 = apid_cpu_ticks(self.server)
            time.sleep(1)
            self.assertLess(apid_cpu_ticks(self.server) - cpu0, 30)
            t0 = time.monotonic()
            status, _, _ = self.server.request("GET", "/healthz", timeout=5)
            self.assertEqual(status, 200)
            self.assertLess(time.monotonic() - t0, 2)
        finally:
            for s in socks:
                s.close()


class UnderSiege(unittest.TestCase):
    """2,000 idle and 200 slow-header connections while a client keeps
    doing healthz and exec: every one of its requests is answered."""
    IDLE = 2000
    SLOW = 200

    @classmethod
    def setUpClass(cls):
        if not raise_fd_limit(cls.IDLE + cls.SLOW + 512):
            raise unittest.SkipTest("descriptor limit too low")
        cls.server = harness.SandboxServer().start()
        cls.sb = cls.server.create()["id"]

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def slowloris(self, stop, socks):
        # Each sends one more byte of its head every second.
        while not stop.is_set():
            for s in socks:
                try:
                    s.send(b"X")
                except OSError:
                    pass
            stop.wait(1)

    def test_a_working_client_is_served(self):
        port = self.server.port
        idle, slow = [], []
        stop = threading.Event()
        latencies, failures = [], []
        try:
            for _ in range(self.IDLE):
                idle.append(socket.create_connection(("127.0.0.1", port)))
            for _ in range(self.SLOW):
                slow.append(half_head(port))
            pest = threading.Thread(target=self.slowloris,
                                    args=(stop, slow), daemon=True)
            pest.start()
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                for method, path, body in (
                        ("GET", "/healthz", None),
                        ("POST", "/v1/sandboxes/%s/exec" % self.sb,
                         {"command": "echo alive"})):
                    t0 = time.monotonic()
                    try:
                        status, data = self.server.api(method, path, body,
                                                       timeout=10)
                    except OSError as e:
                        failures.append(repr(e))
                        continue
                    latencies.append(time.monotonic() - t0)
                    if status != 200:
                        failures.append((status, data))
        finally:
            stop.set()
            for s in idle + slow:
                s.close()
        self.assertEqual(failures, [])
        self.assertGreater(len(latencies), 10)
        lat = sorted(latencies)
        print("\n%d requests under %d idle + %d slow connections: "
              "p50 %.1f ms, p99 %.1f ms, max %.1f ms" % (
                  len(lat), self.IDLE, self.SLOW,
                  statistics.median(lat) * 1000,
                  lat[int(len(lat) * 0.99) - 1] * 1000, lat[-1] * 1000))


if __name__ == "__main__":
    unittest.main(verbosity=2)
