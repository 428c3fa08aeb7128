"""Processes that outlive a request, against the real dockerd
(docs/rest-api.md, "Processes"): a command that survives its client and
replays whole, `after` giving exactly the missing events, a writer faster
than any reader bounded in every daemon's memory with an exact gap, stdin,
signals to the whole group, DELETE of the whole tree, client_id retries in
parallel, apid killed during a follow, a restart of the whole server, the
sandbox's end taking its processes along, and the odd inputs."""
import base64
import http.client
import json
import os
import signal
import sys
import threading
import time
import unittest
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

PROCESS_KEYS = {"id", "sandbox_id", "command", "workdir", "status",
                "running", "exit_code", "started_at", "ended_at",
                "timeout_seconds", "tty", "stdin", "cols", "rows",
                "client_id", "output_bytes", "kept_bytes", "dropped_bytes"}
# How long the "long" command runs (the ten minutes, shortened).
LONG_SECONDS = float(os.environ.get("PROCESS_LONG_SECONDS", "6"))
MIB = 1024 * 1024


def path(sb, pid=None, tail=""):
    p = "/v1/sandboxes/%s/processes" % sb
    if pid is not None:
        p += "/" + pid
    return p + tail


class Stream:
    """A GET of .../output read line by line; close() walks away."""

    def __init__(self, server, sb, pid, **query):
        self.conn = http.client.HTTPConnection("127.0.0.1", server.port,
                                               timeout=60)
        q = urllib.parse.urlencode(
            {k: (str(v).lower() if isinstance(v, bool) else v)
             for k, v in query.items()})
        self.conn.request("GET", path(sb, pid, "/output") +
                          ("?" + q if q else ""), headers=harness.AUTH)
        self.resp = self.conn.getresponse()
        self.status = self.resp.status

    def events(self):
        for line in self.resp:
            yield json.loads(line)

    def close(self):
        self.conn.close()


class ProcessCase(unittest.TestCase):
    settings = {}

    @classmethod
    def setUpClass(cls):
        cls.server = harness.SandboxServer(**cls.settings).start()
        cls.sb = cls.server.create()["id"]

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def start(self, command, expect=201, **kw):
        body = {"command": command}
        body.update(kw)
        status, doc = self.server.api("POST", path(self.sb), body)
        self.assertEqual(status, expect, doc)
        return doc

    def get(self, pid):
        status, doc = self.server.api("GET", path(self.sb, pid))
        self.assertEqual(status, 200, doc)
        return doc

    def wait_end(self, pid, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            doc = self.get(pid)
            if doc["status"] != "running":
                return doc
            time.sleep(0.1)
        self.fail("process %s still running: %r" % (pid, doc))

    def output(self, pid, **query):
        s = Stream(self.server, self.sb, pid, **query)
        try:
            self.assertEqual(s.status, 200)
            return list(s.events())
        finally:
            s.close()

    def text(self, events):
        return "".join(e["data"] for e in events
                       if e["type"] in ("stdout", "stderr"))


class Lifecycle(ProcessCase):
    def test_long_command_survives_its_client_and_replays_whole(self):
        n = int(LONG_SECONDS * 10)
        doc = self.start("i=0; while [ $i -lt %d ]; do i=$((i+1)); "
                         "echo line $i; sleep 0.1; done" % n,
                         client_id="long-1")
        self.assertEqual(set(doc), PROCESS_KEYS)
        self.assertEqual(doc["status"], "running")
        self.assertTrue(doc["id"].startswith("proc_"))
        # A follower that walks away after a few lines changes nothing.
        s = Stream(self.server, self.sb, doc["id"], follow=True)
        got = []
        for ev in s.events():
            got.append(ev)
            if len(got) == 3:
                break
        s.close()
        end = self.wait_end(doc["id"], timeout=LONG_SECONDS + 60)
        self.assertEqual(end["status"], "exited")
        self.assertEqual(end["exit_code"], 0)
        self.assertIsNotNone(end["ended_at"])
        events = self.output(doc["id"])
        want = "".join("line %d\n" % i for i in range(1, n + 1))
        self.assertEqual(self.text(events), want)
        self.assertEqual(events[-1]["type"], "exit")
        self.assertEqual(events[-1]["exit_code"], 0)
        self.assertEqual(events[-1]["seq"], len(want))
        self.assertEqual(end["output_bytes"], len(want))
        self.assertEqual(end["dropped_bytes"], 0)
        # seq counts bytes: each event's seq is where its data ends.
        pos = 0
        for ev in events[:-1]:
            pos += len(ev["data"].encode())
            self.assertEqual(ev["seq"], pos)

    def test_after_replays_exactly_the_missing_events(self):
        doc = self.start("for i in 1 2 3 4 5 6 7 8; do echo out $i; "
                         "echo err $i >&2; sleep 0.05; done")
        self.wait_end(doc["id"])
        events = self.output(doc["id"])
        data = [e for e in events if "seq" in e and e["type"] != "exit"]
        self.assertGreater(len(data), 2)
        for k in range(len(data)):
            rest = self.output(doc["id"], after=data[k]["seq"])
            self.assertEqual(rest[:-1], data[k + 1:])
            self.assertEqual(rest[-1]["type"], "exit")
        # Mid-event: the rest of that event, then the others.
        mid = data[1]["seq"] - 2
        rest = self.output(doc["id"], after=mid)
        self.assertEqual(rest[0]["seq"], data[1]["seq"])
        self.assertEqual(rest[0]["data"], data[1]["data"][-2:])
        # stdout and stderr are told apart.
        self.assertIn("stderr", {e["type"] for e in data})
        self.assertIn("err 3\n", self.text(
            [e for e in data if e["type"] == "stderr"]))

    def test_follow_sees_live_output_and_ends_with_exit(self):
        doc = self.start("echo a; sleep 1; echo b; exit 3")
        s = Stream(self.server, self.sb, doc["id"], follow=True)
        events = list(s.events())
        s.close()
        self.assertEqual(self.text(events), "a\nb\n")
        self.assertEqual(events[-1]["type"], "exit")
        self.assertEqual(events[-1]["status"], "exited")
        self.assertEqual(events[-1]["exit_code"], 3)

    def test_list_in_start_order_and_delete(self):
        a = self.start(["sleep", "30"])
        b = self.start(["true"])
        status, doc = self.server.api("GET", path(self.sb))
        self.assertEqual(status, 200)
        ids = [p["id"] for p in doc["processes"]]
        self.assertLess(ids.index(a["id"]), ids.index(b["id"]))
        for p in (a, b):
            status, _ = self.server.api("DELETE", path(self.sb, p["id"]))
            self.assertEqual(status, 204)
            status, err = self.server.api("GET", path(self.sb, p["id"]))
            self.assertEqual(status, 404)
            self.assertEqual(err["error"]["code"], "not_found")
        # The sleep is gone from the sandbox too.
        ps = self.server.exec(self.sb, "ps -o args")["stdout"]
        self.assertNotIn("sleep 30", ps)

    def test_timeout(self):
        doc = self.start(["sleep", "60"], timeout_seconds=1)
        self.assertEqual(doc["timeout_seconds"], 1)
        end = self.wait_end(doc["id"], timeout=30)
        self.assertEqual(end["status"], "timed_out")
        events = self.output(doc["id"])
        self.assertEqual(events[-1]["status"], "timed_out")
        self.server.api("DELETE", path(self.sb, doc["id"]))


class StdinAndSignals(ProcessCase):
    def test_stdin_round_trip(self):
        doc = self.start(["cat"], stdin=True)
        self.assertTrue(doc["stdin"])
        status, _, _ = self.server.request(
            "POST", path(self.sb, doc["id"], "/stdin"),
            body="hello\n".encode(), headers=harness.AUTH)
        self.assertEqual(status, 204)
        payload = bytes(range(256)) * 64
        status, _, _ = self.server.request(
            "POST", path(self.sb, doc["id"], "/stdin?close=true"),
            body=payload, headers=harness.AUTH)
        self.assertEqual(status, 204)
        end = self.wait_end(doc["id"])
        self.assertEqual(end["exit_code"], 0)
        raw = b"".join(base64.b64decode(e["data"]) for e in
                       self.output(doc["id"], encoding="base64")
                       if e["type"] == "stdout")
        self.assertEqual(raw, b"hello\n" + payload)
        # Its stdin is closed now.
        status, err = self.server.api(
            "POST", path(self.sb, doc["id"], "/stdin"), body=b"more")
        self.assertEqual(status, 409, err)

    def test_stdin_refused_without_stdin(self):
        doc = self.start(["sleep", "30"])
        status, err = self.server.api(
            "POST", path(self.sb, doc["id"], "/stdin"), body=b"x")
        self.assertEqual(status, 409, err)
        self.server.api("DELETE", path(self.sb, doc["id"]))

    def test_signal_reaches_the_whole_group(self):
        doc = self.start("sleep 301 & sleep 302 & echo started; wait")
        s = Stream(self.server, self.sb, doc["id"], follow=True)
        next(s.events())
        ps = self.server.exec(self.sb, "ps -o args")["stdout"]
        self.assertIn("sleep 301", ps)
        self.assertIn("sleep 302", ps)
        status, _ = self.server.api(
            "POST", path(self.sb, doc["id"], "/signal"), {"signal": "TERM"})
        self.assertEqual(status, 204)
        end = self.wait_end(doc["id"])
        s.close()
        self.assertEqual(end["status"], "killed")
        deadline = time.time() + 10
        while time.time() < deadline:
            ps = self.server.exec(self.sb, "ps -o args")["stdout"]
            if "sleep 30" not in ps:
                break
            time.sleep(0.2)
        self.assertNotIn("sleep 301", ps)
        self.assertNotIn("sleep 302", ps)
        status, err = self.server.api(
            "POST", path(self.sb, doc["id"], "/signal"), {"signal": "KILL"})
        self.assertEqual(status, 409, err)

    def test_delete_kills_what_left_the_group(self):
        # setsid moves a child into a session of its own: only the tree
        # walk finds it.
        doc = self.start("setsid sleep 303 & echo go; sleep 304")
        s = Stream(self.server, self.sb, doc["id"], follow=True)
        next(s.events())
        s.close()
        status, _ = self.server.api("DELETE", path(self.sb, doc["id"]))
        self.assertEqual(status, 204)
        deadline = time.time() + 10
        while time.time() < deadline:
            ps = self.server.exec(self.sb, "ps -o args")["stdout"]
            if "sleep 30" not in ps:
                break
            time.sleep(0.2)
        self.assertNotIn("sleep 303", ps)
        self.assertNotIn("sleep 304", ps)

    def test_signal_names(self):
        doc = self.start(["sleep", "30"])
        for bad in ("SEGV", "term", "", 9, None):
            status, err = self.server.api(
                "POST", path(self.sb, doc["id"], "/signal"),
                {"signal": bad})
            self.assertIn(status, (400, 422), (bad, err))
        status, _ = self.server.api(
            "POST", path(self.sb, doc["id"], "/signal"), {"signal": "INT"})
        self.assertEqual(status, 204)
        self.assertEqual(self.wait_end(doc["id"])["status"], "killed")
        self.server.api("DELETE", path(self.sb, doc["id"]))


class ClientId(ProcessCase):
    def test_twenty_parallel_retries_start_one_process(self):
        body = {"command": "echo once >> /workspace/ran; sleep 2",
                "client_id": "retry-\u00e9-1"}
        results = []

        def one():
            results.append(self.server.api("POST", path(self.sb), body))

        threads = [threading.Thread(target=one) for _ in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        statuses = sorted(s for s, _ in results)
        self.assertEqual(statuses, [200] * 19 + [201], results)
        ids = {doc["id"] for _, doc in results}
        self.assertEqual(len(ids), 1)
        pid = ids.pop()
        self.wait_end(pid)
        ran = self.server.exec(self.sb, "cat /workspace/ran")["stdout"]
        self.assertEqual(ran, "once\n")
        # Later retries too; a different request with it is a conflict.
        status, doc = self.server.api("POST", path(self.sb), body)
        self.assertEqual((status, doc["id"]), (200, pid))
        status, err = self.server.api(
            "POST", path(self.sb), dict(body, command="echo other"))
        self.assertEqual(status, 409, err)
        self.assertEqual(err["error"]["code"], "conflict")


class FastWriter(ProcessCase):
    settings = {"AGENT_SANDBOX_PROCESS_OUTPUT_BYTES": str(MIB)}

    def test_bounded_with_an_exact_gap(self):
        pids = harness.daemon_pids(self.server)
        before = {n: harness.rss_kib(p) for n, p in pids.items()}
        total = 200 * MIB
        doc = self.start("head -c %d /dev/zero | tr '\\0' x" % total)
        # Nobody reads: it must still finish (never blocked on a pipe).
        end = self.wait_end(doc["id"], timeout=120)
        self.assertEqual(end["exit_code"], 0)
        self.assertEqual(end["output_bytes"], total)
        self.assertGreater(end["dropped_bytes"], 0)
        self.assertLessEqual(end["kept_bytes"], MIB)
        after = {n: harness.rss_kib(p) for n, p in pids.items()}
        for name in before:
            # ASan's quarantine keeps what passed through: not checked.
            if name == "spawner" or harness.SANITIZERS:
                continue
            self.assertLess(after[name] - before[name], 16 * 1024,
                            (name, before[name], after[name]))
        events = self.output(doc["id"])
        self.assertEqual(events[0]["type"], "gap")
        self.assertEqual(events[0]["dropped_bytes"], end["dropped_bytes"])
        kept = sum(len(e["data"]) for e in events if e["type"] == "stdout")
        self.assertEqual(kept, end["kept_bytes"])
        self.assertEqual(events[1]["seq"] - len(events[1]["data"]),
                         end["dropped_bytes"])
        # A reader from the middle of what was dropped: the rest of it.
        events = self.output(doc["id"], after=1000)
        self.assertEqual(events[0]["dropped_bytes"],
                         end["dropped_bytes"] - 1000)
        self.server.api("DELETE", path(self.sb, doc["id"]))

    def test_slow_follower_falls_behind_and_is_told(self):
        doc = self.start("head -c %d /dev/zero | tr '\\0' y; sleep 1" %
                         (64 * MIB))
        s = Stream(self.server, self.sb, doc["id"], follow=True)
        seen = gap = 0
        for ev in s.events():
            if ev["type"] == "gap":
                gap += ev["dropped_bytes"]
            elif ev["type"] == "stdout":
                seen += len(ev["data"])
                if seen < 4 * MIB:
                    time.sleep(0.01)
            else:
                self.assertEqual(ev["type"], "exit")
        s.close()
        self.assertGreater(gap, 0)
        self.assertEqual(seen + gap, 64 * MIB)
        self.server.api("DELETE", path(self.sb, doc["id"]))


class OddInput(ProcessCase):
    def test_bad_bodies(self):
        for body, codes in [
                ({}, (422,)),
                ({"command": ""}, (400,)),
                ({"command": []}, (400, 422)),
                ({"command": "true", "timeout_seconds": 0}, (422, 400)),
                ({"command": "true", "timeout_seconds": 10 ** 9}, (400,)),
                ({"command": "true", "cols": 80}, (400, 422)),
                ({"command": "true", "tty": True, "cols": 0}, (400, 422)),
                ({"command": "true", "tty": True, "cols": 1001},
                 (400, 422)),
                ({"command": "true", "client_id": ""}, (400, 422)),
                ({"command": "true", "client_id": "x" * 129}, (400, 422)),
                ({"command": "true", "bogus": 1}, (422,)),
                ({"command": "true", "env": {"A=B": "x"}}, (400, 422))]:
            status, doc = self.server.api("POST", path(self.sb), body)
            self.assertIn(status, codes, (body, doc))
        status, err = self.server.api("POST", path("sb_0000000000000000"),
                                      {"command": "true"})
        self.assertEqual(status, 404)
        for pid in ("proc_0000000000000000", "proc_x",
                    urllib.parse.quote("\u00e9"), "%ff%fe"):
            status, err = self.server.api("GET", path(self.sb, pid))
            self.assertEqual(status, 404, (pid, err))

    def test_bad_after(self):
        doc = self.start("printf abc")
        self.wait_end(doc["id"])
        for after in ("-1", "x", "1.5", "4", str(2 ** 64), ""):
            s = Stream(self.server, self.sb, doc["id"], after=after)
            self.assertIn(s.status, (400, 422), after)
            s.close()

    def test_names_and_bytes_that_are_not_ascii(self):
        self.server.exec(self.sb, "mkdir -p '/workspace/d\u00e9j\u00e0'")
        doc = self.start(["sh", "-c", "printf 'h\\303\\251 \\377\\n'"],
                         client_id="\u00e9t\u00e9 \U0001f600",
                         workdir="/workspace/d\u00e9j\u00e0")
        self.assertEqual(doc["client_id"], "\u00e9t\u00e9 \U0001f600")
        self.assertEqual(doc["workdir"], "/workspace/d\u00e9j\u00e0")
        end = self.wait_end(doc["id"])
        self.assertEqual(end["exit_code"], 0, end)
        events = self.output(doc["id"])
        self.assertEqual(self.text(events), "h\u00e9 \ufffd\n")
        raw = b"".join(base64.b64decode(e["data"]) for e in
                       self.output(doc["id"], encoding="base64")
                       if e["type"] == "stdout")
        self.assertEqual(raw, b"h\xc3\xa9 \xff\n")

    def test_limit_per_sandbox(self):
        sb = self.server.create()["id"]
        try:
            made = []
            for _ in range(3):
                status, doc = self.server.api(
                    "POST", path(sb), {"command": ["sleep", "30"]})
                self.assertEqual(status, 201, doc)
                made.append(doc["id"])
            status, err = self.server.api(
                "POST", path(sb), {"command": ["true"]})
            self.assertEqual(status, 429, err)
            self.assertEqual(err["error"]["code"], "limit_exceeded")
            self.server.api("DELETE", path(sb, made[0]))
            status, doc = self.server.api(
                "POST", path(sb), {"command": ["true"]})
            self.assertEqual(status, 201, doc)
        finally:
            self.server.api("DELETE", "/v1/sandboxes/" + sb)

    settings = {"AGENT_SANDBOX_MAX_PROCESSES_PER_SANDBOX": "3"}


class SandboxEnd(ProcessCase):
    def test_destroy_and_rollback_end_processes(self):
        status, snap = self.server.api(
            "POST", "/v1/sandboxes/%s/snapshots" % self.sb, {})
        self.assertEqual(status, 201, snap)
        doc = self.start(["sleep", "300"])
        status, sb = self.server.api(
            "POST", "/v1/sandboxes/%s/rollback" % self.sb,
            {"snapshot_id": snap["id"]})
        self.assertEqual(status, 200, sb)
        status, _ = self.server.api("GET", path(self.sb, doc["id"]))
        self.assertEqual(status, 404)
        other = self.server.create()["id"]
        status, doc = self.server.api("POST", path(other),
                                      {"command": ["sleep", "300"]})
        self.assertEqual(status, 201)
        self.server.api("DELETE", "/v1/sandboxes/" + other)
        files = os.listdir(os.path.join(self.server.data_dir, "processes"))
        self.assertNotIn(doc["id"] + ".json", files)

    def test_reaper_ends_processes(self):
        status, sb = self.server.api("POST", "/v1/sandboxes",
                                     {"timeout_seconds": 3})
        self.assertEqual(status, 201, sb)
        status, doc = self.server.api("POST", path(sb["id"]),
                                      {"command": ["sleep", "300"]})
        self.assertEqual(status, 201, doc)
        record = os.path.join(self.server.data_dir, "processes",
                              doc["id"] + ".json")
        self.assertTrue(os.path.exists(record))
        deadline = time.time() + 30
        while self.server.api("GET", "/v1/sandboxes/" + sb["id"])[0] == 200:
            self.assertLess(time.time(), deadline)
            time.sleep(0.2)
        status, _ = self.server.api("GET", path(sb["id"], doc["id"]))
        self.assertEqual(status, 404)
        self.assertFalse(os.path.exists(record))


class Restarts(ProcessCase):
    def test_apid_killed_during_a_follow_loses_nothing(self):
        n = 60
        doc = self.start("i=0; while [ $i -lt %d ]; do i=$((i+1)); "
                         "echo tick $i; sleep 0.05; done" % n)
        s = Stream(self.server, self.sb, doc["id"], follow=True)
        got, last = [], 0
        for ev in s.events():
            got.append(ev)
            last = ev["seq"]
            if len(got) == 10:
                break
        apid = self.server.children()["apid"]
        os.kill(apid, signal.SIGKILL)
        s.close()
        # The new apid: carry on from the last seq seen.
        deadline = time.time() + 20
        while True:
            try:
                status, _ = self.server.api("GET", path(self.sb, doc["id"]))
                if status == 200:
                    break
            except OSError:
                pass
            self.assertLess(time.time(), deadline)
            time.sleep(0.1)
        s = Stream(self.server, self.sb, doc["id"], after=last, follow=True)
        got += list(s.events())
        s.close()
        want = "".join("tick %d\n" % i for i in range(1, n + 1))
        self.assertEqual(self.text(got), want)
        self.assertEqual(got[-1]["type"], "exit")

    def test_whole_server_restart_tells_the_truth(self):
        running = self.start("echo before; sleep 300")
        ended = self.start(["sh", "-c", "echo done; exit 7"])
        self.wait_end(ended["id"])
        self.server.kill9()
        self.server.start()
        doc = self.get(running["id"])
        self.assertEqual(doc["status"], "lost")
        self.assertTrue(doc["running"])
        doc = self.get(ended["id"])
        self.assertEqual(doc["status"], "exited")
        self.assertEqual(doc["exit_code"], 7)
        # The lost one can still be signalled, and Docker's word on it
        # reaches its status.
        status, err = self.server.api(
            "POST", path(self.sb, running["id"], "/signal"),
            {"signal": "KILL"})
        self.assertEqual(status, 204, err)
        deadline = time.time() + 30
        while self.get(running["id"])["running"]:
            self.assertLess(time.time(), deadline)
            time.sleep(0.5)
        events = self.output(running["id"])
        self.assertEqual(events[-1]["type"], "exit")
        self.assertEqual(events[-1]["status"], "lost")


if __name__ == "__main__":
    harness.require_root_and_docker()
    unittest.main()
