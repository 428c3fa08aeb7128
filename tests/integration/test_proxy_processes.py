"""dockerd-proxy's processes against a real dockerd, with this test playing
managerd (test_proxy_ops.py's fixture: the real proxy on a socketpair,
jailed, seccomp kill): DOCKER_PROCESS_START with a socketpair end, the
frames read from it, stdin and its end, with and without a tty; resizes,
signals to the group, the kill of the tree, inspects; a reader that goes
away (the process runs on); streams cut on the proxy's side (through a
tap in front of Docker's socket); at most 256 processes at once; PID lines
forged by the sandbox; and the lies of a managerd that names execs of
other containers or sends malformed messages.  Run as root; skips
(77) otherwise."""

import os
import resource
import select
import shutil
import socket
import struct
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import test_proxy_ops as ops  # noqa: E402
from test_proxy_ops import (MSG_DOCKER_DONE, MSG_DOCKER_EXEC_EXIT,  # noqa
                            MSG_ERROR, Proxy, Reader, decode_error,
                            describe, docker, new_id, p_env, p_i64, p_str,
                            p_u8, p_u32)

# common/msg.h, common/process_msg.h
MSG_DOCKER_PROCESS_START = 410
MSG_DOCKER_PROCESS_SIGNAL = 411
MSG_DOCKER_PROCESS_RESIZE = 412
MSG_DOCKER_PROCESS_INSPECT = 413
MSG_DOCKER_PROCESS_STARTED = 508
MSG_DOCKER_PROCESS_STATE = 509
ERR_CONFLICT = 5
ERR_LIMIT_EXCEEDED = 7
# dockerd-proxy/proxy.h, docker_http.h
PROXY_PROCESSES_MAX = 256
DOCKER_HTTP_MAX_LIVE = 512
SIGHUP, SIGINT, SIGKILL, SIGTERM = 1, 2, 9, 15
DEBIAN = "agent-sandbox/debian-python:bookworm"

PROXY = None


def setUpModule():
    global PROXY
    PROXY = Proxy()


def tearDownModule():
    try:
        ops.stop_module_proxy(PROXY)
    finally:
        ops.cleanup_docker()


def process_payload(sid, argv, env=None, workdir="/workspace", tty=False,
                    stdin=False, cols=0, rows=0):
    out = p_str(sid) + p_u32(len(argv))
    for a in argv:
        out += p_str(a)
    return (out + p_env(env or {}) + p_str(workdir) + p_u8(int(tty)) +
            p_u8(int(stdin)) + p_u32(cols) + p_u32(rows))


def signal_payload(sid, pid, signo, tree=False):
    return p_str(sid) + p_i64(pid) + p_u32(signo) + p_u8(int(tree))


def exec_payload(sid, eid, cols=0, rows=0):
    return p_str(sid) + p_str(eid) + p_u32(cols) + p_u32(rows)


class Process:
    """One DOCKER_PROCESS_START: the socket's frames read as they come."""

    def __init__(self, proxy, sid, argv, **kw):
        self.proxy = proxy
        self.sid = sid
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock = ours
        self.peerid = proxy.request(MSG_DOCKER_PROCESS_START,
                                    process_payload(sid, argv, **kw),
                                    fd=theirs.fileno())
        theirs.close()
        self.data = b""
        self.eof = False
        self.cond = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.error = self.eid = self.pid = None
        mtype, payload = proxy.next(self.peerid, timeout=60)
        if mtype == MSG_ERROR:
            self.error = decode_error(payload)
            self.reader.join(10)
            self.sock.close()
            return
        assert mtype == MSG_DOCKER_PROCESS_STARTED, describe(mtype, payload)
        r = Reader(payload)
        self.eid, self.pid = r.str(), r.i64()
        r.end()

    def _read(self):
        while True:
            try:
                chunk = self.sock.recv(65536)
            except OSError:
                chunk = b""
            with self.cond:
                if not chunk:
                    self.eof = True
                    self.cond.notify_all()
                    return
                self.data += chunk
                self.cond.notify_all()

    def frames(self):
        with self.cond:
            data = self.data
        # Only whole frames: the reader may be inside one.
        off = 0
        while len(data) - off >= 8:
            length = struct.unpack(">I", data[off + 4:off + 8])[0]
            if len(data) - off - 8 < length:
                break
            off += 8 + length
        return ops.parse_frames(data[:off])

    def output(self, stream=None):
        return b"".join(d for s, d in self.frames()
                        if stream is None or s == stream)

    def wait_output(self, needle, timeout=20):
        deadline = time.time() + timeout
        while needle not in self.output():
            with self.cond:
                if self.eof or time.time() > deadline:
                    break
                self.cond.wait(0.1)
        out = self.output()
        if needle not in out:
            raise AssertionError("%r not in %r" % (needle, out))
        return out

    def send(self, data):
        self.sock.sendall(data)

    def close_stdin(self):
        self.sock.shutdown(socket.SHUT_WR)

    def wait_exit(self, timeout=30):
        """(exit code, timed_out); the socket is at its end before."""
        payload = self.proxy.wait(self.peerid, MSG_DOCKER_EXEC_EXIT,
                                  timeout=timeout)
        self.reader.join(10)
        assert self.eof, "the socket was left open after the exit"
        r = Reader(payload)
        result = (r.i64(), r.u8())
        r.end()
        self.sock.close()
        return result

    def kill(self):
        return self.proxy.next(self.proxy.request(
            MSG_DOCKER_PROCESS_SIGNAL, signal_payload(
                self.sid, self.pid, SIGKILL, tree=True)))


def inspect(proxy, sid, eid):
    """(exists, running, has_exit_code, exit_code), or the error."""
    mtype, payload = proxy.next(proxy.request(MSG_DOCKER_PROCESS_INSPECT,
                                              exec_payload(sid, eid)))
    if mtype == MSG_ERROR:
        return decode_error(payload)
    assert mtype == MSG_DOCKER_PROCESS_STATE, describe(mtype, payload)
    r = Reader(payload)
    state = (r.u8(), r.u8(), r.u8(), r.i64())
    r.end()
    return state


def resize(proxy, sid, eid, cols, rows):
    mtype, payload = proxy.next(proxy.request(
        MSG_DOCKER_PROCESS_RESIZE, exec_payload(sid, eid, cols, rows)))
    return (mtype, decode_error(payload) if mtype == MSG_ERROR else None)


def signal(proxy, sid, pid, signo, tree=False):
    mtype, payload = proxy.next(proxy.request(
        MSG_DOCKER_PROCESS_SIGNAL, signal_payload(sid, pid, signo, tree)))
    return (mtype, decode_error(payload) if mtype == MSG_ERROR else None)


def tcp_pair():
    """Two connected TCP sockets on the loopback, as descriptors."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as lsock:
        lsock.bind(("127.0.0.1", 0))
        lsock.listen(1)
        a = socket.create_connection(lsock.getsockname())
        b, _ = lsock.accept()
    return a.detach(), b.detach()


class Sandbox(ops.OneSandbox):
    """A sandbox per class; image: the class's IMAGE."""

    IMAGE = ops.IMAGE

    @classmethod
    def create_options(cls):
        return {"image": cls.IMAGE}

    def start(self, argv, **kw):
        p = Process(PROXY, self.sid, argv, **kw)
        self.assertIsNone(p.error)
        self.assertRegex(p.eid, r"^[0-9a-f]{64}$")
        self.assertGreater(p.pid, 1)
        return p

    def sh(self, script, **kw):
        return self.start(["/bin/sh", "-c", script], **kw)

    def processes(self):
        _, out, _ = PROXY.sh(self.sid, "for f in /proc/[0-9]*/cmdline; "
                             "do tr '\\0' ' ' < $f; echo; done")
        return out

    def assertGone(self, what):
        deadline = time.time() + 10
        while what in self.processes() and time.time() < deadline:
            time.sleep(0.2)
        self.assertNotIn(what, self.processes())


class Output(Sandbox):

    def test_frames_and_exit(self):
        p = self.sh("echo out; echo err >&2; exit 7")
        self.assertEqual(p.wait_exit(), (7, 0))
        self.assertEqual(p.output(1), b"out\n")
        self.assertEqual(p.output(2), b"err\n")
        # The PID line is not output, and no frame exceeds 32 KiB.
        self.assertTrue(all(len(d) <= 32768 for _, d in p.frames()))

    def test_big_output(self):
        n = 8 * 1024 * 1024
        p = self.sh("head -c %d /dev/zero; echo; echo end" % n)
        self.assertEqual(p.wait_exit(timeout=120), (0, 0))
        self.assertEqual(len(p.output(1)), n + 5)

    def test_no_stdin(self):
        # stdin false: the command reads end of file at once.
        p = self.sh("cat; echo read-eof")
        self.assertEqual(p.wait_exit(), (0, 0))
        self.assertEqual(p.output(1), b"read-eof\n")

    def test_workdir_and_env(self):
        p = self.sh("pwd; echo $A", env={"A": "b c"}, workdir="/tmp")
        self.assertEqual(p.wait_exit(), (0, 0))
        self.assertEqual(p.output(1), b"/tmp\nb c\n")


class Stdin(Sandbox):

    def test_stdin_then_eof(self):
        p = self.start(["cat"], stdin=True)
        p.send(b"hello\n")
        p.wait_output(b"hello\n")
        p.send(b"world")
        p.close_stdin()
        self.assertEqual(p.wait_exit(), (0, 0))
        self.assertEqual(p.output(1), b"hello\nworld")

    def test_big_stdin(self):
        # More than the proxy queues: the socket is left unread a while.
        n = 4 * 1024 * 1024
        p = self.sh("sleep 1; wc -c", stdin=True)
        block = bytes(range(256)) * 256
        for _ in range(n // len(block)):
            p.send(block)
        p.close_stdin()
        self.assertEqual(p.wait_exit(timeout=60), (0, 0))
        self.assertEqual(p.output(1).strip(), str(n).encode())

    def test_eof_before_any_byte(self):
        p = self.sh("cat; echo done", stdin=True)
        p.close_stdin()
        self.assertEqual(p.wait_exit(), (0, 0))
        self.assertEqual(p.output(1), b"done\n")


class Tty(Sandbox):

    def test_tty_stream(self):
        p = self.sh("test -t 0 && test -t 1 && echo isatty; echo e >&2; "
                    "read x; echo got:$x", tty=True, stdin=True, cols=80,
                    rows=24)
        p.wait_output(b"isatty")
        p.send(b"abc\n")
        self.assertEqual(p.wait_exit(), (0, 0))
        out = p.output()
        # One stream: stderr and stdout both come as stdout, raw.
        self.assertEqual(p.output(2), b"")
        self.assertIn(b"isatty\r\n", out)
        self.assertIn(b"e\r\n", out)
        self.assertIn(b"abc\r\n", out)          # the echo
        self.assertIn(b"got:abc\r\n", out)
        self.assertFalse(out.startswith(b"%d" % p.pid))

    def test_size_at_start(self):
        # Docker has no size at create time: a resize once it runs, which
        # the wrapper waits for.  A command that looks at once sees it,
        # every time, with or without stdin.
        for i in range(5):
            p = self.start(["stty", "size"], tty=True, stdin=i % 2 == 0,
                           cols=123, rows=45)
            self.assertEqual(p.wait_exit(), (0, 0))
            self.assertEqual(p.output(), b"45 123\r\n")
        # No size: Docker's, and the command does not wait for one.
        p = self.start(["stty", "size"], tty=True)
        self.assertEqual(p.wait_exit()[1], 0)

    def test_resize(self):
        p = self.sh("read x; stty size; read y; stty size", tty=True,
                    stdin=True, cols=80, rows=24)
        p.send(b"\n")
        p.wait_output(b"24 80\r\n")
        self.assertEqual(resize(PROXY, self.sid, p.eid, 132, 50),
                         (MSG_DOCKER_DONE, None))
        p.send(b"\n")
        p.wait_output(b"50 132\r\n")
        self.assertEqual(p.wait_exit(), (0, 0))
        # Ended: there is nothing to resize any more.
        mtype, error = resize(PROXY, self.sid, p.eid, 10, 10)
        self.assertEqual((mtype, error[0]), (MSG_ERROR, ERR_CONFLICT))

    def test_tty_eof(self):
        # Docker would close a tty's output with its stdin: the end of
        # the stdin is the terminal's end-of-file character instead.
        p = self.start(["cat"], tty=True, stdin=True)
        p.send(b"line\n")
        p.wait_output(b"line\r\nline\r\n")
        p.close_stdin()
        self.assertEqual(p.wait_exit(), (0, 0))

    def test_tty_without_stdin(self):
        # Its stdin is empty, as without a tty: the first read is the end.
        p = self.sh("test -t 0 && cat; echo rc=$?", tty=True, cols=80,
                    rows=24)
        self.assertEqual(p.wait_exit(), (0, 0))
        self.assertEqual(p.output(), b"rc=0\r\n")

    def test_tty_eof_after_partial_line(self):
        p = self.sh("cat; echo rc=$?", tty=True, stdin=True)
        p.send(b"partial")
        p.close_stdin()
        self.assertEqual(p.wait_exit(), (0, 0))
        self.assertIn(b"rc=0", p.output())

    def test_resize_without_tty(self):
        p = self.sh("sleep 30")
        mtype, error = resize(PROXY, self.sid, p.eid, 100, 30)
        self.assertEqual((mtype, error[0]), (MSG_ERROR, ERR_CONFLICT))
        self.assertEqual(p.kill(), (MSG_DOCKER_DONE, b""))
        p.wait_exit()


class Debian(Tty):
    """The same under dash and coreutils."""

    IMAGE = DEBIAN


class Signals(Sandbox):

    def test_term_to_the_group(self):
        p = self.sh("sleep 310 & sleep 311; echo never")
        self.assertIn("sleep 310", self.processes())
        self.assertEqual(signal(PROXY, self.sid, p.pid, SIGTERM),
                         (MSG_DOCKER_DONE, None))
        code, _ = p.wait_exit()
        self.assertEqual(code, 128 + SIGTERM)
        self.assertNotIn(b"never", p.output())
        self.assertGone("sleep 310")

    def test_each_signal_by_its_name(self):
        for signo, name in ((SIGINT, "INT"), (SIGHUP, "HUP"),
                            (SIGTERM, "TERM")):
            p = self.sh("trap 'echo got %s; exit 3' %s; echo ready; "
                        "while :; do sleep 0.1; done" % (name, name))
            p.wait_output(b"ready")
            self.assertEqual(signal(PROXY, self.sid, p.pid, signo),
                             (MSG_DOCKER_DONE, None))
            self.assertEqual(p.wait_exit(), (3, 0), name)
            self.assertIn(b"got " + name.encode(), p.output())

    def test_kill_the_tree(self):
        # A descendant in a session of its own leaves the group: the tree
        # kill finds it through its parent.
        p = self.sh("setsid sleep 312 & sleep 313 & echo up; wait")
        p.wait_output(b"up")
        self.assertEqual(p.kill(), (MSG_DOCKER_DONE, b""))
        code, _ = p.wait_exit()
        self.assertEqual(code, 128 + SIGKILL)
        self.assertGone("sleep 312")
        self.assertGone("sleep 313")

    def test_signal_to_an_ended_group(self):
        p = self.sh("true")
        p.wait_exit()
        # The exec ran; that the group was gone is the log's business.
        self.assertEqual(signal(PROXY, self.sid, p.pid, SIGTERM),
                         (MSG_DOCKER_DONE, None))

    def test_pid_that_leads_no_session(self):
        # A PID that is not a wrapper's (a forged PID line, or a lying
        # managerd): a live process that leads no session is refused,
        # and neither it nor its descendants are touched.
        p = self.sh("sleep 322 & echo bg=$!; wait")
        bg = int(p.wait_output(b"\n").split(b"bg=")[1].split()[0])
        for tree in (False, True):
            mtype, error = signal(PROXY, self.sid, bg, SIGKILL, tree)
            self.assertEqual((mtype, error), (MSG_ERROR, (
                ERR_CONFLICT, "sandbox %s: process %d does not lead a "
                "session: not signalled" % (self.sid, bg))), tree)
        self.assertIn("sleep 322", self.processes())
        self.assertEqual(p.kill(), (MSG_DOCKER_DONE, b""))
        self.assertEqual(p.wait_exit()[0], 128 + SIGKILL)
        self.assertGone("sleep 322")

    def test_signal_in_a_missing_sandbox(self):
        mtype, error = signal(PROXY, new_id(), 1234, SIGTERM)
        self.assertEqual((mtype, error[0]), (MSG_ERROR, ops.ERR_NOT_FOUND))


FORGER = """sleep 319 & v=$!
echo ready
until { echo "$v" > /dev/pts/0; } 2>/dev/null; do :; done
echo forged=$v
wait"""


class TapLink:
    """One connection through the tap: the proxy's end and Docker's."""

    def __init__(self, ours, docker):
        self.ours = ours
        self.docker = docker
        self.head = b""         # what the proxy sent first
        self.frozen = False     # the proxy's bytes are left unread
        self.cut = False        # close both at once
        self.done = threading.Event()


class DockerTap:
    """A socket in front of Docker's for a Proxy of its own: each
    connection is forwarded both ways, unless told otherwise.  A cut
    closes both ends with the proxy's last bytes unread, which the proxy
    reads as an error (ECONNRESET), not as the end of the stream."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="as-tap-")
        self.path = os.path.join(self.dir, "docker.sock")
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        self.listener.listen(64)
        self.lock = threading.Lock()
        self.links = []
        self.cut_at_head = False    # the next exec start: cut after 101
        threading.Thread(target=self._accept, daemon=True).start()

    def proxy(self):
        saved = harness.DOCKER_SOCKET
        harness.DOCKER_SOCKET = self.path
        try:
            return Proxy()
        finally:
            harness.DOCKER_SOCKET = saved

    def close(self):
        self.listener.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def _accept(self):
        while True:
            try:
                ours, _ = self.listener.accept()
            except OSError:
                return
            docker = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            docker.connect(harness.DOCKER_SOCKET)
            link = TapLink(ours, docker)
            with self.lock:
                self.links.append(link)
            threading.Thread(target=self._pump, args=(link,),
                             daemon=True).start()

    def link(self, eid):
        """The stream of exec eid."""
        want = b"/exec/%s/start" % eid.encode()
        with self.lock:
            for link in self.links:
                if want in link.head:
                    return link
        raise AssertionError("no stream of exec %s" % eid)

    def _pump(self, link):
        try:
            select.select([link.ours], [], [], 10)
            first = link.ours.recv(65536, socket.MSG_PEEK)
            link.head = first
            with self.lock:
                at_head = self.cut_at_head and b"/start " in first
                if at_head:
                    self.cut_at_head = False
            if at_head:
                self._cut_at_head(link)
            else:
                self._forward(link)
        except OSError:
            pass
        finally:
            link.ours.close()
            link.docker.close()
            link.done.set()

    def _forward(self, link):
        ends = {link.ours: link.docker, link.docker: link.ours}
        while ends and not link.cut:
            watch = [s for s in ends if not (link.frozen and
                                             s is link.ours)]
            readable, _, _ = select.select(watch, [], [], 0.05)
            for s in readable:
                if link.frozen and s is link.ours:
                    continue
                data = s.recv(65536)
                if data:
                    ends[s].sendall(data)
                    continue
                ends[s].shutdown(socket.SHUT_WR)
                del ends[s]

    def _cut_at_head(self, link):
        """The request goes to Docker, left unread here; Docker's answer
        head comes back, then both ends are closed."""
        sent, answer = 0, b""
        while b"\r\n\r\n" not in answer:
            data = link.ours.recv(65536, socket.MSG_PEEK)
            if len(data) > sent:
                link.docker.sendall(data[sent:])
                sent = len(data)
            readable, _, _ = select.select([link.docker], [], [], 0.02)
            if readable:
                chunk = link.docker.recv(65536)
                if not chunk:
                    break
                answer += chunk
        link.ours.sendall(answer[:answer.find(b"\r\n\r\n") + 4])


class CutStreams(unittest.TestCase):
    """A process's stream from Docker that breaks on the proxy's side:
    before the PID line the command never runs; after it, the process is
    lost (MSG_ERROR), never an exit Docker did not see."""

    @classmethod
    def setUpClass(cls):
        cls.tap = DockerTap()
        cls.proxy = cls.tap.proxy()
        cls.sid = new_id()
        mtype, payload = cls.proxy.create(cls.sid)
        assert mtype == MSG_DOCKER_DONE, describe(mtype, payload)

    @classmethod
    def tearDownClass(cls):
        cls.proxy.destroy(cls.sid)
        cls.proxy.stop()
        cls.tap.close()

    def processes(self):
        _, out, _ = self.proxy.sh(self.sid, "for f in /proc/[0-9]*/cmdline;"
                                  " do tr '\\0' ' ' < $f; echo; done")
        return out

    def test_cut_after_the_pid(self):
        p = Process(self.proxy, self.sid, ["sleep", "326"], stdin=True)
        self.assertIsNone(p.error)
        # Let go by the proxy: the wrapper became the command.
        deadline = time.time() + 10
        while "sleep 326" not in self.processes() and \
                time.time() < deadline:
            time.sleep(0.1)
        link = self.tap.link(p.eid)
        link.frozen = True
        p.send(b"unread\n")
        time.sleep(0.5)
        link.cut = True
        self.assertTrue(link.done.wait(10))
        mtype, payload = self.proxy.next(p.peerid, timeout=30)
        self.assertEqual(mtype, MSG_ERROR, describe(mtype, payload))
        self.assertEqual(decode_error(payload), (
            ops.ERR_BACKEND, "sandbox %s: the process's stream from Docker "
            "broke while it runs" % self.sid))
        p.reader.join(10)
        self.assertTrue(p.eof)
        p.sock.close()
        # It runs on, as Docker says, and its PID still reaches it.
        self.assertEqual(inspect(self.proxy, self.sid, p.eid), (1, 1, 0, 0))
        self.assertIn("sleep 326", self.processes())
        self.assertEqual(signal(self.proxy, self.sid, p.pid, SIGKILL, True),
                         (MSG_DOCKER_DONE, None))
        deadline = time.time() + 10
        while "sleep 326" in self.processes() and time.time() < deadline:
            time.sleep(0.2)
        self.assertNotIn("sleep 326", self.processes())

    def test_cut_before_the_pid(self):
        for stdin in (False, True):
            self.tap.cut_at_head = True
            p = Process(self.proxy, self.sid, ["/bin/sh", "-c",
                                               "touch /tmp/ran; sleep 327"],
                        stdin=stdin)
            self.assertEqual(p.error[0], ops.ERR_BACKEND, p.error)
            self.assertIn("the stream from Docker broke before the command "
                          "started", p.error[1])
            self.assertEqual(p.data, b"")
            # Its wrapper was never let go: the command did not run.
            time.sleep(2)
            code, _, _ = self.proxy.sh(self.sid, "test -e /tmp/ran")
            self.assertEqual(code, 1, "the command ran")
            self.assertNotIn("sleep 327", self.processes())


class ForgedPid(unittest.TestCase):
    """A process of the sandbox writes a line into a new tty's slave (the
    sandbox user's) before the wrapper prints its PID: the PID it names
    leads no session, so neither signals nor the kill take it."""

    def attempt(self):
        """(sid, the process on the tty, the forger, the forged PID)."""
        sid = new_id()
        mtype, payload = PROXY.create(sid)
        self.assertEqual(mtype, MSG_DOCKER_DONE, describe(mtype, payload))
        # Its first tty, in a devpts of its own: /dev/pts/0.
        forger = Process(PROXY, sid, ["/bin/sh", "-c", FORGER])
        self.assertIsNone(forger.error)
        forger.wait_output(b"ready")
        p = Process(PROXY, sid, ["sleep", "323"], tty=True)
        self.assertIsNone(p.error)
        out = forger.wait_output(b"forged=")
        forged = int(out.split(b"forged=")[1].split()[0])
        return sid, p, forger, forged

    @staticmethod
    def end(sid, *procs):
        PROXY.destroy(sid)
        for proc in procs:
            PROXY.next(proc.peerid, timeout=60)
            proc.sock.close()

    def test_forged_pid_line_on_a_tty(self):
        for _ in range(5):
            sid, p, forger, forged = self.attempt()
            if p.pid == forged:
                break
            self.end(sid, p, forger)
        else:
            self.skipTest("the wrapper printed its PID first every time")
        try:
            for tree in (False, True):
                mtype, error = signal(PROXY, sid, forged, SIGTERM, tree)
                self.assertEqual((mtype, error), (MSG_ERROR, (
                    ERR_CONFLICT, "sandbox %s: process %d does not lead a "
                    "session: not signalled" % (sid, forged))), tree)
            _, out, _ = PROXY.sh(sid, "for f in /proc/[0-9]*/cmdline; do "
                                 "tr '\\0' ' ' < $f; echo; done")
            self.assertIn("sleep 319", out)
        finally:
            self.end(sid, p, forger)


class Inspect(Sandbox):

    def test_running_then_ended(self):
        p = self.sh("read x; exit 5", stdin=True)
        self.assertEqual(inspect(PROXY, self.sid, p.eid), (1, 1, 0, 0))
        p.send(b"\n")
        self.assertEqual(p.wait_exit(), (5, 0))
        self.assertEqual(inspect(PROXY, self.sid, p.eid), (1, 0, 1, 5))

    def test_unknown(self):
        self.assertEqual(inspect(PROXY, self.sid, "0" * 64), (0, 0, 0, 0))
        self.assertEqual(inspect(PROXY, new_id(), "0" * 64), (0, 0, 0, 0))


class ReaderGone(Sandbox):
    """managerd's end of the socket closed: the process is not killed, and
    its output is read and dropped so that it never waits on it."""

    def test_process_runs_on(self):
        p = self.sh("head -c 20000000 /dev/zero; touch /tmp/all-written; "
                    "sleep 314")
        p.sock.shutdown(socket.SHUT_RDWR)
        p.sock.close()
        deadline = time.time() + 60
        while time.time() < deadline:
            code, _, _ = PROXY.sh(self.sid, "test -e /tmp/all-written")
            if code == 0:
                break
            time.sleep(0.5)
        self.assertEqual(code, 0, "the output was not read to its end")
        self.assertIn("sleep 314", self.processes())
        self.assertEqual(inspect(PROXY, self.sid, p.eid), (1, 1, 0, 0))
        self.assertIn("its output's reader went away", PROXY.log_text())
        self.assertEqual(p.kill(), (MSG_DOCKER_DONE, b""))
        mtype, _ = PROXY.next(p.peerid)
        self.assertEqual(mtype, MSG_DOCKER_EXEC_EXIT)
        self.assertGone("sleep 314")


class StartErrors(Sandbox):

    def test_missing_sandbox(self):
        p = Process(PROXY, new_id(), ["true"])
        self.assertEqual(p.error[0], ops.ERR_NOT_FOUND)
        self.assertRegex(p.error[1], r"^sandbox sb_[0-9a-f]{16}: not found$")

    def test_bad_workdir(self):
        for tty in (False, True):
            p = Process(PROXY, self.sid, ["true"], workdir="/nonexistent",
                        tty=tty, stdin=tty, cols=80, rows=24)
            self.assertEqual(p.error[0], ops.ERR_INVALID_REQUEST, p.error)
            self.assertIn("did not start", p.error[1])
            self.assertIn("nonexistent", p.error[1])
            # Nothing went into the socket before the error.
            self.assertEqual(p.data, b"")

    def test_missing_command(self):
        p = Process(PROXY, self.sid, ["/no/such/command"])
        # The wrapper started: the command's failure is its exit code.
        self.assertIsNone(p.error)
        self.assertEqual(p.wait_exit()[0], 127)
        self.assertIn(b"/no/such/command", p.output(2))

    def test_not_a_stream_socket(self):
        for kind in ("pipe", "dgram", "tcp"):
            if kind == "pipe":
                ours, theirs = os.pipe()
            elif kind == "dgram":
                a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
                ours, theirs = a.detach(), b.detach()
            else:
                # A stream socket, but not of the unix family.
                ours, theirs = tcp_pair()
            peerid = PROXY.request(MSG_DOCKER_PROCESS_START,
                                   process_payload(self.sid, ["true"]),
                                   fd=theirs)
            os.close(theirs)
            mtype, payload = PROXY.next(peerid)
            os.close(ours)
            self.assertEqual(mtype, MSG_ERROR, kind)
            self.assertEqual(decode_error(payload),
                             (ops.ERR_INTERNAL, "process socket is not a "
                              "unix stream socket"), kind)

    def test_stopped_sandbox(self):
        sid = new_id()
        self.assertEqual(PROXY.create(sid)[0], MSG_DOCKER_DONE)
        try:
            status, _ = docker("POST", "/containers/agent-sandbox-%s/stop"
                               "?t=0" % sid)
            self.assertEqual(status, 204)
            p = Process(PROXY, sid, ["true"])
            self.assertEqual(p.error, (ops.ERR_INVALID_REQUEST,
                                       "sandbox %s is not running" % sid))
        finally:
            PROXY.destroy(sid)


def fd_limit(pid):
    """The soft RLIMIT_NOFILE of process pid."""
    with open("/proc/%d/limits" % pid) as f:
        for line in f:
            if line.startswith("Max open files"):
                return int(line.split()[3])
    raise AssertionError("no descriptor limit for %d" % pid)


class Capacity(unittest.TestCase):
    """dockerd-proxy follows at most PROXY_PROCESSES_MAX processes at once,
    whatever managerd asks, each with a Docker request and a socket: it
    has the descriptors for them even under a low soft limit, and the rest
    of Docker stays reachable, the calls that end them included."""

    def test_at_most_256_processes(self):
        old = resource.getrlimit(resource.RLIMIT_NOFILE)
        # What it inherits may be too few: it raises its own soft limit.
        resource.setrlimit(resource.RLIMIT_NOFILE, (512, old[1]))
        try:
            proxy = Proxy()
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, old)
        sid = new_id()
        socks, peers = [], []
        try:
            self.assertGreaterEqual(fd_limit(proxy.proc.pid),
                                    2 * DOCKER_HTTP_MAX_LIVE)
            mtype, payload = proxy.create(sid, pids_limit=1024)
            self.assertEqual(mtype, MSG_DOCKER_DONE, describe(mtype, payload))

            def start():
                ours, theirs = socket.socketpair()
                peer = proxy.request(MSG_DOCKER_PROCESS_START,
                                     process_payload(sid, ["sleep", "600"]),
                                     fd=theirs.fileno())
                theirs.close()
                socks.append(ours)
                return peer

            for _ in range(PROXY_PROCESSES_MAX):
                peers.append(start())
            started = []
            for peer in peers:
                mtype, payload = proxy.next(peer, timeout=180)
                self.assertEqual(mtype, MSG_DOCKER_PROCESS_STARTED,
                                 describe(mtype, payload))
                r = Reader(payload)
                started.append((r.str(), r.i64()))
            # One more is refused, and its socket closed.
            extra = start()
            mtype, payload = proxy.next(extra)
            self.assertEqual(mtype, MSG_ERROR)
            self.assertEqual(decode_error(payload), (
                ERR_LIMIT_EXCEEDED, "dockerd-proxy already follows %d "
                "processes" % PROXY_PROCESSES_MAX))
            socks[-1].settimeout(10)
            self.assertEqual(socks[-1].recv(1), b"")
            # Docker is still there for the rest: an inspect, a kill.
            eid, pid = started[0]
            self.assertEqual(inspect(proxy, sid, eid), (1, 1, 0, 0))
            self.assertEqual(signal(proxy, sid, pid, SIGKILL, tree=True),
                             (MSG_DOCKER_DONE, None))
            self.assertEqual(proxy.next(peers[0])[0], MSG_DOCKER_EXEC_EXIT)
            # Once one ended, another fits.
            peers[0] = start()
            self.assertEqual(proxy.next(peers[0], timeout=60)[0],
                             MSG_DOCKER_PROCESS_STARTED)
            self.assertNotIn("Too many open files", proxy.log_text())
        finally:
            # The destroy ends them all.
            proxy.destroy(sid)
            for peer in peers:
                proxy.next(peer, timeout=60)
            for sock in socks:
                sock.close()
            proxy.stop()


class ForeignExecs(Sandbox):
    """Execs that are not this sandbox's: refused, whatever managerd says."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.name = "foreign-proc-" + ops.INSTANCE
        status, obj = docker("POST", "/containers/create?name=" + cls.name, {
            "Image": ops.IMAGE, "Cmd": ["sleep", "3600"], "Tty": True,
            "Labels": {ops.TEST_LABEL: ops.INSTANCE}})
        assert status == 201, obj
        cls.cid = obj["Id"]
        assert docker("POST", "/containers/%s/start" % cls.cid)[0] == 204
        status, obj = docker("POST", "/containers/%s/exec" % cls.cid, {
            "Cmd": ["sleep", "600"], "Tty": True})
        assert status == 201, obj
        cls.foreign_eid = obj["Id"]
        assert docker("POST", "/exec/%s/start" % cls.foreign_eid,
                      {"Detach": True, "Tty": True})[0] == 200
        cls.other = new_id()
        assert PROXY.create(cls.other)[0] == MSG_DOCKER_DONE

    @classmethod
    def tearDownClass(cls):
        docker("DELETE", "/containers/%s?force=true" % cls.cid)
        PROXY.destroy(cls.other)
        super().tearDownClass()

    def test_exec_of_a_foreign_container(self):
        error = inspect(PROXY, self.sid, self.foreign_eid)
        self.assertEqual(error[0], ops.ERR_FORBIDDEN, error)
        mtype, error = resize(PROXY, self.sid, self.foreign_eid, 1, 1)
        self.assertEqual((mtype, error[0]), (MSG_ERROR, ops.ERR_FORBIDDEN))
        self.assertIn("refusing to resize exec %s: not of sandbox %s" %
                      (self.foreign_eid, self.sid), PROXY.log_text())
        status, obj = docker("GET", "/exec/%s/json" % self.foreign_eid)
        self.assertTrue(obj["Running"])

    def test_exec_of_another_sandbox(self):
        p = Process(PROXY, self.other, ["sleep", "315"], tty=True)
        self.assertIsNone(p.error)
        try:
            error = inspect(PROXY, self.sid, p.eid)
            self.assertEqual(error[0], ops.ERR_FORBIDDEN, error)
            mtype, error = resize(PROXY, self.sid, p.eid, 10, 10)
            self.assertEqual(error[0], ops.ERR_FORBIDDEN)
            self.assertEqual(inspect(PROXY, self.other, p.eid),
                             (1, 1, 0, 0))
        finally:
            self.assertEqual(p.kill(), (MSG_DOCKER_DONE, b""))
            p.wait_exit()

    def test_foreign_sandbox_name(self):
        # A container named like a sandbox that this server did not make.
        status, obj = docker("POST", "/containers/create?name=agent-sandbox-"
                             + ops.FOREIGN_ID, {
                                 "Image": ops.IMAGE,
                                 "Cmd": ["sleep", "3600"],
                                 "Labels": {ops.TEST_LABEL: ops.INSTANCE}})
        self.assertEqual(status, 201, obj)
        try:
            docker("POST", "/containers/%s/start" % obj["Id"])
            p = Process(PROXY, ops.FOREIGN_ID, ["true"])
            self.assertEqual(p.error[0], ops.ERR_FORBIDDEN)
            mtype, error = signal(PROXY, ops.FOREIGN_ID, 1234, SIGKILL, True)
            self.assertEqual(error[0], ops.ERR_FORBIDDEN)
            self.assertEqual(inspect(PROXY, ops.FOREIGN_ID, "0" * 64)[0],
                             ops.ERR_FORBIDDEN)
        finally:
            docker("DELETE", "/containers/%s?force=true" % obj["Id"])


class Lies(unittest.TestCase):
    """Malformed process messages: the proxy stops, having done nothing."""

    def lie(self, mtype, payload, fd=None):
        proxy = Proxy()
        try:
            proxy.request(mtype, payload, fd=fd)
            if fd is not None:
                os.close(fd)
            self.assertEqual(proxy.wait_exit(), 1)
            return proxy.log_text()
        finally:
            if proxy.proc.poll() is None:
                proxy.stop()

    def test_start_without_a_socket(self):
        log = self.lie(MSG_DOCKER_PROCESS_START,
                       process_payload(new_id(), ["true"]))
        self.assertIn("bad DOCKER_PROCESS_START message from managerd", log)

    def test_start_malformed(self):
        for payload in (process_payload(new_id(), []),
                        process_payload(new_id(), ["x"], workdir="tmp"),
                        process_payload(new_id(), ["x"], tty=True,
                                        cols=1001, rows=1),
                        process_payload("sb_nothex", ["x"]),
                        process_payload(new_id(), ["x"], env={"A=B": "c"}),
                        process_payload(new_id(), ["x"]) + b"\0"):
            a, b = socket.socketpair()
            log = self.lie(MSG_DOCKER_PROCESS_START, payload,
                           fd=os.dup(b.fileno()))
            a.close()
            b.close()
            self.assertIn("bad DOCKER_PROCESS_START message", log)

    def test_signal_malformed(self):
        for pid, signo in ((1, SIGTERM), (0, SIGTERM), (-5, SIGTERM),
                           (1 << 31, SIGTERM), (100, 3), (100, 0)):
            log = self.lie(MSG_DOCKER_PROCESS_SIGNAL,
                           signal_payload(new_id(), pid, signo))
            self.assertIn("bad DOCKER_PROCESS_SIGNAL message", log)

    def test_exec_messages_malformed(self):
        sid = new_id()
        for mtype, payload in (
                (MSG_DOCKER_PROCESS_RESIZE, exec_payload(sid, "a" * 64, 0, 5)),
                (MSG_DOCKER_PROCESS_RESIZE, exec_payload(sid, "a" * 64, 5,
                                                         1001)),
                (MSG_DOCKER_PROCESS_INSPECT, exec_payload(sid, "a" * 64, 1,
                                                          1)),
                (MSG_DOCKER_PROCESS_INSPECT, exec_payload(sid, "A" * 64)),
                (MSG_DOCKER_PROCESS_INSPECT, exec_payload(sid, "../x")),
                (MSG_DOCKER_PROCESS_INSPECT, exec_payload(sid, "a" * 63))):
            log = self.lie(mtype, payload)
            self.assertIn("message from managerd", log)

    def test_descriptor_on_a_signal(self):
        a, b = socket.socketpair()
        log = self.lie(MSG_DOCKER_PROCESS_SIGNAL,
                       signal_payload(new_id(), 100, SIGTERM),
                       fd=os.dup(b.fileno()))
        a.close()
        b.close()
        self.assertIn("unexpected descriptor", log)


def main():
    ops.run_module((ops.IMAGE, DEBIAN))


if __name__ == "__main__":
    main()
