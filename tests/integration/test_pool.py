"""The warm pool (AGENT_SANDBOX_WARM_POOL, docs/configuration.md "Warm
pool") against the real dockerd: the pool fills; a create it can serve
gets a fresh, hardened sandbox whose env reaches execs and processes, whose
limits Docker's update call set, whose TTL starts at the claim; creates it
cannot serve take the usual path; pooled sandboxes are in no list and no
request reaches them; a pooled container that dies is replaced, never
handed out; the host's limit counts them; a restart destroys the last
run's and keeps a claimed sandbox's env; bad settings stop the server."""

import json
import os
import re
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

IMAGE = harness.TEST_IMAGE
PY_IMAGE = os.environ.get("AGENT_SANDBOX_TEST_PY_IMAGE",
                          "agent-sandbox/debian-python:bookworm")
CLAIMED = "created from the warm pool"


def parse_time(text):
    """An API time ("2026-12-02T06:09:00.817Z", whole seconds without
    the fraction) as seconds since the epoch."""
    import datetime
    text = text.rstrip("Z")
    fmt = "%Y-%m-%dT%H:%M:%S.%f" if "." in text else "%Y-%m-%dT%H:%M:%S"
    return datetime.datetime.strptime(text, fmt).replace(
        tzinfo=datetime.timezone.utc).timestamp()


def pooled_ready(server):
    status, _, data = server.request("GET", "/metrics")
    assert status == 200, status
    m = re.search(r'^agent_sandbox_sandboxes\{state="pooled"\} (\d+)',
                  data.decode(), re.M)
    return int(m.group(1)) if m else 0


def wait_ready(server, n, within=60):
    deadline = time.time() + within
    while time.time() < deadline:
        if pooled_ready(server) == n:
            return
        time.sleep(0.2)
    raise AssertionError("pool not at %d:\n%s" % (n, server.log_text()))


def pooled_ids(server):
    """Sandbox ids of this server's containers that no list shows."""
    names, _ = server.docker_objects()
    status, doc = server.api("GET", "/v1/sandboxes")
    listed = {s["id"] for s in doc["sandboxes"]}
    ids = {n[len("agent-sandbox-"):] for n in names
           if re.fullmatch(r"agent-sandbox-sb_[0-9a-f]{16}", n)}
    return ids - listed


def claims(server):
    return server.log_text().count(CLAIMED)


class Pool(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = harness.SandboxServer(
            AGENT_SANDBOX_WARM_POOL=IMAGE + "=2").start()
        wait_ready(cls.server, 2)

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def setUp(self):
        wait_ready(self.server, 2)

    def create(self, **spec):
        doc = self.server.create(**spec)
        self.addCleanup(self.server.api, "DELETE",
                        "/v1/sandboxes/" + doc["id"])
        return doc

    def test_claim_is_fresh_and_hardened(self):
        before = claims(self.server)
        pool = pooled_ids(self.server)
        self.assertEqual(len(pool), 2)
        t0 = time.time()
        sb = self.create(image=IMAGE, env={"GREETING": "hi", "X": "1"},
                         timeout_seconds=300)
        self.assertEqual(claims(self.server), before + 1)
        self.assertIn(sb["id"], pool)
        self.assertEqual((sb["status"], sb["status_reason"]),
                         ("running", None))
        res = self.server.exec(sb["id"], "id -u; stat -c %u /workspace; "
                               "ls -A /workspace | wc -l; touch /x 2>&1 "
                               "|| echo ro; echo $GREETING $X")
        self.assertEqual(res["stdout"].split("\n")[:3], ["1000", "1000",
                                                          "0"], res)
        self.assertIn("ro\n", res["stdout"])
        self.assertTrue(res["stdout"].endswith("hi 1\n"), res)
        # A command's own env wins.
        res = self.server.exec(sb["id"], "echo $GREETING $X",
                               env={"X": "2"})
        self.assertEqual(res["stdout"], "hi 2\n")
        # The TTL starts at the claim.
        created = parse_time(sb["created_at"])
        self.assertGreaterEqual(created, t0 - 1)
        self.assertAlmostEqual(parse_time(sb["expires_at"]) -
                               created, 300, delta=0.01)
        # A process gets the env too.
        status, proc = self.server.api(
            "POST", "/v1/sandboxes/%s/processes" % sb["id"],
            {"command": "echo $GREETING"})
        self.assertEqual(status, 201, proc)
        deadline = time.time() + 10
        while time.time() < deadline:
            status, out, data = self.server.request(
                "GET", "/v1/sandboxes/%s/processes/%s/output" %
                (sb["id"], proc["id"]), headers=harness.AUTH)
            if b'"exit"' in data:
                break
            time.sleep(0.2)
        self.assertIn("hi\\n", data.decode())
        # It refills.
        wait_ready(self.server, 2)

    def test_limits_put_on_by_update(self):
        before = claims(self.server)
        sb = self.create(image=IMAGE, cpus=0.5, memory_mb=64,
                         pids_limit=32)
        self.assertEqual(claims(self.server), before + 1)
        status, doc = harness.container_inspect("agent-sandbox-" +
                                                sb["id"])
        self.assertEqual(status, 200)
        host = doc["HostConfig"]
        self.assertEqual(host["NanoCpus"], 500000000)
        self.assertEqual(host["Memory"], 64 * 1048576)
        self.assertEqual(host["MemorySwap"], 64 * 1048576)
        self.assertEqual(host["PidsLimit"], 32)
        self.assertEqual((sb["cpus"], sb["memory_mb"], sb["pids_limit"]),
                         (0.5, 64, 32))
        self.assertEqual(self.server.exec(sb["id"], ["echo", "ok"])
                         ["stdout"], "ok\n")

    def test_others_take_the_usual_path(self):
        before = claims(self.server)
        for spec in ({"image": IMAGE, "network": True},
                     {"image": IMAGE, "read_only_rootfs": False},
                     {"image": PY_IMAGE}):
            sb = self.create(**spec)
            self.assertEqual(sb["status"], "running")
        self.assertEqual(claims(self.server), before)

    def test_pooled_are_out_of_reach(self):
        for sid in pooled_ids(self.server):
            for method, path in (("GET", ""), ("DELETE", ""),
                                 ("POST", "/exec"), ("GET", "/stats")):
                status, doc = self.server.api(
                    method, "/v1/sandboxes/%s%s" % (sid, path),
                    {"command": ["true"]} if method == "POST" else None)
                self.assertEqual(status, 404, (method, path, doc))

    def test_dead_pooled_container_is_replaced(self):
        victims = pooled_ids(self.server)
        for sid in victims:
            status, body = harness.docker_request(
                "POST", "/containers/agent-sandbox-%s/kill" % sid)
            self.assertEqual(status, 204, body)
        deadline = time.time() + 30
        while time.time() < deadline:
            now = pooled_ids(self.server)
            if len(now) == 2 and not now & victims:
                break
            time.sleep(0.2)
        self.assertFalse(pooled_ids(self.server) & victims)
        wait_ready(self.server, 2)
        sb = self.create(image=IMAGE)
        self.assertNotIn(sb["id"], victims)
        self.assertEqual(self.server.exec(sb["id"], ["echo", "ok"])
                         ["stdout"], "ok\n")


class Limits(unittest.TestCase):
    def test_host_limit_counts_the_pool(self):
        server = harness.SandboxServer(AGENT_SANDBOX_WARM_POOL=IMAGE + "=2",
                                       AGENT_SANDBOX_MAX_SANDBOXES="2")
        server.start()
        try:
            wait_ready(server, 2)
            # Creates the pool cannot serve take the pooled slots.
            for _ in range(2):
                status, doc = server.api("POST", "/v1/sandboxes",
                                         {"image": PY_IMAGE})
                self.assertEqual(status, 201, doc)
            status, doc = server.api("POST", "/v1/sandboxes",
                                     {"image": IMAGE})
            self.assertEqual(status, 429, doc)
            self.assertEqual(pooled_ready(server), 0)
        finally:
            server.cleanup()

    def test_restart_destroys_the_last_runs_pool(self):
        server = harness.SandboxServer(AGENT_SANDBOX_WARM_POOL=IMAGE + "=2")
        server.start()
        try:
            wait_ready(server, 2)
            sb = server.create(image=IMAGE, env={"KEPT": "yes"})
            wait_ready(server, 2)
            old = pooled_ids(server)
            server.kill9()
            server.start()
            wait_ready(server, 2)
            self.assertFalse(pooled_ids(server) & old)
            names, _ = server.docker_objects()
            for sid in old:
                self.assertNotIn("agent-sandbox-" + sid, names)
            # The claimed one's env still goes with its commands.
            self.assertEqual(server.exec(sb["id"], "echo $KEPT")["stdout"],
                             "yes\n")
        finally:
            server.cleanup()

    def test_bad_settings_stop_the_server(self):
        managerd, libexec = harness.binaries()
        cases = [
            ({"AGENT_SANDBOX_WARM_POOL": IMAGE}, "IMAGE=COUNT"),
            ({"AGENT_SANDBOX_WARM_POOL": IMAGE + "=0"}, "[1, 64]"),
            ({"AGENT_SANDBOX_WARM_POOL": "caf\u00e9=1"},
             "not an image reference"),
            ({"AGENT_SANDBOX_WARM_POOL": IMAGE + "=30"}, "max_sandboxes"),
            ({"AGENT_SANDBOX_WARM_POOL": IMAGE + "=1",
              "AGENT_SANDBOX_ALLOWED_IMAGES": "python:*"},
             "which AGENT_SANDBOX_ALLOWED_IMAGES does not allow"),
        ]
        try:
            for extra, want in cases:
                env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                       "AGENT_SANDBOX_LIBEXEC_DIR": libexec,
                       "AGENT_SANDBOX_API_KEYS": harness.TEST_KEY,
                       "AGENT_SANDBOX_DEFAULT_IMAGE": "python:3.12"}
                env.update(extra)
                res = subprocess.run([managerd], env=env,
                                     capture_output=True, timeout=20,
                                     text=True)
                self.assertEqual(res.returncode, 2, (extra, res.stderr))
                self.assertIn("configuration error: ", res.stderr)
                self.assertIn(want, res.stderr)
        finally:
            harness.binaries_release(libexec)


if __name__ == "__main__":
    unittest.main()
