"""Typo tolerance, limit and highlight (docs/DESIGN.md §3.1 and §3.2) through the real
pipeline: control plane PATCH and publish, edge store, runtime /v1/query and /v1/bootstrap.
"""
import pytest

from conftest import wait_until
from control_helpers import assert_error

TYPO_DEFAULT = {"enabled": True, "minCharsOneTypo": 4, "minCharsTwoTypos": 8}

ITEMS = [
    {"value": "Paris", "rank": 100},
    {"value": "New York", "rank": 90},
    {"value": "Tokyo", "rank": 80},
    {"value": "Pori", "rank": 1000},           # one substitution from "pari"
    {"value": "Lutetia", "displayValue": "Ville Lumière", "aliases": ["Lutece"], "rank": 5},
    {"value": "math", "displayValue": "\U0001D400lpha \u00c9clair", "rank": 3},
    {"value": "decomposed", "displayValue": "Cafe\u0301 Noir", "rank": 2},
    {"value": "emoji", "displayValue": "\U0001F600 Smile", "rank": 1},
]


def q(s, pk, text, **extra):
    return s.runtime("GET", "/v1/query", params={"key": pk, "q": text, **extra})


def shown(r):
    assert r.status == 200, r
    return [i["displayValue"] for i in r.json()["items"]]


@pytest.fixture
def world(make_server):
    s = make_server()
    t = s.tenant()
    lst, pk = t.public_list_served("Typo", ITEMS)
    return s, t, lst, pk


def patch_typo(t, lst, tt):
    return t.api("PATCH", f"/lists/{lst['id']}", {"queryPolicy": {"typoTolerance": tt}})


def test_readme_examples_with_the_default_policy(world):
    s, t, lst, pk = world
    r = q(s, pk, "parsi")
    assert shown(r) == ["Paris"]
    # "pari" is one deletion from "parsi" and the shortest prefix at that distance.
    assert r.json()["items"][0]["highlight"] == [[0, 4]]
    r = q(s, pk, "new yrok")  # 8 code points: two typos allowed; the swap costs one
    assert shown(r) == ["New York"] and r.json()["items"][0]["highlight"] == [[0, 8]]
    r = q(s, pk, "tokio")
    assert shown(r) == ["Tokyo"] and r.json()["items"][0]["highlight"] == [[0, 5]]
    # The first code point must match: no typo there.
    assert shown(q(s, pk, "oaris")) == []


def test_exact_matches_rank_before_typos_whatever_the_rank(world):
    s, t, lst, pk = world
    # "Pori" has the higher rank but is one edit away; "Paris" is exact.
    assert shown(q(s, pk, "pari")) == ["Paris", "Pori"]
    # Three code points: no budget, exact only.
    assert shown(q(s, pk, "pai")) == []


def test_highlight_offsets_are_utf16_through_the_normaliser(world):
    s, t, lst, pk = world
    # U+1D400 is two UTF-16 code units and normalises to "a".
    r = q(s, pk, "alp")
    assert shown(r) == ["\U0001D400lpha \u00c9clair"]
    assert r.json()["items"][0]["highlight"] == [[0, 4]]
    # Tier 2: the highlight starts at the matched word (after 2 + 4 + 1 code units).
    r = q(s, pk, "ecl")
    assert r.json()["items"][0]["highlight"] == [[7, 10]]
    # A decomposed accent belongs to its letter.
    r = q(s, pk, "cafe")
    assert shown(r) == ["Cafe\u0301 Noir"] and r.json()["items"][0]["highlight"] == [[0, 5]]
    # Leading non-letters are not part of the normalised text: the emoji is not covered.
    r = q(s, pk, "smi")
    assert r.json()["items"][0]["highlight"] == [[3, 6]]
    # Through an alias: nothing of the displayValue is highlighted.
    r = q(s, pk, "lute")
    assert shown(r) == ["Ville Lumière"] and r.json()["items"][0]["highlight"] == []


@pytest.mark.parametrize("bad", ["0", "11", "x", "1.5", "", "-1", "+1", " 1", "1e1"])
def test_limit_outside_1_to_10_is_invalid_request(world, bad):
    s, t, lst, pk = world
    r = q(s, pk, "p", limit=bad)
    assert r.status == 400, r
    assert r.json()["code"] == "invalid_request"


def test_limit_cuts_the_list_and_changes_the_request_id(world):
    s, t, lst, pk = world
    full = q(s, pk, "p")
    assert shown(full) == ["Pori", "Paris"]
    one = q(s, pk, "p", limit="1")
    assert shown(one) == ["Pori"]
    assert one.json()["requestId"] != full.json()["requestId"]
    assert one.header("etag") != full.header("etag")
    assert q(s, pk, "p", limit="10").json()["requestId"] == full.json()["requestId"]
    assert q(s, pk, "p", limit="1").body == one.body


@pytest.mark.parametrize("tt,field", [
    ({"enabled": "yes"}, "queryPolicy.typoTolerance.enabled"),
    ({"enabled": None}, "queryPolicy.typoTolerance.enabled"),
    ({"minCharsOneTypo": 0}, "queryPolicy.typoTolerance.minCharsOneTypo"),
    ({"minCharsOneTypo": 256}, "queryPolicy.typoTolerance.minCharsOneTypo"),
    ({"minCharsOneTypo": "4"}, "queryPolicy.typoTolerance.minCharsOneTypo"),
    ({"minCharsOneTypo": 2.5}, "queryPolicy.typoTolerance.minCharsOneTypo"),
    ({"minCharsTwoTypos": 256}, "queryPolicy.typoTolerance.minCharsTwoTypos"),
    ({"minCharsTwoTypos": True}, "queryPolicy.typoTolerance.minCharsTwoTypos"),
    ({"minCharsOneTypo": 9}, "queryPolicy.typoTolerance.minCharsOneTypo"),   # > current two
    ({"minCharsTwoTypos": 3}, "queryPolicy.typoTolerance.minCharsTwoTypos"),  # < current one
    ({"minCharsOneTypo": 6, "minCharsTwoTypos": 5}, "queryPolicy.typoTolerance.minCharsOneTypo"),
    ({"maxTypos": 1}, "queryPolicy.typoTolerance.maxTypos"),
    (True, "queryPolicy.typoTolerance"),
])
def test_patch_typo_tolerance_validation(make_server, tt, field):
    s = make_server()
    t = s.tenant()
    lst = t.create_list("V")
    assert lst["queryPolicy"]["typoTolerance"] == TYPO_DEFAULT
    r = patch_typo(t, lst, tt)
    assert_error(r, 400, "invalid_request", field=field)
    assert t.api("GET", f"/lists/{lst['id']}").json()["queryPolicy"] == lst["queryPolicy"]


def test_patch_typo_tolerance_partial_merge_and_bounds(make_server):
    s = make_server()
    t = s.tenant()
    lst = t.create_list("V")
    r = patch_typo(t, lst, {"minCharsOneTypo": 1, "minCharsTwoTypos": 255})
    assert r.status == 200, r
    assert r.json()["queryPolicy"]["typoTolerance"] == {
        "enabled": True, "minCharsOneTypo": 1, "minCharsTwoTypos": 255}
    r = patch_typo(t, lst, {"enabled": False})
    assert r.json()["queryPolicy"]["typoTolerance"] == {
        "enabled": False, "minCharsOneTypo": 1, "minCharsTwoTypos": 255}
    r = patch_typo(t, lst, {"minCharsOneTypo": 255})
    assert r.status == 200 and r.json()["queryPolicy"]["typoTolerance"]["minCharsOneTypo"] == 255
    assert r.json()["queryPolicy"]["minQueryChars"] == 1  # other members untouched


def test_policy_applies_without_republish_and_bootstrap_shows_it(world):
    s, t, lst, pk = world
    boot = s.runtime("GET", "/v1/bootstrap", params={"key": pk}).json()
    assert boot["queryPolicy"]["typoTolerance"] == TYPO_DEFAULT
    assert shown(q(s, pk, "parsi")) == ["Paris"]
    etag = q(s, pk, "parsi").header("etag")

    assert patch_typo(t, lst, {"enabled": False}).status == 200
    assert wait_until(lambda: shown(q(s, pk, "parsi")) == [], timeout=3)
    off = q(s, pk, "parsi")
    assert off.header("etag") != etag  # a cached typo answer is not revalidated as current
    boot = s.runtime("GET", "/v1/bootstrap", params={"key": pk}).json()
    assert boot["queryPolicy"]["typoTolerance"]["enabled"] is False

    # Enabled again, but one typo only from 6 code points: "parsi" (5) has no budget.
    assert patch_typo(t, lst, {"enabled": True, "minCharsOneTypo": 6}).status == 200
    assert wait_until(lambda: s.runtime("GET", "/v1/bootstrap", params={"key": pk}).json()
                      ["queryPolicy"]["typoTolerance"]["minCharsOneTypo"] == 6, timeout=3)
    assert shown(q(s, pk, "parsi")) == []
    assert shown(q(s, pk, "tokyoo")) == ["Tokyo"]  # exact prefix "tokyo" is within one
    # From 1 code point with one typo and two from 2: "tq" reaches "Tokyo" by a substitution.
    assert patch_typo(t, lst, {"minCharsOneTypo": 1, "minCharsTwoTypos": 2}).status == 200
    assert wait_until(lambda: shown(q(s, pk, "tq")) == ["Tokyo"], timeout=3)
