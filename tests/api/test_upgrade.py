"""Upgrades without outage (docs/DESIGN.md §10, docs/UPGRADING.md).

tests/fixtures/upgrade-0.2.0 holds a data dir written by suggestd 0.2.0 (artifact format 5)
and 0.2.0's own answers to a set of queries (make_fixture.py says how it was made). The
current binary starts on a copy of it: the list answers exactly as 0.2.0 did from the first
request on, never 503, while the background recompile makes a new version from the active
version's snapshot in the current format; afterwards the answers are still 0.2.0's. The
recompile waits while a live runtime announces that it does not read the current format,
and goes ahead once that runtime's record expires.
"""
import json
import os
import shutil
import struct
import subprocess
import tempfile
import time

import pytest

from conftest import BINARY, TEST_DATABASE, TEST_EDGE, NO_LIMITS, Server, wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "fixtures", "upgrade-0.2.0")
CURRENT_FORMAT = 6

# The fixture is an SQLite store with an edge directory: what a 0.2.0 `serve` leaves.
pytestmark = pytest.mark.skipif(bool(TEST_DATABASE or TEST_EDGE),
                                reason="the 0.2.0 fixture is an SQLite store and edge directory")

with open(os.path.join(FIXTURE, "expected.json")) as f:
    EXPECTED = json.load(f)


def same_answer(body):
    """The answer without its requestId, which is derived from the contentHash (DESIGN
    §4) and so changes with every new version, as after any publish."""
    return {k: v for k, v in body.items() if k != "requestId"}


@pytest.fixture
def upgraded():
    """Starts the current binary on a fresh copy of the 0.2.0 data dir (the caller may
    prepare the copy first through the `prepare` argument)."""
    servers, dirs = [], []

    def start(prepare=None, rate="600"):
        d = tempfile.mkdtemp(prefix="suggestd-upgrade-")
        dirs.append(d)
        shutil.copy2(os.path.join(FIXTURE, "data", "suggestd.db"), d)
        shutil.copytree(os.path.join(FIXTURE, "data", "edge"), os.path.join(d, "edge"))
        if prepare:
            prepare(d)
        s = Server(d, extra=NO_LIMITS + ["--recompile-per-minute", rate])
        servers.append(s)
        return s.start()

    yield start
    for s in servers:
        s.stop()
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)


def list_record(s):
    with open(os.path.join(s.data_dir, "edge", "lists", EXPECTED["listId"] + ".json")) as f:
        return json.load(f)


def artifact_format(s, content_hash):
    """The format version in the artifact's header (docs/ARTIFACT.md: magic, then the
    header's length and the version, little-endian u32 each)."""
    hexd = content_hash.split(":", 1)[1]
    with open(os.path.join(s.data_dir, "edge", "artifacts", hexd + ".sga"), "rb") as f:
        head = f.read(16)
    return struct.unpack_from("<I", head, 8)[0]


def check_answer(s, i):
    a = EXPECTED["answers"][i % len(EXPECTED["answers"])]
    params = {"key": EXPECTED["publishableKey"], "q": a["q"]}
    if a["locale"]:
        params["locale"] = a["locale"]
    r = s.runtime("GET", "/v1/query", params)
    assert r.status == 200, (a["q"], a["locale"], r)
    assert same_answer(r.json()) == same_answer(a["body"]), (a["q"], a["locale"])


def check_all(s):
    for i in range(len(EXPECTED["answers"])):
        check_answer(s, i)


def api(s, method, path):
    return s.control(method, "/api/v1" + path, key=EXPECTED["secretKey"])


def test_fixture_is_the_previous_format(upgraded):
    """The fixture is what it says: a format-5 artifact that 0.2.0 served."""
    assert EXPECTED["artifactFormat"] == 5
    s = upgraded(rate="0")
    assert artifact_format(s, EXPECTED["contentHash"]) == 5
    # With the recompile off, the previous format keeps serving as it is.
    check_all(s)
    time.sleep(6)
    assert list_record(s)["activeContentHash"] == EXPECTED["contentHash"]
    check_all(s)


def test_serves_through_the_recompile_and_ends_on_the_current_format(upgraded):
    s = upgraded()
    lid = EXPECTED["listId"]
    # From the first request on, every answer is 0.2.0's, through the whole transition.
    i = 0
    deadline = time.time() + 60
    while list_record(s).get("activeContentHash") == EXPECTED["contentHash"]:
        assert time.time() < deadline, "no recompile within 60 s: " + s.read_log()[-2000:]
        check_answer(s, i)
        i += 1
    rec = list_record(s)
    new_hash = rec["activeContentHash"]
    assert rec["activeVersionNumber"] > EXPECTED["versionNumber"]
    assert artifact_format(s, new_hash) == CURRENT_FORMAT
    # `suggestd inspect` tells the two apart (it printed a constant 1 before).
    for h, fmt in ((EXPECTED["contentHash"], 5), (new_hash, CURRENT_FORMAT)):
        path = os.path.join(s.data_dir, "edge", "artifacts", h.split(":", 1)[1] + ".sga")
        r = subprocess.run([BINARY, "inspect", path], capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert out["formatVersion"] == fmt and out["contentHash"] == h
    # The runtime may still be switching: keep polling until it answers from the new hash
    # (the requestId is derived from it), every answer 0.2.0's meanwhile.
    old_rid = {json.dumps([a["q"], a["locale"]]): a["body"]["requestId"]
               for a in EXPECTED["answers"]}

    def switched():
        check_answer(s, 0)
        a = EXPECTED["answers"][0]
        params = {"key": EXPECTED["publishableKey"], "q": a["q"]}
        r = s.runtime("GET", "/v1/query", params)
        return r.json()["requestId"] != old_rid[json.dumps([a["q"], a["locale"]])]

    assert wait_until(switched, timeout=10, interval=0.02)
    check_all(s)
    # The version resource: a new active version from the same snapshot (same item count),
    # the old one superseded; its artifact is the current format.
    v = api(s, "GET", f"/lists/{lid}/versions/{rec['activeVersionNumber']}").json()
    assert v["state"] == "active" and v["contentHash"] == new_hash
    old = api(s, "GET", f"/lists/{lid}/versions/{EXPECTED['versionNumber']}").json()
    assert old["state"] == "superseded" and v["itemCount"] == old["itemCount"] == 36
    # Nothing more to do: no further version appears.
    time.sleep(6)
    assert list_record(s)["activeVersionNumber"] == rec["activeVersionNumber"]
    assert '"activeVersionsBehind":0' in s.read_log()


def test_recompile_uses_the_active_snapshot_not_the_draft(upgraded):
    """Items changed after the last publish (and not published) stay out of the
    recompiled version: it serves exactly what 0.2.0 served."""
    s = upgraded(rate="0")
    lid = EXPECTED["listId"]
    r = s.control("POST", f"/api/v1/lists/{lid}/items", body={"value": "Parma", "rank": 1000},
                  key=EXPECTED["secretKey"])
    assert r.status == 201, r
    s.stop()
    s.extra = NO_LIMITS + ["--recompile-per-minute", "600"]
    s.start()
    assert wait_until(lambda: list_record(s)["activeContentHash"] != EXPECTED["contentHash"],
                      timeout=60, interval=0.2), s.read_log()[-2000:]
    time.sleep(1.5)
    check_all(s)  # "par" still answers Paris only: the draft's Parma is not in it


def test_waits_for_a_live_runtime_that_reads_only_the_previous_format(upgraded):
    """A runtime of the previous release (announcing format 5 only) holds the recompile
    back until its record expires; the list serves throughout."""
    ttl = 8

    def old_runtime(d):
        os.makedirs(os.path.join(d, "edge", "runtimes"), exist_ok=True)
        rec = {"runtimeId": "rt_previous", "formats": [5], "version": "0.2.0",
               "heartbeatMs": int(time.time() * 1000), "ttlSeconds": ttl}
        with open(os.path.join(d, "edge", "runtimes", "rt_previous.json"), "w") as f:
            json.dump(rec, f)

    t0 = time.time()
    s = upgraded(prepare=old_runtime)
    i = 0
    while time.time() < t0 + ttl - 1.5:
        assert list_record(s)["activeContentHash"] == EXPECTED["contentHash"]
        check_answer(s, i)
        i += 1
    assert "a live runtime does not read the current format" in s.read_log()
    assert '"runtimeId":"rt_previous"' in s.read_log()
    # Expired: the next scan (every 5 s) goes ahead.
    assert wait_until(lambda: list_record(s)["activeContentHash"] != EXPECTED["contentHash"],
                      timeout=30, interval=0.2), s.read_log()[-2000:]
    assert artifact_format(s, list_record(s)["activeContentHash"]) == CURRENT_FORMAT
    time.sleep(1.5)
    check_all(s)


def test_runtime_announces_the_formats_it_reads(upgraded):
    s = upgraded(rate="0")
    d = os.path.join(s.data_dir, "edge", "runtimes")
    # Records are written to a temporary name and renamed (docs/EDGE.md): a listing can
    # catch the temporary file of a heartbeat's rewrite beside the record.
    def records():
        return [f for f in os.listdir(d) if f.endswith(".json")] if os.path.isdir(d) else []

    assert wait_until(records, timeout=5)
    (name,) = records()
    with open(os.path.join(d, name)) as f:
        rec = json.load(f)
    assert name == rec["runtimeId"] + ".json" and rec["runtimeId"].startswith("rt_")
    assert rec["formats"] == [5, CURRENT_FORMAT]
    assert rec["ttlSeconds"] == 30
    assert abs(rec["heartbeatMs"] - time.time() * 1000) < 15000
    # A clean stop removes it at once.
    s.stop()
    assert os.listdir(d) == []


def test_nothing_behind_logs_no_wait():
    """With every active artifact already in the current format there is nothing to hold
    back: a live runtime that reads only the previous format is not reported (no log line,
    `suggestd_recompile_held` stays 0)."""
    d = tempfile.mkdtemp(prefix="suggestd-upgrade-")
    os.makedirs(os.path.join(d, "edge", "runtimes"))
    rec = {"runtimeId": "rt_previous", "formats": [5], "version": "0.2.0",
           "heartbeatMs": int(time.time() * 1000), "ttlSeconds": 120}
    with open(os.path.join(d, "edge", "runtimes", "rt_previous.json"), "w") as f:
        json.dump(rec, f)
    s = Server(d, extra=NO_LIMITS + ["--recompile-per-minute", "600"]).start()
    try:
        time.sleep(6)  # the first scan runs at start, the next 5 s later
        log = s.read_log()
        assert "artifact recompile waits" not in log, log[-2000:]
        assert '"activeVersionsBehind"' not in log or '"activeVersionsBehind":0' in log
    finally:
        s.stop()
        shutil.rmtree(d, ignore_errors=True)
