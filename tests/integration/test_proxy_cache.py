#!/usr/bin/env python3
"""dockerd-proxy's cache of the containers archive calls found ours
(dockerd-proxy/container_cache.c): once a read has found a sandbox's
container, reads and writes go to its id without an inspect.  Against
the real proxy (jailed, seccomp kill) and dockerd, standing in for
managerd (test_proxy_ops.py's fixture): a container removed behind the
proxy's back is "sandbox ... not found" for a read and a write, not a
path that does not exist; a container made in its place under the same
name but not by this server is refused, never written to; a missing
path is still the path's 404 with the container cached, for GET and
HEAD; a container the proxy destroys and makes again is the new one at
once.  Run as root; skips (77) otherwise."""

import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_proxy_ops as ops  # noqa: E402
from test_proxy_ops import (ARCHIVE_WANT_FILE, ERR_FORBIDDEN,  # noqa: E402
                            ERR_NOT_FOUND, MSG_DOCKER_DONE, Proxy, docker,
                            make_tar, tar_members)

PROXY = None


def setUpModule():
    global PROXY
    PROXY = Proxy()


def tearDownModule():
    ops.stop_module_proxy(PROXY)


class Cached(ops.OneSandbox):

    def read(self, path="/workspace/f"):
        stat, error, data, _ = PROXY.archive_get(self.sid, path,
                                                 ARCHIVE_WANT_FILE, 1024)
        return error, tar_members(data) if data else {}

    def write(self, name, data):
        return PROXY.archive_put_pipe(self.sid, "/workspace",
                                      make_tar([(name, data, 1000)]))

    def make_again(self):
        mtype, payload = PROXY.create(self.sid)
        self.assertEqual(mtype, MSG_DOCKER_DONE, ops.describe(mtype,
                                                              payload))

    def setUp(self):
        self.assertEqual(self.write("f", b"first\n"), (MSG_DOCKER_DONE,
                                                        None))
        # Found ours once: cached from here on.
        self.assertEqual(self.read(), (None, {"f": b"first\n"}))

    def test_missing_path_is_still_the_paths(self):
        missing = "/workspace/no-such-file"
        error, _ = self.read(missing)
        self.assertEqual(error, (ERR_NOT_FOUND, missing + ": not found"))
        self.assertEqual(PROXY.archive_head(self.sid, missing),
                         (None, (ERR_NOT_FOUND, missing + ": not found")))

    def test_removed_behind_its_back(self):
        gone = (ERR_NOT_FOUND, "sandbox %s not found" % self.sid)
        docker("DELETE", "/containers/%s?force=true" % self.name)
        self.assertEqual(self.read(), (gone, {}))
        self.assertEqual(self.write("g", b"x"), (ops.MSG_ERROR, gone))
        # Its place taken by a container not made by this server: that
        # one is refused, and nothing is written into it.
        status, obj = docker("POST", "/containers/create?name=" +
                             self.name, {"Image": ops.IMAGE,
                                         "Cmd": ["sleep", "3600"],
                                         "Labels": {ops.TEST_LABEL:
                                                    ops.INSTANCE}})
        self.assertEqual(status, 201, obj)
        try:
            self.assertEqual(docker("POST", "/containers/%s/start" %
                                    obj["Id"])[0], 204)
            for _ in range(2):
                mtype, error = self.write("h", b"x")
                self.assertEqual((mtype, error[0]), (ops.MSG_ERROR,
                                                     ERR_FORBIDDEN))
                error, _ = self.read()
                self.assertEqual(error[0], ERR_FORBIDDEN)
        finally:
            docker("DELETE", "/containers/%s?force=true" % obj["Id"])
        # Made again by the proxy: the new container, on the workspace
        # volume that outlived the old one.
        self.make_again()
        self.assertEqual(self.read(), (None, {"f": b"first\n"}))

    def test_destroyed_and_made_again(self):
        self.assertEqual(PROXY.destroy(self.sid)[0], MSG_DOCKER_DONE)
        self.make_again()
        self.assertEqual(self.write("f", b"second\n"), (MSG_DOCKER_DONE,
                                                         None))
        self.assertEqual(self.read(), (None, {"f": b"second\n"}))

    def test_cached_reads_and_writes_go_on(self):
        for i in range(20):
            data = ("round %d at %f\n" % (i, time.time())).encode()
            self.assertEqual(self.write("f", data), (MSG_DOCKER_DONE,
                                                      None))
            self.assertEqual(self.read(), (None, {"f": data}))


if __name__ == "__main__":
    unittest.main()
