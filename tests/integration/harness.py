"""Start the real daemons against the real dockerd, and talk to them.

Used by the integration tests.  Standard library only.  A test module calls
harness.require_root_and_docker() first: without root or Docker it exits 77,
which automake reports as SKIP.
"""

import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import unittest
import time

DOCKER_SOCKET = "/var/run/docker.sock"
SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.environ.get("AGENT_SANDBOX_SRCDIR",
                        os.path.dirname(os.path.dirname(HERE)))
BUILDDIR = os.environ.get("AGENT_SANDBOX_BUILDDIR", SRCDIR)
# managerd's own user; scripts/test creates it (scripts/common.sh).
# The OCI runtime the integration tests run sandboxes under ("": Docker's
# default); see scripts/test --runtime.
RUNTIME = os.environ.get("AGENT_SANDBOX_TEST_RUNTIME", "")
# Under gVisor, Docker's process limit counts the host threads of the
# sandbox's gVisor kernel, not its processes (docs/configuration.md).
GVISOR = RUNTIME.startswith("runsc")
# The daemons are a build with ASan and UBSan (scripts/test --sanitizers).
SANITIZERS = os.environ.get("AGENT_SANDBOX_TEST_SANITIZERS") == "1"
MANAGERD_USER = os.environ.get("AGENT_SANDBOX_MANAGERD_USER", "agent-sandbox")
# The server's Docker behind a socket proxy (scripts/test's socket proxy
# pass, docs/socket-proxy.md): DOCKER_HOST for every server whose test
# does not name a Docker of its own.
DOCKER_HOST = os.environ.get("AGENT_SANDBOX_TEST_DOCKER_HOST", "")
TEST_KEY = "test-key-0123456789abcdef"


def docker_request(method, path, sock=DOCKER_SOCKET, body=None, timeout=30):
    """One request to the Docker Engine API; returns (status, bytes)."""
    conn = UnixHTTPConnection(sock, timeout=timeout)
    try:
        headers = {}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout=30):
        super().__init__("docker", timeout=timeout)
        self.unix_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.unix_path)


def docker_available():
    try:
        status, body = docker_request("GET", "/_ping", timeout=5)
        return status == 200
    except OSError:
        return False


def require_root_and_docker():
    if os.geteuid() != 0:
        print("SKIP: integration tests need root", file=sys.stderr)
        sys.exit(SKIP)
    if not docker_available():
        print("SKIP: no Docker daemon answers at %s" % DOCKER_SOCKET,
              file=sys.stderr)
        sys.exit(SKIP)


def binaries():
    """Where managerd and its children are: installed, or the build tree."""
    prefix = os.environ.get("AGENT_SANDBOX_TEST_PREFIX")
    if prefix:
        return (os.path.join(prefix, "sbin", "managerd"),
                os.path.join(prefix, "libexec", "agent-sandbox"))
    libexec = tempfile.mkdtemp(prefix="as-libexec-")
    for name, sub in (("apid", "apid"), ("dockerd-proxy", "dockerd-proxy"),
                      ("archive-worker", "archive-worker"),
                      ("netns-helper", "netns-helper"),
                      ("egress-proxy", "egress-proxy")):
        os.symlink(os.path.join(BUILDDIR, sub, name),
                   os.path.join(libexec, name))
    return os.path.join(BUILDDIR, "managerd", "managerd"), libexec


def binaries_release(libexec):
    """Undo binaries(): the directory of links it made for the build tree,
    never the installed one (AGENT_SANDBOX_TEST_PREFIX)."""
    if not os.environ.get("AGENT_SANDBOX_TEST_PREFIX"):
        shutil.rmtree(libexec, ignore_errors=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    """One managerd (with its apid and dockerd-proxy) on a private data dir."""

    def __init__(self, **settings):
        self.port = free_port()
        self.tmp = tempfile.mkdtemp(prefix="as-test-")
        self.data_dir = os.path.join(self.tmp, "data")
        self.log_path = os.path.join(self.tmp, "server.log")
        self.managerd, self.libexec = binaries()
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "AGENT_SANDBOX_API_KEYS": TEST_KEY,
            "AGENT_SANDBOX_HOST": "127.0.0.1",
            "AGENT_SANDBOX_PORT": str(self.port),
            "AGENT_SANDBOX_DATA_DIR": self.data_dir,
            "AGENT_SANDBOX_LIBEXEC_DIR": self.libexec,
            "AGENT_SANDBOX_SECCOMP": "kill",
        }
        # scripts/test --runtime runsc: every sandbox under that runtime.
        if RUNTIME:
            self.env["AGENT_SANDBOX_DOCKER_RUNTIME"] = RUNTIME
        if DOCKER_HOST:
            self.env["DOCKER_HOST"] = DOCKER_HOST
        self.env.update({k: str(v) for k, v in settings.items()})
        self.proc = None
        self.log = None
        self.log_start = 0

    def start(self, wait=True):
        self.log = open(self.log_path, "ab")
        # A restart appends to the same log: look only at what comes next.
        self.log_start = self.log.tell()
        cmd = self.managerd if isinstance(self.managerd, list) \
            else [self.managerd]
        self.proc = subprocess.Popen(cmd, env=self.env,
                                     stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=self.log)
        if wait:
            self.wait_ready()
        return self

    def wait_ready(self, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("managerd exited with %s:\n%s" %
                                     (self.proc.returncode, self.log_text()))
            if "ready on" in self.log_text()[self.log_start:]:
                return
            time.sleep(0.05)
        raise AssertionError("server not ready:\n" + self.log_text())

    def log_text(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def children(self):
        """{name: pid} of managerd's processes: the spawner, managerd's
        only child, and the spawner's children (apid, dockerd-proxy,
        archive-worker)."""
        result = proc_children(self.proc.pid)
        if "spawner" in result:
            result.update(proc_children(result["spawner"]))
        return result

    def request(self, method, path, body=None, headers=None, timeout=30):
        """Returns (status, headers dict (lower-case names), body bytes)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                          timeout=timeout)
        try:
            hdrs = dict(headers or {})
            data = None
            if body is not None:
                data = body if isinstance(body, bytes) else \
                    json.dumps(body).encode()
                hdrs.setdefault("Content-Type", "application/json")
            conn.request(method, path, body=data, headers=hdrs)
            resp = conn.getresponse()
            return (resp.status,
                    {k.lower(): v for k, v in resp.getheaders()},
                    resp.read())
        finally:
            conn.close()

    def kill9(self, timeout=10):
        """kill -9 managerd, then wait until every process it started has
        gone too, as a supervisor would before it starts the service again
        (the old apid holds the listening port until it has seen managerd
        go).  Returns {name: pid} of the processes that were killed with
        it; AssertionError if one outlives the timeout."""
        kids = self.children()
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout)
        for name, pid in kids.items():
            if not pid_gone(pid, timeout):
                raise AssertionError("%s (pid %d) outlived managerd" %
                                     (name, pid))
        if self.log is not None:
            self.log.close()
            self.log = None
        return kids

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.log is not None:
            self.log.close()
            self.log = None

    def cleanup(self):
        self.stop()
        report = sanitizer_report(self.log_text())
        shutil.rmtree(self.tmp, ignore_errors=True)
        binaries_release(self.libexec)
        if report:
            raise AssertionError("a sanitizer report in the server's "
                                 "log:\n" + report)


# What ASan, LeakSanitizer and UBSan write first in a report (UBSan's
# "runtime error:" only after a source location, which Docker's own
# "OCI runtime error:" never has).
SANITIZER_REPORT = re.compile(r"ERROR: AddressSanitizer|ERROR: LeakSanitizer"
                              r"|SUMMARY: UndefinedBehaviorSanitizer"
                              r"|\.[ch]:\d+:\d+: runtime error:")


# A stack frame the sanitizer could not name: "(/path/to/binary+0x1f2e)".
UNNAMED_FRAME = re.compile(r"\((/[^()+]+)\+(0x[0-9a-f]+)\)")


def symbolize(line):
    """A frame named with addr2line, where the sanitizer could not name it:
    its symbolizer is a program it runs, and a daemon's seccomp filter
    does not let it run one."""
    m = UNNAMED_FRAME.search(line)
    if m is None or not os.path.exists(m.group(1)):
        return line
    try:
        out = subprocess.run(["addr2line", "-f", "-i", "-C", "-e",
                              m.group(1), m.group(2)], capture_output=True,
                             text=True, timeout=10).stdout.split("\n")
    except (OSError, subprocess.SubprocessError):
        return line
    names = ["%s %s" % (out[i], out[i + 1]) for i in range(0, len(out) - 1, 2)
             if out[i] != "??"]
    return line + ("  [" + "; ".join(names) + "]" if names else "")


def sanitizer_report(text):
    """The first sanitizer report in a log and what follows it, or "": in
    a build with --enable-sanitizers (scripts/test --sanitizers) a test
    whose server logged one fails in Server.cleanup.  Frames the report
    left unnamed are named here (symbolize)."""
    m = SANITIZER_REPORT.search(text)
    if m is None:
        return ""
    start = text.rfind("\n", 0, m.start()) + 1
    return "\n".join(symbolize(line)
                     for line in text[start:].splitlines()[:80])


def proc_children(pid):
    """{comm: pid} of a process's children."""
    result = {}
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            kids = [int(x) for x in f.read().split()]
    except OSError:
        return result
    for kid in kids:
        try:
            with open("/proc/%d/comm" % kid) as f:
                result[f.read().strip()] = kid
        except OSError:
            pass
    return result


def memory_count(pid, needle):
    """How often needle is in the writable memory of a process."""
    hits = 0
    with open("/proc/%d/maps" % pid) as maps, \
            open("/proc/%d/mem" % pid, "rb", 0) as mem:
        for line in maps:
            span, perms = line.split()[:2]
            if "r" not in perms or "w" not in perms:
                continue
            lo, hi = [int(x, 16) for x in span.split("-")]
            try:
                mem.seek(lo)
                hits += mem.read(hi - lo).count(needle)
            except OSError:
                pass
    return hits


def proc_status(pid):
    """/proc/<pid>/status as a dict."""
    fields = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields


def pid_gone(pid, timeout):
    """Wait until pid no longer exists (or is a zombie); True if so."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with open("/proc/%d/stat" % pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            if state == "Z":
                return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


# --- helpers for tests that make sandboxes ---------------------------------

TEST_IMAGE = os.environ.get("AGENT_SANDBOX_TEST_IMAGE",
                            "agent-sandbox/busybox:test")
PY_IMAGE = os.environ.get("AGENT_SANDBOX_TEST_PY_IMAGE",
                          "agent-sandbox/debian-python:bookworm")
AUTH = {"Authorization": "Bearer " + TEST_KEY}


class SandboxServer(Server):
    """A server set up like the reference's integration fixture: the test
    image as default, 128 MiB default memory, 30 s default exec timeout."""

    def __init__(self, **settings):
        base = {
            "AGENT_SANDBOX_DEFAULT_IMAGE": TEST_IMAGE,
            "AGENT_SANDBOX_DEFAULT_MEMORY_MB": "128",
            "AGENT_SANDBOX_DEFAULT_EXEC_TIMEOUT_SECONDS": "30",
            "AGENT_SANDBOX_NETWORK_NAME": "agent-sandbox-test-net",
            # The reference's fixture: "network": true is its shared
            # bridge.  test_egress.py runs the default (public, through
            # the egress proxy) with test networks of its own.
            "AGENT_SANDBOX_NETWORK_TRUE": "bridge",
        }
        if GVISOR:
            base["AGENT_SANDBOX_DEFAULT_PIDS_LIMIT"] = "4096"
        base.update(settings)
        super().__init__(**base)

    def api(self, method, path, body=None, headers=None, timeout=120):
        """JSON in, (status, parsed JSON or raw bytes) out."""
        hdrs = dict(AUTH)
        hdrs.update(headers or {})
        status, _, data = self.request(method, path, body=body, headers=hdrs,
                                       timeout=timeout)
        try:
            return status, json.loads(data) if data else None
        except ValueError:
            return status, data

    def create(self, **spec):
        status, doc = self.api("POST", "/v1/sandboxes", spec)
        if status != 201:
            raise AssertionError("create failed: %s %r" % (status, doc))
        return doc

    def exec(self, sandbox_id, command, **kw):
        body = {"command": command}
        body.update(kw)
        status, doc = self.api("POST", "/v1/sandboxes/%s/exec" % sandbox_id,
                               body)
        if status != 200:
            raise AssertionError("exec failed: %s %r" % (status, doc))
        return doc

    def instance_id(self):
        with open(os.path.join(self.data_dir, "instance-id")) as f:
            return f.read().strip()

    def docker_objects(self):
        """(container names, volume names) carrying this server's label."""
        return docker_objects_labelled(
            "io.agent-sandbox.instance=" + self.instance_id())

    def cleanup(self):
        try:
            iid = self.instance_id()
        except OSError:
            iid = None
        try:
            super().cleanup()
        finally:
            if iid:
                remove_labelled("io.agent-sandbox.instance=" + iid)


def _label_filter(label):
    import urllib.parse
    return urllib.parse.quote(json.dumps({"label": [label]}))


def docker_objects_labelled(label):
    status, body = docker_request(
        "GET", "/containers/json?all=1&filters=" + _label_filter(label))
    containers = [c["Names"][0].lstrip("/") for c in json.loads(body)]
    status, body = docker_request(
        "GET", "/volumes?filters=" + _label_filter(label))
    volumes = [v["Name"] for v in (json.loads(body).get("Volumes") or [])]
    return containers, volumes


def remove_labelled(label):
    """Force-remove every container and volume with this label."""
    containers, volumes = docker_objects_labelled(label)
    for name in containers:
        docker_request("DELETE", "/containers/%s?force=true&v=true" % name)
    for name in volumes:
        docker_request("DELETE", "/volumes/%s?force=true" % name)


def container_inspect(name):
    status, body = docker_request("GET", "/containers/%s/json" % name)
    return status, (json.loads(body) if status == 200 else None)


CLI = os.path.join(BUILDDIR, "client", "agent-sandbox")


def cli_env(server, **extra):
    """The CLI's environment for this server, under its kill filter (the
    default, said here: a forbidden call kills the CLI)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "AGENT_SANDBOX_URL": "http://127.0.0.1:%d" % server.port,
           "AGENT_SANDBOX_API_KEY": TEST_KEY,
           "AGENT_SANDBOX_SECCOMP": "kill"}
    env.update(extra)
    return env


def run_cli(server, *args, stdin=None, env=None, timeout=60):
    """The CLI run once: (exit status, stdout bytes, stderr text)."""
    p = subprocess.run([CLI] + list(args), input=stdin,
                       stdin=None if stdin is not None else subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=env or cli_env(server), timeout=timeout)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def daemon_pids(server):
    pids = {"managerd": server.proc.pid}
    pids.update(server.children())
    return pids


def rss_kib(pid):
    return int(proc_status(pid)["VmRSS"].split()[0])


class SandboxCase(unittest.TestCase):
    """One SandboxServer for the class; create() deletes what it made
    when the test ends."""

    @classmethod
    def setUpClass(cls):
        cls.server = SandboxServer().start()

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def create(self, **spec):
        doc = self.server.create(**spec)
        self.addCleanup(self.server.api, "DELETE",
                        "/v1/sandboxes/" + doc["id"])
        return doc
