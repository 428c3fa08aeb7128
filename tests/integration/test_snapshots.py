"""Snapshots, rollback and fork against the real dockerd (API.md §4.12-4.17,
§7, §9): the HTTP contract, exact restoration of a workspace (tree, modes,
content; /tmp and processes gone), independence of forks, 100 MiB
workspaces with bounded daemon memory, the snapshot size cap, and
persistence across the sandbox's deletion and a server restart."""

import glob
import hashlib
import json
import os
import re
import sys
import tarfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from test_files import (MEMORY_CHECKED, RssWatch,  # noqa: E402
                        STREAM_GROWTH_KIB, ServerCase, get_file, http_call,
                        put_file)

SNAPSHOT_KEYS = ["created_at", "id", "image", "name", "sandbox_id",
                 "size_bytes"]
SNAP_ID = re.compile(r"^snap_[0-9a-f]{16}$")
UNKNOWN_SNAP = "snap_0000000000000000"
UNKNOWN_SB = "sb_0000000000000000"


class SnapshotServerCase(ServerCase):
    def snapshot(self, sandbox_id, body=None, raw=None):
        """POST .../snapshots; body None sends no body and no Content-Type
        at all.  Returns (status, parsed body)."""
        hdrs = {}
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
        if data is not None:
            hdrs["Content-Type"] = "application/json"
        status, _, out = http_call(self.server, "POST",
                                   "/v1/sandboxes/%s/snapshots" % sandbox_id,
                                   body=data, headers=hdrs)
        return status, json.loads(out) if out else None

    def snap(self, sandbox_id, **body):
        status, doc = self.snapshot(sandbox_id, body)
        self.assertEqual(status, 201, doc)
        self.addCleanup(self.server.api, "DELETE", "/v1/snapshots/" +
                        doc["id"])
        return doc

    def rollback(self, sandbox_id, snapshot_id):
        return self.server.api("POST", "/v1/sandboxes/%s/rollback" %
                               sandbox_id, {"snapshot_id": snapshot_id})

    def fork(self, snapshot_id, body=None):
        status, doc = self.server.api("POST", "/v1/snapshots/%s/fork" %
                                      snapshot_id, body)
        if status == 201:
            self.addCleanup(self.server.api, "DELETE",
                            "/v1/sandboxes/" + doc["id"])
        return status, doc

    def ps(self, sandbox_id):
        return self.sh(sandbox_id, "ps -o args")


class SnapshotsOverHttp(SnapshotServerCase):
    """REFERENCE-TESTS group D."""

    def test_snapshot_rollback_fork_list_get_delete(self):
        sb = self.create()
        put_file(self.server, sb["id"], "app.py", b"v1")
        good = self.snap(sb["id"], name="good")
        self.assertEqual(sorted(good), SNAPSHOT_KEYS)
        self.assertRegex(good["id"], SNAP_ID)
        self.assertEqual(good["name"], "good")
        self.assertEqual(good["sandbox_id"], sb["id"])
        self.assertEqual(good["image"], sb["image"])
        self.assertIsInstance(good["size_bytes"], int)
        self.assertGreater(good["size_bytes"], 0)
        self.assertRegex(good["created_at"],
                         r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z$")

        status, bare = self.snapshot(sb["id"])
        self.assertEqual(status, 201, bare)
        self.addCleanup(self.server.api, "DELETE", "/v1/snapshots/" +
                        bare["id"])
        self.assertIsNone(bare["name"])
        self.assertNotEqual(bare["id"], good["id"])

        put_file(self.server, sb["id"], "app.py", b"v2")
        status, rolled = self.rollback(sb["id"], good["id"])
        self.assertEqual(status, 200, rolled)
        self.assertEqual(rolled["source_snapshot_id"], good["id"])
        self.assertEqual(rolled["id"], sb["id"])
        self.assertEqual(rolled["status"], "running")
        self.assertEqual(get_file(self.server, sb["id"], "app.py")[2], b"v1")
        status, got = self.server.api("GET", "/v1/sandboxes/" + sb["id"])
        self.assertEqual(got["source_snapshot_id"], good["id"])

        status, forked = self.fork(good["id"], {"timeout_seconds": 30})
        self.assertEqual(status, 201, forked)
        self.assertNotEqual(forked["id"], sb["id"])
        self.assertTrue(forked["id"].startswith("sb_"))
        self.assertEqual(forked["status"], "running")
        self.assertEqual(forked["source_snapshot_id"], good["id"])
        self.assertEqual(get_file(self.server, forked["id"], "app.py")[2],
                         b"v1")

        status, lst = self.server.api("GET", "/v1/snapshots?sandbox_id=" +
                                      sb["id"])
        self.assertEqual(status, 200)
        self.assertEqual([s["id"] for s in lst["snapshots"]],
                         [good["id"], bare["id"]])
        status, lst = self.server.api("GET", "/v1/snapshots?sandbox_id=")
        self.assertEqual((status, lst), (200, {"snapshots": []}))
        status, lst = self.server.api("GET", "/v1/snapshots")
        self.assertIn(good["id"], [s["id"] for s in lst["snapshots"]])
        status, got = self.server.api("GET", "/v1/snapshots/" + good["id"])
        self.assertEqual((status, got), (200, good))

        status, _ = self.server.api("DELETE", "/v1/snapshots/" + good["id"])
        self.assertEqual(status, 204)
        status, err = self.server.api("GET", "/v1/snapshots/" + good["id"])
        self.assertEqual((status, err), (404, {"error": {
            "code": "not_found",
            "message": "snapshot %s not found" % good["id"]}}))
        status, err = self.rollback(sb["id"], good["id"])
        self.assertEqual(status, 404, err)
        self.assertEqual(err["error"]["message"],
                         "snapshot %s not found" % good["id"])
        status, _ = self.server.api("DELETE", "/v1/snapshots/" + good["id"])
        self.assertEqual(status, 404)
        status, _ = self.fork(good["id"])
        self.assertEqual(status, 404)
        # The sandboxes that used it keep pointing at it.
        status, got = self.server.api("GET", "/v1/sandboxes/" + sb["id"])
        self.assertEqual(got["source_snapshot_id"], good["id"])

    def test_bodies(self):
        sb = self.create()["id"]
        for raw in (b"", b"null", b"{}", b'{"name":null}'):
            status, doc = self.snapshot(sb, raw=raw)
            self.assertEqual(status, 201, (raw, doc))
            self.addCleanup(self.server.api, "DELETE",
                            "/v1/snapshots/" + doc["id"])
            self.assertIsNone(doc["name"])
        doc = self.snap(sb, name="\u00e9" * 128)
        self.assertEqual(doc["name"], "\u00e9" * 128)
        for body in ({"name": "x" * 129}, {"nme": "x"}, {"name": 5},
                     {"name": "a", "extra": 1}):
            status, doc = self.snapshot(sb, body)
            self.assertEqual(status, 422, (body, doc))
            self.assertIsInstance(doc["detail"], list)
        status, doc = self.snapshot(sb, raw=b"{")
        self.assertEqual(status, 422, doc)
        snap = self.snap(sb)["id"]
        path = "/v1/sandboxes/%s/rollback" % sb
        for body in ({}, {"snapshot_id": snap, "extra": 1},
                     {"snapshot_id": 5}, None):
            status, doc = self.server.api("POST", path, body)
            self.assertEqual(status, 422, (body, doc))
            self.assertIsInstance(doc["detail"], list)
        fork = "/v1/snapshots/%s/fork" % snap
        for body in ({"image": "x"}, {"pids_limit": 64},
                     {"timeout_seconds": 0}, {"memory_mb": 8},
                     {"cpus": 0}, {"env": {"A": "b"}},
                     {"read_only_rootfs": False}):
            status, doc = self.server.api("POST", fork, body)
            self.assertEqual(status, 422, (body, doc))
        # No body, null and {} all mean "no overrides".
        for raw in (None, b"null", b"{}"):
            hdrs = {"Content-Type": "application/json"} if raw else {}
            status, _, out = http_call(self.server, "POST", fork, body=raw,
                                       headers=hdrs)
            self.assertEqual(status, 201, (raw, out))
            self.server.api("DELETE",
                            "/v1/sandboxes/" + json.loads(out)["id"])

    def test_unknown_and_malformed_ids(self):
        sb = self.create()["id"]
        snap = self.snap(sb)["id"]
        for sid in (UNKNOWN_SNAP, "snap_..%2Fx", "%2E%2E%2Fsandboxes%2F" + sb,
                    "snap_../x", "..", snap.upper(), snap + "0",
                    "snap_%2F" + "0" * 15, "x"):
            status, doc = self.server.api("GET", "/v1/snapshots/" + sid)
            self.assertEqual(status, 404, (sid, doc))
            self.assertEqual(doc["error"]["code"], "not_found")
            status, _ = self.server.api("DELETE", "/v1/snapshots/" + sid)
            self.assertEqual(status, 404, sid)
            status, _ = self.server.api("POST", "/v1/snapshots/%s/fork" % sid)
            self.assertEqual(status, 404, sid)
        status, doc = self.snapshot(UNKNOWN_SB, {})
        self.assertEqual((status, doc["error"]["message"]),
                         (404, "sandbox %s not found" % UNKNOWN_SB))
        # Rollback looks the snapshot up before the sandbox.
        status, doc = self.rollback(UNKNOWN_SB, UNKNOWN_SNAP)
        self.assertEqual((status, doc["error"]["message"]),
                         (404, "snapshot %s not found" % UNKNOWN_SNAP))
        status, doc = self.rollback(UNKNOWN_SB, snap)
        self.assertEqual((status, doc["error"]["message"]),
                         (404, "sandbox %s not found" % UNKNOWN_SB))
        status, doc = self.rollback(sb, "../sandboxes/" + sb)
        self.assertEqual(status, 404, doc)
        # Still there, still whole.
        status, doc = self.server.api("GET", "/v1/snapshots/" + snap)
        self.assertEqual(status, 200)

    def test_record_on_disk(self):
        sb = self.create(cpus=0.5, env={"MODE": "test"})
        snap = self.snap(sb["id"], name="disk")
        base = os.path.join(self.server.data_dir, "snapshots", snap["id"])
        self.assertEqual(os.path.getsize(base + ".tar"), snap["size_bytes"])
        with open(base + ".json") as f:
            text = f.read()
        record = json.loads(text)
        self.assertEqual(sorted(record), ["created_at", "id", "name",
                                          "sandbox_id", "size_bytes", "spec"])
        self.assertEqual(list(record), sorted(record))
        self.assertTrue(text.startswith('{\n  "created_at": '), text)
        self.assertEqual(record["spec"]["cpus"], 0.5)
        self.assertEqual(record["spec"]["env"], {"MODE": "test"})
        self.assertEqual(record["spec"]["image"], sb["image"])
        # A fork inherits the env (not returned, but visible inside).
        status, forked = self.fork(snap["id"])
        self.assertEqual(status, 201, forked)
        self.assertEqual(forked["cpus"], 0.5)
        self.assertEqual(self.sh(forked["id"], "echo $MODE"), "test\n")


class HowStored(SnapshotServerCase):
    """A snapshot is Docker's tar of /workspace/. copied as it came when
    the rewrite would keep every member unchanged, and the rewrite
    otherwise (FIFOs, sockets, setuid bits); both restore the same."""

    def stored_names(self, snap):
        path = os.path.join(self.server.data_dir, "snapshots",
                            snap["id"] + ".tar")
        with tarfile.open(path, encoding="utf-8",
                          errors="surrogateescape") as t:
            return [(m.name, m.type, m.mode & 0o7777) for m in t]

    def test_plain_workspace_is_copied(self):
        sid = self.create()["id"]
        self.sh(sid, "mkdir -p d && printf a > d/a && ln d/a hl && "
                     "ln -s d/a sl && printf b > \"$(printf 'caf\\303\\251 "
                     "\\377')\" && chmod 2775 d")
        snap = self.snap(sid)
        names = self.stored_names(snap)
        self.assertEqual(names[0][0], ".")
        self.assertTrue(all(n == "." or n.startswith("./")
                            for n, _, _ in names), names)
        # Rolled back from the copy: content, links, modes, odd names.
        self.sh(sid, "rm -rf /workspace/* && touch junk")
        status, rolled = self.rollback(sid, snap["id"])
        self.assertEqual(status, 200, rolled)
        self.assertEqual(self.sh(sid, "cat d/a hl sl; stat -c '%a %U' d . "
                                      "&& ls | od -c | head -3"),
                         self.sh(sid, "cat d/a d/a d/a; stat -c '%a %U' d "
                                      ". && ls | od -c | head -3"))
        self.assertEqual(self.sh(sid, "stat -c %a d"), "2775\n")
        self.assertEqual(self.sh(sid, "stat -c '%i' d/a hl | uniq | wc -l"),
                         "1\n")
        self.assertEqual(self.sh(sid, "readlink sl"), "d/a\n")
        status, forked = self.fork(snap["id"])
        self.assertEqual(status, 201, forked)
        self.assertEqual(self.sh(forked["id"], "cat hl; stat -c %u ."),
                         "a1000\n")

    def test_special_members_are_rewritten(self):
        sid = self.create()["id"]
        self.sh(sid, "printf x > keep && mkfifo ff && printf s > su && "
                     "chmod 4755 su && printf g > sg && chmod 2755 sg")
        snap = self.snap(sid)
        names = self.stored_names(snap)
        # The rewrite's names: relative, no "./", no root, no FIFO.
        self.assertEqual(sorted(n for n, _, _ in names),
                         ["keep", "sg", "su"], names)
        modes = {n: m for n, _, m in names}
        self.assertEqual(modes["su"], 0o755)
        self.assertEqual(modes["sg"], 0o755)
        self.sh(sid, "rm -f keep su sg ff && touch junk")
        status, rolled = self.rollback(sid, snap["id"])
        self.assertEqual(status, 200, rolled)
        self.assertEqual(self.sh(sid, "ls; cat keep su sg; stat -c %a su"),
                         "keep\nsg\nsu\nxsg755\n")

    def test_a_fifo_after_many_files(self):
        """The copy stops at the FIFO far into the tar: the rewrite
        still stores everything else."""
        sid = self.create()["id"]
        self.sh(sid, "mkdir a && for i in $(seq 1 300); do "
                     "head -c 5000 /dev/urandom > a/f$i; done && "
                     "mkfifo zz")
        before = self.sh(sid, "md5sum a/*")
        snap = self.snap(sid)
        # Under gVisor a FIFO never reaches the volume, so Docker's tar
        # has none and is kept as it came: names with or without "./".
        names = [n[2:] if n.startswith("./") else n
                 for n, _, _ in self.stored_names(snap) if n != "."]
        self.assertEqual(len(names), 301, [n for n in names
                                           if not n.startswith("a/f")])
        self.assertNotIn("zz", names)
        self.sh(sid, "rm -rf a zz")
        status, rolled = self.rollback(sid, snap["id"])
        self.assertEqual(status, 200, rolled)
        self.assertEqual(self.sh(sid, "md5sum a/*"), before)
        self.assertEqual(len(before.splitlines()), 300)


class Restoration(SnapshotServerCase):
    """REFERENCE-TESTS item 84 and the flows of items 75 and 89."""

    def test_rollback_restores_exactly(self):
        sb = self.create(timeout_seconds=600)
        sid = sb["id"]
        self.sh(sid, "mkdir -p app/lib && printf v1 > app/lib/core.txt && "
                     "chmod 600 app/lib/core.txt")
        snap = self.snap(sid, name="v1")
        self.sh(sid, "printf v2 > app/lib/core.txt && chmod 644 "
                     "app/lib/core.txt && touch junk .dot && mkdir -p new/d "
                     "&& rm -r app/lib && echo t > /tmp/t")
        self.sh(sid, "setsid sleep 300 >/dev/null 2>&1 </dev/null &")
        self.assertIn("sleep 300", self.ps(sid))
        status, rolled = self.rollback(sid, snap["id"])
        self.assertEqual(status, 200, rolled)
        for key in ("id", "created_at", "expires_at", "image", "cpus",
                    "memory_mb", "pids_limit", "network", "read_only_rootfs"):
            self.assertEqual(rolled[key], sb[key], key)
        self.assertEqual(rolled["source_snapshot_id"], snap["id"])
        self.assertEqual(self.sh(sid, "cd /workspace && find . | sort"),
                         ".\n./app\n./app/lib\n./app/lib/core.txt\n")
        self.assertEqual(self.sh(sid, "stat -c '%a %u:%g' app/lib/core.txt"),
                         "600 1000:1000\n")
        self.assertEqual(self.sh(sid, "stat -c '%u:%g' /workspace app "
                                      "app/lib"), "1000:1000\n" * 3)
        self.assertEqual(self.sh(sid, "cat app/lib/core.txt"), "v1")
        self.assertEqual(self.sh(sid, "ls -A /tmp"), "")
        self.assertNotIn("sleep 300", self.ps(sid))
        # The sandbox user can work in the restored tree.
        self.sh(sid, "echo w > app/lib/w && touch top")
        status, got = self.server.api("GET", "/v1/sandboxes/" + sid)
        self.assertEqual(got["expires_at"], sb["expires_at"])
        self.assertEqual(got["created_at"], sb["created_at"])
        # Rolling back to the same snapshot twice works.
        status, rolled = self.rollback(sid, snap["id"])
        self.assertEqual(status, 200, rolled)
        self.assertEqual(self.sh(sid, "ls"), "app\n")

    def test_fork_is_independent(self):
        src = self.create()["id"]
        self.sh(src, "mkdir -p app/lib && printf v1 > app/lib/core.txt && "
                     "chmod 600 app/lib/core.txt")
        snap = self.snap(src)["id"]
        status, fork = self.fork(snap)
        self.assertEqual(status, 201, fork)
        fid = fork["id"]
        self.assertEqual(self.sh(fid, "cd /workspace && find . | sort"),
                         ".\n./app\n./app/lib\n./app/lib/core.txt\n")
        self.assertEqual(self.sh(fid, "stat -c '%a %u' app/lib/core.txt; "
                                      "cat app/lib/core.txt"),
                         "600 1000\nv1")
        self.sh(fid, "printf fork > app/lib/core.txt && touch only-in-fork")
        self.sh(src, "printf orig > app/lib/core.txt && touch only-in-src")
        self.assertEqual(self.sh(src, "cat app/lib/core.txt; ls"),
                         "origapp\nonly-in-src\n")
        self.assertEqual(self.sh(fid, "cat app/lib/core.txt; ls"),
                         "forkapp\nonly-in-fork\n")
        # A fresh TTL (the server default), not the source's.
        status, got = self.server.api("GET", "/v1/sandboxes/" + fid)
        self.assertEqual(got["source_snapshot_id"], snap)

    def test_rollback_into_another_sandbox_keeps_its_spec(self):
        a = self.create()["id"]
        b = self.create(memory_mb=256, env={"WHO": "b"})
        self.sh(a, "echo from-a > a.txt")
        snap = self.snap(a)["id"]
        self.sh(b["id"], "echo from-b > b.txt")
        status, rolled = self.rollback(b["id"], snap)
        self.assertEqual(status, 200, rolled)
        self.assertEqual(rolled["memory_mb"], 256)
        self.assertEqual(self.sh(b["id"], "ls; echo $WHO"), "a.txt\nb\n")

    def test_counter_flow(self):
        sid = self.create()["id"]
        status, info = put_file(self.server, sid, "counter.txt", b"1")
        self.assertEqual(status, 200, info)
        snap = self.snap(sid)["id"]
        self.sh(sid, "rm -rf /workspace/*")
        r = self.server.exec(sid, "cat counter.txt")
        self.assertNotEqual(r["exit_code"], 0)
        status, _ = self.rollback(sid, snap)
        self.assertEqual(status, 200)
        self.assertEqual(self.sh(sid, "cat counter.txt"), "1")
        status, fork = self.fork(snap)
        self.assertEqual(status, 201, fork)
        self.assertEqual(self.sh(fork["id"], "cat counter.txt"), "1")
        # Item 89: the same with a file written by the sandbox itself.
        self.sh(sid, "echo ok > f")
        snap2 = self.snap(sid)["id"]
        self.sh(sid, "rm f")
        status, _ = self.rollback(sid, snap2)
        self.assertEqual(status, 200)
        self.assertEqual(self.sh(sid, "cat f"), "ok\n")

    def test_empty_workspace(self):
        sid = self.create()["id"]
        snap = self.snap(sid)
        self.assertGreater(snap["size_bytes"], 0)
        self.sh(sid, "echo x > x")
        status, _ = self.rollback(sid, snap["id"])
        self.assertEqual(status, 200)
        self.assertEqual(self.sh(sid, "ls -A; stat -c %u /workspace"),
                         "1000\n")


class ForkLimits(SnapshotServerCase):
    settings = {"AGENT_SANDBOX_MAX_SANDBOXES": "2"}

    def test_fork_validation_and_quota(self):
        sid = self.create()["id"]
        snap = self.snap(sid)["id"]
        status, doc = self.fork(snap, {"cpus": 64})
        self.assertEqual(status, 400, doc)
        self.assertEqual(doc["error"]["message"], "cpus must be in (0, 4.0]")
        status, doc = self.fork(snap, {"timeout_seconds": 10 ** 7})
        self.assertEqual(status, 400, doc)
        status, doc = self.fork(snap, {"memory_mb": 10 ** 6})
        self.assertEqual(status, 400, doc)
        status, doc = self.fork(snap, {"network": True})
        self.assertEqual(status, 201, doc)
        self.assertTrue(doc["network"])
        before = [sorted(x) for x in self.server.docker_objects()]
        status, doc = self.fork(snap)
        self.assertEqual(status, 429, doc)
        self.assertEqual(doc["error"]["code"], "limit_exceeded")
        status, lst = self.server.api("GET", "/v1/sandboxes")
        self.assertEqual(len(lst["sandboxes"]), 2)
        self.assertEqual([sorted(x) for x in self.server.docker_objects()],
                         before)
        # Rollback does not need a free slot.
        status, doc = self.rollback(sid, snap)
        self.assertEqual(status, 200, doc)


class LargeWorkspace(SnapshotServerCase):
    """A 100 MiB workspace through snapshot, rollback and fork."""

    def test_100_mib(self):
        sid = self.create(memory_mb=256)["id"]
        # head, not dd: gVisor's /dev/urandom gives short reads, which
        # dd counts as whole blocks.
        self.sh(sid, "head -c 104857600 /dev/urandom > big && "
                     "mkdir -p d && echo a > d/a && "
                     "echo b > small && chmod 700 d",
                timeout_seconds=120)
        digest = self.sh(sid, "sha256sum big").split()[0]
        time.sleep(0.5)
        with RssWatch(self.server) as w:
            snap = self.snap(sid, name="big")
        print("\n  snapshot of 100 MiB: %s" % w.describe(), file=sys.stderr)
        self.assertGreater(snap["size_bytes"], 100 << 20)
        for name, grew in w.growth().items():
            if MEMORY_CHECKED:
                self.assertLess(grew, STREAM_GROWTH_KIB,
                                "snapshot: " + w.describe())
        self.sh(sid, "echo changed >> big && rm small && rm -r d")
        time.sleep(0.5)
        with RssWatch(self.server) as w:
            status, doc = self.rollback(sid, snap["id"])
        print("  rollback of 100 MiB: %s" % w.describe(), file=sys.stderr)
        self.assertEqual(status, 200, doc)
        for name, grew in w.growth().items():
            if MEMORY_CHECKED:
                self.assertLess(grew, STREAM_GROWTH_KIB,
                                "rollback: " + w.describe())
        self.assertEqual(self.sh(sid, "sha256sum big").split()[0], digest)
        self.assertEqual(self.sh(sid, "cat small d/a; stat -c %a d"),
                         "b\na\n700\n")
        with RssWatch(self.server) as w:
            status, fork = self.fork(snap["id"], {"memory_mb": 256})
        print("  fork of 100 MiB: %s" % w.describe(), file=sys.stderr)
        self.assertEqual(status, 201, fork)
        self.assertEqual(self.sh(fork["id"], "sha256sum big").split()[0],
                         digest)
        for name, grew in w.growth().items():
            if MEMORY_CHECKED:
                self.assertLess(grew, STREAM_GROWTH_KIB,
                                "fork: " + w.describe())


class SnapshotCap(SnapshotServerCase):
    settings = {"AGENT_SANDBOX_MAX_SNAPSHOT_BYTES": "1048576"}

    def test_cap_hit_mid_stream_leaves_nothing(self):
        sid = self.create()["id"]
        self.sh(sid, "dd if=/dev/urandom of=big bs=1048576 count=4 "
                     "2>/dev/null")
        status, doc = self.snapshot(sid, {"name": "too big"})
        self.assertEqual(status, 413, doc)
        self.assertEqual(doc["error"], {
            "code": "payload_too_large",
            "message": "workspace exceeds the snapshot limit of 1048576 "
                       "bytes"})
        snapdir = os.path.join(self.server.data_dir, "snapshots")
        self.assertEqual(os.listdir(snapdir) if os.path.isdir(snapdir)
                         else [], [])
        status, lst = self.server.api("GET", "/v1/snapshots")
        self.assertEqual(lst, {"snapshots": []})
        # The sandbox is untouched and a smaller workspace still snapshots.
        self.sh(sid, "rm big && echo small > s")
        snap = self.snap(sid)
        self.assertLessEqual(snap["size_bytes"], 1048576)
        self.assertEqual(sorted(os.listdir(snapdir)),
                         [snap["id"] + ".json", snap["id"] + ".tar"])


class Persistence(unittest.TestCase):
    """Snapshots outlive their sandbox and the server process."""

    def test_survives_sandbox_delete_and_restart(self):
        server = harness.SandboxServer()
        server.start()
        try:
            sb = server.create(cpus=2)
            sid = sb["id"]
            server.exec(sid, "echo kept > k")
            status, snap = server.api("POST", "/v1/sandboxes/%s/snapshots" %
                                      sid, {"name": "keep"})
            self.assertEqual(status, 201, snap)
            status, _ = server.api("DELETE", "/v1/sandboxes/" + sid)
            self.assertEqual(status, 204)
            status, got = server.api("GET", "/v1/snapshots/" + snap["id"])
            self.assertEqual((status, got), (200, snap))
            status, lst = server.api("GET", "/v1/snapshots?sandbox_id=" + sid)
            self.assertEqual(lst, {"snapshots": [snap]})
            status, fork = server.api("POST", "/v1/snapshots/%s/fork" %
                                      snap["id"])
            self.assertEqual(status, 201, fork)
            self.assertEqual(server.exec(fork["id"], "cat k")["stdout"],
                             "kept\n")
            server.api("DELETE", "/v1/sandboxes/" + fork["id"])

            server.stop()
            snapdir = os.path.join(server.data_dir, "snapshots")
            for junk in ("snap_x.tmp", "snap_0123456789abcdef.tmp"):
                with open(os.path.join(snapdir, junk), "wb") as f:
                    f.write(b"half an export")
            # Fork validates against the settings of the day: cpus 2 was
            # allowed when the snapshot was taken, not any more.
            server.env["AGENT_SANDBOX_MAX_CPUS"] = "1"
            server.start()
            self.assertEqual(glob.glob(os.path.join(snapdir, "*.tmp")), [])
            status, lst = server.api("GET", "/v1/snapshots")
            self.assertEqual(lst, {"snapshots": [snap]})
            status, got = server.api("GET", "/v1/snapshots/" + snap["id"])
            self.assertEqual((status, got), (200, snap))
            status, doc = server.api("POST", "/v1/snapshots/%s/fork" %
                                     snap["id"])
            self.assertEqual(status, 400, doc)
            self.assertEqual(doc["error"]["message"],
                             "cpus must be in (0, 1.0]")
            status, fork = server.api("POST", "/v1/snapshots/%s/fork" %
                                      snap["id"], {"cpus": 1})
            self.assertEqual(status, 201, fork)
            self.assertEqual(server.exec(fork["id"], "cat k")["stdout"],
                             "kept\n")
            # A record without its tar is not a snapshot.
            os.unlink(os.path.join(snapdir, snap["id"] + ".tar"))
            status, _ = server.api("GET", "/v1/snapshots/" + snap["id"])
            self.assertEqual(status, 404)
            status, lst = server.api("GET", "/v1/snapshots")
            self.assertEqual(lst, {"snapshots": []})
        finally:
            server.cleanup()


if __name__ == "__main__":
    harness.require_root_and_docker()
    unittest.main(verbosity=2)
