"""Tenants against the real dockerd (docs/security.md "Tenants"): named
keys of a keys file, stored hashed; another tenant's sandboxes, snapshots
and processes answered exactly as ids that do not exist; lists filtered;
admins seeing all; the quotas (403 quota_exceeded, the snapshot bytes one
too) counted per tenant; requests per second (429 with Retry-After); a
SIGHUP reload under a kept-alive connection and a streamed exec; a broken
file on reload; a kill -9 that keeps each sandbox's tenant."""

import hashlib
import http.client
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

UNKNOWN_SB = "sb_0000000000000000"
UNKNOWN_SNAP = "snap_0000000000000000"
UNKNOWN_PROC = "proc_0000000000000000"


def new_key():
    return secrets.token_urlsafe(32)


def entry(name, tenant, key, admin=False, **quotas):
    e = {"name": name, "tenant": tenant,
         "sha256": hashlib.sha256(key.encode()).hexdigest()}
    if admin:
        e["admin"] = True
    if quotas:
        e["quotas"] = quotas
    return e


def write_keys(path, entries):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"keys": entries}, f, indent=2)
        f.write("\n")
    os.rename(tmp, path)


def call(server, key, method, path, body=None, raw=None, headers=None,
         timeout=120):
    """(status, headers, parsed JSON or bytes) as the holder of key."""
    hdrs = {"Authorization": "Bearer " + key} if key else {}
    hdrs.update(headers or {})
    data = raw
    if body is not None:
        data = json.dumps(body).encode()
        hdrs["Content-Type"] = "application/json"
    status, rh, out = server.request(method, path, body=data, headers=hdrs,
                                     timeout=timeout)
    try:
        return status, rh, json.loads(out) if out else None
    except ValueError:
        return status, rh, out


def wait_log(server, text, since, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if text in server.log_text()[since:]:
            return
        time.sleep(0.05)
    raise AssertionError("no %r in the log:\n%s" %
                         (text, server.log_text()[since:]))


class TenantCase(unittest.TestCase):
    """One server, a flat admin key and a keys file of several tenants."""

    @classmethod
    def setUpClass(cls):
        cls.keys = {n: new_key() for n in
                    ("alice", "alice2", "bob", "ops", "rater", "qsb",
                     "qcpu", "qmem", "qsnap", "qt1", "qt2")}
        k = cls.keys
        cls.entries = [
            entry("alice", "team-a", k["alice"]),
            entry("alice2", "team-a", k["alice2"]),
            entry("bob", "team-b", k["bob"]),
            entry("ops", "ops", k["ops"], admin=True),
            entry("rater", "team-r", k["rater"], requests_per_second=1,
                  burst=2),
            entry("qsb", "q-sb", k["qsb"], sandboxes=1),
            entry("qcpu", "q-cpu", k["qcpu"], cpus=1.0),
            entry("qmem", "q-mem", k["qmem"], memory_mb=200),
            entry("qsnap", "q-snap", k["qsnap"], snapshot_bytes=200000),
            entry("qt1", "q-t", k["qt1"], sandboxes=1),
            entry("qt2", "q-t", k["qt2"], sandboxes=1),
        ]
        cls.tmpdir = tempfile.mkdtemp(prefix="as-keys-")
        cls.keys_path = os.path.join(cls.tmpdir, "keys.json")
        write_keys(cls.keys_path, cls.entries)
        # At debug managerd logs each request's caller: no secret in it.
        cls.server = harness.SandboxServer(
            AGENT_SANDBOX_KEYS_FILE=cls.keys_path,
            AGENT_SANDBOX_LOG_LEVEL="debug").start()

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()
        shutil.rmtree(cls.tmpdir, ignore_errors=True)

    def as_(self, who, method, path, body=None, **kw):
        key = harness.TEST_KEY if who == "admin" else self.keys[who]
        return call(self.server, key, method, path, body=body, **kw)

    def create(self, who, **spec):
        status, _, doc = self.as_(who, "POST", "/v1/sandboxes", spec)
        self.assertEqual(status, 201, doc)
        self.addCleanup(self.as_, "admin", "DELETE",
                        "/v1/sandboxes/" + doc["id"])
        return doc

    def snap(self, who, sandbox_id):
        status, _, doc = self.as_(who, "POST",
                                  "/v1/sandboxes/%s/snapshots" % sandbox_id,
                                  {})
        self.assertEqual(status, 201, doc)
        self.addCleanup(self.as_, "admin", "DELETE",
                        "/v1/snapshots/" + doc["id"])
        return doc

    def assert_quota(self, status, doc, words):
        self.assertEqual(status, 403, doc)
        self.assertEqual(set(doc), {"error"})
        self.assertEqual(doc["error"]["code"], "quota_exceeded")
        self.assertIn(words, doc["error"]["message"])


class Isolation(TenantCase):
    def assert_as_unknown(self, who, method, path, real, unknown,
                          body=None):
        """Another tenant's id is answered as an id never made: the same
        status, and the same body once the ids are swapped."""
        s1, _, d1 = self.as_(who, method, path % real, body)
        s2, _, d2 = self.as_(who, method, path % unknown, body)
        self.assertEqual(s1, 404, (path, d1))
        self.assertEqual(s2, 404, (path, d2))
        self.assertEqual(json.dumps(d1).replace(real, "X"),
                         json.dumps(d2).replace(unknown, "X"), path)

    def test_sandbox_routes(self):
        sb = self.create("alice")["id"]
        for method, path, body in [
                ("GET", "/v1/sandboxes/%s", None),
                ("POST", "/v1/sandboxes/%s/timeout", {"timeout_seconds": 60}),
                ("POST", "/v1/sandboxes/%s/exec", {"command": "true"}),
                ("POST", "/v1/sandboxes/%s/exec/stream", {"command": "true"}),
                ("GET", "/v1/sandboxes/%s/files?path=/workspace", None),
                ("GET", "/v1/sandboxes/%s/files/list?path=/workspace", None),
                ("POST", "/v1/sandboxes/%s/snapshots", {}),
                ("GET", "/v1/sandboxes/%s/processes", None),
                ("POST", "/v1/sandboxes/%s/processes", {"command": "true"}),
                ("PATCH", "/v1/sandboxes/%s", {"labels": {"owner": "bob"}}),
                ("GET", "/v1/sandboxes/%s/stats", None),
                ("DELETE", "/v1/sandboxes/%s", None)]:
            self.assert_as_unknown("bob", method, path, sb, UNKNOWN_SB, body)
        status, _, _ = call(self.server, self.keys["bob"], "PUT",
                            "/v1/sandboxes/%s/files?path=/workspace/x" % sb,
                            raw=b"hello",
                            headers={"Content-Type":
                                     "application/octet-stream"})
        self.assertEqual(status, 404)
        # Still there, and still alice's: nothing bob did reached it.
        status, _, doc = self.as_("alice", "GET", "/v1/sandboxes/" + sb)
        self.assertEqual(status, 200, doc)
        self.assertEqual(doc["labels"], {}, "bob's PATCH reached it")
        # The same tenant's other key sees it; the admins do.
        for who in ("alice2", "admin", "ops"):
            self.assertEqual(self.as_(who, "GET", "/v1/sandboxes/" + sb)[0],
                             200, who)

    def test_lists_filtered(self):
        a = self.create("alice")["id"]
        b = self.create("bob")["id"]
        ids = {w: [s["id"] for s in self.as_(w, "GET", "/v1/sandboxes")[2]
                   ["sandboxes"]] for w in ("alice", "bob", "admin", "ops")}
        self.assertIn(a, ids["alice"])
        self.assertNotIn(b, ids["alice"])
        self.assertIn(b, ids["bob"])
        self.assertNotIn(a, ids["bob"])
        for who in ("admin", "ops"):
            self.assertIn(a, ids[who])
            self.assertIn(b, ids[who])

    def test_label_filter_stays_in_the_tenant(self):
        """The same label on two tenants' sandboxes: a filtered list is
        still one tenant's (the label filter and the tenant's both)."""
        a = self.create("alice", labels={"job": "ci-1"})["id"]
        b = self.create("bob", labels={"job": "ci-1"})["id"]
        q = "/v1/sandboxes?label=job=ci-1"
        seen = {w: sorted(s["id"] for s in self.as_(w, "GET", q)[2]
                          ["sandboxes"]) for w in ("alice", "bob", "ops")}
        self.assertEqual(seen["alice"], [a])
        self.assertEqual(seen["bob"], [b])
        self.assertEqual(seen["ops"], sorted([a, b]))

    def test_snapshots(self):
        a = self.create("alice")["id"]
        b = self.create("bob")["id"]
        snap = self.snap("alice", a)["id"]
        self.assert_as_unknown("bob", "GET", "/v1/snapshots/%s", snap,
                               UNKNOWN_SNAP)
        self.assert_as_unknown("bob", "POST", "/v1/snapshots/%s/fork", snap,
                               UNKNOWN_SNAP, {})
        # bob's own sandbox, alice's snapshot: the snapshot is not found.
        s1, _, d1 = self.as_("bob", "POST", "/v1/sandboxes/%s/rollback" % b,
                             {"snapshot_id": snap})
        s2, _, d2 = self.as_("bob", "POST", "/v1/sandboxes/%s/rollback" % b,
                             {"snapshot_id": UNKNOWN_SNAP})
        self.assertEqual((s1, s2), (404, 404))
        self.assertEqual(d1["error"]["message"].replace(snap, "X"),
                         d2["error"]["message"].replace(UNKNOWN_SNAP, "X"))
        self.assert_as_unknown("bob", "DELETE", "/v1/snapshots/%s", snap,
                               UNKNOWN_SNAP)
        lists = {w: [s["id"] for s in self.as_(w, "GET", "/v1/snapshots")[2]
                     ["snapshots"]] for w in ("alice", "bob", "ops")}
        self.assertIn(snap, lists["alice"])
        self.assertNotIn(snap, lists["bob"])
        self.assertIn(snap, lists["ops"])
        status, _, doc = self.as_("bob", "GET",
                                  "/v1/snapshots?sandbox_id=" + a)
        self.assertEqual((status, doc["snapshots"]), (200, []))
        # Still alice's to use.
        self.assertEqual(self.as_("alice", "GET",
                                  "/v1/snapshots/" + snap)[0], 200)

    def test_processes(self):
        sb = self.create("alice")["id"]
        status, _, p = self.as_("alice", "POST",
                                "/v1/sandboxes/%s/processes" % sb,
                                {"command": "sleep 30"})
        self.assertEqual(status, 201, p)
        pid = p["id"]
        for method, path, body in [
                ("GET", "/v1/sandboxes/%s/processes/" + pid, None),
                ("GET", "/v1/sandboxes/%s/processes/" + pid + "/output",
                 None),
                ("POST", "/v1/sandboxes/%s/processes/" + pid + "/signal",
                 {"signal": "TERM"}),
                ("POST", "/v1/sandboxes/%s/processes/" + pid +
                 "/attach-token", None),
                ("DELETE", "/v1/sandboxes/%s/processes/" + pid, None)]:
            self.assert_as_unknown("bob", method, path, sb, UNKNOWN_SB, body)
        status, _, _ = call(self.server, self.keys["bob"], "POST",
                            "/v1/sandboxes/%s/processes/%s/stdin" % (sb, pid),
                            raw=b"x", headers={"Content-Type":
                                               "application/octet-stream"})
        self.assertEqual(status, 404)
        # A WebSocket attach with bob's key: 404 before any upgrade.
        status, _, _ = call(self.server, self.keys["bob"], "GET",
                            "/v1/sandboxes/%s/processes/%s/attach" % (sb, pid),
                            headers={"Upgrade": "websocket",
                                     "Connection": "Upgrade",
                                     "Sec-WebSocket-Version": "13",
                                     "Sec-WebSocket-Key":
                                     "dGhlIHNhbXBsZSBub25jZQ=="})
        self.assertEqual(status, 404)
        status, _, doc = self.as_("alice", "GET",
                                  "/v1/sandboxes/%s/processes/%s" % (sb, pid))
        self.assertEqual((status, doc["status"]), (200, "running"))

    def test_caller_reaches_managerd(self):
        """What apid tells managerd of each request (MSG_CALLER): the
        route's template, the client's address, the key's name and
        tenant."""
        since = len(self.server.log_text())
        self.as_("bob", "GET", "/v1/sandboxes/" + UNKNOWN_SB)
        self.as_("ops", "GET", "/v1/snapshots")
        wait_log(self.server, 'GET /v1/snapshots from 127.0.0.1:', since)
        log = self.server.log_text()[since:]
        self.assertRegex(log, r'GET /v1/sandboxes/\{sandbox_id\} from '
                         r'127\.0\.0\.1:\d+, key "bob" of tenant "team-b"\n')
        self.assertRegex(log, r'GET /v1/snapshots from 127\.0\.0\.1:\d+, '
                         r'key "ops" of tenant "ops" \(admin\)\n')

    def test_nothing_secret_logged(self):
        self.create("alice")
        log = self.server.log_text()
        for name, key in self.keys.items():
            self.assertNotIn(key, log, name)
            self.assertNotIn(hashlib.sha256(key.encode()).hexdigest(), log)


class Quotas(TenantCase):
    def test_sandboxes(self):
        self.create("qsb")
        status, _, doc = self.as_("qsb", "POST", "/v1/sandboxes", {})
        self.assert_quota(status, doc, "sandboxes")

    def test_sandboxes_count_per_tenant(self):
        # qt1 and qt2 share q-t, each with a quota of 1: one between them.
        self.create("qt1")
        status, _, doc = self.as_("qt2", "POST", "/v1/sandboxes", {})
        self.assert_quota(status, doc, "the tenant has 1 sandboxes")
        # Keys without quotas of one tenant are not held back.
        self.create("alice")
        self.create("alice2")

    def test_cpus_and_memory(self):
        self.create("qcpu", cpus=0.75)
        status, _, doc = self.as_("qcpu", "POST", "/v1/sandboxes",
                                  {"cpus": 0.5})
        self.assert_quota(status, doc, "cpus")
        self.create("qcpu", cpus=0.25)
        self.create("qmem", memory_mb=128)
        status, _, doc = self.as_("qmem", "POST", "/v1/sandboxes",
                                  {"memory_mb": 128})
        self.assert_quota(status, doc, "memory")

    def test_fork_over_quota(self):
        sb = self.create("qsb")["id"]
        snap = self.snap("qsb", sb)["id"]
        status, _, doc = self.as_("qsb", "POST",
                                  "/v1/snapshots/%s/fork" % snap, {})
        self.assert_quota(status, doc, "sandboxes")

    def test_snapshot_bytes(self):
        sb = self.create("qsnap")["id"]
        first = self.snap("qsnap", sb)
        self.assertLess(first["size_bytes"], 200000)
        status, _, doc = self.as_("qsnap", "POST",
                                  "/v1/sandboxes/%s/exec" % sb,
                                  {"command": "head -c 300000 /dev/urandom "
                                   "> /workspace/big"})
        self.assertEqual((status, doc["exit_code"]), (200, 0), doc)
        status, _, doc = self.as_("qsnap", "POST",
                                  "/v1/sandboxes/%s/snapshots" % sb, {})
        self.assert_quota(status, doc, "bytes left of its key's snapshot "
                          "quota of 200000 bytes")
        # Nothing stored for the failed one: only the first is listed.
        status, _, doc = self.as_("qsnap", "GET", "/v1/snapshots")
        self.assertEqual([s["id"] for s in doc["snapshots"]], [first["id"]])

    def test_requests_per_second(self):
        codes = [self.as_("rater", "GET", "/v1/sandboxes")
                 for _ in range(3)]
        self.assertEqual([c[0] for c in codes[:2]], [200, 200])
        status, hdrs, doc = codes[2]
        self.assertEqual(status, 429, doc)
        self.assertEqual(doc["error"]["code"], "limit_exceeded")
        wait = int(hdrs["retry-after"])
        self.assertGreaterEqual(wait, 1)
        time.sleep(wait)
        self.assertEqual(self.as_("rater", "GET", "/v1/sandboxes")[0], 200)
        # Another key is not held back by this one's bucket.
        self.assertEqual(self.as_("bob", "GET", "/v1/sandboxes")[0], 200)


class Reload(unittest.TestCase):
    """SIGHUP re-reads the file through the spawner, connections kept."""

    def setUp(self):
        self.keys = {n: new_key() for n in ("k1", "k2", "k3")}
        self.tmpdir = tempfile.mkdtemp(prefix="as-keys-")
        self.path = os.path.join(self.tmpdir, "keys.json")
        write_keys(self.path, [
            entry("k1", "t1", self.keys["k1"], sandboxes=1),
            entry("k2", "t2", self.keys["k2"])])
        self.server = harness.SandboxServer(
            AGENT_SANDBOX_KEYS_FILE=self.path).start()
        self.addCleanup(shutil.rmtree, self.tmpdir, True)
        self.addCleanup(self.server.cleanup)

    def hup(self, expect):
        since = len(self.server.log_text())
        os.kill(self.server.proc.pid, signal.SIGHUP)
        wait_log(self.server, expect, since)

    def test_reload(self):
        k = self.keys
        status, _, sb = call(self.server, k["k1"], "POST", "/v1/sandboxes",
                             {})
        self.assertEqual(status, 201, sb)
        status, _, doc = call(self.server, k["k1"], "POST", "/v1/sandboxes",
                              {})
        self.assertEqual(status, 403, doc)
        # A kept-alive connection, and a streamed exec across the reload.
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port,
                                          timeout=60)
        auth = {"Authorization": "Bearer " + k["k1"]}
        conn.request("GET", "/v1/sandboxes", headers=auth)
        resp = conn.getresponse()
        self.assertEqual(resp.status, 200)
        resp.read()
        sock = conn.sock
        result = {}

        def stream():
            c = http.client.HTTPConnection("127.0.0.1", self.server.port,
                                           timeout=60)
            c.request("POST", "/v1/sandboxes/%s/exec/stream" % sb["id"],
                      body=json.dumps({"command": "for i in 1 2 3 4; do "
                                       "echo $i; sleep 1; done"}),
                      headers=dict(auth, **{"Content-Type":
                                            "application/json"}))
            r = c.getresponse()
            result["status"] = r.status
            result["events"] = [json.loads(ln) for ln in r.read().split(b"\n")
                                if ln.strip()]
            c.close()
        t = threading.Thread(target=stream)
        t.start()
        time.sleep(1.2)
        write_keys(self.path, [
            entry("k1", "t1", k["k1"], sandboxes=2),
            entry("k3", "t3", k["k3"])])
        self.hup("keys file reloaded: 2 keys")
        self.assertEqual(call(self.server, k["k3"], "GET",
                              "/v1/sandboxes")[0], 200)
        self.assertEqual(call(self.server, k["k2"], "GET",
                              "/v1/sandboxes")[0], 401)
        status, _, doc = call(self.server, k["k1"], "POST", "/v1/sandboxes",
                              {})
        self.assertEqual(status, 201, doc)
        conn.request("GET", "/v1/sandboxes", headers=auth)
        resp = conn.getresponse()
        self.assertEqual(resp.status, 200)
        self.assertEqual(len(json.loads(resp.read())["sandboxes"]), 2)
        self.assertIs(conn.sock, sock, "the connection was not kept")
        t.join(60)
        self.assertEqual(result.get("status"), 200)
        out = "".join(e.get("data", "") for e in result["events"]
                      if e.get("type") == "stdout")
        self.assertEqual(out, "1\n2\n3\n4\n")
        self.assertEqual(result["events"][-1]["type"], "exit")
        # A broken file: logged, never quoted; the table in use stays.
        with open(self.path, "w") as f:
            f.write('{"keys": [{"name": "k4", "sha256": "%s"' %
                    hashlib.sha256(k["k2"].encode()).hexdigest())
        self.hup("the keys file was not reloaded")
        self.assertEqual(call(self.server, k["k3"], "GET",
                              "/v1/sandboxes")[0], 200)
        self.assertEqual(call(self.server, k["k2"], "GET",
                              "/v1/sandboxes")[0], 401)
        log = self.server.log_text()
        self.assertNotIn(hashlib.sha256(k["k2"].encode()).hexdigest(), log)
        for key in k.values():
            self.assertNotIn(key, log)
        conn.close()
        for s in call(self.server, harness.TEST_KEY, "GET",
                      "/v1/sandboxes")[2]["sandboxes"]:
            call(self.server, harness.TEST_KEY, "DELETE",
                 "/v1/sandboxes/" + s["id"])


class Restart(unittest.TestCase):
    def test_kill9_keeps_tenants(self):
        keys = {"a": new_key(), "b": new_key()}
        tmpdir = tempfile.mkdtemp(prefix="as-keys-")
        self.addCleanup(shutil.rmtree, tmpdir, True)
        path = os.path.join(tmpdir, "keys.json")
        write_keys(path, [entry("a", "ta", keys["a"]),
                          entry("b", "tb", keys["b"])])
        server = harness.SandboxServer(AGENT_SANDBOX_KEYS_FILE=path).start()
        self.addCleanup(server.cleanup)
        status, _, sb = call(server, keys["a"], "POST", "/v1/sandboxes", {})
        self.assertEqual(status, 201, sb)
        server.kill9()
        server.start()
        self.assertEqual(call(server, keys["a"], "GET",
                              "/v1/sandboxes/" + sb["id"])[0], 200)
        self.assertEqual(call(server, keys["b"], "GET",
                              "/v1/sandboxes/" + sb["id"])[0], 404)
        status, _, doc = call(server, keys["b"], "GET", "/v1/sandboxes")
        self.assertEqual((status, doc["sandboxes"]), (200, []))
        call(server, keys["a"], "DELETE", "/v1/sandboxes/" + sb["id"])


class ApidRestart(TenantCase):
    def test_restarted_apid_gets_the_table(self):
        """managerd sends the table again to an apid it started again."""
        old = self.server.children()["apid"]
        os.kill(old, signal.SIGKILL)
        deadline = time.time() + 20
        status = None
        while time.time() < deadline:
            pid = self.server.children().get("apid")
            if pid is not None and pid != old:
                try:
                    status = self.as_("bob", "GET", "/v1/sandboxes")[0]
                except OSError:
                    status = None
                if status == 200:
                    break
            time.sleep(0.1)
        self.assertEqual(status, 200)
        self.assertEqual(self.as_("ops", "GET", "/v1/sandboxes")[0], 200)


class HashKey(unittest.TestCase):
    """agent-sandbox hash-key: the entry to paste, the key on stdin."""
    CLI = os.path.join(harness.BUILDDIR, "client", "agent-sandbox")

    def run_cli(self, args, stdin=b""):
        p = subprocess.run([self.CLI, "hash-key"] + args, input=stdin,
                           capture_output=True, timeout=30)
        return p.returncode, p.stdout.decode(), p.stderr.decode()

    def test_entry_of_a_key(self):
        key = new_key()
        rc, out, err = self.run_cli(["--name", "ci", "--tenant", "team-a"],
                                    (key + "\n").encode())
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out), entry("ci", "team-a", key))
        self.assertNotIn(key, out + err)

    def test_generate(self):
        rc, out, err = self.run_cli(["--generate", "--name", "a", "--tenant",
                                     "t", "--admin"])
        self.assertEqual(rc, 0, err)
        key, line = out.splitlines()
        self.assertRegex(key, r"^[A-Za-z0-9_-]{43}$")
        self.assertEqual(json.loads(line), entry("a", "t", key, admin=True))
        # Each run another key.
        self.assertNotEqual(self.run_cli(["--generate"])[1].split()[0], key)

    def test_refused(self):
        self.assertEqual(self.run_cli([], b"short\n")[0], 1)
        self.assertEqual(self.run_cli([], b"a" * 30 + b" b\n")[0], 1)
        self.assertEqual(self.run_cli([], b"a" * 5000)[0], 1)
        # Never a key as an argument, where ps would show it.
        self.assertEqual(self.run_cli([new_key()])[0], 2)
        self.assertEqual(self.run_cli(["--name", "key-1"], b"a" * 30)[0], 2)
        self.assertEqual(self.run_cli(["--tenant", "t\xe9"], b"a" * 30)[0],
                         2)


class StartUp(unittest.TestCase):
    """A keys file that does not parse is a configuration error (2)."""

    def check(self, text):
        tmpdir = tempfile.mkdtemp(prefix="as-keys-")
        self.addCleanup(shutil.rmtree, tmpdir, True)
        path = os.path.join(tmpdir, "keys.json")
        with open(path, "wb") as f:
            f.write(text)
        managerd, libexec = harness.binaries()
        self.addCleanup(harness.binaries_release, libexec)
        env = {"PATH": "/usr/bin:/bin",
               "AGENT_SANDBOX_KEYS_FILE": path,
               "AGENT_SANDBOX_DATA_DIR": os.path.join(tmpdir, "data")}
        cmd = managerd if isinstance(managerd, list) else [managerd]
        p = subprocess.run(cmd + ["-n"], env=env, capture_output=True,
                           timeout=30)
        return p.returncode, p.stderr.decode("utf-8", "replace")

    def test_bad_files(self):
        key = hashlib.sha256(b"x" * 32).hexdigest()
        for text in [b"not json", b'{"keys": [{"name": "a", "tenant": "t", '
                     b'"sha256": "' + key[:-1].encode() + b'"}]}',
                     b'{"keys": [{"name": "a\xff", "tenant": "t", '
                     b'"sha256": "' + key.encode() + b'"}]}']:
            rc, err = self.check(text)
            self.assertEqual(rc, 2, err)
            self.assertIn("configuration error: AGENT_SANDBOX_KEYS_FILE", err)
            self.assertNotIn(key[:-1], err)
        rc, err = self.check(b'{"keys": [{"name": "a", "tenant": "t", '
                             b'"sha256": "' + key.encode() + b'"}]}')
        self.assertEqual(rc, 0, err)
        # The example the docs point at is a file the server takes.
        with open(os.path.join(harness.SRCDIR, "etc",
                               "agent-sandbox.keys.example.json"), "rb") as f:
            rc, err = self.check(f.read())
        self.assertEqual(rc, 0, err)


if __name__ == "__main__":
    harness.require_root_and_docker()
    unittest.main()
