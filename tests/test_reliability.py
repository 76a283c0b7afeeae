#!/usr/bin/python3
"""Reliability and access tests of vkreduced: limits and backpressure ("busy"), per-uid
limits, allow_uids/allow_groups, slow readers (soft and hard output limits), the global
memory cap, and device loss with recovery (VKR_FAULT_SUBMIT_EVERY makes every Nth submit
fail as VK_ERROR_DEVICE_LOST; VKR_FAULT_THREAD_RESTART_FAILS makes the first N restarts of
the completion thread after a rebuild fail as pthread_create with EAGAIN).

Each scenario starts its own daemon with the flags it needs, speaks msgpack-RPC through the
helpers of test_protocol.py, and stops the daemon with SIGTERM, which must exit 0 without
a sanitizer report (the daemon leak-checks itself under ASan).

Usage: test_reliability.py PATH/TO/vkreduced [scenario...]
"""
import errno
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_protocol as tp  # noqa: E402
from test_protocol import Conn, check, pack, make_memfd  # noqa: E402
from test_protocol import E_INVALID, E_TOO_LARGE, E_BUSY, E_LOST  # noqa: E402
from daemon_proc import wait_for_socket  # noqa: E402

DAEMON = None


class Daemon:
    """A vkreduced on a temporary socket, world-connectable so that a child that dropped
    root can reach it."""

    def __init__(self, flags, env=None, preexec=None):
        self.tmp = tempfile.mkdtemp(prefix="vkr-rel-")
        os.chmod(self.tmp, 0o755)
        self.path = os.path.join(self.tmp, "vkreduce.sock")
        self.log_path = os.path.join(self.tmp, "daemon.log")
        self.log = open(self.log_path, "w")
        full_env = dict(os.environ)
        full_env.update(env or {})
        self.proc = subprocess.Popen([DAEMON, "--socket", self.path, "--socket-mode", "0666"] + flags,
                                     stderr=self.log, env=full_env, preexec_fn=preexec)
        if not wait_for_socket(self.proc, self.path, 60):
            raise RuntimeError("daemon did not start (exit status %r)" % self.proc.poll())

    def stats(self):
        c = Conn(self.path)
        s = c.ok("stats", [])
        c.close()
        return s

    def stop(self, name):
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.log.close()
        with open(self.log_path, errors="replace") as f:
            text = f.read()
        bad = [w for w in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                           "validation error", "validation warning") if w in text]
        check(rc == 0 and not bad, "%s: daemon exits 0 and clean (rc %d, %r)" % (name, rc, bad))
        if rc != 0 or bad:
            sys.stderr.write(text[-8000:])
        os.unlink(self.log_path)
        try:
            os.rmdir(self.tmp)
        except OSError:
            pass
        return text


def closed_at_once(path):
    """Connects and reports whether the daemon closes the connection without a word."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)
    try:
        s.sendall(b"\x94\x00\x01\xa4ping\x90")
        data = s.recv(100)
        return data == b""
    except (ConnectionResetError, BrokenPipeError):
        return True
    finally:
        s.close()


def pipeline(c, requests):
    """Sends every request in one write, then collects the replies (each exactly once)."""
    data, ids = b"", []
    import msgpack
    for method, params in requests:
        c.msgid += 1
        ids.append(c.msgid)
        data += msgpack.packb([0, c.msgid, method, params], use_bin_type=True)
    c.sock.sendall(data)
    return [c.wait(i) for i in ids]


# ---- scenarios -----------------------------------------------------------------------------

def test_busy_per_connection():
    d = Daemon(["--max-requests-per-conn", "4", "--max-bytes-per-conn", "65536"])
    c = Conn(d.path)
    xs = list(range(1000))
    replies = pipeline(c, [("reduce", ["sum", "i32", pack("i32", xs)])] * 40)
    ok = [r for e, r in replies if e is None]
    busy = [e for e, r in replies if e is not None]
    check(len(ok) >= 4 and all(r["value"] == sum(xs) for r in ok), "busy: accepted requests are correct")
    check(len(busy) > 0 and all(e[0] == E_BUSY for e in busy), "busy: the rest are 'busy' (%d)" % len(busy))
    # Bytes in flight: 20 KiB requests against a 64 KiB budget.
    ys = list(range(5000))
    replies = pipeline(c, [("reduce", ["sum", "i32", pack("i32", ys)])] * 12)
    check(any(e is not None and e[0] == E_BUSY for e, r in replies), "busy: bytes in flight")
    check(all(r["value"] == sum(ys) for e, r in replies if e is None), "busy: bytes: accepted correct")
    check(c.call("ping", []) == (None, "pong"), "busy: connection still serves")
    hello = c.ok("hello", ["reliability"])
    for key in ("max_connections_per_uid", "max_shm_bytes_per_uid", "max_memory_bytes",
                "output_soft_bytes", "output_soft_seconds"):
        check(key in hello["limits"], "hello reports limit %s" % key)
    c.close()
    s = d.stats()
    check(s["errors"].get("BUSY", 0) > 0, "stats counts busy: %r" % s["errors"])
    check(s["memory_bytes"] < 4096, "memory gauge back near 0 (%d)" % s["memory_bytes"])
    d.stop("busy")


def test_memory_cap():
    d = Daemon(["--max-memory-bytes", "1M", "--max-bytes-per-conn", "1G"])
    conns = [Conn(d.path) for _ in range(4)]
    # 60 KB inline each: messages within one receive buffer, which are charged when their
    # requests are queued (larger ones are charged as they arrive, and wait: see
    # test_unfinished_messages).
    xs = list(range(15000))
    blob = pack("i32", xs)
    import msgpack
    # Bursts of 1.44 MB against a 1 MB cap. Whether a burst finds the cap reached depends on
    # how fast the daemon finishes each request against how fast this process sends the
    # next; on a loaded machine one burst can slip through, so up to five are sent.
    for burst in range(5):
        ids = []
        for c in conns:
            data = b""
            for _ in range(6):
                c.msgid += 1
                data += msgpack.packb([0, c.msgid, "reduce", ["sum", "i32", blob]], use_bin_type=True)
                ids.append((c, c.msgid))
            c.sock.sendall(data)
        results = [c.wait(i) for c, i in ids]
        busy = [e for e, r in results if e is not None]
        check(all(e[0] == E_BUSY for e in busy), "memory cap: refusals are busy")
        check(all(r["value"] == tp.wrap("i32", sum(xs)) for e, r in results if e is None),
              "memory cap: accepted requests correct")
        if busy:
            break
    s = d.stats()
    check(s["busy_memory"] > 0, "memory cap: stats.busy_memory %d after %d bursts" %
          (s["busy_memory"], burst + 1))
    check(s["memory_bytes"] < 4096, "memory cap: gauge drains (%d)" % s["memory_bytes"])
    for c in conns:
        c.close()
    d.stop("memory")


def test_inline_limit():
    d = Daemon(["--max-inline-bytes", "4096"])
    c = Conn(d.path)
    err, _ = c.call("reduce", ["sum", "u32", pack("u32", [1] * 2000)])
    check(err is not None and err[0] == E_TOO_LARGE, "inline limit: 8000-byte bin refused: %r" % (err,))
    check(c.closed_by_peer(), "inline limit: connection closed after the reply")
    c = Conn(d.path)
    check(c.ok("reduce", ["sum", "u32", pack("u32", [1] * 1000)])["value"] == 1000, "inline limit: small ok")
    c.close()
    d.stop("inline")


def test_per_uid_connections():
    d = Daemon(["--max-connections-per-uid", "3"])
    conns = [Conn(d.path) for _ in range(3)]
    for c in conns:
        check(c.call("ping", []) == (None, "pong"), "per-uid: first three serve")
    check(closed_at_once(d.path), "per-uid: the fourth is closed at once")
    conns.pop().close()
    time.sleep(0.2)
    c = Conn(d.path)
    check(c.call("ping", []) == (None, "pong"), "per-uid: a slot frees when one closes")
    s = c.ok("stats", [])
    check(s["connections_refused_uid"] == 1 and s["users"] == 1, "per-uid: stats %d %d" % (
        s["connections_refused_uid"], s["users"]))
    c.close()
    for c in conns:
        c.close()
    d.stop("per-uid")


def test_per_uid_shm():
    d = Daemon(["--max-shm-bytes-per-uid", "8192", "--max-shm-bytes-per-conn", "1G"])
    a, b = Conn(d.path), Conn(d.path)
    fd = make_memfd(pack("u32", [1] * 2048))
    ra = a.ok("register_shm", [], fds=[fd])
    os.close(fd)
    fd = make_memfd(pack("u32", [1] * 1024))
    b.expect_error(E_BUSY, "register_shm", [], fds=[fd], what="over max_shm_bytes_per_uid")
    a.ok("unregister_shm", [ra["region"]])
    rb = b.ok("register_shm", [], fds=[fd])
    os.close(fd)
    res = b.ok("reduce", ["sum", "u32", {"region": rb["region"], "offset": 0, "count": 1024}])
    check(res["value"] == 1024, "per-uid shm: region usable after the quota freed")
    # Regions are scoped to their connection: a's view of b's id is "no such region".
    err, _ = a.call("reduce", ["sum", "u32", {"region": rb["region"], "offset": 0, "count": 1}])
    check(err is not None and err[0] == tp.E_NO_REGION, "regions are per connection: %r" % (err,))
    a.close()
    b.close()
    time.sleep(0.2)
    s = d.stats()
    check(s["regions"] == 0 and s["region_bytes"] == 0, "per-uid shm: regions gone with connections")
    d.stop("per-uid-shm")


def in_child_as(uid, gid, fn):
    """Runs fn() in a child that dropped root to uid/gid; returns its exit status == 0."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
            os._exit(0 if fn() else 1)
        except BaseException as e:  # noqa: B036 - the child must never return into the test
            print("child:", e, flush=True)
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def test_allow_lists():
    me = os.getuid()
    other = 65534 if me == 0 else None
    d = Daemon(["--allow-uids", "4242"])
    if me == 0:
        # Root is always let in; a child that dropped to another uid is not.
        check(Conn(d.path).call("ping", []) == (None, "pong"), "allow: root always connects")
        check(in_child_as(other, other, lambda: closed_at_once(d.path)), "allow: uid not listed is refused")
    else:
        check(closed_at_once(d.path), "allow: uid not listed is refused")
    s = d.stats() if me == 0 else None
    if s is not None:
        check(s["connections_denied"] == 1, "allow: stats.connections_denied %d" % s["connections_denied"])
    d.stop("allow-uids")
    if me != 0:
        return
    d = Daemon(["--allow-uids", str(other)])
    check(in_child_as(other, other, lambda: not closed_at_once(d.path)), "allow: listed uid connects")
    d.stop("allow-uids-listed")
    d = Daemon(["--allow-groups", str(other)])
    check(in_child_as(other, other, lambda: not closed_at_once(d.path)), "allow: member of listed group connects")
    check(in_child_as(other, other + 1 if other < 65535 else 1, lambda: closed_at_once(d.path)),
          "allow: non-member refused")
    d.stop("allow-groups")
    # A bad list stops the daemon at start with a clear message.
    r = subprocess.run([DAEMON, "--socket", "/nonexistent/x.sock", "--allow-groups", "no-such-group-xyz"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 2 and "no group" in r.stderr, "allow: unknown group refused at start: %r" % r.stderr)


def wait_stats(d, done, seconds=30):
    """The daemon's stats once done(stats) holds, or the last ones after `seconds`: the work
    before an event (a pipeline compiled on first use, a scan on lavapipe under ASan) takes
    as long as the machine makes it."""
    deadline = time.monotonic() + seconds
    while True:
        s = d.stats()
        if done(s) or time.monotonic() > deadline:
            return s
        time.sleep(0.1)


def test_slow_reader():
    # Soft limit: above 4 KiB unsent for a second closes; the timer fires without traffic.
    d = Daemon(["--output-soft-bytes", "4096", "--output-soft-seconds", "1"])
    slow = Conn(d.path)
    xs = list(range(200000))  # scan result: 800 KB per reply, more than the socket buffers
    import msgpack
    data = b""
    for _ in range(4):
        slow.msgid += 1
        data += msgpack.packb([0, slow.msgid, "scan", ["sum", "i32", pack("i32", xs)]], use_bin_type=True)
    slow.sock.sendall(data)
    time.sleep(1)  # the soft time, at least
    s = wait_stats(d, lambda s: s["slow_reader_closes"] >= 1)
    check(s["slow_reader_closes"] == 1, "slow reader (soft): closed after the soft time (%d)" % s["slow_reader_closes"])
    check(s["connections"] == 1 and s["memory_bytes"] < 4096, "slow reader: its memory is freed (%d)" % s["memory_bytes"])
    slow.close()
    # A reader that keeps up with the same traffic is not closed.
    fast = Conn(d.path)
    for _ in range(3):
        res = fast.ok("scan", ["sum", "i32", pack("i32", xs[:20000])])
        check(len(res["data"]) == 80000, "fast reader: full scan result")
    fast.close()
    d.stop("slow-soft")
    # Hard limit: closed at once.
    d = Daemon(["--max-output-bytes", "65536", "--output-pause-bytes", "65536"])
    slow = Conn(d.path)
    slow.msgid += 1
    slow.sock.sendall(msgpack.packb([0, slow.msgid, "scan", ["sum", "i32", pack("i32", xs)]], use_bin_type=True))
    # Closed as soon as the reply is made: after the scan, however long this machine takes
    # (a fixed 0.5 s was too short for ASan on lavapipe with the pipeline built on first use).
    s = wait_stats(d, lambda s: s["slow_reader_closes"] >= 1)
    check(s["slow_reader_closes"] == 1, "slow reader (hard): closed (%d)" % s["slow_reader_closes"])
    slow.close()
    d.stop("slow-hard")


def test_stalled_reader_makes_room():
    # A connection that stops reading with its replies below output_soft_bytes (which no
    # timer closes) must not hold the memory budget from everyone else: once it has taken
    # nothing for output_soft_seconds, a request the budget would refuse closes it instead.
    d = Daemon(["--max-memory-bytes", "4M", "--output-pause-bytes", "512K", "--output-soft-seconds", "1",
                "--max-bytes-per-conn", "1G"])
    xs = list(range(400000))  # a 1.6 MB scan: 3.2 MB charged in flight, 1.6 MB of reply
    import msgpack
    stalled = Conn(d.path)
    stalled.msgid += 1
    stalled.sock.sendall(msgpack.packb([0, stalled.msgid, "scan", ["sum", "i32", pack("i32", xs)]],
                                       use_bin_type=True))
    # Its scan done, its reply unread beyond what the socket holds.
    s = wait_stats(d, lambda s: 512 << 10 < s["memory_bytes"] < 3 << 20)
    check(512 << 10 < s["memory_bytes"] < 3 << 20, "stalled reader: reply held unsent (%d)" % s["memory_bytes"])
    victim = Conn(d.path)
    err, _ = victim.call("scan", ["sum", "i32", pack("i32", xs)])
    check(err is not None and err[0] == E_BUSY, "stalled reader: within the soft time others get busy (%r)" % (err,))
    time.sleep(1.2)
    err, res = victim.call("scan", ["sum", "i32", pack("i32", xs)])
    check(err is None and len(res["data"]) == 4 * len(xs),
          "stalled reader: after the soft time the request is served (%r)" % (err,))
    s = d.stats()
    check(s["slow_reader_closes"] == 1 and s["connections"] == 2,
          "stalled reader: it alone was closed (%d closes, %d connections)" % (s["slow_reader_closes"], s["connections"]))
    check(stalled.closed_by_peer(), "stalled reader: its connection is closed")
    stalled.close()
    victim.close()
    d.stop("stalled")


def test_unfinished_messages():
    # A message larger than one receive buffer is charged to max_memory_bytes as its header
    # arrives. Where it does not fit, its connection is not read until it does (the client's
    # send waits); a client that sends the start of a large message and then nothing for
    # output_soft_seconds is closed when another needs the memory; a lone message of any
    # size is admitted.
    d = Daemon(["--max-memory-bytes", "4M", "--output-soft-seconds", "2", "--max-bytes-per-conn", "1G"])
    import msgpack
    xs = list(range(600000))  # 2.4 MB inline
    blob = pack("i32", xs)

    def start(c, head):
        c.msgid += 1
        data = msgpack.packb([0, c.msgid, "reduce", ["sum", "i32", blob]], use_bin_type=True)
        c.sock.sendall(data[:head])  # within the socket's buffer: never blocks
        return c.msgid, data[head:]

    a, b, other = Conn(d.path), Conn(d.path), Conn(d.path)
    a_id, a_rest = start(a, 1 << 16)
    s = wait_stats(d, lambda s: s["memory_bytes"] >= len(blob))
    check(s["memory_bytes"] >= len(blob), "unfinished: charged as its header arrives (%d)" % s["memory_bytes"])
    b_id, b_rest = start(b, 1 << 16)
    s = wait_stats(d, lambda s: s["connections_waiting_memory"] == 1)
    check(s["connections_waiting_memory"] == 1 and s["memory_waits"] == 1,
          "unfinished: the second waits (%d waiting, %d waits)" % (s["connections_waiting_memory"], s["memory_waits"]))
    check(s["memory_bytes"] < 2 * len(blob), "unfinished: the waiting one holds nothing (%d)" % s["memory_bytes"])
    a.sock.sendall(a_rest)  # within the soft time of its start
    err, res = a.wait(a_id)
    check(err is None and res["value"] == tp.wrap("i32", sum(xs)), "unfinished: the first is served (%r)" % (err,))
    b.sock.sendall(b_rest)
    err, res = b.wait(b_id)
    check(err is None and res["value"] == tp.wrap("i32", sum(xs)),
          "unfinished: the second is read once the first is done (%r)" % (err,))
    s = d.stats()
    check(s["connections_waiting_memory"] == 0 and s["memory_bytes"] < 4096,
          "unfinished: nothing waits or stays charged (%d, %d)" % (s["connections_waiting_memory"], s["memory_bytes"]))
    # A sender that stalls mid-message gives way after the soft time to one that waits.
    a_id, a_rest = start(a, 1 << 16)
    wait_stats(d, lambda s: s["memory_bytes"] >= len(blob))
    b_id, b_rest = start(b, 1 << 16)
    wait_stats(d, lambda s: s["connections_waiting_memory"] == 1)
    err, res = other.call("reduce", ["sum", "i32", pack("i32", [1, 2, 3])])
    check(err is None and res["value"] == 6, "unfinished: small requests of others go on meanwhile (%r, %r)" % (err, res))
    s = wait_stats(d, lambda s: s["stalled_sender_closes"] >= 1, seconds=20)
    check(s["stalled_sender_closes"] == 1, "unfinished: the stalled sender is closed (%d)" % s["stalled_sender_closes"])
    check(a.closed_by_peer(), "unfinished: its connection is closed")
    b.sock.sendall(b_rest)
    err, res = b.wait(b_id)
    check(err is None and res["value"] == tp.wrap("i32", sum(xs)), "unfinished: the waiting one is served (%r)" % (err,))
    # A lone message larger than the whole budget is admitted.
    big = list(range(1500000))  # 6 MB
    err, res = other.call("reduce", ["sum", "i64", pack("i64", big)])
    check(err is None and res["value"] == sum(big), "unfinished: a lone message over the budget is served (%r)" % (err,))
    for c in (a, b, other):
        c.close()
    d.stop("unfinished")


def test_out_of_fds():
    # A daemon out of file descriptors closes new connections at once (a descriptor kept in
    # reserve is given up to accept and close them), instead of leaving them in the listen
    # backlog until some connection closes; once one does, connecting works again.
    import resource

    def few_fds():
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))

    d = Daemon([], preexec=few_fds)
    conns, refused = [], False
    for _ in range(100):
        c = Conn(d.path)
        c.sock.settimeout(10)
        try:
            err, res = c.call("ping", [])
        except (ConnectionError, OSError) as e:  # closed at once: EOF, reset or EPIPE
            refused = not isinstance(e, socket.timeout)
            c.close()
            break
        check(err is None and res == "pong", "out of fds: served connections answer")
        conns.append(c)
    check(refused, "out of fds: a connection beyond the descriptors is closed at once, not left waiting")
    check(len(conns) >= 10, "out of fds: connections up to the limit are served (%d)" % len(conns))
    s = conns[0].ok("stats", [])
    check(s["connections_refused"] >= 1, "out of fds: counted as refused (%d)" % s["connections_refused"])
    for c in conns[-3:]:
        c.close()
    del conns[-3:]
    time.sleep(0.2)
    c = Conn(d.path)
    c.sock.settimeout(10)
    check(c.call("ping", []) == (None, "pong"), "out of fds: connecting works again once connections close")
    c.close()
    for c in conns:
        c.close()
    d.stop("out-of-fds")


def test_device_loss():
    d = Daemon([], env={"VKR_FAULT_SUBMIT_EVERY": "4"})
    c = Conn(d.path)
    other = Conn(d.path)
    fd = make_memfd(pack("u32", list(range(4096))))
    region = c.ok("register_shm", [], fds=[fd])["region"]
    os.close(fd)
    wfd = make_memfd(bytes(4 * 4096))
    wregion = c.ok("register_shm", [{"writable": True}], fds=[wfd])["region"]
    lost = answered = 0
    for i in range(24):
        xs = list(range(i, i + 500))
        which = i % 3
        if which == 0:
            err, res = c.call("reduce", ["sum", "i64", pack("i64", xs)])
            good = err is None and res["value"] == sum(xs)
        elif which == 1:
            err, res = c.call("reduce", ["max", "u32", {"region": region, "offset": 0, "count": 4096}])
            good = err is None and res["value"] == 4095
        else:
            err, res = c.call("scan", ["sum", "u32", {"region": region, "offset": 0, "count": 4096},
                                       {"dst": {"region": wregion, "offset": 0}}])
            got = tp.unpack("u32", os.pread(wfd, 4 * 4096, 0)) if err is None else None
            good = err is None and got[-1] == sum(range(4096)) & 0xffffffff
        answered += 1
        if err is not None:
            check(err[0] == E_LOST, "device loss: error is 'device lost' (%r)" % (err,))
            lost += 1
        else:
            check(good, "device loss: request %d correct after rebuilds" % i)
        check(other.call("ping", []) == (None, "pong"), "device loss: other clients stay connected")
    os.close(wfd)
    check(lost >= 3, "device loss: faults were injected (%d of %d)" % (lost, answered))
    # Pipelined: every request answered exactly once, each correct or 'device lost'.
    xs = list(range(300))
    replies = pipeline(c, [("reduce", ["sum", "i32", pack("i32", xs)])] * 30)
    check(all((e is None and r["value"] == sum(xs)) or (e is not None and e[0] == E_LOST) for e, r in replies),
          "device loss: pipelined answers are correct or 'device lost'")
    s = c.ok("stats", [])
    check(s["device_rebuilds"] >= 3 and s["device_lost"] >= 3, "device loss: stats rebuilds %d lost %d" % (
        s["device_rebuilds"], s["device_lost"]))
    print("device loss: %d of %d sequential requests lost, %d rebuilds" % (lost, answered, s["device_rebuilds"]))
    c.close()
    other.close()
    d.stop("device-loss")


def test_drain_after_lost_submit():
    # The drain on SIGTERM ends when no work is left, also where the last work ended without
    # a completion: here a submit that fails (device lost) behind a long scan, during the
    # drain. The daemon must exit once both are answered, not at the drain timeout.
    d = Daemon(["--max-batches-in-flight", "1", "--drain-timeout", "60s"],
               env={"VKR_FAULT_SUBMIT_EVERY": "2"})
    c = Conn(d.path)
    import msgpack
    n = 1 << 24
    fd = make_memfd(bytes(4 * n))
    region = c.ok("register_shm", [{"writable": True}], fds=[fd])["region"]
    # Submit 1, a scan of 64 MiB in place, runs; submit 2, the reduce queued behind it, fails.
    scan = c.send("scan", ["sum", "i32", {"region": region, "offset": 0, "count": n},
                           {"dst": {"region": region, "offset": 0}}])
    time.sleep(0.05)
    reduce = c.send("reduce", ["sum", "i32", pack("i32", [5, 6])])
    time.sleep(0.05)
    t0 = time.monotonic()
    d.proc.send_signal(signal.SIGTERM)
    err, _ = c.wait(scan)
    check(err is None, "drain: the scan on the GPU is answered (%r)" % (err,))
    err, _ = c.wait(reduce)
    check(err is not None and err[0] == E_LOST, "drain: the failed submit is answered 'device lost' (%r)" % (err,))
    check(c.closed_by_peer(), "drain: the connection is closed")
    try:
        d.proc.wait(timeout=40)
    except subprocess.TimeoutExpired:
        pass
    elapsed = time.monotonic() - t0
    check(d.proc.returncode is not None and elapsed < 30,
          "drain: exits once the work is answered, not at the 60-s drain timeout (%.1f s)" % elapsed)
    os.close(fd)
    c.close()
    d.stop("drain-after-lost-submit")


THREAD_BUSY = "the daemon cannot start a thread now; retry later"  # batch.c, on_check


def call_within(c, seconds, method, params):
    """c.call, but a reply that takes longer than `seconds` raises socket.timeout."""
    c.sock.settimeout(seconds)
    try:
        return c.call(method, params)
    finally:
        c.sock.settimeout(60)


def test_thread_restart():
    # After a device loss the daemon rebuilds the device and starts its completion thread
    # again. Here the first 3 of those starts fail (EAGAIN, as from pthread_create): the
    # rebuild's own, then one at each turn of the loop that finds requests queued (on_check),
    # which answers them "busy" rather than leaving them queued for a thread that is not
    # there. The 4th start works and requests are served again. Submits are counted exactly
    # (only batches submit, one per lone request here), so every step is known: requests 1
    # and 2 serve, 3 is lost (start 1 fails in its rebuild), a lone request is busy (start
    # 2), the first request of a pipelined burst is busy (start 3), then requests serve
    # again, until submit 6 is lost and the second rebuild starts its thread at once.
    fails = 3
    d = Daemon([], env={"VKR_FAULT_SUBMIT_EVERY": "3", "VKR_FAULT_THREAD_RESTART_FAILS": str(fails)})
    c = Conn(d.path)
    k = [0]

    def req():
        # Small inline reduces (about 90 bytes each, so a burst is one read for the daemon),
        # each with its own answer.
        k[0] += 1
        xs = list(range(k[0], k[0] + 16))
        return ("reduce", ["sum", "i32", pack("i32", xs)]), sum(xs)

    def is_busy(err):
        return err is not None and err[0] == E_BUSY and err[1] == THREAD_BUSY

    busy_seen = 0
    try:
        for i in range(2):
            (m, p), want = req()
            err, res = call_within(c, 60, m, p)
            check(err is None and res["value"] == want, "thread restart: request %d before the loss (%r)" % (i, err))
        (m, p), _ = req()
        err, _ = call_within(c, 60, m, p)
        check(err is not None and err[0] == E_LOST, "thread restart: submit 3 is 'device lost' (%r)" % (err,))
        # The loop answers stats without the completion thread, once the rebuild is done
        # (building every pipeline again takes seconds on lavapipe, more under ASan).
        err, s = call_within(c, 120, "stats", [])
        check(err is None and s["device_rebuilds"] == 1, "thread restart: device rebuilt once (%r)" % (
            err or s["device_rebuilds"]))
        # No thread now. A request queued must be answered, and at once: without on_check's
        # retry it would wait for ever (here: the 15-s timeout fails the scenario).
        (m, p), _ = req()
        err, _ = call_within(c, 15, m, p)
        check(is_busy(err), "thread restart: a lone request is 'busy' with the daemon's message (%r)" % (err,))
        busy_seen += is_busy(err)
        # A pipelined burst, in one write: every request answered exactly once (Conn.wait
        # asserts no msgid is answered twice), the first at least 'busy'. The rest are 'busy'
        # too when the daemon reads the burst in one turn; should it take two, the later
        # ones meet a started thread and are served (or lost, at submit 6).
        reqs = [req() for _ in range(8)]
        c.sock.settimeout(15)
        replies = pipeline(c, [r for r, _ in reqs])
        c.sock.settimeout(60)
        check(is_busy(replies[0][0]), "thread restart: the burst's first request is 'busy' (%r)" % (replies[0][0],))
        started = False
        for (err, res), (_, want) in zip(replies, reqs):
            started |= not is_busy(err)
            ok = (is_busy(err) and not started) or (err is None and res["value"] == want) or \
                (err is not None and err[0] == E_LOST)
            check(ok, "thread restart: burst reply is 'busy' (only before any served), correct or lost: %r %r" % (
                err, res))
            busy_seen += is_busy(err)
        print("thread restart: %d of the burst's %d requests busy" % (sum(is_busy(e) for e, _ in replies),
                                                                      len(replies)))
        # The failures are used up: from here every request is served, but for the 'device
        # lost' of every 3rd submit, whose rebuild starts the thread at once.
        lost = served = served_after_lost = 0
        for i in range(8):
            (m, p), want = req()
            err, res = call_within(c, 120, m, p)
            good = (err is None and res["value"] == want) or (err is not None and err[0] == E_LOST)
            check(good and not is_busy(err),
                  "thread restart: after the failures, request %d is served correctly or lost (%r)" % (i, err))
            if err is None:
                served += 1
                served_after_lost += lost > 0
            elif err[0] == E_LOST:
                lost += 1
                call_within(c, 120, "stats", [])  # answered once the rebuild is done
            if lost and served_after_lost >= 2:
                break
        check(served >= 2 and lost >= 1 and served_after_lost >= 2,
              "thread restart: served again, lost and rebuilt, served again (%d served, %d lost)" % (served, lost))
        check(c.call("ping", []) == (None, "pong"), "thread restart: the connection still serves")
        s = c.ok("stats", [])
        check(s["device_lost"] >= 2 and s["device_rebuilds"] == s["device_lost"],
              "thread restart: every loss rebuilt (%d rebuilds, %d losses)" % (s["device_rebuilds"], s["device_lost"]))
        check(s["errors"].get("BUSY", 0) == busy_seen, "thread restart: stats count the %d busy answers (%r)" % (
            busy_seen, s["errors"]))
        # Every request answered once: nothing arrives after the last reply.
        time.sleep(0.3)
        c.sock.setblocking(False)
        try:
            extra = c.sock.recv(1 << 16)
        except BlockingIOError:
            extra = b""
        c.sock.setblocking(True)
        c.unpacker.feed(extra)
        stray = list(c.unpacker) + list(c.replies)
        check(not stray, "thread restart: no reply beyond one per request (%r)" % (stray,))
    except socket.timeout:
        check(False, "thread restart: a request was never answered (queued for a completion thread "
              "that is not there)")
    c.close()
    text = d.stop("thread-restart")
    # The log: the rebuild's failed start, then on_check's failed retries and its started one.
    eagain = os.strerror(errno.EAGAIN)
    rebuilt_no_thread = text.count("device rebuilt, but the completion thread did not start: %s" % eagain)
    retry_failed = text.count("the completion thread does not start: %s; answering 'busy'" % eagain)
    retry_started = text.count("the completion thread started")
    check(rebuilt_no_thread == 1 and retry_failed == fails - 1 and retry_started == 1,
          "thread restart: the log shows 1 failed start in the rebuild, %d failed retries and 1 started "
          "(%d, %d, %d)" % (fails - 1, rebuilt_no_thread, retry_failed, retry_started))


SCENARIOS = {
    "busy": test_busy_per_connection,
    "memory": test_memory_cap,
    "inline": test_inline_limit,
    "per_uid": test_per_uid_connections,
    "per_uid_shm": test_per_uid_shm,
    "allow": test_allow_lists,
    "slow": test_slow_reader,
    "stalled": test_stalled_reader_makes_room,
    "unfinished": test_unfinished_messages,
    "out_of_fds": test_out_of_fds,
    "device_loss": test_device_loss,
    "drain_lost": test_drain_after_lost_submit,
    "thread_restart": test_thread_restart,
}


def main():
    global DAEMON
    DAEMON = sys.argv[1]
    names = sys.argv[2:] or list(SCENARIOS)
    for name in names:
        print("== %s" % name, flush=True)
        SCENARIOS[name]()
    print("%d checks, %d failures" % (tp.checks, len(tp.failures)))
    return 1 if tp.failures else 0


if __name__ == "__main__":
    sys.exit(main())
