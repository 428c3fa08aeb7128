"""One child dying does not take the service down: kill -9 of apid, then
of dockerd-proxy, while clients are busy creating, running commands in and
deleting sandboxes.  The service answers again within about a second, every
client call returns (an answer, an error or a closed connection, never a
hang), every sandbox acknowledged before the kill still exists and works,
nothing acknowledged as deleted comes back, and no container is left
without a record.  Past the restart limit managerd exits non-zero for the
service manager.  Every daemon runs under its production seccomp filter."""

import http.client
import json
import os
import signal
import socket
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

WORKERS = 4
# Every client call gives up after this long: reaching it is a hang.
CALL_TIMEOUT = 60
# The service must answer /healthz again within this long of a kill.
BACK_WITHIN = 2.0


class Hang(Exception):
    pass


def call(server, method, path, body=None):
    """(status, parsed body), or (None, exception name) if the connection
    broke; a timeout is a hang and raises."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port,
                                      timeout=CALL_TIMEOUT)
    hdrs = dict(harness.AUTH)
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        hdrs["Content-Type"] = "application/json"
    try:
        conn.request(method, path, body=data, headers=hdrs)
        resp = conn.getresponse()
        raw = resp.read()
        return resp.status, (json.loads(raw) if raw else None)
    except socket.timeout as e:
        raise Hang("%s %s: no answer in %d s" % (method, path,
                                                 CALL_TIMEOUT)) from e
    except (ConnectionError, http.client.HTTPException, OSError) as e:
        return None, type(e).__name__
    finally:
        conn.close()


class Load:
    """Clients on threads, each in a loop of healthz, create, exec and
    delete, keeping what the server acknowledged."""

    def __init__(self, server):
        self.server = server
        self.lock = threading.Lock()
        self.created = set()        # acknowledged (201), not yet deleted
        self.deleted = set()        # acknowledged as deleted (204)
        self.unsure = set()         # a delete that got no 204
        self.outcomes = []          # (what, status or None, when it began)
        self.errors = []            # (what, status, body or exception)
        self.hangs = []
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self.run, daemon=True)
                        for _ in range(WORKERS)]

    def call(self, what, method, path, body=None):
        began = time.monotonic()
        status, doc = call(self.server, method, path, body)
        with self.lock:
            self.outcomes.append((what, status, began))
            if status not in (200, 201, 204):
                self.errors.append((what, status, doc))
        return status, doc

    def cycle(self):
        self.call("healthz", "GET", "/healthz")
        status, doc = self.call("create", "POST", "/v1/sandboxes", {})
        if status != 201:
            return
        sid = doc["id"]
        with self.lock:
            self.created.add(sid)
        status, doc = self.call("exec", "POST",
                                "/v1/sandboxes/%s/exec" % sid,
                                {"command": "echo ok"})
        if status == 200 and doc["stdout"] != "ok\n":
            self.call("wrong output: %r" % doc, "GET", "/healthz")
        status, _ = self.call("delete", "DELETE", "/v1/sandboxes/" + sid)
        with self.lock:
            self.created.discard(sid)
            # A delete cut off may have happened or not.
            (self.deleted if status == 204 else self.unsure).add(sid)

    def run(self):
        while not self.stop.is_set():
            try:
                self.cycle()
            except Hang as e:
                with self.lock:
                    self.hangs.append(str(e))
                return

    def start(self):
        for t in self.threads:
            t.start()

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join(CALL_TIMEOUT * 4 + 10)
        return [t for t in self.threads if t.is_alive()]


def unlabelled_volumes():
    """Volumes named like ours that carry no instance label: what Docker
    makes by itself for a container whose named volume is gone."""
    status, body = harness.docker_request("GET", "/volumes")
    return {v["Name"] for v in json.loads(body).get("Volumes") or []
            if v["Name"].startswith("agent-sandbox-") and
            "io.agent-sandbox.instance" not in (v.get("Labels") or {})}


class KillUnderLoad(unittest.TestCase):
    def setUp(self):
        self.stray = unlabelled_volumes()
        self.server = harness.SandboxServer().start()

    def tearDown(self):
        if os.environ.get("KEEP_LOG"):
            sys.stderr.write(self.server.log_text())
        self.server.cleanup()

    def wait_back(self, victim, old_pid):
        """Seconds from the kill until /healthz answers 200 again.  The
        new process first, then the probe: a probe sent before managerd
        saw the old one die may be answered by a reply the old one had
        written just before it was killed."""
        start = time.monotonic()
        while time.monotonic() - start < 10:
            try:
                if self.server.children().get(victim) not in \
                        (None, old_pid) and \
                        self.server.request("GET", "/healthz",
                                            timeout=2)[0] == 200:
                    return time.monotonic() - start
            except OSError:
                pass
            time.sleep(0.01)
        self.fail("%s did not come back:\n%s" %
                  (victim, self.server.log_text()))

    def kill_under_load(self, victim):
        s = self.server
        before = [s.create()["id"] for _ in range(2)]
        load = Load(s)
        load.start()
        # Let the clients get going: some of each call in flight.
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with load.lock:
                if len([o for o in load.outcomes if o[0] == "delete"]) >= 2:
                    break
            time.sleep(0.05)
        old = s.children()[victim]
        killed = time.monotonic()
        os.kill(old, signal.SIGKILL)
        back = self.wait_back(victim, old)
        sys.stderr.write("\n%s killed under load: /healthz answers again "
                         "after %.3f s\n" % (victim, back))
        time.sleep(1.0)         # and the clients carry on for a while
        alive = load.finish()
        self.assertEqual(alive, [], "client calls that never returned")
        self.assertEqual(load.hangs, [])
        self.assertLess(back, BACK_WITHIN)
        self.assertIsNone(s.proc.poll(), "managerd must still run")
        self.check_outcomes(load, killed + back)
        self.check_state(before, load)

    def check_outcomes(self, load, back_at):
        """An answer or a broken connection, nothing else; what began
        once the service was back succeeded."""
        ok = {"healthz": 200, "create": 201, "exec": 200, "delete": 204}
        # What failed, and why, before any verdict: a failure says it.
        sys.stderr.write("%d calls, %d failed or cut off by the kill:\n%s\n"
                         % (len(load.outcomes), len(load.errors),
                            "\n".join("  %s: %s %s" % e
                                      for e in load.errors)))
        bad = [(w, st) for w, st, _ in load.outcomes
               if st not in (ok.get(w), None, 502)]
        self.assertEqual(bad, [], "unexpected answers")
        after = [(w, st) for w, st, t in load.outcomes if t > back_at]
        self.assertGreater(len(after), 0, "no call after the restart")
        self.assertEqual([o for o in after if o[1] != ok[o[0]]], [],
                         "calls made after the restart failed")

    def check_state(self, before, load):
        s = self.server
        for sid in before + sorted(load.created):
            status, doc = s.api("POST", "/v1/sandboxes/%s/exec" % sid,
                                {"command": "echo alive"})
            self.assertEqual(status, 200, (sid, doc))
            self.assertEqual(doc["stdout"], "alive\n")
        for sid in load.deleted:
            status, _ = s.api("GET", "/v1/sandboxes/" + sid)
            self.assertEqual(status, 404, sid)
        # Every container and volume of this server belongs to a record
        # (creations a dead proxy cut off are destroyed once a proxy is
        # back, and that takes a moment).
        deadline = time.monotonic() + 20
        while True:
            status, doc = s.api("GET", "/v1/sandboxes")
            self.assertEqual(status, 200)
            docs = doc["sandboxes"]
            records = {"agent-sandbox-" + d["id"] for d in docs}
            containers, volumes = s.docker_objects()
            # A destroy removes the container first, then the volume.
            if (set(containers) <= records and
                    {v[:-len("-workspace")] for v in volumes} <= records) or \
                    time.monotonic() > deadline:
                break
            time.sleep(0.2)
        self.assertLessEqual(set(containers), records)
        self.assertLessEqual({v[:-len("-workspace")] for v in volumes},
                             records)
        for sid in load.deleted:
            self.assertNotIn("agent-sandbox-" + sid, containers)
        self.assertEqual(unlabelled_volumes() - self.stray, set())
        for d in docs:
            s.api("DELETE", "/v1/sandboxes/" + d["id"])

    def test_apid_killed(self):
        self.kill_under_load("apid")
        self.assertIn("apid (pid", self.server.log_text())
        self.assertIn("apid is back", self.server.log_text())

    def test_apid_killed_cancels_its_commands(self):
        """A command whose client died with apid does not run on."""
        s = self.server
        sid = s.create()["id"]
        conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=30)
        hdrs = dict(harness.AUTH)
        hdrs["Content-Type"] = "application/json"
        conn.request("POST", "/v1/sandboxes/%s/exec/stream" % sid,
                     body=json.dumps({"command": "sleep 600",
                                      "timeout_seconds": 900}),
                     headers=hdrs)
        self.assertEqual(conn.getresponse().status, 200)

        def running():
            status, doc = s.api("POST", "/v1/sandboxes/%s/exec" % sid,
                                {"command": "ps -o args"})
            self.assertEqual(status, 200, doc)
            return "sleep 600" in doc["stdout"]

        self.assertTrue(running())
        old = s.children()["apid"]
        os.kill(old, signal.SIGKILL)
        self.wait_back("apid", old)
        conn.close()
        deadline = time.monotonic() + 10
        while running():
            self.assertLess(time.monotonic(), deadline,
                            "the command outlived its client")
            time.sleep(0.2)
        s.api("DELETE", "/v1/sandboxes/" + sid)

    def test_proxy_killed(self):
        self.kill_under_load("dockerd-proxy")
        self.assertIn("dockerd-proxy is back", self.server.log_text())


class RestartLimit(unittest.TestCase):
    def test_past_the_limit_managerd_exits_non_zero(self):
        server = harness.Server().start()
        try:
            pid = server.children()["apid"]
            # Five restarts in a minute are allowed; the sixth death ends
            # the service.
            for i in range(6):
                os.kill(pid, signal.SIGKILL)
                deadline = time.monotonic() + 5
                while time.monotonic() < deadline and \
                        server.proc.poll() is None:
                    new = server.children().get("apid")
                    if new not in (None, pid):
                        pid = new
                        break
                    time.sleep(0.01)
            rc = server.proc.wait(10)
            self.assertNotEqual(rc, 0)
            self.assertEqual(server.log_text().count("starting apid again"),
                             5)
            self.assertIn("apid died more than 5 times within 60 seconds; "
                          "stopping", server.log_text())
            with socket.socket() as sock:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind(("127.0.0.1", server.port))
        finally:
            server.cleanup()


class SpawnerDeath(unittest.TestCase):
    def test_without_the_spawner_the_service_stops(self):
        server = harness.Server().start()
        try:
            kids = server.children()
            os.kill(kids["spawner"], signal.SIGKILL)
            self.assertNotEqual(server.proc.wait(10), 0)
            self.assertIn("the spawner", server.log_text())
            for name in ("apid", "dockerd-proxy"):
                self.assertTrue(harness.pid_gone(kids[name], 5), name)
        finally:
            server.cleanup()


if __name__ == "__main__":
    harness.require_root_and_docker()
    unittest.main(verbosity=2)
