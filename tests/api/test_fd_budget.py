"""The descriptor budget (issue 11): under `ulimit -n 1024`, 1,100 idle runtime
connections must not starve the control plane, SQLite or the edge store."""
import json
import resource
import shutil
import socket
import tempfile
import time

import pytest

from conftest import NO_LIMITS, Server, raise_nofile, wait_until


def limit_nofile_1024():
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))


@pytest.fixture
def small_server():
    d = tempfile.mkdtemp(prefix="suggestd-test-")
    s = Server(d, mode="serve", extra=NO_LIMITS + ["--control-per-ip-connections", "0"])
    s.preexec = limit_nofile_1024
    s.start()
    yield s
    s.stop()
    shutil.rmtree(d, ignore_errors=True)


def test_idle_runtime_connections_do_not_starve_the_control_plane(small_server):
    if raise_nofile(1400) < 1400:
        pytest.skip("the test itself needs 1,400 file descriptors")
    s = small_server
    # serve logs its budget once both listeners are up, maybe just after they answer.
    budget = wait_until(lambda: [json.loads(ln) for ln in s.read_log().splitlines()
                                 if '"descriptor budget"' in ln])[0]
    assert budget["nofile"] == 1024
    assert budget["runtimeConnections"] + 4 * budget["controlConnections"] < 1024
    idle = []
    try:
        for _ in range(1100):
            idle.append(socket.create_connection(("127.0.0.1", s.runtime_port), timeout=5))
        time.sleep(0.5)  # let the runtime accept (and refuse) them all
        # The control plane, SQLite and the edge store still work: create, fill, publish.
        t = s.tenant()
        lst = t.create_list("Cities", visibility="public")
        t.add_items(lst["id"], [{"value": "Paris"}, {"value": "Parma"}])
        v = t.publish(lst["id"])
        assert v["state"] == "active", v
        pk = t.publishable_key(lst["id"])["publishableKey"]
        assert s.control("GET", "/healthz").status == 200
    finally:
        for c in idle:
            c.close()
    # Once the idle connections are gone, the runtime answers new ones.
    t0 = time.time()
    while True:
        try:
            r = s.runtime("GET", "/v1/query", params={"key": pk, "q": "par"})
            if r.status == 200 and len(r.json()["items"]) == 2:
                break
        except OSError:
            pass
        assert time.time() - t0 < 5, "the runtime does not answer after the idle connections closed"
        time.sleep(0.1)
    log = s.read_log()
    assert "Too many open files" not in log and "unable to open" not in log
