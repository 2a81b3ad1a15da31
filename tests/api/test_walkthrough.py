"""The README walk-through runs as written against `make run` (issue 16), and `make run`
stops with a clear message when a port is taken."""
import os
import re
import signal
import socket
import subprocess
import time

from conftest import ROOT, free_port, request


def walkthrough():
    text = open(os.path.join(ROOT, "README.md")).read()
    m = re.search(r"<!-- walkthrough -->\n```sh\n(.*?)```", text, re.S)
    assert m, "README.md has no <!-- walkthrough --> block"
    return m.group(1)


def wait_healthy(port, proc, log, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"make run exited: {open(log).read()[-3000:]}")
        try:
            if request(port, "GET", "/healthz", timeout=1).status == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"make run never served: {open(log).read()[-3000:]}")


def test_readme_walkthrough_runs_against_make_run(tmp_path):
    cp, rt = free_port(), free_port()
    data = tmp_path / "data"
    env = dict(os.environ, SUGGESTD_DATA_DIR=str(data),
               SUGGESTD_CONTROL_LISTEN=f"127.0.0.1:{cp}",
               SUGGESTD_RUNTIME_LISTEN=f"127.0.0.1:{rt}")
    log = tmp_path / "make-run.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(["make", "--no-print-directory", "run"], cwd=ROOT, env=env,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_healthy(cp, proc, log)
        wait_healthy(rt, proc, log)
        banner = open(log).read()
        assert "SUGGESTD_CONTROL_LISTEN=" in banner and "SUGGESTD_RUNTIME_LISTEN=" in banner
        # The block itself, run by bash with errexit/nounset: an unset variable or a failing
        # curl (-f) stops it.
        run_env = dict(os.environ, CP=f"http://127.0.0.1:{cp}", RT=f"http://127.0.0.1:{rt}",
                       DATA=str(data))
        r = subprocess.run(["bash", "-euo", "pipefail", "-c", walkthrough()], cwd=ROOT,
                           env=run_env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, (r.stdout, r.stderr)
        last_json = [l for l in r.stdout.splitlines() if l.startswith('{"items"')]
        assert last_json and '"displayValue":"Paris"' in last_json[-1], r.stdout
        assert "examples/browser/index.html?runtime=" in r.stdout
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)


def test_make_run_says_when_a_port_is_busy(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        env = dict(os.environ, SUGGESTD_DATA_DIR=str(tmp_path / "data"),
                   SUGGESTD_CONTROL_LISTEN=f"127.0.0.1:{port}",
                   SUGGESTD_RUNTIME_LISTEN=f"127.0.0.1:{free_port()}")
        r = subprocess.run(["bash", "scripts/run.sh"], cwd=ROOT, env=env, capture_output=True,
                           text=True, timeout=30)
    assert r.returncode != 0
    assert f"127.0.0.1:{port} (the control plane) is already in use" in r.stderr, r.stderr
    assert "SUGGESTD_CONTROL_LISTEN=" in r.stderr and "make run" in r.stderr
    assert not (tmp_path / "data").exists(), "nothing is created before the ports are checked"
