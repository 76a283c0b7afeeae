"""Shared by the Python tests that run a real vkreduced: waiting for its socket, and stopping
it the way systemd does."""
import os
import signal
import subprocess
import time


def wait_for_socket(proc, path, seconds=60):
    """Waits until the daemon has created its socket at path. Returns False (and says so) when
    the daemon exits first or the time runs out: a cold start builds pipelines first."""
    deadline = time.monotonic() + seconds
    while not os.path.exists(path):
        if proc.poll() is not None:
            print("daemon exited early with", proc.returncode)
            return False
        if time.monotonic() > deadline:
            print("daemon made no socket in %d s" % seconds)
            return False
        time.sleep(0.05)
    return True


def stop_daemon(proc, log, log_path, timeout=120):
    """Sends SIGTERM (the drain), waits up to timeout seconds (then kills), closes the log
    file object and returns (exit status, the log's text)."""
    proc.send_signal(signal.SIGTERM)
    try:
        rc = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        rc = proc.wait()
    log.close()
    with open(log_path, errors="replace") as f:
        return rc, f.read()
