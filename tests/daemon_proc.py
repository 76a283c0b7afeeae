"""Shared by the Python tests that run a real vkreduced: stopping it the way systemd does."""
import signal
import subprocess


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
