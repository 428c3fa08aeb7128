"""dockerd-proxy's operations against a real dockerd, with this test playing
managerd: it starts the real dockerd-proxy on a socketpair (descriptor 3,
jailed, seccomp kill), sends typed requests and checks the replies and
what Docker then holds.  Run as root; skips (77) otherwise."""

import hashlib
import io
import json
import os
import re
import secrets
import shutil
import socket
import struct
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

IMAGE = os.environ.get("AGENT_SANDBOX_TEST_IMAGE",
                       "agent-sandbox/busybox:test")
INSTANCE = secrets.token_hex(8)
FOREIGN_ID = "sb_0123456789abcdef"
NETWORK = "agent-sandbox-test-" + INSTANCE
TEST_LABEL = "io.agent-sandbox.test"

# common/msg.h
MSG_PROXY_CONFIG = 101
MSG_READY = 110
MSG_DOCKER_PING = 400
MSG_DOCKER_CREATE = 401
MSG_DOCKER_DESTROY = 402
MSG_DOCKER_STATE = 403
MSG_DOCKER_LIST = 404
MSG_DOCKER_EXEC = 405
MSG_DOCKER_EXEC_CANCEL = 406
MSG_DOCKER_ARCHIVE_GET = 407
MSG_DOCKER_ARCHIVE_PUT = 408
MSG_DOCKER_ARCHIVE_HEAD = 409
MSG_DOCKER_ARCHIVE_PUT_GO = 414
MSG_DOCKER_PONG = 500
MSG_DOCKER_DONE = 501
MSG_DOCKER_STATE_RESULT = 502
MSG_DOCKER_LIST_ITEM = 503
MSG_DOCKER_LIST_END = 504
MSG_DOCKER_EXEC_STARTED = 505
MSG_DOCKER_EXEC_EXIT = 506
MSG_DOCKER_ARCHIVE_STAT = 507
MSG_ERROR = 900
ERR_INVALID_REQUEST = 1
ERR_FORBIDDEN = 3
ERR_NOT_FOUND = 4
ERR_INTERNAL = 8
ERR_BACKEND = 9
# common/file_msg.h
ARCHIVE_WANT_FILE = 1
ARCHIVE_WANT_TREE = 2
ARCHIVE_KIND_FILE = 1
ARCHIVE_KIND_DIR = 2
ARCHIVE_KIND_SYMLINK = 3
ARCHIVE_KIND_OTHER = 4
ARCHIVE_PUT_NO_REPLACE = 0x01
ARCHIVE_PUT_PRIME = 0x02
ARCHIVE_PUT_WAIT = 0x04
IMSG_FD_MARK = 0x80000000


def new_id():
    return "sb_" + secrets.token_hex(8)


# --- payload encoding (common/msg.c) -----------------------------------------

def p_u8(v):
    return struct.pack("<B", v)


def p_u32(v):
    return struct.pack("<I", v)


def p_i64(v):
    return struct.pack("<q", v)


def p_u64(v):
    return struct.pack("<Q", v)


def p_double(v):
    return struct.pack("<d", v)


def p_str(s):
    b = s if isinstance(s, bytes) else s.encode()
    return p_u32(len(b)) + b


def p_env(env):
    out = p_u32(len(env))
    for k, v in env.items():
        out += p_str(k) + p_str(v)
    return out


def docker_create_payload(sid, image=IMAGE, cpus=0.5, memory_mb=128,
                          pids_limit=64, network=False, read_only=True,
                          env=None):
    return (p_str(sid) + p_str(image) + p_double(cpus) + p_i64(memory_mb) +
            p_i64(pids_limit) + p_u8(int(network)) + p_u8(int(read_only)) +
            p_env(env or {}))


def docker_exec_payload(sid, argv, env=None, workdir="/workspace",
                        timeout=30.0):
    out = p_str(sid) + p_u32(len(argv))
    for a in argv:
        out += p_str(a)
    return out + p_env(env or {}) + p_str(workdir) + p_double(timeout)


# The operator's policy in PROXY_CONFIG (struct proxy_policy), as the
# spawner sends it; a test may start a proxy with other settings.
POLICY = {"uid": 1000, "gid": 1000, "tmp_mb": 64, "runtime": "",
          "network_name": NETWORK, "max_cpus": 4.0, "max_memory_mb": 4096,
          "max_pids_limit": 4096, "allow_network": True,
          "allow_runtime_env": False}


def policy_payload(**kw):
    p = dict(POLICY, **kw)
    return (p_u32(p["uid"]) + p_u32(p["gid"]) + p_i64(p["tmp_mb"]) +
            p_str(p["runtime"]) + p_str(p["network_name"]) +
            p_double(p["max_cpus"]) + p_i64(p["max_memory_mb"]) +
            p_i64(p["max_pids_limit"]) + p_u8(int(p["allow_network"])) +
            p_u8(int(p["allow_runtime_env"])))


class Reader:
    def __init__(self, data):
        self.data = data
        self.off = 0

    def take(self, n):
        b = self.data[self.off:self.off + n]
        if len(b) != n:
            raise AssertionError("short payload")
        self.off += n
        return b

    def u8(self):
        return self.take(1)[0]

    def u32(self):
        return struct.unpack("<I", self.take(4))[0]

    def i64(self):
        return struct.unpack("<q", self.take(8))[0]

    def str(self):
        # Paths in messages are bytes: keep the ones that are not UTF-8.
        return self.take(self.u32()).decode("utf-8", "surrogateescape")

    def end(self):
        if self.off != len(self.data):
            raise AssertionError("long payload")


def parse_frames(data):
    """Frames of the exec pipe: [(stream, bytes)]; fails on anything else."""
    frames, off = [], 0
    while off < len(data):
        if len(data) - off < 8:
            raise AssertionError("truncated frame header: %r" % data[off:])
        stream, z1, z2, z3, length = struct.unpack(">BBBBI",
                                                   data[off:off + 8])
        if stream not in (1, 2) or (z1, z2, z3) != (0, 0, 0):
            raise AssertionError("bad frame header %r" % data[off:off + 8])
        if length > 32768 or off + 8 + length > len(data):
            raise AssertionError("bad frame length %d" % length)
        frames.append((stream, data[off + 8:off + 8 + length]))
        off += 8 + length
    return frames


# --- the proxy, driven as managerd drives it ---------------------------------

class Proxy:
    """The real dockerd-proxy on a socketpair.  policy: what PROXY_CONFIG
    carries after the common head (see POLICY); ready=False for a proxy
    expected to refuse its settings (then wait_exit())."""

    def __init__(self, ready=True, wrapper=None, **policy):
        self.tmp = tempfile.mkdtemp(prefix="as-proxy-")
        self.log_path = os.path.join(self.tmp, "proxy.log")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock = ours
        binary = os.path.join(harness.BUILDDIR, "dockerd-proxy",
                              "dockerd-proxy")
        child_fd = theirs.fileno()

        def at_fd_3():
            os.dup2(child_fd, 3)

        # A test's own (a list), or for debugging only, e.g. "valgrind
        # --error-exitcode=99" with AGENT_SANDBOX_TEST_SECCOMP=log.
        if wrapper is None:
            wrapper = os.environ.get("AGENT_SANDBOX_TEST_PROXY_WRAPPER",
                                     "").split()
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(wrapper + [binary],
                                     stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=self.log,
                                     preexec_fn=at_fd_3, close_fds=False)
        theirs.close()
        self.lock = threading.Lock()
        self.cond = threading.Condition()
        self.inbox = []
        self.closed = False
        self.next_id = 1000
        seccomp = os.environ.get("AGENT_SANDBOX_TEST_SECCOMP", "kill")
        self.send(MSG_PROXY_CONFIG, 0, p_str("debug") + p_str(seccomp) +
                  p_str("nobody") + p_str(os.path.join(self.tmp, "jail")) +
                  p_str(harness.DOCKER_SOCKET) + p_str(INSTANCE) +
                  policy_payload(**policy))
        threading.Thread(target=self._read, daemon=True).start()
        if ready:
            self.wait(0, MSG_READY, timeout=20)

    def wait_exit(self, timeout=20):
        """The exit status of a proxy that must stop by itself."""
        try:
            return self.proc.wait(timeout)
        finally:
            self.stop()

    def peerid(self):
        with self.lock:
            self.next_id += 1
            return self.next_id

    def send(self, mtype, peerid, payload=b"", fd=None):
        length = len(payload) | (IMSG_FD_MARK if fd is not None else 0)
        data = struct.pack("<IIII", mtype, length, peerid, os.getpid()) + \
            payload
        with self.lock:
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
                payload = buf[16:16 + length]
                buf = buf[16 + length:]
                with self.cond:
                    self.inbox.append((mtype, peerid, payload))
                    self.cond.notify_all()

    def next(self, peerid, timeout=60):
        """The next message for peerid: (type, payload)."""
        deadline = time.time() + timeout
        with self.cond:
            while True:
                for i, (mtype, pid, payload) in enumerate(self.inbox):
                    if pid == peerid:
                        del self.inbox[i]
                        return mtype, payload
                if self.closed:
                    raise AssertionError("dockerd-proxy went away:\n" +
                                         self.log_text())
                left = deadline - time.time()
                if left <= 0:
                    raise AssertionError("no reply for %d:\n%s" %
                                         (peerid, self.log_text()))
                self.cond.wait(left)

    def wait(self, peerid, mtype, timeout=60):
        got, payload = self.next(peerid, timeout)
        if got != mtype:
            raise AssertionError("expected %d, got %d %r" %
                                 (mtype, got, describe(got, payload)))
        return payload

    def request(self, mtype, payload=b"", fd=None):
        peerid = self.peerid()
        self.send(mtype, peerid, payload, fd)
        return peerid

    def log_text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def stop(self):
        # shutdown, not just close: the reader thread still holds the socket.
        self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        with open(self.log_path, "rb") as f:
            report = harness.sanitizer_report(f.read().decode("utf-8",
                                                              "replace"))
        if report:
            raise AssertionError("a sanitizer report in dockerd-proxy's "
                                 "log:\n" + report)

    # Operations.

    def create(self, sid, **kw):
        return self.next(self.request(MSG_DOCKER_CREATE,
                                      docker_create_payload(sid, **kw)),
                         timeout=120)

    def destroy(self, sid):
        return self.next(self.request(MSG_DOCKER_DESTROY, p_str(sid)))

    def state(self, sid):
        return self.next(self.request(MSG_DOCKER_STATE, p_str(sid)))

    def list(self):
        peerid = self.request(MSG_DOCKER_LIST)
        items = {}
        while True:
            mtype, payload = self.next(peerid)
            if mtype == MSG_DOCKER_LIST_END:
                return items
            if mtype != MSG_DOCKER_LIST_ITEM:
                raise AssertionError(describe(mtype, payload))
            r = Reader(payload)
            sid, container, running = r.str(), r.u8(), r.u8()
            r.end()
            items[sid] = (container, running)

    def exec_start(self, sid, argv, **kw):
        """Start an exec; returns (peerid, read end of the pipe)."""
        rfd, wfd = os.pipe()
        peerid = self.request(MSG_DOCKER_EXEC,
                              docker_exec_payload(sid, argv, **kw), fd=wfd)
        os.close(wfd)
        return peerid, rfd

    def exec(self, sid, argv, **kw):
        """Run to the end: (reply type, error or (exit, timed_out), frames,
        seconds)."""
        t0 = time.time()
        peerid, rfd = self.exec_start(sid, argv, **kw)
        data = []
        reader = threading.Thread(target=drain, args=(rfd, data))
        reader.start()
        mtype, payload = self.next(peerid)
        if mtype == MSG_ERROR:
            reader.join()
            return mtype, decode_error(payload), [], time.time() - t0
        assert mtype == MSG_DOCKER_EXEC_STARTED, describe(mtype, payload)
        payload = self.wait(peerid, MSG_DOCKER_EXEC_EXIT,
                            timeout=kw.get("timeout", 30.0) + 30)
        reader.join()
        r = Reader(payload)
        result = (r.i64(), r.u8())
        r.end()
        return (MSG_DOCKER_EXEC_EXIT, result, parse_frames(b"".join(data)),
                time.time() - t0)

    def archive_get(self, sid, path, want, max_bytes=0, reader=None):
        """Fetch a path: (stat or None, error or None, bytes from the pipe,
        final reply type).  reader(fd, data) reads the pipe."""
        rfd, wfd = os.pipe()
        peerid = self.request(MSG_DOCKER_ARCHIVE_GET, archive_get_payload(
            sid, path, want, max_bytes), fd=wfd)
        os.close(wfd)
        data = []
        t = threading.Thread(target=reader or drain, args=(rfd, data))
        t.start()
        stat = error = None
        mtype, payload = self.next(peerid, timeout=120)
        if mtype == MSG_DOCKER_ARCHIVE_STAT:
            stat = decode_stat(payload)
            mtype, payload = self.next(peerid, timeout=120)
        if mtype == MSG_ERROR:
            error = decode_error(payload)
        elif mtype != MSG_DOCKER_DONE:
            raise AssertionError(describe(mtype, payload))
        # The pipe was closed before the final reply went.
        t.join(60)
        if t.is_alive():
            raise AssertionError("the archive pipe was left open")
        return stat, error, b"".join(data), mtype

    def archive_put_fd(self, sid, path, fd, length, flags=0):
        """Upload from fd (closed here): (type, error or None)."""
        peerid = self.request(MSG_DOCKER_ARCHIVE_PUT, archive_put_payload(
            sid, path, flags, length), fd=fd)
        os.close(fd)
        mtype, payload = self.next(peerid, timeout=120)
        if mtype == MSG_ERROR:
            return mtype, decode_error(payload)
        if mtype != MSG_DOCKER_DONE:
            raise AssertionError(describe(mtype, payload))
        return mtype, None

    def archive_put_pipe(self, sid, path, data, flags=0, length=-1):
        rfd, wfd = os.pipe()

        def writer():
            try:
                view = memoryview(data)
                while view:
                    n = os.write(wfd, view[:65536])
                    view = view[n:]
            except BrokenPipeError:
                pass
            finally:
                os.close(wfd)
        t = threading.Thread(target=writer)
        t.start()
        try:
            return self.archive_put_fd(sid, path, rfd, length, flags)
        finally:
            t.join(60)

    def archive_head(self, sid, path):
        """A path's stat: (decode_stat_full or None, error or None)."""
        mtype, payload = self.next(self.request(
            MSG_DOCKER_ARCHIVE_HEAD, p_str(sid) + p_str(path)), timeout=120)
        if mtype == MSG_ERROR:
            return None, decode_error(payload)
        if mtype != MSG_DOCKER_ARCHIVE_STAT:
            raise AssertionError(describe(mtype, payload))
        return decode_stat_full(payload), None

    def sh(self, sid, script, **kw):
        """A shell command: (exit, stdout, stderr)."""
        mtype, result, frames, _ = self.exec(sid, ["/bin/sh", "-c", script],
                                             **kw)
        assert mtype == MSG_DOCKER_EXEC_EXIT, result
        out = b"".join(d for s, d in frames if s == 1).decode()
        err = b"".join(d for s, d in frames if s == 2).decode()
        return result[0], out, err


def archive_get_payload(sid, path, want, max_bytes=0):
    return p_str(sid) + p_str(path) + p_u8(want) + p_u64(max_bytes)


def archive_put_payload(sid, path, flags, length):
    return p_str(sid) + p_str(path) + p_u8(flags) + p_i64(length)


def decode_stat_full(payload):
    """ARCHIVE_STAT: (kind, size, mode, mtime, mtime_nsec, target bytes)."""
    r = Reader(payload)
    kind = r.u8()
    size = struct.unpack("<Q", r.take(8))[0]
    mode = r.u32()
    mtime = r.i64()
    nsec = r.u32()
    target = r.take(r.u32())
    r.end()
    return kind, size, mode, mtime, nsec, target


def decode_stat(payload):
    kind, size, _, _, _, target = decode_stat_full(payload)
    return kind, size, target.decode()


def make_tar(members):
    """members: [(name, bytes or None for a directory, uid)]."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) \
            as tar:
        for name, data, uid in members:
            info = tarfile.TarInfo(name)
            info.uid = info.gid = uid
            info.mtime = int(time.time())
            if data is None:
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                tar.addfile(info)
            else:
                info.mode = 0o644
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def tar_members(data):
    """{name: bytes or None for a directory} of a tar."""
    out = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
        for m in tar:
            if m.isdir():
                out[m.name.rstrip("/")] = None
            elif m.issym():
                out[m.name] = ("->", m.linkname)
            else:
                out[m.name] = tar.extractfile(m).read()
    return out


def drain(fd, data):
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        data.append(chunk)
    os.close(fd)


def proc_rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS for %d" % pid)


def proc_status_kb(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError("no %s for %d" % (field, pid))


def decode_error(payload):
    r = Reader(payload)
    kind, text = r.u32(), r.str()
    r.end()
    return kind, text


def describe(mtype, payload):
    if mtype == MSG_ERROR:
        return ("ERROR",) + decode_error(payload)
    return (mtype, payload)


# --- Docker, asked directly --------------------------------------------------

def docker(method, path, body=None):
    status, data = harness.docker_request(method, "/v1.41" + path, body=body)
    return status, (json.loads(data) if data.strip() else None)


def container(name):
    status, obj = docker("GET", "/containers/%s/json" % name)
    return obj if status == 200 else None


def volume(name):
    status, obj = docker("GET", "/volumes/%s" % name)
    return obj if status == 200 else None


def labelled(kind, label):
    filters = json.dumps({"label": [label]})
    q = "all=1&" if kind == "containers" else ""
    status, obj = docker("GET", "/%s%s?%sfilters=%s" % (
        kind, "/json" if kind == "containers" else "", q,
        urlquote(filters)))
    if kind == "volumes":
        return [v["Name"] for v in (obj or {}).get("Volumes") or []]
    return [c["Id"] for c in obj or []]


def urlquote(s):
    import urllib.parse
    return urllib.parse.quote(s, safe="")


def cleanup_docker():
    """Everything this test made, found by labels and names."""
    for label in ("io.agent-sandbox.instance=" + INSTANCE,
                  TEST_LABEL + "=" + INSTANCE):
        for cid in labelled("containers", label):
            docker("DELETE", "/containers/%s?force=true&v=true" % cid)
        for name in labelled("volumes", label):
            docker("DELETE", "/volumes/%s?force=true" % name)
    docker("DELETE", "/networks/%s" % NETWORK)


PROXY = None


def setUpModule():
    global PROXY
    PROXY = Proxy()


def tearDownModule():
    try:
        if PROXY is not None:
            alive = PROXY.proc.poll() is None
            PROXY.stop()
            if not alive or PROXY.proc.returncode != 0:
                print(PROXY.log_text(), file=sys.stderr)
            assert alive, "dockerd-proxy died (seccomp?)"
            assert PROXY.proc.returncode == 0, \
                "dockerd-proxy exited with %d" % PROXY.proc.returncode
    finally:
        cleanup_docker()


class OneSandbox(unittest.TestCase):
    """One sandbox for a class's tests, made and destroyed by the proxy of
    the class's own module (its PROXY: some run the proxy wrapped);
    create_options() are PROXY.create()'s.  A class that puts files in
    it calls this setUpClass first."""

    @classmethod
    def proxy(cls):
        return sys.modules[cls.__module__].PROXY

    @classmethod
    def create_options(cls):
        return {}

    @classmethod
    def setUpClass(cls):
        cls.sid = new_id()
        cls.name = "agent-sandbox-" + cls.sid
        mtype, payload = cls.proxy().create(cls.sid, **cls.create_options())
        assert mtype == MSG_DOCKER_DONE, describe(mtype, payload)

    @classmethod
    def tearDownClass(cls):
        cls.proxy().destroy(cls.sid)


class ProxyOps(OneSandbox):

    @classmethod
    def create_options(cls):
        return {"env": {"FOO": "bar"}}

    def test_hardened_defaults(self):
        c = container(self.name)
        host = c["HostConfig"]
        self.assertTrue(host["ReadonlyRootfs"])
        self.assertEqual(host["CapDrop"], ["ALL"])
        self.assertFalse(host.get("CapAdd"))
        self.assertIn("no-new-privileges:true", host["SecurityOpt"])
        self.assertEqual(host["PidsLimit"], 64)
        self.assertEqual(host["Memory"], 128 * 1024 * 1024)
        self.assertEqual(host["MemorySwap"], host["Memory"])
        self.assertEqual(host["NanoCpus"], 500000000)
        self.assertEqual(host["NetworkMode"], "none")
        self.assertFalse(host["Privileged"])
        self.assertEqual(host["IpcMode"], "private")
        self.assertTrue(host["Init"])
        self.assertEqual(host["LogConfig"]["Type"], "none")
        self.assertEqual(c["LogPath"], "")
        self.assertEqual(host["Tmpfs"]["/tmp"],
                         "rw,nosuid,nodev,size=64m,mode=1777")
        self.assertIsNone(host["Binds"])
        self.assertEqual(c["Config"]["User"], "1000:1000")
        self.assertEqual(c["Config"]["Hostname"], "sandbox")
        self.assertIn("HOME=/workspace", c["Config"]["Env"])
        self.assertIn("FOO=bar", c["Config"]["Env"])
        self.assertTrue(c["State"]["Running"])
        mounts = c["Mounts"]
        self.assertEqual(len(mounts), 1)
        self.assertEqual(mounts[0]["Type"], "volume")
        self.assertEqual(mounts[0]["Name"], self.name + "-workspace")
        self.assertEqual(mounts[0]["Destination"], "/workspace")
        for labels in (c["Config"]["Labels"],
                       volume(self.name + "-workspace")["Labels"]):
            self.assertEqual(labels["io.agent-sandbox.managed"], "true")
            self.assertEqual(labels["io.agent-sandbox.id"], self.sid)
            self.assertEqual(labels["io.agent-sandbox.instance"], INSTANCE)
        # The never-started workspace-prep container is gone.
        self.assertIsNone(container(self.name + "-init"))

        code, out, _ = PROXY.sh(self.sid, "id -u")
        self.assertEqual((code, out), (0, "1000\n"))
        code, out, _ = PROXY.sh(self.sid, "grep -E '^(CapEff|NoNewPrivs)' "
                                "/proc/self/status")
        self.assertIn("CapEff:\t0000000000000000", out)
        self.assertIn("NoNewPrivs:\t1", out)
        code, _, _ = PROXY.sh(self.sid, "touch /etc/x")
        self.assertNotEqual(code, 0)
        code, out, _ = PROXY.sh(self.sid, "ls /sys/class/net")
        self.assertEqual(out.split(), ["lo"])

    def test_workspace_owned_by_sandbox_user(self):
        out = subprocess.run(["docker", "exec", self.name, "stat", "-c",
                              "%u:%g", "/workspace"], capture_output=True,
                             text=True, check=True).stdout
        self.assertEqual(out.strip(), "1000:1000")
        code, out, err = PROXY.sh(self.sid, "echo hi > /workspace/f && "
                                  "stat -c %u:%g /workspace/f && "
                                  "mkdir /workspace/d && cat /workspace/f")
        self.assertEqual((code, out, err), (0, "1000:1000\nhi\n", ""))

    def test_workspace_owned_writable_rootfs(self):
        # The sandbox user is the operator's, in the proxy's own settings.
        proxy = Proxy(uid=1234, gid=2345)
        sid = new_id()
        try:
            mtype, payload = proxy.create(sid, read_only=False)
            self.assertEqual(mtype, MSG_DOCKER_DONE,
                             describe(mtype, payload))
            code, out, _ = proxy.sh(sid, "stat -c %u:%g /workspace && "
                                    "touch /workspace/x && id -u && id -g")
            self.assertEqual((code, out), (0, "1234:2345\n1234\n2345\n"))
            self.assertIsNone(container("agent-sandbox-%s-init" % sid))
        finally:
            self.assertEqual(proxy.destroy(sid)[0], MSG_DOCKER_DONE)
            proxy.stop()

    def test_exec_echo(self):
        mtype, result, frames, _ = PROXY.exec(self.sid, ["echo", "hello"])
        self.assertEqual(mtype, MSG_DOCKER_EXEC_EXIT)
        self.assertEqual(result, (0, 0))
        self.assertEqual(frames, [(1, b"hello\n")])

    def test_exec_streams_env_workdir(self):
        mtype, result, frames, _ = PROXY.exec(
            self.sid, ["/bin/sh", "-c", "echo out; echo err >&2; pwd; "
                       "echo $FOO $BAR; exit 3"],
            env={"BAR": "baz"}, workdir="/tmp")
        self.assertEqual(result, (3, 0))
        out = b"".join(d for s, d in frames if s == 1)
        err = b"".join(d for s, d in frames if s == 2)
        self.assertEqual(out, b"out\n/tmp\nbar baz\n")
        self.assertEqual(err, b"err\n")

    def test_exec_argv_not_split(self):
        mtype, result, frames, _ = PROXY.exec(
            self.sid, ["printf", "%s|", "a b", "$HOME"])
        self.assertEqual(b"".join(d for _, d in frames), b"a b|$HOME|")

    def test_exec_large_output(self):
        n = 5 * 1024 * 1024
        mtype, result, frames, _ = PROXY.exec(
            self.sid, ["/bin/sh", "-c", "head -c %d /dev/zero" % n])
        self.assertEqual(result, (0, 0))
        self.assertEqual(sum(len(d) for _, d in frames), n)
        self.assertTrue(all(len(d) <= 32768 for _, d in frames))

    def test_exec_timeout_kills_group(self):
        mtype, result, frames, secs = PROXY.exec(
            self.sid, ["/bin/sh", "-c", "sleep 300 & sleep 300; echo never"],
            timeout=1.0)
        self.assertEqual(mtype, MSG_DOCKER_EXEC_EXIT)
        exit_code, timed_out = result
        self.assertEqual(timed_out, 1)
        self.assertNotEqual(exit_code, 0)
        self.assertNotIn(b"never", b"".join(d for _, d in frames))
        self.assertLess(secs, 15)
        self.assertNoSleep("sleep 300")

    def test_exec_timeout_kills_descendants(self):
        # A descendant in a session of its own escapes the group kill.
        mtype, result, frames, secs = PROXY.exec(
            self.sid, ["/bin/sh", "-c",
                       "setsid sleep 301 & sleep 302 & echo started; wait"],
            timeout=1.0)
        self.assertEqual(result[1], 1)
        self.assertIn(b"started", b"".join(d for _, d in frames))
        self.assertLess(secs, 15)
        self.assertNoSleep("sleep 301")
        self.assertNoSleep("sleep 302")

    def test_exec_timeout_orphan(self):
        # An orphan in a session of its own escapes the kill (documented),
        # but must not hold the exec open after its command died.
        mtype, result, frames, secs = PROXY.exec(
            self.sid, ["/bin/sh", "-c",
                       "(setsid sleep 304 &); echo started; sleep 305"],
            timeout=1.0)
        self.assertEqual(mtype, MSG_DOCKER_EXEC_EXIT)
        self.assertEqual(result[1], 1)
        self.assertNotEqual(result[0], 0)
        self.assertIn(b"started", b"".join(d for _, d in frames))
        self.assertLess(secs, 15)
        self.assertNoSleep("sleep 305")

    def processes(self):
        # No ps in every image: read /proc directly.
        _, out, _ = PROXY.sh(self.sid, "for f in /proc/[0-9]*/cmdline; "
                             "do tr '\\0' ' ' < $f; echo; done")
        return out

    def assertNoSleep(self, what):
        deadline = time.time() + 5
        while True:
            out = self.processes()
            if what not in out or time.time() > deadline:
                break
            time.sleep(0.2)
        self.assertNotIn(what, out)

    def test_exec_cancel(self):
        t0 = time.time()
        peerid, rfd = PROXY.exec_start(self.sid, ["sleep", "303"],
                                       timeout=300.0)
        self.assertEqual(PROXY.next(peerid)[0], MSG_DOCKER_EXEC_STARTED)
        self.assertIn("sleep 303", self.processes())
        PROXY.send(MSG_DOCKER_EXEC_CANCEL, peerid)
        payload = PROXY.wait(peerid, MSG_DOCKER_EXEC_EXIT, timeout=20)
        self.assertLess(time.time() - t0, 15)
        self.assertEqual(os.read(rfd, 100), b"")   # closed, nothing sent
        os.close(rfd)
        self.assertNotEqual(Reader(payload).i64(), 0)
        self.assertNoSleep("sleep 303")

    def test_exec_reader_gone(self):
        peerid, rfd = PROXY.exec_start(self.sid, ["yes"], timeout=300.0)
        self.assertEqual(PROXY.next(peerid)[0], MSG_DOCKER_EXEC_STARTED)
        os.read(rfd, 1000)
        os.close(rfd)
        PROXY.wait(peerid, MSG_DOCKER_EXEC_EXIT, timeout=20)
        self.assertNoSleep("yes")

    def test_exec_backpressure(self):
        """A reader that stops: the proxy pauses Docker, its memory stays
        flat, and the output arrives whole when reading resumes."""
        n = 64 * 1024 * 1024
        before = proc_rss_kb(PROXY.proc.pid)
        peerid, rfd = PROXY.exec_start(
            self.sid, ["/bin/sh", "-c", "head -c %d /dev/zero" % n],
            timeout=300.0)
        self.assertEqual(PROXY.next(peerid)[0], MSG_DOCKER_EXEC_STARTED)
        time.sleep(2)
        grown = proc_rss_kb(PROXY.proc.pid) - before
        self.assertLess(grown, 8 * 1024, "proxy RSS grew %d KiB" % grown)
        data = []
        drain(rfd, data)
        frames = parse_frames(b"".join(data))
        self.assertEqual(sum(len(d) for _, d in frames), n)
        payload = PROXY.wait(peerid, MSG_DOCKER_EXEC_EXIT)
        self.assertEqual(Reader(payload).i64(), 0)

    def test_exec_concurrent(self):
        count = 64
        results = [None] * count

        def one(i):
            results[i] = PROXY.exec(
                self.sid, ["/bin/sh", "-c", "sleep 1; echo %d" % i])

        threads = [threading.Thread(target=one, args=(i,))
                   for i in range(count)]
        t0 = time.time()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for i, (mtype, result, frames, _) in enumerate(results):
            self.assertEqual(mtype, MSG_DOCKER_EXEC_EXIT, result)
            self.assertEqual(result, (0, 0))
            self.assertEqual(frames, [(1, b"%d\n" % i)])
        self.assertLess(time.time() - t0, 30)

    def test_exec_missing_sandbox(self):
        mtype, error, _, _ = PROXY.exec(new_id(), ["true"])
        self.assertEqual(mtype, MSG_ERROR)
        self.assertEqual(error[0], ERR_NOT_FOUND)
        self.assertRegex(error[1], r"^sandbox sb_[0-9a-f]{16}: not found$")

    def test_exec_bad_workdir(self):
        mtype, result, frames, _ = PROXY.exec(self.sid, ["true"],
                                              workdir="/nonexistent")
        self.assertEqual(mtype, MSG_DOCKER_EXEC_EXIT)
        self.assertNotEqual(result[0], 0)
        self.assertIn(b"nonexistent", b"".join(d for _, d in frames))

    def test_state(self):
        mtype, payload = PROXY.state(self.sid)
        self.assertEqual(mtype, MSG_DOCKER_STATE_RESULT)
        c = container(self.name)
        # exists, running, State.Pid, then the full id as a string.
        self.assertEqual(payload, b"\x01\x01" +
                         struct.pack("<I", c["State"]["Pid"]) +
                         p_str(c["Id"]))
        self.assertGreater(c["State"]["Pid"], 0)
        mtype, payload = PROXY.state(new_id())
        self.assertEqual((mtype, payload), (MSG_DOCKER_STATE_RESULT,
                                            b"\x00\x00" + b"\0" * 4 +
                                            p_str("")))

    def test_list(self):
        items = PROXY.list()
        self.assertEqual(items.get(self.sid), (1, 1))
        self.assertNotIn(FOREIGN_ID, items)

    def test_zz_destroy(self):
        sid = new_id()
        self.assertEqual(PROXY.create(sid)[0], MSG_DOCKER_DONE)
        self.assertIn(sid, PROXY.list())
        self.assertEqual(PROXY.destroy(sid)[0], MSG_DOCKER_DONE)
        self.assertIsNone(container("agent-sandbox-" + sid))
        self.assertIsNone(volume("agent-sandbox-%s-workspace" % sid))
        self.assertNotIn(sid, PROXY.list())
        self.assertEqual(PROXY.destroy(sid)[0], MSG_DOCKER_DONE)
        mtype, payload = PROXY.state(sid)
        # Gone: no pid, no container id.
        self.assertEqual(payload, b"\x00\x00" + b"\0" * 4 + p_str(""))
        mtype, error, _, _ = PROXY.exec(sid, ["true"])
        self.assertEqual(error[0], ERR_NOT_FOUND)


class Archive(OneSandbox):
    """ARCHIVE_GET and ARCHIVE_PUT on a sandbox with a read-only root."""

    BIG = 50 * 1024 * 1024

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        code, out, err = PROXY.sh(
            cls.sid, "cd /workspace && printf 'hello archive\\n' > f && "
            "ln -s f l && mkdir -p d/sub && echo g > d/sub/g && "
            "head -c %d /dev/urandom > big && sha256sum big" % cls.BIG,
            timeout=120.0)
        assert code == 0, err
        cls.big_sha = out.split()[0]

    def test_get_file(self):
        stat, error, data, _ = PROXY.archive_get(
            self.sid, "/workspace/f", ARCHIVE_WANT_FILE, 1024)
        self.assertIsNone(error)
        self.assertEqual(stat, (ARCHIVE_KIND_FILE, 14, ""))
        self.assertEqual(tar_members(data), {"f": b"hello archive\n"})

    def test_get_file_too_large(self):
        stat, error, data, mtype = PROXY.archive_get(
            self.sid, "/workspace/f", ARCHIVE_WANT_FILE, 13)
        self.assertEqual((mtype, error), (MSG_DOCKER_DONE, None))
        self.assertEqual(stat, (ARCHIVE_KIND_FILE, 14, ""))
        self.assertEqual(data, b"")

    def test_get_symlink(self):
        for want in (ARCHIVE_WANT_FILE, ARCHIVE_WANT_TREE):
            stat, error, data, mtype = PROXY.archive_get(
                self.sid, "/workspace/l", want, 1 << 20)
            self.assertEqual((mtype, error), (MSG_DOCKER_DONE, None))
            self.assertEqual(stat[0], ARCHIVE_KIND_SYMLINK)
            self.assertEqual(stat[2], "/workspace/f")
            self.assertEqual(data, b"")

    def test_get_tree(self):
        stat, error, data, _ = PROXY.archive_get(
            self.sid, "/workspace/d", ARCHIVE_WANT_TREE)
        self.assertIsNone(error)
        self.assertEqual(stat[0], ARCHIVE_KIND_DIR)
        self.assertEqual(tar_members(data), {"d": None, "d/sub": None,
                                             "d/sub/g": b"g\n"})
        # A directory is not a file, whatever its size.
        stat, error, data, _ = PROXY.archive_get(
            self.sid, "/workspace/d", ARCHIVE_WANT_FILE, 1 << 30)
        self.assertEqual((stat[0], error, data), (ARCHIVE_KIND_DIR, None,
                                                  b""))
        # Nor is a file a tree.
        stat, error, data, _ = PROXY.archive_get(
            self.sid, "/workspace/f", ARCHIVE_WANT_TREE)
        self.assertEqual((stat[0], error, data), (ARCHIVE_KIND_FILE, None,
                                                  b""))

    def test_get_missing(self):
        stat, error, data, _ = PROXY.archive_get(
            self.sid, "/workspace/nope", ARCHIVE_WANT_FILE, 1024)
        self.assertIsNone(stat)
        self.assertEqual(error, (ERR_NOT_FOUND, "/workspace/nope: not found"))
        self.assertEqual(data, b"")
        sid = new_id()
        stat, error, data, _ = PROXY.archive_get(
            sid, "/workspace", ARCHIVE_WANT_TREE)
        self.assertIsNone(stat)
        self.assertEqual(error, (ERR_NOT_FOUND, "sandbox %s not found" % sid))

    def test_get_odd_path(self):
        # Percent-encoded on the way: the name arrives as it was given.
        code, _, err = PROXY.sh(self.sid, "echo odd > '/workspace/a b&c=d'")
        self.assertEqual(code, 0, err)
        stat, error, data, _ = PROXY.archive_get(
            self.sid, "/workspace/a b&c=d", ARCHIVE_WANT_FILE, 1024)
        self.assertIsNone(error)
        self.assertEqual(tar_members(data), {"a b&c=d": b"odd\n"})

    def test_get_backpressure(self):
        """50 MiB through a reader that stalls, then reads slowly: the
        proxy pauses Docker and its memory stays flat."""
        pid = PROXY.proc.pid
        before = proc_rss_kb(pid)
        # Reset VmHWM so that it shows the peak of this transfer only.
        with open("/proc/%d/clear_refs" % pid, "w") as f:
            f.write("5")
        samples = []

        def slow(fd, data):
            time.sleep(2)
            samples.append(proc_rss_kb(pid))
            n = 0
            while True:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                data.append(chunk)
                n += 1
                if n < 200:
                    time.sleep(0.005)
                if n % 50 == 0:
                    samples.append(proc_rss_kb(pid))
            os.close(fd)

        stat, error, data, _ = PROXY.archive_get(
            self.sid, "/workspace/big", ARCHIVE_WANT_FILE, self.BIG,
            reader=slow)
        self.assertIsNone(error)
        self.assertEqual(stat, (ARCHIVE_KIND_FILE, self.BIG, ""))
        hwm = proc_status_kb(pid, "VmHWM")
        grown = max(samples + [hwm]) - before
        if not harness.SANITIZERS:  # see test_files.MEMORY_CHECKED
            self.assertLess(grown, 4 * 1024, "proxy RSS grew %d KiB" % grown)
        members = tar_members(data)
        self.assertEqual(list(members), ["big"])
        self.assertEqual(hashlib.sha256(members["big"]).hexdigest(),
                         self.big_sha)

    def test_get_reader_gone(self):
        def quitter(fd, data):
            data.append(os.read(fd, 100000))
            os.close(fd)

        stat, error, data, _ = PROXY.archive_get(
            self.sid, "/workspace/big", ARCHIVE_WANT_FILE, self.BIG,
            reader=quitter)
        self.assertEqual(stat[0], ARCHIVE_KIND_FILE)
        self.assertEqual(error, (ERR_BACKEND,
                                 "/workspace/big: the reader went away"))
        # Still serving.
        stat, error, _, _ = PROXY.archive_get(
            self.sid, "/workspace/f", ARCHIVE_WANT_FILE, 1024)
        self.assertEqual((stat[0], error), (ARCHIVE_KIND_FILE, None))

    def test_put_pipe(self):
        tar = make_tar([("a", None, 1000), ("a/f", b"from a pipe\n", 1000)])
        self.assertEqual(PROXY.archive_put_pipe(self.sid, "/workspace", tar),
                         (MSG_DOCKER_DONE, None))
        code, out, _ = PROXY.sh(self.sid, "stat -c %u:%g /workspace/a "
                                "/workspace/a/f && cat /workspace/a/f && "
                                "echo more > /workspace/a/g")
        self.assertEqual((code, out),
                         (0, "1000:1000\n1000:1000\nfrom a pipe\n"))

    def test_put_pipe_with_length(self):
        tar = make_tar([("p", None, 1000), ("p/f", b"x" * 300000, 1000)])
        self.assertEqual(PROXY.archive_put_pipe(self.sid, "/workspace", tar,
                                                length=len(tar)),
                         (MSG_DOCKER_DONE, None))
        code, out, _ = PROXY.sh(self.sid, "wc -c < /workspace/p/f")
        self.assertEqual(out.strip(), "300000")

    def test_put_file(self):
        content = os.urandom(3 * 1024 * 1024 + 17)
        tar = make_tar([("b", None, 1000), ("b/g", content, 1000)])
        with tempfile.TemporaryFile() as f:
            f.write(tar)
            f.seek(0)
            fd = os.dup(f.fileno())
        self.assertEqual(PROXY.archive_put_fd(self.sid, "/workspace", fd,
                                              len(tar)),
                         (MSG_DOCKER_DONE, None))
        stat, error, data, _ = PROXY.archive_get(
            self.sid, "/workspace/b/g", ARCHIVE_WANT_FILE, 1 << 30)
        self.assertEqual(stat, (ARCHIVE_KIND_FILE, len(content), ""))
        self.assertEqual(tar_members(data), {"g": content})

    def test_put_large_memory(self):
        """A 50 MiB upload, from a file and from a pipe: read a piece at a
        time as Docker takes it, so the proxy's memory stays flat."""
        content = os.urandom(self.BIG)
        tar = make_tar([("big2", content, 1000)])
        pid = PROXY.proc.pid
        before = proc_rss_kb(pid)
        with open("/proc/%d/clear_refs" % pid, "w") as f:
            f.write("5")
        with tempfile.TemporaryFile() as f:
            f.write(tar)
            f.seek(0)
            fd = os.dup(f.fileno())
        self.assertEqual(PROXY.archive_put_fd(self.sid, "/workspace", fd,
                                              len(tar)),
                         (MSG_DOCKER_DONE, None))
        self.assertEqual(PROXY.archive_put_pipe(self.sid, "/workspace", tar),
                         (MSG_DOCKER_DONE, None))
        grown = proc_status_kb(pid, "VmHWM") - before
        if not harness.SANITIZERS:  # see test_files.MEMORY_CHECKED
            self.assertLess(grown, 4 * 1024, "proxy RSS grew %d KiB" % grown)
        code, out, _ = PROXY.sh(self.sid, "sha256sum /workspace/big2 && "
                                "rm /workspace/big2")
        self.assertEqual(out.split()[0], hashlib.sha256(content).hexdigest())

    def test_put_wrong_length(self):
        tar = make_tar([("w", b"short", 1000)])
        for length in (len(tar) + 512, len(tar) - 512):
            with tempfile.TemporaryFile() as f:
                f.write(tar)
                f.seek(0)
                fd = os.dup(f.fileno())
            mtype, error = PROXY.archive_put_fd(self.sid, "/workspace", fd,
                                                length)
            self.assertEqual(mtype, MSG_ERROR)
            self.assertEqual(error[0], ERR_INTERNAL, error)
        code, _, _ = PROXY.sh(self.sid, "test -e /workspace/w")
        self.assertNotEqual(code, 0)

    def test_put_no_replace_symlink(self):
        code, _, err = PROXY.sh(self.sid, "ln -s /tmp /workspace/evil")
        self.assertEqual(code, 0, err)
        tar = make_tar([("evil", None, 1000), ("evil/x", b"x", 1000)])
        mtype, error = PROXY.archive_put_pipe(self.sid, "/workspace", tar,
                                              flags=ARCHIVE_PUT_NO_REPLACE)
        self.assertEqual(error, (ERR_INVALID_REQUEST,
                                 "writes are limited to files under "
                                 "/workspace: /workspace/evil is a symlink "
                                 "or not a directory"))
        code, out, _ = PROXY.sh(self.sid, "ls /tmp; readlink /workspace/evil")
        self.assertEqual(out, "/tmp\n")

    def test_put_no_replace_dir(self):
        code, _, err = PROXY.sh(self.sid, "mkdir /workspace/dd")
        self.assertEqual(code, 0, err)
        tar = make_tar([("dd", b"not a dir", 1000)])
        mtype, error = PROXY.archive_put_pipe(self.sid, "/workspace", tar,
                                              flags=ARCHIVE_PUT_NO_REPLACE)
        self.assertEqual(error, (ERR_INVALID_REQUEST,
                                 "/workspace/dd is a directory"))
        code, _, _ = PROXY.sh(self.sid, "test -d /workspace/dd")
        self.assertEqual(code, 0)

    def test_put_missing_sandbox(self):
        sid = new_id()
        mtype, error = PROXY.archive_put_pipe(sid, "/workspace",
                                              make_tar([("z", b"z", 1000)]))
        self.assertEqual(error, (ERR_NOT_FOUND, "sandbox %s not found" % sid))

    def test_put_not_a_tar(self):
        mtype, error = PROXY.archive_put_pipe(self.sid, "/workspace",
                                              b"\xff" * 4096)
        self.assertEqual(mtype, MSG_ERROR)
        self.assertIn(error[0], (ERR_INVALID_REQUEST, ERR_BACKEND), error)


class ArchiveHead(OneSandbox):
    """ARCHIVE_HEAD: a path's stat, symlinks resolved by Docker, names of
    any bytes (made with printf escapes: an exec's argv is JSON)."""

    LATIN1 = b"\xe9" * 255
    SETUP = (
        "cd /workspace && printf 'hello archive\\n' > f && chmod 4755 f && "
        "mkdir d st && chmod 2750 d && chmod 1777 st && "
        "ln -s f l && ln -s d/../d ld && ln -s ../../../etc esc && "
        "ln -s loop1 loop2 && ln -s loop2 loop1 && ln -s /nonexist dang && "
        "touch \"$(printf 'caf\\351')\" \"$(printf 'a b\\nc')\" && "
        "mkdir \"$(printf 'd\\351')\" && "
        "ln -s \"$(printf 'd\\351')\" \"$(printf 'l\\351')\" && "
        "touch \"$(printf '%255s' '' | tr ' ' '\\351')\" && "
        "p=deep && mkdir -p $p && i=0 && while [ $i -lt 15 ]; do "
        "p=$p/\"$(printf '%200s' '' | tr ' ' '\\351')\"; mkdir \"$p\"; "
        "i=$((i+1)); done && touch \"$p/end\" && "
        "stat -c '%Y %y' f")

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        code, out, err = PROXY.sh(cls.sid, cls.SETUP)
        assert code == 0, err
        secs, _, hms, _ = out.split()
        cls.f_mtime = (int(secs), int(hms.split(".")[1]))

    def head(self, path):
        if isinstance(path, str):
            path = path.encode()
        return PROXY.archive_head(self.sid, path)

    def test_file(self):
        st, error = self.head("/workspace/f")
        self.assertIsNone(error)
        self.assertEqual(st[:3], (ARCHIVE_KIND_FILE, 14, 0o4755))
        self.assertEqual(st[3:], self.f_mtime + (b"",))

    def test_directories(self):
        for path, mode in (("/workspace", None), ("/workspace/d", 0o2750),
                           ("/workspace/st", 0o1777)):
            st, error = self.head(path)
            self.assertIsNone(error, path)
            self.assertEqual(st[0], ARCHIVE_KIND_DIR, path)
            if mode is not None:
                self.assertEqual(st[2], mode, path)
            self.assertLess(st[4], 10**9)

    def test_symlinks(self):
        """Docker resolves each inside the container, to the end."""
        for path, target in (("l", b"/workspace/f"), ("ld", b"/workspace/d"),
                             ("esc", b"/etc"), ("dang", b"/nonexist")):
            st, error = self.head("/workspace/" + path)
            self.assertIsNone(error, path)
            self.assertEqual((st[0], st[5]), (ARCHIVE_KIND_SYMLINK, target))
        # A loop, at the end or on the way: a link with no target.
        for path in ("/workspace/loop1", "/workspace/loop1/x"):
            st, error = self.head(path)
            self.assertIsNone(error, path)
            self.assertEqual((st[0], st[5]), (ARCHIVE_KIND_SYMLINK, b""))

    def test_missing(self):
        for path in ("/workspace/nope", "/workspace/nope/x",
                     "/workspace/dang/x"):
            st, error = self.head(path)
            self.assertEqual(error, (ERR_NOT_FOUND, path + ": not found"))
        # Below a file: said without Docker's host paths.
        st, error = self.head("/workspace/f/x")
        self.assertEqual(error, (ERR_INVALID_REQUEST,
                                 "/workspace/f/x: not a directory"))
        sid = new_id()
        st, error = PROXY.archive_head(sid, b"/workspace")
        self.assertEqual(error, (ERR_NOT_FOUND, "sandbox %s not found" % sid))

    def test_odd_names(self):
        for name in (b"caf\xe9", b"a b\nc", self.LATIN1):
            st, error = self.head(b"/workspace/" + name)
            self.assertIsNone(error, name)
            self.assertEqual(st[0], ARCHIVE_KIND_FILE, name)
        # 15 x 200 bytes of Latin-1: a URL of 9 KiB once encoded.
        deep = b"/workspace/deep" + (b"/" + b"\xe9" * 200) * 15
        st, error = self.head(deep + b"/end")
        self.assertIsNone(error)
        self.assertEqual(st[0], ARCHIVE_KIND_FILE)
        missing = deep + b"/nope\xe9"
        st, error = self.head(missing)
        self.assertEqual(error, (ERR_NOT_FOUND, missing.decode(
            "utf-8", "surrogateescape") + ": not found"))
        # Docker sends the stat as JSON: a target's Latin-1 comes as U+FFFD.
        st, error = self.head(b"/workspace/l\xe9")
        self.assertIsNone(error)
        self.assertEqual(st[5], "/workspace/d\ufffd".encode())


class Foreign(unittest.TestCase):
    """A container named like a sandbox but not made by this server."""

    @classmethod
    def setUpClass(cls):
        cls.name = "agent-sandbox-" + FOREIGN_ID
        docker("DELETE", "/containers/%s?force=true" % cls.name)
        status, obj = docker("POST", "/containers/create?name=" + cls.name, {
            "Image": IMAGE, "Cmd": ["sleep", "3600"],
            "Labels": {TEST_LABEL: INSTANCE}})
        assert status == 201, obj
        cls.cid = obj["Id"]
        status, _ = docker("POST", "/containers/%s/start" % cls.cid)
        assert status == 204

    @classmethod
    def tearDownClass(cls):
        docker("DELETE", "/containers/%s?force=true" % cls.cid)

    def test_refused(self):
        mtype, payload = PROXY.destroy(FOREIGN_ID)
        self.assertEqual(mtype, MSG_ERROR)
        kind, text = decode_error(payload)
        self.assertEqual(kind, ERR_FORBIDDEN)
        self.assertIn("not managed by this server", text)
        mtype, error, _, _ = PROXY.exec(FOREIGN_ID, ["true"])
        self.assertEqual(mtype, MSG_ERROR)
        self.assertEqual(error[0], ERR_FORBIDDEN)
        mtype, payload = PROXY.state(FOREIGN_ID)
        self.assertEqual(mtype, MSG_ERROR)
        # Left alone, still running, and named in the log.
        c = container(self.name)
        self.assertIsNotNone(c)
        self.assertEqual(c["Id"], self.cid)
        self.assertTrue(c["State"]["Running"])
        self.assertIn("refusing to destroy " + self.name, PROXY.log_text())
        self.assertIn("refusing to exec in " + self.name, PROXY.log_text())
        self.assertNotIn(FOREIGN_ID, PROXY.list())

    def test_archive_refused(self):
        stat, error, data, _ = PROXY.archive_get(FOREIGN_ID, "/etc/passwd",
                                                 ARCHIVE_WANT_FILE, 1 << 20)
        self.assertIsNone(stat)
        self.assertEqual(error[0], ERR_FORBIDDEN)
        self.assertEqual(data, b"")
        st, error = PROXY.archive_head(FOREIGN_ID, b"/etc/passwd")
        self.assertEqual((st, error[0]), (None, ERR_FORBIDDEN))
        mtype, error = PROXY.archive_put_pipe(
            FOREIGN_ID, "/workspace", make_tar([("planted", b"x", 0)]))
        self.assertEqual(error[0], ERR_FORBIDDEN)
        code = subprocess.run(["docker", "exec", self.name, "test", "-e",
                               "/workspace/planted"]).returncode
        self.assertNotEqual(code, 0)
        self.assertIn("refusing to read files of " + self.name,
                      PROXY.log_text())
        self.assertIn("refusing to write files to " + self.name,
                      PROXY.log_text())

    def test_create_over_foreign_name(self):
        mtype, payload = PROXY.create(FOREIGN_ID)
        self.assertEqual(mtype, MSG_ERROR)
        kind, text = decode_error(payload)
        self.assertEqual(kind, ERR_INVALID_REQUEST, text)
        self.assertEqual(container(self.name)["Id"], self.cid)
        # Our own volume was made, then removed again.
        self.assertIsNone(volume(self.name + "-workspace"))


class CreateFailures(unittest.TestCase):

    def test_missing_image(self):
        sid = new_id()
        image = "agent-sandbox/does-not-exist-%s:nope" % INSTANCE
        t0 = time.time()
        mtype, payload = PROXY.create(sid, image=image)
        self.assertEqual(mtype, MSG_ERROR)
        kind, text = decode_error(payload)
        self.assertEqual(kind, ERR_INVALID_REQUEST)
        self.assertTrue(text.startswith("cannot pull image %s: " % image),
                        text)
        self.assertLess(time.time() - t0, 60)
        self.assertIsNone(container("agent-sandbox-" + sid))
        self.assertIsNone(volume("agent-sandbox-%s-workspace" % sid))
        self.assertIsNone(container("agent-sandbox-%s-init" % sid))

    def test_bad_reference(self):
        mtype, payload = PROXY.create(new_id(), image="../../containers/x")
        self.assertEqual(mtype, MSG_ERROR)
        self.assertEqual(decode_error(payload)[0], ERR_INVALID_REQUEST)

    def test_root_user_refused(self):
        # A root uid or gid in the settings: the proxy does not start.
        for uid, gid in ((0, 0), (0, 1000), (1000, 0)):
            proxy = Proxy(ready=False, uid=uid, gid=gid)
            self.assertEqual(proxy.wait_exit(), 1)
            self.assertIn("PROXY_CONFIG: the sandbox user must not be root",
                          proxy.log_text())

    def test_network(self):
        sid = new_id()
        mtype, payload = PROXY.create(sid, network=True)
        self.assertEqual(mtype, MSG_DOCKER_DONE, describe(mtype, payload))
        try:
            c = container("agent-sandbox-" + sid)
            self.assertEqual(c["HostConfig"]["NetworkMode"], NETWORK)
            status, net = docker("GET", "/networks/" + NETWORK)
            self.assertEqual(net["Driver"], "bridge")
            self.assertEqual(
                net["Options"]["com.docker.network.bridge.enable_icc"],
                "false")
            self.assertEqual(net["Labels"]["io.agent-sandbox.managed"],
                             "true")
        finally:
            self.assertEqual(PROXY.destroy(sid)[0], MSG_DOCKER_DONE)

    def test_network_concurrent_ensure(self):
        docker("DELETE", "/networks/" + NETWORK)
        sids = [new_id() for _ in range(4)]
        peerids = [PROXY.request(MSG_DOCKER_CREATE, docker_create_payload(
            sid, network=True)) for sid in sids]
        try:
            for peerid in peerids:
                mtype, payload = PROXY.next(peerid, timeout=120)
                self.assertEqual(mtype, MSG_DOCKER_DONE,
                                 describe(mtype, payload))
            status, nets = docker("GET", "/networks")
            self.assertEqual([n["Name"] for n in nets].count(NETWORK), 1)
        finally:
            for sid in sids:
                PROXY.destroy(sid)


OWNER_REPO = "agent-sandbox/workspace-owner"


def owner_image(uid, gid):
    """The image the workspace-owner tag of uid:gid names, or None."""
    status, obj = docker("GET", "/images/%s/json" % urlquote(
        "%s:%d-%d" % (OWNER_REPO, uid, gid)))
    return obj if status == 200 else None


def owner_image_remove(uid, gid):
    img = owner_image(uid, gid)
    if img is not None:
        docker("DELETE", "/images/%s?force=true" % urlquote(img["Id"]))


def owner_uploads(proxy):
    """How many times the proxy uploaded the owner of /workspace (a tar
    to "/" of a sibling) instead of copying it from the image."""
    return len(re.findall(r"docker PUT /v1\.41/containers/[0-9a-f]{64}/"
                          r"archive\?path=%2F$", proxy.log_text(), re.M))


def wait_log(proxy, needle, count=1, timeout=20):
    deadline = time.time() + timeout
    while proxy.log_text().count(needle) < count:
        if time.time() > deadline:
            raise AssertionError("not in the proxy's log %d times: %s" %
                                 (count, needle))
        time.sleep(0.1)


class WorkspaceOwner(unittest.TestCase):
    """/workspace's owner is copied from the workspace-owner image into a
    sibling's mount of the volume; only without that image is it uploaded.
    Each test has a sandbox user of its own, hence an image of its own."""

    def setUp(self):
        self.proxies = []

    def tearDown(self):
        while self.proxies:
            self.close(self.proxies[-1][0])

    def proxy(self, uid, gid):
        proxy = Proxy(uid=uid, gid=gid)
        self.proxies.append((proxy, []))
        return proxy

    def close(self, proxy):
        """Its sandboxes destroyed, then the proxy stopped."""
        for entry in self.proxies:
            if entry[0] is proxy:
                self.proxies.remove(entry)
                for sid in entry[1]:
                    proxy.destroy(sid)
        proxy.stop()

    def create_owned(self, proxy, uid, gid, read_only=True):
        sid = new_id()
        mtype, payload = proxy.create(sid, read_only=read_only)
        self.assertEqual(mtype, MSG_DOCKER_DONE, describe(mtype, payload))
        for p, sids in self.proxies:
            if p is proxy:
                sids.append(sid)
        code, out, err = proxy.sh(sid, "stat -c %u:%g:%a /workspace && "
                                  "ls -A /workspace && touch /workspace/x")
        self.assertEqual((code, out, err), (0, "%d:%d:755\n" % (uid, gid),
                                            ""))
        self.assertIsNone(container("agent-sandbox-%s-init" % sid))
        return sid

    def imported(self, proxy, uid, gid):
        return proxy.log_text().count(
            "imported workspace-owner image %s:%d-%d, " % (OWNER_REPO, uid,
                                                          gid))

    def test_imported_once_then_copied_from(self):
        uid, gid = 1301, 1302
        owner_image_remove(uid, gid)
        self.addCleanup(owner_image_remove, uid, gid)
        proxy = self.proxy(uid, gid)
        # The first create asks for the image; it need not wait for it.
        self.create_owned(proxy, uid, gid)
        wait_log(proxy, "imported workspace-owner image %s:%d-%d, " %
                 (OWNER_REPO, uid, gid))
        img = owner_image(uid, gid)
        self.assertEqual(len(img["RootFS"]["Layers"]), 1)
        self.assertEqual(img["Size"], 0)
        uploads = owner_uploads(proxy)
        for read_only in (True, False):
            self.create_owned(proxy, uid, gid, read_only=read_only)
        self.assertEqual(owner_uploads(proxy), uploads)
        self.close(proxy)
        # A server started later finds it and imports nothing.
        proxy = self.proxy(uid, gid)
        self.create_owned(proxy, uid, gid)
        self.create_owned(proxy, uid, gid)
        self.assertIn("found workspace-owner image %s:%d-%d, %s" %
                      (OWNER_REPO, uid, gid, img["Id"]), proxy.log_text())
        self.assertEqual(self.imported(proxy, uid, gid), 0)
        self.assertEqual(owner_uploads(proxy), 0)

    def test_image_gone_between_creates(self):
        uid, gid = 1311, 1312
        self.addCleanup(owner_image_remove, uid, gid)
        proxy = self.proxy(uid, gid)
        self.create_owned(proxy, uid, gid)
        wait_log(proxy, "workspace-owner image %s:%d-%d, " %
                 (OWNER_REPO, uid, gid))
        img = owner_image(uid, gid)
        imported = self.imported(proxy, uid, gid)
        uploads = owner_uploads(proxy)
        # An image prune: the create that finds it gone uploads...
        owner_image_remove(uid, gid)
        self.create_owned(proxy, uid, gid)
        self.assertIn("workspace-owner image %s is gone" % img["Id"],
                      proxy.log_text())
        self.assertEqual(owner_uploads(proxy), uploads + 1)
        # ... and the next one has it made again, for the ones after it.
        self.create_owned(proxy, uid, gid)
        wait_log(proxy, "imported workspace-owner image %s:%d-%d, " %
                 (OWNER_REPO, uid, gid), count=imported + 1)
        self.assertIsNotNone(owner_image(uid, gid))
        uploads = owner_uploads(proxy)
        self.create_owned(proxy, uid, gid)
        self.assertEqual(owner_uploads(proxy), uploads)

    def test_other_image_under_the_tag_is_not_used(self):
        # Something else tagged as the image, with a file in /workspace.
        uid, gid = 1321, 1322
        owner_image_remove(uid, gid)
        self.addCleanup(owner_image_remove, uid, gid)
        planted = make_tar([("workspace/", None, uid),
                            ("workspace/planted", b"x", uid)])
        conn = harness.UnixHTTPConnection(harness.DOCKER_SOCKET)
        conn.request("POST", "/v1.41/images/create?fromSrc=-&repo=%s&tag="
                     "%d-%d" % (urlquote(OWNER_REPO), uid, gid),
                     body=planted,
                     headers={"Content-Type": "application/x-tar"})
        resp = conn.getresponse()
        self.assertEqual(resp.status, 200)
        resp.read()
        conn.close()
        foreign = owner_image(uid, gid)["Id"]
        self.addCleanup(docker, "DELETE", "/images/%s?force=true" %
                        urlquote(foreign))
        proxy = self.proxy(uid, gid)
        # Empty and the user's, before and after the image is made.
        self.create_owned(proxy, uid, gid)
        wait_log(proxy, "imported workspace-owner image %s:%d-%d, " %
                 (OWNER_REPO, uid, gid))
        self.assertIn("is not the workspace-owner image this server makes",
                      proxy.log_text())
        self.create_owned(proxy, uid, gid)
        self.assertNotEqual(owner_image(uid, gid)["Id"], foreign)

def stop_module_proxy(proxy):
    """tearDownModule of a module whose tests share one Proxy: it must
    still run, and stop cleanly (a death means a filter killed it)."""
    if proxy is None:
        return
    alive = proxy.proc.poll() is None
    proxy.stop()
    if not alive or proxy.proc.returncode != 0:
        print(proxy.log_text(), file=sys.stderr)
    assert alive, "dockerd-proxy died (seccomp?)"
    assert proxy.proc.returncode == 0, \
        "dockerd-proxy exited with %d" % proxy.proc.returncode


def run_module(images=(IMAGE,)):
    """main() of a module of proxy tests: root, Docker and the images or
    a skip, then the tests, then Docker cleaned of what they left."""
    harness.require_root_and_docker()
    for image in images:
        status, _ = docker("GET", "/images/%s/json" % urlquote(image))
        if status != 200:
            print("SKIP: test image %s is missing (scripts/build-images)" %
                  image, file=sys.stderr)
            sys.exit(harness.SKIP)
    try:
        result = unittest.main(exit=False, verbosity=2).result
    finally:
        cleanup_docker()
    sys.exit(0 if result.wasSuccessful() else 1)


def main():
    run_module()


if __name__ == "__main__":
    main()
