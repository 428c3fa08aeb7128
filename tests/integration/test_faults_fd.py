"""Descriptors running out (issue 11, item 5).  With the server running,
each daemon's RLIMIT_NOFILE is lowered with prlimit(2) until only a set
number of descriptor slots is free.  Requests that need descriptors
(connections, exec and its stream, downloads, uploads, snapshots, a
rollback's check) then answer 503 unavailable in the envelope, or
succeed; no daemon dies or is started again; and with the limit raised
back the same requests succeed.  The descriptor passed to apid while it
is out of them (an upload's spool, a snapshot's file, a snapshot to
check: the reported bug) is covered by leaving apid exactly one free
slot, which the client's connection takes.  Run as root (prlimit on
processes of other users); skips (77) otherwise."""

import contextlib
import http.client
import json
import os
import resource
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

PAYLOAD = b"descriptors\n"


def open_fds(pid):
    return {int(n) for n in os.listdir("/proc/%d/fd" % pid)}


def settled_fds(pid):
    """pid's descriptors once the last request's have been closed."""
    held = open_fds(pid)
    while True:
        time.sleep(0.1)
        now = open_fds(pid)
        if now == held:
            return held
        held = now


def limit_for(pid, free):
    """The soft limit that leaves exactly free slots below it."""
    held = settled_fds(pid)
    limit, left = 0, free
    while left >= 0:
        if limit not in held:
            left -= 1
        limit += 1
    return limit - 1


def ids(pid):
    """(uid, gid) of pid: the daemons give up root, all three ids alike."""
    with open("/proc/%d/status" % pid) as f:
        fields = dict(line.split(":", 1) for line in f)
    return int(fields["Uid"].split()[0]), int(fields["Gid"].split()[0])


def prlimit(pid, limits=None):
    """prlimit(2) on pid's RLIMIT_NOFILE, from a child with pid's ids:
    without CAP_SYS_RESOURCE (a container) only a process of the same
    user may.  Returns the limits it had."""
    rfd, wfd = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.close(rfd)
            uid, gid = ids(pid)
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
            old = resource.prlimit(pid, resource.RLIMIT_NOFILE, *(
                [limits] if limits else []))
            os.write(wfd, json.dumps(old).encode())
        finally:
            os._exit(0)
    os.close(wfd)
    with os.fdopen(rfd) as f:
        out = f.read()
    os.waitpid(child, 0)
    if not out:
        raise AssertionError("prlimit on %d failed" % pid)
    return tuple(json.loads(out))


@contextlib.contextmanager
def starved(pid, free):
    """pid with only free descriptor slots left, for the block."""
    saved = prlimit(pid)
    prlimit(pid, (limit_for(pid, free), saved[1]))
    try:
        yield
    finally:
        prlimit(pid, saved)


class OutOfDescriptors(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = harness.SandboxServer()
        cls.server.start()
        cls.sid = cls.server.create()["id"]
        cls.server.exec(cls.sid, "printf 'descriptors\\n' > /workspace/f")
        status, doc = cls.server.api(
            "POST", "/v1/sandboxes/%s/snapshots" % cls.sid, {})
        assert status == 201, doc
        cls.snap = doc["id"]
        cls.pids = cls.daemons()

    @classmethod
    def tearDownClass(cls):
        cls.server.api("DELETE", "/v1/sandboxes/" + cls.sid)
        log = cls.server.log_text()
        cls.server.stop()
        cls.server.cleanup()
        # A fatal error logs CRITICAL; managerd logs how a child ended.
        for word in ("CRITICAL", "exited with status", "killed by signal"):
            if word in log:
                raise AssertionError("%r in the log:\n%s" % (word, log))

    @classmethod
    def daemons(cls):
        pids = cls.server.children()
        pids["managerd"] = cls.server.proc.pid
        return pids

    def tearDown(self):
        self.assertEqual(self.daemons(), self.pids, "a daemon was restarted")
        self.assertIsNone(self.server.proc.poll())

    # --- the requests ------------------------------------------------------

    def api(self, method, path, body=None, raw=False):
        hdrs = dict(harness.AUTH)
        if raw:
            hdrs["Content-Type"] = "application/octet-stream"
        status, _, data = self.server.request(method, path, body=body,
                                              headers=hdrs, timeout=60)
        return status, data

    def exec_(self):
        return self.api("POST", "/v1/sandboxes/%s/exec" % self.sid,
                        {"command": "echo ok"})

    def stream(self):
        return self.api("POST", "/v1/sandboxes/%s/exec/stream" % self.sid,
                        {"command": "echo ok"})

    def read(self):
        return self.api("GET", "/v1/sandboxes/%s/files?path=/workspace/f" %
                        self.sid)

    def write(self):
        return self.api("PUT", "/v1/sandboxes/%s/files?path=/workspace/up" %
                        self.sid, PAYLOAD, raw=True)

    def snapshot(self):
        status, data = self.api(
            "POST", "/v1/sandboxes/%s/snapshots" % self.sid, {})
        if status == 201:
            self.assertEqual(self.api("DELETE", "/v1/snapshots/" +
                                      json.loads(data)["id"])[0], 204)
        return status, data

    def fork(self):
        status, data = self.api("POST", "/v1/snapshots/%s/fork" % self.snap,
                                {})
        if status == 201:
            self.assertEqual(self.api("DELETE", "/v1/sandboxes/" +
                                      json.loads(data)["id"])[0], 204)
        return status, data

    def health(self):
        return self.server.request("GET", "/healthz")[0::2]

    ALL = ("exec_", "stream", "read", "write", "snapshot")

    # --- what the answers must be ----------------------------------------

    def assert_unavailable(self, answer, name):
        status, data = answer
        self.assertEqual(status, 503, "%s: %r" % (name, data))
        doc = json.loads(data)
        self.assertEqual(doc["error"]["code"], "unavailable", doc)
        self.assertRegex(doc["error"]["message"],
                         "descriptors|Too many open files", doc)

    def assert_unavailable_or_ok(self, answer, name):
        if answer[0] >= 400:
            self.assert_unavailable(answer, name)

    def assert_ok(self, answer, name):
        status, data = answer
        self.assertIn(status, (200, 201, 204), "%s: %r" % (name, data))
        if name == "read":
            self.assertEqual(data, PAYLOAD)
        if name in ("exec_", "stream"):
            self.assertIn(b"ok", data)

    def assert_serving(self, names=ALL):
        for name in names:
            self.assert_ok(getattr(self, name)(), name)
        self.assertEqual(self.health()[0], 200)

    # --- the tests ----------------------------------------------------------

    def test_apid_connections(self):
        """No slot: every client is told 503 through the reserve, and
        accepting resumes once the limit is back."""
        answers = []

        def one():
            try:
                answers.append(self.server.request("GET", "/healthz",
                                                   timeout=10)[0::2])
            except (OSError, http.client.HTTPException) as e:
                answers.append((0, repr(e).encode()))

        with starved(self.pids["apid"], 0):
            threads = [threading.Thread(target=one) for _ in range(40)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        self.assertEqual(len(answers), 40)
        for a in answers:
            self.assert_unavailable_or_ok(a, "healthz")
        self.assertGreater(len([a for a in answers if a[0] == 503]), 0)
        self.assert_serving()

    def test_apid_passed_descriptors(self):
        """One slot, taken by the connection: apid's own pipes fail, and so
        do the descriptors managerd passes it (a spool, a check)."""
        with starved(self.pids["apid"], 1):
            for name in self.ALL + ("fork",):
                self.assert_unavailable(getattr(self, name)(), name)
        self.assert_serving(self.ALL + ("fork",))

    def test_managerd(self):
        with starved(self.pids["managerd"], 0):
            for name in self.ALL + ("fork",):
                self.assert_unavailable(getattr(self, name)(), name)
            # What needs no descriptor still works.
            status, _ = self.api("GET", "/v1/sandboxes/" + self.sid)
            self.assertEqual(status, 200)
        self.assert_serving(self.ALL + ("fork",))

    def test_dockerd_proxy(self):
        for free in (0, 1):
            with starved(self.pids["dockerd-proxy"], free):
                for name in self.ALL:
                    self.assert_unavailable(getattr(self, name)(), name)
                # apid may answer from its last ping.
                self.assert_unavailable_or_ok(self.health(), "healthz")
        self.assert_serving()

    def test_archive_worker(self):
        with starved(self.pids["archive-worker"], 0):
            for name in ("read", "write", "snapshot", "fork"):
                self.assert_unavailable(getattr(self, name)(), name)
            self.assert_ok(self.exec_(), "exec_")
        self.assert_serving(self.ALL + ("fork",))


@contextlib.contextmanager
def no_descriptors(pid):
    """pid can make no descriptor at all: its limit below every free
    number, so one it closes meanwhile gives it none either."""
    saved = prlimit(pid)
    prlimit(pid, (3, saved[1]))
    try:
        yield
    finally:
        prlimit(pid, saved)


def wait_for(what, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if what():
            return True
        time.sleep(0.2)
    return False


class ChannelsLost(unittest.TestCase):
    """The channels managerd hands out, arriving while their receiver is
    out of descriptors: apid's end of its channel to a new archive
    worker, and a new apid's channel to managerd.  Neither is fatal: the
    receiver asks again (apid), or has the child started again a second
    later (managerd), until descriptors are back."""

    def setUp(self):
        self.server = harness.SandboxServer()
        self.server.start()
        self.sid = self.server.create()["id"]
        self.server.exec(self.sid, "printf 'descriptors\\n' > /workspace/f")

    def tearDown(self):
        self.server.api("DELETE", "/v1/sandboxes/" + self.sid)
        self.server.cleanup()

    def read_ok(self):
        try:
            status, _, body = self.server.request(
                "GET", "/v1/sandboxes/%s/files?path=/workspace/f" % self.sid,
                headers=harness.AUTH, timeout=10)
        except (OSError, http.client.HTTPException):
            return False
        return status == 200 and body == PAYLOAD

    def test_apid_gets_its_worker_channel_again(self):
        kids = self.server.children()
        with no_descriptors(kids["apid"]):
            os.kill(kids["archive-worker"], 9)
            self.assertTrue(wait_for(lambda: "came without its descriptor"
                                     in self.server.log_text()),
                            self.server.log_text())
            time.sleep(1.5)
        self.assertTrue(wait_for(self.read_ok), self.server.log_text())
        now = self.server.children()
        self.assertEqual(now["apid"], kids["apid"])
        self.assertNotIn("CRITICAL", self.server.log_text())
        self.assertIsNone(self.server.proc.poll())

    def test_managerd_gets_a_new_apid_channel(self):
        kids = self.server.children()
        with no_descriptors(self.server.proc.pid):
            os.kill(kids["apid"], 9)
            self.assertTrue(wait_for(lambda: "its channel was dropped"
                                     in self.server.log_text()),
                            self.server.log_text())
            time.sleep(1.5)
        self.assertTrue(wait_for(self.read_ok), self.server.log_text())
        self.assertEqual(self.server.request("GET", "/healthz")[0], 200)
        self.assertNotIn("CRITICAL", self.server.log_text())
        self.assertIsNone(self.server.proc.poll())


def main():
    if os.geteuid() != 0:
        print("SKIP: needs root (prlimit on the daemons)")
        sys.exit(77)
    harness.require_root_and_docker()
    unittest.main(verbosity=2)


if __name__ == "__main__":
    main()
