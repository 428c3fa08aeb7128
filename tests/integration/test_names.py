#!/usr/bin/env python3
"""File names are bytes: every name a container can make (UTF-8, Latin-1,
invalid UTF-8, spaces, newlines, 255-byte names, deep paths) through
write, read, list, snapshot, rollback and fork, over the real daemons
under their seccomp filters and the real dockerd.  A path in a query is
bytes (%E9 is the byte 0xe9); what JSON cannot carry comes back with
U+FFFD, as the reference decodes names.  And where writes may go through
a symlinked directory: inside /workspace yes, outside no."""

import json
import os
import sys
import unittest
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

harness.require_root_and_docker()

NAMES = [
    b"sp ace/\xc3\xbcnic\xc3\xb8de.txt",
    b"caf\xe9.txt",
    b"bad \xff\xfe",
    b"cafe\xcc\x81",
    b"new\nline",
    b"n" * 255,
    b"/".join([b"d%d" % i for i in range(60)]) + b"/f\xe9",
]


def q(name):
    return urllib.parse.quote(name, safe="")


def text(name):
    """What JSON carries for a name: UTF-8 with U+FFFD for the rest."""
    return name.decode("utf-8", "replace")


class Names(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = harness.SandboxServer().start()

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def files(self, sb):
        return "/v1/sandboxes/%s/files" % sb

    def put(self, sb, name, data):
        return self.server.api("PUT", "%s?path=%s" % (self.files(sb),
                                                      q(name)), body=data)

    def get(self, sb, name):
        status, _, data = self.server.request(
            "GET", "%s?path=%s" % (self.files(sb), q(name)),
            headers=harness.AUTH)
        return status, data

    def names_in(self, sb):
        """Every file under /workspace as the bytes the filesystem holds."""
        out = self.server.exec(sb, "cd /workspace && find . -type f "
                               "-print0 | od -An -tx1 -v")["stdout"]
        raw = bytes.fromhex("".join(out.split()))
        return sorted(n[2:] for n in raw.split(b"\0") if n)

    def check_all(self, sb, contents):
        for name, data in contents.items():
            self.assertEqual(self.get(sb, name), (200, data), name)
        self.assertEqual(self.names_in(sb), sorted(contents))

    def test_through_every_route(self):
        sb = self.server.create()["id"]
        contents = {}
        for i, name in enumerate(NAMES):
            data = b"%d:" % i + name
            status, info = self.put(sb, name, data)
            self.assertEqual(status, 200, (name, info))
            self.assertEqual(info["name"], text(name.rsplit(b"/", 1)[-1]))
            self.assertEqual(info["path"], text(b"/workspace/" + name))
            self.assertEqual(info["size"], len(data))
            contents[name] = data
        self.check_all(sb, contents)
        # Listings: one entry per name, U+FFFD where JSON needs it.
        status, doc = self.server.api("GET", "%s/list" % self.files(sb))
        self.assertEqual(status, 200)
        listed = {e["name"] for e in doc["entries"]}
        for name in NAMES:
            self.assertIn(text(name.split(b"/", 1)[0]), listed)
        status, doc = self.server.api("GET", "%s/list?path=%s" % (
            self.files(sb), q(b"sp ace")))
        self.assertEqual([e["name"] for e in doc["entries"]],
                         [text(b"\xc3\xbcnic\xc3\xb8de.txt")])
        # A snapshot, everything gone, the rollback: the same bytes.
        status, snap = self.server.api(
            "POST", "/v1/sandboxes/%s/snapshots" % sb, {"name": "odd"})
        self.assertEqual(status, 201, snap)
        self.server.exec(sb, "rm -rf /workspace/* && touch /workspace/x")
        status, doc = self.server.api(
            "POST", "/v1/sandboxes/%s/rollback" % sb,
            {"snapshot_id": snap["id"]})
        self.assertEqual(status, 200, doc)
        self.check_all(sb, contents)
        # A fork holds them too.
        status, fork = self.server.api(
            "POST", "/v1/snapshots/%s/fork" % snap["id"], {})
        self.assertEqual(status, 201, fork)
        self.check_all(fork["id"], contents)

    def test_names_the_sandbox_made(self):
        sb = self.server.create()["id"]
        self.server.exec(sb, "cd /workspace && "
                         "printf one > \"$(printf 'caf\\351')\" && "
                         "printf two > \"$(printf 'x\\377\\376y')\" && "
                         "mkdir \"$(printf 'd\\351')\" && "
                         "printf three > \"$(printf 'd\\351/in')\"")
        self.assertEqual(self.get(sb, b"caf\xe9"), (200, b"one"))
        self.assertEqual(self.get(sb, b"x\xff\xfey"), (200, b"two"))
        self.assertEqual(self.get(sb, b"d\xe9/in"), (200, b"three"))
        # A name that does not exist is a 404 whose message is JSON.
        status, doc = self.server.api("GET", "%s?path=%s" % (
            self.files(sb), q(b"nope\xff")))
        self.assertEqual(status, 404)
        self.assertEqual(doc["error"]["message"],
                         "/workspace/nope\ufffd: not found")


class Symlinks(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = harness.SandboxServer().start()

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def test_a_link_inside_the_workspace_is_followed(self):
        for ro in (True, False):
            sb = self.server.create(read_only_rootfs=ro)["id"]
            self.server.exec(sb, "mkdir -p real/deep && chmod 700 real && "
                             "ln -s real link && ln -s /workspace/real/deep "
                             "abs && ln -s /etc out && ln -s ../etc up")
            files = "/v1/sandboxes/%s/files" % sb
            for path in ("link/a", "abs/b", "link/new/c"):
                status, info = self.server.api(
                    "PUT", "%s?path=%s" % (files, path), body=b"in")
                self.assertEqual(status, 200, (path, info))
                self.assertEqual(info["path"], "/workspace/" + path)
            out = self.server.exec(sb, "cat real/a real/deep/b "
                                   "real/new/c; stat -c %a real")["stdout"]
            self.assertEqual(out, "ininin700\n")
            for path in ("out/passwd", "up/passwd"):
                status, doc = self.server.api(
                    "PUT", "%s?path=%s" % (files, path), body=b"x")
                self.assertEqual(status, 400, (path, doc))
                self.assertEqual(doc["error"]["message"],
                                 "writes are limited to files under "
                                 "/workspace")
            self.server.api("DELETE", "/v1/sandboxes/" + sb)


if __name__ == "__main__":
    unittest.main(verbosity=2)
