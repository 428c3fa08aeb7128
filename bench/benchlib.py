"""What the benchmarks share: timing and percentiles, interleaved rounds,
HTTP to the server and to Docker with the whole response read, the bare
Docker floor (a hardened container with a volume, made directly), the
load generators, the run's header, and cleanup that also runs on Ctrl-C.

Standard library only; uses tests/integration/harness.py for the server.
"""

import datetime
import http.client
import json
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(SRCDIR, "tests", "integration"))
import harness  # noqa: E402

MIB = 1024 * 1024
CHUNK = 256 * 1024
# Every container and volume the bare side makes carries this label with
# the bench's pid as its value, so cleanup finds them all, even one made
# just before an interruption.
RAW_LABEL = "io.agent-sandbox.bench"
HTTPLOAD = os.path.join(harness.BUILDDIR, "bench", "httpload")


# --- timing ----------------------------------------------------------------

def pct(values, p):
    """Nearest-rank percentile (p95 of 20 values is the 19th)."""
    values = sorted(values)
    k = max(0, min(len(values) - 1,
                   int(round(p / 100.0 * len(values))) - 1))
    return values[k]


def p50(values):
    return statistics.median(values)


def timed(fn, rounds, after=None):
    """Wall time of fn() in ms, rounds times; after() runs untimed."""
    out = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000.0)
        if after is not None:
            after()
    return out


def interleaved(sides, rounds, warmup=1, before=None):
    """Time several sides of one comparison in alternating order.

    sides: [(name, fn, after)]; after may be None.  Every round runs each
    side once, and every other round in the reverse order (A B, B A, ...),
    so that a slow spell of the host, the page cache or Docker falls on
    both sides alike and neither always follows the other.  warmup rounds
    run first, untimed.  before() (settling, untimed) runs before each
    timed call, after() of a side right after its call.  Returns {name:
    [ms, ...]}."""
    out = {name: [] for name, _, _ in sides}
    for r in range(-warmup, rounds):
        order = sides if r % 2 == 0 else list(reversed(sides))
        for name, fn, after in order:
            if before is not None:
                before()
            t = time.perf_counter()
            fn()
            ms = (time.perf_counter() - t) * 1000.0
            if r >= 0:
                out[name].append(ms)
            if after is not None:
                after()
    return out


def drop_dirty():
    """Write back dirty pages (untimed) so that one side's writes are not
    flushed during the other side's round."""
    os.sync()


# --- HTTP, whole responses ---------------------------------------------------

class Failed(Exception):
    pass


def _exchange(conn, method, path, body, headers, sink):
    conn.request(method, path, body=body, headers=headers)
    resp = conn.getresponse()
    got = []
    while True:
        chunk = resp.read(CHUNK)
        if not chunk:
            break
        if sink is None:
            got.append(chunk)
        else:
            sink(chunk)
    return resp.status, b"".join(got)


def _body(body, length, content_type, headers):
    """bytes, a dict (sent as JSON) or a file object with its length."""
    if isinstance(body, dict):
        body = json.dumps(body).encode()
        content_type = "application/json"
    if body is not None:
        headers["Content-Type"] = content_type
        if length is not None:
            headers["Content-Length"] = str(length)
    return body


def server_call(server, method, path, body=None, length=None, sink=None,
                want=None, timeout=600):
    """One request to the server on a new connection, as a client makes
    it: the response is read to its end (into sink in pieces, or kept).
    Returns (status, bytes); with want, anything else is Failed."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port,
                                      timeout=timeout, blocksize=CHUNK)
    try:
        hdrs = dict(harness.AUTH)
        data = _body(body, length, "application/octet-stream", hdrs)
        status, out = _exchange(conn, method, path, data, hdrs, sink)
    finally:
        conn.close()
    if want is not None and status != want:
        raise Failed("%s %s: HTTP %s, expected %s: %r" %
                     (method, path, status, want, out[:300]))
    return status, out


def server_json(server, method, path, body=None, want=None, timeout=600):
    status, out = server_call(server, method, path, body=body, want=want,
                              timeout=timeout)
    return json.loads(out) if out else None


def docker_call(method, path, body=None, length=None, sink=None, want=None,
                timeout=600):
    """One request to Docker's socket, the response read to its end."""
    conn = harness.UnixHTTPConnection(harness.DOCKER_SOCKET, timeout=timeout)
    conn.blocksize = CHUNK  # file bodies go in pieces of this size
    try:
        hdrs = {}
        data = _body(body, length, "application/x-tar", hdrs)
        status, out = _exchange(conn, method, path, data, hdrs, sink)
    finally:
        conn.close()
    if want is not None and status not in (
            want if isinstance(want, tuple) else (want,)):
        raise Failed("docker %s %s: HTTP %s, expected %s: %r" %
                     (method, path, status, want, out[:300]))
    return status, out


def docker_json(method, path, body=None, want=None, timeout=600):
    status, out = docker_call(method, path, body=body, want=want,
                              timeout=timeout)
    return json.loads(out) if out else None


def drop(_chunk):
    pass


# --- tar ---------------------------------------------------------------------

def write_tar(path, members, mtime=None):
    """A tar at path of (name, size or None for a directory, source file
    or None for random bytes); members owned by the sandbox user, as the
    server's upload writes them.  Returns path."""
    mtime = int(time.time()) if mtime is None else mtime
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as t:
        for name, size, src in members:
            info = tarfile.TarInfo(name)
            info.uid = info.gid = 1000
            info.mtime = mtime
            if size is None:
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                t.addfile(info)
                continue
            info.size = size
            info.mode = 0o644
            with open(src, "rb") as f:
                t.addfile(info, f)
    return path


def random_file(path, size):
    with open(path, "wb") as f:
        left = size
        while left > 0:
            n = min(left, MIB)
            f.write(os.urandom(n))
            left -= n
    return path


# --- the bare Docker floor ---------------------------------------------------

class RawDocker:
    """Hardened containers with a volume on /workspace, made with the
    Engine API directly, as the server makes a sandbox (less the
    ownership of /workspace, which the floor does not do)."""

    def __init__(self, image):
        self.image = image
        self.label = "%s=%d" % (RAW_LABEL, os.getpid())
        self.n = 0

    def create(self):
        """Volume, container, start: the create floor.  Returns the
        container's name (its volume is name + "-ws")."""
        self.n += 1
        name = "as-bench-%d-%d" % (os.getpid(), self.n)
        vol = name + "-ws"
        labels = {RAW_LABEL: str(os.getpid())}
        docker_call("POST", "/volumes/create",
                    body={"Name": vol, "Labels": labels}, want=201)
        return self._sandbox_container(name, vol, labels)

    def _sandbox_container(self, name, vol, labels):
        docker_call("POST", "/containers/create?name=" + name, want=201, body={
            "Image": self.image,
            "Entrypoint": ["/bin/sh", "-c", "trap 'exit 0' TERM INT; "
                           "while :; do sleep 3600 & wait; done"],
            "Cmd": [], "Hostname": "sandbox", "User": "1000:1000",
            "WorkingDir": "/workspace", "Labels": labels,
            "HostConfig": {
                "Mounts": [{"Type": "volume", "Source": vol,
                            "Target": "/workspace",
                            "VolumeOptions": {"NoCopy": True}}],
                "Tmpfs": {"/tmp": "rw,nosuid,nodev,size=256m,mode=1777"},
                "ReadonlyRootfs": True, "CapDrop": ["ALL"],
                "SecurityOpt": ["no-new-privileges:true"],
                "PidsLimit": 256, "Memory": 512 << 20,
                "MemorySwap": 512 << 20, "NanoCpus": 1000000000,
                "IpcMode": "private", "Init": True,
                "NetworkMode": "none"}})
        docker_call("POST", "/containers/%s/start" % name, want=204)
        return name

    def create_reference(self):
        """The create the Python reference makes (its docker backend):
        the volume, a helper container that chowns /workspace as root
        with CAP_CHOWN alone (create, start, wait, remove), then the
        sandbox's container and its start.  The floor of the issue's
        rollback and fork rows."""
        self.n += 1
        name = "as-bench-%d-%d" % (os.getpid(), self.n)
        vol = name + "-ws"
        labels = {RAW_LABEL: str(os.getpid())}
        docker_call("POST", "/volumes/create",
                    body={"Name": vol, "Labels": labels}, want=201)
        helper = name + "-init"
        docker_call("POST", "/containers/create?name=" + helper, want=201,
                    body={
                        "Image": self.image,
                        "Entrypoint": ["chown", "1000:1000", "/workspace"],
                        "Cmd": [], "User": "0:0", "Labels": labels,
                        "HostConfig": {
                            "Mounts": [{"Type": "volume", "Source": vol,
                                        "Target": "/workspace",
                                        "VolumeOptions": {"NoCopy": True}}],
                            "CapDrop": ["ALL"], "CapAdd": ["CHOWN"],
                            "SecurityOpt": ["no-new-privileges:true"],
                            "NetworkMode": "none", "ReadonlyRootfs": True}})
        docker_call("POST", "/containers/%s/start" % helper, want=204)
        code = docker_json("POST", "/containers/%s/wait" % helper,
                           want=200)["StatusCode"]
        docker_call("DELETE", "/containers/%s?force=true" % helper,
                    want=204)
        if code != 0:
            raise Failed("the reference's chown helper exited %s" % code)
        return self._sandbox_container(name, vol, labels)

    def remove(self, name):
        """Container and volume: the first half of the rollback floor."""
        docker_call("DELETE", "/containers/%s?force=true&v=true" % name,
                    want=(204, 404))
        docker_call("DELETE", "/volumes/%s-ws?force=true" % name,
                    want=(204, 404))

    def exec(self, container, cmd, user="1000:1000", timeout=600):
        """exec create + start (output read to its end) + inspect: the
        exec floor.  Returns the exit code."""
        doc = docker_json("POST", "/containers/%s/exec" % container,
                          want=201, body={
                              "AttachStdout": True, "AttachStderr": True,
                              "Tty": False, "Cmd": cmd, "User": user,
                              "WorkingDir": "/workspace"})
        docker_call("POST", "/exec/%s/start" % doc["Id"], want=200,
                    body={"Detach": False, "Tty": False}, timeout=timeout)
        return docker_json("GET", "/exec/%s/json" % doc["Id"],
                           want=200)["ExitCode"]

    def put_tar(self, container, path, directory="/workspace"):
        """PUT a tar file into a directory of a container."""
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            docker_call("PUT", "/containers/%s/archive?path=%s" %
                        (container, urllib.parse.quote(directory)),
                        body=f, length=size, want=200)

    def cleanup(self):
        harness.remove_labelled(self.label)


def pax_comment_header():
    """A pax extended header with one comment record, as dockerd-proxy
    primes an upload's PUT with (dockerd-proxy/docker_archive_prime.c)."""
    return tarfile.TarInfo._create_pax_generic_header(
        {"comment": "agent-sandbox prime"}, tarfile.XHDTYPE, "utf-8")


def late_put(container, tar, delay, primed):
    """Docker's archive PUT of tar (bytes) into /workspace whose tar comes
    delay seconds after the head (after a pax header when primed), as an
    upload's body arrives: ms from the tar's first byte to the answer."""
    prime = pax_comment_header() if primed else b""
    sock = socket.socket(socket.AF_UNIX)
    sock.connect(harness.DOCKER_SOCKET)
    try:
        sock.sendall(("PUT /containers/%s/archive?path=/workspace HTTP/1.1"
                      "\r\nHost: docker\r\nContent-Type: application/x-tar"
                      "\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" %
                      (container, len(prime) + len(tar))).encode() + prime)
        time.sleep(delay)
        t = time.perf_counter()
        sock.sendall(tar)
        head = sock.recv(4096)
        ms = (time.perf_counter() - t) * 1000.0
    finally:
        sock.close()
    if not head.startswith(b"HTTP/1.1 200 "):
        raise Failed("late archive PUT: %r" % head[:200])
    return ms


def root_sh(container, script):
    """Run a shell script as root in a container (setup, untimed)."""
    raw = RawDocker(None)
    code = raw.exec(container, ["sh", "-c", script], user="0:0")
    if code != 0:
        raise Failed("%r in %s exited %s" % (script, container, code))


def instance_objects(server):
    """[(name, state)] of the containers of a server's instance."""
    label = "io.agent-sandbox.instance=" + server.instance_id()
    docs = docker_json("GET", "/containers/json?all=1&filters=" +
                       urllib.parse.quote(json.dumps({"label": [label]})))
    return sorted((d["Names"][0].lstrip("/"), d["State"]) for d in docs)


def settle(servers, timeout=15.0, step=0.25):
    """Wait (untimed) until the containers of these servers stay the same
    for two looks in a row: background work a create, delete or rollback
    left (a sibling container's removal, a pool's refill) is over."""
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        now = [instance_objects(s) for s in servers]
        if now == last and not any(st in ("created", "removing")
                                   for objs in now for _, st in objs):
            return
        last = now
        time.sleep(step)


# --- load generators ---------------------------------------------------------

def wrk(port, path, seconds, conns, key=None):
    """wrk on the server's TCP port: (requests/s, non-2xx count)."""
    cmd = ["wrk", "-t2", "-c%d" % conns, "-d%ds" % seconds]
    if key:
        cmd += ["-H", "Authorization: Bearer " + key]
    out = subprocess.run(cmd + ["http://127.0.0.1:%d%s" % (port, path)],
                         capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return rps, int(errors.group(1)) if errors else 0


def httpload(seconds, conns, path, port=None, sock=None, key=None):
    """bench/httpload (closed loop, kept alive; reaches unix sockets)."""
    cmd = [HTTPLOAD, "-c", str(conns), "-d", str(seconds)]
    if key:
        cmd += ["-H", "Authorization: Bearer " + key]
    cmd += ["-u", sock] if sock else ["-p", str(port)]
    out = subprocess.run(cmd + [path], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out)


# --- memory ------------------------------------------------------------------

DAEMONS = ("managerd", "apid", "dockerd-proxy")


def daemon_status(server, field):
    """{daemon: KiB} of a /proc/<pid>/status field (VmRSS, VmHWM) of
    managerd, apid and dockerd-proxy."""
    pids = harness.daemon_pids(server)
    return {n: int(harness.proc_status(pids[n])[field].split()[0])
            for n in DAEMONS if n in pids}


def daemon_smaps(server, field):
    """{daemon: KiB} of a /proc/<pid>/smaps_rollup field (Pss,
    Private_Dirty...) of managerd, apid and dockerd-proxy: Pss shares
    each page among the processes that map it, where VmRSS counts a
    shared library page once per process."""
    out = {}
    for n, pid in harness.daemon_pids(server).items():
        if n not in DAEMONS:
            continue
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    out[n] = int(line.split()[1])
    return out


# --- the run -----------------------------------------------------------------

def git_commit():
    """Short commit of the tree, with -dirty if tracked files differ."""
    def git(*args):
        return subprocess.run(["git", "-C", SRCDIR] + list(args),
                              capture_output=True, text=True)
    r = git("rev-parse", "--short", "HEAD")
    if r.returncode != 0:
        return "unknown"
    dirty = git("diff", "--quiet", "HEAD", "--").returncode != 0
    return r.stdout.strip() + ("-dirty" if dirty else "")


def docker_version():
    try:
        return docker_json("GET", "/version")["Version"]
    except (OSError, Failed, KeyError, ValueError):
        return "unknown"


def foreign_containers(servers=()):
    """Running containers that are neither this bench's bare ones nor
    those of these servers: other workloads on the same daemon make the
    numbers noisy."""
    mine = str(os.getpid())
    ours = set(s.instance_id() for s in servers)
    n = 0
    for d in docker_json("GET", "/containers/json"):
        labels = d.get("Labels") or {}
        if labels.get(RAW_LABEL) == mine or \
                labels.get("io.agent-sandbox.instance") in ours:
            continue
        n += 1
    return n


def run_info(image, mode):
    load = os.getloadavg()
    return {
        "date": datetime.datetime.now(datetime.timezone.utc)
        .strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": git_commit(),
        "cpus": os.cpu_count(),
        "kernel": platform.release(),
        "docker": docker_version(),
        "image": image,
        "mode": mode,
        "load": "%.2f/%.2f/%.2f" % load,
        "others": foreign_containers(),
    }


HEADER_KEYS = ("date", "commit", "cpus", "kernel", "docker", "image", "mode",
               "load", "others")


def header_line(info):
    """The run's name and conditions, one line: 'run <date> <commit>'
    then key=value pairs, always in this order."""
    return "run %s %s  " % (info["date"], info["commit"]) + " ".join(
        "%s=%s" % (k, info[k]) for k in HEADER_KEYS[2:])


def run_name(info):
    return "%s %s" % (info["date"], info["commit"])


# --- cleanup -----------------------------------------------------------------

class Resources:
    """Servers, bare containers and temporary directories of one run,
    all removed on leaving the with block, whatever ends it: an
    exception, Ctrl-C, or SIGTERM/SIGHUP (turned into SystemExit)."""

    def __init__(self):
        self.undo = []

    def __enter__(self):
        def stop(signum, _frame):
            raise SystemExit(128 + signum)
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, stop)
        return self

    def add(self, what, fn):
        self.undo.append((what, fn))

    def server(self, **settings):
        """A harness.SandboxServer, started; stopped and its Docker objects
        removed at the end (or earlier with stop_server)."""
        srv = harness.SandboxServer(**settings)
        self.add("server", srv.cleanup)
        return srv.start()

    def stop_server(self, srv):
        for i, (what, fn) in enumerate(self.undo):
            if getattr(fn, "__self__", None) is srv:
                del self.undo[i]
                break
        srv.cleanup()

    def raw(self, image):
        raw = RawDocker(image)
        self.add("bare containers", raw.cleanup)
        return raw

    def tmpdir(self):
        d = tempfile.mkdtemp(prefix="as-bench-")
        self.add("temporary files", lambda: shutil.rmtree(d, True))
        return d

    def __exit__(self, *exc):
        # A second Ctrl-C must not cut the cleanup short.
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        try:
            while self.undo:
                what, fn = self.undo.pop()
                try:
                    fn()
                except Exception as e:  # keep cleaning the rest
                    print("cleanup of %s: %s" % (what, e), file=sys.stderr)
        finally:
            signal.signal(signal.SIGINT, old)
        return False


# --- CPU and memory while timing -----------------------------------------

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pids):
    """CPU time of these processes (every thread's run time from
    schedstat, in ns) and of their reaped children (in clock ticks: an
    archive job is a child of archive-worker, reaped before its request
    is answered)."""
    total = 0.0
    for pid in pids:
        try:
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[13]) + int(fields[14])) / float(CLK_TCK)
            for tid in os.listdir("/proc/%d/task" % pid):
                with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                    total += int(f.read().split()[0]) / 1e9
        except OSError:
            continue
    return total


def self_cpu_seconds():
    """This thread's CPU time: the client's work is all on the main
    thread, and an RssSampler's thread must not count as the client's."""
    return time.thread_time()


class CpuMeter:
    """Wraps the sides of a comparison: CPU the server's processes (each
    of them) and this (client) process spent in each timed call."""

    def __init__(self, pids):
        self.pids = dict(pids)          # {name: pid}
        self.server = {}                # {side: {process: seconds}}
        self.client = {}
        self.calls = {}

    def _each(self):
        return {n: cpu_seconds([p]) for n, p in self.pids.items()}

    def wrap(self, name, fn):
        def run():
            s, c = self._each(), self_cpu_seconds()
            fn()
            e, c = self._each(), self_cpu_seconds() - c
            acc = self.server.setdefault(name, {})
            for n in e:
                acc[n] = acc.get(n, 0.0) + e[n] - s[n]
            self.client[name] = self.client.get(name, 0.0) + c
            self.calls[name] = self.calls.get(name, 0) + 1
        return run

    def per_call_ms(self, name):
        """(all the server's processes, the client) in ms per call."""
        n = max(1, self.calls.get(name, 0))
        return (sum(self.server.get(name, {}).values()) * 1000.0 / n,
                self.client.get(name, 0.0) * 1000.0 / n)

    def split_ms(self, name):
        """{process: ms per call} of the server's processes."""
        n = max(1, self.calls.get(name, 0))
        return {p: v * 1000.0 / n
                for p, v in sorted(self.server.get(name, {}).items())}


class RssSampler:
    """Peak growth of each daemon's resident set over a with block,
    sampled every 20 ms: {daemon: KiB}."""

    def __init__(self, server):
        self.pids = {n: p for n, p in harness.daemon_pids(server).items()
                     if n in DAEMONS}
        self.growth = {}

    def _sample(self):
        return {n: harness.rss_kib(p) for n, p in self.pids.items()}

    def __enter__(self):
        import threading
        self.base = self._sample()
        self.peak = dict(self.base)
        self.done = threading.Event()

        def loop():
            while not self.done.is_set():
                for n, kib in self._sample().items():
                    self.peak[n] = max(self.peak[n], kib)
                time.sleep(0.02)
        self.thread = threading.Thread(target=loop, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()
        self.growth = {n: self.peak[n] - self.base[n] for n in self.base}
        return False
