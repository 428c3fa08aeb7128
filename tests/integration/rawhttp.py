"""A client that writes requests byte for byte and reads responses one at a
time off one connection: for keep-alive, pipelining and malformed
requests, which http.client will not send.  Standard library only."""

import json
import socket
import time

import harness


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers      # lower-case names
        self.body = body

    def json(self):
        return json.loads(self.body)

    def error_code(self):
        return self.json()["error"]["code"]

    def __repr__(self):
        return "<%d %r %r>" % (self.status, self.headers, self.body[:200])


def request(method, path, headers=None, body=None, version="HTTP/1.1",
            host=True, key=True):
    """The bytes of one request; Content-Length added for a body."""
    lines = ["%s %s %s" % (method, path, version)]
    if host:
        lines.append("Host: 127.0.0.1")
    if key:
        lines.append("Authorization: Bearer " + harness.TEST_KEY)
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
        lines.append("Content-Type: application/json")
    for name, value in (headers or {}).items():
        lines.append("%s: %s" % (name, value))
    if body is not None and not any(
            n.lower() in ("content-length", "transfer-encoding")
            for n in (headers or {})):
        lines.append("Content-Length: %d" % len(body))
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head + (body or b"")


class Connection:
    def __init__(self, port, timeout=30):
        self.sock = socket.create_connection(("127.0.0.1", port),
                                             timeout=timeout)
        self.buf = b""

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise EOFError("the server closed the connection")
        self.buf += data

    def _take(self, n):
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _chunked(self):
        body = b""
        while True:
            size = int(self._line().split(b";")[0], 16)
            if size == 0:
                while self._line() != b"":
                    pass
                return body
            body += self._take(size)
            if self._take(2) != b"\r\n":
                raise AssertionError("chunk not followed by CRLF")

    def _until_close(self):
        try:
            while True:
                self._fill()
        except EOFError:
            pass
        body, self.buf = self.buf, b""
        return body

    def response(self):
        """The next response (a 100 Continue counts as one)."""
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        version, status = lines[0].split(" ", 2)[:2]
        if version != "HTTP/1.1":
            raise AssertionError("status line " + lines[0])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        status = int(status)
        if status < 200 or status == 204:
            body = b""
        elif headers.get("transfer-encoding") == "chunked":
            body = self._chunked()
        elif "content-length" in headers:
            body = self._take(int(headers["content-length"]))
        else:
            body = self._until_close()
        return Response(status, headers, body)

    def exchange(self, *args, **kw):
        self.send(request(*args, **kw))
        return self.response()

    def closed(self, timeout=5):
        """True once the server has closed (EOF or reset) within timeout;
        anything it sends meanwhile is kept in the buffer."""
        deadline = time.monotonic() + timeout
        old = self.sock.gettimeout()
        try:
            while time.monotonic() < deadline:
                self.sock.settimeout(max(0.01, deadline - time.monotonic()))
                try:
                    data = self.sock.recv(65536)
                except socket.timeout:
                    return False
                except ConnectionResetError:
                    return True
                if not data:
                    return True
                self.buf += data
            return False
        finally:
            self.sock.settimeout(old)
