"""The dashboard's file import follows `suggestd import`'s rules (issue 27): the file goes
as it is (CSV, TSV, a JSON array or NDJSON, named by Content-Type or ?format=) and the
server converts it with the CLI's converter; errors name the lines of the user's file and
ignored CSV columns are noted."""
from control_helpers import assert_error
from dashboard_helpers import workspace_with_members


def new_list(server):
    t, ms = workspace_with_members(server, roles=("data_steward",))
    ds = ms["data_steward"]
    lst = t.create_list("Cities")
    return t, ds, lst


def post(ds, lst, body, ctype=None, query="mode=append"):
    hdrs = {"Content-Type": ctype} if ctype else {}
    return ds.call("POST", f"/lists/{lst['id']}/items/import?{query}", raw=body, headers=hdrs)


def items(t, lst):
    return {i["value"]: i for i in t.api("GET", f"/lists/{lst['id']}/items?limit=100").json()["data"]}


def test_csv_quoted_line_break_crlf_and_extra_column_note(server):
    t, ds, lst = new_list(server)
    csv = (b'value,displayValue,rank,population,aliases\r\n'
           b'Paris,"Paris,\r\nFrance",5,2100000,Lutece|City of Light\r\n'
           b'"Say ""Hi""",,2,1,\r\n'
           b'Lyon,Lyon,3,500000,')  # the last record has no line break
    r = post(ds, lst, csv, "text/csv")
    assert r.status == 200, r
    b = r.json()
    assert b["created"] == 3, b
    assert b["ignoredColumns"] == ["population"], b
    assert "population" in b["note"], b
    got = items(t, lst)
    assert got["Paris"]["displayValue"] == "Paris,\r\nFrance", got
    assert got["Paris"]["rank"] == 5 and got["Paris"]["aliases"] == ["Lutece", "City of Light"]
    assert got['Say "Hi"']["rank"] == 2, got
    # No unknown column: no note.
    r = post(ds, lst, b"value\nNice\n", "text/csv; charset=utf-8")
    assert r.status == 200, r
    assert "note" not in r.json() and "ignoredColumns" not in r.json(), r.json()


def test_csv_bad_rank_is_reported_on_the_files_line(server):
    t, ds, lst = new_list(server)
    # A quoted line break in the first record: NDJSON line 1 (0-based) is file line 4.
    csv = b'value,displayValue,rank\nA,"two\nlines",1\nB,b,high\nC,c,3\n'
    r = post(ds, lst, csv, "text/csv")
    b = assert_error(r, 400, "invalid_request")
    f = b["details"]["fields"]
    assert f[0]["path"] == "lines[1].rank" and f[0]["line"] == 4, f
    assert b["details"]["problems"][0].startswith("line 4: rank: "), b
    assert b["message"].startswith("line 4: rank: ") and "nothing was imported" in b["message"], b
    assert items(t, lst) == {}
    # The case: a bad rank on line 3 of a plain file is line 3.
    r = post(ds, lst, b"value,rank\nA,1\nB,x\n", "text/csv")
    b = assert_error(r, 400, "invalid_request")
    assert b["details"]["fields"][0]["line"] == 3, b
    assert b["message"].startswith("line 3: rank"), b


def test_duplicates_name_both_lines_of_the_file(server):
    t, ds, lst = new_list(server)
    r = post(ds, lst, b"value\n\nA\nB\n\nA\n", "text/csv")
    b = assert_error(r, 400, "invalid_request")
    d = b["details"]["duplicates"][0]
    assert (d["fileLine"], d["firstFileLine"]) == (6, 3), b
    assert b["message"].startswith('line 6: the value "A" is already on line 3'), b


def test_converter_errors_name_the_line(server):
    t, ds, lst = new_list(server)
    for body, want in [
        (b'value\n"open\nstill open', "never closed"),
        (b"value,rank\nx,1\ny,1,2\n", "line 3: 3 fields, but the header has 2"),
        (b"label,rank\nx,1\n", "rename the column"),
    ]:
        r = post(ds, lst, body, "text/csv")
        b = assert_error(r, 400, "invalid_request")
        assert want in b["message"], b
        assert b["details"]["fields"][0]["path"] == "file", b
        assert "--value-column" not in b["message"], b
    assert items(t, lst) == {}


def test_json_array_and_tsv_and_ndjson(server):
    t, ds, lst = new_list(server)
    arr = b'[\n  {"value": "Rome", "rank": 2},\n  {"value": "Oslo",\n   "aliases": ["Christiania"]}\n]\n'
    r = post(ds, lst, arr, "application/json")
    assert r.status == 200 and r.json()["created"] == 2, r
    assert items(t, lst)["Oslo"]["aliases"] == ["Christiania"]
    # A bad element names the line where it starts.
    r = post(ds, lst, b'[\n{"value":"a"},\n{"value":"b",\n "rank":"x"}]', "application/json")
    b = assert_error(r, 400, "invalid_request")
    assert b["details"]["fields"][0]["line"] == 3, b
    # TSV by its media type, and by ?format= whatever the Content-Type.
    r = post(ds, lst, b"value\trank\nBern\t4\n", "text/tab-separated-values")
    assert r.status == 200 and r.json()["created"] == 1, r
    r = post(ds, lst, b"value\trank\nWien\t6\n", "application/octet-stream",
             query="mode=append&format=tsv")
    assert r.status == 200 and r.json()["created"] == 1, r
    assert items(t, lst)["Wien"]["rank"] == 6
    # NDJSON as before, its lines counted from 1.
    r = post(ds, lst, b'{"value":"Kyiv"}\n{"value":"Riga","rank":"no"}\n', "application/x-ndjson")
    b = assert_error(r, 400, "invalid_request")
    assert b["details"]["fields"][0]["line"] == 2, b


def test_unknown_types_and_formats_are_refused(server):
    t, ds, lst = new_list(server)
    assert_error(post(ds, lst, b"value\nx\n", "text/plain"), 415, "invalid_request", reason="unsupported_media_type")
    assert_error(post(ds, lst, b"value\nx\n", None), 415, "invalid_request", reason="unsupported_media_type")
    r = post(ds, lst, b"value\nx\n", "text/csv", query="format=xlsx")
    assert_error(r, 400, "invalid_request", field="format")
    # /api/v1 keeps its contract: NDJSON only.
    r = t.api("POST", f"/lists/{lst['id']}/items/import", raw=b"value\nx\n",
              headers={"Content-Type": "text/csv"})
    assert r.status == 415, r


def test_idempotent_replay_answers_the_same(server):
    t, ds, lst = new_list(server)
    hdrs = {"Content-Type": "text/csv", "Idempotency-Key": "imp-1"}
    csv = b"value,extra\nA,1\nB,2\n"
    first = ds.call("POST", f"/lists/{lst['id']}/items/import", raw=csv, headers=hdrs)
    assert first.status == 200 and first.json()["created"] == 2, first
    again = ds.call("POST", f"/lists/{lst['id']}/items/import", raw=csv, headers=hdrs)
    assert again.status == 200, again
    assert again.json() == first.json() and again.json()["ignoredColumns"] == ["extra"]
    # The same key with another file is refused, not applied.
    r = ds.call("POST", f"/lists/{lst['id']}/items/import", raw=b"value\nC\n", headers=hdrs)
    assert_error(r, 422, "invalid_request", reason="idempotency_key_reused")
    assert "C" not in items(t, lst)
