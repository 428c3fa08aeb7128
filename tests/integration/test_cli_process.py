"""The process verbs of the CLI and the process tools of agent-sandbox-mcp
against a real server (docs/cli.md, docs/mcp.md): run -d, ps, logs with
-f and --after, kill and kill --delete, attach with stdin from a pipe,
shell driven in a pty (its window size, a resize, its exit status, its
process deleted afterwards, the terminal restored), and the four MCP tools
with the output tool's wait and its next `after`."""

import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import test_mcp  # noqa: E402

CLI = harness.CLI
PROC_ID = re.compile(r"^proc_[0-9a-f]{16}$")
SHARED = {}


def setUpModule():
    SHARED["server"] = harness.SandboxServer().start()
    SHARED["sb"] = SHARED["server"].create()["id"]


def tearDownModule():
    SHARED["server"].cleanup()


class Case(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = SHARED["server"]
        cls.sb = SHARED["sb"]

    def env(self):
        return harness.cli_env(self.server, TERM="xterm")

    def cli(self, *args, stdin=None, timeout=60):
        return harness.run_cli(self.server, *args, stdin=stdin,
                               env=self.env(), timeout=timeout)

    def processes(self):
        status, doc = self.server.api(
            "GET", "/v1/sandboxes/%s/processes" % self.sb)
        self.assertEqual(status, 200)
        return {p["id"]: p for p in doc["processes"]}


class Verbs(Case):
    def test_run_ps_logs_kill(self):
        rc, out, err = self.cli("run", "-d", self.sb, "--", "sh", "-c",
                                "echo out1; echo err1 >&2; sleep 300")
        self.assertEqual(rc, 0, err)
        pid = out.decode().strip()
        self.assertRegex(pid, PROC_ID)
        rc, out, err = self.cli("ps", self.sb)
        self.assertEqual(rc, 0, err)
        self.assertIn(pid, out.decode())
        self.assertIn("running", out.decode())
        deadline = time.time() + 20
        while self.processes()[pid]["output_bytes"] < 10:
            self.assertLess(time.time(), deadline)
            time.sleep(0.1)
        rc, out, err = self.cli("logs", self.sb, pid)
        self.assertEqual((rc, out), (0, b"out1\n"), err)
        self.assertIn("err1", err)
        # After the first event (stdout's or stderr's, as Docker
        # interleaved them): only the other one.
        first = json.loads(self.server.request(
            "GET", "/v1/sandboxes/%s/processes/%s/output" % (self.sb, pid),
            headers=harness.AUTH)[2].splitlines()[0])
        rc, out, err = self.cli("logs", "--after", str(first["seq"]),
                                self.sb, pid)
        self.assertEqual(rc, 0, err)
        if first["type"] == "stdout":
            self.assertEqual(out, b"")
            self.assertIn("err1", err)
        else:
            self.assertEqual(out, b"out1\n")
            self.assertNotIn("err1", err)
        rc, out, err = self.cli("kill", self.sb, pid)
        self.assertEqual(rc, 0, err)
        rc, out, err = self.cli("logs", "-f", self.sb, pid, timeout=30)
        self.assertEqual(out, b"out1\n")
        self.assertEqual(rc, 128 + signal.SIGTERM, err)
        self.assertEqual(self.processes()[pid]["status"], "killed")
        rc, out, err = self.cli("kill", "--delete", self.sb, pid)
        self.assertEqual(rc, 0, err)
        self.assertNotIn(pid, self.processes())

    def test_logs_follow_exit_status(self):
        rc, out, err = self.cli("run", "-d", self.sb, "--", "sh", "-c",
                                "printf 'a\\377b'; sleep 1; exit 9")
        pid = out.decode().strip()
        rc, out, err = self.cli("logs", "-f", self.sb, pid, timeout=30)
        self.assertEqual((rc, out), (9, b"a\xffb"), err)
        self.cli("kill", "--delete", self.sb, pid)

    def test_attach_with_stdin_from_a_pipe(self):
        rc, out, err = self.cli("run", "-d", "-i", self.sb, "--", "cat")
        self.assertEqual(rc, 0, err)
        pid = out.decode().strip()
        payload = b"through attach\n" + bytes(range(256))
        rc, out, err = self.cli("attach", self.sb, pid, stdin=payload,
                                timeout=30)
        # The pipe's end closed cat's stdin: it ended, attach with it.
        self.assertEqual(rc, 0, err)
        self.assertEqual(out, payload)
        self.cli("kill", "--delete", self.sb, pid)

    def test_usage_errors(self):
        for args in (["run", "-d"], ["logs", self.sb], ["kill"],
                     ["logs", "--after", "-1", self.sb, "proc_x"],
                     ["kill", self.sb, "proc_0000000000000000", "SEGV"]):
            rc, out, err = self.cli(*args)
            self.assertEqual(rc, 2, (args, err))
        rc, out, err = self.cli("logs", self.sb, "proc_0000000000000000")
        self.assertEqual(rc, 1, err)
        self.assertIn("not found", err)


class Shell(Case):
    def read_until(self, fd, needle, timeout=20):
        data = b""
        deadline = time.time() + timeout
        while needle not in data:
            left = deadline - time.time()
            self.assertGreater(left, 0, data[-300:])
            r, _, _ = select.select([fd], [], [], left)
            if r:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                data += chunk
        return data

    def test_shell_in_a_pty(self):
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ,
                    struct.pack("HHHH", 33, 101, 0, 0))
        before = termios.tcgetattr(slave)
        known = set(self.processes())
        p = subprocess.Popen([CLI, "shell", self.sb], stdin=slave,
                             stdout=slave, stderr=slave, env=self.env(),
                             start_new_session=True)
        try:
            os.write(master, b"stty size; echo MARK1\n")
            self.read_until(master, b"33 101\r\nMARK1")
            # Its shell runs as a process of the sandbox, on a tty.
            mine = [q for i, q in self.processes().items()
                    if i not in known]
            self.assertEqual(len(mine), 1)
            self.assertTrue(mine[0]["tty"])
            fcntl.ioctl(slave, termios.TIOCSWINSZ,
                        struct.pack("HHHH", 44, 120, 0, 0))
            p.send_signal(signal.SIGWINCH)
            time.sleep(0.5)
            os.write(master, b"stty size; echo MARK2\n")
            self.read_until(master, b"44 120\r\nMARK2")
            os.write(master, b"exit 3\n")
            self.assertEqual(p.wait(30), 3)
            self.assertEqual(termios.tcgetattr(slave), before)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            os.close(master)
            os.close(slave)
        # shell deletes its process when it ends.
        deadline = time.time() + 10
        while set(self.processes()) - known:
            self.assertLess(time.time(), deadline)
            time.sleep(0.2)


class McpTools(Case):
    def setUp(self):
        test_mcp.SERVER = self.server
        self.mcp = test_mcp.Mcp()
        self.mcp.initialize()
        self.addCleanup(self.mcp.close)

    def test_start_output_list_kill(self):
        doc = json.loads(self.mcp.ok(
            "sandbox_process_start", sandbox_id=self.sb,
            command="for i in 1 2 3; do echo n$i; sleep 0.3; done; exit 4",
            client_id="mcp-1"))
        pid = doc["id"]
        self.assertRegex(pid, PROC_ID)
        listed = json.loads(self.mcp.ok("sandbox_process_list",
                                        sandbox_id=self.sb))
        self.assertIn(pid, json.dumps(listed))
        text, after, status = "", 0, None
        deadline = time.time() + 30
        while status in (None, "running"):
            self.assertLess(time.time(), deadline)
            out = json.loads(self.mcp.ok(
                "sandbox_process_output", sandbox_id=self.sb,
                process_id=pid, after=after, wait_seconds=2))
            for ev in out["events"]:
                if ev.get("type") in ("stdout", "stderr"):
                    text += ev["text"]
            after = out["next_after"]
            status = out.get("status")
        self.assertEqual(text, "n1\nn2\nn3\n")
        self.assertEqual(status, "exited")
        self.assertEqual(out["exit_code"], 4)
        # Nothing after the end.
        out = json.loads(self.mcp.ok(
            "sandbox_process_output", sandbox_id=self.sb, process_id=pid,
            after=after))
        self.assertEqual([e for e in out["events"]
                          if e.get("type") in ("stdout", "stderr")], [])
        self.mcp.ok("sandbox_process_kill", sandbox_id=self.sb,
                    process_id=pid, delete=True)
        self.assertNotIn(pid, self.processes())

    def test_kill_and_errors(self):
        doc = json.loads(self.mcp.ok(
            "sandbox_process_start", sandbox_id=self.sb,
            command="sleep 300"))
        self.mcp.ok("sandbox_process_kill", sandbox_id=self.sb,
                    process_id=doc["id"], signal="KILL")
        deadline = time.time() + 20
        while self.processes()[doc["id"]]["status"] == "running":
            self.assertLess(time.time(), deadline)
            time.sleep(0.2)
        self.assertEqual(self.processes()[doc["id"]]["status"], "killed")
        error, text = self.mcp.call("sandbox_process_output",
                                    sandbox_id=self.sb,
                                    process_id="proc_0000000000000000")
        self.assertTrue(error)
        self.assertIn("not found", text)
        error, text = self.mcp.call("sandbox_process_output",
                                    sandbox_id=self.sb,
                                    process_id=doc["id"], wait_seconds=99)
        self.assertTrue(error)
        self.mcp.ok("sandbox_process_kill", sandbox_id=self.sb,
                    process_id=doc["id"], delete=True)


if __name__ == "__main__":
    harness.require_root_and_docker()
    unittest.main()
