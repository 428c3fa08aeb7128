#!/usr/bin/env python3
"""dockerd-proxy's primed archive PUT (ARCHIVE_PUT_PRIME): the proxy
opens the body with a pax header of its own so that Docker sets up its
unpacking before the tar comes.  Against the real proxy (jailed, seccomp
kill) and dockerd, standing in for managerd (test_proxy_ops.py's
fixture): a tar that comes late lands as it would unprimed, pax members
of its own included; a tar that never comes changes nothing.  A primed
PUT may wait (ARCHIVE_PUT_WAIT) on a file being written, managerd's tar
spool: nothing of it is read before GO, which says how much; GO 0 is no
tar at all, and a GO after the PUT's end is ignored.  (A prime with a
declared length, and GOs that lie, are test_proxy_lies.py's.)  Run as
root; skips (77) otherwise."""

import io
import os
import sys
import tarfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_proxy_ops as ops  # noqa: E402
from test_proxy_ops import MSG_DOCKER_DONE, Proxy  # noqa: E402

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


class Primed(ops.OneSandbox):

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



def spool_file():
    """An unlinked file open for both, as managerd's tar spool is."""
    return os.open("/tmp", os.O_TMPFILE | os.O_RDWR | os.O_CLOEXEC, 0o600)


class Waiting(ops.OneSandbox):

    def start(self, fd):
        """A waiting PUT of the file fd (a copy goes): its id."""
        return PROXY.request(ops.MSG_DOCKER_ARCHIVE_PUT,
                             ops.archive_put_payload(
                                 self.sid, "/workspace",
                                 PRIMED | ops.ARCHIVE_PUT_WAIT, -1), fd=fd)

    def go(self, peerid, length):
        PROXY.send(ops.MSG_DOCKER_ARCHIVE_PUT_GO, peerid, ops.p_u64(length))

    def end(self, peerid):
        mtype, payload = PROXY.next(peerid, timeout=120)
        return mtype, (ops.decode_error(payload)
                       if mtype == ops.MSG_ERROR else None)

    def test_tar_written_after_the_start(self):
        # The file is written once the PUT runs, and its offset left at
        # the end, as apid's job leaves the spool: read from its start.
        fd = spool_file()
        try:
            peerid = self.start(fd)
            time.sleep(0.2)
            name = "spöol-" + "x" * 110
            tar = pax_tar(name, b"spooled", 1600000000)
            os.write(fd, tar)
            self.go(peerid, len(tar))
            self.assertEqual(self.end(peerid), (MSG_DOCKER_DONE, None))
        finally:
            os.close(fd)
        code, out, err = PROXY.sh(self.sid, "cd /workspace && stat -c "
                                  "'%%s %%Y' '%s' && cat '%s'" % (name, name))
        self.assertEqual((code, out), (0, "7 1600000000\nspooled"), err)

    def test_go_before_the_container_check(self):
        # GO right behind the PUT, before the proxy has looked at the
        # container: the same.
        tar = ops.make_tar([("early.txt", b"early", 1000)])
        fd = spool_file()
        try:
            os.write(fd, tar)
            peerid = self.start(fd)
            self.go(peerid, len(tar))
            self.assertEqual(self.end(peerid), (MSG_DOCKER_DONE, None))
        finally:
            os.close(fd)
        code, out, err = PROXY.sh(self.sid, "cat /workspace/early.txt")
        self.assertEqual((code, out), (0, "early"), err)

    def test_go_zero_reads_nothing(self):
        # GO 0: the file, whatever it holds, is not read.
        code, _, err = PROXY.sh(self.sid, "echo old > /workspace/kept")
        self.assertEqual(code, 0, err)
        tar = ops.make_tar([("kept", b"overwritten", 1000)])
        fd = spool_file()
        try:
            os.write(fd, tar)
            peerid = self.start(fd)
            time.sleep(0.1)
            self.go(peerid, 0)
            self.assertEqual(self.end(peerid), (MSG_DOCKER_DONE, None))
            # Over: a GO on its way then is ignored, the proxy goes on.
            self.go(peerid, len(tar))
        finally:
            os.close(fd)
        code, out, err = PROXY.sh(self.sid, "cat /workspace/kept; "
                                  "ls -A /workspace | grep -ci pax")
        self.assertEqual(out, "old\n0\n", err)

    def test_go_longer_than_the_file(self):
        # A length the file does not hold: the tar is cut, Docker gets
        # no end, and the old file stays.
        tar = ops.make_tar([("cut.txt", b"c" * 5000, 1000)])
        fd = spool_file()
        try:
            os.write(fd, tar)
            peerid = self.start(fd)
            self.go(peerid, len(tar) + 512)
            mtype, error = self.end(peerid)
        finally:
            os.close(fd)
        self.assertEqual(mtype, ops.MSG_ERROR)
        self.assertIn("the tar ended after %d of %d bytes" %
                      (len(tar), len(tar) + 512), error[1])


def main():
    ops.run_module()


if __name__ == "__main__":
    main()
