#!/usr/bin/env python3
"""Time file transfer, snapshot and rollback through agent-sandbox against
the bare Docker Engine calls that move the same bytes, in one run on one
daemon; report p50/p95, the ratio of the p50s, and the daemons' memory.

    sudo AGENT_SANDBOX_BUILDDIR=$PWD bench/bench_files.py [--rounds N]

Runs by hand, like bench_sandboxes.py (root, a running dockerd, a built
tree or AGENT_SANDBOX_TEST_PREFIX, the test image).

What is compared (the bare side talks to /var/run/docker.sock directly,
on a hardened container with a volume made the way bench_sandboxes.py
makes one):
- upload of 10 MiB: PUT /v1/sandboxes/{id}/files against PUT
  /containers/{id}/archive?path=/workspace of a one-member tar of the same
  bytes (the tar is built once, before timing: the bare side is the
  Docker call alone);
- download of 10 MiB: GET /v1/sandboxes/{id}/files against GET
  /containers/{id}/archive?path=/workspace/<file>, whole body read;
- snapshot of a 100 MiB workspace: POST .../snapshots against GET
  /containers/{id}/archive?path=/workspace streamed into a file on the
  same disk as the data directory, then fsync'd;
- rollback to that snapshot: POST .../rollback against removing the
  container and its volume, making a volume and a hardened container,
  starting it and PUT-ting the snapshot's tar (the very file the server
  stored) into /workspace;
- VmHWM (peak resident set) of managerd, apid and dockerd-proxy, from
  start and after each phase.
"""

import argparse
import hashlib
import http.client
import io
import json
import os
import statistics
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
sys.path.insert(0, HERE)
import harness  # noqa: E402
from bench_sandboxes import pct, raw_cleanup, raw_create  # noqa: E402

MIB = 1024 * 1024
CHUNK = 256 * 1024


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


def report(label, ours, raw):
    ratio = statistics.median(ours) / statistics.median(raw)
    print("%-18s ours p50 %8.1f ms  p95 %8.1f ms | docker p50 %8.1f ms  "
          "p95 %8.1f ms | ratio p50 %.2f" %
          (label, statistics.median(ours), pct(ours, 95),
           statistics.median(raw), pct(raw, 95), ratio))
    sys.stdout.flush()
    return ratio


def hwm(server):
    return {n: int(harness.proc_status(p)["VmHWM"].split()[0])
            for n, p in harness.daemon_pids(server).items()}


def print_hwm(label, server):
    print("  VmHWM %-16s %s" % (label, ", ".join(
        "%s %.1f MiB" % (n, kib / 1024.0)
        for n, kib in sorted(hwm(server).items()))))


def api_stream(server, method, path, body=None, sink=None):
    """A request to the server; the response body goes to sink (or is
    read and dropped) in chunks.  Returns the status."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=300)
    try:
        hdrs = dict(harness.AUTH)
        if body is not None:
            hdrs["Content-Type"] = "application/octet-stream"
        conn.request(method, path, body=body, headers=hdrs)
        resp = conn.getresponse()
        while True:
            chunk = resp.read(CHUNK)
            if not chunk:
                break
            if sink is not None:
                sink(chunk)
        return resp.status
    finally:
        conn.close()


def docker_stream(method, path, body=None, sink=None, length=None):
    """A request to Docker; body may be bytes or a file object."""
    conn = harness.UnixHTTPConnection(harness.DOCKER_SOCKET, timeout=300)
    try:
        hdrs = {}
        if body is not None:
            hdrs["Content-Type"] = "application/x-tar"
            if length is not None:
                hdrs["Content-Length"] = str(length)
        conn.request(method, path, body=body, headers=hdrs)
        resp = conn.getresponse()
        while True:
            chunk = resp.read(CHUNK)
            if not chunk:
                break
            if sink is not None:
                sink(chunk)
        return resp.status
    finally:
        conn.close()


def one_file_tar(name, data):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        info.mode = 0o644
        info.uid = info.gid = 1000
        info.mtime = int(time.time())
        t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def check(status, want, what):
    if status != want:
        raise SystemExit("%s: HTTP %s, expected %s" % (what, status, want))


def bench_transfer(server, sb, container, rounds):
    data = os.urandom(10 * MIB)
    tar = one_file_tar("bench.bin", data)
    url = "/v1/sandboxes/%s/files?path=bench.bin" % sb
    archive = "/containers/%s/archive?path=/workspace" % container

    def ours_up():
        check(api_stream(server, "PUT", url, body=data), 200, "upload")

    def raw_up():
        check(docker_stream("PUT", archive, body=tar), 200, "archive PUT")

    ours_up()
    raw_up()
    r_up = report("upload 10 MiB", timed(ours_up, rounds),
                  timed(raw_up, rounds))

    got = hashlib.sha256()
    check(api_stream(server, "GET", url, sink=got.update), 200, "download")
    if got.digest() != hashlib.sha256(data).digest():
        raise SystemExit("download returned other bytes")

    def ours_down():
        check(api_stream(server, "GET", url), 200, "download")

    def raw_down():
        check(docker_stream("GET", "/containers/%s/archive?path=/workspace/"
                            "bench.bin" % container), 200, "archive GET")

    r_down = report("download 10 MiB", timed(ours_down, rounds),
                    timed(raw_down, rounds))
    return r_up, r_down


def fill_workspace(server, sb, container):
    """100 MiB of random bytes plus a few small files, in both."""
    script = ("dd if=/dev/urandom of=/workspace/big bs=1048576 count=100 "
              "2>/dev/null && mkdir -p /workspace/src/lib && "
              "for i in 1 2 3 4 5; do echo $i > /workspace/src/lib/f$i; "
              "done && rm -f /workspace/bench.bin")
    r = server.exec(sb, script, timeout_seconds=300)
    if r["exit_code"] != 0:
        raise SystemExit("filling the sandbox failed: %r" % r)
    status, body = harness.docker_request(
        "POST", "/containers/%s/exec" % container,
        body={"Cmd": ["sh", "-c", script], "User": "0:0",
              "AttachStdout": True, "AttachStderr": True})
    eid = json.loads(body)["Id"]
    harness.docker_request("POST", "/exec/%s/start" % eid,
                           body={"Detach": False, "Tty": False}, timeout=300)


def bench_snapshot(server, sb, container, rounds, tmpdir):
    made = []

    def ours():
        status, doc = server.api("POST", "/v1/sandboxes/%s/snapshots" % sb,
                                 {"name": "bench"}, timeout=300)
        check(status, 201, "snapshot")
        made.append(doc)

    def drop_ours():
        while len(made) > 1:
            server.api("DELETE", "/v1/snapshots/" + made.pop(0)["id"])

    target = os.path.join(tmpdir, "raw-export.tar")

    def raw():
        with open(target, "wb") as f:
            check(docker_stream("GET", "/containers/%s/archive?path="
                                "/workspace" % container, sink=f.write),
                  200, "archive GET")
            f.flush()
            os.fsync(f.fileno())

    ratio = report("snapshot 100 MiB", timed(ours, rounds, drop_ours),
                   timed(raw, rounds))
    print("  snapshot size_bytes %d, bare export %d bytes" %
          (made[-1]["size_bytes"], os.path.getsize(target)))
    return ratio, made[-1]


def bench_rollback(server, sb, snap, rounds, image, names):
    tar_path = os.path.join(server.data_dir, "snapshots",
                            snap["id"] + ".tar")
    size = os.path.getsize(tar_path)

    def ours():
        status, doc = server.api("POST", "/v1/sandboxes/%s/rollback" % sb,
                                 {"snapshot_id": snap["id"]}, timeout=300)
        check(status, 200, "rollback")

    def raw():
        if names:
            old, vol = names.pop()
            harness.docker_request("DELETE", "/containers/%s?force=true&v=true"
                                   % old)
            harness.docker_request("DELETE", "/volumes/%s?force=true" % vol)
        raw_create(image, names)()
        with open(tar_path, "rb") as f:
            check(docker_stream("PUT", "/containers/%s/archive?path="
                                "/workspace" % names[-1][0], body=f,
                                length=size), 200, "archive PUT")

    return report("rollback 100 MiB", timed(ours, rounds),
                  timed(raw, rounds))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=10,
                    help="rounds of the 10 MiB transfers (default 10)")
    ap.add_argument("--big-rounds", type=int, default=5,
                    help="rounds of the 100 MiB snapshot and rollback "
                    "(default 5)")
    args = ap.parse_args()
    harness.require_root_and_docker()
    server = harness.SandboxServer(
        AGENT_SANDBOX_DEFAULT_EXEC_TIMEOUT_SECONDS="300").start()
    names = []
    tmpdir = tempfile.mkdtemp(prefix="as-bench-", dir=server.tmp)
    try:
        time.sleep(1)
        print_hwm("at start", server)
        sb = server.create(memory_mb=512)["id"]
        raw_create(harness.TEST_IMAGE, names)()
        container = names[-1][0]

        bench_transfer(server, sb, container, args.rounds)
        print_hwm("after transfers", server)

        fill_workspace(server, sb, container)
        ratio, snap = bench_snapshot(server, sb, container, args.big_rounds,
                                     tmpdir)
        print_hwm("after snapshots", server)
        bench_rollback(server, sb, snap, args.big_rounds, harness.TEST_IMAGE,
                       names)
        print_hwm("after rollbacks", server)
    finally:
        raw_cleanup(names)
        server.cleanup()


if __name__ == "__main__":
    main()
