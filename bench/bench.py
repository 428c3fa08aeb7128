#!/usr/bin/env python3
"""agent-sandbox against the bare Docker Engine calls that do the same
work, in one invocation on one Docker daemon: p50/p95 of both sides, the
ratio of the p50s, the paired ratio (the median of server/bare over the
rounds, each round's two calls back to back), the goal and whether it
was met (goals are checked on the ratio of the p50s).

    sudo AGENT_SANDBOX_BUILDDIR=$PWD bench/bench.py [--rounds N]
        [--big-rounds N] [--seconds N] [--quick] [--markdown FILE]
        [--json FILE]

Run by hand, never by make check (root, a running dockerd, a built tree
or AGENT_SANDBOX_TEST_PREFIX, the test image, wrk).  It asserts nothing
about timings.  The table goes to stdout (progress to stderr); its format
is fixed ("bench-format 1"): a line naming the run (UTC date, commit,
CPUs, kernel, Docker, image, mode, load average at start, other running
containers), a header line, one row per operation, then "cpu" lines and
"note" lines.  --markdown FILE rewrites the part of FILE between
<!-- bench:begin --> and <!-- bench:end --> (docs/performance.md) with
the same table; --json FILE writes every sample.

How the sides are timed, the same way on both: each call is a new
connection and its whole response is read (the body of a download to
its last byte; a snapshot's 201 comes once the server's file is synced).
Where both sides run in the same phase their rounds alternate (server,
bare, bare, server, ...) after an untimed warm-up round, so a slow spell
of the host falls on both.  Untimed between calls: removing what the
call made (a sandbox, a snapshot, an export, a container), sync(2) of
dirty pages before each transfer, and, around creates, waiting until
Docker's view of the server's containers is still (a sibling's removal,
a pool's refill).

Rows (the floor is what the server itself asks of Docker, made
directly on /var/run/docker.sock; bench/benchlib.py):
- create: POST /v1/sandboxes against volume create + hardened container
  create + start;
- create, warm pool: a second server with AGENT_SANDBOX_WARM_POOL=<image>=2
  (the goal is the p50 itself; in a tree without the pool the row
  measures the normal path, and a note says so);
- exec of `true`: POST .../exec against exec create + start + inspect;
- write / read of a file: PUT / GET .../files against an archive PUT of a
  one-file tar of the same bytes / an archive GET of the file;
- snapshot of a workspace (one big file, a directory, five small files,
  the same tar put into both): POST .../snapshots against an archive GET of
  /workspace into a new file beside the data directory, fsync, rename and
  fsync of the directory (the server makes its snapshot durable so);
- rollback / fork from a snapshot of a small workspace: against removing
  the container and its volume (rollback only), creating and starting a
  new one and putting the stored snapshot's tar into /workspace;
- requests a second with wrk (and bench/httpload, the tool of the floor)
  for GET /healthz, GET /v1/sandboxes (3 sandboxes), GET
  /v1/sandboxes/{id}, against httpload on Docker's /_ping, its container
  list filtered on the server's label and its container inspect;
- memory: the resident set of managerd + apid + dockerd-proxy idle and
  with 21 sandboxes, and their growth while big files move.
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import benchlib as B  # noqa: E402
from benchlib import MIB, harness  # noqa: E402

FORMAT = 1
PHASES = ("create", "pool", "exec", "files", "snapshot", "restore", "http",
          "memory")
# The order of the table's rows (the issue's), whatever order they ran in.
RANK = {k: i for i, k in enumerate((
    "create", "pool", "write", "read", "snapshot", "read big", "exec",
    "rollback", "fork", "http", "memory"))}
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"


def say(*args):
    print("#", *args, file=sys.stderr, flush=True)


# --- rows --------------------------------------------------------------------

class Row:
    """One operation.  ours and raw are samples (ms, or one value for
    req/s and MiB).  goal: (what, op, value) with what "ratio", "p50" or
    "value" (the server's figure); higher is better for req/s."""

    def __init__(self, op, unit, ours, raw=None, goal=None, rank=99):
        self.op, self.unit, self.ours, self.raw = op, unit, ours, raw
        self.goal, self.rank = goal, rank

    def p50(self, side):
        v = self.ours if side == "ours" else self.raw
        return B.p50(v) if v else None

    def p95(self, side):
        v = self.ours if side == "ours" else self.raw
        return B.pct(v, 95) if v and len(v) > 1 else None

    def ratio(self):
        if not self.raw or not self.ours:
            return None
        return self.p50("ours") / self.p50("raw")

    def paired(self):
        """Median of server/bare over the rounds: each round's two calls
        ran back to back, so a slow spell of the host cancels out."""
        if self.unit != "ms" or not self.raw or \
                len(self.raw) != len(self.ours):
            return None
        return B.p50([a / b for a, b in zip(self.ours, self.raw)])

    def result(self):
        if self.goal is None:
            return "-"
        what, op, value = self.goal
        got = {"ratio": self.ratio(), "p50": self.p50("ours"),
               "value": self.p50("ours")}[what]
        if got is None:
            return "-"
        if what == "ratio":
            got = round(got, 2)     # as the table shows it
        ok = got <= value if op == "<=" else got >= value
        return "met" if ok else "missed"

    def goal_text(self, markdown=False):
        if self.goal is None:
            return "-"
        what, op, value = self.goal
        if not markdown:
            return "%s%s%s" % ("ratio" if what == "ratio" else "", op,
                               "%.2f" % value if what == "ratio" else
                               fmt_num(value, self.unit) + self.unit)
        sym = {"<=": "≤", ">=": "≥"}[op]
        if what == "ratio":
            return "%s %.2f" % (sym, value)
        return "%s %s %s" % (sym, fmt_num_md(value, self.unit), self.unit)


def fmt_num(v, unit):
    if v is None:
        return "-"
    if unit == "req/s":
        return "%.0f" % v
    return "%.1f" % v


def fmt_num_md(v, unit):
    if v is None:
        return "-"
    if unit == "req/s":
        return "{:,.0f}".format(v)
    return "%.1f" % v


TEXT_COLS = "%-42s %-6s %11s %11s %11s %11s %6s %6s %-13s %s"


def in_order(rows, cpu):
    rows = sorted(rows, key=lambda r: r.rank)
    where = {r.op: i for i, r in enumerate(rows)}
    return rows, sorted(cpu, key=lambda c: where[c[0]])


def text_table(info, rows, cpu, notes):
    rows, cpu = in_order(rows, cpu)
    out = ["bench-format %d" % FORMAT, B.header_line(info),
           TEXT_COLS % ("operation", "unit", "server_p50", "server_p95",
                        "raw_p50", "raw_p95", "ratio", "paired", "goal",
                        "result")]
    for r in rows:
        ratio = r.ratio()
        out.append(TEXT_COLS % (
            r.op, r.unit, fmt_num(r.p50("ours"), r.unit),
            fmt_num(r.p95("ours"), r.unit), fmt_num(r.p50("raw"), r.unit),
            fmt_num(r.p95("raw"), r.unit),
            "-" if ratio is None else "%.2f" % ratio,
            "-" if r.paired() is None else "%.2f" % r.paired(),
            r.goal_text(), r.result()))
    for op, (srv, cli_ours, cli_raw) in cpu:
        out.append("cpu %-38s server daemons %7.1f ms/op, client %6.1f "
                   "ms/op; bare side's client %6.1f ms/op" %
                   (op, srv, cli_ours, cli_raw))
    for n in notes:
        out.append("note " + n)
    return "\n".join(out) + "\n"


def markdown_table(info, rows, cpu, notes, argv):
    rows, cpu = in_order(rows, cpu)
    md = []
    md.append("<!-- generated by bench/bench.py --markdown: edits between "
              "the bench markers are overwritten -->")
    md.append("Run **%s**: `bench/bench.py%s`, bench-format %d." %
              (B.run_name(info), (" " + " ".join(argv)) if argv else "",
               FORMAT))
    md.append("")
    md.append("Host: %s CPUs, Linux %s, Docker Engine %s, image `%s`; "
              "load average at start %s, %s other running container(s) "
              "on the daemon." % (info["cpus"], info["kernel"],
                                  info["docker"], info["image"],
                                  info["load"], info["others"]))
    md.append("")
    md.append("| operation | this server p50 / p95 | raw Docker floor "
              "p50 / p95 | ratio | paired | goal | |")
    md.append("| --- | --- | --- | --- | --- | --- | --- |")

    def side(r, s):
        a, b = r.p50(s), r.p95(s)
        if a is None:
            return "-"
        if b is None:
            return "%s %s" % (fmt_num_md(a, r.unit), r.unit)
        return "%s / %s %s" % (fmt_num_md(a, r.unit), fmt_num_md(b, r.unit),
                               r.unit)
    for r in rows:
        ratio = r.ratio()
        md.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            r.op.replace("|", "\\|"), side(r, "ours"), side(r, "raw"),
            "-" if ratio is None else "%.2f" % ratio,
            "-" if r.paired() is None else "%.2f" % r.paired(),
            r.goal_text(markdown=True), r.result()))
    if cpu:
        md.append("")
        md.append("CPU per operation (user + system, from /proc), same run:")
        md.append("")
        md.append("| operation | the server's processes | client, server "
                  "side | client, bare side |")
        md.append("| --- | --- | --- | --- |")
        for op, (srv, a, b) in cpu:
            md.append("| %s | %.1f ms | %.1f ms | %.1f ms |" % (op, srv, a, b))
    if notes:
        md.append("")
        md.append("Notes of the run:")
        md.append("")
        for n in notes:
            md.append("- " + n)
    return "\n".join(md) + "\n"


def rewrite_markdown(path, block):
    with open(path) as f:
        text = f.read()
    a, b = text.find(BEGIN), text.find(END)
    if a == -1 or b == -1 or b < a:
        raise SystemExit("%s: no %s ... %s markers" % (path, BEGIN, END))
    text = text[:a + len(BEGIN)] + "\n" + block + text[b:]
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


# --- the run -----------------------------------------------------------------

class Bench:
    def __init__(self, args, res):
        self.args, self.res = args, res
        self.image = harness.TEST_IMAGE
        self.rows, self.cpu, self.notes = [], [], []
        self.tmp = res.tmpdir()
        self.raw = res.raw(self.image)
        self.live = []      # sandboxes of the main server that stay
        self.settings = {
            "AGENT_SANDBOX_MAX_SANDBOXES": "40",
            # The floor's container has 512 MiB; so do the sandboxes.
            "AGENT_SANDBOX_DEFAULT_MEMORY_MB": "512",
            "AGENT_SANDBOX_DEFAULT_EXEC_TIMEOUT_SECONDS": "300",
            "AGENT_SANDBOX_MAX_FILE_BYTES": str(1 << 30),
        }
        self.srv = None

    # helpers

    def add(self, row, meter=None, names=("server", "raw")):
        self.rows.append(row)
        if meter is not None:
            srv, cli = meter.per_call_ms(names[0])
            _, cli_raw = meter.per_call_ms(names[1])
            self.cpu.append((row.op, (srv, cli, cli_raw)))
        say("%-36s server p50 %s, raw p50 %s, ratio %s" % (
            row.op, fmt_num(row.p50("ours"), row.unit),
            fmt_num(row.p50("raw"), row.unit),
            "-" if row.ratio() is None else "%.2f" % row.ratio()))

    def meter(self, server):
        return B.CpuMeter(harness.daemon_pids(server))

    def create(self, server=None, body=None):
        return B.server_json(server or self.srv, "POST", "/v1/sandboxes",
                             body or {}, want=201)["id"]

    def delete(self, sb, server=None):
        B.server_call(server or self.srv, "DELETE", "/v1/sandboxes/" + sb,
                      want=204)

    def compare(self, op, rank, ours, raw, rounds, goal, before=None,
                ours_after=None, raw_after=None, server=None):
        m = self.meter(server or self.srv)
        d = B.interleaved([("server", m.wrap("server", ours), ours_after),
                           ("raw", m.wrap("raw", raw), raw_after)],
                          rounds, before=before)
        self.add(Row(op, "ms", d["server"], d["raw"], goal, rank), m)
        return m

    def cpu_split(self, op, meter):
        self.notes.append("%s, CPU per call of the server's processes: %s" %
                          (op, ", ".join("%s %.1f ms" % kv for kv in
                                         meter.split_ms("server").items()
                                         if kv[1] >= 0.05)))

    def settle(self, *servers):
        return lambda: B.settle(list(servers or [self.srv]))

    def mib(self, n):
        return "%d MiB" % n if n >= 1 else "%d KiB" % (n * 1024)

    # phases

    def phase_create(self):
        say("create, %d rounds" % self.args.rounds)
        made, rawmade = [], []
        self.compare(
            "create", RANK["create"], lambda: made.append(self.create()),
            lambda: rawmade.append(self.raw.create()), self.args.rounds,
            ("ratio", "<=", 1.10), before=self.settle(),
            ours_after=lambda: self.delete(made.pop()),
            raw_after=lambda: self.raw.remove(rawmade.pop()))

    def phase_pool(self):
        spec = "%s=2" % self.image
        say("create with a warm pool (AGENT_SANDBOX_WARM_POOL=%s)" % spec)
        settings = dict(self.settings, AGENT_SANDBOX_WARM_POOL=spec)
        pool = self.res.server(**settings)
        deadline = time.time() + self.args.pool_wait
        seen = []
        while time.time() < deadline:
            seen = B.instance_objects(pool)
            if len([1 for _, st in seen if st == "running"]) >= 2:
                break
            time.sleep(0.25)
        active = bool(seen)
        if active:
            self.notes.append(
                "create, warm pool: the server made %d container(s) of its "
                "own before any create (AGENT_SANDBOX_WARM_POOL=%s); each "
                "round waits until the pool is refilled" % (len(seen), spec))
        else:
            self.notes.append(
                "create, warm pool: no pool container appeared within %d s "
                "of start with AGENT_SANDBOX_WARM_POOL=%s: this build has "
                "no warm pool, the row measures the normal create path" %
                (self.args.pool_wait, spec))

        def before():
            B.settle([pool])
            if active:
                end = time.time() + 30
                while time.time() < end and len(
                        [1 for _, st in B.instance_objects(pool)
                         if st == "running"]) < 2:
                    time.sleep(0.1)
        made, rawmade = [], []
        self.compare(
            "create, warm pool of 2", RANK["pool"],
            lambda: made.append(self.create(pool)),
            lambda: rawmade.append(self.raw.create()), self.args.rounds,
            ("p50", "<=", 30.0), before=before,
            ours_after=lambda: self.delete(made.pop(), pool),
            raw_after=lambda: self.raw.remove(rawmade.pop()), server=pool)
        self.res.stop_server(pool)

    def phase_exec(self):
        say("exec, %d rounds" % self.args.rounds)
        sb = self.sb
        body = {"command": "true"}

        def ours():
            doc = B.server_json(self.srv, "POST",
                                "/v1/sandboxes/%s/exec" % sb, body, want=200)
            if doc["exit_code"] != 0:
                raise B.Failed("exec true: %r" % doc)

        def raw():
            if self.raw.exec(self.rc, ["true"]) != 0:
                raise B.Failed("raw exec of true failed")
        self.compare("exec true", RANK["exec"], ours, raw, self.args.rounds,
                     ("ratio", "<=", 1.05))
        self.docker_fixed_costs()

    def docker_fixed_costs(self):
        """What every archive PUT costs in Docker itself, whatever its
        size (create's ownership tar, an upload, a rollback's import)."""
        tar = B.write_tar(os.path.join(self.tmp, "one-dir.tar"),
                          [("bench-dir", None, None)])
        put = B.timed(lambda: self.raw.put_tar(self.rc, tar),
                      self.args.rounds)
        exe = shutil.which("dockerd")
        start = B.timed(lambda: subprocess.run(
            [exe, "--version"], stdout=subprocess.DEVNULL, check=True),
            self.args.rounds) if exe else None
        self.notes.append(
            "Docker's archive PUT of a one-entry tar into /workspace: p50 "
            "%.1f ms, p95 %.1f ms%s" % (
                B.p50(put), B.pct(put, 95),
                "; `dockerd --version` (dockerd re-executes itself to "
                "unpack an archive): p50 %.1f ms" % B.p50(start)
                if start else ""))
        with open(tar, "rb") as f:
            one = f.read()
        late = {p: [B.late_put(self.rc, one, 0.1, p)
                    for _ in range(self.args.rounds)] for p in (0, 1)}
        self.notes.append(
            "the same PUT with its tar 100 ms after the head, from the "
            "tar's first byte to the answer: p50 %.1f ms; after a pax "
            "header of one comment record (how the server primes an "
            "upload): p50 %.1f ms" % (B.p50(late[0]), B.p50(late[1])))

    def put_file(self, path, name):
        """Upload through the server, and the same bytes as a tar into the
        bare container (setup and the write row)."""
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            B.server_call(self.srv, "PUT", "/v1/sandboxes/%s/files?path=%s" %
                          (self.sb, name), body=f, length=size, want=200)

    def phase_files(self):
        a = self.args
        for mib, rounds, write in ((a.small_mib, a.rounds, True),
                                   (a.big_mib, a.big_rounds, False)):
            size = int(mib * MIB)
            name = "bench-%d.bin" % size
            src = B.random_file(os.path.join(self.tmp, name), size)
            tar = B.write_tar(os.path.join(self.tmp, name + ".tar"),
                              [(name, size, src)])
            url = "/v1/sandboxes/%s/files?path=%s" % (self.sb, name)
            if write:
                say("write %s, %d rounds" % (self.mib(mib), rounds))

                def ours():
                    with open(src, "rb") as f:
                        B.server_call(self.srv, "PUT", url, body=f,
                                      length=size, want=200)
                op = "write %s" % self.mib(mib)
                self.cpu_split(op, self.compare(
                    op, RANK["write"], ours,
                    lambda: self.raw.put_tar(self.rc, tar), rounds,
                    ("ratio", "<=", 1.10), before=B.drop_dirty))
            else:
                with B.RssSampler(self.srv) as s:
                    self.put_file(src, name)
                self.growth("upload of %s" % self.mib(mib), s)
                self.raw.put_tar(self.rc, tar)
            # The bytes come back whole on both sides.
            want = hashlib.sha256()
            with open(src, "rb") as f:
                for chunk in iter(lambda: f.read(MIB), b""):
                    want.update(chunk)
            got = hashlib.sha256()
            B.server_call(self.srv, "GET", url, sink=got.update, want=200)
            if got.digest() != want.digest():
                raise B.Failed("the server's download returned other bytes")
            raw_url = "/containers/%s/archive?path=/workspace/%s" % (
                self.rc, name)
            n = [0]
            B.docker_call("GET", raw_url, want=200,
                          sink=lambda c: n.__setitem__(0, n[0] + len(c)))
            if n[0] < size:
                raise B.Failed("the bare download is short: %d" % n[0])
            say("read %s, %d rounds" % (self.mib(mib), rounds))
            op = "read %s" % self.mib(mib)
            with B.RssSampler(self.srv) as s:
                m = self.compare(
                    op, RANK["read" if write else "read big"],
                    lambda: B.server_call(self.srv, "GET", url, sink=B.drop,
                                          want=200),
                    lambda: B.docker_call("GET", raw_url, sink=B.drop,
                                          want=200),
                    rounds, ("ratio", "<=", 1.10), before=B.drop_dirty)
            self.cpu_split(op, m)
            if not write:
                self.growth("download of %s" % self.mib(mib), s)

    def workspace_tar(self, mib):
        """One big file, a directory tree and five small files."""
        size = int(mib * MIB)
        big = B.random_file(os.path.join(self.tmp, "ws-%d.bin" % size), size)
        small = B.random_file(os.path.join(self.tmp, "small.bin"), 100)
        return B.write_tar(
            os.path.join(self.tmp, "ws-%d.tar" % size),
            [("big", size, big), ("src", None, None),
             ("src/lib", None, None)] +
            [("src/lib/f%d" % i, 100, small) for i in range(5)])

    def phase_snapshot(self):
        a = self.args
        exports = os.path.join(self.srv.tmp, "raw-exports")
        os.makedirs(exports)
        for mib, rounds in ((a.small_mib, a.rounds),
                            (a.big_mib, a.big_rounds)):
            op = "snapshot, %s workspace" % self.mib(mib)
            say("%s, %d rounds" % (op, rounds))
            tar = self.workspace_tar(mib)
            sb = self.create()
            rc = self.raw.create()
            self.raw.put_tar("agent-sandbox-" + sb, tar)
            self.raw.put_tar(rc, tar)
            made, n, sizes = [], [0], {}

            def ours():
                doc = B.server_json(self.srv, "POST",
                                    "/v1/sandboxes/%s/snapshots" % sb,
                                    {"name": "bench"}, want=201)
                made.append(doc["id"])
                sizes["server"] = doc["size_bytes"]

            def ours_after():
                B.server_call(self.srv, "DELETE",
                              "/v1/snapshots/" + made.pop(), want=204)

            def raw():
                n[0] += 1
                tmp = os.path.join(exports, "%d.tmp" % n[0])
                with open(tmp, "wb") as f:
                    B.docker_call("GET", "/containers/%s/archive?path="
                                  "/workspace" % rc, sink=f.write, want=200)
                    f.flush()
                    os.fsync(f.fileno())
                dst = tmp[:-4] + ".tar"
                os.rename(tmp, dst)
                fd = os.open(exports, os.O_RDONLY | os.O_DIRECTORY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
                sizes["raw"] = os.path.getsize(dst)

            def raw_after():
                os.unlink(os.path.join(exports, "%d.tar" % n[0]))

            with B.RssSampler(self.srv) as s:
                m = self.compare(op, RANK["snapshot"], ours, raw, rounds,
                                 ("ratio", "<=", 1.05),
                                 before=B.drop_dirty, ours_after=ours_after,
                                 raw_after=raw_after)
            self.cpu_split(op, m)
            if mib == a.big_mib:
                self.growth("snapshot of a %s workspace" % self.mib(mib), s)
            self.notes.append("%s: the server's snapshot %d bytes, the bare "
                              "export %d bytes" % (op, sizes["server"],
                                                   sizes["raw"]))
            self.delete(sb)
            self.raw.remove(rc)

    def phase_restore(self):
        a = self.args
        mib = a.fork_mib
        say("rollback and fork, %s workspace, %d rounds" %
            (self.mib(mib), a.rounds))
        tar = self.workspace_tar(mib)
        sb = self.create()
        self.live.append(sb)
        self.raw.put_tar("agent-sandbox-" + sb, tar)
        snap = B.server_json(self.srv, "POST",
                             "/v1/sandboxes/%s/snapshots" % sb,
                             {"name": "restore"}, want=201)["id"]
        stored = os.path.join(self.srv.data_dir, "snapshots", snap + ".tar")
        # The floor is the reference's own sequence of Docker
        # calls (its root chown container included); the least sequence
        # that makes the same sandbox is shown beside it, with no goal.
        for floor, make, goal in (
                ("reference's calls", self.raw.create_reference,
                 ("ratio", "<=", 0.70)),
                ("least calls", self.raw.create, None)):
            self.restore_rows(sb, snap, stored, floor, make, goal)
        self.notes.append("rollback and fork: the stored snapshot is %d "
                          "bytes; the reference's sequence: volume, a root "
                          "container with CAP_CHOWN alone that chowns "
                          "/workspace (create, start, wait, remove), the "
                          "sandbox's container and its start, the archive "
                          "PUT (a rollback removes container and volume "
                          "first)" % os.path.getsize(stored))

    def restore_rows(self, sb, snap, stored, floor, make, goal):
        a = self.args
        mib = self.mib(a.fork_mib)
        cur = [make()]
        self.raw.put_tar(cur[0], stored)

        def raw_rollback():
            self.raw.remove(cur.pop())
            cur.append(make())
            self.raw.put_tar(cur[0], stored)
        self.compare(
            "rollback, %s, %s" % (mib, floor),
            RANK["rollback"],
            lambda: B.server_json(self.srv, "POST",
                                  "/v1/sandboxes/%s/rollback" % sb,
                                  {"snapshot_id": snap}, want=200),
            raw_rollback, a.rounds, goal, before=self.settle())
        self.raw.remove(cur.pop())

        made, rawmade = [], []

        def raw_fork():
            rawmade.append(make())
            self.raw.put_tar(rawmade[-1], stored)
        self.compare(
            "fork, %s, %s" % (mib, floor), RANK["fork"],
            lambda: made.append(B.server_json(
                self.srv, "POST", "/v1/snapshots/%s/fork" % snap, {},
                want=201)["id"]),
            raw_fork, a.rounds, goal, before=self.settle(),
            ours_after=lambda: self.delete(made.pop()),
            raw_after=lambda: self.raw.remove(rawmade.pop()))

    def phase_http(self):
        a = self.args
        while len(self.live) < 3:
            self.live.append(self.create())
        while len(self.live) > 3:
            self.delete(self.live.pop())
        sock = harness.DOCKER_SOCKET
        label = json.dumps({"label": [
            "io.agent-sandbox.instance=" + self.srv.instance_id()]})
        key = harness.TEST_KEY
        s, c = a.seconds, a.connections
        for op, path, floor, goal in (
                ("GET /healthz", "/healthz", "/_ping", None),
                ("GET /v1/sandboxes, 3 sandboxes", "/v1/sandboxes",
                 "/containers/json?all=1&filters=" +
                 urllib.parse.quote(label), 20000.0),
                ("GET /v1/sandboxes/{id}", "/v1/sandboxes/" + self.sb,
                 "/containers/agent-sandbox-%s/json" % self.sb, 20000.0)):
            say("%s: %d s each, %d connections" % (op, s, c))
            fl = B.httpload(s, c, floor, sock=sock)
            rps, errors = B.wrk(self.srv.port, path, s, c,
                                key if path != "/healthz" else None)
            hl = B.httpload(s, c, path, port=self.srv.port,
                            key=key if path != "/healthz" else None)
            for tool, n, bad in (("wrk", rps, errors),
                                 ("httpload", hl["rps"], hl["failed"])):
                self.add(Row("%s (%s)" % (op, tool), "req/s", [n],
                             [fl["rps"]],
                             ("value", ">=", goal) if goal else None,
                             RANK["http"]))
                if bad:
                    self.notes.append("%s (%s): %d failed or non-2xx "
                                      "answers" % (op, tool, bad))
            if fl["failed"]:
                self.notes.append("%s: the floor had %d failed answers" %
                                  (op, fl["failed"]))
        self.notes.append(
            "requests a second: %d s each, %d kept-alive connections, one "
            "request at a time on each; the floor is bench/httpload on "
            "Docker's socket (wrk cannot reach a unix socket): /_ping, the "
            "container list filtered on the server's label, the "
            "container's inspect; the ratio is the server's over the "
            "floor's (higher is better)" % (s, c))

    def growth(self, what, sampler):
        g = sampler.growth
        self.notes.append("resident set growth during the %s: %s" % (
            what, ", ".join("%s %+.1f MiB" % (n, g[n] / 1024.0)
                            for n in B.DAEMONS if n in g)))

    def rss_row(self, op, goal):
        rss = B.daemon_status(self.srv, "VmRSS")
        mib = sum(rss.values()) / 1024.0
        self.add(Row(op, "MiB", [mib], None, ("value", "<=", goal),
                     RANK["memory"]))
        return rss

    def phase_end(self):
        self.notes.append("at the end: load average %.2f/%.2f/%.2f, %d "
                          "other running container(s) on the daemon" %
                          (os.getloadavg() +
                           (B.foreign_containers([self.srv]),)))

    def phase_memory(self):
        n = self.args.sandboxes
        say("memory with %d sandboxes" % n)
        while len(self.live) < n:
            self.live.append(self.create())
        time.sleep(1)
        self.rss_row("memory, %d sandboxes" % n, 16.0)
        hwm = B.daemon_status(self.srv, "VmHWM")
        self.notes.append("peak resident set (VmHWM) over the whole run: " +
                          ", ".join("%s %.1f MiB" % (d, hwm[d] / 1024.0)
                                    for d in B.DAEMONS if d in hwm))

    def run(self):
        a = self.args
        self.srv = self.res.server(**self.settings)
        time.sleep(1)
        rss = self.rss_row("memory idle", 8.0)
        others = {n: harness.rss_kib(p) for n, p in
                  harness.daemon_pids(self.srv).items() if n not in rss}
        self.notes.append("memory idle: " + ", ".join(
            "%s %.1f MiB" % (d, rss[d] / 1024.0) for d in B.DAEMONS) +
            "; beside them " + ", ".join(
                "%s %.1f MiB" % (d, k / 1024.0)
                for d, k in sorted(others.items())))
        pss = B.daemon_smaps(self.srv, "Pss")
        anon = B.daemon_smaps(self.srv, "Anonymous")
        self.notes.append(
            "memory idle, shared pages divided among the processes that "
            "map them (Pss): %.1f MiB (%s); of it anonymous memory: %.1f "
            "MiB (%s)" % (
                sum(pss.values()) / 1024.0, ", ".join(
                    "%s %.1f" % (d, pss[d] / 1024.0) for d in B.DAEMONS),
                sum(anon.values()) / 1024.0, ", ".join(
                    "%s %.1f" % (d, anon[d] / 1024.0) for d in B.DAEMONS)))
        want = set(a.only.split(",")) if a.only else set(PHASES)
        if "create" in want:
            self.phase_create()
        if "pool" in want and not a.no_pool:
            self.phase_pool()
        self.sb = self.create()
        self.live.append(self.sb)
        self.rc = self.raw.create()
        for name in PHASES[2:]:
            if name in want:
                getattr(self, "phase_" + name)()
        self.phase_end()
        self.notes.append(
            "rounds: %d (create, exec, small transfers, rollback, fork), "
            "%d (big transfers), alternating server and bare after one "
            "untimed round; p95 is the nearest rank; ratio is of the "
            "p50s, paired the median of each round's server/bare" % (a.rounds,
                                                         a.big_rounds))


def main():
    ap = argparse.ArgumentParser(
        description="agent-sandbox against the bare Docker floor")
    ap.add_argument("--quick", action="store_true",
                    help="a sanity check in a couple of minutes: 3 rounds, "
                    "1 and 8 MiB, 2 s of load, 6 sandboxes")
    ap.add_argument("--rounds", type=int, help="timed rounds of each side "
                    "(default 20, quick 3)")
    ap.add_argument("--big-rounds", type=int, help="rounds of the big "
                    "transfers (default 11, quick 2)")
    ap.add_argument("--seconds", type=int, help="seconds of each load run "
                    "(default 10, quick 2)")
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--small-mib", type=float, help="default 10, quick 1")
    ap.add_argument("--big-mib", type=float, help="default 100, quick 8")
    ap.add_argument("--fork-mib", type=float, default=1)
    ap.add_argument("--sandboxes", type=int,
                    help="sandboxes for the memory row (default 21, quick 6)")
    ap.add_argument("--pool-wait", type=int, help="seconds to wait for a "
                    "warm pool to appear (default 15, quick 5)")
    ap.add_argument("--no-pool", action="store_true",
                    help="leave out the warm pool row")
    ap.add_argument("--only", metavar="PHASE,...", help="run only these "
                    "of " + ",".join(PHASES) + " (the idle memory row "
                    "always)")
    ap.add_argument("--markdown", metavar="FILE",
                    help="rewrite FILE between the bench markers")
    ap.add_argument("--json", metavar="FILE", help="write every sample")
    ap.add_argument("--from-json", metavar="FILE", help="run nothing: "
                    "print (and --markdown) a run saved with --json")
    args = ap.parse_args()
    q = args.quick
    for name, full, quick in (("rounds", 20, 3), ("big_rounds", 11, 2),
                              ("seconds", 10, 2), ("small_mib", 10, 1),
                              ("big_mib", 100, 8), ("sandboxes", 21, 6),
                              ("pool_wait", 15, 5)):
        if getattr(args, name) is None:
            setattr(args, name, quick if q else full)
    if args.rounds < 1 or args.big_rounds < 1:
        ap.error("rounds must be at least 1")
    unknown = set((args.only or "").split(",")) - set(PHASES) - {""}
    if unknown:
        ap.error("unknown phase(s): " + ",".join(sorted(unknown)))
    if args.markdown and args.only:
        ap.error("--markdown needs the whole run, without --only")
    if args.from_json:
        # Render a saved run again (the table, --markdown) without running.
        with open(args.from_json) as f:
            saved = json.load(f)
        if saved.get("format") != FORMAT:
            raise SystemExit("%s: not bench-format %d" % (args.from_json,
                                                          FORMAT))
        info, run_argv = saved["run"], saved["argv"]
        rows = [Row(r["op"], r["unit"], r["server"], r["raw"],
                    tuple(r["goal"]) if r["goal"] else None, r["rank"])
                for r in saved["rows"]]
        cpu = [(c[0], tuple(c[1])) for c in saved["cpu"]]
        notes = saved["notes"]
    else:
        harness.require_root_and_docker()
        if not os.path.exists(B.HTTPLOAD):
            raise SystemExit("%s is missing: make bench/httpload" %
                             B.HTTPLOAD)
        info = B.run_info(harness.TEST_IMAGE, "quick" if q else "full")
        say(B.header_line(info))
        with B.Resources() as res:
            bench = Bench(args, res)
            bench.run()
        rows, cpu, notes = bench.rows, bench.cpu, bench.notes
        run_argv = run_options(sys.argv[1:])
    sys.stdout.write(text_table(info, rows, cpu, notes))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"format": FORMAT, "run": info, "argv": run_argv,
                       "rows": [{"op": r.op, "unit": r.unit,
                                 "server": r.ours, "raw": r.raw,
                                 "goal": r.goal, "rank": r.rank}
                                for r in rows],
                       "cpu": cpu, "notes": notes}, f, indent=1)
    if args.markdown:
        rewrite_markdown(args.markdown, markdown_table(
            info, rows, cpu, notes, run_argv))
        say("rewrote %s" % args.markdown)


def run_options(argv):
    """The options that shaped the run, without the output files."""
    out, skip = [], False
    for x in argv:
        if skip:
            skip = False
        elif x in ("--markdown", "--json", "--from-json"):
            skip = True
        elif not x.startswith(("--markdown=", "--json=", "--from-json=")):
            out.append(x)
    return out


if __name__ == "__main__":
    main()
