"""managerd under systemd, with the real daemons and dockerd: Type=notify
(READY=1 once it serves, WATCHDOG=1, STOPPING=1, RELOADING=1 on SIGHUP)
over a NOTIFY_SOCKET this test binds, as a path and as an abstract name,
and socket activation (the listener as descriptor 3, LISTEN_PID and
LISTEN_FDS).  managerd chroots and runs its seccomp filter before it
notifies: these run under the real filter (AGENT_SANDBOX_SECCOMP=kill).
"""

import os
import signal
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

harness.require_root_and_docker()

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


class Notifications:
    """A NOTIFY_SOCKET: a unix datagram socket bound at a path or an
    abstract name, read with a timeout."""

    def __init__(self, tmp, abstract):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        if abstract:
            name = "as-notify-test-%d-%d" % (os.getpid(), time.time_ns())
            self.sock.bind("\0" + name)
            self.address = "@" + name
        else:
            self.address = os.path.join(tmp, "notify.sock")
            self.sock.bind(self.address)
        # The sender's pid with each message: NotifyAccess=main takes
        # only managerd's.
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self.messages = []
        self.senders = set()

    def recv(self):
        data, anc, _, _ = self.sock.recvmsg(4096, socket.CMSG_SPACE(12))
        for level, kind, cred in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                self.senders.add(struct.unpack("iII", cred[:12])[0])
        return data

    def wait_for(self, needle, timeout=30):
        """The first message (after those seen) holding the line needle;
        every message read meanwhile is kept in self.messages."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            self.sock.settimeout(max(0.01, deadline - time.time()))
            try:
                data = self.recv()
            except socket.timeout:
                break
            msg = data.decode()
            self.messages.append(msg)
            if needle in msg.split("\n"):
                return msg
        return None

    def drain(self, seconds):
        end = time.time() + seconds
        while time.time() < end:
            self.sock.settimeout(max(0.01, end - time.time()))
            try:
                self.messages.append(self.recv().decode())
            except socket.timeout:
                break

    def close(self):
        self.sock.close()


def healthz(server):
    try:
        status, _, _ = server.request("GET", "/healthz", timeout=5)
        return status
    except OSError:
        return None


def exec_children(server):
    """(name, pid) of the children managerd's spawner executed."""
    kids = server.children()
    check({"apid", "dockerd-proxy", "archive-worker"} <= set(kids),
          "the children are there: %r" % kids)
    return [(n, p) for n, p in kids.items() if n != "spawner"]


def notify_case(abstract):
    what = "abstract" if abstract else "path"
    server = harness.Server()
    notes = Notifications(server.tmp, abstract)
    server.env["NOTIFY_SOCKET"] = notes.address
    server.env["WATCHDOG_USEC"] = "1000000"
    try:
        server.start(wait=False)
        ready = notes.wait_for("READY=1")
        check(ready is not None, "%s: READY=1 arrives" % what)
        # At that moment the API already answers.
        check(healthz(server) == 200,
              "%s: /healthz answers when READY=1 arrives" % what)
        check(ready == "READY=1\nSTATUS=serving on 127.0.0.1:%d" %
              server.port, "%s: READY=1 says where: %r" % (what, ready))
        check(any(m.startswith("STATUS=reconciling") for m in
                  notes.messages), "%s: a STATUS= before READY" % what)
        notes.drain(2.6)
        dogs = [m for m in notes.messages if m == "WATCHDOG=1"]
        check(len(dogs) >= 4, "%s: WATCHDOG=1 every 0.5 s (%d in ~3 s)" %
              (what, len(dogs)))
        # No variable of systemd's reaches the children.  The spawner is
        # a fork without exec: /proc shows the environment it started
        # with, not what it would pass on.
        for name, pid in exec_children(server):
            with open("/proc/%d/environ" % pid, "rb") as f:
                environ = f.read()
            check(b"NOTIFY_SOCKET" not in environ and
                  b"WATCHDOG_USEC" not in environ,
                  "%s: %s's environment has no NOTIFY_SOCKET" % (what, name))
        # SIGHUP: RELOADING=1, then READY=1 again.
        notes.messages.clear()
        server.proc.send_signal(signal.SIGHUP)
        reloading = notes.wait_for("RELOADING=1", timeout=10)
        check(reloading is not None and "MONOTONIC_USEC=" in reloading,
              "%s: RELOADING=1 with MONOTONIC_USEC on SIGHUP" % what)
        check(notes.wait_for("READY=1", timeout=10) is not None,
              "%s: READY=1 after the reload" % what)
        check(healthz(server) == 200, "%s: serving after SIGHUP" % what)
        server.proc.send_signal(signal.SIGTERM)
        check(notes.wait_for("STOPPING=1", timeout=10) is not None,
              "%s: STOPPING=1 on SIGTERM" % what)
        check(notes.senders == {server.proc.pid},
              "%s: every notification from managerd (pid %d): %r" %
              (what, server.proc.pid, notes.senders))
        server.proc.wait(15)
        check(server.proc.returncode == 0, "%s: exit 0 after SIGTERM" % what)
        check("SIGSYS" not in server.log_text() and
              "forbidden system call" not in server.log_text(),
              "%s: no forbidden system call" % what)
    finally:
        notes.close()
        server.cleanup()


def test_watchdog_other_pid():
    """WATCHDOG_PID of another process: READY=1, but no WATCHDOG=1."""
    server = harness.Server()
    notes = Notifications(server.tmp, abstract=True)
    server.env["NOTIFY_SOCKET"] = notes.address
    server.env["WATCHDOG_USEC"] = "200000"
    server.env["WATCHDOG_PID"] = "1"
    try:
        server.start(wait=False)
        check(notes.wait_for("READY=1") is not None,
              "other WATCHDOG_PID: READY=1")
        notes.drain(1.0)
        check("WATCHDOG=1" not in notes.messages,
              "other WATCHDOG_PID: no WATCHDOG=1: %r" % notes.messages)
    finally:
        notes.close()
        server.cleanup()


def test_no_notify_socket():
    """Without NOTIFY_SOCKET nothing is sent, nothing fails."""
    server = harness.Server()
    notes = Notifications(server.tmp, abstract=False)
    try:
        server.start()
        check(healthz(server) == 200, "no NOTIFY_SOCKET: serving")
        notes.drain(1.0)
        check(notes.messages == [], "no NOTIFY_SOCKET: nothing sent")
        check("NOTIFY_SOCKET" not in server.log_text(),
              "no NOTIFY_SOCKET: no warning")
    finally:
        notes.close()
        server.cleanup()


def test_missing_notify_socket():
    """A NOTIFY_SOCKET that is not there: a warning, and managerd runs."""
    server = harness.Server()
    server.env["NOTIFY_SOCKET"] = os.path.join(server.tmp, "nobody.sock")
    server.env["WATCHDOG_USEC"] = "1000000"
    try:
        server.start()
        check(healthz(server) == 200, "missing NOTIFY_SOCKET: serving")
        check("cannot connect to NOTIFY_SOCKET" in server.log_text(),
              "missing NOTIFY_SOCKET: a warning")
    finally:
        server.cleanup()


def test_bad_notify_socket():
    """A NOTIFY_SOCKET of a kind managerd does not speak (vsock)."""
    server = harness.Server()
    server.env["NOTIFY_SOCKET"] = "vsock:2:1234"
    try:
        server.start()
        check(healthz(server) == 200, "vsock NOTIFY_SOCKET: serving")
        check("NOTIFY_SOCKET vsock:2:1234" in server.log_text(),
              "vsock NOTIFY_SOCKET: a warning naming it")
    finally:
        server.cleanup()


def start_activated(server, sock, listen_pid="$$", fds="1"):
    """managerd with sock as descriptor 3, LISTEN_PID set in the child
    before exec (the shell's $$ is the pid managerd will have)."""
    def to_fd3():
        os.dup2(sock.fileno(), 3)

    server.managerd = ["/bin/sh", "-c",
                       'LISTEN_PID=%s LISTEN_FDS=%s LISTEN_FDNAMES=api '
                       'exec "$0"' % (listen_pid, fds), server.managerd]
    server.log = open(server.log_path, "ab")
    server.log_start = server.log.tell()
    import subprocess
    server.proc = subprocess.Popen(server.managerd, env=server.env,
                                   stdin=subprocess.DEVNULL,
                                   stdout=server.log, stderr=server.log,
                                   preexec_fn=to_fd3, pass_fds=(3,))
    return server


def port_bound(port):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
        return False
    except OSError:
        return True
    finally:
        s.close()


def listening_socket():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    return s


def test_socket_activation():
    server = harness.Server()
    lsock = listening_socket()
    act_port = lsock.getsockname()[1]
    try:
        start_activated(server, lsock)
        lsock.close()   # managerd and its children hold it now
        server.wait_ready()
        check(not port_bound(server.port),
              "activation: AGENT_SANDBOX_PORT is not bound")
        saved = server.port
        server.port = act_port
        check(healthz(server) == 200, "activation: served on the passed "
              "socket")
        status, _, body = server.request(
            "GET", "/v1/sandboxes",
            headers={"Authorization": "Bearer " + harness.TEST_KEY})
        check(status == 200, "activation: an authenticated request: %s" %
              status)
        server.port = saved
        check("ready on 127.0.0.1:%d (socket from systemd)\n" % act_port in
              server.log_text(), "activation: the log says where")
        for name, pid in exec_children(server):
            with open("/proc/%d/environ" % pid, "rb") as f:
                check(b"LISTEN_" not in f.read(),
                      "activation: no LISTEN_* in %s's environment" % name)
    finally:
        server.cleanup()


def test_activation_other_pid():
    """LISTEN_PID of another process: not ours, managerd binds its port."""
    server = harness.Server()
    lsock = listening_socket()
    try:
        start_activated(server, lsock, listen_pid="1")
        lsock.close()
        server.wait_ready()
        check(healthz(server) == 200, "other LISTEN_PID: own port served")
        check(("ready on 127.0.0.1:%d\n" % server.port) in server.log_text(),
              "other LISTEN_PID: the log names the configured port")
    finally:
        server.cleanup()


def refused(server, what, needle):
    try:
        server.proc.wait(15)
    except Exception:
        server.proc.kill()
        server.proc.wait()
    check(server.proc.returncode == 2, "%s: exit 2 (got %s)" %
          (what, server.proc.returncode))
    check(needle in server.log_text(), "%s: says %r:\n%s" %
          (what, needle, server.log_text()))


def test_activation_not_listening():
    server = harness.Server()
    s = socket.socket()     # a TCP socket, never listening
    try:
        start_activated(server, s)
        refused(server, "not listening", "is a socket that is not listening")
    finally:
        s.close()
        server.cleanup()


def test_activation_not_a_socket():
    server = harness.Server()
    f = open(os.devnull, "rb")
    try:
        start_activated(server, f)
        refused(server, "not a socket", "descriptor 3 is not a socket")
    finally:
        f.close()
        server.cleanup()


def test_activation_datagram():
    server = harness.Server()
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    try:
        start_activated(server, s)
        refused(server, "datagram", "is not a TCP or unix stream socket")
    finally:
        s.close()
        server.cleanup()


def test_activation_two_fds():
    server = harness.Server()
    lsock = listening_socket()
    try:
        start_activated(server, lsock, fds="2")
        refused(server, "LISTEN_FDS=2", "managerd takes exactly one socket")
    finally:
        lsock.close()
        server.cleanup()


def main():
    notify_case(abstract=False)
    notify_case(abstract=True)
    test_watchdog_other_pid()
    test_no_notify_socket()
    test_missing_notify_socket()
    test_bad_notify_socket()
    test_socket_activation()
    test_activation_other_pid()
    test_activation_not_listening()
    test_activation_not_a_socket()
    test_activation_datagram()
    test_activation_two_fds()
    if FAILURES:
        print("%d failure(s)" % len(FAILURES))
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
