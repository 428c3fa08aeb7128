"""egress-proxy against a network of its own, with this test playing
managerd on the real binary's socketpair (jailed, seccomp kill) and the
sandboxes (their "listeners" are TCP sockets on the host's 127.0.0.1).
No outside address is ever contacted: a network namespace joined to the
host by a veth pair in 198.19.0.0/15 (a benchmarking range, made public
for the proxy by its "public" setting) holds an HTTP server and a DNS
server (egress_servers.py).  Run as root; skips (77) otherwise."""

import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from test_proxy_ops import (IMSG_FD_MARK, Reader, p_str,  # noqa: E402
                            p_u32, p_u8)

MSG_EGRESS_CONFIG = 108
MSG_READY = 110
MSG_EGRESS_LISTEN = 810
MSG_EGRESS_POLICY = 811
MSG_EGRESS_FORGET = 812
MSG_EGRESS_LOG = 813
MSG_EGRESS_DONE = 860
MSG_EGRESS_LOG_TEXT = 861
MSG_EGRESS_LOG_END = 862
MSG_EGRESS_AUDIT = 870
MSG_ERROR = 900

NET = os.getpid() % 200 + 20
NS = "as-egp-%d" % os.getpid()
VETH = "aseg%d" % (os.getpid() % 100000)
HOST_IP = "198.19.%d.1" % NET
NS_IP = "198.19.%d.2" % NET
EXTRA_IP = "198.19.%d.3" % NET
PUBLIC = "198.19.%d.0/24" % NET
UNREACH = "198.19.%d.200" % NET
SB_A = "sb_00000000000000a1"
SB_B = "sb_00000000000000b2"
servers = None


def sh(*argv):
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)


def setUpModule():
    global servers
    if os.geteuid() != 0 or shutil.which("ip") is None or \
            shutil.which("curl") is None:
        print("skipped: needs root, ip and curl")
        sys.exit(harness.SKIP)
    sh("ip", "netns", "add", NS)
    try:
        sh("ip", "link", "add", VETH + "h", "type", "veth", "peer", "name",
           VETH + "n")
        sh("ip", "link", "set", VETH + "n", "netns", NS)
        sh("ip", "addr", "add", HOST_IP + "/24", "dev", VETH + "h")
        sh("ip", "link", "set", VETH + "h", "up")
        sh("ip", "-n", NS, "addr", "add", NS_IP + "/24", "dev", VETH + "n")
        sh("ip", "-n", NS, "link", "set", VETH + "n", "up")
        sh("ip", "-n", NS, "link", "set", "lo", "up")
        # Connects there fail at once, inside connect(2): nothing leaves.
        sh("ip", "route", "add", "unreachable", UNREACH + "/32")
        script = os.path.join(harness.SRCDIR, "tests", "integration",
                              "egress_servers.py")
        servers = subprocess.Popen(["ip", "netns", "exec", NS,
                                    sys.executable, script, NS_IP,
                                    EXTRA_IP],
                                   stdout=subprocess.PIPE)
        if servers.stdout.readline().strip() != b"ready":
            raise AssertionError("the servers did not start")
    except BaseException:
        tearDownModule()
        raise


def tearDownModule():
    if servers is not None:
        servers.kill()
        servers.wait()
    subprocess.run(["ip", "link", "del", VETH + "h"],
                   stderr=subprocess.DEVNULL)
    subprocess.run(["ip", "route", "del", "unreachable", UNREACH + "/32"],
                   stderr=subprocess.DEVNULL)
    subprocess.run(["ip", "netns", "del", NS], stderr=subprocess.DEVNULL)


# --- policies in their byte form (common/egress_policy.h) --------------------

def rule_name(name, port=0):
    return p_u8(1) + p_u32(port) + p_str(name)


def rule_cidr(addr, prefix, port=0):
    return p_u8(3) + p_u32(port) + p_u8(4) + p_u8(prefix) + \
        socket.inet_aton(addr)


def policy(mode, *rules):
    return p_u8(mode) + p_u32(len(rules)) + b"".join(rules)


NONE, PUBLIC_MODE, ALLOWLIST = 0, 1, 2
POLICY_A = policy(ALLOWLIST, rule_name("allowed.test"),
                  rule_name("private.test"), rule_name("metadata.test"),
                  rule_cidr("10.0.0.1", 32), rule_cidr("169.254.169.254", 32),
                  rule_cidr(HOST_IP, 32), rule_name("host.test"))


class Egress:
    """The real egress-proxy on a socketpair."""

    def __init__(self, log_size=16, ready=True, dns=None):
        self.tmp = tempfile.mkdtemp(prefix="as-egress-")
        os.mkdir(os.path.join(self.tmp, "jail"))
        self.log_path = os.path.join(self.tmp, "egress.log")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock = ours
        binary = os.path.join(harness.BUILDDIR, "egress-proxy",
                              "egress-proxy")
        child_fd = theirs.fileno()
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([binary], stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=self.log,
                                     preexec_fn=lambda: os.dup2(child_fd, 3),
                                     close_fds=False)
        theirs.close()
        self.cond = threading.Condition()
        self.inbox = []
        self.closed = False
        self.next_id = 1000
        self.listeners = {}
        seccomp = os.environ.get("AGENT_SANDBOX_TEST_SECCOMP", "kill")
        self.send(MSG_EGRESS_CONFIG, 0, p_str("debug") + p_str(seccomp) +
                  p_str("nobody") + p_str(os.path.join(self.tmp, "jail")) +
                  p_str(NS_IP if dns is None else dns) + p_str(PUBLIC) +
                  p_u32(log_size))
        threading.Thread(target=self._read, daemon=True).start()
        if ready:
            self.wait(0, MSG_READY, 20)

    def send(self, mtype, peerid, payload=b"", fd=None):
        length = len(payload) | (IMSG_FD_MARK if fd is not None else 0)
        data = struct.pack("<IIII", mtype, length, peerid, os.getpid()) + \
            payload
        if fd is None:
            self.sock.sendall(data)
        else:
            socket.send_fds(self.sock, [data[:1]], [fd])
            self.sock.sendall(data[1:])

    def _read(self):
        buf = b""
        while True:
            try:
                chunk = self.sock.recv(65536)
            except OSError:
                chunk = b""
            if not chunk:
                with self.cond:
                    self.closed = True
                    self.cond.notify_all()
                return
            buf += chunk
            while len(buf) >= 16:
                mtype, length, peerid, _ = struct.unpack("<IIII", buf[:16])
                length &= ~IMSG_FD_MARK
                if len(buf) < 16 + length:
                    break
                with self.cond:
                    self.inbox.append((mtype, peerid, buf[16:16 + length]))
                    self.cond.notify_all()
                buf = buf[16 + length:]

    def next(self, peerid, timeout=20):
        deadline = time.time() + timeout
        with self.cond:
            while True:
                for i, (mtype, pid, payload) in enumerate(self.inbox):
                    if pid == peerid and (peerid != 0 or
                                          mtype != MSG_EGRESS_AUDIT):
                        del self.inbox[i]
                        return mtype, payload
                if self.closed:
                    raise AssertionError("egress-proxy went away:\n" +
                                         self.log_text())
                left = deadline - time.time()
                if left <= 0:
                    raise AssertionError("no reply for %d:\n%s" %
                                         (peerid, self.log_text()))
                self.cond.wait(left)

    def wait(self, peerid, mtype, timeout=20):
        got, payload = self.next(peerid, timeout)
        if got != mtype:
            raise AssertionError("expected %d, got %d %r" %
                                 (mtype, got, payload))
        return payload

    def request(self, mtype, payload=b"", fd=None):
        self.next_id += 1
        self.send(mtype, self.next_id, payload, fd)
        return self.next_id

    def audits(self, count, timeout=10):
        """count audits, decoded, in the order they came."""
        deadline = time.time() + timeout
        with self.cond:
            while True:
                got = [p for (t, pid, p) in self.inbox
                       if t == MSG_EGRESS_AUDIT]
                if len(got) >= count:
                    break
                left = deadline - time.time()
                if left <= 0 or self.closed:
                    raise AssertionError("%d audits, not %d" %
                                         (len(got), count))
                self.cond.wait(left)
            self.inbox = [m for m in self.inbox if m[0] != MSG_EGRESS_AUDIT]
        out = []
        for p in got:
            r = Reader(p)
            a = {"id": r.str(), "host": r.str(), "port": r.u32(),
                 "address": r.str(), "allowed": r.u8(), "reason": r.str()}
            a["sent"] = struct.unpack("<Q", r.take(8))[0]
            a["received"] = struct.unpack("<Q", r.take(8))[0]
            r.end()
            out.append(a)
        return out

    def listen(self, sid):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen(64)
        self.wait(self.request(MSG_EGRESS_LISTEN, p_str(sid), s.fileno()),
                  MSG_EGRESS_DONE)
        port = s.getsockname()[1]
        s.close()
        self.listeners[sid] = port
        return port

    def policy(self, sid, pol):
        self.wait(self.request(MSG_EGRESS_POLICY, p_str(sid) + pol),
                  MSG_EGRESS_DONE)

    def get_log(self, sid):
        peerid = self.request(MSG_EGRESS_LOG, p_str(sid))
        text = ""
        while True:
            mtype, payload = self.next(peerid)
            if mtype == MSG_EGRESS_LOG_END:
                return json.loads(text)
            if mtype != MSG_EGRESS_LOG_TEXT:
                raise AssertionError("got %d" % mtype)
            r = Reader(payload)
            text += r.str()
            r.end()

    def log_text(self):
        if not os.path.exists(self.log_path):
            return self.final_log
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def stop(self):
        """Close the channel: the proxy must exit 0, not be killed."""
        self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        try:
            rc = self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise
        finally:
            self.log.close()
            self.final_log = self.log_text()
            shutil.rmtree(self.tmp, ignore_errors=True)
        if "killed by seccomp" in self.final_log or rc == -31:
            raise AssertionError("seccomp:\n" + self.final_log)
        return rc


def curl(port, url, *extra):
    """(status, body) of curl through the proxy on port."""
    r = subprocess.run(["curl", "-s", "-m", "20", "-o", "-", "-w",
                        "\n%{http_code} %{http_connect}", "-x", "http://127.0.0.1:%d" % port]
                       + list(extra) + [url], capture_output=True)
    body, _, codes = r.stdout.rpartition(b"\n")
    code, connect = (int(c) for c in codes.split())
    # A refused CONNECT is in http_connect (http_code is then 000).
    return code or connect, body.decode("utf-8", "replace")


def raw(port, data, timeout=20):
    """What the proxy answers to data sent as is, until it closes."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(data)
    out = b""
    while True:
        try:
            b = s.recv(65536)
        except ConnectionResetError:
            break
        if not b:
            break
        out += b
    s.close()
    return out


class EgressCase(unittest.TestCase):
    def setUp(self):
        self.px = Egress(log_size=64)
        self.port = self.px.listen(SB_A)
        self.px.policy(SB_A, POLICY_A)

    def tearDown(self):
        rc = self.px.stop()
        self.assertEqual(rc, 0, self.px.log_text())

    def test_forward_allowed(self):
        code, body = curl(self.port, "http://allowed.test:8080/a?b=1")
        self.assertEqual(code, 200, body)
        self.assertIn("hello /a?b=1", body)
        self.assertIn("Host: allowed.test:8080", body)
        a = self.px.audits(1)[0]
        self.assertEqual((a["id"], a["host"], a["port"], a["address"],
                          a["allowed"], a["reason"]),
                         (SB_A, "allowed.test", 8080, NS_IP, 1, ""))
        self.assertGreater(a["received"], len(body))
        self.assertGreater(a["sent"], 0)

    def test_post_body(self):
        code, body = curl(self.port, "http://allowed.test:8080/p",
                          "-d", "k=v")
        self.assertEqual(code, 200, body)
        self.assertIn("body=k=v", body)

    def test_connect_allowed(self):
        code, body = curl(self.port, "http://allowed.test:8080/tunnel",
                          "-p")
        self.assertEqual(code, 200, body)
        self.assertIn("hello /tunnel", body)
        a = self.px.audits(1)[0]
        self.assertEqual((a["host"], a["allowed"]), ("allowed.test", 1))

    def test_urllib(self):
        proxy = "http://127.0.0.1:%d" % self.port
        opener = urllib.request.build_opener(
            urllib.request.ProxyHandler({"http": proxy}))
        with opener.open("http://allowed.test:8080/py", timeout=20) as r:
            self.assertEqual(r.status, 200)
            self.assertIn(b"hello /py", r.read())

    def refused(self, url, why, *extra):
        code, body = curl(self.port, url, *extra)
        self.assertEqual(code, 403, body)
        # curl shows no body of a refused CONNECT: the audit has it.
        if "-p" not in extra:
            self.assertIn(why, body)
        a = self.px.audits(1)[0]
        self.assertEqual(a["allowed"], 0)
        self.assertIn(why, a["reason"])
        return a

    def test_refusals(self):
        a = self.refused("http://other.test:8080/", "not on the allowlist")
        # The list has ranges, so the name was resolved and checked.
        self.assertEqual((a["host"], a["port"], a["address"]),
                         ("other.test", 8080, NS_IP))
        a = self.refused("http://10.0.0.1:8080/", "private")
        self.assertEqual((a["host"], a["address"]), ("10.0.0.1", "10.0.0.1"))
        self.refused("http://169.254.169.254/latest/", "metadata")
        a = self.refused("http://private.test:8080/", "private")
        self.assertEqual(a["address"], "10.0.0.1")
        a = self.refused("http://metadata.test/", "metadata")
        self.assertEqual(a["address"], "169.254.169.254")
        self.refused("http://%s:8080/" % HOST_IP, "host's own")
        self.refused("http://other.test:8080/", "not on the allowlist", "-p")
        log = self.px.get_log(SB_A)
        self.assertEqual(len(log["entries"]), 7)
        self.assertFalse(any(e["allowed"] for e in log["entries"]))
        self.assertEqual(log["entries"][0]["reason"], "not on the allowlist")
        self.assertEqual(log["entries"][5]["address"], HOST_IP)
        self.assertEqual(log["entries"][6]["bytes_sent"], 0)

    def test_names_only_not_resolved(self):
        """With no range on the list, a name off it is never asked."""
        self.px.policy(SB_A, policy(ALLOWLIST, rule_name("allowed.test")))
        a = self.refused("http://other.test:8080/", "not on the allowlist")
        self.assertEqual(a["address"], "")
        self.assertEqual(curl(self.port, "http://allowed.test:8080/")[0],
                         200)

    def test_next_address(self):
        """The first address fails inside connect(2); the next serves."""
        self.px.policy(SB_A, policy(PUBLIC_MODE))
        code, body = curl(self.port, "http://two.test:8080/n")
        self.assertEqual(code, 200, body)
        a = self.px.audits(1)[0]
        self.assertEqual((a["host"], a["address"], a["allowed"]),
                         ("two.test", NS_IP, 1))
        # Only the unreachable one left: a 502, and the proxy lives on.
        self.px.policy(SB_A, policy(ALLOWLIST, rule_cidr(UNREACH, 32)))
        code, body = curl(self.port, "http://two.test:8080/n")
        self.assertEqual(code, 502, body)
        self.assertIn("no address of it answered", body)

    def test_chunked_body_bounded(self):
        """A chunked body goes up to its end; nothing pipelined after."""
        head = (b"POST http://allowed.test:8080/c HTTP/1.1\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n")
        body = b"3;x=y\r\nabc\r\n10\r\n" + b"z" * 16 + \
            b"\r\n0\r\nX-T: 1\r\n\r\n"
        smuggled = b"GET http://allowed.test:8080/smuggled HTTP/1.1\r\n\r\n"
        for tail in (b"", smuggled):
            out = raw(self.port, head + body + tail)
            self.assertTrue(out.startswith(b"HTTP/1.0 200"), out[:100])
            self.assertNotIn(b"smuggled", out)
        alone, piped = self.px.audits(2)
        self.assertEqual(alone["sent"], piped["sent"])
        self.assertGreater(alone["sent"], len(body))
        # A malformed one is cut; the proxy serves on.
        raw(self.port, head + b"zz\r\n")
        self.assertEqual(curl(self.port, "http://allowed.test:8080/")[0],
                         200)

    def test_ipv6_literals(self):
        self.px.policy(SB_A, policy(PUBLIC_MODE))
        a = self.refused("http://[::1]:8080/", "loopback")
        self.assertEqual((a["host"], a["address"]), ("::1", "::1"))
        a = self.refused("http://[::ffff:10.0.0.1]:8080/", "private")
        self.assertEqual(a["address"], "::ffff:10.0.0.1")
        self.refused("http://[::ffff:%s]:8080/" % HOST_IP, "host's own")

    def test_unknown_name(self):
        self.px.policy(SB_A, policy(PUBLIC_MODE))
        code, body = curl(self.port, "http://nowhere.test:8080/")
        self.assertEqual(code, 502, body)
        self.assertIn("resolve", body)

    def test_policy_change_and_public(self):
        self.assertEqual(curl(self.port, "http://other.test:8080/")[0], 403)
        self.px.policy(SB_A, policy(PUBLIC_MODE))
        code, body = curl(self.port, "http://other.test:8080/x")
        self.assertEqual(code, 200, body)
        # Public is not private, nor the host's own.
        self.assertEqual(curl(self.port, "http://private.test:8080/")[0],
                         403)
        self.assertEqual(curl(self.port, "http://%s:8080/" % HOST_IP)[0],
                         403)
        self.px.policy(SB_A, policy(NONE))
        self.assertEqual(curl(self.port, "http://other.test:8080/")[0], 403)

    def test_new_host_address(self):
        """An address the host gains later is refused too (netlink)."""
        self.px.policy(SB_A, policy(PUBLIC_MODE))
        sh("ip", "addr", "add", EXTRA_IP + "/32", "dev", VETH + "h")
        try:
            time.sleep(0.5)
            code, body = curl(self.port, "http://host.test:8080/")
            self.assertEqual(code, 403, body)
            self.assertIn("host's own", body)
        finally:
            sh("ip", "addr", "del", EXTRA_IP + "/32", "dev", VETH + "h")

    def test_two_sandboxes(self):
        port_b = self.px.listen(SB_B)
        self.assertEqual(curl(port_b, "http://allowed.test:8080/")[0], 403)
        self.px.policy(SB_B, policy(PUBLIC_MODE))
        self.assertEqual(curl(port_b, "http://other.test:8080/")[0], 200)
        self.assertEqual(curl(self.port, "http://other.test:8080/")[0], 403)
        self.px.audits(3)
        hosts_a = [e["allowed"] for e in self.px.get_log(SB_A)["entries"]]
        hosts_b = [e["allowed"] for e in self.px.get_log(SB_B)["entries"]]
        self.assertEqual(hosts_a, [False])
        self.assertEqual(hosts_b, [False, True])
        self.assertEqual(self.px.get_log("sb_00000000000000c3"),
                         {"entries": [], "dropped": 0})

    def test_forget(self):
        self.px.listen(SB_B)
        s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        s.sendall(b"CONNECT allowed.test:8080 HTTP/1.1\r\n\r\n")
        self.assertTrue(s.recv(100).startswith(b"HTTP/1.1 200"))
        self.px.send(MSG_EGRESS_FORGET, 0, p_str(SB_A))
        s.settimeout(10)
        self.assertEqual(s.recv(100), b"")
        s.close()
        with self.assertRaises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", self.port), timeout=5)
        self.assertEqual(self.px.get_log(SB_A),
                         {"entries": [], "dropped": 0})
        # The other sandbox's listener still listens.
        self.assertEqual(curl(self.px.listeners[SB_B],
                              "http://allowed.test:8080/")[0], 403)

    def test_listen_replaces(self):
        old = self.port
        new = self.px.listen(SB_A)
        with self.assertRaises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", old), timeout=5)
        self.assertEqual(curl(new, "http://allowed.test:8080/")[0], 200)

    def test_connection_cap(self):
        """256 at once per sandbox; the next waits in the backlog."""
        held = [socket.create_connection(("127.0.0.1", self.port),
                                         timeout=10) for _ in range(256)]
        try:
            time.sleep(0.5)
            s = socket.create_connection(("127.0.0.1", self.port),
                                         timeout=10)
            s.sendall(b"CONNECT allowed.test:8080 HTTP/1.1\r\n\r\n")
            s.settimeout(1.5)
            with self.assertRaises(socket.timeout):
                s.recv(100)
            held.pop().close()
            s.settimeout(10)
            self.assertTrue(s.recv(100).startswith(b"HTTP/1.1 200"))
            s.close()
        finally:
            for h in held:
                h.close()

    def test_hostile_heads(self):
        out = raw(self.port, b"GET http://allowed.test/ HTTP/1.1\r\n" +
                  b"X-A: " + b"a" * 20000 + b"\r\n\r\n")
        self.assertTrue(out.startswith(b"HTTP/1.1 431"), out[:100])
        out = raw(self.port, b"\x00\x01garbage\r\n\r\n")
        self.assertTrue(out.startswith(b"HTTP/1.1 400"), out[:100])
        t = time.time()
        out = raw(self.port, b"GET http://allowed.test/ HT", timeout=30)
        self.assertTrue(out.startswith(b"HTTP/1.1 408"), out[:100])
        self.assertLess(time.time() - t, 25)
        audits = self.px.audits(3)
        self.assertEqual([a["allowed"] for a in audits], [0, 0, 0])

    def test_client_closes_mid_tunnel(self):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        s.sendall(b"CONNECT allowed.test:8080 HTTP/1.1\r\n\r\nGET /x HT")
        self.assertTrue(s.recv(100).startswith(b"HTTP/1.1 200"))
        s.close()
        a = self.px.audits(1)[0]
        self.assertEqual((a["allowed"], a["sent"]), (1, 9))
        self.assertEqual(curl(self.port, "http://allowed.test:8080/")[0],
                         200)

    def test_big_download(self):
        code, body = curl(self.port,
                          "http://allowed.test:8080/big/%d" % (4 << 20))
        self.assertEqual((code, len(body)), (200, 4 << 20))
        a = self.px.audits(1)[0]
        self.assertGreater(a["received"], 4 << 20)


class LogCase(unittest.TestCase):
    def test_bounded_log(self):
        px = Egress(log_size=4)
        port = px.listen(SB_A)
        px.policy(SB_A, POLICY_A)
        for i in range(3):
            curl(port, "http://allowed.test:8080/%d" % i)
        for i in range(3):
            curl(port, "http://other.test:8080/%d" % i)
        px.audits(6)
        log = px.get_log(SB_A)
        self.assertEqual(log["dropped"], 2)
        e = log["entries"]
        self.assertEqual([x["host"] for x in e], ["allowed.test"] +
                         ["other.test"] * 3)
        self.assertEqual([x["allowed"] for x in e], [True] + [False] * 3)
        self.assertEqual(e[0]["port"], 8080)
        self.assertEqual(e[0]["address"], NS_IP)
        self.assertGreater(e[0]["bytes_received"], 0)
        self.assertTrue(e[1]["reason"])
        self.assertEqual(px.stop(), 0)


class LiesCase(unittest.TestCase):
    def lie(self, mtype, payload, why, fd=None):
        px = Egress()
        px.send(mtype, 1, payload, fd)
        try:
            rc = px.proc.wait(20)
        finally:
            text = px.log_text()
            px.stop()
        self.assertEqual(rc, 1, text)
        self.assertIn(why, text)

    def test_lies(self):
        self.lie(MSG_EGRESS_POLICY, p_str(SB_A) + p_u8(7) + p_u32(0),
                 "bad policy")
        self.lie(MSG_EGRESS_POLICY, p_str(SB_A) + policy(PUBLIC_MODE) +
                 b"x", "malformed payload")
        self.lie(MSG_EGRESS_POLICY, p_str("sb_nothex") + policy(NONE),
                 "not a sandbox id")
        self.lie(MSG_EGRESS_FORGET, p_str("../etc"), "not a sandbox id")
        # A policy in the right shape that parse could not have made.
        self.lie(MSG_EGRESS_POLICY, p_str(SB_A) +
                 policy(ALLOWLIST, rule_name("Upper.Case")), "bad policy")
        self.lie(MSG_EGRESS_POLICY, p_str(SB_A) +
                 policy(PUBLIC_MODE, rule_name("a.test")), "bad policy")
        unbound = socket.socket()
        connected, peer = socket.socketpair()
        try:
            self.lie(MSG_EGRESS_LISTEN, p_str(SB_A), "not a listening socket",
                     unbound.fileno())
            self.lie(MSG_EGRESS_LISTEN, p_str(SB_A), "not a listening socket",
                     connected.fileno())
            self.lie(MSG_EGRESS_POLICY, p_str(SB_A) + policy(NONE),
                     "unexpected descriptor", peer.fileno())
            unix = socket.socket(socket.AF_UNIX)
            unix.bind("\0as-egp-%d" % os.getpid())
            unix.listen(1)
            try:
                self.lie(MSG_EGRESS_LISTEN, p_str(SB_A),
                         "not an inet socket", unix.fileno())
            finally:
                unix.close()
        finally:
            for s_ in (unbound, connected, peer):
                s_.close()
        self.lie(MSG_EGRESS_LOG, p_str(SB_A) + b"\0", "malformed payload")
        self.lie(999, b"", "not an operation of egress-proxy")
        self.lie(MSG_EGRESS_LISTEN, p_str(SB_A), "no listener")

    def test_resolv_conf(self):
        """dns "": the host's /etc/resolv.conf, read before the jail (no
        query is made here, so nothing outside is contacted)."""
        try:
            with open("/etc/resolv.conf") as f:
                listed = any(line.split()[:1] == ["nameserver"]
                             for line in f)
        except OSError:
            listed = False
        px = Egress(ready=listed, dns="")
        if not listed:
            rc = px.proc.wait(20)
            text = px.log_text()
            px.stop()
            self.assertEqual(rc, 1)
            self.assertIn("AGENT_SANDBOX_EGRESS_DNS", text)
            return
        self.assertEqual(px.stop(), 0)

    def test_bad_settings(self):
        px = Egress(ready=False, dns="not an address")
        rc = px.proc.wait(20)
        text = px.log_text()
        px.stop()
        self.assertEqual(rc, 1)
        self.assertIn("bad nameserver", text)


if __name__ == "__main__":
    unittest.main()
