"""Control plane: per-key and per-IP rate limits (docs/DESIGN.md §4.3): 429 rate_limited, retry-after 60."""
import time

import pytest

from control_helpers import assert_error


def assert_limited(r):
    assert_error(r, 429, "rate_limited")
    assert r.header("retry-after") == "60", r.headers


def test_per_key_limit(make_server):
    cp = make_server(["--control-rate-key", "5", "--control-rate-ip", "1000"], mode="control",
                     limits=False)
    t = cp.tenant()
    for i in range(5):
        r = t.api("GET", "/lists")
        assert r.status == 200, (i, r)
    assert_limited(t.api("GET", "/lists"))
    assert_limited(t.api("POST", "/lists", {"name": "x"}))  # shared by every route
    # Another key (same workspace, another application) has its own bucket.
    app2 = cp.admin("application", "create", "--workspace", t.workspace_id, "--name", "b")
    sk2 = cp.admin("secret-key", "create", "--application", app2["id"])
    assert cp.control("GET", "/api/v1/lists", key=sk2["secretKey"]).status == 200
    # A rejected request created nothing.
    assert cp.control("GET", "/api/v1/lists", key=sk2["secretKey"]).json()["data"] == []
    # Health checks are not rate limited.
    assert cp.control("GET", "/healthz").status == 200


def test_per_key_limit_does_not_count_bad_keys(make_server):
    """Requests with a wrong key must not drain the real key's bucket."""
    cp = make_server(["--control-rate-key", "3", "--control-rate-ip", "1000"], mode="control",
                     limits=False)
    t = cp.tenant()
    for _ in range(5):
        r = cp.control("GET", "/api/v1/lists", key=t.key_id + "_wrongsecretwrongsecret")
        assert r.status == 401
    for _ in range(3):
        assert t.api("GET", "/lists").status == 200


def test_per_ip_limit(make_server):
    cp = make_server(["--control-rate-ip", "5", "--control-rate-key", "1000"], mode="control",
                     limits=False)
    tenants = [cp.tenant() for _ in range(3)]
    statuses = []
    for i in range(5):
        statuses.append(tenants[i % 3].api("GET", "/lists").status)
    assert statuses == [200] * 5
    # Any key from the same IP is now refused, and so are unauthenticated requests.
    for t in tenants:
        assert_limited(t.api("GET", "/lists"))
    assert_limited(cp.control("GET", "/api/v1/lists"))


def test_per_ip_limit_counts_failed_auth(make_server):
    """Brute-forcing keys from one IP is throttled before authentication."""
    cp = make_server(["--control-rate-ip", "5", "--control-rate-key", "1000"], mode="control",
                     limits=False)
    t = cp.tenant()
    for _ in range(5):
        assert cp.control("GET", "/api/v1/lists", key="sk_guess_guessguessguess").status == 401
    assert_limited(t.api("GET", "/lists"))


def test_defaults_are_60_per_key(make_server):
    cp = make_server(mode="control", limits=False)
    t = cp.tenant()
    t0, ok = time.monotonic(), 0
    while ok < 200:
        r = t.api("GET", "/lists")
        if r.status != 200:
            assert_limited(r)
            break
        ok += 1
    # A full minute's burst, plus at most one token per second refilled meanwhile.
    assert 60 <= ok <= 60 + int(time.monotonic() - t0) + 1, ok


def test_zero_disables(make_server):
    cp = make_server(["--control-rate-key", "0", "--control-rate-ip", "0"], mode="control",
                     limits=False)
    t = cp.tenant()
    for _ in range(150):
        assert t.api("GET", "/lists").status == 200


def test_env_mirrors_rate_flags(make_server):
    cp = make_server(mode="control", limits=False,
                     env={"SUGGESTD_CONTROL_RATE_KEY": "2", "SUGGESTD_CONTROL_RATE_IP": "1000"})
    t = cp.tenant()
    assert t.api("GET", "/lists").status == 200
    assert t.api("GET", "/lists").status == 200
    assert_limited(t.api("GET", "/lists"))


@pytest.mark.parametrize("flag,value", [("--control-rate-key", "-1"),
                                        ("--control-rate-ip", "abc"),
                                        ("--control-rate-key", "1e3")])
def test_bad_rate_flag_refuses_to_start(make_server, flag, value):
    with pytest.raises(RuntimeError):
        make_server([flag, value], mode="control", limits=False)
