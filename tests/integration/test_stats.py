"""GET /v1/sandboxes/{id}/stats against the real dockerd (docs/rest-api.md
"Stats"): the workspace after 5 MiB written, memory and its limit, pids
and theirs (a background sleep raises them), network figures only with a
network, 404 for an unknown sandbox, repeated on a kept-alive connection,
a stopped container, and the CLI's stats verb."""

import http.client
import json
import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

CLI = os.path.join(harness.BUILDDIR, "client", "agent-sandbox")
MIB = 1024 * 1024


class Stats(harness.SandboxCase):
    def stats(self, sid):
        status, doc = self.server.api("GET", "/v1/sandboxes/%s/stats" % sid)
        self.assertEqual(status, 200, doc)
        return doc

    def test_figures(self):
        sb = self.create(memory_mb=96, pids_limit=64)
        self.server.exec(sb["id"], "head -c 5242880 /dev/zero > big")
        doc = self.stats(sb["id"])
        self.assertEqual(set(doc), {"status", "cpu", "memory", "pids",
                                    "workspace", "network"})
        self.assertEqual(doc["status"], "running")
        self.assertGreaterEqual(doc["workspace"]["bytes"], 5 * MIB)
        self.assertGreater(doc["memory"]["usage_bytes"], 0)
        self.assertEqual(doc["memory"]["limit_bytes"], 96 * MIB)
        self.assertGreaterEqual(doc["pids"]["current"], 1)
        self.assertEqual(doc["pids"]["limit"], 64)
        self.assertIsInstance(doc["cpu"]["usage_seconds"], float)
        self.assertGreater(doc["cpu"]["usage_seconds"], 0)
        # One-shot stats carry no previous sample: no rate to give.
        self.assertIsNone(doc["cpu"]["percent"])
        # No network: no figures, rather than zeros that look measured.
        self.assertIsNone(doc["network"])

    def test_background_sleep_raises_pids(self):
        sb = self.create()
        before = self.stats(sb["id"])["pids"]["current"]
        status, proc = self.server.api(
            "POST", "/v1/sandboxes/%s/processes" % sb["id"],
            {"command": "sleep 300"})
        self.assertEqual(status, 201, proc)
        deadline = time.time() + 20
        while time.time() < deadline:
            now = self.stats(sb["id"])["pids"]["current"]
            if now > before:
                break
            time.sleep(0.2)
        self.assertGreater(now, before)

    def test_network_figures_with_a_network(self):
        status, doc = self.server.api("POST", "/v1/sandboxes",
                                      {"network": True})
        if status == 403:
            self.skipTest("this server refuses networked sandboxes")
        self.assertEqual(status, 201, doc)
        self.addCleanup(self.server.api, "DELETE",
                        "/v1/sandboxes/" + doc["id"])
        net = self.stats(doc["id"])["network"]
        self.assertIsNotNone(net)
        self.assertGreaterEqual(net["rx_bytes"], 0)
        self.assertGreaterEqual(net["tx_bytes"], 0)

    def test_unknown_and_odd_ids(self):
        for sid in ("sb_0000000000000000", "nope", "x" * 300):
            status, doc = self.server.api("GET",
                                          "/v1/sandboxes/%s/stats" % sid)
            self.assertEqual(status, 404, doc)
            self.assertEqual(doc["error"]["code"], "not_found")
        status, _, _ = self.server.request(
            "GET", "/v1/sandboxes/sb_0000000000000000/stats")
        self.assertEqual(status, 401)
        status, doc = self.server.api("POST", "/v1/sandboxes/x/stats")
        self.assertEqual(status, 405)

    def test_repeated_on_a_kept_alive_connection(self):
        sb = self.create()
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port,
                                          timeout=60)
        try:
            for _ in range(5):
                conn.request("GET", "/v1/sandboxes/%s/stats" % sb["id"],
                             headers=harness.AUTH)
                resp = conn.getresponse()
                doc = json.loads(resp.read())
                self.assertEqual(resp.status, 200, doc)
                self.assertEqual(doc["status"], "running")
        finally:
            conn.close()

    def test_stopped_container(self):
        sb = self.create()
        # dockerd-proxy/proxy.h SANDBOX_NAME_PREFIX.
        name = "agent-sandbox-" + sb["id"]
        status, inspect = harness.container_inspect(name)
        self.assertEqual(status, 200, name)
        status, _ = harness.docker_request(
            "POST", "/containers/%s/stop?t=0" % inspect["Id"])
        self.assertIn(status, (204, 304))
        doc = self.stats(sb["id"])
        self.assertEqual(doc, {"status": "stopped", "cpu": None,
                               "memory": None, "pids": None,
                               "workspace": None, "network": None})

    def test_cli(self):
        sb = self.create()
        self.server.exec(sb["id"], "head -c 2097152 /dev/zero > f")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
               "AGENT_SANDBOX_URL": "http://127.0.0.1:%d" % self.server.port,
               "AGENT_SANDBOX_API_KEY": harness.TEST_KEY}
        p = subprocess.run([CLI, "stats", sb["id"]], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = dict(ln.split(":", 1) for ln in
                     p.stdout.decode().splitlines())
        self.assertIn("running", lines["sandbox"])
        self.assertIn("of 128.0MiB", lines["memory"])
        self.assertIn("of 256", lines["pids"])
        self.assertIn("MiB", lines["workspace"])
        self.assertEqual(lines["network"].strip(), "rx -, tx -")
        p = subprocess.run([CLI, "--json", "stats", sb["id"]], env=env,
                           stdout=subprocess.PIPE, timeout=60)
        doc = json.loads(p.stdout)
        self.assertGreaterEqual(doc["workspace"]["bytes"], 2 * MIB)
        p = subprocess.run([CLI, "stats", "sb_0000000000000000"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=60)
        self.assertEqual(p.returncode, 1)
        self.assertIn("not_found", p.stderr.decode())


if __name__ == "__main__":
    unittest.main()
