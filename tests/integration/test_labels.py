"""Labels against the real dockerd (docs/rest-api.md "Labels"): set on
create and fork, shown in every sandbox answer, changed with a merge-patch
PATCH, filtered in the list (one label, two ANDed, a key alone, a missing
one), refused when odd (422 for the schema, 400 for the rules), kept on
disk across a kill -9 of the whole server and across a rollback, and the
CLI's create/ls --label and label verbs."""

import http.client
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

CLI = os.path.join(harness.BUILDDIR, "client", "agent-sandbox")


class LabelCase(harness.SandboxCase):
    def ids(self, query):
        status, doc = self.server.api("GET", "/v1/sandboxes" + query)
        self.assertEqual(status, 200, doc)
        return {s["id"] for s in doc["sandboxes"]}

    def patch(self, sid, body, raw=False):
        return self.server.api("PATCH", "/v1/sandboxes/" + sid,
                               body if not raw else body)

    def refused(self, status, doc, want_status, code=None):
        self.assertEqual(status, want_status, doc)
        if code is not None:
            self.assertEqual(doc["error"]["code"], code, doc)


class Labels(LabelCase):
    def test_create_get_list_show_them(self):
        a = self.create(labels={"team": "ml", "env": "prod"})
        self.assertEqual(a["labels"], {"env": "prod", "team": "ml"})
        b = self.create()
        self.assertEqual(b["labels"], {})
        status, got = self.server.api("GET", "/v1/sandboxes/" + a["id"])
        self.assertEqual((status, got["labels"]),
                         (200, {"env": "prod", "team": "ml"}))
        status, lst = self.server.api("GET", "/v1/sandboxes")
        by_id = {s["id"]: s for s in lst["sandboxes"]}
        self.assertEqual(by_id[a["id"]]["labels"], a["labels"])
        self.assertEqual(by_id[b["id"]]["labels"], {})
        # Every other field is as the reference answers it (labels and
        # status_reason are this server's own).
        self.assertEqual(set(got) - {"labels", "status_reason"},
                         {"id", "status", "image", "cpus", "memory_mb",
                          "pids_limit", "network", "read_only_rootfs",
                          "created_at", "expires_at", "source_snapshot_id"})

    def test_filters(self):
        a = self.create(labels={"team": "ml", "env": "prod"})
        b = self.create(labels={"team": "ml", "env": "dev"})
        c = self.create(labels={"team": "web", "note": "a=b c"})
        mine = {a["id"], b["id"], c["id"]}
        self.assertEqual(self.ids("?label=team=ml") & mine,
                         {a["id"], b["id"]})
        self.assertEqual(self.ids("?label=team=ml&label=env=dev") & mine,
                         {b["id"]})
        self.assertEqual(self.ids("?label=env") & mine, {a["id"], b["id"]})
        self.assertEqual(self.ids("?label=missing"), set())
        self.assertEqual(self.ids("?label=team=nobody"), set())
        self.assertEqual(self.ids("?label=team=ml&label=missing"), set())
        # The value after the first '=' is all value, percent-decoded.
        self.assertEqual(self.ids("?label=note%3Da%3Db+c"), {c["id"]})
        self.assertEqual(self.ids("?label=note=a=b%20c"), {c["id"]})
        # Other parameters are ignored, as the reference ignores them.
        self.assertEqual(self.ids("?foo=1&label=team=web") & mine,
                         {c["id"]})

    def test_bad_filters(self):
        for query in ("?label=", "?label==x", "?label=-a", "?label=a%20b",
                      "?label=%C3%A9=x", "?label=k=%0A", "?label=k=%FF",
                      "?label=k=" + "v" * 256):
            status, doc = self.server.api("GET", "/v1/sandboxes" + query)
            self.refused(status, doc, 400, "invalid_request")
        # The refused filter is echoed whole, NUL and odd bytes escaped.
        status, doc = self.server.api("GET", "/v1/sandboxes?label=k%00=x")
        self.refused(status, doc, 400, "invalid_request")
        self.assertIn("'k\\x00=x'", doc["error"]["message"])
        status, doc = self.server.api(
            "GET", "/v1/sandboxes?" + "&".join(
                "label=k%d" % i for i in range(33)))
        self.refused(status, doc, 400, "invalid_request")
        self.assertIn("at most 32", doc["error"]["message"])

    def test_create_refusals(self):
        cases = [
            ({"labels": []}, 422), ({"labels": "a=b"}, 422),
            ({"labels": {"a": 1}}, 422), ({"labels": {"a": None}}, 422),
            ({"labels": {"a": {"b": "c"}}}, 422),
            ({"labels": {"": "x"}}, 400), ({"labels": {"é": "x"}}, 400),
            ({"labels": {"a" * 64: "x"}}, 400),
            ({"labels": {"a": "v" * 256}}, 400),
            ({"labels": {"a": "x\ny"}}, 400),
            ({"labels": {"k%d" % i: "" for i in range(33)}}, 400),
        ]
        before = self.ids("")
        for body, want in cases:
            status, doc = self.server.api("POST", "/v1/sandboxes", body)
            self.assertEqual(status, want, (body, doc))
            if want == 422:
                self.assertIn("detail", doc)
            else:
                self.assertEqual(doc["error"]["code"], "invalid_request")
        self.assertEqual(self.ids(""), before)
        # The bounds themselves are fine.
        doc = self.create(labels={"k%02d" % i: "v" * 255 for i in range(31)}
                          | {"a" * 63: "é" * 127})
        self.assertEqual(len(doc["labels"]), 32)

    def test_duplicate_keys_last_wins(self):
        body = b'{"labels": {"a": "1", "a": "2"}}'
        status, _, data = self.server.request(
            "POST", "/v1/sandboxes", body,
            dict(harness.AUTH, **{"Content-Type": "application/json"}))
        doc = json.loads(data)
        self.assertEqual(status, 201, doc)
        self.addCleanup(self.server.api, "DELETE",
                        "/v1/sandboxes/" + doc["id"])
        self.assertEqual(doc["labels"], {"a": "2"})

    def test_patch(self):
        a = self.create(labels={"keep": "1", "gone": "2", "change": "3"})
        status, doc = self.patch(a["id"], {"labels": {
            "gone": None, "change": "three", "new": "4", "never": None}})
        self.assertEqual(status, 200, doc)
        want = {"keep": "1", "change": "three", "new": "4"}
        self.assertEqual(doc["labels"], want)
        self.assertEqual(doc["id"], a["id"])
        self.assertEqual(doc["status"], "running")
        self.assertEqual(self.server.api("GET", "/v1/sandboxes/" +
                                         a["id"])[1]["labels"], want)
        # {} changes nothing; {"labels": null} removes them all.
        status, doc = self.patch(a["id"], {})
        self.assertEqual((status, doc["labels"]), (200, want))
        status, doc = self.patch(a["id"], {"labels": None})
        self.assertEqual((status, doc["labels"]), (200, {}))
        # The bound applies to the result.
        self.patch(a["id"], {"labels": {"k%d" % i: "" for i in range(30)}})
        status, doc = self.patch(a["id"], {"labels": {"x": "", "y": "",
                                                      "z": ""}})
        self.refused(status, doc, 400, "invalid_request")
        status, doc = self.patch(a["id"], {"labels": {"x": "", "y": "",
                                                      "k0": None}})
        self.assertEqual((status, len(doc["labels"])), (200, 31))

    def test_patch_refusals(self):
        a = self.create(labels={"a": "1"})
        cases = [
            ({"labels": {"a": 5}}, 422), ({"labels": 3}, 422),
            ({"labels": {}, "memory_mb": 64}, 422), ([], 422),
            ({"labels": {"-a": "x"}}, 400),
            ({"labels": {"a": "\u0007"}}, 400),
            ({"labels": {"a": "\u0085"}}, 400),
        ]
        for body, want in cases:
            status, doc = self.patch(a["id"], body)
            self.assertEqual(status, want, (body, doc))
        for raw in (b"", b"{", b'{"labels": {"a": "\xff"}}'):
            status, _, data = self.server.request(
                "PATCH", "/v1/sandboxes/" + a["id"], raw,
                dict(harness.AUTH, **{"Content-Type": "application/json"}))
            self.assertIn(status, (400, 422), (raw, data))
        self.assertEqual(self.server.api("GET", "/v1/sandboxes/" +
                                         a["id"])[1]["labels"], {"a": "1"})
        status, doc = self.patch("sb_0000000000000000", {"labels": {}})
        self.refused(status, doc, 404, "not_found")
        self.assertEqual(doc["error"]["message"],
                         "sandbox sb_0000000000000000 not found")
        # The body is checked before the id, as for a TTL reset.
        status, doc = self.patch("sb_0000000000000000", {"labels": 1})
        self.assertEqual(status, 422)
        status, _, _ = self.server.request(
            "PATCH", "/v1/sandboxes/" + a["id"], {"labels": {}})
        self.assertEqual(status, 401)

    def test_patch_on_a_kept_alive_connection(self):
        a = self.create()
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port,
                                          timeout=30)
        try:
            hdrs = dict(harness.AUTH, **{"Content-Type":
                                         "application/merge-patch+json"})
            for i in range(5):
                conn.request("PATCH", "/v1/sandboxes/" + a["id"],
                             body=json.dumps({"labels": {"n": str(i)}}),
                             headers=hdrs)
                resp = conn.getresponse()
                doc = json.loads(resp.read())
                self.assertEqual((resp.status, doc["labels"]),
                                 (200, {"n": str(i)}))
        finally:
            conn.close()

    def test_fork_takes_only_its_own(self):
        a = self.create(labels={"origin": "yes"})
        status, snap = self.server.api(
            "POST", "/v1/sandboxes/%s/snapshots" % a["id"], {})
        self.assertEqual(status, 201, snap)
        self.addCleanup(self.server.api, "DELETE",
                        "/v1/snapshots/" + snap["id"])
        status, f = self.server.api("POST", "/v1/snapshots/%s/fork" %
                                    snap["id"], {"labels": {"fork": "1"}})
        self.assertEqual(status, 201, f)
        self.addCleanup(self.server.api, "DELETE",
                        "/v1/sandboxes/" + f["id"])
        self.assertEqual(f["labels"], {"fork": "1"})
        status, g = self.server.api("POST", "/v1/snapshots/%s/fork" %
                                    snap["id"])
        self.assertEqual(status, 201, g)
        self.addCleanup(self.server.api, "DELETE",
                        "/v1/sandboxes/" + g["id"])
        self.assertEqual(g["labels"], {})
        status, doc = self.server.api("POST", "/v1/snapshots/%s/fork" %
                                      snap["id"], {"labels": {"=": "x"}})
        self.refused(status, doc, 400, "invalid_request")

    def test_rollback_and_timeout_keep_them(self):
        a = self.create(labels={"kept": "yes"})
        status, snap = self.server.api(
            "POST", "/v1/sandboxes/%s/snapshots" % a["id"], {})
        self.addCleanup(self.server.api, "DELETE",
                        "/v1/snapshots/" + snap["id"])
        self.patch(a["id"], {"labels": {"later": "1"}})
        status, doc = self.server.api(
            "POST", "/v1/sandboxes/%s/rollback" % a["id"],
            {"snapshot_id": snap["id"]})
        self.assertEqual(status, 200, doc)
        self.assertEqual(doc["labels"], {"kept": "yes", "later": "1"})
        status, doc = self.server.api(
            "POST", "/v1/sandboxes/%s/timeout" % a["id"],
            {"timeout_seconds": 600})
        self.assertEqual((status, doc["labels"]),
                         (200, {"kept": "yes", "later": "1"}))


class Restart(LabelCase):
    def test_labels_survive_kill9_of_the_whole_server(self):
        a = self.create(labels={"survives": "kill -9"})
        self.patch(a["id"], {"labels": {"patched": "yes"}})
        b = self.create()
        self.server.kill9()
        self.server.start()
        status, doc = self.server.api("GET", "/v1/sandboxes/" + a["id"])
        self.assertEqual(status, 200, doc)
        self.assertEqual(doc["labels"],
                         {"survives": "kill -9", "patched": "yes"})
        self.assertEqual(self.server.api("GET", "/v1/sandboxes/" +
                                         b["id"])[1]["labels"], {})
        self.assertEqual(self.ids("?label=patched=yes"), {a["id"]})

    def test_old_record_without_labels_loads(self):
        a = self.create(labels={"x": "1"})
        path = os.path.join(self.server.data_dir, "sandboxes",
                            a["id"] + ".json")
        self.assertTrue(os.path.exists(path), os.listdir(
            os.path.join(self.server.data_dir, "sandboxes")))
        with open(path) as f:
            rec = json.load(f)
        self.assertEqual(rec["labels"], {"x": "1"})
        self.server.stop()
        del rec["labels"]
        with open(path, "w") as f:
            json.dump(rec, f, indent=2, sort_keys=True)
        self.server.start()
        status, doc = self.server.api("GET", "/v1/sandboxes/" + a["id"])
        self.assertEqual((status, doc["labels"]), (200, {}))


class Cli(LabelCase):
    def cli(self, *args):
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
               "AGENT_SANDBOX_URL": "http://127.0.0.1:%d" % self.server.port,
               "AGENT_SANDBOX_API_KEY": harness.TEST_KEY}
        p = subprocess.run([CLI] + list(args), stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=env, timeout=120)
        return p.returncode, p.stdout.decode(), p.stderr.decode()

    def test_create_ls_label(self):
        rc, out, err = self.cli("create", "--label", "team=ml",
                                "--label", "env=prod")
        self.assertEqual(rc, 0, err)
        sid = out.split()[0]
        self.addCleanup(self.server.api, "DELETE", "/v1/sandboxes/" + sid)
        self.assertEqual(self.server.api("GET", "/v1/sandboxes/" +
                                         sid)[1]["labels"],
                         {"team": "ml", "env": "prod"})
        rc, out, err = self.cli("ls", "--label", "team=ml",
                                "--label", "env=prod")
        self.assertEqual(rc, 0, err)
        lines = out.splitlines()
        self.assertEqual(lines[0].split()[-1], "LABELS")
        rows = [ln.split() for ln in lines[1:]]
        self.assertEqual([r[0] for r in rows], [sid])
        self.assertEqual(rows[0][-1], "env=prod,team=ml")
        rc, out, err = self.cli("ls", "--label", "env=none")
        self.assertEqual((rc, out.splitlines()[1:]), (0, []))
        rc, out, err = self.cli("--json", "ls", "--label", "team")
        self.assertIn(sid, [s["id"] for s in json.loads(out)["sandboxes"]])

        rc, out, err = self.cli("label", sid, "env-", "owner=me")
        self.assertEqual(rc, 0, err)
        self.assertIn("owner=me,team=ml", out)
        rc, out, err = self.cli("inspect", sid)
        self.assertIn("labels: owner=me,team=ml", out.splitlines())

    def test_fork_label(self):
        a = self.create(labels={"origin": "1"})
        status, snap = self.server.api(
            "POST", "/v1/sandboxes/%s/snapshots" % a["id"], {})
        self.assertEqual(status, 201, snap)
        self.addCleanup(self.server.api, "DELETE",
                        "/v1/snapshots/" + snap["id"])
        rc, out, err = self.cli("fork", snap["id"], "--label", "try=2")
        self.assertEqual(rc, 0, err)
        sid = out.split()[0]
        self.addCleanup(self.server.api, "DELETE", "/v1/sandboxes/" + sid)
        self.assertEqual(self.server.api("GET", "/v1/sandboxes/" +
                                         sid)[1]["labels"], {"try": "2"})
        rc, out, err = self.cli("fork", snap["id"], "--label", "bad")
        self.assertEqual(rc, 2, err)

    def test_usage_errors(self):
        for args in (("create", "--label", "novalue"),
                     ("create", "--label", "-x=1"),
                     ("create", "--label", "k=a\nb"),
                     ("ls", "--label", "=x"),
                     ("label", "sb_0000000000000000"),
                     ("label", "sb_0000000000000000", "bad"),
                     ("label", "sb_0000000000000000", "-")):
            rc, out, err = self.cli(*args)
            self.assertEqual(rc, 2, (args, out, err))
        rc, out, err = self.cli("label", "sb_0000000000000000", "a=b")
        self.assertEqual(rc, 1, err)
        self.assertIn("not_found", err)


if __name__ == "__main__":
    unittest.main()
