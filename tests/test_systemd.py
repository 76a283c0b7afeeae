#!/usr/bin/python3
"""Operations tests of vkreduced: the systemd units, socket activation, the sd_notify
protocol (readiness, status, watchdog, reload, stop), the drain on SIGTERM, the
configuration file, journal logging, the pipeline cache and `vkreduce stats --prometheus`.

Everything runs against the real daemon on lavapipe, without systemd as init: the test plays
the service manager (it binds the NOTIFY_SOCKET datagram socket itself, and uses
systemd-socket-activate for socket activation).

Usage: test_systemd.py SECTION VKREDUCED VKREDUCE_CLI SOURCE_ROOT
SECTION: verify, activation, notify, drain, config, journal, cache, prometheus, or all.
Exit status 0 when every check passes.
"""
import os
import random
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

import msgpack

from daemon_proc import stop_daemon

E_SHUTDOWN = 8
failures = []
checks = 0


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)
    return cond


class Conn:
    """A minimal msgpack-RPC client (independent of libvkreduce)."""

    def __init__(self, path, timeout=60):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
        self.msgid = 0
        self.replies = {}

    def packed(self, method, params):
        self.msgid += 1
        return self.msgid, msgpack.packb([0, self.msgid, method, params], use_bin_type=True)

    def send(self, method, params):
        msgid, data = self.packed(method, params)
        self.sock.sendall(data)
        return msgid

    def read_some(self):
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("daemon closed the connection")
        self.unpacker.feed(chunk)
        for msg in self.unpacker:
            assert msg[0] == 1 and len(msg) == 4, msg
            assert msg[1] not in self.replies, "msgid %d answered twice" % msg[1]
            self.replies[msg[1]] = (msg[2], msg[3])

    def wait(self, msgid):
        while msgid not in self.replies:
            self.read_some()
        return self.replies.pop(msgid)

    def call(self, method, params):
        return self.wait(self.send(method, params))

    def close(self):
        self.sock.close()


def daemon_env(extra=None):
    env = dict(os.environ)
    # The daemon must not pick up a host's configuration or service environment.
    for k in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID",
              "JOURNAL_STREAM", "STATE_DIRECTORY"):
        env.pop(k, None)
    env.update(extra or {})
    return env


class Daemon:
    """vkreduced on a temporary socket, its stderr in a file."""

    def __init__(self, tmp, args=(), env=None, name="daemon", wait=True, config=None):
        self.path = os.path.join(tmp, name + ".sock")
        self.log_path = os.path.join(tmp, name + ".log")
        self.log = open(self.log_path, "w")
        cmd = [DAEMON, "--socket", self.path, "--config", config or os.devnull] + list(args)
        self.proc = subprocess.Popen(cmd, stderr=self.log, env=daemon_env(env))
        self.termed = False
        if wait:
            self.wait_socket()

    def wait_socket(self):
        for _ in range(1200):
            if os.path.exists(self.path):
                return True
            if self.proc.poll() is not None:
                raise RuntimeError("daemon exited early (%d): %s" % (self.proc.returncode, self.text()))
            time.sleep(0.05)
        raise RuntimeError("daemon did not start: " + self.text())

    def text(self):
        if not self.log.closed:
            self.log.flush()
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def stop(self, timeout=120):
        # One SIGTERM, as systemd sends: a second one means "exit without waiting".
        if self.proc.poll() is None and not self.termed:
            self.proc.send_signal(signal.SIGTERM)
            self.termed = True
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.log.close()
        return rc


def run_daemon(args, env=None, timeout=60):
    return subprocess.run([DAEMON] + list(args), capture_output=True, text=True, timeout=timeout,
                          env=daemon_env(env))


def sanitizer_clean(text, what):
    check("ERROR: AddressSanitizer" not in text and "runtime error:" not in text and
          "ERROR: LeakSanitizer" not in text, "%s: no sanitizer report" % what)


def u32_array(n, rng):
    xs = [rng.randrange(0, 1 << 32) for _ in range(n)]
    return xs, struct.pack("<%dI" % n, *xs)


# ---- verify: the units -------------------------------------------------------------------------

def make_units(tmp):
    """The units as installed, with ExecStart= pointing at the binary under test."""
    unit_dir = os.path.join(tmp, "units")
    os.makedirs(unit_dir)
    with open(os.path.join(SRC, "systemd", "vkreduced.service.in")) as f:
        service = f.read().replace("@sbindir@", os.path.dirname(os.path.abspath(DAEMON)))
    with open(os.path.join(unit_dir, "vkreduced.service"), "w") as f:
        f.write(service)
    shutil.copy(os.path.join(SRC, "systemd", "vkreduced.socket"), unit_dir)
    return unit_dir, service


def test_verify(tmp):
    unit_dir, service = make_units(tmp)
    units = [os.path.join(unit_dir, u) for u in ("vkreduced.service", "vkreduced.socket")]
    r = subprocess.run(["systemd-analyze", "verify", "--man=no"] + units, capture_output=True, text=True,
                       timeout=120)
    ours = [l for l in (r.stdout + r.stderr).splitlines() if "vkreduced" in l]
    check(r.returncode == 0 and not ours, "systemd-analyze verify: rc %d, %r" % (r.returncode, ours))
    # What the issue asks of the units, spelled out.
    for line in ("Type=notify", "Restart=on-failure", "ProtectSystem=strict", "ProtectHome=yes",
                 "PrivateNetwork=yes", "RestrictAddressFamilies=AF_UNIX", "NoNewPrivileges=yes",
                 "CapabilityBoundingSet=\n", "StateDirectory=vkreduce", "RuntimeDirectory=vkreduce",
                 "RuntimeDirectoryPreserve=yes", "DeviceAllow=char-drm rw", "DeviceAllow=char-nvidia-frontend rw",
                 "LimitMEMLOCK=infinity", "LimitNOFILE=16384"):
        check(("\n" + line) in service if line.endswith("\n") else ("\n" + line + "\n") in service,
              "vkreduced.service has %r" % line.strip())
    check(re.search(r"\nWatchdogSec=\d+", service) is not None, "vkreduced.service has WatchdogSec=")
    check("\nPrivateDevices=yes" not in service, "vkreduced.service does not hide the GPU (PrivateDevices=yes)")
    with open(os.path.join(unit_dir, "vkreduced.socket")) as f:
        sock = f.read()
    for line in ("ListenStream=/run/vkreduce/vkreduce.sock", "SocketMode=0660", "SocketGroup=vkreduce"):
        check("\n" + line + "\n" in sock, "vkreduced.socket has %r" % line)
    with open(os.path.join(SRC, "systemd", "sysusers-vkreduce.conf")) as f:
        sysusers = f.read()
    check(re.search(r"^u\s+vkreduce\s", sysusers, re.M) is not None, "sysusers entry creates the vkreduce user")
    # The exposure score documented in docs/OPERATIONS.md; a change to the hardening that
    # makes it worse should be a decision, not an accident.
    r = subprocess.run(["systemd-analyze", "security", "--offline=yes", "--no-pager", units[0]],
                       capture_output=True, text=True, timeout=120)
    m = re.search(r"Overall exposure level for vkreduced.service: ([0-9.]+)", r.stdout + r.stderr)
    if check(m is not None, "systemd-analyze security gives a score: %r" % (r.stdout + r.stderr)[-300:]):
        print("systemd-analyze security: exposure %s" % m.group(1))
        check(float(m.group(1)) <= 1.0, "exposure %s <= 1.0" % m.group(1))


# ---- activation ----------------------------------------------------------------------------

def test_activation(tmp):
    path = os.path.join(tmp, "activated.sock")
    log_path = os.path.join(tmp, "activated.log")
    log = open(log_path, "w")
    # systemd-socket-activate passes only what -E names: the sanitizer and driver settings.
    passenv = [k for k in os.environ if k.startswith(("ASAN_", "UBSAN_", "LSAN_", "VKR_", "VK_", "MESA", "LP_"))]
    cmd = ["systemd-socket-activate", "-l", path]
    for k in passenv:
        cmd += ["-E", k]
    cmd += ["--", DAEMON, "--config", os.devnull, "--socket", os.path.join(tmp, "not-used.sock")]
    proc = subprocess.Popen(cmd, stdout=log, stderr=log, env=daemon_env())
    try:
        for _ in range(200):
            if os.path.exists(path):
                break
            time.sleep(0.05)
        check(os.path.exists(path), "systemd-socket-activate listens")
        # The daemon starts on this first connection and serves it through the inherited fd.
        xs, data = u32_array(1000, random.Random(7))
        r = subprocess.run([CLI, "sum", "--dtype", "u32", "--socket", path, "-"], input=data,
                           capture_output=True, timeout=120)
        check(r.returncode == 0 and r.stdout.decode().strip() == str(sum(xs) % (1 << 32)),
              "sum through the activated socket: rc %d %r %r" % (r.returncode, r.stdout, r.stderr[-300:]))
        c = Conn(path)
        check(c.call("ping", []) == (None, "pong"), "ping through the activated socket")
        c.close()
        check(not os.path.exists(os.path.join(tmp, "not-used.sock")), "--socket is not used when activated")
    finally:
        rc, text = stop_daemon(proc, log, log_path, timeout=60)
    sys.stderr.write(text[-4000:])
    check("(socket activation)" in text, "the daemon says it was socket-activated")
    check(rc == 0, "activated daemon exits 0 on SIGTERM (got %d)" % rc)
    sanitizer_clean(text, "activation")


# ---- notify --------------------------------------------------------------------------------

class Manager:
    """The service manager's end of NOTIFY_SOCKET."""

    def __init__(self, tmp):
        self.path = os.path.join(tmp, "notify")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.msgs = []  # (time, {key: value})

    def poll(self, timeout):
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(4096).decode()
        except socket.timeout:
            return None
        fields = dict(l.split("=", 1) for l in data.split("\n") if "=" in l)
        self.msgs.append((time.monotonic(), fields))
        return fields

    def wait_for(self, key, value=None, timeout=60, proc=None):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            f = self.poll(0.1)
            if f and key in f and (value is None or f[key] == value):
                return f
            if proc is not None and proc.poll() is not None and f is None:
                return None
        return None

    def drain(self, seconds=0.05):
        """Reads what arrives for the given time (the watchdog never stops talking)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.poll(max(0.001, end - time.monotonic()))

    def since(self, t):
        return [f for (ts, f) in self.msgs if ts >= t]


def test_notify(tmp):
    mgr = Manager(tmp)
    # A device that does not exist: the daemon fails and never says READY=1.
    r = run_daemon(["--config", os.devnull, "--socket", os.path.join(tmp, "bad.sock"), "--device", "no-such-gpu-xyz"],
                   env={"NOTIFY_SOCKET": mgr.path})
    mgr.drain(0.2)
    check(r.returncode != 0, "no device: the daemon fails (rc %d)" % r.returncode)
    check(not any("READY" in f for (_, f) in mgr.msgs), "no device: no READY=1 (%r)" % mgr.msgs)
    check(any(f.get("STATUS", "").startswith("no GPU") for (_, f) in mgr.msgs), "no device: STATUS says why")
    mgr.msgs.clear()

    env = {"NOTIFY_SOCKET": mgr.path, "WATCHDOG_USEC": "400000"}
    d = Daemon(tmp, env=env, wait=False)
    try:
        ready = mgr.wait_for("READY", "1", proc=d.proc)
        check(ready is not None, "READY=1 arrives")
        # READY=1 only once the device is up: its log line is already written, and the
        # socket answers hello with the device at once.
        check("device: " in d.text(), "READY=1 comes after the device is initialized")
        c = Conn(d.path)
        err, hello = c.call("hello", ["test_systemd"])
        check(err is None and hello["device"]["name"], "hello right after READY=1 names the device")
        t_ready = time.monotonic()
        # Idle: the watchdog is fed (several pings in a second at WATCHDOG_USEC=0.4 s).
        time.sleep(1.2)
        mgr.drain(0.05)
        idle_pings = sum(1 for f in mgr.since(t_ready) if f.get("WATCHDOG") == "1")
        check(idle_pings >= 3, "WATCHDOG=1 while idle (%d pings in 1.2 s)" % idle_pings)
        # Busy: fed from the completion path while batches complete.
        t_busy = time.monotonic()
        rng = random.Random(3)
        xs, data = u32_array(1 << 16, rng)
        for _ in range(3):
            ids = [c.send("reduce", ["sum", "u32", data]) for _ in range(20)]
            for i in ids:
                err, res = c.wait(i)
                check(err is None and res["value"] == sum(xs) % (1 << 32), "reduce while watched")
            mgr.drain(0.3)
        busy_pings = sum(1 for f in mgr.since(t_busy) if f.get("WATCHDOG") == "1")
        check(busy_pings >= 1, "WATCHDOG=1 while busy (%d)" % busy_pings)
        # STATUS= with clients, queue depth and batches per second, at most once a second:
        # a second client keeps the numbers changing while this thread reads the datagrams
        # as they come (so that their arrival times are the daemon's sending times).
        import threading
        stop = threading.Event()

        def load():
            w = Conn(d.path)
            while not stop.is_set():
                ids = [w.send("reduce", ["sum", "u32", data]) for _ in range(4)]
                for i in ids:
                    w.wait(i)
            w.close()
        worker = threading.Thread(target=load)
        t_load = time.monotonic()
        worker.start()
        mgr.drain(3.5)
        stop.set()
        worker.join()
        statuses = [(ts, f["STATUS"]) for (ts, f) in mgr.msgs if ts >= t_load and "clients" in f.get("STATUS", "")]
        check(len(statuses) >= 2, "STATUS= with the client count arrives, refreshed (%r)" % statuses)
        check(all(re.match(r"\d+ clients, \d+ requests queued or running, [0-9.]+ batches/s$", s) for _, s in statuses),
              "STATUS= format: %r" % statuses[-1:])
        check(any(s.startswith("2 clients") for _, s in statuses), "STATUS= counts the clients: %r" % statuses)
        gaps = [b[0] - a[0] for a, b in zip(statuses, statuses[1:])]
        check(all(g >= 0.9 for g in gaps), "STATUS= at most once a second (gaps %r)" % gaps)
        # SIGHUP: RELOADING=1, then READY=1 again; the connection stays.
        t_hup = time.monotonic()
        d.proc.send_signal(signal.SIGHUP)
        check(mgr.wait_for("RELOADING", "1", timeout=30) is not None, "SIGHUP: RELOADING=1")
        check(mgr.wait_for("READY", "1", timeout=30) is not None, "SIGHUP: READY=1 after the reload")
        check(c.call("ping", []) == (None, "pong"), "the connection survives the reload")
        c.close()
        d.proc.send_signal(signal.SIGTERM)
        d.termed = True
        check(mgr.wait_for("STOPPING", "1", timeout=30) is not None, "SIGTERM: STOPPING=1")
        del t_hup
    finally:
        rc = d.stop()
    check(rc == 0, "notify: exit 0 (got %d)" % rc)
    sanitizer_clean(d.text(), "notify")
    # WATCHDOG_PID naming another process turns the watchdog off.
    mgr.msgs.clear()
    d = Daemon(tmp, env={"NOTIFY_SOCKET": mgr.path, "WATCHDOG_USEC": "200000", "WATCHDOG_PID": "1"},
               name="other", wait=False)
    try:
        check(mgr.wait_for("READY", "1", proc=d.proc) is not None, "READY=1 (second daemon)")
        time.sleep(0.6)
        mgr.drain(0.05)
        check(not any("WATCHDOG" in f for (_, f) in mgr.msgs), "no WATCHDOG=1 for another WATCHDOG_PID")
    finally:
        check(d.stop() == 0, "second daemon exits 0")


# ---- drain ---------------------------------------------------------------------------------

def make_memfd(data):
    import fcntl
    fd = os.memfd_create("vkr-test", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, len(data))
    os.pwrite(fd, data, 0)
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK)
    return fd


def drain_round(tmp, name, drain_timeout, n_elems, expect_shutdown):
    """SIGTERM while 100 requests from 4 connections are queued or running.

    The requests reduce a shared-memory region, so they are a few bytes on the socket but
    real work on the GPU: the daemon reads all of them at once, and one batch of one job at
    a time leaves most of them queued when the signal comes, whatever the build's speed."""
    import array
    args = ["--max-batch-jobs", "1", "--max-batches-in-flight", "1", "--drain-timeout", drain_timeout]
    d = Daemon(tmp, args=args, name=name)
    rng = random.Random(11)
    data = rng.randbytes(4 * n_elems)
    words = array.array("I", data)
    # Four different lengths, so that a mixed-up answer would show.
    counts = [n_elems - k * 4096 for k in range(4)]
    sums = {n: sum(words[:n]) % (1 << 32) for n in counts}
    memfd = make_memfd(data)
    conns = [Conn(d.path, timeout=120) for _ in range(4)]
    want = {}
    for ci, c in enumerate(conns):
        msgid, packed = c.packed("register_shm", [])
        socket.send_fds(c.sock, [packed], [memfd])
        err, res = c.wait(msgid)
        check(err is None, "%s: register_shm: %r" % (name, err))
        region = res["region"]
        buf = []
        for _ in range(25):
            n = counts[rng.randrange(len(counts))]
            msgid, packed = c.packed("reduce", ["sum", "u32", {"region": region, "offset": 0, "count": n}])
            want[(ci, msgid)] = sums[n]
            buf.append(packed)
        c.pending = b"".join(buf)
    os.close(memfd)
    for c in conns:
        c.sock.sendall(c.pending)
    # The daemon has read them all once it answers a request sent after them.
    for c in conns:
        check(c.call("ping", []) == (None, "pong"), "%s: ping after the requests" % name)
    stats_conn = Conn(d.path)
    err, st = stats_conn.call("stats", [])
    stats_conn.close()
    d.proc.send_signal(signal.SIGTERM)
    d.termed = True
    print("%s: at SIGTERM %d reduce requests read, %d batches submitted" % (
        name, st["requests"]["reduce"], st["batches"]), flush=True)
    check(st["requests"]["reduce"] == 100, "%s: all 100 requests accepted before SIGTERM" % name)
    check(st["batches"] < 100, "%s: work was still queued at SIGTERM (%d batches done)" % (name, st["batches"]))
    # A request sent after SIGTERM, while the drain runs, is answered "shutting down". The
    # signal is handled asynchronously: wait until the listener is gone (the first thing the
    # daemon does on SIGTERM), so that the request surely comes after it.
    for _ in range(5000):
        if not os.path.exists(d.path):
            break
        time.sleep(0.001)
    check(not os.path.exists(d.path), "%s: the daemon removed its socket on SIGTERM" % name)
    late = conns[0].send("reduce", ["sum", "u32", struct.pack("<4I", 1, 2, 3, 4)])
    ok = shut = wrong = 0
    lost = []
    for ci, c in enumerate(conns):
        for (cj, msgid), value in want.items():
            if cj != ci:
                continue
            try:
                err, res = c.wait(msgid)
            except (ConnectionError, OSError) as e:
                lost.append((ci, msgid, str(e)))
                continue
            if err is None and res["value"] == value:
                ok += 1
            elif err is not None and err[0] == E_SHUTDOWN:
                shut += 1
            else:
                wrong += 1
    try:
        err, res = conns[0].wait(late)
        check(err is not None and err[0] == E_SHUTDOWN, "%s: request after SIGTERM: 'shutting down' (%r)" % (name, err))
    except (ConnectionError, OSError) as e:
        check(False, "%s: request after SIGTERM got no answer: %s" % (name, e))
    print("%s: %d correct, %d 'shutting down', %d wrong, %d lost" % (name, ok, shut, wrong, len(lost)), flush=True)
    check(ok + shut == 100 and wrong == 0 and not lost, "%s: every request answered (lost %r)" % (name, lost[:3]))
    if expect_shutdown:
        check(shut > 0, "%s: the drain timeout answered queued work 'shutting down'" % name)
    else:
        check(shut == 0, "%s: everything accepted was finished" % name)
    # New connections are refused once the drain started.
    try:
        Conn(d.path, timeout=5).close()
        check(False, "%s: no new connections during the drain" % name)
    except OSError:
        pass
    for c in conns:
        c.close()
    rc = d.stop()
    text = d.text()
    check(rc == 0, "%s: exit 0 after the drain (got %d)" % (name, rc))
    check("drained" in text, "%s: the log says drained" % name)
    sanitizer_clean(text, name)
    if failures:
        sys.stderr.write(text[-4000:])


def test_drain(tmp):
    # A drain long enough for all of it: every request gets its real answer.
    drain_round(tmp, "drain-all", "60", 1 << 22, expect_shutdown=False)
    # A drain timeout of 0: what is still queued at once is answered "shutting down" (a
    # non-zero timeout would race with lavapipe finishing the queue first).
    drain_round(tmp, "drain-timeout", "0", 1 << 22, expect_shutdown=True)


# ---- config --------------------------------------------------------------------------------

def limits_of(path):
    c = Conn(path)
    err, hello = c.call("hello", ["test_systemd"])
    c.close()
    return hello["limits"]


def reload_with(d, conf, text, logged, timeout=5.0):
    """Writes the configuration file, sends SIGHUP, and waits (up to timeout) for the log line."""
    with open(conf, "w") as f:
        f.write(text)
    d.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + timeout
    while logged not in d.text() and time.monotonic() < deadline:
        time.sleep(0.05)


def test_config(tmp):
    conf = os.path.join(tmp, "vkreduced.conf")
    with open(conf, "w") as f:
        f.write("# a comment\n\n  max-connections = 7  \nmax_requests_per_conn=3\n"
                "max-inline-bytes = 1M\ndrain-timeout = 2.5s\nlog-level = \"debug\"\n"
                "max-batch-jobs = 64\n")
    # Good file, with a flag overriding one of its settings.
    d = Daemon(tmp, args=["--max-requests-per-conn", "5"], config=conf, name="conf")
    try:
        lim = limits_of(d.path)
        check(lim["max_connections"] == 7, "file sets max-connections (%r)" % lim["max_connections"])
        check(lim["max_inline_bytes"] == 1 << 20, "file sets max-inline-bytes with a suffix")
        check(lim["max_requests_per_conn"] == 5, "the flag overrides the file (%r)" % lim["max_requests_per_conn"])
        check(lim["max_batch_jobs"] == 64, "file sets max-batch-jobs")
        check("debug:" in d.text(), "file sets log-level debug")
        # SIGHUP reload while a client stays connected: reloadable limits change at once;
        # the flag still wins; a restart-only limit keeps its value and the log says so.
        c = Conn(d.path)
        check(c.call("ping", []) == (None, "pong"), "client connected before the reload")
        reload_with(d, conf, "max-connections = 5\nmax-requests-per-conn = 9\nmax-batch-jobs = 128\nlog-level = info\n",
                    "reloaded the configuration")
        check(c.call("ping", []) == (None, "pong"), "the client survives the reload")
        err, hello = c.call("hello", ["after-reload"])
        lim = hello["limits"]
        check(lim["max_connections"] == 5, "reload applies max-connections (%r)" % lim["max_connections"])
        check(lim["max_requests_per_conn"] == 5, "the flag still overrides after the reload")
        check(lim["max_batch_jobs"] == 64, "restart-only max-batch-jobs keeps its value")
        check("max-batch-jobs changed" in d.text() and "next start" in d.text(),
              "the log says max-batch-jobs needs a restart")
        # A bad file on reload keeps the running configuration and the daemon.
        reload_with(d, conf, "max-connections = 2\nmax-connections = many\n", "keeping the running configuration")
        check("vkreduced.conf:2: max-connections" in d.text(), "a bad reload names the line")
        err, hello = c.call("hello", ["after-bad-reload"])
        check(hello["limits"]["max_connections"] == 5, "a bad reload changes nothing")
        c.close()
    finally:
        rc = d.stop()
    check(rc == 0, "config daemon exits 0")
    sanitizer_clean(d.text(), "config")

    # Errors: each names the file, the line and what is wrong; exit status 2.
    cases = [
        ("bogus = 1\n", ":1: unknown key 'bogus'"),
        ("\n# ok\nmax-connections = lots\n", ":3: max-connections: expected a number from 1 to"),
        ("max-connections = 0\n", ":1: max-connections: expected a number from 1 to"),
        ("log-level = loud\n", ":1: log-level: expected error, warn, info or debug"),
        ("just some words\n", ":1: expected 'key = value'"),
        ("drain-timeout = soon\n", ":1: drain-timeout: expected seconds"),
    ]
    for i, (text, want) in enumerate(cases):
        bad = os.path.join(tmp, "bad%d.conf" % i)
        with open(bad, "w") as f:
            f.write(text)
        r = run_daemon(["--config", bad, "--socket", os.path.join(tmp, "never.sock")])
        check(r.returncode == 2 and (bad + want) in r.stderr, "bad config %r: rc %d, %r" % (text, r.returncode, r.stderr))
    r = run_daemon(["--config", os.path.join(tmp, "missing.conf"), "--check-config"])
    check(r.returncode == 2 and "missing.conf: No such file" in r.stderr, "a missing --config file is an error")
    r = run_daemon(["--max-connections", "x", "--config", os.devnull])
    check(r.returncode == 2 and "--max-connections: expected a number" in r.stderr, "a bad flag value is named")

    # The shipped example: every setting of --help is in it, and with every line uncommented
    # it is a valid configuration.
    help_text = run_daemon(["--help"]).stdout
    keys = re.findall(r"^  --([a-z0-9-]+)", help_text, re.M)
    with open(os.path.join(SRC, "systemd", "vkreduced.conf.example")) as f:
        example = f.read()
    check(len(keys) > 20, "--help lists the settings (%d)" % len(keys))
    for k in keys:
        check(re.search(r"^#%s =" % re.escape(k), example, re.M) is not None,
              "vkreduced.conf.example documents %s (add it there with its default)" % k)
    uncommented = re.sub(r"^#([a-z0-9-]+ =)", r"\1", example, flags=re.M)
    ex = os.path.join(tmp, "example.conf")
    with open(ex, "w") as f:
        f.write(uncommented)
    r = run_daemon(["--config", ex, "--check-config"])
    check(r.returncode == 0, "the example configuration is valid: %r" % r.stderr[-300:])


# ---- journal -------------------------------------------------------------------------------

def test_journal(tmp):
    log_path = os.path.join(tmp, "journal.log")
    with open(log_path, "w") as log:
        st = os.fstat(log.fileno())
        stream = "%d:%d" % (st.st_dev, st.st_ino)
    # stderr is "the journal": <N> prefixes, debug lines as <7>.
    d = Daemon(tmp, args=["--log-level", "debug"], env={"JOURNAL_STREAM": stream}, name="journal")
    c = Conn(d.path)  # a connection logs at debug level
    c.call("ping", [])
    c.close()
    rc = d.stop()
    text = d.text()
    lines = [l for l in text.splitlines() if l.startswith("<")]
    check(rc == 0, "journal daemon exits 0")
    check(any(l.startswith("<6>") for l in lines) and any(l.startswith("<7>") for l in lines),
          "journal: <6> and <7> prefixes: %r" % text[:300])
    check(not any(l.startswith("<6>vkreduced") for l in lines), "journal: no program name after the prefix")
    # (The helper reopens journal.log for writing, which keeps its inode, so the value
    # above describes the daemon's stderr.) A value naming another file means plain lines.
    d = Daemon(tmp, env={"JOURNAL_STREAM": "1:1"}, name="plain")
    d.stop()
    text = d.text()
    check("vkreduced: info: " in text and "<6>" not in text, "plain stderr: no prefixes: %r" % text[:200])
    d = Daemon(tmp, args=["--log-level", "warn"], name="quiet")
    d.stop()
    check("info:" not in d.text(), "--log-level warn hides info lines")


# ---- cache ---------------------------------------------------------------------------------

def test_cache(tmp):
    state = os.path.join(tmp, "state")
    os.makedirs(state)
    cache = os.path.join(state, "pipelines.cache")
    # $STATE_DIRECTORY (what StateDirectory= sets) is where the cache goes.
    d = Daemon(tmp, env={"STATE_DIRECTORY": state}, name="cache1")
    check(d.stop() == 0, "cache: first run exits 0")
    check(os.path.exists(cache) and "saved the pipeline cache" in d.text(), "cache: saved after startup: %r" % d.text()[-300:])
    d = Daemon(tmp, env={"STATE_DIRECTORY": state}, name="cache2")
    check(d.stop() == 0, "cache: second run exits 0")
    check("pipelines built with the cache" in d.text(), "cache: loaded at the next start")
    # A corrupt file is ignored with a warning, the daemon serves, and a good one replaces it.
    with open(cache, "wb") as f:
        f.write(b"\x00garbage" * 100)
    d = Daemon(tmp, args=["--state-dir", state], name="cache3")
    c = Conn(d.path)
    check(c.call("ping", []) == (None, "pong"), "cache: serves with a corrupt cache file")
    c.close()
    check(d.stop() == 0, "cache: corrupt run exits 0")
    check("saved the pipeline cache" in d.text(), "cache: a corrupt file is replaced: %r" % d.text()[-400:])
    sanitizer_clean(d.text(), "cache")


# ---- prometheus ----------------------------------------------------------------------------

PROM_LINE = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*",?)*\})? '
                       r'(-?[0-9.]+(e[+-]?[0-9]+)?|\+Inf|NaN)$')


def test_prometheus(tmp):
    d = Daemon(tmp, name="prom")
    try:
        c = Conn(d.path)
        xs, data = u32_array(1000, random.Random(5))
        for _ in range(3):
            err, res = c.call("reduce", ["sum", "u32", data])
        c.call("nope", [])
        c.close()
        r = subprocess.run([CLI, "stats", "--prometheus", "--socket", d.path], capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, "stats --prometheus: rc %d %r" % (r.returncode, r.stderr))
        out = r.stdout
        typed = set()
        series = set()
        for line in out.splitlines():
            if line.startswith("# TYPE "):
                name, typ = line.split()[2:4]
                check(name not in typed, "one TYPE line per metric (%s)" % name)
                check(typ in ("counter", "gauge", "histogram", "untyped"), "TYPE %s" % typ)
                typed.add(name)
                continue
            if line.startswith("# HELP "):
                continue
            check(PROM_LINE.match(line) is not None, "Prometheus sample line: %r" % line)
            key = line.rsplit(" ", 1)[0]
            check(key not in series, "no duplicate series %r" % key)
            series.add(key)
        check('vkreduce_requests_total{method="reduce"} 3' in out, "requests by method")
        check(re.search(r'^vkreduce_errors_total\{error="[A-Z_]+"\} 1$', out, re.M) is not None, "errors by name")
        check(re.search(r'^vkreduce_limit\{name="max_connections"\} 1024$', out, re.M) is not None, "limits as gauges")
        check(re.search(r"^vkreduce_connections 1$", out, re.M) is not None, "connections gauge")
        check(re.search(r'^vkreduce_batch_jobs_bucket\{le="\+Inf"\} \d+$', out, re.M) is not None, "batch histogram")
        check(re.search(r"^vkreduce_gpu_seconds_total [0-9.e+-]+$", out, re.M) is not None, "durations in seconds")
        r = subprocess.run([CLI, "stats", "--socket", d.path], capture_output=True, text=True, timeout=60)
        rows = [l.split() for l in r.stdout.splitlines()]
        check(r.returncode == 0 and rows and all(len(x) == 2 for x in rows), "plain stats: a two-column table")
        cols = {l.index(l.split()[1], len(l.split()[0])) for l in r.stdout.splitlines()}
        check(len(cols) == 1, "plain stats: values in one column (%r)" % cols)
    finally:
        check(d.stop() == 0, "prometheus daemon exits 0")


SECTIONS = {
    "verify": test_verify,
    "activation": test_activation,
    "notify": test_notify,
    "drain": test_drain,
    "config": test_config,
    "journal": test_journal,
    "cache": test_cache,
    "prometheus": test_prometheus,
}


def main():
    global DAEMON, CLI, SRC
    section, DAEMON, CLI, SRC = sys.argv[1:5]
    names = list(SECTIONS) if section == "all" else [section]
    for name in names:
        tmp = tempfile.mkdtemp(prefix="vkr-ops-%s-" % name)
        try:
            print("== %s" % name, flush=True)
            SECTIONS[name](tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print("%d checks, %d failures" % (checks, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
