"""managerd against a lying apid: the real managerd (and its spawner,
dockerd-proxy and archive worker, against the real dockerd) with
tests/integration/standin_apid in apid's place.  The stand-in sends what
a taken-over apid could; each hostile request must be refused with the
right error and reach nothing in Docker, and a malformed one must end
managerd.  Run as root (the privilege separation is the point); skips
(77) otherwise."""

import os
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

STEPS = ["cpus Docker would not limit", "cpus over the maximum",
         "memory over the maximum", "image outside the allowlist",
         "network the operator refused", "env key runtimes read",
         "env key with =", "a sandbox this server never made",
         "delete of one it never made", "a malformed create ends managerd"]


class LyingApid(unittest.TestCase):

    def test_hostile_requests_are_refused_and_a_lie_is_fatal(self):
        libexec = tempfile.mkdtemp(prefix="as-standin-")
        os.symlink(os.path.join(harness.BUILDDIR, "tests", "integration",
                                "standin_apid"),
                   os.path.join(libexec, "apid"))
        for name in ("dockerd-proxy", "archive-worker"):
            os.symlink(os.path.join(harness.BUILDDIR, name, name),
                       os.path.join(libexec, name))
        server = harness.SandboxServer(
            AGENT_SANDBOX_LIBEXEC_DIR=libexec,
            AGENT_SANDBOX_ALLOWED_IMAGES="agent-sandbox/*",
            AGENT_SANDBOX_ALLOW_NETWORK="false")
        try:
            server.start(wait=False)
            deadline = time.time() + 60
            while server.proc.poll() is None and time.time() < deadline:
                time.sleep(0.1)
            log = server.log_text()
            self.assertIsNotNone(server.proc.poll(), log)
            # A lying peer is fatal to managerd (the service manager
            # starts it again).
            self.assertEqual(server.proc.returncode, 1, log)
            self.assertIn("bad SANDBOX_CREATE message from apid", log)
            self.assertNotIn("standin: FAIL", log)
            for step in STEPS:
                self.assertIn("standin: ok " + step, log)
            self.assertIn("standin: done", log)
            self.assertEqual(server.docker_objects(), ([], []))
        finally:
            server.cleanup()
            for name in os.listdir(libexec):
                os.unlink(os.path.join(libexec, name))
            os.rmdir(libexec)


def main():
    harness.require_root_and_docker()
    result = unittest.main(exit=False, verbosity=2).result
    sys.exit(0 if result.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
