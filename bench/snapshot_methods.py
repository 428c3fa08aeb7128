#!/usr/bin/env python3
"""Why bench_files.py's snapshot ratio and the one through POST
.../snapshots disagreed: both measurements, on the same workspace, in
alternation, several times (docs/performance.md, "Why the snapshot
benchmarks disagreed").

    sudo AGENT_SANDBOX_BUILDDIR=$PWD bench/snapshot_methods.py [--mib N]
        [--reps N] [--rounds N] [--hog N]

Each repetition times, with the same server, sandbox and bare container:
- the old method (bench_files.py until bench.py replaced it): --rounds
  snapshots in a row (the newest kept, older ones deleted untimed), then
  --rounds bare exports in a row, each truncating and rewriting one file
  and fsync'ing it;
- bench.py's method: server and bare alternating, dirty pages written
  back before each call, a new export file that is fsync'd, renamed and
  its directory fsync'd, every snapshot and export removed untimed;
- the two bare floors alone, alternating: what truncating the previous
  export costs the old floor.
--hog N adds N processes that spin on the CPU for the whole run, as
another workload on the same host would.  By hand, as root; asserts
nothing.
"""

import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import benchlib as B  # noqa: E402
from benchlib import MIB, harness  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=float, default=100)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--hog", type=int, default=0, metavar="N",
                    help="keep N processes spinning on the CPU meanwhile "
                    "(another workload on the host)")
    a = ap.parse_args()
    harness.require_root_and_docker()
    info = B.run_info(harness.TEST_IMAGE, "snapshot-methods")
    print(B.header_line(info))
    print("workspace %g MiB, %d repetitions of %d rounds, %d spinning "
          "process(es)" % (a.mib, a.reps, a.rounds, a.hog), flush=True)
    with B.Resources() as res:
        for _ in range(a.hog):
            hog = subprocess.Popen([sys.executable, "-c", "while 1: pass"])
            res.add("a spinning process", lambda p=hog: (p.kill(), p.wait()))
        tmp = res.tmpdir()
        srv = res.server(AGENT_SANDBOX_DEFAULT_MEMORY_MB="512")
        raw = res.raw(harness.TEST_IMAGE)
        size = int(a.mib * MIB)
        big = B.random_file(os.path.join(tmp, "big"), size)
        small = B.random_file(os.path.join(tmp, "small"), 100)
        tar = B.write_tar(os.path.join(tmp, "ws.tar"), [
            ("big", size, big), ("src", None, None),
            ("src/lib", None, None)] +
            [("src/lib/f%d" % i, 100, small) for i in range(5)])
        sb = B.server_json(srv, "POST", "/v1/sandboxes", {}, want=201)["id"]
        rc = raw.create()
        raw.put_tar("agent-sandbox-" + sb, tar)
        raw.put_tar(rc, tar)
        exports = os.path.join(srv.tmp, "exports")
        os.makedirs(exports)
        meter = B.CpuMeter(harness.daemon_pids(srv))
        made, n = [], [0]
        export = "/containers/%s/archive?path=/workspace" % rc

        def snapshot():
            made.append(B.server_json(
                srv, "POST", "/v1/sandboxes/%s/snapshots" % sb,
                {"name": "m"}, want=201)["id"])

        def keep_newest():
            while len(made) > 1:
                B.server_call(srv, "DELETE", "/v1/snapshots/" + made.pop(0),
                              want=204)

        def drop_all():
            while made:
                B.server_call(srv, "DELETE", "/v1/snapshots/" + made.pop(),
                              want=204)

        def old_floor():
            with open(os.path.join(exports, "raw-export.tar"), "wb") as f:
                B.docker_call("GET", export, sink=f.write, want=200)
                f.flush()
                os.fsync(f.fileno())

        def new_floor():
            n[0] += 1
            t = os.path.join(exports, "%d.tmp" % n[0])
            with open(t, "wb") as f:
                B.docker_call("GET", export, sink=f.write, want=200)
                f.flush()
                os.fsync(f.fileno())
            os.rename(t, t[:-4] + ".tar")
            fd = os.open(exports, os.O_RDONLY | os.O_DIRECTORY)
            os.fsync(fd)
            os.close(fd)

        def new_floor_after():
            os.unlink(os.path.join(exports, "%d.tar" % n[0]))

        snap = meter.wrap("snapshot", snapshot)
        old = meter.wrap("old floor", old_floor)
        new = meter.wrap("new floor", new_floor)
        every = {k: [] for k in ("old s", "old r", "new s", "new r",
                                 "floor old", "floor new")}

        def line(label, s, r):
            return "%s server %6.1f bare %6.1f ratio %.2f" % (
                label, B.p50(s), B.p50(r), B.p50(s) / B.p50(r))
        old_floor()
        for k in range(a.reps):
            s = B.timed(snap, a.rounds, keep_newest)
            r = B.timed(old, a.rounds)
            drop_all()
            d = B.interleaved([("s", snap, drop_all),
                               ("r", new, new_floor_after)], a.rounds,
                              warmup=0, before=B.drop_dirty)
            f = B.interleaved([("old", old, None),
                               ("new", new, new_floor_after)], a.rounds,
                              warmup=0, before=B.drop_dirty)
            for key, v in (("old s", s), ("old r", r), ("new s", d["s"]),
                           ("new r", d["r"]), ("floor old", f["old"]),
                           ("floor new", f["new"])):
                every[key] += v
            print("rep %d  %s | %s | floors: old %6.1f new %6.1f  load %.2f"
                  % (k, line("old method:", s, r),
                     line("bench.py's method:", d["s"], d["r"]),
                     B.p50(f["old"]), B.p50(f["new"]), os.getloadavg()[0]),
                  flush=True)
        print("all    %s | %s | floors: old %6.1f new %6.1f" % (
            line("old method:", every["old s"], every["old r"]),
            line("bench.py's method:", every["new s"], every["new r"]),
            B.p50(every["floor old"]), B.p50(every["floor new"])))
        for side in ("snapshot", "old floor", "new floor"):
            srv_ms, cli_ms = meter.per_call_ms(side)
            split = ", ".join("%s %.1f" % kv for kv in
                              meter.split_ms(side).items() if kv[1] >= 0.05)
            print("cpu %-10s server's processes %6.1f ms/call (%s), client "
                  "%6.1f ms/call" % (side, srv_ms, split or "-", cli_ms))
        print("note at the end: load average %.2f/%.2f/%.2f" %
              os.getloadavg())


if __name__ == "__main__":
    main()
