"""`make run` (scripts/run.sh) creates the dashboard's first owner on the first run and
prints how to sign in, once."""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from conftest import ROOT, free_port, request
from dashboard_helpers import sign_in


class Fake:
    def __init__(self, port):
        self.control_port = port


def wait_healthy(port, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if request(port, "GET", "/healthz", timeout=1).status == 200:
                return
        except OSError:
            time.sleep(0.05)


def run_once(data, control, runtime):
    env = dict(os.environ, SUGGESTD_DATA_DIR=data, SUGGESTD_CONTROL_LISTEN=f"127.0.0.1:{control}",
               SUGGESTD_RUNTIME_LISTEN=f"127.0.0.1:{runtime}")
    p = subprocess.Popen([os.path.join(ROOT, "scripts", "run.sh")], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    wait_healthy(control)
    os.killpg(p.pid, signal.SIGTERM)
    out = p.communicate(timeout=10)[0].decode()
    return out


@pytest.mark.sqlite_only("`make run` is the embedded default on SQLite (docs/DESIGN.md §6)")
def test_first_run_creates_an_owner_and_prints_how_to_sign_in():
    data = tempfile.mkdtemp(prefix="suggestd-run-")
    try:
        control, runtime = free_port(), free_port()
        out = run_once(data, control, runtime)
        assert f"http://127.0.0.1:{control}/dashboard/" in out, out
        assert "owner@localhost" in out
        password = re.search(r"password: (\S+)", out).group(1)
        assert len(password) >= 12
        # Serve again on the same data dir: the owner can sign in, and nothing is re-printed.
        control2 = free_port()
        env = dict(os.environ)
        p = subprocess.Popen([os.path.join(ROOT, "build", "suggestd"), "serve", "--data-dir", data,
                              "--control-listen", f"127.0.0.1:{control2}", "--runtime-listen",
                              f"127.0.0.1:{free_port()}"], stderr=subprocess.DEVNULL, env=env)
        try:
            wait_healthy(control2)
            r = sign_in(Fake(control2), "owner@localhost", password)
            assert r.status == 200 and r.json()["member"]["role"] == "owner", r
        finally:
            p.terminate()
            p.wait(10)
        out2 = run_once(data, free_port(), free_port())
        assert password not in out2 and "owner@localhost" not in out2
    finally:
        shutil.rmtree(data, ignore_errors=True)
