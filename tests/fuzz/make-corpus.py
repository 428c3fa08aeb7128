#!/usr/bin/env python3
"""Write the fuzz harnesses' seed corpora into tests/fuzz/corpus/.

    tests/fuzz/make-corpus.py            the seeds made from the protocol
    tests/fuzz/make-corpus.py --docker   also capture from the real dockerd

Without --docker: request bodies (the shapes of API.md and what the
reference SDK sends), message payloads and imsg frames laid out as
common/msg.h says, and query strings.  With --docker (root, a running
dockerd, the image agent-sandbox/busybox:test): a container of our own is
made and every response the proxy reads is captured byte for byte as
dockerd sent it (pings, inspects, errors, archive heads with the path stat
header, an archive body, chunked bodies, hijacked exec streams with the
exec wrapper's PID line, the listing command's output), then the container
is removed.  Each seed carries the harness's leading control bytes (see
the comment at the top of each tests/fuzz/fuzz_<name>.c).
"""

import base64
import io
import json
import os
import socket
import struct
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
DOCKER_SOCK = "/var/run/docker.sock"
IMAGE = "agent-sandbox/busybox:test"


def put(harness, name, data):
    d = os.path.join(CORPUS, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# --- request bodies -----------------------------------------------------------

BODIES = {
    # fuzz_body's route numbers: create, exec, timeout, snapshot,
    # rollback, fork, process, signal, resize, patch, network (PUT).
    0: [b'{"image":"alpine:3.20"}',
        b'{"image": "python:3.12-slim", "cpus": 0.5, "memory_mb": 256, '
        b'"pids_limit": 64, "network": false, "read_only_rootfs": true, '
        b'"timeout_seconds": 600, "env": {"LANG": "C.UTF-8", "A": "b"}}',
        b'{}', b'{"cpus": "1.5", "memory_mb": "16", "network": "yes"}',
        b'{"image": null, "timeout_seconds": 1.0, "extra": 1}',
        b'[1, 2]', b'{"env": {"K\\u0000": "v"}}',
        # "network" as a policy object (docs/rest-api.md "Network").
        b'{"network": {"mode": "allowlist", "allow": ["pypi.org", '
        b'"*.githubusercontent.com", "203.0.113.0/24:443", '
        b'"[2001:db8::/32]"]}}',
        b'{"network": {"mode": "public"}, "image": "alpine:3.20"}',
        b'{"network": {"mode": {"x": [1, 2.5, null]}, "m\\u0000": 1}}',
        b'{"network": [{"mode": "none"}]}'],
    1: [b'{"command": "echo ok"}',
        b'{"command": ["python3", "-c", "print(1)"], "env": {"X": "1"}, '
        b'"workdir": "/workspace/src", "timeout_seconds": 30}',
        b'{"command": ["sh", "-c", "printf \\"\\\\xff\\" >&2"]}',
        b'{"command": 5}', b'{"command": ["a", 1, null]}',
        b'{"command": "x", "timeout_seconds": -1, "workdir": 3}'],
    2: [b'{"timeout_seconds": 60}', b'{"timeout_seconds": 0}',
        b'{"timeout_seconds": "12"}', b'{"timeout_seconds": 1e3}'],
    3: [b'', b'null', b'{}', b'{"name": "before-upgrade"}',
        b'{"name": null}', b'{"name": "' + "\u00e9".encode() * 129 + b'"}'],
    4: [b'{"snapshot_id": "snap_0123456789abcdef"}', b'{}',
        b'{"snapshot_id": "a\\u0000b"}'],
    5: [b'', b'{}', b'{"timeout_seconds": 120}',
        b'{"timeout_seconds": null, "network": true, "cpus": 2, '
        b'"memory_mb": 512}', b'{"network": "off", "cpus": 0}',
        b'{"network": {"mode": "none"}, "labels": {"team": "a"}}'],
    6: [b'{"command": "make test", "client_id": "build-1"}',
        b'{"command": ["bash", "-l"], "tty": true, "cols": 120, '
        b'"rows": 40, "env": {"TERM": "xterm"}, "workdir": "/workspace", '
        b'"timeout_seconds": 3600}',
        b'{"command": "cat", "stdin": true, "client_id": ""}',
        b'{"command": "x", "cols": 80}',
        b'{"command": "x", "tty": "yes", "rows": 1001, "shell": 1}'],
    7: [b'', b'{"signal": "KILL"}', b'{"signal": "kill"}', b'{"signal": 9}'],
    8: [b'{"cols": 80, "rows": 24}', b'{"cols": "132", "rows": 43.0}',
        b'{"cols": 0}', b'{}'],
    10: [b'{"mode": "none"}', b'{"mode": "public"}',
         b'{"mode": "allowlist", "allow": ["pypi.org:443", '
         b'"*.example.com", "198.51.100.7", "[2001:db8::1]:8443"]}',
         b'{"mode": "allowlist", "allow": ["\xc3\xa9.example", '
         b'"\\u00e9", "a\\u0000b"]}',
         b'{"mode" : "none", "mode": "public"}', b'[]', b'', b'null',
         b'{"mode": "none"'],
}

CTYPES = [None, b"application/json", b"application/json; charset=utf-8",
          b"text/plain", b"application/vnd.api+json", b"APPLICATION/JSON "]


def body_seeds():
    n = 0
    for route, bodies in BODIES.items():
        for i, body in enumerate(bodies):
            ctype = CTYPES[(route + i) % len(CTYPES)]
            sel = route if ctype is None else 0x80 | route
            head = bytes([sel]) + (b"" if ctype is None else ctype + b"\n")
            put("body", "route%d-%d" % (route, i), head + body)
            put("pyjson", "body%d" % n, body)
            n += 1
    for name, text in [
            ("nested", b'{"a": [1, -0, 2.5e-3, 1E+400, -Infinity, NaN, '
             b'true, false, null, {"b": {}}]}'),
            ("escapes", b'"\\ud83d\\ude00 \\ud800 \\n\\t\\"\\\\\\/\\u00e9"'),
            ("bigint", b"123456789012345678901234567890"),
            ("dupkeys", b'{"a": 1, "b": 2, "a": 3}'),
            ("bom", b'\xef\xbb\xbf{"x": "y"}'),
            ("utf8", '{"k": "ünïcødé \u4e2d\U0001f600"}'.encode()),
            ("bad-trailing", b'{"a": 1} x'),
            ("bad-unterminated", b'{"a": "b'),
            ("bad-control", b'"a\x01"')]:
        put("pyjson", name, text)


# --- messages -----------------------------------------------------------------

def s(v):
    if v is None:
        return struct.pack("<I", 0xFFFFFFFF)
    b = v.encode() if isinstance(v, str) else v
    return struct.pack("<I", len(b)) + b


def u8(v): return struct.pack("<B", v)
def u32(v): return struct.pack("<I", v)
def u64(v): return struct.pack("<Q", v)
def i64(v): return struct.pack("<q", v)
def dbl(v): return struct.pack("<d", v)


def env(pairs):
    return u32(len(pairs)) + b"".join(s(k) + s(v) for k, v in pairs)


def argv(args):
    return u32(len(args)) + b"".join(s(a) for a in args)


SB = "sb_0123456789abcdef"
SNAP = "snap_0123456789abcdef"
SPEC = (s("python:3.12-slim") + dbl(1.0) + i64(512) + i64(256) + u8(0) +
        u8(1) + env([("LANG", "C.UTF-8")]))

# In fuzz_msg's codec order.
PAYLOADS = [
    ("create_request", s("alpine:3.20") + u8(1) + dbl(0.5) + u8(1) + i64(256)
     + u8(0) + i64(0) + u8(0) + u8(1) + u8(1) + i64(300) +
     env([("A", "b")])),
    ("sandbox_info", s(SB) + u8(1) + s("alpine:3.20") + dbl(1.0) + i64(512)
     + i64(256) + u8(0) + u8(1) + dbl(1764580000.25) + dbl(1764583600.25)
     + s(None)),
    ("exec_request", s(SB) + u8(0) + argv(["python3", "-c", "print(1)"]) +
     env([]) + s("/workspace") + u8(1) + dbl(30.0)),
    ("docker_create", s(SB) + SPEC),
    ("docker_exec", s(SB) + argv(["/bin/sh", "-c", "echo ok"]) +
     env([("HOME", "/workspace")]) + s("/workspace") + dbl(300.0)),
    ("file_request", s(SB) + s("/workspace/sp ace/\u00fcnic\u00f8de.txt")),
    ("file_write", s(SB) + s("/workspace/src/app.py") + u32(0o644) +
     u64(21)),
    ("file_write_ready", s("src/app.py") + u32(1000) + u32(1000) +
     u32(0o644) + i64(1764580000)),
    ("file_info", s("app.py") + s("/workspace/app.py") + s("file") + u64(21)
     + dbl(1764580000.053406)),
    ("snapshot_create", s(SB) + s("before-upgrade")),
    ("snapshot_info", s(SNAP) + s(SB) + s(None) + s("alpine:3.20") +
     u64(10240) + dbl(1764580000.5)),
    ("rollback_request", s(SB) + s(SNAP)),
    ("fork_request", s(SNAP) + u8(1) + i64(600) + u8(1) + u8(0) + u8(0) +
     dbl(0.0) + u8(0) + i64(0)),
    ("tar_result", u32(0) + u64(10240) + s(None)),
    ("archive_get", s(SB) + s("/workspace/app.py") + u8(1) + u64(1 << 20)),
    ("archive_stat", u8(3) + u64(7) + s("/etc/passwd")),
    ("archive_put", s(SB) + s("/workspace") + u8(1) + i64(-1)),
    ("exec_exit", i64(0) + u8(0)),
    ("u64", u64(4096)),
    ("snapshot_list", u8(1) + s(SB)),
    ("id", s(SB)),
    ("text", s("docker")),
]

# MSG_* numbers (common/msg.h) of some of the payloads above, for frames.
FRAME_TYPES = {"create_request": 201, "sandbox_info": 301,
               "exec_request": 206, "docker_exec": 405, "exec_exit": 305,
               "file_info": 308, "archive_stat": 507, "id": 203}


def imsg(mtype, peerid, payload, fd=False):
    length = len(payload) | (0x80000000 if fd else 0)
    return struct.pack("<IIII", mtype, length, peerid, 4242) + payload


def msg_seeds():
    for i, (name, payload) in enumerate(PAYLOADS):
        put("msg", name, bytes([i]) + payload)
    # The reader alone: a field list (u8 u32 u64 i64 double str).
    put("msg", "fields", bytes([200, 6, 0, 1, 2, 3, 4, 5]) + u8(7) + u32(9)
        + u64(1) + i64(-1) + dbl(2.5) + s("abc"))
    frames = b"".join(imsg(FRAME_TYPES[n], k + 1, p)
                      for k, (n, p) in enumerate(PAYLOADS)
                      if n in FRAME_TYPES)
    put("imsg", "replies", b"\x07\x00" + frames)
    put("imsg", "with-fds", b"\x03\x05" + imsg(110, 0, b"") +
        imsg(206, 9, PAYLOADS[2][1]) + imsg(900, 9, u32(4) + s("no")))
    put("imsg", "fd-mark-no-fd", b"\x01\x00" + imsg(208, 1, b"x", fd=True))
    put("imsg", "oversized", b"\x02\x00" + struct.pack("<IIII", 1, 16385, 0,
                                                        0))


def pev(etype, value, payload=b""):
    return struct.pack(">B3xIQ", etype, len(payload), value) + payload


def pev_exit(seq, status, code, ms):
    has = code is not None
    return pev(4, seq, struct.pack(">BB6xqQ", status, 1 if has else 0,
                                   code or 0, ms))


def process_events_seeds():
    # fuzz_process_events: encoding and largest piece, split seed, stream.
    hello = pev(1, 6, b"hello\n")
    put("process_events", "output", b"\x10\x05" + hello +
        pev(3, 1048576) + pev(2, 1048600, "warn \u00e9\n".encode()[:8]) +
        pev_exit(1048600, 2, 0, 1764625202000))
    put("process_events", "base64", b"\x01\x03" + hello +
        pev(1, 9, b"\xff\x00\x80") + pev_exit(9, 3, 137, 0))
    put("process_events", "tty", b"\x40\x09" +
        pev(1, 12, b"\x1b[1mbold\x1b[0m"[:12]) + pev_exit(12, 5, None, 0))
    put("process_events", "no-exit", b"\x00\x01" + hello)
    put("process_events", "bad-order", b"\x01\x02" + hello + hello)
    put("process_events", "cut", b"\x00\x02" + hello[:-2])


def query_seeds():
    for i, (key, q) in enumerate([
            (b"path", b"path=/workspace/sp%20ace/%C3%BCnic%C3%B8de.txt"),
            (b"path", b"path=/workspace&path=/tmp&x"),
            (b"sandbox_id", b"sandbox_id=sb_0123456789abcdef&limit=5"),
            (b"path", b"pa%74h=a+b%2&path"),
            (b"", b"=v&&=w"),
            (b"path", b"path=%ff%fe%00")]):
        put("query", "q%d" % i, key + b"\n" + q)


# --- dockerd --------------------------------------------------------------------

def docker_raw(method, path, body=None, headers=(), upgrade=False):
    """One request as dockerd-proxy sends it; every byte of the answer."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(DOCKER_SOCK)
    head = ["%s %s HTTP/1.1" % (method, path), "Host: docker",
            "User-Agent: agent-sandbox"]
    head += ["Connection: Upgrade", "Upgrade: tcp"] if upgrade else \
        ["Connection: close"]
    head += list(headers)
    if body is not None:
        head += ["Content-Type: application/json",
                 "Content-Length: %d" % len(body)]
    sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + (body or b""))
    out = b""
    sock.settimeout(30)
    while True:
        b = sock.recv(65536)
        if not b:
            break
        out += b
    sock.close()
    return out


def split_head(resp):
    head, _, body = resp.partition(b"\r\n\r\n")
    return head, body


def docker_json(method, path, body=None):
    head, rest = split_head(docker_raw(method, path, body))
    if b"chunked" in head.lower():
        out = b""
        while True:
            size, _, rest = rest.partition(b"\r\n")
            n = int(size.split(b";")[0], 16)
            if n == 0:
                break
            out += rest[:n]
            rest = rest[n + 2:]
        rest = out
    return json.loads(rest) if rest.strip() else None


API = "/v1.41"
WRAPPER = 'echo $$; exec "$@"'
LIST_SCRIPT = (
    'cd -- "$1" 2>/dev/null || { [ -e "$1" ] && exit 3; exit 2; }\n'
    'for f in * .[!.]* ..?*; do\n'
    '\tif [ -e "$f" ] || [ -L "$f" ]; then\n'
    "\t\tstat -c '%f %s %Y' -- \"$f\" && printf '%s\\0' \"$f\"\n"
    '\tfi\n'
    'done\n'
    'exit 0\n')


def exec_stream(cid, cmd):
    """The hijacked stream of an exec with the proxy's wrapper."""
    body = json.dumps({"AttachStdout": True, "AttachStderr": True,
                       "Cmd": ["/bin/sh", "-c", WRAPPER, "sh"] + cmd,
                       "User": "1000:1000", "WorkingDir": "/workspace"})
    ex = docker_json("POST", "%s/containers/%s/exec" % (API, cid),
                     body.encode())
    return docker_raw("POST", "%s/exec/%s/start" % (API, ex["Id"]),
                      b'{"Detach":false,"Tty":false}', upgrade=True)


def demux(stream):
    out = {1: b"", 2: b""}
    while len(stream) >= 8:
        n = struct.unpack(">I", stream[4:8])[0]
        out[stream[0]] += stream[8:8 + n]
        stream = stream[8 + n:]
    return out


# The harness's mode byte (fuzz_docker_http.c): flags, streaming, pausing,
# cap index in bits 4-5, piece size in bits 6-7.
def http_seed(name, resp, flags=0):
    put("docker_http", name, bytes([flags | 0x30 | 0x40, 7]) + resp)
    put("docker_http", name + "-stream", bytes([flags | 0x3c | 0x80, 3]) +
        resp)


SETUP = r"""
set -e
cd /workspace
echo hello > hello.txt
mkdir -p 'sp ace' src/deep
echo hi > 'sp ace/ünicøde.txt'
printf 'latin1' > "$(printf 'caf\351.txt')"
printf 'nl' > "$(printf 'new\nline')"
ln -s hello.txt link
ln -s /etc/passwd outside
head -c 5000 /dev/zero > src/zeros.bin
chown -R 1000:1000 /workspace
"""


def docker_seeds():
    name = "agent-sandbox-fuzz-capture-%d" % os.getpid()
    spec = {"Image": IMAGE, "Cmd": ["sleep", "600"], "WorkingDir": "/"}
    c = docker_json("POST", "%s/containers/create?name=%s" % (API, name),
                    json.dumps(spec).encode())
    cid = c["Id"]
    try:
        docker_raw("POST", "%s/containers/%s/start" % (API, cid))
        setup = json.dumps({"Cmd": ["/bin/sh", "-c", SETUP],
                            "AttachStdout": True, "AttachStderr": True})
        ex = docker_json("POST", "%s/containers/%s/exec" % (API, cid),
                         setup.encode())
        docker_raw("POST", "%s/exec/%s/start" % (API, ex["Id"]),
                   b'{"Detach":false,"Tty":false}')
        capture(cid)
    finally:
        docker_raw("DELETE", "%s/containers/%s?force=1&v=1" % (API, cid))


def capture(cid):
    http_seed("ping", docker_raw("GET", "/_ping"))
    http_seed("version", docker_raw("GET", API + "/version"))
    http_seed("inspect", docker_raw("GET", "%s/containers/%s/json" %
                                    (API, cid)))
    http_seed("not-found", docker_raw("GET", API +
                                      "/containers/agent-sandbox-none/json"))
    http_seed("info-chunked", docker_raw("GET", API + "/info"))
    # The container's own events: a chunked body of a few chunks.
    since = int(time.time()) - 60
    filters = "%7B%22container%22%3A%5B%22" + cid + "%22%5D%7D"
    http_seed("events-chunked", docker_raw(
        "GET", "%s/events?since=%d&until=%d&filters=%s" %
        (API, since, int(time.time()) + 1, filters)))
    for what, path in [("dir", "/workspace"), ("file", "/workspace/hello.txt"),
                       ("link", "/workspace/link"),
                       ("outside", "/workspace/outside"),
                       ("unicode", "/workspace/sp%20ace/%C3%BCnic%C3%B8de.txt"),
                       ("latin1", "/workspace/caf%E9.txt"),
                       ("newline", "/workspace/new%0Aline"),
                       ("missing", "/workspace/missing")]:
        resp = docker_raw("HEAD", "%s/containers/%s/archive?path=%s" %
                          (API, cid, path))
        http_seed("head-" + what, resp, flags=0x01)
        for line in split_head(resp)[0].split(b"\r\n"):
            k, _, v = line.partition(b": ")
            if k.lower() == b"x-docker-container-path-stat":
                put("path_stat", what, b"\x01" + v)
                put("path_stat", what + "-json", b"\x00" +
                    base64.b64decode(v))
    http_seed("archive-file", docker_raw(
        "GET", "%s/containers/%s/archive?path=/workspace/hello.txt" %
        (API, cid)))
    http_seed("put-refused", docker_raw(
        "PUT", "%s/containers/%s/archive?path=/workspace/hello.txt"
        "&noOverwriteDirNonDir=true" % (API, cid), b"\0" * 1024,
        headers=["Content-Type: application/x-tar"]))
    for what, cmd in [
            ("echo", ["echo", "ok"]),
            ("both", ["sh", "-c", "echo out; echo err >&2; "
                      "printf '\\377\\303\\n\\342\\202'; echo done >&2"]),
            ("big", ["head", "-c", "70000", "/workspace/src/zeros.bin"]),
            ("silent", ["true"])]:
        resp = exec_stream(cid, cmd)
        http_seed("exec-" + what, resp, flags=0x02)
        stream = split_head(resp)[1]
        put("proxy_frames", what, b"\x01\x05" + stream)
        put("exec_output", what, b"\x0c\x09" + to_apid(stream))
    resp = exec_stream(cid, ["/bin/sh", "-c", LIST_SCRIPT, "sh",
                             "/workspace"])
    stream = split_head(resp)[1]
    put("proxy_frames", "listing", b"\x00\x11" + stream)
    put("exec_output", "listing", b"\x04\x02" + to_apid(stream))
    put("file_list", "workspace", demux(stream)[1].partition(b"\n")[2])


def to_apid(stream):
    """What the proxy writes to apid: the frames, less the PID line."""
    out = demux(stream)
    out[1] = out[1].partition(b"\n")[2]
    frames = b""
    for n in (1, 2):
        if out[n]:
            frames += bytes([n, 0, 0, 0]) + struct.pack(">I", len(out[n])) + \
                out[n]
    return frames


# --- HTTP requests ------------------------------------------------------------

# What clients send apid: kept-alive and pipelined requests, each framing,
# HTTP/1.0, 100-continue, an upgrade, and what smuggling looks like.  The
# paths are fuzz_http_conn's kinds of route.
REQUESTS = [
    b"GET /short HTTP/1.1\r\nHost: a\r\n\r\n",
    b"GET /json HTTP/1.1\r\nHost: a\r\n\r\nGET /stream HTTP/1.1\r\n"
    b"Host: a\r\n\r\nGET /short HTTP/1.1\r\nConnection: close\r\n\r\n",
    b"POST /json HTTP/1.1\r\nHost: a\r\nContent-Length: 13\r\n"
    b"Content-Type: application/json\r\n\r\n{\"command\":1}",
    b"PUT /upload?path=/workspace/a HTTP/1.1\r\nHost: a\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"
    b"3;ext=1\r\nabc\r\n0\r\nTrailer: x\r\n\r\n",
    b"PUT /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n"
    b"Expect: 100-continue\r\n\r\nabcd",
    b"GET /stream HTTP/1.0\r\n\r\n",
    b"GET /json HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
    b"GET /upgrade HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\n"
    b"Upgrade: websocket\r\n\r\n\x81\x00",
    b"POST /json HTTP/1.1\r\nContent-Length: 3\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    b"POST /json HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n"
    b"\r\nabcd",
    b"POST /json HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
    b"POST /upload HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"fffffffffffffffff\r\n",
    b"GET /short HTTP/1.1\r\nHost : a\r\n\r\n",
    b"GET /%C3%A9t%C3%A9?path=/workspace/%FF HTTP/1.1\r\n\r\n",
    b"GET /short HTTP/2.0\r\n\r\n",
    b"GET " + b"/a" * 600 + b" HTTP/1.1\r\n\r\n",
    b"GET /short HTTP/1.1\r\nX: " + b"y" * 3000 + b"\r\n\r\n",
    b"GET /short HTTP/1.1\n\n",
    b"\r\n\r\nGET /short HTTP/1.1\r\n\r\n",
    b"PUT /splice HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\n\r\n"
    b"abcdefGET /short HTTP/1.1\r\nHost: a\r\n\r\n",
    b"PUT /splice HTTP/1.1\r\nHost: a\r\nContent-Length: 1001\r\n"
    b"Expect: 100-continue\r\n\r\n" + b"x" * 1001,
]


def http_seeds():
    for i, req in enumerate(REQUESTS):
        for split in (0, 7, 200):
            put("http_parse", "req%02d-%d" % (i, split), u8(split) + req)
            put("http_conn", "req%02d-%d" % (i, split), u8(split) + req)


# --- tar streams --------------------------------------------------------------

def tarball(fmt, members):
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w", format=fmt) as t:
        for name, kind, arg in members:
            ti = tarfile.TarInfo(name)
            ti.mtime = 1700000000
            if kind == "file":
                ti.size = len(arg)
                t.addfile(ti, io.BytesIO(arg))
                continue
            ti.type = {"dir": tarfile.DIRTYPE, "sym": tarfile.SYMTYPE,
                       "hard": tarfile.LNKTYPE,
                       "fifo": tarfile.FIFOTYPE}[kind]
            ti.linkname = arg or ""
            t.addfile(ti)
    # Two end blocks, not tarfile's padding to 10 KiB: smaller seeds.
    data = b.getvalue().rstrip(b"\0")
    return data + b"\0" * (-len(data) % 512 + 1024)


# Docker's export of /workspace (SNAPSHOT's input, FIRST_FILE's with the
# name workspace/a), and a stored snapshot (CHECK's): every member type,
# long and non-UTF-8 names, links in and out.
TARS = {
    "export": [("workspace", "dir", None), ("workspace/a", "file", b"hi\n"),
               ("workspace/d", "dir", None),
               ("workspace/d/l", "sym", "../a"),
               ("workspace/h", "hard", "workspace/a"),
               ("workspace/p", "fifo", None)],
    "long": [("workspace", "dir", None),
             ("workspace/" + "x" * 200 + "/" + "y" * 100, "file", b"z" * 700)],
    "names": [("workspace", "dir", None),
              ("workspace/\u00e9t\u00e9 b\nc", "file", b"1"),
              ("workspace/caf\udce9", "file", b"2")],
    "escape": [("workspace", "dir", None), ("workspace/../etc", "file", b"x"),
               ("workspace/h", "hard", "/etc/passwd")],
    "snapshot": [("a", "file", b"q"), ("d", "dir", None),
                 ("d/h", "hard", "a"), ("d/s", "sym", "/etc")],
}


def archive_seeds():
    # fuzz_archive_job's first byte: job in bits 0-1 (snapshot, check,
    # first file, first file named), size limit in bits 2-3.
    fmts = {"ustar": tarfile.USTAR_FORMAT, "gnu": tarfile.GNU_FORMAT,
            "pax": tarfile.PAX_FORMAT}
    for fname, fmt in fmts.items():
        for tname, members in TARS.items():
            try:
                data = tarball(fmt, members)
            except (ValueError, UnicodeError):
                continue    # a name this format cannot hold
            for sel in (0, 1, 2, 3, 5):
                put("archive_job", "%s-%s-%d" % (tname, fname, sel),
                    u8(sel) + data)


# What dockerd-proxy writes into a sandbox (fuzz_tar_check): uploads and
# snapshots as the archive worker makes them, and what a lying peer sends.
PUT_TARS = {
    "upload": [("d", "dir", None), ("d/f.txt", "file", b"hello\n")],
    "restore": [("a", "file", b"q"), ("d", "dir", None),
                ("d/h", "hard", "a"), ("d/s", "sym", "/etc"),
                ("x" * 150 + "/" + "\u00e9t\u00e9", "file", b"z" * 600)],
    "under-link": [("s", "sym", "/etc"), ("s/passwd", "file", b"root::")],
    "hard-out": [("h", "hard", "../etc/shadow")],
    "fifo": [("p", "fifo", None)],
}


def tar_check_seeds():
    fmts = {"ustar": tarfile.USTAR_FORMAT, "gnu": tarfile.GNU_FORMAT,
            "pax": tarfile.PAX_FORMAT}
    for fname, fmt in fmts.items():
        for tname, members in PUT_TARS.items():
            try:
                data = tarball(fmt, members)
            except (ValueError, UnicodeError):
                continue
            for pieces in (0, 63):
                put("tar_check", "%s-%s-%d" % (tname, fname, pieces),
                    u8(pieces) + u8(7) + data)


# Allowlist patterns and references (fuzz_allowlist): "pattern\0ref".
ALLOW = [
    (b"python:*", b"python:3.12"), (b"python:*", b"python:5000/x/y"),
    (b"docker.io/library/*", b"docker.io/library/alpine:3.20"),
    (b"registry:5000/team/*:1.?", b"registry:5000/team/app:1.2"),
    (b"[!a-m]*", b"node:20"), (b"[a-]x[]", b"-x]"), (b"[z-a]b", b"b"),
    (b"*@sha256:*", b"alpine@sha256:" + b"0" * 64),
    (b"caf\xc3\xa9:*", b"caf\xc3\xa9:latest"), (b"\xff*", b"\xff\xfe"),
    (b"a*b*c*d*e*", b"a" * 40 + b"bcde"), (b"[[]*", b"[x"),
]


def allowlist_seeds():
    for i, (pat, ref) in enumerate(ALLOW):
        put("allowlist", "seed-%02d" % i, pat + b"\0" + ref)


# --- a process's output, as the clients read it ---------------------------------

# fuzz_process_lines: a flags byte (1: base64), then NDJSON lines as
# docs/rest-api.md "Processes" shows them, and odd ones.
EVENTS = [
    (1, [b'{"seq": 3, "type": "stdout", "data": "YWJj"}',
         b'{"type": "gap", "dropped_bytes": 1048576}',
         b'{"seq": 1048580, "type": "stderr", "data": "AP9h"}',
         b'{"type": "exit", "status": "exited", "exit_code": 0, '
         b'"ended_at": "2026-12-01T21:40:02Z", "seq": 1048580}']),
    (0, [b'{"seq": 6, "type": "stdout", "data": "hello\\n"}',
         b'{"type": "exit", "status": "killed", "exit_code": 143}',
         b'{"type": "heartbeat"}']),
    (1, [b'{"type": "exit", "status": "lost", "exit_code": null}',
         b'{"seq": -1, "type": "stdout", "data": "e==="}',
         b'{"seq": 1.5, "type": "stderr", "data": "YQ=="}',
         b'{"type": "exit", "status": "timed_out", "ended_at": "x\\u001b"}']),
]


def process_lines_seeds():
    for i, (flags, lines) in enumerate(EVENTS):
        put("process_lines", "seed-%02d" % i,
            u8(flags) + b"\n".join(lines) + b"\n")


def keys_file_seeds():
    h = "0123456789abcdef" * 4
    put("keys_file", "empty", b'{"keys": []}\n')
    put("keys_file", "example", (
        '{"keys": [{"name": "ci-runner", "tenant": "team-a", "sha256": "%s",'
        ' "quotas": {"sandboxes": 10, "cpus": 8, "memory_mb": 16384,'
        ' "snapshot_bytes": 10737418240, "requests_per_second": 20,'
        ' "burst": 40}}, {"name": "ops", "tenant": "ops", "admin": true,'
        ' "sha256": "%s"}]}\n' % (h, h[::-1])).encode())
    put("keys_file", "duplicate", (
        '{"keys": [{"name": "a", "tenant": "t", "sha256": "%s"},'
        ' {"name": "a", "tenant": "t", "sha256": "%s"}]}' % (h, h)).encode())


def egress_policy_seeds():
    """fuzz_egress_policy: 0 JSON, 1 byte form, 2 an entry, 3 a check."""
    bodies = [b'false', b'true', b'{"mode": "none"}', b'{"mode": "public"}',
              b'{"mode": "allowlist", "allow": ["pypi.org", '
              b'"*.githubusercontent.com", "203.0.113.0/24:443", '
              b'"[2001:db8::/32]:443", "0.0.0.0/0:22"]}',
              b'{"mode": "allowlist", "allow": ["b\\u00fccher.de", "*.", '
              b'"a..b", "10.0.0.0/33", "[::ffff:10.0.0.1]"]}',
              b'{"mode": "allowlist"}', b'{"mode": "open", "x": 1}']
    for i, b in enumerate(bodies):
        put("egress_policy", "json-%02d" % i, b"\x00" + b)
    for i, e in enumerate([b"pypi.org:443", b"*.example.com", b"10.0.0.0/8",
                           b"[2001:db8::1]:8443", b"caf\xc3\xa9", b"*",
                           b"1.2.3", b"a.b:65536", b"[::1"]):
        put("egress_policy", "entry-%02d" % i, b"\x02" + e)
    name = u8(1) + u32(443) + s("pypi.org")
    wild = u8(2) + u32(0) + s("example.com")
    v4 = u8(3) + u32(443) + u8(4) + u8(24) + bytes([203, 0, 113, 0])
    v6 = (u8(3) + u32(0) + u8(6) + u8(32) +
          bytes([0x20, 0x01, 0x0d, 0xb8]) + bytes(12))
    allow = u8(2) + u32(4) + name + wild + v4 + v6
    put("egress_policy", "bytes-allowlist", b"\x01" + allow)
    put("egress_policy", "bytes-public", b"\x01" + u8(1) + u32(0))
    metadata = u8(0) + bytes([169, 254, 169, 254]) + bytes(12)
    for i, (addr, host) in enumerate([
            (u8(0) + bytes([203, 0, 113, 7]) + bytes(12), b""),
            (metadata, b"pypi.org"),
            (u8(1) + bytes(10) + b"\xff\xff" + bytes([10, 0, 0, 1]),
             b"www.example.com")]):
        put("egress_policy", "check-%02d" % i, b"\x03" +
            struct.pack(">H", len(allow)) + allow + struct.pack(">H", 443) +
            addr + host)


EGRESS_REQUESTS = [
    b"CONNECT pypi.org:443 HTTP/1.1\r\nHost: pypi.org:443\r\n"
    b"User-Agent: pip\r\n\r\n\x16\x03\x01",
    b"CONNECT [2001:db8::1]:8443 HTTP/1.1\r\n\r\n",
    b"CONNECT 203.0.113.7:22 HTTP/1.0\r\n\r\n",
    b"GET http://Example.COM./a/b?x=1 HTTP/1.1\r\nHost: evil\r\n"
    b"Connection: keep-alive, X-Y\r\nX-Y: 1\r\nProxy-Authorization: x"
    b"\r\nAccept: */*\r\n\r\n",
    b"POST http://a.b:8080?q HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
    b"PUT http://[::ffff:10.0.0.1]/ HTTP/1.1\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    b"GET /origin-form HTTP/1.1\r\nHost: a.b\r\n\r\n",
    b"GET https://a.b/ HTTP/1.1\r\n\r\n",
    b"GET http://user:pass@a.b/ HTTP/1.1\r\n\r\n",
    b"POST http://a.b/ HTTP/1.1\r\nContent-Length: 1\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n",
    b"GET http://a.b/ HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
    b"GET http://a.b/ HTTP/1.1\r\nX: 1\r\n folded\r\n\r\n",
    b"GET http://a.b/ HTTP/1.1\n\n",
    b"CONNECT caf\xc3\xa9.fr:080 HTTP/1.1\r\n\r\n",
    b"CONNECT a.b: HTTP/1.1\r\n\r\n",
    b"GET http://a.b/ HTTP/1.1\r\nConnection: content-length\r\n"
    b"Content-Length: 2\r\n\r\nab",
    b"GET http://a.b/ HTTP/1.1\r\n" + b"X: y\r\n" * 101 + b"\r\n",
]


def egress_request_seeds():
    """fuzz_egress_request: a split seed, then what a sandbox sends."""
    for i, req in enumerate(EGRESS_REQUESTS):
        for split in (0, 3):
            put("egress_request", "req%02d-%d" % (i, split), u8(split) + req)


NETNS_ID = ("c0abe65f61ece5660c333305eb9c9612"
            "2aecc8632389aec5105c08f69b21ef71")


def netns_cgroup_seeds():
    """fuzz_netns_cgroup: 0 and a file for the fixed id, 1 + an id + a file."""
    files = [
        "0::/docker/%s\n" % NETNS_ID,
        "0::/system.slice/docker-%s.scope\n" % NETNS_ID,
        "12:pids:/docker/%s\n1:name=systemd:/docker/%s\n0::/docker/%s\n"
        % (NETNS_ID, NETNS_ID, NETNS_ID),
        "0::/user.slice/user-0.slice/session-1.scope\n",
        "0::/docker/%s/init\n" % NETNS_ID,
    ]
    for i, f in enumerate(files):
        put("netns_cgroup", "fixed-%02d" % i, b"\x00" + f.encode())
    put("netns_cgroup", "own-id", b"\x01" + NETNS_ID.encode() +
        ("0::/docker/%s\n" % NETNS_ID).encode())


def main():
    netns_cgroup_seeds()
    egress_policy_seeds()
    egress_request_seeds()
    keys_file_seeds()
    process_lines_seeds()
    allowlist_seeds()
    tar_check_seeds()
    body_seeds()
    msg_seeds()
    query_seeds()
    process_events_seeds()
    http_seeds()
    archive_seeds()
    if "--docker" in sys.argv[1:]:
        docker_seeds()


if __name__ == "__main__":
    main()
