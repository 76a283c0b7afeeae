#!/usr/bin/python3
"""Protocol conformance test for vkreduced, independent of vkreduce's C code.

Speaks msgpack-RPC (python3-msgpack, raw Unix sockets) to a real daemon on a temporary
socket: every method, shared memory through memfds passed with SCM_RIGHTS, scan into a
writable region, and hostile input, each answered with the right error code while the
connection (or at least the daemon) keeps serving.

Usage: test_protocol.py PATH/TO/vkreduced [extra daemon flags...]
Exit status 0 when every check passes.
"""
import fcntl
import math
import os
import random
import re
import resource
import socket
import struct
import subprocess
import sys
import tempfile
import time

import msgpack

from daemon_proc import stop_daemon, wait_for_socket

E_NO_SUCH_METHOD, E_INVALID, E_TOO_LARGE, E_BUSY, E_NO_REGION, E_SHM, E_LOST, E_SHUTDOWN, E_PERM, E_INTERNAL = range(1, 11)
FMT = {"f32": "f", "f64": "d", "i32": "i", "u32": "I", "i64": "q", "u64": "Q"}
SIZE = {"f32": 4, "f64": 8, "i32": 4, "u32": 4, "i64": 8, "u64": 8}
failures = []
checks = 0


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)


class Conn:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(60)
        self.sock.connect(path)
        self.unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
        self.msgid = 0
        self.replies = {}

    def send(self, method, params, fds=None, raw=None):
        self.msgid += 1
        data = raw if raw is not None else msgpack.packb([0, self.msgid, method, params], use_bin_type=True)
        if fds:
            socket.send_fds(self.sock, [data], fds)
        else:
            self.sock.sendall(data)
        return self.msgid

    def wait(self, msgid):
        while msgid not in self.replies:
            for msg in self.unpacker:
                assert msg[0] == 1 and len(msg) == 4, msg
                assert msg[1] not in self.replies, "msgid %d answered twice" % msg[1]
                self.replies[msg[1]] = (msg[2], msg[3])
            if msgid in self.replies:
                break
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("daemon closed the connection")
            self.unpacker.feed(chunk)
        return self.replies.pop(msgid)

    def call(self, method, params, fds=None):
        return self.wait(self.send(method, params, fds))

    def ok(self, method, params, fds=None):
        err, res = self.call(method, params, fds)
        check(err is None, "%s %r: unexpected error %r" % (method, params if len(repr(params)) < 200 else "...", err))
        return res

    def expect_error(self, code, method, params, fds=None, what=""):
        err, res = self.call(method, params, fds)
        check(err is not None and err[0] == code,
              "%s %s: expected error %d, got %r / %r" % (method, what, code, err, res))
        if err is not None:
            check(isinstance(err[1], str) and len(err[1]) > 0, "%s: error has a message" % method)
        # The connection keeps serving.
        check(self.call("ping", []) == (None, "pong"), "ping after error %d (%s)" % (code, what))
        return err

    def closed_by_peer(self):
        try:
            self.sock.settimeout(10)
            while True:
                chunk = self.sock.recv(1 << 16)
                if not chunk:
                    return True
                self.unpacker.feed(chunk)
        except (ConnectionResetError, socket.timeout):
            return False

    def close(self):
        self.sock.close()


def pack(dtype, values):
    return struct.pack("<%d%s" % (len(values), FMT[dtype]), *values)


def unpack(dtype, data):
    n = len(data) // SIZE[dtype]
    return list(struct.unpack("<%d%s" % (n, FMT[dtype]), data))


def wrap(dtype, v):
    if dtype[0] in "iu":
        bits = int(dtype[1:])
        v &= (1 << bits) - 1
        if dtype[0] == "i" and v >= 1 << (bits - 1):
            v -= 1 << bits
    return v


def f32(v):
    try:
        return struct.unpack("<f", struct.pack("<f", v))[0]
    except OverflowError:
        return math.copysign(math.inf, v)


def ref_reduce(op, dtype, xs):
    if op == "sum":
        r = 0
        for x in xs:
            r = wrap(dtype, r + x)
    elif op == "prod":
        r = 1
        for x in xs:
            r = wrap(dtype, r * x)
    elif op == "min":
        r = min(xs)
    else:
        r = max(xs)
    return r


def ref_scan(op, dtype, xs, exclusive):
    neutral = {"sum": 0, "prod": 1, "min": math.inf, "max": -math.inf}[op]
    if dtype[0] in "iu" and op in ("min", "max"):
        bits = int(dtype[1:])
        lo = -(1 << (bits - 1)) if dtype[0] == "i" else 0
        hi = (1 << (bits - 1)) - 1 if dtype[0] == "i" else (1 << bits) - 1
        neutral = hi if op == "min" else lo
    out, acc = [], neutral
    for x in xs:
        if exclusive:
            out.append(acc)
        acc = {"sum": lambda a, b: a + b, "prod": lambda a, b: a * b, "min": min, "max": max}[op](acc, x)
        acc = wrap(dtype, acc) if dtype[0] in "iu" else (f32(acc) if dtype == "f32" and math.isfinite(acc) else acc)
        if not exclusive:
            out.append(acc)
    return out


def close_enough(dtype, got, want, n):
    if dtype[0] in "iu":
        return got == want
    if math.isinf(want) or math.isinf(got):
        return got == want
    tol = (1e-5 if dtype == "f32" else 1e-12) * max(1.0, abs(want)) * max(1, math.log2(n + 1))
    return abs(got - want) <= tol * 8


def gen(dtype, op, n, rng):
    if op == "prod":
        # Mostly ones so that products stay exact.
        # Mostly ones, and powers of two, so that products stay exact (and in range for floats).
        if dtype[0] == "f":
            return [rng.choice([1] * 200 + [2, 0.5, -1]) for _ in range(n)]
        return [rng.choice([1, 1, 1, 1, 1, 1, 2, -1] if dtype[0] != "u" else [1, 1, 1, 1, 2]) for _ in range(n)]
    if dtype[0] == "f":
        return [rng.randint(-1000, 1000) / 8 for _ in range(n)]
    if dtype[0] == "u":
        return [rng.randint(0, 1000) for _ in range(n)]
    return [rng.randint(-1000, 1000) for _ in range(n)]


def make_memfd(data, seal=True, size=None):
    fd = os.memfd_create("vkr-test", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, size if size is not None else len(data))
    os.pwrite(fd, data, 0)
    if seal:
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK)
    return fd


# ---- the checks ----------------------------------------------------------------------------

def test_basics(path):
    c = Conn(path)
    check(c.call("ping", []) == (None, "pong"), "ping answers pong")
    hello = c.ok("hello", ["test_protocol.py"])
    for key in ("version", "device", "ops", "dtypes", "limits"):
        check(key in hello, "hello has %s" % key)
    check("subgroup_size" in hello["device"] and "name" in hello["device"], "hello.device has name and subgroup_size")
    check(hello["limits"]["max_inline_bytes"] > 0, "hello reports limits")
    # Where the GPU's interrupts land ("" without a PCI address: lavapipe) and where the
    # daemon's threads run: CPU lists as the kernel writes them, and this process may run
    # on the daemon's CPUs (the tests start it unrestricted).
    cpu_list = re.compile(r"^(\d+(-\d+)?(,\d+(-\d+)?)*)?$")
    irq_cpus, daemon_cpus = hello["device"].get("irq_cpus"), hello["device"].get("daemon_cpus")
    check(isinstance(irq_cpus, str) and cpu_list.match(irq_cpus) is not None,
          "hello.device.irq_cpus is a CPU list: %r" % (irq_cpus,))
    check(isinstance(daemon_cpus, str) and daemon_cpus != "" and cpu_list.match(daemon_cpus) is not None,
          "hello.device.daemon_cpus is a CPU list: %r" % (daemon_cpus,))
    if isinstance(daemon_cpus, str) and cpu_list.match(daemon_cpus) and daemon_cpus:
        listed = set()
        for part in daemon_cpus.split(","):
            first, _, last = part.partition("-")
            listed.update(range(int(first), int(last or first) + 1))
        check(bool(listed & os.sched_getaffinity(0)), "daemon_cpus overlaps this process's CPUs")
    stats = c.ok("stats", [])
    for key in ("requests", "errors", "batches", "jobs_per_batch", "bytes_in", "queue_ns_total", "gpu_ns_total",
                "connections", "regions", "limits", "batches_multi_conn"):
        check(key in stats, "stats has %s" % key)
    c.close()
    return hello


def test_reduce_scan(path, dtypes, seed):
    rng = random.Random(seed)
    c = Conn(path)
    for dtype in dtypes:
        for op in ("sum", "prod", "min", "max"):
            for n in (1, 7, 1000, 70000):
                xs = gen(dtype, op, n, rng)
                if dtype == "f32":
                    xs = [f32(x) for x in xs]
                res = c.ok("reduce", [op, dtype, pack(dtype, xs)])
                want = ref_reduce(op, dtype, xs)
                check(res["count"] == n, "reduce %s %s n=%d count" % (op, dtype, n))
                check(isinstance(res["value"], float) == (dtype[0] == "f"), "reduce %s %s: value type" % (op, dtype))
                check(close_enough(dtype, res["value"], want, n),
                      "reduce %s %s n=%d: got %r want %r" % (op, dtype, n, res["value"], want))
            for exclusive in (False, True):
                n = rng.choice([1, 5, 513, 3000])
                xs = gen(dtype, op, n, rng)
                if dtype == "f32":
                    xs = [f32(x) for x in xs]
                opts = {"exclusive": True} if exclusive else {}
                res = c.ok("scan", [op, dtype, pack(dtype, xs), opts])
                got = unpack(dtype, res["data"])
                want = ref_scan(op, dtype, xs, exclusive)
                check(len(got) == n and all(close_enough(dtype, g, w, n) for g, w in zip(got, want)),
                      "scan %s %s excl=%s n=%d" % (op, dtype, exclusive, n))
        # count-if with every comparison
        xs = gen(dtype, "sum", 500, rng)
        if dtype == "f32":
            xs = [f32(x) for x in xs]
        v = xs[17]
        for cmp, fn in (("eq", lambda x: x == v), ("ne", lambda x: x != v), ("lt", lambda x: x < v),
                        ("le", lambda x: x <= v), ("gt", lambda x: x > v), ("ge", lambda x: x >= v)):
            res = c.ok("reduce", ["count", dtype, pack(dtype, xs), {"cmp": cmp, "value": v}])
            check(res["value"] == sum(1 for x in xs if fn(x)) and res["count"] == 500,
                  "count %s %s: got %r" % (cmp, dtype, res))
    # Empty arrays: sum is the neutral element, min is an error, scan is empty.
    check(c.ok("reduce", ["sum", "i32", b""])["value"] == 0, "sum of empty is 0")
    check(c.ok("reduce", ["prod", "f32", b""])["value"] == 1.0, "prod of empty is 1")
    c.expect_error(E_INVALID, "reduce", ["min", "f32", b""], what="min of empty")
    check(c.ok("scan", ["sum", "i32", b""])["data"] == b"", "scan of empty is empty")
    c.close()


def test_shm(path, hello):
    rng = random.Random(7)
    c = Conn(path)
    xs = [rng.randint(-100, 100) for _ in range(100000)]
    data = pack("i32", xs)
    fd = make_memfd(data)
    res = c.ok("register_shm", [], fds=[fd])
    os.close(fd)
    region = res["region"]
    check(res["size"] == len(data), "register_shm reports the size")
    r = c.ok("reduce", ["sum", "i32", {"region": region, "offset": 400, "count": 5000}])
    check(r["value"] == sum(xs[100:5100]) and r["count"] == 5000, "reduce from a region with offset")
    r = c.ok("reduce", ["max", "i32", {"region": region, "offset": 0, "count": len(xs)}])
    check(r["value"] == max(xs), "reduce a whole region")
    r = c.ok("scan", ["sum", "i32", {"region": region, "offset": 0, "count": 1000}])
    check(unpack("i32", r["data"]) == ref_scan("sum", "i32", xs[:1000], False), "scan from a region, result inline")

    # Scan into a writable region, page-multiple (host import where available) and odd sizes.
    for size in (1 << 20, 12345 * 4):
        out_fd = make_memfd(b"", size=size)
        w = c.ok("register_shm", [{"writable": True}], fds=[out_fd])
        n = 3000
        res = c.ok("scan", ["sum", "i32", {"region": region, "offset": 0, "count": n},
                            {"exclusive": True, "dst": {"region": w["region"], "offset": 64}}])
        check(res == {"count": n}, "scan into a region answers count")
        got = unpack("i32", os.pread(out_fd, n * 4, 64))
        check(got == ref_scan("sum", "i32", xs[:n], True), "scan into a writable region of %d bytes" % size)
        check(c.ok("unregister_shm", [w["region"]]) is True, "unregister the writable region")
        os.close(out_fd)

    # In place is allowed; a partial overlap of src and dst in one region is refused (tiles
    # would read input an earlier tile already overwrote), on imported and copied regions.
    for size in (1 << 20, 12345 * 4):
        vals = [(i * 7) % 100 - 50 for i in range(size // 4)]
        rw_fd = make_memfd(pack("i32", vals), size=size)
        rw = c.ok("register_shm", [{"writable": True}], fds=[rw_fd])
        n = min(len(vals), 100000) - 8
        c.expect_error(E_INVALID, "scan", ["sum", "i32", {"region": rw["region"], "offset": 0, "count": n},
                                           {"dst": {"region": rw["region"], "offset": 16}}],
                       what="dst overlapping src (%d-byte region)" % size)
        res = c.ok("scan", ["sum", "i32", {"region": rw["region"], "offset": 0, "count": n},
                            {"dst": {"region": rw["region"], "offset": 0}}])
        got = unpack("i32", os.pread(rw_fd, n * 4, 0))
        check(res == {"count": n} and got == ref_scan("sum", "i32", vals[:n], False),
              "scan in place in a writable region of %d bytes" % size)
        check(c.ok("unregister_shm", [rw["region"]]) is True, "unregister the in-place region")
        os.close(rw_fd)

    # A read-only region cannot be a destination.
    c.expect_error(E_PERM, "scan", ["sum", "i32", b"\0" * 16, {"dst": {"region": region, "offset": 0}}],
                   what="dst read-only")
    # Bounds, alignment, overflow.
    c.expect_error(E_INVALID, "reduce", ["sum", "i32", {"region": region, "offset": 0, "count": len(xs) + 1}],
                   what="count past the end")
    c.expect_error(E_INVALID, "reduce", ["sum", "i32", {"region": region, "offset": len(data) - 4, "count": 2}],
                   what="offset+count past the end")
    c.expect_error(E_INVALID, "reduce", ["sum", "i32", {"region": region, "offset": (1 << 64) - 4, "count": 2}],
                   what="offset overflow")
    c.expect_error(E_INVALID, "reduce", ["sum", "i32", {"region": region, "offset": 4, "count": (1 << 31)}],
                   what="count overflow within KERN_MAX_ELEMENTS")
    c.expect_error(E_TOO_LARGE, "reduce", ["sum", "i32", {"region": region, "offset": 0, "count": (1 << 64) - 1}],
                   what="count 2^64-1")
    c.expect_error(E_INVALID, "reduce", ["sum", "i32", {"region": region, "offset": 2, "count": 1}],
                   what="misaligned offset")
    c.expect_error(E_INVALID, "reduce", ["sum", "i32", {"region": region, "offset": -4, "count": 1}],
                   what="negative offset")
    c.expect_error(E_NO_REGION, "reduce", ["sum", "i32", {"region": 9999, "offset": 0, "count": 1}],
                   what="unknown region")
    # Regions are scoped to their connection.
    other = Conn(path)
    other.expect_error(E_NO_REGION, "reduce", ["sum", "i32", {"region": region, "offset": 0, "count": 1}],
                       what="another connection's region")
    other.close()

    # Rejected fds: unsealed memfd, pipe, regular file, writable request on a write-sealed memfd.
    fd = make_memfd(data, seal=False)
    c.expect_error(E_SHM, "register_shm", [], fds=[fd], what="unsealed memfd")
    os.close(fd)
    rfd, wfd = os.pipe()
    c.expect_error(E_SHM, "register_shm", [], fds=[rfd], what="pipe")
    os.close(rfd)
    os.close(wfd)
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.flush()
        c.expect_error(E_SHM, "register_shm", [], fds=[f.fileno()], what="regular file")
    fd = make_memfd(b"", size=0)
    c.expect_error(E_SHM, "register_shm", [], fds=[fd], what="empty memfd")
    os.close(fd)
    fd = make_memfd(data)
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_WRITE)
    c.expect_error(E_SHM, "register_shm", [{"writable": True}], fds=[fd], what="writable on a write-sealed memfd")
    os.close(fd)
    c.expect_error(E_SHM, "register_shm", [], what="no fd attached")
    # An fd on a request other than register_shm.
    fd = make_memfd(data)
    c.expect_error(E_INVALID, "ping", [], fds=[fd], what="fd on ping")
    os.close(fd)

    # Unregister while work is queued: the work still completes correctly.
    ids = [c.send("reduce", ["sum", "i32", {"region": region, "offset": 0, "count": len(xs)}]) for _ in range(20)]
    unreg = c.send("unregister_shm", [region])
    for i in ids:
        err, res = c.wait(i)
        check(err is None and res["value"] == sum(xs), "queued reduce survives unregister")
    check(c.wait(unreg) == (None, True), "unregister_shm answers true")
    c.expect_error(E_NO_REGION, "unregister_shm", [region], what="unregister twice")
    c.close()


def test_bad_input(path):
    c = Conn(path)
    c.expect_error(E_NO_SUCH_METHOD, "frobnicate", [], what="unknown method")
    c.expect_error(E_INVALID, "ping", {"a": 1}, what="params not an array")
    c.expect_error(E_INVALID, "ping", [1], what="ping with params")
    c.expect_error(E_INVALID, "reduce", [], what="reduce without params")
    c.expect_error(E_INVALID, "reduce", [1, "f32", b""], what="op not a string")
    c.expect_error(E_INVALID, "reduce", ["avg", "f32", b""], what="unknown op")
    c.expect_error(E_INVALID, "reduce", ["sum", "f16", b""], what="unknown dtype")
    c.expect_error(E_INVALID, "reduce", ["sum", "f32", b"\0" * 6], what="bin length not a multiple of 4")
    c.expect_error(E_INVALID, "reduce", ["sum", "f64", b"\0" * 12], what="bin length not a multiple of 8")
    c.expect_error(E_INVALID, "reduce", ["sum", "f32", "not a bin"], what="src is a string")
    c.expect_error(E_INVALID, "reduce", ["sum", "f32", [1.0, 2.0]], what="src is an array")
    c.expect_error(E_INVALID, "reduce", ["sum", "f32", {"region": 1}], what="src map without count")
    c.expect_error(E_INVALID, "reduce", ["sum", "f32", {"region": 1, "count": 1, "bogus": 2}], what="src unknown key")
    c.expect_error(E_INVALID, "reduce", ["count", "i32", b"\0" * 8], what="count without opts")
    c.expect_error(E_INVALID, "reduce", ["count", "i32", b"\0" * 8, {"cmp": "eq", "value": 2.5}],
                   what="non-integral value for i32")
    c.expect_error(E_INVALID, "reduce", ["count", "u32", b"\0" * 8, {"cmp": "eq", "value": -1}],
                   what="negative value for u32")
    c.expect_error(E_INVALID, "reduce", ["count", "i32", b"\0" * 8, {"cmp": "eq", "value": 1 << 40}],
                   what="value out of range for i32")
    c.expect_error(E_INVALID, "reduce", ["count", "i32", b"\0" * 8, {"cmp": "approx", "value": 1}],
                   what="unknown cmp")
    c.expect_error(E_INVALID, "reduce", ["count", "i32", b"\0" * 8, {"cmp": "eq", "value": "1"}],
                   what="value not a number")
    c.expect_error(E_INVALID, "reduce", ["sum", "i32", b"\0" * 8, {"cmp": "eq", "value": 1}],
                   what="cmp on a sum")
    c.expect_error(E_INVALID, "scan", ["count", "i32", b"\0" * 8], what="scan count")
    c.expect_error(E_INVALID, "scan", ["sum", "i32", b"\0" * 8, {"exclusive": 1}], what="exclusive not a bool")
    c.expect_error(E_INVALID, "scan", ["sum", "i32", b"\0" * 8, {"dst": 5}], what="dst not a map")
    c.expect_error(E_NO_REGION, "scan", ["sum", "i32", b"\0" * 8, {"dst": {"region": 42, "offset": 0}}],
                   what="dst unknown region")
    c.expect_error(E_INVALID, "unregister_shm", ["x"], what="region not an integer")
    c.expect_error(E_INVALID, "hello", [5], what="hello name not a string")
    # A notification gets no reply; the connection goes on.
    c.sock.sendall(msgpack.packb([2, "ping", []]))
    check(c.call("ping", []) == (None, "pong"), "notification ignored")
    # Method not a string: answered by msgid.
    err, _ = c.wait(c.send(None, None, raw=msgpack.packb([0, c.msgid + 1, 7, []])))
    check(err is not None and err[0] == E_INVALID, "method not a string")
    c.close()

    # A declared bin larger than max_inline_bytes: refused from its header, then closed.
    c = Conn(path)
    head = msgpack.packb([0, 77, "reduce", ["sum", "f32"]])[:-1]
    # Rewrite the params array header from 2 to 3 items, then a bin32 header of 1 GiB.
    raw = msgpack.packb(0)[:0]
    raw = bytes([0x94, 0x00, 77]) + msgpack.packb("reduce") + bytes([0x93]) + msgpack.packb("sum") + \
        msgpack.packb("f32") + bytes([0xc6]) + struct.pack(">I", 1 << 30) + b"\0" * 100
    del head
    c.sock.sendall(raw)
    err, _ = c.wait(77)
    check(err is not None and err[0] == E_TOO_LARGE, "huge declared bin answered too large: %r" % (err,))
    check(c.closed_by_peer(), "connection closed after a huge declared bin")
    c.close()

    # Nesting too deep inside a request: answered by msgid with the limits, then closed.
    c = Conn(path)
    c.sock.sendall(bytes([0x94, 0x00, 78]) + msgpack.packb("reduce") + b"\x91" * 40 + b"\xc0")
    err, _ = c.wait(78)
    check(err is not None and err[0] == E_INVALID and "nesting too deep" in err[1] and
          "nested" in err[1] and "declared" not in err[1], "deep nesting answered with its limit: %r" % (err,))
    check(c.closed_by_peer(), "connection closed after deep nesting")
    c.close()

    # Malformed msgpack (0xc1) and a non-request message close the connection only.
    for raw, what in ((b"\xc1\xc1\xc1", "byte 0xc1"), (msgpack.packb({"a": 1}), "a map"),
                      (msgpack.packb([0, -1, "ping", []]), "negative msgid"),
                      (b"\x91" * 40 + b"\xc0", "deep nesting")):
        c = Conn(path)
        c.sock.sendall(raw)
        check(c.closed_by_peer(), "connection closed after %s" % what)
        c.close()
    # Two fds on one message close the connection.
    c = Conn(path)
    fd1, fd2 = make_memfd(b"\0" * 4096), make_memfd(b"\0" * 4096)
    c.send("register_shm", [], fds=[fd1, fd2])
    check(c.closed_by_peer(), "connection closed after two fds on one message")
    os.close(fd1)
    os.close(fd2)
    c.close()
    # Disconnect with work queued.
    c = Conn(path)
    for _ in range(50):
        c.send("reduce", ["sum", "f32", b"\0" * 400000])
    c.close()
    c = Conn(path)
    check(c.call("ping", []) == (None, "pong"), "daemon serves after all the bad input")
    c.close()


def test_half_close(path):
    """A client that shuts its sending side still gets every reply owed, then EOF."""
    for pings in (3, 5000):
        c = Conn(path)
        ids = [c.send("ping", []) for _ in range(pings)]
        xs = [float(i % 7) for i in range(4096)]
        ids.append(c.send("reduce", ["sum", "f32", pack("f32", xs)]))
        ids.append(c.send("scan", ["sum", "i32", pack("i32", list(range(1000)))]))
        c.sock.shutdown(socket.SHUT_WR)
        check(c.closed_by_peer(), "connection closed after the replies owed at EOF (%d pings)" % pings)
        for msg in c.unpacker:
            c.replies[msg[1]] = (msg[2], msg[3])
        missing = [i for i in ids if i not in c.replies]
        check(not missing, "replies after a half-close: %d of %d missing" % (len(missing), len(ids)))
        if not missing:
            check(c.replies[ids[pings]] == (None, {"value": sum(xs), "count": len(xs)}),
                  "reduce answered after a half-close: %r" % (c.replies[ids[pings]],))
            err, res = c.replies[ids[pings + 1]]
            check(err is None and unpack("i32", res["data"]) == [i * (i + 1) // 2 for i in range(1000)],
                  "scan answered after a half-close")
        c.close()


def test_parked_fds(path):
    """An unfinished message may hold one fd, not more: a client that parks fds in the
    daemon one byte at a time is closed, and the daemon keeps serving."""
    c = Conn(path)
    fd1, fd2 = make_memfd(b"\0" * 4096), make_memfd(b"\0" * 4096)
    socket.send_fds(c.sock, [b"\x94"], [fd1])
    time.sleep(0.2)  # two recvmsg calls, each with one fd, for one unfinished message
    socket.send_fds(c.sock, [b"\x00"], [fd2])
    check(c.closed_by_peer(), "connection closed with two fds pending on an unfinished message")
    os.close(fd1)
    os.close(fd2)
    c.close()
    c = Conn(path)
    check(c.call("ping", []) == (None, "pong"), "daemon serves after parked fds")
    c.close()


def check_fd_limit(pid):
    """The daemon raised its soft descriptor limit to the hard one (main.c)."""
    with open("/proc/%d/limits" % pid) as f:
        line = next(l for l in f if l.startswith("Max open files"))
    soft, hard = line.split()[3:5]
    check(soft == hard, "RLIMIT_NOFILE raised to the hard limit: %s" % line.strip())


def lower_fd_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > 512:
        resource.setrlimit(resource.RLIMIT_NOFILE, (512, hard))


def test_batching(path):
    rng = random.Random(3)
    conns = [Conn(path) for _ in range(4)]
    want = {}
    for round_ in range(50):
        for c in conns:
            xs = [rng.randint(-50, 50) for _ in range(rng.choice([1, 100, 5000]))]
            want[(id(c), c.send("reduce", ["sum", "i64", pack("i64", xs)]))] = sum(xs)
    for (cid, msgid), value in want.items():
        c = next(c for c in conns if id(c) == cid)
        err, res = c.wait(msgid)
        check(err is None and res["value"] == value, "pipelined reduce %d" % msgid)
    stats = conns[0].ok("stats", [])
    check(stats["batch_jobs_max"] > 1, "pipelined requests were batched: %r" % stats["jobs_per_batch"])
    check(stats["batches_multi_conn"] > 0, "a batch held jobs of more than one connection")
    for c in conns:
        c.close()


def test_encodings(path):
    """The daemon decodes the plainest inline reduce on a fast path of its own; every other
    encoding of the same request goes through msgpack-c. Both must give the same answers and
    the same errors, whole or in fragments."""
    c = Conn(path)
    xs = list(range(-300, 724))
    body = pack("i32", xs)
    want = sum(xs)

    def bin_hdr(n, width):
        if width == 1:
            return b"\xc4" + struct.pack(">B", n)
        return b"\xc5" + struct.pack(">H", n) if width == 2 else b"\xc6" + struct.pack(">I", n)

    def raw_reduce(msgid_bytes, method=b"\xa6reduce", op=b"\xa3sum", dtype=b"\xa3i32", data=body,
                   width=2, extra=b""):
        nparams = 3 + (1 if extra else 0)
        return (b"\x94\x00" + msgid_bytes + method + bytes([0x90 | nparams]) + op + dtype +
                bin_hdr(len(data), width) + data + extra)

    cases = {
        "fast path": (7, raw_reduce(b"\x07")),
        "msgid uint16": (300, raw_reduce(b"\xcd\x01\x2c")),
        "msgid uint32 max": (0xFFFFFFFF, raw_reduce(b"\xce\xff\xff\xff\xff")),
        "msgid uint64": (9, raw_reduce(b"\xcf" + struct.pack(">Q", 9))),
        "method str8": (10, raw_reduce(b"\x0a", method=b"\xd9\x06reduce")),
        "op str8": (11, raw_reduce(b"\x0b", op=b"\xd9\x03sum")),
        "bin32": (12, raw_reduce(b"\x0c", width=4)),
        "nil opts": (13, raw_reduce(b"\x0d", extra=b"\xc0")),
    }
    for name, (msgid, data) in cases.items():
        c.sock.sendall(data)
        err, res = c.wait(msgid)
        check(err is None and res["value"] == want and res["count"] == len(xs),
              "reduce encoded with %s: %r %r" % (name, err, res))
    small = pack("i32", [1, 2, 3])
    c.sock.sendall(raw_reduce(b"\x14", data=small, width=1))
    err, res = c.wait(20)
    check(err is None and res["value"] == 6, "reduce with bin8: %r %r" % (err, res))
    # Errors in the fast path's shape are the general path's errors.
    errors = {
        21: (raw_reduce(b"\x15", data=body[:-1]), E_INVALID),
        22: (raw_reduce(b"\x16", op=b"\xa3avg"), E_INVALID),
        23: (raw_reduce(b"\x17", op=b"\xa5count"), E_INVALID),
        24: (raw_reduce(b"\x18", op=b"\xa3min", data=b"", width=1), E_INVALID),
        25: (raw_reduce(b"\x19", dtype=b"\xa3f16"), E_INVALID),
    }
    for msgid, (data, code) in errors.items():
        c.sock.sendall(data)
        err, res = c.wait(msgid)
        check(err is not None and err[0] == code and res is None,
              "error %d for request %d: %r" % (code, msgid, err))
    # Fragments: a request in the fast path's shape that arrives a few bytes at a time.
    data = raw_reduce(b"\x1e")
    for cut in (1, 2, 5, 9, 17, 20, 600, len(data) - 1):
        c.sock.sendall(data[:cut])
        time.sleep(0.01)
        c.sock.sendall(data[cut:])
        err, res = c.wait(30)
        check(err is None and res["value"] == want, "reduce cut at byte %d: %r %r" % (cut, err, res))
    # Two requests in one send, the second one cut: both answered.
    c.sock.sendall(raw_reduce(b"\x1f") + data[:100])
    time.sleep(0.02)
    c.sock.sendall(data[100:])
    err1, res1 = c.wait(31)
    err2, res2 = c.wait(30)
    check(err1 is None and err2 is None and res1["value"] == want and res2["value"] == want,
          "a request and the start of the next in one send")

    # A region reference as libvkreduce packs it ({"region", "offset", "count"} in that order)
    # also has a fast path; other orders and widths go through msgpack-c, with equal answers.
    fd = make_memfd(body)
    region = c.ok("register_shm", [], fds=[fd])["region"]
    os.close(fd)

    def u(v, width=0):
        if width == 8:
            return b"\xcf" + struct.pack(">Q", v)
        return msgpack.packb(v)

    def ref(keys):
        return bytes([0x80 | len(keys)]) + b"".join(msgpack.packb(k) + v for k, v in keys)

    def raw_region(msgid, src, op=b"\xa3sum"):
        return b"\x94\x00" + bytes([msgid]) + b"\xa6reduce\x93" + op + b"\xa3i32" + src

    whole = [("region", u(region)), ("offset", u(0)), ("count", u(len(xs)))]
    tail = [("region", u(region)), ("offset", u(400)), ("count", u(len(xs) - 100))]
    region_cases = {
        40: ("fast path", ref(whole), want),
        41: ("uint64 fields", ref([(k, u(msgpack.unpackb(v), 8)) for k, v in whole]), want),
        42: ("keys reordered", ref([whole[2], whole[0], whole[1]]), want),
        43: ("with an offset", ref(tail), sum(xs[100:])),
    }
    for msgid, (name, src, value) in region_cases.items():
        c.sock.sendall(raw_region(msgid, src))
        err, res = c.wait(msgid)
        check(err is None and res["value"] == value, "region reduce, %s: %r %r" % (name, err, res))
    region_errors = {
        50: ("unknown region", ref([("region", u(region + 99))] + whole[1:]), E_NO_REGION),
        51: ("count past the end", ref(whole[:2] + [("count", u(len(xs) + 1))]), E_INVALID),
        52: ("offset not a multiple of 4", ref([whole[0], ("offset", u(2)), whole[2]]), E_INVALID),
        53: ("count of 2^40", ref(whole[:2] + [("count", u(1 << 40))]), E_TOO_LARGE),
        54: ("offset near 2^64", ref([whole[0], ("offset", u((1 << 64) - 4, 8)), whole[2]]), E_INVALID),
    }
    for msgid, (name, src, code) in region_errors.items():
        c.sock.sendall(raw_region(msgid, src))
        err, res = c.wait(msgid)
        check(err is not None and err[0] == code and res is None,
              "region reduce, %s: error %d, got %r" % (name, code, err))
    data = raw_region(60, ref(whole))
    for cut in (3, 12, len(data) - 1):
        c.sock.sendall(data[:cut])
        time.sleep(0.01)
        c.sock.sendall(data[cut:])
        err, res = c.wait(60)
        check(err is None and res["value"] == want, "region reduce cut at byte %d: %r" % (cut, err))
    c.close()


def test_coalesced_replies(path):
    """Many pipelined replies are written in few writes; a reader that takes them a few bytes
    at a time still gets every reply, whole and in request order."""
    c = Conn(path)
    n = 1000  # within max_requests_per_conn, so that none is answered "busy" out of turn
    data = b"".join(msgpack.packb([0, i + 1, "reduce", ["sum", "i64", pack("i64", [i, 1])]], use_bin_type=True)
                    for i in range(n))
    c.sock.sendall(data)
    c.msgid = n
    time.sleep(0.5)
    order = []
    while len(order) < n:
        chunk = c.sock.recv(97)
        if not chunk:
            break
        c.unpacker.feed(chunk)
        for msg in c.unpacker:
            check(msg[2] is None and msg[3]["value"] == msg[1], "coalesced reply %r" % (msg,))
            order.append(msg[1])
    check(order == list(range(1, n + 1)), "coalesced replies arrive complete and in order (%d of %d)" % (len(order), n))
    stats = c.ok("stats", [])
    for key in ("request_queue_ns_total", "request_gpu_ns_total", "request_wake_ns_total",
                "request_reply_ns_total", "requests_timed", "batches_seen_by_loop", "batches_predicted"):
        check(key in stats, "stats has %s" % key)
    check(stats.get("requests_timed", 0) >= n, "requests_timed counts answered jobs (%r)" % stats.get("requests_timed"))
    check(stats.get("request_gpu_ns_total", 0) > 0, "request_gpu_ns_total grows")
    check(stats.get("bytes_out", 0) > 0, "bytes_out grows")
    c.close()


def main():
    daemon = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="vkr-proto-")
    path = os.path.join(tmp, "vkreduce.sock")
    log_path = os.path.join(tmp, "daemon.log")
    log = open(log_path, "w")
    # Started with a low soft descriptor limit, as systemd's default 1024, which it raises.
    proc = subprocess.Popen([daemon, "--socket", path] + sys.argv[2:], stderr=log, preexec_fn=lower_fd_limit)
    try:
        if not wait_for_socket(proc, path, 30):
            return 1
        # A second daemon on the same path refuses to start.
        second = subprocess.run([daemon, "--socket", path], capture_output=True, text=True, timeout=120)
        check(second.returncode != 0 and "already listening" in second.stderr,
              "second daemon refused: %d %r" % (second.returncode, second.stderr[-200:]))
        hello = test_basics(path)
        seed = int(os.environ.get("VKR_TEST_SEED", "12345"))
        print("seed", seed, flush=True)
        test_reduce_scan(path, [d for d in hello["dtypes"]], seed)
        test_shm(path, hello)
        check_fd_limit(proc.pid)
        test_bad_input(path)
        test_half_close(path)
        test_parked_fds(path)
        test_batching(path)
        test_encodings(path)
        test_coalesced_replies(path)
        c = Conn(path)
        stats = c.ok("stats", [])
        print("stats: requests %d, errors %r, batches %d, batch_jobs_max %d, multi-conn batches %d" % (
            stats["requests_total"], stats["errors"], stats["batches"], stats["batch_jobs_max"],
            stats["batches_multi_conn"]))
        c.close()
    finally:
        rc, text = stop_daemon(proc, log, log_path)
        sys.stderr.write(text[-20000:])
        check(rc == 0, "daemon exits 0 on SIGTERM (got %d)" % rc)
        check(not os.path.exists(path), "daemon removed its socket")
        os.unlink(log_path)
        try:
            os.rmdir(tmp)
        except OSError:
            pass
    print("%d checks, %d failures" % (checks, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
