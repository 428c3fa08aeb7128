#!/usr/bin/env python3
"""dockerd-proxy's archive GET when its reader stops at the tar's end.
The archive worker reads Docker's tar up to its two end-of-archive
blocks and closes the pipe, often before Docker has closed its
connection: that is a whole archive, and the proxy must answer DONE.
Only a reader gone while more of the tar was due is "the reader went
away".

The window is short (between a splice(2) that finds Docker's socket
empty and the poll(2) that asks why), so the proxy runs under strace,
which holds each poll 100 ms: the reader's close then always lands in
it.  Against the real proxy (jailed, seccomp kill) and dockerd, standing
in for managerd (test_proxy_ops.py's fixture).  Run as root; skips (77)
otherwise, or without strace."""

import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import test_proxy_ops as ops  # noqa: E402
from test_proxy_ops import (ARCHIVE_KIND_DIR, ARCHIVE_WANT_TREE,  # noqa: E402
                            ERR_BACKEND, MSG_DOCKER_DONE, Proxy)

PROXY = None
BLOCK = 512
HOLD_POLL = ["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=poll",
             "-e", "inject=poll:delay_enter=100000"]
# More than the proxy's 1 MiB pipe: some of it is still due when the
# early reader closes.
BIG = 4 * 1024 * 1024


def setUpModule():
    global PROXY
    PROXY = Proxy(wrapper=HOLD_POLL)


def tearDownModule():
    ops.stop_module_proxy(PROXY)


def read_to_tar_end(fd, data):
    """The archive worker's way: headers and data up to the two zero
    blocks, then close, whatever may follow."""
    buf = b""
    offset = zeros = 0

    def need(n):
        nonlocal buf
        while len(buf) < n:
            chunk = os.read(fd, 65536)
            if not chunk:
                return False
            buf += chunk
        return True

    while zeros < 2 and need(offset + BLOCK):
        block = buf[offset:offset + BLOCK]
        offset += BLOCK
        if block == b"\0" * BLOCK:
            zeros += 1
            continue
        size = int(block[124:136].split(b"\0")[0].strip() or b"0", 8)
        offset += (size + BLOCK - 1) // BLOCK * BLOCK
    data.append(buf)
    os.close(fd)


class TarEnd(ops.OneSandbox):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        code, _, err = PROXY.sh(
            cls.sid, "cd /workspace && echo v1 > plan.txt && mkdir d big && "
            "printf '\\303\\251\\377' > \"d/$(printf 'caf\\303\\251')\" && "
            "head -c 70000 /dev/urandom > d/r && "
            "head -c %d /dev/urandom > big/b" % BIG)
        assert code == 0, err

    def test_reader_stops_at_the_end(self):
        """Each GET of a tree, read to its end blocks and closed at once,
        is DONE, and what was read is the whole tree."""
        for path, names in (("/workspace/d", {"d", "d/café", "d/r"}),
                            ("/workspace/.", None)) * 5:
            stat, error, data, mtype = PROXY.archive_get(
                self.sid, path, ARCHIVE_WANT_TREE, reader=read_to_tar_end)
            self.assertEqual(stat[0], ARCHIVE_KIND_DIR)
            self.assertEqual((mtype, error), (MSG_DOCKER_DONE, None), path)
            members = ops.tar_members(data)
            if names is not None:
                self.assertEqual(set(members), names)
            else:
                self.assertIn("./big/b", members)
                self.assertEqual(len(members["./big/b"]), BIG)

    def test_reader_gone_early_is_an_error(self):
        """A reader that closes after one block, with most of the tar
        still to come: the reader went away."""
        def quitter(fd, data):
            data.append(os.read(fd, BLOCK))
            os.close(fd)

        stat, error, _, _ = PROXY.archive_get(
            self.sid, "/workspace/big", ARCHIVE_WANT_TREE, reader=quitter)
        self.assertEqual(stat[0], ARCHIVE_KIND_DIR)
        self.assertEqual(error, (ERR_BACKEND,
                                 "/workspace/big: the reader went away"))


if __name__ == "__main__":
    if shutil.which("strace") is None:
        print("SKIP: strace is missing (scripts/common.sh installs it)",
              file=sys.stderr)
        sys.exit(harness.SKIP)
    ops.run_module()
