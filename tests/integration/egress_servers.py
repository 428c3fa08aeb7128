"""The far side for test_egress_proxy.py, run inside its network namespace:
an HTTP server on port 8080 that answers every GET and POST with a known
body echoing its request head, and a UDP DNS server on port 53 answering
A records from a table (NXDOMAIN for other names, an empty answer for
other types of a known name).  argv[1]: the address allowed.test has."""

import http.server
import socket
import struct
import sys
import threading

ADDR = sys.argv[1]
TABLE = {"allowed.test": ADDR, "other.test": ADDR, "private.test": "10.0.0.1",
         "metadata.test": "169.254.169.254", "host.test": sys.argv[2],
         # first an address the host has an unreachable route for
         "two.test": [ADDR.rsplit(".", 1)[0] + ".200", ADDR]}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def answer(self, body):
        head = "".join("%s: %s\n" % kv for kv in self.headers.items())
        if self.path.startswith("/big/"):
            data = b"x" * int(self.path[5:])
        else:
            data = ("hello %s\n%s%s" % (self.path, head, body)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.answer("")

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        self.answer("body=" + self.rfile.read(n).decode())

    def log_message(self, *a):
        pass


def dns_answer(q):
    tid, flags, qd = struct.unpack(">HHH", q[:6])
    off, labels = 12, []
    while q[off]:
        labels.append(q[off + 1:off + 1 + q[off]].decode())
        off += 1 + q[off]
    qtype, = struct.unpack(">H", q[off + 1:off + 3])
    question = q[12:off + 5]
    name = ".".join(labels).lower()
    if name not in TABLE:
        return struct.pack(">HHHHHH", tid, 0x8183, 1, 0, 0, 0) + question
    if qtype != 1:
        return struct.pack(">HHHHHH", tid, 0x8180, 1, 0, 0, 0) + question
    addrs = TABLE[name] if isinstance(TABLE[name], list) else [TABLE[name]]
    rr = b"".join(struct.pack(">HHHIH", 0xc00c, 1, 1, 5, 4) +
                  socket.inet_aton(a) for a in addrs)
    return struct.pack(">HHHHHH", tid, 0x8180, 1, len(addrs), 0, 0) + \
        question + rr


def dns():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", 53))
    while True:
        q, peer = s.recvfrom(512)
        try:
            s.sendto(dns_answer(q), peer)
        except Exception:
            pass


threading.Thread(target=dns, daemon=True).start()
srv = http.server.ThreadingHTTPServer(("0.0.0.0", 8080), Handler)
# Clients the proxy cut on purpose (a malformed body) are no news.
srv.handle_error = lambda *a: None
print("ready", flush=True)
srv.serve_forever()
