#!/usr/bin/env python3
"""A 10 MiB download through egress-proxy against the same download
straight from the same server, in the same run, as ratios (p50 and p95
of proxied / direct).  The network is test_egress_proxy.py's: a network
namespace with an HTTP server on a 198.19.n.0/24 veth link, no outside
address.

    sudo AGENT_SANDBOX_BUILDDIR=$PWD bench/bench_egress.py [--rounds N]
        [--mib N]

Plain HTTP (forwarded) and CONNECT (tunnelled) are both measured.  Not a
test: nothing here asserts a time.
"""

import argparse
import http.client
import os
import socket
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import benchlib  # noqa: E402

sys.path.insert(0, os.path.join(benchlib.SRCDIR, "tests", "integration"))
import test_egress_proxy as eg  # noqa: E402


def download(host, port, path, tunnel=None):
    """Read the whole body; tunnel: (proxy port) for CONNECT."""
    if tunnel is None:
        conn = http.client.HTTPConnection(host, port, timeout=60)
    else:
        conn = http.client.HTTPConnection("127.0.0.1", tunnel, timeout=60)
        conn.set_tunnel(host, port)
    conn.request("GET", path)
    r = conn.getresponse()
    n = 0
    while True:
        b = r.read(benchlib.CHUNK)
        if not b:
            break
        n += len(b)
    conn.close()
    return r.status, n


def forwarded(proxy, url):
    conn = http.client.HTTPConnection("127.0.0.1", proxy, timeout=60)
    conn.request("GET", url)
    r = conn.getresponse()
    n = 0
    while True:
        b = r.read(benchlib.CHUNK)
        if not b:
            break
        n += len(b)
    conn.close()
    return r.status, n


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--mib", type=int, default=10)
    args = ap.parse_args()
    size = args.mib * benchlib.MIB
    path = "/big/%d" % size
    eg.setUpModule()
    px = None
    try:
        px = eg.Egress()
        port = px.listen(eg.SB_A)
        px.policy(eg.SB_A, eg.POLICY_A)
        url = "http://allowed.test:8080" + path

        def check(result):
            if result != (200, size):
                raise SystemExit("bad download: %r" % (result,))

        sides = [
            ("direct", lambda: check(download(eg.NS_IP, 8080, path)), None),
            ("forward", lambda: check(forwarded(port, url)), None),
            ("connect", lambda: check(download("allowed.test", 8080, path,
                                               tunnel=port)), None),
        ]
        out = benchlib.interleaved(sides, args.rounds)
        d50, d95 = benchlib.p50(out["direct"]), benchlib.pct(out["direct"],
                                                              95)
        print("egress %d MiB, %d rounds: direct p50 %.1f ms p95 %.1f ms" %
              (args.mib, args.rounds, d50, d95))
        for name in ("forward", "connect"):
            v50, v95 = benchlib.p50(out[name]), benchlib.pct(out[name], 95)
            print("  %-8s p50 %.1f ms (%.2fx)  p95 %.1f ms (%.2fx)" %
                  (name, v50, v50 / d50, v95, v95 / d95))
    finally:
        if px is not None:
            px.stop()
        eg.tearDownModule()


if __name__ == "__main__":
    socket.setdefaulttimeout(60)
    main()
