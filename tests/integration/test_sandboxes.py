"""Sandboxes and exec against the real dockerd: lifecycle over HTTP, the
hardened container, exec (blocking and streamed), timeouts that kill the
whole process group, TTL, quota, restart reconciliation, two servers on one
Docker daemon, crash safety, concurrency and backpressure."""

import http.client
import json
import os
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

# A client reading 1 KiB/s for a minute (shorter when set, for local runs).
SLOW_READER_SECONDS = int(os.environ.get("AGENT_SANDBOX_SLOW_READER_SECONDS",
                                         "60"))


def stream_events(server, sandbox_id, body, timeout=60):
    """POST .../exec/stream; returns (status, content type, events)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port,
                                      timeout=timeout)
    try:
        hdrs = dict(harness.AUTH)
        hdrs["Content-Type"] = "application/json"
        conn.request("POST", "/v1/sandboxes/%s/exec/stream" % sandbox_id,
                     body=json.dumps(body), headers=hdrs)
        resp = conn.getresponse()
        ctype = resp.getheader("Content-Type")
        data = resp.read()
        if resp.status != 200:
            return resp.status, ctype, json.loads(data)
        lines = [ln for ln in data.split(b"\n") if ln.strip()]
        return resp.status, ctype, [json.loads(ln) for ln in lines]
    finally:
        conn.close()


class ServerCase(unittest.TestCase):
    settings = {}

    @classmethod
    def setUpClass(cls):
        cls.server = harness.SandboxServer(**cls.settings).start()

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def create(self, **spec):
        doc = self.server.create(**spec)
        self.addCleanup(self.server.api, "DELETE",
                        "/v1/sandboxes/" + doc["id"])
        return doc


class Lifecycle(ServerCase):
    def test_create_get_list_timeout_delete(self):
        sb = self.server.create(cpus=0.5, memory_mb=256, timeout_seconds=60)
        self.assertTrue(sb["id"].startswith("sb_"))
        self.assertEqual(len(sb["id"]), 19)
        self.assertEqual(sb["status"], "running")
        self.assertFalse(sb["network"])
        self.assertTrue(sb["read_only_rootfs"])
        self.assertIsNone(sb["source_snapshot_id"])
        self.assertEqual(sb["image"], harness.TEST_IMAGE)
        status, got = self.server.api("GET", "/v1/sandboxes/" + sb["id"])
        self.assertEqual(status, 200)
        self.assertEqual(got["cpus"], 0.5)
        self.assertEqual(got["memory_mb"], 256)
        self.assertEqual(got["status"], "running")
        self.assertEqual(got["created_at"], sb["created_at"])
        status, lst = self.server.api("GET", "/v1/sandboxes")
        self.assertEqual(status, 200)
        self.assertIn(sb["id"], [s["id"] for s in lst["sandboxes"]])
        status, ext = self.server.api(
            "POST", "/v1/sandboxes/%s/timeout" % sb["id"],
            {"timeout_seconds": 600})
        self.assertEqual(status, 200)
        self.assertGreater(ext["expires_at"], sb["expires_at"])
        status, _ = self.server.api("DELETE", "/v1/sandboxes/" + sb["id"])
        self.assertEqual(status, 204)
        status, err = self.server.api("GET", "/v1/sandboxes/" + sb["id"])
        self.assertEqual(status, 404)
        self.assertEqual(err, {"error": {
            "code": "not_found",
            "message": "sandbox %s not found" % sb["id"]}})
        status, _ = self.server.api("DELETE", "/v1/sandboxes/" + sb["id"])
        self.assertEqual(status, 404)

    def test_destroy_removes_container_and_volume(self):
        sb = self.server.create()
        containers, volumes = self.server.docker_objects()
        self.assertIn("agent-sandbox-" + sb["id"], containers)
        self.assertIn("agent-sandbox-%s-workspace" % sb["id"], volumes)
        status, _ = self.server.api("DELETE", "/v1/sandboxes/" + sb["id"])
        self.assertEqual(status, 204)
        containers, volumes = self.server.docker_objects()
        self.assertNotIn("agent-sandbox-" + sb["id"], containers)
        self.assertNotIn("agent-sandbox-%s-workspace" % sb["id"], volumes)

    def test_validation_statuses(self):
        for body in ({"cpus": -1}, {"unknown": 1}, {"memory_mb": 8},
                     {"cpus": "many"}):
            status, doc = self.server.api("POST", "/v1/sandboxes", body)
            self.assertEqual(status, 422, body)
            self.assertIsInstance(doc["detail"], list)
        status, doc = self.server.api("POST", "/v1/sandboxes", {"cpus": 64})
        self.assertEqual(status, 400)
        self.assertEqual(doc["error"]["code"], "invalid_request")
        self.assertEqual(doc["error"]["message"], "cpus must be in (0, 4.0]")

    def test_limits_docker_would_not_enforce(self):
        # In (0, max] for the reference, but no CPU limit at all to Docker.
        before = self.server.docker_objects()
        # Under gVisor the floor is 0.1: its kernel shares the limit and, at
        # 0.01, did not start within Docker's 30 s deadline.
        floor, why = 0.01, ("cpus must be at least 0.01: Docker cannot limit "
                            "a sandbox to less")
        if harness.GVISOR:
            floor, why = 0.1, ("cpus must be at least 0.1 on this server: "
                               "its runtime is gVisor (runsc), whose kernel "
                               "runs inside the sandbox's CPU limit and would "
                               "not start in time with less")
        for cpus in (0.000001, 0.0099, floor * 0.999):
            status, doc = self.server.api("POST", "/v1/sandboxes",
                                          {"cpus": cpus})
            self.assertEqual(status, 400, doc)
            self.assertEqual(doc["error"]["code"], "invalid_request")
            self.assertEqual(doc["error"]["message"], why)
        # Keys container runtimes read: refused unless the operator allows.
        status, doc = self.server.api(
            "POST", "/v1/sandboxes",
            {"env": {"OK": "1", "NVIDIA_VISIBLE_DEVICES": "all"}})
        self.assertEqual(status, 403, doc)
        self.assertEqual(doc["error"]["code"], "forbidden")
        self.assertIn("NVIDIA_VISIBLE_DEVICES", doc["error"]["message"])
        self.assertEqual(self.server.docker_objects(), before)
        # The floor itself is a real limit (0.01: a 1 ms quota per 100 ms).
        sb = self.server.create(cpus=floor)
        status, c = harness.container_inspect("agent-sandbox-" + sb["id"])
        self.assertEqual(status, 200)
        self.assertEqual(c["HostConfig"]["NanoCpus"], int(floor * 1e9))
        self.assertEqual(c["HostConfig"]["LogConfig"]["Type"], "none")
        self.server.api("DELETE", "/v1/sandboxes/" + sb["id"])

    def test_nonexistent_image_is_a_client_error_and_leaves_nothing(self):
        before = self.server.docker_objects()
        status, doc = self.server.api(
            "POST", "/v1/sandboxes",
            {"image": "agent-sandbox/does-not-exist:never"})
        self.assertEqual(status, 400, doc)
        self.assertEqual(doc["error"]["code"], "invalid_request")
        self.assertIn("cannot pull image", doc["error"]["message"])
        self.assertEqual(self.server.docker_objects(), before)

    def test_auth(self):
        path = "/v1/sandboxes"
        for hdrs in ({}, {"Authorization": ""},
                     {"Authorization": "Bearer wrong-key-000000000"},
                     {"Authorization": "Bearer wrong-key-000000000",
                      "X-API-Key": harness.TEST_KEY}):
            status, headers, body = self.server.request("GET", path,
                                                        headers=hdrs)
            self.assertEqual(status, 401, hdrs)
            self.assertEqual(headers["www-authenticate"], "Bearer")
            self.assertEqual(json.loads(body)["error"]["code"],
                             "unauthorized")
        for hdrs in ({"Authorization": "bearer " + harness.TEST_KEY},
                     {"Authorization": "", "X-API-Key": harness.TEST_KEY}):
            status, _, _ = self.server.request("GET", path, headers=hdrs)
            self.assertEqual(status, 200, hdrs)


class Hardening(ServerCase):
    def test_hardened_defaults(self):
        pids = 512 if harness.GVISOR else 64
        sb = self.create(cpus=0.5, memory_mb=128, pids_limit=pids)
        status, info = harness.container_inspect("agent-sandbox-" + sb["id"])
        self.assertEqual(status, 200)
        hc = info["HostConfig"]
        self.assertTrue(hc["ReadonlyRootfs"])
        self.assertEqual(hc["CapDrop"], ["ALL"])
        self.assertFalse(hc.get("CapAdd"))
        self.assertIn("no-new-privileges:true", hc["SecurityOpt"])
        self.assertEqual(hc["PidsLimit"], pids)
        self.assertEqual(hc["Memory"], 128 * 1024 * 1024)
        self.assertEqual(hc["MemorySwap"], hc["Memory"])
        self.assertEqual(hc["NanoCpus"], 500000000)
        self.assertEqual(hc["NetworkMode"], "none")
        self.assertFalse(hc["Privileged"])
        self.assertEqual(hc["IpcMode"], "private")
        self.assertTrue(hc["Init"])
        self.assertTrue(hc["Tmpfs"]["/tmp"].startswith(
            "rw,nosuid,nodev,size="))
        self.assertIsNone(hc["Binds"])
        self.assertEqual(info["Config"]["Hostname"], "sandbox")
        labels = info["Config"]["Labels"]
        self.assertEqual(labels["io.agent-sandbox.managed"], "true")
        self.assertEqual(labels["io.agent-sandbox.id"], sb["id"])
        self.assertEqual(labels["io.agent-sandbox.instance"],
                         self.server.instance_id())
        r = self.server.exec(sb["id"], "id -u")
        self.assertEqual(r["stdout"], "1000\n")
        r = self.server.exec(sb["id"], "grep CapEff /proc/self/status")
        self.assertRegex(r["stdout"], r"CapEff:\s+0+\n")
        if harness.GVISOR:
            # gVisor's /proc/<pid>/status has no NoNewPrivs line.
            self.assert_no_new_privs_by_prctl()
        else:
            r = self.server.exec(sb["id"],
                                 "grep NoNewPrivs /proc/self/status")
            self.assertRegex(r["stdout"], r"NoNewPrivs:\s+1\n")
        r = self.server.exec(sb["id"], "touch /etc/x")
        self.assertNotEqual(r["exit_code"], 0)
        r = self.server.exec(sb["id"], "ls /sys/class/net")
        self.assertEqual(r["stdout"].split(), ["lo"])
        # The sandbox user owns its workspace.
        r = self.server.exec(sb["id"],
                             "stat -c %u:%g /workspace && touch f && ls")
        self.assertEqual(r["exit_code"], 0, r)
        self.assertEqual(r["stdout"], "1000:1000\nf\n")

    def assert_no_new_privs_by_prctl(self):
        sb = self.create(image=harness.PY_IMAGE)
        r = self.server.exec(sb["id"], [
            "python3", "-c", "import ctypes; print(ctypes.CDLL(None)"
            ".prctl(39, 0, 0, 0, 0))"])     # PR_GET_NO_NEW_PRIVS
        self.assertEqual((r["exit_code"], r["stdout"]), (0, "1\n"), r)

    def test_writable_rootfs_when_asked(self):
        sb = self.create(read_only_rootfs=False)
        status, info = harness.container_inspect("agent-sandbox-" + sb["id"])
        self.assertFalse(info["HostConfig"]["ReadonlyRootfs"])
        r = self.server.exec(sb["id"], "touch /tmp/ok && touch /ok-root || "
                             "touch /home/ok 2>/dev/null; ls /tmp")
        self.assertIn("ok", r["stdout"])

    def test_network_sandbox_gets_isolated_bridge(self):
        sb = self.create(network=True)
        status, info = harness.container_inspect("agent-sandbox-" + sb["id"])
        nets = info["NetworkSettings"]["Networks"]
        self.assertEqual(list(nets), ["agent-sandbox-test-net"])
        status, body = harness.docker_request(
            "GET", "/networks/agent-sandbox-test-net")
        self.assertEqual(status, 200)
        opts = json.loads(body)["Options"]
        self.assertEqual(opts["com.docker.network.bridge.enable_icc"],
                         "false")

    def test_pids_limit_is_enforced(self):
        if harness.GVISOR:
            self.gvisor_pids_limit()
            return
        sb = self.create(pids_limit=32)
        r = self.server.exec(
            sb["id"], "for i in $(seq 100); do sleep 30 & done; wait",
            timeout_seconds=20)
        err = r["stderr"].lower()
        self.assertTrue("fork" in err or
                        "resource temporarily unavailable" in err, r)

    def gvisor_pids_limit(self):
        # gVisor's kernel takes about 9 host threads per process, so 200
        # processes pass a limit of 400: either the forks fail, or that
        # kernel loses threads it needs and stops, and the sandbox with
        # it. Either way the others, and the server, go on.
        other = self.create()
        sb = self.create(pids_limit=400)
        _, r = self.server.api("POST", "/v1/sandboxes/%s/exec" % sb["id"], {
            "command": "for i in $(seq 200); do sleep 30 & done; wait",
            "timeout_seconds": 20})
        err = str(r.get("stderr", "")).lower() if isinstance(r, dict) \
            else ""
        # Docker may take a moment to see a kernel that stopped.
        deadline = time.time() + 15
        while True:
            status, doc = self.server.api("GET",
                                          "/v1/sandboxes/" + sb["id"])
            self.assertEqual(status, 200, doc)
            if doc["status"] == "stopped" or time.time() > deadline:
                break
            time.sleep(0.5)
        self.assertTrue(doc["status"] == "stopped" or "fork" in err or
                        "resource temporarily unavailable" in err,
                        (doc, r))
        r = self.server.exec(other["id"], "echo alive")
        self.assertEqual(r["stdout"], "alive\n")


class Exec(ServerCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.sb = cls.server.create(env={"GREETING": "hello"})

    def test_blocking_exec(self):
        r = self.server.exec(self.sb["id"], "echo hi")
        self.assertEqual(sorted(r), sorted(["stdout", "stderr", "exit_code",
                                            "timed_out", "truncated",
                                            "duration_ms"]))
        self.assertEqual(r["stdout"], "hi\n")
        self.assertEqual(r["exit_code"], 0)
        self.assertFalse(r["timed_out"])
        self.assertFalse(r["truncated"])
        self.assertIsInstance(r["duration_ms"], int)

    def test_argv_is_not_split_or_expanded(self):
        r = self.server.exec(self.sb["id"],
                             ["printf", "%s|", "a b", "$HOME"])
        self.assertEqual(r["stdout"], "a b|$HOME|")

    def test_env_workdir_and_exit_code(self):
        r = self.server.exec(self.sb["id"],
                             "echo $GREETING $EXTRA; echo oops >&2; exit 7",
                             env={"EXTRA": "x"})
        self.assertEqual(r["stdout"], "hello x\n")
        self.assertEqual(r["stderr"], "oops\n")
        self.assertEqual(r["exit_code"], 7)
        r = self.server.exec(self.sb["id"], "pwd", workdir="/tmp")
        self.assertEqual(r["stdout"], "/tmp\n")
        r = self.server.exec(self.sb["id"], "pwd")
        self.assertEqual(r["stdout"], "/workspace\n")
        r = self.server.exec(self.sb["id"], "echo $HOME")
        self.assertEqual(r["stdout"], "/workspace\n")

    def test_stream(self):
        status, ctype, events = stream_events(
            self.server, self.sb["id"],
            {"command": "for i in 1 2 3; do echo $i; done; echo err >&2; "
                        "exit 4"})
        self.assertEqual(status, 200)
        self.assertTrue(ctype.startswith("application/x-ndjson"))
        out = "".join(e["data"] for e in events if e["type"] == "stdout")
        err = "".join(e["data"] for e in events if e["type"] == "stderr")
        self.assertEqual(out, "1\n2\n3\n")
        self.assertEqual(err, "err\n")
        self.assertEqual(events[-1]["type"], "exit")
        self.assertEqual(events[-1]["exit_code"], 4)
        self.assertFalse(events[-1]["timed_out"])
        self.assertEqual([e["type"] for e in events].count("exit"), 1)
        for e in events:
            self.assertLessEqual(set(e), {"type", "data", "exit_code",
                                          "timed_out", "duration_ms"})

    def test_stream_utf8_split_across_writes(self):
        status, _, events = stream_events(
            self.server, self.sb["id"],
            {"command": ["sh", "-c", "printf '\\303'; sleep 0.2; "
                         "printf '\\251\\n'"]})
        self.assertEqual(status, 200)
        out = "".join(e["data"] for e in events if e["type"] == "stdout")
        self.assertEqual(out, "\u00e9\n")

    def test_unknown_sandbox_is_404_before_streaming(self):
        status, ctype, doc = stream_events(self.server, "sb_0000000000000000",
                                           {"command": "echo hi"})
        self.assertEqual(status, 404)
        self.assertEqual(doc["error"]["code"], "not_found")
        status, doc = self.server.api(
            "POST", "/v1/sandboxes/sb_0000000000000000/exec",
            {"command": "echo hi"})
        self.assertEqual(status, 404)

    def test_bad_commands(self):
        path = "/v1/sandboxes/%s/exec" % self.sb["id"]
        for body, msg in (({"command": ""}, "command must not be empty"),
                          ({"command": "   "}, "command must not be empty"),
                          ({"command": []}, "command must be a non-empty "
                           "string or list of strings"),
                          ({"command": "true", "timeout_seconds": 1e9},
                           "timeout_seconds must be in (0, 3600]")):
            status, doc = self.server.api("POST", path, body)
            self.assertEqual(status, 400, body)
            self.assertEqual(doc["error"]["message"], msg)
        status, doc = self.server.api("POST", path, {"command": 5})
        self.assertEqual(status, 422)

    def test_timeout_kills_the_process_group(self):
        start = time.time()
        r = self.server.exec(self.sb["id"],
                             "sleep 300 & sleep 300; echo never",
                             timeout_seconds=1)
        self.assertLess(time.time() - start, 15)
        self.assertTrue(r["timed_out"])
        self.assertNotEqual(r["exit_code"], 0)
        self.assertNotIn("never", r["stdout"])
        left = self.server.exec(self.sb["id"], "ps -o args || ps")
        self.assertNotIn("sleep 300", left["stdout"])

    def test_timeout_kill_survives_a_new_session(self):
        # A child in its own session and process group still dies.
        r = self.server.exec(self.sb["id"],
                             "setsid sleep 301 & sleep 300",
                             timeout_seconds=1)
        self.assertTrue(r["timed_out"])
        time.sleep(0.5)
        left = self.server.exec(self.sb["id"], "ps -o args || ps")
        self.assertNotIn("sleep 301", left["stdout"])

    def test_client_disconnect_kills_the_command(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port,
                                          timeout=30)
        hdrs = dict(harness.AUTH)
        hdrs["Content-Type"] = "application/json"
        conn.request("POST", "/v1/sandboxes/%s/exec/stream" % self.sb["id"],
                     body=json.dumps({"command": "echo started; sleep 302",
                                      "timeout_seconds": 600}),
                     headers=hdrs)
        resp = conn.getresponse()
        self.assertEqual(resp.status, 200)
        self.assertIn(b"started", resp.readline())
        conn.sock.close()
        conn.close()
        deadline = time.time() + 10
        while time.time() < deadline:
            left = self.server.exec(self.sb["id"], "ps -o args || ps")
            if "sleep 302" not in left["stdout"]:
                break
            time.sleep(0.3)
        self.assertNotIn("sleep 302", left["stdout"])


class OutputCap(ServerCase):
    settings = {"AGENT_SANDBOX_MAX_EXEC_OUTPUT_BYTES": "100"}

    def test_combined_cap(self):
        sb = self.create()
        r = self.server.exec(sb["id"],
                             "printf '%080d' 0; sleep 0.2; "
                             "printf '%080d' 0 >&2")
        self.assertTrue(r["truncated"])
        self.assertEqual(len(r["stdout"]), 80)
        self.assertEqual(len(r["stderr"]), 20)


class QuotaAndTTL(ServerCase):
    settings = {"AGENT_SANDBOX_MAX_SANDBOXES": "2"}

    def test_quota(self):
        a = self.create()
        self.create()
        status, doc = self.server.api("POST", "/v1/sandboxes", {})
        self.assertEqual(status, 429)
        self.assertEqual(doc["error"]["code"], "limit_exceeded")
        self.server.api("DELETE", "/v1/sandboxes/" + a["id"])
        self.create()

    def test_failed_creates_do_not_leak_quota(self):
        for _ in range(4):
            status, _ = self.server.api(
                "POST", "/v1/sandboxes",
                {"image": "agent-sandbox/does-not-exist:never"})
            self.assertEqual(status, 400)
        self.create()

    def test_ttl_reaps(self):
        sb = self.server.create(timeout_seconds=1)
        name = "agent-sandbox-" + sb["id"]
        deadline = time.time() + 10
        while time.time() < deadline:
            status, _ = self.server.api("GET", "/v1/sandboxes/" + sb["id"])
            if status == 404:
                break
            time.sleep(0.2)
        self.assertEqual(status, 404)
        status, _ = harness.container_inspect(name)
        self.assertEqual(status, 404)


class Concurrency(ServerCase):
    settings = {"AGENT_SANDBOX_MAX_SANDBOXES": "8"}

    def test_64_parallel_execs_and_streams(self):
        boxes = [self.create()["id"] for _ in range(4)]
        results, errors = [], []

        def worker(i):
            command = "sleep 1; echo %d" % i
            try:
                if i % 2:
                    r = self.server.exec(boxes[i % 4], command)
                    results.append((i, r["stdout"]))
                    return
                status, _, events = stream_events(
                    self.server, boxes[i % 4], {"command": command})
                self.assertEqual(status, 200)
                self.assertEqual(events[-1]["exit_code"], 0)
                results.append((i, "".join(e.get("data", "")
                                           for e in events)))
            except Exception as exc:  # noqa: BLE001
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(i,))
                   for i in range(64)]
        start = time.time()
        for t in threads:
            t.start()
        # The rest of the API stays responsive meanwhile.
        status, _, _ = self.server.request("GET", "/healthz")
        self.assertEqual(status, 200)
        for t in threads:
            t.join(120)
        self.assertEqual(errors, [])
        self.assertEqual(sorted(results),
                         [(i, "%d\n" % i) for i in range(64)])
        # Had they run one after another this would take 64 s.
        self.assertLess(time.time() - start, 40)

    def test_slow_stream_reader_keeps_memory_bounded(self):
        sb = self.create()
        pids = harness.daemon_pids(self.server)
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port,
                                          timeout=30)
        hdrs = dict(harness.AUTH)
        hdrs["Content-Type"] = "application/json"
        conn.request("POST", "/v1/sandboxes/%s/exec/stream" % sb["id"],
                     body=json.dumps({"command": "yes",
                                      "timeout_seconds": 600}),
                     headers=hdrs)
        resp = conn.getresponse()
        self.assertEqual(resp.status, 200)
        resp.read(1024)
        time.sleep(1)
        base = {n: harness.rss_kib(p) for n, p in pids.items()}
        peak = dict(base)
        for _ in range(SLOW_READER_SECONDS):
            self.assertTrue(resp.read(1024))
            for n, p in pids.items():
                peak[n] = max(peak[n], harness.rss_kib(p))
            time.sleep(1)
        conn.sock.close()
        conn.close()
        for n in pids:
            self.assertLess(peak[n] - base[n], 2048,
                            "%s grew from %d to %d KiB" %
                            (n, base[n], peak[n]))


class Restart(unittest.TestCase):
    def test_restart_keeps_running_sandboxes_and_removes_orphans(self):
        server = harness.SandboxServer().start()
        try:
            keep = server.create(timeout_seconds=3600)
            orphan = server.create()
            server.stop()
            os.unlink(os.path.join(server.data_dir, "sandboxes",
                                   orphan["id"] + ".json"))
            server.start()
            status, got = server.api("GET", "/v1/sandboxes/" + keep["id"])
            self.assertEqual(status, 200)
            self.assertEqual(got["expires_at"], keep["expires_at"])
            self.assertEqual(got["status"], "running")
            containers, volumes = server.docker_objects()
            self.assertNotIn("agent-sandbox-" + orphan["id"], containers)
            self.assertNotIn("agent-sandbox-%s-workspace" % orphan["id"],
                             volumes)
            r = server.exec(keep["id"], "echo still here")
            self.assertEqual(r["stdout"], "still here\n")
        finally:
            server.cleanup()

    def test_two_servers_on_one_docker_leave_each_other_alone(self):
        a = harness.SandboxServer().start()
        b = harness.SandboxServer().start()
        try:
            self.assertNotEqual(a.instance_id(), b.instance_id())
            sa = a.create()
            sb = b.create()
            a.stop()
            a.start()     # A's orphan sweep must not see B's sandbox
            b.stop()
            b.start()
            for server, box in ((a, sa), (b, sb)):
                status, got = server.api("GET", "/v1/sandboxes/" + box["id"])
                self.assertEqual(status, 200)
                self.assertEqual(got["status"], "running")
            status, lst = a.api("GET", "/v1/sandboxes")
            self.assertEqual([s["id"] for s in lst["sandboxes"]], [sa["id"]])
        finally:
            a.cleanup()
            b.cleanup()

    def test_kill_9_during_creates_loses_no_acknowledged_sandbox(self):
        server = harness.SandboxServer(AGENT_SANDBOX_MAX_SANDBOXES="20")
        server.start()
        try:
            acked, lock = [], threading.Lock()

            def creator():
                for _ in range(3):
                    try:
                        status, doc = server.api("POST", "/v1/sandboxes", {},
                                                 timeout=60)
                    except OSError:
                        return
                    if status == 201:
                        with lock:
                            acked.append(doc["id"])

            threads = [threading.Thread(target=creator) for _ in range(5)]
            for t in threads:
                t.start()
            deadline = time.time() + 60
            while len(acked) < 3 and time.time() < deadline:
                time.sleep(0.05)
            server.kill9()
            for t in threads:
                t.join(60)
            with lock:
                acknowledged = list(acked)
            self.assertGreaterEqual(len(acknowledged), 3)
            server.start()
            status, lst = server.api("GET", "/v1/sandboxes")
            self.assertEqual(status, 200)
            listed = {s["id"]: s["status"] for s in lst["sandboxes"]}
            for sid in acknowledged:
                self.assertEqual(listed.get(sid), "running", sid)
            # Whatever was half made is gone from Docker too.  A Docker
            # request the killed proxy had sent may still complete after
            # the first reconciliation; the next start sweeps it.
            time.sleep(2)
            server.stop()
            server.start()
            status, lst = server.api("GET", "/v1/sandboxes")
            listed = {s["id"] for s in lst["sandboxes"]}
            self.assertTrue(set(acknowledged) <= listed)
            containers, volumes = server.docker_objects()
            self.assertEqual(sorted(containers),
                             sorted("agent-sandbox-" + s for s in listed))
            self.assertEqual(sorted(volumes),
                             sorted("agent-sandbox-%s-workspace" % s
                                    for s in listed))
        finally:
            server.cleanup()


if __name__ == "__main__":
    harness.require_root_and_docker()
    unittest.main(verbosity=2)
