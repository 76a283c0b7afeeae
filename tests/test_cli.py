#!/usr/bin/python3
"""Tests of the command-line tool `vkreduce` against a real vkreduced on a temporary socket.

The tool's own work is parsing: options, and numbers from --text input and --value. Each
check runs the built tool on a small input and compares its exit status, stdout and stderr
with what the help promises: decimal numbers only (so "010" is ten, not octal eight), no
silent truncation at a NUL byte, no silent infinity for a float out of range, and no option
that is accepted and then ignored.

Usage: test_cli.py PATH/TO/vkreduced PATH/TO/vkreduce
Exit status 0 when every check passes.
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

from daemon_proc import stop_daemon, wait_for_socket

failures = []
checks = 0
DAEMON = CLI = SOCKET = TMP = None


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)
    return cond


def cli(*args, stdin=b""):
    """Runs the tool on the test daemon's socket; returns (exit status, stdout, stderr)."""
    r = subprocess.run([CLI, "--socket", SOCKET] + list(args), input=stdin, capture_output=True,
                       timeout=120)
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def expect_output(args, stdin, want, what):
    rc, out, err = cli(*args, stdin=stdin)
    check(rc == 0 and out.split() == want,
          "%s: want rc 0 and %r, got rc %d, %r, stderr %r" % (what, want, rc, out, err[-300:]))


def expect_error(args, stdin, status, needles, what):
    """The tool fails with status and says every string of needles on stderr, printing
    nothing on stdout (a wrong result next to an error message is still a wrong result)."""
    rc, out, err = cli(*args, stdin=stdin)
    check(rc == status and out == "" and all(n in err for n in needles),
          "%s: want rc %d and %r on stderr, got rc %d, stdout %r, stderr %r" % (
              what, status, needles, rc, out[:200], err[-300:]))


def write(name, data):
    path = os.path.join(TMP, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


# ---- the paths that worked before the review's fixes ----------------------------------------

def test_correct_paths():
    rc, out, err = cli("--help")
    check(rc == 0 and out.startswith("usage:") and "--shm-threshold" in out and err == "",
          "--help exits 0 and prints the usage on stdout: rc %d, %r" % (rc, err[-200:]))
    # A text file with a comment, a blank line, spaces and a CRLF line end.
    path = write("small.txt", b"1\n2\n# a comment\n\n  3 \n10\r\n")
    expect_output(["sum", "--text", "-t", "i32", path], b"", ["16"], "sum of a small text file")
    expect_output(["max", "--text", "--dtype", "f64", path], b"", ["10"], "max of a text file")
    seq = b"1\n2\n3\n4\n5\n"
    expect_output(["scan", "--text", "-t", "i32"], seq, ["1", "3", "6", "10", "15"],
                  "inclusive scan")
    expect_output(["scan", "--text", "-t", "i32", "--exclusive"], seq, ["0", "1", "3", "6", "10"],
                  "exclusive scan")
    expect_output(["scan", "--text", "-t", "i64", "--op", "max"], b"3\n1\n4\n1\n5\n",
                  ["3", "3", "4", "4", "5"], "scan --op max")
    expect_output(["count", "--text", "-t", "i32", "--cmp", "gt", "--value", "2"], seq, ["3"],
                  "count --cmp gt --value 2")
    expect_output(["count", "--text", "-t", "f32", "--cmp", "le", "--value", "-1.5"],
                  b"-2\n-1.5\n-1\n0.5\n", ["2"], "count of floats with a negative --value")
    xs = list(range(1000))
    expect_output(["sum", "-t", "u32", "-"], struct.pack("<1000I", *xs), [str(sum(xs))],
                  "sum of binary u32 from stdin")
    # Shared memory for inputs of one byte or more: the same answer by the other path.
    path = write("ints.bin", struct.pack("<1000I", *xs))
    expect_output(["sum", "-t", "u32", "--shm-threshold", "1", path], b"", [str(sum(xs))],
                  "sum through shared memory (--shm-threshold 1)")
    expect_output(["sum", "--text", "-t", "i64"], b"-9223372036854775808\n1\n",
                  ["-9223372036854775807"], "the smallest i64 parses")
    expect_output(["sum", "--text", "-t", "u64"], b"18446744073709551615\n",
                  ["18446744073709551615"], "the largest u64 parses")
    rc, out, err = cli("ping")
    check(rc == 0 and out.startswith("pong"), "ping: rc %d %r %r" % (rc, out, err[-200:]))


# ---- A: numbers are decimal -----------------------------------------------------------------

def test_decimal_only():
    expect_output(["sum", "--text", "-t", "i32"], b"010\n", ["10"], "text 010 is ten, not octal 8")
    expect_output(["sum", "--text", "-t", "i32"], b"08\n09\n", ["17"], "text 08 and 09 parse")
    expect_output(["sum", "--text", "-t", "u64"], b"010\n", ["10"], "u64 text 010 is ten")
    expect_output(["sum", "--text", "-t", "i64"], b"-010\n", ["-10"], "i64 text -010 is minus ten")
    expect_output(["count", "--text", "-t", "i32", "--cmp", "eq", "--value", "010"],
                  b"8\n10\n10\n", ["2"], "--value 010 is ten")
    expect_output(["count", "--text", "-t", "u32", "--cmp", "eq", "--value", "08"],
                  b"8\n10\n", ["1"], "--value 08 parses")
    # The help promises decimal numbers: hex is refused, for integers and floats alike.
    for dtype in ("i32", "u32", "i64", "u64", "f32", "f64"):
        expect_error(["sum", "--text", "-t", dtype], b"1\n0x10\n", 1, ["stdin:2", "not a"],
                     "text 0x10 (%s) is refused" % dtype)
    expect_error(["count", "-t", "i32", "--cmp", "eq", "--value", "0x10"], b"", 2, ["--value"],
                 "--value 0x10 is refused")
    expect_error(["count", "-t", "f64", "--cmp", "eq", "--value", "0x1p4"], b"", 2, ["--value"],
                 "--value 0x1p4 (f64) is refused")
    # strtoull reads "-5" as 2^64 - 5, also behind whitespace that only it skips.
    expect_error(["sum", "--text", "-t", "u64"], b"-5\n", 1, ["stdin:1"], "u64 text -5 is refused")
    expect_error(["sum", "--text", "-t", "u64"], b"\v-5\n", 1, ["stdin:1"],
                 "u64 text \\v-5 is refused")
    expect_error(["sum", "--text", "-t", "i32"], b"2147483648\n", 1, ["stdin:1", "out of range"],
                 "i32 text 2^31 is out of range")


# ---- B: --text input with a NUL byte ---------------------------------------------------------

def test_nul_byte():
    expect_error(["sum", "--text", "-t", "i32"], b"1\n2\n\x003\n4\n", 1, ["NUL", "offset 4"],
                 "text with a NUL at offset 4 is refused")
    path = write("utf16.txt", "1\n2\n3\n".encode("utf-16-le"))
    expect_error(["sum", "--text", "-t", "i32", path], b"", 1, ["NUL", "offset 1"],
                 "UTF-16 text is refused")


# ---- C: floats out of range ------------------------------------------------------------------

def test_float_range():
    expect_error(["sum", "--text", "-t", "f32"], b"1\n1e39\n", 1, ["stdin:2", "out of range"],
                 "f32 text 1e39 is refused")
    expect_error(["sum", "--text", "-t", "f32"], b"-1e39\n", 1, ["stdin:1", "out of range"],
                 "f32 text -1e39 is refused")
    expect_error(["sum", "--text", "-t", "f64"], b"1\n2\n1e309\n", 1, ["stdin:3", "out of range"],
                 "f64 text 1e309 is refused")
    expect_error(["count", "-t", "f32", "--cmp", "lt", "--value", "1e39"], b"", 2,
                 ["--value", "out of range"], "--value 1e39 (f32) is refused")
    expect_error(["count", "-t", "f64", "--cmp", "lt", "--value", "-1e400"], b"", 2,
                 ["--value", "out of range"], "--value -1e400 (f64) is refused")
    # Underflow to a subnormal or zero is no error; infinity written out is a value.
    rc, out, err = cli("sum", "--text", "-t", "f32", stdin=b"1e-40\n1e-50\n")
    check(rc == 0 and float(out or "nan") < 1e-39,
          "f32 text 1e-40 (subnormal) and 1e-50 (zero) parse: rc %d %r %r" % (rc, out, err[-200:]))
    expect_output(["max", "--text", "-t", "f64"], b"1\ninf\n", ["inf"], "text inf is a value")
    expect_output(["count", "--text", "-t", "f32", "--cmp", "eq", "--value", "-inf"],
                  b"-inf\n1\n", ["1"], "--value -inf is a value")


# ---- D, E and the like: options accepted and then ignored, or misread ------------------------

def test_options():
    for cmd in ("sum", "prod", "min", "max"):
        expect_error([cmd, "--text", "-t", "i32", "--op", "max"], b"1\n2\n", 2,
                     ["--op only applies to scan"], "%s --op max is refused" % cmd)
    expect_error(["count", "--text", "-t", "i32", "--op", "sum", "--cmp", "gt", "--value", "0"],
                 b"1\n", 2, ["--op only applies to scan"], "count --op is refused")
    for bad in ("-1", "abc", "12abc", "", " 5", "0", "0x100000", "99999999999999999999"):
        expect_error(["sum", "-t", "u32", "--shm-threshold", bad], b"", 2, ["--shm-threshold"],
                     "--shm-threshold %r is refused" % bad)
    expect_output(["sum", "-t", "u32", "--shm-threshold", "010", "-"], struct.pack("<3I", 1, 2, 3),
                  ["6"], "--shm-threshold 010 parses")
    # The commands that take no array ignored the array options; now they say so.
    for cmd, opt in (("ping", ["--dtype", "f64"]), ("info", ["--text"]), ("stats", ["-x"]),
                     ("ping", ["--op", "max"]), ("stats", ["--shm-threshold", "4096"])):
        expect_error([cmd] + opt, b"", 2, [cmd, opt[0]], "%s %s is refused" % (cmd, opt[0]))


def main():
    global DAEMON, CLI, SOCKET, TMP
    DAEMON, CLI = sys.argv[1:3]
    TMP = tempfile.mkdtemp(prefix="vkr-cli-")
    SOCKET = os.path.join(TMP, "vkreduce.sock")
    state = os.path.join(TMP, "state")
    os.makedirs(state)
    env = dict(os.environ)
    # The daemon must not pick up a host's configuration or service environment.
    for k in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID",
              "JOURNAL_STREAM", "STATE_DIRECTORY", "VKREDUCE_SOCKET"):
        env.pop(k, None)
    log_path = os.path.join(TMP, "daemon.log")
    log = open(log_path, "w")
    proc = subprocess.Popen([DAEMON, "--socket", SOCKET, "--config", os.devnull,
                             "--state-dir", state], stderr=log, env=env)
    try:
        if not wait_for_socket(proc, SOCKET, 60):
            return 1
        test_correct_paths()
        test_decimal_only()
        test_nul_byte()
        test_float_range()
        test_options()
    finally:
        rc, text = stop_daemon(proc, log, log_path)
        sys.stderr.write(text[-4000:])
        check(rc == 0, "daemon exits 0 on SIGTERM (got %d)" % rc)
        shutil.rmtree(TMP, ignore_errors=True)
    print("%d checks, %d failures" % (checks, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
