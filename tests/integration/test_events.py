"""Sandbox states from Docker's event stream against the real dockerd
(docs/rest-api.md "Sandbox", docs/architecture.md "State"): a container
killed, OOM-killed, removed or started again behind the server's back
shows at once with its status_reason, in a get and in a list; get and
list make no Docker call while the stream is followed (the proxy's own
request counts say so); a rollback's replaced container does not make
its sandbox read stopped; the stream outlives its 25 s window; odd ids
still get their 404."""

import json
import os
import re
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

WINDOW = 25


def container(sid):
    return "agent-sandbox-" + sid


class Events(harness.SandboxCase):
    def get(self, sid):
        status, doc = self.server.api("GET", "/v1/sandboxes/" + sid)
        self.assertEqual(status, 200, doc)
        return doc

    def listed(self, sid):
        status, doc = self.server.api("GET", "/v1/sandboxes")
        self.assertEqual(status, 200, doc)
        return [s for s in doc["sandboxes"] if s["id"] == sid][0]

    def wait_state(self, sid, status, reason, within=5.0):
        """Seconds until a get says (status, reason); fails past within."""
        start = time.time()
        while True:
            doc = self.get(sid)
            if (doc["status"], doc["status_reason"]) == (status, reason):
                return time.time() - start
            if time.time() - start > within:
                self.fail("%s: %s/%s, not %s/%s" % (
                    sid, doc["status"], doc["status_reason"], status,
                    reason))
            time.sleep(0.05)

    def docker(self, method, path):
        status, body = harness.docker_request(method, path)
        self.assertLess(status, 300, body)

    def docker_calls(self):
        """{endpoint template: requests made} from /metrics."""
        status, _, data = self.server.request("GET", "/metrics")
        self.assertEqual(status, 200)
        calls = {}
        for line in data.decode().splitlines():
            m = re.match(r'agent_sandbox_docker_request_duration_seconds_'
                         r'count\{endpoint="([^"]*)"\} (\d+)$', line)
            if m:
                calls[m.group(1)] = int(m.group(2))
        return calls

    def test_created_running(self):
        sb = self.create()
        self.assertEqual((sb["status"], sb["status_reason"]),
                         ("running", None))
        self.assertEqual(self.get(sb["id"])["status_reason"], None)

    def test_killed_then_started_again(self):
        sid = self.create()["id"]
        self.docker("POST", "/containers/%s/kill" % container(sid))
        took = self.wait_state(sid, "stopped", "exited")
        self.assertLess(took, 2.0)
        doc = self.listed(sid)
        self.assertEqual((doc["status"], doc["status_reason"]),
                         ("stopped", "exited"))
        # The CLI's table says why.
        out = subprocess.run(
            [os.path.join(harness.BUILDDIR, "client", "agent-sandbox"), "ls"],
            env=dict(os.environ, AGENT_SANDBOX_URL="http://127.0.0.1:%d" %
                     self.server.port, AGENT_SANDBOX_API_KEY=harness.TEST_KEY),
            capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 0, out.stderr)
        row = [line for line in out.stdout.splitlines() if sid in line]
        self.assertIn("stopped (exited)", row[0])
        # An exec on it is the reference's 400, asked of Docker.
        status, doc = self.server.api("POST", "/v1/sandboxes/%s/exec" % sid,
                                      {"command": ["true"]})
        self.assertEqual(status, 400, doc)
        self.docker("POST", "/containers/%s/start" % container(sid))
        self.wait_state(sid, "running", None)
        self.assertEqual(self.server.exec(sid, ["echo", "ok"])["stdout"],
                         "ok\n")

    def test_removed_behind_its_back(self):
        sid = self.create()["id"]
        self.docker("DELETE", "/containers/%s?force=true" % container(sid))
        self.wait_state(sid, "stopped", "container_removed")
        self.assertEqual(self.listed(sid)["status_reason"],
                         "container_removed")
        status, _ = self.server.api("DELETE", "/v1/sandboxes/" + sid)
        self.assertEqual(status, 204)
        self.assertEqual(self.server.api("GET", "/v1/sandboxes/" + sid)[0],
                         404)

    def test_oom_killed(self):
        sid = self.create(memory_mb=32)["id"]
        # The biggest process in the container goes: the command.
        res = self.server.exec(sid, "x=$(head -c 200000000 /dev/zero | "
                               "tr '\\0' a); echo survived",
                               timeout_seconds=60)
        self.assertNotEqual(res["stdout"], "survived\n", res)
        # The container lives on; an OOM kill alone is no reason.
        self.assertEqual(self.get(sid)["status"], "running")
        # 409: the OOM killer took the container's own process too (seen
        # under ASan); the reason must say so all the same.
        status, body = harness.docker_request(
            "POST", "/containers/%s/kill" % container(sid))
        self.assertIn(status, (204, 409), body)
        self.wait_state(sid, "stopped", "oom_killed")
        # A start forgets it.
        self.docker("POST", "/containers/%s/start" % container(sid))
        self.wait_state(sid, "running", None)
        self.docker("POST", "/containers/%s/kill" % container(sid))
        self.wait_state(sid, "stopped", "exited")

    def test_get_and_list_make_no_docker_call(self):
        sid = self.create()["id"]
        self.create()
        before = self.docker_calls()
        for _ in range(50):
            self.assertEqual(self.get(sid)["status"], "running")
            self.assertEqual(self.listed(sid)["status"], "running")
        after = self.docker_calls()
        for endpoint in ("GET /containers/{id}/json", "GET /containers/json"):
            self.assertEqual(after.get(endpoint, 0), before.get(endpoint, 0),
                             endpoint)

    def test_rollback_reads_running(self):
        sid = self.create()["id"]
        status, snap = self.server.api(
            "POST", "/v1/sandboxes/%s/snapshots" % sid, {"name": "s"})
        self.assertEqual(status, 201, snap)
        for _ in range(3):
            status, doc = self.server.api(
                "POST", "/v1/sandboxes/%s/rollback" % sid,
                {"snapshot_id": snap["id"]})
            self.assertEqual(status, 200, doc)
            self.assertEqual(doc["status"], "running")
            # The replaced container's die and destroy come late, on
            # another connection: they must not count.
            end = time.time() + 1.0
            while time.time() < end:
                doc = self.get(sid)
                self.assertEqual((doc["status"], doc["status_reason"]),
                                 ("running", None))
                time.sleep(0.05)

    def test_fork_reads_running(self):
        sid = self.create()["id"]
        status, snap = self.server.api(
            "POST", "/v1/sandboxes/%s/snapshots" % sid, {"name": "s"})
        self.assertEqual(status, 201, snap)
        status, doc = self.server.api(
            "POST", "/v1/snapshots/%s/fork" % snap["id"], {})
        self.assertEqual(status, 201, doc)
        self.addCleanup(self.server.api, "DELETE",
                        "/v1/sandboxes/" + doc["id"])
        self.assertEqual(self.get(doc["id"])["status"], "running")

    def test_odd_ids(self):
        for sid in ("sb_0000000000000000", "sb_%C3%A9t%C3%A9",
                    "sb_%FF%FE", "sb_" + "a" * 300):
            status, doc = self.server.api("GET", "/v1/sandboxes/" + sid)
            self.assertEqual(status, 404, (sid, doc))

    def test_stream_outlives_its_window(self):
        sid = self.create()["id"]
        # A window is counted when it ends.
        before = self.docker_calls().get("GET /events", 0)
        time.sleep(WINDOW + 2)
        self.docker("POST", "/containers/%s/kill" % container(sid))
        self.assertLess(self.wait_state(sid, "stopped", "exited"), 2.0)
        self.assertGreater(self.docker_calls().get("GET /events", 0), before)
        log = self.server.log_text()
        self.assertNotIn("Docker's event stream:", log)
        self.assertEqual(log.count("sandbox states follow Docker's events"),
                         1, log)


if __name__ == "__main__":
    unittest.main()
