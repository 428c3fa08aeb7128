"""Egress policies end to end (docs/rest-api.md "Network"): the real
daemons, dockerd, the netns-helper and the egress proxy, with servers on
a network this test makes itself, so that no outside address is ever
contacted.

A network namespace of the test's own holds an HTTP server and a DNS
server on 198.18.N.2, joined to the host by a veth pair (198.18.N.1 on
the host's side).  198.18.0.0/15 is not public by default; the server is
told that 198.18.N.0/24 is (AGENT_SANDBOX_EGRESS_PUBLIC), and that its
resolver is the test's.  Sandboxes reach it only through the proxy: by
Python's urllib with the proxy variables managerd sets, by busybox wget,
and by curl run in the sandbox's network namespace.  Run as root; skips
(77) otherwise."""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

N = 40 + os.getpid() % 200
NS = "as-egress-%d" % os.getpid()
HOST_IF = "aseg%dh" % (os.getpid() % 100000)
NS_IF = "aseg%dn" % (os.getpid() % 100000)
SUBNET = "198.18.%d.0/24" % N
HOST_ADDR = "198.18.%d.1" % N
SERVER = "198.18.%d.2" % N
PORT = 8080
LOG_SIZE = 8

# Names the test's resolver knows; anything else is NXDOMAIN.
NAMES = {
    "allowed.test": SERVER,
    "other.test": SERVER,
    "private.test": "10.0.0.1",
    "metadata.test": "169.254.169.254",
    "host.test": HOST_ADDR,
}

DNS_SERVER = r'''
import socket, struct, sys
names = %r
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 53))
while True:
    q, peer = s.recvfrom(512)
    if len(q) < 12:
        continue
    qid, flags, qd = struct.unpack(">HHH", q[:6])
    i, labels = 12, []
    while i < len(q) and q[i]:
        labels.append(q[i + 1:i + 1 + q[i]].decode("ascii", "replace"))
        i += 1 + q[i]
    i += 1
    qtype = struct.unpack(">H", q[i:i + 2])[0] if i + 2 <= len(q) else 0
    question = q[12:i + 4]
    name = ".".join(labels).lower()
    addr = names.get(name)
    answers = b""
    rcode = 0 if addr else 3
    if addr and qtype == 1:
        answers = (b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 5, 4) +
                   socket.inet_aton(addr))
    head = struct.pack(">HHHHHH", qid, 0x8180 | rcode, 1,
                       1 if answers else 0, 0, 0)
    s.sendto(head + question + answers, peer)
'''

HTTP_SERVER = r'''
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path.startswith("/big/"):
            body = b"x" * int(self.path[5:])
        else:
            body = ("hello %s from %s" % (self.path,
                    self.headers.get("Host"))).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer((sys.argv[1], PORT), H).serve_forever()
'''.replace("PORT", str(PORT))

PROCS = []
SERVER_OBJ = None


def sh(*cmd, check=True):
    return subprocess.run(cmd, check=check, capture_output=True, text=True)


def make_network():
    sh("ip", "netns", "add", NS)
    sh("ip", "link", "add", HOST_IF, "type", "veth", "peer", "name", NS_IF)
    sh("ip", "link", "set", NS_IF, "netns", NS)
    sh("ip", "addr", "add", HOST_ADDR + "/24", "dev", HOST_IF)
    sh("ip", "link", "set", HOST_IF, "up")
    sh("ip", "netns", "exec", NS, "ip", "addr", "add", SERVER + "/24",
       "dev", NS_IF)
    sh("ip", "netns", "exec", NS, "ip", "link", "set", NS_IF, "up")
    sh("ip", "netns", "exec", NS, "ip", "link", "set", "lo", "up")
    for script in (DNS_SERVER % NAMES, HTTP_SERVER):
        PROCS.append(subprocess.Popen(
            ["ip", "netns", "exec", NS, sys.executable, "-c", script,
             SERVER], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            socket.create_connection((SERVER, PORT), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("the test's HTTP server did not come up")


def remove_network():
    for p in PROCS:
        p.kill()
        p.wait()
    sh("ip", "link", "del", HOST_IF, check=False)
    sh("ip", "netns", "del", NS, check=False)


def setUpModule():
    global SERVER_OBJ
    harness.require_root_and_docker()
    make_network()
    SERVER_OBJ = harness.SandboxServer(
        AGENT_SANDBOX_NETWORK_TRUE="public",
        AGENT_SANDBOX_EGRESS_DNS=SERVER,
        AGENT_SANDBOX_EGRESS_PUBLIC=SUBNET,
        AGENT_SANDBOX_EGRESS_LOG_SIZE=str(LOG_SIZE),
        AGENT_SANDBOX_MAX_SANDBOXES="20")
    SERVER_OBJ.start()


def tearDownModule():
    try:
        if SERVER_OBJ is not None:
            text = SERVER_OBJ.log_text()
            SERVER_OBJ.stop()
            SERVER_OBJ.cleanup()
            if "SIGSYS" in text or "forbidden system call" in text:
                raise AssertionError("a daemon was killed by its filter:\n" +
                                     text)
    finally:
        remove_network()


def allow(*entries):
    return {"mode": "allowlist", "allow": list(entries)}


class EgressCase(unittest.TestCase):
    """The server's sandboxes and what they reach, for the tests below."""
    server = None

    @classmethod
    def setUpClass(cls):
        cls.server = SERVER_OBJ

    def create(self, image=None, **spec):
        if image:
            spec["image"] = image
        status, doc = self.server.api("POST", "/v1/sandboxes", spec)
        self.assertEqual(status, 201, doc)
        self.addCleanup(self.server.api, "DELETE",
                        "/v1/sandboxes/" + doc["id"])
        return doc

    def network(self, sid):
        status, doc = self.server.api("GET", "/v1/sandboxes/%s/network" %
                                      sid)
        self.assertEqual(status, 200, doc)
        return doc

    def put(self, sid, policy):
        return self.server.api("PUT", "/v1/sandboxes/%s/network" % sid,
                               policy)

    def log(self, sid):
        status, doc = self.server.api("GET",
                                      "/v1/sandboxes/%s/network/log" % sid)
        self.assertEqual(status, 200, doc)
        return doc

    def urllib(self, sid, url):
        """Python's urllib in the sandbox, with the environment managerd
        gives it: (exit code, output)."""
        code = ("import sys, urllib.request\n"
                "try:\n"
                "    r = urllib.request.urlopen(sys.argv[1], timeout=10)\n"
                "    print(r.status, r.read().decode())\n"
                "except urllib.error.HTTPError as e:\n"
                "    print('HTTP', e.code, e.read().decode()[:200])\n"
                "    sys.exit(3)\n"
                "except Exception as e:\n"
                "    print('ERR', e)\n"
                "    sys.exit(4)\n")
        r = self.server.exec(sid, ["python3", "-c", code, url])
        return r["exit_code"], r["stdout"] + r["stderr"]

    def pid(self, sid):
        status, info = harness.container_inspect("agent-sandbox-" + sid)
        return info["State"]["Pid"]

    def curl(self, sid, url, tunnel=False):
        """The host's curl in the sandbox's network namespace, through
        the proxy listener there: (status code or 0, body)."""
        # A refused tunnel's status is the CONNECT's, not the request's.
        code = "%{http_connect}" if tunnel else "%{http_code}"
        cmd = ["nsenter", "-t", str(self.pid(sid)), "-n", "curl", "-sS",
               "-m", "10", "-o", "-", "-w", "\n" + code, "-x",
               "http://127.0.0.1:3128", url]
        if tunnel:
            cmd.insert(5, "-p")
        r = subprocess.run(cmd, capture_output=True, text=True)
        body, _, code = r.stdout.rpartition("\n")
        return int(code or 0), body



class Egress(EgressCase):
    # --- the API ----------------------------------------------------------

    def test_policy_shown_and_network_field(self):
        sb = self.create(network=allow("allowed.test", SUBNET + ":8080"))
        self.assertTrue(sb["network"])
        self.assertEqual(self.network(sb["id"]),
                         allow("allowed.test", SUBNET + ":8080"))
        sb = self.create(network=True)
        self.assertTrue(sb["network"])
        self.assertEqual(self.network(sb["id"]), {"mode": "public"})
        sb = self.create(network=False)
        self.assertFalse(sb["network"])
        self.assertEqual(self.network(sb["id"]), {"mode": "none"})
        r = self.server.exec(sb["id"], "env | grep -i _proxy || echo none")
        self.assertEqual(r["stdout"], "none\n")

    def test_bad_policies_refused(self):
        for policy, text in (
                ({"mode": "open"}, "mode"),
                ({"mode": "allowlist", "allow": ["bad host!"]}, "allow"),
                ({"mode": "allowlist", "allow": ["10.0.0.1/8"]}, "allow"),
                ({"mode": "public", "allow": ["x.test"]}, "allow"),
                ({"mode": "allowlist", "allow": ["é.test"]}, "xn--"),
                ({"mode": "none", "extra": 1}, "extra")):
            status, doc = self.server.api("POST", "/v1/sandboxes",
                                          {"network": policy})
            self.assertIn(status, (400, 422), (policy, doc))
            self.assertIn(text, json.dumps(doc), (policy, doc))
        status, doc = self.put("sb_0000000000000000", {"mode": "none"})
        self.assertEqual(status, 404, doc)

    # --- what gets out ------------------------------------------------------

    def test_allowlisted_by_urllib_wget_and_curl(self):
        sb = self.create(harness.PY_IMAGE, network=allow("allowed.test"))
        code, out = self.urllib(sb["id"], "http://allowed.test:8080/u")
        self.assertEqual(code, 0, out)
        self.assertIn("200 hello /u from allowed.test:8080", out)
        self.assertEqual(self.curl(sb["id"], "http://allowed.test:8080/c"),
                         (200, "hello /c from allowed.test:8080"))
        self.assertEqual(self.curl(sb["id"], "http://allowed.test:8080/t",
                                   tunnel=True),
                         (200, "hello /t from allowed.test:8080"))
        bb = self.create(network=allow("allowed.test"))
        r = self.server.exec(bb["id"], "wget -q -O - "
                             "http://allowed.test:8080/w")
        self.assertEqual(r["stdout"], "hello /w from allowed.test:8080",
                         r)

    def test_refused_and_logged(self):
        sb = self.create(harness.PY_IMAGE,
                         network=allow("allowed.test", "*.test",
                                       "0.0.0.0/0"))
        # Everything is on the list; only public addresses get through.
        for url in ("http://private.test:8080/", "http://metadata.test/",
                    "http://10.0.0.1:8080/", "http://169.254.169.254/",
                    "http://host.test:8080/", "http://%s:8080/" % HOST_ADDR,
                    "http://127.0.0.1:8080/"):
            code, out = self.urllib(sb["id"], url)
            self.assertEqual(code, 3, (url, out))
            self.assertIn("HTTP 403", out, url)
        log = self.log(sb["id"])
        refused = [e for e in log["entries"] if not e["allowed"]]
        self.assertGreaterEqual(len(refused) + log["dropped"], 7, log)
        self.assertTrue(all(e["reason"] for e in refused), log)
        hosts = {e["host"] for e in log["entries"]}
        self.assertTrue(hosts & {"private.test", "metadata.test",
                                 "host.test", "127.0.0.1", HOST_ADDR},
                        log)

    def test_not_on_the_list(self):
        sb = self.create(harness.PY_IMAGE, network=allow("allowed.test"))
        code, out = self.urllib(sb["id"], "http://other.test:8080/")
        self.assertEqual(code, 3, out)
        self.assertIn("HTTP 403", out)
        self.assertEqual(self.curl(sb["id"], "http://other.test:8080/",
                                   tunnel=True)[0], 403)
        entries = self.log(sb["id"])["entries"]
        self.assertEqual([e["host"] for e in entries if not e["allowed"]],
                         ["other.test", "other.test"], entries)
        self.assertEqual(entries[-1]["port"], 8080)
        # Each connection is an audit line too (AGENT_SANDBOX_AUDIT_LOG).
        deadline = time.time() + 5
        while time.time() < deadline:
            with open(os.path.join(self.server.data_dir, "audit.log")) as f:
                lines = [json.loads(x) for x in f if '"EGRESS"' in x]
            mine = [x for x in lines if x.get("sandbox_id") == sb["id"]]
            if len(mine) >= 2:
                break
            time.sleep(0.2)
        self.assertEqual([(x["egress"]["host"], x["egress"]["allowed"],
                           x["status"]) for x in mine],
                         [("other.test", False, 403)] * 2, mine)

    def test_direct_connection_goes_nowhere(self):
        sb = self.create(harness.PY_IMAGE, network=True)
        code = ("import socket, sys\n"
                "try:\n"
                "    socket.create_connection((sys.argv[1], %d), 3)\n"
                "    print('connected')\n"
                "except OSError as e:\n"
                "    print('refused', e.errno)\n" % PORT)
        r = self.server.exec(sb["id"], ["python3", "-c", code, SERVER])
        self.assertIn("refused", r["stdout"], r)
        r = self.server.exec(sb["id"], "ls /sys/class/net")
        self.assertEqual(r["stdout"].split(), ["lo"])

    def test_change_at_run_time(self):
        sb = self.create(harness.PY_IMAGE, network=allow("allowed.test"))
        self.assertEqual(self.urllib(sb["id"],
                                     "http://other.test:8080/")[0], 3)
        status, doc = self.put(sb["id"], {"mode": "public"})
        self.assertEqual((status, doc), (200, {"mode": "public"}))
        code, out = self.urllib(sb["id"], "http://other.test:8080/p")
        self.assertEqual(code, 0, out)
        status, doc = self.put(sb["id"], {"mode": "none"})
        self.assertEqual((status, doc), (200, {"mode": "none"}))
        # No proxy variables any more, and no network without them.
        code, out = self.urllib(sb["id"], "http://allowed.test:8080/")
        self.assertEqual(code, 4, out)
        code, out = self.curl(sb["id"], "http://allowed.test:8080/")
        self.assertEqual(code, 403, out)
        # From no network at all to a policy: a listener is made.
        nn = self.create(harness.PY_IMAGE, network=False)
        self.assertEqual(self.put(nn["id"], allow("allowed.test"))[0], 200)
        code, out = self.urllib(nn["id"], "http://allowed.test:8080/n")
        self.assertEqual(code, 0, out)

    def test_log_is_bounded(self):
        sb = self.create(harness.PY_IMAGE, network=allow("allowed.test"))
        for i in range(LOG_SIZE + 3):
            self.urllib(sb["id"], "http://allowed.test:8080/%d" % i)
        log = self.log(sb["id"])
        self.assertEqual(len(log["entries"]), LOG_SIZE, log)
        self.assertEqual(log["dropped"], 3, log)
        last = log["entries"][-1]
        self.assertEqual((last["host"], last["port"], last["address"],
                          last["allowed"]),
                         ("allowed.test", 8080, SERVER, True), last)
        self.assertGreater(last["bytes_received"], 0, last)

    def test_two_sandboxes_two_policies(self):
        a = self.create(harness.PY_IMAGE, network=allow("allowed.test"))
        b = self.create(harness.PY_IMAGE, network=allow("other.test"))
        self.assertEqual(self.urllib(a["id"],
                                     "http://allowed.test:8080/")[0], 0)
        self.assertEqual(self.urllib(a["id"],
                                     "http://other.test:8080/")[0], 3)
        self.assertEqual(self.urllib(b["id"],
                                     "http://other.test:8080/")[0], 0)
        self.assertEqual(self.urllib(b["id"],
                                     "http://allowed.test:8080/")[0], 3)
        la, lb = self.log(a["id"])["entries"], self.log(b["id"])["entries"]
        self.assertEqual([(e["host"], e["allowed"]) for e in la],
                         [("allowed.test", True), ("other.test", False)])
        self.assertEqual([(e["host"], e["allowed"]) for e in lb],
                         [("other.test", True), ("allowed.test", False)])

    def test_fork_keeps_the_policy(self):
        sb = self.create(harness.PY_IMAGE, network=allow("allowed.test"))
        status, snap = self.server.api(
            "POST", "/v1/sandboxes/%s/snapshots" % sb["id"], {})
        self.assertEqual(status, 201, snap)
        status, fk = self.server.api(
            "POST", "/v1/snapshots/%s/fork" % snap["id"], {})
        self.assertEqual(status, 201, fk)
        self.addCleanup(self.server.api, "DELETE", "/v1/sandboxes/" +
                        fk["id"])
        self.assertEqual(self.network(fk["id"]), allow("allowed.test"))
        self.assertEqual(self.urllib(fk["id"],
                                     "http://allowed.test:8080/f")[0], 0)
        status, fk2 = self.server.api(
            "POST", "/v1/snapshots/%s/fork" % snap["id"],
            {"network": {"mode": "none"}})
        self.assertEqual(status, 201, fk2)
        self.addCleanup(self.server.api, "DELETE", "/v1/sandboxes/" +
                        fk2["id"])
        self.assertEqual(self.network(fk2["id"]), {"mode": "none"})

    def test_rollback_keeps_a_way_out(self):
        sb = self.create(harness.PY_IMAGE, network=allow("allowed.test"))
        status, snap = self.server.api(
            "POST", "/v1/sandboxes/%s/snapshots" % sb["id"], {})
        self.assertEqual(status, 201, snap)
        status, doc = self.server.api(
            "POST", "/v1/sandboxes/%s/rollback" % sb["id"],
            {"snapshot_id": snap["id"]})
        self.assertEqual(status, 200, doc)
        self.assertEqual(self.network(sb["id"]), allow("allowed.test"))
        # A new container: its listener comes with Docker's start event.
        self.assertTrue(self.eventually(sb["id"]), "no way out after a "
                        "rollback")

    def test_restarted_container_and_proxy(self):
        sb = self.create(harness.PY_IMAGE, network=allow("allowed.test"))
        subprocess.run(["docker", "restart", "-t", "1",
                        "agent-sandbox-" + sb["id"]], check=True,
                       capture_output=True)
        self.assertTrue(self.eventually(sb["id"]), "no way out after a "
                        "container restart")
        before = self.server.log_text().count("egress-proxy started")
        pid = self.server.children().get("egress-proxy")
        self.assertIsNotNone(pid, self.server.children())
        os.kill(pid, 9)
        self.assertTrue(self.eventually(sb["id"]), "no way out after the "
                        "egress proxy restarted")
        self.assertGreater(self.server.log_text().count(
            "egress-proxy started"), before)
        self.assertNotEqual(self.server.children().get("egress-proxy"), pid)

    def eventually(self, sid, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.urllib(sid, "http://allowed.test:8080/r")[0] == 0:
                return True
            time.sleep(0.5)
        return False


class Cli(EgressCase):
    """The CLI's network and network-log verbs (docs/cli.md), and the MCP
    server's sandbox_network tool (docs/mcp.md), against the same
    server."""

    def cli(self, *args):
        return harness.run_cli(self.server, *args)

    def ok(self, *args):
        rc, out, err = self.cli(*args)
        self.assertEqual(rc, 0, (args, out, err))
        return out.decode()

    def test_show_and_replace(self):
        sid = self.create(network=False)["id"]
        self.assertEqual(self.ok("network", sid), "mode:  none\n")
        out = self.ok("network", sid, "allow", "Allowed.TEST",
                      SUBNET + ":8080")
        self.assertEqual(out, "mode:  allowlist\nallow: allowed.test\n"
                         "       %s:8080\n" % SUBNET)
        self.assertEqual(self.network(sid),
                         allow("allowed.test", SUBNET + ":8080"))
        self.assertEqual(json.loads(self.ok("--json", "network", sid)),
                         allow("allowed.test", SUBNET + ":8080"))
        self.assertEqual(self.ok("network", sid, "public"),
                         "mode:  public\n")
        self.assertEqual(self.network(sid), {"mode": "public"})

    def test_create_and_fork_with_an_allowlist(self):
        out = self.ok("create", "--allow", "Allowed.test", "--allow",
                      SUBNET + ":8080")
        sid = out.strip()
        self.addCleanup(self.server.api, "DELETE", "/v1/sandboxes/" + sid)
        self.assertEqual(self.network(sid),
                         allow("allowed.test", SUBNET + ":8080"))
        status, snap = self.server.api(
            "POST", "/v1/sandboxes/%s/snapshots" % sid, {"name": None})
        self.assertEqual(status, 201, snap)
        self.addCleanup(self.server.api, "DELETE",
                        "/v1/snapshots/" + snap["id"])
        fid = self.ok("fork", snap["id"], "--allow", "other.test").strip()
        self.addCleanup(self.server.api, "DELETE", "/v1/sandboxes/" + fid)
        self.assertEqual(self.network(fid), allow("other.test"))
        # Without --allow a fork keeps its snapshot's policy.
        kid = self.ok("fork", snap["id"]).strip()
        self.addCleanup(self.server.api, "DELETE", "/v1/sandboxes/" + kid)
        self.assertEqual(self.network(kid),
                         allow("allowed.test", SUBNET + ":8080"))
        for verb in (["create"], ["fork", snap["id"]]):
            rc, out, err = self.cli(*(verb + ["--network", "--allow",
                                              "x.test"]))
            self.assertEqual((rc, out), (2, b""), err)
            self.assertIn("--network or --allow, not both", err)
        rc, out, err = self.cli("create", "--allow", "bad host!")
        self.assertEqual((rc, out), (1, b""), err)
        self.assertIn("allow[0]", err)

    def test_refusals(self):
        sid = self.create(network=False)["id"]
        # The server names the bad entry; nothing changed.
        rc, out, err = self.cli("network", sid, "allow", "ok.test",
                                "bad host!")
        self.assertEqual((rc, out), (1, b""), err)
        self.assertIn("allow[1]", err)
        self.assertEqual(self.network(sid), {"mode": "none"})
        # Odd entries reach the server as given and come back as its
        # refusals: non-ASCII, invalid UTF-8, too many, too long.
        for entries, text in ((["\u00e9.test"], "xn--"),
                              (["h%d.test" % i for i in range(300)], "256"),
                              (["a" * 9000 + ".test"], "too_long")):
            rc, out, err = self.cli("network", sid, "allow", *entries)
            self.assertEqual((rc, out), (1, b""), (entries[:1], err))
            self.assertIn(text, err, entries[:1])
        # Bytes that are not UTF-8 would make no JSON: refused here.
        for args in (["network", sid, "allow", b"ok.test", b"\xff.test"],
                     ["create", "--allow", b"\xc3.test"]):
            rc, out, err = self.cli(*args)
            self.assertEqual((rc, out), (2, b""), (args, err))
            self.assertIn("is not UTF-8", err)
        self.assertEqual(self.network(sid), {"mode": "none"})
        for args in (["bridge"], ["allow"], ["none", "x.test"],
                     ["public", "x.test"], []):
            rc, out, err = self.cli("network", *([sid] + args if args
                                                 else []))
            self.assertEqual((rc, out), (2, b""), (args, err))
            self.assertIn("usage: agent-sandbox network", err)
        rc, out, err = self.cli("network-log", sid, "extra")
        self.assertEqual(rc, 2, err)
        for verb in ("network", "network-log"):
            rc, out, err = self.cli(verb, "sb_0000000000000000")
            self.assertEqual((rc, out), (1, b""), err)
            self.assertIn("not found", err)

    def test_log_table(self):
        """The table of the proxy's log (odd bytes in it: the unit test,
        test_cli_network.c, since the proxy logs only valid names)."""
        sid = self.create(network=allow("allowed.test"))["id"]
        self.assertEqual(self.ok("network-log", sid).splitlines(),
                         ["TIME  VERDICT  HOST:PORT  ADDRESS  SENT  "
                          "RECEIVED  REASON"])
        r = self.server.exec(sid, "wget -q -O - http://allowed.test:8080/a;"
                             " wget -q -O - http://other.test:8080/b; true")
        self.assertIn("hello /a", r["stdout"], r)
        log = self.log(sid)
        out = self.ok("network-log", sid)
        lines = out.splitlines()
        self.assertEqual(len(lines), 1 + len(log["entries"]), out)
        self.assertTrue(lines[0].startswith("TIME "), out)
        self.assertRegex(out, r"\ballowed +allowed\.test:8080 +%s +\d+ +"
                         r"[1-9]\d* +-\n" % SERVER.replace(".", r"\."))
        self.assertRegex(out, r"\brefused +other\.test:8080 .*not on the "
                         r"allowlist\n")
        self.assertEqual(json.loads(self.ok("--json", "network-log", sid)),
                         self.log(sid))

    def test_mcp_tool(self):
        """agent-sandbox-mcp's sandbox_network: the same two documents."""
        import test_mcp
        sid = self.create(network=allow("allowed.test"))["id"]
        self.server.exec(sid, "wget -q -O - http://other.test:8080/; true")
        test_mcp.SERVER = self.server
        m = test_mcp.Mcp()
        self.addCleanup(m.close)
        m.initialize()
        doc = json.loads(m.ok("sandbox_network", sandbox_id=sid))
        self.assertEqual(sorted(doc), ["log", "policy"])
        self.assertEqual(doc["policy"], allow("allowed.test"))
        self.assertEqual(doc["log"], self.log(sid))
        self.assertEqual([(e["host"], e["allowed"], e["reason"])
                          for e in doc["log"]["entries"]],
                         [("other.test", False, "not on the allowlist")])


class WithoutItsProxy(unittest.TestCase):
    """A server whose egress proxy cannot start: a policy sandbox's
    create fails with 503 and leaves nothing, everything else serves on,
    and once the binary is back the next policy sandbox starts it."""

    def test_create_fails_cleanly_then_recovers(self):
        server = harness.SandboxServer(AGENT_SANDBOX_NETWORK_TRUE="public",
                                       AGENT_SANDBOX_EGRESS_DNS=SERVER,
                                       AGENT_SANDBOX_EGRESS_PUBLIC=SUBNET)
        # Its own directory of the children, built or installed, but one.
        libexec = tempfile.mkdtemp(prefix="as-libexec-noegress-")
        self.addCleanup(shutil.rmtree, libexec, True)
        for name in os.listdir(server.libexec):
            if name != "egress-proxy":
                os.symlink(os.path.join(server.libexec, name),
                           os.path.join(libexec, name))
        server.env["AGENT_SANDBOX_LIBEXEC_DIR"] = libexec
        target = os.path.join(server.libexec, "egress-proxy")
        link = os.path.join(libexec, "egress-proxy")
        server.start()
        try:
            status, doc = server.api("POST", "/v1/sandboxes",
                                     {"network": {"mode": "public"}})
            self.assertEqual(status, 503, doc)
            self.assertIn("its network", doc["error"]["message"])
            status, lst = server.api("GET", "/v1/sandboxes")
            self.assertEqual(lst["sandboxes"], [])
            self.assertEqual(server.docker_objects(), ([], []))
            sb = server.create(network=False)
            self.assertEqual(server.exec(sb["id"], "echo ok")["stdout"],
                             "ok\n")
            os.symlink(target, link)
            status, doc = server.api("POST", "/v1/sandboxes",
                                     {"network": {"mode": "public"}})
            self.assertEqual(status, 201, doc)
            self.assertIn("egress-proxy", server.children())
        finally:
            server.stop()
            server.cleanup()


if __name__ == "__main__":
    unittest.main()
