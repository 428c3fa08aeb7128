"""The agent-sandbox CLI verbs against a real server (API.md §12): the
sandbox verbs, exec with its exit status, separate and live output, cp in
both directions byte for byte with the mode kept, snapshots, rollback,
fork, and the exit statuses of API errors (1) and usage errors (2)."""

import hashlib
import json
import os
import pty
import re
import select
import stat
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

CLI = harness.CLI
SB_ID = re.compile(r"^sb_[0-9a-f]{16}$")
SNAP_ID = re.compile(r"^snap_[0-9a-f]{16}$")
MIB = 1024 * 1024


def sha256(data):
    return hashlib.sha256(data).hexdigest()


SHARED = {}


def seccomp_status(pid):
    """The Seccomp: line of /proc/PID/status: "2" under a filter."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("Seccomp:"):
                return line.split()[1]
    return None


def setUpModule():
    """One server and one sandbox (made over HTTP) for the whole module."""
    SHARED["server"] = harness.SandboxServer().start()
    SHARED["sb"] = SHARED["server"].create()["id"]


def tearDownModule():
    SHARED["server"].cleanup()


class CliCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = SHARED["server"]
        cls.sb = SHARED["sb"]

    def env(self, **extra):
        return harness.cli_env(self.server, **extra)

    def cli(self, *args, stdin=None, env=None, timeout=60):
        """Runs the CLI: (exit status, stdout bytes, stderr text)."""
        return harness.run_cli(self.server, *args, stdin=stdin, env=env,
                               timeout=timeout)

    def ok(self, *args, **kw):
        """The CLI must succeed; its stdout as text."""
        rc, out, err = self.cli(*args, **kw)
        self.assertEqual(rc, 0, (args, out, err))
        return out.decode()

    def sh(self, command, sandbox=None):
        r = self.server.exec(sandbox or self.sb, command)
        self.assertEqual(r["exit_code"], 0, (command, r))
        return r["stdout"]


class Usage(CliCase):
    def test_usage_errors_exit_2(self):
        for args in ([], ["nosuchverb"], ["create", "--bogus"],
                     ["inspect"], ["inspect", "a", "b"], ["rm"],
                     ["timeout", self.sb], ["timeout", self.sb, "x"],
                     ["exec", self.sb], ["exec", self.sb, "--"],
                     ["cp", "a", "b"], ["cp", "a:/x", "b:/y"],
                     ["cp", "onlyone"], ["create", "--env", "NOEQUALS"],
                     ["create", "--cpus", "many"], ["--bogus", "ls"]):
            rc, out, err = self.cli(*args)
            self.assertEqual(rc, 2, (args, out, err))
            self.assertIn("usage:", err, args)
            self.assertEqual(out, b"", args)

    def test_help(self):
        for args in (["help"], ["-h"], ["--help"]):
            out = self.ok(*args)
            for verb in ("create", "ls", "inspect", "rm", "timeout", "exec",
                         "cp", "snapshot", "snapshots", "rollback", "fork",
                         "snapshot-rm", "network", "network-log"):
                self.assertIn(verb, out)
        self.assertIn("usage: agent-sandbox exec", self.ok("help", "exec"))
        self.assertIn("usage: agent-sandbox cp", self.ok("cp", "--help"))

    def test_version_still_works(self):
        out = self.ok("--version")
        self.assertTrue(out.startswith("agent-sandbox "), out)

    def test_bad_key_and_unreachable_server(self):
        rc, out, err = self.cli("ls", env=self.env(
            AGENT_SANDBOX_API_KEY="wrong-key-0123456789"))
        self.assertEqual(rc, 1, err)
        self.assertIn("agent-sandbox: 401 unauthorized: ", err)
        self.assertEqual(out, b"")
        env = self.env(AGENT_SANDBOX_URL="http://127.0.0.1:%d" %
                       harness.free_port())
        rc, out, err = self.cli("ls", env=env)
        self.assertEqual(rc, 1, err)
        self.assertIn("connection_error", err)


class Sandboxes(CliCase):
    def test_create_ls_inspect_timeout_rm(self):
        rc, out, err = self.cli("create", "--memory", "64", "--ttl", "300",
                                "--env", "GREETING=hi there")
        self.assertEqual(rc, 0, err)
        sb = out.decode().strip()
        self.assertRegex(sb, SB_ID)
        self.addCleanup(self.server.api, "DELETE", "/v1/sandboxes/" + sb)
        self.assertEqual(self.sh("echo $GREETING", sb), "hi there\n")

        listing = json.loads(self.ok("ls", "--json"))
        ids = [s["id"] for s in listing["sandboxes"]]
        self.assertIn(sb, ids)
        self.assertEqual(listing, json.loads(self.ok("--json", "ls")))
        table = self.ok("ls").splitlines()
        self.assertEqual(table[0].split(),
                         ["ID", "STATUS", "IMAGE", "EXPIRES", "SOURCE",
                          "LABELS"])
        row = [line.split() for line in table if line.startswith(sb)]
        self.assertEqual(len(row), 1, table)
        self.assertEqual(row[0][1:3], ["running", harness.TEST_IMAGE])
        self.assertEqual(row[0][4], "-")

        fields = dict(line.split(": ", 1)
                      for line in self.ok("inspect", sb).splitlines())
        self.assertEqual(fields["id"], sb)
        self.assertEqual(fields["status"], "running")
        self.assertEqual(fields["memory_mb"], "64")
        self.assertEqual(fields["read_only_rootfs"], "true")
        self.assertEqual(fields["source_snapshot_id"], "-")
        doc = json.loads(self.ok("inspect", sb, "--json"))
        self.assertEqual(doc["id"], sb)
        self.assertEqual(doc["memory_mb"], 64)

        before = doc["expires_at"]
        doc = json.loads(self.ok("timeout", "--json", sb, "3000"))
        self.assertGreater(doc["expires_at"], before)
        self.assertIn(sb, self.ok("timeout", sb, "600"))
        rc, out, err = self.cli("timeout", sb, "999999999")
        self.assertEqual(rc, 1)
        self.assertIn("agent-sandbox: 400 invalid_request: ", err)

        self.assertEqual(self.ok("rm", sb), sb + "\n")
        rc, out, err = self.cli("rm", sb)
        self.assertEqual(rc, 1)
        self.assertIn("404 not_found: sandbox %s not found" % sb, err)
        rc, out, err = self.cli("inspect", sb)
        self.assertEqual(rc, 1)
        self.assertIn("404 not_found", err)

    def test_create_options_and_json(self):
        doc = json.loads(self.ok("create", "--json", "--cpus", "0.5",
                                 "--pids", "64", "--writable-rootfs"))
        self.addCleanup(self.server.api, "DELETE",
                        "/v1/sandboxes/" + doc["id"])
        self.assertEqual(doc["cpus"], 0.5)
        self.assertEqual(doc["pids_limit"], 64)
        self.assertFalse(doc["read_only_rootfs"])
        self.assertFalse(doc["network"])
        # One failed ID among good ones: the others go, the status is 1.
        rc, out, err = self.cli("rm", "sb_0000000000000000", doc["id"])
        self.assertEqual(rc, 1)
        self.assertEqual(out.decode(), doc["id"] + "\n")
        self.assertIn("404", err)

    def test_server_refusals_exit_1(self):
        rc, out, err = self.cli("create", "--cpus", "99")
        self.assertEqual(rc, 1)
        self.assertIn("agent-sandbox: 400 invalid_request: cpus must be in "
                      "(0, 4.0]", err)
        self.assertEqual(out, b"")
        rc, out, err = self.cli("create", "--memory", "1")
        self.assertEqual(rc, 1)
        self.assertIn("agent-sandbox: 422 validation_error: ", err)


class Exec(CliCase):
    def test_exit_status_and_separate_streams(self):
        rc, out, err = self.cli("exec", self.sb, "--", "sh", "-c", "exit 3")
        self.assertEqual((rc, out, err), (3, b"", ""))
        rc, out, err = self.cli("exec", self.sb, "--",
                                "echo out; echo err >&2; exit 0")
        self.assertEqual((rc, out, err), (0, b"out\n", "err\n"))
        # Without "--" too, and the exit status of the last command.
        rc, out, err = self.cli("exec", self.sb, "false")
        self.assertEqual(rc, 1)

    def test_command_forms(self):
        # One operand: a shell line; several: an argv, no shell.
        self.assertEqual(self.ok("exec", self.sb, "--", "echo $HOME"),
                         "/workspace\n")
        self.assertEqual(self.ok("exec", self.sb, "--", "printf", "%s|",
                                 "a b", "$HOME"), "a b|$HOME|")
        self.assertEqual(self.ok("exec", "--env", "A=1", "--env", "B=x y",
                                 "--workdir", "/tmp", self.sb, "--",
                                 "echo $A $B; pwd"), "1 x y\n/tmp\n")

    def test_output_streams_live_in_order(self):
        p = subprocess.Popen([CLI, "exec", self.sb, "--",
                              "echo one; echo two >&2; sleep 2; echo three"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL, env=self.env())
        try:
            start = time.time()
            ready, _, _ = select.select([p.stdout], [], [], 10)
            self.assertTrue(ready)
            first = p.stdout.readline()
            self.assertEqual(first, b"one\n")
            # It came before the command finished.
            self.assertLess(time.time() - start, 1.8)
            self.assertIsNone(p.poll())
            # The verb runs under its seccomp filter.
            self.assertEqual(seccomp_status(p.pid), "2")
            out, err = p.communicate(timeout=30)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.assertEqual(out, b"three\n")
        self.assertEqual(err, b"two\n")
        self.assertEqual(p.returncode, 0)

    def test_json_and_timeout(self):
        rc, out, err = self.cli("exec", "--json", self.sb, "--", "sh", "-c",
                                "echo hi; exit 5")
        self.assertEqual(rc, 0, err)
        doc = json.loads(out)
        self.assertEqual(sorted(doc), ["duration_ms", "exit_code", "stderr",
                                       "stdout", "timed_out", "truncated"])
        self.assertEqual((doc["stdout"], doc["exit_code"]), ("hi\n", 5))
        rc, out, err = self.cli("exec", "--timeout", "1", self.sb, "--",
                                "echo started; sleep 20")
        self.assertEqual(rc, 124, err)
        self.assertEqual(out, b"started\n")
        self.assertIn("timed out", err)

    def test_reader_of_stdout_goes_away(self):
        # exec ... | head -1: a quiet exit, 128 + SIGPIPE, as a shell
        # reports a process that SIGPIPE ended.
        p = subprocess.Popen([CLI, "exec", self.sb, "--",
                              "yes | head -n 400000"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL, env=self.env())
        try:
            self.assertEqual(p.stdout.readline(), b"y\n")
            p.stdout.close()
            err = p.stderr.read()
            p.wait(30)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            p.stderr.close()
        self.assertEqual((p.returncode, err), (141, b""))

    def test_localhost_by_name(self):
        # A name is looked up before the filter, which allows no lookup.
        env = self.env(AGENT_SANDBOX_URL="http://localhost:%d" %
                       self.server.port)
        rc, out, err = self.cli("exec", self.sb, "--", "echo by name",
                                env=env)
        self.assertEqual((rc, out, err), (0, b"by name\n", ""))

    def test_exec_errors(self):
        rc, out, err = self.cli("exec", "sb_0000000000000000", "--", "true")
        self.assertEqual(rc, 1)
        self.assertIn("agent-sandbox: 404 not_found: ", err)
        rc, out, err = self.cli("exec", self.sb, "--", "   ")
        self.assertEqual(rc, 1)
        self.assertIn("400 invalid_request: command must not be empty", err)


class Copy(CliCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="as-cli-")
        self.addCleanup(subprocess.run, ["rm", "-rf", self.dir])

    def local(self, name):
        return os.path.join(self.dir, name)

    def test_round_trip_1mib_with_mode(self):
        data = os.urandom(MIB)
        src = self.local("blob.bin")
        with open(src, "wb") as f:
            f.write(data)
        os.chmod(src, 0o751)
        self.assertEqual(self.ok("cp", src, self.sb + ":/workspace/d/b.bin"),
                         "")
        self.assertEqual(self.sh("stat -c '%a %s' d/b.bin"),
                         "751 %d\n" % MIB)
        self.assertEqual(self.sh("sha256sum d/b.bin").split()[0],
                         sha256(data))

        dst = self.local("back.bin")
        self.assertEqual(self.ok("cp", self.sb + ":d/b.bin", dst), "")
        with open(dst, "rb") as f:
            self.assertEqual(sha256(f.read()), sha256(data))
        # No temporary file is left next to it.
        self.assertEqual(sorted(os.listdir(self.dir)),
                         ["back.bin", "blob.bin"])

        # Into a directory: the source's name is kept, on both sides.
        sub = self.local("sub")
        os.mkdir(sub)
        self.ok("cp", self.sb + ":/workspace/d/b.bin", sub)
        with open(os.path.join(sub, "b.bin"), "rb") as f:
            self.assertEqual(f.read(), data)
        self.ok("cp", src, self.sb + ":/workspace/e/")
        self.assertEqual(self.sh("sha256sum e/blob.bin").split()[0],
                         sha256(data))

    def test_stdin_and_stdout(self):
        data = bytes(range(256)) * 64 + b"\0\r\n\xff"
        self.assertEqual(self.ok("cp", "-", self.sb + ":in.bin",
                                 stdin=data), "")
        self.assertEqual(self.sh("stat -c %a in.bin"), "644\n")
        rc, out, err = self.cli("cp", self.sb + ":/workspace/in.bin", "-")
        self.assertEqual(rc, 0, err)
        self.assertEqual(out, data)
        doc = json.loads(self.ok("cp", "--json", "-", self.sb + ":j.txt",
                                 stdin=b"x"))
        self.assertEqual((doc["path"], doc["size"]), ("/workspace/j.txt", 1))

    def test_directories_are_refused(self):
        rc, out, err = self.cli("cp", self.dir, self.sb + ":/workspace/x")
        self.assertEqual(rc, 1)
        self.assertIn("cp: %s is a directory; only single files can be "
                      "copied" % self.dir, err)
        self.sh("mkdir -p adir")
        rc, out, err = self.cli("cp", self.sb + ":adir", self.local("a"))
        self.assertEqual(rc, 1)
        self.assertIn("cp: %s:adir is a directory; only single files can be "
                      "copied" % self.sb, err)
        self.assertEqual(os.listdir(self.dir), [])

    def test_failed_download_leaves_nothing(self):
        dst = self.local("keep.txt")
        with open(dst, "w") as f:
            f.write("old")
        os.chmod(dst, 0o600)
        rc, out, err = self.cli("cp", self.sb + ":/workspace/missing", dst)
        self.assertEqual(rc, 1)
        self.assertIn("404 not_found", err)
        self.assertEqual(os.listdir(self.dir), ["keep.txt"])
        with open(dst) as f:
            self.assertEqual(f.read(), "old")
        # A successful one replaces it and keeps its mode.
        self.sh("printf new > new.txt")
        self.ok("cp", self.sb + ":new.txt", dst)
        with open(dst) as f:
            self.assertEqual(f.read(), "new")
        self.assertEqual(stat.S_IMODE(os.stat(dst).st_mode), 0o600)

    def test_interrupted_download_leaves_nothing(self):
        self.sh("head -c 268435456 /dev/zero > big.bin")
        self.addCleanup(self.sh, "rm -f big.bin")
        p = subprocess.Popen([CLI, "cp", self.sb + ":big.bin",
                              self.local("big.bin")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL, env=self.env())
        try:
            # Wait for the temporary file, then interrupt.
            deadline = time.time() + 20
            while not os.listdir(self.dir) and time.time() < deadline \
                    and p.poll() is None:
                time.sleep(0.01)
            if p.poll() is not None:
                self.skipTest("the download finished before the signal")
            p.terminate()
            p.communicate(timeout=30)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        if p.returncode == 0:
            self.skipTest("the download finished before the signal")
        self.assertEqual(p.returncode, 128 + 15)
        self.assertEqual(os.listdir(self.dir), [])


class Progress(CliCase):
    """Long transfers show their progress when stderr is a terminal."""

    def cp_on_tty(self, *args):
        master, slave = pty.openpty()
        try:
            p = subprocess.run([CLI] + list(args), stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=slave,
                               env=self.env(), timeout=60)
            os.close(slave)
            slave = -1
            shown = b""
            while True:
                try:
                    data = os.read(master, 65536)
                except OSError:	# EIO: the terminal's other side closed
                    break
                if not data:
                    break
                shown += data
        finally:
            if slave != -1:
                os.close(slave)
            os.close(master)
        return p.returncode, shown.decode("utf-8", "replace")

    def test_progress_on_a_terminal_only(self):
        d = tempfile.mkdtemp(prefix="as-cli-")
        self.addCleanup(subprocess.run, ["rm", "-rf", d])
        src = os.path.join(d, "big.bin")
        with open(src, "wb") as f:
            f.write(os.urandom(4 * MIB))
        rc, shown = self.cp_on_tty("cp", src, self.sb + ":/workspace/p.bin")
        self.assertEqual(rc, 0, shown)
        self.assertIn("%d / %d bytes" % (4 * MIB, 4 * MIB), shown)
        rc, shown = self.cp_on_tty("cp", self.sb + ":p.bin",
                                   os.path.join(d, "back.bin"))
        self.assertEqual(rc, 0, shown)
        self.assertIn("%d / %d bytes" % (4 * MIB, 4 * MIB), shown)
        # Not a terminal: nothing but errors on stderr.
        rc, out, err = self.cli("cp", src, self.sb + ":/workspace/q.bin")
        self.assertEqual((rc, err), (0, ""))


class Snapshots(CliCase):
    @classmethod
    def setUpClass(cls):
        # A workspace of its own: rollback is checked against all of it.
        cls.server = SHARED["server"]
        cls.sb = cls.server.create()["id"]

    @classmethod
    def tearDownClass(cls):
        cls.server.api("DELETE", "/v1/sandboxes/" + cls.sb)

    def test_snapshot_rollback_fork_rm(self):
        self.sh("echo original > state.txt")
        snap = self.ok("snapshot", self.sb, "--name", "before").strip()
        self.assertRegex(snap, SNAP_ID)
        self.addCleanup(self.server.api, "DELETE", "/v1/snapshots/" + snap)

        listing = json.loads(self.ok("snapshots", "--json"))
        mine = [s for s in listing["snapshots"] if s["id"] == snap]
        self.assertEqual(len(mine), 1, listing)
        self.assertEqual((mine[0]["name"], mine[0]["sandbox_id"]),
                         ("before", self.sb))
        table = self.ok("snapshots", "--sandbox", self.sb).splitlines()
        self.assertEqual(table[0].split(),
                         ["ID", "SANDBOX", "NAME", "SIZE", "CREATED"])
        self.assertTrue(any(line.startswith(snap) for line in table), table)
        self.assertEqual(json.loads(self.ok(
            "snapshots", "--json", "--sandbox", "sb_0000000000000000")),
            {"snapshots": []})

        self.sh("echo changed > state.txt; touch extra")
        out = self.ok("rollback", self.sb, snap)
        self.assertIn(snap, out)
        self.assertEqual(self.sh("cat state.txt; ls"),
                         "original\nstate.txt\n")

        doc = json.loads(self.ok("fork", snap, "--ttl", "120", "--json"))
        self.addCleanup(self.server.api, "DELETE",
                        "/v1/sandboxes/" + doc["id"])
        self.assertRegex(doc["id"], SB_ID)
        self.assertEqual(doc["source_snapshot_id"], snap)
        self.assertEqual(self.sh("cat state.txt", doc["id"]), "original\n")
        fork = self.ok("fork", snap, "--memory", "64").strip()
        self.assertRegex(fork, SB_ID)
        self.addCleanup(self.server.api, "DELETE", "/v1/sandboxes/" + fork)

        self.assertEqual(self.ok("snapshot-rm", snap), snap + "\n")
        rc, out, err = self.cli("snapshot-rm", snap)
        self.assertEqual(rc, 1)
        self.assertIn("404 not_found: snapshot %s not found" % snap, err)
        rc, out, err = self.cli("rollback", self.sb, snap)
        self.assertEqual(rc, 1)
        self.assertIn("404 not_found", err)

    def test_snapshot_json_without_name(self):
        doc = json.loads(self.ok("--json", "snapshot", self.sb))
        self.addCleanup(self.server.api, "DELETE", "/v1/snapshots/" +
                        doc["id"])
        self.assertIsNone(doc["name"])
        self.assertEqual(doc["sandbox_id"], self.sb)
        out = json.loads(self.ok("snapshot-rm", "--json", doc["id"]))
        self.assertEqual(out, {"deleted": [doc["id"]]})


if __name__ == "__main__":
    harness.require_root_and_docker()
    if not os.access(CLI, os.X_OK):
        print("SKIP: no %s" % CLI, file=sys.stderr)
        sys.exit(harness.SKIP)
    unittest.main(verbosity=2)
