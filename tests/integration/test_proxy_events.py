"""dockerd-proxy's event stream (dockerd-proxy/docker_events.c) as
managerd sees it: this test stands in for managerd on the real proxy's
socketpair (jailed, seccomp kill, the real dockerd behind it;
test_proxy_ops.py's fixture).  After MSG_DOCKER_EVENTS_FOLLOW: one UP; a
start, a die with its exit code and a destroy of a sandbox's container,
each exactly once and in order, with Docker's time; nothing for the
-init container, another server's container wearing a sandbox's labels,
or a container without them; a second FOLLOW changes nothing.  Run as
root; skips (77) otherwise."""

import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import test_proxy_ops as ops  # noqa: E402
from test_proxy_ops import (INSTANCE, MSG_DOCKER_DONE, Proxy,  # noqa: E402
                            Reader, describe, new_id)

MSG_DOCKER_EVENTS_FOLLOW = 430
MSG_DOCKER_EVENTS_UP = 520
MSG_DOCKER_EVENT = 522
START, DIE, OOM, DESTROY = 1, 2, 3, 4

PROXY = None


def setUpModule():
    global PROXY
    harness.require_root_and_docker()
    PROXY = Proxy()


def tearDownModule():
    if PROXY is not None:
        PROXY.stop()


def decode_event(payload):
    r = Reader(payload)
    ev = (r.str(), r.u8(), r.i64(), r.i64())
    r.end()
    return ev


def events_within(seconds):
    """Every message the proxy sent unasked in the next seconds."""
    got, deadline = [], time.time() + seconds
    while True:
        left = deadline - time.time()
        if left <= 0:
            return got
        try:
            got.append(PROXY.next(0, timeout=left))
        except AssertionError as e:
            if "no reply" not in str(e):
                raise
            return got


class Events(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        PROXY.send(MSG_DOCKER_EVENTS_FOLLOW, 0, b"")
        mtype, payload = PROXY.next(0, timeout=10)
        assert mtype == MSG_DOCKER_EVENTS_UP, describe(mtype, payload)

    def test_a_sandbox_containers_life(self):
        sid = new_id()
        t0 = time.time_ns()
        mtype, payload = PROXY.create(sid)
        self.assertEqual(mtype, MSG_DOCKER_DONE, describe(mtype, payload))
        name = "agent-sandbox-" + sid
        subprocess.run(["docker", "kill", name], check=True,
                       capture_output=True)
        mtype, payload = PROXY.destroy(sid)
        self.assertEqual(mtype, MSG_DOCKER_DONE, describe(mtype, payload))
        got = [decode_event(p) for m, p in events_within(3)
               if m == MSG_DOCKER_EVENT]
        self.assertEqual([(e[0], e[1]) for e in got],
                         [(sid, START), (sid, DIE), (sid, DESTROY)], got)
        self.assertEqual(got[1][3], 137)
        times = [e[2] for e in got]
        self.assertEqual(times, sorted(times))
        self.assertGreater(times[0], t0 - 2 * 10**9)
        self.assertLess(times[-1], time.time_ns() + 10**9)

    def test_what_is_not_a_sandbox_says_nothing(self):
        sid = new_id()
        base = ["docker", "run", "-d", "--rm", "--label",
                "io.agent-sandbox.managed=true", "--label",
                "io.agent-sandbox.id=" + sid, "--label",
                ops.TEST_LABEL + "=1"]
        runs = [
            base + ["--label", "io.agent-sandbox.instance=" + INSTANCE,
                    "--label", "io.agent-sandbox.role=init"],
            base + ["--label", "io.agent-sandbox.instance=0000000000000000",
                    "--label", "io.agent-sandbox.role=sandbox"],
            ["docker", "run", "-d", "--rm", "--label",
             ops.TEST_LABEL + "=1"],
        ]
        ids = []
        try:
            for cmd in runs:
                ids.append(subprocess.run(
                    cmd + [harness.TEST_IMAGE, "true"], check=True,
                    capture_output=True, text=True).stdout.strip())
            # A second FOLLOW is nothing either.
            PROXY.send(MSG_DOCKER_EVENTS_FOLLOW, 0, b"")
            self.assertEqual(events_within(3), [])
        finally:
            for cid in ids:
                subprocess.run(["docker", "rm", "-f", cid],
                               capture_output=True)


if __name__ == "__main__":
    unittest.main()
