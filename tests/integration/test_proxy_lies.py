"""dockerd-proxy against a lying managerd, and a sandbox against the host:
this test stands in for managerd on the real proxy's socketpair (jailed,
seccomp kill, the real dockerd behind it; test_proxy_ops.py's fixture),
sends creates and execs with hostile fields, and checks that each is
refused and that nothing changed on the host.  Run as root; skips (77)
otherwise."""

import io
import math
import os
import subprocess
import sys
import tarfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_proxy_ops as ops  # noqa: E402
from test_proxy_ops import (MSG_DOCKER_DONE, MSG_ERROR, Proxy,  # noqa: E402
                            container, decode_error, describe, new_id,
                            volume)

PROXY = None
MIB = 1 << 20


def setUpModule():
    global PROXY
    PROXY = Proxy()


def tearDownModule():
    ops.stop_module_proxy(PROXY)


def our_objects(sid):
    """What Docker holds for sid: container, init container, volume."""
    name = "agent-sandbox-" + sid
    return (container(name), container(name + "-init"),
            volume(name + "-workspace"))


class LyingCreates(unittest.TestCase):
    """Each create is refused before Docker is asked for anything."""

    def refused(self, proxy=None, **kw):
        sid = new_id()
        mtype, payload = (proxy or PROXY).create(sid, **kw)
        self.assertEqual(mtype, MSG_ERROR, describe(mtype, payload))
        kind, text = decode_error(payload)
        self.assertEqual(our_objects(sid), (None, None, None))
        return kind, text

    def test_cpus_docker_would_not_limit(self):
        # 0.000001 CPU is NanoCpus 1000: a CFS quota of 0, no limit at all.
        for cpus in (0.000001, 0.0099999, 0.0, -1.0, math.nan, math.inf,
                     -math.inf):
            kind, text = self.refused(cpus=cpus)
            self.assertEqual(kind, ops.ERR_INVALID_REQUEST)
            self.assertIn("cpus out of range", text)

    def test_cpus_over_the_operator_maximum(self):
        for cpus in (4.01, 64.0, 1e300):
            kind, text = self.refused(cpus=cpus)
            self.assertIn("cpus out of range", text)

    def test_memory_and_pids_over_the_operator_maximum(self):
        for kw in ({"memory_mb": 4097}, {"memory_mb": 1 << 40},
                   {"memory_mb": 5}, {"memory_mb": -1},
                   {"pids_limit": 4097}, {"pids_limit": 0},
                   {"pids_limit": -1}):
            kind, text = self.refused(**kw)
            self.assertIn("out of range", text, kw)

    def test_env_keys_runtimes_read(self):
        for key in ("NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES",
                    "AMD_VISIBLE_DEVICES"):
            kind, text = self.refused(env={"OK": "1", key: "all"})
            self.assertIn("an environment key that container runtimes read",
                          text)

    def test_network_the_operator_refused(self):
        proxy = Proxy(allow_network=False)
        try:
            kind, text = self.refused(proxy, network=True)
            self.assertIn("network access are not allowed", text)
        finally:
            proxy.stop()

    def test_least_cpu_is_a_real_limit(self):
        # The floor itself is allowed and is a 1 ms quota, not unlimited.
        sid = new_id()
        mtype, payload = PROXY.create(sid, cpus=0.01)
        self.assertEqual(mtype, MSG_DOCKER_DONE, describe(mtype, payload))
        try:
            host = container("agent-sandbox-" + sid)["HostConfig"]
            self.assertEqual(host["NanoCpus"], 10000000)
            code, out, _ = PROXY.sh(sid, "cat /sys/fs/cgroup/cpu.max "
                                    "2>/dev/null || cat "
                                    "/sys/fs/cgroup/cpu/cpu.cfs_quota_us")
            self.assertEqual(code, 0)
            self.assertEqual(out.split()[0], "1000", out)
        finally:
            self.assertEqual(PROXY.destroy(sid)[0], MSG_DOCKER_DONE)


class OneSandbox(ops.OneSandbox):
    """A sandbox with a writable root for the class's tests."""

    @classmethod
    def create_options(cls):
        return {"read_only": False}


class LyingArchiveWrites(OneSandbox):
    """Archive writes go into /workspace and nowhere else."""

    def test_outside_the_workspace_refused(self):
        tar = ops.make_tar([("planted", b"x", 1000)])
        for path in ("/", "/etc", "/tmp", "/workspace/..",
                     "/workspace/../etc", "/workspace/", "/workspace/sub",
                     "//workspace", "/workspace/."):
            mtype, error = PROXY.archive_put_pipe(self.sid, path, tar)
            self.assertEqual(mtype, MSG_ERROR, path)
            self.assertEqual(error, (ops.ERR_FORBIDDEN,
                                     "archive writes go to /workspace only"),
                             path)
        code, out, _ = PROXY.sh(self.sid, "find / -name planted -xdev "
                                "2>/dev/null; ls /workspace")
        self.assertEqual((code, out), (0, ""))
        # The one place it may go.
        mtype, error = PROXY.archive_put_pipe(self.sid, "/workspace", tar)
        self.assertEqual((mtype, error), (MSG_DOCKER_DONE, None))
        code, out, _ = PROXY.sh(self.sid, "cat /workspace/planted")
        self.assertEqual((code, out), (0, "x"))

    def put_is_fatal(self, path, flags, length):
        """An ARCHIVE_PUT a fresh proxy must die of."""
        proxy = Proxy()
        try:
            rfd, wfd = os.pipe()
            os.close(wfd)
            proxy.request(ops.MSG_DOCKER_ARCHIVE_PUT, ops.archive_put_payload(
                self.sid, path, flags, length), fd=rfd)
            os.close(rfd)
            self.assertEqual(proxy.wait_exit(), 1)
            self.assertIn("bad DOCKER_ARCHIVE_PUT message from managerd",
                          proxy.log_text())
        finally:
            if proxy.proc.poll() is None:
                proxy.stop()

    def test_relative_path_is_a_lie(self):
        # The codec takes absolute paths only: anything else is fatal.
        self.put_is_fatal("workspace", 0, -1)

    def test_primed_with_a_length_is_a_lie(self):
        # A prime adds bytes to the body: only a tar of unknown length;
        # and no flag the codec does not know.
        self.put_is_fatal("/workspace", ops.ARCHIVE_PUT_PRIME, 1024)
        self.put_is_fatal("/workspace", 0x08, -1)
        # A wait is for GO's length: primed only, and of a file (this
        # is a pipe).
        self.put_is_fatal("/workspace", ops.ARCHIVE_PUT_WAIT, -1)
        self.put_is_fatal("/workspace", ops.ARCHIVE_PUT_PRIME |
                          ops.ARCHIVE_PUT_WAIT, -1)

    def go_is_fatal(self, flags):
        """A GO for a PUT of flags that runs and waits for none."""
        proxy = Proxy()
        fd = os.open("/tmp", os.O_TMPFILE | os.O_RDWR | os.O_CLOEXEC, 0o600)
        rfd, wfd = os.pipe()
        try:
            wait = flags & ops.ARCHIVE_PUT_WAIT
            peerid = proxy.request(ops.MSG_DOCKER_ARCHIVE_PUT,
                                   ops.archive_put_payload(
                                       self.sid, "/workspace", flags, -1),
                                   fd=fd if wait else rfd)
            if wait:
                # The first GO is its own (of nothing); the second lies.
                proxy.send(ops.MSG_DOCKER_ARCHIVE_PUT_GO, peerid,
                           ops.p_u64(0))
            proxy.send(ops.MSG_DOCKER_ARCHIVE_PUT_GO, peerid, ops.p_u64(1))
            self.assertEqual(proxy.wait_exit(), 1)
            self.assertIn("bad DOCKER_ARCHIVE_PUT_GO message from managerd: "
                          "that PUT waits for no GO", proxy.log_text())
        finally:
            for f in (fd, rfd, wfd):
                os.close(f)
            if proxy.proc.poll() is None:
                proxy.stop()

    def test_go_for_no_waiting_put_is_a_lie(self):
        # A primed PUT of a pipe reads it: no GO is for it; nor a second
        # GO for a waiting one.
        self.go_is_fatal(ops.ARCHIVE_PUT_PRIME)
        self.go_is_fatal(ops.ARCHIVE_PUT_PRIME | ops.ARCHIVE_PUT_WAIT)


def hostile_tar(members):
    """members: [(name, kind, arg, mode, uid)], kind file/dir/sym/hard/chr/
    fifo; arg is a file's bytes or a link's target."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) \
            as tar:
        for name, kind, arg, mode, uid in members:
            info = tarfile.TarInfo(name)
            info.uid = info.gid = uid
            info.mode = mode
            info.mtime = 1700000000
            if kind == "file":
                info.size = len(arg)
                tar.addfile(info, io.BytesIO(arg))
                continue
            info.type = {"dir": tarfile.DIRTYPE, "sym": tarfile.SYMTYPE,
                         "hard": tarfile.LNKTYPE, "chr": tarfile.CHRTYPE,
                         "fifo": tarfile.FIFOTYPE}[kind]
            if kind == "chr":
                info.devmajor, info.devminor = 1, 3   # /dev/null
            info.linkname = arg or ""
            tar.addfile(info)
    return buf.getvalue()


class LyingArchiveContents(OneSandbox):
    """Whatever the tar holds, Docker (which extracts as root) gets only
    what a sandbox user could have made in /workspace: each hostile
    archive is refused before its member reaches Docker."""

    def refused(self, members, why):
        mtype, error = PROXY.archive_put_pipe(self.sid, "/workspace",
                                              hostile_tar(members))
        self.assertEqual(mtype, MSG_ERROR, members)
        self.assertEqual(error[0], ops.ERR_FORBIDDEN, error)
        self.assertIn("the archive is refused", error[1])
        self.assertIn(why, error[1])

    def sh(self, script):
        code, out, _ = PROXY.sh(self.sid, script)
        self.assertEqual(code, 0, script)
        return out

    def test_devices_and_fifos(self):
        self.refused([("null", "chr", None, 0o666, 0)], "a character device")
        self.refused([("p", "fifo", None, 0o644, 1000)], "a FIFO")
        self.assertEqual(self.sh("ls /workspace/null /workspace/p 2>&1 | "
                                 "grep -c 'No such file'"), "2\n")

    def test_setuid_root_file(self):
        self.refused([("rootsh", "file", b"#!/bin/sh\n", 0o4755, 0)],
                     "a setuid bit")
        self.refused([("g", "file", b"x", 0o2755, 1000)], "a setgid bit")
        self.assertEqual(self.sh("ls /workspace/rootsh /workspace/g 2>&1 | "
                                 "grep -c 'No such file'"), "2\n")

    def test_member_under_a_symlink_it_made(self):
        for child in ("s/planted", "./s//planted", "s/sub/planted"):
            self.refused([("s", "sym", "/etc", 0o777, 1000),
                          (child, "file", b"root::0:0::/:/bin/sh\n", 0o644,
                           1000)], "goes through a symlink")
        # The symlink before the refused member went in; nothing under it.
        self.assertEqual(self.sh("ls /etc/planted /etc/sub 2>&1 | "
                                 "grep -c 'No such file'"), "2\n")

    def test_hard_links_leaving_the_tree(self):
        for target in ("../etc/shadow", "/etc/shadow",
                       "sub/../../etc/passwd"):
            self.refused([("h", "hard", target, 0o644, 1000)],
                         "hard link target is absolute")
        self.refused([("s", "sym", "/etc", 0o777, 1000),
                      ("h", "hard", "s/passwd", 0o644, 1000)],
                     "hard link target goes through a symlink")
        self.assertEqual(self.sh("test -e /workspace/h || echo none"),
                         "none\n")

    def test_names_outside(self):
        for name in ("../planted", "/etc/planted", "a/../../planted"):
            self.refused([(name, "file", b"x", 0o644, 1000)],
                         "its name is absolute")
        self.assertEqual(self.sh("find / -xdev -name planted 2>/dev/null"),
                         "")

    def test_directories_docker_would_make_as_root(self):
        # A member whose directory is not in the archive before it: Docker
        # would make the directory itself, owned by root.
        self.refused([("made/by/docker", "file", b"x", 0o644, 1000)],
                     "its directory is not a member before it")
        self.assertEqual(self.sh("test -e /workspace/made || echo none"),
                         "none\n")

    def test_extended_attributes(self):
        tar = hostile_tar([("f", "file", b"x", 0o755, 1000)])
        # A pax header with a file capability, as tarfile writes one.
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT,
                          pax_headers={}) as t:
            info = tarfile.TarInfo("capped")
            info.size = 1
            info.pax_headers = {"SCHILY.xattr.security.capability": "\x01"}
            t.addfile(info, io.BytesIO(b"x"))
        mtype, error = PROXY.archive_put_pipe(self.sid, "/workspace",
                                              buf.getvalue())
        self.assertEqual(mtype, MSG_ERROR)
        self.assertIn("extended attributes", error[1])
        self.assertEqual(PROXY.archive_put_pipe(self.sid, "/workspace",
                                                tar), (MSG_DOCKER_DONE, None))

    def test_owners_rewritten_to_the_sandbox_user(self):
        tar = hostile_tar([("owned", "dir", None, 0o755, 0),
                           ("owned/by-root", "file", b"x", 0o644, 0),
                           ("owned/other", "file", b"y", 0o640, 4242)])
        self.assertEqual(PROXY.archive_put_pipe(self.sid, "/workspace", tar),
                         (MSG_DOCKER_DONE, None))
        self.assertEqual(self.sh("stat -c %u:%g /workspace/owned "
                                 "/workspace/owned/by-root "
                                 "/workspace/owned/other"),
                         "1000:1000\n" * 3)

    def test_truncated_archive(self):
        tar = hostile_tar([("cut", "file", b"z" * 5000, 0o644, 1000)])
        mtype, error = PROXY.archive_put_pipe(self.sid, "/workspace",
                                              tar[:3000])
        self.assertEqual(mtype, MSG_ERROR)
        # Not a policy matter, nor the client's: its writer was cut off.
        self.assertEqual(error[0], ops.ERR_BACKEND, error)
        self.assertIn("truncated", error[1])


class ForeignNetwork(unittest.TestCase):
    """A network this server did not make is never joined, even when the
    operator's settings name it and it isolates its containers."""

    def test_foreign_bridge_refused(self):
        name = "foreign-" + ops.INSTANCE
        status, body = ops.docker("POST", "/networks/create", {
            "Name": name, "Driver": "bridge", "CheckDuplicate": True,
            "Options": {"com.docker.network.bridge.enable_icc": "false"},
            "Labels": {ops.TEST_LABEL: ops.INSTANCE}})
        self.assertEqual(status, 201, body)
        proxy = Proxy(network_name=name)
        try:
            kind, text = LyingCreates.refused(self, proxy, network=True)
            self.assertEqual(kind, ops.ERR_BACKEND)
            self.assertIn("network %s was not made by this server" % name,
                          text)
            status, net = ops.docker("GET", "/networks/" + name)
            self.assertEqual(net["Containers"], {})
        finally:
            proxy.stop()
            ops.docker("DELETE", "/networks/" + name)


class PolicyFromSettingsOnly(unittest.TestCase):
    """The user, runtime, network and /tmp come from the proxy's own
    settings: no message carries them any more, so none can change them."""

    def test_exec_runs_as_the_configured_user(self):
        sid = new_id()
        mtype, payload = PROXY.create(sid)
        self.assertEqual(mtype, MSG_DOCKER_DONE, describe(mtype, payload))
        try:
            code, out, _ = PROXY.sh(sid, "id -u; id -g; id -G")
            self.assertEqual((code, out), (0, "1000\n1000\n1000\n"))
            c = container("agent-sandbox-" + sid)
            self.assertEqual(c["Config"]["User"], "1000:1000")
            # Docker's default, since the settings name no runtime.
            self.assertEqual(c["HostConfig"]["Runtime"], "runc")
        finally:
            self.assertEqual(PROXY.destroy(sid)[0], MSG_DOCKER_DONE)

    def test_bad_settings_stop_the_proxy(self):
        for policy, why in (
                ({"runtime": "run/sc"}, "invalid Docker runtime name"),
                ({"network_name": "host"}, "invalid network name"),
                ({"network_name": "container:x"}, "invalid network name"),
                ({"max_cpus": 0.001}, "max_cpus out of range"),
                ({"tmp_mb": 0}, "tmp_size_mb out of range")):
            proxy = Proxy(ready=False, **policy)
            self.assertEqual(proxy.wait_exit(), 1, policy)
            self.assertIn("PROXY_CONFIG: " + why, proxy.log_text())


class LabelsAnImageBrings(unittest.TestCase):
    """Containers get their image's labels: ours are not proof of ours."""

    @classmethod
    def setUpClass(cls):
        # An image that claims to be our workspace-prep container.
        cls.image = "agent-sandbox/labelled:" + ops.INSTANCE
        cid = subprocess.run(["docker", "create", ops.IMAGE, "true"],
                             capture_output=True, text=True,
                             check=True).stdout.strip()
        try:
            subprocess.run(["docker", "commit", "--change",
                            "LABEL io.agent-sandbox.role=init",
                            "--change", "LABEL io.agent-sandbox.managed=true",
                            cid, cls.image], capture_output=True,
                           check=True)
        finally:
            subprocess.run(["docker", "rm", "-f", cid], capture_output=True)

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["docker", "rmi", "-f", cls.image],
                       capture_output=True)

    def test_sandbox_from_an_init_labelled_image_is_listed(self):
        sid = new_id()
        mtype, payload = PROXY.create(sid, image=self.image)
        self.assertEqual(mtype, MSG_DOCKER_DONE, describe(mtype, payload))
        try:
            c = container("agent-sandbox-" + sid)
            self.assertEqual(c["Config"]["Labels"]["io.agent-sandbox.role"],
                             "sandbox")
            self.assertEqual(PROXY.list().get(sid), (1, 1))
        finally:
            self.assertEqual(PROXY.destroy(sid)[0], MSG_DOCKER_DONE)

    def test_foreign_container_with_our_labels_is_not_listed(self):
        # Every label of ours, this instance's included, but a name this
        # server never gives: not a sandbox of ours.
        sid = new_id()
        labels = {"io.agent-sandbox.managed": "true",
                  "io.agent-sandbox.id": sid,
                  "io.agent-sandbox.instance": ops.INSTANCE,
                  "io.agent-sandbox.role": "sandbox",
                  ops.TEST_LABEL: ops.INSTANCE}
        status, body = ops.docker(
            "POST", "/containers/create?name=impostor-" + sid,
            {"Image": ops.IMAGE, "Cmd": ["sleep", "600"], "Labels": labels})
        self.assertEqual(status, 201, body)
        try:
            self.assertEqual(ops.docker("POST", "/containers/impostor-%s/"
                                        "start" % sid)[0], 204)
            self.assertNotIn(sid, PROXY.list())
        finally:
            ops.docker("DELETE", "/containers/impostor-%s?force=true" % sid)


class SandboxLog(unittest.TestCase):
    """A sandbox writing to its init's stdout fills no file on the host."""

    def test_100_mib_to_stdout_grows_nothing(self):
        sid = new_id()
        mtype, payload = PROXY.create(sid)
        self.assertEqual(mtype, MSG_DOCKER_DONE, describe(mtype, payload))
        try:
            c = container("agent-sandbox-" + sid)
            self.assertEqual(c["HostConfig"]["LogConfig"]["Type"], "none")
            self.assertEqual(c["LogPath"], "")
            root = docker_root()
            cdir = os.path.join(root, "containers", c["Id"])
            before = tree_bytes(cdir)
            code, _, err = PROXY.sh(sid, "dd if=/dev/zero bs=1M count=100 "
                                    "of=/proc/1/fd/1 2>&1 | tail -n 1",
                                    timeout=120.0)
            self.assertEqual(code, 0, err)
            grown = tree_bytes(cdir) - before
            print("\n  container directory grew by %d bytes" % grown,
                  file=sys.stderr)
            self.assertLess(grown, MIB)
        finally:
            self.assertEqual(PROXY.destroy(sid)[0], MSG_DOCKER_DONE)


def docker_root():
    out = subprocess.run(["docker", "info", "--format",
                          "{{.DockerRootDir}}"], capture_output=True,
                         text=True, check=True).stdout.strip()
    return out or "/var/lib/docker"


def tree_bytes(path):
    total = 0
    for top, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(top, f)).st_blocks * 512
            except FileNotFoundError:
                pass
    return total


def main():
    ops.run_module()


if __name__ == "__main__":
    main()
