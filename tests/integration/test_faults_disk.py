"""A full data disk (issue 11, item 4): the data directory on a 24 MiB
tmpfs.  What does not fit fails with 507 insufficient_storage in the
envelope and leaves no partial file; records stay readable, the server
keeps answering, and everything works again once space is freed.  Run
as root (it mounts the tmpfs); skips (77) otherwise."""

import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

MIB = 1 << 20
DISK_MIB = 24


def leftovers(top):
    """Temporary files under top: snapshot .tmp files, upload spools."""
    out = []
    for d, _, files in os.walk(top):
        for f in files:
            path = os.path.join(d, f)
            if f.endswith(".tmp") or os.path.basename(d) == "uploads":
                out.append(path)
    return out


class FullDisk(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = harness.SandboxServer()
        os.makedirs(cls.server.data_dir)
        subprocess.run(["mount", "-t", "tmpfs", "-o",
                        "size=%dm,mode=0755" % DISK_MIB, "tmpfs",
                        cls.server.data_dir], check=True)
        cls.server.start()
        cls.sid = cls.server.create()["id"]

    @classmethod
    def tearDownClass(cls):
        cls.server.api("DELETE", "/v1/sandboxes/" + cls.sid)
        cls.server.stop()
        subprocess.run(["umount", cls.server.data_dir], check=False)
        cls.server.cleanup()

    def assert_full(self, status, doc):
        self.assertEqual(status, 507, doc)
        self.assertEqual(doc["error"]["code"], "insufficient_storage", doc)
        self.assertEqual(leftovers(self.server.data_dir), [])

    def assert_serving(self):
        status, doc = self.server.api("GET", "/v1/sandboxes/" + self.sid)
        self.assertEqual((status, doc["status"]), (200, "running"), doc)
        self.assertEqual(self.server.api("GET", "/v1/snapshots")[0], 200)
        self.assertEqual(self.server.request("GET", "/healthz")[0], 200)
        r = self.server.exec(self.sid, "echo ok")
        self.assertEqual(r["stdout"], "ok\n")

    def test_snapshot_that_does_not_fit(self):
        self.server.exec(self.sid, "head -c %d /dev/urandom > big" %
                         (2 * DISK_MIB * MIB), timeout_seconds=60)
        status, doc = self.server.api(
            "POST", "/v1/sandboxes/%s/snapshots" % self.sid, {})
        self.assert_full(status, doc)
        self.assertIn("the data directory is full", doc["error"]["message"])
        self.assert_serving()
        # Space again: the same request works.
        self.server.exec(self.sid, "rm big && echo small > small")
        status, doc = self.server.api(
            "POST", "/v1/sandboxes/%s/snapshots" % self.sid, {})
        self.assertEqual(status, 201, doc)
        self.assertEqual(self.server.api("DELETE", "/v1/snapshots/" +
                                         doc["id"])[0], 204)

    def test_upload_that_does_not_fit(self):
        status, _, body = self.server.request(
            "PUT", "/v1/sandboxes/%s/files?path=/workspace/up.bin" %
            self.sid, body=b"u" * (2 * DISK_MIB * MIB),
            headers=dict(harness.AUTH,
                         **{"Content-Type": "application/octet-stream"}))
        self.assert_full(status, json.loads(body))
        r = self.server.exec(self.sid, "test -e up.bin || echo absent")
        self.assertEqual(r["stdout"], "absent\n")
        self.assert_serving()

    def test_records_on_a_full_disk(self):
        # Fill what is left; a new sandbox cannot be recorded, nor a new
        # deadline, and both say why.
        filler = os.path.join(self.server.data_dir, "filler")
        subprocess.run(["dd", "if=/dev/zero", "of=" + filler, "bs=1M"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=False)
        try:
            status, doc = self.server.api("POST", "/v1/sandboxes", {})
            self.assert_full(status, doc)
            status, doc = self.server.api(
                "POST", "/v1/sandboxes/%s/timeout" % self.sid,
                {"timeout_seconds": 600})
            self.assert_full(status, doc)
            self.assert_serving()
        finally:
            os.unlink(filler)
        status, doc = self.server.api("POST", "/v1/sandboxes", {})
        self.assertEqual(status, 201, doc)
        self.server.api("DELETE", "/v1/sandboxes/" + doc["id"])


def main():
    if os.geteuid() != 0:
        print("SKIP: needs root (mounts a tmpfs)")
        sys.exit(77)
    unittest.main(verbosity=2)


if __name__ == "__main__":
    main()
