"""A dockerd of the test's own, to stop, hang and restart.

The fault tests do to Docker what a host does to it (kill -STOP, kill -9,
a restart that makes a new socket), which must not touch the dockerd the
other tests share.  This one has its own socket, data root, exec root,
containerd and default bridge, no iptables rules, and the test image
copied in from the shared dockerd.  Not --bridge none: a dockerd started
so deletes the host's docker0 (libnetwork's removeDefaultBridgeInterface),
under the shared dockerd's containers.  Standard library only.
"""

import os
import shutil
import signal
import subprocess
import tempfile
import time

import harness

IMAGE = "agent-sandbox/busybox:test"


class PrivateDocker:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="as-dockerd-")
        self.socket = os.path.join(self.dir, "docker.sock")
        self.pidfile = os.path.join(self.dir, "docker.pid")
        self.log_path = os.path.join(self.dir, "dockerd.log")
        with open(os.path.join(self.dir, "daemon.json"), "w") as f:
            f.write("{}\n")
        # A bridge of its own, named after the directory: unique per run.
        self.bridge = "asd" + os.path.basename(self.dir)[-8:]
        self.proc = None

    def make_bridge(self):
        subprocess.run(["ip", "link", "add", self.bridge, "type", "bridge"],
                       check=True)
        subprocess.run(["ip", "addr", "add", "10.231.%d.1/24" %
                        (os.getpid() % 250), "dev", self.bridge], check=True)
        subprocess.run(["ip", "link", "set", self.bridge, "up"], check=True)

    @property
    def host(self):
        """DOCKER_HOST for a server that is to use this dockerd."""
        return "unix://" + self.socket

    def start(self, timeout=60):
        cmd = ["dockerd", "--host", self.host,
               "--data-root", os.path.join(self.dir, "root"),
               "--exec-root", os.path.join(self.dir, "exec"),
               "--pidfile", self.pidfile,
               "--config-file", os.path.join(self.dir, "daemon.json"),
               "--bridge", self.bridge, "--iptables=false",
               "--ip-masq=false"]
        if not os.path.exists("/sys/class/net/" + self.bridge):
            self.make_bridge()
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                     stdout=log, stderr=log)
        log.close()
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("dockerd exited:\n" + self.log())
            if self.answers():
                return self
            time.sleep(0.1)
        raise AssertionError("dockerd did not start:\n" + self.log())

    def answers(self, timeout=2):
        try:
            status, _ = harness.docker_request("GET", "/_ping",
                                               sock=self.socket,
                                               timeout=timeout)
            return status == 200
        except OSError:
            return False

    def load_test_image(self):
        """Copy the test image in from the shared dockerd."""
        save = subprocess.Popen(["docker", "save", IMAGE],
                                stdout=subprocess.PIPE)
        load = subprocess.run(["docker", "-H", self.host, "load"],
                              stdin=save.stdout, capture_output=True)
        save.stdout.close()
        if save.wait() != 0 or load.returncode != 0:
            raise AssertionError("cannot copy %s: %s" % (IMAGE, load.stderr))

    def send(self, sig):
        self.proc.send_signal(sig)
        if sig == signal.SIGSTOP:
            self.wait_stopped()

    def wait_stopped(self, timeout=5):
        """kill(2) returns before every thread of dockerd has stopped; one
        still running could yet answer a request sent right after."""
        deadline = time.time() + timeout
        task = "/proc/%d/task" % self.proc.pid
        while time.time() < deadline:
            states = []
            for tid in os.listdir(task):
                try:
                    with open(os.path.join(task, tid, "stat")) as f:
                        states.append(f.read().rsplit(")", 1)[1].split()[0])
                except OSError:
                    pass
            if states and all(st in ("T", "t") for st in states):
                return
            time.sleep(0.01)
        raise AssertionError("dockerd did not stop")

    def stop(self, sig=signal.SIGTERM, timeout=30):
        """Stop dockerd with sig.  SIGKILL kills the containerd it started
        too (the next dockerd could not start one of its own beside it),
        not the containers' shims, and leaves the dead socket file where
        it was, as a host's kill -9 of both does."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGCONT)
        self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if sig == signal.SIGKILL:
            subprocess.run(["pkill", "-KILL", "-f", "^containerd --config " +
                            os.path.join(self.dir, "exec")],
                           capture_output=True)
            # Where nothing reaps it, the dead containerd stays a zombie,
            # which the next dockerd would take for a live one.
            try:
                os.unlink(os.path.join(self.dir, "exec", "containerd",
                                       "containerd.pid"))
            except OSError:
                pass

    def log(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()[-4000:]
        except OSError:
            return ""

    def cleanup(self):
        self.stop()
        # A killed dockerd leaves its containerd (and the shims) running.
        subprocess.run(["pkill", "-f", "--", os.path.join(self.dir, "exec")],
                       capture_output=True)
        time.sleep(0.2)
        subprocess.run(["sh", "-c", "grep -o ' %s[^ ]*' /proc/mounts | "
                        "sort -r | xargs -r umount -l" % self.dir],
                       capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)
        subprocess.run(["ip", "link", "del", self.bridge], capture_output=True)
