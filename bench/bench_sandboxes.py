#!/usr/bin/env python3
"""Time agent-sandbox against bare Docker Engine calls, in one run on one
daemon, and report p50/p95 and the ratio; then the daemons' memory.

    sudo bench/bench_sandboxes.py [--rounds N]

Runs by hand (not in make check): it needs root, a running dockerd, a built
tree (or AGENT_SANDBOX_TEST_PREFIX for installed daemons) and the test image
(scripts/build-images).  Numbers go to docs/performance.md by hand.

What is compared:
- exec of `true`: POST /v1/sandboxes/{id}/exec through the server, against
  the raw exec create + start + inspect on the same container;
- create: POST /v1/sandboxes (image present locally) against a bare
  hardened container create + start with a volume, made directly;
- RSS of managerd + apid + dockerd-proxy idle and with 20 sandboxes.
"""

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import harness  # noqa: E402


def pct(values, p):
    values = sorted(values)
    k = max(0, min(len(values) - 1, int(round(p / 100.0 * len(values))) - 1))
    return values[k]


def timed(fn, rounds):
    out = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000.0)
    return out


def raw_exec(container):
    def run():
        status, body = harness.docker_request(
            "POST", "/containers/%s/exec" % container,
            body={"AttachStdout": True, "AttachStderr": True, "Tty": False,
             "Cmd": ["true"], "User": "1000:1000",
             "WorkingDir": "/workspace"})
        eid = json.loads(body)["Id"]
        harness.docker_request("POST", "/exec/%s/start" % eid,
                               body={"Detach": False, "Tty": False})
        harness.docker_request("GET", "/exec/%s/json" % eid)
    return run


def raw_create(image, names):
    def run():
        n = "as-bench-%d-%d" % (os.getpid(), len(names))
        vol = n + "-ws"
        harness.docker_request("POST", "/volumes/create",
                               body={"Name": vol,
                                "Labels": {"as-bench": "1"}})
        status, body = harness.docker_request(
            "POST", "/containers/create?name=" + n,
            body={"Image": image, "Entrypoint": ["/bin/sh", "-c",
                                            "trap 'exit 0' TERM INT; "
                                            "while :; do sleep 3600 & "
                                            "wait; done"],
             "Cmd": [], "Hostname": "sandbox", "User": "1000:1000",
             "WorkingDir": "/workspace", "Labels": {"as-bench": "1"},
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
        assert status == 201, body
        harness.docker_request("POST", "/containers/%s/start" % n)
        names.append((n, vol))
    return run


def raw_cleanup(names):
    for n, vol in names:
        harness.docker_request("DELETE", "/containers/%s?force=true&v=true"
                               % n)
        harness.docker_request("DELETE", "/volumes/%s?force=true" % vol)


def report(label, ours, raw):
    print("%-8s ours p50 %7.1f ms  p95 %7.1f ms | docker p50 %7.1f ms  "
          "p95 %7.1f ms | ratio p50 %.2f" %
          (label, statistics.median(ours), pct(ours, 95),
           statistics.median(raw), pct(raw, 95),
           statistics.median(ours) / statistics.median(raw)))


def rss_total(server):
    return sum(harness.rss_kib(p)
               for p in harness.daemon_pids(server).values())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=30)
    args = ap.parse_args()
    harness.require_root_and_docker()
    server = harness.SandboxServer(AGENT_SANDBOX_MAX_SANDBOXES="40").start()
    names = []
    try:
        time.sleep(1)
        idle = rss_total(server)
        sb = server.create()["id"]
        container = "agent-sandbox-" + sb
        server.exec(sb, "true")
        raw_exec(container)()
        ours = timed(lambda: server.exec(sb, "true"), args.rounds)
        raw = timed(raw_exec(container), args.rounds)
        report("exec", ours, raw)

        made = []
        ours = timed(lambda: made.append(server.create()["id"]),
                     min(args.rounds, 20))
        raw = timed(raw_create(harness.TEST_IMAGE, names),
                    min(args.rounds, 20))
        report("create", ours, raw)
        while len(made) < 20:
            made.append(server.create()["id"])
        time.sleep(1)
        busy = rss_total(server)
        print("RSS of the three daemons: idle %.1f MiB, with %d sandboxes "
              "%.1f MiB" % (idle / 1024.0, len(made) + 1, busy / 1024.0))
    finally:
        raw_cleanup(names)
        server.cleanup()


if __name__ == "__main__":
    main()
