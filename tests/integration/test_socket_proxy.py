"""The server with its Docker behind a socket proxy (docs/socket-proxy.md):
Debian's haproxy with etc/haproxy-socket-proxy.cfg in front of the real
dockerd, DOCKER_HOST=tcp://127.0.0.1:PORT.  Every family of Docker call
works through it; calls outside the list are refused by haproxy while the
server goes on working; haproxy going away gives clean 502s and the server
recovers when it is back; every request the server made is one the
document lists.
"""

import asyncio
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import socket_proxy  # noqa: E402
import websockets  # noqa: E402

# The test's own requests through haproxy say this, and the recording
# check leaves them out: they are the attacker's, not the server's.
PROBE_AGENT = "socket-proxy-test"
REFUSAL = b"refused by the socket proxy"
# A sandbox user of the module's own, whose workspace-owner image is
# removed first: the server imports it through haproxy.
SANDBOX_USER = (1351, 1352)
OWNER_IMAGE = "agent-sandbox/workspace-owner:%d-%d" % SANDBOX_USER


def probe(port, method, target, agent=PROBE_AGENT, host="127.0.0.1"):
    """One raw request through haproxy: (status, head bytes, body bytes)."""
    with socket.create_connection((host, port), timeout=30) as s:
        s.sendall(("%s %s HTTP/1.1\r\nHost: docker\r\nUser-Agent: %s\r\n"
                   "Connection: close\r\n\r\n" % (method, target, agent))
                  .encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), head, body


def docker(*args):
    return subprocess.run(["docker"] + list(args), check=True,
                          capture_output=True, text=True).stdout.strip()


def run(coro, timeout=60):
    return asyncio.run(asyncio.wait_for(coro, timeout))


class SocketProxy(unittest.TestCase):
    # Connections of the test's that sent no HTTP: no User-Agent to tell
    # them by, so the recording check is told how many there were.
    not_http_probes = 0

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="as-sockproxy-")
        cls.port = harness.free_port()
        cls.hp = socket_proxy.Haproxy(
            cls.port, os.path.join(cls.tmp, "haproxy.log")).start()
        tag = secrets.token_hex(4)
        # A network of its own, so that its create goes through haproxy.
        cls.network = "agent-sandbox-sockproxy-" + tag
        # Not a sandbox: made with the docker CLI, on the socket itself.
        cls.foreign = "as-sockproxy-foreign-" + tag
        subprocess.run(["docker", "image", "rm", "-f", OWNER_IMAGE],
                       capture_output=True)
        cls.server = harness.SandboxServer(
            DOCKER_HOST="tcp://127.0.0.1:%d" % cls.port,
            AGENT_SANDBOX_SANDBOX_USER="%d:%d" % SANDBOX_USER,
            AGENT_SANDBOX_ALLOW_NETWORK="true",
            AGENT_SANDBOX_NETWORK_NAME=cls.network,
            AGENT_SANDBOX_REAP_INTERVAL_SECONDS="1",
            AGENT_SANDBOX_WARM_POOL=harness.TEST_IMAGE + "=1")
        try:
            cls.server.start()
            cls.foreign_id = docker("run", "-d", "--name", cls.foreign,
                                    harness.TEST_IMAGE, "sleep", "600")
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["docker", "rm", "-f", cls.foreign],
                       capture_output=True)
        try:
            cls.server.cleanup()
        finally:
            cls.hp.cleanup()
            subprocess.run(["docker", "network", "rm", cls.network],
                           capture_output=True)
            shutil.rmtree(cls.tmp, ignore_errors=True)
            subprocess.run(["docker", "image", "rm", "-f", OWNER_IMAGE],
                           capture_output=True)

    def api(self, method, path, body=None):
        return self.server.api(method, path, body)

    def ok(self, want, method, path, body=None):
        status, doc = self.api(method, path, body)
        self.assertEqual(status, want, (method, path, doc))
        return doc

    def assertNoObjects(self, sb, timeout=10):
        deadline = time.time() + timeout
        while True:
            containers, volumes = self.server.docker_objects()
            left = [n for n in containers + volumes if sb in n]
            if not left:
                return
            self.assertLess(time.time(), deadline, left)
            time.sleep(0.2)

    def wait_process(self, sb, pid, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            doc = self.ok(200, "GET", "/v1/sandboxes/%s/processes/%s" %
                          (sb, pid))
            if not doc["running"] and doc["status"] != "running":
                return doc
            time.sleep(0.1)
        raise AssertionError("process %s still runs" % pid)

    def output(self, sb, pid):
        status, _, data = self.server.request(
            "GET", "/v1/sandboxes/%s/processes/%s/output" % (sb, pid),
            headers=harness.AUTH)
        self.assertEqual(status, 200)
        return "".join(json.loads(line).get("data", "")
                       for line in data.decode().splitlines())

    # --- every family of Docker call, through the allowlist -------------

    def test_sandbox_exec_files_snapshots_fork(self):
        sb = self.server.create(network=True)["id"]
        self.assertEqual(self.server.exec(sb, "echo héllo")["stdout"],
                         "héllo\n")
        owner = "%d:%d\n" % SANDBOX_USER
        self.assertEqual(self.server.exec(
            sb, "stat -c %u:%g /workspace")["stdout"], owner)
        status, _, data = self.server.request(
            "POST", "/v1/sandboxes/%s/exec/stream" % sb,
            body={"command": "echo one; echo two >&2"}, headers=harness.AUTH)
        self.assertEqual(status, 200)
        events = [json.loads(line) for line in data.decode().splitlines()]
        self.assertEqual(events[-1]["type"], "exit")
        self.assertEqual(events[-1]["exit_code"], 0)

        body = bytes(range(256)) * 64
        status, _, _ = self.server.request(
            "PUT", "/v1/sandboxes/%s/files?path=/workspace/d/f.bin" % sb,
            body=body, headers=dict(harness.AUTH, **{
                "Content-Type": "application/octet-stream"}))
        self.assertEqual(status, 200)
        status, _, got = self.server.request(
            "GET", "/v1/sandboxes/%s/files?path=/workspace/d/f.bin" % sb,
            headers=harness.AUTH)
        self.assertEqual((status, got), (200, body))
        listing = self.ok(200, "GET",
                          "/v1/sandboxes/%s/files/list?path=/workspace/d" %
                          sb)
        self.assertIn("f.bin", json.dumps(listing))

        snap = self.ok(201, "POST", "/v1/sandboxes/%s/snapshots" % sb,
                       {"name": "before"})["id"]
        self.server.exec(sb, "rm -r /workspace/d")
        self.ok(200, "POST", "/v1/sandboxes/%s/rollback" % sb,
                {"snapshot_id": snap})
        self.assertEqual(self.server.exec(
            sb, "wc -c < /workspace/d/f.bin")["stdout"].strip(), "16384")
        fork = self.ok(201, "POST", "/v1/snapshots/%s/fork" % snap)["id"]
        self.assertEqual(self.server.exec(
            fork, "wc -c < /workspace/d/f.bin")["stdout"].strip(), "16384")
        self.assertEqual(self.server.exec(
            fork, "stat -c %u:%g /workspace")["stdout"], owner)

        # The stats' one-shot call and the workspace probe go through the
        # allowlist too; labels need no Docker call at all.
        stats = self.ok(200, "GET", "/v1/sandboxes/%s/stats" % sb)
        self.assertGreaterEqual(stats["workspace"]["bytes"], 16384)
        self.assertGreater(stats["memory"]["usage_bytes"], 0)
        self.assertEqual(self.ok(200, "PATCH", "/v1/sandboxes/%s" % sb,
                                 {"labels": {"via": "haproxy"}})["labels"],
                         {"via": "haproxy"})

        for victim in (fork, sb):
            self.ok(204, "DELETE", "/v1/sandboxes/%s" % victim)
            self.ok(404, "GET", "/v1/sandboxes/%s" % victim)
            self.assertNoObjects(victim)

    def test_processes_stdin_tty_attach_resize_signal(self):
        sb = self.server.create()["id"]
        cat = self.ok(201, "POST", "/v1/sandboxes/%s/processes" % sb,
                      {"command": ["cat"], "stdin": True})["id"]
        status, _, _ = self.server.request(
            "POST", "/v1/sandboxes/%s/processes/%s/stdin?close=true" %
            (sb, cat), body=b"through the proxy\n", headers=harness.AUTH)
        self.assertEqual(status, 204)
        self.assertEqual(self.wait_process(sb, cat)["exit_code"], 0)
        self.assertEqual(self.output(sb, cat), "through the proxy\n")

        tty = self.ok(201, "POST", "/v1/sandboxes/%s/processes" % sb,
                      {"command": ["/bin/sh"], "tty": True, "cols": 91,
                       "rows": 27})["id"]
        url = "ws://127.0.0.1:%d/v1/sandboxes/%s/processes/%s/attach" % (
            self.server.port, sb, tty)

        async def read_until(ws, needle):
            data = b""
            while needle not in data:
                msg = await ws.recv()
                if isinstance(msg, bytes):
                    data += msg
            return data

        async def go():
            async with websockets.connect(
                    url, extra_headers=list(harness.AUTH.items()),
                    open_timeout=20) as ws:
                await ws.send(b"stty size; echo END1\n")
                await read_until(ws, b"27 91\r\nEND1")
                await ws.send(json.dumps({"type": "resize", "cols": 120,
                                          "rows": 40}))
                await asyncio.sleep(0.3)
                await ws.send(b"stty size; echo END2\n")
                await read_until(ws, b"40 120\r\nEND2")
        run(go())
        self.ok(204, "POST", "/v1/sandboxes/%s/processes/%s/resize" %
                (sb, tty), {"cols": 100, "rows": 30})
        self.ok(204, "POST", "/v1/sandboxes/%s/processes/%s/signal" %
                (sb, tty), {"signal": "KILL"})
        self.assertEqual(self.wait_process(sb, tty)["status"], "killed")
        self.ok(204, "DELETE", "/v1/sandboxes/%s" % sb)

    def test_reaper(self):
        sb = self.server.create(timeout_seconds=1)["id"]
        deadline = time.time() + 30
        while self.api("GET", "/v1/sandboxes/%s" % sb)[0] != 404:
            self.assertLess(time.time(), deadline, "not reaped")
            time.sleep(0.2)
        self.assertNoObjects(sb)

    def test_warm_pool_claim_with_limits(self):
        # The pool's creates, its claim's update call: through haproxy.
        claimed = "created from the warm pool"
        deadline = time.time() + 60
        while True:
            before = self.server.log_text().count(claimed)
            doc = self.ok(201, "POST", "/v1/sandboxes",
                          {"cpus": 0.5, "pids_limit": 40})
            self.addCleanup(self.api, "DELETE", "/v1/sandboxes/" + doc["id"])
            if self.server.log_text().count(claimed) > before:
                break
            self.assertLess(time.time(), deadline, "never from the pool")
            time.sleep(1)
        status, info = harness.container_inspect("agent-sandbox-" +
                                                 doc["id"])
        self.assertEqual(info["HostConfig"]["PidsLimit"], 40)
        self.assertEqual(info["HostConfig"]["NanoCpus"], 500000000)

    def test_image_pull_is_refused_and_said_so(self):
        status, doc = self.api("POST", "/v1/sandboxes",
                               {"image": "agent-sandbox/not-here:never"})
        self.assertEqual(status, 400, doc)
        self.assertIn("refused by the socket proxy", doc["error"]["message"])

    # --- what the allowlist refuses ---------------------------------------

    def test_calls_outside_the_list_are_refused(self):
        api = "/v1.41"
        refused = [
            ("POST", api + "/images/create?fromImage=busybox&tag=latest"),
            ("GET", api + "/containers/%s/export" % self.foreign_id),
            ("POST", api + "/containers/%s/update" % self.foreign_id),
            ("GET", api + "/containers/%s/export" % self.foreign),
            ("POST", api + "/containers/%s/exec" % self.foreign),
            ("GET", api + "/containers/%s/json" % self.foreign),
            ("GET", api + "/containers/%s/archive?path=%%2Fetc" %
             self.foreign),
            ("DELETE", api + "/containers/%s?force=true&v=true" %
             self.foreign),
            ("POST", api + "/containers/%s/kill" % self.foreign_id),
            ("POST", api + "/containers/%s/update" % self.foreign_id),
            ("GET", api + "/containers/%s/logs?stdout=1" % self.foreign_id),
            ("POST", api + "/containers/%s/attach?stream=1" %
             self.foreign_id),
            ("GET", api + "/containers/json"),
            ("GET", api + "/containers/json?all=1"),
            ("GET", api + "/info"),
            ("GET", api + "/version"),
            ("GET", api + "/events"),
            ("GET", api + "/images/json"),
            ("POST", api + "/build"),
            ("POST", api + "/volumes/prune"),
            ("GET", "/_ping"),
            ("GET", "/v1.40/_ping"),
            ("GET", "//v1.41/_ping"),
            ("GET", api + "/_ping?x=1"),
            ("get", api + "/_ping"),
            ("POST", api + "/_ping"),
            ("DELETE", api + "/images/busybox"),
            # Right shape, wrong method.
            ("DELETE", api + "/exec/" + "0" * 64 + "/json"),
            ("PUT", api + "/containers/create?name=agent-sandbox-sb_" +
             "0" * 16),
            # A value with bytes the server would have encoded.
            ("GET", api + "/containers/%s/archive?path=/etc" %
             self.foreign_id),
            ("GET", api + "/containers/create?name=agent-sandbox-sb_" +
             "0" * 16 + "&x=1"),
        ]
        for method, target in refused:
            status, head, body = probe(self.port, method, target)
            self.assertEqual(status, 403, (method, target, head))
            self.assertIn(REFUSAL, body, (method, target))
        # The foreign container is untouched, and the server works on.
        self.assertEqual(
            docker("inspect", "-f", "{{.State.Running}}", self.foreign),
            "true")
        self.assertEqual(self.server.request("GET", "/healthz")[0], 200)
        sb = self.server.create()["id"]
        self.assertEqual(self.server.exec(sb, "echo ok")["stdout"], "ok\n")
        self.ok(204, "DELETE", "/v1/sandboxes/%s" % sb)

    def raw(self, data, timeout=10):
        """Bytes to haproxy, everything that comes back until it closes."""
        with socket.create_connection(("127.0.0.1", self.port),
                                      timeout=timeout) as s:
            s.sendall(data)
            got = b""
            try:
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    got += chunk
            except socket.timeout:
                pass
        return got

    def exec_start(self, connection, extra=b"", eid="0" * 64):
        body = b'{"Detach":false,"Tty":false}'
        return (b"POST /v1.41/exec/%s/start HTTP/1.1\r\nHost: docker\r\n"
                b"User-Agent: %s\r\nConnection: %s\r\nUpgrade: tcp\r\n"
                b"Content-Type: application/json\r\n%s"
                b"Content-Length: %d\r\n\r\n%s" %
                (eid.encode(), PROBE_AGENT.encode(), connection, extra,
                 len(body), body))

    def test_no_second_request_behind_a_checked_one(self):
        info = (b"GET /v1.41/info HTTP/1.1\r\nHost: docker\r\n"
                b"User-Agent: %s\r\nConnection: close\r\n\r\n" %
                PROBE_AGENT.encode())
        # Behind an exec start that goes straight to Docker: Docker
        # answers the unknown exec and closes, never reading the rest.
        got = self.raw(self.exec_start(b"Upgrade, close") + info)
        self.assertTrue(got.startswith(b"HTTP/1.1 404"), got[:200])
        self.assertEqual(got.count(b"HTTP/1.1 "), 1, got)
        self.assertNotIn(b"KernelVersion", got)
        # An exec start of another form goes to the checking frontend,
        # which refuses it, and every request after it.
        for connection, extra in ((b"Upgrade", b""),
                                  (b"Upgrade, close",
                                   b"Transfer-Encoding: chunked\r\n"),
                                  (b"Upgrade, close",
                                   b"Upgrade: websocket\r\n")):
            got = self.raw(self.exec_start(connection, extra) + info)
            self.assertNotIn(b"KernelVersion", got, (connection, extra))
            self.assertTrue(got.startswith(b"HTTP/1.1 403") or
                            got.startswith(b"HTTP/1.1 400"), got[:200])
        # Kept alive through the checking frontend: each request checked.
        ping = (b"GET /v1.41/_ping HTTP/1.1\r\nHost: docker\r\n"
                b"User-Agent: %s\r\n\r\n" % PROBE_AGENT.encode())
        got = self.raw(ping + info)
        self.assertTrue(got.startswith(b"HTTP/1.1 200"), got[:200])
        self.assertIn(b"HTTP/1.1 403", got)
        self.assertNotIn(b"KernelVersion", got)
        # Not HTTP at all (a TLS hello): dropped, and logged as "- - -".
        self.assertEqual(self.raw(b"\x16\x03\x01\x00\x05hello\r\n\r\n"),
                         b"")
        SocketProxy.not_http_probes += 1

    def test_encoded_dot_segments_reach_no_other_endpoint(self):
        sneaky = "/v1.41/images/..%%2F..%%2Fv1.41%%2Fcontainers%%2F%s" \
            "%%2Fexport/json" % self.foreign_id
        status, head, body = probe(self.port, "GET", sneaky)
        self.assertNotEqual(status, 200, head)
        self.assertNotIn(b"etc/passwd", body)
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"location:"):
                target = line.split(b":", 1)[1].strip().decode()
                self.assertEqual(probe(self.port, "GET", target)[0], 403)

    # --- haproxy going away ----------------------------------------------

    def test_socket_proxy_down_then_back(self):
        sb = self.server.create()["id"]
        self.hp.stop()
        try:
            status, doc = self.api("GET", "/healthz")
            self.assertEqual(status, 502, doc)
            self.assertEqual(doc["error"]["code"], "backend_error")
            status, doc = self.api("POST", "/v1/sandboxes/%s/exec" % sb,
                                   {"command": "true"})
            self.assertEqual(status, 502, doc)
            status, doc = self.api("POST", "/v1/sandboxes", {})
            self.assertEqual(status, 502, doc)
        finally:
            self.hp.start()
        deadline = time.time() + 15
        while self.api("GET", "/healthz")[0] != 200:
            self.assertLess(time.time(), deadline, "no recovery")
            time.sleep(0.2)
        self.assertEqual(self.server.exec(sb, "echo back")["stdout"],
                         "back\n")
        self.ok(204, "DELETE", "/v1/sandboxes/%s" % sb)

    # --- the jail in TCP mode ----------------------------------------------

    def test_proxy_jail_in_tcp_mode(self):
        pid = self.server.children()["dockerd-proxy"]
        # Its own mount namespace and an empty root: no socket file.
        self.assertNotEqual(os.readlink("/proc/%d/ns/mnt" % pid),
                            os.readlink("/proc/self/ns/mnt"))
        self.assertEqual(os.listdir("/proc/%d/root/" % pid), [])
        # The host's network, where the socket proxy is.
        self.assertEqual(os.readlink("/proc/%d/ns/net" % pid),
                         os.readlink("/proc/self/ns/net"))
        status = harness.proc_status(pid)
        self.assertEqual(status["Seccomp"], "2")
        self.assertEqual(status["NoNewPrivs"], "1")
        self.assertEqual(status["CapEff"], "0000000000000000")
        self.assertNotEqual(status["Uid"].split()[0], "0")

    # --- DOCKER_HOST forms ------------------------------------------------

    def start_bare(self, **env):
        server = harness.Server(**env)
        self.addCleanup(server.cleanup)
        return server.start(wait=False)

    def test_bad_docker_host_is_a_configuration_error(self):
        bad = {
            "tcp://": "a host and a port are required",
            "tcp://host": "a port is required",
            "tcp://[::1": "an IPv6 address must end with ']'",
            "tcp://127.0.0.1:0": "the port must be a number from 1 to 65535",
            "tcp://127.0.0.1:70000": "the port must be a number from 1",
            "tls://127.0.0.1:2376": "DOCKER_HOST must be unix:///PATH or "
                                    "tcp://HOST:PORT",
        }
        cases = [({"DOCKER_HOST": k}, v) for k, v in bad.items()]
        cases.append(({"DOCKER_HOST": "tcp://127.0.0.1:%d" % self.port,
                       "DOCKER_TLS_VERIFY": "1"},
                      "TLS to Docker is not supported"))
        for env, want in cases:
            server = self.start_bare(**env)
            self.assertEqual(server.proc.wait(20), 2, env)
            self.assertIn(want, server.log_text(), env)

    def test_ipv6_literal_and_host_name(self):
        log = os.path.join(self.tmp, "haproxy6.log")
        hp = socket_proxy.Haproxy(harness.free_port(), log, ipv6=True)
        self.addCleanup(hp.cleanup)
        hp.start()
        for host in ("[::1]", "localhost"):
            server = self.start_bare(
                DOCKER_HOST="tcp://%s:%d" % (host, hp.port))
            server.wait_ready()
            self.assertEqual(server.request("GET", "/healthz")[0], 200,
                             server.log_text())
            server.stop()
        self.assertIn("Docker endpoint tcp://localhost:%d is "
                      "tcp://127.0.0.1:%d" % (hp.port, hp.port),
                      server.log_text())
        self.assertEqual(len([r for r in hp.requests()
                              if r[1] == "/v1.41/_ping"]) >= 2, True)

    def test_configuration_without_the_import_rule(self):
        """A socket proxy configured before the workspace-owner image
        refuses its import: creates still work, uploading the owner."""
        user = (1361, 1362)
        image = "agent-sandbox/workspace-owner:%d-%d" % user
        subprocess.run(["docker", "image", "rm", "-f", image],
                       capture_output=True)
        log = os.path.join(self.tmp, "haproxy-old.log")
        hp = socket_proxy.Haproxy(harness.free_port(), log)
        self.addCleanup(hp.cleanup)
        with open(hp.cfg) as f:
            cfg = f.read()
        rule = "\thttp-request allow if m_post image_import\n"
        self.assertIn(rule, cfg)
        with open(hp.cfg, "w") as f:
            f.write(cfg.replace(rule, ""))
        hp.start()
        server = harness.SandboxServer(
            DOCKER_HOST="tcp://127.0.0.1:%d" % hp.port,
            AGENT_SANDBOX_SANDBOX_USER="%d:%d" % user)
        self.addCleanup(server.cleanup)
        server.start()
        for _ in range(2):
            sb = server.create()["id"]
            self.assertEqual(server.exec(sb, "stat -c %u:%g /workspace && "
                                         "touch /workspace/f")["stdout"],
                             "%d:%d\n" % user)
            self.ok_on(server, 204, "DELETE", "/v1/sandboxes/" + sb)
        self.assertIn("cannot import the workspace-owner image",
                      server.log_text())
        imports = [r for r in hp.requests()
                   if r[0] == "POST" and "fromSrc=-" in r[1]]
        self.assertEqual([r[2] for r in imports], [403])
        self.assertEqual(subprocess.run(["docker", "image", "inspect", image],
                                        capture_output=True).returncode, 1)

    def ok_on(self, server, want, method, path):
        status, doc = server.api(method, path)
        self.assertEqual(status, want, (method, path, doc))

    def test_unix_socket_bind(self):
        """The deployment docs/socket-proxy.md advises: haproxy on a unix
        socket only the privsep user's group may open, the server with
        DOCKER_HOST=unix:// and its namespaced jail, every call still
        through the allowlist."""
        import grp
        group = grp.getgrgid(os.getgid()).gr_name
        path = os.path.join(self.tmp, "docker-proxy.sock")
        log = os.path.join(self.tmp, "haproxy-unix.log")
        hp = socket_proxy.Haproxy(harness.free_port(), log,
                                  unix=(path, group))
        self.addCleanup(hp.cleanup)
        hp.start()
        self.assertEqual(os.stat(path).st_mode & 0o777, 0o660)
        server = harness.SandboxServer(DOCKER_HOST="unix://" + path)
        self.addCleanup(server.cleanup)
        server.start()
        sb = server.create()["id"]
        self.assertEqual(server.exec(sb, "echo via-unix")["stdout"],
                         "via-unix\n")
        status, _, data = server.request(
            "POST", "/v1/sandboxes/%s/exec/stream" % sb,
            body={"command": "echo streamed"}, headers=harness.AUTH)
        self.assertEqual(status, 200)
        self.assertIn(b"streamed", data)
        self.assertEqual(server.api("DELETE", "/v1/sandboxes/" + sb)[0], 204)
        server.stop()
        made = hp.requests()
        self.assertTrue(any("/exec" in r[1] for r in made), made)
        self.assertEqual(socket_proxy.violations(made), [])

    def test_unresolvable_name_says_so(self):
        server = self.start_bare(DOCKER_HOST="tcp://no-such-host.invalid:1")
        server.proc.wait(30)
        self.assertIn("cannot resolve no-such-host.invalid",
                      server.log_text())

    # --- the recording check ---------------------------------------------

    def test_the_check_catches_a_call_outside_the_list(self):
        made = [
            ("GET", "/v1.41/_ping", 200, "agent-sandbox"),
            ("GET", "/v1.41/info", 403, "agent-sandbox"),
            ("POST", "/v1.41/images/create?fromImage=x", 200,
             "agent-sandbox"),
            ("POST", "/v1.41/images/create?fromImage=x", 403,
             "agent-sandbox"),
            ("GET", "/v1.41/containers/" + "a" * 64 + "/json", 200, "curl"),
        ]
        self.assertEqual(socket_proxy.violations(made), [
            "GET /v1.41/info 403",
            "POST /v1.41/images/create?fromImage=x 200",
            "GET /v1.41/containers/%s/json 200 (User-Agent 'curl')" %
            ("a" * 64)])

    def test_z_every_request_was_documented(self):
        """Last (by name): everything the server sent through haproxy
        during this module, against the document's list."""
        tables = socket_proxy.documented()
        made = self.hp.requests()
        not_http = [r for r in made if r == ("-", "-", None, "-")]
        self.assertEqual(len(not_http), self.not_http_probes)
        made = [r for r in made if r not in not_http]
        self.assertEqual(socket_proxy.violations(
            made, tables, ignore_agents=(PROBE_AGENT,)), [])
        # And this module made every call of the list but the stats one
        # (its route is added elsewhere).
        used = set()
        for method, uri, status, agent in made:
            for m, rx, text in tables["allowlist"]:
                if agent != PROBE_AGENT and m == method and rx.match(uri):
                    used.add((m, text))
        unused = [(m, t) for m, _, t in tables["allowlist"]
                  if (m, t) not in used and "/stats" not in t]
        self.assertEqual(unused, [])
        # Exec streams went straight to Docker (TCP mode, no status).
        self.assertTrue(any(r[0] == "POST" and r[1].endswith("/start") and
                            r[1].startswith("/v1.41/exec/") and
                            r[2] is None for r in made))


if __name__ == "__main__":
    harness.require_root_and_docker()
    if subprocess.run(["sh", "-c", "command -v haproxy"],
                      capture_output=True).returncode != 0:
        print("haproxy is missing (apt-get install haproxy; scripts/common.sh "
              "installs it)", file=sys.stderr)
        sys.exit(1)
    unittest.main(verbosity=2)
