"""The foundation against a real dockerd: health end to end, the process
split, seccomp on every daemon, confinement, supervision, and Docker going
away.  Run as root; skips (77) otherwise."""

import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402


class DockerForwarder:
    """A stand-in Docker socket that relays to the real one and records the
    pid of every process that connects (SO_PEERCRED)."""

    def __init__(self, path):
        self.path = path
        self.peer_pids = []
        self.conns = []
        self.lock = threading.Lock()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(64)
        self.running = True
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while self.running:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            cred = client.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                     12)
            pid = int.from_bytes(cred[0:4], sys.byteorder)
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(harness.DOCKER_SOCKET)
            with self.lock:
                self.peer_pids.append(pid)
                self.conns += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b),
                                 daemon=True).start()

    @staticmethod
    def _pump(src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def stop(self):
        """Like dockerd going down: the socket disappears, links break."""
        self.running = False
        # shutdown() wakes the thread blocked in accept(); close() alone
        # would leave the socket accepting.
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        with self.lock:
            for c in self.conns:
                try:
                    c.close()
                except OSError:
                    pass


class HealthAndRouting(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = harness.Server().start()

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def test_healthz_reaches_docker(self):
        status, headers, body = self.server.request("GET", "/healthz")
        self.assertEqual(status, 200, body)
        self.assertEqual(headers["content-type"], "application/json")
        doc = json.loads(body)
        self.assertEqual(doc["status"], "ok")
        self.assertEqual(doc["backend"], "docker")
        self.assertRegex(doc["version"], r"^\d+\.\d+\.\d+")
        # Compact rendering, as the reference does.
        self.assertNotIn(b": ", body)

    def test_healthz_needs_no_key(self):
        status, _, _ = self.server.request(
            "GET", "/healthz", headers={"Authorization": "Bearer wrong"})
        self.assertEqual(status, 200)

    def test_keep_alive(self):
        import http.client
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port,
                                          timeout=10)
        try:
            for _ in range(3):
                conn.request("GET", "/healthz")
                resp = conn.getresponse()
                self.assertEqual(resp.status, 200)
                resp.read()
                self.assertFalse(resp.will_close)
        finally:
            conn.close()

    def test_unknown_route_is_404_envelope(self):
        for path in ("/nope", "/", "/healthz/extra", "/v1/unknown",
                     "/healthz%2fx", "/%00", "//healthz"):
            status, headers, body = self.server.request("GET", path)
            self.assertEqual(status, 404, path)
            self.assertEqual(headers["content-type"], "application/json")
            self.assertEqual(json.loads(body), {
                "error": {"code": "not_found", "message": "Not Found"}})

    def test_wrong_method_is_405(self):
        status, headers, body = self.server.request("POST", "/healthz",
                                                    body=b"")
        self.assertEqual(status, 405)
        self.assertEqual(headers["allow"], "GET")
        self.assertEqual(json.loads(body)["error"]["code"],
                         "method_not_allowed")

    def test_percent_encoded_path_matches_after_decoding(self):
        status, _, _ = self.server.request("GET", "/health%7A")
        self.assertEqual(status, 200)

    def refused_from_the_head(self, headers):
        sock = socket.create_connection(("127.0.0.1", self.server.port),
                                        timeout=10)
        try:
            sock.sendall(b"POST /v1/sandboxes HTTP/1.1\r\nHost: x\r\n"
                         b"Content-Type: application/json\r\n" + headers +
                         b"Content-Length: %d\r\n\r\n" % (8 << 20))
            reply = b""
            while b"\r\n\r\n" not in reply:
                data = sock.recv(4096)
                if not data:
                    break
                reply += data
        except socket.timeout:
            self.fail("apid waited for an 8 MiB body before answering")
        finally:
            sock.close()
        return reply

    def test_large_body_refused_before_it_is_read(self):
        # The key is checked from the head: a client without one gets its
        # 401 before any byte of the body is read; with a key, a declared
        # body over the JSON limit is refused from the head alone.
        reply = self.refused_from_the_head(b"")
        self.assertTrue(reply.startswith(b"HTTP/1.1 401 "), reply)
        self.assertIn(b"\r\nConnection: close\r\n", reply)
        reply = self.refused_from_the_head(
            b"Authorization: Bearer " + harness.TEST_KEY.encode() + b"\r\n")
        self.assertTrue(reply.startswith(b"HTTP/1.1 413 "), reply)
        # Just above the envelope's limit still gets the envelope.
        status, _, body = self.server.request(
            "POST", "/v1/sandboxes", body=b" " * (1024 * 1024 + 1),
            headers={"Authorization": "Bearer " + harness.TEST_KEY})
        self.assertEqual(status, 413)
        self.assertEqual(json.loads(body)["error"]["code"],
                         "payload_too_large")


class Separation(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = harness.Server().start()
        cls.kids = cls.server.children()

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def pids(self):
        return {"managerd": self.server.proc.pid,
                "apid": self.kids["apid"],
                "dockerd-proxy": self.kids["dockerd-proxy"],
                "archive-worker": self.kids["archive-worker"]}

    def test_spawner_keeps_only_what_starting_children_takes(self):
        # Capability numbers: DAC_OVERRIDE 1, DAC_READ_SEARCH 2, KILL 5,
        # SETGID 6, SETUID 7, SETPCAP 8, SYS_CHROOT 18, SYS_PTRACE 19 (the
        # netns-helper's), SYS_ADMIN 21.
        children = sum(1 << c for c in (1, 2, 6, 7, 8, 18, 19, 21))
        pid = self.kids["spawner"]
        st = harness.proc_status(pid)
        self.assertEqual(st["Seccomp"], "2")
        self.assertEqual(st["NoNewPrivs"], "1")
        self.assertEqual(int(st["CapEff"], 16), 1 << 5)
        self.assertEqual(int(st["CapPrm"], 16), children | 1 << 5)
        self.assertEqual(int(st["CapBnd"], 16), children)
        self.assertEqual(int(st["CapInh"], 16), 0)
        self.assertEqual(int(st["CapAmb"], 16), 0)
        # Besides stdio: its channel to managerd and the listener.
        fds = sorted(int(fd) for fd in os.listdir("/proc/%d/fd" % pid))
        above = [os.readlink("/proc/%d/fd/%d" % (pid, fd))
                 for fd in fds if fd > 2]
        self.assertEqual(len(above), 2, above)
        self.assertTrue(all(l.startswith("socket:") for l in above), above)

    def test_four_processes(self):
        # managerd's only child is the spawner, which started the others;
        # the netns-helper and the egress proxy wait for a first policy.
        self.assertEqual(harness.proc_children(self.server.proc.pid),
                         {"spawner": self.kids["spawner"]})
        self.assertEqual(sorted(self.kids),
                         ["apid", "archive-worker", "dockerd-proxy",
                          "spawner"])

    def test_every_process_runs_under_seccomp(self):
        pids = self.pids()
        pids["spawner"] = self.kids["spawner"]
        for name, pid in pids.items():
            st = harness.proc_status(pid)
            self.assertEqual(st["Seccomp"], "2", name)
            self.assertEqual(st["NoNewPrivs"], "1", name)

    def test_no_process_keeps_capabilities(self):
        for name, pid in self.pids().items():
            st = harness.proc_status(pid)
            self.assertEqual(int(st["CapEff"], 16), 0, name)
            self.assertEqual(int(st["CapPrm"], 16), 0, name)

    def test_apid_is_unprivileged_and_chrooted(self):
        pid = self.kids["apid"]
        uids = harness.proc_status(pid)["Uid"].split()
        self.assertTrue(all(int(u) != 0 for u in uids), uids)
        self.assertNotEqual(os.readlink("/proc/%d/root" % pid), "/")
        self.assertEqual(os.listdir("/proc/%d/root/" % pid), [])

    def test_archive_worker_is_unprivileged_and_chrooted(self):
        pid = self.kids["archive-worker"]
        uids = harness.proc_status(pid)["Uid"].split()
        self.assertTrue(all(int(u) != 0 for u in uids), uids)
        self.assertEqual(os.listdir("/proc/%d/root/" % pid), [])
        # It parses what sandboxes make, and links what that takes; apid
        # no longer does.
        with open("/proc/%d/maps" % pid) as f:
            self.assertIn("libarchive", f.read())

    def test_managerd_sees_only_its_data_dir(self):
        pid = self.server.proc.pid
        self.assertEqual(os.readlink("/proc/%d/root" % pid),
                         os.path.realpath(self.server.data_dir))

    def test_managerd_runs_as_its_own_user(self):
        # Not uid 0 (which could signal every root process), not apid's.
        pid = self.server.proc.pid
        st = harness.proc_status(pid)
        uids, gids = st["Uid"].split(), st["Gid"].split()
        own = pwd.getpwnam(harness.MANAGERD_USER)
        self.assertEqual(uids, [str(own.pw_uid)] * 4)
        self.assertEqual(gids, [str(own.pw_gid)] * 4)
        self.assertEqual(st["Groups"].split(), [str(own.pw_gid)])
        apid = harness.proc_status(self.kids["apid"])["Uid"].split()[0]
        self.assertNotEqual(apid, uids[0])
        # Its data directory, everything in it, is its own.
        for top, dirs, files in os.walk(self.server.data_dir):
            for name in [top] + [os.path.join(top, f) for f in files]:
                st = os.lstat(name)
                self.assertEqual((st.st_uid, st.st_gid),
                                 (own.pw_uid, own.pw_gid), name)

    def test_data_dir_symlinks_are_not_followed(self):
        # What root left in the data directory becomes managerd's; a
        # symlink in it is changed itself, never the file it names, and
        # a link to a directory is not walked into.
        outside = tempfile.mkdtemp(prefix="as-outside-")
        victim = os.path.join(outside, "victim")
        with open(victim, "w") as f:
            f.write("root's\n")
        server = harness.Server()
        try:
            os.makedirs(server.data_dir)
            for name, target in (("link", victim), ("dirlink", outside)):
                os.symlink(target, os.path.join(server.data_dir, name))
            server.start()
            own = pwd.getpwnam(harness.MANAGERD_USER)
            for name in ("link", "dirlink"):
                st = os.lstat(os.path.join(server.data_dir, name))
                self.assertEqual(st.st_uid, own.pw_uid, name)
            for path in (outside, victim):
                self.assertEqual(os.stat(path).st_uid, 0, path)
        finally:
            server.stop()
            server.cleanup()
            shutil.rmtree(outside)

    def test_proxy_sees_only_the_docker_socket(self):
        pid = self.kids["dockerd-proxy"]
        self.assertNotEqual(os.readlink("/proc/%d/ns/mnt" % pid),
                            os.readlink("/proc/self/ns/mnt"))
        self.assertNotEqual(os.readlink("/proc/%d/ns/net" % pid),
                            os.readlink("/proc/self/ns/net"))
        self.assertEqual(os.listdir("/proc/%d/root/" % pid),
                         ["docker.sock"])

    def test_api_key_is_nowhere_to_be_read(self):
        key = harness.TEST_KEY.encode()
        pids = self.pids()
        pids["spawner"] = self.kids["spawner"]
        for name, pid in pids.items():
            with open("/proc/%d/environ" % pid, "rb") as f:
                self.assertNotIn(key, f.read(), name)
        self.server.request("GET", "/healthz")
        self.assertNotIn(harness.TEST_KEY, self.server.log_text())

    # ASan's shadow memory is one writable mapping of 14 TiB (that holds
    # no data), which memory_count cannot read through /proc/<pid>/mem.
    @unittest.skipIf(harness.SANITIZERS,
                     "ASan's shadow memory is too big to read")
    def test_only_apid_and_the_spawner_hold_the_key(self):
        # The spawner keeps the keys to start apid again; managerd wiped
        # its copy once the spawner had one.
        key = harness.TEST_KEY.encode()
        self.assertEqual(harness.memory_count(self.server.proc.pid, key), 0)
        self.assertEqual(
            harness.memory_count(self.kids["dockerd-proxy"], key), 0)
        self.assertGreater(harness.memory_count(self.kids["spawner"], key),
                           0)
        self.assertGreater(harness.memory_count(self.kids["apid"], key), 0)


class DockerAccess(unittest.TestCase):
    """Through a relay standing in for the Docker socket we can see who
    connects, and take Docker away."""

    def setUp(self):
        self.sockdir = os.path.join("/run", "as-test-%d" % os.getpid())
        os.makedirs(self.sockdir, exist_ok=True)
        self.sock = os.path.join(self.sockdir, "docker.sock")
        self.relay = DockerForwarder(self.sock)
        self.server = harness.Server(DOCKER_HOST="unix://" + self.sock)
        self.server.start()

    def tearDown(self):
        self.server.cleanup()
        self.relay.stop()
        try:
            os.rmdir(self.sockdir)
        except OSError:
            pass

    def test_only_dockerd_proxy_connects_to_docker(self):
        # Start-up reconciliation talks to Docker before the server is
        # ready: count from here.
        with self.relay.lock:
            before = len(self.relay.peer_pids)
        for _ in range(10):
            status, _, _ = self.server.request("GET", "/healthz")
            self.assertEqual(status, 200)
        proxy = self.server.children()["dockerd-proxy"]
        self.assertEqual(len(self.relay.peer_pids) - before, 10)
        self.assertEqual(set(self.relay.peer_pids), {proxy})

    def test_docker_gone_gives_502_backend_error(self):
        status, _, _ = self.server.request("GET", "/healthz")
        self.assertEqual(status, 200)
        self.relay.stop()
        status, headers, body = self.server.request("GET", "/healthz")
        self.assertEqual(status, 502, body)
        self.assertEqual(headers["content-type"], "application/json")
        err = json.loads(body)["error"]
        self.assertEqual(err["code"], "backend_error")
        self.assertTrue(err["message"].startswith("Docker is unreachable: "),
                        err["message"])
        # The server stays up and keeps answering.
        status, _, _ = self.server.request("GET", "/healthz")
        self.assertEqual(status, 502)
        self.assertIsNone(self.server.proc.poll())


class DockerAbsentAtStart(unittest.TestCase):
    """Restart reconciliation needs Docker (API.md §8.5): without it the
    server refuses to start instead of serving with unknown state."""

    def test_exits_non_zero_with_a_clear_message(self):
        sockdir = os.path.join("/run", "as-dead-%d" % os.getpid())
        os.makedirs(sockdir, exist_ok=True)
        path = os.path.join(sockdir, "docker.sock")
        dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        dead.bind(path)     # bound, never listening: connections refused
        server = harness.Server(DOCKER_HOST="unix://" + path)
        try:
            server.start(wait=False)
            rc = server.proc.wait(20)
            self.assertNotEqual(rc, 0)
            log = server.log_text()
            self.assertIn("Docker is unreachable at start-up", log)
            self.assertNotIn("ready on", log)
        finally:
            server.cleanup()
            dead.close()
            os.unlink(path)
            os.rmdir(sockdir)


class Supervision(unittest.TestCase):
    def setUp(self):
        self.server = harness.Server().start()
        self.kids = self.server.children()

    def tearDown(self):
        self.server.cleanup()

    def kill_and_expect_restart(self, victim, survivor):
        """The victim is started again at once; the others go on.  Under
        load: test_supervise.py."""
        os.kill(self.kids[victim], signal.SIGKILL)
        deadline = time.monotonic() + 5
        while self.server.children().get(victim) in \
                (None, self.kids[victim]):
            self.assertLess(time.monotonic(), deadline,
                            self.server.log_text())
            time.sleep(0.01)
        kids = self.server.children()
        self.assertEqual(kids[survivor], self.kids[survivor])
        self.assertEqual(kids["spawner"], self.kids["spawner"])
        self.assertIsNone(self.server.proc.poll())
        while self.server.request("GET", "/healthz")[0] != 200:
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.01)
        self.assertIn("%s (pid %d) was killed by signal 9" %
                      (victim, self.kids[victim]), self.server.log_text())

    def test_apid_killed(self):
        self.kill_and_expect_restart("apid", "dockerd-proxy")

    def test_proxy_killed(self):
        self.kill_and_expect_restart("dockerd-proxy", "apid")

    def test_archive_worker_killed(self):
        self.kill_and_expect_restart("archive-worker", "apid")

    def test_managerd_killed_children_follow(self):
        os.kill(self.server.proc.pid, signal.SIGKILL)
        self.server.proc.wait(5)
        for name, pid in self.kids.items():
            self.assertTrue(harness.pid_gone(pid, 5), name)

    def test_sigterm_is_a_clean_stop(self):
        self.server.proc.send_signal(signal.SIGTERM)
        self.assertEqual(self.server.proc.wait(10), 0)
        # managerd waits for its children before it exits: they are gone
        # and the port is free the moment it has, so a supervisor can
        # start the service again at once.
        for name, pid in self.kids.items():
            self.assertTrue(harness.pid_gone(pid, 0.05), name)
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", self.server.port))
            s.listen(1)


class Configuration(unittest.TestCase):
    def run_managerd(self, env):
        managerd, libexec = harness.binaries()
        base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "AGENT_SANDBOX_LIBEXEC_DIR": libexec}
        base.update(env)
        return subprocess.run([managerd], env=base, capture_output=True,
                              timeout=20, text=True)

    def test_no_keys_exits_2(self):
        res = self.run_managerd({})
        self.assertEqual(res.returncode, 2)
        self.assertIn("configuration error: set AGENT_SANDBOX_API_KEYS",
                      res.stderr)

    def test_bad_value_exits_2(self):
        res = self.run_managerd({"AGENT_SANDBOX_INSECURE_NO_AUTH": "true",
                                 "AGENT_SANDBOX_PORT": "eighty"})
        self.assertEqual(res.returncode, 2)
        self.assertIn("configuration error: invalid value for "
                      "AGENT_SANDBOX_PORT", res.stderr)

    def test_managerd_user_must_exist_and_not_be_apids(self):
        if os.geteuid() != 0:
            self.skipTest("the user switch is made as root only")
        tmp = tempfile.mkdtemp(prefix="as-conf-")
        try:
            base = {"AGENT_SANDBOX_API_KEYS": harness.TEST_KEY,
                    "AGENT_SANDBOX_DATA_DIR": os.path.join(tmp, "data"),
                    "AGENT_SANDBOX_PORT": "0"}
            res = self.run_managerd(dict(
                base, AGENT_SANDBOX_MANAGERD_USER="no-such-user-here"))
            self.assertEqual(res.returncode, 2, res.stderr)
            self.assertIn("configuration error: AGENT_SANDBOX_MANAGERD_USER"
                          ": unknown user no-such-user-here", res.stderr)
            res = self.run_managerd(dict(
                base, AGENT_SANDBOX_MANAGERD_USER="nobody",
                AGENT_SANDBOX_PRIVSEP_USER="nobody"))
            self.assertEqual(res.returncode, 2, res.stderr)
            self.assertIn("AGENT_SANDBOX_MANAGERD_USER and AGENT_SANDBOX_"
                          "PRIVSEP_USER must be different users", res.stderr)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_insecure_mode_warns(self):
        server = harness.Server(AGENT_SANDBOX_INSECURE_NO_AUTH="true",
                                AGENT_SANDBOX_API_KEYS="")
        try:
            server.start()
            self.assertIn("authentication is DISABLED", server.log_text())
        finally:
            server.cleanup()


class CommandLine(unittest.TestCase):
    def cli(self):
        prefix = os.environ.get("AGENT_SANDBOX_TEST_PREFIX")
        if prefix:
            return os.path.join(prefix, "bin", "agent-sandbox")
        return os.path.join(harness.BUILDDIR, "client", "agent-sandbox")

    def test_version(self):
        res = subprocess.run([self.cli(), "--version"], capture_output=True,
                             text=True)
        self.assertEqual(res.returncode, 0)
        self.assertRegex(res.stdout, r"^agent-sandbox \d+\.\d+\.\d+\n$")

    def test_bad_usage_exits_2(self):
        for args in ([], ["bogus"], ["serve", "--port", "x"],
                     ["serve", "--port", "70000"], ["serve", "extra"],
                     ["serve", "--nope"]):
            res = subprocess.run([self.cli()] + args, capture_output=True,
                                 text=True)
            self.assertEqual(res.returncode, 2, args)
            self.assertIn("usage:", res.stderr, args)

    def test_serve_flags_reach_the_server(self):
        managerd, libexec = harness.binaries()
        port = harness.free_port()
        data = tempfile.mkdtemp(prefix="as-cli-")
        self.addCleanup(shutil.rmtree, data, True)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
               "AGENT_SANDBOX_MANAGERD": managerd,
               "AGENT_SANDBOX_LIBEXEC_DIR": libexec,
               "AGENT_SANDBOX_INSECURE_NO_AUTH": "true",
               "AGENT_SANDBOX_DATA_DIR": data,
               "AGENT_SANDBOX_PORT": "1"}
        proc = subprocess.Popen([self.cli(), "serve", "--host", "127.0.0.1",
                                 "--port", str(port)], env=env,
                                stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            import http.client
            deadline = time.time() + 20
            while True:
                try:
                    conn = http.client.HTTPConnection("127.0.0.1", port,
                                                      timeout=5)
                    conn.request("GET", "/healthz")
                    self.assertEqual(conn.getresponse().status, 200)
                    break
                except (ConnectionRefusedError, http.client.HTTPException):
                    if time.time() > deadline:
                        raise
                    time.sleep(0.1)
        finally:
            proc.terminate()
            proc.wait(10)


class NotRoot(unittest.TestCase):
    """Started by an unprivileged user: one warning, and every process is
    still under its seccomp filter."""

    def test_reduced_separation_still_filters(self):
        import pwd
        nobody = pwd.getpwnam("nobody")
        # Reconciliation needs Docker at start-up: the docker group gives
        # an unprivileged user the socket.
        docker_gid = os.stat(harness.DOCKER_SOCKET).st_gid
        server = harness.Server(AGENT_SANDBOX_INSECURE_NO_AUTH="true",
                                AGENT_SANDBOX_API_KEYS="")
        try:
            os.makedirs(server.data_dir)
            os.chown(server.data_dir, nobody.pw_uid, nobody.pw_gid)
            for d in (server.tmp, server.libexec):
                os.chmod(d, 0o755)
            server.managerd = [
                "setpriv", "--reuid=nobody", "--regid=%d" % nobody.pw_gid,
                "--groups=%d" % docker_gid, server.managerd]
            server.start()
            # setpriv execs managerd: the pid is managerd's.
            pids = harness.daemon_pids(server)
            self.assertEqual(sorted(pids),
                             ["apid", "archive-worker", "dockerd-proxy",
                              "managerd", "spawner"])
            for name, pid in pids.items():
                st = harness.proc_status(pid)
                self.assertEqual(st["Seccomp"], "2", name)
                self.assertEqual(st["NoNewPrivs"], "1", name)
                self.assertEqual(st["Uid"].split()[0],
                                 str(nobody.pw_uid), name)
            status, _, body = server.request("GET", "/healthz")
            self.assertEqual(status, 200, body)
            self.assertEqual(
                server.log_text().count("privilege separation is reduced"),
                1, server.log_text())
        finally:
            server.cleanup()


if __name__ == "__main__":
    harness.require_root_and_docker()
    unittest.main(verbosity=2)
