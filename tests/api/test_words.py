"""Words in any order (tier 3) and words run together (tier 4), docs/DESIGN.md §3.3,
through the real pipeline: publish, edge store, runtime /v1/query with highlights.
"""
import pytest

from conftest import wait_until

ITEMS = [
    {"value": "New York", "rank": 100},
    {"value": "New York City", "rank": 50},
    {"value": "Red Bull", "aliases": ["Energy Drink"], "rank": 10},
    {"value": "Redbull", "rank": 5},
    {"value": "Yorks New", "rank": 1000},  # one edit from "york new" (tier 0)
]


def q(s, pk, text, **extra):
    r = s.runtime("GET", "/v1/query", params={"key": pk, "q": text, **extra})
    assert r.status == 200, r
    return [(i["displayValue"], i["highlight"]) for i in r.json()["items"]]


@pytest.fixture
def world(make_server):
    s = make_server()
    t = s.tenant()
    lst, pk = t.public_list_served("Words", ITEMS)
    return s, t, lst, pk


def test_words_in_any_order_highlight_each_matched_word(world):
    s, t, lst, pk = world
    assert q(s, pk, "york new", limit="2") == [("New York", [[0, 3], [4, 8]]),
                                               ("New York City", [[0, 3], [4, 8]])]
    # The last word may be cut short; the highlight covers its matched prefix.
    assert q(s, pk, "city new yo") == [("New York City", [[0, 3], [4, 6], [9, 13]])]
    # Every word but the last must be whole.
    assert q(s, pk, "yor new") == []


def test_words_run_together_from_the_start(world):
    s, t, lst, pk = world
    assert q(s, pk, "redbull") == [("Redbull", [[0, 7]]), ("Red Bull", [[0, 8]])]
    assert q(s, pk, "red bu") == [("Red Bull", [[0, 6]]), ("Redbull", [[0, 5]])]
    assert q(s, pk, "newyork") == [("New York", [[0, 8]]), ("New York City", [[0, 8]])]
    # Through an alias: matched, nothing of the displayValue highlighted.
    assert q(s, pk, "energydri") == [("Red Bull", [])]


def test_zero_edit_words_outrank_typos_and_take_none(world):
    s, t, lst, pk = world
    # "Yorks New" is one edit from "york new" with the highest rank, and still comes after
    # both zero-edit tier-3 matches.
    assert [d for d, _ in q(s, pk, "york new")] == ["New York", "New York City", "Yorks New"]
    # Without typos only the words in any order.
    t.api("PATCH", f"/lists/{lst['id']}", {"queryPolicy": {"typoTolerance": {"enabled": False}}})
    assert wait_until(lambda: [d for d, _ in q(s, pk, "york new")] == ["New York", "New York City"],
                      timeout=3)
    t.api("PATCH", f"/lists/{lst['id']}", {"queryPolicy": {"typoTolerance": {"enabled": True}}})
    # A typo is never applied to words in any order ("yrok" is not "york"): only the
    # two-edit prefix match of "Yorks New".
    assert wait_until(lambda: [d for d, _ in q(s, pk, "yrok new")] == ["Yorks New"], timeout=3)
