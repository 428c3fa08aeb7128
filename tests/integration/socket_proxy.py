"""Docker behind haproxy with etc/haproxy-socket-proxy.cfg, and the check
of its request log against the list in docs/socket-proxy.md.

Used by test_socket_proxy.py and by scripts/test's socket proxy pass:

    socket_proxy.py start PORT LOG PIDFILE   haproxy in the background
    socket_proxy.py stop PIDFILE
    socket_proxy.py check LOG                 exit 1 on a call not listed

The list is parsed from the document itself, so the two cannot drift.
Standard library only.
"""

import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.environ.get("AGENT_SANDBOX_SRCDIR",
                        os.path.dirname(os.path.dirname(HERE)))
CONFIG = os.path.join(SRCDIR, "etc", "haproxy-socket-proxy.cfg")
DOC = os.path.join(SRCDIR, "docs", "socket-proxy.md")
DOCKER_SOCKET = "/var/run/docker.sock"
# What dockerd-proxy sends (dockerd-proxy/docker_http_head.c).
SERVER_AGENT = "agent-sandbox"

# The placeholders of the document's table, as regular expressions.
PLACEHOLDERS = {
    "container": r"(?:agent-sandbox-sb_[0-9a-f]{16}(?:-init)?|[0-9a-f]{64})",
    "name": r"agent-sandbox-sb_[0-9a-f]{16}(?:-init)?",
    "volume": r"agent-sandbox-sb_[0-9a-f]{16}-workspace",
    "exec": r"[0-9a-f]{64}",
    "value": r"[A-Za-z0-9._~%-]+",
    "network": r"[a-zA-Z0-9][a-zA-Z0-9_.-]*",
    "n": r"[0-9]+",
}

ROW = re.compile(r"^\| `([A-Z]+)` \| `([^`]+)` \|")
# haproxy's log lines: method, URI, status, {User-Agent}; the status is
# "-" for an exec start that went to Docker as a stream (TCP mode).
LINE = re.compile(r"^(\S+) (\S+) (\d{3}|-) \{(.*)\}$")


def pattern(doc_path):
    """A documented path with {placeholders} and [optional parts]."""
    out, i = [], 0
    while i < len(doc_path):
        c = doc_path[i]
        if c == "{":
            end = doc_path.index("}", i)
            out.append(PLACEHOLDERS[doc_path[i + 1:end]])
            i = end + 1
        elif c == "[":
            out.append("(?:")
            i += 1
        elif c == "]":
            out.append(")?")
            i += 1
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out) + r"\Z")


def documented(doc=DOC):
    """{"allowlist": [(method, regex, text)], "refused": [...]} from the
    document's tables between their begin and end markers."""
    with open(doc) as f:
        text = f.read()
    tables = {}
    for name in ("allowlist", "refused"):
        m = re.search(r"<!-- %s:begin -->\n(.*?)<!-- %s:end -->" %
                      (name, name), text, re.S)
        if m is None:
            raise AssertionError("%s: no %s table" % (doc, name))
        rows = []
        for line in m.group(1).splitlines():
            r = ROW.match(line)
            if r:
                rows.append((r.group(1), pattern(r.group(2)), r.group(2)))
        if not rows:
            raise AssertionError("%s: the %s table is empty" % (doc, name))
        tables[name] = rows
    return tables


def parse_log(text):
    """[(method, uri, status, agent)] of haproxy's request lines."""
    out = []
    for line in text.splitlines():
        m = LINE.match(line.strip())
        if m:
            status = None if m.group(3) == "-" else int(m.group(3))
            out.append((m.group(1), m.group(2), status, m.group(4)))
    return out


def violations(requests, tables=None, ignore_agents=()):
    """The requests outside the documented list: not in the allowlist,
    and not a listed refusal that was refused (403).  Requests from an
    agent in ignore_agents (a test's own probes) are left out."""
    tables = tables or documented()
    bad = []
    for method, uri, status, agent in requests:
        if agent in ignore_agents:
            continue
        if agent != SERVER_AGENT:
            bad.append("%s %s %s (User-Agent %r)" %
                       (method, uri, status, agent))
            continue
        if any(m == method and rx.match(uri)
               for m, rx, _ in tables["allowlist"]):
            continue
        if status == 403 and any(m == method and rx.match(uri)
                                 for m, rx, _ in tables["refused"]):
            continue
        bad.append("%s %s %s" % (method, uri, status))
    return bad


def render(port, sock=DOCKER_SOCKET, ipv6=False, unix=None):
    """The shipped configuration on 127.0.0.1:port (and [::1]:port), or
    with unix=(path, group) on that unix socket, mode 0660, for sock."""
    with open(CONFIG) as f:
        text = f.read()
    bind = r"\g<1>127.0.0.1:%d" % port
    if unix is not None:
        bind = r"\g<1>%s mode 660 group %s" % unix
    if ipv6:
        bind += r"\n\g<1>[::1]:%d" % port
    text, n = re.subn(r"(?m)^(\s*bind )127\.0\.0\.1:2375$", bind, text)
    text, m = re.subn(r"(?m)^(\s*server docker )/var/run/docker\.sock$",
                      r"\g<1>" + sock, text)
    # The inner frontend's abstract socket, one per haproxy.
    text, k = re.subn(r"abns@agent-sandbox-docker-http-2375\b",
                      "abns@agent-sandbox-docker-http-%d" % port, text)
    if n != 1 or m != 2 or k != 2:
        raise AssertionError("%s: no bind or server line to substitute" %
                             CONFIG)
    return text


def wait_port(port, timeout=10, unix=None):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if unix is not None:
                with socket.socket(socket.AF_UNIX) as s:
                    s.settimeout(0.5)
                    s.connect(unix)
            else:
                socket.create_connection(("127.0.0.1", port), 0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("haproxy does not listen on %s" % (unix or port))


class Haproxy:
    """haproxy in the foreground (-db), its log appended to log_path."""

    def __init__(self, port, log_path, sock=DOCKER_SOCKET, ipv6=False,
                 unix=None):
        self.port = port
        self.log_path = log_path
        self.unix = unix[0] if unix is not None else None
        fd, self.cfg = tempfile.mkstemp(prefix="as-haproxy-", suffix=".cfg")
        with os.fdopen(fd, "w") as f:
            f.write(render(port, sock, ipv6, unix))
        self.proc = None

    def start(self):
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(["haproxy", "-db", "-f", self.cfg],
                                     stdin=subprocess.DEVNULL,
                                     stdout=log, stderr=subprocess.STDOUT)
        log.close()
        wait_port(self.port, unix=self.unix)
        return self

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        self.proc = None

    def cleanup(self):
        self.stop()
        os.unlink(self.cfg)

    def requests(self):
        with open(self.log_path, errors="replace") as f:
            return parse_log(f.read())


def main(argv):
    if len(argv) == 5 and argv[1] == "start":
        hp = Haproxy(int(argv[2]), argv[3]).start()
        with open(argv[4], "w") as f:
            f.write("%d %s\n" % (hp.proc.pid, hp.cfg))
        return 0
    if len(argv) == 3 and argv[1] == "stop":
        with open(argv[2]) as f:
            pid, cfg = f.read().split()
        os.kill(int(pid), signal.SIGTERM)
        os.unlink(cfg)
        return 0
    if len(argv) == 3 and argv[1] == "check":
        with open(argv[2], errors="replace") as f:
            requests = parse_log(f.read())
        if not requests:
            print("%s: no requests logged" % argv[2], file=sys.stderr)
            return 1
        bad = violations(requests)
        for b in bad:
            print("not in docs/socket-proxy.md: " + b, file=sys.stderr)
        print("%d Docker requests, %d outside the documented list" %
              (len(requests), len(bad)))
        return 1 if bad else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
