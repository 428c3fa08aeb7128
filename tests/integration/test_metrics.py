"""GET /metrics against the real dockerd (docs/metrics.md): every scrape
parsed by a strict reader of the text format 0.0.4 written here; the
counters and histograms follow the requests made (create, exec, a 404,
delete), sandboxes by state follow a create and a delete, Docker calls
are counted by endpoint template; no sandbox id and no path a client
sent ever shows, whatever the path held; each daemon's resident set;
apid's restart counted after a kill -9, the scrape still working; the
metrics key; 50 scrapes on one kept-alive connection; a scrape while a
stream runs; reads and writes after the first make no inspect."""
import http.client
import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

CTYPE = "text/plain; version=0.0.4; charset=utf-8"
METRICS_KEY = "mk-Zq8fT3vLp0WmX9rB-metrics"

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r"[a-zA-Z_][a-zA-Z0-9_]*"
# A label value: anything but a quote, a backslash or a newline, or one
# of the three escapes.
VALUE = r'(?:[^"\\\n]|\\\\|\\"|\\n)*'
SAMPLE = re.compile(r"^(%s)(?:\{((?:%s=\"%s\")(?:,%s=\"%s\")*)\})? (\S+)$" %
                    (NAME, LABEL, VALUE, LABEL, VALUE))
PAIR = re.compile(r'(%s)="(%s)"' % (LABEL, VALUE))
HELP = re.compile(r"^# HELP (%s) ((?:[^\\\n]|\\\\|\\n)*)$" % NAME)
TYPE = re.compile(r"^# TYPE (%s) (counter|gauge|histogram)$" % NAME)
NUMBER = re.compile(r"^(?:[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
                    r"|[-+]Inf|NaN)$")

# apid's route table (apid/http.c): the only route labels there may be.
ROUTES = {
    "other", "/healthz", "/openapi.json", "/metrics", "/v1/sandboxes",
    "/v1/sandboxes/*", "/v1/sandboxes/*/timeout", "/v1/sandboxes/*/exec",
    "/v1/sandboxes/*/exec/stream", "/v1/sandboxes/*/files",
    "/v1/sandboxes/*/files/list", "/v1/sandboxes/*/snapshots",
    "/v1/sandboxes/*/rollback", "/v1/snapshots", "/v1/snapshots/*",
    "/v1/snapshots/*/fork", "/v1/sandboxes/*/processes",
    "/v1/sandboxes/*/processes/*", "/v1/sandboxes/*/processes/*/signal",
    "/v1/sandboxes/*/processes/*/resize",
    "/v1/sandboxes/*/processes/*/stdin",
    "/v1/sandboxes/*/processes/*/output",
    "/v1/sandboxes/*/processes/*/attach",
    "/v1/sandboxes/*/processes/*/attach-token",
}
ENDPOINT = re.compile(r"^(GET|HEAD|POST|PUT|DELETE) "
                      r"(/(?:[a-z_]+|\{id\}|\{name\}))+$")
FAMILIES = {
    "agent_sandbox_http_requests_total": "counter",
    "agent_sandbox_http_request_duration_seconds": "histogram",
    "agent_sandbox_http_request_body_bytes_total": "counter",
    "agent_sandbox_http_response_body_bytes_total": "counter",
    "agent_sandbox_http_connections": "gauge",
    "agent_sandbox_sandboxes": "gauge",
    "agent_sandbox_sandbox_creates_total": "counter",
    "agent_sandbox_sandbox_destroys_total": "counter",
    "agent_sandbox_sandbox_reaps_total": "counter",
    "agent_sandbox_exec_duration_seconds": "histogram",
    "agent_sandbox_processes": "gauge",
    "agent_sandbox_snapshot_bytes_total": "counter",
    "agent_sandbox_daemon_resident_memory_bytes": "gauge",
    "agent_sandbox_daemon_restarts_total": "counter",
    "agent_sandbox_docker_request_duration_seconds": "histogram",
    "agent_sandbox_docker_errors_total": "counter",
}


def unescape(v):
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n"
                  else m.group(1), v)


def number(text, line):
    if not NUMBER.match(text):
        raise AssertionError("not a number: %r" % line)
    return float(text)


class Scrape:
    """A strictly parsed exposition: families[name] = (type, help),
    samples[(sample name, frozenset of (label, value))] = value."""

    def __init__(self, data):
        self.text = data.decode("utf-8")    # strict: raises if not UTF-8
        if not self.text.endswith("\n"):
            raise AssertionError("the text does not end with a newline")
        self.families = {}
        self.samples = {}
        self.order = []
        family = None
        for line in self.text[:-1].split("\n"):
            family = self.line(line, family)
        for name, (kind, _) in self.families.items():
            if kind == "histogram":
                self.check_histogram(name)

    def line(self, line, family):
        m = HELP.match(line)
        if m:
            if m.group(1) in self.families:
                raise AssertionError("family twice: %s" % m.group(1))
            self.families[m.group(1)] = (None, m.group(2))
            return m.group(1)
        m = TYPE.match(line)
        if m:
            if m.group(1) != family or self.families[family][0]:
                raise AssertionError("TYPE out of place: %r" % line)
            self.families[family] = (m.group(2), self.families[family][1])
            return family
        if line.startswith("#") or line == "":
            raise AssertionError("stray line: %r" % line)
        self.sample(line, family)
        return family

    def sample(self, line, family):
        m = SAMPLE.match(line)
        if not m:
            raise AssertionError("malformed sample: %r" % line)
        name, labels, value = m.group(1), m.group(2), m.group(3)
        kind = self.families.get(family, (None,))[0]
        if kind is None:
            raise AssertionError("sample before its TYPE: %r" % line)
        allowed = {family} if kind != "histogram" else {
            family + "_bucket", family + "_sum", family + "_count"}
        if name not in allowed:
            raise AssertionError("%s in family %s" % (name, family))
        pairs = PAIR.findall(labels or "")
        names = [p[0] for p in pairs]
        if len(set(names)) != len(names):
            raise AssertionError("a label twice: %r" % line)
        key = (name, frozenset((k, unescape(v)) for k, v in pairs))
        if key in self.samples:
            raise AssertionError("series twice: %r" % line)
        v = number(value, line)
        if kind == "counter" and not v >= 0:
            raise AssertionError("negative counter: %r" % line)
        self.samples[key] = v
        self.order.append(key)

    def check_histogram(self, name):
        series = {}
        for sname, labels in self.order:
            if sname != name + "_bucket":
                continue
            le = dict(labels)["le"]
            rest = frozenset(p for p in labels if p[0] != "le")
            series.setdefault(rest, []).append(
                (float(le.replace("Inf", "inf")),
                 self.samples[(sname, labels)]))
        for rest, buckets in series.items():
            bounds = [b for b, _ in buckets]
            counts = [c for _, c in buckets]
            if bounds != sorted(bounds) or not math.isinf(bounds[-1]):
                raise AssertionError("%s buckets out of order" % name)
            if counts != sorted(counts):
                raise AssertionError("%s buckets not cumulative" % name)
            total = self.samples.get((name + "_count", rest))
            if total is None or (name + "_sum", rest) not in self.samples:
                raise AssertionError("%s without _sum or _count" % name)
            if total != counts[-1]:
                raise AssertionError("%s: +Inf is not _count" % name)

    def get(self, name, **labels):
        return self.samples.get((name, frozenset(labels.items())), 0.0)

    def labels(self, name, label):
        return {dict(k[1]).get(label) for k in self.samples if k[0] == name}


def scrape(server, headers=None, conn=None):
    if conn is None:
        status, hdrs, data = server.request("GET", "/metrics",
                                            headers=headers)
    else:
        conn.request("GET", "/metrics", headers=headers or {})
        resp = conn.getresponse()
        status, data = resp.status, resp.read()
        hdrs = {k.lower(): v for k, v in resp.getheaders()}
    if status != 200:
        raise AssertionError("scrape: %d %r" % (status, data))
    if hdrs.get("content-type") != CTYPE:
        raise AssertionError("content type %r" % hdrs.get("content-type"))
    return Scrape(data)


def raw_request(server, target):
    """A request line of raw bytes (http.client would encode them)."""
    with socket.create_connection(("127.0.0.1", server.port), 10) as s:
        s.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: x\r\n"
                  b"Connection: close\r\n\r\n")
        data = b""
        while True:
            piece = s.recv(65536)
            if not piece:
                break
            data += piece
    return int(data.split(b" ", 2)[1])


CLI = os.path.join(harness.BUILDDIR, "client", "agent-sandbox")


def cli_metrics(server, **env):
    """agent-sandbox metrics: (exit status, stdout bytes, stderr text)."""
    e = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
         "AGENT_SANDBOX_URL": "http://127.0.0.1:%d" % server.port,
         "AGENT_SANDBOX_API_KEY": harness.TEST_KEY,
         "AGENT_SANDBOX_SECCOMP": "kill"}
    e.update(env)
    p = subprocess.run([CLI, "metrics"], env=e, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=60)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


REQ = "agent_sandbox_http_requests_total"
DUR = "agent_sandbox_http_request_duration_seconds"
DOCKER = "agent_sandbox_docker_request_duration_seconds"


class Metrics(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        harness.require_root_and_docker()
        cls.server = harness.SandboxServer().start()

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def check_bounded(self, sc, secrets=()):
        self.assertLessEqual(sc.labels(REQ, "route"), ROUTES)
        self.assertLessEqual(sc.labels(DUR + "_count", "route"), ROUTES)
        for endpoint in sc.labels(DOCKER + "_count", "endpoint"):
            self.assertRegex(endpoint, ENDPOINT)
        for endpoint in sc.labels("agent_sandbox_docker_errors_total",
                                  "endpoint"):
            self.assertRegex(endpoint, ENDPOINT)
        self.assertNotRegex(sc.text, r"sb_[0-9a-f]{16}")
        self.assertNotRegex(sc.text, r"snap_[0-9a-f]{16}")
        self.assertNotRegex(sc.text, r"proc_[0-9a-f]")
        for secret in secrets:
            self.assertNotIn(secret, sc.text)

    def test_format(self):
        sc = scrape(self.server)
        for name, kind in FAMILIES.items():
            self.assertIn(name, sc.families)
            self.assertEqual(sc.families[name][0], kind, name)
        for name in sc.families:
            self.assertTrue(name.startswith("agent_sandbox_"), name)
        self.check_bounded(sc)
        # A method outside the fixed set is counted as "other".
        for method in ("PROPFIND", "PATCH"):
            conn = http.client.HTTPConnection("127.0.0.1", self.server.port)
            conn.request(method, "/metrics")
            self.assertEqual(conn.getresponse().status, 405)
            conn.close()
        sc = scrape(self.server)
        self.assertEqual(sc.get(REQ, route="/metrics", method="other",
                                status="405"), 1)
        self.assertEqual(sc.get(REQ, route="/metrics", method="PATCH",
                                status="405"), 1)
        self.assertNotIn("PROPFIND", sc.text)

    def test_counters_follow_requests(self):
        s = self.server
        a = scrape(s)
        sb = s.create()["id"]
        b = scrape(s)
        body = {"command": ["echo", "counted"]}
        s.exec(sb, ["echo", "counted"])
        status, _ = s.api("GET", "/v1/sandboxes/sb_0000000000000000")
        self.assertEqual(status, 404)
        status, _ = s.api("DELETE", "/v1/sandboxes/" + sb)
        self.assertEqual(status, 204)
        c = scrape(s)
        self.check_bounded(c, [sb])

        def moved(name, **labels):
            return c.get(name, **labels) - a.get(name, **labels)

        self.assertEqual(moved(REQ, route="/v1/sandboxes", method="POST",
                               status="201"), 1)
        self.assertEqual(moved(REQ, route="/v1/sandboxes/*/exec",
                               method="POST", status="200"), 1)
        self.assertEqual(moved(REQ, route="/v1/sandboxes/*", method="GET",
                               status="404"), 1)
        self.assertEqual(moved(REQ, route="/v1/sandboxes/*",
                               method="DELETE", status="204"), 1)
        # The histograms count the same requests; a scrape is counted
        # once its answer is out, so c sees a and b but not itself.
        self.assertEqual(moved(DUR + "_count", route="/v1/sandboxes"), 1)
        self.assertEqual(moved(DUR + "_count", route="/v1/sandboxes/*"),
                         2)
        self.assertEqual(moved(DUR + "_count",
                               route="/v1/sandboxes/*/exec"), 1)
        self.assertEqual(moved(DUR + "_count", route="/metrics"), 2)
        self.assertEqual(moved(REQ, route="/metrics", method="GET",
                               status="200"), 2)
        self.assertGreater(moved(DUR + "_sum", route="/v1/sandboxes"), 0)
        self.assertEqual(moved("agent_sandbox_http_request_body_bytes_total",
                               route="/v1/sandboxes/*/exec"),
                         len(json.dumps(body)))
        self.assertGreater(
            moved("agent_sandbox_http_response_body_bytes_total",
                  route="/v1/sandboxes/*/exec"), len("counted"))
        self.assertEqual(moved("agent_sandbox_sandbox_creates_total",
                               kind="create", outcome="ok"), 1)
        self.assertEqual(moved("agent_sandbox_sandbox_creates_total",
                               kind="fork", outcome="ok"), 0)
        self.assertEqual(moved("agent_sandbox_sandbox_destroys_total",
                               outcome="ok"), 1)
        self.assertEqual(moved("agent_sandbox_exec_duration_seconds_count",
                               outcome="exited"), 1)
        for endpoint in ("POST /containers/create",
                         "POST /containers/{id}/start",
                         "POST /containers/{id}/exec",
                         "POST /exec/{id}/start",
                         "DELETE /containers/{id}"):
            self.assertGreaterEqual(moved(DOCKER + "_count",
                                          endpoint=endpoint), 1, endpoint)
        self.assertEqual(c.get(DOCKER + "_count", endpoint="other"), 0)
        # Sandboxes by state: one more while it lived, back after.
        self.assertEqual(b.get("agent_sandbox_sandboxes", state="active") -
                         a.get("agent_sandbox_sandboxes", state="active"), 1)
        self.assertEqual(c.get("agent_sandbox_sandboxes", state="active"),
                         a.get("agent_sandbox_sandboxes", state="active"))

    def test_docker_errors_by_template(self):
        s = self.server
        sb = s.create()["id"]
        a = scrape(s)
        status, _ = s.api("GET", "/v1/sandboxes/%s/files?path=/nope/x" % sb)
        self.assertEqual(status, 404)
        b = scrape(s)
        s.api("DELETE", "/v1/sandboxes/" + sb)
        errors = {k: v for k, v in b.samples.items()
                  if k[0] == "agent_sandbox_docker_errors_total"}
        grown = [dict(k[1]) for k, v in errors.items() if v > a.get(
            k[0], **dict(k[1]))]
        self.assertTrue(grown, "no Docker error counted for the 404")
        for labels in grown:
            self.assertRegex(labels["endpoint"], ENDPOINT)
            self.assertEqual(labels["kind"], "http_4xx")
        self.check_bounded(b, [sb, "nope"])

    def test_archive_calls_skip_the_inspect(self):
        """Once a read or write has found a sandbox's container ours,
        dockerd-proxy sends the next ones to its id without inspecting it
        again (container_cache.c)."""
        s = self.server
        sb = s.create()["id"]
        url = "/v1/sandboxes/%s/files?path=/workspace/cached" % sb
        self.assertEqual(s.request("PUT", url, body=b"first",
                                   headers=harness.AUTH)[0], 200)
        a = scrape(s)
        for i in range(5):
            data = b"round %d" % i
            self.assertEqual(s.request("PUT", url, body=data,
                                       headers=harness.AUTH)[0], 200)
            status, _, got = s.request("GET", url, headers=harness.AUTH)
            self.assertEqual((status, got), (200, data))
        b = scrape(s)
        s.api("DELETE", "/v1/sandboxes/" + sb)

        def moved(endpoint):
            return (b.get(DOCKER + "_count", endpoint=endpoint) -
                    a.get(DOCKER + "_count", endpoint=endpoint))

        self.assertEqual(moved("PUT /containers/{id}/archive"), 5)
        self.assertEqual(moved("GET /containers/{id}/archive"), 5)
        self.assertEqual(moved("GET /containers/{id}/json"), 0)

    def test_odd_paths_never_show(self):
        s = self.server
        sb = s.create()["id"]
        a = scrape(s)
        targets = [
            b"/v1/sandboxes/%C3%A9t%C3%A9-odd1",
            b"/v1/sandboxes/\xc3\xa9t\xc3\xa9-odd2/exec/x",
            b"/v1/odd3/\xff\xfe\x80",
            b"/v1/sandboxes/odd4%ZZ%/x%",
            b"/odd5/%0A%22%5C/x",
            b"/odd6" + b"/a" * 3000,
            b"/v1/sandboxes/" + sb.encode() + b"/odd7",
            b"/v1/sandboxes/" + b"o" * 12000,
            b"/v1/sandboxes/" + b"o" * 20000,   # past the target limit
        ]
        for t in targets:
            self.assertIn(raw_request(s, t), (400, 401, 404, 405, 414, 431))
        b = scrape(s)
        s.api("DELETE", "/v1/sandboxes/" + sb)
        self.check_bounded(b, [sb, "odd", "\u00e9t\u00e9", "aaaa", "oooo",
                                "ZZ", "\ufffd"])
        # Each was counted once, under a route template or "other" (and
        # the scrape a before them).
        total = sum(v for k, v in b.samples.items() if k[0] == REQ)
        before = sum(v for k, v in a.samples.items() if k[0] == REQ)
        self.assertEqual(total - before, len(targets) + 1)
        self.assertEqual(b.get(REQ, route="other", method="GET",
                               status="404") -
                         a.get(REQ, route="other", method="GET",
                               status="404"), 6)
        # Those that matched a pattern: under the pattern.
        self.assertEqual(b.get(REQ, route="/v1/sandboxes/*", method="GET",
                               status="401") -
                         a.get(REQ, route="/v1/sandboxes/*", method="GET",
                               status="401"), 2)
        # The head refused for its length, before its method was read:
        # no route, no method, its status.
        self.assertEqual(b.get(REQ, route="other", method="other",
                               status="414"), 1)

    def test_cli(self):
        rc, out, err = cli_metrics(self.server)
        self.assertEqual(rc, 0, err)
        sc = Scrape(out)
        self.assertIn("agent_sandbox_sandboxes", sc.families)
        rc, out, err = cli_metrics(self.server, AGENT_SANDBOX_URL="x")
        self.assertNotEqual(rc, 0)

    def test_processes_gauge(self):
        s = self.server
        sb = s.create()["id"]
        a = scrape(s)
        status, proc = s.api("POST", "/v1/sandboxes/%s/processes" % sb,
                             {"command": "sleep 60"})
        self.assertEqual(status, 201, proc)
        b = scrape(s)
        status, _ = s.api("DELETE", "/v1/sandboxes/%s/processes/%s" %
                          (sb, proc["id"]))
        self.assertEqual(status, 204)
        c = scrape(s)
        s.api("DELETE", "/v1/sandboxes/" + sb)
        name = "agent_sandbox_processes"
        self.assertEqual(b.get(name, state="running") -
                         a.get(name, state="running"), 1)
        self.assertEqual(c.get(name, state="running"),
                         a.get(name, state="running"))
        self.assertEqual(c.get(name, state="ended"),
                         a.get(name, state="ended"))
        self.check_bounded(c, [sb, proc["id"]])
        self.assertEqual(b.get(REQ, route="/v1/sandboxes/*/processes",
                               method="POST", status="201"), 1)

    def test_snapshot_bytes(self):
        s = self.server
        sb = s.create()["id"]
        s.exec(sb, "head -c 300000 /dev/urandom > /workspace/blob")
        a = scrape(s)
        status, snap = s.api("POST", "/v1/sandboxes/%s/snapshots" % sb, {})
        self.assertEqual(status, 201, snap)
        b = scrape(s)
        status, fork = s.api("POST", "/v1/snapshots/%s/fork" % snap["id"],
                             {})
        self.assertEqual(status, 201, fork)
        c = scrape(s)
        s.api("DELETE", "/v1/sandboxes/" + fork["id"])
        s.api("DELETE", "/v1/snapshots/" + snap["id"])
        s.api("DELETE", "/v1/sandboxes/" + sb)
        name = "agent_sandbox_snapshot_bytes_total"
        self.assertEqual(b.get(name) - a.get(name), snap["size_bytes"])
        self.assertGreater(snap["size_bytes"], 300000)
        name = "agent_sandbox_sandbox_creates_total"
        self.assertEqual(c.get(name, kind="fork", outcome="ok") -
                         b.get(name, kind="fork", outcome="ok"), 1)
        self.assertEqual(c.get(name, kind="create", outcome="ok"),
                         b.get(name, kind="create", outcome="ok"))
        self.assertEqual(c.get("agent_sandbox_sandboxes", state="active") -
                         b.get("agent_sandbox_sandboxes", state="active"), 1)
        self.check_bounded(c, [sb, snap["id"], fork["id"]])

    def test_resident_memory(self):
        sc = scrape(self.server)
        for daemon in ("managerd", "apid", "dockerd-proxy"):
            rss = sc.get("agent_sandbox_daemon_resident_memory_bytes",
                         daemon=daemon)
            self.assertGreater(rss, 100 * 1024, daemon)
            self.assertLess(rss, 4 << 30, daemon)

    def test_kept_alive_scrapes(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port,
                                          timeout=30)
        try:
            last = None
            for _ in range(50):
                sc = scrape(self.server, conn=conn)
                n = sc.get(REQ, route="/metrics", method="GET",
                           status="200")
                if last is not None:
                    self.assertEqual(n, last + 1)
                last = n
        finally:
            conn.close()

    def test_scrape_while_streaming(self):
        s = self.server
        sb = s.create()["id"]
        before = scrape(s).get("agent_sandbox_exec_duration_seconds_count",
                               outcome="exited")
        conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=30)
        hdrs = dict(harness.AUTH)
        hdrs["Content-Type"] = "application/json"
        conn.request("POST", "/v1/sandboxes/%s/exec/stream" % sb,
                     body=json.dumps({"command": "echo a; sleep 3; "
                                      "echo b"}),
                     headers=hdrs)
        resp = conn.getresponse()
        self.assertEqual(resp.status, 200)
        first = resp.readline()
        self.assertIn(b"a", first)
        sc = scrape(s)
        # Answered while the command still ran: its exit is not counted
        # yet, its connection is open, and its end comes after.
        self.assertEqual(sc.get("agent_sandbox_exec_duration_seconds_count",
                                outcome="exited"), before)
        self.assertGreaterEqual(
            sc.get("agent_sandbox_http_connections", state="http"), 2)
        rest = resp.read()
        self.assertIn(b'"exit"', rest)
        self.assertIn(b"b\\n", rest)
        after = scrape(s)
        self.assertEqual(after.get("agent_sandbox_exec_duration_seconds_"
                                   "count", outcome="exited"), before + 1)
        conn.close()
        s.api("DELETE", "/v1/sandboxes/" + sb)


class Restarts(unittest.TestCase):
    def setUp(self):
        harness.require_root_and_docker()
        self.server = harness.SandboxServer().start()

    def tearDown(self):
        self.server.cleanup()

    def wait_apid(self, old):
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                if self.server.children().get("apid") not in (None, old) \
                        and self.server.request(
                            "GET", "/healthz", timeout=2)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        self.fail("apid did not come back:\n" + self.server.log_text())

    def test_apid_restart_counted(self):
        s = self.server
        a = scrape(s)
        name = "agent_sandbox_daemon_restarts_total"
        for daemon in ("apid", "dockerd-proxy", "archive-worker"):
            self.assertEqual(a.get(name, daemon=daemon), 0)
            self.assertIn(frozenset({("daemon", daemon)}),
                          {k[1] for k in a.samples if k[0] == name})
        old = s.children()["apid"]
        os.kill(old, signal.SIGKILL)
        self.wait_apid(old)
        b = scrape(s)
        self.assertEqual(b.get(name, daemon="apid"), 1)
        self.assertEqual(b.get(name, daemon="dockerd-proxy"), 0)
        self.assertGreater(b.get("agent_sandbox_daemon_resident_memory_"
                                 "bytes", daemon="apid"), 0)
        # The new apid's own counters start again; managerd's do not.
        self.assertLess(b.get(REQ, route="/metrics", method="GET",
                              status="200"), 2)


    def test_proxy_killed(self):
        """A scrape while dockerd-proxy is down or starting again still
        answers, managerd's part whole; the restart is counted."""
        s = self.server
        name = "agent_sandbox_daemon_restarts_total"
        old = s.children()["dockerd-proxy"]
        os.kill(old, signal.SIGKILL)
        sc = scrape(s)
        self.assertIn("agent_sandbox_sandboxes", sc.families)
        if DOCKER not in sc.families:
            self.assertEqual(sc.get("agent_sandbox_daemon_resident_memory_"
                                    "bytes", daemon="dockerd-proxy"), 0)
        deadline = time.monotonic() + 15
        while True:
            sc = scrape(s)
            if sc.get(name, daemon="dockerd-proxy") == 1 and \
                    DOCKER in sc.families:
                break
            self.assertLess(time.monotonic(), deadline, sc.text)
            time.sleep(0.1)
        self.assertEqual(sc.get(name, daemon="apid"), 0)


    def test_proxy_stopped(self):
        """A proxy that does not answer (stopped) holds a scrape for its
        wait only: managerd's part alone, the proxy's memory unknown."""
        s = self.server
        pid = s.children()["dockerd-proxy"]
        os.kill(pid, signal.SIGSTOP)
        try:
            sc = scrape(s)
        finally:
            os.kill(pid, signal.SIGCONT)
        self.assertNotIn(DOCKER, sc.families)
        self.assertIn("agent_sandbox_sandboxes", sc.families)
        self.assertEqual(sc.get("agent_sandbox_daemon_resident_memory_bytes",
                                daemon="dockerd-proxy"), 0)
        self.assertIn("dockerd-proxy did not send its metrics", s.log_text())
        # Woken, it answers the next one; its late answer was dropped.
        sc = scrape(s)
        self.assertIn(DOCKER, sc.families)
        self.assertEqual(s.children()["dockerd-proxy"], pid)


class Key(unittest.TestCase):
    def setUp(self):
        harness.require_root_and_docker()
        self.server = harness.Server(
            AGENT_SANDBOX_METRICS_KEY=METRICS_KEY).start()

    def tearDown(self):
        self.server.cleanup()

    def refused(self, headers):
        status, hdrs, data = self.server.request("GET", "/metrics",
                                                 headers=headers)
        self.assertEqual(status, 401, headers)
        self.assertEqual(hdrs.get("www-authenticate"), "Bearer")
        self.assertEqual(json.loads(data), {"error": {
            "code": "unauthorized",
            "message": "missing or invalid metrics key"}})

    def test_key(self):
        self.refused({})
        self.refused(harness.AUTH)
        self.refused({"X-API-Key": harness.TEST_KEY})
        self.refused({"X-API-Key": METRICS_KEY})
        self.refused({"Authorization": "Bearer " + METRICS_KEY[:-1]})
        self.refused({"Authorization": "Basic " + METRICS_KEY})
        sc = scrape(self.server, {"Authorization": "Bearer " + METRICS_KEY})
        self.assertEqual(sc.get(REQ, route="/metrics", method="GET",
                                status="401"), 6)
        self.assertNotIn(METRICS_KEY, sc.text)
        # The key opens /metrics only, and no API route.
        status, _, _ = self.server.request(
            "GET", "/v1/sandboxes",
            headers={"Authorization": "Bearer " + METRICS_KEY})
        self.assertEqual(status, 401)
        self.assertNotIn(METRICS_KEY, self.server.log_text())

    def test_cli(self):
        rc, out, err = cli_metrics(self.server,
                                   AGENT_SANDBOX_METRICS_KEY=METRICS_KEY)
        self.assertEqual(rc, 0, err)
        Scrape(out)
        rc, out, err = cli_metrics(self.server)
        self.assertEqual(rc, 1)
        self.assertEqual(out, b"")
        self.assertIn("401 unauthorized: missing or invalid metrics key",
                      err)

    def test_key_not_in_any_environment(self):
        pids = harness.daemon_pids(self.server)
        self.assertLessEqual({"managerd", "apid", "dockerd-proxy",
                              "spawner"}, set(pids))
        for name, pid in pids.items():
            with open("/proc/%d/environ" % pid, "rb") as f:
                self.assertNotIn(METRICS_KEY.encode(), f.read(), name)

    def test_short_key_refused(self):
        self.server.stop()
        bad = harness.Server(AGENT_SANDBOX_METRICS_KEY="mk-short-secret")
        try:
            bad.start(wait=False)
            bad.proc.wait(20)
            self.assertNotEqual(bad.proc.returncode, 0)
            log = bad.log_text()
            self.assertIn("AGENT_SANDBOX_METRICS_KEY must be at least 16 "
                          "characters long", log)
            self.assertNotIn("mk-short-secret", log)
        finally:
            bad.cleanup()


if __name__ == "__main__":
    unittest.main()
