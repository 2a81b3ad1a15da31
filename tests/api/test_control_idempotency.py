"""Control plane: Idempotency-Key on POST /lists (docs/DESIGN.md §4.3).

The in-flight 409 needs a request still running when the retry arrives, which a fast
route cannot guarantee; tests/unit/store/test_idempotency.c covers it at the store.
"""
import threading

import pytest

from control_helpers import assert_error


def post(t, body, key, raw=None):
    return t.api("POST", "/lists", body, raw=raw, headers={"Idempotency-Key": key})


def count(t):
    return len(t.api("GET", "/lists?limit=100").json()["data"])


def test_replay_returns_the_original_answer(cp, t):
    r1 = post(t, {"name": "Once"}, "key-1")
    assert r1.status == 201, r1
    assert r1.header("idempotent-replayed") is None
    for _ in range(3):
        r2 = post(t, {"name": "Once"}, "key-1")
        assert r2.status == 201, r2
        assert r2.body == r1.body
        assert r2.header("etag") == r1.header("etag")
        assert r2.header("location") == r1.header("location")
        assert r2.header("idempotent-replayed") == "true"
        assert r2.header("x-request-id")
    assert count(t) == 1


def test_replay_is_not_fooled_by_a_later_change(cp, t):
    """The replay is the stored answer, even after the list itself changed."""
    r1 = post(t, {"name": "Orig"}, "key-2")
    lid = r1.json()["id"]
    assert t.api("PATCH", f"/lists/{lid}", {"name": "Changed"}).status == 200
    r2 = post(t, {"name": "Orig"}, "key-2")
    assert r2.status == 201 and r2.json()["name"] == "Orig"
    assert count(t) == 1


def test_same_key_different_body_is_422(cp, t):
    assert post(t, {"name": "A"}, "key-3").status == 201
    r = post(t, {"name": "B"}, "key-3")
    assert_error(r, 422, "invalid_request", reason="idempotency_key_reused")
    assert r.header("idempotent-replayed") is None
    # Whitespace differences are a different body too: the key names exact bytes.
    r = post(t, None, "key-3", raw=b'{"name":  "A"}')
    assert_error(r, 422, "invalid_request", reason="idempotency_key_reused")
    assert count(t) == 1


def test_keys_are_per_workspace(cp, t):
    other = cp.tenant()
    assert post(t, {"name": "A"}, "shared-key").status == 201
    r = post(other, {"name": "B"}, "shared-key")
    assert r.status == 201 and r.header("idempotent-replayed") is None
    assert count(other) == 1


def test_no_key_means_no_dedupe(cp, t):
    assert t.api("POST", "/lists", {"name": "A"}).status == 201
    assert t.api("POST", "/lists", {"name": "A"}).status == 201
    assert count(t) == 2


def test_validation_errors_are_remembered(cp, t):
    """Only 5xx and 429 answers are forgotten; a 400 replays like any other answer."""
    r1 = post(t, {"nope": 1}, "key-4")
    assert_error(r1, 400, "invalid_request")
    r2 = post(t, {"nope": 1}, "key-4")
    assert r2.status == 400 and r2.header("idempotent-replayed") == "true"
    assert r2.json()["details"] == r1.json()["details"]
    assert count(t) == 0


@pytest.mark.parametrize("key,ok", [
    ("a", True),
    ("x" * 255, True),
    ("~!#$%&'()*+,-./:;<=>?@[]^_`{|}", True),
    ("with space", True),
    ("x" * 256, False),
    ("x" * 5000, False),
    ("", False),
    ("tab\there", False),
    ("del\x7f", False),
    ("ctl\x01", False),
    ("caf\xe9", False),   # a Latin-1 byte, not printable ASCII
])
def test_key_format(cp, t, key, ok):
    r = post(t, {"name": "K"}, key)
    if ok:
        assert r.status == 201, r
    else:
        assert_error(r, 400, "invalid_request", field="Idempotency-Key")
        assert count(t) == 0


def test_key_ignored_on_get_and_patch(cp, t):
    lst = t.create_list()
    h = {"Idempotency-Key": "k"}
    r = t.api("PATCH", f"/lists/{lst['id']}", {"name": "one"}, headers=h)
    assert r.status == 200
    r = t.api("PATCH", f"/lists/{lst['id']}", {"name": "two"}, headers=h)
    assert r.status == 200 and r.json()["name"] == "two"
    assert t.api("GET", "/lists", headers=h).status == 200


def test_concurrent_retries_create_exactly_one(cp, t):
    results = []
    barrier = threading.Barrier(8)

    def go():
        barrier.wait()
        results.append(post(t, {"name": "Concurrent"}, "race-key"))
    ths = [threading.Thread(target=go) for _ in range(8)]
    [th.start() for th in ths]
    [th.join() for th in ths]
    for r in results:
        if r.status == 409:
            assert_error(r, 409, "invalid_request", reason="idempotency_key_in_flight")
            assert r.header("retry-after") == "1"
        else:
            assert r.status == 201, r
    originals = [r for r in results if r.status == 201 and r.header("idempotent-replayed") is None]
    assert len(originals) == 1, results
    assert count(t) == 1
    ids = {r.json()["id"] for r in results if r.status == 201}
    assert len(ids) == 1


def test_replay_survives_restart(cp, t):
    r1 = post(t, {"name": "Durable"}, "key-5")
    cp.restart()
    r2 = post(t, {"name": "Durable"}, "key-5")
    assert r2.status == 201 and r2.body == r1.body
    assert r2.header("idempotent-replayed") == "true"
    assert count(t) == 1


def test_expired_key_after_24h(make_server):
    """The same data dir served with the clock shifted a day forward forgets the key."""
    cp = make_server(mode="control")
    t = cp.tenant()
    assert post(t, {"name": "Old"}, "day-key").status == 201
    cp.stop()
    cp.env["SUGGESTD_CLOCK_OFFSET"] = str(24 * 3600 + 60)
    cp.start()
    r = post(t, {"name": "New body"}, "day-key")
    assert r.status == 201 and r.header("idempotent-replayed") is None, r
    assert count(t) == 2
