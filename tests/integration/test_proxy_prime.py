#!/usr/bin/env python3
"""dockerd-proxy's primed archive PUT (ARCHIVE_PUT_PRIME): the proxy
opens the body with a pax header of its own so that Docker sets up its
unpacking before the tar comes.  Against the real proxy (jailed, seccomp
kill) and dockerd, standing in for managerd (test_proxy_ops.py's
fixture): a tar that comes late lands as it would unprimed, pax members
of its own included; a tar that never comes changes nothing.  (A prime
with a declared length is test_proxy_lies.py's.)  Run as root; skips
(77) otherwise."""

import io
import os
import sys
import tarfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_proxy_ops as ops  # noqa: E402
from test_proxy_ops import (MSG_DOCKER_DONE, Proxy, describe,  # noqa: E402
                            new_id)

PROXY = None
PRIMED = ops.ARCHIVE_PUT_NO_REPLACE | ops.ARCHIVE_PUT_PRIME


def setUpModule():
    global PROXY
    PROXY = Proxy()


def tearDownModule():
    ops.stop_module_proxy(PROXY)


def pax_tar(name, data, mtime):
    """One file in pax format: a name that needs a pax header of its own."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        info = tarfile.TarInfo(name)
        info.size, info.mtime, info.mode = len(data), mtime, 0o640
        info.uid = info.gid = 1000
        t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class Primed(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.sid = new_id()
        mtype, payload = PROXY.create(cls.sid)
        assert mtype == MSG_DOCKER_DONE, describe(mtype, payload)

    @classmethod
    def tearDownClass(cls):
        PROXY.destroy(cls.sid)

    def put_late(self, tar, delay):
        """A primed PUT whose tar comes delay seconds after the request."""
        rfd, wfd = os.pipe()

        def writer():
            time.sleep(delay)
            try:
                if tar:
                    os.write(wfd, tar)
            finally:
                os.close(wfd)
        t = threading.Thread(target=writer)
        t.start()
        try:
            return PROXY.archive_put_fd(self.sid, "/workspace", rfd, -1,
                                        PRIMED)
        finally:
            t.join()

    def test_late_tar_lands_whole(self):
        plain = ops.make_tar([("plain.txt", b"plain bytes", 1000)])
        self.assertEqual(self.put_late(plain, 0.3), (MSG_DOCKER_DONE, None))
        code, out, err = PROXY.sh(self.sid, "cat /workspace/plain.txt")
        self.assertEqual((code, out), (0, "plain bytes"), err)
        # A member with its own pax header: its records, not the prime's.
        name = "d\u00e9j\u00e0-" + "n" * 120
        tar = pax_tar(name, b"pax bytes", 1234567890)
        self.assertEqual(self.put_late(tar, 0.3), (MSG_DOCKER_DONE, None))
        code, out, err = PROXY.sh(
            self.sid, "cd /workspace && stat -c '%%s %%Y %%a' '%s' && "
            "cat '%s'" % (name, name))
        self.assertEqual((code, out), (0, "9 1234567890 640\npax bytes"),
                         err)

    def test_no_tar_changes_nothing(self):
        code, _, err = PROXY.sh(self.sid, "echo kept > /workspace/kept")
        self.assertEqual(code, 0, err)
        self.assertEqual(self.put_late(b"", 0.3), (MSG_DOCKER_DONE, None))
        code, out, err = PROXY.sh(self.sid, "cat /workspace/kept; "
                                  "ls -A /workspace | grep -ci pax")
        self.assertEqual(out, "kept\n0\n", err)



def main():
    ops.run_module()


if __name__ == "__main__":
    main()
