"""The audit log with the real daemons and dockerd: a whole life (create,
exec, file write, snapshot, fork, rollback, process start, signal and
delete, deletes) appears in order with nothing missing, each line valid
JSON with its route, ids, outcome and duration; failures are audited with
their code; reads are not; no secret, environment value, output or file
content is ever in the file; SIGHUP after a rename writes to the new file;
the syslog destination writes datagrams to /dev/log.
"""

import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

harness.require_root_and_docker()

FAILURES = []
TIME_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
ENV_SECRET = "env-value-7f3a9c1e5b"
OUTPUT_SECRET = "output-4d8e2b6a0c"
FILE_SECRET = "file-content-9b1f7d3e5a"


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def audit_path(server):
    return os.path.join(server.data_dir, "audit.log")


def read_lines(path):
    """Every line of the file, parsed; a line that is not JSON fails."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        return [], b""
    check(raw == b"" or raw.endswith(b"\n"), "the file ends with a newline")
    out = []
    for line in raw.split(b"\n")[:-1]:
        try:
            out.append(json.loads(line.decode("utf-8", "strict")))
        except ValueError as e:
            check(False, "a line is valid UTF-8 JSON: %r (%s)" % (line, e))
    return out, raw


def wait_lines(path, n, timeout=10):
    """The lines once there are at least n (a line is written when its
    request ends, a moment after the client saw the answer)."""
    deadline = time.time() + timeout
    while True:
        lines, raw = read_lines(path)
        if len(lines) >= n or time.time() > deadline:
            return lines, raw
        time.sleep(0.05)


def expect(line, route, status, error=None, key="key-1", tenant=None,
           **ids):
    what = "%s %s" % (route, status)
    check(line.get("route") == route, "%s: route %r" % (what,
                                                       line.get("route")))
    check(line.get("status") == status, "%s: status %r" %
          (what, line.get("status")))
    check(line.get("error") == error, "%s: error %r" % (what,
                                                       line.get("error")))
    for k in ("sandbox_id", "snapshot_id", "process_id"):
        check(line.get(k) == ids.get(k), "%s: %s %r, not %r" %
              (what, k, line.get(k), ids.get(k)))
    check(TIME_RE.match(line.get("time", "")) is not None,
          "%s: time %r is RFC 3339 UTC with ms" % (what, line.get("time")))
    d = line.get("duration_ms")
    check(isinstance(d, int) and d >= 0, "%s: duration_ms %r" % (what, d))
    allowed = {"time", "key", "tenant", "client", "route", "sandbox_id",
               "snapshot_id", "process_id", "status", "error",
               "client_gone", "duration_ms"}
    check(set(line) <= allowed, "%s: no other field: %r" %
          (what, set(line) - allowed))
    # The flat keys are named by position and have no tenant; a keys
    # file's have both.
    check(line.get("key") == key, "%s: key %r" % (what, line.get("key")))
    check(line.get("tenant") == tenant, "%s: tenant %r" %
          (what, line.get("tenant")))
    check(re.match(r"^127\.0\.0\.1:\d+$", line.get("client", "")) is not None,
          "%s: client %r" % (what, line.get("client")))


def life(server):
    """The whole flow; returns what the lines must be, in order."""
    want = []
    sb = server.create()["id"]
    want.append(("POST /v1/sandboxes", 201, None, {"sandbox_id": sb}))
    r = server.exec(sb, "echo %s; echo $SECRET_VAR" % OUTPUT_SECRET,
                    env={"SECRET_VAR": ENV_SECRET})
    check(OUTPUT_SECRET in r["stdout"] and ENV_SECRET in r["stdout"],
          "exec ran: %r" % r)
    want.append(("POST /v1/sandboxes/{sandbox_id}/exec", 200, None,
                 {"sandbox_id": sb}))
    status, _ = server.api("PUT", "/v1/sandboxes/%s/files?path=/workspace/"
                           "notes.txt" % sb, FILE_SECRET.encode(),
                           headers={"Content-Type":
                                    "application/octet-stream"})
    check(status == 200, "file write: %s" % status)
    want.append(("PUT /v1/sandboxes/{sandbox_id}/files", 200, None,
                 {"sandbox_id": sb}))
    status, snap = server.api("POST", "/v1/sandboxes/%s/snapshots" % sb,
                              {"name": "before"})
    check(status == 201, "snapshot: %s %r" % (status, snap))
    snap = snap["id"]
    want.append(("POST /v1/sandboxes/{sandbox_id}/snapshots", 201, None,
                 {"sandbox_id": sb, "snapshot_id": snap}))
    status, _ = server.api("PATCH", "/v1/sandboxes/" + sb,
                           {"labels": {"stage": "audited"}})
    check(status == 200, "labels PATCH: %s" % status)
    want.append(("PATCH /v1/sandboxes/{sandbox_id}", 200, None,
                 {"sandbox_id": sb}))
    # Reads: not audited.
    for path in ("/v1/sandboxes", "/v1/sandboxes/" + sb, "/v1/snapshots",
                 "/v1/sandboxes/%s/stats" % sb,
                 "/v1/sandboxes?label=stage=audited",
                 "/v1/snapshots/" + snap, "/healthz",
                 "/v1/sandboxes/%s/files?path=/workspace/notes.txt" % sb):
        status, _ = server.api("GET", path)
        check(status == 200, "GET %s: %s" % (path, status))
    status, fork = server.api("POST", "/v1/snapshots/%s/fork" % snap, {})
    check(status == 201, "fork: %s %r" % (status, fork))
    fork = fork["id"]
    want.append(("POST /v1/snapshots/{snapshot_id}/fork", 201, None,
                 {"sandbox_id": fork, "snapshot_id": snap}))
    status, _ = server.api("POST", "/v1/sandboxes/%s/rollback" % sb,
                           {"snapshot_id": snap})
    check(status == 200, "rollback: %s" % status)
    want.append(("POST /v1/sandboxes/{sandbox_id}/rollback", 200, None,
                 {"sandbox_id": sb, "snapshot_id": snap}))
    status, proc = server.api("POST", "/v1/sandboxes/%s/processes" % sb,
                              {"command": "sleep 300"})
    check(status == 201, "process start: %s %r" % (status, proc))
    proc = proc["id"]
    ref = {"sandbox_id": sb, "process_id": proc}
    want.append(("POST /v1/sandboxes/{sandbox_id}/processes", 201, None, ref))
    status, _ = server.api("POST", "/v1/sandboxes/%s/processes/%s/signal" %
                           (sb, proc), {"signal": "KILL"})
    check(status == 204, "signal: %s" % status)
    want.append(("POST /v1/sandboxes/{sandbox_id}/processes/{process_id}/signal", 204,
                 None, ref))
    status, _ = server.api("DELETE", "/v1/sandboxes/%s/processes/%s" %
                           (sb, proc))
    check(status == 204, "process delete: %s" % status)
    want.append(("DELETE /v1/sandboxes/{sandbox_id}/processes/{process_id}", 204, None,
                 ref))
    # Failures, with their codes.
    status, _ = server.api("DELETE", "/v1/sandboxes/sb_00000000deadbeef")
    check(status == 404, "delete unknown: %s" % status)
    want.append(("DELETE /v1/sandboxes/{sandbox_id}", 404, "not_found",
                 {"sandbox_id": "sb_00000000deadbeef"}))
    status, _ = server.api("POST", "/v1/sandboxes/%s/exec" % sb,
                           {"command": "   "})
    check(status == 400, "blank command: %s" % status)
    want.append(("POST /v1/sandboxes/{sandbox_id}/exec", 400, "invalid_request",
                 {"sandbox_id": sb}))
    status, _ = server.api("GET", "/v1/sandboxes/sb_00000000deadbeef")
    check(status == 404, "get unknown: %s" % status)
    for victim in (sb, fork):
        status, _ = server.api("DELETE", "/v1/sandboxes/" + victim)
        check(status == 204, "delete: %s" % status)
        want.append(("DELETE /v1/sandboxes/{sandbox_id}", 204, None,
                     {"sandbox_id": victim}))
    status, _ = server.api("DELETE", "/v1/snapshots/" + snap)
    check(status == 204, "snapshot delete: %s" % status)
    want.append(("DELETE /v1/snapshots/{snapshot_id}", 204, None,
                 {"snapshot_id": snap}))
    return want


def test_flow():
    server = harness.SandboxServer()
    try:
        server.start()
        want = life(server)
        lines, raw = wait_lines(audit_path(server), len(want))
        check(len(lines) == len(want), "%d lines, not %d:\n%s" %
              (len(lines), len(want), raw.decode("utf-8", "replace")))
        for line, (route, status, error, ids) in zip(lines, want):
            expect(line, route, status, error, **ids)
        for secret in (harness.TEST_KEY, ENV_SECRET, OUTPUT_SECRET,
                       FILE_SECRET, "SECRET_VAR", "sleep 300", "echo"):
            check(secret.encode() not in raw,
                  "%r is nowhere in the audit log" % secret)
        st = os.stat(audit_path(server))
        check(st.st_mode & 0o777 == 0o600, "mode 0600: %o" % st.st_mode)
        rotate(server)
    finally:
        server.cleanup()


def test_keys_file_caller():
    """A keys file's key: its name and tenant in each line, a quota's
    refusal audited with its code; the key and its hash nowhere."""
    key = "audit-tenant-key-" + os.urandom(12).hex()
    digest = hashlib.sha256(key.encode()).hexdigest()
    tmp = tempfile.mkdtemp(prefix="as-audit-keys-")
    path = os.path.join(tmp, "keys.json")
    with open(path, "w") as f:
        json.dump({"keys": [{"name": "ci-runner", "tenant": "team-a",
                             "sha256": digest,
                             "quotas": {"sandboxes": 1}}]}, f)
    server = harness.SandboxServer(AGENT_SANDBOX_KEYS_FILE=path)
    try:
        server.start()
        auth = {"Authorization": "Bearer " + key}
        status, sb = server.api("POST", "/v1/sandboxes", {}, headers=auth)
        check(status == 201, "create as ci-runner: %s %r" % (status, sb))
        status, doc = server.api("POST", "/v1/sandboxes", {}, headers=auth)
        check(status == 403, "over the quota: %s %r" % (status, doc))
        status, _ = server.api("DELETE", "/v1/sandboxes/" + sb["id"],
                               headers=auth)
        check(status == 204, "delete as ci-runner: %s" % status)
        lines, raw = wait_lines(audit_path(server), 3)
        check(len(lines) == 3, "3 lines, not %d: %r" % (len(lines), raw))
        want = [("POST /v1/sandboxes", 201, None, {"sandbox_id": sb["id"]}),
                ("POST /v1/sandboxes", 403, "quota_exceeded", {}),
                ("DELETE /v1/sandboxes/{sandbox_id}", 204, None,
                 {"sandbox_id": sb["id"]})]
        for line, (route, status, error, ids) in zip(lines, want):
            expect(line, route, status, error, key="ci-runner",
                   tenant="team-a", **ids)
        for secret in (key, digest):
            check(secret.encode() not in raw,
                  "the key and its hash are nowhere in the audit log")
    finally:
        server.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)


def rotate(server):
    """logrotate's way: rename, then SIGHUP."""
    path = audit_path(server)
    old = path + ".1"
    os.rename(path, old)
    before, _ = read_lines(old)
    server.proc.send_signal(signal.SIGHUP)
    deadline = time.time() + 10
    while not os.path.exists(path) and time.time() < deadline:
        time.sleep(0.05)
    check(os.path.exists(path), "SIGHUP: a new audit.log")
    status, _ = server.api("DELETE", "/v1/snapshots/snap_00000000deadbeef")
    check(status == 404, "after rotation: %s" % status)
    lines, _ = wait_lines(path, 1)
    check(len(lines) == 1 and lines[0].get("snapshot_id") ==
          "snap_00000000deadbeef", "the new line in the new file: %r" %
          lines)
    after, _ = read_lines(old)
    check(after == before, "nothing more in the renamed file")
    check("audit log reopened" in server.log_text(), "the reopen is logged")


def test_odd_ids():
    """Ids as clients send them, non-ASCII and not UTF-8: valid JSON."""
    server = harness.SandboxServer()
    try:
        server.start()
        paths = ["/v1/sandboxes/sb_%C3%A9t%C3%A9", "/v1/sandboxes/sb_%FF%FE",
                 "/v1/snapshots/snap_%E2%80%8B%22%5C"]
        for p in paths:
            status, _, _ = server.request(
                "DELETE", p, headers=dict(harness.AUTH))
            check(status in (400, 404), "DELETE %s: %s" % (p, status))
        lines, raw = wait_lines(audit_path(server), len(paths))
        check(len(lines) == len(paths), "every odd id audited: %r" % raw)
        got = [l.get("sandbox_id") or l.get("snapshot_id") for l in lines]
        # As the client sent them, invalid bytes as U+FFFD.
        check(got == ["sb_\u00e9t\u00e9", "sb_\ufffd\ufffd",
                      "snap_\u200b\"\\"], "odd ids as sent: %r" % got)
        for line in lines:
            check(line.get("status") == 404 and
                  line.get("error") == "not_found",
                  "odd id audited with its failure: %r" % line)
    finally:
        server.cleanup()


def test_off():
    server = harness.SandboxServer(AGENT_SANDBOX_AUDIT_LOG="off")
    try:
        server.start()
        status, _ = server.api("DELETE", "/v1/sandboxes/sb_00000000deadbeef")
        check(status == 404, "off: %s" % status)
        time.sleep(0.5)
        check(not os.path.exists(audit_path(server)), "off: no file")
    finally:
        server.cleanup()


# A private /dev in a mount namespace of its own: the real nodes managerd
# and its children use, and /dev/log bound to the test's socket.
DEV_WRAPPER = r'''
set -e
mount --make-rprivate /
real="$AS_TEST_DEV/real"; mkdir -p "$real"
mount --rbind /dev "$real"
mount -t tmpfs -o mode=755 tmpfs /dev
for n in null zero full random urandom tty; do
    touch "/dev/$n"; mount --bind "$real/$n" "/dev/$n"
done
ln -s /proc/self/fd /dev/fd
touch /dev/log; mount --bind "$AS_TEST_LOG" /dev/log
exec "$@"
'''


def test_syslog():
    """AGENT_SANDBOX_AUDIT_LOG=syslog: the lines go to /dev/log as
    <86>agent-sandbox-audit[pid]: {...} (LOG_AUTHPRIV|LOG_INFO)."""
    server = harness.SandboxServer(AGENT_SANDBOX_AUDIT_LOG="syslog")
    devdir = tempfile.mkdtemp(prefix="as-dev-", dir=server.tmp)
    logsock = os.path.join(server.tmp, "devlog.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(logsock)
    sock.settimeout(10)
    server.env["AS_TEST_DEV"] = devdir
    server.env["AS_TEST_LOG"] = logsock
    server.managerd = ["unshare", "--mount", "--", "/bin/sh", "-c",
                       DEV_WRAPPER, "sh", server.managerd]
    try:
        server.start()
        status, _ = server.api("DELETE", "/v1/sandboxes/sb_00000000deadbeef")
        check(status == 404, "syslog: %s" % status)
        try:
            msg = sock.recv(65536).decode()
        except socket.timeout:
            msg = ""
        m = re.match(r"^<86>agent-sandbox-audit\[(\d+)\]: (\{.*\})$", msg)
        check(m is not None, "syslog: one datagram as syslog wants it: %r"
              % msg)
        if m:
            line = json.loads(m.group(2))
            expect(line, "DELETE /v1/sandboxes/{sandbox_id}", 404, "not_found",
                   sandbox_id="sb_00000000deadbeef")
        check(not os.path.exists(audit_path(server)), "syslog: no file")
    finally:
        sock.close()
        server.cleanup()


def fill(path):
    """Write path until the file system is full; returns its size."""
    n = 0
    with open(path, "wb", buffering=0) as f:
        chunk = b"\0" * 65536
        while True:
            try:
                n += f.write(chunk)
            except OSError:
                break
        while True:
            try:
                n += f.write(b"\0")
            except OSError:
                return n


def test_full_disk():
    """The data directory full: audited requests still succeed, the lost
    lines are warned about (once) and counted, no torn line stays in the
    file, and lines come again once there is room."""
    server = harness.SandboxServer()
    os.makedirs(server.data_dir)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m,mode=0755",
                    "tmpfs", server.data_dir], check=True)
    filler = os.path.join(server.data_dir, "filler")
    try:
        server.start()
        sb = server.create()["id"]
        fill(filler)
        # More than the slack of the file's last page: some must fail.
        for i in range(80):
            status, _ = server.api("DELETE", "/v1/sandboxes/sb_%016x" % i)
            check(status == 404, "full disk: the request is answered: %s"
                  % status)
        r = server.exec(sb, "echo ok")
        check(r["stdout"] == "ok\n", "full disk: exec still runs")
        log = server.log_text()
        check(log.count("audit log: a line could not be written") == 1,
              "full disk: warned once:\n" + log)
        lines, raw = read_lines(audit_path(server))
        check(0 < len(lines) < 82, "full disk: some lines lost (%d kept)" %
              len(lines))
        os.unlink(filler)
        status, _ = server.api("DELETE", "/v1/sandboxes/" + sb)
        check(status == 204, "room again: delete %s" % status)
        after, _ = wait_lines(audit_path(server), len(lines) + 1)
        check(len(after) == len(lines) + 1 and
              after[-1].get("sandbox_id") == sb,
              "room again: the next line is written")
        check(re.search(r"audit log: writing again; \d+ line\(s\) lost",
                        server.log_text()) is not None,
              "room again: the loss is counted in the log")
    finally:
        server.stop()
        subprocess.run(["umount", server.data_dir], check=False)
        server.cleanup()


def main():
    test_flow()
    test_keys_file_caller()
    test_odd_ids()
    test_off()
    test_syslog()
    test_full_disk()
    if FAILURES:
        print("%d failure(s)" % len(FAILURES))
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
