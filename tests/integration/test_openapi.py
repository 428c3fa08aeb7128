"""The OpenAPI document end to end: apid serves GET /openapi.json without
a key, byte for byte the committed docs/openapi.json, and
"agent-sandbox openapi" prints the same bytes without Docker or keys
(API.md §12)."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

COMMITTED = os.path.join(harness.SRCDIR, "docs", "openapi.json")
CLI = os.path.join(harness.BUILDDIR, "client", "agent-sandbox")


def committed():
    with open(COMMITTED, "rb") as f:
        return f.read()


class ServedDocument(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = harness.Server().start()

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def test_served_without_a_key(self):
        status, headers, body = self.server.request("GET", "/openapi.json")
        self.assertEqual(status, 200, body)
        self.assertEqual(headers["content-type"], "application/json")
        self.assertEqual(body, committed())

    def test_a_wrong_key_does_not_matter(self):
        status, _, body = self.server.request(
            "GET", "/openapi.json",
            headers={"Authorization": "Bearer wrong-key-0123456789"})
        self.assertEqual(status, 200)
        self.assertEqual(body, committed())

    def test_other_methods(self):
        status, headers, body = self.server.request("POST", "/openapi.json",
                                                    body={})
        self.assertEqual(status, 405)
        self.assertEqual(headers.get("allow"), "GET")
        self.assertEqual(json.loads(body)["error"]["code"],
                         "method_not_allowed")

    def test_version_matches_healthz(self):
        _, _, body = self.server.request("GET", "/openapi.json")
        doc = json.loads(body)
        status, _, health = self.server.request("GET", "/healthz")
        self.assertEqual(status, 200)
        self.assertEqual(doc["info"]["version"],
                         json.loads(health)["version"])
        self.assertEqual(doc["openapi"], "3.1.0")
        for path in ("/v1/sandboxes", "/v1/sandboxes/{sandbox_id}",
                     "/v1/sandboxes/{sandbox_id}/exec",
                     "/v1/sandboxes/{sandbox_id}/exec/stream",
                     "/v1/sandboxes/{sandbox_id}/files",
                     "/v1/sandboxes/{sandbox_id}/files/list",
                     "/v1/sandboxes/{sandbox_id}/snapshots",
                     "/v1/sandboxes/{sandbox_id}/rollback",
                     "/v1/snapshots/{snapshot_id}/fork"):
            self.assertIn(path, doc["paths"])


class CommandLine(unittest.TestCase):
    """No Docker, no keys: an environment with nothing but PATH."""

    def run_cli(self, *args):
        return subprocess.run([CLI] + list(args), capture_output=True,
                              env={"PATH": os.environ.get("PATH", "/bin")},
                              timeout=30)

    def setUp(self):
        probe = self.run_cli("openapi", "--no-such-flag")
        if b"unknown command" in probe.stderr:
            self.skipTest("agent-sandbox has no openapi command yet")

    def test_output_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "openapi.json")
            r = self.run_cli("openapi", "-o", path)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(path, "rb") as f:
                self.assertEqual(f.read(), committed())
            os.unlink(path)
            r = self.run_cli("openapi", "--output", path)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(path, "rb") as f:
                self.assertEqual(f.read(), committed())

    def test_stdout(self):
        r = self.run_cli("openapi")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, committed())
        self.assertTrue(r.stdout.startswith(b'{\n  "openapi": "3.1'))

    def test_usage_errors(self):
        for args in (("openapi", "extra"), ("openapi", "--bogus"),
                     ("openapi", "-o")):
            r = self.run_cli(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(b"usage:", r.stderr)


if __name__ == "__main__":
    harness.require_root_and_docker()
    unittest.main(verbosity=2)
