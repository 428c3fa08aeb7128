#!/usr/bin/env python3
"""Throughput of the HTTP front against Docker's own API, in one run on
one daemon, and the daemons' memory idle and during an upload.

    sudo bench/bench_http.py [--seconds N] [--connections N]

Runs by hand (not in make check): it needs root, a running dockerd, a
built tree (or AGENT_SANDBOX_TEST_PREFIX for installed daemons), wrk
(apt-get install wrk) and the test image.  Numbers go to
docs/performance.md by hand.

What is compared, each for --seconds with --connections kept-alive
connections, one request at a time on each:
- GET /healthz (wrk, and bench/httpload) against GET /_ping on Docker's
  socket (httpload: wrk cannot reach a unix socket);
- GET /v1/sandboxes with 3 sandboxes against the raw container list
  filtered on this server's label;
- RSS of the daemons idle, and apid's growth while a 50 MiB file is
  uploaded.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import harness  # noqa: E402

HTTPLOAD = os.path.join(harness.BUILDDIR, "bench", "httpload")


def wrk(port, path, seconds, conns, key=None):
    cmd = ["wrk", "-t2", "-c%d" % conns, "-d%ds" % seconds]
    if key:
        cmd += ["-H", "Authorization: Bearer " + key]
    out = subprocess.run(cmd + ["http://127.0.0.1:%d%s" % (port, path)],
                         capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return rps, int(errors.group(1)) if errors else 0


def httpload(seconds, conns, path, port=None, sock=None, key=None):
    cmd = [HTTPLOAD, "-c", str(conns), "-d", str(seconds)]
    if key:
        cmd += ["-H", "Authorization: Bearer " + key]
    cmd += ["-u", sock] if sock else ["-p", str(port)]
    out = subprocess.run(cmd + [path], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out)


def rss_mib(server):
    return {name: harness.rss_kib(pid) / 1024.0
            for name, pid in harness.daemon_pids(server).items()}


def upload_growth(server, sb):
    """apid's RSS growth, sampled while 50 MiB are uploaded."""
    apid = server.children()["apid"]
    base = harness.rss_kib(apid)
    peak = [base]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], harness.rss_kib(apid))
            time.sleep(0.01)
    t = threading.Thread(target=sample)
    t.start()
    data = os.urandom(50 << 20)
    status, _ = server.api("PUT", "/v1/sandboxes/%s/files?path=big" % sb,
                           body=data)
    done.set()
    t.join()
    assert status == 200, status
    return (peak[0] - base) / 1024.0


def line(label, ours, floor):
    print("%-34s %9.0f req/s   floor %9.0f req/s   ratio %.2f" %
          (label, ours, floor, ours / floor))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--connections", type=int, default=16)
    args = ap.parse_args()
    harness.require_root_and_docker()
    server = harness.SandboxServer().start()
    s, c, key = args.seconds, args.connections, harness.TEST_KEY
    try:
        time.sleep(1)
        idle = rss_mib(server)
        print("RSS idle: " + ", ".join("%s %.1f MiB" % kv
                                       for kv in sorted(idle.items())) +
              " (total %.1f MiB)" % sum(idle.values()))
        sbs = [server.create()["id"] for _ in range(3)]
        floor = httpload(s, c, "/_ping", sock=harness.DOCKER_SOCKET)
        ours_wrk, errs = wrk(server.port, "/healthz", s, c)
        assert errs == 0, errs
        ours = httpload(s, c, "/healthz", port=server.port)
        line("GET /healthz (wrk)", ours_wrk, floor["rps"])
        line("GET /healthz (httpload)", ours["rps"], floor["rps"])
        label = json.dumps({"label": [
            "io.agent-sandbox.instance=" + server.instance_id()]})
        floor = httpload(s, c, "/containers/json?all=1&filters=" +
                         urllib.parse.quote(label), sock=harness.DOCKER_SOCKET)
        ours_wrk, errs = wrk(server.port, "/v1/sandboxes", s, c, key)
        assert errs == 0, errs
        line("GET /v1/sandboxes, 3 (wrk)", ours_wrk, floor["rps"])
        print("apid's growth during a 50 MiB upload: %.1f MiB" %
              upload_growth(server, sbs[0]))
    finally:
        server.cleanup()


if __name__ == "__main__":
    main()
