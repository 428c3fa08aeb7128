"""The archive worker against the real dockerd, every daemon under its kill
filter: file names that are not ASCII (UTF-8, Latin-1, a newline, 255
bytes, 100 levels deep) through downloads, uploads, snapshots, rollbacks
and forks with their bytes intact; a job whose process is killed, or the
worker itself, fails only its own request, with a message that says what
happened, and the next request works; and apid no longer maps
libarchive."""

import http.client
import os
import re
import signal
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from test_files import error_of, get_file, put_file, qs  # noqa: E402
from test_snapshots import SnapshotServerCase  # noqa: E402

MIB = 1024 * 1024
KILLED = "the archive worker died: killed by signal 9 (SIGKILL)"


def names_in(case, sandbox_id, top="/workspace"):
    """Every path under top, relative, as the bytes the filesystem holds
    (exec output is UTF-8 text, so the names travel as hex)."""
    out = case.sh(sandbox_id, "cd %s && find . -mindepth 1 -print0 | "
                  "od -An -tx1 -v" % top)
    raw = bytes.fromhex("".join(out.split()))
    return sorted(n[2:] for n in raw.split(b"\0") if n)


def job_children(server):
    """The pids of the archive worker's job processes."""
    worker = server.children()["archive-worker"]
    try:
        with open("/proc/%d/task/%d/children" % (worker, worker)) as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def wait_for_job(server, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        kids = job_children(server)
        if kids:
            return kids[0]
        time.sleep(0.002)
    return None


class OddNames(SnapshotServerCase):
    """Issue 9: a sandbox names a file, and the service survives it."""

    def test_unicode_name_in_a_spaced_directory(self):
        sb = self.create()["id"]
        self.sh(sb, "mkdir -p '/workspace/sp ace' && printf "
                "'h\\303\\251llo\\000\\377\\n' > "
                "'/workspace/sp ace/\u00fcnic\u00f8de.txt'")
        status, headers, body = get_file(
            self.server, sb, "/workspace/sp ace/\u00fcnic\u00f8de.txt")
        self.assertEqual(status, 200, body)
        self.assertEqual(body, b"h\xc3\xa9llo\x00\xff\n")
        self.assertEqual(headers["content-length"], str(len(body)))
        # The same name written by an upload, next to it.
        status, info = put_file(self.server, sb,
                                "sp ace/\u00fcnic\u00f8de-2.txt", b"up\n")
        self.assertEqual(status, 200, info)
        self.assertEqual(names_in(self, sb), [
            b"sp ace", b"sp ace/\xc3\xbcnic\xc3\xb8de-2.txt",
            b"sp ace/\xc3\xbcnic\xc3\xb8de.txt"])
        status, _, body = get_file(
            self.server, sb, "/workspace/sp ace/\u00fcnic\u00f8de-2.txt")
        self.assertEqual((status, body), (200, b"up\n"))

    def test_cafe_snapshot_rollback_fork(self):
        sb = self.create()["id"]
        self.sh(sb, "cd /workspace && echo hi > caf\u00e9.txt")
        snap = self.snap(sb)
        self.sh(sb, "cd /workspace && rm caf\u00e9.txt && echo x > other")
        status, doc = self.rollback(sb, snap["id"])
        self.assertEqual(status, 200, doc)
        self.assertEqual(names_in(self, sb), [b"caf\xc3\xa9.txt"])
        self.assertEqual(get_file(self.server, sb,
                                  "/workspace/caf\u00e9.txt")[2], b"hi\n")
        status, forked = self.fork(snap["id"])
        self.assertEqual(status, 201, forked)
        self.assertEqual(names_in(self, forked["id"]), [b"caf\xc3\xa9.txt"])
        self.assertEqual(get_file(self.server, forked["id"],
                                  "/workspace/caf\u00e9.txt")[2], b"hi\n")

    def test_names_that_are_not_utf8_survive_snapshot_and_fork(self):
        sb = self.create()["id"]
        # Latin-1, invalid UTF-8, a decomposed e-acute, a newline, 255
        # bytes, 100 levels: made by the sandbox, byte by byte.
        self.sh(sb, "cd /workspace && "
                "printf 'latin\\n' > \"$(printf 'caf\\351.txt')\" && "
                "printf x > \"$(printf 'bad \\377\\376')\" && "
                "printf x > \"$(printf 'cafe\\314\\201')\" && "
                "printf x > \"$(printf 'new\\nline')\" && "
                "printf x > \"$(printf 'n%.0s' $(seq 255))\" && "
                "mkdir -p \"$(printf 'd/%.0s' $(seq 100))\" && "
                "printf deep > \"$(printf 'd/%.0s' $(seq 100))f\"")
        before = names_in(self, sb)
        self.assertIn(b"caf\xe9.txt", before)
        self.assertIn(b"n" * 255, before)
        self.assertIn(b"d/" * 100 + b"f", before)
        snap = self.snap(sb)
        status, forked = self.fork(snap["id"])
        self.assertEqual(status, 201, forked)
        self.assertEqual(names_in(self, forked["id"]), before)
        self.assertEqual(self.sh(forked["id"], "cat \"$(printf "
                                 "'/workspace/caf\\351.txt')\""), "latin\n")
        self.assertEqual(self.sh(forked["id"], "cat /workspace/" +
                                 "d/" * 100 + "f"), "deep")
        self.sh(sb, "rm -rf /workspace/* && touch /workspace/gone")
        status, doc = self.rollback(sb, snap["id"])
        self.assertEqual(status, 200, doc)
        self.assertEqual(names_in(self, sb), before)


class KilledJobs(SnapshotServerCase):
    """A job's process dies: that request fails and says why; the service
    goes on."""

    def test_killed_job_cuts_only_its_download(self):
        sb = self.create()["id"]
        self.sh(sb, "head -c %d /dev/zero > /workspace/big" % (48 * MIB))
        self.sh(sb, "echo small > /workspace/small")
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port,
                                          timeout=60)
        conn.request("GET", "/v1/sandboxes/%s/files?%s" %
                     (sb, qs(path="/workspace/big")), headers=harness.AUTH)
        resp = conn.getresponse()
        self.assertEqual(resp.status, 200)
        length = int(resp.getheader("Content-Length"))
        self.assertEqual(length, 48 * MIB)
        # We read nothing: the job blocks on its full pipe, alive.
        pid = wait_for_job(self.server)
        self.assertIsNotNone(pid, "no job process")
        os.kill(pid, signal.SIGKILL)
        got = 0
        try:
            while True:
                chunk = resp.read(MIB)
                if not chunk:
                    break
                got += len(chunk)
        except http.client.IncompleteRead as e:
            got += len(e.partial)
        conn.close()
        # The 200 went out before the job died: the body is cut short,
        # the connection closed, and the worker's log says why.
        self.assertLess(got, length)
        self.assertRegex(self.server.log_text(),
                         r"archive-worker: archive job \d+: " +
                         re.escape(KILLED))
        status, _, body = get_file(self.server, sb, "/workspace/small")
        self.assertEqual((status, body), (200, b"small\n"))

    def test_killed_job_fails_only_its_snapshot(self):
        sb = self.create()["id"]
        self.sh(sb, "head -c %d /dev/zero > /workspace/big" % (160 * MIB))
        result = {}
        for attempt in range(5):
            def take():
                result["r"] = self.snapshot(sb)
            t = threading.Thread(target=take)
            t.start()
            pid = wait_for_job(self.server)
            if pid is not None:
                os.kill(pid, signal.SIGKILL)
            t.join(120)
            status, doc = result["r"]
            if status == 201:       # it finished first: once more
                self.server.api("DELETE", "/v1/snapshots/" + doc["id"])
                continue
            break
        self.assertEqual(status, 502, doc)
        code, message = error_of(doc)
        self.assertEqual(code, "backend_error")
        self.assertEqual(message, "cannot snapshot %s: %s" % (sb, KILLED))
        # Nothing of it is left, and the next one works.
        status, lst = self.server.api("GET", "/v1/snapshots?sandbox_id=" +
                                      sb)
        self.assertEqual((status, lst), (200, {"snapshots": []}))
        self.sh(sb, "rm /workspace/big && echo ok > /workspace/f")
        snap = self.snap(sb)
        self.assertGreater(snap["size_bytes"], 0)


class WorkerKilled(SnapshotServerCase):
    """The worker itself dies: the download in flight ends short, never
    hangs; managerd starts a new worker and hands it and apid a new
    channel, and the next download works."""

    def test_worker_killed_mid_download(self):
        sb = self.create()["id"]
        self.sh(sb, "head -c %d /dev/zero > /workspace/big" % (48 * MIB))
        self.sh(sb, "echo small > /workspace/small")
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port,
                                          timeout=60)
        conn.request("GET", "/v1/sandboxes/%s/files?%s" %
                     (sb, qs(path="/workspace/big")), headers=harness.AUTH)
        resp = conn.getresponse()
        self.assertEqual(resp.status, 200)
        self.assertIsNotNone(wait_for_job(self.server), "no job process")
        worker = self.server.children()["archive-worker"]
        os.kill(worker, signal.SIGKILL)
        got = 0
        try:
            while True:
                chunk = resp.read(MIB)
                if not chunk:
                    break
                got += len(chunk)
        except (http.client.IncompleteRead, ConnectionError):
            pass
        conn.close()
        self.assertLess(got, 48 * MIB)
        deadline = time.time() + 10
        while self.server.children().get("archive-worker") in \
                (None, worker):
            self.assertLess(time.time(), deadline, self.server.log_text())
            time.sleep(0.01)
        self.assertIsNone(self.server.proc.poll())
        self.assertIn("archive-worker (pid %d) was killed by signal 9" %
                      worker, self.server.log_text())
        # The new worker and apid find each other: the next download works.
        while True:
            status, _, body = get_file(self.server, sb, "/workspace/small")
            if status == 200 or time.time() > deadline:
                break
            time.sleep(0.05)
        self.assertEqual((status, body), (200, b"small\n"))


class Processes(unittest.TestCase):
    def test_only_the_worker_maps_libarchive(self):
        server = harness.Server().start()
        try:
            kids = server.children()
            for name in ("apid", "dockerd-proxy"):
                with open("/proc/%d/maps" % kids[name]) as f:
                    self.assertNotIn("libarchive", f.read(), name)
            with open("/proc/%d/maps" % server.proc.pid) as f:
                self.assertNotIn("libarchive", f.read(), "managerd")
            with open("/proc/%d/maps" % kids["archive-worker"]) as f:
                self.assertIn("libarchive", f.read())
            st = harness.proc_status(kids["archive-worker"])
            self.assertEqual(st["Seccomp"], "2")
            self.assertEqual(st["NoNewPrivs"], "1")
            self.assertEqual(int(st["CapEff"], 16), 0)
            # apid has no threads to make.
            self.assertEqual(harness.proc_status(kids["apid"])["Threads"],
                             "1")
        finally:
            server.cleanup()


if __name__ == "__main__":
    harness.require_root_and_docker()
    unittest.main(verbosity=2)
