"""Control plane: GET /lists pagination (docs/DESIGN.md §4.3: envelope, ordering, page size)."""
import base64
import urllib.parse

import pytest

from control_helpers import assert_error


def page(t, **params):
    q = urllib.parse.urlencode(params)
    return t.api("GET", "/lists" + (f"?{q}" if q else ""))


def walk(t, limit):
    out, cursor, pages = [], None, 0
    while True:
        params = {"limit": limit}
        if cursor:
            params["cursor"] = cursor
        r = page(t, **params)
        assert r.status == 200, r
        b = r.json()
        assert set(b) == {"data", "nextCursor", "requestId"}, b
        assert b["requestId"] == r.header("x-request-id")
        assert len(b["data"]) <= limit
        out += b["data"]
        pages += 1
        cursor = b["nextCursor"]
        if cursor is None:
            return out, pages
        assert isinstance(cursor, str) and cursor
        assert len(b["data"]) == limit


def make_lists(t, n):
    """n lists with colliding displayOrders and names, so both sort keys matter."""
    made = []
    for i in range(n):
        lst = t.create_list(f"List {i % 7}")  # repeated names -> -2, -3 slugs
        order = [3, -1, 0, 3, 2][i % 5]
        if order:
            lst = t.api("PATCH", f"/lists/{lst['id']}", {"displayOrder": order}).json()
        made.append(lst)
    return made


def expected_order(lists):
    return [x["id"] for x in sorted(lists, key=lambda x: (x["displayOrder"], x["slug"], x["id"]))]


def test_empty_collection(cp, t):
    r = page(t)
    assert r.status == 200
    assert r.json()["data"] == [] and r.json()["nextCursor"] is None


@pytest.mark.parametrize("limit", [1, 2, 3, 7, 23, 24, 100])
def test_walk_all_pages_in_order(cp, t, limit):
    made = make_lists(t, 23)
    got, pages = walk(t, limit)
    ids = [x["id"] for x in got]
    assert len(ids) == len(set(ids)), "duplicates across pages"
    assert ids == expected_order(made), "gaps or wrong order"
    # No trailing empty page: the last page is the one that says nextCursor null.
    assert pages == -(-23 // limit)


def test_default_limit_is_50(cp, t):
    for i in range(51):
        assert t.api("POST", "/lists", {"name": f"n{i:02d}"}).status == 201
    b = page(t).json()
    assert len(b["data"]) == 50 and b["nextCursor"]
    b2 = page(t, cursor=b["nextCursor"]).json()
    assert len(b2["data"]) == 1 and b2["nextCursor"] is None
    assert b2["data"][0]["slug"] == "n50"
    b = page(t, limit=100).json()
    assert len(b["data"]) == 51 and b["nextCursor"] is None


def test_pages_skip_lists_of_other_workspaces(cp, t):
    other = cp.tenant()
    make_lists(other, 5)
    mine = make_lists(t, 5)
    got, _ = walk(t, 2)
    assert [x["id"] for x in got] == expected_order(mine)


def test_cursor_survives_inserts_without_gaps(cp, t):
    made = [t.create_list(f"b{i}") for i in range(4)]
    r = page(t, limit=2).json()
    seen = [x["id"] for x in r["data"]]
    # A list sorting before the cursor position appears on no later page; one after it does.
    t.create_list("a-first")
    late = t.create_list("z-last")
    rest, cursor = [], r["nextCursor"]
    while cursor:
        b = page(t, limit=2, cursor=cursor).json()
        rest += [x["id"] for x in b["data"]]
        cursor = b["nextCursor"]
    assert seen + rest == [m["id"] for m in made] + [late["id"]]


@pytest.mark.parametrize("limit", ["0", "101", "abc", "-1", "1.5", "", " 5", "5 ", "0x10",
                                   "99999999999999999999999", "1e2"])
def test_bad_limit(cp, t, limit):
    r = t.api("GET", "/lists?limit=" + urllib.parse.quote(limit, safe="%"))
    assert_error(r, 400, "invalid_request", field="limit")


def test_nul_limit_refused_by_the_decoder(cp, t):
    # %00 never reaches the limit check: the shared percent-decoder refuses it first.
    r = t.api("GET", "/lists?limit=%00")
    assert_error(r, 400, "invalid_request")
    assert "percent-encoded UTF-8" in r.json()["message"], r


def test_limit_bounds_accepted(cp, t):
    assert page(t, limit=1).status == 200
    assert page(t, limit=100).status == 200
    assert page(t, limit="007").status == 200


def forge(cursor):
    payload, _, mac = cursor.partition(".")
    raw = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    evil = raw.replace(b'"', b'"', 1)[:-1] + b',1]'
    return base64.urlsafe_b64encode(evil).rstrip(b"=").decode() + "." + mac


def test_bad_cursors(cp, t):
    make_lists(t, 3)
    good = page(t, limit=1).json()["nextCursor"]
    assert good
    payload, _, mac = good.partition(".")
    flipped = payload[:-1] + ("A" if payload[-1] != "A" else "B")
    bad = [
        "x", "", ".", "abc.def", good + "x", good[:-1], flipped + "." + mac,
        forge(good), good.replace(".", ""), "A" * 2000, good + "." + mac,
        base64.urlsafe_b64encode(b'["lists:x",0,"a","b"]').decode().rstrip("=") + "." + mac,
    ]
    for c in bad:
        r = t.api("GET", "/lists?limit=1&cursor=" + urllib.parse.quote(c, safe=""))
        assert_error(r, 400, "invalid_request", field="cursor")
    # The good one still works.
    assert page(t, limit=1, cursor=good).status == 200


def test_cursor_from_another_workspace(cp, t):
    other = cp.tenant()
    make_lists(other, 3)
    make_lists(t, 3)
    theirs = page(other, limit=1).json()["nextCursor"]
    r = page(t, limit=1, cursor=theirs)
    assert_error(r, 400, "invalid_request", field="cursor")


def test_cursor_survives_restart(cp, t):
    """Cursors are signed with a secret kept in the store, not one made per process."""
    made = make_lists(t, 4)
    first = page(t, limit=2).json()
    cp.restart()
    second = page(t, limit=2, cursor=first["nextCursor"])
    assert second.status == 200, second
    ids = [x["id"] for x in first["data"] + second.json()["data"]]
    assert ids == expected_order(made)
