"""The netns-helper against a stand-in managerd (common/msg.h
NETNS_LISTEN): the real binary on a socketpair, as root, under its
kill-mode filter, with hardened containers of the test's own.  A good
request gives a socket listening on 127.0.0.1 inside the container's
network namespace, which the container's own nc reaches while its own
listen on that port fails; a second request for the port, another
container's id, a host process's pid, a pid that does not exist and a
pid from before a restart are refused with an error, and the helper
serves on; malformed requests are fatal.  Run as root; skips (77)
otherwise."""

import os
import secrets
import socket
import struct
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from test_proxy_ops import IMSG_FD_MARK, p_str, p_u32  # noqa: E402

MSG_NETNS_CONFIG = 107
MSG_READY = 110
MSG_NETNS_LISTEN = 800
MSG_NETNS_SOCKET = 850
MSG_ERROR = 900
ERR_FORBIDDEN = 3
ERR_NOT_FOUND = 4
ERR_CONFLICT = 5
PORT = 3128
PREFIX = "as-netns-test-%s-" % secrets.token_hex(4)


class Helper:
    """The helper on fd 3 of a socketpair; requests answered in order."""

    def __init__(self, ready=True):
        self.tmp = tempfile.mkdtemp(prefix="as-netns-")
        self.jail = os.path.join(self.tmp, "jail")
        os.mkdir(self.jail, 0o755)
        self.log_path = os.path.join(self.tmp, "helper.log")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock = ours
        fd = theirs.fileno()
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [os.path.join(harness.BUILDDIR, "netns-helper", "netns-helper")],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
            preexec_fn=lambda: os.dup2(fd, 3), close_fds=False)
        theirs.close()
        self.buf = b""
        self.fds = []
        self.next_id = 1
        seccomp = os.environ.get("AGENT_SANDBOX_TEST_SECCOMP", "kill")
        self.send(MSG_NETNS_CONFIG, 0, p_str("debug") + p_str(seccomp) +
                  p_str("nobody") + p_str(self.jail))
        if ready:
            mtype, _, _, _ = self.recv()
            assert mtype == MSG_READY, mtype

    def send(self, mtype, peerid, payload=b"", fd=None):
        length = len(payload) | (IMSG_FD_MARK if fd is not None else 0)
        data = struct.pack("<IIII", mtype, length, peerid, os.getpid()) + \
            payload
        if fd is None:
            self.sock.sendall(data)
        else:
            socket.send_fds(self.sock, [data], [fd])

    def recv(self, timeout=10):
        """(type, peerid, payload, fd or None) of the next message."""
        self.sock.settimeout(timeout)
        while len(self.buf) < 16 or len(self.buf) < 16 + (
                struct.unpack("<I", self.buf[4:8])[0] & ~IMSG_FD_MARK):
            data, fds, _, _ = socket.recv_fds(self.sock, 65536, 4)
            if not data:
                raise EOFError(self.log_text())
            self.buf += data
            self.fds += fds
        mtype, length, peerid, _ = struct.unpack("<IIII", self.buf[:16])
        fd = self.fds.pop(0) if length & IMSG_FD_MARK else None
        length &= ~IMSG_FD_MARK
        payload = self.buf[16:16 + length]
        self.buf = self.buf[16 + length:]
        return mtype, peerid, payload, fd

    def listen(self, pid, container, port=PORT, extra=b""):
        peerid = self.next_id
        self.next_id += 1
        self.send(MSG_NETNS_LISTEN, peerid, p_u32(pid) + p_str(container) +
                  p_u32(port) + extra)
        mtype, got, payload, fd = self.recv()
        assert got == peerid, (got, peerid)
        return mtype, payload, fd

    def log_text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def stop(self):
        self.sock.close()
        try:
            return self.proc.wait(20)
        finally:
            self.log.close()


def error_of(payload):
    kind = struct.unpack("<I", payload[:4])[0]
    n = struct.unpack("<I", payload[4:8])[0]
    return kind, payload[8:8 + n].decode()


def docker(*args, check=True):
    return subprocess.run(["docker"] + list(args), check=check,
                          capture_output=True, text=True)


def hardened(name):
    """A container as dockerd-proxy makes a sandbox's: (pid, id)."""
    docker("run", "-d", "--name", name, "--network", "none", "--user",
           "1000:1000", "--cap-drop", "ALL", "--read-only",
           "--security-opt", "no-new-privileges:true", harness.TEST_IMAGE,
           "sleep", "3600")
    return inspect(name)


def inspect(name):
    out = docker("inspect", "-f", "{{.State.Pid}} {{.Id}}", name).stdout
    pid, cid = out.split()
    return int(pid), cid


class NetnsHelper(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.name = PREFIX + "a"
        cls.other = PREFIX + "b"
        cls.pid, cls.cid = hardened(cls.name)
        cls.opid, cls.ocid = hardened(cls.other)
        cls.helper = Helper()

    @classmethod
    def tearDownClass(cls):
        docker("rm", "-f", cls.name, cls.other, check=False)
        status = cls.helper.stop()
        if status != 0:
            raise AssertionError("the helper exited %s:\n%s" %
                                 (status, cls.helper.log_text()))

    def test_a_listener_in_the_sandbox(self):
        mtype, payload, fd = self.helper.listen(self.pid, self.cid)
        self.assertEqual((mtype, payload), (MSG_NETNS_SOCKET, b""),
                         self.helper.log_text())
        self.assertIsNotNone(fd)
        lsock = socket.socket(fileno=fd)
        self.addCleanup(lsock.close)
        self.assertEqual(lsock.getsockname(), ("127.0.0.1", PORT))
        # The container's process reaches it; the host side answers.
        nc = subprocess.Popen(["docker", "exec", "-i", self.name, "nc",
                               "127.0.0.1", str(PORT)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        lsock.settimeout(10)
        conn, _ = lsock.accept()
        nc.stdin.write(b"from the sandbox\n")
        nc.stdin.flush()
        self.assertEqual(conn.recv(100), b"from the sandbox\n")
        conn.sendall(b"from the host\n")
        conn.close()
        out, _ = nc.communicate(timeout=10)
        self.assertEqual(out, b"from the host\n")
        # Being there first is what keeps the port ours.
        r = docker("exec", self.name, "timeout", "2", "nc", "-l", "-p",
                   str(PORT), check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("in use", r.stderr.lower())
        # A second one for the same port is refused; the helper serves on.
        mtype, payload, fd = self.helper.listen(self.pid, self.cid)
        self.assertEqual(mtype, MSG_ERROR)
        self.assertIsNone(fd)
        self.assertEqual(error_of(payload)[0], ERR_CONFLICT)
        self.assertIn("already in use", error_of(payload)[1])

    def test_another_containers_id(self):
        mtype, payload, fd = self.helper.listen(self.pid, self.ocid)
        self.assertEqual(mtype, MSG_ERROR)
        self.assertEqual(error_of(payload),
                         (ERR_NOT_FOUND, "pid %d is not the process of "
                          "container %s" % (self.pid, self.ocid[:12])))

    def test_a_host_process(self):
        sleeper = subprocess.Popen(["sleep", "60"])
        self.addCleanup(sleeper.wait)
        self.addCleanup(sleeper.kill)
        mtype, payload, fd = self.helper.listen(sleeper.pid, self.cid)
        self.assertEqual(mtype, MSG_ERROR)
        self.assertEqual(error_of(payload)[0], ERR_NOT_FOUND)
        # Nothing listens on the host's loopback for it.
        with self.assertRaises(OSError):
            socket.create_connection(("127.0.0.1", PORT), 1).close()

    def test_a_pid_that_is_gone(self):
        p = subprocess.Popen(["true"])
        p.wait()
        mtype, payload, fd = self.helper.listen(p.pid, self.cid)
        self.assertEqual(mtype, MSG_ERROR)
        self.assertEqual(error_of(payload),
                         (ERR_NOT_FOUND, "pid %d is gone" % p.pid))

    def test_a_container_on_the_hosts_network(self):
        name = PREFIX + "host"
        self.addCleanup(docker, "rm", "-f", name, check=False)
        docker("run", "-d", "--name", name, "--network", "host", "--user",
               "1000:1000", "--cap-drop", "ALL", harness.TEST_IMAGE,
               "sleep", "3600")
        pid, cid = inspect(name)
        mtype, payload, fd = self.helper.listen(pid, cid)
        self.assertEqual(mtype, MSG_ERROR)
        self.assertEqual(error_of(payload),
                         (ERR_FORBIDDEN, "container %s shares the host's "
                          "network namespace" % cid[:12]))
        with self.assertRaises(OSError):
            socket.create_connection(("127.0.0.1", PORT), 1).close()

    def test_z_after_a_restart(self):
        docker("restart", "-t", "1", self.other)
        mtype, payload, fd = self.helper.listen(self.opid, self.ocid)
        self.assertEqual(mtype, MSG_ERROR, "the old pid still works")
        pid, cid = inspect(self.other)
        self.assertEqual(cid, self.ocid)
        mtype, payload, fd = self.helper.listen(pid, cid)
        self.assertEqual(mtype, MSG_NETNS_SOCKET, error_of(payload)
                         if mtype == MSG_ERROR else payload)
        os.close(fd)


class Lies(unittest.TestCase):
    """Each one ends a fresh helper with its reason in the log."""

    def lie(self, send, words):
        h = Helper()
        try:
            send(h)
            with self.assertRaises((EOFError, ConnectionError)):
                h.recv(timeout=10)
        finally:
            status = h.stop()
        self.assertNotEqual(status, 0)
        self.assertIn(words, h.log_text())

    def test_lies(self):
        cid = secrets.token_hex(32)
        good = p_u32(os.getpid()) + p_str(cid) + p_u32(PORT)
        cases = [
            (lambda h: h.send(MSG_NETNS_LISTEN, 1, good + b"\0"),
             "malformed request"),
            (lambda h: h.send(MSG_NETNS_LISTEN, 1, good[:-1]),
             "malformed request"),
            (lambda h: h.send(MSG_NETNS_LISTEN, 1, good, fd=0),
             "unexpected descriptor"),
            (lambda h: h.send(555, 1, b""), "not a request managerd"),
            (lambda h: h.send(MSG_NETNS_LISTEN, 1, p_u32(1) + p_str(cid) +
                              p_u32(0)), "out of range"),
            (lambda h: h.send(MSG_NETNS_LISTEN, 1, p_u32(1) + p_str(cid) +
                              p_u32(70000)), "out of range"),
            (lambda h: h.send(MSG_NETNS_LISTEN, 1, p_u32(1) + p_str(cid) +
                              p_u32(PORT + 1)), "out of range"),
            (lambda h: h.send(MSG_NETNS_LISTEN, 1, p_u32(0) + p_str(cid) +
                              p_u32(PORT)), "out of range"),
            (lambda h: h.send(MSG_NETNS_LISTEN, 1, p_u32(1) +
                              p_str(cid.upper()) + p_u32(PORT)),
             "out of range"),
            (lambda h: h.send(MSG_NETNS_LISTEN, 1, p_u32(1) +
                              p_str(cid[:12]) + p_u32(PORT)),
             "out of range"),
        ]
        for send, words in cases:
            with self.subTest(words=words):
                self.lie(send, words)


def setUpModule():
    harness.require_root_and_docker()


if __name__ == "__main__":
    unittest.main()
